//! What the dispatching process does with approvals besides dispatching:
//! it runs the MCP calls the user approved (from any front end, any
//! process: the answer is a row, the call needs the servers this process
//! owns), and declines the calls nobody answered within `approval_timeout`.
//!
//! An approved call whose result was not recorded (the process was killed
//! during the call) is run again by the next dispatcher: a tool call may run
//! twice after a crash, never zero times. Each run is counted in the
//! approval row before it starts, so a second run is known, and its result
//! tells the model (and a notice the user) that the call may have taken
//! effect twice.

use serde_json::json;

use super::running::{self, Ran};
use super::{Engine, Event, NoticeKind, lock, tools};
use crate::store::ApprovalStatus;
use crate::store::approvals::ApprovalAnswer;

/// What the model reads first in the result of a call run again after a crash.
pub(crate) const RUN_AGAIN_NOTE: &str = "[note from tock: an earlier run of this call never saved its result (tock was stopped, or could not write, while it ran), so tock ran it again; its effects may have happened twice. The result of this run follows.]";

/// One pass; returns when the next waiting approval times out, if one will.
pub(crate) fn pass(engine: &Engine, now: i64) -> Option<i64> {
    run_approved(engine);
    decline_overdue(engine, now)
}

fn run_approved(engine: &Engine) {
    let approved = match engine.store().executing_approvals() {
        Ok(a) => a,
        Err(e) => {
            tracing::error!("reading approved calls: {e:#}");
            return;
        }
    };
    let only = engine.inner.options.only_conversation;
    for a in approved
        .into_iter()
        .filter(|a| only.is_none_or(|c| c == a.conversation_id))
    {
        if lock(&engine.inner.running_approvals)
            .insert(a.id, a.conversation_id)
            .is_some()
        {
            continue;
        }
        let runs = match engine.store().start_execution(a.id, engine.now_ms()) {
            Ok(Some(n)) => n,
            Ok(None) => {
                // Answered meanwhile (another process recorded it).
                lock(&engine.inner.running_approvals).remove(&a.id);
                continue;
            }
            Err(e) => {
                tracing::error!("starting approved call {}: {e:#}", a.id);
                lock(&engine.inner.running_approvals).remove(&a.id);
                continue;
            }
        };
        let again = runs > 1;
        engine.notify(
            NoticeKind::ToolRunning,
            Some(a.conversation_id),
            if again {
                format!(
                    "{} approved: running it again (an earlier run never saved its result)",
                    a.tool
                )
            } else {
                format!("{} approved: running it", a.tool)
            },
        );
        let e = engine.clone();
        let handle = tokio::spawn(async move {
            let (ran, row) = e
                .run_mcp_call(
                    a.conversation_id,
                    a.message_id,
                    &a.call_id,
                    &a.tool,
                    &a.arguments,
                )
                .await;
            let (outcome, note) = match ran {
                Ran::Done(mut out) => {
                    if again {
                        out.text = format!("{RUN_AGAIN_NOTE}\n{}", out.text);
                    }
                    (tools::mcp_outcome(&a.call_id, &a.tool, out), None)
                }
                // The turn ends, as a stopped reply's does.
                Ran::Stopped => {
                    e.pause_after_stop(a.conversation_id);
                    (
                        tools::text_outcome(&a.call_id, &a.tool, running::stopped_result()),
                        Some(running::stopped_note(&[a.tool.as_str()])),
                    )
                }
            };
            let recorded = ApprovalAnswer {
                id: a.id,
                from: ApprovalStatus::Executing,
                approved: true,
                allow_always: None,
            };
            if let Err(err) = e.store().record_tool_outcomes_ending(
                a.conversation_id,
                a.message_id,
                Some(&recorded),
                &[outcome],
                note.as_deref(),
                e.now_ms(),
            ) {
                tracing::error!("recording the result of approval {}: {err:#}", a.id);
            }
            drop(row);
            lock(&e.inner.running_approvals).remove(&a.id);
            e.emit(Event::Conversation(a.conversation_id));
            e.emit(Event::Outbox);
            e.wake();
        });
        let mut turns = lock(&engine.inner.turns);
        turns.retain(|h| !h.is_finished());
        turns.push(handle);
    }
}

fn decline_overdue(engine: &Engine, now: i64) -> Option<i64> {
    let cfg = engine.config().get();
    let limit = cfg.approvals.timeout_ms()?;
    let written = cfg
        .approvals
        .approval_timeout
        .as_deref()
        .unwrap_or_default()
        .trim()
        .to_string();
    let waiting = match engine.store().waiting_approvals() {
        Ok(w) => w,
        Err(e) => {
            tracing::error!("reading waiting approvals: {e:#}");
            return None;
        }
    };
    let mut next: Option<i64> = None;
    for a in waiting {
        let due = a.created_at.saturating_add(limit);
        if due > now {
            next = Some(next.map_or(due, |n| n.min(due)));
            continue;
        }
        let result = json!({
            "error": format!("not run: no answer within {written}"),
            "note": "the user did not answer this approval request in time; nothing was done",
        })
        .to_string();
        let recorded = ApprovalAnswer {
            id: a.id,
            from: ApprovalStatus::Waiting,
            approved: false,
            allow_always: None,
        };
        let outcome = tools::text_outcome(&a.call_id, &a.tool, result);
        match engine.store().record_tool_outcomes(
            a.conversation_id,
            a.message_id,
            Some(&recorded),
            &[outcome],
            now,
        ) {
            Ok(_) => {
                engine.notify(
                    NoticeKind::Info,
                    Some(a.conversation_id),
                    format!("{} was declined: no answer within {written}", a.tool),
                );
                engine.emit(Event::Conversation(a.conversation_id));
                engine.emit(Event::Outbox);
                engine.wake();
            }
            // Answered in the meantime (another process): nothing to do.
            Err(e) => tracing::debug!("approval {}: {e:#}", a.id),
        }
    }
    next
}
