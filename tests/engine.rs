//! The outbox scheduler with a controlled clock (tokio paused time + ManualClock).

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use tock::config::Config;
use tock::engine::{DispatchState, Engine, ManualClock};
use tock::llm::{ChatMessage, LlmError, StreamEvent, ToolCall};
use tock::store::{Kind, MessageStatus, NewItem, Role, Status, Store};

fn scheduled(h: &Harness, conv: i64, text: &str, due: i64) -> i64 {
    let mut it = NewItem::new(conv, Kind::Message, text);
    it.due_at = Some(due);
    h.engine.submit(it).unwrap()
}

fn status(h: &Harness, id: i64) -> Status {
    h.engine.store().item(id).unwrap().unwrap().status
}

#[tokio::test(start_paused = true)]
async fn queued_message_is_sent_with_reply_in_history() {
    let h = harness(vec![Step::Reply(vec![text("Hel"), text("lo"), done()])]);
    let conv = new_conv(&h);
    h.engine.start();
    let id = h.engine.send_text(conv, "hi").unwrap();
    settle().await;
    assert_eq!(status(&h, id), Status::Sent);
    let msgs = h.engine.store().messages(conv).unwrap();
    assert_eq!(msgs.len(), 2);
    assert_eq!(
        (msgs[0].role, msgs[0].content.as_str(), msgs[0].outbox_id),
        (Role::User, "hi", Some(id))
    );
    assert_eq!(
        (msgs[1].role, msgs[1].content.as_str(), msgs[1].status),
        (Role::Assistant, "Hello", MessageStatus::Complete)
    );
    assert_eq!(h.engine.dispatch_state(), DispatchState::Dispatching);
    // Untitled conversations are titled from the first message.
    let c2 = h
        .engine
        .store()
        .create_conversation(None, "user", h.engine.now_ms())
        .unwrap();
    h.engine.send_text(c2, "What is a monad?\nmore").unwrap();
    settle().await;
    assert_eq!(
        h.engine
            .store()
            .conversation(c2)
            .unwrap()
            .unwrap()
            .title
            .as_deref(),
        Some("What is a monad?")
    );
}

#[tokio::test(start_paused = true)]
async fn scheduled_message_fires_on_time_never_early() {
    let h = harness(vec![]);
    let conv = new_conv(&h);
    h.engine.start();
    let id = scheduled(&h, conv, "later", T0 + 60_000);
    tokio::time::sleep(Duration::from_millis(59_900)).await;
    settle().await;
    assert_eq!(status(&h, id), Status::Pending, "fired early");
    assert_eq!(h.provider.count(), 0);
    tokio::time::sleep(Duration::from_millis(200)).await;
    settle().await;
    assert_eq!(status(&h, id), Status::Sent);
    let sent_at = h.engine.store().item(id).unwrap().unwrap().sent_at.unwrap();
    assert!(
        (T0 + 60_000..T0 + 60_000 + 50).contains(&sent_at),
        "due-to-dispatch latency {}",
        sent_at - T0 - 60_000
    );
}

