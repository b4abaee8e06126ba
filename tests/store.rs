//! The store: migrations, the outbox state machine, refusal of bad files.

use tock::store::{Draft, Kind, MessageStatus, NewItem, Role, Status, Store};

#[test]
fn migrations_fresh_rerun_and_upgrade() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    // An older database: only the first migration applied, with data in it.
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL);",
        )
        .unwrap();
        conn.execute_batch(include_str!("../migrations/0001_init.sql"))
            .unwrap();
        conn.execute(
            "INSERT INTO schema_migrations VALUES (1, '0001_init', 0)",
            [],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO conversations (title, created_at, updated_at) VALUES ('old', 1, 1)",
            [],
        )
        .unwrap();
    }
    let s = Store::open(&path).unwrap();
    assert_eq!(
        s.conversations().unwrap()[0].title.as_deref(),
        Some("old"),
        "data kept across the upgrade"
    );
    let id = s.enqueue(&NewItem::new(1, Kind::Queued, "x"), 5).unwrap();
    drop(s);
    // Re-opening re-runs nothing and loses nothing.
    let s = Store::open(&path).unwrap();
    assert_eq!(s.item(id).unwrap().unwrap().text, "x");
    let conn = rusqlite::Connection::open(&path).unwrap();
    let versions: Vec<i64> = conn
        .prepare("SELECT version FROM schema_migrations ORDER BY version")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(versions, tock::store::schema_versions());
    assert_eq!(versions.last().copied(), Some(tock::store::SCHEMA_VERSION));
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    drop(Store::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("INSERT INTO schema_migrations VALUES (99, 'future', 0)", [])
        .unwrap();
    drop(conn);
    let err = format!("{:#}", Store::open(&path).err().unwrap());
    assert!(err.contains("newer tock"), "{err}");
}

#[test]
fn corrupt_file_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let junk = b"this is not a database, it is a shopping list\n".repeat(200);
    std::fs::write(&path, &junk).unwrap();
    let err = format!("{:#}", Store::open(&path).err().unwrap());
    assert!(err.contains("not a tock database"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), junk);
}

#[test]
fn read_only_database_gives_a_clear_error() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    drop(Store::open(&path).unwrap());
    for f in std::fs::read_dir(dir.path()).unwrap() {
        let f = f.unwrap().path();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o444)).unwrap();
    }
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
    let r = Store::open(&path).and_then(|s| s.enqueue(&NewItem::new(1, Kind::Queued, "x"), 1));
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    // Root ignores file modes; only assert when the OS enforced them.
    if let Err(e) = r {
        let msg = format!("{e:#}");
        assert!(!msg.is_empty() && !msg.contains('\n'), "{msg}");
    }
}

#[test]
fn claim_is_a_compare_and_swap() {
    let s = Store::open_in_memory().unwrap();
    let c = s.create_conversation(None, "user", 1).unwrap();
    let id = s.enqueue(&NewItem::new(c, Kind::Queued, "x"), 1).unwrap();
    assert!(s.claim(id, "a", 2).unwrap());
    assert!(!s.claim(id, "b", 2).unwrap(), "second claim must lose");
    let it = s.item(id).unwrap().unwrap();
    assert!(
        s.accept(&it, "b", "m", 3).unwrap().is_none(),
        "a non-owner cannot commit"
    );
    assert!(s.accept(&it, "a", "m", 3).unwrap().is_some());
    assert_eq!(s.item(id).unwrap().unwrap().status, Status::Sent);
    assert_eq!(s.messages(c).unwrap().len(), 2);
    // Sent, it cannot be edited, and the reason says so (it said its reply
    // was being retried, of any sent item).
    let e = s.edit_item(id, "y", 4).unwrap_err().to_string();
    assert!(e.contains("was sent") && !e.contains("retried"), "{e}");
}

