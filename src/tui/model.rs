//! What the TUI has loaded from the database: the conversation list, the open
//! conversation's history, pending items and approvals, and the unfinished
//! items of every conversation counted (not loaded: there may be 100,000).
//! The database is the truth; this is reloaded from it on the engine's
//! events and never written by the views.

use std::collections::{HashMap, HashSet};

use crate::tui::shown_zone::ShownZone;
use chrono::DateTime;

use super::chat::{Entry, TaskCard};
use crate::engine::{ConversationGate, DispatchState, Engine, ItemState};
use crate::store::{
    Approval, ApprovalStatus, Conversation, Message, OpenCounts, OutboxItem, PendingAt, Role,
    Status,
};
use crate::when;

pub struct Model {
    pub engine: Engine,
    /// Where the app's writes run (off the keyboard's thread).
    pub writer: super::writer::Writer<super::app::App>,
    pub convs: Vec<Conversation>,
    pub current: Option<i64>,
    pub entries: Vec<Entry>,
    /// Unfinished items of the current conversation (strip + sending bubbles).
    pub items: Vec<OutboxItem>,
    /// How many files each of `items` carries (those with any), counted
    /// when they are loaded: the strip shows it in every frame, and an
    /// image's `parts_json` can be megabytes of base64.
    pub item_files: HashMap<i64, usize>,
    /// The current conversation's regeneration on its way (Ctrl+R): no item
    /// of the strip, but the chat shows it until its reply starts.
    pub regeneration: Option<OutboxItem>,
    /// The reply whose model reasons, and how much so far (characters).
    pub thinking: Option<(i64, usize)>,
    /// The latest of that reasoning, as this process's engine read it
    /// (another process's is not seen until the reply is kept).
    pub thinking_latest: Option<std::sync::Arc<str>>,
    /// Tool calls running in the current conversation (in any process).
    pub tool_runs: Vec<crate::store::ToolRun>,
    /// Approvals of the current conversation.
    pub approvals: Vec<Approval>,
    /// Task rows referenced by task cards in the current conversation.
    pub tasks: HashMap<i64, OutboxItem>,
    /// Recurring tasks referenced by task cards (their job id is the series').
    pub task_series: HashMap<i64, crate::engine::SeriesView>,
    /// Unfinished items of all conversations, counted by status and
    /// conversation (status-bar counts, sidebar badges, the exit line).
    pub unfinished: OpenCounts,
    /// Conversations whose queue is paused or waits for an approval.
    pub gates: HashMap<i64, ConversationGate>,
    /// Conversations with a tool call waiting for approval.
    pub awaiting: HashSet<i64>,
    pub dispatch: DispatchState,
    /// Long messages of yours are shown whole (Ctrl+O) instead of folded.
    pub unfolded: bool,
    /// Pending items per conversation (sidebar badges), from `unfinished`.
    pub pending_by_conv: HashMap<i64, usize>,
    /// Failed or expired items by conversation (not in `pending_by_conv`).
    pub failed_by_conv: HashMap<i64, usize>,
    /// Active recurring series by conversation (the list marks them; the
    /// status bar counts them all).
    pub series_by_conv: HashMap<i64, usize>,
    /// When the first of those sends next, by conversation.
    pub series_next_by_conv: HashMap<i64, i64>,
    /// The status bar's counts, with the span of time they hold for: from
    /// when they were made until a row's due time or back-off passes (a
    /// frame reads them; they are made again only after a change or then).
    counts: std::cell::Cell<Option<(i64, i64, StateCounts)>>,
    /// Conversations whose reply finished while another was open.
    pub unread: HashSet<i64>,
    /// Conversations that rang the terminal for a message sent or a reply
    /// since they were last opened: they do not ring again for those until
    /// then (a series every minute rang every minute).
    pub rang: HashSet<i64>,
    /// The versions of the current conversation's messages.
    pub alternates: crate::store::AlternateMap,
    /// Versions being looked at instead of the one shown, by their group's
    /// first version (only where the shown one cannot be changed).
    pub browsing: HashMap<i64, i64>,
    /// The group the version keys last stepped through (its first version).
    pub stepping: Option<i64>,
    /// Tokens (and cost) of the current conversation's replies.
    pub usage: crate::engine::ConversationUsage,
    /// A problem loading data, for the status bar (set, then taken by the app).
    pub load_error: Option<String>,
}

