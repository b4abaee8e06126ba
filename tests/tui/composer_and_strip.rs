//! The composer (sending, queueing, /later, commands, the slash list) and the pending strip.

use super::*;

/// A message sent as `//usr/bin is here` (a literal slash) comes back as
/// typed when recalled or edited: without its "//" it read as a command,
/// and Enter said "unknown command /usr/bin".
#[tokio::test(start_paused = true)]
async fn a_message_that_starts_with_a_slash_is_recalled_with_its_escape() {
    let mut ui = Ui::new(vec![
        Step::Reply(vec![text("noted"), done()]),
        Step::Reply(vec![text("noted again"), done()]),
    ]);
    ui.start().await;
    ui.say("//usr/bin is here");
    ui.settle().await;
    assert_eq!(
        ui.messages()[0].content,
        "/usr/bin is here",
        "sent with one slash"
    );
    ui.press(KeyCode::Up);
    assert_eq!(
        ui.app.composer_text(),
        "//usr/bin is here",
        "edited as typed"
    );
    ui.press(KeyCode::Esc);
    ui.ctrl('p');
    assert_eq!(
        ui.app.composer_text(),
        "//usr/bin is here",
        "recalled as typed"
    );
    ui.enter();
    ui.settle().await;
    let users: Vec<String> = ui
        .messages()
        .into_iter()
        .filter(|m| m.role == tock::store::Role::User)
        .map(|m| m.content)
        .collect();
    assert_eq!(
        users,
        ["/usr/bin is here", "/usr/bin is here"],
        "sent again, not refused"
    );
}

#[tokio::test(start_paused = true)]
async fn typing_and_enter_sends_and_the_reply_arrives() {
    let mut ui = Ui::new(vec![Step::Reply(vec![
        text("Hello "),
        text("there"),
        done(),
    ])]);
    ui.start().await;
    ui.typ("hi");
    ui.key(KeyCode::Enter, KeyModifiers::ALT);
    ui.typ("two lines");
    assert_eq!(ui.app.composer_text(), "hi\ntwo lines");
    ui.enter();
    assert_eq!(ui.app.composer_text(), "", "Enter clears the composer");
    let rows = ui.rows();
    assert_eq!(rows.len(), 1, "one outbox row before anything is sent");
    assert_eq!(
        (rows[0].kind, rows[0].text.as_str(), rows[0].due_at),
        (Kind::Queued, "hi\ntwo lines", None)
    );
    ui.settle().await;
    assert_eq!(ui.row(rows[0].id).status, Status::Sent);
    let msgs = ui.messages();
    assert_eq!(
        msgs.iter()
            .map(|m| (m.role, m.content.as_str()))
            .collect::<Vec<_>>(),
        vec![
            (Role::User, "hi\ntwo lines"),
            (Role::Assistant, "Hello there")
        ]
    );
    // The app shows it without a keypress.
    assert_eq!(ui.app.model.entries.len(), 2);
    let s = ui.screen(80, 24);
    assert!(s.contains("Hello there") && s.contains("two lines"), "{s}");
    assert_eq!(
        ui.app.model.current_conv().unwrap().display_title(),
        "hi",
        "titled from the first message"
    );
}

#[tokio::test(start_paused = true)]
async fn enter_while_answering_queues_and_everything_goes_in_order() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![Step::Hold(vec![text("thinking")], gate.clone())]);
    ui.start().await;
    ui.say("one");
    ui.settle().await;
    assert!(ui.app.model.is_busy());
    ui.say("two");
    ui.say("three");
    ui.settle().await;
    assert_eq!(
        ui.h.provider.count(),
        1,
        "nothing else goes while answering"
    );
    let rows = ui.rows();
    assert_eq!(
        rows.iter()
            .map(|r| (r.text.as_str(), r.status))
            .collect::<Vec<_>>(),
        vec![
            ("one", Status::Sent),
            ("two", Status::Pending),
            ("three", Status::Pending)
        ]
    );
    assert_eq!(
        ui.app
            .model
            .strip_items()
            .map(|i| i.text.as_str())
            .collect::<Vec<_>>(),
        vec!["two", "three"]
    );
    assert!(
        ui.status_line().starts_with("queued"),
        "{}",
        ui.status_line()
    );
    let s = ui.screen(80, 24);
    assert!(
        s.contains("⏳ queued · two") && s.contains("⏳ queued · three"),
        "{s}"
    );
    gate.notify_one();
    ui.settle().await;
    assert_eq!(ui.user_texts(), vec!["one", "two", "three"]);
    assert!(ui.rows().iter().all(|r| r.status == Status::Sent));
    assert!(ui.app.model.strip_items().collect::<Vec<_>>().is_empty());
    assert!(!ui.screen(80, 24).contains("pending ("));
}

#[tokio::test(start_paused = true)]
async fn later_creates_a_scheduled_message_row() {
    // Not dispatching: the clock stays at T0.
    let mut ui = Ui::new(vec![]);
    ui.say("/later 2h x");
    let rows = ui.rows();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (
            rows[0].kind,
            rows[0].text.as_str(),
            rows[0].due_at,
            rows[0].status
        ),
        (
            Kind::Message,
            "x",
            Some(T0 + 2 * 3_600_000),
            Status::Pending
        )
    );
    assert_eq!(ui.app.composer_text(), "");
    assert!(
        ui.status_line().starts_with("scheduled: Mon 30 Nov 02:53"),
        "{}",
        ui.status_line()
    );
    // `/at` too.
    ui.say("/at 9am standup");
    let due = ui.rows().last().unwrap().due_at.unwrap();
    assert_eq!(due, T0 - 53 * 60_000 - 20_000 + 9 * 3_600_000);
}

/// `/at` with the minute about to come: the preview counts down on an idle
/// screen (a redraw is asked for each second), and Enter a few seconds into
/// that minute sends it now, not tomorrow. A minute later it reads tomorrow.
#[tokio::test(start_paused = true)]
async fn a_clock_time_typed_just_before_it_comes_is_sent_then_not_tomorrow() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    // T0 is 00:53:20 UTC: to 00:53:50.
    ui.h.clock.jump(30_000);
    ui.typ("/at 00:54 standup");
    let s = ui.screen(120, 40);
    assert!(s.contains("⏰ sends Mon 30 Nov 00:54, in 10s"), "{s}");
    let now = ui.h.engine.now_ms();
    assert_eq!(
        ui.app.composer_preview_changes_at(),
        Some(now + 1_000 - now % 1_000),
        "the countdown is redrawn"
    );
    ui.h.clock.jump(15_000);
    let s = ui.screen(120, 40);
    assert!(s.contains("⏰ sends Mon 30 Nov 00:54, now"), "{s}");
    ui.enter();
    let due = ui.rows().last().unwrap().due_at.unwrap();
    assert_eq!(due, ui.h.engine.now_ms(), "sent now, not tomorrow");
    // Once its minute is over, the same time is tomorrow's.
    ui.h.clock.jump(60_000);
    ui.typ("/at 00:54 standup");
    let s = ui.screen(120, 40);
    assert!(s.contains("⏰ sends Tue 1 Dec 00:54, in 23h 58m"), "{s}");
    // `/later` is redrawn when the minute it comes to moves on.
    ui.app.composer.clear(0);
    ui.typ("/later 10m x");
    let now = ui.h.engine.now_ms();
    assert_eq!(
        ui.app.composer_preview_changes_at(),
        Some(now + 60_000 - now % 60_000),
        "{now}"
    );
}

