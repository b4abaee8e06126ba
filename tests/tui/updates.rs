//! What changes redraw: outbox patches, streamed text, drafts saved elsewhere, times said in words.

use super::*;

/// The counts the app keeps (the store's, read again on each change) equal
/// a count of every unfinished row as the database has it: the sidebar's
/// badges and the status bar's counts by state.
fn assert_summaries_match(ui: &Ui, when: &str) {
    let rows = ui.store().item_summaries().unwrap();
    let (mut per_conv, mut failed_per_conv) = Default::default();
    for s in &rows {
        let Some(c) = s.conversation_id else { continue };
        let map: &mut std::collections::HashMap<i64, usize> =
            if matches!(s.status, Status::Failed | Status::Expired) {
                &mut failed_per_conv
            } else {
                &mut per_conv
            };
        *map.entry(c).or_insert(0) += 1;
    }
    assert_eq!(
        (&ui.app.model.pending_by_conv, &ui.app.model.failed_by_conv),
        (&per_conv, &failed_per_conv),
        "{when}: sidebar badges (pending, failed)"
    );
    let now = ui.app.model.now_ms();
    let mut by_state = tock::tui::model::StateCounts::default();
    for s in &rows {
        let gate = ui.app.model.gate(s.conversation_id);
        by_state.add(&tock::engine::state::summary_state(s, now, gate), 1);
    }
    assert_eq!(ui.app.model.state_counts(), by_state, "{when}: status bar");
}

#[tokio::test(start_paused = true)]
async fn an_outbox_change_patches_only_its_rows_and_the_result_equals_a_full_reload() {
    let mut ui = Ui::new(vec![
        reply_step("one"),
        Step::Fail(LlmError::transient("503 busy")),
        reply_step("two"),
        Step::Fail(LlmError::permanent("401 Unauthorized")),
        Step::Cut(vec![text("half")], LlmError::transient("connection reset")),
        reply_step("three"),
    ]);
    ui.start().await;
    let conv = ui.conv();
    let engine = ui.h.engine.clone();
    let mut rx = engine.subscribe();
    ui.say("a first message");
    ui.settle().await;
    assert_summaries_match(&ui, "after a send and its reply");
    ui.say("/later 1h check the build");
    ui.settle().await;
    assert_summaries_match(&ui, "after /later");
    let later = ui
        .rows()
        .iter()
        .find(|r| r.text == "check the build")
        .unwrap()
        .id;
    engine.reschedule(later, T0 + 7_200_000).unwrap();
    ui.pump();
    assert_summaries_match(&ui, "after a reschedule");
    engine.edit(later, "check the build again").unwrap();
    ui.pump();
    assert_summaries_match(&ui, "after an edit");
    engine.send_now(later).unwrap();
    ui.settle().await;
    assert_summaries_match(&ui, "after send now, a transient failure and its retry");
    tokio::time::sleep(std::time::Duration::from_secs(120)).await;
    ui.settle().await;
    assert_summaries_match(&ui, "after the retry went out");
    ui.say("this one fails");
    ui.settle().await;
    assert_summaries_match(&ui, "after a permanent failure");
    ui.say("this one is cut");
    ui.settle().await;
    tokio::time::sleep(std::time::Duration::from_secs(120)).await;
    ui.settle().await;
    assert_summaries_match(&ui, "after a cut reply and its regeneration");
    let other = engine
        .submit(NewItem {
            due_at: Some(T0 + 86_400_000),
            ..NewItem::new(conv, Kind::Message, "tomorrow")
        })
        .unwrap();
    ui.pump();
    assert_summaries_match(&ui, "after a submit");
    engine.cancel(other).unwrap();
    ui.pump();
    assert_summaries_match(&ui, "after a cancel");
    // The hot paths named their rows.
    let mut named = 0;
    while let Ok(e) = rx.try_recv() {
        named += usize::from(matches!(e, Event::OutboxRows(_)));
    }
    assert!(named >= 8, "{named} changes named their rows");
}