/// Unfinished items by the state they show, for the status bar.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StateCounts {
    pub queued: usize,
    pub retrying: usize,
    pub scheduled: usize,
    pub failed: usize,
    pub waiting: usize,
}

impl StateCounts {
    /// Count `n` items in `state` (the one mapping of item states to the
    /// status bar's counts).
    pub fn add(&mut self, state: &ItemState, n: usize) {
        match state {
            // Behind a call waiting for its answer an item is queued, not
            // paused: the call's own count (`?1 to approve`) says what holds it.
            ItemState::Queued
            | ItemState::Sending
            | ItemState::RunningTool
            | ItemState::AwaitingApproval => self.queued += n,
            ItemState::Retrying { .. } => self.retrying += n,
            ItemState::Scheduled { .. } => self.scheduled += n,
            ItemState::Failed { .. } | ItemState::Expired => self.failed += n,
            ItemState::Paused => self.waiting += n,
            ItemState::Sent | ItemState::Canceled => {}
        }
    }
}

/// The instant `ms` in the zone the TUI shows times in.
pub fn local(ms: i64) -> DateTime<ShownZone> {
    DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .with_timezone(&ShownZone::System)
}

impl Model {
    pub fn new(engine: Engine) -> Self {
        Self {
            writer: super::writer::Writer::new(engine.clone()),
            engine,
            convs: Vec::new(),
            current: None,
            entries: Vec::new(),
            items: Vec::new(),
            item_files: HashMap::new(),
            regeneration: None,
            thinking: None,
            thinking_latest: None,
            tool_runs: Vec::new(),
            approvals: Vec::new(),
            tasks: HashMap::new(),
            task_series: HashMap::new(),
            unfinished: OpenCounts::default(),
            gates: HashMap::new(),
            awaiting: HashSet::new(),
            dispatch: DispatchState::Starting,
            unfolded: false,
            unread: HashSet::new(),
            rang: HashSet::new(),
            alternates: Default::default(),
            browsing: HashMap::new(),
            stepping: None,
            usage: Default::default(),
            series_by_conv: HashMap::new(),
            series_next_by_conv: HashMap::new(),
            pending_by_conv: HashMap::new(),
            failed_by_conv: HashMap::new(),
            counts: std::cell::Cell::new(None),
            load_error: None,
        }
    }

    pub fn now_ms(&self) -> i64 {
        self.engine.now_ms()
    }

    pub fn now(&self) -> DateTime<ShownZone> {
        local(self.now_ms())
    }

    fn fail(&mut self, what: &str, e: anyhow::Error) {
        self.load_error = Some(format!("loading {what}: {}", crate::store::error_line(&e)));
    }

    pub fn reload_convs(&mut self) {
        match self.engine.reader().conversations() {
            Ok(c) => self.convs = c,
            Err(e) => self.fail("the conversations", e),
        }
    }

    /// The conversation on screen; the engine takes the text of replies
    /// streaming in others less often.
    pub fn set_current(&mut self, current: Option<i64>) {
        self.current = current;
        self.engine.show(current);
    }

    /// Show conversation `id` (its history, items and approvals).
    pub fn open(&mut self, id: i64) {
        if self.current != Some(id) {
            self.entries.clear();
            self.browsing.clear();
            self.stepping = None;
        }
        self.set_current(Some(id));
        self.unread.remove(&id);
        self.rang.remove(&id);
        self.reload_messages();
        self.reload_items();
    }

