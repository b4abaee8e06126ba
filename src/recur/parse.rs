//! Reading a rule and its ends (`until`, `for N times`) from its words.

use chrono::{DateTime, NaiveDate, NaiveTime, TimeZone, Timelike, Utc, Weekday};

use crate::when::{self, WhenError};

use super::cron::{cron_parser, cron_rule, split_cron};
use super::days::{full_day, leading_clock, spaced_days, trailing_clock, weekday_word};
use super::errors::RecurError;
use super::{Days, MIN_INTERVAL_MS, Rule, Schedule};

/// Parse a whole expression (rule and optional end) at `now`.
pub fn parse<Tz: TimeZone>(expr: &str, now: &DateTime<Tz>) -> Result<Schedule, RecurError> {
    let trimmed = expr.trim();
    read(trimmed, now).map_err(|e| e.quoting_as_typed(trimmed))
}

/// [`parse`] of a trimmed expression, its errors quoting its lower-cased words.
fn read<Tz: TimeZone>(trimmed: &str, now: &DateTime<Tz>) -> Result<Schedule, RecurError> {
    if trimmed.is_empty() {
        return Err(RecurError::Empty);
    }
    let (rule_text, tail) = split_cron(trimmed);
    let owned = when::words_of(tail);
    let words: Vec<&str> = owned.iter().map(String::as_str).collect();
    let (rule_words, ends) = split_ends(&words);
    let rule = match rule_text {
        Some(pattern) => cron_rule(pattern)?,
        None => Rule::parse_words(rule_words, trimmed, Some(now.date_naive()))?,
    };
    if rule_text.is_some() && !rule_words.is_empty() {
        return Err(RecurError::Unrecognised(when::quoted(trimmed)));
    }
    // A rule that cannot be read without today's date took its day from
    // it (`every 6 months`, `every 2 years`; `every 6 months on the 7th`
    // names its own).
    let from_today = matches!(rule, Rule::Months { .. })
        && Rule::parse_words(rule_words, trimmed, None).is_err();
    let mut schedule = Schedule {
        rule,
        until: None,
        count: None,
        from_today,
    };
    for end in ends {
        match end {
            End::Until(w) => {
                schedule.until = Some(when::parse_until(&w.join(" "), now)?.timestamp_millis())
            }
            End::Times(n) => schedule.count = Some(n),
            End::For(w) => {
                let d = when::parse_duration(&w.join(" "))?;
                let end = now.with_timezone(&Utc).timestamp_millis() + d.num_milliseconds();
                schedule.until = Some(schedule.until.map_or(end, |u| u.min(end)));
            }
        }
    }
    schedule.validate(now)?;
    Ok(schedule)
}

/// [`RecurError::NightAfter`] for `said` (`every sunday night 1am`),
/// whose days are `days` and time `t`: the same rule said on the day
/// after (`every monday 01:00`), in the user's words where it can be.
fn night_after(said: &[&str], days: &[&str], t: NaiveTime) -> RecurError {
    // A day's name said short (`mon`) stays short (`tue`).
    let next_of = |d: Weekday, short: bool| match short {
        true => d.succ().to_string().to_ascii_lowercase(),
        false => full_day(d.succ()).to_ascii_lowercase(),
    };
    let mut out: Vec<String> = Vec::new();
    let mut shifted = true;
    for w in days.iter().filter(|w| !matches!(**w, "at" | "on")) {
        let word = match *w {
            "weekday" | "weekdays" => "tue-sat".to_string(),
            "weekend" | "weekends" => "sun,mon".to_string(),
            w if w.bytes().any(|b| b.is_ascii_alphabetic()) => {
                let toks: Option<Vec<String>> = w
                    .split(',')
                    .map(|tok| match tok.split_once('-') {
                        Some((a, b)) => Some(format!(
                            "{}-{}",
                            next_of(weekday_word(a)?, a.len() <= 4),
                            next_of(weekday_word(b)?, b.len() <= 4)
                        )),
                        None if tok.is_empty() => Some(String::new()),
                        None => match weekday_word(tok) {
                            Some(d) => Some(next_of(d, tok.len() <= 4)),
                            None if matches!(tok, "and" | "&" | "other") => Some(tok.to_string()),
                            None => None,
                        },
                    })
                    .collect();
                match toks {
                    Some(t) => t.join(","),
                    None => {
                        shifted = false;
                        w.to_string()
                    }
                }
            }
            w => w.to_string(),
        };
        out.push(word);
    }
    let instead = match (shifted && !out.is_empty(), t == NaiveTime::MIN) {
        (true, _) => format!("every {} {}", out.join(" "), t.format("%H:%M")),
        // `every month on the 1st midnight`.
        (false, true) => format!(
            "every {} at 00:00 for its start, or the day after at 00:00",
            days.join(" ")
        ),
        (false, false) => "the day after, at that time".to_string(),
    };
    RecurError::NightAfter {
        said: when::quoted(&said.join(" ")),
        instead,
    }
}