/// A composer taller than its box says how much is out of sight, above
/// and below the cursor (nothing told of the hidden lines).
#[tokio::test(start_paused = true)]
async fn a_tall_composer_says_how_many_lines_are_hidden() {
    let mut ui = Ui::new(vec![]);
    ui.app.set_composer(
        &(1..=30)
            .map(|i| format!("line {i}"))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    // The cursor at the end: the first lines are above.
    let s = ui.screen(60, 15);
    assert!(s.contains("line 30"), "{s}");
    let hidden = s.lines().find(|l| l.contains("more")).unwrap_or_default();
    assert!(hidden.contains("↑") && !hidden.contains("↓"), "{s}");
    // At the top, the rest is below.
    for _ in 0..40 {
        ui.press(KeyCode::Up);
    }
    let s = ui.screen(60, 15);
    assert!(s.contains("line 1 "), "{s}");
    let hidden = s.lines().find(|l| l.contains("more")).unwrap_or_default();
    assert!(hidden.contains("↓") && !hidden.contains("↑"), "{s}");
    // Short text: no such line.
    ui.app.set_composer("short");
    assert!(!ui.screen(60, 15).contains("more "));
}

/// The strip's reschedule prompt at 60 columns: an error wraps rather than
/// losing its end (the advice on what to type is at its end).
#[tokio::test(start_paused = true)]
async fn the_reschedule_prompt_error_is_whole_at_60_columns() {
    let mut ui = Ui::new(vec![]);
    ui.say("/later 2h x");
    ui.tab();
    assert_eq!(ui.app.focus, Focus::Strip);
    ui.ch('r');
    assert_eq!(ui.app.top(), Some(ViewKind::Prompt));
    ui.typ("next blursday");
    let s = ui.screen(60, 15);
    let flat: String = s
        .lines()
        .map(|l| l.trim_matches(|c: char| c == ' ' || c == '│'))
        .collect::<Vec<_>>()
        .join(" ");
    assert!(flat.contains("✗ "), "{s}");
    assert!(
        flat.contains("fri 5pm"),
        "the error's advice is on screen:\n{s}"
    );
    // The error is inside the prompt's box: nothing of the screen behind
    // shows at the ends of its lines.
    snap!("strip_reschedule_error_60x15", s);
    snap!("strip_reschedule_error_120x40", ui.screen(120, 40));
}

/// Tab completes `/la` to `/later `, and the composer says how it is used
/// as a hint, not as an error, until something is typed after it.
#[tokio::test(start_paused = true)]
async fn a_completed_command_shows_its_usage_as_a_hint() {
    let mut ui = Ui::new(vec![]);
    ui.typ("/la");
    ui.tab();
    assert_eq!(ui.app.composer_text(), "/later ");
    let s = ui.screen(100, 30);
    assert!(s.contains("/later DURATION TEXT — e.g."), "{s}");
    assert!(!s.contains("✗"), "{s}");
    ui.typ("blah x");
    assert!(ui.screen(100, 30).contains("✗"), "a real error is one");
}

/// Typing a command's name lists the commands it starts above the
/// composer, with how each is used; ↑/↓ choose, Tab completes, Enter runs
/// (or completes one that needs an argument); a space (the name is done)
/// or `//` (a literal slash) closes the list.
#[tokio::test(start_paused = true)]
async fn a_command_name_being_typed_lists_the_matching_commands() {
    let mut ui = Ui::new(vec![]);
    ui.typ("/");
    let s = ui.screen(120, 40);
    assert!(s.contains("commands · ↑↓ choose · Tab completes"), "{s}");
    assert!(
        s.contains("/later DURATION TEXT  send later: /later 1h30m"),
        "{s}"
    );
    assert!(s.contains("more: keep typing or ↓"), "{s}");
    snap!("command_menu_120x40", s);
    ui.typ("mo");
    let s = ui.screen(60, 15);
    assert!(s.contains("/model [NAME]"), "{s}");
    assert!(s.contains("/mouse"), "{s}");
    assert!(!s.contains("/later DURATION"), "{s}");
    snap!("command_menu_60x15", s);
    // ↓ chooses the second; Tab completes it.
    ui.press(KeyCode::Down);
    ui.tab();
    assert_eq!(ui.app.composer_text(), "/mouse ");
    assert!(
        !ui.screen(120, 40).contains("commands ·"),
        "closed by the space"
    );
    // Enter on one that needs an argument completes it, to type that.
    ui.ctrl('u');
    ui.typ("/ren");
    ui.press(KeyCode::Enter);
    assert_eq!(ui.app.composer_text(), "/rename ");
    // Enter on one that needs none runs it: ↑ from the first goes round
    // to the last (`/he`: only /help).
    ui.ctrl('u');
    ui.typ("/he");
    ui.press(KeyCode::Up);
    ui.press(KeyCode::Enter);
    assert!(ui.app.composer_text().is_empty());
    let s = ui.screen(120, 40);
    assert!(s.contains("tock — keys"), "the help is open: {s}");
    ui.press(KeyCode::Esc);
    // Past the rows shown, the list follows the choice.
    ui.typ("/");
    for _ in 0..12 {
        ui.press(KeyCode::Down);
    }
    let s = ui.screen(120, 40);
    assert!(s.contains("above, "), "{s}");
    assert!(!s.contains("/later DURATION"), "{s}");
    ui.ctrl('u');
    ui.typ("//");
    assert!(!ui.screen(120, 40).contains("commands ·"));
}

/// A line about the key just pressed goes with the next key: "nothing
/// (more) to complete" stayed ten seconds, over what came next (Tab on `/`
/// completed `/later` under it).
#[tokio::test(start_paused = true)]
async fn a_line_about_a_tab_goes_with_the_next_key() {
    let mut ui = Ui::new(vec![]);
    ui.typ("/later ");
    ui.tab();
    assert!(ui.status_line().contains("nothing (more) to complete"));
    ui.ctrl('u');
    assert!(!ui.status_line().contains("nothing (more) to complete"));
}

/// What a key or a command did is said until the next key, not for ten
/// seconds over what the user does next ("exported to …" stayed while the
/// next message was typed and sent); what to type next (`/model`'s list)
/// and an error stay their time.
#[tokio::test(start_paused = true)]
async fn a_report_of_what_a_key_did_goes_with_the_next_key() {
    let mut ui = Ui::new(vec![Step::Reply(vec![text("hi"), done()])]);
    ui.start().await;
    let bar = |ui: &mut Ui| {
        let s = ui.screen(120, 30);
        s.lines().last().unwrap_or_default().to_string()
    };
    // (key that made the line, what the line says)
    type Press = fn(&mut Ui);
    let reports: [(Press, &str); 6] = [
        (
            |ui| {
                let out = ui.h.dir.path().join("out.md");
                ui.say(&format!("/export {}", out.display()))
            },
            "exported to",
        ),
        (
            |ui| ui.key(KeyCode::Char('m'), KeyModifiers::ALT),
            "mouse capture",
        ),
        (|ui| ui.ctrl('p'), "no earlier message"),
        (|ui| ui.ctrl('c'), "press Ctrl+C again to quit"),
        (|ui| ui.ctrl('t'), "type the message first"),
        (|ui| ui.ctrl('y'), "no reply to copy yet"),
    ];
    for (make, says) in reports {
        make(&mut ui);
        assert!(bar(&mut ui).contains(says), "{says}: {}", bar(&mut ui));
        ui.ch('x');
        assert!(
            !bar(&mut ui).contains(says),
            "{says} went with the next key: {}",
            bar(&mut ui)
        );
        ui.press(KeyCode::Backspace);
    }
    // Sending is a key too: "exported to …" is not left over the send.
    let out = ui.h.dir.path().join("again.md");
    ui.say(&format!("/export {}", out.display()));
    assert!(ui.status_line().starts_with("exported to"));
    ui.say("hello");
    ui.settle().await;
    assert_eq!(ui.status_line(), "");
    assert_eq!(ui.user_texts(), vec!["hello"]);
    // What to type next stays while it is typed.
    ui.say("/role");
    assert!(
        ui.status_line().starts_with("role: "),
        "{}",
        ui.status_line()
    );
    ui.typ("/role e");
    assert!(
        ui.status_line().starts_with("role: "),
        "{}",
        ui.status_line()
    );
}

#[tokio::test(start_paused = true)]
async fn later_with_an_unreadable_time_creates_nothing_and_keeps_the_text() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.say("/later blah x");
    assert!(ui.rows().is_empty());
    assert_eq!(ui.app.composer_text(), "/later blah x");
    let (msg, is_err) = ui.app.status_pair();
    assert!(is_err && msg.contains("blah"), "{msg}");
    ui.app.set_composer("");
    ui.say("/at yesterday 9am x");
    assert!(ui.rows().is_empty(), "nothing for a past time");
    assert_eq!(ui.app.composer_text(), "/at yesterday 9am x");
    // Alone, each scheduling command says how it is used, with an example.
    for (cmd, usage) in [
        (
            "/later",
            "usage: /later DURATION TEXT — e.g. /later 1h30m check the build",
        ),
        (
            "/at ",
            "usage: /at TIME TEXT — e.g. /at tomorrow 9am stand-up notes",
        ),
        (
            "/every",
            "usage: /every EXPR TEXT — e.g. /every weekday 9am stand-up notes",
        ),
    ] {
        ui.app.set_composer("");
        ui.say(cmd);
        let (msg, is_err) = ui.app.status_pair();
        assert!(is_err && msg == usage, "{cmd}: {msg}");
    }
    assert!(ui.rows().is_empty());
    ui.settle().await;
    assert_eq!(ui.h.provider.count(), 0);
}

