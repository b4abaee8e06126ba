//! The conversation view: each message rendered once per width and cached;
//! only the streaming message is re-rendered as it grows; only visible rows
//! are copied into the frame.

use crate::tui::theme::palette;
use std::cell::{Cell, Ref, RefCell};
use std::ops::Range;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::markdown::{CodeBlock, OpenFence, render_markdown, render_markdown_from, settled_until};
use crate::sanitize::sanitize_line;
use crate::store::{Message, MessageStatus, Role};

/// One message with its rendered form.
/// How a message of yours came to be sent, when not as you typed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendOrigin {
    /// At the time you gave (`/later`, `/at`, `tock send --in`).
    Scheduled,
    /// An occurrence of a recurring series.
    Recurring,
}

pub struct Entry {
    pub msg: Message,
    /// For a `schedule_task` result: the live state of its task (set on reload and each minute).
    pub card: Option<TaskCard>,
    /// A long message of yours is shown folded to its first lines.
    pub folded: bool,
    /// What an interrupted reply's header adds: which key retries it, or
    /// that it is being generated again ("" for none).
    pub retry_hint: &'static str,
    /// Earlier interrupted attempts at this reply, not shown.
    pub earlier_attempts: usize,
    /// One of several versions (regenerated or edited): which, of how many,
    /// and whether it is the one the model sees.
    pub version: Option<Version>,
    /// A reply's tokens (and cost), shown discreetly under it.
    pub usage: Option<String>,
    /// While a reply streams with no text yet: how many characters its
    /// model has reasoned so far (it says so where the text will be).
    pub thinking: Option<usize>,
    /// With the reasoning shown (Ctrl+O): the latest of it, as it comes.
    pub thinking_latest: Option<std::sync::Arc<str>>,
    /// What the model of a reply reasoned, kept with it: how long it is
    /// (characters), and its text while shown (Ctrl+O).
    pub reasoned: Option<(usize, Option<String>)>,
    /// A message of yours that tock sent at its time (set when loaded; it
    /// never changes, so the cache does not compare it).
    pub origin: Option<SendOrigin>,
    /// Rendered lines: a cache filled while drawing (drawing reads `&App`).
    cache: RefCell<Option<Cached>>,
    /// While a reply streams: where its settled beginning ends (see `markdown::settled_until`).
    stable: RefCell<Option<Stable>>,
}

/// The beginning of a streaming reply up to a block boundary that later
/// text cannot change: its rows stay in the cache and each new token renders
/// only what follows. When the boundary moves on, only the text between the
/// old and the new one is rendered and appended.
struct Stable {
    width: u16,
    highlight: u64,
    /// Where the body starts in the rows (after the header and state rows).
    body_at: usize,
    end: usize,
    /// Whether the settled beginning has any rows (a blank row then
    /// separates it from what follows).
    has_rows: bool,
    /// Code blocks in the settled beginning (numbered on from there).
    blocks: usize,
    /// The tail ends in a code block still open: the rows of its complete
    /// lines are kept, and a token renders only the lines after them.
    fence: Option<KeptFence>,
}

/// An open code block at the end of a streaming reply (`markdown::OpenFence`).
struct KeptFence {
    open: OpenFence,
    /// The cached rows up to the end of its complete lines.
    rows: usize,
}

/// Where a message stands among its versions ("‹2/3›").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Version {
    pub index: usize,
    pub of: usize,
    /// The version the conversation (and the model) has; else only looked at.
    pub in_context: bool,
}

/// A task's name on its cards: its title, or (the model gave none) the
/// start of its instruction, not the word "task" again.
pub fn task_name(title: Option<&str>, instruction: &str) -> String {
    match title.map(str::trim).filter(|t| !t.is_empty()) {
        Some(t) => t.to_string(),
        None if instruction.trim().is_empty() => "task".to_string(),
        None => {
            // Its first words, up to 30 characters, cut after a whole word.
            let line = sanitize_line(instruction);
            let words: Vec<&str> = line.split_whitespace().collect();
            let mut name = String::new();
            for w in &words {
                if name.chars().count() + 1 + w.chars().count() > 30 {
                    break;
                }
                if !name.is_empty() {
                    name.push(' ');
                }
                name.push_str(w);
            }
            match name.split_whitespace().count() {
                0 => crate::sanitize::excerpt(&line, 30),
                n if n == words.len() => name,
                _ => name + "…",
            }
        }
    }
}

/// What a task card shows; part of the cache key so state changes re-render it.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskCard {
    pub job_id: i64,
    pub title: String,
    pub instruction: String,
    /// "fires Tue 09:00 — in 3h" (recomputed each minute); a recurring
    /// task's rule, then its next time, on two lines.
    pub when: String,
    pub state: String,
}

struct Cached {
    width: u16,
    /// Highlighting that became available since (see `highlight::generation`).
    highlight: u64,
    card: Option<TaskCard>,
    folded: bool,
    retry_hint: &'static str,
    earlier_attempts: usize,
    version: Option<Version>,
    usage: Option<String>,
    thinking: Option<usize>,
    thinking_shown: bool,
    /// The reasoning's length, and whether its text was shown.
    reasoned: Option<(usize, bool)>,
    content_len: usize,
    status: MessageStatus,
    /// The time in the header (a time stored ahead is shown as now).
    created_at: i64,
    lines: Vec<Line<'static>>,
    code_blocks: Vec<CodeBlock>,
    /// For a streaming reply: where the rows a token can change begin.
    tail_at: Option<usize>,
    /// What the rows took when rendered, as counted in `ROW_BYTES` (a
    /// streaming reply's growth is counted when it is rendered whole).
    bytes: usize,
    /// When a frame last showed these rows (`ROW_CLOCK`).
    used: Cell<u64>,
    /// How many rows there are, kept when the rows themselves are dropped
    /// (`forget_rows`): a frame counts the rows below what it shows.
    rows: usize,
    dropped: bool,
}

/// The most the rendered rows of the open conversation's messages may take
/// (`Entry::lines`), in bytes. Beyond it, the rows of the messages least
/// recently shown are dropped (rendered again if shown again); never those
/// of the messages a frame shows, nor a reply still streaming.
pub const ROW_CACHE_BYTES: usize = 8 << 20;

// The UI thread renders and drops messages' rows (they are not `Sync`):
// what they take and the frame clock are kept per thread.
thread_local! {
    static ROW_BYTES: Cell<usize> = const { Cell::new(0) };
    static ROW_CLOCK: Cell<u64> = const { Cell::new(0) };
}

/// What the rendered rows of messages take now, in bytes (this thread).
pub fn row_cache_bytes() -> usize {
    ROW_BYTES.with(Cell::get)
}

impl Drop for Cached {
    fn drop(&mut self) {
        ROW_BYTES.with(|b| b.set(b.get().saturating_sub(self.bytes)));
    }
}

