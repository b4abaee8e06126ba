//! A tool call's arguments as text to read, for the front ends that ask a
//! person to approve it (the TUI's card, `tock approvals ID`).

use serde_json::Value;

use crate::sanitize::sanitize_line;

/// A call's arguments as lines to read: one `name: value` per argument, a
/// text with line breaks under its name line by line (so a command hidden
/// at the end of a long file is on a line of its own); made safe for the
/// terminal. Not JSON: as the model sent it.
pub fn argument_lines(arguments: &str) -> Vec<String> {
    let safe = |s: &str| sanitize_line(s).into_owned();
    let Ok(value) = serde_json::from_str::<Value>(arguments) else {
        return arguments.lines().map(safe).collect();
    };
    let Value::Object(map) = value else {
        return serde_json::to_string_pretty(&value)
            .unwrap_or_default()
            .lines()
            .map(safe)
            .collect();
    };
    if map.is_empty() {
        return vec!["(no arguments)".into()];
    }
    // One-line arguments first (a path, a flag), so a long text cannot push
    // them out of the card.
    let mut out = Vec::new();
    let mut texts = Vec::new();
    for (name, v) in map {
        match v {
            Value::String(s) if s.contains('\n') => {
                texts.push(format!("{}: ({} lines)", safe(&name), s.lines().count()));
                texts.extend(s.lines().map(|l| format!("  {}", safe(l))));
            }
            Value::String(s) => out.push(format!("{}: {}", safe(&name), safe(&s))),
            other => out.push(format!("{}: {}", safe(&name), safe(&other.to_string()))),
        }
    }
    out.extend(texts);
    out
}

/// The arguments on one line, for a list row: [`argument_lines`] joined
/// by " · ", each trimmed.
pub fn argument_line(arguments: &str) -> String {
    argument_lines(arguments)
        .iter()
        .map(|l| l.trim())
        .collect::<Vec<_>>()
        .join(" · ")
}

/// What a fork left out (the tool calls cut off from their results), for
/// the front ends to say; `None` when it left nothing out.
pub fn calls_left_out(names: &[String]) -> Option<String> {
    let list = names
        .iter()
        .map(|n| sanitize_line(n).into_owned())
        .collect::<Vec<_>>()
        .join(", ");
    match names.len() {
        0 => None,
        1 => Some(format!(
            "the tool call {list} was left out of the fork: it has no result up to there"
        )),
        _ => Some(format!(
            "the tool calls {list} were left out of the fork: they have no result up to there"
        )),
    }
}

/// An approval's summary for a reader: tock's own scheduling calls say what
/// and when in words (their stored summary is JSON with epoch times, for
/// the approval card and `--json`; `at` writes a time), any other tool's
/// arguments as they are. Not yet made safe: the caller makes one line.
pub fn approval_summary(summary: &str, arguments: &str, at: impl Fn(i64) -> String) -> String {
    // Any other tool: its arguments as words, one-line ones first.
    let as_words = || argument_line(arguments);
    let Ok(v) = serde_json::from_str::<Value>(summary) else {
        return as_words();
    };
    // A task by its title when it has one (its name in every list).
    let named = v["title"].as_str().or(v["instruction"].as_str());
    if let (Some(what), Some(due)) = (named, v["due_at"].as_i64()) {
        let repeat = v["repeat"]
            .as_str()
            .map(|r| format!(", repeating {r}"))
            .unwrap_or_default();
        return format!("\"{what}\" at {}{repeat}", at(due));
    }
    if let (Some(job), Some(text)) = (v["job_id"].as_i64(), v["text"].as_str()) {
        let what = if v["recurring"].as_bool() == Some(true) {
            "end series"
        } else {
            "cancel"
        };
        return format!("{what} #{job} \"{text}\"");
    }
    as_words()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_arguments_come_first_and_texts_line_by_line() {
        let args = r#"{"content":"a\nb\u001b[31m","path":"/x","force":true}"#;
        assert_eq!(
            argument_lines(args),
            vec![
                "force: true",
                "path: /x",
                "content: (2 lines)",
                "  a",
                "  b\u{241b}[31m"
            ]
        );
        assert_eq!(argument_lines("{}"), vec!["(no arguments)"]);
        assert_eq!(
            argument_lines("not json\nat all"),
            vec!["not json", "at all"]
        );
    }
}
