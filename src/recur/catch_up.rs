//! What a series that came due does: fire the latest occurrence, skip the
//! rest.

use chrono::TimeZone;

use super::Rule;

/// After this many missed occurrences, counting stops and jumps to the latest
/// (a minutely rule after a year away would otherwise take seconds).
const CATCH_UP_SCAN: u64 = 100_000;

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
/// occurrence due, if it is within `grace_ms` and the next one is not
/// nearer than it is late (else the next one serves, rather than two
/// sends a moment apart: `every 1 minute` back 0.2 s before its next
/// minute); every older one is skipped.
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
    let next = next.filter(|t| until.is_none_or(|u| *t <= u) && count < budget);
    let mut fire = None;
    let mut skipped = count;
    if let Some(l) = last
        && now - l <= grace_ms
        && next.is_none_or(|n| n - now >= now - l)
    {
        fire = Some(l);
        skipped -= 1;
    }
    CatchUp {
        fire,
        skipped,
        consumed: count,
        next,
    }
}
