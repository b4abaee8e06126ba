//! Writes a reply's text to stdout as it grows, made safe.

use std::io::Write;

/// Writes a reply's text as it grows, made safe as text that is kept is
/// (escape sequences and control characters shown, not obeyed; tabs and
/// emoji kept, so `tock ask "write a Makefile" > Makefile` works): each new
/// piece is the part of its line's safe text not yet written (a CR at the
/// end may be half of a CRLF, so it waits for what follows).
pub(super) struct Printer<W: Write> {
    out: W,
    /// The message being written, its text as far as known, and how much
    /// of that text is written.
    current: Option<(i64, String, usize)>,
    /// Nothing written yet, or what was written ends a line.
    at_line_start: bool,
}

impl<W: Write> Printer<W> {
    pub(super) fn new(out: W) -> Self {
        Self {
            out,
            current: None,
            at_line_start: true,
        }
    }

    /// Whether message `id` is the one being written.
    pub(super) fn is_writing(&self, id: i64) -> bool {
        self.current.as_ref().is_some_and(|(cur, _, _)| *cur == id)
    }

    /// Text streamed into message `id` at byte `offset` (an engine event).
    pub(super) fn delta(&mut self, id: i64, offset: usize, text: &str) -> std::io::Result<()> {
        let mut known = match &self.current {
            Some((cur, known, _)) if *cur == id => known.clone(),
            _ => String::new(),
        };
        if offset > known.len() {
            // A piece was missed: the database has it, and the next look reads it.
            return Ok(());
        }
        known.truncate(offset);
        known.push_str(text);
        self.saved(id, &known)
    }

    /// Message `id`'s text as far as it is known (saved, or streamed).
    pub(super) fn saved(&mut self, id: i64, text: &str) -> std::io::Result<()> {
        let written = match &self.current {
            // Written to its end when the next one began.
            Some((cur, _, _)) if id < *cur => return Ok(()),
            Some((cur, known, written)) if *cur == id => {
                if text.len() <= known.len() {
                    return Ok(());
                }
                *written
            }
            _ => {
                // A new message of the turn (the answer after tool calls).
                if !self.at_line_start {
                    self.out.write_all(b"\n")?;
                    self.at_line_start = true;
                }
                0
            }
        };
        let end = if text.ends_with('\r') {
            text.len() - 1
        } else {
            text.len()
        };
        let end = end.max(written);
        self.write_between(text, written, end)?;
        self.current = Some((id, text.to_string(), end));
        Ok(())
    }

    fn write_between(&mut self, text: &str, from: usize, to: usize) -> std::io::Result<()> {
        let (Some(line), Some(_)) = (text.get(..from), text.get(..to)) else {
            return Ok(());
        };
        let line_start = line.rfind('\n').map_or(0, |i| i + 1);
        let before = crate::sanitize::sanitize_source(&text[line_start..from]);
        let upto = crate::sanitize::sanitize_source(&text[line_start..to]);
        let new = upto.get(before.len()..).unwrap_or("");
        if new.is_empty() {
            return Ok(());
        }
        self.out.write_all(new.as_bytes())?;
        self.out.flush()?;
        self.at_line_start = new.ends_with('\n');
        Ok(())
    }

    /// Ends the line written, if one is open: what is said on stderr
    /// next starts a line of its own on a terminal.
    pub(super) fn break_line(&mut self) -> std::io::Result<()> {
        if !self.at_line_start {
            self.out.write_all(b"\n")?;
            self.out.flush()?;
            self.at_line_start = true;
        }
        Ok(())
    }

    /// The turn ended: what was held back is written, and the line ended.
    pub(super) fn end(&mut self) -> std::io::Result<()> {
        if let Some((_, known, written)) = self.current.take() {
            self.write_between(&known, written, known.len())?;
        }
        if !self.at_line_start {
            self.out.write_all(b"\n")?;
            self.at_line_start = true;
        }
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::Printer;

    fn printed(steps: &[(i64, &str)]) -> String {
        let mut buf = Vec::new();
        let mut p = Printer::new(&mut buf);
        for (id, text) in steps {
            p.saved(*id, text).unwrap();
        }
        p.end().unwrap();
        drop(p);
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn text_is_written_once_as_it_grows_and_ends_with_a_newline() {
        assert_eq!(
            printed(&[(1, "Hel"), (1, "Hello"), (1, "Hello, world")]),
            "Hello, world\n"
        );
        assert_eq!(printed(&[(1, "done\n")]), "done\n");
        assert_eq!(printed(&[]), "");
    }

    #[test]
    fn escape_sequences_split_across_pieces_stay_inert() {
        let out = printed(&[(1, "a\x1b"), (1, "a\x1b]52;c;SGVsbG8=\x07b")]);
        assert!(!out.contains('\x1b') && !out.contains('\x07'), "{out:?}");
        assert_eq!(out, "a␛]52;c;SGVsbG8=␇b\n");
    }

    #[test]
    fn a_crlf_split_across_pieces_is_one_line_break() {
        assert_eq!(printed(&[(1, "one\r"), (1, "one\r\ntwo")]), "one\ntwo\n");
        // A CR the reply ends on is shown, not dropped.
        assert_eq!(printed(&[(1, "end\r")]), "end␍\n");
    }

    #[test]
    fn tabs_and_emoji_are_kept_as_written() {
        assert_eq!(
            printed(&[(1, "all:\n"), (1, "all:\n\tcc x.c")]),
            "all:\n\tcc x.c\n"
        );
        assert_eq!(
            printed(&[(1, "ok \u{2705}\u{fe0f}")]),
            "ok \u{2705}\u{fe0f}\n"
        );
    }

    #[test]
    fn each_message_of_the_turn_starts_on_its_own_line() {
        assert_eq!(
            printed(&[(1, "let me look"), (2, "found it")]),
            "let me look\nfound it\n"
        );
    }

    #[test]
    fn an_earlier_message_read_again_is_not_written_again() {
        assert_eq!(
            printed(&[
                (1, "let me look"),
                (2, "found"),
                (1, "let me look"),
                (2, "found it")
            ]),
            "let me look\nfound it\n"
        );
    }

    #[test]
    fn deltas_and_saves_of_the_same_text_are_written_once() {
        let mut buf = Vec::new();
        let mut p = Printer::new(&mut buf);
        p.delta(7, 0, "one ").unwrap();
        p.delta(7, 4, "two ").unwrap();
        p.saved(7, "one ").unwrap();
        p.saved(7, "one two three").unwrap();
        // A piece beyond what is known waits for the database.
        p.delta(7, 40, "lost?").unwrap();
        p.delta(7, 13, " four").unwrap();
        p.end().unwrap();
        drop(p);
        assert_eq!(String::from_utf8(buf).unwrap(), "one two three four\n");
    }
}
