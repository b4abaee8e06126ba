//! Parts of the day (`morning`, `tonight`) and the clock times they place.

use chrono::{Duration, NaiveTime};

use super::clock::clock_like;
use super::errors::{WhenError, quoted};

/// A part of the day found among the words of a time: which, whether it
/// names today too (`tonight`, `this evening`), the words without it, and
/// it as said (`in the evening`).
pub(crate) struct FoundPart<'a> {
    pub(crate) part: DayPart,
    pub(crate) today: bool,
    pub(crate) rest: Vec<&'a str>,
    pub(crate) said: String,
}

/// The one part-of-the-day word in `words`, with what goes with it (`in
/// the`, `this`, `at` before `night`). None when there is none, more than
/// one, or a bare one right after a clock time: in `/at fri 8pm night out`
/// the `night` is more likely the text's (and is then asked about, see
/// [`time_like_start`]); `8pm tonight`, `7 in the evening` are the time's.
pub(crate) fn find_day_part<'a>(words: &[&'a str]) -> Option<FoundPart<'a>> {
    let mut hits = words
        .iter()
        .enumerate()
        .filter_map(|(i, w)| Some((i, DayPart::of(w)?)));
    let (i, (part, mut today)) = hits.next()?;
    if hits.next().is_some() {
        return None;
    }
    let mut start = i;
    match &words[..i] {
        [.., "in", "the"] => start = i - 2,
        [.., "this"] if !today => {
            start = i - 1;
            today = true;
        }
        [.., "at"] if part == DayPart::Night => start = i - 1,
        [.., before] if !today && clock_like(before) => return None,
        _ => {}
    }
    let rest = words[..start]
        .iter()
        .chain(&words[i + 1..])
        .copied()
        .collect();
    Some(FoundPart {
        part,
        today,
        rest,
        said: words[start..=i].join(" "),
    })
}

/// A part of the day, said instead of a time or with one. Its time alone
/// and its hours (where a clock time said with it must fall; an hour from
/// 1 to 12 is taken in the half of the day inside them):
///
/// * `morning`: 09:00; 05:00–11:59 (`morning 7` is 07:00)
/// * `afternoon`: 15:00; 12:00–17:59 (`afternoon 2` is 14:00)
/// * `evening`: 19:00; 17:00–23:59 (`evening 7` is 19:00)
/// * `night`, `tonight`: 21:00; 18:00–04:59, the small hours being those
///   after the day said (`fri night 1am` is Saturday 01:00, `tonight 12`
///   the midnight that ends today)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DayPart {
    Morning,
    Afternoon,
    Evening,
    Night,
}

impl DayPart {
    /// The part a word names, and whether it names today too (`tonight`).
    pub(crate) fn of(w: &str) -> Option<(DayPart, bool)> {
        Some(match w.trim_end_matches(',') {
            "morning" => (DayPart::Morning, false),
            "afternoon" => (DayPart::Afternoon, false),
            "evening" => (DayPart::Evening, false),
            "night" => (DayPart::Night, false),
            "tonight" => (DayPart::Night, true),
            _ => return None,
        })
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            DayPart::Morning => "morning",
            DayPart::Afternoon => "afternoon",
            DayPart::Evening => "evening",
            DayPart::Night => "night",
        }
    }

    fn hours(self) -> &'static str {
        match self {
            DayPart::Morning => "05:00–11:59",
            DayPart::Afternoon => "12:00–17:59",
            DayPart::Evening => "17:00–23:59",
            DayPart::Night => "18:00–04:59",
        }
    }

    /// Its time when no clock time is said with it.
    pub(crate) fn time(self) -> NaiveTime {
        let h = match self {
            DayPart::Morning => 9,
            DayPart::Afternoon => 15,
            DayPart::Evening => 19,
            DayPart::Night => 21,
        };
        NaiveTime::from_hms_opt(h, 0, 0).unwrap_or(NaiveTime::MIN)
    }

    /// Whether `t` is in this part: `Some(true)` when it is in the small
    /// hours of the day after (a night's 01:00), None when it is not in it.
    pub(crate) fn admits(self, t: NaiveTime) -> Option<bool> {
        use chrono::Timelike;
        let h = t.hour();
        match self {
            DayPart::Morning => (5..12).contains(&h).then_some(false),
            DayPart::Afternoon => (12..18).contains(&h).then_some(false),
            DayPart::Evening => (17..24).contains(&h).then_some(false),
            DayPart::Night if h >= 18 => Some(false),
            DayPart::Night => (h < 5).then_some(true),
        }
    }

    /// An hour said alone with this part (`evening 7`): from 1 to 12, the
    /// one of its two readings inside the part; 0 or 13 to 23, itself.
    pub(crate) fn hour(self, h: u32) -> Option<NaiveTime> {
        let readings = match h {
            1..=12 => vec![h % 12, h % 12 + 12],
            _ => vec![h],
        };
        readings
            .into_iter()
            .filter_map(|h| NaiveTime::from_hms_opt(h, 0, 0))
            .find(|t| self.admits(*t).is_some())
    }

    /// A clock time said with this part (its `words` as said): itself if
    /// it is in the part, else, written on a 12-hour clock without am or pm
    /// (`evening 6:30`, not `06:30`), its afternoon or evening reading if
    /// that is; None when neither is.
    pub(crate) fn place(self, t: NaiveTime, words: &[&str]) -> Option<NaiveTime> {
        if self.admits(t).is_some() {
            return Some(t);
        }
        let twelve_hour = match words {
            [w] => {
                let hl = w.bytes().take_while(u8::is_ascii_digit).count();
                !w.starts_with('0')
                    && w[..hl].parse::<u32>().is_ok_and(|h| (1..=12).contains(&h))
                    && !w
                        .bytes()
                        .any(|b| b.is_ascii_alphabetic() || b == b'+' || b == b'-')
            }
            _ => false,
        };
        let other = t.overflowing_add_signed(Duration::hours(12)).0;
        (twelve_hour && self.admits(other).is_some()).then_some(other)
    }

    /// The error for `said` (the part and a clock time) not in it.
    pub(crate) fn refusal(self, said: &str) -> WhenError {
        WhenError::NotInDayPart {
            said: quoted(said),
            part: self.name(),
            hours: self.hours(),
        }
    }
}