#[tokio::test(start_paused = true)]
async fn rows_of_one_conversation_go_in_order_and_wait_for_the_reply() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let h = harness(vec![Step::Hold(vec![text("thinking")], gate.clone())]);
    let conv = new_conv(&h);
    h.engine.start();
    let a = h.engine.send_text(conv, "one").unwrap();
    settle().await;
    assert!(h.engine.is_busy(conv));
    let b = h.engine.send_text(conv, "two").unwrap();
    let c = h.engine.send_text(conv, "three").unwrap();
    settle().await;
    assert_eq!(
        h.provider.count(),
        1,
        "queued rows must wait while the model answers"
    );
    assert_eq!(
        (status(&h, a), status(&h, b), status(&h, c)),
        (Status::Sent, Status::Pending, Status::Pending)
    );
    gate.notify_one();
    settle().await;
    assert_eq!(user_texts(&h, conv), vec!["one", "two", "three"]);
    // Each request carried the whole history so far, in order.
    let last = h.provider.requests().pop().unwrap();
    let users: Vec<_> = last
        .messages
        .iter()
        .filter_map(|m| match m {
            ChatMessage::User { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(users, vec!["one", "two", "three"]);
}

#[tokio::test(start_paused = true)]
async fn conversations_run_concurrently() {
    let g1 = Arc::new(tokio::sync::Notify::new());
    let g2 = Arc::new(tokio::sync::Notify::new());
    let h = harness(vec![
        Step::Hold(vec![], g1.clone()),
        Step::Hold(vec![], g2.clone()),
    ]);
    let c1 = new_conv(&h);
    let c2 = new_conv(&h);
    h.engine.start();
    h.engine.send_text(c1, "a").unwrap();
    h.engine.send_text(c2, "b").unwrap();
    settle().await;
    assert_eq!(h.provider.count(), 2);
    assert!(h.engine.is_busy(c1) && h.engine.is_busy(c2));
    g1.notify_one();
    g2.notify_one();
    settle().await;
    assert!(!h.engine.is_busy(c1) && !h.engine.is_busy(c2));
}

#[tokio::test(start_paused = true)]
async fn due_item_waits_for_busy_conversation_then_goes() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let h = harness(vec![Step::Hold(vec![text("long answer")], gate.clone())]);
    let conv = new_conv(&h);
    h.engine.start();
    h.engine.send_text(conv, "first").unwrap();
    let s = scheduled(&h, conv, "scheduled", T0 + 5_000);
    tokio::time::sleep(Duration::from_secs(10)).await;
    settle().await;
    assert_eq!(
        status(&h, s),
        Status::Pending,
        "must not interrupt a running reply"
    );
    gate.notify_one();
    settle().await;
    assert_eq!(status(&h, s), Status::Sent);
    assert_eq!(user_texts(&h, conv), vec!["first", "scheduled"]);
}

/// `tock retry` (and F2's R) on an item waiting out a long Retry-After
/// tries it now, its attempts kept: it was refused as "queued" while every
/// view showed it retrying.
#[tokio::test(start_paused = true)]
async fn retry_ends_a_back_off_at_once() {
    let h = harness(vec![Step::Fail(LlmError {
        kind: tock::llm::ErrorKind::Transient {
            retry_after: Some(Duration::from_secs(3600)),
        },
        message: "429".into(),
    })]);
    let conv = new_conv(&h);
    h.engine.start();
    let id = h.engine.send_text(conv, "hello").unwrap();
    settle().await;
    let it = h.engine.store().item(id).unwrap().unwrap();
    assert!(it.next_attempt_at.unwrap() - h.engine.now_ms() > 3_000_000);
    h.engine.retry(id).unwrap();
    settle().await;
    assert_eq!(status(&h, id), Status::Sent);
    assert_eq!(h.engine.store().item(id).unwrap().unwrap().attempts, 2);
    assert_eq!(h.provider.count(), 2);
}

#[tokio::test(start_paused = true)]
async fn transient_failures_back_off_then_succeed_exactly_once() {
    let h = harness(vec![
        Step::Fail(LlmError::transient("connection refused")),
        Step::Fail(LlmError {
            kind: tock::llm::ErrorKind::Transient {
                retry_after: Some(Duration::from_secs(30)),
            },
            message: "429".into(),
        }),
    ]);
    let conv = new_conv(&h);
    h.engine.start();
    let id = h.engine.send_text(conv, "hello").unwrap();
    settle().await;
    let it = h.engine.store().item(id).unwrap().unwrap();
    assert_eq!((it.status, it.attempts), (Status::Pending, 1));
    assert_eq!(it.last_error.as_deref(), Some("connection refused"));
    assert_eq!(
        it.next_attempt_at,
        Some(T0 + 5_000),
        "first back-off is the base (5 s)"
    );
    tokio::time::sleep(Duration::from_millis(5_100)).await;
    settle().await;
    let it = h.engine.store().item(id).unwrap().unwrap();
    assert_eq!(it.attempts, 2);
    let wait = it.next_attempt_at.unwrap() - h.engine.now_ms();
    assert!(
        wait > 25_000,
        "Retry-After (30 s) is honoured over the 10 s back-off, got {wait}"
    );
    tokio::time::sleep(Duration::from_secs(31)).await;
    settle().await;
    assert_eq!(status(&h, id), Status::Sent);
    assert_eq!(user_texts(&h, conv), vec!["hello"]);
    assert_eq!(h.provider.count(), 3);
}

#[tokio::test(start_paused = true)]
async fn max_attempts_then_failed_with_notice() {
    let steps = (0..5)
        .map(|_| Step::Fail(LlmError::transient("503 Service Unavailable")))
        .collect();
    let h = harness(steps);
    let mut events = h.engine.subscribe();
    let conv = new_conv(&h);
    h.engine.start();
    let id = h.engine.send_text(conv, "x").unwrap();
    tokio::time::sleep(Duration::from_secs(600)).await;
    settle().await;
    let it = h.engine.store().item(id).unwrap().unwrap();
    assert_eq!(it.status, Status::Failed);
    assert_eq!(it.attempts, 5);
    assert!(it.last_error.unwrap().contains("503"));
    assert_eq!(h.provider.count(), 5);
    assert!(
        user_texts(&h, conv).is_empty(),
        "nothing enters the history unless accepted"
    );
    let mut failed_notice = false;
    while let Ok(e) = events.try_recv() {
        if let tock::engine::Event::Notice(n) = e {
            failed_notice |= n.kind == tock::engine::NoticeKind::Failed;
        }
    }
    assert!(failed_notice);
    // Retry from the list brings it back.
    h.engine.retry(id).unwrap();
    settle().await;
    assert_eq!(status(&h, id), Status::Sent);
}

#[tokio::test(start_paused = true)]
async fn permanent_failure_fails_at_once() {
    let h = harness(vec![Step::Fail(LlmError::permanent(
        "401 Unauthorized: bad key",
    ))]);
    let conv = new_conv(&h);
    h.engine.start();
    let id = h.engine.send_text(conv, "x").unwrap();
    settle().await;
    let it = h.engine.store().item(id).unwrap().unwrap();
    assert_eq!((it.status, it.attempts), (Status::Failed, 1));
    assert_eq!(it.last_error.as_deref(), Some("401 Unauthorized: bad key"));
}

#[tokio::test(start_paused = true)]
async fn catch_up_within_grace_and_expire_beyond() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("tock.db")).unwrap();
    let conv = store
        .create_conversation(Some("c"), "user", T0 - 20 * 3_600_000)
        .unwrap();
    let mut late = NewItem::new(conv, Kind::Message, "late by 1h");
    late.due_at = Some(T0 - 3_600_000);
    let late = store.enqueue(&late, T0 - 5 * 3_600_000).unwrap();
    let mut stale = NewItem::new(conv, Kind::Message, "late by 13h");
    stale.due_at = Some(T0 - 13 * 3_600_000);
    let stale = store.enqueue(&stale, T0 - 14 * 3_600_000).unwrap();
    let h = engine_on(store, Scripted::new(vec![]), Config::default(), dir);
    let mut events = h.engine.subscribe();
    h.engine.start();
    settle().await;
    assert_eq!(status(&h, late), Status::Sent);
    assert_eq!(status(&h, stale), Status::Expired);
    assert_eq!(user_texts(&h, conv), vec!["late by 1h"]);
    let mut expired_notice = false;
    while let Ok(e) = events.try_recv() {
        if let tock::engine::Event::Notice(n) = e {
            expired_notice |= n.kind == tock::engine::NoticeKind::Expired;
        }
    }
    assert!(expired_notice, "expiry is never silent");
    h.engine.retry(stale).unwrap();
    settle().await;
    assert_eq!(status(&h, stale), Status::Sent);
}

#[tokio::test(start_paused = true)]
async fn stale_sending_and_streaming_are_recovered_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("tock.db")).unwrap();
    let conv = store.create_conversation(Some("c"), "user", T0).unwrap();
    // A crash after the claim, before acceptance.
    let a = store
        .enqueue(&NewItem::new(conv, Kind::Queued, "was sending"), T0)
        .unwrap();
    assert!(store.claim(a, "dead-process", T0).unwrap());
    // Another conversation crashed mid-stream.
    let conv2 = store.create_conversation(Some("d"), "user", T0).unwrap();
    let b = store
        .enqueue(&NewItem::new(conv2, Kind::Queued, "question"), T0)
        .unwrap();
    assert!(store.claim(b, "dead-process", T0).unwrap());
    let item = store.item(b).unwrap().unwrap();
    let reply = store
        .accept(&item, "dead-process", "m", T0)
        .unwrap()
        .unwrap();
    store.update_streaming(reply, "partial ans").unwrap();

    let h = engine_on(store, Scripted::new(vec![]), Config::default(), dir);
    h.engine.start();
    settle().await;
    assert_eq!(status(&h, a), Status::Sent);
    assert_eq!(user_texts(&h, conv), vec!["was sending"]);
    let msgs = h.engine.store().messages(conv2).unwrap();
    assert_eq!(
        msgs.iter().filter(|m| m.role == Role::User).count(),
        1,
        "user message exactly once"
    );
    let interrupted = msgs.iter().find(|m| m.id == reply).unwrap();
    assert_eq!(interrupted.status, MessageStatus::Interrupted);
    assert_eq!(
        interrupted.content, "partial ans",
        "the partial reply stays visible"
    );
    let last = msgs.last().unwrap();
    assert_eq!(
        (last.role, last.status, last.content.as_str()),
        (Role::Assistant, MessageStatus::Complete, "ok")
    );
    // The partial reply was not sent back to the model.
    let req = h
        .provider
        .requests()
        .into_iter()
        .find(|r| {
            r.messages
                .iter()
                .any(|m| matches!(m, ChatMessage::User { text, .. } if text == "question"))
        })
        .unwrap();
    assert!(
        !req.messages
            .iter()
            .any(|m| matches!(m, ChatMessage::Assistant { text, .. } if text.contains("partial")))
    );
    assert!(
        h.engine
            .store()
            .list_items(true)
            .unwrap()
            .iter()
            .all(|i| i.status != Status::Sending)
    );
}

