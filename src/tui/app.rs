//! The coordinator: the app's state, and where input and events arrive.
//! Keys are routed in `main_keys.rs` (the view on top of the stack, then the
//! focused pane, then the main screen's bindings); engine events are taken
//! in by `engine_events.rs`; the intents views return are applied through
//! the engine in `intents.rs`. Here: opening conversations, keeping the view
//! stack in step with the model, the mouse and pastes, the ticks that keep
//! times on screen right, and the exit line. Drawing (view.rs) reads the
//! app and returns the layout it used.

use std::sync::Arc;

use ratatui::crossterm::event::{Event as TermEvent, KeyEventKind, MouseEventKind};

use super::chat::Scroll;
use super::composer::{self, Composer};
use super::keymap::Keymap;
use super::model::{Model, local};
use super::theme::ThemeChoice;
use super::views::{self, Cx, Outcome, View, ViewKind};
use crate::engine::Engine;
use crate::when::{self};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    Composer,
    Strip,
    Sidebar,
}

/// Bytes the terminal module writes between frames (bell, OSC 9/777/52, title, mouse mode).
#[derive(Default)]
pub struct Output {
    pub raw: Vec<String>,
    pub title: Option<String>,
    /// Turn mouse capture on or off.
    pub mouse: Option<bool>,
}

/// A status-bar line, until it expires, you leave the conversation it was
/// said in, or what it describes has changed.
pub struct Status {
    pub text: String,
    pub error: bool,
    pub until: i64,
    /// An approval waiting in this conversation: answered (here, from the
    /// CLI or by another process), the line is stale.
    pub approval_in: Option<i64>,
    /// A message queued behind the reply in this conversation: once its
    /// queue is paused (a stop, here or from another tock), the line is stale.
    pub queued_in: Option<i64>,
    /// About the reply streaming in this conversation ("wait for the reply
    /// to finish"): once none streams there, the line is stale.
    pub while_busy_in: Option<i64>,
    /// "approved: running it": once the call has run, the line is stale.
    pub tool_running_in: Option<i64>,
    /// "regenerating the last reply": once the new reply is in (or the
    /// regeneration failed or was called off), the line is stale.
    pub regenerating_in: Option<i64>,
    /// The series the line names ("repeating: every day at 09:00 — next
    /// …"), as it was then: once its rule, end, next time or state differ
    /// (changed in F2, by another tock, or an occurrence sent), the line is
    /// stale.
    pub series_shown: Option<crate::store::Series>,
    /// A key pressed from this time on makes the line stale: at once for a
    /// line about the key just pressed, after [`NOTICE_READ_MS`] for a
    /// notice (keys typed as it came leave it to be read).
    pub key_ends_it_from: Option<i64>,
    /// "the queue is paused (Enter in the strip or /resume)" in this
    /// conversation, and whether the pause has been seen since (it is
    /// written just after the line): once it is resumed (here, from the CLI
    /// or another tock), the line is stale.
    pub paused_in: Option<(i64, bool)>,
    /// "queue resumed" in this conversation, and whether it has been seen
    /// open since: once it is paused again (a stop here, `tock stop`, or
    /// another tock), the line is stale.
    pub resumed_in: Option<(i64, bool)>,
    /// "reply … interrupted; generating it again at …" in this
    /// conversation, and whether its reply has been seen waiting to be
    /// asked again since: once it is not (asked again, or given up), the
    /// line is stale.
    pub retrying_in: Option<(i64, bool)>,
    /// "… failed — F2 to retry" about this conversation: once nothing there
    /// is failed any more (retried here, from the CLI or another tock), the
    /// line is stale.
    pub failed_in: Option<i64>,
    /// Why the slash command sent (`/every`, `/model`, …) did nothing; it
    /// stays in the composer to be fixed. Once the composer holds another
    /// command or text (cleared, typed over), or a command is sent again,
    /// the line is stale.
    pub about_command: Option<String>,
}

impl Status {
    fn new(text: String, error: bool, until: i64) -> Self {
        Self {
            text,
            error,
            until,
            approval_in: None,
            queued_in: None,
            while_busy_in: None,
            tool_running_in: None,
            regenerating_in: None,
            series_shown: None,
            key_ends_it_from: None,
            paused_in: None,
            resumed_in: None,
            retrying_in: None,
            failed_in: None,
            about_command: None,
        }
    }
}

/// What the last frame laid out, for clicks and paging.
#[derive(Clone, Debug, Default)]
pub struct FrameLayout {
    /// Sidebar rows: (y, conversation id).
    pub sidebar_rows: Vec<(u16, i64)>,
    /// Pending-strip rows: (y, item id), and the strip's left edge.
    pub strip_rows: Vec<(u16, i64)>,
    pub strip_x: u16,
    /// The strip item drawn selected (marked `›`, nothing covering it).
    pub strip_marked: Option<i64>,
    pub sidebar_visible: bool,
    pub chat: ratatui::layout::Rect,
    /// The scroll offset the chat could honour (clamped at the top).
    pub scroll_used: usize,
}

/// How long a notice stays whatever keys come (typed as it came, they
/// were not about it); after this, a key ends it (F3 keeps it).
pub(super) const NOTICE_READ_MS: i64 = 2_000;

/// How long Ctrl+C stays armed for quitting.
pub(super) const QUIT_WINDOW_MS: i64 = 2_000;

