//! Notice other processes' writes to the database without polling: a file
//! watch on the database's directory, confirmed by SQLite's `data_version`.

use std::time::Duration;

use notify::{RecursiveMode, Watcher};

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
    let (tx, mut rx) = tokio::sync::mpsc::channel::<()>(1);
    // Only the database and its WAL carry other processes' commits. Anything
    // else in the directory (a log file the daemon writes on every line, an
    // editor's swap file) must not wake us: each wake-up can log a line.
    let wal = format!("{name}-wal");
    let watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        if let Ok(ev) = res {
            let ours = ev.paths.iter().any(|p| {
                p.file_name()
                    .map(|f| f.to_string_lossy())
                    .is_some_and(|f| f == name.as_str() || f == wal.as_str())
            });
            if ours && ev.kind.is_modify() {
                let _ = tx.try_send(());
            }
        }
    });
    let mut watcher = match watcher {
        Ok(w) => w,
        Err(e) => {
            tracing::warn!(
                "cannot watch the database ({e}); changes by other processes show on the 1 s fallback check"
            );
            tokio::spawn(poll_fallback(engine));
            return;
        }
    };
    if let Err(e) = watcher.watch(dir, RecursiveMode::NonRecursive) {
        tracing::warn!(
            "cannot watch {} ({e}); using the 1 s fallback check",
            dir.display()
        );
        tokio::spawn(poll_fallback(engine));
        return;
    }
    tokio::spawn(async move {
        let _watcher = watcher; // dropping it stops the watch
        let timer = QuietTimer::new();
        // The version to compare with is read here, on the engine's worker,
        // not by the caller of `spawn` (the TUI's thread): reading it waits
        // for the engine's connection, which a write held up by another
        // process's lock keeps meanwhile. A commit made after the watch
        // started may already be in it, so the first change noticed is
        // reported whatever the version says.
        let mut last = Baseline::new(&engine);
        while rx.recv().await.is_some() {
            // Coalesce bursts into one check. The pause also lets a commit
            // that inotify reported (its WAL write) become visible: SQLite
            // updates the WAL index (`-shm`, not watched) just after.
            coalesce(timer.as_ref()).await;
            while rx.try_recv().is_ok() {}
            last.check(&engine);
        }
    });
}

const COALESCE: Duration = Duration::from_millis(50);

/// Waits `COALESCE`: on a kernel timer where there is one, which wakes the
/// engine's thread once, where tokio's timer wheel woke it twice for most
/// such pauses (one that crosses a 64 ms block of the wheel is moved to a
/// finer level on the way). Every save of a streaming reply pays this pause.
async fn coalesce(timer: Option<&QuietTimer>) {
    match timer {
        Some(t) if t.arm(COALESCE) => t.fired().await,
        _ => tokio::time::sleep(COALESCE).await,
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
    /// moved, or this is the first change noticed (see `spawn`).
    fn check(&mut self, engine: &Engine) {
        if let Ok(v) = engine.store().data_version()
            && (v != self.version || self.first)
        {
            self.version = v;
            self.first = false;
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
