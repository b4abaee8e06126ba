//! More of what a user does every day: notifications, scrolling, the mouse, the sidebar, time inputs, quitting.

use super::*;

#[tokio::test(start_paused = true)]
async fn a_reply_finishing_elsewhere_notifies_without_a_keypress() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![Step::Hold(vec![text("slow")], gate.clone())]);
    ui.start().await;
    ui.say("the slow question");
    ui.settle().await;
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    assert!(ui.app.output.raw.is_empty());
    gate.notify_one();
    ui.settle().await;
    assert!(
        ui.status_line().starts_with("reply finished in “"),
        "{}",
        ui.status_line()
    );
    let raw = ui.app.output.raw.concat();
    assert!(raw.starts_with('\x07'), "bell: {raw:?}");
    assert!(
        raw.contains("\x1b]9;tock: reply finished"),
        "OSC 9: {raw:?}"
    );
    assert!(raw.contains("\x1b]777;notify;tock;"), "OSC 777: {raw:?}");
    assert!(ui.screen(80, 24).contains("reply finished"));
    // The conversation is marked unread in the sidebar until it is opened.
    let slow = ui
        .app
        .model
        .convs
        .iter()
        .find(|c| c.title.as_deref() == Some("the slow question"))
        .map(|c| c.id);
    let slow = slow
        .or_else(|| ui.app.model.unread.iter().next().copied())
        .unwrap();
    assert!(ui.app.model.unread.contains(&slow));
    assert!(
        ui.screen(80, 24).contains("• the slow question")
            || ui.screen(80, 24).contains("new reply"),
        "{}",
        ui.screen(80, 24)
    );
    ui.app.open(slow);
    assert!(!ui.app.model.unread.contains(&slow));
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    // A reply in the conversation in view does not ring.
    ui.app.output.raw.clear();
    ui.say("here");
    ui.settle().await;
    assert!(ui.app.output.raw.is_empty());
}

/// A reply finishing on screen while the window is left for another (a
/// tmux window, as the terminal reports with focus events) rings as one
/// elsewhere does; back in the window, the conversation is read.
#[tokio::test(start_paused = true)]
async fn a_reply_finishing_on_screen_in_a_window_left_rings() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![Step::Hold(vec![text("slow")], gate.clone())]);
    ui.start().await;
    ui.say("the slow question");
    ui.settle().await;
    assert!(!ui.app.on_terminal(TermEvent::FocusLost), "no frame");
    gate.notify_one();
    ui.settle().await;
    let raw = ui.app.output.raw.concat();
    assert!(raw.starts_with('\x07'), "bell: {raw:?}");
    let conv = ui.conv();
    assert!(ui.app.model.unread.contains(&conv));
    assert!(ui.app.on_terminal(TermEvent::FocusGained));
    assert!(!ui.app.model.unread.contains(&conv));
}

#[tokio::test(start_paused = true)]
async fn scrolling_a_long_conversation() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    for i in 0..30 {
        ui.say(&format!("message number {i}"));
        ui.settle().await;
    }
    let s = ui.screen(80, 24);
    assert!(s.contains("message number 29") && !s.contains("message number 0\n"));
    ui.press(KeyCode::PageUp);
    let s = ui.screen(80, 24);
    assert!(!s.contains("message number 29"), "{s}");
    assert!(s.contains("End: jump to latest"), "{s}");
    ui.key(KeyCode::Home, KeyModifiers::CONTROL);
    let s = ui.screen(80, 24);
    assert!(s.contains("│  message number 0 "), "{s}");
    ui.app
        .on_terminal(TermEvent::Mouse(ratatui::crossterm::event::MouseEvent {
            kind: ratatui::crossterm::event::MouseEventKind::ScrollDown,
            column: 40,
            row: 10,
            modifiers: KeyModifiers::NONE,
        }));
    let s = ui.screen(80, 24);
    assert!(!s.contains("│  message number 0 "), "{s}");
    // End on an empty composer jumps back to the latest.
    ui.press(KeyCode::End);
    let s = ui.screen(80, 24);
    assert!(
        s.contains("message number 29") && !s.contains("jump to latest"),
        "{s}"
    );
    ui.key(KeyCode::Up, KeyModifiers::SHIFT);
    assert_eq!(ui.app.scroll.from_bottom, Some(1));
    ui.key(KeyCode::End, KeyModifiers::CONTROL);
    assert_eq!(ui.app.scroll.from_bottom, None);
}

#[tokio::test(start_paused = true)]
async fn scrolled_up_during_a_stream_says_new_text_is_below() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    for i in 0..10 {
        ui.say(&format!("filler {i}"));
        ui.settle().await;
    }
    ui.h.provider
        .push(Step::Hold(vec![text("streaming now")], gate.clone()));
    ui.say("one more");
    ui.settle().await;
    ui.press(KeyCode::PageUp);
    let s = ui.screen(80, 24);
    assert!(s.contains("new text below — End to jump to latest"), "{s}");
    // The label's row holds nothing else: no fragment of the text under it.
    let row = s
        .lines()
        .find(|l| l.contains("new text below"))
        .unwrap_or_default();
    let chat_part = row.split('│').nth(1).unwrap_or_default();
    assert_eq!(
        chat_part.trim(),
        "↓ new text below — End to jump to latest",
        "{s}"
    );
    gate.notify_one();
    ui.settle().await;
}

#[tokio::test(start_paused = true)]
async fn clicking_a_conversation_in_the_sidebar_opens_it() {
    init_env();
    let h = harness(vec![]);
    let older = h
        .engine
        .store()
        .create_conversation(Some("Older"), "user", T0 - 60_000)
        .unwrap();
    h.engine
        .store()
        .create_conversation(Some("Newer"), "user", T0)
        .unwrap();
    let mut ui = Ui::on(h);
    let s = ui.screen(80, 24);
    let row = s.lines().position(|l| l.contains("Older")).unwrap() as u16;
    ui.app
        .on_terminal(TermEvent::Mouse(ratatui::crossterm::event::MouseEvent {
            kind: ratatui::crossterm::event::MouseEventKind::Down(
                ratatui::crossterm::event::MouseButton::Left,
            ),
            column: 5,
            row,
            modifiers: KeyModifiers::NONE,
        }));
    assert_eq!(ui.conv(), older);
    assert!(ui.screen(80, 24).contains("▸ Older"));
}

#[tokio::test(start_paused = true)]
async fn clicking_an_item_in_the_pending_strip_chooses_it_for_the_strips_keys() {
    let mut ui = Ui::new(vec![]);
    ui.say("first");
    ui.say("second, clicked");
    let ids: Vec<i64> = ui.rows().iter().map(|r| r.id).collect();
    let s = ui.screen(100, 30);
    let row = s
        .lines()
        .position(|l| l.contains("second, clicked"))
        .unwrap() as u16;
    let col = s.lines().nth(row as usize).unwrap().find("second").unwrap() as u16;
    ui.app
        .on_terminal(TermEvent::Mouse(ratatui::crossterm::event::MouseEvent {
            kind: ratatui::crossterm::event::MouseEventKind::Down(
                ratatui::crossterm::event::MouseButton::Left,
            ),
            column: col,
            row,
            modifiers: KeyModifiers::NONE,
        }));
    assert_eq!(ui.app.focus, Focus::Strip);
    assert_eq!(ui.app.strip.selected, Some(ids[1]));
    assert!(
        ui.screen(100, 30).contains("› "),
        "the clicked row is marked"
    );
    // The strip's keys now act on the clicked item, not the first one.
    ui.ch('s');
    assert_eq!(ui.row(ids[1]).priority, 1);
    assert_eq!(ui.row(ids[0]).priority, 0);
    // A click on no item changes nothing.
    ui.app
        .on_terminal(TermEvent::Mouse(ratatui::crossterm::event::MouseEvent {
            kind: ratatui::crossterm::event::MouseEventKind::Down(
                ratatui::crossterm::event::MouseButton::Left,
            ),
            column: col,
            row: 0,
            modifiers: KeyModifiers::NONE,
        }));
    assert_eq!(ui.app.strip.selected, Some(ids[1]));
}

