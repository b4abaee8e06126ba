//! The `conversations` table.

use std::collections::HashMap;

use anyhow::Result;
use rusqlite::{OptionalExtension, Row, params};

use super::Store;

#[derive(Clone, Debug, PartialEq)]
pub struct Conversation {
    pub id: i64,
    pub title: Option<String>,
    pub model: Option<String>,
    pub role: Option<String>,
    pub origin: String,
    pub created_at: i64,
    pub updated_at: i64,
    /// Set when the user stopped a reply: nothing more is sent here until resumed.
    pub queue_paused_at: Option<i64>,
}

impl Conversation {
    /// The title to show: the set title, or a placeholder.
    pub fn display_title(&self) -> String {
        match &self.title {
            Some(t) if !t.trim().is_empty() => crate::sanitize::sanitize_line(t).into_owned(),
            _ => format!("Conversation {}", self.id),
        }
    }

    fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            id: r.get(0)?,
            title: r.get(1)?,
            model: r.get(2)?,
            role: r.get(3)?,
            origin: r.get(4)?,
            created_at: r.get(5)?,
            updated_at: r.get(6)?,
            queue_paused_at: r.get(7)?,
        })
    }
}

const COLS: &str = "id, title, model, role, origin, created_at, updated_at, queue_paused_at";

/// A title derived from the first message: its first line with text, as
/// plain text (no Markdown marks, list or quote markers, table pipes or link
/// targets), trimmed to ~48 chars.
/// An untitled conversation takes its title from `text` (its first
/// message, or what is first scheduled there). True if it took it.
pub(crate) fn title_untitled(
    conn: &rusqlite::Connection,
    id: i64,
    text: &str,
) -> rusqlite::Result<bool> {
    let n = conn.execute(
        "UPDATE conversations SET title = ?2 WHERE id = ?1 AND (title IS NULL OR title = '')",
        rusqlite::params![id, derive_title(text)],
    )?;
    Ok(n == 1)
}

pub fn derive_title(text: &str) -> String {
    let line = text
        .lines()
        .map(plain_line)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    let mut out: String = line.chars().take(48).collect();
    if line.chars().count() > 48 {
        out.push('…');
    }
    out
}

/// One line of Markdown as the words a reader sees.
fn plain_line(line: &str) -> String {
    let mut l = line.trim();
    // Block markers: headings, quotes, list bullets, numbered items.
    loop {
        let before = l;
        l = l
            .trim_start_matches('#')
            .trim_start_matches('>')
            .trim_start();
        for bullet in ["- ", "* ", "+ "] {
            if let Some(rest) = l.strip_prefix(bullet) {
                l = rest.trim_start();
            }
        }
        if let Some(dot) = l.find(". ")
            && dot > 0
            && l[..dot].chars().all(|c| c.is_ascii_digit())
        {
            l = l[dot + 2..].trim_start();
        }
        if l == before {
            break;
        }
    }
    // A code fence or a table rule says nothing.
    if l.starts_with("```") || l.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ')) {
        return String::new();
    }
    // Links: keep the text, drop the target.
    let mut out = String::new();
    let mut rest = l;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find("](").map(|c| open + c) else {
            break;
        };
        let Some(end) = rest[close..].find(')').map(|e| close + e) else {
            break;
        };
        out.push_str(&rest[..open]);
        out.push_str(&rest[open + 1..close]);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    // Table pipes and code marks; emphasis only where it opens and closes.
    let out: String = out
        .chars()
        .map(|c| if c == '|' { ' ' } else { c })
        .filter(|c| *c != '`')
        .collect();
    let mut words: Vec<String> = out.split_whitespace().map(str::to_string).collect();
    for mark in ["**", "__", "~~", "*", "_"] {
        strip_emphasis(&mut words, mark);
    }
    words.join(" ")
}