#[test]
fn user_actions_respect_states() {
    let s = Store::open_in_memory().unwrap();
    let c = s.create_conversation(None, "user", 1).unwrap();
    let id = s.enqueue(&NewItem::new(c, Kind::Queued, "x"), 1).unwrap();
    s.edit_item(id, "y", 2).unwrap();
    s.reschedule_item(id, 1000, 2).unwrap();
    let it = s.item(id).unwrap().unwrap();
    assert_eq!(
        (it.text.as_str(), it.due_at, it.kind),
        ("y", Some(1000), Kind::Message)
    );
    assert!(s.edit_item(id, "  ", 3).is_err());
    s.cancel_item(id, 3).unwrap();
    assert!(s.cancel_item(id, 4).is_err(), "canceling twice is refused");
    assert!(s.edit_item(id, "z", 4).is_err());
    s.retry_item(id, 5).unwrap();
    assert_eq!(s.item(id).unwrap().unwrap().status, Status::Pending);
    assert!(
        s.cancel_item(9999, 1)
            .unwrap_err()
            .to_string()
            .contains("no outbox item")
    );
    // Prune keeps unfinished rows.
    s.cancel_item(id, 6).unwrap();
    let keep = s
        .enqueue(&NewItem::new(c, Kind::Queued, "keep"), 1)
        .unwrap();
    assert_eq!(s.prune(100).unwrap(), 1);
    assert!(s.item(keep).unwrap().is_some());
}

#[test]
fn locked_database_fails_clearly_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let s = Store::open(&path).unwrap();
    s.set_busy_timeout(std::time::Duration::from_millis(100))
        .unwrap();
    let c = s.create_conversation(None, "user", 1).unwrap();
    let kept = s
        .enqueue(&NewItem::new(c, Kind::Queued, "before the lock"), 1)
        .unwrap();
    let other = rusqlite::Connection::open(&path).unwrap();
    other.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let err = s
        .enqueue(&NewItem::new(c, Kind::Queued, "during"), 2)
        .unwrap_err();
    let line = tock::store::error_line(&err);
    assert!(line.contains("locked") && !line.contains('\n'), "{line}");
    other.execute_batch("COMMIT").unwrap();
    let after = s
        .enqueue(&NewItem::new(c, Kind::Queued, "after"), 3)
        .unwrap();
    assert_eq!(s.item(kept).unwrap().unwrap().text, "before the lock");
    assert_eq!(s.item(after).unwrap().unwrap().text, "after");
}

#[test]
fn full_disk_fails_clearly_and_keeps_accepted_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let s = Store::open(&path).unwrap();
    let c = s.create_conversation(None, "user", 1).unwrap();
    let kept = s
        .enqueue(&NewItem::new(c, Kind::Queued, "accepted"), 1)
        .unwrap();
    // Cap the file just above its size: the next big write hits SQLITE_FULL like a full disk.
    let conn = rusqlite::Connection::open(&path).unwrap();
    let pages: i64 = conn
        .query_row("PRAGMA page_count", [], |r| r.get(0))
        .unwrap();
    drop(conn);
    let s2 = Store::open(&path).unwrap();
    // max_page_count is per connection: apply it to the store's own connection via a second store.
    let big = "x".repeat(64 * 1024);
    {
        let raw = rusqlite::Connection::open(&path).unwrap();
        raw.query_row(
            &format!("PRAGMA max_page_count = {}", pages + 2),
            [],
            |_| Ok(()),
        )
        .unwrap();
        let r = raw.execute(
            "INSERT INTO outbox (conversation_id, kind, text, status, created_at, updated_at) VALUES (?1, 'queued', ?2, 'pending', 1, 1)",
            rusqlite::params![c, big],
        );
        let e = r.unwrap_err();
        assert_eq!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::DiskFull));
        let line = tock::store::error_line(&anyhow::Error::new(e));
        assert!(line.contains("full") && !line.contains('\n'), "{line}");
    }
    assert_eq!(
        s2.item(kept).unwrap().unwrap().text,
        "accepted",
        "nothing accepted is lost"
    );
    assert_eq!(s.list_items(true).unwrap().len(), 1);
}

