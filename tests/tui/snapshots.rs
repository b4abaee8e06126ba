//! Snapshots of the main screens, and what the chat shows of replies, items and tasks.

use super::*;

#[tokio::test(start_paused = true)]
async fn snapshot_empty_start() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    let small = ui.render(80, 24);
    let s = screen_text(&small);
    assert!(s.contains("New conversation."), "{s}");
    assert!(s.contains(" echo ") && s.contains(" offline "), "{s}");
    snap!("empty_start_80x24", small.backend());
    snap!("empty_start_120x32", ui.render(120, 32).backend());
}

/// A conversation with nothing in it yet that has a name (a series made
/// from the CLI named it) says which it is and that a series sends there,
/// not "New conversation." (the sidebar may be hidden).
#[tokio::test(start_paused = true)]
async fn an_empty_named_conversation_says_its_name_and_its_series() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    let conv = ui.conv();
    ui.h.engine
        .rename_conversation(conv, "cron standup")
        .unwrap();
    let every = ui.h.engine.parse_schedule("every weekday at 9am").unwrap();
    ui.h.engine
        .create_series(conv, tock::store::Kind::Message, "standup", &every)
        .unwrap();
    ui.settle().await;
    let s = ui.screen(80, 24);
    assert!(s.contains("“cron standup”: no messages yet."), "{s}");
    assert!(s.contains("↻ A recurring series sends here, next "), "{s}");
    assert!(!s.contains("New conversation."), "{s}");
    snap!("empty_named_with_series_60x15", ui.render(60, 15).backend());
}

#[tokio::test(start_paused = true)]
async fn snapshot_streamed_markdown_reply() {
    let mut ui = Ui::new(markdown_steps());
    ui.start().await;
    ui.say("How do I build it?");
    ui.settle().await;
    let msgs = ui.messages();
    assert_eq!(msgs.len(), 2);
    assert_eq!(msgs[1].content, MARKDOWN_REPLY.concat());
    assert_eq!(msgs[1].status, MessageStatus::Complete);
    let s = ui.screen(80, 24);
    assert!(
        s.contains("Building tock")
            && !s.contains("# Building")
            && s.contains("• install Rust 1.85"),
        "headings without their #: {s}"
    );
    assert!(s.contains("▎ fn main() {"), "code set apart by a bar: {s}");
    assert!(
        !s.contains("**") && !s.contains('`'),
        "inline markup is rendered:\n{s}"
    );
    assert!(s.contains("println!(\"hello\");"), "{s}");
    assert!(!s.contains("```"), "fences are not shown raw:\n{s}");
    snap!("markdown_reply_80x24", ui.render(80, 24).backend());
    snap!("markdown_reply_120x32", ui.render(120, 32).backend());
}

#[tokio::test(start_paused = true)]
async fn snapshot_streaming_reply_with_two_queued() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![Step::Hold(
        vec![text("Let me think about "), text("that for a moment")],
        gate.clone(),
    )]);
    ui.start().await;
    ui.say("What is a monad?");
    ui.settle().await;
    ui.streamed().await;
    assert!(ui.app.model.is_busy());
    ui.say("and a functor?");
    ui.say("answer both in one table please");
    ui.settle().await;
    let s = ui.screen(80, 24);
    assert_eq!(s.matches("⏳ queued").count(), 2, "{s}");
    assert!(s.contains("streaming"), "{s}");
    snap!("streaming_two_queued_80x24", ui.render(80, 24).backend());
    snap!("streaming_two_queued_120x32", ui.render(120, 32).backend());
    gate.notify_one();
    ui.settle().await;
}

