//! The F2 pane: every send tock will make later, across all conversations,
//! and the keys to change them.
//!
//! The outbox table is the truth; this pane is a view of it. It keeps
//! display-ready rows (sanitised once, at refresh) and asks the engine to
//! make every change, then reloads — so what it shows is always what the
//! database says, including changes made by the scheduler, the CLI or
//! another tock process (the app calls [`ScheduledPane::refresh`] on those
//! events).

mod list;

use crate::tui::theme::palette;
use std::cell::Cell;

use chrono::{DateTime, FixedOffset, TimeZone, Utc};

use super::text::elide;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget, Wrap};
use ratatui_textarea::TextArea;
use unicode_width::UnicodeWidthStr;

use super::time_picker::{POPUP_SEP, TimeInput, centered, footer_line};
use crate::engine::{ConversationGate, Engine, ItemAction, ItemState};
use crate::sanitize::sanitize;
use crate::store::{Kind, ListCursor, OutboxItem, Status, Store, error_line};
use crate::tui::app::App;
use crate::tui::keymap::{Action, Keymap, Scope};
use crate::tui::writer::{Outcome as WriteOutcome, Writer, typed};
use list::{Row, RowList};

/// Said when a write is still waiting for the database as the key returns.
pub const WAITING: &str =
    "waiting for the database (another process is writing); it goes through when it can";
use crate::when;

/// What the app does after a key in the pane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PaneAction {
    None,
    Close,
    /// Show this conversation (and close the pane).
    Jump(i64),
    /// A one-line confirmation for the status bar.
    Info(String),
    /// A one-line error for the status bar.
    Error(String),
}

impl PaneAction {
    /// What the app does for it, and whether the pane stays.
    pub fn into_intent(
        self,
    ) -> (
        Option<crate::tui::views::Intent>,
        crate::tui::views::Outcome,
    ) {
        use crate::tui::views::{Intent, Outcome};
        match self {
            PaneAction::None => (None, Outcome::Consumed),
            PaneAction::Close => (None, Outcome::Done),
            PaneAction::Jump(conv) => (Some(Intent::Open(conv)), Outcome::Done),
            PaneAction::Info(s) => (Some(Intent::Info(s)), Outcome::Consumed),
            PaneAction::Error(s) => (Some(Intent::Error(s)), Outcome::Consumed),
        }
    }
}

enum Mode {
    List,
    Reschedule {
        id: i64,
        seen: i64,
        input: Box<TimeInput>,
    },
    Edit {
        id: i64,
        seen: i64,
        editor: Box<TextArea<'static>>,
        error: Option<String>,
    },
    ConfirmCancel {
        id: i64,
        seen: i64,
    },
    /// A new rule for a series, with the engine's preview of it.
    Rule {
        id: i64,
        input: Box<TextArea<'static>>,
        preview: Result<String, String>,
    },
}

static DEFAULT_KEYS: std::sync::LazyLock<Keymap> = std::sync::LazyLock::new(Keymap::default);

pub struct ScheduledPane {
    /// The rows around the selection (a window of the list).
    list: RowList,
    /// The selected item's id: selection follows the item across reloads.
    selected: Option<i64>,
    show_all: bool,
    mode: Mode,
    /// First visible row (an index into the loaded rows). Render adjusts it
    /// to keep the selection in view; a Cell so render can stay `&self`.
    offset: Cell<usize>,
    /// Rows visible in the last frame, for PageUp/PageDown.
    page: Cell<usize>,
    /// Rows were loaded once (the first load selects the first row).
    loaded: bool,
    /// Where its writes run, inside the app (without one they run inline).
    writer: Option<Writer<App>>,
}

impl Default for ScheduledPane {
    fn default() -> Self {
        Self::new()
    }
}

impl ScheduledPane {
    /// Paste into the open reschedule prompt or text editor; ignored in the list.
    pub fn paste(&mut self, text: &str) {
        match &mut self.mode {
            Mode::Reschedule { input, .. } => input.paste(text),
            Mode::Edit { editor, error, .. } => {
                editor.insert_str(crate::sanitize::sanitize(text));
                *error = None;
            }
            _ => {}
        }
    }

    pub fn new() -> Self {
        Self {
            list: RowList::new(),
            selected: None,
            show_all: false,
            mode: Mode::List,
            offset: Cell::new(0),
            page: Cell::new(10),
            loaded: false,
            writer: None,
        }
    }

    /// Read `rows` rows of the list per query as the selection moves
    /// (100 unless set; tests make it small to cross window edges).
    pub fn with_chunk(mut self, rows: usize) -> Self {
        self.list.chunk = rows.max(1);
        self
    }

    /// Run its writes on the app's writer thread.
    pub fn with_writer(mut self, writer: Writer<App>) -> Self {
        self.writer = Some(writer);
        self
    }