#[test]
fn interrupted_migration_is_completed_on_the_next_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    {
        let mut conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL);",
        )
        .unwrap();
        conn.execute_batch(include_str!("../migrations/0001_init.sql"))
            .unwrap();
        conn.execute(
            "INSERT INTO schema_migrations VALUES (1, '0001_init', 0)",
            [],
        )
        .unwrap();
        // Half of migration 2, then the process dies before COMMIT.
        let tx = conn.transaction().unwrap();
        tx.execute_batch("CREATE TABLE outbox (id INTEGER PRIMARY KEY, junk TEXT);")
            .unwrap();
        std::mem::forget(tx);
        drop(conn);
    }
    let s = Store::open(&path).unwrap();
    let c = s.create_conversation(None, "user", 1).unwrap();
    let id = s
        .enqueue(&NewItem::new(c, Kind::Queued, "works"), 1)
        .unwrap();
    assert_eq!(s.item(id).unwrap().unwrap().status, Status::Pending);
}

#[test]
fn a_migration_numbered_below_the_highest_applied_one_is_still_applied() {
    // A database that has 0005 but not 0004 (written by a build from before
    // 0004 was merged in): opening it applies 0004.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    drop(Store::open(&path).unwrap());
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "DELETE FROM schema_migrations WHERE version = 4;
             DROP TABLE drafts;
             ALTER TABLE conversations DROP COLUMN queue_paused_at;",
        )
        .unwrap();
    }
    drop(Store::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    let versions: Vec<i64> = conn
        .prepare("SELECT version FROM schema_migrations ORDER BY version")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(versions, tock::store::schema_versions());
    let drafts: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'drafts'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(drafts, 1);
}

