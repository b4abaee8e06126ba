//! Repeating schedules: `every weekday 9am`, `every 2h`, `cron "0 9 * * 1-5"`.
//!
//! A *rule* says when a series fires; a [`Schedule`] is a rule plus an
//! optional end (`until DATE`, `for N times`, `for 2 weeks`). Parsing is pure:
//! the caller passes `now` (its time zone is the user's), so tests run at a
//! fixed instant in any zone.
//!
//! # Front-end API (composer `/every`, F2 "edit rule", `tock send --every`)
//!
//! ```text
//! recur::parse(expr, &now)            -> Result<Schedule, RecurError>   // whole expression
//! recur::split_prefix(input, &now)    -> Result<(Schedule, String), _>  // "/every EXPR TEXT"
//! schedule.describe(&now)             -> "every weekday at 09:00, until Thu 24 Dec 23:59"
//! schedule.next_occurrences(&now, 3)  -> Vec<DateTime<Utc>>
//! schedule.preview(&now, 3)           -> "next Mon 1 Dec 09:00, then Tue 09:00, Wed 09:00"
//! RecurError: Display is one line, ready for a status bar.
//! ```
//!
//! The leading word `every` is optional (`weekday 9am` = `every weekday 9am`).
//! Understood (case-insensitive): `every day at 9am`, `daily 18:00`,
//! `every weekday 9am`, `every weekend 10:00`, `every monday 10:00`,
//! `every mon,wed,fri 8:30`, `every mon-fri 9am`, `every 2h`,
//! `every 30 minutes`, `hourly`, `every month on the 1st 9am`,
//! `every month on the last day 18:00`, `every year dec 24 18:00`,
//! `yearly 18:00` / `annually` / `every year` (the date it is said on),
//! `every 3 months on the 15th 9am`, `every 6 months` (the day of the
//! month it is said on), `every other month`, `every 2 years` (the date it is
//! said on, as `yearly`), `every 2 years dec 24 18:00`, and
//! `cron "0 9 * * 1-5"` (five fields, quotes optional), each optionally
//! followed by `until DATE` (a date alone means the end of that day) and
//! `for N times` or `for DURATION`. A rule without a clock time fires at 09:00.
//! Parts of the day read as with `/at` (`every sunday night` at 21:00,
//! `every friday evening 6` at 18:00; see `when::DayPart`); a clock time
//! or part of the day without days is every day (`every 5pm`, `every
//! evening`); `every 2 weeks on monday 9am` and `every other monday` fire
//! every N weeks on those days, counted from the first; `every second
//! monday` (every other, or the 2nd of the month?) is asked about.
//!
//! # Semantics
//!
//! * Wall-clock rules (days, weekdays, months, years, cron) follow local time
//!   across DST: 9am stays 9am. A time that does not exist that day (02:30
//!   when clocks jump 02:00 -> 03:00) fires once at the first instant after
//!   the gap (03:00); a time that happens twice (01:30 when clocks go back)
//!   fires once, at the first. These are the rules of the Open Cron Pattern
//!   Specification, which `croner` implements; calendar rules are translated
//!   to a cron pattern so that both kinds share one, tested, evaluator.
//! * `every N months` / `every N years` (N of 2 or more) are wall-clock
//!   rules counted in calendar months from the first occurrence (the next
//!   date the rule names, kept as the series' anchor): the day of the month
//!   is kept, and a month without it (the 31st in April, the 29th to 31st
//!   in February) takes its last day — unlike `every month on the 31st`,
//!   which skips such months, since skipping would leave `every 6 months
//!   on the 31st` silent for a year. 29 Feb every N years fires in the
//!   series' leap years only, as `yearly` does. They are evaluated here
//!   rather than by croner (cron has no "every N months from this one"),
//!   with croner's rules for a time in a gap or a fold; `every 1 month` /
//!   `every 1 year` are the monthly and yearly rules. With no day given,
//!   `every N months` is the day of the month it is said on (its last day
//!   in a month without it, as above), counted from the month it is said
//!   in: today while its time is still ahead, else N months on (`every 6
//!   months 9am` said on 7 Dec at 10:00 is 7 Jun, then 7 Dec), as `every
//!   year` is its date next year once today's has gone; `every 2 years`
//!   with no date likewise is today while ahead, else two years on.
//!   (`every month` alone stays the 1st; with a day named, `every 6
//!   months on the 7th`, the first is the next 7th.) The rule is stored with its day written
//!   out (`every 6 months on the 7th at 09:00`) and its first occurrence
//!   as its anchor, so a stored series keeps its months.
//! * Interval rules (`every 2h`) are exact elapsed time from the first
//!   occurrence (one interval after the series is created).
//! * Refused with a one-line reason: a rule that never fires, one that fires
//!   more often than once a minute, one that ends before it starts.
//!
//! # Why not a natural-language crate
//!
//! The time-of-day and date words are `when.rs`'s (hand-written there for
//! reasons listed in its docs), so `/every … 9am` reads exactly like
//! `/at 9am`. The small rule grammar on top is a table of word shapes; the
//! evaluation, the hard part, is `croner`'s.

use chrono::{
    DateTime, Datelike, FixedOffset, Local, LocalResult, NaiveDate, NaiveDateTime, NaiveTime,
    Offset, TimeZone, Timelike, Utc, Weekday,
};
use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};

use crate::when::{self, WhenError};

/// The shortest interval accepted.
pub const MIN_INTERVAL_MS: i64 = 60_000;

/// The longest run of leading words [`split_prefix`] tries as a rule
/// (`every mon, wed and fri at 8:30 am until dec 24 for 10 times` is 14).
const MAX_PREFIX_WORDS: usize = 16;

/// After this many missed occurrences, counting stops and jumps to the latest
/// (a minutely rule after a year away would otherwise take seconds).
const CATCH_UP_SCAN: u64 = 100_000;

