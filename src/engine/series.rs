//! Recurring series: the engine's operations on them, and advancing due
//! series on each scheduler pass.
//!
//! # API for front ends (TUI composer and F2, CLI)
//!
//! Parsing and preview, in the engine's clock and zone:
//! ```text
//! engine.parse_schedule(expr)              -> Result<recur::Schedule, recur::RecurError>
//! engine.split_schedule(input)             -> Result<(Schedule, String), RecurError>   // "/every EXPR TEXT"
//! engine.describe_schedule(&schedule)      -> "every weekday at 09:00, until Thu 24 Dec 23:59"
//! engine.preview_schedule(&schedule, 3)    -> "next Mon 1 Dec 09:00, then Tue 09:00, Wed 09:00"
//! ```
//! Operations — each one SQLite transaction, each followed by `Event::Outbox`
//! and a scheduler wake-up; errors are one-line `anyhow` messages:
//! ```text
//! engine.create_series(conversation_id, Kind::Message, text, &schedule) -> Result<i64>  // the series id
//! engine.pause_series(id) / resume_series(id) / end_series(id)          -> Result<()>
//! engine.skip_next(id)                    -> Result<Option<i64>>   // the new next occurrence (None: ended)
//! engine.edit_series_text(id, text)       -> Result<()>
//! engine.edit_series_rule(id, expr)       -> Result<()>            // same expressions, re-anchored at now
//! engine.send_series_now(id)              -> Result<i64>           // one extra occurrence: its outbox id
//! engine.list_series(all)                 -> Result<Vec<SeriesView>>  // F2 / `tock list`
//! engine.store().series_occurrences(id)   -> Result<Vec<OutboxItem>>  // finished ones under their series
//! ```
//! Series ids share the outbox's id space, so one id names one row.
//! When occurrences are skipped (downtime, busy conversation), a notice
//! message is added to the conversation in the same transaction and an
//! `Event::Notice` is emitted; their text carries no key hints.

use anyhow::{Result, anyhow};
use chrono::{DateTime, Utc};

use super::{Engine, Event, NoticeKind};
use crate::in_zone;
use crate::recur::{self, RecurError, Rule, Schedule};
use crate::store::{Kind, NewSeries, Series, SeriesStatus, SeriesStep};

/// A series as lists show it.
#[derive(Clone, Debug, PartialEq)]
pub struct SeriesView {
    pub series: Series,
    /// The rule in words (`every weekday at 09:00`), with its end if any.
    pub description: String,
    /// The next occurrences (up to three), UTC epoch ms.
    pub upcoming: Vec<i64>,
    /// The whole schedule as one can type it again, end and all
    /// ([`Engine::series_expression`]).
    pub expression: String,
}

impl SeriesView {
    /// An ended series' record, as every list shows it: `ran 2 times,
    /// ended`, with `1 skipped` before `ended` when any were. None while it
    /// goes on (lists count what went so far their own way).
    pub fn ended_record(&self) -> Option<String> {
        let s = &self.series;
        if s.status != SeriesStatus::Ended {
            return None;
        }
        let ran = match s.occurrences {
            0 => "never ran".to_string(),
            1 => "ran 1 time".to_string(),
            n => format!("ran {n} times"),
        };
        let skipped = match s.skipped {
            0 => String::new(),
            n => format!(", {n} skipped"),
        };
        Some(format!("{ran}{skipped}, ended"))
    }
}

/// How many upcoming occurrences a [`SeriesView`] carries.
const UPCOMING: usize = 3;

impl Engine {
    fn now_in_zone<R>(&self, f: impl Fn(&dyn ZonedNow) -> R) -> R {
        let now = DateTime::<Utc>::from_timestamp_millis(self.now_ms()).unwrap_or_default();
        in_zone!(&self.inner.options.zone, tz => f(&Zoned(now.with_timezone(tz))))
    }

    /// Parse a schedule expression now, in the user's zone.
    pub fn parse_schedule(&self, expr: &str) -> Result<Schedule, RecurError> {
        self.now_in_zone(|z| z.parse(expr))
    }