#[tokio::test(start_paused = true)]
async fn unknown_commands_are_never_sent() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.say("/frobnicate the widget");
    ui.settle().await;
    assert!(ui.rows().is_empty());
    assert_eq!(ui.h.provider.count(), 0);
    assert_eq!(ui.app.composer_text(), "/frobnicate the widget");
    let (msg, is_err) = ui.app.status_pair();
    assert!(
        is_err && msg.contains("unknown command /frobnicate"),
        "{msg}"
    );
    let s = ui.screen(120, 32);
    assert!(s.contains("unknown command /frobnicate"), "{s}");
    assert!(!msg.contains("did you mean"), "{msg}");
    // A slip of a letter names the command meant.
    ui.app.set_composer("");
    ui.say("/latr 1h check the build");
    assert!(
        ui.app
            .status_pair()
            .0
            .starts_with("unknown command /latr — did you mean /later?"),
        "{}",
        ui.app.status_pair().0
    );
    assert!(ui.rows().is_empty());
    // A literal leading slash is sent with `//`.
    ui.app.set_composer("");
    ui.say("//etc/hosts is a file");
    assert_eq!(ui.rows()[0].text, "/etc/hosts is a file");
}

#[tokio::test(start_paused = true)]
async fn strip_cancel_asks_first() {
    // Not dispatching: both stay queued.
    let mut ui = Ui::new(vec![]);
    ui.say("first");
    ui.say("second");
    let ids: Vec<i64> = ui.rows().iter().map(|r| r.id).collect();
    ui.tab();
    assert_eq!(ui.app.focus, Focus::Strip);
    ui.ch('j');
    assert_eq!(ui.strip_sel(), Some(1));
    let s = ui.screen(80, 24);
    assert!(s.contains("› ⏳ queued · second"), "{s}");
    // Every key of the focused strip is shown, even at 80 columns with the sidebar.
    for k in [
        "e edit",
        "x cancel",
        "s send now",
        "u to composer",
        "r reschedule",
        "R retry",
        "Esc back",
    ] {
        assert!(s.contains(k), "{k:?} not shown:\n{s}");
    }
    snap!("strip_focused_80x24", ui.render(80, 24).backend());
    ui.ch('x');
    assert!(ui.app.popup() == Some(ViewKind::Confirm));
    assert!(
        ui.screen(80, 24)
            .contains("Cancel “second”?  Enter yes · Esc no"),
        "{}",
        ui.screen(80, 24)
    );
    ui.press(KeyCode::Esc);
    assert!(ui.app.popup().is_none());
    assert_eq!(ui.row(ids[1]).status, Status::Pending, "Esc keeps it");
    ui.ch('x');
    ui.enter();
    ui.pump();
    assert_eq!(ui.row(ids[1]).status, Status::Canceled);
    assert_eq!(ui.row(ids[0]).status, Status::Pending);
    assert_eq!(ui.app.model.strip_items().collect::<Vec<_>>().len(), 1);
    assert_eq!(
        ui.strip_sel(),
        Some(0),
        "the canceled item left: the one that took its place (the one before, as it was last) is selected"
    );
    // Esc goes back to the composer.
    ui.press(KeyCode::Esc);
    assert_eq!(ui.app.focus, Focus::Composer);
}

/// Three scheduled items, x Enter three times: each cancel selects the row that
/// took the canceled one's place, shown before a key acts on it, so the
/// next x Enter cancels it; nothing is typed into the composer.
#[tokio::test(start_paused = true)]
async fn strip_cancels_item_after_item_with_x_enter() {
    let mut ui = Ui::new(vec![]);
    for n in 1..=3 {
        ui.say(&format!("/later {n}h strip item {n}"));
    }
    let ids: Vec<i64> = ui.rows().iter().map(|r| r.id).collect();
    assert_eq!(ids.len(), 3);
    ui.tab();
    assert_eq!(ui.app.focus, Focus::Strip);
    for n in 1..=3 {
        let s = ui.screen(120, 40);
        let marked = s.lines().find(|l| l.contains("› ")).unwrap_or_default();
        assert!(
            marked.contains(&format!("strip item {n}")),
            "item {n} is shown selected:\n{s}"
        );
        ui.ch('x');
        assert_eq!(ui.app.popup(), Some(ViewKind::Confirm));
        ui.enter();
        ui.pump();
        assert_eq!(ui.row(ids[n - 1]).status, Status::Canceled, "item {n}");
        let (msg, is_err) = ui.app.status_pair();
        assert!(!is_err, "{msg}");
    }
    assert!(ui.app.model.strip_items().next().is_none());
    assert_eq!(
        ui.app.composer_text(),
        "",
        "nothing typed into the composer"
    );
}