    /// Run a write, then `then` with its result: at once if the write is
    /// done within a frame (nearly always), else when it arrives (the pane
    /// is found on the app's stack then).
    fn write<T: Send + 'static>(
        &mut self,
        engine: &Engine,
        job: impl FnOnce(&Engine) -> T + Send + 'static,
        then: impl FnOnce(&mut ScheduledPane, &Engine, T) -> PaneAction + 'static,
    ) -> PaneAction {
        let Some(w) = self.writer.clone() else {
            let t = job(engine);
            return then(self, engine, t);
        };
        match w.run(engine, job) {
            WriteOutcome::Ready(t) => then(self, engine, t),
            WriteOutcome::Pending(ticket) => {
                w.then(
                    ticket,
                    typed(move |app: &mut App, t: T| {
                        app.after_pane_write(move |pane, engine| then(pane, engine, t))
                    }),
                );
                // The app says so if it waits long (its tick sees the writer busy).
                PaneAction::None
            }
        }
    }

    /// [`Self::write`] for a plain result: reload and report `done`, or the error.
    fn act(
        &mut self,
        engine: &Engine,
        job: impl FnOnce(&Engine) -> anyhow::Result<()> + Send + 'static,
        done: String,
    ) -> PaneAction {
        self.write(engine, job, move |pane, engine, result| match result {
            Ok(()) => pane.reload(engine, done),
            Err(e) => PaneAction::Error(error_line(&e)),
        })
    }

    /// Reload rows from the store (called on open, on every outbox/external
    /// event while open). Keeps the selection on the same item id; when that
    /// item left the list, on the row that took its place.
    pub fn refresh(&mut self, store: &Store) -> anyhow::Result<()> {
        self.load(store, None)
    }

    /// Reload rows, recurring series included (they need the engine's zone to
    /// be described). Series come first, each followed by its occurrences.
    pub fn refresh_with(&mut self, engine: &Engine) -> anyhow::Result<()> {
        self.load(engine.reader(), Some(engine))
    }

    fn load(&mut self, store: &Store, engine: Option<&Engine>) -> anyhow::Result<()> {
        let old_selected = self.selected_index();
        let old_offset = self.offset.get();
        let old_at_start = self.list.at_start();
        let old_top = self.list.get(old_offset).map(|r| r.item.id);
        self.list.load_head(store, engine, self.show_all)?;
        // The window is read around the selected item where it is now (a
        // reschedule moves it); an item that left the list is not selected
        // any more, so no key acts on the row that took its place.
        let mut anchor = None;
        if let Some(id) = self.selected
            && !self.list.in_head(id)
        {
            match store.item(id)?.filter(|it| self.list.lists(it)) {
                Some(it) => anchor = Some(ListCursor::of(&it)),
                None => self.selected = None,
            }
        }
        self.list.load_body(store, anchor, self.reach())?;
        match self.selected {
            Some(id) if self.index_of(id).is_none() => self.selected = None,
            None if !self.loaded => self.selected = self.list.get(0).map(|r| r.item.id),
            _ => {}
        }
        // The same rows stay on screen: from the list's start the first
        // visible row keeps its place in the list; elsewhere the row that
        // was first stays first if it is still there, or the selection
        // keeps its line.
        let offset = if old_at_start && self.list.at_start() {
            old_offset
        } else if let Some(i) = old_top.and_then(|id| self.index_of(id)) {
            i
        } else {
            match (old_selected, self.selected_index()) {
                (Some(old), Some(new)) => new.saturating_sub(old.saturating_sub(old_offset)),
                _ => 0,
            }
        };
        self.offset.set(offset);
        self.loaded = true;
        Ok(())
    }

    /// Rows kept loaded on each side of the selection: a query's worth, and
    /// always more than a page (so a frame never reaches past them).
    fn reach(&self) -> usize {
        self.list.chunk.max(self.page.get() + 1)
    }

    /// How many unfinished items the list holds (finished ones shown with
    /// `a` are not counted), for the title and the status bar.
    pub fn count(&self) -> usize {
        self.list.unfinished()
    }

    /// The selected item's id, if any.
    pub fn selected_id(&self) -> Option<i64> {
        self.selected
    }

    fn index_of(&self, id: i64) -> Option<usize> {
        self.list.position(id)
    }

    fn selected_index(&self) -> Option<usize> {
        self.selected.and_then(|id| self.index_of(id))
    }

    fn selected_row(&self) -> Option<&Row> {
        self.selected_index().and_then(|i| self.list.get(i))
    }

    fn select_index(&mut self, index: usize) {
        let last = self.list.len().saturating_sub(1);
        if let Some(r) = self.list.get(index.min(last)) {
            self.selected = Some(r.item.id);
        }
    }

    /// Move the selection by `delta` rows, stopping at the ends (no wrap:
    /// holding a key must not fling the selection to the other end).
    fn move_by(&mut self, delta: isize, store: &Store) -> anyhow::Result<()> {
        let Some(mut cur) = self.selected_index() else {
            // Nothing selected (the item left): a move selects the first row.
            return self.first(store);
        };
        let reach = self.reach();
        // A move past the loaded rows reads the next ones first.
        while delta < 0 && cur < delta.unsigned_abs() && !self.list.at_start() {
            let moved = self.list.extend_before(store, 2 * reach)?;
            cur += moved;
            self.offset.set(self.offset.get() + moved);
        }
        while delta > 0 && cur + delta.unsigned_abs() >= self.list.len() && !self.list.at_end() {
            if self.list.extend_after(store, 2 * reach)? == 0 {
                break;
            }
        }
        let last = self.list.len().saturating_sub(1) as isize;
        self.select_index((cur as isize + delta).clamp(0, last.max(0)) as usize);
        self.keep_window(store)
    }

    /// Home: the list's first row.
    fn first(&mut self, store: &Store) -> anyhow::Result<()> {
        if !self.list.at_start() {
            self.list.load_body(store, None, self.reach())?;
            self.offset.set(0);
        }
        self.select_index(0);
        self.keep_window(store)
    }

    /// End: the list's last row.
    fn last(&mut self, store: &Store) -> anyhow::Result<()> {
        if !self.list.at_end() {
            self.list.load_end(store, self.reach())?;
            // Render brings the last page into view.
            self.offset.set(self.list.len());
        }
        self.select_index(usize::MAX);
        self.keep_window(store)
    }

    /// Keep `reach` rows loaded on each side of the selection (where the
    /// list has them) and not many more: a move within them reads nothing,
    /// and what is held stays the same size wherever the window is.
    fn keep_window(&mut self, store: &Store) -> anyhow::Result<()> {
        let reach = self.reach();
        let Some(sel) = self.selected_index() else {
            return Ok(());
        };
        if sel < reach && !self.list.at_start() {
            let moved = self.list.extend_before(store, 2 * reach)?;
            self.offset.set(self.offset.get() + moved);
        }
        let Some(sel) = self.selected_index() else {
            return Ok(());
        };
        if self.list.len() - sel <= reach && !self.list.at_end() {
            self.list.extend_after(store, 2 * reach)?;
        }
        if sel > 4 * reach {
            let moved = self.list.trim_before(sel - 2 * reach);
            self.offset.set(self.offset.get().saturating_sub(moved));
        }
        if let Some(sel) = self.selected_index()
            && self.list.len() > sel + 4 * reach
        {
            self.list.trim_after(sel + 2 * reach + 1);
        }
        Ok(())
    }

    pub fn handle_key(
        &mut self,
        key: KeyEvent,
        engine: &Engine,
        now: DateTime<FixedOffset>,
    ) -> PaneAction {
        self.handle_key_with(key, engine, now, &DEFAULT_KEYS)
    }

    /// A key, looked up in `keys` (the user's keymap).
    pub fn handle_key_with(
        &mut self,
        key: KeyEvent,
        engine: &Engine,
        now: DateTime<FixedOffset>,
        keys: &Keymap,
    ) -> PaneAction {
        if key.kind == KeyEventKind::Release {
            return PaneAction::None;
        }
        match std::mem::replace(&mut self.mode, Mode::List) {
            Mode::List => self.list_key(key, engine, keys),
            Mode::Reschedule { id, seen, input } => {
                self.reschedule_key(key, engine, now, (id, seen), input)
            }
            Mode::Edit {
                id,
                seen,
                editor,
                error,
            } => self.edit_key(key, engine, (id, seen), editor, error),
            Mode::ConfirmCancel { id, seen } => self.confirm_key(key, engine, id, seen),
            Mode::Rule { id, input, preview } => self.rule_key(key, engine, id, input, preview),
        }
    }

    fn list_key(&mut self, key: KeyEvent, engine: &Engine, keys: &Keymap) -> PaneAction {
        let page = self.page.get().max(1) as isize;
        let Some(action) = keys.action(Scope::Scheduled, &key) else {
            return PaneAction::None;
        };
        let store = engine.reader();
        let moved = match action {
            Action::Back => return PaneAction::Close,
            Action::Up => self.move_by(-1, store),
            Action::Down => self.move_by(1, store),
            Action::PageUpList => self.move_by(-page, store),
            Action::PageDownList => self.move_by(page, store),
            Action::First => self.first(store),
            Action::Last => self.last(store),
            _ => Ok(()),
        };
        if let Err(e) = moved {
            return PaneAction::Error(error_line(&e));
        }
        match action {
            Action::ShowFinished => {
                self.show_all = !self.show_all;
                return match self.refresh_with(engine) {
                    Ok(()) => PaneAction::None,
                    Err(e) => PaneAction::Error(error_line(&e)),
                };
            }
            Action::Jump => {
                let Some(row) = self.selected_row() else {
                    return PaneAction::None;
                };
                return match (row.item.conversation_id, &row.conversation) {
                    (Some(cid), Some(_)) => PaneAction::Jump(cid),
                    _ => PaneAction::Info(format!(
                        "#{}: its conversation was deleted{}",
                        row.item.id,
                        if row.item.kind == Kind::Task {
                            "; the task will open a new one"
                        } else {
                            ""
                        }
                    )),
                };
            }
            Action::RescheduleItem => return self.item_key('r', engine),
            Action::EditItem => return self.item_key('e', engine),
            Action::CancelItem => return self.item_key('x', engine),
            Action::SendNow => return self.item_key('s', engine),
            Action::RetryItem => return self.item_key('R', engine),
            Action::PauseSeries => return self.item_key('p', engine),
            Action::SkipNext => return self.item_key('n', engine),
            _ => {}
        }
        PaneAction::None
    }

    /// The keys that act on the selected item.
    fn item_key(&mut self, c: char, engine: &Engine) -> PaneAction {
        let Some(row) = self.selected_row() else {
            return PaneAction::None;
        };
        if let Some(v) = &row.series {
            return self.series_key(c, engine, v.clone());
        }
        if let Some(a) = &row.approval {
            return PaneAction::Info(format!(
                "approval {} waits for your answer in its conversation: Enter goes there",
                a.id
            ));
        }
        let id = row.item.id;
        let seen = row.item.updated_at;
        let status = row.item.status;
        // Refuse up front what the store would refuse, with the reason, so
        // nobody types a new time or text only to have it thrown away.
        let open = matches!(status, Status::Pending | Status::Failed | Status::Expired);
        let why_not = || match status {
            Status::Sending => format!("#{id} is being sent right now"),
            Status::Sent => format!("#{id} was already sent"),
            Status::Canceled => format!("#{id} is canceled (r reschedules it, R sends it again)"),
            _ => format!("#{id} can't be changed now"),
        };
        match c {
            'r' if open || status == Status::Canceled => {
                self.mode = Mode::Reschedule {
                    id,
                    seen,
                    input: Box::new(TimeInput::new()),
                };
                PaneAction::None
            }
            'e' if open => {
                let editor = editor_for(&row.item.text);
                self.mode = Mode::Edit {
                    id,
                    seen,
                    editor: Box::new(editor),
                    error: None,
                };
                PaneAction::None
            }
            'x' if open => {
                self.mode = Mode::ConfirmCancel { id, seen };
                PaneAction::None
            }
            's' if open => {
                let conv = row
                    .conversation
                    .clone()
                    .unwrap_or_else(|| "its conversation".to_string());
                self.act(
                    engine,
                    move |e| e.act_on_item(id, seen, ItemAction::SendNow),
                    format!("#{id} will be sent as soon as {conv} is free"),
                )
            }
            'R' if matches!(status, Status::Failed | Status::Expired | Status::Canceled) => self
                .act(
                    engine,
                    move |e| e.act_on_item(id, seen, ItemAction::Retry),
                    format!("#{id} will be sent again"),
                ),
            'R' if status == Status::Pending => {
                PaneAction::Info(format!("#{id} is still waiting to be sent; s sends it now"))
            }
            _ => PaneAction::Info(why_not()),
        }
    }

    fn is_series(&self, id: i64) -> bool {
        self.index_of(id)
            .and_then(|i| self.list.get(i))
            .is_some_and(|r| r.series.is_some())
    }

    /// The keys on a recurring series: pause/resume, skip next, edit text,
    /// edit rule, end, send one extra occurrence now.
    fn series_key(&mut self, c: char, engine: &Engine, v: crate::engine::SeriesView) -> PaneAction {
        use crate::store::SeriesStatus;
        let id = v.series.id;
        if v.series.status == SeriesStatus::Ended {
            return PaneAction::Info(format!("series #{id} has ended"));
        }
        match c {
            'p' if v.series.status == SeriesStatus::Paused => {
                self.act(engine, move |e| e.resume_series(id), format!("series #{id} resumed"))
            }
            'p' => self.act(engine, move |e| e.pause_series(id), format!("series #{id} paused")),
            'n' => self.write(engine, move |e| e.skip_next(id), move |pane, engine, r| match r {
                Ok(Some(next)) => {
                    let when = engine.show_time(next);
                    pane.reload(engine, format!("series #{id}: skipped one; next {when}"))
                }
                Ok(None) => pane.reload(engine, format!("series #{id}: skipped its last occurrence; it has ended")),
                Err(e) => PaneAction::Error(error_line(&e)),
            }),
            'e' => {
                let editor = editor_for(&v.series.text);
                self.mode = Mode::Edit {
                    id,
                    seen: v.series.updated_at,
                    editor: Box::new(editor),
                    error: None,
                };
                PaneAction::None
            }
            'r' => {
                let mut input = TextArea::new(vec![sanitize(&v.series.rule).into_owned()]);
                input.set_cursor_line_style(Style::default());
                input.move_cursor(ratatui_textarea::CursorMove::End);
                let preview = rule_preview(engine, &v.series.rule);
                self.mode = Mode::Rule {
                    id,
                    input: Box::new(input),
                    preview,
                };
                PaneAction::None
            }
            'x' => {
                self.mode = Mode::ConfirmCancel {
                    id,
                    seen: v.series.updated_at,
                };
                PaneAction::None
            }
            's' => self.write(engine, move |e| e.send_series_now(id), move |pane, engine, r| match r {
                Ok(item) => pane.reload(engine, format!("series #{id}: one extra occurrence (#{item}) sent as soon as its conversation is free")),
                Err(e) => PaneAction::Error(error_line(&e)),
            }),
            'R' => PaneAction::Info(format!("series #{id}: s sends one occurrence now")),
            _ => PaneAction::None,
        }
    }

    fn rule_key(
        &mut self,
        key: KeyEvent,
        engine: &Engine,
        id: i64,
        mut input: Box<TextArea<'static>>,
        preview: Result<String, String>,
    ) -> PaneAction {
        match key.code {
            KeyCode::Esc => PaneAction::None,
            KeyCode::Enter => {
                let expr = input.lines().join(" ");
                let rule = expr.trim().to_string();
                self.write(
                    engine,
                    move |e| e.edit_series_rule(id, &rule),
                    move |pane, engine, r| match r {
                        Ok(()) => pane.reload(
                            engine,
                            format!("series #{id}: {}", preview.unwrap_or_default()),
                        ),
                        Err(e) => {
                            // Kept open: the user fixes the rule rather than retyping it.
                            let line = error_line(&e);
                            pane.mode = Mode::Rule {
                                id,
                                input,
                                preview: Err(line.clone()),
                            };
                            PaneAction::Error(line)
                        }
                    },
                )
            }
            _ => {
                if key.code == KeyCode::Char('u') && key.modifiers.contains(KeyModifiers::CONTROL) {
                    input.delete_line_by_head();
                } else {
                    input.input(key);
                }
                let preview = rule_preview(engine, &input.lines().join(" "));
                self.mode = Mode::Rule { id, input, preview };
                PaneAction::None
            }
        }
    }

    fn render_rule(
        &self,
        area: Rect,
        buf: &mut Buffer,
        id: i64,
        input: &TextArea<'static>,
        preview: &Result<String, String>,
    ) {
        let popup = above_footer(area, area.width.saturating_sub(4).min(72), 8);
        let inner = popup_frame(
            popup,
            buf,
            &format!(" New rule for series #{id} "),
            palette().accent,
        );
        if inner.height < 4 {
            return;
        }
        let w = inner.width as usize;
        if let Some(row) = self.index_of(id).and_then(|i| self.list.get(i)) {
            buf.set_stringn(
                inner.x,
                inner.y,
                elide(&row.summary, w),
                w,
                Style::default(),
            );
        }
        let field = Rect::new(inner.x, inner.y + 1, inner.width, 1);
        input.render(field, buf);
        let (text, style) = match preview {
            Ok(p) => (format!("↻ {p}"), Style::default().fg(palette().accent)),
            Err(e) => (format!("✗ {e}"), Style::default().fg(palette().error)),
        };
        Paragraph::new(text)
            .style(style)
            .wrap(Wrap { trim: true })
            .render(
                Rect::new(
                    inner.x,
                    inner.y + 2,
                    inner.width,
                    inner.height.saturating_sub(3),
                ),
                buf,
            );
        let footer = footer_line(&[("Enter", "save"), ("Esc", "cancel")], POPUP_SEP);
        buf.set_line(inner.x, inner.y + inner.height - 1, &footer, inner.width);
    }

    /// Reload after a change and report it.
    fn reload(&mut self, engine: &Engine, done: String) -> PaneAction {
        match self.refresh_with(engine) {
            Ok(()) => PaneAction::Info(done),
            Err(e) => PaneAction::Error(error_line(&e)),
        }
    }

    fn reschedule_key(
        &mut self,
        key: KeyEvent,
        engine: &Engine,
        now: DateTime<FixedOffset>,
        (id, seen): (i64, i64),
        mut input: Box<TimeInput>,
    ) -> PaneAction {
        match key.code {
            KeyCode::Esc => PaneAction::None,
            KeyCode::Enter => match input.parse(&now) {
                Err(e) => {
                    input.set_error(e);
                    self.mode = Mode::Reschedule { id, seen, input };
                    PaneAction::None
                }
                Ok(due) => self.write(
                    engine,
                    move |e| {
                        e.act_on_item(id, seen, ItemAction::Reschedule(due.timestamp_millis()))
                    },
                    move |pane, engine, r| match r {
                        Ok(()) => pane.reload(
                            engine,
                            format!("#{id} rescheduled: {}", when::preview(due, &now)),
                        ),
                        Err(e) => {
                            // Kept open: the user fixes the time rather than retyping it.
                            let line = error_line(&e);
                            input.set_error(line.clone());
                            pane.mode = Mode::Reschedule { id, seen, input };
                            PaneAction::Error(line)
                        }
                    },
                ),
            },
            _ => {
                input.input(key);
                self.mode = Mode::Reschedule { id, seen, input };
                PaneAction::None
            }
        }
    }

    fn edit_key(
        &mut self,
        key: KeyEvent,
        engine: &Engine,
        (id, seen): (i64, i64),
        mut editor: Box<TextArea<'static>>,
        error: Option<String>,
    ) -> PaneAction {
        let m = key.modifiers;
        let newline = (key.code == KeyCode::Enter
            && m.intersects(KeyModifiers::ALT | KeyModifiers::SHIFT))
            || (m.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('j'));
        let save = !newline
            && (key.code == KeyCode::Enter
                || (m.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('s')));
        if key.code == KeyCode::Esc {
            return PaneAction::None;
        }
        if newline {
            editor.insert_newline();
            self.mode = Mode::Edit {
                id,
                seen,
                editor,
                error: None,
            };
            return PaneAction::None;
        }
        if save {
            // The store refuses an empty text; the editor stays open either way.
            let text = editor.lines().join("\n");
            let series = self.is_series(id);
            return self.write(
                engine,
                move |e| {
                    if series {
                        e.edit_series_text(id, &text)
                    } else {
                        e.act_on_item(id, seen, ItemAction::Edit(text))
                    }
                },
                move |pane, engine, r| match r {
                    Ok(()) => pane.reload(engine, format!("#{id} saved")),
                    Err(e) => {
                        let line = error_line(&e);
                        pane.mode = Mode::Edit {
                            id,
                            seen,
                            editor,
                            error: Some(line.clone()),
                        };
                        PaneAction::Error(line)
                    }
                },
            );
        }
        // Readline: Ctrl+U kills to the start of the line (the textarea makes it undo).
        let changed = if key.code == KeyCode::Char('u') && m.contains(KeyModifiers::CONTROL) {
            editor.delete_line_by_head()
        } else {
            editor.input(key)
        };
        self.mode = Mode::Edit {
            id,
            seen,
            editor,
            error: if changed { None } else { error },
        };
        PaneAction::None
    }

    fn confirm_key(&mut self, key: KeyEvent, engine: &Engine, id: i64, seen: i64) -> PaneAction {
        match key.code {
            KeyCode::Char('y' | 'Y') if self.is_series(id) => self.act(
                engine,
                move |e| e.end_series(id),
                format!("series #{id} ended"),
            ),
            KeyCode::Char('y' | 'Y') => self.act(
                engine,
                move |e| e.act_on_item(id, seen, ItemAction::Cancel),
                format!("#{id} canceled"),
            ),
            KeyCode::Char('n' | 'N') | KeyCode::Esc => PaneAction::None,
            // Anything else: still asking.
            _ => {
                self.mode = Mode::ConfirmCancel { id, seen };
                PaneAction::None
            }
        }
    }

    // ---------------------------------------------------------------------
    // Rendering: a pure function of the state and `now`.
    // ---------------------------------------------------------------------

    pub fn render(&self, area: Rect, buf: &mut Buffer, now: DateTime<FixedOffset>) {
        self.render_with(area, buf, now, &DEFAULT_KEYS);
    }

    /// Draw with the user's keymap in the footer.
    pub fn render_with(
        &self,
        area: Rect,
        buf: &mut Buffer,
        now: DateTime<FixedOffset>,
        keys: &Keymap,
    ) {
        if area.width < 10 || area.height < 3 {
            return;
        }
        Clear.render(area, buf);
        let mut title = vec![
            Span::styled(" Scheduled ", Style::default().add_modifier(Modifier::BOLD)),
            Span::styled(
                format!("· {} ", self.count()),
                Style::default().fg(palette().accent),
            ),
        ];
        if self.show_all {
            let finished = self.list.finished();
            title.push(Span::styled(
                format!("· showing {finished} finished "),
                Style::default().fg(palette().dim),
            ));
        }
        // Top rule only: a full-screen overlay needs no side borders, and
        // 80 columns need every one of them.
        let block = Block::default()
            .borders(Borders::TOP)
            .border_style(Style::default().fg(palette().dim))
            .title(Line::from(title));
        let inner = block.inner(area);
        block.render(area, buf);

        let footer_y = inner.y + inner.height - 1;
        buf.set_line(
            inner.x,
            footer_y,
            &self.footer(inner.width, keys),
            inner.width,
        );
        let body = Rect::new(inner.x, inner.y, inner.width, inner.height - 1);

        if self.list.is_empty() {
            self.render_empty(body, buf);
        } else {
            self.render_table(body, buf, &now);
        }

        match &self.mode {
            Mode::List => {}
            Mode::Reschedule { id, input, .. } => {
                self.render_reschedule(area, buf, &now, *id, input)
            }
            Mode::Edit {
                id, editor, error, ..
            } => self.render_edit(area, buf, *id, editor, error.as_deref()),
            Mode::ConfirmCancel { id, .. } => self.render_confirm(area, buf, *id),
            Mode::Rule { id, input, preview } => self.render_rule(area, buf, *id, input, preview),
        }
    }

    fn render_empty(&self, area: Rect, buf: &mut Buffer) {
        let hint = if self.show_all {
            "Nothing here yet. Type /later 10m <text> or /at 9am <text>, or press Ctrl+T in the composer."
        } else {
            "Nothing scheduled. Type /later 10m <text> or /at 9am <text>, or press Ctrl+T in the composer."
        };
        if area.height < 2 {
            return;
        }
        let text = Rect::new(area.x + 1, area.y + 1, area.width - 1, area.height - 1);
        Paragraph::new(Span::styled(hint, Style::default().fg(palette().dim)))
            .wrap(Wrap { trim: true })
            .render(text, buf);
    }

    fn render_table(&self, area: Rect, buf: &mut Buffer, now: &DateTime<FixedOffset>) {
        let now_ms = now.timestamp_millis();
        // The detail lines (full text, state in words, last error) need a rule
        // and two rows; on very short terminals the list gets them instead.
        let detail_rows: u16 = if area.height >= 8 { 3 } else { 0 };
        let list_height = area.height.saturating_sub(1 + detail_rows) as usize;

        let selected = self.selected_index().unwrap_or(0);
        let offset = scroll_offset(self.offset.get(), selected, list_height, self.list.len());
        self.offset.set(offset);
        self.page.set(list_height);
        // Only the rows in the window (and the selected one, for its
        // details) are formatted: a list of 100,000 costs what a screen does.
        let end = (offset + list_height).min(self.list.len());
        let window: Vec<Cells> = self
            .list
            .rows(offset, end)
            .map(|r| cells(r, now, now_ms))
            .collect();
        let cell =
            |i: usize| -> Option<&Cells> { i.checked_sub(offset).and_then(|k| window.get(k)) };
        let selected_cells = match self.list.get(selected) {
            Some(r) if cell(selected).is_none() => Some(cells(r, now, now_ms)),
            _ => None,
        };
        let due_w = window
            .iter()
            .map(|c| c.due.width())
            .max()
            .unwrap_or(0)
            .max(3) as u16;
        let rel_w = window.iter().map(|c| c.rel.width()).max().unwrap_or(0) as u16;
        let id_w = window
            .iter()
            .map(|c| c.id.width())
            .max()
            .unwrap_or(0)
            .max(1) as u16;
        let cols = columns(area.width, id_w, due_w, rel_w);

        let header = Style::default()
            .fg(palette().dim)
            .add_modifier(Modifier::BOLD);
        let mut x = area.x + GUTTER;
        for (col, w) in &cols {
            put(
                buf,
                x,
                area.y,
                col.header(*w),
                *w,
                header,
                *col == Col::Tries,
            );
            x += w + 1;
        }

        for (line, i) in (offset..end).enumerate() {
            let y = area.y + 1 + line as u16;
            let Some(row) = self.list.get(i) else { break };
            let Some(c) = cell(i) else { break };
            let is_sel = i == selected;
            if is_sel {
                buf.set_style(
                    Rect::new(area.x, y, area.width, 1),
                    Style::default().bg(palette().selection),
                );
                buf.set_stringn(
                    area.x,
                    y,
                    "›",
                    1,
                    Style::default()
                        .fg(palette().accent)
                        .add_modifier(Modifier::BOLD),
                );
            }
            let mut x = area.x + GUTTER;
            for (col, w) in &cols {
                let (text, style): (&str, Style) = match col {
                    Col::Id => (&c.id, Style::default().fg(palette().dim)),
                    Col::Due => (&c.due, Style::default()),
                    Col::Rel => (&c.rel, Style::default().fg(palette().dim)),
                    Col::Conv => (&c.conv, conv_style(row)),
                    Col::Kind if row.approval.is_some() => {
                        ("approval", Style::default().fg(palette().warning))
                    }
                    Col::Kind if row.series.is_some() => {
                        ("recurring", Style::default().fg(palette().accent))
                    }
                    Col::Kind => (row_kind(row.item.kind), kind_style(row.item.kind)),
                    Col::State => (c.state.label(), c.state.style()),
                    Col::Tries => (
                        &c.tries,
                        if row.item.attempts > 0 {
                            Style::default()
                        } else {
                            Style::default().fg(palette().dim)
                        },
                    ),
                    Col::Text => (&row.summary, Style::default()),
                };
                let style = if is_sel {
                    style.add_modifier(Modifier::BOLD)
                } else {
                    style
                };
                let right = matches!(col, Col::Tries);
                put(buf, x, y, text, *w, style, right);
                x += w + 1;
            }
        }

        // A prompt covers the detail lines and repeats what they say; half
        // of them peeking out around it would only be noise.
        if detail_rows > 0
            && matches!(self.mode, Mode::List)
            && let Some(row) = self.selected_row()
        {
            let y = area.y + area.height - detail_rows;
            buf.set_stringn(
                area.x,
                y,
                "─".repeat(area.width as usize),
                area.width as usize,
                Style::default().fg(palette().dim),
            );
            self.render_detail(
                Rect::new(area.x, y + 1, area.width, 2),
                buf,
                row,
                match (cell(selected), &selected_cells) {
                    (Some(c), _) => c,
                    (None, Some(c)) => c,
                    (None, None) => return,
                },
                now,
            );
        }
    }

    /// Two lines about the selected item: its whole text, and its state in words.
    fn render_detail(
        &self,
        area: Rect,
        buf: &mut Buffer,
        row: &Row,
        c: &Cells,
        now: &DateTime<FixedOffset>,
    ) {
        let w = area.width as usize;
        let it = &row.item;
        let kind = if row.series.is_some() {
            "recurring"
        } else if row.approval.is_some() {
            "approval"
        } else {
            row_kind(it.kind)
        };
        let head = format!("#{} {kind} in {}: ", c.id, c.conv);
        let line = Line::from(vec![
            Span::styled(head.clone(), Style::default().fg(palette().dim)),
            Span::raw(elide(&row.summary, w.saturating_sub(head.width()))),
        ]);
        buf.set_line(area.x, area.y, &line, area.width);

        let now_ms = now.timestamp_millis();
        let err = row.error.as_deref().unwrap_or("no reason recorded");
        let plural = |n: i64| if n == 1 { "" } else { "s" };
        let series_line = row.series.as_ref().map(|v| {
            let next = v
                .upcoming
                .first()
                .map(|t| format!(" · next {}", when::preview(utc(*t), now)))
                .unwrap_or_default();
            format!(
                "{}{next} · {} sent, {} skipped · p pause · n skip · r rule",
                v.description, v.series.occurrences, v.series.skipped
            )
        });
        let text = match c.state {
            _ if series_line.is_some() => series_line.unwrap_or_default(),
            State::Scheduled => format!(
                "scheduled: sends {}",
                it.due_at
                    .map(|d| when::preview(utc(d), now))
                    .unwrap_or_default()
            ),
            State::Active | State::SeriesPaused | State::Ended => String::new(),
            State::Asking => "waits for your answer: Enter goes to its conversation".to_string(),
            State::Queued => "queued: sent as soon as its conversation is free".to_string(),
            State::Paused => "waiting: its conversation's queue was paused by a stop (Enter goes there to resume)".to_string(),
            State::Approval => "waiting: a tool call in its conversation needs your approval (Enter goes there)".to_string(),
            State::Retrying => format!(
                "attempt {} failed: {err} · next try {}",
                it.attempts,
                it.next_attempt_at
                    .map(|t| when::relative(t, now_ms))
                    .unwrap_or_default()
            ),
            State::Sending => format!("sending now (attempt {})", it.attempts.max(1)),
            State::Failed => format!(
                "failed after {} attempt{}: {err} · R retries",
                it.attempts,
                plural(it.attempts)
            ),
            State::Expired => format!("expired: {err} · R sends it now"),
            State::Sent => format!(
                "sent {}",
                it.sent_at
                    .map(|t| format!("{} ({})", absolute(utc(t), now), when::relative(t, now_ms)))
                    .unwrap_or_default()
            ),
            State::Canceled => match &row.error {
                Some(e) => format!("canceled: {e}"),
                None => "canceled".to_string(),
            },
        };
        buf.set_stringn(
            area.x,
            area.y + 1,
            elide(&text, w),
            w,
            c.state.style().remove_modifier(Modifier::DIM),
        );
    }

    fn footer(&self, width: u16, keys: &Keymap) -> Line<'static> {
        let finished = if self.show_all {
            "hide finished"
        } else {
            "show finished"
        };
        let k = |a: Action| keys.label(Scope::Scheduled, a);
        let (up, down) = (k(Action::Up), k(Action::Down));
        // "↑ / k" and "↓ / j" read as "↑↓/jk": the arrows first, then the letters.
        let split = |s: &str| -> (String, String) {
            let mut parts = s.split(" / ");
            (
                parts.next().unwrap_or("").to_string(),
                parts.collect::<Vec<_>>().join(""),
            )
        };
        let ((ua, ul), (da, dl)) = (split(&up), split(&down));
        let mv = format!("{ua}{da}/{dl}{ul}");
        let mv_short = format!("{dl}{ul}");
        let first = |a: Action| k(a).split(" / ").next().unwrap_or("").to_string();
        let (r, e, x, s, rr, jump, all, close) = (
            first(Action::RescheduleItem),
            first(Action::EditItem),
            first(Action::CancelItem),
            first(Action::SendNow),
            first(Action::RetryItem),
            first(Action::Jump).replace("Enter", "⏎"),
            first(Action::ShowFinished),
            first(Action::Back),
        );
        // Longest first, roomy spacing first; the first that fits is shown,
        // so 80 columns still list every key.
        let variants: [Vec<(&str, &str)>; 3] = [
            vec![
                (&mv, "select"),
                (&r, "reschedule"),
                (&e, "edit"),
                (&x, "cancel"),
                (&s, "send now"),
                (&rr, "retry"),
                (&jump, "jump"),
                (&all, finished),
                (&close, "close"),
            ],
            vec![
                (&mv, "move"),
                (&r, "resched"),
                (&e, "edit"),
                (&x, "cancel"),
                (&s, "send"),
                (&rr, "retry"),
                (&jump, "jump"),
                (&all, "finished"),
                (&close, "close"),
            ],
            vec![
                (&mv_short, ""),
                (&r, "time"),
                (&e, "edit"),
                (&x, "cancel"),
                (&s, "send"),
                (&rr, "retry"),
                (&jump, "go"),
                (&all, "all"),
                (&close, ""),
            ],
        ];
        for keys in &variants {
            for sep in ["  ", " "] {
                let line = footer_line(keys, sep);
                if line.width() <= width as usize {
                    return line;
                }
            }
        }
        footer_line(&variants[2], " ")
    }

    fn render_reschedule(
        &self,
        area: Rect,
        buf: &mut Buffer,
        now: &DateTime<FixedOffset>,
        id: i64,
        input: &TimeInput,
    ) {
        let popup = above_footer(area, area.width.saturating_sub(4).min(66), 9);
        let inner = popup_frame(popup, buf, &format!(" Reschedule #{id} "), palette().accent);
        if inner.height < 3 {
            return;
        }
        let w = inner.width as usize;
        let row = self.index_of(id).and_then(|i| self.list.get(i));
        if let Some(row) = row {
            buf.set_stringn(
                inner.x,
                inner.y,
                elide(&row.summary, w),
                w,
                Style::default(),
            );
            let current = match row.item.due_at {
                Some(d) if d > now.timestamp_millis() => {
                    format!("now due {}", when::preview(utc(d), now))
                }
                Some(d) => format!("was due {}", when::preview(utc(d), now)),
                None => "now: as soon as possible".to_string(),
            };
            buf.set_stringn(
                inner.x,
                inner.y + 1,
                elide(&current, w),
                w,
                Style::default().fg(palette().dim),
            );
        }
        let rows = inner.height.saturating_sub(3).min(3);
        input.render(
            Rect::new(inner.x, inner.y + 2, inner.width, rows),
            buf,
            now,
            true,
        );
        let footer = footer_line(&[("Enter", "confirm"), ("Esc", "cancel")], POPUP_SEP);
        buf.set_line(inner.x, inner.y + inner.height - 1, &footer, inner.width);
    }

    fn render_edit(
        &self,
        area: Rect,
        buf: &mut Buffer,
        id: i64,
        editor: &TextArea<'static>,
        error: Option<&str>,
    ) {
        let height = area.height.saturating_sub(2).min(14);
        let popup = centered(area, area.width.saturating_sub(4).min(78), height);
        let inner = popup_frame(popup, buf, &format!(" Edit #{id} "), palette().accent);
        if inner.height < 2 {
            return;
        }
        let text_area = Rect::new(inner.x, inner.y, inner.width, inner.height - 1);
        editor.render(text_area, buf);
        let y = inner.y + inner.height - 1;
        match error {
            Some(e) => {
                buf.set_stringn(
                    inner.x,
                    y,
                    elide(e, inner.width as usize),
                    inner.width as usize,
                    Style::default().fg(palette().error),
                );
            }
            None => {
                let footer = footer_line(
                    &[
                        ("Enter", "save"),
                        ("Alt+Enter", "new line"),
                        ("Esc", "discard"),
                    ],
                    POPUP_SEP,
                );
                buf.set_line(inner.x, y, &footer, inner.width);
            }
        }
    }

    fn render_confirm(&self, area: Rect, buf: &mut Buffer, id: i64) {
        let popup = above_footer(area, area.width.saturating_sub(4).min(60), 5);
        let inner = popup_frame(popup, buf, " Cancel ", palette().error);
        if inner.height < 1 {
            return;
        }
        let w = inner.width as usize;
        let q = Line::from(vec![
            Span::styled(
                format!("Cancel item {id}? "),
                Style::default().add_modifier(Modifier::BOLD),
            ),
            Span::styled(
                "y/n",
                Style::default()
                    .fg(palette().error)
                    .add_modifier(Modifier::BOLD),
            ),
        ]);
        buf.set_line(inner.x, inner.y, &q, inner.width);
        if inner.height >= 2
            && let Some(row) = self.index_of(id).and_then(|i| self.list.get(i))
        {
            buf.set_stringn(
                inner.x,
                inner.y + 1,
                elide(&row.summary, w),
                w,
                Style::default().fg(palette().dim),
            );
        }
        if inner.height >= 3 {
            let footer = footer_line(&[("y", "cancel it"), ("n/Esc", "keep it")], POPUP_SEP);
            buf.set_line(inner.x, inner.y + inner.height - 1, &footer, inner.width);
        }
    }
}

