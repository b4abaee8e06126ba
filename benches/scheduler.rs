//! The scheduler's queries on a large outbox: what one dispatch pass costs.
//!
//! `cargo bench --bench scheduler` (add `-- --quick` for a fast pass).
//!
//! Each database (a file, WAL, as in production; seeded once by `tock-seed`
//! and cached, see `benches/common`) holds 1,000 conversations, 2,000
//! messages and an outbox of finished history (sent, one in 50 canceled),
//! pending rows scheduled 1 hour to 30 days ahead and, where named, 100
//! pending rows due now (one per conversation).
//!
//! - `dispatchable`: the heads that may go now (100 rows, or none).
//! - `next_ready_at`: the earliest future instant the scheduler sleeps until.
//! - `claim_release`: the compare-and-swap claim of one row, then putting it
//!   back (`release_unattempted`) so the next iteration can claim it again.
//! - `tick`: `dispatchable` + `next_ready_at`, i.e. one wake-up of the loop
//!   when nothing can be dispatched (every due head is taken back at once).
//! - `pass`: every store call of one scheduler pass that holds the lease and
//!   finds nothing due (the steady state): lease renewal, due series,
//!   approved and waiting tool calls, `dispatchable`, `next_ready_at`, the
//!   next series occurrence.
//! - `engine_pass/1m_rows_100k_scheduled_none_due`: the scheduler's real
//!   pass (`Engine::dispatch_pass`, the function its loop calls) on the
//!   same database: config check, lease, series, tool calls, dispatch.
use std::hint::black_box;
use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use tock::config::{Config, ConfigSource};
use tock::engine::{Engine, ManualClock, Options};
use tock::store::Store;

mod common;
use common::{NOW, Shape};

fn shape(history: i64, scheduled: i64, due_now: i64) -> Shape {
    Shape {
        conversations: 1_000,
        messages: 2_000,
        history,
        scheduled,
        due_now,
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("scheduler");
    g.sample_size(30);
    for (label, s) in [
        ("10k_rows_1k_scheduled", shape(10_000, 1_000, 100)),
        ("1m_rows_10k_scheduled", shape(1_000_000, 10_000, 100)),
        ("1m_rows_100k_scheduled", shape(1_000_000, 100_000, 100)),
        (
            "1m_rows_100k_scheduled_none_due",
            shape(1_000_000, 100_000, 0),
        ),
    ] {
        let store = Store::open(&common::database(s)).expect("store");
        let heads = store.dispatchable(NOW).expect("dispatchable");
        assert_eq!(heads.len(), s.due_now as usize);

        g.bench_with_input(BenchmarkId::new("dispatchable", label), &store, |b, s| {
            b.iter(|| black_box(s.dispatchable(NOW).expect("dispatchable")))
        });
        g.bench_with_input(BenchmarkId::new("next_ready_at", label), &store, |b, s| {
            b.iter(|| black_box(s.next_ready_at(NOW).expect("next_ready_at")))
        });
        if let Some(head) = heads.first().map(|h| h.id) {
            g.bench_with_input(BenchmarkId::new("claim_release", label), &store, |b, s| {
                b.iter(|| {
                    assert!(s.claim(head, "bench", NOW).expect("claim"));
                    assert!(s.release_unattempted(head, "bench", NOW).expect("release"));
                })
            });
        }
        g.bench_with_input(BenchmarkId::new("tick", label), &store, |b, s| {
            b.iter(|| {
                black_box(s.dispatchable(NOW).expect("dispatchable"));
                black_box(s.next_ready_at(NOW).expect("next_ready_at"))
            })
        });
        g.bench_with_input(BenchmarkId::new("pass", label), &store, |b, s| {
            b.iter(|| {
                assert!(
                    s.acquire_lease("bench", std::process::id(), NOW, 30_000)
                        .expect("lease")
                );
                black_box(
                    s.advance_series(NOW, 50, |_| unreachable!("no series is due"))
                        .expect("series"),
                );
                black_box(s.executing_approvals().expect("executing"));
                black_box(s.waiting_approvals().expect("waiting"));
                black_box(s.dispatchable(NOW).expect("dispatchable"));
                black_box(s.next_ready_at(NOW).expect("next_ready_at"));
                black_box(s.next_series_due().expect("next series"))
            })
        });
        let _ = store.release_lease("bench");
        if s.due_now == 0 && s.scheduled == 100_000 {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            let _guard = rt.enter();
            let engine = Engine::new(
                store,
                Arc::new(ConfigSource::from_config(Config::default())),
                Arc::new(ManualClock::new(NOW)),
                Options {
                    watch_db: false,
                    ..Options::default()
                },
            );
            let mut holding = false;
            // The first pass takes the lease and runs start-up recovery.
            engine.dispatch_pass(&mut holding);
            assert!(holding, "the pass holds the lease");
            g.bench_function(BenchmarkId::new("engine_pass", label), |b| {
                b.iter(|| black_box(engine.dispatch_pass(&mut holding)))
            });
            let _ = engine.store().release_lease(engine.owner());
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