#[tokio::test(start_paused = true)]
async fn network_cut_keeps_partial_reply_interrupted_and_generates_it_again() {
    let h = harness(vec![Step::Cut(
        vec![text("half an ")],
        LlmError::transient("connection reset"),
    )]);
    let conv = new_conv(&h);
    h.engine.start();
    let id = h.engine.send_text(conv, "q").unwrap();
    settle().await;
    let it = h.engine.store().item(id).unwrap().unwrap();
    assert!(it.accepted(), "the user message was accepted");
    assert_eq!(
        (it.status, it.next_attempt_at),
        (Status::Pending, Some(T0 + 5_000)),
        "the reply is generated again after the back-off"
    );
    let msgs = h.engine.store().messages(conv).unwrap();
    assert_eq!(msgs[1].status, MessageStatus::Interrupted);
    assert_eq!(msgs[1].content, "half an ");
    assert!(
        msgs[1]
            .error
            .as_deref()
            .unwrap()
            .contains("connection reset")
    );
    assert!(
        h.engine.regenerate(conv).is_err(),
        "a reply is already on its way"
    );
    tokio::time::sleep(Duration::from_secs(5)).await;
    settle().await;
    assert_eq!(status(&h, id), Status::Sent);
    let msgs = h.engine.store().messages(conv).unwrap();
    assert_eq!(msgs.len(), 3);
    assert_eq!(
        (msgs[2].status, msgs[2].content.as_str()),
        (MessageStatus::Complete, "ok")
    );
    assert_eq!(user_texts(&h, conv), vec!["q"]);
}

#[tokio::test(start_paused = true)]
async fn stop_keeps_partial_and_frees_the_conversation() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let h = harness(vec![Step::Hold(vec![text("partial")], gate)]);
    let conv = new_conv(&h);
    h.engine.start();
    h.engine.send_text(conv, "q").unwrap();
    settle().await;
    assert!(h.engine.stop(conv));
    settle().await;
    assert!(!h.engine.is_busy(conv));
    let msgs = h.engine.store().messages(conv).unwrap();
    assert_eq!(
        (msgs[1].status, msgs[1].error.as_deref()),
        (MessageStatus::Interrupted, Some("stopped by you"))
    );
}

/// A front end tells the stream to stop at once and writes the pause later
/// (the TUI writes on its writer thread, behind the drafts it saves): the
/// turn itself pauses the queue before it ends, so what was queued behind
/// the stopped reply never goes out in the gap.
#[tokio::test(start_paused = true)]
async fn a_stopped_turn_pauses_its_queue_before_the_next_item_can_go() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let h = harness(vec![
        Step::Hold(vec![text("partial")], gate),
        Step::Reply(vec![text("ok"), done()]),
    ]);
    let conv = new_conv(&h);
    h.engine.start();
    h.engine.send_text(conv, "q").unwrap();
    settle().await;
    let queued = h.engine.send_text(conv, "queued behind it").unwrap();
    settle().await;
    // Only the first half of a stop; nobody writes the pause.
    assert!(h.engine.interrupt(conv));
    settle().await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    settle().await;
    assert!(!h.engine.is_busy(conv));
    assert_eq!(
        status(&h, queued),
        Status::Pending,
        "it went out after the stop"
    );
    assert_eq!(h.provider.count(), 1);
    assert!(
        h.engine
            .store()
            .paused_conversations()
            .unwrap()
            .contains_key(&conv)
    );
    // Resumed, it goes.
    assert!(h.engine.resume_queue(conv).unwrap());
    settle().await;
    assert_eq!(status(&h, queued), Status::Sent);
}

/// A stop holds what was waiting to go behind the stopped reply, not what
/// comes due or is added after it: a message scheduled for later (before or
/// after the stop) goes at its time; a new message to go now, from any
/// front end, resumes the queue, and what was held goes first.
#[tokio::test(start_paused = true)]
async fn a_stop_holds_what_was_queued_then_not_what_comes_due_or_is_added_since() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let ok = || Step::Reply(vec![text("ok"), done()]);
    let h = harness(vec![
        Step::Hold(vec![text("partial")], gate),
        ok(),
        ok(),
        ok(),
        ok(),
        ok(),
    ]);
    let conv = new_conv(&h);
    h.engine.start();
    h.engine.send_text(conv, "q").unwrap();
    settle().await;
    let queued = h.engine.send_text(conv, "queued").unwrap();
    let before = scheduled(&h, conv, "scheduled before", T0 + 60_000);
    // Due while the reply streams: it waits behind it, and is not held by
    // the stop (it was, with no end, while later items went).
    let came_due = scheduled(&h, conv, "came due while streaming", T0 + 1_000);
    tokio::time::sleep(Duration::from_secs(2)).await;
    settle().await;
    assert_eq!(status(&h, came_due), Status::Pending, "behind the reply");
    assert!(h.engine.stop(conv));
    settle().await;
    let after = scheduled(&h, conv, "scheduled after", T0 + 30_000);
    tokio::time::sleep(Duration::from_secs(61)).await;
    settle().await;
    assert_eq!(status(&h, came_due), Status::Sent, "due before the stop");
    assert_eq!(status(&h, after), Status::Sent, "scheduled after the stop");
    assert_eq!(status(&h, before), Status::Sent, "due after the stop");
    assert_eq!(status(&h, queued), Status::Pending, "held by the stop");
    let it = h.engine.store().item(queued).unwrap().unwrap();
    let gates = tock::engine::state::gates(h.engine.store()).unwrap();
    assert_eq!(
        tock::engine::item_state(&it, T0 + 61_000, gates[&conv]),
        tock::engine::ItemState::Paused
    );
    let waiting = h.engine.store().waiting(T0 + 61_000).unwrap();
    assert_eq!(
        waiting.get(&queued),
        Some(&tock::store::Waiting::QueuePaused {
            by: tock::store::PausedBy::Stop
        })
    );
    // A message to go now (as `tock send` makes it) resumes the queue.
    h.engine.send_text(conv, "now").unwrap();
    settle().await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    settle().await;
    assert_eq!(
        user_texts(&h, conv),
        vec![
            "q",
            "came due while streaming",
            "scheduled after",
            "scheduled before",
            "queued",
            "now"
        ]
    );
}

/// Regenerating while the reply streams stops it and generates it again at
/// once, ahead of what is queued, instead of letting it run on and adding
/// a second reply after it.
#[tokio::test(start_paused = true)]
async fn regenerating_a_streaming_reply_stops_it_and_asks_again() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let h = harness(vec![
        Step::Hold(vec![text("partial")], gate.clone()),
        Step::Reply(vec![text("again"), done()]),
        Step::Reply(vec![text("ok"), done()]),
    ]);
    let conv = new_conv(&h);
    h.engine.start();
    let q = h.engine.send_text(conv, "q").unwrap();
    settle().await;
    let queued = h.engine.send_text(conv, "queued").unwrap();
    settle().await;
    assert_eq!(h.engine.regenerate(conv).unwrap(), q);
    settle().await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    settle().await;
    gate.notify_waiters();
    let msgs = h.engine.store().messages(conv).unwrap();
    let replies: Vec<_> = msgs
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .map(|m| (m.content.as_str(), m.status))
        .collect();
    assert_eq!(
        replies,
        vec![
            ("partial", MessageStatus::Interrupted),
            ("again", MessageStatus::Complete),
            ("ok", MessageStatus::Complete),
        ]
    );
    assert_eq!(user_texts(&h, conv), vec!["q", "queued"]);
    assert_eq!(status(&h, queued), Status::Sent, "the queue was not paused");
    assert_eq!(h.provider.count(), 3);
}