/// Why an expression was refused. Every message is one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecurError {
    #[error("empty rule — try every day at 9am, every weekday 9am, every 2h, cron \"0 9 * * 1-5\"")]
    Empty,
    #[error(
        "can't read {0:?} as a repeating rule — try every day at 9am, every mon,wed,fri 8:30, every 2h, every month on the 1st 9am, cron \"0 9 * * 1-5\""
    )]
    Unrecognised(String),
    #[error("fires more often than once a minute (the shortest interval is 1 minute)")]
    TooOften,
    #[error("never fires: {0}")]
    NeverFires(String),
    #[error("ends before it starts: the first occurrence would be {first}, after the end ({end})")]
    EndsBeforeStart { first: String, end: String },
    #[error("cron {0}")]
    BadCron(String),
    // Transparent: shown once, not again as its own cause (`{:#}`).
    #[error(transparent)]
    Time(#[from] WhenError),
    #[error("nothing to send after the rule")]
    NothingToSend,
    /// The text after a rule starts with what reads as more of it
    /// (`/every friday 6pm evening drinks`): the rule and those words.
    #[error(
        "{said:?} after {rule:?} looks like more of the rule — say it all before the text, or write \"{rule} -- {said} …\" to send it as text"
    )]
    MoreInText { rule: String, said: String },
    /// A second time after the rule's (`every weekday at 9am and 5pm`,
    /// `every mon 9am, fri 5pm`): the rule, the words of the second, and
    /// the second as a rule of its own.
    #[error(
        "{said:?} after {rule:?}: one time per rule — make two, e.g. /every {rule} … and /every {second} …, or write \"{rule} -- {said} …\" to send it as text"
    )]
    SecondSlot {
        rule: String,
        said: String,
        second: String,
    },
    /// `every second monday`: every other Monday, or the 2nd of the month?
    #[error("{}", second_weekday_message(said, *day))]
    SecondWeekday { said: String, day: Weekday },
    /// `every sunday night 1am`: the small hours after a day are the next
    /// day's, which a rule names.
    /// Carries the rule as said and the same rule on the day after.
    #[error("{said:?} falls on the day after the one named — name that day: {instead}")]
    NightAfter { said: String, instead: String },
}

/// `"every second monday" could be every other Monday or the 2nd Monday
/// of each month — …`: both readings, and how to say each.
fn second_weekday_message(said: &str, day: Weekday) -> String {
    format!(
        "{said:?} could be every other {d} or the 2nd {d} of each month — say every other {w}, or cron \"0 9 * * {n}#2\" for the 2nd",
        d = full_day(day),
        w = full_day(day).to_ascii_lowercase(),
        n = day.num_days_from_sunday()
    )
}

impl RecurError {
    /// The error with the words it quotes as they were typed in `expr`
    /// (see [`WhenError::quoting_as_typed`]).
    fn quoting_as_typed(self, expr: &str) -> RecurError {
        match self {
            RecurError::Time(e) => RecurError::Time(e.quoting_as_typed(expr)),
            RecurError::SecondWeekday { said, day } => RecurError::SecondWeekday {
                said: when::as_typed(expr, &said),
                day,
            },
            RecurError::NightAfter { said, instead } => RecurError::NightAfter {
                said: when::as_typed(expr, &said),
                instead,
            },
            other => other,
        }
    }

    /// "Recognised but refused" (as opposed to "not a rule at all").
    fn is_specific(&self) -> bool {
        !matches!(
            self,
            RecurError::Empty
                | RecurError::Unrecognised(_)
                | RecurError::Time(
                    WhenError::Empty | WhenError::Unrecognised(_) | WhenError::NotADuration(_)
                )
        )
    }
}

/// Which days a calendar rule fires on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Days {
    Every,
    Weekdays,
    Weekend,
    /// Sorted from Monday, no duplicates.
    Set(Vec<Weekday>),
    /// Day of the month, 1..=31; months without it are skipped.
    MonthDay(u32),
    LastOfMonth,
    /// Month 1..=12 and day; 29 Feb fires in leap years only.
    YearDay {
        month: u32,
        day: u32,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum Rule {
    /// Exact elapsed time between occurrences.
    Interval { every_ms: i64 },
    /// Days at a local time of day, evaluated through the equivalent cron pattern.
    Calendar {
        days: Days,
        time: NaiveTime,
        cron: Cron,
    },
    /// A five-field cron pattern as the user wrote it.
    Cron { pattern: String, cron: Cron },
    /// Every `months` calendar months (2 or more; a multiple of 12, for
    /// years, with [`Days::YearDay`]) at a local time of day, counted from
    /// the series' first occurrence (its anchor). `days` is a
    /// [`Days::MonthDay`], where a month without that day takes its last
    /// day, [`Days::LastOfMonth`], or a [`Days::YearDay`], where 29 Feb
    /// fires in leap years only (as `yearly` does).
    Months {
        months: u32,
        days: Days,
        time: NaiveTime,
    },
    /// Every `weeks` weeks (2 or more) on some days of the week
    /// ([`Days::Set`], [`Days::Weekdays`] or [`Days::Weekend`]) at a local
    /// time of day, counted in weeks (Monday to Sunday) from the week of
    /// the series' first occurrence (its anchor): `every other monday`.
    Weeks {
        weeks: u32,
        days: Days,
        time: NaiveTime,
    },
}

/// A rule and where it ends.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    pub rule: Rule,
    /// No occurrence after this instant (UTC epoch ms).
    pub until: Option<i64>,
    /// At most this many occurrences.
    pub count: Option<u32>,
    /// The rule's day is the one it was said on (`every 6 months`, `every
    /// 2 years`, no day given): its months are counted from the month it
    /// was said in, so the first is today's while its time is ahead, else
    /// N months (years) on — not next month's (next year's) — as `every
    /// year` is. Not stored: a series keeps its
    /// first occurrence as its anchor, and its rule names the day.
    pub from_today: bool,
}

/// The time zone wall-clock rules are evaluated in.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Zone {
    /// The process's local zone (`TZ`, `/etc/localtime`).
    #[default]
    Local,
    Utc,
    Named(chrono_tz::Tz),
}

/// The process's local zone: chrono's `Local` with the two instants of a
/// time that happens twice given earliest first. `Local` gives them latest
/// first (chrono issue 1625) and croner takes the first it is given as the
/// earlier, so `every day at 2:30` under TZ=Europe/Berlin was due at the
/// second 02:30 of the night the clocks go back, an hour late.
#[derive(Clone, Copy, Debug)]
pub struct SystemZone;

