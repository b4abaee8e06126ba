//! Storage faults from the command line: one clear line naming the file and
//! the cause; reading keeps working on a full disk or a read-only file
//! system; a database corrupt inside its pages is refused untouched.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::Tock;
use tock::store::{Kind, NewItem, Store};

#[test]
fn a_database_corrupt_inside_its_pages_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tock.db");
    {
        let store = Store::open(&path).unwrap();
        let conv = store.create_conversation(Some("c"), "user", 1).unwrap();
        for i in 0..400 {
            store
                .enqueue(
                    &NewItem::new(conv, Kind::Queued, format!("item {i} {}", "x".repeat(200))),
                    1,
                )
                .unwrap();
        }
    }
    // As another program might leave it: rollback journal, pages garbled.
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        let mode: String = c
            .query_row("PRAGMA journal_mode=DELETE", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "delete");
    }
    let mut bytes = std::fs::read(&path).unwrap();
    assert!(bytes.len() > 8 * 4096);
    for b in &mut bytes[3 * 4096..6 * 4096] {
        *b = 0xA5;
    }
    std::fs::write(&path, &bytes).unwrap();
    let before = std::fs::read(&path).unwrap();
    let e = Store::open(&path)
        .err()
        .expect("a corrupt database must be refused");
    let line = format!("{e:#}");
    assert!(line.contains("corrupt"), "{line}");
    assert!(line.contains("tock.db"), "{line}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "nothing was written to it (not even the header)"
    );
}

/// A small tmpfs for the test's database; unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// None (with a notice) where this machine does not allow mounting.
    fn mount(at: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(at).ok()?;
        // SAFETY: getuid has no preconditions.
        if unsafe { libc::getuid() } != 0 {
            eprintln!("skipped: mounting a tmpfs needs root");
            return None;
        }
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("skipped: this machine does not allow mounting a tmpfs");
            return None;
        }
        Some(Tmpfs(at.to_path_buf()))
    }

    fn remount_read_only(&self) -> bool {
        Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(&self.0)
            .status()
            .is_ok_and(|s| s.success())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_and_a_read_only_file_system_keep_reading_and_say_why_writes_fail() {
    let t = Tock::new();
    let Some(fs) = Tmpfs::mount(t.db.parent().unwrap(), "2m") else {
        return;
    };
    let id = t.send(&["--new", "disk", "--in", "1h", "before the disk filled"]);
    // Fill the disk.
    let filler = t.db.parent().unwrap().join("filler");
    let _ = std::fs::write(&filler, vec![0u8; 4 << 20]);
    let items = t.items();
    assert_eq!(items.len(), 1, "list works on a full disk");
    assert_eq!(items[0]["id"], id);
    let shown = t.show("disk");
    assert_eq!(shown["title"], "disk");
    let line = t.fails(&["send", "--conv", "disk", "--in", "1h", &"y".repeat(100_000)]);
    assert!(line.contains("tock.db"), "names the file: {line}");
    assert!(line.contains("full"), "says why: {line}");
    assert!(!line.contains("Error code"), "not raw SQLite text: {line}");

    // A read-only file system (also what a read-only directory does to SQLite).
    let _ = std::fs::remove_file(&filler);
    if !fs.remount_read_only() {
        eprintln!("skipped the read-only part: cannot remount");
        return;
    }
    let items = t.items();
    assert_eq!(items.len(), 1, "list works read-only");
    t.ok(&["status"]);
    let line = t.fails(&["send", "--conv", "disk", "nope"]);
    assert!(line.contains("tock.db"), "names the file: {line}");
    assert!(line.contains("read-only"), "says why: {line}");
}
