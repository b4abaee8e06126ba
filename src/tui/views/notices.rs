//! The notification history (F3), newest first: ↑/↓ choose one, Enter
//! opens the conversation it is about.

use std::cell::Cell;

use crate::tui::theme::palette;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Clear, Widget};

use super::{Cx, Intent, Outcome, RenderCx, View, ViewKind};
use crate::tui::text::elide;

/// One notification as it was told.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The local time it came ("14:03").
    pub stamp: String,
    /// Made safe for the terminal when it was told.
    pub text: String,
    pub conversation_id: Option<i64>,
    pub is_error: bool,
}

pub struct Notices {
    /// Oldest first, as they came.
    entries: Vec<Entry>,
    /// The chosen one, counted from the newest.
    selected: usize,
    /// The first row shown, counted from the newest (kept by the last frame).
    offset: Cell<usize>,
}

impl Notices {
    pub fn new(entries: Vec<Entry>) -> Self {
        Self {
            entries,
            selected: 0,
            offset: Cell::new(0),
        }
    }

    fn newest_first(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter().rev()
    }

    fn move_by(&mut self, by: isize) {
        let last = self.entries.len().saturating_sub(1);
        self.selected = self.selected.saturating_add_signed(by).min(last);
    }
}

impl View for Notices {
    fn kind(&self) -> ViewKind {
        ViewKind::Notices
    }

    fn handle_key(&mut self, key: KeyEvent, cx: &mut Cx<'_>) -> Outcome {
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        match key.code {
            KeyCode::Up if plain => self.move_by(-1),
            KeyCode::Down if plain => self.move_by(1),
            KeyCode::PageUp if plain => self.move_by(-10),
            KeyCode::PageDown if plain => self.move_by(10),
            KeyCode::Home if plain => self.selected = 0,
            KeyCode::End if plain => self.move_by(isize::MAX),
            KeyCode::Enter => {
                if let Some(conv) = self
                    .newest_first()
                    .nth(self.selected)
                    .and_then(|e| e.conversation_id)
                {
                    cx.push(Intent::Open(conv));
                }
                return Outcome::Done;
            }
            _ => return super::dismiss(&key),
        }
        Outcome::Consumed
    }

    fn handle_paste(&mut self, _text: &str, _cx: &mut Cx<'_>) -> Outcome {
        Outcome::Dismissed
    }

    fn render(&self, area: Rect, buf: &mut Buffer, cx: &RenderCx<'_>) {
        let rows = self
            .entries
            .len()
            .max(1)
            .min(usize::from(area.height.saturating_sub(4)));
        let r = super::help::centered(area, area.width.saturating_sub(6).min(100), rows as u16 + 2);
        Clear.render(r, buf);
        let hint = if self.entries.is_empty() {
            " any key closes "
        } else {
            let hints = [
                " ↑↓ choose · Enter opens its conversation · Esc closes ",
                " ↑↓ · Enter opens its conversation · Esc closes ",
                " ↑↓ · Enter goes there · Esc ",
            ];
            crate::tui::text::first_fitting(&hints, usize::from(r.width.saturating_sub(2)))
                .copied()
                .unwrap_or(hints[2])
        };
        let block = Block::bordered()
            .border_type(BorderType::Rounded)
            .title(" Notifications, newest first ")
            .title_bottom(Line::from(hint))
            .border_style(Style::new().fg(palette().accent));
        let inner = block.inner(r);
        block.render(r, buf);
        let width = usize::from(inner.width);
        if self.entries.is_empty() {
            buf.set_stringn(
                inner.x,
                inner.y,
                "No notifications yet.",
                width,
                Style::new().fg(palette().dim),
            );
            return;
        }
        let shown = usize::from(inner.height).max(1);
        let mut offset = self.offset.get().min(self.selected);
        if self.selected >= offset + shown {
            offset = self.selected + 1 - shown;
        }
        self.offset.set(offset);
        for (row, (i, e)) in self
            .newest_first()
            .enumerate()
            .skip(offset)
            .take(shown)
            .enumerate()
        {
            let chosen = i == self.selected;
            let place = e
                .conversation_id
                .and_then(|id| cx.model.convs.iter().find(|c| c.id == id))
                .map(|c| crate::sanitize::sanitize_line(&c.display_title()).into_owned())
                // Most notices name their conversation already; the others
                // name it first, where a long error cannot cut it off.
                .filter(|title| !e.text.contains(&format!("“{title}”")))
                .map(|title| format!("“{}” · ", elide(&title, 24)))
                .unwrap_or_default();
            let line = format!(
                "{}{} {place}{}",
                if chosen { "› " } else { "  " },
                e.stamp,
                e.text
            );
            let mut style = Style::new();
            if e.is_error {
                style = style.fg(palette().error);
            }
            if chosen {
                style = style.add_modifier(Modifier::BOLD | Modifier::REVERSED);
            }
            buf.set_stringn(
                inner.x,
                inner.y + row as u16,
                elide(&line, width),
                width,
                style,
            );
        }
    }
}
