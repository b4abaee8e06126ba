//! The composer: one draft per conversation, saved as you type and restored
//! after a quit, a crash or a switch; soft-wrapped and growing with its text;
//! an explicit edit-and-resend mode with a banner, which Esc leaves,
//! restoring the draft you had.

use std::cell::Cell;

use unicode_segmentation::UnicodeSegmentation;

use crate::tui::theme::palette;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph, Widget};
use ratatui_textarea::{CursorMove, TextArea, WrapMode};

use crate::engine::Part;
use crate::store::Draft;
use crate::tui::undo::{Edit as UndoEdit, State as UndoState, UndoSteps};

/// Delay between the last keystroke and saving the draft.
pub const SAVE_AFTER_MS: i64 = 300;

pub struct Edit {
    /// The user message being edited for resend.
    pub message_id: i64,
    /// The draft put aside when the edit began.
    pub stash: Draft,
    /// The model the message went to when that was not the conversation's
    /// (`/with`): the resend goes there too, and the banner says so.
    pub to: Option<String>,
}

pub struct Composer {
    text: TextArea<'static>,
    pub attachments: Vec<Part>,
    pub edit: Option<Edit>,
    /// Recalled earlier message (Ctrl+P / Ctrl+N), as an index into `history`.
    pub history_pos: Option<usize>,
    pub history: Vec<String>,
    /// What the composer held when recalling began: Ctrl+N past the newest
    /// message brings it back (it is in `history` too, so Ctrl+P finds it
    /// however the recall ends).
    recalled_over: Option<String>,
    /// When the text last changed and has not been saved since (ms).
    pub unsaved_since: Option<i64>,
    /// What Ctrl+C cleared (text and attachments): Ctrl+P brings it back
    /// whole, and a quit with the composer still empty keeps it as the
    /// draft (Ctrl+C three times is how many leave a program).
    set_aside: Option<(String, Vec<Part>)>,
    /// What a kill key (Ctrl+K, Ctrl+U, Ctrl+W, Alt+d, Alt+Backspace) cut
    /// from this draft, kills in a row joined: Ctrl+Y pastes it back, as in
    /// readline, rather than copying the last reply over the clipboard.
    kill_buffer: String,
    /// The last key was a kill: the next one adds to what it cut (two
    /// Ctrl+W give back both words), as readline's kills in a row do.
    kill_run: bool,
    /// The draft before each step of editing, for Ctrl+_.
    undo: UndoSteps,
    /// The chip a long paste just made, and the draft then: undo while the
    /// draft is as it was puts the paste into the text instead.
    chip_pasted: Option<(String, UndoState)>,
    /// The rows and columns the text was last drawn in, for [`Composer::refit`].
    drawn: Cell<(u16, u16)>,
    /// The rows [`Composer::refit`] last looked at: once per height, so that
    /// a count of rows that disagrees with the textarea's own wrapping can
    /// never have the two scroll each other back and forth, frame after
    /// frame.
    refit_rows: u16,
}

fn textarea(text: &str) -> TextArea<'static> {
    let mut t = TextArea::default();
    t.set_cursor_line_style(Style::default());
    t.set_wrap_mode(WrapMode::WordOrGlyph);
    t.insert_str(text);
    t
}

impl Default for Composer {
    fn default() -> Self {
        Self {
            text: textarea(""),
            attachments: Vec::new(),
            edit: None,
            history_pos: None,
            history: Vec::new(),
            set_aside: None,
            kill_buffer: String::new(),
            kill_run: false,
            undo: UndoSteps::default(),
            chip_pasted: None,
            drawn: Cell::new((0, 0)),
            refit_rows: 0,
            recalled_over: None,
            unsaved_since: None,
        }
    }
}

