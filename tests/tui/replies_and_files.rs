//! Replies (scrolling, stopping, regenerating, editing and resending), conversations, history, the clipboard, export and attachments.

use super::*;

/// Scrolled up while a reply streams, the view stays where it is: the rows
/// arriving below do not move it (they did, a row for each row).
#[tokio::test(start_paused = true)]
async fn a_scrolled_up_view_stays_put_while_a_reply_streams() {
    let long: String = (0..40).map(|i| format!("earlier line {i}\n\n")).collect();
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![
        Step::Reply(vec![text(&long), done()]),
        Step::Hold(vec![text("the start\n\n")], gate.clone()),
    ]);
    ui.start().await;
    ui.say("first");
    ui.settle().await;
    ui.say("second");
    ui.settle().await;
    assert!(ui.app.model.is_busy());
    ui.screen(80, 24);
    ui.press(KeyCode::PageUp);
    let chat = |s: &str| s.lines().take(12).map(str::to_string).collect::<Vec<_>>();
    let before = chat(&ui.screen(80, 24));
    assert!(
        before.iter().any(|l| l.contains("earlier line")),
        "{before:#?}"
    );
    // More of the reply arrives, as the engine hands it on.
    for i in 0..5 {
        let (id, offset) = ui
            .app
            .model
            .entries
            .last()
            .map(|e| (e.msg.id, e.msg.content.len()))
            .unwrap();
        ui.app.on_engine(Event::Delta {
            conversation_id: ui.conv(),
            message_id: id,
            offset,
            text: format!("new paragraph {i}\n\n"),
        });
        while ui.app.reveal_step() {}
        assert_eq!(chat(&ui.screen(80, 24)), before, "the view moved");
    }
    let shown = &ui.app.model.entries.last().unwrap().msg.content;
    assert!(shown.ends_with("new paragraph 4\n\n"), "{shown}");
    // End jumps to the latest, which is below.
    ui.press(KeyCode::End);
    assert!(ui.screen(80, 24).contains("new paragraph 4"));
    gate.notify_one();
    ui.settle().await;
}

/// A reply another tock on the same database streams (a daemon, a second
/// TUI) is stopped from here: Esc asks that process, through the database,
/// and pauses the queue (it could only say "stop it there"); a second
/// Ctrl+C still quits. The process streaming it is tested stopping in
/// `tests/cli_edges.rs`.
#[tokio::test(start_paused = true)]
async fn esc_asks_another_tock_to_stop_the_reply_it_streams() {
    let mut ui = Ui::new(vec![]);
    let conv = ui.conv();
    let new = |role, content, status| tock::store::NewMessage {
        role: Some(role),
        content,
        status: Some(status),
        ..Default::default()
    };
    ui.store()
        .insert_message(
            conv,
            &new(Role::User, "question", MessageStatus::Complete),
            1,
        )
        .unwrap();
    ui.store()
        .insert_message(
            conv,
            &new(Role::Assistant, "half an ans", MessageStatus::Streaming),
            2,
        )
        .unwrap();
    // Something queued behind it, for the stop to hold.
    ui.store()
        .enqueue(&NewItem::new(conv, Kind::Queued, "and then?"), 3)
        .unwrap();
    ui.app.on_engine(Event::External);
    let s = ui.screen(100, 24);
    assert!(s.contains("answering… Enter queues · Esc stops"), "{s}");
    ui.press(KeyCode::Esc);
    ui.pump();
    let (msg, is_err) = ui.app.status_pair();
    assert!(
        !is_err
            && msg.contains("asked the tock streaming this reply to stop it — the queue is paused"),
        "{msg}"
    );
    assert!(
        ui.store()
            .conversation(conv)
            .unwrap()
            .unwrap()
            .queue_paused_at
            .is_some(),
        "the queue is paused at once"
    );
    // The request is noted for the process streaming it.
    assert!(ui.store().take_stop_request(conv).unwrap());
    // Asked once: Ctrl+C goes on to arm a quit, and a second one quits.
    ui.ctrl('c');
    assert!(!ui.app.quit);
    assert!(
        ui.app
            .status_pair()
            .0
            .ends_with("press Ctrl+C again to quit")
    );
    ui.ctrl('c');
    assert!(ui.app.quit, "quitting still works");
}