/// What rows and code blocks take in memory, about: the structures and
/// the text they own.
fn rows_bytes(lines: &[Line<'static>], blocks: &[CodeBlock]) -> usize {
    use std::mem::size_of;
    let spans: usize = lines
        .iter()
        .map(|l| {
            size_of::<Line>()
                + l.spans.capacity() * size_of::<Span>()
                + l.spans
                    .iter()
                    .map(|s| match &s.content {
                        std::borrow::Cow::Owned(o) => o.capacity(),
                        std::borrow::Cow::Borrowed(_) => 0,
                    })
                    .sum::<usize>()
        })
        .sum();
    let code: usize = blocks
        .iter()
        .map(|b| {
            size_of::<CodeBlock>() + b.code.capacity() + b.lang.as_ref().map_or(0, String::capacity)
        })
        .sum();
    spans + code
}

impl Entry {
    pub fn new(msg: Message) -> Self {
        Self {
            msg,
            card: None,
            folded: true,
            retry_hint: "",
            earlier_attempts: 0,
            version: None,
            usage: None,
            thinking: None,
            thinking_latest: None,
            reasoned: None,
            origin: None,
            cache: RefCell::new(None),
            stable: RefCell::new(None),
        }
    }

    /// Take over the old entry's cache when nothing that affects rendering changed.
    pub fn reuse(&mut self, old: Entry) {
        if old.msg.id == self.msg.id {
            self.cache = old.cache;
            self.stable = old.stable;
        }
    }

    fn fresh(&self, width: u16) -> bool {
        self.cache.borrow().as_ref().is_some_and(|c| {
            self.same_but_text(c, width) && c.content_len == self.msg.content.len()
        })
    }

    /// Whether `c` was rendered from this entry as it is now, its text aside.
    fn same_but_text(&self, c: &Cached, width: u16) -> bool {
        c.width == width
            && c.highlight == super::highlight::generation()
            && c.status == self.msg.status
            && c.created_at == self.msg.created_at
            && c.card == self.card
            && c.folded == self.folded
            && c.retry_hint == self.retry_hint
            && c.earlier_attempts == self.earlier_attempts
            && c.version == self.version
            && c.usage == self.usage
            && c.thinking == self.thinking
            && c.thinking_shown == self.thinking_latest.is_some()
            && c.reasoned == self.reasoned_key()
    }

    fn reasoned_key(&self) -> Option<(usize, bool)> {
        self.reasoned.as_ref().map(|(n, t)| (*n, t.is_some()))
    }

    /// How many rows `lines(width)` has, without rendering them again when
    /// only they were dropped.
    pub fn row_count(&self, width: u16) -> usize {
        if self.fresh(width)
            && let Some(c) = self.cache.borrow().as_ref()
        {
            return c.rows;
        }
        self.lines(width).len()
    }

    fn dropped(&self) -> bool {
        self.cache.borrow().as_ref().is_some_and(|c| c.dropped)
    }

    /// Rendered lines (header, body, blank separator) for `width`.
    pub fn lines(&self, width: u16) -> Ref<'_, [Line<'static>]> {
        if (!self.fresh(width) || self.dropped()) && !self.stream_on(width) {
            let finished = self.finished_stream(width);
            let mut stable = self.stable.borrow_mut();
            let (lines, code_blocks, tail_at) = match (&self.card, finished) {
                (Some(card), _) => (render_card(card, width), Vec::new(), None),
                (None, Some((lines, code_blocks))) => (lines, code_blocks, None),
                (None, None) => render_message(self, width, &mut stable),
            };
            if self.msg.status != MessageStatus::Streaming {
                *stable = None;
            }
            let bytes = rows_bytes(&lines, &code_blocks);
            let lines_len = lines.len();
            ROW_BYTES.with(|b| b.set(b.get() + bytes));
            *self.cache.borrow_mut() = Some(Cached {
                width,
                highlight: super::highlight::generation(),
                card: self.card.clone(),
                folded: self.folded,
                retry_hint: self.retry_hint,
                version: self.version,
                usage: self.usage.clone(),
                thinking: self.thinking,
                thinking_shown: self.thinking_latest.is_some(),
                reasoned: self.reasoned_key(),
                earlier_attempts: self.earlier_attempts,
                content_len: self.msg.content.len(),
                status: self.msg.status,
                created_at: self.msg.created_at,
                lines,
                code_blocks,
                tail_at,
                bytes,
                used: Cell::new(0),
                rows: lines_len,
                dropped: false,
            });
        }
        if let Some(c) = self.cache.borrow().as_ref() {
            c.used.set(ROW_CLOCK.with(Cell::get));
        }
        Ref::map(self.cache.borrow(), |c| {
            c.as_ref().map(|c| c.lines.as_slice()).unwrap_or(&[])
        })
    }

    /// A streaming reply that only grew since it was rendered, with its
    /// settled beginning where it was: only the rows after that are made
    /// again, in place (the settled rows are neither rendered nor copied).
    /// Returns whether it did so.
    fn stream_on(&self, width: u16) -> bool {
        let m = &self.msg;
        if m.status != MessageStatus::Streaming || m.content.is_empty() || self.card.is_some() {
            return false;
        }
        let mut cache = self.cache.borrow_mut();
        let Some(c) = cache.as_mut().filter(|c| !c.dropped) else {
            return false;
        };
        let mut stable = self.stable.borrow_mut();
        let Some(s) = stable.as_mut() else {
            return false;
        };
        let body_width = width.saturating_sub(2).max(1);
        let same =
            self.same_but_text(c, width) && s.width == body_width && s.highlight == c.highlight;
        let Some(mut tail_at) = c
            .tail_at
            .filter(|_| same && m.content.len() >= c.content_len)
        else {
            return false;
        };
        // Only new lines of an open code block: its other rows stay.
        if let Some(f) = s.fence.as_mut() {
            if let Some(rows) = f.open.render(&m.content[s.end..]) {
                c.lines.truncate(f.rows);
                c.lines.extend(indent(rows.done, false));
                f.rows = c.lines.len();
                c.lines.extend(indent(rows.open, false));
                trailer(self, body_width, &mut c.lines);
                if let Some(last) = c.code_blocks.last_mut() {
                    *last = rows.block;
                }
                c.content_len = m.content.len();
                c.rows = c.lines.len();
                return true;
            }
            s.fence = None;
        }
        c.lines.truncate(tail_at);
        // Blocks closed since the last frame join the settled rows. Only a
        // line break can settle more (a block settles once its first line
        // is complete); until one comes the boundary stays where it was,
        // which stays true whatever follows.
        let broke = m
            .content
            .get(c.content_len..)
            .is_some_and(|new| new.contains('\n'));
        let settled = if broke {
            s.end + settled_until(&m.content[s.end..])
        } else {
            s.end
        };
        c.code_blocks.truncate(s.blocks);
        if settled > s.end {
            let r = render_markdown_from(&m.content[s.end..settled], body_width, s.blocks);
            append_block_rows(&mut c.lines, s.has_rows, r.lines);
            s.has_rows |= c.lines.len() > tail_at;
            s.blocks += r.code_blocks.len();
            c.code_blocks.extend(r.code_blocks);
            s.end = settled;
            tail_at = c.lines.len();
            c.tail_at = Some(tail_at);
        }
        let (tail, tail_blocks) = streaming_tail(self, body_width, s, tail_at);
        c.lines.extend(tail);
        c.code_blocks.extend(tail_blocks);
        c.content_len = m.content.len();
        c.rows = c.lines.len();
        true
    }

    /// The rows and code blocks of a reply that streamed here and has just
    /// completed: its settled rows are taken from the cache as they are, and
    /// only its head, tail and trailer are made again. Rendering a long reply
    /// whole once more was the largest single cost of a reply's frames (a
    /// 16 KB reply: about 60 million instructions, callgrind). None when it
    /// must be rendered whole; the cache is then left as it was.
    fn finished_stream(&self, width: u16) -> Option<(Vec<Line<'static>>, Vec<CodeBlock>)> {
        let m = &self.msg;
        // A reply with reasoning kept starts with a line the stream did not have.
        if m.status != MessageStatus::Complete
            || m.role != Role::Assistant
            || self.card.is_some()
            || self.reasoned.is_some()
        {
            return None;
        }
        let mut cache = self.cache.borrow_mut();
        let c = cache.as_mut().filter(|c| {
            !c.dropped
                && c.status == MessageStatus::Streaming
                && c.card.is_none()
                && c.width == width
                && c.highlight == super::highlight::generation()
                && m.content.len() >= c.content_len
        })?;
        let mut stable = self.stable.borrow_mut();
        let body_width = width.saturating_sub(2).max(1);
        let s = stable
            .as_mut()
            .filter(|s| s.width == body_width && s.highlight == c.highlight)?;
        let tail_at = c
            .tail_at
            .filter(|&at| s.body_at <= at && at <= c.lines.len())?;
        m.content.get(s.end..)?;
        let mut lines = head(self, width);
        lines.extend(c.lines.drain(s.body_at..tail_at));
        let (tail, tail_blocks) = streaming_tail(self, body_width, s, lines.len());
        lines.extend(tail);
        let mut code_blocks = std::mem::take(&mut c.code_blocks);
        code_blocks.truncate(s.blocks);
        code_blocks.extend(tail_blocks);
        Some((lines, code_blocks))
    }

    pub fn code_blocks(&self, width: u16) -> Vec<CodeBlock> {
        drop(self.lines(width));
        self.cache
            .borrow()
            .as_ref()
            .map(|c| c.code_blocks.clone())
            .unwrap_or_default()
    }
}

