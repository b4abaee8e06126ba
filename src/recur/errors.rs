//! Why a rule was refused: [`RecurError`] and its one-line messages.

use chrono::Weekday;

use crate::when::{self, WhenError};

use super::days::full_day;

/// Why an expression was refused. Every message is one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecurError {
    #[error("empty rule — try every day at 9am, every weekday 9am, every 2h, cron \"0 9 * * 1-5\"")]
    Empty,
    #[error(
        "can't read {0:?} as a repeating rule — try every day at 9am, every mon,wed,fri 8:30, every 2h, every month on the 1st 9am, cron \"0 9 * * 1-5\""
    )]
    Unrecognised(String),
    #[error("fires more often than once a minute (the shortest interval is 1 minute)")]
    TooOften,
    #[error("never fires: {0}")]
    NeverFires(String),
    #[error("ends before it starts: the first occurrence would be {first}, after the end ({end})")]
    EndsBeforeStart { first: String, end: String },
    #[error("cron {0}")]
    BadCron(String),
    // Transparent: shown once, not again as its own cause (`{:#}`).
    #[error(transparent)]
    Time(#[from] WhenError),
    #[error("nothing to send after the rule")]
    NothingToSend,
    /// The text after a rule starts with what reads as more of it
    /// (`/every friday 6pm evening drinks`): the rule and those words.
    #[error(
        "{said:?} after {rule:?} looks like more of the rule — say it all before the text, or write \"{rule} -- {said} …\" to send it as text"
    )]
    MoreInText { rule: String, said: String },
    /// A second time after the rule's (`every weekday at 9am and 5pm`,
    /// `every mon 9am, fri 5pm`): the rule, the words of the second, and
    /// the second as a rule of its own.
    #[error(
        "{said:?} after {rule:?}: one time per rule — make two, e.g. /every {rule} … and /every {second} …, or write \"{rule} -- {said} …\" to send it as text"
    )]
    SecondSlot {
        rule: String,
        said: String,
        second: String,
    },
    /// `every second monday`: every other Monday, or the 2nd of the month?
    #[error("{}", second_weekday_message(said, *day))]
    SecondWeekday { said: String, day: Weekday },
    /// `every sunday night 1am`: the small hours after a day are the next
    /// day's, which a rule names.
    /// Carries the rule as said and the same rule on the day after.
    #[error("{said:?} falls on the day after the one named — name that day: {instead}")]
    NightAfter { said: String, instead: String },
}

/// `"every second monday" could be every other Monday or the 2nd Monday
/// of each month — …`: both readings, and how to say each.
fn second_weekday_message(said: &str, day: Weekday) -> String {
    format!(
        "{said:?} could be every other {d} or the 2nd {d} of each month — say every other {w}, or cron \"0 9 * * {n}#2\" for the 2nd",
        d = full_day(day),
        w = full_day(day).to_ascii_lowercase(),
        n = day.num_days_from_sunday()
    )
}

impl RecurError {
    /// The error with the words it quotes as they were typed in `expr`
    /// (see [`WhenError::quoting_as_typed`]).
    pub(super) fn quoting_as_typed(self, expr: &str) -> RecurError {
        match self {
            RecurError::Time(e) => RecurError::Time(e.quoting_as_typed(expr)),
            RecurError::SecondWeekday { said, day } => RecurError::SecondWeekday {
                said: when::as_typed(expr, &said),
                day,
            },
            RecurError::NightAfter { said, instead } => RecurError::NightAfter {
                said: when::as_typed(expr, &said),
                instead,
            },
            other => other,
        }
    }

    /// "Recognised but refused" (as opposed to "not a rule at all").
    pub(super) fn is_specific(&self) -> bool {
        !matches!(
            self,
            RecurError::Empty
                | RecurError::Unrecognised(_)
                | RecurError::Time(
                    WhenError::Empty | WhenError::Unrecognised(_) | WhenError::NotADuration(_)
                )
        )
    }
}
