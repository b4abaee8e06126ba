//! Reading and reshaping history across conversations: full-text search,
//! forks, alternates of a reply, token usage.

use anyhow::Result;

use super::{Engine, Event};
use crate::store::SearchHit;

impl Engine {
    /// Messages matching what the user typed, newest first, at most `limit`.
    /// Any text is accepted (it is never read as query syntax); text with
    /// no word in it matches nothing. The last word matches as a prefix
    /// unless followed by a space.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>> {
        self.store().search(query, limit)
    }
}

impl Engine {
    /// A new conversation with the history of `conversation_id` up to and
    /// including `up_to_message_id` (what the conversation shows: superseded
    /// versions are left out, attachments kept), titled "Fork of …", with
    /// the same model and role. One transaction. Returns the new id.
    pub fn fork_conversation(&self, conversation_id: i64, up_to_message_id: i64) -> Result<i64> {
        let id =
            self.store()
                .fork_conversation(conversation_id, up_to_message_id, self.now_ms())?;
        self.emit(Event::Conversations);
        Ok(id)
    }
}
