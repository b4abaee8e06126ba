//! Another process holding the database: the keyboard stays free and nothing typed is lost.

use super::*;

#[tokio::test(start_paused = true)]
async fn a_draft_never_waits_on_another_process_holding_the_write_lock() {
    let mut ui = Ui::new(vec![]);
    let conv = ui.conv();
    // Another process takes the write lock and keeps it.
    let other = rusqlite::Connection::open(ui.h.dir.path().join("tock.db")).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    ui.typ("typed while the database is locked");
    tokio::time::advance(std::time::Duration::from_millis(400)).await;
    // The save is due: it goes to the writer thread, which waits for the
    // lock; the keyboard does not.
    ui.app.on_tick();
    assert!(ui.app.writes_pending(), "the save waits on its own thread");
    assert!(
        !ui.app.status_pair().1,
        "no error for a busy database: {}",
        ui.status_line()
    );
    assert_eq!(ui.app.composer_text(), "typed while the database is locked");
    ui.app
        .on_key(KeyEvent::new(KeyCode::Char('!'), KeyModifiers::NONE));
    assert_eq!(
        ui.app.composer_text(),
        "typed while the database is locked!"
    );
    // The lock goes away: the waiting save goes through, then the next one.
    other.execute_batch("ROLLBACK").unwrap();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    assert_eq!(
        ui.store().draft(conv).unwrap().text,
        "typed while the database is locked"
    );
    tokio::time::advance(std::time::Duration::from_millis(400)).await;
    ui.app.on_tick();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    assert_eq!(
        ui.store().draft(conv).unwrap().text,
        "typed while the database is locked!"
    );
}

/// A send that waits for another process's lock is written to a file once
/// the wait is noticed; a tock killed meanwhile leaves it, and the next one
/// puts it back into the conversation's draft (a draft: if the write did
/// land, nothing is sent twice). Once the write is done, the file goes.
#[tokio::test(start_paused = true)]
async fn a_send_waiting_for_a_lock_survives_a_kill_as_a_draft() {
    let mut ui = Ui::new(vec![]);
    let conv = ui.conv();
    let db = ui.h.dir.path().join("tock.db");
    let spool = ui.h.dir.path().join("tock.db.unsent");
    // Refused at once rather than after SQLite's 5 s (the test does not wait).
    ui.h.engine
        .store()
        .set_busy_timeout(std::time::Duration::from_millis(20))
        .unwrap();
    let other = rusqlite::Connection::open(&db).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    ui.typ("typed during the lock");
    ui.app
        .on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert!(ui.app.writes_pending());
    assert!(
        !spool.exists(),
        "nothing written before the wait is noticed"
    );
    tokio::time::advance(std::time::Duration::from_millis(400)).await;
    ui.app.on_tick();
    let files: Vec<_> = std::fs::read_dir(&spool)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&files[0]).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // Killed here: the file is a dead process's (this one's is its own).
    let dead = {
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let pid = c.id();
        c.wait().unwrap();
        pid
    };
    std::fs::rename(&files[0], spool.join(format!("{dead}-1.json"))).unwrap();
    // The send is refused (the lock outlasts its busy timeout) before the
    // lock goes, its outcome left unapplied as a killed tock leaves it: a
    // write still waiting on the lock would land after the rollback and
    // clear the draft restored below (it did, once, in a loaded suite),
    // which a killed tock's write cannot.
    drop(
        ui.app
            .model
            .writer
            .wait_idle(std::time::Duration::from_secs(20)),
    );
    other.execute_batch("ROLLBACK").unwrap();
    ui.h.engine
        .store()
        .set_busy_timeout(std::time::Duration::from_secs(5))
        .unwrap();
    let next = tock::tui::app::App::new(ui.h.engine.clone()).unwrap();
    assert!(
        ui.store()
            .draft(conv)
            .unwrap()
            .text
            .contains("typed during the lock"),
        "back as the draft"
    );
    assert!(
        next.status
            .as_ref()
            .is_some_and(|s| s.text.contains("may not have gone out")),
    );
    assert_eq!(std::fs::read_dir(&spool).unwrap().count(), 0, "taken");
}

