-- Esc in one tock stops a reply another tock on the same database streams
-- (a daemon, a second TUI): the reply to stop is noted on its conversation,
-- and the process streaming it, told of the write by its watch on the
-- database, stops it as its own Esc would.
ALTER TABLE conversations ADD COLUMN stop_reply_id INTEGER;