// -------------------------------------------------------------------------
// Cells and columns
// -------------------------------------------------------------------------

/// Width of the selection marker column on the left.
const GUTTER: u16 = 2;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Col {
    Id,
    Due,
    Rel,
    Conv,
    Kind,
    State,
    Tries,
    Text,
}

impl Col {
    fn header(self, width: u16) -> &'static str {
        match self {
            Col::Id => "#",
            Col::Due => "due",
            Col::Rel => "",
            Col::Conv if width < 12 => "conv",
            Col::Conv => "conversation",
            Col::Kind => "kind",
            Col::State => "state",
            Col::Tries => "tries",
            Col::Text => "text",
        }
    }
}

/// Which columns fit in `width`, and how wide each is. Columns are dropped
/// least useful first (the id and attempt count are in the detail lines, the
/// kind and relative time are nice to have); the text and conversation
/// columns share what is left.
fn columns(width: u16, id_w: u16, due_w: u16, rel_w: u16) -> Vec<(Col, u16)> {
    const CONV_MIN: u16 = 10;
    const CONV_MAX: u16 = 24;
    // Below this the text is unreadable: optional columns go first.
    const TEXT_MIN: u16 = 20;
    let mut cols = vec![
        (Col::Id, id_w),
        (Col::Due, due_w),
        (Col::Rel, rel_w),
        (Col::Conv, CONV_MIN),
        (Col::Kind, 9),
        (Col::State, 9),
        (Col::Tries, 5),
        (Col::Text, TEXT_MIN),
    ];
    if rel_w == 0 {
        cols.retain(|(c, _)| *c != Col::Rel);
    }
    let avail = width.saturating_sub(GUTTER);
    let need = |cols: &[(Col, u16)]| -> u16 {
        cols.iter().map(|(_, w)| w).sum::<u16>() + cols.len().saturating_sub(1) as u16
    };
    for drop in [Col::Id, Col::Tries, Col::Kind, Col::Rel, Col::Conv] {
        if need(&cols) <= avail {
            break;
        }
        cols.retain(|(c, _)| *c != drop);
    }
    let extra = avail.saturating_sub(need(&cols));
    // Half the slack to the conversation title (up to a cap), the rest to
    // the text.
    let conv_extra = (extra / 2).min(CONV_MAX - CONV_MIN);
    let has_conv = cols.iter().any(|(c, _)| *c == Col::Conv);
    let text_extra = if has_conv { extra - conv_extra } else { extra };
    for (c, w) in cols.iter_mut() {
        match c {
            Col::Conv => *w += conv_extra,
            Col::Text => *w += text_extra,
            _ => {}
        }
    }
    // Too narrow even without the optional columns: the text takes what is left.
    let over = need(&cols).saturating_sub(avail);
    if over > 0
        && let Some((_, w)) = cols.iter_mut().find(|(c, _)| *c == Col::Text)
    {
        *w = w.saturating_sub(over);
    }
    cols
}

