//! Time expressions -> UTC instants, and human previews.
//!
//! Used by `/later DURATION TEXT`, `/at TIME TEXT`, the F2 "reschedule" prompt,
//! the composer preview ("sends Mon 30 Nov 09:00, in 14h 11m") and the
//! model's `schedule_task` tool.
//!
//! # What is understood
//!
//! Everything is case-insensitive and tolerant of extra spaces. Expressions are
//! resolved in the time zone of the `now` that is passed in (the user's local
//! zone in production); results are UTC instants strictly after `now`.
//!
//! * Durations (both modes): `10m`, `10 min`, `in 10 minutes`, `1h30m`,
//!   `1h 30m`, `1 hour 30 minutes`, `1 hour and 30 minutes`, `2 hours`, `1d`,
//!   `90s`, `1.5h`, `1w`, `an hour`, `half an hour`, `an hour and a half`,
//!   `10 minutes from now`. A duration is exact elapsed time: `1d` is 24 h even
//!   across a DST change. Months and years are not durations (their length
//!   varies); use a date instead.
//! * Clock times (`/at` only): `9am`, `9 am`, `9:30am`, `9.30pm`, `9 p.m.`,
//!   `14:30`, `14:30:15`, `noon`, `midday`, `midnight` (00:00), `12pm` (noon),
//!   `12am` (midnight), and an hour alone past 12 (`21` is 21:00, `0` is
//!   00:00); an hour alone from 1 to 12 (`9`, or after a day: `fri 5`) is
//!   refused with both readings (`9am, 9pm or 21:00`). A bare clock time
//!   means its *next* occurrence: today if still ahead, else tomorrow — but
//!   a time that came less than a minute ago means now (typed while it was
//!   ahead, Enter may come just after).
//! * Parts of the day (`/at` only; see [`DayPart`]): `morning` (09:00),
//!   `afternoon` (15:00), `evening` (19:00), `night` and `tonight` (21:00),
//!   alone or after a day (`tomorrow evening`, `fri night`, `this morning`,
//!   `tomorrow in the morning`), and with a clock time, whose hour they
//!   place in their half of the day (`tomorrow evening 7` is 19:00,
//!   `morning 7` 07:00, `7 in the evening`, `8pm tonight`); a time outside
//!   the part (`evening 7am`) is refused, as is `tonight` once it is over.
//!   A bare part right after a clock time (`fri 8pm night out`) is not
//!   taken: it is more likely the text's, and the composer asks.
//!   `17.30` is 17:30, as `17:30`.
//! * Dates (`/at` only), optionally followed (or preceded) by a clock time,
//!   optionally joined by `at` / `on`: `today`, `tomorrow` (`tmrw`), weekdays
//!   (`fri`, `friday`, `tues`, `thurs`, ...), `this fri`, `next monday`,
//!   `2026-12-01`, `2026-12-01T09:00`, `2026-12-01T09:00Z`, and month-name
//!   dates (`dec 1`, `1 dec`, `1st of december`, `dec 1 2026`,
//!   `december 1, 2026`). A date without a time means 09:00 that day.
//!   A weekday means its next occurrence (today only if the time is still
//!   ahead); `next monday` is the first Monday strictly after today (so on a
//!   Sunday it is tomorrow; the preview shows the date, which removes any doubt).
//!   A month-name date without a year means its next occurrence.
//!   An explicit date or instant that is not in the future is refused, and
//!   so are `yesterday`, `last fri` and `2h ago`, with when that was (what
//!   came less than a minute ago means now, as above).
//! * Full RFC 3339 instants with an offset: `2026-12-01T09:00:00Z`,
//!   `2026-12-01T09:00:00.5+02:00`. A clock time may also carry an
//!   offset or `utc`/`gmt`, with any date form: `14:30 utc`, `5pm utc`,
//!   `fri 17:00 +02:00`, `2026-12-01 09:00 -05:00`. The date is still the
//!   user's (`tomorrow` is the user's tomorrow); a bare `14:30 utc` is its
//!   next occurrence.
//!
//! # Why most of this is hand-written rather than `interim`
//!
//! `interim` 0.2.2 was probed on every form above. It is used for the one
//! thing it does well — month-name dates — and only on input that has been
//! checked to contain nothing but month names and numbers. Its gaps, each
//! covered here:
//!
//! * panics (an `assert!` in its `Lowercase::literal`) when a time after a date
//!   has upper-case `AM`/`PM` (`"Tomorrow 9AM"`, `"FRI 5PM"`) or when a word of
//!   16+ letters follows an hour after a date (`"tomorrow 9abcdefghijklmnop"`);
//! * `midnight`, `hours`, `month`, `second` — any lone word starting with
//!   `mi`, `se`, `ho`, `da`, `we`, `mo` or `ye` — is "zero units", i.e. *now*;
//! * `noon`, `in 10 minutes`, `in 2h`, `an hour`, `half an hour`, `1.5h`,
//!   ordinals (`1st dec`) and compound durations (`1h30m`, `1h 30m`,
//!   `1 hour 30 minutes`) are refused; a bare `1.5` is the clock time 01:05;
//! * after a date, `12pm` becomes midnight of the *next* day and `12am` becomes
//!   noon (`"tomorrow 12pm"` -> day after tomorrow 00:00), and hours are not
//!   range-checked (`"tomorrow 100pm"` -> four days later);
//! * a bare clock time already past today stays in the past (no "next
//!   occurrence"), dates without a time mean 00:00 (we want 09:00), and
//!   `tomorrow` alone means tomorrow at the current time of day;
//! * `next monday` (UK dialect) skips a whole week, and US dialect's
//!   `next sunday` on a Sunday evening is today;
//! * a local time inside a DST gap is an error; a month-name date followed by
//!   a year without a comma (`dec 1 2026`) is an error.

use std::fmt::Write as _;

use chrono::{
    DateTime, Datelike, Duration, FixedOffset, LocalResult, NaiveDate, NaiveDateTime, NaiveTime,
    Offset, TimeZone, Utc, Weekday,
};

/// Why an expression was refused. Every message is one human-readable line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WhenError {
    /// Nothing was typed.
    #[error("empty time")]
    Empty,
    /// Not a time expression at all (the text, shortened, is kept).
    #[error(
        "can't read {0:?} as a time — try 10m, 1h30m, 9am, tomorrow 14:30, fri 5pm, 2026-12-01 09:00"
    )]
    Unrecognised(String),
    /// `Mode::Later` / [`parse_duration`]: not a duration.
    #[error("can't read {0:?} as a duration — try 10m, 1h30m, 2 hours, 1d, in 10 minutes")]
    NotADuration(String),
    /// [`parse_age`]: not a span of time.
    #[error(
        "can't read {0:?} as a span of time — try 12h, 30d, 2w, 6mo, 1y (a month is 30 days, a year 365)"
    )]
    NotASpan(String),
    /// [`parse_age`]: `6m` where months are read too. Carries the amount
    /// and its `m` as typed (`6M`, `6 m`) and the amount alone (`6`).
    #[error("{said:?} could be minutes or months — say {amount}min or {amount}mo")]
    MinutesOrMonths { said: String, amount: String },
    /// [`parse_age`]: a number without a unit (`1`); carries it as typed.
    #[error(
        "{0:?} has no unit — say {0}h, {0}d, {0}w, {0}mo or {0}y (a month is 30 days, a year 365)"
    )]
    NoUnit(String),
    /// `Mode::Later` was given a point in time.
    #[error("{0:?} is a point in time, not a duration — use /at for that, or e.g. /later 1h30m")]
    TimeNotDuration(String),
    /// `2 years`, `6mo`: not durations, their length varies.
    #[error(
        "years and months are not durations (their length varies); give a date instead, e.g. 2030-01-15 09:00"
    )]
    YearsOrMonths,
    /// A bare hour from 1 to 12 alone (`9`, `at 9`): morning or evening?
    /// Carries the hour.
    #[error("{}", ambiguous_hour_message(*.0, "alone"))]
    AmbiguousHour(u32),
    /// A bare hour from 1 to 12 after a day, a date or a rule's days
    /// (`fri 5`, `tomorrow 9`, `dec 25 9`, `every mon 9`): morning or
    /// evening? Carries the hour and the words it follows.
    #[error("{}", ambiguous_hour_message(*hour, &format!("after {after:?}")))]
    AmbiguousHourAfter { hour: u32, after: String },
    /// A part of the day and a clock time that is not in it (`evening 7am`,
    /// `morning 8`): carries the words as said, the part and its hours.
    #[error("{said:?} does not fit: the {part} is {hours} — give the time alone (e.g. 7am, 19:00)")]
    NotInDayPart {
        said: String,
        part: &'static str,
        hours: &'static str,
    },
    /// A part of today that is over (`tonight` at 22:00, `this morning` at
    /// noon): carries the words and the time they stand for.
    #[error("{said:?} is over ({at} has passed) — give a time still ahead, or a delay with /later")]
    DayPartOver { said: String, at: String },
    /// The text after a time starts with what reads as more of it (`/at
    /// 9am evening call`): carries the time and those words as typed.
    #[error(
        "{said:?} after {time:?} looks like more of the time — say it all before the text, or write \"{time} -- {said} …\" to send it as text"
    )]
    TimeInText { time: String, said: String },
    /// A second time after the first (`/at 9am and 5pm x`): carries the
    /// first, the words of the second as typed, and the second alone.
    #[error(
        "{said:?} after {time:?}: one time per message — send two, /at {time} … and /at {second} …"
    )]
    SecondTime {
        time: String,
        said: String,
        second: String,
    },
    /// Looks like a date or time but does not exist (`25:99`, `2026-02-30`, `13pm`).
    #[error("no such date or time: {0:?}")]
    NoSuchTime(String),
    /// A repeating rule's clock time with a zone (`9am utc`); carries the time.
    #[error("{0:?} has a time zone — a repeating rule follows your local time: leave out the zone")]
    ZoneInRule(String),
    /// Resolves to an instant that is not after now; carries the instant as
    /// shown to the user, e.g. `Sun 29 Nov 08:00`.
    #[error("that time is in the past ({0})")]
    Past(String),
    /// Zero or negative duration (`0m`, `-5m`).
    #[error("a duration must be positive")]
    NotPositive,
    /// Beyond what the calendar types can represent.
    #[error("that is too far in the future")]
    OutOfRange,
    /// Refused by [`check_not_too_far`]; carries the limit, e.g. `1 year`.
    #[error("too far ahead (more than {0})")]
    TooFar(String),
    /// `/later 1h` with no message.
    #[error("nothing to send after the time")]
    NothingToSend,
}

/// `"9" alone could be morning or evening — say 9am, 9pm or 21:00` (or
/// `"9" after "tomorrow" …`, as `placed` says): both readings, and how to
/// write each.
fn ambiguous_hour_message(hour: u32, placed: &str) -> String {
    if hour == 12 {
        return format!("\"12\" {placed} could be noon or midnight — say noon or midnight");
    }
    format!(
        "\"{hour}\" {placed} could be morning or evening — say {hour}am, {hour}pm or {}:00",
        hour + 12
    )
}

/// Which expressions are allowed: `/later` takes only durations, `/at` anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Durations only (`10m`, `in 2 hours`).
    Later,
    /// Durations, clock times, dates and instants.
    At,
}

/// The time of day used when a date is given without one (`tomorrow`,
/// `fri`, `2026-12-01`): 09:00, the start of a working day.
pub(crate) const DEFAULT_HOUR: u32 = 9;

/// How many leading words [`split_time_prefix`] tries as a time expression.
/// The longest accepted form is about five words (`1 hour and 30 minutes`,
/// `next monday at 9 am`).
const MAX_PREFIX_WORDS: usize = 6;

/// Longest piece of user text quoted back in an error message.
const MAX_QUOTED_CHARS: usize = 40;

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
            Ok(_) | Err(PErr::Fail(WhenError::Past(_))) => {
                Err(WhenError::TimeNotDuration(quoted(trimmed)))
            }
            Err(_) => Err(WhenError::NotADuration(quoted(trimmed))),
        },
        Mode::At => parse_absolute(trimmed, &words, now).map_err(|e| match e {
            PErr::Fail(e) => e,
            PErr::NoMatch => WhenError::Unrecognised(quoted(trimmed)),
        }),
    }
}

/// Parse a duration expression: `10m`, `10 min`, `in 10 minutes`, `1h30m`,
/// `1h 30m`, `1 hour 30 minutes`, `2 hours`, `1d`, `90s`, `1.5h`, `1w`,
/// `an hour`, `half an hour`, `an hour and a half`. Always positive.
pub fn parse_duration(expr: &str) -> Result<Duration, WhenError> {
    let trimmed = expr.trim();
    if trimmed.is_empty() {
        return Err(WhenError::Empty);
    }
    let owned = words_of(trimmed);
    let words: Vec<&str> = owned.iter().map(String::as_str).collect();
    match duration_ms(&words, false) {
        Ok(ms) => Duration::try_milliseconds(ms).ok_or(WhenError::OutOfRange),
        Err(PErr::Fail(e)) => Err(e.quoting_as_typed(trimmed)),
        Err(PErr::NoMatch) => Err(WhenError::NotADuration(quoted(trimmed))),
    }
}

/// How long ago, for `tock prune --older-than`: what [`parse_duration`]
/// takes, and also months and years (`6mo`, `1y`, `2 years`) at a fixed
/// length — a month is 30 days, a year 365 — which is near enough for
/// "finished more than a year ago". Elsewhere they are refused, since a
/// delay is exact. `m` alone could then be minutes or months and is
/// refused (`1h30m` is minutes).
pub fn parse_age(expr: &str) -> Result<Duration, WhenError> {
    let trimmed = expr.trim();
    if trimmed.is_empty() {
        return Err(WhenError::Empty);
    }
    let owned = words_of(trimmed);
    let words: Vec<&str> = owned.iter().map(String::as_str).collect();
    match duration_ms(&words, true) {
        Ok(ms) => Duration::try_milliseconds(ms).ok_or(WhenError::OutOfRange),
        Err(PErr::Fail(e)) => Err(e.quoting_as_typed(trimmed)),
        // A number alone: hours, days, months? (0 of anything is 0: the
        // caller may take it.)
        Err(PErr::NoMatch) if is_number(trimmed) => Err(WhenError::NoUnit(quoted(trimmed))),
        Err(PErr::NoMatch) => Err(WhenError::NotASpan(quoted(trimmed))),
    }
}

/// `1`, `30`, `1.5`: digits, with at most one decimal point inside.
fn is_number(s: &str) -> bool {
    let (int, frac) = s.split_once('.').unwrap_or((s, "0"));
    [int, frac]
        .iter()
        .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// For `/later 1h check the build` and `/at tomorrow 9am stand-up notes`:
/// finds the longest leading run of words (up to six) that parses as a time
/// in `mode`, and returns the instant and the remaining text (trimmed, with
/// its original spelling).
///
/// Errors: when no prefix parses, the error of the first word (e.g. "can't
/// read \"blah\""); when a longer prefix was recognised but refused (a past
/// time, `tomorrow 13pm`, `/later 9am`), that more specific error — it is
/// what the user meant, and silently taking a shorter prefix would schedule
/// something else; `NothingToSend` when nothing follows the time.
pub fn split_time_prefix<Tz: TimeZone>(
    input: &str,
    now: &DateTime<Tz>,
    mode: Mode,
) -> Result<(DateTime<Utc>, String), WhenError> {
    // `9am -- evening class`: the time is what comes before the `--`.
    if let Some((time, text)) = split_at_dashes(input) {
        match parse_time(time, now, mode) {
            Ok(_) if text.is_empty() => return Err(WhenError::NothingToSend),
            Ok(due) => return Ok((due, text.to_string())),
            Err(e) if is_specific(&e) => return Err(e),
            Err(_) => {}
        }
    }
    let ends = word_ends(input, MAX_PREFIX_WORDS);
    let mut shortest_err = WhenError::Empty;
    for &end in ends.iter().rev() {
        // `fri 9am, call mom`: the comma ends the time.
        let prefix = input[..end].trim_end_matches(',');
        match parse_time(prefix, now, mode) {
            Ok(due) => {
                let rest = input[end..].trim();
                if rest.is_empty() {
                    return Err(WhenError::NothingToSend);
                }
                // Text that starts with more time (`/at 9am evening
                // call`, `/at 9am and 5pm x`) is asked about: taken as
                // text, the time would be another than the one meant.
                if mode == Mode::At
                    && let Some(more) = time_in_text(rest, input[..end].ends_with(','))
                {
                    let time = prefix.trim().to_string();
                    return Err(if more.another {
                        WhenError::SecondTime {
                            time,
                            said: more.said,
                            second: more.second,
                        }
                    } else {
                        WhenError::TimeInText {
                            time,
                            said: more.said,
                        }
                    });
                }
                return Ok((due, rest.to_string()));
            }
            Err(e) if is_specific(&e) => return Err(e),
            Err(e) => shortest_err = e,
        }
    }
    Err(shortest_err)
}

/// When something that has happened is shown as having happened: at the
/// time stored, or `now` for a time still ahead of it (written on a clock
/// that was ahead and has since been set right; the event is past all the
/// same). What is stored, and what `--json` prints, stays as it was.
pub fn happened(at_ms: i64, now_ms: i64) -> i64 {
    at_ms.min(now_ms)
}

/// `9am -- evening class` -> (`9am`, `evening class`): a `--` word among
/// the first words of a time and its text says where the time ends.
pub(crate) fn split_at_dashes(input: &str) -> Option<(&str, &str)> {
    let mut at = 0;
    for (n, w) in input.split_whitespace().enumerate() {
        let start = at + input[at..].find(w)?;
        at = start + w.len();
        if n > MAX_PREFIX_WORDS + 10 {
            return None;
        }
        if w == "--" && n > 0 {
            return Some((input[..start].trim(), input[at..].trim()));
        }
    }
    None
}

/// What the text after a time starts with when it reads as more time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MoreTime {
    /// Those words as typed (`evening`, `and 5pm`).
    pub(crate) said: String,
    /// The time alone, without a joining word (`5pm`).
    pub(crate) second: String,
    /// Another time, not more of the first: after `and`, `&`, `then`,
    /// `or`, or a comma that ended the time.
    pub(crate) another: bool,
}

