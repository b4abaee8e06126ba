//! Recurring series on the engine, with tokio's paused clock and a
//! `ManualClock` in Europe/Berlin: occurrences at the right local times,
//! catch-up after downtime, coalescing in a busy conversation, two engines on
//! one database, the operations front ends call, and the model's tools.

mod common;

use std::sync::Arc;
use std::time::Duration;

use chrono::TimeZone;
use chrono_tz::Europe::Berlin;
use common::*;
use tock::config::{Config, ConfigSource};
use tock::engine::{Engine, Event, ManualClock, NoticeKind, Options};
use tock::llm::{StreamEvent, ToolCall};
use tock::recur::Zone;
use tock::store::{Kind, Role, SeriesStatus, SeriesStep, Status, Store};

fn berlin_ms(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> i64 {
    Berlin
        .with_ymd_and_hms(y, mo, d, h, mi, 0)
        .unwrap()
        .timestamp_millis()
}

fn local(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap()
        .with_timezone(&Berlin)
        .format("%Y-%m-%d %H:%M:%S%.3f %z")
        .to_string()
}

struct Rig {
    engine: Engine,
    clock: Arc<ManualClock>,
    provider: Arc<Scripted>,
    store: Store,
}

/// An engine in Berlin on `path`, its clock starting at `start_ms`; the
/// clock check is an hour so simulated days pass in few wake-ups.
fn rig(path: &std::path::Path, start_ms: i64, provider: Arc<Scripted>) -> Rig {
    rig_in(path, start_ms, provider, Zone::Named(Berlin))
}

/// The same, in `zone`.
fn rig_in(path: &std::path::Path, start_ms: i64, provider: Arc<Scripted>, zone: Zone) -> Rig {
    let store = Store::open(path).unwrap();
    let clock = Arc::new(ManualClock::new(start_ms));
    // Replies here are held open for minutes on purpose (a busy
    // conversation): the stream deadline is not what these tests are about.
    let mut cfg = Config::default();
    cfg.turn.stream_timeout_secs = 86_400;
    cfg.turn.max_reply_secs = 86_400;
    let config = Arc::new(ConfigSource::from_config(cfg).with_provider(provider.clone()));
    let engine = Engine::new(
        store.clone(),
        config,
        clock.clone(),
        Options {
            watch_db: false,
            zone,
            clock_check: Duration::from_secs(3600),
            ..Options::default()
        },
    );
    Rig {
        engine,
        clock,
        provider,
        store,
    }
}

fn conv(r: &Rig) -> i64 {
    r.store
        .create_conversation(Some("c"), "user", r.engine.now_ms())
        .unwrap()
}

fn users(r: &Rig, conv: i64) -> Vec<tock::store::Message> {
    r.store
        .messages(conv)
        .unwrap()
        .into_iter()
        .filter(|m| m.role == Role::User)
        .collect()
}

fn notices(r: &Rig, conv: i64) -> Vec<String> {
    r.store
        .messages(conv)
        .unwrap()
        .into_iter()
        .filter(|m| m.role == Role::Notice)
        .map(|m| m.content)
        .collect()
}

#[tokio::test(start_paused = true)]
async fn daily_series_over_ten_days_is_sent_ten_times_at_nine_local_across_dst() {
    let dir = tempfile::tempdir().unwrap();
    // Tue 20 Oct 2026 01:00 CEST; clocks go back on Sun 25 Oct.
    let start = berlin_ms(2026, 10, 20, 1, 0);
    let r = rig(&dir.path().join("t.db"), start, Scripted::new(vec![]));
    let c = conv(&r);
    let s = r.engine.parse_schedule("every day at 9am").unwrap();
    let id = r
        .engine
        .create_series(c, Kind::Message, "standup", &s)
        .unwrap();
    r.engine.start();
    tokio::time::sleep(Duration::from_secs(10 * 86_400)).await;
    settle().await;
    assert!(r.engine.now_ms() - start >= 10 * 86_400_000);
    let occ = r.store.series_occurrences(id).unwrap();
    assert_eq!(occ.len(), 10, "one occurrence per day");
    let sent: Vec<String> = occ
        .iter()
        .map(|o| {
            assert_eq!(o.status, Status::Sent);
            let sent = o.sent_at.unwrap();
            let at = o.occurrence_at.unwrap();
            assert!((at..at + 50).contains(&sent), "latency {}", sent - at);
            local(at)
        })
        .collect();
    let want: Vec<String> = (20..30)
        .map(|d| {
            let off = if d < 25 { "+0200" } else { "+0100" };
            format!("2026-10-{d} 09:00:00.000 {off}")
        })
        .collect();
    assert_eq!(sent, want);
    assert_eq!(
        users(&r, c)
            .iter()
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>(),
        vec!["standup"; 10]
    );
    let series = r.store.series(id).unwrap().unwrap();
    assert_eq!((series.occurrences, series.skipped), (10, 0));
    assert_eq!(series.next_due_at, Some(berlin_ms(2026, 10, 30, 9, 0)));
    assert!(notices(&r, c).is_empty());
}

/// A series keeps the zone it was made in: made in Berlin, it fires at
/// 09:00 Berlin time when a process in UTC (a daemon under another `TZ`)
/// dispatches and lists it; one re-ruled there follows UTC from then on.
#[tokio::test(start_paused = true)]
async fn a_series_fires_in_the_zone_it_was_made_in_whoever_dispatches_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let start = berlin_ms(2026, 12, 1, 1, 0);
    let made = rig(&path, start, Scripted::new(vec![]));
    let c = conv(&made);
    let s = made.engine.parse_schedule("every day at 9am").unwrap();
    let id = made
        .engine
        .create_series(c, Kind::Message, "standup", &s)
        .unwrap();
    assert_eq!(
        made.store.series(id).unwrap().unwrap().zone.as_deref(),
        Some("Europe/Berlin")
    );
    drop(made);
    let r = rig_in(&path, start, Scripted::new(vec![]), Zone::Utc);
    let view = r.engine.series_view(id).unwrap().unwrap();
    // Its clock time is Berlin's, which lists here (in UTC) say; every
    // list shows this description.
    assert_eq!(view.description, "every day at 09:00 (Europe/Berlin time)");
    assert_eq!(
        view.upcoming.iter().map(|t| local(*t)).collect::<Vec<_>>()[..2],
        [
            "2026-12-01 09:00:00.000 +0100".to_string(),
            "2026-12-02 09:00:00.000 +0100".to_string()
        ]
    );
    r.engine.start();
    tokio::time::sleep(Duration::from_secs(3 * 86_400)).await;
    settle().await;
    let at: Vec<String> = r
        .store
        .series_occurrences(id)
        .unwrap()
        .iter()
        .map(|o| local(o.occurrence_at.unwrap()))
        .collect();
    assert_eq!(
        at,
        [
            "2026-12-01 09:00:00.000 +0100",
            "2026-12-02 09:00:00.000 +0100",
            "2026-12-03 09:00:00.000 +0100"
        ]
    );
    // Given a new rule in UTC, its times are UTC's.
    r.engine.edit_series_rule(id, "every day at 8am").unwrap();
    let series = r.store.series(id).unwrap().unwrap();
    assert_eq!(series.zone.as_deref(), Some("UTC"));
    let view = r.engine.series_view(id).unwrap().unwrap();
    assert_eq!(view.description, "every day at 08:00");
    // An interval is the same wherever it is read.
    let berlin = rig(&path, start, Scripted::new(vec![]));
    let every = berlin.engine.parse_schedule("every 2h").unwrap();
    let other = berlin
        .engine
        .create_series(c, Kind::Message, "stretch", &every)
        .unwrap();
    let view = r.engine.series_view(other).unwrap().unwrap();
    assert_eq!(view.description, "every 2 hours");
    assert_eq!(
        local(series.next_due_at.unwrap()),
        "2026-12-04 09:00:00.000 +0100"
    );
}

