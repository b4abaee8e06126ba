//! The dispatcher's own recovery: a lease renewal that fails is not a crash,
//! and a machine that slept past the grace period expires what it missed.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use tock::engine::{DispatchState, Event, NoticeKind};
use tock::store::{Kind, MessageStatus, NewItem, Role, Status};

#[tokio::test(start_paused = true)]
async fn a_write_lock_longer_than_the_busy_timeout_does_not_interrupt_our_own_reply() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let h = harness(vec![Step::Hold(vec![text("a long ")], gate.clone())]);
    // Errors come in milliseconds rather than after SQLite's 5 s wait.
    h.engine
        .store()
        .set_busy_timeout(Duration::from_millis(20))
        .unwrap();
    let conv = h
        .engine
        .store()
        .create_conversation(Some("c"), "user", h.engine.now_ms())
        .unwrap();
    h.engine.start();
    let id = h.engine.send_text(conv, "q").unwrap();
    settle().await;
    assert!(h.engine.is_busy(conv));
    // Another process (a backup, sqlite3) holds the write lock for minutes.
    let other = rusqlite::Connection::open(h.dir.path().join("tock.db")).unwrap();
    other.execute_batch("BEGIN EXCLUSIVE").unwrap();
    tokio::time::sleep(Duration::from_secs(31)).await;
    settle().await;
    assert!(
        matches!(h.engine.dispatch_state(), DispatchState::Error(_)),
        "{:?}",
        h.engine.dispatch_state()
    );
    tokio::time::sleep(Duration::from_secs(30)).await;
    settle().await;
    other.execute_batch("COMMIT").unwrap();
    // (Within the 120 s a reply may go without new text.)
    tokio::time::sleep(Duration::from_secs(20)).await;
    settle().await;
    assert_eq!(h.engine.dispatch_state(), DispatchState::Dispatching);
    // Still our reply, still streaming: nothing was "recovered" from ourselves.
    assert!(h.engine.is_busy(conv));
    gate.notify_one();
    settle().await;
    let msgs = h.engine.store().messages(conv).unwrap();
    let statuses: Vec<_> = msgs.iter().map(|m| (m.role, m.status)).collect();
    assert_eq!(
        statuses,
        vec![
            (Role::User, MessageStatus::Complete),
            (Role::Assistant, MessageStatus::Complete)
        ]
    );
    assert_eq!(msgs[1].content, "a long ");
    assert_eq!(h.provider.count(), 1, "the provider was asked once");
    assert_eq!(
        h.engine.store().item(id).unwrap().unwrap().status,
        Status::Sent
    );
}

