//! A conversation as text outside the TUI's screen: what `tock show` prints
//! and `/export` writes share these pieces, so both read alike.

/// What a model reasoned before its reply, as a Markdown quote under a
/// line that says so: set apart from the reply, and made safe (tabs kept,
/// control characters shown, never written raw).
pub fn reasoning_quote(reasoning: &str) -> String {
    let text = crate::sanitize::sanitize_source(reasoning.trim());
    let mut out = format!(
        "> **Thought** ({})\n>\n",
        characters(reasoning.chars().count())
    );
    for line in text.lines() {
        if line.is_empty() {
            out.push_str(">\n");
        } else {
            out.push_str("> ");
            out.push_str(line);
            out.push('\n');
        }
    }
    out.push('\n');
    out
}

/// "1 character", "690 characters", "12.3k characters".
pub fn characters(n: usize) -> String {
    match n {
        1 => "1 character".into(),
        n if n < 1000 => format!("{n} characters"),
        n => format!("{:.1}k characters", n as f64 / 1000.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasoning_is_quoted_line_by_line_and_made_safe() {
        assert_eq!(
            reasoning_quote("First \x1b[31mthis.\n\nThen\tthat.\n"),
            "> **Thought** (29 characters)\n>\n> First ␛[31mthis.\n>\n> Then\tthat.\n\n"
        );
    }

    #[test]
    fn lengths_read_as_words() {
        assert_eq!(characters(1), "1 character");
        assert_eq!(characters(690), "690 characters");
        assert_eq!(characters(12_345), "12.3k characters");
    }
}
