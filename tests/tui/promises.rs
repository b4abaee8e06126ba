//! The behaviours a user relies on: keys act on what is selected, drafts survive, a stop pauses the queue.

use super::*;

#[tokio::test(start_paused = true)]
async fn a_key_acts_on_the_item_selected_not_the_row_that_slid_into_its_place() {
    let (gate_a, gate_b) = (
        Arc::new(tokio::sync::Notify::new()),
        Arc::new(tokio::sync::Notify::new()),
    );
    let mut ui = Ui::new(vec![
        Step::Hold(vec![text("A…")], gate_a.clone()),
        Step::Hold(vec![text("B…")], gate_b.clone()),
        Step::Reply(vec![text("C!"), done()]),
    ]);
    ui.start().await;
    ui.say("/later 1h D scheduled for later");
    ui.say("A");
    ui.settle().await;
    ui.say("B");
    ui.say("C");
    ui.settle().await;
    // The strip: B, C, D. The cursor goes to C (the second row).
    ui.tab();
    ui.press(KeyCode::Down);
    let c = ui.rows().into_iter().find(|r| r.text == "C").unwrap();
    let d = ui
        .rows()
        .into_iter()
        .find(|r| r.text.starts_with("D"))
        .unwrap();
    assert_eq!(ui.app.strip.selected, Some(c.id));
    // A finishes, B leaves the strip (sending): rows slide up, the cursor stays on C.
    gate_a.notify_one();
    ui.settle().await;
    assert_eq!(ui.app.strip.selected, Some(c.id));
    assert!(
        ui.screen(100, 24).contains("› ⏳ queued · C"),
        "{}",
        ui.screen(100, 24)
    );
    ui.ch('s');
    ui.pump();
    assert_eq!(ui.row(c.id).priority, 1, "C was the one sent first");
    assert_eq!(ui.row(d.id).due_at, d.due_at, "nothing scheduled moved");
    gate_b.notify_one();
    ui.settle().await;
    assert_eq!(ui.row(c.id).status, Status::Sent);
    assert_eq!(
        ui.row(d.id).status,
        Status::Pending,
        "D still waits for its time"
    );
    // An action on an item that changed since it was shown is refused.
    let stale = ui.row(d.id).updated_at;
    ui.h.engine.edit(d.id, "D changed elsewhere").unwrap();
    let r =
        ui.h.engine
            .act_on_item(d.id, stale, tock::engine::ItemAction::SendNow);
    assert!(r.is_err_and(|e| e.to_string().contains("changed since it was shown")));
    assert_eq!(ui.row(d.id).priority, 0);
    // So is a cancel of the text as it was shown, once edited...
    let r = ui.h.engine.act_on_item(
        d.id,
        stale,
        tock::engine::ItemAction::Cancel {
            text: d.text.clone(),
        },
    );
    assert!(r.is_err_and(|e| e.to_string().contains("changed since it was shown")));
    // ...but not over an attempt that left it waiting, its text as shown
    // (the question was dropped as "changed (now retrying)" while it
    // retried before and after).
    let shown = ui.row(d.id);
    let store = ui.store().clone();
    let now = ui.h.engine.now_ms();
    assert!(store.claim(d.id, "another tock", now).unwrap());
    assert!(
        store
            .release_for_retry(d.id, "another tock", "503", now + 8_000, now + 1)
            .unwrap()
    );
    assert_ne!(ui.row(d.id).updated_at, shown.updated_at);
    ui.h.engine
        .act_on_item(
            d.id,
            shown.updated_at,
            tock::engine::ItemAction::Cancel { text: shown.text },
        )
        .unwrap();
    assert_eq!(ui.row(d.id).status, Status::Canceled);
}

