use super::split::word_ends;
use super::*;
use chrono::{
    DateTime, Datelike, Duration, FixedOffset, Local, LocalResult, NaiveDate, NaiveDateTime,
    NaiveTime, TimeZone, Timelike, Utc, Weekday,
};
use proptest::prelude::*;

// ---- fixtures ---------------------------------------------------------

/// +01:00 (e.g. Paris in winter). Now = Sun 29 Nov 2026 18:49:00.
fn p1() -> FixedOffset {
    FixedOffset::east_opt(3600).unwrap()
}
fn now_p1() -> DateTime<FixedOffset> {
    p1().with_ymd_and_hms(2026, 11, 29, 18, 49, 0).unwrap()
}
/// A wall-clock time in +01:00, as UTC.
fn p1_at(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
    p1().with_ymd_and_hms(y, mo, d, h, mi, s)
        .unwrap()
        .with_timezone(&Utc)
}

/// -05:00 (e.g. New York in winter). Now = Sun 29 Nov 2026 18:49:00 there
/// (23:49 UTC).
fn m5() -> FixedOffset {
    FixedOffset::west_opt(5 * 3600).unwrap()
}
fn now_m5() -> DateTime<FixedOffset> {
    m5().with_ymd_and_hms(2026, 11, 29, 18, 49, 0).unwrap()
}
fn m5_at(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
    m5().with_ymd_and_hms(y, mo, d, h, mi, 0)
        .unwrap()
        .with_timezone(&Utc)
}

fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, 0).unwrap()
}

#[track_caller]
fn ok<Tz: TimeZone>(expr: &str, now: &DateTime<Tz>, mode: Mode) -> DateTime<Utc> {
    parse_time(expr, now, mode).unwrap_or_else(|e| panic!("{expr:?} refused: {e}"))
}

#[track_caller]
fn err<Tz: TimeZone>(expr: &str, now: &DateTime<Tz>, mode: Mode) -> WhenError {
    match parse_time(expr, now, mode) {
        Ok(t) => panic!("{expr:?} accepted as {t}"),
        Err(e) => e,
    }
}

/// A real DST zone without chrono-tz: central European rules for 2026
/// (CET +01:00; CEST +02:00 from 29 Mar 01:00 UTC to 25 Oct 01:00 UTC).
#[derive(Debug, Clone, Copy)]
struct Cet2026;

impl Cet2026 {
    fn offset_at(utc: &NaiveDateTime) -> FixedOffset {
        let start = NaiveDate::from_ymd_opt(2026, 3, 29)
            .unwrap()
            .and_hms_opt(1, 0, 0)
            .unwrap();
        let end = NaiveDate::from_ymd_opt(2026, 10, 25)
            .unwrap()
            .and_hms_opt(1, 0, 0)
            .unwrap();
        let hours = if *utc >= start && *utc < end { 2 } else { 1 };
        FixedOffset::east_opt(hours * 3600).unwrap()
    }
}

impl TimeZone for Cet2026 {
    type Offset = FixedOffset;
    fn from_offset(_: &FixedOffset) -> Self {
        Cet2026
    }
    fn offset_from_local_date(&self, local: &NaiveDate) -> LocalResult<FixedOffset> {
        self.offset_from_local_datetime(&local.and_time(NaiveTime::MIN))
    }
    fn offset_from_local_datetime(&self, local: &NaiveDateTime) -> LocalResult<FixedOffset> {
        // Earliest instant first, as chrono's own zones do.
        let valid: Vec<FixedOffset> = [2, 1]
            .into_iter()
            .map(|h| FixedOffset::east_opt(h * 3600).unwrap())
            .filter(|o| {
                let utc = *local - Duration::seconds(i64::from(o.local_minus_utc()));
                Self::offset_at(&utc) == *o
            })
            .collect();
        match valid.as_slice() {
            [] => LocalResult::None,
            [o] => LocalResult::Single(*o),
            [a, b] => LocalResult::Ambiguous(*a, *b),
            _ => unreachable!(),
        }
    }
    fn offset_from_utc_date(&self, utc: &NaiveDate) -> FixedOffset {
        Self::offset_at(&utc.and_time(NaiveTime::MIN))
    }
    fn offset_from_utc_datetime(&self, utc: &NaiveDateTime) -> FixedOffset {
        Self::offset_at(utc)
    }
}

#[test]
fn fixture_sanity() {
    assert_eq!(now_p1().weekday(), Weekday::Sun);
    assert_eq!(now_p1().with_timezone(&Utc), utc(2026, 11, 29, 17, 49));
    assert_eq!(now_m5().with_timezone(&Utc), utc(2026, 11, 29, 23, 49));
    // the test zone really has a gap and a fold
    assert_eq!(
        Cet2026.from_local_datetime(
            &NaiveDate::from_ymd_opt(2026, 3, 29)
                .unwrap()
                .and_hms_opt(2, 30, 0)
                .unwrap()
        ),
        LocalResult::None
    );
    assert!(matches!(
        Cet2026.from_local_datetime(
            &NaiveDate::from_ymd_opt(2026, 10, 25)
                .unwrap()
                .and_hms_opt(2, 30, 0)
                .unwrap()
        ),
        LocalResult::Ambiguous(..)
    ));
}

// ---- durations --------------------------------------------------------

#[test]
fn durations_resolve_from_now_in_both_modes() {
    let now = now_p1();
    let cases = [
        ("10m", p1_at(2026, 11, 29, 18, 59, 0)),
        ("10 min", p1_at(2026, 11, 29, 18, 59, 0)),
        ("10 mins", p1_at(2026, 11, 29, 18, 59, 0)),
        ("in 10 minutes", p1_at(2026, 11, 29, 18, 59, 0)),
        ("10 minutes from now", p1_at(2026, 11, 29, 18, 59, 0)),
        ("1h30m", p1_at(2026, 11, 29, 20, 19, 0)),
        ("1h 30m", p1_at(2026, 11, 29, 20, 19, 0)),
        ("1 hour 30 minutes", p1_at(2026, 11, 29, 20, 19, 0)),
        ("1 hour and 30 minutes", p1_at(2026, 11, 29, 20, 19, 0)),
        ("1 hour, 30 minutes", p1_at(2026, 11, 29, 20, 19, 0)),
        ("1.5h", p1_at(2026, 11, 29, 20, 19, 0)),
        ("an hour and a half", p1_at(2026, 11, 29, 20, 19, 0)),
        ("2 hours", p1_at(2026, 11, 29, 20, 49, 0)),
        ("in 2h", p1_at(2026, 11, 29, 20, 49, 0)),
        ("2 hrs", p1_at(2026, 11, 29, 20, 49, 0)),
        ("1d", p1_at(2026, 11, 30, 18, 49, 0)),
        ("1 day", p1_at(2026, 11, 30, 18, 49, 0)),
        ("90s", p1_at(2026, 11, 29, 18, 50, 30)),
        ("90 seconds", p1_at(2026, 11, 29, 18, 50, 30)),
        ("1w", p1_at(2026, 12, 6, 18, 49, 0)),
        ("2 weeks", p1_at(2026, 12, 13, 18, 49, 0)),
        ("an hour", p1_at(2026, 11, 29, 19, 49, 0)),
        ("in a minute", p1_at(2026, 11, 29, 18, 50, 0)),
        ("half an hour", p1_at(2026, 11, 29, 19, 19, 0)),
        ("1d2h3m4s", p1_at(2026, 11, 30, 20, 52, 4)),
        ("  IN   10   MINUTES  ", p1_at(2026, 11, 29, 18, 59, 0)),
    ];
    for (expr, want) in cases {
        assert_eq!(ok(expr, &now, Mode::Later), want, "{expr:?} (later)");
        assert_eq!(ok(expr, &now, Mode::At), want, "{expr:?} (at)");
    }
}

#[test]
fn parse_duration_values() {
    let cases = [
        ("10m", Duration::minutes(10)),
        ("10 min", Duration::minutes(10)),
        ("in 10 minutes", Duration::minutes(10)),
        ("1h30m", Duration::minutes(90)),
        ("1h 30m", Duration::minutes(90)),
        ("1 hour 30 minutes", Duration::minutes(90)),
        ("2 hours", Duration::hours(2)),
        ("1d", Duration::days(1)),
        ("90s", Duration::seconds(90)),
        ("1.5h", Duration::minutes(90)),
        ("0.25h", Duration::minutes(15)),
        ("1w", Duration::weeks(1)),
        ("an hour", Duration::hours(1)),
        ("half an hour", Duration::minutes(30)),
        ("1.5s", Duration::milliseconds(1500)),
    ];
    for (expr, want) in cases {
        assert_eq!(parse_duration(expr), Ok(want), "{expr:?}");
    }
}

