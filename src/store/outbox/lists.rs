//! What the views read of the outbox: lists and windows of items, the
//! kept counts, what a conversation has waiting, replies streaming.

use anyhow::Result;
use rusqlite::{OptionalExtension, params};

use super::{COLS, Kind, OutboxItem, Status};
use crate::store::Store;

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

/// A regeneration not done yet (see [`Store::unfinished_regenerations`]).
const UNFINISHED_REGENERATION: &str =
    "(kind = 'regenerate' AND status IN ('pending', 'sending', 'failed', 'expired'))";

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

/// A reply stored as streaming ([`Store::streaming_replies`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamingReply {
    pub message_id: i64,
    pub conversation_id: i64,
    /// What is stored of it so far (written every few hundred ms).
    pub characters: i64,
    pub started_at: i64,
}

impl Store {
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

    /// The regenerations not done yet, in list order: the command line
    /// lists them with the items (the id is what `tock cancel` takes),
    /// while the views show each as the reply it will be.
    pub fn unfinished_regenerations(&self) -> Result<Vec<OutboxItem>> {
        self.query_items(
            // Its own index: the planner, which knows no row counts, took
            // the status index and read every unfinished row of the outbox.
            &format!(
                "INDEXED BY outbox_unfinished_regenerations
                 WHERE {UNFINISHED_REGENERATION} ORDER BY COALESCE(due_at, created_at), id"
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
    /// The first item in list order that needs the user: failed or expired
    /// (what the status bar's "need attention" counts besides approvals).
    pub fn first_needing_attention(&self) -> Result<Option<i64>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT id FROM outbox WHERE status IN ('failed', 'expired') AND kind != 'regenerate'
                 ORDER BY COALESCE(due_at, created_at), id LIMIT 1",
                [],
                |r| r.get(0),
            )
            .optional()?)
    }

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

    /// Every item of one conversation made after item `after` (any kind,
    /// any state), oldest first: the continuations of a turn among them.
    pub fn items_after(&self, conversation_id: i64, after: i64) -> Result<Vec<OutboxItem>> {
        self.query_items(
            "WHERE conversation_id = ?1 AND id > ?2 ORDER BY id",
            [conversation_id, after],
        )
    }

    /// Counts of unfinished items by (kind, status).
    pub fn counts(&self) -> Result<Vec<(String, String, i64)>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(&format!(
            "SELECT kind, status, count(*) FROM outbox
                 WHERE kind != 'regenerate' OR {UNFINISHED_REGENERATION} GROUP BY kind, status"
        ))?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
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
}