#[tokio::test(start_paused = true)]
async fn wall_clock_jumps_never_fire_early_or_twice() {
    let h = harness(vec![]);
    let conv = new_conv(&h);
    h.engine.start();
    let id = scheduled(&h, conv, "at noon", T0 + 3_600_000);
    // The clock is set back an hour: the item must wait the extra hour.
    h.clock.jump(-3_600_000);
    tokio::time::sleep(Duration::from_secs(3_600 + 30)).await;
    settle().await;
    assert_eq!(
        status(&h, id),
        Status::Pending,
        "fired early after a backward jump"
    );
    // Suspend: the wall clock leaps past the due time without tokio time passing much.
    h.clock.jump(2 * 3_600_000);
    tokio::time::sleep(Duration::from_secs(31)).await;
    settle().await;
    assert_eq!(status(&h, id), Status::Sent, "missed after a forward jump");
    tokio::time::sleep(Duration::from_secs(120)).await;
    settle().await;
    assert_eq!(user_texts(&h, conv), vec!["at noon"]);
}

#[tokio::test(start_paused = true)]
async fn outbox_disabled_keeps_items_and_says_so() {
    let mut cfg = Config::default();
    cfg.outbox.enabled = false;
    let h = harness_with(Scripted::new(vec![]), cfg);
    let conv = new_conv(&h);
    h.engine.start();
    let id = h.engine.send_text(conv, "x").unwrap();
    settle().await;
    assert_eq!(h.engine.dispatch_state(), DispatchState::Disabled);
    assert_eq!(status(&h, id), Status::Pending);
    assert_eq!(h.provider.count(), 0);
}

/// A task that could not be sent (its attempts ran out) holds what was
/// queued behind it, as a message of the user's does: the follow-up went
/// first, into a conversation missing the task. Retrying the task sends it,
/// then the follow-up.
#[tokio::test(start_paused = true)]
async fn a_failed_task_holds_what_was_queued_behind_it() {
    let mut cfg = Config::default();
    cfg.outbox.max_attempts = 2;
    let h = harness_with(
        Scripted::new(vec![
            Step::Fail(LlmError::transient("500 internal server error")),
            Step::Fail(LlmError::transient("500 internal server error")),
            Step::Reply(vec![text("done the task"), done()]),
            Step::Reply(vec![text("and the follow-up"), done()]),
        ]),
        cfg,
    );
    let conv = new_conv(&h);
    let mut task = NewItem::new(conv, Kind::Task, "check the build");
    task.due_at = Some(T0);
    let task = h.engine.store().enqueue(&task, T0).unwrap();
    h.engine.start();
    settle().await;
    // Typed while the task waits out its back-off: behind it.
    let behind = h.engine.send_text(conv, "queued behind it").unwrap();
    settle().await;
    tokio::time::sleep(Duration::from_secs(30)).await;
    settle().await;
    assert_eq!(status(&h, task), Status::Failed);
    tokio::time::sleep(Duration::from_secs(30)).await;
    settle().await;
    assert_eq!(status(&h, behind), Status::Pending, "held");
    assert_eq!(h.provider.count(), 2);
    h.engine.retry(task).unwrap();
    settle().await;
    assert_eq!(
        (status(&h, task), status(&h, behind)),
        (Status::Sent, Status::Sent)
    );
    assert_eq!(
        user_texts(&h, conv),
        vec!["[Scheduled task] check the build", "queued behind it"]
    );
}

/// Retrying the message whose failure paused the queue lets what is behind
/// it go, also with an older failed message still listed (one that failed
/// before a later message went out, so holds nothing): the queue stayed
/// paused, and was told as "stopped".
#[tokio::test(start_paused = true)]
async fn retrying_the_failure_that_paused_the_queue_releases_it_past_an_older_one() {
    let mut cfg = Config::default();
    cfg.outbox.max_attempts = 1;
    let h = harness_with(
        Scripted::new(vec![
            Step::Fail(LlmError::permanent("401 unauthorized")),
            Step::Reply(vec![text("answered b"), done()]),
            Step::Fail(LlmError::permanent("500 for c")),
            Step::Reply(vec![text("answered c"), done()]),
            Step::Reply(vec![text("answered d"), done()]),
        ]),
        cfg,
    );
    let conv = new_conv(&h);
    h.engine.start();
    let a = h.engine.send_text(conv, "old failure a").unwrap();
    settle().await;
    assert_eq!(status(&h, a), Status::Failed);
    // Seen: a message sent now resumes the queue.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let b = h.engine.send_text(conv, "b after it").unwrap();
    settle().await;
    assert_eq!(status(&h, b), Status::Sent);
    let c = h.engine.send_text(conv, "c fails").unwrap();
    settle().await;
    let d = h.engine.send_text(conv, "d behind c").unwrap();
    settle().await;
    assert_eq!(
        (status(&h, c), status(&h, d)),
        (Status::Failed, Status::Pending)
    );
    h.engine.retry(c).unwrap();
    settle().await;
    assert_eq!(
        (status(&h, c), status(&h, d), status(&h, a)),
        (Status::Sent, Status::Sent, Status::Failed)
    );
}

/// A reply that another dispatcher took over while this one was frozen
/// (SIGSTOP past its lease) is not told as finished here: one reply gave
/// two "reply finished" notices (and two notify_command runs).
#[tokio::test(start_paused = true)]
async fn a_reply_taken_over_elsewhere_is_not_told_as_finished_here() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let h = harness(vec![Step::Hold(vec![text("partial")], gate.clone())]);
    let conv = new_conv(&h);
    let mut events = h.engine.subscribe();
    h.engine.start();
    h.engine.send_text(conv, "hello").unwrap();
    settle().await;
    // Another dispatcher's recovery: the reply streaming here is cut.
    let rec = h
        .engine
        .store()
        .recover_as(h.engine.now_ms(), 3_600_000, Some("another-tock"))
        .unwrap();
    assert_eq!(rec.interrupted_replies.len(), 1, "{rec:?}");
    gate.notify_one();
    settle().await;
    let mut finished = 0;
    while let Ok(ev) = events.try_recv() {
        if let tock::engine::Event::Notice(n) = ev
            && n.kind == tock::engine::NoticeKind::ReplyFinished
        {
            finished += 1;
        }
    }
    // The one told is the reply asked for again after the takeover (here
    // too, as this engine still dispatches); the cut one is not told.
    assert_eq!(h.provider.count(), 2);
    assert_eq!(finished, 1);
}

