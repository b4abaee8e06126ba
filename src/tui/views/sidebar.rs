//! The conversation list. Selection is a conversation id; the filter narrows
//! it by title (Enter opens the first match, Esc clears it).

use crate::tui::theme::palette;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Widget};

use super::{Cx, Intent, Outcome, RenderCx};
use crate::store::Conversation;
use crate::tui::keymap::{Action, Scope};
use crate::tui::model::Model;
use crate::tui::text::elide;

#[derive(Default)]
pub struct Sidebar {
    pub selected: Option<i64>,
    pub filter: String,
}

fn dim() -> Style {
    Style::new().fg(palette().dim)
}

impl Sidebar {
    pub fn visible<'a>(&self, model: &'a Model) -> Vec<&'a Conversation> {
        // Case and accents aside, as search matches: "cafe" finds "Café".
        let q = crate::store::fold_for_matching(&self.filter);
        model
            .convs
            .iter()
            .filter(|c| {
                q.is_empty() || crate::store::fold_for_matching(&c.display_title()).contains(&q)
            })
            .collect()
    }

    pub fn handle_key(&mut self, key: KeyEvent, cx: &mut Cx<'_>) -> Outcome {
        let Some(action) = cx.keys.action(Scope::Sidebar, &key) else {
            return Outcome::Ignored;
        };
        let list = self.visible(cx.model);
        let pos = self
            .selected
            .or(cx.model.current)
            .and_then(|id| list.iter().position(|c| c.id == id));
        let target = pos
            .and_then(|p| list.get(p))
            .map(|c| (c.id, c.display_title()));
        match action {
            Action::Up | Action::Down => {
                let next = match (pos, action) {
                    (None, _) => 0,
                    (Some(p), Action::Up) => p.saturating_sub(1),
                    (Some(p), _) => (p + 1).min(list.len().saturating_sub(1)),
                };
                self.selected = list.get(next).map(|c| c.id);
            }
            Action::Open => {
                if let Some((id, _)) =
                    target.or_else(|| list.first().map(|c| (c.id, String::new())))
                {
                    cx.push(Intent::Open(id));
                    cx.push(Intent::Focus(crate::tui::app::Focus::Composer));
                }
            }
            Action::NewConversation => cx.push(Intent::NewConversation),
            Action::Rename => {
                if let Some((id, title)) = target {
                    cx.push(Intent::Push(Box::new(super::prompt::Prompt::rename(
                        id, &title,
                    ))));
                }
            }
            Action::Delete => {
                if let Some((id, title)) = target {
                    cx.push(Intent::Push(Box::new(
                        super::confirm::Confirm::delete_conversation(
                            cx.model,
                            id,
                            &title,
                            !cx.composer_empty,
                        ),
                    )));
                }
            }
            Action::Filter => cx.push(Intent::Push(Box::new(super::prompt::Prompt::filter(
                &self.filter,
            )))),
            Action::Back => {
                if !self.filter.is_empty() {
                    cx.push(Intent::Filter(String::new()));
                }
                cx.push(Intent::Focus(crate::tui::app::Focus::Composer));
            }
            _ => return Outcome::Ignored,
        }
        Outcome::Consumed
    }

    /// Draw the list; returns the rows it drew, for mouse clicks: (y, conversation id).
    pub fn render(
        &self,
        area: Rect,
        buf: &mut Buffer,
        cx: &RenderCx<'_>,
        focused: bool,
    ) -> Vec<(u16, i64)> {
        let title = if self.filter.is_empty() {
            " Conversations ".to_string()
        } else {
            format!(
                " /{} ",
                elide(&crate::sanitize::sanitize_line(&self.filter), 16)
            )
        };
        let accent = if focused {
            Style::new().fg(palette().accent)
        } else {
            dim()
        };
        let block = Block::new()
            .borders(Borders::RIGHT)
            .border_style(accent)
            .title(Span::styled(
                title,
                if focused {
                    accent.add_modifier(Modifier::BOLD)
                } else {
                    dim()
                },
            ));
        let inner = block.inner(area);
        block.render(area, buf);
        let model = cx.model;
        let convs = self.visible(model);
        let per = 2usize;
        let rows = (inner.height as usize / per).max(1);
        let sel = self
            .selected
            .or(model.current)
            .and_then(|id| convs.iter().position(|c| c.id == id))
            .unwrap_or(0);
        let first = sel.saturating_sub(rows.saturating_sub(1));
        let mut lines = Vec::new();
        let mut hits = Vec::new();
        let w = inner.width as usize;
        for (i, c) in convs.iter().enumerate().skip(first).take(rows) {
            let current = Some(c.id) == model.current;
            let selected = focused && i == sel;
            let busy = model.engine.is_busy(c.id);
            let awaiting = model.awaiting.contains(&c.id);
            let paused = model.gate(Some(c.id)).paused();
            let pending = model.pending_by_conv.get(&c.id).copied().unwrap_or(0);
            let mut style = if current {
                Style::new().add_modifier(Modifier::BOLD)
            } else {
                Style::new()
            };
            if selected {
                style = style.add_modifier(Modifier::REVERSED);
            }
            let unread = model.unread.contains(&c.id);
            if unread {
                style = style.add_modifier(Modifier::BOLD);
            }
            let marker = if awaiting {
                Span::styled(
                    "? ",
                    Style::new()
                        .fg(palette().warning)
                        .add_modifier(Modifier::BOLD),
                )
            } else if busy {
                Span::styled("● ", Style::new().fg(palette().warning))
            } else if unread {
                Span::styled(
                    "• ",
                    Style::new()
                        .fg(palette().success)
                        .add_modifier(Modifier::BOLD),
                )
            } else if current {
                Span::styled("▸ ", Style::new().fg(palette().accent))
            } else {
                Span::raw("  ")
            };
            let y = inner.y + ((i - first) * per) as u16;
            hits.push((y, c.id));
            hits.push((y + 1, c.id));
            lines.push(Line::from(vec![
                marker,
                Span::styled(elide(&c.display_title(), w.saturating_sub(3)), style),
            ]));
            // What needs the user first: where the row is short, the end
            // is what is cut ("1 pending · needs approv…").
            let mut states: Vec<String> = Vec::new();
            if awaiting {
                states.push("needs approval".into());
            }
            if let Some(failed) = model.failed_by_conv.get(&c.id).filter(|n| **n > 0) {
                states.push(format!("{failed} failed"));
            }
            if pending > 0 {
                states.push(format!("{pending} pending"));
            }
            // A series repeats here: nothing else on the row said so.
            match model.series_by_conv.get(&c.id).copied().unwrap_or(0) {
                0 => {}
                1 => states.push("↻ recurring".into()),
                n => states.push(format!("↻ {n} recurring")),
            }
            if !awaiting && unread {
                states.push("new reply".into());
            } else if !awaiting && paused {
                states.push("paused".into());
            }
            // When it last changed, where the states leave room for it:
            // they are what needs the user.
            let when = super::short_past(c.updated_at, &cx.now);
            let states = states.join(" · ");
            let with_time = if states.is_empty() {
                when
            } else {
                format!("{when} · {states}")
            };
            let meta = if states.is_empty()
                || unicode_width::UnicodeWidthStr::width(with_time.as_str()) <= w.saturating_sub(2)
            {
                with_time
            } else {
                states
            };
            lines.push(Line::styled(
                format!("  {}", elide(&meta, w.saturating_sub(2))),
                dim(),
            ));
        }
        if convs.is_empty() {
            lines.push(Line::styled(" no match — Esc clears the filter", dim()));
        }
        Paragraph::new(lines).render(inner, buf);
        hits
    }
}
