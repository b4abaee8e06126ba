//! Full-text search on a real database file: the index follows every write
//! to `messages` (insert, streaming, finish, supersede, delete), is built
//! for a database that existed before it, and never chokes on what a user
//! types.

use tock::store::{MessageStatus, NewMessage, Role, Store};

fn open() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("t.db")).unwrap();
    (dir, store)
}

fn msg<'a>(role: Role, content: &'a str, status: MessageStatus) -> NewMessage<'a> {
    NewMessage {
        role: Some(role),
        content,
        status: Some(status),
        ..Default::default()
    }
}

fn ids(store: &Store, q: &str) -> Vec<i64> {
    store
        .search(q, 50)
        .unwrap()
        .iter()
        .map(|h| h.message_id)
        .collect()
}

/// A database as a tock of schema `upto` left it: its migrations applied
/// and recorded, as they were then.
fn old_database(path: &std::path::Path, upto: i64) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL);",
    )
    .unwrap();
    for (v, sql) in [
        (1, include_str!("../migrations/0001_init.sql")),
        (2, include_str!("../migrations/0002_outbox.sql")),
        (3, include_str!("../migrations/0003_approvals.sql")),
        (4, include_str!("../migrations/0004_drafts_and_pause.sql")),
        (5, include_str!("../migrations/0005_series.sql")),
        (6, include_str!("../migrations/0006_search.sql")),
        (7, include_str!("../migrations/0007_usage_and_versions.sql")),
        (8, include_str!("../migrations/0008_approval_runs.sql")),
        (9, include_str!("../migrations/0009_scale_indexes.sql")),
        (10, include_str!("../migrations/0010_listed_counts.sql")),
        (11, include_str!("../migrations/0011_search_unspaced.sql")),
        (12, include_str!("../migrations/0012_stop_requests.sql")),
    ] {
        if v > upto {
            break;
        }
        conn.execute_batch(sql).unwrap();
        conn.execute(
            "INSERT INTO schema_migrations VALUES (?1, ?2, 0)",
            rusqlite::params![v, format!("m{v}")],
        )
        .unwrap();
    }
    conn
}

#[test]
fn finds_user_and_assistant_text_newest_first_with_conversation_and_snippet() {
    let (_d, s) = open();
    let a = s
        .create_conversation(Some("Rust questions"), "user", 1)
        .unwrap();
    let b = s.create_conversation(None, "user", 2).unwrap();
    let q = s
        .insert_message(
            a,
            &msg(
                Role::User,
                "Why does the borrow checker complain?",
                MessageStatus::Complete,
            ),
            10,
        )
        .unwrap();
    let r = s
        .insert_message(
            a,
            &msg(
                Role::Assistant,
                "Because two mutable borrows overlap.\nSplit them.",
                MessageStatus::Complete,
            ),
            20,
        )
        .unwrap();
    let other = s
        .insert_message(
            b,
            &msg(Role::User, "borrow a cup of sugar", MessageStatus::Complete),
            30,
        )
        .unwrap();
    // Notices and tool output are not conversation text.
    s.insert_message(
        a,
        &msg(Role::Notice, "borrow notice", MessageStatus::Complete),
        40,
    )
    .unwrap();
    s.insert_message(
        a,
        &msg(Role::Tool, "borrow tool result", MessageStatus::Complete),
        50,
    )
    .unwrap();

    let hits = s.search("borrow", 50).unwrap();
    let got: Vec<i64> = hits.iter().map(|h| h.message_id).collect();
    assert_eq!(
        got,
        [other, r, q],
        "newest first, prefix 'borrow' matches 'borrows'"
    );
    let h = &hits[1];
    assert_eq!(h.conversation_id, a);
    assert_eq!(h.conversation_title.as_deref(), Some("Rust questions"));
    assert_eq!(h.role, Role::Assistant);
    assert_eq!(h.created_at, 20);
    assert_eq!(
        h.snippet,
        "Because two mutable borrows overlap. Split them."
    );
    let marked: Vec<&str> = h.highlights.iter().map(|r| &h.snippet[r.clone()]).collect();
    assert_eq!(marked, ["borrows"]);
    // All words must occur; a trailing space ends the prefix.
    assert_eq!(ids(&s, "borrow checker"), [q]);
    assert_eq!(ids(&s, "borrow "), [other, q]);
    assert_eq!(ids(&s, "\"mutable borrows\""), [r]);
    assert_eq!(ids(&s, "\"borrows mutable\""), Vec::<i64>::new());
    assert_eq!(s.search("borrow", 2).unwrap().len(), 2, "limit");
    let within: Vec<i64> = s
        .search_in(a, "borrow", 50)
        .unwrap()
        .iter()
        .map(|h| h.message_id)
        .collect();
    assert_eq!(within, [r, q], "one conversation only");
    // Case and accents do not matter.
    s.insert_message(
        b,
        &msg(Role::User, "Crème BRÛLÉE recipe", MessageStatus::Complete),
        60,
    )
    .unwrap();
    assert_eq!(ids(&s, "creme brulee").len(), 1);
}