impl SystemZone {
    /// A fold's offsets earliest instant first: the larger offset is the
    /// earlier instant of the same wall-clock time.
    fn ordered(r: LocalResult<FixedOffset>) -> LocalResult<FixedOffset> {
        match r {
            LocalResult::Ambiguous(a, b) if a.local_minus_utc() < b.local_minus_utc() => {
                LocalResult::Ambiguous(b, a)
            }
            other => other,
        }
    }
}

impl TimeZone for SystemZone {
    type Offset = FixedOffset;

    fn from_offset(_: &FixedOffset) -> Self {
        SystemZone
    }

    fn offset_from_local_date(&self, local: &NaiveDate) -> LocalResult<FixedOffset> {
        self.offset_from_local_datetime(&local.and_time(NaiveTime::MIN))
    }

    fn offset_from_local_datetime(&self, local: &NaiveDateTime) -> LocalResult<FixedOffset> {
        Self::ordered(Local.offset_from_local_datetime(local))
    }

    fn offset_from_utc_date(&self, utc: &NaiveDate) -> FixedOffset {
        Local.offset_from_utc_date(utc)
    }

    fn offset_from_utc_datetime(&self, utc: &NaiveDateTime) -> FixedOffset {
        Local.offset_from_utc_datetime(utc)
    }
}

/// Run `$body` with `$tz` bound to the zone's `TimeZone` value.
#[macro_export]
macro_rules! in_zone {
    ($zone:expr, $tz:ident => $body:expr) => {
        match $zone {
            $crate::recur::Zone::Local => {
                let $tz = &$crate::recur::SystemZone;
                $body
            }
            $crate::recur::Zone::Utc => {
                let $tz = &chrono::Utc;
                $body
            }
            $crate::recur::Zone::Named(z) => {
                let $tz = z;
                $body
            }
        }
    };
}

impl Zone {
    /// The zone's IANA name, kept with a series so that its times stay where
    /// the user said them. The local zone is `TZ`'s when that names one, else
    /// the system's; None when it cannot be named (a POSIX `TZ` string).
    pub fn name(&self) -> Option<String> {
        match self {
            Zone::Utc => Some("UTC".into()),
            Zone::Named(tz) => Some(tz.name().to_string()),
            Zone::Local => {
                let named = |s: &str| {
                    s.parse::<chrono_tz::Tz>()
                        .ok()
                        .map(|t| t.name().to_string())
                };
                match std::env::var("TZ") {
                    Ok(tz) if !tz.is_empty() => named(tz.trim_start_matches(':')),
                    _ => iana_time_zone::get_timezone().ok().and_then(|z| named(&z)),
                }
            }
        }
    }

    /// The zone an IANA name stands for; None for a name this build does not know.
    pub fn named(name: &str) -> Option<Zone> {
        match name {
            "UTC" => Some(Zone::Utc),
            _ => name.parse::<chrono_tz::Tz>().ok().map(Zone::Named),
        }
    }

    /// The instant `ms` in this zone, formatted like the `/at` preview (`Mon 30 Nov 09:00`).
    pub fn absolute(&self, ms: i64, now_ms: i64) -> String {
        let at = utc(ms);
        in_zone!(self, tz => when::absolute(at, &utc(now_ms).with_timezone(tz)))
    }

    /// The time of day `ms` is at here, to the second (`14:02:09`): for a
    /// line that stays true once read, where a countdown would not.
    pub fn time_of_day(&self, ms: i64) -> String {
        in_zone!(self, tz => utc(ms).with_timezone(tz).format("%H:%M:%S").to_string())
    }
}

fn utc(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

// --- parsing ------------------------------------------------------------------

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

/// `cron "0 9 * * 1-5" until …` -> (Some(pattern), rest); anything else -> (None, all).
fn split_cron(s: &str) -> (Option<&str>, &str) {
    let Some(rest) = s
        .get(..4)
        .filter(|w| w.eq_ignore_ascii_case("cron"))
        .map(|_| &s[4..])
        .filter(|r| r.starts_with(char::is_whitespace))
    else {
        return (None, s);
    };
    let rest = rest.trim_start();
    if let Some(q) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') {
        return match rest[1..].find(q) {
            Some(close) => (Some(&rest[1..1 + close]), &rest[close + 2..]),
            None => (Some(&rest[1..]), ""),
        };
    }
    // Unquoted: the next five fields.
    let mut end = 0;
    let mut fields = 0;
    let mut in_word = false;
    for (i, c) in rest.char_indices() {
        if c.is_whitespace() {
            if in_word {
                fields += 1;
                if fields == 5 {
                    end = i;
                    break;
                }
            }
            in_word = false;
        } else {
            in_word = true;
            end = i + c.len_utf8();
        }
    }
    (Some(&rest[..end]), &rest[end..])
}

fn cron_parser(seconds: bool) -> CronParser {
    CronParser::builder()
        .seconds(if seconds {
            Seconds::Required
        } else {
            Seconds::Disallowed
        })
        .year(Year::Disallowed)
        .build()
}

fn cron_rule(pattern: &str) -> Result<Rule, RecurError> {
    let pattern = pattern.split_whitespace().collect::<Vec<_>>().join(" ");
    if pattern.split(' ').count() != 5 {
        return Err(RecurError::BadCron(format!(
            "{:?} needs five fields: minute hour day-of-month month day-of-week",
            when::quoted(&pattern)
        )));
    }
    let cron = cron_parser(false).parse(&pattern).map_err(|e| {
        let why = bad_cron_field(&pattern).unwrap_or_else(|| e.to_string());
        RecurError::BadCron(format!("{:?}: {why}", when::quoted(&pattern)))
    })?;
    Ok(Rule::Cron { pattern, cron })
}

