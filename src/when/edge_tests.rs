use super::*;
use chrono::{DateTime, Datelike, Duration, FixedOffset, TimeZone, Utc};

/// +01:00; Mon 7 Dec 2026 at `h`:`m`.
fn mon(h: u32, m: u32) -> DateTime<FixedOffset> {
    FixedOffset::east_opt(3600)
        .and_then(|z| z.with_ymd_and_hms(2026, 12, 7, h, m, 0).single())
        .expect("fixture")
}
/// +01:00, December 2026.
fn at(d: u32, h: u32, m: u32) -> DateTime<Utc> {
    mon(h, m).with_day(d).expect("fixture").with_timezone(&Utc)
}
fn split(typed: &str, now: &DateTime<FixedOffset>) -> Result<(DateTime<Utc>, String), String> {
    split_time_prefix(typed, now, Mode::At).map_err(|e| e.to_string())
}

#[test]
fn a_line_break_ends_the_time() {
    let now = mon(10, 0);
    for (typed, want, text) in [
        (
            "9am\nfriday report draft",
            at(8, 9, 0),
            "friday report draft",
        ),
        ("9am\nevening class", at(8, 9, 0), "evening class"),
        ("9am\n5pm x", at(8, 9, 0), "5pm x"),
        (
            "fri 9am\nmonday prep\nmore",
            at(11, 9, 0),
            "monday prep\nmore",
        ),
        ("9am friday\nprep", at(11, 9, 0), "prep"),
        ("9am x\n-- y", at(8, 9, 0), "x\n-- y"),
    ] {
        assert_eq!(split(typed, &now), Ok((want, text.into())), "{typed:?}");
    }
    // Later too.
    assert_eq!(
        split_time_prefix("1h\n30m of reading", &now, Mode::Later),
        Ok((at(7, 11, 0), "30m of reading".into()))
    );
}

#[test]
fn a_day_after_a_clock_time_with_text_on_the_line_is_asked_about() {
    let now = mon(10, 0);
    for (typed, time, day) in [
        ("9am friday prep", "9am", "friday"),
        ("9am Monday prep", "9am", "Monday"),
        ("9 am fri notes", "9 am", "fri"),
        ("9am in 2 days x", "9am", "in 2 days"),
    ] {
        assert_eq!(
            split_time_prefix(typed, &now, Mode::At),
            Err(WhenError::DayAfterClock {
                time: time.into(),
                day: day.into()
            }),
            "{typed:?}"
        );
    }
    assert_eq!(
        split("9am friday prep", &now),
        Err("\"friday\" after \"9am\": the day of the time, or the start of the text? — write \"friday 9am …\" for that day, or \"9am -- friday …\" for the text".into())
    );
    // Said either way it is clear.
    for (typed, want, text) in [
        ("friday 9am prep", at(11, 9, 0), "prep"),
        ("9am on friday prep", at(11, 9, 0), "prep"),
        ("9am friday -- prep", at(11, 9, 0), "prep"),
        ("9am -- friday prep", at(8, 9, 0), "friday prep"),
    ] {
        assert_eq!(split(typed, &now), Ok((want, text.into())), "{typed:?}");
    }
}

#[test]
fn a_comma_after_a_time_ends_it() {
    let now = mon(10, 0);
    for (typed, want, text) in [
        ("9am, tomorrow we plan", at(8, 9, 0), "tomorrow we plan"),
        ("9am, monday report", at(8, 9, 0), "monday report"),
        ("9am, evening class", at(8, 9, 0), "evening class"),
        ("9am, 5pm x", at(8, 9, 0), "5pm x"),
        ("fri 9am, call mom", at(11, 9, 0), "call mom"),
    ] {
        assert_eq!(split(typed, &now), Ok((want, text.into())), "{typed:?}");
    }
    // An explicit joiner is still a second time, and the message offers --.
    assert_eq!(
        split("9am and 5pm x", &now),
        Err("\"and 5pm\" after \"9am\": one time per message — send two, /at 9am … and /at 5pm …, or write \"9am -- and 5pm …\" to send it as text".into())
    );
}

