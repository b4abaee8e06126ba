//! Why a pending item has not gone out yet: for `tock list`, `tock status`
//! and the views, so nothing waits without saying what for.

use std::collections::HashMap;

use anyhow::Result;

use super::Store;

/// A pause a failure made less than this long ago is not lifted by a new
/// message: it was typed before the pause could be seen.
pub const UNSEEN_PAUSE_MS: i64 = 1_500;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Waiting {
    /// Scheduled: not due yet.
    Due { at: i64 },
    /// A tool call in its conversation waits for the user's approval.
    Approval { approval_id: i64 },
    /// Behind another item of its conversation (in flight or first in line).
    Behind { item_id: i64 },
    /// Behind the reply its conversation waits for: streaming, cut off by a
    /// tock that stopped, or being generated again (no listed item).
    BehindReply,
    /// The same with no live dispatcher: that reply was cut off when the
    /// tock generating it stopped.
    BehindCutReply,
    /// Behind a tool call running in its conversation (an MCP server's).
    BehindToolCall { tool: String },
    /// The same with no live dispatcher: the call was cut off.
    BehindCutToolCall { tool: String },
    /// Backing off after a transient failure.
    Backoff { until: i64 },
    /// Its reply is being generated again after a failure (it is already in
    /// its conversation), not before `until`.
    ReplyRetry { until: i64 },
    /// Nothing in the way: it goes as soon as a dispatcher runs.
    Ready,
    /// Its conversation's queue waits until resumed.
    QueuePaused { by: PausedBy },
    /// The outbox is switched off in the config (decided by the caller,
    /// which knows the config; the store does not).
    Disabled,
}

/// What paused a conversation's queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PausedBy {
    /// The user stopped a reply.
    Stop,
    /// This message could not be sent (refused, or out of attempts).
    FailedMessage { item_id: i64 },
    /// The reply to this item failed for good.
    FailedReply { item_id: i64 },
}

impl Waiting {
    /// Behind something else of its conversation that goes first (another
    /// row, a reply, a tool call), rather than waiting for a time, an
    /// answer or the user.
    pub fn is_behind(&self) -> bool {
        match self {
            Waiting::Behind { .. }
            | Waiting::BehindReply
            | Waiting::BehindCutReply
            | Waiting::BehindToolCall { .. }
            | Waiting::BehindCutToolCall { .. } => true,
            Waiting::Due { .. }
            | Waiting::Approval { .. }
            | Waiting::Backoff { .. }
            | Waiting::ReplyRetry { .. }
            | Waiting::Ready
            | Waiting::QueuePaused { .. }
            | Waiting::Disabled => false,
        }
    }

    /// As it reads when no dispatcher runs: no reply is being generated
    /// then, no tool call runs.
    fn with_no_dispatcher(self) -> Self {
        match self {
            Waiting::BehindReply => Waiting::BehindCutReply,
            Waiting::BehindToolCall { tool } => Waiting::BehindCutToolCall { tool },
            w => w,
        }
    }

