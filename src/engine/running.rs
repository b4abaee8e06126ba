//! MCP calls while they run: each is written to `tool_runs` (so every
//! process on the database sees it, and can ask for it to stop) and kept
//! here with the way to stop it.
//!
//! A stop (Esc, `tock stop`) ends the call where it is: the call's future
//! is dropped, which tells the server to cancel the request (MCP's
//! `notifications/cancelled`), and the call's result is "stopped by the
//! user". The turn then ends as a stopped reply does: no further model
//! round is asked for, and the conversation's queue is paused. The call
//! may have done part of its work before it stopped; the model is told so.

use std::sync::atomic::Ordering;

use tokio::sync::watch;

use super::{Engine, lock};

/// What became of a call.
pub(crate) enum Ran {
    Done(crate::mcp::CallOutcome),
    /// The user stopped it while it ran.
    Stopped,
}

/// What the model reads for a call the user stopped.
pub(crate) fn stopped_result() -> String {
    serde_json::json!({
        "error": "stopped by the user while it ran",
        "note": "the call did not finish; what it did before it was stopped may have taken effect",
    })
    .to_string()
}

/// What the conversation shows (never sent to the model) after a turn
/// ended by a stopped call.
pub(crate) fn stopped_note(tools: &[&str]) -> String {
    format!(
        "The turn was ended: you stopped {} while it ran.",
        tools.join(", ")
    )
}

/// One running call, as [`Engine::stop_tool_calls`] finds it.
pub(crate) struct Running {
    pub conversation_id: i64,
    stop: watch::Sender<bool>,
}

impl Engine {
    /// Run an MCP call of `conversation_id`'s reply `message_id`, seen by
    /// every process while it runs, until it answers or is stopped.
    /// `record` writes its outcome; the call's row goes after it.
    pub(crate) async fn run_mcp_call(
        &self,
        conversation_id: i64,
        message_id: i64,
        call_id: &str,
        tool: &str,
        arguments: &str,
    ) -> (Ran, RunRow) {
        let (tx, mut rx) = watch::channel(false);
        let key = self.inner.next_run.fetch_add(1, Ordering::Relaxed);
        lock(&self.inner.running_calls).insert(
            key,
            Running {
                conversation_id,
                stop: tx,
            },
        );
        let row = match self.store().start_tool_run(
            conversation_id,
            message_id,
            call_id,
            tool,
            self.owner(),
            self.now_ms(),
        ) {
            Ok(id) => Some(id),
            Err(e) => {
                // It still runs, and Esc here still stops it.
                tracing::warn!("noting a running tool call: {e:#}");
                None
            }
        };
        // The front ends show it running (and Esc stops it).
        self.emit(super::Event::Conversation(conversation_id));
        let ran = tokio::select! {
            mut out = self.mcp().call(tool, arguments) => {
                // The server took out its own secrets; a model's key it
                // echoes (sent in the arguments) goes too.
                out.text = crate::llm::http::redact_secrets(&out.text, &self.secrets(), false);
                Ran::Done(out)
            }
            _ = rx.wait_for(|stop| *stop) => Ran::Stopped,
        };
        lock(&self.inner.running_calls).remove(&key);
        (
            ran,
            RunRow {
                engine: self.clone(),
                id: row,
            },
        )
    }

    /// Stop the MCP calls running here in the conversation. False if none runs.
    pub(crate) fn stop_tool_calls(&self, conversation_id: i64) -> bool {
        let mut any = false;
        for run in lock(&self.inner.running_calls).values() {
            if run.conversation_id == conversation_id {
                let _ = run.stop.send(true);
                any = true;
            }
        }
        any
    }

    /// Whether an MCP call of the conversation runs here now.
    pub fn runs_tool_call_in(&self, conversation_id: i64) -> bool {
        lock(&self.inner.running_calls)
            .values()
            .any(|r| r.conversation_id == conversation_id)
    }
}

/// The `tool_runs` row of a call that ended: removed once its outcome is
/// recorded (dropped), so no process sees the call neither running nor
/// answered in between.
pub(crate) struct RunRow {
    engine: Engine,
    id: Option<i64>,
}

impl Drop for RunRow {
    fn drop(&mut self) {
        if let Some(id) = self.id
            && let Err(e) = self.engine.store().end_tool_run(id)
        {
            tracing::warn!("removing a finished tool call's row: {e:#}");
        }
    }
}
