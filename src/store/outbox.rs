//! The `outbox` table: every send is a row here before anything goes out.
//!
//! State machine: pending -> sending (claim, compare-and-swap) -> sent
//! (accepted, in the same transaction as the user message) | pending (transient
//! failure, with back-off) | failed. pending/failed/expired -> canceled by the user.

use anyhow::{Result, anyhow};
use rusqlite::{OptionalExtension, Row, params};
use serde::Serialize;

use super::messages::{MessageStatus, NewMessage, Role, insert_message};
use super::{Store, sql_enum};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Typed now; sent as soon as the conversation is free.
    Queued,
    /// Scheduled by the user (`/later`, `/at`, `tock send --in/--at`).
    Message,
    /// Scheduled by the model (`schedule_task`).
    Task,
    /// Generate a reply from the history as it is (crash recovery, retry, tool results).
    Regenerate,
}

sql_enum::sql_enum!(Kind {
    Queued => "queued",
    Message => "message",
    Task => "task",
    Regenerate => "regenerate",
});

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pending,
    Sending,
    Sent,
    Failed,
    Canceled,
    Expired,
}

sql_enum::sql_enum!(Status {
    Pending => "pending",
    Sending => "sending",
    Sent => "sent",
    Failed => "failed",
    Canceled => "canceled",
    Expired => "expired",
});

impl Status {
    pub fn is_finished(self) -> bool {
        matches!(self, Status::Sent | Status::Canceled)
    }

    /// Failed or expired: unfinished, but sent only if retried.
    pub fn gave_up(self) -> bool {
        matches!(self, Status::Failed | Status::Expired)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct OutboxItem {
    pub id: i64,
    pub conversation_id: Option<i64>,
    pub kind: Kind,
    pub text: String,
    pub model_override: Option<String>,
    pub parts_json: Option<String>,
    pub due_at: Option<i64>,
    pub status: Status,
    pub attempts: i64,
    pub last_error: Option<String>,
    pub next_attempt_at: Option<i64>,
    pub priority: i64,
    pub claimed_by: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub sent_at: Option<i64>,
    pub title: Option<String>,
    pub payload_json: Option<String>,
    /// The recurring series this row is an occurrence of.
    pub series_id: Option<i64>,
    /// The occurrence instant it stands for (unique within its series).
    pub occurrence_at: Option<i64>,
}

pub(super) const COLS: &str = "id, conversation_id, kind, text, model_override, parts_json, due_at, status, attempts, \
                    last_error, next_attempt_at, priority, claimed_by, created_at, updated_at, sent_at, title, payload_json, \
                    series_id, occurrence_at";

impl OutboxItem {
    pub(super) fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            id: r.get(0)?,
            conversation_id: r.get(1)?,
            kind: r.get(2)?,
            text: r.get(3)?,
            model_override: r.get(4)?,
            parts_json: r.get(5)?,
            due_at: r.get(6)?,
            status: r.get(7)?,
            attempts: r.get(8)?,
            last_error: r.get(9)?,
            next_attempt_at: r.get(10)?,
            priority: r.get(11)?,
            claimed_by: r.get(12)?,
            created_at: r.get(13)?,
            updated_at: r.get(14)?,
            sent_at: r.get(15)?,
            title: r.get(16)?,
            payload_json: r.get(17)?,
            series_id: r.get(18)?,
            occurrence_at: r.get(19)?,
        })
    }

    /// When the scheduler may next try it (ignoring whether the conversation is busy).
    pub fn ready_at(&self) -> i64 {
        self.due_at
            .unwrap_or(0)
            .max(self.next_attempt_at.unwrap_or(0))
    }

    /// Whether its user message has entered the conversation (the provider
    /// accepted it once). A pending row that is accepted is a reply being
    /// generated again after a failure, not a message waiting to go out.
    pub fn accepted(&self) -> bool {
        self.sent_at.is_some()
    }

    /// The text a user message carries when this item is sent.
    pub fn user_text(&self) -> Option<String> {
        match self.kind {
            Kind::Regenerate => None,
            Kind::Task => Some(format!("[Scheduled task] {}", self.text)),
            Kind::Queued | Kind::Message => Some(self.text.clone()),
        }
    }
}

/// The few columns of an unfinished item that decide its state (no text):
/// what the kept counts are checked against.
#[derive(Clone, Debug, PartialEq)]
pub struct ItemSummary {
    pub id: i64,
    pub conversation_id: Option<i64>,
    pub kind: Kind,
    pub status: Status,
    pub due_at: Option<i64>,
    pub next_attempt_at: Option<i64>,
    pub created_at: i64,
}

const SUMMARY_COLUMNS: &str =
    "id, conversation_id, kind, status, due_at, next_attempt_at, created_at";
/// The rows the lists show as unfinished (regenerations are shown as their reply).
const UNFINISHED: &str =
    "status IN ('pending', 'sending', 'failed', 'expired') AND kind != 'regenerate'";

fn summary_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ItemSummary> {
    Ok(ItemSummary {
        id: r.get(0)?,
        conversation_id: r.get(1)?,
        kind: r.get(2)?,
        status: r.get(3)?,
        due_at: r.get(4)?,
        next_attempt_at: r.get(5)?,
        created_at: r.get(6)?,
    })
}

/// A position in the list of unfinished items: the list order's key of a
/// row (`COALESCE(due_at, created_at)`, then id), for
/// [`Store::list_items_page`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListCursor {
    pub at: i64,
    pub id: i64,
}

impl ListCursor {
    /// The position of `item` (the next page starts after it).
    pub fn of(item: &OutboxItem) -> Self {
        Self {
            at: item.due_at.unwrap_or(item.created_at),
            id: item.id,
        }
    }
}

/// Which rows a list window reads: the unfinished ones (as
/// [`Store::list_items`]`(false)` lists them), or every listed row with
/// `finished`; with `outside_series`, only rows that are no series'
/// occurrence (a front end that lists those under their series).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ListFilter {
    pub finished: bool,
    pub outside_series: bool,
}

/// Where a list window starts, for [`Store::list_window`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListFrom {
    /// The rows after this position (from the first row with None).
    After(Option<ListCursor>),
    /// The rows before this position (up to the last row with None).
    Before(Option<ListCursor>),
}

/// Unfinished listed rows (regenerations are not listed) by status and
/// conversation, from the counts migration 0010's triggers keep.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpenCounts {
    /// By status, of every conversation.
    pub pending: i64,
    pub sending: i64,
    pub failed: i64,
    pub expired: i64,
    /// The pending or sending rows of each conversation, by conversation id
    /// (rows of none are left out).
    pub pending_by_conversation: Vec<(i64, i64)>,
    /// The failed or expired rows of each conversation, likewise.
    pub failed_by_conversation: Vec<(i64, i64)>,
}

