-- Conversations and their messages.
CREATE TABLE conversations (
    id          INTEGER PRIMARY KEY AUTOINCREMENT, -- ids are never reused: scripts refer to them
    title       TEXT,                       -- NULL until set or derived from the first message
    model       TEXT,                       -- model name override for this conversation
    role        TEXT,                       -- named role (system prompt) from the config
    origin      TEXT NOT NULL DEFAULT 'user', -- user | cli | schedule
    created_at  INTEGER NOT NULL,           -- UTC epoch ms
    updated_at  INTEGER NOT NULL
);
CREATE INDEX conversations_updated ON conversations(updated_at DESC);

CREATE TABLE messages (
    id              INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    role            TEXT NOT NULL,          -- user | assistant | tool | notice
    content         TEXT NOT NULL,
    status          TEXT NOT NULL,          -- streaming | complete | interrupted | error
    model           TEXT,
    outbox_id       INTEGER,                -- the outbox row this message came from (user) or answered (assistant)
    parts_json      TEXT,                   -- attachments of a user message
    tool_calls_json TEXT,                   -- tool calls made by an assistant message
    tool_call_id    TEXT,                   -- the call a tool message answers
    error           TEXT,                   -- why a reply was interrupted or failed
    created_at      INTEGER NOT NULL
);
CREATE INDEX messages_conversation ON messages(conversation_id, id);
CREATE INDEX messages_streaming ON messages(status) WHERE status = 'streaming';

-- Key/value settings and UI state (never secrets).
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
