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
//! The time-of-day and date words are `when`'s (hand-written there for
//! reasons listed in its docs), so `/every … 9am` reads exactly like
//! `/at 9am`. The small rule grammar on top is a table of word shapes; the
//! evaluation, the hard part, is `croner`'s.

use chrono::{NaiveTime, Weekday};
use croner::Cron;

mod catch_up;
mod cron;
mod days;
mod describe;
mod errors;
mod occurrences;
mod parse;
mod schedule;
mod split;
mod zone;

pub use catch_up::{CatchUp, Position, catch_up};
pub use errors::RecurError;
pub use parse::parse;
pub use schedule::preview_times;
pub use split::split_prefix;
pub use zone::{SystemZone, Zone};

/// The shortest interval accepted.
pub const MIN_INTERVAL_MS: i64 = 60_000;

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

#[cfg(test)]
mod tests;
