//! Tools offered to the model: `schedule_task`, `list_scheduled`, `cancel_scheduled`.
//!
//! The approval policy ([`super::policy`]) decides each call: `allow` runs it,
//! `deny` refuses it at once, `ask` waits for the user's approval (persisted in
//! `approvals`). Nothing is written to the outbox before approval. Invalid
//! arguments become an error result the model reads.

use anyhow::{Result, anyhow};
use serde_json::{Value, json};

use super::running::Ran;
use super::{Engine, Event, NoticeKind};
use crate::config::Decision;
use crate::llm::{ToolCall, ToolSpec};
use crate::store::approvals::{ApprovalAnswer, ToolOutcome};
use crate::store::{ApprovalStatus, Kind, NewItem, Status};

pub const SCHEDULE_TASK: &str = "schedule_task";
pub const LIST_SCHEDULED: &str = "list_scheduled";
pub const CANCEL_SCHEDULED: &str = "cancel_scheduled";

/// The longest a model may schedule ahead.
const MAX_AHEAD_DAYS: i64 = 366;

pub fn specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: SCHEDULE_TASK.into(),
            description: "Schedule a follow-up task in this conversation. When it is due, the instruction is \
                sent back into THIS conversation as a user message starting with [Scheduled task], and you \
                answer it then. The user may have to approve it first. Give either delay_secs or at, or repeat for a task \
                that recurs (each occurrence is sent the same way)."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "instruction": {"type": "string", "description": "What to do when the task fires, written as an instruction to yourself."},
                    "delay_secs": {"type": "integer", "description": "Seconds from now."},
                    "at": {"type": "string", "description": "When: RFC 3339 (2026-12-01T09:00:00+01:00) or an expression like 'tomorrow 9am', 'fri evening 7' (evening 19:00, morning 09:00, afternoon 15:00, night 21:00), 'in 2 hours'. Wins over delay_secs."},
                    "title": {"type": "string", "description": "A short title."},
                    "repeat": {"type": "string", "description": "Make it recurring, in the user's local time: 'every day at 9am', 'every weekday 9am', 'every monday 10:00', 'every mon,wed,fri 8:30', 'every sunday night' (21:00), 'every other monday 9am', 'every 2h', 'every month on the 1st 9am', 'every year dec 24 18:00', 'every 3 months on the 15th 9am', 'every 2 years', 'for 5 times', or a 5-field cron expression 'cron \"0 9 * * 1-5\"'. The first occurrence follows the rule; delay_secs and at are then ignored."},
                    "until": {"type": "string", "description": "With repeat: the last day or instant, e.g. 'dec 24', '2026-12-31', 'in 2 weeks'."}
                },
                "required": ["instruction"]
            }),
        },
        ToolSpec {
            name: LIST_SCHEDULED.into(),
            description: "List the tasks scheduled in this conversation that have not fired yet, and its recurring tasks (with their rule and next occurrence).".into(),
            parameters: json!({"type": "object", "properties": {}}),
        },
        ToolSpec {
            name: CANCEL_SCHEDULED.into(),
            description: "Cancel a task scheduled in this conversation, by its job_id; for a recurring task this ends the series. The user may have to approve it first.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"job_id": {"type": "integer"}},
                "required": ["job_id"]
            }),
        },
    ]
}

/// What a call asks for, once its arguments are understood.
#[derive(Clone, Debug, PartialEq)]
pub enum Proposal {
    Schedule {
        instruction: String,
        title: Option<String>,
        /// The (first) occurrence.
        due_at: i64,
        repeat: Option<Repeat>,
    },
    Cancel {
        job_id: i64,
        text: String,
        /// The job is a recurring series: canceling ends it.
        series: bool,
    },
    List,
}