/// A Ctrl+R whose request fails: the earlier reply is back on screen at
/// once (the database had it back, the open view still said "replaced").
#[tokio::test(start_paused = true)]
async fn a_failed_ctrl_r_shows_the_earlier_reply_again() {
    // Unreachable, try after try, until the tries run out.
    let mut steps = vec![Step::Reply(vec![text("the first answer"), done()])];
    steps.extend((0..10).map(|_| Step::Fail(LlmError::transient("cannot connect"))));
    let mut ui = Ui::new(steps);
    ui.start().await;
    ui.say("question");
    ui.settle().await;
    ui.ctrl('r');
    ui.settle().await;
    assert!(
        ui.screen(80, 24).contains("(replaced)"),
        "while it is retried"
    );
    for _ in 0..40 {
        tokio::time::advance(std::time::Duration::from_secs(10)).await;
        ui.settle().await;
    }
    let s = ui.screen(80, 24);
    assert!(
        s.contains("the first answer") && !s.contains("(replaced)"),
        "{s}"
    );
    let (msg, is_err) = ui.app.status_pair();
    assert!(
        is_err && msg.ends_with("the earlier reply is kept — Ctrl+R tries again"),
        "{msg}"
    );
}

#[tokio::test(start_paused = true)]
async fn esc_stops_a_streaming_reply() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![Step::Hold(vec![text("a partial ans")], gate)]);
    ui.start().await;
    ui.say("q");
    ui.settle().await;
    assert!(ui.app.model.is_busy());
    ui.press(KeyCode::Esc);
    ui.settle().await;
    assert!(!ui.app.model.is_busy());
    let m = ui.messages().pop().unwrap();
    assert_eq!(
        (m.status, m.error.as_deref(), m.content.as_str()),
        (
            MessageStatus::Interrupted,
            Some("stopped by you"),
            "a partial ans"
        )
    );
    let s = ui.screen(80, 24);
    assert!(
        s.contains("stopped by you") && s.contains("a partial ans"),
        "{s}"
    );
}

#[tokio::test(start_paused = true)]
async fn ctrl_r_regenerates_the_last_reply() {
    let mut ui = Ui::new(vec![
        Step::Reply(vec![text("first answer"), done()]),
        Step::Reply(vec![text("second answer"), done()]),
    ]);
    ui.start().await;
    ui.say("q");
    ui.settle().await;
    ui.ctrl('r');
    ui.settle().await;
    let msgs = ui.messages();
    assert_eq!(
        msgs.iter()
            .map(|m| (m.role, m.content.as_str(), m.status))
            .collect::<Vec<_>>(),
        vec![
            (Role::User, "q", MessageStatus::Complete),
            (Role::Assistant, "first answer", MessageStatus::Superseded),
            (Role::Assistant, "second answer", MessageStatus::Complete),
        ]
    );
    assert_eq!(ui.h.provider.count(), 2);
    // One version is drawn, marked as one of two; the other is not stacked.
    let s = ui.screen(80, 24);
    assert!(s.contains("‹2/2›") && s.contains("second answer"), "{s}");
    assert!(
        !s.contains("first answer") && !s.contains("(replaced)"),
        "{s}"
    );
}