pub struct App {
    pub model: Model,
    pub keys: Keymap,
    pub composer: Composer,
    pub strip: views::strip::Strip,
    pub sidebar: views::sidebar::Sidebar,
    pub views: Vec<Box<dyn View>>,
    pub focus: Focus,
    pub scroll: Scroll,
    /// Where a scrolled-up view is held while text arrives below it.
    pub(super) scroll_anchor: Option<super::scroll_hold::ScrollAnchor>,
    /// The user's choice for the sidebar; None = shown when the window is wide enough.
    pub sidebar_pref: Option<bool>,
    pub status: Option<Status>,
    pub notices: Vec<super::views::notices::Entry>,
    /// The frame just drawn is to be drawn again ([`App::take_draw_again`]).
    draw_again: bool,
    pub quit: bool,
    /// Replies still streaming when the TUI quit: left to the next start,
    /// which asks for them again (set just before the engine stops).
    pub replies_cut_at_exit: usize,
    /// Tool calls running here at exit (the next tock runs them again).
    pub calls_cut_at_exit: usize,
    /// Ctrl+C cleared the composer and no other key came since: a quit
    /// now (Ctrl+C, Ctrl+C, Ctrl+C, the reflex) keeps what it cleared.
    pub cleared_on_the_way_out: bool,
    /// A message stopped here before the model took it (Esc, Ctrl+C while
    /// it was still "sending…"): once the engine holds it, it comes back
    /// into the composer, if that is empty, as the other clients give a
    /// stopped prompt back.
    pub(super) take_back_after_stop: Option<i64>,
    /// The terminal window (or tmux pane) has the user's focus, as far as
    /// the terminal says (it says nothing unless it reports focus).
    pub window_focused: bool,
    /// Ctrl+C pressed once on an empty composer, at this time.
    pub quit_armed: Option<i64>,
    /// When the user last pressed a key or clicked: the pending strip and
    /// the conversation list give the keys back to the composer after
    /// [`PANE_IDLE_MS`] without one (their letters are commands, and words
    /// typed later, meant for the composer, fired them).
    pub last_input_at: i64,
    /// The strip's or the list's letter that opened the view on top (a
    /// question, a prompt): the letter, when, and how many views were open
    /// before it (see `typed_on_after_a_pane_letter`).
    pub(super) pane_letter: Option<(char, i64, usize)>,
    /// The strip's or the list's letter that acts at once (`s` sends, `u`
    /// takes back, `n` opens a new conversation), held for [`TYPED_ON_MS`]:
    /// another letter in that time is a word typed where the composer was
    /// meant, and the action is dropped (see `hold_a_pane_letter`).
    pub(super) held_pane_letter: Option<HeldLetter>,
    /// The command chosen with ↑/↓ in the list of slash commands (its
    /// name); the first listed when it is not listed.
    pub menu_pick: Option<&'static str>,
    /// The composer line the list of slash commands was closed on (Esc):
    /// it shows again once the line changes.
    pub menu_closed_on: Option<String>,
    /// The reply streaming in another process that Esc or Ctrl+C asked to
    /// stop (its message id): asked once; the next Ctrl+C goes on to quit.
    pub stop_asked: Option<i64>,
    pub suspend: bool,
    /// Ctrl+L: the next frame clears the terminal and draws every cell.
    pub redraw: bool,
    /// Ctrl+G: the loop hands the terminal to `$VISUAL` / `$EDITOR` on the draft.
    pub editor_request: bool,
    pub output: Output,
    pub layout: FrameLayout,
    pub in_tmux: bool,
    pub mouse: bool,
    /// Shift+Enter has been seen, so the terminal reports it and help may say so.
    pub enhanced_keys: bool,
    /// Model for the message being sent by `/with`.
    pub(super) model_override: Option<String>,
    /// A `/model` or `/with` waiting for a server's model list to name its
    /// model (`App::wait_for_model_lists`).
    pub(super) model_wait: Option<super::sending::ModelWait>,
    /// Drafts on their way to the database.
    pub drafts: super::writes::PendingDrafts,
    /// The widest the conversation is laid out (`[ui] max_width`).
    pub max_width: u16,
    /// Since when a write has been waiting (the status line says so after a moment).
    pub(super) writes_waiting_since: Option<i64>,
    /// Sends handed to the writer and not done: (conversation, what was
    /// sent, whether it is spooled to a file too, see `tui::unsent`).
    pub(super) sends_in_flight: std::collections::HashMap<u64, (i64, crate::store::Draft, bool)>,
    /// The palette drawn with (`[ui] theme`, `/theme`, the terminal's answer).
    pub theme: ThemeChoice,
    /// The configuration the `[ui]` settings and keys were last taken from
    /// (a reload replaces it).
    ui_config: Arc<crate::config::Config>,
    /// Streamed text handed over and not on screen yet.
    pub reveal: super::reveal::Reveal,
    /// Why `notify_command` could not be run, as last said (once).
    pub(super) notify_failure: Option<String>,
}

