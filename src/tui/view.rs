//! Drawing: reads the app (never changes it) and returns the layout it used
//! — sidebar rows for clicks, the chat area, the scroll offset it could
//! honour — which the event loop hands back to the app.

use crate::tui::theme::palette;
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::app::{App, Focus, FrameLayout};
use super::chat::{self, Tail};
use super::views::{RenderCx, ViewKind};
use crate::engine::DispatchState;
use crate::sanitize::sanitize_line;
use crate::store::Status;

pub const SIDEBAR_WIDTH: u16 = 28;

fn dim() -> Style {
    Style::new().fg(palette().dim)
}

/// Untrusted text as one trimmed line, cut to `max` cells.
fn elide(s: &str, max: usize) -> String {
    super::text::elide(sanitize_line(s).trim(), max)
}

pub fn draw(f: &mut Frame, app: &App) -> FrameLayout {
    let area = f.area();
    let mut layout = FrameLayout::default();
    let now_ms = app.model.now_ms();
    let mut rcx = RenderCx {
        model: &app.model,
        keys: &app.keys,
        now: app.model.now(),
        now_ms,
        enhanced_keys: app.enhanced_keys,
        chat: Rect::default(),
    };
    let [main, status] = Layout::vertical([Constraint::Min(3), Constraint::Length(1)]).areas(area);
    layout.sidebar_visible = app.sidebar_shown(main.width);
    let (side, right) = if layout.sidebar_visible {
        let [s, r] = Layout::horizontal([Constraint::Length(SIDEBAR_WIDTH), Constraint::Min(20)])
            .areas(main);
        (Some(s), r)
    } else {
        (None, main)
    };
    if let Some(s) = side {
        layout.sidebar_rows =
            app.sidebar
                .render(s, f.buffer_mut(), &rcx, app.focus == Focus::Sidebar);
    }
    // The composer grows with its text up to a third of the screen; the
    // strip takes at most a third; the chat keeps the rest (at least 6 rows
    // at 60×15).
    let third = (main.height / 3).max(3);
    let composer_h = app.composer.height(right.width, third);
    let strip_max = (main.height / 3) as usize;
    let (strip, strip_items) =
        app.strip
            .lines(&rcx, right.width, strip_max, app.focus == Focus::Strip);
    let strip_h = strip.len() as u16;
    let [chat_area, strip_area, composer_area] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(strip_h),
        Constraint::Length(composer_h),
    ])
    .areas(right);
    rcx.chat = chat_area;
    // The conversation is laid out at most `max_width` columns wide.
    let text_area = Rect {
        width: chat_area.width.min(app.max_width.max(20)),
        ..chat_area
    };
    layout.chat = text_area;
    layout.scroll_used = draw_chat(f.buffer_mut(), app, text_area);
    layout.strip_rows = strip_items
        .into_iter()
        .map(|(line, id)| (strip_area.y + line as u16, id))
        .collect();
    layout.strip_x = strip_area.x;
    if strip_h > 0 {
        app.strip.render(strip_area, f.buffer_mut(), strip);
    }
    draw_composer(f, app, composer_area);
    draw_status(f, app, status);
    for v in &app.views {
        v.render(area, f.buffer_mut(), &rcx);
    }
    layout
}

/// The conversation, into `buf` over `area`; also all a frame that only
/// shows streamed text redraws (`frames`). Returns the scroll offset it
/// could honour.
pub fn draw_chat(buf: &mut Buffer, app: &App, area: Rect) -> usize {
    let tail = chat_tail(app, area);
    let used = chat::draw(&app.model.entries, &tail, app.scroll, area, buf);
    draw_chat_overlays(buf, app, area, &tail);
    used
}

