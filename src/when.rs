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
//!   `14:30`, `14:30:15`, `noon`, `midday`, `midnight` (00:00; after a day,
//!   the end of that day: `fri midnight` is Saturday 00:00), `12pm` (noon),
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
//!   Sunday it is tomorrow) — but when that day is still in this calendar
//!   week (Monday to Sunday: `next friday` said on a Monday) it is asked
//!   about, this week's or next week's? (`this friday` or `18 dec`), in
//!   `until` too; on Saturday `next friday` is the coming one.
//!   A month-name date without a year means its next occurrence.
//!   An explicit date or instant that is not in the future is refused, and
//!   so are `yesterday`, `last fri` and `2h ago`, with when that was (what
//!   came less than a minute ago means now, as above).
//! * Full RFC 3339 instants with an offset: `2026-12-01T09:00:00Z`,
//!   `2026-12-01T09:00:00.5+02:00`. A clock time may also carry an
//!   offset or `utc`/`gmt`, with any date form: `14:30 utc`, `5pm utc`,
//!   `fri 17:00 +02:00`, `2026-12-01 09:00 -05:00`. The date is still the
//!   user's (`tomorrow` is the user's tomorrow); a bare `14:30 utc` is its
//!   next occurrence. `gmt+1`, `utc-5`, `utc+5:30` are fixed offsets; a
//!   zone's abbreviation after a time (`9am PST`) is refused by
//!   [`split_time_prefix`] (see [`zone_word`]).
//! * Where a time ends ([`split_time_prefix`]): at a line break, at `--`,
//!   or at a comma after it (what follows is text); a day after a clock
//!   time with text after it on the line (`9am friday prep`) is asked about,
//!   and so is a delay written two ways with text after it (`1h 30 minutes
//!   of reading`: `1h30m …` for the delay, `1h -- 30 minutes …` for the
//!   text); one written one way (`1h 30m`, `1 hour 30 minutes`) is one delay.
//! * `in 2 days 9am` is that day at 09:00. In the small hours (until
//!   05:00) `tonight 1am` is this night's while it is ahead. Until 04:00
//!   a time with `tomorrow` (`tomorrow 9am`, `tomorrow at 9am`, `9am
//!   tmrw`, `tomorrow morning`, `tomorrow evening 7`) is asked about
//!   while that time today is still ahead: the day after this night, or
//!   the next? The message says how to write each (`today 9am` or `tue
//!   9am`, `this morning` or `tue morning`); `tomorrow` alone is asked
//!   about at its 09:00. A time today that has gone (`tomorrow 1am` at
//!   02:00) is the next calendar day's.
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
    /// A delay whose second part is written another way than its first,
    /// with text after it (`/later 1h 30 minutes of reading`): more of the
    /// delay, or the text's first words? Carries the first part and the
    /// second as typed, and the whole delay written one way (`1h30m`).
    /// (`what`: "delay", or "interval" for a repeating rule's.)
    #[error(
        "{said:?} after {time:?}: more of the {what}, or the start of the text? — write \"{whole} …\" for that {what}, or \"{time} -- {said} …\" for the text"
    )]
    DelayInTwoStyles {
        time: String,
        said: String,
        whole: String,
        what: &'static str,
    },
    /// A second time after the first (`/at 9am and 5pm x`): carries the
    /// first, the words of the second as typed, and the second alone.
    #[error(
        "{said:?} after {time:?}: one time per message — send two, /at {time} … and /at {second} …, or write \"{time} -- {said} …\" to send it as text"
    )]
    SecondTime {
        time: String,
        said: String,
        second: String,
    },
    /// A time zone tock does not read right after a time (`/at 9am PST
    /// call`): carries the time and the zone's word as typed.
    #[error(
        "{zone:?} after {time:?}: tock reads times in your local zone, in UTC or at a fixed offset (9am utc, 9am gmt+1, 9am -05:00) — give the time in one of those, or write \"{time} -- {zone} …\" to keep it as text"
    )]
    ZoneWord { time: String, zone: String },
    /// A time with `tomorrow` said from midnight to 04:00 (`tomorrow
    /// 9am`, `tomorrow morning`), when that time today is still ahead:
    /// the day after this night (today), or the one after that? Carries
    /// the words as typed, the time it was said, both instants as shown,
    /// and how to write each (`today 9am`, `tue 9am`).
    #[error(
        "{said:?} at {now}, before the night is over, could be {} or {} — say {} or {}",
        .days.first, .days.second, .days.first_way, .days.second_way
    )]
    TomorrowBeforeMorning {
        said: String,
        now: String,
        days: Box<Readings>,
    },
    /// `next friday` said while this week's Friday is still to come (on
    /// Monday): this week's, or next week's? Carries the words as typed,
    /// both instants as shown and how to write each (`this friday`, `18
    /// dec`).
    #[error(
        "{said:?} could be this week's, {}, or next week's, {} — say {} or {}",
        .days.first, .days.second, .days.first_way, .days.second_way
    )]
    NextWeekday { said: String, days: Box<Readings> },
    /// A day's name right after a clock time, with text after it on the
    /// line (`/at 9am friday prep`): the time's day, or the text's first
    /// word? Carries the clock time and the day as typed.
    #[error(
        "{day:?} after {time:?}: the day of the time, or the start of the text? — write \"{day} {time} …\" for that day, or \"{time} -- {day} …\" for the text"
    )]
    DayAfterClock { time: String, day: String },
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