/// The conversation list's letters are its commands (`r` rename, `d`
/// delete, `/` filter): one it does not use is typing meant for the
/// composer, which gets the keys back with it (dropped, it cut "hello" to
/// "ello", and Enter sent that).
#[tokio::test(start_paused = true)]
async fn a_letter_the_conversation_list_does_not_use_goes_to_the_composer() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.typ("my draft");
    ui.key(KeyCode::BackTab, KeyModifiers::SHIFT);
    assert_eq!(ui.app.focus, Focus::Sidebar);
    ui.ch(' ');
    assert_eq!(ui.app.composer_text(), "my draft ");
    assert_eq!(ui.app.focus, Focus::Composer);
    let (msg, is_err) = ui.app.status_pair();
    assert!(
        !is_err && msg.starts_with("typed into the composer"),
        "{msg}"
    );
    ui.typ("and more");
    assert_eq!(ui.app.composer_text(), "my draft and more");
    // Its own keys still work, and Esc goes back to the composer.
    ui.key(KeyCode::BackTab, KeyModifiers::SHIFT);
    assert_eq!(ui.app.focus, Focus::Sidebar);
    ui.ch('/');
    assert_eq!(ui.app.popup(), Some(ViewKind::Prompt));
    ui.press(KeyCode::Esc);
    ui.press(KeyCode::Esc);
    assert_eq!(ui.app.focus, Focus::Composer);
    assert_eq!(ui.app.composer_text(), "my draft and more");
}

#[tokio::test(start_paused = true)]
async fn sidebar_search_and_rename() {
    init_env();
    let h = harness(vec![]);
    for t in [
        "Trip to Lisbon",
        "Rust lifetimes",
        "Lisp macros",
        "Café in São Paulo",
    ] {
        h.engine
            .store()
            .create_conversation(Some(t), "user", T0)
            .unwrap();
    }
    let mut ui = Ui::on(h);
    ui.tab();
    assert_eq!(ui.app.focus, Focus::Sidebar);
    ui.ch('/');
    ui.typ("lis");
    let titles: Vec<String> = ui
        .app
        .sidebar
        .visible(&ui.app.model)
        .iter()
        .map(|c| c.display_title())
        .collect();
    assert_eq!(titles.len(), 2, "{titles:?}");
    assert!(titles.iter().all(|t| t.to_lowercase().contains("lis")));
    let s = ui.screen(80, 24);
    assert!(!s.contains("Rust lifetimes") && s.contains("/lis"), "{s}");
    ui.enter();
    // Enter opened the first match, and the list is whole again: Alt+↓
    // moves on to a conversation the filter had hidden.
    let opened = ui.app.model.current_conv().unwrap().display_title();
    assert!(opened.to_lowercase().contains("lis"), "{opened}");
    assert_eq!(ui.app.focus, Focus::Composer);
    assert_eq!(ui.app.sidebar.filter, "");
    assert_eq!(ui.app.sidebar.visible(&ui.app.model).len(), 4);
    let before = ui.app.model.current;
    ui.key(KeyCode::Down, KeyModifiers::ALT);
    assert_ne!(ui.app.model.current, before, "Alt+↓ moved on");
    ui.tab();
    assert_eq!(ui.app.focus, Focus::Sidebar);
    ui.ch('/');
    ui.press(KeyCode::Esc);
    assert_eq!(ui.app.sidebar.filter, "", "Esc clears the filter");
    assert_eq!(ui.app.sidebar.visible(&ui.app.model).len(), 4);
    // Accents aside, as search does: "cafe sao" finds "Café in São Paulo",
    // and "CAFÉ" too.
    for q in ["cafe", "sao paulo", "CAFÉ"] {
        ui.ch('/');
        ui.typ(q);
        let titles: Vec<String> = ui
            .app
            .sidebar
            .visible(&ui.app.model)
            .iter()
            .map(|c| c.display_title())
            .collect();
        assert_eq!(titles, vec!["Café in São Paulo"], "{q}");
        ui.press(KeyCode::Esc);
    }
    // Rename the selected one.
    let target = ui.app.sidebar.visible(&ui.app.model)[ui.sidebar_sel()].id;
    ui.ch('r');
    ui.erase(20);
    ui.typ("Renamed");
    ui.enter();
    assert!(ui.app.popup().is_none());
    assert_eq!(
        ui.store()
            .conversation(target)
            .unwrap()
            .unwrap()
            .title
            .as_deref(),
        Some("Renamed")
    );
    // An empty title is refused in place.
    ui.ch('r');
    ui.erase(20);
    ui.enter();
    assert!(ui.app.popup() == Some(ViewKind::Prompt));
    assert!(ui.screen(80, 24).contains("a title cannot be empty"));
    ui.press(KeyCode::Esc);
    assert!(ui.app.popup().is_none());
    // Enter opens the selected conversation.
    ui.ch('j');
    let sel = ui.app.sidebar.visible(&ui.app.model)[ui.sidebar_sel()].id;
    ui.enter();
    assert_eq!((ui.conv(), ui.app.focus), (sel, Focus::Composer));
}

#[tokio::test(start_paused = true)]
async fn strip_reschedule_with_a_live_preview() {
    let mut ui = Ui::new(vec![]);
    ui.say("/later 1h check the build");
    let id = ui.rows()[0].id;
    ui.tab();
    ui.ch('r');
    ui.typ("blah");
    assert!(ui.screen(80, 24).contains("✗ "));
    ui.enter();
    assert!(
        ui.app.popup() == Some(ViewKind::Prompt),
        "an unreadable time keeps the prompt open"
    );
    assert_eq!(ui.row(id).due_at, Some(T0 + 3_600_000));
    ui.erase(20);
    ui.typ("3h");
    let s = ui.screen(80, 24);
    assert!(s.contains("⏰ sends Mon 30 Nov 03:53, in 3h"), "{s}");
    ui.enter();
    assert!(ui.app.popup().is_none());
    // 3h from now (the harness reads the prompt a moment before typing).
    assert_eq!(
        ui.row(id).due_at,
        Some(ui.h.engine.now_ms() + 3 * 3_600_000)
    );
    assert!(ui.status_line().starts_with("rescheduled"));
}

/// At 60 columns a failed item's row keeps room for its own text: a long
/// error is cut (with …) rather than the message it belongs to.
#[tokio::test(start_paused = true)]
async fn a_failed_row_keeps_its_text_when_the_error_is_long() {
    let mut ui = Ui::new(vec![Step::Fail(LlmError::permanent(
        "openai: cannot connect to 127.0.0.1:33667 (connection refused); is the server running at that address?",
    ))]);
    ui.start().await;
    ui.say("message while server down");
    ui.settle().await;
    ui.app.sidebar_pref = Some(false);
    let s = ui.screen(60, 15);
    // The strip's row (the chat shows it too, as a message not sent).
    let row = s
        .lines()
        .find(|l| l.contains("✗ failed"))
        .unwrap_or_else(|| panic!("{s}"));
    assert!(row.contains("· message while server down"), "{s}");
    assert!(row.contains('…'), "the error is cut, and says so: {s}");
}

/// A status message never runs into the hint at the right ("… marked
/// replaced F1 help"): with less than two spaces between, the hint goes.
#[tokio::test(start_paused = true)]
async fn a_status_message_never_runs_into_the_help_hint() {
    let mut ui = Ui::new(vec![]);
    for n in 40..120 {
        ui.app.info(format!("{}QZ", "x".repeat(n)));
        let s = ui.screen(120, 40);
        let bar = s.lines().find(|l| l.contains("QZ")).unwrap_or_default();
        assert!(!bar.contains("QZ F1 help"), "{n}: {bar}");
    }
}

