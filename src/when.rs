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
//!   `12am` (midnight). A bare clock time means its *next* occurrence: today if
//!   still ahead, else tomorrow.
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
//!   An explicit date or instant that is not in the future is refused.
//! * Full RFC 3339 instants with an offset: `2026-12-01T09:00:00Z`,
//!   `2026-12-01T09:00:00.5+02:00`.
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
//!   16+ letters follows an hour;
//! * `midnight` (and any word starting with `mi`, `se`, `ho`, `da`, `we`, `mo`,
//!   `ye`) is read as "zero units", i.e. *now*;
//! * `noon`, `in 10 minutes`, `in 2h`, `an hour`, `half an hour`, `1.5h`
//!   (read as the clock time 1:05), and compound durations (`1h30m`, `1h 30m`,
//!   `1 hour 30 minutes`) are refused;
//! * after a date, `12pm` becomes midnight of the *next* day and `12am` becomes
//!   noon (`"tomorrow 12pm"` -> day after tomorrow 00:00), and hours are not
//!   range-checked (`"tomorrow 100pm"` -> four days later);
//! * a bare clock time or a weekday with a past time stays in the past (no
//!   "next occurrence"), dates without a time mean 00:00 (we want 09:00),
//!   `tomorrow` alone means tomorrow at the current time;
//! * `next monday` (UK dialect) skips a whole week, and US dialect's
//!   `next sunday` on a Sunday evening is today;
//! * a local time inside a DST gap is an error; a month-name date followed by
//!   a year without a comma (`dec 1 2026`) is an error.

use std::fmt::Write as _;