/// The first visible row: unchanged unless the selection would leave the
/// window, so moving within a page does not scroll.
fn scroll_offset(prev: usize, selected: usize, height: usize, len: usize) -> usize {
    if height == 0 {
        return selected;
    }
    let mut off = prev.min(len.saturating_sub(height));
    if selected < off {
        off = selected;
    } else if selected >= off + height {
        off = selected + 1 - height;
    }
    off
}

/// How a row's state reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Pending, due in the future.
    Scheduled,
    /// Pending and due: waits for its conversation (or the dispatcher).
    Queued,
    /// A tool call waiting for the user's answer.
    Asking,
    /// A recurring series that fires.
    Active,
    /// A recurring series paused by the user.
    SeriesPaused,
    /// A recurring series that has ended.
    Ended,
    /// Its conversation's queue was paused by a stop.
    Paused,
    /// Waits for a tool call's approval in its conversation.
    Approval,
    /// Pending after a failed attempt, waiting out its back-off.
    Retrying,
    Sending,
    Failed,
    Expired,
    Sent,
    Canceled,
}

impl State {
    /// From the engine's one item state (the strip, the status bar and
    /// `tock list` show the same).
    fn of(item: &OutboxItem, now_ms: i64, gate: ConversationGate) -> Self {
        match crate::engine::item_state(item, now_ms, gate) {
            ItemState::Retrying { .. } => State::Retrying,
            ItemState::Scheduled { .. } => State::Scheduled,
            ItemState::Queued => State::Queued,
            ItemState::Paused => State::Paused,
            ItemState::AwaitingApproval => State::Approval,
            ItemState::RunningTool => State::Queued,
            ItemState::Sending => State::Sending,
            ItemState::Failed { .. } => State::Failed,
            ItemState::Expired => State::Expired,
            ItemState::Sent => State::Sent,
            ItemState::Canceled => State::Canceled,
        }
    }

