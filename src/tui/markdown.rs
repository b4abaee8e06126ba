//! Markdown -> styled terminal lines, already wrapped to a width.
//!
//! [`render_markdown`] is a pure function of `(text, width)`: callers cache its
//! output per message keyed by width and re-render only the streaming tail.
//! Untrusted input is sanitized before parsing, and every string the parser
//! hands back (entities like `&#27;` decode to control characters) is
//! sanitized again, so no control character reaches a span.
//!
//! Every produced line is at most `width` columns wide (as measured by
//! `Line::width`), so the number of lines is the number of screen rows.
//!
//! Code blocks are highlighted by [`super::highlight`], which memoizes per
//! block (width-independent, resumable while a block streams in) and
//! highlights at most `MAX_HIGHLIGHT_BYTES` of code per render; the output
//! never depends on what is cached. Code blocks are numbered `[1]`, `[2]`, ...
//! in their header line, matching [`Rendered::code_blocks`], so a user can ask
//! to copy block N.
use crate::tui::theme::palette;
use std::borrow::Cow;
use std::ops::Range;

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::highlight::{Highlighted, MAX_HIGHLIGHT_BYTES, highlight_block, highlight_block_from};
use crate::sanitize::sanitize_keep_tabs;

/// A fenced or indented code block, as the user would copy it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeBlock {
    /// The first word of the fence's info string (`rust` in ```` ```rust ````).
    pub lang: Option<String>,
    /// The code, sanitized, tabs kept, with its final newline.
    pub code: String,
}

/// The output of [`render_markdown`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rendered {
    /// One entry per screen row; none is wider than the requested width.
    pub lines: Vec<Line<'static>>,
    /// The code blocks in order; the header of block `i` shows `[i + 1]`.
    pub code_blocks: Vec<CodeBlock>,
    /// The text ends in a fenced code block still open, outside any list or
    /// quote: what it takes to render only its new lines as the text grows.
    pub open_fence: Option<OpenFence>,
}

/// Render Markdown into lines already wrapped to `width` columns (so line
/// count == rows on screen). A width of 0 is treated as 1.
pub fn render_markdown(text: &str, width: u16) -> Rendered {
    render_markdown_from(text, width, 0)
}

/// Like [`render_markdown`], for the tail of a longer text whose first
/// `blocks_before` code blocks were rendered separately (their numbers go on).
pub fn render_markdown_from(text: &str, width: u16, blocks_before: usize) -> Rendered {
    let source = text;
    let text = sanitize_keep_tabs(source);
    let mut r = Renderer::new(usize::from(width.max(1)));
    r.blocks_before = blocks_before;
    for (event, range) in Parser::new_ext(&text, OPTIONS).into_offset_iter() {
        if let Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_))) = &event {
            r.fence_at = Some(range.start);
        }
        r.event(event);
    }
    let width = r.width;
    let (mut rendered, open) = r.finish_with_open();
    rendered.open_fence = open.and_then(|o| OpenFence::new(o, width, source, &text, &rendered));
    rendered
}

/// A fenced code block still open at the end of a text that is still
/// growing (a streaming reply), outside any list or quote. Until a line
/// that may close it arrives, appended text only adds code lines, and the
/// rows of its complete lines stay what they are: [`OpenFence::render`]
/// renders the lines after them, exactly as a whole render would.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenFence {
    width: usize,
    /// The opening fence's character and length: a line of as many of them
    /// (after spaces) may close the block.
    fence: (char, usize),
    lang: Option<String>,
    /// The highlighting budget that was left when the block began.
    budget: usize,
    /// The complete lines so far, as copied (tabs kept) and as shown.
    code: String,
    display: String,
    /// Where the complete lines end in the source text (before sanitizing).
    source_end: usize,
    /// How many rows of the render end with the complete lines.
    pub rows: usize,
}

/// What an open code block's code has of its unfinished last line: the
/// Markdown parser leaves out a last line of one to three spaces (it reads
/// as the indentation of whatever comes next).
fn unfinished_code_line(line: &str) -> &str {
    if line.len() <= 3 && line.bytes().all(|b| b == b' ') {
        ""
    } else {
        line
    }
}

/// The rows of an open fence that grew (see [`OpenFence::render`]).
#[derive(Debug)]
pub struct FenceRows {
    /// Rows of the lines completed since the last render: final.
    pub done: Vec<Line<'static>>,
    /// Rows of the unfinished last line and the closing rule.
    pub open: Vec<Line<'static>>,
    /// The code block, as a whole render of the text has it.
    pub block: CodeBlock,
}

/// The last fenced code block outside any list or quote, as the renderer
/// saw it: maybe left open at the end of the text.
struct OpenAtEnd {
    /// Where its opening fence is in the (sanitized) text.
    fence_at: usize,
    /// Its index in the render's code blocks.
    block: usize,
    lang: Option<String>,
    budget: usize,
    /// Rows up to the end of its complete lines.
    rows: usize,
}

impl OpenFence {
    /// Built from a whole render of `text` (sanitized from `source`) when
    /// its last block is that fenced code block, still open: everything
    /// after its opening fence is its code as it is (the fence is not
    /// indented, and no closing fence follows).
    fn new(o: OpenAtEnd, width: usize, source: &str, text: &str, r: &Rendered) -> Option<Self> {
        if o.block + 1 != r.code_blocks.len() {
            return None;
        }
        let block = &r.code_blocks[o.block];
        let rest = text.get(o.fence_at..)?;
        let (fence_line, code) = rest.split_once('\n')?;
        let (c, n) = fence_marker(fence_line)?;
        if code != block.code {
            return None;
        }
        // The unfinished line is what follows the source's last line break.
        let source_end = source.rfind('\n').map_or(0, |i| i + 1);
        let complete = code.rfind('\n').map_or(0, |i| i + 1);
        if unfinished_code_line(&sanitize_keep_tabs(&source[source_end..])) != &code[complete..] {
            return None;
        }
        Some(Self {
            width,
            fence: (c, n),
            lang: o.lang,
            budget: o.budget,
            code: code[..complete].to_owned(),
            display: expand_tabs(&code[..complete]).into_owned(),
            source_end,
            rows: o.rows,
        })
    }

