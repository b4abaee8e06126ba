//! Putting a laid-out row into a frame's buffer.
//!
//! The same as ratatui's `Buffer::set_line`, except that a span of plain
//! printable ASCII goes in one cell per byte. `set_line` splits every span
//! into grapheme clusters (Unicode segmentation) to find its cells, which
//! was about a sixth of a streamed frame's cost (`perf` on the
//! `stream_token/view` bench), and chat text is mostly ASCII.

use ratatui::buffer::Buffer;
use ratatui::text::Line;

/// Puts `line` on row `y` from column `x`, at most `max_width` cells wide;
/// returns where it ended, as `Buffer::set_line` does.
pub fn put_line(buf: &mut Buffer, x: u16, y: u16, line: &Line<'_>, max_width: u16) -> (u16, u16) {
    let mut remaining = max_width;
    let mut x = x;
    for span in line {
        if remaining == 0 {
            break;
        }
        let style = line.style.patch(span.style);
        let text: &str = span.content.as_ref();
        if text.bytes().all(|b| (0x20..0x7f).contains(&b)) {
            // One cell per byte: each is a grapheme of width 1.
            let room = buf.area.right().saturating_sub(x).min(remaining);
            let n = text.len().min(room as usize);
            if n > 0 {
                let start = buf.index_of(x, y);
                for (cell, b) in buf.content[start..start + n].iter_mut().zip(text.bytes()) {
                    cell.set_char(char::from(b)).set_style(style);
                }
            }
            x += n as u16;
            remaining -= n as u16;
        } else {
            let end = buf.set_stringn(x, y, text, remaining as usize, style);
            remaining = remaining.saturating_sub(end.0.saturating_sub(x));
            x = end.0;
        }
    }
    (x, y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;
    use ratatui::style::{Color, Modifier, Style};
    use ratatui::text::Span;

    fn lines() -> Vec<Line<'static>> {
        let red = Style::new().fg(Color::Red);
        let bold = Style::new().add_modifier(Modifier::BOLD);
        vec![
            Line::from("plain ascii text that is longer than the area is wide, by a good margin"),
            Line::from(vec![
                Span::styled("fn ", red),
                Span::raw("main() "),
                Span::styled("{", bold),
            ]),
            Line::from(vec![
                Span::raw("wide 日本語 text "),
                Span::styled("then ascii", red),
            ])
            .style(Style::new().bg(Color::Blue)),
            Line::from(vec![
                Span::raw("emoji 👍🏽 and e\u{301} combining "),
                Span::raw("tab\there"),
                Span::raw(""),
                Span::styled("end", bold),
            ]),
            Line::from(vec![Span::raw("a"); 50]),
            Line::from("x\u{7f}y control"),
            Line::default(),
        ]
    }

    #[test]
    fn puts_every_line_as_ratatui_does_at_any_place_and_width() {
        let area = Rect::new(2, 1, 30, 3);
        for line in lines() {
            for x in [2, 10, 31, 32] {
                for max_width in [0, 1, 5, 12, 30, 200] {
                    let mut ours = Buffer::empty(area);
                    let mut theirs = Buffer::empty(area);
                    ours.set_string(2, 2, "under", Style::new().fg(Color::Green));
                    theirs.set_string(2, 2, "under", Style::new().fg(Color::Green));
                    let a = put_line(&mut ours, x, 2, &line, max_width);
                    let b = theirs.set_line(x, 2, &line, max_width);
                    assert_eq!(a, b, "{line:?} at {x}, width {max_width}");
                    assert_eq!(ours, theirs, "{line:?} at {x}, width {max_width}");
                }
            }
        }
    }
}
