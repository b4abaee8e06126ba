//! The `outbox` table: every send is a row here before anything goes out.
//!
//! State machine: pending -> sending (claim, compare-and-swap) -> sent
//! (accepted, in the same transaction as the user message) | pending (transient
//! failure, with back-off) | failed. pending/failed/expired -> canceled by the user.

use anyhow::Result;
use rusqlite::{OptionalExtension, Row, params};
use serde::Serialize;

use super::messages::{NewMessage, Role, insert_message};
use super::{Store, sql_enum};

mod dispatch;
mod lists;
mod user;

pub use lists::{
    ItemSummary, ListCursor, ListFilter, ListFrom, OpenCounts, PendingAt, StreamingReply,
};
pub(crate) use user::lift_pause_if_nothing_held;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Typed now; sent as soon as the conversation is free.
    Queued,
    /// Scheduled by the user (`/later`, `/at`, `tock send --in/--at`).
    Message,
    /// Scheduled by the model (`schedule_task`).
    Task,
    /// Generate a reply from the history as it is (crash recovery, retry, tool results).
    Regenerate,
}

sql_enum::sql_enum!(Kind {
    Queued => "queued",
    Message => "message",
    Task => "task",
    Regenerate => "regenerate",
});

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pending,
    Sending,
    Sent,
    Failed,
    Canceled,
    Expired,
}

sql_enum::sql_enum!(Status {
    Pending => "pending",
    Sending => "sending",
    Sent => "sent",
    Failed => "failed",
    Canceled => "canceled",
    Expired => "expired",
});

impl Status {
    pub fn is_finished(self) -> bool {
        matches!(self, Status::Sent | Status::Canceled)
    }

    /// Failed or expired: unfinished, but sent only if retried.
    pub fn gave_up(self) -> bool {
        matches!(self, Status::Failed | Status::Expired)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct OutboxItem {
    pub id: i64,
    pub conversation_id: Option<i64>,
    pub kind: Kind,
    pub text: String,
    pub model_override: Option<String>,
    pub parts_json: Option<String>,
    pub due_at: Option<i64>,
    pub status: Status,
    pub attempts: i64,
    pub last_error: Option<String>,
    pub next_attempt_at: Option<i64>,
    pub priority: i64,
    pub claimed_by: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub sent_at: Option<i64>,
    pub title: Option<String>,
    pub payload_json: Option<String>,
    /// The recurring series this row is an occurrence of.
    pub series_id: Option<i64>,
    /// The occurrence instant it stands for (unique within its series).
    pub occurrence_at: Option<i64>,
}

pub(super) const COLS: &str = "id, conversation_id, kind, text, model_override, parts_json, due_at, status, attempts, \
                    last_error, next_attempt_at, priority, claimed_by, created_at, updated_at, sent_at, title, payload_json, \
                    series_id, occurrence_at";

/// How the user message a scheduled task sends begins (the model is told
/// so; the views tell it from what the user typed by it).
pub const TASK_TURN_PREFIX: &str = "[Scheduled task]";

impl OutboxItem {
    pub(super) fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            id: r.get(0)?,
            conversation_id: r.get(1)?,
            kind: r.get(2)?,
            text: r.get(3)?,
            model_override: r.get(4)?,
            parts_json: r.get(5)?,
            due_at: r.get(6)?,
            status: r.get(7)?,
            attempts: r.get(8)?,
            last_error: r.get(9)?,
            next_attempt_at: r.get(10)?,
            priority: r.get(11)?,
            claimed_by: r.get(12)?,
            created_at: r.get(13)?,
            updated_at: r.get(14)?,
            sent_at: r.get(15)?,
            title: r.get(16)?,
            payload_json: r.get(17)?,
            series_id: r.get(18)?,
            occurrence_at: r.get(19)?,
        })
    }

    /// When the scheduler may next try it (ignoring whether the conversation is busy).
    pub fn ready_at(&self) -> i64 {
        self.due_at
            .unwrap_or(0)
            .max(self.next_attempt_at.unwrap_or(0))
    }

    /// Whether its user message has entered the conversation (the provider
    /// accepted it once). A pending row that is accepted is a reply being
    /// generated again after a failure, not a message waiting to go out.
    pub fn accepted(&self) -> bool {
        self.sent_at.is_some()
    }

    /// A message the user typed to go now: stopped before the model took
    /// it, it is held (paused, in its conversation) rather than failed,
    /// and a front end may give it back to its composer.
    pub fn held_when_stopped_unsent(&self) -> bool {
        self.kind == Kind::Queued && self.due_at.is_none()
    }

    /// The text a user message carries when this item is sent.
    pub fn user_text(&self) -> Option<String> {
        match self.kind {
            Kind::Regenerate => None,
            Kind::Task => Some(format!("{TASK_TURN_PREFIX} {}", self.text)),
            Kind::Queued | Kind::Message => Some(self.text.clone()),
        }
    }
}

