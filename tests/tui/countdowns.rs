//! Countdowns and the ticks that draw them.

use super::*;

/// What tock sent at its time is marked in the chat: a scheduled message
/// and a series' occurrence (they read like messages just typed).
#[tokio::test(start_paused = true)]
async fn messages_sent_at_their_time_are_marked_in_the_chat() {
    let ok = || Step::Reply(vec![text("ok"), done()]);
    let mut ui = Ui::new(vec![ok(), ok(), ok()]);
    ui.start().await;
    ui.say("typed now");
    ui.settle().await;
    ui.say("/later 1m check the build");
    ui.say("/every 2 minutes tick");
    for _ in 0..5 {
        tokio::time::advance(std::time::Duration::from_secs(30)).await;
        ui.settle().await;
    }
    assert_eq!(
        ui.user_texts(),
        vec!["typed now", "check the build", "tick"]
    );
    ui.app.model.reload_messages();
    let s = ui.screen(100, 30);
    let header = |text: &str| {
        let lines: Vec<&str> = s.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.contains(text))
            .unwrap_or_else(|| panic!("{text}:\n{s}"));
        lines[at - 1].to_string()
    };
    assert!(header("check the build").contains("⏰ scheduled"), "{s}");
    assert!(header("  tick").contains("↻ recurring"), "{s}");
    let typed = header("typed now");
    assert!(!typed.contains("⏰") && !typed.contains("↻"), "{s}");
    // F3 says which message went, not only where.
    let notices: Vec<String> = ui.app.notices.iter().map(|n| n.text.clone()).collect();
    assert!(
        notices
            .iter()
            .any(|n| n.starts_with("scheduled message sent in") && n.ends_with(": check the build")),
        "{notices:?}"
    );
    assert!(
        notices
            .iter()
            .any(|n| n.starts_with("recurring message sent in") && n.ends_with(": tick")),
        "{notices:?}"
    );
}

/// Advance the clock to `at` and tick there, as the app's loop does.
async fn tick_at(ui: &mut Ui, at: i64) {
    let now = ui.h.engine.now_ms();
    assert!(at > now, "a tick at {at} asked for at {now}");
    tokio::time::advance(std::time::Duration::from_millis((at - now) as u64)).await;
    ui.app.on_tick();
}

/// A provider that takes the request and does not answer: after a few
/// seconds the bubble says how long it has waited, and that changes once a
/// second (a tick for each, and no other); once the reply has come, no
/// timer is left (an idle screen draws no frame).
#[tokio::test(start_paused = true)]
async fn a_send_the_model_does_not_answer_shows_how_long_it_has_waited() {
    let (mut ui, gate) = Ui::slow_to_accept().await;
    ui.say("is anyone there?");
    ui.settle().await;
    let item = ui.rows()[0].clone();
    assert_eq!(item.status, Status::Sending);
    let since = item.updated_at;
    let bubble = |s: &str| {
        s.lines()
            .find(|l| l.contains("◌ sending…"))
            .map(|l| l.trim().to_string())
            .unwrap_or_default()
    };
    let s = ui.screen(80, 24);
    assert!(
        bubble(&s).ends_with("◌ sending…"),
        "at first, no time:\n{s}"
    );
    // The status line's expiry is a timer of its own: not this one's.
    ui.app.status = None;
    // The first tick is when the wait first shows…
    let at = ui.app.next_tick_at().unwrap();
    assert_eq!(at, since + 3_000);
    tick_at(&mut ui, at).await;
    assert!(bubble(&ui.screen(80, 24)).ends_with("◌ sending… 3s"));
    // … then one a second, each drawing the next second.
    for secs in 4..=12 {
        let at = ui.app.next_tick_at().unwrap();
        assert_eq!(at, since + secs * 1_000);
        tick_at(&mut ui, at).await;
        let s = ui.screen(80, 24);
        assert!(bubble(&s).ends_with(&format!("◌ sending… {secs}s")), "{s}");
    }
    // At 60×15 it shows too; past a minute, in minutes and seconds.
    tokio::time::advance(std::time::Duration::from_millis(63_000)).await;
    ui.app.on_tick();
    ui.app.sidebar_pref = Some(false);
    let s = ui.screen(60, 15);
    assert!(bubble(&s).ends_with("◌ sending… 1m 15s"), "{s}");
    // The model answers: the bubble goes, and with it its timer.
    gate.notify_one();
    ui.settle().await;
    assert_eq!(ui.row(item.id).status, Status::Sent);
    assert!(!ui.screen(80, 24).contains("sending…"));
    ui.app.status = None;
    assert_eq!(ui.app.next_tick_at(), None, "idle: no timer at all");
}

