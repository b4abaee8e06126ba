//! What chat-only frames need of a terminal backend: moving a band of rows
//! (a scroll region), and writing a frame's cells, which the crossterm
//! backend does a run of text at a time.

use std::io::Write as _;
use std::ops::Range;

use ratatui::backend::{Backend, CrosstermBackend};
use ratatui::buffer::Cell;

/// A terminal that can move a band of its rows up, what they show and all.
pub trait ScrollRows: Backend {
    /// Move rows `rows` up by `n`; the `n` rows at the foot come out blank.
    fn scroll_rows_up(&mut self, rows: Range<u16>, n: u16) -> Result<(), Self::Error>;

    /// Write a frame's cells, each where a diff put it. By default one at a
    /// time, as `Backend::draw` does.
    fn draw_cells(&mut self, cells: &[(u16, u16, Cell)]) -> Result<(), Self::Error> {
        self.draw(cells.iter().map(|(x, y, c)| (*x, *y, c)))
    }
}

/// A scroll region (DECSTBM) over the rows and line feeds on its last row:
/// what every terminal has, the Linux console and tmux included (the
/// Linux console lacks `CSI S`). The new rows take the current background,
/// the default one (ratatui resets the colours after each frame, and so
/// does this first).
impl<W: std::io::Write> ScrollRows for CrosstermBackend<W> {
    fn scroll_rows_up(&mut self, rows: Range<u16>, n: u16) -> std::io::Result<()> {
        // The backend writes to the terminal's buffered output.
        let out = self;
        write!(
            out,
            "\x1b[0m\x1b[{};{}r\x1b[{};1H",
            rows.start + 1,
            rows.end,
            rows.end
        )?;
        for _ in 0..n {
            out.write_all(b"\n")?;
        }
        // The whole screen scrolls again; the cursor goes home.
        out.write_all(b"\x1b[r")
    }

    /// Runs of cells side by side in one style are printed as one string:
    /// the backend formats every cell it prints through `fmt` (a cursor
    /// check, a style check and a `Print` each), which was a fifth of a
    /// streaming frame's instructions (callgrind).
    fn draw_cells(&mut self, cells: &[(u16, u16, Cell)]) -> std::io::Result<()> {
        let runs = runs(cells);
        self.draw(runs.iter().map(|(x, y, c)| (*x, *y, c)))
    }
}

/// Whether a cell holds one printable ASCII character, one column wide on
/// every terminal.
pub(super) fn printable_ascii(c: &Cell) -> bool {
    matches!(c.symbol().as_bytes(), [b' '..=b'~'])
}

