//! Repeating rules: every expression form and refusal, evaluated at a fixed
//! `now` in UTC and in Europe/Berlin around both DST changes (and in New
//! York for a repeated 01:30).

use chrono::{DateTime, TimeZone, Utc};
use chrono_tz::America::New_York;
use chrono_tz::Europe::Berlin;
use tock::recur::{self, Position, RecurError, Rule, catch_up};

fn utc_at(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, 0).unwrap()
}

/// The next three occurrences as local wall-clock times with offsets.
fn next3<Tz: TimeZone>(expr: &str, now: &DateTime<Tz>) -> (String, Vec<String>)
where
    Tz::Offset: std::fmt::Display,
{
    let s = recur::parse(expr, now).unwrap_or_else(|e| panic!("{expr}: {e}"));
    let times = s
        .next_occurrences(now, 3)
        .into_iter()
        .map(|t| {
            t.with_timezone(&now.timezone())
                .format("%a %Y-%m-%d %H:%M %z")
                .to_string()
        })
        .collect();
    (s.describe(now), times)
}

#[test]
fn every_form_in_utc() {
    // Tue 1 Dec 2026 10:00 UTC.
    let now = utc_at(2026, 12, 1, 10, 0);
    let table: &[(&str, &str, [&str; 3])] = &[
        (
            "every day at 9am",
            "every day at 09:00",
            [
                "Wed 2026-12-02 09:00",
                "Thu 2026-12-03 09:00",
                "Fri 2026-12-04 09:00",
            ],
        ),
        (
            "day at 9am",
            "every day at 09:00",
            [
                "Wed 2026-12-02 09:00",
                "Thu 2026-12-03 09:00",
                "Fri 2026-12-04 09:00",
            ],
        ),
        (
            "daily 18:00",
            "every day at 18:00",
            [
                "Tue 2026-12-01 18:00",
                "Wed 2026-12-02 18:00",
                "Thu 2026-12-03 18:00",
            ],
        ),
        (
            "every weekday 9am",
            "every weekday at 09:00",
            [
                "Wed 2026-12-02 09:00",
                "Thu 2026-12-03 09:00",
                "Fri 2026-12-04 09:00",
            ],
        ),
        (
            "weekdays 9am",
            "every weekday at 09:00",
            [
                "Wed 2026-12-02 09:00",
                "Thu 2026-12-03 09:00",
                "Fri 2026-12-04 09:00",
            ],
        ),
        (
            "every weekend 10:00",
            "every weekend day at 10:00",
            [
                "Sat 2026-12-05 10:00",
                "Sun 2026-12-06 10:00",
                "Sat 2026-12-12 10:00",
            ],
        ),
        (
            "every monday 10:00",
            "every Monday at 10:00",
            [
                "Mon 2026-12-07 10:00",
                "Mon 2026-12-14 10:00",
                "Mon 2026-12-21 10:00",
            ],
        ),
        (
            "Every Mondays at 10am",
            "every Monday at 10:00",
            [
                "Mon 2026-12-07 10:00",
                "Mon 2026-12-14 10:00",
                "Mon 2026-12-21 10:00",
            ],
        ),
        (
            "every mon,wed,fri 8:30",
            "every Mon, Wed and Fri at 08:30",
            [
                "Wed 2026-12-02 08:30",
                "Fri 2026-12-04 08:30",
                "Mon 2026-12-07 08:30",
            ],
        ),
        (
            "every mon, wed and fri at 8.30 am",
            "every Mon, Wed and Fri at 08:30",
            [
                "Wed 2026-12-02 08:30",
                "Fri 2026-12-04 08:30",
                "Mon 2026-12-07 08:30",
            ],
        ),
        (
            "every tue-thu noon",
            "every Tue, Wed and Thu at 12:00",
            [
                "Tue 2026-12-01 12:00",
                "Wed 2026-12-02 12:00",
                "Thu 2026-12-03 12:00",
            ],
        ),
        (
            "every mon-fri 9am",
            "every weekday at 09:00",
            [
                "Wed 2026-12-02 09:00",
                "Thu 2026-12-03 09:00",
                "Fri 2026-12-04 09:00",
            ],
        ),
        (
            "every 2h",
            "every 2 hours",
            [
                "Tue 2026-12-01 12:00",
                "Tue 2026-12-01 14:00",
                "Tue 2026-12-01 16:00",
            ],
        ),
        (
            "every 30 minutes",
            "every 30 minutes",
            [
                "Tue 2026-12-01 10:30",
                "Tue 2026-12-01 11:00",
                "Tue 2026-12-01 11:30",
            ],
        ),
        (
            "hourly",
            "every hour",
            [
                "Tue 2026-12-01 11:00",
                "Tue 2026-12-01 12:00",
                "Tue 2026-12-01 13:00",
            ],
        ),
        (
            "every minute",
            "every minute",
            [
                "Tue 2026-12-01 10:01",
                "Tue 2026-12-01 10:02",
                "Tue 2026-12-01 10:03",
            ],
        ),
        (
            "every 1h30m",
            "every 1h 30m",
            [
                "Tue 2026-12-01 11:30",
                "Tue 2026-12-01 13:00",
                "Tue 2026-12-01 14:30",
            ],
        ),
        (
            "every 3 days",
            "every 3 days",
            [
                "Fri 2026-12-04 10:00",
                "Mon 2026-12-07 10:00",
                "Thu 2026-12-10 10:00",
            ],
        ),
        (
            "every month on the 1st 9am",
            "every month on the 1st at 09:00",
            [
                "Fri 2027-01-01 09:00",
                "Mon 2027-02-01 09:00",
                "Mon 2027-03-01 09:00",
            ],
        ),
        (
            "monthly on the 15th",
            "every month on the 15th at 09:00",
            [
                "Tue 2026-12-15 09:00",
                "Fri 2027-01-15 09:00",
                "Mon 2027-02-15 09:00",
            ],
        ),
        (
            "every month on the 31st 9am",
            "every month on the 31st at 09:00",
            [
                "Thu 2026-12-31 09:00",
                "Sun 2027-01-31 09:00",
                "Wed 2027-03-31 09:00",
            ],
        ),
        (
            "every month on the last day 18:00",
            "every month on the last day at 18:00",
            [
                "Thu 2026-12-31 18:00",
                "Sun 2027-01-31 18:00",
                "Sun 2027-02-28 18:00",
            ],
        ),
        (
            "every year dec 24 18:00",
            "every year on 24 Dec at 18:00",
            [
                "Thu 2026-12-24 18:00",
                "Fri 2027-12-24 18:00",
                "Sun 2028-12-24 18:00",
            ],
        ),
        (
            "every year on the 1st of january at 00:00",
            "every year on 1 Jan at 00:00",
            [
                "Fri 2027-01-01 00:00",
                "Sat 2028-01-01 00:00",
                "Mon 2029-01-01 00:00",
            ],
        ),
        (
            "every year feb 29 9am",
            "every year on 29 Feb at 09:00",
            [
                "Tue 2028-02-29 09:00",
                "Sun 2032-02-29 09:00",
                "Fri 2036-02-29 09:00",
            ],
        ),
        (
            "cron \"0 9 * * 1-5\"",
            "cron \"0 9 * * 1-5\" (at 09:00, on Monday, Tuesday, Wednesday, Thursday, and Friday)",
            [
                "Wed 2026-12-02 09:00",
                "Thu 2026-12-03 09:00",
                "Fri 2026-12-04 09:00",
            ],
        ),
        (
            "cron '*/15 * * * *'",
            "cron \"*/15 * * * *\" (every 15 minutes)",
            [
                "Tue 2026-12-01 10:15",
                "Tue 2026-12-01 10:30",
                "Tue 2026-12-01 10:45",
            ],
        ),
        (
            "cron 0 9 1 * *",
            "",
            [
                "Fri 2027-01-01 09:00",
                "Mon 2027-02-01 09:00",
                "Mon 2027-03-01 09:00",
            ],
        ),
        (
            "every day at 9am for 2 times",
            "every day at 09:00, 2 times",
            ["Wed 2026-12-02 09:00", "Thu 2026-12-03 09:00", ""],
        ),
        (
            "every day at 9am until dec 3",
            "every day at 09:00, until Thu 3 Dec 23:59",
            ["Wed 2026-12-02 09:00", "Thu 2026-12-03 09:00", ""],
        ),
        (
            "every 2h for 5 hours",
            "",
            ["Tue 2026-12-01 12:00", "Tue 2026-12-01 14:00", ""],
        ),
        (
            "every weekday 9am until 2026-12-03 for 10 times",
            "",
            ["Wed 2026-12-02 09:00", "Thu 2026-12-03 09:00", ""],
        ),
    ];
    for (expr, words, want) in table {
        let (desc, got) = next3(expr, &now);
        if !words.is_empty() {
            assert_eq!(&desc, words, "{expr}");
        }
        let want: Vec<String> = want
            .iter()
            .filter(|w| !w.is_empty())
            .map(|w| format!("{w} +0000"))
            .collect();
        assert_eq!(got, want, "{expr}");
    }
}

