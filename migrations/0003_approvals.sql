-- Tool calls waiting for the user's approval (persisted so they survive restarts
-- and can be answered from any front end).
CREATE TABLE approvals (
    id              INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    message_id      INTEGER NOT NULL,       -- the assistant message that made the call
    call_id         TEXT NOT NULL,
    tool            TEXT NOT NULL,
    arguments       TEXT NOT NULL,          -- JSON text as the model sent it
    summary         TEXT NOT NULL,          -- what the user is asked to approve
    status          TEXT NOT NULL DEFAULT 'waiting', -- waiting | approved | denied | done
    result          TEXT,                   -- tool result given back to the model
    outbox_id       INTEGER,                -- the task row an approval created
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE INDEX approvals_status ON approvals(status);
