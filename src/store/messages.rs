//! The `messages` table: a conversation's history.

use anyhow::Result;
use rusqlite::{OptionalExtension, Row, params};

use super::{Store, sql_enum};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
    Tool,
    /// Shown to the user, never sent to the model (e.g. "stopped").
    Notice,
}

sql_enum::sql_enum!(Role {
    User => "user",
    Assistant => "assistant",
    Tool => "tool",
    Notice => "notice",
});

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageStatus {
    Streaming,
    Complete,
    Interrupted,
    Error,
    /// Replaced by a regeneration or an edit; kept for the record, not sent to the model.
    Superseded,
}

sql_enum::sql_enum!(MessageStatus {
    Streaming => "streaming",
    Complete => "complete",
    Interrupted => "interrupted",
    Error => "error",
    Superseded => "superseded",
});

#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub id: i64,
    pub conversation_id: i64,
    pub role: Role,
    pub content: String,
    pub status: MessageStatus,
    pub model: Option<String>,
    pub outbox_id: Option<i64>,
    pub parts_json: Option<String>,
    pub tool_calls_json: Option<String>,
    pub tool_call_id: Option<String>,
    pub error: Option<String>,
    pub created_at: i64,
}

pub(crate) const COLS: &str = "id, conversation_id, role, content, status, model, outbox_id, parts_json, \
                    tool_calls_json, tool_call_id, error, created_at";

/// Columns beyond the first schema's that a copy of a message (a fork)
/// carries over, each with a leading comma.
pub(crate) const COPIED_EXTRA_COLS: &str =
    ", prompt_tokens, completion_tokens, cached_tokens, reasoning, reasoning_chars";

impl Message {
    /// A scheduled task's turn: a user message tock wrote when the task
    /// fired, not one the user typed.
    pub fn is_task_turn(&self) -> bool {
        self.role == Role::User && self.content.starts_with(super::outbox::TASK_TURN_PREFIX)
    }

    /// The tool calls a reply made, as stored with it (none if unreadable).
    pub fn tool_calls(&self) -> Vec<crate::llm::ToolCall> {
        self.tool_calls_json
            .as_deref()
            .and_then(|j| serde_json::from_str(j).ok())
            .unwrap_or_default()
    }

    pub(crate) fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            id: r.get(0)?,
            conversation_id: r.get(1)?,
            role: r.get(2)?,
            content: r.get(3)?,
            status: r.get(4)?,
            model: r.get(5)?,
            outbox_id: r.get(6)?,
            parts_json: r.get(7)?,
            tool_calls_json: r.get(8)?,
            tool_call_id: r.get(9)?,
            error: r.get(10)?,
            created_at: r.get(11)?,
        })
    }
}

/// Fields of a message being inserted.
#[derive(Clone, Debug, Default)]
pub struct NewMessage<'a> {
    pub role: Option<Role>,
    pub content: &'a str,
    pub model: Option<&'a str>,
    pub outbox_id: Option<i64>,
    pub parts_json: Option<&'a str>,
    pub tool_call_id: Option<&'a str>,
    pub status: Option<MessageStatus>,
}

pub(crate) fn insert_message(
    conn: &rusqlite::Connection,
    conversation_id: i64,
    m: &NewMessage<'_>,
    now: i64,
) -> rusqlite::Result<i64> {
    conn.execute(
        "INSERT INTO messages (conversation_id, role, content, status, model, outbox_id, parts_json, tool_call_id, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            conversation_id,
            m.role.unwrap_or(Role::User).as_str(),
            m.content,
            m.status.unwrap_or(MessageStatus::Complete).as_str(),
            m.model,
            m.outbox_id,
            m.parts_json,
            m.tool_call_id,
            now
        ],
    )?;
    let id = conn.last_insert_rowid();
    Store::touch_conversation(conn, conversation_id, now)?;
    Ok(id)
}

/// Which interrupted partial replies a view shows. A reply that was cut and
/// generated again leaves one partial per attempt; a run of consecutive
/// interrupted attempts at the same reply is shown as its latest one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Collapsed {
    /// Earlier attempts, not shown.
    pub hidden: std::collections::HashSet<i64>,
    /// For each shown partial that stands for others: how many it hides.
    pub earlier: std::collections::HashMap<i64, usize>,
}

impl Collapsed {
    pub fn is_hidden(&self, message_id: i64) -> bool {
        self.hidden.contains(&message_id)
    }
}

