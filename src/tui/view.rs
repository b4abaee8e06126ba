//! Drawing: a pure function of the app state (plus the clock for relative times).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Wrap};

use super::app::{App, Focus, Overlay, PromptKind};
use super::chat::{self, Tail, boxed};
use super::keymap::{self, BINDINGS, COMMANDS, Ctx};
use crate::engine::DispatchState;
use crate::sanitize::sanitize_line;
use crate::store::{Kind, OutboxItem, Status};
use crate::when;

const SIDEBAR_WIDTH: u16 = 28;

fn dim() -> Style {
    Style::new().fg(Color::DarkGray)
}

/// Untrusted text as one trimmed line, cut to `max` cells.
fn elide(s: &str, max: usize) -> String {
    super::text::elide(sanitize_line(s).trim(), max)
}

pub fn draw(f: &mut Frame, app: &mut App) {
    let area = f.area();
    let [main, status] = Layout::vertical([Constraint::Min(3), Constraint::Length(1)]).areas(area);
    let sidebar_on = app.show_sidebar && main.width >= 60;
    let (side, right) = if sidebar_on {
        let [s, r] = Layout::horizontal([Constraint::Length(SIDEBAR_WIDTH), Constraint::Min(20)])
            .areas(main);
        (Some(s), r)
    } else {
        (None, main)
    };
    if let Some(s) = side {
        draw_sidebar(f, app, s);
    } else {
        app.sidebar_rows.clear();
    }

    let (strip_head, strip_rows) = strip_lines(app, right.width);
    // At most 7 rows, the header always shown, the selected item kept in view.
    let strip_room = 7usize.saturating_sub(strip_head.len()).max(1);
    let strip_h = if strip_rows.is_empty() {
        0
    } else {
        (strip_head.len() + strip_rows.len().min(strip_room)) as u16
    };
    let composer_rows = (app.composer.lines().len() as u16).clamp(1, 8);
    let composer_h = composer_rows + 2;
    let [chat_area, strip_area, composer_area] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(strip_h),
        Constraint::Length(composer_h),
    ])
    .areas(right);

    draw_chat(f, app, chat_area);
    if strip_h > 0 {
        let first = if app.focus == Focus::Strip {
            (app.strip_sel + 1).saturating_sub(strip_room)
        } else {
            0
        };
        let mut visible = strip_head;
        visible.extend(strip_rows.into_iter().skip(first).take(strip_room));
        f.render_widget(Paragraph::new(visible), strip_area);
    }
    draw_composer(f, app, composer_area);
    draw_status(f, app, status);

    let now = app.now();
    match &app.overlay {
        None => {}
        Some(Overlay::Help) => draw_help(f, area, &mut app.help_scroll),
        Some(Overlay::Notices) => {
            let mut lines: Vec<Line> = app
                .notices
                .iter()
                .rev()
                .take(area.height.saturating_sub(4) as usize)
                .map(|n| Line::from(sanitize_line(n).into_owned()))
                .collect();
            if lines.is_empty() {
                lines.push(Line::styled("No notifications yet.", dim()));
            }
            let r = centered(
                area,
                area.width.saturating_sub(6).min(100),
                lines.len() as u16 + 2,
            );
            f.render_widget(Clear, r);
            f.render_widget(
                Paragraph::new(lines).block(
                    Block::bordered()
                        .border_type(BorderType::Rounded)
                        .title(" Notifications, newest first (any key closes) ")
                        .border_style(Style::new().fg(Color::Cyan)),
                ),
                r,
            );
        }
        Some(Overlay::Scheduled(p)) => {
            f.render_widget(Clear, area);
            p.render(area, f.buffer_mut(), now);
        }
        Some(Overlay::Picker(p)) => p.render(area, f.buffer_mut(), now),
        Some(Overlay::Confirm(_, text)) => {
            // As tall as the wrapped question needs: its "y / n" must never be cut off.
            let text = sanitize_line(text).into_owned();
            let w = (unicode_width::UnicodeWidthStr::width(text.as_str()) as u16 + 6)
                .min(area.width.saturating_sub(2));
            let rows: Vec<Line> = chat::wrap_words(&text, w.saturating_sub(4).max(1) as usize)
                .into_iter()
                .map(Line::from)
                .collect();
            let r = centered(area, w, rows.len() as u16 + 2);
            f.render_widget(Clear, r);
            f.render_widget(
                Paragraph::new(rows).block(
                    Block::bordered()
                        .border_type(BorderType::Rounded)
                        .border_style(Style::new().fg(Color::Yellow))
                        .padding(ratatui::widgets::Padding::horizontal(1)),
                ),
                r,
            );
        }
        Some(Overlay::Prompt(p)) => {
            let multiline = matches!(p.kind, PromptKind::EditItem(_));
            let h = if multiline { 10 } else { 3 };
            let extra = u16::from(p.error.is_some() || matches!(p.kind, PromptKind::Reschedule(_)));
            let r = centered(area, area.width.saturating_sub(8).min(72), h + extra);
            f.render_widget(Clear, r);
            let [input_r, note_r] =
                Layout::vertical([Constraint::Length(h), Constraint::Length(extra)]).areas(r);
            let mut input = p.input.clone();
            input.set_block(
                Block::bordered()
                    .border_type(BorderType::Rounded)
                    .title(p.title.clone()),
            );
            f.render_widget(&input, input_r);
            let note = match (&p.error, app.prompt_preview(p)) {
                (Some(e), _) => Some(Line::styled(format!(" ✗ {e}"), Style::new().fg(Color::Red))),
                (None, Some(Ok(s))) => Some(Line::styled(
                    format!(" ⏰ {s}"),
                    Style::new().fg(Color::Cyan),
                )),
                (None, Some(Err(e))) => {
                    Some(Line::styled(format!(" ✗ {e}"), Style::new().fg(Color::Red)))
                }
                (None, None) => None,
            };
            if let Some(n) = note {
                f.render_widget(Clear, note_r);
                f.render_widget(Paragraph::new(n), note_r);
            }
        }
    }
}

fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

fn draw_sidebar(f: &mut Frame, app: &mut App, area: Rect) {
    let focused = app.focus == Focus::Sidebar;
    let title = if app.search.is_empty() {
        " Conversations ".to_string()
    } else {
        format!(" /{} ", elide(&app.search, 16))
    };
    let block = Block::new()
        .borders(Borders::RIGHT)
        .border_style(if focused {
            Style::new().fg(Color::Cyan)
        } else {
            dim()
        })
        .title(Span::styled(
            title,
            if focused {
                Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD)
            } else {
                dim()
            },
        ));
    let inner = block.inner(area);
    f.render_widget(block, area);
    let now = app.engine.now_ms();
    let convs: Vec<(i64, String, i64)> = app
        .visible_convs()
        .iter()
        .map(|c| (c.id, c.display_title(), c.updated_at))
        .collect();
    let per = 2usize;
    let rows = (inner.height as usize / per).max(1);
    let first = app.sidebar_sel.saturating_sub(rows.saturating_sub(1));
    let mut lines = Vec::new();
    app.sidebar_rows.clear();
    for (i, (id, title, updated)) in convs.iter().enumerate().skip(first).take(rows) {
        let current = Some(*id) == app.current;
        let selected = focused && i == app.sidebar_sel;
        let busy = app.engine.is_busy(*id);
        let pending = app
            .all_items
            .iter()
            .filter(|it| it.conversation_id == Some(*id))
            .count();
        let mut style = if current {
            Style::new().fg(Color::White).add_modifier(Modifier::BOLD)
        } else {
            Style::new().fg(Color::Gray)
        };
        if selected {
            style = style.bg(Color::DarkGray);
        }
        let marker = if busy {
            "● "
        } else if current {
            "▸ "
        } else {
            "  "
        };
        let w = inner.width as usize;
        let y = inner.y + ((i - first) * per) as u16;
        app.sidebar_rows.push((y, *id));
        app.sidebar_rows.push((y + 1, *id));
        lines.push(Line::from(vec![
            Span::styled(marker, Style::new().fg(Color::Yellow)),
            Span::styled(elide(title, w.saturating_sub(3)), style),
        ]));
        let mut meta = when::relative(*updated, now).replace("in ", "");
        if pending > 0 {
            meta.push_str(&format!(" · {pending} pending"));
        }
        // Indented under the title (elide() trims, so the indent is added after).
        lines.push(Line::styled(
            format!("  {}", elide(&meta, w.saturating_sub(2))),
            dim(),
        ));
    }
    if convs.is_empty() {
        lines.push(Line::styled(" no match", dim()));
    }
    f.render_widget(Paragraph::new(lines), inner);
}

