//! The database watcher: a commit by another process (here another SQLite
//! connection to the same file, as the CLI or `tock daemon` would make) reaches
//! the front ends as `Event::External`, through the real file watch and the
//! pause after it, on a real file and a real runtime clock.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::*;
use futures::future::BoxFuture;
use tock::config::{Config, ConfigSource};
use tock::engine::{Engine, Event, ManualClock, Options};
use tock::llm::{ChatRequest, EventStream, LlmError, Provider, StreamEvent};
use tock::store::Store;

/// An engine on `store` that watches the database file.
fn watching(store: Store, config: ConfigSource, options: Options) -> Engine {
    Engine::new(
        store,
        Arc::new(config),
        Arc::new(ManualClock::new(T0)),
        Options {
            watch_db: true,
            ..options
        },
    )
}

/// A commit by another connection to the database at `path`.
fn commit_elsewhere(path: &std::path::Path, round: usize) {
    let other = rusqlite::Connection::open(path).unwrap();
    other
        .execute(
            "INSERT INTO conversations (title, created_at, updated_at) VALUES (?1, ?2, ?2)",
            rusqlite::params![format!("written elsewhere {round}"), T0],
        )
        .unwrap();
}

/// Whether `Event::External` comes (other events are skipped).
async fn external(events: &mut tokio::sync::broadcast::Receiver<Event>) -> bool {
    // Generous: the watcher pauses 50–250 ms; a loaded CI machine may add more.
    let noticed = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match events.recv().await {
                Ok(Event::External) => return true,
                Ok(_) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return false,
            }
        }
    })
    .await;
    noticed == Ok(true)
}

/// Streams "t0 ", "t1 ", … 10 ms apart until `stop` is set, then ends.
struct Trickle {
    stop: Arc<AtomicBool>,
}

impl Provider for Trickle {
    fn name(&self) -> &'static str {
        "trickle"
    }
    fn start<'a>(&'a self, _req: &'a ChatRequest) -> BoxFuture<'a, Result<EventStream, LlmError>> {
        let stop = Arc::clone(&self.stop);
        Box::pin(async move {
            let texts = futures::stream::unfold(0usize, move |i| {
                let stop = Arc::clone(&stop);
                async move {
                    if i == usize::MAX {
                        return None;
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    if stop.load(Ordering::Relaxed) {
                        return Some((Ok(StreamEvent::Done { stop_reason: None }), usize::MAX));
                    }
                    Some((Ok(StreamEvent::Text(format!("t{i} "))), i + 1))
                }
            });
            Ok(Box::pin(texts) as EventStream)
        })
    }
}

/// A watching engine on a database file of its own whose model trickles a
/// reply until `stop` is set.
struct Trickling {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
    engine: Engine,
    stop: Arc<AtomicBool>,
}

fn trickling(options: Options) -> Trickling {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tock.db");
    let store = Store::open(&path).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let provider = Arc::new(Trickle {
        stop: Arc::clone(&stop),
    });
    let engine = watching(
        store,
        ConfigSource::from_config(Config::default()).with_provider(provider),
        options,
    );
    Trickling {
        _dir: dir,
        path,
        engine,
        stop,
    }
}

/// While a reply streams, another process's commit is still noticed, and
/// the check waits for the reply's next hand-over (a wake-up the engine
/// makes anyway) rather than a timer of its own.
#[tokio::test]
async fn a_commit_by_another_process_is_noticed_while_a_reply_streams() {
    let Trickling {
        _dir,
        path,
        engine,
        stop,
    } = trickling(Options::default());
    let mut events = engine.subscribe();
    let conv = engine
        .store()
        .create_conversation(Some("c"), "user", T0)
        .unwrap();
    let _scheduler = engine.start();
    engine.send_text(conv, "go").unwrap();
    let streaming = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Ok(Event::Delta { .. }) = events.recv().await {
                return;
            }
        }
    })
    .await;
    assert!(streaming.is_ok(), "the reply did not start");

    for round in 0..3 {
        commit_elsewhere(&path, round);
        assert!(
            external(&mut events).await,
            "round {round}: the commit was not noticed"
        );
    }
    let (along, on_timer) = engine.watch_checks();
    assert!(
        along >= 1,
        "no check went along with a hand-over ({on_timer} on a timer)"
    );
    assert!(engine.is_busy(conv), "the reply streamed all along");
    stop.store(true, Ordering::Relaxed);
    engine.shutdown(Duration::from_secs(1)).await;
}

/// The reply's own saves are reported too (each writes the WAL); their
/// checks go with the reply's next hand-over however far apart hand-overs
/// are (400 ms here; the TUI's are 600 ms), not on a timer of their own
/// that would wake the engine once more per save.
#[tokio::test]
async fn a_reply_s_own_saves_are_checked_along_with_its_hand_overs() {
    let Trickling {
        _dir, engine, stop, ..
    } = trickling(Options {
        // Slower than the default, as the TUI asks; saved as often, so a
        // save comes every hand-over and this test takes about a second and
        // a half.
        shown_text_every: Duration::from_millis(400),
        persist_every: Duration::from_millis(400),
        ..Options::default()
    });
    let conv = engine
        .store()
        .create_conversation(Some("c"), "user", T0)
        .unwrap();
    engine.show(Some(conv));
    let _scheduler = engine.start();
    engine.send_text(conv, "go").unwrap();
    let checked = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            tokio::time::sleep(Duration::from_millis(50)).await;
            let (along, on_timer) = engine.watch_checks();
            if along + on_timer >= 3 {
                return (along, on_timer);
            }
        }
    })
    .await;
    let Ok((along, on_timer)) = checked else {
        panic!("the saves were not checked: {:?}", engine.watch_checks());
    };
    assert!(
        along >= 2 && along > on_timer,
        "{along} checks along with a hand-over, {on_timer} on a timer"
    );
    assert!(engine.is_busy(conv), "the reply streamed all along");
    stop.store(true, Ordering::Relaxed);
    engine.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_commit_by_another_process_is_noticed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tock.db");
    let store = Store::open(&path).unwrap();
    let engine = watching(
        store,
        ConfigSource::from_config(Config::default()),
        Options::default(),
    );
    let mut events = engine.subscribe();
    let _scheduler = engine.start();

    for round in 0..3 {
        commit_elsewhere(&path, round);
        assert!(
            external(&mut events).await,
            "round {round}: the commit was not noticed"
        );
    }
    // No reply was read: each check came on the watcher's own timer.
    let (along, on_timer) = engine.watch_checks();
    assert_eq!(along, 0);
    assert!(on_timer >= 3, "{on_timer} checks for 3 commits");
    engine.shutdown(Duration::from_secs(1)).await;
}
