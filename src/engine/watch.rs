//! Notice other processes' writes to the database without polling: a file
//! watch on the database's directory, confirmed by SQLite's `data_version`.
//!
//! Every write to the database or its WAL is reported, this process's own
//! included (the partial reply's save once a second while a reply streams),
//! so what a report costs matters more than how fast it is handled:
//! - on Linux the watch is an inotify descriptor in the runtime's own
//!   reactor, so a report of this process's own write, which comes while its
//!   thread is awake, wakes nothing (the notify crate read it on a thread of
//!   its own, woken for every write);
//! - the check after a report waits for a wake-up the engine makes anyway
//!   while a reply streams (its text handed on, up to ten times a second)
//!   rather than for a timer of its own, with a timer only in case none
//!   comes. That is what the save's own report waits for: a save is made
//!   as text is handed on, and the check goes with the next hand-over.

use std::time::Duration;

use super::{Engine, Event};
use crate::llm::quiet::QuietTimer;

pub(crate) fn spawn(engine: Engine) {
    let path = engine.store().path().to_path_buf();
    let Some(dir) = path.parent().map(|d| {
        if d.as_os_str().is_empty() {
            std::path::Path::new(".")
        } else {
            d
        }
    }) else {
        return;
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name.is_empty() || name == ":memory:" {
        return;
    }
    // Only the database and its WAL carry other processes' commits. Anything
    // else in the directory (a log file the daemon writes on every line, an
    // editor's swap file) must not wake us: each wake-up can log a line.
    let wal = format!("{name}-wal");
    let ours = move |file: &std::ffi::OsStr| {
        let file = file.to_string_lossy();
        file == name.as_str() || file == wal.as_str()
    };
    match Reports::watch(dir, ours) {
        Ok(reports) => {
            tokio::spawn(run(engine, reports));
        }
        Err(e) => {
            tracing::warn!(
                "cannot watch {} ({e}); changes by other processes show on the 1 s fallback check",
                dir.display()
            );
            tokio::spawn(poll_fallback(engine));
        }
    }
}

/// Watch the config file, so that a change (or a fix of a file that could
/// not be read, which holds every send) takes effect at once rather than
/// at the next 30 s clock check, which stays the fallback.
pub(crate) fn spawn_config(engine: Engine) {
    let Some(path) = engine.config().path().map(std::path::Path::to_path_buf) else {
        return;
    };
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return;
    };
    let dir = if dir.as_os_str().is_empty() {
        std::path::Path::new(".")
    } else {
        dir
    };
    let name = name.to_os_string();
    match Reports::watch(dir, move |file| file == name.as_os_str()) {
        Ok(mut reports) => {
            tokio::spawn(async move {
                while reports.next().await {
                    // An editor's save is several writes: one look after them.
                    tokio::time::sleep(COALESCE).await;
                    reports.drain();
                    engine.wake();
                }
            });
        }
        Err(e) => tracing::debug!(
            "not watching {} ({e}); a change shows at the next clock check",
            dir.display()
        ),
    }
}

async fn run(engine: Engine, mut reports: Reports) {
    let timer = QuietTimer::new();
    // The version to compare with is read here, on the engine's worker,
    // not by the caller of `spawn` (the TUI's thread): reading it waits
    // for the engine's connection, which a write held up by another
    // process's lock keeps meanwhile. A commit made after the watch
    // started may already be in it, so the first change noticed is
    // reported whatever the version says.
    let mut last = Baseline::new(&engine);
    while reports.next().await {
        pause(&engine, timer.as_ref()).await;
        // What came during the pause is covered by this check.
        reports.drain();
        last.check(&engine);
    }
}

/// At least this long between a report and its check. It coalesces bursts
/// into one check, and lets a commit that was reported (its WAL write)
/// become visible: SQLite updates the WAL index (`-shm`, not watched) just
/// after.
const COALESCE: Duration = Duration::from_millis(50);
/// While a reply is read, the check waits for the reading's next hand-over:
/// up to the slowest pace text is handed on at (`Engine::slowest_hand_over`:
/// 100 ms by default while its conversation is shown, 600 ms in the TUI,
/// once a second while none shows it), at most [`ALONG_WITH_A_READ_MOST`],
/// and this much longer, for a hand-over a little late. A fixed 250 ms came
/// before the TUI's hand-overs (then 400 ms apart): after each save, a
/// wake-up of its own (about one a second while a reply streams).
const ALONG_WITH_A_READ_SLACK: Duration = Duration::from_millis(150);
/// The longest a check waits for a hand-over: with the slack, how late
/// another process's commit may be noticed while a reply is read (an item
/// `tock send` queued, for `tock daemon` while it streams a reply). A reply
/// no front end shows hands its text on once a second; its saves' checks
/// come on the timer instead, as they did before.
const ALONG_WITH_A_READ_MOST: Duration = Duration::from_millis(500);

/// Waits until the check is due: `COALESCE` after the report, at the next
/// hand-over of a reply being read (a wake-up the engine makes anyway), or
/// when the timer fires, whichever comes first. The timer is a kernel one
/// where there is one, which wakes the engine's thread once, where tokio's
/// timer wheel woke it twice for most such pauses (one that crosses a 64 ms
/// block of the wheel is moved to a finer level on the way).
async fn pause(engine: &Engine, timer: Option<&QuietTimer>) {
    let reported = tokio::time::Instant::now();
    let reading = engine.is_reading();
    let wait = if reading {
        engine.slowest_hand_over().min(ALONG_WITH_A_READ_MOST) + ALONG_WITH_A_READ_SLACK
    } else {
        COALESCE
    };
    let armed = timer.filter(|t| t.arm(wait));
    let fired = async {
        match armed {
            Some(t) => t.fired().await,
            None => tokio::time::sleep(wait).await,
        }
    };
    tokio::pin!(fired);
    loop {
        tokio::select! {
            biased;
            () = &mut fired => {
                engine.count_watch_check(false);
                return;
            }
            () = engine.hand_over(), if reading => {
                if reported.elapsed() >= COALESCE {
                    if let Some(t) = armed {
                        t.disarm();
                    }
                    engine.count_watch_check(true);
                    return;
                }
            }
        }
    }
}

