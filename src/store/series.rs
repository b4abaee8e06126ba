//! The `series` table: one row per recurring schedule.
//!
//! A series never sends anything itself. When an occurrence falls due, the
//! dispatcher turns it into an ordinary outbox row carrying
//! (`series_id`, `occurrence_at`) — UNIQUE, so no crash, second process or
//! clock jump can create one occurrence twice — and advances the series in
//! the same transaction. Series ids come from the outbox's id sequence, so an
//! id names either an item or a series, never both (`tock cancel ID`).
//!
//! The store does no calendar arithmetic: callers compute the next
//! occurrence (`recur`) and the store applies it atomically.

use anyhow::{Result, anyhow};
use rusqlite::{OptionalExtension, Row, params};
use serde::Serialize;

use super::Store;
use super::messages::{NewMessage, Role, insert_message};
use super::outbox::{COLS, Kind, OutboxItem};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SeriesStatus {
    Active,
    Paused,
    Ended,
}

super::sql_enum::sql_enum!(SeriesStatus {
    Active => "active",
    Paused => "paused",
    Ended => "ended",
});

#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub id: i64,
    pub conversation_id: Option<i64>,
    /// What each occurrence is: `Message` (the user's) or `Task` (the model's).
    pub kind: Kind,
    pub text: String,
    pub title: Option<String>,
    pub model_override: Option<String>,
    pub payload_json: Option<String>,
    /// The canonical rule expression (`recur::Rule::parse` reads it).
    pub rule: String,
    pub anchor_at: i64,
    pub next_due_at: Option<i64>,
    pub until_at: Option<i64>,
    pub remaining: Option<i64>,
    /// Occurrence rows sent or on their way (replaced ones are in `skipped`).
    pub occurrences: i64,
    /// Occurrences missed (downtime) or replaced while they waited.
    pub skipped: i64,
    pub status: SeriesStatus,
    pub created_at: i64,
    pub updated_at: i64,
    /// The IANA time zone its wall-clock times are in; None: the
    /// dispatching process's (series made before zones were kept).
    pub zone: Option<String>,
}

const SERIES_COLS: &str = "id, conversation_id, kind, text, title, model_override, payload_json, rule, anchor_at, \
     next_due_at, until_at, remaining, occurrences, skipped, status, created_at, updated_at, zone";

impl Series {
    fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            id: r.get(0)?,
            conversation_id: r.get(1)?,
            kind: r.get(2)?,
            text: r.get(3)?,
            title: r.get(4)?,
            model_override: r.get(5)?,
            payload_json: r.get(6)?,
            rule: r.get(7)?,
            anchor_at: r.get(8)?,
            next_due_at: r.get(9)?,
            until_at: r.get(10)?,
            remaining: r.get(11)?,
            occurrences: r.get(12)?,
            skipped: r.get(13)?,
            status: r.get(14)?,
            created_at: r.get(15)?,
            updated_at: r.get(16)?,
            zone: r.get(17)?,
        })
    }
}

/// A new series; `next_due_at` is its first occurrence.
#[derive(Clone, Debug, PartialEq)]
pub struct NewSeries {
    pub conversation_id: i64,
    pub kind: Kind,
    pub text: String,
    pub title: Option<String>,
    pub model_override: Option<String>,
    pub payload_json: Option<String>,
    pub rule: String,
    pub anchor_at: i64,
    pub next_due_at: i64,
    pub until_at: Option<i64>,
    pub remaining: Option<i64>,
    /// See [`Series::zone`].
    pub zone: Option<String>,
}

/// What a due series does, decided by the caller (see `recur::catch_up`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeriesStep {
    /// Create the occurrence for this instant.
    pub fire: Option<i64>,
    /// Occurrences that will never be sent.
    pub skipped: i64,
    /// Slots used up, taken off `remaining`.
    pub consumed: i64,
    /// The next occurrence; None ends the series.
    pub next_due_at: Option<i64>,
}

