//! Tool calls waiting for the user's approval.

use anyhow::{Result, anyhow};
use rusqlite::{OptionalExtension, Row, params};

use super::messages::{NewMessage, Role, insert_message};
use super::outbox::{NewItem, continue_after_tools, insert_item};
use super::{Store, sql_enum};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApprovalStatus {
    Waiting,
    /// Approved; the call (an MCP tool's) has not given its result yet. The
    /// process that dispatches runs it; its conversation waits as for `Waiting`.
    Executing,
    Approved,
    Denied,
    Done,
}

sql_enum::sql_enum!(ApprovalStatus {
    Waiting => "waiting",
    Executing => "executing",
    Approved => "approved",
    Denied => "denied",
    Done => "done",
});

#[derive(Clone, Debug, PartialEq)]
pub struct Approval {
    pub id: i64,
    pub conversation_id: i64,
    pub message_id: i64,
    pub call_id: String,
    pub tool: String,
    pub arguments: String,
    pub summary: String,
    pub status: ApprovalStatus,
    pub result: Option<String>,
    pub outbox_id: Option<i64>,
    pub created_at: i64,
}

const COLS: &str = "id, conversation_id, message_id, call_id, tool, arguments, summary, status, result, outbox_id, created_at";

impl Approval {
    fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            id: r.get(0)?,
            conversation_id: r.get(1)?,
            message_id: r.get(2)?,
            call_id: r.get(3)?,
            tool: r.get(4)?,
            arguments: r.get(5)?,
            summary: r.get(6)?,
            status: r.get(7)?,
            result: r.get(8)?,
            outbox_id: r.get(9)?,
            created_at: r.get(10)?,
        })
    }
}

/// The user's answer to one approval, recorded with its outcome.
#[derive(Clone, Debug)]
pub struct ApprovalAnswer {
    pub id: i64,
    /// The status the row must still have (`Waiting` for the user's answer,
    /// `Executing` for the result of an approved call).
    pub from: ApprovalStatus,
    pub approved: bool,
    /// Save an `allow` rule for this tool in the same transaction
    /// (`tock approve --always`): (settings key, tool name).
    pub allow_always: Option<(String, String)>,
}

/// The outcome of one tool call, written back into the conversation.
#[derive(Clone, Debug)]
pub struct ToolOutcome {
    pub call_id: String,
    pub tool: String,
    pub result: String,
    /// A task row to create with it (approved `schedule_task`).
    pub task: Option<NewItem>,
    /// An outbox row to cancel with it (approved `cancel_scheduled`).
    pub cancel: Option<i64>,
    /// A recurring series to create with it (approved `schedule_task` with `repeat`).
    pub series: Option<super::NewSeries>,
    /// A series to end with it (approved `cancel_scheduled` of a recurring task).
    pub end_series: Option<i64>,
    /// Images the tool returned, stored with the tool message as its
    /// attachments (`parts_json`, as a user message's).
    pub images: Vec<crate::llm::Image>,
}

impl ToolOutcome {
    /// The images as stored attachments (`None` without any).
    fn parts_json(&self) -> Result<Option<String>> {
        if self.images.is_empty() {
            return Ok(None);
        }
        let parts: Vec<crate::engine::Part> = self
            .images
            .iter()
            .enumerate()
            .map(|(i, img)| crate::engine::Part::Image {
                name: format!("{} image {}", self.tool, i + 1),
                mime: img.mime.clone(),
                data_base64: img.data_base64.clone(),
            })
            .collect();
        Ok(Some(serde_json::to_string(&parts)?))
    }
}

impl Store {
    #[allow(clippy::too_many_arguments)]
    pub fn add_approval(
        &self,
        conversation_id: i64,
        message_id: i64,
        call_id: &str,
        tool: &str,
        arguments: &str,
        summary: &str,
        now: i64,
    ) -> Result<i64> {
        let conn = self.conn();
        conn.execute(
            "INSERT INTO approvals (conversation_id, message_id, call_id, tool, arguments, summary, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)",
            params![conversation_id, message_id, call_id, tool, arguments, summary, now],
        )?;
        Ok(conn.last_insert_rowid())
    }