/// A new outbox row.
#[derive(Clone, Debug)]
pub struct NewItem {
    pub conversation_id: Option<i64>,
    pub kind: Kind,
    pub text: String,
    pub model_override: Option<String>,
    pub parts_json: Option<String>,
    pub due_at: Option<i64>,
    pub title: Option<String>,
    pub payload_json: Option<String>,
    pub priority: i64,
}

impl NewItem {
    /// A message the user sends: queued now, or a scheduled message at `due_at`.
    pub fn message(conversation_id: i64, text: impl Into<String>, due_at: Option<i64>) -> Self {
        let kind = if due_at.is_some() {
            Kind::Message
        } else {
            Kind::Queued
        };
        let mut item = Self::new(conversation_id, kind, text);
        item.due_at = due_at;
        item
    }

    pub fn new(conversation_id: i64, kind: Kind, text: impl Into<String>) -> Self {
        Self {
            conversation_id: Some(conversation_id),
            kind,
            text: text.into(),
            model_override: None,
            parts_json: None,
            due_at: None,
            title: None,
            payload_json: None,
            priority: 0,
        }
    }
}

/// What start-up recovery found and did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Recovery {
    /// Rows left in `sending` by a dead dispatcher, put back to pending.
    pub reset_sending: Vec<i64>,
    /// Replies cut by a crash; a regeneration was queued for each.
    pub interrupted_replies: Vec<i64>,
    /// Rows late by more than the grace period, now expired.
    pub expired: Vec<OutboxItem>,
    /// Tool calls saved with a reply but never answered (a crash between the
    /// two writes): answered with an error the model can read, and continued.
    pub unanswered_calls: Vec<String>,
}

/// The queue position of a reply to tool results: before anything a user
/// put first (1: sent now, retried, an edit resent), which would otherwise
/// go between the calls' results and the model's answer to them.
const CONTINUATION_PRIORITY: i64 = 2;

/// Lets the model continue after the tool calls of assistant message
/// `message_id` have outcomes: a regeneration first in the conversation's
/// queue, unless an approval of those calls still waits or runs, or a
/// continuation is already queued or being sent. Whoever records the last
/// outcome calls this (the user's answer, the turn's own calls, start-up
/// recovery), and two of them can each find themselves last: the model is
/// asked once.
pub(crate) fn continue_after_tools(
    conn: &rusqlite::Connection,
    conversation_id: i64,
    message_id: i64,
    now: i64,
) -> rusqlite::Result<()> {
    let waiting: bool = conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM approvals WHERE message_id = ?1 AND status IN ('waiting', 'executing'))
             OR EXISTS(SELECT 1 FROM outbox WHERE conversation_id = ?2 AND kind = 'regenerate' AND status IN ('pending','sending'))",
        params![message_id, conversation_id],
        |r| r.get(0),
    )?;
    if !waiting {
        let mut item = NewItem::new(conversation_id, Kind::Regenerate, "");
        item.priority = CONTINUATION_PRIORITY;
        let id = insert_item(conn, &item, now)?;
        // The turn goes on with the model that made the calls (`/with`).
        take_model_of(conn, id, message_id)?;
    }
    Ok(())
}

/// Outbox row `id` goes to the model message `message_id` went to (or came
/// from) when that was not the conversation's (`/with MODEL`).
pub(crate) fn take_model_of(
    conn: &rusqlite::Connection,
    id: i64,
    message_id: i64,
) -> rusqlite::Result<()> {
    conn.execute(
        "UPDATE outbox SET model_override = (
             SELECT o.model_override FROM messages m JOIN outbox o ON o.id = m.outbox_id
             WHERE m.id = ?2)
         WHERE id = ?1",
        params![id, message_id],
    )?;
    Ok(())
}

pub(crate) fn insert_item(
    conn: &rusqlite::Connection,
    item: &NewItem,
    now: i64,
) -> rusqlite::Result<i64> {
    conn.execute(
        "INSERT INTO outbox (conversation_id, kind, text, model_override, parts_json, due_at, status,
                             priority, created_at, updated_at, title, payload_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7, ?8, ?8, ?9, ?10)",
        params![
            item.conversation_id,
            item.kind.as_str(),
            item.text,
            item.model_override,
            item.parts_json,
            item.due_at,
            item.priority,
            now,
            item.title,
            item.payload_json
        ],
    )?;
    Ok(conn.last_insert_rowid())
}