/// The queries a pass or a list makes read the due or unfinished rows through
/// their indexes, not the finished history; and they still find what the
/// plain conditions select (a mix of every state, kind and time).
#[test]
fn outbox_queries_use_their_indexes_and_select_what_they_did() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let s = Store::open(&path).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    for c in 1..=7 {
        conn.execute(
            "INSERT INTO conversations (id, title, created_at, updated_at, queue_paused_at) VALUES (?1, 't', 0, 0, ?2)",
            // A stop at 1,000 holds conversation 7's rows placed before it.
            rusqlite::params![c, (c == 7).then_some(1_000)],
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
        let due = (n % 3 != 0).then_some(n % 2_000);
        let next = (n % 5 == 0).then_some((n / 7) % 2_000);
        conn.execute(
            "INSERT INTO outbox (conversation_id, kind, text, due_at, status, next_attempt_at, priority,
                                 created_at, updated_at, sent_at)
             VALUES (?1, ?2, 't', ?3, ?4, ?5, ?6, ?7, 0, ?8)",
            rusqlite::params![
                (n % 8 != 0).then_some(n % 7 + 1),
                kinds[(n / 3 % 4) as usize],
                due,
                statuses[(n / 11 % 6) as usize],
                next,
                n / 13 % 2,
                (n / 17) % 2_000,
                (n % 9 == 0).then_some(5),
            ],
        )
        .unwrap();
    }
    let ids = |sql: &str, now: i64| -> Vec<i64> {
        let mut st = conn.prepare(sql).unwrap();
        st.query_map([now], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    };
    for now in [-1, 0, 700, 1_400, 5_000] {
        // dispatchable: the first due pending row of each free conversation.
        let plain = ids(
            "SELECT id FROM outbox o WHERE status = 'pending' AND (due_at IS NULL OR due_at <= ?1)
               AND (conversation_id IS NULL OR NOT EXISTS (SELECT 1 FROM conversations c
                    WHERE c.id = o.conversation_id AND o.due_at IS NULL AND o.created_at <= c.queue_paused_at))
             ORDER BY conversation_id, priority DESC, COALESCE(due_at, created_at), id",
            now,
        );
        let mut heads: Vec<i64> = Vec::new();
        let mut last_conv = None;
        for id in plain {
            let it = s.item(id).unwrap().unwrap();
            if it.conversation_id.is_some() && it.conversation_id == last_conv {
                continue;
            }
            last_conv = it.conversation_id;
            if it.next_attempt_at.is_none_or(|t| t <= now) {
                heads.push(id);
            }
        }
        let got: Vec<i64> = s.dispatchable(now).unwrap().iter().map(|i| i.id).collect();
        assert_eq!(got, heads, "dispatchable at {now}");
        let plain: Option<i64> = conn
            .query_row(
                "SELECT MIN(MAX(COALESCE(due_at, 0), COALESCE(next_attempt_at, 0))) FROM outbox NOT INDEXED
                 WHERE status = 'pending' AND MAX(COALESCE(due_at, 0), COALESCE(next_attempt_at, 0)) > ?1",
                [now],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(
            s.next_ready_at(now).unwrap(),
            plain,
            "next_ready_at at {now}"
        );
    }
    // The list, whole and a page at a time.
    let all: Vec<i64> = s.list_items(false).unwrap().iter().map(|i| i.id).collect();
    assert!(all.len() > 100);
    assert_eq!(s.unfinished_count().unwrap(), all.len() as i64);
    assert_eq!(s.item_summaries().unwrap().len(), all.len());
    let mut paged = Vec::new();
    let mut after = None;
    loop {
        let page = s.list_items_page(after, 37).unwrap();
        let Some(last) = page.last() else { break };
        after = Some(tock::store::ListCursor::of(last));
        paged.extend(page.iter().map(|i| i.id));
    }
    assert_eq!(paged, all, "the pages make up the list");
    // Overdue rows expire as the plain condition says (start-up recovery).
    let overdue = ids(
        "SELECT id FROM outbox WHERE status = 'pending' AND kind != 'regenerate' AND sent_at IS NULL
           AND COALESCE(due_at, created_at) < ?1 ORDER BY id",
        1_000,
    );
    assert!(!overdue.is_empty());
    let mut expired: Vec<i64> = s
        .expire_after_sleep(1_000 + 60_000, 60_000)
        .unwrap()
        .iter()
        .map(|i| i.id)
        .collect();
    expired.sort();
    assert_eq!(expired, overdue);
    let plan = |sql: &str| -> String {
        let mut st = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        st.query_map([], |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<rusqlite::Result<Vec<_>>>()
            .unwrap()
            .join("; ")
    };
    let p = plan(
        "SELECT MIN(MAX(COALESCE(due_at, 0), COALESCE(next_attempt_at, 0))) FROM outbox
         WHERE status = 'pending' AND MAX(COALESCE(due_at, 0), COALESCE(next_attempt_at, 0)) > 5",
    );
    assert!(p.contains("outbox_pending_ready"), "{p}");
    let p = plan("SELECT 1 FROM messages WHERE outbox_id = 5 AND role = 'user'");
    assert!(p.contains("messages_outbox"), "{p}");
}

/// The user answers the last approval of a turn while the turn is still
/// recording its other calls' outcomes (an allowed MCP call can take
/// seconds; with none, the turn records an empty set right after asking):
/// the model is asked to continue once. Both records found no approval
/// still waiting, and each queued a continuation: the model was asked
/// twice, the second time with nothing new.
#[test]
fn an_approval_answered_before_the_turn_records_its_own_outcomes_queues_one_continuation() {
    use tock::store::ApprovalStatus;
    use tock::store::approvals::{ApprovalAnswer, ToolOutcome};
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(&dir.path().join("t.db")).unwrap();
    let conv = s.create_conversation(Some("c"), "user", 1).unwrap();
    let outcome = |call: &str, result: &str| ToolOutcome {
        call_id: call.into(),
        tool: "schedule_task".into(),
        result: result.into(),
        task: None,
        cancel: None,
        series: None,
        end_series: None,
        images: Vec::new(),
    };
    let approval = s
        .add_approval(conv, 0, "call_1", "schedule_task", "{}", "{}", 2)
        .unwrap();
    // The answer comes first...
    s.record_tool_outcomes(
        conv,
        0,
        Some(&ApprovalAnswer {
            id: approval,
            from: ApprovalStatus::Waiting,
            approved: false,
            allow_always: None,
        }),
        &[outcome("call_1", "declined")],
        3,
    )
    .unwrap();
    // ...then the turn records the outcome of the call it ran itself.
    s.record_tool_outcomes(conv, 0, None, &[outcome("call_2", "ran")], 4)
        .unwrap();
    let continuations: i64 = rusqlite::Connection::open(dir.path().join("t.db"))
        .unwrap()
        .query_row(
            "SELECT COUNT(*) FROM outbox WHERE kind = 'regenerate' AND status = 'pending'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(continuations, 1);
    let tool_messages = s
        .messages(conv)
        .unwrap()
        .into_iter()
        .filter(|m| m.role == tock::store::Role::Tool)
        .count();
    assert_eq!(tool_messages, 2, "both outcomes are recorded");
}

/// Notices are kept for other processes: each reads those after the last
/// it saw, not its own, and only the newest 200 stay.
#[test]
fn notices_are_read_by_other_engines_and_the_newest_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(&dir.path().join("t.db")).unwrap();
    assert_eq!(s.last_notice_id().unwrap(), 0);
    let a = s
        .add_notice(1, "fired", Some(3), "sent in a", "engine-a")
        .unwrap();
    let b = s
        .add_notice(2, "failed", None, "failed in b", "engine-b")
        .unwrap();
    let (for_a, last) = s.notices_after(0, "engine-a").unwrap();
    assert_eq!(last, b);
    assert_eq!(for_a.len(), 1);
    assert_eq!(
        (for_a[0].kind.as_str(), for_a[0].text.as_str()),
        ("failed", "failed in b")
    );
    let (for_b, _) = s.notices_after(0, "engine-b").unwrap();
    assert_eq!((for_b[0].id, for_b[0].conversation_id), (a, Some(3)));
    assert!(s.notices_after(b, "engine-a").unwrap().0.is_empty());
    for i in 0..250 {
        s.add_notice(10 + i, "fired", None, &format!("n{i}"), "engine-a")
            .unwrap();
    }
    let kept = s.recent_notices(1000).unwrap();
    assert_eq!(kept.len(), 200);
    assert_eq!(kept.last().unwrap().text, "n249");
    assert_eq!(kept.first().unwrap().text, "n50");
    assert_eq!(s.recent_notices(2).unwrap()[1].text, "n249");
}

/// A notice about a state every engine reads alike (the config file) is
/// kept once: not again while the newest notice of that state says it, by
/// whichever engine, and again once the state changed in between.
#[test]
fn a_state_notice_is_kept_once_until_the_state_changes() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(&dir.path().join("t.db")).unwrap();
    let state = ["broken", "fixed"];
    let first = s.add_state_notice(1, "broken", state, "line 3", "engine-a");
    assert!(first.unwrap().is_some());
    // Other notices between do not make it new.
    s.add_notice(2, "fired", Some(1), "sent", "engine-a")
        .unwrap();
    let again = s.add_state_notice(3, "broken", state, "line 3", "engine-b");
    assert_eq!(again.unwrap(), None, "told by engine-a already");
    let other = s.add_state_notice(4, "broken", state, "line 4", "engine-b");
    assert!(other.unwrap().is_some(), "another problem");
    assert!(
        s.add_state_notice(5, "fixed", state, "ok", "engine-a")
            .unwrap()
            .is_some()
    );
    assert_eq!(
        s.add_state_notice(6, "fixed", state, "ok", "engine-b")
            .unwrap(),
        None
    );
    let back = s.add_state_notice(7, "broken", state, "line 3", "engine-b");
    assert!(back.unwrap().is_some(), "broken again after the fix");
    let kinds: Vec<String> = s
        .recent_notices(10)
        .unwrap()
        .into_iter()
        .map(|n| n.kind)
        .collect();
    assert_eq!(kinds, ["broken", "fired", "broken", "fixed", "broken"]);
}

/// A conversation whose message went to another model (`/with
/// big-model`) and was answered: its store, the conversation and the
/// directory that holds the database.
fn answered_by_another_model() -> (tempfile::TempDir, Store, i64) {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(&dir.path().join("t.db")).unwrap();
    let c = s.create_conversation(Some("c"), "user", 1).unwrap();
    let mut first = NewItem::new(c, Kind::Queued, "which is larger?");
    first.model_override = Some("big-model".into());
    let id = s.enqueue(&first, 1).unwrap();
    assert!(s.claim(id, "me", 2).unwrap());
    let item = s.item(id).unwrap().unwrap();
    let reply = s.accept(&item, "me", "big-model", 2).unwrap().unwrap();
    s.finish_message(reply, "the whale", MessageStatus::Complete, None, None, 3)
        .unwrap();
    (dir, s, c)
}

/// A message sent to another model (`/with MODEL`), edited and sent again,
/// goes to that model again: it went to the conversation's. An edit that
/// names a model itself goes there.
#[test]
fn an_edited_message_goes_to_the_model_the_original_went_to() {
    let (_dir, s, c) = answered_by_another_model();
    let user = s
        .messages(c)
        .unwrap()
        .into_iter()
        .find(|m| m.role == Role::User)
        .unwrap()
        .id;
    let edited = NewItem::new(c, Kind::Queued, "which is heavier?");
    let again = s
        .edit_and_resend(c, user, &edited, &Draft::default(), 4)
        .unwrap();
    assert_eq!(
        s.item(again).unwrap().unwrap().model_override.as_deref(),
        Some("big-model")
    );
}

/// A tool call running in a conversation holds what is queued there, and
/// the reason names it.
#[test]
fn an_item_behind_a_running_tool_call_waits_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(&dir.path().join("t.db")).unwrap();
    let c = s.create_conversation(Some("c"), "user", 1).unwrap();
    let id = s
        .enqueue(&NewItem::new(c, Kind::Queued, "next"), 1)
        .unwrap();
    // Run by a live dispatcher (with none, the call was cut off).
    assert!(
        s.acquire_lease("me", std::process::id(), 2, 60_000)
            .unwrap()
    );
    s.start_tool_run(c, 1, "call_1", "files__read", "me", 2)
        .unwrap();
    let w = s.waiting(3).unwrap();
    assert_eq!(
        w.get(&id).map(|w| w.describe(3)).as_deref(),
        Some(
            "conversation busy: behind the tool call files__read running there (tock stop CONV stops it)"
        )
    );
}