impl App {
    pub fn new(engine: Engine) -> anyhow::Result<Self> {
        let cfg = engine.config().get();
        let (keys, key_errors) = Keymap::with_overrides(&cfg.keys);
        let (theme, theme_error) = ThemeChoice::from_config(&cfg.ui);
        let mut app = Self {
            model: Model::new(engine),
            keys,
            composer: Composer::default(),
            strip: Default::default(),
            sidebar: Default::default(),
            views: Vec::new(),
            focus: Focus::Composer,
            scroll: Scroll::default(),
            scroll_anchor: None,
            sidebar_pref: None,
            status: None,
            notices: Vec::new(),
            draw_again: false,
            quit: false,
            replies_cut_at_exit: 0,
            calls_cut_at_exit: 0,
            cleared_on_the_way_out: false,
            take_back_after_stop: None,
            window_focused: true,
            quit_armed: None,
            last_input_at: i64::MIN,
            pane_letter: None,
            held_pane_letter: None,
            menu_pick: None,
            menu_closed_on: None,
            stop_asked: None,
            suspend: false,
            redraw: false,
            editor_request: false,
            output: Output::default(),
            layout: FrameLayout::default(),
            in_tmux: std::env::var_os("TMUX").is_some(),
            mouse: cfg.ui.mouse,
            enhanced_keys: false,
            model_override: None,
            model_wait: None,
            drafts: Default::default(),
            writes_waiting_since: None,
            sends_in_flight: Default::default(),
            max_width: cfg.ui.max_width,
            theme,
            ui_config: cfg.clone(),
            reveal: Default::default(),
            notify_failure: None,
        };
        let mut errors: Vec<String> = theme_error.into_iter().collect();
        errors.extend(app.apply_theme());
        errors.extend(key_errors);
        if let Some(line) = settings_problems(&errors) {
            app.error(line);
        }
        app.load_notice_history();
        app.restore_unsent();
        app.model.reload_convs();
        let store = app.model.engine.store();
        let last = store
            .setting("ui.current")?
            .and_then(|s| s.parse::<i64>().ok());
        let open = last
            .filter(|id| app.model.convs.iter().any(|c| c.id == *id))
            .or(app.model.convs.first().map(|c| c.id));
        let id = match open {
            Some(id) => id,
            None => {
                let id = first_conversation(&app.model.engine)?;
                app.model.reload_convs();
                id
            }
        };
        app.model.reload_summaries();
        app.open(id);
        Ok(app)
    }

    pub fn engine(&self) -> &Engine {
        &self.model.engine
    }

    pub(super) fn now(&self) -> i64 {
        self.model.now_ms()
    }

    /// A line for its ten seconds (or until what it describes changes, see
    /// [`Status`]): what happened without a key (a notice, another tock's
    /// draft), or what to type next (`/model`'s list, Tab's choices). What
    /// a key or command did is said with [`Self::info_until_key`].
    pub fn info(&mut self, s: impl Into<String>) {
        self.status = Some(Status::new(s.into(), false, self.now() + 10_000));
    }

    /// A line about the key just pressed, what it did ("exported to …",
    /// "renamed"): the next key (or paste) ends it, and leaving the
    /// conversation does.
    pub(super) fn info_until_key(&mut self, s: impl Into<String>) {
        self.info(s);
        self.status_ends_with_next_key();
    }

    /// Why the key just pressed did nothing: the next key (or paste) ends it.
    pub(super) fn error_until_key(&mut self, s: impl std::fmt::Display) {
        self.error(s);
        self.status_ends_with_next_key();
    }

    /// The line now shown is about the key just pressed: the next key ends it.
    pub(super) fn status_ends_with_next_key(&mut self) {
        if let Some(st) = self.status.as_mut() {
            st.key_ends_it_from = Some(i64::MIN);
        }
    }

    /// A key or a paste came: a line about the key before it is stale.
    pub(super) fn drop_status_about_the_last_key(&mut self) {
        let now = self.now();
        if self
            .status
            .as_ref()
            .is_some_and(|s| s.key_ends_it_from.is_some_and(|from| now >= from))
        {
            self.status = None;
        }
    }

    /// Why the command `line` (still in the composer, to be fixed) did
    /// nothing: the line stays while the composer holds that command and
    /// goes once it holds something else or a command is sent again.
    pub(super) fn command_error(&mut self, line: &str, e: impl std::fmt::Display) {
        self.error(e);
        if let Some(st) = self.status.as_mut() {
            st.about_command = command_word(line);
        }
    }

    /// After a key or a paste: an error about a command the composer no
    /// longer holds (cleared, or typed over with something else) is stale.
    pub(super) fn drop_status_about_a_command_gone(&mut self) {
        let Some(cmd) = self.status.as_ref().and_then(|s| s.about_command.as_ref()) else {
            return;
        };
        if command_word(&self.composer.text()).as_ref() != Some(cmd) {
            self.status = None;
        }
    }

    /// A command was sent: what the status line said about the one before
    /// is stale (the new one says its own).
    pub(super) fn drop_status_about_a_command(&mut self) {
        if self
            .status
            .as_ref()
            .is_some_and(|s| s.about_command.is_some())
        {
            self.status = None;
        }
    }

    /// Draw with the palette `self.theme` chooses; returns one line per bad
    /// `[ui.colors]` entry.
    pub fn apply_theme(&mut self) -> Vec<String> {
        let (palette, errors) = self.theme.palette();
        super::theme::set_palette(palette);
        errors
    }

