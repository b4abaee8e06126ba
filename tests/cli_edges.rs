//! The CLI at its edges: ambiguous titles, far dates, long texts, one-line
//! usage errors, what a waiting item waits for, cut replies regenerated,
//! private files, and a log file next to the database.

mod support;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;
use std::time::Duration;

use support::{MockServer, Reply, Tock, wait_until};

fn mode(p: &std::path::Path) -> u32 {
    std::fs::metadata(p)
        .map(|m| m.permissions().mode() & 0o777)
        .unwrap_or(0)
}

#[test]
fn an_ambiguous_title_is_refused_with_the_candidates() {
    let t = Tock::new();
    let a = t.send(&["--new", "base", "--in", "1h", "one"]);
    let b = t.send(&["--new", "base", "--in", "1h", "two"]);
    let ca = t.item(a)["conversation_id"].as_i64().unwrap();
    let cb = t.item(b)["conversation_id"].as_i64().unwrap();
    let line = t.fails(&["send", "--conv", "base", "three"]);
    assert!(
        line.contains(&format!("#{ca}")) && line.contains(&format!("#{cb}")),
        "{line}"
    );
    let line = t.fails(&["show", "base"]);
    assert!(line.contains("2 conversations"), "{line}");
    // By id: `#N` or --conv-id.
    let c = t.send(&["--conv", &format!("#{cb}"), "--in", "1h", "three"]);
    assert_eq!(t.item(c)["conversation_id"], cb);
    let d = t.send(&["--conv-id", &ca.to_string(), "--in", "1h", "four"]);
    assert_eq!(t.item(d)["conversation_id"], ca);
    assert_eq!(t.show(&format!("#{ca}"))["id"], ca);
}

/// A date in another year says its year, as the TUI's strip and F2 do:
/// `Mon 1 Dec 07:15 (in 3647d)` read as last week, with another year's weekday.
#[test]
fn dates_in_another_year_show_the_year() {
    let t = Tock::new();
    let day = chrono::Local::now().date_naive() + chrono::Days::new(400);
    t.send(&[
        "--new",
        "far",
        "--at",
        &day.format("%Y-%m-%d 09:00").to_string(),
        "next year",
    ]);
    let shown = day.format("%a %-d %b %Y 09:00").to_string();
    let list = t.ok(&["list"]);
    assert!(list.contains(&shown), "want {shown:?} in {list}");
    let status = t.ok(&["status"]);
    assert!(status.contains(&shown), "want {shown:?} in {status}");
}

/// A send for later says on stderr when it resolved to (`--at "fri 9am"`:
/// which Friday), while stdout stays the id alone for scripts; a send for
/// now says nothing of a time.
#[test]
fn a_send_for_later_says_when_on_stderr() {
    let t = Tock::new();
    let day = chrono::Local::now().date_naive() + chrono::Days::new(3);
    let o = t.run(&[
        "send",
        "--new",
        "later",
        "--at",
        &day.format("%Y-%m-%d 09:00").to_string(),
        "hi",
    ]);
    assert!(o.status.success(), "{o:?}");
    assert!(o.stdout.trim().parse::<i64>().is_ok(), "{:?}", o.stdout);
    assert_eq!(o.stdout.lines().count(), 1, "{:?}", o.stdout);
    let line = o
        .stderr
        .lines()
        .find(|l| l.starts_with("scheduled for "))
        .unwrap_or_else(|| panic!("{:?}", o.stderr));
    // The year only when it is not this year's.
    let this_year = day.format("%Y").to_string() == chrono::Local::now().format("%Y").to_string();
    let shown = if this_year {
        day.format("scheduled for %a %-d %b 09:00 (in ")
    } else {
        day.format("scheduled for %a %-d %b %Y 09:00 (in ")
    };
    assert!(line.starts_with(&shown.to_string()), "{line}");
    // Counted from when it was asked: "in 1h 29m" it said of --in 90m.
    let o = t.run(&["send", "--conv", "later", "--in", "90m", "again"]);
    assert!(o.stdout.trim().parse::<i64>().is_ok(), "{:?}", o.stdout);
    assert!(
        o.stderr
            .lines()
            .any(|l| l.starts_with("scheduled for ") && l.ends_with("(in 1h 30m)")),
        "{:?}",
        o.stderr
    );
    let o = t.run(&["send", "--conv", "later", "now"]);
    assert!(o.stdout.trim().parse::<i64>().is_ok(), "{:?}", o.stdout);
    assert!(!o.stderr.contains("scheduled for"), "{:?}", o.stderr);
    // A series says when its first message goes.
    let o = t.run(&["send", "--conv", "later", "--every", "every 2h", "water"]);
    assert!(o.stdout.trim().parse::<i64>().is_ok(), "{:?}", o.stdout);
    assert!(
        o.stderr
            .lines()
            .any(|l| l.starts_with("first scheduled for ") && l.ends_with("(in 2h)")),
        "{:?}",
        o.stderr
    );
}