/// What advancing one series did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Advanced {
    pub series_id: i64,
    /// The series' message, to name it in what is said about it.
    pub text: String,
    pub conversation_id: Option<i64>,
    /// The outbox row created for the occurrence.
    pub fired: Option<i64>,
    /// Missed occurrences (tock not running, or older than the grace).
    pub missed: i64,
    /// Earlier occurrences still waiting, replaced by this one.
    pub coalesced: i64,
    pub ended: bool,
    /// The conversation was deleted: a new one was made for the series.
    pub rehomed: bool,
}

/// The next id of the outbox's AUTOINCREMENT sequence, taken for a series.
fn allocate_id(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<i64> {
    let seq: Option<i64> = tx
        .query_row(
            "SELECT seq FROM sqlite_sequence WHERE name = 'outbox'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    let floor: i64 = tx.query_row(
        "SELECT MAX(COALESCE((SELECT MAX(id) FROM outbox), 0), COALESCE((SELECT MAX(id) FROM series), 0))",
        [],
        |r| r.get(0),
    )?;
    let id = seq.unwrap_or(0).max(floor) + 1;
    if seq.is_some() {
        tx.execute(
            "UPDATE sqlite_sequence SET seq = ?1 WHERE name = 'outbox'",
            [id],
        )?;
    } else {
        tx.execute(
            "INSERT INTO sqlite_sequence (name, seq) VALUES ('outbox', ?1)",
            [id],
        )?;
    }
    Ok(id)
}

pub(crate) fn insert_series(
    tx: &rusqlite::Transaction<'_>,
    s: &NewSeries,
    now: i64,
) -> rusqlite::Result<i64> {
    let id = allocate_id(tx)?;
    tx.execute(
        "INSERT INTO series (id, conversation_id, kind, text, title, model_override, payload_json, rule,
                             anchor_at, next_due_at, until_at, remaining, status, created_at, updated_at, zone)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 'active', ?13, ?13, ?14)",
        params![
            id,
            s.conversation_id,
            s.kind.as_str(),
            s.text,
            s.title,
            s.model_override,
            s.payload_json,
            s.rule,
            s.anchor_at,
            s.next_due_at,
            s.until_at,
            s.remaining,
            now,
            s.zone
        ],
    )?;
    Ok(id)
}

/// Insert the occurrence row; None if it already exists.
fn insert_occurrence(
    tx: &rusqlite::Transaction<'_>,
    s: &Series,
    conversation_id: i64,
    at: i64,
    priority: i64,
    now: i64,
) -> rusqlite::Result<Option<i64>> {
    let n = tx.prepare_cached(
        "INSERT INTO outbox (conversation_id, kind, text, model_override, due_at, status, priority,
                             created_at, updated_at, title, payload_json, series_id, occurrence_at)
         VALUES (?1, ?2, ?3, ?4, ?5, 'pending', ?6, ?7, ?7, ?8, ?9, ?10, ?5)
         ON CONFLICT DO NOTHING",
    )?
    .execute(params![
            conversation_id,
            s.kind.as_str(),
            s.text,
            s.model_override,
            at,
            priority,
            now,
            s.title,
            s.payload_json,
            s.id
        ])?;
    Ok((n == 1).then(|| tx.last_insert_rowid()))
}

/// The series' conversation, or a new one (origin `schedule`) if it was deleted.
fn home(tx: &rusqlite::Transaction<'_>, s: &Series, now: i64) -> rusqlite::Result<(i64, bool)> {
    if let Some(c) = s.conversation_id {
        let exists: bool = tx
            .prepare_cached("SELECT EXISTS(SELECT 1 FROM conversations WHERE id = ?1)")?
            .query_row([c], |r| r.get(0))?;
        if exists {
            return Ok((c, false));
        }
    }
    let title = s
        .title
        .clone()
        .unwrap_or_else(|| super::conversations::derive_title(&s.text));
    tx.execute(
        "INSERT INTO conversations (title, origin, created_at, updated_at) VALUES (?1, 'schedule', ?2, ?2)",
        params![title, now],
    )?;
    let c = tx.last_insert_rowid();
    tx.execute(
        "UPDATE series SET conversation_id = ?2 WHERE id = ?1",
        params![s.id, c],
    )?;
    Ok((c, true))
}

