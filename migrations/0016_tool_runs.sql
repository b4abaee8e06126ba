-- The tool calls (an MCP server's) running now, one row each, written by
-- the dispatching process when a call starts and deleted with its result.
-- Other processes read it (`tock status` shows a running call) and ask for a
-- stop through it (`tock stop`, Esc in another tock): `stop_requested` is
-- set there, and the process running the call, told of the write by its
-- watch on the database, stops the call as its own Esc would. `owner` is
-- that process's dispatcher name: a row whose owner is no longer the
-- dispatcher was left by a tock that died during the call.
CREATE TABLE tool_runs (
    id INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL,
    message_id INTEGER NOT NULL,
    call_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    owner TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    stop_requested INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX tool_runs_conversation ON tool_runs (conversation_id);