#[tokio::test(start_paused = true)]
async fn up_on_an_empty_composer_edits_and_resends_the_last_message() {
    let mut ui = Ui::new(vec![
        Step::Reply(vec![text("about cats"), done()]),
        Step::Reply(vec![text("about dogs"), done()]),
    ]);
    ui.start().await;
    ui.say("tell me about cats");
    ui.settle().await;
    // Ctrl+E is end of line, as in readline: the draft is untouched.
    ui.typ("my draft");
    ui.ctrl('e');
    assert_eq!(ui.app.composer_text(), "my draft");
    // ↑ edits only on an empty composer.
    ui.press(KeyCode::Up);
    assert_eq!(ui.app.composer_text(), "my draft");
    ui.erase(8);
    ui.press(KeyCode::Up);
    assert_eq!(ui.app.composer_text(), "tell me about cats");
    let s = ui.screen(100, 24);
    assert!(
        s.contains("✎ editing your last message"),
        "the mode has a banner:\n{s}"
    );
    // Esc leaves the edit and nothing was marked replaced.
    ui.press(KeyCode::Esc);
    assert_eq!(ui.app.composer_text(), "");
    assert!(!ui.screen(100, 24).contains("✎ editing"));
    assert!(
        ui.messages()
            .iter()
            .all(|m| m.status != MessageStatus::Superseded)
    );
    // A draft typed before the edit comes back after it.
    ui.typ("keep me");
    ui.ctrl('u');
    assert_eq!(
        ui.app.composer_text(),
        "",
        "Ctrl+U kills to the start of the line"
    );
    ui.typ("keep me");
    ui.app.composer.clear(0);
    ui.press(KeyCode::Up);
    ui.app.set_composer("tell me about dogs");
    ui.enter();
    ui.settle().await;
    let last = ui.h.provider.requests().pop().unwrap();
    let users: Vec<String> = last
        .messages
        .iter()
        .filter_map(|m| match m {
            tock::llm::ChatMessage::User { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        users,
        vec!["tell me about dogs"],
        "the old exchange is not sent"
    );
    assert_eq!(ui.messages().pop().unwrap().content, "about dogs");
    let replaced: Vec<String> = ui
        .messages()
        .into_iter()
        .filter(|m| m.status == MessageStatus::Superseded)
        .map(|m| m.content)
        .collect();
    assert_eq!(
        replaced,
        vec!["tell me about cats", "about cats"],
        "marked only once sent"
    );
    assert!(
        !ui.screen(100, 24).contains("✎ editing"),
        "the banner is gone after the send"
    );
}

#[tokio::test(start_paused = true)]
async fn alt_n_new_conversation_and_rename() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    let first = ui.conv();
    ui.say("hello");
    ui.settle().await;
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    ui.pump();
    let second = ui.conv();
    assert_ne!(first, second);
    assert_eq!(ui.store().conversations().unwrap().len(), 2);
    assert!(ui.app.model.entries.is_empty());
    assert!(ui.screen(80, 24).contains("New conversation."));
    let title = |ui: &Ui| ui.store().conversation(second).unwrap().unwrap().title;
    ui.say("/rename Shopping list");
    assert_eq!(title(&ui).as_deref(), Some("Shopping list"));
    assert_eq!(ui.app.composer_text(), "");
    assert!(ui.screen(80, 24).contains("▸ Shopping list"));
    // With no title: the rename prompt, holding the title (it printed a
    // usage line); Enter saves what it becomes.
    ui.say("/rename");
    assert_eq!(ui.app.top(), Some(ViewKind::Prompt));
    assert!(ui.screen(80, 24).contains("Shopping list"));
    ui.typ(" for Sat");
    ui.enter();
    ui.pump();
    assert_eq!(title(&ui).as_deref(), Some("Shopping list for Sat"));
    assert_eq!(ui.app.composer_text(), "");
    assert_eq!(
        ui.app.output.title.as_deref(),
        Some("tock — Shopping list for Sat")
    );
    // Sends go to the conversation they were typed in.
    ui.say("milk");
    ui.settle().await;
    assert_eq!(ui.user_texts(), vec!["milk"]);
    ui.key(KeyCode::Down, KeyModifiers::ALT);
    assert_eq!(ui.conv(), first);
    assert_eq!(ui.user_texts(), vec!["hello"]);
}

#[tokio::test(start_paused = true)]
async fn f4_and_slash_sidebar_hide_and_show_the_sidebar() {
    let mut ui = Ui::new(vec![]);
    ui.app.sidebar_pref = None;
    // Below 100 columns it hides itself; F4 shows it, F4 hides it again.
    assert!(ui.screen(120, 24).contains("Conversations"));
    assert!(!ui.screen(80, 24).contains("Conversations"));
    ui.press(KeyCode::F(4));
    assert!(ui.screen(80, 24).contains("Conversations"));
    ui.press(KeyCode::F(4));
    let s = ui.screen(80, 24);
    assert!(!s.contains("Conversations"), "{s}");
    assert!(s.lines().nth(21).unwrap().starts_with("│ Message"), "{s}");
    ui.say("/sidebar");
    assert!(ui.screen(80, 24).contains("Conversations"));
    // Ctrl+B is tmux's prefix: tock leaves it alone.
    ui.ctrl('b');
    assert!(ui.screen(80, 24).contains("Conversations"));
}

#[tokio::test(start_paused = true)]
async fn history_recalls_sent_messages() {
    let mut ui = Ui::new(vec![]);
    ui.say("first");
    ui.say("second");
    // Nothing was sent yet (nothing dispatches here), so ↑ recalls instead of editing.
    ui.press(KeyCode::Up);
    assert_eq!(ui.app.composer_text(), "second");
    ui.press(KeyCode::Up);
    assert_eq!(ui.app.composer_text(), "first");
    ui.press(KeyCode::Down);
    assert_eq!(ui.app.composer_text(), "second");
    ui.press(KeyCode::Down);
    assert_eq!(ui.app.composer_text(), "");
    ui.ctrl('p');
    assert_eq!(ui.app.composer_text(), "second", "Ctrl+P recalls too");
    ui.ctrl('n');
    assert_eq!(ui.app.composer_text(), "");
    // A draft being typed is not thrown away by a look at earlier messages:
    // Ctrl+N past the newest gives it back.
    ui.typ("precious unsent draft");
    ui.ctrl('p');
    assert_eq!(ui.app.composer_text(), "second");
    ui.ctrl('p');
    assert_eq!(ui.app.composer_text(), "first");
    ui.ctrl('n');
    assert_eq!(ui.app.composer_text(), "second");
    ui.ctrl('n');
    assert_eq!(ui.app.composer_text(), "precious unsent draft");
    ui.ctrl('n');
    assert_eq!(ui.app.composer_text(), "precious unsent draft");
    // However the recall ends (here: the recalled message typed on), Ctrl+P
    // finds the draft.
    ui.ctrl('p');
    assert_eq!(ui.app.composer_text(), "second");
    ui.typ(" again");
    ui.ctrl('p');
    assert_eq!(ui.app.composer_text(), "precious unsent draft");
    ui.ctrl('u');
    ui.ctrl('u');
    assert_eq!(ui.app.composer_text(), "");
    ui.ctrl('p');
    assert_eq!(ui.app.composer_text(), "second again");
    ui.ctrl('n');
    assert_eq!(ui.app.composer_text(), "");
    // With text in the composer, Up moves the cursor instead.
    ui.typ("a");
    ui.key(KeyCode::Enter, KeyModifiers::SHIFT);
    ui.typ("b");
    ui.press(KeyCode::Up);
    assert_eq!(ui.app.composer_text(), "a\nb");
}

/// ↑ and ↓ move between the rows of a line wrapped over several, as on
/// screen; only from the first row does ↑ recall an earlier message.
#[tokio::test(start_paused = true)]
async fn up_and_down_move_between_the_rows_of_a_wrapped_line() {
    let mut ui = Ui::new(vec![]);
    ui.say("sent before");
    let long = "alpha beta gamma delta ".repeat(12);
    ui.typ(long.trim_end());
    let before = ui.screen(120, 40);
    let rows = before.lines().filter(|l| l.contains("alpha beta")).count();
    assert!(rows >= 3, "{before}");
    ui.press(KeyCode::Up);
    ui.typ("Q");
    let text = ui.app.composer_text();
    let at = text.find('Q').unwrap_or_else(|| panic!("{text}"));
    assert!(at < text.len() - 60, "Q a row up, not at the end: {text}");
    assert!(text.ends_with("gamma delta"), "{text}");
    ui.screen(120, 40);
    ui.press(KeyCode::Down);
    ui.typ("Z");
    let text = ui.app.composer_text();
    let z = text.find('Z').unwrap_or_else(|| panic!("{text}"));
    assert!(z > at, "Z a row down from Q: {text}");
    // From the first row, ↑ goes on to the messages sent before.
    for _ in 0..rows {
        ui.press(KeyCode::Up);
    }
    ui.ctrl('p');
    assert_eq!(ui.app.composer_text(), "sent before");
}

#[tokio::test(start_paused = true)]
async fn huge_paste_with_control_characters_lands_clean() {
    // Into the text, where a long paste would be a chip.
    let cfg: Config = toml::from_str("[ui]\npaste_chip_lines = 0\n").unwrap();
    let mut ui = Ui::with_config(vec![], cfg);
    let mut paste = String::new();
    for i in 0..10_000 {
        paste.push_str(&format!(
            "line {i}\t\x1b[31mred\x1b[0m \x07\x00\u{9b}2J\u{7f}\r\n"
        ));
    }
    ui.app.on_terminal(TermEvent::Paste(paste));
    let text = ui.app.composer_text();
    assert!(
        text.chars()
            .all(|c| c == '\n' || c == '\t' || !c.is_control()),
        "control characters in the composer"
    );
    assert_eq!(text.matches('\n').count(), 10_000);
    assert!(text.starts_with("line 0\t"), "tabs stay tabs");
    assert!(text.contains("line 9999"));
    // A terminal's colours are taken out (made visible, they reached the
    // model as `␛[31m`), with the other control characters but spacing.
    assert!(text.starts_with("line 0\tred "), "{:?}", &text[..40]);
    assert!(
        !text.contains("[31m") && !text.contains('␛'),
        "{:?}",
        &text[..40]
    );
    let s = ui.screen(80, 24);
    assert!(s.contains("╭") && s.contains(" echo "), "{s}");
    assert!(
        !s.contains('\t'),
        "a tab is drawn as spaces, not written raw"
    );
    // It can be sent like any message, tabs and all.
    ui.enter();
    assert_eq!(ui.rows().len(), 1);
    assert!(ui.rows()[0].text.starts_with("line 0\t"));
}

#[tokio::test(start_paused = true)]
async fn ctrl_y_copies_the_last_reply_with_osc52() {
    let reply = "Hello **world**";
    let mut ui = Ui::new(vec![Step::Reply(vec![text(reply), done()])]);
    ui.start().await;
    ui.ctrl('y');
    assert!(ui.app.output.raw.is_empty(), "nothing to copy yet");
    assert!(ui.status_line().contains("no reply"));
    ui.say("hi");
    ui.settle().await;
    ui.ctrl('y');
    assert_eq!(
        ui.app.output.raw,
        vec![format!("\x1b]52;c;{}\x07", b64(reply))]
    );
    // Honest: it was sent to the terminal, which may or may not take it.
    assert!(
        ui.status_line()
            .contains("sent 15 characters to the terminal's clipboard"),
        "{}",
        ui.status_line()
    );
}

#[tokio::test(start_paused = true)]
async fn copy_n_copies_a_code_block() {
    let mut ui = Ui::new(markdown_steps());
    ui.start().await;
    ui.say("How do I build it?");
    ui.settle().await;
    ui.render(80, 24);
    ui.say("/copy 1");
    assert_eq!(
        clipboard_writes(&ui.app),
        vec!["fn main() {\n    println!(\"hello\");\n}\n"]
    );
    assert_eq!(ui.app.composer_text(), "");
    ui.say("/copy 2");
    assert_eq!(clipboard_writes(&ui.app).len(), 1);
    assert!(ui.status_line().contains("no code block 2"));
}

/// Each reply numbers its code blocks from 1, and `/copy N` takes block N
/// of the latest reply with code: the `[1]` on screen is what `/copy 1`
/// copies (it counted across the conversation and copied the first
/// reply's block).
#[tokio::test(start_paused = true)]
async fn copy_n_takes_the_block_numbered_so_in_the_latest_reply() {
    let block = |code: &str| format!("Here:\n\n```python\n{code}\n```\n");
    let mut ui = Ui::new(vec![
        Step::Reply(vec![text(&block("print(1)")), done()]),
        Step::Reply(vec![text(&block("print(2)")), done()]),
        Step::Reply(vec![text("no code in this one"), done()]),
    ]);
    ui.start().await;
    for q in ["one", "two", "three"] {
        ui.say(q);
        ui.settle().await;
    }
    let s = ui.screen(80, 40);
    assert!(s.contains("python [1]") && !s.contains("python [2]"), "{s}");
    ui.say("/copy 1");
    assert_eq!(clipboard_writes(&ui.app), vec!["print(2)\n"]);
    ui.say("/copy 2");
    assert!(
        ui.status_line()
            .contains("no code block 2 in the last reply with code (it has 1)"),
        "{}",
        ui.status_line()
    );
}

#[tokio::test(start_paused = true)]
async fn export_writes_markdown() {
    let mut ui = Ui::new(markdown_steps());
    ui.start().await;
    ui.say("How do I build it?");
    ui.settle().await;
    // Into a folder that does not exist yet: it is made, private.
    let path = ui.h.dir.path().join("exports/2026").join("out.md");
    ui.say(&format!("/export {}", path.display()));
    assert!(
        ui.status_line().starts_with("exported to"),
        "{}",
        ui.status_line()
    );
    // The folder did not exist: made, and said so (a typo in it shows).
    assert!(
        ui.status_line().contains("/exports/2026 was made for it)"),
        "{}",
        ui.status_line()
    );
    let md = std::fs::read_to_string(&path).unwrap();
    assert!(md.starts_with("# How do I build it?\n"), "{md}");
    assert!(
        md.contains("## You — 2026-11-30 00:53\n\nHow do I build it?"),
        "{md}"
    );
    assert!(md.contains(&MARKDOWN_REPLY.concat()), "{md}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path.parent().unwrap())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
    // Again: the file there is replaced, and the line says so.
    ui.say(&format!("/export {}", path.display()));
    assert!(
        ui.status_line()
            .ends_with("(it replaced the file that was there)"),
        "{}",
        ui.status_line()
    );
    // A symbolic link is refused; the file it points to is untouched.
    let precious = ui.h.dir.path().join("precious.txt");
    std::fs::write(&precious, "precious").unwrap();
    let link = ui.h.dir.path().join("link.md");
    std::os::unix::fs::symlink(&precious, &link).unwrap();
    ui.say(&format!("/export {}", link.display()));
    assert!(
        ui.status_line().contains("is a symbolic link"),
        "{}",
        ui.status_line()
    );
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "precious");
    ui.app.set_composer("");
    // An unwritable path (under a file) is an error, and the command stays
    // to be fixed.
    let file = ui.h.dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let bad = format!("/export {}/x.md", file.display());
    ui.say(&bad);
    assert!(ui.app.status_pair().1);
    assert_eq!(ui.app.composer_text(), bad);
}

/// A scheduled message sent with a file shows the 📎 in the strip (the
/// text alone hid it), and `tock list` names the file.
#[tokio::test(start_paused = true)]
async fn a_scheduled_item_with_a_file_shows_it() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    let path = ui.h.dir.path().join("paste.txt");
    std::fs::write(&path, "line 1\n").unwrap();
    ui.say(&format!("/attach {}", path.display()));
    ui.say("/later 1m read the attached log");
    let s = ui.screen(100, 30);
    assert!(s.contains("· 📎 read the attached log"), "{s}");
}

