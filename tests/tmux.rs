//! The real TUI inside tmux, where tmux itself is the subject: keys sent with
//! `send-keys`, the screen read with `capture-pane`, notification escapes
//! captured with `pipe-pane`, TERM variants, kill -9 and restart in the same
//! pane. Each test runs its own tmux server on a private socket, killed at
//! the end even on failure. Skipped (with a notice) when tmux is missing.

mod support;

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{Tock, contains_bytes, rfc_ms, tock_bin, wait_until};

const LONG: Duration = Duration::from_secs(20);
const SESSION: &str = "t";

static SERVERS: AtomicUsize = AtomicUsize::new(0);

fn tmux_available() -> bool {
    let ok = Command::new("tmux")
        .arg("-V")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        eprintln!("tmux not installed; skipping");
    }
    ok
}

/// A private tmux server; killed on drop.
struct Tmux {
    socket: String,
    /// The socket file (tmux leaves it behind after kill-server).
    socket_path: Option<PathBuf>,
}

impl Tmux {
    /// A server with one detached 100×30 session running `sh` in `dir`.
    fn start(dir: &std::path::Path) -> Tmux {
        let socket = format!(
            "tock-test-{}-{}",
            std::process::id(),
            SERVERS.fetch_add(1, Ordering::SeqCst)
        );
        let mut t = Tmux {
            socket,
            socket_path: None,
        };
        let o = t.run(&[
            "new-session",
            "-d",
            "-s",
            SESSION,
            "-x",
            "100",
            "-y",
            "30",
            "-c",
            &dir.display().to_string(),
            "env -i PATH=/usr/bin:/bin HOME=/tmp PS1='$ ' sh",
        ]);
        assert!(o.status.success(), "tmux new-session: {o:?}");
        let p = t.run(&["display-message", "-p", "#{socket_path}"]);
        let p = String::from_utf8_lossy(&p.stdout).trim().to_string();
        t.socket_path = (!p.is_empty()).then(|| PathBuf::from(p));
        t
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .env_remove("TMUX")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .output()
            .expect("running tmux")
    }

    fn send_keys(&self, keys: &[&str]) {
        let mut a = vec!["send-keys", "-t", SESSION];
        a.extend_from_slice(keys);
        let o = self.run(&a);
        assert!(o.status.success(), "send-keys {keys:?}: {o:?}");
    }

    /// Type text literally.
    fn type_text(&self, s: &str) {
        self.send_keys(&["-l", s]);
    }

    fn capture(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", SESSION]).stdout)
            .into_owned()
    }

