use super::*;
use chrono::{FixedOffset, TimeZone, Utc};

#[test]
fn words_after_a_duration_stay_in_the_message() {
    let now = FixedOffset::east_opt(3600)
        .unwrap()
        .with_ymd_and_hms(2026, 11, 29, 18, 49, 0)
        .unwrap();
    let (due, rest) = split_time_prefix("20m a second message", &now, Mode::Later).unwrap();
    assert_eq!((due - now.with_timezone(&Utc)).num_seconds(), 20 * 60);
    assert_eq!(rest, "a second message");
    let (due, rest) = split_time_prefix("1h a minute of silence", &now, Mode::Later).unwrap();
    assert_eq!((due - now.with_timezone(&Utc)).num_seconds(), 3600);
    assert_eq!(rest, "a minute of silence");
    let (_, rest) = split_time_prefix("10m an hour", &now, Mode::Later).unwrap();
    assert_eq!(rest, "an hour");
    // A number and a unit larger than the one before belong to the
    // message too: durations are written largest unit first.
    for (input, secs, text) in [
        ("1h 3 days until release", 3600, "3 days until release"),
        ("10m 2 hours review", 600, "2 hours review"),
        ("20m 1d of work remaining", 1200, "1d of work remaining"),
        ("1h 30m 2 weeks left", 5400, "2 weeks left"),
    ] {
        let (due, rest) = split_time_prefix(input, &now, Mode::Later).unwrap();
        assert_eq!(
            ((due - now.with_timezone(&Utc)).num_seconds(), rest.as_str()),
            (secs, text),
            "{input}"
        );
    }
    // A leading word amount still works.
    assert_eq!(
        parse_duration("an hour and a half").unwrap().num_minutes(),
        90
    );
    assert_eq!(parse_duration("half an hour").unwrap().num_minutes(), 30);
}