    fn label(self) -> &'static str {
        match self {
            State::Scheduled => "scheduled",
            State::Queued => "queued",
            State::Paused => "paused",
            State::Active => "active",
            State::Asking => "asking",
            State::SeriesPaused => "paused",
            State::Ended => "ended",
            State::Approval => "approval",
            State::Retrying => "retrying",
            State::Sending => "sending",
            State::Failed => "failed",
            State::Expired => "expired",
            State::Sent => "sent",
            State::Canceled => "canceled",
        }
    }

    fn style(self) -> Style {
        let s = Style::default();
        match self {
            State::Scheduled => s.fg(palette().accent),
            State::Queued => s.fg(palette().info),
            State::Paused | State::Approval | State::SeriesPaused => s.fg(palette().warning),
            State::Active => s.fg(palette().accent),
            State::Asking => s.fg(palette().warning).add_modifier(Modifier::BOLD),
            State::Ended => s.add_modifier(Modifier::DIM),
            State::Retrying => s.fg(palette().warning),
            State::Sending => s.fg(palette().info).add_modifier(Modifier::BOLD),
            State::Failed => s.fg(palette().error).add_modifier(Modifier::BOLD),
            State::Expired => s.fg(palette().special),
            State::Sent => s.fg(palette().success).add_modifier(Modifier::DIM),
            State::Canceled => s.add_modifier(Modifier::DIM),
        }
    }
}

