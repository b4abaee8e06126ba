//! A large database for benches, built once by `tock-seed` and cached.
//!
//! Seeding a million outbox rows takes a while, so each shape is built once
//! into `<target>/bench-db/` (or `$TOCK_BENCH_DB_DIR`) and reused by later
//! runs. Everything in it is placed relative to [`NOW`], so a cached file is
//! the same database whenever it is used; benches read the time from a
//! `ManualClock` set to `NOW`. Opening it with `Store::open` brings its schema
//! up to date (a new migration's indexes are built on the first open).
#![allow(dead_code)] // each bench uses part of it

use std::path::PathBuf;
use std::process::Command;

/// The instant the databases are seeded around (2026-11-29T08:53Z).
pub const NOW: i64 = 1_796_000_000_000;

/// Bumped when `tock-seed`'s output changes, so older cached files are not used.
const SEED_VERSION: u32 = 1;

/// The shape of a seeded database (see `tock-seed --help`).
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub conversations: i64,
    pub messages: i64,
    /// Finished outbox rows in all.
    pub history: i64,
    /// Pending rows 1 h to 30 days ahead.
    pub scheduled: i64,
    /// Pending rows already due (one per conversation in turn).
    pub due_now: i64,
}

impl Shape {
    fn file_name(&self) -> String {
        format!(
            "v{SEED_VERSION}-{}c-{}m-{}h-{}s-{}d.db",
            self.conversations, self.messages, self.history, self.scheduled, self.due_now
        )
    }
}

fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("TOCK_BENCH_DB_DIR") {
        return PathBuf::from(d);
    }
    // The bench runs as <target>/<profile>/deps/<name>-<hash>.
    let exe = std::env::current_exe().expect("current_exe");
    exe.ancestors()
        .nth(3)
        .map(|t| t.join("bench-db"))
        .unwrap_or_else(|| std::env::temp_dir().join("tock-bench-db"))
}

/// The path of a database of `shape`, seeding it first if it is not cached.
pub fn database(shape: Shape) -> PathBuf {
    let dir = cache_dir();
    std::fs::create_dir_all(&dir).expect("bench-db directory");
    let path = dir.join(shape.file_name());
    if path.exists() {
        // A run stopped half-way may have left its dispatcher lease behind.
        let conn = rusqlite::Connection::open(&path).expect("open the cached database");
        conn.execute("DELETE FROM lease", [])
            .expect("clear the lease");
        return path;
    }
    let tmp = dir.join(format!("{}.{}.tmp", shape.file_name(), std::process::id()));
    eprintln!("seeding {} (cached for later runs)…", path.display());
    let status = Command::new(env!("CARGO_BIN_EXE_tock-seed"))
        .arg("--db")
        .arg(&tmp)
        .args(["--conversations", &shape.conversations.to_string()])
        .args(["--messages", &shape.messages.to_string()])
        .args(["--outbox-history", &shape.history.to_string()])
        .args(["--scheduled", &shape.scheduled.to_string()])
        .args(["--due-now", &shape.due_now.to_string()])
        .args(["--now-ms", &NOW.to_string()])
        .status()
        .expect("run tock-seed");
    assert!(status.success(), "tock-seed failed");
    std::fs::rename(&tmp, &path).expect("rename the seeded database");
    path
}