/// A tool call cut by a crash (run without asking, its result never
/// written) is answered at the next start with "its result was lost" and
/// the model continues, also when an earlier reply of the conversation
/// made a call of the same id (`call_1`; providers reuse them), whose
/// result read as this call's.
#[test]
fn a_call_cut_by_a_crash_is_answered_at_start_though_an_earlier_call_had_its_id() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let s = Store::open(&path).unwrap();
    let c = s.create_conversation(Some("Tools"), "user", 1).unwrap();
    let say = |role: Role, content: &str, at: i64| {
        s.insert_message(
            c,
            &tock::store::NewMessage {
                role: Some(role),
                content,
                status: Some(MessageStatus::Complete),
                ..Default::default()
            },
            at,
        )
        .unwrap()
    };
    let calls = r#"[{"id":"call_1","name":"t__slow","arguments":"{}"}]"#;
    let calling = |at: i64| {
        let a = s
            .insert_message(
                c,
                &tock::store::NewMessage {
                    role: Some(Role::Assistant),
                    status: Some(MessageStatus::Streaming),
                    ..Default::default()
                },
                at,
            )
            .unwrap();
        s.finish_message(a, "", MessageStatus::Complete, None, Some(calls), at)
            .unwrap();
        a
    };
    say(Role::User, "first", 1);
    calling(2);
    s.insert_message(
        c,
        &tock::store::NewMessage {
            role: Some(Role::Tool),
            content: "slept",
            tool_call_id: Some("call_1"),
            status: Some(MessageStatus::Complete),
            ..Default::default()
        },
        3,
    )
    .unwrap();
    say(Role::Assistant, "done", 4);
    say(Role::User, "again", 5);
    let cut = calling(6);
    drop(s);
    let s = Store::open(&path).unwrap();
    let rec = s.recover(10, 3_600_000).unwrap();
    assert_eq!(rec.unanswered_calls, ["call_1"], "{rec:?}");
    let msgs = s.messages(c).unwrap();
    let last = msgs.last().unwrap();
    assert!(last.id > cut && last.role == Role::Tool, "{msgs:?}");
    assert!(last.content.contains("result was lost"), "{}", last.content);
    // And the model is asked to go on.
    assert!(
        s.unfinished_regenerations()
            .unwrap()
            .iter()
            .any(|i| i.kind == Kind::Regenerate && i.conversation_id == Some(c))
    );
}

