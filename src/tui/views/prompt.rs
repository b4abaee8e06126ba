//! A text prompt: rename a conversation, filter the list, reschedule or edit
//! a pending item. Pastes land in it; Enter saves, Esc cancels.

use crate::tui::theme::palette;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Clear, Paragraph, Widget};
use ratatui_textarea::TextArea;

use super::{Cx, Intent, Outcome, RenderCx, View, ViewKind};
use crate::engine::ItemAction;
use crate::tui::keymap::{Action, Scope};
use crate::tui::model::local;
use crate::when::{self, Mode};

enum Kind {
    Rename(i64),
    Filter,
    Reschedule {
        id: i64,
        seen: i64,
        due: Option<i64>,
    },
    EditItem {
        id: i64,
        seen: i64,
    },
}

pub struct Prompt {
    kind: Kind,
    title: &'static str,
    /// The title where the whole one does not fit (60 columns).
    short_title: &'static str,
    input: TextArea<'static>,
    error: Option<String>,
}

fn input(initial: &str) -> TextArea<'static> {
    let mut t = TextArea::default();
    t.set_cursor_line_style(Style::default());
    t.set_wrap_mode(ratatui_textarea::WrapMode::WordOrGlyph);
    t.insert_str(initial);
    t
}

impl Prompt {
    fn new(kind: Kind, (title, short_title): (&'static str, &'static str), initial: &str) -> Self {
        Self {
            kind,
            title,
            short_title,
            input: input(initial),
            error: None,
        }
    }
    pub fn rename(id: i64, title: &str) -> Self {
        Self::new(
            Kind::Rename(id),
            (
                " Rename conversation (Enter saves, Esc cancels) ",
                " Rename (Enter saves, Esc cancels) ",
            ),
            title,
        )
    }
    pub fn filter(current: &str) -> Self {
        Self::new(
            Kind::Filter,
            (
                " Filter conversations (Enter opens the first match, Esc clears) ",
                " Filter (Enter opens, Esc clears) ",
            ),
            current,
        )
    }
    pub fn reschedule(id: i64, seen: i64, due: Option<i64>) -> Self {
        Self::new(
            Kind::Reschedule { id, seen, due },
            (
                " Reschedule to (e.g. 10m, 9am, tomorrow 14:30) ",
                " Reschedule to (10m, 9am, tomorrow) ",
            ),
            "",
        )
    }
    pub fn edit_item(id: i64, seen: i64, text: &str) -> Self {
        Self::new(
            Kind::EditItem { id, seen },
            (
                " Edit (Enter saves, Alt+Enter newline, Esc cancels) ",
                " Edit (Enter saves, Esc cancels) ",
            ),
            text,
        )
    }

    fn value(&self) -> String {
        self.input.lines().join("\n")
    }

    fn multiline(&self) -> bool {
        matches!(self.kind, Kind::EditItem { .. })
    }

    /// Below the input: the current due time and the parsed new one, or the error.
    fn note(&self, now_ms: i64) -> Option<Line<'static>> {
        if let Some(e) = &self.error {
            return Some(Line::styled(
                format!(" ✗ {e}"),
                Style::new().fg(palette().error),
            ));
        }
        let Kind::Reschedule { due, .. } = self.kind else {
            return None;
        };
        let now = local(now_ms);
        let text = self.value();
        if text.trim().is_empty() {
            // Counted down as the strip counts it, so the two agree.
            return due.map(|d| {
                Line::styled(
                    format!(" now due {}", super::preview(d, &now)),
                    Style::new().fg(palette().dim),
                )
            });
        }
        Some(match when::parse_time(&text, &now, Mode::At) {
            Ok(d) => Line::styled(
                format!(" ⏰ sends {}", when::preview(d, &now)),
                Style::new().fg(palette().accent),
            ),
            Err(e) => Line::styled(format!(" ✗ {e}"), Style::new().fg(palette().error)),
        })
    }

    fn accept(&mut self, cx: &mut Cx<'_>) -> Outcome {
        let value = self.value();
        let value = value.trim();
        match self.kind {
            Kind::Rename(id) => {
                if value.is_empty() {
                    self.error = Some("a title cannot be empty".into());
                    return Outcome::Consumed;
                }
                cx.push(Intent::Rename {
                    id,
                    title: value.to_string(),
                });
            }
            Kind::Filter => {
                cx.push(Intent::Filter(value.to_string()));
                cx.push(Intent::OpenFiltered);
            }
            Kind::Reschedule { id, seen, .. } => match when::parse_time(value, &cx.now, Mode::At) {
                Ok(d) => cx.push(Intent::Item {
                    id,
                    seen,
                    action: ItemAction::Reschedule(d.timestamp_millis()),
                }),
                Err(e) => {
                    self.error = Some(e.to_string());
                    return Outcome::Consumed;
                }
            },
            Kind::EditItem { id, seen } => {
                if value.is_empty() {
                    self.error = Some("the text is empty (x cancels the item)".into());
                    return Outcome::Consumed;
                }
                cx.push(Intent::Item {
                    id,
                    seen,
                    action: ItemAction::Edit(value.to_string()),
                });
            }
        }
        Outcome::Done
    }
}