/// The time-dependent text of a row, computed per frame.
struct Cells {
    id: String,
    due: String,
    rel: String,
    conv: String,
    state: State,
    tries: String,
}

fn cells(row: &Row, now: &DateTime<FixedOffset>, now_ms: i64) -> Cells {
    let it = &row.item;
    let (due, rel) = match it.due_at {
        Some(d) => (absolute(utc(d), now), when::relative(d, now_ms)),
        // A series with no next occurrence has ended; an approval has no time.
        None if row.series.is_some() || row.approval.is_some() => ("—".to_string(), String::new()),
        None => ("asap".to_string(), String::new()),
    };
    Cells {
        id: match &row.approval {
            Some(a) => format!("a{}", a.id),
            None => it.id.to_string(),
        },
        due,
        rel,
        conv: row
            .conversation
            .clone()
            .unwrap_or_else(|| "(deleted)".to_string()),
        state: match row.series.as_ref().map(|v| v.series.status) {
            _ if row.approval.is_some() => State::Asking,
            Some(crate::store::SeriesStatus::Active) => State::Active,
            Some(crate::store::SeriesStatus::Paused) => State::SeriesPaused,
            Some(crate::store::SeriesStatus::Ended) => State::Ended,
            None => State::of(it, now_ms, row.gate),
        },
        tries: it.attempts.to_string(),
    }
}