/// How long ago, for `tock prune --older-than`: durations, and months
/// and years at a fixed length; `m` alone could be either.
#[test]
fn parse_age_values_and_refusals() {
    let day = Duration::days(1);
    for (expr, want) in [
        ("1y", day * 365),
        ("1 year", day * 365),
        ("2 years", day * 730),
        ("2yrs", day * 730),
        ("6mo", day * 180),
        ("6 months", day * 180),
        ("1 month", day * 30),
        ("1y 6mo", day * 545),
        ("1 year and 2 weeks", day * 379),
        ("2w", day * 14),
        ("3 weeks", day * 21),
        ("30d", day * 30),
        ("12h", Duration::hours(12)),
        ("1h30m", Duration::minutes(90)),
        ("90 min", Duration::minutes(90)),
        ("10 minutes", Duration::minutes(10)),
    ] {
        assert_eq!(parse_age(expr), Ok(want), "{expr:?}");
    }
    // The error quotes the amount and its `m` as typed.
    for (typed, said, amount) in [
        ("6m", "6m", "6"),
        ("6 m", "6 m", "6"),
        ("1y 6m", "6m", "6"),
        ("1.5m", "1.5m", "1.5"),
        ("1M", "1M", "1"),
        ("6  M", "6  M", "6"),
        ("1Y 6M", "6M", "6"),
        ("an M", "an M", "1"),
    ] {
        assert_eq!(
            parse_age(typed),
            Err(WhenError::MinutesOrMonths {
                said: said.into(),
                amount: amount.into()
            }),
            "{typed:?}"
        );
    }
    assert_eq!(
        parse_age("1M").map_err(|e| e.to_string()),
        Err("\"1M\" could be minutes or months — say 1min or 1mo".into())
    );
    assert_eq!(parse_age("0y"), Err(WhenError::NotPositive));
    // A number alone could be hours, days, months or years: refused
    // naming each, with the number given.
    for bare in ["1", "30", "1.5", " 7 "] {
        assert_eq!(
            parse_age(bare),
            Err(WhenError::NoUnit(bare.trim().into())),
            "{bare:?}"
        );
    }
    assert_eq!(
        parse_age("1").map_err(|e| e.to_string()),
        Err(
            "\"1\" has no unit — say 1h, 1d, 1w, 1mo or 1y (a month is 30 days, a year 365)".into()
        )
    );
    for not_a_number in ["1.", ".5", "1.2.3", "1 2"] {
        assert_eq!(
            parse_age(not_a_number),
            Err(WhenError::NotASpan(not_a_number.into())),
            "{not_a_number:?}"
        );
    }
    assert_eq!(parse_age(""), Err(WhenError::Empty));
    assert_eq!(
        parse_age("a fortnight").map_err(|e| e.to_string()),
        Err("can't read \"a fortnight\" as a span of time — try 12h, 30d, 2w, 6mo, 1y (a month is 30 days, a year 365)".into())
    );
    // Elsewhere years and months stay refused: a delay or a series'
    // span is exact, and a date says what is meant.
    assert_eq!(
        parse_duration("1y"),
        Err(WhenError::NotADuration("1y".into()))
    );
}

#[test]
fn parse_duration_refusals() {
    assert_eq!(parse_duration(""), Err(WhenError::Empty));
    assert_eq!(parse_duration("  "), Err(WhenError::Empty));
    assert_eq!(parse_duration("0m"), Err(WhenError::NotPositive));
    assert_eq!(
        parse_duration("0 hours 0 minutes"),
        Err(WhenError::NotPositive)
    );
    assert_eq!(parse_duration("-5m"), Err(WhenError::NotPositive));
    for bad in [
        "blah",
        "9am",
        "10",
        "1.5",
        "m",
        "in",
        "1h 1h",
        "10 months",
        "1 year",
        "midnight",
        "month",
        "1h30",
        "1..5h",
        "1,5h",
        "10m ago",
        "1.2345h",
        "1234567890s",
    ] {
        assert_eq!(
            parse_duration(bad),
            Err(WhenError::NotADuration(bad.to_string())),
            "{bad:?}"
        );
    }
    // nine digits of weeks is ~19 million years: too far for DateTime
    assert_eq!(
        parse_time("999999999w", &now_p1(), Mode::Later),
        Err(WhenError::OutOfRange)
    );
    assert!(parse_duration("999999999w").is_ok());
    // Ten years ahead is the most anything may be scheduled: the parser
    // refuses beyond it, so a preview never shows what sending refuses.
    let ten_years = WhenError::TooFar("10 years".into());
    assert_eq!(
        parse_time("99999h", &now_p1(), Mode::Later),
        Err(ten_years.clone())
    );
    assert_eq!(
        parse_time("2040-01-01 09:00", &now_p1(), Mode::At),
        Err(ten_years.clone())
    );
    assert_eq!(
        split_time_prefix("99999h check", &now_p1(), Mode::Later),
        Err(ten_years)
    );
    assert!(parse_time("3650d", &now_p1(), Mode::Later).is_ok());
    assert!(parse_time("3651d", &now_p1(), Mode::Later).is_err());
}

// ---- absolute times ---------------------------------------------------