    /// One short line, e.g. "back-off until 14:05 (in 20s)".
    pub fn describe(&self, now: i64) -> String {
        let at = |ms: i64| {
            // Beyond the next 20 hours the time alone could be today's or
            // tomorrow's: the day goes with it.
            let fmt = if (ms - now).abs() > 20 * 3_600_000 {
                "%a %-d %b %H:%M:%S"
            } else {
                "%H:%M:%S"
            };
            let local = chrono::DateTime::from_timestamp_millis(ms)
                .map(|d| d.with_timezone(&chrono::Local).format(fmt).to_string())
                .unwrap_or_default();
            // Counted down as `tock list` and the TUI count (to the whole
            // second left), so that the same item reads the same everywhere.
            format!("{local} ({})", crate::when::countdown(ms, now))
        };
        match self {
            // A time someone set: as every list shows it, to the minute with its day.
            Waiting::Due { at: t } => {
                let local = chrono::DateTime::from_timestamp_millis(*t)
                    .zip(chrono::DateTime::from_timestamp_millis(now))
                    .map(|(d, n)| crate::when::absolute(d, &n.with_timezone(&chrono::Local)))
                    .unwrap_or_default();
                format!(
                    "scheduled for {local} ({})",
                    crate::when::countdown(*t, now)
                )
            }
            Waiting::Approval { approval_id } => {
                format!("waiting for approval #{approval_id} in its conversation")
            }
            Waiting::Behind { item_id } => format!("conversation busy: behind item #{item_id}"),
            Waiting::BehindReply => {
                // Said in `tock status` too: not "tock status says…".
                "conversation busy: behind the reply being generated there".into()
            }
            Waiting::BehindCutReply => "conversation busy: behind a reply cut off when its tock stopped (the next tock or tock daemon asks for it again)".into(),
            Waiting::BehindToolCall { tool } => format!(
                "conversation busy: behind the tool call {} running there (tock stop CONV stops it)",
                crate::sanitize::sanitize_line(tool)
            ),
            Waiting::BehindCutToolCall { tool } => format!(
                "conversation busy: behind the tool call {}, cut off when its tock stopped (the next tock or tock daemon goes on from there)",
                crate::sanitize::sanitize_line(tool)
            ),
            Waiting::Backoff { until } => format!("back-off until {}", at(*until)),
            Waiting::ReplyRetry { until } => {
                format!("its reply is generated again at {}", at(*until))
            }
            Waiting::Ready => "ready: sent as soon as a dispatcher runs".into(),
            Waiting::QueuePaused { by } => match by {
                PausedBy::Stop => "queue paused: a reply or tool call was stopped in its conversation (a new message there, or tock resume --conv, resumes it)".into(),
                PausedBy::FailedMessage { item_id } => format!(
                    "queue paused after item #{item_id} could not be sent (tock retry {item_id} sends it, then this)"
                ),
                PausedBy::FailedReply { item_id } => format!(
                    "queue paused after the reply to item #{item_id} failed (tock retry {item_id} generates it again, then this)"
                ),
            },
            Waiting::Disabled => {
                "nothing is sent: the outbox is off in the config, or the config file cannot be read"
                    .into()
            }
        }
    }
}

