//! `tock list`: the outbox's items and the recurring series, as a table or JSON.

use anyhow::Result;
use serde_json::json;

use super::{local, rfc3339};
use crate::config::ConfigSource;
use crate::engine::{Engine, ItemState, SeriesView};
use crate::store::{OutboxItem, Status, Store, Waiting};
use crate::when;

/// An item as `list --json` prints it: the documented fields, plus `state`
/// (what every view shows), `next_attempt_at` (back-off) and `waiting` (why a
/// pending item has not gone out yet, one line; null otherwise).
pub fn item_json(
    i: &OutboxItem,
    state: &ItemState,
    waiting: Option<&Waiting>,
    now: i64,
) -> serde_json::Value {
    let mut v = json!({
        "id": i.id,
        "conversation_id": i.conversation_id,
        "kind": i.kind.as_str(),
        "text": i.text,
        "status": i.status.as_str(),
        "state": state.label(),
        "due_at": rfc3339(i.due_at),
        "attempts": i.attempts,
        "last_error": i.last_error,
        "created_at": rfc3339(Some(i.created_at)),
        "sent_at": rfc3339(i.sent_at),
        "next_attempt_at": rfc3339(i.next_attempt_at),
        "waiting": waiting.map(|w| w.describe(now)),
    });
    // Only occurrences of a recurring series carry the extra field.
    if let (Some(series), Some(obj)) = (i.series_id, v.as_object_mut()) {
        obj.insert("series_id".into(), json!(series));
    }
    // And only items sent with files carry theirs.
    let files = crate::files::attachment_infos(i.parts_json.as_deref());
    if let (false, Some(obj)) = (files.is_empty(), v.as_object_mut()) {
        obj.insert("attachments".into(), json!(files));
    }
    v
}

/// `items` with the regenerations not done yet, in list order.
pub(super) fn with_regenerations(store: &Store, items: Vec<OutboxItem>) -> Result<Vec<OutboxItem>> {
    let mut all = items;
    all.extend(store.unfinished_regenerations()?);
    all.sort_by_key(|i| (i.due_at.unwrap_or(i.created_at), i.id));
    Ok(all)
}

/// What an item sends, cut to `max` characters: its text, or for a
/// regeneration (whose text is no message of the user's) what it does.
pub(super) fn what(i: &OutboxItem, max: usize) -> String {
    if i.kind == crate::store::Kind::Regenerate {
        "regenerate the last reply".to_string()
    } else {
        crate::sanitize::excerpt(&i.text, max)
    }
}

/// A recurring series in `list --json`: the item fields plus the series'.
pub fn series_json(v: &SeriesView) -> serde_json::Value {
    let s = &v.series;
    json!({
        "id": s.id,
        "conversation_id": s.conversation_id,
        "kind": "recurring",
        "text": s.text,
        "status": s.status.as_str(),
        "state": s.status.as_str(),
        "due_at": rfc3339(s.next_due_at),
        "attempts": 0,
        "last_error": null,
        "created_at": rfc3339(Some(s.created_at)),
        "sent_at": null,
        "next_attempt_at": null,
        "waiting": null,
        "rule": v.description,
        "expression": v.expression,
        "next_due_at": rfc3339(s.next_due_at),
        "upcoming": v.upcoming.iter().map(|t| rfc3339(Some(*t))).collect::<Vec<_>>(),
        "occurrences": s.occurrences,
        "skipped": s.skipped,
        "remaining": s.remaining,
        "until_at": rfc3339(s.until_at),
        "occurrence_kind": s.kind.as_str(),
        "zone": s.zone,
    })
}