/// A model that reasons before it answers: where its text will be, the
/// reply says so and how far it has got; the reasoning is not shown, and
/// the note goes once the text begins.
#[tokio::test(start_paused = true)]
async fn a_reasoning_model_shows_it_is_thinking_until_its_text_comes() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let reasoning = tock::llm::StreamEvent::Reasoning("Weighing the options here.".into());
    let mut ui = Ui::new(vec![Step::Hold(vec![reasoning], gate.clone())]);
    ui.start().await;
    ui.say("Which one?");
    ui.settle().await;
    ui.streamed().await;
    let s = ui.screen(80, 24);
    assert!(s.contains("… thinking (26 characters so far)"), "{s}");
    assert!(!s.contains("Weighing"), "{s}");
    snap!("thinking_80x24", s);
    // Drawn again (a reload of the conversation), it still says so.
    ui.app.model.reload_messages();
    assert!(ui.screen(80, 24).contains("thinking (26 characters"));
    // Ctrl+O shows the reasoning as it comes, and hides it again; a
    // reload keeps what is shown.
    ui.ctrl('o');
    let s = ui.screen(80, 24);
    assert!(s.contains("│ Weighing the options here."), "{s}");
    snap!("thinking_shown_80x24", s);
    ui.app.model.reload_messages();
    assert!(ui.screen(80, 24).contains("│ Weighing the options here."));
    ui.ctrl('o');
    assert!(!ui.screen(80, 24).contains("Weighing"));
    gate.notify_one();
    ui.settle().await;
    assert!(!ui.screen(80, 24).contains("thinking"));
}

/// Shown as it comes, a long reasoning shows its latest rows (made safe),
/// not all of it, and the latest part goes on growing.
#[tokio::test(start_paused = true)]
async fn a_long_reasoning_shows_its_latest_rows_as_it_comes() {
    use tock::llm::StreamEvent::Reasoning;
    let gate = Arc::new(tokio::sync::Notify::new());
    let first: String = (1..=40).map(|i| format!("step {i} \x1b[2J;\n")).collect();
    let mut ui = Ui::new(vec![Step::Hold(vec![Reasoning(first)], gate.clone())]);
    ui.start().await;
    ui.ctrl('o');
    ui.say("Think it through");
    ui.settle().await;
    ui.streamed().await;
    let s = ui.screen(80, 24);
    assert!(s.contains("│ step 40 ␛[2J;"), "{s}");
    assert!(
        s.contains("│ step 35 ") && !s.contains("step 34 "),
        "six rows: {s}"
    );
    assert!(!s.contains('\x1b'), "{s}");
}

/// What the model reasoned is kept with its reply: one dim line says how
/// long it is, and Ctrl+O shows it (it was neither shown nor kept).
#[tokio::test(start_paused = true)]
async fn the_reasoning_is_kept_and_ctrl_o_shows_it() {
    use tock::llm::StreamEvent::Reasoning;
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![Step::Hold(
        vec![
            Reasoning("The user asks which one. ".into()),
            Reasoning("The second is cheaper \x1b[31mand\x1b[0m faster.".into()),
            text("Take the second."),
        ],
        gate.clone(),
    )]);
    ui.start().await;
    ui.say("Which one?");
    ui.settle().await;
    ui.streamed().await;
    // Drawn while it streams, then finished: the end of the stream is not
    // the whole of the reply's rows.
    assert!(ui.screen(80, 24).contains("Take the second."));
    gate.notify_one();
    ui.settle().await;
    let reply = ui.messages().into_iter().last().unwrap();
    let kept = ui.store().reasoning(reply.id).unwrap().unwrap_or_default();
    assert!(kept.starts_with("The user asks which one."), "{kept}");
    let s = ui.screen(80, 24);
    assert!(
        s.contains("▸ thought: 67 characters (Ctrl+O shows it)"),
        "{s}"
    );
    assert!(!s.contains("cheaper"), "{s}");
    snap!("reasoning_folded_80x24", ui.render(80, 24).backend());
    ui.ctrl('o');
    let s = ui.screen(80, 24);
    assert!(s.contains("▾ thought: 67 characters"), "{s}");
    assert!(
        s.contains("│ The user asks which one. The second is cheaper"),
        "{s}"
    );
    assert!(s.contains("␛[31mand␛[0m faster."), "{s}");
    snap!("reasoning_shown_80x24", ui.render(80, 24).backend());
    // Shown until Ctrl+O again, across reloads of the conversation.
    ui.app.model.reload_messages();
    assert!(ui.screen(80, 24).contains("cheaper"));
    ui.ctrl('o');
    assert!(!ui.screen(80, 24).contains("cheaper"));
    // An export keeps it, quoted above the reply, made safe.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pick.md");
    ui.say(&format!("/export {}", out.display()));
    let md = std::fs::read_to_string(&out).unwrap();
    assert!(
        md.contains(
            "> **Thought** (67 characters)\n>\n> The user asks which one. The second is cheaper ␛[31mand␛[0m faster.\n\nTake the second."
        ),
        "{md}"
    );
}

