use super::*;
use chrono::{DateTime, FixedOffset, TimeZone, Utc};

/// +01:00; now = Mon 7 Dec 2026 04:22, as when the rows were found.
fn now() -> DateTime<FixedOffset> {
    FixedOffset::east_opt(3600)
        .and_then(|z| z.with_ymd_and_hms(2026, 12, 7, 4, 22, 0).single())
        .expect("fixture")
}
fn at(d: u32, h: u32, m: u32) -> DateTime<Utc> {
    FixedOffset::east_opt(3600)
        .and_then(|z| z.with_ymd_and_hms(2026, 12, d, h, m, 0).single())
        .expect("fixture")
        .with_timezone(&Utc)
}

#[test]
fn parts_of_the_day_alone_and_with_a_clock_time() {
    let now = now();
    for (typed, want) in [
        ("tomorrow evening 7pm", at(8, 19, 0)),
        ("tomorrow evening 7", at(8, 19, 0)),
        ("tomorrow evening at 7", at(8, 19, 0)),
        ("Tomorrow Evening", at(8, 19, 0)),
        ("friday night 8pm", at(11, 20, 0)),
        ("fri night 8", at(11, 20, 0)),
        ("tomorrow night", at(8, 21, 0)),
        ("tomorrow at night", at(8, 21, 0)),
        ("tomorrow afternoon", at(8, 15, 0)),
        ("tomorrow afternoon 2", at(8, 14, 0)),
        ("friday evening", at(11, 19, 0)),
        ("tomorrow morning", at(8, 9, 0)),
        ("tomorrow morning 7", at(8, 7, 0)),
        ("tomorrow in the morning", at(8, 9, 0)),
        ("tomorrow 7 in the evening", at(8, 19, 0)),
        ("7 in the evening", at(7, 19, 0)),
        ("evening", at(7, 19, 0)),
        ("morning", at(7, 9, 0)),
        ("this morning", at(7, 9, 0)),
        ("this evening 6:30", at(7, 18, 30)),
        ("tonight", at(7, 21, 0)),
        ("tonight 11", at(7, 23, 0)),
        ("tonight 10:30pm", at(7, 22, 30)),
        ("8pm tonight", at(7, 20, 0)),
        // A night's small hours are the next day's.
        ("fri night 1am", at(12, 1, 0)),
        ("tonight 12", at(8, 0, 0)),
        ("tonight midnight", at(8, 0, 0)),
        ("next monday evening", at(14, 19, 0)),
        ("dec 24 evening", at(24, 19, 0)),
        // A dot between hour and minutes, as a colon.
        ("17.30", at(7, 17, 30)),
        ("tomorrow 17.30", at(8, 17, 30)),
    ] {
        match parse_time(typed, &now, Mode::At) {
            Ok(t) => assert_eq!(t, want, "{typed:?}"),
            Err(e) => panic!("{typed:?} refused: {e}"),
        }
    }
}

#[test]
fn a_clock_time_outside_its_part_is_refused_by_name() {
    let now = now();
    for (typed, said, part) in [
        ("tomorrow evening 7am", "evening 7am", "evening"),
        ("tomorrow morning 8pm", "morning 8pm", "morning"),
        ("tomorrow Evening 2", "Evening 2", "evening"),
        ("fri afternoon 9", "afternoon 9", "afternoon"),
        ("tonight 5", "tonight 5", "night"),
    ] {
        match parse_time(typed, &now, Mode::At) {
            Err(WhenError::NotInDayPart {
                said: s, part: p, ..
            }) => {
                assert_eq!((s.as_str(), p), (said, part), "{typed:?}")
            }
            other => panic!("{typed:?}: {other:?}"),
        }
    }
    let e = parse_time("tomorrow evening 7am", &now, Mode::At)
        .map(|t| t.to_string())
        .unwrap_or_else(|e| e.to_string());
    assert_eq!(
        e,
        "\"evening 7am\" does not fit: the evening is 17:00–23:59 — give the time alone (e.g. 7am, 19:00)"
    );
}

#[test]
fn tonight_once_over_is_refused_by_name() {
    let late = FixedOffset::east_opt(3600)
        .and_then(|z| z.with_ymd_and_hms(2026, 12, 7, 22, 30, 0).single())
        .expect("fixture");
    for (typed, said) in [("tonight", "tonight"), ("this morning", "this morning")] {
        assert_eq!(
            parse_time(typed, &late, Mode::At),
            Err(WhenError::DayPartOver {
                said: said.into(),
                at: if said == "tonight" {
                    "Mon 7 Dec 21:00".into()
                } else {
                    "Mon 7 Dec 09:00".into()
                }
            }),
            "{typed:?}"
        );
    }
    assert_eq!(
        parse_time("Tonight", &late, Mode::At).map_err(|e| e.to_string()),
        Err("\"Tonight\" is over (Mon 7 Dec 21:00 has passed) — give a time still ahead, or a delay with /later".into())
    );
    // Later tonight still is tonight.
    assert_eq!(
        parse_time("tonight 11pm", &late, Mode::At),
        Ok(FixedOffset::east_opt(3600)
            .and_then(|z| z.with_ymd_and_hms(2026, 12, 7, 23, 0, 0).single())
            .expect("fixture")
            .with_timezone(&Utc))
    );
}