/// The reschedule prompt's "now due … in …" and the strip's countdown
/// agree, whatever the fraction of a second (one rounded to the nearest
/// second, the other stepped, they differed by a minute now and then).
#[tokio::test(start_paused = true)]
async fn the_prompt_and_the_strip_count_down_alike() {
    let mut ui = Ui::new(vec![]);
    ui.say("/later 2h check the build");
    ui.tab();
    ui.ch('r');
    let countdown = |line: &str| {
        line.rsplit("in ")
            .next()
            .unwrap_or_default()
            .trim_end_matches([')', ' ', '│'])
            .split(')')
            .next()
            .unwrap_or_default()
            .to_string()
    };
    for _ in 0..400 {
        ui.h.clock.jump(300);
        let s = ui.screen(100, 30);
        let strip = s
            .lines()
            .find(|l| l.contains("check the build"))
            .unwrap_or_default();
        let prompt = s
            .lines()
            .find(|l| l.contains("now due"))
            .unwrap_or_default();
        assert_eq!(countdown(strip), countdown(prompt), "{s}");
    }
}

/// `u` on a scheduled item brings it back with its time (`/at …`), so
/// Enter schedules it again instead of sending it at once.
#[tokio::test(start_paused = true)]
async fn a_scheduled_item_taken_back_keeps_its_time() {
    let mut ui = Ui::new(vec![]);
    ui.say("/later 1h check the build");
    let first = ui.rows()[0].clone();
    let due = first.due_at.unwrap();
    ui.tab();
    ui.ch('u');
    ui.settle().await;
    let text = ui.app.composer_text();
    assert!(
        text.starts_with("/at ") && text.ends_with(" check the build"),
        "{text}"
    );
    assert!(
        ui.status_line().contains("with its time"),
        "{}",
        ui.status_line()
    );
    ui.enter();
    ui.settle().await;
    let again = ui
        .rows()
        .into_iter()
        .find(|r| r.status == Status::Pending)
        .expect("scheduled again");
    assert_eq!(again.text, "check the build");
    let back = again.due_at.unwrap();
    // To the second (it lost its seconds, and went up to 59 s early).
    assert!((due - 1_000..=due).contains(&back), "{due} {back}");
}

/// A text that starts with more time (`evening class`, `friday report`,
/// `PST call`) comes back as `/at TIME -- TEXT`, so Enter schedules it
/// again at its time with its whole text instead of refusing it.
#[tokio::test(start_paused = true)]
async fn a_scheduled_item_whose_text_starts_with_a_time_comes_back_with_dashes() {
    for text in ["evening class", "friday report", "PST call", "and 5pm x"] {
        let mut ui = Ui::new(vec![]);
        ui.say(&format!("/later 1h -- {text}"));
        let due = ui.rows()[0].due_at.unwrap();
        ui.tab();
        ui.ch('u');
        ui.settle().await;
        let line = ui.app.composer_text();
        assert!(
            line.starts_with("/at ") && line.ends_with(&format!(" -- {text}")),
            "{line}"
        );
        ui.enter();
        ui.settle().await;
        let again = ui
            .rows()
            .into_iter()
            .find(|r| r.status == Status::Pending)
            .unwrap_or_else(|| panic!("{text}: not scheduled again: {}", ui.status_line()));
        assert_eq!(again.text, text);
        let back = again.due_at.unwrap();
        assert!((due - 60_000..=due).contains(&back), "{due} {back}");
    }
    // A plain text comes back without them.
    let mut ui = Ui::new(vec![]);
    ui.say("/later 1h check the build");
    ui.tab();
    ui.ch('u');
    ui.settle().await;
    assert!(!ui.app.composer_text().contains(" -- "));
}

/// The same at a time with seconds: they are kept.
#[tokio::test(start_paused = true)]
async fn a_scheduled_item_taken_back_keeps_its_seconds() {
    let mut ui = Ui::new(vec![]);
    ui.say("/later 1h 30s check the build");
    let due = ui.rows()[0].due_at.unwrap();
    assert_ne!(due % 60_000, 0, "a time with seconds");
    ui.tab();
    ui.ch('u');
    ui.settle().await;
    ui.enter();
    ui.settle().await;
    let again = ui
        .rows()
        .into_iter()
        .find(|r| r.status == Status::Pending)
        .expect("scheduled again");
    let back = again.due_at.unwrap();
    assert!((due - 1_000..=due).contains(&back), "{due} {back}");
}

/// Several bad `[keys]` entries: the first is said, with how many more and
/// where they are.
#[tokio::test(start_paused = true)]
async fn several_bad_key_bindings_say_where_the_rest_are() {
    let cfg: Config = toml::from_str(
        "[keys]\n\"main.quit\" = \"ctrl+shift+banana\"\n\"strip.cancel\" = 5\n\"composer.nonsense\" = \"ctrl+x\"\n",
    )
    .unwrap();
    let ui = Ui::with_config(vec![], cfg);
    let (line, error) = ui.app.status_pair();
    let log = tock::logging::log_file();
    assert!(
        error && line.contains(&format!("(+2 more, in {})", log.display())),
        "{line}"
    );
}

/// A notify_command that cannot be run is said on the screen, once, not
/// only in the log.
#[tokio::test(start_paused = true)]
async fn a_notify_command_that_cannot_run_is_said_once() {
    let cfg: Config = toml::from_str("notify_command = [\"/no/such/notify\"]\n").unwrap();
    let mut ui = Ui::with_config(
        vec![
            Step::Fail(LlmError::permanent("400 Bad Request")),
            Step::Fail(LlmError::permanent("400 Bad Request")),
        ],
        cfg,
    );
    ui.start().await;
    ui.say("try me");
    ui.settle().await;
    let (line, error) = ui.app.status_pair();
    assert!(
        error && line.contains("notify_command /no/such/notify could not be run"),
        "{line}"
    );
    // The next notice is not followed by the same line again.
    ui.app.status = None;
    ui.say("/new");
    ui.say("again");
    ui.settle().await;
    assert!(
        !ui.status_line().contains("could not be run"),
        "{}",
        ui.status_line()
    );
}

#[tokio::test(start_paused = true)]
async fn strip_retry_a_failed_item() {
    let mut ui = Ui::new(vec![Step::Fail(LlmError::permanent("400 Bad Request"))]);
    ui.start().await;
    ui.say("try me");
    ui.settle().await;
    let id = ui.rows()[0].id;
    assert_eq!(ui.row(id).status, Status::Failed);
    ui.tab();
    ui.key(KeyCode::Char('R'), KeyModifiers::SHIFT);
    ui.settle().await;
    assert_eq!(ui.row(id).status, Status::Sent);
    assert_eq!(ui.user_texts(), vec!["try me"]);
    assert_eq!(ui.app.focus, Focus::Composer, "the strip is empty again");
}

/// R on a failed item in the strip takes it out (it goes, or fails again):
/// the row that takes its place is selected, as after a cancel, not none.
#[tokio::test(start_paused = true)]
async fn strip_retry_selects_the_row_that_takes_its_place() {
    let mut ui = Ui::new(vec![
        Step::Fail(LlmError::permanent("400 Bad Request")),
        Step::Reply(vec![text("ok"), done()]),
    ]);
    ui.start().await;
    ui.say("try me");
    ui.settle().await;
    ui.say("/later 1h later one");
    let failed = ui.rows()[0].id;
    let later = ui.rows()[1].id;
    assert_eq!(ui.row(failed).status, Status::Failed);
    ui.tab();
    while ui.app.strip.selected != Some(failed) {
        ui.ch('k');
    }
    ui.screen(120, 40);
    ui.key(KeyCode::Char('R'), KeyModifiers::SHIFT);
    ui.settle().await;
    assert_eq!(ui.row(failed).status, Status::Sent);
    assert_eq!(ui.app.focus, Focus::Strip);
    assert_eq!(ui.app.strip.selected, Some(later));
}