#[tokio::test(start_paused = true)]
async fn idle_with_series_wakes_only_when_one_is_due_or_at_the_clock_check() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("t.db")).unwrap();
    let clock = Arc::new(ManualClock::new(berlin_ms(2026, 12, 1, 6, 0)));
    let provider = Scripted::new(vec![]);
    // Replies here are held open for minutes on purpose (a busy
    // conversation): the stream deadline is not what these tests are about.
    let mut cfg = Config::default();
    cfg.turn.stream_timeout_secs = 86_400;
    cfg.turn.max_reply_secs = 86_400;
    let config = Arc::new(ConfigSource::from_config(cfg).with_provider(provider.clone()));
    // The production clock check (30 s).
    let engine = Engine::new(
        store.clone(),
        config,
        clock,
        Options {
            watch_db: false,
            zone: Zone::Named(Berlin),
            ..Options::default()
        },
    );
    let c = store
        .create_conversation(Some("c"), "user", engine.now_ms())
        .unwrap();
    // Five series, the first due at 09:00 (3 h away), others later.
    for (i, expr) in [
        "every day at 9am",
        "every weekday 10am",
        "every 4h",
        "cron \"0 12 * * *\"",
        "every monday 8:00",
    ]
    .iter()
    .enumerate()
    {
        let s = engine.parse_schedule(expr).unwrap();
        engine
            .create_series(c, Kind::Message, &format!("s{i}"), &s)
            .unwrap();
    }
    engine.start();
    settle().await;
    let before = engine.scheduler_passes();
    tokio::time::sleep(Duration::from_secs(2 * 3600 + 59 * 60)).await;
    settle().await;
    let idle = engine.scheduler_passes() - before;
    // 2 h 59 min of 30 s clock checks is 358 wake-ups; nothing else.
    assert!((357..=360).contains(&idle), "{idle} wake-ups");
    assert_eq!(provider.count(), 0);
    tokio::time::sleep(Duration::from_secs(61)).await;
    settle().await;
    let sent: Vec<_> = store
        .messages(c)
        .unwrap()
        .into_iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.content)
        .collect();
    assert_eq!(sent, ["s0"], "09:00 came: the first series fired");
}

