//! Notices kept for every process on the database (migration 0015): what
//! one engine told its front ends, read by the others' engines when they
//! notice its commit, and by a front end for its history at start.

use anyhow::Result;
use rusqlite::params;

use super::Store;

/// How many notices are kept: the history a front end shows, and more than
/// any process can fall behind between two looks.
const KEPT: i64 = 200;

/// A notice as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredNotice {
    pub id: i64,
    /// UTC epoch ms.
    pub at: i64,
    /// `NoticeKind`'s stored name.
    pub kind: String,
    pub conversation_id: Option<i64>,
    pub text: String,
}

const COLS: &str = "id, at, kind, conversation_id, text";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredNotice> {
    Ok(StoredNotice {
        id: r.get(0)?,
        at: r.get(1)?,
        kind: r.get(2)?,
        conversation_id: r.get(3)?,
        text: r.get(4)?,
    })
}

/// Add a notice in `tx`, and take out those older than the newest [`KEPT`].
fn insert(
    tx: &rusqlite::Transaction<'_>,
    at: i64,
    kind: &str,
    conversation_id: Option<i64>,
    text: &str,
    origin: &str,
) -> rusqlite::Result<i64> {
    tx.execute(
        "INSERT INTO notices (at, kind, conversation_id, text, origin) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![at, kind, conversation_id, text, origin],
    )?;
    let id = tx.last_insert_rowid();
    tx.execute("DELETE FROM notices WHERE id <= ?1", [id - KEPT])?;
    Ok(id)
}

impl Store {
    /// Keep a notice from engine `origin`; older ones beyond the newest
    /// [`KEPT`] go in the same transaction.
    pub fn add_notice(
        &self,
        at: i64,
        kind: &str,
        conversation_id: Option<i64>,
        text: &str,
        origin: &str,
    ) -> Result<i64> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let id = insert(&tx, at, kind, conversation_id, text, origin)?;
        tx.commit()?;
        Ok(id)
    }

    /// Keep a notice about a state every engine on the database sees alike
    /// (the config file, which each reads): kept unless the newest notice of
    /// the two `state` kinds (a problem and its end) is this one already, so that two tocks reading one
    /// file, or a restart, tell a problem once. Checked and written in one
    /// transaction, so two engines noticing together keep it once. Returns
    /// the new notice's id, None when it was kept already.
    pub fn add_state_notice(
        &self,
        at: i64,
        kind: &str,
        state: [&str; 2],
        text: &str,
        origin: &str,
    ) -> Result<Option<i64>> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let newest: Option<(String, String)> = {
            let mut stmt = tx.prepare_cached(
                "SELECT kind, text FROM notices WHERE kind IN (?1, ?2) ORDER BY id DESC LIMIT 1",
            )?;
            let mut rows = stmt.query(state)?;
            match rows.next()? {
                Some(r) => Some((r.get(0)?, r.get(1)?)),
                None => None,
            }
        };
        if newest.is_some_and(|(k, t)| k == kind && t == text) {
            return Ok(None);
        }
        let id = insert(&tx, at, kind, None, text, origin)?;
        tx.commit()?;
        Ok(Some(id))
    }

    /// The newest notice's id (0 when there is none).
    pub fn last_notice_id(&self) -> Result<i64> {
        Ok(self
            .conn()
            .query_row("SELECT COALESCE(MAX(id), 0) FROM notices", [], |r| r.get(0))?)
    }

    /// Notices after `id` from engines other than `origin`, oldest first,
    /// and the newest id seen (whoever wrote it).
    pub fn notices_after(&self, id: i64, origin: &str) -> Result<(Vec<StoredNotice>, i64)> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {COLS}, origin FROM notices WHERE id > ?1 ORDER BY id"
        ))?;
        let mut last = id;
        let mut out = Vec::new();
        let mut rows = stmt.query([id])?;
        while let Some(r) = rows.next()? {
            let n = row(r)?;
            last = last.max(n.id);
            let from: String = r.get(5)?;
            if from != origin {
                out.push(n);
            }
        }
        Ok((out, last))
    }

    /// The newest `limit` notices, oldest first.
    pub fn recent_notices(&self, limit: usize) -> Result<Vec<StoredNotice>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {COLS} FROM notices ORDER BY id DESC LIMIT ?1"
        ))?;
        let mut out = stmt
            .query_map([i64::try_from(limit).unwrap_or(i64::MAX)], row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        out.reverse();
        Ok(out)
    }
}