    /// `/every EXPR TEXT`: the schedule and the text after it.
    pub fn split_schedule(&self, input: &str) -> Result<(Schedule, String), RecurError> {
        self.now_in_zone(|z| z.split(input))
    }

    /// The schedule in words, with its end.
    pub fn describe_schedule(&self, s: &Schedule) -> String {
        self.now_in_zone(|z| z.describe(s))
    }

    /// `next Mon 1 Dec 09:00, then Tue 09:00, Wed 09:00` for a series created now.
    pub fn preview_schedule(&self, s: &Schedule, n: usize) -> String {
        self.now_in_zone(|z| z.preview(s, n))
    }

    /// A series' whole schedule as one can type it again: the rule, then
    /// its ends (`every 3 hours for 5 times until 2026-12-20`), read back
    /// by [`Engine::parse_schedule`] to the same rule, count and end.
    pub fn series_expression(&self, s: &crate::store::Series) -> String {
        let mut expr = s.rule.clone();
        if let Some(n) = s.remaining {
            expr.push_str(&format!(" for {n} times"));
        }
        if let Some(until) = s.until_at {
            let at = DateTime::<Utc>::from_timestamp_millis(until).unwrap_or_default();
            let end = in_zone!(&self.inner.options.zone, tz => {
                let local = at.with_timezone(tz);
                // The end of a day (what `until DATE` means) is the date alone.
                let day_end = (at + chrono::Duration::milliseconds(1))
                    .with_timezone(tz)
                    .time()
                    == chrono::NaiveTime::MIN;
                if day_end {
                    local.format("%Y-%m-%d").to_string()
                } else {
                    local.format("%Y-%m-%d %H:%M").to_string()
                }
            });
            expr.push_str(&format!(" until {end}"));
        }
        expr
    }

    /// The zone a series' times are in: its own, else this process's (a
    /// series made before zones were kept, or in a zone this build lacks).
    pub(crate) fn zone_of(&self, s: &Series) -> recur::Zone {
        s.zone
            .as_deref()
            .and_then(recur::Zone::named)
            .unwrap_or_else(|| self.inner.options.zone.clone())
    }

    /// The instant as the user reads it (`Mon 30 Nov 09:00`).
    pub fn show_time(&self, ms: i64) -> String {
        self.inner.options.zone.absolute(ms, self.now_ms())
    }

    /// Whether a series on `schedule`, started now, can be made (it fires,
    /// ends after it starts, and first fires within ten years): its first
    /// time. The composer's preview asks the same as the send does.
    pub fn check_schedule(&self, schedule: &Schedule) -> Result<i64> {
        let now = self.now_ms();
        let first = in_zone!(&self.inner.options.zone, tz => schedule.first_in(tz, now))
            .ok_or_else(|| anyhow!("this rule never fires"))?;
        if schedule.until.is_some_and(|u| u < first) {
            return Err(anyhow!("this rule ends before it starts"));
        }
        self.check_not_too_far(Some(first))
            .map_err(|e| anyhow!("its first time is {e}"))?;
        Ok(first)
    }

    /// The row for a new series starting now.
    pub fn new_series(
        &self,
        conversation_id: i64,
        kind: Kind,
        text: &str,
        schedule: &Schedule,
    ) -> Result<NewSeries> {
        if text.trim().is_empty() {
            return Err(anyhow!("nothing to send: the message is empty"));
        }
        let first = self.check_schedule(schedule)?;
        Ok(NewSeries {
            conversation_id,
            kind,
            text: text.to_string(),
            title: None,
            model_override: None,
            payload_json: None,
            rule: schedule.rule.expression(),
            anchor_at: first,
            next_due_at: first,
            until_at: schedule.until,
            remaining: schedule.count.map(i64::from),
            zone: self.inner.options.zone.name(),
        })
    }

    /// Start a series in a conversation. Returns the series id.
    pub fn create_series(
        &self,
        conversation_id: i64,
        kind: Kind,
        text: &str,
        schedule: &Schedule,
    ) -> Result<i64> {
        let s = self.new_series(conversation_id, kind, text, schedule)?;
        self.submit_series(&s)
    }

