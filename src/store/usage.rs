//! Token usage stored with assistant messages (migration 0007).

use std::collections::HashMap;

use anyhow::Result;
use rusqlite::params;

use super::Store;
use crate::llm::Usage;

/// Usage of one reply, with the model that wrote it.
#[derive(Clone, Debug, PartialEq)]
pub struct MessageUsage {
    pub message_id: i64,
    /// The model name as configured (`messages.model`).
    pub model: Option<String>,
    pub usage: Usage,
    /// Superseded replies are listed (they were paid for) but are not part
    /// of what the model sees next.
    pub superseded: bool,
}

fn to_i64(n: Option<u64>) -> Option<i64> {
    n.map(|n| i64::try_from(n).unwrap_or(i64::MAX))
}

fn to_u64(n: Option<i64>) -> Option<u64> {
    n.map(|n| u64::try_from(n).unwrap_or(0))
}

impl Store {
    /// Record what a reply cost (fields the provider did not report stay as they were).
    pub fn set_message_usage(&self, message_id: i64, usage: &Usage) -> Result<()> {
        self.conn().execute(
            "UPDATE messages SET prompt_tokens = COALESCE(?2, prompt_tokens),
                completion_tokens = COALESCE(?3, completion_tokens),
                cached_tokens = COALESCE(?4, cached_tokens)
             WHERE id = ?1",
            params![
                message_id,
                to_i64(usage.prompt_tokens),
                to_i64(usage.completion_tokens),
                to_i64(usage.cached_tokens)
            ],
        )?;
        Ok(())
    }

    /// The usage of every reply of a conversation that has any, oldest first.
    pub fn conversation_usage(&self, conversation_id: i64) -> Result<Vec<MessageUsage>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(
            "SELECT id, model, prompt_tokens, completion_tokens, cached_tokens, status FROM messages
             WHERE conversation_id = ?1
               AND (prompt_tokens IS NOT NULL OR completion_tokens IS NOT NULL OR cached_tokens IS NOT NULL)
             ORDER BY id",
        )?;
        let rows = st.query_map([conversation_id], |r| {
            Ok(MessageUsage {
                message_id: r.get(0)?,
                model: r.get(1)?,
                usage: Usage {
                    prompt_tokens: to_u64(r.get(2)?),
                    completion_tokens: to_u64(r.get(3)?),
                    cached_tokens: to_u64(r.get(4)?),
                },
                superseded: r.get::<_, String>(5)? == "superseded",
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The usage of one message, if recorded.
    pub fn message_usage(&self, message_id: i64) -> Result<Option<Usage>> {
        let conn = self.conn();
        let row: Option<(Option<i64>, Option<i64>, Option<i64>)> = rusqlite::OptionalExtension::optional(
            conn.query_row(
                "SELECT prompt_tokens, completion_tokens, cached_tokens FROM messages WHERE id = ?1",
                [message_id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            ),
        )?;
        Ok(row
            .map(|(p, c, k)| Usage {
                prompt_tokens: to_u64(p),
                completion_tokens: to_u64(c),
                cached_tokens: to_u64(k),
            })
            .filter(|u| !u.is_empty()))
    }
}

/// Usage by message id (for views that look replies up one by one).
pub fn by_message(list: &[MessageUsage]) -> HashMap<i64, &MessageUsage> {
    list.iter().map(|u| (u.message_id, u)).collect()
}