/// `yearly`, `annually`, `every year` without a date: the date it is
/// said on, every year, at the time given (09:00 without one), as
/// `daily` and `monthly` stand alone.
#[test]
fn yearly_alone_is_this_date_every_year() {
    // Tue 1 Dec 2026 10:00 UTC: 09:00 today has passed, 18:00 has not.
    let now = utc_at(2026, 12, 1, 10, 0);
    let this_evening = [
        "Tue 2026-12-01 18:00 +0000",
        "Wed 2027-12-01 18:00 +0000",
        "Fri 2028-12-01 18:00 +0000",
    ];
    for expr in [
        "yearly 18:00",
        "annually at 6pm",
        "every year at 18:00",
        "every year 6pm",
    ] {
        assert_eq!(
            next3(expr, &now),
            (
                "every year on 1 Dec at 18:00".to_string(),
                this_evening.map(String::from).to_vec()
            ),
            "{expr}"
        );
    }
    for expr in ["yearly", "annually", "every year"] {
        assert_eq!(
            next3(expr, &now),
            (
                "every year on 1 Dec at 09:00".to_string(),
                vec![
                    "Wed 2027-12-01 09:00 +0000".to_string(),
                    "Fri 2028-12-01 09:00 +0000".to_string(),
                    "Sat 2029-12-01 09:00 +0000".to_string(),
                ]
            ),
            "{expr}"
        );
    }
    // Said on 29 Feb, it is 29 Feb, as `every year feb 29` is: leap years.
    let leap_day = utc_at(2028, 2, 29, 10, 0);
    assert_eq!(
        next3("yearly 18:00", &leap_day),
        (
            "every year on 29 Feb at 18:00".to_string(),
            vec![
                "Tue 2028-02-29 18:00 +0000".to_string(),
                "Sun 2032-02-29 18:00 +0000".to_string(),
                "Fri 2036-02-29 18:00 +0000".to_string(),
            ]
        )
    );
    // The date is the user's: 23:30 in New York on 1 Dec is 2 Dec in UTC.
    let evening_ny = New_York.with_ymd_and_hms(2026, 12, 1, 23, 30, 0).unwrap();
    assert_eq!(
        next3("yearly 23:45", &evening_ny).0,
        "every year on 1 Dec at 23:45"
    );
    // With its ends, in a message, and stored: the date is written out,
    // so the stored rule reads back the same on any later day.
    let (s, text) = recur::split_prefix("yearly 18:00 for 3 times renew the domain", &now)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (s.describe(&now).as_str(), text.as_str()),
        ("every year on 1 Dec at 18:00, 3 times", "renew the domain")
    );
    let (s, text) =
        recur::split_prefix("annually happy birthday", &now).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (s.rule.describe().as_str(), text.as_str()),
        ("every year on 1 Dec at 09:00", "happy birthday")
    );
    assert_eq!(Rule::parse(&s.rule.expression()).unwrap(), s.rule);
}

/// A cron rule's words start in lower case like every other rule's
/// (`every day at 09:00`), whichever sentence the pattern makes.
#[test]
fn cron_descriptions_read_like_the_other_rules() {
    let now = utc_at(2026, 12, 1, 10, 0);
    for (pattern, words) in [
        ("* * * * *", "every minute"),
        ("* 9 * * *", "every minute past hour 9"),
        ("* * * jan *", "every minute, in January"),
        ("*/5 * * * *", "every 5 minutes"),
        ("0 9 * * 1", "at 09:00, on Monday"),
        ("0 * * * *", "at minute 0 past every hour"),
    ] {
        let s = recur::parse(&format!("cron \"{pattern}\""), &now).unwrap();
        assert_eq!(
            s.describe(&now),
            format!("cron \"{pattern}\" ({words})"),
            "{pattern}"
        );
    }
}

#[test]
fn refusals_are_one_line_reasons() {
    let now = utc_at(2026, 12, 1, 10, 0);
    let cases: &[(&str, &str)] = &[
        ("", "empty rule"),
        ("every", "can't read"),
        (
            "every blah",
            "can't read \"every blah\" as a repeating rule",
        ),
        ("every 30 seconds", "more often than once a minute"),
        ("every 59s", "more often than once a minute"),
        ("every second", "more often than once a minute"),
        ("cron \"0 0 30 2 *\"", "never fires"),
        ("cron \"0 9 * *\"", "cron"),
        (
            "cron \"61 9 * * *\"",
            "cron \"61 9 * * *\": the minute field \"61\" is not valid (0-59)",
        ),
        (
            "cron \"0 9 * 13 *\"",
            "the month field \"13\" is not valid (1-12 or jan-dec)",
        ),
        ("every day at 9am for 0 times", "never fires: 0 times"),
        ("every year feb 30", "no such date or time"),
        ("every month on the 32nd", "no such date or time"),
        ("every day at 25:00", "no such date or time"),
        ("every day at 9am utc", "follows your local time"),
        ("every day at 9am until today", "ends before it starts"),
        ("every 2h until 2026-12-01 11:00", "ends before it starts"),
        ("every day at 9am until 2020-01-01", "in the past"),
        ("every day at 9am until blah", "can't read"),
    ];
    for (expr, want) in cases {
        let e = recur::parse(expr, &now).expect_err(expr).to_string();
        assert!(e.contains(want), "{expr}: {e}");
        assert!(!e.contains('\n'), "{expr}: {e}");
    }
}

#[test]
fn berlin_spring_forward_keeps_local_time_and_fires_a_gap_time_once() {
    // Fri 27 Mar 2026 12:00 CET; clocks jump 02:00 -> 03:00 on Sun 29 Mar.
    let now = Berlin.with_ymd_and_hms(2026, 3, 27, 12, 0, 0).unwrap();
    let (_, t) = next3("every day at 9am", &now);
    assert_eq!(
        t,
        [
            "Sat 2026-03-28 09:00 +0100",
            "Sun 2026-03-29 09:00 +0200",
            "Mon 2026-03-30 09:00 +0200"
        ]
    );
    // 02:30 does not exist on the 29th: once, at the first instant after the gap.
    let (_, t) = next3("every day at 2:30", &now);
    assert_eq!(
        t,
        [
            "Sat 2026-03-28 02:30 +0100",
            "Sun 2026-03-29 03:00 +0200",
            "Mon 2026-03-30 02:30 +0200"
        ]
    );
    let (_, t) = next3("cron \"30 2 * * *\"", &now);
    assert_eq!(
        t,
        [
            "Sat 2026-03-28 02:30 +0100",
            "Sun 2026-03-29 03:00 +0200",
            "Mon 2026-03-30 02:30 +0200"
        ]
    );
    // Intervals are exact elapsed time across the jump.
    let night = Berlin.with_ymd_and_hms(2026, 3, 29, 0, 30, 0).unwrap();
    let s = recur::parse("every 2h", &night).unwrap();
    let t = s.next_occurrences(&night, 3);
    assert_eq!(
        t.iter()
            .map(|t| t.with_timezone(&Berlin).format("%H:%M").to_string())
            .collect::<Vec<_>>(),
        ["03:30", "05:30", "07:30"]
    );
    assert_eq!((t[0] - night.with_timezone(&Utc)).num_minutes(), 120);
    assert_eq!((t[1] - t[0]).num_minutes(), 120);
}

