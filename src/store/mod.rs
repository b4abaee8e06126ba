//! SQLite store: one file, WAL, numbered migrations, one module per table.
//!
//! `Store` is a cheap clone around one connection; every method is a short
//! transaction, so holding the mutex never spans an await.

#[macro_use]
mod sql_enum;
mod alternates;
pub mod approvals;
mod conversations;
mod drafts;
mod fork;
mod lease;
mod messages;
mod migrate;
mod notices;
mod outbox;
mod rewrite;
mod search;
mod series;
mod settings;
mod tool_runs;
mod usage;
mod waiting;

pub use alternates::{AlternateKind, AlternateMap, Alternates, group_versions};
pub use approvals::{Approval, ApprovalStatus};
pub use conversations::Conversation;
pub use conversations::derive_title;
pub use drafts::Draft;
pub use fork::{Fork, fork_title};
pub use lease::{LeaseHolder, hostname, process_alive};
pub use messages::{Collapsed, Message, MessageStatus, NewMessage, Role, collapse_attempts};
pub use notices::StoredNotice;
pub use outbox::{
    ItemSummary, Kind, ListCursor, ListFilter, ListFrom, NewItem, OpenCounts, OutboxItem,
    PendingAt, Status, StreamingReply, TASK_TURN_PREFIX,
};
pub use search::{SearchHit, SearchQuery, fold_for_matching};
pub use series::{Advanced, NewSeries, Series, SeriesStatus, SeriesStep};
pub use tool_runs::ToolRun;
pub use usage::{MessageUsage, by_message as usage_by_message};
pub use waiting::{PausedBy, UNSEEN_PAUSE_MS, Waiting};

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
        // Read before SQLite opens the file: closing another descriptor of
        // an open database would drop SQLite's POSIX locks on it.
        let check_pages = !header_says_wal(path);
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| describe(e, path))?;
        let mut store = Self::setup(conn, path.to_path_buf(), check_pages)?;
        store.notices = Arc::new(notices);
        Ok(store)
    }

    /// Whether it was opened with [`Store::open_read_only`].
    pub fn is_read_only(&self) -> bool {
        self.conn().is_readonly(rusqlite::MAIN_DB).unwrap_or(false)
    }

    /// What opening changed that the user should hear about (one line each).
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// A private in-memory database (tests and benches).
    pub fn open_in_memory() -> Result<Self> {
        Self::setup(
            Connection::open_in_memory()?,
            PathBuf::from(":memory:"),
            false,
        )
    }

    /// Open an existing database for reading only, for commands that only
    /// look (`list`, `show`, `status`) when a normal open is impossible: a
    /// full disk or a read-only directory, where SQLite cannot create the
    /// WAL's shared-memory file. Nothing is migrated or written.
    pub fn open_read_only(path: &Path) -> Result<Self> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let open = |query: &str| -> rusqlite::Result<Connection> {
            let c = Connection::open_with_flags(format!("file:{}?{query}", uri_path(path)), flags)?;
            c.busy_timeout(BUSY_TIMEOUT)?;
            c.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))?;
            Ok(c)
        };
        // `immutable` reads the file as it is, without the WAL index; only
        // used when even that cannot be set up (no process can be writing
        // then: none could create its files either).
        let conn = open("mode=ro")
            .or_else(|_| open("immutable=1"))
            .map_err(|e| describe(e, path))?;
        let version: i64 = conn
            .query_row(
                "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
                [],
                |r| r.get(0),
            )
            .map_err(|e| describe(e, path))?;
        if version != SCHEMA_VERSION {
            anyhow::bail!(
                "{} has schema {version} and this build knows {SCHEMA_VERSION}; it cannot be read without writing to it",
                path.display()
            );
        }
        Ok(Self {
            conn: Arc::new(Mutex::new(conn)),
            path: path.to_path_buf(),
            notices: Arc::new(vec![format!(
                "{} opened read-only: nothing can be changed until it is writable",
                path.display()
            )]),
        })
    }

    fn setup(mut conn: Connection, path: PathBuf, check_pages: bool) -> Result<Self> {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // A corrupt or foreign file fails here, before anything is written to it.
        conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))
            .map_err(|e| describe(e, &path))?;
        // Switching to WAL rewrites the header: a file not in WAL yet is
        // checked first, so a database corrupt inside its pages is refused
        // untouched (once in WAL, the switch writes nothing).
        if check_pages {
            let check: String = conn
                .query_row("PRAGMA quick_check(1)", [], |r| r.get(0))
                .map_err(|e| describe(e, &path))?;
            if check != "ok" {
                anyhow::bail!(
                    "{} is corrupt inside ({}); it was left untouched (move it away or use --db)",
                    path.display(),
                    crate::sanitize::sanitize_line(&check)
                );
            }
        }
        if path.as_os_str() != ":memory:" {
            // Switching a new database to WAL takes an exclusive lock, and
            // SQLite answers SQLITE_BUSY at once (its busy handler is not
            // used) while another process is creating the same database: try
            // again for as long as the busy timeout.
            let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
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

    /// A second connection to the same database, for a reader that must
    /// not queue behind this connection's writes. Opened by SQLite alone:
    /// [`Store::open`]'s checks open the file themselves, and closing any
    /// descriptor of a database this process has open drops SQLite's POSIX
    /// locks on it. The schema is already current (this one migrated it).
    pub fn another_connection(&self, busy_timeout: Duration) -> Result<Self> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| describe(e, &self.path))?;
        conn.busy_timeout(busy_timeout)?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        Ok(Self {
            conn: Arc::new(Mutex::new(conn)),
            path: self.path.clone(),
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
        // Cached: the database watcher asks after every commit it is told of,
        // a save of a streaming reply's own included.
        Ok(self
            .conn()
            .prepare_cached("PRAGMA data_version")?
            .query_row([], |r| r.get(0))?)
    }
}

