//! The F2 pane's popups: the reschedule prompt, the text editor, the
//! cancel confirmation and a series' rule editor, each drawn over the pane.

use crate::tui::shown_zone::ShownZone;
use chrono::DateTime;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget, Wrap};
use ratatui_textarea::TextArea;

use super::ScheduledPane;
use super::cells::utc;
use crate::tui::text::elide;
use crate::tui::theme::palette;
use crate::tui::time_picker::{POPUP_SEP, TimeInput, centered, footer_line};
use crate::tui::views;
use crate::when;

impl ScheduledPane {
    pub(super) fn render_rule(
        &self,
        area: Rect,
        buf: &mut Buffer,
        id: i64,
        input: &TextArea<'static>,
        preview: &Result<String, String>,
    ) {
        let popup = above_footer(area, area.width.saturating_sub(4).min(72), 8);
        let inner = popup_frame(
            popup,
            buf,
            &format!(" New rule for series #{id} "),
            palette().accent,
        );
        if inner.height < 4 {
            return;
        }
        let w = inner.width as usize;
        if let Some(row) = self.index_of(id).and_then(|i| self.list.get(i)) {
            buf.set_stringn(
                inner.x,
                inner.y,
                elide(&row.summary, w),
                w,
                Style::default(),
            );
        }
        let field = Rect::new(inner.x, inner.y + 1, inner.width, 1);
        input.render(field, buf);
        // The rule as it is, selected: what a key does to it is said above
        // the footer (a rule typed after it ran into it).
        let hint = input.is_selecting() && inner.height >= 5;
        if hint {
            let wordings = [
                "typing replaces this rule · ← or → to edit it",
                "typing replaces it · ←/→ edits it",
                "typing replaces it",
            ];
            let text = crate::tui::text::first_fitting(&wordings, w).unwrap_or(&wordings[2]);
            buf.set_stringn(
                inner.x,
                inner.y + inner.height - 2,
                text,
                w,
                Style::default().fg(palette().dim),
            );
        }
        let (text, style) = match preview {
            Ok(p) => (format!("↻ {p}"), Style::default().fg(palette().accent)),
            Err(e) => (format!("✗ {e}"), Style::default().fg(palette().error)),
        };
        Paragraph::new(text)
            .style(style)
            .wrap(Wrap { trim: true })
            .render(
                Rect::new(
                    inner.x,
                    inner.y + 2,
                    inner.width,
                    inner.height.saturating_sub(3 + u16::from(hint)),
                ),
                buf,
            );
        let footer = footer_line(&[("Enter", "save"), ("Esc", "cancel")], POPUP_SEP);
        buf.set_line(inner.x, inner.y + inner.height - 1, &footer, inner.width);
    }

    pub(super) fn render_reschedule(
        &self,
        area: Rect,
        buf: &mut Buffer,
        now: &DateTime<ShownZone>,
        id: i64,
        input: &TimeInput,
    ) {
        let popup = above_footer(area, area.width.saturating_sub(4).min(66), 9);
        let inner = popup_frame(popup, buf, &format!(" Reschedule #{id} "), palette().accent);
        if inner.height < 3 {
            return;
        }
        let w = inner.width as usize;
        let row = self.index_of(id).and_then(|i| self.list.get(i));
        if let Some(row) = row {
            buf.set_stringn(
                inner.x,
                inner.y,
                elide(&row.summary, w),
                w,
                Style::default(),
            );
            let current = match row.item.due_at {
                Some(d) if d > now.timestamp_millis() => {
                    format!("now due {}", views::preview(d, now))
                }
                Some(d) => format!("was due {}", when::preview(utc(d), now)),
                None => "now: as soon as possible".to_string(),
            };
            buf.set_stringn(
                inner.x,
                inner.y + 1,
                elide(&current, w),
                w,
                Style::default().fg(palette().dim),
            );
        }
        let rows = inner.height.saturating_sub(3).min(3);
        input.render(
            Rect::new(inner.x, inner.y + 2, inner.width, rows),
            buf,
            now,
            true,
        );
        let footer = footer_line(&[("Enter", "confirm"), ("Esc", "cancel")], POPUP_SEP);
        buf.set_line(inner.x, inner.y + inner.height - 1, &footer, inner.width);
    }