/// Whether `rest`, the text after a time, starts with words that read as
/// time: a part of the day (`evening`, `tonight`), `noon`, `today`,
/// `tomorrow`, a clock time (`7pm`, `19:00`, `7 pm`, `at 5pm`; not `3.50`,
/// more likely a price), a day's full name (`monday`) or a short one with
/// a clock time after it (`fri 5pm`) — or any of those after `and`, `&`,
/// `then` or `or`, or after a comma that ended the time (`after_comma`),
/// which make it a second time.
pub(crate) fn time_in_text(rest: &str, after_comma: bool) -> Option<MoreTime> {
    let owned = words_of(rest);
    let words: Vec<&str> = owned.iter().map(|w| w.trim_end_matches(',')).collect();
    let (joined, body) = match words.as_slice() {
        ["and" | "&" | "then" | "or", b @ ..] => (1, b),
        b => (0, b),
    };
    let n = timey_words(body)?;
    let typed: Vec<&str> = rest.split_whitespace().collect();
    let take = |from: usize, to: usize| {
        let w = typed.get(from..to.min(typed.len())).unwrap_or_default();
        quoted(w.join(" ").trim_end_matches(','))
    };
    Some(MoreTime {
        said: take(0, joined + n),
        second: take(joined, joined + n),
        another: joined > 0 || after_comma,
    })
}

/// How many of the first words read as a time (see [`time_in_text`]).
fn timey_words(w: &[&str]) -> Option<usize> {
    let clock = |w: &[&str]| !w.iter().any(|w| w.contains('.')) && parse_clock(w).is_ok();
    match w {
        ["at", rest @ ..] => timey_words(rest).map(|n| n + 1),
        [first, ..]
            if DayPart::of(first).is_some()
                || matches!(
                    *first,
                    "noon" | "midday" | "midnight" | "today" | "tomorrow" | "tmrw"
                ) =>
        {
            Some(1)
        }
        [a, b, ..] if clock(&[a, b]) => Some(2),
        [a, ..] if clock(&[a]) => Some(1),
        [day, next, ..] if weekday(day).is_some() && clock_like(next) => Some(2),
        [day, ..] if weekday(day).is_some() && day.len() >= 6 => Some(1),
        _ => None,
    }
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

/// Whether `expr` begins with a date (`fri`, `dec 24`, `2026-12-08`,
/// `tomorrow 9am`) rather than being a clock time alone (`5pm`): after a
/// message's text, `until fri` ends a series but `study until 5pm` is text.
pub fn starts_with_date(expr: &str, today: NaiveDate) -> bool {
    let owned = words_of(expr.trim());
    let words: Vec<&str> = owned.iter().map(String::as_str).collect();
    (1..=words.len().min(4)).any(|n| parse_date(&words[..n], today).is_ok())
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
    future(end, now)
}

/// A clock time alone (`9am`, `18:00`, `noon`, `8.30 pm`), for repeating
/// rules. `None`: not a clock time; `Some(Err)`: one that does not exist
/// (`25:00`) or carries a time zone (rules follow local time).
pub(crate) fn clock_time(words: &[&str]) -> Option<Result<NaiveTime, WhenError>> {
    match parse_clock(words) {
        Ok(Clock { offset: None, time }) => Some(Ok(time)),
        Ok(Clock {
            offset: Some(_), ..
        }) => Some(Err(WhenError::ZoneInRule(quoted(&words.join(" "))))),
        Err(PErr::Fail(e)) => Some(Err(e)),
        Err(PErr::NoMatch) => None,
    }
}

// ---------------------------------------------------------------------------
// Internals
// ---------------------------------------------------------------------------

/// Internal parse outcome: `NoMatch` means "this is not that kind of
/// expression, try another reading"; `Fail` is a definite refusal that should
/// reach the user (an impossible time, a past date, a zero duration).
#[derive(Debug)]
enum PErr {
    NoMatch,
    Fail(WhenError),
}

/// Errors that mean "recognised, but refused" (as opposed to "not a time").
/// A bare hour alone is not one of them (nothing shorter is tried after
/// it anyway); one after a day is: in `/at fri 5 apples` the 5 may be the
/// hour, and taking `fri` alone with the text "5 apples" would schedule
/// 09:00 without a word.
fn is_specific(e: &WhenError) -> bool {
    !matches!(
        e,
        WhenError::Empty
            | WhenError::Unrecognised(_)
            | WhenError::NotADuration(_)
            | WhenError::AmbiguousHour(_)
    )
}

/// `1000y`, `in 2 years`, `3 months`, `6mo`.
fn says_years_or_months(expr: &str) -> bool {
    let e = expr.trim().to_ascii_lowercase();
    let e = e.strip_prefix("in ").unwrap_or(&e).trim();
    let digits = e
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(e.len());
    if digits == 0 {
        return false;
    }
    let unit = e[digits..].trim();
    ["y", "yr", "yrs", "year", "years", "mo", "month", "months"].contains(&unit)
}

/// `9`, `21`, `00`: one or two digits that could be an hour of the day.
pub(crate) fn hour_number(w: &str) -> Option<u32> {
    let digits = (1..=2).contains(&w.len()) && w.bytes().all(|b| b.is_ascii_digit());
    digits.then(|| w.parse().ok()).flatten().filter(|h| *h < 24)
}

/// The time is a number alone (`21`, `at 9`): the hour, if it can be one.
fn bare_hour(words: &[&str]) -> Option<u32> {
    match words {
        [w] | ["at", w] => hour_number(w),
        _ => None,
    }
}

/// User text quoted back in an error, shortened to one manageable line.
pub(crate) fn quoted(s: &str) -> String {
    let mut chars = s.chars();
    let mut out: String = chars.by_ref().take(MAX_QUOTED_CHARS).collect();
    if chars.next().is_some() {
        out.push('…');
    }
    out
}

impl WhenError {
    /// The error with the words it quotes as they were typed in `expr`:
    /// they were read from [`words_of`], in lower case (`13PM`, not `13pm`).
    pub(crate) fn quoting_as_typed(self, expr: &str) -> WhenError {
        use WhenError as E;
        match self {
            E::Unrecognised(s) => E::Unrecognised(as_typed(expr, &s)),
            E::NotADuration(s) => E::NotADuration(as_typed(expr, &s)),
            E::NotASpan(s) => E::NotASpan(as_typed(expr, &s)),
            E::NoUnit(s) => E::NoUnit(as_typed(expr, &s)),
            E::TimeNotDuration(s) => E::TimeNotDuration(as_typed(expr, &s)),
            E::NoSuchTime(s) => E::NoSuchTime(as_typed(expr, &s)),
            E::ZoneInRule(s) => E::ZoneInRule(as_typed(expr, &s)),
            E::MinutesOrMonths { said, amount } => E::MinutesOrMonths {
                said: as_typed(expr, &said),
                amount,
            },
            E::AmbiguousHourAfter { hour, after } => E::AmbiguousHourAfter {
                hour,
                after: as_typed(expr, &after),
            },
            E::NotInDayPart { said, part, hours } => E::NotInDayPart {
                said: as_typed(expr, &said),
                part,
                hours,
            },
            E::DayPartOver { said, at } => E::DayPartOver {
                said: as_typed(expr, &said),
                at,
            },
            other => other,
        }
    }
}

/// `part`, words read from `expr` by [`words_of`] (lower-cased, single
/// spaces, maybe shortened by [`quoted`]), as `expr` spells them: the first
/// place in `expr` they match, a word's start first; `part` itself when
/// they are not found.
pub(crate) fn as_typed(expr: &str, part: &str) -> String {
    let (needle, cut) = match part.strip_suffix('…') {
        Some(p) => (p, "…"),
        None => (part, ""),
    };
    if needle.is_empty() {
        return part.to_string();
    }
    let starts = || expr.char_indices().map(|(i, _)| i);
    let word_start = |i: usize| i == 0 || expr[..i].ends_with(char::is_whitespace);
    starts()
        .filter(|&i| word_start(i))
        .chain(starts().filter(|&i| !word_start(i)))
        .find_map(|i| typed_match(&expr[i..], needle))
        .map_or_else(|| part.to_string(), |m| format!("{m}{cut}"))
}

/// The start of `hay` that reads as `needle` (see [`as_typed`]): letters
/// in either case, a space for any run of white space, and what
/// [`words_of`] glued onto a clock time (`9am utc` is `9amz`, `9:00 +02:00`
/// is `9:00+02:00`) unglued again.
fn typed_match<'h>(hay: &'h str, needle: &str) -> Option<&'h str> {
    let mut at = 0;
    let mut wanted = needle.chars().peekable();
    while let Some(c) = wanted.next() {
        let rest = &hay[at..];
        let gap = rest.len() - rest.trim_start().len();
        if c == ' ' {
            if gap == 0 {
                return None;
            }
            at += gap;
            continue;
        }
        // A zone word glued on as `z`.
        if c == 'z' && wanted.peek().is_none_or(|n| *n == ' ') && gap > 0 {
            let word = rest.trim_start();
            let len = word.find(char::is_whitespace).unwrap_or(word.len());
            if ["utc", "gmt", "z"]
                .iter()
                .any(|z| word[..len].eq_ignore_ascii_case(z))
            {
                at += gap + len;
                continue;
            }
        }
        // An offset glued on.
        if (c == '+' || c == '-') && gap > 0 && rest.trim_start().starts_with(c) {
            at += gap;
        }
        let h = hay[at..].chars().next()?;
        if h.to_ascii_lowercase() != c {
            return None;
        }
        at += h.len_utf8();
    }
    Some(&hay[..at])
}

/// Byte offsets just after each of the first `max` whitespace-separated words.
fn word_ends(input: &str, max: usize) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut in_word = false;
    for (i, c) in input.char_indices() {
        if c.is_whitespace() {
            if in_word {
                ends.push(i);
                if ends.len() == max {
                    return ends;
                }
            }
            in_word = false;
        } else {
            in_word = true;
        }
    }
    if in_word {
        ends.push(input.len());
    }
    ends
}

/// Lower-cased words; `2026-12-01T09:00` becomes `2026-12-01`, `09:00`.
pub(crate) fn words_of(expr: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in expr.split_whitespace() {
        let w = w.to_ascii_lowercase();
        // "09:00 +02:00", "14:30 utc": glue the offset onto the clock time
        // before it, where `clock_token` expects it.
        if let Some(prev) = out.last_mut()
            && ((prev.contains(':') && prev.ends_with(|c: char| c.is_ascii_digit()))
                || (prev.starts_with(|c: char| c.is_ascii_digit())
                    && (prev.ends_with("am") || prev.ends_with("pm"))))
        {
            if matches!(w.as_str(), "utc" | "gmt" | "z") {
                prev.push('z');
                continue;
            }
            // Only the four-digit forms as a separate word: "9am +10 ideas"
            // is more likely text than a +10:00 offset.
            if (w.starts_with('+') || w.starts_with('-'))
                && w.len() >= 5
                && parse_offset(&w).is_some()
            {
                prev.push_str(&w);
                continue;
            }
        }
        match w.find('t') {
            Some(p) if p > 0 && p + 1 < w.len() && iso_date_parts(&w[..p]).is_some() => {
                out.push(w[..p].to_string());
                out.push(w[p + 1..].to_string());
            }
            _ => out.push(w),
        }
    }
    out
}

/// `YYYY-M-D` / `YYYY-MM-DD` shape (values not yet validated).
fn iso_date_parts(w: &str) -> Option<(i32, u32, u32)> {
    let mut parts = w.split('-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some()
        || y.len() != 4
        || !(1..=2).contains(&m.len())
        || !(1..=2).contains(&d.len())
        || ![y, m, d]
            .iter()
            .all(|p| p.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    Some((y.parse().ok()?, m.parse().ok()?, d.parse().ok()?))
}

// --- durations --------------------------------------------------------------
//
// Hand-written because interim refuses `in …`, `an hour`, `half an hour`,
// decimals (`1.5h`; a bare `1.5` it reads as the clock time 01:05) and every
// compound form (`1h30m`, `1h 30m`, `1 hour 30 minutes`), and reads lone
// `midnight`, `hours`, `month` … as a zero-length duration, i.e. now.

/// A piece of a duration word: a number (in thousandths, so `1.5` is 1500)
/// or a run of letters. `1h30m` is `[1000, "h", 30000, "m"]`. A number
/// keeps its text, and whether its word goes on after it (`30m`, not `30 m`),
/// for an error to quote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Atom<'a> {
    Num { n: i128, text: &'a str, glued: bool },
    Word(&'a str),
}

fn atoms<'a>(words: &[&'a str]) -> Option<Vec<Atom<'a>>> {
    let mut out = Vec::new();
    for w in words {
        // "1 hour, 30 minutes"
        let w = w.strip_suffix(',').unwrap_or(w);
        let b = w.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let start = i;
            if b[i].is_ascii_digit() {
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                let int = &w[start..i];
                let mut frac = "";
                if i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
                    let fs = i + 1;
                    i = fs;
                    while i < b.len() && b[i].is_ascii_digit() {
                        i += 1;
                    }
                    frac = &w[fs..i];
                }
                // Nine integer digits is already ~19 000 years of weeks; more
                // would only risk overflow.
                if int.len() > 9 || frac.len() > 3 {
                    return None;
                }
                let int: i128 = int.parse().ok()?;
                let frac_val: i128 = if frac.is_empty() {
                    0
                } else {
                    let scale = 10i128.pow(3 - u32::try_from(frac.len()).ok()?);
                    frac.parse::<i128>().ok()? * scale
                };
                out.push(Atom::Num {
                    n: int * 1000 + frac_val,
                    text: &w[start..i],
                    glued: i < b.len(),
                });
            } else if b[i].is_ascii_alphabetic() {
                while i < b.len() && b[i].is_ascii_alphabetic() {
                    i += 1;
                }
                out.push(Atom::Word(&w[start..i]));
            } else {
                return None;
            }
        }
    }
    Some(out)
}

const HOUR_MS: i128 = 3_600_000;
/// A month where [`parse_age`] reads one: 30 days.
const MONTH_MS: i128 = 30 * 86_400_000;
/// A year where [`parse_age`] reads one: 365 days.
const YEAR_MS: i128 = 365 * 86_400_000;

/// Milliseconds per unit. `m` is minutes (never months): months and years are
/// not fixed lengths, so they are not durations here — except with
/// `calendar`, for [`parse_age`].
fn unit_ms(u: &str, calendar: bool) -> Option<i128> {
    Some(match u {
        "s" | "sec" | "secs" | "second" | "seconds" => 1_000,
        "m" | "min" | "mins" | "minute" | "minutes" => 60_000,
        "h" | "hr" | "hrs" | "hour" | "hours" => HOUR_MS,
        "d" | "day" | "days" => 86_400_000,
        "w" | "wk" | "wks" | "week" | "weeks" => 604_800_000,
        "mo" | "mos" | "month" | "months" if calendar => MONTH_MS,
        "y" | "yr" | "yrs" | "year" | "years" if calendar => YEAR_MS,
        _ => return None,
    })
}

/// A duration in milliseconds, > 0; with `calendar`, months and years too
/// (see [`parse_age`]).
fn duration_ms(words: &[&str], calendar: bool) -> Result<i64, PErr> {
    let mut words = words;
    if let [first, rest @ ..] = words
        && *first == "in"
    {
        words = rest;
    }
    if let [rest @ .., "from", "now"] = words {
        words = rest;
    }
    // "-5m": recognised, so that the user is told why it is refused.
    let mut negative = false;
    let stripped: Vec<&str>;
    if let Some(first) = words.first()
        && let Some(tail) = first.strip_prefix('-')
    {
        negative = true;
        stripped = std::iter::once(tail)
            .chain(words[1..].iter().copied())
            .collect();
        words = &stripped;
    }
    let atoms = atoms(words).ok_or(PErr::NoMatch)?;
    if atoms.is_empty() {
        return Err(PErr::NoMatch);
    }

    let mut total: i128 = 0;
    let mut seen: Vec<&str> = Vec::new();
    let mut last_unit: Option<i128> = None;
    let mut i = 0;
    while i < atoms.len() {
        // "an hour and a half"
        if let (Some(unit), [Atom::Word("and"), Atom::Word("a"), Atom::Word("half"), ..]) =
            (last_unit, &atoms[i..])
        {
            total += unit / 2;
            last_unit = None;
            i += 3;
            continue;
        }
        // "1 hour and 30 minutes"
        if last_unit.is_some() && atoms[i] == Atom::Word("and") {
            i += 1;
        }
        // The amount, and its words as an error quotes them before a unit.
        let (amount, said) = match atoms.get(i) {
            Some(Atom::Num { n, text, glued }) => {
                i += 1;
                (*n, format!("{text}{}", if *glued { "" } else { " " }))
            }
            // Only the first component may be a word: in "/later 20m a second
            // message" the "a second" belongs to the message, not the delay.
            Some(Atom::Word(w @ ("a" | "an" | "one")))
                if last_unit.is_none() && seen.is_empty() =>
            {
                i += 1;
                (1000, format!("{w} "))
            }
            // "half an hour"
            Some(Atom::Word("half"))
                if seen.is_empty() && matches!(atoms.get(i + 1), Some(Atom::Word("a" | "an"))) =>
            {
                let an = match atoms.get(i + 1) {
                    Some(Atom::Word(an)) => an,
                    _ => "an",
                };
                i += 2;
                (500, format!("half {an} "))
            }
            _ => return Err(PErr::NoMatch),
        };
        let Some(Atom::Word(unit)) = atoms.get(i) else {
            return Err(PErr::NoMatch);
        };
        // With months about, `6m` could be either; after hours it is minutes.
        if calendar && *unit == "m" && last_unit != Some(HOUR_MS) {
            let n = format!("{}.{:03}", amount / 1000, amount % 1000);
            let n = n.trim_end_matches('0').trim_end_matches('.');
            return Err(PErr::Fail(WhenError::MinutesOrMonths {
                said: format!("{said}m"),
                amount: n.to_string(),
            }));
        }
        let per = unit_ms(unit, calendar).ok_or(PErr::NoMatch)?;
        // Each unit once: "1h 1h" is more likely a typo than a sum.
        let canon = per_name(per);
        if seen.contains(&canon) {
            return Err(PErr::NoMatch);
        }
        // Largest unit first, as people write them ("1h 30m"): in "/later
        // 1h 3 days until release" the "3 days" belongs to the message.
        if last_unit.is_some_and(|last| per >= last) {
            return Err(PErr::NoMatch);
        }
        seen.push(canon);
        i += 1;
        total += amount * per / 1000;
        last_unit = Some(per);
    }
    if negative || total <= 0 {
        return Err(PErr::Fail(WhenError::NotPositive));
    }
    i64::try_from(total).map_err(|_| PErr::Fail(WhenError::OutOfRange))
}