/// The composer's `/at` rows: the whole time read, the text after it.
#[test]
fn at_rows_split_into_time_and_text() {
    let now = now();
    for (typed, want, text) in [
        ("tomorrow evening 7pm call mom", at(8, 19, 0), "call mom"),
        ("friday night 8pm movie", at(11, 20, 0), "movie"),
        (
            "tomorrow night take out trash",
            at(8, 21, 0),
            "take out trash",
        ),
        ("tomorrow afternoon x", at(8, 15, 0), "x"),
        ("friday evening x", at(11, 19, 0), "x"),
        (
            "tomorrow morning call the bank",
            at(8, 9, 0),
            "call the bank",
        ),
        ("tonight x", at(7, 21, 0), "x"),
        ("17.30 x", at(7, 17, 30), "x"),
        ("7pm dinner tonight", at(7, 19, 0), "dinner tonight"),
    ] {
        match split_time_prefix(typed, &now, Mode::At) {
            Ok((t, rest)) => assert_eq!((t, rest.as_str()), (want, text), "{typed:?}"),
            Err(e) => panic!("{typed:?} refused: {e}"),
        }
    }
}

/// Text after the time that starts with more time is asked about, the
/// way `fri 5 apples` is: never a time kept and the rest swallowed.
#[test]
fn text_that_starts_with_more_time_is_asked_about() {
    let now = now();
    for (typed, time, said) in [
        ("9am evening call", "9am", "evening"),
        ("fri 8pm night out", "fri 8pm", "night"),
        ("tomorrow 9am Monday prep", "tomorrow 9am", "Monday"),
        ("9am 7PM x", "9am", "7PM"),
        ("9am at 5pm x", "9am", "at 5pm"),
    ] {
        assert_eq!(
            split_time_prefix(typed, &now, Mode::At),
            Err(WhenError::TimeInText {
                time: time.into(),
                said: said.into()
            }),
            "{typed:?}"
        );
    }
    for (typed, time, said, second) in [
        ("9am and 5pm x", "9am", "and 5pm", "5pm"),
        ("fri 9am & sat 10am x", "fri 9am", "& sat 10am", "sat 10am"),
    ] {
        assert_eq!(
            split_time_prefix(typed, &now, Mode::At),
            Err(WhenError::SecondTime {
                time: time.into(),
                said: said.into(),
                second: second.into()
            }),
            "{typed:?}"
        );
    }
    assert_eq!(
        split_time_prefix("9am evening call", &now, Mode::At).map_err(|e| e.to_string()),
        Err("\"evening\" after \"9am\" looks like more of the time — say it all before the text, or write \"9am -- evening …\" to send it as text".into())
    );
    assert_eq!(
        split_time_prefix("9am and 5pm x", &now, Mode::At).map_err(|e| e.to_string()),
        Err(
            "\"and 5pm\" after \"9am\": one time per message — send two, /at 9am … and /at 5pm …, or write \"9am -- and 5pm …\" to send it as text"
                .into()
        )
    );
    // `--` says where the time ends; a comma after it ends it too. A
    // price, a number, a delay's text stay text.
    for (typed, mode, want, text) in [
        (
            "9am -- morning stand-up",
            Mode::At,
            at(7, 9, 0),
            "morning stand-up",
        ),
        ("fri 9am, call mom", Mode::At, at(11, 9, 0), "call mom"),
        (
            "9am 3.50 for lunch",
            Mode::At,
            at(7, 9, 0),
            "3.50 for lunch",
        ),
        ("9am 5 apples", Mode::At, at(7, 9, 0), "5 apples"),
        ("1h evening run", Mode::Later, at(7, 5, 22), "evening run"),
    ] {
        match split_time_prefix(typed, &now, mode) {
            Ok((t, rest)) => assert_eq!((t, rest.as_str()), (want, text), "{typed:?}"),
            Err(e) => panic!("{typed:?} refused: {e}"),
        }
    }
    assert_eq!(
        split_time_prefix("9am --", &now, Mode::At),
        Err(WhenError::NothingToSend)
    );
}
