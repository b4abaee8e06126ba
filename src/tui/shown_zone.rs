//! The time zone the TUI reads and shows times in: the process's own, by
//! its rules (a summer date read in winter gets summer's offset), or, for
//! tests and benches, one fixed offset.
//!
//! The TUI took "now" as a fixed offset (`Local`'s offset of the moment),
//! so `/at 2027-07-01 09:00` typed in winter in Berlin was stored at 10:00
//! summer time and F2 showed summer times an hour off, where the CLI,
//! reading with the zone's rules, was right. A `DateTime` keeps only its
//! offset, so the offset here carries which zone it came from.

use chrono::{FixedOffset, LocalResult, NaiveDate, NaiveDateTime, Offset, TimeZone};

use crate::recur::SystemZone;

/// Where the TUI's times are read and shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShownZone {
    /// The process's zone with its rules (`TZ`, `/etc/localtime`).
    System,
    /// One offset all year (tests, benches).
    Fixed(FixedOffset),
}

/// An offset of a [`ShownZone`], knowing its zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShownOffset {
    zone: ShownZone,
    offset: FixedOffset,
}

impl Offset for ShownOffset {
    fn fix(&self) -> FixedOffset {
        self.offset
    }
}

impl std::fmt::Display for ShownOffset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.offset.fmt(f)
    }
}

impl ShownZone {
    fn with(self, offset: FixedOffset) -> ShownOffset {
        ShownOffset { zone: self, offset }
    }
}

impl TimeZone for ShownZone {
    type Offset = ShownOffset;

    fn from_offset(offset: &ShownOffset) -> Self {
        offset.zone
    }

    fn offset_from_local_date(&self, local: &NaiveDate) -> LocalResult<ShownOffset> {
        self.offset_from_local_datetime(&local.and_time(chrono::NaiveTime::MIN))
    }

    fn offset_from_local_datetime(&self, local: &NaiveDateTime) -> LocalResult<ShownOffset> {
        match self {
            ShownZone::System => SystemZone
                .offset_from_local_datetime(local)
                .map(|o| self.with(o)),
            ShownZone::Fixed(o) => LocalResult::Single(self.with(*o)),
        }
    }

    fn offset_from_utc_date(&self, utc: &NaiveDate) -> ShownOffset {
        self.offset_from_utc_datetime(&utc.and_time(chrono::NaiveTime::MIN))
    }

    fn offset_from_utc_datetime(&self, utc: &NaiveDateTime) -> ShownOffset {
        match self {
            ShownZone::System => self.with(SystemZone.offset_from_utc_datetime(utc)),
            ShownZone::Fixed(o) => self.with(*o),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Utc};

    #[test]
    fn a_fixed_zone_keeps_its_offset_and_the_system_zone_its_rules() {
        let plus1 = FixedOffset::east_opt(3600).unwrap();
        let t = DateTime::<Utc>::from_timestamp(1_800_000_000, 0).unwrap();
        let fixed = t.with_timezone(&ShownZone::Fixed(plus1));
        assert_eq!(fixed.timezone(), ShownZone::Fixed(plus1));
        assert_eq!(fixed.offset().fix(), plus1);
        assert_eq!(fixed.format("%H:%M %z").to_string(), "09:00 +0100");
        // The system zone answers as chrono's Local does for any instant.
        let system = t.with_timezone(&ShownZone::System);
        assert_eq!(system.timezone(), ShownZone::System);
        assert_eq!(
            system.offset().fix(),
            t.with_timezone(&chrono::Local).offset().fix()
        );
    }
}