#[tokio::test(start_paused = true)]
async fn streamed_tokens_do_not_reload_an_open_f2() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    let conv = ui.conv();
    ui.press(KeyCode::F(2));
    assert_eq!(ui.app.top(), Some(ViewKind::Scheduled));
    // A row written behind the app's back (no event for it yet).
    ui.store()
        .enqueue(
            &NewItem {
                due_at: Some(T0 + 3_600_000),
                ..NewItem::new(conv, Kind::Message, "written behind its back")
            },
            T0,
        )
        .unwrap();
    // A token of a reply: F2 is not read again for it.
    ui.app.on_engine(Event::Delta {
        conversation_id: conv,
        message_id: 1,
        offset: 0,
        text: "tok".into(),
    });
    assert!(!ui.screen(120, 40).contains("written behind its back"));
    // An outbox change: it is.
    ui.app.on_engine(Event::Outbox);
    assert!(ui.screen(120, 40).contains("written behind its back"));
}

/// Every view and pane at the two sizes that matter most, 120×40 and 60×15:
/// a streaming reply with a queue, the paused queue after a stop, the strip
/// focused, its cancel confirmation, help, F2, the time picker, the
/// notification history, the rename prompt and the edit-and-resend banner
/// (the approval card and verbatim messages have their own snapshots).
#[tokio::test(start_paused = true)]
async fn snapshot_every_view_at_120x40_and_60x15() {
    fn both(ui: &mut Ui, name: &str) {
        for (w, h) in [(120, 40), (60, 15)] {
            snap!(format!("view_{name}_{w}x{h}"), ui.render(w, h).backend());
        }
    }
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![
        Step::Hold(
            vec![text(
                "A first part of the answer, long enough to wrap at sixty columns.",
            )],
            gate.clone(),
        ),
        Step::Reply(vec![text("the second answer"), done()]),
    ]);
    // As a user has it: the sidebar hides itself below 100 columns.
    ui.app.sidebar_pref = None;
    ui.start().await;
    both(&mut ui, "empty");
    ui.say("Plan the week: groceries, the dentist, and a call with Sam.");
    ui.say("also the car");
    ui.say("and water the plants");
    ui.settle().await;
    assert!(ui.app.model.is_busy());
    both(&mut ui, "streaming_with_a_queue");

    ui.press(KeyCode::Esc);
    ui.settle().await;
    assert!(ui.screen(120, 40).contains("paused after stop"));
    both(&mut ui, "paused_queue");

    ui.tab();
    assert_eq!(ui.app.focus, Focus::Strip);
    both(&mut ui, "strip_focused");
    ui.ch('x');
    assert_eq!(ui.app.top(), Some(ViewKind::Confirm));
    both(&mut ui, "confirm_cancel");
    ui.press(KeyCode::Esc);
    ui.press(KeyCode::Esc);
    assert_eq!(ui.app.focus, Focus::Composer);

    ui.press(KeyCode::F(1));
    both(&mut ui, "help");
    ui.press(KeyCode::Esc);
    ui.press(KeyCode::F(2));
    both(&mut ui, "f2");
    ui.press(KeyCode::Esc);
    ui.press(KeyCode::F(3));
    both(&mut ui, "notifications");
    ui.press(KeyCode::Esc);
    // As it opens (its report comes from a thread, and tells times).
    ui.say("/status");
    both(&mut ui, "status");
    ui.press(KeyCode::Esc);

    ui.typ("remember the milk");
    ui.ctrl('t');
    both(&mut ui, "time_picker");
    ui.press(KeyCode::Esc);
    ui.erase(17);

    // The sidebar (shown at 120 columns) and its rename prompt.
    ui.app.sidebar_pref = Some(true);
    ui.render(120, 40);
    ui.tab();
    ui.tab();
    assert_eq!(ui.app.focus, Focus::Sidebar);
    ui.ch('r');
    assert_eq!(ui.app.top(), Some(ViewKind::Prompt));
    both(&mut ui, "rename_prompt");
    ui.press(KeyCode::Esc);
    // The filter prompt: its title gives way to a short one at 60 columns
    // (the long one lost its end there).
    ui.ch('/');
    assert_eq!(ui.app.top(), Some(ViewKind::Prompt));
    ui.typ("plan");
    both(&mut ui, "filter_prompt");
    assert!(
        ui.screen(60, 15)
            .contains("Filter (Enter opens, Esc clears)"),
        "{}",
        ui.screen(60, 15)
    );
    ui.press(KeyCode::Esc);
    ui.press(KeyCode::Esc);
    ui.app.sidebar_pref = None;

    assert_eq!(ui.app.composer_text(), "");
    ui.press(KeyCode::Up);
    assert!(ui.screen(120, 40).contains("editing your last message"));
    both(&mut ui, "edit_banner");
    ui.press(KeyCode::Esc);

    gate.notify_one();
    ui.settle().await;
}

