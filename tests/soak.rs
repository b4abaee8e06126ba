//! An accelerated soak: a simulated week of use on one database file with a
//! controlled clock — thousands of items scheduled, rescheduled, edited,
//! canceled and fired, transient provider failures, and the engine killed and
//! restarted at random moments — ending with every invariant intact.

mod common;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use tock::config::{Config, ConfigSource};
use tock::engine::{Engine, ManualClock};
use tock::llm::LlmError;
use tock::store::{Kind, NewItem, Role, Status, Store};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn boot(path: &std::path::Path, clock: Arc<ManualClock>, provider: Arc<Scripted>) -> Engine {
    let store = Store::open(path).unwrap();
    let cfg = Arc::new(ConfigSource::from_config(Config::default()).with_provider(provider));
    let e = Engine::new(store, cfg, clock, options());
    e.start();
    e
}

#[tokio::test(start_paused = true)]
async fn a_simulated_week_keeps_every_invariant() {
    let days: u64 = std::env::var("TOCK_SOAK_DAYS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tock.db");
    let clock = Arc::new(ManualClock::new(T0));
    let provider = Scripted::new(vec![]);
    let mut engine = boot(&path, clock.clone(), provider.clone());
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let convs: Vec<i64> = (0..8)
        .map(|i| {
            engine
                .store()
                .create_conversation(Some(&format!("c{i}")), "user", T0)
                .unwrap()
        })
        .collect();
    let mut created = 0usize;
    let mut restarts = 0usize;
    let mut canceled = 0usize;
    let mut rescheduled = 0usize;
    // Ten-minute steps through the week.
    for _step in 0..(days * 24 * 6) {
        let now = engine.now_ms();
        // New items: mostly scheduled within a day, some sent at once.
        for _ in 0..rng.below(4) {
            let conv = convs[rng.below(convs.len() as u64) as usize];
            let mut item = NewItem::new(conv, Kind::Message, format!("m{created}"));
            if rng.below(4) == 0 {
                item.kind = Kind::Queued;
            } else {
                item.due_at = Some(now + 1_000 + rng.below(24 * 3_600_000) as i64);
            }
            engine.submit(item).unwrap();
            created += 1;
        }
        // Users change their minds.
        let pending: Vec<_> = engine
            .store()
            .list_items(false)
            .unwrap()
            .into_iter()
            .filter(|i| i.status == Status::Pending && i.due_at.is_some())
            .collect();
        if !pending.is_empty() {
            let it = &pending[rng.below(pending.len() as u64) as usize];
            let choice = rng.below(6);
            if choice == 0 && engine.cancel(it.id).is_ok() {
                canceled += 1;
            } else if choice == 1
                && engine
                    .reschedule(it.id, now + 60_000 + rng.below(12 * 3_600_000) as i64)
                    .is_ok()
            {
                rescheduled += 1;
            } else if choice == 2 {
                let _ = engine.edit(it.id, &format!("{} (edited)", it.text));
            }
        }
        // The network misbehaves now and then.
        if rng.below(10) == 0 {
            provider.push(Step::Fail(LlmError::transient("503 Service Unavailable")));
        }
        tokio::time::sleep(Duration::from_secs(600)).await;
        settle().await;
        // The process dies at random moments and comes back.
        if rng.below(40) == 0 {
            engine.halt();
            drop(engine);
            tokio::time::sleep(Duration::from_secs(rng.below(120))).await;
            engine = boot(&path, clock.clone(), provider.clone());
            restarts += 1;
            settle().await;
        }
    }
    // Let everything still due go out (lease takeover, back-offs).
    tokio::time::sleep(Duration::from_secs(3_600)).await;
    settle().await;

    let store = engine.store();
    let end = engine.now_ms();
    let items = store.list_items(true).unwrap();
    let mut delivered: HashMap<i64, usize> = HashMap::new();
    for c in &convs {
        for m in store.messages(*c).unwrap() {
            if m.role == Role::User {
                *delivered.entry(m.outbox_id.unwrap()).or_default() += 1;
            }
        }
    }
    let mut sent = 0;
    for it in &items {
        let n = delivered.get(&it.id).copied().unwrap_or(0);
        match it.status {
            Status::Sent => {
                sent += 1;
                assert_eq!(n, 1, "item {} delivered {n} times", it.id);
                if let Some(due) = it.due_at {
                    assert!(
                        it.sent_at.unwrap() >= due,
                        "item {} sent before its due time",
                        it.id
                    );
                }
            }
            Status::Pending => {
                assert_eq!(n, 0);
                assert!(
                    it.due_at.unwrap_or(0) > end,
                    "item {} is overdue and still pending",
                    it.id
                );
            }
            Status::Sending => panic!("item {} left in sending", it.id),
            Status::Canceled | Status::Failed | Status::Expired => {
                assert_eq!(n, 0, "item {} is {:?} but was delivered", it.id, it.status)
            }
        }
    }
    assert!(
        sent > created / 2,
        "most items were delivered ({sent} of {created})"
    );
    eprintln!(
        "soak: {days} simulated days, {created} items, {sent} sent, {canceled} canceled, {rescheduled} rescheduled, {restarts} restarts, {} provider calls",
        provider.count()
    );
}
