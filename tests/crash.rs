//! The crash trial: the real `tock daemon` (and, in a quarter of the
//! trials, the real TUI in a pseudo-terminal) against a local server that
//! streams slowly, with queued, scheduled and task items across three
//! conversations, SIGKILLed at random (seeded) moments and restarted, again
//! and again. At the end it runs to completion and the invariants are checked
//! from the database and from the server's request log:
//!
//! - every accepted item reaches its conversation exactly once (one user
//!   message per outbox row; nothing left pending or sending);
//! - every conversation ends with a complete assistant reply after its last
//!   user message, and every user message got a complete reply;
//! - no item reached the server before its due time;
//! - no request ever carried a user message twice or a partial (interrupted)
//!   reply;
//! - every tool call of a complete reply has its result recorded;
//! - recurring series: every occurrence is one outbox row (sent, or replaced
//!   by a newer one while it waited), sent at most once and never before it
//!   was due, and every slot of the series is accounted for (sent or
//!   reported skipped).
//!
//! The server also fails after accepting: a share of requests (default 20 %,
//! `TOCK_CRASH_FAULTS`) is cut mid-stream or ends with an error event, so
//! every trial mixes kills with replies that must be generated again. The
//! report counts provider requests per item and the copies of each reply in
//! the history; every item must still end with exactly one complete reply,
//! and a view (`show --json`, `hidden`) shows at most one interrupted
//! attempt per reply.
//!
//! `TOCK_CRASH_TRIALS` sets the number of kill/restart trials (default 20;
//! the full run is 200), `TOCK_CRASH_SEED` the seed.

mod support;

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use serde_json::json;
use support::{MockServer, Proc, Pty, Reply, Tock, XorShift, now_ms};

const CHUNKS: usize = 20;
const GAP: Duration = Duration::from_millis(15);
const CONVS: [&str; 3] = ["crash-a", "crash-b", "crash-c"];

/// What gets killed: `tock daemon`, or the TUI in a pseudo-terminal.
enum Runner {
    Daemon(Proc),
    Tui(Pty),
}

impl Runner {
    fn kill9(&mut self) {
        match self {
            Runner::Daemon(p) => p.kill9(),
            Runner::Tui(p) => p.kill9(),
        }
    }
}

#[derive(Default, Debug)]
struct Stats {
    trials: usize,
    tui_runs: usize,
    kills: usize,
    kills_with_sending: usize,
    kills_mid_stream: usize,
    items_queued: usize,
    items_scheduled: usize,
    items_tool_prompts: usize,
    series: usize,
}

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

fn server(seed: u64, faults: u64) -> MockServer {
    let server = MockServer::start();
    let rng = std::sync::Mutex::new(XorShift::new(seed ^ 0xfa17));
    server.respond_with(move |r| {
        // A fault after acceptance: cut after a few chunks, or an error event.
        let (fault, cut_after, error) = {
            let mut g = rng.lock().unwrap_or_else(|p| p.into_inner());
            (
                g.chance(faults),
                g.range(0, CHUNKS as u64) as usize,
                g.chance(30),
            )
        };
        if fault {
            let chunks: Vec<String> = (0..cut_after)
                .map(|i| format!("cut-r{}-{i} ", r.n))
                .collect();
            return if error {
                Reply::StreamError {
                    chunks,
                    gap: GAP,
                    message: "overloaded mid-stream".into(),
                }
            } else {
                Reply::Cut { chunks, gap: GAP }
            };
        }
        if r.last_role().as_deref() == Some("tool") {
            return Reply::chunks(&format!("after-tool-r{}", r.n), CHUNKS, GAP);
        }
        let last = r.last_user_text().unwrap_or_default();
        let tag: String = last
            .split_whitespace()
            .next()
            .unwrap_or("reply")
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if last.contains("TOOL") && !last.starts_with("[Scheduled task]") {
            Reply::chunks(&format!("{tag}-ack"), CHUNKS, GAP).with_tool_call(
                "schedule_task",
                json!({
                    "instruction": format!("task-r{} for {tag}", r.n),
                    "delay_secs": 1 + (r.n % 2),
                    "title": format!("task r{}", r.n),
                }),
            )
        } else {
            Reply::chunks(&tag, CHUNKS, GAP)
        }
    });
    server
}