#[test]
fn any_typed_text_is_safe() {
    let (_d, s) = open();
    let c = s.create_conversation(None, "user", 1).unwrap();
    let m = s
        .insert_message(
            c,
            &msg(
                Role::User,
                "foo bar and a NEAR miss, col:value",
                MessageStatus::Complete,
            ),
            1,
        )
        .unwrap();
    for q in [
        "foo\"bar",
        "a AND",
        "AND",
        "OR",
        "NOT",
        "NEAR(",
        "(",
        ")",
        "\"",
        "*",
        "foo*",
        "^foo",
        "-foo",
        "col:value",
        "content:foo",
        "{content}: foo",
        "foo +",
        "'",
        "\\",
        "'; DROP TABLE messages; --",
        "",
        "   ",
        "***",
        "\u{0}",
        "a\u{1b}[31m",
    ] {
        let r = s.search(q, 10);
        assert!(r.is_ok(), "{q:?}: {r:?}");
    }
    assert_eq!(
        ids(&s, "foo\"bar"),
        [m],
        "the pieces of a word are a phrase"
    );
    assert_eq!(
        ids(&s, "a AND"),
        [m],
        "AND is a word, and a prefix of 'and'"
    );
    assert_eq!(ids(&s, "near miss"), [m]);
    assert_eq!(ids(&s, "col:value"), [m]);
    assert!(ids(&s, "***").is_empty());
    assert_eq!(s.message_count().unwrap(), 1);
}

#[test]
fn index_follows_streaming_finish_supersede_and_delete() {
    let (_d, s) = open();
    let c = s.create_conversation(None, "user", 1).unwrap();
    let reply = s
        .insert_message(c, &msg(Role::Assistant, "", MessageStatus::Streaming), 1)
        .unwrap();
    s.update_streaming(reply, "partial zebra").unwrap();
    assert!(
        ids(&s, "zebra").is_empty(),
        "a streaming reply is not indexed yet"
    );
    s.finish_message(
        reply,
        "final giraffe",
        MessageStatus::Complete,
        None,
        None,
        2,
    )
    .unwrap();
    assert!(
        ids(&s, "zebra").is_empty(),
        "the partial text is not left behind"
    );
    assert_eq!(ids(&s, "giraffe"), [reply]);

    // Superseded by a regeneration: it leaves the index; shown again, it is back.
    s.set_message_status(reply, MessageStatus::Superseded, None)
        .unwrap();
    assert!(ids(&s, "giraffe").is_empty());
    s.set_message_status(reply, MessageStatus::Complete, None)
        .unwrap();
    assert_eq!(ids(&s, "giraffe"), [reply]);

    // An interrupted reply keeps its visible partial text searchable.
    let cut = s
        .insert_message(c, &msg(Role::Assistant, "", MessageStatus::Streaming), 3)
        .unwrap();
    s.finish_message(
        cut,
        "half an okapi",
        MessageStatus::Interrupted,
        Some("stopped"),
        None,
        4,
    )
    .unwrap();
    assert_eq!(ids(&s, "okapi"), [cut]);

    // Deleting the conversation removes its messages from the index.
    s.delete_conversation(c, 5).unwrap();
    assert!(ids(&s, "giraffe").is_empty());
    assert!(ids(&s, "okapi").is_empty());
    let conn = rusqlite::Connection::open(s.path()).unwrap();
    let check: rusqlite::Result<usize> = conn.execute(
        "INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 0)",
        [],
    );
    assert!(check.is_ok(), "the index matches its table: {check:?}");
}

