//! Incremental newline-delimited JSON framing over arbitrary byte chunks.
//!
//! Like the SSE parser, bytes are buffered and only complete lines are
//! decoded (lossy UTF-8), so chunk boundaries never matter. Lines end with LF
//! (a trailing CR is dropped); blank lines are skipped. Parsing the JSON is
//! left to the caller, which knows what a line means.

use super::sse::DEFAULT_MAX_LINE;
pub use super::sse::LineTooLong;

#[derive(Debug)]
pub struct NdjsonParser {
    buf: Vec<u8>,
    /// Bytes of `buf` already known to contain no newline.
    scanned: usize,
    max_line: usize,
}

impl Default for NdjsonParser {
    fn default() -> Self {
        Self::with_max_line(DEFAULT_MAX_LINE)
    }
}

impl NdjsonParser {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_max_line(max_line: usize) -> Self {
        Self {
            buf: Vec::new(),
            scanned: 0,
            max_line,
        }
    }

    /// Feed one chunk; returns the complete non-blank lines it finished.
    pub fn push(&mut self, chunk: &[u8]) -> Result<Vec<String>, LineTooLong> {
        self.buf.extend_from_slice(chunk);
        let mut out = Vec::new();
        let mut start = 0;
        let mut from = self.scanned;
        while let Some(rel) = self.buf[from..].iter().position(|&b| b == b'\n') {
            let end = from + rel;
            push_line(&self.buf[start..end], &mut out);
            start = end + 1;
            from = start;
        }
        self.buf.drain(..start);
        self.scanned = self.buf.len();
        if self.buf.len() > self.max_line {
            return Err(LineTooLong {
                limit: self.max_line,
            });
        }
        Ok(out)
    }

    /// End of stream: a last line without a trailing newline still counts.
    pub fn finish(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        push_line(&self.buf, &mut out);
        self.buf.clear();
        self.scanned = 0;
        out
    }
}

fn push_line(raw: &[u8], out: &mut Vec<String>) {
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    let line = String::from_utf8_lossy(raw);
    let line = line.trim();
    if !line.is_empty() {
        out.push(line.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parse_all(chunks: &[&[u8]]) -> Vec<String> {
        let mut p = NdjsonParser::new();
        let mut out = Vec::new();
        for c in chunks {
            out.extend(p.push(c).unwrap());
        }
        out.extend(p.finish());
        out
    }

    #[test]
    fn lines_blank_lines_and_crlf() {
        let got = parse_all(&[b"{\"a\":1}\n\n  \r\n{\"b\":2}\r\n{\"c\":3}"]);
        assert_eq!(got, vec!["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"]);
    }

    #[test]
    fn multibyte_char_split_across_chunks() {
        let text = "{\"t\":\"\u{e9}\u{1F600}\u{4E16}\"}\n".as_bytes();
        let chunks: Vec<&[u8]> = text.chunks(1).collect();
        assert_eq!(
            parse_all(&chunks),
            vec!["{\"t\":\"\u{e9}\u{1F600}\u{4E16}\"}"]
        );
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        assert_eq!(
            parse_all(&[b"{\"t\":\"\xC3\"}\n"]),
            vec!["{\"t\":\"\u{FFFD}\"}"]
        );
    }

    #[test]
    fn line_limit_is_enforced() {
        let mut p = NdjsonParser::with_max_line(8);
        assert_eq!(p.push(b"12345678\n").unwrap(), vec!["12345678"]);
        assert!(p.push(b"12345").is_ok());
        assert_eq!(p.push(b"6789"), Err(LineTooLong { limit: 8 }));
    }

    proptest! {
        #[test]
        fn chunking_does_not_change_lines(
            lines in proptest::collection::vec("[ -~\u{e9}\u{1F600}]{0,20}", 0..8),
            crlf in any::<bool>(),
            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..12),
        ) {
            let eol = if crlf { "\r\n" } else { "\n" };
            let input: String = lines.iter().map(|l| format!("{l}{eol}")).collect();
            let bytes = input.as_bytes();
            let whole = parse_all(&[bytes]);
            let want: Vec<String> =
                lines.iter().map(|l| l.trim().to_string()).filter(|l| !l.is_empty()).collect();
            prop_assert_eq!(&whole, &want);

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
            let mut p = NdjsonParser::with_max_line(100);
            for c in &chunks {
                if p.push(c).is_err() {
                    return Ok(());
                }
            }
            let _ = p.finish();
        }
    }
}
