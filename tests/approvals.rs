//! Approvals: `tock approvals|approve|deny` on the real binary (one answer
//! has one effect, also from two processes at once), and the approval
//! policy in the engine (`deny` never creates a row, `allow` never asks).

mod common;
mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::{MockServer, Reply, Tock, now_ms, wait_until};
use tock::config::{ApprovalsConfig, Config, Decision};
use tock::llm::{StreamEvent, ToolCall};
use tock::store::{ApprovalStatus, Kind, Role, Store};

fn waiting(t: &Tock) -> Vec<Value> {
    t.json(&["approvals", "--json"])
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// A waiting `schedule_task` approval on `t`'s database, as a model's call leaves it.
fn seed_approval(t: &Tock, instruction: &str) -> (i64, i64) {
    // Any command creates the database.
    t.ok(&["approvals"]);
    let store = Store::open(&t.db).unwrap();
    let now = now_ms();
    let conv = store
        .create_conversation(Some("Seeded"), "user", now)
        .unwrap();
    let args = json!({"instruction": instruction, "delay_secs": 3600}).to_string();
    let summary =
        json!({"title": null, "instruction": instruction, "due_at": now + 3_600_000}).to_string();
    let id = store
        .add_approval(conv, 0, "call_1", "schedule_task", &args, &summary, now)
        .unwrap();
    (conv, id)
}

fn tasks(t: &Tock) -> Vec<Value> {
    t.items()
        .into_iter()
        .filter(|i| i["kind"] == "task")
        .collect()
}

#[test]
fn the_cli_lists_approves_denies_with_a_reason_and_refuses_a_second_answer() {
    let server = MockServer::start();
    // The first user message makes two schedule_task calls; "again" one more;
    // after tool results the model just answers.
    server.respond_with(|r| {
        if r.last_role().as_deref() == Some("tool") {
            return Reply::text("noted");
        }
        match r.last_user_text().as_deref() {
            Some("again") => Reply::text("").with_tool_call(
                "schedule_task",
                json!({"instruction": "third", "delay_secs": 7200}),
            ),
            _ => Reply::text("")
                .with_tool_call(
                    "schedule_task",
                    json!({"instruction": "stretch", "delay_secs": 3600}),
                )
                .with_tool_call(
                    "schedule_task",
                    json!({"instruction": "water the plants", "delay_secs": 3600}),
                ),
        }
    });
    let t = Tock::with_openai(&server.base_url());
    assert_eq!(
        t.ok(&["approvals"]).trim(),
        "no tool call waits for approval"
    );
    assert_eq!(waiting(&t), Vec::<Value>::new());

    let _daemon = t.spawn_daemon();
    t.send(&["--new", "Plans", "remind me"]);
    let list = wait_until(Duration::from_secs(20), "two approvals", || {
        let w = waiting(&t);
        (w.len() == 2).then_some(w)
    });
    for a in &list {
        let keys: Vec<&str> = a
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(
            keys,
            [
                "conversation_id",
                "created_at",
                "details",
                "id",
                "summary",
                "tool"
            ],
            "{a:#}"
        );
        assert_eq!(a["tool"], "schedule_task");
        let created = a["created_at"].as_str().unwrap_or_default();
        assert!(
            chrono::DateTime::parse_from_rfc3339(created).is_ok(),
            "{created}"
        );
        assert!(!a["summary"].as_str().unwrap_or("\n").contains('\n'));
        // Times in the details are RFC 3339, as everywhere else in --json.
        let due = a["details"]["due_at"].as_str().unwrap_or_default();
        assert!(chrono::DateTime::parse_from_rfc3339(due).is_ok(), "{a:#}");
        assert!(a["details"]["instruction"].is_string(), "{a:#}");
    }
    let (first, second) = (
        list[0]["id"].as_i64().unwrap(),
        list[1]["id"].as_i64().unwrap(),
    );
    // The summary is in words, as the table says it (no epoch ms).
    let summary = list[0]["summary"].as_str().unwrap_or_default();
    assert!(summary.starts_with("\"stretch\" at "), "{summary}");
    assert!(!summary.contains("due_at"), "{summary}");
    let human = t.ok(&["approvals"]);
    assert!(
        human.contains("schedule_task") && human.contains("\"stretch\" at "),
        "{human}"
    );
    // The time in words, not the epoch milliseconds the JSON carries.
    assert!(!human.contains("due_at"), "{human}");

    let out = t.ok(&["approve", &first.to_string(), "--always"]);
    assert!(out.contains("allowed from now on"), "{out}");
    let line = t.fails(&["approve", &first.to_string()]);
    assert_eq!(line, format!("tock: approval {first} was already answered"));
    let line = t.fails(&["deny", &first.to_string()]);
    assert_eq!(line, format!("tock: approval {first} was already answered"));
    let line = t.fails(&["approve", "9999"]);
    assert!(line.contains("9999"), "{line}");

    let out = t.ok(&["deny", &second.to_string(), "--reason", "not today"]);
    assert_eq!(out.trim(), format!("denied {second} (schedule_task)"));
    assert_eq!(waiting(&t), Vec::<Value>::new());

    // Both answered: the model continues with both results.
    let reqs = wait_until(Duration::from_secs(20), "the continued turn", || {
        let r = server.requests();
        (r.len() >= 2).then_some(r)
    });
    let tool_results: Vec<String> = reqs[1]
        .messages()
        .into_iter()
        .filter(|(role, _)| role == "tool")
        .map(|(_, text)| text)
        .collect();
    assert_eq!(tool_results.len(), 2, "{tool_results:?}");
    assert!(tool_results[0].contains("job_id"), "{tool_results:?}");
    assert!(
        tool_results[1].contains("declined") && tool_results[1].contains("not today"),
        "{tool_results:?}"
    );
    assert_eq!(tasks(&t).len(), 1, "only the approved call made a task");

    // `--always` saved an allow rule: the next schedule_task runs at once.
    t.send(&["--conv", "Plans", "again"]);
    wait_until(Duration::from_secs(20), "the allowed call's task", || {
        (tasks(&t).len() == 2).then_some(())
    });
    assert_eq!(waiting(&t), Vec::<Value>::new(), "no approval was asked");
    let store = Store::open_read_only(&t.db).unwrap();
    let conv = store.find_conversation("Plans").unwrap().unwrap().id;
    assert_eq!(store.approvals(conv).unwrap().len(), 2);

    // `tock show` has the calls the replies made, every argument on its own
    // line, and names the tool of each result; --json carries them as sent.
    let shown = t.ok(&["show", "Plans"]);
    assert!(shown.contains("→ tool call schedule_task"), "{shown}");
    assert!(shown.contains("    instruction: "), "{shown}");
    assert!(shown.contains("## tool schedule_task — "), "{shown}");
    let j = t.json(&["show", "Plans", "--json"]);
    let msgs = j["messages"].as_array().unwrap();
    let calls: Vec<&Value> = msgs
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().unwrap().iter())
        .collect();
    assert!(calls.len() >= 3, "{j:#}");
    assert!(calls.iter().all(|c| c["name"] == "schedule_task"), "{j:#}");
    let args: Value = serde_json::from_str(calls[0]["arguments"].as_str().unwrap()).unwrap();
    assert!(args["instruction"].is_string(), "{args:#}");
    let results: Vec<&Value> = msgs.iter().filter(|m| m["role"] == "tool").collect();
    assert!(
        results.len() >= 2 && results.iter().all(|m| m["tool"] == "schedule_task"),
        "{j:#}"
    );
    assert!(
        msgs.iter()
            .filter(|m| m["role"] != "tool")
            .all(|m| m["tool"].is_null())
    );
}