/// What the chat shows after the history: the bubbles of messages being
/// sent, and room for the approval card.
pub fn chat_tail(app: &App, area: Rect) -> Tail {
    let model = &app.model;
    let mut tail: Tail = Vec::new();
    // Items being sent show as the user's bubble at the end of the history.
    for it in model.items.iter().filter(|i| i.status == Status::Sending) {
        tail.push(Line::from(vec![
            Span::styled("▌ ", Style::new().fg(palette().info)),
            Span::styled(
                "You",
                Style::new().fg(palette().info).add_modifier(Modifier::BOLD),
            ),
            Span::styled("  ◌ sending…", Style::new().fg(palette().warning)),
        ]));
        for l in it.user_text().unwrap_or_default().lines() {
            tail.push(Line::from(format!(
                "  {}",
                elide(l, area.width.saturating_sub(2) as usize)
            )));
        }
        tail.push(Line::default());
    }
    // Room at the foot for the approval card (at most 8 rows), drawn over it.
    if app.views.iter().any(|v| v.kind() == ViewKind::Approval) {
        for _ in 0..8 {
            tail.push(Line::default());
        }
    }
    tail
}

/// Whether `draw_chat_overlays` draws anything over the chat's rows.
pub fn chat_has_overlays(app: &App, tail: &Tail) -> bool {
    shows_new_conversation_hint(app, tail) || scrolled_up(app)
}

fn shows_new_conversation_hint(app: &App, tail: &Tail) -> bool {
    app.model.entries.is_empty() && tail.is_empty()
}

fn scrolled_up(app: &App) -> bool {
    app.scroll.from_bottom.is_some_and(|n| n > 0)
}

/// What is drawn over the chat's rows: the new-conversation hint, or the
/// "scrolled up" label.
pub fn draw_chat_overlays(buf: &mut Buffer, app: &App, area: Rect, tail: &Tail) {
    let model = &app.model;
    if shows_new_conversation_hint(app, tail) {
        let hint = vec![
            Line::styled(
                "New conversation.",
                Style::new().add_modifier(Modifier::BOLD),
            ),
            Line::default(),
            Line::styled(
                "Type a message and press Enter. Keep typing while the model answers: messages queue.",
                dim(),
            ),
            Line::styled(
                "/later 10m TEXT or /at 9am TEXT sends later · Ctrl+T picks a time · F2 lists everything scheduled",
                dim(),
            ),
            Line::styled("F1 shows every key.", dim()),
        ];
        let r = Rect {
            y: area.y + area.height / 3,
            height: area.height.saturating_sub(area.height / 3),
            ..area
        };
        Paragraph::new(hint)
            .wrap(Wrap { trim: true })
            .render(r, buf);
    }
    // Scrolled up: say so, and how to get back.
    if scrolled_up(app) {
        let label = if model.is_busy() {
            " ↓ new text below — End to jump to latest "
        } else {
            " ↓ End: jump to latest "
        };
        let w = label.chars().count() as u16;
        let r = Rect {
            x: area.x + area.width.saturating_sub(w + 1),
            y: area.y + area.height.saturating_sub(1),
            width: w.min(area.width),
            height: 1,
        };
        Paragraph::new(Span::styled(
            label,
            Style::new()
                .fg(palette().on(palette().highlight))
                .bg(palette().highlight),
        ))
        .render(r, buf);
    }
}

fn draw_composer(f: &mut Frame, app: &App, area: Rect) {
    let inactive = app.top() == Some(ViewKind::Approval);
    let focused = app.focus == Focus::Composer && app.views.iter().all(|v| !v.is_modal());
    let mut title: Vec<Span<'static>> = Vec::new();
    match app.composer_preview() {
        Some(Ok(s)) => title.push(Span::styled(
            format!(" ⏰ {s} "),
            Style::new().fg(palette().accent),
        )),
        Some(Err(e)) => title.push(Span::styled(
            format!(" ✗ {} ", elide(&e, area.width.saturating_sub(6) as usize)),
            Style::new().fg(palette().error),
        )),
        None => {
            if inactive {
                title.push(Span::styled(
                    " a tool call waits for your answer above ",
                    Style::new().fg(palette().warning),
                ));
            } else if app.model.is_busy() {
                title.push(Span::styled(
                    " answering… Enter queues · Esc stops ",
                    Style::new().fg(palette().warning),
                ));
            } else if app.model.paused() {
                title.push(Span::styled(
                    " queue paused · Enter sends and resumes ",
                    Style::new().fg(palette().warning),
                ));
            }
        }
    }
    app.composer
        .render(area, f.buffer_mut(), title, focused, inactive);
}

