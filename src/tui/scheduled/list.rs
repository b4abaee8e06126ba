//! The rows of the F2 pane, loaded a window at a time.
//!
//! The list is a few rows loaded whole (the tool calls waiting for an
//! answer, the regenerations on their way, the recurring series each
//! followed by its occurrences, and the occurrences of series not listed),
//! then the outbox rows in list order
//! (`COALESCE(due_at, created_at)`, then id), of which only a window around
//! the selection is loaded: after long use the outbox holds 100,000
//! unfinished rows and a million finished ones. The window is read by
//! position in that order (keyset), so a window costs the same wherever it
//! is; the list's counts come from the counts the store keeps.

use std::collections::HashMap;

use crate::engine::{ConversationGate, Engine};
use crate::sanitize::sanitize_line;
use crate::store::{Kind, ListCursor, ListFilter, ListFrom, OutboxItem, Status, Store};

/// One item, ready to draw. Untrusted text is sanitised here, once.
pub(super) struct Row {
    /// For a series row, an item standing for it: id, text, next due time.
    pub item: OutboxItem,
    /// Set when this row is a recurring series (not an outbox row).
    pub series: Option<crate::engine::SeriesView>,
    /// Set when this row is a tool call waiting for the user's answer; its
    /// item id is the approval's id negated, so it never meets an outbox id.
    pub approval: Option<crate::store::Approval>,
    /// What holds up its conversation (a paused queue, an approval).
    pub gate: ConversationGate,
    /// The conversation's title; None when it no longer exists.
    pub conversation: Option<String>,
    /// The text on one line (a task's title first).
    pub summary: String,
    /// The last error on one line.
    pub error: Option<String>,
}

/// Rows read per query when the window moves, unless set smaller (tests).
pub const DEFAULT_CHUNK: usize = 100;

/// What the pane lists, a window at a time.
pub(super) struct RowList {
    /// The rows before the outbox rows: approvals, series, occurrences.
    head: Vec<Row>,
    /// A run of consecutive outbox rows of the list.
    body: Vec<Row>,
    /// `body` starts at the first outbox row (so `head` is shown before it).
    body_from_start: bool,
    /// `body` ends at the last row of the list.
    body_to_end: bool,
    /// Which outbox rows the body lists.
    filter: ListFilter,
    /// Rows of the whole list that are unfinished, and finished.
    unfinished: usize,
    finished: usize,
    /// Conversation titles of the loaded rows (None: deleted).
    titles: HashMap<i64, Option<String>>,
    gates: HashMap<i64, ConversationGate>,
    /// Rows read per query.
    pub chunk: usize,
}

impl RowList {
    pub fn new() -> Self {
        Self {
            head: Vec::new(),
            body: Vec::new(),
            body_from_start: true,
            body_to_end: true,
            filter: ListFilter::default(),
            unfinished: 0,
            finished: 0,
            titles: HashMap::new(),
            gates: HashMap::new(),
            chunk: DEFAULT_CHUNK,
        }
    }

