//! The headless engine: owns the store, the outbox scheduler and the
//! providers. The TUI, `tock daemon` and the CLI are front ends of it.

mod approved;
pub mod clock;
mod history;
mod holder;
pub mod models;
mod ops;
mod pace;
pub mod policy;
pub(crate) mod reading;
mod running;
mod scheduler;
mod series;
pub mod state;
pub mod tools;
mod turn;
mod watch;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Result, anyhow};
use tokio::sync::{Notify, broadcast};

pub use clock::{Clock, ManualClock, SystemClock};
pub use history::{ConversationUsage, ReplyUsage, reply_cost};
pub use models::{ModelList, UnknownModel};
pub use ops::ItemAction;
pub use series::SeriesView;
pub use state::{ConversationGate, ItemState, item_state};
pub use turn::Part;

use crate::config::ConfigSource;
use crate::store::{Kind, NewItem, Store};

/// The most of a reasoning's latest part an [`Event::Thinking`] carries:
/// a few lines to watch, not the whole (kept with the reply).
pub const THINKING_LATEST_BYTES: usize = 1024;

/// Everything the engine tells its front ends.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// Outbox rows changed (reload the strip / the F2 list).
    Outbox,
    /// These outbox rows changed, and no others: a front end that keeps
    /// every row's summary re-reads only these.
    OutboxRows(Vec<i64>),
    /// A conversation's messages changed (new message, reply finished, title).
    Conversation(i64),
    /// The conversation list changed.
    Conversations,
    /// MCP servers started, stopped or listed their tools.
    Tools,
    /// The config file was read again, and a notice that says so was told
    /// by another tock on the database (it reaches the front ends here as
    /// a kept notice, maybe before this process read the file): what
    /// depends on the settings is read again.
    ConfigReloaded,
    /// The model of a streaming reply reasons before (or between) its
    /// text: `chars` characters of reasoning so far, and its latest part
    /// (up to [`THINKING_LATEST_BYTES`], for a front end that shows it
    /// live). Sent at most once a second; the whole is kept with the reply
    /// once it ends.
    Thinking {
        conversation_id: i64,
        message_id: i64,
        chars: usize,
        latest: Arc<str>,
    },
    /// Text appended to a streaming reply.
    Delta {
        conversation_id: i64,
        message_id: i64,
        /// Where `text` starts in the reply, in bytes: a front end that read
        /// the reply from the database (saved as it streams) after this was
        /// sent knows what it already has.
        offset: usize,
        text: String,
    },
    /// A reply finished (complete, interrupted or failed).
    TurnFinished {
        conversation_id: i64,
    },
    Notice(Notification),
    Dispatch(DispatchState),
    /// Another process changed the database.
    External,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoticeKind {
    /// A scheduled message or task was sent.
    Fired,
    /// A reply finished (front ends skip the conversation in view).
    ReplyFinished,
    Failed,
    /// Generating a reply again failed before it started; the reply it was
    /// to replace is the conversation's answer again.
    RegenerateFailed,
    Expired,
    /// A tool call waits for the user's approval.
    Approval,
    /// An approved tool call started; it runs until
    /// [`Engine::runs_approved_call_in`] says no more.
    ToolRunning,
    /// The config file cannot be read: nothing new of it is in effect
    /// (nothing is sent, if it could not be read at start).
    ConfigUnreadable,
    /// The config file can be read again after [`NoticeKind::ConfigUnreadable`].
    ConfigReadable,
    /// A reply was cut and is asked for again at a time the notice names:
    /// news until it is.
    ReplyRetrying,
    Info,
}

/// The kinds of notice kept in the database, with the names they are kept
/// under: what a user wants to hear in every tock on the database. Notices
/// about this process (a config reload, a call running now) stay in it.
const STORED_NOTICES: [(NoticeKind, &str); 8] = [
    (NoticeKind::Fired, "fired"),
    (NoticeKind::ReplyFinished, "reply_finished"),
    (NoticeKind::Failed, "failed"),
    (NoticeKind::RegenerateFailed, "regenerate_failed"),
    (NoticeKind::Expired, "expired"),
    (NoticeKind::Approval, "approval"),
    (NoticeKind::ConfigUnreadable, CONFIG_STATE_NOTICES[0]),
    (NoticeKind::ConfigReadable, CONFIG_STATE_NOTICES[1]),
];

/// The stored names of the notices about the config file, a state every
/// tock on the database reads alike: each is kept once however many of them
/// notice it ([`Engine::notify_config_state`]).
const CONFIG_STATE_NOTICES: [&str; 2] = ["config_unreadable", "config_readable"];

impl NoticeKind {
    fn stored_name(&self) -> Option<&'static str> {
        STORED_NOTICES
            .iter()
            .find(|(k, _)| k == self)
            .map(|(_, name)| *name)
    }

    fn from_stored(name: &str) -> Option<Self> {
        STORED_NOTICES
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(k, _)| k.clone())
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Notification {
    pub kind: NoticeKind,
    pub conversation_id: Option<i64>,
    pub text: String,
    /// Noticed by another process on the database (heard through the
    /// notices it kept): told and rung here too, but `notify_command` is
    /// run once, by the process that noticed it.
    pub elsewhere: bool,
}