/// A reply another process streams (`tock daemon`) whose model reasons:
/// this TUI reads how much from the database and says so too (it showed
/// only "…", the count being an event of the other process).
#[tokio::test(start_paused = true)]
async fn thinking_in_another_process_shows_here_too() {
    let mut ui = Ui::new(vec![]);
    let c = ui.conv();
    let store = ui.store();
    let id = store
        .enqueue(&NewItem::new(c, Kind::Queued, "a deep question"), T0)
        .unwrap();
    assert!(store.claim(id, "the daemon", T0).unwrap());
    let item = store.item(id).unwrap().unwrap();
    let reply = store.accept(&item, "the daemon", "m", T0).unwrap().unwrap();
    store.set_reasoning_chars(reply, 1234).unwrap();
    ui.app.on_engine(Event::External);
    let s = ui.screen(80, 24);
    assert!(s.contains("… thinking (1.2k characters so far)"), "{s}");
}

/// "queued: it goes as soon as this reply finishes" is not left standing
/// once the reply is stopped elsewhere (`tock stop`, another tock): the
/// queue is paused then, and the strip says so.
#[tokio::test(start_paused = true)]
async fn the_queued_line_goes_when_the_reply_is_stopped_elsewhere() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![Step::Hold(vec![text("Let me think")], gate.clone())]);
    ui.start().await;
    ui.say("What is a monad?");
    ui.settle().await;
    ui.streamed().await;
    ui.say("and a functor?");
    ui.settle().await;
    assert_eq!(
        ui.status_line(),
        "queued: it goes as soon as this reply finishes"
    );
    // Stopped by the engine, not by a key here.
    assert!(ui.h.engine.stop(ui.conv()));
    ui.settle().await;
    let s = ui.screen(100, 30);
    assert!(s.contains("paused after stop"), "{s}");
    assert!(!s.contains("it goes as soon as this reply finishes"), "{s}");
}

/// ↑ while a reply streams opens the edit (refused, the correction typed
/// next went out as a new message) and says Enter waits for the reply;
/// Enter before then resends nothing and keeps the edit. The line goes
/// once the reply has finished, and Enter then resends.
#[tokio::test(start_paused = true)]
async fn an_edit_opened_while_the_reply_streams_waits_for_it() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![
        Step::Hold(vec![text("Let me think")], gate.clone()),
        Step::Reply(vec![
            text("A monoid in the category of endofunctors."),
            done(),
        ]),
    ]);
    ui.start().await;
    ui.say("What is a monad?");
    ui.settle().await;
    ui.streamed().await;
    ui.press(KeyCode::Up);
    assert_eq!(ui.app.composer_text(), "What is a monad?");
    assert!(ui.app.composer.edit.is_some(), "an edit, not a new message");
    assert!(
        ui.status_line().starts_with("the reply is still streaming"),
        "{}",
        ui.status_line()
    );
    ui.typ(" Briefly.");
    ui.enter();
    assert!(
        ui.status_line()
            .starts_with("not yet: the reply is still streaming"),
        "{}",
        ui.status_line()
    );
    assert_eq!(ui.app.composer_text(), "What is a monad? Briefly.");
    assert!(ui.app.composer.edit.is_some());
    assert!(
        ui.rows().iter().all(|r| r.text != " Briefly."),
        "no new message"
    );
    gate.notify_one();
    ui.settle().await;
    assert!(!ui.app.model.is_busy());
    assert!(
        !ui.status_line().contains("still streaming"),
        "{}",
        ui.status_line()
    );
    // Now Enter resends the edit.
    ui.enter();
    ui.settle().await;
    ui.streamed().await;
    let s = ui.screen(100, 30);
    assert!(s.contains("What is a monad? Briefly."), "{s}");
    assert!(s.contains("A monoid in the category"), "{s}");
}

