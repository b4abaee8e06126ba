//! The approval card: while a tool call in the current conversation waits
//! for an answer, the card has focus and the answer is a deliberate choice —
//! move to Approve or Deny (arrows, Tab, or their letters on an empty
//! composer) and confirm with Enter. Nothing is chosen at first, so a word
//! typed before noticing the card neither answers it nor loses its letters:
//! they go to the composer.

use crate::tui::theme::palette;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget};

use super::{Cx, Intent, Outcome, RenderCx, View, ViewKind};
use crate::sanitize::sanitize_line;
use crate::store::Approval;
use crate::tui::chat::boxed;
use crate::tui::keymap::{Action, Scope};
use crate::tui::text::{elide, elide_words};
use crate::when;
use unicode_width::UnicodeWidthStr;

/// The card's state, beside its title.
const BADGE: &str = "needs approval";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    Approve,
    Deny,
}

pub struct ApprovalCard {
    pub approval: Approval,
    pub choice: Option<Choice>,
    /// A choice letter typed on an empty composer: if more typing follows,
    /// it was the start of a word and goes to the composer with it.
    held: Option<KeyEvent>,
    /// When it is declined unanswered, as the last frame read the config
    /// (for the next redraw of its countdown).
    declined: std::cell::Cell<Option<i64>>,
}

impl ApprovalCard {
    pub fn new(approval: Approval) -> Self {
        Self {
            approval,
            choice: None,
            held: None,
            declined: std::cell::Cell::new(None),
        }
    }

    /// ← / → (Ctrl+← and the like too): with text in the composer they
    /// move its cursor, not the card's choice. Choosing there with the key
    /// that moves the cursor made a draft's ← then Enter approve the call.
    fn moves_the_cursor(key: &KeyEvent) -> bool {
        matches!(key.code, KeyCode::Left | KeyCode::Right)
    }

    /// A key that still chooses while the composer holds text (Tab, which
    /// steps through the buttons): none when only arrows choose.
    fn chooser_beside_text(keys: &crate::tui::keymap::Keymap) -> Option<String> {
        let first = |action| {
            keys.bindings()
                .iter()
                .filter(|b| b.scope == Scope::Approval && b.action == action && !b.needs_enhanced)
                .flat_map(|b| b.keys.iter())
                .find(|k| !matches!(k.code, KeyCode::Left | KeyCode::Right))
                .map(|k| k.label())
        };
        first(Action::Right).or_else(|| first(Action::Left))
    }

    /// When the call is declined for want of an answer, if a timeout is set.
    fn declined_at(&self, model: &crate::tui::model::Model) -> Option<i64> {
        let at = model
            .engine
            .config()
            .get()
            .approvals
            .timeout_ms()
            .map(|limit| self.approval.created_at.saturating_add(limit));
        self.declined.set(at);
        at
    }