/// `s` on a message scheduled for later asks first: it is also the first
/// letter of many a word typed where the composer was meant (the trial's
/// "sure thing" sent a message 54 minutes early). Anything but `y` leaves
/// it scheduled.
#[tokio::test(start_paused = true)]
async fn strip_send_now_of_a_scheduled_message_asks_first() {
    let mut ui = Ui::new(vec![Step::Reply(vec![text("D it is"), done()])]);
    ui.start().await;
    ui.say("/later 54m later D");
    let id = ui.rows()[0].id;
    ui.tab();
    assert_eq!(ui.app.focus, Focus::Strip);
    ui.ch('s');
    assert_eq!(ui.app.popup(), Some(ViewKind::Confirm));
    let s = ui.screen(120, 40);
    assert!(
        s.contains("Send “later D” now, 54m before its time?"),
        "{s}"
    );
    // A letter is no answer: the question goes, and the letters are typed.
    ui.ch('u');
    ui.pump();
    assert_eq!(ui.app.popup(), None);
    assert_eq!(ui.app.composer_text(), "su");
    assert_eq!(ui.row(id).status, Status::Pending);
    assert!(ui.row(id).due_at.is_some(), "still scheduled");
    ui.app.set_composer("");
    ui.tab();
    ui.ch('s');
    ui.enter();
    ui.pump();
    ui.settle().await;
    assert_eq!(ui.row(id).status, Status::Sent);
}

/// Words typed where the keys are the strip's or the list's (Shift+Tab,
/// a Claude Code habit, moved them): a letter that asks a question or
/// opens a prompt, then another at once, is typing. The question goes
/// unanswered and the word goes into the composer ("dynamic" deleted a
/// conversation with its `d` and `y`; "sync" sent a message early; "explain"
/// rewrote one).
#[tokio::test(start_paused = true)]
async fn a_word_typed_into_the_strip_or_the_list_goes_to_the_composer() {
    let mut ui = Ui::new(vec![]);
    ui.say("/later 54m keep me");
    let id = ui.rows()[0].id;
    for word in ["sync the repo", "explain this", "xylophone"] {
        ui.tab();
        assert_eq!(ui.app.focus, Focus::Strip);
        // Typed at once: no time passes between the keys.
        ui.typ_at_once(word);
        ui.pump();
        assert_eq!(ui.app.popup(), None, "{word}");
        assert_eq!(ui.app.composer_text(), word);
        assert_eq!(ui.app.focus, Focus::Composer);
        let row = ui.row(id);
        assert_eq!(
            (row.status, row.text.as_str()),
            (Status::Pending, "keep me")
        );
        assert!(row.due_at.is_some(), "{word}: still scheduled");
        ui.app.set_composer("");
    }
    // In the conversation list: `d` then `y` is the start of a word.
    let conv = ui.conv();
    ui.tab();
    ui.tab();
    assert_eq!(ui.app.focus, Focus::Sidebar);
    ui.typ_at_once("dynamic");
    ui.pump();
    assert_eq!(ui.app.composer_text(), "dynamic");
    assert!(
        ui.store().conversation(conv).unwrap().is_some(),
        "not deleted"
    );
    // The list's filter and a time after `r` are typed at once, and stay
    // theirs.
    ui.app.set_composer("");
    ui.tab();
    ui.tab();
    ui.typ_at_once("/gro");
    assert_eq!(ui.app.popup(), Some(ViewKind::Prompt));
    assert_eq!(ui.app.composer_text(), "");
    ui.press(KeyCode::Esc);
    ui.press(KeyCode::Esc);
    ui.app.focus = Focus::Composer;
    ui.tab();
    assert_eq!(ui.app.focus, Focus::Strip);
    ui.typ_at_once("r2h");
    assert_eq!(ui.app.popup(), Some(ViewKind::Prompt));
    assert!(
        ui.screen(100, 24).contains("in 2h"),
        "{}",
        ui.screen(100, 24)
    );
    assert_eq!(ui.app.composer_text(), "");
    ui.press(KeyCode::Esc);
    // Read, then answered: the question is asked and `y` answers it.
    ui.app.focus = Focus::Composer;
    ui.app.set_composer("");
    ui.tab();
    ui.ch('s');
    assert_eq!(ui.app.popup(), Some(ViewKind::Confirm));
    ui.h.clock.jump(1_000);
    ui.app.on_key(KeyEvent::from(KeyCode::Esc));
    assert_eq!(ui.app.popup(), None);
    assert_eq!(ui.app.composer_text(), "");
}

/// The strip's and the list's letters that act at once wait a moment for
/// the next key: another letter at once is a word typed where the composer
/// was meant, and nothing is done ("sure" sent a message due in seconds
/// with its `s`, "update" took one back with its `u`, "now" opened a new
/// conversation with its `n`). Typed alone, the letter acts once the moment
/// has passed; a key that is not typing lets it act first.
#[tokio::test(start_paused = true)]
async fn a_word_begun_with_a_letter_that_acts_at_once_goes_to_the_composer() {
    let mut ui = Ui::new(vec![]);
    ui.say("/later 30s soon item");
    let id = ui.rows()[0].id;
    for word in ["sure thing", "update docs"] {
        ui.tab();
        assert_eq!(ui.app.focus, Focus::Strip);
        ui.typ_at_once(word);
        ui.h.clock.jump(1_000);
        ui.app.on_tick();
        ui.pump();
        assert_eq!(ui.app.composer_text(), word);
        assert_eq!(ui.app.focus, Focus::Composer);
        let row = ui.row(id);
        assert_eq!(
            row.status,
            Status::Pending,
            "{word}: not sent, not taken back"
        );
        assert!(row.due_at.is_some(), "{word}: still scheduled");
        ui.app.set_composer("");
    }
    let conv = ui.conv();
    ui.tab();
    ui.tab();
    assert_eq!(ui.app.focus, Focus::Sidebar);
    ui.typ_at_once("now what");
    ui.pump();
    assert_eq!(ui.app.composer_text(), "now what");
    assert_eq!(
        ui.store().conversations().unwrap().len(),
        1,
        "no new conversation"
    );
    assert_eq!(ui.conv(), conv);
    ui.app.set_composer("");

    // Alone, `u` waits, then takes the message back into the composer.
    ui.app.focus = Focus::Composer;
    ui.tab();
    ui.app.on_key(KeyEvent::from(KeyCode::Char('u')));
    assert!(ui.app.holds_a_pane_letter());
    assert_eq!(ui.row(id).status, Status::Pending, "not yet");
    ui.h.clock.jump(tock::tui::app::TYPED_ON_MS);
    ui.app.on_tick();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    ui.pump();
    assert!(!ui.app.holds_a_pane_letter());
    assert_eq!(ui.row(id).status, Status::Canceled, "taken back");
    let back = ui.app.composer_text();
    assert!(
        back.starts_with("/at ") && back.ends_with(" soon item"),
        "{back}"
    );

    // `n` then ↓ at once: the new conversation is made, then ↓ moves.
    ui.app.focus = Focus::Composer;
    ui.enter();
    assert_eq!(ui.rows().len(), 2, "scheduled again");
    ui.tab();
    ui.tab();
    assert_eq!(ui.app.focus, Focus::Sidebar);
    ui.app.on_key(KeyEvent::from(KeyCode::Char('n')));
    ui.app.on_key(KeyEvent::from(KeyCode::Down));
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    ui.pump();
    assert!(!ui.app.holds_a_pane_letter());
    assert_eq!(ui.store().conversations().unwrap().len(), 2, "made");
    assert_ne!(ui.conv(), conv, "and shown");
    assert_eq!(ui.app.composer_text(), "");
}