#[test]
fn absolute_times_plus_one() {
    let now = now_p1();
    let cases = [
        // clock times already past today -> tomorrow
        ("9am", p1_at(2026, 11, 30, 9, 0, 0)),
        ("9 am", p1_at(2026, 11, 30, 9, 0, 0)),
        ("9 a.m.", p1_at(2026, 11, 30, 9, 0, 0)),
        ("9:30am", p1_at(2026, 11, 30, 9, 30, 0)),
        ("14:30", p1_at(2026, 11, 30, 14, 30, 0)),
        ("14:30:15", p1_at(2026, 11, 30, 14, 30, 15)),
        ("noon", p1_at(2026, 11, 30, 12, 0, 0)),
        ("midday", p1_at(2026, 11, 30, 12, 0, 0)),
        ("midnight", p1_at(2026, 11, 30, 0, 0, 0)),
        ("12pm", p1_at(2026, 11, 30, 12, 0, 0)),
        ("12am", p1_at(2026, 11, 30, 0, 0, 0)),
        ("12:30am", p1_at(2026, 11, 30, 0, 30, 0)),
        ("18:48", p1_at(2026, 11, 30, 18, 48, 0)), // a minute ago -> tomorrow
        ("18:49", p1_at(2026, 11, 29, 18, 49, 0)), // this minute -> now
        // clock times still ahead today -> today
        ("20:00", p1_at(2026, 11, 29, 20, 0, 0)),
        ("8pm", p1_at(2026, 11, 29, 20, 0, 0)),
        ("9:30 pm", p1_at(2026, 11, 29, 21, 30, 0)),
        ("9.30pm", p1_at(2026, 11, 29, 21, 30, 0)),
        ("18:50", p1_at(2026, 11, 29, 18, 50, 0)),
        ("at 9am", p1_at(2026, 11, 30, 9, 0, 0)),
        ("today 20:00", p1_at(2026, 11, 29, 20, 0, 0)),
        // tomorrow
        ("tomorrow 9am", p1_at(2026, 11, 30, 9, 0, 0)),
        ("tomorrow 14:30", p1_at(2026, 11, 30, 14, 30, 0)),
        ("tomorrow", p1_at(2026, 11, 30, 9, 0, 0)), // no time -> 09:00
        ("tmrw", p1_at(2026, 11, 30, 9, 0, 0)),
        ("tomorrow 12pm", p1_at(2026, 11, 30, 12, 0, 0)),
        ("tomorrow 12am", p1_at(2026, 11, 30, 0, 0, 0)),
        ("tomorrow noon", p1_at(2026, 11, 30, 12, 0, 0)),
        ("tomorrow at 9am", p1_at(2026, 11, 30, 9, 0, 0)),
        ("tomorrow at 9 am", p1_at(2026, 11, 30, 9, 0, 0)),
        ("9am tomorrow", p1_at(2026, 11, 30, 9, 0, 0)),
        ("Tomorrow 9AM", p1_at(2026, 11, 30, 9, 0, 0)),
        ("  TOMORROW    14:30 ", p1_at(2026, 11, 30, 14, 30, 0)),
        // weekdays (today is Sunday)
        ("fri 5pm", p1_at(2026, 12, 4, 17, 0, 0)),
        ("FRI 5PM", p1_at(2026, 12, 4, 17, 0, 0)),
        ("friday 17:00", p1_at(2026, 12, 4, 17, 0, 0)),
        ("fri at 5pm", p1_at(2026, 12, 4, 17, 0, 0)),
        ("on fri at 5pm", p1_at(2026, 12, 4, 17, 0, 0)),
        ("5pm fri", p1_at(2026, 12, 4, 17, 0, 0)),
        ("5pm on friday", p1_at(2026, 12, 4, 17, 0, 0)),
        ("fri", p1_at(2026, 12, 4, 9, 0, 0)),
        ("fri, 5pm", p1_at(2026, 12, 4, 17, 0, 0)),
        ("next monday 9am", p1_at(2026, 11, 30, 9, 0, 0)),
        ("monday", p1_at(2026, 11, 30, 9, 0, 0)),
        ("tue 9am", p1_at(2026, 12, 1, 9, 0, 0)),
        ("tues 9am", p1_at(2026, 12, 1, 9, 0, 0)),
        ("wed", p1_at(2026, 12, 2, 9, 0, 0)),
        ("thurs 10:00", p1_at(2026, 12, 3, 10, 0, 0)),
        ("thu 10:00", p1_at(2026, 12, 3, 10, 0, 0)),
        ("sat noon", p1_at(2026, 12, 5, 12, 0, 0)),
        // weekday that is today: later today, or next week if past
        ("sun 8pm", p1_at(2026, 11, 29, 20, 0, 0)),
        ("this sunday 8pm", p1_at(2026, 11, 29, 20, 0, 0)),
        ("sun 5pm", p1_at(2026, 12, 6, 17, 0, 0)),
        ("sunday", p1_at(2026, 12, 6, 9, 0, 0)),
        ("next sunday 8pm", p1_at(2026, 12, 6, 20, 0, 0)),
        // ISO dates
        ("2026-12-01 09:00", p1_at(2026, 12, 1, 9, 0, 0)),
        ("2026-12-01", p1_at(2026, 12, 1, 9, 0, 0)),
        ("2026-12-01T09:00", p1_at(2026, 12, 1, 9, 0, 0)),
        ("2026-12-01t09:00", p1_at(2026, 12, 1, 9, 0, 0)),
        ("2026-12-01 9am", p1_at(2026, 12, 1, 9, 0, 0)),
        ("2026-12-1 9:00", p1_at(2026, 12, 1, 9, 0, 0)),
        ("2026-12-01 at 14:00", p1_at(2026, 12, 1, 14, 0, 0)),
        ("2026-12-01T09:00:00Z", utc(2026, 12, 1, 9, 0)),
        ("2026-12-01t09:00:00z", utc(2026, 12, 1, 9, 0)),
        ("2026-12-01T09:00Z", utc(2026, 12, 1, 9, 0)),
        ("2026-12-01T09:00:00+02:00", utc(2026, 12, 1, 7, 0)),
        ("2026-12-01T09:00-05:00", utc(2026, 12, 1, 14, 0)),
        ("2026-12-01 09:00 -05:00", utc(2026, 12, 1, 14, 0)),
        ("2026-12-01 09:00 +0200", utc(2026, 12, 1, 7, 0)),
        ("2026-12-01 09:00 UTC", utc(2026, 12, 1, 9, 0)),
        // clock times with an offset: next occurrence of that instant
        ("18:00 utc", utc(2026, 11, 29, 18, 0)),
        ("17:00 utc", utc(2026, 11, 30, 17, 0)),
        ("14:30z", utc(2026, 11, 30, 14, 30)),
        ("23:30 -05:00", utc(2026, 11, 30, 4, 30)),
        ("fri 17:00 GMT", utc(2026, 12, 4, 17, 0)),
        ("fri 5pm utc", utc(2026, 12, 4, 17, 0)),
        ("fri 5pm+02:00", utc(2026, 12, 4, 15, 0)),
        ("9:30pm -05:00", utc(2026, 11, 30, 2, 30)),
        ("tomorrow 09:00 -05:00", utc(2026, 11, 30, 14, 0)),
        ("2027-06-15 08:15", p1_at(2027, 6, 15, 8, 15, 0)),
        // month-name dates (via interim)
        ("dec 1 9am", p1_at(2026, 12, 1, 9, 0, 0)),
        ("dec 1", p1_at(2026, 12, 1, 9, 0, 0)),
        ("1 dec", p1_at(2026, 12, 1, 9, 0, 0)),
        ("Dec 1st at 14:00", p1_at(2026, 12, 1, 14, 0, 0)),
        ("1st of december 14:00", p1_at(2026, 12, 1, 14, 0, 0)),
        ("december 1, 2026 9am", p1_at(2026, 12, 1, 9, 0, 0)),
        ("dec 1 2026", p1_at(2026, 12, 1, 9, 0, 0)),
        ("1 december 2026 17:30", p1_at(2026, 12, 1, 17, 30, 0)),
        ("9am dec 1", p1_at(2026, 12, 1, 9, 0, 0)),
        // yearless date already past this year -> next year
        ("nov 1", p1_at(2027, 11, 1, 9, 0, 0)),
        ("nov 29 8am", p1_at(2027, 11, 29, 8, 0, 0)),
        ("nov 29 8pm", p1_at(2026, 11, 29, 20, 0, 0)),
    ];
    for (expr, want) in cases {
        assert_eq!(ok(expr, &now, Mode::At), want, "{expr:?}");
    }
}

#[test]
fn absolute_times_minus_five() {
    let now = now_m5();
    let cases = [
        ("9am", m5_at(2026, 11, 30, 9, 0)),
        ("midnight", m5_at(2026, 11, 30, 0, 0)),
        ("20:00", m5_at(2026, 11, 29, 20, 0)),
        ("18:30", m5_at(2026, 11, 30, 18, 30)),
        ("tomorrow", m5_at(2026, 11, 30, 9, 0)),
        ("tomorrow 14:30", m5_at(2026, 11, 30, 14, 30)),
        ("fri 5pm", m5_at(2026, 12, 4, 17, 0)),
        ("sun 7pm", m5_at(2026, 11, 29, 19, 0)),
        ("sun 6pm", m5_at(2026, 12, 6, 18, 0)),
        ("next monday 9am", m5_at(2026, 11, 30, 9, 0)),
        ("2026-12-01 09:00", m5_at(2026, 12, 1, 9, 0)),
        ("2026-12-01", m5_at(2026, 12, 1, 9, 0)),
        ("2026-12-01T09:00:00Z", utc(2026, 12, 1, 9, 0)),
        ("dec 1 9am", m5_at(2026, 12, 1, 9, 0)),
        ("10m", m5_at(2026, 11, 29, 18, 59)),
        ("1d", m5_at(2026, 11, 30, 18, 49)),
    ];
    for (expr, want) in cases {
        assert_eq!(ok(expr, &now, Mode::At), want, "{expr:?}");
    }
    // The same instant is a different local day in +01:00: there it is
    // already Monday 00:49, so "tomorrow 00:30" (gone today) is Tuesday.
    let same_instant = now.with_timezone(&p1());
    assert_eq!(
        ok("tomorrow 00:30", &same_instant, Mode::At),
        p1_at(2026, 12, 1, 0, 30, 0)
    );
}

#[test]
fn works_with_utc_and_local_now() {
    let now = Utc.with_ymd_and_hms(2026, 11, 29, 18, 49, 0).unwrap();
    assert_eq!(ok("9am", &now, Mode::At), utc(2026, 11, 30, 9, 0));
    assert_eq!(ok("20:00", &now, Mode::At), utc(2026, 11, 29, 20, 0));
    let (due, rest) = split_time_prefix("fri 5pm drinks", &now, Mode::At).unwrap();
    assert_eq!((due, rest.as_str()), (utc(2026, 12, 4, 17, 0), "drinks"));
    assert_eq!(preview(due, &now), "Fri 4 Dec 17:00, in 4d 22h");

    let local = Local::now();
    let due = ok("10m", &local, Mode::Later);
    assert_eq!(due - local.with_timezone(&Utc), Duration::minutes(10));
    assert!(preview(due, &local).ends_with(", in 10m"));
    assert!(ok("9am", &local, Mode::At) > local.with_timezone(&Utc));
}

// ---- DST --------------------------------------------------------------

