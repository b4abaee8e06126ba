//! SQLite store: one file, WAL, numbered migrations, one module per table.
//!
//! `Store` is a cheap clone around one connection; every method is a short
//! transaction, so holding the mutex never spans an await.

pub mod approvals;
mod conversations;
mod lease;
mod messages;
mod migrate;
mod outbox;
mod settings;
mod waiting;

pub use approvals::{Approval, ApprovalStatus};
pub use conversations::Conversation;
pub use lease::{LeaseHolder, hostname, process_alive};
pub use messages::{Collapsed, Message, MessageStatus, Role, collapse_attempts};
pub use outbox::{ItemSummary, Kind, NewItem, OutboxItem, Status};
pub use waiting::Waiting;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use anyhow::{Context, Result};
use rusqlite::{Connection, OpenFlags};

/// The newest schema version this build understands.
pub const SCHEMA_VERSION: i64 = migrate::MIGRATIONS.len() as i64;

#[derive(Clone)]
pub struct Store {
    conn: Arc<Mutex<Connection>>,
    path: PathBuf,
    /// One-line notices from opening (files made private); front ends show them.
    notices: Arc<Vec<String>>,
}

impl Store {
    /// Open (creating if needed) the database at `path` and bring its schema up to date.
    /// A new directory is created 0700 and a new database file 0600 (SQLite
    /// gives its `-wal` and `-shm` the same mode); existing files of the
    /// database that others could read are tightened, with a notice.
    pub fn open(path: &Path) -> Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            crate::files::create_private_dir(dir)
                .with_context(|| format!("cannot create the directory {}", dir.display()))?;
        }
        let mut notices = Vec::new();
        if !path.exists() {
            // Fails harmlessly if the directory is read-only: SQLite says so next.
            let _ = crate::files::ensure_private_file(path);
        }
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let p = PathBuf::from(format!("{}{suffix}", path.display()));
            match crate::files::tighten(&p) {
                Ok(Some(n)) => {
                    tracing::info!("{n}");
                    notices.push(n);
                }
                Ok(None) => {}
                // Not ours to change (another owner): SQLite decides next.
                Err(e) => tracing::debug!("cannot tighten {}: {e}", p.display()),
            }
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| describe(e, path))?;
        let mut store = Self::setup(conn, path.to_path_buf())?;
        store.notices = Arc::new(notices);
        Ok(store)
    }

    /// What opening changed that the user should hear about (one line each).
    pub fn notices(&self) -> &[String] {
        &self.notices
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
            notices: Arc::default(),
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