    /// The version of `group` on screen: the one looked at, else the one shown.
    fn chosen(&self, group: &crate::store::Alternates) -> Option<i64> {
        let first = *group.versions.first()?;
        match self.browsing.get(&first) {
            Some(id) if group.versions.contains(id) => Some(*id),
            _ => group
                .shown
                .or(group.versions.len().checked_sub(1))
                .map(|i| group.versions[i]),
        }
    }

    /// Messages not drawn because another version of them is: the other
    /// versions, and the exchange that followed an earlier edit. Looking at
    /// an earlier text of an edited message shows the exchange that followed
    /// it then, and not what came after the edit (that went on from the
    /// newer text).
    fn hidden_versions(&self, msgs: &[crate::store::Message]) -> HashSet<i64> {
        let mut hidden = HashSet::new();
        for g in self.alternates.groups() {
            let chosen = self.chosen(g);
            hidden.extend(g.versions.iter().copied().filter(|v| Some(*v) != chosen));
            if g.kind == crate::store::AlternateKind::Edited {
                let newer = chosen
                    .and_then(|c| g.versions.iter().position(|v| *v == c))
                    .and_then(|i| g.versions.get(i + 1));
                if let Some(&newer) = newer {
                    hidden.extend(
                        msgs.iter()
                            .filter(|m| m.id > newer && m.role != crate::store::Role::Notice)
                            .map(|m| m.id),
                    );
                }
                for pair in g.versions.windows(2) {
                    if Some(pair[0]) == chosen {
                        continue;
                    }
                    hidden.extend(
                        msgs.iter()
                            .filter(|m| m.id > pair[0] && m.id < pair[1])
                            .filter(|m| m.status == crate::store::MessageStatus::Superseded)
                            .map(|m| m.id),
                    );
                }
            }
        }
        hidden
    }

    fn version_of(&self, id: i64) -> Option<crate::tui::chat::Version> {
        let g = self.alternates.of(id)?;
        let i = g.versions.iter().position(|v| *v == id)?;
        Some(crate::tui::chat::Version {
            index: i + 1,
            of: g.versions.len(),
            in_context: g.shown == Some(i),
        })
    }

    /// The status bar's "Σ 12.3k tokens · $0.04 · context 34%", if anything was counted.
    pub fn usage_summary(&self) -> Option<String> {
        let u = &self.usage;
        let total = u.total.prompt_tokens.unwrap_or(0) + u.total.completion_tokens.unwrap_or(0);
        if total == 0 {
            return None;
        }
        let mut s = format!("Σ {} tokens", tokens(total));
        if let Some(c) = u.cost {
            s.push_str(&format!(" · {}", dollars(c)));
        }
        if let (Some(used), Some(of)) = (u.context_used, u.context_tokens.filter(|n| *n > 0)) {
            s.push_str(&format!(" · context {}%", (used * 100 / of).min(999)));
        }
        Some(s)
    }