#[tokio::test(start_paused = true)]
async fn attach_a_text_file_then_send() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    let path = ui.h.dir.path().join("notes.txt");
    std::fs::write(&path, "remember the milk\n").unwrap();
    ui.say(&format!("/attach {}", path.display()));
    assert!(
        ui.status_line().contains("attached notes.txt"),
        "{}",
        ui.status_line()
    );
    assert_eq!(ui.app.composer_text(), "");
    assert!(
        ui.screen(80, 24).contains("📎 notes.txt · text · 18 B"),
        "a chip, with an honest size"
    );
    ui.say("see the attached notes");
    let row = ui.rows().remove(0);
    let parts = row.parts_json.expect("parts_json on the row");
    assert!(
        parts.contains("notes.txt") && parts.contains("remember the milk"),
        "{parts}"
    );
    assert!(
        ui.app.composer.attachments.is_empty(),
        "attachments go with one message"
    );
    ui.settle().await;
    let req = ui.h.provider.requests().pop().unwrap();
    assert!(
        format!("{:?}", req.messages).contains("remember the milk"),
        "the model gets the file"
    );
    // The sent message keeps its chip in the conversation.
    let s = ui.screen(80, 24);
    assert!(
        s.contains("see the attached notes") && s.contains("📎 notes.txt · text · 18 B"),
        "{s}"
    );
    // Exported: the export carries the file as the model read it, in a
    // fence its own backticks cannot close, and an image inline.
    std::fs::write(&path, "remember the milk\n```\nnot the end\n").unwrap();
    ui.say(&format!("/attach {}", path.display()));
    let png = ui.h.dir.path().join("dot.png");
    std::fs::write(&png, b"\x89PNG\r\n\x1a\n0000").unwrap();
    ui.say(&format!("/attach {}", png.display()));
    ui.say("see these");
    ui.settle().await;
    let out = ui.h.dir.path().join("out.md");
    ui.say(&format!("/export {}", out.display()));
    let md = std::fs::read_to_string(&out).unwrap();
    assert!(
        md.contains("Attached `notes.txt` (text, 18 B):\n\n```\nremember the milk\n```\n"),
        "{md}"
    );
    assert!(
        md.contains("Attached `notes.txt` (text, 34 B):\n\n````\nremember the milk\n```\nnot the end\n````\n"),
        "{md}"
    );
    assert!(
        md.contains("Attached `dot.png` (image/png, 12 B):\n\n![dot.png](data:image/png;base64,iVBORw0KGgowMDAw)"),
        "{md}"
    );
}

