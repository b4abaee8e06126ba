//! A yes/no question. The question names what it acts on; the answer acts on
//! that item as it was shown, or is refused if it changed meanwhile.

use crate::tui::theme::palette;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Clear, Padding, Paragraph, Widget};

use super::{Cx, Intent, Outcome, RenderCx, View, ViewKind};
use crate::engine::ItemAction;
use crate::sanitize::sanitize_line;
use crate::tui::keymap::{Action, Scope};

enum What {
    CancelItem {
        id: i64,
        seen: i64,
        /// Its text as shown.
        text: String,
    },
    CancelQueued(i64),
    /// A message scheduled for later, sent now (before its time).
    SendEarly {
        id: i64,
        seen: i64,
    },
    /// With what the question said, to ask again if it changed.
    DeleteConversation {
        id: i64,
        title: String,
        typed: bool,
        pending: usize,
    },
}

pub struct Confirm {
    what: What,
    question: String,
}

impl Confirm {
    /// Every message queued in conversation `id` (`n` of them).
    pub fn cancel_queued(id: i64, n: usize) -> Self {
        Self {
            what: What::CancelQueued(id),
            question: if n == 1 {
                "Cancel the 1 message queued here? (Scheduled ones stay.)".to_string()
            } else {
                format!("Cancel all {n} messages queued here? (Scheduled ones stay.)")
            },
        }
    }

    /// A message scheduled `early` ("54m") from now, sent at once instead:
    /// asked, as `s` is also the first letter of many a word typed where
    /// the composer was meant.
    pub fn send_early(id: i64, seen: i64, text: &str, early: &str) -> Self {
        let what: String = sanitize_line(text).chars().take(40).collect();
        Self {
            what: What::SendEarly { id, seen },
            question: format!("Send “{what}” now, {early} before its time?"),
        }
    }

    pub fn cancel_item(id: i64, seen: i64, text: &str) -> Self {
        let what: String = sanitize_line(text).chars().take(40).collect();
        Self {
            what: What::CancelItem {
                id,
                seen,
                text: text.to_string(),
            },
            question: format!("Cancel “{what}”?"),
        }
    }

    /// Asks before deleting a conversation, saying how many of its messages
    /// would be canceled, and what goes on without it: its recurring series
    /// and tasks fire into a new conversation each (F2 ends them); and
    /// that its unsent draft goes with it (`typed`: the composer holds text,
    /// for the conversation shown).
    pub fn delete_conversation(
        model: &crate::tui::model::Model,
        id: i64,
        title: &str,
        typed: bool,
    ) -> Self {
        let pending = model.open_messages_of(id);
        let mut extra = if pending > 0 {
            format!(" Its {pending} pending message(s) will be canceled.")
        } else {
            String::new()
        };
        let draft = if model.current == Some(id) {
            typed
        } else {
            model
                .engine
                .reader()
                .draft(id)
                .is_ok_and(|d| !d.text.trim().is_empty())
        };
        if draft {
            extra.push_str(" Your unsent draft there goes with it.");
        }
        let (series, tasks) = model.outliving_deletion(id);
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let going_on: Vec<String> = [
            (series > 0).then(|| plural(series, "recurring series", "recurring series")),
            (tasks > 0).then(|| plural(tasks, "scheduled task", "scheduled tasks")),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !going_on.is_empty() {
            let n = series + tasks;
            // Each series and task makes its own conversation when it next
            // fires (a task's has its title).
            extra.push_str(&format!(
                " Its {} {} (F2 ends {}).",
                going_on.join(" and "),
                if n == 1 {
                    "goes on, in a new conversation"
                } else {
                    "go on, each in a new conversation of its own"
                },
                if n == 1 { "it" } else { "them" },
            ));
        }
        Self {
            what: What::DeleteConversation {
                id,
                title: title.to_string(),
                typed,
                pending,
            },
            question: format!("Delete “{}” and its history?{extra}", sanitize_line(title)),
        }
    }
}

impl View for Confirm {
    fn kind(&self) -> ViewKind {
        ViewKind::Confirm
    }

    fn handle_key(&mut self, key: KeyEvent, cx: &mut Cx<'_>) -> Outcome {
        match cx.keys.action(Scope::Confirm, &key) {
            Some(Action::Yes) => {
                // Messages sent into it since the question was asked (from
                // a shell, another tock) would be canceled unseen: ask again.
                if let What::DeleteConversation {
                    id,
                    ref title,
                    typed,
                    pending,
                } = self.what
                    && cx.model.open_messages_of(id) != pending
                {
                    let title = title.clone();
                    *self = Self::delete_conversation(cx.model, id, &title, typed);
                    self.question.insert_str(0, "Changed meanwhile. ");
                    return Outcome::Consumed;
                }
                cx.push(match self.what {
                    What::CancelItem { id, seen, ref text } => Intent::Item {
                        id,
                        seen,
                        action: ItemAction::Cancel { text: text.clone() },
                    },
                    What::DeleteConversation { id, .. } => Intent::Delete(id),
                    What::CancelQueued(id) => Intent::CancelQueued(id),
                    What::SendEarly { id, seen } => Intent::Item {
                        id,
                        seen,
                        action: ItemAction::SendNow,
                    },
                });
                Outcome::Done
            }
            Some(Action::No) => Outcome::Done,
            // Ctrl+C backs out of a question too.
            _ if key.code == ratatui::crossterm::event::KeyCode::Char('c')
                && key
                    .modifiers
                    .contains(ratatui::crossterm::event::KeyModifiers::CONTROL) =>
            {
                Outcome::Done
            }
            // A letter or digit is no answer: typed on after the question
            // came up (a sentence meant for the composer). The question
            // goes, unanswered.
            _ if super::is_typing(&key) => {
                let yes = cx.keys.label(Scope::Confirm, Action::Yes);
                cx.push(Intent::Info(format!("not done: only {yes} answers yes")));
                Outcome::Done
            }
            _ => Outcome::Consumed,
        }
    }

    fn render(&self, area: Rect, buf: &mut Buffer, cx: &RenderCx<'_>) {
        let text = format!(
            "{}  {} yes · {} no",
            self.question,
            cx.keys.label(Scope::Confirm, Action::Yes),
            cx.keys.label(Scope::Confirm, Action::No)
        );
        // As tall as the wrapped question needs: its answer keys must never be cut off.
        let w = (unicode_width::UnicodeWidthStr::width(text.as_str()) as u16 + 6)
            .min(area.width.saturating_sub(2));
        let rows: Vec<Line> =
            crate::tui::chat::wrap_words(&text, w.saturating_sub(4).max(1) as usize)
                .into_iter()
                .map(Line::from)
                .collect();
        let r = super::help::centered(area, w, rows.len() as u16 + 2);
        Clear.render(r, buf);
        Paragraph::new(rows)
            .block(
                Block::bordered()
                    .border_type(BorderType::Rounded)
                    .border_style(Style::new().fg(palette().warning))
                    .padding(Padding::horizontal(1)),
            )
            .render(r, buf);
    }
}