/// A dispatcher about to be stopped (Ctrl+Z) lets the lease go: the tock
/// standing by sends what falls due at once, not once the stopped one's
/// lease has run out (over a minute).
#[tokio::test(start_paused = true)]
async fn a_dispatcher_that_steps_aside_is_taken_over_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tock.db");
    let clock = Arc::new(ManualClock::new(T0));
    let mk = |p: Arc<Scripted>| {
        let cfg =
            Arc::new(tock::config::ConfigSource::from_config(Config::default()).with_provider(p));
        Engine::new(Store::open(&path).unwrap(), cfg, clock.clone(), options())
    };
    let (p1, p2) = (Scripted::new(vec![]), Scripted::new(vec![]));
    let e1 = mk(p1.clone());
    let e2 = mk(p2.clone());
    let conv = e1
        .store()
        .create_conversation(Some("c"), "user", T0)
        .unwrap();
    e1.start();
    settle().await;
    e2.start();
    settle().await;
    assert_eq!(e1.dispatch_state(), DispatchState::Dispatching);
    assert!(matches!(e2.dispatch_state(), DispatchState::Standby { .. }));
    assert!(e1.step_aside());
    e1.halt();
    let id = e2.send_text(conv, "while the other is stopped").unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    settle().await;
    assert_eq!(e2.dispatch_state(), DispatchState::Dispatching);
    assert_eq!(e2.store().item(id).unwrap().unwrap().status, Status::Sent);
    assert_eq!((p1.count(), p2.count()), (0, 1));
}

/// Back from the stop with no other tock about, it takes the lease again
/// and sends; while a reply streams it does not let the lease go (another
/// would take the reply as cut and ask for it again).
#[tokio::test(start_paused = true)]
async fn a_dispatcher_back_from_stepping_aside_sends_again() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let h = harness(vec![Step::Hold(vec![text("slow")], gate.clone())]);
    let conv = new_conv(&h);
    h.engine.start();
    settle().await;
    assert!(h.engine.step_aside());
    h.engine.wake();
    let id = h.engine.send_text(conv, "hello").unwrap();
    settle().await;
    assert_eq!(h.engine.dispatch_state(), DispatchState::Dispatching);
    assert!(h.engine.turns_in_flight() == 1, "the reply streams");
    assert!(!h.engine.step_aside(), "not while a reply streams");
    gate.notify_one();
    settle().await;
    assert_eq!(status(&h, id), Status::Sent);
}

#[tokio::test(start_paused = true)]
async fn two_engines_on_one_database_never_double_send() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tock.db");
    let s1 = Store::open(&path).unwrap();
    let s2 = Store::open(&path).unwrap();
    let p1 = Scripted::new(vec![]);
    let p2 = Scripted::new(vec![]);
    let clock = Arc::new(ManualClock::new(T0));
    let mk = |s: Store, p: Arc<Scripted>| {
        let cfg =
            Arc::new(tock::config::ConfigSource::from_config(Config::default()).with_provider(p));
        Engine::new(s, cfg, clock.clone(), options())
    };
    let e1 = mk(s1, p1.clone());
    let e2 = mk(s2, p2.clone());
    let conv = e1
        .store()
        .create_conversation(Some("c"), "user", T0)
        .unwrap();
    let mut ids = Vec::new();
    for i in 0..20 {
        let mut it = NewItem::new(conv, Kind::Message, format!("m{i}"));
        it.due_at = Some(T0 + 1_000 + i * 10);
        ids.push(e1.store().enqueue(&it, T0).unwrap());
    }
    e1.start();
    e2.start();
    settle().await;
    let states = [e1.dispatch_state(), e2.dispatch_state()];
    assert!(states.contains(&DispatchState::Dispatching));
    assert!(
        states
            .iter()
            .any(|s| matches!(s, DispatchState::Standby { .. })),
        "{states:?}"
    );
    tokio::time::sleep(Duration::from_secs(5)).await;
    settle().await;
    // The dispatcher goes away without releasing (as if killed); the other takes over after the lease.
    let (live, live_p) = if e1.dispatch_state() == DispatchState::Dispatching {
        (e2.clone(), p2.clone())
    } else {
        (e1.clone(), p1.clone())
    };
    let dead = if e1.dispatch_state() == DispatchState::Dispatching {
        e1
    } else {
        e2
    };
    dead.halt();
    let later: Vec<i64> = (0..5)
        .map(|i| {
            let mut it = NewItem::new(conv, Kind::Message, format!("after{i}"));
            it.due_at = Some(T0 + 10_000);
            live.store().enqueue(&it, T0).unwrap()
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(200)).await;
    settle().await;
    assert_eq!(
        live.dispatch_state(),
        DispatchState::Dispatching,
        "took over after the lease expired"
    );
    assert!(live_p.count() >= 5);
    let msgs = live.store().messages(conv).unwrap();
    let users: Vec<_> = msgs
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.content.clone())
        .collect();
    assert_eq!(users.len(), 25, "every item exactly once: {users:?}");
    let mut dedup = users.clone();
    dedup.sort();
    dedup.dedup();
    assert_eq!(dedup.len(), 25);
    for id in ids.iter().chain(&later) {
        assert_eq!(
            live.store().item(*id).unwrap().unwrap().status,
            Status::Sent
        );
    }
}

fn tool_call(name: &str, args: &str) -> StreamEvent {
    StreamEvent::ToolCall(ToolCall {
        id: "call_1".into(),
        name: name.into(),
        arguments: args.into(),
    })
}

#[tokio::test(start_paused = true)]
async fn schedule_task_waits_for_approval_then_fires_into_its_conversation() {
    let h = harness(vec![
        Step::Reply(vec![
            text("I'll check back."),
            tool_call(
                "schedule_task",
                r#"{"instruction":"check the build","delay_secs":3600,"title":"build"}"#,
            ),
            done(),
        ]),
        Step::Reply(vec![text("Scheduled."), done()]),
        Step::Reply(vec![text("Noted."), done()]),
        Step::Reply(vec![text("The build is green."), done()]),
    ]);
    let conv = new_conv(&h);
    let mut events = h.engine.subscribe();
    h.engine.start();
    h.engine.send_text(conv, "remind me").unwrap();
    settle().await;
    let approvals = h.engine.store().approvals(conv).unwrap();
    assert_eq!(approvals.len(), 1);
    // The reply that asks is not "finished": the approval's notice stands
    // (a "reply finished" after it took its place in the status bar).
    let mut kinds = Vec::new();
    while let Ok(e) = events.try_recv() {
        if let tock::engine::Event::Notice(n) = e {
            kinds.push(n.kind);
        }
    }
    assert!(
        kinds.contains(&tock::engine::NoticeKind::Approval)
            && !kinds.contains(&tock::engine::NoticeKind::ReplyFinished),
        "{kinds:?}"
    );
    assert!(
        h.engine
            .store()
            .list_items(false)
            .unwrap()
            .iter()
            .all(|i| i.kind != Kind::Task),
        "nothing before approval"
    );
    // While the approval waits, the conversation does not take new sends.
    let q = h.engine.send_text(conv, "meanwhile").unwrap();
    settle().await;
    assert_eq!(status(&h, q), Status::Pending);
    h.engine.answer_approval(approvals[0].id, true).unwrap();
    settle().await;
    let task = h
        .engine
        .store()
        .list_items(false)
        .unwrap()
        .into_iter()
        .find(|i| i.kind == Kind::Task)
        .unwrap();
    assert_eq!(task.due_at, Some(T0 + 3_600_000));
    assert_eq!(task.text, "check the build");
    // The model got the tool result and continued.
    let reqs = h.provider.requests();
    let cont = &reqs[1];
    assert_eq!(
        user_texts(&h, conv),
        vec!["remind me", "meanwhile"],
        "the continuation went first, then the queued message"
    );
    assert!(cont.messages.iter().any(|m| matches!(m, ChatMessage::ToolResult { content, .. } if content.contains(&format!("\"job_id\":{}", task.id)))));
    assert!(cont.tools.iter().any(|t| t.name == "schedule_task"));
    tokio::time::sleep(Duration::from_secs(3_601)).await;
    settle().await;
    assert_eq!(status(&h, task.id), Status::Sent);
    let users = user_texts(&h, conv);
    assert_eq!(users.last().unwrap(), "[Scheduled task] check the build");
    let last = h.engine.store().messages(conv).unwrap().pop().unwrap();
    assert_eq!(last.content, "The build is green.");
}