#[tokio::test(start_paused = true)]
async fn countdowns_tick_on_whole_seconds_and_never_show_a_past_time() {
    let mut ui = Ui::new(vec![]);
    assert_eq!(ui.app.next_tick_at(), None, "idle: no timer at all");
    ui.say("/later 3h far away");
    // Only the countdowns' ticks: the status line's expiry is not one.
    ui.app.status = None;
    let now = ui.h.engine.now_ms();
    // "in 3h" becomes "in 2h 59m" at the clock's next whole minute (where
    // every label of an hour or more changes, and the engine's clock check
    // runs)…
    assert!(ui.screen(100, 24).contains("in 3h"));
    let at = ui.app.next_tick_at().unwrap();
    assert!(at - now <= 60_000 && at % 60_000 == 0, "{now} {at}");
    tick_at(&mut ui, at).await;
    assert!(ui.screen(100, 24).contains("in 2h 59m"));
    // … and then changes once a minute, on the whole minute.
    let at = ui.app.next_tick_at().unwrap();
    assert_eq!(at - ui.h.engine.now_ms(), 60_000);
    // Created between two whole seconds, it shows seconds below an hour and
    // ticks with the others, on the next whole second.
    tokio::time::advance(std::time::Duration::from_millis(437)).await;
    ui.say("/later 90s soon");
    ui.app.status = None;
    let now = ui.h.engine.now_ms();
    let at = ui.app.next_tick_at().unwrap();
    assert!(at - now <= 1_000 && at % 1_000 == 0, "{now} {at}");
    assert!(ui.screen(100, 24).contains("in 1m 30s"));
    // Walked tick by tick, it counts down to "now" up to a second early, and
    // the due instant (between two whole seconds) is a tick of its own.
    let due = ui
        .rows()
        .iter()
        .find(|i| i.text == "soon")
        .and_then(|i| i.due_at)
        .unwrap();
    assert_ne!(due % 1_000, 0);
    loop {
        let at = ui.app.next_tick_at().unwrap();
        assert!(at <= due || at % 1_000 == 0, "{at}");
        tick_at(&mut ui, at).await;
        if at >= due {
            assert_eq!(at, due, "a tick at the due instant");
            break;
        }
        let s = ui.screen(100, 24);
        let soon = s.lines().filter(|l| l.contains("soon"));
        assert!(soon.clone().count() > 0, "{s}");
        assert!(
            soon.clone()
                .all(|l| !l.contains("in 0s") && !l.contains("ago")),
            "{s}"
        );
    }
    // One clock: after the time has passed nothing still says "in …s".
    let s = ui.screen(100, 24);
    assert!(
        !s.contains("in 1m") && !s.contains("in 1s") && !s.contains("in 0s"),
        "{s}"
    );
    assert!(
        s.contains("⏳ queued · soon"),
        "due now, it is simply queued:\n{s}"
    );
    // F2 ticks too while open.
    ui.press(KeyCode::F(2));
    assert!(ui.app.next_tick_at().is_some());
}

