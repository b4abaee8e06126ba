//! The `drafts` table: what the user has typed but not sent, per conversation.

use anyhow::{Result, anyhow};
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

/// How recent a send of the same text by another window must be for a
/// second send of it to be taken as the same Enter pressed twice.
const SENT_ELSEWHERE_MS: i64 = 10_000;

impl Store {
    /// Enqueue a row typed in a conversation's composer and clear its draft, together.
    ///
    /// `known`: the saved draft as the sending window last read or wrote it.
    /// When it is the text sent, and the draft is gone because another
    /// window sent that same text a moment ago (two windows showing one
    /// merged draft, Enter pressed in both), nothing is sent twice: an
    /// error says so.
    pub fn enqueue_clearing_draft(
        &self,
        item: &super::NewItem,
        known: Option<&str>,
        now: i64,
    ) -> Result<i64> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        if let (Some(conv), Some(known)) = (item.conversation_id, known)
            && !known.trim().is_empty()
            && known == item.text
        {
            let stored: Option<String> = tx
                .query_row(
                    "SELECT text FROM drafts WHERE conversation_id = ?1",
                    [conv],
                    |r| r.get(0),
                )
                .optional()?;
            let sent_elsewhere: bool = stored.as_deref().is_none_or(|t| t.trim().is_empty())
                && tx.query_row(
                    "SELECT EXISTS(SELECT 1 FROM outbox WHERE conversation_id = ?1 AND text = ?2 AND created_at >= ?3)",
                    params![conv, item.text, now - SENT_ELSEWHERE_MS],
                    |r| r.get(0),
                )?;
            if sent_elsewhere {
                return Err(anyhow!(
                    "this text was just sent from another window on this conversation; it was not sent twice"
                ));
            }
        }
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
        // An edit of a message sent is no shared draft: another tock's edit
        // is neither merged into this one nor given to it when this one
        // leaves its own (the resent message carried both texts). The
        // first to resend wins; the other's resend is refused and its
        // text comes back as a draft of its own.
        if changed_elsewhere && stored.edit_of.is_some() {
            if d.is_empty() {
                return Ok(None);
            }
            if d.edit_of.is_some() {
                self.save_draft(conversation_id, d, now)?;
                return Ok(None);
            }
        }
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
/// saw the draft as `known`: where each changed other paragraphs of what we
/// knew, both changes; else their text with ours in place of what we knew,
/// when they only added to it; either whole, when it holds the other as a
/// paragraph; else ours, then theirs.
fn merge_drafts(ours: &str, theirs: &str, known: &str) -> String {
    if let Some(merged) = merge_paragraphs(known, ours, theirs) {
        return merged;
    }
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

/// A three-way merge of paragraphs (split at blank lines): the changes
/// `ours` and `theirs` each made to `base` (paragraphs edited, removed or
/// added), all applied. Where both changed the same paragraphs, both
/// versions of them, ours first (once, when alike): nothing typed on either
/// side is lost. New paragraphs both put in one place go ours first. None
/// when there is no `base` to merge from. (`similar` diffs; it has no merge
/// of three texts. Its LCS diff: its Myers diff put an insertion after a
/// common suffix at an index before it, e.g. for `[a, a, b]` → `[b, c, c, c, b]`.)
fn merge_paragraphs(base: &str, ours: &str, theirs: &str) -> Option<String> {
    use similar::{Algorithm, DiffTag, capture_diff_slices};
    use std::ops::Range;
    /// Paragraphs of the base replaced, by what, on which side (0 ours).
    type Change = (Range<usize>, Vec<String>, u8);
    if base.trim().is_empty() {
        return None;
    }
    let split = |t: &str| t.split("\n\n").map(str::to_string).collect::<Vec<_>>();
    let b = split(base);
    // Each side's changes: the paragraphs of `base` replaced, by what, and
    // the side (0 ours, 1 theirs).
    let changes = |new: &str, side: u8| -> Vec<Change> {
        let new = split(new);
        let mut out = Vec::new();
        for (tag, old, new_range) in capture_diff_slices(Algorithm::Lcs, &b, &new)
            .iter()
            .map(|op| op.as_tag_tuple())
        {
            if tag == DiffTag::Equal {
                continue;
            }
            // As many paragraphs for as many: each replaced on its own, so
            // that an edit beside the other side's does not join it.
            if old.len() == new_range.len() {
                for (o, n) in old.zip(new_range) {
                    out.push((o..o + 1, vec![new[n].clone()], side));
                }
            } else {
                out.push((old, new[new_range].to_vec(), side));
            }
        }
        out
    };
    let mut all = changes(ours, 0);
    all.extend(changes(theirs, 1));
    all.sort_by_key(|(r, _, side)| (r.start, !r.is_empty(), r.end, *side));
    // Changes that touch the same paragraphs go together: two ranges that
    // overlap, or an insertion inside (not at an edge of) a range.
    let touches = |a: &Range<usize>, c: &Range<usize>| match (a.is_empty(), c.is_empty()) {
        (true, true) => false,
        (true, false) => c.start < a.start && a.start < c.end,
        (false, true) => a.start < c.start && c.start < a.end,
        (false, false) => a.start < c.end && c.start < a.end,
    };
    let mut groups: Vec<(Range<usize>, Vec<Change>)> = Vec::new();
    for change in all {
        match groups.last_mut() {
            Some((range, members)) if touches(range, &change.0) => {
                range.end = range.end.max(change.0.end);
                members.push(change);
            }
            _ => groups.push((change.0.clone(), vec![change])),
        }
    }
    // One side's version of `range`: its changes there applied.
    let version = |range: &Range<usize>, members: &[Change], side| {
        let mut out = Vec::new();
        let mut at = range.start;
        for (r, with, _) in members.iter().filter(|m| m.2 == side) {
            // A side's changes come in order, but an insertion the diff
            // places inside that side's own change before it (seen by the
            // property test) must not step back over it.
            out.extend(b[at..r.start.max(at)].iter().cloned());
            out.extend(with.iter().cloned());
            at = at.max(r.end);
        }
        out.extend(b[at.min(range.end)..range.end].iter().cloned());
        out
    };
    let mut out: Vec<String> = Vec::new();
    let mut at = 0;
    for (range, members) in groups {
        out.extend(b[at..range.start.max(at)].iter().cloned());
        let mine = version(&range, &members, 0);
        let yours = version(&range, &members, 1);
        let both = members.iter().any(|m| m.2 == 0) && members.iter().any(|m| m.2 == 1);
        match both {
            false if members[0].2 == 0 => out.extend(mine),
            false => out.extend(yours),
            true if mine == yours => out.extend(mine),
            // The one that holds the other; else theirs after ours, less
            // what ours already holds.
            true => {
                let holds = |a: &[String], b: &[String]| {
                    b.iter().all(|p| a.iter().any(|q| q.trim() == p.trim()))
                };
                if holds(&yours, &mine) {
                    out.extend(yours);
                } else {
                    let more: Vec<String> = yours
                        .into_iter()
                        .filter(|p| !mine.iter().any(|m| m.trim() == p.trim()))
                        .collect();
                    out.extend(mine);
                    out.extend(more);
                }
            }
        }
        at = at.max(range.end);
    }
    out.extend(b[at.min(b.len())..].iter().cloned());
    Some(out.join("\n\n"))
}

#[cfg(test)]
mod edit_tests {
    use super::{super::Store, Draft};

    /// Two tocks ↑-editing the same message: neither edit takes in the
    /// other's text, and the one that leaves its edit is not handed the
    /// other's.
    #[test]
    fn another_tocks_edit_is_neither_merged_nor_handed_over() {
        let s = Store::open_in_memory().unwrap();
        let c = s.create_conversation(None, "user", 0).unwrap();
        let edit = |text: &str| Draft {
            text: text.to_string(),
            edit_of: Some(7),
            stash: Some(String::new()),
            parts_json: None,
        };
        // A saved its edit; B, which knew the message's text, saves its own.
        s.save_draft_over(c, &edit("the question R"), "", 1)
            .unwrap();
        let r = s
            .save_draft_over(c, &edit("the question S"), "the question", 2)
            .unwrap();
        assert_eq!(r, None, "not merged");
        assert_eq!(s.draft(c).unwrap().text, "the question S");
        // A leaves its edit (its draft is empty again): B's is not its.
        let r = s
            .save_draft_over(c, &Draft::default(), "the question R", 3)
            .unwrap();
        assert_eq!(r, None, "not handed over");
        assert_eq!(s.draft(c).unwrap().text, "the question S", "B's edit stays");
    }
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

    /// Two front ends each edit another paragraph of the draft both saw:
    /// both edits, each paragraph once (it kept both whole drafts, every
    /// paragraph twice).
    #[test]
    fn edits_of_different_paragraphs_are_both_kept_once() {
        let known = "one\n\ntwo\n\nthree";
        assert_eq!(
            merge_drafts("ONE\n\ntwo\n\nthree", "one\n\ntwo\n\nTHREE", known),
            "ONE\n\ntwo\n\nTHREE"
        );
        // A paragraph removed here, one added there.
        assert_eq!(
            merge_drafts("one\n\nthree", "one\n\ntwo\n\nthree\n\nfour", known),
            "one\n\nthree\n\nfour"
        );
        // Both added a paragraph at the end: ours first.
        assert_eq!(
            merge_drafts(
                "one\n\ntwo\n\nthree\n\nmine",
                "one\n\ntwo\n\nthree\n\ntheirs",
                known
            ),
            "one\n\ntwo\n\nthree\n\nmine\n\ntheirs"
        );
        // The same edit on both sides: once.
        assert_eq!(
            merge_drafts("one\n\n2\n\nthree", "one\n\n2\n\nthree", known),
            "one\n\n2\n\nthree"
        );
    }

    /// Found by the property test: one side emptied the draft while the
    /// other rewrote it; the diff gave the other side an insertion inside
    /// its own change, and the merge panicked (a slice out of order).
    #[test]
    fn an_emptied_draft_against_a_rewritten_one_does_not_panic() {
        let merged = merge_drafts("", "p5\n\np5\n\np1\n\np5", "p5\n\np0\n\np3\n\np5");
        assert!(merged.split("\n\n").any(|p| p == "p1"), "{merged:?}");
    }

    proptest::proptest! {
        /// Whatever the two sides did to the paragraphs they both saw,
        /// every paragraph either of them wrote that was not there before
        /// is in the merge.
        #[test]
        fn no_new_paragraph_is_lost(
            base in proptest::collection::vec(0u8..6, 1..6),
            ours in proptest::collection::vec(0u8..9, 0..7),
            theirs in proptest::collection::vec(0u8..9, 0..7),
        ) {
            let text = |v: &[u8]| v.iter().map(|n| format!("p{n}")).collect::<Vec<_>>().join("\n\n");
            let (base, ours, theirs) = (text(&base), text(&ours), text(&theirs));
            let merged = merge_drafts(&ours, &theirs, &base);
            let had: Vec<&str> = base.split("\n\n").collect();
            let kept: Vec<&str> = merged.split("\n\n").collect();
            for p in ours.split("\n\n").chain(theirs.split("\n\n")) {
                if !p.is_empty() && !had.contains(&p) {
                    proptest::prop_assert!(kept.contains(&p), "{p} lost: {merged:?}");
                }
            }
        }
    }

    /// Both changed one paragraph: both versions of it, and of it only.
    #[test]
    fn one_paragraph_changed_on_both_sides_keeps_both_versions_of_it() {
        assert_eq!(
            merge_drafts(
                "one\n\nTWO\n\nthree",
                "one\n\nsecond\n\nthree",
                "one\n\ntwo\n\nthree"
            ),
            "one\n\nTWO\n\nsecond\n\nthree"
        );
        // And beside it, another paragraph edited on one side only.
        assert_eq!(
            merge_drafts(
                "uno\n\nTWO\n\nthree",
                "one\n\nsecond\n\nthree",
                "one\n\ntwo\n\nthree"
            ),
            "uno\n\nTWO\n\nsecond\n\nthree"
        );
    }
}