    /// Rows loaded (the window), `head` included when the window starts the list.
    pub fn len(&self) -> usize {
        self.shown_head() + self.body.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn shown_head(&self) -> usize {
        if self.body_from_start {
            self.head.len()
        } else {
            0
        }
    }

    /// The loaded row at `i` (0 is the window's first row).
    pub fn get(&self, i: usize) -> Option<&Row> {
        let h = self.shown_head();
        if i < h {
            self.head.get(i)
        } else {
            self.body.get(i - h)
        }
    }

    pub fn rows(&self, from: usize, to: usize) -> impl Iterator<Item = &Row> {
        (from..to.min(self.len())).filter_map(|i| self.get(i))
    }

    /// Where the loaded row of item `id` is.
    pub fn position(&self, id: i64) -> Option<usize> {
        let h = self.shown_head();
        if let Some(i) = self.head[..h].iter().position(|r| r.item.id == id) {
            return Some(i);
        }
        self.body
            .iter()
            .position(|r| r.item.id == id)
            .map(|i| i + h)
    }

    /// Where the rows in time order begin, when the window shows recurring
    /// series above them (loaded whole, they come first whatever their
    /// next time): the pane marks the break.
    pub fn series_end(&self) -> Option<usize> {
        let h = self.shown_head();
        (h > 0 && !self.body.is_empty() && self.head.iter().any(|r| r.series.is_some()))
            .then_some(h)
    }

    /// The window's first row is the list's.
    pub fn at_start(&self) -> bool {
        self.body_from_start
    }

    /// The window's last row is the list's.
    pub fn at_end(&self) -> bool {
        self.body_to_end
    }

    /// Unfinished rows in the whole list.
    pub fn unfinished(&self) -> usize {
        self.unfinished
    }

    /// Finished rows in the whole list (listed with `a`).
    pub fn finished(&self) -> usize {
        self.finished
    }

    /// Read the rows loaded whole (approvals, series and their
    /// occurrences), the gates and the list's counts again; the window is
    /// read next, by [`RowList::load_body`].
    pub fn load_head(
        &mut self,
        store: &Store,
        engine: Option<&Engine>,
        all: bool,
    ) -> anyhow::Result<()> {
        self.titles.clear();
        self.gates = crate::engine::state::gates(store)?;
        let series = match engine {
            Some(e) => e.list_series_from(store, all)?,
            None => Vec::new(),
        };
        self.filter = ListFilter {
            finished: all,
            outside_series: !series.is_empty(),
        };
        // Tool calls waiting for an answer come first: nothing in their
        // conversation goes out until they are answered.
        let mut head = approval_rows(store)?;
        // Then regenerations on their way (Ctrl+R, `tock regenerate`): the
        // body's index lists no regeneration, and they are few.
        let mut regenerations = self.rows_of(store, store.unfinished_regenerations()?)?;
        for r in &mut regenerations {
            r.summary = "regenerate the last reply".to_string();
        }
        head.extend(regenerations);
        let (mut occurrences_open, mut occurrences_done) = (0, 0);
        if !series.is_empty() {
            let occurrences = store.listed_occurrences(all)?;
            for o in &occurrences {
                if o.status.is_finished() {
                    occurrences_done += 1;
                } else {
                    occurrences_open += 1;
                }
            }
            let occurrences = self.rows_of(store, occurrences)?;
            head.extend(with_series(occurrences, series, store, all)?);
        }
        self.head = head;
        // The outbox rows of the list are the body's and the occurrences in
        // the head; the head's other rows are approvals and series.
        let (open, done) = store.listed_counts()?;
        let count = |n: i64| usize::try_from(n).unwrap_or(0);
        let head_open = self
            .head
            .iter()
            .filter(|r| !r.item.status.is_finished())
            .count();
        let head_done = self.head.len() - head_open;
        self.unfinished = head_open + count(open).saturating_sub(occurrences_open);
        self.finished = head_done;
        if all {
            self.finished += count(done).saturating_sub(occurrences_done);
        }
        Ok(())
    }

    /// Whether a row of the head (loaded whole) has id `id`.
    pub fn in_head(&self, id: i64) -> bool {
        self.head.iter().any(|r| r.item.id == id)
    }

    /// Whether `item` is one of the body's rows (the list, less the head).
    pub fn lists(&self, item: &OutboxItem) -> bool {
        item.kind != Kind::Regenerate
            && (self.filter.finished || !item.status.is_finished())
            && !(self.filter.outside_series && item.series_id.is_some())
    }

    /// Read the window: from the start with no `anchor`, else around the
    /// row at `anchor` (`reach` rows before it, twice that from it on).
    pub fn load_body(
        &mut self,
        store: &Store,
        anchor: Option<ListCursor>,
        reach: usize,
    ) -> anyhow::Result<()> {
        let want = reach.max(1);
        let (before, after) = match anchor {
            None => (
                Vec::new(),
                store.list_window(self.filter, ListFrom::After(None), 2 * want)?,
            ),
            Some(at) => {
                let before = store.list_window(self.filter, ListFrom::Before(Some(at)), want)?;
                // The anchor's row itself first: "after" the position just before it.
                let from = ListCursor {
                    at: at.at,
                    id: at.id.saturating_sub(1),
                };
                let after =
                    store.list_window(self.filter, ListFrom::After(Some(from)), 2 * want)?;
                (before, after)
            }
        };
        self.body_from_start = anchor.is_none() || before.len() < want;
        self.body_to_end = after.len() < 2 * want;
        let mut rows = before;
        rows.extend(after);
        self.body = self.rows_of(store, rows)?;
        Ok(())
    }

    /// Read the list's last rows (End), `reach` of them at least.
    pub fn load_end(&mut self, store: &Store, reach: usize) -> anyhow::Result<()> {
        if self.body_to_end {
            return Ok(());
        }
        let want = 2 * reach.max(1);
        let rows = store.list_window(self.filter, ListFrom::Before(None), want)?;
        self.body_from_start = rows.len() < want;
        self.body_to_end = true;
        self.body = self.rows_of(store, rows)?;
        Ok(())
    }

    /// Read the rows after the window: returns how many were added.
    pub fn extend_after(&mut self, store: &Store, n: usize) -> anyhow::Result<usize> {
        if self.body_to_end || n == 0 {
            return Ok(0);
        }
        let from = self.body.last().map(|r| ListCursor::of(&r.item));
        let rows = store.list_window(self.filter, ListFrom::After(from), n)?;
        self.body_to_end = rows.len() < n;
        let added = rows.len();
        let rows = self.rows_of(store, rows)?;
        self.body.extend(rows);
        Ok(added)
    }

    /// Read the rows before the window: returns by how many rows the
    /// window's indices moved (the rows added, and the head when the start
    /// was reached).
    pub fn extend_before(&mut self, store: &Store, n: usize) -> anyhow::Result<usize> {
        if self.body_from_start || n == 0 {
            return Ok(0);
        }
        let Some(first) = self.body.first().map(|r| ListCursor::of(&r.item)) else {
            self.body_from_start = true;
            return Ok(self.head.len());
        };
        let rows = store.list_window(self.filter, ListFrom::Before(Some(first)), n)?;
        let mut moved = rows.len();
        if rows.len() < n {
            self.body_from_start = true;
            moved += self.head.len();
        }
        let mut rows = self.rows_of(store, rows)?;
        rows.append(&mut self.body);
        self.body = rows;
        Ok(moved)
    }

    /// Drop loaded rows before `keep_from` (a window index): returns how
    /// many indices the window moved by. The head is dropped with the
    /// first body row.
    pub fn trim_before(&mut self, keep_from: usize) -> usize {
        let h = self.shown_head();
        if keep_from <= h {
            return 0;
        }
        let drop = (keep_from - h).min(self.body.len());
        self.body.drain(..drop);
        self.body_from_start = false;
        drop + h
    }

    /// Drop loaded rows from `keep_to` (a window index) on.
    pub fn trim_after(&mut self, keep_to: usize) {
        let h = self.shown_head();
        let keep = keep_to.saturating_sub(h);
        if keep < self.body.len() {
            self.body.truncate(keep);
            self.body_to_end = false;
        }
    }

    /// Display rows for outbox rows, their conversation titles read for
    /// the conversations not read yet.
    fn rows_of(&mut self, store: &Store, items: Vec<OutboxItem>) -> anyhow::Result<Vec<Row>> {
        let mut missing: Vec<i64> = items
            .iter()
            .filter_map(|i| i.conversation_id)
            .filter(|c| !self.titles.contains_key(c))
            .collect();
        missing.sort_unstable();
        missing.dedup();
        if !missing.is_empty() {
            let found = store.conversations_by_id(&missing)?;
            for c in missing {
                self.titles.insert(c, None);
            }
            for c in found {
                self.titles.insert(c.id, Some(c.display_title()));
            }
        }
        Ok(items
            .into_iter()
            .map(|item| {
                let conversation = item
                    .conversation_id
                    .and_then(|c| self.titles.get(&c).cloned().flatten());
                let gate = item
                    .conversation_id
                    .and_then(|c| self.gates.get(&c).copied())
                    .unwrap_or_default();
                outbox_row(item, conversation, gate)
            })
            .collect())
    }
}

fn outbox_row(item: OutboxItem, conversation: Option<String>, gate: ConversationGate) -> Row {
    let text = one_line(&item.text);
    let summary = match item.title.as_deref().map(one_line) {
        Some(title) if !title.is_empty() && title != text => format!("{title}: {text}"),
        _ => text,
    };
    let error = item
        .last_error
        .as_deref()
        .map(one_line)
        .filter(|e| !e.is_empty());
    Row {
        series: None,
        approval: None,
        gate,
        item,
        conversation,
        summary,
        error,
    }
}

/// Put the series first (by next occurrence), each followed by its
/// occurrences: the unfinished ones always, the finished ones when `all`.
fn with_series(
    occurrences: Vec<Row>,
    series: Vec<crate::engine::SeriesView>,
    store: &Store,
    all: bool,
) -> anyhow::Result<Vec<Row>> {
    let mut occurrences = occurrences;
    let mut out = Vec::new();
    for v in series {
        let sr = &v.series;
        let conversation = match sr.conversation_id {
            Some(c) => store.conversation(c)?.map(|c| c.display_title()),
            None => None,
        };
        // The row stands for the series: its id, text and next occurrence.
        let status = if sr.status == crate::store::SeriesStatus::Ended {
            Status::Canceled
        } else {
            Status::Pending
        };
        let mut item = stand_in(sr.id, sr.conversation_id, &sr.text, status, sr.created_at);
        item.kind = sr.kind;
        item.due_at = sr.next_due_at;
        item.updated_at = sr.updated_at;
        let summary = one_line(&sr.text);
        out.push(Row {
            item,
            series: Some(v.clone()),
            approval: None,
            gate: ConversationGate::default(),
            conversation,
            summary,
            error: None,
        });
        let (mine, others): (Vec<Row>, Vec<Row>) = occurrences
            .into_iter()
            .partition(|r| r.item.series_id == Some(v.series.id));
        occurrences = others;
        for mut r in mine {
            if all || !r.item.status.is_finished() {
                r.summary = format!("↳ {}", r.summary);
                out.push(r);
            }
        }
    }
    // Occurrences of series not listed (ended, when finished ones are hidden).
    out.extend(occurrences);
    Ok(out)
}

/// The item a row that is not an outbox row (a series, an approval) shows:
/// what the table's columns read, nothing more.
fn stand_in(
    id: i64,
    conversation_id: Option<i64>,
    text: &str,
    status: Status,
    at: i64,
) -> OutboxItem {
    OutboxItem {
        id,
        conversation_id,
        kind: Kind::Task,
        text: text.to_string(),
        model_override: None,
        parts_json: None,
        due_at: None,
        status,
        attempts: 0,
        last_error: None,
        next_attempt_at: None,
        priority: 0,
        claimed_by: None,
        created_at: at,
        updated_at: at,
        sent_at: None,
        title: None,
        payload_json: None,
        series_id: None,
        occurrence_at: None,
    }
}

/// Rows for the tool calls waiting for the user's answer.
fn approval_rows(store: &Store) -> anyhow::Result<Vec<Row>> {
    let mut out = Vec::new();
    for a in store.waiting_approvals()? {
        let conversation = store
            .conversation(a.conversation_id)?
            .map(|c| c.display_title());
        // As `tock approvals` says it: tock's own tools what and when (the
        // series a cancel ends), a server's tool its arguments.
        let now = chrono::Local::now();
        let what = crate::call_text::approval_summary(&a.summary, &a.arguments, |ms| {
            chrono::DateTime::from_timestamp_millis(ms)
                .map(|d| crate::when::absolute(d, &now))
                .unwrap_or_default()
        });
        let summary = one_line(&format!("{}: {what}", a.tool));
        let item = stand_in(
            -a.id,
            Some(a.conversation_id),
            &summary,
            Status::Pending,
            a.created_at,
        );
        out.push(Row {
            item,
            series: None,
            approval: Some(a),
            gate: ConversationGate::default(),
            conversation,
            summary,
            error: None,
        });
    }
    Ok(out)
}

/// Untrusted text as one safe line: sanitised, whitespace runs collapsed.
fn one_line(s: &str) -> String {
    sanitize_line(s)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_collapses_whitespace() {
        assert_eq!(one_line("a\n\n b\tc  "), "a b c");
    }
}
