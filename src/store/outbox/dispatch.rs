//! The dispatcher's side of the outbox: what is due, claiming a row, and
//! what became of a send (accepted, interrupted, retried, failed), and
//! regenerations.

use anyhow::{Result, anyhow};
use rusqlite::{OptionalExtension, params};

use super::OutboxItem;
use crate::store::Store;
use crate::store::messages::{MessageStatus, NewMessage, Role, insert_message};

/// How late a scheduled message is sent before its conversation says so.
const LATE_MS: i64 = 60_000;

impl Store {
    /// For each conversation, the first pending row that is due, if its back-off has
    /// passed. Rows of one conversation go in order: a head in back-off blocks the rest.
    /// A stop holds the rows whose place in the queue (`COALESCE(due_at,
    /// created_at)`) was at or before it: those waiting behind the stopped
    /// reply. Rows due later, or added since, go as usual.
    pub fn dispatchable(&self, now: i64) -> Result<Vec<OutboxItem>> {
        // The due rows are found through `outbox_status_due` in two ranges
        // (as soon as possible, due by now); written as one `OR`, SQLite
        // would read every pending row, scheduled ones too.
        let due = self.query_items(
            "WHERE id IN (SELECT id FROM outbox WHERE status = 'pending' AND due_at IS NULL
                          UNION ALL SELECT id FROM outbox WHERE status = 'pending' AND due_at <= ?1)
               AND (conversation_id IS NULL OR NOT EXISTS (
                    SELECT 1 FROM approvals a WHERE a.conversation_id = outbox.conversation_id AND a.status IN ('waiting', 'executing')))
               AND (conversation_id IS NULL OR NOT EXISTS (
                    SELECT 1 FROM conversations c WHERE c.id = outbox.conversation_id
                       AND outbox.due_at IS NULL AND outbox.created_at <= c.queue_paused_at))
             ORDER BY conversation_id, priority DESC, COALESCE(due_at, created_at), id",
            [now],
        )?;
        let mut heads: Vec<OutboxItem> = Vec::new();
        for item in due {
            let same_conv = item.conversation_id.is_some()
                && heads
                    .last()
                    .is_some_and(|h| h.conversation_id == item.conversation_id);
            if !same_conv {
                heads.push(item);
            }
        }
        heads.retain(|h| h.next_attempt_at.is_none_or(|t| t <= now));
        Ok(heads)
    }

    /// The earliest future instant at which a pending row becomes ready.
    pub fn next_ready_at(&self, now: i64) -> Result<Option<i64>> {
        Ok(self.conn().query_row(
            "SELECT MIN(MAX(COALESCE(due_at, 0), COALESCE(next_attempt_at, 0))) FROM outbox
             WHERE status = 'pending' AND MAX(COALESCE(due_at, 0), COALESCE(next_attempt_at, 0)) > ?1",
            [now],
            |r| r.get(0),
        )?)
    }

    /// Items that fell due in `(after, now]` in a conversation whose tool
    /// call waits for an answer (which holds it): `(id, conversation, what)`.
    /// Read through the due-time index, so a pass reads only what just fell due.
    pub fn due_behind_approval(&self, after: i64, now: i64) -> Result<Vec<(i64, i64, String)>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(
            "SELECT o.id, o.conversation_id, COALESCE(o.title, o.text) FROM outbox AS o INDEXED BY outbox_status_due
             WHERE o.status = 'pending' AND o.due_at > ?1 AND o.due_at <= ?2
               AND EXISTS (SELECT 1 FROM approvals AS a
                           WHERE a.conversation_id = o.conversation_id AND a.status = 'waiting')
             ORDER BY o.due_at, o.id",
        )?;
        let rows = st.query_map(params![after, now], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Compare-and-swap pending -> sending. False if someone else got it first.
    pub fn claim(&self, id: i64, owner: &str, now: i64) -> Result<bool> {
        let n = self.conn().execute(
            "UPDATE outbox SET status = 'sending', claimed_by = ?2, attempts = attempts + 1, updated_at = ?3
             WHERE id = ?1 AND status = 'pending'",
            params![id, owner, now],
        )?;
        Ok(n == 1)
    }

    /// Give a task whose conversation was deleted a new conversation (origin `schedule`).
    pub fn rehome(&self, id: i64, now: i64) -> Result<i64> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let (title, text): (Option<String>, String) =
            tx.query_row("SELECT title, text FROM outbox WHERE id = ?1", [id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
        let title = title.unwrap_or_else(|| crate::store::derive_title(&text));
        tx.execute(
            "INSERT INTO conversations (title, origin, created_at, updated_at) VALUES (?1, 'schedule', ?2, ?2)",
            params![title, now],
        )?;
        let conv = tx.last_insert_rowid();
        tx.execute(
            "UPDATE outbox SET conversation_id = ?2, updated_at = ?3 WHERE id = ?1",
            params![id, conv, now],
        )?;
        tx.commit()?;
        Ok(conv)
    }

    /// The provider accepted the request: in one transaction, mark the row sent,
    /// add the user message (unless it is a regeneration) and open the
    /// assistant message. Returns the assistant message id, or None when this
    /// dispatcher no longer owns the row (nothing is written then).
    pub fn accept(
        &self,
        item: &OutboxItem,
        owner: &str,
        model: &str,
        now: i64,
    ) -> Result<Option<i64>> {
        let conv = item
            .conversation_id
            .ok_or_else(|| anyhow!("outbox item {} has no conversation", item.id))?;
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let n = tx.execute(
            "UPDATE outbox SET status = 'sent', sent_at = COALESCE(sent_at, ?3), updated_at = ?3, last_error = NULL, next_attempt_at = NULL
             WHERE id = ?1 AND status = 'sending' AND claimed_by = ?2",
            params![item.id, owner, now],
        )?;
        if n != 1 {
            return Ok(None);
        }
        // A reply being retried after acceptance: its user message is already
        // in the history and must not enter it twice.
        let in_history: bool = tx.query_row(
            "SELECT EXISTS(SELECT 1 FROM messages WHERE outbox_id = ?1 AND role = 'user')",
            [item.id],
            |r| r.get(0),
        )?;
        if let Some(text) = item.user_text().filter(|_| !in_history) {
            // Sent well after its time (tock was not running, the machine
            // slept, the conversation was busy): the conversation says so,
            // where the message would otherwise read as sent when it was due.
            if let Some(due) = item.due_at.filter(|d| now - d >= LATE_MS) {
                let late = crate::when::compact_span(((now - due) / 1000).unsigned_abs().into());
                insert_message(
                    &tx,
                    conv,
                    &NewMessage {
                        role: Some(Role::Notice),
                        content: &format!("the next message was sent {late} after it was due"),
                        ..Default::default()
                    },
                    now,
                )?;
            }
            insert_message(
                &tx,
                conv,
                &NewMessage {
                    role: Some(Role::User),
                    content: &text,
                    outbox_id: Some(item.id),
                    parts_json: item.parts_json.as_deref(),
                    ..Default::default()
                },
                now,
            )?;
            // Untitled conversations take their title from the first message.
            crate::store::conversations::title_untitled(
                &tx,
                conv,
                item.title.as_deref().unwrap_or(&item.text),
            )?;
        }
        let reply = insert_message(
            &tx,
            conv,
            &NewMessage {
                role: Some(Role::Assistant),
                content: "",
                model: Some(model),
                outbox_id: Some(item.id),
                status: Some(MessageStatus::Streaming),
                ..Default::default()
            },
            now,
        )?;
        tx.commit()?;
        Ok(Some(reply))
    }

    /// A reply failed after the provider accepted the request. In one
    /// transaction: the partial reply is kept, marked interrupted with
    /// `reason`; the row goes back to pending (first in its conversation, not
    /// before `retry_at`) to generate the reply again, or, with no `retry_at`,
    /// becomes failed with `error`. False (nothing written) when the reply is
    /// no longer this dispatcher's (recovered or taken over meanwhile).
    #[allow(clippy::too_many_arguments)]
    pub fn reply_interrupted(
        &self,
        item_id: i64,
        owner: &str,
        reply_id: i64,
        content: &str,
        reason: &str,
        retry_at: Option<i64>,
        error: &str,
        now: i64,
    ) -> Result<bool> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let n = tx.execute(
            "UPDATE messages SET content = ?2, status = 'interrupted', error = ?3 WHERE id = ?1 AND status = 'streaming'",
            params![reply_id, content, reason],
        )?;
        if n != 1 {
            return Ok(false);
        }
        let conv: Option<i64> = tx
            .query_row(
                "SELECT conversation_id FROM messages WHERE id = ?1",
                [reply_id],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(conv) = conv {
            Store::touch_conversation(&tx, conv, now)?;
        }
        match retry_at {
            Some(at) => tx.execute(
                "UPDATE outbox SET status = 'pending', claimed_by = NULL, priority = 1, last_error = ?3,
                        next_attempt_at = ?4, updated_at = ?5
                 WHERE id = ?1 AND status = 'sent' AND claimed_by = ?2",
                params![item_id, owner, error, at, now],
            )?,
            None => tx.execute(
                "UPDATE outbox SET status = 'failed', claimed_by = NULL, last_error = ?3, next_attempt_at = NULL, updated_at = ?4
                 WHERE id = ?1 AND status = 'sent' AND claimed_by = ?2",
                params![item_id, owner, error, now],
            )?,
        };
        tx.commit()?;
        Ok(true)
    }

    /// Generate the reply of a sent item again (its last reply was cut or
    /// stopped): back to pending, first in its conversation, a fresh attempt
    /// budget. Refused when the conversation has moved on since.
    pub fn retry_reply(&self, id: i64, now: i64) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let row: Option<(String, Option<i64>)> = tx
            .query_row(
                "SELECT status, conversation_id FROM outbox WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((status, Some(conv))) = row else {
            return Err(anyhow!("no outbox item {id}"));
        };
        if status != "sent" && status != "failed" {
            return Err(anyhow!("item {id} is {status}; its reply is not owed"));
        }
        // The newest message that counts for the model decides.
        let last: Option<(Option<i64>, String, String)> = tx
            .query_row(
                "SELECT outbox_id, role, status FROM messages
                 WHERE conversation_id = ?1 AND role != 'notice' AND status != 'superseded'
                 ORDER BY id DESC LIMIT 1",
                [conv],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        match last {
            Some((Some(o), role, st))
                if o == id && (role == "user" || (role == "assistant" && st != "complete")) => {}
            _ if tx.query_row(
                "SELECT EXISTS(SELECT 1 FROM messages
                     WHERE outbox_id = ?1 AND role = 'assistant' AND status IN ('complete', 'superseded'))",
                [id],
                |r| r.get::<_, bool>(0),
            )? =>
            {
                return Err(anyhow!(
                    "item {id} was answered; regenerate the conversation for another answer"
                ));
            }
            _ => {
                return Err(anyhow!(
                    "item {id}'s conversation has moved on since (a later message came after it), so its reply would answer that one; send its text again as a new message"
                ));
            }
        }
        tx.execute(
            "UPDATE outbox SET status = 'pending', claimed_by = NULL, priority = 1, attempts = 0,
                    last_error = NULL, next_attempt_at = NULL, updated_at = ?2
             WHERE id = ?1 AND status IN ('sent', 'failed')",
            params![id, now],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// A transient failure before acceptance: back to pending, not before `retry_at`.
    pub fn release_for_retry(
        &self,
        id: i64,
        owner: &str,
        error: &str,
        retry_at: i64,
        now: i64,
    ) -> Result<bool> {
        self.release_until(id, owner, error, retry_at, now, true)
    }

    /// Put a claimed row back to be tried at `retry_at`, the attempt not
    /// counted (nothing was sent: the model cannot be used as the config
    /// stands), with why.
    pub fn release_held(
        &self,
        id: i64,
        owner: &str,
        error: &str,
        retry_at: i64,
        now: i64,
    ) -> Result<bool> {
        self.release_until(id, owner, error, retry_at, now, false)
    }

    /// A claimed row back to pending with `error`, not before `retry_at`;
    /// its claim's attempt counted or not.
    fn release_until(
        &self,
        id: i64,
        owner: &str,
        error: &str,
        retry_at: i64,
        now: i64,
        attempt_counts: bool,
    ) -> Result<bool> {
        let attempts = if attempt_counts {
            "attempts"
        } else {
            "MAX(attempts - 1, 0)"
        };
        let n = self.conn().execute(
            &format!(
                "UPDATE outbox SET status = 'pending', claimed_by = NULL, attempts = {attempts},
                        last_error = ?3, next_attempt_at = ?4, updated_at = ?5
                 WHERE id = ?1 AND status = 'sending' AND claimed_by = ?2"
            ),
            params![id, owner, error, retry_at, now],
        )?;
        Ok(n == 1)
    }

    /// Put a claimed row back untouched (stopping, shutting down): the attempt does not count.
    pub fn release_unattempted(&self, id: i64, owner: &str, now: i64) -> Result<bool> {
        let n = self.conn().execute(
            "UPDATE outbox SET status = 'pending', claimed_by = NULL, attempts = MAX(attempts - 1, 0), updated_at = ?3
             WHERE id = ?1 AND status = 'sending' AND claimed_by = ?2",
            params![id, owner, now],
        )?;
        Ok(n == 1)
    }

    /// The user stopped a message before the provider accepted it: back to
    /// pending, and its conversation's queue paused over it, in one
    /// transaction (so no pass sends it between the two). False (nothing
    /// written) when it is no longer this dispatcher's to hold.
    pub fn hold_unsent(&self, id: i64, owner: &str, now: i64) -> Result<bool> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let n = tx.execute(
            "UPDATE outbox SET status = 'pending', claimed_by = NULL, attempts = MAX(attempts - 1, 0), updated_at = ?3
             WHERE id = ?1 AND status = 'sending' AND claimed_by = ?2 AND due_at IS NULL",
            params![id, owner, now],
        )?;
        if n != 1 {
            return Ok(false);
        }
        // A pause holds what was queued by its instant: this message too.
        tx.execute(
            "UPDATE conversations SET queue_paused_at = MAX(COALESCE(queue_paused_at, 0), ?2,
                                                            (SELECT created_at FROM outbox WHERE id = ?1))
             WHERE id = (SELECT conversation_id FROM outbox WHERE id = ?1)",
            params![id, now],
        )?;
        tx.commit()?;
        Ok(true)
    }

    /// Failed before the provider accepted it. A regeneration that fails so
    /// gives the conversation back the reply it put aside (it is still the
    /// last word), so a failed Ctrl+R never leaves a question unanswered.
    pub fn mark_failed(&self, id: i64, owner: &str, error: &str, now: i64) -> Result<bool> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let n = tx.execute(
            "UPDATE outbox SET status = 'failed', claimed_by = NULL, last_error = ?3, next_attempt_at = NULL, updated_at = ?4
             WHERE id = ?1 AND status = 'sending' AND claimed_by = ?2",
            params![id, owner, error, now],
        )?;
        if n == 1 {
            restore_replaced_reply(&tx, id)?;
        }
        tx.commit()?;
        Ok(n == 1)
    }

    /// The conversation's regeneration still on its way (pending, or being
    /// sent), if any: it is not an item of the lists, but the chat shows it.
    pub fn regeneration(&self, conversation_id: i64) -> Result<Option<OutboxItem>> {
        Ok(self
            .query_items(
                "WHERE conversation_id = ?1 AND kind = 'regenerate' AND status IN ('pending', 'sending')
                 ORDER BY id DESC LIMIT 1",
                [conversation_id],
            )?
            .pop())
    }

    /// Call off the conversation's regeneration that waits (queued, or in
    /// back-off), giving back the reply it put aside if that is still the
    /// last word. The row called off, or None if none waits (one being
    /// sent is stopped instead).
    pub fn cancel_regeneration(&self, conversation_id: i64, now: i64) -> Result<Option<i64>> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let id: Option<i64> = tx
            .query_row(
                "SELECT id FROM outbox
                 WHERE conversation_id = ?1 AND kind = 'regenerate' AND status = 'pending'
                 ORDER BY id DESC LIMIT 1",
                [conversation_id],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(id) = id {
            tx.execute(
                "UPDATE outbox SET status = 'canceled', claimed_by = NULL, next_attempt_at = NULL, updated_at = ?2
                 WHERE id = ?1",
                params![id, now],
            )?;
            restore_replaced_reply(&tx, id)?;
        }
        tx.commit()?;
        Ok(id)
    }

    /// Whether the conversation has a reply on its way: an unfinished
    /// regeneration, or an accepted item whose reply is being retried.
    pub fn owes_reply(&self, conversation_id: i64) -> Result<bool> {
        Ok(self.conn().query_row(
            "SELECT EXISTS(SELECT 1 FROM outbox WHERE conversation_id = ?1 AND status IN ('pending','sending')
                             AND (kind = 'regenerate' OR sent_at IS NOT NULL))",
            [conversation_id],
            |r| r.get(0),
        )?)
    }
}

/// A regeneration that went no further gives the conversation back the
/// reply it put aside, if that is still the last word: nothing but notices
/// and other put-aside replies came after it.
fn restore_replaced_reply(tx: &rusqlite::Transaction, regeneration: i64) -> Result<()> {
    tx.execute(
        "UPDATE messages SET status = 'complete'
         WHERE id = (SELECT replaces_message_id FROM outbox WHERE id = ?1 AND kind = 'regenerate')
           AND status = 'superseded'
           AND NOT EXISTS (SELECT 1 FROM messages l
               WHERE l.conversation_id = messages.conversation_id AND l.id > messages.id
                 AND l.role != 'notice' AND NOT (l.role = 'assistant' AND l.status = 'superseded'))",
        [regeneration],
    )?;
    Ok(())
}