#[test]
fn midnight_after_a_day_is_the_end_of_that_day() {
    // Mon 7 Dec 10:00.
    let now = mon(10, 0);
    for (typed, want) in [
        ("fri midnight", at(12, 0, 0)),
        ("friday at midnight", at(12, 0, 0)),
        ("midnight fri", at(12, 0, 0)),
        ("fri night 12", at(12, 0, 0)),
        ("tomorrow midnight", at(9, 0, 0)),
        ("today midnight", at(8, 0, 0)),
        ("tonight midnight", at(8, 0, 0)),
        ("midnight", at(8, 0, 0)),
        ("2026-12-24 midnight", at(25, 0, 0)),
        // 00:00 and 12am stay the start of the day named.
        ("fri 00:00", at(11, 0, 0)),
        ("fri 12am", at(11, 0, 0)),
    ] {
        assert_eq!(parse_time(typed, &now, Mode::At), Ok(want), "{typed:?}");
    }
}

#[test]
fn tonight_in_the_small_hours_is_this_night() {
    // Mon 7 Dec 00:15.
    let now = mon(0, 15);
    for (typed, want) in [
        ("tonight 1am", at(7, 1, 0)),
        ("tonight 2am", at(7, 2, 0)),
        ("night 1am", at(7, 1, 0)),
        ("tonight 12:10am", at(8, 0, 10)),
        ("tonight midnight", at(8, 0, 0)),
        ("tonight", at(7, 21, 0)),
    ] {
        assert_eq!(parse_time(typed, &now, Mode::At), Ok(want), "{typed:?}");
    }
    // Once the night is over (05:00) `tonight 1am` is the next one.
    assert_eq!(
        parse_time("tonight 1am", &mon(10, 0), Mode::At),
        Ok(at(8, 1, 0))
    );
}

#[test]
fn tomorrow_morning_before_4am_is_asked_about() {
    let now = mon(0, 15);
    for (typed, today, next) in [
        ("tomorrow morning", "this morning", "tue morning"),
        ("Tomorrow Morning 7", "this morning 7", "tue morning 7"),
        (
            "tomorrow in the morning",
            "today in the morning",
            "tue in the morning",
        ),
    ] {
        let (t, n) = if typed.ends_with('7') {
            ("07:00", "07:00")
        } else {
            ("09:00", "09:00")
        };
        assert_eq!(
            parse_time(typed, &now, Mode::At).map_err(|e| e.to_string()),
            Err(format!(
                "{typed:?} at 00:15, before the night is over, could be Mon 7 Dec {t} or Tue 8 Dec {n} — say {today} or {next}"
            )),
            "{typed:?}"
        );
    }
    // Either morning said plainly is taken.
    for (typed, want) in [
        ("this morning", at(7, 9, 0)),
        ("today morning", at(7, 9, 0)),
        ("tue morning", at(8, 9, 0)),
    ] {
        assert_eq!(parse_time(typed, &now, Mode::At), Ok(want), "{typed:?}");
    }
    // From 04:00 tomorrow morning is the calendar's.
    assert_eq!(
        parse_time("tomorrow morning", &mon(4, 0), Mode::At),
        Ok(at(8, 9, 0))
    );
}

