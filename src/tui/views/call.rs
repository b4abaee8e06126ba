//! A tool call in full: what the model asks to run, every argument, for a
//! decision on a call the approval card can show only the start of.
//! Taller than the screen, it scrolls.

use std::cell::Cell;

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Clear, Paragraph, Widget};

use super::{Cx, Outcome, RenderCx, View, ViewKind};
use crate::sanitize::sanitize_line;
use crate::tui::chat::wrap_words;
use crate::tui::theme::palette;

/// `lines` wrapped at `width` columns, a continued line indented as its start.
pub fn wrapped(lines: &[String], width: usize) -> Vec<String> {
    let mut out = Vec::new();
    for l in lines {
        let indent = l.len() - l.trim_start().len();
        let rows = wrap_words(l.trim_start(), width.saturating_sub(indent).max(8));
        out.extend(
            rows.into_iter()
                .map(|r| format!("{}{r}", " ".repeat(indent))),
        );
    }
    out
}

pub struct CallDetails {
    title: String,
    lines: Vec<String>,
    scroll: usize,
    /// Rows shown and wrapped rows in all at the last frame (for paging and clamping).
    page: Cell<usize>,
    total: Cell<usize>,
}

impl CallDetails {
    pub fn new(tool: &str, arguments: &str) -> Self {
        Self {
            title: format!(" {} wants to run — every argument ", sanitize_line(tool)),
            lines: crate::call_text::argument_lines(arguments),
            scroll: 0,
            page: Cell::new(1),
            total: Cell::new(0),
        }
    }
}

impl View for CallDetails {
    fn kind(&self) -> ViewKind {
        ViewKind::Call
    }

    fn handle_key(&mut self, key: KeyEvent, _cx: &mut Cx<'_>) -> Outcome {
        if key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            return super::dismiss(&key);
        }
        let page = self.page.get().max(1);
        let max = self.total.get().saturating_sub(page);
        self.scroll = match key.code {
            KeyCode::Up | KeyCode::Char('k') => self.scroll.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => self.scroll + 1,
            KeyCode::PageUp => self.scroll.saturating_sub(page),
            KeyCode::PageDown | KeyCode::Char(' ') => self.scroll + page,
            KeyCode::Home => 0,
            KeyCode::End => max,
            KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q') => return Outcome::Done,
            // Typing closes it and goes to the composer, not nowhere.
            KeyCode::Char(_) => return Outcome::Dismissed,
            _ => return Outcome::Consumed,
        }
        .min(max);
        Outcome::Consumed
    }

    fn render(&self, area: Rect, buf: &mut Buffer, _cx: &RenderCx<'_>) {
        let r = super::help::centered(
            area,
            area.width.saturating_sub(4).min(110),
            area.height.saturating_sub(2),
        );
        Clear.render(r, buf);
        let block = Block::bordered()
            .border_type(BorderType::Rounded)
            .title(self.title.clone())
            .border_style(Style::new().fg(palette().warning));
        let inner = block.inner(r);
        let rows = wrapped(&self.lines, usize::from(inner.width));
        let page = usize::from(inner.height).max(1);
        self.page.set(page);
        self.total.set(rows.len());
        let scroll = self.scroll.min(rows.len().saturating_sub(page));
        let more = rows.len() > page;
        let at = format!(
            "{}–{} of {}",
            scroll + 1,
            (scroll + page).min(rows.len()),
            rows.len()
        );
        let hints = if more {
            vec![
                format!(" {at} · ↑↓ PgUp PgDn scroll · Esc back to the card "),
                format!(" {at} · ↑↓ scroll · Esc back "),
                format!(" {at} "),
            ]
        } else {
            vec![" Esc back to the card ".to_string()]
        };
        let hint = crate::tui::text::first_fitting(&hints, usize::from(r.width.saturating_sub(2)))
            .unwrap_or(&hints[hints.len() - 1])
            .clone();
        let block = block.title_bottom(Line::styled(hint, Style::new().fg(palette().dim)));
        block.render(r, buf);
        let shown: Vec<Line> = rows
            .into_iter()
            .skip(scroll)
            .take(page)
            .map(Line::from)
            .collect();
        Paragraph::new(shown).render(inner, buf);
    }
}
