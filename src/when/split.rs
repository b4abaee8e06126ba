//! Where a time ends and its text starts (`/at TIME TEXT`), and what is
//! asked about there rather than guessed.

use chrono::{DateTime, TimeZone, Utc};

use super::clock::{clock_like, parse_clock};
use super::dates::{days_in, weekday};
use super::day_part::DayPart;
use super::durations::duration_ms;
use super::errors::{WhenError, is_specific, quoted};
use super::parse::{Mode, parse_time};
use super::words::{words_of, zone_word};

/// How many leading words [`split_time_prefix`] tries as a time expression.
/// The longest accepted form is about five words (`1 hour and 30 minutes`,
/// `next monday at 9 am`).
const MAX_PREFIX_WORDS: usize = 6;

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

/// Byte offsets just after each of the first `max` whitespace-separated words.
pub(super) fn word_ends(input: &str, max: usize) -> Vec<usize> {
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