enum End<'a> {
    Until(Vec<&'a str>),
    Times(u32),
    For(Vec<&'a str>),
}

/// Split `… until fri for 3 times` into the rule's words and its ends.
fn split_ends<'w, 'a>(words: &'w [&'a str]) -> (&'w [&'a str], Vec<End<'a>>) {
    let is_times = |w: &str| matches!(w, "times" | "time" | "occurrences" | "runs");
    let is_count = |i: usize| {
        words.get(i).is_some_and(|w| w.parse::<u32>().is_ok())
            && words.get(i + 1).is_some_and(|w| is_times(w))
    };
    let starts_end = |i: usize| words[i] == "until" || words[i] == "for" || is_count(i);
    let first = (0..words.len()).find(|&i| starts_end(i));
    let Some(first) = first else {
        return (words, Vec::new());
    };
    let mut ends = Vec::new();
    let mut i = first;
    while i < words.len() {
        let kw = words[i];
        let start = if kw == "until" || kw == "for" {
            i + 1
        } else {
            i
        };
        let mut j = start + 1;
        while j < words.len() && !(words[j] == "until" || words[j] == "for") {
            j += 1;
        }
        let body = &words[start.min(words.len())..j.min(words.len())];
        let end = match (kw, body) {
            ("until", b) => End::Until(b.to_vec()),
            (_, [n, t]) if is_times(t) => match n.parse::<u32>() {
                Ok(n) => End::Times(n),
                Err(_) => End::For(body.to_vec()),
            },
            (_, b) => End::For(b.to_vec()),
        };
        ends.push(end);
        i = j;
    }
    (&words[..first], ends)
}

/// How many parsed stored rules [`Rule::stored`] keeps.
const STORED_RULES_CACHED: usize = 4096;

impl Rule {
    /// A stored rule expression, parsed once per process: building a cron
    /// pattern costs ~20 µs, evaluating it under 1 µs, and the scheduler reads
    /// every due series' rule on each pass.
    pub fn stored(expr: &str) -> Result<std::sync::Arc<Rule>, RecurError> {
        use std::collections::HashMap;
        use std::sync::{Arc, Mutex, OnceLock};
        static CACHE: OnceLock<Mutex<HashMap<String, Arc<Rule>>>> = OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        let lock = || cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(r) = lock().get(expr) {
            return Ok(r.clone());
        }
        let rule = Arc::new(Rule::parse(expr)?);
        let mut map = lock();
        if map.len() >= STORED_RULES_CACHED {
            map.clear();
        }
        map.insert(expr.to_string(), rule.clone());
        Ok(rule)
    }

    /// A rule alone (no `until` / `for`), e.g. the stored [`Rule::expression`].
    pub fn parse(expr: &str) -> Result<Rule, RecurError> {
        let trimmed = expr.trim();
        Rule::read(trimmed).map_err(|e| e.quoting_as_typed(trimmed))
    }