#[tokio::test(start_paused = true)]
async fn a_week_of_downtime_gives_one_catch_up_and_six_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let start = berlin_ms(2026, 12, 1, 8, 0);
    let (c, id) = {
        let r = rig(&path, start, Scripted::new(vec![]));
        let c = conv(&r);
        let s = r.engine.parse_schedule("every day at 9am").unwrap();
        (
            c,
            r.engine
                .create_series(c, Kind::Message, "summarise my notes", &s)
                .unwrap(),
        )
        // Never started: tock is not running from here on.
    };
    // Back on the 7th at 10:00: the 1st..7th at 09:00 were due.
    let r = rig(&path, berlin_ms(2026, 12, 7, 10, 0), Scripted::new(vec![]));
    let mut events = r.engine.subscribe();
    r.engine.start();
    settle().await;
    let occ = r.store.series_occurrences(id).unwrap();
    assert_eq!(occ.len(), 1, "one catch-up, not a flood");
    assert_eq!(occ[0].occurrence_at, Some(berlin_ms(2026, 12, 7, 9, 0)));
    assert_eq!(occ[0].status, Status::Sent);
    assert_eq!(users(&r, c).len(), 1);
    let n = notices(&r, c);
    assert_eq!(n.len(), 2, "{n:?}");
    assert!(n[0].contains("6 occurrences skipped"), "{}", n[0]);
    // The one sent says it went an hour after its time.
    assert_eq!(n[1], "the next message was sent 1h after it was due");
    let mut told = Vec::new();
    while let Ok(e) = events.try_recv() {
        if let Event::Notice(n) = e {
            told.push(n);
        }
    }
    let skipped: Vec<_> = told
        .iter()
        .filter(|n| n.text.contains("6 skipped"))
        .collect();
    assert_eq!(skipped.len(), 1, "{told:?}");
    assert_eq!(skipped[0].kind, NoticeKind::Expired);
    assert_eq!(skipped[0].conversation_id, Some(c));
    // Named by what it sends, not by an id the chat never shows.
    assert!(
        skipped[0]
            .text
            .starts_with("recurring \"summarise my notes\": "),
        "{}",
        skipped[0].text
    );
    assert!(
        !skipped[0].text.contains("press"),
        "no key hints in engine text"
    );
    let s = r.store.series(id).unwrap().unwrap();
    assert_eq!((s.occurrences, s.skipped), (1, 6));
    assert_eq!(s.next_due_at, Some(berlin_ms(2026, 12, 8, 9, 0)));
}

/// Back a moment before the next occurrence: the one missed a minute ago
/// is not sent 0.2 s before the next, which serves for both.
#[tokio::test(start_paused = true)]
async fn back_just_before_the_next_occurrence_sends_once_not_twice() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let (c, id, first) = {
        let r = rig(&path, berlin_ms(2026, 12, 1, 8, 0), Scripted::new(vec![]));
        let c = conv(&r);
        let s = r.engine.parse_schedule("every 1 minute").unwrap();
        let id = r
            .engine
            .create_series(c, Kind::Message, "check the build", &s)
            .unwrap();
        let first = r.store.series(id).unwrap().unwrap().next_due_at.unwrap();
        (c, id, first)
    };
    // Away for ten occurrences; back 0.2 s before the eleventh.
    let eleventh = first + 10 * 60_000;
    let r = rig(&path, eleventh - 200, Scripted::new(vec![]));
    r.engine.start();
    settle().await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    settle().await;
    let occ = r.store.series_occurrences(id).unwrap();
    let at: Vec<_> = occ.iter().map(|o| o.occurrence_at.map(local)).collect();
    assert_eq!(at, vec![Some(local(eleventh))], "one send, on time");
    assert_eq!(users(&r, c).len(), 1);
    let s = r.store.series(id).unwrap().unwrap();
    assert_eq!((s.occurrences, s.skipped), (1, 10));
    assert!(notices(&r, c)[0].contains("10 occurrences skipped"));
    // Back half a minute after one instead: that one is sent late, once.
    drop(r);
    let r = rig(&path, eleventh + 5 * 60_000 + 20_000, Scripted::new(vec![]));
    r.engine.start();
    settle().await;
    let occ = r.store.series_occurrences(id).unwrap();
    assert_eq!(occ.len(), 2);
    assert_eq!(occ[1].occurrence_at, Some(eleventh + 5 * 60_000));
}

#[tokio::test(start_paused = true)]
async fn downtime_beyond_the_grace_sends_nothing_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let (c, id) = {
        let r = rig(&path, berlin_ms(2026, 12, 1, 8, 0), Scripted::new(vec![]));
        let c = conv(&r);
        let s = r.engine.parse_schedule("every day at 9am").unwrap();
        (
            c,
            r.engine.create_series(c, Kind::Message, "x", &s).unwrap(),
        )
    };
    // The 3rd at 22:00: the latest (09:00) is 13 h old, beyond the 12 h grace.
    let r = rig(&path, berlin_ms(2026, 12, 3, 22, 0), Scripted::new(vec![]));
    r.engine.start();
    settle().await;
    assert!(r.store.series_occurrences(id).unwrap().is_empty());
    assert!(notices(&r, c)[0].contains("3 occurrences skipped"));
    assert_eq!(r.provider.count(), 0);
    assert_eq!(
        r.store.series(id).unwrap().unwrap().next_due_at,
        Some(berlin_ms(2026, 12, 4, 9, 0))
    );
}

#[tokio::test(start_paused = true)]
async fn a_busy_conversation_coalesces_waiting_occurrences() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Arc::new(tokio::sync::Notify::new());
    let start = berlin_ms(2026, 12, 1, 8, 0);
    let r = rig(
        &dir.path().join("t.db"),
        start,
        Scripted::new(vec![Step::Hold(vec![text("long")], gate.clone())]),
    );
    let c = conv(&r);
    r.engine.start();
    r.engine.send_text(c, "a long question").unwrap();
    settle().await;
    assert!(r.engine.is_busy(c));
    let s = r.engine.parse_schedule("every 1 minute").unwrap();
    let id = r
        .engine
        .create_series(c, Kind::Message, "ping", &s)
        .unwrap();
    // Three occurrences come due while the reply streams.
    tokio::time::sleep(Duration::from_secs(3 * 60 + 5)).await;
    settle().await;
    let occ = r.store.series_occurrences(id).unwrap();
    let states: Vec<_> = occ.iter().map(|o| o.status).collect();
    assert_eq!(
        states,
        [Status::Canceled, Status::Canceled, Status::Pending]
    );
    assert!(
        occ[0]
            .last_error
            .as_deref()
            .unwrap()
            .contains("newer occurrence")
    );
    gate.notify_one();
    settle().await;
    let texts: Vec<_> = users(&r, c).into_iter().map(|m| m.content).collect();
    assert_eq!(texts, ["a long question", "ping"], "not stacked");
    let s = r.store.series(id).unwrap().unwrap();
    assert_eq!((s.occurrences, s.skipped), (1, 2));
    assert!(notices(&r, c).iter().any(|n| n.contains("still waiting")));
}