/// A recurring `schedule_task`.
#[derive(Clone, Debug, PartialEq)]
pub struct Repeat {
    /// Canonical rule expression (stored with the series).
    pub rule: String,
    /// The rule in words with its end, for the approval card.
    pub description: String,
    /// `next Mon 1 Dec 09:00, then Tue 09:00, Wed 09:00`.
    pub preview: String,
    pub next: Vec<i64>,
    pub until_at: Option<i64>,
    pub count: Option<u32>,
}

impl Proposal {
    /// JSON shown on the approval card (and stored with the approval).
    pub fn summary(&self) -> String {
        match self {
            Proposal::Schedule {
                instruction,
                title,
                due_at,
                repeat: None,
            } => json!({"title": title, "instruction": instruction, "due_at": due_at}).to_string(),
            Proposal::Schedule {
                instruction,
                title,
                due_at,
                repeat: Some(r),
            } => json!({
                "title": title, "instruction": instruction, "due_at": due_at,
                "repeat": r.description, "rule": r.rule, "next": r.next, "preview": r.preview,
                "until_at": r.until_at, "count": r.count,
            })
            .to_string(),
            Proposal::Cancel {
                job_id,
                text,
                series,
            } => json!({"job_id": job_id, "text": text, "recurring": series}).to_string(),
            Proposal::List => "{}".into(),
        }
    }
}

fn error_result(msg: &str) -> String {
    json!({"error": msg}).to_string()
}

fn rfc3339(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default()
}

/// Understand a call's arguments. Err is the error result to give the model.
pub fn propose(engine: &Engine, conversation_id: i64, call: &ToolCall) -> Result<Proposal, String> {
    let args: Value = if call.arguments.trim().is_empty() {
        json!({})
    } else {
        serde_json::from_str(&call.arguments)
            .map_err(|e| format!("arguments are not valid JSON: {e}"))?
    };
    let now = engine.now_ms();
    match call.name.as_str() {
        SCHEDULE_TASK => {
            let instruction = args
                .get("instruction")
                .and_then(Value::as_str)
                .map(str::trim)
                .unwrap_or("");
            if instruction.is_empty() {
                return Err("instruction is required".into());
            }
            let title = args
                .get("title")
                .and_then(Value::as_str)
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty());
            if let Some(repeat) = args
                .get("repeat")
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
            {
                let until = args
                    .get("until")
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .filter(|s| !s.is_empty());
                let expr = match until {
                    Some(u) => format!("{repeat} until {u}"),
                    None => repeat.to_string(),
                };
                let schedule = engine.parse_schedule(&expr).map_err(|e| e.to_string())?;
                let series = engine
                    .new_series(conversation_id, Kind::Task, instruction, &schedule)
                    .map_err(|e| e.to_string())?;
                let next = engine.upcoming_of(&series);
                return Ok(Proposal::Schedule {
                    instruction: instruction.to_string(),
                    title,
                    due_at: series.next_due_at,
                    repeat: Some(Repeat {
                        rule: series.rule.clone(),
                        description: engine.describe_schedule(&schedule),
                        preview: engine.preview_schedule(&schedule, 3),
                        next,
                        until_at: schedule.until,
                        count: schedule.count,
                    }),
                });
            }
            let now_local = chrono::DateTime::from_timestamp_millis(now)
                .unwrap_or_default()
                .with_timezone(&chrono::Local);
            let due = if let Some(at) = args
                .get("at")
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty())
            {
                match chrono::DateTime::parse_from_rfc3339(at.trim()) {
                    Ok(t) => {
                        let t = t.with_timezone(&chrono::Utc);
                        if t.timestamp_millis() <= now {
                            return Err(format!("{at} is in the past"));
                        }
                        t
                    }
                    Err(_) => crate::when::parse_time(at, &now_local, crate::when::Mode::At)
                        .map_err(|e| e.to_string())?,
                }
            } else if let Some(secs) = args.get("delay_secs").and_then(Value::as_f64) {
                if secs < 1.0 {
                    return Err("delay_secs must be at least 1".into());
                }
                now_local.with_timezone(&chrono::Utc)
                    + chrono::Duration::milliseconds((secs * 1000.0) as i64)
            } else {
                return Err("give delay_secs or at".into());
            };
            crate::when::check_not_too_far(
                due,
                now_local.with_timezone(&chrono::Utc),
                chrono::Duration::days(MAX_AHEAD_DAYS),
            )
            .map_err(|e| e.to_string())?;
            Ok(Proposal::Schedule {
                instruction: instruction.to_string(),
                title,
                due_at: due.timestamp_millis(),
                repeat: None,
            })
        }
        CANCEL_SCHEDULED => {
            let job_id = args
                .get("job_id")
                .and_then(Value::as_i64)
                .ok_or("job_id is required")?;
            let item = engine.store().item(job_id).map_err(|e| e.to_string())?;
            if item.is_none()
                && let Some(s) = engine.store().series(job_id).map_err(|e| e.to_string())?
                && s.conversation_id == Some(conversation_id)
                && s.kind == Kind::Task
            {
                if s.status == crate::store::SeriesStatus::Ended {
                    return Err(format!("recurring job {job_id} has already ended"));
                }
                return Ok(Proposal::Cancel {
                    job_id,
                    text: s.text,
                    series: true,
                });
            }
            match item {
                Some(it)
                    if it.conversation_id == Some(conversation_id) && it.kind == Kind::Task =>
                {
                    if it.status != Status::Pending {
                        return Err(format!(
                            "job {job_id} is {} and cannot be canceled",
                            it.status.as_str()
                        ));
                    }
                    Ok(Proposal::Cancel {
                        job_id,
                        text: it.text,
                        series: false,
                    })
                }
                _ => Err(format!("no task {job_id} in this conversation")),
            }
        }
        LIST_SCHEDULED => Ok(Proposal::List),
        other => Err(format!("unknown tool {other}")),
    }
}