    /// The rows of `text` from the end of the complete lines on, when
    /// `text` is the text this block was found in with more appended and
    /// that is still only code lines of this block. `None` when it may be
    /// more (a line that may close the fence): render the text whole then.
    pub fn render(&mut self, text: &str) -> Option<FenceRows> {
        if self.source_end > 0 && text.as_bytes().get(self.source_end - 1) != Some(&b'\n') {
            return None;
        }
        let new = text.get(self.source_end..)?;
        let split = new.rfind('\n').map_or(0, |i| i + 1);
        let complete = sanitize_keep_tabs(&new[..split]);
        let partial = sanitize_keep_tabs(&new[split..]);
        let partial = unfinished_code_line(&partial);
        if complete
            .split_inclusive('\n')
            .chain(std::iter::once(partial))
            .any(|line| self.may_close(line))
        {
            return None;
        }
        let from = self.display.len();
        self.code.push_str(&complete);
        self.display.push_str(&expand_tabs(&complete));
        let complete_end = self.display.len();
        // Tab stops start again on each line: the unfinished one expands alone.
        self.display.push_str(&expand_tabs(partial));
        let mut budget = self.budget;
        let hl = highlight_block_from(
            self.lang.as_deref().unwrap_or(""),
            &self.display,
            from,
            &mut budget,
        );
        let mut r = Renderer::new(self.width);
        let avail = r.avail();
        r.push_code_lines(&self.display, from..complete_end, &hl, avail);
        let done = std::mem::take(&mut r.lines);
        r.push_code_lines(&self.display, complete_end..self.display.len(), &hl, avail);
        r.push_code_rule(avail);
        self.display.truncate(complete_end);
        self.rows += done.len();
        self.source_end += split;
        let mut code = String::with_capacity(self.code.len() + partial.len());
        code.push_str(&self.code);
        code.push_str(partial);
        Some(FenceRows {
            done,
            open: r.lines,
            block: CodeBlock {
                lang: self.lang.clone(),
                code,
            },
        })
    }

    /// Whether `line` may be a closing fence: at least as many of the fence
    /// character as opened it, after indentation (a superset of what closes
    /// one, so that a whole render decides).
    fn may_close(&self, line: &str) -> bool {
        let (c, n) = self.fence;
        let rest = line.trim_start_matches([' ', '\t']);
        rest.chars().take(n).filter(|&x| x == c).count() == n
    }
}

const OPTIONS: Options = Options::ENABLE_STRIKETHROUGH
    .union(Options::ENABLE_TABLES)
    .union(Options::ENABLE_TASKLISTS);

/// How much of the beginning of a text that is still growing is settled:
/// rendering `text[..n]` on its own gives what rendering the whole gives
/// there, whatever is appended later. That is the start of the last
/// top-level block that follows a blank line (a blank line closes the
/// blocks before it, unless the next line is indented into a list item,
/// and then the parser does not report a new top-level block) and whose first
/// line is complete (so "2" cannot still become "2. ", an item of the list
/// above). 0 when no such block starts after the first.
///
/// Reference links defined later are the exception (Markdown resolves them
/// across the whole text); a finished reply is rendered whole again.
pub fn settled_until(text: &str) -> usize {
    // A block's first line is complete when a line break follows its start.
    let Some(last_break) = text.rfind('\n') else {
        return 0;
    };
    let settles_at = |at: usize| at > 0 && at <= last_break && follows_blank_line(&text[..at]);
    let mut depth = 0usize;
    let mut best = 0;
    for (event, range) in Parser::new_ext(text, OPTIONS).into_offset_iter() {
        match event {
            Event::Start(_) => {
                if depth == 0 && settles_at(range.start) {
                    best = range.start;
                }
                depth += 1;
            }
            // A top-level fence closed by a complete line: nothing after it
            // can change it, so it need not wait for the next block's first
            // line (until then it was laid out again on every frame).
            Event::End(TagEnd::CodeBlock) if depth == 1 && closed_fence(&text[range.clone()]) => {
                depth = 0;
                let rest = &text[range.end..];
                if let Some(after) = rest
                    .strip_prefix('\n')
                    .or_else(|| rest.strip_prefix("\r\n"))
                {
                    best = text.len() - after.len();
                }
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            // A rule has no start and end of its own.
            Event::Rule if depth == 0 && settles_at(range.start) => best = range.start,
            _ => {}
        }
    }
    best
}

/// Whether `block`, a code block as the parser reports it (up to the end of
/// its last line, without the line break), is a fenced one closed by its
/// last line: at least as many of the opening fence's character.
fn closed_fence(block: &str) -> bool {
    let Some((first, rest)) = block.split_once('\n') else {
        return false;
    };
    // Four spaces of indentation make a line code, not a fence.
    fn fence(line: &str) -> Option<&str> {
        let rest = line.trim_start_matches(' ');
        (line.len() - rest.len() <= 3).then_some(rest)
    }
    let Some((c, n)) = fence(first).and_then(fence_marker) else {
        return false;
    };
    let Some(last) = fence(rest.rsplit('\n').next().unwrap_or(rest)) else {
        return false;
    };
    let last = last.trim_end_matches([' ', '\t', '\r']);
    last.len() >= n && last.chars().all(|x| x == c)
}

/// The character and length of the fence `line` starts with: at least
/// three backticks or tildes.
fn fence_marker(line: &str) -> Option<(char, usize)> {
    let c = line.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let n = line.chars().take_while(|&x| x == c).count();
    (n >= 3).then_some((c, n))
}

/// Whether `before` ends with a blank line (spaces or tabs at most), maybe
/// followed by the indentation of the line that comes next.
fn follows_blank_line(before: &str) -> bool {
    let before = before.trim_end_matches([' ', '\t']);
    let Some(body) = before.strip_suffix('\n') else {
        return false;
    };
    let body = body.strip_suffix('\r').unwrap_or(body);
    let last = body.rsplit('\n').next().unwrap_or(body);
    last.trim_matches([' ', '\t', '\r']).is_empty()
}

// ---------------------------------------------------------------------------
// Styles

const TAB_WIDTH: usize = 4;
const SPACES: &str = "                                                                ";
const BULLETS: [&str; 3] = ["• ", "◦ ", "▪ "];

/// In front of each code line, and of each continuation of a long one.
const CODE_BAR: &str = "▎ ";
const CODE_CONTINUED: &str = "↪ ";

fn heading_style(level: HeadingLevel) -> Style {
    let color = match level {
        HeadingLevel::H1 => palette().special,
        HeadingLevel::H2 => palette().accent,
        HeadingLevel::H3 => palette().success,
        HeadingLevel::H4 => palette().warning,
        HeadingLevel::H5 => palette().info,
        HeadingLevel::H6 => palette().error,
    };
    let style = Style::new().fg(color).add_modifier(Modifier::BOLD);
    if level == HeadingLevel::H1 {
        style.add_modifier(Modifier::UNDERLINED)
    } else {
        style
    }
}

fn dim() -> Style {
    Style::new().fg(palette().dim)
}
fn inline_code_style() -> Style {
    Style::new().fg(palette().warning)
}
fn link_style() -> Style {
    Style::new()
        .fg(palette().info)
        .add_modifier(Modifier::UNDERLINED)
}
fn marker_style() -> Style {
    Style::new().fg(palette().accent)
}
fn quote_style() -> Style {
    Style::new().fg(palette().success)
}

/// Width of a string as ratatui measures it, with a fast path for ASCII
/// (sanitized ASCII is printable, one column per byte).
fn str_width(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        UnicodeWidthStr::width(s)
    }
}

fn spaces(n: usize) -> Span<'static> {
    match SPACES.get(..n) {
        Some(s) => Span::raw(s),
        None => Span::raw(" ".repeat(n)),
    }
}

// ---------------------------------------------------------------------------
// Inline text: one string plus style runs, wrapped into lines of byte ranges.