/// Ending a series sends nothing more, and pausing one nothing until it is
/// resumed: an occurrence already due and still waiting for its
/// conversation (here a reply streams; a tool call awaiting approval holds
/// it the same way) is canceled with it (a paused one was sent while the
/// series said "paused").
#[tokio::test(start_paused = true)]
async fn ending_or_pausing_a_series_cancels_an_occurrence_still_waiting() {
    for (end, why, status) in [
        (true, "its recurring series was ended", SeriesStatus::Ended),
        (
            false,
            "its recurring series was paused",
            SeriesStatus::Paused,
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let gate = Arc::new(tokio::sync::Notify::new());
        let start = berlin_ms(2026, 12, 1, 8, 0);
        let r = rig(
            &dir.path().join("t.db"),
            start,
            Scripted::new(vec![Step::Hold(vec![text("long")], gate.clone())]),
        );
        let c = conv(&r);
        r.engine.start();
        r.engine.send_text(c, "a long question").unwrap();
        settle().await;
        let s = r.engine.parse_schedule("every 1 minute").unwrap();
        let id = r
            .engine
            .create_series(c, Kind::Message, "ping", &s)
            .unwrap();
        tokio::time::sleep(Duration::from_secs(65)).await;
        settle().await;
        let occ = r.store.series_occurrences(id).unwrap();
        assert_eq!(
            occ.iter().map(|o| o.status).collect::<Vec<_>>(),
            [Status::Pending]
        );
        if end {
            r.engine.end_series(id).unwrap();
        } else {
            r.engine.pause_series(id).unwrap();
        }
        let occ = r.store.series_occurrences(id).unwrap();
        assert_eq!(
            occ.iter().map(|o| o.status).collect::<Vec<_>>(),
            [Status::Canceled]
        );
        assert_eq!(occ[0].last_error.as_deref(), Some(why));
        gate.notify_one();
        settle().await;
        tokio::time::sleep(Duration::from_secs(5 * 60)).await;
        settle().await;
        let texts: Vec<_> = users(&r, c).into_iter().map(|m| m.content).collect();
        assert_eq!(texts, ["a long question"], "nothing of the series was sent");
        // It never went: the series ran no time ("ran 1 time, ended" it said).
        let s = r.store.series(id).unwrap().unwrap();
        assert_eq!((s.status, s.occurrences), (status, 0));
    }
}

/// The model's `cancel_scheduled` of a series, approved after an
/// occurrence came due and waited behind that approval: the occurrence is
/// canceled with the series, as `tock cancel` and F2's `x` cancel it (it
/// was sent after the series had ended).
#[tokio::test(start_paused = true)]
async fn an_approved_cancel_scheduled_cancels_the_occurrence_waiting_behind_it() {
    let dir = tempfile::tempdir().unwrap();
    let start = berlin_ms(2026, 12, 1, 8, 0);
    let r = rig(&dir.path().join("t.db"), start, Scripted::new(vec![]));
    let c = conv(&r);
    r.engine.start();
    let every = r.engine.parse_schedule("every 1 minute").unwrap();
    let id = r
        .engine
        .create_series(c, Kind::Task, "tick", &every)
        .unwrap();
    r.provider.push(Step::Reply(vec![
        StreamEvent::ToolCall(ToolCall {
            id: "c1".into(),
            name: "cancel_scheduled".into(),
            arguments: format!("{{\"job_id\":{id}}}"),
        }),
        done(),
    ]));
    r.provider.push(Step::Reply(vec![text("Stopped."), done()]));
    r.engine.send_text(c, "stop the ticker").unwrap();
    settle().await;
    let waiting = r.store.waiting_approvals().unwrap();
    assert_eq!(waiting.len(), 1);
    // The next minute comes: its occurrence waits behind the approval.
    tokio::time::sleep(Duration::from_secs(65)).await;
    settle().await;
    let occ = r.store.series_occurrences(id).unwrap();
    assert_eq!(
        occ.iter().map(|o| o.status).collect::<Vec<_>>(),
        [Status::Pending]
    );
    r.engine.answer_approval(waiting[0].id, true).unwrap();
    settle().await;
    let occ = r.store.series_occurrences(id).unwrap();
    assert_eq!(
        occ.iter().map(|o| o.status).collect::<Vec<_>>(),
        [Status::Canceled]
    );
    assert_eq!(
        occ[0].last_error.as_deref(),
        Some("its recurring series was ended")
    );
    tokio::time::sleep(Duration::from_secs(5 * 60)).await;
    settle().await;
    let texts: Vec<_> = users(&r, c).into_iter().map(|m| m.content).collect();
    assert_eq!(texts, ["stop the ticker"], "nothing of the series was sent");
    let s = r.store.series(id).unwrap().unwrap();
    assert_eq!((s.status, s.occurrences), (SeriesStatus::Ended, 0));
}

/// The two series the clock tests watch: `every 2 minutes` (an interval)
/// and `every day at 9:00` (a wall-clock rule), in conversation `c`.
fn ping_and_stand_up(r: &Rig, c: i64) -> (i64, i64) {
    let every = r.engine.parse_schedule("every 2 minutes").unwrap();
    let interval = r
        .engine
        .create_series(c, Kind::Message, "ping", &every)
        .unwrap();
    let daily = r.engine.parse_schedule("every day at 9:00").unwrap();
    let daily = r
        .engine
        .create_series(c, Kind::Message, "stand-up", &daily)
        .unwrap();
    (interval, daily)
}

/// The clock was an hour ahead and is set right while tock runs: an
/// interval series keeps its pace instead of going quiet for that hour; a
/// wall-clock one keeps its time of day.
#[tokio::test(start_paused = true)]
async fn a_clock_set_back_keeps_an_interval_series_going() {
    let dir = tempfile::tempdir().unwrap();
    let start = berlin_ms(2026, 12, 1, 8, 30);
    let r = rig(&dir.path().join("t.db"), start, Scripted::new(vec![]));
    let c = conv(&r);
    r.engine.start();
    let (interval, daily) = ping_and_stand_up(&r, c);
    settle().await;
    r.clock.jump(-3_600_000);
    tokio::time::sleep(Duration::from_secs(2 * 60 + 5)).await;
    settle().await;
    let s = r.store.series(interval).unwrap().unwrap();
    assert_eq!(s.occurrences, 1, "sent two minutes on, not an hour: {s:?}");
    let next = s.next_due_at.unwrap();
    assert!(
        next > r.engine.now_ms() && next <= r.engine.now_ms() + 2 * 60_000,
        "{}",
        local(next)
    );
    let d = r.store.series(daily).unwrap().unwrap();
    assert_eq!(
        local(d.next_due_at.unwrap()),
        "2026-12-01 09:00:00.000 +0100"
    );
}

/// The clock was an hour ahead while tock ran, and was set right while no
/// tock ran: the next start finds the series' times worked out on the wrong
/// clock (they were last written "in the future") and brings them back, as
/// a jump seen while running does.
#[tokio::test(start_paused = true)]
async fn a_clock_set_back_while_no_tock_ran_keeps_an_interval_series_going() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let ahead = berlin_ms(2026, 12, 1, 9, 30);
    let (c, interval, daily) = {
        let r = rig(&path, ahead, Scripted::new(vec![]));
        let c = conv(&r);
        r.engine.start();
        let (interval, daily) = ping_and_stand_up(&r, c);
        tokio::time::sleep(Duration::from_secs(5 * 60 + 5)).await;
        settle().await;
        assert_eq!(r.store.series(interval).unwrap().unwrap().occurrences, 2);
        r.engine.shutdown(Duration::from_secs(1)).await;
        (c, interval, daily)
    };
    // Started again the same minute by the right clock, an hour earlier.
    let r = rig(&path, ahead + 5 * 60_000 - 3_600_000, Scripted::new(vec![]));
    r.engine.start();
    settle().await;
    let s = r.store.series(interval).unwrap().unwrap();
    let next = s.next_due_at.unwrap();
    assert!(
        next > r.engine.now_ms() && next <= r.engine.now_ms() + 2 * 60_000,
        "the next ping is two minutes away at most, not an hour: {}",
        local(next)
    );
    tokio::time::sleep(Duration::from_secs(2 * 60 + 5)).await;
    settle().await;
    assert_eq!(r.store.series(interval).unwrap().unwrap().occurrences, 3);
    assert_eq!(users(&r, c).len(), 3);
    // A wall-clock rule keeps its time of day (made at 9:30 by the clock
    // then, its first was tomorrow's, and stays so).
    let d = r.store.series(daily).unwrap().unwrap();
    assert_eq!(
        local(d.next_due_at.unwrap()),
        "2026-12-02 09:00:00.000 +0100"
    );
}

