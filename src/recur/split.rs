//! Where a rule ends and its message starts (`/every RULE TEXT`), the ends
//! said after the message, and what is asked about there.

use chrono::{DateTime, TimeZone};

use crate::when::{self, WhenError};

use super::days::{trailing_clock, weekday_word};
use super::errors::RecurError;
use super::parse::parse;
use super::{Rule, Schedule};

/// The longest run of leading words [`split_prefix`] tries as a rule
/// (`every mon, wed and fri at 8:30 am until dec 24 for 10 times` is 14).
const MAX_PREFIX_WORDS: usize = 16;

/// For `/every weekday 9am stand-up notes`: the longest leading run of words
/// that parses as a schedule, and the text after it. A longer prefix that was
/// recognised but refused (too often, ends before it starts) wins over a
/// shorter reading, as in `when::split_time_prefix`.
pub fn split_prefix<Tz: TimeZone>(
    input: &str,
    now: &DateTime<Tz>,
) -> Result<(Schedule, String), RecurError> {
    let input = input.trim_start();
    // `friday 6pm -- evening drinks`: the rule is what comes before the `--`.
    // A line break ends the rule: what follows it is always text.
    let line_end = when::first_line_end(input);
    if let Some((rule, text)) = when::split_at_dashes(input)
        && !rule.contains('\n')
    {
        match parse(rule, now) {
            Ok(_) if text.is_empty() => return Err(RecurError::NothingToSend),
            Ok(s) => return Ok((s, text.to_string())),
            Err(e) if e.is_specific() => return Err(e),
            Err(_) => {}
        }
    }
    let ends = prefix_ends(&input[..line_end]);
    let mut last_err = RecurError::Empty;
    for (i, &end) in ends.iter().enumerate().rev() {
        // `every mon 9am, …`: the comma ends the rule.
        let prefix = input[..end].trim_end_matches(',');
        match parse(prefix, now) {
            Ok(s) => {
                let rest = input[end..].trim();
                if rest.is_empty() {
                    return Err(RecurError::NothingToSend);
                }
                // Text that starts with more time (`every sunday 9pm night
                // check`, `every weekday 9am and 5pm x`) is asked about:
                // taken as text, the rule would fire at another time.
                // (A cron pattern or an interval takes no more time: what
                // follows is text; so is what follows a comma that ended
                // the rule, or a line break.)
                if matches!(
                    s.rule,
                    Rule::Calendar { .. } | Rule::Months { .. } | Rule::Weeks { .. }
                ) && !input[..end].ends_with(',')
                    && let Some(more) = when::time_in_text(input[end..line_end].trim())
                {
                    let rule = prefix.trim().to_string();
                    return Err(if more.another {
                        // As `/every` takes it: `every` is its own word.
                        let rule = match rule.get(..6) {
                            Some(e) if e.eq_ignore_ascii_case("every ") => rule[6..].trim().into(),
                            _ => rule,
                        };
                        let second = second_rule(&rule, &more.second);
                        RecurError::SecondSlot {
                            rule,
                            said: more.said,
                            second,
                        }
                    } else {
                        RecurError::MoreInText {
                            rule,
                            said: more.said,
                        }
                    });
                }
                // `/every 1h 30 minutes of reading`: the text may be
                // "30 minutes of reading", as with `/later`.
                if matches!(s.rule, Rule::Interval { .. })
                    && !input[..end].ends_with(',')
                    && !input[end..line_end].trim().is_empty()
                {
                    let interval = prefix.trim();
                    let interval = match interval.get(..6) {
                        Some(e) if e.eq_ignore_ascii_case("every ") => &interval[6..],
                        _ => interval,
                    };
                    if let Some(asked) = when::delay_in_two_styles(interval, "interval") {
                        return Err(RecurError::Time(asked));
                    }
                }
                // `/every 9am PST standup`: a rule follows local time.
                if !matches!(s.rule, Rule::Interval { .. } | Rule::Cron { .. })
                    && let Some(zone) = input[end..line_end].split_whitespace().next()
                    && when::zone_word(zone)
                {
                    return Err(RecurError::Time(WhenError::ZoneInRule(when::quoted(
                        &format!("{} {zone}", prefix.trim()),
                    ))));
                }
                // `until` right after a rule is its end, even one that
                // cannot be read: not the first word of the message.
                if rest
                    .split_whitespace()
                    .next()
                    .is_some_and(|w| w.eq_ignore_ascii_case("until"))
                    && let Some(&with_end) = ends.get(i + 2)
                    && let Err(e) = parse(&input[..with_end], now)
                {
                    return Err(e);
                }
                // Ends said after the message, where English puts them:
                // "gym for 5 times", "take pill for 2 weeks", "water plants
                // until fri" (not "for 10 minutes": that reads as part of a
                // message, as in "meditate for 10 minutes").
                let (text, said_after) = trailing_ends(rest, &s, now)?;
                if !said_after.is_empty() {
                    let ended = parse(&format!("{} {said_after}", &input[..end]), now)?;
                    return Ok((ended, text.to_string()));
                }
                return Ok((s, rest.to_string()));
            }
            Err(e) if e.is_specific() => return Err(e),
            Err(e) => last_err = e,
        }
    }
    Err(last_err)
}