fn time_of(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|d| d.with_timezone(&chrono::Local).format("%H:%M").to_string())
        .unwrap_or_default()
}

/// A tool's result, as a small card: an error (a declined or refused call
/// among them) in one line with a mark, else the first lines of the result.
fn tool_result_lines(content: &str, width: usize) -> Vec<Line<'static>> {
    let dim = Style::new().fg(palette().dim);
    let clip = |s: &str| -> String { super::text::elide(&sanitize_line(s), width) };
    if let Ok(serde_json::Value::Object(o)) = serde_json::from_str::<serde_json::Value>(content)
        && let Some(err) = o.get("error").and_then(|e| e.as_str())
    {
        let reason = o
            .get("reason")
            .and_then(|r| r.as_str())
            .map(|r| format!(": {r}"))
            .unwrap_or_default();
        let text = if err.contains("declined") {
            format!("✗ declined by you{reason}")
        } else {
            format!("✗ {err}{reason}")
        };
        return vec![Line::from(vec![
            Span::raw("  "),
            Span::styled(clip(&text), Style::new().fg(palette().warning)),
        ])];
    }
    let all: Vec<&str> = content.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut out: Vec<Line<'static>> = all
        .iter()
        .take(3)
        .map(|l| Line::from(vec![Span::raw("  "), Span::styled(clip(l), dim)]))
        .collect();
    if all.len() > 3 {
        out.push(Line::styled(
            format!("  … {}", super::text::more_lines(all.len() - 3)),
            dim,
        ));
    }
    if out.is_empty() {
        out.push(Line::styled("  (no output)", dim));
    }
    out
}

/// The tool calls an assistant message made, one line each: name and arguments.
fn tool_call_lines(calls_json: &str, width: usize) -> Vec<Line<'static>> {
    let calls: Vec<crate::llm::ToolCall> = serde_json::from_str(calls_json).unwrap_or_default();
    calls
        .iter()
        .map(|c| {
            let args = serde_json::from_str::<serde_json::Value>(&c.arguments)
                .map(|v| v.to_string())
                .unwrap_or_else(|_| c.arguments.clone());
            let text = format!("→ {} {}", c.name, args);
            Line::from(vec![
                Span::raw("  "),
                Span::styled(
                    super::text::elide(&sanitize_line(&text), width),
                    Style::new().fg(palette().accent),
                ),
            ])
        })
        .collect()
}