/// Conversations written while the clock was ahead do not head the list
/// until the real time catches up with them once it is set right: seen
/// while tock runs, or at the next start when it was set right while none
/// ran, their time comes back to now.
#[tokio::test(start_paused = true)]
async fn conversations_written_on_a_clock_ahead_come_back_to_now() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let ahead = berlin_ms(2026, 12, 1, 12, 0);
    let order = |r: &Rig| -> Vec<i64> {
        r.store
            .conversations()
            .unwrap()
            .into_iter()
            .map(|c| c.id)
            .collect()
    };
    let touched = |r: &Rig, title: &str| {
        r.store
            .create_conversation(Some(title), "user", r.engine.now_ms())
            .unwrap()
    };
    {
        let r = rig(&path, ahead, Scripted::new(vec![]));
        r.engine.start();
        settle().await;
        let a = touched(&r, "written three hours ahead");
        r.clock.jump(-3 * 3_600_000);
        // Seen at the scheduler's next wake-up (its clock check).
        tokio::time::sleep(Duration::from_secs(3600 + 5)).await;
        settle().await;
        let now = r.engine.now_ms();
        let a_at = r.store.conversation(a).unwrap().unwrap().updated_at;
        assert!(a_at <= now, "{} > {}", local(a_at), local(now));
        let b = touched(&r, "written by the right clock");
        assert_eq!(order(&r), [b, a]);
        r.engine.shutdown(Duration::from_secs(1)).await;
    }
    // Ahead again while tock runs, set right while none runs.
    let (c, at) = {
        let r = rig(&path, ahead + 6 * 3_600_000, Scripted::new(vec![]));
        r.engine.start();
        settle().await;
        let c = touched(&r, "written ahead, then no tock ran");
        r.engine.shutdown(Duration::from_secs(1)).await;
        (c, r.engine.now_ms())
    };
    let r = rig(&path, at - 5 * 3_600_000, Scripted::new(vec![]));
    r.engine.start();
    settle().await;
    let c_at = r.store.conversation(c).unwrap().unwrap().updated_at;
    assert!(c_at <= r.engine.now_ms(), "{}", local(c_at));
    let d = touched(&r, "the newest");
    assert_eq!(order(&r)[0], d);
}

