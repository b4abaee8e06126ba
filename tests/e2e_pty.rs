//! The real TUI binary in a pseudo-terminal (portable-pty), its output parsed
//! by a vt100 screen: chat, queue while busy, /later, hostile model output,
//! terminal restore on quit, and kill -9 / restart with a pending item.

mod support;

use std::time::Duration;

use serde_json::Value;
use support::{MockServer, Pty, Reply, Tock, contains_bytes, rfc_ms, wait_until};

const ROWS: u16 = 30;
const COLS: u16 = 100;
/// Generous: debug builds on a loaded 2-core machine.
const LONG: Duration = Duration::from_secs(20);

fn start(t: &Tock) -> Pty {
    let pty = Pty::spawn(&[], &t.env, ROWS, COLS);
    // The first frame: the composer's placeholder.
    pty.wait_text("Enter sends", LONG);
    pty
}

fn messages(t: &Tock, conv: &str) -> Vec<Value> {
    t.show(conv)["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The messages of `conv` once its reply (the second message) is complete.
fn reply_complete(t: &Tock, conv: &str) -> Vec<Value> {
    let until = std::time::Instant::now() + LONG;
    loop {
        let m = messages(t, conv);
        if m.get(1).is_some_and(|r| r["status"] == "complete") || std::time::Instant::now() > until
        {
            return m;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The only conversation's id (the TUI creates one on first start).
fn only_conv(t: &Tock) -> String {
    let c = t.json(&["conversations", "--json"]);
    let c = c.as_array().unwrap();
    assert_eq!(c.len(), 1, "{c:#?}");
    c[0]["id"].to_string()
}

/// `script`, written as an executable file named `name`, becomes the
/// `$VISUAL` that Ctrl+G runs.
fn use_editor(t: &mut Tock, name: &str, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    let path = t.dir.path().join(name);
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    t.set_env("VISUAL", &path.display().to_string());
}

fn summary(msgs: &[Value]) -> Vec<(String, String)> {
    msgs.iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap_or("").to_string(),
                m["status"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn chat_then_queue_while_streaming_then_later() {
    let mut t = Tock::new();
    t.set_env("TOCK_ECHO_DELAY_MS", "30");
    let pty = start(&t);
    // The status bar is the frame's last row: wait for it, not only the composer.
    pty.wait_text("offline", LONG);

    // A long first message so its echo streams for a couple of seconds.
    let words: Vec<String> = (0..40).map(|i| format!("w{i}")).collect();
    let first = format!("alpha {}", words.join(" "));
    pty.type_text(&first);
    pty.wait_text("w39", LONG);
    pty.enter();
    // The echo streams back as a quote.
    pty.wait_text("│ alpha w0 w1", LONG);
    // The reply has started streaming...
    pty.wait_text("You said", LONG);
    // ...and a second message typed now is queued behind it.
    pty.type_text("bravo second message");
    pty.enter();
    pty.wait_text("queued", LONG);
    let conv = wait_until(LONG, "the conversation", || {
        let c = t.json(&["conversations", "--json"]);
        c.as_array()
            .and_then(|a| a.first())
            .map(|c| c["id"].to_string())
    });
    let reply_was_streaming = messages(&t, &conv)
        .iter()
        .any(|m| m["role"] == "assistant" && m["status"] == "streaming");
    let items = t.items();
    let second = items
        .iter()
        .find(|i| i["text"] == "bravo second message")
        .expect("the second message is an outbox item")
        .clone();
    assert_eq!(second["kind"], "queued");
    assert!(
        reply_was_streaming || pty.screen().contains("queued"),
        "the second message should have been queued behind a streaming reply"
    );

    // Both delivered, in order, each with a complete reply.
    let msgs = wait_until(LONG, "both replies complete", || {
        let m = messages(&t, &conv);
        (m.len() == 4 && m.iter().all(|m| m["status"] == "complete")).then_some(m)
    });
    assert_eq!(
        summary(&msgs),
        vec![
            ("user".into(), "complete".into()),
            ("assistant".into(), "complete".into()),
            ("user".into(), "complete".into()),
            ("assistant".into(), "complete".into()),
        ]
    );
    assert_eq!(msgs[0]["content"], first.as_str());
    assert_eq!(msgs[2]["content"], "bravo second message");
    assert!(
        msgs[3]["content"]
            .as_str()
            .unwrap()
            .contains("bravo second message")
    );
    let screen = pty.wait_text("│ bravo second message", LONG);
    // The status bar tells the dispatch state (not "starting" once it dispatched).
    let status_bar = screen.lines().last().unwrap_or("").to_string();
    assert!(
        !status_bar.contains("starting"),
        "status bar still says starting after a reply: {status_bar}"
    );

    // /later 2s: shown in the strip as scheduled, then in the history.
    pty.type_text("/later 2s hello later");
    pty.enter();
    let strip = pty.wait_for(LONG, "the scheduled item in the strip", |s| {
        s.contains("pending (1)") && s.contains("hello later")
    });
    assert!(strip.contains('⏰'), "scheduled badge:\n{strip}");
    let it = t
        .items()
        .into_iter()
        .find(|i| i["text"] == "hello later")
        .expect("the /later item");
    assert_eq!(it["kind"], "message");
    let due = rfc_ms(&it["due_at"]).unwrap();
    let msgs = wait_until(LONG, "the scheduled message and its reply", || {
        let m = messages(&t, &conv);
        (m.len() == 6 && m[5]["status"] == "complete").then_some(m)
    });
    assert_eq!(msgs[4]["content"], "hello later");
    assert!(rfc_ms(&msgs[4]["created_at"]).unwrap() >= due, "sent early");
    let screen = pty.wait_text("│ hello later", LONG);
    assert!(!screen.contains("pending (1)"), "strip emptied:\n{screen}");
    assert_eq!(t.item(it["id"].as_i64().unwrap())["status"], "sent");
}

#[test]
fn hostile_escapes_in_a_reply_never_reach_the_terminal() {
    let server = MockServer::start();
    let t = Tock::with_openai(&server.base_url());
    let hostile = "Title\u{1b}]0;PWNED\u{07} clear\u{1b}[2J clip\u{1b}]52;c;cHduZWQ=\u{07} c1\u{9b}31m red END-OF-HOSTILE";
    server.push(Reply::Stream {
        chunks: vec![
            hostile[..10].to_string(),
            hostile[10..].to_string(),
            "\n\ntail".into(),
        ],
        gap: Duration::from_millis(20),
        tool_calls: Vec::new(),
    });
    // Hostile text from elsewhere, too: a conversation title and an item's
    // text given on the command line (shown in the sidebar, the terminal
    // title and the pending strip).
    t.send(&[
        "--new",
        "Hostile\u{1b}]0;TITLEPWN\u{7}title",
        "--in",
        "1h",
        "item\u{1b}]52;c;SVRFTQ==\u{7}\u{1b}[2J text",
    ]);
    let pty = start(&t);
    let screen = pty.wait_text("TITLEPWN", LONG);
    assert!(
        screen.contains("SVRFTQ=="),
        "the item in the strip:\n{screen}"
    );
    pty.type_text("show me something");
    pty.wait_text("show me something", LONG);
    let before = pty.raw().len();
    pty.enter();
    server.wait_requests(1, LONG);
    let screen = pty.wait_text("END-OF-HOSTILE", LONG);
    pty.wait_text("tail", LONG);
    let raw = pty.raw();
    let after = &raw[before..];
    let ctx = |pat: &[u8]| {
        let at = raw.windows(pat.len()).position(|w| w == pat).unwrap_or(0);
        format!(
            "{:?}",
            String::from_utf8_lossy(&raw[at.saturating_sub(20)..(at + 40).min(raw.len())])
        )
    };
    // The sequences themselves (ESC or the 8-bit C1 introducer, then the
    // payload) never reach the terminal; the visible, inert rendering
    // (`␛]0;PWNED␇`) is fine.
    for pat in [
        &b"\x1b]0;TITLEPWN"[..],
        b"\x1b]52;c;SVRFTQ==",
        b"\x1b]0;PWNED",
        b"\x9d0;PWNED",
        b"\xc2\x9d0;PWNED",
        b"\x1b]52;c;cHduZWQ=",
        b"\x9d52;c;cHduZWQ=",
        b"\xc2\x9d52;c;cHduZWQ=",
    ] {
        assert!(!contains_bytes(&raw, pat), "escape passed: {}", ctx(pat));
    }
    assert!(
        !contains_bytes(after, b"\x1b[2J"),
        "clear-screen from the reply passed: {}",
        ctx(b"\x1b[2J")
    );
    // C1 CSI, as UTF-8 (U+009B) or as a raw byte.
    assert!(!contains_bytes(&raw, "\u{9b}".as_bytes()), "C1 CSI passed");
    assert!(!contains_bytes(&raw, b"\x9b31m"), "raw 8-bit CSI passed");
    // Our own title is the only title set.
    let titles: Vec<String> = String::from_utf8_lossy(&raw)
        .split("\x1b]0;")
        .skip(1)
        .map(|s| s.split('\x07').next().unwrap_or("").to_string())
        .collect();
    assert!(titles.iter().all(|t| !t.contains("PWNED")), "{titles:?}");
    assert!(!titles.is_empty() || !contains_bytes(&raw, b"\x1b]0;"));
    // Shown inertly.
    assert!(screen.contains("PWNED"), "{screen}");
    assert!(screen.contains("cHduZWQ="), "{screen}");
    assert!(screen.contains("Title"), "{screen}");
    // The stored reply is the model's text verbatim; only the display is defused.
    let conv = only_conv(&t);
    // Shown while it streams; stored whole once it has ended.
    let m = reply_complete(&t, &conv);
    assert!(m[1]["content"].as_str().unwrap().contains("\u{1b}]0;PWNED"));
    // Before the reply, too: the title and the item never cleared the screen.
    let first_frame = &raw[..before];
    let clears = first_frame.windows(4).filter(|w| *w == b"\x1b[2J").count();
    assert!(
        clears <= 1,
        "{clears} screen clears before the reply (tock's own start clears once)"
    );
}

#[test]
fn ctrl_q_quits_and_restores_the_terminal() {
    let t = Tock::new();
    let mut pty = start(&t);
    pty.type_text("x");
    pty.wait_text("x", LONG);
    pty.write(b"\x11"); // Ctrl+Q
    assert!(pty.wait_exit(LONG), "tock did not exit on Ctrl+Q");
    assert!(pty.wait_eof(LONG));
    let raw = pty.raw();
    let last = |pat: &[u8]| raw.windows(pat.len()).rposition(|w| w == pat);
    let enter_alt = last(b"\x1b[?1049h").expect("entered the alternate screen");
    let leave_alt = last(b"\x1b[?1049l").expect("left the alternate screen");
    assert!(leave_alt > enter_alt);
    let show = last(b"\x1b[?25h").expect("showed the cursor");
    assert!(
        show > leave_alt,
        "cursor shown after leaving the alternate screen"
    );
    if let Some(hide) = last(b"\x1b[?25l") {
        assert!(hide < leave_alt);
    }
    for (on, off, what) in [
        (&b"\x1b[?1000h"[..], &b"\x1b[?1000l"[..], "mouse capture"),
        (b"\x1b[?2004h", b"\x1b[?2004l", "bracketed paste"),
        (b"\x1b[?1004h", b"\x1b[?1004l", "focus reports"),
    ] {
        if let Some(on) = last(on) {
            let off = last(off).unwrap_or_else(|| panic!("{what} never turned off"));
            assert!(off > on, "{what} left on");
        }
    }
    // The parsed terminal agrees: main screen, cursor visible.
    assert!(!pty.alternate_screen(), "still in the alternate screen");
    assert!(!pty.cursor_hidden(), "cursor left hidden");
    // Nothing after the restore but a title reset.
    let tail = String::from_utf8_lossy(&raw[show..]).to_string();
    assert!(
        !tail.contains("\x1b[?1049h") && !tail.contains("\x1b[2J") && !tail.contains("\x1b[H"),
        "drawing after the restore: {tail:?}"
    );
}

/// Ctrl+C three times, the reflex to leave a program, clears the composer
/// and quits: what it cleared is kept as the draft, and said so. It was
/// gone for good, though the line said "Ctrl+P brings it back".
#[test]
fn ctrl_c_three_times_keeps_what_it_cleared_as_the_draft() {
    let t = Tock::new();
    let mut pty = start(&t);
    pty.type_text("precious draft about the migration");
    pty.wait_text("precious draft about the migration", LONG);
    pty.write(b"\x03");
    pty.wait_text("cleared (Ctrl+P brings it back)", LONG);
    pty.write(b"\x03");
    pty.wait_text("press Ctrl+C again to quit", LONG);
    pty.write(b"\x03");
    assert!(pty.wait_exit(LONG), "tock did not exit on Ctrl+C");
    assert!(pty.wait_eof(LONG));
    let out = String::from_utf8_lossy(&pty.raw()).to_string();
    assert!(
        out.contains("what Ctrl+C cleared as you quit is kept as the draft"),
        "{out:?}"
    );
    let conv = only_conv(&t);
    let db = tock::store::Store::open(&t.db).unwrap();
    assert_eq!(
        db.draft(conv.parse().unwrap()).unwrap().text,
        "precious draft about the migration"
    );
}

/// Keys typed while another process holds the database's write lock show at
/// once. The engine, starting, waits for that lock (up to the store's busy
/// timeout, again and again while it is held); the keyboard must not wait
/// with it.
#[test]
fn keys_show_while_another_process_holds_the_write_lock() {
    let t = Tock::new();
    // A first run makes the conversation, so that starting again writes
    // nothing before the first frame.
    let mut first = start(&t);
    first.write(b"\x11"); // Ctrl+Q
    assert!(first.wait_exit(LONG), "tock did not exit on Ctrl+Q");
    let lock = rusqlite::Connection::open(&t.db).unwrap();
    lock.execute_batch("BEGIN IMMEDIATE; CREATE TABLE held_lock(x);")
        .unwrap();
    let mut pty = start(&t);
    pty.type_text("typed under the lock");
    // Well inside the 5 s the engine's first write waits for the lock.
    let shown = pty.wait_for(Duration::from_secs(3), "the keys on screen", |s| {
        s.contains("typed under the lock")
    });
    assert!(shown.contains("typed under the lock"));
    lock.execute_batch("ROLLBACK").unwrap();
    pty.write(b"\x11");
    assert!(pty.wait_exit(LONG), "tock did not exit on Ctrl+Q");
}

#[test]
fn a_first_start_waits_for_another_process_holding_the_write_lock_and_says_so() {
    let t = Tock::new();
    // The database exists (a command made it) but holds no conversation
    // yet: the TUI's start must write one before its first frame.
    assert_eq!(t.json(&["conversations", "--json"]), serde_json::json!([]));
    let lock = rusqlite::Connection::open(&t.db).unwrap();
    lock.execute_batch("BEGIN IMMEDIATE; CREATE TABLE held_lock(x);")
        .unwrap();
    let mut pty = Pty::spawn(&[], &t.env, ROWS, COLS);
    // Said at once, well before the store's 5 s busy timeout would have
    // ended the start with "database is locked".
    pty.wait_for(Duration::from_secs(3), "the wait said", |s| {
        s.contains("another process is writing to the database")
    });
    lock.execute_batch("ROLLBACK").unwrap();
    pty.wait_text("Enter sends", LONG);
    pty.type_text("typed after the wait");
    pty.wait_text("typed after the wait", LONG);
    pty.write(b"\x11");
    assert!(pty.wait_exit(LONG), "tock did not exit on Ctrl+Q");
    only_conv(&t);
}

/// Text arriving in one burst, larger than one read (a paste without
/// bracketed-paste markers, a text expander, tmux send-keys), Enter last:
/// all of it is taken and the Enter acted on at once. Only the first 1 KB
/// reads were taken before, and the rest, Enter included, waited for the
/// next key (crossterm's mio source waits for an edge that never comes
/// while unread input remains).
#[test]
fn a_burst_larger_than_one_read_is_taken_whole_and_its_enter_sends() {
    let t = Tock::new();
    let pty = start(&t);
    let text: String = (0..600).map(|i| format!("{i:04},")).collect();
    assert_eq!(text.len(), 3000);
    let mut burst = text.clone().into_bytes();
    burst.push(b'\r');
    pty.write(&burst);
    let conv = only_conv(&t);
    let sent = wait_until(LONG, "the burst sent as one message", || {
        messages(&t, &conv)
            .first()
            .and_then(|m| m["content"].as_str().map(str::to_string))
    });
    assert_eq!(sent, text);
}

/// Lines pasted where the terminal does not mark pastes arrive as keys,
/// each line break an Enter: one message with its line breaks, not one
/// message per line (200 lines made 200 queued messages). Enter typed on
/// its own still sends.
#[test]
fn lines_pasted_without_paste_markers_make_one_message() {
    let t = Tock::new();
    let pty = start(&t);
    pty.write(b"line one\rline two\rline three\r");
    let conv = only_conv(&t);
    let sent = wait_until(LONG, "the pasted lines sent", || {
        messages(&t, &conv)
            .first()
            .and_then(|m| m["content"].as_str().map(str::to_string))
    });
    assert_eq!(sent, "line one\nline two\nline three");
    reply_complete(&t, &conv);
    // Typed, not pasted: the text, a pause, then Enter sends it.
    pty.type_text("typed");
    pty.wait_text("typed", LONG);
    pty.enter();
    let users = wait_until(LONG, "the typed message sent", || {
        let users: Vec<String> = messages(&t, &conv)
            .iter()
            .filter(|m| m["role"] == "user")
            .filter_map(|m| m["content"].as_str().map(str::to_string))
            .collect();
        (users.len() == 2).then_some(users)
    });
    assert_eq!(users[1], "typed");
}

/// Ctrl+L clears the terminal and draws the whole screen again (a wide
/// character the terminal measured otherwise left stray glyphs that no
/// frame repaired: frames write only what changed).
#[test]
fn ctrl_l_clears_the_terminal_and_redraws_everything() {
    let t = Tock::new();
    let pty = start(&t);
    pty.wait_text("offline", LONG);
    let before = pty.raw().len();
    pty.write(b"\x0c");
    wait_until(LONG, "a clear, then the whole screen again", || {
        let raw = pty.raw();
        let after = &raw[before..];
        let cleared = after.windows(4).position(|w| w == b"\x1b[2J")?;
        let drawn = &after[cleared..];
        (contains_bytes(drawn, b"Enter sends") && contains_bytes(drawn, b"offline")).then_some(())
    });
    // Over F2 and the search too, which take every other key.
    for (open, shows) in [(&b"\x1bOQ"[..], &b" Scheduled "[..]), (b"\x06", b"Search")] {
        pty.write(open);
        pty.wait_text(std::str::from_utf8(shows).unwrap().trim(), LONG);
        let before = pty.raw().len();
        pty.write(b"\x0c");
        wait_until(LONG, "the view cleared and drawn again", || {
            let raw = pty.raw();
            let after = &raw[before..];
            let cleared = after.windows(4).position(|w| w == b"\x1b[2J")?;
            contains_bytes(&after[cleared..], shows).then_some(())
        });
        pty.write(b"\x1b");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn kill9_with_a_queued_item_while_streaming_then_restart_delivers_once() {
    let server = MockServer::start();
    let t = Tock::with_openai(&server.base_url());
    // The first reply streams slowly (40 × 100 ms); everything after is quick.
    server.push(Reply::chunks("slow", 40, Duration::from_millis(100)));
    server.respond_with(|r| {
        let last = r.last_user_text().unwrap_or_default();
        Reply::text(&format!("Answer to: {last}. Complete."))
    });
    let mut pty = start(&t);
    pty.type_text("first question");
    pty.enter();
    server.wait_requests(1, LONG);
    pty.wait_text("slow-3", LONG);
    pty.type_text("queued follow-up");
    pty.enter();
    wait_until(LONG, "the follow-up queued", || {
        t.items()
            .iter()
            .any(|i| i["text"] == "queued follow-up" && i["status"] == "pending")
            .then_some(())
    });
    let conv = only_conv(&t);
    // Still streaming when killed.
    let m = messages(&t, &conv);
    assert_eq!(summary(&m)[1], ("assistant".into(), "streaming".into()));
    pty.kill9();
    assert_eq!(
        server.count(),
        1,
        "the follow-up waited for the busy conversation"
    );

    // Restart in a new pty on the same database.
    let mut pty = start(&t);
    let msgs = wait_until(
        LONG,
        "the regenerated reply and the follow-up answered",
        || {
            let m = messages(&t, &conv);
            let done = m.len() == 5 && m.iter().skip(2).all(|m| m["status"] == "complete");
            done.then_some(m)
        },
    );
    assert_eq!(
        summary(&msgs),
        vec![
            ("user".into(), "complete".into()),
            ("assistant".into(), "interrupted".into()),
            ("assistant".into(), "complete".into()),
            ("user".into(), "complete".into()),
            ("assistant".into(), "complete".into()),
        ]
    );
    assert_eq!(msgs[0]["content"], "first question");
    assert!(msgs[1]["content"].as_str().unwrap().starts_with("slow-0 "));
    assert_eq!(msgs[2]["content"], "Answer to: first question. Complete.");
    assert_eq!(msgs[3]["content"], "queued follow-up");
    assert_eq!(msgs[4]["content"], "Answer to: queued follow-up. Complete.");
    pty.wait_text("Answer to: queued follow-up", LONG);

    // The server saw: the first request, its regeneration (without the
    // partial reply), then the follow-up exactly once.
    std::thread::sleep(Duration::from_millis(200));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3, "{reqs:#?}");
    assert_eq!(reqs[1].last_user_text().as_deref(), Some("first question"));
    assert!(
        !reqs[1].messages().iter().any(|(r, _)| r == "assistant"),
        "the interrupted partial reply was sent back to the model"
    );
    assert_eq!(
        reqs[2].last_user_text().as_deref(),
        Some("queued follow-up")
    );
    let follow = reqs
        .iter()
        .filter(|r| r.last_user_text().as_deref() == Some("queued follow-up"))
        .count();
    assert_eq!(follow, 1);
    let items = t.items();
    assert!(items.iter().all(|i| i["status"] == "sent"), "{items:#?}");

    pty.write(b"\x11");
    assert!(pty.wait_exit(LONG));
}

#[test]
fn sigterm_and_sighup_restore_the_terminal() {
    for sig in [libc::SIGTERM, libc::SIGHUP] {
        let t = Tock::new();
        let mut pty = start(&t);
        assert!(pty.alternate_screen());
        let pid = pty.pid().expect("pid") as i32;
        // SAFETY: our own child, running.
        unsafe {
            libc::kill(pid, sig);
        }
        assert!(pty.wait_exit(LONG), "tock did not exit on signal {sig}");
        pty.wait_eof(LONG);
        assert!(
            !pty.alternate_screen(),
            "signal {sig}: still in the alternate screen"
        );
        assert!(!pty.cursor_hidden(), "signal {sig}: cursor left hidden");
        let raw = pty.raw();
        let last = |pat: &[u8]| raw.windows(pat.len()).rposition(|w| w == pat);
        assert!(last(b"\x1b[?1049l") > last(b"\x1b[?1049h"));
        if let Some(on) = last(b"\x1b[?1000h") {
            assert!(
                last(b"\x1b[?1000l") > Some(on),
                "signal {sig}: mouse capture left on"
            );
        }
    }
}

#[test]
fn a_tui_next_to_a_daemon_stands_by_and_still_sees_every_change() {
    let server = MockServer::start();
    server.respond_with(|r| {
        let last = r.last_user_text().unwrap_or_default();
        Reply::slow(
            &format!("Daemon answer to {last} done"),
            Duration::from_millis(30),
        )
    });
    let t = Tock::with_openai(&server.base_url());
    let daemon = t.spawn_daemon();
    let pid = daemon.pid();
    wait_until(LONG, "the daemon dispatching", || {
        (t.json(&["status", "--json"])["dispatcher"]["pid"] == pid as i64).then_some(())
    });
    let pty = start(&t);
    pty.wait_text(&format!("another tock (pid {pid}) sends"), LONG);
    // Typed in the TUI, sent by the daemon, shown in the TUI.
    pty.type_text("typed in the standby tui");
    pty.enter();
    pty.wait_text("Daemon answer to typed in the standby tui done", LONG);
    // Sent from the CLI into the conversation on screen: shown too.
    let conv = only_conv(&t);
    t.send(&["--conv", &conv, "from the cli meanwhile"]);
    pty.wait_text("Daemon answer to from the cli meanwhile done", LONG);
    let msgs = messages(&t, &conv);
    assert_eq!(msgs.len(), 4);
    assert!(msgs.iter().all(|m| m["status"] == "complete"));
    assert_eq!(server.count(), 2);
    // At 60 columns the note is short, and the counts after it still show.
    t.send(&["--conv", &conv, "--in", "1h", "later on"]);
    let small = Pty::spawn(&[], &t.env, 15, 60);
    let screen = small.wait_text("other tock sends", LONG);
    assert!(!screen.contains("another tock"), "{screen}");
    small.wait_text("⏰1", LONG);
}

/// A TUI next to the daemon that sends hears what the daemon noticed: a
/// reply finished in another conversation shows in its status line, rings,
/// and marks the conversation unread; F3 lists it, also after a restart
/// (notices are kept in the database).
#[test]
fn a_tui_next_to_a_daemon_hears_its_notices_and_keeps_them_across_a_restart() {
    let server = MockServer::start();
    server.respond_with(|_| Reply::text("answered by the daemon"));
    let t = Tock::with_openai(&server.base_url());
    // notify_command runs once, in the process that noticed (the daemon).
    let ran = t.path("notified");
    t.write_config(&format!(
        "notify_command = [\"sh\", \"-c\", \"echo \\\"$TOCK_TEXT\\\" >> {}\"]\n",
        ran.display()
    ));
    let mut daemon = t.spawn_daemon();
    let pid = daemon.pid();
    wait_until(LONG, "the daemon dispatching", || {
        (t.json(&["status", "--json"])["dispatcher"]["pid"] == pid as i64).then_some(())
    });
    let mut pty = start(&t);
    pty.wait_text(&format!("another tock (pid {pid}) sends"), LONG);
    t.send(&["--new", "Elsewhere", "a question for later"]);
    pty.wait_text("reply finished in “Elsewhere”", LONG);
    let raw = pty.raw();
    assert!(
        contains_bytes(&raw, b"\x07\x1b]9;tock: reply finished"),
        "the bell and the desktop notice, from the daemon's notice"
    );
    let lines = || {
        std::fs::read_to_string(&ran)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("reply finished"))
            .count()
    };
    wait_until(LONG, "the daemon's notify_command", || {
        (lines() >= 1).then_some(())
    });
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(lines(), 1, "notify_command ran once for one notice");
    pty.write(b"\x11"); // Ctrl+Q
    pty.wait_exit(LONG);
    daemon.signal(libc::SIGTERM);
    daemon.wait_timeout(LONG);
    let pty = start(&t);
    pty.write(b"\x1bOR"); // F3
    pty.wait_text("reply finished in “Elsewhere”", LONG);
}

/// A config file deleted while tock runs is told as such (the defaults,
/// other models and all, are in effect), not as a mere reload.
#[test]
fn a_config_file_deleted_while_tock_runs_is_told_as_gone() {
    let t = Tock::new();
    t.write_config("[ui]\nmax_width = 90\n");
    let pty = start(&t);
    pty.wait_text("F2", LONG);
    std::fs::remove_file(&t.config).unwrap();
    let screen = pty.wait_text("is gone", LONG);
    assert!(screen.contains("built-in defaults"), "{screen}");
}

/// `[ui]` settings changed in the file take effect when it is read again,
/// as the theme's do: here the width the conversation is laid out at.
#[test]
fn a_changed_max_width_applies_when_the_config_is_read_again() {
    let t = Tock::new();
    t.write_config("[ui]\nmax_width = 40\n");
    let pty = start(&t);
    let words: Vec<String> = (1..=30).map(|i| format!("w{i:02}")).collect();
    pty.type_text(&words.join(" "));
    pty.write(b"\r");
    // Sent: in the conversation, and the composer empty again (the words
    // typed there, 70 columns wide, are no measure of the conversation's).
    pty.wait_for(LONG, "the message sent", |s| {
        s.contains("w30") && s.contains("Enter sends")
    });
    let wide = words[..12].join(" ");
    assert!(!pty.screen().contains(&wide), "{}", pty.screen());
    t.write_config("[ui]\nmax_width = 60\n");
    let screen = pty.wait_for(LONG, "the message laid out 60 columns wide", |s| {
        s.contains(&wide)
    });
    assert!(screen.contains("w30"), "{screen}");
}

/// A TUI opened beside a daemon started on a config file it cannot read
/// lists the daemon's notice of it in F3 (the TUI's own engine, reading the
/// same file, does not tell it again), and hears the file fixed, once.
#[test]
fn a_tui_beside_a_daemon_on_an_unreadable_config_lists_the_problem_and_its_fix_once() {
    let t = Tock::new();
    let good = "[ui]\nmax_width = 90\n";
    t.write_config("[ui]\nmax_width = -3\n");
    let mut daemon = t.spawn_daemon();
    let kept = || -> usize {
        if !t.db.exists() {
            return 0;
        }
        t.sql()
            .query_row(
                "SELECT COUNT(*) FROM notices WHERE kind = 'config_unreadable'",
                [],
                |r| r.get(0),
            )
            .unwrap_or(0)
    };
    wait_until(LONG, "the daemon's notice kept", || {
        (kept() == 1).then_some(())
    });
    let pty = start(&t);
    pty.write(b"\x1bOR"); // F3
    let screen = pty.wait_for(LONG, "the notice listed in F3", |s| {
        s.contains("Notifications") && s.contains("line 2:")
    });
    // In the list (the status bar may say it too, its own start's line).
    assert_eq!(
        screen
            .lines()
            .filter(|l| l.trim_start().starts_with('│') && l.contains("line 2:"))
            .count(),
        1,
        "{screen}"
    );
    pty.write(b"\x1b"); // Esc
    t.write_config(good);
    pty.wait_text("can be read again", LONG);
    pty.write(b"\x1bOR"); // F3
    let screen = pty.wait_text("line 2:", LONG);
    // In the list, not its status bar.
    let listed: Vec<&str> = screen
        .lines()
        .filter(|l| l.trim_start().starts_with('│'))
        .collect();
    assert_eq!(
        listed
            .iter()
            .filter(|l| l.contains("can be read again"))
            .count(),
        1,
        "{screen}"
    );
    assert!(
        !listed.iter().any(|l| l
            .trim_end_matches(['│', ' '])
            .ends_with("configuration reloaded")),
        "and no second word of the reload: {screen}"
    );
    assert_eq!(kept(), 1);
    daemon.signal(libc::SIGTERM);
    daemon.wait_timeout(LONG);
}

#[test]
fn a_fired_item_rings_and_emits_desktop_notification_escapes_outside_tmux() {
    let mut t = Tock::new();
    t.set_env("TOCK_ECHO_DELAY_MS", "0");
    let pty = start(&t);
    let conv = only_conv(&t);
    // In another conversation than the one in view, so the reply also notifies.
    let other = t.ok(&[
        "send",
        "--new",
        "elsewhere",
        "--in",
        "1s",
        "ping from the future",
    ]);
    let other: i64 = other.trim().parse().unwrap();
    wait_until(LONG, "the item sent", || {
        (t.item(other)["status"] == "sent").then_some(())
    });
    let raw = wait_until(LONG, "OSC 9 and OSC 777 in the output", || {
        let raw = pty.raw();
        (contains_bytes(&raw, b"\x1b]9;tock: ") && contains_bytes(&raw, b"\x1b]777;notify;tock;"))
            .then_some(raw)
    });
    assert!(
        contains_bytes(&raw, b"\x07\x1b]9;tock: "),
        "the bell rings first"
    );
    assert!(
        !contains_bytes(&raw, b"\x1bPtmux;"),
        "no tmux wrapper outside tmux"
    );
    assert!(!conv.is_empty());
}

#[test]
fn ctrl_g_edits_the_draft_in_the_editor_and_restores_the_terminal() {
    let mut t = Tock::new();
    // An "editor" that appends a line to the file it is given, as a person
    // (or `echo >>`) would: the file ends with a newline, so the line is a
    // line of its own (it was glued onto the draft's last line).
    use_editor(
        &mut t,
        "fake-editor.sh",
        "#!/bin/sh\necho 'and more from the editor' >> \"$1\"\n",
    );
    let pty = start(&t);
    pty.type_text("a draft");
    pty.wait_text("a draft", LONG);
    pty.write(b"\x07"); // Ctrl+G
    pty.wait_text("and more from the editor", LONG);
    assert!(pty.alternate_screen(), "the TUI took the terminal back");
    // Saved as the draft at once: a quit and a restart bring it back.
    let conv = only_conv(&t);
    let db = tock::store::Store::open(&t.db).unwrap();
    let draft = wait_until(LONG, "the draft saved", || {
        let d = db.draft(conv.parse().unwrap()).ok()?;
        (d.text == "a draft\nand more from the editor").then_some(d)
    });
    assert_eq!(draft.edit_of, None);
}

/// With neither $VISUAL nor $EDITOR, Ctrl+G opens `vi` from $PATH, as git
/// does (it only said to set one).
#[test]
fn ctrl_g_without_an_editor_set_falls_back_to_vi() {
    use std::os::unix::fs::PermissionsExt;
    let mut t = Tock::new();
    let bin = t.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let vi = bin.join("vi");
    std::fs::write(&vi, "#!/bin/sh\nsed -i 's/$/ edited in vi/' \"$1\"\n").unwrap();
    std::fs::set_permissions(&vi, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    t.set_env("PATH", &path);
    let pty = start(&t);
    pty.type_text("a draft");
    pty.wait_text("a draft", LONG);
    pty.write(b"\x07"); // Ctrl+G
    pty.wait_text("a draft edited in vi", LONG);
}

/// What is typed into the editor goes to the editor: tock does not read the
/// terminal while it has handed it over.
#[test]
fn ctrl_g_keys_typed_in_the_editor_reach_the_editor() {
    let mut t = Tock::new();
    // An "editor" that, as a real one does, reads the terminal key by key
    // (raw mode), and keeps the 19 keys of "typed in the editor".
    use_editor(
        &mut t,
        "raw-editor.sh",
        "#!/bin/sh\nstty raw -echo\nprintf 'EDITOR READY\\r\\n'\nhead -c 19 > \"$1\"\nstty sane\n",
    );
    let pty = start(&t);
    pty.write(b"\x07"); // Ctrl+G
    pty.wait_text("EDITOR READY", LONG);
    for c in "typed in the editor".chars() {
        pty.type_text(&c.to_string());
        std::thread::sleep(Duration::from_millis(5));
    }
    let screen = pty.wait_for(LONG, "the keys back in the composer", |s| {
        s.contains("typed in the editor") && !s.contains("EDITOR READY")
    });
    assert!(screen.contains("typed in the editor"));
}

#[test]
fn theme_auto_asks_the_terminal_and_draws_the_light_palette_on_a_light_background() {
    let t = Tock::new();
    // A light terminal: black text on white.
    let mut light = Pty::spawn_answering(
        &[],
        &t.env,
        ROWS,
        COLS,
        Some(("rgb:0000/0000/0000", "rgb:ffff/ffff/ffff")),
    );
    light.wait_text("Enter sends", LONG);
    assert!(
        contains_bytes(&light.raw(), b"\x1b]11;?"),
        "asked for the background"
    );
    let colors = light.foreground_colors();
    // The light palette's grey (256-colour 242), not the terminal's own dark grey (8).
    assert!(colors.contains(&vt100::Color::Idx(242)), "{colors:?}");
    assert!(!colors.contains(&vt100::Color::Idx(8)), "{colors:?}");
    light.write(b"\x11");
    assert!(light.wait_exit(LONG));

    // A terminal that ignores the question (it still answers device
    // attributes): dark, without waiting long.
    let mut silent = Pty::spawn_answering(&[], &t.env, ROWS, COLS, None);
    silent.wait_text("Enter sends", LONG);
    let colors = silent.foreground_colors();
    assert!(colors.contains(&vt100::Color::Idx(8)), "{colors:?}");
    assert!(!colors.contains(&vt100::Color::Idx(242)), "{colors:?}");
    silent.write(b"\x11");
    assert!(silent.wait_exit(LONG));

    // `theme = "light"` in the config: no question asked.
    t.write_config("[ui]\ntheme = \"light\"\n");
    let mut configured = Pty::spawn_answering(&[], &t.env, ROWS, COLS, None);
    configured.wait_text("Enter sends", LONG);
    assert!(!contains_bytes(&configured.raw(), b"\x1b]11;?"));
    assert!(
        configured
            .foreground_colors()
            .contains(&vt100::Color::Idx(242))
    );
    configured.write(b"\x11");
    assert!(configured.wait_exit(LONG));
}

/// `tock⏎` and typing at once: the keys typed before tock reads the
/// terminal are in the composer, also where it first asks the terminal
/// for its colours (`theme = auto`), whose reader dropped them.
#[test]
fn keys_typed_before_tock_is_ready_are_kept() {
    let t = Tock::new();
    for colors in [Some(("rgb:0000/0000/0000", "rgb:ffff/ffff/ffff")), None] {
        let mut pty = Pty::spawn_answering(&[], &t.env, ROWS, COLS, colors);
        pty.write(b"typed ahead");
        let screen = pty.wait_for(LONG, "the keys typed ahead in the composer", |s| {
            s.contains("typed ahead") && s.contains("F2 scheduled")
        });
        assert!(screen.contains("│typed ahead"), "{screen}");
        pty.write(b"\x11");
        assert!(pty.wait_exit(LONG));
    }
}

/// The TUI reads and shows times by the zone's rules, as the CLI does: under
/// TZ=Europe/Berlin in winter, `/at` a summer date at 09:00 is 07:00 UTC (it
/// was read with today's offset, +01:00, and went an hour late), and on the
/// night the clocks go back 02:30 is the first 02:30 (00:30 UTC).
#[test]
fn the_tui_reads_times_by_the_zones_rules_not_todays_offset() {
    use chrono::Datelike;
    let (t, fold) = support::berlin_and_next_years_fold();
    let year = fold.year();
    let pty = start(&t);
    pty.type_text(&format!("/at {year}-07-01 09:00 summer morning"));
    pty.wait_text("09:00", LONG);
    pty.enter();
    pty.type_text(&format!("/at {fold} 02:30 in the fold"));
    pty.wait_text("02:30", LONG);
    pty.enter();
    let due = |text: &str| {
        wait_until(LONG, text, || {
            t.items()
                .into_iter()
                .find(|i| i["text"] == text)
                .and_then(|i| i["due_at"].as_str().map(str::to_string))
        })
    };
    assert_eq!(due("summer morning"), format!("{year}-07-01T07:00:00.000Z"));
    assert_eq!(due("in the fold"), format!("{fold}T00:30:00.000Z"));
    // Shown as they were said: F2 lists both at their wall-clock times.
    pty.write(b"\x1bOQ"); // F2
    let screen = pty.wait_text("summer morning", LONG);
    let row = |text: &str| {
        screen
            .lines()
            .find(|l| l.contains(text))
            .unwrap_or_default()
            .to_string()
    };
    assert!(row("summer morning").contains("09:00"), "{screen}");
    assert!(row("in the fold").contains("02:30"), "{screen}");
}

/// `/model ID` with an id a configured server lists goes to that server,
/// also with OPENAI_API_KEY exported for the entry's `api_key_env`: the
/// environment's provider took the bare id, and the message went to
/// api.openai.com with that key and the conversation.
#[test]
fn a_model_id_a_configured_server_lists_goes_there_with_the_key_exported() {
    let server = MockServer::start();
    let mut t = Tock::new();
    t.write_config(&format!(
        "default_model = \"mini\"\n[models.mini]\nprovider = \"openai\"\nmodel = \"gpt-4o\"\nbase_url = \"{}\"\napi_key_env = \"OPENAI_API_KEY\"\n",
        server.base_url()
    ));
    t.set_env("OPENAI_API_KEY", "sk-exported-for-mini");
    server.respond_with(|_| Reply::text("answered by the configured server"));
    let pty = start(&t);
    pty.type_text("/model gpt-4o-mini");
    pty.enter();
    pty.wait_text("mini/gpt-4o-mini", LONG);
    pty.type_text("where do I go");
    pty.enter();
    let chat = wait_until(LONG, "the message at the configured server", || {
        server.requests().into_iter().find(|r| r.method == "POST")
    });
    assert_eq!(chat.body["model"], "gpt-4o-mini");
    pty.wait_text("answered by the configured server", LONG);
}

/// The model picker lists the ids of a server once, however many entries
/// name it, and says which server's list could not be read (a refused
/// connection showed nothing but the ids missing).
#[test]
fn the_model_picker_lists_each_server_once_and_says_which_could_not_be_read() {
    let server = MockServer::start();
    let closed = MockServer::free_port();
    let mut t = Tock::new();
    let entry = |name: &str, model: &str, url: &str| {
        format!(
            "[models.{name}]\nprovider = \"openai\"\nmodel = \"{model}\"\nbase_url = \"{url}\"\napi_key_env = \"K\"\n"
        )
    };
    t.write_config(&format!(
        "default_model = \"mini\"\n{}{}{}",
        entry("mini", "gpt-4o-mini", &server.base_url()),
        entry("big", "gpt-4o", &server.base_url()),
        entry("gone", "m", &format!("http://127.0.0.1:{closed}/v1")),
    ));
    t.set_env("K", "sk-test");
    let pty = start(&t);
    pty.type_text("/model");
    pty.enter();
    pty.wait_text("the list of gone's server could not be read", LONG);
    // Two that fail: both named first, then why.
    let closed2 = MockServer::free_port();
    let mut t2 = Tock::new();
    t2.write_config(&format!(
        "default_model = \"mini\"\n{}{}{}",
        entry("mini", "gpt-4o-mini", &server.base_url()),
        entry("gone", "m", &format!("http://127.0.0.1:{closed}/v1")),
        entry("gone2", "m", &format!("http://127.0.0.1:{closed2}/v1")),
    ));
    t2.set_env("K", "sk-test");
    let pty2 = start(&t2);
    pty2.type_text("/model");
    pty2.enter();
    pty2.wait_text(
        "the lists of the servers of gone, gone2 could not be read — gone: ",
        LONG,
    );
    let s = pty.wait_for(LONG, "the ids listed", |s| {
        s.contains("listed by its server")
    });
    assert!(s.contains("big") && s.contains("mini"), "{s}");
    assert!(!s.contains("big/gpt"), "one server, its ids once: {s}");
}

/// With no config file, only the environment's provider (OPENAI_BASE_URL
/// and a key, TOCK_MODEL naming an id), `/model ID` for another id that
/// server lists is that id: it was taken for an entry named after the
/// default id (`gpt-4o-mini/gpt-4o`), which the server did not know.
#[test]
fn with_only_the_environments_provider_model_id_names_the_id_itself() {
    let server = MockServer::start();
    let mut t = Tock::with_openai(&server.base_url());
    t.set_env("TOCK_MODEL", "gpt-4o-mini");
    server.respond_with(|_| Reply::text("answered by gpt-4o"));
    let pty = start(&t);
    // Completion asks for the list first, as a user's Tab would.
    pty.type_text("/model gpt-4o");
    pty.write(b"\t");
    wait_until(LONG, "the model list asked for", || {
        server
            .requests()
            .into_iter()
            .find(|r| r.method == "GET")
            .map(|_| ())
    });
    // The line may have been completed to the same text: set it again.
    std::thread::sleep(Duration::from_millis(300));
    pty.write(b"\x15");
    pty.type_text("/model gpt-4o");
    pty.enter();
    pty.wait_text("model for this conversation: gpt-4o", LONG);
    pty.type_text("which model are you");
    pty.enter();
    let chat = wait_until(LONG, "the message at the server", || {
        server.requests().into_iter().find(|r| r.method == "POST")
    });
    assert_eq!(chat.body["model"], "gpt-4o");
    pty.wait_text("answered by gpt-4o", LONG);
}

/// `tock ask` on a terminal streams the reply as it comes (into a pipe or
/// a file it writes the answer once complete), made safe: an escape
/// sequence in it shows, and does nothing.
#[test]
fn tock_ask_on_a_terminal_streams_the_reply_as_it_comes() {
    let server = MockServer::start();
    server.push(Reply::Stream {
        chunks: vec![
            "first ".into(),
            "\x1b]0;PWNED\x07".into(),
            "second ".into(),
            "third".into(),
        ],
        gap: Duration::from_millis(400),
        tool_calls: Vec::new(),
    });
    let t = Tock::with_openai(&server.base_url());
    let pty = Pty::spawn(&["ask", "--new", "Live", "stream it"], &t.env, ROWS, COLS);
    let early = pty.wait_text("first", LONG);
    assert!(
        !early.contains("third"),
        "streamed, not written at the end: {early}"
    );
    let done = pty.wait_text("third", LONG);
    assert!(done.contains("first ␛]0;PWNED␇second third"), "{done}");
    assert!(!contains_bytes(&pty.raw(), b"\x1b]0;PWNED"));
}

/// Quitting while a message waits for the server's first byte: the line
/// printed on the way out counts it once, as queued (it was also counted
/// as a reply cut off, which there was not).
#[test]
fn quitting_before_the_first_byte_counts_the_message_once() {
    let server = MockServer::start();
    server.push(Reply::Silent(Duration::from_secs(60)));
    let t = Tock::with_openai(&server.base_url());
    let mut pty = start(&t);
    pty.type_text("are you there");
    pty.enter();
    pty.wait_text("sending…", LONG);
    server.wait_requests(1, LONG);
    pty.write(b"\x11"); // Ctrl+Q: it asks first, a request being in flight
    pty.wait_text("a message is on its way, with no answer yet", LONG);
    pty.write(b"\x11");
    assert!(pty.wait_exit(LONG), "tock did not exit on Ctrl+Q twice");
    assert!(pty.wait_eof(LONG));
    let raw = String::from_utf8_lossy(&pty.raw()).to_string();
    let line = raw
        .lines()
        .find(|l| l.contains("kept in the database"))
        .unwrap_or_else(|| panic!("no exit line: {raw:?}"));
    assert!(line.contains("tock: 1 queued"), "{line}");
    assert!(!line.contains("cut off"), "{line}");
}

/// On a terminal, a reply that breaks off and is asked for again: what is
/// said of it starts a line of its own (it was glued to the text, mid-word).
#[test]
fn tock_ask_on_a_terminal_says_a_retry_on_a_line_of_its_own() {
    let server = MockServer::start();
    server.push(Reply::Cut {
        chunks: vec!["partial".into(), " wor".into()],
        gap: Duration::from_millis(50),
    });
    server.push(Reply::text("The whole answer."));
    let t = Tock::with_openai(&server.base_url());
    t.write_config("[outbox]\nbackoff_base_secs = 1\n");
    let pty = Pty::spawn(&["ask", "--new", "Broken", "go"], &t.env, ROWS, COLS);
    let s = pty.wait_text("The whole answer.", LONG);
    assert!(s.contains("the reply broke off"), "{s}");
    assert!(
        s.lines()
            .all(|l| !(l.contains("partial") && l.contains("tock:"))),
        "{s}"
    );
}