#[test]
fn dst_spring_forward_gap_shifts_forward() {
    // Sat 28 Mar 2026 12:00 CET (+01:00); tonight 02:00 -> 03:00.
    let now = Cet2026.with_ymd_and_hms(2026, 3, 28, 12, 0, 0).unwrap();
    // 02:30 does not exist: read with the old offset = 03:30 CEST.
    assert_eq!(
        ok("tomorrow 02:30", &now, Mode::At),
        utc(2026, 3, 29, 1, 30)
    );
    assert_eq!(ok("sun 2:30am", &now, Mode::At), utc(2026, 3, 29, 1, 30));
    assert_eq!(
        ok("2026-03-29 02:00", &now, Mode::At),
        utc(2026, 3, 29, 1, 0)
    );
    // Around the gap the zone's offsets are used as they are.
    assert_eq!(
        ok("tomorrow 01:59", &now, Mode::At),
        utc(2026, 3, 29, 0, 59)
    );
    assert_eq!(ok("tomorrow 03:00", &now, Mode::At), utc(2026, 3, 29, 1, 0));
    assert_eq!(ok("tomorrow 9am", &now, Mode::At), utc(2026, 3, 29, 7, 0));
    // Durations are elapsed time: 1d is 24 h, 13:00 on the wall clock.
    assert_eq!(ok("1d", &now, Mode::Later), utc(2026, 3, 29, 11, 0));
    assert_eq!(
        preview(utc(2026, 3, 29, 11, 0), &now),
        "Sun 29 Mar 13:00, in 1d"
    );

    // At 01:00 CET on the night itself: bare 02:30 is ahead -> today, shifted.
    let now = Cet2026.with_ymd_and_hms(2026, 3, 29, 1, 0, 0).unwrap();
    let due = ok("02:30", &now, Mode::At);
    assert_eq!(due, utc(2026, 3, 29, 1, 30));
    assert_eq!(preview(due, &now), "Sun 29 Mar 03:30, in 1h 30m");
}

#[test]
fn dst_fall_back_fold_takes_the_earlier() {
    // Sat 24 Oct 2026 12:00 CEST (+02:00); tonight 03:00 -> 02:00.
    let now = Cet2026.with_ymd_and_hms(2026, 10, 24, 12, 0, 0).unwrap();
    // 02:30 happens twice: the first one, still +02:00.
    assert_eq!(
        ok("tomorrow 02:30", &now, Mode::At),
        utc(2026, 10, 25, 0, 30)
    );
    assert_eq!(ok("tomorrow 9am", &now, Mode::At), utc(2026, 10, 25, 8, 0));
    assert_eq!(
        ok("tomorrow 01:30", &now, Mode::At),
        utc(2026, 10, 24, 23, 30)
    );
    // After the first 02:30 has passed, a bare "02:30" is tomorrow's,
    // not the second occurrence an hour later.
    let now = Cet2026
        .from_local_datetime(
            &NaiveDate::from_ymd_opt(2026, 10, 25)
                .unwrap()
                .and_hms_opt(2, 45, 0)
                .unwrap(),
        )
        .earliest()
        .unwrap();
    assert_eq!(ok("02:30", &now, Mode::At), utc(2026, 10, 26, 1, 30));
}

/// Cet2026 giving the two instants of a fold latest first, as chrono's
/// `Local` does under TZ=Europe/Berlin.
#[derive(Debug, Clone, Copy)]
struct LatestFirst;

impl TimeZone for LatestFirst {
    type Offset = FixedOffset;
    fn from_offset(_: &FixedOffset) -> Self {
        LatestFirst
    }
    fn offset_from_local_date(&self, local: &NaiveDate) -> LocalResult<FixedOffset> {
        self.offset_from_local_datetime(&local.and_time(NaiveTime::MIN))
    }
    fn offset_from_local_datetime(&self, local: &NaiveDateTime) -> LocalResult<FixedOffset> {
        match Cet2026.offset_from_local_datetime(local) {
            LocalResult::Ambiguous(early, late) => LocalResult::Ambiguous(late, early),
            other => other,
        }
    }
    fn offset_from_utc_date(&self, utc: &NaiveDate) -> FixedOffset {
        Cet2026.offset_from_utc_date(utc)
    }
    fn offset_from_utc_datetime(&self, utc: &NaiveDateTime) -> FixedOffset {
        Cet2026.offset_from_utc_datetime(utc)
    }
}

#[test]
fn a_fold_takes_the_earlier_instant_whichever_order_the_zone_gives() {
    let now = LatestFirst
        .with_ymd_and_hms(2026, 10, 24, 12, 0, 0)
        .unwrap();
    assert!(matches!(
        now.timezone().from_local_datetime(
            &NaiveDate::from_ymd_opt(2026, 10, 25)
                .unwrap()
                .and_hms_opt(2, 30, 0)
                .unwrap()
        ),
        LocalResult::Ambiguous(a, b) if a > b
    ));
    assert_eq!(
        ok("tomorrow 02:30", &now, Mode::At),
        utc(2026, 10, 25, 0, 30)
    );
    assert_eq!(
        ok("2026-10-25 02:59", &now, Mode::At),
        utc(2026, 10, 25, 0, 59)
    );
}

// ---- refusals ---------------------------------------------------------

#[test]
fn refusals() {
    let now = now_p1();
    assert_eq!(err("", &now, Mode::At), WhenError::Empty);
    assert_eq!(err(" \t ", &now, Mode::Later), WhenError::Empty);
    // Years and months are refused with the reason, also in a message.
    for bad in ["11y", "2 months", "in 3 years", "6mo"] {
        assert_eq!(
            err(bad, &now, Mode::Later),
            WhenError::YearsOrMonths,
            "{bad:?}"
        );
    }
    assert_eq!(
        split_time_prefix("2 months renew the domain", &now, Mode::Later),
        Err(WhenError::YearsOrMonths)
    );
    // A day and a bare hour asks which one was meant.
    for (bad, hour, after) in [
        ("tomorrow 9", 9, "tomorrow"),
        ("fri 5", 5, "fri"),
        ("next monday 10", 10, "next monday"),
    ] {
        assert_eq!(
            err(bad, &now, Mode::At),
            WhenError::AmbiguousHourAfter {
                hour,
                after: after.into()
            },
            "{bad:?}"
        );
    }
    assert_eq!(
        WhenError::AmbiguousHour(5).to_string(),
        "\"5\" alone could be morning or evening — say 5am, 5pm or 17:00"
    );
    // In a message too: the 5 may be the hour, so it is asked about
    // rather than taken as the start of the text.
    assert_eq!(
        split_time_prefix("fri 5 apples", &now, Mode::At),
        Err(WhenError::AmbiguousHourAfter {
            hour: 5,
            after: "fri".into()
        })
    );
    for bad in [
        "blah",
        "1.5",
        "in",
        "next",
        "next week",
        "at",
        "1h 1h",
        "midnight foo",
        "second thoughts",
        "month",
        "december",
        "tomorrow tomorrow",
        "9am 5pm",
        "2026-12",
        "12/01/2026",
        "5pmutc",
        "9 pm utc",
        "9:5",
        "09:00:00.5",
    ] {
        assert_eq!(
            err(bad, &now, Mode::At),
            WhenError::Unrecognised(bad.to_string()),
            "{bad:?}"
        );
    }
    for (bad, shown) in [
        ("25:99", "25:99"),
        ("24:00", "24:00"),
        ("13pm", "13pm"),
        ("0am", "0am"),
        ("13 pm", "13 pm"),
        ("9:60am", "9:60am"),
        ("tomorrow 25:00", "25:00"),
        ("2026-02-30", "2026-02-30"),
        ("2026-13-01 09:00", "2026-13-01"),
        ("feb 30", "feb 30"),
        ("2026-12-01T09:00+25:00", "09:00+25:00"),
    ] {
        assert_eq!(
            err(bad, &now, Mode::At),
            WhenError::NoSuchTime(shown.to_string()),
            "{bad:?}"
        );
    }
    // explicit dates and instants in the past (more than a minute ago)
    for (bad, shown) in [
        ("today 17:00", "Sun 29 Nov 17:00"),
        ("today", "Sun 29 Nov 09:00"),
        ("noon today", "Sun 29 Nov 12:00"),
        ("2026-11-29 08:00", "Sun 29 Nov 08:00"),
        ("2026-11-29", "Sun 29 Nov 09:00"),
        ("2020-01-01", "Wed 1 Jan 2020 09:00"),
        ("nov 1 2026", "Sun 1 Nov 09:00"),
        ("2026-11-29T17:48:00Z", "Sun 29 Nov 18:48"),
        ("2026-11-29T18:47:59+01:00", "Sun 29 Nov 18:47"),
        ("2026-11-29 18:48", "Sun 29 Nov 18:48"),
    ] {
        assert_eq!(
            err(bad, &now, Mode::At),
            WhenError::Past(shown.to_string()),
            "{bad:?}"
        );
    }
    // Named times that came less than a minute ago mean now: typed
    // while they were ahead, Enter may come a few seconds after.
    let now_utc = now.with_timezone(&Utc);
    for this_minute in [
        "2026-11-29T17:49:00Z",
        "2026-11-29T18:49:00+01:00",
        "2026-11-29 18:49",
        "today 18:49",
        "18:49",
        "sun 18:49",
        "nov 29 18:49",
    ] {
        assert_eq!(
            parse_time(this_minute, &now, Mode::At),
            Ok(now_utc),
            "{this_minute:?}"
        );
    }
    let later = now + Duration::seconds(59);
    assert_eq!(
        parse_time("18:49", &later, Mode::At),
        Ok(later.with_timezone(&Utc)),
        "59 s into the minute"
    );
    assert_eq!(
        parse_time("18:49", &(now + Duration::seconds(60)), Mode::At),
        Ok(p1_at(2026, 11, 30, 18, 49, 0)),
        "the next minute: tomorrow"
    );
    assert_eq!(parse_time(&now.to_rfc3339(), &now, Mode::At), Ok(now_utc));
    assert_eq!(err("0m", &now, Mode::At), WhenError::NotPositive);
    assert_eq!(err("-5m", &now, Mode::Later), WhenError::NotPositive);
    assert_eq!(
        err("in 0 seconds", &now, Mode::Later),
        WhenError::NotPositive
    );
}

