//! Why a time was refused: [`WhenError`] and its one-line messages, the
//! internal parse outcome, and the user's words quoted back as typed.

/// Why an expression was refused. Every message is one human-readable line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WhenError {
    /// Nothing was typed.
    #[error("empty time")]
    Empty,
    /// Not a time expression at all (the text, shortened, is kept).
    #[error(
        "can't read {0:?} as a time — try 10m, 1h30m, 9am, tomorrow 14:30, fri 5pm, 2026-12-01 09:00"
    )]
    Unrecognised(String),
    /// `Mode::Later` / [`parse_duration`](super::parse_duration): not a duration.
    #[error("can't read {0:?} as a duration — try 10m, 1h30m, 2 hours, 1d, in 10 minutes")]
    NotADuration(String),
    /// [`parse_age`](super::parse_age): not a span of time.
    #[error(
        "can't read {0:?} as a span of time — try 12h, 30d, 2w, 6mo, 1y (a month is 30 days, a year 365)"
    )]
    NotASpan(String),
    /// [`parse_age`](super::parse_age): `6m` where months are read too. Carries the amount
    /// and its `m` as typed (`6M`, `6 m`) and the amount alone (`6`).
    #[error("{said:?} could be minutes or months — say {amount}min or {amount}mo")]
    MinutesOrMonths { said: String, amount: String },
    /// [`parse_age`](super::parse_age): a number without a unit (`1`); carries it as typed.
    #[error(
        "{0:?} has no unit — say {0}h, {0}d, {0}w, {0}mo or {0}y (a month is 30 days, a year 365)"
    )]
    NoUnit(String),
    /// `Mode::Later` was given a point in time.
    #[error("{0:?} is a point in time, not a duration — use /at for that, or e.g. /later 1h30m")]
    TimeNotDuration(String),
    /// `2 years`, `6mo`: not durations, their length varies.
    #[error(
        "years and months are not durations (their length varies); give a date instead, e.g. 2030-01-15 09:00"
    )]
    YearsOrMonths,
    /// A bare hour from 1 to 12 alone (`9`, `at 9`): morning or evening?
    /// Carries the hour.
    #[error("{}", ambiguous_hour_message(*.0, "alone"))]
    AmbiguousHour(u32),
    /// A bare hour from 1 to 12 after a day, a date or a rule's days
    /// (`fri 5`, `tomorrow 9`, `dec 25 9`, `every mon 9`): morning or
    /// evening? Carries the hour and the words it follows.
    #[error("{}", ambiguous_hour_message(*hour, &format!("after {after:?}")))]
    AmbiguousHourAfter { hour: u32, after: String },
    /// A part of the day and a clock time that is not in it (`evening 7am`,
    /// `morning 8`): carries the words as said, the part and its hours.
    #[error("{said:?} does not fit: the {part} is {hours} — give the time alone (e.g. 7am, 19:00)")]
    NotInDayPart {
        said: String,
        part: &'static str,
        hours: &'static str,
    },
    /// A part of today that is over (`tonight` at 22:00, `this morning` at
    /// noon): carries the words and the time they stand for.
    #[error("{said:?} is over ({at} has passed) — give a time still ahead, or a delay with /later")]
    DayPartOver { said: String, at: String },
    /// The text after a time starts with what reads as more of it (`/at
    /// 9am evening call`): carries the time and those words as typed.
    #[error(
        "{said:?} after {time:?} looks like more of the time — say it all before the text, or write \"{time} -- {said} …\" to send it as text"
    )]
    TimeInText { time: String, said: String },
    /// A delay whose second part is written another way than its first,
    /// with text after it (`/later 1h 30 minutes of reading`): more of the
    /// delay, or the text's first words? Carries the first part and the
    /// second as typed, and the whole delay written one way (`1h30m`).
    /// (`what`: "delay", or "interval" for a repeating rule's.)
    #[error(
        "{said:?} after {time:?}: more of the {what}, or the start of the text? — write \"{whole} …\" for that {what}, or \"{time} -- {said} …\" for the text"
    )]
    DelayInTwoStyles {
        time: String,
        said: String,
        whole: String,
        what: &'static str,
    },
    /// A second time after the first (`/at 9am and 5pm x`): carries the
    /// first, the words of the second as typed, and the second alone.
    #[error(
        "{said:?} after {time:?}: one time per message — send two, /at {time} … and /at {second} …, or write \"{time} -- {said} …\" to send it as text"
    )]
    SecondTime {
        time: String,
        said: String,
        second: String,
    },
    /// A time zone tock does not read right after a time (`/at 9am PST
    /// call`): carries the time and the zone's word as typed.
    #[error(
        "{zone:?} after {time:?}: tock reads times in your local zone, in UTC or at a fixed offset (9am utc, 9am gmt+1, 9am -05:00) — give the time in one of those, or write \"{time} -- {zone} …\" to keep it as text"
    )]
    ZoneWord { time: String, zone: String },
    /// A time with `tomorrow` said from midnight to 04:00 (`tomorrow
    /// 9am`, `tomorrow morning`), when that time today is still ahead:
    /// the day after this night (today), or the one after that? Carries
    /// the words as typed, the time it was said, both instants as shown,
    /// and how to write each (`today 9am`, `tue 9am`).
    #[error(
        "{said:?} at {now}, before the night is over, could be {} or {} — say {} or {}",
        .days.first, .days.second, .days.first_way, .days.second_way
    )]
    TomorrowBeforeMorning {
        said: String,
        now: String,
        days: Box<Readings>,
    },
    /// `next friday` said while this week's Friday is still to come (on
    /// Monday): this week's, or next week's? Carries the words as typed,
    /// both instants as shown and how to write each (`this friday`, `18
    /// dec`).
    #[error(
        "{said:?} could be this week's, {}, or next week's, {} — say {} or {}",
        .days.first, .days.second, .days.first_way, .days.second_way
    )]
    NextWeekday { said: String, days: Box<Readings> },
    /// A day's name right after a clock time, with text after it on the
    /// line (`/at 9am friday prep`): the time's day, or the text's first
    /// word? Carries the clock time and the day as typed.
    #[error(
        "{day:?} after {time:?}: the day of the time, or the start of the text? — write \"{day} {time} …\" for that day, or \"{time} -- {day} …\" for the text"
    )]
    DayAfterClock { time: String, day: String },
    /// Looks like a date or time but does not exist (`25:99`, `2026-02-30`, `13pm`).
    #[error("no such date or time: {0:?}")]
    NoSuchTime(String),
    /// A repeating rule's clock time with a zone (`9am utc`); carries the time.
    #[error("{0:?} has a time zone — a repeating rule follows your local time: leave out the zone")]
    ZoneInRule(String),
    /// Resolves to an instant that is not after now; carries the instant as
    /// shown to the user, e.g. `Sun 29 Nov 08:00`.
    #[error("that time is in the past ({0})")]
    Past(String),
    /// Zero or negative duration (`0m`, `-5m`).
    #[error("a duration must be positive")]
    NotPositive,
    /// Beyond what the calendar types can represent.
    #[error("that is too far in the future")]
    OutOfRange,
    /// Refused by [`check_not_too_far`](super::check_not_too_far); carries the limit, e.g. `1 year`.
    #[error("too far ahead (more than {0})")]
    TooFar(String),
    /// `/later 1h` with no message.
    #[error("nothing to send after the time")]
    NothingToSend,
}