#[tokio::test(start_paused = true)]
async fn drafts_are_per_conversation_and_survive_a_restart() {
    let mut ui = Ui::new(vec![]);
    let first = ui.conv();
    ui.typ("draft meant for the first");
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    let second = ui.conv();
    assert_ne!(first, second);
    assert_eq!(
        ui.app.composer_text(),
        "",
        "the other conversation has its own draft"
    );
    ui.typ("second draft");
    ui.key(KeyCode::Down, KeyModifiers::ALT);
    assert_eq!(ui.conv(), first);
    assert_eq!(ui.app.composer_text(), "draft meant for the first");
    // Saved as you type (debounced), not only on a switch.
    ui.typ(" and more");
    tokio::time::advance(std::time::Duration::from_millis(400)).await;
    ui.app.on_tick();
    assert_eq!(
        ui.store().draft(first).unwrap().text,
        "draft meant for the first and more"
    );
    assert_eq!(ui.store().draft(second).unwrap().text, "second draft");
    // A new app on the same database (a restart, or after a crash): the draft is back.
    let app = App::new(ui.h.engine.clone()).unwrap();
    assert_eq!(app.model.current, Some(first));
    assert_eq!(app.composer_text(), "draft meant for the first and more");
    // Sending clears the draft in the same transaction.
    ui.enter();
    assert_eq!(ui.store().draft(first).unwrap().text, "");
}

#[tokio::test(start_paused = true)]
async fn pulling_an_item_back_never_overwrites_a_draft() {
    let mut ui = Ui::new(vec![]);
    ui.say("do 30 minutes of reading");
    let id = ui.rows()[0].id;
    ui.typ("my precious draft");
    ui.key(KeyCode::BackTab, KeyModifiers::SHIFT);
    ui.ch('u');
    assert_eq!(ui.app.composer_text(), "my precious draft");
    assert_eq!(
        ui.row(id).status,
        Status::Pending,
        "refused: the item stays queued"
    );
    assert!(
        ui.status_line().contains("holds a draft"),
        "{}",
        ui.status_line()
    );
    // With an empty composer it comes back, and is the draft in the database at once.
    ui.app.composer.clear(0);
    assert_eq!(ui.app.focus, Focus::Strip);
    ui.ch('u');
    assert_eq!(ui.app.composer_text(), "do 30 minutes of reading");
    assert_eq!(ui.row(id).status, Status::Canceled);
    assert_eq!(
        ui.store().draft(ui.conv()).unwrap().text,
        "do 30 minutes of reading"
    );
}

/// Two tocks on one conversation: one saved a draft; in the other, whose
/// composer was empty, a key typed and erased saved an empty draft that
/// removed it (a crash of the first then lost it). An empty composer no
/// longer removes a draft it has not seen, and shows it instead.
#[tokio::test(start_paused = true)]
async fn an_empty_composer_does_not_remove_a_draft_another_tock_saved() {
    let mut ui = Ui::new(vec![]);
    let conv = ui.conv();
    // Written by the other tock, after this one loaded the (empty) draft.
    let theirs = tock::store::Draft {
        text: "draft typed in the other window".into(),
        ..Default::default()
    };
    ui.store().save_draft(conv, &theirs, T0).unwrap();
    ui.typ("y");
    ui.press(KeyCode::Backspace);
    ui.app.save_draft();
    // The save runs on the writer thread: its result, however busy the machine.
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    ui.pump();
    assert_eq!(ui.store().draft(conv).unwrap().text, theirs.text, "kept");
    assert_eq!(ui.app.composer_text(), theirs.text, "and shown here");
    // Its own draft, once saved, it still empties as before.
    ui.press(KeyCode::End);
    ui.typ(" and more");
    ui.app.save_draft();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    ui.pump();
    ui.app.composer.clear(0);
    ui.app.save_draft();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    ui.pump();
    assert_eq!(ui.store().draft(conv).unwrap().text, "");
}