fn indent(lines: Vec<Line<'static>>, dim: bool) -> Vec<Line<'static>> {
    lines
        .into_iter()
        .map(|l| {
            let mut spans = vec![Span::raw("  ")];
            spans.extend(l.spans.into_iter().map(|s| {
                let st = s.style.fg(palette().dim);
                if dim { s.style(st) } else { s }
            }));
            Line::from(spans)
        })
        .collect()
}

/// A message's first rows: who wrote it and when, its version, and its
/// state (streaming, interrupted, failed) on the header row when it fits.
fn head(e: &Entry, width: u16) -> Vec<Line<'static>> {
    let m = &e.msg;
    let mut header: Vec<Span<'static>> = Vec::new();
    let (bar, name_style) = match m.role {
        Role::User => (
            palette().info,
            Style::new().fg(palette().info).add_modifier(Modifier::BOLD),
        ),
        Role::Assistant => (
            palette().success,
            Style::new()
                .fg(palette().success)
                .add_modifier(Modifier::BOLD),
        ),
        Role::Tool | Role::Notice => (palette().dim, Style::new().fg(palette().dim)),
    };
    let name = match m.role {
        Role::User => "You".to_string(),
        Role::Assistant => sanitize_line(m.model.as_deref().unwrap_or("assistant")).into_owned(),
        Role::Tool => format!("tool {}", sanitize_line(m.model.as_deref().unwrap_or(""))),
        Role::Notice => "tock".to_string(),
    };
    header.push(Span::styled("▌ ", Style::new().fg(bar)));
    header.push(Span::styled(name, name_style));
    header.push(Span::styled(
        format!(" · {}", time_of(m.created_at)),
        Style::new().fg(palette().dim),
    ));
    if let Some(v) = e.version {
        header.push(Span::styled(
            format!("  ‹{}/{}›", v.index, v.of),
            Style::new().fg(palette().accent),
        ));
        if !v.in_context {
            // The longest wording the row holds: it was cut mid-word at 60
            // columns (`not in the conversa`).
            let used: usize = header.iter().map(|s| s.width()).sum();
            let note = super::text::first_fitting(
                &[
                    " an earlier version, not in the conversation",
                    " earlier, not in the conversation",
                    " not in the conversation",
                    " not in context",
                ],
                (width as usize).saturating_sub(used),
            );
            if let Some(note) = note {
                header.push(Span::styled(*note, Style::new().fg(palette().dim)));
            }
        }
    }
    if m.is_task_turn() {
        header.push(Span::styled(
            "  ⏰ scheduled task",
            Style::new().fg(palette().accent),
        ));
    } else if m.role == Role::User
        && let Some(origin) = e.origin
    {
        header.push(Span::styled(
            match origin {
                SendOrigin::Scheduled => "  ⏰ scheduled",
                SendOrigin::Recurring => "  ↻ recurring",
            },
            Style::new().fg(palette().accent),
        ));
    }
    // (symbol, reason, hint, style): the reason is shortened before the hint is lost.
    let state: Option<(&str, String, &str, Style)> = match m.status {
        MessageStatus::Streaming => Some((
            "● ",
            "streaming".into(),
            "",
            Style::new().fg(palette().warning),
        )),
        MessageStatus::Interrupted => Some((
            "⚠ ",
            {
                let why = sanitize_line(m.error.as_deref().unwrap_or("interrupted")).into_owned();
                match e.earlier_attempts {
                    0 => why,
                    n => format!(
                        "{why} (after {n} earlier interrupted attempt{})",
                        if n == 1 { "" } else { "s" }
                    ),
                }
            },
            e.retry_hint,
            Style::new().fg(palette().warning),
        )),
        MessageStatus::Error => Some((
            "✗ ",
            sanitize_line(m.error.as_deref().unwrap_or("error")).into_owned(),
            "",
            Style::new().fg(palette().error),
        )),
        // A version being looked at says so itself (‹1/2›).
        MessageStatus::Superseded if e.version.is_some() => None,
        MessageStatus::Superseded => {
            Some(("", "(replaced)".into(), "", Style::new().fg(palette().dim)))
        }
        // Complete, with a word on how it ended (cut at the length limit).
        MessageStatus::Complete => m.error.as_deref().map(|why| {
            (
                "✂ ",
                sanitize_line(why).into_owned(),
                "",
                Style::new().fg(palette().warning),
            )
        }),
    };
    let mut state_rows = Vec::new();
    if let Some((sym, reason, hint, style)) = state {
        let full = format!("  {sym}{reason}{hint}");
        let used: usize = header.iter().map(|s| s.width()).sum();
        if used + unicode_width::UnicodeWidthStr::width(full.as_str()) <= width as usize {
            header.push(Span::styled(full, style));
        } else {
            // Too long for the header row: on rows of its own (about two), the
            // reason shortened if need be so that the hint is never cut off.
            let indent = 2 + unicode_width::UnicodeWidthStr::width(sym);
            let room = (width as usize).saturating_sub(indent).max(8);
            let hint_w = unicode_width::UnicodeWidthStr::width(hint);
            let mut rows = wrap_words(&clip(&reason, (2 * room).saturating_sub(hint_w + 2)), room);
            // The hint stays in one piece.
            match rows.last_mut() {
                Some(last)
                    if unicode_width::UnicodeWidthStr::width(last.as_str()) + hint_w <= room =>
                {
                    last.push_str(hint)
                }
                _ if !hint.is_empty() => rows.push(hint.trim_start().to_string()),
                _ => {}
            }
            for (i, row) in rows.into_iter().enumerate() {
                let lead = if i == 0 {
                    format!("  {sym}")
                } else {
                    " ".repeat(indent)
                };
                state_rows.push(Line::from(Span::styled(format!("{lead}{row}"), style)));
            }
        }
    }
    let mut lines = vec![Line::from(header)];
    lines.extend(state_rows);
    lines
}

/// A message's rows and code blocks; for a streaming reply also where the
/// rows a token can change begin (see `Entry::lines`).
fn render_message(
    e: &Entry,
    width: u16,
    stable: &mut Option<Stable>,
) -> (Vec<Line<'static>>, Vec<CodeBlock>, Option<usize>) {
    let m = &e.msg;
    let folded = e.folded;
    let body_width = width.saturating_sub(2).max(1);
    let mut lines = head(e, width);
    let mut blocks = Vec::new();
    if m.role == Role::Tool {
        lines.extend(tool_result_lines(&m.content, body_width as usize));
    } else if m.role == Role::User {
        // What you sent is what you see: verbatim, never read as Markdown.
        lines.extend(verbatim(
            &m.content,
            body_width,
            folded,
            m.status == MessageStatus::Superseded,
        ));
        // What went with it (`/attach`, `@path`): one chip per file, as the
        // composer showed them before sending.
        let parts: Vec<crate::engine::Part> = m
            .parts_json
            .as_deref()
            .and_then(|j| serde_json::from_str(j).ok())
            .unwrap_or_default();
        for chip in super::composer::chips(&parts) {
            lines.push(Line::from(vec![Span::raw(" "), chip]));
        }
    } else if m.content.is_empty() && m.status == MessageStatus::Streaming {
        let waiting = match e.thinking {
            Some(n) => format!("  … thinking ({} so far)", crate::transcript::characters(n)),
            None => "  …".to_string(),
        };
        lines.push(Line::from(Span::styled(
            waiting,
            Style::new().fg(palette().dim),
        )));
        if let Some(latest) = &e.thinking_latest {
            lines.extend(latest_reasoning_lines(latest, body_width));
        }
    } else if m.status == MessageStatus::Streaming {
        // Only the tail after the settled beginning is rendered again per token.
        let split = settled_until(&m.content);
        let r = render_markdown_from(&m.content[..split], body_width, 0);
        let before = lines.len();
        append_block_rows(&mut lines, false, r.lines);
        let s = stable.insert(Stable {
            width: body_width,
            highlight: super::highlight::generation(),
            body_at: before,
            end: split,
            has_rows: lines.len() > before,
            blocks: r.code_blocks.len(),
            fence: None,
        });
        let tail_at = lines.len();
        let (tail, tail_blocks) = streaming_tail(e, body_width, s, tail_at);
        lines.extend(tail);
        blocks = r.code_blocks;
        blocks.extend(tail_blocks);
        return (lines, blocks, Some(tail_at));
    } else {
        lines.extend(reasoning_lines(e, body_width));
        let r = render_markdown(&m.content, body_width);
        lines.extend(indent(
            r.lines,
            matches!(m.status, MessageStatus::Superseded),
        ));
        blocks = r.code_blocks;
    }
    trailer(e, body_width, &mut lines);
    (lines, blocks, None)
}

/// Rows of Markdown blocks rendered on their own, indented like the rest of
/// a reply, after `lines`: separated from them by the blank row the renderer
/// puts between blocks when `lines` ends with rows of blocks already.
fn append_block_rows(lines: &mut Vec<Line<'static>>, after_rows: bool, rows: Vec<Line<'static>>) {
    if after_rows && !rows.is_empty() {
        lines.push(Line::from(Span::raw("  ")));
    }
    lines.extend(indent(rows, false));
}

/// What follows the settled beginning of a streaming reply: its tail, and
/// the rows under every message (`trailer`). This is all a token changes.
/// `at`: where its rows go in the message's rows.
fn streaming_tail(
    e: &Entry,
    body_width: u16,
    s: &mut Stable,
    at: usize,
) -> (Vec<Line<'static>>, Vec<CodeBlock>) {
    let tail = render_markdown_from(&e.msg.content[s.end..], body_width, s.blocks);
    let blank = usize::from(s.has_rows && !tail.lines.is_empty());
    s.fence = tail.open_fence.map(|open| KeptFence {
        rows: at + blank + open.rows,
        open,
    });
    let mut lines = Vec::new();
    append_block_rows(&mut lines, s.has_rows, tail.lines);
    trailer(e, body_width, &mut lines);
    (lines, tail.code_blocks)
}

