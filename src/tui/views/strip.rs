//! The pending strip: the current conversation's unsent items, between the
//! history and the composer. The selection is an item id, not a row: when
//! items leave, arrive or reorder, the cursor stays on the same item. When
//! the item leaves because the user acted on it (cancel, send now, back into
//! the composer), the row that took its place is selected, as in any list;
//! when it leaves otherwise (sent by the dispatcher, changed by another
//! process), nothing is selected. Either way no key acts on a row the user
//! has not seen selected: a selection moved that way waits for a frame to
//! show it before a key acts on it.

use crate::tui::theme::palette;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::{Cx, Intent, Outcome, RenderCx};
use crate::engine::{ItemAction, ItemState};
use crate::sanitize::sanitize_line;
use crate::store::OutboxItem;
use crate::tui::keymap::{Action, Scope};
use crate::tui::model::local;
use crate::tui::text::elide;
use crate::when;

#[derive(Default)]
pub struct Strip {
    /// The item the cursor is on, by id.
    pub selected: Option<i64>,
    /// The selected item the user acted on in a way that takes it out of
    /// the strip (cancel, send now, back into the composer): when it
    /// leaves, the row that took its place is selected.
    acted_on: Option<i64>,
    /// The strip's items, in order, as last seen: where an item that left was.
    order: Vec<i64>,
    /// The selection moved by itself (to the row that took the place of
    /// the item acted on) and no frame has shown it yet: no key acts on it
    /// until one has (a key typed ahead was meant for the item that left).
    unseen: bool,
}

fn dim() -> Style {
    Style::new().fg(palette().dim)
}

/// The strip's state badge of an item: icon, words and colour.
pub fn badge(state: &ItemState, now: i64, compact: bool) -> (String, Style) {
    let now_local = local(now);
    match state {
        ItemState::Queued => ("⏳ queued".into(), Style::new().fg(palette().info)),
        ItemState::Sending => ("◌ sending".into(), Style::new().fg(palette().warning)),
        ItemState::Paused => ("⏸ paused".into(), Style::new().fg(palette().warning)),
        // Queued behind the call (the status bar counts it as queued):
        // the call's own card and count say what it waits for.
        ItemState::AwaitingApproval => (
            "⏳ after the approval".into(),
            Style::new().fg(palette().info),
        ),
        ItemState::RunningTool => (
            "⏳ after the approved tool call".into(),
            Style::new().fg(palette().info),
        ),
        ItemState::Retrying { at, reason } => {
            // Whole seconds left at the last tick, as every countdown (see
            // `label_at`): "0s" in the last part-second, never after `at`.
            let secs = (at - super::label_at(*at, now)) / 1000;
            let why = if compact {
                String::new()
            } else {
                format!(": {}", elide(&sanitize_line(reason), 30))
            };
            (
                format!("↯ retrying in {secs}s{why}"),
                Style::new().fg(palette().warning),
            )
        }
        ItemState::Scheduled { at } => {
            let due = chrono::DateTime::from_timestamp_millis(*at).unwrap_or_default();
            let text = if compact {
                format!("⏰ {}", super::countdown(*at, now))
            } else {
                format!(
                    "⏰ {} ({})",
                    when::absolute(due, &now_local),
                    super::countdown(*at, now)
                )
            };
            (text, Style::new().fg(palette().accent))
        }
        ItemState::Failed { reason } => {
            let why = if compact {
                String::new()
            } else {
                format!(": {}", elide(&sanitize_line(reason), 40))
            };
            (format!("✗ failed{why}"), Style::new().fg(palette().error))
        }
        ItemState::Expired => ("⌛ expired".into(), Style::new().fg(palette().special)),
        ItemState::Sent => ("✓ sent".into(), dim()),
        ItemState::Canceled => ("canceled".into(), dim()),
    }
}

