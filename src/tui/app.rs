//! App state and the one update path: terminal input and engine events come
//! in here; rendering (view.rs) is a pure function of this state.

use std::collections::HashMap;
use std::path::Path;

use chrono::{DateTime, FixedOffset};
use ratatui::crossterm::event::{
    Event as TermEvent, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEventKind,
};
use ratatui_textarea::TextArea;

use super::chat::{Entry, Scroll};
use super::keymap::{self, Action, Ctx};
use super::scheduled::{PaneAction, ScheduledPane};
use super::time_picker::{PickerAction, TimePicker};
use crate::engine::Part;
use crate::engine::{DispatchState, Engine, Event, NoticeKind, Notification};
use crate::store::{
    Approval, ApprovalStatus, Conversation, Kind, NewItem, OutboxItem, Role, Status,
};
use crate::when::{self, Mode};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    Composer,
    Strip,
    Sidebar,
}

/// A one-line (or multi-line) input popup and what it is for.
pub enum PromptKind {
    Rename(i64),
    Search,
    Reschedule(i64),
    EditItem(i64),
}

pub struct Prompt {
    pub kind: PromptKind,
    pub title: String,
    pub input: TextArea<'static>,
    pub error: Option<String>,
}

pub enum Confirm {
    DeleteConversation(i64),
    CancelItem(i64),
}

pub enum Overlay {
    Help,
    /// The notification history.
    Notices,
    Scheduled(Box<ScheduledPane>),
    Picker(Box<TimePicker>),
    Prompt(Box<Prompt>),
    Confirm(Confirm, String),
}

/// Bytes the terminal module writes between frames (bell, OSC 9/777/52, title).
#[derive(Default)]
pub struct Output {
    pub raw: Vec<String>,
    pub title: Option<String>,
}

pub struct App {
    pub engine: Engine,
    pub convs: Vec<Conversation>,
    pub current: Option<i64>,
    pub entries: Vec<Entry>,
    /// Unfinished items of the current conversation (strip + sending bubbles).
    pub items: Vec<OutboxItem>,
    pub approvals: Vec<Approval>,
    /// Task rows referenced by task cards in the current conversation.
    pub tasks: HashMap<i64, OutboxItem>,
    /// Unfinished items of all conversations (status-bar counts, sidebar badges).
    pub all_items: Vec<crate::store::ItemSummary>,
    pub composer: TextArea<'static>,
    pub focus: Focus,
    pub overlay: Option<Overlay>,
    pub scroll: Scroll,
    pub show_sidebar: bool,
    pub sidebar_sel: usize,
    pub search: String,
    pub strip_sel: usize,
    pub dispatch: DispatchState,
    pub status: Option<(String, bool)>,
    pub notices: Vec<String>,
    pub history: Vec<String>,
    pub history_pos: Option<usize>,
    pub attachments: Vec<Part>,
    pub quit: bool,
    pub suspend: bool,
    pub output: Output,
    /// Height of the chat area at the last frame (for paging).
    pub chat_height: u16,
    pub chat_width: u16,
    /// Sidebar rows at the last frame, for mouse clicks: (y, conversation id).
    pub sidebar_rows: Vec<(u16, i64)>,
    pub in_tmux: bool,
    /// First row shown in the help popup (clamped when drawn).
    pub help_scroll: u16,
    /// The user message being edited for resend (Ctrl+E).
    pub editing: Option<i64>,
    /// Model for the message being sent by `/with`.
    model_override: Option<String>,
}

fn new_composer() -> TextArea<'static> {
    let mut t = TextArea::default();
    t.set_placeholder_text("Message · Enter send · Alt+Enter newline · /later 10m … · F1 help");
    t.set_cursor_line_style(ratatui::style::Style::default());
    t.set_wrap_mode(ratatui_textarea::WrapMode::WordOrGlyph);
    t
}

pub fn now_fixed(ms: i64) -> DateTime<FixedOffset> {
    DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .with_timezone(&chrono::Local)
        .fixed_offset()
}

impl App {
    pub fn new(engine: Engine) -> anyhow::Result<Self> {
        let mut app = Self {
            engine,
            convs: Vec::new(),
            current: None,
            entries: Vec::new(),
            items: Vec::new(),
            approvals: Vec::new(),
            tasks: HashMap::new(),
            all_items: Vec::new(),
            composer: new_composer(),
            focus: Focus::Composer,
            overlay: None,
            scroll: Scroll::default(),
            show_sidebar: true,
            sidebar_sel: 0,
            search: String::new(),
            strip_sel: 0,
            dispatch: DispatchState::Starting,
            status: None,
            notices: Vec::new(),
            history: Vec::new(),
            history_pos: None,
            attachments: Vec::new(),
            quit: false,
            suspend: false,
            output: Output::default(),
            chat_height: 20,
            chat_width: 80,
            sidebar_rows: Vec::new(),
            in_tmux: std::env::var_os("TMUX").is_some(),
            editing: None,
            model_override: None,
            help_scroll: 0,
        };
        app.reload_convs()?;
        let last = app
            .engine
            .store()
            .setting("ui.current")?
            .and_then(|s| s.parse::<i64>().ok());
        let open = last
            .filter(|id| app.convs.iter().any(|c| c.id == *id))
            .or(app.convs.first().map(|c| c.id));
        match open {
            Some(id) => app.open(id),
            None => {
                let id =
                    app.engine
                        .store()
                        .create_conversation(None, "user", app.engine.now_ms())?;
                app.reload_convs()?;
                app.open(id);
            }
        }
        app.reload_all_items();
        app.update_title();
        Ok(app)
    }

    fn store(&self) -> &crate::store::Store {
        self.engine.store()
    }

    pub fn now(&self) -> DateTime<FixedOffset> {
        now_fixed(self.engine.now_ms())
    }

    fn info(&mut self, s: impl Into<String>) {
        self.status = Some((s.into(), false));
    }
    fn error(&mut self, s: impl std::fmt::Display) {
        let line = crate::sanitize::sanitize_line(&s.to_string()).into_owned();
        self.status = Some((line, true));
    }

    // ----- loading -------------------------------------------------------

