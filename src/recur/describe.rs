//! A rule in words: the canonical text stored with a series, and the
//! description shown to the user.

use chrono::{NaiveTime, Timelike};

use super::days::full_day;
use super::{Days, Rule};

impl Rule {
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
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

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