    /// Store a prepared series (e.g. with a model override set).
    pub fn submit_series(&self, s: &NewSeries) -> Result<i64> {
        if self.store().conversation(s.conversation_id)?.is_none() {
            return Err(anyhow!("no conversation {}", s.conversation_id));
        }
        let id = self.store().create_series(s, self.now_ms())?;
        // A series names an untitled conversation at once (see `submit`).
        self.title_untitled(s.conversation_id, s.title.as_deref().unwrap_or(&s.text))?;
        self.changed();
        Ok(id)
    }

    fn modify(&self, id: i64, f: impl FnOnce(&mut Series, &Rule) -> Result<()>) -> Result<Series> {
        let s = self.store().update_series(id, self.now_ms(), |s| {
            let rule = Rule::stored(&s.rule).map_err(|e| anyhow!("series {id}: {e}"))?;
            f(s, &rule)
        })?;
        self.changed();
        Ok(s)
    }

    pub fn pause_series(&self, id: i64) -> Result<()> {
        self.modify(id, |s, _| match s.status {
            SeriesStatus::Active => {
                s.status = SeriesStatus::Paused;
                Ok(())
            }
            SeriesStatus::Paused => Err(anyhow!("series {id} is already paused")),
            SeriesStatus::Ended => Err(anyhow!("series {id} has ended")),
        })?;
        Ok(())
    }

    /// Resume at the next occurrence after now (those during the pause are
    /// not sent), or later where occurrences still to come were skipped.
    pub fn resume_series(&self, id: i64) -> Result<()> {
        let now = self.now_ms();
        self.modify(id, |s, rule| {
            let zone = self.zone_of(s);
            match s.status {
                SeriesStatus::Paused => {}
                SeriesStatus::Active => return Err(anyhow!("series {id} is not paused")),
                SeriesStatus::Ended => return Err(anyhow!("series {id} has ended")),
            }
            let next = in_zone!(&zone, tz => rule.next_after(tz, s.anchor_at, now));
            // The series' own next is past every occurrence skipped; one
            // still ahead of the next after now means those were skipped.
            let next = match (next, s.next_due_at) {
                (Some(after_now), Some(own)) if own > after_now => Some(own),
                (next, _) => next,
            };
            s.status = SeriesStatus::Active;
            set_next(s, next);
            Ok(())
        })?;
        Ok(())
    }

    /// Skip the next occurrence. Returns the one after it (None: the series ended).
    pub fn skip_next(&self, id: i64) -> Result<Option<i64>> {
        let s = self.modify(id, |s, rule| {
            let zone = self.zone_of(s);
            let Some(due) = s.next_due_at.filter(|_| s.status != SeriesStatus::Ended) else {
                return Err(anyhow!("series {id} has ended"));
            };
            let next = in_zone!(&zone, tz => rule.next_after(tz, s.anchor_at, due));
            s.skipped += 1;
            s.remaining = s.remaining.map(|r| (r - 1).max(0));
            set_next(s, next);
            Ok(())
        })?;
        Ok(s.next_due_at)
    }

    pub fn edit_series_text(&self, id: i64, text: &str) -> Result<()> {
        if text.trim().is_empty() {
            return Err(anyhow!("the text is empty"));
        }
        self.modify(id, |s, _| {
            if s.status == SeriesStatus::Ended {
                return Err(anyhow!("series {id} has ended"));
            }
            s.text = text.to_string();
            Ok(())
        })?;
        Ok(())
    }

    /// A new rule (and end), starting from now; a paused series stays paused.
    pub fn edit_series_rule(&self, id: i64, expr: &str) -> Result<()> {
        self.edit_series_rule_with(id, expr, false)
    }

    /// [`Engine::edit_series_rule`] for a rule typed on its own (`tock
    /// reschedule 5 "every day 10am"`): the series keeps its end (`until`,
    /// `for N times`) unless the rule names one. (F2 shows the whole
    /// schedule to edit, end and all, so a rule there without one has none.)
    pub fn edit_series_rule_keeping_end(&self, id: i64, expr: &str) -> Result<()> {
        self.edit_series_rule_with(id, expr, true)
    }