    /// The card's rows: title, what the call does, the two buttons.
    fn rows(&self, cx: &RenderCx<'_>, width: u16) -> Vec<Line<'static>> {
        let a = &self.approval;
        let s: serde_json::Value = serde_json::from_str(&a.summary).unwrap_or_default();
        let mut body = Vec::new();
        // The card's rows hold this many cells: a longer one is cut with `…`.
        let inner = crate::tui::chat::card_width(width).saturating_sub(4);
        let fit = |s: String| elide(&s, inner);
        let show_call = cx.keys.first(Scope::Approval, Action::ShowCall);
        let title = match a.tool.as_str() {
            "schedule_task" => {
                let t = sanitize_line(&crate::tui::chat::task_name(
                    s["title"].as_str(),
                    s["instruction"].as_str().unwrap_or(""),
                ))
                .into_owned();
                // The instruction on as many rows as a third of the chat
                // holds; cut, its last row ends in `…`.
                let rows = crate::tui::chat::wrap_words(
                    &sanitize_line(s["instruction"].as_str().unwrap_or("")),
                    inner.max(8),
                );
                let room = usize::from(cx.chat.height / 3).max(3);
                let instruction_cut = rows.len() > room;
                if instruction_cut {
                    let shown = room - 1;
                    for (i, row) in rows.into_iter().take(shown).enumerate() {
                        body.push(Line::from(if i + 1 == shown {
                            // Cut after a word where the `…` does not fit.
                            match row.rsplit_once(' ') {
                                _ if row.width() < inner => format!("{row}…"),
                                Some((words, _)) => format!("{words} …"),
                                None => elide(&format!("{row}…"), inner),
                            }
                        } else {
                            row
                        }));
                    }
                } else {
                    body.extend(rows.into_iter().map(Line::from));
                }
                let hint_at = body.len();
                // The rest of the card cut too (a repeating task's `until …`
                // at 60 columns): the hint is as much due as for the
                // instruction, or the cut part is never seen.
                let mut rest_cut = false;
                let mut fit_rest = |s: String| {
                    let kept = elide_words(&s, inner);
                    rest_cut |= kept != s;
                    kept
                };
                if let Some(repeat) = s["repeat"].as_str() {
                    // A repeating task: the rule in words, on two rows where
                    // one does not hold it (its `until …` at 60 columns),
                    // and its next occurrences.
                    let rule = format!("repeats {}", sanitize_line(repeat));
                    let mut rows = crate::tui::chat::wrap_words(&rule, inner.max(8)).into_iter();
                    let first = rows.next().unwrap_or_default();
                    let rest: Vec<String> = rows.collect();
                    for row in std::iter::once(first)
                        .chain((!rest.is_empty()).then(|| fit_rest(rest.join(" "))))
                    {
                        body.push(Line::styled(row, Style::new().fg(palette().accent)));
                    }
                    if let Some(p) = s["preview"].as_str() {
                        body.push(Line::styled(
                            fit_rest(sanitize_line(p).into_owned()),
                            Style::new().fg(palette().accent),
                        ));
                    }
                } else if let Some(due) = s["due_at"].as_i64() {
                    let d = chrono::DateTime::from_timestamp_millis(due).unwrap_or_default();
                    let text = if due > cx.now_ms {
                        // Where the date and countdown do not both fit,
                        // the date in fewer words, then the countdown alone.
                        let countdown = super::countdown(due, cx.now_ms);
                        let forms = [
                            format!("fires {}", super::preview(due, &cx.now)),
                            format!("fires {}, {countdown}", super::short_absolute(due, &cx.now)),
                            format!("fires {countdown}"),
                        ];
                        crate::tui::text::first_fitting(&forms, inner)
                            .unwrap_or(&forms[2])
                            .clone()
                    } else {
                        format!(
                            "was due {} — fires as soon as approved",
                            when::absolute(d, &cx.now)
                        )
                    };
                    body.push(Line::styled(
                        fit_rest(text),
                        Style::new().fg(palette().accent),
                    ));
                }
                // The task's title cut inside its quotes, to what the
                // card's top row has beside its badge.
                let whole = format!("Schedule “{t}”?");
                let (title_room, _) = crate::tui::chat::title_room(width, &whole, Some(BADGE));
                let title = elide(&t, title_room.saturating_sub(12).clamp(8, 40));
                let title_cut = title != t;
                // One hint, where the first cut row is: after the
                // instruction when it is cut, else after the rows cut (or
                // last, for the title alone).
                let hint = match (instruction_cut, rest_cut, title_cut) {
                    (true, false, _) => Some((hint_at, "instruction")),
                    (true, true, _) => Some((hint_at, "call")),
                    (false, true, _) | (false, false, true) => Some((body.len(), "call")),
                    (false, false, false) => None,
                };
                if let Some((at, what)) = hint {
                    body.insert(
                        at,
                        Line::styled(
                            fit(format!("{show_call} shows the whole {what}")),
                            Style::new().fg(palette().warning),
                        ),
                    );
                }
                format!("Schedule “{title}”?")
            }
            "cancel_scheduled" => {
                body.push(Line::from(fit(format!(
                    "cancel task #{}: {}",
                    s["job_id"],
                    elide(&sanitize_line(s["text"].as_str().unwrap_or("")), 50)
                ))));
                "Cancel a scheduled task?".to_string()
            }
            other => {
                // Every argument on lines of its own, as many as a third of
                // the chat holds; Ctrl+O shows the rest (a long file's last
                // line is where a harmful command would hide).
                let lines = super::call::wrapped(
                    &crate::call_text::argument_lines(&a.arguments),
                    usize::from(width.saturating_sub(4)),
                );
                let room = usize::from(cx.chat.height / 3).max(3);
                let (shown, hidden) = if lines.len() > room {
                    (room - 1, lines.len() - (room - 1))
                } else {
                    (lines.len(), 0)
                };
                body.extend(lines.into_iter().take(shown).map(Line::from));
                if hidden > 0 {
                    let more = crate::tui::text::more_lines(hidden);
                    let wordings = [
                        format!("… {more} — {show_call} shows the whole call"),
                        format!("… {more} — {show_call} shows all"),
                        format!("… {hidden} more — {show_call}"),
                    ];
                    let note = crate::tui::text::first_fitting(
                        &wordings,
                        usize::from(width.saturating_sub(4)),
                    )
                    .unwrap_or(&wordings[2]);
                    body.push(Line::styled(
                        note.clone(),
                        Style::new().fg(palette().warning),
                    ));
                }
                format!("Allow {}?", sanitize_line(other))
            }
        };
        let button = |label: &str, on: bool, color: Color| {
            let style = if on {
                Style::new()
                    .fg(palette().on(color))
                    .bg(color)
                    .add_modifier(Modifier::BOLD)
            } else {
                Style::new().fg(color)
            };
            Span::styled(format!(" {label} "), style)
        };
        let key = |a| cx.keys.first(Scope::Approval, a);
        // The longest wording that fits beside the buttons (" Approve "
        // "  " " Deny " take 17 columns, the card's frame 4): never cut.
        let room = (width as usize).saturating_sub(17 + 4);
        let hints = match (self.choice, Self::chooser_beside_text(cx.keys)) {
            // With text in the composer, ← / → move its cursor, and Enter
            // on nothing chosen queues the text (an edit waits).
            (None, Some(tab)) if !cx.composer_empty => {
                let enter = key(Action::Confirm);
                let queues = if cx.composer_command {
                    format!("  {tab} to choose, then {enter} ({enter} alone runs your command)")
                } else {
                    format!("  {tab} to choose, then {enter} ({enter} alone queues your text)")
                };
                let mut hints = vec![
                    format!("  {tab} to choose, then {enter}"),
                    format!("  {tab}, {enter}"),
                ];
                if !cx.composer_editing {
                    hints.insert(0, queues);
                }
                hints
            }
            (None, _) => vec![
                format!(
                    "  {}/{} or {}/{} to choose, then {}",
                    key(Action::Left),
                    key(Action::Right),
                    key(Action::PickApprove),
                    key(Action::PickDeny),
                    key(Action::Confirm),
                ),
                format!(
                    "  {}/{} to choose, then {}",
                    key(Action::Left),
                    key(Action::Right),
                    key(Action::Confirm),
                ),
                format!(
                    "  {}/{}, {}",
                    key(Action::Left),
                    key(Action::Right),
                    key(Action::Confirm)
                ),
            ],
            (Some(_), _) => vec![format!("  {} confirms", key(Action::Confirm))],
        };
        let fitting = |room: usize| crate::tui::text::first_fitting(&hints, room).cloned();
        // Too narrow beside the buttons: on a line of its own under them.
        let (hint, below) = match fitting(room) {
            Some(h) => (h, None),
            None => (
                String::new(),
                Some(
                    fitting((width as usize).saturating_sub(4))
                        .unwrap_or_else(|| hints[hints.len() - 1].clone()),
                ),
            ),
        };
        // With `approval_timeout`, when the call is declined unanswered.
        if let Some(at) = self.declined_at(cx.model) {
            body.push(Line::styled(
                fit(format!(
                    "unanswered, it is declined {}",
                    super::preview(at, &cx.now)
                )),
                Style::new().fg(palette().dim),
            ));
        }
        body.push(Line::from(vec![
            button(
                "Approve",
                self.choice == Some(Choice::Approve),
                palette().success,
            ),
            Span::raw("  "),
            button("Deny", self.choice == Some(Choice::Deny), palette().error),
            Span::styled(hint, Style::new().fg(palette().dim)),
        ]));
        if let Some(below) = below {
            body.push(Line::styled(below, Style::new().fg(palette().dim)));
        }
        boxed(
            &title,
            Some((BADGE, Style::new().fg(palette().warning))),
            body,
            width,
            palette().warning,
        )
    }
}

impl View for ApprovalCard {
    fn kind(&self) -> ViewKind {
        ViewKind::Approval
    }

