//! SQLite store: one file, WAL, numbered migrations, one module per table.
//!
//! `Store` is a cheap clone around one connection; every method is a short
//! transaction, so holding the mutex never spans an await.

#[macro_use]
mod sql_enum;
pub mod approvals;
mod conversations;
mod drafts;
mod lease;
mod messages;
mod migrate;
mod outbox;
mod rewrite;
mod series;
mod settings;

pub use approvals::{Approval, ApprovalStatus};
pub use conversations::Conversation;
pub use drafts::Draft;
pub use lease::{LeaseHolder, hostname, process_alive};
pub use messages::{Message, MessageStatus, Role};
pub use outbox::{ItemSummary, Kind, NewItem, OutboxItem, Status};
pub use series::{Advanced, NewSeries, Series, SeriesStatus, SeriesStep};

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use anyhow::{Context, Result};
use rusqlite::{Connection, OpenFlags};

/// The newest schema version this build understands.
pub const SCHEMA_VERSION: i64 = migrate::LATEST;

/// Every migration number this build applies (they may have gaps).
pub fn schema_versions() -> Vec<i64> {
    migrate::MIGRATIONS.iter().map(|m| m.0).collect()
}

#[derive(Clone)]
pub struct Store {
    conn: Arc<Mutex<Connection>>,
    path: PathBuf,
}

impl Store {
    /// Open (creating if needed) the database at `path` and bring its schema up to date.
    pub fn open(path: &Path) -> Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create the directory {}", dir.display()))?;
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| describe(e, path))?;
        Self::setup(conn, path.to_path_buf())
    }

    /// A private in-memory database (tests and benches).
    pub fn open_in_memory() -> Result<Self> {
        Self::setup(Connection::open_in_memory()?, PathBuf::from(":memory:"))
    }

    fn setup(mut conn: Connection, path: PathBuf) -> Result<Self> {
        conn.busy_timeout(Duration::from_secs(5))?;
        // A corrupt or foreign file fails here, before anything is written to it.
        conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))
            .map_err(|e| describe(e, &path))?;
        if path.as_os_str() != ":memory:" {
            // Switching a new database to WAL takes an exclusive lock, and
            // SQLite answers SQLITE_BUSY at once (its busy handler is not
            // used) while another process is creating the same database: try
            // again for as long as the busy timeout.
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            let mode: String = loop {
                match conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0)) {
                    Err(e)
                        if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
                            && std::time::Instant::now() < deadline =>
                    {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    r => break r.map_err(|e| describe(e, &path))?,
                }
            };
            if !mode.eq_ignore_ascii_case("wal") {
                tracing::warn!("journal_mode is {mode}, not wal");
            }
        }
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        migrate::migrate(&mut conn).map_err(|e| match e.downcast::<rusqlite::Error>() {
            Ok(sql) => describe(sql, &path),
            Err(other) => other,
        })?;
        Ok(Self {
            conn: Arc::new(Mutex::new(conn)),
            path,
        })
    }

    /// How long a write waits for another process's lock before failing.
    pub fn set_busy_timeout(&self, d: Duration) -> Result<()> {
        self.conn().busy_timeout(d)?;
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn conn(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite inconsistent
        // (transactions roll back), so a poisoned lock is still usable.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Changes whenever another connection commits; cheap to poll.
    pub fn data_version(&self) -> Result<i64> {
        Ok(self
            .conn()
            .query_row("PRAGMA data_version", [], |r| r.get(0))?)
    }
}

/// Turn SQLite failures into one readable line that says what to do.
fn describe(e: rusqlite::Error, path: &Path) -> anyhow::Error {
    use rusqlite::ErrorCode as C;
    let p = path.display();
    let code = e.sqlite_error_code();
    match code {
        Some(C::NotADatabase) | Some(C::DatabaseCorrupt) => anyhow::anyhow!(
            "{p} is not a tock database or is corrupt; it was left untouched (move it away or use --db)"
        ),
        Some(C::ReadOnly) => anyhow::anyhow!("{p} is read-only; tock needs to write to it"),
        Some(C::CannotOpen) => anyhow::anyhow!("cannot open {p}: {e}"),
        Some(C::DatabaseBusy) | Some(C::DatabaseLocked) => {
            anyhow::anyhow!("{p} is locked by another process; try again")
        }
        Some(C::DiskFull) => anyhow::anyhow!("the disk holding {p} is full"),
        _ => anyhow::Error::new(e).context(format!("database {p}")),
    }
}

/// Map a write error to one line; used by front ends for status messages.
pub fn error_line(e: &anyhow::Error) -> String {
    let s = format!("{e:#}");
    crate::sanitize::sanitize_line(&s).into_owned()
}