#[tokio::test(start_paused = true)]
async fn snapshot_sending_bubble() {
    let (mut ui, gate) = Ui::slow_to_accept().await;
    ui.say("is anyone there?");
    ui.settle().await;
    let rows = ui.rows();
    assert_eq!(rows[0].status, Status::Sending);
    let s = ui.screen(80, 24);
    assert!(
        s.contains("◌ sending…") && s.contains("is anyone there?"),
        "{s}"
    );
    assert!(
        !s.contains("pending ("),
        "a sending item is a bubble, not a strip row:\n{s}"
    );
    snap!("sending_bubble_80x24", ui.render(80, 24).backend());
    gate.notify_one();
    ui.settle().await;
    assert_eq!(ui.row(rows[0].id).status, Status::Sent);
    assert_eq!(ui.messages()[1].content, "ok");
}

#[tokio::test(start_paused = true)]
async fn snapshot_retrying_item() {
    let mut ui = Ui::new(vec![Step::Fail(LlmError::transient("connection refused"))]);
    ui.start().await;
    ui.say("ping");
    ui.settle().await;
    let row = ui.rows().remove(0);
    assert_eq!((row.status, row.attempts), (Status::Pending, 1));
    assert!(row.next_attempt_at.is_some());
    let s = ui.screen(80, 24);
    assert!(s.contains("↯ retrying in 5s: connection refused"), "{s}");
    snap!("retrying_80x24", ui.render(80, 24).backend());
    // The countdown follows the clock.
    tokio::time::advance(std::time::Duration::from_secs(2)).await;
    assert!(ui.screen(80, 24).contains("↯ retrying in 3s"));
}

#[tokio::test(start_paused = true)]
async fn snapshot_failed_item() {
    let mut ui = Ui::new(vec![Step::Fail(LlmError::permanent(
        "401 Unauthorized: invalid API key",
    ))]);
    ui.start().await;
    ui.say("ping");
    ui.settle().await;
    assert_eq!(ui.rows()[0].status, Status::Failed);
    let s = ui.screen(80, 24);
    assert!(s.contains("✗ failed: 401 Unauthorized"), "{s}");
    // Never taken by the server, it is in the chat where it would be, with
    // why, and how to send it again.
    assert!(s.contains("▌ You  ✗ not sent: 401 Unauthorized"), "{s}");
    assert!(!s.contains("New conversation."), "{s}");
    snap!("failed_80x24", ui.render(80, 24).backend());
    // Sent again (the script answers "ok" now): it is the history's.
    ui.tab();
    ui.ch('R');
    ui.settle().await;
    let s = ui.screen(80, 24);
    assert!(!s.contains("not sent"), "{s}");
    assert!(s.contains("ping") && s.contains("ok"), "{s}");
}

/// A reply that fails for good holds what was queued behind its message,
/// and the strip says why the queue is paused.
#[tokio::test(start_paused = true)]
async fn a_reply_failed_for_good_says_the_queue_behind_it_is_paused() {
    let mut ui = Ui::new(vec![Step::Cut(
        vec![text("half ")],
        LlmError::permanent("malformed stream event"),
    )]);
    ui.start().await;
    ui.say("first");
    ui.say("second");
    ui.settle().await;
    let s = ui.screen(100, 24);
    assert!(s.contains("⏸ paused after a failed reply"), "{s}");
    assert!(s.contains("second"), "{s}");
}