/// `1h30`, `2h05`: hours, then minutes (under 60) with no unit of their own.
fn hours_then_minutes(word: &str) -> bool {
    let Some((h, m)) = word.split_once(['h', 'H']) else {
        return false;
    };
    !h.is_empty()
        && h.bytes().all(|b| b.is_ascii_digit())
        && (1..=2).contains(&m.len())
        && m.bytes().all(|b| b.is_ascii_digit())
        && m.parse::<u32>().is_ok_and(|m| m < 60)
}

fn per_name(per: i128) -> &'static str {
    match per {
        MONTH_MS => "mo",
        YEAR_MS => "y",
        1_000 => "s",
        60_000 => "m",
        3_600_000 => "h",
        86_400_000 => "d",
        _ => "w",
    }
}

// --- clock times ------------------------------------------------------------
//
// Hand-written because interim turns `12pm` after a date into the next day's
// midnight and `12am` into noon, does not range-check hours after a date
// (`tomorrow 100pm`), panics on upper-case `AM`/`PM` after a date, and has
// neither `noon` nor a safe `midnight`.

#[derive(Debug, Clone, Copy)]
struct Clock {
    time: NaiveTime,
    /// From a `z` / `utc` / `+02:00` suffix: the wall time is in that
    /// offset instead of the user's zone.
    offset: Option<FixedOffset>,
}

fn meridiem(s: &str) -> Option<bool> {
    match s {
        "am" | "a.m." | "a.m" => Some(false),
        "pm" | "p.m." | "p.m" => Some(true),
        _ => None,
    }
}

/// `am…` / `p.m.…` at the start of `s`: (is pm, bytes used).
fn meridiem_prefix(s: &str) -> Option<(bool, usize)> {
    ["a.m.", "p.m.", "a.m", "p.m", "am", "pm"]
        .iter()
        .find(|m| s.starts_with(**m))
        .and_then(|m| Some((meridiem(m)?, m.len())))
}

fn parse_clock(words: &[&str]) -> Result<Clock, PErr> {
    let plain = |h, m| {
        Ok(Clock {
            time: NaiveTime::from_hms_opt(h, m, 0).ok_or(PErr::NoMatch)?,
            offset: None,
        })
    };
    match words {
        ["noon" | "midday"] => plain(12, 0),
        // 00:00, the start of the day, like `12am` (the preview shows the
        // date, so "fri midnight" = Thu night -> Fri 00:00 is visible).
        ["midnight"] => plain(0, 0),
        [w] => clock_token(w, None, w),
        [w, ap] => {
            let pm = meridiem(ap).ok_or(PErr::NoMatch)?;
            clock_token(w, Some(pm), &format!("{w} {ap}"))
        }
        _ => Err(PErr::NoMatch),
    }
}

/// `9`, `9:30`, `09:30:15`, `9.30` followed by an optional meridiem (`am`,
/// `p.m.`), then an optional offset (`z`, `+02:00`, `-0500`).
/// `meridiem_word` is a separate `am`/`pm` word already read.
fn clock_token(w: &str, meridiem_word: Option<bool>, shown: &str) -> Result<Clock, PErr> {
    let b = w.as_bytes();
    let digits = |from: usize| b[from..].iter().take_while(|c| c.is_ascii_digit()).count();

    let hl = digits(0);
    if !(1..=2).contains(&hl) {
        return Err(PErr::NoMatch);
    }
    let h: u32 = w[..hl].parse().map_err(|_| PErr::NoMatch)?;
    let mut i = hl;
    let (mut m, mut s) = (0u32, 0u32);
    let mut sep = None;
    if i < b.len() && (b[i] == b':' || b[i] == b'.') && digits(i + 1) == 2 {
        sep = Some(b[i]);
        m = w[i + 1..i + 3].parse().map_err(|_| PErr::NoMatch)?;
        i += 3;
        if sep == Some(b':') && i < b.len() && b[i] == b':' && digits(i + 1) == 2 {
            s = w[i + 1..i + 3].parse().map_err(|_| PErr::NoMatch)?;
            i += 3;
        }
    }
    let mut rest = &w[i..];
    let mut pm = meridiem_word;
    if pm.is_none()
        && let Some((p, len)) = meridiem_prefix(rest)
    {
        pm = Some(p);
        rest = &rest[len..];
    }
    let offset = if rest.is_empty() {
        None
    } else {
        Some(parse_offset(rest).ok_or(PErr::NoMatch)?)
    };
    // `9` alone is ambiguous (9am? 9 minutes?); `1.5` is a number, not
    // 1:05; `17.30` (two digits after the point) is 17:30, as `17:30`.
    if pm.is_none() && sep.is_none() {
        return Err(PErr::NoMatch);
    }
    let no_such = || PErr::Fail(WhenError::NoSuchTime(quoted(shown)));
    let h24 = match pm {
        Some(pm) => {
            if !(1..=12).contains(&h) {
                return Err(no_such());
            }
            // 12am = 00, 12pm = 12: the convention interim gets wrong after a date.
            h % 12 + if pm { 12 } else { 0 }
        }
        None => h,
    };
    let time = NaiveTime::from_hms_opt(h24, m, s).ok_or_else(no_such)?;
    let offset = match offset {
        Some(o) => Some(o.ok_or_else(no_such)?),
        None => None,
    };
    Ok(Clock { time, offset })
}

/// `z`, `+02:00`, `+0200`, `+02`, `-05:00`. Outer `None`: not an offset at all;
/// inner `None`: offset-shaped but out of range.
fn parse_offset(s: &str) -> Option<Option<FixedOffset>> {
    if s == "z" {
        return Some(FixedOffset::east_opt(0));
    }
    let (sign, body) = match s.as_bytes().first()? {
        b'+' => (1, &s[1..]),
        b'-' => (-1, &s[1..]),
        _ => return None,
    };
    let body = body.replacen(':', "", 1);
    if !matches!(body.len(), 2 | 4) || !body.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let hh: i32 = body[..2].parse().ok()?;
    let mm: i32 = if body.len() == 4 {
        body[2..].parse().ok()?
    } else {
        0
    };
    if mm > 59 {
        return Some(None);
    }
    Some(FixedOffset::east_opt(sign * (hh * 3600 + mm * 60)))
}

// --- dates ------------------------------------------------------------------

#[derive(Debug, Clone, Copy)]
enum DateSpec {
    Today,
    Tomorrow,
    /// `fri` / `this fri` (`next: false`), `next fri` (`next: true`).
    Weekday {
        day: Weekday,
        next: bool,
    },
    /// A day that has gone: `yesterday`, `last fri`. Refused as past.
    Before(NaiveDate),
    /// A calendar date; without an explicit year it rolls to its next occurrence.
    Ymd {
        date: NaiveDate,
        has_year: bool,
    },
}

/// Weekday names and the usual abbreviations (`tue`, `tues`, `thu`, `thur`,
/// `thurs`, `weds`, ...). interim has these too, but it is not used for
/// weekdays: see `resolve` for the next-occurrence and `next` rules.
pub(crate) fn weekday(w: &str) -> Option<Weekday> {
    Some(match w {
        "mon" | "monday" => Weekday::Mon,
        "tue" | "tues" | "tuesday" => Weekday::Tue,
        "wed" | "weds" | "wednesday" => Weekday::Wed,
        "thu" | "thur" | "thurs" | "thursday" => Weekday::Thu,
        "fri" | "friday" => Weekday::Fri,
        "sat" | "saturday" => Weekday::Sat,
        "sun" | "sunday" => Weekday::Sun,
        _ => return None,
    })
}

fn is_month(w: &str) -> bool {
    matches!(
        w,
        "jan"
            | "january"
            | "feb"
            | "february"
            | "mar"
            | "march"
            | "apr"
            | "april"
            | "may"
            | "jun"
            | "june"
            | "jul"
            | "july"
            | "aug"
            | "august"
            | "sep"
            | "sept"
            | "september"
            | "oct"
            | "october"
            | "nov"
            | "november"
            | "dec"
            | "december"
    )
}

fn parse_date(words: &[&str], today: NaiveDate) -> Result<DateSpec, PErr> {
    let words: Vec<&str> = words
        .iter()
        .map(|w| w.trim_end_matches(','))
        .filter(|w| !w.is_empty())
        .collect();
    match words.as_slice() {
        ["today"] => Ok(DateSpec::Today),
        ["tomorrow" | "tmrw" | "tmr"] => Ok(DateSpec::Tomorrow),
        ["yesterday"] => today.pred_opt().map(DateSpec::Before).ok_or(PErr::NoMatch),
        // The latest such day before today (a week ago on that day).
        ["last", w] if weekday(w).is_some() => {
            let day = weekday(w).ok_or(PErr::NoMatch)?;
            let back = (i64::from(today.weekday().num_days_from_monday())
                - i64::from(day.num_days_from_monday()))
            .rem_euclid(7);
            today
                .checked_sub_signed(Duration::days(if back == 0 { 7 } else { back }))
                .map(DateSpec::Before)
                .ok_or(PErr::NoMatch)
        }
        [w] if weekday(w).is_some() => Ok(DateSpec::Weekday {
            day: weekday(w).ok_or(PErr::NoMatch)?,
            next: false,
        }),
        [dir @ ("this" | "next"), w] if weekday(w).is_some() => Ok(DateSpec::Weekday {
            day: weekday(w).ok_or(PErr::NoMatch)?,
            next: *dir == "next",
        }),
        [w] if iso_date_parts(w).is_some() => {
            let (y, m, d) = iso_date_parts(w).ok_or(PErr::NoMatch)?;
            let date = NaiveDate::from_ymd_opt(y, m, d)
                .ok_or_else(|| PErr::Fail(WhenError::NoSuchTime(quoted(w))))?;
            Ok(DateSpec::Ymd {
                date,
                has_year: true,
            })
        }
        _ => month_date(&words, today),
    }
}

/// Month-name dates, delegated to interim (`dec 1`, `1 dec`, `1 december
/// 2026`, `december 1, 2026`), which handles them correctly — but only after
/// checking that every word is a month name, a number of at most four digits
/// (ordinal suffix removed) or the filler `of`/`the`. That gate keeps away
/// everything that makes interim panic (upper-case letters, long words after
/// a number) or misread (`midnight` = now, bare month names = the 1st).
fn month_date(words: &[&str], today: NaiveDate) -> Result<DateSpec, PErr> {
    let mut toks: Vec<&str> = Vec::new();
    let (mut months, mut numbers) = (0, 0);
    for w in words {
        if matches!(*w, "of" | "the") {
            continue;
        }
        if is_month(w) {
            months += 1;
            toks.push(w);
            continue;
        }
        // "1st", "22nd", "3rd", "4th": interim does not know ordinals.
        let n = ["st", "nd", "rd", "th"]
            .iter()
            .find_map(|s| w.strip_suffix(s))
            .unwrap_or(w);
        if (1..=4).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_digit()) {
            numbers += 1;
            toks.push(n);
        } else {
            return Err(PErr::NoMatch);
        }
    }
    if months != 1 || !(1..=2).contains(&numbers) {
        return Err(PErr::NoMatch);
    }
    let has_year = numbers == 2;
    // A year has four digits: in `dec 25 21` the 21 is an hour (read by
    // the caller), not the year 21.
    if has_year
        && !toks
            .iter()
            .any(|t| t.len() == 4 && t.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(PErr::NoMatch);
    }
    // interim reads "dec 1 2026" as a day followed by a clock time and fails;
    // it wants "dec 1, 2026".
    let text = match toks.as_slice() {
        [m, d, y] if is_month(m) => format!("{m} {d}, {y}"),
        _ => toks.join(" "),
    };
    // Base instant: today's wall-clock date in UTC, so interim's own midnight
    // resolution can never fall into a DST gap; only the date is used.
    let base = Utc.from_utc_datetime(&today.and_time(NaiveTime::MIN));
    match interim::parse_date_string(&text, base, interim::Dialect::Uk) {
        Ok(dt) if dt.time() == NaiveTime::MIN => Ok(DateSpec::Ymd {
            date: dt.date_naive(),
            has_year,
        }),
        Ok(_) => Err(PErr::NoMatch),
        // Every token was valid, so a missing date means e.g. "feb 30".
        Err(interim::DateError::MissingDate) => {
            Err(PErr::Fail(WhenError::NoSuchTime(quoted(&words.join(" ")))))
        }
        Err(_) => Err(PErr::NoMatch),
    }
}

// --- putting date and time together ------------------------------------------

fn parse_absolute<Tz: TimeZone>(
    trimmed: &str,
    words: &[&str],
    now: &DateTime<Tz>,
) -> Result<DateTime<Utc>, PErr> {
    // Full RFC 3339 (fractional seconds, any offset): chrono parses it exactly.
    if let Ok(t) = DateTime::parse_from_rfc3339(trimmed) {
        return future(t.with_timezone(&Utc), now).map_err(PErr::Fail);
    }
    // `2h ago`: understood, so that it is refused as past (or is now, under
    // a minute ago, like any named time).
    if let [amount @ .., "ago"] = words
        && let Ok(ms) = duration_ms(amount, false)
    {
        let ago = Duration::try_milliseconds(ms)
            .and_then(|d| now.with_timezone(&Utc).checked_sub_signed(d))
            .ok_or(PErr::Fail(WhenError::OutOfRange))?;
        return future(ago, now).map_err(PErr::Fail);
    }
    // A part of the day (`tomorrow evening`, `fri night 8pm`, `tonight`,
    // `7 in the evening`): read with the rest, which it gives a time or
    // whose hour it places in its half of the day.
    if let Some(found) = find_day_part(words) {
        return date_and_clock(&found.rest, now, Some(&found));
    }
    date_and_clock(words, now, None)
}

/// A part of the day found among the words of a time: which, whether it
/// names today too (`tonight`, `this evening`), the words without it, and
/// it as said (`in the evening`).
pub(crate) struct FoundPart<'a> {
    pub(crate) part: DayPart,
    pub(crate) today: bool,
    pub(crate) rest: Vec<&'a str>,
    pub(crate) said: String,
}

/// The one part-of-the-day word in `words`, with what goes with it (`in
/// the`, `this`, `at` before `night`). None when there is none, more than
/// one, or a bare one right after a clock time: in `/at fri 8pm night out`
/// the `night` is more likely the text's (and is then asked about, see
/// [`time_like_start`]); `8pm tonight`, `7 in the evening` are the time's.
pub(crate) fn find_day_part<'a>(words: &[&'a str]) -> Option<FoundPart<'a>> {
    let mut hits = words
        .iter()
        .enumerate()
        .filter_map(|(i, w)| Some((i, DayPart::of(w)?)));
    let (i, (part, mut today)) = hits.next()?;
    if hits.next().is_some() {
        return None;
    }
    let mut start = i;
    match &words[..i] {
        [.., "in", "the"] => start = i - 2,
        [.., "this"] if !today => {
            start = i - 1;
            today = true;
        }
        [.., "at"] if part == DayPart::Night => start = i - 1,
        [.., before] if !today && clock_like(before) => return None,
        _ => {}
    }
    let rest = words[..start]
        .iter()
        .chain(&words[i + 1..])
        .copied()
        .collect();
    Some(FoundPart {
        part,
        today,
        rest,
        said: words[start..=i].join(" "),
    })
}

/// `8pm`, `20:00`, `8`, `pm`: a word that ends a clock time.
fn clock_like(w: &str) -> bool {
    parse_clock(&[w]).is_ok() || hour_number(w).is_some() || meridiem(w).is_some()
}

/// A part of the day, said instead of a time or with one. Its time alone
/// and its hours (where a clock time said with it must fall; an hour from
/// 1 to 12 is taken in the half of the day inside them):
///
/// * `morning`: 09:00; 05:00–11:59 (`morning 7` is 07:00)
/// * `afternoon`: 15:00; 12:00–17:59 (`afternoon 2` is 14:00)
/// * `evening`: 19:00; 17:00–23:59 (`evening 7` is 19:00)
/// * `night`, `tonight`: 21:00; 18:00–04:59, the small hours being those
///   after the day said (`fri night 1am` is Saturday 01:00, `tonight 12`
///   the midnight that ends today)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DayPart {
    Morning,
    Afternoon,
    Evening,
    Night,
}

impl DayPart {
    /// The part a word names, and whether it names today too (`tonight`).
    pub(crate) fn of(w: &str) -> Option<(DayPart, bool)> {
        Some(match w.trim_end_matches(',') {
            "morning" => (DayPart::Morning, false),
            "afternoon" => (DayPart::Afternoon, false),
            "evening" => (DayPart::Evening, false),
            "night" => (DayPart::Night, false),
            "tonight" => (DayPart::Night, true),
            _ => return None,
        })
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            DayPart::Morning => "morning",
            DayPart::Afternoon => "afternoon",
            DayPart::Evening => "evening",
            DayPart::Night => "night",
        }
    }

    fn hours(self) -> &'static str {
        match self {
            DayPart::Morning => "05:00–11:59",
            DayPart::Afternoon => "12:00–17:59",
            DayPart::Evening => "17:00–23:59",
            DayPart::Night => "18:00–04:59",
        }
    }

    /// Its time when no clock time is said with it.
    pub(crate) fn time(self) -> NaiveTime {
        let h = match self {
            DayPart::Morning => 9,
            DayPart::Afternoon => 15,
            DayPart::Evening => 19,
            DayPart::Night => 21,
        };
        NaiveTime::from_hms_opt(h, 0, 0).unwrap_or(NaiveTime::MIN)
    }

    /// Whether `t` is in this part: `Some(true)` when it is in the small
    /// hours of the day after (a night's 01:00), None when it is not in it.
    pub(crate) fn admits(self, t: NaiveTime) -> Option<bool> {
        use chrono::Timelike;
        let h = t.hour();
        match self {
            DayPart::Morning => (5..12).contains(&h).then_some(false),
            DayPart::Afternoon => (12..18).contains(&h).then_some(false),
            DayPart::Evening => (17..24).contains(&h).then_some(false),
            DayPart::Night if h >= 18 => Some(false),
            DayPart::Night => (h < 5).then_some(true),
        }
    }

    /// An hour said alone with this part (`evening 7`): from 1 to 12, the
    /// one of its two readings inside the part; 0 or 13 to 23, itself.
    pub(crate) fn hour(self, h: u32) -> Option<NaiveTime> {
        let readings = match h {
            1..=12 => vec![h % 12, h % 12 + 12],
            _ => vec![h],
        };
        readings
            .into_iter()
            .filter_map(|h| NaiveTime::from_hms_opt(h, 0, 0))
            .find(|t| self.admits(*t).is_some())
    }

    /// A clock time said with this part (its `words` as said): itself if
    /// it is in the part, else, written on a 12-hour clock without am or pm
    /// (`evening 6:30`, not `06:30`), its afternoon or evening reading if
    /// that is; None when neither is.
    pub(crate) fn place(self, t: NaiveTime, words: &[&str]) -> Option<NaiveTime> {
        if self.admits(t).is_some() {
            return Some(t);
        }
        let twelve_hour = match words {
            [w] => {
                let hl = w.bytes().take_while(u8::is_ascii_digit).count();
                !w.starts_with('0')
                    && w[..hl].parse::<u32>().is_ok_and(|h| (1..=12).contains(&h))
                    && !w
                        .bytes()
                        .any(|b| b.is_ascii_alphabetic() || b == b'+' || b == b'-')
            }
            _ => false,
        };
        let other = t.overflowing_add_signed(Duration::hours(12)).0;
        (twelve_hour && self.admits(other).is_some()).then_some(other)
    }

    /// The error for `said` (the part and a clock time) not in it.
    pub(crate) fn refusal(self, said: &str) -> WhenError {
        WhenError::NotInDayPart {
            said: quoted(said),
            part: self.name(),
            hours: self.hours(),
        }
    }
}

