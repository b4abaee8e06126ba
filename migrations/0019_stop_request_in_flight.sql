-- `tock stop` (or Esc in another tock) while a request waits for the
-- server's first byte: there is no reply to name yet (`stop_reply_id`), so
-- the outbox row in flight is noted, and the process that sent it, told of
-- the write by its watch on the database, stops it as its own Esc would.
ALTER TABLE conversations ADD COLUMN stop_item_id INTEGER;