/// Carry out an approved (or auto-approved) proposal.
fn execute(engine: &Engine, conversation_id: i64, call: &ToolCall, p: &Proposal) -> ToolOutcome {
    let mut out = ToolOutcome {
        call_id: call.id.clone(),
        tool: call.name.clone(),
        result: String::new(),
        task: None,
        cancel: None,
        series: None,
        end_series: None,
        images: Vec::new(),
    };
    match p {
        Proposal::Schedule {
            instruction,
            title,
            due_at,
            repeat: Some(r),
        } => {
            let schedule = engine.parse_schedule(&r.rule);
            match schedule.map(|mut sc| {
                sc.until = r.until_at;
                sc.count = r.count;
                sc
            }) {
                Ok(sc) => match engine.new_series(conversation_id, Kind::Task, instruction, &sc) {
                    Ok(mut series) => {
                        // Keep the first occurrence the user approved, if still ahead.
                        if *due_at > engine.now_ms() {
                            series.anchor_at = *due_at;
                            series.next_due_at = *due_at;
                        }
                        series.title = title.clone();
                        series.payload_json = Some(
                            json!({"instruction": instruction, "call_id": call.id}).to_string(),
                        );
                        out.result = format!(
                            "{{\"job_id\":0,\"repeat\":{},\"next_due_at\":\"{}\"}}",
                            json!(r.description),
                            rfc3339(series.next_due_at)
                        );
                        out.series = Some(series);
                    }
                    Err(e) => out.result = error_result(&format!("{e:#}")),
                },
                Err(e) => out.result = error_result(&e.to_string()),
            }
        }
        Proposal::Schedule {
            instruction,
            title,
            due_at,
            repeat: None,
        } => {
            let due_at = (*due_at).max(engine.now_ms());
            let mut item = NewItem::new(conversation_id, Kind::Task, instruction.clone());
            item.due_at = Some(due_at);
            item.title = title.clone();
            item.payload_json =
                Some(json!({"instruction": instruction, "call_id": call.id}).to_string());
            out.task = Some(item);
            // job_id 0 is replaced by the new row's id in the same transaction.
            out.result = format!("{{\"job_id\":0,\"due_at\":\"{}\"}}", rfc3339(due_at));
        }
        Proposal::Cancel {
            job_id,
            series: false,
            ..
        } => {
            out.cancel = Some(*job_id);
            out.result = json!({"canceled": job_id}).to_string();
        }
        Proposal::Cancel {
            job_id,
            series: true,
            ..
        } => {
            out.end_series = Some(*job_id);
            out.result = json!({"canceled": job_id, "recurring": true}).to_string();
        }
        Proposal::List => {
            let items = engine
                .store()
                .conversation_items(conversation_id)
                .unwrap_or_default();
            let list: Vec<Value> = items
                .iter()
                .filter(|i| i.kind == Kind::Task && i.status == Status::Pending)
                .map(|i| json!({"job_id": i.id, "title": i.title, "instruction": i.text, "due_at": i.due_at.map(rfc3339)}))
                .collect();
            let recurring: Vec<Value> = engine
                .store()
                .conversation_series(conversation_id)
                .unwrap_or_default()
                .into_iter()
                .filter(|s| s.kind == Kind::Task)
                .map(|s| {
                    let v = engine.series_view(s.id).ok().flatten();
                    json!({
                        "job_id": s.id, "title": s.title, "instruction": s.text,
                        "repeat": v.as_ref().map(|v| v.description.clone()),
                        "status": s.status.as_str(),
                        "next_due_at": s.next_due_at.filter(|_| s.status == crate::store::SeriesStatus::Active).map(rfc3339),
                        "occurrences": s.occurrences,
                    })
                })
                .collect();
            out.result = json!({"tasks": list, "recurring": recurring}).to_string();
        }
    }
    out
}