    /// After a config reload: take `[ui] theme` and `[ui.colors]` again.
    /// A configuration read again: its `[ui]` settings and keys take
    /// effect, where they changed (the mouse as the file now says, over a
    /// toggle by key).
    /// Takes the settings of a config file read again (keys, theme,
    /// mouse, width). Returns the line that says what of them could not be
    /// taken (shown in the status bar already), if anything.
    pub(super) fn apply_config_if_changed(&mut self) -> Option<String> {
        let cfg = self.model.engine.config().get();
        if Arc::ptr_eq(&cfg, &self.ui_config) {
            return None;
        }
        let old = std::mem::replace(&mut self.ui_config, cfg.clone());
        let mut errors = Vec::new();
        if cfg.ui.max_width != old.ui.max_width {
            self.max_width = cfg.ui.max_width;
        }
        if cfg.ui.mouse != old.ui.mouse && cfg.ui.mouse != self.mouse {
            self.mouse = cfg.ui.mouse;
            self.output.mouse = Some(self.mouse);
        }
        // What the file gets wrong is said at every reload while it is
        // there, not only when it changed (a save that fixed something
        // else said "reloaded" alone).
        let (keys, key_errors) = Keymap::with_overrides(&cfg.keys);
        if cfg.keys != old.keys {
            self.keys = keys;
        }
        errors.extend(key_errors);
        let (mut theme, error) = ThemeChoice::from_config(&cfg.ui);
        theme.session = self.theme.session;
        theme.detected = self.theme.detected;
        errors.extend(error);
        if theme != self.theme {
            self.theme = theme;
            errors.extend(self.apply_theme());
        } else {
            errors.extend(self.theme.palette().1);
        }
        let line = settings_problems(&errors)?;
        self.error(&line);
        Some(line)
    }

    pub fn error(&mut self, s: impl std::fmt::Display) {
        let line = crate::sanitize::sanitize_line(&s.to_string()).into_owned();
        self.status = Some(Status::new(line, true, self.now() + 20_000));
    }

    /// The view on top of the stack, if it is of this kind.
    pub fn top(&self) -> Option<ViewKind> {
        self.views.last().map(|v| v.kind())
    }

    /// The popup that has the keys, if one is open (the approval card is not a popup).
    pub fn popup(&self) -> Option<ViewKind> {
        self.views
            .iter()
            .rev()
            .find(|v| v.is_modal())
            .map(|v| v.kind())
    }

    /// The status line and whether it is an error.
    pub fn status_pair(&self) -> (String, bool) {
        self.status
            .as_ref()
            .map(|s| (s.text.clone(), s.error))
            .unwrap_or_default()
    }

    pub fn composer_text(&self) -> String {
        self.composer.text()
    }

    pub fn set_composer(&mut self, text: &str) {
        let now = self.now();
        self.composer.set_text(text, now);
    }

    /// Text that could not be used where it was typed: into the composer,
    /// after what it holds, so nothing typed is lost.
    pub(super) fn keep_in_composer(&mut self, text: &str) {
        let text = if self.composer.is_empty() {
            text.to_string()
        } else {
            format!("{}\n{text}", self.composer.text())
        };
        self.set_composer(&text);
        self.focus = Focus::Composer;
    }

    /// Whether the sidebar is drawn in a window `width` columns wide.
    pub fn sidebar_shown(&self, width: u16) -> bool {
        width >= 60 && self.sidebar_pref.unwrap_or(width >= 100)
    }

    // ----- conversations -----------------------------------------------------

    /// Show conversation `id`: the draft of the one we leave is saved first.
    pub fn open(&mut self, id: i64) {
        if self.model.current != Some(id) {
            self.save_draft();
            // What the status line said was about where you were (the
            // notices list keeps the engine's notices); at start-up, what
            // it says is about the start.
            if self.model.current.is_some() {
                self.status = None;
            }
        }
        self.model.open(id);
        self.scroll = Scroll::default();
        self.strip = Default::default();
        let draft = self.draft_of(id);
        self.composer.load(&draft, self.model.sent_texts());
        self.sidebar.selected = Some(id);
        // Which conversation the next start opens: not worth a word if it fails.
        self.write_quietly(move |e| {
            let _ = e.store().set_setting("ui.current", &id.to_string());
        });
        if self.focus == Focus::Strip {
            self.focus = Focus::Composer;
        }
        self.sync_views();
        self.update_title();
    }

    pub(super) fn open_other_or_new(&mut self) {
        match self.model.convs.first().map(|c| c.id) {
            Some(next) => self.open(next),
            None => self.new_conversation(None),
        }
    }

    /// Save the draft if it has waited long enough since the last keystroke.
    pub fn save_draft_if_due(&mut self) {
        if self
            .composer
            .unsaved_since
            .is_some_and(|t| self.now() - t >= composer::SAVE_AFTER_MS)
        {
            self.save_draft();
        }
    }

    pub fn update_title(&mut self) {
        if !self.engine().config().get().notify.title {
            return;
        }
        let scheduled = self.model.state_counts().scheduled;
        let conv = self
            .model
            .current_conv()
            .map(|c| c.display_title())
            .unwrap_or_default();
        let badge = if scheduled > 0 {
            format!(" ⏰{scheduled}")
        } else {
            String::new()
        };
        self.output.title = Some(format!("tock — {conv}{badge}"));
    }

