//! `tock search`, `tock fork` and the fuller `tock show --json`, run as the
//! real binary on a temporary database.

mod support;

use std::time::Duration;

use serde_json::Value;
use support::{MockServer, Reply, Tock, wait_until};
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
    // No words at all: nothing is looked for, and it says so.
    for nothing in ["", "*", "  \" "] {
        let o = t.run(&["search", "--", nothing]);
        assert!(o.status.success(), "{nothing:?}");
        assert!(
            o.stderr.contains("nothing to search for"),
            "{nothing:?}: {}",
            o.stderr
        );
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

/// A fork cut between a tool call and its result leaves the call out, and
/// says so: on stderr (stdout keeps the id alone) and in the JSON.
#[test]
fn a_fork_cut_before_a_calls_result_says_it_left_the_call_out() {
    let t = Tock::new();
    let (_c, [_q, _old, a]) = zoo(&t);
    rusqlite::Connection::open(&t.db)
        .unwrap()
        .execute(
            r#"UPDATE messages SET tool_calls_json = '[{"id":"call_1","name":"zoo__measure","arguments":"{}"}]' WHERE id = ?1"#,
            [a],
        )
        .unwrap();
    let o = t.run(&["fork", "Zoo"]);
    assert!(o.status.success(), "{}", o.stderr);
    assert!(o.stdout.trim().parse::<i64>().is_ok(), "{}", o.stdout);
    assert_eq!(
        o.stderr.trim(),
        "the tool call zoo__measure was left out of the fork: it has no result up to there"
    );
    let v = t.json(&["fork", "Zoo", "--json"]);
    assert_eq!(
        v["tool_calls_left_out"],
        serde_json::json!(["zoo__measure"])
    );
    let plain = t.json(&["fork", &format!("#{}", v["id"]), "--json"]);
    assert_eq!(plain["tool_calls_left_out"], serde_json::json!([]));
}

#[test]
fn show_json_has_usage_cost_context_and_attachments() {
    let server = MockServer::start();
    server.push(Reply::text("one two three"));
    let t = Tock::with_openai(&server.base_url());
    t.write_config(&format!(
        "default_model = \"mini\"\n[models.mini]\nprovider = \"openai\"\nmodel = \"gpt-4o-mini\"\n\
         base_url = \"{}\"\napi_key_env = \"OPENAI_API_KEY\"\n\
         price_in = 2.0\nprice_out = 10.0\nprice_cached = 1.0\ncontext_tokens = 1000\n",
        server.base_url()
    ));
    t.send(&["--new", "Costs", "count to three"]);
    let mut d = t.spawn_daemon();
    let shown = wait_until(Duration::from_secs(15), "a complete reply", || {
        let v = t.show("Costs");
        let done = v["messages"]
            .as_array()
            .is_some_and(|m| m.len() == 2 && m[1]["status"] == "complete");
        done.then_some(v)
    });
    d.signal(libc::SIGTERM);
    assert!(d.wait_timeout(Duration::from_secs(3)).is_some());
    let req = &server.requests()[0];
    assert_eq!(req.body["stream_options"]["include_usage"], true);

    // The mock counts 10 tokens per prompt message (system + user), one per
    // chunk of the reply ("one", " two", " three"), 4 cached.
    let msgs = shown["messages"].as_array().unwrap();
    assert!(msgs[0]["usage"].is_null(), "{:#}", msgs[0]);
    assert_eq!(msgs[0]["attachments"], serde_json::json!([]));
    let u = &msgs[1]["usage"];
    assert_eq!(u["prompt_tokens"], 20);
    assert_eq!(u["completion_tokens"], 3);
    assert_eq!(u["cached_tokens"], 4);
    // 16 × 2.0 + 4 × 1.0 + 3 × 10.0 per million.
    let cost = u["cost"].as_f64().unwrap();
    assert!((cost - 66e-6).abs() < 1e-12, "{cost}");
    let total = &shown["usage"];
    assert_eq!(total["prompt_tokens"], 20);
    assert_eq!(total["completion_tokens"], 3);
    assert_eq!(total["context_used"], 23);
    assert_eq!(total["context_tokens"], 1000);

    let text = t.ok(&["show", "Costs"]);
    assert!(
        text.contains("[20 tokens in (4 cached), 3 out, cost 0.0001]"),
        "{text}"
    );

    // Attachments as stored with a message: name, type, size.
    let s = Store::open(&t.db).unwrap();
    let c = shown["id"].as_i64().unwrap();
    let parts = serde_json::json!([
        {"type": "image", "name": "cat.png", "mime": "image/png", "data_base64": "iVBORw0KGgo="},
        {"type": "text", "name": "notes.md", "content": "héllo"},
    ])
    .to_string();
    s.insert_message(
        c,
        &NewMessage {
            role: Some(Role::User),
            content: "see these",
            parts_json: Some(&parts),
            ..Default::default()
        },
        3,
    )
    .unwrap();
    let shown = t.show("Costs");
    assert_eq!(
        shown["messages"][2]["attachments"],
        serde_json::json!([
            {"name": "cat.png", "mime": "image/png", "bytes": 8},
            {"name": "notes.md", "mime": "text/plain", "bytes": 6},
        ])
    );
}

/// `tock show` gives an attachment's size rounded as the chat does
/// (`files::human_size`: 8 B, 1.5 KB), where it gave "8 bytes"; the JSON
/// keeps the exact count.
#[test]
fn show_gives_attachment_sizes_as_the_chat_does() {
    let t = Tock::new();
    t.send(&["--new", "Sizes", "--in", "1h", "later"]);
    let c = t.show("Sizes")["id"].as_i64().unwrap();
    let parts = serde_json::json!([
        {"type": "image", "name": "cat.png", "mime": "image/png", "data_base64": "iVBORw0KGgo="},
        {"type": "text", "name": "big.txt", "content": "x".repeat(1536)},
    ])
    .to_string();
    Store::open(&t.db)
        .unwrap()
        .insert_message(
            c,
            &NewMessage {
                role: Some(Role::User),
                content: "see these",
                parts_json: Some(&parts),
                ..Default::default()
            },
            1,
        )
        .unwrap();
    let text = t.ok(&["show", "Sizes"]);
    assert!(
        text.contains("[attached: cat.png (image/png, 8 B)]"),
        "{text}"
    );
    assert!(
        text.contains("[attached: big.txt (text/plain, 1.5 KB)]"),
        "{text}"
    );
    assert!(!text.contains("bytes"), "{text}");
    let shown = t.show("Sizes");
    let messages = shown["messages"].as_array().unwrap();
    assert_eq!(
        messages.last().unwrap()["attachments"],
        serde_json::json!([
            {"name": "cat.png", "mime": "image/png", "bytes": 8},
            {"name": "big.txt", "mime": "text/plain", "bytes": 1536},
        ])
    );
}

#[test]
fn models_lists_what_the_server_offers() {
    let server = MockServer::start();
    let t = Tock::with_openai(&server.base_url());
    let v = t.json(&["models", "--json"]);
    assert_eq!(v["provider"], "openai");
    let ids: Vec<&str> = v["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["gpt-4o", "gpt-4o-mini"]);
    assert_eq!(t.ok(&["models"]), "gpt-4o\ngpt-4o-mini\n");
    let reqs = server.requests();
    assert!(
        reqs.iter()
            .all(|r| r.method == "GET" && r.path == "/v1/models"),
        "{reqs:?}"
    );
    assert_eq!(
        reqs[0]
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("authorization"))
            .map(|(_, v)| v.as_str()),
        Some(format!("Bearer {}", support::SENTINEL).as_str())
    );
    // Offline, the echo model lists itself.
    let offline = Tock::new();
    assert_eq!(offline.ok(&["models"]), "echo\n");
}

/// A config entry for an OpenAI-compatible server at `base_url`.
fn openai_entry(base_url: &str, model: &str, key: &str) -> tock::config::ModelConfig {
    tock::config::ModelConfig {
        provider: tock::llm::ProviderKind::Openai,
        model: Some(model.into()),
        base_url: Some(base_url.into()),
        api_key: Some(key.into()),
        api_key_env: None,
        api_key_cmd: None,
        vision: false,
        timeout_secs: Some(5),
        stream_timeout_secs: None,
        price_in: None,
        price_out: None,
        price_cached: None,
        context_tokens: None,
    }
}

/// An engine on a new database in `dir` with `cfg`, not watching the file.
fn unwatched_engine(cfg: tock::config::Config, dir: &std::path::Path) -> tock::engine::Engine {
    use std::sync::Arc;
    tock::engine::Engine::new(
        Store::open(&dir.join("t.db")).unwrap(),
        Arc::new(tock::config::ConfigSource::from_config(cfg)),
        Arc::new(tock::engine::SystemClock),
        tock::engine::Options {
            watch_db: false,
            ..tock::engine::Options::default()
        },
    )
}

/// The engine's cache: the list is fetched once in the background, offered
/// for completion, and a model id the server does not list is reported once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_list_is_cached_and_an_unknown_id_is_reported_once() {
    use tock::config::Config;
    use tock::engine::ModelList;

    let server = MockServer::start();
    let entry = |model: &str| openai_entry(&server.base_url(), model, "sk-test");
    let mut cfg = Config::default();
    cfg.models.insert("typo".into(), entry("gpt-4o-mni"));
    cfg.models.insert("good".into(), entry("gpt-4o-mini"));
    let dir = tempfile::tempdir().unwrap();
    let engine = unwatched_engine(cfg, dir.path());
    // Not fetched yet: nothing to say, and the fetch starts.
    assert_eq!(engine.unknown_model("typo"), None);
    let list = wait_until(Duration::from_secs(10), "the model list", || {
        match engine.cached_models(Some("typo")) {
            ModelList::Listed(l) => Some(l),
            _ => None,
        }
    });
    assert_eq!(list.len(), 2);
    let u = engine
        .unknown_model("typo")
        .expect("gpt-4o-mni is not listed");
    assert_eq!(u.name, "gpt-4o-mni");
    assert_eq!(u.provider, "openai");
    assert_eq!(u.suggestions[0], "gpt-4o-mini");
    assert_eq!(engine.unknown_model("typo"), None, "reported once");
    assert_eq!(engine.unknown_model("good"), None);
    let names = engine.model_candidates(Some("good"));
    for n in ["good", "typo", "echo", "gpt-4o", "gpt-4o-mini"] {
        assert!(names.contains(&n.to_string()), "{names:?}");
    }
    // Both entries share one endpoint: one fetch served every call.
    let fetched = engine.fetch_models(Some("good")).await.unwrap();
    assert_eq!(fetched, list);
    assert_eq!(server.requests().len(), 1);
}