#[test]
fn berlin_fall_back_fires_a_repeated_time_once() {
    // Sat 24 Oct 2026 12:00 CEST; clocks go 03:00 -> 02:00 on Sun 25 Oct.
    let now = Berlin.with_ymd_and_hms(2026, 10, 24, 12, 0, 0).unwrap();
    let (_, t) = next3("every day at 2:30", &now);
    assert_eq!(
        t,
        [
            "Sun 2026-10-25 02:30 +0200",
            "Mon 2026-10-26 02:30 +0100",
            "Tue 2026-10-27 02:30 +0100"
        ]
    );
    let (_, t) = next3("every weekend 9am", &now);
    assert_eq!(
        t,
        [
            "Sun 2026-10-25 09:00 +0100",
            "Sat 2026-10-31 09:00 +0100",
            "Sun 2026-11-01 09:00 +0100"
        ]
    );
    // The hour that happens twice is 25 hours of elapsed time for a daily rule.
    let s = recur::parse("every day at 9am", &now).unwrap();
    let t = s.next_occurrences(&now, 2);
    assert_eq!(
        t[0].with_timezone(&Berlin).format("%d %H:%M").to_string(),
        "25 09:00"
    );
    assert_eq!((t[1] - t[0]).num_hours(), 24);
    let sat = Berlin
        .with_ymd_and_hms(2026, 10, 24, 9, 0, 0)
        .unwrap()
        .with_timezone(&Utc);
    assert_eq!((t[0] - sat).num_hours(), 25);
}

#[test]
fn new_york_repeated_0130_fires_once() {
    // Clocks go 02:00 EDT -> 01:00 EST on Sun 1 Nov 2026.
    let now = New_York.with_ymd_and_hms(2026, 10, 31, 12, 0, 0).unwrap();
    let (_, t) = next3("every day at 1:30am", &now);
    assert_eq!(
        t,
        [
            "Sun 2026-11-01 01:30 -0400",
            "Mon 2026-11-02 01:30 -0500",
            "Tue 2026-11-03 01:30 -0500"
        ]
    );
}

#[test]
fn preview_names_the_next_three() {
    let now = Berlin.with_ymd_and_hms(2026, 11, 30, 8, 0, 0).unwrap();
    let s = recur::parse("every day at 9am", &now).unwrap();
    assert_eq!(s.preview(&now, 3), "next Mon 30 Nov 09:00, then Tue, Wed");
    let s = recur::parse("every 2h", &now).unwrap();
    assert_eq!(
        s.preview(&now, 3),
        "next Mon 30 Nov 10:00, then 12:00, 14:00"
    );
    let s = recur::parse("every monday 10:00", &now).unwrap();
    assert_eq!(
        s.preview(&now, 3),
        "next Mon 30 Nov 10:00, then Mon 7 Dec, Mon 14 Dec"
    );
    let s = recur::parse("every year dec 24 18:00", &now).unwrap();
    assert_eq!(
        s.preview(&now, 2),
        "next Thu 24 Dec 18:00, then Fri 24 Dec 2027"
    );
    // A month's last days: the months without a 31st are seen skipped; a
    // date within the coming months needs no year.
    let s = recur::parse("every month on the 31st 9am", &now).unwrap();
    assert_eq!(
        s.preview(&now, 3),
        "next Thu 31 Dec 09:00, then Sun 31 Jan, Wed 31 Mar"
    );
    // A time that differs from the first's is named.
    let s = recur::parse("every 25h", &now).unwrap();
    assert_eq!(
        s.preview(&now, 3),
        "next Tue 1 Dec 09:00, then Wed 10:00, Thu 11:00"
    );
    // Far dates name their year, each of them (an interval series starts
    // one interval from now: 400 days after 30 Nov 2026 is 4 Jan 2028).
    let s = recur::parse("every 400 days", &now).unwrap();
    assert_eq!(
        s.preview(&now, 3),
        "next Tue 4 Jan 2028 08:00, then Wed 7 Feb 2029, Thu 14 Mar 2030"
    );
}

#[test]
fn split_prefix_takes_the_rule_and_leaves_the_text() {
    let now = utc_at(2026, 12, 1, 10, 0);
    let cases: &[(&str, &str, &str)] = &[
        (
            "every weekday 9am stand-up notes",
            "every weekday at 09:00",
            "stand-up notes",
        ),
        (
            "weekday 9am stand-up notes",
            "every weekday at 09:00",
            "stand-up notes",
        ),
        (
            "every 2h check the queue",
            "every 2 hours",
            "check the queue",
        ),
        (
            "every day at 9am for 5 times summarise my notes",
            "every day at 09:00, 5 times",
            "summarise my notes",
        ),
        (
            "every mon,wed,fri 8:30 Gym!",
            "every Mon, Wed and Fri at 08:30",
            "Gym!",
        ),
        (
            "cron \"0 9 * * 1-5\" morning report",
            "cron \"0 9 * * 1-5\" (at 09:00, on Monday, Tuesday, Wednesday, Thursday, and Friday)",
            "morning report",
        ),
        ("every 1 minute ping", "every minute", "ping"),
    ];
    for (input, words, text) in cases {
        let (s, rest) = recur::split_prefix(input, &now).unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(
            (s.describe(&now).as_str(), rest.as_str()),
            (*words, *text),
            "{input}"
        );
    }
    assert_eq!(
        recur::split_prefix("every day at 9am", &now).unwrap_err(),
        RecurError::NothingToSend
    );
    // An interval written two ways with text after it is asked about, as
    // `/later 1h 30 minutes of reading` is: "30 minutes" may be the text.
    for (typed, whole) in [
        ("every 1h 30 minutes of reading", "1h30m"),
        ("1 hour 30m stretch", "1h30m"),
    ] {
        let e = recur::split_prefix(typed, &now).unwrap_err().to_string();
        assert!(
            e.contains("more of the interval, or the start of the text?")
                && e.contains(&format!("write \"{whole} …\" for that interval")),
            "{typed}: {e}"
        );
        // Each way it offers reads as it says.
        let first = if typed.starts_with("every") {
            "every 1h"
        } else {
            "1 hour"
        };
        let (s, text) = recur::split_prefix(&format!("{whole} x"), &now).unwrap();
        assert_eq!(
            (s.describe(&now).as_str(), text.as_str()),
            ("every 1h 30m", "x")
        );
        let (s, text) = recur::split_prefix(&format!("{first} -- 30 minutes x"), &now).unwrap();
        assert_eq!(
            (s.describe(&now).as_str(), text.as_str()),
            ("every hour", "30 minutes x")
        );
    }
    // Written one way, it is one interval.
    for typed in ["every 1h 30m stretch", "every 1 hour 30 minutes stretch"] {
        let (s, text) = recur::split_prefix(typed, &now).unwrap_or_else(|e| panic!("{typed}: {e}"));
        assert_eq!(
            (s.describe(&now).as_str(), text.as_str()),
            ("every 1h 30m", "stretch")
        );
    }
    assert_eq!(
        recur::split_prefix("every 10 seconds ping", &now).unwrap_err(),
        RecurError::TooOften
    );
    // A zero interval is refused as `/later 0m` is, not as no rule at all.
    for zero in ["0m ping", "every 0m ping", "every 0 minutes ping"] {
        let e = recur::split_prefix(zero, &now).unwrap_err();
        assert_eq!(e.to_string(), "a duration must be positive", "{zero}");
    }
    // An end that cannot be read, or is past, is refused, not sent as the
    // message's first words (the series would never end).
    let e = recur::split_prefix("daily 18:00 until yesterday ping", &now).unwrap_err();
    assert_eq!(
        e.to_string(),
        "that time is in the past (Mon 30 Nov 23:59)",
        "{e}"
    );
    let e = recur::split_prefix("every day 9am until blursday ping", &now).unwrap_err();
    assert!(e.to_string().contains("blursday"), "{e}");
    // A past end after the message is refused as one before it is (kept
    // as the message's last words, it made a series that never ends).
    for past in [
        "fri 5pm weekly review until 2020-12-01",
        "every day 9am stretch until 1 jan 2021",
    ] {
        match recur::split_prefix(past, &now) {
            Err(e) => assert!(e.to_string().contains("in the past"), "{past}: {e}"),
            Ok((_, text)) => panic!("{past}: taken, with the text {text:?}"),
        }
    }
    // Words after a date are the message's: no end, not refused.
    let (s, rest) = recur::split_prefix("daily 18:00 closed until fri then open", &now).unwrap();
    assert!(s.until.is_none());
    assert_eq!(rest, "closed until fri then open");
    let (s, rest) = recur::split_prefix("daily 18:00 until dec 24 ping", &now).unwrap();
    assert!(s.until.is_some());
    assert_eq!(rest, "ping");
    // `for` is as common in a message as in a rule: read as the text.
    let (s, rest) = recur::split_prefix("daily 18:00 for the team: stand-up", &now).unwrap();
    assert_eq!((s.until, rest.as_str()), (None, "for the team: stand-up"));
    // "for N times" at the end is the series' count, where English says it.
    let (s, rest) = recur::split_prefix("every mon,wed,fri 8:30 gym for 5 times", &now).unwrap();
    assert_eq!((s.count, rest.as_str()), (Some(5), "gym"));
    assert!(s.describe(&now).contains("5 times"), "{}", s.describe(&now));
    let (s, rest) = recur::split_prefix("daily 9am stretch for 1 time", &now).unwrap();
    assert_eq!((s.count, rest.as_str()), (Some(1), "stretch"));
    // Not a duration, nor a count said before the text, nor nothing left.
    let (s, rest) = recur::split_prefix("daily 9am meditate for 10 minutes", &now).unwrap();
    assert_eq!((s.count, rest.as_str()), (None, "meditate for 10 minutes"));
    let (s, rest) = recur::split_prefix("daily 9am for 3 times gym", &now).unwrap();
    assert_eq!((s.count, rest.as_str()), (Some(3), "gym"));
    let (s, rest) = recur::split_prefix("daily 9am for 2 times gym for 5 times", &now).unwrap();
    assert_eq!((s.count, rest.as_str()), (Some(2), "gym for 5 times"));
    assert!(recur::split_prefix("daily 9am for 0 times", &now).is_err());

    // Every end said after the text: a span of days or weeks, and a date.
    let day_ms = 86_400_000;
    let now_ms = now.with_timezone(&Utc).timestamp_millis();
    let (s, rest) = recur::split_prefix("every day at 9am take pill for 2 weeks", &now).unwrap();
    assert_eq!(
        (rest.as_str(), s.until),
        ("take pill", Some(now_ms + 14 * day_ms))
    );
    assert!(s.describe(&now).contains("until"), "{}", s.describe(&now));
    let (s, rest) = recur::split_prefix("every day 9am fast for 3 days", &now).unwrap();
    assert_eq!(
        (rest.as_str(), s.until),
        ("fast", Some(now_ms + 3 * day_ms))
    );
    let (s, rest) = recur::split_prefix("every day 9am stretch until fri", &now).unwrap();
    assert_eq!(rest, "stretch");
    assert!(s.until.is_some());
    let (s, rest) = recur::split_prefix("every day 9am water plants until dec 24", &now).unwrap();
    let by_rule = recur::parse("every day 9am until dec 24", &now).unwrap();
    assert_eq!((rest.as_str(), s.until), ("water plants", by_rule.until));
    // Both, in either order.
    let (s, rest) =
        recur::split_prefix("every day 9am gym for 5 times until dec 24", &now).unwrap();
    assert_eq!(
        (rest.as_str(), s.count, s.until),
        ("gym", Some(5), by_rule.until)
    );
    let (s, rest) =
        recur::split_prefix("every day 9am gym until dec 24 for 5 times", &now).unwrap();
    assert_eq!(
        (rest.as_str(), s.count, s.until),
        ("gym", Some(5), by_rule.until)
    );
    // What stays text: hours and minutes, an `until` that is no date, an
    // end given before the text already, and the text's only word.
    for (input, text) in [
        ("every day 9am study for 2 hours", "study for 2 hours"),
        ("every day 9am wait until it works", "wait until it works"),
        ("every day 9am study until 5pm", "study until 5pm"),
        ("every day 9am focus until 17:30", "focus until 17:30"),
        (
            "every day 9am until dec 24 gym until dec 20",
            "gym until dec 20",
        ),
        ("every day 9am for 2 weeks gym for 3 days", "gym for 3 days"),
    ] {
        let (_, rest) = recur::split_prefix(input, &now).unwrap();
        assert_eq!(rest, text, "{input}");
    }
}

