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

/// `tock ARGS` as the unprivileged user `nobody` (None where that is impossible).
fn as_nobody(t: &Tock, args: &[&str]) -> Option<support::Out> {
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } != 0 || !Path::new("/usr/bin/setpriv").exists() {
        eprintln!("skipped: running as another user needs root and setpriv");
        return None;
    }
    let mut c = Command::new("/usr/bin/setpriv");
    c.args([
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        support::tock_bin(),
    ])
    .args(args)
    .env_clear()
    .stdin(std::process::Stdio::null());
    for (k, v) in &t.env {
        c.env(k, v);
    }
    let o = c.output().ok()?;
    Some(support::Out {
        status: o.status,
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    })
}

#[test]
fn a_read_only_file_or_directory_of_another_user_is_read_and_named_right() {
    use std::os::unix::fs::PermissionsExt;
    let mut t = Tock::new();
    // Logs of the other user's runs go where it may write.
    let logs = t.path("nobody-logs");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::set_permissions(&logs, std::fs::Permissions::from_mode(0o777)).unwrap();
    t.set_env("TOCK_LOG_DIR", logs.to_str().unwrap());
    t.set_env("HOME", logs.to_str().unwrap());
    let id = t.send(&["--new", "mine", "--in", "1h", "a private note"]);
    let data = t.db.parent().unwrap().to_path_buf();
    let set = |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m));
    set(t.dir.path(), 0o755).unwrap();
    // The file is another user's and read-only to us; the directory is open.
    set(&data, 0o777).unwrap();
    set(&t.db, 0o444).unwrap();
    let Some(o) = as_nobody(&t, &["list", "--json"]) else {
        return;
    };
    assert!(o.status.success(), "list on a read-only file: {}", o.stderr);
    assert!(o.stdout.contains(&format!("\"id\": {id}")), "{}", o.stdout);
    let o = as_nobody(&t, &["send", "--conv", "mine", "x"]).unwrap();
    assert!(!o.status.success());
    assert!(
        o.stderr.contains("tock.db is read-only"),
        "the file, not the directory: {}",
        o.stderr
    );
    // Now the directory is read-only and the file writable.
    set(&t.db, 0o666).unwrap();
    set(&data, 0o555).unwrap();
    let o = as_nobody(&t, &["list", "--json"]).unwrap();
    assert!(
        o.status.success(),
        "list in a read-only directory: {}",
        o.stderr
    );
    let o = as_nobody(&t, &["send", "--conv", "mine", "x"]).unwrap();
    assert!(!o.status.success());
    assert!(
        o.stderr.contains("directory") && o.stderr.contains("read-only"),
        "the directory, not the file: {}",
        o.stderr
    );
    set(&data, 0o700).unwrap();
}
