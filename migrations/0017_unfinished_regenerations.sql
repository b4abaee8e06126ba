-- Regenerations not done yet, for the lists that show them beside the
-- other rows (F2, tock list): few, found without reading the unfinished
-- rows of the whole outbox.
CREATE INDEX outbox_unfinished_regenerations ON outbox(id)
    WHERE kind = 'regenerate' AND status IN ('pending', 'sending', 'failed', 'expired');
