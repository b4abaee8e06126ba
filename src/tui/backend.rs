//! What chat-only frames need of a terminal backend: moving a band of rows
//! (a scroll region), and writing a frame's cells, which the crossterm
//! backend does without `fmt` and with the cursor moved only where it must.

use std::io::Write as _;
use std::ops::Range;

use ratatui::backend::{Backend, CrosstermBackend};
use ratatui::buffer::Cell;
use ratatui::style::{Color, Modifier};

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

    /// The cells are written straight to the terminal's buffered output,
    /// not through the backend's `draw`, which formats every cell through
    /// `fmt` (a cursor move unless the cell before was one column to the
    /// left, a style check, a `Print`): that was a fifth of a streaming
    /// frame's instructions even with the cells joined in runs (callgrind).
    /// Here the cursor is moved only when a cell is not where the last one
    /// left it, the style is written only when it changes, and a cell's
    /// text is copied as it is. The terminal ends in the default style, as
    /// after `draw`.
    fn draw_cells(&mut self, cells: &[(u16, u16, Cell)]) -> std::io::Result<()> {
        // Put together here and handed to the terminal's buffer at once.
        let mut out = Vec::with_capacity(cells.len() * 2 + 64);
        let mut style = CellStyle::default();
        // Where the cursor is: known after a printable ASCII character
        // (one column on every terminal); after any other, it is moved
        // before the next cell is written.
        let mut cursor: Option<(u16, u16)> = None;
        for (x, y, cell) in cells {
            if cursor != Some((*x, *y)) {
                write_move_to(&mut out, *x, *y);
            }
            style.change_to(&mut out, cell)?;
            out.extend_from_slice(cell.symbol().as_bytes());
            cursor = printable_ascii(cell).then(|| (x.saturating_add(1), *y));
        }
        out.extend_from_slice(b"\x1b[39m\x1b[49m\x1b[59m\x1b[0m");
        self.write_all(&out)
    }
}

/// `CSI row;col H`, the numbers written without `fmt`.
fn write_move_to(out: &mut Vec<u8>, x: u16, y: u16) {
    out.extend_from_slice(b"\x1b[");
    out.extend_from_slice(decimal(u32::from(y) + 1).as_slice());
    out.push(b';');
    out.extend_from_slice(decimal(u32::from(x) + 1).as_slice());
    out.push(b'H');
}