    /// The approval card is on the stack exactly while the current
    /// conversation has a tool call waiting; views that list rows refresh.
    pub(super) fn sync_views(&mut self) {
        let waiting = self.model.waiting_approval().cloned();
        let card_at = self
            .views
            .iter()
            .position(|v| v.kind() == ViewKind::Approval);
        match (waiting, card_at) {
            (Some(a), None) => {
                // Under any popup that is open, so the popup keeps its keys.
                self.views
                    .insert(0, Box::new(views::approval::ApprovalCard::new(a)));
                self.focus = Focus::Composer;
            }
            (None, Some(i)) => {
                self.views.remove(i);
            }
            (Some(a), Some(i)) => {
                // Another approval took the place of the one shown: a fresh card, nothing chosen.
                let same = self.views[i].kind() == ViewKind::Approval
                    && self.model.approvals.iter().any(|x| x.id == a.id);
                if !same {
                    self.views[i] = Box::new(views::approval::ApprovalCard::new(a));
                }
            }
            (None, None) => {}
        }
        for v in self.views.iter_mut() {
            v.refresh(&self.model);
        }
        self.strip.sync(&self.model);
        if self.focus == Focus::Strip
            && self.model.strip_items().next().is_none()
            && !self.model.paused()
        {
            self.focus = Focus::Composer;
        }
        if let Some(e) = self.model.load_error.take() {
            self.error(e);
        }
    }

    // ----- input -------------------------------------------------------------

    /// Act on terminal input. False for input it ignores, which changes
    /// nothing on screen and so costs no frame: the mouse moving over the
    /// window (reported while the mouse is captured), a button let go, a
    /// key released. (A resize is the event loop's.)
    pub fn on_terminal(&mut self, ev: TermEvent) -> bool {
        if matches!(ev, TermEvent::Mouse(_)) {
            self.last_input_at = self.now();
        }
        match ev {
            TermEvent::Key(k) if k.kind != KeyEventKind::Release => self.on_key(k),
            TermEvent::Paste(s) => self.on_paste(&s),
            TermEvent::Mouse(m) => match m.kind {
                MouseEventKind::ScrollUp => self.scroll_by(3),
                MouseEventKind::ScrollDown => self.scroll_by(-3),
                MouseEventKind::Down(_) if self.views.iter().all(|v| !v.is_modal()) => {
                    let hit = self
                        .layout
                        .sidebar_rows
                        .iter()
                        .find(|(y, _)| *y == m.row)
                        .map(|(_, id)| *id);
                    let strip_hit = self
                        .layout
                        .strip_rows
                        .iter()
                        .find(|(y, _)| *y == m.row)
                        .map(|(_, id)| *id)
                        .filter(|_| m.column >= self.layout.strip_x);
                    if let Some(id) = hit
                        && self.layout.sidebar_visible
                        && m.column < super::view::SIDEBAR_WIDTH
                    {
                        self.open(id);
                    } else if let Some(id) = strip_hit {
                        // As Tab would, with the clicked item chosen: its keys act on it.
                        self.focus = Focus::Strip;
                        self.strip.click(id);
                    }
                }
                _ => return false,
            },
            TermEvent::FocusLost => {
                self.window_focused = false;
                return false;
            }
            TermEvent::FocusGained => {
                self.window_focused = true;
                // Back to the conversation on screen: what came there meanwhile is seen.
                if let Some(c) = self.model.current {
                    self.model.rang.remove(&c);
                    return self.model.unread.remove(&c);
                }
                return false;
            }
            _ => return false,
        }
        true
    }