#[test]
fn later_takes_only_durations() {
    let now = now_p1();
    for t in [
        "9am",
        "tomorrow",
        "fri 5pm",
        "2026-12-01 09:00",
        "today 17:00",
    ] {
        assert_eq!(
            err(t, &now, Mode::Later),
            WhenError::TimeNotDuration(t.to_string()),
            "{t:?}"
        );
    }
    for t in ["blah", "25:99", "10"] {
        assert_eq!(
            err(t, &now, Mode::Later),
            WhenError::NotADuration(t.to_string()),
            "{t:?}"
        );
    }
}

/// Errors quote the words as the user typed them, not as they were
/// read (lower-cased, spaces collapsed, a zone glued on).
#[test]
fn errors_quote_what_was_typed() {
    let now = now_p1();
    for (expr, mode, want) in [
        (
            "tomorrow 13PM",
            Mode::At,
            WhenError::NoSuchTime("13PM".into()),
        ),
        (
            "13PM UTC",
            Mode::At,
            WhenError::NoSuchTime("13PM UTC".into()),
        ),
        (
            "25:00 +02:00",
            Mode::At,
            WhenError::NoSuchTime("25:00 +02:00".into()),
        ),
        (
            "2026-02-30",
            Mode::At,
            WhenError::NoSuchTime("2026-02-30".into()),
        ),
        ("FEB 30", Mode::At, WhenError::NoSuchTime("FEB 30".into())),
        (
            "Fri  5",
            Mode::At,
            WhenError::AmbiguousHourAfter {
                hour: 5,
                after: "Fri".into(),
            },
        ),
        (
            "Next Monday 9",
            Mode::At,
            WhenError::AmbiguousHourAfter {
                hour: 9,
                after: "Next Monday".into(),
            },
        ),
        ("Blah", Mode::At, WhenError::Unrecognised("Blah".into())),
        (
            "Tomorrow",
            Mode::Later,
            WhenError::TimeNotDuration("Tomorrow".into()),
        ),
        (
            "10 Parsecs",
            Mode::Later,
            WhenError::NotADuration("10 Parsecs".into()),
        ),
    ] {
        assert_eq!(err(expr, &now, mode), want, "{expr:?}");
    }
    assert_eq!(
        split_time_prefix("Tomorrow 13PM Call Bob", &now, Mode::At),
        Err(WhenError::NoSuchTime("13PM".into()))
    );
    assert_eq!(
        parse_until("FEB 30", &now),
        Err(WhenError::NoSuchTime("FEB 30".into()))
    );
    assert_eq!(
        parse_duration("1Y"),
        Err(WhenError::NotADuration("1Y".into()))
    );
    // What cannot be found again is quoted as read; a shortened quote
    // stays shortened.
    assert_eq!(as_typed("abc", "xyz"), "xyz");
    let long = "X".repeat(60);
    assert_eq!(
        as_typed(&long, &quoted(&long.to_lowercase())),
        quoted(&long)
    );
}

#[test]
fn error_messages_are_one_readable_line() {
    let now = now_p1();
    assert_eq!(
        err("blah", &now, Mode::At).to_string(),
        "can't read \"blah\" as a time — try 10m, 1h30m, 9am, tomorrow 14:30, fri 5pm, 2026-12-01 09:00"
    );
    assert_eq!(
        err("blah", &now, Mode::Later).to_string(),
        "can't read \"blah\" as a duration — try 10m, 1h30m, 2 hours, 1d, in 10 minutes"
    );
    assert_eq!(
        err("9am", &now, Mode::Later).to_string(),
        "\"9am\" is a point in time, not a duration — use /at for that, or e.g. /later 1h30m"
    );
    assert_eq!(
        err("2026-11-29 08:00", &now, Mode::At).to_string(),
        "that time is in the past (Sun 29 Nov 08:00)"
    );
    assert_eq!(
        err("25:99", &now, Mode::At).to_string(),
        "no such date or time: \"25:99\""
    );
    assert_eq!(err("", &now, Mode::At).to_string(), "empty time");
    assert_eq!(
        err("0m", &now, Mode::At).to_string(),
        "a duration must be positive"
    );
    assert_eq!(
        WhenError::NothingToSend.to_string(),
        "nothing to send after the time"
    );
    // Long or multi-line input is shortened and escaped.
    let long = "x".repeat(100);
    assert_eq!(
        err(&long, &now, Mode::At),
        WhenError::Unrecognised(format!("{}…", "x".repeat(40)))
    );
    let msg = err("a\u{1b}[2Jb", &now, Mode::At).to_string();
    assert!(!msg.contains('\u{1b}'), "{msg}");
    assert!(msg.contains("\\u{1b}"), "{msg}");
}

// ---- split_time_prefix ------------------------------------------------

