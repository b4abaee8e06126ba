//! A row of the F2 pane as cells: which columns fit the width, the state
//! a row reads as, the time-dependent text of each column, and the styles.

use crate::tui::shown_zone::ShownZone;
use chrono::{DateTime, TimeZone, Utc};
use ratatui::buffer::Buffer;
use ratatui::style::{Modifier, Style};
use unicode_width::UnicodeWidthStr;

use super::list::Row;
use crate::engine::{ConversationGate, ItemState};
use crate::store::{Kind, OutboxItem};
use crate::tui::text::elide;
use crate::tui::theme::palette;
use crate::tui::views;

/// Width of the selection marker column on the left.
pub(super) const GUTTER: u16 = 2;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Col {
    Id,
    Due,
    Rel,
    Conv,
    Kind,
    State,
    Tries,
    Text,
}

impl Col {
    pub(super) fn header(self, width: u16) -> &'static str {
        match self {
            Col::Id => "#",
            Col::Due => "due",
            Col::Rel => "",
            Col::Conv if width < 12 => "conv",
            Col::Conv => "conversation",
            Col::Kind => "kind",
            Col::State => "state",
            Col::Tries => "tries",
            Col::Text => "text",
        }
    }
}

/// Which columns fit in `width`, and how wide each is. Columns are dropped
/// least useful first (the id and attempt count are in the detail lines, the
/// kind and relative time are nice to have); the text and conversation
/// columns share what is left.
pub(super) fn columns(width: u16, id_w: u16, due_w: u16, rel_w: u16) -> Vec<(Col, u16)> {
    const CONV_MIN: u16 = 10;
    const CONV_MAX: u16 = 24;
    // Below this the text is unreadable: optional columns go first.
    const TEXT_MIN: u16 = 20;
    let mut cols = vec![
        (Col::Id, id_w),
        (Col::Due, due_w),
        (Col::Rel, rel_w),
        (Col::Conv, CONV_MIN),
        (Col::Kind, 9),
        (Col::State, 9),
        (Col::Tries, 5),
        (Col::Text, TEXT_MIN),
    ];
    if rel_w == 0 {
        cols.retain(|(c, _)| *c != Col::Rel);
    }
    let avail = width.saturating_sub(GUTTER);
    let need = |cols: &[(Col, u16)]| -> u16 {
        cols.iter().map(|(_, w)| w).sum::<u16>() + cols.len().saturating_sub(1) as u16
    };
    for drop in [Col::Id, Col::Tries, Col::Kind, Col::Rel, Col::Conv] {
        if need(&cols) <= avail {
            break;
        }
        cols.retain(|(c, _)| *c != drop);
    }
    let extra = avail.saturating_sub(need(&cols));
    // Half the slack to the conversation title (up to a cap), the rest to
    // the text.
    let conv_extra = (extra / 2).min(CONV_MAX - CONV_MIN);
    let has_conv = cols.iter().any(|(c, _)| *c == Col::Conv);
    let text_extra = if has_conv { extra - conv_extra } else { extra };
    for (c, w) in cols.iter_mut() {
        match c {
            Col::Conv => *w += conv_extra,
            Col::Text => *w += text_extra,
            _ => {}
        }
    }
    // Too narrow even without the optional columns: the text takes what is left.
    let over = need(&cols).saturating_sub(avail);
    if over > 0
        && let Some((_, w)) = cols.iter_mut().find(|(c, _)| *c == Col::Text)
    {
        *w = w.saturating_sub(over);
    }
    cols
}

/// How a row's state reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    /// Pending, due in the future.
    Scheduled,
    /// Pending and due: waits for its conversation (or the dispatcher).
    Queued,
    /// A tool call waiting for the user's answer.
    Asking,
    /// A recurring series that fires.
    Active,
    /// A recurring series paused by the user.
    SeriesPaused,
    /// A recurring series that has ended.
    Ended,
    /// Its conversation's queue was paused by a stop.
    Paused,
    /// Waits for a tool call's approval in its conversation.
    Approval,
    /// Pending after a failed attempt, waiting out its back-off.
    Retrying,
    Sending,
    Failed,
    Expired,
    Sent,
    Canceled,
    /// An occurrence replaced by a newer one of its series before it went.
    Skipped,
}

