-- How many times the dispatcher started an approved call (an MCP tool's).
-- More than one: a process was killed while the call ran and the next
-- dispatcher ran it again, which the model is then told.
ALTER TABLE approvals ADD COLUMN runs INTEGER NOT NULL DEFAULT 0;