fn draw_chat(f: &mut Frame, app: &mut App, area: Rect) {
    app.chat_height = area.height;
    app.chat_width = area.width;
    let now = app.engine.now_ms();
    let now_local = app.now();
    app.refresh_cards(now);
    let mut tail: Tail = Vec::new();
    // Items being sent show as the user's bubble at the end of the history.
    for it in app.items.iter().filter(|i| i.status == Status::Sending) {
        tail.push(Line::from(vec![
            Span::styled("▌ ", Style::new().fg(Color::Blue)),
            Span::styled(
                "You",
                Style::new().fg(Color::Blue).add_modifier(Modifier::BOLD),
            ),
            Span::styled("  ◌ sending…", Style::new().fg(Color::Yellow)),
        ]));
        for l in sanitize_line(&it.user_text().unwrap_or_default())
            .chars()
            .collect::<Vec<_>>()
            .chunks(area.width.saturating_sub(2).max(1) as usize)
        {
            tail.push(Line::from(format!("  {}", l.iter().collect::<String>())));
        }
        tail.push(Line::default());
    }
    if let Some(a) = app.waiting_approval() {
        let s: serde_json::Value = serde_json::from_str(&a.summary).unwrap_or_default();
        let mut body = Vec::new();
        let title = match a.tool.as_str() {
            "schedule_task" => {
                let t = s["title"].as_str().unwrap_or("task");
                body.push(Line::from(
                    sanitize_line(s["instruction"].as_str().unwrap_or("")).into_owned(),
                ));
                if let Some(due) = s["due_at"].as_i64() {
                    let due = chrono::DateTime::from_timestamp_millis(due).unwrap_or_default();
                    body.push(Line::styled(
                        format!("fires {}", when::preview(due, &now_local)),
                        Style::new().fg(Color::Cyan),
                    ));
                }
                format!("Schedule “{}”?", elide(t, 40))
            }
            "cancel_scheduled" => {
                body.push(Line::from(format!(
                    "cancel task #{}: {}",
                    s["job_id"],
                    elide(s["text"].as_str().unwrap_or(""), 50)
                )));
                "Cancel a scheduled task?".to_string()
            }
            other => format!("Allow {other}?"),
        };
        body.push(Line::from(vec![
            Span::styled(
                "y",
                Style::new().fg(Color::Green).add_modifier(Modifier::BOLD),
            ),
            Span::raw(" approve · "),
            Span::styled(
                "n",
                Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
            ),
            Span::raw(" deny"),
        ]));
        tail.extend(boxed(
            &title,
            Some(("needs approval", Style::new().fg(Color::Yellow))),
            body,
            area.width,
            Color::Yellow,
        ));
    }
    let used = chat::draw(&mut app.entries, &tail, app.scroll, area, f.buffer_mut());
    // Keep the offset where the top of the history stopped it, so scrolling back down responds at once.
    if app.scroll.from_bottom.is_some() {
        app.scroll.from_bottom = (used > 0).then_some(used);
    }
    if app.entries.is_empty() && tail.is_empty() {
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
        f.render_widget(Paragraph::new(hint).wrap(Wrap { trim: true }), r);
    }
    // Scrolled up: say so, and how to get back.
    if let Some(n) = app.scroll.from_bottom
        && n > 0
    {
        let streaming = app.is_busy();
        let label = if streaming {
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
        f.render_widget(
            Paragraph::new(Span::styled(
                label,
                Style::new().fg(Color::Black).bg(Color::Yellow),
            )),
            r,
        );
    }
}

/// The pending strip of the current conversation: header rows (its title and,
/// when focused, its keys, on as many rows as the width needs) and one row per item.
fn strip_lines(app: &App, width: u16) -> (Vec<Line<'static>>, Vec<Line<'static>>) {
    let items = app.strip_items();
    if items.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let now = app.engine.now_ms();
    let now_local = app.now();
    let focused = app.focus == Focus::Strip;
    let title = Span::styled(
        format!("─ pending ({}) ", items.len()),
        if focused {
            Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD)
        } else {
            dim()
        },
    );
    let keys: &[&str] = if focused {
        &[
            "e edit",
            "x cancel",
            "s send now",
            "u back to composer",
            "r reschedule",
            "R retry",
            "Esc back",
        ]
    } else {
        &["Tab to manage"]
    };
    // Pack the key hints into rows (each hint whole), after the title first.
    let w = width as usize;
    let mut head: Vec<Vec<Span<'static>>> = vec![vec![title]];
    let mut room = w.saturating_sub(head[0][0].width());
    let mut row = String::new();
    for k in keys {
        let kw = unicode_width::UnicodeWidthStr::width(*k);
        let need = if row.is_empty() {
            kw
        } else {
            unicode_width::UnicodeWidthStr::width(row.as_str()) + 3 + kw
        };
        if need > room {
            if !focused {
                // Unfocused, the hint is optional.
                break;
            }
            if !row.is_empty() || head.len() == 1 {
                if !row.is_empty() {
                    let done = std::mem::take(&mut row);
                    if let Some(last) = head.last_mut() {
                        last.push(Span::styled(done, dim()));
                    }
                }
                head.push(vec![Span::raw("  ")]);
                room = w.saturating_sub(2);
            }
        }
        if !row.is_empty() {
            row.push_str(" · ");
        }
        row.push_str(k);
    }
    if !row.is_empty()
        && let Some(last) = head.last_mut()
    {
        last.push(Span::styled(row, dim()));
    }
    let head: Vec<Line<'static>> = head.into_iter().map(Line::from).collect();
    let mut lines = Vec::new();
    for (i, it) in items.iter().enumerate() {
        let (badge, style) = item_state(it, now, &now_local);
        let sel = focused && i == app.strip_sel;
        let marker = if sel { "› " } else { "  " };
        // Display columns, not bytes or chars: "›" is 3 bytes and "⏰"/"⏳" are 2 columns wide.
        let used = unicode_width::UnicodeWidthStr::width(marker)
            + unicode_width::UnicodeWidthStr::width(badge.as_str())
            + 3;
        let text = elide(&it.text, (width as usize).saturating_sub(used).max(8));
        let mut text_style = Style::new();
        if sel {
            text_style = text_style.add_modifier(Modifier::REVERSED);
        }
        lines.push(Line::from(vec![
            Span::styled(marker, Style::new().fg(Color::Cyan)),
            Span::styled(badge, style),
            Span::raw(" · "),
            Span::styled(text, text_style),
        ]));
    }
    (head, lines)
}

