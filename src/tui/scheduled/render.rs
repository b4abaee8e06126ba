//! Drawing the F2 pane: the title, the table of rows, the two detail lines
//! about the selected one, and the footer of keys. The popups over it are
//! in `popups`; a row's cells in `cells`.

use crate::tui::shown_zone::ShownZone;
use chrono::DateTime;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget, Wrap};
use unicode_width::UnicodeWidthStr;

use super::cells::{
    Cells, Col, GUTTER, State, absolute, cells, columns, conv_style, kind_style, put, row_kind, utc,
};
use super::list::Row;
use super::{DEFAULT_KEYS, Mode, ScheduledPane};
use crate::tui::keymap::{Action, Keymap, Scope};
use crate::tui::text::elide;
use crate::tui::theme::palette;
use crate::tui::time_picker::footer_line;
use crate::tui::views;
use crate::when;

impl ScheduledPane {
    // ---------------------------------------------------------------------
    // Rendering: a pure function of the state and `now`.
    // ---------------------------------------------------------------------

    pub fn render(&self, area: Rect, buf: &mut Buffer, now: DateTime<ShownZone>) {
        self.render_with(area, buf, now, &DEFAULT_KEYS);
    }

    /// Draw with the user's keymap in the footer.
    pub fn render_with(
        &self,
        area: Rect,
        buf: &mut Buffer,
        now: DateTime<ShownZone>,
        keys: &Keymap,
    ) {
        if area.width < 10 || area.height < 3 {
            return;
        }
        Clear.render(area, buf);
        let mut title = vec![
            Span::styled(" Scheduled ", Style::default().add_modifier(Modifier::BOLD)),
            Span::styled(
                format!("· {} ", self.count()),
                Style::default().fg(palette().accent),
            ),
        ];
        if self.show_all {
            let finished = self.list.finished();
            title.push(Span::styled(
                format!("· showing {finished} finished "),
                Style::default().fg(palette().dim),
            ));
        }
        // Top rule only: a full-screen overlay needs no side borders, and
        // 80 columns need every one of them.
        let block = Block::default()
            .borders(Borders::TOP)
            .border_style(Style::default().fg(palette().dim))
            .title(Line::from(title));
        let inner = block.inner(area);
        block.render(area, buf);

        let footer_y = inner.y + inner.height - 1;
        buf.set_line(
            inner.x,
            footer_y,
            &self.footer(inner.width, keys),
            inner.width,
        );
        let body = Rect::new(inner.x, inner.y, inner.width, inner.height - 1);

        if self.list.is_empty() {
            self.render_empty(body, buf);
        } else {
            self.render_table(body, buf, &now, keys);
        }

        match &self.mode {
            Mode::List => {}
            Mode::Reschedule { id, input, .. } => {
                self.render_reschedule(area, buf, &now, *id, input)
            }
            Mode::Edit {
                id, editor, error, ..
            } => self.render_edit(area, buf, *id, editor, error.as_deref()),
            Mode::ConfirmCancel { id, .. } => self.render_confirm(area, buf, *id, None),
            Mode::ConfirmSendEarly { id, ahead, .. } => {
                self.render_confirm(area, buf, *id, Some(ahead))
            }
            Mode::Rule { id, input, preview } => self.render_rule(area, buf, *id, input, preview),
        }
    }

    fn render_empty(&self, area: Rect, buf: &mut Buffer) {
        let hint = if self.show_all {
            "Nothing here yet. Type /later 10m <text> or /at 9am <text>, or press Ctrl+T in the composer."
        } else {
            "Nothing scheduled. Type /later 10m <text> or /at 9am <text>, or press Ctrl+T in the composer."
        };
        if area.height < 2 {
            return;
        }
        let text = Rect::new(area.x + 1, area.y + 1, area.width - 1, area.height - 1);
        Paragraph::new(Span::styled(hint, Style::default().fg(palette().dim)))
            .wrap(Wrap { trim: true })
            .render(text, buf);
    }

