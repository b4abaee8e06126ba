//! The notification history (F3), newest first.

use crate::tui::theme::palette;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Clear, Paragraph, Widget};

use super::{Cx, Outcome, RenderCx, View, ViewKind};
use crate::sanitize::sanitize_line;

pub struct Notices {
    pub lines: Vec<String>,
}

impl View for Notices {
    fn kind(&self) -> ViewKind {
        ViewKind::Notices
    }

    fn handle_key(&mut self, key: KeyEvent, _cx: &mut Cx<'_>) -> Outcome {
        super::dismiss(&key)
    }

    fn handle_paste(&mut self, _text: &str, _cx: &mut Cx<'_>) -> Outcome {
        Outcome::Dismissed
    }

    fn render(&self, area: Rect, buf: &mut Buffer, _cx: &RenderCx<'_>) {
        let mut lines: Vec<Line> = self
            .lines
            .iter()
            .rev()
            .take(area.height.saturating_sub(4) as usize)
            .map(|n| Line::from(sanitize_line(n).into_owned()))
            .collect();
        if lines.is_empty() {
            lines.push(Line::styled(
                "No notifications yet.",
                Style::new().fg(palette().dim),
            ));
        }
        let r = super::help::centered(
            area,
            area.width.saturating_sub(6).min(100),
            lines.len() as u16 + 2,
        );
        Clear.render(r, buf);
        Paragraph::new(lines)
            .block(
                Block::bordered()
                    .border_type(BorderType::Rounded)
                    .title(" Notifications, newest first (any key closes) ")
                    .border_style(Style::new().fg(palette().accent)),
            )
            .render(r, buf);
    }
}
