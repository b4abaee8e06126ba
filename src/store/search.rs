//! Full-text search over the messages conversations show (the FTS5 index
//! `messages_fts`, kept in step with `messages` by the triggers of migration
//! 0006).
//!
//! What the user types is never handed to FTS5 as query syntax: it is split
//! into words (and `"quoted phrases"`), each reduced to the letters and
//! digits FTS5's tokenizer would see, and every word must occur. The last
//! word also matches as a prefix while it is still being typed, so results
//! can follow the keyboard.
//!
//! Chinese and Japanese are written without spaces, and FTS5's unicode61
//! tokenizer makes one token of a whole run of them, so a word inside a
//! sentence could not be found. Messages holding such text are also in a
//! second index (`messages_unspaced_fts`, migration 0011), given to it with
//! each of those characters a word of its own ([`index_text`]); a query
//! with such characters is answered from it, its runs made the phrases of
//! their characters: a substring search for those scripts. The triggers
//! only note which messages changed; tock indexes them before such a
//! search ([`Store::index_unspaced`]). (FTS5's `trigram` tokenizer cannot
//! find the two-character words those languages are full of, and no crate
//! offers a tokenizer for SQLite that does this.)
//!
//! Emoji and other pictographs are separators to the tokenizer, so no index
//! held them. The second index holds them too (migration 0013), each as a
//! word of letters and digits that names its code point ([`symbol_word`]),
//! and a query with them is answered there the same way.

use std::ops::Range;

use anyhow::Result;
use rusqlite::params;

use super::{MessageStatus, Role, Store};

/// One message that matches a search.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchHit {
    pub conversation_id: i64,
    /// The conversation's title as stored (`None` until one is set or derived).
    pub conversation_title: Option<String>,
    pub message_id: i64,
    pub role: Role,
    /// UTC epoch ms.
    pub created_at: i64,
    /// A one-line excerpt around the first match: control characters and
    /// line breaks shown as spaces, `…` where text was cut.
    pub snippet: String,
    /// Byte ranges of `snippet` holding matched words (in order, disjoint,
    /// on character boundaries), for the front end to highlight.
    pub highlights: Vec<Range<usize>>,
}

/// A search as FTS5 gets it, and the words to highlight.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchQuery {
    /// The FTS5 MATCH expression: only quoted phrases of plain tokens, and
    /// at most one trailing `*`.
    pub expression: String,
    /// The phrases every match is made of, for highlighting.
    phrases: Vec<Vec<Term>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Term {
    /// Lowercased token.
    text: String,
    prefix: bool,
}

impl SearchQuery {
    /// The query for what a user typed, or `None` when it holds no word at
    /// all (only punctuation or spaces): such a search matches nothing.
    pub fn parse(input: &str) -> Option<Self> {
        // (tokens, quoted by the user)
        let mut groups: Vec<(Vec<String>, bool)> = Vec::new();
        let mut rest = input;
        while let Some(start) = rest.find(|c: char| !c.is_whitespace()) {
            rest = &rest[start..];
            let (chunk, quoted, after) = if let Some(inner) = rest.strip_prefix('"') {
                match inner.find('"') {
                    Some(end) => (&inner[..end], true, &inner[end + 1..]),
                    // An unclosed quote: the rest is the phrase.
                    None => (inner, true, ""),
                }
            } else {
                let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                (&rest[..end], false, &rest[end..])
            };
            // The index folds accents itself; highlighting compares folded words.
            let tokens = tokens(chunk)
                .map(|r| chunk[r].to_lowercase())
                .collect::<Vec<_>>();
            if !tokens.is_empty() {
                groups.push((tokens, quoted));
            }
            rest = after;
        }
        if groups.is_empty() {
            return None;
        }
        // Still typing the last word (no space after it yet): match it as a prefix.
        let typing = !input.ends_with(char::is_whitespace) && !input.ends_with('"');
        let last = groups.len() - 1;
        let mut expression = String::new();
        let mut phrases = Vec::new();
        for (i, (tokens, quoted)) in groups.iter().enumerate() {
            // Not a single character: as a prefix it stands for much of
            // the index ("0" for every number), and the first key of a
            // search took seconds on a large message; as a word it is quick.
            let prefix = i == last
                && typing
                && !quoted
                && tokens
                    .last()
                    .is_some_and(|t| !(t.len() == 1 && t.is_ascii()));
            if !expression.is_empty() {
                expression.push(' ');
            }
            // Tokens are letters and digits only (a pictograph as the word
            // the index holds for it): nothing to escape inside the quotes.
            expression.push('"');
            let words: Vec<String> = tokens
                .iter()
                .map(|t| match t.chars().next() {
                    Some(c) if is_symbol(c) => symbol_word(c),
                    _ => t.clone(),
                })
                .collect();
            expression.push_str(&words.join(" "));
            expression.push('"');
            if prefix {
                expression.push('*');
            }
            let n = tokens.len();
            phrases.push(
                tokens
                    .iter()
                    .enumerate()
                    .map(|(j, t)| Term {
                        text: fold_for_matching(t),
                        // In a phrase, FTS5 applies `*` to its last token.
                        prefix: prefix && j == n - 1,
                    })
                    .collect(),
            );
        }
        Some(Self {
            expression,
            phrases,
        })
    }