impl Notification {
    /// A notice kept in the database, as heard from there (`elsewhere`);
    /// None for a kind this build does not know.
    fn kept(n: crate::store::StoredNotice) -> Option<Self> {
        Some(Self {
            kind: NoticeKind::from_stored(&n.kind)?,
            conversation_id: n.conversation_id,
            text: n.text,
            elsewhere: true,
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DispatchState {
    Starting,
    Dispatching,
    /// Another process holds the lease.
    Standby {
        pid: i64,
    },
    /// The outbox is switched off in the config: items are kept, not sent.
    Disabled,
    /// The database could not be used (locked, read-only, full).
    Error(String),
}

pub use crate::store::UNSEEN_PAUSE_MS;

/// The end of the owner id of an engine that sends one conversation's
/// messages only (`tock ask`): another process that stands by knows it
/// waits for that one to end, not for a tock that sends everything.
pub const ONE_CONVERSATION_OWNER: &str = "-one";

/// Timing knobs; tests shorten them.
#[derive(Clone, Debug)]
pub struct Options {
    /// The longest the scheduler sleeps before re-reading the wall clock.
    pub clock_check: Duration,
    /// How long a dispatcher's lease lasts without renewal.
    pub lease_ttl: Duration,
    /// How often streamed text is written to the database (the first text at
    /// once). Each save is a write transaction and wakes the database
    /// watchers of every tock process; a crash loses at most this much of a
    /// reply that is generated again anyway.
    pub persist_every: Duration,
    /// Watch the database file for other processes' changes.
    pub watch_db: bool,
    /// The time zone recurring rules follow (tests pin one).
    pub zone: crate::recur::Zone,
    /// The first wait before an MCP server that stopped is started again
    /// (doubling with each stop in a row).
    pub mcp_restart_backoff: Duration,
    /// How often the text of a reply a front end shows is handed to it:
    /// ten times a second by default. A front end that spreads each
    /// hand-over over its own frames (the TUI) asks for fewer: each is a
    /// wake-up of the engine and of the front end.
    pub shown_text_every: Duration,
    /// Dispatch only this conversation's items, and run only its approved
    /// tool calls (`tock ask` runs an engine for its one question: the rest
    /// of the outbox, series included, is left to a tock that runs for good).
    pub only_conversation: Option<i64>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            clock_check: Duration::from_secs(30),
            lease_ttl: Duration::from_secs(75),
            persist_every: Duration::from_secs(1),
            watch_db: true,
            zone: crate::recur::Zone::Local,
            mcp_restart_backoff: Duration::from_secs(1),
            shown_text_every: reading::HAND_ON_EVERY,
            only_conversation: None,
        }
    }
}

/// Why a running turn is asked to stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The user pressed Esc: keep the partial reply, marked interrupted.
    User,
    /// The user asked for the reply again while it streamed: keep the
    /// partial reply, marked interrupted, and generate it again at once.
    Regenerate,
    /// The process is shutting down: the turn is resumed by the next start.
    Shutdown,
}

struct Inner {
    store: Store,
    config: Arc<ConfigSource>,
    clock: Arc<dyn Clock>,
    options: Options,
    events: broadcast::Sender<Event>,
    wake: Notify,
    owner: String,
    /// The newest notice in the database this engine has looked at.
    notices_seen: std::sync::atomic::AtomicI64,
    /// Why the config file could not be read when this engine last looked
    /// (None: it could, or it has not looked yet): a problem is told when
    /// it starts or changes, not at every pass.
    config_problem: Mutex<Option<String>>,
    /// Conversations with a turn in flight, and how to stop it.
    busy: Mutex<HashMap<i64, tokio::sync::watch::Sender<Option<StopReason>>>>,
    dispatch: Mutex<DispatchState>,
    shutdown: tokio::sync::watch::Sender<bool>,
    turns: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// Scheduler passes so far (idle tock must not spin: tests and `tock status` read it).
    passes: std::sync::atomic::AtomicU64,
    /// The lease was let go for another tock to send while this one is
    /// stopped (Ctrl+Z): the scheduler holds it no more.
    stepped_aside: std::sync::atomic::AtomicBool,
    /// The instant of the last dispatching pass (0 before the first): what
    /// fell due since then and is held by a waiting approval is told once.
    last_dispatch_pass: std::sync::atomic::AtomicI64,
    /// A second connection for the front ends' reads, opened on first use
    /// (see [`Engine::reader`]).
    reader: std::sync::OnceLock<Option<Store>>,
    mcp: crate::mcp::Manager,
    /// Approved calls running here: approval id → conversation id.
    running_approvals: Mutex<HashMap<i64, i64>>,
    /// MCP calls running here (approved or allowed), and how to stop each.
    running_calls: Mutex<HashMap<u64, running::Running>>,
    next_run: std::sync::atomic::AtomicU64,
    /// What the front ends show, which paces streaming replies' text.
    shown: tokio::sync::watch::Sender<pace::Shown>,
    /// Told each time a reply's text is handed on: work that can wait for
    /// a wake-up the engine makes anyway is done then (`watch`).
    handed_over: Notify,
    /// The database watcher's checks so far: made along with a hand-over,
    /// and made on a timer of their own.
    watch_checks: [std::sync::atomic::AtomicU64; 2],
}

#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

impl Engine {
    pub fn new(
        store: Store,
        config: Arc<ConfigSource>,
        clock: Arc<dyn Clock>,
        options: Options,
    ) -> Self {
        let (events, _) = broadcast::channel(4096);
        let (shutdown, _) = tokio::sync::watch::channel(false);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        // "host:pid-random": the host lets a lease holder on another machine
        // (a database on a shared disk) never be mistaken for a dead local process.
        let owner = format!(
            "{}:{}-{:08x}{}",
            crate::store::hostname(),
            std::process::id(),
            nanos ^ (std::process::id().rotate_left(16)),
            // What other processes say of a lease held by `tock ask`.
            if options.only_conversation.is_some() {
                ONE_CONVERSATION_OWNER
            } else {
                ""
            }
        );
        let mcp = crate::mcp::Manager::new(config.clone(), options.mcp_restart_backoff);
        // Notices from before this engine were heard by the processes then.
        let notices_seen = store.last_notice_id().unwrap_or(0);
        Self {
            inner: Arc::new(Inner {
                store,
                config,
                clock,
                options,
                events,
                wake: Notify::new(),
                owner,
                notices_seen: std::sync::atomic::AtomicI64::new(notices_seen),
                config_problem: Mutex::new(None),
                busy: Mutex::new(HashMap::new()),
                dispatch: Mutex::new(DispatchState::Starting),
                shutdown,
                turns: Mutex::new(Vec::new()),
                passes: std::sync::atomic::AtomicU64::new(0),
                stepped_aside: std::sync::atomic::AtomicBool::new(false),
                last_dispatch_pass: std::sync::atomic::AtomicI64::new(0),
                reader: std::sync::OnceLock::new(),
                mcp,
                running_approvals: Mutex::new(HashMap::new()),
                running_calls: Mutex::new(HashMap::new()),
                next_run: std::sync::atomic::AtomicU64::new(0),
                shown: tokio::sync::watch::channel(pace::Shown::default()).0,
                handed_over: Notify::new(),
                watch_checks: Default::default(),
            }),
        }
    }