/// A reply streaming and held there (until the gate is opened), its
/// question "slow-story"; the next reply is "pong".
async fn streaming_a_held_reply() -> (Ui, Arc<tokio::sync::Notify>) {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![
        Step::Hold(vec![text("Once upon a time")], gate.clone()),
        Step::Reply(vec![text("pong"), done()]),
    ]);
    ui.start().await;
    ui.say("slow-story");
    ui.settle().await;
    (ui, gate)
}

/// Emoji a terminal measures otherwise than ratatui (`⚠️` one column in
/// tmux, two for ratatui; `👍🏽` four against two) are drawn without what
/// makes them differ; the stored reply keeps it.
#[tokio::test(start_paused = true)]
async fn emoji_modifiers_are_not_drawn_but_kept() {
    let reply = "\u{26A0}\u{FE0F} careful \u{1F44D}\u{1F3FD} done";
    let mut ui = Ui::new(vec![Step::Reply(vec![text(reply), done()])]);
    ui.start().await;
    ui.say("hi");
    ui.settle().await;
    let s = ui.screen(80, 24);
    assert!(s.contains("\u{26A0} careful \u{1F44D} done"), "{s}");
    assert!(!s.contains('\u{FE0F}') && !s.contains('\u{1F3FD}'), "{s}");
    let conv = ui.conv();
    let stored = ui.store().messages(conv).unwrap();
    assert_eq!(stored.last().unwrap().content, reply);
}

/// A burst of queued messages (a paste sent line by line) is canceled in
/// one go from the strip: X asks, y cancels what was queued; what is
/// scheduled stays, and a stop's pause with nothing left to hold is lifted.
#[tokio::test(start_paused = true)]
async fn x_in_the_strip_cancels_everything_queued_after_asking() {
    let (mut ui, _gate) = streaming_a_held_reply().await;
    for i in 0..3 {
        ui.say(&format!("line {i}"));
    }
    ui.say("/later 1h stays scheduled");
    ui.press(KeyCode::Esc);
    ui.settle().await;
    assert!(ui.app.model.paused());
    ui.tab();
    assert_eq!(ui.app.focus, Focus::Strip);
    assert!(
        ui.screen(120, 40).contains("X cancel all"),
        "{}",
        ui.screen(120, 40)
    );
    ui.ch('X');
    let s = ui.screen(100, 30);
    assert!(s.contains("Cancel all 3 messages queued here?"), "{s}");
    ui.enter();
    ui.pump();
    let open: Vec<String> = ui
        .rows()
        .into_iter()
        .filter(|r| r.status == Status::Pending)
        .map(|r| r.text)
        .collect();
    assert_eq!(open, vec!["stays scheduled"]);
    assert_eq!(ui.status_line(), "canceled 3 queued messages");
    assert!(!ui.app.model.paused(), "nothing left to hold");
    // What is left is chosen: its keys act on it at once.
    assert_eq!(ui.app.focus, Focus::Strip);
    ui.ch('x');
    assert!(
        ui.screen(100, 30).contains("Cancel “stays scheduled”?"),
        "{}",
        ui.screen(100, 30)
    );
    ui.press(KeyCode::Esc);
    // Nothing queued: X says so.
    assert_eq!(
        ui.app.focus,
        Focus::Strip,
        "the strip still shows the scheduled one"
    );
    ui.ch('X');
    assert_eq!(ui.status_line(), "nothing is queued here");
}

/// F2 open while a conversation is renamed (here, or by another process):
/// its rows show the new title.
#[tokio::test(start_paused = true)]
async fn f2_follows_a_conversation_renamed_while_it_is_open() {
    let mut ui = Ui::new(vec![]);
    let conv = ui.conv();
    ui.say("/rename Before");
    ui.say("/every day at 9am water the plants");
    ui.say("/later 1h one-off");
    ui.press(KeyCode::F(2));
    let s = ui.screen(120, 30);
    assert!(s.contains("Before"), "{s}");
    ui.h.engine.rename_conversation(conv, "After").unwrap();
    ui.pump();
    let s = ui.screen(120, 30);
    assert!(s.contains("After") && !s.contains("Before"), "{s}");
    // Renamed by another process: told by the database watch.
    ui.store()
        .rename_conversation(conv, "Elsewhere", T0)
        .unwrap();
    ui.app.on_engine(Event::External);
    let s = ui.screen(120, 30);
    assert!(s.contains("Elsewhere") && !s.contains("After"), "{s}");
}

