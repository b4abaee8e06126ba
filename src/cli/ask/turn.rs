//! Where the turn one message started stands, as the database has it:
//! read by `tock ask` whichever tock sends the message.

use anyhow::{Result, bail};

use crate::engine::{Clock, SystemClock};
use crate::sanitize::sanitize_line;
use crate::store::{
    Approval, ApprovalStatus, Kind, Message, MessageStatus, OutboxItem, Role, Status, Store,
};

/// What the turn waits for: `key` names the reason (a countdown in `text`
/// changes every second; the reason is said once).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Wait {
    pub key: String,
    pub text: String,
}

pub(super) struct Turn {
    /// The model's messages of the turn so far, oldest first.
    pub replies: Vec<Message>,
    /// What it waits for now, if anything but its turn.
    pub waits: Option<Wait>,
    /// Tool calls the model asked for, by message.
    pub calls: Vec<(i64, String)>,
    /// None while it goes on; the answer, or why there is none.
    pub end: Option<std::result::Result<(), String>>,
    /// What the reader should know of an answer (cut short by the length limit).
    pub note: Option<String>,
}

impl Turn {
    /// The replies that make the answer: an attempt cut off and then asked
    /// for again (a stream that broke, a tock that stopped under it) is
    /// left out, as views collapse it.
    pub fn answer(&self) -> impl Iterator<Item = &Message> {
        self.replies.iter().filter(|m| !self.asked_again(m))
    }

    /// Whether reply `m` broke off and another attempt follows it.
    pub fn asked_again(&self, m: &Message) -> bool {
        m.status == MessageStatus::Interrupted && self.replies.iter().any(|later| later.id > m.id)
    }
}

pub(super) fn read_turn(store: &Store, conv: i64, item_id: i64) -> Result<Turn> {
    // The messages first, the outbox after: a reply cut and its item put
    // back to pending are one transaction, and reading them the other way
    // round could see the cut reply with the item still sent (the reply
    // taken for stopped while it was about to be asked for again).
    // What came after the item's message, up to the next message of the user's.
    let messages: Vec<Message> = match store.user_message_of(item_id)? {
        Some(first) => store
            .messages_after(conv, first)?
            .into_iter()
            .take_while(|m| m.role != Role::User)
            .collect(),
        None => Vec::new(),
    };
    let approvals = store.approvals(conv)?;
    let Some(item) = store.item(item_id)? else {
        bail!("item {item_id} was deleted");
    };
    let mut turn = Turn {
        replies: Vec::new(),
        waits: None,
        calls: Vec::new(),
        end: None,
        note: None,
    };
    match item.status {
        Status::Canceled => turn.end = Some(Err(format!("item {item_id} was canceled"))),
        Status::Failed | Status::Expired => {
            let why = item
                .last_error
                .clone()
                .unwrap_or_else(|| item.status.as_str().to_string());
            turn.end = Some(Err(format!("not answered: {}", sanitize_line(&why))));
        }
        Status::Pending | Status::Sending => {
            turn.waits = waits_for(store, conv, &item, &approvals)?
        }
        Status::Sent => {}
    }
    for m in messages.iter().filter(|m| m.role == Role::Assistant) {
        for call in m.tool_calls() {
            turn.calls.push((m.id, call.name));
        }
        if m.status != MessageStatus::Superseded {
            turn.replies.push(m.clone());
        }
    }
    // A call waiting for approval may be saved before its reply's list of
    // calls is: said as a call all the same, before what it waits for.
    for a in &approvals {
        let call = (a.message_id, a.tool.clone());
        if messages.iter().any(|m| m.id == call.0) && !turn.calls.contains(&call) {
            turn.calls.push(call);
        }
    }
    if item.status != Status::Sent || turn.end.is_some() {
        return Ok(turn);
    }
    let after_tools: Vec<OutboxItem> = store
        .items_after(conv, item_id)?
        .into_iter()
        .filter(|i| i.kind == Kind::Regenerate)
        .collect();
    if let Some(failed) = after_tools.iter().find(|i| {
        matches!(
            i.status,
            Status::Failed | Status::Expired | Status::Canceled
        )
    }) {
        let why = failed
            .last_error
            .clone()
            .unwrap_or_else(|| failed.status.as_str().to_string());
        turn.end = Some(Err(format!(
            "the model's answer to the tool results was not had: {}",
            sanitize_line(&why)
        )));
        return Ok(turn);
    }
    if let Some(next) = after_tools
        .iter()
        .find(|i| matches!(i.status, Status::Pending | Status::Sending))
    {
        turn.waits = waits_for(store, conv, next, &approvals)?;
        return Ok(turn);
    }
    if let Some(w) = waiting_approval(&approvals) {
        turn.waits = Some(w);
        return Ok(turn);
    }
    let last = messages
        .iter()
        .rev()
        .find(|m| m.role != Role::Notice && m.status != MessageStatus::Superseded);
    match last {
        Some(m) if m.role == Role::Assistant => match m.status {
            MessageStatus::Complete if m.tool_calls().is_empty() => {
                turn.end = Some(Ok(()));
                turn.note = m.error.as_deref().map(|e| sanitize_line(e).into_owned());
            }
            // Its tool calls run, or it streams.
            MessageStatus::Complete | MessageStatus::Streaming => {}
            _ => {
                let why = m
                    .error
                    .clone()
                    .unwrap_or_else(|| "the reply was stopped".into());
                turn.end = Some(Err(format!("the reply was cut: {}", sanitize_line(&why))));
            }
        },
        // The calls' results are in, and their answer is about to be asked.
        _ => {}
    }
    Ok(turn)
}

/// A tool call of the conversation waiting for the user's answer.
pub(super) fn approval_wait(store: &Store, conv: i64) -> Result<Option<Wait>> {
    Ok(waiting_approval(&store.approvals(conv)?))
}

/// The first of `approvals` that waits for the user's answer.
fn waiting_approval(approvals: &[Approval]) -> Option<Wait> {
    approvals
        .iter()
        .find(|a| a.status == ApprovalStatus::Waiting)
        .map(|a| Wait {
            key: format!("approval {}", a.id),
            text: format!(
                "waiting for your answer to the tool call {} (tock approve {id} / tock deny {id})",
                sanitize_line(&a.tool),
                id = a.id
            ),
        })
}

/// Why an item that is not sent yet waits, when it is not just its turn.
fn waits_for(
    store: &Store,
    conv: i64,
    item: &OutboxItem,
    approvals: &[Approval],
) -> Result<Option<Wait>> {
    let now = SystemClock.now_ms();
    if let Some(at) = item.next_attempt_at.filter(|&at| at > now) {
        let why = item.last_error.as_deref().unwrap_or("it failed");
        return Ok(Some(Wait {
            key: format!("back-off {} {}", item.id, item.attempts),
            text: format!(
                "{}; trying again {}",
                sanitize_line(why),
                crate::when::countdown(at, now)
            ),
        }));
    }
    if let Some(w) = waiting_approval(approvals) {
        return Ok(Some(w));
    }
    if store
        .conversation(conv)?
        .is_some_and(|c| c.queue_paused_at.is_some())
    {
        return Ok(Some(Wait {
            key: "paused".into(),
            text: format!(
                "the conversation's queue is paused (tock resume --conv {conv} lets it go)"
            ),
        }));
    }
    Ok(None)
}