    fn render_table(&self, area: Rect, buf: &mut Buffer, now: &DateTime<ShownZone>, keys: &Keymap) {
        let now_ms = now.timestamp_millis();
        // An item that left the list by another hand is not selected any
        // more (no key acts on the row that slid into its place): no row
        // is marked then.
        let chosen = self.selected_index();
        let selected = chosen.unwrap_or(0);
        // The selected row's cells and its state in words, for the details.
        let selected_row = chosen
            .and_then(|i| self.list.get(i))
            .map(|r| (r, cells(r, now, now_ms)));
        let state = selected_row
            .as_ref()
            .map(|(r, c)| self.state_text(r, c, now, keys))
            .unwrap_or_default();
        // The detail lines (full text, state in words, last error) need a rule
        // and two rows, three when the state does not fit on one and there
        // is room; on very short terminals the list gets them instead.
        let state_rows: u16 = if state.width() > area.width as usize && area.height >= 12 {
            2
        } else {
            1
        };
        let detail_rows: u16 = if area.height >= 8 { 2 + state_rows } else { 0 };
        let list_height = area.height.saturating_sub(1 + detail_rows) as usize;
        // Series first, then the rest by time: a rule between them says
        // why a series due at 09:00 is above a message due at 05:45. Its
        // row is kept free wherever the window is.
        let series_end = self.list.series_end();
        let rows_height = list_height.saturating_sub(usize::from(series_end.is_some()));

        let offset = scroll_offset(self.offset.get(), selected, rows_height, self.list.len());
        self.offset.set(offset);
        self.page.set(rows_height);
        // Only the rows in the window (and the selected one, for its
        // details) are formatted: a list of 100,000 costs what a screen does.
        let end = (offset + rows_height).min(self.list.len());
        let window: Vec<Cells> = self
            .list
            .rows(offset, end)
            .map(|r| cells(r, now, now_ms))
            .collect();
        let cell =
            |i: usize| -> Option<&Cells> { i.checked_sub(offset).and_then(|k| window.get(k)) };
        // Each column as wide as its widest cell on screen.
        let widest = |cell: fn(&Cells) -> &str| {
            window.iter().map(|c| cell(c).width()).max().unwrap_or(0) as u16
        };
        let due_w = widest(|c| &c.due).max(3);
        let rel_w = widest(|c| &c.rel);
        let id_w = widest(|c| &c.id).max(1);
        let cols = columns(area.width, id_w, due_w, rel_w);

        let header = Style::default()
            .fg(palette().dim)
            .add_modifier(Modifier::BOLD);
        let mut x = area.x + GUTTER;
        for (col, w) in &cols {
            put(
                buf,
                x,
                area.y,
                col.header(*w),
                *w,
                header,
                *col == Col::Tries,
            );
            x += w + 1;
        }

        let rule_at = series_end.filter(|h| offset < *h && *h <= end);
        if let Some(h) = rule_at {
            let label = "── the rest by time ";
            let rule = format!(
                "{label}{}",
                "─".repeat((area.width as usize).saturating_sub(label.width() + GUTTER as usize))
            );
            buf.set_stringn(
                area.x + GUTTER,
                area.y + 1 + (h - offset) as u16,
                rule,
                area.width.saturating_sub(GUTTER) as usize,
                Style::default().fg(palette().dim),
            );
        }
        for (line, i) in (offset..end).enumerate() {
            let below_rule = rule_at.is_some_and(|h| i >= h);
            let y = area.y + 1 + line as u16 + u16::from(below_rule);
            let Some(row) = self.list.get(i) else { break };
            let Some(c) = cell(i) else { break };
            let is_sel = Some(i) == chosen;
            if is_sel && matches!(self.mode, Mode::List) {
                // Shown selected: a selection that moved by itself is acted on now.
                self.unseen.set(false);
            }
            if is_sel {
                buf.set_style(
                    Rect::new(area.x, y, area.width, 1),
                    Style::default().bg(palette().selection),
                );
                buf.set_stringn(
                    area.x,
                    y,
                    "›",
                    1,
                    Style::default()
                        .fg(palette().accent)
                        .add_modifier(Modifier::BOLD),
                );
            }
            let mut x = area.x + GUTTER;
            for (col, w) in &cols {
                let (text, style): (&str, Style) = match col {
                    Col::Id => (&c.id, Style::default().fg(palette().dim)),
                    Col::Due => (&c.due, Style::default()),
                    Col::Rel => (&c.rel, Style::default().fg(palette().dim)),
                    Col::Conv => (&c.conv, conv_style(row)),
                    Col::Kind if row.approval.is_some() => {
                        ("approval", Style::default().fg(palette().warning))
                    }
                    Col::Kind if row.series.is_some() => {
                        ("recurring", Style::default().fg(palette().accent))
                    }
                    Col::Kind => (row_kind(row.item.kind), kind_style(row.item.kind)),
                    Col::State => (c.state.label(), c.state.style()),
                    Col::Tries => (
                        &c.tries,
                        if row.item.attempts > 0 {
                            Style::default()
                        } else {
                            Style::default().fg(palette().dim)
                        },
                    ),
                    Col::Text => (&row.summary, Style::default()),
                };
                let style = if is_sel {
                    style.add_modifier(Modifier::BOLD)
                } else {
                    style
                };
                let right = matches!(col, Col::Tries);
                put(buf, x, y, text, *w, style, right);
                x += w + 1;
            }
        }

        // A prompt covers the detail lines and repeats what they say; half
        // of them peeking out around it would only be noise.
        if detail_rows > 0
            && matches!(self.mode, Mode::List)
            && (selected_row.is_some() || chosen.is_none())
        {
            let y = area.y + area.height - detail_rows;
            buf.set_stringn(
                area.x,
                y,
                "─".repeat(area.width as usize),
                area.width as usize,
                Style::default().fg(palette().dim),
            );
            match &selected_row {
                Some((row, c)) => self.render_detail(
                    Rect::new(area.x, y + 1, area.width, 1 + state_rows),
                    buf,
                    row,
                    c,
                    &state,
                ),
                // The selected item left the list by another hand (sent,
                // canceled elsewhere): no row is chosen in its place, so a
                // key pressed again acts on nothing. Said, where the
                // details were, not left blank.
                None => {
                    let hint = crate::tui::text::first_fitting(
                        &[
                            "nothing selected: the item left the list · ↑/↓ choose a row",
                            "nothing selected · ↑/↓ choose a row",
                            "↑/↓ choose a row",
                        ],
                        area.width as usize,
                    )
                    .copied()
                    .unwrap_or("");
                    buf.set_stringn(
                        area.x,
                        y + 1,
                        hint,
                        area.width as usize,
                        Style::default().fg(palette().dim),
                    );
                }
            }
        }
    }