    /// The tokens of `text` (byte ranges) that make up a match of one of
    /// the phrases: each phrase's words in a row, as FTS5 matches them.
    fn matched(&self, text: &str) -> Vec<Range<usize>> {
        let words: Vec<(Range<usize>, String)> = tokens(text)
            .map(|r| (r.clone(), fold_for_matching(&text[r])))
            .collect();
        let mut hit = vec![false; words.len()];
        for phrase in &self.phrases {
            for start in 0..words.len().saturating_sub(phrase.len() - 1) {
                let here = phrase.iter().zip(&words[start..]).all(|(t, (_, w))| {
                    if t.prefix {
                        w.starts_with(&t.text)
                    } else {
                        *w == t.text
                    }
                });
                if here {
                    hit[start..start + phrase.len()].fill(true);
                }
            }
        }
        // Characters matched one by one (Chinese, Japanese) are one range.
        let mut ranges: Vec<Range<usize>> = Vec::new();
        for ((r, _), _) in words.into_iter().zip(hit).filter(|(_, h)| *h) {
            match ranges.last_mut() {
                Some(last) if last.end == r.start => last.end = r.end,
                _ => ranges.push(r),
            }
        }
        ranges
    }
}

/// Text as the second index is given it: each character of a script
/// written without spaces (Chinese, Japanese) set apart as a word of its
/// own, each pictograph as the word naming it; anything else as it is.
fn index_text(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(is_unspaced) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + text.len() / 2);
    for c in text.chars() {
        if is_symbol(c) {
            out.push(' ');
            out.push_str(&symbol_word(c));
            out.push(' ');
        } else if is_unspaced(c) {
            out.push(' ');
            out.push(c);
            out.push(' ');
        } else if !is_joiner(c) {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A pictograph as a word the tokenizer keeps: `🚀` is `emoji01f680`
/// (fixed width, so one never starts another).
fn symbol_word(c: char) -> String {
    format!("emoji{:06x}", c as u32)
}

/// The emoji presentation selectors and the zero-width joiner between the
/// parts of an emoji: left out, so `❤️` and `❤` are one word.
fn is_joiner(c: char) -> bool {
    matches!(c, '\u{FE0E}' | '\u{FE0F}' | '\u{200D}')
}

/// Characters the second index holds one by one: [`is_symbol`] and the
/// letters of the scripts written without spaces between words: Han
/// (Chinese characters, kanji), hiragana and katakana. The triggers of
/// migration 0013 test the same set with `GLOB`.
fn is_unspaced(c: char) -> bool {
    is_symbol(c) || is_unspaced_letter(c)
}

/// Emoji and pictographs: miscellaneous technical, miscellaneous symbols
/// and dingbats, symbols and arrows, and U+1F000–1FAFF (tiles, cards,
/// enclosed supplements, emoticons, transport, pictographs).
fn is_symbol(c: char) -> bool {
    matches!(c as u32, 0x2300..=0x23FF | 0x2600..=0x27BF | 0x2B00..=0x2BFF | 0x1F000..=0x1FAFF)
}

fn is_unspaced_letter(c: char) -> bool {
    matches!(c as u32,
        0x2E80..=0x2FDF // CJK radicals
        | 0x3005 | 0x3007 | 0x3021..=0x3029 | 0x3038..=0x303B // 々 〇 and numerals
        | 0x3041..=0x309F // hiragana
        | 0x30A0..=0x30FF | 0x31F0..=0x31FF | 0xFF66..=0xFF9F // katakana
        | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF // Han
        | 0x20000..=0x323AF)
}

/// A word as the index compares it: lower case, without diacritics (the
/// tokenizer's `remove_diacritics`), so "cafe" highlights "Café" and back.
pub fn fold_for_matching(word: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    word.nfd()
        .filter(|c| !is_mark(*c))
        .collect::<String>()
        .to_lowercase()
}

/// Byte ranges of the words of `text` as FTS5's unicode61 tokenizer splits
/// its [`index_text`] (runs of letters, digits and combining marks; each
/// character of a script written without spaces alone).
fn tokens(text: &str) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut chars = text.char_indices().peekable();
    std::iter::from_fn(move || {
        let (start, first) = chars.find(|(_, c)| is_token_char(*c) || is_symbol(*c))?;
        let mut end = text.len();
        if is_unspaced(first) {
            return Some(start..start + first.len_utf8());
        }
        while let Some(&(i, c)) = chars.peek() {
            if !is_token_char(c) || is_unspaced(c) {
                end = i;
                break;
            }
            chars.next();
        }
        Some(start..end)
    })
}

fn is_token_char(c: char) -> bool {
    c.is_alphanumeric() || (!c.is_ascii() && !c.is_whitespace() && !c.is_control() && is_mark(c))
}

/// Combining marks (U+0300–U+036F and a few common blocks): part of the
/// word they follow, as for the tokenizer.
fn is_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
}

