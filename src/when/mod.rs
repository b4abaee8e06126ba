//! Time expressions -> UTC instants, and human previews.
//!
//! Used by `/later DURATION TEXT`, `/at TIME TEXT`, the F2 "reschedule" prompt,
//! the composer preview ("sends Mon 30 Nov 09:00, in 14h 11m") and the
//! model's `schedule_task` tool.
//!
//! # What is understood
//!
//! Everything is case-insensitive and tolerant of extra spaces. Expressions are
//! resolved in the time zone of the `now` that is passed in (the user's local
//! zone in production); results are UTC instants strictly after `now`.
//!
//! * Durations (both modes): `10m`, `10 min`, `in 10 minutes`, `1h30m`,
//!   `1h 30m`, `1 hour 30 minutes`, `1 hour and 30 minutes`, `2 hours`, `1d`,
//!   `90s`, `1.5h`, `1w`, `an hour`, `half an hour`, `an hour and a half`,
//!   `10 minutes from now`. A duration is exact elapsed time: `1d` is 24 h even
//!   across a DST change. Months and years are not durations (their length
//!   varies); use a date instead.
//! * Clock times (`/at` only): `9am`, `9 am`, `9:30am`, `9.30pm`, `9 p.m.`,
//!   `14:30`, `14:30:15`, `noon`, `midday`, `midnight` (00:00; after a day,
//!   the end of that day: `fri midnight` is Saturday 00:00), `12pm` (noon),
//!   `12am` (midnight), and an hour alone past 12 (`21` is 21:00, `0` is
//!   00:00); an hour alone from 1 to 12 (`9`, or after a day: `fri 5`) is
//!   refused with both readings (`9am, 9pm or 21:00`). A bare clock time
//!   means its *next* occurrence: today if still ahead, else tomorrow — but
//!   a time that came less than a minute ago means now (typed while it was
//!   ahead, Enter may come just after).
//! * Parts of the day (`/at` only; see `DayPart`): `morning` (09:00),
//!   `afternoon` (15:00), `evening` (19:00), `night` and `tonight` (21:00),
//!   alone or after a day (`tomorrow evening`, `fri night`, `this morning`,
//!   `tomorrow in the morning`), and with a clock time, whose hour they
//!   place in their half of the day (`tomorrow evening 7` is 19:00,
//!   `morning 7` 07:00, `7 in the evening`, `8pm tonight`); a time outside
//!   the part (`evening 7am`) is refused, as is `tonight` once it is over.
//!   A bare part right after a clock time (`fri 8pm night out`) is not
//!   taken: it is more likely the text's, and the composer asks.
//!   `17.30` is 17:30, as `17:30`.
//! * Dates (`/at` only), optionally followed (or preceded) by a clock time,
//!   optionally joined by `at` / `on`: `today`, `tomorrow` (`tmrw`), weekdays
//!   (`fri`, `friday`, `tues`, `thurs`, ...), `this fri`, `next monday`,
//!   `2026-12-01`, `2026-12-01T09:00`, `2026-12-01T09:00Z`, and month-name
//!   dates (`dec 1`, `1 dec`, `1st of december`, `dec 1 2026`,
//!   `december 1, 2026`). A date without a time means 09:00 that day.
//!   A weekday means its next occurrence (today only if the time is still
//!   ahead); `next monday` is the first Monday strictly after today (so on a
//!   Sunday it is tomorrow) — but when that day is still in this calendar
//!   week (Monday to Sunday: `next friday` said on a Monday) it is asked
//!   about, this week's or next week's? (`this friday` or `18 dec`), in
//!   `until` too; on Saturday `next friday` is the coming one.
//!   A month-name date without a year means its next occurrence.
//!   An explicit date or instant that is not in the future is refused, and
//!   so are `yesterday`, `last fri` and `2h ago`, with when that was (what
//!   came less than a minute ago means now, as above).
//! * Full RFC 3339 instants with an offset: `2026-12-01T09:00:00Z`,
//!   `2026-12-01T09:00:00.5+02:00`. A clock time may also carry an
//!   offset or `utc`/`gmt`, with any date form: `14:30 utc`, `5pm utc`,
//!   `fri 17:00 +02:00`, `2026-12-01 09:00 -05:00`. The date is still the
//!   user's (`tomorrow` is the user's tomorrow); a bare `14:30 utc` is its
//!   next occurrence. `gmt+1`, `utc-5`, `utc+5:30` are fixed offsets; a
//!   zone's abbreviation after a time (`9am PST`) is refused by
//!   [`split_time_prefix`] (see [`zone_word`]).
//! * Where a time ends ([`split_time_prefix`]): at a line break, at `--`,
//!   or at a comma after it (what follows is text); a day after a clock
//!   time with text after it on the line (`9am friday prep`) is asked about,
//!   and so is a delay written two ways with text after it (`1h 30 minutes
//!   of reading`: `1h30m …` for the delay, `1h -- 30 minutes …` for the
//!   text); one written one way (`1h 30m`, `1 hour 30 minutes`) is one delay.
//! * `in 2 days 9am` is that day at 09:00. In the small hours (until
//!   05:00) `tonight 1am` is this night's while it is ahead. Until 04:00
//!   a time with `tomorrow` (`tomorrow 9am`, `tomorrow at 9am`, `9am
//!   tmrw`, `tomorrow morning`, `tomorrow evening 7`) is asked about
//!   while that time today is still ahead: the day after this night, or
//!   the next? The message says how to write each (`today 9am` or `tue
//!   9am`, `this morning` or `tue morning`); `tomorrow` alone is asked
//!   about at its 09:00. A time today that has gone (`tomorrow 1am` at
//!   02:00) is the next calendar day's.
//!
//! # Why most of this is hand-written rather than `interim`
//!
//! `interim` 0.2.2 was probed on every form above. It is used for the one
//! thing it does well — month-name dates — and only on input that has been
//! checked to contain nothing but month names and numbers. Its gaps, each
//! covered here:
//!
//! * panics (an `assert!` in its `Lowercase::literal`) when a time after a date
//!   has upper-case `AM`/`PM` (`"Tomorrow 9AM"`, `"FRI 5PM"`) or when a word of
//!   16+ letters follows an hour after a date (`"tomorrow 9abcdefghijklmnop"`);
//! * `midnight`, `hours`, `month`, `second` — any lone word starting with
//!   `mi`, `se`, `ho`, `da`, `we`, `mo` or `ye` — is "zero units", i.e. *now*;
//! * `noon`, `in 10 minutes`, `in 2h`, `an hour`, `half an hour`, `1.5h`,
//!   ordinals (`1st dec`) and compound durations (`1h30m`, `1h 30m`,
//!   `1 hour 30 minutes`) are refused; a bare `1.5` is the clock time 01:05;
//! * after a date, `12pm` becomes midnight of the *next* day and `12am` becomes
//!   noon (`"tomorrow 12pm"` -> day after tomorrow 00:00), and hours are not
//!   range-checked (`"tomorrow 100pm"` -> four days later);
//! * a bare clock time already past today stays in the past (no "next
//!   occurrence"), dates without a time mean 00:00 (we want 09:00), and
//!   `tomorrow` alone means tomorrow at the current time of day;
//! * `next monday` (UK dialect) skips a whole week, and US dialect's
//!   `next sunday` on a Sunday evening is today;
//! * a local time inside a DST gap is an error; a month-name date followed by
//!   a year without a comma (`dec 1 2026`) is an error.