/// The event loop draws a frame only for input `on_terminal` says it acted
/// on (at once, even while a reply streams): what it ignores must indeed
/// change nothing, and a key it acts on must change the screen.
#[tokio::test(start_paused = true)]
async fn input_that_cannot_change_the_screen_changes_nothing() {
    use ratatui::crossterm::event::{KeyEventKind, MouseButton, MouseEvent, MouseEventKind};
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.say("hello");
    ui.settle().await;
    let before = ui.render(80, 24).backend().buffer().clone();
    let mouse = |kind| {
        TermEvent::Mouse(MouseEvent {
            kind,
            column: 40,
            row: 10,
            modifiers: KeyModifiers::NONE,
        })
    };
    let inert = [
        mouse(MouseEventKind::Moved),
        mouse(MouseEventKind::Up(MouseButton::Left)),
        mouse(MouseEventKind::Drag(MouseButton::Left)),
        TermEvent::Key(KeyEvent::new_with_kind(
            KeyCode::Char('a'),
            KeyModifiers::NONE,
            KeyEventKind::Release,
        )),
        TermEvent::FocusGained,
        TermEvent::FocusLost,
    ];
    for ev in inert {
        let shown = format!("{ev:?}");
        assert!(!ui.app.on_terminal(ev), "{shown}");
    }
    assert_eq!(ui.render(80, 24).backend().buffer(), &before);
    // A key it acts on does change the screen.
    assert!(ui.app.on_terminal(TermEvent::Key(KeyEvent::new(
        KeyCode::Char('a'),
        KeyModifiers::NONE
    ))));
    assert_ne!(ui.render(80, 24).backend().buffer(), &before);
    let acting = [
        TermEvent::Paste("pasted".into()),
        mouse(MouseEventKind::ScrollUp),
        mouse(MouseEventKind::ScrollDown),
        mouse(MouseEventKind::Down(MouseButton::Left)),
    ];
    for ev in acting {
        let shown = format!("{ev:?}");
        assert!(ui.app.on_terminal(ev), "{shown}");
    }
}

/// The text of a reply streaming in a conversation not on screen changes
/// nothing there: no frame is drawn for it. Text of the reply on screen is.
#[tokio::test(start_paused = true)]
async fn the_text_of_a_reply_in_another_conversation_draws_nothing() {
    let (mut ui, conv) = streaming("streaming here").await;
    let reply = ui
        .store()
        .messages(conv)
        .unwrap()
        .into_iter()
        .find(|m| m.role == Role::Assistant)
        .expect("a reply streams");
    assert!(ui.screen(80, 24).contains("streaming here"));
    let other = ui
        .store()
        .create_conversation(Some("other"), "user", T0)
        .unwrap();
    let before = ui.render(80, 24).backend().buffer().clone();
    assert!(!ui.app.on_engine(Event::Delta {
        conversation_id: other,
        message_id: reply.id + 100,
        offset: 0,
        text: "elsewhere".into(),
    }));
    assert_eq!(ui.render(80, 24).backend().buffer(), &before);
    assert!(ui.app.on_engine(Event::Delta {
        conversation_id: conv,
        message_id: reply.id,
        offset: reply.content.len(),
        text: " and more".into(),
    }));
    assert!(ui.screen(80, 24).contains("streaming here and more"));
}

/// The engine is told which conversation is on screen: the text of a reply
/// streaming in another is taken once a second (the provider is told so),
/// and at a reader's pace again when its conversation is shown.
#[tokio::test(start_paused = true)]
async fn a_reply_streaming_off_screen_is_taken_once_a_second() {
    let (mut ui, conv) = streaming("streaming here").await;
    let pace = |ui: &Ui| ui.h.provider.requests().pop().unwrap().text_every.get();
    assert_eq!(pace(&ui), std::time::Duration::from_millis(100));
    // A new conversation on screen.
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    ui.settle().await;
    assert_ne!(ui.app.model.current, Some(conv));
    assert_eq!(pace(&ui), std::time::Duration::from_secs(1));
    // Back to the streaming one.
    ui.app.model.open(conv);
    ui.settle().await;
    assert_eq!(pace(&ui), std::time::Duration::from_millis(100));
}