/// The rows under a message: the tools a reply calls, its usage, a blank row.
fn trailer(e: &Entry, body_width: u16, lines: &mut Vec<Line<'static>>) {
    let m = &e.msg;
    if m.role == Role::Assistant
        && let Some(calls) = m.tool_calls_json.as_deref()
    {
        // A reply that only calls tools says which, instead of an empty bubble.
        if m.content.trim().is_empty() && lines.last().is_some_and(|l| l.width() <= 2) {
            lines.pop();
        }
        lines.extend(tool_call_lines(calls, body_width as usize));
    }
    if let Some(u) = e.usage.as_deref().filter(|u| !u.is_empty()) {
        lines.push(Line::styled(
            format!("  {}", sanitize_line(u)),
            Style::new().fg(palette().dim).add_modifier(Modifier::DIM),
        ));
    }
    lines.push(Line::default());
}

/// What the model reasoned before its reply: one dim line that says how
/// long it is, or (Ctrl+O) the text itself, dim, set apart by a bar.
fn reasoning_lines(e: &Entry, body_width: u16) -> Vec<Line<'static>> {
    let Some((n, text)) = &e.reasoned else {
        return Vec::new();
    };
    let dim = Style::new().fg(palette().dim);
    let Some(text) = text else {
        return vec![Line::styled(
            format!(
                "  ▸ thought: {} (Ctrl+O shows it)",
                crate::transcript::characters(*n)
            ),
            dim,
        )];
    };
    let mut out = vec![Line::styled(
        format!("  ▾ thought: {}", crate::transcript::characters(*n)),
        dim,
    )];
    out.extend(barred(text, body_width));
    out
}

/// A model's reasoning as rows: dim, set apart by a bar.
fn barred(text: &str, body_width: u16) -> Vec<Line<'static>> {
    let dim = Style::new().fg(palette().dim);
    // `verbatim` indents its rows by two columns: the bar takes them.
    verbatim(
        text.trim(),
        body_width.saturating_sub(2).max(1),
        false,
        true,
    )
    .into_iter()
    .map(|row| {
        let mut spans = vec![Span::styled("  │ ", dim)];
        spans.extend(row.spans.into_iter().skip(1));
        Line::from(spans)
    })
    .collect()
}

/// Rows of the reasoning shown as it comes: the latest few.
const THINKING_ROWS: usize = 6;

/// The latest of what a model reasons while it does (Ctrl+O shows it):
/// its last rows, as the kept reasoning is shown.
fn latest_reasoning_lines(latest: &str, body_width: u16) -> Vec<Line<'static>> {
    let mut rows = barred(latest, body_width);
    rows.drain(..rows.len().saturating_sub(THINKING_ROWS));
    rows
}

/// Rows shown of a folded message of yours, and the length from which it folds.
const FOLD_SHOW: usize = 12;
const FOLD_FROM: usize = 20;

/// Text exactly as typed: its line breaks kept, long lines wrapped at words
/// (or mid-word when a word is wider than the view), control characters made
/// visible, and a long paste folded to its first rows.
fn verbatim(text: &str, width: u16, folded: bool, dim: bool) -> Vec<Line<'static>> {
    let w = width.max(1) as usize;
    let style = if dim {
        Style::new().fg(palette().dim)
    } else {
        Style::new()
    };
    // Each row with the line of the text it shows (a long line is several).
    let mut rows: Vec<(usize, String)> = Vec::new();
    for (n, line) in text.split('\n').enumerate() {
        let clean = crate::sanitize::sanitize_line(line.trim_end_matches('\r'));
        if clean.is_empty() {
            rows.push((n, String::new()));
        } else {
            rows.extend(wrap_verbatim(&clean, w).into_iter().map(|r| (n, r)));
        }
    }
    while rows.last().is_some_and(|(_, r)| r.is_empty()) && rows.len() > 1 {
        rows.pop();
    }
    let total = rows.len();
    // What the fold hides, in lines of the text (not rows of the screen):
    // from the first line it does not show whole.
    let hidden = if folded && total >= FOLD_FROM {
        let last = rows.last().map_or(0, |(n, _)| *n);
        let (cut, next) = (rows[FOLD_SHOW - 1].0, rows[FOLD_SHOW].0);
        let first_hidden = if next == cut { cut } else { cut + 1 };
        rows.truncate(FOLD_SHOW);
        last + 1 - first_hidden
    } else {
        0
    };
    let rows = rows.into_iter().map(|(_, r)| r);
    let mut out: Vec<Line<'static>> = rows
        .into_iter()
        .map(|r| Line::from(vec![Span::raw("  "), Span::styled(r, style)]))
        .collect();
    if hidden > 0 {
        out.push(Line::from(Span::styled(
            format!("  ⋯ {} (Ctrl+O unfolds)", super::text::more_lines(hidden)),
            Style::new().fg(palette().dim),
        )));
    }
    out
}

/// Wrap one line at spaces, keeping its indentation and inner spacing.
fn wrap_verbatim(line: &str, width: usize) -> Vec<String> {
    use unicode_width::UnicodeWidthChar;
    let mut rows = Vec::new();
    let mut row = String::new();
    let mut row_w = 0;
    let mut last_space: Option<(usize, usize)> = None; // (byte index after the space, width there)
    for c in line.chars() {
        let cw = c.width().unwrap_or(0);
        if row_w + cw > width && !row.is_empty() {
            match last_space {
                Some((at, w_at)) if at < row.len() => {
                    let rest = row.split_off(at);
                    rows.push(std::mem::replace(&mut row, rest));
                    row_w -= w_at;
                }
                _ => {
                    rows.push(std::mem::take(&mut row));
                    row_w = 0;
                }
            }
            last_space = None;
        }
        row.push(c);
        row_w += cw;
        if c == ' ' {
            last_space = Some((row.len(), row_w));
        }
    }
    rows.push(row);
    rows
}

fn state_style(state: &str) -> Style {
    match state {
        "scheduled" | "recurring" => Style::new().fg(palette().accent),
        "fired" => Style::new().fg(palette().success),
        "failed" => Style::new().fg(palette().error),
        "expired" => Style::new().fg(palette().special),
        _ => Style::new().fg(palette().dim),
    }
}

/// The width of a boxed card `width` cells wide: its rules and its rows.
pub fn card_width(width: u16) -> usize {
    (width as usize).clamp(20, 72)
}

/// The cells a boxed card's title has, and whether its badge shows: the
/// badge whole beside the title (cut, if need be, to no less than 12
/// cells), else no badge — never a cut one (`[needs approv`).
pub fn title_room(width: u16, title: &str, badge: Option<&str>) -> (usize, bool) {
    use unicode_width::UnicodeWidthStr;
    // `  ╭─ ` before the title, ` ─` at least after it.
    let room = card_width(width).saturating_sub(7);
    match badge.map(|b| b.width() + 3) {
        Some(b) if room >= b + title.width().min(12) => (room - b, true),
        _ => (room, false),
    }
}