/// The two readings of a time that is asked about: each instant as shown
/// (`Mon 7 Dec 09:00`) and a way to write it that is read as it (`today
/// 9am`). (Boxed in [`WhenError`], which stays small.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readings {
    pub first: String,
    pub first_way: String,
    pub second: String,
    pub second_way: String,
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
    // A line break ends the time: what follows it is always text.
    let line_end = first_line_end(input);
    // `9am -- evening class`: the time is what comes before the `--`.
    if let Some((time, text)) = split_at_dashes(input)
        && !time.contains('\n')
    {
        match parse_time(time, now, mode) {
            Ok(_) if text.is_empty() => return Err(WhenError::NothingToSend),
            Ok(due) => return Ok((due, text.to_string())),
            Err(e) if is_specific(&e) => return Err(e),
            Err(_) => {}
        }
    }
    let ends = word_ends(&input[..line_end], MAX_PREFIX_WORDS);
    let mut shortest_err = WhenError::Empty;
    for &end in ends.iter().rev() {
        // `fri 9am, call mom`: the comma ends the time, and what follows
        // it is text.
        let prefix = input[..end].trim_end_matches(',');
        match parse_time(prefix, now, mode) {
            Ok(due) => {
                let rest = input[end..].trim();
                if rest.is_empty() {
                    return Err(WhenError::NothingToSend);
                }
                let after_comma = input[..end].ends_with(',');
                let same_line = input[end..line_end].trim();
                // `/later 1h 30 minutes of reading`: the text may be
                // "30 minutes of reading".
                if !after_comma
                    && !same_line.is_empty()
                    && let Some(asked) = delay_in_two_styles(prefix, "delay")
                {
                    return Err(asked);
                }
                // `/at 9am PST call`: another zone than the user's.
                if mode == Mode::At
                    && !after_comma
                    && let Some(zone) = same_line.split_whitespace().next()
                    && zone_word(zone)
                {
                    return Err(WhenError::ZoneWord {
                        time: quoted(prefix.trim()),
                        zone: quoted(zone),
                    });
                }
                // `/at 9am friday prep`: the day may be the text's.
                if mode == Mode::At
                    && !after_comma
                    && !same_line.is_empty()
                    && let Some((time, day)) = clock_then_day(prefix)
                {
                    return Err(WhenError::DayAfterClock { time, day });
                }
                // Text that starts with more time (`/at 9am evening
                // call`, `/at 9am and 5pm x`) is asked about: taken as
                // text, the time would be another than the one meant.
                if mode == Mode::At
                    && !after_comma
                    && let Some(more) = time_in_text(same_line)
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

/// [`WhenError::DelayInTwoStyles`] for a delay (`1h 30 minutes`, `in 1
/// hour 30m`) whose parts are not all written one way: the unit glued to
/// its amount (`1h`, `30m`) or a word of its own (`1 hour`, `30 min`, `an
/// hour`). `1h 30m`, `1 hour 30 minutes`, `an hour and a half` are one way.
/// `what` names it in the question ("delay", "interval").
pub(crate) fn delay_in_two_styles(prefix: &str, what: &'static str) -> Option<WhenError> {
    let typed: Vec<&str> = prefix.split_whitespace().collect();
    let lower = words_of(prefix);
    let lower: Vec<&str> = lower.iter().map(String::as_str).collect();
    // Only a delay read word for word (not `14:30 utc`, which `words_of`
    // glues into one).
    if typed.len() != lower.len() {
        return None;
    }
    let ms = duration_ms(&lower, false).ok()?;
    let skip = usize::from(lower.first() == Some(&"in"));
    // Each part's way, at the word it starts: glued when letters follow
    // its digits in the word; an amount in words (`an hour`) is not.
    let ways: Vec<(usize, bool)> = lower
        .iter()
        .enumerate()
        .skip(skip)
        .filter_map(|(i, w)| {
            if w.starts_with(|c: char| c.is_ascii_digit()) {
                Some((i, w.contains(|c: char| c.is_ascii_alphabetic())))
            } else {
                (i == skip && matches!(*w, "a" | "an" | "one" | "half")).then_some((i, false))
            }
        })
        .collect();
    let (_, first) = *ways.first()?;
    let (at, _) = *ways.iter().find(|(_, glued)| *glued != first)?;
    duration_ms(&lower[..at], false).ok()?;
    // The whole delay, one way: `1h30m` (a part under a second has none).
    if ms % 1000 != 0 {
        return None;
    }
    let secs = ms / 1000;
    let whole: String = [(86_400, 'd'), (3_600, 'h'), (60, 'm'), (1, 's')]
        .iter()
        .scan(secs, |left, &(per, unit)| {
            let n = *left / per;
            *left %= per;
            Some((n, unit))
        })
        .filter(|(n, _)| *n > 0)
        .map(|(n, unit)| format!("{n}{unit}"))
        .collect();
    Some(WhenError::DelayInTwoStyles {
        time: quoted(typed[..at].join(" ").trim_end_matches(',')),
        said: quoted(&typed[at..].join(" ")),
        whole: format!("{}{whole}", if skip == 1 { "in " } else { "" }),
        what,
    })
}

/// When something that has happened is shown as having happened: at the
/// time stored, or `now` for a time still ahead of it (written on a clock
/// that was ahead and has since been set right; the event is past all the
/// same). What is stored, and what `--json` prints, stays as it was.
pub fn happened(at_ms: i64, now_ms: i64) -> i64 {
    at_ms.min(now_ms)
}

/// Where the first line of `input` ends (after any blank lines before
/// it): a line break ends a time, and what follows it is text.
pub(crate) fn first_line_end(input: &str) -> usize {
    let start = input.len() - input.trim_start().len();
    input[start..].find('\n').map_or(input.len(), |i| start + i)
}

/// `9am friday` -> (`9am`, `friday`): a time whose last word is a day's
/// name right after a clock time, as typed. With text after it on the
/// line (`/at 9am friday prep`) the day may be the text's (`prep friday`
/// said the other way round), and is asked about.
fn clock_then_day(prefix: &str) -> Option<(String, String)> {
    let typed: Vec<&str> = prefix.split_whitespace().collect();
    let lower: Vec<String> = typed.iter().map(|w| w.to_ascii_lowercase()).collect();
    // The day's words: a day's name, or `in 2 days` (`9am in 2 days`).
    let day_len = match lower.as_slice() {
        [.., d] if weekday(d).is_some() => 1,
        [.., i, n, u] if i == "in" && days_in(n, u).is_some() => 3,
        _ => return None,
    };
    let (before, day) = typed.split_at(typed.len().checked_sub(day_len)?);
    let owned = words_of(&before.join(" "));
    let words: Vec<&str> = owned.iter().map(String::as_str).collect();
    (matches!(words.len(), 1 | 2) && parse_clock(&words).is_ok())
        .then(|| (quoted(&before.join(" ")), quoted(&day.join(" "))))
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
    /// Another time, not more of the first: after `and`, `&`, `then` or
    /// `or`.
    pub(crate) another: bool,
}

/// Whether `rest`, the text after a time, starts with words that read as
/// time: a part of the day (`evening`, `tonight`), `noon`, `today`,
/// `tomorrow`, a clock time (`7pm`, `19:00`, `7 pm`, `at 5pm`; not `3.50`,
/// more likely a price), a day's full name (`monday`) or a short one with
/// a clock time after it (`fri 5pm`) — or any of those after `and`, `&`,
/// `then` or `or`, which make it a second time. (After a comma that ended
/// the time, what follows is text: the callers do not ask.)
pub(crate) fn time_in_text(rest: &str) -> Option<MoreTime> {
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
        another: joined > 0,
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
        // `in 2 days`, `in 2h`: a delay after the time.
        ["in", a, b, ..] if duration_ms(&["in", a, b], false).is_ok() => Some(3),
        ["in", a, ..] if duration_ms(&["in", a], false).is_ok() => Some(2),
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
    let end = future(end, now)?;
    // `until next friday` on Monday: this week's or next week's, as with /at.
    match next_weekday_asked(trimmed, end, now, |w| read_until(w, now).ok()) {
        Some(asked) => Err(asked),
        None => Ok(end),
    }
}

/// A clock time alone (`9am`, `18:00`, `noon`, `8.30 pm`), for repeating
/// rules. `None`: not a clock time; `Some(Err)`: one that does not exist
/// (`25:00`) or carries a time zone (rules follow local time).
pub(crate) fn clock_time(words: &[&str]) -> Option<Result<NaiveTime, WhenError>> {
    match parse_clock(words) {
        Ok(Clock { offset: None, time }) => Some(Ok(time)),
        Ok(Clock {
            offset: Some(_), ..
        }) => {
            // A zone read into the time (`gmt+1` becomes `9am+01:00`) is
            // quoted without it: the time as typed.
            let said = words.join(" ");
            let time = match said
                .char_indices()
                .skip(1)
                .find(|&(_, c)| c == '+' || c == '-')
            {
                Some((at, _)) => &said[..at],
                None => said.as_str(),
            };
            Some(Err(WhenError::ZoneInRule(quoted(time))))
        }
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
            E::TomorrowBeforeMorning { said, now, days } => E::TomorrowBeforeMorning {
                said: as_typed(expr, &said),
                now,
                days,
            },
            E::NextWeekday { said, days } => E::NextWeekday {
                said: as_typed(expr, &said),
                days,
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

/// `gmt+1`, `utc-5`, `utc+5:30`, `gmt+0100` (lower-cased) -> `+01:00`,
/// `-05:00`, `+05:30`, `+01:00`: UTC or GMT and a fixed offset, up to 14
/// hours either way.
fn zone_offset(w: &str) -> Option<String> {
    let rest = w.strip_prefix("utc").or_else(|| w.strip_prefix("gmt"))?;
    let sign = rest.chars().next().filter(|c| matches!(c, '+' | '-'))?;
    let body = &rest[1..];
    let (h, m) = match body.split_once(':') {
        Some((h, m)) => (h, m),
        None if body.len() == 4 => body.split_at(2),
        None => (body, "00"),
    };
    let digits = |s: &str, max: u32| {
        (matches!(s.len(), 1 | 2) && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u32>().ok())
            .flatten()
            .filter(|n| *n <= max)
    };
    let (h, m) = (digits(h, 14)?, digits(m, 59)?);
    (m.is_multiple_of(15)).then(|| format!("{sign}{h:02}:{m:02}"))
}

/// A time zone's abbreviation (`pst`, `et`, `cet`) or a UTC offset tock
/// does not read (`gmt+25`), lower-cased: said right after a time, it is
/// refused rather than sent as the text's first word at local time.
/// Abbreviations are ambiguous (`ist`, `cst`) and change with the season
/// (`et`): only UTC and fixed offsets are read.
pub(crate) fn zone_word(w: &str) -> bool {
    const ZONES: &[&str] = &[
        "pst", "pdt", "pt", "mst", "mdt", "mt", "cst", "cdt", "ct", "est", "edt", "et", "akst",
        "akdt", "hst", "ast", "adt", "nst", "ndt", "bst", "ist", "cet", "cest", "eet", "eest",
        "msk", "jst", "kst", "hkt", "sgt", "aest", "aedt", "acst", "acdt", "awst", "nzst", "nzdt",
        "wib", "pht", "brt", "art", "gst",
    ];
    let w = w.trim_end_matches([',', '.', ':']).to_ascii_lowercase();
    ZONES.contains(&w.as_str())
        || ["utc", "gmt"].iter().any(|z| {
            w.strip_prefix(z)
                .is_some_and(|r| r.starts_with(['+', '-']) && r.len() > 1)
        })
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
            // `9am gmt+1`, `14:00 utc-5`, `9am utc+5:30`: a fixed offset.
            if let Some(offset) = zone_offset(&w) {
                prev.push_str(&offset);
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
        // 00:00, like `12am`; after a day it is the one that ends that day
        // (`fri midnight` is Saturday 00:00: see `date_and_clock`).
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

/// `2 days`, `a day`, `1 week`: how many days ahead, for `in 2 days 9am`.
fn days_in(n: &str, unit: &str) -> Option<u64> {
    let n: u64 = match n {
        "a" | "one" => 1,
        n if (1..=3).contains(&n.len()) => n.parse().ok()?,
        _ => return None,
    };
    match unit {
        "day" | "days" | "d" => Some(n),
        "week" | "weeks" | "wk" | "wks" | "w" => n.checked_mul(7),
        _ => None,
    }
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
        // `in 2 days 9am`: that day (alone, `in 2 days` is a delay).
        ["in", n, unit] if days_in(n, unit).is_some() => {
            let days = days_in(n, unit).ok_or(PErr::NoMatch)?;
            today
                .checked_add_days(chrono::Days::new(days))
                .map(|date| DateSpec::Ymd {
                    date,
                    has_year: true,
                })
                .ok_or(PErr::Fail(WhenError::OutOfRange))
        }
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
    let due = day_and_time(words, now)?;
    let read = |said: &str| {
        let owned = words_of(said);
        let words: Vec<&str> = owned.iter().map(String::as_str).collect();
        day_and_time(&words, now).ok()
    };
    let asked = tomorrow_asked(trimmed, words, due, now)
        .or_else(|| next_weekday_asked(trimmed, due, now, read));
    match asked {
        Some(asked) => Err(PErr::Fail(asked)),
        None => Ok(due),
    }
}

/// `next friday` (`next fri 5pm`, `5pm next friday`), read as `due`, the
/// first Friday after today: when that is in this calendar week (Monday
/// to Sunday), next week's may be meant. Asked about, with a way to write
/// each that `read` (the caller's reading of a time) reads as it: `this
/// friday …` and the other's date, `18 dec …` (not `dec 18`: in `dec 18
/// evening` the 18 would read as an hour). `None` when this week's
/// is gone (on Saturday `next friday` can only be the coming one).
fn next_weekday_asked<Tz: TimeZone>(
    trimmed: &str,
    due: DateTime<Utc>,
    now: &DateTime<Tz>,
    read: impl Fn(&str) -> Option<DateTime<Utc>>,
) -> Option<WhenError> {
    let typed: Vec<String> = trimmed
        .split_whitespace()
        .map(|w| w.trim_end_matches(',').to_ascii_lowercase())
        .collect();
    let at = typed
        .windows(2)
        .position(|w| w[0] == "next" && weekday(&w[1]).is_some())?;
    let day = weekday(&typed[at + 1])?;
    let today = now.date_naive();
    let from_monday = i64::from(today.weekday().num_days_from_monday());
    // The first such day after today: 1 to 7 days ahead.
    let ahead = (i64::from(day.num_days_from_monday()) - from_monday - 1).rem_euclid(7) + 1;
    if from_monday + ahead > 6 {
        return None;
    }
    // The rest, without the joining `on` (`5pm on next friday`).
    let rest: String = typed
        .iter()
        .enumerate()
        .filter(|&(i, w)| i != at && i != at + 1 && w != "on")
        .map(|(_, w)| format!(" {w}"))
        .collect();
    let later = today.checked_add_signed(Duration::days(ahead + 7))?;
    let first_way = format!("this {}{rest}", typed[at + 1]);
    let second_way = format!(
        "{}{rest}",
        later.format("%-d %b").to_string().to_ascii_lowercase()
    );
    let second = read(&second_way)?;
    // Each way is read as the day it stands for.
    if read(&first_way) != Some(due) || second.with_timezone(&now.timezone()).date_naive() != later
    {
        return None;
    }
    Some(WhenError::NextWeekday {
        said: quoted(trimmed),
        days: Box::new(Readings {
            first: absolute(due, now),
            first_way,
            second: absolute(second, now),
            second_way,
        }),
    })
}

/// A date, a clock time, a part of the day, or any of them together.
fn day_and_time<Tz: TimeZone>(words: &[&str], now: &DateTime<Tz>) -> Result<DateTime<Utc>, PErr> {
    if let Some(found) = find_day_part(words) {
        return date_and_clock(&found.rest, now, Some(&found));
    }
    date_and_clock(words, now, None)
}

/// `tomorrow 9am` (`tomorrow morning`, `9am tmrw`, …) said before
/// [`TOMORROW_ASKED_UNTIL`], read as `due`: a night owl at 00:30 may mean
/// the coming morning, today's date. Asked about when that time today is
/// still ahead, with a way to write each day that is read as it; `None`
/// when there is nothing to ask (a time today that has gone, `tomorrow
/// 1am` at 02:00).
fn tomorrow_asked<Tz: TimeZone>(
    trimmed: &str,
    words: &[&str],
    due: DateTime<Utc>,
    now: &DateTime<Tz>,
) -> Option<WhenError> {
    use chrono::Timelike;
    let is_tomorrow = |w: &str| matches!(w.trim_end_matches(','), "tomorrow" | "tmrw" | "tmr");
    if now.time().hour() >= TOMORROW_ASKED_UNTIL
        || words.iter().filter(|w| is_tomorrow(w)).count() != 1
    {
        return None;
    }
    let now_utc = now.with_timezone(&Utc);
    let read = |said: &str| {
        let owned = words_of(said);
        let words: Vec<&str> = owned.iter().map(String::as_str).collect();
        day_and_time(&words, now).ok()
    };
    // The rest, as typed but in lower case (`9am utc`, not `9amz`).
    let typed: Vec<String> = trimmed
        .split_whitespace()
        .map(str::to_ascii_lowercase)
        .collect();
    let at = typed.iter().position(|w| is_tomorrow(w))?;
    let rest: Vec<&str> = typed
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != at)
        .map(|(_, w)| w.as_str())
        .collect();
    // `tomorrow` alone (or `on tomorrow`) is at its default time (09:00),
    // asked about as `tomorrow 9am` is: said at 00:30 it may mean this
    // morning.
    let rest = if rest.iter().all(|w| matches!(*w, "at" | "on")) {
        due.with_timezone(&now.timezone())
            .naive_local()
            .format("%-H:%M")
            .to_string()
    } else {
        rest.join(" ")
    };
    let today_at = read(&format!("today {rest}")).filter(|t| *t > now_utc && *t != due)?;
    // Said the plainest way that reads as that day: `this morning`,
    // `tonight`, else `today …`; the next day by its name, `tue 9am`.
    let first = rest.split_whitespace().next().unwrap_or_default();
    let mut today_ways = Vec::new();
    if matches!(first, "morning" | "afternoon" | "evening") {
        today_ways.push(format!("this {rest}"));
    }
    if let Some(after) = rest.strip_prefix("night") {
        today_ways.push(format!("tonight{after}"));
    }
    today_ways.push(format!("today {rest}"));
    let today_way = today_ways.into_iter().find(|w| read(w) == Some(today_at))?;
    let next = now.date_naive().succ_opt()?;
    let next_way = [next.format("%a"), next.format("%Y-%m-%d")]
        .iter()
        .map(|d| format!("{} {rest}", d.to_string().to_ascii_lowercase()))
        .find(|w| read(w) == Some(due))?;
    Some(WhenError::TomorrowBeforeMorning {
        said: quoted(&words.join(" ")),
        now: now.time().format("%H:%M").to_string(),
        days: Box::new(Readings {
            first: absolute(today_at, now),
            first_way: today_way,
            second: absolute(due, now),
            second_way: next_way,
        }),
    })
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
        // A night's small hours are on the day after the one said, and
        // so is a day's midnight: the one that ends it (`fri midnight`).
        let next_day = time_words == ["midnight"]
            || match (part, &clock) {
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
    use chrono::Timelike;
    let today = matches!(date, Some(DateSpec::Today));
    let small_hours = now.time().hour() < SMALL_HOURS_END;
    // In the small hours, `tonight 1am` is this night's 01:00 while it is
    // still ahead (`tonight midnight` at 00:15 is the coming one).
    if small_hours
        && today
        && next_day
        && part.is_some_and(|p| p.today)
        && let Ok(t) = resolve_on(date, clock, false, now)
    {
        return Ok(t);
    }
    match (resolve_on(date, clock, next_day, now), part) {
        (Err(WhenError::Past(at)), Some(p)) if today => Err(WhenError::DayPartOver {
            said: quoted(&p.said),
            at,
        }),
        (r, _) => r,
    }
}

/// The night's small hours end at 05:00 (see [`DayPart::Night`]).
const SMALL_HOURS_END: u32 = 5;

/// Until 04:00, `tomorrow 9am`, `tomorrow morning` may be the day after
/// this night (today) or the next: asked about while that time today is
/// still ahead (see [`tomorrow_asked`]).
const TOMORROW_ASKED_UNTIL: u32 = 4;

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
mod word_amount_tests;

#[cfg(test)]
mod tests;

/// Parts of the day (`tomorrow evening 7pm`, `fri night`, `tonight`), the
/// rows a tester found read wrong in the composer, and `17.30`.
#[cfg(test)]
mod day_part_tests;

/// Where a time ends and its text starts (a line break, a comma, a day
/// after a clock time, a zone), `midnight` after a day, `tonight` and
/// `tomorrow` in the small hours, `in 2 days 9am`.
#[cfg(test)]
mod edge_tests;