#[derive(Default)]
struct Inline {
    text: String,
    /// `(start offset, style)`; run `i` extends to the start of run `i + 1`.
    runs: Vec<(usize, Style)>,
}

impl Inline {
    /// Appends `s` (already sanitized) in `style`. `\n` is a hard line break;
    /// tabs become single spaces.
    fn push(&mut self, s: &str, style: Style) {
        if s.is_empty() {
            return;
        }
        if self.runs.last().map(|r| r.1) != Some(style) {
            self.runs.push((self.text.len(), style));
        }
        if s.contains('\t') {
            self.text
                .extend(s.chars().map(|c| if c == '\t' { ' ' } else { c }));
        } else {
            self.text.push_str(s);
        }
    }

    fn clear(&mut self) {
        self.text.clear();
        self.runs.clear();
    }

    fn is_blank(&self) -> bool {
        self.text.chars().all(|c| c == ' ')
    }

    /// Spans for `text[range]`, split where the style changes.
    fn spans(&self, range: Range<usize>) -> Vec<Span<'static>> {
        let mut out = Vec::new();
        let mut i = self
            .runs
            .partition_point(|r| r.0 <= range.start)
            .saturating_sub(1);
        let mut at = range.start;
        while at < range.end && i < self.runs.len() {
            let end = self
                .runs
                .get(i + 1)
                .map_or(self.text.len(), |r| r.0)
                .min(range.end);
            if end > at {
                if let Some(s) = self.text.get(at..end) {
                    out.push(Span::styled(s.to_owned(), self.runs[i].1));
                }
                at = end;
            }
            i += 1;
        }
        out
    }
}

/// Space characters at which a line may break (not the no-break spaces).
fn is_break_space(c: char) -> bool {
    c == ' ' || (c.is_whitespace() && !matches!(c, '\u{a0}' | '\u{2007}' | '\u{202f}' | '\n'))
}

/// Greedy word wrap of `text` to `avail` columns. `\n` forces a break. Calls
/// `emit` with the byte range of each line (spaces at breaks are dropped);
/// words wider than `avail` are broken between characters.
fn wrap(text: &str, avail: usize, mut emit: impl FnMut(Range<usize>)) {
    let avail = avail.max(1);
    // The current line: byte range and width.
    let mut line: Option<(usize, usize, usize)> = None;
    let mut gap = 0;
    let mut rest = text.char_indices().peekable();
    while let Some(&(i, c)) = rest.peek() {
        if c == '\n' {
            rest.next();
            match line.take() {
                Some((s, e, _)) => emit(s..e),
                None => emit(i..i),
            }
            gap = 0;
            continue;
        }
        if is_break_space(c) {
            let mut w = 0;
            while let Some(&(_, c)) = rest.peek() {
                if !is_break_space(c) {
                    break;
                }
                w += c.width().unwrap_or(0);
                rest.next();
            }
            if line.is_some() {
                gap += w;
            }
            continue;
        }
        // A word: up to the next space or newline.
        let start = i;
        let mut end = text.len();
        while let Some(&(j, c)) = rest.peek() {
            if c == '\n' || is_break_space(c) {
                end = j;
                break;
            }
            rest.next();
        }
        let word = &text[start..end];
        let ww = str_width(word);
        if let Some((s, e, w)) = line {
            if w + gap + ww <= avail {
                line = Some((s, end, w + gap + ww));
                gap = 0;
                continue;
            }
            emit(s..e);
        }
        gap = 0;
        if ww <= avail {
            line = Some((start, end, ww));
            continue;
        }
        // Hard-break a word wider than the line.
        let (mut cs, mut cw) = (start, 0);
        for (j, ch) in word.char_indices() {
            let j = start + j;
            let w = ch.width().unwrap_or(0);
            if cw + w > avail && j > cs {
                emit(cs..j);
                cs = j;
                cw = 0;
            }
            cw += w;
        }
        line = Some((cs, end, cw));
    }
    if let Some((s, e, _)) = line {
        emit(s..e);
    }
}

/// Total display width of spans.
fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| str_width(&s.content)).sum()
}

/// Cuts spans to at most `width` columns, ending with `…` if `ellipsis`.
fn truncate(spans: &mut Vec<Span<'static>>, width: usize, ellipsis: bool) {
    if spans_width(spans) <= width {
        return;
    }
    let ellipsis = ellipsis && width > 0;
    let target = if ellipsis { width - 1 } else { width };
    let mut acc = 0;
    let mut keep = 0;
    for span in spans.iter_mut() {
        let w = str_width(&span.content);
        if acc + w <= target {
            acc += w;
            keep += 1;
            continue;
        }
        let mut cut = 0;
        for (i, c) in span.content.char_indices() {
            let cw = c.width().unwrap_or(0);
            if acc + cw > target {
                break;
            }
            acc += cw;
            cut = i + c.len_utf8();
        }
        if cut > 0 {
            let s = span.content[..cut].to_owned();
            span.content = s.into();
            keep += 1;
        }
        break;
    }
    spans.truncate(keep);
    // Character widths can differ from string widths (ligatures, emoji
    // sequences): drop characters until the exact width fits.
    while spans_width(spans) > target {
        let Some(last) = spans.last_mut() else { break };
        let mut s = last.content.to_string();
        s.pop();
        if s.is_empty() {
            spans.pop();
        } else {
            last.content = s.into();
        }
    }
    if ellipsis {
        spans.push(Span::styled("…", dim()));
    }
}

// ---------------------------------------------------------------------------
// The renderer

enum Container {
    Quote,
    List {
        next: Option<u64>,
    },
    Item {
        /// The marker (`• `, `3. `), until the item's first line is emitted.
        marker: Option<String>,
        indent: usize,
    },
}

struct CodeState {
    lang: Option<String>,
    code: String,
}

#[derive(Default)]
struct Table {
    aligns: Vec<Alignment>,
    rows: Vec<Vec<Inline>>,
    row: Vec<Inline>,
    has_head: bool,
}

#[derive(Default)]
struct Renderer {
    width: usize,
    lines: Vec<Line<'static>>,
    code_blocks: Vec<CodeBlock>,
    containers: Vec<Container>,
    /// Sum of container prefix widths.
    prefix_w: usize,
    /// A blank line is due before the next block.
    need_blank: bool,
    inline: Inline,
    strong: u32,
    emphasis: u32,
    strike: u32,
    heading: Option<HeadingLevel>,
    table_head: bool,
    /// Open links/images: where their text starts in `inline`, and the URL.
    links: Vec<(usize, String)>,
    code: Option<CodeState>,
    table: Option<Table>,
    /// Bytes of code this render may still syntax-highlight.
    hl_budget: usize,
    /// Code blocks numbered before this text (streaming tail renders).
    blocks_before: usize,
    /// Where the fenced code block being read began in the text.
    fence_at: Option<usize>,
    /// The last fenced code block outside any list or quote (see [`OpenFence`]).
    open_at_end: Option<OpenAtEnd>,
}

impl Renderer {
    fn new(width: usize) -> Self {
        Self {
            width,
            hl_budget: MAX_HIGHLIGHT_BYTES,
            ..Self::default()
        }
    }