/// Nothing queued behind the stopped reply: nothing to hold, so no pause
/// ("pending (0) ⏸ paused" stayed on screen with nothing in it).
#[tokio::test(start_paused = true)]
async fn esc_with_nothing_queued_stops_without_a_pause() {
    let (mut ui, _gate) = streaming_a_held_reply().await;
    ui.press(KeyCode::Esc);
    ui.settle().await;
    let (msg, _) = ui.app.status_pair();
    assert_eq!(msg, "stopped; Ctrl+R retries the reply");
    let conv = ui.conv();
    assert!(
        ui.store()
            .conversation(conv)
            .unwrap()
            .unwrap()
            .queue_paused_at
            .is_none()
    );
    let s = ui.screen(100, 30);
    assert!(!s.contains("pending (0)") && !s.contains("paused"), "{s}");
    // The next message goes at once.
    ui.say("ping");
    ui.settle().await;
    assert_eq!(ui.user_texts(), vec!["slow-story", "ping"]);
}

#[tokio::test(start_paused = true)]
async fn esc_stops_the_reply_and_pauses_the_queue_until_resumed() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![
        Step::Hold(vec![text("Once upon a time")], gate.clone()),
        Step::Reply(vec![text("the story, again"), done()]),
        Step::Reply(vec![text("pong"), done()]),
    ]);
    ui.start().await;
    ui.say("slow-story");
    ui.settle().await;
    ui.say("ping after esc");
    ui.press(KeyCode::Esc);
    ui.settle().await;
    let queued = ui
        .rows()
        .into_iter()
        .find(|r| r.text == "ping after esc")
        .unwrap();
    assert_eq!(
        ui.row(queued.id).status,
        Status::Pending,
        "the follow-up waits"
    );
    // Unfocused, the strip says how to reach its keys, also at 60 columns.
    let s = ui.screen(100, 30);
    assert!(
        s.contains("paused after stop — Shift+Tab, Enter resumes"),
        "{s}"
    );
    snap!("paused_queue_100x30", s);
    ui.app.sidebar_pref = Some(false);
    let narrow = ui.screen(60, 15);
    ui.app.sidebar_pref = Some(true);
    assert!(
        narrow.contains("paused after stop — Shift+Tab, Enter resumes"),
        "{narrow}"
    );
    ui.tab();
    let s = ui.screen(100, 30);
    assert!(s.contains("paused after stop — Enter or s resumes"), "{s}");
    ui.press(KeyCode::Esc);
    // Ctrl+R regenerates the stopped reply (and resumes): the story first, then the ping.
    ui.ctrl('r');
    ui.settle().await;
    let replies: Vec<String> = ui
        .messages()
        .into_iter()
        .filter(|m| m.role == Role::Assistant && m.status == MessageStatus::Complete)
        .map(|m| m.content)
        .collect();
    assert_eq!(replies, vec!["the story, again", "pong"]);
    assert_eq!(ui.row(queued.id).status, Status::Sent);
}

/// "the queue is paused (… /resume)" goes once the queue is resumed
/// elsewhere (another tock, the CLI): it stood after the queue had gone on.
#[tokio::test(start_paused = true)]
async fn the_line_saying_the_queue_is_paused_goes_when_it_is_resumed_elsewhere() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![
        Step::Hold(vec![text("Once upon a time")], gate.clone()),
        Step::Hold(vec![text("pong")], gate.clone()),
    ]);
    ui.start().await;
    ui.say("slow-story");
    ui.settle().await;
    ui.say("ping after esc");
    ui.press(KeyCode::Esc);
    ui.settle().await;
    assert!(
        ui.status_line().contains("the queue is paused"),
        "{}",
        ui.status_line()
    );
    let conv = ui.conv();
    assert!(ui.h.engine.resume_queue(conv).unwrap());
    ui.settle().await;
    assert!(
        !ui.status_line().contains("the queue is paused"),
        "{}",
        ui.status_line()
    );
}