/// An editor on `text`, cursor at its end. Shown, so made safe; saving
/// then stores the safe form, which only differs for text with control
/// codes (made visible) or tabs (expanded).
fn editor_for(text: &str) -> TextArea<'static> {
    let lines: Vec<String> = sanitize(text).lines().map(str::to_string).collect();
    let mut editor = TextArea::new(lines);
    editor.set_cursor_line_style(Style::default());
    editor.move_cursor(ratatui_textarea::CursorMove::Bottom);
    editor.move_cursor(ratatui_textarea::CursorMove::End);
    editor
}

/// The preview of a rule being typed: in words with its next occurrences, or why not.
fn rule_preview(engine: &Engine, expr: &str) -> Result<String, String> {
    engine
        .parse_schedule(expr)
        .map(|s| {
            format!(
                "{} — {}",
                engine.describe_schedule(&s),
                engine.preview_schedule(&s, 3)
            )
        })
        .map_err(|e| e.to_string())
}

fn row_kind(kind: Kind) -> &'static str {
    match kind {
        Kind::Regenerate => "reply",
        k => k.as_str(),
    }
}

fn kind_style(kind: Kind) -> Style {
    match kind {
        Kind::Task => Style::default().fg(palette().special),
        Kind::Message => Style::default(),
        _ => Style::default().fg(palette().dim),
    }
}