/// A regeneration waiting to be sent (no tock runs, or its queue is busy)
/// is listed as what it is, in `list`, `list --all` and `status`, by the
/// id `tock cancel` takes: no listing showed it.
#[test]
fn a_waiting_regeneration_is_listed_as_what_it_is() {
    let t = Tock::new();
    t.send(&["--new", "regen", "hello"]);
    let mut d = t.spawn_daemon();
    wait_until(Duration::from_secs(20), "the reply", || {
        let m = t.show("regen")["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        (m.len() == 2 && m[1]["status"] == "complete").then_some(())
    });
    d.signal(libc::SIGTERM);
    assert!(d.wait_timeout(Duration::from_secs(5)).is_some());
    let id = t.ok(&["regenerate", "regen"]).trim().to_string();
    assert!(id.parse::<i64>().is_ok(), "{id}");
    for args in [vec!["list"], vec!["list", "--all"]] {
        let out = t.ok(&args);
        let row = out
            .lines()
            .find(|l| l.split_whitespace().next() == Some(id.as_str()))
            .unwrap_or_else(|| panic!("{args:?}: no row {id} in {out}"));
        assert!(row.contains("regenerate the last reply"), "{row}");
    }
    let listed = t.json(&["list", "--json"]);
    let row = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["id"].as_i64().is_some_and(|n| n.to_string() == id))
        .unwrap_or_else(|| panic!("{listed:#}"));
    assert_eq!(row["kind"], "regenerate");
    let status = t.ok(&["status"]);
    assert!(status.contains("regenerate the last reply"), "{status}");
    assert!(status.contains("pending 1"), "{status}");
    t.ok(&["cancel", &id]);
    assert!(!t.ok(&["list"]).contains("regenerate the last reply"));
}

/// A reply that failed on its own (cut, out of attempts) holds what was
/// queued behind it, and the list says so with the way out: it read "a
/// reply was stopped", as if the user had stopped it.
#[test]
fn a_queue_held_by_a_failed_reply_says_the_reply_failed() {
    let server = MockServer::start();
    for _ in 0..2 {
        server.push(Reply::Cut {
            chunks: vec!["half an ".into()],
            gap: Duration::ZERO,
        });
    }
    let t = Tock::with_openai(&server.base_url());
    t.write_config("[outbox]\nmax_attempts = 2\nbackoff_base_secs = 1\n");
    let first = t.send(&["--new", "fd", "drop it"]);
    let behind = t.send(&["--conv", "fd", "behind the drop"]);
    let mut d = t.spawn_daemon();
    wait_until(Duration::from_secs(20), "the reply failed", || {
        (t.item(first)["status"] == "failed").then_some(())
    });
    let waiting = wait_until(Duration::from_secs(20), "the queue held", || {
        t.item(behind)["waiting"].as_str().map(str::to_string)
    });
    d.signal(libc::SIGTERM);
    assert!(d.wait_timeout(Duration::from_secs(5)).is_some());
    assert_eq!(
        waiting,
        format!(
            "queue paused after the reply to item #{first} failed \
             (tock retry {first} generates it again, then this)"
        )
    );
}

#[test]
fn a_numeric_title_never_silently_loses_to_an_id() {
    let t = Tock::new();
    let first = t.send(&["--new", "first", "--in", "1h", "x"]);
    let c1 = t.item(first)["conversation_id"].as_i64().unwrap();
    // A conversation titled with the other's id.
    let other = t.send(&["--new", &c1.to_string(), "--in", "1h", "y"]);
    let c2 = t.item(other)["conversation_id"].as_i64().unwrap();
    assert_ne!(c1, c2);
    let line = t.fails(&["show", &c1.to_string()]);
    assert!(
        line.contains(&format!("#{c1}")) && line.contains(&format!("#{c2}")),
        "{line}"
    );
    assert_eq!(t.show(&format!("#{c1}"))["id"], c1);
    // Digits that are only an id still work.
    assert_eq!(t.show(&c2.to_string())["id"], c2);
}

#[test]
fn far_dates_and_years_are_refused_with_a_reason() {
    let t = Tock::new();
    for (args, mention) in [
        (vec!["send", "--in", "100000d", "x"], "too far"),
        (vec!["send", "--at", "9999-12-31 23:59", "x"], "too far"),
        (vec!["send", "--in", "1000y", "x"], "years"),
        (vec!["send", "--in", "2 years", "x"], "give a date"),
        (vec!["send", "--in", "3mo", "x"], "months"),
        // A series whose first time is beyond ten years (the engine's rule,
        // so /every in the TUI says the same).
        (vec!["send", "--every", "every 99999h", "x"], "too far"),
    ] {
        let line = t.fails(&args);
        assert!(line.contains(mention), "{args:?}: {line}");
    }
    assert!(t.items().is_empty());
    // Within ten years is fine.
    t.send(&["--in", "3000d", "in about eight years"]);
}

#[test]
fn usage_errors_are_one_line() {
    let t = Tock::new();
    // Each points to the help that lists what the command it names takes.
    for (args, help) in [
        (vec!["--frobnicate"], "(tock --help"),
        (vec!["send", "--in"], "(tock send --help"),
        (vec!["send"], "(tock send --help"),
        (vec!["cancel", "-5m"], "(tock cancel --help"),
        (
            vec!["cancel", "999999999999999999999999"],
            "(tock cancel --help",
        ),
        (vec!["list", "--bogus"], "(tock list --help"),
        (vec!["frobnicate"], "(tock --help"),
    ] {
        let o = t.run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let lines: Vec<&str> = o.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "{args:?}: {:?}", o.stderr);
        assert!(lines[0].starts_with("tock: "), "{:?}", lines[0]);
        assert!(lines[0].contains(help), "{args:?}: {:?}", lines[0]);
    }
    // Help is still the full help.
    let help = t.ok(&["--help"]);
    assert!(help.lines().count() > 5);
}