    /// [`Rule::parse`] of a trimmed expression, its errors quoting its
    /// lower-cased words.
    fn read(trimmed: &str) -> Result<Rule, RecurError> {
        if trimmed.is_empty() {
            return Err(RecurError::Empty);
        }
        if let (Some(pattern), tail) = split_cron(trimmed) {
            if !tail.trim().is_empty() {
                return Err(RecurError::Unrecognised(when::quoted(trimmed)));
            }
            return cron_rule(pattern);
        }
        let owned = when::words_of(trimmed);
        let words: Vec<&str> = owned.iter().map(String::as_str).collect();
        // A stored rule names its date: no `today` for `yearly` alone.
        Rule::parse_words(&words, trimmed, None)
    }

    /// `today` (the user's) is the date of `yearly` said without one.
    fn parse_words(
        words: &[&str],
        shown: &str,
        today: Option<NaiveDate>,
    ) -> Result<Rule, RecurError> {
        let unrecognised = || RecurError::Unrecognised(when::quoted(shown));
        let said = words;
        let mut words = words;
        if let ["every", rest @ ..] = words {
            words = rest;
        }
        if words.is_empty() {
            return Err(unrecognised());
        }
        // `every second monday`: not a unit of time, and not one rule.
        if let ["second" | "2nd", day, ..] = words
            && let Some(day) = weekday_word(day)
        {
            let upto = said.len() - words.len() + 2;
            return Err(RecurError::SecondWeekday {
                said: when::quoted(&said[..upto].join(" ")),
                day,
            });
        }
        // Intervals: "2h", "30 minutes", "1h30m", "hour", "hourly".
        let joined = words.join(" ");
        let bare_unit = match words {
            ["hourly"] | ["hour"] => Some(3_600_000),
            ["minute"] => Some(60_000),
            ["second"] => Some(1_000),
            ["week"] | ["weekly"] => Some(604_800_000),
            _ => None,
        };
        let interval = match bare_unit {
            Some(ms) => Some(ms),
            None => match when::parse_duration(&joined) {
                Ok(d) => Some(d.num_milliseconds()),
                // `every 0m` is an interval, refused as `/later 0m` is (it
                // read as no rule at all).
                Err(e @ WhenError::NotPositive) => return Err(RecurError::Time(e)),
                Err(_) => None,
            },
        };
        if let Some(ms) = interval {
            // Whole seconds: what the description can say exactly.
            let ms = ms / 1000 * 1000;
            if ms < MIN_INTERVAL_MS {
                return Err(RecurError::TooOften);
            }
            return Ok(Rule::Interval { every_ms: ms });
        }

        // Calendar rules: DAYS [at] [TIME], where a part of the day may
        // stand for the time or place its hour (`every sunday night`,
        // `every friday evening 6`), as with `/at`.
        let found = when::find_day_part(words);
        let part_words: Vec<&str>;
        let part = match found {
            Some(f) if f.today => return Err(unrecognised()),
            Some(f) => {
                part_words = f.rest;
                words = &part_words;
                Some((f.part, f.said))
            }
            None => None,
        };
        let (mut day_words, mut time) = trailing_clock(words)?;
        let mut clock_words = &words[day_words.len()..];
        // The time before the days (`every 9am weekdays`, `every 9am on
        // monday`, `every 10am mon-fri`): those days at that time, as
        // when said the other way round.
        if time.is_none()
            && spaced_days(words, today).is_none()
            && let Some((k, t, days_said)) = leading_clock(words, today)?
        {
            time = Some(t);
            clock_words = &words[..k];
            day_words = days_said;
        }
        if let (Some((p, part_said)), Some(t)) = (&part, time) {
            let said_here = format!("{part_said} {}", clock_words.join(" "));
            let t = p
                .place(t, clock_words)
                .ok_or_else(|| RecurError::Time(p.refusal(&said_here)))?;
            if p.admits(t) == Some(true) {
                return Err(night_after(said, day_words, t));
            }
            time = Some(t);
        }
        if let [d @ .., "at"] = day_words {
            day_words = d;
        }
        let mut days = spaced_days(day_words, today);
        // `every friday midnight` is the midnight that ends Friday, which
        // is Saturday's 00:00: asked, as `every friday night 12` is.
        if clock_words == ["midnight"]
            && !day_words.is_empty()
            && matches!(&days, Some(Ok((_, d, _))) if *d != Days::Every)
        {
            return Err(night_after(said, day_words, NaiveTime::MIN));
        }
        // No days: every day (`every 5pm`, `every evening`).
        if day_words.is_empty() && (time.is_some() || part.is_some()) {
            days = Some(Ok((1, Days::Every, false)));
        }
        // A bare hour after the days (`every mon 21`, `daily at 21`), read
        // as by `/at tomorrow 21`: 0 or 13 to 23 is that hour, 1 to 12 is
        // asked about. Only when the days do not read the number
        // themselves (`every month 21` is the 21st).
        if days.is_none()
            && time.is_none()
            && let [before @ .., last] = day_words
            && let Some(hour) = when::hour_number(last)
        {
            let mut before = before;
            if let [d @ .., "at"] = before {
                before = d;
            }
            let read = match spaced_days(before, today) {
                None if before.is_empty() => Some(Ok((1, Days::Every, false))),
                r => r,
            };
            if let Some(read) = read {
                let read = read?;
                if let Some((p, part_said)) = &part {
                    let said_here = format!("{part_said} {last}");
                    let t = p
                        .hour(hour)
                        .ok_or_else(|| RecurError::Time(p.refusal(&said_here)))?;
                    if p.admits(t) == Some(true) {
                        return Err(night_after(said, before, t));
                    }
                    return Rule::spaced(read, t);
                }
                if (1..=12).contains(&hour) {
                    // The words as said, `every` included.
                    let after = &said[..said.len() - (words.len() - before.len())];
                    return Err(RecurError::Time(WhenError::AmbiguousHourAfter {
                        hour,
                        after: when::quoted(&after.join(" ")),
                    }));
                }
                time = NaiveTime::from_hms_opt(hour, 0, 0);
                days = Some(Ok(read));
            }
        }
        let time = time.unwrap_or_else(|| match &part {
            Some((p, _)) => p.time(),
            None => NaiveTime::from_hms_opt(when::DEFAULT_HOUR, 0, 0).unwrap_or(NaiveTime::MIN),
        });
        let read = days.ok_or_else(unrecognised)??;
        Rule::spaced(read, time)
    }