/// A Ctrl+R whose request cannot reach the provider shows where its reply
/// will be, counting down to the next try; Esc calls it off and the
/// earlier reply is the answer again.
#[tokio::test(start_paused = true)]
async fn a_regeneration_retrying_shows_in_the_chat_and_esc_calls_it_off() {
    let mut ui = Ui::new(vec![
        Step::Reply(vec![text("the first answer"), done()]),
        Step::Fail(LlmError::transient("connection refused")),
        Step::Reply(vec![text("never asked for"), done()]),
    ]);
    ui.start().await;
    ui.say("ping");
    ui.settle().await;
    ui.ctrl('r');
    ui.settle().await;
    let s = ui.screen(80, 24);
    assert!(
        s.contains("new reply  ↯ retrying in 5s: connection refused"),
        "{s}"
    );
    assert!(
        s.contains("Esc calls it off and keeps the earlier reply"),
        "{s}"
    );
    snap!("regeneration_retrying_80x24", ui.render(80, 24).backend());
    // At 60 columns the reason gives way to the countdown.
    ui.app.sidebar_pref = Some(false);
    let narrow = ui.screen(60, 15);
    ui.app.sidebar_pref = Some(true);
    assert!(narrow.contains("new reply  ↯ retrying in 5s"), "{narrow}");
    // The countdown follows the clock.
    tokio::time::advance(std::time::Duration::from_secs(2)).await;
    assert!(ui.screen(80, 24).contains("↯ retrying in 3s"));
    let now = ui.app.model.now_ms();
    assert!(ui.app.next_tick_at().is_some_and(|t| t <= now + 1000));
    // Esc: called off; the earlier reply is back, and nothing more is sent.
    ui.press(KeyCode::Esc);
    ui.settle().await;
    assert!(
        ui.status_line().contains("regeneration called off"),
        "{}",
        ui.status_line()
    );
    let s = ui.screen(80, 24);
    assert!(!s.contains("new reply"), "{s}");
    assert!(!s.contains("(replaced)"), "{s}");
    assert!(s.contains("the first answer"), "{s}");
    tokio::time::advance(std::time::Duration::from_secs(30)).await;
    ui.settle().await;
    assert!(!ui.screen(80, 24).contains("never asked for"));
    assert_eq!(ui.h.provider.requests().len(), 2);
}

#[tokio::test(start_paused = true)]
async fn snapshot_scheduled_item() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.say("/later 1h check the build");
    ui.settle().await;
    let s = ui.screen(80, 24);
    assert!(s.contains("⏰ Mon 30 Nov 01:53"), "{s}");
    assert!(s.contains("check the build"), "{s}");
    snap!("scheduled_80x24", ui.render(80, 24).backend());
}

/// In a narrow strip, a scheduled item's time stays whole and readable:
/// the date goes first (the time alone today), then the text is cut (the
/// countdown was cut mid-number: `⏰ Sun 6 Dec 17:12 (in 9m 4…`).
#[tokio::test(start_paused = true)]
async fn a_narrow_strip_shortens_the_date_not_the_countdown() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.say(
        "/later 10m review the pull requests that are waiting for me in the main repository today",
    );
    ui.settle().await;
    tokio::time::advance(std::time::Duration::from_secs(56)).await;
    ui.settle().await;
    ui.app.sidebar_pref = Some(false);
    let s = ui.screen(60, 15);
    assert!(
        s.contains("  ⏰ 01:03 (in 9m 4s) · review the pull requests that are w…"),
        "{s}"
    );
    snap!("strip_narrow_time_60x15", s);
    // Where there is room, the whole date.
    let s = ui.screen(120, 40);
    assert!(
        s.contains("  ⏰ Mon 30 Nov 01:03 (in 9m 4s) · review the pull requests"),
        "{s}"
    );
    snap!("strip_narrow_time_120x40", s);
    ui.app.sidebar_pref = None;
}