/// A time read as a date and a clock time, in either order (after a part
/// of the day was taken out, when `part` says which).
fn date_and_clock<Tz: TimeZone>(
    words: &[&str],
    now: &DateTime<Tz>,
    part: Option<&FoundPart>,
) -> Result<DateTime<Utc>, PErr> {
    // A bare hour: past 12 (or 0) it can only be that hour on a 24-hour
    // clock; 1 to 12 could be either half of the day, and the user is asked
    // (unless a part of the day says which).
    // After a day or a date too (`tomorrow 21`, `dec 25 9`), below.
    match (bare_hour(words), part) {
        (Some(h), Some(p)) => {
            let time = p.part.hour(h).ok_or_else(|| {
                PErr::Fail(p.part.refusal(&format!("{} {}", p.said, words.join(" "))))
            })?;
            let date = p.today.then_some(DateSpec::Today);
            let clock = Clock { time, offset: None };
            let next_day = p.part.admits(time) == Some(true);
            return resolve_part(date, Some(clock), next_day, now, Some(p)).map_err(PErr::Fail);
        }
        (Some(h @ 1..=12), None) => return Err(PErr::Fail(WhenError::AmbiguousHour(h))),
        (Some(h), None) => {
            let time = NaiveTime::from_hms_opt(h, 0, 0).ok_or(PErr::NoMatch)?;
            let clock = Clock { time, offset: None };
            return resolve(None, Some(clock), now).map_err(PErr::Fail);
        }
        (None, _) => {}
    }
    let mut words = words;
    if let ["at" | "on", rest @ ..] = words
        && !rest.is_empty()
    {
        words = rest;
    }
    // `tomorrow at`, what `tomorrow at night` leaves: the joining word
    // was the part's.
    if part.is_some()
        && let [rest @ .., "at" | "on"] = words
    {
        words = rest;
    }
    let n = words.len();
    let empty: &[&str] = &[];
    let mut splits: Vec<(&[&str], &[&str])> = vec![(empty, words), (words, empty)];
    // date then time: "tomorrow 9 am", "tomorrow at 9am"
    let first = splits.len();
    for k in [2, 1] {
        if n > k {
            let mut date = &words[..n - k];
            if let [d @ .., "at"] = date
                && !d.is_empty()
            {
                date = d;
            }
            splits.push((date, &words[n - k..]));
        }
    }
    let date_first = first..splits.len();
    // time then date: "9am tomorrow", "5pm on fri"
    for k in [2, 1] {
        if n > k {
            let mut date = &words[k..];
            if let ["on", d @ ..] = date
                && !d.is_empty()
            {
                date = d;
            }
            splits.push((date, &words[..k]));
        }
    }

    let today = now.date_naive();
    let mut refusal: Option<WhenError> = None;
    for (i, (date_words, time_words)) in splits.into_iter().enumerate() {
        let clock = if time_words.is_empty() {
            Ok(None)
        } else {
            parse_clock(time_words).map(Some)
        };
        let date = if date_words.is_empty() {
            Ok(None)
        } else {
            parse_date(date_words, today).map(Some)
        };
        // `tonight`, `this evening` name the day: no other with them.
        let date = match (part, date) {
            (Some(p), Ok(None)) if p.today => Ok(Some(DateSpec::Today)),
            (Some(p), Ok(Some(_))) if p.today => Err(PErr::NoMatch),
            (_, date) => date,
        };
        let clock = match (part, &date, clock, time_words) {
            // With a part of the day: its time, or an hour in its half of
            // the day, or a clock time that is in it.
            (Some(p), _, Ok(None), _) => Ok(Some(Clock {
                time: p.part.time(),
                offset: None,
            })),
            (Some(p), Ok(_), Err(PErr::NoMatch), [w]) if hour_number(w).is_some() => {
                match hour_number(w).and_then(|h| p.part.hour(h)) {
                    Some(time) => Ok(Some(Clock { time, offset: None })),
                    None => Err(PErr::Fail(p.part.refusal(&format!("{} {w}", p.said)))),
                }
            }
            (Some(p), _, Ok(Some(c)), _) => match p.part.place(c.time, time_words) {
                Some(time) => Ok(Some(Clock { time, ..c })),
                None => Err(PErr::Fail(p.part.refusal(&format!(
                    "{} {}",
                    p.said,
                    time_words.join(" ")
                )))),
            },
            // A bare hour after a day or a date (`tomorrow 21`, `dec 25 21`),
            // read as alone: 0 or 13 to 23 is that hour, 1 to 12 is asked about.
            (None, Ok(Some(_)), Err(PErr::NoMatch), [w]) if date_first.contains(&i) => {
                match hour_number(w) {
                    Some(hour @ 1..=12) => Err(PErr::Fail(WhenError::AmbiguousHourAfter {
                        hour,
                        after: quoted(&date_words.join(" ")),
                    })),
                    Some(h) => NaiveTime::from_hms_opt(h, 0, 0)
                        .map(|time| Some(Clock { time, offset: None }))
                        .ok_or(PErr::NoMatch),
                    None => Err(PErr::NoMatch),
                }
            }
            (_, _, clock, _) => clock,
        };
        // A night's small hours are on the day after the one said.
        let next_day = match (part, &clock) {
            (Some(p), Ok(Some(c))) => p.part.admits(c.time) == Some(true),
            _ => false,
        };
        match (date, clock) {
            (Ok(date), Ok(clock)) => {
                return resolve_part(date, clock, next_day, now, part).map_err(PErr::Fail);
            }
            // A refusal only counts when the rest of this reading was
            // understood: "tomorrow 25:00" is an impossible time, but in
            // "9am 25:00" the "25:00" is more likely the start of the message.
            (Err(PErr::NoMatch), _) | (_, Err(PErr::NoMatch)) => {}
            (Err(PErr::Fail(e)), _) | (_, Err(PErr::Fail(e))) => {
                refusal.get_or_insert(e);
            }
        }
    }
    Err(refusal.map_or(PErr::NoMatch, PErr::Fail))
}

/// [`resolve`] of a time said with a part of the day: `next_day` when its
/// clock time is in the small hours after the day (`fri night 1am`); a
/// part of today that has gone is refused as over, by name.
fn resolve_part<Tz: TimeZone>(
    date: Option<DateSpec>,
    clock: Option<Clock>,
    next_day: bool,
    now: &DateTime<Tz>,
    part: Option<&FoundPart>,
) -> Result<DateTime<Utc>, WhenError> {
    let today = matches!(date, Some(DateSpec::Today));
    match (resolve_on(date, clock, next_day, now), part) {
        (Err(WhenError::Past(at)), Some(p)) if today => Err(WhenError::DayPartOver {
            said: quoted(&p.said),
            at,
        }),
        (r, _) => r,
    }
}

/// The instant for a parsed date and/or clock time, strictly after `now`.
fn resolve<Tz: TimeZone>(
    date: Option<DateSpec>,
    clock: Option<Clock>,
    now: &DateTime<Tz>,
) -> Result<DateTime<Utc>, WhenError> {
    resolve_on(date, clock, false, now)
}

/// [`resolve`], the clock time on the day after the date when `next_day`
/// (a night's small hours: `fri night 1am` is Saturday 01:00).
fn resolve_on<Tz: TimeZone>(
    date: Option<DateSpec>,
    clock: Option<Clock>,
    next_day: bool,
    now: &DateTime<Tz>,
) -> Result<DateTime<Utc>, WhenError> {
    let tz = now.timezone();
    let now_utc = now.with_timezone(&Utc);
    let today = now.date_naive();
    let time = clock.map_or(
        NaiveTime::from_hms_opt(DEFAULT_HOUR, 0, 0).unwrap_or(NaiveTime::MIN),
        |c| c.time,
    );
    let at = |d: NaiveDate| -> Result<DateTime<Utc>, WhenError> {
        let d = match (next_day, &date) {
            (true, Some(_)) => d.succ_opt().ok_or(WhenError::OutOfRange)?,
            _ => d,
        };
        let naive = d.and_time(time);
        match clock.and_then(|c| c.offset) {
            Some(off) => off
                .from_local_datetime(&naive)
                .single()
                .map(|t| t.with_timezone(&Utc))
                .ok_or(WhenError::OutOfRange),
            None => local_instant(&tz, naive).ok_or(WhenError::OutOfRange),
        }
    };
    let plus_days = |d: NaiveDate, n: u64| {
        d.checked_add_days(chrono::Days::new(n))
            .ok_or(WhenError::OutOfRange)
    };

    match date {
        // A bare clock time: its next occurrence. With an explicit offset
        // ("14:30 utc") the wall time is in that offset, whose date may be a
        // day either side of ours, hence yesterday .. the day after tomorrow.
        None => {
            let yesterday = today.pred_opt().ok_or(WhenError::OutOfRange)?;
            let mut last = at(yesterday)?;
            for days in 0..=2 {
                if let Some(t) = ahead_or_this_minute(last, now_utc) {
                    return Ok(t);
                }
                last = at(plus_days(today, days)?)?;
            }
            future(last, now)
        }
        Some(DateSpec::Today) => future(at(today)?, now),
        Some(DateSpec::Tomorrow) => future(at(plus_days(today, 1)?)?, now),
        Some(DateSpec::Before(day)) => future(at(day)?, now),
        Some(DateSpec::Weekday { day, next }) => {
            let mut delta = (i64::from(day.num_days_from_monday())
                - i64::from(today.weekday().num_days_from_monday()))
            .rem_euclid(7)
            .unsigned_abs();
            if next && delta == 0 {
                delta = 7;
            }
            let t = at(plus_days(today, delta)?)?;
            if let Some(t) = ahead_or_this_minute(t, now_utc) {
                Ok(t)
            } else {
                // Today, but that time has passed: the same day next week.
                future(at(plus_days(today, delta + 7)?)?, now)
            }
        }
        Some(DateSpec::Ymd { date, has_year }) => {
            let t = at(date)?;
            if has_year {
                return future(t, now);
            }
            if let Some(t) = ahead_or_this_minute(t, now_utc) {
                return Ok(t);
            }
            // "nov 1" said on 29 Nov: next year's. (Up to 8 years for 29 Feb.)
            for years in 1..=8 {
                if let Some(d) = date.with_year(date.year() + years) {
                    let t = at(d)?;
                    if t > now_utc {
                        return Ok(t);
                    }
                }
            }
            future(t, now)
        }
    }
}

/// How long a named time still means now once it has come: its minute. At
/// 09:00:50 `/at 9:01` previews "in 10s"; Enter at 09:01:05 sends it then,
/// not tomorrow (nor is it refused as past).
const STILL_NOW_MS: i64 = 60_000;

/// `t` if it is still ahead; `now` if it came less than a minute ago.
fn ahead_or_this_minute(t: DateTime<Utc>, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    if t > now {
        Some(t)
    } else if now.signed_duration_since(t) < Duration::milliseconds(STILL_NOW_MS) {
        Some(now)
    } else {
        None
    }
}

/// `t` if it is after `now` (or came less than a minute ago: then `now`),
/// else `Past`.
fn future<Tz: TimeZone>(t: DateTime<Utc>, now: &DateTime<Tz>) -> Result<DateTime<Utc>, WhenError> {
    ahead_or_this_minute(t, now.with_timezone(&Utc))
        .ok_or_else(|| WhenError::Past(absolute(t, now)))
}

/// A local wall-clock time in `tz` as an instant, using the zone's rules.
///
/// * Ambiguous (clocks go back, the hour happens twice): the earlier instant,
///   so a message is never sent later than the user could have meant.
/// * Nonexistent (clocks jump forward over it): the time is read with the
///   offset in force before the jump, which lands as far past the gap as it
///   was into it — 02:30 becomes 03:30 when clocks go 02:00 -> 03:00 — the
///   same rule as java.time and jiff's "compatible" mode. (interim refuses
///   such times.)
fn local_instant<Tz: TimeZone>(tz: &Tz, naive: NaiveDateTime) -> Option<DateTime<Utc>> {
    match tz.from_local_datetime(&naive) {
        LocalResult::Single(t) => return Some(t.with_timezone(&Utc)),
        // Compared, not taken as `earliest()`: chrono's `Local` gives the two
        // instants of a fold latest first (chrono issue 1625), and `--at 02:30`
        // under TZ=Europe/Berlin went at the second 02:30.
        LocalResult::Ambiguous(a, b) => return Some(a.min(b).with_timezone(&Utc)),
        LocalResult::None => {}
    }
    // The offset a day before is the one before the gap (zones do not change
    // offset twice in a day).
    let before = naive.checked_sub_signed(Duration::days(1))?;
    let off = tz.offset_from_utc_datetime(&before).fix();
    let utc = naive.checked_sub_signed(Duration::seconds(i64::from(off.local_minus_utc())))?;
    Some(Utc.from_utc_datetime(&utc))
}