/// Bytes 18 and 19 of the header are 2 in a WAL database.
fn header_says_wal(path: &Path) -> bool {
    use std::io::Read;
    let mut hdr = [0u8; 20];
    match std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut hdr)) {
        Ok(()) => hdr[18] == 2 && hdr[19] == 2,
        // Empty or new: nothing to protect.
        Err(_) => true,
    }
}

/// `path` for an SQLite URI (`file:` + percent-escapes where needed).
fn uri_path(path: &Path) -> String {
    let mut out = String::new();
    for b in path.as_os_str().as_encoded_bytes() {
        match b {
            b'%' | b'?' | b'#' => out.push_str(&format!("%{b:02X}")),
            b if b.is_ascii() && !b.is_ascii_control() => out.push(*b as char),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Whether the directory holding `path` refuses writes (it may be the
/// directory, not the file, that makes a database read-only: SQLite needs to
/// create its `-wal` and `-shm` there).
fn dir_read_only(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a valid NUL-terminated path.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) != 0 }
}

/// One readable line for an SQLite failure on `path`: the file, the cause,
/// what to do.
fn sqlite_line(e: &rusqlite::Error, path: &Path) -> String {
    use rusqlite::ErrorCode as C;
    let p = path.display();
    let extended = match e {
        rusqlite::Error::SqliteFailure(f, _) => f.extended_code,
        _ => 0,
    };
    match e.sqlite_error_code() {
        Some(C::NotADatabase) | Some(C::DatabaseCorrupt) => format!(
            "{p} is not a tock database or is corrupt; it was left untouched (move it away or use --db)"
        ),
        Some(C::ReadOnly) if dir_read_only(path) => format!(
            "the directory holding {p} is read-only; tock needs to write its -wal and -shm files there"
        ),
        Some(C::ReadOnly) => format!("{p} is read-only; tock needs to write to it"),
        Some(C::CannotOpen) if dir_read_only(path) => format!(
            "cannot open {p}: its directory is read-only (tock needs to create its -wal and -shm files)"
        ),
        Some(C::CannotOpen) => format!("cannot open {p}: {e}"),
        Some(C::DatabaseBusy) | Some(C::DatabaseLocked) => {
            format!("{p} is locked by another process; try again")
        }
        Some(C::DiskFull) => format!("the disk holding {p} is full; free some space and try again"),
        // SQLITE_IOERR_SHMOPEN / SHMSIZE / SHMMAP: the WAL index cannot be made.
        Some(C::SystemIoFailure) if matches!(extended >> 8, 18..=21) => {
            format!("cannot create {p}-shm (is the disk full or the directory read-only?): {e}")
        }
        Some(C::SystemIoFailure) => format!("disk I/O error on {p} (is the disk full?): {e}"),
        _ => format!("database {p}: {e}"),
    }
}

/// How long a write waits for another process's write lock before it fails.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether a failure is another connection holding the lock (worth retrying).
pub fn is_busy(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<rusqlite::Error>().is_some_and(|e| {
            matches!(
                e.sqlite_error_code(),
                Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
            )
        })
    })
}

/// Turn SQLite failures into one readable line that says what to do.
fn describe(e: rusqlite::Error, path: &Path) -> anyhow::Error {
    anyhow::anyhow!(sqlite_line(&e, path))
}

/// An error from any store operation as one line naming the database file
/// and the cause (front ends print it as it is). Errors that are not
/// SQLite's pass through unchanged.
pub fn explain(e: anyhow::Error, path: &Path) -> anyhow::Error {
    match e.chain().find_map(|c| c.downcast_ref::<rusqlite::Error>()) {
        Some(sql) => anyhow::anyhow!(sqlite_line(sql, path)),
        None => e,
    }
}

/// Map a write error to one line; used by front ends for status messages.
pub fn error_line(e: &anyhow::Error) -> String {
    let s = format!("{e:#}");
    crate::sanitize::sanitize_line(&s).into_owned()
}