    /// The rendered text, and the code block it ends in if that is still open.
    fn finish_with_open(mut self) -> (Rendered, Option<OpenAtEnd>) {
        // An unterminated construct at the end of a streaming reply.
        if self.code.is_some() {
            self.end_code_block();
        }
        if self.table.is_some() {
            self.end_table();
        }
        self.flush_inline();
        let rendered = Rendered {
            lines: self.lines,
            code_blocks: self.code_blocks,
            open_fence: None,
        };
        (rendered, self.open_at_end)
    }

    /// The most columns a prefix may take: content keeps at least a few.
    fn max_prefix(&self) -> usize {
        self.width - (self.width / 2).clamp(1, 10)
    }

    /// Columns available to content after the prefix.
    fn avail(&self) -> usize {
        self.width - self.prefix_w.min(self.max_prefix())
    }

    fn style(&self) -> Style {
        let mut s = Style::new();
        if let Some(level) = self.heading {
            s = heading_style(level);
        }
        if self.table_head || self.strong > 0 {
            s = s.add_modifier(Modifier::BOLD);
        }
        if self.emphasis > 0 {
            s = s.add_modifier(Modifier::ITALIC);
        }
        if self.strike > 0 {
            s = s.add_modifier(Modifier::CROSSED_OUT);
        }
        if !self.links.is_empty() {
            s = s.patch(link_style());
        }
        s
    }

    fn push_text(&mut self, text: &str, style: Style) {
        let text = sanitize_keep_tabs(text);
        self.inline.push(&text, style);
    }

