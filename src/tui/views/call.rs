//! A text taller than the screen, scrolled: a tool call in full (what the
//! model asks to run, every argument, for a decision on a call the approval
//! card can show only the start of), and `/status`'s report, which is
//! made on a thread of its own (it checks whether the servers answer) and
//! shown when it comes.

use std::cell::Cell;
use std::sync::{Arc, Mutex};

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Clear, Padding, Paragraph, Widget};

use super::{Cx, Outcome, RenderCx, View, ViewKind};
use crate::sanitize::sanitize_line;
use crate::tui::chat::wrap_words;
use crate::tui::model::Model;
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

/// How often an open `/status` looks for its report (it comes within the
/// servers' connect timeouts).
const REPORT_POLL_MS: i64 = 100;

/// Lines made on another thread: None until they are ready.
type Coming = Arc<Mutex<Option<Vec<String>>>>;

pub struct Pager {
    kind: ViewKind,
    title: String,
    /// What Esc goes back to.
    back_to: &'static str,
    lines: Vec<String>,
    coming: Option<Coming>,
    scroll: usize,
    /// Rows shown and wrapped rows in all at the last frame (for paging and clamping).
    page: Cell<usize>,
    total: Cell<usize>,
}

impl Pager {
    /// A tool call's every argument.
    pub fn call(tool: &str, arguments: &str) -> Self {
        Self {
            kind: ViewKind::Call,
            title: format!(" {} wants to run — every argument ", sanitize_line(tool)),
            back_to: "the card",
            lines: crate::call_text::argument_lines(arguments),
            coming: None,
            scroll: 0,
            page: Cell::new(1),
            total: Cell::new(0),
        }
    }

    /// `/status`: what `tock status` prints, made by `make` on a thread of
    /// its own; "checking…" until it is done.
    pub fn status(make: impl FnOnce() -> Vec<String> + Send + 'static) -> Self {
        let coming: Coming = Arc::default();
        let slot = coming.clone();
        let spawned = std::thread::Builder::new()
            .name("tock-status".into())
            .spawn(move || {
                let lines = make();
                if let Ok(mut slot) = slot.lock() {
                    *slot = Some(lines);
                }
            });
        let (lines, coming) = match spawned {
            Ok(_) => (
                vec!["checking the dispatcher, the outbox and the servers…".to_string()],
                Some(coming),
            ),
            Err(e) => (vec![format!("the status could not be made: {e}")], None),
        };
        Self {
            kind: ViewKind::Status,
            title: " status — as `tock status` prints it ".to_string(),
            back_to: "the conversation",
            lines,
            coming,
            scroll: 0,
            page: Cell::new(1),
            total: Cell::new(0),
        }
    }
}

impl View for Pager {
    fn kind(&self) -> ViewKind {
        self.kind
    }

    fn next_change(&self, now_ms: i64) -> Option<i64> {
        self.coming.as_ref().map(|_| now_ms + REPORT_POLL_MS)
    }

    fn on_tick(&mut self, _model: &Model) {
        let ready = self
            .coming
            .as_ref()
            .and_then(|c| c.lock().ok().and_then(|mut slot| slot.take()));
        if let Some(lines) = ready {
            self.lines = lines;
            self.coming = None;
        }
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
        // As tall as its text, up to the screen.
        let width = area.width.saturating_sub(4).min(110);
        let rows = wrapped(&self.lines, usize::from(width.saturating_sub(4)));
        let height = u16::try_from(rows.len().saturating_add(2))
            .unwrap_or(u16::MAX)
            .max(5)
            .min(area.height.saturating_sub(2));
        let r = super::help::centered(area, width, height);
        Clear.render(r, buf);
        let block = Block::bordered()
            .border_type(BorderType::Rounded)
            .title(self.title.clone())
            .border_style(Style::new().fg(palette().warning))
            .padding(Padding::horizontal(1));
        let inner = block.inner(r);
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
        let back_to = self.back_to;
        let hints = if more {
            vec![
                format!(" {at} · ↑↓ PgUp PgDn scroll · Esc back to {back_to} "),
                format!(" {at} · ↑↓ scroll · Esc back "),
                format!(" {at} "),
            ]
        } else {
            vec![format!(" Esc back to {back_to} "), " Esc back ".to_string()]
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