/// Any time said with `tomorrow` in the small hours (until 04:00), while
/// that time today is still ahead, is asked about as `tomorrow morning`
/// is: this day, or the next? Each suggested spelling reads as its day.
#[test]
fn tomorrow_with_a_time_before_4am_is_asked_about() {
    let now = mon(0, 30);
    for (typed, today_at, next_at, today, next) in [
        (
            "tomorrow 9am",
            at(7, 9, 0),
            at(8, 9, 0),
            "today 9am",
            "tue 9am",
        ),
        (
            "tomorrow at 9am",
            at(7, 9, 0),
            at(8, 9, 0),
            "today at 9am",
            "tue at 9am",
        ),
        (
            "9am tomorrow",
            at(7, 9, 0),
            at(8, 9, 0),
            "today 9am",
            "tue 9am",
        ),
        (
            "tomorrow, 9am",
            at(7, 9, 0),
            at(8, 9, 0),
            "today 9am",
            "tue 9am",
        ),
        (
            "tmrw 14:30",
            at(7, 14, 30),
            at(8, 14, 30),
            "today 14:30",
            "tue 14:30",
        ),
        (
            "Tomorrow 21",
            at(7, 21, 0),
            at(8, 21, 0),
            "today 21",
            "tue 21",
        ),
        (
            "tomorrow noon",
            at(7, 12, 0),
            at(8, 12, 0),
            "today noon",
            "tue noon",
        ),
        (
            "tomorrow evening",
            at(7, 19, 0),
            at(8, 19, 0),
            "this evening",
            "tue evening",
        ),
        (
            "tomorrow afternoon 2",
            at(7, 14, 0),
            at(8, 14, 0),
            "this afternoon 2",
            "tue afternoon 2",
        ),
        (
            "tomorrow night",
            at(7, 21, 0),
            at(8, 21, 0),
            "tonight",
            "tue night",
        ),
        (
            "tomorrow night 1am",
            at(8, 1, 0),
            at(9, 1, 0),
            "today night 1am",
            "tue night 1am",
        ),
        (
            "tomorrow midnight",
            at(8, 0, 0),
            at(9, 0, 0),
            "today midnight",
            "tue midnight",
        ),
    ] {
        let show = |t: DateTime<Utc>| absolute(t, &now);
        assert_eq!(
            parse_time(typed, &now, Mode::At).map_err(|e| e.to_string()),
            Err(format!(
                "{typed:?} at 00:30, before the night is over, could be {} or {} — say {today} or {next}",
                show(today_at),
                show(next_at)
            )),
            "{typed:?}"
        );
        // Each way of saying it is read, as the day it names.
        assert_eq!(parse_time(today, &now, Mode::At), Ok(today_at), "{today:?}");
        assert_eq!(parse_time(next, &now, Mode::At), Ok(next_at), "{next:?}");
    }
    // With text after it, in the composer: asked, not sent.
    assert_eq!(
        split("tomorrow 9am call mom", &now),
        Err("\"tomorrow 9am\" at 00:30, before the night is over, could be Mon 7 Dec 09:00 or Tue 8 Dec 09:00 — say today 9am or tue 9am".into())
    );
    // `/later` says it is a point in time, as for any other.
    assert!(matches!(
        parse_time("tomorrow 9am", &now, Mode::Later),
        Err(WhenError::TimeNotDuration(_))
    ));
    // `tomorrow` alone is at 09:00, asked about the same way.
    assert_eq!(
        split("tomorrow standup", &now),
        Err("\"tomorrow\" at 00:30, before the night is over, could be Mon 7 Dec 09:00 or Tue 8 Dec 09:00 — say today 9:00 or tue 9:00".into())
    );
    for (way, want) in [("today 9:00", at(7, 9, 0)), ("tue 9:00", at(8, 9, 0))] {
        assert_eq!(parse_time(way, &now, Mode::At), Ok(want), "{way}");
    }
    // A time today already past is the calendar's next day: there is no
    // other reading.
    let two = mon(2, 0);
    for (typed, want) in [
        ("tomorrow 1am", at(8, 1, 0)),
        ("tomorrow 00:30", at(8, 0, 30)),
        ("tomorrow", at(8, 9, 0)),
        ("tomorrow 9am", at(8, 9, 0)),
    ] {
        let now = if typed == "tomorrow 9am" || typed == "tomorrow" {
            mon(4, 0)
        } else {
            two
        };
        assert_eq!(parse_time(typed, &now, Mode::At), Ok(want), "{typed:?}");
    }
}

#[test]
fn zones_after_a_time() {
    let now = mon(10, 0);
    for (typed, zone) in [
        ("9am PST call client", "PST"),
        ("3pm ET standup", "ET"),
        ("14:00 CET x", "CET"),
        ("9am gmt+25 x", "gmt+25"),
    ] {
        assert_eq!(
            split(typed, &now).map_err(|e| e.split(" after ").next().map(str::to_string)),
            Err(Some(format!("{zone:?}"))),
            "{typed:?}"
        );
    }
    assert_eq!(
        split("9am PST call client", &now),
        Err("\"PST\" after \"9am\": tock reads times in your local zone, in UTC or at a fixed offset (9am utc, 9am gmt+1, 9am -05:00) — give the time in one of those, or write \"9am -- PST …\" to keep it as text".into())
    );
    // Fixed offsets are read: 09:00 at +01:00 is 08:00 UTC, 09:00 at -05:00 14:00 UTC.
    let utc = |d, h| {
        Utc.with_ymd_and_hms(2026, 12, d, h, 0, 0)
            .single()
            .expect("fixture")
    };
    for (typed, want, text) in [
        ("9am GMT+1 x", utc(8, 8), "x"),
        ("9am utc-5 x", utc(7, 14), "x"),
        (
            "tomorrow 14:00 utc+05:30 x",
            utc(8, 8) + Duration::minutes(30),
            "x",
        ),
        ("9am -- PST call", at(8, 9, 0), "PST call"),
    ] {
        assert_eq!(split(typed, &now), Ok((want, text.into())), "{typed:?}");
    }
}

