//! Versions of a message: the replies a regeneration put aside, and the
//! earlier texts of a message edited and sent again.
//!
//! A regeneration or an edit-and-resend records, on its outbox row, the
//! message it replaces (`outbox.replaces_message_id`); the message that row
//! creates (the new reply, or the new user message) is the next version.
//! Versions linked that way, of the same role, form one group. At most one
//! of them is shown; the others are superseded and never sent to the model.
//!
//! The version shown can be changed for a regenerated reply at the end of
//! a conversation (nothing was said after it): the two replies only swap
//! their `complete` and `superseded` states. Earlier edits can only be
//! looked at: their replies and everything said after them went with them,
//! and bringing them back would rewrite the history later messages answered.
//! Messages written before versions were recorded have none.

use std::collections::HashMap;

use anyhow::{Result, anyhow};
use rusqlite::{OptionalExtension, params};

use super::{Message, MessageStatus, Role, Store};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AlternateKind {
    /// Replies to the same message (regenerations).
    Regenerated,
    /// Texts of one user message (edit-and-resend).
    Edited,
}

/// The versions of one message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alternates {
    pub kind: AlternateKind,
    /// Message ids, oldest first (the order "‹2/3›" counts in).
    pub versions: Vec<i64>,
    /// Index in `versions` of the version the conversation shows; `None`
    /// when all were put aside (an edit earlier in the conversation
    /// superseded them).
    pub shown: Option<usize>,
    /// Whether [`Store::show_alternate`] can bring another version forward.
    pub can_choose: bool,
}

impl Alternates {
    /// 1-based position of `message_id` and the number of versions.
    pub fn position(&self, message_id: i64) -> Option<(usize, usize)> {
        let i = self.versions.iter().position(|&v| v == message_id)?;
        Some((i + 1, self.versions.len()))
    }
}

/// The version groups of one conversation, looked up by any member.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AlternateMap {
    groups: Vec<Alternates>,
    by_message: HashMap<i64, usize>,
}

impl AlternateMap {
    /// The group `message_id` belongs to (only messages with at least two versions have one).
    pub fn of(&self, message_id: i64) -> Option<&Alternates> {
        self.by_message.get(&message_id).map(|&g| &self.groups[g])
    }
    pub fn groups(&self) -> &[Alternates] {
        &self.groups
    }
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }
}