/// The decimal digits of `n` (at most five: a terminal coordinate).
fn decimal(n: u32) -> DecimalDigits {
    let mut digits = [0u8; 5];
    let mut len = 0;
    let mut rest = n.min(99_999);
    loop {
        digits[4 - len] = b'0' + (rest % 10) as u8;
        len += 1;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    DecimalDigits { digits, len }
}

struct DecimalDigits {
    digits: [u8; 5],
    len: usize,
}

impl DecimalDigits {
    fn as_slice(&self) -> &[u8] {
        &self.digits[5 - self.len..]
    }
}

/// The style the terminal writes in, as `draw_cells` left it.
struct CellStyle {
    fg: Color,
    bg: Color,
    underline: Color,
    modifier: Modifier,
}

impl Default for CellStyle {
    fn default() -> Self {
        Self {
            fg: Color::Reset,
            bg: Color::Reset,
            underline: Color::Reset,
            modifier: Modifier::empty(),
        }
    }
}

impl CellStyle {
    /// Write what changes the terminal's style to `cell`'s: the same
    /// attribute changes, in the same order, as the backend's `draw` makes,
    /// so that a terminal where bold and dim exclude each other shows what
    /// a whole frame would.
    fn change_to(&mut self, out: &mut Vec<u8>, cell: &Cell) -> std::io::Result<()> {
        use ratatui::backend::IntoCrossterm as _;
        use ratatui::crossterm::queue;
        use ratatui::crossterm::style::{Colors, SetColors, SetUnderlineColor};
        if cell.modifier != self.modifier {
            write_modifier_change(out, self.modifier, cell.modifier);
            self.modifier = cell.modifier;
        }
        if cell.fg != self.fg || cell.bg != self.bg {
            let colors = Colors::new(cell.fg.into_crossterm(), cell.bg.into_crossterm());
            queue!(out, SetColors(colors))?;
            (self.fg, self.bg) = (cell.fg, cell.bg);
        }
        if cell.underline_color != self.underline {
            queue!(
                out,
                SetUnderlineColor(cell.underline_color.into_crossterm())
            )?;
            self.underline = cell.underline_color;
        }
        Ok(())
    }
}

/// The SGR codes that take the terminal from modifiers `from` to `to`:
/// what is taken away is undone first (bold and dim share one undo, after
/// which those still wanted are set again), then what is added is set.
fn write_modifier_change(out: &mut Vec<u8>, from: Modifier, to: Modifier) {
    let removed = from.difference(to);
    let added = to.difference(from);
    let mut codes: Vec<&[u8]> = Vec::with_capacity(8);
    if removed.contains(Modifier::REVERSED) {
        codes.push(b"27");
    }
    let intensity_reset = removed.intersects(Modifier::BOLD | Modifier::DIM);
    if intensity_reset {
        codes.push(b"22");
        if to.contains(Modifier::DIM) {
            codes.push(b"2");
        }
        if to.contains(Modifier::BOLD) {
            codes.push(b"1");
        }
    }
    for (modifier, code) in [
        (Modifier::ITALIC, b"23".as_slice()),
        (Modifier::UNDERLINED, b"24"),
        (Modifier::CROSSED_OUT, b"29"),
        (Modifier::HIDDEN, b"28"),
    ] {
        if removed.contains(modifier) {
            codes.push(code);
        }
    }
    if removed.intersects(Modifier::SLOW_BLINK | Modifier::RAPID_BLINK) {
        codes.push(b"25");
    }
    for (modifier, code) in [
        (Modifier::REVERSED, b"7".as_slice()),
        (Modifier::BOLD, b"1"),
        (Modifier::ITALIC, b"3"),
        (Modifier::UNDERLINED, b"4"),
        (Modifier::DIM, b"2"),
        (Modifier::CROSSED_OUT, b"9"),
        (Modifier::HIDDEN, b"8"),
        (Modifier::SLOW_BLINK, b"5"),
        (Modifier::RAPID_BLINK, b"6"),
    ] {
        // Bold and dim were set again after the intensity reset.
        let set_again =
            intensity_reset && (modifier == Modifier::BOLD || modifier == Modifier::DIM);
        if added.contains(modifier) && !set_again {
            codes.push(code);
        }
    }
    for code in codes {
        out.extend_from_slice(b"\x1b[");
        out.extend_from_slice(code);
        out.push(b'm');
    }
}

/// Whether a cell holds one printable ASCII character, one column wide on
/// every terminal.
pub(super) fn printable_ascii(c: &Cell) -> bool {
    matches!(c.symbol().as_bytes(), [b' '..=b'~'])
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
            Modifier::BOLD | Modifier::DIM,
            Modifier::DIM | Modifier::ITALIC | Modifier::REVERSED,
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
                        modifiers[next(modifiers.len() as u64) as usize],
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
    fn cells_written_by_draw_cells_show_what_the_backends_draw_shows() {
        for seed in 0..50 {
            let cells = diff_like_cells(seed);
            let one_by_one = screen_after(|b| {
                b.draw(cells.iter().map(|(x, y, c)| (*x, *y, c))).unwrap();
            });
            let direct = screen_after(|b| b.draw_cells(&cells).unwrap());
            let (direct, one_by_one) = (describe(&direct), describe(&one_by_one));
            let first_difference = direct.iter().zip(&one_by_one).find(|(a, b)| a != b);
            assert_eq!(first_difference, None, "seed {seed}");
        }
    }

    #[test]
    fn cells_side_by_side_are_written_without_moving_the_cursor_between_them() {
        let cell = |s: &'static str| Cell::new(s);
        let cells = vec![
            (0, 0, cell("a")),
            (1, 0, cell("b")),
            // Not next to the one before.
            (5, 0, cell("c")),
            // Wide: the cursor is moved for the cell after it.
            (6, 0, cell("中")),
            (8, 0, cell("d")),
            (0, 2, cell("e")),
        ];
        let mut bytes = Vec::new();
        CrosstermBackend::new(&mut bytes)
            .draw_cells(&cells)
            .unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            text.starts_with("\x1b[1;1Hab\x1b[1;6Hc中\x1b[1;9Hd\x1b[3;1He"),
            "{text:?}"
        );
        assert!(
            text.ends_with("\x1b[0m"),
            "ends in the default style: {text:?}"
        );
    }

    #[test]
    fn coordinates_are_written_in_decimal() {
        for n in [0u32, 7, 9, 10, 99, 100, 65_535, 99_999] {
            assert_eq!(decimal(n).as_slice(), n.to_string().as_bytes());
        }
    }
}