/// Alt+n (and /new) in a conversation with nothing in it stays there and
/// says so: each press made another empty "Conversation N" for good. Once
/// the conversation has a message, it makes a new one.
#[tokio::test(start_paused = true)]
async fn a_new_conversation_is_not_made_from_an_unused_one() {
    let mut ui = Ui::new(vec![Step::Reply(vec![text("hi")])]);
    ui.start().await;
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    ui.settle().await;
    let convs = ui.app.model.convs.len();
    let here = ui.app.model.current;
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    ui.settle().await;
    ui.say("/new");
    ui.settle().await;
    assert_eq!(ui.app.model.convs.len(), convs);
    assert_eq!(ui.app.model.current, here);
    assert!(
        ui.status_line().contains("new and empty"),
        "{}",
        ui.status_line()
    );
    // A title asks for a conversation of its own.
    ui.say("/new Named");
    ui.settle().await;
    assert_eq!(ui.app.model.convs.len(), convs + 1);
    ui.say("hello");
    ui.settle().await;
    let here = ui.app.model.current;
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    ui.settle().await;
    assert_eq!(ui.app.model.convs.len(), convs + 2);
    assert_ne!(ui.app.model.current, here);
}

/// F2 opens on what the status bar says needs attention: the first failed
/// item, not the series listed first (with no approval waiting, which
/// leads the list).
#[tokio::test(start_paused = true)]
async fn f2_opens_on_the_failed_item_the_status_bar_points_to() {
    let mut ui = Ui::new(vec![Step::Fail(LlmError::permanent(
        "401 Unauthorized: invalid API key",
    ))]);
    ui.start().await;
    ui.say("ping that failed");
    ui.settle().await;
    assert_eq!(ui.rows()[0].status, Status::Failed);
    ui.say("/every day 9am stretch");
    ui.settle().await;
    ui.press(KeyCode::F(2));
    let s = ui.screen(100, 30);
    let chosen = s.lines().find(|l| l.contains('›')).unwrap_or_default();
    assert!(chosen.contains("ping that failed"), "{s}");
    assert!(s.contains("stretch"), "{s}");
}

/// A search hit opens with its message at the top of the chat, measured in
/// the chat of the conversation it opens: there a taller composer (a draft
/// of several lines) leaves fewer rows than where the search was typed,
/// and the message was left just above the view.
#[tokio::test(start_paused = true)]
async fn a_search_hit_opens_at_the_top_of_the_chat_it_opens_in() {
    let long: String = (1..=40)
        .map(|i| format!("line {i} of the answer\n\n"))
        .collect();
    let mut ui = Ui::new(vec![
        reply_step(&long),
        reply_step("ok"),
        reply_step("ok"),
        reply_step("fine"),
    ]);
    ui.start().await;
    ui.app.sidebar_pref = Some(false);
    let first = ui.conv();
    ui.say("needle question");
    ui.settle().await;
    ui.say("second question");
    ui.settle().await;
    ui.say("third question");
    ui.settle().await;
    for i in 0..6 {
        ui.typ(&format!("draft line {i}"));
        ui.key(KeyCode::Enter, KeyModifiers::ALT);
    }
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    ui.pump();
    assert_ne!(ui.conv(), first);
    ui.say("elsewhere");
    ui.settle().await;
    ui.screen(80, 24);
    ui.ctrl('f');
    ui.typ("needle");
    ui.enter();
    assert_eq!(ui.conv(), first);
    let s = ui.screen(80, 24);
    // Not only in the status bar's title: in the chat.
    let chat: Vec<&str> = s.lines().take(10).collect();
    assert!(chat.iter().any(|l| l.trim() == "needle question"), "{s}");
    assert!(s.contains("line 1 of the answer"), "{s}");
    assert!(s.contains("End: jump to latest"), "{s}");
}

