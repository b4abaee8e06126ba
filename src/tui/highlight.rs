//! Syntax highlighting of code blocks with syntect, mapped to ratatui styles.
//!
//! syntect is slow: several microseconds per byte, depending on the
//! language. It runs on Oniguruma, the regex engine its grammars are written
//! for: the pure-Rust one (fancy-regex) backtracks in a VM and took twice as
//! long (a streamed Rust line: 0.2 ms a frame against 0.1 ms), and its
//! compiled patterns took 7 MB more. Rendering happens again on every width
//! change and, while a reply streams, on every frame for the growing tail,
//! so results are memoized:
//!
//! - A small cache on the drawing thread keeps, per code block, the styles
//!   of its complete lines and the parser state after them (Oniguruma's
//!   match regions in that state cannot move between threads). A re-render
//!   of the same block (another width) costs a copy; a block that grew
//!   (streaming) resumes from the saved state, so each line is highlighted once.
//! - Only complete lines are cached: the result for a line depends only on
//!   the lines before it, so the output never depends on what is cached, and
//!   rendering stays a pure function of its input.
//! - A render highlights at most [`MAX_HIGHLIGHT_BYTES`] of code in total
//!   (whole lines, in document order); the rest is shown plain, so even a
//!   huge reply renders in bounded time.
//!
//! The syntax and theme sets are loaded once, on a background thread, when
//! the first code block is drawn (plain until then, for a frame or two):
//! not at start, where they would add 1.6 MB to every session, code or not.
use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex, OnceLock, PoisonError};

use ratatui::style::{Color, Modifier, Style};
use syntect::highlighting::{
    FontStyle, HighlightIterator, HighlightState, Highlighter, Theme, ThemeSet,
};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};

use super::theme::{Background, palette};

/// The themes used for code, on a dark and on a light background.
const DARK_THEME: &str = "base16-ocean.dark";
const LIGHT_THEME: &str = "InspiredGitHub";

/// Code highlighted per render, in bytes; further code is shown plain.
/// At syntect's speed this bounds the highlighting part of a render to a few
/// hundred milliseconds when nothing is cached.
pub const MAX_HIGHLIGHT_BYTES: usize = 64 * 1024;

/// Lines longer than this (bytes) are not highlighted, nor anything after
/// them in the block: the regex engine gets very slow on long lines
/// (minified JSON, base64 blobs).
const MAX_LINE_BYTES: usize = 2048;

/// The most the cache takes (on each thread that draws), in bytes: code
/// text, styled ranges and parser states (see `Entry::bytes`). Beyond it the
/// least recently used blocks are forgotten (highlighted again when shown).
pub const CACHE_BYTES: usize = 3 << 20;

/// What a saved parser state takes, about (its context stacks; measured
/// on Rust and Python blocks at a few hundred bytes to 2 KB).
const STATE_BYTES: usize = 2048;

static SYNTAXES: LazyLock<SyntaxSet> = LazyLock::new(SyntaxSet::load_defaults_newlines);

static THEMES: LazyLock<[Theme; 2]> = LazyLock::new(|| {
    let mut set = ThemeSet::load_defaults().themes;
    [
        set.remove(DARK_THEME).unwrap_or_default(),
        set.remove(LIGHT_THEME).unwrap_or_default(),
    ]
});