impl Store {
    /// The reason each pending row waits, by row id (regenerations included:
    /// they hold their conversation too).
    pub fn waiting(&self, now: i64) -> Result<HashMap<i64, Waiting>> {
        let dispatching = self.live_lease_holder(now)?.is_some();
        let conn = self.conn();
        let approvals: HashMap<i64, i64> = {
            let mut st = conn.prepare_cached(
                "SELECT conversation_id, MIN(id) FROM approvals WHERE status = 'waiting' GROUP BY conversation_id",
            )?;
            st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?
        };
        // In dispatch order within each conversation, in-flight rows first.
        type Row = (
            i64,
            Option<i64>,
            String,
            Option<i64>,
            Option<i64>,
            Option<i64>,
            i64,
            bool,
        );
        let rows: Vec<Row> = {
            let mut st = conn.prepare_cached(
                "SELECT id, conversation_id, status, due_at, next_attempt_at, sent_at,
                        COALESCE(due_at, created_at), kind = 'regenerate' FROM outbox
                 WHERE status IN ('pending', 'sending')
                 ORDER BY conversation_id, CASE status WHEN 'sending' THEN 0 ELSE 1 END,
                          priority DESC, COALESCE(due_at, created_at), id",
            )?;
            st.query_map([], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                ))
            })?
            .collect::<rusqlite::Result<_>>()?
        };
        // When each paused queue was stopped: it holds the rows queued
        // without a time of their own by then (as `dispatchable` does).
        let paused = super::conversations::paused_queues(&conn)?;
        // What paused each: a failed reply, else a failed message (newest
        // first), else a stop; as the strip says it.
        let mut paused_by: HashMap<i64, PausedBy> = HashMap::new();
        if !paused.is_empty() {
            let mut st = conn.prepare_cached(&format!(
                "SELECT o.conversation_id, o.id, o.sent_at IS NOT NULL FROM outbox AS o
                 JOIN conversations AS c ON c.id = o.conversation_id
                 WHERE c.queue_paused_at IS NOT NULL AND o.status IN ('failed', 'expired')
                   -- Only a failure that made this pause (it is written just
                   -- before the row is marked): an older one passed over
                   -- since does not explain a later stop. A pause moved on
                   -- by a message sent just after the failure (to hold it,
                   -- the failure unseen yet) is still the failure's.
                   AND o.updated_at >= c.queue_paused_at - {unseen}
                 ORDER BY o.sent_at IS NOT NULL, o.updated_at, o.id",
                unseen = UNSEEN_PAUSE_MS
            ))?;
            let failed = st
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect::<rusqlite::Result<Vec<(i64, i64, bool)>>>()?;
            for (conv, item_id, accepted) in failed {
                paused_by.insert(
                    conv,
                    if accepted {
                        PausedBy::FailedReply { item_id }
                    } else {
                        PausedBy::FailedMessage { item_id }
                    },
                );
            }
        }
        let mut out = HashMap::new();
        // The row that holds each conversation: a reply streaming (its row is
        // already `sent`), a row in flight, or its first due row.
        // What the head is: an item the lists show, or a reply (streaming,
        // or its row a regeneration or already sent), which they do not.
        let mut head: HashMap<i64, Waiting> = {
            let mut st = conn.prepare_cached(
                "SELECT conversation_id FROM messages
                 WHERE status = 'streaming' AND outbox_id IS NOT NULL",
            )?;
            st.query_map([], |r| Ok((r.get(0)?, Waiting::BehindReply)))?
                .collect::<rusqlite::Result<_>>()?
        };
        // A tool call running there holds it as its reply does.
        {
            let mut st = conn.prepare_cached(
                "SELECT conversation_id, tool FROM tool_runs ORDER BY started_at, id",
            )?;
            let runs = st.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
            for run in runs {
                let (conv, tool) = run?;
                head.entry(conv).or_insert(Waiting::BehindToolCall { tool });
            }
        }
        let behind = |id: i64, regenerate: bool, sent: Option<i64>| {
            if regenerate || sent.is_some() {
                Waiting::BehindReply
            } else {
                Waiting::Behind { item_id: id }
            }
        };
        for (id, conv, status, due, next, sent, place, regenerate) in rows {
            if status == "sending" {
                if let Some(c) = conv {
                    head.entry(c).or_insert(behind(id, regenerate, sent));
                }
                continue;
            }
            let reason = if let Some(at) = due.filter(|d| *d > now) {
                Waiting::Due { at }
            } else if let Some(a) = conv.and_then(|c| approvals.get(&c)) {
                Waiting::Approval { approval_id: *a }
            } else if conv
                .and_then(|c| paused.get(&c))
                .is_some_and(|stopped| due.is_none() && place <= *stopped)
            {
                Waiting::QueuePaused {
                    by: conv
                        .and_then(|c| paused_by.get(&c).copied())
                        .unwrap_or(PausedBy::Stop),
                }
            } else if let Some(h) = conv.and_then(|c| head.get(&c)) {
                h.clone()
            } else {
                if let Some(c) = conv {
                    // A row waiting out a back-off holds its conversation as
                    // itself (it is listed): nothing is being generated.
                    let holds = match next.filter(|t| *t > now) {
                        Some(_) if !regenerate => Waiting::Behind { item_id: id },
                        _ => behind(id, regenerate, sent),
                    };
                    head.insert(c, holds);
                }
                match next.filter(|t| *t > now) {
                    Some(until) if sent.is_some() => Waiting::ReplyRetry { until },
                    Some(until) => Waiting::Backoff { until },
                    None => Waiting::Ready,
                }
            };
            out.insert(id, reason);
        }
        if !dispatching {
            out = out
                .into_iter()
                .map(|(id, w)| (id, w.with_no_dispatcher()))
                .collect();
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_a_day_away_is_said_with_its_day() {
        let now = 1_796_000_000_000;
        let soon = Waiting::Backoff {
            until: now + 60_000,
        }
        .describe(now);
        assert!(soon.starts_with("back-off until "), "{soon}");
        assert_eq!(soon.matches(':').count(), 2, "the time alone: {soon}");
        let later = Waiting::Backoff {
            until: now + 24 * 3_600_000,
        }
        .describe(now);
        let day = chrono::DateTime::from_timestamp_millis(now + 24 * 3_600_000)
            .unwrap()
            .with_timezone(&chrono::Local)
            .format("%a %-d %b")
            .to_string();
        assert!(later.contains(&day), "{later}");
    }
}