/// Take `mark` off where it opens at a word's start and closes at the end of
/// that word or a later one (before trailing punctuation), as emphasis does:
/// `**bold** text`, `__two words__`. Marks inside a word, or one that never
/// closes, are the text's own: `my__private__var`, `__init__.py`, `~/path`,
/// `2*3`.
fn strip_emphasis(words: &mut [String], mark: &str) {
    let core_end = |w: &str| w.trim_end_matches(|c: char| ".,;:!?)".contains(c)).len();
    let mut i = 0;
    while i < words.len() {
        let opens = words[i].starts_with(mark) && words[i].len() > mark.len();
        let closes_at = opens
            .then(|| {
                (i..words.len()).find(|&j| {
                    let w = &words[j];
                    let core = &w[..core_end(w)];
                    let min = if j == i {
                        2 * mark.len() + 1
                    } else {
                        mark.len() + 1
                    };
                    core.len() >= min && core.ends_with(mark)
                })
            })
            .flatten();
        let Some(j) = closes_at else {
            i += 1;
            continue;
        };
        words[i].replace_range(..mark.len(), "");
        let end = core_end(&words[j]);
        words[j].replace_range(end - mark.len()..end, "");
        i = j + 1;
    }
}

impl Store {
    pub fn create_conversation(&self, title: Option<&str>, origin: &str, now: i64) -> Result<i64> {
        let conn = self.conn();
        conn.execute(
            "INSERT INTO conversations (title, origin, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)",
            params![title, origin, now],
        )?;
        Ok(conn.last_insert_rowid())
    }

    pub fn conversation(&self, id: i64) -> Result<Option<Conversation>> {
        let conn = self.conn();
        Ok(conn
            .query_row(
                &format!("SELECT {COLS} FROM conversations WHERE id = ?1"),
                [id],
                Conversation::from_row,
            )
            .optional()?)
    }