#[tokio::test(start_paused = true)]
async fn denied_or_invalid_tool_calls_give_the_model_a_readable_result() {
    let h = harness(vec![
        Step::Reply(vec![
            tool_call("schedule_task", r#"{"instruction":"x","delay_secs":60}"#),
            done(),
        ]),
        Step::Reply(vec![text("ok, not scheduled"), done()]),
        Step::Reply(vec![
            tool_call("schedule_task", r#"{"instruction":"","at":"yesterday"}"#),
            done(),
        ]),
        Step::Reply(vec![text("sorry"), done()]),
    ]);
    let conv = new_conv(&h);
    h.engine.start();
    h.engine.send_text(conv, "a").unwrap();
    settle().await;
    let ap = h.engine.store().approvals(conv).unwrap();
    h.engine.answer_approval(ap[0].id, false).unwrap();
    settle().await;
    let reqs = h.provider.requests();
    assert!(reqs[1].messages.iter().any(
        |m| matches!(m, ChatMessage::ToolResult { content, .. } if content.contains("declined"))
    ));
    h.engine.send_text(conv, "b").unwrap();
    settle().await;
    let reqs = h.provider.requests();
    assert!(reqs[3].messages.iter().any(|m| matches!(m, ChatMessage::ToolResult { content, .. } if content.contains("instruction is required"))));
    assert!(
        h.engine
            .store()
            .list_items(true)
            .unwrap()
            .iter()
            .all(|i| i.kind != Kind::Task)
    );
}

#[tokio::test(start_paused = true)]
async fn auto_approved_task_fires_into_new_conversation_when_origin_deleted() {
    let cfg = Config {
        auto_approve: vec!["schedule_task".into()],
        ..Default::default()
    };
    let h = harness_with(
        Scripted::new(vec![Step::Reply(vec![
            tool_call(
                "schedule_task",
                r#"{"instruction":"water plants","delay_secs":60,"title":"Plants"}"#,
            ),
            done(),
        ])]),
        cfg,
    );
    let conv = new_conv(&h);
    h.engine.start();
    h.engine.send_text(conv, "remind me").unwrap();
    settle().await;
    let task = h
        .engine
        .store()
        .list_items(false)
        .unwrap()
        .into_iter()
        .find(|i| i.kind == Kind::Task)
        .expect("auto-approved");
    h.engine
        .store()
        .delete_conversation(conv, h.engine.now_ms())
        .unwrap();
    tokio::time::sleep(Duration::from_secs(61)).await;
    settle().await;
    let it = h.engine.store().item(task.id).unwrap().unwrap();
    assert_eq!(it.status, Status::Sent);
    let new_conv = it.conversation_id.unwrap();
    assert_ne!(new_conv, conv);
    let c = h.engine.store().conversation(new_conv).unwrap().unwrap();
    assert_eq!(
        (c.origin.as_str(), c.title.as_deref()),
        ("schedule", Some("Plants"))
    );
    assert_eq!(
        user_texts(&h, new_conv),
        vec!["[Scheduled task] water plants"]
    );
}

#[tokio::test(start_paused = true)]
async fn task_survives_restart_before_due_and_expires_beyond_grace() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tock.db");
    let store = Store::open(&path).unwrap();
    let conv = store.create_conversation(Some("c"), "user", T0).unwrap();
    let mut soon = NewItem::new(conv, Kind::Task, "stretch");
    soon.due_at = Some(T0 + 60_000);
    let soon = store.enqueue(&soon, T0 - 1_000).unwrap();
    let mut stale = NewItem::new(conv, Kind::Task, "too late");
    stale.due_at = Some(T0 - 13 * 3_600_000);
    let stale = store.enqueue(&stale, T0 - 14 * 3_600_000).unwrap();
    // "Restart": a new engine on the same file, as after a crash before due.
    let h = engine_on(store, Scripted::new(vec![]), Config::default(), dir);
    h.engine.start();
    settle().await;
    assert_eq!(status(&h, stale), Status::Expired);
    assert_eq!(status(&h, soon), Status::Pending);
    tokio::time::sleep(Duration::from_secs(61)).await;
    settle().await;
    assert_eq!(status(&h, soon), Status::Sent);
    assert_eq!(user_texts(&h, conv), vec!["[Scheduled task] stretch"]);
}

#[tokio::test(start_paused = true)]
async fn model_lists_and_cancels_its_tasks_with_approval_for_cancel() {
    let h = harness(vec![
        Step::Reply(vec![
            StreamEvent::ToolCall(ToolCall {
                id: "c1".into(),
                name: "list_scheduled".into(),
                arguments: "{}".into(),
            }),
            done(),
        ]),
        Step::Reply(vec![text("You have one."), done()]),
    ]);
    let conv = new_conv(&h);
    let mut task = NewItem::new(conv, Kind::Task, "water plants");
    task.due_at = Some(T0 + 3_600_000);
    let task = h.engine.store().enqueue(&task, T0).unwrap();
    h.engine.start();
    h.engine.send_text(conv, "what is scheduled?").unwrap();
    settle().await;
    // Listing needs no approval.
    let reqs = h.provider.requests();
    assert!(reqs[1].messages.iter().any(|m| matches!(m, ChatMessage::ToolResult { content, .. } if content.contains("water plants") && content.contains(&format!("\"job_id\":{task}")))));
    h.provider.push(Step::Reply(vec![
        StreamEvent::ToolCall(ToolCall {
            id: "c2".into(),
            name: "cancel_scheduled".into(),
            arguments: format!("{{\"job_id\":{task}}}"),
        }),
        done(),
    ]));
    h.provider
        .push(Step::Reply(vec![text("Canceled."), done()]));
    h.engine.send_text(conv, "cancel it").unwrap();
    settle().await;
    assert_eq!(
        status(&h, task),
        Status::Pending,
        "cancel waits for approval"
    );
    let ap = h
        .engine
        .store()
        .approvals(conv)
        .unwrap()
        .into_iter()
        .find(|a| a.tool == "cancel_scheduled")
        .unwrap();
    h.engine.answer_approval(ap.id, true).unwrap();
    settle().await;
    assert_eq!(status(&h, task), Status::Canceled);
    assert_eq!(
        h.engine
            .store()
            .messages(conv)
            .unwrap()
            .last()
            .unwrap()
            .content,
        "Canceled."
    );
}

#[tokio::test(start_paused = true)]
async fn fired_task_turn_gets_no_extra_permission() {
    // The fired turn's own tool calls still need approval.
    let h = harness(vec![Step::Reply(vec![
        tool_call(
            "schedule_task",
            r#"{"instruction":"again","delay_secs":60}"#,
        ),
        done(),
    ])]);
    let conv = new_conv(&h);
    let mut task = NewItem::new(conv, Kind::Task, "check again later");
    task.due_at = Some(T0 + 1_000);
    h.engine.store().enqueue(&task, T0).unwrap();
    h.engine.start();
    tokio::time::sleep(Duration::from_secs(2)).await;
    settle().await;
    let waiting: Vec<_> = h.engine.store().waiting_approvals().unwrap();
    assert_eq!(waiting.len(), 1, "a task's turn asks like any other turn");
    assert_eq!(
        h.engine
            .store()
            .list_items(false)
            .unwrap()
            .iter()
            .filter(|i| i.kind == Kind::Task && i.status == Status::Pending)
            .count(),
        0
    );
}

#[tokio::test(start_paused = true)]
async fn tool_calls_saved_but_never_answered_are_answered_on_restart() {
    // A crash between saving a reply with a tool call and recording the call's outcome.
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("tock.db")).unwrap();
    let conv = store.create_conversation(Some("c"), "user", T0).unwrap();
    let q = store
        .enqueue(&NewItem::new(conv, Kind::Queued, "remind me"), T0)
        .unwrap();
    assert!(store.claim(q, "dead", T0).unwrap());
    let item = store.item(q).unwrap().unwrap();
    let reply = store.accept(&item, "dead", "m", T0).unwrap().unwrap();
    let calls = r#"[{"id":"call_9","name":"schedule_task","arguments":"{\"instruction\":\"x\",\"delay_secs\":60}"}]"#;
    store
        .finish_message(
            reply,
            "Sure.",
            MessageStatus::Complete,
            None,
            Some(calls),
            T0,
        )
        .unwrap();
    let h = engine_on(
        store,
        Scripted::new(vec![Step::Reply(vec![text("Let me try again."), done()])]),
        Config::default(),
        dir,
    );
    h.engine.start();
    settle().await;
    let req = h
        .provider
        .requests()
        .pop()
        .expect("the model was asked to continue");
    assert!(req.messages.iter().any(|m| matches!(m, ChatMessage::ToolResult { call_id, content, .. } if call_id == "call_9" && content.contains("tock stopped"))));
    assert_eq!(
        h.engine
            .store()
            .messages(conv)
            .unwrap()
            .last()
            .unwrap()
            .content,
        "Let me try again."
    );
}