#[tokio::test(start_paused = true)]
async fn attach_over_the_cap_is_refused() {
    let cfg = Config {
        max_attachment_bytes: Some(1024),
        ..Config::default()
    };
    let mut ui = Ui::with_config(vec![], cfg);
    let path = ui.h.dir.path().join("big.txt");
    std::fs::write(&path, "x".repeat(4096)).unwrap();
    let cmd = format!("/attach {}", path.display());
    ui.say(&cmd);
    let (msg, is_err) = ui.app.status_pair();
    assert_eq!(
        (msg.as_str(), is_err),
        (
            format!(
                "refused: {} is 4.0 KB, over the 1.0 KB attachment cap per message",
                path.display()
            )
            .as_str(),
            true
        )
    );
    assert!(ui.app.composer.attachments.is_empty());
    assert_eq!(ui.app.composer_text(), cmd);
    assert!(ui.rows().is_empty());
    // With a file attached already, the cap is still named as it is, and
    // what is attached too.
    let small = ui.h.dir.path().join("small.txt");
    std::fs::write(&small, "y".repeat(600)).unwrap();
    ui.app.set_composer("");
    ui.say(&format!("/attach {}", small.display()));
    let mid = ui.h.dir.path().join("mid.txt");
    std::fs::write(&mid, "z".repeat(600)).unwrap();
    ui.say(&format!("/attach {}", mid.display()));
    assert_eq!(
        ui.app.status_pair().0,
        format!(
            "refused: {} is 600 B; with the 600 B already attached that is over the 1.0 KB attachment cap per message",
            mid.display()
        )
    );
}