impl State {
    /// From the engine's one item state (the strip, the status bar and
    /// `tock list` show the same).
    fn of(item: &OutboxItem, now_ms: i64, gate: ConversationGate) -> Self {
        match crate::engine::item_state(item, now_ms, gate) {
            ItemState::Retrying { .. } => State::Retrying,
            ItemState::Scheduled { .. } => State::Scheduled,
            ItemState::Queued => State::Queued,
            ItemState::Paused => State::Paused,
            ItemState::AwaitingApproval => State::Approval,
            ItemState::RunningTool => State::Queued,
            ItemState::Sending => State::Sending,
            ItemState::Failed { .. } => State::Failed,
            ItemState::Expired => State::Expired,
            ItemState::Sent => State::Sent,
            // Replaced by a newer occurrence while it waited: the
            // conversation and the series' counts call it skipped.
            ItemState::Canceled
                if item.series_id.is_some()
                    && item
                        .last_error
                        .as_deref()
                        .is_some_and(|e| e.starts_with("skipped")) =>
            {
                State::Skipped
            }
            ItemState::Canceled => State::Canceled,
        }
    }

    pub(super) fn label(self) -> &'static str {
        match self {
            State::Scheduled => "scheduled",
            State::Queued => "queued",
            State::Paused => "paused",
            State::Active => "active",
            State::Asking => "asking",
            State::SeriesPaused => "paused",
            State::Ended => "ended",
            State::Approval => "approval",
            State::Retrying => "retrying",
            State::Sending => "sending",
            State::Failed => "failed",
            State::Expired => "expired",
            State::Sent => "sent",
            State::Canceled => "canceled",
            State::Skipped => "skipped",
        }
    }

    pub(super) fn style(self) -> Style {
        let s = Style::default();
        match self {
            State::Scheduled => s.fg(palette().accent),
            State::Queued => s.fg(palette().info),
            State::Paused | State::Approval | State::SeriesPaused => s.fg(palette().warning),
            State::Active => s.fg(palette().accent),
            State::Asking => s.fg(palette().warning).add_modifier(Modifier::BOLD),
            State::Ended => s.add_modifier(Modifier::DIM),
            State::Retrying => s.fg(palette().warning),
            State::Sending => s.fg(palette().info).add_modifier(Modifier::BOLD),
            State::Failed => s.fg(palette().error).add_modifier(Modifier::BOLD),
            State::Expired => s.fg(palette().special),
            State::Sent => s.fg(palette().success).add_modifier(Modifier::DIM),
            State::Canceled | State::Skipped => s.add_modifier(Modifier::DIM),
        }
    }
}

/// The time-dependent text of a row, computed per frame.
pub(super) struct Cells {
    pub(super) id: String,
    pub(super) due: String,
    pub(super) rel: String,
    pub(super) conv: String,
    pub(super) state: State,
    pub(super) tries: String,
}