static HIGHLIGHTERS: LazyLock<[Highlighter<'static>; 2]> =
    LazyLock::new(|| [Highlighter::new(&THEMES[0]), Highlighter::new(&THEMES[1])]);

/// The highlighter for the palette this thread draws with.
fn highlighter(bg: Background) -> &'static Highlighter<'static> {
    &HIGHLIGHTERS[usize::from(bg == Background::Light)]
}

thread_local! {
    static CACHE: RefCell<Cache> = RefCell::new(Cache::default());
}

// Deferred compiling, for the interactive UI: the first block in a language
// costs milliseconds of regex compiling (about 5 ms for the bench reply's
// languages), which would stall a frame. On a thread
// that opted in (the UI thread), such a block is shown plain while a
// background thread compiles the language, then `generation` moves on and the
// UI is woken to render again. Other threads (tests, benches, export) always
// highlight synchronously, so their output stays a pure function of the input.
thread_local! {
    static DEFER: Cell<bool> = const { Cell::new(false) };
}
static SETS_LOADED: AtomicBool = AtomicBool::new(false);
static COMPILED: LazyLock<Mutex<HashSet<String>>> = LazyLock::new(Mutex::default);
static COMPILING: LazyLock<Mutex<HashSet<String>>> = LazyLock::new(Mutex::default);
static GENERATION: AtomicU64 = AtomicU64::new(0);
static ON_READY: OnceLock<Box<dyn Fn() + Send + Sync>> = OnceLock::new();

/// Opt this thread into deferred compiling; `on_ready` is called (from a
/// background thread) whenever more highlighting became available.
pub fn defer_on_this_thread(on_ready: impl Fn() + Send + Sync + 'static) {
    DEFER.with(|d| d.set(true));
    let _ = ON_READY.set(Box::new(on_ready));
}

/// Changes whenever deferred highlighting became available (or the palette
/// changed): part of render cache keys.
pub fn generation() -> u64 {
    GENERATION.load(Ordering::Acquire)
}

/// Makes every cached rendering stale (their colours changed).
pub fn invalidate() {
    GENERATION.fetch_add(1, Ordering::AcqRel);
}

fn ready_now(name: &str) -> bool {
    if COMPILED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .contains(name)
    {
        return true;
    }
    if !SETS_LOADED.load(Ordering::Acquire) {
        // The sets are still loading (warm-up): ask again when they are.
        spawn_compile(None);
        return false;
    }
    spawn_compile(Some(name.to_string()));
    false
}

/// Compile a language (or just load the sets) off the UI thread, once.
fn spawn_compile(lang: Option<String>) {
    let key = lang.clone().unwrap_or_default();
    if !COMPILING
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(key.clone())
    {
        return;
    }
    let thread_key = key.clone();
    let spawned = std::thread::Builder::new()
        .name("tock-highlight-compile".into())
        .spawn(move || {
            let key = thread_key;
            LazyLock::force(&SYNTAXES);
            LazyLock::force(&HIGHLIGHTERS);
            SETS_LOADED.store(true, Ordering::Release);
            if let Some(name) = &lang
                && let Some(syntax) = SYNTAXES.find_syntax_by_name(name)
            {
                // Highlighting a little text compiles the patterns most blocks use.
                let sample = "let x = 1; // x\n\"s\"\n";
                let bg = Background::Dark;
                let _ = run(fresh_state(syntax, bg), bg, sample, 0, sample.len());
                COMPILED
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(name.clone());
            }
            COMPILING
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&key);
            GENERATION.fetch_add(1, Ordering::AcqRel);
            if let Some(f) = ON_READY.get() {
                f();
            }
        });
    if spawned.is_err() {
        // No thread: the next render compiles synchronously instead.
        COMPILING
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&key);
    }
}

/// Empties this thread's highlight cache (for benchmarks of the uncached path).
#[doc(hidden)]
pub fn clear_cache() {
    CACHE.with_borrow_mut(|cache| *cache = Cache::default());
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
    // `find_syntax_by_token` compares the token with every extension of
    // every syntax, and a code block that streams asks on every frame:
    // the answers are kept, per thread, for the few tokens a session sees.
    SYNTAX_OF.with_borrow_mut(|known| {
        if let Some((_, syntax)) = known.iter().find(|(t, _)| t == token) {
            return *syntax;
        }
        let syntax = look_up_syntax(token);
        if known.len() >= SYNTAX_OF_KEPT {
            known.clear();
        }
        known.push((token.to_owned(), syntax));
        syntax
    })
}

/// How many fence tokens `syntax_for` keeps the answer for.
const SYNTAX_OF_KEPT: usize = 32;

thread_local! {
    static SYNTAX_OF: RefCell<Vec<(String, Option<&'static SyntaxReference>)>> =
        const { RefCell::new(Vec::new()) };
}

fn look_up_syntax(token: &str) -> Option<&'static SyntaxReference> {
    let lower = token.to_ascii_lowercase();
    let set: &'static SyntaxSet = &SYNTAXES;
    let syntax = set.find_syntax_by_token(alias(&lower))?;
    (syntax.name != "Plain Text").then_some(syntax)
}