    /// The conversations of `ids` that exist (a list's titles: one indexed
    /// lookup each, not a read of every conversation).
    pub fn conversations_by_id(&self, ids: &[i64]) -> Result<Vec<Conversation>> {
        let conn = self.conn();
        let mut st =
            conn.prepare_cached(&format!("SELECT {COLS} FROM conversations WHERE id = ?1"))?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(c) = st.query_row([id], Conversation::from_row).optional()? {
                out.push(c);
            }
        }
        Ok(out)
    }

    /// All conversations, most recently active first.
    pub fn conversations(&self) -> Result<Vec<Conversation>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(&format!(
            "SELECT {COLS} FROM conversations ORDER BY updated_at DESC, id DESC"
        ))?;
        let rows = st.query_map([], Conversation::from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Find by `#ID`, exact title, or id (all digits). A title shared by
    /// several conversations, or digits that are both an id and another
    /// conversation's title, is refused with the candidates' ids: a script
    /// must never reach a different conversation because messages moved.
    pub fn find_conversation(&self, key: &str) -> Result<Option<Conversation>> {
        if let Some(id) = key.strip_prefix('#') {
            let id: i64 = id
                .trim()
                .parse()
                .map_err(|_| anyhow::anyhow!("\"{key}\" is not a conversation id"))?;
            return self.conversation(id);
        }
        let titled: Vec<Conversation> = {
            let conn = self.conn();
            let mut st = conn.prepare_cached(&format!(
                "SELECT {COLS} FROM conversations WHERE title = ?1 ORDER BY id"
            ))?;
            st.query_map([key], Conversation::from_row)?
                .collect::<rusqlite::Result<_>>()?
        };
        // An id, or the name an untitled conversation is listed under
        // ("Conversation 3": `display_title`).
        let untitled_name = key
            .strip_prefix("Conversation ")
            .and_then(|n| n.trim().parse::<i64>().ok());
        let by_id = match (key.parse::<i64>(), untitled_name) {
            (Ok(id), _) => self.conversation(id)?,
            (_, Some(id)) => self
                .conversation(id)?
                .filter(|c| c.title.as_deref().is_none_or(|t| t.trim().is_empty())),
            _ => None,
        };
        let ids = |v: &[Conversation]| {
            v.iter()
                .map(|c| format!("#{}", c.id))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let shown = crate::sanitize::sanitize_line(key);
        match (titled.len(), by_id) {
            (0, by_id) => Ok(by_id),
            (1, Some(c)) if c.id != titled[0].id => Err(anyhow::anyhow!(
                "\"{shown}\" is both conversation #{} and the title of conversation #{}; write the id with a # (e.g. #{})",
                c.id,
                titled[0].id,
                c.id
            )),
            (1, _) => Ok(titled.into_iter().next()),
            (n, _) => Err(anyhow::anyhow!(
                "{n} conversations are titled \"{shown}\" ({}); give one by its id, e.g. {}",
                ids(&titled),
                titled
                    .first()
                    .map(|c| format!("#{}", c.id))
                    .unwrap_or_default()
            )),
        }
    }

    /// Give an untitled conversation a title made from `text` (what is
    /// scheduled there names it before anything is sent). True if it took it.
    pub fn title_if_untitled(&self, id: i64, text: &str) -> Result<bool> {
        Ok(title_untitled(&self.conn(), id, text)?)
    }

    pub fn rename_conversation(&self, id: i64, title: &str, now: i64) -> Result<bool> {
        let n = self.conn().execute(
            "UPDATE conversations SET title = ?2, updated_at = ?3 WHERE id = ?1",
            params![id, title, now],
        )?;
        Ok(n == 1)
    }

    /// Conversations last written more than `least_ms` later than `now`
    /// were written on a clock that was ahead and has been set right:
    /// their time comes back to `now`, so the list orders them by what
    /// happened, not by the wrong clock. Returns how many came back.
    pub fn bring_back_conversations_ahead(&self, now: i64, least_ms: i64) -> Result<usize> {
        Ok(self.conn().execute(
            "UPDATE conversations SET updated_at = ?1 WHERE updated_at > ?1 + ?2",
            params![now, least_ms],
        )?)
    }

    pub fn set_conversation_model(&self, id: i64, model: Option<&str>) -> Result<()> {
        self.conn().execute(
            "UPDATE conversations SET model = ?2 WHERE id = ?1",
            params![id, model],
        )?;
        Ok(())
    }

    /// Pause (Some(now)) or resume (None) a conversation's queue. True if it changed.
    pub fn set_queue_paused(&self, id: i64, paused_at: Option<i64>) -> Result<bool> {
        let n = self.conn().execute(
            "UPDATE conversations SET queue_paused_at = ?2
             WHERE id = ?1 AND (queue_paused_at IS NULL) != (?2 IS NULL)",
            params![id, paused_at],
        )?;
        Ok(n == 1)
    }

    /// Ask whichever process streams the conversation's reply to stop it
    /// (the reply is named, so a request outliving it stops no other); or,
    /// before the reply's first word, the request in flight (its outbox row
    /// is named). False if neither is there.
    pub fn request_stop(&self, conversation_id: i64) -> Result<bool> {
        let conn = self.conn();
        let n = conn.execute(
            "UPDATE conversations SET stop_reply_id = (
                 SELECT id FROM messages INDEXED BY messages_streaming
                 WHERE status = 'streaming' AND conversation_id = ?1
                 ORDER BY id DESC LIMIT 1)
             WHERE id = ?1 AND EXISTS (SELECT 1 FROM messages INDEXED BY messages_streaming
                 WHERE status = 'streaming' AND conversation_id = ?1)",
            [conversation_id],
        )?;
        if n == 1 {
            return Ok(true);
        }
        let n = conn.execute(
            "UPDATE conversations SET stop_item_id = (
                 SELECT id FROM outbox WHERE conversation_id = ?1 AND status = 'sending'
                 ORDER BY id DESC LIMIT 1)
             WHERE id = ?1 AND EXISTS (SELECT 1 FROM outbox
                 WHERE conversation_id = ?1 AND status = 'sending')",
            [conversation_id],
        )?;
        Ok(n == 1)
    }

    /// Take a request to stop the conversation's reply: true if one was
    /// made for the reply streaming now (a request for a reply that ended
    /// meanwhile is dropped). Run on every other process's commit while a
    /// reply streams here, so it only reads unless a request is there.
    pub fn take_stop_request(&self, conversation_id: i64) -> Result<bool> {
        let conn = self.conn();
        // One read: a request for the request in flight (before its reply
        // began), for the reply, and whether each is still going.
        let asked: Option<(Option<i64>, bool, Option<i64>, bool)> = conn
            .query_row(
                "SELECT c.stop_item_id, EXISTS (SELECT 1 FROM outbox o
                     WHERE o.id = c.stop_item_id AND o.status = 'sending'),
                     c.stop_reply_id, EXISTS (SELECT 1 FROM messages m
                     WHERE m.id = c.stop_reply_id AND m.status = 'streaming')
                 FROM conversations c WHERE c.id = ?1",
                [conversation_id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .optional()?;
        // Deleted in another process while its reply streams here: stopped
        // (it read on to its end, for a conversation no longer there).
        let Some((item, sending, reply, streaming)) = asked else {
            return Ok(true);
        };
        // Taken once: by whoever clears this very request.
        let take = |column: &str, id: i64| -> Result<bool> {
            Ok(conn.execute(
                &format!(
                    "UPDATE conversations SET {column} = NULL WHERE id = ?1 AND {column} = ?2"
                ),
                params![conversation_id, id],
            )? == 1)
        };
        if let Some(item) = item
            && take("stop_item_id", item)?
            && sending
        {
            return Ok(true);
        }
        match reply {
            Some(reply) => Ok(take("stop_reply_id", reply)? && streaming),
            None => Ok(false),
        }
    }

    /// Conversations whose queue the user paused, with when.
    pub fn paused_conversations(&self) -> Result<HashMap<i64, i64>> {
        Ok(paused_queues(&self.conn())?)
    }

    pub fn set_conversation_role(&self, id: i64, role: Option<&str>) -> Result<()> {
        self.conn().execute(
            "UPDATE conversations SET role = ?2 WHERE id = ?1",
            params![id, role],
        )?;
        Ok(())
    }

    /// Delete a conversation and its history. Its pending messages are
    /// canceled (said so in `last_error`); its tasks stay pending and will
    /// fire into a new conversation.
    pub fn delete_conversation(&self, id: i64, now: i64) -> Result<bool> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute(
            "UPDATE outbox SET status = 'canceled', last_error = 'conversation deleted', updated_at = ?2
             WHERE conversation_id = ?1 AND status IN ('pending', 'sending') AND kind != 'task'",
            params![id, now],
        )?;
        tx.execute(
            "UPDATE outbox SET updated_at = ?2 WHERE conversation_id = ?1",
            params![id, now],
        )?;
        let n = tx.execute("DELETE FROM conversations WHERE id = ?1", [id])?;
        tx.commit()?;
        Ok(n == 1)
    }

    pub(crate) fn touch_conversation(
        conn: &rusqlite::Connection,
        id: i64,
        now: i64,
    ) -> rusqlite::Result<()> {
        conn.execute(
            "UPDATE conversations SET updated_at = MAX(updated_at, ?2) WHERE id = ?1",
            params![id, now],
        )?;
        Ok(())
    }
}