/// The newest reply of each conversation that made tool calls: every call must
/// have a result or a pending approval, or the conversation would stall.
fn recover_unanswered_calls(
    tx: &rusqlite::Transaction<'_>,
    now: i64,
    rec: &mut Recovery,
) -> rusqlite::Result<()> {
    let replies: Vec<(i64, i64, String)> = {
        let mut st = tx.prepare(
            // The newest reply of each conversation (an index lookup each),
            // not a scan of every message.
            "SELECT m.id, m.conversation_id, m.tool_calls_json FROM conversations c
             JOIN messages m ON m.id = (SELECT MAX(id) FROM messages WHERE conversation_id = c.id AND role = 'assistant')
             WHERE m.status = 'complete' AND m.tool_calls_json IS NOT NULL
             ORDER BY m.id",
        )?;
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?
    };
    for (msg, conv, json) in replies {
        let calls: Vec<serde_json::Value> = serde_json::from_str(&json).unwrap_or_default();
        let mut answered_any_now = false;
        for call in &calls {
            let Some(id) = call.get("id").and_then(|v| v.as_str()) else {
                continue;
            };
            let name = call.get("name").and_then(|v| v.as_str()).unwrap_or("");
            // A result after this reply: providers reuse call ids from reply
            // to reply (`call_1`), so an earlier reply's result is not this
            // call's.
            let answered: bool = tx.query_row(
                "SELECT EXISTS(SELECT 1 FROM messages WHERE conversation_id = ?1 AND role = 'tool' AND tool_call_id = ?2 AND id > ?3)
                     OR EXISTS(SELECT 1 FROM approvals WHERE message_id = ?3 AND call_id = ?2)",
                params![conv, id, msg],
                |r| r.get(0),
            )?;
            if !answered {
                // tock's own tools act in the transaction that records their
                // result, so nothing was done. Any other tool is an MCP
                // server's, run without asking: it may have been running when
                // tock stopped, so it may have taken effect. It is not run
                // again.
                use crate::engine::tools::{CANCEL_SCHEDULED, LIST_SCHEDULED, SCHEDULE_TASK};
                let own = [SCHEDULE_TASK, LIST_SCHEDULED, CANCEL_SCHEDULED].contains(&name);
                let result = if own {
                    serde_json::json!({"error": "tock stopped before this call was handled; nothing was done — call it again if still wanted"})
                } else {
                    serde_json::json!({"error": "tock stopped while this call was being handled and its result was lost; it may or may not have taken effect, and it was not run again — check before calling it again"})
                }
                .to_string();
                insert_message(
                    tx,
                    conv,
                    &NewMessage {
                        role: Some(Role::Tool),
                        content: &result,
                        tool_call_id: Some(id),
                        model: Some(name),
                        ..Default::default()
                    },
                    now,
                )?;
                rec.unanswered_calls.push(id.to_string());
                answered_any_now = true;
            }
        }
        if answered_any_now {
            continue_after_tools(tx, conv, msg, now)?;
        }
    }
    Ok(())
}

/// Pending rows not accepted yet whose time (`COALESCE(due_at, created_at)`)
/// is before `?1`: the two ranges of `outbox_status_due` (scheduled before,
/// or as soon as possible and created before), not every pending row.
const OVERDUE: &str = "id IN (SELECT id FROM outbox WHERE status = 'pending' AND due_at < ?1
                              UNION ALL
                              SELECT id FROM outbox WHERE status = 'pending' AND due_at IS NULL AND created_at < ?1)
                       AND kind != 'regenerate' AND sent_at IS NULL";