/// `tock list [--all] [--json]`.
pub(super) fn list(
    store: &Store,
    engine: &Engine,
    config: &ConfigSource,
    now: i64,
    all: bool,
    json: bool,
) -> Result<()> {
    let items = with_regenerations(store, store.list_items(all)?)?;
    let mut waiting = store.waiting(now)?;
    // Held by a config file this command cannot read, unless a tock that
    // read it before dispatches (it goes on sending).
    let held_here_only = config.is_held() && store.live_lease_holder(now)?.is_some();
    if !config.get().outbox.enabled && !held_here_only {
        waiting.values_mut().for_each(|w| *w = Waiting::Disabled);
    }
    let series = engine.list_series(all)?;
    let gates = crate::engine::state::gates(store)?;
    let state_of = |i: &OutboxItem| {
        let gate = i
            .conversation_id
            .and_then(|c| gates.get(&c).copied())
            .unwrap_or_default();
        crate::engine::item_state(i, now, gate)
    };
    if json {
        // One list in due order; series by their next occurrence.
        let mut rows: Vec<(i64, serde_json::Value)> = items
            .iter()
            .map(|i| {
                (
                    i.due_at.unwrap_or(i.created_at),
                    item_json(i, &state_of(i), waiting.get(&i.id), now),
                )
            })
            .chain(series.iter().map(|v| {
                (
                    v.series.next_due_at.unwrap_or(v.series.updated_at),
                    series_json(v),
                )
            }))
            .collect();
        rows.sort_by_key(|(t, _)| *t);
        let arr: Vec<_> = rows.into_iter().map(|(_, v)| v).collect();
        println!("{}", crate::sanitize::json_text(&arr)?);
    } else if items.is_empty() && series.is_empty() {
        println!("nothing scheduled or pending (tock send --in 10m TEXT schedules a message)");
        streaming_lines(store, now)?;
    } else {
        // Rows first: the DUE column is as wide as its widest cell ("(1m
        // 12s ago)" is wider than "(in 5m)").
        // In due order, as in --json: series by their next occurrence.
        let mut rows: Vec<(i64, [String; 7])> = Vec::new();
        for i in &items {
            // A row done with (`--all`) counts down to nothing and is not
            // sent "asap": when it went, or the time it had.
            let due = match (i.status, i.due_at) {
                (Status::Sent, _) => format!(
                    "{} (sent)",
                    local(when::happened(i.sent_at.unwrap_or(i.updated_at), now))
                ),
                (Status::Canceled | Status::Failed | Status::Expired, Some(d)) => local(d),
                (Status::Canceled | Status::Failed | Status::Expired, None) => "—".into(),
                (_, Some(d)) => format!("{} ({})", local(d), when::countdown(d, now)),
                (_, None) => "asap".into(),
            };
            let mut text = what(i, 50);
            // What goes with it, by name (the text alone hid it).
            let files = crate::files::attachment_infos(i.parts_json.as_deref());
            if !files.is_empty() {
                let names: Vec<String> = files
                    .iter()
                    .map(|f| crate::sanitize::sanitize_line(&f.name).into_owned())
                    .collect();
                text = format!("📎 {} · {text}", names.join(", "));
            }
            let conv = i
                .conversation_id
                .map(|c| c.to_string())
                .unwrap_or_else(|| "-".into());
            let mut err = i
                .last_error
                .as_deref()
                .map(|e| format!("  [{}]", crate::sanitize::sanitize_line(e)))
                .unwrap_or_default();
            // The DUE column already says when a scheduled item goes.
            if let Some(w) = waiting
                .get(&i.id)
                .filter(|w| !matches!(w, Waiting::Ready | Waiting::Due { .. }))
            {
                // Not in parentheses: the line ends with its countdown's own.
                err.push_str(&format!(" · {}", w.describe(now)));
            }
            rows.push((
                i.due_at.unwrap_or(i.created_at),
                [
                    i.id.to_string(),
                    due,
                    conv,
                    i.kind.as_str().to_string(),
                    state_of(i).label().to_string(),
                    i.attempts.to_string(),
                    format!("{text}{err}"),
                ],
            ));
        }
        for v in &series {
            let s = &v.series;
            let due = match s.next_due_at {
                Some(d) if s.status == crate::store::SeriesStatus::Active => {
                    format!("{} ({})", local(d), when::countdown(d, now))
                }
                // Where it would go on: resuming goes on from there; once
                // that has passed, from now (resuming skips what fell due
                // while paused), so no time is shown, as F2 shows none.
                Some(d) if s.status == crate::store::SeriesStatus::Paused && d > now => {
                    format!("{} (paused)", local(d))
                }
                Some(_) if s.status == crate::store::SeriesStatus::Paused => "- (paused)".into(),
                _ => "-".into(),
            };
            let text: String = crate::sanitize::excerpt(&s.text, 50);
            let conv = s
                .conversation_id
                .map(|c| c.to_string())
                .unwrap_or_else(|| "-".into());
            // TRY is an item's attempts; a series has none of its own (its
            // occurrences are items), so it says how many went instead.
            let sent = match (v.ended_record(), s.occurrences) {
                (Some(record), _) => format!("; {record}"),
                (None, 0) => String::new(),
                (None, n) => format!("; {n} so far"),
            };
            rows.push((
                s.next_due_at.unwrap_or(s.updated_at),
                [
                    s.id.to_string(),
                    due,
                    conv,
                    "recurring".to_string(),
                    s.status.as_str().to_string(),
                    "-".to_string(),
                    format!(
                        "{text}  [{}{sent}]",
                        crate::sanitize::sanitize_line(&v.description)
                    ),
                ],
            ));
        }
        rows.sort_by_key(|(t, _)| *t);
        let due_w = rows
            .iter()
            .map(|(_, r)| r[1].chars().count())
            .max()
            .unwrap_or(0)
            .max(3);
        println!(
            "{:>5}  {:<due_w$} {:>5}  {:<9} {:<9} {:>3}  TEXT",
            "ID", "DUE", "CONV", "KIND", "STATE", "TRY"
        );
        for (_, [id, due, conv, kind, state, tries, rest]) in &rows {
            println!("{id:>5}  {due:<due_w$} {conv:>5}  {kind:<9} {state:<9} {tries:>3}  {rest}");
        }
        streaming_lines(store, now)?;
    }
    Ok(())
}

/// Under the table: replies whose messages have left the outbox (sent)
/// but whose answers are still on their way.
fn streaming_lines(store: &Store, now: i64) -> Result<()> {
    let replies = store.streaming_replies()?;
    if replies.is_empty() {
        return Ok(());
    }
    let live = store.live_lease_holder(now)?.is_some();
    for line in super::status::reply_lines(store, &replies, live)? {
        println!("{line}");
    }
    Ok(())
}