    fn edit_series_rule_with(&self, id: i64, expr: &str, keep_end: bool) -> Result<()> {
        let mut schedule = self.parse_schedule(expr)?;
        if keep_end
            && schedule.until.is_none()
            && schedule.count.is_none()
            && let Some(s) = self.store().series(id)?
        {
            schedule.until = s.until_at;
            schedule.count = s.remaining.and_then(|n| u32::try_from(n).ok());
        }
        let now = self.now_ms();
        let first = in_zone!(&self.inner.options.zone, tz => schedule.first_in(tz, now))
            .ok_or_else(|| anyhow!("this rule never fires"))?;
        self.modify(id, |s, _| {
            if s.status == SeriesStatus::Ended {
                return Err(anyhow!("series {id} has ended"));
            }
            // The end as shown again (to the minute) is the end it had.
            let until = match (s.until_at, schedule.until) {
                (Some(had), Some(end)) if had.div_euclid(60_000) == end.div_euclid(60_000) => {
                    Some(had)
                }
                (_, end) => end,
            };
            // The same schedule: the series keeps its place (a skip stays).
            if s.rule == schedule.rule.expression()
                && s.until_at == until
                && s.remaining == schedule.count.map(i64::from)
            {
                return Ok(());
            }
            s.rule = schedule.rule.expression();
            s.anchor_at = first;
            s.next_due_at = Some(first);
            s.until_at = until;
            s.remaining = schedule.count.map(i64::from);
            // Its times are now where the user who gave the rule is.
            s.zone = self.inner.options.zone.name();
            Ok(())
        })?;
        Ok(())
    }

    /// End a series: no further occurrences, and one already due that still
    /// waits to be sent is canceled (one in its conversation gets its reply).
    pub fn end_series(&self, id: i64) -> Result<()> {
        self.modify(id, |s, _| {
            if s.status == SeriesStatus::Ended {
                return Err(anyhow!("series {id} has already ended"));
            }
            s.status = SeriesStatus::Ended;
            Ok(())
        })?;
        Ok(())
    }

    /// One extra occurrence, sent as soon as the conversation is idle. Returns its outbox id.
    pub fn send_series_now(&self, id: i64) -> Result<i64> {
        let row = self.store().series_send_now(id, self.now_ms())?;
        self.changed();
        Ok(row)
    }

    /// Series with their rule in words and next occurrences; `all` adds ended ones.
    pub fn list_series(&self, all: bool) -> Result<Vec<SeriesView>> {
        self.list_series_from(self.store(), all)
    }

    /// [`Engine::list_series`] read through `store` (a front end's reader).
    pub fn list_series_from(
        &self,
        store: &crate::store::Store,
        all: bool,
    ) -> Result<Vec<SeriesView>> {
        Ok(store
            .list_series(all)?
            .into_iter()
            .map(|s| self.view(s))
            .collect())
    }

    /// The first occurrences of a series not stored yet (approval cards).
    pub fn upcoming_of(&self, s: &NewSeries) -> Vec<i64> {
        let Ok(rule) = Rule::stored(&s.rule) else {
            return Vec::new();
        };
        let stored = Series {
            id: 0,
            conversation_id: Some(s.conversation_id),
            kind: s.kind,
            text: s.text.clone(),
            title: None,
            model_override: None,
            payload_json: None,
            rule: s.rule.clone(),
            anchor_at: s.anchor_at,
            next_due_at: Some(s.next_due_at),
            until_at: s.until_at,
            remaining: s.remaining,
            occurrences: 0,
            skipped: 0,
            status: SeriesStatus::Active,
            created_at: 0,
            updated_at: 0,
            zone: s.zone.clone(),
        };
        upcoming(&rule, &self.inner.options.zone, &stored)
    }

    pub fn series_view(&self, id: i64) -> Result<Option<SeriesView>> {
        Ok(self.store().series(id)?.map(|s| self.view(s)))
    }