#[tokio::test(start_paused = true)]
async fn snapshot_composer_previews() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    // (T0 is 00:53: `tomorrow 9am` would be asked about, today or Tuesday.)
    ui.typ("/at tue 9am standup");
    let s = ui.screen(80, 24);
    assert!(s.contains("⏰ sends Tue 1 Dec 09:00"), "{s}");
    snap!("preview_at_80x24", ui.render(80, 24).backend());
    ui.app.set_composer("");
    ui.typ("/later blah x");
    let s = ui.screen(80, 24);
    assert!(s.contains("✗ "), "{s}");
    snap!("preview_error_80x24", ui.render(80, 24).backend());
    // Too long for the top border, it goes on along the bottom one: the
    // example at its end is shown, not cut.
    ui.app.set_composer("");
    ui.typ("/later 1y x");
    let s = ui.screen(120, 40);
    assert!(s.contains("╭ ✗ years and months are not durations"), "{s}");
    assert!(s.contains("2030-01-15 09:00 ─"), "{s}");
}

#[tokio::test(start_paused = true)]
async fn snapshot_help_popup() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.press(KeyCode::F(1));
    assert!(ui.app.popup() == Some(ViewKind::Help));
    snap!("help_80x24", ui.render(80, 24).backend());
    snap!("help_120x32", ui.render(120, 32).backend());
    // At 80x24 it does not fit: it scrolls, and everything in it can be reached.
    let mut seen = ui.screen(80, 24);
    assert!(seen.contains(" more ╯"), "{seen}");
    for _ in 0..200 {
        ui.press(KeyCode::Down);
        seen.push_str(&ui.screen(80, 24));
    }
    for (_, keys, _) in ui.app.keys.help_rows(false) {
        assert!(seen.contains(&keys), "{keys:?} cannot be reached in help");
    }
    for c in COMMANDS {
        assert!(
            seen.contains(c.usage),
            "{} cannot be reached in help",
            c.usage
        );
    }
    for _ in 0..10 {
        ui.press(KeyCode::PageDown);
    }
    let s = ui.screen(80, 24);
    assert!(s.contains("/quit") && !s.contains("more ╯"), "{s}");
    snap!("help_80x24_end", ui.render(80, 24).backend());
    ui.press(KeyCode::PageUp);
    assert!(ui.screen(80, 24).contains("more ╯"));
    assert!(ui.app.popup() == Some(ViewKind::Help));
    // Any other key closes it, and a character is not lost: it is typed.
    ui.ch('a');
    assert!(ui.app.popup().is_none());
    assert_eq!(ui.app.composer_text(), "a", "the closing key is typed");
    // `?` (which opens help on an empty composer) and Esc only close it.
    ui.press(KeyCode::F(1));
    ui.ch('?');
    assert!(ui.app.popup().is_none());
    ui.press(KeyCode::F(1));
    ui.press(KeyCode::Esc);
    assert!(ui.app.popup().is_none());
    assert_eq!(ui.app.composer_text(), "a");
    // Help takes no letter: `?` then "quick" closes it and types "quick"
    // (q, j and k were its keys, and the first letter of a word was lost).
    ui.app.set_composer("");
    ui.ch('?');
    assert!(ui.app.popup().is_some());
    ui.typ("quick");
    assert!(ui.app.popup().is_none());
    assert_eq!(ui.app.composer_text(), "quick");
    ui.app.set_composer("a");
    // Its title says so, whole, at 60 columns too.
    ui.press(KeyCode::F(1));
    let narrow = ui.screen(60, 15);
    assert!(
        narrow.contains("╭ tock — keys (↑/↓ PgUp/PgDn scroll · Esc/q close) ─"),
        "{narrow}"
    );
}