/// "queue resumed" goes once the queue is paused again, by a stop from
/// elsewhere (`tock stop`, another tock): it stood beside the strip's pause.
#[tokio::test(start_paused = true)]
async fn the_line_saying_the_queue_resumed_goes_when_it_is_paused_again() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![
        Step::Hold(vec![text("Once upon a time")], gate.clone()),
        Step::Hold(vec![text("pong")], gate.clone()),
    ]);
    ui.start().await;
    ui.say("slow-story");
    ui.settle().await;
    ui.say("ping after esc");
    ui.press(KeyCode::Esc);
    ui.settle().await;
    ui.say("/resume");
    ui.settle().await;
    assert!(
        ui.status_line().contains("queue resumed"),
        "{}",
        ui.status_line()
    );
    // Its reply streams, another message waits behind it (sent from the
    // CLI: no key here), and a stop from elsewhere pauses the queue again.
    let conv = ui.conv();
    ui.h.engine.send_text(conv, "from the cli").unwrap();
    ui.settle().await;
    assert!(ui.status_line().contains("queue resumed"));
    assert!(ui.h.engine.stop(conv));
    ui.h.engine.pause_after_stop(conv);
    ui.settle().await;
    assert!(ui.app.model.paused());
    assert!(
        !ui.status_line().contains("queue resumed"),
        "{}",
        ui.status_line()
    );
}

/// A pause holds what was queued; cancelling the last of it (or taking it
/// back into the composer) leaves nothing to hold, and the pause goes.
#[tokio::test(start_paused = true)]
async fn cancelling_the_last_held_item_lifts_the_pause() {
    for last_back_to_composer in [false, true] {
        let gate = Arc::new(tokio::sync::Notify::new());
        let mut ui = Ui::new(vec![Step::Hold(vec![text("…")], gate)]);
        ui.start().await;
        ui.say("slow");
        ui.settle().await;
        ui.say("first held");
        ui.say("second held");
        ui.press(KeyCode::Esc);
        ui.settle().await;
        let paused = |ui: &Ui| {
            ui.store()
                .conversation(ui.conv())
                .unwrap()
                .unwrap()
                .queue_paused_at
                .is_some()
        };
        assert!(paused(&ui));
        ui.tab();
        ui.ch('x');
        ui.enter();
        ui.settle().await;
        assert!(paused(&ui), "one item is still held");
        ui.press(KeyCode::Down);
        if last_back_to_composer {
            ui.ch('u');
            ui.settle().await;
            assert_eq!(ui.app.composer_text(), "second held");
        } else {
            ui.ch('x');
            ui.enter();
            ui.settle().await;
        }
        assert!(
            !paused(&ui),
            "nothing is held (back to composer: {last_back_to_composer})"
        );
        let s = ui.screen(100, 30);
        assert!(!s.contains("paused"), "{s}");
    }
}

#[tokio::test(start_paused = true)]
async fn enter_in_the_strip_resumes_a_paused_queue() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![
        Step::Hold(vec![text("…")], gate),
        Step::Reply(vec![text("pong"), done()]),
    ]);
    ui.start().await;
    ui.say("slow");
    ui.settle().await;
    ui.say("next");
    ui.press(KeyCode::Esc);
    ui.settle().await;
    assert!(
        ui.store()
            .conversation(ui.conv())
            .unwrap()
            .unwrap()
            .queue_paused_at
            .is_some()
    );
    ui.tab();
    ui.enter();
    ui.settle().await;
    assert!(
        ui.store()
            .conversation(ui.conv())
            .unwrap()
            .unwrap()
            .queue_paused_at
            .is_none()
    );
    assert!(ui.user_texts().contains(&"next".to_string()));
}

