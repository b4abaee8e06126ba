//! Makes untrusted text (model output, titles, file names, error messages)
//! safe to put on the terminal.
//!
//! Nothing in the output can act on the terminal:
//! - `\n` is kept (by [`sanitize`]); `\r\n` is normalised to `\n` (a CR
//!   directly before a LF carries no information and would otherwise show as
//!   `␍` at the end of every line of CRLF text).
//! - `\t` is expanded to spaces up to the next tab stop (every 4 columns):
//!   ratatui drops control characters when drawing but `unicode-width` counts
//!   them, so a raw tab would break width computations. ([`sanitize_keep_tabs`]
//!   keeps tabs for the Markdown renderer, which expands them itself.)
//! - Every other C0 control (including ESC, BEL, a lone CR, backspace) becomes
//!   its Control Pictures symbol (U+2400 + c), DEL becomes `␡`. So
//!   `ESC ] 0 ; title BEL` shows as `␛]0;title␇` and cannot set the title.
//! - C1 controls U+0080–U+009F (8-bit CSI, OSC, ...) become `<9B>` etc.
//! - Bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069),
//!   which can reorder what the user sees ("Trojan Source"), are shown
//!   visibly as `<U+202E>` etc. The invisible bidi *marks* (U+200E LRM,
//!   U+200F RLM, U+061C ALM) cannot reorder text beyond a character and are
//!   common in legitimate right-to-left text, so they are removed.
//! - For display ([`sanitize_line`], [`sanitize_keep_tabs`]), emoji
//!   presentation selectors (U+FE0E, U+FE0F) and skin-tone modifiers
//!   (U+1F3FB–U+1F3FF) are removed: terminals disagree with `unicode-width`
//!   on how wide they make a character (tmux draws `⚠️` one column wide
//!   where ratatui counts two, and `👍🏽` four where it counts two), and
//!   each disagreement shifts the rest of the row and leaves stray glyphs.
//!   Without them every terminal and ratatui agree (`⚠`, `👍`). Text that
//!   is kept or sent ([`sanitize`], [`sanitize_source`]) keeps them. Tag
//!   characters (U+E0000–E007F, invisible; a few flag emoji) and the
//!   zero-width joiner (a family emoji is then drawn as its people) go the
//!   same way, and a flag's two regional indicators are drawn as their two
//!   capital letters (`🇫🇷` as `FR`): tmux and the terminal under it
//!   disagreed on them, and half-flags stayed on rows scrolled past.
//! - The line and paragraph separators U+2028/2029 become a line break (a
//!   space on one line), and the interlinear annotation marks U+FFF9–FFFB
//!   show as `<U+FFF9>`: terminals draw these format characters each their
//!   own way, and the difference left stray text on screen.
use std::borrow::Cow;

/// Tab stops every this many columns.
const TAB_WIDTH: usize = 4;

/// Keeps `\n`; tabs become spaces (to the next 4-column tab stop); every other
/// control character and escape sequence is made visible and inert.
pub fn sanitize(s: &str) -> Cow<'_, str> {
    run(s, Mode::Text)
}

/// Like [`sanitize`] but for one-line display: newlines and tabs become spaces.
pub fn sanitize_line(s: &str) -> Cow<'_, str> {
    run(s, Mode::Line)
}

/// The first `n` characters of `text` as one safe line (leading and
/// trailing whitespace dropped), with `…` where it was cut.
pub fn excerpt(text: &str, n: usize) -> String {
    let line = sanitize_line(text);
    let line = line.trim();
    let mut out: String = line.chars().take(n).collect();
    if line.chars().nth(n).is_some() {
        out.push('…');
    }
    out
}

/// Like [`sanitize`] but keeps `\t`, for callers that expand tabs themselves
/// before anything reaches ratatui (the Markdown renderer: tabs matter to the
/// Markdown parser and must survive in code blocks the user copies, e.g. a
/// Makefile). A raw tab must never be drawn: `unicode-width` counts it as one
/// column while ratatui drops it.
pub fn sanitize_keep_tabs(s: &str) -> Cow<'_, str> {
    run(s, Mode::KeepTabs)
}

/// Like [`sanitize_keep_tabs`] for text that is kept or sent rather than
/// drawn (a paste into the composer, an export): emoji modifiers stay.
pub fn sanitize_source(s: &str) -> Cow<'_, str> {
    run(s, Mode::Source)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Keep `\n`, expand `\t`.
    Text,
    /// Keep `\n` and `\t`.
    KeepTabs,
    /// Keep `\n`, `\t` and emoji modifiers.
    Source,
    /// `\n` and `\t` become spaces.
    Line,
}