fn draw_status(f: &mut Frame, app: &App, area: Rect) {
    let model = &app.model;
    let (name, provider) = model.model_label();
    let mut spans = vec![Span::styled(
        format!(" {} ", sanitize_line(&name)),
        Style::new()
            .fg(palette().on(palette().accent))
            .bg(palette().accent),
    )];
    if provider == "echo" {
        spans.push(Span::styled(
            " offline ",
            Style::new()
                .fg(palette().on(palette().highlight))
                .bg(palette().highlight),
        ));
    } else {
        spans.push(Span::styled(
            format!(" {} ", sanitize_line(&provider)),
            dim(),
        ));
    }
    if let Some(role) = model.current_conv().and_then(|c| c.role.as_deref()) {
        spans.push(Span::styled(format!(" role: {} ", elide(role, 16)), dim()));
    }
    let dispatch = app.engine().dispatch_state();
    let (dstate, dstyle) = match &dispatch {
        DispatchState::Dispatching => (String::new(), dim()),
        DispatchState::Starting => ("starting".to_string(), dim()),
        DispatchState::Standby { pid } => (
            format!("another tock (pid {pid}) is dispatching"),
            Style::new().fg(palette().warning),
        ),
        DispatchState::Disabled => (
            "outbox off (config): nothing is sent".to_string(),
            Style::new().fg(palette().error),
        ),
        DispatchState::Error(e) => (
            format!("database: {}", elide(e, 40)),
            Style::new().fg(palette().error),
        ),
    };
    if !dstate.is_empty() {
        spans.push(Span::styled(format!(" {dstate} "), dstyle));
    }
    // Counts by the one item state, the same the strip and F2 show.
    let c = model.state_counts();
    let (queued, retrying, scheduled, failed, waiting) =
        (c.queued, c.retrying, c.scheduled, c.failed, c.waiting);
    let approvals = model.awaiting.len();
    let counts = [
        (
            approvals,
            format!(" ?{approvals} to approve "),
            palette().warning,
        ),
        (
            retrying,
            format!(" ↻{retrying} retrying "),
            palette().warning,
        ),
        (queued, format!(" ⏳{queued} queued "), palette().info),
        (waiting, format!(" ⏸{waiting} paused "), palette().warning),
        (
            scheduled,
            format!(" ⏰{scheduled} scheduled "),
            palette().accent,
        ),
        (
            model.active_series as usize,
            format!(" ↻{} recurring ", model.active_series),
            palette().accent,
        ),
        (
            failed,
            format!(" ✗{failed} need attention (F2) "),
            palette().error,
        ),
    ];
    for (n, text, color) in counts {
        if n > 0 {
            spans.push(Span::styled(text, Style::new().fg(color)));
        }
    }
    if let Some(u) = model.usage_summary() {
        spans.push(Span::styled(format!(" {u} "), dim()));
    }
    if let Some(st) = &app.status {
        spans.push(Span::styled(" │ ", dim()));
        spans.push(Span::styled(
            sanitize_line(&st.text).into_owned(),
            if st.error {
                Style::new().fg(palette().error)
            } else {
                Style::new()
            },
        ));
    }
    let left = Line::from(spans);
    let help = Span::styled(" F1 help · F2 scheduled ", dim());
    // The key hint gives way when the status needs the room (a message must not be cut off).
    if left.width() + help.width() > area.width as usize {
        f.render_widget(Paragraph::new(left), area);
        return;
    }
    let [l, r] = Layout::horizontal([Constraint::Min(10), Constraint::Length(help.width() as u16)])
        .areas(area);
    f.render_widget(Paragraph::new(left), l);
    f.render_widget(Paragraph::new(help), r);
}