#[test]
fn catch_up_fires_the_latest_and_counts_the_skipped() {
    let tz = Berlin;
    let rule = Rule::parse("every day at 9am").unwrap();
    let day = |d: u32, h: u32| {
        Berlin
            .with_ymd_and_hms(2026, 12, d, h, 0, 0)
            .unwrap()
            .timestamp_millis()
    };
    let grace = 12 * 3_600_000;
    // Due on the 2nd at 09:00; back on the 8th at 10:00: 7 due, the 8th's fires.
    let c = catch_up(
        &rule,
        &tz,
        Position {
            anchor: day(2, 9),
            next_due: day(2, 9),
            until: None,
            remaining: None,
        },
        day(8, 10),
        grace,
    );
    assert_eq!(
        (c.fire, c.skipped, c.consumed, c.next),
        (Some(day(8, 9)), 6, 7, Some(day(9, 9)))
    );
    // Back after the grace: nothing fires, all skipped.
    let c = catch_up(
        &rule,
        &tz,
        Position {
            anchor: day(2, 9),
            next_due: day(2, 9),
            until: None,
            remaining: None,
        },
        day(8, 22),
        grace,
    );
    assert_eq!((c.fire, c.skipped, c.next), (None, 7, Some(day(9, 9))));
    // On time: fires, nothing skipped.
    let c = catch_up(
        &rule,
        &tz,
        Position {
            anchor: day(2, 9),
            next_due: day(2, 9),
            until: None,
            remaining: None,
        },
        day(2, 9),
        grace,
    );
    assert_eq!(
        (c.fire, c.skipped, c.next),
        (Some(day(2, 9)), 0, Some(day(3, 9)))
    );
    // A count ends it: 3 left, 7 due -> the 4th fires (the last of the budget, within... no: 4th is days old).
    let c = catch_up(
        &rule,
        &tz,
        Position {
            anchor: day(2, 9),
            next_due: day(2, 9),
            until: None,
            remaining: Some(3),
        },
        day(8, 10),
        grace,
    );
    assert_eq!((c.fire, c.skipped, c.consumed, c.next), (None, 3, 3, None));
    // Until the 5th: the latest is the 5th, long past: skipped; ended.
    let c = catch_up(
        &rule,
        &tz,
        Position {
            anchor: day(2, 9),
            next_due: day(2, 9),
            until: Some(day(5, 23)),
            remaining: None,
        },
        day(8, 10),
        grace,
    );
    assert_eq!((c.fire, c.skipped, c.next), (None, 4, None));
    // Intervals: exact arithmetic over a long absence.
    let every = Rule::parse("every 1 minute").unwrap();
    let t0 = day(1, 0);
    let c = catch_up(
        &every,
        &tz,
        Position {
            anchor: t0,
            next_due: t0,
            until: None,
            remaining: None,
        },
        t0 + 365 * 86_400_000 + 30_000,
        grace,
    );
    assert_eq!(c.skipped, 365 * 1440);
    assert_eq!(c.fire, Some(t0 + 365 * 86_400_000));
    assert_eq!(c.next, Some(t0 + 365 * 86_400_000 + 60_000));
    // Back nearer the next occurrence than the last: the next one serves.
    let c = catch_up(
        &every,
        &tz,
        Position {
            anchor: t0,
            next_due: t0,
            until: None,
            remaining: None,
        },
        t0 + 10 * 60_000 - 200,
        grace,
    );
    assert_eq!(
        (c.fire, c.skipped, c.consumed, c.next),
        (None, 10, 10, Some(t0 + 10 * 60_000))
    );
    // ... unless there is no next one: the last of `for 10 times` is sent.
    let c = catch_up(
        &every,
        &tz,
        Position {
            anchor: t0,
            next_due: t0,
            until: None,
            remaining: Some(10),
        },
        t0 + 10 * 60_000 - 200,
        grace,
    );
    assert_eq!(
        (c.fire, c.skipped, c.next),
        (Some(t0 + 9 * 60_000), 9, None)
    );
}

