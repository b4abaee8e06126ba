//! A time or a rule given whole on the command line (`--in`, `--at`,
//! `--every`, `tock reschedule`). When it does not read, the parser's
//! answer is "can't read … — try …", which does not say why: the
//! composer's `/at 9am and 5pm …` is told where its time stops, by the
//! split of a line into time and text. A flag's value has no text after
//! it, so the same split is run on the value alone, and what it finds is
//! said without the composer's `/at` and `--` ways out.

use anyhow::{Result, anyhow};
use chrono::{DateTime, Utc};

use super::now_local;
use crate::recur::{self, RecurError, Schedule};
use crate::when::{self, Mode, WhenError};

/// A time expression from the command line (the parser refuses more than
/// ten years ahead, and years and months with the reason).
pub fn parse_due(expr: &str, mode: Mode) -> Result<DateTime<Utc>> {
    let now = now_local();
    match when::parse_time(expr, &now, mode) {
        Err(e @ WhenError::Unrecognised(_)) => {
            Err(match when::split_time_prefix(expr, &now, mode) {
                Err(WhenError::SecondTime { time, said, second }) => anyhow!(
                    "{said:?} after {time:?}: one time per message — send two, one at {time:?} and one at {second:?}"
                ),
                Err(WhenError::TimeInText { time, said }) => {
                    read_as_far_as(expr, &time, &said, "time")
                }
                Err(WhenError::ZoneWord { time, zone }) => anyhow!(
                    "{zone:?} after {time:?}: tock reads times in your local zone, in UTC or at a fixed offset (9am utc, 9am gmt+1, 9am -05:00)"
                ),
                Ok((_, rest)) => stops_at(expr, &rest, "time").unwrap_or_else(|| e.into()),
                Err(_) => e.into(),
            })
        }
        r => Ok(r?),
    }
}

/// A repeating rule from the command line (`--every`, with `--until`'s end
/// after it).
pub fn parse_every(expr: &str) -> Result<Schedule> {
    let now = now_local();
    match recur::parse(expr, &now) {
        Err(e @ RecurError::Unrecognised(_)) => Err(match recur::split_prefix(expr, &now) {
            Err(RecurError::SecondSlot { rule, said, second }) => anyhow!(
                "{said:?} after {rule:?}: one time per rule — make two series, every {rule:?} and every {second:?}"
            ),
            Err(RecurError::MoreInText { rule, said }) => {
                read_as_far_as(expr, &rule, &said, "rule")
            }
            Err(zone @ RecurError::Time(WhenError::ZoneInRule(_))) => zone.into(),
            Ok((_, rest)) => stops_at(expr, &rest, "rule").unwrap_or_else(|| e.into()),
            Err(_) => e.into(),
        }),
        r => Ok(r?),
    }
}

/// The expression read as far as `rest`, which is what is left of it.
fn stops_at(expr: &str, rest: &str, what: &str) -> Option<anyhow::Error> {
    let read = expr.trim().strip_suffix(rest.trim())?.trim_end();
    (!read.is_empty()).then(|| read_as_far_as(expr, read, rest.trim(), what))
}

/// `can't read "tomorrow 9am foo" as a time: "tomorrow 9am" is one, and
/// "foo" after it is not part of it`.
fn read_as_far_as(expr: &str, read: &str, rest: &str, what: &str) -> anyhow::Error {
    anyhow!(
        "can't read {:?} as a {what}: {read:?} is one, and {rest:?} after it is not part of it",
        expr.trim()
    )
}