    /// Lines about the selected item: its whole text, then its state in
    /// words, wrapped over the rows left.
    fn render_detail(&self, area: Rect, buf: &mut Buffer, row: &Row, c: &Cells, state: &str) {
        let w = area.width as usize;
        let it = &row.item;
        let kind = if row.series.is_some() {
            "recurring"
        } else if row.approval.is_some() {
            "approval"
        } else {
            row_kind(it.kind)
        };
        // The conversation's title gives way to the item's own text, down
        // to a third of the row.
        let fixed = format!("#{} {kind} in : ", c.id).width();
        let room = w.saturating_sub(fixed + row.summary.width());
        let conv = elide(&c.conv, room.max(w / 3).max(12));
        let head = format!("#{} {kind} in {conv}: ", c.id);
        let line = Line::from(vec![
            Span::styled(head.clone(), Style::default().fg(palette().dim)),
            Span::raw(elide(&row.summary, w.saturating_sub(head.width()))),
        ]);
        buf.set_line(area.x, area.y, &line, area.width);

        let rows = area.height.saturating_sub(1) as usize;
        let mut lines = crate::tui::chat::wrap_words(state, w.max(1));
        if lines.len() > rows {
            // What does not fit ends the last row with an ellipsis.
            let rest = lines.split_off(rows.saturating_sub(1)).join(" ");
            lines.push(elide(&rest, w));
        }
        let style = c.state.style().remove_modifier(Modifier::DIM);
        for (i, l) in lines.iter().take(rows).enumerate() {
            buf.set_stringn(area.x, area.y + 1 + i as u16, l, w, style);
        }
    }