/// Completion offers the ids another entry's server lists as `ENTRY/ID`
/// (Tab after `/model claude/cl` completed nothing), and a list that
/// could not be read says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_entries_models_are_offered_as_entry_slash_id() {
    use tock::config::Config;
    use tock::engine::ModelList;

    let server = MockServer::start();
    let mut cfg = Config::default();
    cfg.models.insert(
        "here".into(),
        openai_entry(&server.base_url(), "gpt-4o", "sk-test"),
    );
    cfg.models.insert(
        "there".into(),
        openai_entry(&format!("{}/other", server.base_url()), "gpt-4o", "sk-test"),
    );
    // Nothing listens there: its list fails.
    cfg.models.insert(
        "gone".into(),
        openai_entry("http://127.0.0.1:9/v1", "x", "sk-test"),
    );
    let dir = tempfile::tempdir().unwrap();
    let engine = unwatched_engine(cfg, dir.path());
    engine.model_candidates(Some("here"));
    let names = wait_until(Duration::from_secs(10), "the other list", || {
        let names = engine.model_candidates(Some("here"));
        names
            .contains(&"there/gpt-4o-mini".to_string())
            .then_some(names)
    });
    assert!(names.contains(&"gpt-4o-mini".to_string()), "{names:?}");
    assert!(
        !names.contains(&"here/gpt-4o-mini".to_string()),
        "the current entry's ids are offered bare: {names:?}"
    );
    let why = wait_until(Duration::from_secs(10), "the failed list", || match engine
        .cached_models(Some("gone"))
    {
        ModelList::Failed(why) => Some(why),
        _ => None,
    });
    assert!(!why.is_empty());
}