    pub(super) fn cx(&self) -> Cx<'_> {
        cx_of(&self.model, &self.keys, &self.composer)
    }

    pub(super) fn on_paste(&mut self, s: &str) {
        self.paste_into_focus(s);
        self.drop_status_about_a_command_gone();
    }

    fn paste_into_focus(&mut self, s: &str) {
        // A paste is typing too.
        self.last_input_at = self.now();
        self.drop_status_about_the_last_key();
        // Pastes go into whatever input has focus, without a terminal's
        // escape sequences (a coloured log).
        let plain = crate::sanitize::without_escapes(s);
        let lines = plain.replace("\r\n", "\n").replace('\r', "\n");
        let clean = crate::sanitize::sanitize(&lines).into_owned();
        if let Some(mut top) = self.views.pop() {
            let mut cx = self.cx();
            let outcome = top.handle_paste(&clean, &mut cx);
            let intents = std::mem::take(&mut cx.intents);
            if !matches!(outcome, Outcome::Done | Outcome::Dismissed) {
                self.views.push(top);
            }
            self.apply(intents);
            if outcome == Outcome::Dismissed {
                return self.paste_into_focus(s);
            }
            if outcome != Outcome::Ignored || self.views.last().is_some_and(|v| v.is_modal()) {
                return;
            }
        }
        self.focus = Focus::Composer;
        // The message is sent as pasted: tabs stay tabs (a Makefile recipe,
        // a TSV row), shown by the composer at its tab stops.
        let kept = crate::sanitize::sanitize_source(&lines);
        if !self.paste_as_chip(&kept) {
            self.composer.insert(&kept, self.now());
        }
    }

    /// A long paste (a log, a file's text) goes with the message as a chip,
    /// as an attached file does, rather than filling the composer: what is
    /// typed around it stays in view. False when it goes into the text.
    fn paste_as_chip(&mut self, text: &str) -> bool {
        let most = self.ui_config.ui.paste_chip_lines;
        let lines = text.trim_end_matches('\n').lines().count();
        if most == 0 || lines <= most {
            return false;
        }
        // Over what a message may carry attached: into the text, as before.
        let used: u64 = self
            .composer
            .attachments
            .iter()
            .map(|p| super::composer::describe(p).2)
            .sum();
        let cap = self.engine().config().get().max_attachment_bytes();
        if used.saturating_add(text.len() as u64) > cap {
            return false;
        }
        let taken: Vec<String> = self
            .composer
            .attachments
            .iter()
            .map(|p| super::composer::describe(p).0)
            .collect();
        let name = (1..)
            .map(|n| format!("{PASTED} {n}"))
            .find(|n| !taken.contains(n))
            .unwrap_or_else(|| PASTED.to_string());
        self.composer.attach_text(&name, text, self.now());
        self.info_until_key(format!(
            "pasted {lines} lines as “{name}”, sent with the message (Ctrl+_ puts it into the text instead)"
        ));
        true
    }

    pub(super) fn scroll_by(&mut self, rows: isize) {
        let cur = self.scroll.from_bottom.unwrap_or(0) as isize;
        let next = (cur + rows).max(0) as usize;
        self.scroll.from_bottom = if next == 0 { None } else { Some(next) };
    }

    /// When the next redraw is needed for time to show correctly, if ever.
    pub fn next_tick_at(&self) -> Option<i64> {
        let now = self.now();
        let mut at: Vec<i64> = Vec::new();
        if let Some(s) = &self.status {
            at.push(s.until);
        }
        if let Some(t) = self.composer.unsaved_since {
            at.push(t + composer::SAVE_AFTER_MS);
        }
        if let Some(t) = self.quit_armed {
            at.push(t + QUIT_WINDOW_MS);
        }
        if self.keys_in_a_pane() {
            at.push(self.last_input_at.saturating_add(PANE_IDLE_MS));
        }
        if let Some(held) = &self.held_pane_letter {
            at.push(held.at.saturating_add(TYPED_ON_MS));
        }
        at.extend(self.drafts.retry_at);
        at.extend(self.wait_notice_at());
        at.extend(self.composer_preview_changes_at());
        if let Some(t) = self.strip.next_change(&self.model, now) {
            at.push(t);
        }
        // The chat counts down a regeneration's retry like the strip.
        if let Some(r) = self.model.waiting_regeneration()
            && let crate::engine::ItemState::Retrying { at: due, .. } = self.model.state_of(r, now)
        {
            at.extend(views::label_change(due, now));
        }
        for v in &self.views {
            if let Some(t) = v.next_change(now) {
                at.push(t);
            }
        }
        // How long a message being sent has waited, in its bubble.
        at.extend(
            self.model
                .items
                .iter()
                .filter(|i| i.status == crate::store::Status::Sending)
                .map(|i| views::waited_change(i.updated_at, now)),
        );
        // A command waiting for a server's model list looks again soon.
        if let Some(w) = &self.model_wait {
            at.push(w.until.min(now + super::sending::MODEL_WAIT_POLL_MS));
        }
        // A running tool call's seconds, in the composer's title.
        if let Some(run) = self.model.tool_runs.first() {
            let ran = (now - run.started_at).max(0);
            at.push(now + 1000 - ran % 1000);
        }
        // Task cards count down like the strip.
        at.extend(
            self.model
                .tasks
                .values()
                .filter(|t| t.status == crate::store::Status::Pending)
                .filter_map(|t| t.due_at.and_then(|d| views::label_change(d, now))),
        );
        // And a repeating task's card, its next time.
        at.extend(
            self.model
                .task_series
                .values()
                .filter_map(|v| v.series.next_due_at)
                .filter_map(|d| views::label_change(d, now)),
        );
        at.into_iter().min()
    }

    /// The view on top was opened by a letter of the strip or the list
    /// just now: a letter typed next within [`TYPED_ON_MS`] is typing.
    pub fn pane_letter_opened_the_top(&self) -> bool {
        self.pane_letter
            .is_some_and(|(_, _, depth)| self.views.len() == depth + 1)
    }

    /// A letter of the strip or the list waits to act (no other letter has
    /// followed it yet within [`TYPED_ON_MS`]).
    pub fn holds_a_pane_letter(&self) -> bool {
        self.held_pane_letter.is_some()
    }

    /// The keys go to the pending strip or the conversation list (whose
    /// letters are commands), with nothing open over them but what one of
    /// their letters opened (a question left open takes `y` from a word
    /// typed later as well).
    fn keys_in_a_pane(&self) -> bool {
        matches!(self.focus, Focus::Strip | Focus::Sidebar)
            && (self.views.is_empty() || self.pane_letter_opened_the_top())
    }

    /// A tick: expire the status line and the quit arm, give the keys back
    /// from an idle pane, save a due draft, refresh cards.
    pub fn on_tick(&mut self) {
        let now = self.now();
        if self.status.as_ref().is_some_and(|s| s.until <= now) {
            self.status = None;
        }
        if self.quit_armed.is_some_and(|t| now - t > QUIT_WINDOW_MS) {
            self.quit_armed = None;
        }
        if self
            .held_pane_letter
            .as_ref()
            .is_some_and(|h| now.saturating_sub(h.at) >= TYPED_ON_MS)
        {
            self.act_on_the_held_pane_letter();
        }
        if self.keys_in_a_pane() && now.saturating_sub(self.last_input_at) >= PANE_IDLE_MS {
            // What a letter opened goes unanswered.
            if let Some((_, _, depth)) = self.pane_letter.take() {
                self.views.truncate(depth);
            }
            self.focus = Focus::Composer;
        }
        self.save_draft_if_due();
        self.retry_drafts_if_due();
        self.notice_waiting_writes();
        self.model.refresh_cards();
        self.retry_command_waiting_for_models();
        for v in &mut self.views {
            v.on_tick(&self.model);
        }
    }

    /// After the last frame: take the layout the frame used.
    pub fn take_layout(&mut self, layout: FrameLayout) {
        // A jump to a message is measured by this frame: taken whatever
        // else set the scroll meanwhile, or it would hold the view there.
        let jumped = self.scroll.top_of.take().is_some();
        if self.scroll.from_bottom.is_some() || jumped {
            self.scroll.from_bottom = (layout.scroll_used > 0).then_some(layout.scroll_used);
        }
        if !layout.sidebar_visible && self.focus == Focus::Sidebar {
            self.focus = Focus::Composer;
        }
        // A selection that moved by itself is acted on once it was shown.
        self.strip.drawn(layout.strip_marked);
        self.layout = layout;
        self.anchor_scroll();
        self.draw_again |= self.composer.refit();
    }

    /// Whether the frame just drawn is to be drawn again at once (the
    /// composer scrolled back after its box grew); asking clears it.
    pub fn take_draw_again(&mut self) -> bool {
        std::mem::take(&mut self.draw_again)
    }

    /// Scroll so that message `id` starts at the top of the chat (as far as
    /// the history allows). False if it is not among the messages shown.
    pub fn scroll_to_message(&mut self, id: i64) -> bool {
        if !self.model.entries.iter().any(|e| e.msg.id == id) {
            return false;
        }
        // Measured by the next frame, in the chat area it draws.
        self.scroll = super::chat::Scroll {
            from_bottom: None,
            top_of: Some(id),
        };
        true
    }

    /// The newest message on screen: the last one, or when scrolled up the
    /// one at the foot of the window.
    pub fn message_at_bottom(&self) -> Option<i64> {
        let width = self.layout.chat.width.max(20);
        let mut skip = self.scroll.from_bottom.unwrap_or(0);
        for e in self.model.entries.iter().rev() {
            let n = e.lines(width).len();
            if skip < n {
                return Some(e.msg.id);
            }
            skip -= n;
        }
        self.model.entries.first().map(|e| e.msg.id)
    }

    /// Whether any line of message `id` is in the chat's window.
    pub fn message_on_screen(&self, id: i64) -> bool {
        let width = self.layout.chat.width.max(20);
        let window = usize::from(self.layout.chat.height);
        let skip = self.scroll.from_bottom.unwrap_or(0);
        // Rows counted up from the foot of the history.
        let mut below = 0;
        for e in self.model.entries.iter().rev() {
            if below >= skip + window {
                return false;
            }
            let n = e.lines(width).len();
            if e.msg.id == id {
                return below + n > skip;
            }
            below += n;
        }
        false
    }

    /// Printed after the terminal is restored: what is still pending, if anything.
    pub fn exit_line(&self) -> Option<String> {
        let now = self.now();
        // Counted by the last reload (the loop reloads right before exit).
        let open = usize::try_from(self.model.unfinished.total()).unwrap_or(0);
        let series = self.model.active_series();
        let approvals = self.model.calls_awaiting_approval();
        let cut = self.replies_cut_at_exit;
        let calls = self.calls_cut_at_exit;
        if open == 0 && series == 0 && approvals == 0 && cut == 0 && calls == 0 {
            return None;
        }
        let c = self.model.state_counts();
        let (failed, waiting) = (c.failed, c.waiting);
        let to_go = self.to_go(now);
        let mut parts = Vec::new();
        if cut > 0 {
            parts.push(format!(
                "{cut} {} cut off by quitting (to be asked for again)",
                if cut == 1 { "reply" } else { "replies" }
            ));
        }
        if calls > 0 {
            parts.push(format!(
                "{calls} {} cut off by quitting (to be run again: {} may happen twice)",
                if calls == 1 {
                    "tool call"
                } else {
                    "tool calls"
                },
                if calls == 1 {
                    "its effects"
                } else {
                    "their effects"
                }
            ));
        }
        if approvals > 0 {
            parts.push(format!(
                "{approvals} {} waiting for your approval (tock approvals)",
                if approvals == 1 {
                    "tool call"
                } else {
                    "tool calls"
                }
            ));
        }
        parts.extend(to_go.scheduled.clone());
        parts.extend(to_go.queued.clone());
        if waiting > 0 {
            // Not sent by the next start either: they wait for the user.
            parts.push(format!(
                "{waiting} waiting for you (a queue paused by a stop, or a tool call to approve)"
            ));
        }
        if failed > 0 {
            parts.push(format!(
                "{failed} failed or expired (not sent again unless you retry them: tock list)"
            ));
        }
        parts.extend(to_go.series.clone());
        // Who sends what is still to go, if anything is.
        let who = match &self.model.dispatch {
            _ if to_go.is_empty() && cut + calls == 0 => String::new(),
            crate::engine::DispatchState::Standby { pid } => {
                format!("; the tock running as pid {pid} sends them")
            }
            // A daemon waiting in standby takes the lease over once this
            // tock lets it go.
            _ => "; a tock or `tock daemon` already running on this database takes them over at once, else the next `tock` started does"
                .to_string(),
        };
        Some(format!(
            "tock: {} — kept in the database{who}.",
            parts.join(", ")
        ))
    }
}

