-- Indexes that keep the scheduler's and the lists' queries off the history:
-- a database gathers a finished outbox row for every message ever sent, and
-- the queries that run on every pass or every change must not read them.

-- The scheduler's next wake-up: the earliest instant a pending row becomes
-- ready (the same expression as `next_ready_at` uses, so the minimum is the
-- first entry past now).
CREATE INDEX outbox_pending_ready
    ON outbox(status, MAX(COALESCE(due_at, 0), COALESCE(next_attempt_at, 0)))
    WHERE status = 'pending';

-- The unfinished items in list order (the scheduled pane, `tock list`).
CREATE INDEX outbox_unfinished_order
    ON outbox(COALESCE(due_at, created_at), id)
    WHERE status IN ('pending', 'sending', 'failed', 'expired') AND kind != 'regenerate';

-- The message an outbox row became (a send that is accepted checks it).
CREATE INDEX messages_outbox ON messages(outbox_id) WHERE outbox_id IS NOT NULL;

-- The rows of a conversation that replaced a message (its versions).
CREATE INDEX outbox_replaces ON outbox(conversation_id) WHERE replaces_message_id IS NOT NULL;

-- What the status bar counts of every unfinished item (`item_summaries`),
-- read from the index alone.
CREATE INDEX outbox_unfinished_summary
    ON outbox(status, kind, conversation_id, due_at, next_attempt_at)
    WHERE status IN ('pending', 'sending', 'failed', 'expired') AND kind != 'regenerate';
