//! Forking a conversation: a new conversation holding a copy of the history
//! up to one message, made in one transaction (a failure leaves no
//! half-copied conversation behind).

use anyhow::{Result, anyhow};
use rusqlite::{OptionalExtension, params};

use super::{MessageStatus, Store};

/// A fork made: its conversation, and the tool calls left out of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fork {
    pub id: i64,
    /// The names of the calls whose replies were copied without them: the
    /// fork was cut before their results (see `drop_unanswered_calls`).
    pub calls_left_out: Vec<String>,
}

/// The title a fork of a conversation titled `title` gets.
pub fn fork_title(title: &str) -> String {
    // A fork of a fork is not "Fork of Fork of …".
    if title.starts_with("Fork of ") {
        title.to_string()
    } else {
        format!("Fork of {title}")
    }
}

impl Store {
    /// Copy the messages of `conversation_id` up to and including
    /// `up_to_message_id` into a new conversation (same model and role,
    /// titled "Fork of …"). Only what the conversation
    /// shows is copied: superseded versions and a reply still streaming are
    /// left out; attachments, tool calls, interrupted partial replies (still
    /// marked so, never sent to the model) and the original times are kept.
    /// Refused for a message that is not in the conversation, or that is a
    /// superseded or still-streaming version.
    pub fn fork_conversation(
        &self,
        conversation_id: i64,
        up_to_message_id: i64,
        now: i64,
    ) -> Result<Fork> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let source: Option<(Option<String>, Option<String>, Option<String>)> = tx
            .query_row(
                "SELECT title, model, role FROM conversations WHERE id = ?1",
                [conversation_id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        let Some((title, model, role)) = source else {
            return Err(anyhow!("no conversation {conversation_id}"));
        };
        let status: Option<MessageStatus> = tx
            .query_row(
                "SELECT status FROM messages WHERE id = ?1 AND conversation_id = ?2",
                params![up_to_message_id, conversation_id],
                |r| r.get(0),
            )
            .optional()?;
        match status {
            None => {
                return Err(anyhow!(
                    "message {up_to_message_id} is not in conversation {conversation_id}"
                ));
            }
            Some(MessageStatus::Superseded) => {
                return Err(anyhow!(
                    "message {up_to_message_id} is an older version that is not shown"
                ));
            }
            Some(MessageStatus::Streaming) => {
                return Err(anyhow!("message {up_to_message_id} is still being written"));
            }
            Some(_) => {}
        }
        let base = match title.as_deref().map(str::trim) {
            Some(t) if !t.is_empty() => t.to_string(),
            _ => format!("Conversation {conversation_id}"),
        };
        tx.execute(
            "INSERT INTO conversations (title, model, role, origin, created_at, updated_at)
             VALUES (?1, ?2, ?3, 'fork', ?4, ?4)",
            params![fork_title(&base), model, role, now],
        )?;
        let fork = tx.last_insert_rowid();
        // The copies answer no outbox row: the original's rows stay its own.
        tx.execute(
            &format!(
                "INSERT INTO messages (conversation_id, role, content, status, model, outbox_id,
                    parts_json, tool_calls_json, tool_call_id, error, created_at{extra})
                 SELECT ?1, role, content, status, model, NULL,
                    parts_json, tool_calls_json, tool_call_id, error, created_at{extra}
                 FROM messages
                 WHERE conversation_id = ?2 AND id <= ?3 AND status NOT IN ('superseded', 'streaming')
                 ORDER BY id",
                extra = super::messages::COPIED_EXTRA_COLS
            ),
            params![fork, conversation_id, up_to_message_id],
        )?;
        let calls_left_out = drop_unanswered_calls(&tx, fork)?;
        tx.commit()?;
        Ok(Fork {
            id: fork,
            calls_left_out,
        })
    }
}

/// Tool calls of the copied replies that have no result among the copies
/// (the fork was cut between a call and its answer, or the call waits for an
/// approval that stays with the original) are left out of the copies: the
/// model never sees an unanswered call, and recovery must not answer it and
/// generate a reply in a conversation nobody sent anything to. Returns the
/// names of the calls left out, for the user to be told.
fn drop_unanswered_calls(tx: &rusqlite::Transaction<'_>, fork: i64) -> Result<Vec<String>> {
    let mut left_out = Vec::new();
    let answered: std::collections::HashSet<String> = {
        let mut st = tx.prepare(
            "SELECT tool_call_id FROM messages
             WHERE conversation_id = ?1 AND role = 'tool' AND tool_call_id IS NOT NULL",
        )?;
        let rows = st.query_map([fork], |r| r.get::<_, String>(0))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    let with_calls: Vec<(i64, String)> = {
        let mut st = tx.prepare(
            "SELECT id, tool_calls_json FROM messages
             WHERE conversation_id = ?1 AND role = 'assistant' AND tool_calls_json IS NOT NULL",
        )?;
        let rows = st.query_map([fork], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    for (id, json) in with_calls {
        let calls: Vec<serde_json::Value> = serde_json::from_str(&json).unwrap_or_default();
        let kept: Vec<&serde_json::Value> = calls
            .iter()
            .filter(|c| {
                c.get("id")
                    .and_then(|v| v.as_str())
                    .is_some_and(|i| answered.contains(i))
            })
            .collect();
        if kept.len() == calls.len() {
            continue;
        }
        left_out.extend(calls.iter().filter(|c| !kept.contains(c)).map(|c| {
            c.get("name")
                .and_then(|v| v.as_str())
                .unwrap_or("?")
                .to_string()
        }));
        let new = if kept.is_empty() {
            None
        } else {
            Some(serde_json::to_string(&kept)?)
        };
        tx.execute(
            "UPDATE messages SET tool_calls_json = ?2 WHERE id = ?1",
            params![id, new],
        )?;
    }
    Ok(left_out)
}