    pub fn reload_convs(&mut self) -> anyhow::Result<()> {
        self.convs = self.store().conversations()?;
        Ok(())
    }

    pub fn visible_convs(&self) -> Vec<&Conversation> {
        let q = self.search.to_lowercase();
        self.convs
            .iter()
            .filter(|c| q.is_empty() || c.display_title().to_lowercase().contains(&q))
            .collect()
    }

    pub fn open(&mut self, id: i64) {
        self.current = Some(id);
        self.entries.clear();
        self.scroll = Scroll::default();
        self.strip_sel = 0;
        self.editing = None;
        self.reload_messages();
        // Up on an empty composer recalls this conversation's earlier messages.
        self.history = self
            .entries
            .iter()
            .filter(|e| e.msg.role == Role::User && !e.msg.content.starts_with("[Scheduled task]"))
            .map(|e| e.msg.content.clone())
            .collect();
        let keep = self.history.len().saturating_sub(200);
        self.history.drain(..keep);
        self.history_pos = None;
        self.reload_items();
        if let Some(pos) = self.visible_convs().iter().position(|c| c.id == id) {
            self.sidebar_sel = pos;
        }
        let _ = self.store().set_setting("ui.current", &id.to_string());
        if self
            .approvals
            .iter()
            .any(|a| a.status == ApprovalStatus::Waiting)
        {
            self.info("a tool call waits for your approval: y / n");
        }
        self.update_title();
    }

    pub fn reload_messages(&mut self) {
        let Some(id) = self.current else { return };
        match self.store().messages(id) {
            Ok(msgs) => {
                let mut old: HashMap<i64, Entry> =
                    self.entries.drain(..).map(|e| (e.msg.id, e)).collect();
                self.entries = msgs
                    .into_iter()
                    .map(|m| {
                        let mid = m.id;
                        let mut e = Entry::new(m);
                        if let Some(o) = old.remove(&mid) {
                            e.reuse(o);
                        }
                        e
                    })
                    .collect();
            }
            Err(e) => self.error(format!("loading the conversation: {e:#}")),
        }
        self.approvals = self.store().approvals(id).unwrap_or_default();
        self.tasks.clear();
        let job_ids: Vec<i64> = self
            .entries
            .iter()
            .filter_map(|e| task_job_id(&e.msg))
            .collect();
        for oid in job_ids {
            if let Ok(Some(it)) = self.store().item(oid) {
                self.tasks.insert(oid, it);
            }
        }
        if self
            .approvals
            .iter()
            .any(|a| a.status == ApprovalStatus::Waiting)
            && self.overlay.is_none()
        {
            self.focus = Focus::Composer;
        }
    }

    pub fn reload_items(&mut self) {
        let Some(id) = self.current else { return };
        self.items = self.store().conversation_items(id).unwrap_or_default();
        if self.strip_sel >= self.strip_items().len() {
            self.strip_sel = self.strip_items().len().saturating_sub(1);
        }
        if self.focus == Focus::Strip && self.strip_items().is_empty() {
            self.focus = Focus::Composer;
        }
        // Task cards show the live state of their rows.
        let ids: Vec<i64> = self.tasks.keys().copied().collect();
        for oid in ids {
            if let Ok(Some(it)) = self.store().item(oid) {
                self.tasks.insert(oid, it);
            }
        }
    }

    pub fn reload_all_items(&mut self) {
        self.all_items = self.store().item_summaries().unwrap_or_default();
    }

    /// Items shown in the strip (sending ones are shown as bubbles in the history).
    pub fn strip_items(&self) -> Vec<&OutboxItem> {
        self.items
            .iter()
            .filter(|i| i.status != Status::Sending)
            .collect()
    }

    pub fn waiting_approval(&self) -> Option<&Approval> {
        self.approvals
            .iter()
            .find(|a| a.status == ApprovalStatus::Waiting)
    }

    pub fn is_busy(&self) -> bool {
        self.current.is_some_and(|c| self.engine.is_busy(c))
    }

    pub fn current_conv(&self) -> Option<&Conversation> {
        self.current
            .and_then(|id| self.convs.iter().find(|c| c.id == id))
    }

    /// The model label for the status bar: name, provider, and whether it is offline.
    pub fn model_label(&self) -> (String, String) {
        let name = self.current_conv().and_then(|c| c.model.clone());
        match self.engine.config().resolve(name.as_deref()) {
            Ok(m) => (m.name, format!("{:?}", m.kind).to_lowercase()),
            Err(e) => (name.unwrap_or_default(), format!("error: {e}")),
        }
    }