    /// Poll `capture-pane` every 20 ms until `pred` holds.
    fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + LONG;
        loop {
            let s = self.capture();
            if pred(&s) {
                return s;
            }
            if Instant::now() >= deadline {
                panic!("timed out waiting for {what}; pane:\n{s}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn wait_text(&self, needle: &str) -> String {
        self.wait_for(&format!("{needle:?} in the pane"), |s| s.contains(needle))
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
        if let Some(p) = &self.socket_path {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// A launcher script: exactly the test environment (plus TMUX, and TERM as
/// given), writing tock's pid first (exec keeps it).
fn launcher(t: &Tock, term: &str) -> (PathBuf, PathBuf) {
    let pidfile = t.path("tock.pid");
    let script = t.path(&format!("run-tock-{term}.sh"));
    let mut env = String::new();
    for (k, v) in &t.env {
        env.push_str(&format!("{k}='{}' ", v.replace('\'', "'\\''")));
    }
    let body = format!(
        "#!/bin/sh\necho $$ > '{}'\nexec env -i {env}TMUX=\"$TMUX\" TERM={term} '{}'\n",
        pidfile.display(),
        tock_bin()
    );
    std::fs::write(&script, body).unwrap();
    (script, pidfile)
}

/// Start tock in the pane's shell and wait for its first frame.
fn launch(tmux: &Tmux, script: &std::path::Path) {
    tmux.type_text(&format!("sh '{}'", script.display()));
    tmux.send_keys(&["Enter"]);
    tmux.wait_text("Enter sends");
}

fn read_pid(pidfile: &std::path::Path) -> i32 {
    wait_until(LONG, "tock's pid file", || {
        std::fs::read_to_string(pidfile)
            .ok()
            .and_then(|s| s.trim().parse().ok())
    })
}

fn messages(t: &Tock, conv: &str) -> Vec<Value> {
    t.show(conv)["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn only_conv(t: &Tock) -> String {
    wait_until(LONG, "the conversation", || {
        let c = t.json(&["conversations", "--json"]);
        c.as_array()
            .filter(|a| a.len() == 1)
            .map(|a| a[0]["id"].to_string())
    })
}

fn roles(msgs: &[Value]) -> Vec<String> {
    msgs.iter()
        .map(|m| {
            format!(
                "{}:{}",
                m["role"].as_str().unwrap(),
                m["status"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn tmux_chat_queue_while_busy_and_later() {
    if !tmux_available() {
        return;
    }
    let mut t = Tock::new();
    t.set_env("TOCK_ECHO_DELAY_MS", "40");
    let tmux = Tmux::start(t.dir.path());
    let (script, _) = launcher(&t, "screen-256color");
    launch(&tmux, &script);

    let words: Vec<String> = (0..40).map(|i| format!("q{i}")).collect();
    let first = format!("hello tmux {}", words.join(" "));
    tmux.type_text(&first);
    tmux.send_keys(&["Enter"]);
    tmux.wait_text("You said");
    tmux.type_text("while busy");
    tmux.send_keys(&["Enter"]);
    let conv = only_conv(&t);
    let msgs = wait_until(LONG, "both answered", || {
        let m = messages(&t, &conv);
        (m.len() == 4 && m.iter().all(|m| m["status"] == "complete")).then_some(m)
    });
    assert_eq!(msgs[0]["content"], first.as_str());
    assert_eq!(msgs[2]["content"], "while busy");
    assert_eq!(
        roles(&msgs),
        [
            "user:complete",
            "assistant:complete",
            "user:complete",
            "assistant:complete"
        ]
    );
    tmux.wait_text("│ while busy");

    tmux.type_text("/later 2s from tmux later");
    tmux.send_keys(&["Enter"]);
    let pane = tmux.wait_for("the scheduled item in the strip", |s| {
        s.contains("pending (1)") && s.contains("from tmux later")
    });
    assert!(pane.contains('⏰'), "{pane}");
    let msgs = wait_until(LONG, "the scheduled message answered", || {
        let m = messages(&t, &conv);
        (m.len() == 6 && m[5]["status"] == "complete").then_some(m)
    });
    assert_eq!(msgs[4]["content"], "from tmux later");
    tmux.wait_text("│ from tmux later");

    tmux.send_keys(&["C-q"]);
    tmux.wait_for("the shell prompt back", |s| {
        s.lines().any(|l| l.trim() == "$") && !s.contains("Enter sends")
    });
}

#[test]
fn tmux_cli_scheduled_item_shows_in_f2_then_kill9_and_restart_in_the_same_pane() {
    if !tmux_available() {
        return;
    }
    let mut t = Tock::new();
    // Slow words before the kill: the long reply must still be streaming
    // after two more items are typed, however loaded the machine (the whole
    // suite runs at once in CI). Fast words after the restart.
    t.set_env("TOCK_ECHO_DELAY_MS", "250");
    let tmux = Tmux::start(t.dir.path());
    let (script, pidfile) = launcher(&t, "screen-256color");
    launch(&tmux, &script);
    let conv = only_conv(&t);

    // Scheduled from the CLI, seen in the F2 list.
    let id = t.send(&["--conv", &conv, "--in", "3s", "from the cli"]);
    tmux.send_keys(&["F2"]);
    let pane = tmux.wait_for("the CLI item in F2", |s| s.contains("from the cli"));
    assert!(pane.contains("message"), "kind shown in F2:\n{pane}");
    tmux.send_keys(&["Escape"]);
    wait_until(LONG, "the CLI item sent", || {
        (t.item(id)["status"] == "sent").then_some(())
    });
    let due = rfc_ms(&t.item(id)["due_at"]).unwrap();
    let m = wait_until(LONG, "its reply", || {
        let m = messages(&t, &conv);
        (m.len() == 2 && m[1]["status"] == "complete").then_some(m)
    });
    assert!(rfc_ms(&m[0]["created_at"]).unwrap() >= due);

    // A slow reply streaming, an item queued behind it and one scheduled: kill -9.
    let words: Vec<String> = (0..60).map(|i| format!("k{i}")).collect();
    tmux.type_text(&format!("long one {}", words.join(" ")));
    tmux.send_keys(&["Enter"]);
    // Sent, not only typed: "You said" is on screen from the first reply
    // already, and text typed on at once can be read together with this
    // Enter, which makes a line break of it (a paste without its markers).
    wait_until(LONG, "the long one sent", || {
        t.items()
            .iter()
            .any(|i| {
                i["status"] == "sent"
                    && i["text"]
                        .as_str()
                        .is_some_and(|x| x.starts_with("long one"))
            })
            .then_some(())
    });
    tmux.type_text("queued before the kill");
    tmux.send_keys(&["Enter"]);
    // Typed on only once the first is in: on a loaded machine tock may read
    // both lines and the Enter between them at once, which is how a paste
    // without paste markers arrives, and takes them as one message.
    let deadline = Instant::now() + LONG;
    while !t
        .items()
        .iter()
        .any(|i| i["text"] == "queued before the kill")
    {
        assert!(
            Instant::now() < deadline,
            "the queued item never came:\n{:#?}\npane:\n{}",
            t.items(),
            tmux.capture()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    tmux.type_text("/later 3s scheduled before the kill");
    tmux.send_keys(&["Enter"]);
    let deadline = Instant::now() + LONG;
    loop {
        let items = t.items();
        let pending = |text: &str| {
            items
                .iter()
                .any(|i| i["status"] == "pending" && i["text"] == text)
        };
        if pending("queued before the kill") && pending("scheduled before the kill") {
            break;
        }
        if Instant::now() > deadline {
            panic!(
                "two items were never pending together:\n{items:#?}\npane:\n{}",
                tmux.capture()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = read_pid(&pidfile);
    let streaming = messages(&t, &conv)
        .iter()
        .any(|m| m["status"] == "streaming");
    assert!(streaming, "a reply was streaming at the kill");
    // SAFETY: the tock we started (its pid from the launcher).
    unsafe {
        libc::kill(pid, libc::SIGKILL);
    }
    // The shell says "Killed", then its prompt, from wherever tock's last
    // frame left the cursor: with the tty still raw, a newline does not go
    // back to the line's start, so the prompt can land in the middle of a
    // line of tock's screen (after a one-character change, say).
    tmux.wait_for("the shell back in the pane", |s| {
        s.contains("Killed") || s.lines().any(|l| l.trim_end().ends_with('$'))
    });
    let _ = std::fs::remove_file(&pidfile);
    // A killed TUI cannot restore the terminal: the tty is left raw and in
    // the alternate screen, as for a user. Restore it the way a user would
    // (Ctrl+J, since Enter sends a bare CR in raw mode), then restart.
    tmux.type_text("stty sane; printf '\\033[?1049l\\033[H\\033[2J'");
    tmux.send_keys(&["C-j"]);
    tmux.wait_for("the terminal reset", |s| !s.contains("Enter sends"));
    t.set_env("TOCK_ECHO_DELAY_MS", "20");
    let (script, _) = launcher(&t, "screen-256color");
    launch(&tmux, &script);
    let deadline = Instant::now() + LONG;
    let msgs = loop {
        let m = messages(&t, &conv);
        let users = m.iter().filter(|m| m["role"] == "user").count();
        let settled = m.last().is_some_and(|l| l["status"] == "complete");
        let items = t.items();
        let items_done = items.iter().all(|i| i["status"] == "sent");
        if users == 4 && settled && items_done {
            break m;
        }
        if Instant::now() > deadline {
            panic!(
                "not everything delivered after the restart:\n{:?}\n{items:#?}\npane:\n{}\nlog:\n{}",
                roles(&m),
                tmux.capture(),
                String::from_utf8_lossy(&t.log_bytes())
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let user_texts: Vec<&str> = msgs
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(user_texts[0], "from the cli");
    assert!(user_texts[1].starts_with("long one k0"));
    assert_eq!(
        user_texts[2..],
        ["queued before the kill", "scheduled before the kill"]
    );
    // The interrupted reply is kept (marked) and a complete one follows it.
    let r = roles(&msgs);
    assert_eq!(
        r,
        [
            "user:complete",
            "assistant:complete",
            "user:complete",
            "assistant:interrupted",
            "assistant:complete",
            "user:complete",
            "assistant:complete",
            "user:complete",
            "assistant:complete"
        ]
    );
    tmux.wait_text("│ scheduled before the kill");
    tmux.send_keys(&["C-q"]);
}

#[test]
fn tmux_notification_is_wrapped_for_tmux_passthrough() {
    if !tmux_available() {
        return;
    }
    let mut t = Tock::new();
    t.set_env("TOCK_ECHO_DELAY_MS", "0");
    let tmux = Tmux::start(t.dir.path());
    let capture = t.path("pane-output.bin");
    let o = tmux.run(&[
        "pipe-pane",
        "-o",
        "-t",
        SESSION,
        &format!("cat >> '{}'", capture.display()),
    ]);
    assert!(o.status.success(), "pipe-pane: {o:?}");
    let (script, _) = launcher(&t, "screen-256color");
    launch(&tmux, &script);
    tmux.type_text("/later 2s notify me");
    tmux.send_keys(&["Enter"]);
    tmux.wait_text("pending (1)");
    let conv = only_conv(&t);
    wait_until(LONG, "the scheduled message sent", || {
        let m = messages(&t, &conv);
        (m.len() == 2 && m[1]["status"] == "complete").then_some(())
    });
    let bytes = wait_until(LONG, "the OSC 9 in the pane output", || {
        let b = std::fs::read(&capture).unwrap_or_default();
        contains_bytes(&b, b"\x1bPtmux;\x1b\x1b]9;").then_some(b)
    });
    // OSC 777 too, and the passthrough is terminated (ESC \).
    assert!(contains_bytes(
        &bytes,
        b"\x1bPtmux;\x1b\x1b]777;notify;tock;"
    ));
    let at = bytes
        .windows(12)
        .position(|w| w == b"\x1bPtmux;\x1b\x1b]9;")
        .unwrap();
    let rest = &bytes[at..];
    assert!(contains_bytes(&rest[..rest.len().min(400)], b"\x07\x1b\\"));
    // Not sent unwrapped while inside tmux.
    let unwrapped = bytes
        .windows(5)
        .enumerate()
        .filter(|(_, w)| *w == b"\x1b]9;t")
        .any(|(i, _)| i == 0 || bytes[i - 1] != 0x1b);
    assert!(!unwrapped, "an OSC 9 was sent without the tmux wrapper");
    tmux.send_keys(&["C-q"]);
}

#[test]
fn tmux_term_variants_start_and_render() {
    if !tmux_available() {
        return;
    }
    for term in ["screen-256color", "tmux-256color"] {
        let mut t = Tock::new();
        t.set_env("TOCK_ECHO_DELAY_MS", "0");
        let tmux = Tmux::start(t.dir.path());
        let (script, _) = launcher(&t, term);
        launch(&tmux, &script);
        let pane = tmux.capture();
        assert!(pane.contains("Conversations"), "{term}:\n{pane}");
        assert!(pane.contains("offline"), "{term}:\n{pane}");
        assert!(
            pane.contains('╭') && pane.contains('╯'),
            "{term}: box drawing:\n{pane}"
        );
        tmux.type_text(&format!("rendering under {term}"));
        tmux.send_keys(&["Enter"]);
        tmux.wait_text(&format!("│ rendering under {term}"));
        // F1 help opens and closes.
        tmux.send_keys(&["F1"]);
        tmux.wait_text("everything pending are kept");
        tmux.send_keys(&["Escape"]);
        tmux.wait_for("the help closed", |s| {
            !s.contains("everything pending are kept")
        });
        tmux.send_keys(&["C-q"]);
        tmux.wait_for("the shell back", |s| !s.contains("Enter sends"));
    }
}

#[test]
fn tmux_f2_cancel_reschedule_and_send_now() {
    if !tmux_available() {
        return;
    }
    let mut t = Tock::new();
    t.set_env("TOCK_ECHO_DELAY_MS", "0");
    let tmux = Tmux::start(t.dir.path());
    let (script, _pidfile) = launcher(&t, "tmux-256color");
    launch(&tmux, &script);
    let conv = only_conv(&t);
    // Titled, so that the first item scheduled does not name it.
    rusqlite::Connection::open(&t.db)
        .unwrap()
        .execute(
            "UPDATE conversations SET title = 'plans' WHERE id = ?1",
            [conv.parse::<i64>().unwrap()],
        )
        .unwrap();
    // Three items scheduled from the CLI, an hour apart so F2 lists them in this order.
    let a = t.send(&["--conv", &conv, "--in", "1h", "alpha item"]);
    let b = t.send(&["--conv", &conv, "--in", "2h", "bravo item"]);
    let c = t.send(&["--conv", &conv, "--in", "3h", "charlie item"]);
    tmux.send_keys(&["F2"]);
    tmux.wait_for("three items in F2", |s| {
        s.contains("alpha item") && s.contains("bravo item") && s.contains("charlie item")
    });
    // Cancel the first: x then Enter.
    tmux.send_keys(&["x"]);
    tmux.wait_text("Enter cancel");
    tmux.send_keys(&["Enter"]);
    wait_until(LONG, "alpha canceled", || {
        (t.item(a)["status"] == "canceled").then_some(())
    });
    // Reschedule the next one with a typed expression and its live preview.
    tmux.wait_for("alpha gone after the cancel", |s| !s.contains("alpha item"));
    // The canceled item left: the row that took its place, bravo, is selected.
    tmux.wait_text("› 2");
    let before = rfc_ms(&t.item(b)["due_at"]).unwrap();
    tmux.send_keys(&["r"]);
    tmux.type_text("5h");
    tmux.wait_text("sends ");
    tmux.send_keys(&["Enter"]);
    wait_until(LONG, "bravo rescheduled", || {
        let due = rfc_ms(&t.item(b)["due_at"])?;
        (due > before + 2 * 3_600_000).then_some(())
    });
    // Bravo moved after charlie and stays selected; send charlie (above it) now:
    // it goes at once (the conversation is idle).
    tmux.wait_for("charlie listed before bravo", |s| {
        s.find("charlie item").unwrap_or(usize::MAX) < s.find("bravo item").unwrap_or(0)
    });
    tmux.send_keys(&["k"]);
    tmux.send_keys(&["s"]);
    // Scheduled ahead: asked first.
    tmux.wait_for("the question", |s| s.contains("before its time?"));
    tmux.send_keys(&["Enter"]);
    wait_until(LONG, "charlie sent now", || {
        (t.item(c)["status"] == "sent").then_some(())
    });
    let users: Vec<String> = messages(&t, &conv)
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        users,
        vec!["charlie item"],
        "only the item sent now reached the conversation"
    );
    assert_eq!(t.item(b)["status"], "pending");
}