#[test]
fn edit_and_resend_takes_the_old_exchange_out_of_search() {
    let (_d, s) = open();
    let c = s.create_conversation(None, "user", 1).unwrap();
    let u = s
        .insert_message(
            c,
            &msg(
                Role::User,
                "tell me about walruses",
                MessageStatus::Complete,
            ),
            1,
        )
        .unwrap();
    s.insert_message(
        c,
        &msg(
            Role::Assistant,
            "walruses are large",
            MessageStatus::Complete,
        ),
        2,
    )
    .unwrap();
    let item = tock::store::NewItem::new(c, tock::store::Kind::Queued, "tell me about seals");
    s.edit_and_resend(c, u, &item, &tock::store::Draft::default(), 3)
        .unwrap();
    assert!(ids(&s, "walruses").is_empty());
}

/// A database from before the index (schema 5, with history) gets the index
/// built when it is opened by this build.
#[test]
fn migration_builds_the_index_for_an_existing_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    {
        let conn = old_database(&path, 5);
        conn.execute_batch(
            "INSERT INTO conversations (id, title, created_at, updated_at) VALUES (1, 'Old', 1, 1);
             INSERT INTO messages (id, conversation_id, role, content, status, created_at) VALUES
               (1, 1, 'user', 'where is the aardvark', 'complete', 1),
               (2, 1, 'assistant', 'the aardvark sleeps', 'superseded', 2),
               (3, 1, 'assistant', 'the aardvark is out', 'complete', 3),
               (4, 1, 'assistant', 'aardvark in progress', 'streaming', 4),
               (5, 1, 'notice', 'aardvark notice', 'complete', 5);",
        )
        .unwrap();
    }
    let s = Store::open(&path).unwrap();
    assert_eq!(ids(&s, "aardvark"), [3, 1]);
    // The streaming reply of a crashed process is indexed when it is ended.
    s.finish_message(
        4,
        "aardvark done",
        MessageStatus::Interrupted,
        None,
        None,
        6,
    )
    .unwrap();
    assert_eq!(ids(&s, "aardvark"), [4, 3, 1]);
}

/// Chinese and Japanese have no spaces between words: a word inside a
/// sentence is found, and only where its characters stand together.
#[test]
fn finds_words_inside_chinese_and_japanese_text() {
    let (_d, s) = open();
    let c = s.create_conversation(None, "user", 1).unwrap();
    let zh = s
        .insert_message(
            c,
            &msg(
                Role::User,
                "今天天气很好，我们去公园吧",
                MessageStatus::Complete,
            ),
            1,
        )
        .unwrap();
    let ja = s
        .insert_message(
            c,
            &msg(
                Role::Assistant,
                "東京の天気は晴れです",
                MessageStatus::Complete,
            ),
            2,
        )
        .unwrap();
    let mixed = s
        .insert_message(
            c,
            &msg(Role::User, "我在用GPT模型写代码", MessageStatus::Complete),
            3,
        )
        .unwrap();
    assert_eq!(ids(&s, "天气"), [zh]);
    assert_eq!(ids(&s, "公园"), [zh]);
    assert_eq!(ids(&s, "天気"), [ja]);
    assert_eq!(ids(&s, "晴れ"), [ja]);
    assert_eq!(ids(&s, "天"), [ja, zh]);
    assert_eq!(ids(&s, "模型"), [mixed]);
    assert_eq!(ids(&s, "gpt 代码"), [mixed]);
    assert_eq!(ids(&s, "GPT模型"), [mixed]);
    // The characters must stand together, in order.
    assert!(ids(&s, "气天").is_empty());
    assert!(ids(&s, "今好").is_empty());
    // Highlighted as one word, and only where the word is.
    let hit = s.search("天气", 5).unwrap().remove(0);
    let marked: Vec<&str> = hit
        .highlights
        .iter()
        .map(|r| &hit.snippet[r.clone()])
        .collect();
    assert_eq!(marked, ["天气"]);
    // Words of other languages are searched as before.
    s.insert_message(
        c,
        &msg(Role::User, "plain english words", MessageStatus::Complete),
        4,
    )
    .unwrap();
    assert_eq!(ids(&s, "english").len(), 1);
}