/// Left in the strip (or the conversation list), the keys go back to the
/// composer after 30 s without one: words typed later were the strip's
/// commands (the trial's `pause semantics` pulled a message back and
/// rescheduled it with the rest of the words appended).
#[tokio::test(start_paused = true)]
async fn the_keys_go_back_to_the_composer_after_a_while_in_the_strip() {
    let mut ui = Ui::new(vec![]);
    ui.say("/later 1h keep me");
    let id = ui.rows()[0].id;
    ui.tab();
    assert_eq!(ui.app.focus, Focus::Strip);
    // Managing goes on while keys come.
    ui.h.clock.jump(20_000);
    ui.app.on_tick();
    assert_eq!(ui.app.focus, Focus::Strip);
    ui.press(KeyCode::Down);
    ui.h.clock.jump(20_000);
    ui.app.on_tick();
    assert_eq!(ui.app.focus, Focus::Strip, "the key counted");
    assert!(
        ui.app
            .next_tick_at()
            .is_some_and(|t| t <= ui.h.engine.now_ms() + 10_000),
        "a tick comes for it"
    );
    ui.h.clock.jump(10_000);
    ui.app.on_tick();
    assert_eq!(ui.app.focus, Focus::Composer);
    ui.typ("pause semantics");
    assert_eq!(ui.app.composer_text(), "pause semantics");
    let row = ui.row(id);
    assert_eq!(
        (row.status, row.text.as_str()),
        (Status::Pending, "keep me")
    );
    // A question one of its letters asked, left open, goes unanswered
    // too: "yes please" typed later answered it.
    ui.app.set_composer("");
    ui.tab();
    ui.ch('s');
    assert_eq!(ui.app.popup(), Some(ViewKind::Confirm));
    ui.h.clock.jump(31_000);
    ui.app.on_tick();
    assert_eq!(ui.app.popup(), None);
    assert_eq!(ui.app.focus, Focus::Composer);
    ui.typ("yes please");
    assert_eq!(ui.app.composer_text(), "yes please");
    assert!(ui.row(id).due_at.is_some(), "still scheduled");
}

/// `u` takes the selected item back into the composer: back in the strip,
/// the row that took its place is selected, not the first.
#[tokio::test(start_paused = true)]
async fn after_a_pull_back_the_strip_selects_the_row_that_took_its_place() {
    let mut ui = Ui::new(vec![]);
    for n in 1..=3 {
        ui.say(&format!("queued item {n}"));
    }
    let ids: Vec<i64> = ui.rows().iter().map(|r| r.id).collect();
    ui.tab();
    ui.press(KeyCode::Down);
    ui.ch('u');
    ui.pump();
    assert_eq!(ui.row(ids[1]).status, Status::Canceled);
    assert_eq!(ui.app.composer_text(), "queued item 2");
    assert_eq!(ui.app.focus, Focus::Composer);
    ui.key(KeyCode::BackTab, KeyModifiers::SHIFT);
    assert_eq!(ui.app.focus, Focus::Strip);
    assert_eq!(ui.app.strip.selected, Some(ids[2]));
    let s = ui.screen(120, 40);
    assert!(s.contains("› ⏳ queued · queued item 3"), "{s}");
}

/// An item that leaves the strip by another hand (`tock cancel`, another
/// tock) takes the selection with it: the row that slid into its place is
/// not selected, and a key acts on nothing until ↑/↓ chooses.
#[tokio::test(start_paused = true)]
async fn strip_item_canceled_elsewhere_leaves_nothing_selected() {
    let mut ui = Ui::new(vec![]);
    for n in 1..=2 {
        ui.say(&format!("/later {n}h strip item {n}"));
    }
    let ids: Vec<i64> = ui.rows().iter().map(|r| r.id).collect();
    ui.tab();
    assert_eq!(ui.strip_sel(), Some(0));
    ui.screen(120, 40);
    ui.h.engine.cancel(ids[0]).unwrap();
    ui.pump();
    assert_eq!(ui.strip_sel(), None);
    let s = ui.screen(120, 40);
    assert!(!s.contains("› "), "no row is marked:\n{s}");
    ui.ch('x');
    assert_eq!(ui.app.popup(), None);
    assert!(ui.status_line().contains("no item selected"));
    assert_eq!(ui.row(ids[1]).status, Status::Pending);
}

/// Keys typed ahead, before a frame showed the row that took the canceled
/// item's place: they do not act on it (the user has not seen it
/// selected), and the `y` meant for a question is not typed either.
#[tokio::test(start_paused = true)]
async fn strip_keys_typed_ahead_of_the_new_selection_do_not_act_on_it() {
    let mut ui = Ui::new(vec![]);
    for n in 1..=3 {
        ui.say(&format!("/later {n}h strip item {n}"));
    }
    let ids: Vec<i64> = ui.rows().iter().map(|r| r.id).collect();
    ui.tab();
    ui.screen(120, 40);
    // x Enter x Enter x Enter in one burst: no frame between the keys,
    // and the engine's events about the cancel wait until the burst is
    // done.
    for _ in 0..3 {
        ui.ch('x');
        ui.enter();
    }
    ui.pump();
    assert_eq!(ui.row(ids[0]).status, Status::Canceled);
    assert_eq!(ui.row(ids[1]).status, Status::Pending, "not seen selected");
    assert_eq!(ui.row(ids[2]).status, Status::Pending);
    assert_eq!(ui.app.popup(), None);
    assert_eq!(
        ui.app.composer_text(),
        "",
        "nothing typed into the composer"
    );
    assert_eq!(ui.app.focus, Focus::Strip);
    // The last Enter was the strip's own (it resumes a paused queue).
    let (msg, _) = ui.app.status_pair();
    assert!(msg.contains("the queue is not paused"), "{msg}");
    // Once a frame has shown it selected, x acts on it.
    let s = ui.screen(120, 40);
    let marked = s.lines().find(|l| l.contains("› ")).unwrap_or_default();
    assert!(marked.contains("strip item 2"), "{s}");
    ui.ch('x');
    ui.enter();
    ui.pump();
    assert_eq!(ui.row(ids[1]).status, Status::Canceled);
    assert_eq!(ui.row(ids[2]).status, Status::Pending);
    // A letter the strip does not use is typing: the composer has it, and
    // the keys.
    ui.ch('q');
    assert_eq!(ui.app.composer_text(), "q");
    assert_eq!(ui.app.focus, Focus::Composer);
}

