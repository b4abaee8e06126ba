//! The help popup: every key of every view and every command, generated from
//! the keymap and the command table. Taller than the screen, it scrolls.

use crate::tui::theme::palette;
use std::cell::Cell;

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph, Widget};

use super::{Cx, Outcome, RenderCx, View, ViewKind};
use crate::tui::chat::wrap_words;
use crate::tui::commands::COMMANDS;
use crate::tui::keymap::{Action, Scope};

#[derive(Default)]
pub struct Help {
    scroll: u16,
    /// Rows that fit at the last frame (for paging and clamping).
    page: Cell<u16>,
    max: Cell<u16>,
}

pub fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

const KEY_COL: usize = 28;

/// Where the window is narrow, the keys go on a line of their own and the
/// explanation under them, indented this much (beside a 28-column key
/// column, it wrapped every few words at 60 columns).
const STACKED_INDENT: usize = 4;

fn lines(cx: &RenderCx<'_>, text_w: usize, stacked: bool) -> Vec<Line<'static>> {
    let mut lines: Vec<Line<'static>> = Vec::new();
    let row = |lines: &mut Vec<Line<'static>>, keys: &str, help: &str| {
        if stacked {
            lines.push(Line::styled(
                format!("  {keys}"),
                Style::new().fg(palette().warning),
            ));
            for part in wrap_words(help, text_w) {
                lines.push(Line::raw(format!("{}{part}", " ".repeat(STACKED_INDENT))));
            }
            return;
        }
        for (i, part) in wrap_words(help, text_w).into_iter().enumerate() {
            let k = if i == 0 {
                let mut k = format!("  {keys}");
                let w = unicode_width::UnicodeWidthStr::width(k.as_str());
                k.push_str(&" ".repeat(KEY_COL.saturating_sub(w).max(1)));
                k
            } else {
                " ".repeat(KEY_COL)
            };
            lines.push(Line::from(vec![
                Span::styled(k, Style::new().fg(palette().warning)),
                Span::raw(part),
            ]));
        }
    };
    let mut scope = None;
    for (s, keys, help) in cx.keys.help_rows(cx.enhanced_keys) {
        if scope != Some(s) {
            lines.push(Line::styled(
                s.title(),
                Style::new()
                    .fg(palette().accent)
                    .add_modifier(Modifier::BOLD),
            ));
            scope = Some(s);
        }
        row(&mut lines, &keys, help);
    }
    lines.push(Line::styled(
        "Commands",
        Style::new()
            .fg(palette().accent)
            .add_modifier(Modifier::BOLD),
    ));
    for c in COMMANDS {
        let aliases = if c.names.len() > 1 {
            format!(" (also {})", c.names[1..].join(", "))
        } else {
            String::new()
        };
        row(&mut lines, c.usage, &format!("{}{aliases}", c.help));
    }
    lines
}

impl View for Help {
    fn kind(&self) -> ViewKind {
        ViewKind::Help
    }

    fn handle_key(&mut self, key: KeyEvent, cx: &mut Cx<'_>) -> Outcome {
        let page = self.page.get().max(1) as i32;
        let delta = match cx.keys.action(Scope::Help, &key) {
            Some(Action::Up) => -1,
            Some(Action::Down) => 1,
            Some(Action::PageUpList) => -page,
            Some(Action::PageDownList) => page,
            Some(Action::First) => -i32::from(self.max.get()),
            Some(Action::Last) => i32::from(self.max.get()),
            // Its own close keys only close it.
            Some(Action::Back) => return Outcome::Done,
            // Any other key closes it (and a character goes on to the composer).
            _ => return super::dismiss(&key),
        };
        self.scroll = (i32::from(self.scroll) + delta).clamp(0, i32::from(self.max.get())) as u16;
        Outcome::Consumed
    }

    fn handle_paste(&mut self, _text: &str, _cx: &mut Cx<'_>) -> Outcome {
        Outcome::Dismissed
    }

    fn render(&self, area: Rect, buf: &mut Buffer, cx: &RenderCx<'_>) {
        // Key column, then the explanation word-wrapped beside it, so that every
        // line can be read at 80 columns.
        let w = area.width.saturating_sub(4).min(100);
        let beside = (w as usize).saturating_sub(2 + KEY_COL);
        let stacked = beside < 36;
        let text_w = if stacked {
            (w as usize).saturating_sub(2 + STACKED_INDENT).max(12)
        } else {
            beside
        };
        let lines = lines(cx, text_w, stacked);
        let h = (lines.len() as u16 + 2).min(area.height);
        let max = (lines.len() as u16).saturating_sub(h.saturating_sub(2));
        self.page.set(h.saturating_sub(2));
        self.max.set(max);
        let scroll = self.scroll.min(max);
        let r = centered(area, w, h);
        let titles: &[&str] = if max > 0 {
            &[
                " tock — keys (↑/↓ PgUp/PgDn scroll · Esc/q close · other keys close and go on) ",
                " tock — keys (↑/↓ PgUp/PgDn scroll · Esc/q close) ",
                " keys (↑/↓ scroll · Esc/q close) ",
            ]
        } else {
            &[
                " tock — keys (Esc/q close · other keys close and go on) ",
                " tock — keys (Esc/q close) ",
            ]
        };
        let title = crate::tui::text::first_fitting(titles, r.width.saturating_sub(2) as usize)
            .copied()
            .unwrap_or(" keys ");
        let mut block = Block::bordered()
            .border_type(BorderType::Rounded)
            .title(title)
            .border_style(Style::new().fg(palette().accent));
        if scroll < max {
            block = block
                .title_bottom(Line::from(format!(" ↓ {} more ", max - scroll)).right_aligned());
        }
        Clear.render(r, buf);
        Paragraph::new(lines)
            .scroll((scroll, 0))
            .block(block)
            .render(r, buf);
    }
}