/// A boxed card: a title row, body rows, a bottom rule. Used for task and
/// approval cards. A title too long is cut with `…`; body rows are the
/// caller's to fit (`card_width` - 4 cells).
pub fn boxed(
    title: &str,
    badge: Option<(&str, Style)>,
    body: Vec<Line<'static>>,
    width: u16,
    color: Color,
) -> Vec<Line<'static>> {
    let w = card_width(width);
    let border = Style::new().fg(color);
    let (room, with_badge) = title_room(width, title, badge.map(|(b, _)| b));
    let mut top = vec![
        Span::styled("  ╭─ ", border),
        Span::styled(
            super::text::elide(title, room),
            border.add_modifier(Modifier::BOLD),
        ),
    ];
    if let Some((b, st)) = badge.filter(|_| with_badge) {
        top.push(Span::raw(" "));
        top.push(Span::styled(
            format!("[{b}]"),
            st.add_modifier(Modifier::BOLD),
        ));
    }
    let used: usize = top.iter().map(|s| s.width()).sum();
    top.push(Span::styled(
        format!(" {}", "─".repeat(w.saturating_sub(used + 1))),
        border,
    ));
    let mut out = vec![Line::from(top)];
    for l in body {
        let mut spans = vec![Span::styled("  │ ", border)];
        spans.extend(l.spans);
        out.push(Line::from(spans));
    }
    out.push(Line::from(Span::styled(
        format!("  ╰{}", "─".repeat(w.saturating_sub(3))),
        border,
    )));
    out
}

/// Greedy word wrap to `width` columns (words longer than a row are split).
pub fn wrap_words(s: &str, width: usize) -> Vec<String> {
    use unicode_width::UnicodeWidthChar;
    let mut rows = vec![String::new()];
    let mut w = 0;
    for word in s.split(' ') {
        let ww = unicode_width::UnicodeWidthStr::width(word);
        if w > 0 && w + 1 + ww > width {
            rows.push(String::new());
            w = 0;
        } else if w > 0
            && let Some(last) = rows.last_mut()
        {
            last.push(' ');
            w += 1;
        }
        for c in word.chars() {
            let cw = c.width().unwrap_or(0);
            if w + cw > width && w > 0 {
                rows.push(String::new());
                w = 0;
            }
            if let Some(last) = rows.last_mut() {
                last.push(c);
            }
            w += cw;
        }
    }
    rows
}

fn clip(s: &str, max: usize) -> String {
    super::text::elide(&sanitize_line(s), max)
}

fn render_card(card: &TaskCard, width: u16) -> Vec<Line<'static>> {
    let inner = (width as usize).clamp(20, 72).saturating_sub(6);
    let mut body = vec![Line::from(Span::styled(
        clip(&card.instruction, inner),
        Style::new(),
    ))];
    // A recurring task's rule and its next time: a line each, so that a
    // long rule never cuts the time off.
    body.extend(
        card.when
            .lines()
            .map(|l| Line::from(Span::styled(clip(l, inner), Style::new().fg(palette().dim)))),
    );
    let title = format!(
        "⏰ task #{} · {}",
        card.job_id,
        clip(&card.title, inner.saturating_sub(24))
    );
    let mut lines = boxed(
        &title,
        Some((&card.state, state_style(&card.state))),
        body,
        width,
        palette().accent,
    );
    lines.push(Line::default());
    lines
}

/// Extra lines drawn after the history (sending bubbles, cards) — not cached.
pub type Tail = Vec<Line<'static>>;

/// Scroll position: `None` follows the latest; `Some(n)` = n rows up from the bottom.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Scroll {
    pub from_bottom: Option<usize>,
    /// Show this message at the top instead (as far as the history allows):
    /// resolved by the frame that draws it, in its own area (a jump from
    /// search measured in the frame before, whose chat was taller, left the
    /// message just above the view).
    pub top_of: Option<i64>,
}

/// Draw the visible window of `entries` + `tail` into `area`, rendering only
/// the messages that reach into it (walking up from the newest). Returns the
/// scroll offset actually used (clamped at the top of the history).
pub fn draw(entries: &[Entry], tail: &Tail, scroll: Scroll, area: Rect, buf: &mut Buffer) -> usize {
    let window = window(entries, tail, scroll, area);
    // Lines are wrapped already: each is set on its row, cut at the width
    // (a Paragraph would re-flow every row of every frame).
    for (row, line) in window.rows().enumerate() {
        super::put_line::put_line(buf, area.x, area.y + row as u16, line, area.width);
    }
    window.from_bottom
}

/// The rows a chat area shows, borrowed from where they are kept (the
/// messages' rendered rows, the tail): a frame compares and draws them
/// without copying them.
pub struct Window<'a> {
    /// Top to bottom: rows and which of them are shown.
    parts: Vec<(Rows<'a>, Range<usize>)>,
    /// The scroll offset the window could honour.
    pub from_bottom: usize,
}

enum Rows<'a> {
    Entry(Ref<'a, [Line<'static>]>),
    Tail(&'a [Line<'static>]),
}

impl Window<'_> {
    /// The rows, top to bottom (fewer than the area's height when the
    /// conversation is shorter).
    pub fn rows(&self) -> impl Iterator<Item = &Line<'static>> {
        self.parts.iter().flat_map(|(rows, range)| {
            let rows: &[Line<'static>] = match rows {
                Rows::Entry(r) => r,
                Rows::Tail(t) => t,
            };
            rows[range.clone()].iter()
        })
    }
}

/// The window of `entries` + `tail` that `area` shows at `scroll`,
/// rendering only the messages that reach into it (walking up from the
/// newest).
pub fn window<'a>(entries: &'a [Entry], tail: &'a Tail, scroll: Scroll, area: Rect) -> Window<'a> {
    let width = area.width;
    let height = area.height as usize;
    let want = match scroll
        .top_of
        .and_then(|id| entries.iter().rposition(|e| e.msg.id == id))
    {
        // The rows from the message's first to the foot, less a window.
        Some(i) => (tail.len()
            + entries[i..]
                .iter()
                .map(|e| e.row_count(width))
                .sum::<usize>())
        .saturating_sub(height),
        None => scroll.from_bottom.unwrap_or(0),
    };
    ROW_CLOCK.with(|c| c.set(c.get() + 1));
    // Walk up from the newest message until the window is covered, counting rows.
    let needed = want.saturating_add(height);
    let mut rows = tail.len();
    let mut first = entries.len();
    while first > 0 && rows < needed {
        first -= 1;
        rows += entries[first].row_count(width);
    }
    // At the top of the history the offset cannot go further up.
    let from_bottom = want.min(rows.saturating_sub(height));
    // Only the rows in the window are visited (scrolled to the top of a long
    // conversation, copying every row cost tens of ms a frame); messages
    // below it are only counted.
    let mut skip = from_bottom;
    let mut room = height;
    // Of `len` rows above those taken so far: which are shown, and whether
    // the window is full.
    let mut take = |len: usize| {
        let end = len.saturating_sub(skip);
        skip -= len - end;
        let start = end.saturating_sub(room);
        room -= end - start;
        (start..end, room == 0)
    };
    let mut parts = Vec::new();
    let (shown, _) = take(tail.len());
    if !shown.is_empty() {
        parts.push((Rows::Tail(tail), shown));
    }
    // The messages shown: from `lowest` on, up to `highest`.
    let (mut lowest, mut highest) = (entries.len(), None);
    for (i, e) in entries.iter().enumerate().skip(first).rev() {
        let (shown, full) = take(e.row_count(width));
        if shown.is_empty() {
            if full {
                break;
            }
            continue;
        }
        highest.get_or_insert(i + 1);
        lowest = i;
        parts.push((Rows::Entry(e.lines(width)), shown));
    }
    parts.reverse();
    // The rows of the messages shown stay; others may make room.
    forget_rows(entries, lowest..highest.unwrap_or(lowest));
    Window { parts, from_bottom }
}

