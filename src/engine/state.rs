//! The one place that says what an outbox item is doing right now. The
//! pending strip, the F2 list, the status bar and `tock list` all show this,
//! so an item can never look "queued" in one view and "scheduled" in another.

use crate::store::{ItemSummary, OutboxItem, Status};

/// What holds up a conversation's items, beyond their own rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConversationGate {
    /// When the user stopped a reply: what was waiting to go then waits
    /// until the queue is resumed.
    pub paused_at: Option<i64>,
    /// A tool call waits for the user's answer.
    pub awaiting_approval: bool,
    /// How many of its tool calls wait for the user's answer.
    pub approvals_waiting: u32,
    /// An approved tool call is running (its reply goes on when it is done).
    pub running_tool: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ItemState {
    /// Goes as soon as its conversation is free.
    Queued,
    Sending,
    /// A transient failure; tried again at `at`.
    Retrying {
        at: i64,
        reason: String,
    },
    /// Waits for its time.
    Scheduled {
        at: i64,
    },
    /// Due, but its conversation's queue is paused.
    Paused,
    /// Due, but a tool call in its conversation waits for approval.
    AwaitingApproval,
    /// Due, but an approved tool call in its conversation is still running.
    RunningTool,
    Failed {
        reason: String,
    },
    Expired,
    Sent,
    Canceled,
}

impl ItemState {
    /// One word for scripts and narrow columns.
    pub fn label(&self) -> &'static str {
        match self {
            ItemState::Queued => "queued",
            ItemState::Sending => "sending",
            ItemState::Retrying { .. } => "retrying",
            ItemState::Scheduled { .. } => "scheduled",
            ItemState::Paused => "paused",
            ItemState::AwaitingApproval => "approval",
            ItemState::RunningTool => "tool",
            ItemState::Failed { .. } => "failed",
            ItemState::Expired => "expired",
            ItemState::Sent => "sent",
            ItemState::Canceled => "canceled",
        }
    }

    /// Still on its way (counts as pending in lists and badges).
    pub fn is_open(&self) -> bool {
        !matches!(self, ItemState::Sent | ItemState::Canceled)
    }
}

impl ConversationGate {
    /// The user stopped a reply and has not resumed the queue.
    pub fn paused(&self) -> bool {
        self.paused_at.is_some()
    }

    /// Whether the pause holds a row: one queued to go as soon as it could
    /// (no `due_at`) before the reply was stopped. A row added since is not
    /// held, nor one with a time of its own (scheduled, a task, a series'
    /// occurrence): it goes at its time, also when that time came while
    /// it waited behind the stopped reply.
    pub fn holds(&self, due_at: Option<i64>, created_at: i64) -> bool {
        due_at.is_none() && self.paused_at.is_some_and(|stopped| created_at <= stopped)
    }
}

/// The state of `item` at `now`, given what holds up its conversation.
pub fn item_state(item: &OutboxItem, now: i64, gate: ConversationGate) -> ItemState {
    derive(
        item.status,
        item.due_at,
        item.created_at,
        item.next_attempt_at,
        item.last_error.as_deref(),
        now,
        gate,
    )
}

/// The same for an item's summary (the counts in the status bar).
pub fn summary_state(s: &ItemSummary, now: i64, gate: ConversationGate) -> ItemState {
    derive(
        s.status,
        s.due_at,
        s.created_at,
        s.next_attempt_at,
        None,
        now,
        gate,
    )
}

/// The one derivation, from the columns that decide it.
fn derive(
    status: Status,
    due_at: Option<i64>,
    created_at: i64,
    next_attempt_at: Option<i64>,
    last_error: Option<&str>,
    now: i64,
    gate: ConversationGate,
) -> ItemState {
    let reason = || last_error.unwrap_or_default().to_string();
    match status {
        Status::Sending => ItemState::Sending,
        Status::Sent => ItemState::Sent,
        Status::Canceled => ItemState::Canceled,
        Status::Expired => ItemState::Expired,
        Status::Failed => ItemState::Failed { reason: reason() },
        Status::Pending => {
            if let Some(at) = next_attempt_at.filter(|t| *t > now) {
                ItemState::Retrying {
                    at,
                    reason: reason(),
                }
            } else if let Some(at) = due_at.filter(|d| *d > now) {
                ItemState::Scheduled { at }
            } else if gate.awaiting_approval {
                ItemState::AwaitingApproval
            } else if gate.running_tool {
                ItemState::RunningTool
            } else if gate.holds(due_at, created_at) {
                ItemState::Paused
            } else {
                ItemState::Queued
            }
        }
    }
}

