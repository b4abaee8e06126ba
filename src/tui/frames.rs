//! Frames: the whole screen through ratatui, or — while a reply streams into
//! the conversation on screen and nothing else changed — the chat area alone.
//!
//! A whole frame renders the sidebar, strip, composer and status bar and
//! compares every cell of the screen with the last frame; a streamed token
//! changes none of that. A chat-only frame renders the conversation into a
//! buffer of the chat area, compares it with what that area shows, and
//! writes the cells that differ: a streamed reply's frames cost the UI
//! thread about 40 % less (bench: 900 → 560 ms for 4,000 tokens at 100/s).
//!
//! ratatui keeps its own record of the screen (the last frame's buffer) to
//! diff the next frame against; a chat-only frame writes behind its back.
//! So the whole screen as the last whole frame left it is kept here, the
//! chat area is kept up to date in it, and before the next whole frame it
//! becomes ratatui's record again (`resync`).

use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::buffer::{Buffer, Cell, CellWidth};
use ratatui::layout::Rect;
use ratatui::text::Line;
use unicode_width::UnicodeWidthStr;

use super::app::{App, FrameLayout};
pub use super::backend::ScrollRows;
use super::{chat, view};

pub struct Frames {
    /// The screen as the last whole frame drew it (its chat area as it was then).
    screen: Buffer,
    /// The chat area as it is on the terminal now, its rows a ring that
    /// starts at row `chat_top`: a scroll turns the ring instead of moving
    /// every cell (a memmove of the whole area, about 150 KB at 120×40,
    /// twice per frame that scrolled: a third of a streaming frame's
    /// instructions by callgrind).
    chat: Buffer,
    chat_top: usize,
    /// Where a chat-only frame renders the rows it changes (row `y` of the
    /// area at row `y`); the rows it leaves alone hold nothing of use.
    next: Buffer,
    /// The rows of the chat area as the last chat-only frame laid them out,
    /// each with its fingerprint (`fingerprint`).
    rows: Vec<(u64, Line<'static>)>,
    /// The last whole frame's layout, while chat-only frames may follow it.
    layout: Option<FrameLayout>,
    /// For each row of the chat area, whether the columns beside it (the
    /// sidebar) show in the last whole frame what they show in the row
    /// below: rows that scroll within such a run need nothing put back.
    beside_alike: Vec<bool>,
    /// Chat-only frames were written since the last whole frame: ratatui's
    /// record of the screen is out of date in the chat area.
    behind: bool,
    /// Whether the terminal may move the chat's rows itself (`ScrollRows`).
    pub scroll_region: bool,
    /// Frames drawn so far: whole ones and chat-only ones.
    pub whole: u64,
    pub chat_only: u64,
}

impl Default for Frames {
    fn default() -> Self {
        Self::new()
    }
}

impl Frames {
    pub fn new() -> Self {
        Self {
            screen: Buffer::default(),
            chat: Buffer::default(),
            chat_top: 0,
            next: Buffer::default(),
            rows: Vec::new(),
            beside_alike: Vec::new(),
            layout: None,
            behind: false,
            scroll_region: true,
            whole: 0,
            chat_only: 0,
        }
    }

    /// The terminal was cleared or replaced (resize, suspend, the editor):
    /// what was kept no longer shows, and ratatui starts from blank too.
    pub fn forget(&mut self) {
        self.layout = None;
        self.rows.clear();
        self.behind = false;
    }

    /// Draw a frame. `only_text`: nothing but streamed text (or code
    /// highlighting) changed since the last frame, so the chat area alone
    /// may be redrawn when nothing covers it.
    pub fn draw<B: ScrollRows>(
        &mut self,
        term: &mut Terminal<B>,
        app: &App,
        only_text: bool,
    ) -> Result<FrameLayout, B::Error> {
        if only_text
            && app.views.is_empty()
            && view::command_menu(app).is_empty()
            && term.current_buffer_mut().area == self.screen.area
            && let Some(layout) = self.layout.clone()
            && self.chat.area == layout.chat
        {
            return self.draw_chat(term, app, layout);
        }
        self.draw_whole(term, app)
    }