/// When the rendered rows take more than `ROW_CACHE_BYTES`: drop those of
/// the least recently shown of `entries` outside `shown` (none streaming)
/// until they take at most three quarters of it (so that this is rare).
/// Their row counts stay.
fn forget_rows(entries: &[Entry], shown: Range<usize>) {
    if row_cache_bytes() <= ROW_CACHE_BYTES {
        return;
    }
    let mut by_use: Vec<(u64, usize)> = entries
        .iter()
        .enumerate()
        .filter(|(i, _)| !shown.contains(i))
        .filter_map(|(i, e)| {
            let cache = e.cache.try_borrow().ok()?;
            let c = cache.as_ref()?;
            (!c.dropped && c.status != MessageStatus::Streaming).then(|| (c.used.get(), i))
        })
        .collect();
    by_use.sort_unstable();
    for (_, i) in by_use {
        if row_cache_bytes() <= ROW_CACHE_BYTES / 4 * 3 {
            break;
        }
        let e = &entries[i];
        if let Ok(mut cache) = e.cache.try_borrow_mut()
            && let Some(c) = cache.as_mut()
        {
            c.lines = Vec::new();
            c.code_blocks = Vec::new();
            c.dropped = true;
            ROW_BYTES.with(|b| b.set(b.get().saturating_sub(c.bytes)));
            c.bytes = 0;
        }
        if let Ok(mut stable) = e.stable.try_borrow_mut() {
            *stable = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fold counts what it leaves out in words that agree with it.
    #[test]
    fn a_tool_result_folded_counts_its_hidden_lines() {
        let text = |lines: Vec<Line<'static>>| -> Vec<String> {
            lines
                .iter()
                .map(|l| l.to_string().trim().to_string())
                .collect()
        };
        let four = text(tool_result_lines("l1\nl2\nl3\nl4", 40));
        assert_eq!(four.last().map(String::as_str), Some("… 1 more line"));
        let five = text(tool_result_lines("l1\nl2\nl3\nl4\nl5", 40));
        assert_eq!(five.last().map(String::as_str), Some("… 2 more lines"));
        assert_eq!(text(tool_result_lines("l1\nl2\nl3", 40)).len(), 3);
    }

    const SAMPLE: &str = "# Plan\n\nFirst a paragraph that is long enough to wrap at narrow widths, with `code` and **bold**.\n\n\
```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n\nThen a list:\n\n- one\n- two\n\n  still two\n- three\n\n\
> a quote\n> more\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n## Next\n\n```python\nprint(1)\n\nprint(2)\n```\n\n1. first\n2. second\n\n A paragraph after a space, long enough to wrap.\n\n- item 3: a\n- item 4: b\n\n \
Then one more.\n\n1. a\n\n2. loose now\n\n---\n\nThe end.\n";

    fn text_of(lines: &[Line<'static>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    fn message(content: &str, status: MessageStatus) -> Message {
        Message {
            model: Some("m".into()),
            ..Message::for_test(1, Role::Assistant, status, content)
        }
    }

    /// Rendering a streaming reply in two parts shows exactly what rendering it whole shows.
    #[test]
    fn streaming_tail_render_matches_a_whole_render_at_every_length() {
        for width in [30u16, 80] {
            let mut entry = Entry::new(message("", MessageStatus::Streaming));
            for end in (0..=SAMPLE.len()).filter(|i| SAMPLE.is_char_boundary(*i)) {
                entry.msg.content = SAMPLE[..end].to_string();
                if entry.msg.content.is_empty() {
                    continue;
                }
                let split_lines = text_of(&entry.lines(width));
                // The same text rendered whole (as a finished reply); the headers differ.
                let mut whole = entry.msg.clone();
                whole.status = MessageStatus::Complete;
                let mut whole = Entry::new(whole);
                whole.folded = false;
                let whole_lines = text_of(&render_message(&whole, width, &mut None).0);
                assert_eq!(
                    split_lines[1..],
                    whole_lines[1..],
                    "width {width}, length {end}: {:?}",
                    &SAMPLE[..end]
                );
            }
        }
    }

    /// A reply that streamed in and then completed shows exactly (text and
    /// styles) what rendering the finished reply from scratch shows, though
    /// only its head, tail and trailer were made again.
    #[test]
    fn a_completed_stream_keeps_its_settled_rows_and_equals_a_whole_render() {
        for sample in std::iter::once(SAMPLE).chain(FENCES) {
            for width in [30u16, 80] {
                // Streamed in steps of a few bytes, as tokens come, twice:
                // one reply is finished through `lines`, the other through
                // the fast path alone, to see that it was taken.
                let mut entry = Entry::new(message("", MessageStatus::Streaming));
                let mut twin = Entry::new(message("", MessageStatus::Streaming));
                let cuts: Vec<usize> = (1..=sample.len())
                    .filter(|i| sample.is_char_boundary(*i))
                    .step_by(7)
                    .chain(std::iter::once(sample.len()))
                    .collect();
                for end in cuts {
                    for e in [&mut entry, &mut twin] {
                        e.msg.content = sample[..end].to_string();
                        drop(e.lines(width));
                    }
                }
                for e in [&mut entry, &mut twin] {
                    e.msg.status = MessageStatus::Complete;
                    e.usage = Some("12 in · 34 out".into());
                }
                let (kept, kept_blocks) = twin
                    .finished_stream(width)
                    .unwrap_or_else(|| panic!("width {width}: the settled rows were kept"));
                let finished = entry.lines(width).to_vec();
                let mut fresh = Entry::new(entry.msg.clone());
                fresh.usage = entry.usage.clone();
                assert_eq!(
                    finished,
                    fresh.lines(width).to_vec(),
                    "width {width}: {sample:?}"
                );
                assert_eq!(kept, finished, "width {width}: {sample:?}");
                assert_eq!(
                    entry.code_blocks(width),
                    fresh.code_blocks(width),
                    "width {width}"
                );
                assert_eq!(kept_blocks, fresh.code_blocks(width), "width {width}");
            }
        }
    }

    /// Replies whose code blocks stream in: languages highlighted and plain,
    /// lines long enough to wrap (↪), tabs, wide characters, CRLF line
    /// ends, lines that look like fences without closing one, a fence right
    /// after a paragraph, one in a list item, one never closed.
    const FENCES: [&str; 5] = [
        "Intro.\n\n```rust\nfn main() {\n\tlet s = \"日本語のテキスト\"; // a comment long enough to wrap at thirty columns and more\n    println!(\"{s}\");\n}\n``not a fence\n```\n\nAfter.\n",
        "Here:\r\n```python\r\ndef f(x):\r\n\treturn x + 1  # wide: 中文字符和 🙂 emoji\r\n\r\nprint(f(1))\r\n```\r\n\r\nDone.\r\n",
        "~~~\nplain text, no language, a line that goes on and on past the edge of a narrow view\n~~ two tildes\n  ~~~ indented close\n\nafter a blank line\n",
        "- item\n\n  ```bash\n  echo \"in a list\" | tr a-z A-Z\n  ```\n- next\n\n````klingon\nQapla' batlh\n```\nstill code\n````\nprose\n",
        "Never closed:\n\n```json\n{\"a\": [1, 2, 3],\n \"b\": \"a string long enough to wrap around the narrow view\"}\n\tend",
    ];

    /// An open code block's rows, made line by line as a reply streams in,
    /// are exactly (text and styles) those of rendering the reply at that
    /// length from scratch, and (text) those of the finished reply.
    #[test]
    fn open_code_blocks_render_line_by_line_as_a_whole_render_would() {
        for sample in FENCES {
            for width in [30u16, 80] {
                let mut entry = Entry::new(message("", MessageStatus::Streaming));
                let mut incremental = 0;
                for end in (1..=sample.len()).filter(|i| sample.is_char_boundary(*i)) {
                    entry.msg.content = sample[..end].to_string();
                    let streamed = entry.lines(width).to_vec();
                    incremental += usize::from(
                        entry
                            .stable
                            .borrow()
                            .as_ref()
                            .is_some_and(|s| s.fence.is_some()),
                    );
                    let fresh = Entry::new(entry.msg.clone());
                    assert_eq!(
                        streamed,
                        fresh.lines(width).to_vec(),
                        "width {width}, length {end}: {:?}",
                        &sample[..end]
                    );
                    assert_eq!(
                        entry.code_blocks(width),
                        render_markdown(&entry.msg.content, width - 2).code_blocks,
                        "width {width}, length {end}"
                    );
                    let mut whole = entry.msg.clone();
                    whole.status = MessageStatus::Complete;
                    let whole_lines =
                        text_of(&render_message(&Entry::new(whole), width, &mut None).0);
                    assert_eq!(
                        text_of(&streamed)[1..],
                        whole_lines[1..],
                        "width {width}, length {end}"
                    );
                }
                assert!(
                    incremental > 20,
                    "the open blocks were rendered line by line: {incremental}"
                );
            }
        }
    }

    /// However far a long conversation is scrolled through, the rendered
    /// rows stay within `ROW_CACHE_BYTES`, never losing those on screen,
    /// and a message whose rows were dropped renders as it did.
    #[test]
    fn rendered_rows_are_bounded_by_size_and_dropped_rows_render_the_same() {
        let para = "A paragraph of a reply, long enough to wrap a few times at eighty columns: \
                    **bold**, `code`, and [a link](https://example.com/a/path).\n\n";
        let entries: Vec<Entry> = (0..1500)
            .map(|i| {
                let mut m = message(
                    &format!("# Reply {i}\n\n{}", para.repeat(20)),
                    MessageStatus::Complete,
                );
                m.id = i;
                Entry::new(m)
            })
            .collect();
        let area = Rect::new(0, 0, 80, 30);
        let tail = Tail::new();
        let first_rows = text_of(&entries[0].lines(80));
        let mut dropped = false;
        for step in (0..).map(|n: usize| n * 200) {
            let scroll = Scroll {
                from_bottom: Some(step),
                ..Scroll::default()
            };
            let w = window(&entries, &tail, scroll, area);
            let shown: Vec<Line<'static>> = w.rows().cloned().collect();
            assert_eq!(shown.len(), 30);
            drop(w);
            assert!(
                row_cache_bytes() <= ROW_CACHE_BYTES,
                "scrolled {step}: {} bytes",
                row_cache_bytes()
            );
            let counted: usize = entries
                .iter()
                .filter_map(|e| e.cache.borrow().as_ref().map(|c| c.bytes))
                .sum();
            assert_eq!(counted, row_cache_bytes(), "scrolled {step}");
            dropped |= entries.iter().any(|e| e.dropped());
            // What the window showed is what it shows again (its rows were kept).
            let again = window(&entries, &tail, scroll, area);
            assert_eq!(again.rows().cloned().collect::<Vec<_>>(), shown);
            if again.from_bottom < step {
                break;
            }
        }
        assert!(dropped, "rows were dropped on the way");
        assert_eq!(text_of(&entries[0].lines(80)), first_rows);
        // A message out of sight whose rows were dropped renders as a fresh one.
        let gone = entries
            .iter()
            .rposition(Entry::dropped)
            .expect("rows out of sight were dropped");
        let mut fresh = entries[gone].msg.clone();
        fresh.id = -1;
        assert_eq!(
            entries[gone].lines(80).to_vec(),
            Entry::new(fresh).lines(80).to_vec()
        );
    }

    #[test]
    fn a_reply_settles_at_block_boundaries_that_later_text_cannot_change() {
        use crate::tui::markdown::settled_until;
        assert_eq!(settled_until("one\n\ntwo\n"), 5);
        assert_eq!(
            settled_until("one\n\ntwo"),
            0,
            "the next block's first line is not complete"
        );
        assert_eq!(settled_until("```\na\n\nb\n"), 0, "inside an open fence");
        assert_eq!(
            settled_until("- a\n\n- b\n"),
            0,
            "one list, which may turn loose"
        );
        assert_eq!(
            settled_until("1. a\n\n2"),
            0,
            "\"2\" may still become \"2. \""
        );
        assert_eq!(
            settled_until("- a\n\n  more of a\n"),
            0,
            "indented into the item"
        );
        assert_eq!(settled_until("para\n\n1. x\n"), 6);
        // A closed fence settles at once; one still open, or closed by a
        // line that may yet become something else, does not.
        assert_eq!(settled_until("```\na\n```\n"), 10);
        assert_eq!(settled_until("t\n\n~~~~ rust\na\n~~~~~\nmore"), 21);
        assert_eq!(
            settled_until("```\na\n```"),
            0,
            "\"```\" may become \"```x\""
        );
        assert_eq!(
            settled_until("```\na\n    ```\n"),
            0,
            "indented into the code"
        );
        assert_eq!(
            settled_until("````\na\n```\n"),
            0,
            "shorter than the opening"
        );
        assert_eq!(settled_until("```\n```x\n"), 0, "not a closing fence");
        assert_eq!(
            settled_until("    ```\n    a\n    ```\n"),
            0,
            "indented code, not a fence"
        );
        assert_eq!(
            settled_until("- a\n  ```\n  b\n  ```\n"),
            0,
            "inside a list item"
        );
        // Paragraphs that begin with a space, as streamed tokens often do.
        assert_eq!(settled_until(" one two\n\n three\n"), 11);
        assert_eq!(settled_until("- a\n- b\n\n after\n"), 10);
        assert_eq!(settled_until("# T\n\npara\n\n"), 5);
        let s = settled_until(SAMPLE);
        // The last block (a paragraph) follows the ordered list.
        assert!(SAMPLE[s..].starts_with("The end."), "{:?}", &SAMPLE[s..]);
    }
}