    fn view(&self, s: Series) -> SeriesView {
        let zone = &self.inner.options.zone;
        let own = self.zone_of(&s);
        let (description, upcoming) = match Rule::stored(&s.rule) {
            Ok(rule) => {
                let mut d = rule.describe();
                // `every day at 09:00` made in New York is at 15:00 here:
                // its clock times are its zone's, which is said when it
                // is not this one's.
                if !rule.is_interval()
                    && let Some(name) = own.name().filter(|n| zone.name().as_ref() != Some(n))
                {
                    d.push_str(&format!(" ({name} time)"));
                }
                if let Some(r) = s.remaining.filter(|_| s.status != SeriesStatus::Ended) {
                    d.push_str(&format!(", {r} left"));
                }
                if let Some(u) = s.until_at {
                    d.push_str(&format!(", until {}", zone.absolute(u, self.now_ms())));
                }
                (d, upcoming(&rule, &own, &s))
            }
            Err(_) => (s.rule.clone(), Vec::new()),
        };
        SeriesView {
            expression: self.series_expression(&s),
            series: s,
            description,
            upcoming,
        }
    }
}

/// The next occurrences of a stored series, within its end.
fn upcoming(rule: &Rule, zone: &recur::Zone, s: &Series) -> Vec<i64> {
    let mut out = Vec::new();
    if s.status == SeriesStatus::Ended {
        return out;
    }
    let budget = s
        .remaining
        .map_or(UPCOMING, |r| (r.max(0) as usize).min(UPCOMING));
    let mut t = s.next_due_at;
    while let Some(ms) = t {
        if out.len() >= budget || s.until_at.is_some_and(|u| ms > u) {
            break;
        }
        out.push(ms);
        t = in_zone!(zone, tz => rule.next_after(tz, s.anchor_at, ms));
    }
    out
}

/// Set the next occurrence, ending the series when there is none within its end.
fn set_next(s: &mut Series, next: Option<i64>) {
    let next = next.filter(|t| s.until_at.is_none_or(|u| *t <= u) && s.remaining != Some(0));
    match next {
        Some(t) => s.next_due_at = Some(t),
        None => s.status = SeriesStatus::Ended,
    }
}

/// Object-safe access to "now in the engine's zone" (chrono's zones are
/// generic; the engine picks one at run time).
trait ZonedNow {
    fn parse(&self, expr: &str) -> Result<Schedule, RecurError>;
    fn split(&self, input: &str) -> Result<(Schedule, String), RecurError>;
    fn describe(&self, s: &Schedule) -> String;
    fn preview(&self, s: &Schedule, n: usize) -> String;
}

struct Zoned<Tz: chrono::TimeZone>(DateTime<Tz>);

impl<Tz: chrono::TimeZone> ZonedNow for Zoned<Tz> {
    fn parse(&self, expr: &str) -> Result<Schedule, RecurError> {
        recur::parse(expr, &self.0)
    }
    fn split(&self, input: &str) -> Result<(Schedule, String), RecurError> {
        recur::split_prefix(input, &self.0)
    }
    fn describe(&self, s: &Schedule) -> String {
        s.describe(&self.0)
    }
    fn preview(&self, s: &Schedule, n: usize) -> String {
        s.preview(&self.0, n)
    }
}

/// The most series one pass advances (~11 µs each): thousands due at the
/// same minute are spread over passes a few milliseconds long, run back to back.
pub(crate) const PASS_LIMIT: usize = 500;

/// One scheduler pass over the series: every due one (up to [`PASS_LIMIT`])
/// fires once, for its latest due occurrence within the grace, and advances,
/// in one transaction. Returns true when more are due (pass again at once).
/// The wall clock was set back by `back_ms` (it had been ahead): each
/// active series' next occurrence, worked out on the wrong clock, comes
/// back by as much, so that `every 2 minutes` does not go quiet for the
/// hour the clock was ahead. An interval keeps its cadence (its anchor
/// moves too); a wall-clock rule takes its first time at or after the
/// moved instant, so a skipped occurrence stays skipped.
pub(crate) fn after_clock_set_back(engine: &Engine, now: i64, back_ms: i64) {
    move_back(engine, now, |_| Some(back_ms));
}