#[tokio::test(start_paused = true)]
async fn strip_pull_back_into_the_composer() {
    let mut ui = Ui::new(vec![]);
    ui.say("a draft\nwith two lines");
    let id = ui.rows()[0].id;
    ui.tab();
    ui.ch('u');
    ui.pump();
    assert_eq!(ui.row(id).status, Status::Canceled);
    assert_eq!(ui.app.composer_text(), "a draft\nwith two lines");
    assert_eq!(ui.app.focus, Focus::Composer);
    // The line about it goes with the next key.
    assert!(ui.status_line().contains("moved back into the composer"));
    ui.press(KeyCode::End);
    assert_eq!(ui.status_line(), "");
    assert!(ui.app.model.strip_items().collect::<Vec<_>>().is_empty());
}

/// What `u` brings back is this tock's own draft: saving it after typing
/// on, or clearing it, is no change by "another tock" to be merged with
/// (it doubled the text, and a cleared composer got it back).
#[tokio::test(start_paused = true)]
async fn a_pulled_back_item_is_the_draft_and_typing_on_or_clearing_it_merges_nothing() {
    let mut ui = Ui::new(vec![]);
    let conv = ui.conv();
    // A queued one, typed on.
    ui.say("queued");
    ui.tab();
    ui.ch('u');
    ui.pump();
    assert_eq!(ui.app.composer_text(), "queued");
    ui.typ(" and more");
    ui.app.save_draft();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    ui.pump();
    assert_eq!(ui.app.composer_text(), "queued and more");
    assert_eq!(ui.store().draft(conv).unwrap().text, "queued and more");
    assert!(
        !ui.screen(120, 40).contains("another tock"),
        "{}",
        ui.screen(120, 40)
    );
    // Cleared: it stays cleared.
    ui.ctrl('u');
    ui.app.save_draft();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    ui.pump();
    assert_eq!(ui.app.composer_text(), "");
    assert_eq!(ui.store().draft(conv).unwrap().text, "");
    assert!(!ui.screen(120, 40).contains("another tock"));
    // A scheduled one comes back as `/at TIME TEXT`, saved as it is shown.
    ui.say("/later 1h quick");
    ui.tab();
    ui.ch('u');
    ui.pump();
    let shown = ui.app.composer_text();
    assert!(
        shown.starts_with("/at ") && shown.ends_with(" quick"),
        "{shown}"
    );
    ui.app.save_draft();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    ui.pump();
    assert_eq!(ui.app.composer_text(), shown, "not doubled");
    assert_eq!(ui.store().draft(conv).unwrap().text, shown);
    assert!(!ui.screen(120, 40).contains("another tock"));
    ui.ctrl('u');
    ui.app.save_draft();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    ui.pump();
    assert_eq!(ui.app.composer_text(), "", "not brought back");
    assert_eq!(ui.store().draft(conv).unwrap().text, "");
}

/// The new conversation's hint is never cut off at the foot: where all of
/// it does not fit (60×15 beside the sidebar), a shorter one that does.
#[tokio::test(start_paused = true)]
async fn the_new_conversation_hint_fits_or_is_shortened_whole() {
    let mut ui = Ui::new(vec![]);
    ui.app.sidebar_pref = Some(true);
    let s = ui.screen(60, 15);
    assert!(s.contains("F1 shows every key."), "{s}");
    assert!(s.contains("answers: messages queue."), "{s}");
    let s = ui.screen(120, 40);
    assert!(s.contains("Ctrl+T picks a time"), "{s}");
    assert!(s.contains("F1 shows every key."), "{s}");
}

#[tokio::test(start_paused = true)]
async fn strip_send_now_skips_the_queue() {
    let mut ui = Ui::new(vec![]);
    ui.say("first");
    ui.say("urgent");
    let ids: Vec<i64> = ui.rows().iter().map(|r| r.id).collect();
    ui.tab();
    ui.press(KeyCode::Down);
    ui.ch('s');
    assert_eq!(ui.row(ids[1]).priority, 1);
    assert_eq!(ui.row(ids[0]).priority, 0);
    ui.start().await;
    ui.settle().await;
    assert_eq!(ui.user_texts(), vec!["urgent", "first"]);
}

#[tokio::test(start_paused = true)]
async fn strip_edit_changes_the_text() {
    let mut ui = Ui::new(vec![]);
    ui.say("orignal text");
    let id = ui.rows()[0].id;
    ui.tab();
    ui.ch('e');
    assert!(ui.app.popup() == Some(ViewKind::Prompt));
    ui.erase(20);
    ui.typ("original text");
    ui.key(KeyCode::Enter, KeyModifiers::ALT);
    ui.typ("and more");
    ui.enter();
    assert!(ui.app.popup().is_none());
    ui.pump();
    assert_eq!(ui.row(id).text, "original text\nand more");
    assert!(ui.screen(80, 24).contains("original text and more"));
}

/// The item went out while it was being edited: the edit cannot apply, and
/// what was typed waits in the composer instead of being dropped.
#[tokio::test(start_paused = true)]
async fn a_strip_edit_of_an_item_sent_meanwhile_lands_in_the_composer() {
    edit_of_an_item_sent_meanwhile(KeyCode::Tab).await;
}

/// The same in F2: an item sent while its edit was open. Esc there would
/// have dropped what was typed with the editor; saving puts it in the
/// composer instead.
#[tokio::test(start_paused = true)]
async fn an_f2_edit_of_an_item_sent_meanwhile_lands_in_the_composer() {
    edit_of_an_item_sent_meanwhile(KeyCode::F(2)).await;
}

/// Open the edit of a queued item with `open` (Tab: the strip, F2: the
/// pane), let the item go meanwhile, then save the edit.
async fn edit_of_an_item_sent_meanwhile(open: KeyCode) {
    let mut ui = Ui::new(vec![]);
    ui.say("orignal text");
    let id = ui.rows()[0].id;
    if open == KeyCode::Tab {
        ui.tab();
    } else {
        ui.press(open);
    }
    ui.ch('e');
    ui.erase(20);
    ui.typ("original text, edited");
    ui.start().await;
    assert_eq!(ui.row(id).status, Status::Sent, "it went meanwhile");
    ui.enter();
    ui.pump();
    assert_eq!(ui.user_texts(), vec!["orignal text"]);
    assert_eq!(ui.app.composer_text(), "original text, edited");
    assert_eq!(ui.app.focus, Focus::Composer);
    let (msg, is_err) = ui.app.status_pair();
    assert!(
        is_err && msg.ends_with("your edit is in the composer"),
        "{msg}"
    );
    // Esc (closing F2, if open) keeps the text.
    ui.press(KeyCode::Esc);
    assert_eq!(ui.app.composer_text(), "original text, edited");
}