/// Shorter wordings of an item's badge, longest first, for where
/// [`badge`]'s does not fit: a time's date in fewer words (`⏰ 17:12 (in 9m
/// 4s)` today), then its countdown alone.
fn shorter(state: &ItemState, now: i64) -> Vec<String> {
    match state {
        ItemState::Scheduled { at } => {
            let countdown = super::countdown(*at, now);
            vec![
                format!(
                    "⏰ {} ({countdown})",
                    super::short_absolute(*at, &local(now))
                ),
                format!("⏰ {countdown}"),
            ]
        }
        _ => Vec::new(),
    }
}

impl Strip {
    fn items<'a>(&self, cx_model: &'a crate::tui::model::Model) -> Vec<&'a OutboxItem> {
        cx_model.strip_items().collect()
    }

    /// The selected item, if it is still in the strip.
    pub fn selected_item<'a>(&self, model: &'a crate::tui::model::Model) -> Option<&'a OutboxItem> {
        let id = self.selected?;
        model.strip_items().find(|i| i.id == id)
    }

    /// Called when focus arrives: select the first item if none is.
    pub fn focus(&mut self, model: &crate::tui::model::Model) {
        if self.selected_item(model).is_none() {
            self.selected = model.strip_items().next().map(|i| i.id);
        }
    }

    /// The user acts on item `id` in a way that takes it out of the strip:
    /// if it is the one selected, the row that takes its place is selected
    /// when it leaves. True if this marked it (it was not marked already),
    /// for [`Strip::not_acted_on`] if the action fails.
    pub fn acted_on(&mut self, id: i64, model: &crate::tui::model::Model) -> bool {
        if self.selected != Some(id) || self.acted_on == Some(id) {
            return false;
        }
        self.acted_on = Some(id);
        self.order = model.strip_items().map(|i| i.id).collect();
        true
    }

    /// The action that marked item `id` failed: it is not leaving because
    /// of it. (One that failed on an item an earlier action already takes
    /// out, typed ahead, leaves that mark.)
    pub fn not_acted_on(&mut self, id: i64) {
        if self.acted_on == Some(id) {
            self.acted_on = None;
        }
    }

    /// The database changed. A selected item that left because the user
    /// acted on it gives way to the row that took its place (the next one,
    /// or the one before if it was last), not acted on until a frame has
    /// shown it ([`Strip::drawn`]); one that left otherwise is unselected
    /// (never replaced by the one that slid into its row).
    pub fn sync(&mut self, model: &crate::tui::model::Model) {
        let present = |id: i64| model.strip_items().any(|i| i.id == id);
        if let Some(id) = self.selected
            && !present(id)
        {
            self.selected = None;
            if self.acted_on == Some(id)
                && let Some(pos) = self.order.iter().position(|&i| i == id)
            {
                let after = self.order[pos + 1..].iter();
                let before = self.order[..pos].iter().rev();
                self.selected = after.chain(before).copied().find(|&i| present(i));
                self.unseen = self.selected.is_some();
            }
        }
        if self.acted_on.is_some_and(|id| !present(id)) {
            self.acted_on = None;
        }
        self.order = model.strip_items().map(|i| i.id).collect();
    }

    /// A frame was drawn showing item `marked` selected in the strip (None:
    /// no selection shown: the strip hidden, unfocused or covered).
    pub fn drawn(&mut self, marked: Option<i64>) {
        if marked.is_some() && marked == self.selected {
            self.unseen = false;
        }
    }

    pub fn handle_key(&mut self, key: KeyEvent, cx: &mut Cx<'_>) -> Outcome {
        let Some(action) = cx.keys.action(Scope::Strip, &key) else {
            return Outcome::Ignored;
        };
        let items = self.items(cx.model);
        match action {
            Action::Up | Action::Down => {
                let pos = self
                    .selected
                    .and_then(|id| items.iter().position(|i| i.id == id));
                let next = match (pos, action) {
                    (None, _) => 0,
                    (Some(p), Action::Up) => p.saturating_sub(1),
                    (Some(p), _) => (p + 1).min(items.len().saturating_sub(1)),
                };
                self.selected = items.get(next).map(|i| i.id);
                // Chosen by the user: what the keys act on is where they put it.
                self.unseen = false;
                return Outcome::Consumed;
            }
            Action::Back => {
                cx.push(Intent::Focus(crate::tui::app::Focus::Composer));
                return Outcome::Consumed;
            }
            Action::CancelQueued => {
                let queued = items
                    .iter()
                    .filter(|i| {
                        i.status == crate::store::Status::Pending
                            && i.due_at.is_none()
                            && !i.accepted()
                    })
                    .count();
                match (cx.model.current, queued) {
                    (Some(conv), n) if n > 0 => cx.push(Intent::Push(Box::new(
                        super::confirm::Confirm::cancel_queued(conv, n),
                    ))),
                    _ => cx.push(Intent::Info("nothing is queued here".into())),
                }
                return Outcome::Consumed;
            }
            Action::Resume => {
                if cx.model.paused() {
                    cx.push(Intent::ResumeQueue);
                } else {
                    cx.push(Intent::Info("the queue is not paused".into()));
                }
                return Outcome::Consumed;
            }
            _ => {}
        }
        let Some(item) = self.selected_item(cx.model) else {
            cx.push(Intent::Error(
                "no item selected (the one you chose has left the strip): ↑/↓ to choose".into(),
            ));
            return Outcome::Consumed;
        };
        if self.unseen {
            // Typed ahead for the item that left: not for the one that
            // took its place, which the user has not seen selected yet.
            cx.push(Intent::KeyError(
                "the item you chose has left; the next one is selected now: press again to act on it"
                    .into(),
            ));
            return Outcome::Consumed;
        }
        let (id, seen) = (item.id, item.updated_at);
        match action {
            Action::EditItem => cx.push(Intent::Push(Box::new(super::prompt::Prompt::edit_item(
                id, seen, &item.text,
            )))),
            Action::RescheduleItem => cx.push(Intent::Push(Box::new(
                super::prompt::Prompt::reschedule(id, seen, item.due_at),
            ))),
            Action::CancelItem => cx.push(Intent::Push(Box::new(
                super::confirm::Confirm::cancel_item(id, seen, &item.text),
            ))),
            // Ahead of its time only when that is confirmed.
            Action::SendNow => match super::sent_early_by(item.due_at, cx.now_ms) {
                Some(ahead) => cx.push(Intent::Push(Box::new(
                    super::confirm::Confirm::send_early(id, seen, &item.text, &ahead),
                ))),
                None => cx.push(Intent::Item {
                    id,
                    seen,
                    action: ItemAction::SendNow,
                }),
            },
            Action::RetryItem => cx.push(Intent::Item {
                id,
                seen,
                action: ItemAction::Retry,
            }),
            Action::PullBack => cx.push(Intent::PullBack {
                id,
                seen,
                stopped: false,
            }),
            _ => return Outcome::Ignored,
        }
        Outcome::Consumed
    }

    /// Header rows and item rows for `width`; at most `max` rows in all, the
    /// selected item kept in view and "+N more" when items do not fit. With
    /// them, which line shows which item (for clicks).
    pub fn lines(
        &self,
        cx: &RenderCx<'_>,
        width: u16,
        max: usize,
        focused: bool,
    ) -> (Vec<Line<'static>>, Vec<(usize, i64)>) {
        let items: Vec<&OutboxItem> = cx.model.strip_items().collect();
        let mut item_lines = Vec::new();
        if items.is_empty() && !cx.model.paused() {
            return (Vec::new(), item_lines);
        }
        // Failed and expired items are not pending: they go only if retried.
        let failed = items.iter().filter(|i| i.status.gave_up()).count();
        let title = match (items.len() - failed, failed) {
            (pending, 0) => format!("─ pending ({pending}) "),
            (0, failed) => format!("─ failed ({failed}) "),
            (pending, failed) => format!("─ pending ({pending}) · failed ({failed}) "),
        };
        let mut head = vec![Span::styled(
            title,
            if focused {
                Style::new()
                    .fg(palette().accent)
                    .add_modifier(Modifier::BOLD)
            } else {
                dim()
            },
        )];
        if cx.model.paused() {
            let resume = cx.keys.label(Scope::Strip, Action::Resume);
            let send = cx.keys.label(Scope::Strip, Action::SendNow);
            // A reply that failed for good holds the queue as a stop does;
            // only a failure that made this pause explains it (one passed
            // over since does not explain a later stop).
            let since = cx.model.gate(cx.model.current).paused_at.unwrap_or(0);
            let cause = |i: &crate::store::OutboxItem| i.status.gave_up() && i.updated_at >= since;
            let why = if items.iter().any(|i| cause(i) && i.accepted()) {
                "a failed reply"
            } else if items.iter().any(|i| cause(i)) {
                "a failed message"
            } else {
                "stop"
            };
            // The strip's keys work once it has the focus: say how to get there.
            let how = if focused {
                format!("{resume} or {send} resumes")
            } else {
                let tab = focus_key(cx);
                format!("{tab}, {resume} resumes")
            };
            head.push(Span::styled(
                format!("⏸ paused after {why} — {how} "),
                Style::new().fg(palette().warning),
            ));
        }
        let hints = if focused {
            cx.keys.hints(
                Scope::Strip,
                &[
                    (Action::EditItem, "edit"),
                    (Action::CancelItem, "cancel"),
                    (Action::CancelQueued, "cancel all"),
                    (Action::SendNow, "send now"),
                    (Action::PullBack, "to composer"),
                    (Action::RescheduleItem, "reschedule"),
                    (Action::RetryItem, "retry"),
                    (Action::Back, "back"),
                ],
            )
        } else if cx.model.paused() {
            // The pause's line already names the key.
            Vec::new()
        } else {
            vec![format!("{} to manage", focus_key(cx))]
        };
        let mut rows: Vec<Line<'static>> = pack_hints(head, hints, width as usize, focused);
        let room = max.saturating_sub(rows.len()).max(1);
        let compact = width < 50;
        let sel = self
            .selected
            .and_then(|id| items.iter().position(|i| i.id == id));
        // The window: from the top, unless the selection is further down.
        let fits = items.len() <= room;
        let shown = if fits {
            room
        } else {
            room.saturating_sub(1).max(1)
        };
        let first = match sel {
            Some(p) if focused && p >= shown => p + 1 - shown,
            _ => 0,
        };
        for (i, it) in items.iter().enumerate().skip(first).take(shown) {
            let state = cx.model.state_of(it, cx.now_ms);
            let (badge, style) = match &state {
                // Already in the conversation: its reply is being generated again.
                ItemState::Retrying { at, .. } if it.accepted() => (
                    format!("↯ reply again in {}s", ((at - cx.now_ms) + 999) / 1000),
                    Style::new().fg(palette().warning),
                ),
                _ => badge(&state, cx.now_ms, compact),
            };
            let is_sel = focused && Some(i) == sel;
            let marker = if is_sel { "› " } else { "  " };
            // An accepted item is already in the conversation: what waits is its reply.
            let shown = if it.accepted() {
                format!("to “{}”", sanitize_line(&it.text).trim())
            } else {
                sanitize_line(&it.text).trim().to_string()
            };
            // Files sent with it show as the chat shows them: a 📎.
            let files = cx.model.item_files.get(&it.id).copied().unwrap_or(0);
            let shown = match files {
                0 => shown,
                1 => format!("📎 {shown}"),
                n => format!("📎{n} {shown}"),
            };
            // The item's own text keeps up to half the row (a long error
            // left it a few letters, and which message failed was lost).
            let w = width as usize;
            let text_min =
                unicode_width::UnicodeWidthStr::width(shown.as_str()).min((w / 2).max(12));
            // A time's badge (`⏰ Mon 30 Nov 01:53 (in 1h)`) stays whole.
            let badge_max = w
                .saturating_sub(2 + 3 + text_min)
                .max(28.min(w.saturating_sub(13)))
                .max(6);
            // Else a shorter wording, whole (`⏰ 17:12 (in 9m 4s)`); cut
            // only where none fits.
            let badge = if unicode_width::UnicodeWidthStr::width(badge.as_str()) > badge_max {
                let forms = shorter(&state, cx.now_ms);
                crate::tui::text::first_fitting(&forms, badge_max)
                    .cloned()
                    .unwrap_or_else(|| elide(&badge, badge_max))
            } else {
                badge
            };
            let used = unicode_width::UnicodeWidthStr::width(marker)
                + unicode_width::UnicodeWidthStr::width(badge.as_str())
                + 3;
            let text = elide(&shown, (width as usize).saturating_sub(used).max(8));
            let mut text_style = Style::new();
            if is_sel {
                text_style = text_style.add_modifier(Modifier::REVERSED);
            }
            item_lines.push((rows.len(), it.id));
            rows.push(Line::from(vec![
                Span::styled(marker, Style::new().fg(palette().accent)),
                Span::styled(badge, style),
                Span::raw(" · "),
                Span::styled(text, text_style),
            ]));
        }
        let hidden = items.len().saturating_sub(first + shown);
        if hidden > 0 || first > 0 {
            let mut more = Vec::new();
            if first > 0 {
                more.push(format!("{first} above"));
            }
            if hidden > 0 {
                more.push(format!("+{hidden} more"));
            }
            rows.push(Line::styled(
                format!("  {} (F2 lists all)", more.join(", ")),
                dim(),
            ));
        }
        (rows, item_lines)
    }

    /// A click on an item's row: it is selected (the strip takes the focus).
    pub fn click(&mut self, id: i64) {
        self.selected = Some(id);
        self.unseen = false;
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, lines: Vec<Line<'static>>) {
        Paragraph::new(lines).render(area, buf);
    }

    /// When a countdown in the strip next changes (scheduled or retrying items).
    pub fn next_change(&self, model: &crate::tui::model::Model, now: i64) -> Option<i64> {
        model
            .strip_items()
            .filter_map(|i| match model.state_of(i, now) {
                ItemState::Scheduled { at } | ItemState::Retrying { at, .. } => {
                    super::label_change(at, now)
                }
                _ => None,
            })
            .min()
    }
}

