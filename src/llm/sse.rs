//! Incremental Server-Sent Events parser over arbitrary byte chunks.
//!
//! Bytes are buffered and only complete lines are decoded, so a multi-byte
//! UTF-8 character split across network chunks arrives intact. Invalid UTF-8
//! is replaced (lossy), never a panic. Lines end with CRLF, LF or CR (a CR at
//! the end of one chunk followed by LF at the start of the next is one line
//! ending). The buffer is bounded: a line or event larger than the limit is an
//! error rather than unbounded memory growth.

/// Default limit for one line and for one event's accumulated data.
pub const DEFAULT_MAX_LINE: usize = 16 * 1024 * 1024;

/// A line (or an event's data) grew past the parser's limit.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("stream line longer than {limit} bytes")]
pub struct LineTooLong {
    pub limit: usize,
}

/// One dispatched event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, if any (the spec's default type is "message").
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    pub id: Option<String>,
    pub retry: Option<u64>,
}

#[derive(Debug)]
pub struct SseParser {
    buf: Vec<u8>,
    /// Bytes of `buf` already known to contain no line terminator.
    scanned: usize,
    /// The previous line ended with CR: a leading LF is part of that ending.
    skip_lf: bool,
    /// Still at the very start of the stream (a UTF-8 BOM may be skipped).
    at_start: bool,
    max_line: usize,
    event: Option<String>,
    data: String,
    has_data: bool,
    id: Option<String>,
    retry: Option<u64>,
}

impl Default for SseParser {
    fn default() -> Self {
        Self::with_max_line(DEFAULT_MAX_LINE)
    }
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_max_line(max_line: usize) -> Self {
        Self {
            buf: Vec::new(),
            scanned: 0,
            skip_lf: false,
            at_start: true,
            max_line,
            event: None,
            data: String::new(),
            has_data: false,
            id: None,
            retry: None,
        }
    }

