//! The days of a calendar rule (`weekdays`, `mon,wed`, `every 2 weeks on
//! mon`, `month on the 1st`) and the clock time said before or after them.

use chrono::{Datelike, NaiveDate, NaiveTime, Weekday};

use crate::when::{self, WhenError};

use super::Days;
use super::errors::RecurError;

/// The days of a calendar rule, and how many months (for a monthly rule),
/// years (for a yearly one) or weeks (with `true`: for days of the week)
/// apart they are: 1 for the rules of [`parse_days`], N for `every N
/// months …`, `every N years …` (`6mo`, `2 yrs`, `other` for 2), `every N
/// weeks on DAYS` and `every other DAYS` (`every other monday`).
pub(super) fn spaced_days(
    words: &[&str],
    today: Option<NaiveDate>,
) -> Option<Result<(u32, Days, bool), RecurError>> {
    let unit_of = |w: &str| match w {
        "month" | "months" | "mo" | "mos" => Some("month"),
        "year" | "years" | "yr" | "yrs" => Some("year"),
        "week" | "weeks" | "wk" | "wks" | "w" => Some("week"),
        _ => None,
    };
    let count = |w: &str| match w {
        "other" => Some(Ok(2)),
        _ if !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()) => Some(
            w.parse::<u32>()
                .map_err(|_| RecurError::Time(WhenError::OutOfRange)),
        ),
        _ => None,
    };
    let glued = |w: &str| {
        let digits = w.find(|c: char| !c.is_ascii_digit()).unwrap_or(w.len());
        Some((count(&w[..digits])?, unit_of(&w[digits..])?))
    };
    let (n, unit, rest) = match words {
        [n, unit, rest @ ..] if count(n).is_some() && unit_of(unit).is_some() => {
            (count(n)?, unit_of(unit)?, rest)
        }
        [w, rest @ ..] if glued(w).is_some() => {
            let (n, unit) = glued(w)?;
            (n, unit, rest)
        }
        // `every other monday`, `every other mon, fri`
        ["other", rest @ ..] if !rest.is_empty() => (Ok(2), "week", rest),
        _ => return parse_days(words, today).map(|d| d.map(|d| (1, d, false))),
    };
    let n = match n {
        Ok(n) => n,
        Err(e) => return Some(Err(e)),
    };
    if unit == "week" {
        // `every 2 weeks` alone is an interval (read before this).
        let rest = match rest {
            ["on", r @ ..] => r,
            r => r,
        };
        return match parse_days(rest, today)? {
            Ok(d @ (Days::Set(_) | Days::Weekdays | Days::Weekend)) => Some(Ok((n, d, true))),
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        };
    }
    // `every 6 months` with no day: the day of the month it is said on
    // (see [`Schedule::from_today`]); without a date, not read (as
    // `yearly` alone is not).
    if unit == "month" && n >= 2 && rest.iter().all(|w| matches!(*w, "on" | "the" | "of")) {
        return Some(Ok((n, Days::MonthDay(today?.day()), false)));
    }
    let days: Vec<&str> = std::iter::once(unit).chain(rest.iter().copied()).collect();
    Some(match parse_days(&days, today)? {
        Ok(d) => Ok((n, d, false)),
        // Quoted as said, not as `month …`.
        Err(RecurError::Time(WhenError::NoSuchTime(_))) => {
            Err(RecurError::Time(WhenError::NoSuchTime(words.join(" "))))
        }
        Err(e) => Err(e),
    })
}

/// A clock time at the start of `words` followed by the days of a rule
/// (`9am weekdays`, `9am on monday`, `10am every weekend`): how many words
/// the time takes, the time, and the days' words.
#[allow(clippy::type_complexity)]
pub(super) fn leading_clock<'a, 'b>(
    words: &'b [&'a str],
    today: Option<NaiveDate>,
) -> Result<Option<(usize, NaiveTime, &'b [&'a str])>, RecurError> {
    for k in [2, 1] {
        let (Some(clock), Some(rest)) = (words.get(..k), words.get(k..)) else {
            continue;
        };
        let rest = match rest {
            ["on" | "every", r @ ..] => r,
            r => r,
        };
        if rest.is_empty() || spaced_days(rest, today).is_none() {
            continue;
        }
        match when::clock_time(clock) {
            Some(Ok(t)) => return Ok(Some((k, t, rest))),
            Some(Err(e)) => return Err(e.into()),
            None => {}
        }
    }
    Ok(None)
}

/// The clock time at the end of `words`, if any, and the words before it.
#[allow(clippy::type_complexity)]
pub(super) fn trailing_clock<'a, 'b>(
    words: &'b [&'a str],
) -> Result<(&'b [&'a str], Option<NaiveTime>), RecurError> {
    let n = words.len();
    for k in [2, 1] {
        if n >= k {
            match when::clock_time(&words[n - k..]) {
                Some(Ok(t)) => return Ok((&words[..n - k], Some(t))),
                Some(Err(e)) => return Err(e.into()),
                None => {}
            }
        }
    }
    Ok((words, None))
}