/// Styles for the start of a code block.
#[derive(Debug, Default)]
pub struct Highlighted {
    /// Styled byte ranges of the code, in order, covering `code[from..end]`
    /// exactly (`from` is 0 for [`highlight_block`]); no range crosses a line end.
    pub ranges: Vec<StyledRange>,
    /// The code from here on is shown plain.
    pub end: usize,
}

/// Highlights `code` (tabs already expanded) as language `lang`, spending at
/// most `*budget` bytes (whole lines) and deducting what it spent. Unknown
/// languages give nothing (all plain) and spend nothing.
pub fn highlight_block(lang: &str, code: &str, budget: &mut usize) -> Highlighted {
    highlight_block_from(lang, code, 0, budget)
}

/// Like [`highlight_block`], with only the ranges from `from` (a line start)
/// on: what a block that grew needs for its new lines, without copying the
/// styles of the lines it has already shown. The budget is spent as for the
/// whole block.
pub fn highlight_block_from(
    lang: &str,
    code: &str,
    from: usize,
    budget: &mut usize,
) -> Highlighted {
    let deferring = DEFER.with(Cell::get);
    if deferring && !SETS_LOADED.load(Ordering::Acquire) {
        spawn_compile(None);
        return Highlighted::default();
    }
    let Some(syntax) = syntax_for(lang) else {
        return Highlighted::default();
    };
    if deferring && !ready_now(&syntax.name) {
        return Highlighted::default();
    }
    let limit = highlight_limit(code, *budget);
    *budget -= limit;
    let target = &code[..limit];
    if target.is_empty() {
        return Highlighted::default();
    }
    // Complete lines are cacheable; a final partial line (streaming) is not.
    let complete = target.rfind('\n').map_or(0, |i| i + 1);
    let partial = complete < limit;
    let bg = palette().background;
    let mut out = Highlighted::default();
    let mut state = Some(fresh_state(syntax, bg));
    let mut extend = None;
    CACHE.with_borrow_mut(|cache| {
        cache.tick += 1;
        let tick = cache.tick;
        if let Some((i, covered)) = cache.lookup(lang, bg, &target[..complete]) {
            let e = &mut cache.entries[i];
            // A cached block longer than ours has no state for our partial
            // line: then start afresh (rare: a block that shrank).
            if covered == e.text.len() || !partial {
                e.used = tick;
                let n = e.ranges.partition_point(|r| r.1.start < covered);
                let skip = e.ranges.partition_point(|r| r.1.start < from).min(n);
                out.ranges.extend_from_slice(&e.ranges[skip..n]);
                out.end = covered;
                if covered == e.text.len() {
                    state = e.state.clone();
                    extend = Some(i);
                }
            }
        }
    });
    // Highlight the complete lines not cached yet, and remember them.
    if out.end < complete
        && let Some(st) = state.take()
    {
        let start = out.end;
        let (ranges, reached, after) = run(st, bg, target, start, complete);
        let skip = ranges.partition_point(|r| r.1.start < from);
        out.ranges.extend_from_slice(&ranges[skip..]);
        out.end = reached;
        CACHE.with_borrow_mut(|cache| {
            cache.store(
                extend,
                (lang, bg),
                &target[..reached],
                start,
                ranges,
                after.clone(),
            )
        });
        state = after;
    }
    // The partial last line (streaming), not cached.
    if partial
        && out.end == complete
        && let Some(st) = state
    {
        let (ranges, reached, _) = run(st, bg, target, complete, limit);
        let skip = ranges.partition_point(|r| r.1.start < from);
        out.ranges.extend_from_slice(&ranges[skip..]);
        out.end = reached;
    }
    out
}

/// How much of `code` (whole lines) to highlight within `budget` bytes.
fn highlight_limit(code: &str, budget: usize) -> usize {
    let mut at = 0;
    for line in code.split_inclusive('\n') {
        if line.len() > MAX_LINE_BYTES || at + line.len() > budget {
            break;
        }
        at += line.len();
    }
    at
}

type State = (ParseState, HighlightState);

/// A styled byte range of a code block.
pub type StyledRange = (Style, Range<usize>);

fn fresh_state(syntax: &SyntaxReference, bg: Background) -> State {
    (
        ParseState::new(syntax),
        HighlightState::new(highlighter(bg), ScopeStack::new()),
    )
}