#[tokio::test(start_paused = true)]
async fn twenty_countdowns_at_different_offsets_tick_together_once_a_second() {
    let mut ui = Ui::new(vec![]);
    let conv = ui.conv();
    let start = ui.h.engine.now_ms();
    // 20 items due in 10–50 s, each at its own millisecond offset: had each
    // label its own tick, they would redraw the screen 20 times a second.
    for i in 0..20 {
        let mut it = NewItem::new(conv, Kind::Message, format!("countdown {i}"));
        it.due_at = Some(start + 10_000 + 2_000 * i + (137 * i + 11) % 1_000);
        ui.store().enqueue(&it, start).unwrap();
    }
    // And one whose due instant comes in the walk, between two whole seconds.
    let due = start + 4_321;
    let mut it = NewItem::new(conv, Kind::Message, "due during the walk");
    it.due_at = Some(due);
    ui.store().enqueue(&it, start).unwrap();
    ui.app.on_engine(Event::Outbox);
    // The strip counts them down, and F2 too.
    ui.press(KeyCode::F(2));
    ui.render(100, 40);
    assert!(ui.screen(100, 40).contains("countdown 19"));
    ui.app.status = None;
    // Walk 10 s of the clock from tick to tick, drawing each time.
    let mut ticks = std::collections::BTreeSet::new();
    loop {
        let at = ui.app.next_tick_at().unwrap();
        if at > start + 10_000 {
            break;
        }
        ticks.insert(at);
        tick_at(&mut ui, at).await;
        ui.render(100, 40);
    }
    assert!(ticks.len() <= 12, "{} ticks in 10 s", ticks.len());
    let (whole, other): (Vec<i64>, Vec<i64>) = ticks.into_iter().partition(|t| t % 1_000 == 0);
    assert!(
        (10..=11).contains(&whole.len()),
        "one tick a second: {whole:?}"
    );
    assert_eq!(other, [due], "besides whole seconds, only the due instant");
}

#[tokio::test(start_paused = true)]
async fn countdowns_above_an_hour_at_different_offsets_tick_together_once_a_minute() {
    let mut ui = Ui::new(vec![]);
    let conv = ui.conv();
    let start = ui.h.engine.now_ms();
    // 20 items 1 h 15 min to 3 days ahead, each due at its own second and
    // millisecond: had each label its own tick, an idle screen would redraw
    // at 20 instants a minute.
    for i in 0..20 {
        let mut it = NewItem::new(conv, Kind::Message, format!("far {i}"));
        it.due_at = Some(start + 75 * 60_000 + i * 3 * 3_600_000 + (i * 2_971 + 13) % 60_000);
        ui.store().enqueue(&it, start).unwrap();
    }
    ui.app.on_engine(Event::Outbox);
    // The strip counts them down, and F2 too.
    ui.press(KeyCode::F(2));
    ui.render(100, 40);
    assert!(ui.screen(100, 40).contains("far 19"));
    ui.app.status = None;
    // Walk 10 minutes of the clock from tick to tick, drawing each time.
    let mut ticks = Vec::new();
    loop {
        let at = ui.app.next_tick_at().unwrap();
        if at > start + 10 * 60_000 {
            break;
        }
        ticks.push(at);
        tick_at(&mut ui, at).await;
        ui.render(100, 40);
    }
    assert!(
        ticks.iter().all(|t| t % 60_000 == 0),
        "only whole minutes: {ticks:?}"
    );
    assert!((10..=11).contains(&ticks.len()), "once a minute: {ticks:?}");
    // The nearest comes under an hour at a whole minute too; from there it
    // shows seconds, and ticks once a second.
    for _ in 0..10 {
        if ui.screen(100, 40).contains("in 59m") {
            break;
        }
        let at = ui.app.next_tick_at().unwrap();
        assert_eq!(at % 60_000, 0, "{at}");
        tick_at(&mut ui, at).await;
    }
    let s = ui.screen(100, 40);
    assert!(s.contains("in 59m"), "{s}");
    let now = ui.h.engine.now_ms();
    assert_eq!(now % 60_000, 0, "{now}");
    assert_eq!(ui.app.next_tick_at(), Some(now + 1_000));
}
