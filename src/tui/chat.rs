//! The conversation view: each message rendered once per width and cached;
//! only the streaming message is re-rendered as it grows; only visible rows
//! are copied into the frame.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::markdown::{CodeBlock, render_markdown};
use crate::sanitize::sanitize_line;
use crate::store::{Message, MessageStatus, Role};

/// One message with its rendered form.
pub struct Entry {
    pub msg: Message,
    /// For a `schedule_task` result: the live state of its task, set before each frame.
    pub card: Option<TaskCard>,
    cache: Option<Cached>,
}

/// What a task card shows; part of the cache key so state changes re-render it.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskCard {
    pub job_id: i64,
    pub title: String,
    pub instruction: String,
    /// "fires Tue 09:00 — in 3h" (recomputed each minute).
    pub when: String,
    pub state: String,
}

struct Cached {
    width: u16,
    card: Option<TaskCard>,
    content_len: usize,
    status: MessageStatus,
    lines: Vec<Line<'static>>,
    code_blocks: Vec<CodeBlock>,
}

impl Entry {
    pub fn new(msg: Message) -> Self {
        Self {
            msg,
            card: None,
            cache: None,
        }
    }

    /// Take over the old entry's cache when nothing that affects rendering changed.
    pub fn reuse(&mut self, old: Entry) {
        if old.msg.id == self.msg.id {
            self.cache = old.cache;
        }
    }

    fn fresh(&self, width: u16) -> bool {
        self.cache.as_ref().is_some_and(|c| {
            c.width == width
                && c.content_len == self.msg.content.len()
                && c.status == self.msg.status
                && c.card == self.card
        })
    }

    /// Rendered lines (header, body, blank separator) for `width`.
    pub fn lines(&mut self, width: u16) -> &[Line<'static>] {
        if !self.fresh(width) {
            let (lines, code_blocks) = match &self.card {
                Some(card) => (render_card(card, width), Vec::new()),
                None => render_message(&self.msg, width),
            };
            self.cache = Some(Cached {
                width,
                card: self.card.clone(),
                content_len: self.msg.content.len(),
                status: self.msg.status,
                lines,
                code_blocks,
            });
        }
        self.cache
            .as_ref()
            .map(|c| c.lines.as_slice())
            .unwrap_or(&[])
    }