#[test]
fn split_prefix_examples() {
    let now = now_p1();
    let cases = [
        // A delay of hours then minutes written as one word.
        (
            "1h30 check the oven",
            Mode::Later,
            p1_at(2026, 11, 29, 20, 19, 0),
            "check the oven",
        ),
        // Apart, the number belongs to the message.
        (
            "1h 30 people to call",
            Mode::Later,
            p1_at(2026, 11, 29, 19, 49, 0),
            "30 people to call",
        ),
        (
            "9am +10 ideas",
            Mode::At,
            p1_at(2026, 11, 30, 9, 0, 0),
            "+10 ideas",
        ),
        ("9am +02:00 x", Mode::At, utc(2026, 11, 30, 7, 0), "x"),
        (
            "9am 25:00 is the new deadline",
            Mode::At,
            p1_at(2026, 11, 30, 9, 0, 0),
            "25:00 is the new deadline",
        ),
        // A text that starts with a clock time is asked about (see
        // `text_that_starts_with_more_time_is_asked_about`); `--` says
        // it is text.
        (
            "fri 5pm -- 13:00 moved",
            Mode::At,
            p1_at(2026, 12, 4, 17, 0, 0),
            "13:00 moved",
        ),
        (
            "1h check the build",
            Mode::Later,
            p1_at(2026, 11, 29, 19, 49, 0),
            "check the build",
        ),
        (
            "in 10 minutes ping",
            Mode::Later,
            p1_at(2026, 11, 29, 18, 59, 0),
            "ping",
        ),
        (
            "1h30m summarise",
            Mode::Later,
            p1_at(2026, 11, 29, 20, 19, 0),
            "summarise",
        ),
        (
            "1 hour and 30 minutes then stop",
            Mode::Later,
            p1_at(2026, 11, 29, 20, 19, 0),
            "then stop",
        ),
        (
            "10 min walk",
            Mode::Later,
            p1_at(2026, 11, 29, 18, 59, 0),
            "walk",
        ),
        (
            "2 hours 3 people",
            Mode::Later,
            p1_at(2026, 11, 29, 20, 49, 0),
            "3 people",
        ),
        (
            "1h check the build",
            Mode::At,
            p1_at(2026, 11, 29, 19, 49, 0),
            "check the build",
        ),
        (
            "tomorrow 14:30 write report",
            Mode::At,
            p1_at(2026, 11, 30, 14, 30, 0),
            "write report",
        ),
        (
            "fri 5pm drinks",
            Mode::At,
            p1_at(2026, 12, 4, 17, 0, 0),
            "drinks",
        ),
        (
            "2026-12-01 09:00 deploy",
            Mode::At,
            p1_at(2026, 12, 1, 9, 0, 0),
            "deploy",
        ),
        (
            "2026-12-01T09:00:00Z deploy",
            Mode::At,
            utc(2026, 12, 1, 9, 0),
            "deploy",
        ),
        (
            "9am stand-up notes",
            Mode::At,
            p1_at(2026, 11, 30, 9, 0, 0),
            "stand-up notes",
        ),
        (
            "tomorrow 9am stand-up notes",
            Mode::At,
            p1_at(2026, 11, 30, 9, 0, 0),
            "stand-up notes",
        ),
        (
            "tomorrow review the PR",
            Mode::At,
            p1_at(2026, 11, 30, 9, 0, 0),
            "review the PR",
        ),
        (
            "next monday at 9 am review q4",
            Mode::At,
            p1_at(2026, 11, 30, 9, 0, 0),
            "review q4",
        ),
        (
            "noon lunch?",
            Mode::At,
            p1_at(2026, 11, 30, 12, 0, 0),
            "lunch?",
        ),
        (
            "9am may I ask",
            Mode::At,
            p1_at(2026, 11, 30, 9, 0, 0),
            "may I ask",
        ),
        (
            "dec 1 9am Ship It",
            Mode::At,
            p1_at(2026, 12, 1, 9, 0, 0),
            "Ship It",
        ),
        (
            "  Tomorrow   9AM   Stand-up   notes  ",
            Mode::At,
            p1_at(2026, 11, 30, 9, 0, 0),
            "Stand-up   notes",
        ),
        (
            "1h\tcheck\nthe build",
            Mode::Later,
            p1_at(2026, 11, 29, 19, 49, 0),
            "check\nthe build",
        ),
        (
            "1h héllo wörld",
            Mode::Later,
            p1_at(2026, 11, 29, 19, 49, 0),
            "héllo wörld",
        ),
    ];
    for (input, mode, due, rest) in cases {
        let got = split_time_prefix(input, &now, mode)
            .unwrap_or_else(|e| panic!("{input:?} refused: {e}"));
        assert_eq!(got, (due, rest.to_string()), "{input:?}");
    }
}

/// A number alone after `/at`: past 12 (or 0) it can only be that
/// hour; 1 to 12 could be morning or evening, and the refusal names both.
#[test]
fn a_bare_hour() {
    let now = now_p1(); // Sun 29 Nov 18:49
    assert_eq!(ok("21", &now, Mode::At), p1_at(2026, 11, 29, 21, 0, 0));
    assert_eq!(ok("at 21", &now, Mode::At), p1_at(2026, 11, 29, 21, 0, 0));
    assert_eq!(ok("13", &now, Mode::At), p1_at(2026, 11, 30, 13, 0, 0));
    assert_eq!(ok("0", &now, Mode::At), p1_at(2026, 11, 30, 0, 0, 0));
    assert_eq!(ok("00", &now, Mode::At), p1_at(2026, 11, 30, 0, 0, 0));
    assert_eq!(ok("23", &now, Mode::At), p1_at(2026, 11, 29, 23, 0, 0));
    // The hour that came less than a minute ago means now, as 18:00 would.
    let at_six = p1().with_ymd_and_hms(2026, 11, 29, 18, 0, 30).unwrap();
    assert_eq!(ok("18", &at_six, Mode::At), at_six.with_timezone(&Utc));
    for (typed, hour) in [("9", 9), ("at 9", 9), ("09", 9), ("1", 1), ("12", 12)] {
        assert_eq!(
            err(typed, &now, Mode::At),
            WhenError::AmbiguousHour(hour),
            "{typed:?}"
        );
    }
    assert_eq!(
        err("9", &now, Mode::At).to_string(),
        "\"9\" alone could be morning or evening — say 9am, 9pm or 21:00"
    );
    assert_eq!(
        err("12", &now, Mode::At).to_string(),
        "\"12\" alone could be noon or midnight — say noon or midnight"
    );
    // In a message too; what follows the hour is the text.
    let (due, rest) = split_time_prefix("21 call mom", &now, Mode::At).unwrap();
    assert_eq!(
        (due, rest.as_str()),
        (p1_at(2026, 11, 29, 21, 0, 0), "call mom")
    );
    assert_eq!(
        split_time_prefix("9 call mom", &now, Mode::At),
        Err(WhenError::AmbiguousHour(9))
    );
    // Not an hour: too large, or a number with a unit of its own.
    for typed in ["24", "99", "123"] {
        assert_eq!(
            err(typed, &now, Mode::At),
            WhenError::Unrecognised(typed.into()),
            "{typed:?}"
        );
    }
    // A delay wants a unit: a bare number is no delay, whatever it is.
    for typed in ["9", "21", "0"] {
        assert_eq!(
            err(typed, &now, Mode::Later),
            WhenError::NotADuration(typed.into()),
            "{typed:?}"
        );
    }
}

/// A number after a day or a date is its hour, as a number alone is:
/// 0 and 13 to 23 can only be that hour; 1 to 12 could be morning or
/// evening and the user is asked, naming the day. Never a year: a
/// year has four digits.
#[test]
fn a_bare_hour_after_a_day_or_date() {
    let now = now_p1(); // Sun 29 Nov 18:49
    for (typed, want) in [
        ("tomorrow 21", p1_at(2026, 11, 30, 21, 0, 0)),
        ("tomorrow at 21", p1_at(2026, 11, 30, 21, 0, 0)),
        ("at tomorrow 21", p1_at(2026, 11, 30, 21, 0, 0)),
        ("Tomorrow 0", p1_at(2026, 11, 30, 0, 0, 0)),
        ("today 21", p1_at(2026, 11, 29, 21, 0, 0)),
        ("fri 21", p1_at(2026, 12, 4, 21, 0, 0)),
        ("mon 13", p1_at(2026, 11, 30, 13, 0, 0)),
        ("next monday 00", p1_at(2026, 11, 30, 0, 0, 0)),
        // Today's weekday, its hour gone: next week's.
        ("sun 13", p1_at(2026, 12, 6, 13, 0, 0)),
        ("dec 25 21", p1_at(2026, 12, 25, 21, 0, 0)),
        ("25 dec 21", p1_at(2026, 12, 25, 21, 0, 0)),
        ("25th dec 23", p1_at(2026, 12, 25, 23, 0, 0)),
        ("25 december 2026 21", p1_at(2026, 12, 25, 21, 0, 0)),
        ("2026-12-25 21", p1_at(2026, 12, 25, 21, 0, 0)),
        // A date gone this year is next year's, at that hour.
        ("nov 1 21", p1_at(2027, 11, 1, 21, 0, 0)),
        // A four-digit year is still a year.
        ("dec 25 2026", p1_at(2026, 12, 25, 9, 0, 0)),
        ("25 dec 2027", p1_at(2027, 12, 25, 9, 0, 0)),
    ] {
        assert_eq!(ok(typed, &now, Mode::At), want, "{typed:?}");
    }
    for (typed, hour, after) in [
        ("tomorrow 9", 9, "tomorrow"),
        ("tomorrow at 9", 9, "tomorrow"),
        ("fri 5", 5, "fri"),
        ("next monday 10", 10, "next monday"),
        ("dec 25 9", 9, "dec 25"),
        ("25 dec 9", 9, "25 dec"),
        ("2026-12-25 12", 12, "2026-12-25"),
    ] {
        assert_eq!(
            err(typed, &now, Mode::At),
            WhenError::AmbiguousHourAfter {
                hour,
                after: after.into()
            },
            "{typed:?}"
        );
    }
    assert_eq!(
        err("tomorrow 9", &now, Mode::At).to_string(),
        "\"9\" after \"tomorrow\" could be morning or evening — say 9am, 9pm or 21:00"
    );
    assert_eq!(
        err("fri 12", &now, Mode::At).to_string(),
        "\"12\" after \"fri\" could be noon or midnight — say noon or midnight"
    );
    // Only after the day: before it, the number stays the text's (or
    // is an hour alone when nothing else is).
    assert_eq!(
        err("21 tomorrow", &now, Mode::At),
        WhenError::Unrecognised("21 tomorrow".into())
    );
    // Not a year of one or two digits (it was refused as long past).
    for typed in ["1 jan 30", "dec 25 99", "1 jan 24"] {
        assert_eq!(
            err(typed, &now, Mode::At),
            WhenError::Unrecognised(typed.into()),
            "{typed:?}"
        );
    }
    // In a message: the hour is the time's, the rest is the text.
    for (input, want, text) in [
        (
            "tomorrow 21 take out bins",
            p1_at(2026, 11, 30, 21, 0, 0),
            "take out bins",
        ),
        ("fri 21 x", p1_at(2026, 12, 4, 21, 0, 0), "x"),
        ("mon 21 x", p1_at(2026, 11, 30, 21, 0, 0), "x"),
        ("dec 25 21 Party!", p1_at(2026, 12, 25, 21, 0, 0), "Party!"),
        ("dec 25 2026 party", p1_at(2026, 12, 25, 9, 0, 0), "party"),
        (
            "tomorrow 9pm 2 things",
            p1_at(2026, 11, 30, 21, 0, 0),
            "2 things",
        ),
    ] {
        let (due, rest) =
            split_time_prefix(input, &now, Mode::At).unwrap_or_else(|e| panic!("{input:?}: {e}"));
        assert_eq!((due, rest.as_str()), (want, text), "{input:?}");
    }
    // 1 to 12 is asked about, not left in the text.
    for (input, hour, after) in [
        ("fri 5 apples", 5, "fri"),
        ("tomorrow 9 stand-up", 9, "tomorrow"),
        ("dec 25 3 presents", 3, "dec 25"),
    ] {
        assert_eq!(
            split_time_prefix(input, &now, Mode::At),
            Err(WhenError::AmbiguousHourAfter {
                hour,
                after: after.into()
            }),
            "{input:?}"
        );
    }
}