    pub fn reload_messages(&mut self) {
        let Some(id) = self.current else { return };
        match self.engine.reader().messages(id) {
            Ok(msgs) => {
                self.alternates = self.engine.reader().alternates(id).unwrap_or_default();
                self.usage = self.engine.usage(id).unwrap_or_default();
                self.tool_runs = self
                    .engine
                    .reader()
                    .tool_runs()
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|r| r.conversation_id == id)
                    .collect();
                // How much a model has reasoned, as another process (a
                // daemon) that streams the reply saved it.
                if msgs
                    .iter()
                    .any(|m| m.status == crate::store::MessageStatus::Streaming)
                    && let Ok(stored) = self.engine.reader().reasoning_chars(id)
                {
                    for (mid, n) in stored {
                        if self.thinking.is_none_or(|(m, c)| m != mid || c < n) {
                            if self.thinking.is_none_or(|(m, _)| m != mid) {
                                self.thinking_latest = None;
                            }
                            self.thinking = Some((mid, n));
                        }
                    }
                }
                let reasoned: HashMap<i64, usize> = self
                    .engine
                    .reader()
                    .reasoned(id)
                    .unwrap_or_default()
                    .into_iter()
                    .collect();
                let hidden = self.hidden_versions(&msgs);
                // Repeated interrupted attempts at one reply show as the latest.
                let collapsed =
                    crate::store::collapse_attempts(&msgs, |id| reasoned.contains_key(&id));
                let sends = self.engine.reader().scheduled_sends(id).unwrap_or_default();
                let mut old: HashMap<i64, Entry> =
                    self.entries.drain(..).map(|e| (e.msg.id, e)).collect();
                let now = self.now_ms();
                self.entries = msgs
                    .into_iter()
                    .filter(|m| !collapsed.is_hidden(m.id) && !hidden.contains(&m.id))
                    .map(|mut m| {
                        // Written on a clock that was ahead: it happened by
                        // now (its header and `/export` say so, as the lists do).
                        m.created_at = crate::when::happened(m.created_at, now);
                        let mid = m.id;
                        let version = self.version_of(mid);
                        let usage = self.usage.of(mid).map(usage_line);
                        let mut e = Entry::new(m);
                        e.version = version;
                        e.usage = usage;
                        e.thinking = self.thinking.filter(|(id, _)| *id == mid).map(|(_, n)| n);
                        e.thinking_latest = self.thinking_latest_of(mid);
                        e.reasoned = reasoned.get(&mid).map(|&n| (n, None));
                        if let Some(o) = old.remove(&mid) {
                            // The text shown stays, not read again at each reload.
                            if let (Some((n, text)), Some((was, Some(shown)))) =
                                (e.reasoned.as_mut(), o.reasoned.as_ref())
                                && n == was
                            {
                                *text = Some(shown.clone());
                            }
                            e.reuse(o);
                        }
                        e.earlier_attempts = collapsed.earlier.get(&mid).copied().unwrap_or(0);
                        e.origin = e
                            .msg
                            .outbox_id
                            .and_then(|o| sends.get(&o))
                            .map(|recurring| {
                                if *recurring {
                                    super::chat::SendOrigin::Recurring
                                } else {
                                    super::chat::SendOrigin::Scheduled
                                }
                            });
                        e
                    })
                    .collect();
            }
            Err(e) => self.fail("the conversation", e),
        }
        match self.engine.reader().approvals(id) {
            Ok(a) => self.approvals = a,
            Err(e) => self.fail("approvals", e),
        }
        self.tasks.clear();
        self.task_series.clear();
        let job_ids: Vec<i64> = self
            .entries
            .iter()
            .filter_map(|e| task_job_id(&e.msg))
            .collect();
        self.load_tasks(job_ids);
        self.refresh_cards();
        self.apply_fold();
        self.apply_retry_hints();
    }

    /// Only the last reply can be regenerated (Ctrl+R), and not while it is
    /// already being generated again: older interrupted replies get no hint.
    pub fn apply_retry_hints(&mut self) {
        let regenerating = self
            .items
            .iter()
            .any(|i| i.accepted() && matches!(i.status, Status::Pending | Status::Sending))
            || self.regeneration.is_some()
            || self.is_busy();
        let last = self
            .entries
            .iter()
            .rposition(|e| e.msg.role == Role::Assistant);
        for (i, e) in self.entries.iter_mut().enumerate() {
            e.retry_hint = match (Some(i) == last, regenerating) {
                (true, false) => " — Ctrl+R retries",
                (true, true) => " — being generated again",
                _ => "",
            };
        }
    }

    pub fn reload_items(&mut self) {
        let Some(id) = self.current else { return };
        match self.engine.reader().conversation_items(id) {
            Ok(items) => {
                self.item_files = items
                    .iter()
                    .filter_map(|it| {
                        let n = crate::files::attachment_infos(it.parts_json.as_deref()).len();
                        (n > 0).then_some((it.id, n))
                    })
                    .collect();
                self.items = items;
            }
            Err(e) => self.fail("pending items", e),
        }
        match self.engine.reader().regeneration(id) {
            Ok(r) => self.regeneration = r,
            Err(e) => self.fail("pending items", e),
        }
        self.apply_retry_hints();
        let ids: Vec<i64> = self
            .tasks
            .keys()
            .chain(self.task_series.keys())
            .copied()
            .collect();
        self.load_tasks(ids);
        self.refresh_cards();
    }

    /// The rows behind task cards: an outbox item for a one-off task, a
    /// series for a recurring one (ids share one space: one id, one row).
    fn load_tasks(&mut self, job_ids: Vec<i64>) {
        for oid in job_ids {
            match self.engine.reader().item(oid) {
                Ok(Some(it)) => {
                    self.tasks.insert(oid, it);
                    continue;
                }
                Ok(None) => {}
                Err(e) => {
                    self.fail("a task", e);
                    continue;
                }
            }
            match self.engine.series_view(oid) {
                Ok(Some(v)) => {
                    self.task_series.insert(oid, v);
                }
                Ok(None) => {}
                Err(e) => self.fail("a recurring task", e),
            }
        }
    }

    /// The status bar's counts now.
    pub fn state_counts(&self) -> StateCounts {
        let now = self.now_ms();
        if let Some((from, until, c)) = self.counts.get()
            && from <= now
            && now < until
        {
            return c;
        }
        let (c, until) = match self.engine.reader().pending_at(now) {
            Ok(at) => {
                let until = at.until.unwrap_or(i64::MAX);
                (self.count_states(&at, now), until)
            }
            Err(e) => {
                // Drawn without the time-dependent part, tried again in a second.
                tracing::warn!("counting pending items: {e:#}");
                (self.count_states(&PendingAt::default(), now), now + 1000)
            }
        };
        self.counts.set(Some((now, until, c)));
        c
    }

    /// The counts by the one item state (`engine::state`): the rows in
    /// back-off are retrying, the ready ones are in the state their
    /// conversation's gate gives them, and the other pending ones are
    /// scheduled.
    fn count_states(&self, at: &PendingAt, now: i64) -> StateCounts {
        let open = &self.unfinished;
        let count = |n: i64| usize::try_from(n).unwrap_or(0);
        let mut c = StateCounts::default();
        c.add(&ItemState::Sending, count(open.sending));
        c.add(&ItemState::Expired, count(open.expired));
        c.add(
            &ItemState::Failed {
                reason: String::new(),
            },
            count(open.failed),
        );
        c.add(
            &ItemState::Retrying {
                at: now,
                reason: String::new(),
            },
            count(at.retrying),
        );
        let mut ready = 0;
        let held: HashMap<i64, i64> = at.held.iter().copied().collect();
        for (conversation, n) in &at.ready {
            ready += n;
            let held = conversation
                .and_then(|c| held.get(&c))
                .copied()
                .unwrap_or(0);
            // Ready rows: pending, with no time ahead of them; those a stop
            // holds were in the queue before it, the others after.
            let gate = self.gate(*conversation);
            for (n, place) in [(held, i64::MIN), (n - held, i64::MAX)] {
                let row = crate::store::ItemSummary {
                    id: 0,
                    conversation_id: *conversation,
                    kind: crate::store::Kind::Message,
                    status: Status::Pending,
                    due_at: None,
                    next_attempt_at: None,
                    created_at: place,
                };
                c.add(
                    &crate::engine::state::summary_state(&row, now, gate),
                    count(n),
                );
            }
        }
        c.add(
            &ItemState::Scheduled { at: now },
            count(open.pending - ready - at.retrying),
        );
        c
    }

    /// The unfinished items counted again (after any outbox change; the
    /// store keeps the counts, so this reads a row per conversation and
    /// status whatever the number of items), and the gates.
    pub fn reload_summaries(&mut self) {
        self.counts.set(None);
        match self.engine.reader().open_counts() {
            Ok(o) => self.unfinished = o,
            Err(e) => self.fail("pending items", e),
        }
        let by_conv = |counts: &[(i64, i64)]| -> HashMap<i64, usize> {
            counts
                .iter()
                .map(|(c, n)| (*c, usize::try_from(*n).unwrap_or(0)))
                .collect()
        };
        self.pending_by_conv = by_conv(&self.unfinished.pending_by_conversation);
        self.failed_by_conv = by_conv(&self.unfinished.failed_by_conversation);
        self.reload_gates();
    }

    /// The earliest due time ahead of a pending item (the exit line).
    pub fn next_due(&self) -> Option<i64> {
        match self.engine.reader().next_due_after(self.now_ms()) {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!("reading the next due time: {e:#}");
                None
            }
        }
    }

    /// How many unfinished messages (not tasks) conversation `id` holds.
    pub fn open_messages_of(&self, id: i64) -> usize {
        match self.engine.reader().open_messages_of(id) {
            Ok(n) => usize::try_from(n).unwrap_or(0),
            Err(e) => {
                tracing::warn!("counting a conversation's pending items: {e:#}");
                0
            }
        }
    }

    /// What of a conversation goes on after it is deleted: its recurring
    /// series (not ended) and its tasks still to fire.
    pub fn outliving_deletion(&self, id: i64) -> (usize, usize) {
        let reader = self.engine.reader();
        let series = reader.conversation_series(id).map(|s| s.len());
        let tasks = reader
            .open_tasks_of(id)
            .map(|n| usize::try_from(n).unwrap_or(0));
        match (series, tasks) {
            (Ok(s), Ok(t)) => (s, t),
            (Err(e), _) | (_, Err(e)) => {
                tracing::warn!("counting a conversation's series and tasks: {e:#}");
                (0, 0)
            }
        }
    }

    /// Active recurring series in all, for the status bar and the exit line.
    pub fn active_series(&self) -> usize {
        self.series_by_conv.values().sum()
    }

    /// How many tool calls wait for approval, in every conversation (two
    /// calls of one reply are two).
    pub fn calls_awaiting_approval(&self) -> usize {
        self.gates
            .values()
            .map(|g| g.approvals_waiting as usize)
            .sum()
    }

    /// The recurring-series count and each conversation's gate (paused,
    /// awaiting approval): small, read whole on every change.
    fn reload_gates(&mut self) {
        match self.engine.reader().active_series_by_conversation() {
            Ok(by_conv) => {
                self.series_next_by_conv = by_conv
                    .iter()
                    .filter_map(|(c, (_, next))| Some((*c, (*next)?)))
                    .collect();
                self.series_by_conv = by_conv.into_iter().map(|(c, (n, _))| (c, n)).collect();
            }
            Err(e) => self.fail("recurring series", e),
        }
        match crate::engine::state::gates(self.engine.reader()) {
            Ok(g) => {
                self.awaiting = g
                    .iter()
                    .filter(|(_, g)| g.awaiting_approval)
                    .map(|(id, _)| *id)
                    .collect();
                self.gates = g;
            }
            Err(e) => self.fail("conversation states", e),
        }
    }

    /// Everything, after another process changed the database.
    pub fn reload_all(&mut self) {
        self.reload_convs();
        if let Some(id) = self.current
            && !self.convs.iter().any(|c| c.id == id)
        {
            self.set_current(None);
            self.entries.clear();
        }
        self.reload_messages();
        self.reload_items();
        self.reload_summaries();
    }

    pub fn current_conv(&self) -> Option<&Conversation> {
        self.current
            .and_then(|id| self.convs.iter().find(|c| c.id == id))
    }

    pub fn is_busy(&self) -> bool {
        self.current.is_some_and(|c| self.engine.is_busy(c))
    }

    pub fn gate(&self, conversation_id: Option<i64>) -> ConversationGate {
        conversation_id
            .and_then(|c| self.gates.get(&c).copied())
            .unwrap_or_default()
    }

    pub fn paused(&self) -> bool {
        self.gate(self.current).paused()
    }

    /// Items shown in the strip (sending ones are shown as bubbles in the history).
    pub fn strip_items(&self) -> impl Iterator<Item = &OutboxItem> {
        self.items.iter().filter(|i| i.status != Status::Sending)
    }

    /// The regeneration while the chat shows it: until its reply starts
    /// (then the reply streams in its place).
    pub fn waiting_regeneration(&self) -> Option<&OutboxItem> {
        self.regeneration
            .as_ref()
            .filter(|r| r.status == Status::Pending || !r.accepted())
    }

    pub fn state_of(&self, item: &OutboxItem, now: i64) -> ItemState {
        crate::engine::item_state(item, now, self.gate(item.conversation_id))
    }

    pub fn waiting_approval(&self) -> Option<&Approval> {
        self.approvals
            .iter()
            .find(|a| a.status == ApprovalStatus::Waiting)
    }

    /// The model label for the status bar: name and provider (no key is fetched).
    pub fn model_label(&self) -> (String, String) {
        let name = self.current_conv().and_then(|c| c.model.clone());
        // The file could not be read at start: its models are unknown (the
        // held defaults' offline model is no one's choice).
        if self.engine.config().is_held() && name.as_deref() != Some("echo") {
            return (
                name.unwrap_or_else(|| "config error".to_string()),
                "config unreadable".to_string(),
            );
        }
        match self.engine.config().describe(name.as_deref()) {
            Ok((n, kind)) => (n, kind.to_string()),
            Err(e) => (name.unwrap_or_default(), format!("error: {e}")),
        }
    }

    /// Give each task card the live state of its row (on reload and each minute).
    pub fn refresh_cards(&mut self) {
        let now = self.now_ms();
        let now_local = local(now);
        for e in self.entries.iter_mut() {
            let Some(job) = task_job_id(&e.msg) else {
                continue;
            };
            if let Some(v) = self.task_series.get(&job) {
                e.card = Some(series_card(job, v, &now_local));
                continue;
            }
            e.card = self.tasks.get(&job).map(|t| {
                let due = t.due_at.unwrap_or(0);
                let due_utc = DateTime::from_timestamp_millis(due).unwrap_or_default();
                let state = match t.status {
                    Status::Pending | Status::Sending => "scheduled",
                    Status::Sent => "fired",
                    Status::Canceled => "canceled",
                    Status::Expired => "expired",
                    Status::Failed => "failed",
                };
                let when = match t.status {
                    Status::Sent => format!("fired {}", when::absolute(due_utc, &now_local)),
                    Status::Pending | Status::Sending if due > now => {
                        // The same clock as the strip; the app ticks when this label changes.
                        format!("fires {}", super::views::preview(due, &now_local))
                    }
                    Status::Pending | Status::Sending => {
                        format!(
                            "due {} — fires when the conversation is free",
                            when::absolute(due_utc, &now_local)
                        )
                    }
                    // Canceled, expired or failed: it will not fire.
                    _ => format!("was due {}", when::absolute(due_utc, &now_local)),
                };
                TaskCard {
                    job_id: job,
                    title: super::chat::task_name(t.title.as_deref(), &t.text),
                    instruction: t.text.clone(),
                    when,
                    state: state.into(),
                }
            });
        }
    }

    /// The latest reasoning of reply `message_id`, when reasoning is shown.
    pub fn thinking_latest_of(&self, message_id: i64) -> Option<std::sync::Arc<str>> {
        self.thinking_latest
            .clone()
            .filter(|_| self.unfolded && self.thinking.is_some_and(|(id, _)| id == message_id))
    }

    /// Fold long messages of yours unless the user unfolded them; show the
    /// models' reasoning only then (also as it comes).
    pub fn apply_fold(&mut self) {
        let reader = self.engine.reader();
        let latest = self
            .thinking
            .map(|(id, _)| (id, self.thinking_latest_of(id)));
        for e in self.entries.iter_mut() {
            e.folded = !self.unfolded;
            if let Some((id, text)) = &latest
                && e.msg.id == *id
            {
                e.thinking_latest = text.clone();
            }
            if let Some((_, text)) = e.reasoned.as_mut() {
                if !self.unfolded {
                    *text = None;
                } else if text.is_none() {
                    *text = reader.reasoning(e.msg.id).ok().flatten();
                }
            }
        }
    }

    /// The user messages of this conversation, oldest first (for Ctrl+P).
    pub fn sent_texts(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .entries
            .iter()
            .filter(|e| e.msg.role == Role::User && !e.msg.is_task_turn())
            .map(|e| super::sending::escape_slash(&e.msg.content).into_owned())
            .collect();
        let keep = v.len().saturating_sub(200);
        v.drain(..keep);
        v
    }

    /// Whether message `id` is still in the conversation as it was (not
    /// edited or replaced since, here or by another tock). Unknown (the
    /// database unreadable) counts as still there.
    pub fn is_live_user_message(&self, id: i64) -> bool {
        match self.engine.reader().message(id) {
            Ok(Some(m)) => m.status != crate::store::MessageStatus::Superseded,
            Ok(None) => false,
            Err(_) => true,
        }
    }

    /// The last message of yours in this conversation, to edit and resend:
    /// one you typed, not a scheduled task's turn (tock wrote that one).
    pub fn last_user_message(&self) -> Option<&Message> {
        self.entries
            .iter()
            .rev()
            .find(|e| e.msg.role == Role::User && !e.msg.is_task_turn())
            .map(|e| &e.msg)
    }
}

