//! Small text helpers shared by the panes.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_textarea::{CursorMove, TextArea};
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// A key into a one-line input, as in the composer: readline's Ctrl+U kills
/// to the start of the line (the textarea alone makes it undo, so one
/// character seemed to go). True if the text changed.
pub fn edit_line(input: &mut TextArea<'_>, key: KeyEvent) -> bool {
    if key.code == KeyCode::Char('u') && key.modifiers.contains(KeyModifiers::CONTROL) {
        return input.delete_line_by_head();
    }
    // Alt+f as readline's: to the end of the word (the textarea goes to
    // the start of the next one).
    if key.code == KeyCode::Char('f')
        && key.modifiers == KeyModifiers::ALT
        && let n @ 1.. = word_run(input, Side::After, char::is_alphanumeric)
    {
        for _ in 0..n {
            input.move_cursor(CursorMove::Forward);
        }
        return false;
    }
    // Ctrl+W as readline's: back to the space before the word, whatever
    // the word holds (`/usr/local/bin`, `foo-bar.baz(qux)`); the textarea
    // stops at punctuation, which is Alt+Backspace's way.
    if key.code == KeyCode::Char('w')
        && key.modifiers == KeyModifiers::CONTROL
        && let n @ 1.. = word_run(input, Side::Before, |c| !c.is_whitespace())
    {
        // Cut forward from the word's start: the cut is kept for Ctrl+Y.
        for _ in 0..n {
            input.move_cursor(CursorMove::Back);
        }
        return input.delete_str(n);
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

/// A key that cuts text readline keeps for Ctrl+Y: Ctrl+K, Ctrl+U, Ctrl+W,
/// Alt+d, Alt+Backspace.
pub fn is_kill(key: KeyEvent) -> bool {
    match key.code {
        KeyCode::Char('k' | 'u' | 'w') => key.modifiers == KeyModifiers::CONTROL,
        KeyCode::Char('d') | KeyCode::Backspace => key.modifiers == KeyModifiers::ALT,
        _ => false,
    }
}

/// A kill that cuts what is before the cursor (its cut goes before the
/// earlier one's when kills come in a row).
pub fn kills_backward(key: KeyEvent) -> bool {
    matches!(key.code, KeyCode::Char('u' | 'w') | KeyCode::Backspace)
}

/// How many characters lie from the cursor to `side`, on its line, in a
/// run of what `in_word` refuses and then of what it takes: readline's
/// Alt+f (to the end of a word of letters and digits) and Ctrl+W (back to
/// the space before the word), each by its own idea of a word.
fn word_run(input: &TextArea<'_>, side: Side, in_word: impl Fn(char) -> bool) -> usize {
    let cursor = input.cursor();
    let Some(line) = input.lines().get(cursor.0) else {
        return 0;
    };
    let chars: Vec<char> = match side {
        Side::After => line.chars().skip(cursor.1).collect(),
        Side::Before => {
            let mut before: Vec<char> = line.chars().take(cursor.1).collect();
            before.reverse();
            before
        }
    };
    let gap = chars.iter().take_while(|c| !in_word(**c)).count();
    gap + chars[gap..].iter().take_while(|c| in_word(**c)).count()
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

/// Words that join what follows them: a cut just after one reads as cut
/// mid-phrase (`on Thursday, and …`), so it is cut before it.
const JOINING_WORDS: [&str; 13] = [
    "and", "or", "on", "of", "at", "in", "from", "through", "to", "until", "every", "the", "for",
];

/// `s` cut to `width` terminal cells after a whole word, `…` after it:
/// `(at 09:00, on Monday, Tuesday, …)`, never `on Monday, T…`, which reads
/// as a day that is not there. Not after a joining word (`Thursday, …`
/// rather than `Thursday, and …`); never inside quotes (a cron pattern is
/// whole or not there); a bracket left open is closed after the `…`.
/// Where not even the first word fits, it is cut as [`elide`] cuts.
pub fn elide_words(s: &str, width: usize) -> String {
    if s.width() <= width {
        return s.to_string();
    }
    let cut_at = |head: &str| {
        let close = if head.matches('(').count() > head.matches(')').count() {
            ")"
        } else {
            ""
        };
        format!("{head} …{close}")
    };
    let longest = s
        .match_indices(' ')
        .rev()
        .map(|(at, _)| s[..at].trim_end())
        .find(|head| {
            !head.is_empty() && head.matches('"').count() % 2 == 0 && cut_at(head).width() <= width
        });
    let Some(mut head) = longest else {
        return elide(s, width);
    };
    while let Some((before, last)) = head.rsplit_once(' ')
        && JOINING_WORDS.contains(&last)
        && !before.trim_end().is_empty()
    {
        head = before.trim_end();
    }
    cut_at(head)
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

/// `1 more line`, `3 more lines`: what a fold leaves out.
pub fn more_lines(n: usize) -> String {
    format!("{n} more line{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn area(text: &str) -> TextArea<'static> {
        let mut t = TextArea::default();
        t.insert_str(text);
        t
    }

    #[test]
    fn ctrl_w_rubs_out_back_to_the_space_before_the_word() {
        let ctrl_w = KeyEvent::new(KeyCode::Char('w'), KeyModifiers::CONTROL);
        for (typed, left) in [
            ("cd /usr/local/bin", "cd "),
            ("call foo-bar.baz(qux)  ", "call "),
            ("one", ""),
        ] {
            let mut t = TextArea::default();
            t.insert_str(typed);
            assert!(edit_line(&mut t, ctrl_w));
            assert_eq!(t.lines()[0], left, "{typed:?}");
        }
    }

    #[test]
    fn elide_words_cuts_after_a_whole_word_outside_quotes() {
        let days = "on Monday, Tuesday, Wednesday";
        assert_eq!(elide_words(days, 40), days, "what fits is whole");
        assert_eq!(elide_words(days, 24), "on Monday, Tuesday, …");
        assert_eq!(
            elide_words("(at 09:00, on Monday, Tuesday)", 25),
            "(at 09:00, on Monday, …)"
        );
        // Not just after a joining word.
        assert_eq!(
            elide_words("hour 9, 12, and 18, on Monday", 20),
            "hour 9, 12, …"
        );
        // Not inside the quoted pattern: before it, as a whole.
        assert_eq!(
            elide_words("cron \"*/15 9-17 * * 1-5\" (every)", 26),
            "cron \"*/15 9-17 * * 1-5\" …"
        );
        assert_eq!(elide_words("cron \"*/15 9-17 * * 1-5\"", 20), "cron …");
        // A first word wider than all: cut inside it, as elide does.
        assert_eq!(elide_words("Wednesday", 5), "Wedn…");
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
