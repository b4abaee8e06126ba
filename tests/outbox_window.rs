//! The store's kept counts and list windows against plain queries of every
//! row: what the TUI reads instead of loading 100,000 items must say the
//! same as the rows, after every kind of change.

use std::collections::HashMap;

use tock::store::{ListCursor, ListFilter, ListFrom, Status, Store};

/// A database of 600 rows of every status, kind and conversation (some of
/// none), written behind the store's back as another process would.
fn seeded() -> (tempfile::TempDir, Store, rusqlite::Connection) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let s = Store::open(&path).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("PRAGMA foreign_keys = ON").unwrap();
    for c in 1..=7 {
        conn.execute(
            "INSERT INTO conversations (id, title, created_at, updated_at) VALUES (?1, 't', 0, 0)",
            [c],
        )
        .unwrap();
    }
    let statuses = [
        "pending", "sending", "sent", "failed", "canceled", "expired",
    ];
    let kinds = ["queued", "message", "task", "regenerate"];
    let mut n = 0i64;
    for i in 0..600i64 {
        n = (n * 1_103_515_245 + 12_345 + i) % 2_147_483_648;
        conn.execute(
            "INSERT INTO outbox (conversation_id, kind, text, due_at, status, next_attempt_at,
                                 created_at, updated_at, series_id)
             VALUES (?1, ?2, 't', ?3, ?4, ?5, ?6, 0, ?7)",
            rusqlite::params![
                (n % 8 != 0).then_some(n % 7 + 1),
                kinds[(n / 3 % 4) as usize],
                (n % 3 != 0).then_some(n % 2_000),
                statuses[(n / 11 % 6) as usize],
                (n % 5 == 0).then_some((n / 7) % 2_000),
                (n / 17) % 2_000,
                None::<i64>,
            ],
        )
        .unwrap();
    }
    (dir, s, conn)
}

const UNFINISHED: &str = "status IN ('pending', 'sending', 'failed', 'expired')";

/// The counts as a plain count of the rows says them.
fn assert_counts_match(s: &Store, conn: &rusqlite::Connection, when: &str) {
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    let c = s.open_counts().unwrap();
    for (status, got) in [
        ("pending", c.pending),
        ("sending", c.sending),
        ("failed", c.failed),
        ("expired", c.expired),
    ] {
        let want = count(&format!(
            "SELECT count(*) FROM outbox WHERE status = '{status}' AND kind != 'regenerate'"
        ));
        assert_eq!(got, want, "{when}: {status}");
    }
    let by_conversation = |statuses: &str| -> Vec<(i64, i64)> {
        let mut st = conn
            .prepare(&format!(
                "SELECT conversation_id, count(*) FROM outbox
                 WHERE status IN ({statuses}) AND kind != 'regenerate' AND conversation_id IS NOT NULL
                 GROUP BY conversation_id ORDER BY conversation_id"
            ))
            .unwrap();
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    };
    assert_eq!(
        c.pending_by_conversation,
        by_conversation("'pending', 'sending'"),
        "{when}: pending by conversation"
    );
    assert_eq!(
        c.failed_by_conversation,
        by_conversation("'failed', 'expired'"),
        "{when}: failed by conversation"
    );
    let listed = (
        s.list_items(false).unwrap().len() as i64,
        (s.list_items(true).unwrap().len() - s.list_items(false).unwrap().len()) as i64,
    );
    assert_eq!(s.listed_counts().unwrap(), listed, "{when}: listed");
}

#[test]
fn kept_counts_equal_a_count_of_the_rows_after_every_kind_of_change() {
    let (_dir, s, conn) = seeded();
    assert_counts_match(&s, &conn, "as seeded");
    let steps = [
        // Claims, failures, sends, cancels: status changes.
        "UPDATE outbox SET status = 'sending' WHERE status = 'pending' AND id % 4 = 0",
        "UPDATE outbox SET status = 'failed' WHERE status = 'sending' AND id % 3 = 0",
        "UPDATE outbox SET status = 'sent' WHERE status = 'sending'",
        "UPDATE outbox SET status = 'canceled' WHERE status IN ('failed', 'expired') AND id % 2 = 0",
        // A reschedule turns queued into message; a row moves conversation.
        "UPDATE outbox SET kind = 'message', status = 'pending' WHERE kind = 'queued' AND id % 5 = 0",
        "UPDATE outbox SET conversation_id = 3 WHERE conversation_id = 2 AND id % 2 = 0",
        // To and from a regeneration (not listed).
        "UPDATE outbox SET kind = 'regenerate' WHERE kind = 'task' AND id % 7 = 0",
        "UPDATE outbox SET kind = 'task' WHERE kind = 'regenerate' AND id % 3 = 0",
        // A deleted conversation leaves its rows without one (ON DELETE SET NULL).
        "DELETE FROM conversations WHERE id = 4",
        // Pruning the finished rows, and a row deleted outright.
        "DELETE FROM outbox WHERE status IN ('sent', 'canceled') AND id % 3 = 0",
        "DELETE FROM outbox WHERE id = (SELECT MIN(id) FROM outbox WHERE status = 'pending')",
        // An update that changes none of the counted columns.
        "UPDATE outbox SET text = 'edited', due_at = due_at + 1",
    ];
    for sql in steps {
        conn.execute(sql, []).unwrap();
        assert_counts_match(&s, &conn, sql);
    }
    // Through the store's own writes too.
    let pending = s.list_items(false).unwrap();
    let first = pending
        .iter()
        .find(|i| i.status == Status::Pending)
        .unwrap()
        .id;
    s.cancel_item(first, 10).unwrap();
    assert_counts_match(&s, &conn, "cancel_item");
    s.reschedule_item(first, 5_000, 11).unwrap();
    assert_counts_match(&s, &conn, "reschedule_item");
    assert!(s.prune(i64::MAX).unwrap() > 0);
    assert_counts_match(&s, &conn, "prune");
}