impl Composer {
    pub fn text(&self) -> String {
        self.text.lines().join("\n")
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Whether the text starts with `prefix` (which holds no line break),
    /// read from its first line without joining the rest.
    pub fn starts_with(&self, prefix: &str) -> bool {
        self.text
            .lines()
            .first()
            .is_some_and(|l| l.starts_with(prefix))
    }

    /// The text when it is one line (no copy).
    pub fn single_line(&self) -> Option<&str> {
        match self.text.lines() {
            [line] => Some(line.as_str()),
            _ => None,
        }
    }

    /// Nothing but spaces typed: a card's letters are choices then, and
    /// Enter beside it asks for one.
    pub fn holds_no_text(&self) -> bool {
        self.text.lines().iter().all(|l| l.trim().is_empty())
    }

    /// A slash command typed (`/later 10m …`; `//` starts a message).
    pub fn holds_command(&self) -> bool {
        super::sending::is_command(self.text().trim())
    }

    /// Nothing typed, nothing attached, not editing.
    pub fn is_blank(&self) -> bool {
        self.is_empty() && self.attachments.is_empty() && self.edit.is_none()
    }

    /// New text in the same textarea, which keeps the width it was last
    /// drawn at (↑ and ↓ move by the rows it wraps to before the next frame).
    fn replace_text(&mut self, text: &str) {
        self.text.clear();
        self.text.insert_str(text);
        self.kill_buffer.clear();
    }

    /// Ctrl+Y: what a kill key cut from this draft, back at the cursor.
    /// False if nothing was cut (Ctrl+Y then copies the last reply).
    pub fn yank(&mut self, now: i64) -> bool {
        self.kill_run = false;
        if self.kill_buffer.is_empty() {
            return false;
        }
        let before = self.state();
        if !self.text.paste() {
            return false;
        }
        self.kept(before, UndoEdit::Whole);
        self.stop_recalling();
        self.changed(now);
        true
    }

    fn changed(&mut self, now: i64) {
        self.unsaved_since.get_or_insert(now);
    }

    pub fn set_text(&mut self, text: &str, now: i64) {
        let before = self.state();
        self.replace_text(text);
        self.kept(before, UndoEdit::Whole);
        self.stop_recalling();
        self.changed(now);
    }

    /// Text that goes with the message as a chip named `name` (a long
    /// paste). Undo, next, puts it into the text instead.
    pub fn attach_text(&mut self, name: &str, content: &str, now: i64) {
        self.attachments.push(Part::Text {
            name: name.to_string(),
            content: content.to_string(),
        });
        self.chip_pasted = Some((name.to_string(), self.state()));
        self.changed(now);
    }

    /// Undo right after a paste held as a chip: the chip goes, its text
    /// goes in at the cursor (a step of its own, which undo takes back).
    fn unfold_chip_pasted(&mut self, now: i64) -> bool {
        let Some((name, at)) = self.chip_pasted.take() else {
            return false;
        };
        if self.state() != at {
            return false;
        }
        let Some(i) = self
            .attachments
            .iter()
            .rposition(|p| matches!(p, Part::Text { name: n, .. } if *n == name))
        else {
            return false;
        };
        let Part::Text { content, .. } = self.attachments.remove(i) else {
            return false;
        };
        self.insert(&content, now);
        true
    }

    pub fn insert(&mut self, text: &str, now: i64) {
        let before = self.state();
        self.text.insert_str(text);
        self.kept(before, UndoEdit::Whole);
        self.stop_recalling();
        self.changed(now);
    }

    /// A key for the text itself (characters, movement, deletion, readline keys).
    pub fn input(&mut self, key: KeyEvent, now: i64) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let edit = undo_edit(key);
        // (A key that only moves the cursor keeps no copy of the draft.)
        let before = edit
            .filter(|e| self.undo.starts_step(*e))
            .map(|_| self.state());
        let modified = match key.code {
            // The textarea has no bindings for these readline keys on every layout.
            KeyCode::Char('a') if ctrl => {
                self.text.move_cursor(CursorMove::Head);
                false
            }
            KeyCode::Char('e') if ctrl => {
                self.text.move_cursor(CursorMove::End);
                false
            }
            // Ctrl+U as in every one-line input.
            _ => crate::tui::text::edit_line(&mut self.text, key),
        };
        let kill = modified && crate::tui::text::is_kill(key);
        if kill {
            if !self.kill_run {
                self.kill_buffer.clear();
            }
            let cut = self.text.yank_text();
            if crate::tui::text::kills_backward(key) {
                self.kill_buffer.insert_str(0, &cut);
            } else {
                self.kill_buffer.push_str(&cut);
            }
            self.text.set_yank_text(self.kill_buffer.clone());
        }
        self.kill_run = kill;
        if modified {
            if let Some(before) = before {
                self.undo.keep(before);
            }
            self.undo.edited(edit.unwrap_or(UndoEdit::Whole));
            self.stop_recalling();
            self.changed(now);
        } else {
            self.undo.moved();
        }
    }

