//! What recurring series cost the scheduler per pass.
//!
//! `cargo bench --bench series` (add `-- --quick` for a fast pass).
//!
//! Each database (a file, WAL, as in production) holds 1,000 conversations
//! and 10,000 active series, their rules a mix of daily, weekday, weekly,
//! interval and cron rules. A pass is what the scheduler does for series on
//! every wake-up: `advance_series` (read the due series; for each, compute the
//! catch-up and next occurrence with `recur`, create the occurrence row,
//! coalesce an older waiting one, advance the series — all in one
//! transaction) and `next_series_due` (when to wake next).
//!
//! - `pass_none_due`: 10,000 active series, none due (the common wake-up).
//! - `pass_100_due`: 100 of the 10,000 due at once.
//! - `pass_all_due`: all 10,000 due at once (e.g. every series at 09:00):
//!   one pass advances at most 500 (`PASS`, as the scheduler does).
//! - `drain_all_due`: the passes, back to back, until none of the 10,000 is due.
use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use rusqlite::{Connection, params};
use tock::recur::{Position, Rule, catch_up};
use tock::store::{Series, SeriesStep, Store};

const NOW: i64 = 1_796_000_000_000;
const CONVERSATIONS: i64 = 1_000;
const SERIES: i64 = 10_000;
const GRACE: i64 = 12 * 3_600_000;
/// The scheduler's limit per pass (`engine::series::PASS_LIMIT`).
const PASS: usize = 500;

const RULES: [&str; 6] = [
    "every day at 09:00",
    "every weekday at 09:00",
    "every Mon, Wed and Fri at 08:30",
    "every 2 hours",
    "cron \"*/5 * * * *\"",
    "every month on the 1st at 09:00",
];

/// A fresh database with `SERIES` active series, `due` of them due at NOW.
fn seed(path: &Path, due: i64) {
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
        let mut s = tx
            .prepare(
                "INSERT INTO series (id, conversation_id, kind, text, rule, anchor_at, next_due_at,
                                     status, created_at, updated_at)
                 VALUES (?1, ?2, 'message', ?3, ?4, ?5, ?5, 'active', ?6, ?6)",
            )
            .expect("prepare");
        for i in 0..SERIES {
            let next = if i < due {
                NOW - 1_000 - i
            } else {
                // Spread over the next 30 days.
                NOW + 60_000 + (i * 7_919) % 2_592_000_000
            };
            s.execute(params![
                i + 1,
                i % CONVERSATIONS + 1,
                format!("series {i}: summarise the build log"),
                RULES[(i % RULES.len() as i64) as usize],
                next,
                NOW - 86_400_000
            ])
            .expect("series");
        }
        tx.execute(
            "INSERT INTO sqlite_sequence (name, seq) VALUES ('outbox', ?1)",
            [SERIES],
        )
        .expect("sequence");
    }
    tx.commit().expect("commit");
}

/// The scheduler's plan for one due series (as `engine::series::advance`).
fn plan(s: &Series) -> SeriesStep {
    let (Ok(rule), Some(due)) = (Rule::stored(&s.rule), s.next_due_at) else {
        return SeriesStep {
            fire: None,
            skipped: 0,
            consumed: 0,
            next_due_at: None,
        };
    };
    let pos = Position {
        anchor: s.anchor_at,
        next_due: due,
        until: s.until_at,
        remaining: s.remaining,
    };
    let c = catch_up(&rule, &chrono::Utc, pos, NOW, GRACE);
    SeriesStep {
        fire: c.fire,
        skipped: c.skipped as i64,
        consumed: c.consumed as i64,
        next_due_at: c.next,
    }
}

fn pass(store: &Store) -> usize {
    let n = store
        .advance_series(NOW, PASS, plan)
        .expect("advance")
        .len();
    black_box(store.next_series_due().expect("next"));
    n
}

fn drain(store: &Store) -> usize {
    let mut total = 0;
    loop {
        let n = pass(store);
        total += n;
        if n < PASS {
            return total;
        }
    }
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut g = c.benchmark_group("series");
    // The calendar work alone, per rule: parse the stored rule, then the catch-up.
    for (i, rule) in RULES.iter().enumerate() {
        let s = Series {
            id: 1,
            conversation_id: Some(1),
            kind: tock::store::Kind::Message,
            text: String::new(),
            title: None,
            model_override: None,
            payload_json: None,
            rule: rule.to_string(),
            anchor_at: NOW - 1_000,
            next_due_at: Some(NOW - 1_000),
            until_at: None,
            remaining: None,
            occurrences: 0,
            skipped: 0,
            status: tock::store::SeriesStatus::Active,
            created_at: 0,
            updated_at: 0,
            zone: None,
        };
        g.bench_function(BenchmarkId::new("plan", i), |b| {
            b.iter(|| black_box(plan(&s)))
        });
        let parsed = Rule::parse(rule).expect("rule");
        g.bench_function(BenchmarkId::new("parse", i), |b| {
            b.iter(|| black_box(Rule::parse(rule).expect("rule")))
        });
        g.bench_function(BenchmarkId::new("next_after", i), |b| {
            b.iter(|| black_box(parsed.next_after(&chrono::Utc, NOW, NOW)))
        });
    }
    g.sample_size(20);
    for (due, drain_all) in [(0, false), (100, false), (SERIES, false), (SERIES, true)] {
        let seeded: PathBuf = dir.path().join(format!("seed-{due}.db"));
        if !seeded.exists() {
            seed(&seeded, due);
        }
        let name = match (due, drain_all) {
            (0, _) => "pass_none_due",
            (100, _) => "pass_100_due",
            (_, false) => "pass_all_due",
            (_, true) => "drain_all_due",
        };
        if due == 0 {
            // Nothing changes: the same database serves every iteration.
            let store = Store::open(&seeded).expect("store");
            g.bench_function(BenchmarkId::new(name, SERIES), |b| {
                b.iter(|| assert_eq!(pass(&store), 0))
            });
            continue;
        }
        // Each iteration advances a fresh copy (the pass changes the rows).
        let mut k = 0;
        g.bench_function(BenchmarkId::new(name, SERIES), |b| {
            b.iter_batched(
                || {
                    k += 1;
                    let p = dir.path().join(format!("run-{name}-{k}.db"));
                    std::fs::copy(&seeded, &p).expect("copy");
                    let store = Store::open(&p).expect("store");
                    // Warm the page cache and statement cache as a running tock has.
                    black_box(store.next_series_due().expect("warm"));
                    (store, p)
                },
                |(store, p)| {
                    if drain_all {
                        assert_eq!(drain(&store), due as usize);
                    } else {
                        assert_eq!(pass(&store), (due as usize).min(PASS));
                    }
                    (store, p)
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