/// The gate of every conversation that has one (paused or awaiting approval).
pub fn gates(
    store: &crate::store::Store,
) -> anyhow::Result<std::collections::HashMap<i64, ConversationGate>> {
    let mut map = std::collections::HashMap::new();
    for (id, at) in store.paused_conversations()? {
        map.entry(id)
            .or_insert_with(ConversationGate::default)
            .paused_at = Some(at);
    }
    for a in store.waiting_approvals()? {
        let gate = map
            .entry(a.conversation_id)
            .or_insert_with(ConversationGate::default);
        gate.awaiting_approval = true;
        gate.approvals_waiting += 1;
    }
    for a in store.executing_approvals()? {
        map.entry(a.conversation_id)
            .or_insert_with(ConversationGate::default)
            .running_tool = true;
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Kind;

    fn item(status: Status) -> OutboxItem {
        OutboxItem {
            id: 1,
            conversation_id: Some(1),
            kind: Kind::Queued,
            text: "t".into(),
            model_override: None,
            parts_json: None,
            due_at: None,
            status,
            attempts: 0,
            last_error: None,
            next_attempt_at: None,
            priority: 0,
            claimed_by: None,
            created_at: 0,
            updated_at: 0,
            sent_at: None,
            title: None,
            payload_json: None,
            series_id: None,
            occurrence_at: None,
        }
    }

    #[test]
    fn each_state_from_its_row() {
        let open = ConversationGate::default();
        assert_eq!(
            item_state(&item(Status::Pending), 10, open),
            ItemState::Queued
        );
        let mut it = item(Status::Pending);
        it.due_at = Some(20);
        assert_eq!(item_state(&it, 10, open), ItemState::Scheduled { at: 20 });
        // Due now: a scheduled item is queued like any other.
        assert_eq!(item_state(&it, 20, open), ItemState::Queued);
        it.next_attempt_at = Some(30);
        it.last_error = Some("503".into());
        assert_eq!(
            item_state(&it, 25, open),
            ItemState::Retrying {
                at: 30,
                reason: "503".into()
            }
        );
        let paused = ConversationGate {
            paused_at: Some(5),
            ..Default::default()
        };
        assert_eq!(
            item_state(&item(Status::Pending), 10, paused),
            ItemState::Paused
        );
        // What was added after the stop, or came due after it, is not held.
        let mut added_since = item(Status::Pending);
        added_since.created_at = 6;
        assert_eq!(item_state(&added_since, 10, paused), ItemState::Queued);
        let mut due_since = item(Status::Pending);
        due_since.due_at = Some(7);
        assert_eq!(item_state(&due_since, 10, paused), ItemState::Queued);
        // Nor what has a time of its own, come before the stop: it goes at
        // its time (it was waiting behind the stopped reply).
        let mut due_before = item(Status::Pending);
        due_before.due_at = Some(3);
        assert_eq!(item_state(&due_before, 10, paused), ItemState::Queued);
        // A paused queue does not hide that an item is still waiting for its time.
        let mut later = item(Status::Pending);
        later.due_at = Some(99);
        assert_eq!(
            item_state(&later, 10, paused),
            ItemState::Scheduled { at: 99 }
        );
        let approval = ConversationGate {
            paused_at: Some(5),
            awaiting_approval: true,
            ..Default::default()
        };
        assert_eq!(
            item_state(&item(Status::Pending), 10, approval),
            ItemState::AwaitingApproval
        );
        // An approved call still running holds the queue, and says so.
        let running = ConversationGate {
            running_tool: true,
            ..Default::default()
        };
        assert_eq!(
            item_state(&item(Status::Pending), 10, running),
            ItemState::RunningTool
        );
        assert_eq!(
            item_state(&item(Status::Pending), 10, running).label(),
            "tool"
        );
        assert_eq!(
            item_state(&item(Status::Sending), 10, paused),
            ItemState::Sending
        );
        assert_eq!(
            item_state(&item(Status::Expired), 10, open),
            ItemState::Expired
        );
        assert_eq!(item_state(&item(Status::Sent), 10, open).label(), "sent");
    }
}
