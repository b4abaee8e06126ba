-- What the engine told its front ends that a user wants to hear wherever
-- they look: a scheduled message sent, a reply finished, a failure, an
-- expiry, a tool call waiting for approval. Kept so that every tock on the
-- database hears it, not only the process that did it (a TUI beside the
-- daemon that sends), and so that the notices list outlives a restart.
-- `origin` is the engine that wrote it (its lease owner name), so it does
-- not hear its own notice twice. Only the newest rows are kept.
CREATE TABLE notices (
    id INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    kind TEXT NOT NULL,
    conversation_id INTEGER,
    text TEXT NOT NULL,
    origin TEXT NOT NULL
);