#[tokio::test(start_paused = true)]
async fn your_own_message_is_shown_verbatim() {
    let mut ui = Ui::new(vec![Step::Reply(vec![text("**bold** reply"), done()])]);
    ui.start().await;
    let msg = "Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\n    main()\nZeroDivisionError: division by zero\nwhy does my __init__ fail with *args and 2*3*4?";
    ui.app.set_composer(msg);
    ui.enter();
    ui.settle().await;
    let s = ui.screen(120, 40);
    assert!(
        s.contains("why does my __init__ fail with *args and 2*3*4?"),
        "{s}"
    );
    assert!(
        s.contains("    main()"),
        "indentation and line breaks kept:\n{s}"
    );
    assert!(
        s.contains("bold reply") && !s.contains("**bold**"),
        "replies are Markdown:\n{s}"
    );
    snap!("verbatim_user_message_120x40", s);
    ui.app.sidebar_pref = None;
    snap!("verbatim_user_message_60x15", ui.screen(60, 15));
    // A long paste is folded, and Ctrl+O shows it whole.
    let long: String = (0..60).map(|i| format!("line {i}\n")).collect();
    ui.app.set_composer(&long);
    ui.enter();
    ui.settle().await;
    let s = ui.screen(120, 40);
    // 60 lines (the last line break ends the text), 12 shown: 48 more.
    assert!(s.contains("⋯ 48 more lines (Ctrl+O unfolds)"), "{s}");
    // Lines of the text, not rows of the screen: 30 lines of 100
    // characters take 60 rows at 60 columns, and 24 lines are hidden.
    let wide_lines: String = (0..30)
        .map(|i| format!("{i:02}{}\n", "x".repeat(98)))
        .collect();
    ui.app.set_composer(&wide_lines);
    ui.enter();
    ui.settle().await;
    ui.app.sidebar_pref = Some(false);
    let narrow = ui.screen(60, 40);
    assert!(narrow.contains("⋯ 24 more lines"), "{narrow}");
    ui.app.sidebar_pref = None;
    ui.ctrl('o');
    ui.key(KeyCode::Home, KeyModifiers::CONTROL);
    assert!(!ui.screen(120, 200).contains("more lines"));
}

#[tokio::test(start_paused = true)]
async fn narrow_windows_hide_the_sidebar_and_cap_the_strip() {
    let mut ui = Ui::new(vec![]);
    ui.app.sidebar_pref = None;
    for i in 0..9 {
        ui.say(&format!("/later {}m item number {i}", i + 1));
    }
    let s = ui.screen(60, 15);
    snap!("narrow_60x15", s);
    assert!(
        !s.contains("Conversations"),
        "no sidebar under 100 columns:\n{s}"
    );
    assert!(s.contains("more (F2 lists all)"), "{s}");
    assert!(
        s.contains("item number 0"),
        "each item shows its text:\n{s}"
    );
    // The chat keeps at least 6 rows: status 1, composer 3, strip at most 5.
    let strip_rows = s
        .lines()
        .filter(|l| l.contains("item number") || l.contains("pending (") || l.contains("more ("))
        .count();
    assert!(strip_rows <= 5, "{s}");
    snap!("wide_120x40", ui.screen(120, 40));
}

#[tokio::test(start_paused = true)]
async fn the_composer_soft_wraps_and_grows() {
    let mut ui = Ui::new(vec![]);
    let words: Vec<String> = (0..80).map(|i| format!("w{i}")).collect();
    ui.typ(&words.join(" "));
    let s = ui.screen(100, 30);
    assert!(
        s.contains("w0 w1") && s.contains("w79"),
        "the whole paragraph is visible:\n{s}"
    );
    // Up to a third of the screen, then it scrolls (the cursor stays in view).
    let long: String = (0..40).map(|i| format!("row {i}\n")).collect();
    ui.app.set_composer(&long);
    let s = ui.screen(100, 30);
    let composer_rows = s.lines().filter(|l| l.contains("│row ")).count();
    assert!(composer_rows <= 8, "{composer_rows} rows:\n{s}");
}