/// Collapse repeated interrupted attempts (see [`Collapsed`]). Notices and
/// superseded replies do not break a run; a user or tool message, or a
/// complete reply, ends it. The latest partial stays visible even after a
/// complete reply follows it; attempts that stored no text at all (cut
/// before their first word, as by a kill just after sending) are not shown
/// once a complete reply follows them: they would stand as empty replies.
/// An attempt cut while its model reasoned (`reasoned` says which messages
/// kept reasoning) is a partial: what it thought is there to read.
pub fn collapse_attempts(history: &[Message], reasoned: impl Fn(i64) -> bool) -> Collapsed {
    let mut out = Collapsed::default();
    let mut run: Vec<i64> = Vec::new();
    let mut empty: Vec<i64> = Vec::new();
    let close = |run: &mut Vec<i64>, out: &mut Collapsed| {
        if let Some((last, earlier)) = run.split_last()
            && !earlier.is_empty()
        {
            out.hidden.extend(earlier.iter().copied());
            out.earlier.insert(*last, earlier.len());
        }
        run.clear();
    };
    for m in history {
        match (m.role, m.status) {
            (Role::Notice, _) | (_, MessageStatus::Superseded) => {}
            (Role::Assistant, MessageStatus::Interrupted | MessageStatus::Error) => {
                if m.content.trim().is_empty() && m.parts_json.is_none() && !reasoned(m.id) {
                    empty.push(m.id);
                } else {
                    run.push(m.id);
                }
            }
            (Role::Assistant, MessageStatus::Complete) => {
                out.hidden.extend(empty.drain(..));
                close(&mut run, &mut out);
            }
            _ => {
                // Not answered after all: the empty attempts stay (with the
                // partials, collapsed to the latest), saying so.
                run.append(&mut empty);
                run.sort_unstable();
                close(&mut run, &mut out);
            }
        }
    }
    run.append(&mut empty);
    run.sort_unstable();
    close(&mut run, &mut out);
    out
}

impl Store {
    /// The whole history of a conversation, oldest first.
    pub fn messages(&self, conversation_id: i64) -> Result<Vec<Message>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(&format!(
            "SELECT {COLS} FROM messages WHERE conversation_id = ?1 ORDER BY id"
        ))?;
        let rows = st.query_map([conversation_id], Message::from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The messages of a conversation after message `after`, oldest first:
    /// what a turn added, without reading the whole history again.
    pub fn messages_after(&self, conversation_id: i64, after: i64) -> Result<Vec<Message>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(&format!(
            "SELECT {COLS} FROM messages WHERE conversation_id = ?1 AND id > ?2 ORDER BY id"
        ))?;
        let rows = st.query_map([conversation_id, after], Message::from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The user's message outbox item `item` put in its conversation, once sent.
    pub fn user_message_of(&self, item: i64) -> Result<Option<i64>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT id FROM messages WHERE outbox_id = ?1 AND role = 'user' ORDER BY id LIMIT 1",
                [item],
                |r| r.get(0),
            )
            .optional()?)
    }

    pub fn message(&self, id: i64) -> Result<Option<Message>> {
        let conn = self.conn();
        Ok(conn
            .query_row(
                &format!("SELECT {COLS} FROM messages WHERE id = ?1"),
                [id],
                Message::from_row,
            )
            .optional()?)
    }

    pub fn insert_message(
        &self,
        conversation_id: i64,
        m: &NewMessage<'_>,
        now: i64,
    ) -> Result<i64> {
        Ok(insert_message(&self.conn(), conversation_id, m, now)?)
    }

    /// Persist the text streamed so far (throttled by the caller).
    pub fn update_streaming(&self, message_id: i64, content: &str) -> Result<()> {
        // Cached: a reply is saved four times a second while it streams.
        self.conn()
            .prepare_cached(
                "UPDATE messages SET content = ?2 WHERE id = ?1 AND status = 'streaming'",
            )?
            .execute(params![message_id, content])?;
        Ok(())
    }

    /// How much the model of streaming reply `message_id` has reasoned so
    /// far, for other processes' front ends (see `Event::Thinking`).
    pub fn set_reasoning_chars(&self, message_id: i64, chars: usize) -> Result<()> {
        self.conn()
            .prepare_cached(
                "UPDATE messages SET reasoning_chars = ?2 WHERE id = ?1 AND status = 'streaming'",
            )?
            .execute(params![message_id, chars as i64])?;
        Ok(())
    }

    /// The streaming replies of `conversation_id` whose model has reasoned,
    /// and how much (characters).
    pub fn reasoning_chars(&self, conversation_id: i64) -> Result<Vec<(i64, usize)>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(
            "SELECT id, reasoning_chars FROM messages
             WHERE conversation_id = ?1 AND status = 'streaming' AND reasoning_chars IS NOT NULL",
        )?;
        let rows = st.query_map([conversation_id], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?.max(0) as usize))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// What the model of reply `message_id` reasoned, kept with it (its
    /// count of characters too, which lists read without the text).
    pub fn set_reasoning(&self, message_id: i64, reasoning: &str) -> Result<()> {
        self.conn()
            .prepare_cached(
                "UPDATE messages SET reasoning = ?2, reasoning_chars = ?3 WHERE id = ?1",
            )?
            .execute(params![
                message_id,
                reasoning,
                reasoning.chars().count() as i64
            ])?;
        Ok(())
    }

    /// The replies of `conversation_id` whose reasoning is kept, with how
    /// long it is (characters).
    pub fn reasoned(&self, conversation_id: i64) -> Result<Vec<(i64, usize)>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(
            "SELECT id, reasoning_chars FROM messages
             WHERE conversation_id = ?1 AND reasoning IS NOT NULL AND status != 'streaming'",
        )?;
        let rows = st.query_map([conversation_id], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, Option<i64>>(1)?.unwrap_or(0).max(0) as usize,
            ))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The reasoning kept with reply `message_id`.
    pub fn reasoning(&self, message_id: i64) -> Result<Option<String>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT reasoning FROM messages WHERE id = ?1",
                [message_id],
                |r| r.get(0),
            )
            .optional()?
            .flatten())
    }

    /// End a streamed reply. Only a still-streaming message is changed, so a
    /// process that lost its lease cannot overwrite the new dispatcher's work.
    pub fn finish_message(
        &self,
        message_id: i64,
        content: &str,
        status: MessageStatus,
        error: Option<&str>,
        tool_calls_json: Option<&str>,
        now: i64,
    ) -> Result<bool> {
        // One transaction: tried again after a busy database, a half-done
        // first try would read as "recovered by another dispatcher".
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let n = tx.execute(
            "UPDATE messages SET content = ?2, status = ?3, error = ?4, tool_calls_json = ?5
             WHERE id = ?1 AND status = 'streaming'",
            params![message_id, content, status.as_str(), error, tool_calls_json],
        )?;
        if let Some(conv) = tx
            .query_row(
                "SELECT conversation_id FROM messages WHERE id = ?1",
                [message_id],
                |r| r.get::<_, i64>(0),
            )
            .optional()?
        {
            Store::touch_conversation(&tx, conv, now)?;
        }
        tx.commit()?;
        Ok(n == 1)
    }

    pub fn set_message_status(
        &self,
        message_id: i64,
        status: MessageStatus,
        error: Option<&str>,
    ) -> Result<()> {
        self.conn().execute(
            "UPDATE messages SET status = ?2, error = COALESCE(?3, error) WHERE id = ?1",
            params![message_id, status.as_str(), error],
        )?;
        Ok(())
    }

    /// Number of messages (all conversations); used by status and benches.
    pub fn message_count(&self) -> Result<i64> {
        Ok(self
            .conn()
            .query_row("SELECT count(*) FROM messages", [], |r| r.get(0))?)
    }
}