    fn draw_whole<B: Backend>(
        &mut self,
        term: &mut Terminal<B>,
        app: &App,
    ) -> Result<FrameLayout, B::Error> {
        self.resync(term);
        self.whole += 1;
        self.rows.clear();
        // Kept only while a reply streams here: then the next frames are
        // likely chat-only, and the copy (about 0.05 ms) pays for itself.
        let keep = app.model.is_busy() && app.views.is_empty();
        let mut layout = FrameLayout::default();
        term.draw(|f| {
            layout = view::draw(f, app);
            if keep {
                self.screen.clone_from(f.buffer_mut());
                if self.chat.area != layout.chat {
                    self.chat.resize(layout.chat);
                }
                copy_area(&self.screen, &mut self.chat, layout.chat);
                self.chat_top = 0;
                self.next.clone_from(&self.chat);
                self.beside_alike = beside_alike(&self.screen, layout.chat);
            }
        })?;
        self.layout = keep.then(|| layout.clone());
        Ok(layout)
    }

    fn draw_chat<B: ScrollRows>(
        &mut self,
        term: &mut Terminal<B>,
        app: &App,
        mut layout: FrameLayout,
    ) -> Result<FrameLayout, B::Error> {
        self.chat_only += 1;
        let area = layout.chat;
        let tail = view::chat_tail(app, area);
        let window = chat::window(&app.model.entries, &tail, app.scroll, area);
        layout.scroll_used = window.from_bottom;
        let rows: Vec<&Line<'static>> = window.rows().collect();
        let marks: Vec<u64> = rows.iter().map(|l| fingerprint(l)).collect();
        let (w, h) = (area.width as usize, area.height as usize);
        // When the reply grows by a row, every row above moves up by one.
        let shift = row_shift(&marks, &self.rows);
        let mut old = std::mem::take(&mut self.rows);
        let same = |y: usize, old: &[(u64, Line<'static>)]| match (rows.get(y), old.get(y + shift))
        {
            (Some(line), Some((mark, was))) => *mark == marks[y] && was == *line,
            (line, was) => line.is_none() && was.is_none(),
        };
        let moved = (0..h).filter(|&y| same(y, &old)).count();
        // The terminal moves the rows itself when most of them moved: then
        // only the new ones, and what the band's other columns (the
        // sidebar) showed, are written.
        let scroll = shift > 0 && self.scroll_region && moved * 2 >= h;
        let backend = term.backend_mut();
        let ring = |top: usize, y: usize| ring_row(top, y, w, h);
        if scroll {
            backend.scroll_rows_up(area.top()..area.bottom(), shift as u16)?;
            self.chat_top = (self.chat_top + shift) % h.max(1);
            for y in h.saturating_sub(shift)..h {
                self.chat.content[ring(self.chat_top, y)].fill(Cell::EMPTY);
            }
        }
        let mut kept = Vec::with_capacity(rows.len());
        // Rows rendered into `next`, to compare with what the area shows.
        let mut changed = vec![false; h];
        for (y, changed) in changed.iter_mut().enumerate() {
            let cells = y * w..(y + 1) * w;
            if same(y, &old) {
                if let Some(was) = old.get_mut(y + shift) {
                    kept.push(std::mem::take(was));
                }
                // Moved but not by the terminal: what shows further down
                // is written here.
                if shift > 0 && !scroll {
                    *changed = true;
                    if y + shift < h {
                        let from = ring(self.chat_top, y + shift);
                        self.next.content[cells].clone_from_slice(&self.chat.content[from]);
                    } else {
                        self.next.content[cells].fill(Cell::EMPTY);
                    }
                }
                continue;
            }
            *changed = true;
            self.next.content[cells].fill(Cell::EMPTY);
            if let Some(line) = rows.get(y) {
                super::put_line::put_line(
                    &mut self.next,
                    area.x,
                    area.y + y as u16,
                    line,
                    area.width,
                );
                kept.push((marks[y], (*line).clone()));
            }
        }
        drop(rows);
        drop(window);
        // Drawn over the rows: those rows then no longer show just their
        // line, and the overlay needs the rows it covers as they show.
        if view::chat_has_overlays(app, &tail) {
            for (y, _) in changed.iter().enumerate().filter(|(_, c)| !**c) {
                let from = ring(self.chat_top, y);
                self.next.content[y * w..(y + 1) * w].clone_from_slice(&self.chat.content[from]);
            }
            view::draw_chat_overlays(&mut self.next, app, area, &tail);
            changed.fill(true);
            kept.clear();
        }
        self.rows = kept;
        // What the frame writes, in order, handed to the terminal at once.
        let mut writes = Vec::new();
        for (y, _) in changed.iter().enumerate().filter(|(_, c)| **c) {
            let next = y * w..(y + 1) * w;
            let shown = ring(self.chat_top, y);
            let row = area.y + y as u16;
            if diff_row(
                &self.chat.content[shown.clone()],
                &self.next.content[next.clone()],
                area.x,
                row,
                &mut writes,
            ) {
                self.chat.content[shown].clone_from_slice(&self.next.content[next]);
            }
        }
        if scroll {
            // The columns beside the chat area scrolled with it: put back
            // what the last whole frame drew there.
            let sw = self.screen.area.width as usize;
            let (left, right) = (area.left() as usize, area.right() as usize);
            let blank = vec![Cell::EMPTY; sw];
            let top = area.top() as usize;
            for y in area.top()..area.bottom() {
                let from = y as usize + shift;
                // Rows alike down to the one that moved here: nothing to put back.
                if from < area.bottom() as usize
                    && self
                        .beside_alike
                        .get(y as usize - top..from - top)
                        .is_some_and(|alike| alike.iter().all(|a| *a))
                {
                    continue;
                }
                let want = self.screen.index_of(0, y);
                let want = &self.screen.content[want..want + sw];
                let shown = if from < area.bottom() as usize {
                    let i = self.screen.index_of(0, from as u16);
                    &self.screen.content[i..i + sw]
                } else {
                    &blank
                };
                diff_row(&shown[..left], &want[..left], 0, y, &mut writes);
                diff_row(
                    &shown[right..],
                    &want[right..],
                    right as u16,
                    y,
                    &mut writes,
                );
            }
        }
        if !writes.is_empty() {
            backend.draw_cells(&writes)?;
        }
        if scroll || !writes.is_empty() {
            backend.flush()?;
            self.behind = true;
        }
        Ok(layout)
    }

    /// Make ratatui's record of the screen true again after chat-only frames:
    /// the kept screen with the chat area as it is now becomes the buffer
    /// ratatui diffs the next frame against.
    fn resync<B: Backend>(&mut self, term: &mut Terminal<B>) {
        if !std::mem::take(&mut self.behind) {
            return;
        }
        let Some(layout) = &self.layout else {
            return;
        };
        let area = layout.chat.intersection(self.screen.area);
        let (w, h) = (
            self.chat.area.width as usize,
            self.chat.area.height as usize,
        );
        if self.chat.area == layout.chat {
            for y in 0..area.height as usize {
                let to = self.screen.index_of(area.x, area.y + y as u16);
                let from = ring_row(self.chat_top, y, w, h);
                self.screen.content[to..to + area.width as usize]
                    .clone_from_slice(&self.chat.content[from][..area.width as usize]);
            }
        }
        let current = term.current_buffer_mut();
        if current.area != self.screen.area {
            return;
        }
        // The current buffer is blank between frames; filled with the screen
        // and swapped, it becomes the previous one (and the stale previous one
        // is blanked for this frame).
        current.content.clone_from_slice(&self.screen.content);
        term.swap_buffers();
    }
}

/// The cells of row `y` of a ring of `h` rows of `w` cells that starts at
/// row `top`.
fn ring_row(top: usize, y: usize, w: usize, h: usize) -> std::ops::Range<usize> {
    let r = (top + y) % h.max(1);
    r * w..(r + 1) * w
}

/// A row's fingerprint: rows with different ones differ; rows with the
/// same one are compared in full before one is taken for the other.
fn fingerprint(line: &Line<'_>) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::with_seed(0).hash_one(line)
}

/// By how many rows the lines `old` showed moved up to where the lines of
/// fingerprints `new` show them: the shift under which the most rows show
/// what they showed (0 when none does better than staying). Not the first
/// shift that puts the top row back: a reply's rows repeat (blank rows
/// between its paragraphs, alike list items), and a blank top row that
/// "stayed" while the text under it moved up redrew the whole area, one
/// frame in ten of a streamed reply.
fn row_shift(new: &[u64], old: &[(u64, Line<'static>)]) -> usize {
    let alike = |k: usize| {
        new.iter()
            .zip(&old[k.min(old.len())..])
            .filter(|(n, (o, _))| *n == o)
            .count()
    };
    let mut best = (alike(0), 0);
    for k in 1..old.len() {
        // Fewer rows overlap at each further shift: stop once even all of
        // them could not do better.
        if old.len() - k <= best.0 {
            break;
        }
        let n = alike(k);
        if n > best.0 {
            best = (n, k);
        }
    }
    best.1
}

/// What differs between `shown` and `next`, one row (or part of one)
/// that starts at column `x` of row `y`, with ratatui's own diff over the
/// cells from the first that differs to the last, widened to the whole
/// characters there (ratatui's diff weighs the width of every cell it
/// visits, which over the whole area cost more than rendering it): the
/// cells to write, added to `writes`. Whether anything differed.
fn diff_row(
    shown: &[Cell],
    next: &[Cell],
    x: u16,
    y: u16,
    writes: &mut Vec<(u16, u16, Cell)>,
) -> bool {
    let differs = |(a, b): (&Cell, &Cell)| a != b;
    let Some(first) = shown.iter().zip(next).position(differs) else {
        return false;
    };
    let last = shown.iter().zip(next).rposition(differs).unwrap_or(first);
    // Where both rows hold only cells one column wide, from a few before
    // the first difference (a wide character there could cover it) to the
    // last, ratatui's diff comes down to the cells that differ: taken here
    // without copying the rows into buffers of their own, which cost a
    // streaming frame's new row about 23,000 instructions (callgrind), and
    // a code block's row (its bar and rules are not ASCII) about 10,000.
    let around = first.saturating_sub(4)..last + 1;
    if shown[around.clone()].iter().all(narrow) && next[around].iter().all(narrow) {
        for i in first..=last {
            if shown[i] != next[i] {
                writes.push((x + i as u16, y, next[i].clone()));
            }
        }
        return true;
    }
    let width = |i: usize| {
        let w = |c: &Cell| UnicodeWidthStr::width(c.symbol()).max(1);
        w(&shown[i]).max(w(&next[i]))
    };
    // A wide character before the first difference may cover it, and one
    // up to the last may cover cells after it: ratatui's diff decides what
    // to write of those from the character itself.
    let mut start = first;
    for i in (first.saturating_sub(4)..first).rev() {
        if i + width(i) > start {
            start = i;
        }
    }
    let mut end = last + 1;
    let mut i = start;
    while i < end {
        end = end.max(i + width(i));
        i += 1;
    }
    let end = end.min(next.len());
    let segment = |cells: &[Cell]| Buffer {
        area: Rect::new(x + start as u16, y, (end - start) as u16, 1),
        content: cells[start..end].to_vec(),
    };
    let (old, new) = (segment(shown), segment(next));
    writes.extend(old.diff_iter(&new).map(|(x, y, c)| (x, y, c.clone())));
    true
}

/// A cell one column wide by ratatui's own measure (the one its diff
/// uses), which that diff writes only when it changed.
// ratatui's diff still honours the deprecated `skip` flag, so this does too.
#[allow(deprecated)]
fn narrow(c: &Cell) -> bool {
    !c.skip
        && c.diff_option == ratatui::buffer::CellDiffOption::None
        && (super::backend::printable_ascii(c) || c.cell_width() == 1)
}

/// For each row of `area` but the last, whether the cells of `screen` left
/// and right of it equal those of the row below.
fn beside_alike(screen: &Buffer, area: Rect) -> Vec<bool> {
    let area = area.intersection(screen.area);
    let (left, right) = (area.left() as usize, area.right() as usize);
    let row = |y: u16| {
        let i = screen.index_of(0, y);
        &screen.content[i..i + screen.area.width as usize]
    };
    (area.top()..area.bottom().saturating_sub(1))
        .map(|y| {
            let (a, b) = (row(y), row(y + 1));
            a[..left] == b[..left] && a[right..] == b[right..]
        })
        .collect()
}

/// Copy `area` of `from` into the same cells of `to` (both cover it).
fn copy_area(from: &Buffer, to: &mut Buffer, area: Rect) {
    let area = area.intersection(from.area).intersection(to.area);
    let w = area.width as usize;
    for y in area.top()..area.bottom() {
        let src = from.index_of(area.x, y);
        let dst = to.index_of(area.x, y);
        to.content[dst..dst + w].clone_from_slice(&from.content[src..src + w]);
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use ratatui::style::{Color, Modifier, Style};

    use super::*;

    /// Text as a model's reply and tock's own drawing put it in cells:
    /// ASCII, a code block's bar and rules, accents, wide characters and
    /// emoji (with and without VS16), a combining accent.
    const PIECES: &[&str] = &[
        "ab",
        " ",
        "x",
        "~{",
        "\u{258e} ",
        "\u{2500}\u{2500}",
        "\u{e9}",
        "\u{2502}",
        "\u{2026}",
        "\u{4e2d}",
        "\u{1f642}",
        "\u{2764}\u{fe0f}",
        "e\u{301}",
    ];

    fn style(i: usize) -> Style {
        [
            Style::new(),
            Style::new().fg(Color::Rgb(192, 197, 206)),
            Style::new()
                .fg(Color::Indexed(8))
                .add_modifier(Modifier::DIM),
            Style::new().bg(Color::Red),
            Style::new().add_modifier(Modifier::REVERSED),
        ][i % 5]
    }

    /// A row written piece by piece, as `put_line` and ratatui's widgets do.
    fn row(width: u16, writes: &[(u16, usize, usize)]) -> Buffer {
        let mut b = Buffer::empty(Rect::new(3, 7, width, 1));
        for &(x, piece, s) in writes {
            let x = 3 + x % width;
            b.set_stringn(
                x,
                7,
                PIECES[piece % PIECES.len()],
                usize::from(3 + width - x),
                style(s),
            );
        }
        b
    }

    fn writes() -> impl Strategy<Value = Vec<(u16, usize, usize)>> {
        prop::collection::vec((0u16..40, 0usize..64, 0usize..5), 0..30)
    }

    /// Rows as a chat area shows them, from their texts ("" a blank row).
    fn shown_rows(texts: &[&str]) -> Vec<(u64, Line<'static>)> {
        texts
            .iter()
            .map(|t| {
                let line = Line::from(t.to_string());
                (fingerprint(&line), line)
            })
            .collect()
    }

    fn marks(rows: &[(u64, Line<'static>)]) -> Vec<u64> {
        rows.iter().map(|(m, _)| *m).collect()
    }

    #[test]
    fn rows_that_moved_up_are_found_under_a_blank_top_row_that_stayed_blank() {
        // A reply's paragraphs with blank rows between them: two rows
        // further down, the top row is blank again.
        let old = shown_rows(&[
            "",
            "- item",
            "",
            "- item",
            "",
            "prose one",
            "prose two",
            "",
            "code",
        ]);
        let new = shown_rows(&[
            "",
            "- item",
            "",
            "prose one",
            "prose two",
            "",
            "code",
            "more",
            "",
        ]);
        assert_eq!(row_shift(&marks(&new), &old), 2);
    }

    #[test]
    fn rows_that_moved_up_are_found_when_the_top_row_changed_too() {
        // The block at the top was laid out again (its highlighting came).
        let old = shown_rows(&["a", "b", "c", "d", "e", "f"]);
        let new = shown_rows(&["B", "c", "d", "e", "f", "g"]);
        assert_eq!(row_shift(&marks(&new), &old), 1);
    }

    #[test]
    fn rows_that_stayed_or_match_nothing_do_not_move() {
        let old = shown_rows(&["a", "b", "c", "d"]);
        assert_eq!(
            row_shift(&marks(&shown_rows(&["a", "b", "c", "x"])), &old),
            0
        );
        assert_eq!(
            row_shift(&marks(&shown_rows(&["w", "x", "y", "z"])), &old),
            0
        );
        assert_eq!(row_shift(&marks(&shown_rows(&["a"])), &[]), 0);
        assert_eq!(row_shift(&[], &old), 0);
    }

    proptest! {
        /// Whichever way a row is diffed (the narrow cells' shortcut or
        /// ratatui's diff over the changed part), it writes exactly what
        /// ratatui's diff of the whole row writes.
        #[test]
        fn a_row_is_diffed_as_ratatuis_diff_of_the_whole_row(
            before in writes(),
            change in writes(),
        ) {
            let shown = row(40, &before);
            let mut both = before.clone();
            both.extend(change);
            let next = row(40, &both);
            let mut ours = Vec::new();
            let differed = diff_row(&shown.content, &next.content, 3, 7, &mut ours);
            let whole: Vec<(u16, u16, Cell)> =
                shown.diff_iter(&next).map(|(x, y, c)| (x, y, c.clone())).collect();
            prop_assert_eq!(differed, shown != next);
            prop_assert_eq!(ours, whole);
        }
    }
}
