//! `tock ask`: the real binary sends one message now and prints the reply on
//! stdout as it streams, from a local OpenAI-compatible server; on its own
//! (an engine for that conversation only) or following a running daemon.

mod support;

use std::time::Duration;

use serde_json::json;
use support::{MockServer, Reply, Tock, wait_until};

/// The reply streamed in pieces, an escape sequence and a CRLF among them.
fn hostile_reply() -> Reply {
    Reply::Stream {
        chunks: vec![
            "Hello ".into(),
            "\x1b]52;c;QUJD\x07".into(),
            "world\r".into(),
            "\nbye".into(),
        ],
        gap: Duration::from_millis(20),
        tool_calls: Vec::new(),
    }
}

const HOSTILE_PRINTED: &str = "Hello ␛]52;c;QUJD␇world\nbye\n";

/// The reply saved so far in conversation `title`, once there is one
/// (the ask may not have made the conversation yet).
fn reply_so_far(t: &Tock, title: &str) -> Option<String> {
    let out = t.run(&["show", title, "--json"]);
    let shown: serde_json::Value = serde_json::from_str(&out.stdout).ok()?;
    Some(
        shown["messages"].as_array()?.get(1)?["content"]
            .as_str()?
            .to_string(),
    )
}

fn status_of(t: &Tock, id: i64) -> String {
    t.item(id)["status"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn ask_prints_the_reply_made_safe_keeps_both_and_sends_nothing_else() {
    let server = MockServer::start();
    server.push(hostile_reply());
    let t = Tock::with_openai(&server.base_url());
    // Due, in another conversation, with no tock running: `ask` leaves it
    // to a tock that runs for good.
    let other = t.send(&["--new", "Other", "not this one"]);

    let out = t.run(&["ask", "--new", "Q", "what is up?"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, HOSTILE_PRINTED, "{out:?}");
    assert!(!out.stderr.contains("tock:"), "{out:?}");

    let requests = server.requests();
    assert_eq!(requests.len(), 1, "only the question was sent");
    assert_eq!(requests[0].last_user_text().as_deref(), Some("what is up?"));
    assert_eq!(status_of(&t, other), "pending");
    // Both are in the conversation, as after any send; the raw text is kept.
    let shown = t.show("Q");
    let messages = shown["messages"].as_array().cloned().unwrap_or_default();
    let roles: Vec<&str> = messages.iter().filter_map(|m| m["role"].as_str()).collect();
    assert_eq!(roles, ["user", "assistant"], "{shown:#}");
    assert_eq!(messages[1]["status"], "complete");
    assert_eq!(
        messages[1]["content"],
        "Hello \x1b]52;c;QUJD\x07world\r\nbye"
    );
    // The lease was let go: a daemon started now sends the other message.
    let _daemon = t.spawn_daemon();
    wait_until(Duration::from_secs(20), "the other message sent", || {
        (status_of(&t, other) == "sent").then_some(())
    });
}

#[test]
fn ask_follows_the_reply_a_running_daemon_sends() {
    let server = MockServer::start();
    server.push(hostile_reply());
    let t = Tock::with_openai(&server.base_url());
    let daemon = t.spawn_daemon();
    wait_until(Duration::from_secs(20), "the daemon dispatches", || {
        t.ok(&["status"])
            .contains(&format!("dispatcher: pid {}", daemon.pid()))
            .then_some(())
    });
    let out = t.run(&["ask", "--new", "Via daemon", "through it"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, HOSTILE_PRINTED, "{out:?}");
    assert_eq!(server.count(), 1);
    // The daemon kept the lease all along.
    assert!(
        t.ok(&["status"])
            .contains(&format!("dispatcher: pid {}", daemon.pid()))
    );
}

#[test]
fn a_failed_message_gives_the_servers_reason_and_exit_1_and_stays_listed() {
    let server = MockServer::start();
    server.push(Reply::Status(401, "Incorrect API key provided".into()));
    let t = Tock::with_openai(&server.base_url());
    let out = t.run(&["ask", "--new", "Bad key", "hello"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(out.stdout, "");
    let line = out.stderr.trim();
    assert_eq!(line.lines().count(), 1, "{out:?}");
    assert!(
        line.starts_with("tock: not answered: ")
            && line.contains("401")
            && line.contains("Incorrect API key"),
        "{line}"
    );
    let items = t.items();
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0]["status"], "failed");
}

#[test]
fn ctrl_c_cancels_a_message_not_sent_yet() {
    let server = MockServer::start();
    server.respond_with(|_| Reply::Status(500, "overloaded".into()));
    let t = Tock::with_openai(&server.base_url());
    t.write_config("[outbox]\nmax_attempts = 5\nbackoff_base_secs = 60\n");
    let mut ask = t.spawn(&["ask", "--new", "Later", "are you there?"], "ask");
    wait_until(Duration::from_secs(20), "the back-off said", || {
        ask.stderr().contains("trying again in").then_some(())
    });
    assert!(ask.stderr().contains("overloaded"), "{}", ask.stderr());
    ask.signal(libc::SIGINT);
    let st = ask
        .wait_timeout(Duration::from_secs(20))
        .expect("ask ends on Ctrl+C");
    assert_eq!(st.code(), Some(130), "{}", ask.stderr());
    assert!(ask.stderr().contains("canceled item"), "{}", ask.stderr());
    let items = t.items();
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0]["status"], "canceled", "{items:?}");
    assert_eq!(server.count(), 1, "not tried again");
}

#[test]
fn ctrl_c_stops_a_streaming_reply_and_keeps_what_came() {
    let server = MockServer::start();
    server.push(Reply::chunks("piece", 200, Duration::from_millis(50)));
    let t = Tock::with_openai(&server.base_url());
    let mut ask = t.spawn(&["ask", "--new", "Long", "tell me a lot"], "ask");
    wait_until(Duration::from_secs(20), "a few pieces saved", || {
        reply_so_far(&t, "Long")?.contains("piece-3 ").then_some(())
    });
    ask.signal(libc::SIGINT);
    let st = ask
        .wait_timeout(Duration::from_secs(20))
        .expect("ask ends on Ctrl+C");
    assert_eq!(st.code(), Some(130), "{}", ask.stderr());
    assert!(
        ask.stderr().contains("reply so far is kept"),
        "{}",
        ask.stderr()
    );
    // Into a file, what came is written when it ends.
    let printed = std::fs::read_to_string(&ask.out).unwrap_or_default();
    assert!(printed.starts_with("piece-0 piece-1 "), "{printed:?}");
    assert!(
        !printed.contains("END") && printed.ends_with('\n'),
        "{printed:?}"
    );
    let shown = t.show("Long");
    let reply = shown["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "assistant").cloned())
        .expect("the reply is kept");
    assert_eq!(reply["status"], "interrupted", "{shown:#}");
    let kept = reply["content"].as_str().unwrap_or_default();
    assert!(
        kept.starts_with("piece-0 piece-1 piece-2 piece-3 "),
        "{kept:?}"
    );
    // It is not generated again behind the user's back.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(server.count(), 1);
}

#[test]
fn ask_waits_for_an_approval_answered_elsewhere_then_prints_the_answer() {
    let server = MockServer::start();
    server.respond_with(|r| {
        if r.last_role().as_deref() == Some("tool") {
            return Reply::text("Done: I will remind you.");
        }
        Reply::text("Let me set that up.").with_tool_call(
            "schedule_task",
            json!({"instruction": "stretch", "delay_secs": 3600}),
        )
    });
    let t = Tock::with_openai(&server.base_url());
    let mut ask = t.spawn(&["ask", "--new", "Plans", "remind me to stretch"], "ask");
    let id: i64 = wait_until(Duration::from_secs(20), "the approval asked for", || {
        let err = ask.stderr();
        let at = err.find("(tock approve ")?;
        err[at + "(tock approve ".len()..]
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    });
    assert!(
        ask.stderr().contains("the model calls schedule_task"),
        "{}",
        ask.stderr()
    );
    assert!(ask.running(), "it waits for the answer");
    t.ok(&["approve", &id.to_string()]);
    let st = ask
        .wait_timeout(Duration::from_secs(20))
        .expect("ask ends once answered");
    assert!(st.success(), "{}", ask.stderr());
    let printed = std::fs::read_to_string(&ask.out).unwrap_or_default();
    assert_eq!(printed, "Let me set that up.\nDone: I will remind you.\n");
    assert_eq!(server.count(), 2);
    // No tock runs to send the task when it is due: said.
    assert!(
        ask.stderr()
            .contains("the task it scheduled goes at its time only while a tock runs"),
        "{}",
        ask.stderr()
    );
}

#[test]
fn ask_reads_the_message_from_stdin_and_refuses_an_empty_one() {
    let mut t = Tock::new();
    t.set_env("TOCK_ECHO_DELAY_MS", "0");
    let out = t.run_with_stdin(&["ask", "--model", "echo", "-"], b"piped question\n");
    assert!(out.status.success(), "{out:?}");
    assert!(out.stdout.contains("> piped question"), "{}", out.stdout);
    assert!(out.stdout.ends_with('\n'));

    let empty = t.run(&["ask", "--model", "echo", "  "]);
    assert_eq!(empty.status.code(), Some(1));
    assert_eq!(empty.stderr.trim(), "tock: the message is empty");
}

#[test]
fn ctrl_c_before_the_server_answers_cancels_the_message_rather_than_failing_it() {
    let server = MockServer::start();
    server.push(Reply::Silent(Duration::from_secs(60)));
    let t = Tock::with_openai(&server.base_url());
    let mut ask = t.spawn(&["ask", "--new", "Silent", "hello?"], "ask");
    server.wait_requests(1, Duration::from_secs(20));
    wait_until(Duration::from_secs(20), "the message being sent", || {
        (t.items().first()?["status"] == "sending").then_some(())
    });
    ask.signal(libc::SIGINT);
    let st = ask
        .wait_timeout(Duration::from_secs(20))
        .expect("ask ends on Ctrl+C");
    assert_eq!(st.code(), Some(130), "{}", ask.stderr());
    assert!(
        ask.stderr().contains(
            "canceled item 1; stopped before the model answered (its conversation, empty, is gone)"
        ),
        "{}",
        ask.stderr()
    );
    let items = t.items();
    assert_eq!(items[0]["status"], "canceled", "{items:?}");
    // No failure, and the conversation made for it, empty, is gone.
    assert!(!ask.stderr().contains("failed"), "{}", ask.stderr());
    assert!(
        t.ok(&["conversations"])
            .trim()
            .lines()
            .all(|l| !l.contains("Silent"))
    );
}

/// Several `tock ask` at once (`xargs -P`, two scripts): each message is
/// sent and each answered, though one process holds the outbox at a time
/// (a second waited for ever, silently, on the first, which sends only its own).
#[test]
fn several_asks_at_once_are_each_answered() {
    let server = MockServer::start();
    server.respond_with(|r| {
        let q = r.last_user_text().unwrap_or_default();
        Reply::slow(&format!("answer to {q}"), Duration::from_millis(150))
    });
    let t = Tock::with_openai(&server.base_url());
    let mut asks: Vec<_> = (1..=3)
        .map(|i| {
            t.spawn(
                &["ask", "--new", &format!("Q{i}"), &format!("question {i}")],
                &format!("ask{i}"),
            )
        })
        .collect();
    for (i, ask) in asks.iter_mut().enumerate() {
        let st = ask
            .wait_timeout(Duration::from_secs(30))
            .unwrap_or_else(|| panic!("ask {} never ended: {}", i + 1, ask.stderr()));
        assert!(st.success(), "{}", ask.stderr());
        let printed = std::fs::read_to_string(&ask.out).unwrap_or_default();
        assert_eq!(printed, format!("answer to question {}\n", i + 1));
    }
    assert_eq!(server.count(), 3);
}

/// A stream that breaks and is asked for again leaves one answer in a
/// file or pipe: it held the piece, a newline, then the whole.
#[test]
fn a_reply_cut_and_asked_again_is_written_once() {
    let server = MockServer::start();
    server.push(Reply::Cut {
        chunks: vec!["The first ".into(), "try".into()],
        gap: Duration::from_millis(20),
    });
    server.push(Reply::text("The whole answer."));
    let t = Tock::with_openai(&server.base_url());
    t.write_config("[outbox]\nbackoff_base_secs = 1\n");
    let out = t.run(&["ask", "--new", "Cut", "go"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, "The whole answer.\n");
    assert!(out.stderr.contains("trying again"), "{out:?}");
    assert_eq!(server.count(), 2);
}

/// The daemon a `tock ask` follows stops mid-reply: the ask takes over,
/// asks for the reply again, and prints one answer (it waited, silently,
/// until some other tock started).
#[test]
fn an_ask_takes_over_when_the_tock_sending_for_it_stops() {
    let server = MockServer::start();
    server.push(Reply::chunks("slow", 200, Duration::from_millis(50)));
    server.respond_with(|_| Reply::text("answered after the takeover"));
    let t = Tock::with_openai(&server.base_url());
    let mut daemon = t.spawn_daemon();
    wait_until(Duration::from_secs(20), "the daemon dispatches", || {
        t.ok(&["status"])
            .contains(&format!("dispatcher: pid {}", daemon.pid()))
            .then_some(())
    });
    let mut ask = t.spawn(&["ask", "--new", "Takeover", "go on"], "ask");
    wait_until(Duration::from_secs(20), "the daemon streaming", || {
        reply_so_far(&t, "Takeover")?
            .contains("slow-2 ")
            .then_some(())
    });
    daemon.signal(libc::SIGTERM);
    assert!(daemon.wait_timeout(Duration::from_secs(10)).is_some());
    let st = ask
        .wait_timeout(Duration::from_secs(30))
        .unwrap_or_else(|| panic!("ask never ended: {}", ask.stderr()));
    assert!(st.success(), "{}", ask.stderr());
    let printed = std::fs::read_to_string(&ask.out).unwrap_or_default();
    assert_eq!(printed, "answered after the takeover\n");
    assert_eq!(server.count(), 2);
}

/// SIGTERM (`timeout`, a CI job cancelled) and SIGHUP end an ask as Ctrl+C
/// does: the reply is kept as stopped, not left cut off for the next tock
/// to ask for again, and the exit code is 128 + the signal.
#[test]
fn sigterm_stops_the_reply_as_ctrl_c_does() {
    let server = MockServer::start();
    server.push(Reply::chunks("piece", 200, Duration::from_millis(50)));
    let t = Tock::with_openai(&server.base_url());
    let mut ask = t.spawn(&["ask", "--new", "Term", "tell me a lot"], "ask");
    wait_until(Duration::from_secs(20), "a few pieces saved", || {
        reply_so_far(&t, "Term")?.contains("piece-2 ").then_some(())
    });
    ask.signal(libc::SIGTERM);
    let st = ask
        .wait_timeout(Duration::from_secs(20))
        .expect("ask ends on SIGTERM");
    assert_eq!(st.code(), Some(143), "{}", ask.stderr());
    let shown = t.show("Term");
    assert_eq!(shown["messages"][1]["status"], "interrupted", "{shown:#}");
    assert_eq!(shown["messages"][1]["cut_off"], false, "{shown:#}");
    // A daemon started now does not ask for it again.
    let _daemon = t.spawn_daemon();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(server.count(), 1);
}

/// `git diff | tock ask "review this"`: the words, then what was piped.
#[test]
fn text_piped_in_goes_after_the_words() {
    let server = MockServer::start();
    server.push(Reply::text("looks fine"));
    let t = Tock::with_openai(&server.base_url());
    let out = t.run_with_stdin(
        &["ask", "--new", "Review", "review", "this"],
        b"-old line\n+new line\n",
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, "looks fine\n");
    let sent = server.requests()[0].last_user_text().unwrap_or_default();
    assert_eq!(sent, "review this\n\n-old line\n+new line");
}

/// A server failing again and again: each retry is said once, not a line
/// a second for the countdown.
#[test]
fn each_retry_is_said_once() {
    let server = MockServer::start();
    server.respond_with(|_| Reply::Status(500, "overloaded".into()));
    let t = Tock::with_openai(&server.base_url());
    t.write_config("[outbox]\nmax_attempts = 3\nbackoff_base_secs = 2\n");
    let out = t.run(&["ask", "--new", "Flaky", "hello"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let retries = out
        .stderr
        .lines()
        .filter(|l| l.contains("trying again"))
        .count();
    assert_eq!(retries, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("tock: not answered: "),
        "{}",
        out.stderr
    );
}

/// A reply the length limit cut short is printed, and said to be cut.
#[test]
fn a_reply_cut_by_the_length_limit_says_so() {
    let server = MockServer::start();
    server.push(Reply::Truncated(vec![
        "This reply was cut".into(),
        " because".into(),
    ]));
    let t = Tock::with_openai(&server.base_url());
    let out = t.run(&["ask", "--new", "Long", "write a novel"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, "This reply was cut because\n");
    assert!(
        out.stderr
            .trim()
            .starts_with("tock: cut short: the reply reached the model's length limit"),
        "{out:?}"
    );
}

/// With no provider at all, an ask is refused rather than answered by the
/// offline echo model as if that were an answer; named, echo answers.
#[test]
fn with_no_model_configured_ask_refuses_rather_than_echo() {
    let t = Tock::new();
    let out = t.run(&["ask", "what is 2+2"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr.contains("no model is configured")
            && out
                .stderr
                .contains("run `tock setup`, or export OPENAI_API_KEY")
            && out.stderr.contains("--model echo"),
        "{out:?}"
    );
    assert!(t.items().is_empty(), "nothing kept");
    let mut c = t.command(&["ask", "--model", "echo", "what is 2+2"]);
    c.env("TOCK_ECHO_DELAY_MS", "0");
    let named = c.output().unwrap();
    assert!(named.status.success());
    assert!(String::from_utf8_lossy(&named.stdout).contains("> what is 2+2"));
}

/// A config file that cannot be read: ask says that is what to fix (it
/// said no model was configured and to write the file that is there).
#[test]
fn with_a_config_that_cannot_be_read_ask_says_so() {
    let t = Tock::new();
    t.write_config("default_model = \"fake\"\n[models.fake\nprovider = \"openai\"\n");
    let out = t.run(&["ask", "hi"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let last = out
        .stderr
        .trim()
        .lines()
        .last()
        .unwrap_or_default()
        .to_string();
    assert!(
        last.starts_with("tock: the config file cannot be read, so no model is known:")
            && last.contains("line 2"),
        "{out:?}"
    );
    assert!(!out.stderr.contains("no model is configured"), "{out:?}");
    assert!(t.items().is_empty(), "nothing kept");
}

/// Ctrl+C while a tool call waits for the user's answer: nothing to stop,
/// and the line says the conversation is held until it is answered.
#[test]
fn ctrl_c_while_an_approval_waits_says_it_still_holds_the_conversation() {
    let server = MockServer::start();
    server.push(Reply::text("").with_tool_call(
        "schedule_task",
        json!({"instruction": "stretch", "delay_secs": 3600}),
    ));
    let t = Tock::with_openai(&server.base_url());
    let mut ask = t.spawn(&["ask", "--new", "Held", "remind me"], "ask");
    wait_until(Duration::from_secs(20), "the approval asked for", || {
        ask.stderr().contains("(tock approve ").then_some(())
    });
    ask.signal(libc::SIGINT);
    let st = ask.wait_timeout(Duration::from_secs(20)).expect("ends");
    assert_eq!(st.code(), Some(130));
    let err = ask.stderr();
    let calls = err
        .find("the model calls schedule_task")
        .unwrap_or(usize::MAX);
    let waits = err.find("waiting for your answer").unwrap_or(0);
    assert!(calls < waits, "the call, then what it waits for: {err}");
    assert!(
        err.contains(
            "the conversation stays held, waiting for your answer to the tool call schedule_task"
        ),
        "{err}"
    );
}

/// A reader that goes away (`| head -c 1`) ends it quietly, as SIGPIPE
/// ends other tools (exit 141), with nothing more on stderr.
#[test]
fn a_reader_that_goes_away_ends_it_quietly() {
    let server = MockServer::start();
    server.push(Reply::text(&"word ".repeat(40_000)));
    let t = Tock::with_openai(&server.base_url());
    let mut c = t.command(&["ask", "--new", "Big", "say a lot"]);
    c.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    {
        use std::io::Read;
        let mut first = [0u8; 4];
        stdout.read_exact(&mut first).unwrap();
        assert_eq!(&first, b"word");
    }
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(141), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// `--json`: one object when it ends, with the answer, where it is kept
/// (to continue with `--conv-id`), the model and the tokens used; a
/// failure is an object too, with the reason, and exit 1.
#[test]
fn json_gives_the_answer_its_conversation_and_usage() {
    let server = MockServer::start();
    server.push(Reply::text("Forty-two."));
    server.push(Reply::Status(401, "Incorrect API key provided".into()));
    let t = Tock::with_openai(&server.base_url());
    let out = t.run(&["ask", "--json", "--new", "Deep", "the answer?"]);
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "answered",
            "conversation_id",
            "error",
            "item_id",
            "model",
            "note",
            "text",
            "usage"
        ]
    );
    assert_eq!(v["text"], "Forty-two.");
    assert_eq!(v["answered"], true);
    assert_eq!(v["error"], serde_json::Value::Null);
    assert_eq!(v["model"], "gpt-4o-mini");
    assert!(
        v["usage"]["completion_tokens"]
            .as_u64()
            .is_some_and(|n| n > 0),
        "{v}"
    );
    let conv = v["conversation_id"].as_i64().unwrap();
    let item = v["item_id"].as_i64().unwrap();
    assert_eq!(t.item(item)["status"], "sent");

    // Continued by id; this one fails.
    let out = t.run(&["ask", "--json", "--conv-id", &conv.to_string(), "and then?"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["answered"], false);
    assert_eq!(v["conversation_id"], conv);
    assert!(v["error"].as_str().unwrap_or("").contains("401"), "{v}");
    let seen = server.requests()[1].messages();
    assert!(
        seen.contains(&("user".to_string(), "the answer?".to_string()))
            && seen.contains(&("assistant".to_string(), "Forty-two.".to_string())),
        "it saw the first turn: {seen:?}"
    );
}

/// stdin's edges: `-` among the words stands for stdin (it was sent as
/// the text "-"), and with no words at all the piped text is the message.
#[test]
fn a_dash_among_the_words_is_stdin_and_stdin_alone_is_a_message() {
    let server = MockServer::start();
    server.respond_with(|_| Reply::text("ok"));
    let t = Tock::with_openai(&server.base_url());
    let out = t.run_with_stdin(&["ask", "--new", "A", "-", "review", "this"], b"DIFF\n");
    assert!(out.status.success(), "{out:?}");
    let out = t.run_with_stdin(&["ask", "--new", "B"], b"just the question\n");
    assert!(out.status.success(), "{out:?}");
    let sent: Vec<String> = server
        .requests()
        .iter()
        .filter_map(|r| r.last_user_text())
        .collect();
    assert_eq!(sent, ["review this\n\nDIFF", "just the question"]);
}
