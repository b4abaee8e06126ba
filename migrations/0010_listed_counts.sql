-- What the front ends count and page through without reading every row:
-- 100,000 unfinished items are counted from a few hundred rows kept by
-- triggers, and the list with finished rows (a million after long use) is
-- read a window at a time in its order.

-- Rows the lists show (every kind but regenerations), counted by status and
-- conversation (0: none, a task whose conversation was deleted). Kept by
-- the triggers below in the transaction of each change, so it is exact for
-- every process that writes the database.
CREATE TABLE outbox_listed_counts (
    status           TEXT NOT NULL,
    conversation_key INTEGER NOT NULL,
    n                INTEGER NOT NULL,
    PRIMARY KEY (status, conversation_key)
) WITHOUT ROWID;

INSERT INTO outbox_listed_counts (status, conversation_key, n)
    SELECT status, COALESCE(conversation_id, 0), count(*) FROM outbox
    WHERE kind != 'regenerate' GROUP BY 1, 2;

CREATE TRIGGER outbox_listed_counts_insert AFTER INSERT ON outbox
WHEN NEW.kind != 'regenerate'
BEGIN
    INSERT INTO outbox_listed_counts (status, conversation_key, n)
        VALUES (NEW.status, COALESCE(NEW.conversation_id, 0), 1)
        ON CONFLICT (status, conversation_key) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER outbox_listed_counts_delete AFTER DELETE ON outbox
WHEN OLD.kind != 'regenerate'
BEGIN
    UPDATE outbox_listed_counts SET n = n - 1
        WHERE status = OLD.status AND conversation_key = COALESCE(OLD.conversation_id, 0);
    DELETE FROM outbox_listed_counts
        WHERE status = OLD.status AND conversation_key = COALESCE(OLD.conversation_id, 0) AND n <= 0;
END;

-- A change of status or conversation (a conversation deleted sets it NULL)
-- moves the row from one count to another; a change of kind matters only
-- to or from a regeneration.
CREATE TRIGGER outbox_listed_counts_update_old AFTER UPDATE OF status, kind, conversation_id ON outbox
WHEN OLD.kind != 'regenerate'
     AND (OLD.status IS NOT NEW.status OR OLD.conversation_id IS NOT NEW.conversation_id
          OR NEW.kind = 'regenerate')
BEGIN
    UPDATE outbox_listed_counts SET n = n - 1
        WHERE status = OLD.status AND conversation_key = COALESCE(OLD.conversation_id, 0);
    DELETE FROM outbox_listed_counts
        WHERE status = OLD.status AND conversation_key = COALESCE(OLD.conversation_id, 0) AND n <= 0;
END;

CREATE TRIGGER outbox_listed_counts_update_new AFTER UPDATE OF status, kind, conversation_id ON outbox
WHEN NEW.kind != 'regenerate'
     AND (OLD.status IS NOT NEW.status OR OLD.conversation_id IS NOT NEW.conversation_id
          OR OLD.kind = 'regenerate')
BEGIN
    INSERT INTO outbox_listed_counts (status, conversation_key, n)
        VALUES (NEW.status, COALESCE(NEW.conversation_id, 0), 1)
        ON CONFLICT (status, conversation_key) DO UPDATE SET n = n + 1;
END;

-- Every listed row in list order (F2 with finished rows shown): the
-- unfinished ones alone have `outbox_unfinished_order`.
CREATE INDEX outbox_listed_order
    ON outbox(COALESCE(due_at, created_at), id)
    WHERE kind != 'regenerate';

-- Pending rows waiting out a back-off (the status bar's "retrying"), few
-- among the pending ones.
CREATE INDEX outbox_pending_backoff
    ON outbox(next_attempt_at)
    WHERE status = 'pending' AND next_attempt_at IS NOT NULL;