    fn event(&mut self, event: Event<'_>) {
        if let Some(code) = &mut self.code {
            match event {
                Event::Text(t) => code.code.push_str(&sanitize_keep_tabs(&t)),
                Event::End(TagEnd::CodeBlock) => self.end_code_block(),
                _ => {}
            }
            return;
        }
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::InlineHtml(t) if is_br(&t) => self.inline.push("\n", Style::new()),
            Event::Text(t) | Event::InlineHtml(t) | Event::Html(t) => {
                let style = self.style();
                self.push_text(&t, style);
            }
            Event::InlineMath(t) | Event::DisplayMath(t) | Event::Code(t) => {
                let style = self.style().patch(inline_code_style());
                self.push_text(&t, style);
            }
            Event::FootnoteReference(t) => {
                let style = self.style();
                self.push_text(&format!("[^{t}]"), style);
            }
            // A model's single line break is kept, as chat apps keep it
            // (strict CommonMark joins the lines): a log, an address, lines
            // of a poem or a list without markers stay lines.
            Event::SoftBreak | Event::HardBreak => self.inline.push("\n", Style::new()),
            Event::Rule => {
                self.flush_inline();
                self.begin_block();
                let rule = "─".repeat(self.avail());
                self.push_line(vec![Span::styled(rule, dim())]);
                self.need_blank = true;
            }
            Event::TaskListMarker(done) => {
                let (mark, style) = if done {
                    ("[x] ", Style::new().fg(palette().success))
                } else {
                    ("[ ] ", marker_style())
                };
                self.inline.push(mark, style);
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.flush_inline(),
            Tag::Heading { level, .. } => {
                self.flush_inline();
                // Shown by its style, without the `#` marks.
                self.heading = Some(level);
            }
            Tag::BlockQuote(_) => {
                self.flush_inline();
                self.begin_block();
                self.push_container(Container::Quote, 2);
            }
            Tag::CodeBlock(kind) => {
                self.flush_inline();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info
                        .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
                        .find(|t| !t.is_empty())
                        .map(|t| sanitize_keep_tabs(t).into_owned()),
                    CodeBlockKind::Indented => None,
                };
                self.code = Some(CodeState {
                    lang,
                    code: String::new(),
                });
            }
            Tag::HtmlBlock => self.flush_inline(),
            Tag::List(start) => {
                self.flush_inline();
                self.begin_block();
                self.push_container(Container::List { next: start }, 0);
            }
            Tag::Item => {
                self.flush_inline();
                let depth = self
                    .containers
                    .iter()
                    .filter(|c| matches!(c, Container::List { .. }))
                    .count();
                let marker = match self.containers.last_mut() {
                    Some(Container::List { next: Some(n) }) => {
                        let m = format!("{n}. ");
                        *n = n.saturating_add(1);
                        m
                    }
                    _ => BULLETS[depth.saturating_sub(1) % BULLETS.len()].to_owned(),
                };
                let indent = str_width(&marker);
                self.push_container(
                    Container::Item {
                        marker: Some(marker),
                        indent,
                    },
                    indent,
                );
            }
            Tag::Table(aligns) => {
                self.flush_inline();
                self.table = Some(Table {
                    aligns,
                    ..Table::default()
                });
            }
            Tag::TableHead => self.table_head = true,
            Tag::TableRow | Tag::TableCell => {}
            Tag::Emphasis => self.emphasis += 1,
            Tag::Strong => self.strong += 1,
            Tag::Strikethrough => self.strike += 1,
            Tag::Link { dest_url, .. } => {
                let url = sanitize_keep_tabs(&dest_url).into_owned();
                self.links.push((self.inline.text.len(), url));
            }
            Tag::Image { dest_url, .. } => {
                self.inline.push("[image: ", dim());
                let url = sanitize_keep_tabs(&dest_url).into_owned();
                self.links.push((self.inline.text.len(), url));
            }
            Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::MetadataBlock(_) => self.flush_inline(),
            Tag::Superscript | Tag::Subscript => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::HtmlBlock => {
                // Html blocks end with a newline that is not a line break.
                while self.inline.text.ends_with('\n') {
                    self.inline.text.pop();
                }
                self.flush_inline();
                self.need_blank = true;
            }
            TagEnd::Heading(_) => {
                self.flush_inline();
                self.heading = None;
                self.need_blank = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush_inline();
                self.pop_container();
                self.need_blank = true;
            }
            TagEnd::CodeBlock => self.end_code_block(),
            TagEnd::List(_) => {
                self.flush_inline();
                self.pop_container();
                // A nested list in a tight item is not followed by a blank.
                if !matches!(self.containers.last(), Some(Container::Item { .. })) {
                    self.need_blank = true;
                }
            }
            TagEnd::Item => {
                self.flush_inline();
                if let Some(Container::Item {
                    marker: Some(_), ..
                }) = self.containers.last()
                {
                    // An empty item still shows its marker.
                    self.push_line(Vec::new());
                }
                self.pop_container();
            }
            TagEnd::Table => self.end_table(),
            TagEnd::TableHead => {
                self.table_head = false;
                if let Some(t) = &mut self.table {
                    let row = std::mem::take(&mut t.row);
                    t.rows.push(row);
                    t.has_head = true;
                }
            }
            TagEnd::TableRow => {
                if let Some(t) = &mut self.table {
                    let row = std::mem::take(&mut t.row);
                    t.rows.push(row);
                }
            }
            TagEnd::TableCell => {
                let cell = std::mem::take(&mut self.inline);
                if let Some(t) = &mut self.table {
                    t.row.push(cell);
                }
            }
            TagEnd::Emphasis => self.emphasis = self.emphasis.saturating_sub(1),
            TagEnd::Strong => self.strong = self.strong.saturating_sub(1),
            TagEnd::Strikethrough => self.strike = self.strike.saturating_sub(1),
            TagEnd::Link => self.end_link(false),
            TagEnd::Image => self.end_link(true),
            TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::MetadataBlock(_) => {
                self.flush_inline();
                self.need_blank = true;
            }
            TagEnd::Superscript | TagEnd::Subscript => {}
        }
    }

    /// Link text is followed by the URL, dimmed, unless they are the same.
    fn end_link(&mut self, image: bool) {
        let Some((start, url)) = self.links.pop() else {
            return;
        };
        if image {
            self.inline.push("]", dim());
        }
        let shown = self.inline.text.get(start..).unwrap_or("");
        let same = url == shown || url.strip_prefix("mailto:") == Some(shown);
        if !url.is_empty() && !same {
            self.inline.push(" (", dim());
            self.inline.push(&url, dim());
            self.inline.push(")", dim());
        }
    }

    fn push_container(&mut self, c: Container, width: usize) {
        self.containers.push(c);
        self.prefix_w += width;
    }

    fn pop_container(&mut self) {
        let w = match self.containers.pop() {
            Some(Container::Quote) => 2,
            Some(Container::Item { indent, .. }) => indent,
            Some(Container::List { .. }) | None => 0,
        };
        self.prefix_w = self.prefix_w.saturating_sub(w);
    }

    /// The prefix of a content line (consuming pending item markers), or of a
    /// blank separator line (markers kept, no trailing spaces).
    fn prefix(&mut self, blank: bool) -> Vec<Span<'static>> {
        let mut spans = Vec::with_capacity(self.containers.len());
        // Indentation not yet pushed (so a blank line has no trailing spaces).
        let mut pad = 0;
        for c in &mut self.containers {
            match c {
                Container::Quote => {
                    if pad > 0 {
                        spans.push(spaces(pad));
                        pad = 0;
                    }
                    spans.push(Span::styled("│ ", quote_style()));
                }
                Container::List { .. } => {}
                Container::Item { marker, indent } => match marker.take_if(|_| !blank) {
                    Some(m) => {
                        if pad > 0 {
                            spans.push(spaces(pad));
                            pad = 0;
                        }
                        spans.push(Span::styled(m, marker_style()));
                    }
                    None => pad += *indent,
                },
            }
        }
        if blank {
            if let Some(last) = spans.last_mut() {
                last.content = "│".into();
            }
        } else if pad > 0 {
            spans.push(spaces(pad));
        }
        truncate(&mut spans, self.max_prefix(), false);
        spans
    }

    /// Emits a blank separator line if one is due.
    fn begin_block(&mut self) {
        if self.need_blank && !self.lines.is_empty() {
            let spans = self.prefix(true);
            self.lines.push(Line::from(spans));
        }
        self.need_blank = false;
    }

    /// Emits one line of content (at most `avail()` wide) after the prefix.
    fn push_line(&mut self, mut content: Vec<Span<'static>>) {
        let mut spans = self.prefix(false);
        let room = self.width - spans_width(&spans);
        truncate(&mut content, room, true);
        if spans.is_empty() {
            spans = content;
        } else {
            spans.extend(content);
        }
        self.lines.push(Line::from(spans));
    }

    /// Wraps the pending inline text into lines.
    fn flush_inline(&mut self) {
        if self.inline.is_blank() {
            self.inline.clear();
            return;
        }
        self.begin_block();
        let inline = std::mem::take(&mut self.inline);
        wrap(&inline.text, self.avail(), |range| {
            let spans = inline.spans(range);
            self.push_line(spans);
        });
        self.inline = inline;
        self.inline.clear();
    }

    fn end_code_block(&mut self) {
        let Some(CodeState { lang, code }) = self.code.take() else {
            return;
        };
        self.begin_block();
        let avail = self.avail();
        let index = self.blocks_before + self.code_blocks.len() + 1;
        let mut header = match &lang {
            Some(l) => format!("─ {l} [{index}] "),
            None => format!("─ [{index}] "),
        };
        let fill = avail.saturating_sub(str_width(&header));
        header.extend(std::iter::repeat_n('─', fill));
        self.push_line(vec![Span::styled(header, dim())]);

        let display = expand_tabs(&code);
        let budget = self.hl_budget;
        let hl = highlight_block(lang.as_deref().unwrap_or(""), &display, &mut self.hl_budget);
        // The unfinished last line of a block left open, if any.
        let complete = display.rfind('\n').map_or(0, |i| i + 1);
        self.push_code_lines(&display, 0..complete, &hl, avail);
        if let Some(fence_at) = self.fence_at.take()
            && self.containers.is_empty()
        {
            self.open_at_end = Some(OpenAtEnd {
                fence_at,
                block: self.code_blocks.len(),
                lang: lang.clone(),
                budget,
                rows: self.lines.len(),
            });
        }
        self.push_code_lines(&display, complete..display.len(), &hl, avail);
        self.push_code_rule(avail);
        self.code_blocks.push(CodeBlock { lang, code });
        self.need_blank = true;
    }

    /// Emits the rows of the code lines in `display[lines]` (whole lines),
    /// styled by `hl` where it reaches.
    fn push_code_lines(
        &mut self,
        display: &str,
        lines: Range<usize>,
        hl: &Highlighted,
        avail: usize,
    ) {
        let first = hl.ranges.partition_point(|(_, r)| r.start < lines.start);
        let mut styled = hl.ranges[first..].iter().peekable();
        let mut pieces: Vec<(Style, Range<usize>)> = Vec::new();
        let mut at = lines.start;
        for line in display[lines].split_inclusive('\n') {
            let line_start = at;
            at += line.len();
            // The line without its newline.
            let end = at - usize::from(line.ends_with('\n'));
            pieces.clear();
            if line_start < hl.end {
                while let Some((style, r)) = styled.next_if(|(_, r)| r.start < at) {
                    pieces.push((*style, r.start..r.end.min(end)));
                }
            } else {
                pieces.push((Style::new(), line_start..end));
            }
            self.push_code_line(display, &pieces, avail);
        }
    }

    /// A closing rule: where the code ends is never a guess.
    fn push_code_rule(&mut self, avail: usize) {
        self.push_line(vec![Span::styled("─".repeat(avail.min(40)), dim())]);
    }

    /// Emits one code line behind a bar that sets code apart from prose,
    /// hard-wrapped at `avail` columns (code is never re-flowed at words),
    /// each continuation marked `↪`. `pieces` are styled ranges of `text`.
    fn push_code_line(&mut self, text: &str, pieces: &[(Style, Range<usize>)], avail: usize) {
        let bar = || Span::styled(CODE_BAR, dim());
        let avail = avail.saturating_sub(2).max(1);
        let mut cur: Vec<Span<'static>> = vec![bar()];
        let mut cur_w = 0;
        for (style, range) in pieces {
            let Some(piece) = text.get(range.clone()).filter(|p| !p.is_empty()) else {
                continue;
            };
            let pw = str_width(piece);
            if cur_w + pw <= avail {
                match cur.last_mut() {
                    // Neighbouring pieces often share a colour: one span.
                    Some(last) if last.style == *style => last.content.to_mut().push_str(piece),
                    _ => cur.push(Span::styled(piece.to_owned(), *style)),
                }
                cur_w += pw;
                continue;
            }
            let mut start = 0;
            for (j, ch) in piece.char_indices() {
                let cw = ch.width().unwrap_or(0);
                if cur_w + cw > avail && (cur_w > 0 || j > start) {
                    if j > start {
                        cur.push(Span::styled(piece[start..j].to_owned(), *style));
                    }
                    self.push_line(std::mem::replace(
                        &mut cur,
                        vec![Span::styled(CODE_CONTINUED, dim())],
                    ));
                    cur_w = 0;
                    start = j;
                }
                cur_w += cw;
            }
            if start < piece.len() {
                cur.push(Span::styled(piece[start..].to_owned(), *style));
            }
        }
        self.push_line(cur);
    }

    fn end_table(&mut self) {
        let Some(mut table) = self.table.take() else {
            return;
        };
        if !table.row.is_empty() {
            let row = std::mem::take(&mut table.row);
            table.rows.push(row);
        }
        self.table_head = false;
        let ncols = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        if ncols == 0 {
            return;
        }
        self.begin_block();
        let natural: Vec<usize> = (0..ncols)
            .map(|c| {
                table
                    .rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .flat_map(|cell| cell.text.split('\n'))
                    .map(|line| str_width(line.trim()))
                    .max()
                    .unwrap_or(0)
                    .max(1)
            })
            .collect();
        let overhead = 3 * ncols + 1;
        let budget = self.avail().saturating_sub(overhead);
        let widths = fit_columns(&natural, budget);

        let border = |left: &str, mid: &str, right: &str| {
            let mut s = String::from(left);
            for (i, w) in widths.iter().enumerate() {
                if i > 0 {
                    s.push_str(mid);
                }
                s.extend(std::iter::repeat_n('─', w + 2));
            }
            s.push_str(right);
            vec![Span::styled(s, dim())]
        };
        let top = border("┌", "┬", "┐");
        let sep = border("├", "┼", "┤");
        let bottom = border("└", "┴", "┘");
        self.push_line(top);
        let empty = Inline::default();
        for (r, row) in table.rows.iter().enumerate() {
            // Each cell wrapped to its column.
            let cells: Vec<Vec<Vec<Span<'static>>>> = (0..ncols)
                .map(|c| {
                    let cell = row.get(c).unwrap_or(&empty);
                    let mut lines = Vec::new();
                    wrap(&cell.text, widths[c], |range| lines.push(cell.spans(range)));
                    lines
                })
                .collect();
            let height = cells.iter().map(Vec::len).max().unwrap_or(0).max(1);
            for k in 0..height {
                let mut spans = vec![Span::styled("│", dim())];
                for (c, lines) in cells.iter().enumerate() {
                    let mut content = lines.get(k).cloned().unwrap_or_default();
                    truncate(&mut content, widths[c], true);
                    let free = widths[c].saturating_sub(spans_width(&content));
                    let (left, right) = match table.aligns.get(c) {
                        Some(Alignment::Right) => (free, 0),
                        Some(Alignment::Center) => (free / 2, free - free / 2),
                        _ => (0, free),
                    };
                    spans.push(spaces(1 + left));
                    spans.extend(content);
                    spans.push(spaces(right + 1));
                    spans.push(Span::styled("│", dim()));
                }
                self.push_line(spans);
            }
            if r == 0 && table.has_head && table.rows.len() > 1 {
                self.push_line(sep.clone());
            }
        }
        self.push_line(bottom);
        self.need_blank = true;
    }
}