/// An image for a model without vision is refused before anything is read.
#[test]
fn an_image_is_refused_for_a_model_without_vision() {
    use std::sync::Arc;
    use tock::config::{Config, ConfigSource, ModelConfig};
    use tock::engine::{Engine, Options, SystemClock};

    let mut cfg = Config::default();
    for (name, vision) in [("text-only", false), ("sees", true)] {
        cfg.models.insert(
            name.into(),
            ModelConfig {
                provider: tock::llm::ProviderKind::Ollama,
                model: Some("llama3.2".into()),
                base_url: Some("http://127.0.0.1:9".into()),
                api_key: None,
                api_key_env: None,
                api_key_cmd: None,
                vision,
                timeout_secs: None,
                stream_timeout_secs: None,
                price_in: None,
                price_out: None,
                price_cached: None,
                context_tokens: None,
            },
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::new(
        Store::open(&dir.path().join("t.db")).unwrap(),
        Arc::new(ConfigSource::from_config(cfg)),
        Arc::new(SystemClock),
        Options::default(),
    );
    // A missing file is left to the read, which says it is missing.
    let img = dir.path().join("Cat.PNG");
    assert!(engine.check_attachment(Some("text-only"), &img).is_ok());
    // The refusal comes from the name alone: nothing is read (the file is
    // not even an image).
    std::fs::write(&img, b"not read").unwrap();
    let e = engine
        .check_attachment(Some("text-only"), &img)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("Cat.PNG is an image") && e.contains("text-only"),
        "{e}"
    );
    assert!(engine.check_attachment(Some("sees"), &img).is_ok());
    assert!(
        engine
            .check_attachment(Some("text-only"), &dir.path().join("notes.md"))
            .is_ok()
    );
    assert!(engine.check_attachment(Some("echo"), &img).is_ok());

    let c = engine.create_conversation(Some("c"), "user").unwrap();
    engine.set_conversation_model(c, Some("text-only")).unwrap();
    std::fs::write(&img, b"\x89PNG\r\n\x1a\n").unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let e = rt
        .block_on(engine.read_attachment_for(c, img.clone(), 1 << 20))
        .unwrap_err();
    assert!(e.to_string().contains("does not take images"), "{e}");
    engine.set_conversation_model(c, Some("sees")).unwrap();
    let part = rt
        .block_on(engine.read_attachment_for(c, img, 1 << 20))
        .unwrap();
    assert!(matches!(part, tock::engine::Part::Image { ref mime, .. } if mime == "image/png"));
}

/// A model id a configured entry's server lists is usable: named
/// `ENTRY/ID` (as `/model` and `/with` name an id that completion offered),
/// it is asked of that entry's server with the entry's key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_model_of_a_configured_server_is_named_entry_slash_id() {
    use tock::config::Config;
    use tock::engine::ModelList;

    let server = MockServer::start();
    let mut cfg = Config::default();
    cfg.models.insert(
        "x".into(),
        openai_entry(&server.base_url(), "gpt-4o", "sk-entry-x"),
    );
    cfg.default_model = Some("x".into());
    let dir = tempfile::tempdir().unwrap();
    let engine = unwatched_engine(cfg, dir.path());
    let config = engine.config();
    // Before: "not in the config", with no way named to reach it.
    let err = config.describe(Some("gpt-4o-mini")).unwrap_err();
    assert!(err.contains("named ENTRY/ID, e.g. x/ID"), "{err}");
    let err = config.describe(Some("x/")).unwrap_err();
    assert!(
        err.starts_with("\"x/\" names no model: write x/ID"),
        "{err}"
    );
    // ENTRY/ID resolves to the entry's server, key and provider.
    let r = config.resolve(Some("x/gpt-4o-mini")).unwrap();
    assert_eq!(
        (r.name.as_str(), r.model.as_str()),
        ("x/gpt-4o-mini", "gpt-4o-mini")
    );
    assert_eq!(r.base_url, server.base_url());
    assert_eq!(
        config.describe(Some("x/gpt-4o-mini")).unwrap(),
        ("x/gpt-4o-mini".to_string(), "openai")
    );
    // Ids may hold slashes; an entry with nothing after it leads nowhere.
    assert_eq!(
        config.resolve(Some("x/meta-llama/Llama-3")).unwrap().model,
        "meta-llama/Llama-3"
    );
    assert!(config.describe(Some("x/")).is_err());
    assert!(config.describe(Some("nope/gpt-4o")).is_err());

    // A bare id the current model's server lists becomes ENTRY/ID once
    // the list is cached; one it does not list stays as typed.
    wait_until(Duration::from_secs(10), "the model list", || {
        matches!(engine.cached_models(Some("x")), ModelList::Listed(_)).then_some(())
    });
    assert_eq!(
        engine.model_name_for("gpt-4o-mini", Some("x")),
        "x/gpt-4o-mini"
    );
    assert_eq!(engine.model_name_for("gpt-4o-mini", None), "x/gpt-4o-mini");
    assert_eq!(engine.model_name_for("x", None), "x");
    assert_eq!(engine.model_name_for("gpt-5", None), "gpt-5");

    // Sent with it: the request names the id, with the entry's key.
    let conv = engine
        .store()
        .create_conversation(Some("Ids"), "user", support::now_ms())
        .unwrap();
    engine
        .set_conversation_model(conv, Some("x/gpt-4o-mini"))
        .unwrap();
    let _scheduler = engine.start();
    server.push(Reply::text("hello from mini"));
    engine.send_text(conv, "hi").unwrap();
    let reqs = wait_until(Duration::from_secs(10), "the chat request", || {
        let r: Vec<_> = server
            .requests()
            .into_iter()
            .filter(|r| r.method == "POST")
            .collect();
        (!r.is_empty()).then_some(r)
    });
    assert_eq!(reqs[0].body["model"], "gpt-4o-mini");
    assert_eq!(reqs[0].header("authorization"), Some("Bearer sk-entry-x"));
}