/// Days that have gone (`yesterday`, `last fri`) and `… ago` are read,
/// and refused as past, naming when that was; one less than a minute
/// ago still means now.
#[test]
fn gone_days_are_in_the_past() {
    let now = now_p1(); // Sun 29 Nov 18:49
    for (typed, shown) in [
        ("yesterday 9am", "Sat 28 Nov 09:00"),
        ("yesterday at 9am", "Sat 28 Nov 09:00"),
        ("9am yesterday", "Sat 28 Nov 09:00"),
        ("yesterday", "Sat 28 Nov 09:00"),
        ("Yesterday 17:30", "Sat 28 Nov 17:30"),
        ("last fri", "Fri 27 Nov 09:00"),
        ("last friday 5pm", "Fri 27 Nov 17:00"),
        // Today is a Sunday: last Sunday is a week ago.
        ("last sunday 20:00", "Sun 22 Nov 20:00"),
        ("2h ago", "Sun 29 Nov 16:49"),
        ("10 minutes ago", "Sun 29 Nov 18:39"),
        ("3 days ago", "Thu 26 Nov 18:49"),
    ] {
        assert_eq!(
            err(typed, &now, Mode::At),
            WhenError::Past(shown.into()),
            "{typed:?}"
        );
    }
    assert_eq!(
        err("yesterday 9am", &now, Mode::At).to_string(),
        "that time is in the past (Sat 28 Nov 09:00)"
    );
    assert_eq!(
        split_time_prefix("yesterday 9am call mom", &now, Mode::At),
        Err(WhenError::Past("Sat 28 Nov 09:00".into()))
    );
    assert_eq!(
        err("yesterday 9am", &now, Mode::Later),
        WhenError::TimeNotDuration("yesterday 9am".into())
    );
    // Less than a minute ago is now, as for any named time.
    let just_after_midnight = p1().with_ymd_and_hms(2026, 11, 30, 0, 0, 30).unwrap();
    let now_utc = just_after_midnight.with_timezone(&Utc);
    assert_eq!(
        parse_time("yesterday 23:59:45", &just_after_midnight, Mode::At),
        Ok(now_utc)
    );
    assert_eq!(
        parse_time("30s ago", &now, Mode::At),
        Ok(now.with_timezone(&Utc))
    );
    // A series cannot end yesterday either.
    assert_eq!(
        parse_until("yesterday", &now),
        Err(WhenError::Past("Sat 28 Nov 23:59".into()))
    );
}

#[test]
fn split_prefix_errors() {
    let now = now_p1();
    let cases = [
        (
            "blah blah",
            Mode::At,
            WhenError::Unrecognised("blah".into()),
        ),
        (
            "blah blah",
            Mode::Later,
            WhenError::NotADuration("blah".into()),
        ),
        ("1h", Mode::Later, WhenError::NothingToSend),
        ("1h   ", Mode::Later, WhenError::NothingToSend),
        ("tomorrow 9am", Mode::At, WhenError::NothingToSend),
        ("", Mode::At, WhenError::Empty),
        ("   ", Mode::Later, WhenError::Empty),
        // recognised-but-refused beats a shorter prefix that would parse
        (
            "9am ping",
            Mode::Later,
            WhenError::TimeNotDuration("9am".into()),
        ),
        (
            "tomorrow 13pm lunch",
            Mode::At,
            WhenError::NoSuchTime("13pm".into()),
        ),
        (
            "noon today lunch",
            Mode::At,
            WhenError::Past("Sun 29 Nov 12:00".into()),
        ),
        (
            "2026-11-29 08:00 hi",
            Mode::At,
            WhenError::Past("Sun 29 Nov 08:00".into()),
        ),
        ("0m hi", Mode::Later, WhenError::NotPositive),
        (
            "2026-02-30 9am x",
            Mode::At,
            WhenError::NoSuchTime("2026-02-30".into()),
        ),
    ];
    for (input, mode, want) in cases {
        assert_eq!(split_time_prefix(input, &now, mode), Err(want), "{input:?}");
    }
}

/// `1h30` is a delay only where a delay is asked for: as a time it
/// would read as 14:30 in many places, and is refused, not misread.
#[test]
fn hours_then_minutes_is_a_delay_only_for_later() {
    let now = now_p1();
    assert_eq!(
        ok("2h05", &now, Mode::Later),
        p1_at(2026, 11, 29, 20, 54, 0)
    );
    assert!(parse_time("14h30", &now, Mode::At).is_err());
    assert!(parse_time("1h75", &now, Mode::Later).is_err());
}

#[test]
fn split_prefix_tries_at_most_six_words() {
    let now = now_p1();
    // seven words before the message: not found as a whole
    assert_eq!(
        split_time_prefix("1 hour and 30 minutes and 10 seconds x", &now, Mode::Later),
        Ok((p1_at(2026, 11, 29, 20, 19, 0), "and 10 seconds x".into()))
    );
    assert_eq!(word_ends("a  bb c", 6), vec![1, 5, 7]);
    assert_eq!(word_ends(" a b c d e f g h", 6).len(), 6);
    assert_eq!(word_ends("é ü", 6), vec![2, 5]);
}

// ---- preview / relative / check_not_too_far ----------------------------

#[test]
fn preview_strings() {
    let now = now_p1();
    assert_eq!(
        preview(p1_at(2026, 11, 30, 9, 0, 0), &now),
        "Mon 30 Nov 09:00, in 14h 11m"
    );
    assert_eq!(
        preview(ok("10m", &now, Mode::Later), &now),
        "Sun 29 Nov 18:59, in 10m"
    );
    assert_eq!(
        preview(ok("90s", &now, Mode::Later), &now),
        "Sun 29 Nov 18:50, in 1m 30s"
    );
    assert_eq!(
        preview(ok("fri 5pm", &now, Mode::At), &now),
        "Fri 4 Dec 17:00, in 4d 22h"
    );
    assert_eq!(
        preview(p1_at(2027, 1, 5, 9, 0, 0), &now),
        "Tue 5 Jan 2027 09:00, in 36d 14h"
    );
    assert_eq!(
        preview(p1_at(2026, 11, 29, 18, 47, 0), &now),
        "Sun 29 Nov 18:47, 2m ago"
    );
    assert_eq!(
        preview(now.with_timezone(&Utc), &now),
        "Sun 29 Nov 18:49, now"
    );
    // shown in now's zone
    assert_eq!(
        preview(utc(2026, 12, 1, 9, 0), &now_m5()),
        "Tue 1 Dec 04:00, in 1d 9h"
    );
    // year shown when it is not the local current year, in now's zone
    let nye = p1().with_ymd_and_hms(2026, 12, 31, 23, 30, 0).unwrap();
    assert_eq!(
        preview(p1_at(2027, 1, 1, 0, 15, 0), &nye),
        "Fri 1 Jan 2027 00:15, in 45m"
    );
    assert_eq!(
        absolute(p1_at(2026, 12, 1, 9, 0, 0), &now),
        "Tue 1 Dec 09:00"
    );
}