/// `every N months` and `every N years`: wall-clock rules counted from
/// the first occurrence, the day of the month kept (a month without it
/// takes its last day), 29 Feb in leap years only, as `yearly`.
#[test]
fn every_n_months_and_years() {
    // Tue 1 Dec 2026 10:00 UTC: 09:00 today has passed.
    let now = utc_at(2026, 12, 1, 10, 0);
    let table: &[(&str, &str, [&str; 3])] = &[
        (
            "every 6 months",
            "every 6 months on the 1st at 09:00",
            [
                "Tue 2027-06-01 09:00",
                "Wed 2027-12-01 09:00",
                "Thu 2028-06-01 09:00",
            ],
        ),
        (
            "every 3 months on the 15th 9am",
            "every 3 months on the 15th at 09:00",
            [
                "Tue 2026-12-15 09:00",
                "Mon 2027-03-15 09:00",
                "Tue 2027-06-15 09:00",
            ],
        ),
        (
            "every 2 months",
            "every 2 months on the 1st at 09:00",
            [
                "Mon 2027-02-01 09:00",
                "Thu 2027-04-01 09:00",
                "Tue 2027-06-01 09:00",
            ],
        ),
        (
            "6mo 18:00",
            "every 6 months on the 1st at 18:00",
            [
                "Tue 2026-12-01 18:00",
                "Tue 2027-06-01 18:00",
                "Wed 2027-12-01 18:00",
            ],
        ),
        // The 31st: the last day of a month without one, and the 31st
        // again when there is one.
        (
            "every 2 months on the 31st",
            "every 2 months on the 31st at 09:00",
            [
                "Thu 2026-12-31 09:00",
                "Sun 2027-02-28 09:00",
                "Fri 2027-04-30 09:00",
            ],
        ),
        (
            "every other month on the last day 18:00",
            "every 2 months on the last day at 18:00",
            [
                "Thu 2026-12-31 18:00",
                "Sun 2027-02-28 18:00",
                "Fri 2027-04-30 18:00",
            ],
        ),
        (
            "every 12 months on the 29th at 8:30",
            "every 12 months on the 29th at 08:30",
            [
                "Tue 2026-12-29 08:30",
                "Wed 2027-12-29 08:30",
                "Fri 2028-12-29 08:30",
            ],
        ),
        // Years: the date it is said on, as `yearly`, counted from this
        // year: today's 09:00 has gone, so two years on.
        (
            "every 2 years",
            "every 2 years on 1 Dec at 09:00",
            [
                "Fri 2028-12-01 09:00",
                "Sun 2030-12-01 09:00",
                "Wed 2032-12-01 09:00",
            ],
        ),
        (
            "every 2 years at 18:00",
            "every 2 years on 1 Dec at 18:00",
            [
                "Tue 2026-12-01 18:00",
                "Fri 2028-12-01 18:00",
                "Sun 2030-12-01 18:00",
            ],
        ),
        (
            "every 2 years dec 24 18:00",
            "every 2 years on 24 Dec at 18:00",
            [
                "Thu 2026-12-24 18:00",
                "Sun 2028-12-24 18:00",
                "Tue 2030-12-24 18:00",
            ],
        ),
        (
            "every 5 yrs on 2 jan",
            "every 5 years on 2 Jan at 09:00",
            [
                "Sat 2027-01-02 09:00",
                "Fri 2032-01-02 09:00",
                "Fri 2037-01-02 09:00",
            ],
        ),
        // 29 Feb: the years of the series that are leap years.
        (
            "every 2 years feb 29",
            "every 2 years on 29 Feb at 09:00",
            [
                "Tue 2028-02-29 09:00",
                "Sun 2032-02-29 09:00",
                "Fri 2036-02-29 09:00",
            ],
        ),
        (
            "every 3 years on 29 february at 8am",
            "every 3 years on 29 Feb at 08:00",
            [
                "Tue 2028-02-29 08:00",
                "Wed 2040-02-29 08:00",
                "Thu 2052-02-29 08:00",
            ],
        ),
        // Once a month or a year is the rule of its own.
        (
            "every 1 month on the 15th",
            "every month on the 15th at 09:00",
            [
                "Tue 2026-12-15 09:00",
                "Fri 2027-01-15 09:00",
                "Mon 2027-02-15 09:00",
            ],
        ),
        (
            "every 1 year dec 24",
            "every year on 24 Dec at 09:00",
            [
                "Thu 2026-12-24 09:00",
                "Fri 2027-12-24 09:00",
                "Sun 2028-12-24 09:00",
            ],
        ),
        (
            "every 3 months on the 15th 9am for 2 times",
            "every 3 months on the 15th at 09:00, 2 times",
            ["Tue 2026-12-15 09:00", "Mon 2027-03-15 09:00", ""],
        ),
        (
            "every 2 months on the 1st 21",
            "every 2 months on the 1st at 21:00",
            [
                "Tue 2026-12-01 21:00",
                "Mon 2027-02-01 21:00",
                "Thu 2027-04-01 21:00",
            ],
        ),
    ];
    for (expr, words, want) in table {
        let (desc, got) = next3(expr, &now);
        assert_eq!(&desc, words, "{expr}");
        let want: Vec<String> = want
            .iter()
            .filter(|w| !w.is_empty())
            .map(|w| format!("{w} +0000"))
            .collect();
        assert_eq!(got, want, "{expr}");
        // Stored as its words, read back to the same rule.
        let s = recur::parse(expr, &now).unwrap();
        assert_eq!(
            Rule::parse(&s.rule.expression()).unwrap(),
            s.rule,
            "{expr} -> {}",
            s.rule.expression()
        );
    }
    // `every month on the 31st` skips the months without one, as it did.
    let (_, got) = next3("every month on the 31st", &now);
    assert_eq!(
        got,
        [
            "Thu 2026-12-31 09:00 +0000",
            "Sun 2027-01-31 09:00 +0000",
            "Wed 2027-03-31 09:00 +0000"
        ]
    );
}

/// A stored `every N months` rule counts from the series' anchor (its
/// first occurrence), not from now or January: months in between, and
/// after a long absence, are where the anchor puts them.
#[test]
fn every_n_months_counts_from_the_anchor() {
    let tz = Utc;
    let at = |y: i32, mo: u32, d: u32| utc_at(y, mo, d, 9, 0).timestamp_millis();
    let rule = Rule::parse("every 5 months on the 31st at 09:00").unwrap();
    let anchor = at(2027, 1, 31);
    // Jan, Jun (30 days), Nov (30), Apr 2028 (30), Sep (30), Feb 2029 (28).
    let mut t = anchor;
    let mut got = Vec::new();
    for _ in 0..5 {
        t = rule.next_after(&tz, anchor, t).unwrap();
        got.push(t);
    }
    assert_eq!(
        got,
        [
            at(2027, 6, 30),
            at(2027, 11, 30),
            at(2028, 4, 30),
            at(2028, 9, 30),
            at(2029, 2, 28)
        ]
    );
    // Between two, the next is the later one; at one, the one after.
    assert_eq!(
        rule.next_after(&tz, anchor, at(2027, 3, 1)),
        Some(at(2027, 6, 30))
    );
    assert_eq!(
        rule.latest_at_or_before(&tz, anchor, at(2027, 11, 29)),
        Some(at(2027, 6, 30))
    );
    assert_eq!(
        rule.latest_at_or_before(&tz, anchor, at(2027, 11, 30)),
        Some(at(2027, 11, 30))
    );
    // Away from the 1st anchor (March) for two years: the occurrences of
    // Mar and Sep each year are due; the latest fires, within the grace.
    let twice_a_year = Rule::parse("every 6 months on the 15th at 09:00").unwrap();
    let anchor = at(2027, 3, 15);
    let c = catch_up(
        &twice_a_year,
        &tz,
        Position {
            anchor,
            next_due: anchor,
            until: None,
            remaining: None,
        },
        at(2029, 3, 16),
        7 * 86_400_000,
    );
    assert_eq!(
        (c.fire, c.skipped, c.consumed, c.next),
        (Some(at(2029, 3, 15)), 4, 5, Some(at(2029, 9, 15)))
    );
    // Every 2 years from a leap day: 2028, then 2032 (2030 has none).
    let leap = Rule::parse("every 2 years on 29 Feb at 09:00").unwrap();
    let anchor = at(2028, 2, 29);
    assert_eq!(leap.next_after(&tz, anchor, anchor), Some(at(2032, 2, 29)));
    // The rule said before this change reads as it always did.
    for old in [
        "every month on the 1st at 09:00",
        "every month on the last day at 18:00",
        "every year on 24 Dec at 18:00",
    ] {
        let r = Rule::parse(old).unwrap();
        assert!(!matches!(r, Rule::Months { .. }), "{old}: {r:?}");
        assert_eq!(r.expression(), old);
    }
}