    /// Start the scheduler (and the database watcher). Call once, inside a tokio runtime.
    pub fn start(&self) -> tokio::task::JoinHandle<()> {
        if self.inner.options.watch_db {
            watch::spawn(self.clone());
            watch::spawn_config(self.clone());
        }
        if self
            .config()
            .get()
            .mcp
            .values()
            .any(|s| s.enabled && s.startup)
        {
            let e = self.clone();
            tokio::spawn(async move { e.inner.mcp.start_eager().await });
        }
        tokio::spawn(scheduler::run(self.clone()))
    }

    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    /// The connection a front end reads through while it must not wait: a
    /// write on [`Engine::store`] that waits for another process's lock
    /// holds that connection meanwhile, but in WAL mode a read never waits
    /// for a writer, so a screen reloaded from here never stalls. (An
    /// in-memory database has only the one connection.)
    pub fn reader(&self) -> &Store {
        let side = self.inner.reader.get_or_init(|| {
            if self.store().path().as_os_str() == ":memory:" {
                return None;
            }
            // A read can only be kept waiting by WAL recovery: give up after a frame.
            match self
                .store()
                .another_connection(std::time::Duration::from_millis(16))
            {
                Ok(s) => Some(s),
                Err(e) => {
                    tracing::warn!("a second connection for reads: {e:#}");
                    None
                }
            }
        });
        side.as_ref().unwrap_or(self.store())
    }
    pub fn config(&self) -> &Arc<ConfigSource> {
        &self.inner.config
    }
    /// The MCP servers of this engine.
    pub fn mcp(&self) -> &crate::mcp::Manager {
        &self.inner.mcp
    }

    /// Every configured secret this process knows (model keys, MCP values),
    /// longest first so that one holding another is replaced whole: what
    /// is stored is redacted of them.
    pub(crate) fn secrets(&self) -> Vec<String> {
        let mut all = self.config().secrets();
        all.extend(self.mcp().secrets());
        all.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        all.dedup();
        all
    }

    /// The configured MCP servers with their state and tools as last seen,
    /// without starting any (cheap enough for a view to call on open).
    pub fn mcp_servers(&self) -> Vec<crate::mcp::ServerInfo> {
        self.inner.mcp.snapshot()
    }

    /// Start the enabled MCP servers not running yet and list them all
    /// (`tock tools`; a view's refresh). Bounded by each server's timeout.
    pub async fn refresh_mcp_servers(&self) -> Vec<crate::mcp::ServerInfo> {
        let servers = self.inner.mcp.refresh().await;
        self.emit(Event::Tools);
        servers
    }
    pub fn now_ms(&self) -> i64 {
        self.inner.clock.now_ms()
    }
    pub fn owner(&self) -> &str {
        &self.inner.owner
    }
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.inner.events.subscribe()
    }
    /// How often the text of a reply shown is handed on (`Options`).
    pub fn shown_text_every(&self) -> Duration {
        self.inner
            .options
            .shown_text_every
            .max(reading::HAND_ON_EVERY)
    }
    /// The longest a reply being read goes between hand-overs while it
    /// streams: the pace of one shown, or of one no front end shows (as
    /// often as it is saved).
    pub(crate) fn slowest_hand_over(&self) -> Duration {
        self.shown_text_every()
            .max(self.inner.options.persist_every)
    }
    /// The conversation a front end shows now (None: none at all). A reply
    /// streaming in any other has its text handed on, and its socket read,
    /// as seldom as it is saved (once a second) instead of ten times a
    /// second; the reply it shows, at once and then at a reader's pace.
    /// Until a front end says, every reply is taken at a reader's pace.
    pub fn show(&self, conversation: Option<i64>) {
        self.inner.shown.send_if_modified(|shown| {
            let now = pace::Shown::Conversation(conversation);
            std::mem::replace(shown, now) != now
        });
    }
    pub fn dispatch_state(&self) -> DispatchState {
        lock(&self.inner.dispatch).clone()
    }
    /// How many times the scheduler has woken up and looked at the outbox.
    pub fn scheduler_passes(&self) -> u64 {
        self.inner.passes.load(std::sync::atomic::Ordering::Relaxed)
    }
    /// Whether an approved tool call of the conversation runs here now.
    pub fn runs_approved_call_in(&self, conversation_id: i64) -> bool {
        lock(&self.inner.running_approvals)
            .values()
            .any(|c| *c == conversation_id)
    }