/// A recurring task's card: its rule, and when it fires next (or how it
/// ended); its state is the series'.
fn series_card(job: i64, v: &crate::engine::SeriesView, now: &DateTime<ShownZone>) -> TaskCard {
    use crate::store::SeriesStatus;
    let s = &v.series;
    let next = match (s.status, v.upcoming.first()) {
        (SeriesStatus::Ended, _) => v.ended_record().unwrap_or_default(),
        (SeriesStatus::Paused, _) => "paused (F2 resumes it)".to_string(),
        (SeriesStatus::Active, Some(&due)) => {
            format!("next {}", super::views::preview(due, now))
        }
        (SeriesStatus::Active, None) => "no occurrence left".to_string(),
    };
    TaskCard {
        job_id: job,
        title: super::chat::task_name(s.title.as_deref(), &s.text),
        instruction: s.text.clone(),
        when: format!("{}\n{next}", v.description),
        state: match s.status {
            SeriesStatus::Active => "recurring",
            SeriesStatus::Paused => "paused",
            SeriesStatus::Ended => "ended",
        }
        .into(),
    }
}

/// The task a `schedule_task` tool result refers to.
fn task_job_id(m: &Message) -> Option<i64> {
    if m.role != Role::Tool || m.model.as_deref() != Some(crate::engine::tools::SCHEDULE_TASK) {
        return None;
    }
    serde_json::from_str::<serde_json::Value>(&m.content)
        .ok()?
        .get("job_id")?
        .as_i64()
}

/// "1.2k", "34k", "812".
fn tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..10_000 => format!("{:.1}k", n as f64 / 1_000.0),
        10_000..1_000_000 => format!("{}k", n / 1_000),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

fn dollars(c: f64) -> String {
    if c < 0.01 {
        format!("${c:.4}")
    } else {
        format!("${c:.2}")
    }
}

/// The line under a reply: "1.2k in (800 cached) · 210 out · $0.0042".
fn usage_line(r: &crate::engine::ReplyUsage) -> String {
    let u = &r.usage;
    let mut parts = Vec::new();
    if let Some(p) = u.prompt_tokens {
        match u.cached_tokens.filter(|c| *c > 0) {
            Some(c) => parts.push(format!("{} in ({} cached)", tokens(p), tokens(c))),
            None => parts.push(format!("{} in", tokens(p))),
        }
    }
    if let Some(c) = u.completion_tokens {
        parts.push(format!("{} out", tokens(c)));
    }
    if let Some(c) = r.cost {
        parts.push(dollars(c));
    }
    parts.join(" · ")
}