/// Bytes of context kept before the first match.
const LEAD: usize = 60;
/// Longest excerpt, in bytes of the message (before spaces are collapsed).
const SNIPPET_BYTES: usize = 200;

/// Where the excerpt centres: the first match of the word matched least
/// often (in a log where every line says ERROR, `ERROR module_15` shows
/// module_15's line, not the first ERROR).
fn telling_match(content: &str, matched: &[Range<usize>]) -> usize {
    let mut by_word: Vec<(String, usize, usize)> = Vec::new();
    for r in matched {
        let word = content[r.clone()].to_lowercase();
        match by_word.iter_mut().find(|(w, _, _)| *w == word) {
            Some(e) => e.1 += 1,
            None => by_word.push((word, 1, r.start)),
        }
    }
    by_word
        .iter()
        .min_by_key(|(_, n, at)| (*n, *at))
        .map_or(0, |(_, _, at)| *at)
}

/// A one-line excerpt of `content` around the first match of `query`, and
/// the byte ranges of the matched words in it.
pub fn snippet(content: &str, query: &SearchQuery) -> (String, Vec<Range<usize>>) {
    let matched = query.matched(content);
    let first = telling_match(content, &matched);
    // Start at a word boundary LEAD bytes before the first match.
    let mut start = floor_char(content, first.saturating_sub(LEAD));
    if start > 0
        && let Some(w) = tokens(&content[start..first]).next()
    {
        start = (start + w.start).min(first);
        // Cut inside a word: start at the next one.
        if start > 0 && content[..start].ends_with(is_token_char) {
            start = tokens(&content[start..first])
                .nth(1)
                .map_or(first, |r| start + r.start);
        }
    }
    let end = floor_char(content, (start + SNIPPET_BYTES).min(content.len()));
    // Do not cut the last word in half (unless it is all there is).
    let end = if end < content.len() && content[..end].ends_with(is_token_char) {
        match content[start..end].rfind(|c: char| !is_token_char(c)) {
            Some(i) if start + i > first => start + i,
            _ => end,
        }
    } else {
        end
    };

    let mut out = String::with_capacity(end - start + 8);
    let mut ranges = Vec::new();
    if start > 0 {
        out.push('…');
    }
    let mut in_space = start > 0;
    let mut next = matched.iter().filter(|r| r.start >= start && r.end <= end);
    let mut current = next.next();
    let mut open: Option<usize> = None;
    for (i, c) in content[start..end].char_indices() {
        let i = start + i;
        if let Some(r) = current
            && i == r.start
        {
            open = Some(out.len());
        }
        if c.is_whitespace() || c.is_control() {
            if !in_space {
                out.push(' ');
                in_space = true;
            }
        } else {
            // What would reorder or hide text (a bidi override, say) shows
            // as the terminal-safe form every other view gives it.
            let mut one = [0u8; 4];
            out.push_str(&crate::sanitize::sanitize_line(c.encode_utf8(&mut one)));
            in_space = false;
        }
        if let Some(r) = current
            && i + c.len_utf8() == r.end
        {
            if let Some(o) = open.take() {
                ranges.push(o..out.len());
            }
            current = next.next();
        }
    }
    let trimmed = out.trim_end().len();
    out.truncate(trimmed);
    if end < content.len() {
        out.push('…');
    }
    (out, ranges)
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl Store {
    /// Messages matching `query` (see the module doc), newest first, at most
    /// `limit`. A query without any word matches nothing.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>> {
        self.search_where(query, None, limit)
    }

    /// [`Store::search`] within one conversation.
    pub fn search_in(
        &self,
        conversation_id: i64,
        query: &str,
        limit: usize,
    ) -> Result<Vec<SearchHit>> {
        self.search_where(query, Some(conversation_id), limit)
    }

    fn search_where(
        &self,
        query: &str,
        conversation_id: Option<i64>,
        limit: usize,
    ) -> Result<Vec<SearchHit>> {
        let Some(q) = SearchQuery::parse(query) else {
            return Ok(Vec::new());
        };
        // Text written without spaces is found in the second index.
        let index = if query.chars().any(is_unspaced) {
            if let Err(e) = self.index_unspaced() {
                // A read-only database: what is indexed already is searched.
                tracing::warn!("indexing for search: {e:#}");
            }
            "messages_unspaced_fts"
        } else {
            "messages_fts"
        };
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let conn = self.conn();
        // Newest first: FTS5 walks its index in rowid order, so a common
        // word costs no more than a rare one (ranking every match would).
        let mut st = conn.prepare_cached(&format!(
            "SELECT m.id, m.conversation_id, c.title, m.role, m.created_at, m.content, m.status
             FROM {index} f
             JOIN messages m ON m.id = f.rowid
             JOIN conversations c ON c.id = m.conversation_id
             WHERE {index} MATCH ?1 AND (?3 IS NULL OR m.conversation_id = ?3)
             ORDER BY f.rowid DESC
             LIMIT ?2"
        ))?;
        // A few more than asked for: earlier attempts of a reply that the
        // conversation shows as one (collapsed) are left out below.
        let fetch = limit.saturating_add(HIDDEN_SLACK);
        let rows: Vec<_> = st
            .query_map(params![q.expression, fetch, conversation_id], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, Role>(3)?,
                    r.get::<_, i64>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, MessageStatus>(6)?,
                ))
            })?
            .collect::<rusqlite::Result<_>>()?;
        drop(st);
        drop(conn);
        let mut collapsed: std::collections::HashMap<i64, super::messages::Collapsed> =
            std::collections::HashMap::new();
        let mut hits = Vec::new();
        for row in rows {
            let (
                message_id,
                conversation_id,
                conversation_title,
                role,
                created_at,
                content,
                status,
            ) = row;
            if hits.len() as i64 >= limit {
                break;
            }
            // Only a cut attempt can be one the conversation does not show.
            if matches!(status, MessageStatus::Interrupted | MessageStatus::Error) {
                let c = match collapsed.entry(conversation_id) {
                    std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                    std::collections::hash_map::Entry::Vacant(e) => e.insert({
                        let reasoned = self.reasoned(conversation_id)?;
                        super::messages::collapse_attempts(&self.messages(conversation_id)?, |id| {
                            reasoned.iter().any(|(m, _)| *m == id)
                        })
                    }),
                };
                if c.is_hidden(message_id) {
                    continue;
                }
            }
            let (snippet, highlights) = snippet(&content, &q);
            hits.push(SearchHit {
                conversation_id,
                conversation_title,
                message_id,
                role,
                created_at,
                snippet,
                highlights,
            });
        }
        Ok(hits)
    }
}

