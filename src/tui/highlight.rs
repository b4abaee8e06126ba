//! Syntax highlighting of code blocks with syntect, mapped to ratatui styles.
//!
//! The syntax and theme sets are loaded once, lazily (or ahead of time from a
//! background thread by [`warm_up`]), and shared by every render.
use std::sync::LazyLock;

use ratatui::style::{Color, Modifier, Style};
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, Theme, ThemeSet};
use syntect::parsing::{SyntaxReference, SyntaxSet};

/// The dark theme used for code.
const THEME: &str = "base16-ocean.dark";

/// Lines longer than this (bytes) are not highlighted: syntect's regex engine
/// gets slow on very long lines (minified JSON, base64 blobs). From the first
/// such line on, the rest of the block is shown plain.
const MAX_LINE_BYTES: usize = 4096;

static SYNTAXES: LazyLock<SyntaxSet> = LazyLock::new(SyntaxSet::load_defaults_newlines);

static THEME_DATA: LazyLock<Theme> = LazyLock::new(|| {
    ThemeSet::load_defaults()
        .themes
        .remove(THEME)
        .unwrap_or_default()
});

/// Loads the syntax and theme sets on a background thread so that the first
/// frame with a code block does not wait for them.
pub fn warm_up() {
    // If the thread cannot be spawned the sets are simply loaded on first use.
    let _ = std::thread::Builder::new()
        .name("tock-highlight-warm-up".into())
        .spawn(|| {
            LazyLock::force(&SYNTAXES);
            LazyLock::force(&THEME_DATA);
        });
}

/// Languages that the default syntax set lacks, mapped to a close relative,
/// and common spellings that `find_syntax_by_token` does not know.
fn alias(token: &str) -> &str {
    match token {
        "ts" | "typescript" | "tsx" | "jsx" | "javascriptreact" | "typescriptreact" | "mjs"
        | "cjs" => "js",
        "shell" | "zsh" | "console" | "shell-session" | "sh" | "ksh" | "fish" => "bash",
        "golang" => "go",
        "c++" => "cpp",
        "c#" | "csharp" => "cs",
        "py3" | "python3" => "py",
        "yml" => "yaml",
        "jsonc" | "json5" => "json",
        "objective-c" | "objc" => "m",
        other => other,
    }
}

/// The syntax for a fence's language token, or `None` for an unknown
/// language or plain text (shown without highlighting).
fn syntax_for(token: &str) -> Option<&'static SyntaxReference> {
    if token.is_empty() || token.len() > 64 {
        return None;
    }
    let lower = token.to_ascii_lowercase();
    let set: &'static SyntaxSet = &SYNTAXES;
    let syntax = set.find_syntax_by_token(alias(&lower))?;
    (syntax.name != "Plain Text").then_some(syntax)
}

/// Highlights one code block line by line.
pub struct Highlighter {
    lines: Option<HighlightLines<'static>>,
    /// Reused output buffer.
    out: Vec<(Style, std::ops::Range<usize>)>,
}

impl Highlighter {
    /// A highlighter for the language token of a fence (`rust`, `py`, ...).
    /// Unknown languages give a highlighter that returns the plain style.
    pub fn new(token: &str) -> Self {
        let theme: &'static Theme = &THEME_DATA;
        Self {
            lines: syntax_for(token).map(|s| HighlightLines::new(s, theme)),
            out: Vec::new(),
        }
    }

    /// Whether this highlighter colours anything.
    pub fn is_plain(&self) -> bool {
        self.lines.is_none()
    }

    /// Styles for one line, which must include its trailing `\n` (if any) so
    /// that multi-line constructs are tracked. Returns byte ranges of `line`
    /// with their style, covering the line in order. On any highlighting error
    /// the highlighter falls back to plain for the rest of the block.
    pub fn line(&mut self, line: &str) -> &[(Style, std::ops::Range<usize>)] {
        self.out.clear();
        if line.len() > MAX_LINE_BYTES {
            self.lines = None;
        }
        if let Some(h) = &mut self.lines {
            match h.highlight_line(line, &SYNTAXES) {
                Ok(regions) => {
                    // The pieces are consecutive slices covering `line`.
                    let mut start = 0;
                    for (style, piece) in regions {
                        let end = (start + piece.len()).min(line.len());
                        self.out.push((convert(style), start..end));
                        start = end;
                    }
                    if start < line.len() {
                        self.out.push((Style::new(), start..line.len()));
                    }
                    return &self.out;
                }
                Err(_) => self.lines = None,
            }
        }
        self.out.push((Style::new(), 0..line.len()));
        &self.out
    }
}

fn convert(s: syntect::highlighting::Style) -> Style {
    let fg = s.foreground;
    let mut style = Style::new().fg(Color::Rgb(fg.r, fg.g, fg.b));
    if s.font_style.contains(FontStyle::BOLD) {
        style = style.add_modifier(Modifier::BOLD);
    }
    if s.font_style.contains(FontStyle::ITALIC) {
        style = style.add_modifier(Modifier::ITALIC);
    }
    if s.font_style.contains(FontStyle::UNDERLINE) {
        style = style.add_modifier(Modifier::UNDERLINED);
    }
    style
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_and_unknown_languages() {
        for known in [
            "rust", "rs", "Python", "py", "js", "ts", "sh", "bash", "c++", "json", "go",
        ] {
            assert!(syntax_for(known).is_some(), "{known}");
        }
        for unknown in ["", "nonsense-lang", "text", "txt", "plain"] {
            assert!(syntax_for(unknown).is_none(), "{unknown}");
        }
    }

    #[test]
    fn ranges_cover_the_line() {
        let mut h = Highlighter::new("rust");
        assert!(!h.is_plain());
        let line = "fn main() { let x = \"s\"; }\n";
        let ranges = h.line(line);
        assert!(ranges.len() > 3, "rust code gets several colours");
        let mut at = 0;
        for (_, r) in ranges {
            assert_eq!(r.start, at);
            at = r.end;
        }
        assert_eq!(at, line.len());
    }

    #[test]
    fn plain_for_unknown() {
        let mut h = Highlighter::new("klingon");
        assert!(h.is_plain());
        assert_eq!(h.line("abc\n"), &[(Style::new(), 0..4)]);
    }
}