#[test]
fn what_the_ui_asks_about_a_model_never_runs_its_api_key_cmd() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("key-cmd-ran");
    let cfg: Config = toml::from_str(&format!(
        "[models.m]\nprovider = \"openai\"\nmodel = \"gpt-x\"\nbase_url = \"http://127.0.0.1:9/v1\"\n\
         api_key_cmd = \"touch '{}' && echo sk-from-the-command-0000\"\nvision = false\n",
        marker.display()
    ))
    .unwrap();
    let h = harness_with(Scripted::new(vec![]), cfg);
    let img = dir.path().join("photo.png");
    std::fs::write(&img, b"\x89PNG\r\n\x1a\n0000").unwrap();
    // Checking an attachment, the model list, the unknown-model warning.
    let refused = h.engine.check_attachment(Some("m"), &img).unwrap_err();
    assert!(format!("{refused:#}").contains("vision"), "{refused:#}");
    let _ = h.engine.cached_models(Some("m"));
    let _ = h.engine.unknown_model("m");
    let _ = h.engine.model_candidates(Some("m"));
    assert!(
        !marker.exists(),
        "the key command ran for a question the UI asked"
    );
    // What a request needs does run it, and describes the same model.
    let r = h.engine.config().resolve(Some("m")).unwrap();
    assert!(marker.exists());
    let f = h.engine.config().facts(Some("m")).unwrap();
    assert_eq!(
        (f.name, f.model, f.kind, f.vision, f.base_url),
        (r.name, r.model, r.kind, r.vision, r.base_url)
    );
}

/// A failing `api_key_cmd` (a password manager still locked) does not fail
/// the message at once: it backs off as from a network error, and goes once
/// the command answers. Between tries the command is not run again sooner
/// than every few seconds.
#[tokio::test(start_paused = true)]
async fn a_failing_key_command_is_tried_again_and_the_message_goes_when_it_answers() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("key");
    let runs = dir.path().join("runs");
    let cfg: Config = toml::from_str(&format!(
        "default_model = \"m\"\n[models.m]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\n\
         api_key_cmd = \"echo run >> '{}'; cat '{}'\"\n",
        runs.display(),
        key.display()
    ))
    .unwrap();
    let h = harness_with(
        Scripted::new(vec![Step::Reply(vec![text("hello"), done()])]),
        cfg,
    );
    let conv = new_conv(&h);
    h.engine.start();
    let id = h.engine.send_text(conv, "are you there?").unwrap();
    settle().await;
    let row = h.engine.store().item(id).unwrap().unwrap();
    assert_eq!(row.status, Status::Pending, "backing off, not failed");
    assert!(
        row.last_error
            .as_deref()
            .unwrap_or("")
            .contains("api_key_cmd"),
        "{row:?}"
    );
    assert_eq!(h.provider.count(), 0);
    std::fs::write(&key, "sk-now-unlocked-0000\n").unwrap();
    for _ in 0..12 {
        tokio::time::sleep(Duration::from_secs(5)).await;
        settle().await;
    }
    assert_eq!(status(&h, id), Status::Sent);
    assert_eq!(h.provider.count(), 1);
    let ran = std::fs::read_to_string(&runs)
        .unwrap_or_default()
        .lines()
        .count();
    assert!((2..=6).contains(&ran), "the command ran {ran} times");
}

/// A dispatcher killed without a word (kill -9) writes nothing; a tock in
/// standby on the same machine takes over as its process exits, not at its
/// next clock check (up to 30 s later), so the screen never names a dead
/// process as the one sending. Real time: the exit is a real process's.
#[tokio::test]
async fn standby_takes_over_the_moment_the_local_dispatcher_exits() {
    async fn reaches(engine: &Engine, want: impl Fn(&DispatchState) -> bool) -> bool {
        let mut events = engine.subscribe();
        tokio::time::timeout(Duration::from_secs(5), async {
            while !want(&engine.dispatch_state()) {
                // Any event is a reason to look again (a lagged receiver too).
                let _ = events.recv().await;
            }
        })
        .await
        .is_ok()
    }
    let h = harness(vec![]);
    let mut other = std::process::Command::new("sleep")
        .arg("600")
        .spawn()
        .unwrap();
    let owner = format!("{}:{}-other", tock::store::hostname(), other.id());
    let store = h.engine.store();
    assert!(store.acquire_lease(&owner, other.id(), T0, 75_000).unwrap());
    h.engine.start();
    let pid = i64::from(other.id());
    assert!(
        reaches(&h.engine, |s| *s == DispatchState::Standby { pid }).await,
        "standby while the other process lives: {:?}",
        h.engine.dispatch_state()
    );
    other.kill().unwrap();
    other.wait().unwrap();
    assert!(
        reaches(&h.engine, |s| *s == DispatchState::Dispatching).await,
        "took over within 5 s of the exit (the clock check is 30 s away): {:?}",
        h.engine.dispatch_state()
    );
}