    /// `every` months or years apart (as `days` says), or weeks when
    /// `weeks`, 1 being the calendar rule of `days` itself.
    fn spaced(
        (every, days, weeks): (u32, Days, bool),
        time: NaiveTime,
    ) -> Result<Rule, RecurError> {
        let months = match (every, &days) {
            (0, _) => return Err(RecurError::Time(WhenError::NotPositive)),
            (1, _) => return Rule::calendar(days, time),
            (weeks_apart, _) if weeks => {
                return Ok(Rule::Weeks {
                    weeks: weeks_apart,
                    days,
                    time,
                });
            }
            (n, Days::YearDay { .. }) => n
                .checked_mul(12)
                .ok_or(RecurError::Time(WhenError::OutOfRange))?,
            (n, _) => n,
        };
        Ok(Rule::Months { months, days, time })
    }

    /// A calendar rule and its cron pattern.
    pub fn calendar(days: Days, time: NaiveTime) -> Result<Rule, RecurError> {
        let (dom, month, dow) = match &days {
            Days::Every => ("*".to_string(), "*".to_string(), "*".to_string()),
            Days::Weekdays => ("*".into(), "*".into(), "1-5".into()),
            Days::Weekend => ("*".into(), "*".into(), "0,6".into()),
            Days::Set(set) => (
                "*".into(),
                "*".into(),
                set.iter()
                    .map(|d| d.num_days_from_sunday().to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            Days::MonthDay(d) => (d.to_string(), "*".into(), "*".into()),
            Days::LastOfMonth => ("L".into(), "*".into(), "*".into()),
            Days::YearDay { month, day } => (day.to_string(), month.to_string(), "*".into()),
        };
        let pattern = format!(
            "{} {} {} {dom} {month} {dow}",
            time.second(),
            time.minute(),
            time.hour()
        );
        let cron = cron_parser(true)
            .parse(&pattern)
            .map_err(|e| RecurError::BadCron(e.to_string()))?;
        Ok(Rule::Calendar { days, time, cron })
    }
}