/// `/detach NAME` removes that chip only; `/detach` all of them; the same
/// file attached twice is refused; a command that takes nothing refuses
/// words after it.
#[tokio::test(start_paused = true)]
async fn detach_by_name_and_the_same_file_twice() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    let a = ui.h.dir.path().join("a.txt");
    let b = ui.h.dir.path().join("data.csv");
    std::fs::write(&a, "hello\n").unwrap();
    std::fs::write(&b, "1,2\n").unwrap();
    ui.say(&format!("/attach {}", a.display()));
    ui.say(&format!("/attach {}", b.display()));
    let again = format!("/attach {}", a.display());
    ui.say(&again);
    assert_eq!(
        ui.app.status_pair(),
        (
            "a.txt is attached already (the same file)".to_string(),
            true
        )
    );
    assert_eq!(ui.app.composer_text(), again);
    assert_eq!(ui.app.composer.attachments.len(), 2);
    ui.app.set_composer("");
    ui.say("/detach nope.txt");
    assert_eq!(
        ui.app.status_pair(),
        (
            "no attachment named “nope.txt”: attached are a.txt, data.csv".to_string(),
            true
        )
    );
    ui.app.set_composer("");
    ui.say("/detach data.csv");
    assert_eq!(
        ui.app.status_pair().0,
        "removed data.csv (1 still attached)"
    );
    ui.say("here it is");
    let parts = ui.rows().remove(0).parts_json.unwrap();
    assert!(
        parts.contains("a.txt") && !parts.contains("data.csv"),
        "{parts}"
    );
    ui.say(&format!("/attach {}", b.display()));
    ui.say("/detach");
    assert_eq!(ui.app.status_pair().0, "removed the attachment");
    assert!(ui.app.composer.attachments.is_empty());
    // Two files of one name (two folders): the last attached goes.
    std::fs::create_dir(ui.h.dir.path().join("sub")).unwrap();
    let other = ui.h.dir.path().join("sub").join("a.txt");
    std::fs::write(&other, "other\n").unwrap();
    ui.say(&format!("/attach {}", a.display()));
    ui.say(&format!("/attach {}", other.display()));
    ui.say("/detach a.txt");
    assert_eq!(
        ui.app.status_pair().0,
        "removed the last a.txt attached (text, 6 B); another of that name stays (/detach a.txt again removes it)"
    );
    assert_eq!(ui.app.composer.attachments.len(), 1);
    ui.say("/detach");
    ui.say("/retry now");
    assert_eq!(
        ui.app.status_pair(),
        (
            "/retry takes nothing after it: remove “now”".to_string(),
            true
        )
    );
    assert_eq!(ui.app.composer_text(), "/retry now");
}

