//! The `drafts` table: what the user has typed but not sent, per conversation.

use anyhow::Result;
use rusqlite::{OptionalExtension, params};

use super::Store;

/// A conversation's unsent composer text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Draft {
    pub text: String,
    /// Set while the draft is an edit of this user message, to be resent.
    pub edit_of: Option<i64>,
    /// The draft put aside when the edit began; restored when it is abandoned.
    pub stash: Option<String>,
    /// Attachments (JSON, as an outbox row's `parts_json`).
    pub parts_json: Option<String>,
}

impl Draft {
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
            && self.edit_of.is_none()
            && self.stash.is_none()
            && self.parts_json.is_none()
    }
}

pub(crate) fn save_draft(
    conn: &rusqlite::Connection,
    conversation_id: i64,
    d: &Draft,
    now: i64,
) -> rusqlite::Result<()> {
    if d.is_empty() {
        conn.execute(
            "DELETE FROM drafts WHERE conversation_id = ?1",
            [conversation_id],
        )?;
    } else {
        conn.execute(
            "INSERT INTO drafts (conversation_id, text, edit_of, stash, parts_json, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT(conversation_id) DO UPDATE SET
                text = excluded.text, edit_of = excluded.edit_of, stash = excluded.stash,
                parts_json = excluded.parts_json, updated_at = excluded.updated_at",
            params![
                conversation_id,
                d.text,
                d.edit_of,
                d.stash,
                d.parts_json,
                now
            ],
        )?;
    }
    Ok(())
}

impl Store {
    /// Enqueue a row typed in a conversation's composer and clear its draft, together.
    pub fn enqueue_clearing_draft(&self, item: &super::NewItem, now: i64) -> Result<i64> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let id = super::outbox::insert_item(&tx, item, now)?;
        if let Some(conv) = item.conversation_id {
            tx.execute("DELETE FROM drafts WHERE conversation_id = ?1", [conv])?;
        }
        tx.commit()?;
        Ok(id)
    }

    pub fn draft(&self, conversation_id: i64) -> Result<Draft> {
        Ok(self
            .conn()
            .query_row(
                "SELECT text, edit_of, stash, parts_json FROM drafts WHERE conversation_id = ?1",
                [conversation_id],
                |r| {
                    Ok(Draft {
                        text: r.get(0)?,
                        edit_of: r.get(1)?,
                        stash: r.get(2)?,
                        parts_json: r.get(3)?,
                    })
                },
            )
            .optional()?
            .unwrap_or_default())
    }

    /// [`Store::save_draft`], except that an empty draft does not remove a
    /// saved one this process has not seen (`known`: the saved text as it
    /// last read or wrote it): another tock typed it, and emptying a
    /// composer there must not lose it. Returns the draft kept, if it was.
    ///
    /// A draft that is not empty, saved over one another tock saved since
    /// (two front ends typing in one conversation), is merged with it so
    /// that neither's text is lost (see [`merge_drafts`]); the merge is
    /// saved and returned.
    pub fn save_draft_over(
        &self,
        conversation_id: i64,
        d: &Draft,
        known: &str,
        now: i64,
    ) -> Result<Option<Draft>> {
        let stored = self.draft(conversation_id)?;
        let changed_elsewhere =
            !stored.text.trim().is_empty() && stored.text != known && stored.text != d.text;
        if changed_elsewhere {
            if d.is_empty() {
                return Ok(Some(stored));
            }
            let text = merge_drafts(&d.text, &stored.text, known);
            if text != d.text {
                let merged = Draft { text, ..d.clone() };
                self.save_draft(conversation_id, &merged, now)?;
                return Ok(Some(merged));
            }
        }
        self.save_draft(conversation_id, d, now)?;
        Ok(None)
    }

    /// Save (or, when empty, remove) a conversation's draft. A conversation
    /// deleted meanwhile has no draft to keep: that is not an error.
    pub fn save_draft(&self, conversation_id: i64, d: &Draft, now: i64) -> Result<()> {
        let conn = self.conn();
        let exists: bool = conn
            .query_row(
                "SELECT 1 FROM conversations WHERE id = ?1",
                [conversation_id],
                |_| Ok(()),
            )
            .optional()?
            .is_some();
        if exists {
            save_draft(&conn, conversation_id, d, now)?;
        }
        Ok(())
    }
}

/// `ours` saved over `theirs`, which another tock saved since this one last
/// saw the draft as `known`: their text with ours in place of what we knew,
/// when they only added to it; either whole, when it holds the other as a
/// paragraph; else ours, then theirs.
fn merge_drafts(ours: &str, theirs: &str, known: &str) -> String {
    let has_paragraph =
        |text: &str, p: &str| text.split("\n\n").any(|para| para.trim() == p.trim());
    if has_paragraph(theirs, ours) {
        return theirs.to_string();
    }
    if has_paragraph(ours, theirs) {
        return ours.to_string();
    }
    if !known.trim().is_empty() && theirs.contains(known) {
        return theirs.replacen(known, ours, 1);
    }
    format!("{ours}\n\n{theirs}")
}

#[cfg(test)]
mod merge_tests {
    use super::merge_drafts;

    #[test]
    fn neither_text_is_lost_and_none_is_doubled() {
        // They typed where we had nothing: both, ours first.
        assert_eq!(merge_drafts("mine", "theirs", ""), "mine\n\ntheirs");
        // They added to what we knew: our edit takes its place in theirs.
        assert_eq!(
            merge_drafts("mine, edited", "mine\n\ntheirs", "mine"),
            "mine, edited\n\ntheirs"
        );
        // One holds the other already.
        assert_eq!(merge_drafts("a\n\nb", "b", "x"), "a\n\nb");
        assert_eq!(merge_drafts("b", "a\n\nb", "x"), "a\n\nb");
        // A short text inside a word of the other is no paragraph of it.
        assert_eq!(merge_drafts("an", "banana", ""), "an\n\nbanana");
    }
}
