//! When a rule fires: its first occurrence, the next after an instant and
//! the latest before one, with the month and week counting of
//! [`Rule::Months`] and [`Rule::Weeks`].

use chrono::{
    DateTime, Datelike, LocalResult, NaiveDate, NaiveDateTime, NaiveTime, Offset, TimeZone, Utc,
    Weekday,
};
use croner::Cron;

use super::zone::utc;
use super::{Days, Rule};

impl Rule {
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
pub(super) struct Spacing {
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
    pub(super) fn from_anchor<Tz: TimeZone>(tz: &Tz, months: u32, anchor_ms: i64) -> Spacing {
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

    pub(super) fn next_after<Tz: TimeZone>(
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