/// Tab in a composer holding text indents: it moved the focus to the strip,
/// where the next letters typed were commands (`s` sent a scheduled message
/// hours early). Shift+Tab moves the focus whatever is typed.
#[tokio::test(start_paused = true)]
async fn tab_indents_a_composer_holding_text_and_shift_tab_moves_the_focus() {
    let mut ui = Ui::new(vec![]);
    ui.say("/later 2h item two");
    ui.typ("def f():");
    ui.key(KeyCode::Enter, KeyModifiers::ALT);
    ui.press(KeyCode::Tab);
    ui.typ("self.x = 1");
    assert_eq!(ui.app.focus, Focus::Composer);
    assert_eq!(ui.app.composer_text(), "def f():\n    self.x = 1");
    assert!(
        ui.rows().iter().all(|r| r.status == Status::Pending),
        "nothing was sent"
    );
    ui.key(KeyCode::BackTab, KeyModifiers::SHIFT);
    assert_eq!(ui.app.focus, Focus::Strip);
    assert_eq!(ui.app.composer_text(), "def f():\n    self.x = 1");
    // On an empty composer Tab stays there and says which key moves;
    // a sentence typed after it is text, not the strip's letters.
    ui.press(KeyCode::Esc);
    ui.app.set_composer("");
    ui.press(KeyCode::Tab);
    assert_eq!(ui.app.focus, Focus::Composer);
    assert_eq!(
        ui.app.status_pair().0,
        "Shift+Tab moves to the pending messages and the conversation list"
    );
    ui.typ("sounds good, delete the old yaml file");
    assert_eq!(ui.app.focus, Focus::Composer);
    assert_eq!(
        ui.app.composer_text(),
        "sounds good, delete the old yaml file"
    );
    assert!(
        ui.rows().iter().all(|r| r.status == Status::Pending),
        "nothing was sent"
    );
    ui.app.set_composer("");
    ui.key(KeyCode::BackTab, KeyModifiers::SHIFT);
    assert_eq!(ui.app.focus, Focus::Strip);
}

/// A question left open takes no letter as its answer: a sentence typed
/// on after it came up (`d` opened "Delete …?", and the `y` of "yaml"
/// confirmed it) closes it unanswered, and goes into the composer, its
/// first letter too, however slowly it is typed.
#[tokio::test(start_paused = true)]
async fn a_letter_closes_a_question_unanswered_and_is_typed() {
    let mut ui = Ui::new(vec![]);
    ui.say("/later 2h water the plants");
    let conv = ui.conv();
    ui.key(KeyCode::BackTab, KeyModifiers::SHIFT);
    ui.tab();
    assert_eq!(ui.app.focus, Focus::Sidebar);
    // A second between the keys.
    for c in "delete the old yaml file".chars() {
        ui.h.clock.jump(1_000);
        ui.app.on_key(KeyEvent::from(KeyCode::Char(c)));
    }
    assert_eq!(ui.app.top(), None, "no question left open");
    assert_eq!(ui.app.composer_text(), "delete the old yaml file");
    assert_eq!(ui.app.focus, Focus::Composer);
    assert!(
        ui.store().conversation(conv).unwrap().is_some(),
        "not deleted"
    );
    ui.app.set_composer("");
    // In the strip, `x` asks to cancel; the `e` after it closes the question.
    ui.key(KeyCode::BackTab, KeyModifiers::SHIFT);
    assert_eq!(ui.app.focus, Focus::Strip);
    ui.typ("xe");
    assert_eq!(ui.app.top(), None);
    assert_eq!(ui.app.composer_text(), "xe");
    assert!(
        ui.app
            .status_pair()
            .0
            .starts_with("typed into the composer"),
        "{}",
        ui.app.status_pair().0
    );
    assert!(
        ui.rows().iter().all(|r| r.status == Status::Pending),
        "not canceled"
    );
    // Enter answers it.
    ui.app.set_composer("");
    ui.key(KeyCode::BackTab, KeyModifiers::SHIFT);
    ui.ch('x');
    let s = ui.screen(100, 30);
    assert!(
        s.contains("Cancel “water the plants”?  Enter yes · Esc no"),
        "{s}"
    );
    ui.enter();
    assert!(
        ui.rows().iter().all(|r| r.status == Status::Canceled),
        "canceled"
    );
}

/// Ctrl+C clears the composer, attachments too; Ctrl+P brings both back (it
/// brought the text alone, and Enter then sent it without the file).
#[tokio::test(start_paused = true)]
async fn ctrl_p_brings_back_what_ctrl_c_cleared_attachments_too() {
    let mut ui = Ui::new(vec![]);
    let file = ui.h.dir.path().join("data.csv");
    std::fs::write(&file, "1,2\n").unwrap();
    ui.say(&format!("/attach {}", file.display()));
    ui.typ("draft with chip");
    ui.ctrl('c');
    assert_eq!(ui.app.composer_text(), "");
    assert!(ui.app.composer.attachments.is_empty());
    ui.ctrl('p');
    assert_eq!(ui.app.composer_text(), "draft with chip");
    assert_eq!(ui.app.composer.attachments.len(), 1);
    assert_eq!(ui.app.status_pair().0, "what Ctrl+C cleared is back");
}

/// A message keeps its first line's indentation (pasted code); only blank
/// lines around it and trailing spaces go.
#[tokio::test(start_paused = true)]
async fn a_message_keeps_the_indentation_of_its_first_line() {
    let mut ui = Ui::new(vec![]);
    ui.app.on_terminal(TermEvent::Paste(
        "\n\n    if x:\n        y()\n    return z\n\n".into(),
    ));
    ui.enter();
    assert_eq!(ui.rows()[0].text, "    if x:\n        y()\n    return z");
}

/// Ctrl+Z says what a stopped tock will not send (the shell says only
/// "Stopped", and a reminder went by unsent); with nothing to send, nothing.
#[tokio::test(start_paused = true)]
async fn a_suspend_says_what_waits_to_be_sent() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    assert_eq!(ui.app.suspend_line(), None);
    ui.say("/later 1m sent while suspended?");
    ui.settle().await;
    let line = ui.app.suspend_line().unwrap_or_default();
    assert!(
        line.starts_with(
            "tock: suspended; while it is stopped it sends nothing: 1 scheduled (next "
        ) && line.ends_with("`fg` brings it back (`tock daemon` sends them meanwhile)."),
        "{line}"
    );
}

/// Ctrl+Y after a kill key pastes back what it cut, as in readline; it
/// copied the last reply over the clipboard and the cut text was gone.
/// With nothing cut from the draft, Ctrl+Y copies the last reply as ever.
#[tokio::test(start_paused = true)]
async fn ctrl_y_pastes_back_what_a_kill_key_cut() {
    let mut ui = Ui::new(vec![reply_step("the reply")]);
    ui.start().await;
    ui.say("question");
    ui.settle().await;
    ui.typ("alpha usr/local/bin");
    ui.ctrl('w');
    assert_eq!(ui.app.composer_text(), "alpha ");
    ui.ctrl('a');
    ui.ctrl('y');
    assert_eq!(ui.app.composer_text(), "usr/local/binalpha ");
    assert_eq!(
        ui.app.status_pair().0,
        "pasted back what was cut (/copy copies the last reply)"
    );
    ui.enter();
    ui.settle().await;
    ui.ctrl('y');
    assert_eq!(ui.app.composer_text(), "");
    assert!(
        ui.status_line().contains("clipboard"),
        "{}",
        ui.status_line()
    );
}