#[tokio::test(start_paused = true)]
async fn a_failing_api_key_cmd_is_not_run_per_frame_nor_again_at_once() {
    init_env();
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("runs");
    let mut cfg = Config::default();
    let toml = format!(
        "default_model = \"m\"\n[models.m]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9\"\napi_key_cmd = \"echo run >> {}; exit 1\"\n",
        count.display()
    );
    cfg = toml::from_str(&toml).unwrap_or(cfg);
    let h = harness_with(Scripted::new(vec![]), cfg);
    let source = h.engine.config().clone();
    let mut ui = Ui::on(h);
    for _ in 0..20 {
        ui.screen(120, 40);
    }
    assert!(!count.exists(), "drawing never runs api_key_cmd");
    for _ in 0..5 {
        assert!(source.resolve(Some("m")).is_err());
    }
    let runs = std::fs::read_to_string(&count).unwrap_or_default();
    assert_eq!(
        runs.lines().count(),
        1,
        "a failing command is not run again at once"
    );
}

#[tokio::test(start_paused = true)]
async fn repeated_interrupted_attempts_show_as_one() {
    let cut = || {
        Step::Cut(
            vec![text("partial ")],
            LlmError::transient("connection reset by peer"),
        )
    };
    let mut ui = Ui::new(vec![
        cut(),
        cut(),
        cut(),
        Step::Reply(vec![text("whole answer"), done()]),
    ]);
    ui.start().await;
    ui.say("question");
    for _ in 0..10 {
        tokio::time::advance(std::time::Duration::from_secs(30)).await;
        ui.settle().await;
    }
    let interrupted = ui
        .messages()
        .iter()
        .filter(|m| m.status == MessageStatus::Interrupted)
        .count();
    assert_eq!(interrupted, 3, "every attempt is kept in the database");
    let s = ui.screen(120, 40);
    assert_eq!(s.matches("⚠ interrupted").count(), 1, "one shown:\n{s}");
    assert!(s.contains("(after 2 earlier interrupted attempts)"), "{s}");
    assert!(s.contains("whole answer"), "{s}");
}

/// Esc on a message another tock sent and whose server has not answered
/// yet asks that tock to stop it, as for a reply it streams: Esc did
/// nothing and said nothing, and a hung provider left no key that worked.
#[tokio::test(start_paused = true)]
async fn esc_asks_the_tock_sending_a_message_to_stop_it() {
    let mut ui = Ui::new(vec![]);
    let conv = ui.conv();
    let id = ui
        .store()
        .enqueue(&NewItem::message(conv, "hang on", None), 1)
        .unwrap();
    assert!(ui.store().claim(id, "another-tock", 2).unwrap());
    ui.app.model.reload_items();
    ui.pump();
    // The composer says Esc stops it, as when this tock sends.
    assert!(
        ui.screen(100, 24)
            .contains("answering… Enter queues · Esc stops")
    );
    ui.press(KeyCode::Esc);
    ui.pump();
    assert!(
        ui.status_line()
            .contains("asked the tock sending this message to stop it"),
        "{}",
        ui.status_line()
    );
    assert!(
        ui.store().take_stop_request(conv).unwrap(),
        "the request was noted"
    );
    // That tock holds it, unsent: it comes back into the empty composer
    // here, as when this tock sends (it stayed paused in the strip).
    assert!(ui.store().hold_unsent(id, "another-tock", 3).unwrap());
    ui.app.on_engine(Event::External);
    ui.pump();
    assert_eq!(ui.app.composer_text(), "hang on");
    assert!(
        ui.status_line()
            .contains("your message is back in the composer"),
        "{}",
        ui.status_line()
    );
}
