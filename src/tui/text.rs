//! Small text helpers shared by the panes.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_textarea::TextArea;
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// A key into a one-line input, as in the composer: readline's Ctrl+U kills
/// to the start of the line (the textarea alone makes it undo, so one
/// character seemed to go). True if the text changed.
pub fn edit_line(input: &mut TextArea<'_>, key: KeyEvent) -> bool {
    if key.code == KeyCode::Char('u') && key.modifiers.contains(KeyModifiers::CONTROL) {
        return input.delete_line_by_head();
    }
    // The textarea moves and deletes by character, which lands inside what
    // the reader sees as one character (an emoji with a skin tone or a
    // joined family, a letter with a combining accent) and leaves half of it
    // behind: the key is repeated over the whole grapheme cluster instead.
    let times = char_step(key).map_or(1, |side| grapheme_chars(input, side));
    let mut modified = false;
    for _ in 0..times {
        modified |= input.input(key);
    }
    modified
}

#[derive(Clone, Copy)]
enum Side {
    Before,
    After,
}

/// Which side of the cursor a key moves over or deletes one character of,
/// for the textarea's one-character keys.
fn char_step(key: KeyEvent) -> Option<Side> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    if key.modifiers.contains(KeyModifiers::ALT) {
        return None;
    }
    match key.code {
        KeyCode::Left | KeyCode::Backspace if !ctrl => Some(Side::Before),
        KeyCode::Right | KeyCode::Delete if !ctrl => Some(Side::After),
        KeyCode::Char('b' | 'h') if ctrl => Some(Side::Before),
        KeyCode::Char('f' | 'd') if ctrl => Some(Side::After),
        _ => None,
    }
}

/// How many characters the grapheme cluster on `side` of the cursor has;
/// 1 at either end of a line (the key then crosses or joins lines).
fn grapheme_chars(input: &TextArea<'_>, side: Side) -> usize {
    let cursor = input.cursor();
    let (row, col) = (cursor.0, cursor.1);
    let Some(line) = input.lines().get(row) else {
        return 1;
    };
    let at = line.char_indices().nth(col).map_or(line.len(), |(i, _)| i);
    let cluster = match side {
        Side::Before => line[..at].graphemes(true).next_back(),
        Side::After => line[at..].graphemes(true).next(),
    };
    cluster.map_or(1, |g| g.chars().count().max(1))
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

    fn area(text: &str) -> TextArea<'static> {
        let mut t = TextArea::default();
        t.insert_str(text);
        t
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn keys_move_and_delete_whole_graphemes() {
        // A family joined by ZWJs (5 chars), a thumb with a skin tone (2),
        // e and a combining acute (2).
        let family = "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}";
        let thumb = "\u{1F44D}\u{1F3FD}";
        let accent = "e\u{301}";
        let mut t = area(&format!("a{family}{thumb}{accent}"));
        edit_line(&mut t, key(KeyCode::Backspace));
        assert_eq!(t.lines()[0], format!("a{family}{thumb}"));
        edit_line(&mut t, key(KeyCode::Left));
        assert_eq!(t.cursor(), (0, 6), "before the thumb, not inside it");
        edit_line(&mut t, key(KeyCode::Backspace));
        assert_eq!(t.lines()[0], format!("a{thumb}"), "the whole family");
        edit_line(&mut t, key(KeyCode::Left));
        edit_line(&mut t, key(KeyCode::Right));
        assert_eq!(t.cursor(), (0, 1));
        edit_line(&mut t, key(KeyCode::Delete));
        assert_eq!(t.lines()[0], "a");
        // At a line's start Backspace still joins the lines, one step.
        let mut t = area("x\ny");
        t.move_cursor(ratatui_textarea::CursorMove::Head);
        edit_line(&mut t, key(KeyCode::Backspace));
        assert_eq!(t.lines(), ["xy"]);
    }

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