#[tokio::test(start_paused = true)]
async fn a_send_while_another_process_holds_the_write_lock_leaves_the_keyboard_free_and_goes_once()
{
    let mut ui = Ui::new(vec![]);
    let conv = ui.conv();
    ui.typ("hello");
    tokio::time::advance(std::time::Duration::from_millis(400)).await;
    ui.app.on_tick();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    assert_eq!(ui.store().draft(conv).unwrap().text, "hello");
    let second =
        ui.h.engine
            .create_conversation(Some("other"), "user")
            .unwrap();
    ui.pump();
    let other = rusqlite::Connection::open(ui.h.dir.path().join("tock.db")).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    // Enter returns at once: the send waits for the lock on the writer thread.
    ui.app
        .on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert!(ui.app.writes_pending());
    assert_eq!(ui.app.composer_text(), "", "the composer moves on");
    // After a moment the status line says why nothing seems to happen.
    assert!(!ui.status_line().contains("waiting for the database"));
    tokio::time::advance(std::time::Duration::from_millis(400)).await;
    ui.app.on_tick();
    assert!(
        ui.status_line().contains("waiting for the database"),
        "{}",
        ui.status_line()
    );
    // Typing goes on; a switch away and back does not bring the sent text
    // back as a draft (the database still has it until the send is written).
    ui.typ_at_once("next");
    ui.app.open(second);
    ui.app.open(conv);
    assert_eq!(ui.app.composer_text(), "next");
    // (Read on the front end's connection: the engine's own is the one waiting.)
    assert!(
        ui.h.engine.reader().list_items(true).unwrap().is_empty(),
        "not written yet"
    );
    other.execute_batch("ROLLBACK").unwrap();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    let rows = ui.rows();
    assert_eq!(rows.len(), 1, "sent once: {rows:?} ({})", ui.status_line());
    assert_eq!(rows[0].text, "hello");
    // Kept in a file while it waited, and the file went once it was written.
    let spool = ui.h.dir.path().join("tock.db.unsent");
    assert!(spool.exists(), "it waited long enough to be kept in a file");
    assert_eq!(std::fs::read_dir(&spool).unwrap().count(), 0);
    assert_eq!(ui.store().draft(conv).unwrap().text, "next");
    assert!(!ui.app.status_pair().1, "{}", ui.status_line());
    assert!(
        !ui.status_line().contains("waiting"),
        "the notice goes with the wait"
    );
}

/// A lock held longer than the store waits (its busy timeout): the send is
/// tried again until the lock goes, as the status line says, and goes
/// once. (Given back after one try, it waited in the composer unsent, and
/// two sends typed meanwhile ran together into one draft.)
#[tokio::test(start_paused = true)]
async fn a_send_outlasting_the_busy_timeout_is_tried_until_the_lock_goes() {
    let mut ui = Ui::new(vec![]);
    let conv = ui.conv();
    // The store waits 50 ms here instead of seconds: the lock below
    // outlasts many of its tries.
    ui.h.engine
        .store()
        .set_busy_timeout(std::time::Duration::from_millis(50))
        .unwrap();
    let other = rusqlite::Connection::open(ui.h.dir.path().join("tock.db")).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    // Keys as the app gets them (the harness's would wait for the writes).
    for text in ["first while locked", "second while locked"] {
        ui.typ_at_once(text);
        ui.app
            .on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    }
    // Real time: the writer thread tries again and again meanwhile.
    std::thread::sleep(std::time::Duration::from_millis(400));
    ui.app.collect_writes();
    assert!(ui.app.writes_pending(), "still waiting for the lock");
    assert_eq!(ui.app.composer_text(), "", "nothing given back");
    assert!(!ui.app.status_pair().1, "no error: {}", ui.status_line());
    other.execute_batch("ROLLBACK").unwrap();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    let texts: Vec<String> = ui.rows().into_iter().map(|r| r.text).collect();
    assert_eq!(texts, ["first while locked", "second while locked"]);
    assert_eq!(ui.app.composer_text(), "");
    assert_eq!(ui.store().draft(conv).unwrap().text, "");
}

#[tokio::test(start_paused = true)]
async fn a_send_the_database_refuses_gives_the_text_back() {
    let mut ui = Ui::new(vec![]);
    // The disk says no to every new outbox row (as a full disk would).
    let other = rusqlite::Connection::open(ui.h.dir.path().join("tock.db")).unwrap();
    other
        .execute_batch(
            "CREATE TRIGGER refuse BEFORE INSERT ON outbox BEGIN SELECT RAISE(ABORT, 'no room'); END",
        )
        .unwrap();
    ui.say("keep this");
    let (line, error) = ui.app.status_pair();
    assert!(
        error && line.contains("not sent") && line.contains("back in the composer"),
        "{line}"
    );
    assert_eq!(ui.app.composer_text(), "keep this");
    assert!(ui.rows().is_empty());
    // And it is the draft again, in the database too.
    tokio::time::advance(std::time::Duration::from_millis(400)).await;
    ui.app.on_tick();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    assert_eq!(ui.store().draft(ui.conv()).unwrap().text, "keep this");
    other.execute_batch("DROP TRIGGER refuse").unwrap();
    ui.enter();
    assert_eq!(ui.rows().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn screens_reload_while_a_write_waits_for_another_processs_lock() {
    let mut ui = Ui::new(vec![]);
    let conv = ui.conv();
    ui.say("first");
    let other = rusqlite::Connection::open(ui.h.dir.path().join("tock.db")).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    // The engine's own connection is taken by a write waiting for the lock.
    let engine = ui.h.engine.clone();
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = done.clone();
    let blocked = std::thread::spawn(move || {
        let r = engine.store().set_setting("test.blocked", "1");
        flag.store(true, std::sync::atomic::Ordering::SeqCst);
        r
    });
    std::thread::sleep(std::time::Duration::from_millis(50));
    // Reloads read on the front end's own connection: they do not wait for it.
    ui.app.model.reload_all();
    ui.press(KeyCode::F(2));
    assert_eq!(ui.app.top(), Some(tock::tui::views::ViewKind::Scheduled));
    ui.press(KeyCode::Esc);
    ui.app.open(conv);
    assert!(
        !done.load(std::sync::atomic::Ordering::SeqCst),
        "the screens were read while the engine's write still waited"
    );
    assert_eq!(ui.app.model.items.len(), 1, "the conversation was read");
    other.execute_batch("ROLLBACK").unwrap();
    blocked.join().unwrap().unwrap();
}