/// "regenerating the last reply" goes once the new reply is in (it stayed
/// its ten seconds after the reply had finished).
#[tokio::test(start_paused = true)]
async fn the_regenerating_line_goes_when_the_new_reply_is_in() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![
        Step::Reply(vec![text("first answer"), done()]),
        Step::Hold(vec![text("second answer")], gate.clone()),
    ]);
    ui.start().await;
    ui.say("q");
    ui.settle().await;
    ui.ctrl('r');
    ui.settle().await;
    assert!(
        ui.status_line().contains("regenerating the last reply"),
        "{}",
        ui.status_line()
    );
    gate.notify_one();
    ui.settle().await;
    assert!(ui.screen(80, 24).contains("second answer"));
    assert_eq!(ui.status_line(), "", "the line outlived the regeneration");
}

/// `/delete` asks again when messages came into the conversation since it
/// asked (a shell's `tock send`): `y` would have canceled them unseen.
#[tokio::test(start_paused = true)]
async fn delete_asks_again_when_more_came_since_it_asked() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    let conv = ui.conv();
    ui.say("/later 1h first");
    ui.settle().await;
    ui.say("/delete");
    assert!(
        ui.screen(100, 30)
            .contains("Its 1 pending message(s) will be canceled"),
        "{}",
        ui.screen(100, 30)
    );
    let mut item = tock::store::NewItem::new(conv, tock::store::Kind::Message, "added meanwhile");
    item.due_at = Some(ui.app.model.now_ms() + 7_200_000);
    ui.h.engine.submit(item).unwrap();
    ui.settle().await;
    ui.enter();
    ui.pump();
    assert_eq!(ui.conv(), conv, "not deleted on the first y");
    let s = ui.screen(100, 30);
    assert!(
        s.contains("Changed meanwhile") && s.contains("Its 2 pending message(s)"),
        "{s}"
    );
    ui.enter();
    ui.pump();
    assert!(ui.app.model.convs.iter().all(|c| c.id != conv));
}

/// Another tock changes the draft while this one is idle: this composer
/// takes it (it kept its older text, sent that, and its next save brought
/// back what the other had sent). Text typed here and not saved yet is
/// never replaced.
#[tokio::test(start_paused = true)]
async fn an_idle_composer_takes_the_draft_another_tock_saved() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    let conv = ui.conv();
    let save_elsewhere = |ui: &Ui, text: &str| {
        let d = tock::store::Draft {
            text: text.into(),
            ..Default::default()
        };
        ui.store()
            .save_draft(conv, &d, ui.app.model.now_ms())
            .unwrap();
    };
    save_elsewhere(&ui, "one\n\ntwo, edited there");
    ui.app.on_engine(Event::External);
    assert_eq!(ui.app.composer_text(), "one\n\ntwo, edited there");
    // Typed here, not saved yet: kept; the save merges.
    ui.typ(" and here");
    save_elsewhere(&ui, "one\n\ntwo, edited there again");
    ui.app.on_engine(Event::External);
    assert_eq!(ui.app.composer_text(), "one\n\ntwo, edited there and here");
    tokio::time::advance(std::time::Duration::from_millis(400)).await;
    ui.app.on_tick();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    ui.pump();
    // Sent from the other tock (its draft cleared there): cleared here too.
    save_elsewhere(&ui, "");
    ui.app.on_engine(Event::External);
    assert_eq!(ui.app.composer_text(), "");
}

/// Another tock's ↑ edit of a message is its own: it is not taken into an
/// idle composer here (one Enter there resent the old text over the newer
/// exchange the other tock had just sent), and a resend of a message
/// edited meanwhile is refused with the text kept.
#[tokio::test(start_paused = true)]
async fn another_tocks_edit_stays_there_and_a_stale_resend_is_refused() {
    let mut ui = Ui::new(vec![
        Step::Reply(vec![text("first answer"), done()]),
        Step::Reply(vec![text("answer to the edit"), done()]),
    ]);
    ui.start().await;
    let conv = ui.conv();
    ui.say("the first question");
    ui.settle().await;
    let asked = ui
        .messages()
        .into_iter()
        .find(|m| m.role == Role::User)
        .unwrap()
        .id;
    // The other tock presses ↑: its draft is an edit of that message.
    let editing = tock::store::Draft {
        text: "the first question".into(),
        edit_of: Some(asked),
        stash: Some(String::new()),
        ..Default::default()
    };
    ui.store()
        .save_draft(conv, &editing, ui.app.model.now_ms())
        .unwrap();
    ui.app.on_engine(Event::External);
    let s = ui.screen(80, 24);
    assert!(!s.contains("editing"), "{s}");
    assert_eq!(ui.app.composer_text(), "");
    // It sends the edit (the old exchange is replaced, its draft cleared).
    let item = tock::store::NewItem::message(conv, "the first question, edited", None);
    ui.h.engine
        .edit_and_resend(conv, asked, item, &tock::store::Draft::default())
        .unwrap();
    ui.settle().await;
    assert_eq!(ui.app.composer_text(), "");
    // A resend of the message it replaced, from anywhere, is refused.
    let stale = tock::store::NewItem::message(conv, "the first question", None);
    let err =
        ui.h.engine
            .edit_and_resend(conv, asked, stale, &tock::store::Draft::default())
            .unwrap_err();
    assert!(
        err.to_string().contains("edited or replaced since"),
        "{err}"
    );
    // Here, ↑ edits the message that is current now.
    ui.press(KeyCode::Up);
    assert_eq!(ui.app.composer_text(), "the first question, edited");
}