/// Each status's rows come by conversation; a conversation with rows of
/// several statuses is summed into one.
fn sum_by_conversation(mut counts: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    counts.sort_unstable();
    counts.dedup_by(|next, kept| {
        let same = next.0 == kept.0;
        if same {
            kept.1 += next.1;
        }
        same
    });
    counts
}

impl OpenCounts {
    pub fn total(&self) -> i64 {
        self.pending + self.sending + self.failed + self.expired
    }
}

/// The pending rows whose state depends on the time, at one instant: those
/// in back-off, and those ready (neither in back-off nor due later) by
/// conversation. The rest of the pending rows are scheduled.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PendingAt {
    pub retrying: i64,
    /// Ready rows by conversation (None: rows of no conversation).
    pub ready: Vec<(Option<i64>, i64)>,
    /// Of those, the rows a stop holds (waiting to go when the user
    /// stopped a reply), by conversation.
    pub held: Vec<(i64, i64)>,
    /// When one of these counts next changes by itself (a row's due time
    /// or back-off passes), if ever.
    pub until: Option<i64>,
}

/// A new outbox row.
#[derive(Clone, Debug)]
pub struct NewItem {
    pub conversation_id: Option<i64>,
    pub kind: Kind,
    pub text: String,
    pub model_override: Option<String>,
    pub parts_json: Option<String>,
    pub due_at: Option<i64>,
    pub title: Option<String>,
    pub payload_json: Option<String>,
    pub priority: i64,
}

impl NewItem {
    /// A message the user sends: queued now, or a scheduled message at `due_at`.
    pub fn message(conversation_id: i64, text: impl Into<String>, due_at: Option<i64>) -> Self {
        let kind = if due_at.is_some() {
            Kind::Message
        } else {
            Kind::Queued
        };
        let mut item = Self::new(conversation_id, kind, text);
        item.due_at = due_at;
        item
    }

    pub fn new(conversation_id: i64, kind: Kind, text: impl Into<String>) -> Self {
        Self {
            conversation_id: Some(conversation_id),
            kind,
            text: text.into(),
            model_override: None,
            parts_json: None,
            due_at: None,
            title: None,
            payload_json: None,
            priority: 0,
        }
    }
}

/// What start-up recovery found and did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Recovery {
    /// Rows left in `sending` by a dead dispatcher, put back to pending.
    pub reset_sending: Vec<i64>,
    /// Replies cut by a crash; a regeneration was queued for each.
    pub interrupted_replies: Vec<i64>,
    /// Rows late by more than the grace period, now expired.
    pub expired: Vec<OutboxItem>,
    /// Tool calls saved with a reply but never answered (a crash between the
    /// two writes): answered with an error the model can read, and continued.
    pub unanswered_calls: Vec<String>,
}

/// Lets the model continue after the tool calls of assistant message
/// `message_id` have outcomes: a regeneration first in the conversation's
/// queue, unless an approval of those calls still waits or runs, or a
/// continuation is already queued or being sent. Whoever records the last
/// outcome calls this (the user's answer, the turn's own calls, start-up
/// recovery), and two of them can each find themselves last: the model is
/// asked once.
pub(crate) fn continue_after_tools(
    conn: &rusqlite::Connection,
    conversation_id: i64,
    message_id: i64,
    now: i64,
) -> rusqlite::Result<()> {
    let waiting: bool = conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM approvals WHERE message_id = ?1 AND status IN ('waiting', 'executing'))
             OR EXISTS(SELECT 1 FROM outbox WHERE conversation_id = ?2 AND kind = 'regenerate' AND status IN ('pending','sending'))",
        params![message_id, conversation_id],
        |r| r.get(0),
    )?;
    if !waiting {
        let mut item = NewItem::new(conversation_id, Kind::Regenerate, "");
        item.priority = 1;
        insert_item(conn, &item, now)?;
    }
    Ok(())
}

pub(crate) fn insert_item(
    conn: &rusqlite::Connection,
    item: &NewItem,
    now: i64,
) -> rusqlite::Result<i64> {
    conn.execute(
        "INSERT INTO outbox (conversation_id, kind, text, model_override, parts_json, due_at, status,
                             priority, created_at, updated_at, title, payload_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7, ?8, ?8, ?9, ?10)",
        params![
            item.conversation_id,
            item.kind.as_str(),
            item.text,
            item.model_override,
            item.parts_json,
            item.due_at,
            item.priority,
            now,
            item.title,
            item.payload_json
        ],
    )?;
    Ok(conn.last_insert_rowid())
}

/// The newest reply of each conversation that made tool calls: every call must
/// have a result or a pending approval, or the conversation would stall.
fn recover_unanswered_calls(
    tx: &rusqlite::Transaction<'_>,
    now: i64,
    rec: &mut Recovery,
) -> rusqlite::Result<()> {
    let replies: Vec<(i64, i64, String)> = {
        let mut st = tx.prepare(
            // The newest reply of each conversation (an index lookup each),
            // not a scan of every message.
            "SELECT m.id, m.conversation_id, m.tool_calls_json FROM conversations c
             JOIN messages m ON m.id = (SELECT MAX(id) FROM messages WHERE conversation_id = c.id AND role = 'assistant')
             WHERE m.status = 'complete' AND m.tool_calls_json IS NOT NULL
             ORDER BY m.id",
        )?;
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?
    };
    for (msg, conv, json) in replies {
        let calls: Vec<serde_json::Value> = serde_json::from_str(&json).unwrap_or_default();
        let mut answered_any_now = false;
        for call in &calls {
            let Some(id) = call.get("id").and_then(|v| v.as_str()) else {
                continue;
            };
            let name = call.get("name").and_then(|v| v.as_str()).unwrap_or("");
            let answered: bool = tx.query_row(
                "SELECT EXISTS(SELECT 1 FROM messages WHERE conversation_id = ?1 AND role = 'tool' AND tool_call_id = ?2)
                     OR EXISTS(SELECT 1 FROM approvals WHERE message_id = ?3 AND call_id = ?2)",
                params![conv, id, msg],
                |r| r.get(0),
            )?;
            if !answered {
                // tock's own tools act in the transaction that records their
                // result, so nothing was done. Any other tool is an MCP
                // server's, run without asking: it may have been running when
                // tock stopped, so it may have taken effect. It is not run
                // again.
                use crate::engine::tools::{CANCEL_SCHEDULED, LIST_SCHEDULED, SCHEDULE_TASK};
                let own = [SCHEDULE_TASK, LIST_SCHEDULED, CANCEL_SCHEDULED].contains(&name);
                let result = if own {
                    serde_json::json!({"error": "tock stopped before this call was handled; nothing was done — call it again if still wanted"})
                } else {
                    serde_json::json!({"error": "tock stopped while this call was being handled and its result was lost; it may or may not have taken effect, and it was not run again — check before calling it again"})
                }
                .to_string();
                insert_message(
                    tx,
                    conv,
                    &NewMessage {
                        role: Some(Role::Tool),
                        content: &result,
                        tool_call_id: Some(id),
                        model: Some(name),
                        ..Default::default()
                    },
                    now,
                )?;
                rec.unanswered_calls.push(id.to_string());
                answered_any_now = true;
            }
        }
        if answered_any_now {
            continue_after_tools(tx, conv, msg, now)?;
        }
    }
    Ok(())
}

