//! Drawing: reads the app (never changes it) and returns the layout it used
//! — sidebar rows for clicks, the chat area, the scroll offset it could
//! honour — which the event loop hands back to the app.

use crate::tui::theme::palette;
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

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
        composer_empty: app.composer.holds_no_text(),
        composer_editing: app.composer.edit.is_some(),
        composer_command: app.composer.holds_command(),
    };
    let sidebar_visible = app.sidebar_shown(area.width);
    let status_lines = status_lines(app, area.width, sidebar_visible);
    let [main, status] = Layout::vertical([
        Constraint::Min(3),
        Constraint::Length(status_lines.len() as u16),
    ])
    .areas(area);
    layout.sidebar_visible = sidebar_visible;
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
    // Shown selected: marked in the focused strip, under no popup.
    layout.strip_marked = app
        .strip
        .selected
        .filter(|id| app.focus == Focus::Strip && layout.strip_rows.iter().any(|(_, i)| i == id))
        .filter(|_| app.views.iter().all(|v| !v.is_modal()));
    if strip_h > 0 {
        app.strip.render(strip_area, f.buffer_mut(), strip);
    }
    // What the composer's borders cannot hold goes on the rows just above
    // it, unless a card sits there (an approval's: it is drawn over them).
    let above_composer = Rect {
        height: if app.top() == Some(ViewKind::Approval) {
            0
        } else {
            composer_area.y.saturating_sub(right.y)
        },
        ..right
    };
    draw_composer(f, app, composer_area, above_composer);
    f.render_widget(Paragraph::new(status_lines), status);
    for v in &app.views {
        // F2 covers the screen but the status bar, which says what its
        // keys did (an action refused, with the reason).
        let over = if v.kind() == super::views::ViewKind::Scheduled {
            main
        } else {
            area
        };
        v.render(over, f.buffer_mut(), &rcx);
    }
    // Over an approval card too: it is shown only while the composer has
    // the keys (no view that takes them is open).
    let menu = command_menu(app);
    super::command_menu::draw(
        f.buffer_mut(),
        &menu,
        super::command_menu::picked(&menu, app.menu_pick),
        composer_area.x,
        composer_area.width,
        composer_area.y,
        // Half the rows above the composer (the chat stays in view), or
        // enough for a few commands.
        {
            let above = composer_area.y.saturating_sub(right.y);
            above.min((above / 2).max(6))
        },
    );
    layout
}