#[tokio::test(start_paused = true)]
async fn delete_a_conversation_from_the_sidebar() {
    let mut ui = Ui::new(vec![]);
    let doomed = ui.conv();
    ui.say("/rename Doomed");
    ui.say("/later 1h never sent");
    ui.say("/every day at 9am water the plants");
    ui.typ("half a thought");
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    let keeper = ui.conv();
    ui.say("/rename Keeper");
    ui.pump();
    ui.tab();
    assert_eq!(ui.app.focus, Focus::Sidebar);
    let pos = ui
        .app
        .sidebar
        .visible(&ui.app.model)
        .iter()
        .position(|c| c.id == doomed)
        .unwrap();
    while ui.sidebar_sel() < pos {
        ui.ch('j');
    }
    while ui.sidebar_sel() > pos {
        ui.ch('k');
    }
    ui.ch('d');
    let s = ui.screen(80, 24);
    assert!(s.contains("Delete “Doomed”"), "{s}");
    assert!(s.contains("Its 1 pending message(s) will be"), "{s}");
    // Its draft is named too: it goes with it.
    assert!(s.contains("unsent draft"), "{s}");
    // What goes on without it is said too (it had not been).
    // The dialog's text, its rows joined.
    let question = |s: &str| {
        s.lines()
            .filter(|l| l.starts_with(" │"))
            .filter_map(|l| {
                let (a, b) = (l.find('│')?, l.rfind('│')?);
                Some(l[a + '│'.len_utf8()..b].trim().to_string())
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert!(
        question(&s).contains("Its 1 recurring series goes on, in a new conversation (F2 ends it)"),
        "{s}"
    );
    assert!(
        s.contains("Enter yes · Esc no"),
        "the question must show its answers:\n{s}"
    );
    ui.press(KeyCode::Esc);
    assert!(
        ui.store().conversation(doomed).unwrap().is_some(),
        "Esc keeps it"
    );
    // Two of them: each goes on in a conversation of its own (it read as
    // if they shared one).
    let weekly = ui.h.engine.parse_schedule("every monday 9am").unwrap();
    ui.h.engine
        .create_series(doomed, Kind::Message, "stand-up notes", &weekly)
        .unwrap();
    ui.pump();
    ui.ch('d');
    let s = ui.screen(80, 24);
    assert!(
        question(&s).contains(
            "Its 2 recurring series go on, each in a new conversation of its own (F2 ends them)"
        ),
        "{s}"
    );
    ui.press(KeyCode::Esc);
    ui.ch('d');
    ui.enter();
    ui.pump();
    assert!(ui.store().conversation(doomed).unwrap().is_none());
    assert_eq!(
        ui.store()
            .list_items(true)
            .unwrap()
            .iter()
            .map(|i| i.status)
            .collect::<Vec<_>>(),
        vec![Status::Canceled],
        "its pending message is canceled, not sent elsewhere"
    );
    assert_eq!(ui.conv(), keeper);
    assert_eq!(ui.app.model.convs.len(), 1);
    let s = ui.screen(80, 24);
    assert!(!s.contains("Doomed") || s.contains("deleted"), "{s}");
    assert!(s.contains("Keeper"), "{s}");
}

/// ↑ on a message sent to another model (`/with MODEL`): the edit banner
/// says the resend goes there too, as it does.
#[tokio::test(start_paused = true)]
async fn the_edit_banner_names_the_model_a_with_message_went_to() {
    let mut ui = Ui::new(vec![reply_step("hi"), reply_step("hi again")]);
    ui.start().await;
    ui.say("/with echo hello there");
    ui.settle().await;
    assert_eq!(ui.user_texts(), vec!["hello there".to_string()]);
    ui.press(KeyCode::Up);
    let s = ui.screen(120, 40);
    assert!(s.contains("Enter resends it to echo"), "{s}");
    ui.erase(5);
    ui.say("friend");
    ui.settle().await;
    let again = ui
        .rows()
        .into_iter()
        .find(|r| r.user_text().as_deref() == Some("hello friend"))
        .expect("resent");
    assert_eq!(again.model_override.as_deref(), Some("echo"));
}

/// A reply the length limit ended says so under its header.
#[tokio::test(start_paused = true)]
async fn a_reply_cut_by_the_length_limit_is_marked() {
    let mut ui = Ui::new(vec![Step::Reply(vec![
        text("the first half and"),
        tock::llm::StreamEvent::Done {
            stop_reason: Some("length".into()),
        },
    ])]);
    ui.start().await;
    ui.say("tell me everything");
    ui.settle().await;
    let s = ui.screen(120, 40);
    assert!(
        s.contains(
            "✂ cut short: the reply reached the model's length limit (length); ask it to go on"
        ),
        "{s}"
    );
}