    pub fn update_title(&mut self) {
        if !self.engine.config().get().notify.title {
            return;
        }
        let scheduled = self
            .all_items
            .iter()
            .filter(|i| i.due_at.is_some_and(|d| d > self.engine.now_ms()))
            .count();
        let conv = self
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

    // ----- engine events ---------------------------------------------------

    pub fn on_engine(&mut self, ev: Event) {
        match ev {
            Event::Delta {
                conversation_id,
                message_id,
                text,
            } => {
                if Some(conversation_id) == self.current {
                    match self
                        .entries
                        .iter_mut()
                        .rev()
                        .find(|e| e.msg.id == message_id)
                    {
                        Some(e) => e.msg.content.push_str(&text),
                        None => self.reload_messages(),
                    }
                }
            }
            Event::Conversation(id)
            | Event::TurnFinished {
                conversation_id: id,
            } => {
                if Some(id) == self.current {
                    self.reload_messages();
                    self.reload_items();
                }
                let _ = self.reload_convs();
            }
            Event::Conversations => {
                let _ = self.reload_convs();
            }
            Event::Outbox => {
                self.reload_items();
                self.reload_all_items();
                self.refresh_pane();
                self.update_title();
            }
            Event::External => {
                let _ = self.reload_convs();
                if let Some(id) = self.current
                    && !self.convs.iter().any(|c| c.id == id)
                {
                    self.current = None;
                    if let Some(first) = self.convs.first().map(|c| c.id) {
                        self.open(first);
                    }
                }
                self.reload_messages();
                self.reload_items();
                self.reload_all_items();
                self.refresh_pane();
                self.update_title();
            }
            Event::Dispatch(s) => self.dispatch = s,
            Event::Notice(n) => self.on_notice(n),
        }
    }

    fn refresh_pane(&mut self) {
        if let Some(Overlay::Scheduled(p)) = &mut self.overlay {
            let _ = p.refresh(self.engine.store());
        }
    }

    fn on_notice(&mut self, n: Notification) {
        let in_view = n.conversation_id.is_some() && n.conversation_id == self.current;
        if n.kind == NoticeKind::ReplyFinished && in_view {
            return;
        }
        let text = crate::sanitize::sanitize_line(&n.text).into_owned();
        let stamp = self.now().format("%H:%M").to_string();
        self.notices.push(format!("{stamp} {text}"));
        if self.notices.len() > 100 {
            self.notices.remove(0);
        }
        let is_err = matches!(n.kind, NoticeKind::Failed | NoticeKind::Expired);
        self.status = Some((text.clone(), is_err));
        if n.kind == NoticeKind::Info {
            return;
        }
        let cfg = self.engine.config().get();
        let bytes =
            crate::notify::terminal_bytes(&text, cfg.notify.bell, cfg.notify.desktop, self.in_tmux);
        if !bytes.is_empty() {
            self.output.raw.push(bytes);
        }
        if let Some(cmd) = cfg.notify_command {
            crate::notify::run_command(&cmd, &n);
        }
    }

    // ----- input -------------------------------------------------------------

    pub fn on_terminal(&mut self, ev: TermEvent) {
        match ev {
            TermEvent::Key(k) if k.kind != KeyEventKind::Release => self.on_key(k),
            TermEvent::Paste(s) => self.on_paste(&s),
            TermEvent::Mouse(m) => match m.kind {
                MouseEventKind::ScrollUp => self.scroll_by(3),
                MouseEventKind::ScrollDown => self.scroll_by(-3),
                MouseEventKind::Down(_) => {
                    if let Some(&(_, id)) = self.sidebar_rows.iter().find(|(y, _)| *y == m.row)
                        && m.column < 30
                        && self.show_sidebar
                    {
                        self.open(id);
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }

    fn on_paste(&mut self, s: &str) {
        // Pastes go into whatever input has focus; control characters are made visible.
        let clean: String = s.replace("\r\n", "\n").replace('\r', "\n");
        let clean = crate::sanitize::sanitize(&clean).into_owned();
        match &mut self.overlay {
            Some(Overlay::Prompt(p)) => {
                p.input.insert_str(clean);
            }
            Some(Overlay::Scheduled(pane)) => pane.paste(&clean),
            Some(Overlay::Picker(picker)) => picker.paste(&clean),
            None => {
                self.focus = Focus::Composer;
                self.composer.insert_str(clean);
            }
            _ => {}
        }
    }

    fn scroll_by(&mut self, rows: isize) {
        let cur = self.scroll.from_bottom.unwrap_or(0) as isize;
        let next = (cur + rows).max(0) as usize;
        self.scroll.from_bottom = if next == 0 { None } else { Some(next) };
    }

    pub fn on_key(&mut self, key: KeyEvent) {
        if self.overlay.is_some() {
            self.on_overlay_key(key);
            return;
        }
        // A waiting approval takes y/n when the composer is empty.
        if self.waiting_approval().is_some()
            && self.composer.is_empty()
            && self.focus == Focus::Composer
            && let Some(a) = keymap::lookup(Ctx::Approval, &key)
        {
            self.run(a);
            return;
        }
        let ctx = match self.focus {
            Focus::Composer => Ctx::Composer,
            Focus::Strip => Ctx::Strip,
            Focus::Sidebar => Ctx::Sidebar,
        };
        if let Some(a) = keymap::lookup(ctx, &key).or_else(|| keymap::lookup(Ctx::Global, &key)) {
            // Esc in the strip/sidebar goes back to the composer before it stops anything.
            if a == Action::Stop && self.focus != Focus::Composer {
                self.focus = Focus::Composer;
                return;
            }
            self.run(a);
            return;
        }
        match self.focus {
            Focus::Composer => self.composer_key(key),
            Focus::Sidebar | Focus::Strip => {
                // Typing while the list has focus goes to the composer, not nowhere.
                if let KeyCode::Char(_) = key.code
                    && !key
                        .modifiers
                        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
                {
                    self.focus = Focus::Composer;
                    self.composer_key(key);
                }
            }
        }
    }

    fn composer_key(&mut self, key: KeyEvent) {
        let empty = self.composer.is_empty();
        match key.code {
            KeyCode::Char('?') if empty && key.modifiers.is_empty() => {
                self.overlay = Some(Overlay::Help)
            }
            KeyCode::End if empty => self.scroll = Scroll::default(),
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                if self.current.is_some_and(|c| self.engine.stop(c)) {
                    self.info("stopped");
                } else if !empty {
                    self.composer = new_composer();
                } else {
                    self.quit = true;
                }
            }
            _ => {
                self.history_pos = None;
                self.composer.input(key);
            }
        }
    }

    fn run(&mut self, a: Action) {
        match a {
            Action::Quit => self.quit = true,
            Action::Suspend => self.suspend = true,
            Action::Help => self.overlay = Some(Overlay::Help),
            Action::Notices => self.overlay = Some(Overlay::Notices),
            Action::ScheduledPane => {
                let mut p = ScheduledPane::new();
                if let Err(e) = p.refresh(self.engine.store()) {
                    self.error(format!("{e:#}"));
                }
                self.overlay = Some(Overlay::Scheduled(Box::new(p)));
            }
            Action::TimePicker => {
                if self.composer_text().trim().is_empty() {
                    self.error("type the message first, then Ctrl+T to choose when it is sent");
                } else {
                    self.overlay = Some(Overlay::Picker(Box::default()));
                }
            }
            Action::NewConversation => self.new_conversation(None),
            Action::ToggleSidebar => {
                self.show_sidebar = !self.show_sidebar;
                if !self.show_sidebar && self.focus == Focus::Sidebar {
                    self.focus = Focus::Composer;
                }
            }
            Action::PrevConversation | Action::NextConversation => {
                let list: Vec<i64> = self.visible_convs().iter().map(|c| c.id).collect();
                if list.is_empty() {
                    return;
                }
                let pos = self
                    .current
                    .and_then(|id| list.iter().position(|c| *c == id))
                    .unwrap_or(0);
                let next = if a == Action::PrevConversation {
                    pos.saturating_sub(1)
                } else {
                    (pos + 1).min(list.len() - 1)
                };
                self.open(list[next]);
            }
            Action::FocusNext => {
                self.focus = match self.focus {
                    Focus::Composer if !self.strip_items().is_empty() => Focus::Strip,
                    Focus::Composer | Focus::Strip if self.show_sidebar => Focus::Sidebar,
                    _ => Focus::Composer,
                };
            }
            Action::Stop | Action::Back => {
                if self.current.is_some_and(|c| self.engine.stop(c)) {
                    self.info("stopped — the partial reply is kept, Ctrl+R to retry");
                }
                self.focus = Focus::Composer;
            }
            Action::Regenerate => {
                if let Some(c) = self.current {
                    match self.engine.regenerate(c) {
                        Ok(_) => self.info("regenerating the last reply"),
                        Err(e) => self.error(e),
                    }
                }
            }
            Action::EditLast => self.edit_last(),
            Action::CopyLast => self.copy(None),
            Action::ScrollUp => self.scroll_by(1),
            Action::ScrollDown => self.scroll_by(-1),
            Action::PageUp => self.scroll_by(self.chat_height.saturating_sub(2).max(1) as isize),
            Action::PageDown => {
                self.scroll_by(-(self.chat_height.saturating_sub(2).max(1) as isize))
            }
            Action::Top => self.scroll.from_bottom = Some(usize::MAX / 2),
            Action::Bottom => self.scroll = Scroll::default(),
            Action::Submit => self.submit(),
            Action::Newline => {
                self.composer.insert_newline();
            }
            Action::HistoryPrev | Action::HistoryNext => self.history_key(a),
            Action::Up | Action::Down => match self.focus {
                Focus::Sidebar => {
                    let n = self.visible_convs().len();
                    self.sidebar_sel = step(self.sidebar_sel, n, a == Action::Up);
                }
                Focus::Strip => {
                    let n = self.strip_items().len();
                    self.strip_sel = step(self.strip_sel, n, a == Action::Up);
                }
                Focus::Composer => {}
            },
            Action::Open => {
                let id = self.visible_convs().get(self.sidebar_sel).map(|c| c.id);
                if let Some(id) = id {
                    self.open(id);
                    self.focus = Focus::Composer;
                }
            }
            Action::Rename => {
                let target = self
                    .visible_convs()
                    .get(self.sidebar_sel)
                    .map(|c| (c.id, c.display_title()));
                if let Some((id, title)) = target {
                    self.prompt(
                        PromptKind::Rename(id),
                        "Rename conversation (Enter saves, Esc cancels)",
                        &title,
                    );
                }
            }
            Action::Delete => {
                let target = self
                    .visible_convs()
                    .get(self.sidebar_sel)
                    .map(|c| (c.id, c.display_title()));
                if let Some((id, title)) = target {
                    self.confirm_delete(id, &title);
                }
            }
            Action::Search => {
                let s = self.search.clone();
                self.prompt(
                    PromptKind::Search,
                    "Filter conversations by title (Enter keeps, Esc clears)",
                    &s,
                );
            }
            Action::EditItem
            | Action::CancelItem
            | Action::SendNow
            | Action::PullBack
            | Action::RescheduleItem
            | Action::RetryItem => self.strip_action(a),
            Action::Approve | Action::Deny => {
                if let Some(id) = self.waiting_approval().map(|a| a.id) {
                    match self.engine.answer_approval(id, a == Action::Approve) {
                        Ok(()) => self.info(if a == Action::Approve {
                            "approved"
                        } else {
                            "denied"
                        }),
                        Err(e) => self.error(e),
                    }
                    self.reload_messages();
                    self.reload_items();
                }
            }
        }
    }

    fn history_key(&mut self, a: Action) {
        let at_edge = self.composer.is_empty() || self.history_pos.is_some();
        if !at_edge || self.history.is_empty() {
            // Not recalling: the arrow moves the cursor.
            let key = if a == Action::HistoryPrev {
                KeyCode::Up
            } else {
                KeyCode::Down
            };
            self.composer.input(KeyEvent::new(key, KeyModifiers::NONE));
            return;
        }
        let n = self.history.len();
        let pos = match (self.history_pos, a) {
            (None, Action::HistoryPrev) => Some(n - 1),
            (Some(p), Action::HistoryPrev) => Some(p.saturating_sub(1)),
            (Some(p), _) if p + 1 < n => Some(p + 1),
            _ => None,
        };
        self.history_pos = pos;
        let text = pos.map(|p| self.history[p].clone()).unwrap_or_default();
        self.set_composer(&text);
    }

    pub fn set_composer(&mut self, text: &str) {
        let mut t = new_composer();
        t.insert_str(text);
        self.composer = t;
    }

    pub fn composer_text(&self) -> String {
        self.composer.lines().join("\n")
    }

    fn prompt(&mut self, kind: PromptKind, title: &str, initial: &str) {
        let mut input = TextArea::default();
        input.set_cursor_line_style(ratatui::style::Style::default());
        input.insert_str(initial);
        self.overlay = Some(Overlay::Prompt(Box::new(Prompt {
            kind,
            title: title.into(),
            input,
            error: None,
        })));
    }

    fn confirm_delete(&mut self, id: i64, title: &str) {
        let pending = self
            .all_items
            .iter()
            .filter(|i| i.conversation_id == Some(id) && i.kind != Kind::Task)
            .count();
        let extra = if pending > 0 {
            format!(" Its {pending} pending message(s) will be canceled.")
        } else {
            String::new()
        };
        self.overlay = Some(Overlay::Confirm(
            Confirm::DeleteConversation(id),
            format!("Delete “{title}” and its history?{extra} y / n"),
        ));
    }

    fn new_conversation(&mut self, title: Option<&str>) {
        match self
            .store()
            .create_conversation(title, "user", self.engine.now_ms())
        {
            Ok(id) => {
                let _ = self.reload_convs();
                self.search.clear();
                self.open(id);
                self.focus = Focus::Composer;
            }
            Err(e) => self.error(format!("{e:#}")),
        }
    }

    fn strip_action(&mut self, a: Action) {
        let Some(item) = self.strip_items().get(self.strip_sel).map(|i| (*i).clone()) else {
            return;
        };
        let r = match a {
            Action::EditItem => {
                self.prompt(
                    PromptKind::EditItem(item.id),
                    "Edit (Enter saves, Alt+Enter newline, Esc cancels)",
                    &item.text,
                );
                Ok(())
            }
            Action::CancelItem => {
                let what: String = crate::sanitize::sanitize_line(&item.text)
                    .chars()
                    .take(40)
                    .collect();
                self.overlay = Some(Overlay::Confirm(
                    Confirm::CancelItem(item.id),
                    format!("Cancel “{what}”? y / n"),
                ));
                Ok(())
            }
            Action::SendNow => self
                .engine
                .send_now(item.id)
                .map(|_| self.info("sending as soon as the conversation is free")),
            Action::PullBack => match self.engine.cancel(item.id) {
                Ok(()) => {
                    let text = item.text.clone();
                    self.set_composer(&text);
                    self.focus = Focus::Composer;
                    self.info("moved back into the composer");
                    Ok(())
                }
                Err(e) => Err(e),
            },
            Action::RescheduleItem => {
                self.prompt(
                    PromptKind::Reschedule(item.id),
                    "Reschedule to (e.g. 10m, 9am, tomorrow 14:30)",
                    "",
                );
                Ok(())
            }
            Action::RetryItem => self.engine.retry(item.id).map(|_| self.info("retrying")),
            _ => Ok(()),
        };
        if let Err(e) = r {
            self.error(e);
        }
    }

    fn on_overlay_key(&mut self, key: KeyEvent) {
        let Some(overlay) = self.overlay.take() else {
            return;
        };
        let ctrl_c =
            key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL);
        match overlay {
            Overlay::Help => {
                // Arrows and paging scroll a help taller than the screen; any other key closes it.
                let page = i32::from(self.chat_height.saturating_sub(2).max(1));
                let delta = match key.code {
                    KeyCode::Up | KeyCode::Char('k') => Some(-1),
                    KeyCode::Down | KeyCode::Char('j') => Some(1),
                    KeyCode::PageUp => Some(-page),
                    KeyCode::PageDown => Some(page),
                    KeyCode::Home => Some(-i32::from(u16::MAX)),
                    KeyCode::End => Some(i32::from(u16::MAX)),
                    _ => None,
                };
                match delta {
                    Some(d) => {
                        self.help_scroll =
                            (i32::from(self.help_scroll) + d).clamp(0, i32::from(u16::MAX)) as u16;
                        self.overlay = Some(Overlay::Help);
                    }
                    None => self.help_scroll = 0,
                }
            }
            Overlay::Notices => {}
            Overlay::Scheduled(mut pane) => match pane.handle_key(key, &self.engine, self.now()) {
                PaneAction::Close => {}
                PaneAction::Jump(conv) => {
                    if self.convs.iter().any(|c| c.id == conv) {
                        self.open(conv);
                    } else {
                        self.error("that conversation no longer exists");
                    }
                }
                PaneAction::Info(s) => {
                    self.info(s);
                    self.overlay = Some(Overlay::Scheduled(pane));
                }
                PaneAction::Error(s) => {
                    self.error(s);
                    self.overlay = Some(Overlay::Scheduled(pane));
                }
                PaneAction::None => self.overlay = Some(Overlay::Scheduled(pane)),
            },
            Overlay::Picker(mut picker) => match picker.handle_key(key, self.now()) {
                PickerAction::Cancel => {}
                PickerAction::Pick(due) => {
                    let text = self.composer_text();
                    self.schedule(text.trim(), due.timestamp_millis());
                }
                PickerAction::None => self.overlay = Some(Overlay::Picker(picker)),
            },
            Overlay::Confirm(what, text) => match key.code {
                KeyCode::Char('y') | KeyCode::Char('Y') => match what {
                    Confirm::DeleteConversation(id) => {
                        match self.store().delete_conversation(id, self.engine.now_ms()) {
                            Ok(_) => {
                                let _ = self.reload_convs();
                                self.reload_all_items();
                                if self.current == Some(id) {
                                    self.current = None;
                                    match self.convs.first().map(|c| c.id) {
                                        Some(next) => self.open(next),
                                        None => self.new_conversation(None),
                                    }
                                }
                                self.sidebar_sel = self
                                    .sidebar_sel
                                    .min(self.visible_convs().len().saturating_sub(1));
                                self.info("conversation deleted");
                                self.focus = Focus::Composer;
                                self.engine.wake();
                            }
                            Err(e) => self.error(format!("{e:#}")),
                        }
                    }
                    Confirm::CancelItem(id) => match self.engine.cancel(id) {
                        Ok(()) => self.info("canceled"),
                        Err(e) => self.error(e),
                    },
                },
                KeyCode::Char('n') | KeyCode::Char('N') | KeyCode::Esc => {}
                _ if ctrl_c => {}
                _ => self.overlay = Some(Overlay::Confirm(what, text)),
            },
            Overlay::Prompt(mut p) => {
                let multiline = matches!(p.kind, PromptKind::EditItem(_));
                match key.code {
                    KeyCode::Esc => {
                        if matches!(p.kind, PromptKind::Search) {
                            self.search.clear();
                        }
                    }
                    _ if ctrl_c => {}
                    KeyCode::Enter
                        if multiline
                            && key
                                .modifiers
                                .intersects(KeyModifiers::ALT | KeyModifiers::SHIFT) =>
                    {
                        p.input.insert_newline();
                        self.overlay = Some(Overlay::Prompt(p));
                    }
                    KeyCode::Enter => {
                        let value = p.input.lines().join("\n");
                        if let Err(msg) = self.finish_prompt(&p.kind, value.trim()) {
                            p.error = Some(msg);
                            self.overlay = Some(Overlay::Prompt(p));
                        }
                    }
                    _ => {
                        p.input.input(key);
                        p.error = None;
                        if matches!(p.kind, PromptKind::Search) {
                            self.search = p.input.lines().join("");
                            self.sidebar_sel = 0;
                        }
                        self.overlay = Some(Overlay::Prompt(p));
                    }
                }
            }
        }
    }

    /// Live preview under a reschedule prompt.
    pub fn prompt_preview(&self, p: &Prompt) -> Option<Result<String, String>> {
        if !matches!(p.kind, PromptKind::Reschedule(_)) {
            return None;
        }
        let text = p.input.lines().join(" ");
        if text.trim().is_empty() {
            return None;
        }
        let now = self.now();
        Some(
            when::parse_time(&text, &now, Mode::At)
                .map(|d| format!("sends {}", when::preview(d, &now)))
                .map_err(|e| e.to_string()),
        )
    }

    fn finish_prompt(&mut self, kind: &PromptKind, value: &str) -> Result<(), String> {
        let now = self.engine.now_ms();
        match kind {
            PromptKind::Rename(id) => {
                if value.is_empty() {
                    return Err("a title cannot be empty".into());
                }
                self.store()
                    .rename_conversation(*id, value, now)
                    .map_err(|e| format!("{e:#}"))?;
                let _ = self.reload_convs();
                self.update_title();
            }
            PromptKind::Search => self.search = value.to_string(),
            PromptKind::Reschedule(id) => {
                let due =
                    when::parse_time(value, &self.now(), Mode::At).map_err(|e| e.to_string())?;
                self.engine
                    .reschedule(*id, due.timestamp_millis())
                    .map_err(|e| format!("{e:#}"))?;
                self.info(format!("rescheduled: {}", when::preview(due, &self.now())));
            }
            PromptKind::EditItem(id) => {
                self.engine.edit(*id, value).map_err(|e| format!("{e:#}"))?;
                self.info("edited");
            }
        }
        Ok(())
    }

    // ----- sending -------------------------------------------------------------

    /// The live preview line for `/later` and `/at` while typing.
    pub fn composer_preview(&self) -> Option<Result<String, String>> {
        let text = self.composer_text();
        let (mode, rest) = if let Some(r) = text.strip_prefix("/later ") {
            (Mode::Later, r)
        } else if let Some(r) = text.strip_prefix("/at ") {
            (Mode::At, r)
        } else {
            return None;
        };
        if rest.trim().is_empty() {
            return Some(Err(match mode {
                Mode::Later => "/later DURATION TEXT — e.g. /later 1h30m check the build".into(),
                Mode::At => "/at TIME TEXT — e.g. /at tomorrow 9am stand-up notes".into(),
            }));
        }
        let now = self.now();
        Some(match when::split_time_prefix(rest, &now, mode) {
            Ok((due, _)) => Ok(format!("sends {}", when::preview(due, &now))),
            Err(e) => Err(e.to_string()),
        })
    }

    fn submit(&mut self) {
        let text = self.composer_text();
        let trimmed = text.trim();
        if trimmed.is_empty() && self.attachments.is_empty() {
            return;
        }
        if trimmed.starts_with('/') && !trimmed.starts_with("//") {
            self.command(trimmed.to_string());
            return;
        }
        // "//" escapes a message that starts with a slash.
        let body = trimmed
            .strip_prefix('/')
            .filter(|_| trimmed.starts_with("//"))
            .unwrap_or(trimmed)
            .to_string();
        self.send(&body, None);
    }

    fn send(&mut self, text: &str, due: Option<i64>) {
        let Some(conv) = self.current else { return };
        // Resending an edit: the old exchange is kept for the record, no longer sent to the model.
        if let Some(from) = self.editing.take() {
            for e in self
                .entries
                .iter()
                .filter(|e| e.msg.id >= from && e.msg.role != Role::Notice)
            {
                let _ = self.engine.store().set_message_status(
                    e.msg.id,
                    crate::store::MessageStatus::Superseded,
                    None,
                );
            }
            self.reload_messages();
        }
        let mut item = NewItem::new(
            conv,
            if due.is_some() {
                Kind::Message
            } else {
                Kind::Queued
            },
            text,
        );
        item.due_at = due;
        item.model_override = self.model_override.clone();
        if !self.attachments.is_empty() {
            item.parts_json = serde_json::to_string(&self.attachments).ok();
        }
        let busy = self.is_busy();
        match self.engine.submit(item) {
            Ok(_) => {
                self.history.push(text.to_string());
                self.history_pos = None;
                self.attachments.clear();
                self.composer = new_composer();
                self.scroll = Scroll::default();
                if let Some(d) = due {
                    self.info(format!(
                        "scheduled: {}",
                        when::preview(now_fixed(d).to_utc(), &self.now())
                    ));
                } else if busy {
                    self.info("queued: it goes as soon as this reply finishes");
                }
                self.reload_items();
            }
            Err(e) => self.error(format!("{e:#}")),
        }
    }

    fn schedule(&mut self, text: &str, due: i64) {
        if text.is_empty() {
            self.error("nothing to send after the time");
            return;
        }
        self.send(text, Some(due));
    }

    fn edit_last(&mut self) {
        let Some(conv) = self.current else { return };
        if self.is_busy() {
            self.error("wait for the reply to finish (or Esc to stop it) before editing");
            return;
        }
        let last_user = self
            .entries
            .iter()
            .rev()
            .find(|e| e.msg.role == Role::User)
            .map(|e| e.msg.clone());
        let Some(m) = last_user else {
            self.error("no message to edit yet");
            return;
        };
        // The old exchange is marked replaced only when the edit is sent (see `send`),
        // so abandoning the edit leaves the conversation as it was.
        self.editing = Some(m.id);
        self.set_composer(&m.content);
        let _ = conv;
        self.info("edit and press Enter to resend (the old exchange will be marked replaced)");
    }

    fn copy(&mut self, block: Option<usize>) {
        let width = self.chat_width.saturating_sub(2).max(1);
        let Some(last) = self
            .entries
            .iter_mut()
            .rev()
            .find(|e| e.msg.role == Role::Assistant)
        else {
            self.error("no reply to copy yet");
            return;
        };
        let text = match block {
            None => last.msg.content.clone(),
            Some(n) => {
                // Blocks are numbered across the whole conversation, as shown in their headers.
                let mut all = Vec::new();
                for e in self.entries.iter_mut() {
                    all.extend(e.code_blocks(width));
                }
                match all.get(n.wrapping_sub(1)) {
                    Some(b) => b.code.clone(),
                    None => {
                        self.error(format!("no code block {n}"));
                        return;
                    }
                }
            }
        };
        // What lands in the clipboard may be pasted into a terminal: no control characters.
        let text = crate::sanitize::sanitize_keep_tabs(&text).into_owned();
        self.output.raw.push(osc52(&text, self.in_tmux));
        self.info(format!(
            "copied {} characters to the clipboard (OSC 52)",
            text.chars().count()
        ));
    }

    fn command(&mut self, line: String) {
        let (cmd, arg) = line
            .split_once(char::is_whitespace)
            .map(|(c, a)| (c, a.trim()))
            .unwrap_or((line.as_str(), ""));
        let arg = arg.to_string();
        let clear = |app: &mut App| app.composer = new_composer();
        match cmd {
            "/later" | "/at" => {
                let mode = if cmd == "/later" {
                    Mode::Later
                } else {
                    Mode::At
                };
                let now = self.now();
                match when::split_time_prefix(&arg, &now, mode) {
                    Ok((due, text)) => self.schedule(&text, due.timestamp_millis()),
                    // The text stays in the composer so nothing is lost.
                    Err(e) => self.error(e),
                }
            }
            "/new" => {
                clear(self);
                self.new_conversation((!arg.is_empty()).then_some(arg.as_str()));
            }
            "/rename" => {
                if arg.is_empty() {
                    self.error("usage: /rename TITLE");
                } else if let Some(id) = self.current {
                    let _ = self
                        .store()
                        .rename_conversation(id, &arg, self.engine.now_ms());
                    let _ = self.reload_convs();
                    self.update_title();
                    clear(self);
                }
            }
            "/delete" => {
                if let Some((id, title)) = self.current_conv().map(|c| (c.id, c.display_title())) {
                    clear(self);
                    self.confirm_delete(id, &title);
                }
            }
            "/model" => {
                if arg.is_empty() {
                    let (name, provider) = self.model_label();
                    let names = self.engine.config().model_names().join(", ");
                    self.info(format!("model: {name} ({provider}) — available: {names}"));
                } else {
                    match self.engine.config().resolve(Some(&arg)) {
                        Ok(m) => {
                            if let Some(id) = self.current {
                                let _ = self.store().set_conversation_model(id, Some(&arg));
                                let _ = self.reload_convs();
                            }
                            self.info(format!(
                                "model for this conversation: {} ({:?})",
                                m.name, m.kind
                            ));
                        }
                        Err(e) => self.error(e),
                    }
                }
                clear(self);
            }
            "/role" => {
                let roles = self.engine.config().get().roles;
                if arg.is_empty() {
                    let cur = self
                        .current_conv()
                        .and_then(|c| c.role.clone())
                        .unwrap_or_else(|| "none".into());
                    let names: Vec<_> = roles.keys().cloned().collect();
                    self.info(format!(
                        "role: {cur} — available: {}",
                        if names.is_empty() {
                            "none (add [roles.NAME] to the config)".into()
                        } else {
                            names.join(", ")
                        }
                    ));
                } else if arg == "none" || roles.contains_key(&arg) {
                    if let Some(id) = self.current {
                        let _ = self
                            .store()
                            .set_conversation_role(id, (arg != "none").then_some(arg.as_str()));
                        let _ = self.reload_convs();
                    }
                    self.info(format!("role: {arg}"));
                } else {
                    self.error(format!("no role \"{arg}\" in the config"));
                }
                clear(self);
            }
            "/attach" => match self.attach(Path::new(&shellexpand(&arg))) {
                Ok(msg) => {
                    self.info(msg);
                    clear(self);
                }
                Err(e) => self.error(e),
            },
            "/with" => {
                // One message to another model: /with NAME TEXT
                match arg.split_once(char::is_whitespace) {
                    Some((model, text)) if !text.trim().is_empty() => {
                        match self.engine.config().resolve(Some(model)) {
                            Ok(_) => {
                                self.model_override = Some(model.to_string());
                                self.send(text.trim(), None);
                                self.model_override = None;
                            }
                            Err(e) => self.error(e),
                        }
                    }
                    _ => self
                        .error("usage: /with MODEL TEXT — sends this one message to another model"),
                }
            }
            "/retry" | "/regen" => {
                clear(self);
                self.run(Action::Regenerate);
            }
            "/copy" => {
                clear(self);
                if arg.is_empty() {
                    self.copy(None);
                } else {
                    match arg.parse::<usize>() {
                        Ok(n) => self.copy(Some(n)),
                        Err(_) => self.error(
                            "usage: /copy [N] — N is the code block number shown in its header",
                        ),
                    }
                }
            }
            "/export" => {
                let r = self.export(&arg);
                match r {
                    Ok(p) => {
                        self.info(format!("exported to {p}"));
                        clear(self);
                    }
                    Err(e) => self.error(e),
                }
            }
            "/help" => {
                clear(self);
                self.overlay = Some(Overlay::Help);
            }
            "/quit" | "/q" => self.quit = true,
            _ => {
                // Never sent to the model; the text stays so it can be fixed.
                self.error(format!(
                    "unknown command {cmd} — /help lists them (start with // to send a literal /)"
                ));
            }
        }
    }

    fn attach(&mut self, path: &Path) -> Result<String, String> {
        if path.as_os_str().is_empty() {
            return Err("usage: /attach PATH".into());
        }
        let meta =
            std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let cap = self.engine.config().get().max_attachment_bytes();
        let used: u64 = self
            .attachments
            .iter()
            .map(|p| match p {
                Part::Image { data_base64, .. } => data_base64.len() as u64 * 3 / 4,
                Part::Text { content, .. } => content.len() as u64,
            })
            .sum();
        if used + meta.len() > cap {
            return Err(format!(
                "refused: {} would bring this message's attachments to {} KB, over the {} KB cap",
                path.display(),
                (used + meta.len()) / 1024,
                cap / 1024
            ));
        }
        let bytes =
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mime = match path
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase())
            .as_deref()
        {
            Some("png") => Some("image/png"),
            Some("jpg") | Some("jpeg") => Some("image/jpeg"),
            Some("gif") => Some("image/gif"),
            Some("webp") => Some("image/webp"),
            _ => None,
        };
        let part = match mime {
            Some(m) => {
                use base64::Engine as _;
                Part::Image {
                    name: name.clone(),
                    mime: m.into(),
                    data_base64: base64::engine::general_purpose::STANDARD.encode(&bytes),
                }
            }
            None => match String::from_utf8(bytes) {
                Ok(content) => Part::Text {
                    name: name.clone(),
                    content,
                },
                Err(_) => {
                    return Err(format!(
                        "{name} is neither text nor a supported image (png, jpeg, gif, webp)"
                    ));
                }
            },
        };
        self.attachments.push(part);
        Ok(format!(
            "attached {name} ({} KB) to the next message",
            meta.len().div_ceil(1024)
        ))
    }

    fn export(&self, arg: &str) -> Result<String, String> {
        let conv = self.current_conv().ok_or("no conversation")?;
        let title = conv.display_title();
        let path = if arg.is_empty() {
            let slug: String = title
                .chars()
                .map(|c| {
                    if c.is_alphanumeric() {
                        c.to_ascii_lowercase()
                    } else {
                        '-'
                    }
                })
                .collect::<String>()
                .split('-')
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join("-");
            format!(
                "tock-{}-{}.md",
                conv.id,
                if slug.is_empty() {
                    "conversation".into()
                } else {
                    slug
                }
            )
        } else {
            shellexpand(arg)
        };
        let mut md = format!("# {title}\n\n");
        for e in &self.entries {
            let m = &e.msg;
            let when = chrono::DateTime::from_timestamp_millis(m.created_at)
                .map(|d| {
                    d.with_timezone(&chrono::Local)
                        .format("%Y-%m-%d %H:%M")
                        .to_string()
                })
                .unwrap_or_default();
            let who = match m.role {
                Role::User => "You".to_string(),
                Role::Assistant => m.model.clone().unwrap_or_else(|| "Assistant".into()),
                Role::Tool => format!("Tool {}", m.model.clone().unwrap_or_default()),
                Role::Notice => "tock".into(),
            };
            let status = if m.status == crate::store::MessageStatus::Complete {
                String::new()
            } else {
                format!(" ({})", m.status.as_str())
            };
            md.push_str(&format!("## {who}{status} — {when}\n\n{}\n\n", m.content));
        }
        std::fs::write(&path, md).map_err(|e| format!("cannot write {path}: {e}"))?;
        Ok(path)
    }

    /// Give each task card the live state of its row (before drawing).
    pub fn refresh_cards(&mut self, now: i64) {
        let now_local = now_fixed(now);
        for e in self.entries.iter_mut() {
            let Some(job) = task_job_id(&e.msg) else {
                continue;
            };
            e.card = self.tasks.get(&job).map(|t| {
                let due = t.due_at.unwrap_or(0);
                let due_utc = chrono::DateTime::from_timestamp_millis(due).unwrap_or_default();
                let state = match t.status {
                    Status::Pending | Status::Sending => "scheduled",
                    Status::Sent => "fired",
                    Status::Canceled => "canceled",
                    Status::Expired => "expired",
                    Status::Failed => "failed",
                };
                let when = match t.status {
                    Status::Sent => format!("fired {}", when::absolute(due_utc, &now_local)),
                    Status::Pending | Status::Sending => {
                        // Rounded to the minute so the card re-renders once a minute, not every frame.
                        let minute = now - now.rem_euclid(60_000);
                        format!("fires {}", when::preview(due_utc, &now_fixed(minute)))
                    }
                    // Canceled, expired or failed: it will not fire.
                    _ => format!("was due {}", when::absolute(due_utc, &now_local)),
                };
                super::chat::TaskCard {
                    job_id: job,
                    title: t.title.clone().unwrap_or_else(|| "task".into()),
                    instruction: t.text.clone(),
                    when,
                    state: state.into(),
                }
            });
        }
    }

    /// When the next redraw is needed for time to show correctly (countdowns), if any.
    pub fn next_tick_ms(&self) -> Option<u64> {
        let now = self.engine.now_ms();
        let retrying = self
            .items
            .iter()
            .any(|i| i.next_attempt_at.is_some_and(|t| t > now));
        if retrying || self.is_busy() {
            return Some(1000 - (now.rem_euclid(1000)) as u64);
        }
        let scheduled_visible = matches!(self.overlay, Some(Overlay::Scheduled(_)))
            || self.items.iter().any(|i| i.due_at.is_some_and(|d| d > now))
            || self.tasks.values().any(|t| t.status == Status::Pending);
        scheduled_visible.then(|| 60_000 - (now.rem_euclid(60_000)) as u64)
    }
}

/// The task a `schedule_task` tool result refers to.
fn task_job_id(m: &crate::store::Message) -> Option<i64> {
    if m.role != Role::Tool || m.model.as_deref() != Some(crate::engine::tools::SCHEDULE_TASK) {
        return None;
    }
    serde_json::from_str::<serde_json::Value>(&m.content)
        .ok()?
        .get("job_id")?
        .as_i64()
}

fn step(cur: usize, n: usize, up: bool) -> usize {
    if n == 0 {
        0
    } else if up {
        cur.saturating_sub(1)
    } else {
        (cur + 1).min(n - 1)
    }
}

fn shellexpand(p: &str) -> String {
    match (p.strip_prefix("~/"), std::env::var("HOME")) {
        (Some(rest), Ok(home)) => format!("{home}/{rest}"),
        _ => p.to_string(),
    }
}

/// OSC 52 clipboard write, wrapped for tmux passthrough when needed.
pub fn osc52(text: &str, in_tmux: bool) -> String {
    use base64::Engine as _;
    let seq = format!(
        "\x1b]52;c;{}\x07",
        base64::engine::general_purpose::STANDARD.encode(text)
    );
    if in_tmux {
        format!("\x1bPtmux;{}\x1b\\", seq.replace('\x1b', "\x1b\x1b"))
    } else {
        seq
    }
}