/// The state badge of an item: queued / sending / retrying in Ns: reason / failed: reason / ⏰ time.
pub fn item_state(
    it: &OutboxItem,
    now: i64,
    now_local: &chrono::DateTime<chrono::FixedOffset>,
) -> (String, Style) {
    match it.status {
        Status::Sending => ("◌ sending".into(), Style::new().fg(Color::Yellow)),
        Status::Failed => (
            format!(
                "✗ failed: {}",
                elide(it.last_error.as_deref().unwrap_or("?"), 40)
            ),
            Style::new().fg(Color::Red),
        ),
        Status::Expired => ("⌛ expired".into(), Style::new().fg(Color::Magenta)),
        Status::Pending => {
            if let Some(t) = it.next_attempt_at.filter(|t| *t > now) {
                let secs = ((t - now) + 999) / 1000;
                let why = elide(it.last_error.as_deref().unwrap_or(""), 30);
                (
                    format!("↻ retrying in {secs}s: {why}"),
                    Style::new().fg(Color::Yellow),
                )
            } else if let Some(d) = it.due_at.filter(|d| *d > now) {
                let due = chrono::DateTime::from_timestamp_millis(d).unwrap_or_default();
                let kind = if it.kind == Kind::Task { "task " } else { "" };
                (
                    format!(
                        "⏰ {kind}{} ({})",
                        when::absolute(due, now_local),
                        when::relative(d, now)
                    ),
                    Style::new().fg(Color::Cyan),
                )
            } else {
                ("⏳ queued".into(), Style::new().fg(Color::Blue))
            }
        }
        Status::Sent => ("✓ sent".into(), dim()),
        Status::Canceled => ("canceled".into(), dim()),
    }
}