    fn is_modal(&self) -> bool {
        false
    }

    fn handle_key(&mut self, key: KeyEvent, cx: &mut Cx<'_>) -> Outcome {
        let action = cx.keys.action(Scope::Approval, &key);
        let composer_empty = cx.composer_empty;
        if let Some(held) = self.held.take() {
            // More typing after a choice letter: it was a word, not a choice.
            if super::is_typing(&key) && action != Some(Action::Confirm) {
                self.choice = None;
                cx.push(Intent::Type(held));
                cx.push(Intent::Type(key));
                return Outcome::Consumed;
            }
        }
        match action {
            Some(Action::Left | Action::Right)
                if !composer_empty && Self::moves_the_cursor(&key) =>
            {
                // Editing the draft takes back a half-made choice, as typing does.
                self.choice = None;
                cx.push(Intent::Type(key));
            }
            Some(Action::Left) => self.choice = Some(Choice::Approve),
            // Tab steps through the buttons and then on, as it does without
            // a card: to the pending strip and the conversation list (the
            // card waits, nothing chosen). → goes to Deny.
            Some(Action::Right) if key.code == KeyCode::Tab => match self.choice {
                None => self.choice = Some(Choice::Approve),
                Some(Choice::Approve) => self.choice = Some(Choice::Deny),
                Some(Choice::Deny) => {
                    self.choice = None;
                    return Outcome::Ignored;
                }
            },
            Some(Action::Right) => self.choice = Some(Choice::Deny),
            Some(a @ (Action::PickApprove | Action::PickDeny)) if composer_empty => {
                self.choice = Some(if a == Action::PickApprove {
                    Choice::Approve
                } else {
                    Choice::Deny
                });
                self.held = Some(key);
            }
            Some(Action::ShowCall) => cx.push(Intent::Push(Box::new(super::call::Pager::call(
                &self.approval.tool,
                &self.approval.arguments,
            )))),
            // A slash command (`/tools` to see what the call would run,
            // `/later`, `/help`) is no answer: it runs, the card waits.
            Some(Action::Confirm) if self.choice.is_none() && cx.composer_command => {
                cx.push(Intent::Submit)
            }
            // A message is queued, as while a reply streams: it goes once
            // the call is answered and the turn is over. (An edit would
            // resend over the exchange that holds the call: it waits.)
            Some(Action::Confirm)
                if self.choice.is_none() && !composer_empty && !cx.composer_editing =>
            {
                cx.push(Intent::Submit)
            }
            Some(Action::Confirm) => match self.choice {
                Some(c) => {
                    cx.push(Intent::Answer {
                        id: self.approval.id,
                        approve: c == Choice::Approve,
                    });
                    return Outcome::Done;
                }
                None => {
                    let choose = match Self::chooser_beside_text(cx.keys) {
                        Some(tab) if !composer_empty => tab,
                        _ => format!(
                            "{} / {}",
                            cx.keys.first(Scope::Approval, Action::Left),
                            cx.keys.first(Scope::Approval, Action::Right)
                        ),
                    };
                    cx.push(Intent::KeyError(format!(
                        "choose Approve or Deny first ({choose}), then {}",
                        cx.keys.first(Scope::Approval, Action::Confirm),
                    )))
                }
            },
            _ if super::is_typing(&key) => {
                // Typing goes to the composer, and takes back a half-made choice.
                self.choice = None;
                cx.push(Intent::Type(key));
            }
            _ => return Outcome::Ignored,
        }
        Outcome::Consumed
    }

    fn handle_paste(&mut self, _text: &str, _cx: &mut Cx<'_>) -> Outcome {
        // Pastes go to the composer.
        Outcome::Ignored
    }

    fn render(&self, _area: Rect, buf: &mut Buffer, cx: &RenderCx<'_>) {
        let chat = cx.chat;
        let rows = self.rows(cx, chat.width);
        let h = (rows.len() as u16).min(chat.height);
        let r = Rect {
            x: chat.x,
            y: chat.y + chat.height - h,
            width: chat.width,
            height: h,
        };
        Clear.render(r, buf);
        Paragraph::new(rows).render(r, buf);
    }

    fn next_change(&self, now_ms: i64) -> Option<i64> {
        let s: serde_json::Value = serde_json::from_str(&self.approval.summary).unwrap_or_default();
        let due = s["due_at"]
            .as_i64()
            .and_then(|d| super::label_change(d, now_ms));
        let declined = self
            .declined
            .get()
            .and_then(|d| super::label_change(d, now_ms));
        due.into_iter().chain(declined).min()
    }
}