// --- output -------------------------------------------------------------------

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
fn describe_limit(max: Duration) -> String {
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

#[cfg(test)]
mod word_amount_tests {
    use super::*;
    use chrono::FixedOffset;

    #[test]
    fn words_after_a_duration_stay_in_the_message() {
        let now = FixedOffset::east_opt(3600)
            .unwrap()
            .with_ymd_and_hms(2026, 11, 29, 18, 49, 0)
            .unwrap();
        let (due, rest) = split_time_prefix("20m a second message", &now, Mode::Later).unwrap();
        assert_eq!((due - now.with_timezone(&Utc)).num_seconds(), 20 * 60);
        assert_eq!(rest, "a second message");
        let (due, rest) = split_time_prefix("1h a minute of silence", &now, Mode::Later).unwrap();
        assert_eq!((due - now.with_timezone(&Utc)).num_seconds(), 3600);
        assert_eq!(rest, "a minute of silence");
        let (_, rest) = split_time_prefix("10m an hour", &now, Mode::Later).unwrap();
        assert_eq!(rest, "an hour");
        // A number and a unit larger than the one before belong to the
        // message too: durations are written largest unit first.
        for (input, secs, text) in [
            ("1h 3 days until release", 3600, "3 days until release"),
            ("10m 2 hours review", 600, "2 hours review"),
            ("20m 1d of work remaining", 1200, "1d of work remaining"),
            ("1h 30m 2 weeks left", 5400, "2 weeks left"),
        ] {
            let (due, rest) = split_time_prefix(input, &now, Mode::Later).unwrap();
            assert_eq!(
                ((due - now.with_timezone(&Utc)).num_seconds(), rest.as_str()),
                (secs, text),
                "{input}"
            );
        }
        // A leading word amount still works.
        assert_eq!(
            parse_duration("an hour and a half").unwrap().num_minutes(),
            90
        );
        assert_eq!(parse_duration("half an hour").unwrap().num_minutes(), 30);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Local, LocalResult, Timelike};
    use proptest::prelude::*;

    // ---- fixtures ---------------------------------------------------------

    /// +01:00 (e.g. Paris in winter). Now = Sun 29 Nov 2026 18:49:00.
    fn p1() -> FixedOffset {
        FixedOffset::east_opt(3600).unwrap()
    }
    fn now_p1() -> DateTime<FixedOffset> {
        p1().with_ymd_and_hms(2026, 11, 29, 18, 49, 0).unwrap()
    }
    /// A wall-clock time in +01:00, as UTC.
    fn p1_at(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
        p1().with_ymd_and_hms(y, mo, d, h, mi, s)
            .unwrap()
            .with_timezone(&Utc)
    }

    /// -05:00 (e.g. New York in winter). Now = Sun 29 Nov 2026 18:49:00 there
    /// (23:49 UTC).
    fn m5() -> FixedOffset {
        FixedOffset::west_opt(5 * 3600).unwrap()
    }
    fn now_m5() -> DateTime<FixedOffset> {
        m5().with_ymd_and_hms(2026, 11, 29, 18, 49, 0).unwrap()
    }
    fn m5_at(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
        m5().with_ymd_and_hms(y, mo, d, h, mi, 0)
            .unwrap()
            .with_timezone(&Utc)
    }

    fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, mo, d, h, mi, 0).unwrap()
    }

    #[track_caller]
    fn ok<Tz: TimeZone>(expr: &str, now: &DateTime<Tz>, mode: Mode) -> DateTime<Utc> {
        parse_time(expr, now, mode).unwrap_or_else(|e| panic!("{expr:?} refused: {e}"))
    }

    #[track_caller]
    fn err<Tz: TimeZone>(expr: &str, now: &DateTime<Tz>, mode: Mode) -> WhenError {
        match parse_time(expr, now, mode) {
            Ok(t) => panic!("{expr:?} accepted as {t}"),
            Err(e) => e,
        }
    }

    /// A real DST zone without chrono-tz: central European rules for 2026
    /// (CET +01:00; CEST +02:00 from 29 Mar 01:00 UTC to 25 Oct 01:00 UTC).
    #[derive(Debug, Clone, Copy)]
    struct Cet2026;

    impl Cet2026 {
        fn offset_at(utc: &NaiveDateTime) -> FixedOffset {
            let start = NaiveDate::from_ymd_opt(2026, 3, 29)
                .unwrap()
                .and_hms_opt(1, 0, 0)
                .unwrap();
            let end = NaiveDate::from_ymd_opt(2026, 10, 25)
                .unwrap()
                .and_hms_opt(1, 0, 0)
                .unwrap();
            let hours = if *utc >= start && *utc < end { 2 } else { 1 };
            FixedOffset::east_opt(hours * 3600).unwrap()
        }
    }

    impl TimeZone for Cet2026 {
        type Offset = FixedOffset;
        fn from_offset(_: &FixedOffset) -> Self {
            Cet2026
        }
        fn offset_from_local_date(&self, local: &NaiveDate) -> LocalResult<FixedOffset> {
            self.offset_from_local_datetime(&local.and_time(NaiveTime::MIN))
        }
        fn offset_from_local_datetime(&self, local: &NaiveDateTime) -> LocalResult<FixedOffset> {
            // Earliest instant first, as chrono's own zones do.
            let valid: Vec<FixedOffset> = [2, 1]
                .into_iter()
                .map(|h| FixedOffset::east_opt(h * 3600).unwrap())
                .filter(|o| {
                    let utc = *local - Duration::seconds(i64::from(o.local_minus_utc()));
                    Self::offset_at(&utc) == *o
                })
                .collect();
            match valid.as_slice() {
                [] => LocalResult::None,
                [o] => LocalResult::Single(*o),
                [a, b] => LocalResult::Ambiguous(*a, *b),
                _ => unreachable!(),
            }
        }
        fn offset_from_utc_date(&self, utc: &NaiveDate) -> FixedOffset {
            Self::offset_at(&utc.and_time(NaiveTime::MIN))
        }
        fn offset_from_utc_datetime(&self, utc: &NaiveDateTime) -> FixedOffset {
            Self::offset_at(utc)
        }
    }

    #[test]
    fn fixture_sanity() {
        assert_eq!(now_p1().weekday(), Weekday::Sun);
        assert_eq!(now_p1().with_timezone(&Utc), utc(2026, 11, 29, 17, 49));
        assert_eq!(now_m5().with_timezone(&Utc), utc(2026, 11, 29, 23, 49));
        // the test zone really has a gap and a fold
        assert_eq!(
            Cet2026.from_local_datetime(
                &NaiveDate::from_ymd_opt(2026, 3, 29)
                    .unwrap()
                    .and_hms_opt(2, 30, 0)
                    .unwrap()
            ),
            LocalResult::None
        );
        assert!(matches!(
            Cet2026.from_local_datetime(
                &NaiveDate::from_ymd_opt(2026, 10, 25)
                    .unwrap()
                    .and_hms_opt(2, 30, 0)
                    .unwrap()
            ),
            LocalResult::Ambiguous(..)
        ));
    }

    // ---- durations --------------------------------------------------------

    #[test]
    fn durations_resolve_from_now_in_both_modes() {
        let now = now_p1();
        let cases = [
            ("10m", p1_at(2026, 11, 29, 18, 59, 0)),
            ("10 min", p1_at(2026, 11, 29, 18, 59, 0)),
            ("10 mins", p1_at(2026, 11, 29, 18, 59, 0)),
            ("in 10 minutes", p1_at(2026, 11, 29, 18, 59, 0)),
            ("10 minutes from now", p1_at(2026, 11, 29, 18, 59, 0)),
            ("1h30m", p1_at(2026, 11, 29, 20, 19, 0)),
            ("1h 30m", p1_at(2026, 11, 29, 20, 19, 0)),
            ("1 hour 30 minutes", p1_at(2026, 11, 29, 20, 19, 0)),
            ("1 hour and 30 minutes", p1_at(2026, 11, 29, 20, 19, 0)),
            ("1 hour, 30 minutes", p1_at(2026, 11, 29, 20, 19, 0)),
            ("1.5h", p1_at(2026, 11, 29, 20, 19, 0)),
            ("an hour and a half", p1_at(2026, 11, 29, 20, 19, 0)),
            ("2 hours", p1_at(2026, 11, 29, 20, 49, 0)),
            ("in 2h", p1_at(2026, 11, 29, 20, 49, 0)),
            ("2 hrs", p1_at(2026, 11, 29, 20, 49, 0)),
            ("1d", p1_at(2026, 11, 30, 18, 49, 0)),
            ("1 day", p1_at(2026, 11, 30, 18, 49, 0)),
            ("90s", p1_at(2026, 11, 29, 18, 50, 30)),
            ("90 seconds", p1_at(2026, 11, 29, 18, 50, 30)),
            ("1w", p1_at(2026, 12, 6, 18, 49, 0)),
            ("2 weeks", p1_at(2026, 12, 13, 18, 49, 0)),
            ("an hour", p1_at(2026, 11, 29, 19, 49, 0)),
            ("in a minute", p1_at(2026, 11, 29, 18, 50, 0)),
            ("half an hour", p1_at(2026, 11, 29, 19, 19, 0)),
            ("1d2h3m4s", p1_at(2026, 11, 30, 20, 52, 4)),
            ("  IN   10   MINUTES  ", p1_at(2026, 11, 29, 18, 59, 0)),
        ];
        for (expr, want) in cases {
            assert_eq!(ok(expr, &now, Mode::Later), want, "{expr:?} (later)");
            assert_eq!(ok(expr, &now, Mode::At), want, "{expr:?} (at)");
        }
    }

    #[test]
    fn parse_duration_values() {
        let cases = [
            ("10m", Duration::minutes(10)),
            ("10 min", Duration::minutes(10)),
            ("in 10 minutes", Duration::minutes(10)),
            ("1h30m", Duration::minutes(90)),
            ("1h 30m", Duration::minutes(90)),
            ("1 hour 30 minutes", Duration::minutes(90)),
            ("2 hours", Duration::hours(2)),
            ("1d", Duration::days(1)),
            ("90s", Duration::seconds(90)),
            ("1.5h", Duration::minutes(90)),
            ("0.25h", Duration::minutes(15)),
            ("1w", Duration::weeks(1)),
            ("an hour", Duration::hours(1)),
            ("half an hour", Duration::minutes(30)),
            ("1.5s", Duration::milliseconds(1500)),
        ];
        for (expr, want) in cases {
            assert_eq!(parse_duration(expr), Ok(want), "{expr:?}");
        }
    }

    /// How long ago, for `tock prune --older-than`: durations, and months
    /// and years at a fixed length; `m` alone could be either.
    #[test]
    fn parse_age_values_and_refusals() {
        let day = Duration::days(1);
        for (expr, want) in [
            ("1y", day * 365),
            ("1 year", day * 365),
            ("2 years", day * 730),
            ("2yrs", day * 730),
            ("6mo", day * 180),
            ("6 months", day * 180),
            ("1 month", day * 30),
            ("1y 6mo", day * 545),
            ("1 year and 2 weeks", day * 379),
            ("2w", day * 14),
            ("3 weeks", day * 21),
            ("30d", day * 30),
            ("12h", Duration::hours(12)),
            ("1h30m", Duration::minutes(90)),
            ("90 min", Duration::minutes(90)),
            ("10 minutes", Duration::minutes(10)),
        ] {
            assert_eq!(parse_age(expr), Ok(want), "{expr:?}");
        }
        // The error quotes the amount and its `m` as typed.
        for (typed, said, amount) in [
            ("6m", "6m", "6"),
            ("6 m", "6 m", "6"),
            ("1y 6m", "6m", "6"),
            ("1.5m", "1.5m", "1.5"),
            ("1M", "1M", "1"),
            ("6  M", "6  M", "6"),
            ("1Y 6M", "6M", "6"),
            ("an M", "an M", "1"),
        ] {
            assert_eq!(
                parse_age(typed),
                Err(WhenError::MinutesOrMonths {
                    said: said.into(),
                    amount: amount.into()
                }),
                "{typed:?}"
            );
        }
        assert_eq!(
            parse_age("1M").map_err(|e| e.to_string()),
            Err("\"1M\" could be minutes or months — say 1min or 1mo".into())
        );
        assert_eq!(parse_age("0y"), Err(WhenError::NotPositive));
        // A number alone could be hours, days, months or years: refused
        // naming each, with the number given.
        for bare in ["1", "30", "1.5", " 7 "] {
            assert_eq!(
                parse_age(bare),
                Err(WhenError::NoUnit(bare.trim().into())),
                "{bare:?}"
            );
        }
        assert_eq!(
            parse_age("1").map_err(|e| e.to_string()),
            Err(
                "\"1\" has no unit — say 1h, 1d, 1w, 1mo or 1y (a month is 30 days, a year 365)"
                    .into()
            )
        );
        for not_a_number in ["1.", ".5", "1.2.3", "1 2"] {
            assert_eq!(
                parse_age(not_a_number),
                Err(WhenError::NotASpan(not_a_number.into())),
                "{not_a_number:?}"
            );
        }
        assert_eq!(parse_age(""), Err(WhenError::Empty));
        assert_eq!(
            parse_age("a fortnight").map_err(|e| e.to_string()),
            Err("can't read \"a fortnight\" as a span of time — try 12h, 30d, 2w, 6mo, 1y (a month is 30 days, a year 365)".into())
        );
        // Elsewhere years and months stay refused: a delay or a series'
        // span is exact, and a date says what is meant.
        assert_eq!(
            parse_duration("1y"),
            Err(WhenError::NotADuration("1y".into()))
        );
    }

    #[test]
    fn parse_duration_refusals() {
        assert_eq!(parse_duration(""), Err(WhenError::Empty));
        assert_eq!(parse_duration("  "), Err(WhenError::Empty));
        assert_eq!(parse_duration("0m"), Err(WhenError::NotPositive));
        assert_eq!(
            parse_duration("0 hours 0 minutes"),
            Err(WhenError::NotPositive)
        );
        assert_eq!(parse_duration("-5m"), Err(WhenError::NotPositive));
        for bad in [
            "blah",
            "9am",
            "10",
            "1.5",
            "m",
            "in",
            "1h 1h",
            "10 months",
            "1 year",
            "midnight",
            "month",
            "1h30",
            "1..5h",
            "1,5h",
            "10m ago",
            "1.2345h",
            "1234567890s",
        ] {
            assert_eq!(
                parse_duration(bad),
                Err(WhenError::NotADuration(bad.to_string())),
                "{bad:?}"
            );
        }
        // nine digits of weeks is ~19 million years: too far for DateTime
        assert_eq!(
            parse_time("999999999w", &now_p1(), Mode::Later),
            Err(WhenError::OutOfRange)
        );
        assert!(parse_duration("999999999w").is_ok());
        // Ten years ahead is the most anything may be scheduled: the parser
        // refuses beyond it, so a preview never shows what sending refuses.
        let ten_years = WhenError::TooFar("10 years".into());
        assert_eq!(
            parse_time("99999h", &now_p1(), Mode::Later),
            Err(ten_years.clone())
        );
        assert_eq!(
            parse_time("2040-01-01 09:00", &now_p1(), Mode::At),
            Err(ten_years.clone())
        );
        assert_eq!(
            split_time_prefix("99999h check", &now_p1(), Mode::Later),
            Err(ten_years)
        );
        assert!(parse_time("3650d", &now_p1(), Mode::Later).is_ok());
        assert!(parse_time("3651d", &now_p1(), Mode::Later).is_err());
    }

    // ---- absolute times ---------------------------------------------------

    #[test]
    fn absolute_times_plus_one() {
        let now = now_p1();
        let cases = [
            // clock times already past today -> tomorrow
            ("9am", p1_at(2026, 11, 30, 9, 0, 0)),
            ("9 am", p1_at(2026, 11, 30, 9, 0, 0)),
            ("9 a.m.", p1_at(2026, 11, 30, 9, 0, 0)),
            ("9:30am", p1_at(2026, 11, 30, 9, 30, 0)),
            ("14:30", p1_at(2026, 11, 30, 14, 30, 0)),
            ("14:30:15", p1_at(2026, 11, 30, 14, 30, 15)),
            ("noon", p1_at(2026, 11, 30, 12, 0, 0)),
            ("midday", p1_at(2026, 11, 30, 12, 0, 0)),
            ("midnight", p1_at(2026, 11, 30, 0, 0, 0)),
            ("12pm", p1_at(2026, 11, 30, 12, 0, 0)),
            ("12am", p1_at(2026, 11, 30, 0, 0, 0)),
            ("12:30am", p1_at(2026, 11, 30, 0, 30, 0)),
            ("18:48", p1_at(2026, 11, 30, 18, 48, 0)), // a minute ago -> tomorrow
            ("18:49", p1_at(2026, 11, 29, 18, 49, 0)), // this minute -> now
            // clock times still ahead today -> today
            ("20:00", p1_at(2026, 11, 29, 20, 0, 0)),
            ("8pm", p1_at(2026, 11, 29, 20, 0, 0)),
            ("9:30 pm", p1_at(2026, 11, 29, 21, 30, 0)),
            ("9.30pm", p1_at(2026, 11, 29, 21, 30, 0)),
            ("18:50", p1_at(2026, 11, 29, 18, 50, 0)),
            ("at 9am", p1_at(2026, 11, 30, 9, 0, 0)),
            ("today 20:00", p1_at(2026, 11, 29, 20, 0, 0)),
            // tomorrow
            ("tomorrow 9am", p1_at(2026, 11, 30, 9, 0, 0)),
            ("tomorrow 14:30", p1_at(2026, 11, 30, 14, 30, 0)),
            ("tomorrow", p1_at(2026, 11, 30, 9, 0, 0)), // no time -> 09:00
            ("tmrw", p1_at(2026, 11, 30, 9, 0, 0)),
            ("tomorrow 12pm", p1_at(2026, 11, 30, 12, 0, 0)),
            ("tomorrow 12am", p1_at(2026, 11, 30, 0, 0, 0)),
            ("tomorrow noon", p1_at(2026, 11, 30, 12, 0, 0)),
            ("tomorrow at 9am", p1_at(2026, 11, 30, 9, 0, 0)),
            ("tomorrow at 9 am", p1_at(2026, 11, 30, 9, 0, 0)),
            ("9am tomorrow", p1_at(2026, 11, 30, 9, 0, 0)),
            ("Tomorrow 9AM", p1_at(2026, 11, 30, 9, 0, 0)),
            ("  TOMORROW    14:30 ", p1_at(2026, 11, 30, 14, 30, 0)),
            // weekdays (today is Sunday)
            ("fri 5pm", p1_at(2026, 12, 4, 17, 0, 0)),
            ("FRI 5PM", p1_at(2026, 12, 4, 17, 0, 0)),
            ("friday 17:00", p1_at(2026, 12, 4, 17, 0, 0)),
            ("fri at 5pm", p1_at(2026, 12, 4, 17, 0, 0)),
            ("on fri at 5pm", p1_at(2026, 12, 4, 17, 0, 0)),
            ("5pm fri", p1_at(2026, 12, 4, 17, 0, 0)),
            ("5pm on friday", p1_at(2026, 12, 4, 17, 0, 0)),
            ("fri", p1_at(2026, 12, 4, 9, 0, 0)),
            ("fri, 5pm", p1_at(2026, 12, 4, 17, 0, 0)),
            ("next monday 9am", p1_at(2026, 11, 30, 9, 0, 0)),
            ("monday", p1_at(2026, 11, 30, 9, 0, 0)),
            ("tue 9am", p1_at(2026, 12, 1, 9, 0, 0)),
            ("tues 9am", p1_at(2026, 12, 1, 9, 0, 0)),
            ("wed", p1_at(2026, 12, 2, 9, 0, 0)),
            ("thurs 10:00", p1_at(2026, 12, 3, 10, 0, 0)),
            ("thu 10:00", p1_at(2026, 12, 3, 10, 0, 0)),
            ("sat noon", p1_at(2026, 12, 5, 12, 0, 0)),
            // weekday that is today: later today, or next week if past
            ("sun 8pm", p1_at(2026, 11, 29, 20, 0, 0)),
            ("this sunday 8pm", p1_at(2026, 11, 29, 20, 0, 0)),
            ("sun 5pm", p1_at(2026, 12, 6, 17, 0, 0)),
            ("sunday", p1_at(2026, 12, 6, 9, 0, 0)),
            ("next sunday 8pm", p1_at(2026, 12, 6, 20, 0, 0)),
            // ISO dates
            ("2026-12-01 09:00", p1_at(2026, 12, 1, 9, 0, 0)),
            ("2026-12-01", p1_at(2026, 12, 1, 9, 0, 0)),
            ("2026-12-01T09:00", p1_at(2026, 12, 1, 9, 0, 0)),
            ("2026-12-01t09:00", p1_at(2026, 12, 1, 9, 0, 0)),
            ("2026-12-01 9am", p1_at(2026, 12, 1, 9, 0, 0)),
            ("2026-12-1 9:00", p1_at(2026, 12, 1, 9, 0, 0)),
            ("2026-12-01 at 14:00", p1_at(2026, 12, 1, 14, 0, 0)),
            ("2026-12-01T09:00:00Z", utc(2026, 12, 1, 9, 0)),
            ("2026-12-01t09:00:00z", utc(2026, 12, 1, 9, 0)),
            ("2026-12-01T09:00Z", utc(2026, 12, 1, 9, 0)),
            ("2026-12-01T09:00:00+02:00", utc(2026, 12, 1, 7, 0)),
            ("2026-12-01T09:00-05:00", utc(2026, 12, 1, 14, 0)),
            ("2026-12-01 09:00 -05:00", utc(2026, 12, 1, 14, 0)),
            ("2026-12-01 09:00 +0200", utc(2026, 12, 1, 7, 0)),
            ("2026-12-01 09:00 UTC", utc(2026, 12, 1, 9, 0)),
            // clock times with an offset: next occurrence of that instant
            ("18:00 utc", utc(2026, 11, 29, 18, 0)),
            ("17:00 utc", utc(2026, 11, 30, 17, 0)),
            ("14:30z", utc(2026, 11, 30, 14, 30)),
            ("23:30 -05:00", utc(2026, 11, 30, 4, 30)),
            ("fri 17:00 GMT", utc(2026, 12, 4, 17, 0)),
            ("fri 5pm utc", utc(2026, 12, 4, 17, 0)),
            ("fri 5pm+02:00", utc(2026, 12, 4, 15, 0)),
            ("9:30pm -05:00", utc(2026, 11, 30, 2, 30)),
            ("tomorrow 09:00 -05:00", utc(2026, 11, 30, 14, 0)),
            ("2027-06-15 08:15", p1_at(2027, 6, 15, 8, 15, 0)),
            // month-name dates (via interim)
            ("dec 1 9am", p1_at(2026, 12, 1, 9, 0, 0)),
            ("dec 1", p1_at(2026, 12, 1, 9, 0, 0)),
            ("1 dec", p1_at(2026, 12, 1, 9, 0, 0)),
            ("Dec 1st at 14:00", p1_at(2026, 12, 1, 14, 0, 0)),
            ("1st of december 14:00", p1_at(2026, 12, 1, 14, 0, 0)),
            ("december 1, 2026 9am", p1_at(2026, 12, 1, 9, 0, 0)),
            ("dec 1 2026", p1_at(2026, 12, 1, 9, 0, 0)),
            ("1 december 2026 17:30", p1_at(2026, 12, 1, 17, 30, 0)),
            ("9am dec 1", p1_at(2026, 12, 1, 9, 0, 0)),
            // yearless date already past this year -> next year
            ("nov 1", p1_at(2027, 11, 1, 9, 0, 0)),
            ("nov 29 8am", p1_at(2027, 11, 29, 8, 0, 0)),
            ("nov 29 8pm", p1_at(2026, 11, 29, 20, 0, 0)),
        ];
        for (expr, want) in cases {
            assert_eq!(ok(expr, &now, Mode::At), want, "{expr:?}");
        }
    }

    #[test]
    fn absolute_times_minus_five() {
        let now = now_m5();
        let cases = [
            ("9am", m5_at(2026, 11, 30, 9, 0)),
            ("midnight", m5_at(2026, 11, 30, 0, 0)),
            ("20:00", m5_at(2026, 11, 29, 20, 0)),
            ("18:30", m5_at(2026, 11, 30, 18, 30)),
            ("tomorrow", m5_at(2026, 11, 30, 9, 0)),
            ("tomorrow 14:30", m5_at(2026, 11, 30, 14, 30)),
            ("fri 5pm", m5_at(2026, 12, 4, 17, 0)),
            ("sun 7pm", m5_at(2026, 11, 29, 19, 0)),
            ("sun 6pm", m5_at(2026, 12, 6, 18, 0)),
            ("next monday 9am", m5_at(2026, 11, 30, 9, 0)),
            ("2026-12-01 09:00", m5_at(2026, 12, 1, 9, 0)),
            ("2026-12-01", m5_at(2026, 12, 1, 9, 0)),
            ("2026-12-01T09:00:00Z", utc(2026, 12, 1, 9, 0)),
            ("dec 1 9am", m5_at(2026, 12, 1, 9, 0)),
            ("10m", m5_at(2026, 11, 29, 18, 59)),
            ("1d", m5_at(2026, 11, 30, 18, 49)),
        ];
        for (expr, want) in cases {
            assert_eq!(ok(expr, &now, Mode::At), want, "{expr:?}");
        }
        // The same instant is a different local day in +01:00: there it is
        // already Monday 00:49, so "tomorrow" is Tuesday.
        let same_instant = now.with_timezone(&p1());
        assert_eq!(
            ok("tomorrow", &same_instant, Mode::At),
            p1_at(2026, 12, 1, 9, 0, 0)
        );
    }

    #[test]
    fn works_with_utc_and_local_now() {
        let now = Utc.with_ymd_and_hms(2026, 11, 29, 18, 49, 0).unwrap();
        assert_eq!(ok("9am", &now, Mode::At), utc(2026, 11, 30, 9, 0));
        assert_eq!(ok("20:00", &now, Mode::At), utc(2026, 11, 29, 20, 0));
        let (due, rest) = split_time_prefix("fri 5pm drinks", &now, Mode::At).unwrap();
        assert_eq!((due, rest.as_str()), (utc(2026, 12, 4, 17, 0), "drinks"));
        assert_eq!(preview(due, &now), "Fri 4 Dec 17:00, in 4d 22h");

        let local = Local::now();
        let due = ok("10m", &local, Mode::Later);
        assert_eq!(due - local.with_timezone(&Utc), Duration::minutes(10));
        assert!(preview(due, &local).ends_with(", in 10m"));
        assert!(ok("9am", &local, Mode::At) > local.with_timezone(&Utc));
    }

    // ---- DST --------------------------------------------------------------

    #[test]
    fn dst_spring_forward_gap_shifts_forward() {
        // Sat 28 Mar 2026 12:00 CET (+01:00); tonight 02:00 -> 03:00.
        let now = Cet2026.with_ymd_and_hms(2026, 3, 28, 12, 0, 0).unwrap();
        // 02:30 does not exist: read with the old offset = 03:30 CEST.
        assert_eq!(
            ok("tomorrow 02:30", &now, Mode::At),
            utc(2026, 3, 29, 1, 30)
        );
        assert_eq!(ok("sun 2:30am", &now, Mode::At), utc(2026, 3, 29, 1, 30));
        assert_eq!(
            ok("2026-03-29 02:00", &now, Mode::At),
            utc(2026, 3, 29, 1, 0)
        );
        // Around the gap the zone's offsets are used as they are.
        assert_eq!(
            ok("tomorrow 01:59", &now, Mode::At),
            utc(2026, 3, 29, 0, 59)
        );
        assert_eq!(ok("tomorrow 03:00", &now, Mode::At), utc(2026, 3, 29, 1, 0));
        assert_eq!(ok("tomorrow 9am", &now, Mode::At), utc(2026, 3, 29, 7, 0));
        // Durations are elapsed time: 1d is 24 h, 13:00 on the wall clock.
        assert_eq!(ok("1d", &now, Mode::Later), utc(2026, 3, 29, 11, 0));
        assert_eq!(
            preview(utc(2026, 3, 29, 11, 0), &now),
            "Sun 29 Mar 13:00, in 1d"
        );

        // At 01:00 CET on the night itself: bare 02:30 is ahead -> today, shifted.
        let now = Cet2026.with_ymd_and_hms(2026, 3, 29, 1, 0, 0).unwrap();
        let due = ok("02:30", &now, Mode::At);
        assert_eq!(due, utc(2026, 3, 29, 1, 30));
        assert_eq!(preview(due, &now), "Sun 29 Mar 03:30, in 1h 30m");
    }

    #[test]
    fn dst_fall_back_fold_takes_the_earlier() {
        // Sat 24 Oct 2026 12:00 CEST (+02:00); tonight 03:00 -> 02:00.
        let now = Cet2026.with_ymd_and_hms(2026, 10, 24, 12, 0, 0).unwrap();
        // 02:30 happens twice: the first one, still +02:00.
        assert_eq!(
            ok("tomorrow 02:30", &now, Mode::At),
            utc(2026, 10, 25, 0, 30)
        );
        assert_eq!(ok("tomorrow 9am", &now, Mode::At), utc(2026, 10, 25, 8, 0));
        assert_eq!(
            ok("tomorrow 01:30", &now, Mode::At),
            utc(2026, 10, 24, 23, 30)
        );
        // After the first 02:30 has passed, a bare "02:30" is tomorrow's,
        // not the second occurrence an hour later.
        let now = Cet2026
            .from_local_datetime(
                &NaiveDate::from_ymd_opt(2026, 10, 25)
                    .unwrap()
                    .and_hms_opt(2, 45, 0)
                    .unwrap(),
            )
            .earliest()
            .unwrap();
        assert_eq!(ok("02:30", &now, Mode::At), utc(2026, 10, 26, 1, 30));
    }

    /// Cet2026 giving the two instants of a fold latest first, as chrono's
    /// `Local` does under TZ=Europe/Berlin.
    #[derive(Debug, Clone, Copy)]
    struct LatestFirst;

    impl TimeZone for LatestFirst {
        type Offset = FixedOffset;
        fn from_offset(_: &FixedOffset) -> Self {
            LatestFirst
        }
        fn offset_from_local_date(&self, local: &NaiveDate) -> LocalResult<FixedOffset> {
            self.offset_from_local_datetime(&local.and_time(NaiveTime::MIN))
        }
        fn offset_from_local_datetime(&self, local: &NaiveDateTime) -> LocalResult<FixedOffset> {
            match Cet2026.offset_from_local_datetime(local) {
                LocalResult::Ambiguous(early, late) => LocalResult::Ambiguous(late, early),
                other => other,
            }
        }
        fn offset_from_utc_date(&self, utc: &NaiveDate) -> FixedOffset {
            Cet2026.offset_from_utc_date(utc)
        }
        fn offset_from_utc_datetime(&self, utc: &NaiveDateTime) -> FixedOffset {
            Cet2026.offset_from_utc_datetime(utc)
        }
    }

    #[test]
    fn a_fold_takes_the_earlier_instant_whichever_order_the_zone_gives() {
        let now = LatestFirst
            .with_ymd_and_hms(2026, 10, 24, 12, 0, 0)
            .unwrap();
        assert!(matches!(
            now.timezone().from_local_datetime(
                &NaiveDate::from_ymd_opt(2026, 10, 25)
                    .unwrap()
                    .and_hms_opt(2, 30, 0)
                    .unwrap()
            ),
            LocalResult::Ambiguous(a, b) if a > b
        ));
        assert_eq!(
            ok("tomorrow 02:30", &now, Mode::At),
            utc(2026, 10, 25, 0, 30)
        );
        assert_eq!(
            ok("2026-10-25 02:59", &now, Mode::At),
            utc(2026, 10, 25, 0, 59)
        );
    }

    // ---- refusals ---------------------------------------------------------

    #[test]
    fn refusals() {
        let now = now_p1();
        assert_eq!(err("", &now, Mode::At), WhenError::Empty);
        assert_eq!(err(" \t ", &now, Mode::Later), WhenError::Empty);
        // Years and months are refused with the reason, also in a message.
        for bad in ["11y", "2 months", "in 3 years", "6mo"] {
            assert_eq!(
                err(bad, &now, Mode::Later),
                WhenError::YearsOrMonths,
                "{bad:?}"
            );
        }
        assert_eq!(
            split_time_prefix("2 months renew the domain", &now, Mode::Later),
            Err(WhenError::YearsOrMonths)
        );
        // A day and a bare hour asks which one was meant.
        for (bad, hour, after) in [
            ("tomorrow 9", 9, "tomorrow"),
            ("fri 5", 5, "fri"),
            ("next monday 10", 10, "next monday"),
        ] {
            assert_eq!(
                err(bad, &now, Mode::At),
                WhenError::AmbiguousHourAfter {
                    hour,
                    after: after.into()
                },
                "{bad:?}"
            );
        }
        assert_eq!(
            WhenError::AmbiguousHour(5).to_string(),
            "\"5\" alone could be morning or evening — say 5am, 5pm or 17:00"
        );
        // In a message too: the 5 may be the hour, so it is asked about
        // rather than taken as the start of the text.
        assert_eq!(
            split_time_prefix("fri 5 apples", &now, Mode::At),
            Err(WhenError::AmbiguousHourAfter {
                hour: 5,
                after: "fri".into()
            })
        );
        for bad in [
            "blah",
            "1.5",
            "in",
            "next",
            "next week",
            "at",
            "1h 1h",
            "midnight foo",
            "second thoughts",
            "month",
            "december",
            "tomorrow tomorrow",
            "9am 5pm",
            "2026-12",
            "12/01/2026",
            "5pmutc",
            "9 pm utc",
            "9:5",
            "09:00:00.5",
            "now",
        ] {
            assert_eq!(
                err(bad, &now, Mode::At),
                WhenError::Unrecognised(bad.to_string()),
                "{bad:?}"
            );
        }
        for (bad, shown) in [
            ("25:99", "25:99"),
            ("24:00", "24:00"),
            ("13pm", "13pm"),
            ("0am", "0am"),
            ("13 pm", "13 pm"),
            ("9:60am", "9:60am"),
            ("tomorrow 25:00", "25:00"),
            ("2026-02-30", "2026-02-30"),
            ("2026-13-01 09:00", "2026-13-01"),
            ("feb 30", "feb 30"),
            ("2026-12-01T09:00+25:00", "09:00+25:00"),
        ] {
            assert_eq!(
                err(bad, &now, Mode::At),
                WhenError::NoSuchTime(shown.to_string()),
                "{bad:?}"
            );
        }
        // explicit dates and instants in the past (more than a minute ago)
        for (bad, shown) in [
            ("today 17:00", "Sun 29 Nov 17:00"),
            ("today", "Sun 29 Nov 09:00"),
            ("noon today", "Sun 29 Nov 12:00"),
            ("2026-11-29 08:00", "Sun 29 Nov 08:00"),
            ("2026-11-29", "Sun 29 Nov 09:00"),
            ("2020-01-01", "Wed 1 Jan 2020 09:00"),
            ("nov 1 2026", "Sun 1 Nov 09:00"),
            ("2026-11-29T17:48:00Z", "Sun 29 Nov 18:48"),
            ("2026-11-29T18:47:59+01:00", "Sun 29 Nov 18:47"),
            ("2026-11-29 18:48", "Sun 29 Nov 18:48"),
        ] {
            assert_eq!(
                err(bad, &now, Mode::At),
                WhenError::Past(shown.to_string()),
                "{bad:?}"
            );
        }
        // Named times that came less than a minute ago mean now: typed
        // while they were ahead, Enter may come a few seconds after.
        let now_utc = now.with_timezone(&Utc);
        for this_minute in [
            "2026-11-29T17:49:00Z",
            "2026-11-29T18:49:00+01:00",
            "2026-11-29 18:49",
            "today 18:49",
            "18:49",
            "sun 18:49",
            "nov 29 18:49",
        ] {
            assert_eq!(
                parse_time(this_minute, &now, Mode::At),
                Ok(now_utc),
                "{this_minute:?}"
            );
        }
        let later = now + Duration::seconds(59);
        assert_eq!(
            parse_time("18:49", &later, Mode::At),
            Ok(later.with_timezone(&Utc)),
            "59 s into the minute"
        );
        assert_eq!(
            parse_time("18:49", &(now + Duration::seconds(60)), Mode::At),
            Ok(p1_at(2026, 11, 30, 18, 49, 0)),
            "the next minute: tomorrow"
        );
        assert_eq!(parse_time(&now.to_rfc3339(), &now, Mode::At), Ok(now_utc));
        assert_eq!(err("0m", &now, Mode::At), WhenError::NotPositive);
        assert_eq!(err("-5m", &now, Mode::Later), WhenError::NotPositive);
        assert_eq!(
            err("in 0 seconds", &now, Mode::Later),
            WhenError::NotPositive
        );
    }

    #[test]
    fn later_takes_only_durations() {
        let now = now_p1();
        for t in [
            "9am",
            "tomorrow",
            "fri 5pm",
            "2026-12-01 09:00",
            "today 17:00",
        ] {
            assert_eq!(
                err(t, &now, Mode::Later),
                WhenError::TimeNotDuration(t.to_string()),
                "{t:?}"
            );
        }
        for t in ["blah", "25:99", "10"] {
            assert_eq!(
                err(t, &now, Mode::Later),
                WhenError::NotADuration(t.to_string()),
                "{t:?}"
            );
        }
    }

    /// Errors quote the words as the user typed them, not as they were
    /// read (lower-cased, spaces collapsed, a zone glued on).
    #[test]
    fn errors_quote_what_was_typed() {
        let now = now_p1();
        for (expr, mode, want) in [
            (
                "tomorrow 13PM",
                Mode::At,
                WhenError::NoSuchTime("13PM".into()),
            ),
            (
                "13PM UTC",
                Mode::At,
                WhenError::NoSuchTime("13PM UTC".into()),
            ),
            (
                "25:00 +02:00",
                Mode::At,
                WhenError::NoSuchTime("25:00 +02:00".into()),
            ),
            (
                "2026-02-30",
                Mode::At,
                WhenError::NoSuchTime("2026-02-30".into()),
            ),
            ("FEB 30", Mode::At, WhenError::NoSuchTime("FEB 30".into())),
            (
                "Fri  5",
                Mode::At,
                WhenError::AmbiguousHourAfter {
                    hour: 5,
                    after: "Fri".into(),
                },
            ),
            (
                "Next Monday 9",
                Mode::At,
                WhenError::AmbiguousHourAfter {
                    hour: 9,
                    after: "Next Monday".into(),
                },
            ),
            ("Blah", Mode::At, WhenError::Unrecognised("Blah".into())),
            (
                "Tomorrow",
                Mode::Later,
                WhenError::TimeNotDuration("Tomorrow".into()),
            ),
            (
                "10 Parsecs",
                Mode::Later,
                WhenError::NotADuration("10 Parsecs".into()),
            ),
        ] {
            assert_eq!(err(expr, &now, mode), want, "{expr:?}");
        }
        assert_eq!(
            split_time_prefix("Tomorrow 13PM Call Bob", &now, Mode::At),
            Err(WhenError::NoSuchTime("13PM".into()))
        );
        assert_eq!(
            parse_until("FEB 30", &now),
            Err(WhenError::NoSuchTime("FEB 30".into()))
        );
        assert_eq!(
            parse_duration("1Y"),
            Err(WhenError::NotADuration("1Y".into()))
        );
        // What cannot be found again is quoted as read; a shortened quote
        // stays shortened.
        assert_eq!(as_typed("abc", "xyz"), "xyz");
        let long = "X".repeat(60);
        assert_eq!(
            as_typed(&long, &quoted(&long.to_lowercase())),
            quoted(&long)
        );
    }

    #[test]
    fn error_messages_are_one_readable_line() {
        let now = now_p1();
        assert_eq!(
            err("blah", &now, Mode::At).to_string(),
            "can't read \"blah\" as a time — try 10m, 1h30m, 9am, tomorrow 14:30, fri 5pm, 2026-12-01 09:00"
        );
        assert_eq!(
            err("blah", &now, Mode::Later).to_string(),
            "can't read \"blah\" as a duration — try 10m, 1h30m, 2 hours, 1d, in 10 minutes"
        );
        assert_eq!(
            err("9am", &now, Mode::Later).to_string(),
            "\"9am\" is a point in time, not a duration — use /at for that, or e.g. /later 1h30m"
        );
        assert_eq!(
            err("2026-11-29 08:00", &now, Mode::At).to_string(),
            "that time is in the past (Sun 29 Nov 08:00)"
        );
        assert_eq!(
            err("25:99", &now, Mode::At).to_string(),
            "no such date or time: \"25:99\""
        );
        assert_eq!(err("", &now, Mode::At).to_string(), "empty time");
        assert_eq!(
            err("0m", &now, Mode::At).to_string(),
            "a duration must be positive"
        );
        assert_eq!(
            WhenError::NothingToSend.to_string(),
            "nothing to send after the time"
        );
        // Long or multi-line input is shortened and escaped.
        let long = "x".repeat(100);
        assert_eq!(
            err(&long, &now, Mode::At),
            WhenError::Unrecognised(format!("{}…", "x".repeat(40)))
        );
        let msg = err("a\u{1b}[2Jb", &now, Mode::At).to_string();
        assert!(!msg.contains('\u{1b}'), "{msg}");
        assert!(msg.contains("\\u{1b}"), "{msg}");
    }

    // ---- split_time_prefix ------------------------------------------------

    #[test]
    fn split_prefix_examples() {
        let now = now_p1();
        let cases = [
            // A delay of hours then minutes written as one word.
            (
                "1h30 check the oven",
                Mode::Later,
                p1_at(2026, 11, 29, 20, 19, 0),
                "check the oven",
            ),
            // Apart, the number belongs to the message.
            (
                "1h 30 people to call",
                Mode::Later,
                p1_at(2026, 11, 29, 19, 49, 0),
                "30 people to call",
            ),
            (
                "9am +10 ideas",
                Mode::At,
                p1_at(2026, 11, 30, 9, 0, 0),
                "+10 ideas",
            ),
            ("9am +02:00 x", Mode::At, utc(2026, 11, 30, 7, 0), "x"),
            (
                "9am 25:00 is the new deadline",
                Mode::At,
                p1_at(2026, 11, 30, 9, 0, 0),
                "25:00 is the new deadline",
            ),
            // A text that starts with a clock time is asked about (see
            // `text_that_starts_with_more_time_is_asked_about`); `--` says
            // it is text.
            (
                "fri 5pm -- 13:00 moved",
                Mode::At,
                p1_at(2026, 12, 4, 17, 0, 0),
                "13:00 moved",
            ),
            (
                "1h check the build",
                Mode::Later,
                p1_at(2026, 11, 29, 19, 49, 0),
                "check the build",
            ),
            (
                "in 10 minutes ping",
                Mode::Later,
                p1_at(2026, 11, 29, 18, 59, 0),
                "ping",
            ),
            (
                "1h30m summarise",
                Mode::Later,
                p1_at(2026, 11, 29, 20, 19, 0),
                "summarise",
            ),
            (
                "1 hour and 30 minutes then stop",
                Mode::Later,
                p1_at(2026, 11, 29, 20, 19, 0),
                "then stop",
            ),
            (
                "10 min walk",
                Mode::Later,
                p1_at(2026, 11, 29, 18, 59, 0),
                "walk",
            ),
            (
                "2 hours 3 people",
                Mode::Later,
                p1_at(2026, 11, 29, 20, 49, 0),
                "3 people",
            ),
            (
                "1h check the build",
                Mode::At,
                p1_at(2026, 11, 29, 19, 49, 0),
                "check the build",
            ),
            (
                "tomorrow 14:30 write report",
                Mode::At,
                p1_at(2026, 11, 30, 14, 30, 0),
                "write report",
            ),
            (
                "fri 5pm drinks",
                Mode::At,
                p1_at(2026, 12, 4, 17, 0, 0),
                "drinks",
            ),
            (
                "2026-12-01 09:00 deploy",
                Mode::At,
                p1_at(2026, 12, 1, 9, 0, 0),
                "deploy",
            ),
            (
                "2026-12-01T09:00:00Z deploy",
                Mode::At,
                utc(2026, 12, 1, 9, 0),
                "deploy",
            ),
            (
                "9am stand-up notes",
                Mode::At,
                p1_at(2026, 11, 30, 9, 0, 0),
                "stand-up notes",
            ),
            (
                "tomorrow 9am stand-up notes",
                Mode::At,
                p1_at(2026, 11, 30, 9, 0, 0),
                "stand-up notes",
            ),
            (
                "tomorrow review the PR",
                Mode::At,
                p1_at(2026, 11, 30, 9, 0, 0),
                "review the PR",
            ),
            (
                "next monday at 9 am review q4",
                Mode::At,
                p1_at(2026, 11, 30, 9, 0, 0),
                "review q4",
            ),
            (
                "noon lunch?",
                Mode::At,
                p1_at(2026, 11, 30, 12, 0, 0),
                "lunch?",
            ),
            (
                "9am may I ask",
                Mode::At,
                p1_at(2026, 11, 30, 9, 0, 0),
                "may I ask",
            ),
            (
                "dec 1 9am Ship It",
                Mode::At,
                p1_at(2026, 12, 1, 9, 0, 0),
                "Ship It",
            ),
            (
                "  Tomorrow   9AM   Stand-up   notes  ",
                Mode::At,
                p1_at(2026, 11, 30, 9, 0, 0),
                "Stand-up   notes",
            ),
            (
                "1h\tcheck\nthe build",
                Mode::Later,
                p1_at(2026, 11, 29, 19, 49, 0),
                "check\nthe build",
            ),
            (
                "1h héllo wörld",
                Mode::Later,
                p1_at(2026, 11, 29, 19, 49, 0),
                "héllo wörld",
            ),
        ];
        for (input, mode, due, rest) in cases {
            let got = split_time_prefix(input, &now, mode)
                .unwrap_or_else(|e| panic!("{input:?} refused: {e}"));
            assert_eq!(got, (due, rest.to_string()), "{input:?}");
        }
    }

    /// A number alone after `/at`: past 12 (or 0) it can only be that
    /// hour; 1 to 12 could be morning or evening, and the refusal names both.
    #[test]
    fn a_bare_hour() {
        let now = now_p1(); // Sun 29 Nov 18:49
        assert_eq!(ok("21", &now, Mode::At), p1_at(2026, 11, 29, 21, 0, 0));
        assert_eq!(ok("at 21", &now, Mode::At), p1_at(2026, 11, 29, 21, 0, 0));
        assert_eq!(ok("13", &now, Mode::At), p1_at(2026, 11, 30, 13, 0, 0));
        assert_eq!(ok("0", &now, Mode::At), p1_at(2026, 11, 30, 0, 0, 0));
        assert_eq!(ok("00", &now, Mode::At), p1_at(2026, 11, 30, 0, 0, 0));
        assert_eq!(ok("23", &now, Mode::At), p1_at(2026, 11, 29, 23, 0, 0));
        // The hour that came less than a minute ago means now, as 18:00 would.
        let at_six = p1().with_ymd_and_hms(2026, 11, 29, 18, 0, 30).unwrap();
        assert_eq!(ok("18", &at_six, Mode::At), at_six.with_timezone(&Utc));
        for (typed, hour) in [("9", 9), ("at 9", 9), ("09", 9), ("1", 1), ("12", 12)] {
            assert_eq!(
                err(typed, &now, Mode::At),
                WhenError::AmbiguousHour(hour),
                "{typed:?}"
            );
        }
        assert_eq!(
            err("9", &now, Mode::At).to_string(),
            "\"9\" alone could be morning or evening — say 9am, 9pm or 21:00"
        );
        assert_eq!(
            err("12", &now, Mode::At).to_string(),
            "\"12\" alone could be noon or midnight — say noon or midnight"
        );
        // In a message too; what follows the hour is the text.
        let (due, rest) = split_time_prefix("21 call mom", &now, Mode::At).unwrap();
        assert_eq!(
            (due, rest.as_str()),
            (p1_at(2026, 11, 29, 21, 0, 0), "call mom")
        );
        assert_eq!(
            split_time_prefix("9 call mom", &now, Mode::At),
            Err(WhenError::AmbiguousHour(9))
        );
        // Not an hour: too large, or a number with a unit of its own.
        for typed in ["24", "99", "123"] {
            assert_eq!(
                err(typed, &now, Mode::At),
                WhenError::Unrecognised(typed.into()),
                "{typed:?}"
            );
        }
        // A delay wants a unit: a bare number is no delay, whatever it is.
        for typed in ["9", "21", "0"] {
            assert_eq!(
                err(typed, &now, Mode::Later),
                WhenError::NotADuration(typed.into()),
                "{typed:?}"
            );
        }
    }

    /// A number after a day or a date is its hour, as a number alone is:
    /// 0 and 13 to 23 can only be that hour; 1 to 12 could be morning or
    /// evening and the user is asked, naming the day. Never a year: a
    /// year has four digits.
    #[test]
    fn a_bare_hour_after_a_day_or_date() {
        let now = now_p1(); // Sun 29 Nov 18:49
        for (typed, want) in [
            ("tomorrow 21", p1_at(2026, 11, 30, 21, 0, 0)),
            ("tomorrow at 21", p1_at(2026, 11, 30, 21, 0, 0)),
            ("at tomorrow 21", p1_at(2026, 11, 30, 21, 0, 0)),
            ("Tomorrow 0", p1_at(2026, 11, 30, 0, 0, 0)),
            ("today 21", p1_at(2026, 11, 29, 21, 0, 0)),
            ("fri 21", p1_at(2026, 12, 4, 21, 0, 0)),
            ("mon 13", p1_at(2026, 11, 30, 13, 0, 0)),
            ("next monday 00", p1_at(2026, 11, 30, 0, 0, 0)),
            // Today's weekday, its hour gone: next week's.
            ("sun 13", p1_at(2026, 12, 6, 13, 0, 0)),
            ("dec 25 21", p1_at(2026, 12, 25, 21, 0, 0)),
            ("25 dec 21", p1_at(2026, 12, 25, 21, 0, 0)),
            ("25th dec 23", p1_at(2026, 12, 25, 23, 0, 0)),
            ("25 december 2026 21", p1_at(2026, 12, 25, 21, 0, 0)),
            ("2026-12-25 21", p1_at(2026, 12, 25, 21, 0, 0)),
            // A date gone this year is next year's, at that hour.
            ("nov 1 21", p1_at(2027, 11, 1, 21, 0, 0)),
            // A four-digit year is still a year.
            ("dec 25 2026", p1_at(2026, 12, 25, 9, 0, 0)),
            ("25 dec 2027", p1_at(2027, 12, 25, 9, 0, 0)),
        ] {
            assert_eq!(ok(typed, &now, Mode::At), want, "{typed:?}");
        }
        for (typed, hour, after) in [
            ("tomorrow 9", 9, "tomorrow"),
            ("tomorrow at 9", 9, "tomorrow"),
            ("fri 5", 5, "fri"),
            ("next monday 10", 10, "next monday"),
            ("dec 25 9", 9, "dec 25"),
            ("25 dec 9", 9, "25 dec"),
            ("2026-12-25 12", 12, "2026-12-25"),
        ] {
            assert_eq!(
                err(typed, &now, Mode::At),
                WhenError::AmbiguousHourAfter {
                    hour,
                    after: after.into()
                },
                "{typed:?}"
            );
        }
        assert_eq!(
            err("tomorrow 9", &now, Mode::At).to_string(),
            "\"9\" after \"tomorrow\" could be morning or evening — say 9am, 9pm or 21:00"
        );
        assert_eq!(
            err("fri 12", &now, Mode::At).to_string(),
            "\"12\" after \"fri\" could be noon or midnight — say noon or midnight"
        );
        // Only after the day: before it, the number stays the text's (or
        // is an hour alone when nothing else is).
        assert_eq!(
            err("21 tomorrow", &now, Mode::At),
            WhenError::Unrecognised("21 tomorrow".into())
        );
        // Not a year of one or two digits (it was refused as long past).
        for typed in ["1 jan 30", "dec 25 99", "1 jan 24"] {
            assert_eq!(
                err(typed, &now, Mode::At),
                WhenError::Unrecognised(typed.into()),
                "{typed:?}"
            );
        }
        // In a message: the hour is the time's, the rest is the text.
        for (input, want, text) in [
            (
                "tomorrow 21 take out bins",
                p1_at(2026, 11, 30, 21, 0, 0),
                "take out bins",
            ),
            ("fri 21 x", p1_at(2026, 12, 4, 21, 0, 0), "x"),
            ("mon 21 x", p1_at(2026, 11, 30, 21, 0, 0), "x"),
            ("dec 25 21 Party!", p1_at(2026, 12, 25, 21, 0, 0), "Party!"),
            ("dec 25 2026 party", p1_at(2026, 12, 25, 9, 0, 0), "party"),
            (
                "tomorrow 9pm 2 things",
                p1_at(2026, 11, 30, 21, 0, 0),
                "2 things",
            ),
        ] {
            let (due, rest) = split_time_prefix(input, &now, Mode::At)
                .unwrap_or_else(|e| panic!("{input:?}: {e}"));
            assert_eq!((due, rest.as_str()), (want, text), "{input:?}");
        }
        // 1 to 12 is asked about, not left in the text.
        for (input, hour, after) in [
            ("fri 5 apples", 5, "fri"),
            ("tomorrow 9 stand-up", 9, "tomorrow"),
            ("dec 25 3 presents", 3, "dec 25"),
        ] {
            assert_eq!(
                split_time_prefix(input, &now, Mode::At),
                Err(WhenError::AmbiguousHourAfter {
                    hour,
                    after: after.into()
                }),
                "{input:?}"
            );
        }
    }

    /// Days that have gone (`yesterday`, `last fri`) and `… ago` are read,
    /// and refused as past, naming when that was; one less than a minute
    /// ago still means now.
    #[test]
    fn gone_days_are_in_the_past() {
        let now = now_p1(); // Sun 29 Nov 18:49
        for (typed, shown) in [
            ("yesterday 9am", "Sat 28 Nov 09:00"),
            ("yesterday at 9am", "Sat 28 Nov 09:00"),
            ("9am yesterday", "Sat 28 Nov 09:00"),
            ("yesterday", "Sat 28 Nov 09:00"),
            ("Yesterday 17:30", "Sat 28 Nov 17:30"),
            ("last fri", "Fri 27 Nov 09:00"),
            ("last friday 5pm", "Fri 27 Nov 17:00"),
            // Today is a Sunday: last Sunday is a week ago.
            ("last sunday 20:00", "Sun 22 Nov 20:00"),
            ("2h ago", "Sun 29 Nov 16:49"),
            ("10 minutes ago", "Sun 29 Nov 18:39"),
            ("3 days ago", "Thu 26 Nov 18:49"),
        ] {
            assert_eq!(
                err(typed, &now, Mode::At),
                WhenError::Past(shown.into()),
                "{typed:?}"
            );
        }
        assert_eq!(
            err("yesterday 9am", &now, Mode::At).to_string(),
            "that time is in the past (Sat 28 Nov 09:00)"
        );
        assert_eq!(
            split_time_prefix("yesterday 9am call mom", &now, Mode::At),
            Err(WhenError::Past("Sat 28 Nov 09:00".into()))
        );
        assert_eq!(
            err("yesterday 9am", &now, Mode::Later),
            WhenError::TimeNotDuration("yesterday 9am".into())
        );
        // Less than a minute ago is now, as for any named time.
        let just_after_midnight = p1().with_ymd_and_hms(2026, 11, 30, 0, 0, 30).unwrap();
        let now_utc = just_after_midnight.with_timezone(&Utc);
        assert_eq!(
            parse_time("yesterday 23:59:45", &just_after_midnight, Mode::At),
            Ok(now_utc)
        );
        assert_eq!(
            parse_time("30s ago", &now, Mode::At),
            Ok(now.with_timezone(&Utc))
        );
        // A series cannot end yesterday either.
        assert_eq!(
            parse_until("yesterday", &now),
            Err(WhenError::Past("Sat 28 Nov 23:59".into()))
        );
    }

    #[test]
    fn split_prefix_errors() {
        let now = now_p1();
        let cases = [
            (
                "blah blah",
                Mode::At,
                WhenError::Unrecognised("blah".into()),
            ),
            (
                "blah blah",
                Mode::Later,
                WhenError::NotADuration("blah".into()),
            ),
            ("1h", Mode::Later, WhenError::NothingToSend),
            ("1h   ", Mode::Later, WhenError::NothingToSend),
            ("tomorrow 9am", Mode::At, WhenError::NothingToSend),
            ("", Mode::At, WhenError::Empty),
            ("   ", Mode::Later, WhenError::Empty),
            // recognised-but-refused beats a shorter prefix that would parse
            (
                "9am ping",
                Mode::Later,
                WhenError::TimeNotDuration("9am".into()),
            ),
            (
                "tomorrow 13pm lunch",
                Mode::At,
                WhenError::NoSuchTime("13pm".into()),
            ),
            (
                "noon today lunch",
                Mode::At,
                WhenError::Past("Sun 29 Nov 12:00".into()),
            ),
            (
                "2026-11-29 08:00 hi",
                Mode::At,
                WhenError::Past("Sun 29 Nov 08:00".into()),
            ),
            ("0m hi", Mode::Later, WhenError::NotPositive),
            (
                "2026-02-30 9am x",
                Mode::At,
                WhenError::NoSuchTime("2026-02-30".into()),
            ),
        ];
        for (input, mode, want) in cases {
            assert_eq!(split_time_prefix(input, &now, mode), Err(want), "{input:?}");
        }
    }

    /// `1h30` is a delay only where a delay is asked for: as a time it
    /// would read as 14:30 in many places, and is refused, not misread.
    #[test]
    fn hours_then_minutes_is_a_delay_only_for_later() {
        let now = now_p1();
        assert_eq!(
            ok("2h05", &now, Mode::Later),
            p1_at(2026, 11, 29, 20, 54, 0)
        );
        assert!(parse_time("14h30", &now, Mode::At).is_err());
        assert!(parse_time("1h75", &now, Mode::Later).is_err());
    }

    #[test]
    fn split_prefix_tries_at_most_six_words() {
        let now = now_p1();
        // seven words before the message: not found as a whole
        assert_eq!(
            split_time_prefix("1 hour and 30 minutes and 10 seconds x", &now, Mode::Later),
            Ok((p1_at(2026, 11, 29, 20, 19, 0), "and 10 seconds x".into()))
        );
        assert_eq!(word_ends("a  bb c", 6), vec![1, 5, 7]);
        assert_eq!(word_ends(" a b c d e f g h", 6).len(), 6);
        assert_eq!(word_ends("é ü", 6), vec![2, 5]);
    }

    // ---- preview / relative / check_not_too_far ----------------------------

    #[test]
    fn preview_strings() {
        let now = now_p1();
        assert_eq!(
            preview(p1_at(2026, 11, 30, 9, 0, 0), &now),
            "Mon 30 Nov 09:00, in 14h 11m"
        );
        assert_eq!(
            preview(ok("10m", &now, Mode::Later), &now),
            "Sun 29 Nov 18:59, in 10m"
        );
        assert_eq!(
            preview(ok("90s", &now, Mode::Later), &now),
            "Sun 29 Nov 18:50, in 1m 30s"
        );
        assert_eq!(
            preview(ok("fri 5pm", &now, Mode::At), &now),
            "Fri 4 Dec 17:00, in 4d 22h"
        );
        assert_eq!(
            preview(p1_at(2027, 1, 5, 9, 0, 0), &now),
            "Tue 5 Jan 2027 09:00, in 36d 14h"
        );
        assert_eq!(
            preview(p1_at(2026, 11, 29, 18, 47, 0), &now),
            "Sun 29 Nov 18:47, 2m ago"
        );
        assert_eq!(
            preview(now.with_timezone(&Utc), &now),
            "Sun 29 Nov 18:49, now"
        );
        // shown in now's zone
        assert_eq!(
            preview(utc(2026, 12, 1, 9, 0), &now_m5()),
            "Tue 1 Dec 04:00, in 1d 9h"
        );
        // year shown when it is not the local current year, in now's zone
        let nye = p1().with_ymd_and_hms(2026, 12, 31, 23, 30, 0).unwrap();
        assert_eq!(
            preview(p1_at(2027, 1, 1, 0, 15, 0), &nye),
            "Fri 1 Jan 2027 00:15, in 45m"
        );
        assert_eq!(
            absolute(p1_at(2026, 12, 1, 9, 0, 0), &now),
            "Tue 1 Dec 09:00"
        );
    }

    #[test]
    fn relative_strings() {
        let s = 1000;
        let m = 60 * s;
        let h = 60 * m;
        let d = 24 * h;
        let cases = [
            (0, "now"),
            (499, "now"),
            (-499, "now"),
            (500, "in 1s"),
            (45 * s, "in 45s"),
            (59 * s + 600, "in 1m"),
            (90 * s, "in 1m 30s"),
            (10 * m, "in 10m"),
            (2 * h, "in 2h"),
            (14 * h + 11 * m, "in 14h 11m"),
            (14 * h + 11 * m + 59 * s, "in 14h 11m"),
            (3 * d + 2 * h, "in 3d 2h"),
            (3 * d + 2 * h + 59 * m, "in 3d 2h"),
            (d + 59 * s, "in 1d"),
            (400 * d, "in 400d"),
            (-2 * m, "2m ago"),
            (-(2 * m + 30 * s), "2m 30s ago"),
            (-(3 * d + 4 * h), "3d 4h ago"),
        ];
        for (diff, want) in cases {
            assert_eq!(
                relative(1_800_000_000_000 + diff, 1_800_000_000_000),
                want,
                "{diff}"
            );
        }
        // extremes do not overflow
        assert!(relative(i64::MAX, i64::MIN).starts_with("in "));
        assert!(relative(i64::MIN, i64::MAX).ends_with(" ago"));
    }

    #[test]
    fn countdown_strings() {
        let t = 1_800_000_000_000;
        let cases = [
            (1, "now"),
            (999, "now"),
            (1_000, "in 1s"),
            (1_999, "in 1s"),
            (90_000, "in 1m 30s"),
            (90_999, "in 1m 30s"),
            (3_600_000, "in 1h"),
            (3_599_999, "in 59m 59s"),
            (14 * 3_600_000 + 11 * 60_000 + 59_999, "in 14h 11m"),
        ];
        for (left, want) in cases {
            assert_eq!(countdown(t + left, t), want, "{left}");
        }
        // Once due it reads as `relative` does.
        assert_eq!(countdown(t, t), "now");
        assert_eq!(countdown(t - 120_000, t), "2m ago");
        assert!(countdown(i64::MAX, i64::MIN).starts_with("in "));
        assert!(countdown(i64::MIN, i64::MAX).ends_with(" ago"));
    }

    #[test]
    fn not_too_far() {
        let now = now_p1().with_timezone(&Utc);
        let year = Duration::days(365);
        assert_eq!(check_not_too_far(now + year, now, year), Ok(()));
        assert_eq!(check_not_too_far(now - year, now, year), Ok(()));
        let e = check_not_too_far(now + year + Duration::seconds(1), now, year).unwrap_err();
        assert_eq!(e, WhenError::TooFar("1 year".into()));
        assert_eq!(e.to_string(), "too far ahead (more than 1 year)");
        assert_eq!(
            check_not_too_far(now + Duration::days(800), now, Duration::days(730)),
            Err(WhenError::TooFar("2 years".into()))
        );
        assert_eq!(
            check_not_too_far(now + Duration::days(31), now, Duration::days(30)),
            Err(WhenError::TooFar("30 days".into()))
        );
        assert_eq!(
            check_not_too_far(now + Duration::days(1), now, Duration::hours(12)),
            Err(WhenError::TooFar("12h".into()))
        );
    }

    // ---- properties -------------------------------------------------------

    fn check_any(s: &str) -> Result<(), TestCaseError> {
        for now in [now_p1(), now_m5()] {
            let now_utc = now.with_timezone(&Utc);
            for mode in [Mode::Later, Mode::At] {
                match parse_time(s, &now, mode) {
                    Ok(t) => prop_assert!(t >= now_utc, "{s:?} -> {t} before now"),
                    Err(e) => prop_assert!(!e.to_string().contains('\n'), "{e}"),
                }
                match split_time_prefix(s, &now, mode) {
                    Ok((t, rest)) => {
                        prop_assert!(t >= now_utc, "{s:?} -> {t} before now");
                        prop_assert!(!rest.is_empty());
                        prop_assert_eq!(rest.trim(), rest.as_str());
                        prop_assert!(s.trim_end().ends_with(rest.as_str()));
                    }
                    Err(e) => prop_assert!(!e.to_string().contains('\n'), "{e}"),
                }
            }
        }
        if let Ok(d) = parse_duration(s) {
            prop_assert!(d > Duration::zero());
        }
        Ok(())
    }

    fn token() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(vec![
                "in",
                "at",
                "on",
                "next",
                "this",
                "tomorrow",
                "today",
                "fri",
                "Sunday",
                "MON",
                "noon",
                "midnight",
                "am",
                "PM",
                "a.m.",
                "and",
                "a",
                "an",
                "half",
                "hour",
                "m",
                "h",
                "d",
                "w",
                "s",
                "dec",
                "December",
                "of",
                "1st",
                "from",
                "now",
                "-",
                ",",
                "T",
                "Z",
                "+02:00",
                "2026-12-01",
                "2026-11-29",
                "2026-12-01T09:00:00Z",
            ])
            .prop_map(str::to_string),
            "[0-9]{1,12}",
            "[0-9]{1,2}[:.][0-9]{1,3}(:[0-9]{2})?([ap]m|z|[+-][0-9]{2,4})?",
            "-?[0-9]{0,4}(\\.[0-9]{0,5})?[a-zA-Z]{0,3}([0-9]{1,3}[a-z]{1,2})?",
            "[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([tT][0-9:]{1,8}[zZ]?)?",
            "[a-zA-Z]{1,20}",
            "\\PC{1,6}",
        ]
    }

    proptest! {
        #[test]
        fn arbitrary_text_never_panics_and_ok_is_future(s in "\\PC{0,60}") {
            check_any(&s)?;
        }

        #[test]
        fn token_soup_never_panics_and_ok_is_future(
            words in prop::collection::vec(token(), 0..8),
            sep in prop::sample::select(vec![" ", "  ", "\t", " \n "]),
        ) {
            check_any(&words.join(sep))?;
        }

        #[test]
        fn n_minutes_is_exactly_n_minutes(n in 1i64..1_000_000) {
            let now = now_p1();
            let want = now.with_timezone(&Utc) + Duration::minutes(n);
            for expr in [format!("{n}m"), format!("in {n} minutes"), format!("{n} min")] {
                prop_assert_eq!(parse_time(&expr, &now, Mode::Later), Ok(want));
            }
        }

        #[test]
        fn clock_time_is_within_a_day_and_on_the_dot(h in 0u32..24, m in 0u32..60) {
            for now in [now_p1(), now_m5()] {
                let due = parse_time(&format!("{h:02}:{m:02}"), &now, Mode::At).unwrap();
                let ahead = due - now.with_timezone(&Utc);
                // This minute means now; any other, its next occurrence.
                prop_assert!(ahead >= Duration::zero() && ahead < Duration::days(1));
                let local = due.with_timezone(&now.timezone());
                prop_assert_eq!((local.hour(), local.minute(), local.second()), (h, m, 0));
            }
        }

        #[test]
        fn relative_never_panics(a in any::<i64>(), b in any::<i64>()) {
            let r = relative(a, b);
            prop_assert!(r == "now" || r.starts_with("in ") || r.ends_with(" ago"));
        }
    }
}