    /// Ctrl+_: the draft as it was before the last step of editing (a
    /// word typed, deletions in a row, a cut, a paste); false when there
    /// is none.
    pub fn undo(&mut self, now: i64) -> bool {
        if self.unfold_chip_pasted(now) {
            return true;
        }
        let Some((text, (row, col))) = self.undo.undo() else {
            return false;
        };
        self.text.clear();
        self.text.insert_str(&text);
        self.text
            .move_cursor(CursorMove::Jump(clamp_u16(row), clamp_u16(col)));
        self.kill_run = false;
        self.stop_recalling();
        self.changed(now);
        true
    }

    /// The draft and its cursor, as undo keeps them.
    fn state(&self) -> UndoState {
        let c = self.text.cursor();
        (self.text(), (c.0, c.1))
    }

    /// A step alone was made from `before`, if it changed the draft.
    fn kept(&mut self, before: UndoState, edit: UndoEdit) {
        if self.text() != before.0 {
            self.undo.keep(before);
            self.undo.edited(edit);
        }
    }

    /// The recalled message was typed on: it is the draft now (what was
    /// typed before recalling is in the history).
    fn stop_recalling(&mut self) {
        self.history_pos = None;
        self.recalled_over = None;
    }

    pub fn newline(&mut self, now: i64) {
        let before = self.state();
        self.text.insert_newline();
        self.kept(before, UndoEdit::Whole);
        self.stop_recalling();
        self.changed(now);
    }

    /// Move the cursor a row up (or down) on screen, a row of a wrapped
    /// line too (the textarea moves by rows as last drawn); false where
    /// there is no row that way. Tried on the text itself: asking first
    /// took a copy of the text and its undo history on every ↑ and ↓.
    pub fn move_row(&mut self, up: bool) -> bool {
        let before = self.text.cursor();
        self.text
            .move_cursor(if up { CursorMove::Up } else { CursorMove::Down });
        self.text.cursor() != before
    }

    /// Ctrl+C on a composer holding something: cleared, and kept aside.
    pub fn set_aside(&mut self, now: i64) {
        let text = self.text();
        let parts = std::mem::take(&mut self.attachments);
        self.clear(now);
        self.set_aside = Some((text, parts));
    }

    /// What Ctrl+C set aside back into a blank composer; false if nothing
    /// was (or the composer holds something now).
    pub fn take_back(&mut self, now: i64) -> bool {
        if !self.is_blank() {
            return false;
        }
        let Some((text, parts)) = self.set_aside.take() else {
            return false;
        };
        self.replace_text(&text);
        self.attachments = parts;
        self.stop_recalling();
        self.changed(now);
        true
    }

    /// After a send: empty, not editing, not recalling.
    pub fn clear(&mut self, now: i64) {
        self.replace_text("");
        self.undo.clear();
        self.attachments.clear();
        self.edit = None;
        self.stop_recalling();
        self.changed(now);
    }

