//! The tool calls running now (`tool_runs`): written by the process that
//! runs a call, read by every process (`tock status`), and the way another
//! process asks for a call to stop (`tock stop`, Esc in another tock).

use anyhow::Result;
use rusqlite::params;

use super::Store;

/// A tool call running now (or left running by a tock that died).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolRun {
    pub id: i64,
    pub conversation_id: i64,
    pub message_id: i64,
    pub call_id: String,
    /// The name the model used (`server__tool`).
    pub tool: String,
    /// The dispatcher that runs it.
    pub owner: String,
    pub started_at: i64,
}

impl Store {
    /// A call starts: its row, for other processes to see and stop.
    pub fn start_tool_run(
        &self,
        conversation_id: i64,
        message_id: i64,
        call_id: &str,
        tool: &str,
        owner: &str,
        now: i64,
    ) -> Result<i64> {
        let conn = self.conn();
        conn.execute(
            "INSERT INTO tool_runs (conversation_id, message_id, call_id, tool, owner, started_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![conversation_id, message_id, call_id, tool, owner, now],
        )?;
        Ok(conn.last_insert_rowid())
    }

    /// A call ended (its result is recorded, or it never will be here).
    pub fn end_tool_run(&self, id: i64) -> Result<()> {
        self.conn()
            .execute("DELETE FROM tool_runs WHERE id = ?1", [id])?;
        Ok(())
    }

    /// Every call running now, oldest first.
    pub fn tool_runs(&self) -> Result<Vec<ToolRun>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(
            "SELECT id, conversation_id, message_id, call_id, tool, owner, started_at
             FROM tool_runs ORDER BY started_at, id",
        )?;
        let rows = st.query_map([], |r| {
            Ok(ToolRun {
                id: r.get(0)?,
                conversation_id: r.get(1)?,
                message_id: r.get(2)?,
                call_id: r.get(3)?,
                tool: r.get(4)?,
                owner: r.get(5)?,
                started_at: r.get(6)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Ask the process running the conversation's tool calls to stop them.
    /// False if none runs there.
    pub fn request_tool_stop(&self, conversation_id: i64) -> Result<bool> {
        let n = self.conn().execute(
            "UPDATE tool_runs SET stop_requested = 1 WHERE conversation_id = ?1",
            [conversation_id],
        )?;
        Ok(n > 0)
    }

    /// Take the stop requests for `owner`'s calls: the conversations whose
    /// calls are to stop (each request is taken once).
    pub fn take_tool_stop_requests(&self, owner: &str) -> Result<Vec<i64>> {
        let conn = self.conn();
        // Read first: this runs on every other process's commit while a
        // call runs here, and writes only when a request is there.
        let asked: bool = conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM tool_runs WHERE owner = ?1 AND stop_requested = 1)",
            [owner],
            |r| r.get(0),
        )?;
        if !asked {
            return Ok(Vec::new());
        }
        let mut st = conn.prepare_cached(
            "UPDATE tool_runs SET stop_requested = 0
             WHERE owner = ?1 AND stop_requested = 1 RETURNING conversation_id",
        )?;
        let mut convs: Vec<i64> = st
            .query_map([owner], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        convs.sort_unstable();
        convs.dedup();
        Ok(convs)
    }
}