impl App {
    /// Said on the way to a suspend (Ctrl+Z) when something is to be sent:
    /// a stopped tock sends nothing, and the shell says only "Stopped".
    pub fn suspend_line(&self) -> Option<String> {
        let to_go = self.to_go(self.now());
        if to_go.is_empty() {
            return None;
        }
        let parts: Vec<String> = [to_go.scheduled, to_go.queued, to_go.series]
            .into_iter()
            .flatten()
            .collect();
        Some(format!(
            "tock: suspended; while it is stopped it sends nothing: {}. `fg` brings it back (`tock daemon` sends them meanwhile).",
            parts.join(", ")
        ))
    }

    /// What is to go by itself, as the exit and a suspend name it (counted
    /// by the last reload).
    fn to_go(&self, now: i64) -> ToGo {
        let c = self.model.state_counts();
        let open = usize::try_from(self.model.unfinished.total()).unwrap_or(0);
        let queued = open.saturating_sub(c.scheduled + c.failed + c.waiting);
        let series = self.model.active_series();
        ToGo {
            scheduled: (c.scheduled > 0).then(|| {
                let next = self.model.next_due().unwrap_or(now);
                format!(
                    "{} scheduled (next {})",
                    c.scheduled,
                    when::absolute(
                        chrono::DateTime::from_timestamp_millis(next).unwrap_or_default(),
                        &local(now)
                    )
                )
            }),
            queued: (queued > 0).then(|| format!("{queued} queued")),
            series: (series > 0).then(|| format!("{series} recurring series")),
        }
    }
}