    pub fn is_busy(&self, conversation_id: i64) -> bool {
        lock(&self.inner.busy).contains_key(&conversation_id)
    }

    /// The database watcher's checks so far: `(made along with a reply's
    /// hand-over, made on a timer of their own)`.
    pub fn watch_checks(&self) -> (u64, u64) {
        let [along, timer] = &self.inner.watch_checks;
        let get = |c: &std::sync::atomic::AtomicU64| c.load(std::sync::atomic::Ordering::Relaxed);
        (get(along), get(timer))
    }

    pub(crate) fn count_watch_check(&self, along_with_a_hand_over: bool) {
        let i = if along_with_a_hand_over { 0 } else { 1 };
        self.inner.watch_checks[i].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// How many turns are in flight here (a shutdown leaves their replies
    /// to the next start).
    pub fn turns_in_flight(&self) -> usize {
        lock(&self.inner.busy).len()
    }

    /// Replies this process streams now (their server has taken the
    /// request): a turn still waiting for the first byte is none (a stop
    /// puts its message back in the queue, unsent), nor one running tools.
    pub fn replies_streaming_here(&self) -> usize {
        let busy: Vec<i64> = lock(&self.inner.busy).keys().copied().collect();
        if busy.is_empty() {
            return 0;
        }
        let streaming = self.store().streaming_replies().unwrap_or_default();
        busy.iter()
            .filter(|c| streaming.iter().any(|s| s.conversation_id == **c))
            .count()
    }

    /// How many tool calls run here now (a quit cuts them off, and the next
    /// start runs an approved one again).
    pub fn calls_in_flight(&self) -> usize {
        lock(&self.inner.running_calls).len()
    }

    /// Whether a reply is being read (a turn is in flight).
    pub(crate) fn is_reading(&self) -> bool {
        !lock(&self.inner.busy).is_empty()
    }

    /// Resolves at the next hand-over of a reply's text.
    pub(crate) fn hand_over(&self) -> tokio::sync::futures::Notified<'_> {
        self.inner.handed_over.notified()
    }

    /// A reply's text was handed on (see `hand_over`).
    pub(crate) fn handed_over(&self) {
        self.inner.handed_over.notify_waiters();
    }

    pub(crate) fn emit(&self, e: Event) {
        // No receivers is fine (CLI, tests).
        let _ = self.inner.events.send(e);
    }

    pub(crate) fn notify(
        &self,
        kind: NoticeKind,
        conversation_id: Option<i64>,
        text: impl Into<String>,
    ) {
        let text = text.into();
        if let Some(name) = kind.stored_name()
            && let Err(e) = self.store().add_notice(
                self.now_ms(),
                name,
                conversation_id,
                &text,
                &self.inner.owner,
            )
        {
            // Heard here all the same; other processes miss it.
            tracing::warn!("keeping a notice for other processes: {e:#}");
        }
        self.tell_here(kind, conversation_id, text);
    }

    /// Log a notice noticed here and hand it to this process's front ends.
    fn tell_here(&self, kind: NoticeKind, conversation_id: Option<i64>, text: String) {
        tracing::info!(?kind, ?conversation_id, "{text}");
        self.emit(Event::Notice(Notification {
            kind,
            conversation_id,
            text,
            elsewhere: false,
        }));
    }

    /// Tell of the config file's state ([`NoticeKind::ConfigUnreadable`],
    /// [`NoticeKind::ConfigReadable`]): kept and told here unless the newest
    /// such notice in the database says it already (a second tock on the
    /// same file noticed first, or this one before a restart); that one was
    /// told where it was noticed, and reaches this process's front ends as
    /// any kept notice does. Returns whether it was told here.
    pub(crate) fn notify_config_state(&self, kind: NoticeKind, text: String) -> bool {
        let Some(name) = kind.stored_name() else {
            self.notify(kind, None, text);
            return true;
        };
        match self.store().add_state_notice(
            self.now_ms(),
            name,
            CONFIG_STATE_NOTICES,
            &text,
            &self.inner.owner,
        ) {
            Ok(Some(_)) => {}
            Ok(None) => {
                tracing::info!(?kind, "told already: {text}");
                return false;
            }
            // Told here all the same; other processes miss it.
            Err(e) => tracing::warn!("keeping a notice for other processes: {e:#}"),
        }
        self.tell_here(kind, None, text);
        true
    }

    /// Wake the scheduler now (something changed).
    pub fn wake(&self) {
        self.inner.wake.notify_one();
    }

    fn changed(&self) {
        self.emit(Event::Outbox);
        self.wake();
    }

    /// As `changed`, when only row `id` changed.
    pub(crate) fn changed_row(&self, id: i64) {
        self.emit(Event::OutboxRows(vec![id]));
        self.wake();
    }

