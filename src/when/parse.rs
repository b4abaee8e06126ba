//! Whole expressions to an instant: the entry points of `/at`, `/later` and
//! `until`, and the limit on how far ahead.

use chrono::{DateTime, Datelike, Duration, NaiveTime, TimeZone, Utc};

use super::asked::next_weekday_asked;
use super::clock::bare_hour;
use super::dates::{DateSpec, parse_date};
use super::durations::{duration_ms, hours_then_minutes, says_years_or_months};
use super::errors::{PErr, WhenError, quoted};
use super::resolve::{future, local_instant, parse_absolute};
use super::show::describe_limit;
use super::words::words_of;

/// Which expressions are allowed: `/later` takes only durations, `/at` anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Durations only (`10m`, `in 2 hours`).
    Later,
    /// Durations, clock times, dates and instants.
    At,
}

/// Parse a whole expression into a UTC instant strictly after `now` and at
/// most [`MAX_AHEAD_DAYS`] ahead (every front end's previews then agree
/// with what sending accepts).
///
/// The expression is resolved in `now`'s time zone. See the module docs for
/// the grammar.
pub fn parse_time<Tz: TimeZone>(
    expr: &str,
    now: &DateTime<Tz>,
    mode: Mode,
) -> Result<DateTime<Utc>, WhenError> {
    let due = parse_any_time(expr, now, mode)?;
    check_not_too_far(due, now.with_timezone(&Utc), Duration::days(MAX_AHEAD_DAYS))?;
    Ok(due)
}

/// [`parse_time`] without the limit on how far ahead.
fn parse_any_time<Tz: TimeZone>(
    expr: &str,
    now: &DateTime<Tz>,
    mode: Mode,
) -> Result<DateTime<Utc>, WhenError> {
    let trimmed = expr.trim();
    read_any_time(trimmed, now, mode).map_err(|e| e.quoting_as_typed(trimmed))
}

/// [`parse_any_time`] of a trimmed expression, its errors quoting its
/// lower-cased words.
fn read_any_time<Tz: TimeZone>(
    trimmed: &str,
    now: &DateTime<Tz>,
    mode: Mode,
) -> Result<DateTime<Utc>, WhenError> {
    if trimmed.is_empty() {
        return Err(WhenError::Empty);
    }
    let mut owned = words_of(trimmed);
    // For a delay, "1h30" is written for 1h30m (one word: in "1h 30
    // people" the 30 belongs to the message). Not for a time: "14h30" is
    // 14:30 in many places, and is refused there rather than misread.
    if mode == Mode::Later {
        for w in owned.iter_mut().filter(|w| hours_then_minutes(w)) {
            w.push('m');
        }
    }
    let words: Vec<&str> = owned.iter().map(String::as_str).collect();
    let now_utc = now.with_timezone(&Utc);
    // `/at now …`, `tock reschedule 5 now`: at once.
    if mode == Mode::At && words == ["now"] {
        return Ok(now_utc);
    }

    match duration_ms(&words, false) {
        Ok(ms) => {
            return Duration::try_milliseconds(ms)
                .and_then(|d| now_utc.checked_add_signed(d))
                .ok_or(WhenError::OutOfRange);
        }
        Err(PErr::Fail(e)) => return Err(e),
        Err(PErr::NoMatch) if says_years_or_months(trimmed) => {
            return Err(WhenError::YearsOrMonths);
        }
        Err(PErr::NoMatch) => {}
    }

    match mode {
        // A number alone is no delay, whether or not it could be an hour:
        // more likely the unit was left out.
        Mode::Later if bare_hour(&words).is_some() => Err(WhenError::NotADuration(quoted(trimmed))),
        Mode::Later => match parse_absolute(trimmed, &words, now) {
            Ok(_)
            | Err(PErr::Fail(
                WhenError::Past(_)
                | WhenError::TomorrowBeforeMorning { .. }
                | WhenError::NextWeekday { .. },
            )) => Err(WhenError::TimeNotDuration(quoted(trimmed))),
            Err(_) => Err(WhenError::NotADuration(quoted(trimmed))),
        },
        Mode::At => parse_absolute(trimmed, &words, now).map_err(|e| match e {
            PErr::Fail(e) => e,
            PErr::NoMatch => WhenError::Unrecognised(quoted(trimmed)),
        }),
    }
}

/// How far ahead a user may schedule anything: ten years. Further is more
/// likely a typo (`/every 99999h`) than a plan.
pub const MAX_AHEAD_DAYS: i64 = 3650;

/// Refuse instants more than `max` ahead of `now_utc` (used for
/// model-scheduled tasks, with a one-year limit). Exactly `max` is allowed.
pub fn check_not_too_far(
    due: DateTime<Utc>,
    now_utc: DateTime<Utc>,
    max: Duration,
) -> Result<(), WhenError> {
    if due.signed_duration_since(now_utc) > max {
        Err(WhenError::TooFar(describe_limit(max)))
    } else {
        Ok(())
    }
}

/// For the end of a repeating schedule (`until dec 24`): like
/// [`parse_time`] in `Mode::At`, except that a date without a clock time
/// means the *end* of that day, so `until fri` includes Friday's occurrences.
pub fn parse_until<Tz: TimeZone>(
    expr: &str,
    now: &DateTime<Tz>,
) -> Result<DateTime<Utc>, WhenError> {
    let trimmed = expr.trim();
    read_until(trimmed, now).map_err(|e| e.quoting_as_typed(trimmed))
}

/// [`parse_until`] of a trimmed expression, its errors quoting its
/// lower-cased words.
fn read_until<Tz: TimeZone>(trimmed: &str, now: &DateTime<Tz>) -> Result<DateTime<Utc>, WhenError> {
    let owned = words_of(trimmed);
    let words: Vec<&str> = owned.iter().map(String::as_str).collect();
    let today = now.date_naive();
    let date = match parse_date(&words, today) {
        Ok(d) => d,
        Err(PErr::Fail(e)) => return Err(e),
        Err(PErr::NoMatch) => return read_any_time(trimmed, now, Mode::At),
    };
    let plus = |n: i64| {
        today
            .checked_add_signed(Duration::days(n))
            .ok_or(WhenError::OutOfRange)
    };
    let day = match date {
        DateSpec::Today => today,
        DateSpec::Tomorrow => plus(1)?,
        DateSpec::Before(day) => day,
        DateSpec::Weekday { day, next } => {
            let mut delta = (i64::from(day.num_days_from_monday())
                - i64::from(today.weekday().num_days_from_monday()))
            .rem_euclid(7);
            if next && delta == 0 {
                delta = 7;
            }
            plus(delta)?
        }
        DateSpec::Ymd { date, has_year } if has_year || date >= today => date,
        DateSpec::Ymd { date, .. } => date
            .with_year(date.year() + 1)
            .ok_or_else(|| WhenError::NoSuchTime(quoted(trimmed)))?,
    };
    // The last instant of the day: the start of the next one, less 1 ms.
    let next = day.succ_opt().ok_or(WhenError::OutOfRange)?;
    let end = local_instant(&now.timezone(), next.and_time(NaiveTime::MIN))
        .ok_or(WhenError::OutOfRange)?
        - Duration::milliseconds(1);
    let end = future(end, now)?;
    // `until next friday` on Monday: this week's or next week's, as with /at.
    match next_weekday_asked(trimmed, end, now, |w| read_until(w, now).ok()) {
        Some(asked) => Err(asked),
        None => Ok(end),
    }
}
