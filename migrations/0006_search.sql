-- Full-text search over what conversations show: user and assistant messages
-- that are neither still streaming nor superseded (a partial reply is
-- indexed once it ends; an alternate brought back is indexed again).
-- External content: the text lives in `messages` only. The triggers add and
-- remove exactly the rows the condition selects, which is why the index is
-- built with INSERT … SELECT below and must never be 'rebuild'-ed (that
-- would index every row of `messages`).
CREATE VIRTUAL TABLE messages_fts USING fts5(
    content,
    content = 'messages',
    content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
WHEN new.role IN ('user', 'assistant') AND new.status NOT IN ('streaming', 'superseded')
BEGIN
    INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
END;

CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
WHEN old.role IN ('user', 'assistant') AND old.status NOT IN ('streaming', 'superseded')
BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;

-- One trigger for both halves, so the old entry is always removed before
-- the new one is added (the order of two triggers is not guaranteed).
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, status, role ON messages
WHEN old.content IS NOT new.content OR old.status IS NOT new.status OR old.role IS NOT new.role
BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content)
        SELECT 'delete', old.id, old.content
        WHERE old.role IN ('user', 'assistant') AND old.status NOT IN ('streaming', 'superseded');
    INSERT INTO messages_fts (rowid, content)
        SELECT new.id, new.content
        WHERE new.role IN ('user', 'assistant') AND new.status NOT IN ('streaming', 'superseded');
END;

-- Existing databases: index the history they already hold.
INSERT INTO messages_fts (rowid, content)
    SELECT id, content FROM messages
    WHERE role IN ('user', 'assistant') AND status NOT IN ('streaming', 'superseded');