/// "… failed — F2 to retry" goes once nothing in its conversation is failed
/// any more: retried from the command line, it stayed on for its seconds
/// after the message had gone out.
#[tokio::test(start_paused = true)]
async fn a_failure_line_goes_once_the_item_is_retried_elsewhere() {
    let mut ui = Ui::new(vec![
        Step::Fail(LlmError::permanent("400 Bad Request")),
        Step::Reply(vec![text("ok"), done()]),
    ]);
    ui.start().await;
    ui.say("try me");
    ui.settle().await;
    let id = ui.rows()[0].id;
    assert_eq!(ui.row(id).status, Status::Failed);
    assert!(
        ui.status_line().contains("F2 to retry"),
        "{}",
        ui.status_line()
    );
    ui.h.engine.retry(id).unwrap();
    ui.settle().await;
    assert_eq!(ui.row(id).status, Status::Sent);
    assert_eq!(ui.status_line(), "", "stale once retried");
}

#[tokio::test(start_paused = true)]
async fn denying_a_tool_call_schedules_nothing() {
    let mut ui = Ui::new(task_steps());
    ui.start().await;
    ui.say("remind me to check the build");
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_some());
    // With text in the composer, y and n are typed, not answers.
    ui.typ("ok yn");
    assert!(ui.app.model.waiting_approval().is_some());
    ui.app.set_composer("");
    ui.deny();
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_none());
    assert!(ui.rows().iter().all(|r| r.kind != Kind::Task));
    assert_eq!(ui.status_line(), "denied");
    // The call and its refusal are small cards, not raw JSON.
    let s = ui.screen(100, 30);
    assert!(s.contains("→ schedule_task"), "{s}");
    assert!(s.contains("✗ declined by you"), "{s}");
    assert!(!s.contains("{\"error\""), "{s}");
    // The export has the call with its arguments.
    let out = ui.h.dir.path().join("out.md");
    ui.say(&format!("/export {}", out.display()));
    let md = std::fs::read_to_string(&out).unwrap();
    assert!(md.contains("Tool call `schedule_task`"), "{md}");
    assert!(md.contains("\"instruction\""), "the arguments: {md}");
}

/// A card waiting for an answer does not hold the user in its
/// conversation: Tab steps through its buttons and on to the conversation
/// list, whose keys are the list's then (`j`, Enter), and Alt+↑/↓ switch
/// conversations; none of it answers the call, which waits where it was.
#[tokio::test(start_paused = true)]
async fn tab_and_alt_arrows_leave_an_approval_card_waiting() {
    init_env();
    let h = harness_with(Scripted::new(task_steps()), Config::default());
    let other = h
        .engine
        .store()
        .create_conversation(Some("Groceries"), "user", T0 - 3_600_000)
        .unwrap();
    let mut ui = Ui::on(h);
    ui.start().await;
    assert_eq!(ui.conv(), other, "the one conversation there is");
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    let asked = ui.conv();
    assert_ne!(asked, other);
    ui.say("remind me to check the build");
    ui.settle().await;
    let card = |ui: &mut Ui| ui.screen(100, 30).contains("Schedule “build check”?");
    let chosen = |ui: &mut Ui| ui.screen(100, 30).contains("Enter confirms");
    let waiting = |ui: &Ui| {
        ui.store()
            .approvals(asked)
            .unwrap()
            .iter()
            .filter(|a| a.status == tock::store::ApprovalStatus::Waiting)
            .count()
    };
    assert!(card(&mut ui));
    assert_eq!(waiting(&ui), 1);

    // Alt+↓ goes to the other conversation, Alt+↑ back to the card.
    ui.key(KeyCode::Down, KeyModifiers::ALT);
    assert_eq!(ui.conv(), other, "Alt+↓ left the card's conversation");
    assert!(!card(&mut ui));
    ui.key(KeyCode::Up, KeyModifiers::ALT);
    assert_eq!(ui.conv(), asked, "Alt+↑ came back");
    assert!(card(&mut ui) && !chosen(&mut ui), "waiting, nothing chosen");

    // Tab: Approve, Deny, then on to the list, the choice taken back.
    ui.tab();
    assert!(chosen(&mut ui), "Tab chooses on the card first");
    ui.tab();
    assert_eq!(ui.app.focus, Focus::Composer);
    ui.tab();
    if ui.app.focus == Focus::Strip {
        ui.tab();
    }
    assert_eq!(ui.app.focus, Focus::Sidebar, "Tab reached the list");
    assert!(!chosen(&mut ui), "leaving the card takes its choice back");
    // The list's keys: j moves down to the other conversation, Enter opens it.
    ui.ch('j');
    ui.enter();
    assert_eq!(
        ui.conv(),
        other,
        "Enter in the list opened the conversation"
    );
    assert_eq!(waiting(&ui), 1, "nothing answered the call");

    // And back (Alt+↑ from here, or Tab and Enter in the list): the card
    // still waits, nothing chosen, and is answered deliberately.
    ui.key(KeyCode::Up, KeyModifiers::ALT);
    assert_eq!(ui.conv(), asked);
    assert_eq!(ui.app.focus, Focus::Composer);
    assert!(card(&mut ui) && !chosen(&mut ui));
    assert_eq!(waiting(&ui), 1);
    ui.approve();
    ui.settle().await;
    assert_eq!(waiting(&ui), 0, "answered on the card");
}

/// A message sent while the clock was three hours ahead, then set right:
/// it happened, so the conversation list, the chat, search, `/export` and
/// F2 tell it as now, not as a time to come ("03:53", "in 3h").
#[tokio::test(start_paused = true)]
async fn what_was_written_on_a_clock_ahead_is_told_as_past_once_it_is_set_right() {
    let mut ui = Ui::new(vec![Step::Reply(vec![text("hi"), done()])]);
    ui.start().await;
    let ahead = 3 * 3_600_000;
    ui.h.clock.jump(ahead);
    ui.say("hello");
    ui.settle().await;
    ui.h.clock.jump(-ahead);
    ui.settle().await;
    let conv = ui.store().conversation(ui.conv()).unwrap().unwrap();
    assert!(conv.updated_at > T0 + ahead - 1, "stored as written");
    let s = ui.screen(120, 30);
    // The list (the chat's headers keep the time each message has).
    let list: String = s
        .lines()
        .map(|l| l.chars().take(26).collect::<String>() + "\n")
        .collect();
    assert!(list.contains("  00:53"), "the list says now:\n{s}");
    assert!(!list.contains("03:53"), "not three hours from now:\n{s}");
    // The chat's headers, Ctrl+F's hits and `/export` too, once the clock
    // check has seen the clock set back.
    tokio::time::advance(std::time::Duration::from_secs(31)).await;
    ui.settle().await;
    let s = ui.screen(120, 30);
    assert!(s.contains("You · 00:53") && !s.contains("03:53"), "{s}");
    ui.ctrl('f');
    ui.typ("hello");
    let found = ui.screen(120, 30);
    assert!(
        found.contains("· 00:53 · you") && !found.contains("03:53"),
        "{found}"
    );
    ui.press(KeyCode::Esc);
    let path = ui.h.dir.path().join("ahead.md");
    ui.say(&format!("/export {}", path.display()));
    let md = std::fs::read_to_string(&path).unwrap();
    assert!(
        md.contains("## You — 2026-11-30 00:53\n") && !md.contains("03:53"),
        "{md}"
    );
    // F2, finished rows shown: the message went, by now at the latest.
    ui.press(KeyCode::F(2));
    ui.ch('a');
    ui.press(KeyCode::Down);
    let s = ui.screen(120, 30);
    assert!(s.contains("Mon 30 Nov 00:53 sent"), "its row: {s}");
    assert!(
        s.contains("sent Mon 30 Nov 00:53 (now)"),
        "its details: {s}"
    );
    assert!(!s.contains("in 3h") && !s.contains("03:53"), "{s}");
}

