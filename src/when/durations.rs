//! Delays and spans of time: `1h30m`, `half an hour`, and ages in months
//! and years for `--older-than`.

use chrono::Duration;

use super::errors::{PErr, WhenError, quoted};
use super::words::words_of;

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

/// `1000y`, `in 2 years`, `3 months`, `6mo`.
pub(super) fn says_years_or_months(expr: &str) -> bool {
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
pub(super) fn duration_ms(words: &[&str], calendar: bool) -> Result<i64, PErr> {
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
pub(super) fn hours_then_minutes(word: &str) -> bool {
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