/// An argument that is not UTF-8 (a stray byte from a script, a file name
/// in another encoding) is a usage error like any other, whatever the
/// command: one line, exit 2, no panic.
#[test]
fn an_argument_that_is_not_utf8_is_a_one_line_usage_error() {
    use std::os::unix::ffi::OsStrExt;
    let t = Tock::new();
    let bad = std::ffi::OsStr::from_bytes(b"\xff");
    for (head, tail, help, what) in [
        (vec!["search"], vec![], "(tock search --help", "UTF-8"),
        (vec!["show"], vec![], "(tock show --help", "UTF-8"),
        (
            vec!["send", "--new"],
            vec!["hi"],
            "(tock send --help",
            "UTF-8",
        ),
        (vec!["edit", "1"], vec![], "(tock edit --help", "UTF-8"),
        (vec!["--model"], vec!["list"], "(tock list --help", "UTF-8"),
        (vec![], vec![], "(tock --help", "unrecognized subcommand"),
    ] {
        let mut c = t.command(&head);
        c.arg(bad).args(tail);
        let o = c.output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{head:?}: {stderr}");
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "{head:?}: {stderr:?}");
        assert!(lines[0].starts_with("tock: "), "{:?}", lines[0]);
        assert!(lines[0].contains(what), "{:?}", lines[0]);
        assert!(lines[0].contains(help), "{head:?}: {:?}", lines[0]);
    }
}