/// Column widths that fit `budget` columns: the natural widths if they fit,
/// otherwise the widest columns are capped (narrow ones keep their width),
/// each column keeping at least one column.
fn fit_columns(natural: &[usize], budget: usize) -> Vec<usize> {
    let total: usize = natural.iter().sum();
    if total <= budget {
        return natural.to_vec();
    }
    if budget <= natural.len() {
        return vec![1; natural.len()];
    }
    // The largest cap with sum(min(w, cap)) <= budget.
    let fits = |cap: usize| natural.iter().map(|&w| w.min(cap)).sum::<usize>() <= budget;
    let (mut lo, mut hi) = (1, natural.iter().copied().max().unwrap_or(1));
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let mut widths: Vec<usize> = natural.iter().map(|&w| w.min(lo)).collect();
    let mut left = budget - widths.iter().sum::<usize>();
    for (w, &n) in widths.iter_mut().zip(natural) {
        if left == 0 {
            break;
        }
        if *w < n {
            *w += 1;
            left -= 1;
        }
    }
    widths
}

/// `<br>`, `<br/>`, `<BR />`: models use them for line breaks in table cells.
fn is_br(html: &str) -> bool {
    let inner = html.trim().trim_start_matches('<').trim_end_matches('>');
    let inner = inner.trim_end_matches('/').trim_end();
    inner.eq_ignore_ascii_case("br")
}