fn run(s: &str, mode: Mode) -> Cow<'_, str> {
    let first = match mode {
        Mode::Text => scan(s, |b| b == b'\n', false),
        Mode::KeepTabs => scan(s, |b| b == b'\n' || b == b'\t', true),
        Mode::Source => scan(s, |b| b == b'\n' || b == b'\t', false),
        Mode::Line => scan(s, |_| false, true),
    };
    match first {
        None => Cow::Borrowed(s),
        Some(at) => Cow::Owned(rewrite(s, at, mode)),
    }
}

/// Byte offset of the first byte that needs rewriting, found in one pass over
/// the bytes; `allowed_c0` says which C0 bytes may stay. Always a char boundary.
#[inline]
fn scan(s: &str, allowed_c0: impl Fn(u8) -> bool, modifiers: bool) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c < 0x20 {
            if !allowed_c0(c) {
                return Some(i);
            }
        } else if c == 0x7f {
            return Some(i);
        } else if c >= 0x80 {
            // Lead bytes of the only non-ASCII characters we rewrite:
            // C1 (C2 80..9F), ALM U+061C (D8 9C), bidi (E2 80 8E/8F/AA..AE,
            // E2 81 A6..A9). `s` is valid UTF-8, so continuation bytes exist.
            match c {
                0xC2 if matches!(b.get(i + 1), Some(0x80..=0x9F)) => return Some(i),
                0xD8 if b.get(i + 1) == Some(&0x9C) => return Some(i),
                // U+FE0E, U+FE0F (EF B8 8E/8F); U+1F3FB..FF (F0 9F 8F BB..BF).
                0xEF if modifiers
                    && b.get(i + 1) == Some(&0xB8)
                    && matches!(b.get(i + 2), Some(0x8E | 0x8F)) =>
                {
                    return Some(i);
                }
                0xF0 if modifiers
                    && b.get(i + 1) == Some(&0x9F)
                    && b.get(i + 2) == Some(&0x8F)
                    && matches!(b.get(i + 3), Some(0xBB..=0xBF)) =>
                {
                    return Some(i);
                }
                // Regional indicators U+1F1E6..1F1FF (F0 9F 87 A6..BF).
                0xF0 if modifiers
                    && b.get(i + 1) == Some(&0x9F)
                    && b.get(i + 2) == Some(&0x87)
                    && matches!(b.get(i + 3), Some(0xA6..=0xBF)) =>
                {
                    return Some(i);
                }
                // The zero-width joiner U+200D (E2 80 8D).
                0xE2 if modifiers && b.get(i + 1) == Some(&0x80) && b.get(i + 2) == Some(&0x8D) => {
                    return Some(i);
                }
                // Bidi marks and overrides; the line and paragraph
                // separators U+2028/2029 (E2 80 A8/A9).
                0xE2 => match (b.get(i + 1), b.get(i + 2)) {
                    (Some(0x80), Some(0x8E | 0x8F | 0xA8..=0xAE))
                    | (Some(0x81), Some(0xA6..=0xA9)) => return Some(i),
                    _ => {}
                },
                // Interlinear annotation U+FFF9..FFFB (EF BF B9..BB).
                0xEF if b.get(i + 1) == Some(&0xBF)
                    && matches!(b.get(i + 2), Some(0xB9..=0xBB)) =>
                {
                    return Some(i);
                }
                // Tag characters U+E0000..E007F (F3 A0 80..81 xx).
                0xF3 if modifiers
                    && b.get(i + 1) == Some(&0xA0)
                    && matches!(b.get(i + 2), Some(0x80 | 0x81)) =>
                {
                    return Some(i);
                }
                _ => {}
            }
        }
        i += 1;
    }
    None
}