/// The rule of a second time said after `rule` (`weekday at 9am` and
/// `5pm`): that time on the rule's days (`weekday 5pm`), or the second as
/// said when it names days of its own (`fri 5pm`).
fn second_rule(rule: &str, second: &str) -> String {
    let own = when::words_of(second);
    let names_days = own.iter().any(|w| {
        weekday_word(w).is_some()
            || matches!(
                w.as_str(),
                "day" | "daily" | "weekday" | "weekdays" | "weekend" | "weekends"
            )
    });
    if names_days {
        return second.to_string();
    }
    let typed: Vec<&str> = rule.split_whitespace().collect();
    let owned = when::words_of(rule);
    let words: Vec<&str> = owned.iter().map(String::as_str).collect();
    let Ok((mut days, _)) = trailing_clock(&words) else {
        return second.to_string();
    };
    if let [d @ .., "at"] = days {
        days = d;
    }
    match typed.get(..days.len()) {
        Some(d) if !d.is_empty() && words.len() == typed.len() => {
            format!("{} {second}", d.join(" "))
        }
        _ => second.to_string(),
    }
}

/// The ends of a series said after its message: `text for N times`,
/// `text for N days|weeks`, `text until DATE`, in any order, each at most
/// once and not already given before the message. Returns the text left (at
/// least one word) and the ends as the rule takes them (`for 2 weeks`), or
/// the whole of `rest` and nothing. An end date already past (`until
/// 2020-12-01`) is refused, as it is before the message: kept as text, it
/// made a series that never ends.
fn trailing_ends<'r, Tz: TimeZone>(
    rest: &'r str,
    given: &Schedule,
    now: &DateTime<Tz>,
) -> Result<(&'r str, String), RecurError> {
    let mut text = rest;
    let mut ends: Vec<&str> = Vec::new();
    // A span before the text (`for 2 weeks`) is an end date like `until`.
    let (mut count, mut until) = (given.count.is_some(), given.until.is_some());
    let mut span = until;
    'strip: loop {
        // Where each word of the text starts; the first word always stays.
        let starts: Vec<usize> = text
            .char_indices()
            .filter(|&(i, c)| {
                !c.is_whitespace() && (i == 0 || text[..i].ends_with(char::is_whitespace))
            })
            .map(|(i, _)| i)
            .collect();
        for &at in starts.iter().skip(1).rev() {
            let tail = &text[at..];
            let mut words = tail.split_whitespace();
            let keyword = words.next().unwrap_or_default().to_ascii_lowercase();
            let body: Vec<&str> = words.collect();
            let end = match (keyword.as_str(), body.as_slice()) {
                ("for", [n, t]) if !count && n.parse::<u32>().is_ok() && is_times_word(t) => {
                    count = true;
                    true
                }
                ("for", [_, unit]) if !span && is_day_or_week(unit) => {
                    span = when::parse_duration(&body.join(" ")).is_ok();
                    span
                }
                // A date, not a clock time: "study until 5pm" is text.
                ("until", [_, ..]) if !until => {
                    let expr = body.join(" ");
                    until = when::starts_with_date(&expr, now.date_naive())
                        && match when::parse_until(&expr, now) {
                            Ok(_) => true,
                            Err(e @ WhenError::Past(_)) => return Err(RecurError::Time(e)),
                            Err(_) => false,
                        };
                    until
                }
                _ => false,
            };
            if end {
                ends.push(tail.trim_end());
                text = text[..at].trim_end();
                continue 'strip;
            }
        }
        break;
    }
    ends.reverse();
    Ok((text, ends.join(" ")))
}

fn is_times_word(w: &str) -> bool {
    w.eq_ignore_ascii_case("times") || w.eq_ignore_ascii_case("time")
}

/// `for 2 weeks` after a message ends its series; `for 10 minutes` or
/// `for 2 hours` stays part of the message ("meditate for 10 minutes").
fn is_day_or_week(unit: &str) -> bool {
    matches!(
        unit.to_ascii_lowercase().as_str(),
        "d" | "day" | "days" | "w" | "wk" | "wks" | "week" | "weeks"
    )
}

/// Byte offsets after each of the first words, a quoted cron pattern counting as one.
fn prefix_ends(input: &str) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for (i, c) in input.char_indices() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            continue;
        }
        if c == '"' || c == '\'' {
            quote = Some(c);
            in_word = true;
        } else if c.is_whitespace() {
            if in_word {
                ends.push(i);
                if ends.len() == MAX_PREFIX_WORDS {
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