/// A server's call with a long argument: the table cuts it and says how
/// to see it whole; `tock approvals ID` prints every argument, line by
/// line, down to what a long file ends with.
#[test]
fn approvals_id_shows_every_argument_of_a_call() {
    let t = Tock::new();
    t.ok(&["approvals"]);
    let store = Store::open(&t.db).unwrap();
    let now = now_ms();
    let conv = store
        .create_conversation(Some("Notes"), "user", now)
        .unwrap();
    let mut content: String = (0..60).map(|i| format!("line {i}: harmless\n")).collect();
    content.push_str("rm -rf ~ # hidden at the end");
    let args = json!({"path": "/tmp/notes/long.txt", "content": content}).to_string();
    let id = store
        .add_approval(conv, 0, "call_1", "files__write_file", &args, &args, now)
        .unwrap();
    let table = t.ok(&["approvals"]);
    assert!(table.contains("files__write_file"), "{table}");
    // In words, the path first, not the call's JSON.
    assert!(
        table.contains("path: /tmp/notes/long.txt · content: (61 lines) · line 0: harmless"),
        "{table}"
    );
    assert!(!table.contains("rm -rf"), "cut in the table: {table}");
    assert!(
        table.contains("(tock approvals ID shows a call with every argument)"),
        "{table}"
    );
    let one = t.ok(&["approvals", &id.to_string()]);
    assert!(
        one.starts_with(&format!(
            "approval {id} · files__write_file · conversation {conv} · waiting"
        )),
        "{one}"
    );
    assert!(
        one.contains(
            "\n  path: /tmp/notes/long.txt\n  content: (61 lines)\n    line 0: harmless\n"
        ),
        "{one}"
    );
    assert!(
        one.trim_end().ends_with("    rm -rf ~ # hidden at the end"),
        "{one}"
    );
    let j = t.json(&["approvals", &id.to_string(), "--json"]);
    assert_eq!(j["arguments"]["path"], "/tmp/notes/long.txt");
    // A message sent there meanwhile is queued, and told why it waits.
    let o = t.run(&["send", "--conv-id", &conv.to_string(), "and then this"]);
    assert!(o.status.success(), "{}", o.stderr);
    assert!(
        o.stdout.trim().parse::<i64>().is_ok(),
        "only the id: {}",
        o.stdout
    );
    assert_eq!(
        o.stderr.trim().lines().last().unwrap_or_default(),
        format!(
            "queued: it waits until approval {id} (files__write_file) in this conversation is answered (tock approvals {id})"
        )
    );
    assert_eq!(t.fails(&["approvals", "999"]), "tock: no approval 999");
}