fn draw_composer(f: &mut Frame, app: &mut App, area: Rect) {
    let focused = app.focus == Focus::Composer && app.overlay.is_none();
    let mut title: Vec<Span> = Vec::new();
    match app.composer_preview() {
        Some(Ok(s)) => title.push(Span::styled(
            format!(" ⏰ {s} "),
            Style::new().fg(Color::Cyan),
        )),
        Some(Err(e)) => title.push(Span::styled(
            format!(" ✗ {} ", elide(&e, area.width.saturating_sub(6) as usize)),
            Style::new().fg(Color::Red),
        )),
        None => {
            if app.is_busy() {
                title.push(Span::styled(
                    " answering… Enter queues · Esc stops ",
                    Style::new().fg(Color::Yellow),
                ));
            }
        }
    }
    if !app.attachments.is_empty() {
        title.push(Span::styled(
            format!(" 📎 {} ", app.attachments.len()),
            Style::new().fg(Color::Magenta),
        ));
    }
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(if focused {
            Style::new().fg(Color::Cyan)
        } else {
            dim()
        })
        .title(Line::from(title));
    app.composer.set_block(block);
    // The placeholder must not be cut mid-word (at 80 columns with the sidebar it was).
    let inner = area.width.saturating_sub(2) as usize;
    app.composer.set_placeholder_text(
        [
            "Message (Enter sends · Alt+Enter newline · /later 10m … · F1 help)",
            "Message (Enter sends · Alt+Enter newline)",
            "Message (Enter sends · F1 help)",
            "Message",
        ]
        .into_iter()
        .find(|p| unicode_width::UnicodeWidthStr::width(*p) <= inner)
        .unwrap_or(""),
    );
    app.composer.set_cursor_style(if focused {
        Style::new().add_modifier(Modifier::REVERSED)
    } else {
        Style::new()
    });
    f.render_widget(&app.composer, area);
}

