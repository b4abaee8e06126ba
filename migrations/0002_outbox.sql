-- Every send (typed now, queued, scheduled, task, regeneration) is a row here
-- before anything goes out. The table, not memory, is the truth.
CREATE TABLE outbox (
    id              INTEGER PRIMARY KEY AUTOINCREMENT, -- ids are shown and scripted: never reused
    conversation_id INTEGER REFERENCES conversations(id) ON DELETE SET NULL,
    kind            TEXT NOT NULL,          -- queued | message | task | regenerate
    text            TEXT NOT NULL,
    model_override  TEXT,
    parts_json      TEXT,
    due_at          INTEGER,                -- UTC epoch ms; NULL = as soon as possible
    status          TEXT NOT NULL DEFAULT 'pending', -- pending | sending | sent | failed | canceled | expired
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT,
    next_attempt_at INTEGER,                -- retry back-off: not before this instant
    priority        INTEGER NOT NULL DEFAULT 0, -- 1 = skip the queue (send now, crash recovery)
    claimed_by      TEXT,                   -- dispatcher that holds a 'sending' row
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    sent_at         INTEGER,
    title           TEXT,
    payload_json    TEXT
);
CREATE INDEX outbox_status_due ON outbox(status, due_at);
CREATE INDEX outbox_conversation ON outbox(conversation_id, status);

-- One dispatcher per database: whoever holds an unexpired lease.
CREATE TABLE lease (
    name       TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    pid        INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
