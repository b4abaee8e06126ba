//! How instants and spans are shown: previews, distances, countdowns.

use std::fmt::Write as _;

use chrono::{DateTime, Datelike, Duration, TimeZone, Utc};

/// When something that has happened is shown as having happened: at the
/// time stored, or `now` for a time still ahead of it (written on a clock
/// that was ahead and has since been set right; the event is past all the
/// same). What is stored, and what `--json` prints, stays as it was.
pub fn happened(at_ms: i64, now_ms: i64) -> i64 {
    at_ms.min(now_ms)
}

/// `Mon 30 Nov 09:00, in 14h 11m`: the instant in `now`'s time zone (with the
/// year when it is not `now`'s year), then the distance from `now`.
///
/// (No `Tz::Offset: Display` bound is needed: the offset is not printed.)
pub fn preview<Tz: TimeZone>(due: DateTime<Utc>, now: &DateTime<Tz>) -> String {
    format!(
        "{}, {}",
        absolute(due, now),
        relative(due.timestamp_millis(), now.timestamp_millis())
    )
}

/// The instant in `now`'s time zone, `Mon 30 Nov 09:00`, or
/// `Tue 1 Dec 2026 09:00` when the year differs from `now`'s.
pub fn absolute<Tz: TimeZone>(due: DateTime<Utc>, now: &DateTime<Tz>) -> String {
    let local = due.with_timezone(&now.timezone()).naive_local();
    if local.year() == now.naive_local().year() {
        local.format("%a %-d %b %H:%M").to_string()
    } else {
        local.format("%a %-d %b %Y %H:%M").to_string()
    }
}

/// Compact distance between epoch-ms instants: `in 45s`, `in 14h 11m`,
/// `in 3d 2h`, `2m ago`, `now` (under half a second). Two units at most,
/// zero units dropped (`in 2h`), rounded to the second then truncated.
pub fn relative(due_ms: i64, now_ms: i64) -> String {
    let diff = i128::from(due_ms) - i128::from(now_ms);
    let secs = (diff.unsigned_abs() + 500) / 1000;
    if secs == 0 {
        return "now".to_string();
    }
    let span = compact_span(secs);
    if diff > 0 {
        format!("in {span}")
    } else {
        format!("{span} ago")
    }
}

/// A countdown to `due_ms` as of `at_ms`: `in 45s`, `in 14h 11m`, `now`
/// with under a second to go. Unlike [`relative`] it truncates to the
/// second, so drawn at a whole-second tick it shows the whole seconds left
/// then, and reaches `now` before `due_ms`, never after. Instants that have
/// come read as in [`relative`].
pub fn countdown(due_ms: i64, at_ms: i64) -> String {
    if due_ms <= at_ms {
        return relative(due_ms, at_ms);
    }
    let secs = (i128::from(due_ms) - i128::from(at_ms)).unsigned_abs() / 1000;
    if secs == 0 {
        return "now".to_string();
    }
    format!("in {}", compact_span(secs))
}

/// `45s`, `14h 11m`, `3d 2h`, `2h`: the two largest units, zeros dropped.
pub(crate) fn compact_span(secs: u128) -> String {
    let (d, h, m, s) = (
        secs / 86_400,
        secs % 86_400 / 3_600,
        secs % 3_600 / 60,
        secs % 60,
    );
    let (big, big_u, small, small_u) = if d > 0 {
        (d, 'd', h, 'h')
    } else if h > 0 {
        (h, 'h', m, 'm')
    } else if m > 0 {
        (m, 'm', s, 's')
    } else {
        (s, 's', 0, 's')
    };
    let mut out = format!("{big}{big_u}");
    if small > 0 {
        let _ = write!(out, " {small}{small_u}");
    }
    out
}

/// `1 year`, `2 years`, `30 days`, else the compact span (`12h`).
pub(super) fn describe_limit(max: Duration) -> String {
    let secs = max.num_seconds();
    let plural = |n: i64, unit: &str| format!("{n} {unit}{}", if n == 1 { "" } else { "s" });
    if secs > 0 && secs % (365 * 86_400) == 0 {
        plural(secs / (365 * 86_400), "year")
    } else if secs > 0 && secs % 86_400 == 0 {
        plural(secs / 86_400, "day")
    } else {
        compact_span(u128::from(secs.unsigned_abs()))
    }
}