/// Parts of the day (`tomorrow evening 7pm`, `fri night`, `tonight`), the
/// rows a tester found read wrong in the composer, and `17.30`.
#[cfg(test)]
mod day_part_tests {
    use super::*;

    /// +01:00; now = Mon 7 Dec 2026 04:22, as when the rows were found.
    fn now() -> DateTime<FixedOffset> {
        FixedOffset::east_opt(3600)
            .and_then(|z| z.with_ymd_and_hms(2026, 12, 7, 4, 22, 0).single())
            .expect("fixture")
    }
    fn at(d: u32, h: u32, m: u32) -> DateTime<Utc> {
        FixedOffset::east_opt(3600)
            .and_then(|z| z.with_ymd_and_hms(2026, 12, d, h, m, 0).single())
            .expect("fixture")
            .with_timezone(&Utc)
    }

    #[test]
    fn parts_of_the_day_alone_and_with_a_clock_time() {
        let now = now();
        for (typed, want) in [
            ("tomorrow evening 7pm", at(8, 19, 0)),
            ("tomorrow evening 7", at(8, 19, 0)),
            ("tomorrow evening at 7", at(8, 19, 0)),
            ("Tomorrow Evening", at(8, 19, 0)),
            ("friday night 8pm", at(11, 20, 0)),
            ("fri night 8", at(11, 20, 0)),
            ("tomorrow night", at(8, 21, 0)),
            ("tomorrow at night", at(8, 21, 0)),
            ("tomorrow afternoon", at(8, 15, 0)),
            ("tomorrow afternoon 2", at(8, 14, 0)),
            ("friday evening", at(11, 19, 0)),
            ("tomorrow morning", at(8, 9, 0)),
            ("tomorrow morning 7", at(8, 7, 0)),
            ("tomorrow in the morning", at(8, 9, 0)),
            ("tomorrow 7 in the evening", at(8, 19, 0)),
            ("7 in the evening", at(7, 19, 0)),
            ("evening", at(7, 19, 0)),
            ("morning", at(7, 9, 0)),
            ("this morning", at(7, 9, 0)),
            ("this evening 6:30", at(7, 18, 30)),
            ("tonight", at(7, 21, 0)),
            ("tonight 11", at(7, 23, 0)),
            ("tonight 10:30pm", at(7, 22, 30)),
            ("8pm tonight", at(7, 20, 0)),
            // A night's small hours are the next day's.
            ("fri night 1am", at(12, 1, 0)),
            ("tonight 12", at(8, 0, 0)),
            ("tonight midnight", at(8, 0, 0)),
            ("next monday evening", at(14, 19, 0)),
            ("dec 24 evening", at(24, 19, 0)),
            // A dot between hour and minutes, as a colon.
            ("17.30", at(7, 17, 30)),
            ("tomorrow 17.30", at(8, 17, 30)),
        ] {
            match parse_time(typed, &now, Mode::At) {
                Ok(t) => assert_eq!(t, want, "{typed:?}"),
                Err(e) => panic!("{typed:?} refused: {e}"),
            }
        }
    }