#[test]
fn relative_strings() {
    let s = 1000;
    let m = 60 * s;
    let h = 60 * m;
    let d = 24 * h;
    let cases = [
        (0, "now"),
        (499, "now"),
        (-499, "now"),
        (500, "in 1s"),
        (45 * s, "in 45s"),
        (59 * s + 600, "in 1m"),
        (90 * s, "in 1m 30s"),
        (10 * m, "in 10m"),
        (2 * h, "in 2h"),
        (14 * h + 11 * m, "in 14h 11m"),
        (14 * h + 11 * m + 59 * s, "in 14h 11m"),
        (3 * d + 2 * h, "in 3d 2h"),
        (3 * d + 2 * h + 59 * m, "in 3d 2h"),
        (d + 59 * s, "in 1d"),
        (400 * d, "in 400d"),
        (-2 * m, "2m ago"),
        (-(2 * m + 30 * s), "2m 30s ago"),
        (-(3 * d + 4 * h), "3d 4h ago"),
    ];
    for (diff, want) in cases {
        assert_eq!(
            relative(1_800_000_000_000 + diff, 1_800_000_000_000),
            want,
            "{diff}"
        );
    }
    // extremes do not overflow
    assert!(relative(i64::MAX, i64::MIN).starts_with("in "));
    assert!(relative(i64::MIN, i64::MAX).ends_with(" ago"));
}

#[test]
fn countdown_strings() {
    let t = 1_800_000_000_000;
    let cases = [
        (1, "now"),
        (999, "now"),
        (1_000, "in 1s"),
        (1_999, "in 1s"),
        (90_000, "in 1m 30s"),
        (90_999, "in 1m 30s"),
        (3_600_000, "in 1h"),
        (3_599_999, "in 59m 59s"),
        (14 * 3_600_000 + 11 * 60_000 + 59_999, "in 14h 11m"),
    ];
    for (left, want) in cases {
        assert_eq!(countdown(t + left, t), want, "{left}");
    }
    // Once due it reads as `relative` does.
    assert_eq!(countdown(t, t), "now");
    assert_eq!(countdown(t - 120_000, t), "2m ago");
    assert!(countdown(i64::MAX, i64::MIN).starts_with("in "));
    assert!(countdown(i64::MIN, i64::MAX).ends_with(" ago"));
}

#[test]
fn not_too_far() {
    let now = now_p1().with_timezone(&Utc);
    let year = Duration::days(365);
    assert_eq!(check_not_too_far(now + year, now, year), Ok(()));
    assert_eq!(check_not_too_far(now - year, now, year), Ok(()));
    let e = check_not_too_far(now + year + Duration::seconds(1), now, year).unwrap_err();
    assert_eq!(e, WhenError::TooFar("1 year".into()));
    assert_eq!(e.to_string(), "too far ahead (more than 1 year)");
    assert_eq!(
        check_not_too_far(now + Duration::days(800), now, Duration::days(730)),
        Err(WhenError::TooFar("2 years".into()))
    );
    assert_eq!(
        check_not_too_far(now + Duration::days(31), now, Duration::days(30)),
        Err(WhenError::TooFar("30 days".into()))
    );
    assert_eq!(
        check_not_too_far(now + Duration::days(1), now, Duration::hours(12)),
        Err(WhenError::TooFar("12h".into()))
    );
}

// ---- properties -------------------------------------------------------

fn check_any(s: &str) -> Result<(), TestCaseError> {
    for now in [now_p1(), now_m5()] {
        let now_utc = now.with_timezone(&Utc);
        for mode in [Mode::Later, Mode::At] {
            match parse_time(s, &now, mode) {
                Ok(t) => prop_assert!(t >= now_utc, "{s:?} -> {t} before now"),
                Err(e) => prop_assert!(!e.to_string().contains('\n'), "{e}"),
            }
            match split_time_prefix(s, &now, mode) {
                Ok((t, rest)) => {
                    prop_assert!(t >= now_utc, "{s:?} -> {t} before now");
                    prop_assert!(!rest.is_empty());
                    prop_assert_eq!(rest.trim(), rest.as_str());
                    prop_assert!(s.trim_end().ends_with(rest.as_str()));
                }
                Err(e) => prop_assert!(!e.to_string().contains('\n'), "{e}"),
            }
        }
    }
    if let Ok(d) = parse_duration(s) {
        prop_assert!(d > Duration::zero());
    }
    Ok(())
}

fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "in",
            "at",
            "on",
            "next",
            "this",
            "tomorrow",
            "today",
            "fri",
            "Sunday",
            "MON",
            "noon",
            "midnight",
            "am",
            "PM",
            "a.m.",
            "and",
            "a",
            "an",
            "half",
            "hour",
            "m",
            "h",
            "d",
            "w",
            "s",
            "dec",
            "December",
            "of",
            "1st",
            "from",
            "now",
            "-",
            ",",
            "T",
            "Z",
            "+02:00",
            "2026-12-01",
            "2026-11-29",
            "2026-12-01T09:00:00Z",
        ])
        .prop_map(str::to_string),
        "[0-9]{1,12}",
        "[0-9]{1,2}[:.][0-9]{1,3}(:[0-9]{2})?([ap]m|z|[+-][0-9]{2,4})?",
        "-?[0-9]{0,4}(\\.[0-9]{0,5})?[a-zA-Z]{0,3}([0-9]{1,3}[a-z]{1,2})?",
        "[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([tT][0-9:]{1,8}[zZ]?)?",
        "[a-zA-Z]{1,20}",
        "\\PC{1,6}",
    ]
}

/// `now` is a time: at once (`/at now x`, `tock reschedule 5 now` were
/// refused as unreadable). Not a delay.
#[test]
fn now_is_a_time() {
    let now = now_p1();
    assert_eq!(
        parse_time("now", &now, Mode::At),
        Ok(now.with_timezone(&Utc))
    );
    let (due, text) = split_time_prefix("now stretch", &now, Mode::At).unwrap();
    assert_eq!((due, text.as_str()), (now.with_timezone(&Utc), "stretch"));
    assert!(parse_time("now", &now, Mode::Later).is_err());
}

proptest! {
    #[test]
    fn arbitrary_text_never_panics_and_ok_is_future(s in "\\PC{0,60}") {
        check_any(&s)?;
    }

    #[test]
    fn token_soup_never_panics_and_ok_is_future(
        words in prop::collection::vec(token(), 0..8),
        sep in prop::sample::select(vec![" ", "  ", "\t", " \n "]),
    ) {
        check_any(&words.join(sep))?;
    }

    #[test]
    fn n_minutes_is_exactly_n_minutes(n in 1i64..1_000_000) {
        let now = now_p1();
        let want = now.with_timezone(&Utc) + Duration::minutes(n);
        for expr in [format!("{n}m"), format!("in {n} minutes"), format!("{n} min")] {
            prop_assert_eq!(parse_time(&expr, &now, Mode::Later), Ok(want));
        }
    }

    #[test]
    fn clock_time_is_within_a_day_and_on_the_dot(h in 0u32..24, m in 0u32..60) {
        for now in [now_p1(), now_m5()] {
            let due = parse_time(&format!("{h:02}:{m:02}"), &now, Mode::At).unwrap();
            let ahead = due - now.with_timezone(&Utc);
            // This minute means now; any other, its next occurrence.
            prop_assert!(ahead >= Duration::zero() && ahead < Duration::days(1));
            let local = due.with_timezone(&now.timezone());
            prop_assert_eq!((local.hour(), local.minute(), local.second()), (h, m, 0));
        }
    }

    #[test]
    fn relative_never_panics(a in any::<i64>(), b in any::<i64>()) {
        let r = relative(a, b);
        prop_assert!(r == "now" || r.starts_with("in ") || r.ends_with(" ago"));
    }
}