    /// What is saved for this conversation.
    pub fn draft(&self) -> Draft {
        let (edit_of, stash) = match &self.edit {
            Some(e) => (Some(e.message_id), Some(e.stash.text.clone())),
            None => (None, None),
        };
        Draft {
            text: self.text(),
            edit_of,
            stash,
            parts_json: (!self.attachments.is_empty())
                .then(|| serde_json::to_string(&self.attachments).ok())
                .flatten(),
        }
    }

    /// Show a saved draft (switching conversation, or at start).
    pub fn load(&mut self, d: &Draft, history: Vec<String>) {
        self.set_aside = None;
        self.replace_text(&d.text);
        self.attachments = d
            .parts_json
            .as_deref()
            .and_then(|j| serde_json::from_str(j).ok())
            .unwrap_or_default();
        self.edit = d.edit_of.map(|message_id| Edit {
            message_id,
            stash: Draft {
                text: d.stash.clone().unwrap_or_default(),
                ..Draft::default()
            },
            to: None,
        });
        self.history = history;
        self.history_pos = None;
        self.recalled_over = None;
        self.unsaved_since = None;
    }

    /// Begin editing a sent message for resend; the current draft is put
    /// aside. `to`: the model it went to, when not the conversation's.
    pub fn begin_edit(
        &mut self,
        message_id: i64,
        text: &str,
        parts: Vec<Part>,
        to: Option<String>,
        now: i64,
    ) {
        let stash = Draft {
            text: self.text(),
            parts_json: (!self.attachments.is_empty())
                .then(|| serde_json::to_string(&self.attachments).ok())
                .flatten(),
            ..Draft::default()
        };
        self.edit = Some(Edit {
            message_id,
            stash,
            to,
        });
        self.replace_text(text);
        self.attachments = parts;
        self.changed(now);
    }

    /// Leave edit mode: the draft you had comes back. False if not editing.
    pub fn abandon_edit(&mut self, now: i64) -> bool {
        let Some(edit) = self.edit.take() else {
            return false;
        };
        self.replace_text(&edit.stash.text);
        self.attachments = edit
            .stash
            .parts_json
            .as_deref()
            .and_then(|j| serde_json::from_str(j).ok())
            .unwrap_or_default();
        self.changed(now);
        true
    }

    /// The draft to restore after an edit is sent.
    pub fn stash_after_edit(&self) -> Draft {
        self.edit
            .as_ref()
            .map(|e| e.stash.clone())
            .unwrap_or_default()
    }

    /// Ctrl+P / Ctrl+N: walk through earlier messages. False if there is nothing to recall.
    /// Recalling from a draft keeps it: it is put at the end of the history
    /// (once), and Ctrl+N past the newest message gives it back.
    pub fn recall(&mut self, older: bool, now: i64) -> bool {
        if self.history.is_empty() {
            return false;
        }
        let pos = match (self.history_pos, older) {
            (None, true) => {
                let typed = self.text();
                if !typed.trim().is_empty() && self.history.last() != Some(&typed) {
                    self.history.push(typed.clone());
                }
                // The newest message before what was typed.
                let before = self.history.len() - usize::from(self.history.last() == Some(&typed));
                if before == 0 {
                    return false;
                }
                self.recalled_over = Some(typed);
                Some(before - 1)
            }
            (Some(p), true) => Some(p.saturating_sub(1)),
            (Some(p), false)
                if self
                    .history
                    .get(p + 1)
                    .is_some_and(|next| Some(next) != self.recalled_over.as_ref()) =>
            {
                Some(p + 1)
            }
            (None, false) => return false,
            _ => None,
        };
        let text = match pos {
            Some(p) => self.history[p].clone(),
            None => self.recalled_over.take().unwrap_or_default(),
        };
        self.replace_text(&text);
        self.history_pos = pos;
        self.changed(now);
        true
    }

    /// Rows the text takes at `width` (soft-wrapped), at least one.
    pub fn rows(&self, width: u16) -> u16 {
        let w = width.max(1) as usize;
        let rows: usize = self
            .text
            .lines()
            .iter()
            .map(|l| crate::tui::chat::wrap_words(l, w).len().max(1))
            .sum();
        rows.clamp(1, u16::MAX as usize) as u16
    }