#[test]
fn the_unspaced_index_follows_streaming_supersede_edit_and_delete() {
    let (_d, s) = open();
    let c = s.create_conversation(None, "user", 1).unwrap();
    let reply = s
        .insert_message(c, &msg(Role::Assistant, "", MessageStatus::Streaming), 1)
        .unwrap();
    s.update_streaming(reply, "部分的回答").unwrap();
    assert!(
        ids(&s, "回答").is_empty(),
        "a streaming reply is not indexed yet"
    );
    s.finish_message(reply, "最后的回答", MessageStatus::Complete, None, None, 2)
        .unwrap();
    assert!(
        ids(&s, "部分").is_empty(),
        "the partial text is not left behind"
    );
    assert_eq!(ids(&s, "回答"), [reply]);
    s.set_message_status(reply, MessageStatus::Superseded, None)
        .unwrap();
    assert!(ids(&s, "回答").is_empty());
    s.set_message_status(reply, MessageStatus::Complete, None)
        .unwrap();
    assert_eq!(ids(&s, "回答"), [reply]);
    s.delete_conversation(c, 5).unwrap();
    assert!(ids(&s, "回答").is_empty());
    let conn = rusqlite::Connection::open(s.path()).unwrap();
    let left: i64 = conn
        .query_row("SELECT count(*) FROM messages_unspaced_pending", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(left, 0, "every noted change was indexed");
}

/// The triggers are plain SQL: a connection that knows nothing of tock
/// (as a tock built before this index, still running) writes messages
/// unharmed, and the next search finds them.
#[test]
fn messages_written_by_any_connection_are_found() {
    let (_d, s) = open();
    let c = s.create_conversation(None, "user", 1).unwrap();
    let conn = rusqlite::Connection::open(s.path()).unwrap();
    conn.execute(
        "INSERT INTO messages (conversation_id, role, content, status, created_at)
         VALUES (?1, 'user', '明天下午开会', 'complete', 5)",
        [c],
    )
    .unwrap();
    assert_eq!(ids(&s, "开会").len(), 1);
    conn.execute(
        "UPDATE messages SET content = '明天上午休息' WHERE conversation_id = ?1",
        [c],
    )
    .unwrap();
    assert!(ids(&s, "开会").is_empty());
    assert_eq!(ids(&s, "休息").len(), 1);
}

#[test]
fn migration_indexes_unspaced_text_an_existing_database_holds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    {
        let conn = old_database(&path, 10);
        conn.execute_batch(
            "INSERT INTO conversations (id, title, created_at, updated_at) VALUES (1, 'Old', 1, 1);
             INSERT INTO messages (id, conversation_id, role, content, status, created_at) VALUES
               (1, 1, 'user', '请问数据库在哪里', 'complete', 1),
               (2, 1, 'assistant', '数据库的旧回答', 'superseded', 2),
               (3, 1, 'assistant', '数据库在这里', 'complete', 3),
               (4, 1, 'notice', '数据库通知', 'complete', 4),
               (5, 1, 'user', 'un café — merci', 'complete', 5);",
        )
        .unwrap();
    }
    let s = Store::open(&path).unwrap();
    assert_eq!(ids(&s, "数据库"), [3, 1]);
    assert_eq!(ids(&s, "café"), [5]);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let (pending, indexed): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT count(*) FROM messages_unspaced_pending),
                    (SELECT count(*) FROM messages_unspaced_fts)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        (pending, indexed),
        (0, 2),
        "only the Chinese text is in the second index"
    );
}

