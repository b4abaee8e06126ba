//! Changes that rewrite a conversation's recent history: edit-and-resend,
//! regenerate and pulling a pending item back into the composer. Each is one
//! transaction, so a failure leaves the old reply visible and nothing half-done.

use anyhow::{Result, anyhow};
use rusqlite::{OptionalExtension, params};

use super::drafts::{Draft, save_draft};
use super::outbox::{NewItem, insert_item, take_model_of};
use super::{ApprovalStatus, MessageStatus, Role, Store};

impl Store {
    /// Resend an edited user message: it and everything after it (but notices)
    /// are marked superseded, and `item` is enqueued, together. The draft is
    /// cleared (restored to the stash, if one was kept) in the same transaction.
    pub fn edit_and_resend(
        &self,
        conversation_id: i64,
        message_id: i64,
        item: &NewItem,
        restore: &Draft,
        now: i64,
    ) -> Result<i64> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let found: Option<(Role, MessageStatus)> = tx
            .query_row(
                "SELECT role, status FROM messages WHERE id = ?1 AND conversation_id = ?2",
                params![message_id, conversation_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        match found {
            Some((Role::User, MessageStatus::Superseded)) => {
                // Edited or replaced already (in another window, say):
                // resending it would put the old text over the newer one.
                return Err(anyhow!(
                    "that message was edited or replaced since; nothing resent"
                ));
            }
            Some((Role::User, _)) => {}
            _ => {
                return Err(anyhow!(
                    "message {message_id} is not a message of yours in this conversation"
                ));
            }
        }
        // A reply streaming there, in this process or another (a second
        // TUI, the daemon), would go on into the exchange this replaces,
        // and the edit would wait for it.
        let streaming: bool = tx.query_row(
            "SELECT EXISTS(SELECT 1 FROM messages INDEXED BY messages_streaming
                 WHERE status = 'streaming' AND conversation_id = ?1)",
            [conversation_id],
            |r| r.get(0),
        )?;
        if streaming {
            return Err(anyhow!(
                "a reply is streaming in this conversation: wait for it, or Esc to stop it, then resend"
            ));
        }
        refuse_while_a_call_is_open(&tx, conversation_id, "resend", now)?;
        tx.execute(
            "UPDATE messages SET status = ?3
             WHERE conversation_id = ?1 AND id >= ?2 AND role != 'notice'",
            params![conversation_id, message_id, MessageStatus::Superseded],
        )?;
        let id = insert_item(&tx, item, now)?;
        // Sent to another model (`/with`): the edit goes there too, unless
        // it names one itself.
        if item.model_override.is_none() {
            take_model_of(&tx, id, message_id)?;
        }
        // The new user message will be the next version of this one.
        tx.execute(
            "UPDATE outbox SET replaces_message_id = ?2 WHERE id = ?1",
            params![id, message_id],
        )?;
        save_draft(&tx, conversation_id, restore, now)?;
        tx.commit()?;
        Ok(id)
    }