/// A reminder that falls due while a tool call in its conversation waits
/// for an answer is held (the call's result must come first); it is told
/// once as it falls due, so it does not pass unnoticed. One elsewhere goes.
#[tokio::test(start_paused = true)]
async fn a_reminder_held_by_a_waiting_approval_is_told_once_when_due() {
    let h = harness(vec![]);
    let held_conv = new_conv(&h);
    let free_conv = new_conv(&h);
    let store = h.engine.store();
    store
        .add_approval(held_conv, 0, "call_1", "files__write_file", "{}", "{}", T0)
        .unwrap();
    let mut events = h.engine.subscribe();
    h.engine.start();
    settle().await;
    let held = scheduled(&h, held_conv, "feed the cat", T0 + 60_000);
    let free = scheduled(&h, free_conv, "water the plants", T0 + 60_000);
    tokio::time::sleep(Duration::from_secs(120)).await;
    settle().await;
    assert_eq!(status(&h, held), Status::Pending, "held by the approval");
    assert_eq!(status(&h, free), Status::Sent);
    let mut told = Vec::new();
    while let Ok(ev) = events.try_recv() {
        if let tock::engine::Event::Notice(n) = ev
            && n.kind == tock::engine::NoticeKind::Approval
        {
            told.push((n.conversation_id, n.text));
        }
    }
    assert_eq!(
        told,
        vec![(
            Some(held_conv),
            "“feed the cat” is due and waits for your answer to the tool call in its conversation"
                .to_string()
        )]
    );
}

/// A key the model echoes (a proxy that reflects headers, an injected
/// gateway) is no more stored than it is logged: the reply is saved with
/// every configured secret replaced, while it streams and at its end, also
/// when the key arrives split over two chunks, and search cannot find it.
#[tokio::test(start_paused = true)]
async fn a_secret_the_model_echoes_is_stored_redacted() {
    let key = "sk-testSECRETkey123456";
    let header = "HdrSecretQwe55555";
    let cfg: Config = toml::from_str(&format!(
        "default_model = \"m\"\n[models.m]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\n\
         api_key = \"{key}\"\n[mcp.web]\nurl = \"http://127.0.0.1:9/mcp\"\nenabled = false\n\
         headers = {{ \"X-Api-Token\" = \"{header}\" }}\n"
    ))
    .unwrap();
    let gate = Arc::new(tokio::sync::Notify::new());
    let h = harness_with(
        Scripted::new(vec![Step::Hold(
            vec![
                text("Your key is Bearer sk-testSEC"),
                text("RETkey123456 and the token "),
                text(header),
            ],
            gate.clone(),
        )]),
        cfg,
    );
    let conv = new_conv(&h);
    h.engine.start();
    h.engine.send_text(conv, "ECHOKEY").unwrap();
    // While it streams, what was saved holds no key, not even a beginning
    // of one cut between two saves.
    for _ in 0..20 {
        tokio::task::yield_now().await;
        let msgs = h.engine.store().messages(conv).unwrap();
        if let Some(reply) = msgs.iter().find(|m| m.role == Role::Assistant) {
            assert!(!reply.content.contains("sk-testSEC"), "{:?}", reply.content);
            assert!(!reply.content.contains(header), "{:?}", reply.content);
        }
    }
    settle().await;
    let msgs = h.engine.store().messages(conv).unwrap();
    assert_eq!(msgs[1].status, MessageStatus::Streaming);
    assert_eq!(
        msgs[1].content,
        "Your key is Bearer <redacted> and the token <redacted>"
    );
    gate.notify_one();
    settle().await;
    let msgs = h.engine.store().messages(conv).unwrap();
    assert_eq!(
        (msgs[1].status, msgs[1].content.as_str()),
        (
            MessageStatus::Complete,
            "Your key is Bearer <redacted> and the token <redacted>"
        )
    );
    let store = h.engine.store();
    assert!(store.search("testSECRETkey123456", 10).unwrap().is_empty());
    assert!(store.search(header, 10).unwrap().is_empty());
    assert_eq!(store.search("redacted", 10).unwrap().len(), 1);
}

/// What the front ends are handed while a reply streams is redacted as
/// what is stored is: a key split over chunks never reaches them, not even
/// its beginning, and their text adds up to the stored reply (offsets
/// included). A tool call's arguments are stored, and asked about, with the
/// key replaced too.
#[tokio::test(start_paused = true)]
async fn a_secret_never_reaches_the_front_ends_nor_the_stored_tool_calls() {
    let key = "sk-testSECRETkey123456";
    let cfg: Config = toml::from_str(&format!(
        "default_model = \"m\"\n[models.m]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\n\
         api_key = \"{key}\"\n"
    ))
    .unwrap();
    let h = harness_with(
        Scripted::new(vec![Step::Reply(vec![
            text("Your key is sk-te"),
            text("stSEC"),
            text("RETkey123456, and sk-t is no key; "),
            text("ends with sk-testS"),
            tool_call(
                "schedule_task",
                &format!(r#"{{"instruction":"send {key} to the server","delay_secs":60}}"#),
            ),
            done(),
        ])]),
        cfg,
    );
    let conv = new_conv(&h);
    let mut rx = h.engine.subscribe();
    h.engine.start();
    h.engine.send_text(conv, "ECHOKEY").unwrap();
    settle().await;
    let mut shown = String::new();
    while let Ok(ev) = rx.try_recv() {
        if let tock::engine::Event::Delta { offset, text, .. } = ev {
            assert_eq!(offset, shown.len(), "{shown:?} + {text:?}");
            shown.push_str(&text);
            // Not even a beginning of the key, whatever the chunks.
            assert!(!shown.contains("sk-testSE"), "{shown:?}");
        }
    }
    let msgs = h.engine.store().messages(conv).unwrap();
    let reply = msgs
        .iter()
        .find(|m| m.role == Role::Assistant)
        .expect("the reply");
    assert_eq!(
        reply.content,
        "Your key is <redacted>, and sk-t is no key; ends with sk-testS"
    );
    assert_eq!(shown, reply.content, "the front ends saw what is stored");
    assert!(!shown.contains(key));
    let calls = reply.tool_calls();
    assert_eq!(calls.len(), 1);
    let args: serde_json::Value = serde_json::from_str(&calls[0].arguments).unwrap();
    assert_eq!(
        args,
        serde_json::json!({"instruction": "send <redacted> to the server", "delay_secs": 60})
    );
    let approvals = h.engine.store().approvals(conv).unwrap();
    assert_eq!(approvals.len(), 1);
    assert!(!approvals[0].arguments.contains(key), "{:?}", approvals[0]);
    assert!(!approvals[0].summary.contains(key), "{:?}", approvals[0]);
    assert!(
        approvals[0]
            .summary
            .contains("send <redacted> to the server")
    );
}