/// Which field of a five-field pattern the parser refuses, in words:
/// croner says only "Number out of bounds". Each field is tried alone,
/// the others left as `*`.
fn bad_cron_field(pattern: &str) -> Option<String> {
    const FIELDS: [(&str, &str); 5] = [
        ("minute", "0-59"),
        ("hour", "0-23"),
        ("day of month", "1-31"),
        ("month", "1-12 or jan-dec"),
        ("day of week", "0-7 or sun-sat"),
    ];
    let fields: Vec<&str> = pattern.split(' ').collect();
    fields.iter().enumerate().find_map(|(i, field)| {
        let alone: Vec<&str> = (0..5).map(|j| if j == i { *field } else { "*" }).collect();
        let (name, range) = FIELDS.get(i)?;
        cron_parser(false)
            .parse(&alone.join(" "))
            .is_err()
            .then(|| {
                format!(
                    "the {name} field {:?} is not valid ({range})",
                    when::quoted(field)
                )
            })
    })
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

    /// The canonical text, stored with a series; [`Rule::parse`] reads it back
    /// to the same rule.
    pub fn expression(&self) -> String {
        match self {
            Rule::Cron { pattern, .. } => format!("cron \"{pattern}\""),
            _ => self.describe(),
        }
    }

    /// The rule in words: `every weekday at 09:00`, `every 2 hours`.
    pub fn describe(&self) -> String {
        let clock = |time: &NaiveTime| {
            if time.second() == 0 {
                time.format("%H:%M").to_string()
            } else {
                time.format("%H:%M:%S").to_string()
            }
        };
        match self {
            Rule::Interval { every_ms } => describe_interval(*every_ms),
            Rule::Months { months, days, time } => {
                let d = match days {
                    Days::YearDay { month, day } => format!(
                        "every {} years on {day} {}",
                        months / 12,
                        MONTHS[(*month as usize).saturating_sub(1) % 12]
                    ),
                    Days::LastOfMonth => format!("every {months} months on the last day"),
                    Days::MonthDay(n) => format!("every {months} months on the {}", ordinal(*n)),
                    // Not built: see [`Rule::spaced`].
                    _ => format!("every {months} months"),
                };
                format!("{d} at {}", clock(time))
            }
            Rule::Weeks { weeks, days, time } => {
                let d = match days {
                    Days::Weekdays => "weekdays".to_string(),
                    Days::Weekend => "weekends".to_string(),
                    Days::Set(set) if set.len() == 1 => full_day(set[0]).to_string(),
                    Days::Set(set) => {
                        let names: Vec<String> = set.iter().map(|d| d.to_string()).collect();
                        let (last, init) = names
                            .split_last()
                            .map_or(("", &[][..]), |(l, i)| (l.as_str(), i));
                        format!("{} and {last}", init.join(", "))
                    }
                    // Not built: see [`spaced_days`].
                    _ => "every day".to_string(),
                };
                format!("every {weeks} weeks on {d} at {}", clock(time))
            }
            Rule::Calendar { days, time, .. } => {
                let t = clock(time);
                let d = match days {
                    Days::Every => "every day".to_string(),
                    Days::Weekdays => "every weekday".into(),
                    Days::Weekend => "every weekend day".into(),
                    Days::Set(set) if set.len() == 1 => format!("every {}", full_day(set[0])),
                    Days::Set(set) => {
                        let names: Vec<String> = set.iter().map(|d| d.to_string()).collect();
                        let (last, init) = names
                            .split_last()
                            .map_or(("", &[][..]), |(l, i)| (l.as_str(), i));
                        format!("every {} and {last}", init.join(", "))
                    }
                    Days::MonthDay(n) => format!("every month on the {}", ordinal(*n)),
                    Days::LastOfMonth => "every month on the last day".into(),
                    Days::YearDay { month, day } => {
                        format!(
                            "every year on {day} {}",
                            MONTHS[(*month as usize).saturating_sub(1) % 12]
                        )
                    }
                };
                format!("{d} at {t}")
            }
            Rule::Cron { pattern, cron } => {
                format!("cron \"{pattern}\" ({})", cron_words(&cron.describe()))
            }
        }
    }

    pub fn is_interval(&self) -> bool {
        matches!(self, Rule::Interval { .. })
    }

    fn cron(&self) -> Option<&Cron> {
        match self {
            Rule::Interval { .. } | Rule::Months { .. } | Rule::Weeks { .. } => None,
            Rule::Calendar { cron, .. } | Rule::Cron { cron, .. } => Some(cron),
        }
    }

    /// The first occurrence of a series created at `now_ms`: one interval
    /// later for intervals, else the next matching wall-clock time.
    pub fn first<Tz: TimeZone>(&self, tz: &Tz, now_ms: i64) -> Option<i64> {
        match self {
            Rule::Interval { every_ms } => now_ms.checked_add(*every_ms),
            // Its day in any month (in its month of any year): the first
            // occurrence is where the counting starts.
            Rule::Months { days, time, .. } => {
                let (every, phase) = match days {
                    Days::YearDay { month, .. } => (12, i64::from(*month) - 1),
                    _ => (1, 0),
                };
                let spacing = Spacing { every, phase };
                spacing.next_after(tz, days, *time, now_ms)
            }
            // The next of its days: the week counting starts from.
            Rule::Weeks { days, time, .. } => {
                Spacing { every: 1, phase: 0 }.next_week_after(tz, days, *time, now_ms)
            }
            _ => self.next_after(tz, now_ms, now_ms),
        }
    }

    /// The first occurrence strictly after `after_ms`. Interval rules count
    /// from `anchor_ms` (the series' first occurrence).
    pub fn next_after<Tz: TimeZone>(&self, tz: &Tz, anchor_ms: i64, after_ms: i64) -> Option<i64> {
        match self {
            Rule::Interval { every_ms } => {
                if after_ms < anchor_ms {
                    return Some(anchor_ms);
                }
                let k = (after_ms - anchor_ms) / every_ms + 1;
                k.checked_mul(*every_ms)?.checked_add(anchor_ms)
            }
            Rule::Months { months, days, time } => {
                Spacing::from_anchor(tz, *months, anchor_ms).next_after(tz, days, *time, after_ms)
            }
            Rule::Weeks { weeks, days, time } => Spacing::weeks_from_anchor(tz, *weeks, anchor_ms)
                .next_week_after(tz, days, *time, after_ms),
            _ => {
                let cron = self.cron()?;
                let from = utc(after_ms).with_timezone(tz);
                cron.find_next_occurrence(&from, false)
                    .ok()
                    .map(|t| t.with_timezone(&Utc).timestamp_millis())
                    // Sub-second `after`: croner works in whole seconds.
                    .filter(|t| *t > after_ms)
                    .or_else(|| {
                        let from = utc(after_ms + 1000).with_timezone(tz);
                        cron.find_next_occurrence(&from, false)
                            .ok()
                            .map(|t| t.with_timezone(&Utc).timestamp_millis())
                    })
            }
        }
    }

    /// The latest occurrence at or before `t_ms`, if any (not before `anchor_ms`
    /// for intervals).
    pub fn latest_at_or_before<Tz: TimeZone>(
        &self,
        tz: &Tz,
        anchor_ms: i64,
        t_ms: i64,
    ) -> Option<i64> {
        match self {
            Rule::Interval { every_ms } => {
                if t_ms < anchor_ms {
                    return None;
                }
                Some(anchor_ms + (t_ms - anchor_ms) / every_ms * every_ms)
            }
            Rule::Months { months, days, time } => Spacing::from_anchor(tz, *months, anchor_ms)
                .latest_at_or_before(tz, days, *time, t_ms),
            Rule::Weeks { weeks, days, time } => Spacing::weeks_from_anchor(tz, *weeks, anchor_ms)
                .latest_week_at_or_before(tz, days, *time, t_ms),
            _ => {
                let from = utc(t_ms).with_timezone(tz);
                self.cron()?
                    .find_previous_occurrence(&from, true)
                    .ok()
                    .map(|t| t.with_timezone(&Utc).timestamp_millis())
                    .filter(|t| *t <= t_ms)
            }
        }
    }
}