    /// Accept a send: one outbox row, dispatched when due and the conversation is idle.
    pub fn submit(&self, item: NewItem) -> Result<i64> {
        if item.kind != Kind::Regenerate && item.text.trim().is_empty() && item.parts_json.is_none()
        {
            return Err(anyhow!("nothing to send: the message is empty"));
        }
        if let Some(conv) = item.conversation_id
            && self.store().conversation(conv)?.is_none()
        {
            return Err(anyhow!("no conversation {conv}"));
        }
        self.check_not_too_far(item.due_at)?;
        let now = self.now_ms();
        let hold = self.resume_for(&item, now)?;
        let id = self.store().enqueue(&item, now)?;
        self.hold_too(&item, hold, now)?;
        // Scheduled for later, it names an untitled conversation now: it
        // read "Conversation 6" until the message went.
        if item.due_at.is_some()
            && let Some(conv) = item.conversation_id
        {
            self.title_untitled(conv, item.title.as_deref().unwrap_or(&item.text))?;
        }
        self.changed_row(id);
        Ok(id)
    }

    /// Nothing is scheduled more than ten years ahead, from any front end.
    pub(crate) fn check_not_too_far(&self, due_at: Option<i64>) -> Result<()> {
        let (Some(due), Some(now)) = (
            due_at.and_then(chrono::DateTime::from_timestamp_millis),
            chrono::DateTime::from_timestamp_millis(self.now_ms()),
        ) else {
            return Ok(());
        };
        crate::when::check_not_too_far(
            due,
            now,
            chrono::Duration::days(crate::when::MAX_AHEAD_DAYS),
        )?;
        Ok(())
    }

    /// A new message to go now is the user's resume of a queue a stop
    /// paused, from any front end: what was held goes first, then it.
    /// (Resumed before the row is added, which a pause would not hold, so
    /// it cannot go ahead of them.) Scheduled rows leave the pause alone.
    ///
    /// A pause a failure made a moment ago (under [`UNSEEN_PAUSE_MS`]) was
    /// not seen when the message was typed: it is not lifted, and it is
    /// extended to hold the new message too (returns true), so neither it
    /// nor what was queued goes ahead of the failed message.
    fn resume_for(&self, item: &NewItem, now: i64) -> Result<bool> {
        let Some(conv) = item.conversation_id else {
            return Ok(false);
        };
        if item.kind != Kind::Queued || item.due_at.is_some() {
            return Ok(false);
        }
        match self
            .store()
            .conversation(conv)?
            .and_then(|c| c.queue_paused_at)
        {
            Some(paused)
                if now - paused < UNSEEN_PAUSE_MS && self.store().failed_since(conv, paused)? =>
            {
                return Ok(true);
            }
            // A message that failed a moment ago with nothing queued behind
            // it made no pause (there was nothing to hold): this one was
            // typed before the failure could be seen, and waits as one
            // queued behind it would have.
            None if self.store().failed_since(conv, now - UNSEEN_PAUSE_MS)? => {
                return Ok(true);
            }
            _ => {}
        }
        self.resume_queue(conv)?;
        Ok(false)
    }

    /// Accept a send typed in a conversation's composer: the row is enqueued
    /// and the draft cleared in one transaction, so after a crash the text
    /// is either sent or still the draft, never both. `known`: the saved
    /// draft as the sending window knows it (see
    /// [`Store::enqueue_clearing_draft`]: the same draft sent from two
    /// windows at once goes once).
    pub fn submit_clearing_draft(&self, item: NewItem, known: Option<&str>) -> Result<i64> {
        if item.text.trim().is_empty() && item.parts_json.is_none() {
            return Err(anyhow!("nothing to send: the message is empty"));
        }
        let conv = item
            .conversation_id
            .ok_or_else(|| anyhow!("a message needs a conversation"))?;
        if self.store().conversation(conv)?.is_none() {
            return Err(anyhow!("no conversation {conv}"));
        }
        self.check_not_too_far(item.due_at)?;
        let now = self.now_ms();
        let hold = self.resume_for(&item, now)?;
        let id = self.store().enqueue_clearing_draft(&item, known, now)?;
        self.hold_too(&item, hold, now)?;
        self.changed_row(id);
        Ok(id)
    }

    /// Name an untitled conversation after what is scheduled there.
    pub(crate) fn title_untitled(&self, conversation_id: i64, text: &str) -> Result<()> {
        if self.store().title_if_untitled(conversation_id, text)? {
            self.emit(Event::Conversations);
        }
        Ok(())
    }

    /// Extend a fresh pause over a message added at `now`, or pause the
    /// queue for it when the failure made none (see `resume_for`).
    fn hold_too(&self, item: &NewItem, hold: bool, now: i64) -> Result<()> {
        if hold && let Some(conv) = item.conversation_id {
            if self.store().pause_queue(conv, now)? {
                self.emit(Event::Conversations);
            }
            self.store().extend_pause(conv, now)?;
        }
        Ok(())
    }

    /// Send `text` to a conversation now (queued behind a running reply).
    pub fn send_text(&self, conversation_id: i64, text: &str) -> Result<i64> {
        self.submit(NewItem::new(conversation_id, Kind::Queued, text))
    }