/// The result a call refused by the policy gives the model.
fn refused(tool: &str) -> String {
    error_result(&format!(
        "not run: the user's approval policy does not allow {tool}"
    ))
}

fn error_outcome(call: &ToolCall, result: String) -> ToolOutcome {
    text_outcome(&call.id, &call.name, result)
}

/// Why a turn's tool rounds must stop here, if they must: the calls of every
/// reply since the last user message (oldest first, the newest one last).
pub fn round_limit(rounds: &[Vec<ToolCall>], limits: &crate::config::TurnConfig) -> Option<String> {
    if rounds.len() > limits.max_tool_rounds {
        return Some(format!(
            "The turn was ended: the model asked for tools {} times in a row without answering (limit {}).",
            rounds.len(),
            limits.max_tool_rounds
        ));
    }
    let same = limits.max_identical_tool_calls.max(2);
    if rounds.len() >= same {
        let key = |calls: &Vec<ToolCall>| {
            let mut k: Vec<(String, String)> = calls
                .iter()
                .map(|c| (c.name.clone(), normalised_args(&c.arguments)))
                .collect();
            k.sort();
            k
        };
        let tail = &rounds[rounds.len() - same..];
        let first = key(&tail[0]);
        if tail.iter().all(|r| key(r) == first) {
            let names: Vec<&str> = tail[0].iter().map(|c| c.name.as_str()).collect();
            return Some(format!(
                "The turn was ended: the model made the same tool call ({}) {same} times in a row.",
                names.join(", ")
            ));
        }
    }
    None
}

/// Arguments compared by meaning, not spacing or key order.
fn normalised_args(args: &str) -> String {
    serde_json::from_str::<Value>(args)
        .map(|v| v.to_string())
        .unwrap_or_else(|_| args.trim().to_string())
}

/// The tool calls of each complete reply since the last user message.
fn rounds_since_user(history: &[crate::store::Message]) -> Vec<Vec<ToolCall>> {
    use crate::store::{MessageStatus, Role};
    let start = history
        .iter()
        // A note that ended the previous run of rounds starts a new count
        // (the user asked for the reply again).
        .rposition(|m| {
            (m.role == Role::User && m.status == MessageStatus::Complete) || m.role == Role::Notice
        })
        .map(|i| i + 1)
        .unwrap_or(0);
    history[start..]
        .iter()
        .filter(|m| m.role == Role::Assistant && m.status == MessageStatus::Complete)
        .map(|m| m.tool_calls())
        .filter(|calls| !calls.is_empty())
        .collect()
}