/// Queue or schedule a random item; returns its id.
fn add_item(t: &Tock, rng: &mut XorShift, n: usize, stats: &mut Stats) -> i64 {
    let conv = CONVS[rng.range(0, 3) as usize];
    let roll = rng.range(0, 100);
    let secs = rng.range(1, 4).to_string();
    if roll < 50 {
        stats.items_queued += 1;
        t.send(&["--conv", conv, &format!("q{n}-{conv} queued item {n}")])
    } else if roll < 82 {
        stats.items_scheduled += 1;
        t.send(&[
            "--conv",
            conv,
            "--in",
            &format!("{secs}s"),
            &format!("s{n}-{conv} scheduled item {n}"),
        ])
    } else if roll < 92 {
        stats.items_tool_prompts += 1;
        t.send(&[
            "--conv",
            conv,
            &format!("t{n}-{conv} TOOL please schedule a follow-up {n}"),
        ])
    } else {
        stats.series += 1;
        add_series(t, rng, conv, n)
    }
}

/// A two-occurrence minutely series, moved back in time so that its first
/// occurrence is due now and its second in 0.1-2.5 s: a real series would take
/// minutes of wall time per occurrence. Returns the series id.
fn add_series(t: &Tock, rng: &mut XorShift, conv: &str, n: usize) -> i64 {
    let id = t.send(&[
        "--conv",
        conv,
        "--every",
        "every 1 minute for 2 times",
        &format!("r{n}-{conv} recurring item {n}"),
    ]);
    // First occurrence a minute ago less 0.1-2.5 s (due now), the second in
    // 0.1-2.5 s: often while the first still waits behind a reply.
    let first = now_ms() - 60_000 + rng.range(100, 2_500) as i64;
    let db = rusqlite::Connection::open(&t.db).unwrap();
    db.busy_timeout(Duration::from_secs(5)).unwrap();
    db.execute(
        "UPDATE series SET anchor_at = ?2, next_due_at = ?2 WHERE id = ?1",
        rusqlite::params![id, first],
    )
    .unwrap();
    id
}

