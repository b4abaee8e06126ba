//! The slash commands that match what is typed, listed above the composer
//! while a command's name is being typed (`/`, `/mo`): what there is to
//! type, without Tab or F1 first. ↑/↓ choose one, Tab completes it, Enter
//! on part of a name runs the one chosen (one that needs an argument is
//! completed, to type it; a whole name runs as typed); a space (the name is
//! done) or `//` (a literal slash) closes the list.

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

/// Whether a command is of no use without what follows its name (its
/// usage names something not in brackets): Enter then completes it.
pub fn needs_argument(spec: &Spec) -> bool {
    spec.usage
        .split_whitespace()
        .nth(1)
        .is_some_and(|w| !w.starts_with('['))
}

/// Where `pick` (a command's name) is in `specs`; the first when it is not.
pub fn picked(specs: &[&Spec], pick: Option<&str>) -> usize {
    pick.and_then(|p| specs.iter().position(|s| s.names[0] == p))
        .unwrap_or(0)
}

/// The name of the command `by` rows from `pick` in `specs`, round the end.
pub fn step(specs: &[&Spec], pick: Option<&str>, by: isize) -> Option<&'static str> {
    let n = specs.len() as isize;
    if n == 0 {
        return None;
    }
    let at = (picked(specs, pick) as isize + by).rem_euclid(n);
    Some(specs[at as usize].names[0])
}

/// Draw the menu for `specs`, row `selected` marked, with its foot on row
/// `bottom` (exclusive), over at most `room` rows above it, `x`..`x +
/// width` wide.
pub fn draw(
    buf: &mut Buffer,
    specs: &[&Spec],
    selected: usize,
    x: u16,
    width: u16,
    bottom: u16,
    room: u16,
) {
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
    // The rows from the first, or down to the one chosen.
    let first = (selected + 1)
        .saturating_sub(shown)
        .min(specs.len() - shown);
    let below = more.saturating_sub(first);
    // Inside the borders, a column kept clear at the right.
    let text_w = width.saturating_sub(3) as usize;
    // The usages in a column as wide as the widest (up to half the width).
    let col = specs[first..first + shown]
        .iter()
        .map(|s| s.usage.width())
        .max()
        .unwrap_or(0)
        .min(text_w / 2);
    let usage_style = Style::new()
        .fg(palette().accent)
        .add_modifier(Modifier::BOLD);
    let help_style = Style::new().fg(palette().dim);
    let mut lines: Vec<Line<'static>> = specs[first..first + shown]
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let usage = elide(s.usage, col);
            let pad = col.saturating_sub(usage.width());
            let help = elide(s.help, text_w.saturating_sub(col + 2));
            let line = Line::from(vec![
                Span::styled(usage, usage_style),
                Span::raw(" ".repeat(pad + 2)),
                Span::styled(help, help_style),
            ]);
            if first + i == selected {
                line.style(Style::new().add_modifier(Modifier::REVERSED))
            } else {
                line
            }
        })
        .collect();
    // What is not shown: above the rows (chosen further down) and below.
    let hidden = match (first, below) {
        (0, 0) => None,
        (0, b) => Some(format!("… {b} more: keep typing or ↓")),
        (a, 0) => Some(format!("… {a} above: ↑")),
        (a, b) => Some(format!("… {a} above, {b} below")),
    };
    if let Some(h) = hidden {
        lines.push(Line::styled(elide(&h, text_w), help_style));
    }
    let height = lines.len() as u16 + 2;
    let area = Rect {
        x,
        y: bottom.saturating_sub(height),
        width,
        height,
    };
    Clear.render(area, buf);
    // The longest wording the border holds.
    let title = super::text::first_fitting(
        &[
            " commands · ↑↓ choose · Tab completes · Enter runs ",
            " commands · ↑↓ Tab Enter ",
            " commands ",
        ],
        text_w,
    )
    .copied()
    .unwrap_or_default();
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