/// In a zone with daylight saving, `every N months` keeps local time: 9am
/// stays 9am; a time in the spring gap fires once at the gap's end, as the
/// other wall-clock rules do; one that happens twice fires at the first.
#[test]
fn every_n_months_in_berlin_keeps_local_time() {
    let now = Berlin.with_ymd_and_hms(2024, 1, 10, 12, 0, 0).unwrap();
    let (_, t) = next3("every 3 months on the 15th 9am", &now);
    assert_eq!(
        t,
        [
            "Mon 2024-01-15 09:00 +0100",
            "Mon 2024-04-15 09:00 +0200",
            "Mon 2024-07-15 09:00 +0200"
        ]
    );
    // Clocks jumped 02:00 -> 03:00 on Sun 31 Mar 2024.
    let (_, t) = next3("every 2 months on the last day 2:30", &now);
    assert_eq!(
        t,
        [
            "Wed 2024-01-31 02:30 +0100",
            "Sun 2024-03-31 03:00 +0200",
            "Fri 2024-05-31 02:30 +0200"
        ]
    );
    let (_, monthly) = next3("every month on the last day 2:30", &now);
    assert_eq!(monthly[2], t[1], "as the monthly rule fires it");
    // Clocks went 03:00 -> 02:00 on Sun 27 Oct 2024.
    let (_, t) = next3("every 9 months on the 27th 2:30", &now);
    assert_eq!(
        t,
        [
            "Sat 2024-01-27 02:30 +0100",
            "Sun 2024-10-27 02:30 +0200",
            "Sun 2025-07-27 02:30 +0200"
        ]
    );
}

/// Refused as the other rules are, quoting the words as typed.
#[test]
fn every_n_months_refusals() {
    let now = utc_at(2026, 12, 1, 10, 0);
    for (expr, want) in [
        ("every 0 months", "a duration must be positive".to_string()),
        ("every 0 years dec 24", "a duration must be positive".into()),
        (
            "every 2 Months on the 32nd",
            "no such date or time: \"2 Months on the 32nd\"".into(),
        ),
        (
            "every 2 years FEB 30",
            "no such date or time: \"2 years FEB 30\"".into(),
        ),
        (
            "every 2 months on the 1st 9",
            "\"9\" after \"every 2 months on the 1st\" could be morning or evening — say 9am, 9pm or 21:00"
                .into(),
        ),
        (
            "every 99999999999 months",
            "that is too far in the future".into(),
        ),
    ] {
        assert_eq!(
            recur::parse(expr, &now).map_err(|e| e.to_string()),
            Err(want),
            "{expr}"
        );
    }
    // In a message: the rule, then the text.
    let (s, text) = recur::split_prefix("every 6 months on the 15th 9am see the dentist", &now)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (s.describe(&now).as_str(), text.as_str()),
        ("every 6 months on the 15th at 09:00", "see the dentist")
    );
    let (s, text) = recur::split_prefix("every 2 years renew the passport", &now)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (s.describe(&now).as_str(), text.as_str()),
        ("every 2 years on 1 Dec at 09:00", "renew the passport")
    );
}

/// Errors quote the rule's words as typed, not lower-cased.
#[test]
fn rule_errors_quote_what_was_typed() {
    let now = utc_at(2026, 12, 1, 10, 0);
    for (expr, want) in [
        (
            "Every Mon 9",
            "\"9\" after \"Every Mon\" could be morning or evening — say 9am, 9pm or 21:00",
        ),
        (
            "every Month on the 32ND",
            "no such date or time: \"Month on the 32ND\"",
        ),
        ("every day at 13PM", "no such date or time: \"13PM\""),
        (
            "Every Day at 9AM UTC",
            "\"9AM UTC\" has a time zone — a repeating rule follows your local time: leave out the zone",
        ),
        ("every day until FEB 30", "no such date or time: \"FEB 30\""),
    ] {
        assert_eq!(
            recur::parse(expr, &now).map_err(|e| e.to_string()),
            Err(want.to_string()),
            "{expr}"
        );
    }
}

mod hostile {
    use super::*;
    use proptest::prelude::*;

    fn word() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("every".to_string()),
            Just("day".to_string()),
            Just("weekday".to_string()),
            Just("month".to_string()),
            Just("year".to_string()),
            Just("months".to_string()),
            Just("years".to_string()),
            Just("other".to_string()),
            Just("feb".to_string()),
            Just("on".to_string()),
            Just("the".to_string()),
            Just("at".to_string()),
            Just("until".to_string()),
            Just("for".to_string()),
            Just("times".to_string()),
            Just("cron".to_string()),
            Just("\"".to_string()),
            Just("mon,wed".to_string()),
            Just("fri-mon".to_string()),
            Just("dec".to_string()),
            Just("last".to_string()),
            Just("9am".to_string()),
            Just("2:30".to_string()),
            Just("*/5".to_string()),
            Just("*".to_string()),
            Just("1-5".to_string()),
            "[0-9]{1,3}(st|nd|h|m|s|mo)?",
            "\\PC{1,6}",
        ]
    }

    fn check(expr: &str) -> Result<(), TestCaseError> {
        for now in [
            utc_at(2026, 3, 29, 0, 30),
            Berlin
                .with_ymd_and_hms(2026, 10, 25, 1, 59, 0)
                .unwrap()
                .with_timezone(&Utc),
        ] {
            let local = now.with_timezone(&Berlin);
            if let Ok(s) = recur::parse(expr, &local) {
                let t = s.next_occurrences(&local, 4);
                prop_assert!(!t.is_empty(), "{expr}: accepted but never fires");
                prop_assert!(t[0] > now, "{expr}: first not in the future");
                prop_assert!(t.windows(2).all(|w| w[1] > w[0]), "{expr}: {t:?}");
                prop_assert!(
                    t.windows(2).all(|w| (w[1] - w[0]).num_seconds() >= 60),
                    "{expr}: more often than once a minute: {t:?}"
                );
                let back = Rule::parse(&s.rule.expression());
                prop_assert_eq!(back.as_ref().ok(), Some(&s.rule), "{}", expr);
                prop_assert!(!s.describe(&local).contains('\n'));
            }
            let _ = recur::split_prefix(expr, &local);
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn arbitrary_text_never_panics(s in "\\PC{0,40}") {
            check(&s)?;
        }

        #[test]
        fn rule_word_soup_never_panics_and_what_is_accepted_fires(
            words in prop::collection::vec(word(), 1..8)
        ) {
            check(&words.join(" "))?;
        }
    }
}