/// Conversations whose queue a stop paused, with when: on a connection a
/// caller already holds (`Store::waiting` reads it with the outbox rows).
pub(crate) fn paused_queues(conn: &rusqlite::Connection) -> rusqlite::Result<HashMap<i64, i64>> {
    let mut st = conn.prepare_cached(
        "SELECT id, queue_paused_at FROM conversations WHERE queue_paused_at IS NOT NULL",
    )?;
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}

#[cfg(test)]
mod title_tests {
    use super::derive_title;

    #[test]
    fn titles_are_plain_text() {
        assert_eq!(derive_title("# Building **tock**"), "Building tock");
        assert_eq!(
            derive_title("| Column A | Column B |\n|---|---|"),
            "Column A Column B"
        );
        assert_eq!(
            derive_title("> - see [the docs](https://x.y/z) now"),
            "see the docs now"
        );
        assert_eq!(derive_title("```rust\nfn main() {}\n```"), "fn main() {}");
        assert_eq!(derive_title("1. first `step`"), "first step");
        assert_eq!(derive_title("\n\n  hello  "), "hello");
        assert_eq!(derive_title("why does __init__ fail"), "why does init fail");
        // Marks inside a word, or that never close, are the words' own.
        for keep in [
            "fix __init__.py import",
            "my__private__var",
            "leak__leak",
            "cd ~/path",
            "2*3=6",
            "snake_case_name",
        ] {
            assert_eq!(derive_title(keep), keep);
        }
        assert_eq!(derive_title("__two words__ here"), "two words here");
        assert_eq!(
            derive_title("*emph*, ~~gone~~ and **bold**!"),
            "emph, gone and bold!"
        );
    }
}
