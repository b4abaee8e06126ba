//! Clock times (`9am`, `14:30`, `noon`, `17:00 utc`) and hours said alone.

use chrono::{FixedOffset, NaiveTime};

use super::errors::{PErr, WhenError, quoted};

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

/// `9`, `21`, `00`: one or two digits that could be an hour of the day.
pub(crate) fn hour_number(w: &str) -> Option<u32> {
    let digits = (1..=2).contains(&w.len()) && w.bytes().all(|b| b.is_ascii_digit());
    digits.then(|| w.parse().ok()).flatten().filter(|h| *h < 24)
}

/// The time is a number alone (`21`, `at 9`): the hour, if it can be one.
pub(super) fn bare_hour(words: &[&str]) -> Option<u32> {
    match words {
        [w] | ["at", w] => hour_number(w),
        _ => None,
    }
}

// Hand-written because interim turns `12pm` after a date into the next day's
// midnight and `12am` into noon, does not range-check hours after a date
// (`tomorrow 100pm`), panics on upper-case `AM`/`PM` after a date, and has
// neither `noon` nor a safe `midnight`.

#[derive(Debug, Clone, Copy)]
pub(super) struct Clock {
    pub(super) time: NaiveTime,
    /// From a `z` / `utc` / `+02:00` suffix: the wall time is in that
    /// offset instead of the user's zone.
    pub(super) offset: Option<FixedOffset>,
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

pub(super) fn parse_clock(words: &[&str]) -> Result<Clock, PErr> {
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
pub(super) fn parse_offset(s: &str) -> Option<Option<FixedOffset>> {
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

/// `8pm`, `20:00`, `8`, `pm`: a word that ends a clock time.
pub(super) fn clock_like(w: &str) -> bool {
    parse_clock(&[w]).is_ok() || hour_number(w).is_some() || meridiem(w).is_some()
}