    /// Feed one chunk; returns the events it completed.
    pub fn push(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, LineTooLong> {
        let mut out = Vec::new();
        let mut chunk = chunk;
        if self.skip_lf && !chunk.is_empty() {
            self.skip_lf = false;
            if self.buf.is_empty() && chunk[0] == b'\n' {
                chunk = &chunk[1..];
            }
        }
        self.buf.extend_from_slice(chunk);
        if self.at_start {
            if self.buf.len() < 3 && b"\xEF\xBB\xBF".starts_with(&self.buf) {
                // Could still become a BOM: wait for more bytes.
                return Ok(out);
            }
            self.at_start = false;
            if self.buf.starts_with(b"\xEF\xBB\xBF") {
                self.buf.drain(..3);
            }
        }

        // The lines are read from the buffer taken out of `self`, so that
        // each is decoded in place (a copy of every line was a tenth of a
        // streamed reply's instructions on the engine's thread, callgrind),
        // and put back however the loop ends.
        let buf = std::mem::take(&mut self.buf);
        let mut start = 0;
        let mut i = self.scanned;
        let mut result = Ok(());
        // A plain scan: a token's event is about 200 bytes, and memchr's
        // vector search cost the engine's thread more CPU time, not less,
        // in a reply at 100 tokens/s (seven runs each, alternating).
        while let Some(found) = buf[i..].iter().position(|&b| b == b'\n' || b == b'\r') {
            let line_end = i + found;
            let mut next = line_end + 1;
            if buf[line_end] == b'\r' {
                if next < buf.len() {
                    if buf[next] == b'\n' {
                        next += 1;
                    }
                } else {
                    // The LF of a CRLF may be the first byte of the next chunk.
                    self.skip_lf = true;
                }
            }
            let line = &buf[start..line_end];
            // Valid UTF-8 (all of it, from a sane server) is checked by the
            // fast validator; the lossy decoder takes ten times as long.
            result = match std::str::from_utf8(line) {
                Ok(line) => self.process_line(line, &mut out),
                Err(_) => self.process_line(&String::from_utf8_lossy(line), &mut out),
            };
            start = next;
            i = next;
            if result.is_err() {
                break;
            }
        }
        self.buf = buf;
        result?;
        self.buf.drain(..start);
        self.scanned = self.buf.len();
        if self.buf.len() > self.max_line {
            return Err(LineTooLong {
                limit: self.max_line,
            });
        }
        Ok(out)
    }

    /// End of stream: the last unterminated line is processed and a pending
    /// event is dispatched. The spec says to discard it, but servers that
    /// close right after `data: [DONE]` without a blank line are common and
    /// losing the terminator would turn a complete reply into an error.
    pub fn finish(&mut self) -> Result<Vec<SseEvent>, LineTooLong> {
        let mut out = Vec::new();
        if !self.buf.is_empty() {
            let line = String::from_utf8_lossy(&self.buf).into_owned();
            self.buf.clear();
            self.scanned = 0;
            self.process_line(&line, &mut out)?;
        }
        self.dispatch(&mut out);
        Ok(out)
    }

    fn process_line(&mut self, line: &str, out: &mut Vec<SseEvent>) -> Result<(), LineTooLong> {
        if line.is_empty() {
            self.dispatch(out);
            return Ok(());
        }
        if line.starts_with(':') {
            // Comment, typically a keep-alive.
            return Ok(());
        }
        let (field, value) = match line.find(':') {
            Some(pos) => {
                let v = &line[pos + 1..];
                (&line[..pos], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_string()),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
                if self.data.len() > self.max_line {
                    return Err(LineTooLong {
                        limit: self.max_line,
                    });
                }
            }
            // Per spec an id containing NUL is ignored.
            "id" if !value.contains('\0') => self.id = Some(value.to_string()),
            "retry" => {
                if let Ok(ms) = value.parse::<u64>() {
                    self.retry = Some(ms);
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        if !self.has_data && self.event.is_none() {
            // Nothing but comments or unknown fields since the last event.
            self.id = None;
            self.retry = None;
            return;
        }
        out.push(SseEvent {
            event: self.event.take(),
            data: std::mem::take(&mut self.data),
            id: self.id.take(),
            retry: self.retry.take(),
        });
        self.has_data = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parse_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for c in chunks {
            out.extend(p.push(c).unwrap());
        }
        out.extend(p.finish().unwrap());
        out
    }

    fn ev(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent {
            event: event.map(str::to_string),
            data: data.to_string(),
            id: None,
            retry: None,
        }
    }

    #[test]
    fn basic_event_with_type() {
        let got = parse_all(&[b"event: completion\ndata: {\"foo\":true}\n\n"]);
        assert_eq!(got, vec![ev(Some("completion"), "{\"foo\":true}")]);
    }

    #[test]
    fn data_without_event_and_event_without_data() {
        let got = parse_all(&[b"data: {\"foo\":true}\n\nevent: ping\n\n"]);
        assert_eq!(got, vec![ev(None, "{\"foo\":true}"), ev(Some("ping"), "")]);
    }

    #[test]
    fn multi_line_data_is_joined_with_newline() {
        let got = parse_all(&[b"data: {\ndata: \"foo\":\ndata: \ndata:\ndata: true}\n\n"]);
        assert_eq!(got, vec![ev(None, "{\n\"foo\":\n\n\ntrue}")]);
    }

    #[test]
    fn field_without_space_and_with_two_spaces() {
        let got = parse_all(&[b"data:abc\n\ndata:  two\n\n"]);
        assert_eq!(got, vec![ev(None, "abc"), ev(None, " two")]);
    }

    #[test]
    fn comments_are_ignored() {
        let got = parse_all(&[b": ping\n\n:keep-alive\ndata: x\n: mid\n\n"]);
        assert_eq!(got, vec![ev(None, "x")]);
    }

    #[test]
    fn crlf_cr_and_lf_line_endings() {
        let want = vec![ev(Some("a"), "1"), ev(None, "2")];
        assert_eq!(
            parse_all(&[b"event: a\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n"]),
            want
        );
        assert_eq!(parse_all(&[b"event: a\rdata: 1\r\rdata: 2\r\r"]), want);
        assert_eq!(parse_all(&[b"event: a\ndata: 1\n\ndata: 2\n\n"]), want);
    }

    #[test]
    fn crlf_split_across_chunks_is_one_line_ending() {
        // Were the LF counted as a second line, the event would dispatch after "1".
        let got = parse_all(&[b"data: 1\r", b"\ndata: 2\r", b"\n\r", b"\n"]);
        assert_eq!(got, vec![ev(None, "1\n2")]);
    }

    #[test]
    fn multibyte_char_split_across_chunks() {
        let text = "data: h\u{e9}llo \u{1F600} \u{4E16}\n\n".as_bytes();
        let mut chunks: Vec<&[u8]> = Vec::new();
        for i in 0..text.len() {
            chunks.push(&text[i..i + 1]);
        }
        assert_eq!(
            parse_all(&chunks),
            vec![ev(None, "h\u{e9}llo \u{1F600} \u{4E16}")]
        );
    }

    #[test]
    fn unicode_line_separators_are_not_line_breaks() {
        let got = parse_all(&["data: a\u{2028}b\u{2029}c\u{85}d\n\n".as_bytes()]);
        assert_eq!(got, vec![ev(None, "a\u{2028}b\u{2029}c\u{85}d")]);
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        let got = parse_all(&[b"data: a\xFF\xFEb\n\n"]);
        assert_eq!(got, vec![ev(None, "a\u{FFFD}\u{FFFD}b")]);
    }

    #[test]
    fn id_retry_and_unknown_fields() {
        let got = parse_all(&[b"id: 7\nretry: 1500\nfoo: bar\ndata\ndata: x\n\n"]);
        assert_eq!(
            got,
            vec![SseEvent {
                event: None,
                data: "\nx".into(),
                id: Some("7".into()),
                retry: Some(1500)
            }]
        );
    }

    #[test]
    fn bom_is_skipped_even_when_split() {
        let got = parse_all(&[b"\xEF", b"\xBB", b"\xBFdata: x\n\n"]);
        assert_eq!(got, vec![ev(None, "x")]);
    }

    #[test]
    fn pending_event_is_flushed_at_end() {
        assert_eq!(parse_all(&[b"data: [DONE]"]), vec![ev(None, "[DONE]")]);
        assert_eq!(parse_all(&[b"data: [DONE]\n"]), vec![ev(None, "[DONE]")]);
    }

    #[test]
    fn line_limit_is_enforced() {
        let mut p = SseParser::with_max_line(16);
        assert!(p.push(b"data: 0123456789").is_ok());
        assert_eq!(p.push(b"abcdef"), Err(LineTooLong { limit: 16 }));

        // Many short data lines cannot grow an event past the limit either.
        let mut p = SseParser::with_max_line(16);
        assert!(p.push(b"data: 0123456789\n").is_ok());
        assert!(p.push(b"data: 0123456789\n").is_err());
    }

    #[test]
    fn long_line_in_many_chunks_is_scanned_once() {
        // Incremental scanning: a 1 MB line fed in 1 KB pieces stays fast.
        let mut p = SseParser::new();
        p.push(b"data: ").unwrap();
        let piece = vec![b'a'; 1024];
        for _ in 0..1024 {
            assert!(p.push(&piece).unwrap().is_empty());
        }
        let got = p.push(b"\n\n").unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].data.len(), 1024 * 1024);
    }

    proptest! {
        #[test]
        fn chunking_does_not_change_events(
            events in proptest::collection::vec(("[a-z]{0,6}", "[ -~\u{e9}\u{1F600}]{0,20}"), 0..6),
            eol in prop_oneof![Just("\n"), Just("\r\n"), Just("\r")],
            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..12),
        ) {
            let mut input = String::new();
            for (name, data) in &events {
                input.push_str(": keep-alive");
                input.push_str(eol);
                if !name.is_empty() {
                    input.push_str(&format!("event: {name}{eol}"));
                }
                input.push_str(&format!("data: {data}{eol}data:{data}{eol}{eol}"));
            }
            let bytes = input.as_bytes();
            let whole = parse_all(&[bytes]);
            prop_assert_eq!(whole.len(), events.len());

            let mut points: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
            points.sort_unstable();
            let mut chunks: Vec<&[u8]> = Vec::new();
            let mut last = 0;
            for p in points {
                chunks.push(&bytes[last..p]);
                last = p;
            }
            chunks.push(&bytes[last..]);
            prop_assert_eq!(parse_all(&chunks), whole);
        }

        #[test]
        fn arbitrary_bytes_never_panic(
            chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 0..16)
        ) {
            let mut p = SseParser::with_max_line(100);
            for c in &chunks {
                if p.push(c).is_err() {
                    return Ok(());
                }
            }
            let _ = p.finish();
        }
    }
}