/// `value` as pretty JSON in which every character a terminal could act on
/// is written as a `\uXXXX` escape: serde_json escapes C0 controls only, so
/// a C1 control (U+009B is a CSI) or a bidi override in a reply reached the
/// terminal of whoever ran `tock show --json`. The JSON means the same.
pub fn json_text(value: &impl serde::Serialize) -> serde_json::Result<String> {
    let text = serde_json::to_string_pretty(value)?;
    let acts = |c: char| matches!(c, '\u{7f}'..='\u{9f}') || is_bidi_override(c) || is_bidi_mark(c);
    if !text.contains(acts) {
        return Ok(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if acts(c) {
            // Outside strings JSON is ASCII, so these are inside one.
            out.push_str("\\u");
            push_hex(&mut out, u32::from(c), 4);
        } else {
            out.push(c);
        }
    }
    Ok(out)
}

fn is_bidi_override(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

fn is_bidi_mark(c: char) -> bool {
    matches!(c, '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// Emoji presentation selectors and skin-tone modifiers (see the module doc).
fn is_emoji_modifier(c: char) -> bool {
    matches!(c, '\u{FE0E}' | '\u{FE0F}' | '\u{1F3FB}'..='\u{1F3FF}')
}

/// Tag characters (U+E0000–E007F): invisible, and left in a row they shift
/// what a terminal draws after them (see the module doc). Only a few flag
/// emoji use them; those show as the plain black flag.
fn is_tag(c: char) -> bool {
    matches!(c, '\u{E0000}'..='\u{E007F}')
}

/// Interlinear annotation marks (U+FFF9–FFFB): format characters that
/// terminals draw differently (a glyph, nothing, or a stray cell).
fn is_interlinear_annotation(c: char) -> bool {
    matches!(c, '\u{FFF9}'..='\u{FFFB}')
}

fn push_hex(out: &mut String, v: u32, digits: u32) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for shift in (0..digits).rev() {
        out.push(HEX[((v >> (shift * 4)) & 0xF) as usize] as char);
    }
}

/// Slow path: copies `s[..at]` verbatim (it is known clean) and rewrites the rest.
fn rewrite(s: &str, at: usize, mode: Mode) -> String {
    let one_line = mode == Mode::Line;
    let mut out = String::with_capacity(s.len() + 16);
    let (clean, rest) = s.split_at(at);
    out.push_str(clean);
    // Display column since the last newline, for tab stops.
    let mut col = match clean.rfind('\n') {
        Some(nl) => unicode_width::UnicodeWidthStr::width(&clean[nl + 1..]),
        None => unicode_width::UnicodeWidthStr::width(clean),
    };
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' if one_line => {
                out.push(' ');
                col += 1;
            }
            '\n' => {
                out.push('\n');
                col = 0;
            }
            '\r' if chars.peek() == Some(&'\n') => {
                // CRLF: drop the CR; the LF is handled next.
            }
            '\t' if matches!(mode, Mode::KeepTabs | Mode::Source) => {
                out.push('\t');
                col += TAB_WIDTH - col % TAB_WIDTH;
            }
            '\t' if one_line => {
                out.push(' ');
                col += 1;
            }
            '\t' => {
                let n = TAB_WIDTH - col % TAB_WIDTH;
                for _ in 0..n {
                    out.push(' ');
                }
                col += n;
            }
            '\u{00}'..='\u{1F}' => {
                // U+2400..U+241F: Control Pictures, all valid chars.
                out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{FFFD}'));
                col += 1;
            }
            '\u{7F}' => {
                out.push('\u{2421}');
                col += 1;
            }
            '\u{80}'..='\u{9F}' => {
                out.push('<');
                push_hex(&mut out, c as u32, 2);
                out.push('>');
                col += 4;
            }
            c if is_bidi_override(c) => {
                out.push_str("<U+");
                push_hex(&mut out, c as u32, 4);
                out.push('>');
                col += 8;
            }
            // Line and paragraph separators break the line by meaning; a
            // terminal does not, and what it draws of them differs.
            '\u{2028}' | '\u{2029}' if one_line => {
                out.push(' ');
                col += 1;
            }
            '\u{2028}' | '\u{2029}' => {
                out.push('\n');
                col = 0;
            }
            c if is_interlinear_annotation(c) => {
                out.push_str("<U+");
                push_hex(&mut out, c as u32, 4);
                out.push('>');
                col += 8;
            }
            c if is_bidi_mark(c) => {}
            c if (is_emoji_modifier(c) || is_tag(c) || c == '\u{200D}')
                && matches!(mode, Mode::KeepTabs | Mode::Line) => {}
            // A flag is two regional indicators, drawn as one glyph two
            // columns wide by some terminals and as two letters by others
            // (tmux): drawn as the two capital letters, every one agrees.
            c @ '\u{1F1E6}'..='\u{1F1FF}' if matches!(mode, Mode::KeepTabs | Mode::Line) => {
                out.push(char::from(b'A' + (u32::from(c) - 0x1F1E6) as u8));
                col += 1;
            }
            c => {
                out.push(c);
                col += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
            }
        }
    }
    out
}

