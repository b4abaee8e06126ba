//! Time expressions -> UTC instants. Temporary minimal version; replaced by the time work.
use chrono::{DateTime, TimeZone, Utc};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WhenError {
    #[error("can't read \"{0}\" as a time")]
    Unreadable(String),
    #[error("that time is in the past")]
    Past,
    #[error("too far ahead")]
    TooFar,
    #[error("nothing to send after the time")]
    NoText,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Later,
    At,
}

pub fn parse_duration(expr: &str) -> Result<chrono::Duration, WhenError> {
    let e = expr.trim().trim_start_matches("in ").trim();
    let (num, unit) = e.split_at(e.find(|c: char| !c.is_ascii_digit()).unwrap_or(e.len()));
    let n: i64 = num
        .parse()
        .map_err(|_| WhenError::Unreadable(expr.into()))?;
    let secs = match unit.trim() {
        "s" => n,
        "m" | "min" | "minutes" | "minute" => n * 60,
        "h" | "hour" | "hours" => n * 3600,
        "d" | "day" | "days" => n * 86400,
        _ => return Err(WhenError::Unreadable(expr.into())),
    };
    Ok(chrono::Duration::seconds(secs))
}

pub fn parse_time<Tz: TimeZone>(
    expr: &str,
    now: &DateTime<Tz>,
    _mode: Mode,
) -> Result<DateTime<Utc>, WhenError> {
    Ok(now.with_timezone(&Utc) + parse_duration(expr)?)
}

pub fn split_time_prefix<Tz: TimeZone>(
    input: &str,
    now: &DateTime<Tz>,
    mode: Mode,
) -> Result<(DateTime<Utc>, String), WhenError> {
    let (t, rest) = input.trim().split_once(' ').ok_or(WhenError::NoText)?;
    Ok((parse_time(t, now, mode)?, rest.trim().to_string()))
}

pub fn relative(due_ms: i64, now_ms: i64) -> String {
    let d = (due_ms - now_ms) / 1000;
    if d >= 0 {
        format!("in {d}s")
    } else {
        format!("{}s ago", -d)
    }
}

pub fn preview<Tz: TimeZone>(due: DateTime<Utc>, now: &DateTime<Tz>) -> String
where
    Tz::Offset: std::fmt::Display,
{
    let local = due.with_timezone(&now.timezone());
    format!(
        "{}, {}",
        local.format("%a %d %b %H:%M"),
        relative(due.timestamp_millis(), now.timestamp_millis())
    )
}

pub fn check_not_too_far(
    due: DateTime<Utc>,
    now_utc: DateTime<Utc>,
    max: chrono::Duration,
) -> Result<(), WhenError> {
    if due - now_utc > max {
        Err(WhenError::TooFar)
    } else {
        Ok(())
    }
}