    /// Supersede a complete last reply (so the model does not see it twice)
    /// and enqueue the regeneration, together. A reply followed only by
    /// versions put aside for it (superseded replies) is still the last one;
    /// after a superseded user message (an edit on its way) nothing is.
    pub fn supersede_last_reply_and_enqueue(
        &self,
        conversation_id: i64,
        item: &NewItem,
        now: i64,
    ) -> Result<i64> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        refuse_while_a_call_is_open(&tx, conversation_id, "regenerate", now)?;
        let last: Option<(i64, Role, MessageStatus)> = tx
            .query_row(
                "SELECT id, role, status FROM messages m
                 WHERE conversation_id = ?1 AND role != 'notice' AND status != 'superseded'
                   AND NOT EXISTS (SELECT 1 FROM messages l
                       WHERE l.conversation_id = ?1 AND l.id > m.id AND l.role != 'notice'
                         AND NOT (l.role = 'assistant' AND l.status = 'superseded'))
                 ORDER BY id DESC LIMIT 1",
                [conversation_id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        let superseded = match last {
            Some((id, Role::Assistant, MessageStatus::Complete)) => {
                tx.execute(
                    "UPDATE messages SET status = ?2 WHERE id = ?1",
                    params![id, MessageStatus::Superseded],
                )?;
                Some(id)
            }
            _ => None,
        };
        let id = insert_item(&tx, item, now)?;
        // The new reply will be the next version of the superseded one,
        // from the model that one came from (`/with MODEL`), unless the
        // regeneration names one itself.
        if let Some(old) = superseded {
            tx.execute(
                "UPDATE outbox SET replaces_message_id = ?2 WHERE id = ?1",
                params![id, old],
            )?;
            if item.model_override.is_none() {
                take_model_of(&tx, id, old)?;
            }
        }
        tx.commit()?;
        Ok(id)
    }

    /// Take a pending item back into the composer: cancel it and make its text
    /// the conversation's draft, together, so it is never in neither place.
    /// Refused when the conversation already has a draft (it is never overwritten)
    /// or when the item changed since `seen_updated_at`.
    pub fn pull_back(&self, id: i64, seen_updated_at: i64, now: i64) -> Result<(i64, Draft)> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        type Row = (
            Option<i64>,
            String,
            super::Status,
            i64,
            Option<String>,
            Option<i64>,
        );
        let row: Option<Row> = tx
            .query_row(
                "SELECT conversation_id, text, status, updated_at, parts_json, sent_at FROM outbox WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)),
            )
            .optional()?;
        let Some((Some(conv), text, status, updated_at, parts_json, sent_at)) = row else {
            return Err(anyhow!("no pending item #{id}"));
        };
        // Its message is already in the conversation (only its reply is being
        // generated again): taking it back would send it twice.
        if sent_at.is_some() {
            return Err(anyhow!(
                "#{id} is already in its conversation; only its reply is pending"
            ));
        }
        if updated_at != seen_updated_at {
            return Err(anyhow!("#{id} changed since it was shown; nothing done"));
        }
        if !matches!(
            status,
            super::Status::Pending | super::Status::Failed | super::Status::Expired
        ) {
            return Err(anyhow!(
                "#{id} is {}; it cannot be taken back",
                status.as_str()
            ));
        }
        let has_draft: bool = tx
            .query_row(
                "SELECT text != '' OR edit_of IS NOT NULL OR parts_json IS NOT NULL
                 FROM drafts WHERE conversation_id = ?1",
                [conv],
                |r| r.get(0),
            )
            .optional()?
            .unwrap_or(false);
        if has_draft {
            return Err(anyhow!(
                "the composer already holds a draft; send or clear it first"
            ));
        }
        tx.execute(
            "UPDATE outbox SET status = 'canceled', last_error = 'taken back into the composer',
                claimed_by = NULL, next_attempt_at = NULL, updated_at = ?2 WHERE id = ?1",
            params![id, now],
        )?;
        let draft = Draft {
            text,
            edit_of: None,
            stash: None,
            parts_json,
        };
        save_draft(&tx, conv, &draft, now)?;
        super::outbox::lift_pause_if_nothing_held(&tx, conv)?;
        tx.commit()?;
        Ok((conv, draft))
    }
}

impl Store {
    /// The tasks (still to fire) the model scheduled in a conversation since
    /// message `message_id`: what an edit resent there leaves scheduled
    /// from the exchanges it replaces. (id, title or instruction.)
    pub fn tasks_scheduled_since(
        &self,
        conversation_id: i64,
        message_id: i64,
    ) -> Result<Vec<(i64, String)>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(
            "SELECT id, COALESCE(NULLIF(title, ''), text) FROM outbox
             WHERE conversation_id = ?1 AND kind = 'task' AND status = 'pending'
               AND created_at >= (SELECT created_at FROM messages WHERE id = ?2)
             ORDER BY id",
        )?;
        let rows = st.query_map(params![conversation_id, message_id], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

/// A tool call of the conversation waiting for its answer, or approved and
/// running, belongs to the last reply: that reply is not replaced (`then`:
/// what to do once the call is over). Replaced, the call still ran, and its
/// result stayed in every later request without the call that asked for
/// it, which providers refuse.
fn refuse_while_a_call_is_open(
    tx: &rusqlite::Transaction<'_>,
    conversation_id: i64,
    then: &str,
    now: i64,
) -> Result<()> {
    let open: Option<ApprovalStatus> = tx
        .query_row(
            "SELECT status FROM approvals
             WHERE conversation_id = ?1 AND status IN ('waiting', 'executing')
             ORDER BY id LIMIT 1",
            [conversation_id],
            |r| r.get(0),
        )
        .optional()?;
    match open {
        Some(ApprovalStatus::Waiting) => Err(anyhow!(
            "a tool call waits for your answer in this conversation: approve or deny it first, then {then}"
        )),
        Some(_) => Err(anyhow!(
            "an approved tool call is running in this conversation: wait for its result (or Esc to stop it), then {then}"
        )),
        None => refuse_while_a_call_runs(tx, conversation_id, then, now),
    }
}

/// A call that runs without asking (an allowed tool) has no approval: its
/// `tool_runs` row holds the reply. A row whose dispatcher's lease has run
/// out was left by a tock that died; the next dispatcher settles it.
fn refuse_while_a_call_runs(
    tx: &rusqlite::Transaction<'_>,
    conversation_id: i64,
    then: &str,
    now: i64,
) -> Result<()> {
    let running: Option<String> = tx
        .query_row(
            "SELECT tool FROM tool_runs
             WHERE conversation_id = ?1
               AND owner IN (SELECT owner FROM lease WHERE expires_at >= ?2)
             ORDER BY id LIMIT 1",
            params![conversation_id, now],
            |r| r.get(0),
        )
        .optional()?;
    match running {
        Some(tool) => Err(anyhow!(
            "the tool call {} is running in this conversation: wait for its result (or Esc to stop it), then {then}",
            crate::sanitize::sanitize_line(&tool)
        )),
        None => Ok(()),
    }
}
