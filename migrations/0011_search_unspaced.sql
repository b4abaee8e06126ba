-- Search for text written without spaces (Chinese, Japanese). The index of
-- 0006 makes one token of a whole run of such characters, so a word inside
-- a sentence cannot be found there. A second index holds the messages that
-- contain such characters, each of those characters a token of its own,
-- so that a word is found as the phrase of its characters.
--
-- Splitting the characters is done by tock itself (Rust), not by SQL: the
-- triggers below only note which messages changed, in plain SQL, so that a
-- tock built before this migration that still has the database open goes
-- on writing messages unharmed. Each search first indexes what was noted.
CREATE VIRTUAL TABLE messages_unspaced_fts USING fts5(
    content,
    content = '',
    contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);

-- Messages to (re)index or take out of the index above.
CREATE TABLE messages_unspaced_pending (
    message_id INTEGER PRIMARY KEY
);

-- The text is tested only if it is not all ASCII (bytes and characters
-- differ in number), which costs little; the GLOB looks at every character
-- of a reply. Its characters: CJK radicals, 々 〇 and Hangzhou numerals,
-- hiragana, katakana (and half-width), Han (with extensions and
-- compatibility ideographs). Kept the same as `is_unspaced` in
-- src/store/search.rs (a test checks one against the other).
CREATE TRIGGER messages_unspaced_insert AFTER INSERT ON messages
WHEN new.role IN ('user', 'assistant') AND new.status NOT IN ('streaming', 'superseded')
    AND length(CAST(new.content AS BLOB)) > length(new.content)
    AND new.content GLOB '*[⺀-⿟々〇〡-〩〸-〻ぁ-ゟ゠-ヿㇰ-ㇿ㐀-䶿一-鿿豈-﫿ｦ-ﾟ𠀀-𲎯]*'
BEGIN
    INSERT OR IGNORE INTO messages_unspaced_pending (message_id) VALUES (new.id);
END;

CREATE TRIGGER messages_unspaced_delete AFTER DELETE ON messages
WHEN old.role IN ('user', 'assistant') AND old.status NOT IN ('streaming', 'superseded')
    AND length(CAST(old.content AS BLOB)) > length(old.content)
    AND old.content GLOB '*[⺀-⿟々〇〡-〩〸-〻ぁ-ゟ゠-ヿㇰ-ㇿ㐀-䶿一-鿿豈-﫿ｦ-ﾟ𠀀-𲎯]*'
BEGIN
    INSERT OR IGNORE INTO messages_unspaced_pending (message_id) VALUES (old.id);
END;

CREATE TRIGGER messages_unspaced_update AFTER UPDATE OF content, status, role ON messages
WHEN (old.content IS NOT new.content OR old.status IS NOT new.status OR old.role IS NOT new.role)
    AND ((old.role IN ('user', 'assistant') AND old.status NOT IN ('streaming', 'superseded')
          AND length(CAST(old.content AS BLOB)) > length(old.content)
          AND old.content GLOB '*[⺀-⿟々〇〡-〩〸-〻ぁ-ゟ゠-ヿㇰ-ㇿ㐀-䶿一-鿿豈-﫿ｦ-ﾟ𠀀-𲎯]*')
      OR (new.role IN ('user', 'assistant') AND new.status NOT IN ('streaming', 'superseded')
          AND length(CAST(new.content AS BLOB)) > length(new.content)
          AND new.content GLOB '*[⺀-⿟々〇〡-〩〸-〻ぁ-ゟ゠-ヿㇰ-ㇿ㐀-䶿一-鿿豈-﫿ｦ-ﾟ𠀀-𲎯]*'))
BEGIN
    INSERT OR IGNORE INTO messages_unspaced_pending (message_id) VALUES (new.id);
END;

-- Existing databases: what they already hold is indexed by the first search
-- for such text. Every message with any character beyond ASCII is noted, and
-- tock keeps those with the characters above: the GLOB costs ~0.2 µs a
-- character, 10 s for 200,000 messages, where this takes 0.3 s.
INSERT INTO messages_unspaced_pending (message_id)
    SELECT id FROM messages
    WHERE role IN ('user', 'assistant') AND status NOT IN ('streaming', 'superseded')
      AND length(CAST(content AS BLOB)) > length(content);
