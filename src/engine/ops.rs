//! The engine's write operations on conversations and pending items: the one
//! path by which the TUI and the CLI change domain rows. Each is one SQLite
//! transaction and emits the events every view needs. Errors say what
//! happened, never which key to press (that is the front end's business).

use anyhow::{Result, anyhow};

use super::{Engine, Event};
use crate::store::{Draft, Kind, NewItem};

/// A change the user asks for on one pending item, as it was shown to them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ItemAction {
    /// With the item's text as shown: a cancel stands over a retry that
    /// changed the row meanwhile, not over an edit.
    Cancel {
        text: String,
    },
    SendNow,
    Retry,
    Reschedule(i64),
    Edit(String),
}

impl Engine {
    pub fn create_conversation(&self, title: Option<&str>, origin: &str) -> Result<i64> {
        let title = title.map(str::trim).filter(|t| !t.is_empty());
        let id = self
            .store()
            .create_conversation(title, origin, self.now_ms())?;
        self.emit(Event::Conversations);
        Ok(id)
    }

    pub fn rename_conversation(&self, id: i64, title: &str) -> Result<()> {
        let title = title.trim();
        if title.is_empty() {
            return Err(anyhow!("a title cannot be empty"));
        }
        if !self.store().rename_conversation(id, title, self.now_ms())? {
            return Err(anyhow!("no conversation {id}"));
        }
        self.emit(Event::Conversations);
        self.emit(Event::Conversation(id));
        Ok(())
    }

    /// Delete a conversation and its history; its pending messages are canceled
    /// (its tasks stay, and fire into a new conversation).
    pub fn delete_conversation(&self, id: i64) -> Result<()> {
        if self.is_busy(id) {
            self.stop(id);
        }
        if !self.store().delete_conversation(id, self.now_ms())? {
            return Err(anyhow!("no conversation {id}"));
        }
        self.emit(Event::Conversations);
        self.changed();
        Ok(())
    }

    /// Set (or with None, clear) a conversation's model. Returns the provider kind.
    pub fn set_conversation_model(&self, id: i64, model: Option<&str>) -> Result<&'static str> {
        let (_, kind) = self.config().describe(model).map_err(|e| anyhow!(e))?;
        self.store().set_conversation_model(id, model)?;
        self.emit(Event::Conversations);
        Ok(kind)
    }

    /// Give a conversation a role from the config (None clears it).
    pub fn set_conversation_role(&self, id: i64, role: Option<&str>) -> Result<()> {
        if let Some(r) = role
            && !self.config().get().roles.contains_key(r)
        {
            return Err(anyhow!("no role \"{r}\" in the config"));
        }
        self.store().set_conversation_role(id, role)?;
        self.emit(Event::Conversations);
        Ok(())
    }

    /// Save what the user has typed in a conversation (empty removes it).
    /// It waits for another process's write lock as any write does: the
    /// TUI calls it from its writer thread, never from the keyboard's.
    pub fn save_draft(&self, conversation_id: i64, draft: &Draft) -> Result<()> {
        self.store()
            .save_draft(conversation_id, draft, self.now_ms())
    }

    /// Save a front end's draft without emptying one it has not seen (see
    /// [`crate::store::Store::save_draft_over`]). Another process's draft,
    /// when it was kept.
    pub fn save_draft_over(
        &self,
        conversation_id: i64,
        draft: &Draft,
        known: &str,
    ) -> Result<Option<Draft>> {
        self.store()
            .save_draft_over(conversation_id, draft, known, self.now_ms())
    }

    /// Resend an edited message: the old exchange is superseded and the new
    /// text enqueued in one transaction; `restore` becomes the draft.
    pub fn edit_and_resend(
        &self,
        conversation_id: i64,
        message_id: i64,
        mut item: NewItem,
        restore: &Draft,
    ) -> Result<i64> {
        // First in its conversation's queue: what was queued after the
        // message it replaces was written after it, and goes after it.
        item.priority = 1;
        if self.is_busy(conversation_id) {
            return Err(anyhow!("a reply is streaming in this conversation"));
        }
        if item.text.trim().is_empty() && item.parts_json.is_none() {
            return Err(anyhow!("nothing to send: the message is empty"));
        }
        let id = self.store().edit_and_resend(
            conversation_id,
            message_id,
            &item,
            restore,
            self.now_ms(),
        )?;
        self.resume_queue(conversation_id)?;
        self.emit(Event::Conversation(conversation_id));
        self.changed();
        Ok(id)
    }

    /// Take a pending item back as the conversation's draft (refused if a draft exists).
    pub fn pull_back(&self, id: i64, seen_updated_at: i64) -> Result<(i64, Draft)> {
        let r = self.store().pull_back(id, seen_updated_at, self.now_ms())?;
        self.changed();
        Ok(r)
    }

    /// Resume a queue paused by a stop. True if it was paused.
    pub fn resume_queue(&self, conversation_id: i64) -> Result<bool> {
        let changed = self.store().set_queue_paused(conversation_id, None)?;
        if changed {
            self.emit(Event::Conversations);
            self.changed();
        }
        Ok(changed)
    }

    /// Act on an item as the user saw it: refused, with the reason, when the
    /// item changed since (`seen_updated_at`), so a key never hits a row that
    /// slid into another's place or moved on meanwhile.
    pub fn act_on_item(&self, id: i64, seen_updated_at: i64, action: ItemAction) -> Result<()> {
        let item = self
            .store()
            .item(id)?
            .ok_or_else(|| anyhow!("#{id} no longer exists"))?;
        // A cancel of a message that still waits, its text as it was
        // shown, stands: a retry's attempt in between changed its row (its
        // count, its next try), not what the user chose to cancel.
        let still_as_shown = matches!(&action, ItemAction::Cancel { text } if *text == item.text)
            && matches!(
                item.status,
                crate::store::Status::Pending
                    | crate::store::Status::Failed
                    | crate::store::Status::Expired
            );
        if item.updated_at != seen_updated_at && !still_as_shown {
            let now = super::state::item_state(&item, self.now_ms(), Default::default());
            return Err(anyhow!(
                "#{id} changed since it was shown (now {}); nothing done",
                now.label()
            ));
        }
        match action {
            ItemAction::Cancel { .. } => self.cancel(id),
            ItemAction::SendNow => {
                if let Some(conv) = item.conversation_id {
                    self.resume_queue(conv)?;
                }
                self.send_now(id)
            }
            ItemAction::Retry => self.retry(id),
            ItemAction::Reschedule(at) => self.reschedule(id, at),
            ItemAction::Edit(text) => self.edit(id, &text),
        }
    }

    /// A regeneration row for `conversation_id`, first in its queue.
    pub(crate) fn regeneration(conversation_id: i64) -> NewItem {
        let mut item = NewItem::new(conversation_id, Kind::Regenerate, "");
        item.priority = 1;
        item
    }
}
