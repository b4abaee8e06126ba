//! Dates: `today`, weekdays, `in 2 days`, ISO and month-name dates.

use chrono::{Datelike, Duration, NaiveDate, NaiveTime, TimeZone, Utc, Weekday};

use super::errors::{PErr, WhenError, quoted};
use super::words::{iso_date_parts, words_of};

/// Whether `expr` begins with a date (`fri`, `dec 24`, `2026-12-08`,
/// `tomorrow 9am`) rather than being a clock time alone (`5pm`): after a
/// message's text, `until fri` ends a series but `study until 5pm` is text.
pub fn starts_with_date(expr: &str, today: NaiveDate) -> bool {
    let owned = words_of(expr.trim());
    let words: Vec<&str> = owned.iter().map(String::as_str).collect();
    (1..=words.len().min(4)).any(|n| parse_date(&words[..n], today).is_ok())
}

#[derive(Debug, Clone, Copy)]
pub(super) enum DateSpec {
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
pub(super) fn days_in(n: &str, unit: &str) -> Option<u64> {
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

pub(super) fn parse_date(words: &[&str], today: NaiveDate) -> Result<DateSpec, PErr> {
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