#[tokio::test(start_paused = true)]
async fn two_engines_on_one_database_never_create_the_same_occurrence() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let start = berlin_ms(2026, 12, 1, 8, 0);
    let a = rig(&path, start, Scripted::new(vec![]));
    let b = rig(&path, start, Scripted::new(vec![]));
    let c = conv(&a);
    let s = a.engine.parse_schedule("every 1 minute").unwrap();
    let id = a
        .engine
        .create_series(c, Kind::Message, "tick", &s)
        .unwrap();
    a.engine.start();
    b.engine.start();
    tokio::time::sleep(Duration::from_secs(30 * 60 + 10)).await;
    settle().await;
    let occ = a.store.series_occurrences(id).unwrap();
    assert_eq!(occ.len(), 30);
    let mut at: Vec<i64> = occ.iter().map(|o| o.occurrence_at.unwrap()).collect();
    at.dedup();
    assert_eq!(at.len(), 30);
    assert_eq!(users(&a, c).len(), 30);
    assert_eq!(a.provider.count() + b.provider.count(), 30);

    // Below the lease: both stores advance the same due series at once, and
    // one of them with a stale view (its series rolled back, as a clock
    // jump back would): the UNIQUE (series, instant) keeps one row.
    let now = a.engine.now_ms() + 60_000;
    let plan = |s: &tock::store::Series| SeriesStep {
        fire: s.next_due_at,
        skipped: 0,
        consumed: 1,
        next_due_at: s.next_due_at.map(|t| t + 60_000),
    };
    let t1 = {
        let st = a.store.clone();
        std::thread::spawn(move || st.advance_series(now, 500, plan).unwrap())
    };
    let t2 = {
        let st = b.store.clone();
        std::thread::spawn(move || st.advance_series(now, 500, plan).unwrap())
    };
    let fired: usize = [t1.join().unwrap(), t2.join().unwrap()]
        .iter()
        .flatten()
        .filter(|a| a.fired.is_some())
        .count();
    assert_eq!(fired, 1);
    let last = a.store.series(id).unwrap().unwrap().next_due_at.unwrap() - 60_000;
    b.store
        .update_series(id, now, |s| {
            s.next_due_at = Some(last);
            Ok(())
        })
        .unwrap();
    let again = b.store.advance_series(now, 500, plan).unwrap();
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].fired, None, "the occurrence already exists");
    assert_eq!(a.store.series_occurrences(id).unwrap().len(), 31);
}

