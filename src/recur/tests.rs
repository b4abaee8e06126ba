//! Unit tests kept beside the code; most rule tests are in `tests/recur.rs`.

use super::cron::split_cron;
use super::*;
use crate::when::WhenError;
use chrono::{FixedOffset, LocalResult, TimeZone, Utc};

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