    pub(super) fn render_edit(
        &self,
        area: Rect,
        buf: &mut Buffer,
        id: i64,
        editor: &TextArea<'static>,
        error: Option<&str>,
    ) {
        let height = area.height.saturating_sub(2).min(14);
        let popup = centered(area, area.width.saturating_sub(4).min(78), height);
        let inner = popup_frame(popup, buf, &format!(" Edit #{id} "), palette().accent);
        if inner.height < 2 {
            return;
        }
        let text_area = Rect::new(inner.x, inner.y, inner.width, inner.height - 1);
        editor.render(text_area, buf);
        let y = inner.y + inner.height - 1;
        match error {
            Some(e) => {
                buf.set_stringn(
                    inner.x,
                    y,
                    elide(e, inner.width as usize),
                    inner.width as usize,
                    Style::default().fg(palette().error),
                );
            }
            None => {
                let footer = footer_line(
                    &[
                        ("Enter", "save"),
                        ("Esc", "discard"),
                        ("Alt+Enter", "new line"),
                    ],
                    POPUP_SEP,
                );
                buf.set_line(inner.x, y, &footer, inner.width);
            }
        }
    }

    /// The question before `x` (a series is ended, an item canceled) or
    /// before `s` on a message scheduled `send_early` ahead.
    pub(super) fn render_confirm(
        &self,
        area: Rect,
        buf: &mut Buffer,
        id: i64,
        send_early: Option<&str>,
    ) {
        let popup = above_footer(area, area.width.saturating_sub(4).min(60), 5);
        let (title, question, yes) = match send_early {
            Some(ahead) => (
                " Send now ",
                format!("Send #{id} now, {ahead} before its time? "),
                "send it",
            ),
            None if self.is_series(id) => {
                (" End ", format!("End recurring series #{id}? "), "end it")
            }
            None => (" Cancel ", format!("Cancel item #{id}? "), "cancel it"),
        };
        let inner = popup_frame(popup, buf, title, palette().error);
        if inner.height < 1 {
            return;
        }
        let w = inner.width as usize;
        let q = Line::from(vec![
            Span::styled(question, Style::default().add_modifier(Modifier::BOLD)),
            Span::styled(
                "Enter/Esc",
                Style::default()
                    .fg(palette().error)
                    .add_modifier(Modifier::BOLD),
            ),
        ]);
        buf.set_line(inner.x, inner.y, &q, inner.width);
        if inner.height >= 2
            && let Some(row) = self.index_of(id).and_then(|i| self.list.get(i))
        {
            buf.set_stringn(
                inner.x,
                inner.y + 1,
                elide(&row.summary, w),
                w,
                Style::default().fg(palette().dim),
            );
        }
        if inner.height >= 3 {
            let footer = footer_line(&[("Enter", yes), ("n/Esc", "keep it")], POPUP_SEP);
            buf.set_line(inner.x, inner.y + inner.height - 1, &footer, inner.width);
        }
    }
}

/// A popup at the bottom of the pane, over the detail lines (the popup says
/// which item it is about) rather than over the list, and leaving the footer.
fn above_footer(area: Rect, width: u16, height: u16) -> Rect {
    let height = height.min(area.height.saturating_sub(1));
    let width = width.min(area.width);
    Rect::new(
        area.x + (area.width - width) / 2,
        area.y + area.height - 1 - height,
        width,
        height,
    )
}

/// A bordered popup over whatever is below it; returns its inside.
fn popup_frame(popup: Rect, buf: &mut Buffer, title: &str, color: Color) -> Rect {
    Clear.render(popup, buf);
    let block = Block::bordered()
        .title(Span::styled(
            title.to_string(),
            Style::default().add_modifier(Modifier::BOLD),
        ))
        .border_style(Style::default().fg(color));
    let inner = block.inner(popup);
    block.render(popup, buf);
    inner
}