pub(super) fn cells(row: &Row, now: &DateTime<ShownZone>, now_ms: i64) -> Cells {
    let it = &row.item;
    let paused = row
        .series
        .as_ref()
        .is_some_and(|v| v.series.status == crate::store::SeriesStatus::Paused);
    // A row done with (sent, canceled, failed, expired: shown with `a`, or
    // waiting for `R`) counts down to nothing and is not sent "asap": a
    // sent one says when it went, the others the time they had, if any.
    use crate::store::Status as S;
    let done = row.series.is_none()
        && row.approval.is_none()
        && matches!(it.status, S::Sent | S::Canceled | S::Failed | S::Expired);
    let (due, rel) = match it.due_at {
        _ if done && it.status == S::Sent => (
            absolute(
                utc(crate::when::happened(
                    it.sent_at.unwrap_or(it.updated_at),
                    now_ms,
                )),
                now,
            ),
            "sent".to_string(),
        ),
        Some(d) if done => (absolute(utc(d), now), String::new()),
        None if done => ("—".to_string(), String::new()),
        // A paused series sends nothing at its next time (resuming goes
        // from the next one after then): no time that counts down.
        Some(_) if paused => ("—".to_string(), String::new()),
        Some(d) => (absolute(utc(d), now), views::countdown(d, now_ms)),
        // A series with no next occurrence has ended; an approval has no time.
        None if row.series.is_some() || row.approval.is_some() => ("—".to_string(), String::new()),
        None => ("asap".to_string(), String::new()),
    };
    Cells {
        id: match &row.approval {
            Some(a) => format!("a{}", a.id),
            None => it.id.to_string(),
        },
        due,
        rel,
        conv: row
            .conversation
            .clone()
            .unwrap_or_else(|| "(deleted)".to_string()),
        state: match row.series.as_ref().map(|v| v.series.status) {
            _ if row.approval.is_some() => State::Asking,
            Some(crate::store::SeriesStatus::Active) => State::Active,
            Some(crate::store::SeriesStatus::Paused) => State::SeriesPaused,
            Some(crate::store::SeriesStatus::Ended) => State::Ended,
            None => State::of(it, now_ms, row.gate),
        },
        // A series is never tried itself (its occurrences are): as in
        // `tock list`, a dash rather than a count that reads as failures.
        tries: if row.series.is_some() {
            "-".to_string()
        } else {
            it.attempts.to_string()
        },
    }
}

pub(super) fn row_kind(kind: Kind) -> &'static str {
    match kind {
        Kind::Regenerate => "reply",
        k => k.as_str(),
    }
}

pub(super) fn kind_style(kind: Kind) -> Style {
    match kind {
        Kind::Task => Style::default().fg(palette().special),
        Kind::Message => Style::default(),
        _ => Style::default().fg(palette().dim),
    }
}

pub(super) fn conv_style(row: &Row) -> Style {
    if row.conversation.is_none() {
        Style::default()
            .fg(palette().dim)
            .add_modifier(Modifier::ITALIC)
    } else {
        Style::default()
    }
}

/// Write `text` elided to `width` cells, left- or right-aligned.
pub(super) fn put(
    buf: &mut Buffer,
    x: u16,
    y: u16,
    text: &str,
    width: u16,
    style: Style,
    right: bool,
) {
    if width == 0 {
        return;
    }
    let s = elide(text, width as usize);
    let pad = if right {
        width.saturating_sub(s.width() as u16)
    } else {
        0
    };
    buf.set_stringn(x + pad, y, s, (width - pad) as usize, style);
}

pub(super) fn utc(ms: i64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(ms).single().unwrap_or_default()
}

pub(super) fn absolute(due: DateTime<Utc>, now: &DateTime<ShownZone>) -> String {
    crate::when::absolute(due, now)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn total(cols: &[(Col, u16)]) -> u16 {
        cols.iter().map(|(_, w)| w).sum::<u16>() + cols.len() as u16 - 1 + GUTTER
    }

    #[test]
    fn columns_fill_the_width_and_drop_optional_ones_first() {
        let wide = columns(200, 2, 16, 8);
        assert_eq!(wide.len(), 8);
        assert_eq!(total(&wide), 200);
        let conv = wide.iter().find(|(c, _)| *c == Col::Conv).unwrap().1;
        assert_eq!(conv, 24, "the title column stops growing at its cap");

        let eighty = columns(80, 2, 16, 8);
        let names: Vec<Col> = eighty.iter().map(|(c, _)| *c).collect();
        assert_eq!(
            names,
            [
                Col::Due,
                Col::Rel,
                Col::Conv,
                Col::Kind,
                Col::State,
                Col::Text
            ]
        );
        assert_eq!(total(&eighty), 80);

        // Tiny: the text column is squeezed, nothing overflows.
        let tiny = columns(30, 2, 16, 8);
        assert!(total(&tiny) <= 30 + 1, "{tiny:?}");
        assert!(tiny.iter().any(|(c, _)| *c == Col::Due));
    }
}