    /// The selected item's state in words: what it waits for, what failed,
    /// and the key that helps.
    fn state_text(&self, row: &Row, c: &Cells, now: &DateTime<ShownZone>, keys: &Keymap) -> String {
        let it = &row.item;
        let now_ms = now.timestamp_millis();
        let err = row.error.as_deref().unwrap_or("no reason recorded");
        let plural = |n: i64| if n == 1 { "" } else { "s" };
        let series_line = row.series.as_ref().map(|v| {
            // Ended, its keys would only say so: what it did, instead.
            if let Some(record) = v.ended_record() {
                return format!("{} · {record}", v.description);
            }
            let next = if v.series.status == crate::store::SeriesStatus::Paused {
                " · paused: nothing is sent until it is resumed, then from the next time after that"
                    .to_string()
            } else {
                v.upcoming
                    .first()
                    .map(|t| format!(" · next {}", views::preview(*t, now)))
                    .unwrap_or_default()
            };
            // The series' own keys first: at 60 columns the rest is cut.
            let k = |a: Action| {
                keys.label(Scope::Scheduled, a)
                    .split(" / ")
                    .next()
                    .unwrap_or("")
                    .to_string()
            };
            let pause = if v.series.status == crate::store::SeriesStatus::Paused {
                "resume"
            } else {
                "pause"
            };
            format!(
                "{} {pause} · {} skip · {} rule · {}{next} · {} sent, {} skipped",
                k(Action::PauseSeries),
                k(Action::SkipNext),
                k(Action::RescheduleItem),
                v.description,
                v.series.occurrences,
                v.series.skipped
            )
        });
        match c.state {
            _ if series_line.is_some() => series_line.unwrap_or_default(),
            State::Scheduled => format!(
                "scheduled: sends {}",
                it.due_at
                    .map(|d| views::preview(d, now))
                    .unwrap_or_default()
            ),
            State::Active | State::SeriesPaused | State::Ended => String::new(),
            State::Asking => "waits for your answer: Enter goes to its conversation".to_string(),
            State::Queued => "queued: sent as soon as its conversation is free".to_string(),
            State::Paused => "waiting: its conversation's queue was paused by a stop (Enter goes there to resume)".to_string(),
            State::Approval => "waiting: a tool call in its conversation needs your approval (Enter goes there)".to_string(),
            State::Retrying => format!(
                "attempt {} failed: {err} · next try {}",
                it.attempts,
                it.next_attempt_at
                    .map(|t| views::countdown(t, now_ms))
                    .unwrap_or_default()
            ),
            State::Sending => format!("sending now (attempt {})", it.attempts.max(1)),
            // A reason that already counts the attempts is not told twice.
            State::Failed if err.ends_with("attempts)") => format!("failed: {err} · R retries"),
            State::Failed => format!(
                "failed after {} attempt{}: {err} · R retries",
                it.attempts,
                plural(it.attempts)
            ),
            State::Expired => format!("expired: {err} · R sends it now"),
            State::Sent => format!(
                "sent {}",
                it.sent_at
                    .map(|t| when::happened(t, now_ms))
                    .map(|t| format!("{} ({})", absolute(utc(t), now), when::relative(t, now_ms)))
                    .unwrap_or_default()
            ),
            State::Canceled => match &row.error {
                Some(e) => format!("canceled: {e}"),
                None => "canceled".to_string(),
            },
            // Its error says why: "skipped: a newer occurrence came due …".
            State::Skipped => row.error.clone().unwrap_or_else(|| "skipped".to_string()),
        }
    }