impl View for Prompt {
    fn kind(&self) -> ViewKind {
        ViewKind::Prompt
    }

    fn typed_into_at_once(&self) -> bool {
        matches!(self.kind, Kind::Filter)
    }

    fn handle_key(&mut self, key: KeyEvent, cx: &mut Cx<'_>) -> Outcome {
        let ctrl_c = key.code == ratatui::crossterm::event::KeyCode::Char('c')
            && key
                .modifiers
                .contains(ratatui::crossterm::event::KeyModifiers::CONTROL);
        match cx.keys.action(Scope::Prompt, &key) {
            Some(Action::Cancel) => {
                if matches!(self.kind, Kind::Filter) {
                    cx.push(Intent::Filter(String::new()));
                }
                Outcome::Done
            }
            _ if ctrl_c => Outcome::Done,
            Some(Action::Newline) if self.multiline() => {
                self.input.insert_newline();
                Outcome::Consumed
            }
            Some(Action::Accept) => self.accept(cx),
            _ => {
                if key.code != ratatui::crossterm::event::KeyCode::Enter {
                    crate::tui::text::edit_line(&mut self.input, key);
                }
                self.error = None;
                if matches!(self.kind, Kind::Filter) {
                    cx.push(Intent::Filter(self.input.lines().join("")));
                }
                Outcome::Consumed
            }
        }
    }

    fn handle_paste(&mut self, text: &str, cx: &mut Cx<'_>) -> Outcome {
        let text = if self.multiline() {
            text.to_string()
        } else {
            text.replace('\n', " ")
        };
        self.input.insert_str(text);
        self.error = None;
        if matches!(self.kind, Kind::Filter) {
            cx.push(Intent::Filter(self.input.lines().join("")));
        }
        Outcome::Consumed
    }

    fn render(&self, area: Rect, buf: &mut Buffer, cx: &RenderCx<'_>) {
        let h = if self.multiline() { 10 } else { 3 };
        let note = self.note(cx.now_ms);
        let width = area.width.saturating_sub(8).min(72);
        // The note wraps rather than losing its end (an error's advice is
        // at its end), up to three lines.
        let extra = note.as_ref().map_or(0, |n| {
            let w = usize::from(width.saturating_sub(2).max(1));
            u16::try_from(n.width().div_ceil(w).clamp(1, 3)).unwrap_or(3)
        });
        // The note is inside the box, under the input: drawn below it, the
        // screen behind showed at both ends of its lines.
        let r = super::help::centered(area, width, h + extra);
        Clear.render(r, buf);
        let title = if self.title.chars().count() + 2 > usize::from(r.width) {
            self.short_title
        } else {
            self.title
        };
        let block = Block::bordered()
            .border_type(BorderType::Rounded)
            .title(title)
            .border_style(Style::new().fg(palette().accent));
        let inner = block.inner(r);
        block.render(r, buf);
        let [input_r, note_r] = Layout::vertical([
            Constraint::Length(h.saturating_sub(2)),
            Constraint::Length(extra),
        ])
        .areas(inner);
        (&self.input).render(input_r, buf);
        if let Some(n) = note {
            Paragraph::new(n)
                .style(Style::new().bg(palette().popup))
                .wrap(ratatui::widgets::Wrap { trim: false })
                .render(note_r, buf);
        }
    }
}
