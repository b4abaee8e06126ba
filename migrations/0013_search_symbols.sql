-- Search for emoji and pictographs (rockets, check marks, stars): FTS5's
-- unicode61 tokenizer takes them for separators, so no index held them.
-- The second index of 0011 now holds them too, each one a word of its own
-- (tock writes it as a word of letters and digits the tokenizer keeps).
-- The triggers are 0011's with the character class extended by those
-- blocks: miscellaneous technical (U+2300-23FF), miscellaneous symbols and
-- dingbats (U+2600-27BF), symbols and arrows (U+2B00-2BFF), and the
-- pictographs from mahjong tiles to symbols and pictographs extended-A
-- (U+1F000-1FAFF). Kept the same as `is_unspaced` in src/store/search.rs
-- (a test checks one against the other).
DROP TRIGGER messages_unspaced_insert;
DROP TRIGGER messages_unspaced_delete;
DROP TRIGGER messages_unspaced_update;

CREATE TRIGGER messages_unspaced_insert AFTER INSERT ON messages
WHEN new.role IN ('user', 'assistant') AND new.status NOT IN ('streaming', 'superseded')
    AND length(CAST(new.content AS BLOB)) > length(new.content)
    AND new.content GLOB '*[⌀-⏿☀-➿⬀-⯿🀀-🫿⺀-⿟々〇〡-〩〸-〻ぁ-ゟ゠-ヿㇰ-ㇿ㐀-䶿一-鿿豈-﫿ｦ-ﾟ𠀀-𲎯]*'
BEGIN
    INSERT OR IGNORE INTO messages_unspaced_pending (message_id) VALUES (new.id);
END;

CREATE TRIGGER messages_unspaced_delete AFTER DELETE ON messages
WHEN old.role IN ('user', 'assistant') AND old.status NOT IN ('streaming', 'superseded')
    AND length(CAST(old.content AS BLOB)) > length(old.content)
    AND old.content GLOB '*[⌀-⏿☀-➿⬀-⯿🀀-🫿⺀-⿟々〇〡-〩〸-〻ぁ-ゟ゠-ヿㇰ-ㇿ㐀-䶿一-鿿豈-﫿ｦ-ﾟ𠀀-𲎯]*'
BEGIN
    INSERT OR IGNORE INTO messages_unspaced_pending (message_id) VALUES (old.id);
END;

CREATE TRIGGER messages_unspaced_update AFTER UPDATE OF content, status, role ON messages
WHEN (old.content IS NOT new.content OR old.status IS NOT new.status OR old.role IS NOT new.role)
    AND ((old.role IN ('user', 'assistant') AND old.status NOT IN ('streaming', 'superseded')
          AND length(CAST(old.content AS BLOB)) > length(old.content)
          AND old.content GLOB '*[⌀-⏿☀-➿⬀-⯿🀀-🫿⺀-⿟々〇〡-〩〸-〻ぁ-ゟ゠-ヿㇰ-ㇿ㐀-䶿一-鿿豈-﫿ｦ-ﾟ𠀀-𲎯]*')
      OR (new.role IN ('user', 'assistant') AND new.status NOT IN ('streaming', 'superseded')
          AND length(CAST(new.content AS BLOB)) > length(new.content)
          AND new.content GLOB '*[⌀-⏿☀-➿⬀-⯿🀀-🫿⺀-⿟々〇〡-〩〸-〻ぁ-ゟ゠-ヿㇰ-ㇿ㐀-䶿一-鿿豈-﫿ｦ-ﾟ𠀀-𲎯]*'))
BEGIN
    INSERT OR IGNORE INTO messages_unspaced_pending (message_id) VALUES (new.id);
END;

-- What databases already hold is indexed again by the first such search,
-- as in 0011: every message with a character beyond ASCII is noted.
INSERT OR IGNORE INTO messages_unspaced_pending (message_id)
    SELECT id FROM messages
    WHERE role IN ('user', 'assistant') AND status NOT IN ('streaming', 'superseded')
      AND length(CAST(content AS BLOB)) > length(content);