fn month_number(w: &str) -> Option<u32> {
    let w = w.trim_end_matches(',');
    let full = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    full.iter()
        .position(|m| {
            *m == w || (w.len() >= 3 && m.starts_with(w) && (w.len() == 3 || w == "sept"))
        })
        .map(|i| i as u32 + 1)
}

/// `1`, `1st`, `22nd`, `31st` -> the number.
fn day_number(w: &str) -> Option<u32> {
    let w = w.trim_end_matches(',');
    let n = ["st", "nd", "rd", "th"]
        .iter()
        .find_map(|s| w.strip_suffix(s))
        .unwrap_or(w);
    if n.is_empty() || n.len() > 2 || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse().ok()
}

pub(super) fn full_day(d: Weekday) -> &'static str {
    match d {
        Weekday::Mon => "Monday",
        Weekday::Tue => "Tuesday",
        Weekday::Wed => "Wednesday",
        Weekday::Thu => "Thursday",
        Weekday::Fri => "Friday",
        Weekday::Sat => "Saturday",
        Weekday::Sun => "Sunday",
    }
}

pub(super) fn weekday_word(w: &str) -> Option<Weekday> {
    when::weekday(w).or_else(|| w.strip_suffix('s').and_then(when::weekday))
}

/// The days part of a calendar rule. None: not a days expression;
/// Some(Err): one that cannot happen (`feb 30`, the 32nd). `yearly` without
/// a date is `today`'s date every year (29 Feb: leap years, as `every year
/// feb 29`); without a `today` it is not read.
fn parse_days(words: &[&str], today: Option<NaiveDate>) -> Option<Result<Days, RecurError>> {
    let no_such = |w: &[&str]| Some(Err(RecurError::Time(WhenError::NoSuchTime(w.join(" ")))));
    match words {
        ["day" | "days" | "daily"] | ["every", "day"] => return Some(Ok(Days::Every)),
        ["weekday" | "weekdays"] | ["working", "day" | "days"] | ["work", "day" | "days"] => {
            return Some(Ok(Days::Weekdays));
        }
        ["weekend" | "weekends"] | ["weekend", "day" | "days"] => return Some(Ok(Days::Weekend)),
        _ => {}
    }
    if let [first, rest @ ..] = words
        && matches!(*first, "month" | "monthly" | "year" | "yearly" | "annually")
    {
        let mut rest: Vec<&str> = rest
            .iter()
            .copied()
            .filter(|w| !matches!(*w, "on" | "the" | "of"))
            .collect();
        if let Some(p) = rest.iter().position(|w| *w == "day")
            && p + 1 == rest.len()
        {
            rest.pop();
        }
        let monthly = first.starts_with("month");
        if monthly {
            return match rest.as_slice() {
                [] => Some(Ok(Days::MonthDay(1))),
                ["last"] => Some(Ok(Days::LastOfMonth)),
                [d] => match day_number(d)? {
                    n @ 1..=31 => Some(Ok(Days::MonthDay(n))),
                    _ => no_such(words),
                },
                _ => None,
            };
        }
        let (month, day) = match rest.as_slice() {
            [] => today.map(|d| (d.month(), d.day()))?,
            [a, b] => match (month_number(a), month_number(b)) {
                (Some(m), None) => (m, day_number(b)?),
                (None, Some(m)) => (m, day_number(a)?),
                _ => return None,
            },
            _ => return None,
        };
        let max = match month {
            2 => 29,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        if !(1..=max).contains(&day) {
            return no_such(words);
        }
        return Some(Ok(Days::YearDay { month, day }));
    }
    // Weekday lists: "mon,wed,fri", "mon, wed and fri", "mondays", "mon-fri".
    let mut set: Vec<Weekday> = Vec::new();
    let mut any = false;
    for w in words {
        for tok in w.split(',').filter(|t| !t.is_empty()) {
            if matches!(tok, "and" | "&" | "on") {
                continue;
            }
            if let Some((a, b)) = tok.split_once('-') {
                let (a, b) = (weekday_word(a)?, weekday_word(b)?);
                let mut d = a;
                loop {
                    set.push(d);
                    if d == b {
                        break;
                    }
                    d = d.succ();
                }
            } else {
                set.push(weekday_word(tok)?);
            }
            any = true;
        }
    }
    if !any {
        return None;
    }
    set.sort_by_key(|d| d.num_days_from_monday());
    set.dedup();
    Some(Ok(match set.len() {
        7 => Days::Every,
        5 if !set.contains(&Weekday::Sat) && !set.contains(&Weekday::Sun) => Days::Weekdays,
        2 if set == [Weekday::Sat, Weekday::Sun] => Days::Weekend,
        _ => Days::Set(set),
    }))
}