/// The parts of [`App::to_go`], each there when there is one of it.
struct ToGo {
    scheduled: Option<String>,
    queued: Option<String>,
    series: Option<String>,
}

impl ToGo {
    fn is_empty(&self) -> bool {
        self.scheduled.is_none() && self.queued.is_none() && self.series.is_none()
    }
}

pub(super) fn cx_of<'a>(model: &'a Model, keys: &'a Keymap, composer: &Composer) -> Cx<'a> {
    Cx {
        model,
        keys,
        now: model.now(),
        now_ms: model.now_ms(),
        composer_empty: composer.holds_no_text(),
        composer_command: composer.holds_command(),
        composer_editing: composer.edit.is_some(),
        intents: Vec::new(),
    }
}

/// The first conversation of a new database, made before the terminal is
/// taken over. Another process that holds the write lock (`tock daemon`
/// saving a reply, a `tock send`) is waited for as long as it takes, and the
/// wait is said on stderr at once: giving up after the store's busy timeout
/// would end the start with an error about a lock the user cannot see.
fn first_conversation(engine: &Engine) -> anyhow::Result<i64> {
    let store = engine.store();
    store.set_busy_timeout(std::time::Duration::ZERO)?;
    let first = engine.create_conversation(None, "user");
    store.set_busy_timeout(crate::store::BUSY_TIMEOUT)?;
    match first {
        Err(e) if crate::store::is_busy(&e) => {}
        done => return done,
    }
    eprintln!(
        "tock: another process is writing to the database; waiting for it (Ctrl+C to give up)…"
    );
    loop {
        match engine.create_conversation(None, "user") {
            Err(e) if crate::store::is_busy(&e) => continue,
            done => return done,
        }
    }
}

/// The command word a composer line begins with (`/every`), if it is one.
fn command_word(text: &str) -> Option<String> {
    let word = text.split_whitespace().next()?;
    word.starts_with('/').then(|| word.to_string())
}

/// What a paste held as a chip is named ("pasted text 1").
const PASTED: &str = "pasted text";

/// A letter this soon after the strip's or the list's letter that asked a
/// question is typing, not the answer: no one reads a question that fast.
pub const TYPED_ON_MS: i64 = 350;

/// See [`App::held_pane_letter`].
pub(super) struct HeldLetter {
    pub letter: char,
    pub at: i64,
    pub intents: Vec<views::Intent>,
}

/// How long the pending strip or the conversation list keeps the keys
/// without a key pressed or a click (see [`App::last_input_at`]).
pub const PANE_IDLE_MS: i64 = 30_000;

/// The status line for settings that could not be taken (a key that is no
/// key, a colour that is no colour): the first, with how many more there
/// are and the log file where each is written.
fn settings_problems(errors: &[String]) -> Option<String> {
    for e in errors {
        tracing::warn!("{e}");
    }
    let first = errors.first()?;
    Some(if errors.len() > 1 {
        format!(
            "{first} (+{} more, in {})",
            errors.len() - 1,
            crate::logging::log_file().display()
        )
    } else {
        first.clone()
    })
}