/// How many months to look through for a [`Rule::Months`] occurrence
/// before giving up (29 Feb every 3 years fires every 12; a date chrono
/// cannot hold never does).
const MONTHS_SCAN: usize = 1200;

/// Which months a [`Rule::Months`] fires in: those a multiple of `every`
/// away from the month `phase` (months counted from year 0).
#[derive(Clone, Copy, Debug)]
struct Spacing {
    every: i64,
    phase: i64,
}

/// A local date's month, counted from January of year 0.
fn month_index(d: NaiveDate) -> i64 {
    i64::from(d.year()) * 12 + i64::from(d.month0())
}

impl Spacing {
    /// `months` apart, counted from the month of the series' first
    /// occurrence (where it is in `tz`).
    fn from_anchor<Tz: TimeZone>(tz: &Tz, months: u32, anchor_ms: i64) -> Spacing {
        Spacing {
            every: i64::from(months.max(1)),
            phase: month_index(utc(anchor_ms).with_timezone(tz).date_naive()),
        }
    }

    /// `weeks` apart, counted from the week (Monday to Sunday) of the
    /// series' first occurrence (where it is in `tz`).
    fn weeks_from_anchor<Tz: TimeZone>(tz: &Tz, weeks: u32, anchor_ms: i64) -> Spacing {
        Spacing {
            every: i64::from(weeks.max(1)),
            phase: week_index(utc(anchor_ms).with_timezone(tz).date_naive()),
        }
    }

    /// The first of `days` at `time` after `after_ms`, in one of the weeks.
    fn next_week_after<Tz: TimeZone>(
        self,
        tz: &Tz,
        days: &Days,
        time: NaiveTime,
        after_ms: i64,
    ) -> Option<i64> {
        // From the day before: a gap can carry a time into the next day.
        let from = utc(after_ms).with_timezone(tz).date_naive().pred_opt()?;
        let mut w = self.align(week_index(from), false);
        for _ in 0..3 {
            for d in week_days(days) {
                if let Some(t) = week_occurrence(tz, w, d, time)
                    && t > after_ms
                {
                    return Some(t);
                }
            }
            w = w.checked_add(self.every)?;
        }
        None
    }

    /// The last of `days` at `time` at or before `t_ms`, in one of the weeks.
    fn latest_week_at_or_before<Tz: TimeZone>(
        self,
        tz: &Tz,
        days: &Days,
        time: NaiveTime,
        t_ms: i64,
    ) -> Option<i64> {
        let from = utc(t_ms).with_timezone(tz).date_naive().succ_opt()?;
        let mut w = self.align(week_index(from), true);
        for _ in 0..3 {
            for d in week_days(days).into_iter().rev() {
                if let Some(t) = week_occurrence(tz, w, d, time)
                    && t <= t_ms
                {
                    return Some(t);
                }
            }
            w = w.checked_sub(self.every)?;
        }
        None
    }

    /// The month at or after `m` (before it when `back`) that is one of them.
    fn align(self, m: i64, back: bool) -> i64 {
        let off = (m - self.phase).rem_euclid(self.every);
        match (back, off) {
            (_, 0) => m,
            (false, _) => m + self.every - off,
            (true, _) => m - off,
        }
    }

    fn next_after<Tz: TimeZone>(
        self,
        tz: &Tz,
        days: &Days,
        time: NaiveTime,
        after_ms: i64,
    ) -> Option<i64> {
        // From the month before: a gap can carry a time into the next day.
        let from = month_index(utc(after_ms).with_timezone(tz).date_naive()) - 1;
        let mut m = self.align(from, false);
        for _ in 0..MONTHS_SCAN {
            if let Some(t) = month_occurrence(tz, days, time, m)
                && t > after_ms
            {
                return Some(t);
            }
            m = m.checked_add(self.every)?;
        }
        None
    }

    fn latest_at_or_before<Tz: TimeZone>(
        self,
        tz: &Tz,
        days: &Days,
        time: NaiveTime,
        t_ms: i64,
    ) -> Option<i64> {
        let from = month_index(utc(t_ms).with_timezone(tz).date_naive()) + 1;
        let mut m = self.align(from, true);
        for _ in 0..MONTHS_SCAN {
            if let Some(t) = month_occurrence(tz, days, time, m)
                && t <= t_ms
            {
                return Some(t);
            }
            m = m.checked_sub(self.every)?;
        }
        None
    }
}

/// A local date's week (Monday to Sunday), counted from the week of
/// 1 January of year 1 (a Monday).
fn week_index(d: NaiveDate) -> i64 {
    (i64::from(d.num_days_from_ce()) - 1).div_euclid(7)
}

