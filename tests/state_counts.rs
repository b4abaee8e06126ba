//! The status bar's counts are read from the store's kept counts and kept
//! until a due time or back-off passes: they must change then by
//! themselves, without an outbox change to reload them.

mod common;

use common::*;
use tock::store::{Kind, NewItem};
use tock::tui::model::{Model, StateCounts};

const MIN: i64 = 60_000;

#[tokio::test(start_paused = true)]
async fn counts_follow_due_times_and_back_offs_without_a_reload() {
    let h = harness(vec![]);
    let store = h.engine.store();
    let conv = store.create_conversation(Some("c"), "user", T0).unwrap();
    let paused = store.create_conversation(Some("p"), "user", T0).unwrap();
    for due in [T0 + MIN, T0 + 2 * MIN, T0 + 60 * MIN] {
        let mut it = NewItem::new(conv, Kind::Message, "later");
        it.due_at = Some(due);
        store.enqueue(&it, T0).unwrap();
    }
    // In back-off for 30 s, then due at once.
    let retry = store
        .enqueue(&NewItem::new(conv, Kind::Queued, "again"), T0)
        .unwrap();
    assert!(store.claim(retry, "test", T0).unwrap());
    assert!(
        store
            .release_for_retry(retry, "test", "503", T0 + 30_000, T0)
            .unwrap()
    );
    // In a conversation whose queue a stop at T0 + 1 min paused: queued
    // before it (held by the pause), and scheduled, due a minute after it
    // (not held: a row with a time of its own goes at its time).
    store
        .enqueue(&NewItem::new(paused, Kind::Message, "held"), T0)
        .unwrap();
    let mut it = NewItem::new(paused, Kind::Message, "not held");
    it.due_at = Some(T0 + 2 * MIN);
    store.enqueue(&it, T0).unwrap();
    store.set_queue_paused(paused, Some(T0 + MIN)).unwrap();

    let mut m = Model::new(h.engine.clone());
    m.reload_summaries();
    let counts = |queued, retrying, scheduled, waiting| StateCounts {
        queued,
        retrying,
        scheduled,
        failed: 0,
        waiting,
    };
    assert_eq!(m.state_counts(), counts(0, 1, 4, 1));
    assert_eq!(m.pending_by_conv.get(&conv), Some(&4));
    assert_eq!(m.pending_by_conv.get(&paused), Some(&2));
    h.clock.jump(30_000);
    assert_eq!(m.state_counts(), counts(1, 0, 4, 1), "the back-off ended");
    h.clock.jump(30_000);
    assert_eq!(
        m.state_counts(),
        counts(2, 0, 3, 1),
        "one more due; the paused one's queued row held"
    );
    h.clock.jump(MIN);
    assert_eq!(
        m.state_counts(),
        counts(4, 0, 1, 1),
        "one more due in each; the paused one's came due after the stop"
    );
    // A row added: counted from the reload its change brings.
    store
        .enqueue(&NewItem::new(conv, Kind::Queued, "now"), T0 + 2 * MIN)
        .unwrap();
    m.reload_summaries();
    assert_eq!(m.state_counts(), counts(5, 0, 1, 1));
    assert_eq!(m.pending_by_conv.get(&conv), Some(&5));
}