/// The database's version as last seen, and whether no change has been
/// noticed since it was first read.
struct Baseline {
    version: i64,
    first: bool,
}

impl Baseline {
    fn new(engine: &Engine) -> Self {
        Self {
            version: engine.store().data_version().unwrap_or(0),
            first: true,
        }
    }

    /// Tell the front ends when another process committed: the version
    /// moved, or this is the first change noticed (see `run`).
    fn check(&mut self, engine: &Engine) {
        if let Ok(v) = engine.store().data_version()
            && (v != self.version || self.first)
        {
            self.version = v;
            self.first = false;
            engine.take_stop_requests();
            engine.take_notices();
            engine.emit(Event::External);
            engine.wake();
        }
    }
}

async fn poll_fallback(engine: Engine) {
    let mut last = Baseline::new(&engine);
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        last.check(&engine);
    }
}

/// Reports of writes to the database's files.
#[cfg(target_os = "linux")]
struct Reports {
    fd: tokio::io::unix::AsyncFd<inotify::Inotify>,
    ours: Box<dyn Fn(&std::ffi::OsStr) -> bool + Send>,
    buffer: Vec<u8>,
}

#[cfg(target_os = "linux")]
impl Reports {
    fn watch(
        dir: &std::path::Path,
        ours: impl Fn(&std::ffi::OsStr) -> bool + Send + 'static,
    ) -> std::io::Result<Self> {
        use inotify::{Inotify, WatchMask};
        // Non-blocking and close-on-exec.
        let inotify = Inotify::init()?;
        // What the notify crate reported as a modification: data, metadata,
        // and a file moved in or out (a database put back from a copy).
        inotify.watches().add(
            dir,
            WatchMask::MODIFY | WatchMask::ATTRIB | WatchMask::MOVED_FROM | WatchMask::MOVED_TO,
        )?;
        // SAFETY: the Inotify keeps its descriptor open, and the same, for
        // as long as the AsyncFd that owns it (the watch handle that shared
        // it is gone).
        let fd = unsafe {
            tokio::io::unix::AsyncFd::register_with_interest(inotify, tokio::io::Interest::READABLE)
        }?;
        Ok(Self {
            fd,
            ours: Box::new(ours),
            buffer: vec![0; 4096],
        })
    }

    /// Waits for a write to one of the database's files; false when the
    /// watch has ended.
    async fn next(&mut self) -> bool {
        loop {
            let Self { fd, ours, buffer } = &mut *self;
            let Ok(mut ready) = fd.readable_mut().await else {
                return false;
            };
            match ready.try_io(|fd| Self::read(fd.get_mut(), buffer, &**ours)) {
                Ok(Ok(true)) => return true,
                Ok(Ok(false)) | Err(_) => continue,
                Ok(Err(e)) => {
                    tracing::warn!(
                        "the database watch ended ({e}); other processes' changes show when tock restarts"
                    );
                    return false;
                }
            }
        }
    }

    /// Reads what is queued without waiting.
    fn drain(&mut self) {
        let Self { fd, buffer, ours } = self;
        while Self::read(fd.get_mut(), buffer, &**ours).is_ok() {}
    }

    /// Whether the reports queued name one of the database's files (or were
    /// too many to keep, which may hide one); `WouldBlock` when none are.
    fn read(
        inotify: &mut inotify::Inotify,
        buffer: &mut [u8],
        ours: &dyn Fn(&std::ffi::OsStr) -> bool,
    ) -> std::io::Result<bool> {
        let events = inotify.read_events(buffer)?;
        let mut any = false;
        for ev in events {
            any |= ev.mask.contains(inotify::EventMask::Q_OVERFLOW) || ev.name.is_some_and(ours);
        }
        Ok(any)
    }
}

/// Reports of writes to the database's files.
#[cfg(not(target_os = "linux"))]
struct Reports {
    rx: tokio::sync::mpsc::Receiver<()>,
    _watcher: notify::RecommendedWatcher,
}

#[cfg(not(target_os = "linux"))]
impl Reports {
    fn watch(
        dir: &std::path::Path,
        ours: impl Fn(&std::ffi::OsStr) -> bool + Send + 'static,
    ) -> notify::Result<Self> {
        use notify::{RecursiveMode, Watcher};
        let (tx, rx) = tokio::sync::mpsc::channel::<()>(1);
        let mut watcher =
            notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
                if let Ok(ev) = res
                    && ev.kind.is_modify()
                    && ev.paths.iter().any(|p| p.file_name().is_some_and(&ours))
                {
                    let _ = tx.try_send(());
                }
            })?;
        watcher.watch(dir, RecursiveMode::NonRecursive)?;
        Ok(Self {
            rx,
            _watcher: watcher,
        })
    }

    async fn next(&mut self) -> bool {
        self.rx.recv().await.is_some()
    }

    fn drain(&mut self) {
        while self.rx.try_recv().is_ok() {}
    }
}