/// `/status` shows what `tock status` prints, made on a thread of its own
/// (it tries the servers): "checking…" until it comes, then the report.
#[tokio::test(start_paused = true)]
async fn snapshot_status_report() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.say("/later 2h water the plants");
    ui.say("/status");
    assert_eq!(ui.app.popup(), Some(ViewKind::Status));
    assert_eq!(ui.app.composer_text(), "");
    snap!("status_checking_80x24", ui.render(80, 24).backend());
    // The report is made by a thread: look for it as the app's ticks do.
    let mut s = String::new();
    for _ in 0..500 {
        ui.h.clock.jump(100);
        ui.app.on_tick();
        s = ui.screen(100, 30);
        if s.contains("items:") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(s.contains("items: pending 1"), "{s}");
    assert!(s.contains("next: #"), "{s}");
    assert!(s.contains("water the plants"), "{s}");
    assert!(s.contains("model:"), "{s}");
    assert!(s.contains("provider:"), "{s}");
    assert!(s.contains("Esc back to the conversation"), "{s}");
    assert!(!s.contains("checking the dispatcher"), "{s}");
    // Esc closes it; a letter closes it and is typed.
    ui.press(KeyCode::Esc);
    assert_eq!(ui.app.popup(), None);
    ui.say("/status");
    ui.ch('h');
    assert_eq!(ui.app.popup(), None);
    assert_eq!(ui.app.composer_text(), "h");
}

#[tokio::test(start_paused = true)]
async fn snapshot_sidebar_with_several_conversations() {
    init_env();
    let h = harness(vec![]);
    let st = h.engine.store();
    let day = 86_400_000;
    for (title, age) in [
        ("Trip to Lisbon", 3 * day),
        ("Rust lifetimes", day),
        ("Why is the build red?", 2 * 3_600_000),
        ("Groceries", 5 * 60_000),
    ] {
        st.create_conversation(Some(title), "user", T0 - age)
            .unwrap();
    }
    let mut ui = Ui::on(h);
    ui.start().await;
    // The most recent one is open; queue something in another to show its badge.
    assert_eq!(
        ui.app.model.current_conv().unwrap().title.as_deref(),
        Some("Groceries")
    );
    ui.key(KeyCode::Down, KeyModifiers::ALT);
    assert_eq!(
        ui.app.model.current_conv().unwrap().title.as_deref(),
        Some("Why is the build red?")
    );
    ui.say("/later 3h is it green now?");
    ui.settle().await;
    ui.tab(); // strip
    ui.tab(); // sidebar
    assert_eq!(ui.app.focus, Focus::Sidebar);
    ui.ch('j');
    let s = ui.screen(80, 24);
    assert!(s.contains("1 pending"), "{s}");
    snap!("sidebar_80x24", ui.render(80, 24).backend());
    snap!("sidebar_120x32", ui.render(120, 32).backend());
}

#[tokio::test(start_paused = true)]
async fn snapshot_approval_then_task_card_then_canceled() {
    let mut ui = Ui::new(task_steps());
    ui.start().await;
    ui.say("remind me to check the build");
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_some());
    let s = ui.screen(80, 24);
    assert!(
        s.contains("needs approval") && s.contains("build check"),
        "{s}"
    );
    snap!("approval_card_80x24", ui.render(80, 24).backend());

    ui.approve();
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_none());
    let task = ui
        .rows()
        .into_iter()
        .find(|i| i.kind == Kind::Task)
        .expect("a task row after approval");
    assert_eq!(task.status, Status::Pending);
    let s = ui.screen(80, 24);
    assert!(
        s.contains(&format!("task #{}", task.id)) && s.contains("[scheduled]"),
        "{s}"
    );
    snap!("task_card_80x24", ui.render(80, 24).backend());

    // Cancel it from the strip: the card follows.
    ui.tab();
    assert_eq!(ui.app.focus, Focus::Strip);
    ui.ch('x');
    ui.enter();
    ui.settle().await;
    assert_eq!(ui.row(task.id).status, Status::Canceled);
    let s = ui.screen(80, 24);
    assert!(s.contains("[canceled]"), "{s}");
    assert!(
        s.contains("was due Mon 30 Nov 01:53") && !s.contains("fires"),
        "a canceled task does not say it fires:\n{s}"
    );
    snap!("task_card_canceled_80x24", ui.render(80, 24).backend());
}