/// Two tocks editing the same message: the one that resends second is
/// refused (nothing doubled), and its text comes back as a draft of its
/// own, which Enter sends: it stayed an edit of a message gone, refused at
/// every Enter, and Esc threw it away.
#[tokio::test(start_paused = true)]
async fn an_edit_refused_as_edited_elsewhere_comes_back_as_a_plain_draft() {
    let mut ui = Ui::new(vec![
        Step::Reply(vec![text("first answer"), done()]),
        Step::Reply(vec![text("their answer"), done()]),
        Step::Reply(vec![text("my answer"), done()]),
    ]);
    ui.start().await;
    let conv = ui.conv();
    ui.say("flaky think");
    ui.settle().await;
    let asked = ui.messages()[0].id;
    ui.press(KeyCode::Up);
    ui.typ(" S");
    // Another tock resends its own edit of it first.
    let theirs = tock::store::NewItem::message(conv, "flaky think R", None);
    ui.h.engine
        .edit_and_resend(conv, asked, theirs, &tock::store::Draft::default())
        .unwrap();
    ui.settle().await;
    ui.enter();
    ui.settle().await;
    assert!(
        ui.status_line().contains("edited or replaced since"),
        "{}",
        ui.status_line()
    );
    assert!(ui.app.composer.edit.is_none(), "no longer an edit");
    assert_eq!(ui.app.composer_text(), "flaky think S");
    assert!(!ui.screen(80, 24).contains("✎ editing"));
    // Enter sends it, as a message of its own.
    ui.enter();
    ui.settle().await;
    let users: Vec<String> = ui
        .messages()
        .into_iter()
        .filter(|m| m.role == Role::User && m.status != MessageStatus::Superseded)
        .map(|m| m.content)
        .collect();
    assert_eq!(users, ["flaky think R", "flaky think S"]);
}

/// An edit begun before something else came into the conversation (a
/// task's turn, a message from the CLI): the banner says the resend
/// replaces that too (it went silently).
#[tokio::test(start_paused = true)]
async fn an_edit_says_the_later_exchanges_its_resend_replaces() {
    let mut ui = Ui::new(vec![
        Step::Reply(vec![text("first answer"), done()]),
        Step::Reply(vec![text("later answer"), done()]),
    ]);
    ui.start().await;
    let conv = ui.conv();
    ui.say("remind me to stretch");
    ui.settle().await;
    ui.press(KeyCode::Up);
    assert!(ui.screen(120, 30).contains("✎ editing your last message"));
    ui.h.engine
        .send_text(conv, "[Scheduled task] stretch")
        .unwrap();
    ui.settle().await;
    let s = ui.screen(170, 30);
    assert!(
        s.contains("✎ editing an earlier message — Enter resends it and replaces the 1 exchange after it · Esc keeps them"),
        "{s}"
    );
    let s = ui.screen(120, 30);
    assert!(
        s.contains("✎ editing — Enter resends and replaces 1 later exchange · Esc keeps them"),
        "{s}"
    );
    let s = ui.screen(90, 20);
    assert!(
        s.contains("✎ editing — replaces 1 later · Esc keeps"),
        "{s}"
    );
    let s = ui.screen(60, 20);
    assert!(s.contains("✎ editing (+1 later)"), "{s}");
}

