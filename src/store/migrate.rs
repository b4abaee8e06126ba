//! Numbered migrations embedded at build time, applied in order, each in its
//! own transaction and recorded in `schema_migrations`.
//!
//! Each migration carries its number, and a migration runs when its number is
//! not recorded yet (not merely when it is above the highest recorded one):
//! numbers may have gaps, and a migration numbered into a gap later (work
//! merged from another branch) is still applied to databases that already
//! have the higher ones.

use anyhow::{Result, bail};
use rusqlite::Connection;

pub(crate) const MIGRATIONS: &[(i64, &str, &str)] = &[
    (
        1,
        "0001_init",
        include_str!("../../migrations/0001_init.sql"),
    ),
    (
        2,
        "0002_outbox",
        include_str!("../../migrations/0002_outbox.sql"),
    ),
    (
        3,
        "0003_approvals",
        include_str!("../../migrations/0003_approvals.sql"),
    ),
    (
        4,
        "0004_drafts_and_pause",
        include_str!("../../migrations/0004_drafts_and_pause.sql"),
    ),
    (
        5,
        "0005_series",
        include_str!("../../migrations/0005_series.sql"),
    ),
    (
        6,
        "0006_search",
        include_str!("../../migrations/0006_search.sql"),
    ),
    (
        7,
        "0007_usage_and_versions",
        include_str!("../../migrations/0007_usage_and_versions.sql"),
    ),
    (
        8,
        "0008_approval_runs",
        include_str!("../../migrations/0008_approval_runs.sql"),
    ),
    (
        9,
        "0009_scale_indexes",
        include_str!("../../migrations/0009_scale_indexes.sql"),
    ),
    (
        10,
        "0010_listed_counts",
        include_str!("../../migrations/0010_listed_counts.sql"),
    ),
    (
        11,
        "0011_search_unspaced",
        include_str!("../../migrations/0011_search_unspaced.sql"),
    ),
    (
        12,
        "0012_stop_requests",
        include_str!("../../migrations/0012_stop_requests.sql"),
    ),
    (
        13,
        "0013_search_symbols",
        include_str!("../../migrations/0013_search_symbols.sql"),
    ),
    (
        14,
        "0014_series_zone",
        include_str!("../../migrations/0014_series_zone.sql"),
    ),
    (
        15,
        "0015_notices",
        include_str!("../../migrations/0015_notices.sql"),
    ),
    (
        16,
        "0016_tool_runs",
        include_str!("../../migrations/0016_tool_runs.sql"),
    ),
    (
        17,
        "0017_unfinished_regenerations",
        include_str!("../../migrations/0017_unfinished_regenerations.sql"),
    ),
    (
        18,
        "0018_reasoning_chars",
        include_str!("../../migrations/0018_reasoning_chars.sql"),
    ),
    (
        19,
        "0019_stop_request_in_flight",
        include_str!("../../migrations/0019_stop_request_in_flight.sql"),
    ),
    (
        20,
        "0020_reasoning_text",
        include_str!("../../migrations/0020_reasoning_text.sql"),
    ),
];

/// The highest migration number this build knows.
pub(crate) const LATEST: i64 = {
    let mut max = 0;
    let mut i = 0;
    while i < MIGRATIONS.len() {
        if MIGRATIONS[i].0 > max {
            max = MIGRATIONS[i].0;
        }
        i += 1;
    }
    max
};

pub(crate) fn migrate(conn: &mut Connection) -> Result<()> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
            version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)",
    )?;
    let current: i64 = conn.query_row(
        "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
        [],
        |r| r.get(0),
    )?;
    if current > LATEST {
        bail!(
            "this database was written by a newer tock (schema {current}, this build knows {LATEST}); upgrade tock"
        );
    }
    let applied: Vec<i64> = {
        let mut st = conn.prepare("SELECT version FROM schema_migrations")?;
        st.query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?
    };
    for &(version, name, sql) in MIGRATIONS {
        if applied.contains(&version) {
            continue;
        }
        // IMMEDIATE: two processes starting together must not both apply it.
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let done: bool = tx.query_row(
            "SELECT EXISTS(SELECT 1 FROM schema_migrations WHERE version = ?1)",
            [version],
            |r| r.get(0),
        )?;
        if !done {
            tx.execute_batch(sql)?;
            tx.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?1, ?2, ?3)",
                rusqlite::params![version, name, chrono::Utc::now().timestamp_millis()],
            )?;
        }
        tx.commit()?;
    }
    Ok(())
}