mod asked;
mod clock;
mod dates;
mod day_part;
mod durations;
mod errors;
mod parse;
mod resolve;
mod show;
mod split;
mod words;

pub use dates::starts_with_date;
pub use durations::{parse_age, parse_duration};
pub use errors::{Readings, WhenError};
pub use parse::{MAX_AHEAD_DAYS, Mode, check_not_too_far, parse_time, parse_until};
pub use show::{absolute, countdown, happened, preview, relative};
pub use split::split_time_prefix;

pub(crate) use clock::{clock_time, hour_number};
pub(crate) use dates::weekday;
pub(crate) use day_part::find_day_part;
pub(crate) use errors::{as_typed, quoted};
pub(crate) use resolve::DEFAULT_HOUR;
pub(crate) use show::compact_span;
pub(crate) use split::{delay_in_two_styles, first_line_end, split_at_dashes, time_in_text};
pub(crate) use words::{words_of, zone_word};

#[cfg(test)]
mod word_amount_tests;

#[cfg(test)]
mod tests;

/// Parts of the day (`tomorrow evening 7pm`, `fri night`, `tonight`), the
/// rows a tester found read wrong in the composer, and `17.30`.
#[cfg(test)]
mod day_part_tests;

/// Where a time ends and its text starts (a line break, a comma, a day
/// after a clock time, a zone), `midnight` after a day, `tonight` and
/// `tomorrow` in the small hours, `in 2 days 9am`.
#[cfg(test)]
mod edge_tests;