    /// Cancel what is queued in the conversation (see
    /// [`Store::cancel_queued`]). Returns how many were canceled.
    pub fn cancel_queued(&self, conversation_id: i64) -> Result<usize> {
        let n = self.store().cancel_queued(conversation_id, self.now_ms())?;
        self.emit(Event::Conversations);
        self.emit(Event::Outbox);
        Ok(n)
    }

    pub fn cancel(&self, id: i64) -> Result<()> {
        self.store().cancel_item(id, self.now_ms())?;
        self.changed_row(id);
        Ok(())
    }
    /// Call off a regeneration that has not started (queued, or waiting to
    /// retry): the reply it put aside comes back. False if none waits.
    pub fn cancel_regeneration(&self, conversation_id: i64) -> Result<bool> {
        let Some(id) = self
            .store()
            .cancel_regeneration(conversation_id, self.now_ms())?
        else {
            return Ok(false);
        };
        self.changed_row(id);
        self.emit(Event::Conversation(conversation_id));
        Ok(true)
    }
    /// Give item `id` a new time. A time a moment past is `now` as read
    /// before this call (`tock reschedule ID now`, F2's `r` then `now`):
    /// at once. One further past was read long ago, or is a mistake.
    pub fn reschedule(&self, id: i64, due_at: i64) -> Result<()> {
        const NOW_READ_BEFORE_MS: i64 = 60_000;
        let now = self.now_ms();
        if due_at < now - NOW_READ_BEFORE_MS {
            return Err(anyhow!("that time is in the past"));
        }
        let due_at = due_at.max(now);
        self.check_not_too_far(Some(due_at))?;
        self.store().reschedule_item(id, due_at, now)?;
        self.changed_row(id);
        Ok(())
    }
    pub fn edit(&self, id: i64, text: &str) -> Result<()> {
        self.store().edit_item(id, text, self.now_ms())?;
        self.changed_row(id);
        Ok(())
    }
    /// Retry a failed or expired item; for an item whose message is in its
    /// conversation and whose reply was cut, stopped or failed, generate
    /// that reply again (refused once the conversation moved on: the reply
    /// would answer a later message).
    pub fn retry(&self, id: i64) -> Result<()> {
        let now = self.now_ms();
        // Retrying, in a back-off every view shows: now, not refused as
        // "queued".
        if self.store().end_back_off(id, now)? {
            self.changed_row(id);
            return Ok(());
        }
        // Sent again after a newer occurrence, it would repeat the same text
        // after it: the series skips an occurrence the next one overtook.
        if let Some(at) = self.store().later_occurrence(id)? {
            return Err(anyhow!(
                "a later occurrence of its recurring message went out since ({}); this one is not sent again",
                crate::when::relative(at, now)
            ));
        }
        match self.store().item(id)? {
            Some(it)
                if it.status == crate::store::Status::Sent
                    || (it.accepted() && it.kind != Kind::Regenerate) =>
            {
                if let Some(c) = it.conversation_id {
                    self.refuse_while_its_reply_streams(id, c, now)?;
                }
                self.store().retry_reply(id, now)?;
                if let Some(c) = it.conversation_id {
                    // Asking for the reply again is the user's resume of a
                    // queue a stop paused.
                    self.resume_queue(c)?;
                    self.emit(Event::Conversation(c));
                }
            }
            Some(it) if matches!(it.kind, Kind::Message | Kind::Queued | Kind::Task) => {
                self.store().retry_item(id, now)?;
                // A message that failed holds what was queued behind it;
                // sending it again is the user's resume (it goes first:
                // its place in the queue is before theirs) — unless another
                // failed message still holds what came after that one.
                if let Some(c) = it.conversation_id
                    && !self.store().other_failed_message(c, id)?
                {
                    self.resume_queue(c)?;
                }
            }
            _ => self.store().retry_item(id, now)?,
        }
        self.changed();
        Ok(())
    }
    /// An item whose reply is stored as streaming is not asked for again:
    /// a live stream would give its message a second reply, and one that a
    /// tock which died left streaming is asked for again by the next start
    /// (which would then make it a second reply too).
    fn refuse_while_its_reply_streams(
        &self,
        id: i64,
        conversation_id: i64,
        now: i64,
    ) -> Result<()> {
        if self.store().streaming_reply_item(conversation_id)? != Some(id) {
            return Ok(());
        }
        let live = self.is_busy(conversation_id) || self.store().live_lease_holder(now)?.is_some();
        Err(if live {
            anyhow!(
                "item {id}'s reply is streaming now; stop it first (Esc, or tock stop {conversation_id}), then retry it"
            )
        } else {
            anyhow!(
                "item {id}'s reply was cut when the tock streaming it stopped; the next tock asks for it again"
            )
        })
    }
    pub fn send_now(&self, id: i64) -> Result<()> {
        self.store().send_now(id, self.now_ms())?;
        self.changed_row(id);
        Ok(())
    }