/// The two readings of a time that is asked about: each instant as shown
/// (`Mon 7 Dec 09:00`) and a way to write it that is read as it (`today
/// 9am`). (Boxed in [`WhenError`], which stays small.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readings {
    pub first: String,
    pub first_way: String,
    pub second: String,
    pub second_way: String,
}

/// `"9" alone could be morning or evening — say 9am, 9pm or 21:00` (or
/// `"9" after "tomorrow" …`, as `placed` says): both readings, and how to
/// write each.
fn ambiguous_hour_message(hour: u32, placed: &str) -> String {
    if hour == 12 {
        return format!("\"12\" {placed} could be noon or midnight — say noon or midnight");
    }
    format!(
        "\"{hour}\" {placed} could be morning or evening — say {hour}am, {hour}pm or {}:00",
        hour + 12
    )
}

/// Longest piece of user text quoted back in an error message.
const MAX_QUOTED_CHARS: usize = 40;

/// Internal parse outcome: `NoMatch` means "this is not that kind of
/// expression, try another reading"; `Fail` is a definite refusal that should
/// reach the user (an impossible time, a past date, a zero duration).
#[derive(Debug)]
pub(super) enum PErr {
    NoMatch,
    Fail(WhenError),
}

/// Errors that mean "recognised, but refused" (as opposed to "not a time").
/// A bare hour alone is not one of them (nothing shorter is tried after
/// it anyway); one after a day is: in `/at fri 5 apples` the 5 may be the
/// hour, and taking `fri` alone with the text "5 apples" would schedule
/// 09:00 without a word.
pub(super) fn is_specific(e: &WhenError) -> bool {
    !matches!(
        e,
        WhenError::Empty
            | WhenError::Unrecognised(_)
            | WhenError::NotADuration(_)
            | WhenError::AmbiguousHour(_)
    )
}

