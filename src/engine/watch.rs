//! Notice other processes' writes to the database without polling: a file
//! watch on the database's directory, confirmed by SQLite's `data_version`.

use std::time::Duration;

use notify::{RecursiveMode, Watcher};

use super::{Engine, Event};

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
        let mut last = engine.store().data_version().unwrap_or(0);
        while rx.recv().await.is_some() {
            // Coalesce bursts (a stream writes often) into one check.
            tokio::time::sleep(Duration::from_millis(50)).await;
            while rx.try_recv().is_ok() {}
            check(&engine, &mut last);
        }
    });
}

fn check(engine: &Engine, last: &mut i64) {
    if let Ok(v) = engine.store().data_version()
        && v != *last
    {
        *last = v;
        engine.emit(Event::External);
        engine.wake();
    }
}

async fn poll_fallback(engine: Engine) {
    let mut last = engine.store().data_version().unwrap_or(0);
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        check(&engine, &mut last);
    }
}
