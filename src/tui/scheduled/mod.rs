//! The F2 pane: every send tock will make later, across all conversations,
//! and the keys to change them.
//!
//! The outbox table is the truth; this pane is a view of it. It keeps
//! display-ready rows (sanitised once, at refresh) and asks the engine to
//! make every change, then reloads — so what it shows is always what the
//! database says, including changes made by the scheduler, the CLI or
//! another tock process (the app calls [`ScheduledPane::refresh`] on those
//! events).
//!
//! This file holds the pane's state: loading, the selection, the writes it
//! asks for, and its place on the view stack. The rest is by job:
//! `list` (the rows, a window at a time), `keys` (what each key does in each
//! mode), `render` (the table, the detail lines and the footer), `popups`
//! (reschedule, edit, cancel and rule prompts) and `cells` (a row's columns,
//! state and styles).

mod cells;
mod keys;
mod list;
mod popups;
mod render;

use std::cell::Cell;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Clear, Widget};
use ratatui_textarea::TextArea;

use super::time_picker::TimeInput;
use crate::engine::Engine;
use crate::store::{ListCursor, Store, error_line};
use crate::tui::app::App;
use crate::tui::keymap::Keymap;
use crate::tui::writer::{Outcome as WriteOutcome, Writer, typed};
use list::{Row, RowList};

/// Said when a write is still waiting for the database as the key returns.
pub const WAITING: &str =
    "waiting for the database (another process is writing); it goes through when it can";

/// What the app does after a key in the pane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PaneAction {
    None,
    Close,
    /// Closed by a key it does not use, which goes on to what is under it:
    /// a letter of a sentence typed where the composer was meant.
    Dismiss,
    /// Show this conversation (and close the pane).
    Jump(i64),
    /// A one-line confirmation for the status bar.
    Info(String),
    /// A one-line error for the status bar.
    Error(String),
    /// An edit that could not be saved: its text goes to the composer
    /// rather than being lost, and the error is said.
    KeepInComposer {
        text: String,
        error: String,
    },
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
            PaneAction::Dismiss => (None, Outcome::Dismissed),
            PaneAction::Jump(conv) => (Some(Intent::Open(conv)), Outcome::Done),
            PaneAction::Info(s) => (Some(Intent::Info(s)), Outcome::Consumed),
            PaneAction::Error(s) => (Some(Intent::Error(s)), Outcome::Consumed),
            PaneAction::KeepInComposer { text, error } => (
                Some(Intent::KeepInComposer { text, error }),
                Outcome::Consumed,
            ),
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
        /// The item's text as shown (a series' is not needed).
        text: String,
    },
    /// `s` on a message scheduled `ahead` ("1h 54m") of now: asked, as
    /// the strip asks (one slip of a letter key sent it hours early).
    ConfirmSendEarly {
        id: i64,
        seen: i64,
        ahead: String,
    },
    /// A new rule for a series, with the engine's preview of it.
    Rule {
        id: i64,
        input: Box<TextArea<'static>>,
        preview: Result<String, String>,
    },
}

/// How many rows on each side of an item acted on may take its place
/// (those after it first): more than leave at once in practice.
const PLACE_TAKERS: usize = 8;

static DEFAULT_KEYS: std::sync::LazyLock<Keymap> = std::sync::LazyLock::new(Keymap::default);