/// A reply to a message sent to another model (`/with MODEL`), generated
/// again (Ctrl+R, `tock regenerate`), comes from that model again: it came
/// from the conversation's.
#[test]
fn a_reply_generated_again_comes_from_the_model_the_first_came_from() {
    let (_dir, s, c) = answered_by_another_model();
    let again = s
        .supersede_last_reply_and_enqueue(c, &NewItem::new(c, Kind::Regenerate, ""), 4)
        .unwrap();
    assert_eq!(
        s.item(again).unwrap().unwrap().model_override.as_deref(),
        Some("big-model")
    );
}

/// An item sent now (`s`, `tock send-now`) that still waits (behind a
/// reply or a call) is queued, and a refused action says so, not
/// "scheduled".
#[test]
fn an_item_sent_now_is_told_as_queued_not_scheduled() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(&dir.path().join("t.db")).unwrap();
    let c = s.create_conversation(Some("c"), "user", 1).unwrap();
    let id = s
        .enqueue(&NewItem::message(c, "later", Some(3_600_000)), 1)
        .unwrap();
    let e = s.retry_item(id, 2).unwrap_err().to_string();
    assert!(e.contains("is scheduled"), "{e}");
    s.send_now(id, 3).unwrap();
    let e = s.retry_item(id, 4).unwrap_err().to_string();
    assert!(e.contains("is queued"), "{e}");
}

