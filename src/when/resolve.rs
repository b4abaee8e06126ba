//! A date, a clock time and a part of the day put together into an instant
//! strictly after now, by the rules of the user's zone.

use chrono::{
    DateTime, Datelike, Duration, LocalResult, NaiveDate, NaiveDateTime, NaiveTime, Offset,
    TimeZone, Utc,
};

use super::asked::{next_weekday_asked, tomorrow_asked};
use super::clock::{Clock, bare_hour, hour_number, parse_clock};
use super::dates::{DateSpec, parse_date};
use super::day_part::{FoundPart, find_day_part};
use super::durations::duration_ms;
use super::errors::{PErr, WhenError, quoted};
use super::show::absolute;
use super::words::words_of;

/// The time of day used when a date is given without one (`tomorrow`,
/// `fri`, `2026-12-01`): 09:00, the start of a working day.
pub(crate) const DEFAULT_HOUR: u32 = 9;

pub(super) fn parse_absolute<Tz: TimeZone>(
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

/// A date, a clock time, a part of the day, or any of them together.
pub(super) fn day_and_time<Tz: TimeZone>(
    words: &[&str],
    now: &DateTime<Tz>,
) -> Result<DateTime<Utc>, PErr> {
    if let Some(found) = find_day_part(words) {
        return date_and_clock(&found.rest, now, Some(&found));
    }
    date_and_clock(words, now, None)
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
pub(super) fn future<Tz: TimeZone>(
    t: DateTime<Utc>,
    now: &DateTime<Tz>,
) -> Result<DateTime<Utc>, WhenError> {
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
pub(super) fn local_instant<Tz: TimeZone>(tz: &Tz, naive: NaiveDateTime) -> Option<DateTime<Utc>> {
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