fn plural(n: i64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// Why an occurrence waiting when its series ended or paused was canceled.
const ENDED: &str = "its recurring series was ended";
const PAUSED: &str = "its recurring series was paused";

/// End series `id` in `tx` (an approved `cancel_scheduled`), with the
/// occurrence that waits for its conversation, as [`Store::update_series`]
/// ends one. False if it had ended already.
pub(super) fn end_series_in(tx: &rusqlite::Transaction<'_>, id: i64, now: i64) -> Result<bool> {
    let ended = tx.execute(
        "UPDATE series SET status = 'ended', next_due_at = NULL, updated_at = ?2
         WHERE id = ?1 AND status != 'ended'",
        params![id, now],
    )? == 1;
    if ended {
        cancel_waiting_occurrences(tx, id, now, ENDED)?;
    }
    Ok(ended)
}

/// Ended (or paused) means nothing more is sent (until it is resumed): an
/// occurrence of series `id` already due and still waiting (its
/// conversation busy, a tool call awaiting approval) goes, in the
/// transaction that ends or pauses the series; `why` says which. Those
/// never went, so they are taken off the occurrences the series ran.
/// Returns how many were canceled.
fn cancel_waiting_occurrences(
    tx: &rusqlite::Transaction<'_>,
    id: i64,
    now: i64,
    why: &str,
) -> Result<i64> {
    let convs: Vec<Option<i64>> = tx
        .prepare(
            "UPDATE outbox SET status = 'canceled', claimed_by = NULL, next_attempt_at = NULL,
                    updated_at = ?2, last_error = ?3
             WHERE series_id = ?1 AND status = 'pending' AND sent_at IS NULL
             RETURNING conversation_id",
        )?
        .query_map(params![id, now, why], |r| r.get::<_, Option<i64>>(0))?
        .collect::<rusqlite::Result<_>>()?;
    let n = convs.len() as i64;
    if n > 0 {
        tx.execute(
            "UPDATE series SET occurrences = MAX(occurrences - ?2, 0) WHERE id = ?1",
            params![id, n],
        )?;
    }
    for conv in convs.into_iter().flatten() {
        super::outbox::lift_pause_if_nothing_held(tx, conv)?;
    }
    Ok(n)
}

impl Store {
    /// A new series. Returns its id.
    pub fn create_series(&self, s: &NewSeries, now: i64) -> Result<i64> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let id = insert_series(&tx, s, now)?;
        tx.commit()?;
        Ok(id)
    }

    /// Active series by conversation, for the conversation list's marks:
    /// how many, and when the first of them sends next.
    pub fn active_series_by_conversation(
        &self,
    ) -> Result<std::collections::HashMap<i64, (usize, Option<i64>)>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(
            "SELECT COALESCE(conversation_id, 0), count(*), min(next_due_at) FROM series
             WHERE status = 'active' GROUP BY conversation_id",
        )?;
        // A series whose conversation is gone counts under 0 (no
        // conversation has that id): in the total, on no row.
        let rows = st.query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                (r.get::<_, usize>(1)?, r.get::<_, Option<i64>>(2)?),
            ))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    pub fn series(&self, id: i64) -> Result<Option<Series>> {
        Ok(self
            .conn()
            .query_row(
                &format!("SELECT {SERIES_COLS} FROM series WHERE id = ?1"),
                [id],
                Series::from_row,
            )
            .optional()?)
    }

    /// Active and paused series by next occurrence; `all` adds ended ones.
    pub fn list_series(&self, all: bool) -> Result<Vec<Series>> {
        let conn = self.conn();
        let filter = if all {
            ""
        } else {
            "WHERE status IN ('active', 'paused')"
        };
        let mut st = conn.prepare_cached(&format!(
            "SELECT {SERIES_COLS} FROM series {filter} ORDER BY COALESCE(next_due_at, updated_at), id"
        ))?;
        let rows = st.query_map([], Series::from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The series of one conversation that have not ended.
    pub fn conversation_series(&self, conversation_id: i64) -> Result<Vec<Series>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(&format!(
            "SELECT {SERIES_COLS} FROM series WHERE conversation_id = ?1 AND status IN ('active', 'paused')
             ORDER BY COALESCE(next_due_at, updated_at), id"
        ))?;
        let rows = st.query_map([conversation_id], Series::from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The outbox rows a series created, oldest first.
    pub fn series_occurrences(&self, series_id: i64) -> Result<Vec<OutboxItem>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(&format!(
            "SELECT {COLS} FROM outbox WHERE series_id = ?1 ORDER BY occurrence_at, id"
        ))?;
        let rows = st.query_map([series_id], OutboxItem::from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The earliest next occurrence of an active series (may be in the past: due now).
    pub fn next_series_due(&self) -> Result<Option<i64>> {
        Ok(self.conn().query_row(
            "SELECT MIN(next_due_at) FROM series WHERE status = 'active'",
            [],
            |r| r.get(0),
        )?)
    }

    /// Advance up to `limit` active series due at `now` (earliest first), in
    /// one transaction: `plan` says what each does; its occurrence row, the
    /// coalescing of an older waiting occurrence, the notice and the series'
    /// new state are written together or not at all. The limit keeps one
    /// pass (and the database lock) short when thousands fall due at once;
    /// fewer than `limit` returned means none is left due.
    pub fn advance_series(
        &self,
        now: i64,
        limit: usize,
        mut plan: impl FnMut(&Series) -> SeriesStep,
    ) -> Result<Vec<Advanced>> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let due: Vec<Series> = {
            let mut st = tx.prepare_cached(&format!(
                "SELECT {SERIES_COLS} FROM series WHERE status = 'active' AND next_due_at <= ?1
                 ORDER BY next_due_at, id LIMIT ?2"
            ))?;
            st.query_map(params![now, limit as i64], Series::from_row)?
                .collect::<rusqlite::Result<_>>()?
        };
        let mut out = Vec::with_capacity(due.len());
        for s in due {
            let step = plan(&s);
            let mut adv = Advanced {
                series_id: s.id,
                text: s.text.clone(),
                conversation_id: s.conversation_id,
                fired: None,
                missed: step.skipped,
                coalesced: 0,
                ended: step.next_due_at.is_none(),
                rehomed: false,
            };
            if let Some(at) = step.fire {
                let (conv, rehomed) = home(&tx, &s, now)?;
                adv.conversation_id = Some(conv);
                adv.rehomed = rehomed;
                // An older occurrence still waiting (busy conversation, back-off)
                // is replaced, not stacked — unless it is already in its
                // conversation (`sent_at` set: only its reply is generated again).
                adv.coalesced = tx
                    .prepare_cached(
                        "UPDATE outbox SET status = 'canceled', next_attempt_at = NULL, updated_at = ?2,
                                last_error = 'skipped: a newer occurrence came due while this one waited'
                         WHERE series_id = ?1 AND status = 'pending' AND sent_at IS NULL AND occurrence_at < ?3",
                    )?
                    .execute(params![s.id, now, at])? as i64;
                adv.fired = insert_occurrence(&tx, &s, conv, at, 0, now)?;
            }
            // `occurrences` counts rows sent or on their way: a replaced one moves to `skipped`.
            let fired = i64::from(adv.fired.is_some()) - adv.coalesced;
            tx.prepare_cached(
                "UPDATE series SET next_due_at = ?2,
                        remaining = CASE WHEN remaining IS NULL THEN NULL ELSE MAX(remaining - ?3, 0) END,
                        occurrences = occurrences + ?4, skipped = skipped + ?5,
                        status = CASE WHEN ?2 IS NULL THEN 'ended' ELSE status END, updated_at = ?6
                 WHERE id = ?1",
            )?
            .execute(params![
                    s.id,
                    step.next_due_at,
                    step.consumed,
                    fired,
                step.skipped + adv.coalesced,
                now
            ])?;
            if let Some(conv) = adv.conversation_id
                && (adv.missed > 0 || adv.coalesced > 0)
            {
                let mut parts = Vec::new();
                if adv.missed > 0 {
                    parts.push(format!(
                        "{} skipped (tock was not running when due)",
                        plural(adv.missed, "occurrence", "occurrences")
                    ));
                }
                if adv.coalesced > 0 {
                    parts.push(format!(
                        "{} skipped (still waiting when the next came due)",
                        plural(adv.coalesced, "earlier occurrence", "earlier occurrences")
                    ));
                }
                let content = format!("Recurring \"{}\": {}.", s.rule, parts.join("; "));
                insert_message(
                    &tx,
                    conv,
                    &NewMessage {
                        role: Some(Role::Notice),
                        content: &content,
                        ..Default::default()
                    },
                    now,
                )?;
            }
            out.push(adv);
        }
        tx.commit()?;
        Ok(out)
    }

    /// Change a series in one transaction: `f` edits a copy of the row (and
    /// may refuse); the edited columns are written back.
    pub fn update_series(
        &self,
        id: i64,
        now: i64,
        f: impl FnOnce(&mut Series) -> Result<()>,
    ) -> Result<Series> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let mut s = tx
            .query_row(
                &format!("SELECT {SERIES_COLS} FROM series WHERE id = ?1"),
                [id],
                Series::from_row,
            )
            .optional()?
            .ok_or_else(|| anyhow!("no series {id}"))?;
        let was_ended = s.status == SeriesStatus::Ended;
        let was_active = s.status == SeriesStatus::Active;
        f(&mut s)?;
        if s.status == SeriesStatus::Ended {
            s.next_due_at = None;
        }
        let why = match s.status {
            SeriesStatus::Ended if !was_ended => Some(ENDED),
            SeriesStatus::Paused if was_active => Some(PAUSED),
            _ => None,
        };
        if let Some(why) = why {
            let n = cancel_waiting_occurrences(&tx, id, now, why)?;
            s.occurrences = (s.occurrences - n).max(0);
        }
        s.updated_at = now;
        tx.execute(
            "UPDATE series SET text = ?2, rule = ?3, anchor_at = ?4, next_due_at = ?5, until_at = ?6,
                    remaining = ?7, skipped = ?8, status = ?9, updated_at = ?10, zone = ?11
             WHERE id = ?1",
            params![
                s.id,
                s.text,
                s.rule,
                s.anchor_at,
                s.next_due_at,
                s.until_at,
                s.remaining,
                s.skipped,
                s.status,
                now,
                s.zone
            ],
        )?;
        tx.commit()?;
        Ok(s)
    }

    /// One extra occurrence now (ahead of the queue once the conversation is idle).
    pub fn series_send_now(&self, id: i64, now: i64) -> Result<i64> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let s = tx
            .query_row(
                &format!("SELECT {SERIES_COLS} FROM series WHERE id = ?1"),
                [id],
                Series::from_row,
            )
            .optional()?
            .ok_or_else(|| anyhow!("no series {id}"))?;
        if s.status == SeriesStatus::Ended {
            return Err(anyhow!("series {id} has ended"));
        }
        let (conv, _) = home(&tx, &s, now)?;
        let row = insert_occurrence(&tx, &s, conv, now, 1, now)?
            .ok_or_else(|| anyhow!("an occurrence of series {id} was just created; try again"))?;
        tx.execute(
            "UPDATE series SET occurrences = occurrences + 1, updated_at = ?2 WHERE id = ?1",
            params![id, now],
        )?;
        tx.commit()?;
        Ok(row)
    }
}