fn conv_style(row: &Row) -> Style {
    if row.conversation.is_none() {
        Style::default()
            .fg(palette().dim)
            .add_modifier(Modifier::ITALIC)
    } else {
        Style::default()
    }
}

/// Write `text` elided to `width` cells, left- or right-aligned.
fn put(buf: &mut Buffer, x: u16, y: u16, text: &str, width: u16, style: Style, right: bool) {
    if width == 0 {
        return;
    }
    let s = elide(text, width as usize);
    let pad = if right {
        width.saturating_sub(s.width() as u16)
    } else {
        0
    };
    buf.set_stringn(x + pad, y, s, (width - pad) as usize, style);
}

/// A popup at the bottom of the pane, over the detail lines (the popup says
/// which item it is about) rather than over the list, and leaving the footer.
fn above_footer(area: Rect, width: u16, height: u16) -> Rect {
    let height = height.min(area.height.saturating_sub(1));
    let width = width.min(area.width);
    Rect::new(
        area.x + (area.width - width) / 2,
        area.y + area.height - 1 - height,
        width,
        height,
    )
}

/// A bordered popup over whatever is below it; returns its inside.
fn popup_frame(popup: Rect, buf: &mut Buffer, title: &str, color: Color) -> Rect {
    Clear.render(popup, buf);
    let block = Block::bordered()
        .title(Span::styled(
            title.to_string(),
            Style::default().add_modifier(Modifier::BOLD),
        ))
        .border_style(Style::default().fg(color));
    let inner = block.inner(popup);
    block.render(popup, buf);
    inner
}

// -------------------------------------------------------------------------
// Text helpers
// -------------------------------------------------------------------------

fn utc(ms: i64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(ms).single().unwrap_or_default()
}

fn absolute(due: DateTime<Utc>, now: &DateTime<FixedOffset>) -> String {
    crate::when::absolute(due, now)
}

impl crate::tui::views::View for ScheduledPane {
    fn kind(&self) -> crate::tui::views::ViewKind {
        crate::tui::views::ViewKind::Scheduled
    }

    fn as_scheduled(&mut self) -> Option<&mut ScheduledPane> {
        Some(self)
    }

    fn handle_key(
        &mut self,
        key: KeyEvent,
        cx: &mut crate::tui::views::Cx<'_>,
    ) -> crate::tui::views::Outcome {
        let action = self.handle_key_with(key, &cx.model.engine, cx.now, cx.keys);
        let (intent, outcome) = action.into_intent();
        if let Some(i) = intent {
            cx.push(i);
        }
        outcome
    }

    fn handle_paste(
        &mut self,
        text: &str,
        _cx: &mut crate::tui::views::Cx<'_>,
    ) -> crate::tui::views::Outcome {
        self.paste(text);
        crate::tui::views::Outcome::Consumed
    }

    fn render(&self, area: Rect, buf: &mut Buffer, cx: &crate::tui::views::RenderCx<'_>) {
        Clear.render(area, buf);
        self.render_with(area, buf, cx.now, cx.keys);
    }

    fn refresh(&mut self, model: &crate::tui::model::Model) {
        if let Err(e) = self.refresh_with(&model.engine) {
            tracing::warn!("refreshing the scheduled list: {e:#}");
        }
    }

    fn next_change(&self, now_ms: i64) -> Option<i64> {
        // Relative times of the rows on screen count down; the soonest change
        // wins. Only those: the event loop asks on every turn, and walking
        // 100,000 rows each time cost tens of milliseconds per key.
        let from = self.offset.get();
        self.list
            .rows(from, from + self.page.get().max(1) + 1)
            .filter_map(|r| r.item.due_at.or(r.item.next_attempt_at))
            .filter_map(|d| crate::tui::views::label_change(d, now_ms))
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elide_counts_cells_not_bytes() {
        assert_eq!(elide("hello", 5), "hello");
        assert_eq!(elide("hello!", 5), "hell…");
        assert_eq!(elide("hello", 0), "");
        assert_eq!(elide("hello", 1), "…");
        // Each of these takes two cells: three fit in 7 with the ellipsis.
        assert_eq!(elide("日本語テキスト", 7), "日本語…");
        assert!(elide("日本語テキスト", 6).width() <= 6);
    }

    fn total(cols: &[(Col, u16)]) -> u16 {
        cols.iter().map(|(_, w)| w).sum::<u16>() + cols.len() as u16 - 1 + GUTTER
    }

    #[test]
    fn columns_fill_the_width_and_drop_optional_ones_first() {
        let wide = columns(200, 2, 16, 8);
        assert_eq!(wide.len(), 8);
        assert_eq!(total(&wide), 200);
        let conv = wide.iter().find(|(c, _)| *c == Col::Conv).unwrap().1;
        assert_eq!(conv, 24, "the title column stops growing at its cap");

        let eighty = columns(80, 2, 16, 8);
        let names: Vec<Col> = eighty.iter().map(|(c, _)| *c).collect();
        assert_eq!(
            names,
            [
                Col::Due,
                Col::Rel,
                Col::Conv,
                Col::Kind,
                Col::State,
                Col::Text
            ]
        );
        assert_eq!(total(&eighty), 80);

        // Tiny: the text column is squeezed, nothing overflows.
        let tiny = columns(30, 2, 16, 8);
        assert!(total(&tiny) <= 30 + 1, "{tiny:?}");
        assert!(tiny.iter().any(|(c, _)| *c == Col::Due));
    }

    #[test]
    fn scroll_keeps_the_window_until_the_selection_leaves_it() {
        // Moving within the window does not scroll.
        assert_eq!(scroll_offset(5, 7, 10, 30), 5);
        // Past the bottom: the selection becomes the last visible row.
        assert_eq!(scroll_offset(5, 15, 10, 30), 6);
        // Above the top: it becomes the first.
        assert_eq!(scroll_offset(5, 2, 10, 30), 2);
        // A list that shrank does not leave blank rows at the bottom.
        assert_eq!(scroll_offset(25, 8, 10, 12), 2);
    }
}