fn draw_status(f: &mut Frame, app: &App, area: Rect) {
    let (model, provider) = app.model_label();
    let mut spans = vec![Span::styled(
        format!(" {} ", sanitize_line(&model)),
        Style::new().fg(Color::Black).bg(Color::Cyan),
    )];
    if provider == "echo" {
        spans.push(Span::styled(
            " offline ",
            Style::new().fg(Color::Black).bg(Color::Yellow),
        ));
    } else {
        spans.push(Span::styled(
            format!(" {} ", sanitize_line(&provider)),
            dim(),
        ));
    }
    let (dstate, dstyle) = match &app.engine.dispatch_state() {
        DispatchState::Dispatching => ("dispatching".to_string(), dim()),
        DispatchState::Starting => ("starting".to_string(), dim()),
        DispatchState::Standby { pid } => (
            format!("another tock (pid {pid}) is dispatching"),
            Style::new().fg(Color::Yellow),
        ),
        DispatchState::Disabled => (
            "outbox off (config): nothing is sent".to_string(),
            Style::new().fg(Color::Red),
        ),
        DispatchState::Error(e) => (
            format!("database: {}", elide(e, 40)),
            Style::new().fg(Color::Red),
        ),
    };
    spans.push(Span::styled(format!(" {dstate} "), dstyle));
    let now = app.engine.now_ms();
    let queued = app
        .all_items
        .iter()
        .filter(|i| {
            i.status == Status::Pending
                && i.due_at.is_none_or(|d| d <= now)
                && i.next_attempt_at.is_none_or(|t| t <= now)
        })
        .count();
    let retrying = app
        .all_items
        .iter()
        .filter(|i| i.status == Status::Pending && i.next_attempt_at.is_some_and(|t| t > now))
        .count();
    let scheduled = app
        .all_items
        .iter()
        .filter(|i| i.status == Status::Pending && i.due_at.is_some_and(|d| d > now))
        .count();
    let failed = app
        .all_items
        .iter()
        .filter(|i| matches!(i.status, Status::Failed | Status::Expired))
        .count();
    if retrying > 0 {
        spans.push(Span::styled(
            format!(" ↻{retrying} retrying "),
            Style::new().fg(Color::Yellow),
        ));
    }
    if queued > 0 {
        spans.push(Span::styled(
            format!(" ⏳{queued} queued "),
            Style::new().fg(Color::Blue),
        ));
    }
    if scheduled > 0 {
        spans.push(Span::styled(
            format!(" ⏰{scheduled} scheduled "),
            Style::new().fg(Color::Cyan),
        ));
    }
    if failed > 0 {
        spans.push(Span::styled(
            format!(" ✗{failed} need attention (F2) "),
            Style::new().fg(Color::Red),
        ));
    }
    if let Some((msg, is_err)) = &app.status {
        spans.push(Span::styled(" │ ", dim()));
        spans.push(Span::styled(
            sanitize_line(msg).into_owned(),
            if *is_err {
                Style::new().fg(Color::Red)
            } else {
                Style::new().fg(Color::Gray)
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

fn draw_help(f: &mut Frame, area: Rect, scroll: &mut u16) {
    // Key column, then the explanation word-wrapped beside it, so that every
    // line can be read at 80 columns; taller than the screen, it scrolls.
    const KEY_COL: usize = 28;
    let w = area.width.saturating_sub(4).min(100);
    let text_w = (w as usize).saturating_sub(2 + KEY_COL).max(12);
    let mut lines: Vec<Line> = Vec::new();
    let row = |lines: &mut Vec<Line>, keys: &str, help: &str| {
        for (i, part) in chat::wrap_words(help, text_w).into_iter().enumerate() {
            let k = if i == 0 {
                format!("  {keys:<26}")
            } else {
                " ".repeat(KEY_COL)
            };
            lines.push(Line::from(vec![
                Span::styled(k, Style::new().fg(Color::Yellow)),
                Span::raw(part),
            ]));
        }
    };
    for ctx in [
        Ctx::Global,
        Ctx::Composer,
        Ctx::Strip,
        Ctx::Sidebar,
        Ctx::Approval,
    ] {
        lines.push(Line::styled(
            keymap::context_name(ctx),
            Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
        ));
        for b in BINDINGS
            .iter()
            .filter(|b| b.ctx == ctx && !b.keys.is_empty())
        {
            row(&mut lines, b.keys, b.help);
        }
    }
    lines.push(Line::styled(
        "Commands",
        Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
    ));
    for (c, h) in COMMANDS {
        row(&mut lines, c, h);
    }
    let h = (lines.len() as u16 + 2).min(area.height);
    let max = (lines.len() as u16).saturating_sub(h.saturating_sub(2));
    *scroll = (*scroll).min(max);
    let r = centered(area, w, h);
    let mut block = Block::bordered()
        .border_type(BorderType::Rounded)
        .title(if max > 0 {
            " tock — keys (↑/↓ PgUp/PgDn scroll · other keys close) "
        } else {
            " tock — keys (any key closes) "
        })
        .border_style(Style::new().fg(Color::Cyan));
    if *scroll < max {
        block =
            block.title_bottom(Line::from(format!(" ↓ {} more ", max - *scroll)).right_aligned());
    }
    f.render_widget(Clear, r);
    f.render_widget(Paragraph::new(lines).scroll((*scroll, 0)).block(block), r);
}