use chrono::{
    DateTime, Datelike, Duration, FixedOffset, NaiveDate, NaiveDateTime, NaiveTime, Offset,
    TimeZone, Utc, Weekday,
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
    /// `Mode::Later` was given a point in time.
    #[error("{0:?} is a point in time, not a duration — use /at for that, or e.g. /later 1h30m")]
    TimeNotDuration(String),
    /// Looks like a date or time but does not exist (`25:99`, `2026-02-30`, `13pm`).
    #[error("no such date or time: {0:?}")]
    NoSuchTime(String),
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
const DEFAULT_HOUR: u32 = 9;

/// How many leading words [`split_time_prefix`] tries as a time expression.
/// The longest accepted form is about five words (`1 hour and 30 minutes`,
/// `next monday at 9 am`).
const MAX_PREFIX_WORDS: usize = 6;

/// Longest piece of user text quoted back in an error message.
const MAX_QUOTED_CHARS: usize = 40;

/// Parse a whole expression into a UTC instant strictly after `now`.
///
/// The expression is resolved in `now`'s time zone. See the module docs for
/// the grammar.
pub fn parse_time<Tz: TimeZone>(
    expr: &str,
    now: &DateTime<Tz>,
    mode: Mode,
) -> Result<DateTime<Utc>, WhenError> {
    let trimmed = expr.trim();
    if trimmed.is_empty() {
        return Err(WhenError::Empty);
    }
    let owned = words_of(trimmed);
    let words: Vec<&str> = owned.iter().map(String::as_str).collect();
    let now_utc = now.with_timezone(&Utc);

    match duration_ms(&words) {
        Ok(ms) => {
            return Duration::try_milliseconds(ms)
                .and_then(|d| now_utc.checked_add_signed(d))
                .ok_or(WhenError::OutOfRange);
        }
        Err(PErr::Fail(e)) => return Err(e),
        Err(PErr::NoMatch) => {}
    }

    match mode {
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
    match duration_ms(&words) {
        Ok(ms) => Duration::try_milliseconds(ms).ok_or(WhenError::OutOfRange),
        Err(PErr::Fail(e)) => Err(e),
        Err(PErr::NoMatch) => Err(WhenError::NotADuration(quoted(trimmed))),
    }
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
    let ends = word_ends(input, MAX_PREFIX_WORDS);
    let mut shortest_err = WhenError::Empty;
    for &end in ends.iter().rev() {
        let prefix = &input[..end];
        match parse_time(prefix, now, mode) {
            Ok(due) => {
                let rest = input[end..].trim();
                if rest.is_empty() {
                    return Err(WhenError::NothingToSend);
                }
                return Ok((due, rest.to_string()));
            }
            Err(e) if is_specific(&e) => return Err(e),
            Err(e) => shortest_err = e,
        }
    }
    Err(shortest_err)
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
fn is_specific(e: &WhenError) -> bool {
    !matches!(
        e,
        WhenError::Empty | WhenError::Unrecognised(_) | WhenError::NotADuration(_)
    )
}

/// User text quoted back in an error, shortened to one manageable line.
fn quoted(s: &str) -> String {
    let mut chars = s.chars();
    let mut out: String = chars.by_ref().take(MAX_QUOTED_CHARS).collect();
    if chars.next().is_some() {
        out.push('…');
    }
    out
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
fn words_of(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    for w in expr.split_whitespace() {
        let w = w.to_ascii_lowercase();
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
// decimals (`1.5h` is read as the clock time 1:05) and every compound form
// (`1h30m`, `1h 30m`, `1 hour 30 minutes`), and reads `midnight`, `month`,
// `second thoughts` … as a zero-length duration.

/// A piece of a duration word: a number (in thousandths, so `1.5` is 1500)
/// or a run of letters. `1h30m` is `[1000, "h", 30000, "m"]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Atom<'a> {
    Num(i128),
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
                out.push(Atom::Num(int * 1000 + frac_val));
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

/// Milliseconds per unit. `m` is minutes (never months): months and years are
/// not fixed lengths, so they are not durations here.
fn unit_ms(u: &str) -> Option<i128> {
    Some(match u {
        "s" | "sec" | "secs" | "second" | "seconds" => 1_000,
        "m" | "min" | "mins" | "minute" | "minutes" => 60_000,
        "h" | "hr" | "hrs" | "hour" | "hours" => 3_600_000,
        "d" | "day" | "days" => 86_400_000,
        "w" | "wk" | "wks" | "week" | "weeks" => 604_800_000,
        _ => return None,
    })
}

/// A duration in milliseconds, > 0.
fn duration_ms(words: &[&str]) -> Result<i64, PErr> {
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
        let amount = match atoms.get(i) {
            Some(Atom::Num(n)) => {
                i += 1;
                *n
            }
            Some(Atom::Word("a" | "an" | "one")) => {
                i += 1;
                1000
            }
            // "half an hour"
            Some(Atom::Word("half"))
                if matches!(atoms.get(i + 1), Some(Atom::Word("a" | "an"))) =>
            {
                i += 2;
                500
            }
            _ => return Err(PErr::NoMatch),
        };
        let Some(Atom::Word(unit)) = atoms.get(i) else {
            return Err(PErr::NoMatch);
        };
        let per = unit_ms(unit).ok_or(PErr::NoMatch)?;
        // Each unit once: "1h 1h" is more likely a typo than a sum.
        let canon = per_name(per);
        if seen.contains(&canon) {
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

fn per_name(per: i128) -> &'static str {
    match per {
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
    /// `Z` / `+02:00` suffix (ISO forms only).
    offset: Option<FixedOffset>,
}

fn meridiem(s: &str) -> Option<bool> {
    match s {
        "am" | "a.m." | "a.m" => Some(false),
        "pm" | "p.m." | "p.m" => Some(true),
        _ => None,
    }
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
/// `p.m.`) or, without meridiem, an optional offset (`z`, `+02:00`, `-0500`).
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
    let rest = &w[i..];
    let mut pm = meridiem_word;
    let mut offset = None;
    if !rest.is_empty() {
        if pm.is_some() {
            return Err(PErr::NoMatch);
        }
        if let Some(p) = meridiem(rest) {
            pm = Some(p);
        } else {
            offset = Some(parse_offset(rest).ok_or(PErr::NoMatch)?);
        }
    }
    // `9` alone is ambiguous (9am? 9 minutes?); `1.5` is a number, not 1:05.
    if pm.is_none() && sep != Some(b':') {
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
    /// A calendar date; without an explicit year it rolls to its next occurrence.
    Ymd {
        date: NaiveDate,
        has_year: bool,
    },
}

/// Weekday names and the usual abbreviations. (interim accepts any prefix of
/// three letters or more; this list is explicit so `sat` and `sun` in a
/// message are only consumed where a date is expected anyway.)
fn weekday(w: &str) -> Option<Weekday> {
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
    let mut words = words;
    if let ["at" | "on", rest @ ..] = words
        && !rest.is_empty()
    {
        words = rest;
    }
    let n = words.len();
    let empty: &[&str] = &[];
    let mut splits: Vec<(&[&str], &[&str])> = vec![(empty, words), (words, empty)];
    // date then time: "tomorrow 9 am", "tomorrow at 9am"
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
    for (date_words, time_words) in splits {
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
        match (date, clock) {
            (Ok(date), Ok(clock)) => {
                // An explicit offset only makes sense on an explicit date.
                if clock.is_some_and(|c| c.offset.is_some())
                    && !matches!(date, Some(DateSpec::Ymd { .. }))
                {
                    continue;
                }
                return resolve(date, clock, now).map_err(PErr::Fail);
            }
            (Err(PErr::Fail(e)), _) | (_, Err(PErr::Fail(e))) => {
                refusal.get_or_insert(e);
            }
            _ => {}
        }
    }
    Err(refusal.map_or(PErr::NoMatch, PErr::Fail))
}

/// The instant for a parsed date and/or clock time, strictly after `now`.
fn resolve<Tz: TimeZone>(
    date: Option<DateSpec>,
    clock: Option<Clock>,
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
        // A bare clock time: its next occurrence.
        None => {
            let t = at(today)?;
            if t > now_utc {
                Ok(t)
            } else {
                future(at(plus_days(today, 1)?)?, now)
            }
        }
        Some(DateSpec::Today) => future(at(today)?, now),
        Some(DateSpec::Tomorrow) => future(at(plus_days(today, 1)?)?, now),
        Some(DateSpec::Weekday { day, next }) => {
            let mut delta = (i64::from(day.num_days_from_monday())
                - i64::from(today.weekday().num_days_from_monday()))
            .rem_euclid(7)
            .unsigned_abs();
            if next && delta == 0 {
                delta = 7;
            }
            let t = at(plus_days(today, delta)?)?;
            if t > now_utc {
                Ok(t)
            } else {
                // Today, but that time has passed: the same day next week.
                future(at(plus_days(today, delta + 7)?)?, now)
            }
        }
        Some(DateSpec::Ymd { date, has_year }) => {
            let t = at(date)?;
            if t > now_utc || has_year {
                return future(t, now);
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

/// `t` if it is strictly after `now`, else `Past`.
fn future<Tz: TimeZone>(t: DateTime<Utc>, now: &DateTime<Tz>) -> Result<DateTime<Utc>, WhenError> {
    if t > now.with_timezone(&Utc) {
        Ok(t)
    } else {
        Err(WhenError::Past(absolute(t, now)))
    }
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
    if let Some(t) = tz.from_local_datetime(&naive).earliest() {
        return Some(t.with_timezone(&Utc));
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
fn compact_span(secs: u128) -> String {
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