#[test]
fn in_n_days_then_a_time() {
    let now = mon(10, 0);
    for (typed, want, text) in [
        ("in 2 days 9am x", at(9, 9, 0), "x"),
        ("in 2 days at 9am x", at(9, 9, 0), "x"),
        ("in a day 18:00 x", at(8, 18, 0), "x"),
        ("in 1 week 9am x", at(14, 9, 0), "x"),
        ("in 2 days x", at(9, 10, 0), "x"),
    ] {
        assert_eq!(split(typed, &now), Ok((want, text.into())), "{typed:?}");
    }
    assert_eq!(parse_time("9am in 2 days", &now, Mode::At), Ok(at(9, 9, 0)));
    assert_eq!(
        split_time_prefix("9am in 2 hours x", &now, Mode::At),
        Err(WhenError::TimeInText {
            time: "9am".into(),
            said: "in 2 hours".into()
        })
    );
}

/// `next friday` said while this week's Friday is still to come (Mon 7
/// Dec): this week's, or next week's? Asked, with a way to write each
/// that is read as it. Once this week's is gone or today (on Saturday,
/// or on Friday itself) it can only be next week's: kept.
#[test]
fn next_weekday_in_this_week_is_asked_about() {
    let now = mon(10, 0);
    for (typed, first, second, first_way, second_way) in [
        (
            "next friday",
            at(11, 9, 0),
            at(18, 9, 0),
            "this friday",
            "18 dec",
        ),
        (
            "Next Fri 5pm",
            at(11, 17, 0),
            at(18, 17, 0),
            "this fri 5pm",
            "18 dec 5pm",
        ),
        (
            "5pm next friday",
            at(11, 17, 0),
            at(18, 17, 0),
            "this friday 5pm",
            "18 dec 5pm",
        ),
        (
            "next friday evening",
            at(11, 19, 0),
            at(18, 19, 0),
            "this friday evening",
            "18 dec evening",
        ),
        (
            "next tue at 9am",
            at(8, 9, 0),
            at(15, 9, 0),
            "this tue at 9am",
            "15 dec at 9am",
        ),
        (
            "next sunday",
            at(13, 9, 0),
            at(20, 9, 0),
            "this sunday",
            "20 dec",
        ),
    ] {
        let show = |t: DateTime<Utc>| absolute(t, &now);
        assert_eq!(
            parse_time(typed, &now, Mode::At).map_err(|e| e.to_string()),
            Err(format!(
                "{typed:?} could be this week's, {}, or next week's, {} — say {first_way} or {second_way}",
                show(first),
                show(second)
            )),
            "{typed:?}"
        );
        assert_eq!(
            parse_time(first_way, &now, Mode::At),
            Ok(first),
            "{first_way:?}"
        );
        assert_eq!(
            parse_time(second_way, &now, Mode::At),
            Ok(second),
            "{second_way:?}"
        );
    }
    // In the composer, and as the end of a series: asked too.
    assert_eq!(
        split("next friday call mom", &now),
        Err("\"next friday\" could be this week's, Fri 11 Dec 09:00, or next week's, Fri 18 Dec 09:00 — say this friday or 18 dec".into())
    );
    assert_eq!(
        parse_until("next friday", &now).map_err(|e| e.to_string()),
        Err("\"next friday\" could be this week's, Fri 11 Dec 23:59, or next week's, Fri 18 Dec 23:59 — say this friday or 18 dec".into())
    );
    // Said on Saturday, or on the day itself, or on Sunday: next week's.
    let sat = mon(10, 0).with_day(12).expect("fixture");
    let fri = mon(10, 0).with_day(11).expect("fixture");
    let sun = mon(10, 0).with_day(13).expect("fixture");
    for (now, typed, want) in [
        (sat, "next friday", at(18, 9, 0)),
        (fri, "next friday", at(18, 9, 0)),
        (now, "next monday", at(14, 9, 0)),
        (sun, "next monday", at(14, 9, 0)),
        (sun, "next sunday", at(20, 9, 0)),
        // `this` and a day alone are the coming one, as before.
        (now, "this friday", at(11, 9, 0)),
        (now, "friday", at(11, 9, 0)),
    ] {
        assert_eq!(
            parse_time(typed, &now, Mode::At),
            Ok(want),
            "{typed:?} on {now}"
        );
    }
    assert_eq!(
        parse_until("next friday", &sat).map(|t| t.with_timezone(&now.timezone()).day()),
        Ok(18)
    );
}