    /// Generate the last reply again (after an interruption or a stop, or to
    /// get another answer). Resumes a queue paused by a stop.
    pub fn regenerate(&self, conversation_id: i64) -> Result<i64> {
        // Streaming here: the turn stops and queues its reply again itself
        // (its row is the one that goes, first in the queue).
        if let Some(row) = self.store().streaming_reply_item(conversation_id)? {
            if self.signal_stop(conversation_id, StopReason::Regenerate) {
                return Ok(row);
            }
            return Err(anyhow!(
                "a reply is streaming from another tock on this database; stop it first (Esc, or tock stop), then ask again"
            ));
        }
        if self.is_busy(conversation_id) {
            return Err(anyhow!(
                "a message is on its way and its reply has not started; stop it first (Esc)"
            ));
        }
        if self.store().owes_reply(conversation_id)? {
            return Err(anyhow!("a reply is already on its way"));
        }
        let msgs = self.store().messages(conversation_id)?;
        if !msgs.iter().any(|m| m.role == crate::store::Role::User) {
            return Err(anyhow!("nothing to regenerate yet"));
        }
        // A reply that was cut (or given up on) belongs to its item: retry
        // that item, so it does not stay failed in the lists.
        if let Some(last) = msgs.iter().rev().find(|m| {
            m.role != crate::store::Role::Notice
                && m.status != crate::store::MessageStatus::Superseded
        }) && last.role == crate::store::Role::Assistant
            && matches!(
                last.status,
                crate::store::MessageStatus::Interrupted | crate::store::MessageStatus::Error
            )
            && let Some(row) = last.outbox_id
            && self.store().retry_reply(row, self.now_ms()).is_ok()
        {
            self.resume_queue(conversation_id)?;
            self.changed();
            self.emit(Event::Conversation(conversation_id));
            return Ok(row);
        }
        let id = self.store().supersede_last_reply_and_enqueue(
            conversation_id,
            &Self::regeneration(conversation_id),
            self.now_ms(),
        )?;
        self.resume_queue(conversation_id)?;
        self.changed();
        self.emit(Event::Conversation(conversation_id));
        Ok(id)
    }

    /// Stop the reply streaming in a conversation and pause its queue, so
    /// nothing queued behind it goes out into the context the user just
    /// aborted. Returns false if no reply was running.
    pub fn stop(&self, conversation_id: i64) -> bool {
        let running = self.interrupt(conversation_id);
        if running {
            self.pause_after_stop(conversation_id);
        }
        running
    }

    /// Stop a reply another process on this database streams (a daemon, a
    /// second TUI): noted on its conversation for that process, which stops
    /// it as its own Esc would, and the queue paused here at once. False if
    /// no reply streams there.
    pub fn stop_elsewhere(&self, conversation_id: i64) -> Result<bool> {
        // A reply streams, or its tool calls run; not both.
        if !self.store().request_stop(conversation_id)?
            && !self.store().request_tool_stop(conversation_id)?
        {
            return Ok(false);
        }
        self.pause_after_stop(conversation_id);
        Ok(true)
    }

    /// Tell this process's front ends what other processes on the database
    /// noticed since the last look (a daemon sent a scheduled message, a
    /// reply finished there): called when another process committed.
    pub(crate) fn take_notices(&self) {
        let seen = self
            .inner
            .notices_seen
            .load(std::sync::atomic::Ordering::Relaxed);
        match self.store().notices_after(seen, &self.inner.owner) {
            Ok((notices, last)) => {
                self.inner
                    .notices_seen
                    .store(last, std::sync::atomic::Ordering::Relaxed);
                for n in notices.into_iter().filter_map(Notification::kept) {
                    self.emit(Event::Notice(n));
                }
            }
            Err(e) => tracing::warn!("reading other processes' notices: {e:#}"),
        }
    }

    /// The notices kept in the database, newest last, for a front end's
    /// history: (when, notice).
    pub fn recent_notices(&self, limit: usize) -> Vec<(i64, Notification)> {
        match self.store().recent_notices(limit) {
            Ok(rows) => rows
                .into_iter()
                .filter_map(|n| Some((n.at, Notification::kept(n)?)))
                .collect(),
            Err(e) => {
                tracing::warn!("reading the kept notices: {e:#}");
                Vec::new()
            }
        }
    }

    /// Stop the replies this process streams that another process asked to
    /// stop ([`Engine::stop_elsewhere`]); run when another process wrote.
    pub(crate) fn take_stop_requests(&self) {
        let busy: Vec<i64> = lock(&self.inner.busy).keys().copied().collect();
        for conv in busy {
            match self.store().take_stop_request(conv) {
                Ok(true) => {
                    tracing::info!(conversation = conv, "reply stopped from another process");
                    self.signal_stop(conv, StopReason::User);
                }
                Ok(false) => {}
                Err(e) => tracing::warn!("reading stop requests: {e:#}"),
            }
        }
        // Only while calls run here: it writes when it finds a request.
        if lock(&self.inner.running_calls).is_empty() {
            return;
        }
        match self.store().take_tool_stop_requests(self.owner()) {
            Ok(convs) => {
                for conv in convs {
                    tracing::info!(
                        conversation = conv,
                        "tool call stopped from another process"
                    );
                    self.stop_tool_calls(conv);
                }
            }
            Err(e) => tracing::warn!("reading tool-call stop requests: {e:#}"),
        }
    }

    /// The first half of [`Engine::stop`]: tell the reply streaming in the
    /// conversation to stop (no database work). False if none is streaming.
    /// A turn that sees the stop pauses the queue itself before it ends;
    /// the second half covers a turn already past its reading (finishing,
    /// or running its tool calls) when the stop came.
    /// A tool call running here in the conversation is stopped too.
    pub fn interrupt(&self, conversation_id: i64) -> bool {
        let reply = self.signal_stop(conversation_id, StopReason::User);
        let calls = self.stop_tool_calls(conversation_id);
        reply || calls
    }