/// The days of the week a [`Rule::Weeks`] fires on, Monday first.
fn week_days(days: &Days) -> Vec<Weekday> {
    use Weekday::*;
    match days {
        Days::Weekdays => vec![Mon, Tue, Wed, Thu, Fri],
        Days::Weekend => vec![Sat, Sun],
        Days::Set(set) => set.clone(),
        _ => Vec::new(),
    }
}

/// Day `d` of week `w` ([`week_index`]) at `time`, as a wall-clock rule
/// takes it.
fn week_occurrence<Tz: TimeZone>(tz: &Tz, w: i64, d: Weekday, time: NaiveTime) -> Option<i64> {
    let day = w
        .checked_mul(7)?
        .checked_add(1 + i64::from(d.num_days_from_monday()))?;
    let date = NaiveDate::from_num_days_from_ce_opt(i32::try_from(day).ok()?)?;
    wall_clock_instant(tz, date.and_time(time))
}

/// A [`Rule::Months`] occurrence in month `m` ([`month_index`]), if it has
/// one: a day the month lacks is its last day, except 29 Feb of a
/// [`Days::YearDay`], which only leap years have.
fn month_occurrence<Tz: TimeZone>(tz: &Tz, days: &Days, time: NaiveTime, m: i64) -> Option<i64> {
    let year = i32::try_from(m.div_euclid(12)).ok()?;
    let month = u32::try_from(m.rem_euclid(12)).ok()? + 1;
    let next_month = match month {
        12 => NaiveDate::from_ymd_opt(year.checked_add(1)?, 1, 1)?,
        _ => NaiveDate::from_ymd_opt(year, month + 1, 1)?,
    };
    let last = next_month.pred_opt()?.day();
    let day = match days {
        Days::MonthDay(d) => (*d).min(last),
        Days::LastOfMonth => last,
        Days::YearDay { month: on, day } if *on == month && *day <= last => *day,
        _ => return None,
    };
    wall_clock_instant(
        tz,
        NaiveDate::from_ymd_opt(year, month, day)?.and_time(time),
    )
}