    pub fn approval(&self, id: i64) -> Result<Option<Approval>> {
        Ok(self
            .conn()
            .query_row(
                &format!("SELECT {COLS} FROM approvals WHERE id = ?1"),
                [id],
                Approval::from_row,
            )
            .optional()?)
    }

    /// Approvals of a conversation (all states), oldest first.
    pub fn approvals(&self, conversation_id: i64) -> Result<Vec<Approval>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(&format!(
            "SELECT {COLS} FROM approvals WHERE conversation_id = ?1 ORDER BY id"
        ))?;
        let rows = st.query_map([conversation_id], Approval::from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Approved calls whose result is still to come, oldest first.
    pub fn executing_approvals(&self) -> Result<Vec<Approval>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(&format!(
            "SELECT {COLS} FROM approvals WHERE status = 'executing' ORDER BY id"
        ))?;
        let rows = st.query_map([], Approval::from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The user approved a call that the dispatching process runs: the row
    /// becomes `executing` (compare-and-swap from `waiting`, so of two answers
    /// one has an effect), with the `--always` rule saved in the same
    /// transaction.
    pub fn approve_for_execution(
        &self,
        id: i64,
        allow_always: Option<(&str, &str)>,
        now: i64,
    ) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let n = tx.execute(
            "UPDATE approvals SET status = 'executing', updated_at = ?2 WHERE id = ?1 AND status = 'waiting'",
            params![id, now],
        )?;
        if n != 1 {
            return Err(anyhow!("approval {id} was already answered"));
        }
        if let Some((key, tool)) = allow_always {
            save_allow_rule(&tx, key, tool)?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The dispatcher is about to run an approved call: count the run
    /// (while the row is still `executing`) and return how many runs there
    /// have been, this one included. More than one means an earlier run
    /// never recorded its result (its process was killed during the call,
    /// or the write failed).
    /// `None`: the row is no longer `executing` (it must not run).
    pub fn start_execution(&self, id: i64, now: i64) -> Result<Option<i64>> {
        Ok(self
            .conn()
            .query_row(
                "UPDATE approvals SET runs = runs + 1, updated_at = ?2
                 WHERE id = ?1 AND status = 'executing' RETURNING runs",
                params![id, now],
                |r| r.get(0),
            )
            .optional()?)
    }

    pub fn waiting_approvals(&self) -> Result<Vec<Approval>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(&format!(
            "SELECT {COLS} FROM approvals WHERE status = 'waiting' ORDER BY id"
        ))?;
        let rows = st.query_map([], Approval::from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Record tool outcomes of one assistant turn atomically: the tool messages,
    /// any task row or cancellation, resolution of the approval (if any), and —
    /// once no approval of that assistant message is still waiting — the
    /// regeneration that lets the model continue. Returns the new task ids.
    pub fn record_tool_outcomes(
        &self,
        conversation_id: i64,
        message_id: i64,
        approval: Option<&ApprovalAnswer>,
        outcomes: &[ToolOutcome],
        now: i64,
    ) -> Result<Vec<i64>> {
        self.record_tool_outcomes_ending(conversation_id, message_id, approval, outcomes, None, now)
    }

    /// [`Store::record_tool_outcomes`], or with `end_note`: the turn ends
    /// here — the note is added to the conversation (shown, never sent to the
    /// model) and no regeneration is queued.
    pub fn record_tool_outcomes_ending(
        &self,
        conversation_id: i64,
        message_id: i64,
        approval: Option<&ApprovalAnswer>,
        outcomes: &[ToolOutcome],
        end_note: Option<&str>,
        now: i64,
    ) -> Result<Vec<i64>> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        if let Some(a) = approval {
            // Compare-and-swap: of two answers (two processes at once), one
            // changes the row; the other changes nothing and rolls back.
            let n = tx.execute(
                "UPDATE approvals SET status = ?2, updated_at = ?3 WHERE id = ?1 AND status = ?4",
                params![
                    a.id,
                    if a.approved {
                        ApprovalStatus::Approved
                    } else {
                        ApprovalStatus::Denied
                    },
                    now,
                    a.from,
                ],
            )?;
            if n != 1 {
                return Err(anyhow!("approval {} was already answered", a.id));
            }
            if let Some((key, tool)) = &a.allow_always {
                save_allow_rule(&tx, key, tool)?;
            }
        }
        let mut task_ids = Vec::new();
        for o in outcomes {
            let mut result = o.result.clone();
            if let Some(task) = &o.task {
                let id = insert_item(&tx, task, now)?;
                task_ids.push(id);
                // The model learns the job id it can later cancel.
                result = result.replace("\"job_id\":0", &format!("\"job_id\":{id}"));
                if let Some(a) = approval {
                    tx.execute(
                        "UPDATE approvals SET outbox_id = ?2 WHERE id = ?1",
                        params![a.id, id],
                    )?;
                }
            }
            if let Some(series) = &o.series {
                let id = super::series::insert_series(&tx, series, now)?;
                task_ids.push(id);
                result = result.replace("\"job_id\":0", &format!("\"job_id\":{id}"));
            }
            if let Some(end) = o.end_series {
                super::series::end_series_in(&tx, end, now)?;
            }
            if let Some(cancel) = o.cancel {
                tx.execute(
                    "UPDATE outbox SET status = 'canceled', updated_at = ?2 WHERE id = ?1 AND status IN ('pending','failed','expired')",
                    params![cancel, now],
                )?;
            }
            if let Some(a) = approval {
                tx.execute(
                    "UPDATE approvals SET result = ?2 WHERE id = ?1",
                    params![a.id, result],
                )?;
            }
            // Answered: no longer running, in the same transaction.
            tx.execute(
                "DELETE FROM tool_runs WHERE conversation_id = ?1 AND call_id = ?2",
                params![conversation_id, o.call_id],
            )?;
            let parts_json = o.parts_json()?;
            insert_message(
                &tx,
                conversation_id,
                &NewMessage {
                    role: Some(Role::Tool),
                    content: &result,
                    tool_call_id: Some(&o.call_id),
                    model: Some(&o.tool),
                    parts_json: parts_json.as_deref(),
                    ..Default::default()
                },
                now,
            )?;
        }
        if let Some(note) = end_note {
            // The turn ends here: a call of the same reply still waiting for
            // an answer is not asked about any more (an answer would carry
            // the turn on), and the model reads that it never ran.
            let unanswered: Vec<(String, String)> = tx
                .prepare(
                    "UPDATE approvals SET status = 'denied', result = ?3, updated_at = ?2
                     WHERE message_id = ?1 AND status = 'waiting' RETURNING call_id, tool",
                )?
                .query_map(params![message_id, now, UNANSWERED_AT_END], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })?
                .collect::<rusqlite::Result<_>>()?;
            for (call_id, tool) in unanswered {
                insert_message(
                    &tx,
                    conversation_id,
                    &NewMessage {
                        role: Some(Role::Tool),
                        content: UNANSWERED_AT_END,
                        tool_call_id: Some(&call_id),
                        model: Some(&tool),
                        ..Default::default()
                    },
                    now,
                )?;
            }
            insert_message(
                &tx,
                conversation_id,
                &NewMessage {
                    role: Some(Role::Notice),
                    content: note,
                    ..Default::default()
                },
                now,
            )?;
        } else {
            // The answer can come while the turn's allowed calls still run.
            continue_after_tools(&tx, conversation_id, message_id, now)?;
        }
        tx.commit()?;
        Ok(task_ids)
    }
}

/// The result a call waiting for approval gets when its turn ends first.
const UNANSWERED_AT_END: &str =
    r#"{"error":"not run: the turn ended before this call was answered"}"#;

/// Add `tool` to the saved `allow` rules under `key` (a JSON array).
fn save_allow_rule(tx: &rusqlite::Transaction<'_>, key: &str, tool: &str) -> Result<()> {
    let old: Option<String> = tx
        .query_row("SELECT value FROM settings WHERE key = ?1", [key], |r| {
            r.get(0)
        })
        .optional()?;
    let mut tools: Vec<String> = old
        .as_deref()
        .and_then(|v| serde_json::from_str(v).ok())
        .unwrap_or_default();
    if !tools.iter().any(|t| t == tool) {
        tools.push(tool.to_string());
        tx.execute(
            "INSERT INTO settings (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            params![key, serde_json::to_string(&tools)?],
        )?;
    }
    Ok(())
}