#[test]
fn crash_trials_lose_nothing_and_send_nothing_twice_or_early() {
    let trials = env_num("TOCK_CRASH_TRIALS", 20) as usize;
    let seed = env_num("TOCK_CRASH_SEED", 0x7ac0_c0de);
    let faults = env_num("TOCK_CRASH_FAULTS", 20);
    let started = Instant::now();
    let mut rng = XorShift::new(seed);
    let server = server(seed, faults);
    let t = Tock::with_openai(&server.base_url());
    t.write_config(
        "auto_approve = [\"schedule_task\"]\n\n[outbox]\nmax_attempts = 20\nbackoff_base_secs = 1\ncatchup_grace = \"12h\"\n",
    );
    let mut stats = Stats::default();
    let mut accepted: Vec<i64> = Vec::new();
    let mut n = 0usize;
    for conv in CONVS {
        n += 1;
        accepted.push(t.send(&["--new", conv, &format!("first{n}-{conv} hello {conv}")]));
        stats.items_queued += 1;
    }
    // At least one series, whatever the seed.
    n += 1;
    stats.series += 1;
    accepted.push(add_series(&t, &mut rng, CONVS[0], n));

    for trial in 0..trials {
        stats.trials += 1;
        // Some items before the start, some while it runs.
        for _ in 0..rng.range(0, 3) {
            n += 1;
            accepted.push(add_item(&t, &mut rng, n, &mut stats));
        }
        // Mostly the daemon; sometimes the TUI in a pty (the same engine
        // behind a terminal front end).
        let mut d = if rng.chance(25) {
            stats.tui_runs += 1;
            Runner::Tui(Pty::spawn(&[], &t.env, 30, 100))
        } else {
            Runner::Daemon(t.spawn_daemon())
        };
        let first = if rng.chance(70) {
            rng.range(0, 600)
        } else {
            rng.range(600, 1500)
        };
        std::thread::sleep(Duration::from_millis(first / 2));
        for _ in 0..rng.range(0, 2) {
            n += 1;
            accepted.push(add_item(&t, &mut rng, n, &mut stats));
        }
        std::thread::sleep(Duration::from_millis(first / 2));
        d.kill9();
        stats.kills += 1;
        let db = t.sql();
        let sending: i64 = db
            .query_row(
                "SELECT count(*) FROM outbox WHERE status = 'sending'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let streaming: i64 = db
            .query_row(
                "SELECT count(*) FROM messages WHERE status = 'streaming'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        stats.kills_with_sending += usize::from(sending > 0);
        stats.kills_mid_stream += usize::from(streaming > 0);
        if trial % 50 == 49 {
            eprintln!("crash: {} trials, {:?}", trial + 1, started.elapsed());
        }
    }

    // Run to completion.
    let mut d = t.spawn_daemon();
    let deadline = Instant::now() + Duration::from_secs(90 + accepted.len() as u64);
    // Settled for a whole second: a reply is stored complete a moment before
    // the task its tool call schedules is written, so one look can fall in
    // between (and the daemon was stopped with the task still to go).
    let mut settled_since: Option<Instant> = None;
    loop {
        let db = t.sql();
        let open: i64 = db
            .query_row(
                "SELECT (SELECT count(*) FROM outbox WHERE status IN ('pending', 'sending'))
                      + (SELECT count(*) FROM series WHERE status != 'ended')",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let streaming: i64 = db
            .query_row(
                "SELECT count(*) FROM messages WHERE status = 'streaming'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        if open == 0 && streaming == 0 {
            let since = *settled_since.get_or_insert_with(Instant::now);
            if since.elapsed() >= Duration::from_secs(1) {
                break;
            }
        } else {
            settled_since = None;
        }
        assert!(
            Instant::now() < deadline,
            "not settled: {open} open items, {streaming} streaming replies\n{}",
            d.stderr()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    d.signal(libc::SIGTERM);
    assert!(d.wait_timeout(Duration::from_secs(5)).is_some());

    let report = check_invariants(&t, &server, &accepted);
    eprintln!(
        "crash trials: seed {seed:#x}, {} trials ({} of the TUI), {} kills ({} with a row in sending, {} mid-stream), \
         items: {} accepted from the CLI ({} queued, {} scheduled, {} asking for a task, {} recurring series: {} occurrences sent, {} skipped) + {} tasks, \
         {} regenerations, {} interrupted replies kept, {} requests ({} completed, {} cut by a kill, \
         {} faults injected after acceptance at {faults} %), \
         requests per item: max {} (mean {:.2}, {} items asked more than once), \
         copies of a reply in the history: max {} (interrupted attempts kept per reply: max {}, visible after collapsing: max {}), \
         lost 0, duplicated 0, early 0, every item exactly one complete reply; {:.1?}",
        stats.trials,
        stats.tui_runs,
        stats.kills,
        stats.kills_with_sending,
        stats.kills_mid_stream,
        accepted.len(),
        stats.items_queued,
        stats.items_scheduled,
        stats.items_tool_prompts,
        stats.series,
        report.occurrences,
        report.skipped,
        report.tasks,
        report.regenerations,
        report.interrupted,
        report.requests,
        report.completed,
        report.client_gone,
        report.faults,
        report.max_requests_per_item,
        report.mean_requests_per_item,
        report.items_requested_again,
        report.max_copies,
        report.max_interrupted_per_reply,
        report.max_visible_interrupted,
        started.elapsed()
    );
    assert!(stats.kills == trials);
}

#[derive(Default)]
struct Report {
    occurrences: usize,
    skipped: i64,
    tasks: usize,
    regenerations: usize,
    interrupted: usize,
    requests: usize,
    completed: usize,
    client_gone: usize,
    faults: usize,
    max_requests_per_item: usize,
    mean_requests_per_item: f64,
    items_requested_again: usize,
    /// Assistant messages (any status) answering one user message.
    max_copies: usize,
    max_interrupted_per_reply: usize,
    /// Interrupted attempts a view still shows for one reply (after `hidden`).
    max_visible_interrupted: usize,
}

struct Row {
    id: i64,
    kind: String,
    text: String,
    status: String,
    due_at: Option<i64>,
    conversation_id: Option<i64>,
    series_id: Option<i64>,
    occurrence_at: Option<i64>,
    last_error: Option<String>,
}

struct Msg {
    conversation_id: i64,
    created_at: i64,
    role: String,
    content: String,
    status: String,
    outbox_id: Option<i64>,
    tool_calls_json: Option<String>,
    tool_call_id: Option<String>,
}

fn check_invariants(t: &Tock, server: &MockServer, accepted: &[i64]) -> Report {
    let db = t.sql();
    let rows: Vec<Row> = {
        let mut st = db
            .prepare(
                "SELECT id, kind, text, status, due_at, conversation_id, series_id, occurrence_at, last_error
                 FROM outbox ORDER BY id",
            )
            .unwrap();
        st.query_map([], |r| {
            Ok(Row {
                id: r.get(0)?,
                kind: r.get(1)?,
                text: r.get(2)?,
                status: r.get(3)?,
                due_at: r.get(4)?,
                conversation_id: r.get(5)?,
                series_id: r.get(6)?,
                occurrence_at: r.get(7)?,
                last_error: r.get(8)?,
            })
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    };
    let msgs: Vec<Msg> = {
        let mut st = db
            .prepare(
                "SELECT conversation_id, role, content, status, outbox_id, tool_calls_json, tool_call_id, created_at
                 FROM messages ORDER BY id",
            )
            .unwrap();
        st.query_map([], |r| {
            Ok(Msg {
                conversation_id: r.get(0)?,
                role: r.get(1)?,
                content: r.get(2)?,
                status: r.get(3)?,
                outbox_id: r.get(4)?,
                tool_calls_json: r.get(5)?,
                tool_call_id: r.get(6)?,
                created_at: r.get(7)?,
            })
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    };
    let by_id: HashMap<i64, &Row> = rows.iter().map(|r| (r.id, r)).collect();
    let mut report = Report::default();

    // Recurring series: ended, each slot sent once or reported skipped.
    let series: Vec<(i64, i64, i64, String, String)> = {
        let mut st = db
            .prepare("SELECT id, occurrences, skipped, status, text FROM series ORDER BY id")
            .unwrap();
        st.query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    };
    let series_ids: Vec<i64> = series.iter().map(|s| s.0).collect();
    for (id, occurrences, skipped, status, text) in &series {
        let occ: Vec<&Row> = rows.iter().filter(|r| r.series_id == Some(*id)).collect();
        assert_eq!(status, "ended", "series {id} ({text:?})");
        // Sent or on their way; a replaced occurrence counts as skipped.
        let live = occ.iter().filter(|r| r.status != "canceled").count();
        assert_eq!(*occurrences as usize, live, "series {id}: occurrence count");
        let mut at: Vec<i64> = occ.iter().map(|r| r.occurrence_at.unwrap()).collect();
        at.sort();
        at.dedup();
        assert_eq!(
            at.len(),
            occ.len(),
            "series {id}: an occurrence created twice"
        );
        let sent = occ.iter().filter(|r| r.status == "sent").count() as i64;
        let replaced = occ.iter().filter(|r| r.status == "canceled").count() as i64;
        assert!(
            replaced <= *skipped,
            "series {id}: a replaced occurrence not reported"
        );
        assert_eq!(
            sent + skipped,
            2,
            "series {id}: every slot sent or reported skipped"
        );
        assert!(
            sent >= 1,
            "series {id}: the latest occurrence is always sent"
        );
        report.occurrences += sent as usize;
        report.skipped += skipped;
    }

    // Every accepted item (from the CLI, and every task the model scheduled) was sent.
    for id in accepted.iter().filter(|id| !series_ids.contains(id)) {
        let r = by_id
            .get(id)
            .unwrap_or_else(|| panic!("accepted item {id} vanished from the outbox"));
        assert_eq!(r.status, "sent", "item {id} ({:?}) is {}", r.text, r.status);
    }
    for r in &rows {
        // An occurrence still waiting when the next came due is replaced, not stacked.
        let replaced = r.series_id.is_some()
            && r.status == "canceled"
            && r.last_error
                .as_deref()
                .is_some_and(|e| e.contains("newer occurrence"));
        assert!(
            r.status == "sent" || replaced,
            "outbox row {} ({}, {:?}) ended {}",
            r.id,
            r.kind,
            r.text,
            r.status
        );
        match r.kind.as_str() {
            "task" => report.tasks += 1,
            "regenerate" => report.regenerations += 1,
            _ => {}
        }
    }

    // Exactly one user message per sent item (none for regenerations), in its own conversation.
    let mut users: HashMap<i64, Vec<&Msg>> = HashMap::new();
    for m in msgs.iter().filter(|m| m.role == "user") {
        let id = m
            .outbox_id
            .unwrap_or_else(|| panic!("a user message without an outbox row: {:?}", m.content));
        users.entry(id).or_default().push(m);
    }
    for r in &rows {
        let got = users.get(&r.id).map(Vec::len).unwrap_or(0);
        let want = usize::from(r.kind != "regenerate" && r.status == "sent");
        assert_eq!(
            got, want,
            "outbox row {} ({}, {:?}) has {got} user messages",
            r.id, r.kind, r.text
        );
        if let Some(u) = users.get(&r.id) {
            assert_eq!(Some(u[0].conversation_id), r.conversation_id);
            let want_text = if r.kind == "task" {
                format!("[Scheduled task] {}", r.text)
            } else {
                r.text.clone()
            };
            assert_eq!(u[0].content, want_text);
            if let Some(due) = r.due_at.filter(|_| r.series_id.is_some()) {
                assert!(
                    u[0].created_at >= due,
                    "occurrence {} of series {:?} was sent {} ms early",
                    r.id,
                    r.series_id,
                    due - u[0].created_at
                );
            }
        }
    }
    let series_texts: Vec<&str> = series.iter().map(|s| s.4.as_str()).collect();

    // Per conversation: every user message is followed by a complete reply
    // before the next one; the conversation ends with a complete reply;
    // every tool call of a complete reply has its result.
    let mut convs: BTreeMap<i64, Vec<&Msg>> = BTreeMap::new();
    for m in &msgs {
        convs.entry(m.conversation_id).or_default().push(m);
    }
    assert!(convs.len() >= 3);
    let results: Vec<&str> = msgs
        .iter()
        .filter(|m| m.role == "tool")
        .filter_map(|m| m.tool_call_id.as_deref())
        .collect();
    for (conv, ms) in &convs {
        let mut owed = false;
        // Per user message: final replies (complete, no tool calls), all
        // assistant messages, interrupted ones.
        let mut turn: Option<(usize, usize, usize)> = None;
        // What the conversation holds, for a failure's message.
        let seq = ms
            .iter()
            .map(|m| {
                let calls = if m.tool_calls_json.is_some() {
                    "+calls"
                } else {
                    ""
                };
                format!("{}:{}{calls}", m.role, m.status)
            })
            .collect::<Vec<_>>()
            .join(" ");
        let close = |turn: &mut Option<(usize, usize, usize)>, report: &mut Report| {
            if let Some((finals, copies, interrupted)) = turn.take() {
                assert_eq!(
                    finals, 1,
                    "conversation {conv}: a user message got {finals} complete replies; the conversation: {seq}"
                );
                report.max_copies = report.max_copies.max(copies);
                report.max_interrupted_per_reply =
                    report.max_interrupted_per_reply.max(interrupted);
            }
        };
        for m in ms {
            match (m.role.as_str(), m.status.as_str()) {
                ("user", _) => {
                    close(&mut turn, &mut report);
                    turn = Some((0, 0, 0));
                }
                ("assistant", st) => {
                    if let Some((finals, copies, interrupted)) = turn.as_mut() {
                        *copies += 1;
                        *interrupted += usize::from(st == "interrupted");
                        *finals += usize::from(st == "complete" && m.tool_calls_json.is_none());
                    }
                }
                _ => {}
            }
            assert_ne!(
                m.status, "streaming",
                "conversation {conv}: a reply still streaming"
            );
            match (m.role.as_str(), m.status.as_str()) {
                ("user", _) => {
                    assert!(
                        !owed,
                        "conversation {conv}: a user message before the previous one was answered: {:?}",
                        m.content
                    );
                    owed = true;
                }
                ("assistant", "complete") => {
                    owed = false;
                    assert!(
                        m.content.ends_with("END"),
                        "conversation {conv}: a complete reply that is not whole: {:?}",
                        m.content
                    );
                }
                ("assistant", "interrupted") => report.interrupted += 1,
                ("assistant", other) => {
                    panic!(
                        "conversation {conv}: a reply ended {other}: {:?}",
                        m.content
                    )
                }
                _ => {}
            }
            if m.role == "assistant"
                && m.status == "complete"
                && let Some(calls) = &m.tool_calls_json
            {
                let calls: Vec<serde_json::Value> = serde_json::from_str(calls).unwrap();
                for c in calls {
                    let id = c["id"].as_str().unwrap();
                    assert!(
                        results.contains(&id),
                        "conversation {conv}: tool call {id} of a complete reply has no result"
                    );
                }
            }
        }
        close(&mut turn, &mut report);
        assert!(
            !owed,
            "conversation {conv} does not end with a complete reply"
        );
        // What a view shows: at most one interrupted attempt per reply.
        let shown = t.show(&format!("#{conv}"));
        let mut visible = 0usize;
        for m in shown["messages"].as_array().cloned().unwrap_or_default() {
            match (m["role"].as_str(), m["status"].as_str()) {
                // A new reply starts after a user or tool message or a complete reply.
                (Some("user" | "tool"), _) | (Some("assistant"), Some("complete")) => visible = 0,
                (Some("assistant"), Some("interrupted")) if m["hidden"] == false => {
                    visible += 1;
                    report.max_visible_interrupted = report.max_visible_interrupted.max(visible);
                }
                _ => {}
            }
        }
        let last = ms
            .iter()
            .rev()
            .find(|m| m.role == "assistant" || m.role == "user");
        assert!(last.is_some_and(|m| m.role == "assistant" && m.status == "complete"));
    }

    assert!(
        report.max_visible_interrupted <= 1,
        "a view shows {} interrupted attempts of one reply",
        report.max_visible_interrupted
    );

    // The server's view.
    let reqs = server.requests();
    report.requests = reqs.len();
    // Requests per item: a request belongs to the item whose text is its last
    // user message (continuations after a tool result are not counted).
    let mut per_item: HashMap<String, usize> = HashMap::new();
    for r in &reqs {
        match r.outcome {
            support::Outcome::Completed => report.completed += 1,
            support::Outcome::ClientGone => report.client_gone += 1,
            support::Outcome::Cut | support::Outcome::Status(200) => report.faults += 1,
            _ => {}
        }
        if r.last_role().as_deref() == Some("user")
            && let Some(u) = r.last_user_text()
        {
            *per_item.entry(u).or_default() += 1;
        }
        let mut seen: Vec<String> = Vec::new();
        for (role, text) in r.messages() {
            match role.as_str() {
                // A series repeats its text: at most once per slot.
                "user" if series_texts.contains(&text.as_str()) => {
                    seen.push(text.clone());
                    assert!(
                        seen.iter().filter(|t| **t == text).count() <= 2,
                        "request {} carried recurring text {text:?} more than twice",
                        r.n
                    );
                }
                "user" => {
                    assert!(
                        !seen.contains(&text),
                        "request {} carried user message {text:?} twice",
                        r.n
                    );
                    seen.push(text);
                }
                "assistant" => assert!(
                    text.is_empty() || text.ends_with("END"),
                    "request {} sent a partial reply back to the model: {text:?}",
                    r.n
                ),
                _ => {}
            }
        }
    }
    report.max_requests_per_item = per_item.values().copied().max().unwrap_or(0);
    report.items_requested_again = per_item.values().filter(|n| **n > 1).count();
    report.mean_requests_per_item =
        per_item.values().sum::<usize>() as f64 / per_item.len().max(1) as f64;
    // Nothing early: no request carried a scheduled item or task before its due time.
    // (Occurrences share their series' text; they were checked above from the history.)
    for row in rows
        .iter()
        .filter(|r| r.due_at.is_some() && r.series_id.is_none())
    {
        let due = row.due_at.unwrap();
        let text = if row.kind == "task" {
            format!("[Scheduled task] {}", row.text)
        } else {
            row.text.clone()
        };
        let first = reqs
            .iter()
            .filter(|r| {
                r.messages()
                    .iter()
                    .any(|(role, t)| role == "user" && *t == text)
            })
            .map(|r| r.at_ms)
            .min()
            .unwrap_or_else(|| panic!("item {} ({text:?}) never reached the server", row.id));
        assert!(
            first >= due,
            "item {} ({text:?}) reached the server {} ms before it was due",
            row.id,
            due - first
        );
    }
    // The run was real: everything that was sent reached the server.
    let replaced = rows.iter().filter(|r| r.status != "sent").count();
    assert!(reqs.len() >= rows.len() - report.regenerations - replaced);
    assert!(now_ms() > 0);
    report
}
