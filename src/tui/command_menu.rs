//! The slash commands that match what is typed, listed above the composer
//! while a command's name is being typed (`/`, `/mo`): what there is to
//! type, without Tab or F1 first. Tab still completes; a space (the name
//! is done) or `//` (a literal slash) closes it.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Widget};
use unicode_width::UnicodeWidthStr;

use super::commands::{COMMANDS, Spec};
use super::text::elide;
use super::theme::palette;

/// The most commands listed at once; more are counted in the last row.
const MOST_ROWS: usize = 10;

/// The commands one of whose names starts with `line`, when `line` is a
/// command name being typed: it starts with one `/` and holds no space.
pub fn matches(line: &str) -> Vec<&'static Spec> {
    if !line.starts_with('/') || line.starts_with("//") || line.contains(char::is_whitespace) {
        return Vec::new();
    }
    COMMANDS
        .iter()
        .filter(|s| s.names.iter().any(|n| n.starts_with(line)))
        .collect()
}

/// Draw the menu for `specs` with its foot on row `bottom` (exclusive),
/// over at most `room` rows above it, `x`..`x + width` wide.
pub fn draw(buf: &mut Buffer, specs: &[&Spec], x: u16, width: u16, bottom: u16, room: u16) {
    if specs.is_empty() || room < 3 || width < 20 {
        return;
    }
    // Inside the borders; a last row counts what does not fit.
    let inner = (room as usize - 2).min(MOST_ROWS);
    let (shown, more) = if specs.len() <= inner {
        (specs.len(), 0)
    } else {
        (inner - 1, specs.len() - (inner - 1))
    };
    // Inside the borders, a column kept clear at the right.
    let text_w = width.saturating_sub(3) as usize;
    // The usages in a column as wide as the widest (up to half the width).
    let col = specs[..shown]
        .iter()
        .map(|s| s.usage.width())
        .max()
        .unwrap_or(0)
        .min(text_w / 2);
    let usage_style = Style::new()
        .fg(palette().accent)
        .add_modifier(Modifier::BOLD);
    let help_style = Style::new().fg(palette().dim);
    let mut lines: Vec<Line<'static>> = specs[..shown]
        .iter()
        .map(|s| {
            let usage = elide(s.usage, col);
            let pad = col.saturating_sub(usage.width());
            let help = elide(s.help, text_w.saturating_sub(col + 2));
            Line::from(vec![
                Span::styled(usage, usage_style),
                Span::raw(" ".repeat(pad + 2)),
                Span::styled(help, help_style),
            ])
        })
        .collect();
    if more > 0 {
        lines.push(Line::styled(
            elide(&format!("… {more} more: keep typing"), text_w),
            help_style,
        ));
    }
    let height = lines.len() as u16 + 2;
    let area = Rect {
        x,
        y: bottom.saturating_sub(height),
        width,
        height,
    };
    Clear.render(area, buf);
    let title = elide(" commands · Tab completes ", text_w);
    Paragraph::new(lines)
        .block(
            Block::default()
                .borders(Borders::ALL)
                .border_type(BorderType::Rounded)
                .border_style(Style::new().fg(palette().dim))
                .title(Span::styled(title, help_style)),
        )
        .render(area, buf);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(line: &str) -> Vec<&'static str> {
        matches(line).iter().map(|s| s.names[0]).collect()
    }

    #[test]
    fn a_name_being_typed_lists_the_commands_it_starts() {
        assert_eq!(names("/").len(), COMMANDS.len());
        assert_eq!(names("/mo"), ["/model", "/mouse"]);
        // An alias finds its command.
        assert_eq!(names("/regen"), ["/retry"]);
        assert_eq!(names("/later"), ["/later"]);
    }

    #[test]
    fn text_a_literal_slash_or_a_finished_name_lists_nothing() {
        for line in [
            "",
            "hello",
            "//",
            "//later",
            "/later ",
            "/later 1h x",
            "/zz",
        ] {
            assert!(names(line).is_empty(), "{line:?}");
        }
    }
}