/// A local time as a wall-clock rule takes it (as croner does for the
/// others): a time that happens twice is the first; one that does not
/// exist (in a gap the clocks jump over) is the first instant after the gap.
fn wall_clock_instant<Tz: TimeZone>(tz: &Tz, local: NaiveDateTime) -> Option<i64> {
    match tz.from_local_datetime(&local) {
        LocalResult::Single(t) => return Some(t.timestamp_millis()),
        LocalResult::Ambiguous(a, b) => return Some(a.min(b).timestamp_millis()),
        LocalResult::None => {}
    }
    let offset_at = |secs: i64| {
        DateTime::from_timestamp(secs, 0).map(|t| {
            tz.offset_from_utc_datetime(&t.naive_utc())
                .fix()
                .local_minus_utc()
        })
    };
    // Zones do not change offset twice in a day: a day before, the offset
    // is the one before the gap; read with it, `local` lands past the gap.
    let day_before = local.checked_sub_signed(chrono::Duration::days(1))?;
    let before = tz
        .offset_from_utc_datetime(&day_before)
        .fix()
        .local_minus_utc();
    let past = local.and_utc().timestamp() - i64::from(before);
    let after = offset_at(past)?;
    // The gap starts less than its length before `past`: its first second
    // is the first with the new offset.
    let (mut lo, mut hi) = (past - i64::from((after - before).max(0)), past);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if offset_at(mid)? == after {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi.checked_mul(1000)
}

/// The days of a calendar rule, and how many months (for a monthly rule),
/// years (for a yearly one) or weeks (with `true`: for days of the week)
/// apart they are: 1 for the rules of [`parse_days`], N for `every N
/// months …`, `every N years …` (`6mo`, `2 yrs`, `other` for 2), `every N
/// weeks on DAYS` and `every other DAYS` (`every other monday`).
fn spaced_days(
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
fn leading_clock<'a, 'b>(
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
fn trailing_clock<'a, 'b>(
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

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

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

fn full_day(d: Weekday) -> &'static str {
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

fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

fn weekday_word(w: &str) -> Option<Weekday> {
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

/// croner's sentence inside a phrase, in lower case like tock's own rules
/// (`every day at 09:00`): `At every 5 minutes.` reads `every 5 minutes`,
/// `At 09:00, on Monday.` reads `at 09:00, on Monday`, `Every minute.`
/// reads `every minute` (croner's sentences start with `At` or `Every`;
/// only that first letter changes, so day and month names keep theirs).
fn cron_words(sentence: &str) -> String {
    let s = sentence.trim().trim_end_matches('.');
    let s = match s.strip_prefix("At every ") {
        Some(rest) => format!("every {rest}"),
        None => s.to_string(),
    };
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn describe_interval(ms: i64) -> String {
    let secs = ms / 1000;
    let plural = |n: i64, unit: &str| {
        if n == 1 {
            format!("every {unit}")
        } else {
            format!("every {n} {unit}s")
        }
    };
    if secs % 604_800 == 0 {
        return plural(secs / 604_800, "week");
    }
    if secs % 86_400 == 0 && secs > 86_400 {
        return plural(secs / 86_400, "day");
    }
    if secs % 3600 == 0 {
        return plural(secs / 3600, "hour");
    }
    if secs % 60 == 0 && secs < 3600 {
        return plural(secs / 60, "minute");
    }
    let parts: Vec<String> = [(86_400, 'd'), (3600, 'h'), (60, 'm'), (1, 's')]
        .iter()
        .scan(secs, |left, (per, u)| {
            let n = *left / per;
            *left %= per;
            Some((n, *u))
        })
        .filter(|(n, _)| *n > 0)
        .map(|(n, u)| format!("{n}{u}"))
        .collect();
    format!("every {}", parts.join(" "))
}

// --- schedules ------------------------------------------------------------------

impl Schedule {
    /// The first occurrence of a series created at `now`.
    pub fn first<Tz: TimeZone>(&self, now: &DateTime<Tz>) -> Option<i64> {
        let now_ms = now.with_timezone(&Utc).timestamp_millis();
        self.first_in(&now.timezone(), now_ms)
    }

    /// The first occurrence of a series created at `now_ms`, its wall-clock
    /// times in `tz`: the rule's ([`Rule::first`]), except that a rule
    /// whose day is the one it was said on ([`Schedule::from_today`])
    /// counts its months from this one.
    pub fn first_in<Tz: TimeZone>(&self, tz: &Tz, now_ms: i64) -> Option<i64> {
        match &self.rule {
            Rule::Months { months, days, time } if self.from_today => {
                Spacing::from_anchor(tz, *months, now_ms).next_after(tz, days, *time, now_ms)
            }
            rule => rule.first(tz, now_ms),
        }
    }

    fn validate<Tz: TimeZone>(&self, now: &DateTime<Tz>) -> Result<(), RecurError> {
        if self.count == Some(0) {
            return Err(RecurError::NeverFires("0 times".into()));
        }
        let Some(first) = self.first(now) else {
            return Err(RecurError::NeverFires(match &self.rule {
                Rule::Cron { pattern, .. } => format!("no date matches \"{pattern}\""),
                r => format!("no date matches {}", r.describe()),
            }));
        };
        if let Some(until) = self.until
            && until < first
        {
            let show = |ms| when::absolute(utc(ms), now);
            return Err(RecurError::EndsBeforeStart {
                first: show(first),
                end: show(until),
            });
        }
        Ok(())
    }

    /// The rule in words with its end: `every weekday at 09:00, 5 times`.
    pub fn describe<Tz: TimeZone>(&self, now: &DateTime<Tz>) -> String {
        let mut s = self.rule.describe();
        if let Some(n) = self.count {
            s.push_str(&format!(", {n} time{}", if n == 1 { "" } else { "s" }));
        }
        if let Some(u) = self.until {
            s.push_str(&format!(", until {}", when::absolute(utc(u), now)));
        }
        s
    }

    /// The next `n` occurrences of a series created at `now`.
    pub fn next_occurrences<Tz: TimeZone>(
        &self,
        now: &DateTime<Tz>,
        n: usize,
    ) -> Vec<DateTime<Utc>> {
        let tz = now.timezone();
        let n = self.count.map_or(n, |c| n.min(c as usize));
        let mut out = Vec::with_capacity(n);
        let Some(anchor) = self.first(now) else {
            return out;
        };
        let mut t = Some(anchor);
        while let Some(ms) = t {
            if out.len() >= n || self.until.is_some_and(|u| ms > u) {
                break;
            }
            out.push(utc(ms));
            t = self.rule.next_after(&tz, anchor, ms);
        }
        out
    }

    /// `next Mon 1 Dec 09:00, then Tue 09:00, Wed 09:00` (or `never`, which
    /// parsing refuses anyway).
    pub fn preview<Tz: TimeZone>(&self, now: &DateTime<Tz>, n: usize) -> String {
        let times = self.next_occurrences(now, n);
        preview_times(&times, now)
    }
}

/// `next Mon 1 Dec 09:00, then Tue, Wed`: later entries drop what they
/// share with the first (so three fit in the composer's border): the time
/// when it is the same, the date when it is the same day as the entry
/// before, the day of the month within a week of the first; the year only
/// for a date more than 300 days away (the first names its year as
/// [`when::absolute`] does).
pub fn preview_times<Tz: TimeZone>(times: &[DateTime<Utc>], now: &DateTime<Tz>) -> String {
    let tz = now.timezone();
    let Some(first) = times.first() else {
        return "no further occurrences".into();
    };
    let mut out = format!("next {}", when::absolute(*first, now));
    let first = first.with_timezone(&tz).naive_local();
    let today = now.naive_local().date();
    let mut prev = first;
    for (i, t) in times.iter().enumerate().skip(1) {
        let local = t.with_timezone(&tz).naive_local();
        let time = (local.time() != first.time()).then(|| local.format(" %H:%M").to_string());
        let text = if local.date() == prev.date() {
            local.format("%H:%M").to_string()
        } else {
            let day = if (local.date() - first.date()).num_days() < 7 {
                "%a"
            } else if (local.date() - today).num_days() <= 300 {
                "%a %-d %b"
            } else {
                "%a %-d %b %Y"
            };
            format!("{}{}", local.format(day), time.unwrap_or_default())
        };
        out.push_str(if i == 1 { ", then " } else { ", " });
        out.push_str(&text);
        prev = local;
    }
    out
}

/// What a due series does now: see [`catch_up`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatchUp {
    /// Create an occurrence for this instant (the latest one due).
    pub fire: Option<i64>,
    /// Occurrences that came due and will never be sent (missed while tock
    /// was not running, or older than the catch-up grace).
    pub skipped: u64,
    /// Slots used up (fired + skipped), for `for N times`.
    pub consumed: u64,
    /// The next occurrence after now; None when the series has ended.
    pub next: Option<i64>,
}

/// Where a stored series stands (UTC epoch ms).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    /// Interval rules count from here.
    pub anchor: i64,
    /// The occurrence it waits for.
    pub next_due: i64,
    pub until: Option<i64>,
    /// Occurrences left, for `for N times`.
    pub remaining: Option<i64>,
}

/// A series due at `pos.next_due` (<= `now`): fire once for the latest
/// occurrence due, if it is within `grace_ms`; every older one is skipped.
/// Occurrences after `until` and beyond `remaining` do not happen.
pub fn catch_up<Tz: TimeZone>(
    rule: &Rule,
    tz: &Tz,
    pos: Position,
    now: i64,
    grace_ms: i64,
) -> CatchUp {
    let Position {
        anchor,
        next_due,
        until,
        remaining,
    } = pos;
    let limit = until.map_or(now, |u| u.min(now));
    let budget = remaining.map_or(u64::MAX, |r| r.max(0) as u64);
    let mut count: u64 = 0;
    let mut last: Option<i64> = None;
    let mut next = Some(next_due);
    match rule {
        Rule::Interval { every_ms } => {
            // Exact arithmetic: no scanning, however long tock was away.
            if next_due <= limit && budget > 0 {
                let n = (((limit - next_due) / every_ms) as u64 + 1).min(budget);
                let l = next_due + (n as i64 - 1) * every_ms;
                count = n;
                last = Some(l);
                next = l.checked_add(*every_ms);
            }
        }
        _ => {
            while let Some(t) = next {
                if t > limit || count >= budget {
                    break;
                }
                last = Some(t);
                count += 1;
                if count == CATCH_UP_SCAN
                    && let Some(l) = rule.latest_at_or_before(tz, anchor, limit)
                    && l > t
                {
                    // Counted far enough: the rest are skipped too.
                    last = Some(l);
                    count += 1;
                    next = rule.next_after(tz, anchor, l);
                    continue;
                }
                next = rule.next_after(tz, anchor, t);
            }
        }
    }
    let mut fire = None;
    let mut skipped = count;
    if let Some(l) = last
        && now - l <= grace_ms
    {
        fire = Some(l);
        skipped -= 1;
    }
    let next = next.filter(|t| until.is_none_or(|u| *t <= u) && count < budget);
    CatchUp {
        fire,
        skipped,
        consumed: count,
        next,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_local_zone_gives_a_fold_earliest_first() {
        let summer = FixedOffset::east_opt(2 * 3600).unwrap();
        let winter = FixedOffset::east_opt(3600).unwrap();
        // chrono's Local order (latest first) is turned round; chrono's own
        // order, a single offset and a gap are left as they are.
        assert_eq!(
            SystemZone::ordered(LocalResult::Ambiguous(winter, summer)),
            LocalResult::Ambiguous(summer, winter)
        );
        assert_eq!(
            SystemZone::ordered(LocalResult::Ambiguous(summer, winter)),
            LocalResult::Ambiguous(summer, winter)
        );
        assert_eq!(
            SystemZone::ordered(LocalResult::Single(winter)),
            LocalResult::Single(winter)
        );
        assert_eq!(SystemZone::ordered(LocalResult::None), LocalResult::None);
    }

    #[test]
    fn split_cron_forms() {
        assert_eq!(
            split_cron("cron \"0 9 * * 1-5\" until fri"),
            (Some("0 9 * * 1-5"), " until fri")
        );
        assert_eq!(
            split_cron("cron 0 9 * * 1-5 ping"),
            (Some("0 9 * * 1-5"), " ping")
        );
        assert_eq!(split_cron("crons are fun"), (None, "crons are fun"));
    }

    /// A number after a rule's days is its hour, as after `/at tomorrow`:
    /// 0 and 13 to 23 are that hour, 1 to 12 are asked about; a number the
    /// days read themselves (`every month 21`, the 21st) stays theirs.
    #[test]
    fn a_bare_hour_after_the_days() {
        // Tue 1 Dec 2026 10:00 UTC.
        let now = Utc.with_ymd_and_hms(2026, 12, 1, 10, 0, 0).unwrap();
        for (expr, want) in [
            ("every day at 21", "every day at 21:00"),
            ("day at 21", "every day at 21:00"),
            ("daily 21", "every day at 21:00"),
            ("every daily 0", "every day at 00:00"),
            ("every mon 21", "every Monday at 21:00"),
            ("every mon,wed 13", "every Mon and Wed at 13:00"),
            ("every weekday at 18", "every weekday at 18:00"),
            ("every year dec 24 18", "every year on 24 Dec at 18:00"),
            ("every year 24 dec at 18", "every year on 24 Dec at 18:00"),
            (
                "every month on the 1st 21",
                "every month on the 1st at 21:00",
            ),
            ("every month 21", "every month on the 21st at 09:00"),
            ("every month 5", "every month on the 5th at 09:00"),
        ] {
            let s = parse(expr, &now).unwrap_or_else(|e| panic!("{expr}: {e}"));
            assert_eq!(s.describe(&now), want, "{expr}");
        }
        for (expr, hour, after) in [
            ("every daily 9", 9, "every daily"),
            ("every day at 9", 9, "every day"),
            ("every mon 5", 5, "every mon"),
            ("weekday 12", 12, "weekday"),
            ("every year dec 24 6", 6, "every year dec 24"),
        ] {
            assert_eq!(
                parse(expr, &now).unwrap_err(),
                RecurError::Time(WhenError::AmbiguousHourAfter {
                    hour,
                    after: after.into()
                }),
                "{expr}"
            );
        }
        assert_eq!(
            parse("every mon 9", &now).unwrap_err().to_string(),
            "\"9\" after \"every mon\" could be morning or evening — say 9am, 9pm or 21:00"
        );
        // In a message: the hour is the rule's, the rest is the text; 1 to 12
        // is asked about rather than left in the text.
        for (input, want, text) in [
            (
                "every day at 21 take out bins",
                "every day at 21:00",
                "take out bins",
            ),
            ("every mon 21 x", "every Monday at 21:00", "x"),
            (
                "every year dec 24 18 Carols",
                "every year on 24 Dec at 18:00",
                "Carols",
            ),
            (
                "every mon 9pm 2 things",
                "every Monday at 21:00",
                "2 things",
            ),
        ] {
            let (s, rest) = split_prefix(input, &now).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!((s.describe(&now).as_str(), rest.as_str()), (want, text));
        }
        for (input, hour, after) in [
            ("every daily 9 x", 9, "every daily"),
            ("every mon 5 apples", 5, "every mon"),
        ] {
            assert_eq!(
                split_prefix(input, &now).unwrap_err(),
                RecurError::Time(WhenError::AmbiguousHourAfter {
                    hour,
                    after: after.into()
                }),
                "{input}"
            );
        }
    }

    #[test]
    fn descriptions_parse_back_to_the_same_rule() {
        for e in [
            "every day at 9am",
            "every weekday 09:00",
            "every weekend 10:00",
            "every monday 10:00",
            "every mon,wed,fri 8:30",
            "every 2h",
            "every 90 minutes",
            "every 1h30m",
            "every 25 hours",
            "every week",
            "every 3 days",
            "every month on the 1st 9am",
            "every month on the last day 18:00",
            "every year dec 24 18:00",
            "every day at 09:00:30",
            "cron \"0 9 * * 1-5\"",
            "every 6 months on the 15th 9am",
            "every other month on the 1st",
            "every 2 months on the last day 18:00",
            "every 2 years dec 24 18:00",
            "every 3 years on 29 feb",
        ] {
            let r = Rule::parse(e).unwrap();
            assert_eq!(
                Rule::parse(&r.expression()).unwrap(),
                r,
                "{e} -> {}",
                r.expression()
            );
        }
    }
}