    pub fn code_blocks(&mut self, width: u16) -> Vec<CodeBlock> {
        self.lines(width);
        self.cache
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

fn render_message(m: &Message, width: u16) -> (Vec<Line<'static>>, Vec<CodeBlock>) {
    let body_width = width.saturating_sub(2).max(1);
    let mut header: Vec<Span<'static>> = Vec::new();
    let (bar, name_style) = match m.role {
        Role::User => (
            Color::Blue,
            Style::new().fg(Color::Blue).add_modifier(Modifier::BOLD),
        ),
        Role::Assistant => (
            Color::Green,
            Style::new().fg(Color::Green).add_modifier(Modifier::BOLD),
        ),
        Role::Tool | Role::Notice => (Color::DarkGray, Style::new().fg(Color::DarkGray)),
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
        Style::new().fg(Color::DarkGray),
    ));
    if m.role == Role::User && m.content.starts_with("[Scheduled task]") {
        header.push(Span::styled(
            "  ⏰ fired by schedule",
            Style::new().fg(Color::Cyan),
        ));
    }
    // (symbol, reason, hint, style): the reason is shortened before the hint is lost.
    let state: Option<(&str, String, &str, Style)> = match m.status {
        MessageStatus::Streaming => {
            Some(("● ", "streaming".into(), "", Style::new().fg(Color::Yellow)))
        }
        MessageStatus::Interrupted => Some((
            "⚠ ",
            sanitize_line(m.error.as_deref().unwrap_or("interrupted")).into_owned(),
            " — Ctrl+R retries",
            Style::new().fg(Color::Yellow),
        )),
        MessageStatus::Error => Some((
            "✗ ",
            sanitize_line(m.error.as_deref().unwrap_or("error")).into_owned(),
            "",
            Style::new().fg(Color::Red),
        )),
        MessageStatus::Superseded => Some((
            "",
            "(replaced)".into(),
            "",
            Style::new().fg(Color::DarkGray),
        )),
        MessageStatus::Complete => None,
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
    let mut blocks = Vec::new();
    if m.role == Role::Tool {
        let summary = sanitize_line(&m.content)
            .chars()
            .take(body_width as usize)
            .collect::<String>();
        lines.push(Line::from(vec![
            Span::raw("  "),
            Span::styled(summary, Style::new().fg(Color::DarkGray)),
        ]));
    } else if m.content.is_empty() && m.status == MessageStatus::Streaming {
        lines.push(Line::from(Span::styled(
            "  …",
            Style::new().fg(Color::DarkGray),
        )));
    } else {
        let r = render_markdown(&m.content, body_width);
        let dim = matches!(m.status, MessageStatus::Superseded);
        for l in r.lines {
            let mut spans = vec![Span::raw("  ")];
            spans.extend(l.spans.into_iter().map(|s| {
                let st = s.style.fg(Color::DarkGray);
                if dim { s.style(st) } else { s }
            }));
            lines.push(Line::from(spans));
        }
        blocks = r.code_blocks;
    }
    lines.push(Line::default());
    (lines, blocks)
}

fn state_style(state: &str) -> Style {
    match state {
        "scheduled" => Style::new().fg(Color::Cyan),
        "fired" => Style::new().fg(Color::Green),
        "failed" => Style::new().fg(Color::Red),
        "expired" => Style::new().fg(Color::Magenta),
        _ => Style::new().fg(Color::DarkGray),
    }
}

/// A boxed card: a title row, body rows, a bottom rule. Used for task and approval cards.
pub fn boxed(
    title: &str,
    badge: Option<(&str, Style)>,
    body: Vec<Line<'static>>,
    width: u16,
    color: Color,
) -> Vec<Line<'static>> {
    let w = (width as usize).clamp(20, 72);
    let border = Style::new().fg(color);
    let mut top = vec![
        Span::styled("  ╭─ ", border),
        Span::styled(title.to_string(), border.add_modifier(Modifier::BOLD)),
    ];
    if let Some((b, st)) = badge {
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
        } else if w > 0 {
            rows.last_mut().unwrap().push(' ');
            w += 1;
        }
        for c in word.chars() {
            let cw = c.width().unwrap_or(0);
            if w + cw > width && w > 0 {
                rows.push(String::new());
                w = 0;
            }
            rows.last_mut().unwrap().push(c);
            w += cw;
        }
    }
    rows
}

fn clip(s: &str, max: usize) -> String {
    let s = sanitize_line(s);
    if s.chars().count() <= max {
        return s.into_owned();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

fn render_card(card: &TaskCard, width: u16) -> Vec<Line<'static>> {
    let inner = (width as usize).clamp(20, 72).saturating_sub(6);
    let body = vec![
        Line::from(Span::styled(clip(&card.instruction, inner), Style::new())),
        Line::from(Span::styled(
            clip(&card.when, inner),
            Style::new().fg(Color::DarkGray),
        )),
    ];
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
        Color::Cyan,
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
}

/// Draw the visible window of `entries` + `tail` into `area`, rendering only
/// the messages that reach into it (walking up from the newest). Returns the
/// scroll offset actually used (clamped at the top of the history).
pub fn draw(
    entries: &mut [Entry],
    tail: &Tail,
    scroll: Scroll,
    area: Rect,
    buf: &mut Buffer,
) -> usize {
    let width = area.width;
    let height = area.height as usize;
    let want = scroll.from_bottom.unwrap_or(0);
    // Walk up from the newest message until the window is covered, counting rows.
    let needed = want.saturating_add(height);
    let mut rows = tail.len();
    let mut first = entries.len();
    while first > 0 && rows < needed {
        first -= 1;
        rows += entries[first].lines(width).len();
    }
    // At the top of the history the offset cannot go further up.
    let from_bottom = want.min(rows.saturating_sub(height));
    // Copy only the rows in the window (scrolled to the top of a long
    // conversation, copying every row cost tens of ms a frame).
    let mut skip = from_bottom;
    let mut visible: Vec<Line<'static>> = Vec::with_capacity(height);
    let mut take = |lines: &[Line<'static>]| {
        let end = lines.len().saturating_sub(skip);
        skip -= lines.len() - end;
        let room = height - visible.len();
        visible.extend(lines[end.saturating_sub(room)..end].iter().rev().cloned());
        visible.len() >= height
    };
    if !take(tail) {
        for e in entries[first..].iter_mut().rev() {
            if take(e.lines(width)) {
                break;
            }
        }
    }
    visible.reverse();
    Paragraph::new(visible).render(area, buf);
    from_bottom
}