/// The text a message sends, as every front end sends it: without the
/// blank lines before and after it (a pipe's or a file's last newline), and
/// with its first line's indentation (pasted code keeps its shape).
/// `text` without a terminal's escape sequences (colours, titles, cursor
/// moves) or the control characters that are not spacing: what a coloured
/// log or `ls --color` pasted or piped in means, as the model should read
/// it (made visible instead, they reached it as `␛[31m`). anstream's
/// stripper (clap's own dependency) parses the sequences as a terminal
/// does.
pub fn without_escapes(text: &str) -> String {
    anstream::adapter::strip_str(text).to_string()
}

pub fn message_body(text: &str) -> &str {
    let text = text.trim_end();
    let blank: usize = text
        .split_inclusive('\n')
        .take_while(|line| line.trim().is_empty())
        .map(str::len)
        .sum();
    &text[blank..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Flags are drawn as their letters and joined emoji as their parts;
    /// kept or sent, they stay as they are.
    #[test]
    fn flags_and_joined_emoji_are_drawn_in_a_way_every_terminal_agrees_on() {
        let s = "flags 🇫🇷🇩🇪 end, family 👨\u{200D}👩\u{200D}👧";
        assert_eq!(sanitize_line(s), "flags FRDE end, family 👨👩👧");
        assert_eq!(sanitize_keep_tabs(s), "flags FRDE end, family 👨👩👧");
        assert_eq!(sanitize_source(s), s);
        assert_eq!(sanitize(s), s);
    }

    /// Drawn, emoji lose what terminals measure differently; kept or sent,
    /// they keep it.
    #[test]
    fn emoji_modifiers_are_left_out_of_what_is_drawn_only() {
        let s = "⚠\u{FE0F} careful 👍\u{1F3FD} ok ✅";
        assert_eq!(sanitize_line(s), "⚠ careful 👍 ok ✅");
        assert_eq!(sanitize_keep_tabs(s), "⚠ careful 👍 ok ✅");
        assert_eq!(sanitize(s), s);
        assert_eq!(sanitize_source(s), s);
        // What is left is as wide for ratatui as for the terminals.
        assert_eq!(
            unicode_width::UnicodeWidthStr::width(&*sanitize_line(s)),
            18
        );
        // Nothing to remove: no copy.
        assert!(matches!(sanitize_line("plain ✅ text"), Cow::Borrowed(_)));
    }

    fn is_forbidden(c: char, allow_newline: bool) -> bool {
        (c < ' ' && !(allow_newline && c == '\n'))
            || ('\u{7F}'..='\u{9F}').contains(&c)
            || is_bidi_override(c)
            || is_bidi_mark(c)
            || matches!(c, '\u{2028}' | '\u{2029}')
            || is_interlinear_annotation(c)
    }

    #[test]
    fn clean_text_is_borrowed() {
        for s in [
            "",
            "hello",
            "line one\nline two",
            "héllo wörld ✓ 日本語 🦀",
            "→ ← ‘quotes’",
        ] {
            assert!(matches!(sanitize(s), Cow::Borrowed(_)), "{s:?}");
        }
        assert!(matches!(sanitize_line("one line ✓"), Cow::Borrowed(_)));
    }

    #[test]
    fn osc_title_sequence_is_inert() {
        assert_eq!(sanitize("\x1b]0;title\x07"), "␛]0;title␇");
        assert_eq!(sanitize("a\x1b[2Jb"), "a␛[2Jb");
    }

    #[test]
    fn osc52_clipboard_is_inert() {
        let s = "\x1b]52;c;cm0gLXJmIH4=\x1b\\";
        assert_eq!(sanitize(s), "␛]52;c;cm0gLXJmIH4=␛\\");
    }

    #[test]
    fn c0_controls_become_control_pictures() {
        assert_eq!(sanitize("\0\x08\x7f"), "␀␈␡");
        assert_eq!(sanitize("a\rb"), "a␍b");
        assert_eq!(sanitize("\x1f"), "␟");
    }

    #[test]
    fn crlf_becomes_lf() {
        assert_eq!(sanitize("a\r\nb\r\n"), "a\nb\n");
        assert_eq!(sanitize_line("a\r\nb"), "a b");
        assert_eq!(sanitize("a\r\r\nb"), "a␍\nb");
    }

    #[test]
    fn c1_controls_are_visible() {
        assert_eq!(sanitize("x\u{9b}2Jy"), "x<9B>2Jy");
        assert_eq!(sanitize("\u{9d}0;t\u{9c}"), "<9D>0;t<9C>");
        assert_eq!(sanitize("\u{80}\u{85}"), "<80><85>");
        // Neighbours of the C1 range are untouched.
        assert!(matches!(sanitize("\u{a0}é"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_text_escapes_what_a_terminal_acts_on_and_means_the_same() {
        let v = serde_json::json!({"c": "a\u{9b}31mb\u{202e}c\u{7f}\u{200f}\u{1b}é"});
        let text = json_text(&v).unwrap();
        assert!(
            !text.contains(|c: char| c.is_control() && c != '\n'
                || is_bidi_override(c)
                || is_bidi_mark(c)),
            "{text:?}"
        );
        assert!(
            text.contains("\\u009B") && text.contains("\\u202E"),
            "{text}"
        );
        assert!(text.contains('é'));
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), v);
    }

    #[test]
    fn bidi_overrides_are_visible_and_marks_removed() {
        assert_eq!(sanitize("abc\u{202e}fed"), "abc<U+202E>fed");
        assert_eq!(sanitize("\u{2066}x\u{2069}"), "<U+2066>x<U+2069>");
        assert_eq!(sanitize("a\u{200f}b\u{200e}c\u{61c}d"), "abcd");
        // Neighbours are untouched.
        assert!(matches!(
            sanitize("\u{2010}\u{2027}\u{2065}\u{206a}\u{061b}"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn format_characters_terminals_draw_their_own_way_are_made_plain() {
        assert_eq!(sanitize("a\u{2028}b\u{2029}c"), "a\nb\nc");
        assert_eq!(sanitize_line("a\u{2028}b"), "a b");
        assert_eq!(
            sanitize_keep_tabs("x\u{FFF9}y\u{FFFB}"),
            "x<U+FFF9>y<U+FFFB>"
        );
        // A flag made with tag characters shows as the plain black flag.
        let scotland = "\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}";
        assert_eq!(sanitize_line(scotland), "\u{1F3F4}");
        assert_eq!(sanitize_keep_tabs(&format!("{scotland} x")), "\u{1F3F4} x");
        assert_eq!(sanitize(scotland), scotland, "kept where it is not drawn");
    }

    #[test]
    fn tabs_expand_to_tab_stops() {
        assert_eq!(sanitize("\tx"), "    x");
        assert_eq!(sanitize("ab\tx"), "ab  x");
        assert_eq!(sanitize("abcd\tx"), "abcd    x");
        assert_eq!(sanitize("ab\ncd\tx\n\ty"), "ab\ncd  x\n    y");
        assert_eq!(sanitize("日本\tx"), "日本    x");
    }

    #[test]
    fn keep_tabs_variant() {
        assert!(matches!(sanitize_keep_tabs("a\tb\n"), Cow::Borrowed(_)));
        assert_eq!(sanitize_keep_tabs("a\tb\x1b[0m\r\n"), "a\tb␛[0m\n");
    }

    #[test]
    fn one_line_variant() {
        assert_eq!(sanitize_line("a\nb\tc"), "a b c");
        assert_eq!(sanitize_line("t\x1b]0;x\x07"), "t␛]0;x␇");
    }

    proptest! {
        #[test]
        fn output_has_no_controls(s in "(\\PC|[\\x00-\\x1f\\x7f-\\x9f\\u{200e}\\u{200f}\\u{61c}\\u{202a}-\\u{202e}\\u{2066}-\\u{2069}\\u{2028}\\u{2029}\\u{fff9}-\\u{fffb}\\u{e0000}-\\u{e007f}])*") {
            let out = sanitize(&s);
            prop_assert!(!out.chars().any(|c| is_forbidden(c, true)), "{:?} -> {:?}", s, out);
            let kept = sanitize_keep_tabs(&s);
            prop_assert!(!kept.chars().any(|c| c != '\t' && (is_forbidden(c, true) || is_tag(c))), "{:?} -> {:?}", s, kept);
            let line = sanitize_line(&s);
            prop_assert!(!line.chars().any(|c| is_forbidden(c, false) || is_tag(c)), "{:?} -> {:?}", s, line);
            // Borrowed exactly when nothing had to change.
            if !s.chars().any(|c| is_forbidden(c, true) || c == '\t') {
                prop_assert!(matches!(out, Cow::Borrowed(_)));
            }
            let breaks = s.replace(['\u{2028}', '\u{2029}'], "\n");
            prop_assert_eq!(out.lines().count(), breaks.lines().count());
        }
    }
}