/// Two tocks typing a draft in one conversation: the one that saves last
/// merges the other's text in rather than saving over it (the other's was
/// lost), and shows both.
#[tokio::test(start_paused = true)]
async fn a_draft_saved_over_another_tocks_keeps_both_texts() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    let conv = ui.conv();
    // Another tock saves its draft here after this one loaded (an empty) one.
    let theirs = tock::store::Draft {
        text: "typed in the other tock".into(),
        ..Default::default()
    };
    ui.store()
        .save_draft(conv, &theirs, ui.app.model.now_ms())
        .unwrap();
    ui.typ("typed here");
    tokio::time::advance(std::time::Duration::from_millis(400)).await;
    ui.app.on_tick();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    ui.pump();
    let stored = ui.store().draft(conv).unwrap().text;
    assert_eq!(stored, "typed here\n\ntyped in the other tock");
    assert_eq!(ui.app.composer_text(), stored, "both shown here");
    assert!(ui.status_line().contains("another tock changed this draft"));
    // Typing on saves over the merge as usual (nothing doubled).
    ui.typ(" and more");
    tokio::time::advance(std::time::Duration::from_millis(400)).await;
    ui.app.on_tick();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    ui.pump();
    assert_eq!(
        ui.store().draft(conv).unwrap().text,
        "typed here\n\ntyped in the other tock and more"
    );
}

/// `/at tue evening 7pm call mom` is Tuesday 19:00 with the text "call
/// mom" (`tomorrow evening 7pm` was 09:00 with the text "evening 7pm call
/// mom"); the preview names the time and the text it will send.
#[tokio::test(start_paused = true)]
async fn at_a_part_of_the_day_with_a_clock_time_is_that_time_and_the_rest_is_the_text() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    // T0 is Mon 30 Nov 2026 00:53:20 UTC (TZ=UTC): before 04:00,
    // `tomorrow evening 7pm` is asked about (this evening, or Tuesday's?).
    ui.typ("/at tomorrow evening 7pm call mom");
    let s = ui.screen(120, 40);
    assert!(s.contains("✗ \"tomorrow evening 7pm\" at 00:53"), "{s}");
    ui.app.set_composer("");
    ui.typ("/at tue evening 7pm call mom");
    let s = ui.screen(120, 40);
    assert!(
        s.contains("⏰ sends Tue 1 Dec 19:00, in 1d 18h · \"call mom\""),
        "{s}"
    );
    // In a narrow window the text is cut to what is left.
    ui.app.sidebar_pref = Some(false);
    let s = ui.screen(60, 15);
    assert!(
        s.contains("╭ ⏰ sends Tue 1 Dec 19:00, in 1d 18h · \"call mom\" ─"),
        "{s}"
    );
    ui.typ(" about the weekend");
    let s = ui.screen(60, 15);
    assert!(
        s.contains("╭ ⏰ sends Tue 1 Dec 19:00, in 1d 18h · \"call mom about…\" ─╮"),
        "{s}"
    );
    ui.erase(" about the weekend".len());
    ui.app.sidebar_pref = Some(true);
    ui.enter();
    let rows = ui.rows();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].text, "call mom");
    let due = chrono::DateTime::from_timestamp_millis(rows[0].due_at.unwrap()).unwrap();
    assert_eq!(due.format("%a %d %b %H:%M").to_string(), "Tue 01 Dec 19:00");
    assert_eq!(ui.app.composer_text(), "");
    // `/every` reads parts of the day too.
    ui.say("/every sunday night check backups");
    let series = ui.h.engine.list_series(false).unwrap();
    assert_eq!(
        (
            series[0].description.as_str(),
            series[0].series.text.as_str()
        ),
        ("every Sunday at 21:00", "check backups")
    );
}

