//! The scheduler's queries on a large outbox: what one dispatch pass costs.
//!
//! `cargo bench --bench scheduler` (add `-- --quick` for a fast pass).
//!
//! Each database (a file, WAL, as in production) holds 1,000 conversations
//! and N outbox rows: 100 pending rows due now (one per conversation), a
//! share of pending rows scheduled in the future, the rest finished (sent or
//! canceled) history. Rows are bulk-inserted in one transaction.
//!
//! - `dispatchable`: the heads that may go now (100 rows).
//! - `next_ready_at`: the earliest future instant the scheduler sleeps until.
//! - `claim_release`: the compare-and-swap claim of one row, then putting it
//!   back (`release_unattempted`) so the next iteration can claim it again.
//! - `tick`: `dispatchable` + `next_ready_at`, i.e. one wake-up of the loop
//!   when nothing can be dispatched (every due head is taken back at once).
//! - `list_items`: every unfinished item, which the TUI loads at start and
//!   after each outbox change (status-bar counts, F2).
use std::hint::black_box;
use std::path::Path;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use rusqlite::{Connection, params};
use tock::store::Store;

const NOW: i64 = 1_796_000_000_000;
const CONVERSATIONS: i64 = 1_000;
const DUE: i64 = 100;

/// Fill a fresh database with `rows` outbox rows, `future` of them pending
/// and scheduled after NOW.
fn seed(path: &Path, rows: i64, future: i64) {
    drop(Store::open(path).expect("store"));
    let mut conn = Connection::open(path).expect("open");
    conn.pragma_update(None, "synchronous", "OFF")
        .expect("pragma");
    let tx = conn.transaction().expect("tx");
    {
        let mut c = tx
            .prepare("INSERT INTO conversations (id, title, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)")
            .expect("prepare");
        for id in 1..=CONVERSATIONS {
            c.execute(params![id, format!("conversation {id}"), NOW - 86_400_000])
                .expect("conversation");
        }
        let mut o = tx
            .prepare(
                "INSERT INTO outbox (conversation_id, kind, text, due_at, status, attempts,
                                     created_at, updated_at, sent_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8)",
            )
            .expect("prepare");
        for i in 0..rows {
            let conv = i % CONVERSATIONS + 1;
            let (kind, due, status, sent) = if i < DUE {
                ("message", Some(NOW - 1_000 - i), "pending", None)
            } else if i < DUE + future {
                // Spread over the next 30 days.
                (
                    "message",
                    Some(NOW + 60_000 + (i * 7_919) % 2_592_000_000),
                    "pending",
                    None,
                )
            } else if i % 50 == 0 {
                ("queued", None, "canceled", None)
            } else {
                let t = NOW - 1_000_000 - i * 1_000;
                ("queued", None, "sent", Some(t))
            };
            let created = due.unwrap_or(NOW - 1_000_000 - i * 1_000) - 5_000;
            o.execute(params![
                conv,
                kind,
                format!("message {i}: please summarise the build log"),
                due,
                status,
                i64::from(status != "pending"),
                created,
                sent
            ])
            .expect("outbox");
        }
    }
    tx.commit().expect("commit");
    // No ANALYZE: tock never runs it, so the planner works without statistics.
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut g = c.benchmark_group("scheduler");
    g.sample_size(30);
    for (label, rows, future) in [
        ("10k_rows_1k_scheduled", 10_000i64, 1_000i64),
        ("1m_rows_10k_scheduled", 1_000_000, 10_000),
        ("1m_rows_100k_scheduled", 1_000_000, 100_000),
    ] {
        let path = dir.path().join(format!("{label}.db"));
        seed(&path, rows, future);
        let store = Store::open(&path).expect("store");
        assert_eq!(
            store.dispatchable(NOW).expect("dispatchable").len(),
            DUE as usize
        );
        let head = store.dispatchable(NOW).expect("dispatchable")[0].id;

        g.bench_with_input(BenchmarkId::new("dispatchable", label), &store, |b, s| {
            b.iter(|| black_box(s.dispatchable(NOW).expect("dispatchable")))
        });
        g.bench_with_input(BenchmarkId::new("next_ready_at", label), &store, |b, s| {
            b.iter(|| black_box(s.next_ready_at(NOW).expect("next_ready_at")))
        });
        g.bench_with_input(BenchmarkId::new("claim_release", label), &store, |b, s| {
            b.iter(|| {
                assert!(s.claim(head, "bench", NOW).expect("claim"));
                assert!(s.release_unattempted(head, "bench", NOW).expect("release"));
            })
        });
        // Not the scheduler, but the same table: the TUI loads every unfinished
        // item at start and after each outbox change (status-bar counts, F2).
        g.bench_with_input(BenchmarkId::new("list_items", label), &store, |b, s| {
            b.iter(|| black_box(s.list_items(false).expect("list_items")))
        });
        g.bench_with_input(BenchmarkId::new("tick", label), &store, |b, s| {
            b.iter(|| {
                black_box(s.dispatchable(NOW).expect("dispatchable"));
                black_box(s.next_ready_at(NOW).expect("next_ready_at"))
            })
        });
        drop(store);
        let _ = std::fs::remove_file(&path);
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