/// Pending rows late by more than the grace period become expired. Rows whose
/// user message is already in the history (a reply being retried) never
/// expire: they have reached their conversation.
fn expire_overdue(
    tx: &rusqlite::Transaction<'_>,
    now: i64,
    grace_ms: i64,
    reason: &str,
) -> rusqlite::Result<Vec<OutboxItem>> {
    let expired = {
        let mut st = tx.prepare(&format!(
            "SELECT {COLS} FROM outbox WHERE {OVERDUE} ORDER BY due_at, id"
        ))?;
        st.query_map([now - grace_ms], OutboxItem::from_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?
    };
    tx.execute(
        &format!(
            "UPDATE outbox SET status = 'expired', last_error = ?2, updated_at = ?3 WHERE {OVERDUE}"
        ),
        params![now - grace_ms, reason, now],
    )?;
    Ok(expired)
}

impl Store {
    pub fn enqueue(&self, item: &NewItem, now: i64) -> Result<i64> {
        Ok(insert_item(&self.conn(), item, now)?)
    }

    pub fn item(&self, id: i64) -> Result<Option<OutboxItem>> {
        let conn = self.conn();
        Ok(conn
            .query_row(
                &format!("SELECT {COLS} FROM outbox WHERE id = ?1"),
                [id],
                OutboxItem::from_row,
            )
            .optional()?)
    }

    fn query_items(&self, sql_where: &str, p: impl rusqlite::Params) -> Result<Vec<OutboxItem>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(&format!("SELECT {COLS} FROM outbox {sql_where}"))?;
        let rows = st.query_map(p, OutboxItem::from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Start-up recovery, run by a dispatcher right after it takes the lease.
    pub fn recover(&self, now: i64, grace_ms: i64) -> Result<Recovery> {
        self.recover_as(now, grace_ms, None)
    }

    /// Recovery as dispatcher `me`: claims and replies that `me` still holds
    /// are live (its turns are running) and are left alone; only those of a
    /// dispatcher that is gone are recovered.
    pub fn recover_as(&self, now: i64, grace_ms: i64, me: Option<&str>) -> Result<Recovery> {
        let me = me.unwrap_or("");
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let mut rec = Recovery::default();
        {
            let mut st = tx.prepare(
                "SELECT id FROM outbox WHERE status = 'sending' AND COALESCE(claimed_by, '') != ?1",
            )?;
            rec.reset_sending = st
                .query_map([me], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
        }
        tx.execute(
            "UPDATE outbox SET status = 'pending', claimed_by = NULL, updated_at = ?1
             WHERE status = 'sending' AND COALESCE(claimed_by, '') != ?2",
            params![now, me],
        )?;
        // Calls a dispatcher that is gone was running: they run no more
        // (what their conversations read is settled below).
        tx.execute("DELETE FROM tool_runs WHERE owner != ?1", [me])?;
        let streaming: Vec<(i64, i64, Option<i64>)> = {
            let mut st = tx.prepare(
                "SELECT m.id, m.conversation_id, m.outbox_id FROM messages m
                 LEFT JOIN outbox o ON o.id = m.outbox_id
                 WHERE m.status = 'streaming' AND COALESCE(o.claimed_by, '') != ?1",
            )?;
            st.query_map([me], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect::<rusqlite::Result<_>>()?
        };
        for (msg, conv, row) in streaming {
            tx.execute(
                "UPDATE messages SET status = 'interrupted', error = 'tock stopped while this reply was streaming' WHERE id = ?1",
                [msg],
            )?;
            // The row the reply answered generates it again (its user message
            // stays where it is). A crash is not the provider's failure, so
            // the attempt is given back.
            let again = match row {
                Some(id) => tx.execute(
                    "UPDATE outbox SET status = 'pending', claimed_by = NULL, priority = 1, next_attempt_at = NULL,
                            attempts = MAX(attempts - 1, 0), updated_at = ?2
                     WHERE id = ?1 AND status = 'sent'",
                    params![id, now],
                )?,
                None => 0,
            };
            if again == 0 {
                let mut item = NewItem::new(conv, Kind::Regenerate, "");
                item.priority = 1;
                insert_item(&tx, &item, now)?;
            }
            rec.interrupted_replies.push(msg);
        }
        recover_unanswered_calls(&tx, now, &mut rec)?;
        rec.expired = expire_overdue(&tx, now, grace_ms, "not sent in time: tock was not running")?;
        tx.commit()?;
        Ok(rec)
    }

    /// After the machine slept (the wall clock leapt ahead of the monotonic
    /// clock): the same grace rule as at start-up. Returns the expired rows.
    pub fn expire_after_sleep(&self, now: i64, grace_ms: i64) -> Result<Vec<OutboxItem>> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let expired = expire_overdue(
            &tx,
            now,
            grace_ms,
            "not sent in time: the computer was asleep when it was due",
        )?;
        tx.commit()?;
        Ok(expired)
    }

    /// Delete finished rows last changed before `before`. Returns how many.
    /// Also deletes ended recurring series last changed before `before`.
    pub fn prune(&self, before: i64) -> Result<usize> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        // The newest sent occurrence of each series stays: it is what tells
        // an older failed occurrence that it was overtaken (never retried).
        let rows = tx.execute(
            "DELETE FROM outbox WHERE status IN ('sent', 'canceled') AND updated_at < ?1
               AND NOT (status = 'sent' AND series_id IS NOT NULL
                        AND occurrence_at = (SELECT MAX(o.occurrence_at) FROM outbox o
                                             WHERE o.series_id = outbox.series_id AND o.status = 'sent'))",
            [before],
        )?;
        let series = tx.execute(
            "DELETE FROM series WHERE status = 'ended' AND updated_at < ?1",
            [before],
        )?;
        tx.commit()?;
        Ok(rows + series)
    }
}
