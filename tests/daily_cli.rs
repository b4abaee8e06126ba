//! `tock search`, `tock fork` and the fuller `tock show --json`, run as the
//! real binary on a temporary database.

mod support;

use serde_json::Value;
use support::Tock;
use tock::store::{MessageStatus, NewMessage, Role, Store};

/// A conversation "Zoo" with a question, a superseded reply and the reply shown.
fn zoo(t: &Tock) -> (i64, [i64; 3]) {
    t.ok(&["conversations"]);
    let s = Store::open(&t.db).unwrap();
    let c = s.create_conversation(Some("Zoo"), "user", 1).unwrap();
    let add = |role, content, status| {
        s.insert_message(
            c,
            &NewMessage {
                role: Some(role),
                content,
                status: Some(status),
                ..Default::default()
            },
            2,
        )
        .unwrap()
    };
    let q = add(
        Role::User,
        "Which animal is the tallest?",
        MessageStatus::Complete,
    );
    let old = add(
        Role::Assistant,
        "The elephant, surely.",
        MessageStatus::Superseded,
    );
    let a = add(
        Role::Assistant,
        "The giraffe: up to 5.5 m.",
        MessageStatus::Complete,
    );
    (c, [q, old, a])
}

#[test]
fn search_prints_matches_and_json_with_byte_ranges() {
    let t = Tock::new();
    let (c, [q, _old, a]) = zoo(&t);
    let out = t.ok(&["search", "giraffe"]);
    assert!(out.contains(&format!("#{c} Zoo")), "{out}");
    assert!(out.contains("The giraffe: up to 5.5 m."), "{out}");
    assert!(!out.contains('\x1b'), "no colour into a pipe: {out:?}");

    let v = t.json(&["search", "--json", "animal", "tall"]);
    let hits = v.as_array().unwrap();
    assert_eq!(hits.len(), 1, "{v:#}");
    let h = &hits[0];
    assert_eq!(h["message_id"], q);
    assert_eq!(h["conversation_id"], c);
    assert_eq!(h["conversation_title"], "Zoo");
    assert_eq!(h["role"], "user");
    let snippet = h["snippet"].as_str().unwrap();
    let marked: Vec<&str> = h["highlights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &snippet[r[0].as_u64().unwrap() as usize..r[1].as_u64().unwrap() as usize])
        .collect();
    assert_eq!(marked, ["animal", "tallest"]);

    // A superseded reply is not found; odd input is not an error.
    assert_eq!(
        t.json(&["search", "--json", "elephant"]),
        Value::Array(vec![])
    );
    for odd in ["foo\"bar", "a AND", "NEAR(", "*", "\"", "-x"] {
        t.ok(&["search", "--json", "--", odd]);
    }
    let limited = t.json(&["search", "--json", "--limit", "1", "the"]);
    assert_eq!(limited.as_array().unwrap().len(), 1);
    assert_eq!(limited[0]["message_id"], a);
    let none = t.run(&["search", "nothing-like-this"]);
    assert!(none.status.success());
    assert_eq!(none.stdout, "");
    assert!(
        none.stderr.contains("no message matches"),
        "{}",
        none.stderr
    );
}

#[test]
fn fork_copies_the_shown_history_up_to_a_message() {
    let t = Tock::new();
    let (c, [q, old, a]) = zoo(&t);
    // At the question: only the question.
    let f1: i64 = t
        .ok(&["fork", &c.to_string(), "--at", &q.to_string()])
        .trim()
        .parse()
        .unwrap();
    let shown = t.show(&format!("#{f1}"));
    assert_eq!(shown["title"], "Fork of Zoo");
    let msgs = shown["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 1);
    assert_eq!(msgs[0]["content"], "Which animal is the tallest?");

    // Default: everything shown, without the superseded reply.
    let v = t.json(&["fork", "Zoo", "--json"]);
    let f2 = v["id"].as_i64().unwrap();
    assert_eq!(v["forked_from"], c);
    assert_eq!(v["up_to_message_id"], a);
    assert_eq!(v["messages"], 2);
    let contents: Vec<Value> = t.show(&format!("#{f2}"))["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].clone())
        .collect();
    assert_eq!(
        contents,
        ["Which animal is the tallest?", "The giraffe: up to 5.5 m."]
    );
    // The original is untouched.
    assert_eq!(t.show("Zoo")["messages"].as_array().unwrap().len(), 3);

    // Refused: a superseded version, a message of another conversation.
    let e = t.fails(&["fork", "Zoo", "--at", &old.to_string()]);
    assert!(e.contains("older version"), "{e}");
    let e = t.fails(&["fork", &format!("#{f1}"), "--at", &a.to_string()]);
    assert!(e.contains("not in conversation"), "{e}");
    let e = t.fails(&["fork", "Nope"]);
    assert!(e.contains("no conversation"), "{e}");
}
