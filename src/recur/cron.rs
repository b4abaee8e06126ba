//! Cron patterns: the one a user writes (`cron "0 9 * * 1-5"`) and its
//! refusals, field by field.

use croner::parser::{CronParser, Seconds, Year};

use crate::when;

use super::Rule;
use super::errors::RecurError;

/// `cron "0 9 * * 1-5" until …` -> (Some(pattern), rest); anything else -> (None, all).
pub(super) fn split_cron(s: &str) -> (Option<&str>, &str) {
    let Some(rest) = s
        .get(..4)
        .filter(|w| w.eq_ignore_ascii_case("cron"))
        .map(|_| &s[4..])
        .filter(|r| r.starts_with(char::is_whitespace))
    else {
        return (None, s);
    };
    let rest = rest.trim_start();
    if let Some(q) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') {
        return match rest[1..].find(q) {
            Some(close) => (Some(&rest[1..1 + close]), &rest[close + 2..]),
            None => (Some(&rest[1..]), ""),
        };
    }
    // Unquoted: the next five fields.
    let mut end = 0;
    let mut fields = 0;
    let mut in_word = false;
    for (i, c) in rest.char_indices() {
        if c.is_whitespace() {
            if in_word {
                fields += 1;
                if fields == 5 {
                    end = i;
                    break;
                }
            }
            in_word = false;
        } else {
            in_word = true;
            end = i + c.len_utf8();
        }
    }
    (Some(&rest[..end]), &rest[end..])
}

pub(super) fn cron_parser(seconds: bool) -> CronParser {
    CronParser::builder()
        .seconds(if seconds {
            Seconds::Required
        } else {
            Seconds::Disallowed
        })
        .year(Year::Disallowed)
        .build()
}

pub(super) fn cron_rule(pattern: &str) -> Result<Rule, RecurError> {
    let pattern = pattern.split_whitespace().collect::<Vec<_>>().join(" ");
    if pattern.split(' ').count() != 5 {
        return Err(RecurError::BadCron(format!(
            "{:?} needs five fields: minute hour day-of-month month day-of-week",
            when::quoted(&pattern)
        )));
    }
    let cron = cron_parser(false).parse(&pattern).map_err(|e| {
        let why = bad_cron_field(&pattern).unwrap_or_else(|| e.to_string());
        RecurError::BadCron(format!("{:?}: {why}", when::quoted(&pattern)))
    })?;
    Ok(Rule::Cron { pattern, cron })
}

/// Which field of a five-field pattern the parser refuses, in words:
/// croner says only "Number out of bounds". Each field is tried alone,
/// the others left as `*`.
fn bad_cron_field(pattern: &str) -> Option<String> {
    const FIELDS: [(&str, &str); 5] = [
        ("minute", "0-59"),
        ("hour", "0-23"),
        ("day of month", "1-31"),
        ("month", "1-12 or jan-dec"),
        ("day of week", "0-7 or sun-sat"),
    ];
    let fields: Vec<&str> = pattern.split(' ').collect();
    fields.iter().enumerate().find_map(|(i, field)| {
        let alone: Vec<&str> = (0..5).map(|j| if j == i { *field } else { "*" }).collect();
        let (name, range) = FIELDS.get(i)?;
        cron_parser(false)
            .parse(&alone.join(" "))
            .is_err()
            .then(|| {
                format!(
                    "the {name} field {:?} is not valid ({range})",
                    when::quoted(field)
                )
            })
    })
}