/// The whole reply came while another process held the write lock: its
/// end is written once the lock is gone (it was dropped, the reply left
/// "streaming" for good), and what was queued behind it waits until then
/// (it went out answered by nothing).
#[tokio::test(start_paused = true)]
async fn a_reply_that_ends_while_the_database_is_locked_is_saved_once_it_is_free() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let h = harness(vec![
        Step::Hold(vec![text("the whole answer")], gate.clone()),
        Step::Reply(vec![text("second answer"), done()]),
    ]);
    h.engine
        .store()
        .set_busy_timeout(Duration::from_millis(20))
        .unwrap();
    let conv = new_conv(&h);
    h.engine.start();
    h.engine.send_text(conv, "first").unwrap();
    settle().await;
    assert!(h.engine.is_busy(conv));
    let behind = h.engine.send_text(conv, "second").unwrap();
    let other = rusqlite::Connection::open(h.dir.path().join("tock.db")).unwrap();
    other.execute_batch("BEGIN EXCLUSIVE").unwrap();
    gate.notify_one();
    tokio::time::sleep(Duration::from_secs(60)).await;
    settle().await;
    // Still ours, still waiting to be written; nothing else was asked.
    assert!(h.engine.is_busy(conv));
    assert_eq!(h.provider.count(), 1);
    other.execute_batch("COMMIT").unwrap();
    tokio::time::sleep(Duration::from_secs(10)).await;
    settle().await;
    let msgs = h.engine.store().messages(conv).unwrap();
    let got: Vec<_> = msgs
        .iter()
        .map(|m| (m.role, m.status, m.content.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            (Role::User, MessageStatus::Complete, "first"),
            (Role::Assistant, MessageStatus::Complete, "the whole answer"),
            (Role::User, MessageStatus::Complete, "second"),
            (Role::Assistant, MessageStatus::Complete, "second answer"),
        ]
    );
    assert_eq!(
        h.engine.store().item(behind).unwrap().unwrap().status,
        Status::Sent
    );
    assert_eq!(h.provider.count(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_sleep_longer_than_the_grace_period_expires_overdue_items() {
    let h = harness(vec![]);
    let mut events = h.engine.subscribe();
    let conv = h
        .engine
        .store()
        .create_conversation(Some("c"), "user", h.engine.now_ms())
        .unwrap();
    h.engine.start();
    let mut it = NewItem::new(conv, Kind::Message, "friday 9am");
    it.due_at = Some(T0 + 3_600_000);
    let friday = h.engine.submit(it).unwrap();
    let mut it = NewItem::new(conv, Kind::Message, "due after the wake-up");
    it.due_at = Some(T0 + 15 * 3_600_000);
    let later = h.engine.submit(it).unwrap();
    settle().await;
    // Suspended for 14 h: the wall clock leaps, the monotonic clock does not.
    h.clock.jump(14 * 3_600_000);
    tokio::time::sleep(Duration::from_secs(31)).await;
    settle().await;
    let item = h.engine.store().item(friday).unwrap().unwrap();
    assert_eq!(item.status, Status::Expired, "sent 13 h late: {item:?}");
    assert!(item.last_error.unwrap().contains("asleep"));
    assert_eq!(h.provider.count(), 0);
    let mut expired_notice = false;
    while let Ok(ev) = events.try_recv() {
        if let Event::Notice(n) = ev {
            expired_notice |= n.kind == NoticeKind::Expired;
        }
    }
    assert!(expired_notice, "the user is told");
    // What falls due after the wake-up is sent as usual.
    tokio::time::sleep(Duration::from_secs(3_600)).await;
    settle().await;
    assert_eq!(
        h.engine.store().item(later).unwrap().unwrap().status,
        Status::Sent
    );
}

#[tokio::test(start_paused = true)]
async fn a_short_sleep_still_catches_up() {
    let h = harness(vec![]);
    let conv = h
        .engine
        .store()
        .create_conversation(Some("c"), "user", h.engine.now_ms())
        .unwrap();
    h.engine.start();
    let mut it = NewItem::new(conv, Kind::Message, "in half an hour");
    it.due_at = Some(T0 + 1_800_000);
    let id = h.engine.submit(it).unwrap();
    settle().await;
    h.clock.jump(2 * 3_600_000);
    tokio::time::sleep(Duration::from_secs(31)).await;
    settle().await;
    assert_eq!(
        h.engine.store().item(id).unwrap().unwrap().status,
        Status::Sent
    );
}

#[tokio::test(start_paused = true)]
async fn every_pending_item_says_what_it_waits_for() {
    use tock::store::Waiting;
    let gate = Arc::new(tokio::sync::Notify::new());
    let h = harness(vec![
        Step::Hold(vec![text("busy")], gate.clone()),
        Step::Fail(tock::llm::LlmError::transient("connection refused")),
    ]);
    let store = h.engine.store().clone();
    let now = || h.engine.now_ms();
    let busy = store
        .create_conversation(Some("busy"), "user", now())
        .unwrap();
    let approval = store
        .create_conversation(Some("approval"), "user", now())
        .unwrap();
    let backoff = store
        .create_conversation(Some("backoff"), "user", now())
        .unwrap();
    h.engine.start();
    let first = h.engine.send_text(busy, "first").unwrap();
    settle().await;
    let behind = h.engine.send_text(busy, "second").unwrap();
    let mut later = NewItem::new(busy, Kind::Message, "later");
    let due = now() + 3_600_000;
    later.due_at = Some(due);
    let later = h.engine.submit(later).unwrap();
    let a = store
        .add_approval(approval, 0, "call_1", "schedule_task", "{}", "{}", now())
        .unwrap();
    let waits = h.engine.send_text(approval, "after the approval").unwrap();
    let retry = h.engine.send_text(backoff, "will back off").unwrap();
    settle().await;
    let after_retry = h.engine.send_text(backoff, "after it").unwrap();
    let w = store.waiting(now()).unwrap();
    assert_eq!(w.get(&first), None, "in flight");
    // Behind the reply streaming, not behind its item: that one is sent,
    // and no list shows it.
    assert_eq!(w[&behind], Waiting::BehindReply);
    assert!(
        w[&behind]
            .describe(now())
            .contains("behind the reply being generated there")
    );
    assert!(!w[&behind].describe(now()).contains("tock status"));
    assert_eq!(w[&after_retry], Waiting::Behind { item_id: retry });
    assert_eq!(w[&later], Waiting::Due { at: due });
    assert_eq!(w[&waits], Waiting::Approval { approval_id: a });
    assert!(
        matches!(w[&retry], Waiting::Backoff { until } if until > now()),
        "{:?}",
        w[&retry]
    );
    for (id, reason) in &w {
        assert!(!reason.describe(now()).is_empty(), "{id}");
    }
    gate.notify_one();
    settle().await;
}