#[cfg(test)]
impl Message {
    /// A message of conversation 1 with nothing but what a unit test sets.
    pub(crate) fn for_test(id: i64, role: Role, status: MessageStatus, content: &str) -> Self {
        Message {
            id,
            conversation_id: 1,
            role,
            content: content.to_string(),
            status,
            model: None,
            outbox_id: None,
            parts_json: None,
            tool_calls_json: None,
            tool_call_id: None,
            error: None,
            created_at: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(id: i64, role: Role, status: MessageStatus, content: &str) -> Message {
        Message::for_test(id, role, status, content)
    }

    use MessageStatus::{Complete, Interrupted};
    use Role::{Assistant, Notice, User};

    /// Killed just after sending: an attempt with no text, then the answer.
    /// The empty attempt is not shown; a partial with text still is.
    #[test]
    fn an_empty_attempt_answered_after_all_is_hidden() {
        let h = [
            msg(1, User, Complete, "q"),
            msg(2, Assistant, Interrupted, ""),
            msg(3, Notice, Complete, "recovered"),
            msg(4, Assistant, Complete, "the answer"),
        ];
        let c = collapse_attempts(&h, |_| false);
        assert!(c.is_hidden(2));
        assert!(!c.is_hidden(4) && c.earlier.is_empty());

        let h = [
            msg(1, User, Complete, "q"),
            msg(2, Assistant, Interrupted, ""),
            msg(3, Assistant, Interrupted, "a first half"),
            msg(4, Assistant, Complete, "the answer"),
        ];
        let c = collapse_attempts(&h, |_| false);
        assert!(c.is_hidden(2) && !c.is_hidden(3), "{c:?}");
        assert!(c.earlier.is_empty(), "{c:?}");
    }

    /// Cut while the model reasoned, before its first word: what it thought
    /// is kept, and the attempt stays, as a partial with text does.
    #[test]
    fn an_attempt_cut_while_reasoning_stays() {
        let h = [
            msg(1, User, Complete, "q"),
            msg(2, Assistant, Interrupted, ""),
            msg(3, Assistant, Complete, "the answer"),
        ];
        assert!(!collapse_attempts(&h, |id| id == 2).is_hidden(2));
        assert!(collapse_attempts(&h, |id| id == 3).is_hidden(2));
    }

    /// Not answered (the last word, or a new question after it): the empty
    /// attempts stay, collapsed to the latest as any run is.
    #[test]
    fn an_empty_attempt_not_answered_stays() {
        let h = [
            msg(1, User, Complete, "q"),
            msg(2, Assistant, Interrupted, ""),
        ];
        assert!(!collapse_attempts(&h, |_| false).is_hidden(2));
        let h = [
            msg(1, User, Complete, "q"),
            msg(2, Assistant, Interrupted, ""),
            msg(3, Assistant, Interrupted, ""),
            msg(4, User, Complete, "hello?"),
        ];
        let c = collapse_attempts(&h, |_| false);
        assert!(c.is_hidden(2) && !c.is_hidden(3), "{c:?}");
        assert_eq!(c.earlier.get(&3), Some(&1));
    }
}