#[test]
fn long_texts_come_from_stdin_or_a_file() {
    let t = Tock::new();
    // Over the kernel's 128 KiB limit on one argument.
    let long: String = "long text ".repeat(30_000);
    let mut c = t.command(&["send", "--in", "1h", "-"]);
    c.stdin(Stdio::piped()).stdout(Stdio::piped());
    let mut child = c.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(long.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let id: i64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    // As the TUI sends it: the trailing space (and a pipe's last newline) go.
    assert_eq!(
        t.item(id)["text"].as_str().unwrap().len(),
        long.trim_end().len()
    );

    // A file's last newline and blank lines go; its first line's
    // indentation stays (a pipe kept the newline, the TUI did not).
    let p = t.path("message.txt");
    std::fs::write(&p, "\n    indented\nfrom a file\n\n").unwrap();
    let id = t.send(&["--in", "1h", "--file", p.to_str().unwrap()]);
    assert_eq!(t.item(id)["text"], "    indented\nfrom a file");
    // A search limit of 0 is refused, not "no message matches".
    let line = t.fails(&["search", "--limit", "0", "x"]);
    assert!(line.contains("--limit"), "{line}");
    let line = t.fails(&["send", "--file", "/dev/zero"]);
    assert!(line.contains("not a regular file"), "{line}");

    // A send that fails after reading stdin gives the text back (the pipe
    // cannot be read again by the script).
    let out = t.run_with_stdin(
        &["send", "--conv", "no such conversation", "-"],
        b"keep me\nsecond line",
    );
    assert!(!out.status.success());
    let err = &out.stderr;
    assert!(
        err.contains("the message read from stdin was not kept; here it is:\nkeep me\nsecond line"),
        "{err}"
    );
    assert!(err.contains("no conversation"), "{err}");
    // A coloured command's output piped in: the text without the
    // terminal's escape sequences (`cargo build 2>&1 | tock send -`).
    let out = t.run_with_stdin(
        &["send", "--in", "1h", "-"],
        b"\x1b[1m\x1b[32mCompiling\x1b[0m tock\x07\n\x1b[31merror\x1b[0m: oops",
    );
    assert!(out.status.success(), "{}", out.stderr);
    let id: i64 = out.stdout.trim().parse().unwrap();
    assert_eq!(t.item(id)["text"], "Compiling tock\nerror: oops");
    // `tock ask` with an empty stdin that is no terminal (cron,
    // `</dev/null`): the text is the argument's, and stdin is not blamed.
    let out = t.run_with_stdin(&["ask", "--conv", "no such conversation", "hi"], b"");
    assert!(!out.status.success());
    let err = &out.stderr;
    assert!(!err.contains("read from stdin"), "{err}");
    assert!(err.contains("no conversation"), "{err}");
}

#[test]
fn list_and_status_say_what_an_item_waits_for() {
    let server = MockServer::start();
    // The first request fails with a 503: its item backs off.
    server.push(Reply::Status(503, "busy".into()));
    server
        .respond_with(|_| Reply::slow("slow reply that takes a while", Duration::from_millis(400)));
    let t = Tock::with_openai(&server.base_url());
    t.write_config("[outbox]\nbackoff_base_secs = 30\n");
    let a = t.send(&["--new", "alpha", "first"]);
    let later = t.send(&["--conv", "alpha", "--in", "1h", "later"]);
    let mut d = t.spawn_daemon();
    server.wait_requests(1, Duration::from_secs(10));
    let item = wait_until(Duration::from_secs(10), "the back-off", || {
        let i = t.item(a);
        i["next_attempt_at"].is_string().then_some(i)
    });
    assert!(
        item["waiting"].as_str().unwrap().contains("back-off until"),
        "{item}"
    );
    let l = t.item(later);
    assert!(
        l["waiting"].as_str().unwrap().contains("scheduled for"),
        "{l}"
    );
    let st = t.ok(&["status"]);
    assert!(
        st.contains("“alpha”") && st.contains("back-off until"),
        "{st}"
    );
    let sj = t.json(&["status", "--json"]);
    assert_eq!(sj["conversations"][0]["item"], a);
    d.kill9();
}

#[test]
fn a_reply_cut_after_acceptance_is_generated_again_and_retry_and_regenerate_work() {
    let server = MockServer::start();
    server.push(Reply::Cut {
        chunks: vec!["half ".into(), "an ".into()],
        gap: Duration::from_millis(5),
    });
    server.respond_with(|_| Reply::text("a whole answer END"));
    let t = Tock::with_openai(&server.base_url());
    t.write_config("[outbox]\nbackoff_base_secs = 1\n");
    let id = t.send(&["--new", "cut", "question"]);
    let mut d = t.spawn_daemon();
    let shown = wait_until(Duration::from_secs(20), "the reply generated again", || {
        let v = t.show("cut");
        let m = v["messages"].as_array().cloned().unwrap_or_default();
        (m.len() == 3 && m[2]["status"] == "complete").then_some(v)
    });
    let m = shown["messages"].as_array().unwrap();
    assert_eq!(m[1]["status"], "interrupted");
    assert!(m[1]["error"].as_str().unwrap().contains("interrupted"));
    assert_eq!(t.item(id)["status"], "sent");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(
        reqs[1]
            .messages()
            .iter()
            .filter(|(r, x)| r == "user" && x == "question")
            .count(),
        1
    );
    // `regenerate` asks for another answer; the old one is superseded.
    let out = t.ok(&["regenerate", "cut"]);
    assert!(out.trim().parse::<i64>().is_ok(), "{out}");
    wait_until(Duration::from_secs(20), "another answer", || {
        (server.count() == 3).then_some(())
    });
    // Answered items are not retried.
    wait_until(Duration::from_secs(20), "the regeneration finished", || {
        let v = t.show("cut");
        let m = v["messages"].as_array().cloned().unwrap_or_default();
        (m.last().is_some_and(|x| x["status"] == "complete") && m.len() == 4).then_some(())
    });
    let line = t.fails(&["retry", &id.to_string()]);
    assert!(line.contains("answered"), "{line}");
    d.signal(libc::SIGTERM);
    assert!(d.wait_timeout(Duration::from_secs(5)).is_some());
}

/// A request the daemon sent whose server has not answered yet (not even
/// its status line) is stopped from another process as Esc in the TUI
/// stops it: `tock stop` said no reply was streaming, and a shell had to
/// wait out the stream timeout.
#[test]
fn a_request_waiting_for_its_first_byte_is_stopped_from_another_process() {
    let server = MockServer::start();
    server.push(Reply::Silent(Duration::from_secs(60)));
    let t = Tock::with_openai(&server.base_url());
    let id = t.send(&["--new", "hang", "are you there?"]);
    let mut d = t.spawn_daemon();
    wait_until(Duration::from_secs(20), "the request sent", || {
        (server.count() == 1 && t.item(id)["status"] == "sending").then_some(())
    });
    // `tock status` names it (it went unnamed: no reply row yet).
    let status = t.ok(&["status"]);
    assert!(
        status.contains(&format!("item #{id} was sent"))
            && status.contains("its server has not answered yet (`tock stop"),
        "{status}"
    );
    let line = t.ok(&["stop", "hang"]);
    assert!(line.contains("asked the tock"), "{line}");
    wait_until(Duration::from_secs(10), "the request stopped", || {
        (t.item(id)["status"] != "sending").then_some(())
    });
    // A deliberate stop is no failure: the message waits, paused, in its
    // conversation, and goes when the queue is resumed.
    let item = t.item(id);
    assert_eq!(item["status"], "pending", "{item}");
    assert!(
        item["waiting"]
            .as_str()
            .unwrap_or("")
            .starts_with("queue paused"),
        "{item}"
    );
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(server.count(), 1, "not sent again");
    server.push(Reply::text("here"));
    t.ok(&["resume", "--conv", "hang"]);
    wait_until(Duration::from_secs(20), "sent once resumed", || {
        (t.item(id)["status"] == "sent").then_some(())
    });
    assert_eq!(server.count(), 2);
    d.signal(libc::SIGTERM);
    assert!(d.wait_timeout(Duration::from_secs(5)).is_some());
}

/// A daemon streaming a long reply (400 words, 50 ms apart) in
/// conversation "long", and answering "ok END" to anything after it.
fn daemon_streaming_a_long_reply() -> (MockServer, Tock, support::Proc) {
    let server = MockServer::start();
    server.push(Reply::slow(&"word ".repeat(400), Duration::from_millis(50)));
    server.respond_with(|_| Reply::text("ok END"));
    let t = Tock::with_openai(&server.base_url());
    t.send(&["--new", "long", "tell me a long story"]);
    let d = t.spawn_daemon();
    // Streaming, and some of it saved (a stop keeps what was saved).
    wait_until(Duration::from_secs(20), "the reply streaming", || {
        let v = t.show("long");
        let m = v["messages"].as_array().cloned().unwrap_or_default();
        (m.len() == 2
            && m[1]["status"] == "streaming"
            && m[1]["content"].as_str().is_some_and(|c| !c.is_empty()))
        .then_some(())
    });
    (server, t, d)
}

/// A reply the daemon streams is stopped from another process (`tock
/// stop`, as Esc in a TUI does): the daemon stops it as its own Esc would,
/// the partial is kept, and what was queued behind it waits (it could not be
/// stopped from anywhere but the process streaming it).
#[test]
fn a_reply_streaming_in_the_daemon_is_stopped_from_another_process() {
    let (server, t, mut d) = daemon_streaming_a_long_reply();
    let behind = t.send(&["--conv", "long", "and then?"]);
    let line = t.ok(&["stop", "long"]);
    assert!(line.contains("asked the tock streaming"), "{line}");
    assert!(
        line.contains("its queue is paused"),
        "something waits: {line}"
    );
    let stopped = wait_until(Duration::from_secs(10), "the reply stopped", || {
        let v = t.show("long");
        let m = v["messages"].as_array().cloned().unwrap_or_default();
        (m.len() == 2 && m[1]["status"] == "interrupted").then_some(m)
    });
    assert!(
        stopped[1]["error"]
            .as_str()
            .unwrap_or("")
            .contains("stopped by you"),
        "{stopped:?}"
    );
    let partial = stopped[1]["content"].as_str().unwrap_or("").len();
    assert!(
        partial > 0 && partial < 2000,
        "a partial reply is kept: {partial}"
    );
    // What was queued behind it waits; nothing more was asked of the model.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(t.item(behind)["status"], "pending");
    assert_eq!(server.count(), 1);
    // Nothing streams now: asked again, it says so.
    let line = t.fails(&["stop", "long"]);
    assert!(line.contains("no reply is streaming"), "{line}");
    // The paused queue says how to go on, and `tock resume --conv` does.
    let list = t.ok(&["list"]);
    assert!(list.contains("tock resume --conv"), "{list}");
    let line = t.ok(&["resume", "--conv", "long"]);
    assert!(line.contains("resumed the queue of “long”"), "{line}");
    wait_until(Duration::from_secs(10), "the item behind sent", || {
        (t.item(behind)["status"] == "sent" && server.count() == 2).then_some(())
    });
    let line = t.fails(&["resume", "--conv", "long"]);
    assert!(line.contains("is not paused"), "{line}");
    let line = t.fails(&["resume"]);
    assert!(line.contains("required"), "{line}");
    d.signal(libc::SIGTERM);
    assert!(d.wait_timeout(Duration::from_secs(5)).is_some());
}

/// A reply on its way has no item left in the outbox (its message was
/// sent), so `status` and `list` said nothing of it: they now name it, and
/// once its tock is killed they say it was cut off and will be asked again.
#[test]
fn status_and_list_name_a_reply_streaming_and_one_cut_off() {
    let (_server, t, mut d) = daemon_streaming_a_long_reply();
    let status = t.ok(&["status"]);
    assert!(
        status.contains("“long”: a reply is streaming since")
            && status.contains("`tock stop 1` stops it"),
        "{status}"
    );
    let list = t.ok(&["list"]);
    assert!(
        list.contains("nothing scheduled or pending")
            && list.contains("“long”: a reply is streaming since"),
        "{list}"
    );
    let json = t.json(&["status", "--json"]);
    let replies = json["replies_streaming"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(replies.len(), 1, "{json:#}");
    assert_eq!(replies[0]["conversation_id"], 1);
    assert_eq!(replies[0]["live"], true);
    let shown = t.ok(&["show", "long"]);
    assert!(shown.contains("## assistant (streaming)"), "{shown}");
    d.kill9();
    let status = t.ok(&["status"]);
    assert!(
        status.contains("a reply was cut off when its tock stopped"),
        "{status}"
    );
    // `show` says so too, not "streaming".
    let shown = t.ok(&["show", "long"]);
    assert!(
        shown.contains("## assistant (cut off when its tock stopped; the next tock or tock daemon asks for it again)"),
        "{shown}"
    );
    let v = t.show("long");
    let last = v["messages"]
        .as_array()
        .and_then(|m| m.last().cloned())
        .unwrap_or_default();
    assert_eq!(
        (last["status"].as_str(), last["cut_off"].as_bool()),
        (Some("streaming"), Some(true))
    );
    // Nothing streams it to stop or stop for a regeneration: both say so,
    // and neither pauses the queue nor asks for it a second time.
    for cmd in ["stop", "regenerate"] {
        let line = t.fails(&[cmd, "long"]);
        assert!(
            line.contains("was cut off when its tock stopped; no tock runs now"),
            "{cmd}: {line}"
        );
    }
    let store = tock::store::Store::open_read_only(&t.db).unwrap();
    let c = store.find_conversation("long").unwrap().unwrap();
    assert!(c.queue_paused_at.is_none());
    // The next daemon asks for it again; then nothing is on its way.
    let mut d = t.spawn_daemon();
    wait_until(Duration::from_secs(20), "the reply asked for again", || {
        let v = t.show("long");
        let m = v["messages"].as_array().cloned().unwrap_or_default();
        m.last()
            .is_some_and(|x| x["status"] == "complete")
            .then_some(())
    });
    assert!(!t.ok(&["status"]).contains("a reply"));
    d.signal(libc::SIGTERM);
    assert!(d.wait_timeout(Duration::from_secs(5)).is_some());
}

/// Item `id` taken and its reply begun by a tock that then died (no tock
/// runs): the store, the reply and the conversation.
fn accepted_by_a_dead_tock(t: &Tock, id: i64) -> (tock::store::Store, i64, i64) {
    let store = tock::store::Store::open(&t.db).unwrap();
    let now = chrono::Utc::now().timestamp_millis();
    assert!(store.claim(id, "dead", now).unwrap());
    let item = store.item(id).unwrap().unwrap();
    let reply = store.accept(&item, "dead", "m", now).unwrap().unwrap();
    (store, reply, item.conversation_id.unwrap())
}

/// With no tock running, what waits behind a reply a dead tock left
/// streaming is not "behind the reply being generated": nothing generates
/// it until a tock starts again.
#[test]
fn what_waits_behind_a_cut_off_reply_says_so_when_no_tock_runs() {
    let t = Tock::new();
    let first = t.send(&["--new", "cut", "question"]);
    {
        let (store, reply, _) = accepted_by_a_dead_tock(&t, first);
        store.update_streaming(reply, "partial").unwrap();
    }
    let behind = t.send(&["--conv", "cut", "behind it"]);
    let want = "conversation busy: behind a reply cut off when its tock stopped \
                (the next tock or tock daemon asks for it again)";
    assert_eq!(t.item(behind)["waiting"], want);
    let list = t.ok(&["list"]);
    assert!(list.contains(want), "{list}");
    assert!(!list.contains("being generated"), "{list}");
    let status = t.ok(&["status"]);
    assert!(status.contains(want), "{status}");
}

/// What waits behind a tool call running in its conversation says so: it
/// read "ready: sent as soon as a dispatcher runs". With no tock running
/// (its tock was killed during the call), that the call was cut off.
#[test]
fn what_waits_behind_a_tool_call_says_so() {
    let t = Tock::new();
    let first = t.send(&["--new", "tools", "read the file"]);
    {
        let (store, reply, c) = accepted_by_a_dead_tock(&t, first);
        let now = chrono::Utc::now().timestamp_millis();
        store
            .finish_message(
                reply,
                "",
                tock::store::MessageStatus::Complete,
                None,
                None,
                now,
            )
            .unwrap();
        store
            .start_tool_run(c, reply, "call_1", "files__read", "dead", now)
            .unwrap();
    }
    let behind = t.send(&["--conv", "tools", "and then this"]);
    let want = "conversation busy: behind the tool call files__read, cut off when its tock \
                stopped (the next tock or tock daemon goes on from there)";
    assert_eq!(t.item(behind)["waiting"], want);
    assert!(t.ok(&["list"]).contains(want));
}

#[test]
fn database_log_and_data_dir_are_private_whatever_the_umask() {
    let mut t = Tock::new();
    // The default data dir (no --db / TOCK_DB) and the default log dir.
    t.env.retain(|(k, _)| k != "TOCK_DB" && k != "TOCK_LOG_DIR");
    let home = t.dir.path().join("home");
    let mut c = t.command(&[
        "send",
        "--new",
        "p",
        "--in",
        "1h",
        "private medical question",
    ]);
    // SAFETY: in the child, before exec: only sets its file creation mask.
    unsafe {
        use std::os::unix::process::CommandExt;
        c.pre_exec(|| {
            libc::umask(0o022);
            Ok(())
        });
    }
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let data = home.join(".local/share/tock");
    let db = data.join("tock.db");
    assert_eq!(mode(&data), 0o700);
    assert_eq!(mode(&db), 0o600);
    for suffix in ["-wal", "-shm"] {
        let p = std::path::PathBuf::from(format!("{}{suffix}", db.display()));
        if p.exists() {
            assert_eq!(mode(&p), 0o600, "{suffix}");
        }
    }
    let log = home.join(".local/state/tock/tock.log");
    assert_eq!(mode(log.parent().unwrap()), 0o700);
    assert_eq!(mode(&log), 0o600);
    // Files made wider by hand are tightened at the next start, with a notice.
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    // The log too: it was tightened without a word.
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = t.run(&["list"]);
    assert!(o.status.success());
    assert_eq!(mode(&db), 0o600);
    assert_eq!(mode(&data), 0o700);
    assert_eq!(mode(&log), 0o600);
    let notices: Vec<&str> = o
        .stderr
        .lines()
        .filter(|l| l.contains("readable by others"))
        .collect();
    assert_eq!(notices.len(), 3, "{:?}", o.stderr);
    assert!(
        notices.iter().any(|n| n.contains("tock.log")),
        "{notices:?}"
    );
}

#[test]
fn a_log_file_next_to_the_database_does_not_feed_back() {
    let mut t = Tock::new();
    t.set_env("TOCK_LOG", "trace");
    t.set_env("TOCK_MODEL", "echo");
    let dir = t.db.parent().unwrap().to_path_buf();
    std::fs::create_dir_all(&dir).unwrap();
    t.ok(&["send", "--new", "x", "--in", "1h", "hello"]);
    let err = dir.join("daemon.err");
    let mut c = t.command(&["daemon"]);
    c.stderr(std::fs::File::create(&err).unwrap())
        .stdout(Stdio::null());
    let mut child = c.spawn().unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    // SAFETY: our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let _ = child.wait();
    let text = std::fs::read_to_string(&err).unwrap_or_default();
    // Idle for 2.5 s: a few dozen lines, not a feedback loop of thousands.
    assert!(
        text.lines().count() < 300,
        "{} lines, e.g. {:?}",
        text.lines().count(),
        text.lines().rev().take(3).collect::<Vec<_>>()
    );
    assert!(!text.contains('\u{1b}'), "colour codes in a file");
}

#[test]
fn a_reader_that_goes_away_ends_the_command_quietly() {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    let t = Tock::new();
    // Enough output to fill a pipe: a long scheduled message, shown whole.
    let long = "a line of text to show; ".repeat(4_000);
    t.send(&["--new", "long", "--in", "1h", &long]);
    for _ in 0..2 {
        t.send(&["--conv", "long", "--in", "1h", &long]);
    }
    let mut child = t
        .command(&["list", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    out.read_exact(&mut first).unwrap();
    drop(out);
    let done = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(
        !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
        "{stderr}"
    );
    assert!(
        done.status.success() || done.status.signal() == Some(libc::SIGPIPE),
        "{:?}",
        done.status
    );
}

/// A read-only command pointed at a database that is not there (a mistyped
/// --db or TOCK_DB) says so, instead of reading as if the items were gone.
#[test]
fn a_read_only_command_on_a_missing_database_says_it_was_not_there() {
    let t = Tock::new();
    let first = t.run(&["list"]);
    assert!(first.status.success(), "{}", first.stderr);
    assert!(
        first.stderr.contains("there was no database at")
            && first.stderr.contains(&t.db.display().to_string()),
        "{}",
        first.stderr
    );
    assert_eq!(first.stderr.lines().count(), 1, "{}", first.stderr);
    // Once it exists, nothing more is said.
    let again = t.run(&["list"]);
    assert!(!again.stderr.contains("no database"), "{}", again.stderr);
    // A command that writes makes the database without a word about it.
    let t = Tock::new();
    let sent = t.run(&["send", "--in", "1h", "x"]);
    assert!(!sent.stderr.contains("no database"), "{}", sent.stderr);
    // The path is said inert: an escape sequence in it does not reach the terminal.
    let hostile = t.path("\x1b]0;PWNED\x07");
    let db = hostile.join("x.db");
    let out = t.run(&["--db", db.to_str().unwrap(), "list"]);
    assert!(
        out.stderr.contains("there was no database at"),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains('\x1b') && !out.stderr.contains('\x07'),
        "{:?}",
        out.stderr
    );
}

/// What a stop holds waits for the user: `status` does not call it next,
/// and `list` says it is paused.
#[test]
fn status_does_not_call_an_item_a_stop_holds_next() {
    let t = Tock::new();
    let held = t.send(&["--new", "held", "queued before the stop"]);
    let conv = t.item(held)["conversation_id"].as_i64().unwrap();
    let later = t.send(&["--new", "other", "--in", "1h", "later"]);
    let store = tock::store::Store::open(&t.db).unwrap();
    let now = chrono::Utc::now().timestamp_millis();
    store.set_queue_paused(conv, Some(now + 1_000)).unwrap();
    drop(store);
    assert_eq!(t.item(held)["state"], "paused");
    let st = t.ok(&["status"]);
    assert!(st.contains(&format!("next: #{later} ")), "{st}");
    let sj = t.json(&["status", "--json"]);
    assert_eq!(sj["next"]["id"], later, "{sj}");
}

/// `tock list` keeps its columns whatever the DUE cells say: an overdue
/// item's "(1m 12s ago)" is wider than "(in 5m)", and "recurring" is wider
/// than the other kinds (both pushed the rest of their row out of line).
#[test]
fn the_list_table_stays_in_columns() {
    let t = Tock::new();
    t.ok(&["send", "--new", "Columns", "--in", "5m", "soon"]);
    t.ok(&[
        "send",
        "--conv",
        "Columns",
        "--every",
        "day at 9am",
        "daily",
    ]);
    let store = tock::store::Store::open(&t.db).unwrap();
    let conv = store.conversations().unwrap()[0].id;
    let now = support::now_ms();
    store
        .enqueue(
            &tock::store::NewItem::message(conv, "overdue", Some(now - 72_000)),
            now,
        )
        .unwrap();
    let out = t.ok(&["list"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert!(out.contains("ago)"), "{out}");
    let kind_at = lines[0].find("KIND").unwrap();
    for l in &lines[1..] {
        let at = [" message ", " recurring "]
            .iter()
            .filter_map(|k| l.find(k))
            .min()
            .unwrap_or(0)
            + 1;
        assert_eq!(at, kind_at, "{out}");
        let state = lines[0].find("STATE").unwrap();
        let b = l.as_bytes();
        assert!(b[state - 1] == b' ' && b[state] != b' ', "{out}");
    }
}

/// An item sent with files names them in `tock list` and carries them in
/// `--json` (the text alone hid them).
#[test]
fn list_names_the_files_an_item_goes_with() {
    let t = Tock::new();
    let id = t.send(&["--new", "files", "--in", "1h", "read the attached log"]);
    rusqlite::Connection::open(&t.db)
        .unwrap()
        .execute(
            "UPDATE outbox SET parts_json = ?2 WHERE id = ?1",
            rusqlite::params![
                id,
                r#"[{"type":"text","name":"paste.txt","content":"line 1"}]"#
            ],
        )
        .unwrap();
    let table = t.ok(&["list"]);
    assert!(
        table.contains("📎 paste.txt · read the attached log"),
        "{table}"
    );
    let j = t.item(id);
    assert_eq!(j["attachments"][0]["name"], "paste.txt", "{j:#}");
}

/// Dates read alike in every command: `list` wrote "Tue 05 Jan" where
/// `reschedule` (and the TUI) write "Tue 5 Jan".
#[test]
fn list_writes_dates_as_the_other_commands_do() {
    let t = Tock::new();
    let id = t.send(&[
        "--new",
        "dates",
        "--at",
        "2027-01-05 09:00",
        "in the new year",
    ]);
    let table = t.ok(&["list"]);
    assert!(table.contains("Tue 5 Jan 2027 09:00"), "{table}");
    let line = t.ok(&["reschedule", &id.to_string(), "2027-01-06 09:00"]);
    assert!(line.contains("Wed 6 Jan 2027 09:00"), "{line}");
}

/// One item reads the same in `tock list`, `tock status` and its
/// `waiting` line: its day and time to the minute, and the same countdown
/// (the whole minutes left, as the TUI counts down). `status` said
/// "in 1h 30m" and "17:00:00" of the item `list` showed "in 1h 29m".
#[test]
fn a_scheduled_item_reads_the_same_in_list_and_status() {
    let t = Tock::new();
    let id = t.send(&["--new", "soon", "--in", "90m", "stretch"]);
    let list = t.ok(&["list"]);
    let status = t.ok(&["status"]);
    let waiting = t.item(id)["waiting"].as_str().unwrap().to_string();
    let due = chrono::DateTime::parse_from_rfc3339(t.item(id)["due_at"].as_str().unwrap())
        .unwrap()
        .with_timezone(&chrono::Local);
    let this_year = due.format("%Y").to_string() == chrono::Local::now().format("%Y").to_string();
    let day = if this_year {
        due.format("%a %-d %b %H:%M").to_string()
    } else {
        due.format("%a %-d %b %Y %H:%M").to_string()
    };
    assert_eq!(waiting, format!("scheduled for {day} (in 1h 29m)"));
    assert!(list.contains(&format!("{day} (in 1h 29m)")), "{list}");
    assert!(!status.contains("1h 30m"), "{status}");
    assert!(status.contains("(in 1h 29m)"), "{status}");
}

/// While a cut reply waits out its back-off, what is queued behind it says
/// so, naming it (it said "behind the reply being generated there", and
/// nothing was), and `tock status` gives its retry time as next, not "asap".
#[test]
fn a_reply_waiting_to_be_generated_again_holds_what_follows_by_name() {
    let server = MockServer::start();
    server.push(Reply::Cut {
        chunks: vec!["half ".into(), "an ".into()],
        gap: Duration::from_millis(5),
    });
    server.respond_with(|_| Reply::text("a whole answer"));
    let t = Tock::with_openai(&server.base_url());
    t.write_config("[outbox]\nbackoff_base_secs = 600\n");
    let a = t.send(&["--new", "cut", "question"]);
    let mut d = t.spawn_daemon();
    let ia = wait_until(Duration::from_secs(20), "the reply's retry", || {
        let it = t.item(a);
        (it["status"] == "pending" && it["next_attempt_at"].is_string()).then_some(it)
    });
    assert!(
        ia["waiting"]
            .as_str()
            .unwrap()
            .starts_with("its reply is generated again at"),
        "{ia}"
    );
    let b = t.send(&["--conv", "cut", "and then"]);
    let waiting = t.item(b)["waiting"].as_str().unwrap().to_string();
    assert_eq!(waiting, format!("conversation busy: behind item #{a}"));
    let status = t.ok(&["status"]);
    assert!(
        status.contains(&format!("next: #{a} ")) && !status.contains("asap"),
        "{status}"
    );
    assert!(status.contains("(in 9m"), "{status}");
    assert!(
        status.contains(&format!("conversation busy: behind item #{a}")),
        "{status}"
    );
    d.kill9();
}

/// A key variable set but empty (`export KEY=` with the value missing) is
/// told as such, as an unset one is: it was sent as an empty key.
#[test]
fn a_key_variable_set_but_empty_is_told() {
    let server = MockServer::start();
    let mut t = Tock::new();
    t.set_env("EMPTY_KEY", "");
    t.write_config(&format!(
        "default_model = \"m\"\n[models.m]\nprovider = \"openai\"\nbase_url = \"{}\"\napi_key_env = \"EMPTY_KEY\"\n",
        server.base_url()
    ));
    t.ok(&["conversations"]);
    let e = t.fails(&["models"]);
    assert!(
        e.contains("EMPTY_KEY is set but empty (api_key_env of m)"),
        "{e}"
    );
    assert_eq!(server.count(), 0);
}

/// `tock status` names the conversations with items waiting up to twenty
/// and counts the rest (210 queued sends gave 210 lines).
#[test]
fn status_counts_a_long_tail_of_waiting_conversations() {
    let t = Tock::new();
    for i in 0..23 {
        t.send(&["--new", &format!("conv {i}"), "hello"]);
    }
    let out = t.ok(&["status"]);
    let named = out
        .lines()
        .filter(|l| l.starts_with("conversation #"))
        .count();
    assert_eq!(named, 20, "{out}");
    assert!(
        out.contains("… and 3 more conversations with items waiting (tock list shows every item)"),
        "{out}"
    );
}

/// `tock --model M send --new T` makes T the model's conversation, as
/// `/model` does: a later `tock send --conv T` went to the default model.
#[test]
fn a_conversation_made_by_send_with_a_model_is_that_models() {
    let t = Tock::new();
    let id = t.run(&[
        "--model", "echo", "send", "--new", "mine", "--in", "1h", "x",
    ]);
    assert!(id.status.success(), "{}", id.stderr);
    let model_of = |title: &str| {
        let s = tock::store::Store::open(&t.db).unwrap();
        s.find_conversation(title).unwrap().unwrap().model
    };
    assert_eq!(model_of("mine").as_deref(), Some("echo"));
    // Into an existing conversation, --model stays the one message's.
    t.ok(&["send", "--new", "theirs", "--in", "1h", "y"]);
    let o = t.run(&[
        "--model", "echo", "send", "--conv", "theirs", "--in", "1h", "z",
    ]);
    assert!(o.status.success(), "{}", o.stderr);
    assert_eq!(model_of("theirs"), None);
}
