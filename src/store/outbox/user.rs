//! What the user does to items and to a conversation's queue: cancel,
//! reschedule, edit, retry, send now, and the pause a stop or a failure
//! puts on the queue.

use anyhow::{Result, anyhow};
use rusqlite::{OptionalExtension, params};

use super::Status;
use crate::store::Store;

/// The rows of conversation `?1` a stop holds: queued to go as soon as
/// they can (pending, with no time of their own).
const HELD_BY_A_STOP: &str =
    "conversation_id = ?1 AND status = 'pending' AND due_at IS NULL AND kind != 'regenerate'";

/// With nothing left for it to hold, a conversation's pause goes: a queue
/// paused with nothing queued is no pause.
pub(crate) fn lift_pause_if_nothing_held(
    conn: &rusqlite::Connection,
    conversation_id: i64,
) -> rusqlite::Result<()> {
    conn.execute(
        &format!(
            "UPDATE conversations SET queue_paused_at = NULL
             WHERE id = ?1 AND queue_paused_at IS NOT NULL
               AND NOT EXISTS (SELECT 1 FROM outbox WHERE {HELD_BY_A_STOP})"
        ),
        [conversation_id],
    )?;
    Ok(())
}

impl Store {
    /// Change item `id` if its status is one of `from`; else say why not,
    /// naming its state as lists do and what `done` (`retried`) takes.
    fn user_update(
        &self,
        id: i64,
        done: &str,
        sql_set: &str,
        from: &[&str],
        p: &[&dyn rusqlite::ToSql],
    ) -> Result<()> {
        let conn = self.conn();
        let row: Option<(String, Option<i64>, Option<i64>, i64)> = conn
            .query_row(
                "SELECT status, conversation_id, due_at, updated_at FROM outbox WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .optional()?;
        let Some((status, conversation_id, due_at, updated_at)) = row else {
            // Series are listed among the items, so their ids are typed here
            // too. (The connection is let go first: `series` takes it.)
            drop(conn);
            if self.series(id)?.is_some() {
                return Err(anyhow!(
                    "#{id} is a recurring series, not an item; its occurrences are items that can be {done}"
                ));
            }
            return Err(anyhow!("no outbox item {id}"));
        };
        if !from.contains(&status.as_str()) {
            let shown = match status.as_str() {
                // Sent now (its time set to when that was said): queued.
                "pending" if due_at.is_some_and(|d| d > updated_at) => "scheduled",
                "pending" => "queued",
                "sending" => "being sent",
                other => other,
            };
            let takes = from
                .iter()
                .map(|s| if *s == "pending" { "waiting" } else { s })
                .collect::<Vec<_>>();
            let takes = match takes.as_slice() {
                [.., last] if takes.len() > 1 => {
                    format!("{} or {last}", takes[..takes.len() - 1].join(", "))
                }
                _ => takes.join(""),
            };
            return Err(anyhow!(
                "item {id} is {shown}; only {takes} items can be {done}"
            ));
        }
        let in_list = from
            .iter()
            .map(|s| format!("'{s}'"))
            .collect::<Vec<_>>()
            .join(",");
        let sql = format!("UPDATE outbox SET {sql_set} WHERE id = ?1 AND status IN ({in_list})");
        let mut params: Vec<&dyn rusqlite::ToSql> = vec![&id];
        params.extend_from_slice(p);
        let n = conn.execute(&sql, params.as_slice())?;
        if n != 1 {
            return Err(anyhow!("item {id} changed meanwhile; try again"));
        }
        // Cancelled, or given a time of its own: it may have been the last
        // row the pause held.
        if let Some(conv) = conversation_id {
            lift_pause_if_nothing_held(&conn, conv)?;
        }
        Ok(())
    }

    /// Cancel every row of the conversation queued to go at once and not
    /// yet in it (scheduled rows, and replies still owed, stay); and, with
    /// nothing left for it to hold, lift a stop's pause. Returns how many.
    pub fn cancel_queued(&self, conversation_id: i64, now: i64) -> Result<usize> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let n = tx.execute(
            "UPDATE outbox SET status = 'canceled', claimed_by = NULL, next_attempt_at = NULL, updated_at = ?2
             WHERE conversation_id = ?1 AND status = 'pending' AND due_at IS NULL
               AND sent_at IS NULL AND kind != 'regenerate'",
            params![conversation_id, now],
        )?;
        lift_pause_if_nothing_held(&tx, conversation_id)?;
        tx.commit()?;
        Ok(n)
    }

    pub fn cancel_item(&self, id: i64, now: i64) -> Result<()> {
        self.user_update(
            id,
            "canceled",
            "status = 'canceled', claimed_by = NULL, next_attempt_at = NULL, updated_at = ?2",
            &["pending", "failed", "expired"],
            &[&now],
        )
    }

    /// New due time; a failed/expired/canceled item becomes pending again.
    pub fn reschedule_item(&self, id: i64, due_at: i64, now: i64) -> Result<()> {
        self.user_update(
            id,
            "rescheduled",
            "status = 'pending', due_at = ?2, next_attempt_at = NULL, attempts = 0, last_error = NULL,
             kind = CASE kind WHEN 'queued' THEN 'message' ELSE kind END, updated_at = ?3",
            &["pending", "failed", "expired", "canceled"],
            &[&due_at, &now],
        )
    }

    pub fn edit_item(&self, id: i64, text: &str, now: i64) -> Result<()> {
        if text.trim().is_empty() {
            return Err(anyhow!("the text is empty"));
        }
        // Accepted: its text is in the conversation already. Pending or
        // failed, only its reply is still owed; else it is simply sent.
        if let Some(i) = self.item(id)?.filter(|i| i.accepted()) {
            return Err(if matches!(i.status, Status::Sent) {
                anyhow!("item {id} was sent; its text is in its conversation and cannot be changed")
            } else {
                anyhow!("item {id} is already in its conversation; only its reply is being retried")
            });
        }
        self.user_update(
            id,
            "edited",
            "text = ?2, updated_at = ?3",
            &["pending", "failed", "expired"],
            &[&text, &now],
        )
    }

