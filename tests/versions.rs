//! Versions of a message: regenerations keep the replies they put aside as
//! alternates one can browse and bring back; edits keep the earlier texts.
//! Through the engine, with a scripted provider, on a real database file.

mod common;

use common::*;
use tock::llm::ChatMessage;
use tock::store::{AlternateKind, Draft, Kind, MessageStatus, NewItem, Role};

fn replies(h: &Harness, conv: i64) -> Vec<(String, MessageStatus)> {
    h.engine
        .store()
        .messages(conv)
        .unwrap()
        .into_iter()
        .filter(|m| m.role == Role::Assistant)
        .map(|m| (m.content, m.status))
        .collect()
}

fn id_of(h: &Harness, conv: i64, content: &str) -> i64 {
    h.engine
        .store()
        .messages(conv)
        .unwrap()
        .into_iter()
        .find(|m| m.content == content)
        .unwrap_or_else(|| panic!("no message {content:?}"))
        .id
}

fn sent_texts(req: &tock::llm::ChatRequest) -> Vec<String> {
    req.messages
        .iter()
        .map(|m| match m {
            ChatMessage::User { text, .. } => format!("user: {text}"),
            ChatMessage::Assistant { text, .. } => format!("assistant: {text}"),
            ChatMessage::ToolResult { content, .. } => format!("tool: {content}"),
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn regenerated_replies_are_versions_one_can_bring_back() {
    let h = harness(vec![
        Step::Reply(vec![text("first"), done()]),
        Step::Reply(vec![text("second"), done()]),
        Step::Reply(vec![text("third"), done()]),
        Step::Reply(vec![text("after"), done()]),
        Step::Reply(vec![text("fourth"), done()]),
    ]);
    let conv = new_conv(&h);
    h.engine.start();
    h.engine.send_text(conv, "question").unwrap();
    settle().await;
    h.engine.regenerate(conv).unwrap();
    settle().await;
    h.engine.regenerate(conv).unwrap();
    settle().await;
    let (a, b, c) = (
        id_of(&h, conv, "first"),
        id_of(&h, conv, "second"),
        id_of(&h, conv, "third"),
    );
    let map = h.engine.alternates(conv).unwrap();
    let g = map.of(b).expect("the second reply has versions");
    assert_eq!(g.kind, AlternateKind::Regenerated);
    assert_eq!(g.versions, [a, b, c]);
    assert_eq!(g.shown, Some(2));
    assert!(g.can_choose);
    assert_eq!(g.position(c), Some((3, 3)));
    assert_eq!(
        map.of(id_of(&h, conv, "question")),
        None,
        "the question has one version"
    );

    // Bring the first back: it is what the model sees next.
    h.engine.show_alternate(a).unwrap();
    assert_eq!(
        replies(&h, conv),
        [
            ("first".to_string(), MessageStatus::Complete),
            ("second".to_string(), MessageStatus::Superseded),
            ("third".to_string(), MessageStatus::Superseded),
        ]
    );
    let g = h.engine.alternates(conv).unwrap().of(a).cloned().unwrap();
    assert_eq!((g.versions.clone(), g.shown), (vec![a, b, c], Some(0)));
    h.engine.show_alternate(a).unwrap(); // already shown: nothing changes
    // Search follows the version shown.
    let found: Vec<i64> = h
        .engine
        .search("third", 10)
        .unwrap()
        .iter()
        .map(|x| x.message_id)
        .collect();
    assert!(found.is_empty());
    assert_eq!(h.engine.search("first", 10).unwrap()[0].message_id, a);

    // Regenerating now replaces the version shown, and the group grows.
    h.engine.regenerate(conv).unwrap();
    settle().await;
    let d = id_of(&h, conv, "after");
    let g = h.engine.alternates(conv).unwrap().of(d).cloned().unwrap();
    assert_eq!((g.versions.clone(), g.shown), (vec![a, b, c, d], Some(3)));
    let req = h.provider.requests().last().cloned().unwrap();
    assert_eq!(
        sent_texts(&req),
        ["user: question"],
        "no put-aside reply goes to the model"
    );

    h.engine.show_alternate(b).unwrap();
    h.engine.send_text(conv, "and then?").unwrap();
    settle().await;
    let req = h.provider.requests().last().cloned().unwrap();
    assert_eq!(
        sent_texts(&req),
        ["user: question", "assistant: second", "user: and then?"]
    );
    // Once the conversation went on, the versions can be browsed, not switched.
    let g = h.engine.alternates(conv).unwrap().of(b).cloned().unwrap();
    assert!(!g.can_choose);
    assert_eq!(g.shown, Some(1));
    let e = h.engine.show_alternate(a).unwrap_err().to_string();
    assert!(e.contains("only the last reply"), "{e}");
}

#[tokio::test(start_paused = true)]
async fn edited_messages_keep_their_earlier_texts_to_look_at() {
    let h = harness(vec![
        Step::Reply(vec![text("reply one"), done()]),
        Step::Reply(vec![text("reply two"), done()]),
        Step::Reply(vec![text("reply three"), done()]),
    ]);
    let conv = new_conv(&h);
    h.engine.start();
    h.engine.send_text(conv, "draft one").unwrap();
    settle().await;
    let u1 = id_of(&h, conv, "draft one");
    h.engine
        .edit_and_resend(
            conv,
            u1,
            NewItem::new(conv, Kind::Queued, "draft two"),
            &Draft::default(),
        )
        .unwrap();
    settle().await;
    let u2 = id_of(&h, conv, "draft two");
    h.engine
        .edit_and_resend(
            conv,
            u2,
            NewItem::new(conv, Kind::Queued, "draft three"),
            &Draft::default(),
        )
        .unwrap();
    settle().await;
    let u3 = id_of(&h, conv, "draft three");
    let map = h.engine.alternates(conv).unwrap();
    let g = map.of(u3).expect("the edited message has versions");
    assert_eq!(g.kind, AlternateKind::Edited);
    assert_eq!(g.versions, [u1, u2, u3]);
    assert_eq!(g.shown, Some(2));
    assert!(!g.can_choose);
    // The reply to an edited message is not a version of the earlier replies.
    assert_eq!(map.of(id_of(&h, conv, "reply three")), None);
    let e = h.engine.show_alternate(u1).unwrap_err().to_string();
    assert!(e.contains("looked at"), "{e}");
    let msgs = h.engine.store().messages(conv).unwrap();
    let shown: Vec<&str> = msgs
        .iter()
        .filter(|m| m.status != MessageStatus::Superseded)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(shown, ["draft three", "reply three"]);
}

/// An edit of the last message, sent while a follow-up waits in the queue a
/// stop paused, goes before that follow-up: it replaces the message the
/// follow-up was written after.
#[tokio::test(start_paused = true)]
async fn an_edit_sent_while_a_follow_up_is_held_goes_before_it() {
    let gate = std::sync::Arc::new(tokio::sync::Notify::new());
    let h = harness(vec![
        Step::Hold(vec![text("partial")], gate),
        Step::Reply(vec![text("to the edit"), done()]),
        Step::Reply(vec![text("to the follow-up"), done()]),
    ]);
    let conv = new_conv(&h);
    h.engine.start();
    h.engine.send_text(conv, "first").unwrap();
    settle().await;
    h.engine.send_text(conv, "follow-up").unwrap();
    settle().await;
    assert!(h.engine.stop(conv));
    settle().await;
    let first = id_of(&h, conv, "first");
    h.engine
        .edit_and_resend(
            conv,
            first,
            NewItem::new(conv, Kind::Queued, "first, edited"),
            &Draft::default(),
        )
        .unwrap();
    settle().await;
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    settle().await;
    let shown: Vec<String> = h
        .engine
        .store()
        .messages(conv)
        .unwrap()
        .into_iter()
        .filter(|m| m.status != MessageStatus::Superseded)
        .map(|m| m.content)
        .collect();
    assert_eq!(
        shown,
        [
            "first, edited",
            "to the edit",
            "follow-up",
            "to the follow-up"
        ]
    );
}

/// A regeneration that fails before it starts gives the reply it put aside
/// back (the question had been left unanswered, and the failed row is not
/// listed anywhere to retry); the next Ctrl+R makes it a version as usual.
#[tokio::test(start_paused = true)]
async fn a_failed_regeneration_gives_the_earlier_reply_back() {
    let h = harness(vec![
        Step::Reply(vec![text("first"), done()]),
        Step::Fail(tock::llm::LlmError::permanent("401 Unauthorized: bad key")),
        Step::Reply(vec![text("second"), done()]),
    ]);
    let mut events = h.engine.subscribe();
    let conv = new_conv(&h);
    h.engine.start();
    h.engine.send_text(conv, "question").unwrap();
    settle().await;
    let row = h.engine.regenerate(conv).unwrap();
    settle().await;
    assert_eq!(
        h.engine.store().item(row).unwrap().unwrap().status,
        tock::store::Status::Failed
    );
    assert_eq!(
        replies(&h, conv),
        [("first".to_string(), MessageStatus::Complete)]
    );
    let mut said = None;
    while let Ok(ev) = events.try_recv() {
        if let tock::engine::Event::Notice(n) = ev
            && n.kind == tock::engine::NoticeKind::RegenerateFailed
        {
            said = Some(n.text);
        }
    }
    let said = said.expect("a notice says so");
    assert!(
        said.contains("401 Unauthorized") && said.contains("earlier reply is kept"),
        "{said}"
    );
    // Again, and it works: the two replies are versions of one another.
    h.engine.regenerate(conv).unwrap();
    settle().await;
    let (a, b) = (id_of(&h, conv, "first"), id_of(&h, conv, "second"));
    let g = h.engine.alternates(conv).unwrap().of(b).cloned().unwrap();
    assert_eq!((g.versions, g.shown), (vec![a, b], Some(1)));
    let req = h.provider.requests().last().cloned().unwrap();
    assert_eq!(sent_texts(&req), ["user: question"]);
}

#[tokio::test(start_paused = true)]
async fn a_regeneration_waiting_to_retry_can_be_called_off() {
    let h = harness(vec![
        Step::Reply(vec![text("first"), done()]),
        Step::Fail(tock::llm::LlmError::transient("connection refused")),
        Step::Reply(vec![text("second"), done()]),
    ]);
    let conv = new_conv(&h);
    h.engine.start();
    h.engine.send_text(conv, "question").unwrap();
    settle().await;
    let row = h.engine.regenerate(conv).unwrap();
    settle().await;
    // Waiting to retry: the row is there for the chat, the reply put aside.
    let waiting = h.engine.store().regeneration(conv).unwrap().unwrap();
    assert_eq!(waiting.id, row);
    assert_eq!(waiting.status, tock::store::Status::Pending);
    assert!(waiting.next_attempt_at.is_some(), "in back-off");
    assert_eq!(
        replies(&h, conv),
        [("first".to_string(), MessageStatus::Superseded)]
    );
    assert!(h.engine.cancel_regeneration(conv).unwrap());
    assert_eq!(
        h.engine.store().item(row).unwrap().unwrap().status,
        tock::store::Status::Canceled
    );
    assert_eq!(h.engine.store().regeneration(conv).unwrap(), None);
    assert_eq!(
        replies(&h, conv),
        [("first".to_string(), MessageStatus::Complete)]
    );
    // Nothing waits now; and the next Ctrl+R works as usual.
    assert!(!h.engine.cancel_regeneration(conv).unwrap());
    h.engine.regenerate(conv).unwrap();
    settle().await;
    let (a, b) = (id_of(&h, conv, "first"), id_of(&h, conv, "second"));
    let g = h.engine.alternates(conv).unwrap().of(b).cloned().unwrap();
    assert_eq!((g.versions, g.shown), (vec![a, b], Some(1)));
}