    fn footer(&self, width: u16, keys: &Keymap) -> Line<'static> {
        let finished = if self.show_all {
            "hide finished"
        } else {
            "show finished"
        };
        let k = |a: Action| keys.label(Scope::Scheduled, a);
        let (up, down) = (k(Action::Up), k(Action::Down));
        // "↑ / k" and "↓ / j" read as "↑↓/jk": the arrows first, then the letters.
        let split = |s: &str| -> (String, String) {
            let mut parts = s.split(" / ");
            (
                parts.next().unwrap_or("").to_string(),
                parts.collect::<Vec<_>>().join(""),
            )
        };
        let ((ua, ul), (da, dl)) = (split(&up), split(&down));
        let mv = format!("{ua}{da}/{dl}{ul}");
        let mv_short = format!("{dl}{ul}");
        let first = |a: Action| k(a).split(" / ").next().unwrap_or("").to_string();
        let (r, e, x, s, rr, jump, all, close) = (
            first(Action::RescheduleItem),
            first(Action::EditItem),
            first(Action::CancelItem),
            first(Action::SendNow),
            first(Action::RetryItem),
            first(Action::Jump).replace("Enter", "⏎"),
            first(Action::ShowFinished),
            first(Action::Back),
        );
        // A tool call waiting for an answer: it is answered in its
        // conversation; the item keys do nothing to it (they were listed).
        if self
            .selected_row()
            .is_some_and(|row| row.approval.is_some())
        {
            let variants: [Vec<(&str, &str)>; 3] = [
                vec![
                    (&mv, "select"),
                    (&jump, "answer it in its conversation"),
                    (&all, finished),
                    (&close, "close"),
                ],
                vec![
                    (&mv, "move"),
                    (&jump, "answer it"),
                    (&all, "finished"),
                    (&close, "close"),
                ],
                vec![(&mv_short, ""), (&jump, "answer"), (&close, "")],
            ];
            return fitting_footer(variants, width);
        }
        // A series selected: its own keys (pause and skip were in no hint).
        if let Some(series) = self
            .selected_row()
            .and_then(|row| row.series.as_ref())
            .filter(|v| v.series.status != crate::store::SeriesStatus::Ended)
        {
            let (p, n) = (first(Action::PauseSeries), first(Action::SkipNext));
            let pause = if series.series.status == crate::store::SeriesStatus::Paused {
                "resume"
            } else {
                "pause"
            };
            let variants: [Vec<(&str, &str)>; 3] = [
                vec![
                    (&mv, "select"),
                    (&p, pause),
                    (&n, "skip next"),
                    (&r, "rule"),
                    (&e, "edit"),
                    (&x, "end"),
                    (&s, "send one now"),
                    (&jump, "jump"),
                    (&all, finished),
                    (&close, "close"),
                ],
                vec![
                    (&mv, "move"),
                    (&p, pause),
                    (&n, "skip"),
                    (&r, "rule"),
                    (&e, "edit"),
                    (&x, "end"),
                    (&s, "send"),
                    (&jump, "jump"),
                    (&all, "finished"),
                    (&close, "close"),
                ],
                vec![
                    (&mv_short, ""),
                    (&p, pause),
                    (&n, "skip"),
                    (&r, "rule"),
                    (&e, "edit"),
                    (&x, "end"),
                    (&s, "send"),
                    (&close, ""),
                ],
            ];
            return fitting_footer(variants, width);
        }
        // Longest first, roomy spacing first; the first that fits is shown,
        // so 80 columns still list every key.
        let variants: [Vec<(&str, &str)>; 3] = [
            vec![
                (&mv, "select"),
                (&r, "reschedule"),
                (&e, "edit"),
                (&x, "cancel"),
                (&s, "send now"),
                (&rr, "retry"),
                (&jump, "jump"),
                (&all, finished),
                (&close, "close"),
            ],
            vec![
                (&mv, "move"),
                (&r, "resched"),
                (&e, "edit"),
                (&x, "cancel"),
                (&s, "send"),
                (&rr, "retry"),
                (&jump, "jump"),
                (&all, "finished"),
                (&close, "close"),
            ],
            vec![
                (&mv_short, ""),
                (&r, "time"),
                (&e, "edit"),
                (&x, "cancel"),
                (&s, "send"),
                (&rr, "retry"),
                (&jump, "go"),
                (&all, "all"),
                (&close, ""),
            ],
        ];
        fitting_footer(variants, width)
    }
}

/// The first of `variants` (longest first) that fits in `width`, roomy
/// spacing first. Narrower still: keys go from the end of the shortest,
/// but the one that closes the pane stays (F1 lists them all).
fn fitting_footer(variants: [Vec<(&str, &str)>; 3], width: u16) -> Line<'static> {
    for keys in &variants {
        for sep in ["  ", " "] {
            let line = footer_line(keys, sep);
            if line.width() <= width as usize {
                return line;
            }
        }
    }
    let [.., mut keys] = variants;
    while keys.len() > 2 && footer_line(&keys, " ").width() > width as usize {
        keys.remove(keys.len() - 2);
    }
    footer_line(&keys, " ")
}

/// The first visible row: unchanged unless the selection would leave the
/// window, so moving within a page does not scroll.
fn scroll_offset(prev: usize, selected: usize, height: usize, len: usize) -> usize {
    if height == 0 {
        return selected;
    }
    let mut off = prev.min(len.saturating_sub(height));
    if selected < off {
        off = selected;
    } else if selected >= off + height {
        off = selected + 1 - height;
    }
    off
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scroll_keeps_the_window_until_the_selection_leaves_it() {
        // Moving within the window does not scroll.
        assert_eq!(scroll_offset(5, 7, 10, 30), 5);
        // Past the bottom: the selection becomes the last visible row.
        assert_eq!(scroll_offset(5, 15, 10, 30), 6);
        // Above the top: it becomes the first.
        assert_eq!(scroll_offset(5, 2, 10, 30), 2);
        // A list that shrank does not leave blank rows at the bottom.
        assert_eq!(scroll_offset(25, 8, 10, 12), 2);
    }
}