/// A line break after the time ends it: what follows is the message, even
/// when it starts with a day (`/at 9am`, Alt+Enter, `friday report draft`
/// was sent on Friday with the text "report draft").
#[tokio::test(start_paused = true)]
async fn a_line_break_after_the_time_ends_it() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    // T0 is Mon 30 Nov 2026 00:53:20 UTC (TZ=UTC).
    ui.typ("/at 9am");
    ui.key(KeyCode::Enter, KeyModifiers::ALT);
    ui.typ("friday report draft");
    let s = ui.screen(120, 40);
    assert!(s.contains("⏰ sends Mon 30 Nov 09:00, in 8h 6m"), "{s}");
    ui.enter();
    let rows = ui.rows();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].text, "friday report draft");
    let due = chrono::DateTime::from_timestamp_millis(rows[0].due_at.unwrap()).unwrap();
    assert_eq!(due.format("%a %d %b %H:%M").to_string(), "Mon 30 Nov 09:00");
    // `/every` likewise: the days on the next line are text.
    ui.typ("/every 9am");
    ui.key(KeyCode::Enter, KeyModifiers::ALT);
    ui.typ("weekdays are long");
    ui.enter();
    let series = ui.h.engine.list_series(false).unwrap();
    assert_eq!(
        (
            series[0].description.as_str(),
            series[0].series.text.as_str()
        ),
        ("every day at 09:00", "weekdays are long")
    );
}

/// Text that starts with more time (`/at 9am evening call`, `/every
/// weekday at 9am and 5pm x`) is refused with a one-line question and
/// the composer keeps it, as `fri 5 apples` is; `--` sends it as text.
#[tokio::test(start_paused = true)]
async fn at_text_that_starts_with_more_time_is_asked_about_and_kept() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.typ("/at 9am evening call");
    let s = ui.screen(120, 40);
    assert!(
        s.contains("✗ \"evening\" after \"9am\" looks like more of the time"),
        "{s}"
    );
    ui.enter();
    assert!(ui.rows().is_empty(), "{:?}", ui.rows());
    assert_eq!(ui.app.composer_text(), "/at 9am evening call");
    let (msg, is_err) = ui.app.status_pair();
    assert!(is_err, "{msg}");
    assert_eq!(
        msg,
        "\"evening\" after \"9am\" looks like more of the time — say it all before the text, or write \"9am -- evening …\" to send it as text"
    );
    ui.app.set_composer("");
    ui.say("/every weekday at 9am and 5pm x");
    assert!(ui.h.engine.list_series(false).unwrap().is_empty());
    assert_eq!(ui.app.composer_text(), "/every weekday at 9am and 5pm x");
    let (msg, is_err) = ui.app.status_pair();
    assert!(is_err, "{msg}");
    assert_eq!(
        msg,
        "\"and 5pm\" after \"weekday at 9am\": one time per rule — make two, e.g. /every weekday at 9am … and /every weekday 5pm …, or write \"weekday at 9am -- and 5pm …\" to send it as text"
    );
    ui.app.set_composer("");
    ui.say("/at 9am -- evening call");
    let rows = ui.rows();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].text, "evening call");
}

/// Two windows on one conversation show one merged draft; Enter in both at
/// nearly the same moment sends it once. The second send finds the draft
/// gone with the same text just sent, says so, and keeps the text here.
#[tokio::test(start_paused = true)]
async fn one_draft_sent_from_two_windows_at_once_goes_once() {
    let mut ui = Ui::new(vec![reply_step("ok")]);
    ui.start().await;
    let conv = ui.conv();
    ui.typ("the shared draft");
    tokio::time::advance(std::time::Duration::from_millis(400)).await;
    ui.app.on_tick();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    ui.pump();
    assert_eq!(ui.store().draft(conv).unwrap().text, "the shared draft");
    // The other window sends it first; this one has not heard yet.
    ui.h.engine
        .submit_clearing_draft(NewItem::message(conv, "the shared draft", None), None)
        .unwrap();
    ui.enter();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    ui.pump();
    let sent: Vec<_> = ui
        .rows()
        .into_iter()
        .filter(|r| r.user_text().as_deref() == Some("the shared draft"))
        .collect();
    assert_eq!(sent.len(), 1, "sent once");
    assert!(
        ui.status_line().contains("just sent from another window"),
        "{}",
        ui.status_line()
    );
    // A text sent again on purpose, later or typed anew, goes.
    tokio::time::advance(std::time::Duration::from_secs(11)).await;
    ui.settle().await;
    ui.app.set_composer("the shared draft");
    ui.enter();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    ui.pump();
    let sent = ui
        .rows()
        .into_iter()
        .filter(|r| r.user_text().as_deref() == Some("the shared draft"))
        .count();
    assert_eq!(sent, 2, "sent again on purpose");
}