/// Ctrl+_ (Ctrl+/, which terminals send as Ctrl+7) undoes the draft a step
/// at a time: a word typed, deletions in a row, a cut, a paste. There was
/// no undo: the textarea's own key, Ctrl+U, is readline's kill here.
#[tokio::test(start_paused = true)]
async fn ctrl_underscore_undoes_the_draft_a_step_at_a_time() {
    let mut ui = Ui::new(vec![]);
    ui.typ("check the build");
    ui.ctrl('w');
    ui.typ("tests");
    ui.erase(2);
    ui.app.on_terminal(TermEvent::Paste(" now".into()));
    assert_eq!(ui.app.composer_text(), "check the tes now");
    let mut seen = Vec::new();
    for key in ['7', '/', '_', '7', '7', '7', '7'] {
        ui.ctrl(key);
        seen.push(ui.app.composer_text());
    }
    assert_eq!(
        seen,
        [
            "check the tes",
            "check the tests",
            "check the ",
            "check the build",
            "check the ",
            "check ",
            "",
        ]
    );
    ui.ctrl('7');
    assert_eq!(ui.app.status_pair().0, "nothing to undo");
    // The cursor goes back where it was: typing goes on after "build".
    ui.typ("check the build");
    ui.press(KeyCode::Home);
    ui.typ("x");
    ui.ctrl('7');
    ui.typ("!");
    assert_eq!(ui.app.composer_text(), "!check the build");
    // Sent, the draft starts again: nothing before it to undo.
    ui.enter();
    ui.ctrl('7');
    assert_eq!(ui.app.composer_text(), "");
    assert!(ui.screen(100, 30).contains("nothing to undo"));
}

/// A window made taller shows the draft's first lines again: the composer
/// kept where it had scrolled to in the short window, its first lines out
/// of sight with empty rows below and nothing saying so.
#[tokio::test(start_paused = true)]
async fn a_taller_window_shows_the_start_of_a_draft_again() {
    let mut ui = Ui::new(vec![]);
    for (i, line) in ["one", "two", "three", "four"].iter().enumerate() {
        if i > 0 {
            ui.key(KeyCode::Enter, KeyModifiers::ALT);
        }
        ui.typ(line);
    }
    let short = ui.screen(60, 15);
    assert!(
        !short.contains("│one") && short.contains("│four"),
        "{short}"
    );
    assert!(short.contains("↑ 2 more"), "{short}");
    // The frame at the new size finds the rows; the one after shows them.
    ui.screen(60, 40);
    assert!(ui.app.take_draw_again());
    let tall = ui.screen(60, 40);
    for line in ["one", "two", "three", "four"] {
        assert!(tall.contains(&format!("│{line} ")), "{line}: {tall}");
    }
    assert!(!tall.contains("more ╯"), "{tall}");
    // Once per height: frames at this size ask for no more.
    for _ in 0..3 {
        ui.render(60, 40);
        assert!(!ui.app.take_draw_again());
    }
    // The cursor stayed at the end: typing goes on after "four".
    ui.typ("!");
    assert_eq!(ui.app.composer_text(), "one\ntwo\nthree\nfour!");
    assert!(!ui.app.take_draw_again());
}

/// The cursor over a character made of several code points (a family, a
/// skin tone, a flag, a combining accent) covers it whole: the textarea
/// reversed its first code point alone and drew the rest as a glyph of its
/// own, shifting the row (a lone skin-tone swatch; the accent lost).
#[tokio::test(start_paused = true)]
async fn the_cursor_covers_a_character_of_several_code_points_whole() {
    let mut ui = Ui::new(vec![]);
    let family = "👩\u{200d}👩\u{200d}👧\u{200d}👦";
    for (under, after) in [
        (family, "x"),
        ("👍\u{1F3FD}", "x"),
        ("🇯🇵", "x"),
        ("e\u{301}", "x"),
    ] {
        ui.app.composer.set_text(&format!("a{under}{after}"), 0);
        ui.press(KeyCode::End);
        ui.press(KeyCode::Left);
        ui.press(KeyCode::Left);
        let t = ui.render(40, 12);
        let buf = t.backend().buffer();
        let (x, y) = (0..buf.area.height)
            .flat_map(|y| (0..buf.area.width).map(move |x| (x, y)))
            .find(|&(x, y)| {
                buf[(x, y)].symbol() == "a"
                    && buf[(x + 1, y)]
                        .modifier
                        .contains(ratatui::style::Modifier::REVERSED)
            })
            .unwrap_or_else(|| panic!("{under:?}: no cursor after a"));
        assert_eq!(buf[(x + 1, y)].symbol(), under, "{under:?}");
        let w = unicode_width::UnicodeWidthStr::width(under) as u16;
        assert_eq!(
            buf[(x + 1 + w, y)].symbol(),
            after,
            "{under:?}: the row shifted"
        );
        assert!(
            !buf[(x + 1 + w, y)]
                .modifier
                .contains(ratatui::style::Modifier::REVERSED)
        );
    }
}

/// A long paste (a log) goes with the message as a chip rather than
/// filling the composer: the words typed around it stay in view, the draft
/// keeps it, and the model reads it after the words. Ctrl+_ right after
/// puts it into the text instead; `[ui] paste_chip_lines = 0` never folds.
#[tokio::test(start_paused = true)]
async fn a_long_paste_goes_as_a_chip_and_undo_puts_it_in_the_text() {
    let log: String = (1..=40).map(|i| format!("line {i} of the log\n")).collect();
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.typ("why does this fail?");
    ui.app.on_terminal(TermEvent::Paste(log.clone()));
    assert_eq!(ui.app.composer_text(), "why does this fail?");
    assert_eq!(ui.app.composer.attachments.len(), 1);
    let said = ui.status_line();
    assert!(
        said.starts_with("pasted 40 lines as “pasted text 1”, sent with the message"),
        "{said}"
    );
    let s = ui.screen(80, 24);
    assert!(
        s.contains("why does this fail?") && s.contains("pasted text 1"),
        "{s}"
    );
    assert!(!s.contains("line 40 of the log"), "{s}");
    snap!("paste_chip_80x24", ui.render(80, 24).backend());
    // Kept with the draft, as typing is.
    ui.app.on_tick();
    tokio::time::advance(std::time::Duration::from_secs(2)).await;
    ui.app.on_tick();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    let draft = ui.store().draft(ui.conv()).unwrap();
    assert!(
        draft
            .parts_json
            .as_deref()
            .unwrap_or("")
            .contains("line 40 of the log"),
        "{draft:?}"
    );
    // A second one is "pasted text 2".
    ui.app.on_terminal(TermEvent::Paste(log.clone()));
    assert!(ui.status_line().contains("“pasted text 2”"));
    // Ctrl+_ now: that one goes into the text instead; again, it goes.
    ui.ctrl('_');
    assert_eq!(ui.app.composer.attachments.len(), 1);
    assert!(ui.app.composer_text().contains("line 40 of the log"));
    ui.ctrl('_');
    assert_eq!(ui.app.composer_text(), "why does this fail?");
    ui.enter();
    ui.settle().await;
    let sent = &ui.h.provider.requests()[0];
    let asked = format!("{:?}", sent.messages.last());
    assert!(
        asked.contains("why does this fail?") && asked.contains("line 40 of the log"),
        "{asked}"
    );

    // Off: every paste in the text.
    let cfg: Config = toml::from_str("[ui]\npaste_chip_lines = 0\n").unwrap();
    let mut ui = Ui::with_config(vec![], cfg);
    ui.start().await;
    ui.app.on_terminal(TermEvent::Paste(log.clone()));
    assert!(ui.app.composer.attachments.is_empty());
    assert!(ui.app.composer_text().contains("line 40 of the log"));
}