#[tokio::test(start_paused = true)]
async fn operations_pause_resume_skip_edit_end_send_now() {
    let dir = tempfile::tempdir().unwrap();
    let start = berlin_ms(2026, 11, 30, 8, 0); // Monday
    let r = rig(&dir.path().join("t.db"), start, Scripted::new(vec![]));
    let c = conv(&r);
    let mut ev = r.engine.subscribe();
    let s = r.engine.parse_schedule("every weekday 9am").unwrap();
    assert_eq!(r.engine.describe_schedule(&s), "every weekday at 09:00");
    assert_eq!(
        r.engine.preview_schedule(&s, 3),
        "next Mon 30 Nov 09:00, then Tue, Wed"
    );
    let id = r
        .engine
        .create_series(c, Kind::Message, "report", &s)
        .unwrap();
    let outbox_events = |ev: &mut tokio::sync::broadcast::Receiver<Event>| {
        let mut n = 0;
        while let Ok(e) = ev.try_recv() {
            n += usize::from(matches!(e, Event::Outbox | Event::OutboxRows(_)));
        }
        n
    };
    assert_eq!(outbox_events(&mut ev), 1);
    let views = r.engine.list_series(false).unwrap();
    assert_eq!(views.len(), 1);
    assert_eq!(views[0].description, "every weekday at 09:00");
    assert_eq!(
        views[0].upcoming,
        [
            berlin_ms(2026, 11, 30, 9, 0),
            berlin_ms(2026, 12, 1, 9, 0),
            berlin_ms(2026, 12, 2, 9, 0)
        ]
    );
    // Series ids share the outbox id space.
    let item = r.engine.send_text(c, "hello").unwrap();
    assert!(item > id);
    assert!(r.store.item(id).unwrap().is_none());

    assert_eq!(
        r.engine.skip_next(id).unwrap(),
        Some(berlin_ms(2026, 12, 1, 9, 0))
    );
    r.engine.pause_series(id).unwrap();
    assert!(
        r.engine
            .pause_series(id)
            .unwrap_err()
            .to_string()
            .contains("already paused")
    );
    assert_eq!(
        r.store.series(id).unwrap().unwrap().status,
        SeriesStatus::Paused
    );
    // Resumed before the skipped occurrence: the skip holds (resuming had
    // brought back the occurrence skipped, still counted as skipped).
    r.engine.resume_series(id).unwrap();
    let s = r.store.series(id).unwrap().unwrap();
    assert_eq!(
        (s.status, s.next_due_at, s.skipped),
        (SeriesStatus::Active, Some(berlin_ms(2026, 12, 1, 9, 0)), 1)
    );
    r.engine.pause_series(id).unwrap();
    // Three days later: resuming does not send what the pause held back.
    r.clock.jump(3 * 86_400_000);
    r.engine.resume_series(id).unwrap();
    let s = r.store.series(id).unwrap().unwrap();
    assert_eq!(
        (s.status, s.next_due_at),
        (SeriesStatus::Active, Some(berlin_ms(2026, 12, 3, 9, 0)))
    );
    assert_eq!(s.skipped, 1);
    r.engine.edit_series_text(id, "weekly report").unwrap();
    assert!(r.engine.edit_series_text(id, "  ").is_err());
    r.engine
        .edit_series_rule(id, "every mon,wed 10:00 for 2 times")
        .unwrap();
    let v = r.engine.series_view(id).unwrap().unwrap();
    assert_eq!(v.description, "every Mon and Wed at 10:00, 2 left");
    assert_eq!(
        v.upcoming,
        [berlin_ms(2026, 12, 7, 10, 0), berlin_ms(2026, 12, 9, 10, 0)]
    );
    assert!(
        r.engine
            .edit_series_rule(id, "every 10 seconds")
            .unwrap_err()
            .to_string()
            .contains("once a minute")
    );
    let extra = r.engine.send_series_now(id).unwrap();
    let row = r.store.item(extra).unwrap().unwrap();
    assert_eq!(
        (row.series_id, row.text.as_str(), row.priority),
        (Some(id), "weekly report", 1)
    );
    r.engine.end_series(id).unwrap();
    let s = r.store.series(id).unwrap().unwrap();
    // The extra occurrence still waited (nothing dispatches here): ending
    // canceled it, and it is not counted as one the series ran.
    assert_eq!(
        (s.status, s.next_due_at, s.occurrences),
        (SeriesStatus::Ended, None, 0)
    );
    assert_eq!(
        r.store.item(extra).unwrap().unwrap().status,
        Status::Canceled
    );
    assert!(r.engine.send_series_now(id).is_err());
    assert!(r.engine.list_series(false).unwrap().is_empty());
    assert_eq!(r.engine.list_series(true).unwrap().len(), 1);
    // send_text, skip, pause, resume, pause, resume, edit text, edit rule,
    // send now, end.
    assert_eq!(
        outbox_events(&mut ev),
        10,
        "every operation tells the views"
    );
    assert!(
        r.engine
            .pause_series(999)
            .unwrap_err()
            .to_string()
            .contains("no series 999")
    );
}