#[tokio::test(start_paused = true)]
async fn model_and_role_commands() {
    let mut ui = Ui::new(vec![]);
    // `/model` alone opens the picker, which names the model in use.
    ui.say("/model");
    assert_eq!(ui.app.top(), Some(ViewKind::ModelPicker));
    let s = ui.screen(80, 24);
    assert!(
        s.contains("Model for this conversation: echo (echo)"),
        "{s}"
    );
    assert!(s.contains("echo") && s.contains("current · offline"), "{s}");
    ui.press(KeyCode::Esc);
    assert_eq!(ui.app.top(), None);
    assert_eq!(ui.app.composer_text(), "");
    ui.say("/model nonesuch");
    let (msg, is_err) = ui.app.status_pair();
    assert!(is_err && msg.contains("unknown model"), "{msg}");
    assert_eq!(ui.app.model.current_conv().unwrap().model, None);
    assert_eq!(
        ui.app.composer_text(),
        "/model nonesuch",
        "a failed command stays to be fixed"
    );
    ui.app.set_composer("");
    ui.say("/role");
    assert!(
        ui.status_line().starts_with("role: none"),
        "{}",
        ui.status_line()
    );
    ui.say("/role pirate");
    assert!(ui.app.status_pair().1);
    assert_eq!(
        ui.app.composer_text(),
        "/role pirate",
        "a failed command stays to be fixed"
    );
}

/// Another tock dispatching: where the status bar cannot say so at length,
/// it says so briefly before dropping the rest (the provider, the
/// conversation's title, the usage all went for it at 120 columns).
#[tokio::test(start_paused = true)]
async fn the_status_bar_says_another_dispatcher_briefly_before_dropping_the_rest() {
    let mut ui = Ui::new(vec![]);
    // A live process (this one) holds the lease under another owner.
    let pid = std::process::id();
    assert!(
        ui.store()
            .acquire_lease("another-tock", pid, T0, 3_600_000)
            .unwrap()
    );
    ui.start().await;
    ui.app.sidebar_pref = Some(false);
    let last = |ui: &mut Ui, w| {
        let s = ui.screen(w, 24);
        s.lines().last().unwrap_or_default().to_string()
    };
    let wide = last(&mut ui, 160);
    assert!(
        wide.contains(&format!("another tock (pid {pid}) sends")),
        "{wide}"
    );
    let mut brief_seen = false;
    for w in (60..160).rev() {
        let bar = last(&mut ui, w);
        if bar.contains("other tock sends") && !bar.contains("another") && bar.contains("offline") {
            brief_seen = true;
            break;
        }
    }
    assert!(
        brief_seen,
        "no width showed the brief form with the provider"
    );
}

#[tokio::test(start_paused = true)]
async fn quit_suspend_and_ctrl_c() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![Step::Hold(vec![text("x")], gate)]);
    ui.start().await;
    ui.ctrl('z');
    assert!(ui.app.suspend);
    ui.say("q");
    ui.settle().await;
    // Ctrl+C: stops a reply first, then clears the composer, then quits.
    ui.ctrl('c');
    ui.settle().await;
    assert!(!ui.app.model.is_busy());
    assert!(!ui.app.quit);
    ui.typ("draft");
    ui.ctrl('c');
    assert_eq!(ui.app.composer_text(), "");
    assert!(!ui.app.quit);
    // "cleared" is about that key: what is typed or pasted next ends it.
    assert!(ui.status_line().contains("cleared (Ctrl+P brings it back)"));
    ui.app.on_terminal(TermEvent::Paste("pasted".into()));
    assert_eq!(ui.status_line(), "", "stale once something else is typed");
    ui.ctrl('u');
    // On an empty composer one Ctrl+C only warns; a second within 2 s quits.
    ui.ctrl('c');
    assert!(!ui.app.quit);
    assert!(ui.status_line().contains("press Ctrl+C again to quit"));
    tokio::time::advance(std::time::Duration::from_secs(3)).await;
    ui.app.on_tick();
    assert_eq!(ui.status_line(), "", "the warning goes with its window");
    ui.ctrl('c');
    assert!(!ui.app.quit, "too late: this press warns again");
    ui.ctrl('c');
    assert!(ui.app.quit);
    let mut ui = Ui::new(vec![]);
    ui.ctrl('q');
    assert!(ui.app.quit);
    // Ctrl+D on an empty composer is the end of input, as in a shell: a
    // second press quits (on text it deletes forward, as ever).
    let mut ui = Ui::new(vec![]);
    ui.typ("ab");
    ui.press(KeyCode::Home);
    ui.ctrl('d');
    assert_eq!(ui.app.composer_text(), "b");
    ui.press(KeyCode::Delete);
    ui.ctrl('d');
    assert!(!ui.app.quit);
    assert!(ui.status_line().contains("press Ctrl+D again to quit"));
    ui.ctrl('d');
    assert!(ui.app.quit);
    // Ctrl+Q while a reply streams warns first: quitting cuts it off.
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![Step::Hold(vec![text("x")], gate)]);
    ui.start().await;
    ui.say("q");
    ui.settle().await;
    assert!(ui.app.model.is_busy());
    ui.ctrl('q');
    assert!(!ui.app.quit);
    assert!(
        ui.status_line()
            .contains("a reply is streaming: Ctrl+Q again quits")
            && ui.status_line().contains("Esc stops it"),
        "{}",
        ui.status_line()
    );
    // Another key in between disarms it.
    ui.typ("x");
    ui.ctrl('q');
    assert!(!ui.app.quit);
    ui.ctrl('q');
    assert!(ui.app.quit);
    // ? opens help only on an empty composer.
    let mut ui = Ui::new(vec![]);
    ui.typ("why?");
    assert_eq!(ui.app.composer_text(), "why?");
    assert!(ui.app.popup().is_none());
}

#[tokio::test(start_paused = true)]
async fn renders_at_any_size_in_any_state() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(task_steps());
    ui.h.provider
        .push(Step::Hold(vec![text("long")], gate.clone()));
    ui.start().await;
    ui.say("remind me to check the build");
    ui.settle().await;
    let sizes = [
        (1, 1),
        (2, 2),
        (5, 3),
        (12, 4),
        (20, 6),
        (40, 10),
        (59, 20),
        (60, 20),
        (80, 24),
        (250, 70),
    ];
    let check = |ui: &mut Ui, what: &str| {
        for (w, h) in sizes {
            let t = ui.render(w, h);
            assert_clean(&t);
            let _ = what;
        }
    };
    check(&mut ui, "approval");
    ui.approve();
    ui.settle().await;
    check(&mut ui, "task card");
    ui.say("and this one streams");
    ui.settle().await;
    ui.say("queued behind it");
    ui.say("/later 5m and this is scheduled");
    check(&mut ui, "streaming with a strip");
    ui.tab();
    check(&mut ui, "strip focused");
    ui.ch('x');
    check(&mut ui, "confirm");
    ui.press(KeyCode::Esc);
    ui.ch('e');
    check(&mut ui, "edit prompt");
    ui.press(KeyCode::Esc);
    ui.ch('r');
    ui.typ("10m");
    check(&mut ui, "reschedule prompt");
    ui.press(KeyCode::Esc);
    ui.press(KeyCode::Esc);
    ui.press(KeyCode::F(1));
    check(&mut ui, "help");
    ui.ch('q');
    ui.app.on_terminal(TermEvent::Paste("a\n".repeat(50)));
    check(&mut ui, "tall composer");
    ui.press(KeyCode::F(4));
    check(&mut ui, "no sidebar");
    gate.notify_one();
    ui.settle().await;
}