/// A recurring task the model scheduled gets a card as a one-off task
/// does (its rule, its next time, its live state), not the tool's JSON.
#[tokio::test(start_paused = true)]
async fn a_recurring_task_has_a_live_card() {
    let mut ui = Ui::new(vec![
        Step::Reply(vec![
            text("I'll remind you every evening."),
            tool_call(
                "schedule_task",
                r#"{"instruction":"feed the cat","repeat":"every day at 7pm","title":"Cat"}"#,
            ),
            done(),
        ]),
        Step::Reply(vec![text("Scheduled."), done()]),
    ]);
    ui.start().await;
    ui.say("remind me to feed the cat every evening");
    ui.settle().await;
    ui.approve();
    ui.settle().await;
    let series = ui.h.engine.list_series(true).unwrap();
    let [v] = series.as_slice() else {
        panic!("one series: {series:?}")
    };
    let id = v.series.id;
    let s = ui.screen(80, 24);
    assert!(
        s.contains(&format!("task #{id} · Cat")) && s.contains("[recurring]"),
        "{s}"
    );
    assert!(
        s.contains("│ every day at 19:00") && s.contains("│ next Mon 30 Nov 19:00, in 18h 7m"),
        "{s}"
    );
    assert!(!s.contains("job_id"), "the tool's JSON is not shown:\n{s}");
    snap!("recurring_task_card_80x24", ui.render(80, 24).backend());

    // Its state follows the series, wherever it changes.
    ui.h.engine.pause_series(id).unwrap();
    ui.settle().await;
    let s = ui.screen(80, 24);
    assert!(
        s.contains("[paused]") && s.contains("paused (F2 resumes it)"),
        "{s}"
    );
    ui.h.engine.end_series(id).unwrap();
    ui.settle().await;
    let s = ui.screen(80, 24);
    assert!(
        s.contains("[ended]") && s.contains("never ran, ended"),
        "{s}"
    );
}

/// A task's message in the chat is marked as one (whether it went at its
/// time or was sent early from F2, it is the task's).
#[tokio::test(start_paused = true)]
async fn a_fired_task_is_marked_in_the_chat() {
    let mut steps = task_steps();
    steps.push(Step::Reply(vec![text("The build is green."), done()]));
    let mut ui = Ui::new(steps);
    ui.start().await;
    ui.say("remind me to check the build");
    ui.settle().await;
    ui.approve();
    ui.settle().await;
    tokio::time::sleep(std::time::Duration::from_secs(3_700)).await;
    ui.settle().await;
    let s = ui.screen(100, 30);
    assert!(
        s.contains("⏰ scheduled task") && s.contains("[Scheduled task] check whether"),
        "{s}"
    );
    assert!(s.contains("The build is green."), "{s}");
    // ↑ edits what you typed, not the task's turn that tock wrote.
    ui.press(KeyCode::Up);
    assert_eq!(ui.app.composer_text(), "remind me to check the build");
}

#[tokio::test(start_paused = true)]
async fn snapshot_interrupted_reply() {
    let mut ui = Ui::new(vec![Step::Cut(
        vec![text("The short answer is that a monad is ")],
        LlmError::transient("connection reset by peer"),
    )]);
    ui.start().await;
    ui.say("What is a monad?");
    ui.settle().await;
    assert_eq!(ui.messages()[1].status, MessageStatus::Interrupted);
    let s = ui.screen(80, 24);
    // A transient cut is generated again by itself: no key is offered for it.
    assert!(
        s.contains("connection reset by peer") && s.contains("being generated again"),
        "{s}"
    );
    assert!(!s.contains("Ctrl+R retries"), "{s}");
    assert!(
        s.contains("↯ reply again in 5s · to “What is a monad?”"),
        "{s}"
    );
    snap!("interrupted_80x24", ui.render(80, 24).backend());
    // However narrow, the reason wraps and the state stays visible.
    let s = ui.screen(64, 20);
    assert!(s.contains("being generated again"), "{s}");
}