    #[test]
    fn a_clock_time_outside_its_part_is_refused_by_name() {
        let now = now();
        for (typed, said, part) in [
            ("tomorrow evening 7am", "evening 7am", "evening"),
            ("tomorrow morning 8pm", "morning 8pm", "morning"),
            ("tomorrow Evening 2", "Evening 2", "evening"),
            ("fri afternoon 9", "afternoon 9", "afternoon"),
            ("tonight 5", "tonight 5", "night"),
        ] {
            match parse_time(typed, &now, Mode::At) {
                Err(WhenError::NotInDayPart {
                    said: s, part: p, ..
                }) => {
                    assert_eq!((s.as_str(), p), (said, part), "{typed:?}")
                }
                other => panic!("{typed:?}: {other:?}"),
            }
        }
        let e = parse_time("tomorrow evening 7am", &now, Mode::At)
            .map(|t| t.to_string())
            .unwrap_or_else(|e| e.to_string());
        assert_eq!(
            e,
            "\"evening 7am\" does not fit: the evening is 17:00–23:59 — give the time alone (e.g. 7am, 19:00)"
        );
    }

    #[test]
    fn tonight_once_over_is_refused_by_name() {
        let late = FixedOffset::east_opt(3600)
            .and_then(|z| z.with_ymd_and_hms(2026, 12, 7, 22, 30, 0).single())
            .expect("fixture");
        for (typed, said) in [("tonight", "tonight"), ("this morning", "this morning")] {
            assert_eq!(
                parse_time(typed, &late, Mode::At),
                Err(WhenError::DayPartOver {
                    said: said.into(),
                    at: if said == "tonight" {
                        "Mon 7 Dec 21:00".into()
                    } else {
                        "Mon 7 Dec 09:00".into()
                    }
                }),
                "{typed:?}"
            );
        }
        assert_eq!(
            parse_time("Tonight", &late, Mode::At).map_err(|e| e.to_string()),
            Err("\"Tonight\" is over (Mon 7 Dec 21:00 has passed) — give a time still ahead, or a delay with /later".into())
        );
        // Later tonight still is tonight.
        assert_eq!(
            parse_time("tonight 11pm", &late, Mode::At),
            Ok(FixedOffset::east_opt(3600)
                .and_then(|z| z.with_ymd_and_hms(2026, 12, 7, 23, 0, 0).single())
                .expect("fixture")
                .with_timezone(&Utc))
        );
    }

