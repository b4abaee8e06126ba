//! The time zone a series' wall-clock times are evaluated in, and the
//! local zone with a fold's instants in the order croner expects.

use chrono::{
    DateTime, FixedOffset, Local, LocalResult, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc,
};

use crate::when;

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
    pub(super) fn ordered(r: LocalResult<FixedOffset>) -> LocalResult<FixedOffset> {
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

pub(super) fn utc(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or_default()
}
