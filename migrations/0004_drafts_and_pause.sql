-- One draft per conversation, saved as the user types, so that nothing typed
-- is lost to a quit, a crash or a switch of conversation.
CREATE TABLE drafts (
    conversation_id INTEGER PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,
    text            TEXT NOT NULL,
    edit_of         INTEGER,                -- the user message being edited for resend, if any
    stash           TEXT,                   -- the draft put aside while editing (restored by Esc)
    parts_json      TEXT,                   -- attachments added to the draft
    updated_at      INTEGER NOT NULL
);

-- Esc stops a reply and pauses its conversation's queue until the user resumes it.
ALTER TABLE conversations ADD COLUMN queue_paused_at INTEGER;