/// After a reply that made tool calls: run what may run, ask about the rest —
/// unless the turn has gone on too long, then every call is answered "not run"
/// and the turn ends with a note.
pub(crate) async fn handle_calls(
    engine: &Engine,
    conversation_id: i64,
    message_id: i64,
    calls: &[ToolCall],
    limits: &crate::config::TurnConfig,
    stop: &tokio::sync::watch::Receiver<Option<super::StopReason>>,
) {
    let now = engine.now_ms();
    let history = engine.store().messages(conversation_id).unwrap_or_default();
    if let Some(note) = round_limit(&rounds_since_user(&history), limits) {
        let outcomes: Vec<ToolOutcome> = calls
            .iter()
            .map(|c| ToolOutcome {
                call_id: c.id.clone(),
                tool: c.name.clone(),
                result: error_result("not run: the turn was ended by tock's tool-round limit"),
                task: None,
                cancel: None,
                series: None,
                end_series: None,
                images: Vec::new(),
            })
            .collect();
        if let Err(e) = engine.store().record_tool_outcomes_ending(
            conversation_id,
            message_id,
            None,
            &outcomes,
            Some(&note),
            now,
        ) {
            tracing::error!("recording tool results: {e:#}");
        }
        engine.notify(NoticeKind::Failed, Some(conversation_id), note);
        engine.emit(Event::Conversation(conversation_id));
        return;
    }
    let policy = engine.approval_policy();
    let mut immediate = Vec::new();
    let mut mcp_calls = Vec::new();
    // What is stored and asked about has the configured secrets replaced;
    // a call that runs at once gets the arguments the model sent. One that
    // waits for approval runs as it was approved (as stored).
    let secrets = engine.secrets();
    let shown: Vec<ToolCall> = calls.iter().map(|c| redact_call(c, &secrets)).collect();
    for (sent, call) in calls.iter().zip(&shown) {
        if let Some(server) = engine.mcp().server_of(&call.name) {
            if engine.mcp().lacks(&call.name) {
                let msg = format!(
                    "unknown tool {}: the MCP server {server} has no such tool",
                    call.name
                );
                immediate.push(error_outcome(call, error_result(&msg)));
                continue;
            }
            if let Err(msg) = crate::mcp::call_arguments(&call.arguments) {
                immediate.push(error_outcome(call, error_result(&msg)));
                continue;
            }
            let read_only = engine.mcp().read_only(&call.name);
            match policy.decide_tool(&call.name, read_only) {
                Decision::Deny => immediate.push(error_outcome(call, refused(&call.name))),
                Decision::Allow => mcp_calls.push(sent),
                Decision::Ask => ask(
                    engine,
                    conversation_id,
                    message_id,
                    call,
                    &mcp_summary(call),
                    now,
                ),
            }
            continue;
        }
        let decision = policy.decide(&call.name);
        if decision == Decision::Deny {
            immediate.push(error_outcome(call, refused(&call.name)));
            continue;
        }
        match propose(engine, conversation_id, call) {
            Err(msg) => immediate.push(error_outcome(call, error_result(&msg))),
            Ok(p) if decision == Decision::Ask => {
                ask(engine, conversation_id, message_id, call, &p.summary(), now)
            }
            Ok(p) => immediate.push(execute(engine, conversation_id, call, &p)),
        }
    }
    // Allowed MCP calls run at once, side by side (the approvals above are
    // already saved, so the conversation waits for them too). A stop that
    // came once the reply was read runs none of them.
    let stopped_already = *stop.borrow() == Some(super::StopReason::User);
    let mut stopped: Vec<&str> = Vec::new();
    let mut rows = Vec::new();
    if stopped_already {
        for call in &mcp_calls {
            immediate.push(error_outcome(
                call,
                error_result("not run: stopped by the user"),
            ));
            stopped.push(call.name.as_str());
        }
    } else {
        let results = futures::future::join_all(mcp_calls.iter().map(|c| {
            engine.run_mcp_call(conversation_id, message_id, &c.id, &c.name, &c.arguments)
        }))
        .await;
        for (call, (ran, row)) in mcp_calls.iter().zip(results) {
            rows.push(row);
            match ran {
                Ran::Done(r) => immediate.push(mcp_outcome(&call.id, &call.name, r)),
                Ran::Stopped => {
                    immediate.push(error_outcome(call, super::running::stopped_result()));
                    stopped.push(call.name.as_str());
                }
            }
        }
    }
    let now = engine.now_ms();
    // A stopped call ends the turn, as a stopped reply does.
    let note = (!stopped.is_empty()).then(|| super::running::stopped_note(&stopped));
    if note.is_some() {
        engine.pause_after_stop(conversation_id);
    }
    if let Err(e) = engine.store().record_tool_outcomes_ending(
        conversation_id,
        message_id,
        None,
        &immediate,
        note.as_deref(),
        now,
    ) {
        tracing::error!("recording tool results: {e:#}");
    }
    drop(rows);
    engine.emit(Event::Outbox);
    engine.emit(Event::Conversation(conversation_id));
    engine.wake();
}