/// User text quoted back in an error, shortened to one manageable line.
pub(crate) fn quoted(s: &str) -> String {
    let mut chars = s.chars();
    let mut out: String = chars.by_ref().take(MAX_QUOTED_CHARS).collect();
    if chars.next().is_some() {
        out.push('…');
    }
    out
}

impl WhenError {
    /// The error with the words it quotes as they were typed in `expr`:
    /// they were read from [`words_of`], in lower case (`13PM`, not `13pm`).
    pub(crate) fn quoting_as_typed(self, expr: &str) -> WhenError {
        use WhenError as E;
        match self {
            E::Unrecognised(s) => E::Unrecognised(as_typed(expr, &s)),
            E::NotADuration(s) => E::NotADuration(as_typed(expr, &s)),
            E::NotASpan(s) => E::NotASpan(as_typed(expr, &s)),
            E::NoUnit(s) => E::NoUnit(as_typed(expr, &s)),
            E::TimeNotDuration(s) => E::TimeNotDuration(as_typed(expr, &s)),
            E::NoSuchTime(s) => E::NoSuchTime(as_typed(expr, &s)),
            E::ZoneInRule(s) => E::ZoneInRule(as_typed(expr, &s)),
            E::MinutesOrMonths { said, amount } => E::MinutesOrMonths {
                said: as_typed(expr, &said),
                amount,
            },
            E::AmbiguousHourAfter { hour, after } => E::AmbiguousHourAfter {
                hour,
                after: as_typed(expr, &after),
            },
            E::NotInDayPart { said, part, hours } => E::NotInDayPart {
                said: as_typed(expr, &said),
                part,
                hours,
            },
            E::TomorrowBeforeMorning { said, now, days } => E::TomorrowBeforeMorning {
                said: as_typed(expr, &said),
                now,
                days,
            },
            E::NextWeekday { said, days } => E::NextWeekday {
                said: as_typed(expr, &said),
                days,
            },
            E::DayPartOver { said, at } => E::DayPartOver {
                said: as_typed(expr, &said),
                at,
            },
            other => other,
        }
    }
}

/// `part`, words read from `expr` by [`words_of`] (lower-cased, single
/// spaces, maybe shortened by [`quoted`]), as `expr` spells them: the first
/// place in `expr` they match, a word's start first; `part` itself when
/// they are not found.
pub(crate) fn as_typed(expr: &str, part: &str) -> String {
    let (needle, cut) = match part.strip_suffix('…') {
        Some(p) => (p, "…"),
        None => (part, ""),
    };
    if needle.is_empty() {
        return part.to_string();
    }
    let starts = || expr.char_indices().map(|(i, _)| i);
    let word_start = |i: usize| i == 0 || expr[..i].ends_with(char::is_whitespace);
    starts()
        .filter(|&i| word_start(i))
        .chain(starts().filter(|&i| !word_start(i)))
        .find_map(|i| typed_match(&expr[i..], needle))
        .map_or_else(|| part.to_string(), |m| format!("{m}{cut}"))
}

/// The start of `hay` that reads as `needle` (see [`as_typed`]): letters
/// in either case, a space for any run of white space, and what
/// [`words_of`] glued onto a clock time (`9am utc` is `9amz`, `9:00 +02:00`
/// is `9:00+02:00`) unglued again.
fn typed_match<'h>(hay: &'h str, needle: &str) -> Option<&'h str> {
    let mut at = 0;
    let mut wanted = needle.chars().peekable();
    while let Some(c) = wanted.next() {
        let rest = &hay[at..];
        let gap = rest.len() - rest.trim_start().len();
        if c == ' ' {
            if gap == 0 {
                return None;
            }
            at += gap;
            continue;
        }
        // A zone word glued on as `z`.
        if c == 'z' && wanted.peek().is_none_or(|n| *n == ' ') && gap > 0 {
            let word = rest.trim_start();
            let len = word.find(char::is_whitespace).unwrap_or(word.len());
            if ["utc", "gmt", "z"]
                .iter()
                .any(|z| word[..len].eq_ignore_ascii_case(z))
            {
                at += gap + len;
                continue;
            }
        }
        // An offset glued on.
        if (c == '+' || c == '-') && gap > 0 && rest.trim_start().starts_with(c) {
            at += gap;
        }
        let h = hay[at..].chars().next()?;
        if h.to_ascii_lowercase() != c {
            return None;
        }
        at += h.len_utf8();
    }
    Some(&hay[..at])
}