/// The title spans, then the key hints packed into rows (each hint whole).
fn pack_hints(
    title: Vec<Span<'static>>,
    hints: Vec<String>,
    w: usize,
    wrap: bool,
) -> Vec<Line<'static>> {
    // A note after the title ("paused after stop — …") is set off from the
    // hints that follow it on its row.
    let after_note = title.len() > 1;
    let mut rows: Vec<Vec<Span<'static>>> = vec![title];
    let mut used: usize = rows[0].iter().map(|s| s.width()).sum();
    let mut row = String::new();
    for h in hints {
        let hw = unicode_width::UnicodeWidthStr::width(h.as_str());
        let lead = |row: &str, on_title: bool| match (row.is_empty(), on_title && after_note) {
            (false, _) => " · ",
            (true, true) => "· ",
            (true, false) => "",
        };
        let need = unicode_width::UnicodeWidthStr::width(lead(&row, rows.len() == 1)) + hw;
        if used + unicode_width::UnicodeWidthStr::width(row.as_str()) + need > w {
            if !wrap {
                break;
            }
            if !row.is_empty()
                && let Some(last) = rows.last_mut()
            {
                last.push(Span::styled(std::mem::take(&mut row), dim()));
            }
            rows.push(vec![Span::raw("  ")]);
            used = 2;
        }
        row.push_str(lead(&row, rows.len() == 1));
        row.push_str(&h);
    }
    if !row.is_empty()
        && let Some(last) = rows.last_mut()
    {
        last.push(Span::styled(row, dim()));
    }
    rows.into_iter().map(Line::from).collect()
}

/// The key that moves the focus here from the composer (Shift+Tab: there
/// Tab completes, indents, or stays).
fn focus_key(cx: &RenderCx) -> String {
    cx.keys.first(Scope::Main, Action::FocusNext)
}