/// `call` with every configured secret in its arguments replaced by
/// `<redacted>`: what is stored, shown and asked about. Each string of the
/// arguments is redacted before JSON escapes could hide a secret; arguments
/// with no secret in them are kept as the model wrote them.
pub(crate) fn redact_call(call: &ToolCall, secrets: &[String]) -> ToolCall {
    fn scrub(v: &mut Value, secrets: &[String], changed: &mut bool) {
        match v {
            Value::String(s) => {
                let r = crate::llm::http::redact_secrets(s, secrets, false);
                if r != *s {
                    *s = r;
                    *changed = true;
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|v| scrub(v, secrets, changed)),
            Value::Object(o) => {
                let old = std::mem::take(o);
                for (k, mut v) in old {
                    let key = crate::llm::http::redact_secrets(&k, secrets, false);
                    *changed |= key != k;
                    scrub(&mut v, secrets, changed);
                    o.insert(key, v);
                }
            }
            _ => {}
        }
    }
    let mut changed = false;
    let arguments = match serde_json::from_str::<Value>(&call.arguments) {
        Ok(mut v) => {
            scrub(&mut v, secrets, &mut changed);
            if changed {
                v.to_string()
            } else {
                crate::llm::http::redact_secrets(&call.arguments, secrets, false)
            }
        }
        Err(_) => crate::llm::http::redact_secrets(&call.arguments, secrets, false),
    };
    ToolCall {
        arguments,
        ..call.clone()
    }
}

/// Save a waiting approval for `call` and tell the user.
fn ask(
    engine: &Engine,
    conversation_id: i64,
    message_id: i64,
    call: &ToolCall,
    summary: &str,
    now: i64,
) {
    let r = engine.store().add_approval(
        conversation_id,
        message_id,
        &call.id,
        &call.name,
        &call.arguments,
        summary,
        now,
    );
    match r {
        Ok(_) => engine.notify(
            NoticeKind::Approval,
            Some(conversation_id),
            format!("{} waits for your approval", call.name),
        ),
        Err(e) => tracing::error!("saving an approval: {e:#}"),
    }
}

/// What the approval card of an MCP call shows: the server, the tool and
/// the arguments as the model sent them.
pub fn mcp_summary(call: &ToolCall) -> String {
    let (server, tool) = call
        .name
        .split_once(crate::mcp::SEPARATOR)
        .unwrap_or(("", call.name.as_str()));
    let arguments = serde_json::from_str::<Value>(&call.arguments)
        .unwrap_or_else(|_| Value::String(call.arguments.clone()));
    json!({"server": server, "tool": tool, "arguments": arguments}).to_string()
}

/// The result an MCP call gives back (its text and images), recorded with
/// its approval if it had one.
pub(crate) fn mcp_outcome(call_id: &str, tool: &str, out: crate::mcp::CallOutcome) -> ToolOutcome {
    ToolOutcome {
        images: out.images,
        ..text_outcome(call_id, tool, out.text)
    }
}

/// A result with nothing but its text.
pub(crate) fn text_outcome(call_id: &str, tool: &str, result: String) -> ToolOutcome {
    ToolOutcome {
        call_id: call_id.to_string(),
        tool: tool.to_string(),
        result,
        task: None,
        cancel: None,
        series: None,
        end_series: None,
        images: Vec::new(),
    }
}

/// The user's answer to a waiting approval.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    Approve {
        /// Also save an `allow` rule for the tool.
        always: bool,
    },
    Deny {
        /// Why, passed to the model with the refusal.
        reason: Option<String>,
    },
}