/// How many hits beyond the limit a search reads, for the earlier attempts
/// of cut replies it leaves out (each cut reply leaves at most a few).
const HIDDEN_SLACK: i64 = 50;

impl Store {
    /// Bring the index of text written without spaces up to date: the
    /// messages the triggers noted are indexed again (or taken out), a
    /// batch per transaction so a long first run never holds the database.
    pub fn index_unspaced(&self) -> Result<()> {
        const BATCH: i64 = 2000;
        loop {
            let mut conn = self.conn();
            let pending: bool = conn.query_row(
                "SELECT EXISTS(SELECT 1 FROM messages_unspaced_pending)",
                [],
                |r| r.get(0),
            )?;
            if !pending {
                return Ok(());
            }
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let rows: Vec<(i64, Option<String>)> = {
                // The content only of messages the search shows.
                let mut st = tx.prepare_cached(
                    "SELECT p.message_id, m.content FROM messages_unspaced_pending p
                     LEFT JOIN messages m ON m.id = p.message_id
                          AND m.role IN ('user', 'assistant')
                          AND m.status NOT IN ('streaming', 'superseded')
                     ORDER BY p.message_id LIMIT ?1",
                )?;
                st.query_map([BATCH], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect::<rusqlite::Result<_>>()?
            };
            {
                let mut out =
                    tx.prepare_cached("DELETE FROM messages_unspaced_fts WHERE rowid = ?1")?;
                let mut put = tx.prepare_cached(
                    "INSERT INTO messages_unspaced_fts (rowid, content) VALUES (?1, ?2)",
                )?;
                let mut done = tx.prepare_cached(
                    "DELETE FROM messages_unspaced_pending WHERE message_id = ?1",
                )?;
                for (id, content) in &rows {
                    out.execute([id])?;
                    if let Some(text) = content.as_deref().filter(|t| t.chars().any(is_unspaced)) {
                        put.execute(params![id, index_text(text)])?;
                    }
                    done.execute([id])?;
                }
            }
            tx.commit()?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expr(s: &str) -> Option<String> {
        SearchQuery::parse(s).map(|q| q.expression)
    }

    #[test]
    fn user_text_becomes_plain_phrases() {
        assert_eq!(expr("foo bar"), Some(r#""foo" "bar"*"#.into()));
        assert_eq!(expr("foo bar "), Some(r#""foo" "bar""#.into()));
        assert_eq!(expr(r#"foo"bar"#), Some(r#""foo bar"*"#.into()));
        assert_eq!(expr("a AND"), Some(r#""a" "and"*"#.into()));
        // A single letter or digit last is a word, not a prefix: as one it
        // stands for much of the index.
        assert_eq!(
            expr("NEAR(a b) OR -c"),
            Some(r#""near a" "b" "or" "c""#.into())
        );
        assert_eq!(expr("0"), Some(r#""0""#.into()));
        assert_eq!(expr("03"), Some(r#""03"*"#.into()));
        assert_eq!(
            expr(r#""exact phrase" more"#),
            Some(r#""exact phrase" "more"*"#.into())
        );
        assert_eq!(
            expr(r#"say "unclosed phr"#),
            Some(r#""say" "unclosed phr""#.into())
        );
        assert_eq!(expr("col:value ^x"), Some(r#""col value" "x""#.into()));
        assert_eq!(expr("Émile"), Some(r#""émile"*"#.into()));
        assert_eq!(expr("  \"\" *** ( ) "), None);
        assert_eq!(expr(""), None);
    }

    #[test]
    fn matches_are_highlighted_whatever_their_accents() {
        let q = SearchQuery::parse("cafe ").unwrap();
        let text = "Le Café est ouvert, le cafe aussi";
        let (snip, ranges) = snippet(text, &q);
        let marked: Vec<&str> = ranges.iter().map(|r| &snip[r.clone()]).collect();
        assert_eq!(marked, ["Café", "cafe"]);
        let q = SearchQuery::parse("naïve ").unwrap();
        let (snip, ranges) = snippet("a naive idea", &q);
        assert_eq!(&snip[ranges[0].clone()], "naive");
    }

    #[test]
    fn snippet_marks_matches_by_byte_range() {
        let q = SearchQuery::parse("borrow check").unwrap();
        let (s, r) = snippet("The Borrow checker\nsays no.", &q);
        assert_eq!(s, "The Borrow checker says no.");
        let marked: Vec<&str> = r.iter().map(|r| &s[r.clone()]).collect();
        assert_eq!(marked, ["Borrow", "checker"]);
    }

    #[test]
    fn snippet_is_a_window_around_the_first_match() {
        let q = SearchQuery::parse("needle ").unwrap();
        let text = format!("{} needle {}", "word ".repeat(100), "tail ".repeat(100));
        let (s, r) = snippet(&text, &q);
        assert!(s.starts_with("…word"), "{s}");
        assert!(s.ends_with("tail…"), "{s}");
        assert_eq!(r.len(), 1);
        assert_eq!(&s[r[0].clone()], "needle");
        // A prefix does not highlight a longer word when not typing it.
        let (_, r) = snippet("needles", &q);
        assert!(r.is_empty());
        // The word matched least often places the window: every line of
        // this log says ERROR, one says module15.
        let log: String = (0..200)
            .map(|i| format!("line {i:03} ERROR in module{i} failed\n"))
            .collect();
        let q = SearchQuery::parse("ERROR module15 ").unwrap();
        let (s, _) = snippet(&log, &q);
        assert!(s.contains("module15 failed"), "{s}");
    }

    /// The triggers of migration 0013 (0011's, extended) note the messages
    /// whose text has the characters `is_unspaced` sets apart, tested by a
    /// GLOB: both must hold the same set.
    #[test]
    fn the_triggers_glob_is_the_set_of_unspaced_characters() {
        let sql = include_str!("../../migrations/0013_search_symbols.sql");
        let globs: Vec<&str> = sql
            .match_indices("GLOB '")
            .map(|(i, m)| {
                let rest = &sql[i + m.len()..];
                &rest[..rest.find('\'').unwrap_or(0)]
            })
            .collect();
        assert_eq!(globs.len(), 4);
        assert!(globs.iter().all(|g| *g == globs[0]), "{globs:?}");
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let mut st = conn.prepare("SELECT ?1 GLOB ?2").unwrap();
        let probe = (0x2000u32..0x3500)
            .chain(0x1EF00..0x1FC00)
            .chain(0x4D00..0x4F00)
            .chain(0x9F00..0xA100)
            .chain(0xF800..0xFB00)
            .chain(0xFF00..0xFFF0)
            .chain([0x1FFFF, 0x20000, 0x2A6DF, 0x323AF, 0x323B0]);
        for c in probe.filter_map(char::from_u32) {
            let by_glob: bool = st
                .query_row(rusqlite::params![format!("a{c}b"), globs[0]], |r| r.get(0))
                .unwrap();
            assert_eq!(by_glob, is_unspaced(c), "U+{:04X} {c}", c as u32);
        }
    }

    #[test]
    fn runs_without_spaces_are_words_of_one_character() {
        assert_eq!(expr("天气"), Some(r#""天 气"*"#.into()));
        assert_eq!(expr("GPT模型 "), Some(r#""gpt 模 型""#.into()));
        assert_eq!(index_text("用GPT模型"), " 用 GPT 模  型 ");
        assert_eq!(index_text("plain"), "plain");
        let q = SearchQuery::parse("天气 ").unwrap();
        let (snip, ranges) = snippet("今天天气很好，天也蓝", &q);
        let marked: Vec<&str> = ranges.iter().map(|r| &snip[r.clone()]).collect();
        assert_eq!(marked, ["天气"]);
    }

    #[test]
    fn pictographs_are_words_named_by_their_code_point() {
        assert_eq!(expr("🚀"), Some(r#""emoji01f680"*"#.into()));
        assert_eq!(expr("ship 🚀 "), Some(r#""ship" "emoji01f680""#.into()));
        // Presentation selectors and joiners are left out.
        assert_eq!(expr("❤️ "), Some(r#""emoji002764""#.into()));
        assert_eq!(index_text("I ❤️ it"), "I  emoji002764  it");
        assert_eq!(
            index_text("👨‍👩"),
            " emoji01f468  emoji01f469 ",
            "a joined sequence is its parts"
        );
        let q = SearchQuery::parse("❤ ").unwrap();
        let (snip, ranges) = snippet("I ❤️ Rust", &q);
        let marked: Vec<&str> = ranges.iter().map(|r| &snip[r.clone()]).collect();
        assert_eq!(marked, ["❤"]);
    }

    #[test]
    fn snippet_is_inert_and_keeps_char_boundaries() {
        let q = SearchQuery::parse("ß").unwrap();
        let text = format!("\x1b[31mred\x1b[0m {}ß and ü", "é".repeat(80));
        let (s, r) = snippet(&text, &q);
        assert!(!s.contains('\x1b'), "{s:?}");
        // A bidi override is shown, not obeyed.
        let q = SearchQuery::parse("RLO").unwrap();
        let (s, r2) = snippet(
            "first line\u{202e}RLO reversed; I \u{2764}\u{fe0f} Rust \u{1f469}\u{200d}\u{1f4bb}",
            &q,
        );
        assert!(!s.contains('\u{202e}'), "{s:?}");
        assert!(s.contains("<U+202E>"), "{s:?}");
        // Drawn, a joined emoji shows as its parts (terminals disagree on
        // the joined one); not cut between them.
        assert!(s.contains("\u{1f469}\u{1f4bb}"), "emoji kept whole: {s:?}");
        assert_eq!(
            r2.iter().map(|x| &s[x.clone()]).collect::<Vec<_>>(),
            ["RLO"]
        );
        for range in &r {
            assert!(s.is_char_boundary(range.start) && s.is_char_boundary(range.end));
        }
    }
}