    /// The composer's `/at` rows: the whole time read, the text after it.
    #[test]
    fn at_rows_split_into_time_and_text() {
        let now = now();
        for (typed, want, text) in [
            ("tomorrow evening 7pm call mom", at(8, 19, 0), "call mom"),
            ("friday night 8pm movie", at(11, 20, 0), "movie"),
            (
                "tomorrow night take out trash",
                at(8, 21, 0),
                "take out trash",
            ),
            ("tomorrow afternoon x", at(8, 15, 0), "x"),
            ("friday evening x", at(11, 19, 0), "x"),
            (
                "tomorrow morning call the bank",
                at(8, 9, 0),
                "call the bank",
            ),
            ("tonight x", at(7, 21, 0), "x"),
            ("17.30 x", at(7, 17, 30), "x"),
            ("7pm dinner tonight", at(7, 19, 0), "dinner tonight"),
        ] {
            match split_time_prefix(typed, &now, Mode::At) {
                Ok((t, rest)) => assert_eq!((t, rest.as_str()), (want, text), "{typed:?}"),
                Err(e) => panic!("{typed:?} refused: {e}"),
            }
        }
    }

    /// Text after the time that starts with more time is asked about, the
    /// way `fri 5 apples` is: never a time kept and the rest swallowed.
    #[test]
    fn text_that_starts_with_more_time_is_asked_about() {
        let now = now();
        for (typed, time, said) in [
            ("9am evening call", "9am", "evening"),
            ("fri 8pm night out", "fri 8pm", "night"),
            ("tomorrow 9am Monday prep", "tomorrow 9am", "Monday"),
            ("9am 7PM x", "9am", "7PM"),
            ("9am at 5pm x", "9am", "at 5pm"),
        ] {
            assert_eq!(
                split_time_prefix(typed, &now, Mode::At),
                Err(WhenError::TimeInText {
                    time: time.into(),
                    said: said.into()
                }),
                "{typed:?}"
            );
        }
        for (typed, time, said, second) in [
            ("9am and 5pm x", "9am", "and 5pm", "5pm"),
            ("9am, 5pm x", "9am", "5pm", "5pm"),
            ("fri 9am & sat 10am x", "fri 9am", "& sat 10am", "sat 10am"),
        ] {
            assert_eq!(
                split_time_prefix(typed, &now, Mode::At),
                Err(WhenError::SecondTime {
                    time: time.into(),
                    said: said.into(),
                    second: second.into()
                }),
                "{typed:?}"
            );
        }
        assert_eq!(
            split_time_prefix("9am evening call", &now, Mode::At).map_err(|e| e.to_string()),
            Err("\"evening\" after \"9am\" looks like more of the time — say it all before the text, or write \"9am -- evening …\" to send it as text".into())
        );
        assert_eq!(
            split_time_prefix("9am and 5pm x", &now, Mode::At).map_err(|e| e.to_string()),
            Err("\"and 5pm\" after \"9am\": one time per message — send two, /at 9am … and /at 5pm …".into())
        );
        // `--` says where the time ends; a comma after it ends it too. A
        // price, a number, a delay's text stay text.
        for (typed, mode, want, text) in [
            (
                "9am -- morning stand-up",
                Mode::At,
                at(7, 9, 0),
                "morning stand-up",
            ),
            ("fri 9am, call mom", Mode::At, at(11, 9, 0), "call mom"),
            (
                "9am 3.50 for lunch",
                Mode::At,
                at(7, 9, 0),
                "3.50 for lunch",
            ),
            ("9am 5 apples", Mode::At, at(7, 9, 0), "5 apples"),
            ("1h evening run", Mode::Later, at(7, 5, 22), "evening run"),
        ] {
            match split_time_prefix(typed, &now, mode) {
                Ok((t, rest)) => assert_eq!((t, rest.as_str()), (want, text), "{typed:?}"),
                Err(e) => panic!("{typed:?} refused: {e}"),
            }
        }
        assert_eq!(
            split_time_prefix("9am --", &now, Mode::At),
            Err(WhenError::NothingToSend)
        );
    }
}
