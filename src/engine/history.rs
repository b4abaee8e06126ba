//! Reading and reshaping history across conversations: full-text search,
//! forks, alternates of a reply, token usage.

use anyhow::Result;

use super::{Engine, Event};
use crate::store::{AlternateMap, SearchHit};

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

impl Engine {
    /// The versions of the messages of a conversation: for a regenerated
    /// reply, every reply to the same message; for an edited message, each
    /// text it was sent with. Look one up with [`AlternateMap::of`].
    pub fn alternates(&self, conversation_id: i64) -> Result<AlternateMap> {
        self.store().alternates(conversation_id)
    }

    /// Show another version of the last reply of its conversation (a
    /// regeneration put aside) instead of the one shown, so the next
    /// message is answered in its context. Refused while a reply is on its
    /// way, and for versions that can only be looked at
    /// ([`crate::store::Alternates::can_choose`]).
    pub fn show_alternate(&self, message_id: i64) -> Result<()> {
        if let Some(m) = self.store().message(message_id)?
            && self.is_busy(m.conversation_id)
        {
            return Err(anyhow::anyhow!("a reply is streaming in this conversation"));
        }
        let conversation_id = self.store().show_alternate(message_id)?;
        self.emit(Event::Conversation(conversation_id));
        Ok(())
    }
}
