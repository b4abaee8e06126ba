//! Numbered migrations embedded at build time, applied in order, each in its
//! own transaction and recorded in `schema_migrations`.

use anyhow::{Result, bail};
use rusqlite::Connection;

pub(crate) const MIGRATIONS: &[(&str, &str)] = &[
    ("0001_init", include_str!("../../migrations/0001_init.sql")),
    (
        "0002_outbox",
        include_str!("../../migrations/0002_outbox.sql"),
    ),
    (
        "0003_approvals",
        include_str!("../../migrations/0003_approvals.sql"),
    ),
    (
        "0004_drafts_and_pause",
        include_str!("../../migrations/0004_drafts_and_pause.sql"),
    ),
];

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
    if current > MIGRATIONS.len() as i64 {
        bail!(
            "this database was written by a newer tock (schema {current}, this build knows {}); upgrade tock",
            MIGRATIONS.len()
        );
    }
    for (i, (name, sql)) in MIGRATIONS.iter().enumerate() {
        let version = i as i64 + 1;
        if version <= current {
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
