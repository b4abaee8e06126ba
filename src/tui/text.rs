//! Small text helpers shared by the panes.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_textarea::TextArea;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// A key into a one-line input, as in the composer: readline's Ctrl+U kills
/// to the start of the line (the textarea alone makes it undo, so one
/// character seemed to go). True if the text changed.
pub fn edit_line(input: &mut TextArea<'_>, key: KeyEvent) -> bool {
    if key.code == KeyCode::Char('u') && key.modifiers.contains(KeyModifiers::CONTROL) {
        input.delete_line_by_head()
    } else {
        input.input(key)
    }
}

/// The first of `wordings` (longest first) at most `width` cells wide: a
/// line that gives way to a shorter one rather than being cut mid-word.
pub fn first_fitting<S: AsRef<str>>(wordings: &[S], width: usize) -> Option<&S> {
    wordings.iter().find(|w| w.as_ref().width() <= width)
}

/// `s` cut to `width` terminal cells, ending in `…` when cut.
pub fn elide(s: &str, width: usize) -> String {
    if s.width() <= width {
        return s.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for ch in s.chars() {
        let w = ch.width().unwrap_or(0);
        if used + w > width - 1 {
            break;
        }
        out.push(ch);
        used += w;
    }
    out.push('…');
    out
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
}