#[tokio::test(start_paused = true)]
async fn a_long_strip_keeps_its_header_and_the_selection_in_view() {
    let mut ui = Ui::new(vec![]);
    for i in 0..12 {
        ui.say(&format!("queued item {i}"));
    }
    let s = ui.screen(80, 24);
    assert!(s.contains("─ pending (12) Shift+Tab to manage"), "{s}");
    assert!(
        s.contains("queued item 0") && !s.contains("queued item 11"),
        "{s}"
    );
    ui.tab();
    for _ in 0..11 {
        ui.press(KeyCode::Down);
    }
    assert_eq!(ui.strip_sel(), Some(11));
    let s = ui.screen(80, 24);
    assert!(s.contains("─ pending (12)"), "the header stays:\n{s}");
    assert!(s.contains("› ⏳ queued · queued item 11"), "{s}");
    ui.ch('x');
    ui.enter();
    ui.pump();
    assert_eq!(ui.rows()[11].status, Status::Canceled);
    assert_eq!(
        ui.strip_sel(),
        Some(10),
        "the canceled item left; it was last, so the one before it is selected"
    );
    let s = ui.screen(80, 24);
    assert!(s.contains("─ pending (11)"), "the header stays:\n{s}");
    assert!(s.contains("› ⏳ queued · queued item 10"), "{s}");
    ui.press(KeyCode::Up);
    assert!(ui.screen(80, 24).contains("› ⏳ queued · queued item 9"));
}

#[tokio::test(start_paused = true)]
async fn changes_by_another_process_show_up() {
    let mut ui = Ui::new(vec![]);
    let conv = ui.conv();
    // The CLI, on the same database file.
    let cli = Store::open(&ui.h.dir.path().join("tock.db")).unwrap();
    let mut it = tock::store::NewItem::new(conv, Kind::Message, "sent from the CLI");
    it.due_at = Some(T0 + 600_000);
    cli.enqueue(&it, T0).unwrap();
    cli.rename_conversation(conv, "Renamed by the CLI", T0)
        .unwrap();
    let other = cli
        .create_conversation(Some("Made by the CLI"), "cli", T0)
        .unwrap();
    // What the database watcher reports.
    ui.app.on_engine(Event::External);
    let s = ui.screen(80, 24);
    assert!(
        s.contains("sent from the CLI") && s.contains("⏰ Mon 30 Nov 01:03"),
        "{s}"
    );
    assert!(
        s.contains("Renamed by the CLI") && s.contains("Made by the CLI"),
        "{s}"
    );
    assert!(s.contains("⏰1 scheduled"), "{s}");
    // The CLI deletes the conversation in view: another one is opened.
    cli.delete_conversation(conv, T0).unwrap();
    ui.app.on_engine(Event::External);
    assert_eq!(ui.conv(), other);
    assert!(!ui.screen(80, 24).contains("Renamed by the CLI"));
}

#[tokio::test(start_paused = true)]
async fn f3_shows_the_notification_history() {
    let mut ui = Ui::new(vec![Step::Fail(LlmError::permanent(
        "401 Unauthorized: bad key",
    ))]);
    ui.start().await;
    ui.say("hello");
    ui.settle().await;
    ui.press(KeyCode::F(3));
    assert!(ui.app.popup() == Some(ViewKind::Notices));
    let s = ui.screen(80, 24);
    assert!(s.contains("Notifications"), "{s}");
    assert!(s.contains("401 Unauthorized"), "{s}");
    ui.press(KeyCode::Char('q'));
    assert!(ui.app.popup().is_none());
    // A command typed at the popup closes it and reaches the composer whole,
    // so it runs as a command instead of going to the model as text.
    ui.press(KeyCode::F(3));
    ui.typ("/tools");
    assert!(ui.app.popup().is_none());
    assert_eq!(ui.app.composer_text(), "q/tools");
    // A notification about another conversation: chosen, Enter goes there.
    let first = ui.conv();
    ui.app.set_composer("");
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    ui.pump();
    assert_ne!(ui.conv(), first);
    ui.app.on_engine(Event::Notice(tock::engine::Notification {
        kind: tock::engine::NoticeKind::Info,
        conversation_id: None,
        text: "configuration reloaded".into(),
        elsewhere: false,
    }));
    ui.press(KeyCode::F(3));
    let s = ui.screen(80, 24);
    assert!(
        s.contains("› ") && s.contains("configuration reloaded"),
        "{s}"
    );
    assert!(
        s.contains("“Conversation 1” · failed: 401 Unauthorized: bad key"),
        "names its conversation: {s}"
    );
    // One that names its conversation is not told it twice.
    ui.press(KeyCode::Esc);
    ui.app.on_engine(Event::Notice(tock::engine::Notification {
        kind: tock::engine::NoticeKind::ReplyFinished,
        conversation_id: Some(first),
        text: "reply finished in “Conversation 1”".into(),
        elsewhere: false,
    }));
    ui.press(KeyCode::F(3));
    let s = ui.screen(120, 40);
    assert!(
        s.contains("› 00:53 reply finished in “Conversation 1”  "),
        "{s}"
    );
    ui.press(KeyCode::Down);
    ui.press(KeyCode::Down);
    snap!("notifications_chosen_120x40", ui.render(120, 40).backend());
    snap!("notifications_chosen_60x15", ui.render(60, 15).backend());
    ui.press(KeyCode::Enter);
    assert!(ui.app.popup().is_none());
    assert_eq!(
        ui.conv(),
        first,
        "Enter opened the failed message's conversation"
    );
}

/// A message sent at its time and a reply ring the terminal once per
/// conversation until it is opened again (a series every minute rang every
/// minute); a failure rings each time.
#[tokio::test(start_paused = true)]
async fn routine_notices_ring_once_per_conversation_until_it_is_opened() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.say("hello");
    ui.settle().await;
    let other = ui.conv();
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    ui.pump();
    let notice = |ui: &mut Ui, kind: tock::engine::NoticeKind| {
        ui.app.output.raw.clear();
        ui.app.on_engine(Event::Notice(tock::engine::Notification {
            kind,
            conversation_id: Some(other),
            text: "recurring message sent in “hello”".into(),
            elsewhere: false,
        }));
        ui.app.output.raw.iter().any(|r| r.contains('\x07'))
    };
    use tock::engine::NoticeKind::{Failed, Fired, ReplyFinished};
    assert!(notice(&mut ui, Fired), "the first rings");
    assert!(
        !notice(&mut ui, ReplyFinished),
        "its reply does not ring again"
    );
    assert!(!notice(&mut ui, Fired), "nor the next occurrence");
    assert!(notice(&mut ui, Failed), "a failure always rings");
    // Looked at, it rings again for what comes next.
    let here = ui.conv();
    ui.app.open(other);
    ui.app.open(here);
    assert!(notice(&mut ui, Fired));
    // Every notice is in F3 all the same.
    assert_eq!(ui.app.notices.len(), 5);
}

/// F2 covers the screen but the status bar: what its keys did, a refusal
/// with its reason too, is read under it.
#[tokio::test(start_paused = true)]
async fn f2_leaves_the_status_bar_to_say_why_a_key_was_refused() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.say("/later 1h water the plants");
    ui.settle().await;
    ui.press(KeyCode::F(2));
    ui.ch('R');
    ui.settle().await;
    assert_eq!(ui.app.top(), Some(ViewKind::Scheduled));
    let s = ui.screen(100, 30);
    let last = s.lines().last().unwrap_or_default();
    assert!(
        last.contains("#1 is still waiting to be sent; s sends it now"),
        "{s}"
    );
}