/// The slash commands listed above the composer: those the name being
/// typed there starts, while the composer has the keys.
pub fn command_menu(app: &App) -> Vec<&'static super::commands::Spec> {
    let typing = app.focus == Focus::Composer && app.views.iter().all(|v| !v.is_modal());
    match app.composer.single_line() {
        Some(line) if app.menu_closed_on.as_deref() == Some(line) => Vec::new(),
        Some(line) if typing => super::command_menu::matches(line),
        _ => Vec::new(),
    }
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
    // Items being sent show as the user's bubble at the end of the history,
    // with how long the model has kept them waiting once that is noticeable
    // (claimed for sending at `updated_at`).
    let now = model.now_ms();
    let width = area.width.saturating_sub(2) as usize;
    // A message the server never took (failed before it was accepted, or
    // expired) is not in the history: it shows here, where it would be,
    // with why and how to send it again (it is in the strip as well).
    for it in model
        .items
        .iter()
        .filter(|i| i.status.gave_up() && !i.accepted())
    {
        let Some(text) = it.user_text() else { continue };
        let (why, style) = match model.state_of(it, now) {
            crate::engine::ItemState::Failed { reason } => (
                format!("✗ not sent: {}", sanitize_line(&reason)),
                Style::new().fg(palette().error),
            ),
            _ => (
                "⌛ not sent: it expired".to_string(),
                Style::new().fg(palette().special),
            ),
        };
        tail.push(Line::from(vec![
            Span::styled("▌ ", style),
            Span::styled("You", style.add_modifier(Modifier::BOLD)),
            Span::raw("  "),
            Span::styled(elide(&why, width.saturating_sub(5)), style),
        ]));
        push_user_text(&mut tail, &text, width);
        let hint = format!(
            "in the pending strip ({}): {} sends it again, {} cancels it",
            app.keys
                .first(super::keymap::Scope::Main, super::keymap::Action::FocusNext),
            app.keys.label(
                super::keymap::Scope::Strip,
                super::keymap::Action::RetryItem
            ),
            app.keys.label(
                super::keymap::Scope::Strip,
                super::keymap::Action::CancelItem
            ),
        );
        tail.push(Line::styled(format!("  {}", elide(&hint, width)), dim()));
        tail.push(Line::default());
    }
    for it in model.items.iter().filter(|i| i.status == Status::Sending) {
        let sending = match super::views::waited(it.updated_at, now) {
            Some(w) => format!("  ◌ sending… {w}"),
            None => "  ◌ sending…".to_string(),
        };
        tail.push(Line::from(vec![
            Span::styled("▌ ", Style::new().fg(palette().info)),
            Span::styled(
                "You",
                Style::new().fg(palette().info).add_modifier(Modifier::BOLD),
            ),
            Span::styled(sending, Style::new().fg(palette().warning)),
        ]));
        push_user_text(&mut tail, &it.user_text().unwrap_or_default(), width);
        tail.push(Line::default());
    }
    // A regeneration (Ctrl+R) shows where its reply will be, in the state
    // it waits in (queued, retrying in 12s: why), until the reply starts.
    if let Some(r) = model.waiting_regeneration() {
        let lead = "new reply  ";
        let state = model.state_of(r, now);
        // The reason goes first where the whole line does not fit.
        let (mut badge, mut style) = super::views::strip::badge(&state, now, false);
        if unicode_width::UnicodeWidthStr::width(badge.as_str()) + lead.len() > width {
            (badge, style) = super::views::strip::badge(&state, now, true);
        }
        tail.push(Line::from(vec![
            Span::styled("▌ ", Style::new().fg(palette().success)),
            Span::styled(
                lead.trim_end().to_string(),
                Style::new()
                    .fg(palette().success)
                    .add_modifier(Modifier::BOLD),
            ),
            Span::raw("  "),
            Span::styled(
                super::text::elide(&badge, width.saturating_sub(lead.len())),
                style,
            ),
        ]));
        tail.push(Line::styled(
            format!(
                "  {}",
                elide("Esc calls it off and keeps the earlier reply", width)
            ),
            dim(),
        ));
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

/// A message of the user's not in the history yet, under its header in
/// the chat's tail: each line indented and cut to `width`.
fn push_user_text(tail: &mut Tail, text: &str, width: usize) {
    for l in text.lines() {
        tail.push(Line::from(format!("  {}", elide(l, width))));
    }
}

/// Whether `draw_chat_overlays` draws anything over the chat's rows.
pub fn chat_has_overlays(app: &App, tail: &Tail) -> bool {
    shows_new_conversation_hint(app, tail) || scrolled_up(app)
}

fn shows_new_conversation_hint(app: &App, tail: &Tail) -> bool {
    app.model.entries.is_empty() && tail.is_empty()
}

fn scrolled_up(app: &App) -> bool {
    // A jump to a message is scrolled up until its frame has measured it.
    app.scroll.from_bottom.is_some_and(|n| n > 0) || app.scroll.top_of.is_some()
}

/// What is drawn over the chat's rows: the new-conversation hint, or the
/// "scrolled up" label.
pub fn draw_chat_overlays(buf: &mut Buffer, app: &App, area: Rect, tail: &Tail) {
    let model = &app.model;
    if shows_new_conversation_hint(app, tail) {
        let bold = Style::new().add_modifier(Modifier::BOLD);
        // A conversation named already (by `tock send --new`, a series made
        // from the CLI) says which it is: the sidebar may be hidden.
        let conv = model.current_conv();
        let headline = match conv.and_then(|c| c.title.as_deref()) {
            Some(t) if !t.trim().is_empty() => {
                format!("“{}”: no messages yet.", crate::sanitize::sanitize_line(t))
            }
            _ => "New conversation.".to_string(),
        };
        // A time, not a countdown: nothing redraws this idle screen.
        let next = conv
            .and_then(|c| model.series_next_by_conv.get(&c.id).copied())
            .and_then(chrono::DateTime::from_timestamp_millis)
            .map(|d| crate::when::absolute(d, &super::model::local(model.now_ms())));
        let series = conv
            .and_then(|c| model.series_by_conv.get(&c.id).copied())
            .filter(|n| *n > 0)
            .map(|n| match (n, next) {
                (1, Some(at)) => {
                    format!("↻ A recurring series sends here, next {at} (F2 lists it).")
                }
                (n, Some(at)) => {
                    format!("↻ {n} recurring series send here, the next {at} (F2 lists them).")
                }
                (1, None) => {
                    "↻ A recurring series sends here: F2 shows when it goes next.".to_string()
                }
                (n, None) => {
                    format!("↻ {n} recurring series send here: F2 shows when each goes next.")
                }
            });
        let typing =
            "Type a message and press Enter. Keep typing while the model answers: messages queue.";
        let later = "/later 10m TEXT or /at 9am TEXT sends later · Ctrl+T picks a time · F2 lists everything scheduled";
        let keys = "F1 shows every key.";
        // The fullest hint whose rows the area holds (at 60×15 beside the
        // sidebar the last of them were cut off): then without its blank
        // row, then without the ways to send later.
        let mut top: Vec<(&str, Style)> = vec![(headline.as_str(), bold)];
        if let Some(series) = &series {
            top.push((series.as_str(), dim()));
        }
        let with = |rest: &[(&'static str, Style)]| -> Vec<(&str, Style)> {
            top.iter().copied().chain(rest.iter().copied()).collect()
        };
        let hints = [
            with(&[("", dim()), (typing, dim()), (later, dim()), (keys, dim())]),
            with(&[(typing, dim()), (later, dim()), (keys, dim())]),
            with(&[(typing, dim()), (keys, dim())]),
        ];
        let width = area.width.max(1) as usize;
        let rows_of = |hint: &[(&str, Style)]| -> Vec<Line<'static>> {
            hint.iter()
                .flat_map(|(text, style)| {
                    chat::wrap_words(text, width)
                        .into_iter()
                        .map(|row| Line::styled(row, *style))
                })
                .collect()
        };
        let height = area.height as usize;
        let rows = hints
            .iter()
            .map(|h| rows_of(h))
            .find(|rows| rows.len() <= height)
            .unwrap_or_else(|| rows_of(&hints[2]));
        // A third of the way down, or higher where that leaves too few rows.
        let top = (height / 3).min(height.saturating_sub(rows.len())) as u16;
        let r = Rect {
            y: area.y + top,
            height: area.height - top,
            ..area
        };
        Paragraph::new(rows).render(r, buf);
    }
    // Scrolled up: say so, and how to get back.
    if scrolled_up(app) {
        let label = if model.is_busy() {
            " ↓ new text below — End to jump to latest "
        } else {
            " ↓ End: jump to latest "
        };
        let w = label.chars().count() as u16;
        let y = area.y + area.height.saturating_sub(1);
        // The whole row: the label over part of a line of text left
        // fragments of it on both sides.
        ratatui::widgets::Clear.render(
            Rect {
                y,
                height: 1,
                ..area
            },
            buf,
        );
        let r = Rect {
            x: area.x + area.width.saturating_sub(w + 1),
            y,
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

fn draw_composer(f: &mut Frame, app: &App, area: Rect, above: Rect) {
    let inactive = app.top() == Some(ViewKind::Approval);
    let focused = app.focus == Focus::Composer && app.views.iter().all(|v| !v.is_modal());
    let mut title: Vec<Span<'static>> = Vec::new();
    let mut below: Vec<Span<'static>> = Vec::new();
    match app.composer_preview() {
        Some(Ok(p)) => title.push(Span::styled(
            format!(" ⏰ {} ", p.line(area.width.saturating_sub(8) as usize)),
            Style::new().fg(palette().accent),
        )),
        // Nothing typed after the command yet: how it is used, as a hint,
        // not an error (Tab's `/later ` showed a red ✗ at once).
        Some(Err(e)) if e.starts_with('/') => title.push(Span::styled(
            format!(" {} ", elide(&e, area.width.saturating_sub(4) as usize)),
            dim(),
        )),
        // Too long for the top border: it goes on along the bottom one, so
        // that the example at its end is not what is cut; too long for both
        // (at 60 columns the second way to write it was cut off), it is
        // written whole on the rows above the box.
        Some(Err(e)) => {
            let style = Style::new().fg(palette().error);
            let room = area.width.saturating_sub(6) as usize;
            let bottom_room = area.width.saturating_sub(4) as usize;
            let whole = format!("✗ {e}");
            let rows_above = chat::wrap_words(&whole, above.width.max(1) as usize).len();
            match split_in_two(&e, room) {
                (first, None) => title.push(Span::styled(format!(" ✗ {first} "), style)),
                (first, Some(rest))
                    if app.composer.attachments.is_empty()
                        && (Span::raw(&rest).width() <= bottom_room
                            || rows_above > above.height as usize) =>
                {
                    title.push(Span::styled(format!(" ✗ {first} "), style));
                    below.push(Span::styled(
                        format!(" {} ", elide(&rest, bottom_room)),
                        style,
                    ));
                }
                _ if rows_above <= above.height as usize => {
                    draw_above(f.buffer_mut(), above, &whole, style)
                }
                _ => title.push(Span::styled(format!(" ✗ {} ", elide(&e, room)), style)),
            }
        }
        None => {
            if inactive {
                // The longest wording the border holds (at 40 columns the
                // first was cut mid-word).
                let wording = crate::tui::text::first_fitting(
                    &[
                        " a tool call waits for your answer above ",
                        " a tool call waits above ",
                        " answer above ",
                    ],
                    area.width.saturating_sub(2) as usize,
                )
                .copied()
                .unwrap_or("");
                title.push(Span::styled(wording, Style::new().fg(palette().warning)));
            } else if let Some(run) = app.model.tool_runs.first() {
                let secs = (app.model.now_ms() - run.started_at).max(0) / 1000;
                let wording = format!(
                    " running {} ({secs}s)… Esc stops ",
                    sanitize_line(&run.tool)
                );
                let fitting = crate::tui::text::first_fitting(
                    &[wording.as_str(), " running a tool… Esc stops "],
                    area.width.saturating_sub(2) as usize,
                )
                .map(|w| w.to_string())
                .unwrap_or_default();
                title.push(Span::styled(fitting, Style::new().fg(palette().warning)));
            } else if app.model.is_busy()
                || app.streaming_elsewhere().is_some()
                || app
                    .model
                    .current
                    .is_some_and(|c| app.request_waiting_elsewhere(c).is_some())
            {
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
    app.composer.render(
        area,
        f.buffer_mut(),
        title,
        below,
        focused,
        inactive,
        exchanges_after_the_edit(app),
    );
}

/// While a message is edited: the exchanges after it (its user messages)
/// that its resend would mark replaced with it.
fn exchanges_after_the_edit(app: &App) -> usize {
    let Some(edit) = app.composer.edit.as_ref() else {
        return 0;
    };
    app.model
        .entries
        .iter()
        .skip_while(|e| e.msg.id != edit.message_id)
        .skip(1)
        .filter(|e| e.msg.role == crate::store::Role::User)
        .count()
}

/// `text` wrapped on the last rows of `area` (cleared first).
fn draw_above(buf: &mut Buffer, area: Rect, text: &str, style: Style) {
    let rows = chat::wrap_words(text, area.width.max(1) as usize);
    let h = (rows.len() as u16).min(area.height);
    let r = Rect {
        y: area.y + area.height - h,
        height: h,
        ..area
    };
    ratatui::widgets::Clear.render(r, buf);
    let lines: Vec<Line<'static>> = rows
        .into_iter()
        .map(|row| Line::styled(row, style))
        .collect();
    Paragraph::new(lines).render(r, buf);
}

/// `text` as a row of at most `width` cells after a whole word, and the
/// rest (None when it all fits). An example's date stays with its time
/// (`2026-12-01 09:00` is not split).
fn split_in_two(text: &str, width: usize) -> (String, Option<String>) {
    let rows = chat::wrap_words(text, width.max(1));
    let Some((first, rest)) = rows.split_first().filter(|(_, rest)| !rest.is_empty()) else {
        return (text.to_string(), None);
    };
    let (mut first, mut rest) = (first.clone(), rest.join(" "));
    let is_time = |s: &str| {
        s.split_once(':').is_some_and(|(h, m)| {
            (1..=2).contains(&h.len())
                && h.chars().all(|c| c.is_ascii_digit())
                && m.chars().take(2).all(|c| c.is_ascii_digit())
        })
    };
    let is_date = |s: &str| s.len() == 10 && s.chars().all(|c| c.is_ascii_digit() || c == '-');
    if is_time(&rest)
        && let Some((head, date)) = first.rsplit_once(' ')
        && is_date(date)
    {
        rest = format!("{date} {rest}");
        first = head.to_string();
    }
    (first, Some(rest))
}

/// The status bar: the model, the conversation (when the sidebar that would
/// name it is hidden), the counts by state, then the last message. Where
/// that does not fit, the labels give way to short forms, and a message
/// that still does not fit wraps onto lines of its own below, so it is
/// never cut off.
fn status_lines(app: &App, width: u16, sidebar_shown: bool) -> Vec<Line<'static>> {
    let width = width as usize;
    let full = status_spans(app, sidebar_shown, false);
    let message = status_message(app);
    let help = Span::styled(" F1 help · F2 scheduled ", dim());
    let full_width: usize = full.iter().chain(&message).map(Span::width).sum();
    // At least two spaces more between the message and the hint: one read
    // as the message going on ("… marked replaced F1 help").
    if full_width + help.width() + 2 <= width {
        let pad = width - full_width - help.width();
        let mut spans = full;
        spans.extend(message);
        spans.push(Span::raw(" ".repeat(pad)));
        spans.push(help);
        return vec![Line::from(spans)];
    }
    if full_width <= width {
        let mut spans = full;
        spans.extend(message);
        return vec![Line::from(spans)];
    }
    // The full form with the dispatcher said briefly, before the short
    // form drops the rest (the context meter, the role, the usage went at
    // 120 columns for "another tock (pid N) is dispatching").
    let brief = status_spans_with(app, sidebar_shown, false, true);
    let brief_width: usize = brief.iter().chain(&message).map(Span::width).sum();
    if brief_width <= width {
        let mut spans = brief;
        spans.extend(message);
        return vec![Line::from(spans)];
    }
    let short = status_spans(app, sidebar_shown, true);
    let short_width: usize = short.iter().chain(&message).map(Span::width).sum();
    if short_width <= width || message.is_empty() {
        let mut spans = short;
        spans.extend(message);
        return vec![Line::from(spans)];
    }
    // The message on lines of its own (at most three), word-wrapped.
    let mut lines = vec![Line::from(short)];
    if let Some(text) = message.last() {
        let style = text.style;
        let wrapped = super::chat::wrap_words(text.content.trim(), width.saturating_sub(2).max(10));
        for (i, part) in wrapped.iter().take(3).enumerate() {
            let part = if i == 2 && wrapped.len() > 3 {
                elide(&format!("{part} …"), width.saturating_sub(2))
            } else {
                part.to_string()
            };
            lines.push(Line::from(Span::styled(format!(" {part}"), style)));
        }
    }
    lines
}

/// The status bar's left part; `short` keeps only what identifies the
/// state (the model's name, the conversation, the counts as icons).
fn status_spans(app: &App, sidebar_shown: bool, short: bool) -> Vec<Span<'static>> {
    status_spans_with(app, sidebar_shown, short, short)
}

/// The status bar's spans; `brief_dispatch`: the dispatcher in few words.
fn status_spans_with(
    app: &App,
    sidebar_shown: bool,
    short: bool,
    brief_dispatch: bool,
) -> Vec<Span<'static>> {
    let model = &app.model;
    let (name, provider) = model.model_label();
    let mut spans = vec![Span::styled(
        format!(
            " {} ",
            sanitize_line(&if short { elide(&name, 14) } else { name })
        ),
        Style::new()
            .fg(palette().on(palette().accent))
            .bg(palette().accent),
    )];
    if provider == "echo" {
        spans.push(Span::styled(
            // Not shortened: " off " read as "switched off".
            " offline ",
            Style::new()
                .fg(palette().on(palette().highlight))
                .bg(palette().highlight),
        ));
    } else if !short {
        spans.push(Span::styled(
            format!(" {} ", sanitize_line(&provider)),
            dim(),
        ));
    }
    // Which conversation this is, where the sidebar does not say it.
    if !sidebar_shown && let Some(c) = model.current_conv() {
        let title = sanitize_line(&c.display_title()).into_owned();
        spans.push(Span::styled(
            format!(" {} ", elide(&title, if short { 16 } else { 24 })),
            Style::new().add_modifier(Modifier::BOLD),
        ));
    }
    if !short && let Some(role) = model.current_conv().and_then(|c| c.role.as_deref()) {
        spans.push(Span::styled(format!(" role: {} ", elide(role, 16)), dim()));
    }
    let dispatch = app.engine().dispatch_state();
    let (dstate, dstyle) = match &dispatch {
        DispatchState::Dispatching => (String::new(), dim()),
        DispatchState::Starting => ("starting".to_string(), dim()),
        // Short: the counts after it must still show.
        DispatchState::Standby { .. } if brief_dispatch => (
            "other tock sends".to_string(),
            Style::new().fg(palette().warning),
        ),
        DispatchState::Standby { pid } => (
            format!("another tock (pid {pid}) sends"),
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
    // Counts by the one item state, the same the strip and F2 show; what
    // needs the user first.
    let c = model.state_counts();
    let approvals = model.calls_awaiting_approval();
    // Each state its own sign, so the short form (`↯1 ↻2`) reads alone:
    // ↯ an item failing and tried again, ↻ a series that repeats.
    let counts = [
        (c.failed, "✗", "need attention (F2)", palette().error),
        (approvals, "?", "to approve", palette().warning),
        (c.retrying, "↯", "retrying", palette().warning),
        (c.queued, "⏳", "queued", palette().info),
        (c.waiting, "⏸", "paused", palette().warning),
        (c.scheduled, "⏰", "scheduled", palette().accent),
        (model.active_series(), "↻", "recurring", palette().accent),
    ];
    for (n, icon, label, color) in counts {
        if n > 0 {
            let text = if short {
                format!(" {icon}{n}")
            } else {
                format!(" {icon}{n} {label} ")
            };
            spans.push(Span::styled(text, Style::new().fg(color)));
        }
    }
    if !short && let Some(u) = model.usage_summary() {
        spans.push(Span::styled(format!(" {u} "), dim()));
    }
    spans
}

/// The last message for the status bar, after its separator.
fn status_message(app: &App) -> Vec<Span<'static>> {
    let Some(st) = &app.status else {
        return Vec::new();
    };
    vec![
        Span::styled(" │ ", dim()),
        Span::styled(
            sanitize_line(&st.text).into_owned(),
            if st.error {
                Style::new().fg(palette().error)
            } else {
                Style::new()
            },
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::split_in_two;

    #[test]
    fn a_line_split_in_two_keeps_a_date_with_its_time() {
        let e = "can't read \"9\" as a time — try 10m, 1h30m, 9am, tomorrow 14:30, fri 5pm, 2026-12-01 09:00";
        assert_eq!(split_in_two(e, 200), (e.to_string(), None));
        let (first, rest) = split_in_two(e, 84);
        assert_eq!(
            first,
            "can't read \"9\" as a time — try 10m, 1h30m, 9am, tomorrow 14:30, fri 5pm,"
        );
        assert_eq!(rest.as_deref(), Some("2026-12-01 09:00"));
        // Elsewhere a split after a whole word.
        let (first, rest) = split_in_two(e, 40);
        assert_eq!(first, "can't read \"9\" as a time — try 10m,");
        assert_eq!(
            rest.as_deref(),
            Some("1h30m, 9am, tomorrow 14:30, fri 5pm, 2026-12-01 09:00")
        );
    }
}