pub struct ScheduledPane {
    /// The rows around the selection (a window of the list).
    list: RowList,
    /// The selected item's id: selection follows the item across reloads.
    selected: Option<i64>,
    /// The selected item the user acted on in a way that takes it out of
    /// the list (cancel, end, send now): when it leaves, the row that took
    /// its place is selected. An item that leaves otherwise (sent by the
    /// dispatcher, changed by another process) leaves nothing selected.
    acted_on: Option<i64>,
    /// The selection moved by itself (to the row that took the place of
    /// the item acted on) and no frame has shown it yet: no key acts on it
    /// until one has (a key typed ahead was meant for the item that left).
    unseen: Cell<bool>,
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
    /// When a letter opened the text editor: a letter right after it is a
    /// word typed where the composer was meant
    /// ("explain this" opened the editor on `e` and appended "xplain this"
    /// to the text, which the Enter ending the line saved).
    text_opened_at: Option<i64>,
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
            acted_on: None,
            unseen: Cell::new(false),
            show_all: false,
            mode: Mode::List,
            offset: Cell::new(0),
            page: Cell::new(10),
            loaded: false,
            writer: None,
            text_opened_at: None,
        }
    }

    /// Read `rows` rows of the list per query as the selection moves
    /// (100 unless set; tests make it small to cross window edges).
    pub fn with_chunk(mut self, rows: usize) -> Self {
        self.list.chunk = rows.max(1);
        self
    }

    /// Run its writes on the app's writer thread.
    /// Open with item `id` chosen (when it is listed), not the first row.
    pub fn selecting(mut self, id: Option<i64>) -> Self {
        self.selected = id;
        self
    }

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

    /// Like [`Self::act`], on item `id` (selected) that the write takes
    /// out of the list: when it leaves, the row that took its place is
    /// selected.
    fn act_leaving(
        &mut self,
        engine: &Engine,
        id: i64,
        job: impl FnOnce(&Engine) -> anyhow::Result<()> + Send + 'static,
        done: String,
    ) -> PaneAction {
        if self.selected == Some(id) {
            self.acted_on = Some(id);
        }
        self.write(engine, job, move |pane, engine, result| match result {
            Ok(()) => pane.reload(engine, done),
            Err(e) => {
                if pane.acted_on == Some(id) {
                    pane.acted_on = None;
                }
                PaneAction::Error(error_line(&e))
            }
        })
    }

    /// Reload rows from the store (called on open, on every outbox/external
    /// event while open). Keeps the selection on the same item id; when that
    /// item left the list because the user acted on it, on the row that
    /// took its place (the next, or the one before if it was last), not
    /// acted on until drawn; when it left otherwise, nothing is selected.
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
        // Where the item acted on is, the rows that would take its place
        // if it left: the next ones, then those before it, nearest first.
        let in_its_place: Vec<i64> = match old_selected {
            Some(i) if self.acted_on.is_some() && self.acted_on == self.selected => {
                let after = self.list.rows(i + 1, i + 1 + PLACE_TAKERS);
                let before = (i.saturating_sub(PLACE_TAKERS)..i)
                    .rev()
                    .filter_map(|k| self.list.get(k));
                after.chain(before).map(|r| r.item.id).collect()
            }
            _ => Vec::new(),
        };
        self.list.load_head(store, engine, self.show_all)?;
        // The window is read around the selected item where it is now (a
        // reschedule moves it). An item that left the list is not selected
        // any more: the row that took its place is if the user's action
        // took it out, else none (no key acts on a row that slid in).
        let mut anchor = None;
        if let Some(id) = self.selected
            && !self.list.in_head(id)
        {
            match store.item(id)?.filter(|it| self.list.lists(it)) {
                Some(it) => anchor = Some(ListCursor::of(&it)),
                None => self.selected = None,
            }
        }
        if self.selected.is_none() && !in_its_place.is_empty() {
            for id in in_its_place {
                if self.list.in_head(id) {
                    self.selected = Some(id);
                } else if let Some(it) = store.item(id)?.filter(|it| self.list.lists(it)) {
                    anchor = Some(ListCursor::of(&it));
                    self.selected = Some(id);
                }
                if self.selected.is_some() {
                    self.unseen.set(true);
                    break;
                }
            }
        }
        self.list.load_body(store, anchor, self.reach())?;
        match self.selected {
            Some(id) if self.index_of(id).is_none() => self.selected = None,
            None if !self.loaded => self.selected = self.list.get(0).map(|r| r.item.id),
            _ => {}
        }
        if self.acted_on.is_some() && self.acted_on != self.selected {
            self.acted_on = None;
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

    /// Whether an item's text editor is open.
    pub fn is_editing(&self) -> bool {
        matches!(self.mode, Mode::Edit { .. })
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
            // Chosen by the user: the keys act where they put it.
            self.unseen.set(false);
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

    fn is_series(&self, id: i64) -> bool {
        self.index_of(id)
            .and_then(|i| self.list.get(i))
            .is_some_and(|r| r.series.is_some())
    }

    /// Reload after a change and report it.
    fn reload(&mut self, engine: &Engine, done: String) -> PaneAction {
        match self.refresh_with(engine) {
            Ok(()) => PaneAction::Info(done),
            Err(e) => PaneAction::Error(error_line(&e)),
        }
    }
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