/// Highlights the lines of `text[from..to]` (`to` at a line end or the end
/// of `text`), continuing from `state`. Returns the ranges, where they end,
/// and the state after them, or `None` if syntect failed (the ranges then
/// stop at the start of the failing line).
fn run(
    mut st: State,
    bg: Background,
    text: &str,
    from: usize,
    to: usize,
) -> (Vec<StyledRange>, usize, Option<State>) {
    let mut ranges = Vec::new();
    let set: &SyntaxSet = &SYNTAXES;
    let mut at = from;
    for line in text[from..to].split_inclusive('\n') {
        let Ok(ops) = st.0.parse_line(line, set) else {
            return (ranges, at, None);
        };
        let mut start = at;
        for (style, piece) in HighlightIterator::new(&mut st.1, &ops, line, highlighter(bg)) {
            // The pieces are consecutive slices covering `line`.
            let end = start + piece.len();
            if end > start {
                ranges.push((convert(style, bg), start..end));
            }
            start = end;
        }
        at += line.len();
        if start < at {
            ranges.push((Style::new(), start..at));
        }
    }
    (ranges, at, Some(st))
}

fn convert(s: syntect::highlighting::Style, bg: Background) -> Style {
    let fg = s.foreground;
    let (r, g, b) = match bg {
        Background::Dark => (fg.r, fg.g, fg.b),
        Background::Light => readable_on_white((fg.r, fg.g, fg.b)),
    };
    let mut style = Style::new().fg(Color::Rgb(r, g, b));
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

/// A code theme's colour darkened, if need be, to 4.5:1 against white: light
/// code themes draw comments and punctuation paler than text should be.
fn readable_on_white((r, g, b): (u8, u8, u8)) -> (u8, u8, u8) {
    let luminance =
        |(r, g, b): (f64, f64, f64)| super::theme::luminance((r as u8, g as u8, b as u8));
    let mut c = (f64::from(r), f64::from(g), f64::from(b));
    // White's luminance is 1: the ratio is 1.05 / (L + 0.05).
    for _ in 0..40 {
        if 1.05 / (luminance(c) + 0.05) >= 4.5 {
            break;
        }
        c = (c.0 * 0.93, c.1 * 0.93, c.2 * 0.93);
    }
    (c.0 as u8, c.1 as u8, c.2 as u8)
}

/// Highlighted complete lines of recently rendered code blocks.
#[derive(Default)]
struct Cache {
    entries: Vec<Entry>,
    bytes: usize,
    tick: u64,
}

struct Entry {
    /// What this entry takes (`Entry::size`), as counted in `Cache::bytes`.
    bytes: usize,
    lang: String,
    /// Which palette's colours `ranges` has.
    bg: Background,
    /// Complete lines (ends with `\n`).
    text: String,
    ranges: Vec<StyledRange>,
    /// The state after `text`; `None` if syntect failed on the next line.
    state: Option<State>,
    used: u64,
}

impl Entry {
    fn size(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.lang.capacity()
            + self.text.capacity()
            + self.ranges.capacity() * std::mem::size_of::<StyledRange>()
            + if self.state.is_some() { STATE_BYTES } else { 0 }
    }
}

impl Cache {
    /// The entry sharing the longest line-aligned prefix with `complete`
    /// (which ends at a line end), and how many bytes of it it covers.
    fn lookup(&self, lang: &str, bg: Background, complete: &str) -> Option<(usize, usize)> {
        if complete.is_empty() {
            return None;
        }
        self.entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.lang == lang && e.bg == bg)
            .filter_map(|(i, e)| {
                if complete.starts_with(e.text.as_str()) {
                    Some((i, e.text.len()))
                } else if e.text.starts_with(complete) {
                    Some((i, complete.len()))
                } else {
                    None
                }
            })
            .max_by_key(|&(_, n)| n)
    }

    /// Records that `text` (complete lines) highlights as before up to
    /// `start` plus the `more` ranges, ending in `state`: extends entry `i` if
    /// it still holds `text[..start]`, or adds a new entry.
    fn store(
        &mut self,
        i: Option<usize>,
        (lang, bg): (&str, Background),
        text: &str,
        start: usize,
        more: Vec<StyledRange>,
        state: Option<State>,
    ) {
        self.tick += 1;
        let tick = self.tick;
        let extendable = |e: &Entry| {
            e.lang == lang
                && e.bg == bg
                && e.text.len() == start
                && text.starts_with(e.text.as_str())
        };
        match i.and_then(|i| self.entries.get_mut(i)) {
            Some(e) if extendable(e) => {
                e.text.push_str(&text[start..]);
                e.ranges.extend(more);
                e.state = state;
                e.used = tick;
                let size = e.size();
                self.bytes = self.bytes - e.bytes + size;
                e.bytes = size;
            }
            _ => {
                // Without the cached lines before `start` the entry would
                // be incomplete: only a block highlighted from its start is
                // stored.
                if start > 0 || text.is_empty() {
                    return;
                }
                let mut e = Entry {
                    bytes: 0,
                    lang: lang.to_owned(),
                    bg,
                    text: text.to_owned(),
                    ranges: more,
                    state,
                    used: tick,
                };
                e.bytes = e.size();
                self.bytes += e.bytes;
                self.entries.push(e);
            }
        }
        // Evict the least recently used entries beyond the size limit, but
        // never the one just used.
        while self.bytes > CACHE_BYTES && self.entries.len() > 1 {
            let Some((victim, _)) = self
                .entries
                .iter()
                .enumerate()
                .filter(|(_, e)| e.used != tick)
                .min_by_key(|(_, e)| e.used)
            else {
                break;
            };
            let e = self.entries.swap_remove(victim);
            self.bytes -= e.bytes;
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn pale_code_colours_are_darkened_on_a_light_background() {
        let pale = (0x96, 0x98, 0x96);
        let (r, g, b) = super::readable_on_white(pale);
        assert!(r < 0x96 && g < 0x98, "darkened: {r} {g} {b}");
        assert_eq!(super::readable_on_white((0, 0, 0)), (0, 0, 0), "dark stays");
    }

    /// On a deferring thread a language not compiled yet is shown plain, compiled
    /// in the background, and highlighted once `on_ready` has fired.
    #[test]
    fn deferred_compiling_shows_plain_then_highlights() {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let tx = std::sync::Mutex::new(tx);
        std::thread::spawn(move || {
            defer_on_this_thread(move || {
                let _ = tx.lock().map(|t| t.send(()));
            });
            let code = "local x = 1 -- lua\nprint(x)\n";
            let first = highlight_block("lua", code, &mut MAX_HIGHLIGHT_BYTES.clone());
            assert!(first.ranges.is_empty(), "not compiled yet: shown plain");
            let before = generation();
            let mut highlighted = false;
            for _ in 0..4 {
                rx.recv_timeout(std::time::Duration::from_secs(20))
                    .expect("on_ready fired");
                let h = highlight_block("lua", code, &mut MAX_HIGHLIGHT_BYTES.clone());
                if !h.ranges.is_empty() {
                    highlighted = true;
                    break;
                }
            }
            assert!(highlighted, "highlighted once compiled");
            assert!(generation() > before);
        })
        .join()
        .expect("test thread");
    }
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

    /// The answers kept per token are the answers a lookup gives, also for
    /// tokens that differ only in case, and after more tokens than are kept.
    #[test]
    fn kept_answers_are_the_lookups() {
        let mut tokens: Vec<String> = ["rust", "Rust", "RS", "py", "Python", "nope", "ts", "c++"]
            .iter()
            .map(|t| t.to_string())
            .collect();
        tokens.extend((0..SYNTAX_OF_KEPT + 5).map(|i| format!("lang{i}")));
        tokens.extend(
            ["sh", "json", "rust", "nope", "go"]
                .iter()
                .map(|t| t.to_string()),
        );
        let name = |s: Option<&SyntaxReference>| s.map(|s| s.name.clone());
        for round in 0..3 {
            for t in &tokens {
                assert_eq!(
                    name(syntax_for(t)),
                    name(look_up_syntax(t)),
                    "{t} (round {round})"
                );
            }
        }
        assert_eq!(name(syntax_for("Rust")).as_deref(), Some("Rust"));
        assert!(SYNTAX_OF.with_borrow(|known| known.len()) <= SYNTAX_OF_KEPT);
    }

    fn check_cover(h: &Highlighted) {
        let mut at = 0;
        for (_, r) in &h.ranges {
            assert_eq!(r.start, at);
            at = r.end;
        }
        assert_eq!(at, h.end);
    }

    #[test]
    fn ranges_cover_the_code() {
        let code = "fn main() {\n    let x = \"s\";\n}\n";
        let mut budget = usize::MAX;
        let h = highlight_block("rust", code, &mut budget);
        check_cover(&h);
        assert_eq!(h.end, code.len());
        assert!(h.ranges.len() > 5, "rust code gets several colours");
        assert_eq!(budget, usize::MAX - code.len());
    }

    #[test]
    fn unknown_language_is_plain_and_free() {
        let mut budget = 10;
        let h = highlight_block("klingon", "abc\n", &mut budget);
        assert_eq!((h.ranges.len(), h.end, budget), (0, 0, 10));
    }

    #[test]
    fn budget_stops_at_whole_lines() {
        let code = "let a = 1;\nlet b = 2;\nlet c = 3;\n";
        let mut budget = 25;
        let h = highlight_block("rust", code, &mut budget);
        check_cover(&h);
        assert_eq!(h.end, 22);
        assert_eq!(budget, 3);
    }

    #[test]
    fn long_lines_stop_highlighting() {
        let code = format!(
            "let a = 1;\n{}\nlet b = 2;\n",
            "x".repeat(MAX_LINE_BYTES + 1)
        );
        let h = highlight_block("rust", &code, &mut usize::MAX.clone());
        assert_eq!(h.end, 11);
    }

    /// The cache stays within its size however many blocks are shown, and a
    /// block it forgot highlights as it did.
    #[test]
    fn the_cache_is_bounded_by_size_and_forgotten_blocks_highlight_the_same() {
        let block = |i: usize| {
            (0..40)
                .map(|l| format!("let value_{i}_{l} = compute({i}, {l}); // line {l}\n"))
                .collect::<String>()
        };
        let mut cache = Cache::default();
        let bg = Background::Dark;
        let syntax = syntax_for("rust").expect("rust");
        let mut first = None;
        for i in 0..200 {
            let code = block(i);
            let (ranges, end, state) = run(fresh_state(syntax, bg), bg, &code, 0, code.len());
            if i == 0 {
                first = Some(ranges.clone());
            }
            cache.store(None, ("rust", bg), &code[..end], 0, ranges, state);
            assert!(
                cache.bytes <= CACHE_BYTES,
                "block {i}: {} bytes",
                cache.bytes
            );
            let counted: usize = cache.entries.iter().map(Entry::size).sum();
            assert_eq!(cache.bytes, counted, "block {i}");
        }
        assert!(cache.entries.len() < 200, "blocks were forgotten");
        assert!(
            cache.lookup("rust", bg, &block(0)).is_none(),
            "the first block was forgotten"
        );
        // This thread's cache, filled the same way: the first block, then
        // enough others to push it out, then the first again.
        let h0 = highlight_block("rust", &block(0), &mut usize::MAX.clone());
        for i in 1..200 {
            highlight_block("rust", &block(i), &mut usize::MAX.clone());
        }
        let again = highlight_block("rust", &block(0), &mut usize::MAX.clone());
        assert_eq!(again.ranges, h0.ranges);
        assert_eq!(Some(again.ranges), first);
    }

    #[test]
    fn cached_and_uncached_results_agree() {
        // A block growing as a stream delivers it, then re-rendered whole:
        // every step must equal highlighting from scratch.
        let code = "/* a\n comment */ fn f() -> u8 {\n    let s = \"x\n y\";\n    1\n}\n";
        let lang = "rs";
        let mut fresh = Vec::new();
        for cut in (0..=code.len()).filter(|&c| code.is_char_boundary(c)) {
            clear_cache();
            fresh.push(highlight_block(lang, &code[..cut], &mut usize::MAX.clone()));
        }
        clear_cache();
        for (i, cut) in (0..=code.len())
            .filter(|&c| code.is_char_boundary(c))
            .enumerate()
        {
            let h = highlight_block(lang, &code[..cut], &mut usize::MAX.clone());
            check_cover(&h);
            assert_eq!(h.ranges, fresh[i].ranges, "at {cut}");
            assert_eq!(h.end, fresh[i].end, "at {cut}");
        }
        // A shorter prefix after the longer one is cached.
        let h = highlight_block(lang, &code[..20], &mut usize::MAX.clone());
        assert_eq!(h.ranges, fresh[20].ranges);
    }
}