/// Parts of the day in a rule, a clock time alone as every day, and every
/// other week on a day (the rows a tester found read wrong in `/every`).
/// Now is Mon 7 Dec 2026 04:22 UTC.
#[test]
fn parts_of_the_day_a_time_alone_and_every_other_week() {
    let now = utc_at(2026, 12, 7, 4, 22);
    let table: &[(&str, &str, [&str; 3])] = &[
        (
            "every sunday night",
            "every Sunday at 21:00",
            [
                "Sun 2026-12-13 21:00",
                "Sun 2026-12-20 21:00",
                "Sun 2026-12-27 21:00",
            ],
        ),
        (
            "every friday evening 6pm",
            "every Friday at 18:00",
            [
                "Fri 2026-12-11 18:00",
                "Fri 2026-12-18 18:00",
                "Fri 2026-12-25 18:00",
            ],
        ),
        (
            "every friday evening 6",
            "every Friday at 18:00",
            [
                "Fri 2026-12-11 18:00",
                "Fri 2026-12-18 18:00",
                "Fri 2026-12-25 18:00",
            ],
        ),
        (
            "every monday evening",
            "every Monday at 19:00",
            [
                "Mon 2026-12-07 19:00",
                "Mon 2026-12-14 19:00",
                "Mon 2026-12-21 19:00",
            ],
        ),
        (
            "every friday afternoon",
            "every Friday at 15:00",
            [
                "Fri 2026-12-11 15:00",
                "Fri 2026-12-18 15:00",
                "Fri 2026-12-25 15:00",
            ],
        ),
        (
            "every weekday morning 7:30",
            "every weekday at 07:30",
            [
                "Mon 2026-12-07 07:30",
                "Tue 2026-12-08 07:30",
                "Wed 2026-12-09 07:30",
            ],
        ),
        (
            "every evening",
            "every day at 19:00",
            [
                "Mon 2026-12-07 19:00",
                "Tue 2026-12-08 19:00",
                "Wed 2026-12-09 19:00",
            ],
        ),
        (
            "every 5pm",
            "every day at 17:00",
            [
                "Mon 2026-12-07 17:00",
                "Tue 2026-12-08 17:00",
                "Wed 2026-12-09 17:00",
            ],
        ),
        (
            "every 9am",
            "every day at 09:00",
            [
                "Mon 2026-12-07 09:00",
                "Tue 2026-12-08 09:00",
                "Wed 2026-12-09 09:00",
            ],
        ),
        (
            "every 21",
            "every day at 21:00",
            [
                "Mon 2026-12-07 21:00",
                "Tue 2026-12-08 21:00",
                "Wed 2026-12-09 21:00",
            ],
        ),
        (
            "every 2 weeks monday 9am",
            "every 2 weeks on Monday at 09:00",
            [
                "Mon 2026-12-07 09:00",
                "Mon 2026-12-21 09:00",
                "Mon 2027-01-04 09:00",
            ],
        ),
        (
            "every other monday 9am",
            "every 2 weeks on Monday at 09:00",
            [
                "Mon 2026-12-07 09:00",
                "Mon 2026-12-21 09:00",
                "Mon 2027-01-04 09:00",
            ],
        ),
        (
            "every other week on tuesday",
            "every 2 weeks on Tuesday at 09:00",
            [
                "Tue 2026-12-08 09:00",
                "Tue 2026-12-22 09:00",
                "Tue 2027-01-05 09:00",
            ],
        ),
        (
            "every 3 weeks on mon, fri at 8:30",
            "every 3 weeks on Mon and Fri at 08:30",
            [
                "Mon 2026-12-07 08:30",
                "Fri 2026-12-11 08:30",
                "Mon 2026-12-28 08:30",
            ],
        ),
        (
            "every 2 weeks on weekends",
            "every 2 weeks on weekends at 09:00",
            [
                "Sat 2026-12-12 09:00",
                "Sun 2026-12-13 09:00",
                "Sat 2026-12-26 09:00",
            ],
        ),
        // One week apart is the weekly rule; two weeks alone, an interval.
        (
            "every 1 week on monday",
            "every Monday at 09:00",
            [
                "Mon 2026-12-07 09:00",
                "Mon 2026-12-14 09:00",
                "Mon 2026-12-21 09:00",
            ],
        ),
        (
            "every 2 weeks",
            "every 2 weeks",
            [
                "Mon 2026-12-21 04:22",
                "Mon 2027-01-04 04:22",
                "Mon 2027-01-18 04:22",
            ],
        ),
    ];
    for (expr, describe, times) in table {
        let (d, t) = next3(expr, &now);
        let times: Vec<String> = times.iter().map(|t| format!("{t} +0000")).collect();
        assert_eq!((d.as_str(), t), (*describe, times), "{expr}");
        // Stored as its words, which read back to the same rule.
        let rule = recur::parse(expr, &now).unwrap().rule;
        assert_eq!(Rule::parse(&rule.expression()).unwrap(), rule, "{expr}");
    }
}

/// `every 2 weeks on …` counts weeks from its first occurrence (the
/// series' anchor), not from whenever it is asked, and keeps local time
/// across a DST change.
#[test]
fn every_n_weeks_counts_from_the_anchor_in_berlin() {
    let rule = Rule::parse("every 2 weeks on Monday at 09:00").unwrap();
    // Anchor: Mon 16 Mar 2026 09:00 CET; the clocks go forward on 29 Mar.
    let anchor = Berlin
        .with_ymd_and_hms(2026, 3, 16, 9, 0, 0)
        .unwrap()
        .timestamp_millis();
    let show = |ms: i64| {
        DateTime::from_timestamp_millis(ms)
            .unwrap()
            .with_timezone(&Berlin)
            .format("%a %Y-%m-%d %H:%M %z")
            .to_string()
    };
    let mut t = anchor;
    let mut seen = Vec::new();
    for _ in 0..3 {
        t = rule.next_after(&Berlin, anchor, t).unwrap();
        seen.push(show(t));
    }
    assert_eq!(
        seen,
        [
            "Mon 2026-03-30 09:00 +0200",
            "Mon 2026-04-13 09:00 +0200",
            "Mon 2026-04-27 09:00 +0200"
        ]
    );
    // Asked from inside the week off: the next week on.
    let tue = Berlin
        .with_ymd_and_hms(2026, 3, 24, 12, 0, 0)
        .unwrap()
        .timestamp_millis();
    assert_eq!(
        show(rule.next_after(&Berlin, anchor, tue).unwrap()),
        "Mon 2026-03-30 09:00 +0200"
    );
    // The latest at or before a time inside the week off: the anchor's.
    assert_eq!(
        show(rule.latest_at_or_before(&Berlin, anchor, tue).unwrap()),
        "Mon 2026-03-16 09:00 +0100"
    );
}

#[test]
fn second_weekday_and_times_outside_their_part_are_refused() {
    let now = utc_at(2026, 12, 7, 4, 22);
    for (expr, want) in [
        (
            "every second monday",
            "\"every second monday\" could be every other Monday or the 2nd Monday of each month — say every other monday, or cron \"0 9 * * 1#2\" for the 2nd",
        ),
        (
            "Every 2nd Friday 9am",
            "\"Every 2nd Friday\" could be every other Friday or the 2nd Friday of each month — say every other friday, or cron \"0 9 * * 5#2\" for the 2nd",
        ),
        (
            "every evening 7am",
            "\"evening 7am\" does not fit: the evening is 17:00–23:59 — give the time alone (e.g. 7am, 19:00)",
        ),
        (
            "every sunday night 1am",
            "\"every sunday night 1am\" falls on the day after the one named — name that day: every monday 01:00",
        ),
        (
            "every friday night 12",
            "\"every friday night 12\" falls on the day after the one named — name that day: every saturday 00:00",
        ),
        (
            "every Weekday Night 2am",
            "\"every Weekday Night 2am\" falls on the day after the one named — name that day: every tue-sat 02:00",
        ),
        (
            "every mon,wed night at 1:30am",
            "\"every mon,wed night at 1:30am\" falls on the day after the one named — name that day: every tue,thu 01:30",
        ),
        (
            "every friday midnight",
            "\"every friday midnight\" falls on the day after the one named — name that day: every saturday 00:00",
        ),
        (
            "every year on the 1st of january at midnight",
            "\"every year on the 1st of january at midn…\" falls on the day after the one named — name that day: every year on the 1st of january at 00:00 for its start, or the day after at 00:00",
        ),
        (
            "every other sunday at midnight",
            "\"every other sunday at midnight\" falls on the day after the one named — name that day: every other monday 00:00",
        ),
        (
            "every 9",
            "\"9\" after \"every\" could be morning or evening — say 9am, 9pm or 21:00",
        ),
    ] {
        match recur::parse(expr, &now) {
            Ok(s) => panic!("{expr} read as {}", s.rule.describe()),
            Err(e) => assert_eq!(e.to_string(), want, "{expr}"),
        }
    }
}

/// The cron pattern the `every second monday` refusal suggests is one
/// tock takes.
#[test]
fn the_suggested_cron_for_a_2nd_weekday_is_taken() {
    let now = utc_at(2026, 12, 7, 4, 22);
    let (_, times) = next3("cron \"0 9 * * 1#2\"", &now);
    assert_eq!(
        times,
        [
            "Mon 2026-12-14 09:00 +0000",
            "Mon 2027-01-11 09:00 +0000",
            "Mon 2027-02-08 09:00 +0000"
        ]
    );
}