/// At start: series last written later than now (by more than
/// `least_ms`) were worked out on a clock that was ahead and was set right
/// while no tock ran. Each comes back by at least as far as its last write
/// is ahead of now, as [`after_clock_set_back`] would have moved it.
pub(crate) fn written_ahead_of_clock(engine: &Engine, now: i64, least_ms: i64) {
    move_back(engine, now, |s| {
        let ahead = s.updated_at.saturating_sub(now);
        (ahead > least_ms).then_some(ahead)
    });
}

/// Move each active series with a next occurrence ahead back by `back(s)`.
fn move_back(engine: &Engine, now: i64, back: impl Fn(&Series) -> Option<i64>) {
    let series = match engine.store().list_series(false) {
        Ok(s) => s,
        Err(e) => {
            tracing::error!("series after the clock was set back: {e:#}");
            return;
        }
    };
    for s in series
        .into_iter()
        .filter(|s| s.status == SeriesStatus::Active && s.next_due_at.is_some_and(|t| t > now))
    {
        let Some(back_ms) = back(&s) else {
            continue;
        };
        let zone = engine.zone_of(&s);
        let moved = engine.modify(s.id, |s, rule| {
            let Some(next) = s.next_due_at else {
                return Ok(());
            };
            let target = next.saturating_sub(back_ms).max(now);
            if rule.is_interval() {
                s.anchor_at = s.anchor_at.saturating_sub(next - target);
                s.next_due_at = Some(target);
            } else if let Some(t) =
                in_zone!(&zone, tz => rule.next_after(tz, s.anchor_at, target.saturating_sub(1)))
            {
                s.next_due_at = Some(t.min(next));
            }
            Ok(())
        });
        if let Err(e) = moved {
            tracing::error!("series {} after the clock was set back: {e:#}", s.id);
        }
    }
}

pub(crate) fn advance(engine: &Engine, now: i64, grace_ms: i64) -> bool {
    let result = engine.store().advance_series(now, PASS_LIMIT, |s| {
        let zone = engine.zone_of(s);
        let Some(due) = s.next_due_at else {
            return SeriesStep {
                fire: None,
                skipped: 0,
                consumed: 0,
                next_due_at: None,
            };
        };
        match Rule::stored(&s.rule) {
            Ok(rule) => {
                let pos = recur::Position {
                    anchor: s.anchor_at,
                    next_due: due,
                    until: s.until_at,
                    remaining: s.remaining,
                };
                let c = in_zone!(&zone, tz => recur::catch_up(&rule, tz, pos, now, grace_ms));
                SeriesStep {
                    fire: c.fire,
                    skipped: c.skipped as i64,
                    consumed: c.consumed as i64,
                    next_due_at: c.next,
                }
            }
            Err(e) => {
                // A rule this build cannot read (written by a newer tock, or
                // edited by hand): send the due occurrence, then stop.
                tracing::error!("series {}: {e}", s.id);
                SeriesStep {
                    fire: Some(due),
                    skipped: 0,
                    consumed: 1,
                    next_due_at: None,
                }
            }
        }
    });
    let advanced = match result {
        Ok(a) => a,
        Err(e) => {
            tracing::error!("advancing recurring series: {e:#}");
            return false;
        }
    };
    if advanced.is_empty() {
        return false;
    }
    for a in &advanced {
        if a.rehomed {
            engine.emit(Event::Conversations);
        }
        if a.missed > 0 || a.coalesced > 0 {
            if let Some(c) = a.conversation_id {
                engine.emit(Event::Conversation(c));
            }
            let mut parts = Vec::new();
            if a.missed > 0 {
                parts.push(format!("{} skipped while tock was not running", a.missed));
            }
            if a.coalesced > 0 {
                parts.push(format!(
                    "{} skipped because the previous one was still waiting",
                    a.coalesced
                ));
            }
            engine.notify(
                if a.missed > 0 {
                    NoticeKind::Expired
                } else {
                    NoticeKind::Info
                },
                a.conversation_id,
                format!(
                    "recurring \"{}\": {}",
                    crate::sanitize::sanitize_line(&a.text)
                        .chars()
                        .take(60)
                        .collect::<String>(),
                    parts.join(", ")
                ),
            );
        }
    }
    engine.emit(Event::Outbox);
    advanced.len() == PASS_LIMIT
}