#[test]
fn pending_at_equals_the_states_of_the_rows() {
    let (_dir, s, conn) = seeded();
    for now in [-1, 0, 700, 1_400, 5_000] {
        let at = s.pending_at(now).unwrap();
        let count = |sql: &str| -> i64 { conn.query_row(sql, [now], |r| r.get(0)).unwrap() };
        let retrying = count(
            "SELECT count(*) FROM outbox NOT INDEXED WHERE status = 'pending' AND kind != 'regenerate'
               AND next_attempt_at > ?1",
        );
        assert_eq!(at.retrying, retrying, "retrying at {now}");
        let mut st = conn
            .prepare(
                "SELECT conversation_id, count(*) FROM outbox NOT INDEXED
                 WHERE status = 'pending' AND kind != 'regenerate'
                   AND COALESCE(next_attempt_at, 0) <= ?1 AND COALESCE(due_at, 0) <= ?1
                 GROUP BY conversation_id",
            )
            .unwrap();
        let want: HashMap<Option<i64>, i64> = st
            .query_map([now], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let got: HashMap<Option<i64>, i64> = at.ready.iter().copied().collect();
        assert_eq!(got, want, "ready at {now}");
        // The counts hold until the first due time or back-off end ahead.
        let until: Option<i64> = conn
            .query_row(
                "SELECT MIN(t) FROM (
                   SELECT next_attempt_at AS t FROM outbox WHERE status = 'pending' AND kind != 'regenerate'
                   UNION ALL SELECT MAX(COALESCE(due_at, 0), COALESCE(next_attempt_at, 0)) FROM outbox
                     WHERE status = 'pending')
                 WHERE t > ?1",
                [now],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(at.until, until, "until at {now}");
    }
}

/// The plain list `filter` describes, in list order.
fn plain_list(conn: &rusqlite::Connection, filter: ListFilter) -> Vec<(i64, i64)> {
    let status = if filter.finished {
        String::new()
    } else {
        format!("AND {UNFINISHED}")
    };
    let series = if filter.outside_series {
        "AND series_id IS NULL"
    } else {
        ""
    };
    let mut st = conn
        .prepare(&format!(
            "SELECT COALESCE(due_at, created_at), id FROM outbox NOT INDEXED
             WHERE kind != 'regenerate' {status} {series}
             ORDER BY COALESCE(due_at, created_at), id"
        ))
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

#[test]
fn windows_in_both_directions_make_up_the_list() {
    let (_dir, s, conn) = seeded();
    // Some rows are occurrences of a series.
    conn.execute(
        "INSERT INTO series (id, kind, text, rule, anchor_at, next_due_at, status, created_at, updated_at)
         VALUES (1, 'message', 's', 'every day', 0, 0, 'active', 0, 0)",
        [],
    )
    .unwrap();
    conn.execute(
        "UPDATE outbox SET series_id = 1, occurrence_at = id WHERE id % 9 = 0",
        [],
    )
    .unwrap();
    for finished in [false, true] {
        for outside_series in [false, true] {
            let filter = ListFilter {
                finished,
                outside_series,
            };
            let want = plain_list(&conn, filter);
            assert!(want.len() > 50, "{filter:?}");
            let key = |i: &tock::store::OutboxItem| {
                let c = ListCursor::of(i);
                (c.at, c.id)
            };
            let mut forward = Vec::new();
            let mut after = None;
            loop {
                let page = s.list_window(filter, ListFrom::After(after), 23).unwrap();
                let Some(last) = page.last() else { break };
                after = Some(ListCursor::of(last));
                forward.extend(page.iter().map(key));
            }
            assert_eq!(forward, want, "forward, {filter:?}");
            let mut backward = Vec::new();
            let mut before = None;
            loop {
                let page = s.list_window(filter, ListFrom::Before(before), 23).unwrap();
                let Some(first) = page.first() else { break };
                before = Some(ListCursor::of(first));
                // Each window is in list order; windows come last first.
                backward.splice(0..0, page.iter().map(key));
            }
            assert_eq!(backward, want, "backward, {filter:?}");
        }
    }
}