/// Emoji were separators to the index: searching 🚀 found nothing. Each
/// is now a word: found alone, with words, as a phrase, whatever its
/// presentation selector (❤️ and ❤), and highlighted.
#[test]
fn finds_emoji_and_pictographs() {
    let (_d, s) = open();
    let c = s.create_conversation(None, "user", 1).unwrap();
    let add = |role, text: &str, at| {
        s.insert_message(c, &msg(role, text, MessageStatus::Complete), at)
            .unwrap()
    };
    let ship = add(Role::User, "ship it 🚀 today", 1);
    let love = add(Role::Assistant, "I ❤️ Rust ✅", 2);
    let plain_heart = add(Role::User, "also ❤ here", 3);
    let family = add(Role::User, "the 👨‍👩‍👧 emoji and 👍🏽", 4);
    let stars = add(Role::User, "⭐⭐⭐ review", 5);
    assert_eq!(ids(&s, "🚀"), [ship]);
    assert_eq!(ids(&s, "🚀 today"), [ship]);
    assert_eq!(ids(&s, "ship 🚀"), [ship]);
    assert!(ids(&s, "🚀 rust").is_empty());
    assert_eq!(ids(&s, "❤️"), [plain_heart, love]);
    assert_eq!(ids(&s, "❤"), [plain_heart, love]);
    assert_eq!(ids(&s, "✅"), [love]);
    assert_eq!(ids(&s, "👩"), [family]);
    assert_eq!(ids(&s, "👍"), [family]);
    assert_eq!(ids(&s, "⭐⭐"), [stars]);
    assert!(ids(&s, "🎉").is_empty());
    // Highlighted where it is.
    let hit = s.search("🚀", 5).unwrap().remove(0);
    let marked: Vec<&str> = hit
        .highlights
        .iter()
        .map(|r| &hit.snippet[r.clone()])
        .collect();
    assert_eq!(marked, ["🚀"]);
    // Words in messages with emoji are found as before, from either index.
    assert_eq!(ids(&s, "review"), [stars]);
}

/// A database from before (schema 12, its Chinese text indexed already):
/// the emoji it holds are found after the upgrade, and the Chinese still.
#[test]
fn migration_indexes_emoji_an_existing_database_holds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    {
        let conn = old_database(&path, 12);
        conn.execute_batch(
            "INSERT INTO conversations (id, title, created_at, updated_at) VALUES (1, 'Old', 1, 1);
             INSERT INTO messages (id, conversation_id, role, content, status, created_at) VALUES
               (1, 1, 'user', '数据库 🚀', 'complete', 1),
               (2, 1, 'assistant', 'launched 🚀', 'complete', 2),
               (3, 1, 'user', 'no emoji — only a dash', 'complete', 3);",
        )
        .unwrap();
    }
    let s = Store::open(&path).unwrap();
    assert_eq!(ids(&s, "🚀"), [2, 1]);
    assert_eq!(ids(&s, "数据库"), [1]);
    assert_eq!(ids(&s, "dash"), [3]);
    // And what is written after the upgrade too.
    let c = 1;
    let new = s
        .insert_message(c, &msg(Role::User, "party 🎉", MessageStatus::Complete), 4)
        .unwrap();
    assert_eq!(ids(&s, "🎉"), [new]);
}