/// A delay whose second part is written another way than its first (`1h`
/// then `30 minutes`), with text after it, may end before that part: the
/// text could be "30 minutes of reading". Asked about, in `/later` and in
/// `/at in …`; one written one way stays one delay.
#[test]
fn a_delay_in_two_styles_before_text_is_asked_about() {
    let now = mon(10, 0);
    for (typed, mode, time, said, whole) in [
        (
            "1h 30 minutes of reading",
            Mode::Later,
            "1h",
            "30 minutes",
            "1h30m",
        ),
        (
            "1 hour 30m of reading",
            Mode::Later,
            "1 hour",
            "30m",
            "1h30m",
        ),
        (
            "1H 30 Minutes of reading",
            Mode::Later,
            "1H",
            "30 Minutes",
            "1h30m",
        ),
        (
            "in 1h 30 minutes of reading",
            Mode::At,
            "in 1h",
            "30 minutes",
            "in 1h30m",
        ),
        (
            "in 1h 30 minutes of reading",
            Mode::Later,
            "in 1h",
            "30 minutes",
            "in 1h30m",
        ),
        ("2d 3 hours x", Mode::Later, "2d", "3 hours", "2d3h"),
        // A comma inside a delay does not end it (`1 hour, 30 minutes`).
        (
            "1h, 30 minutes of reading",
            Mode::Later,
            "1h",
            "30 minutes",
            "1h30m",
        ),
    ] {
        assert_eq!(
            split_time_prefix(typed, &now, mode).map_err(|e| e.to_string()),
            Err(format!(
                "{said:?} after {time:?}: more of the delay, or the start of the text? — write \"{whole} …\" for that delay, or \"{time} -- {said} …\" for the text"
            )),
            "{typed:?}"
        );
        // Both ways are read as they say.
        let rest = &typed[typed.find(" of").unwrap_or(typed.len() - 2)..];
        let both = split_time_prefix(&format!("{whole}{rest}"), &now, mode);
        let full = split_time_prefix(typed, &now, mode).err();
        assert!(both.is_ok(), "{whole}: {both:?} ({full:?})");
        let text =
            split_time_prefix(&format!("{time} -- {said}{rest}"), &now, mode).map(|(_, t)| t);
        assert_eq!(text, Ok(format!("{said}{rest}")), "{typed:?}");
    }
    // Written one way, it is one delay; after a comma or a line break,
    // or alone, the second part is not asked about.
    for (typed, mode, want, text) in [
        (
            "1h 30m of reading",
            Mode::Later,
            at(7, 11, 30),
            "of reading",
        ),
        ("1h30m of reading", Mode::Later, at(7, 11, 30), "of reading"),
        (
            "1 hour 30 minutes of reading",
            Mode::Later,
            at(7, 11, 30),
            "of reading",
        ),
        ("1 hour and 30 minutes x", Mode::Later, at(7, 11, 30), "x"),
        ("an hour and a half x", Mode::Later, at(7, 11, 30), "x"),
        ("1 h 30 min x", Mode::Later, at(7, 11, 30), "x"),
        (
            "in 1h 30m of reading",
            Mode::At,
            at(7, 11, 30),
            "of reading",
        ),
        (
            "1h -- 30 minutes of reading",
            Mode::Later,
            at(7, 11, 0),
            "30 minutes of reading",
        ),
        ("1h 30 people", Mode::Later, at(7, 11, 0), "30 people"),
    ] {
        assert_eq!(
            split_time_prefix(typed, &now, mode),
            Ok((want, text.to_string())),
            "{typed:?}"
        );
    }
    assert_eq!(
        split_time_prefix("1h 30 minutes", &now, Mode::Later),
        Err(WhenError::NothingToSend)
    );
    assert_eq!(
        split_time_prefix("1h 30 minutes\nof reading", &now, Mode::Later),
        Ok((at(7, 11, 30), "of reading".into()))
    );
}
