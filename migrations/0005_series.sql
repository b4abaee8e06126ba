-- Recurring schedules. A series is one row; each occurrence becomes an
-- ordinary outbox row when it falls due, created in the same transaction
-- that advances the series.
CREATE TABLE series (
    id              INTEGER PRIMARY KEY,    -- taken from the outbox id sequence: one id space for scripts
    conversation_id INTEGER REFERENCES conversations(id) ON DELETE SET NULL,
    kind            TEXT NOT NULL,          -- what each occurrence is: message | task
    text            TEXT NOT NULL,
    title           TEXT,
    model_override  TEXT,
    payload_json    TEXT,
    rule            TEXT NOT NULL,          -- canonical expression (every weekday at 09:00, cron "0 9 * * 1-5")
    anchor_at       INTEGER NOT NULL,       -- UTC epoch ms; interval rules count from here
    next_due_at     INTEGER,                -- the next occurrence; NULL once ended
    until_at        INTEGER,                -- no occurrence after this instant
    remaining       INTEGER,                -- occurrences left (for N times); NULL = no limit
    occurrences     INTEGER NOT NULL DEFAULT 0, -- occurrence rows sent or on their way
    skipped         INTEGER NOT NULL DEFAULT 0, -- occurrences missed or coalesced
    status          TEXT NOT NULL DEFAULT 'active', -- active | paused | ended
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE INDEX series_due ON series(status, next_due_at);

ALTER TABLE outbox ADD COLUMN series_id INTEGER;       -- the series an occurrence belongs to
ALTER TABLE outbox ADD COLUMN occurrence_at INTEGER;   -- the occurrence instant it stands for
-- No crash, second process or clock jump can create one occurrence twice.
CREATE UNIQUE INDEX outbox_occurrence ON outbox(series_id, occurrence_at) WHERE series_id IS NOT NULL;
