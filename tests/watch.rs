//! The database watcher: a commit by another process (here another SQLite
//! connection to the same file, as the CLI or `tock daemon` would make) reaches
//! the front ends as `Event::External`, through the real file watch and the
//! pause after it, on a real file and a real runtime clock.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use tock::config::{Config, ConfigSource};
use tock::engine::{Engine, Event, ManualClock, Options};
use tock::store::Store;

#[tokio::test]
async fn a_commit_by_another_process_is_noticed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tock.db");
    let store = Store::open(&path).unwrap();
    let config = Arc::new(ConfigSource::from_config(Config::default()));
    let engine = Engine::new(
        store,
        config,
        Arc::new(ManualClock::new(T0)),
        Options {
            watch_db: true,
            ..Options::default()
        },
    );
    let mut events = engine.subscribe();
    let _scheduler = engine.start();

    for round in 0..3 {
        let other = rusqlite::Connection::open(&path).unwrap();
        other
            .execute(
                "INSERT INTO conversations (title, created_at, updated_at) VALUES (?1, ?2, ?2)",
                rusqlite::params![format!("written elsewhere {round}"), T0],
            )
            .unwrap();
        drop(other);
        // Generous: the watcher pauses 50 ms; a loaded CI machine may add more.
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
        assert_eq!(
            noticed,
            Ok(true),
            "round {round}: the commit was not noticed"
        );
    }
    engine.shutdown(Duration::from_secs(1)).await;
}