/// F2's `r` offers the whole schedule, its ends too: saving it as it is
/// changes nothing (the ends and a skip stay), and it reads back the same.
#[tokio::test(start_paused = true)]
async fn a_series_schedule_reads_back_whole_and_saving_it_unchanged_keeps_everything() {
    let dir = tempfile::tempdir().unwrap();
    let start = berlin_ms(2026, 11, 30, 8, 0); // Monday
    let r = rig(&dir.path().join("t.db"), start, Scripted::new(vec![]));
    let c = conv(&r);
    for (typed, expr) in [
        (
            "every 3h for 5 times until dec 20",
            "every 3 hours for 4 times until 2026-12-20", // the skip used one
        ),
        (
            "every weekday 9am until dec 20 5pm",
            "every weekday at 09:00 until 2026-12-20 17:00",
        ),
        ("every day at 18:00", "every day at 18:00"),
    ] {
        let s = r.engine.parse_schedule(typed).unwrap();
        let id = r.engine.create_series(c, Kind::Message, "x", &s).unwrap();
        r.engine.skip_next(id).unwrap();
        let before = r.store.series(id).unwrap().unwrap();
        let shown = r.engine.series_expression(&before);
        assert_eq!(shown, expr);
        let again = r.engine.parse_schedule(&shown).unwrap();
        assert_eq!(
            (again.until, again.count.map(i64::from)),
            (before.until_at, before.remaining),
            "{shown}"
        );
        r.engine.edit_series_rule(id, &shown).unwrap();
        let after = r.store.series(id).unwrap().unwrap();
        assert_eq!(
            (
                after.rule,
                after.next_due_at,
                after.until_at,
                after.remaining,
                after.skipped
            ),
            (
                before.rule,
                before.next_due_at,
                before.until_at,
                before.remaining,
                before.skipped
            ),
            "{shown}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_series_whose_conversation_was_deleted_gets_one_new_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(
        &dir.path().join("t.db"),
        berlin_ms(2026, 12, 1, 8, 0),
        Scripted::new(vec![]),
    );
    let c = conv(&r);
    let s = r.engine.parse_schedule("every 1 minute").unwrap();
    let id = r.engine.create_series(c, Kind::Task, "check", &s).unwrap();
    r.store.delete_conversation(c, r.engine.now_ms()).unwrap();
    r.engine.start();
    tokio::time::sleep(Duration::from_secs(3 * 60 + 5)).await;
    settle().await;
    let s = r.store.series(id).unwrap().unwrap();
    let home = s.conversation_id.unwrap();
    assert_ne!(home, c);
    let texts: Vec<_> = users(&r, home).into_iter().map(|m| m.content).collect();
    assert_eq!(texts, vec!["[Scheduled task] check"; 3]);
    assert_eq!(r.store.conversations().unwrap().len(), 1);
}

fn tool_call(name: &str, args: &str) -> StreamEvent {
    StreamEvent::ToolCall(ToolCall {
        id: "call_1".into(),
        name: name.into(),
        arguments: args.into(),
    })
}

#[tokio::test(start_paused = true)]
async fn schedule_task_with_repeat_is_approved_then_listed_and_canceled_as_a_series() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(
        &dir.path().join("t.db"),
        berlin_ms(2026, 11, 30, 8, 0),
        Scripted::new(vec![
            Step::Reply(vec![
                tool_call(
                    "schedule_task",
                    r#"{"instruction":"summarise the inbox","repeat":"every weekday 9am","until":"dec 4","title":"inbox"}"#,
                ),
                done(),
            ]),
            Step::Reply(vec![text("Scheduled."), done()]),
        ]),
    );
    let c = conv(&r);
    r.engine.start();
    r.engine
        .send_text(c, "every weekday morning, summarise my inbox")
        .unwrap();
    settle().await;
    let ap = r.store.approvals(c).unwrap();
    assert_eq!(ap.len(), 1);
    let summary: serde_json::Value = serde_json::from_str(&ap[0].summary).unwrap();
    assert_eq!(
        summary["repeat"],
        "every weekday at 09:00, until Fri 4 Dec 23:59"
    );
    assert_eq!(summary["preview"], "next Mon 30 Nov 09:00, then Tue, Wed");
    assert_eq!(summary["due_at"], berlin_ms(2026, 11, 30, 9, 0));
    assert_eq!(summary["next"].as_array().unwrap().len(), 3);
    assert!(
        r.store.list_series(true).unwrap().is_empty(),
        "nothing before approval"
    );
    r.engine.answer_approval(ap[0].id, true).unwrap();
    settle().await;
    let series = r.store.list_series(false).unwrap();
    assert_eq!(series.len(), 1);
    let s = &series[0];
    assert_eq!(
        (s.kind, s.text.as_str(), s.title.as_deref()),
        (Kind::Task, "summarise the inbox", Some("inbox"))
    );
    assert_eq!(s.until_at, Some(berlin_ms(2026, 12, 5, 0, 0) - 1));
    let tool_result = r
        .store
        .messages(c)
        .unwrap()
        .into_iter()
        .find(|m| m.role == Role::Tool)
        .unwrap()
        .content;
    assert!(
        tool_result.contains(&format!("\"job_id\":{}", s.id)),
        "{tool_result}"
    );

    // The first occurrence is an ordinary [Scheduled task] turn; in it the
    // model lists what is scheduled, then cancels the series.
    let call = |id: &str, name: &str, args: String| {
        StreamEvent::ToolCall(ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: args,
        })
    };
    r.provider.push(Step::Reply(vec![
        call("c2", "list_scheduled", "{}".into()),
        done(),
    ]));
    r.provider.push(Step::Reply(vec![
        call("c3", "cancel_scheduled", format!("{{\"job_id\":{}}}", s.id)),
        done(),
    ]));
    r.provider
        .push(Step::Reply(vec![text("Canceled."), done()]));
    tokio::time::sleep(Duration::from_secs(3600 + 5)).await;
    settle().await;
    assert!(
        users(&r, c)
            .iter()
            .any(|m| m.content == "[Scheduled task] summarise the inbox"),
        "{:?}",
        users(&r, c)
    );
    let results = |r: &Rig| -> Vec<serde_json::Value> {
        r.store
            .messages(c)
            .unwrap()
            .into_iter()
            .filter(|m| m.role == Role::Tool)
            .map(|m| serde_json::from_str(&m.content).unwrap())
            .collect()
    };
    let listed = results(&r)
        .into_iter()
        .find(|v| v.get("recurring").is_some())
        .expect("list_scheduled ran without approval");
    let rec = &listed["recurring"][0];
    assert_eq!(rec["job_id"], s.id);
    assert_eq!(
        rec["repeat"],
        "every weekday at 09:00, until Fri 4 Dec 23:59"
    );
    assert_eq!(rec["status"], "active");
    assert_eq!(rec["occurrences"], 1);
    assert!(
        rec["next_due_at"]
            .as_str()
            .unwrap()
            .starts_with("2026-12-01T08:00:00"),
        "{rec}"
    );
    // Ending a series needs the user's approval.
    let waiting = r.store.waiting_approvals().unwrap();
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0].tool, "cancel_scheduled");
    let summary: serde_json::Value = serde_json::from_str(&waiting[0].summary).unwrap();
    assert_eq!(summary["recurring"], true);
    assert_eq!(
        r.store.series(s.id).unwrap().unwrap().status,
        SeriesStatus::Active
    );
    r.engine.answer_approval(waiting[0].id, true).unwrap();
    settle().await;
    assert_eq!(
        r.store.series(s.id).unwrap().unwrap().status,
        SeriesStatus::Ended
    );
    assert!(
        results(&r)
            .iter()
            .any(|v| v["canceled"] == s.id && v["recurring"] == true)
    );
    let bad = ToolCall {
        id: "c4".into(),
        name: "schedule_task".into(),
        arguments: r#"{"instruction":"x","repeat":"every 5 seconds"}"#.into(),
    };
    assert!(
        tock::engine::tools::propose(&r.engine, c, &bad)
            .unwrap_err()
            .contains("once a minute")
    );
}
