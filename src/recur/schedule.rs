//! A schedule (a rule and its ends): its first occurrence, the check made
//! when it is read, its description and its preview.

use chrono::{DateTime, TimeZone, Utc};

use crate::when;

use super::errors::RecurError;
use super::occurrences::Spacing;
use super::zone::utc;
use super::{Rule, Schedule};

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

    pub(super) fn validate<Tz: TimeZone>(&self, now: &DateTime<Tz>) -> Result<(), RecurError> {
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