/// Reschedules a `/later 1h` item from F2 with what `f2_input` types into
/// its prompt, then schedules "second" from the Ctrl+T picker with what
/// `picker_input` types there: both must read as 2 h and 3 h from now.
async fn time_inputs_read_2h_and_3h(f2_input: impl Fn(&mut Ui), picker_input: impl Fn(&mut Ui)) {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    let t0 = ui.h.engine.now_ms();
    ui.say("/later 1h first");
    ui.settle().await;
    let id = ui.rows()[0].id;
    ui.press(KeyCode::F(2));
    ui.ch('r');
    f2_input(&mut ui);
    ui.enter();
    ui.settle().await;
    let due = ui.store().item(id).unwrap().unwrap().due_at.unwrap();
    assert!(
        (due - (t0 + 2 * 3_600_000)).abs() < 1_000,
        "rescheduled to about now+2h: {}",
        due - t0
    );
    ui.press(KeyCode::Esc);
    ui.typ("second");
    ui.ctrl('t');
    picker_input(&mut ui);
    ui.enter();
    ui.settle().await;
    let second = ui
        .rows()
        .into_iter()
        .find(|r| r.text == "second")
        .expect("scheduled from the picker");
    let due = second.due_at.unwrap();
    assert!(
        (due - (t0 + 3 * 3_600_000)).abs() < 1_000,
        "picked about now+3h: {}",
        due - t0
    );
}

/// Ctrl+T schedules messages, never commands: `/rename Foo` is refused as
/// Enter would refuse to send it, and `//` sends a literal slash later too.
#[tokio::test(start_paused = true)]
async fn ctrl_t_refuses_a_command_and_unescapes_a_literal_slash() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.typ("/rename Foo");
    ui.ctrl('t');
    assert_eq!(ui.app.top(), None, "no picker for a command");
    let (msg, is_err) = ui.app.status_pair();
    assert!(
        is_err && msg.contains("a command is not sent later"),
        "{msg}"
    );
    assert_eq!(ui.app.composer_text(), "/rename Foo", "the text stays");
    ui.app.set_composer("");
    ui.typ("//etc/hosts is the file");
    ui.ctrl('t');
    assert_eq!(ui.app.top(), Some(ViewKind::Picker));
    ui.ch('1');
    ui.enter();
    ui.pump();
    let rows = ui.rows();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].text, "/etc/hosts is the file");
    assert!(rows[0].due_at.is_some());
}

/// More than ten years ahead is refused by every time input as you type,
/// as sending would refuse it (the previews said "sends Sun 2 May 2038").
#[tokio::test(start_paused = true)]
async fn every_time_input_refuses_more_than_ten_years_ahead_as_you_type() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.typ("/later 99999h check");
    let preview = ui.app.composer_preview();
    assert_eq!(
        preview,
        Some(Err("too far ahead (more than 10 years)".into())),
        "{preview:?}"
    );
    ui.app.set_composer("");
    ui.typ("check the build");
    ui.ctrl('t');
    ui.ch('5');
    ui.typ("99999h");
    let s = ui.screen(60, 15);
    assert!(s.contains("too far ahead (more than 10 years)"), "{s}");
    ui.enter();
    assert_eq!(ui.app.top(), Some(ViewKind::Picker), "the picker stays");
    assert!(ui.rows().is_empty(), "nothing scheduled");
    ui.press(KeyCode::Esc);
    ui.press(KeyCode::Esc);
    assert_eq!(ui.app.composer_text(), "check the build");
}

#[tokio::test(start_paused = true)]
async fn pastes_reach_the_f2_prompt_and_the_time_picker() {
    time_inputs_read_2h_and_3h(
        |ui| {
            ui.app.on_terminal(TermEvent::Paste("2h".into()));
        },
        |ui| {
            ui.app.on_terminal(TermEvent::Paste("in 3h".into()));
        },
    )
    .await;
}

/// Ctrl+U kills to the start of the line in the time prompts too, as in the
/// composer (the textarea alone made it an undo: one character went).
#[tokio::test(start_paused = true)]
async fn ctrl_u_clears_the_f2_time_prompt_and_the_picker_input() {
    time_inputs_read_2h_and_3h(
        |ui| {
            ui.typ("abc def");
            ui.ctrl('u');
            ui.typ("2h");
        },
        |ui| {
            ui.ch('5'); // "custom…"
            ui.typ("xyz");
            ui.ctrl('u');
            ui.typ("in 3h");
        },
    )
    .await;
}

/// A provider whose server lists `fake-1` and `fake-2`, `delay` after it is
/// asked (tokio's clock); replies come from a script.
struct LateList {
    delay: std::time::Duration,
    replies: Arc<Scripted>,
}

impl Provider for LateList {
    fn name(&self) -> &'static str {
        "openai"
    }
    fn start<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<EventStream, LlmError>> {
        self.replies.start(req)
    }
    fn list_models(&self) -> BoxFuture<'_, Result<Vec<tock::llm::ModelInfo>, LlmError>> {
        Box::pin(async move {
            tokio::time::sleep(self.delay).await;
            Ok(["fake-1", "fake-2"]
                .map(|id| tock::llm::ModelInfo {
                    id: id.into(),
                    display_name: None,
                })
                .to_vec())
        })
    }
}

/// A TUI whose default model is entry `x`, an OpenAI-style server at
/// `base_url` (a name of its own: the model lists are cached per server for
/// the process) that lists its models `delay` after it is asked.
fn late_list_ui(base_url: &str, delay: std::time::Duration) -> Ui {
    init_env();
    let mut cfg = Config::default();
    cfg.models.insert(
        "x".into(),
        tock::config::ModelConfig {
            provider: tock::llm::ProviderKind::Openai,
            model: Some("gpt-4o".into()),
            base_url: Some(base_url.into()),
            api_key: Some("sk-x".into()),
            api_key_env: None,
            api_key_cmd: None,
            vision: false,
            timeout_secs: None,
            stream_timeout_secs: None,
            price_in: None,
            price_out: None,
            price_cached: None,
            context_tokens: None,
        },
    );
    cfg.default_model = Some("x".into());
    let replies = Scripted::new(vec![]);
    let provider = Arc::new(LateList {
        delay,
        replies: replies.clone(),
    });
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("tock.db")).unwrap();
    let clock = Arc::new(ManualClock::new(T0));
    let config = Arc::new(ConfigSource::from_config(cfg).with_provider(provider));
    let engine = Engine::new(store, config, clock.clone(), options());
    Ui::on(Harness {
        engine,
        clock,
        provider: replies,
        dir,
    })
}

/// Until the command that waited for the model list has run again.
async fn list_arrives(ui: &mut Ui) {
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    ui.settle().await;
    ui.app.on_tick();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    ui.settle().await;
}

/// `/model fake-2` and `/with fake-2 …` in a TUI just started, before the
/// server's list is in: they wait for it and give the answer they give a
/// moment later, not "unknown model".
#[tokio::test(start_paused = true)]
async fn a_bare_id_the_server_lists_is_found_before_its_list_is_in() {
    let mut ui = late_list_ui(
        "http://late-list.invalid/v1",
        std::time::Duration::from_secs(2),
    );
    ui.start().await;
    ui.say("/model fake-2");
    let asked = ui.status_line();
    assert!(
        asked.contains("asking the server for its models"),
        "{asked}"
    );
    assert_eq!(ui.app.composer_text(), "/model fake-2");
    list_arrives(&mut ui).await;
    let said = ui.status_line();
    assert!(
        said.contains("model for this conversation: x/fake-2"),
        "{said}"
    );
    assert_eq!(ui.app.composer_text(), "");
    let conv = ui.store().conversation(ui.conv()).unwrap().unwrap();
    assert_eq!(conv.model.as_deref(), Some("x/fake-2"));

    let mut ui = late_list_ui(
        "http://late-list-with.invalid/v1",
        std::time::Duration::from_secs(2),
    );
    ui.start().await;
    ui.say("/with fake-1 hello");
    assert!(
        ui.status_line()
            .contains("asking the server for its models"),
        "{}",
        ui.status_line()
    );
    list_arrives(&mut ui).await;
    assert!(
        !ui.status_line().contains("unknown model"),
        "{}",
        ui.status_line()
    );
    assert_eq!(ui.user_texts(), vec!["hello".to_string()]);
    assert_eq!(ui.app.composer_text(), "");
}