    /// Every item waiting out a back-off tried now: the settings it failed
    /// with changed (a model's endpoint or key). The ids.
    pub fn end_back_offs(&self, now: i64) -> Result<Vec<i64>> {
        let conn = self.conn();
        let mut st = conn.prepare(
            "UPDATE outbox SET next_attempt_at = NULL, updated_at = ?1
             WHERE status = 'pending' AND next_attempt_at > ?1 RETURNING id",
        )?;
        let ids = st
            .query_map([now], |r| r.get(0))?
            .collect::<rusqlite::Result<Vec<i64>>>()?;
        Ok(ids)
    }

    /// An item waiting out a back-off (a 429's Retry-After of an hour)
    /// is tried again now, its attempts kept. False if it waits for none.
    pub fn end_back_off(&self, id: i64, now: i64) -> Result<bool> {
        Ok(self.conn().execute(
            "UPDATE outbox SET next_attempt_at = NULL, updated_at = ?2
             WHERE id = ?1 AND status = 'pending' AND next_attempt_at > ?2",
            params![id, now],
        )? == 1)
    }

    /// Retry a failed or expired item now.
    /// Send a failed, expired or canceled item again, first in its
    /// conversation: its place was before what was queued meanwhile (a
    /// scheduled one's due time becomes now, which alone sorted it last).
    /// Due now, it is the user's explicit send: a paused queue does not
    /// hold it (the pause may be another failed message's, which still
    /// holds what was queued behind that one).
    pub fn retry_item(&self, id: i64, now: i64) -> Result<()> {
        self.user_update(
            id,
            "retried",
            "status = 'pending', attempts = 0, next_attempt_at = NULL, last_error = NULL, priority = 1,
             due_at = ?2, updated_at = ?2",
            &["failed", "expired", "canceled"],
            &[&now],
        )
    }

    /// When a later occurrence of `id`'s series went out or is on its way,
    /// if `id` is an occurrence and one did.
    pub fn later_occurrence(&self, id: i64) -> Result<Option<i64>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT MIN(COALESCE(later.sent_at, later.occurrence_at)) FROM outbox AS this
                 JOIN outbox AS later ON later.series_id = this.series_id
                 WHERE this.id = ?1 AND later.occurrence_at > this.occurrence_at
                   AND later.kind != 'regenerate' AND later.status IN ('pending', 'sending', 'sent')",
                [id],
                |r| r.get(0),
            )
            .optional()?
            .flatten())
    }

    /// Whether a message of the conversation other than `except` could not
    /// be sent (failed before entering it): it holds what was queued after it.
    pub fn other_failed_message(&self, conversation_id: i64, except: i64) -> Result<bool> {
        // Only one that failed since the pause began holds it: one that
        // failed before a message went out since (which resumed the queue)
        // holds nothing, and retrying the one that made this pause left
        // the queue held, told as "stopped".
        Ok(self.conn().query_row(
            "SELECT EXISTS(SELECT 1 FROM outbox AS o INDEXED BY outbox_conversation
                 JOIN conversations AS c ON c.id = o.conversation_id
                 WHERE o.conversation_id = ?1 AND o.status = 'failed' AND o.id != ?2
                   AND o.sent_at IS NULL AND o.kind IN ('message', 'queued', 'task')
                   AND o.updated_at >= c.queue_paused_at - ?3)",
            params![conversation_id, except, super::super::UNSEEN_PAUSE_MS],
            |r| r.get(0),
        )?)
    }

    /// Whether a row of the conversation failed for good at or after `at`.
    pub fn failed_since(&self, conversation_id: i64, at: i64) -> Result<bool> {
        Ok(self.conn().query_row(
            "SELECT EXISTS(SELECT 1 FROM outbox INDEXED BY outbox_conversation
                 WHERE conversation_id = ?1 AND status = 'failed' AND updated_at >= ?2)",
            params![conversation_id, at],
            |r| r.get(0),
        )?)
    }

    /// Move a pause later, to `at`, so it holds what was queued until then.
    pub fn extend_pause(&self, conversation_id: i64, at: i64) -> Result<()> {
        self.conn().execute(
            "UPDATE conversations SET queue_paused_at = MAX(queue_paused_at, ?2)
             WHERE id = ?1 AND queue_paused_at IS NOT NULL",
            params![conversation_id, at],
        )?;
        Ok(())
    }

    /// Skip the queue: first in its conversation as soon as it is idle.
    pub fn send_now(&self, id: i64, now: i64) -> Result<()> {
        self.user_update(
            id,
            "sent now",
            "status = 'pending', priority = 1, due_at = ?2, next_attempt_at = NULL, attempts = 0, updated_at = ?2",
            &["pending", "failed", "expired"],
            &[&now],
        )
    }

    /// Pause the conversation's queue at `at` (a stop, a failed message),
    /// if anything waits in it to go at once: with nothing to hold there is
    /// no pause. True if it changed.
    pub fn pause_queue(&self, conversation_id: i64, at: i64) -> Result<bool> {
        let n = self.conn().execute(
            &format!(
                "UPDATE conversations SET queue_paused_at = ?2
                 WHERE id = ?1 AND queue_paused_at IS NULL
                   AND EXISTS (SELECT 1 FROM outbox WHERE {HELD_BY_A_STOP})"
            ),
            params![conversation_id, at],
        )?;
        Ok(n == 1)
    }
}