/// A fork cut between a tool call and its answer carries no unanswered
/// call: reopening the database must not answer it and generate a reply in
/// the fork.
#[test]
fn a_fork_drops_tool_calls_answered_only_after_the_cut() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let s = Store::open(&path).unwrap();
    let c = s.create_conversation(Some("Tools"), "user", 1).unwrap();
    s.insert_message(
        c,
        &msg(Role::User, "what time is it", MessageStatus::Complete),
        1,
    )
    .unwrap();
    let a = s
        .insert_message(c, &msg(Role::Assistant, "", MessageStatus::Streaming), 2)
        .unwrap();
    let calls = r#"[{"id":"call_1","name":"get_time","arguments":"{}"}]"#;
    s.finish_message(
        a,
        "let me look",
        MessageStatus::Complete,
        None,
        Some(calls),
        3,
    )
    .unwrap();
    s.insert_message(
        c,
        &NewMessage {
            role: Some(Role::Tool),
            content: "14:05",
            tool_call_id: Some("call_1"),
            model: Some("get_time"),
            ..Default::default()
        },
        4,
    )
    .unwrap();
    // Forked at the call: the call is dropped from the copy.
    let cut = s.fork_conversation(c, a, 5).unwrap();
    assert_eq!(cut.calls_left_out, ["get_time"]);
    let cut = cut.id;
    let copy = s.messages(cut).unwrap();
    assert_eq!(copy.len(), 2);
    assert_eq!(copy[1].content, "let me look");
    assert_eq!(copy[1].tool_calls_json, None);
    assert_eq!(copy[1].outbox_id, None);
    // Forked after the answer: the call and its result come along.
    let whole = s.fork_conversation(c, a + 1, 6).unwrap();
    assert!(whole.calls_left_out.is_empty());
    let whole = whole.id;
    let copy = s.messages(whole).unwrap();
    assert_eq!(copy.len(), 3);
    assert_eq!(copy[1].tool_calls_json.as_deref(), Some(calls));
    assert_eq!(
        s.conversation(whole).unwrap().unwrap().title.as_deref(),
        Some("Fork of Tools")
    );
    let again = s.fork_conversation(whole, copy[2].id, 7).unwrap().id;
    assert_eq!(
        s.conversation(again).unwrap().unwrap().title.as_deref(),
        Some("Fork of Tools"),
        "not Fork of Fork of"
    );
    drop(s);
    // Reopening (recovery runs) leaves the forks as they are: nothing to send.
    let s = Store::open(&path).unwrap();
    let rec = s.recover(8, 3_600_000).unwrap();
    assert!(rec.unanswered_calls.is_empty(), "{rec:?}");
    assert_eq!(s.messages(cut).unwrap().len(), 2);
    // Forks are searchable like any conversation.
    assert_eq!(s.search("look", 10).unwrap().len(), 4);
}

/// Attempts of a cut reply that the conversation shows as one (its latest)
/// are found as that one: each attempt was a hit of its own, and Enter on
/// an earlier one found nothing on screen to go to.
#[test]
fn the_earlier_attempts_of_a_cut_reply_are_not_found() {
    let (_d, s) = open();
    let c = s.create_conversation(Some("c"), "user", 1).unwrap();
    s.insert_message(c, &msg(Role::User, "hello", MessageStatus::Complete), 1)
        .unwrap();
    let attempts: Vec<i64> = (0..3)
        .map(|i| {
            s.insert_message(
                c,
                &msg(
                    Role::Assistant,
                    "partial ollama",
                    MessageStatus::Interrupted,
                ),
                2 + i,
            )
            .unwrap()
        })
        .collect();
    assert_eq!(ids(&s, "partial ollama"), [attempts[2]]);
    // Answered by a message after them, the run ends: a later cut reply
    // is found beside the latest of the run.
    s.insert_message(c, &msg(Role::User, "again", MessageStatus::Complete), 6)
        .unwrap();
    let later = s
        .insert_message(
            c,
            &msg(
                Role::Assistant,
                "partial ollama",
                MessageStatus::Interrupted,
            ),
            7,
        )
        .unwrap();
    assert_eq!(ids(&s, "partial ollama"), [later, attempts[2]]);
}