/// A list that does not come: after the wait, the answer without it.
#[tokio::test(start_paused = true)]
async fn a_model_list_that_does_not_come_ends_the_wait_with_the_error() {
    let mut ui = late_list_ui(
        "http://never-lists.invalid/v1",
        std::time::Duration::from_secs(3600),
    );
    ui.start().await;
    ui.say("/model fake-2");
    assert!(
        ui.status_line()
            .contains("asking the server for its models")
    );
    // Not yet: the wait goes on.
    ui.h.clock.jump(1_000);
    ui.app.on_tick();
    assert!(
        ui.status_line()
            .contains("asking the server for its models")
    );
    ui.h.clock.jump(5_000);
    ui.app.on_tick();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    let said = ui.status_line();
    assert!(said.contains("unknown model \"fake-2\""), "{said}");
    assert!(!said.contains("asking"), "{said}");
    assert_eq!(ui.app.composer_text(), "/model fake-2");
}

/// `/model` alone in a TUI just started opens the picker at once: it
/// offers what is configured, says the server's list is on its way, takes
/// the list in when it comes, filters as you type, and Enter makes the
/// chosen id the conversation's model (as `/model ID` would).
#[tokio::test(start_paused = true)]
async fn the_model_picker_takes_the_servers_list_in_and_chooses_by_filter() {
    let mut ui = late_list_ui(
        "http://late-list-picker.invalid/v1",
        std::time::Duration::from_secs(2),
    );
    ui.start().await;
    ui.say("/model");
    assert_eq!(ui.app.top(), Some(ViewKind::ModelPicker));
    assert_eq!(ui.app.composer_text(), "");
    let s = ui.screen(100, 30);
    assert!(s.contains("asking the servers for their models"), "{s}");
    assert!(s.contains("current · openai gpt-4o"), "{s}");
    assert!(!s.contains("fake-1"), "{s}");
    snap!("model_picker_asking_100x30", ui.render(100, 30).backend());
    // The list comes in while the picker is open: a tick takes it.
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    ui.settle().await;
    ui.app.on_tick();
    let s = ui.screen(100, 30);
    assert!(s.contains("fake-1") && s.contains("fake-2"), "{s}");
    assert!(!s.contains("asking the servers"), "{s}");
    assert!(s.contains("listed by its server"), "{s}");
    snap!("model_picker_listed_100x30", ui.render(100, 30).backend());
    ui.typ("ke-2");
    let s = ui.screen(100, 30);
    assert!(s.contains("› fake-2") && !s.contains("fake-1"), "{s}");
    snap!("model_picker_filtered_60x15", ui.render(60, 15).backend());
    ui.enter();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    ui.settle().await;
    assert_eq!(ui.app.top(), None);
    let conv = ui.store().conversation(ui.conv()).unwrap().unwrap();
    assert_eq!(conv.model.as_deref(), Some("x/fake-2"));
    assert!(
        ui.status_line()
            .contains("model for this conversation: x/fake-2"),
        "{}",
        ui.status_line()
    );
    // Open again: the id chosen is marked as the one in use, and chosen.
    ui.say("/model");
    let s = ui.screen(100, 30);
    assert!(
        s.contains("› fake-2  current · listed by its server"),
        "{s}"
    );
    ui.press(KeyCode::Esc);
    // Letters no list has: said, and Enter takes them as the name, as
    // `/model NAME` would (here: a name nothing knows).
    ui.say("/model");
    ui.typ("zzz");
    assert!(
        ui.screen(80, 24)
            .contains("no model listed has these letters")
    );
    ui.enter();
    assert_eq!(ui.app.top(), None);
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    let (said, error) = ui.app.status_pair();
    assert!(error && said.contains("unknown model \"zzz\""), "{said}");
    ui.app.set_composer("");
    // On echo, the default and its server's ids are still offered (they
    // were gone, and only `/model NAME` typed in full led back).
    ui.say("/model echo");
    ui.say("/model");
    let s = ui.screen(100, 30);
    assert!(
        s.lines()
            .any(|l| l.contains("› echo") && l.contains("current · offline")),
        "{s}"
    );
    assert!(
        s.contains("  x ") && s.contains("x/fake-1") && s.contains("x/fake-2"),
        "{s}"
    );
    assert_eq!(s.matches("fake-1").count(), 1, "each model once: {s}");
}

/// Esc on a message the model has not taken yet ("sending…"): it is no
/// failure. With the composer empty the message comes back into it, as
/// Claude Code and codex give a stopped prompt back; with a draft there it
/// waits, paused, in the strip, and Enter there sends it.
#[tokio::test(start_paused = true)]
async fn esc_before_the_model_takes_a_message_gives_it_back_not_a_failure() {
    let (mut ui, gate) = Ui::slow_to_accept().await;
    ui.say("esc while sending");
    ui.settle().await;
    let item = ui.rows()[0].clone();
    assert_eq!(item.status, Status::Sending);
    ui.press(KeyCode::Esc);
    ui.settle().await;
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    ui.settle().await;
    assert_eq!(ui.app.composer_text(), "esc while sending");
    let said = ui.status_line();
    assert!(
        said.contains("stopped before it was sent: your message is back in the composer"),
        "{said}"
    );
    assert_ne!(ui.row(item.id).status, Status::Failed);
    assert!(ui.rows().iter().all(|r| r.status != Status::Pending));
    assert!(
        ui.app.notices.iter().all(|n| !n.text.contains("failed")),
        "no failure notice"
    );
    let s = ui.screen(80, 24);
    assert!(!s.contains("failed") && !s.contains("sending…"), "{s}");
    assert!(ui.user_texts().is_empty());
    // Enter sends it again, as typed.
    ui.enter();
    ui.settle().await;
    gate.notify_one();
    ui.settle().await;
    assert_eq!(ui.user_texts(), vec!["esc while sending".to_string()]);

    // With a draft in the composer the message is held, paused, instead.
    let (mut ui, gate) = Ui::slow_to_accept().await;
    ui.say("second try");
    ui.settle().await;
    let item = ui.rows()[0].clone();
    ui.typ("a draft");
    ui.press(KeyCode::Esc);
    ui.settle().await;
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    ui.settle().await;
    assert_eq!(ui.app.composer_text(), "a draft");
    assert_eq!(ui.row(item.id).status, Status::Pending);
    let s = ui.screen(100, 24);
    assert!(s.contains("paused") && s.contains("second try"), "{s}");
    assert!(!s.contains("failed"), "{s}");
    assert!(ui.app.notices.iter().all(|n| !n.text.contains("failed")));
    // Not sent behind the user's back.
    tokio::time::advance(std::time::Duration::from_secs(60)).await;
    ui.settle().await;
    assert_eq!(ui.row(item.id).status, Status::Pending);
    ui.erase("a draft".len());
    ui.say("/resume");
    ui.settle().await;
    gate.notify_one();
    ui.settle().await;
    assert_eq!(ui.row(item.id).status, Status::Sent);
    assert_eq!(ui.user_texts(), vec!["second try".to_string()]);
}