    /// The textarea draws its cursor over one code point, which splits a
    /// character made of several (an emoji with a skin tone, a family, a
    /// flag, a letter and its combining accent): the rest was drawn as a
    /// glyph of its own, a lone skin-tone swatch or the accent lost, and
    /// the row shifted. The cursor's row is drawn again from the cursor
    /// on, the whole character under the cursor.
    fn mend_cursor_row(&self, inner: Rect, buf: &mut Buffer) {
        let t = &self.text;
        let cursor = t.cursor();
        let Some(line) = t.lines().get(cursor.0) else {
            return;
        };
        let Some((at, _)) = line.char_indices().nth(cursor.1) else {
            return;
        };
        let Some(under) = line[at..].graphemes(true).next() else {
            return;
        };
        if under.chars().nth(1).is_none() {
            return;
        }
        let screen = t.screen_cursor();
        let top = usize::from(t.scroll_offset().0);
        let Some(row) = screen
            .row
            .checked_sub(top)
            .and_then(|r| u16::try_from(r).ok())
            .filter(|r| *r < inner.height)
        else {
            return;
        };
        let Some(x) = u16::try_from(screen.col)
            .ok()
            .and_then(|c| inner.x.checked_add(c))
            .filter(|x| *x < inner.right())
        else {
            return;
        };
        // The rest of the row, as the textarea wrapped it.
        let end = t.screen_to_data(screen.row, usize::MAX).1;
        let rest: String = line
            .chars()
            .skip(cursor.1)
            .take(end.saturating_sub(cursor.1))
            .collect();
        // A tab or a control character the textarea draws its own way:
        // its drawing stands.
        if rest.chars().any(char::is_control) {
            return;
        }
        let y = inner.y + row;
        let cursor_style = buf[(x, y)].style();
        let base = buf[(inner.right() - 1, y)].style();
        for cx in x..inner.right() {
            buf[(cx, y)].reset();
            buf[(cx, y)].set_style(base);
        }
        let width = usize::from(inner.right() - x);
        let (after, _) = buf.set_stringn(x, y, under, width, cursor_style);
        let left = usize::from(inner.right().saturating_sub(after));
        buf.set_stringn(after, y, &rest[under.len()..], left, base);
    }

    /// After the box grew (a taller window), the rows hidden above while
    /// rows below stand empty come back: the textarea keeps where it
    /// scrolled to until the cursor leaves the rows shown, and the start
    /// of a draft stayed out of sight with nothing saying so. True when it
    /// scrolled (the frame drawn is to be drawn again).
    pub fn refit(&mut self) -> bool {
        let (height, width) = self.drawn.get();
        if height == self.refit_rows {
            return false;
        }
        self.refit_rows = height;
        let top = self.text.scroll_offset().0;
        if top == 0 || height == 0 {
            return false;
        }
        // The lowest top that leaves no row empty below the text.
        let fits = self.rows(width).saturating_sub(height);
        if top <= fits {
            return false;
        }
        let cursor = self.text.cursor();
        let back = i16::try_from(top - fits).unwrap_or(i16::MAX);
        self.text.scroll((-back, 0));
        // Scrolling moves the cursor into the rows it last drew: it stays.
        self.text
            .move_cursor(CursorMove::Jump(clamp_u16(cursor.0), clamp_u16(cursor.1)));
        true
    }

    /// The composer's height in `width` columns when it may take at most `max` rows.
    pub fn height(&self, width: u16, max: u16) -> u16 {
        let banner = u16::from(self.edit.is_some());
        self.rows(width.saturating_sub(2))
            .saturating_add(2 + banner)
            .clamp(3, max.max(3))
    }