/// Pending rows not accepted yet whose time (`COALESCE(due_at, created_at)`)
/// is before `?1`: the two ranges of `outbox_status_due` (scheduled before,
/// or as soon as possible and created before), not every pending row.
const OVERDUE: &str = "id IN (SELECT id FROM outbox WHERE status = 'pending' AND due_at < ?1
                              UNION ALL
                              SELECT id FROM outbox WHERE status = 'pending' AND due_at IS NULL AND created_at < ?1)
                       AND kind != 'regenerate' AND sent_at IS NULL";

/// Pending rows late by more than the grace period become expired. Rows whose
/// user message is already in the history (a reply being retried) never
/// expire: they have reached their conversation.
fn expire_overdue(
    tx: &rusqlite::Transaction<'_>,
    now: i64,
    grace_ms: i64,
    reason: &str,
) -> rusqlite::Result<Vec<OutboxItem>> {
    let expired = {
        let mut st = tx.prepare(&format!(
            "SELECT {COLS} FROM outbox WHERE {OVERDUE} ORDER BY due_at, id"
        ))?;
        st.query_map([now - grace_ms], OutboxItem::from_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?
    };
    tx.execute(
        &format!(
            "UPDATE outbox SET status = 'expired', last_error = ?2, updated_at = ?3 WHERE {OVERDUE}"
        ),
        params![now - grace_ms, reason, now],
    )?;
    Ok(expired)
}

impl Store {
    pub fn enqueue(&self, item: &NewItem, now: i64) -> Result<i64> {
        Ok(insert_item(&self.conn(), item, now)?)
    }

    pub fn item(&self, id: i64) -> Result<Option<OutboxItem>> {
        let conn = self.conn();
        Ok(conn
            .query_row(
                &format!("SELECT {COLS} FROM outbox WHERE id = ?1"),
                [id],
                OutboxItem::from_row,
            )
            .optional()?)
    }

    fn query_items(&self, sql_where: &str, p: impl rusqlite::Params) -> Result<Vec<OutboxItem>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(&format!("SELECT {COLS} FROM outbox {sql_where}"))?;
        let rows = st.query_map(p, OutboxItem::from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Items for lists, ordered by due time (ASAP items by creation).
    /// `all` includes finished (sent / canceled) rows. Regenerations are internal and not listed.
    pub fn list_items(&self, all: bool) -> Result<Vec<OutboxItem>> {
        let filter = if all {
            ""
        } else {
            "AND status IN ('pending', 'sending', 'failed', 'expired')"
        };
        self.query_items(
            &format!(
                "WHERE kind != 'regenerate' {filter}
                 ORDER BY COALESCE(due_at, created_at), id"
            ),
            [],
        )
    }

    /// The unfinished items of [`Store::list_items`]`(false)`, in the same
    /// order, a page at a time: at most `limit` after `after` (from the
    /// start with None). Read from the index of unfinished rows in list
    /// order, so a page costs the same however long the list or the history.
    pub fn list_items_page(
        &self,
        after: Option<ListCursor>,
        limit: usize,
    ) -> Result<Vec<OutboxItem>> {
        self.list_window(ListFilter::default(), ListFrom::After(after), limit)
    }

    /// At most `limit` rows of the list `filter` describes, next to a
    /// position in it, in list order (`COALESCE(due_at, created_at)`, then
    /// id). Read from an index in list order (of the unfinished rows, or of
    /// every listed row), so a window costs the same wherever it is.
    pub fn list_window(
        &self,
        filter: ListFilter,
        from: ListFrom,
        limit: usize,
    ) -> Result<Vec<OutboxItem>> {
        let (index, rows) = if filter.finished {
            ("outbox_listed_order", "kind != 'regenerate'")
        } else {
            (
                "outbox_unfinished_order",
                "status IN ('pending', 'sending', 'failed', 'expired') AND kind != 'regenerate'",
            )
        };
        let series = if filter.outside_series {
            "AND series_id IS NULL"
        } else {
            ""
        };
        let (range, order, at) = match from {
            ListFrom::After(c) => (
                "COALESCE(due_at, created_at) >= ?1 AND (COALESCE(due_at, created_at) > ?1 OR id > ?2)",
                "",
                c.unwrap_or(ListCursor {
                    at: i64::MIN,
                    id: i64::MIN,
                }),
            ),
            ListFrom::Before(c) => (
                "COALESCE(due_at, created_at) <= ?1 AND (COALESCE(due_at, created_at) < ?1 OR id < ?2)",
                "DESC",
                c.unwrap_or(ListCursor {
                    at: i64::MAX,
                    id: i64::MAX,
                }),
            ),
        };
        let conn = self.conn();
        let mut st = conn.prepare_cached(&format!(
            "SELECT {COLS} FROM outbox INDEXED BY {index}
             WHERE {rows} {series} AND {range}
             ORDER BY COALESCE(due_at, created_at) {order}, id {order} LIMIT ?3"
        ))?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = st.query_map(params![at.at, at.id, limit], OutboxItem::from_row)?;
        let mut items: Vec<OutboxItem> = rows.collect::<rusqlite::Result<_>>()?;
        if matches!(from, ListFrom::Before(_)) {
            items.reverse();
        }
        Ok(items)
    }

    /// The listed occurrences of recurring series (unfinished ones, or all
    /// with `finished`), in list order.
    pub fn listed_occurrences(&self, finished: bool) -> Result<Vec<OutboxItem>> {
        let status = if finished {
            ""
        } else {
            "AND status IN ('pending', 'sending', 'failed', 'expired')"
        };
        self.query_items(
            &format!(
                "WHERE series_id IS NOT NULL AND kind != 'regenerate' {status}
                 ORDER BY COALESCE(due_at, created_at), id"
            ),
            [],
        )
    }

    /// How many rows [`Store::list_items`]`(true)` lists: (unfinished,
    /// finished). From the kept counts, not the rows.
    pub fn listed_counts(&self) -> Result<(i64, i64)> {
        Ok(self.conn().query_row(
            "SELECT COALESCE(SUM(CASE WHEN status IN ('sent', 'canceled') THEN 0 ELSE n END), 0),
                    COALESCE(SUM(CASE WHEN status IN ('sent', 'canceled') THEN n ELSE 0 END), 0)
             FROM outbox_listed_counts",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?)
    }

    /// The unfinished listed rows counted by status and conversation: a
    /// read of the kept counts (a row per status and conversation), not of
    /// the rows.
    pub fn open_counts(&self) -> Result<OpenCounts> {
        let conn = self.conn();
        // One scan of the kept counts, summed here: SQLite's GROUP BY
        // would sort them in a temporary b-tree first, which costs more.
        let mut st = conn.prepare_cached(
            "SELECT status, conversation_key, n FROM outbox_listed_counts
             WHERE status IN ('pending', 'sending', 'failed', 'expired') AND n > 0",
        )?;
        let rows = st.query_map([], |r| {
            Ok((
                r.get::<_, Status>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
            ))
        })?;
        let mut c = OpenCounts::default();
        let (mut pending_by_conversation, mut failed_by_conversation) = (Vec::new(), Vec::new());
        for row in rows {
            let (status, conversation, n) = row?;
            match status {
                Status::Pending => c.pending += n,
                Status::Sending => c.sending += n,
                Status::Failed => c.failed += n,
                Status::Expired => c.expired += n,
                Status::Sent | Status::Canceled => {}
            }
            if conversation != 0 {
                if status.gave_up() {
                    failed_by_conversation.push((conversation, n));
                } else {
                    pending_by_conversation.push((conversation, n));
                }
            }
        }
        c.pending_by_conversation = sum_by_conversation(pending_by_conversation);
        c.failed_by_conversation = sum_by_conversation(failed_by_conversation);
        Ok(c)
    }

    /// The pending listed rows whose state depends on the time, at `now`
    /// (see [`PendingAt`]): read from the indexes of ready instants and of
    /// back-offs, so the rows scheduled later are not read.
    pub fn pending_at(&self, now: i64) -> Result<PendingAt> {
        let mut at = PendingAt::default();
        let backoff_ends = {
            let conn = self.conn();
            let mut st = conn.prepare_cached(
                "SELECT conversation_id, count(*) FROM outbox INDEXED BY outbox_pending_ready
                 WHERE status = 'pending' AND MAX(COALESCE(due_at, 0), COALESCE(next_attempt_at, 0)) <= ?1
                   AND kind != 'regenerate'
                 GROUP BY conversation_id",
            )?;
            at.ready = st
                .query_map([now], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?;
            // Paused conversations are few: their rows are read through
            // `outbox_conversation`.
            let mut st = conn.prepare_cached(
                "SELECT o.conversation_id, count(*) FROM conversations c
                 JOIN outbox o ON o.conversation_id = c.id AND o.status = 'pending'
                 WHERE c.queue_paused_at IS NOT NULL
                   AND MAX(COALESCE(o.due_at, 0), COALESCE(o.next_attempt_at, 0)) <= ?1
                   AND o.kind != 'regenerate'
                   AND o.due_at IS NULL AND o.created_at <= c.queue_paused_at
                 GROUP BY o.conversation_id",
            )?;
            at.held = st
                .query_map([now], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?;
            let mut st = conn.prepare_cached(
                "SELECT count(*), MIN(next_attempt_at) FROM outbox INDEXED BY outbox_pending_backoff
                 WHERE status = 'pending' AND next_attempt_at > ?1 AND kind != 'regenerate'",
            )?;
            let (retrying, ends): (i64, Option<i64>) =
                st.query_row([now], |r| Ok((r.get(0)?, r.get(1)?)))?;
            at.retrying = retrying;
            ends
        };
        // A back-off that ends before the due time turns "retrying" into
        // "scheduled"; the next ready instant turns either into ready.
        at.until = [backoff_ends, self.next_ready_at(now)?]
            .into_iter()
            .flatten()
            .min();
        Ok(at)
    }

    /// The earliest due time after `now` of a pending listed row.
    pub fn next_due_after(&self, now: i64) -> Result<Option<i64>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT due_at FROM outbox
                 WHERE status = 'pending' AND due_at > ?1 AND kind != 'regenerate'
                 ORDER BY due_at LIMIT 1",
                [now],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// How many unfinished messages (tasks left out) a conversation holds:
    /// what deleting it cancels.
    pub fn open_messages_of(&self, conversation_id: i64) -> Result<i64> {
        Ok(self.conn().query_row(
            "SELECT count(*) FROM outbox
             WHERE conversation_id = ?1 AND status IN ('pending', 'sending', 'failed', 'expired')
               AND kind NOT IN ('regenerate', 'task')",
            [conversation_id],
            |r| r.get(0),
        )?)
    }

    /// A conversation's tasks still to fire (they outlive its deletion).
    pub fn open_tasks_of(&self, conversation_id: i64) -> Result<i64> {
        Ok(self.conn().query_row(
            "SELECT count(*) FROM outbox
             WHERE conversation_id = ?1 AND status IN ('pending', 'sending') AND kind = 'task'",
            [conversation_id],
            |r| r.get(0),
        )?)
    }

    /// How many items [`Store::list_items`]`(false)` lists.
    pub fn unfinished_count(&self) -> Result<i64> {
        Ok(self.conn().query_row(
            "SELECT count(*) FROM outbox
             WHERE status IN ('pending', 'sending', 'failed', 'expired') AND kind != 'regenerate'",
            [],
            |r| r.get(0),
        )?)
    }

    /// Every unfinished item, summarised.
    pub fn item_summaries(&self) -> Result<Vec<ItemSummary>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(&format!(
            "SELECT {SUMMARY_COLUMNS} FROM outbox WHERE {UNFINISHED}"
        ))?;
        let rows = st.query_map([], summary_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The unfinished items of one conversation, in dispatch order.
    pub fn conversation_items(&self, conversation_id: i64) -> Result<Vec<OutboxItem>> {
        self.query_items(
            "WHERE conversation_id = ?1 AND kind != 'regenerate'
               AND status IN ('pending', 'sending', 'failed', 'expired')
             ORDER BY priority DESC, COALESCE(due_at, created_at), id",
            [conversation_id],
        )
    }

    /// For each conversation, the first pending row that is due, if its back-off has
    /// passed. Rows of one conversation go in order: a head in back-off blocks the rest.
    /// A stop holds the rows whose place in the queue (`COALESCE(due_at,
    /// created_at)`) was at or before it: those waiting behind the stopped
    /// reply. Rows due later, or added since, go as usual.
    pub fn dispatchable(&self, now: i64) -> Result<Vec<OutboxItem>> {
        // The due rows are found through `outbox_status_due` in two ranges
        // (as soon as possible, due by now); written as one `OR`, SQLite
        // would read every pending row, scheduled ones too.
        let due = self.query_items(
            "WHERE id IN (SELECT id FROM outbox WHERE status = 'pending' AND due_at IS NULL
                          UNION ALL SELECT id FROM outbox WHERE status = 'pending' AND due_at <= ?1)
               AND (conversation_id IS NULL OR NOT EXISTS (
                    SELECT 1 FROM approvals a WHERE a.conversation_id = outbox.conversation_id AND a.status IN ('waiting', 'executing')))
               AND (conversation_id IS NULL OR NOT EXISTS (
                    SELECT 1 FROM conversations c WHERE c.id = outbox.conversation_id
                       AND outbox.due_at IS NULL AND outbox.created_at <= c.queue_paused_at))
             ORDER BY conversation_id, priority DESC, COALESCE(due_at, created_at), id",
            [now],
        )?;
        let mut heads: Vec<OutboxItem> = Vec::new();
        for item in due {
            let same_conv = item.conversation_id.is_some()
                && heads
                    .last()
                    .is_some_and(|h| h.conversation_id == item.conversation_id);
            if !same_conv {
                heads.push(item);
            }
        }
        heads.retain(|h| h.next_attempt_at.is_none_or(|t| t <= now));
        Ok(heads)
    }

    /// The earliest future instant at which a pending row becomes ready.
    pub fn next_ready_at(&self, now: i64) -> Result<Option<i64>> {
        Ok(self.conn().query_row(
            "SELECT MIN(MAX(COALESCE(due_at, 0), COALESCE(next_attempt_at, 0))) FROM outbox
             WHERE status = 'pending' AND MAX(COALESCE(due_at, 0), COALESCE(next_attempt_at, 0)) > ?1",
            [now],
            |r| r.get(0),
        )?)
    }

    /// Items that fell due in `(after, now]` in a conversation whose tool
    /// call waits for an answer (which holds it): `(id, conversation, what)`.
    /// Read through the due-time index, so a pass reads only what just fell due.
    pub fn due_behind_approval(&self, after: i64, now: i64) -> Result<Vec<(i64, i64, String)>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(
            "SELECT o.id, o.conversation_id, COALESCE(o.title, o.text) FROM outbox AS o INDEXED BY outbox_status_due
             WHERE o.status = 'pending' AND o.due_at > ?1 AND o.due_at <= ?2
               AND EXISTS (SELECT 1 FROM approvals AS a
                           WHERE a.conversation_id = o.conversation_id AND a.status = 'waiting')
             ORDER BY o.due_at, o.id",
        )?;
        let rows = st.query_map(params![after, now], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Compare-and-swap pending -> sending. False if someone else got it first.
    pub fn claim(&self, id: i64, owner: &str, now: i64) -> Result<bool> {
        let n = self.conn().execute(
            "UPDATE outbox SET status = 'sending', claimed_by = ?2, attempts = attempts + 1, updated_at = ?3
             WHERE id = ?1 AND status = 'pending'",
            params![id, owner, now],
        )?;
        Ok(n == 1)
    }

    /// Give a task whose conversation was deleted a new conversation (origin `schedule`).
    pub fn rehome(&self, id: i64, now: i64) -> Result<i64> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let (title, text): (Option<String>, String) =
            tx.query_row("SELECT title, text FROM outbox WHERE id = ?1", [id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
        let title = title.unwrap_or_else(|| super::conversations::derive_title(&text));
        tx.execute(
            "INSERT INTO conversations (title, origin, created_at, updated_at) VALUES (?1, 'schedule', ?2, ?2)",
            params![title, now],
        )?;
        let conv = tx.last_insert_rowid();
        tx.execute(
            "UPDATE outbox SET conversation_id = ?2, updated_at = ?3 WHERE id = ?1",
            params![id, conv, now],
        )?;
        tx.commit()?;
        Ok(conv)
    }

    /// The provider accepted the request: in one transaction, mark the row sent,
    /// add the user message (unless it is a regeneration) and open the
    /// assistant message. Returns the assistant message id, or None when this
    /// dispatcher no longer owns the row (nothing is written then).
    pub fn accept(
        &self,
        item: &OutboxItem,
        owner: &str,
        model: &str,
        now: i64,
    ) -> Result<Option<i64>> {
        let conv = item
            .conversation_id
            .ok_or_else(|| anyhow!("outbox item {} has no conversation", item.id))?;
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let n = tx.execute(
            "UPDATE outbox SET status = 'sent', sent_at = COALESCE(sent_at, ?3), updated_at = ?3, last_error = NULL, next_attempt_at = NULL
             WHERE id = ?1 AND status = 'sending' AND claimed_by = ?2",
            params![item.id, owner, now],
        )?;
        if n != 1 {
            return Ok(None);
        }
        // A reply being retried after acceptance: its user message is already
        // in the history and must not enter it twice.
        let in_history: bool = tx.query_row(
            "SELECT EXISTS(SELECT 1 FROM messages WHERE outbox_id = ?1 AND role = 'user')",
            [item.id],
            |r| r.get(0),
        )?;
        if let Some(text) = item.user_text().filter(|_| !in_history) {
            insert_message(
                &tx,
                conv,
                &NewMessage {
                    role: Some(Role::User),
                    content: &text,
                    outbox_id: Some(item.id),
                    parts_json: item.parts_json.as_deref(),
                    ..Default::default()
                },
                now,
            )?;
            // Untitled conversations take their title from the first message.
            tx.execute(
                "UPDATE conversations SET title = ?2 WHERE id = ?1 AND (title IS NULL OR title = '')",
                params![conv, super::conversations::derive_title(item.title.as_deref().unwrap_or(&item.text))],
            )?;
        }
        let reply = insert_message(
            &tx,
            conv,
            &NewMessage {
                role: Some(Role::Assistant),
                content: "",
                model: Some(model),
                outbox_id: Some(item.id),
                status: Some(MessageStatus::Streaming),
                ..Default::default()
            },
            now,
        )?;
        tx.commit()?;
        Ok(Some(reply))
    }

    /// A reply failed after the provider accepted the request. In one
    /// transaction: the partial reply is kept, marked interrupted with
    /// `reason`; the row goes back to pending (first in its conversation, not
    /// before `retry_at`) to generate the reply again, or, with no `retry_at`,
    /// becomes failed with `error`. False (nothing written) when the reply is
    /// no longer this dispatcher's (recovered or taken over meanwhile).
    #[allow(clippy::too_many_arguments)]
    pub fn reply_interrupted(
        &self,
        item_id: i64,
        owner: &str,
        reply_id: i64,
        content: &str,
        reason: &str,
        retry_at: Option<i64>,
        error: &str,
        now: i64,
    ) -> Result<bool> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let n = tx.execute(
            "UPDATE messages SET content = ?2, status = 'interrupted', error = ?3 WHERE id = ?1 AND status = 'streaming'",
            params![reply_id, content, reason],
        )?;
        if n != 1 {
            return Ok(false);
        }
        let conv: Option<i64> = tx
            .query_row(
                "SELECT conversation_id FROM messages WHERE id = ?1",
                [reply_id],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(conv) = conv {
            Store::touch_conversation(&tx, conv, now)?;
        }
        match retry_at {
            Some(at) => tx.execute(
                "UPDATE outbox SET status = 'pending', claimed_by = NULL, priority = 1, last_error = ?3,
                        next_attempt_at = ?4, updated_at = ?5
                 WHERE id = ?1 AND status = 'sent' AND claimed_by = ?2",
                params![item_id, owner, error, at, now],
            )?,
            None => tx.execute(
                "UPDATE outbox SET status = 'failed', claimed_by = NULL, last_error = ?3, next_attempt_at = NULL, updated_at = ?4
                 WHERE id = ?1 AND status = 'sent' AND claimed_by = ?2",
                params![item_id, owner, error, now],
            )?,
        };
        tx.commit()?;
        Ok(true)
    }

    /// Generate the reply of a sent item again (its last reply was cut or
    /// stopped): back to pending, first in its conversation, a fresh attempt
    /// budget. Refused when the conversation has moved on since.
    pub fn retry_reply(&self, id: i64, now: i64) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let row: Option<(String, Option<i64>)> = tx
            .query_row(
                "SELECT status, conversation_id FROM outbox WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((status, Some(conv))) = row else {
            return Err(anyhow!("no outbox item {id}"));
        };
        if status != "sent" && status != "failed" {
            return Err(anyhow!("item {id} is {status}; its reply is not owed"));
        }
        // The newest message that counts for the model decides.
        let last: Option<(Option<i64>, String, String)> = tx
            .query_row(
                "SELECT outbox_id, role, status FROM messages
                 WHERE conversation_id = ?1 AND role != 'notice' AND status != 'superseded'
                 ORDER BY id DESC LIMIT 1",
                [conv],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        match last {
            Some((Some(o), role, st))
                if o == id && (role == "user" || (role == "assistant" && st != "complete")) => {}
            _ if tx.query_row(
                "SELECT EXISTS(SELECT 1 FROM messages
                     WHERE outbox_id = ?1 AND role = 'assistant' AND status IN ('complete', 'superseded'))",
                [id],
                |r| r.get::<_, bool>(0),
            )? =>
            {
                return Err(anyhow!(
                    "item {id} was answered; regenerate the conversation for another answer"
                ));
            }
            _ => {
                return Err(anyhow!(
                    "item {id}'s conversation has moved on since (a later message came after it), so its reply would answer that one; send its text again as a new message"
                ));
            }
        }
        tx.execute(
            "UPDATE outbox SET status = 'pending', claimed_by = NULL, priority = 1, attempts = 0,
                    last_error = NULL, next_attempt_at = NULL, updated_at = ?2
             WHERE id = ?1 AND status IN ('sent', 'failed')",
            params![id, now],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// A transient failure before acceptance: back to pending, not before `retry_at`.
    pub fn release_for_retry(
        &self,
        id: i64,
        owner: &str,
        error: &str,
        retry_at: i64,
        now: i64,
    ) -> Result<bool> {
        let n = self.conn().execute(
            "UPDATE outbox SET status = 'pending', claimed_by = NULL, last_error = ?3, next_attempt_at = ?4, updated_at = ?5
             WHERE id = ?1 AND status = 'sending' AND claimed_by = ?2",
            params![id, owner, error, retry_at, now],
        )?;
        Ok(n == 1)
    }

    /// Put a claimed row back untouched (stopping, shutting down): the attempt does not count.
    pub fn release_unattempted(&self, id: i64, owner: &str, now: i64) -> Result<bool> {
        let n = self.conn().execute(
            "UPDATE outbox SET status = 'pending', claimed_by = NULL, attempts = MAX(attempts - 1, 0), updated_at = ?3
             WHERE id = ?1 AND status = 'sending' AND claimed_by = ?2",
            params![id, owner, now],
        )?;
        Ok(n == 1)
    }

    /// Failed before the provider accepted it. A regeneration that fails so
    /// gives the conversation back the reply it put aside (it is still the
    /// last word), so a failed Ctrl+R never leaves a question unanswered.
    pub fn mark_failed(&self, id: i64, owner: &str, error: &str, now: i64) -> Result<bool> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let n = tx.execute(
            "UPDATE outbox SET status = 'failed', claimed_by = NULL, last_error = ?3, next_attempt_at = NULL, updated_at = ?4
             WHERE id = ?1 AND status = 'sending' AND claimed_by = ?2",
            params![id, owner, error, now],
        )?;
        if n == 1 {
            restore_replaced_reply(&tx, id)?;
        }
        tx.commit()?;
        Ok(n == 1)
    }

    /// The conversation's regeneration still on its way (pending, or being
    /// sent), if any: it is not an item of the lists, but the chat shows it.
    pub fn regeneration(&self, conversation_id: i64) -> Result<Option<OutboxItem>> {
        Ok(self
            .query_items(
                "WHERE conversation_id = ?1 AND kind = 'regenerate' AND status IN ('pending', 'sending')
                 ORDER BY id DESC LIMIT 1",
                [conversation_id],
            )?
            .pop())
    }

    /// Call off the conversation's regeneration that waits (queued, or in
    /// back-off), giving back the reply it put aside if that is still the
    /// last word. The row called off, or None if none waits (one being
    /// sent is stopped instead).
    pub fn cancel_regeneration(&self, conversation_id: i64, now: i64) -> Result<Option<i64>> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let id: Option<i64> = tx
            .query_row(
                "SELECT id FROM outbox
                 WHERE conversation_id = ?1 AND kind = 'regenerate' AND status = 'pending'
                 ORDER BY id DESC LIMIT 1",
                [conversation_id],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(id) = id {
            tx.execute(
                "UPDATE outbox SET status = 'canceled', claimed_by = NULL, next_attempt_at = NULL, updated_at = ?2
                 WHERE id = ?1",
                params![id, now],
            )?;
            restore_replaced_reply(&tx, id)?;
        }
        tx.commit()?;
        Ok(id)
    }

    fn user_update(
        &self,
        id: i64,
        sql_set: &str,
        from: &[&str],
        p: &[&dyn rusqlite::ToSql],
    ) -> Result<()> {
        let conn = self.conn();
        let status: Option<String> = conn
            .query_row("SELECT status FROM outbox WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()?;
        let Some(status) = status else {
            return Err(anyhow!("no outbox item {id}"));
        };
        if !from.contains(&status.as_str()) {
            return Err(anyhow!("item {id} is {status}; that cannot be changed now"));
        }
        let in_list = from
            .iter()
            .map(|s| format!("'{s}'"))
            .collect::<Vec<_>>()
            .join(",");
        let sql = format!("UPDATE outbox SET {sql_set} WHERE id = ?1 AND status IN ({in_list})");
        let mut params: Vec<&dyn rusqlite::ToSql> = vec![&id];
        params.extend_from_slice(p);
        let n = conn.execute(&sql, params.as_slice())?;
        if n != 1 {
            return Err(anyhow!("item {id} changed meanwhile; try again"));
        }
        Ok(())
    }

    /// Cancel every row of the conversation queued to go at once and not
    /// yet in it (scheduled rows, and replies still owed, stay); and, with
    /// nothing left for it to hold, lift a stop's pause. Returns how many.
    pub fn cancel_queued(&self, conversation_id: i64, now: i64) -> Result<usize> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let n = tx.execute(
            "UPDATE outbox SET status = 'canceled', claimed_by = NULL, next_attempt_at = NULL, updated_at = ?2
             WHERE conversation_id = ?1 AND status = 'pending' AND due_at IS NULL
               AND sent_at IS NULL AND kind != 'regenerate'",
            params![conversation_id, now],
        )?;
        tx.execute(
            &format!(
                "UPDATE conversations SET queue_paused_at = NULL
                 WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM outbox WHERE {HELD_BY_A_STOP})"
            ),
            [conversation_id],
        )?;
        tx.commit()?;
        Ok(n)
    }

    pub fn cancel_item(&self, id: i64, now: i64) -> Result<()> {
        self.user_update(
            id,
            "status = 'canceled', claimed_by = NULL, next_attempt_at = NULL, updated_at = ?2",
            &["pending", "failed", "expired"],
            &[&now],
        )
    }

    /// New due time; a failed/expired/canceled item becomes pending again.
    pub fn reschedule_item(&self, id: i64, due_at: i64, now: i64) -> Result<()> {
        self.user_update(
            id,
            "status = 'pending', due_at = ?2, next_attempt_at = NULL, attempts = 0, last_error = NULL,
             kind = CASE kind WHEN 'queued' THEN 'message' ELSE kind END, updated_at = ?3",
            &["pending", "failed", "expired", "canceled"],
            &[&due_at, &now],
        )
    }

    pub fn edit_item(&self, id: i64, text: &str, now: i64) -> Result<()> {
        if text.trim().is_empty() {
            return Err(anyhow!("the text is empty"));
        }
        // Accepted: its text is in the conversation already. Pending or
        // failed, only its reply is still owed; else it is simply sent.
        if let Some(i) = self.item(id)?.filter(|i| i.accepted()) {
            return Err(if matches!(i.status, Status::Sent) {
                anyhow!("item {id} was sent; its text is in its conversation and cannot be changed")
            } else {
                anyhow!("item {id} is already in its conversation; only its reply is being retried")
            });
        }
        self.user_update(
            id,
            "text = ?2, updated_at = ?3",
            &["pending", "failed", "expired"],
            &[&text, &now],
        )
    }

    /// Retry a failed or expired item now.
    /// Send a failed, expired or canceled item again, first in its
    /// conversation: its place was before what was queued meanwhile (a
    /// scheduled one's due time becomes now, which alone sorted it last).
    /// Due now, it is the user's explicit send: a paused queue does not
    /// hold it (the pause may be another failed message's, which still
    /// holds what was queued behind that one).
    pub fn retry_item(&self, id: i64, now: i64) -> Result<()> {
        self.user_update(
            id,
            "status = 'pending', attempts = 0, next_attempt_at = NULL, last_error = NULL, priority = 1,
             due_at = ?2, updated_at = ?2",
            &["failed", "expired", "canceled"],
            &[&now],
        )
    }

    /// When a later occurrence of `id`'s series went out or is on its way,
    /// if `id` is an occurrence and one did.
    pub fn later_occurrence(&self, id: i64) -> Result<Option<i64>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT MIN(COALESCE(later.sent_at, later.occurrence_at)) FROM outbox AS this
                 JOIN outbox AS later ON later.series_id = this.series_id
                 WHERE this.id = ?1 AND later.occurrence_at > this.occurrence_at
                   AND later.kind != 'regenerate' AND later.status IN ('pending', 'sending', 'sent')",
                [id],
                |r| r.get(0),
            )
            .optional()?
            .flatten())
    }

    /// Whether a message of the conversation other than `except` could not
    /// be sent (failed before entering it): it holds what was queued after it.
    pub fn other_failed_message(&self, conversation_id: i64, except: i64) -> Result<bool> {
        Ok(self.conn().query_row(
            "SELECT EXISTS(SELECT 1 FROM outbox INDEXED BY outbox_conversation
                 WHERE conversation_id = ?1 AND status = 'failed' AND id != ?2
                   AND sent_at IS NULL AND kind IN ('message', 'queued'))",
            params![conversation_id, except],
            |r| r.get(0),
        )?)
    }

    /// Whether a row of the conversation failed for good at or after `at`.
    pub fn failed_since(&self, conversation_id: i64, at: i64) -> Result<bool> {
        Ok(self.conn().query_row(
            "SELECT EXISTS(SELECT 1 FROM outbox INDEXED BY outbox_conversation
                 WHERE conversation_id = ?1 AND status = 'failed' AND updated_at >= ?2)",
            params![conversation_id, at],
            |r| r.get(0),
        )?)
    }

    /// Move a pause later, to `at`, so it holds what was queued until then.
    pub fn extend_pause(&self, conversation_id: i64, at: i64) -> Result<()> {
        self.conn().execute(
            "UPDATE conversations SET queue_paused_at = MAX(queue_paused_at, ?2)
             WHERE id = ?1 AND queue_paused_at IS NOT NULL",
            params![conversation_id, at],
        )?;
        Ok(())
    }

    /// Skip the queue: first in its conversation as soon as it is idle.
    pub fn send_now(&self, id: i64, now: i64) -> Result<()> {
        self.user_update(
            id,
            "status = 'pending', priority = 1, due_at = ?2, next_attempt_at = NULL, attempts = 0, updated_at = ?2",
            &["pending", "failed", "expired"],
            &[&now],
        )
    }

    /// Start-up recovery, run by a dispatcher right after it takes the lease.
    pub fn recover(&self, now: i64, grace_ms: i64) -> Result<Recovery> {
        self.recover_as(now, grace_ms, None)
    }

    /// Recovery as dispatcher `me`: claims and replies that `me` still holds
    /// are live (its turns are running) and are left alone; only those of a
    /// dispatcher that is gone are recovered.
    pub fn recover_as(&self, now: i64, grace_ms: i64, me: Option<&str>) -> Result<Recovery> {
        let me = me.unwrap_or("");
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let mut rec = Recovery::default();
        {
            let mut st = tx.prepare(
                "SELECT id FROM outbox WHERE status = 'sending' AND COALESCE(claimed_by, '') != ?1",
            )?;
            rec.reset_sending = st
                .query_map([me], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
        }
        tx.execute(
            "UPDATE outbox SET status = 'pending', claimed_by = NULL, updated_at = ?1
             WHERE status = 'sending' AND COALESCE(claimed_by, '') != ?2",
            params![now, me],
        )?;
        let streaming: Vec<(i64, i64, Option<i64>)> = {
            let mut st = tx.prepare(
                "SELECT m.id, m.conversation_id, m.outbox_id FROM messages m
                 LEFT JOIN outbox o ON o.id = m.outbox_id
                 WHERE m.status = 'streaming' AND COALESCE(o.claimed_by, '') != ?1",
            )?;
            st.query_map([me], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect::<rusqlite::Result<_>>()?
        };
        for (msg, conv, row) in streaming {
            tx.execute(
                "UPDATE messages SET status = 'interrupted', error = 'tock stopped while this reply was streaming' WHERE id = ?1",
                [msg],
            )?;
            // The row the reply answered generates it again (its user message
            // stays where it is). A crash is not the provider's failure, so
            // the attempt is given back.
            let again = match row {
                Some(id) => tx.execute(
                    "UPDATE outbox SET status = 'pending', claimed_by = NULL, priority = 1, next_attempt_at = NULL,
                            attempts = MAX(attempts - 1, 0), updated_at = ?2
                     WHERE id = ?1 AND status = 'sent'",
                    params![id, now],
                )?,
                None => 0,
            };
            if again == 0 {
                let mut item = NewItem::new(conv, Kind::Regenerate, "");
                item.priority = 1;
                insert_item(&tx, &item, now)?;
            }
            rec.interrupted_replies.push(msg);
        }
        recover_unanswered_calls(&tx, now, &mut rec)?;
        rec.expired = expire_overdue(&tx, now, grace_ms, "not sent in time: tock was not running")?;
        tx.commit()?;
        Ok(rec)
    }

    /// After the machine slept (the wall clock leapt ahead of the monotonic
    /// clock): the same grace rule as at start-up. Returns the expired rows.
    pub fn expire_after_sleep(&self, now: i64, grace_ms: i64) -> Result<Vec<OutboxItem>> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let expired = expire_overdue(
            &tx,
            now,
            grace_ms,
            "not sent in time: the computer was asleep when it was due",
        )?;
        tx.commit()?;
        Ok(expired)
    }

    /// Delete finished rows last changed before `before`. Returns how many.
    /// Also deletes ended recurring series last changed before `before`.
    pub fn prune(&self, before: i64) -> Result<usize> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let rows = tx.execute(
            "DELETE FROM outbox WHERE status IN ('sent', 'canceled') AND updated_at < ?1",
            [before],
        )?;
        let series = tx.execute(
            "DELETE FROM series WHERE status = 'ended' AND updated_at < ?1",
            [before],
        )?;
        tx.commit()?;
        Ok(rows + series)
    }

    /// Counts of unfinished items by (kind, status).
    pub fn counts(&self) -> Result<Vec<(String, String, i64)>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(
            "SELECT kind, status, count(*) FROM outbox WHERE kind != 'regenerate' GROUP BY kind, status",
        )?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The outbox row whose reply is streaming in the conversation, if one is.
    pub fn streaming_reply_item(&self, conversation_id: i64) -> Result<Option<i64>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT outbox_id FROM messages INDEXED BY messages_streaming
                 WHERE status = 'streaming' AND conversation_id = ?1 AND outbox_id IS NOT NULL
                 ORDER BY id DESC LIMIT 1",
                [conversation_id],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Every reply stored as streaming, oldest first: being written by a
    /// live tock, or left so by one that died (the next start sends its
    /// message again).
    pub fn streaming_replies(&self) -> Result<Vec<StreamingReply>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(
            "SELECT id, conversation_id, length(content), created_at FROM messages
             INDEXED BY messages_streaming WHERE status = 'streaming' ORDER BY id",
        )?;
        let rows = st.query_map([], |r| {
            Ok(StreamingReply {
                message_id: r.get(0)?,
                conversation_id: r.get(1)?,
                characters: r.get(2)?,
                started_at: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The conversation's sent rows that went at a time of their own: a
    /// scheduled message (false) or a series' occurrence (true), by id —
    /// for the chat to mark the messages tock sent for the user.
    pub fn scheduled_sends(
        &self,
        conversation_id: i64,
    ) -> Result<std::collections::HashMap<i64, bool>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(
            "SELECT id, series_id IS NOT NULL FROM outbox INDEXED BY outbox_conversation
             WHERE conversation_id = ?1 AND status = 'sent' AND (kind = 'message' OR series_id IS NOT NULL)",
        )?;
        let rows = st.query_map([conversation_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Pause the conversation's queue at `at` (a stop, a failed message),
    /// if anything waits in it to go at once: with nothing to hold there is
    /// no pause. True if it changed.
    pub fn pause_queue(&self, conversation_id: i64, at: i64) -> Result<bool> {
        let n = self.conn().execute(
            &format!(
                "UPDATE conversations SET queue_paused_at = ?2
                 WHERE id = ?1 AND queue_paused_at IS NULL
                   AND EXISTS (SELECT 1 FROM outbox WHERE {HELD_BY_A_STOP})"
            ),
            params![conversation_id, at],
        )?;
        Ok(n == 1)
    }

    /// Whether the conversation has a reply on its way: an unfinished
    /// regeneration, or an accepted item whose reply is being retried.
    pub fn owes_reply(&self, conversation_id: i64) -> Result<bool> {
        Ok(self.conn().query_row(
            "SELECT EXISTS(SELECT 1 FROM outbox WHERE conversation_id = ?1 AND status IN ('pending','sending')
                             AND (kind = 'regenerate' OR sent_at IS NOT NULL))",
            [conversation_id],
            |r| r.get(0),
        )?)
    }
}

/// The rows of conversation `?1` a stop holds: queued to go as soon as
/// they can (pending, with no time of their own).
const HELD_BY_A_STOP: &str =
    "conversation_id = ?1 AND status = 'pending' AND due_at IS NULL AND kind != 'regenerate'";

/// A reply stored as streaming ([`Store::streaming_replies`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamingReply {
    pub message_id: i64,
    pub conversation_id: i64,
    /// What is stored of it so far (written every few hundred ms).
    pub characters: i64,
    pub started_at: i64,
}

/// A regeneration that went no further gives the conversation back the
/// reply it put aside, if that is still the last word: nothing but notices
/// and other put-aside replies came after it.
fn restore_replaced_reply(tx: &rusqlite::Transaction, regeneration: i64) -> Result<()> {
    tx.execute(
        "UPDATE messages SET status = 'complete'
         WHERE id = (SELECT replaces_message_id FROM outbox WHERE id = ?1 AND kind = 'regenerate')
           AND status = 'superseded'
           AND NOT EXISTS (SELECT 1 FROM messages l
               WHERE l.conversation_id = messages.conversation_id AND l.id > messages.id
                 AND l.role != 'notice' AND NOT (l.role = 'assistant' AND l.status = 'superseded'))",
        [regeneration],
    )?;
    Ok(())
}
