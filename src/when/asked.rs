//! Times asked about rather than guessed: `tomorrow` said before morning,
//! and `next friday` while this week's is still to come.

use chrono::{DateTime, Datelike, Duration, TimeZone, Utc};

use super::dates::weekday;
use super::errors::{Readings, WhenError, quoted};
use super::resolve::day_and_time;
use super::show::absolute;
use super::words::words_of;

/// `next friday` (`next fri 5pm`, `5pm next friday`), read as `due`, the
/// first Friday after today: when that is in this calendar week (Monday
/// to Sunday), next week's may be meant. Asked about, with a way to write
/// each that `read` (the caller's reading of a time) reads as it: `this
/// friday …` and the other's date, `18 dec …` (not `dec 18`: in `dec 18
/// evening` the 18 would read as an hour). `None` when this week's
/// is gone (on Saturday `next friday` can only be the coming one).
pub(super) fn next_weekday_asked<Tz: TimeZone>(
    trimmed: &str,
    due: DateTime<Utc>,
    now: &DateTime<Tz>,
    read: impl Fn(&str) -> Option<DateTime<Utc>>,
) -> Option<WhenError> {
    let typed: Vec<String> = trimmed
        .split_whitespace()
        .map(|w| w.trim_end_matches(',').to_ascii_lowercase())
        .collect();
    let at = typed
        .windows(2)
        .position(|w| w[0] == "next" && weekday(&w[1]).is_some())?;
    let day = weekday(&typed[at + 1])?;
    let today = now.date_naive();
    let from_monday = i64::from(today.weekday().num_days_from_monday());
    // The first such day after today: 1 to 7 days ahead.
    let ahead = (i64::from(day.num_days_from_monday()) - from_monday - 1).rem_euclid(7) + 1;
    if from_monday + ahead > 6 {
        return None;
    }
    // The rest, without the joining `on` (`5pm on next friday`).
    let rest: String = typed
        .iter()
        .enumerate()
        .filter(|&(i, w)| i != at && i != at + 1 && w != "on")
        .map(|(_, w)| format!(" {w}"))
        .collect();
    let later = today.checked_add_signed(Duration::days(ahead + 7))?;
    let first_way = format!("this {}{rest}", typed[at + 1]);
    let second_way = format!(
        "{}{rest}",
        later.format("%-d %b").to_string().to_ascii_lowercase()
    );
    let second = read(&second_way)?;
    // Each way is read as the day it stands for.
    if read(&first_way) != Some(due) || second.with_timezone(&now.timezone()).date_naive() != later
    {
        return None;
    }
    Some(WhenError::NextWeekday {
        said: quoted(trimmed),
        days: Box::new(Readings {
            first: absolute(due, now),
            first_way,
            second: absolute(second, now),
            second_way,
        }),
    })
}

/// `tomorrow 9am` (`tomorrow morning`, `9am tmrw`, …) said before
/// [`TOMORROW_ASKED_UNTIL`], read as `due`: a night owl at 00:30 may mean
/// the coming morning, today's date. Asked about when that time today is
/// still ahead, with a way to write each day that is read as it; `None`
/// when there is nothing to ask (a time today that has gone, `tomorrow
/// 1am` at 02:00).
pub(super) fn tomorrow_asked<Tz: TimeZone>(
    trimmed: &str,
    words: &[&str],
    due: DateTime<Utc>,
    now: &DateTime<Tz>,
) -> Option<WhenError> {
    use chrono::Timelike;
    let is_tomorrow = |w: &str| matches!(w.trim_end_matches(','), "tomorrow" | "tmrw" | "tmr");
    if now.time().hour() >= TOMORROW_ASKED_UNTIL
        || words.iter().filter(|w| is_tomorrow(w)).count() != 1
    {
        return None;
    }
    let now_utc = now.with_timezone(&Utc);
    let read = |said: &str| {
        let owned = words_of(said);
        let words: Vec<&str> = owned.iter().map(String::as_str).collect();
        day_and_time(&words, now).ok()
    };
    // The rest, as typed but in lower case (`9am utc`, not `9amz`).
    let typed: Vec<String> = trimmed
        .split_whitespace()
        .map(str::to_ascii_lowercase)
        .collect();
    let at = typed.iter().position(|w| is_tomorrow(w))?;
    let rest: Vec<&str> = typed
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != at)
        .map(|(_, w)| w.as_str())
        .collect();
    // `tomorrow` alone (or `on tomorrow`) is at its default time (09:00),
    // asked about as `tomorrow 9am` is: said at 00:30 it may mean this
    // morning.
    let rest = if rest.iter().all(|w| matches!(*w, "at" | "on")) {
        due.with_timezone(&now.timezone())
            .naive_local()
            .format("%-H:%M")
            .to_string()
    } else {
        rest.join(" ")
    };
    let today_at = read(&format!("today {rest}")).filter(|t| *t > now_utc && *t != due)?;
    // Said the plainest way that reads as that day: `this morning`,
    // `tonight`, else `today …`; the next day by its name, `tue 9am`.
    let first = rest.split_whitespace().next().unwrap_or_default();
    let mut today_ways = Vec::new();
    if matches!(first, "morning" | "afternoon" | "evening") {
        today_ways.push(format!("this {rest}"));
    }
    if let Some(after) = rest.strip_prefix("night") {
        today_ways.push(format!("tonight{after}"));
    }
    today_ways.push(format!("today {rest}"));
    let today_way = today_ways.into_iter().find(|w| read(w) == Some(today_at))?;
    let next = now.date_naive().succ_opt()?;
    let next_way = [next.format("%a"), next.format("%Y-%m-%d")]
        .iter()
        .map(|d| format!("{} {rest}", d.to_string().to_ascii_lowercase()))
        .find(|w| read(w) == Some(due))?;
    Some(WhenError::TomorrowBeforeMorning {
        said: quoted(&words.join(" ")),
        now: now.time().format("%H:%M").to_string(),
        days: Box::new(Readings {
            first: absolute(today_at, now),
            first_way: today_way,
            second: absolute(due, now),
            second_way: next_way,
        }),
    })
}

/// Until 04:00, `tomorrow 9am`, `tomorrow morning` may be the day after
/// this night (today) or the next: asked about while that time today is
/// still ahead (see [`tomorrow_asked`]).
const TOMORROW_ASKED_UNTIL: u32 = 4;