/// The CLI takes `--model ENTRY/ID` too, and says how to name an id it
/// cannot find.
#[test]
fn the_cli_takes_entry_slash_id() {
    let server = MockServer::start();
    let t = Tock::new();
    t.write_config(&format!(
        "default_model = \"x\"\n[models.x]\nprovider = \"openai\"\nmodel = \"gpt-4o\"\nbase_url = \"{}\"\napi_key = \"sk-test\"\n",
        server.base_url()
    ));
    let ids = t.ok(&["--model", "x/gpt-4o-mini", "models"]);
    assert_eq!(ids, "gpt-4o\ngpt-4o-mini\n");
    let status = t.ok(&["--model", "x/gpt-4o-mini", "status"]);
    assert!(status.contains("x/gpt-4o-mini"), "{status}");
    let status = t.ok(&["--model", "gpt-4o-mini", "status"]);
    assert!(
        status.contains("\nmodel: unknown model \"gpt-4o-mini\"") && status.contains("e.g. x/ID"),
        "{status}"
    );
    // A send with a model nothing resolves is refused before anything is
    // stored (it exited 0 with an id, and the message failed later).
    let out = t.run(&["--model", "gpt-4o-mini", "send", "--new", "typo", "hi"]);
    assert!(!out.status.success(), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    assert!(
        out.stderr.contains("unknown model \"gpt-4o-mini\""),
        "{out:?}"
    );
    assert!(
        t.ok(&["list", "--all"])
            .starts_with("nothing scheduled or pending")
    );
    assert!(!t.ok(&["conversations"]).contains("typo"));
    // With a model that resolves it goes as before.
    let id = t.send(&["--new", "ok", "hi"]);
    assert!(id > 0);
    let out = t.run(&["--model", "x/gpt-4o-mini", "send", "--conv", "ok", "again"]);
    assert!(out.status.success(), "{out:?}");
}

/// What a reasoning model thought is kept with its reply: `tock show`
/// quotes it above the reply (made safe), `--json` gives it as
/// `reasoning`, and a fork carries it over with the reply.
#[test]
fn show_and_fork_keep_what_a_reasoning_model_thought() {
    let server = MockServer::start();
    server.push(Reply::Reasoned {
        reasoning: vec![
            "Weigh the two.\n\n".into(),
            "The \x1b[31msecond\x1b[0m wins.".into(),
        ],
        text: "Take the second.".into(),
    });
    let t = Tock::with_openai(&server.base_url());
    assert_eq!(
        t.ok(&["ask", "--new", "Pick", "Which one?"]),
        "Take the second.\n"
    );
    let shown = t.ok(&["show", "Pick"]);
    assert!(
        shown.contains(
            "> **Thought** (41 characters)\n>\n> Weigh the two.\n>\n> The ␛[31msecond␛[0m wins.\n\nTake the second."
        ),
        "{shown}"
    );
    let v = t.show("Pick");
    let msgs = v["messages"].as_array().unwrap();
    assert_eq!(msgs[0]["reasoning"], Value::Null, "the question has none");
    assert_eq!(
        msgs[1]["reasoning"],
        "Weigh the two.\n\nThe \x1b[31msecond\x1b[0m wins."
    );
    let fork = t.json(&["fork", "Pick", "--json"])["id"].as_i64().unwrap();
    let forked = t.show(&format!("#{fork}"));
    assert_eq!(forked["messages"][1]["reasoning"], msgs[1]["reasoning"]);
}

/// A reasoning model served without a reasoning parser (llama.cpp, vLLM)
/// thinks in its text, in a leading `<think>` block: that is its
/// reasoning, kept as such, and the answer is what follows it.
#[test]
fn a_think_block_opening_the_text_is_reasoning_not_the_answer() {
    let server = MockServer::start();
    server.push(Reply::Stream {
        chunks: vec![
            "<thi".into(),
            "nk>Weigh it.\n</th".into(),
            "ink>\n\n".into(),
            "The answer.".into(),
        ],
        gap: Duration::ZERO,
        tool_calls: Vec::new(),
    });
    let t = Tock::with_openai(&server.base_url());
    assert_eq!(t.ok(&["ask", "--new", "Tags", "Which?"]), "The answer.\n");
    let v = t.show("Tags");
    assert_eq!(v["messages"][1]["content"], "The answer.");
    assert_eq!(v["messages"][1]["reasoning"], "Weigh it.\n");
}