#[test]
fn two_processes_approving_one_id_at_once_have_one_effect() {
    let t = Tock::new();
    for round in 0..3 {
        let (conv, id) = seed_approval(&t, &format!("round {round}"));
        let procs: Vec<_> = (0..4)
            .map(|_| {
                t.command(&["approve", &id.to_string()])
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let outs: Vec<_> = procs
            .into_iter()
            .map(|p| p.wait_with_output().unwrap())
            .collect();
        let ok = outs.iter().filter(|o| o.status.success()).count();
        assert_eq!(ok, 1, "exactly one answer wins: {outs:#?}");
        for o in outs.iter().filter(|o| !o.status.success()) {
            assert_eq!(
                String::from_utf8_lossy(&o.stderr).trim(),
                format!("tock: approval {id} was already answered")
            );
        }
        let store = Store::open(&t.db).unwrap();
        let tool_msgs = store
            .messages(conv)
            .unwrap()
            .into_iter()
            .filter(|m| m.role == Role::Tool)
            .count();
        assert_eq!(tool_msgs, 1, "one tool result");
        let items: Vec<_> = store
            .list_items(true)
            .unwrap()
            .into_iter()
            .filter(|i| i.conversation_id == Some(conv))
            .collect();
        assert_eq!(
            items.iter().filter(|i| i.kind == Kind::Task).count(),
            1,
            "one task: {items:#?}"
        );
        let continuations: i64 = t
            .sql()
            .query_row(
                "SELECT count(*) FROM outbox WHERE conversation_id = ?1 AND kind = 'regenerate'",
                [conv],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(continuations, 1, "one continuation");
        let a = store.approval(id).unwrap().unwrap();
        assert_eq!(a.status, ApprovalStatus::Approved);
    }
}

#[test]
fn approve_always_is_saved_in_the_database_and_says_when_a_config_rule_wins() {
    let t = Tock::new();
    let config_before = "[approvals]\nrules = { \"schedule_task\" = \"ask\" }\n";
    t.write_config(config_before);
    let (conv, id) = seed_approval(&t, "stretch");
    // Waiting, it is what holds its conversation: status says so.
    let status = t.ok(&["status"]);
    assert!(
        status.contains(&format!(
            "approvals: 1 tool call waiting for your answer, holding conversation #{conv} (tock approvals)"
        )),
        "{status}"
    );
    let json = t.json(&["status", "--json"]);
    assert_eq!(json["approvals_waiting"][0]["id"], id);
    let out = t.ok(&["approve", &id.to_string(), "--always"]);
    assert!(!t.ok(&["status"]).contains("approvals:"));
    assert!(
        out.contains("the config rule \"schedule_task\" = \"ask\" decides it first"),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(&t.config).unwrap(), config_before);
    // (One Store of a file at a time in this process: SQLite's locks are per process.)
    let saved = || {
        Store::open(&t.db)
            .unwrap()
            .setting("approvals.allow")
            .unwrap()
    };
    assert_eq!(saved().as_deref(), Some(r#"["schedule_task"]"#));
    // Without that rule the saved one decides; a second --always adds nothing twice.
    t.write_config("");
    let (_, id) = seed_approval(&t, "water");
    let out = t.ok(&["approve", &id.to_string(), "--always"]);
    assert!(out.contains("allowed from now on"), "{out}");
    assert_eq!(saved().as_deref(), Some(r#"["schedule_task"]"#));
    // Deny without a reason, and a deny of an answered approval.
    let (_, id) = seed_approval(&t, "nap");
    assert_eq!(
        t.ok(&["deny", &id.to_string()]).trim(),
        format!("denied {id} (schedule_task)")
    );
    let a = Store::open(&t.db).unwrap().approval(id).unwrap().unwrap();
    assert_eq!(a.status, ApprovalStatus::Denied);
    assert_eq!(
        a.result.as_deref(),
        Some(r#"{"error":"the user declined this request"}"#)
    );
}

// ---------------------------------------------------------------------------
// The policy in the engine
// ---------------------------------------------------------------------------

fn call(id: &str, name: &str, args: &str) -> StreamEvent {
    StreamEvent::ToolCall(ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: args.into(),
    })
}

fn policy(default: Decision, rules: &[(&str, Decision)]) -> Config {
    Config {
        approvals: ApprovalsConfig {
            default,
            rules: rules.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn tool_results(h: &common::Harness, conv: i64) -> Vec<String> {
    h.engine
        .store()
        .messages(conv)
        .unwrap()
        .into_iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.content)
        .collect()
}

#[tokio::test(start_paused = true)]
async fn deny_answers_at_once_without_a_row_and_allow_runs_without_asking() {
    let h = common::harness_with(
        common::Scripted::new(vec![
            common::Step::Reply(vec![
                call(
                    "c1",
                    "schedule_task",
                    r#"{"instruction":"stretch","delay_secs":60}"#,
                ),
                call("c2", "cancel_scheduled", r#"{"job_id":1}"#),
                call("c3", "list_scheduled", "{}"),
                common::done(),
            ]),
            common::Step::Reply(vec![common::text("ok"), common::done()]),
        ]),
        policy(
            Decision::Ask,
            &[
                ("schedule_*", Decision::Allow),
                ("cancel_scheduled", Decision::Deny),
                ("list_*", Decision::Deny),
            ],
        ),
    );
    let conv = h
        .engine
        .store()
        .create_conversation(Some("c"), "user", h.engine.now_ms())
        .unwrap();
    h.engine.start();
    h.engine.send_text(conv, "go").unwrap();
    common::settle().await;
    assert!(
        h.engine.store().approvals(conv).unwrap().is_empty(),
        "no call asked"
    );
    let results = tool_results(&h, conv);
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(results[0].contains("job_id"), "{results:?}");
    for (r, tool) in results[1..]
        .iter()
        .zip(["cancel_scheduled", "list_scheduled"])
    {
        assert!(
            r.contains("not run") && r.contains(tool),
            "refused: {results:?}"
        );
    }
    let tasks = h
        .engine
        .store()
        .list_items(false)
        .unwrap()
        .into_iter()
        .filter(|i| i.kind == Kind::Task)
        .count();
    assert_eq!(tasks, 1);
    // The model read the results and answered.
    assert_eq!(h.provider.count(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_default_deny_refuses_unknown_tools_and_schedule_task_still_asks() {
    let h = common::harness_with(
        common::Scripted::new(vec![
            common::Step::Reply(vec![
                call("c1", "shell__run", r#"{"cmd":"rm -rf /"}"#),
                call(
                    "c2",
                    "schedule_task",
                    r#"{"instruction":"stretch","delay_secs":60}"#,
                ),
                common::done(),
            ]),
            common::Step::Reply(vec![common::text("ok"), common::done()]),
        ]),
        policy(Decision::Deny, &[]),
    );
    let conv = h
        .engine
        .store()
        .create_conversation(Some("c"), "user", h.engine.now_ms())
        .unwrap();
    h.engine.start();
    h.engine.send_text(conv, "go").unwrap();
    common::settle().await;
    let rows = h.engine.store().approvals(conv).unwrap();
    assert_eq!(rows.len(), 1, "only schedule_task asks: {rows:#?}");
    assert_eq!(rows[0].tool, "schedule_task");
    let results = tool_results(&h, conv);
    assert_eq!(results.len(), 1);
    assert!(results[0].contains("shell__run"), "{results:?}");
    // Denied with a reason: the model reads it.
    h.engine
        .answer_approval_with(
            rows[0].id,
            &tock::engine::tools::Answer::Deny {
                reason: Some("I will stretch later".into()),
            },
        )
        .unwrap();
    common::settle().await;
    let results = tool_results(&h, conv);
    assert!(results[1].contains("I will stretch later"), "{results:?}");
    let reqs = h.provider.requests();
    assert_eq!(reqs.len(), 2);
    let sent = format!("{:?}", reqs[1].messages);
    assert!(sent.contains("I will stretch later"), "{sent}");
    let again = h.engine.answer_approval(rows[0].id, true);
    assert_eq!(
        again.map_err(|e| e.to_string()).err().as_deref(),
        Some(format!("approval {} was already answered", rows[0].id).as_str())
    );
}

/// While a call waits for its answer (or runs once approved), the reply
/// that made it is not replaced: Ctrl+R / `tock regenerate` and an edit
/// resent are refused, and say why. Replacing it left the call to run, and
/// its result in every later request without the call that asked for it
/// (a request OpenAI and Anthropic refuse).
/// A conversation whose first message made a `schedule_task` call that
/// now waits for its answer; the model then answers `replies` in turn.
/// Returns the harness, the conversation and the approval.
async fn a_call_waiting(replies: &[&str]) -> (common::Harness, i64, tock::store::Approval) {
    let mut steps = vec![common::Step::Reply(vec![
        call(
            "c1",
            "schedule_task",
            r#"{"instruction":"stretch","delay_secs":600}"#,
        ),
        common::done(),
    ])];
    steps.extend(
        replies
            .iter()
            .map(|r| common::Step::Reply(vec![common::text(r), common::done()])),
    );
    let h = common::harness_with(common::Scripted::new(steps), Config::default());
    let conv = h
        .engine
        .store()
        .create_conversation(Some("c"), "user", h.engine.now_ms())
        .unwrap();
    h.engine.start();
    h.engine.send_text(conv, "remind me to stretch").unwrap();
    common::settle().await;
    let approval = h.engine.store().approvals(conv).unwrap()[0].clone();
    assert_eq!(approval.status, ApprovalStatus::Waiting);
    (h, conv, approval)
}

/// Two calls of one reply under one id (a provider's slip) each get their
/// own result: the later call is given an id of its own as it is read, so
/// no result can be paired with the wrong call, and every request after
/// it pairs each call with one result.
#[tokio::test(start_paused = true)]
async fn two_calls_of_one_reply_under_one_id_each_get_their_own_result() {
    let h = common::harness_with(
        common::Scripted::new(vec![
            common::Step::Reply(vec![
                call(
                    "dup",
                    "schedule_task",
                    r#"{"instruction":"stretch","delay_secs":600}"#,
                ),
                call(
                    "dup",
                    "schedule_task",
                    r#"{"instruction":"drink water","delay_secs":900}"#,
                ),
                common::done(),
            ]),
            common::Step::Reply(vec![common::text("both noted"), common::done()]),
            common::Step::Reply(vec![common::text("ok"), common::done()]),
        ]),
        Config::default(),
    );
    let store = h.engine.store();
    let conv = store
        .create_conversation(Some("c"), "user", h.engine.now_ms())
        .unwrap();
    h.engine.start();
    h.engine.send_text(conv, "remind me twice").unwrap();
    common::settle().await;
    let approvals = store.approvals(conv).unwrap();
    assert_eq!(approvals.len(), 2);
    let ids: Vec<String> = approvals.iter().map(|a| a.call_id.clone()).collect();
    assert_eq!(ids, ["dup", "dup_2"]);
    h.engine.answer_approval(approvals[1].id, false).unwrap();
    common::settle().await;
    h.engine.answer_approval(approvals[0].id, true).unwrap();
    common::settle().await;
    h.engine.send_text(conv, "and then").unwrap();
    common::settle().await;
    let requests = h.provider.requests();
    assert_eq!(requests.len(), 3);
    for req in &requests[1..] {
        let mut calls = Vec::new();
        let mut results = Vec::new();
        for m in &req.messages {
            match m {
                tock::llm::ChatMessage::Assistant { tool_calls, .. } => {
                    calls.extend(tool_calls.iter().map(|c| c.id.clone()))
                }
                tock::llm::ChatMessage::ToolResult {
                    call_id, content, ..
                } => results.push((call_id.clone(), content.clone())),
                _ => {}
            }
        }
        assert_eq!(calls, ["dup", "dup_2"]);
        let paired: Vec<&str> = results.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(paired, ["dup_2", "dup"], "{results:?}");
        assert!(results[0].1.contains("declined"), "{results:?}");
    }
}

/// A message sent to another model (`/with MODEL`, `tock --model`) is
/// answered by that model to the end of its turn: the answer to a tool
/// call's result went to the conversation's model (another provider).
#[tokio::test(start_paused = true)]
async fn the_turn_of_a_message_sent_to_another_model_stays_with_it_after_a_call() {
    let (h, conv, approval) = {
        let h = common::harness_with(
            common::Scripted::new(vec![
                common::Step::Reply(vec![
                    call(
                        "c1",
                        "schedule_task",
                        r#"{"instruction":"stretch","delay_secs":600}"#,
                    ),
                    common::done(),
                ]),
                common::Step::Reply(vec![common::text("noted"), common::done()]),
            ]),
            toml::from_str::<Config>(
                r#"
                default_model = "cloud"
                [models.cloud]
                provider = "openai"
                model = "cloud-model"
                base_url = "http://127.0.0.1:9/v1"
                api_key = "sk-test"
                [models.local]
                provider = "ollama"
                model = "local-model"
                base_url = "http://127.0.0.1:9"
                "#,
            )
            .unwrap(),
        );
        let store = h.engine.store();
        let conv = store
            .create_conversation(Some("c"), "user", h.engine.now_ms())
            .unwrap();
        h.engine.start();
        let mut item = tock::store::NewItem::message(conv, "remind me to stretch", None);
        item.model_override = Some("local".into());
        h.engine.submit(item).unwrap();
        common::settle().await;
        let approval = store.approvals(conv).unwrap()[0].clone();
        (h, conv, approval)
    };
    h.engine.answer_approval(approval.id, true).unwrap();
    common::settle().await;
    let models: Vec<String> = h.provider.requests().into_iter().map(|r| r.model).collect();
    assert_eq!(models.len(), 2, "{models:?}");
    assert_eq!(
        models,
        ["local-model", "local-model"],
        "the answer to the result went elsewhere"
    );
    let replies: Vec<Option<String>> = h
        .engine
        .store()
        .messages(conv)
        .unwrap()
        .into_iter()
        .filter(|m| m.role == Role::Assistant)
        .map(|m| m.model)
        .collect();
    assert_eq!(replies[0], replies[1]);
}

#[tokio::test(start_paused = true)]
async fn the_reply_of_a_call_waiting_for_its_answer_is_not_replaced() {
    let (h, conv, approval) = a_call_waiting(&["noted", "noted again"]).await;
    let store = h.engine.store();
    let e = h.engine.regenerate(conv).unwrap_err().to_string();
    assert!(e.contains("a tool call waits for your answer"), "{e}");
    let asked = store
        .messages(conv)
        .unwrap()
        .into_iter()
        .find(|m| m.role == Role::User)
        .unwrap();
    let e = h
        .engine
        .edit_and_resend(
            conv,
            asked.id,
            tock::store::NewItem::message(conv, "remind me to walk", None),
            &tock::store::Draft::default(),
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("a tool call waits for your answer"), "{e}");
    // Nothing was replaced or queued: the call is answered as usual and
    // every result in the history follows the call that asked for it.
    assert!(
        store
            .messages(conv)
            .unwrap()
            .iter()
            .all(|m| m.status != tock::store::MessageStatus::Superseded)
    );
    h.engine.answer_approval(approval.id, true).unwrap();
    common::settle().await;
    let msgs = store.messages(conv).unwrap();
    let roles: Vec<Role> = msgs.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [Role::User, Role::Assistant, Role::Tool, Role::Assistant]
    );
    assert_eq!(msgs[3].content, "noted");
    // Answered, the last reply can be generated again.
    h.engine.regenerate(conv).unwrap();
    common::settle().await;
    assert_eq!(h.provider.count(), 3);
}

/// A message sent now (`s`, `tock send-now`) while it waits behind a call
/// goes after the model has answered the call's result, not before it: it
/// jumped ahead, so the tool result was never answered and a request ended
/// with an assistant message.
#[tokio::test(start_paused = true)]
async fn a_message_sent_now_behind_a_call_goes_after_the_calls_answer() {
    let (h, conv, approval) = a_call_waiting(&["noted", "ok"]).await;
    let store = h.engine.store();
    let queued = h.engine.send_text(conv, "and then this").unwrap();
    common::settle().await;
    h.engine.send_now(queued).unwrap();
    common::settle().await;
    h.engine.answer_approval(approval.id, false).unwrap();
    common::settle().await;
    let msgs = store.messages(conv).unwrap();
    let said: Vec<(Role, &str)> = msgs.iter().map(|m| (m.role, m.content.as_str())).collect();
    assert_eq!(said.len(), 6, "{said:?}");
    assert_eq!(said[2].0, Role::Tool, "{said:?}");
    assert_eq!(said[3], (Role::Assistant, "noted"), "{said:?}");
    assert_eq!(said[4], (Role::User, "and then this"), "{said:?}");
    assert_eq!(said[5], (Role::Assistant, "ok"), "{said:?}");
}