/// `cells` with each run of printable ASCII cells that follow one another
/// on a row in one style made a single cell holding their text. Only ASCII
/// is joined: every terminal agrees it is one column wide, so the cursor
/// ends up where the cell-by-cell writes would have left it; any other
/// character is written on its own, and the backend moves the cursor to
/// the cell after it.
fn runs(cells: &[(u16, u16, Cell)]) -> Vec<(u16, u16, Cell)> {
    let same_style = |a: &Cell, b: &Cell| {
        a.fg == b.fg
            && a.bg == b.bg
            && a.underline_color == b.underline_color
            && a.modifier == b.modifier
    };
    let mut out: Vec<(u16, u16, Cell)> = Vec::with_capacity(cells.len());
    // The text of the run that `out`'s last cell starts, while it can grow.
    let mut text = String::new();
    let flush = |out: &mut Vec<(u16, u16, Cell)>, text: &mut String| {
        if text.len() > 1
            && let Some((_, _, cell)) = out.last_mut()
        {
            cell.set_symbol(text);
        }
        text.clear();
    };
    for (x, y, cell) in cells {
        if printable_ascii(cell)
            && !text.is_empty()
            && let Some((rx, ry, run)) = out.last()
            && *ry == *y
            && *rx as usize + text.len() == *x as usize
            && same_style(run, cell)
        {
            text.push_str(cell.symbol());
            continue;
        }
        flush(&mut out, &mut text);
        out.push((*x, *y, cell.clone()));
        if printable_ascii(cell) {
            text.push_str(cell.symbol());
        }
    }
    flush(&mut out, &mut text);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::{Color, Modifier};
    use unicode_width::UnicodeWidthStr;

    /// Cells as a diff yields them: rows of text with gaps, wide characters
    /// (whose covered cell is not written), styles that change mid-row.
    fn diff_like_cells(seed: u64) -> Vec<(u16, u16, Cell)> {
        let mut state = seed;
        let mut next = move |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        let symbols = ["a", "b", " ", "~", "{", "中", "🙂", "é", "│", "…", "x"];
        let colors = [
            Color::Reset,
            Color::Red,
            Color::Indexed(244),
            Color::Rgb(1, 2, 3),
        ];
        let modifiers = [
            Modifier::empty(),
            Modifier::BOLD,
            Modifier::DIM,
            Modifier::ITALIC | Modifier::UNDERLINED,
            Modifier::REVERSED,
        ];
        let mut cells = Vec::new();
        let mut style = (Color::Reset, Color::Reset, Modifier::empty());
        for y in 0..6u16 {
            let mut x = next(5) as u16;
            while x < 38 {
                if next(8) == 0 {
                    style = (
                        colors[next(4) as usize],
                        colors[next(4) as usize],
                        modifiers[next(5) as usize],
                    );
                }
                let symbol = symbols[next(symbols.len() as u64) as usize];
                let mut cell = Cell::new(symbol);
                cell.fg = style.0;
                cell.bg = style.1;
                cell.modifier = style.2;
                cells.push((x, y, cell));
                x += UnicodeWidthStr::width(symbol) as u16;
                // A gap: cells the diff found unchanged.
                x += if next(10) == 0 { 1 + next(4) as u16 } else { 0 };
            }
        }
        cells
    }

    /// What a terminal shows after the bytes a backend wrote.
    fn screen_after(write: impl FnOnce(&mut CrosstermBackend<&mut Vec<u8>>)) -> vt100::Parser {
        let mut bytes = Vec::new();
        write(&mut CrosstermBackend::new(&mut bytes));
        let size = |n| std::num::NonZeroU16::new(n).unwrap_or(std::num::NonZeroU16::MIN);
        let mut parser = vt100::Parser::new(size(8), size(40), 0);
        parser.process(&bytes);
        parser
    }

    fn describe(p: &vt100::Parser) -> Vec<String> {
        let s = p.screen();
        let mut out = Vec::new();
        for row in 0..8 {
            for col in 0..40 {
                if let Some(c) = s.cell(row, col) {
                    out.push(format!(
                        "{row},{col} {:?} {:?} {:?} b{} d{} i{} u{} r{}",
                        c.contents(),
                        c.fgcolor(),
                        c.bgcolor(),
                        c.bold(),
                        c.dim(),
                        c.italic(),
                        c.underline(),
                        c.inverse()
                    ));
                }
            }
        }
        out
    }

    #[test]
    fn cells_written_in_runs_show_what_cells_written_one_by_one_show() {
        for seed in 0..50 {
            let cells = diff_like_cells(seed);
            let one_by_one = screen_after(|b| {
                b.draw(cells.iter().map(|(x, y, c)| (*x, *y, c))).unwrap();
            });
            let in_runs = screen_after(|b| b.draw_cells(&cells).unwrap());
            assert_eq!(describe(&in_runs), describe(&one_by_one), "seed {seed}");
        }
    }

    #[test]
    fn runs_join_neighbouring_ascii_cells_of_one_style_only() {
        let cell = |s: &'static str, fg: Color| {
            let mut c = Cell::new(s);
            c.fg = fg;
            c
        };
        let cells = vec![
            (0, 0, cell("a", Color::Reset)),
            (1, 0, cell("b", Color::Reset)),
            (2, 0, cell("c", Color::Reset)),
            // Another style.
            (3, 0, cell("d", Color::Red)),
            (4, 0, cell("e", Color::Red)),
            // Not next to the one before.
            (6, 0, cell("f", Color::Red)),
            // Not ASCII, then ASCII after it.
            (7, 0, cell("中", Color::Red)),
            (9, 0, cell("g", Color::Red)),
            // The next row.
            (0, 1, cell("h", Color::Red)),
        ];
        let joined = runs(&cells);
        let joined: Vec<(u16, u16, &str)> = joined
            .iter()
            .map(|(x, y, c)| (*x, *y, c.symbol()))
            .collect();
        assert_eq!(
            joined,
            vec![
                (0, 0, "abc"),
                (3, 0, "de"),
                (6, 0, "f"),
                (7, 0, "中"),
                (9, 0, "g"),
                (0, 1, "h"),
            ]
        );
    }
}