/// The result a declined call gives the model.
fn declined(reason: Option<&str>) -> String {
    match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(r) => json!({"error": "the user declined this request", "reason": r}).to_string(),
        None => error_result("the user declined this request"),
    }
}

/// Answer a waiting approval; returns the approval as it was asked.
pub(crate) fn answer(
    engine: &Engine,
    approval_id: i64,
    answer: &Answer,
) -> Result<crate::store::Approval> {
    let a = engine
        .store()
        .approval(approval_id)?
        .ok_or_else(|| anyhow!("no approval {approval_id}"))?;
    if a.status != ApprovalStatus::Waiting {
        return Err(anyhow!("approval {approval_id} was already answered"));
    }
    let approve = matches!(answer, Answer::Approve { .. });
    let always = matches!(answer, Answer::Approve { always: true });
    if approve && engine.mcp().server_of(&a.tool).is_some() {
        // The process that dispatches runs the call (it owns the servers)
        // and records its result; until then the conversation waits.
        engine.store().approve_for_execution(
            a.id,
            always.then_some((super::policy::SAVED_RULES_KEY, a.tool.as_str())),
            engine.now_ms(),
        )?;
        engine.emit(Event::Conversation(a.conversation_id));
        return Ok(a);
    }
    let call = ToolCall {
        id: a.call_id.clone(),
        name: a.tool.clone(),
        arguments: a.arguments.clone(),
    };
    let outcome = if approve {
        match propose(engine, a.conversation_id, &call) {
            Ok(p) => {
                // Keep the time the user saw on the card (relative delays would drift).
                let p = match (p, serde_json::from_str::<Value>(&a.summary).ok()) {
                    (
                        Proposal::Schedule {
                            instruction,
                            title,
                            repeat,
                            ..
                        },
                        Some(s),
                    ) if s["due_at"].is_i64() => Proposal::Schedule {
                        instruction,
                        title,
                        due_at: s["due_at"].as_i64().unwrap_or(0),
                        repeat,
                    },
                    (p, _) => p,
                };
                execute(engine, a.conversation_id, &call, &p)
            }
            Err(msg) => error_outcome(&call, error_result(&msg)),
        }
    } else {
        let reason = match answer {
            Answer::Deny { reason } => reason.as_deref(),
            Answer::Approve { .. } => None,
        };
        error_outcome(&call, declined(reason))
    };
    let recorded = ApprovalAnswer {
        id: a.id,
        from: ApprovalStatus::Waiting,
        approved: approve,
        allow_always: matches!(answer, Answer::Approve { always: true })
            .then(|| (super::policy::SAVED_RULES_KEY.to_string(), a.tool.clone())),
    };
    engine.store().record_tool_outcomes(
        a.conversation_id,
        a.message_id,
        Some(&recorded),
        &[outcome],
        engine.now_ms(),
    )?;
    engine.emit(Event::Conversation(a.conversation_id));
    Ok(a)
}