    /// Draw with `title` spans in the top border. `focused` shows the cursor;
    /// `inactive` (an approval card has focus) dims the whole box. `later`:
    /// while editing, the exchanges after the message edited (a task's
    /// turn, another tock's message) that the resend replaces too.
    #[allow(clippy::too_many_arguments)]
    pub fn render(
        &self,
        area: Rect,
        buf: &mut Buffer,
        title: Vec<Span<'static>>,
        below: Vec<Span<'static>>,
        focused: bool,
        inactive: bool,
        later: usize,
    ) {
        let border = if inactive {
            Style::new().fg(palette().dim).add_modifier(Modifier::DIM)
        } else if focused {
            Style::new().fg(palette().accent)
        } else {
            Style::new().fg(palette().dim)
        };
        let mut block = Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(border)
            .title(Line::from(title));
        if !self.attachments.is_empty() {
            block = block.title_bottom(Line::from(chips(&self.attachments)));
        } else if !below.is_empty() {
            block = block.title_bottom(Line::from(below));
        }
        let mut inner = block.inner(area);
        block.render(area, buf);
        if self.edit.is_some() && inner.height > 1 {
            // The longest wording that fits: never cut mid-word.
            // Sent to another model (`/with`): the resend goes there too.
            let to = self
                .edit
                .as_ref()
                .and_then(|e| e.to.as_deref())
                .map(|m| {
                    format!(
                        " to {}",
                        super::text::elide(&crate::sanitize::sanitize_line(m), 24)
                    )
                })
                .unwrap_or_default();
            let plural = if later == 1 { "" } else { "s" };
            let wordings = [
                format!(
                    "✎ editing your last message — Enter resends it{to} (the old exchange is marked replaced) · Esc keeps the old one"
                ),
                format!(
                    "✎ editing your last message — Enter resends it{to} · Esc keeps the old one"
                ),
                format!("✎ editing — Enter resends{to} · Esc keeps the old one"),
                format!("✎ editing — Enter resends{to} · Esc keeps it"),
                "✎ editing — Enter resends · Esc keeps it".to_string(),
                "✎ editing".to_string(),
            ];
            // Something came after it since the edit began: the resend
            // replaces that too, and says so.
            let later_wordings = [
                format!(
                    "✎ editing an earlier message — Enter resends it{to} and replaces the {later} exchange{plural} after it · Esc keeps them"
                ),
                format!(
                    "✎ editing — Enter resends and replaces {later} later exchange{plural} · Esc keeps them"
                ),
                format!("✎ editing — replaces {later} later · Esc keeps"),
                format!("✎ editing (+{later} later)"),
                "✎ editing".to_string(),
            ];
            let wordings: &[String] = if later > 0 {
                &later_wordings
            } else {
                &wordings
            };
            let banner = super::text::first_fitting(wordings, inner.width as usize)
                .cloned()
                .unwrap_or_else(|| "✎".to_string());
            Paragraph::new(Line::styled(
                banner,
                Style::new()
                    .fg(palette().on(palette().highlight))
                    .bg(palette().highlight),
            ))
            .render(Rect { height: 1, ..inner }, buf);
            inner.y += 1;
            inner.height -= 1;
        }
        if self.text.is_empty() {
            let hint = if inactive {
                super::text::first_fitting(
                    &[
                        "answer the approval above first (messages wait for it)",
                        "answer the approval above first",
                        "answer above first",
                    ],
                    inner.width as usize,
                )
                .copied()
                .unwrap_or("")
            } else {
                // Narrower than the box: the cursor cell goes before it.
                super::text::first_fitting(
                    &[
                        "Message (Enter sends · Alt+Enter newline · /later 10m … · F1 help)",
                        "Message (Enter sends · Alt+Enter newline)",
                        "Message (Enter sends · F1 help)",
                        "Message",
                    ],
                    (inner.width as usize).saturating_sub(1),
                )
                .copied()
                .unwrap_or("")
            };
            let mut spans = Vec::new();
            if focused && !inactive {
                spans.push(Span::styled(
                    " ",
                    Style::new().add_modifier(Modifier::REVERSED),
                ));
            }
            spans.push(Span::styled(hint, Style::new().fg(palette().dim)));
            Paragraph::new(Line::from(spans)).render(inner, buf);
            return;
        }
        // Drawn from the textarea itself, not a copy: drawing tells it the
        // width it wraps at, by which ↑ and ↓ move between the rows of a
        // long line (a copy kept that to itself, and they moved by lines).
        let t = &self.text;
        self.drawn.set((inner.height, inner.width));
        t.render(inner, buf);
        self.mend_cursor_row(inner, buf);
        // The cursor (reversed) is shown only where the composer has focus.
        if !focused || inactive {
            buf.set_style(inner, Style::new().remove_modifier(Modifier::REVERSED));
        }
        if inactive {
            buf.set_style(inner, Style::new().fg(palette().dim));
        }
        // Taller than the box (it stops growing at a share of the screen):
        // say how much is out of sight, on the bottom border's right.
        let total = self.rows(inner.width);
        if total > inner.height && area.height >= 3 {
            let above = t.scroll_offset().0;
            let below = total.saturating_sub(above.saturating_add(inner.height));
            let label = match (above, below) {
                (0, 0) => String::new(),
                (a, 0) => format!(" ↑ {a} more "),
                (0, b) => format!(" ↓ {b} more "),
                (a, b) => format!(" ↑ {a} · ↓ {b} more "),
            };
            let w = unicode_width::UnicodeWidthStr::width(label.as_str()) as u16;
            if !label.is_empty() && area.width >= w + 4 {
                buf.set_string(area.right() - 2 - w, area.bottom() - 1, label, border);
            }
        }
    }
}
/// A row or column for the textarea's jump (a line longer than 65,535
/// characters is left at its end).
fn clamp_u16(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

/// What a key does to the draft, for where an undo step starts: a
/// character typed, a deletion, anything else (a step alone), or nothing
/// (a key that moves the cursor).
fn undo_edit(key: KeyEvent) -> Option<UndoEdit> {
    let plain = !key
        .modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
    let ctrl = key.modifiers == KeyModifiers::CONTROL;
    let alt = key.modifiers == KeyModifiers::ALT;
    Some(match key.code {
        KeyCode::Char(c) if plain && c.is_whitespace() => UndoEdit::Space,
        KeyCode::Char(_) if plain => UndoEdit::Letter,
        KeyCode::Backspace | KeyCode::Delete if plain => UndoEdit::Deletion,
        KeyCode::Char('h' | 'd') if ctrl => UndoEdit::Deletion,
        KeyCode::Left
        | KeyCode::Right
        | KeyCode::Up
        | KeyCode::Down
        | KeyCode::Home
        | KeyCode::End
        | KeyCode::PageUp
        | KeyCode::PageDown => return None,
        KeyCode::Char('a' | 'e' | 'b' | 'f' | 'p' | 'n') if ctrl => return None,
        KeyCode::Char('b' | 'f') if alt => return None,
        _ => UndoEdit::Whole,
    })
}

/// Chips for the attachments: name, kind and size ("📎 code.rs · text · 41 B").
pub fn chips(parts: &[Part]) -> Vec<Span<'static>> {
    let mut v = Vec::new();
    for p in parts {
        let (name, kind, bytes) = describe(p);
        v.push(Span::styled(
            format!(" 📎 {name} · {kind} · {} ", crate::files::human_size(bytes)),
            Style::new().fg(palette().special),
        ));
    }
    v
}

/// An attachment's name (made safe), kind and size in bytes.
pub fn describe(p: &Part) -> (String, String, u64) {
    match p {
        Part::Image {
            name,
            mime,
            data_base64,
        } => (
            crate::sanitize::sanitize_line(name).into_owned(),
            mime.clone(),
            data_base64.len() as u64 * 3 / 4,
        ),
        Part::Text { name, content } => (
            crate::sanitize::sanitize_line(name).into_owned(),
            "text".to_string(),
            content.len() as u64,
        ),
    }
}