/// A tool call that runs without asking (an allowed MCP tool) holds its
/// reply as an approved one does: another process's Ctrl+R, `tock
/// regenerate` or edit is refused while it runs, and goes through once the
/// dispatcher that ran it is gone (its row is then stale).
#[test]
fn the_reply_of_a_call_running_in_another_process_is_not_replaced() {
    let (_dir, s, c) = answered_by_another_model();
    let reply = s
        .messages(c)
        .unwrap()
        .into_iter()
        .find(|m| m.role == Role::Assistant)
        .unwrap();
    assert!(
        s.acquire_lease("daemon", std::process::id(), 3, 60_000)
            .unwrap()
    );
    let run = s
        .start_tool_run(c, reply.id, "call_1", "files__read", "daemon", 3)
        .unwrap();
    let regenerate = NewItem::new(c, Kind::Regenerate, "");
    let e = s
        .supersede_last_reply_and_enqueue(c, &regenerate, 4)
        .unwrap_err()
        .to_string();
    assert!(e.contains("files__read is running"), "{e}");
    let user = s
        .messages(c)
        .unwrap()
        .into_iter()
        .find(|m| m.role == Role::User)
        .unwrap();
    let edited = NewItem::new(c, Kind::Queued, "which is heavier?");
    let e = s
        .edit_and_resend(c, user.id, &edited, &Draft::default(), 4)
        .unwrap_err()
        .to_string();
    assert!(e.contains("files__read is running"), "{e}");
    // Ended, or left by a dispatcher whose lease ran out: not in the way.
    s.end_tool_run(run).unwrap();
    s.start_tool_run(c, reply.id, "call_1", "files__read", "daemon", 5)
        .unwrap();
    s.supersede_last_reply_and_enqueue(c, &regenerate, 60_004)
        .unwrap();
}

/// A conversation deleted in another process while its reply streams here
/// is a request to stop that reply: it read on to its end, at the cost of
/// the tokens, for a conversation no longer there.
#[test]
fn a_conversation_deleted_elsewhere_stops_its_reply_here() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(&dir.path().join("t.db")).unwrap();
    let c = s.create_conversation(Some("c"), "user", 1).unwrap();
    assert!(!s.take_stop_request(c).unwrap());
    assert!(s.delete_conversation(c, 2).unwrap());
    assert!(s.take_stop_request(c).unwrap());
}