/// The `/every` rows a tester found: the whole rule read and the text
/// after it, or, when the text starts with more time, asked about.
#[test]
fn split_reads_parts_of_the_day_and_asks_about_more_time_in_the_text() {
    let now = utc_at(2026, 12, 7, 4, 22);
    for (input, describe, text) in [
        (
            "every sunday night check backups",
            "every Sunday at 21:00",
            "check backups",
        ),
        (
            "every friday evening 6pm drinks",
            "every Friday at 18:00",
            "drinks",
        ),
        ("every monday evening x", "every Monday at 19:00", "x"),
        ("every friday afternoon x", "every Friday at 15:00", "x"),
        (
            "every 2 weeks monday 9am payroll check",
            "every 2 weeks on Monday at 09:00",
            "payroll check",
        ),
        ("every 5pm x", "every day at 17:00", "x"),
        ("every 9am x", "every day at 09:00", "x"),
        (
            "every friday 6pm -- evening drinks",
            "every Friday at 18:00",
            "evening drinks",
        ),
        ("daily 9am, check mail", "every day at 09:00", "check mail"),
        // A comma ends the rule: what follows is text.
        (
            "every mon 9am, fri 5pm x",
            "every Monday at 09:00",
            "fri 5pm x",
        ),
        // So does a line break.
        (
            "every mon 9am\nevening drinks",
            "every Monday at 09:00",
            "evening drinks",
        ),
        // Midnight every day is 00:00.
        ("every day midnight x", "every day at 00:00", "x"),
    ] {
        let (s, t) = recur::split_prefix(input, &now).unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(
            (s.rule.describe().as_str(), t.as_str()),
            (describe, text),
            "{input}"
        );
    }
    for (input, want) in [
        (
            "every weekday at 9am and 5pm x",
            "\"and 5pm\" after \"weekday at 9am\": one time per rule — make two, e.g. /every weekday at 9am … and /every weekday 5pm …, or write \"weekday at 9am -- and 5pm …\" to send it as text",
        ),
        (
            "every friday 6pm evening drinks",
            "\"evening\" after \"every friday 6pm\" looks like more of the rule — say it all before the text, or write \"every friday 6pm -- evening …\" to send it as text",
        ),
        (
            "every second monday x",
            "\"every second monday\" could be every other Monday or the 2nd Monday of each month — say every other monday, or cron \"0 9 * * 1#2\" for the 2nd",
        ),
    ] {
        match recur::split_prefix(input, &now) {
            Ok((s, t)) => panic!("{input}: {} | {t}", s.rule.describe()),
            Err(e) => assert_eq!(e.to_string(), want, "{input}"),
        }
    }
}

/// A time said before the days reads as those days at that time, as the
/// other way round: a weekday stand-up never fires on a weekend.
#[test]
fn a_time_before_the_days_is_those_days_at_that_time() {
    // Mon 7 Dec 2026 04:22 UTC.
    let now = utc_at(2026, 12, 7, 4, 22);
    for (input, describe, text) in [
        (
            "every 9am weekdays standup",
            "every weekday at 09:00",
            "standup",
        ),
        ("every 9am mon-fri x", "every weekday at 09:00", "x"),
        ("every 9am on weekdays x", "every weekday at 09:00", "x"),
        ("every 10am weekend x", "every weekend day at 10:00", "x"),
        ("every 9am mon,wed x", "every Mon and Wed at 09:00", "x"),
        ("every 9am on monday x", "every Monday at 09:00", "x"),
        ("every 9 am every friday x", "every Friday at 09:00", "x"),
        ("every 18:30 weekdays x", "every weekday at 18:30", "x"),
    ] {
        let (s, t) = recur::split_prefix(input, &now).unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(
            (s.rule.describe().as_str(), t.as_str()),
            (describe, text),
            "{input}"
        );
    }
    // The whole expression, as `tock send --every` and `schedule_task`
    // take it; the stand-up skips the weekend.
    let (describe, times) = next3("every 9am weekdays", &utc_at(2026, 12, 11, 10, 0));
    assert_eq!(describe, "every weekday at 09:00");
    assert_eq!(
        times,
        [
            "Mon 2026-12-14 09:00 +0000",
            "Tue 2026-12-15 09:00 +0000",
            "Wed 2026-12-16 09:00 +0000"
        ]
    );
    let (describe, _) = next3("9am weekdays until dec 24", &now);
    assert_eq!(describe, "every weekday at 09:00, until Thu 24 Dec 23:59");
}

/// A zone word after a rule's time is refused: a rule follows local time.
#[test]
fn a_zone_after_a_rules_time_is_refused() {
    let now = utc_at(2026, 12, 7, 4, 22);
    for (input, want) in [
        (
            "every 9am PST standup",
            "\"every 9am PST\" has a time zone — a repeating rule follows your local time: leave out the zone",
        ),
        (
            "every weekday 9am gmt+1 x",
            "\"9am\" has a time zone — a repeating rule follows your local time: leave out the zone",
        ),
    ] {
        match recur::split_prefix(input, &now) {
            Ok((s, t)) => panic!("{input}: {} | {t}", s.rule.describe()),
            Err(e) => assert_eq!(e.to_string(), want, "{input}"),
        }
    }
}

/// `every N months` with no day (N of 2 or more) is the day of the month
/// it is said on, counted from the month it is said in, as `every year`
/// is the date it is said on: today if its time is still ahead, else N
/// months on — not the 1st, nor the next month's day. A month without the
/// day takes its last day, as `every N months on the 31st` does. With a
/// day named, the first is the next such day, as before.
#[test]
fn every_n_months_without_a_day_is_the_day_it_is_said_on() {
    // Mon 7 Dec 2026 10:00 UTC: 09:00 today has passed, 18:00 has not.
    let now = utc_at(2026, 12, 7, 10, 0);
    let table: &[(&str, &str, [&str; 3])] = &[
        (
            "every 6 months 9am",
            "every 6 months on the 7th at 09:00",
            [
                "Mon 2027-06-07 09:00",
                "Tue 2027-12-07 09:00",
                "Wed 2028-06-07 09:00",
            ],
        ),
        (
            "every 6 months at 18:00",
            "every 6 months on the 7th at 18:00",
            [
                "Mon 2026-12-07 18:00",
                "Mon 2027-06-07 18:00",
                "Tue 2027-12-07 18:00",
            ],
        ),
        (
            "every other month",
            "every 2 months on the 7th at 09:00",
            [
                "Sun 2027-02-07 09:00",
                "Wed 2027-04-07 09:00",
                "Mon 2027-06-07 09:00",
            ],
        ),
        (
            "3mo evening",
            "every 3 months on the 7th at 19:00",
            [
                "Mon 2026-12-07 19:00",
                "Sun 2027-03-07 19:00",
                "Mon 2027-06-07 19:00",
            ],
        ),
        // A day named: its next occurrence, as before.
        (
            "every 6 months on the 7th 9am",
            "every 6 months on the 7th at 09:00",
            [
                "Thu 2027-01-07 09:00",
                "Wed 2027-07-07 09:00",
                "Fri 2028-01-07 09:00",
            ],
        ),
    ];
    for (expr, words, want) in table {
        let (desc, got) = next3(expr, &now);
        assert_eq!(&desc, words, "{expr}");
        let want: Vec<String> = want.iter().map(|w| format!("{w} +0000")).collect();
        assert_eq!(got, want, "{expr}");
        // Stored with its day written out, read back to the same rule.
        let s = recur::parse(expr, &now).unwrap();
        assert_eq!(Rule::parse(&s.rule.expression()).unwrap(), s.rule, "{expr}");
    }
    // Said on the 31st: the last day of the months without one, never a
    // half year skipped.
    let last = utc_at(2026, 8, 31, 10, 0);
    assert_eq!(
        next3("every 6 months", &last),
        (
            "every 6 months on the 31st at 09:00".to_string(),
            vec![
                "Sun 2027-02-28 09:00 +0000".to_string(),
                "Tue 2027-08-31 09:00 +0000".to_string(),
                "Tue 2028-02-29 09:00 +0000".to_string(),
            ]
        )
    );
    // In a message, and as the engine takes it (from the schedule).
    let (s, text) = recur::split_prefix("every 6 months 9am see the dentist", &now)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(text, "see the dentist");
    assert_eq!(
        s.first_in(&Utc, now.timestamp_millis()),
        Some(utc_at(2027, 6, 7, 9, 0).timestamp_millis())
    );
}