/// Group `history` (a conversation's messages, oldest first) into versions,
/// given `replaces`: outbox row id → the message it replaced.
pub fn group_versions(history: &[Message], replaces: &HashMap<i64, i64>) -> AlternateMap {
    let by_id: HashMap<i64, &Message> = history.iter().map(|m| (m.id, m)).collect();
    // Each message's previous version. A reply generated again after a cut
    // leaves several messages for one outbox row: only the last one counts
    // (the earlier attempts are partial replies, collapsed by the views).
    let mut last_of_row: HashMap<(i64, &'static str), i64> = HashMap::new();
    for m in history {
        if let Some(row) = m.outbox_id
            && matches!(m.role, Role::User | Role::Assistant)
        {
            last_of_row.insert((row, m.role.as_str()), m.id);
        }
    }
    let mut parent: HashMap<i64, i64> = HashMap::new();
    for (&(row, role), &id) in &last_of_row {
        if let Some(&old) = replaces.get(&row)
            && by_id.get(&old).is_some_and(|o| o.role.as_str() == role)
            && old != id
        {
            parent.insert(id, old);
        }
    }
    // Union the links into groups, keyed by their oldest version.
    fn root(parent: &HashMap<i64, i64>, mut id: i64) -> i64 {
        // Links always point to an older message, so this ends.
        let mut steps = 0;
        while let Some(&p) = parent.get(&id) {
            if p >= id || steps > 10_000 {
                break;
            }
            id = p;
            steps += 1;
        }
        id
    }
    let mut members: HashMap<i64, Vec<i64>> = HashMap::new();
    for &id in parent.keys() {
        let r = root(&parent, id);
        members.entry(r).or_default().push(id);
    }
    let mut roots: Vec<i64> = members.keys().copied().collect();
    roots.sort_unstable();
    let last_visible = history
        .iter()
        .filter(|m| m.role != Role::Notice && m.status != MessageStatus::Superseded)
        .map(|m| m.id)
        .max();
    let mut out = AlternateMap::default();
    for r in roots {
        let mut versions = members.remove(&r).unwrap_or_default();
        versions.push(r);
        versions.sort_unstable();
        versions.dedup();
        let Some(first) = by_id.get(&r) else { continue };
        let kind = if first.role == Role::User {
            AlternateKind::Edited
        } else {
            AlternateKind::Regenerated
        };
        let shown = versions.iter().rposition(|v| {
            by_id
                .get(v)
                .is_some_and(|m| m.status != MessageStatus::Superseded)
        });
        let head = shown.and_then(|i| by_id.get(&versions[i]));
        let can_choose = kind == AlternateKind::Regenerated
            && head.is_some_and(|h| {
                h.status == MessageStatus::Complete && last_visible == Some(h.id)
            })
            // Every other version was a complete reply when it was put aside.
            && versions.iter().all(|v| {
                by_id.get(v).is_some_and(|m| {
                    matches!(m.status, MessageStatus::Complete | MessageStatus::Superseded)
                        && m.tool_calls_json.is_none()
                })
            });
        let g = out.groups.len();
        for &v in &versions {
            out.by_message.insert(v, g);
        }
        out.groups.push(Alternates {
            kind,
            versions,
            shown,
            can_choose,
        });
    }
    out
}

impl Store {
    /// Outbox rows of a conversation that replaced a message: row → message.
    fn replaced_messages(
        conn: &rusqlite::Connection,
        conversation_id: i64,
    ) -> rusqlite::Result<HashMap<i64, i64>> {
        let mut st = conn.prepare_cached(
            "SELECT id, replaces_message_id FROM outbox
             WHERE conversation_id = ?1 AND replaces_message_id IS NOT NULL",
        )?;
        let rows = st.query_map([conversation_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect()
    }

    /// The version groups of a conversation (see the module doc).
    pub fn alternates(&self, conversation_id: i64) -> Result<AlternateMap> {
        let history = self.messages(conversation_id)?;
        let replaces = Self::replaced_messages(&self.conn(), conversation_id)?;
        Ok(group_versions(&history, &replaces))
    }

    /// Show `message_id`, a regenerated reply put aside, instead of the
    /// version shown now (which is put aside in its place). The model then
    /// sees this version. Refused unless the group allows it (see
    /// [`Alternates::can_choose`]); showing the version already shown does
    /// nothing. Returns the conversation id.
    pub fn show_alternate(&self, message_id: i64) -> Result<i64> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let conversation_id: i64 = tx
            .query_row(
                "SELECT conversation_id FROM messages WHERE id = ?1",
                [message_id],
                |r| r.get(0),
            )
            .optional()?
            .ok_or_else(|| anyhow!("no message {message_id}"))?;
        let history = {
            let mut st = tx.prepare_cached(&format!(
                "SELECT {} FROM messages WHERE conversation_id = ?1 ORDER BY id",
                super::messages::COLS
            ))?;
            let rows = st.query_map([conversation_id], Message::from_row)?;
            rows.collect::<rusqlite::Result<Vec<_>>>()?
        };
        let replaces = Self::replaced_messages(&tx, conversation_id)?;
        let map = group_versions(&history, &replaces);
        let group = map
            .of(message_id)
            .ok_or_else(|| anyhow!("message {message_id} has no other version"))?;
        let shown = group.shown.map(|i| group.versions[i]);
        if shown == Some(message_id) {
            return Ok(conversation_id);
        }
        if !group.can_choose {
            return Err(anyhow!(match group.kind {
                AlternateKind::Edited =>
                    "an earlier text of an edited message can be looked at, not brought back",
                AlternateKind::Regenerated =>
                    "only the last reply of a conversation, complete and without tool calls, can be switched",
            }));
        }
        let busy: bool = tx.query_row(
            "SELECT EXISTS(SELECT 1 FROM messages WHERE conversation_id = ?1 AND status = 'streaming')
                 OR EXISTS(SELECT 1 FROM outbox WHERE conversation_id = ?1 AND status IN ('pending', 'sending')
                           AND (kind = 'regenerate' OR sent_at IS NOT NULL))",
            [conversation_id],
            |r| r.get(0),
        )?;
        if busy {
            return Err(anyhow!("a reply is on its way in this conversation"));
        }
        if let Some(old) = shown {
            tx.execute(
                "UPDATE messages SET status = 'superseded' WHERE id = ?1 AND status = 'complete'",
                [old],
            )?;
        }
        tx.execute(
            "UPDATE messages SET status = 'complete' WHERE id = ?1 AND status = 'superseded'",
            params![message_id],
        )?;
        tx.commit()?;
        Ok(conversation_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(id: i64, role: Role, status: MessageStatus, outbox_id: Option<i64>) -> Message {
        Message {
            id,
            conversation_id: 1,
            role,
            content: format!("m{id}"),
            status,
            model: None,
            outbox_id,
            parts_json: None,
            tool_calls_json: None,
            tool_call_id: None,
            error: None,
            created_at: id,
        }
    }

    #[test]
    fn a_regeneration_cut_and_generated_again_is_one_version() {
        use MessageStatus::*;
        // Question (row 10), reply 2 put aside by regeneration row 11, whose
        // first attempt (3) was cut and second (4) completed.
        let history = [
            m(1, Role::User, Complete, Some(10)),
            m(2, Role::Assistant, Superseded, Some(10)),
            m(3, Role::Assistant, Interrupted, Some(11)),
            m(4, Role::Assistant, Complete, Some(11)),
        ];
        let replaces = HashMap::from([(11, 2)]);
        let map = group_versions(&history, &replaces);
        assert_eq!(map.groups().len(), 1);
        let g = map.of(4).unwrap();
        assert_eq!(g.versions, [2, 4]);
        assert_eq!(g.shown, Some(1));
        assert!(g.can_choose);
        assert_eq!(
            map.of(3),
            None,
            "the cut attempt is collapsed, not a version"
        );
        assert_eq!(map.of(1), None);
    }

    #[test]
    fn no_links_no_versions_and_a_link_to_another_role_is_ignored() {
        use MessageStatus::*;
        let history = [
            m(1, Role::User, Superseded, Some(10)),
            m(2, Role::Assistant, Superseded, Some(10)),
            m(3, Role::User, Complete, Some(11)),
            m(4, Role::Assistant, Complete, Some(11)),
        ];
        assert!(group_versions(&history, &HashMap::new()).is_empty());
        // An edit (row 11 replaces user message 1): the new user message is
        // the next version; its reply is not a version of the old reply.
        let map = group_versions(&history, &HashMap::from([(11, 1)]));
        let g = map.of(3).unwrap();
        assert_eq!(
            (g.kind, g.versions.clone(), g.shown),
            (AlternateKind::Edited, vec![1, 3], Some(1))
        );
        assert!(!g.can_choose);
        assert_eq!(map.of(4), None);
    }
}