    /// Tell the turn running in the conversation to stop, and why. False if
    /// none runs in this process.
    fn signal_stop(&self, conversation_id: i64, why: StopReason) -> bool {
        match lock(&self.inner.busy).get(&conversation_id) {
            Some(tx) => {
                let _ = tx.send(Some(why));
                true
            }
            None => false,
        }
    }

    /// The second half of [`Engine::stop`]: pause the conversation's queue,
    /// so nothing queued goes out into the context the user aborted.
    /// Nothing queued (to go at once) means nothing to hold: no pause, so
    /// no "paused" state with nothing in it (what is added later, or has a
    /// time of its own, is not held anyway).
    pub fn pause_after_stop(&self, conversation_id: i64) {
        match self.store().pause_queue(conversation_id, self.now_ms()) {
            // Already paused (a stop whose row then fails, a front end's
            // own pause after the turn's): nothing changed to announce.
            Ok(true) => {
                self.emit(Event::Conversations);
                self.emit(Event::Outbox);
            }
            Ok(false) => {}
            Err(e) => tracing::warn!("pausing the queue after a stop: {e:#}"),
        }
    }

    /// Answer a tool call waiting for approval.
    pub fn answer_approval(&self, approval_id: i64, approve: bool) -> Result<()> {
        let answer = if approve {
            tools::Answer::Approve { always: false }
        } else {
            tools::Answer::Deny { reason: None }
        };
        self.answer_approval_with(approval_id, &answer).map(|_| ())
    }

    /// Answer a tool call waiting for approval: approve (and with `always`
    /// save an `allow` rule for its tool), or deny with a reason the model
    /// reads. Of two answers to one approval (also from two processes) only
    /// the first has an effect; the other fails with "approval N was already
    /// answered". Returns the approval as it was asked.
    pub fn answer_approval_with(
        &self,
        approval_id: i64,
        answer: &tools::Answer,
    ) -> Result<crate::store::Approval> {
        let a = tools::answer(self, approval_id, answer)?;
        self.changed();
        Ok(a)
    }

    /// The approval policy now: the config's rules and the saved ones.
    pub fn approval_policy(&self) -> policy::Policy {
        let saved = match self.store().setting(policy::SAVED_RULES_KEY) {
            Ok(v) => policy::parse_saved(v.as_deref()),
            Err(e) => {
                tracing::warn!("reading the saved approval rules: {e:#}");
                Vec::new()
            }
        };
        policy::Policy::new(&self.config().get(), saved)
    }

    /// Stop at once without any cleanup, as a killed process would (lease kept
    /// until it expires, rows left as they are). For crash tests.
    pub fn halt(&self) {
        let _ = self.inner.shutdown.send(true);
        for h in lock(&self.inner.turns).drain(..) {
            h.abort();
        }
    }

    /// About to be stopped (Ctrl+Z): let the lease go, so a tock standing
    /// by sends meanwhile (it waited for the lease to run out, over a
    /// minute). Not while a reply or a tool call runs here: another would
    /// take that as cut, and send it again. True if let go; the next pass
    /// after the stop takes it back, or stands by.
    pub fn step_aside(&self) -> bool {
        if self.turns_in_flight() > 0 || self.calls_in_flight() > 0 {
            return false;
        }
        match self.store().release_lease(&self.inner.owner) {
            Ok(()) => {
                self.inner
                    .stepped_aside
                    .store(true, std::sync::atomic::Ordering::SeqCst);
                true
            }
            Err(e) => {
                tracing::warn!("letting the lease go: {e:#}");
                false
            }
        }
    }

    /// Whether the lease was let go by [`Engine::step_aside`] since the
    /// last look (the scheduler's, which then holds it no more).
    pub(crate) fn take_stepped_aside(&self) -> bool {
        self.inner
            .stepped_aside
            .swap(false, std::sync::atomic::Ordering::SeqCst)
    }

    /// Stop dispatching: in-flight turns are abandoned safely (resumed by the
    /// next start), the lease is released. Returns within about `limit`.
    pub async fn shutdown(&self, limit: Duration) {
        let _ = self.inner.shutdown.send(true);
        for tx in lock(&self.inner.busy).values() {
            let _ = tx.send(Some(StopReason::Shutdown));
        }
        let handles: Vec<_> = std::mem::take(&mut *lock(&self.inner.turns));
        let aborts: Vec<_> = handles.iter().map(|h| h.abort_handle()).collect();
        let _ = tokio::time::timeout(limit, futures::future::join_all(handles)).await;
        // A turn still running (an MCP call in flight) is left as a crash
        // would leave it, rather than given the error of a server stopped
        // under it: the next start answers or runs its calls.
        for a in aborts {
            a.abort();
        }
        if let Err(e) = self.store().release_lease(&self.inner.owner) {
            tracing::warn!("releasing the lease: {e:#}");
        }
        self.inner.mcp.shutdown(limit).await;
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The runtime the engine runs on (the TUI's, `tock daemon`'s, `tock
/// ask`'s): one worker. A second bought no throughput (the engine waits on
/// the network and SQLite) but cost a wake-up of the idle worker for much
/// of what the busy one was woken for: 11,600 context switches for a reply
/// at 100 tokens/s instead of 6,600.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
}

/// Exponential back-off for attempt `n` (1-based), capped at 10 minutes.
pub fn backoff(base: Duration, attempt: i64) -> Duration {
    let exp = (attempt.max(1) - 1).min(16) as u32;
    base.saturating_mul(2u32.saturating_pow(exp))
        .min(Duration::from_secs(600))
}