/// Expands tabs to 4-column tab stops (per line).
fn expand_tabs(code: &str) -> Cow<'_, str> {
    if !code.contains('\t') {
        return Cow::Borrowed(code);
    }
    let mut out = String::with_capacity(code.len() + 16);
    let mut col = 0;
    for c in code.chars() {
        match c {
            '\t' => {
                let n = TAB_WIDTH - col % TAB_WIDTH;
                out.extend(std::iter::repeat_n(' ', n));
                col += n;
            }
            '\n' => {
                out.push(c);
                col = 0;
            }
            _ => {
                out.push(c);
                col += c.width().unwrap_or(0);
            }
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use proptest::prelude::*;

    use super::*;

    /// A readable form of rendered lines: each row between `|` bars padded to
    /// `width`, followed by the styled spans of that row.
    fn show(r: &Rendered, width: u16) -> String {
        let mut out = String::new();
        for line in &r.lines {
            let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
            let pad = usize::from(width).saturating_sub(line.width());
            let _ = writeln!(out, "|{text}{}|", " ".repeat(pad));
            for span in &line.spans {
                if span.style == Style::default() || span.content.trim().is_empty() {
                    continue;
                }
                let mut desc = Vec::new();
                if let Some(fg) = span.style.fg {
                    desc.push(format!("fg={fg}"));
                }
                if !span.style.add_modifier.is_empty() {
                    desc.push(format!("{:?}", span.style.add_modifier));
                }
                let _ = writeln!(out, "    {:?} {}", span.content, desc.join(" "));
            }
        }
        for (i, b) in r.code_blocks.iter().enumerate() {
            let _ = writeln!(out, "code block {}: {:?} {:?}", i + 1, b.lang, b.code);
        }
        out
    }

    fn plain(r: &Rendered) -> Vec<String> {
        r.lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    fn assert_fits(r: &Rendered, width: u16, input: &str) {
        for (i, line) in r.lines.iter().enumerate() {
            assert!(
                line.width() <= usize::from(width.max(1)),
                "line {i} is {} wide at width {width}: {:?}\ninput: {input:?}",
                line.width(),
                plain(r)[i]
            );
        }
    }

    fn assert_no_controls(r: &Rendered) {
        for line in &r.lines {
            for span in &line.spans {
                assert!(
                    !span.content.chars().any(|c| c.is_control()
                        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')),
                    "control character in span {:?}",
                    span.content
                );
            }
        }
    }

    const SAMPLE: &str = "# Tock\n\nSome *emphasis*, **strong**, ~~gone~~ and `code`, \
        a [link](https://example.com/a/very/long/path/that/goes/on) and <https://x.org>.\n\n\
        ## Lists\n\n- one\n- two with a long line that must wrap nicely under the text\n  \
        - nested item that is also quite long and wraps\n    1. deep\n    2. deeper\n\
        - [x] done\n- [ ] todo\n\n> quoted text that goes on for a while and wraps\n> > nested\n\n\
        ```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n\n\
        | a | long header | c |\n|:--|:-:|--:|\n| 1 | two | three |\n| αβγ | 日本語 | x |\n\n\
        ---\n\nline one  \nline two\n\n<div>html</div>\n\n    indented code\n\n\
        supercalifragilisticexpialidocious_and_then_some_more_characters\n";

    #[test]
    fn headings_and_emphasis() {
        let md = "# Title\n\n## Second *level*\n\n### Third\n\n#### Fourth\n\n\
                  Text with *emphasis*, **strong**, ***both***, ~~strike~~ and `inline code`.";
        insta::assert_snapshot!(show(&render_markdown(md, 40), 40));
    }

    #[test]
    fn nested_lists_wrap_with_hanging_indent() {
        let md = "- first item that is long enough to wrap around\n\
                  - second\n  - nested item which also wraps around the edge\n    \
                  - third level item wrapping too\n- back to the top\n\n\
                  1. ordered one that wraps around the edge\n2. two\n\ntext\n\n\
                  9. nine\n10. ten wraps around the edge of the screen\n\n\
                  - [x] done task\n- [ ] open task that wraps around the edge";
        let r = render_markdown(md, 30);
        assert_fits(&r, 30, md);
        insta::assert_snapshot!(show(&r, 30));
        let lines = plain(&r);
        assert_eq!(lines[0], "• first item that is long");
        assert_eq!(lines[1], "  enough to wrap around");
    }

    #[test]
    fn loose_list_items_are_separated() {
        let r = render_markdown("- a\n\n- b\n\nafter", 20);
        assert_eq!(plain(&r), ["• a", "", "• b", "", "after"]);
        let r = render_markdown("- a\n  - b\n- c\n\nafter", 20);
        assert_eq!(plain(&r), ["• a", "  ◦ b", "• c", "", "after"]);
    }

    #[test]
    fn code_blocks_rust_and_unknown() {
        let md = "Before.\n\n```rust\nfn main() {\n    let x = \"a string\"; // comment\n}\n```\n\n\
                  ```klingon\nQapla' batlh\n```\n\nAfter.";
        let r = render_markdown(md, 40);
        insta::assert_snapshot!(show(&r, 40));
        let lines = plain(&r);
        assert!(lines.iter().any(|l| l.starts_with("─ rust [1] ─")));
        assert!(lines.iter().any(|l| l.starts_with("─ klingon [2] ─")));
        // The rust block is coloured, the unknown one is not.
        let colours = |needle: &str| {
            let line = r
                .lines
                .iter()
                .find(|l| l.spans.iter().any(|s| s.content.contains(needle)))
                .expect("line present");
            line.spans
                .iter()
                .filter(|s| s.style.fg.is_some() && s.content != CODE_BAR)
                .count()
        };
        assert!(colours("main") >= 3);
        assert_eq!(colours("Qapla"), 0);
    }

    #[test]
    fn code_lines_hard_wrap_and_keep_spaces() {
        let md = "```\n  a b    c d e f g h i j k l m n o p\n```";
        let r = render_markdown(md, 12);
        assert_fits(&r, 12, md);
        assert_eq!(
            plain(&r),
            [
                "─ [1] ──────",
                "▎   a b    c",
                "↪  d e f g h",
                "↪  i j k l m",
                "↪  n o p",
                "────────────"
            ]
        );
    }

    #[test]
    fn code_blocks_are_extracted() {
        let md = "```rust ignore\nfn a() {}\n```\n\ntext\n\n    indented\n\n```\nplain\n```\n\n\
                  - item\n\n  ```py\n  x = 1\n  ```\n";
        let r = render_markdown(md, 40);
        assert_eq!(
            r.code_blocks,
            [
                CodeBlock {
                    lang: Some("rust".into()),
                    code: "fn a() {}\n".into()
                },
                CodeBlock {
                    lang: None,
                    code: "indented\n".into()
                },
                CodeBlock {
                    lang: None,
                    code: "plain\n".into()
                },
                CodeBlock {
                    lang: Some("py".into()),
                    code: "x = 1\n".into()
                },
            ]
        );
        let lines = plain(&r);
        assert!(lines.contains(&format!("─ [2] {}", "─".repeat(34))));
        // The code block inside a list item is indented under the item.
        assert!(lines.contains(&"  ▎ x = 1".to_owned()), "{lines:?}");
    }

    #[test]
    fn tabs_are_kept_for_copy_and_expanded_on_screen() {
        let r = render_markdown("```make\nall:\n\tcc -o a a.c\n```\n\na\tb", 40);
        assert_eq!(r.code_blocks[0].code, "all:\n\tcc -o a a.c\n");
        let lines = plain(&r);
        assert!(lines.contains(&"▎     cc -o a a.c".to_owned()), "{lines:?}");
        assert!(lines.contains(&"a b".to_owned()), "{lines:?}");
        assert!(!lines.iter().any(|l| l.contains('\t')));
    }

    #[test]
    fn table() {
        let md = "| Name | Qty | Note |\n|:-----|----:|:----:|\n| apple | 3 | red |\n\
                  | kiwi | 12 | *green* and **fuzzy** |";
        let r = render_markdown(md, 50);
        assert_fits(&r, 50, md);
        insta::assert_snapshot!(show(&r, 50));
    }

    #[test]
    fn table_narrower_than_natural_width_shrinks() {
        let md = "| Name | Description |\n|---|---|\n| tock | a terminal chat client that never loses a message |\n\
                  | x | y |";
        let r = render_markdown(md, 30);
        assert_fits(&r, 30, md);
        insta::assert_snapshot!(show(&r, 30));
        // Nothing is lost: all the words are still there.
        let all = plain(&r).join(" ");
        for word in ["terminal", "never", "message"] {
            assert!(all.contains(word), "{word} missing from {all}");
        }
    }

    #[test]
    fn block_quotes_nest() {
        let md = "> A quote that is long enough to wrap onto a second line.\n>\n> Second paragraph.\n\
                  > > Nested quote, also long enough to wrap.\n\nAfter.";
        let r = render_markdown(md, 30);
        assert_fits(&r, 30, md);
        insta::assert_snapshot!(show(&r, 30));
    }

    #[test]
    fn links_show_their_url_unless_equal() {
        let md = "See [the docs](https://docs.rs) or <https://example.com> or \
                  [https://same.org](https://same.org) or <me@example.com>.";
        let r = render_markdown(md, 80);
        let text = plain(&r).join(" ");
        assert!(text.contains("the docs (https://docs.rs)"), "{text}");
        assert!(!text.contains("(https://example.com)"), "{text}");
        assert!(!text.contains("(https://same.org)"), "{text}");
        assert!(!text.contains("(mailto:"), "{text}");
        insta::assert_snapshot!(show(&r, 80));
    }

    #[test]
    fn long_unbreakable_word() {
        let md = "short words then averyveryverylongwordthatcannotpossiblyfitonasingleline end";
        let r = render_markdown(md, 20);
        assert_fits(&r, 20, md);
        insta::assert_snapshot!(show(&r, 20));
    }

    #[test]
    fn escape_sequences_are_inert() {
        let md = "Title: \x1b]0;pwned\x07 and clear \x1b[2J and clipboard \
                  \x1b]52;c;cm0gLXJmIH4K\x1b\\ and 8-bit \u{9b}31m CSI \u{9d}0;x\u{9c} \
                  and bidi \u{202e}txet\u{202c}.\n\n```\n\x1b[31mred\x1b[0m\n```\n\n\
                  Entities: &#27;]0;t&#7; &#x9b;2J";
        let r = render_markdown(md, 60);
        assert_no_controls(&r);
        let text = plain(&r).join("\n");
        assert!(text.contains("␛]0;pwned␇"), "{text}");
        assert!(text.contains("␛[2J"), "{text}");
        assert!(text.contains("␛]52;c;"), "{text}");
        assert!(text.contains("<9B>31m"), "{text}");
        assert!(text.contains("<U+202E>"), "{text}");
        assert!(text.contains("␛[31mred"), "{text}");
        assert!(text.contains("␛]0;t␇"), "entity-decoded ESC/BEL: {text}");
        assert!(!r.code_blocks[0].code.contains('\x1b'));
        insta::assert_snapshot!(show(&r, 60));
    }

    #[test]
    fn unterminated_fence_renders_as_code() {
        let md = "Here is the code:\n\n```python\ndef f(x):\n    return x +";
        let r = render_markdown(md, 30);
        insta::assert_snapshot!(show(&r, 30));
        assert_eq!(
            r.code_blocks,
            [CodeBlock {
                lang: Some("python".into()),
                code: "def f(x):\n    return x +".into()
            }]
        );
        let lines = plain(&r);
        let n = lines.len();
        assert_eq!(lines[n - 2], "▎     return x +");
        assert!(lines[n - 1].starts_with('─'), "the rule after the code");
    }

    #[test]
    fn streaming_prefixes_never_panic() {
        // Every prefix of the sample, as a stream would deliver it.
        let mut cut = 0;
        while cut <= SAMPLE.len() {
            if SAMPLE.is_char_boundary(cut) {
                let r = render_markdown(&SAMPLE[..cut], 37);
                assert_fits(&r, 37, &SAMPLE[..cut]);
            }
            cut += 1;
        }
    }

    #[test]
    fn width_is_respected_for_all_widths() {
        let deep = "> - > 1. > - deeply nested content that wraps a lot\n";
        let cjk =
            "日本語のテキストは単語の間にスペースがありませんが、正しく折り返す必要があります。";
        for width in 1..=120u16 {
            for input in [SAMPLE, deep, cjk] {
                let r = render_markdown(input, width);
                assert_fits(&r, width, input);
                assert_no_controls(&r);
            }
        }
    }

    #[test]
    fn html_is_plain_text() {
        let r = render_markdown("<script>alert(1)</script>\n\ntext <b>bold</b>", 40);
        assert_eq!(
            plain(&r),
            ["<script>alert(1)</script>", "", "text <b>bold</b>"]
        );
    }

    #[test]
    fn br_tags_break_lines_in_table_cells() {
        let r = render_markdown("| a |\n|---|\n| one<br>two<BR />three |", 40);
        let lines = plain(&r);
        assert_eq!(
            lines[3..6],
            ["│ one   │", "│ two   │", "│ three │"],
            "{lines:?}"
        );
    }

    #[test]
    fn single_line_breaks_are_kept_as_hard_ones_are() {
        let r = render_markdown("one\ntwo  \nthree\\\nfour", 40);
        assert_eq!(plain(&r), ["one", "two", "three", "four"]);
        // In a list item too, under its text.
        let r = render_markdown("- log line 1\n  log line 2\n- next", 40);
        assert_eq!(plain(&r), ["• log line 1", "  log line 2", "• next"]);
    }

    #[test]
    fn rule_spans_the_width() {
        let r = render_markdown("a\n\n---\n\nb", 10);
        assert_eq!(plain(&r), ["a", "", "──────────", "", "b"]);
    }

    #[test]
    fn fit_columns_caps_widest() {
        assert_eq!(fit_columns(&[3, 4], 10), [3, 4]);
        assert_eq!(fit_columns(&[2, 20, 30], 20), [2, 9, 9]);
        assert_eq!(fit_columns(&[5, 5], 1), [1, 1]);
    }

    fn markdownish() -> impl Strategy<Value = String> {
        let atom = prop_oneof![
            Just("# ".to_owned()),
            Just("## ".to_owned()),
            Just("- ".to_owned()),
            Just("1. ".to_owned()),
            Just("  ".to_owned()),
            Just("> ".to_owned()),
            Just("```".to_owned()),
            Just("```rust\n".to_owned()),
            Just("\n".to_owned()),
            Just("\n\n".to_owned()),
            Just("|".to_owned()),
            Just("|---|---|\n".to_owned()),
            Just("*".to_owned()),
            Just("**".to_owned()),
            Just("~~".to_owned()),
            Just("`".to_owned()),
            Just("[a](http://b)".to_owned()),
            Just("\t".to_owned()),
            Just("- [ ] ".to_owned()),
            Just("\x1b]0;t\x07".to_owned()),
            Just("&#27;".to_owned()),
            "[a-z]{1,12}",
            "[a-z]{20,60}",
            "[日本語αβγ😀é\u{301}\u{200d}\u{fe0f}لا]{1,8}",
            "\\PC{1,10}",
        ];
        prop::collection::vec(atom, 0..40).prop_map(|v| v.concat())
    }

    proptest! {
        #[test]
        fn arbitrary_markdown_fits_and_is_clean(input in markdownish(), width in 1u16..130) {
            let r = render_markdown(&input, width);
            assert_fits(&r, width, &input);
            assert_no_controls(&r);
        }
    }
}
