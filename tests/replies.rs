//! Replies that fail after the provider accepted the request: the engine
//! with the real providers against a local server speaking each wire format
//! (inside the test's runtime, so tokio's paused clock runs the server's
//! pauses and the engine's timers alike: minutes of model behaviour take
//! milliseconds), plus the scripted provider for the engine's own rules.

mod common;

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use tock::config::{Config, ConfigSource, ModelConfig};
use tock::engine::{Engine, Event, ManualClock, NoticeKind};
use tock::llm::{ChatMessage, LlmError, ProviderKind};
use tock::store::{Kind, MessageStatus, NewItem, Role, Status, Store};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

// ------------------------------------------------------------ the server --

#[derive(Clone)]
enum W {
    /// Bytes as they are.
    Raw(Vec<u8>),
    /// Wait (tokio time: instant under the paused clock).
    Pause(u64),
}

type Script = Vec<W>;

struct Server {
    base: String,
    requests: Arc<Mutex<Vec<Value>>>,
}

impl Server {
    /// Each connection gets the next script; when they run out, `fallback`.
    async fn start(scripts: Vec<Script>, fallback: impl Fn() -> Script + Send + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let requests: Arc<Mutex<Vec<Value>>> = Arc::default();
        let queue = Arc::new(Mutex::new(VecDeque::from(scripts)));
        let recorded = requests.clone();
        tokio::spawn(async move {
            loop {
                let Ok((mut sock, _)) = listener.accept().await else {
                    return;
                };
                let Some(body) = read_body(&mut sock).await else {
                    continue;
                };
                recorded
                    .lock()
                    .unwrap()
                    .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
                let script = queue.lock().unwrap().pop_front().unwrap_or_else(&fallback);
                tokio::spawn(async move {
                    for w in script {
                        match w {
                            W::Raw(b) => {
                                if sock.write_all(&b).await.is_err() {
                                    return;
                                }
                                let _ = sock.flush().await;
                            }
                            W::Pause(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
                        }
                    }
                    // Dropping the socket ends the response wherever the script stopped.
                });
            }
        });
        Server { base, requests }
    }

    fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
}

async fn read_body(sock: &mut tokio::net::TcpStream) -> Option<Vec<u8>> {
    Some(common::read_http_request(sock).await?.body)
}

const SSE: &str = "text/event-stream";

/// Response head; chunked framing so a body can be cut anywhere.
fn head(ctype: &str) -> W {
    W::Raw(
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        )
        .into_bytes(),
    )
}

fn chunk(data: &str) -> W {
    W::Raw(format!("{:x}\r\n{data}\r\n", data.len()).into_bytes())
}

fn end_body() -> W {
    W::Raw(b"0\r\n\r\n".to_vec())
}

fn oa(delta: Value, finish: Option<&str>) -> String {
    let ev = json!({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {ev}\n\n")
}

fn oa_text(t: &str) -> String {
    oa(json!({"content": t}), None)
}

/// The last chunk OpenAI sends with `stream_options.include_usage`: no
/// choices, the counts of the whole reply.
fn oa_usage(prompt: u64, completion: u64, cached: u64) -> String {
    let ev = json!({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                    "choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                    "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
                    "completion_tokens_details": {"reasoning_tokens": 0}}});
    format!("data: {ev}\n\n")
}

/// A whole OpenAI reply, with its usage chunk.
fn oa_reply(t: &str) -> Script {
    vec![
        head(SSE),
        chunk(&oa(json!({"role": "assistant"}), None)),
        chunk(&oa_text(t)),
        chunk(&oa(json!({}), Some("stop"))),
        chunk(&oa_usage(120, 7, 100)),
        chunk("data: [DONE]\n\n"),
        end_body(),
    ]
}

/// An OpenAI reply that is only a tool call.
fn oa_tool_call(id: &str, name: &str, args: &str) -> Script {
    vec![
        head(SSE),
        chunk(&oa(
            json!({"role": "assistant", "tool_calls": [{"index": 0, "id": id, "type": "function",
                    "function": {"name": name, "arguments": args}}]}),
            None,
        )),
        chunk(&oa(json!({}), Some("tool_calls"))),
        chunk("data: [DONE]\n\n"),
        end_body(),
    ]
}

fn engine_for(kind: ProviderKind, base: &str, dir: &tempfile::TempDir, cfg: Config) -> Engine {
    engine_for_model(kind, base, dir, cfg, None)
}

fn engine_for_model(
    kind: ProviderKind,
    base: &str,
    dir: &tempfile::TempDir,
    cfg: Config,
    stream_timeout_secs: Option<u64>,
) -> Engine {
    let base_url = match kind {
        ProviderKind::Openai => format!("{base}/v1"),
        _ => base.to_string(),
    };
    let mut models = BTreeMap::new();
    models.insert(
        "m".to_string(),
        ModelConfig {
            provider: kind,
            model: Some("test-model".into()),
            base_url: Some(base_url),
            api_key: Some("sk-test-key".into()),
            api_key_env: None,
            api_key_cmd: None,
            vision: false,
            timeout_secs: None,
            stream_timeout_secs,
            price_in: None,
            price_out: None,
            price_cached: None,
            context_tokens: None,
        },
    );
    let cfg = Config {
        default_model: Some("m".into()),
        models,
        ..cfg
    };
    let store = Store::open(&dir.path().join("tock.db")).unwrap();
    Engine::new(
        store,
        Arc::new(ConfigSource::from_config(cfg)),
        Arc::new(ManualClock::new(T0)),
        options(),
    )
}

fn conv(e: &Engine) -> i64 {
    e.store()
        .create_conversation(Some("c"), "user", e.now_ms())
        .unwrap()
}

/// (role, status, content) of each message.
fn history(e: &Engine, conv: i64) -> Vec<(Role, MessageStatus, String)> {
    e.store()
        .messages(conv)
        .unwrap()
        .into_iter()
        .map(|m| (m.role, m.status, m.content))
        .collect()
}

/// (role, text) of each message in a recorded OpenAI request body.
fn wire_messages(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|m| {
                    (
                        m["role"].as_str().unwrap_or("").to_string(),
                        m["content"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Run until the engine has nothing left to do for `secs` of (paused) time.
async fn run_for(secs: u64) {
    for _ in 0..secs {
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    settle().await;
}

/// The request after a cut carries the user message once and no partial text.
fn assert_clean_retry(req: &Value, user: &str, partial: &str) {
    let msgs = wire_messages(req);
    assert_eq!(
        msgs.iter()
            .filter(|(r, t)| r == "user" && t == user)
            .count(),
        1,
        "the user message must be sent exactly once: {msgs:?}"
    );
    assert!(
        !msgs
            .iter()
            .any(|(r, t)| r == "assistant" && !partial.is_empty() && t.contains(partial)),
        "a partial reply was sent back to the model: {msgs:?}"
    );
}

// ----------------------------------------- post-acceptance faults, on the wire --

/// One fault after acceptance, then a good reply: generated again after the
/// back-off, the partial kept (interrupted, with the reason), the item sent.
async fn fault_then_ok(fault: Script, partial: &str, reason: &str) {
    fault_then_ok_after(fault, 0, partial, reason).await
}

/// [`fault_then_ok`] for a fault that takes `secs` to show.
async fn fault_then_ok_after(fault: Script, secs: u64, partial: &str, reason: &str) {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(vec![fault, oa_reply("Complete answer.")], || {
        oa_reply("unexpected")
    })
    .await;
    let e = engine_for(ProviderKind::Openai, &server.base, &dir, Config::default());
    let mut events = e.subscribe();
    let c = conv(&e);
    e.start();
    let id = e.send_text(c, "question").unwrap();
    settle().await;
    run_for(secs).await;
    let it = e.store().item(id).unwrap().unwrap();
    assert_eq!(
        it.status,
        Status::Pending,
        "a transient failure after acceptance is retried: {it:?}"
    );
    assert!(it.accepted() && it.next_attempt_at.is_some());
    let h = history(&e, c);
    assert_eq!(h.len(), 2, "{h:?}");
    assert_eq!(h[1].0, Role::Assistant);
    assert_eq!(
        (h[1].1, h[1].2.as_str()),
        (MessageStatus::Interrupted, partial)
    );
    let err = e.store().messages(c).unwrap()[1].error.clone().unwrap();
    assert!(err.contains(reason), "{err:?} should contain {reason:?}");
    // The notice says when, as a time that stays true once read (it stays in
    // the status bar and the history): not "in 4s".
    let mut notices = Vec::new();
    while let Ok(ev) = events.try_recv() {
        if let Event::Notice(n) = ev {
            notices.push(n.text);
        }
    }
    let said = notices
        .iter()
        .find(|n| n.contains("generating it again"))
        .unwrap_or_else(|| panic!("{notices:?}"));
    let at = said
        .rsplit("generating it again at ")
        .next()
        .unwrap_or_default();
    assert!(
        at.len() == 8 && at.chars().filter(|c| *c == ':').count() == 2,
        "{said}"
    );
    // Back-off (5 s for the first retry), then the reply is generated again.
    run_for(6).await;
    assert_eq!(e.store().item(id).unwrap().unwrap().status, Status::Sent);
    let h = history(&e, c);
    assert_eq!(
        h.iter().map(|m| (m.0, m.1)).collect::<Vec<_>>(),
        vec![
            (Role::User, MessageStatus::Complete),
            (Role::Assistant, MessageStatus::Interrupted),
            (Role::Assistant, MessageStatus::Complete)
        ]
    );
    assert_eq!(h[2].2, "Complete answer.");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "one request per attempt");
    assert_clean_retry(&reqs[1], "question", partial);
}

#[tokio::test(start_paused = true)]
async fn stream_cut_after_acceptance_is_generated_again() {
    fault_then_ok(
        vec![
            head(SSE),
            chunk(&oa(json!({"role": "assistant"}), None)),
            chunk(&oa_text("This reply will ")),
        ],
        "This reply will ",
        "connection lost",
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn error_event_mid_stream_is_generated_again() {
    fault_then_ok(
        vec![
            head(SSE),
            chunk(&oa_text("before ")),
            chunk("data: {\"error\":{\"message\":\"model overloaded mid-stream\",\"type\":\"server_error\"}}\n\n"),
            end_body(),
        ],
        "before ",
        "model overloaded",
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn empty_200_is_generated_again() {
    fault_then_ok(vec![head(SSE), end_body()], "", "empty response").await;
}

/// A stream that ends as meant with no word and no call in it (a model that
/// answered nothing, or only spaces) is no answer: generated again.
#[tokio::test(start_paused = true)]
async fn an_answer_with_nothing_in_it_is_generated_again() {
    fault_then_ok(
        vec![
            head(SSE),
            chunk(&oa(json!({"role": "assistant"}), None)),
            chunk(&oa_text(" \n")),
            chunk(&oa(json!({}), Some("stop"))),
            chunk("data: [DONE]\n\n"),
            end_body(),
        ],
        " \n",
        "the answer was empty",
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn html_200_is_generated_again() {
    fault_then_ok(
        vec![
            head("text/html"),
            chunk("<html><body>Bad gateway</body></html>"),
            end_body(),
        ],
        "",
        // Said what it was ("stream ended early" hid it).
        "the server answered text/html, not a stream",
    )
    .await;
}

/// A JSON answer where a stream was asked for (streaming off at a proxy)
/// is named as such, and generated again.
#[tokio::test(start_paused = true)]
async fn a_json_200_is_named_and_generated_again() {
    fault_then_ok(
        vec![
            head("application/json; charset=utf-8"),
            chunk(r#"{"choices":[{"message":{"role":"assistant","content":"whole"}}]}"#),
            end_body(),
        ],
        "",
        "the server answered application/json, not a stream",
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn body_without_done_is_generated_again() {
    fault_then_ok(
        vec![head(SSE), chunk(&oa_text("half")), end_body()],
        "half",
        "stream ended early",
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn stall_mid_stream_is_generated_again() {
    // Headers and some text, then silence: the reply's 120 s timeout.
    fault_then_ok_after(
        vec![
            head(SSE),
            chunk(&oa_text("I will stall now")),
            W::Pause(3_600_000),
        ],
        120,
        "I will stall now",
        "for 120s",
    )
    .await;
}

/// A model given longer (`stream_timeout_secs`, for one that reads a long
/// prompt silently) is waited for that long on the wire too: it was cut at
/// 90 s whatever the setting.
#[tokio::test(start_paused = true)]
async fn a_silent_stream_is_waited_for_as_long_as_the_models_stream_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let silent = vec![
        head(SSE),
        W::Pause(250_000),
        chunk(&oa_text("Thought long.")),
        chunk(&oa(json!({}), Some("stop"))),
        chunk("data: [DONE]\n\n"),
        end_body(),
    ];
    let server = Server::start(vec![silent], || oa_reply("unexpected")).await;
    let e = engine_for_model(
        ProviderKind::Openai,
        &server.base,
        &dir,
        Config::default(),
        Some(300),
    );
    let c = conv(&e);
    e.start();
    e.send_text(c, "a long prompt").unwrap();
    settle().await;
    run_for(260).await;
    let h = history(&e, c);
    assert_eq!(h.len(), 2, "{h:?}");
    assert_eq!(
        (h[1].1, h[1].2.as_str()),
        (MessageStatus::Complete, "Thought long.")
    );
    assert_eq!(server.requests().len(), 1, "not cut and asked again");
}

/// A reasoning model thinks for five minutes before it answers, a thought
/// a minute: it is working, not silent, and is not cut at the 120 s
/// without news (and asked again, to think again). The front ends hear how
/// much it has reasoned; the reasoning is in no message.
#[tokio::test(start_paused = true)]
async fn a_model_that_reasons_for_minutes_is_not_cut_as_silent() {
    let dir = tempfile::tempdir().unwrap();
    let reasoning = |t: &str| oa(json!({"content": null, "reasoning_content": t}), None);
    let mut thinking = vec![head(SSE)];
    for _ in 0..5 {
        thinking.push(chunk(&reasoning("Let me weigh this. ")));
        thinking.push(W::Pause(60_000));
    }
    thinking.extend([
        chunk(&oa_text("Forty-two.")),
        chunk(&oa(json!({}), Some("stop"))),
        chunk("data: [DONE]\n\n"),
        end_body(),
    ]);
    let server = Server::start(vec![thinking], || oa_reply("unexpected")).await;
    let e = engine_for_model(
        ProviderKind::Openai,
        &server.base,
        &dir,
        Config::default(),
        None,
    );
    let mut events = e.subscribe();
    let c = conv(&e);
    e.start();
    e.send_text(c, "a hard question").unwrap();
    settle().await;
    run_for(130).await;
    // Mid-think: saved on the reply, for other processes' front ends.
    let per = "Let me weigh this. ".len();
    let stored = e.store().reasoning_chars(c).unwrap();
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert!(stored[0].1 >= 2 * per, "{stored:?}");
    run_for(190).await;
    let h = history(&e, c);
    assert_eq!(h.len(), 2, "{h:?}");
    assert_eq!(
        (h[1].1, h[1].2.as_str()),
        (MessageStatus::Complete, "Forty-two.")
    );
    assert_eq!(server.requests().len(), 1, "not cut and asked again");
    let mut told = Vec::new();
    while let Ok(ev) = events.try_recv() {
        if let tock::engine::Event::Thinking { chars, .. } = ev {
            told.push(chars);
        }
    }
    assert_eq!(told, (1..=5).map(|n| n * per).collect::<Vec<_>>());
    // Saved on the reply for other processes while it streamed; the
    // finished reply is not listed as reasoning.
    assert!(e.store().reasoning_chars(c).unwrap().is_empty());
}

/// A reasoning model that calls a tool: its reasoning goes back with that
/// call in the next request, as `reasoning_content` (DeepSeek's and Kimi's
/// thinking modes refuse the turn with a 400 without it); a reply without
/// calls goes back without its reasoning.
#[tokio::test(start_paused = true)]
async fn the_reasoning_before_a_tool_call_is_sent_back_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let thinking_call = vec![
        head(SSE),
        chunk(&oa(
            json!({"role": "assistant", "content": null, "reasoning_content": "I should look first."}),
            None,
        )),
        chunk(&oa(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                    "function": {"name": "list_scheduled", "arguments": "{}"}}]}),
            None,
        )),
        chunk(&oa(json!({}), Some("tool_calls"))),
        chunk("data: [DONE]\n\n"),
        end_body(),
    ];
    let thinking_text = vec![
        head(SSE),
        chunk(&oa(
            json!({"content": null, "reasoning_content": "Nothing is there."}),
            None,
        )),
        chunk(&oa_text("Nothing is scheduled.")),
        chunk(&oa(json!({}), Some("stop"))),
        chunk("data: [DONE]\n\n"),
        end_body(),
    ];
    let server = Server::start(vec![thinking_call, thinking_text], || oa_reply("ok")).await;
    let e = engine_for(ProviderKind::Openai, &server.base, &dir, Config::default());
    let c = conv(&e);
    e.start();
    e.send_text(c, "what is scheduled?").unwrap();
    run_for(5).await;
    e.send_text(c, "thanks").unwrap();
    run_for(5).await;
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3, "{reqs:#?}");
    let assistants = |req: &Value| -> Vec<Value> {
        req["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "assistant")
            .cloned()
            .collect()
    };
    // After the call: the call went back with what led to it.
    let second = assistants(&reqs[1]);
    assert_eq!(second.len(), 1, "{second:#?}");
    assert_eq!(second[0]["reasoning_content"], "I should look first.");
    assert_eq!(
        second[0]["tool_calls"][0]["function"]["name"],
        "list_scheduled"
    );
    // And in every later request; the plain reply's reasoning does not go.
    let third = assistants(&reqs[2]);
    assert_eq!(third.len(), 2, "{third:#?}");
    assert_eq!(third[0]["reasoning_content"], "I should look first.");
    assert!(third[1].get("reasoning_content").is_none(), "{third:#?}");
}

#[tokio::test(start_paused = true)]
async fn anthropic_overloaded_event_mid_stream_is_generated_again() {
    let ev = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
    let start = ev(
        "message_start",
        json!({"type":"message_start","message":{"id":"m1","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}),
    );
    let block = ev(
        "content_block_start",
        json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
    );
    let delta = |t: &str| {
        ev(
            "content_block_delta",
            json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":t}}),
        )
    };
    let finish = [
        ev(
            "content_block_stop",
            json!({"type":"content_block_stop","index":0}),
        ),
        ev(
            "message_delta",
            json!({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}),
        ),
        ev("message_stop", json!({"type":"message_stop"})),
    ]
    .concat();
    let fault = vec![
        head(SSE),
        chunk(&start),
        chunk(&block),
        chunk(&delta("Part")),
        chunk(&ev(
            "error",
            json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}),
        )),
        end_body(),
    ];
    let ok = vec![
        head(SSE),
        chunk(&start),
        chunk(&block),
        chunk(&delta("Whole.")),
        chunk(&finish),
        end_body(),
    ];
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(vec![fault, ok], Vec::new).await;
    let e = engine_for(
        ProviderKind::Anthropic,
        &server.base,
        &dir,
        Config::default(),
    );
    let c = conv(&e);
    e.start();
    let id = e.send_text(c, "q").unwrap();
    run_for(6).await;
    assert_eq!(e.store().item(id).unwrap().unwrap().status, Status::Sent);
    let h = history(&e, c);
    assert_eq!(
        h.iter().map(|m| (m.1, m.2.as_str())).collect::<Vec<_>>()[1..],
        [
            (MessageStatus::Interrupted, "Part"),
            (MessageStatus::Complete, "Whole.")
        ]
    );
    assert_eq!(server.requests().len(), 2);
}

/// A reply the model's length limit ended (`max_tokens`; `length` for the
/// others) is kept complete, and says it was cut short: it looked whole.
#[tokio::test(start_paused = true)]
async fn a_reply_cut_by_the_length_limit_says_so() {
    let ev = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
    let body = [
        ev(
            "message_start",
            json!({"type":"message_start","message":{"id":"m1","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}),
        ),
        ev(
            "content_block_start",
            json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
        ),
        ev(
            "content_block_delta",
            json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"the first half and"}}),
        ),
        ev("content_block_stop", json!({"type":"content_block_stop","index":0})),
        ev(
            "message_delta",
            json!({"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":8192}}),
        ),
        ev("message_stop", json!({"type":"message_stop"})),
    ]
    .concat();
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(vec![vec![head(SSE), chunk(&body), end_body()]], Vec::new).await;
    let e = engine_for(
        ProviderKind::Anthropic,
        &server.base,
        &dir,
        Config::default(),
    );
    let c = conv(&e);
    e.start();
    let id = e.send_text(c, "q").unwrap();
    settle().await;
    assert_eq!(e.store().item(id).unwrap().unwrap().status, Status::Sent);
    let reply = e.store().messages(c).unwrap().pop().unwrap();
    assert_eq!(
        (reply.status, reply.content.as_str()),
        (MessageStatus::Complete, "the first half and")
    );
    assert_eq!(
        reply.error.as_deref(),
        Some("cut short: the reply reached the model's length limit (max_tokens); ask it to go on")
    );
    assert_eq!(server.requests().len(), 1, "not generated again");
}

#[tokio::test(start_paused = true)]
async fn keepalives_alone_end_the_reply_and_free_the_conversation() {
    // `: keep-alive` every 5 s for an hour: the idle timeout never fires,
    // the 120 s progress deadline does.
    let mut forever = vec![head(SSE), chunk(&oa_text("I will "))];
    for _ in 0..720 {
        forever.push(W::Pause(5_000));
        forever.push(chunk(": keep-alive\n\n"));
    }
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(vec![forever, oa_reply("Done now.")], || oa_reply("next")).await;
    let e = engine_for(ProviderKind::Openai, &server.base, &dir, Config::default());
    let c = conv(&e);
    e.start();
    let id = e.send_text(c, "first").unwrap();
    let queued = e.send_text(c, "second").unwrap();
    let mut due = NewItem::new(c, Kind::Message, "scheduled");
    due.due_at = Some(T0 + 30_000);
    let scheduled = e.submit(due).unwrap();
    // Text is saved although no further chunk comes.
    run_for(2).await;
    let partial = e.store().messages(c).unwrap()[1].clone();
    assert_eq!(
        (partial.status, partial.content.as_str()),
        (MessageStatus::Streaming, "I will ")
    );
    run_for(100).await;
    assert_eq!(
        e.store().item(queued).unwrap().unwrap().status,
        Status::Pending,
        "still answering the first"
    );
    run_for(25).await;
    let m = e.store().message(partial.id).unwrap().unwrap();
    assert_eq!(m.status, MessageStatus::Interrupted);
    assert!(
        m.error
            .as_deref()
            .unwrap_or("")
            .contains("nothing new for 120s"),
        "{:?}",
        m.error
    );
    assert_eq!(m.content, "I will ");
    // Retried after its back-off, then the items waiting behind it.
    run_for(10).await;
    for i in [id, queued, scheduled] {
        assert_eq!(e.store().item(i).unwrap().unwrap().status, Status::Sent);
    }
    let users: Vec<String> = history(&e, c)
        .into_iter()
        .filter(|m| m.0 == Role::User)
        .map(|m| m.2)
        .collect();
    assert_eq!(users, vec!["first", "second", "scheduled"]);
    assert_eq!(server.requests().len(), 4);
}

#[tokio::test(start_paused = true)]
async fn a_trickle_ends_at_the_reply_deadline() {
    // One token a minute keeps the progress deadline happy; the overall
    // deadline (here 10 min) ends it.
    let mut trickle = vec![head(SSE)];
    for i in 0..60 {
        trickle.push(chunk(&oa_text(&format!("t{i} "))));
        trickle.push(W::Pause(60_000));
    }
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(vec![trickle], || oa_reply("Fine.")).await;
    let mut cfg = Config::default();
    cfg.turn.max_reply_secs = 600;
    let e = engine_for(ProviderKind::Openai, &server.base, &dir, cfg);
    let c = conv(&e);
    e.start();
    let id = e.send_text(c, "q").unwrap();
    run_for(605).await;
    let h = history(&e, c);
    assert_eq!(h[1].1, MessageStatus::Interrupted, "{h:?}");
    assert!(h[1].2.starts_with("t0 t1 "), "{:?}", h[1].2);
    run_for(10).await;
    assert_eq!(e.store().item(id).unwrap().unwrap().status, Status::Sent);
    assert_eq!(history(&e, c).last().unwrap().2, "Fine.");
}

#[tokio::test(start_paused = true)]
async fn a_model_that_always_calls_a_tool_is_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let n = Arc::new(Mutex::new(0usize));
    let counter = n.clone();
    let server = Server::start(vec![], move || {
        let mut k = counter.lock().unwrap();
        *k += 1;
        oa_tool_call(&format!("call_{k}"), "list_scheduled", "{}")
    })
    .await;
    let e = engine_for(ProviderKind::Openai, &server.base, &dir, Config::default());
    let mut events = e.subscribe();
    let c = conv(&e);
    e.start();
    e.send_text(c, "what is scheduled?").unwrap();
    run_for(60).await;
    // Two identical rounds ran; the third identical call ended the turn.
    assert_eq!(server.requests().len(), 3);
    let msgs = e.store().messages(c).unwrap();
    let note = msgs.last().unwrap();
    assert_eq!(note.role, Role::Notice);
    assert!(note.content.contains("same tool call"), "{}", note.content);
    assert!(!e.store().owes_reply(c).unwrap());
    assert!(!e.is_busy(c));
    let mut noticed = false;
    while let Ok(ev) = events.try_recv() {
        if let Event::Notice(n) = ev {
            noticed |= n.kind == NoticeKind::Failed && n.text.contains("same tool call");
        }
    }
    assert!(noticed, "the user is told why the turn ended");
}

#[tokio::test(start_paused = true)]
async fn tool_rounds_per_turn_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let n = Arc::new(Mutex::new(0usize));
    let counter = n.clone();
    // Different arguments every time: only the round limit stops it.
    let server = Server::start(vec![], move || {
        let mut k = counter.lock().unwrap();
        *k += 1;
        oa_tool_call(
            &format!("call_{k}"),
            "list_scheduled",
            &format!("{{\"page\":{k}}}"),
        )
    })
    .await;
    let mut cfg = Config::default();
    cfg.turn.max_tool_rounds = 5;
    let e = engine_for(ProviderKind::Openai, &server.base, &dir, cfg);
    let c = conv(&e);
    e.start();
    e.send_text(c, "loop").unwrap();
    run_for(60).await;
    // Five rounds ran; the sixth reply's calls were not.
    assert_eq!(server.requests().len(), 6);
    let msgs = e.store().messages(c).unwrap();
    assert!(msgs.last().unwrap().content.contains("limit 5"));
    // Every call has a result, so nothing re-starts the loop after a restart.
    let results = msgs.iter().filter(|m| m.role == Role::Tool).count();
    assert_eq!(results, 6);
    // A new user message starts a new count.
    e.send_text(c, "again").unwrap();
    run_for(60).await;
    assert_eq!(server.requests().len(), 12);
}

// ------------------------------------------------------- the engine's rules --

fn status(h: &Harness, id: i64) -> Status {
    h.engine.store().item(id).unwrap().unwrap().status
}

/// Why pending row `id` waits now, as `tock list` reads it.
fn waiting_reason(h: &Harness, id: i64) -> Option<tock::store::Waiting> {
    h.engine
        .store()
        .waiting(h.engine.now_ms())
        .unwrap()
        .remove(&id)
}

#[tokio::test(start_paused = true)]
async fn permanent_failure_after_acceptance_stops_with_the_reason() {
    let h = harness(vec![Step::Cut(
        vec![text("before ")],
        LlmError::permanent("malformed stream event"),
    )]);
    let c = new_conv(&h);
    h.engine.start();
    let id = h.engine.send_text(c, "q").unwrap();
    run_for(3600).await;
    let it = h.engine.store().item(id).unwrap().unwrap();
    assert_eq!(it.status, Status::Failed);
    assert!(
        it.last_error
            .as_deref()
            .unwrap()
            .contains("malformed stream event")
    );
    assert_eq!(h.provider.count(), 1, "a permanent failure is not retried");
    // `tock retry` generates the reply again; the user message stays single.
    h.engine.retry(id).unwrap();
    settle().await;
    assert_eq!(status(&h, id), Status::Sent);
    let msgs = h.engine.store().messages(c).unwrap();
    assert_eq!(msgs.iter().filter(|m| m.role == Role::User).count(), 1);
    assert_eq!(msgs.last().unwrap().status, MessageStatus::Complete);
}

/// A message the provider refuses (a permanent failure before it entered
/// the conversation) holds what was queued behind it: the follow-up went
/// out first, out of the order it was typed in. Retrying the refused one
/// sends it, then the follow-up.
#[tokio::test(start_paused = true)]
async fn a_refused_message_holds_what_was_queued_behind_it() {
    let ok = |t: &str| Step::Reply(vec![text(t), done()]);
    let h = harness(vec![
        Step::Fail(LlmError::permanent("400 bad request")),
        ok("answer to second"),
        ok("answer to third"),
    ]);
    let c = new_conv(&h);
    let second = h.engine.send_text(c, "second").unwrap();
    let third = h.engine.send_text(c, "third").unwrap();
    h.engine.start();
    run_for(60).await;
    assert_eq!(status(&h, second), Status::Failed);
    assert_eq!(
        status(&h, third),
        Status::Pending,
        "held behind the refused one"
    );
    assert_eq!(
        waiting_reason(&h, third),
        Some(tock::store::Waiting::QueuePaused {
            by: tock::store::PausedBy::FailedMessage { item_id: second }
        })
    );
    // Told so in `tock list` and `tock status`, with the way out.
    let why = waiting_reason(&h, third)
        .unwrap()
        .describe(h.engine.now_ms());
    assert_eq!(
        why,
        format!(
            "queue paused after item #{second} could not be sent (tock retry {second} sends it, then this)"
        )
    );
    h.engine.retry(second).unwrap();
    run_for(60).await;
    assert_eq!(status(&h, second), Status::Sent);
    assert_eq!(status(&h, third), Status::Sent);
    assert_eq!(user_texts(&h, c), vec!["second", "third"]);
}

/// A reply that fails for good leaves its message unanswered in the
/// conversation: what was queued behind it is held (as after a stop), and
/// retrying it once a later message went would answer that one instead, so
/// it is refused with the reason (it doubled a reply to the later message).
#[tokio::test(start_paused = true)]
async fn a_failed_reply_holds_the_queue_and_is_not_retried_once_the_conversation_moved_on() {
    let mut cfg = Config::default();
    cfg.outbox.max_attempts = 2;
    cfg.outbox.backoff_base_secs = 1;
    let cut = || Step::Cut(vec![text("part ")], LlmError::transient("connection reset"));
    let h = harness_with(
        Scripted::new(vec![
            cut(),
            Step::Fail(LlmError::transient("connection refused")),
            Step::Reply(vec![text("answer to the follow-up"), done()]),
            Step::Reply(vec![text("answer to the first"), done()]),
        ]),
        cfg,
    );
    let c = new_conv(&h);
    h.engine.start();
    let first = h.engine.send_text(c, "first question").unwrap();
    let behind = h.engine.send_text(c, "follow-up").unwrap();
    run_for(60).await;
    assert_eq!(status(&h, first), Status::Failed);
    assert_eq!(
        status(&h, behind),
        Status::Pending,
        "held behind the failed reply"
    );
    assert_eq!(
        waiting_reason(&h, behind),
        Some(tock::store::Waiting::QueuePaused {
            by: tock::store::PausedBy::FailedReply { item_id: first }
        })
    );
    assert!(
        h.engine
            .store()
            .conversation(c)
            .unwrap()
            .unwrap()
            .queue_paused_at
            .is_some()
    );
    assert_eq!(h.provider.count(), 2);
    // Resumed by the user: the follow-up goes; the first is then not the
    // last word any more, and its reply is not asked for.
    h.engine.resume_queue(c).unwrap();
    run_for(5).await;
    assert_eq!(status(&h, behind), Status::Sent);
    let e = h.engine.retry(first).unwrap_err().to_string();
    assert!(e.contains("moved on"), "{e}");
    run_for(5).await;
    assert_eq!(h.provider.count(), 3, "nothing more was asked");
    let replies: Vec<String> = h
        .engine
        .store()
        .messages(c)
        .unwrap()
        .into_iter()
        .filter(|m| m.role == Role::Assistant && m.status == MessageStatus::Complete)
        .map(|m| m.content)
        .collect();
    assert_eq!(replies, ["answer to the follow-up"]);
}

/// Retried while it is still the last word, the failed reply is generated
/// and what waited behind it goes after.
#[tokio::test(start_paused = true)]
async fn a_failed_reply_retried_while_last_lets_the_queue_go_after_it() {
    let mut cfg = Config::default();
    cfg.outbox.max_attempts = 1;
    let h = harness_with(
        Scripted::new(vec![
            Step::Cut(vec![text("part ")], LlmError::transient("connection reset")),
            Step::Reply(vec![text("answer to the first"), done()]),
            Step::Reply(vec![text("answer to the follow-up"), done()]),
        ]),
        cfg,
    );
    let c = new_conv(&h);
    h.engine.start();
    let first = h.engine.send_text(c, "first question").unwrap();
    let behind = h.engine.send_text(c, "follow-up").unwrap();
    run_for(30).await;
    assert_eq!(status(&h, first), Status::Failed);
    assert_eq!(status(&h, behind), Status::Pending);
    h.engine.retry(first).unwrap();
    run_for(10).await;
    assert_eq!(
        (status(&h, first), status(&h, behind)),
        (Status::Sent, Status::Sent)
    );
    let texts: Vec<String> = h
        .engine
        .store()
        .messages(c)
        .unwrap()
        .into_iter()
        .filter(|m| m.status == MessageStatus::Complete)
        .map(|m| m.content)
        .collect();
    assert_eq!(
        texts,
        [
            "first question",
            "answer to the first",
            "follow-up",
            "answer to the follow-up"
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn the_attempt_budget_covers_both_sides_of_acceptance() {
    let mut cfg = Config::default();
    cfg.outbox.max_attempts = 3;
    cfg.outbox.backoff_base_secs = 1;
    let cut = || Step::Cut(vec![text("part ")], LlmError::transient("connection reset"));
    let h = harness_with(
        Scripted::new(vec![
            Step::Fail(LlmError::transient("connection refused")),
            cut(),
            cut(),
        ]),
        cfg,
    );
    let c = new_conv(&h);
    h.engine.start();
    let id = h.engine.send_text(c, "q").unwrap();
    run_for(30).await;
    let it = h.engine.store().item(id).unwrap().unwrap();
    assert_eq!(it.status, Status::Failed, "{it:?}");
    assert_eq!(it.attempts, 3);
    assert!(
        it.last_error
            .as_deref()
            .unwrap()
            .contains("(after 3 attempts)"),
        "{:?}",
        it.last_error
    );
    assert_eq!(h.provider.count(), 3);
    // The views collapse the two interrupted attempts to the latest one.
    let msgs = h.engine.store().messages(c).unwrap();
    let collapsed = tock::store::collapse_attempts(&msgs, |_| false);
    assert_eq!(collapsed.hidden.len(), 1);
    assert_eq!(collapsed.earlier.get(&msgs[2].id), Some(&1));
    // Regenerating the conversation retries that item (it leaves the failed list).
    let row = h.engine.regenerate(c).unwrap();
    assert_eq!(row, id);
    settle().await;
    assert_eq!(status(&h, id), Status::Sent);
    let msgs = h.engine.store().messages(c).unwrap();
    assert_eq!(msgs.last().unwrap().content, "ok");
    assert_eq!(msgs.iter().filter(|m| m.role == Role::User).count(), 1);
    for r in h.provider.requests() {
        let users = r
            .messages
            .iter()
            .filter(|m| matches!(m, ChatMessage::User { text, .. } if text == "q"))
            .count();
        assert_eq!(users, 1);
        assert!(
            !r.messages
                .iter()
                .any(|m| matches!(m, ChatMessage::Assistant { text, .. } if text.contains("part")))
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_sent_item_whose_reply_was_stopped_can_be_retried() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let h = harness(vec![Step::Hold(vec![text("half")], gate)]);
    let c = new_conv(&h);
    h.engine.start();
    let id = h.engine.send_text(c, "q").unwrap();
    settle().await;
    assert!(h.engine.stop(c));
    settle().await;
    assert_eq!(status(&h, id), Status::Sent);
    h.engine.retry(id).unwrap();
    settle().await;
    let msgs = h.engine.store().messages(c).unwrap();
    assert_eq!(msgs.last().unwrap().status, MessageStatus::Complete);
    assert_eq!(msgs.iter().filter(|m| m.role == Role::User).count(), 1);
    // Once answered, the item is not retried again.
    assert!(h.engine.retry(id).is_err());
}

/// Retrying an item whose reply is streaming would ask for a second reply
/// to the one message (the second request's context ending in the first);
/// so would retrying one whose reply a tock that died left streaming (the
/// next start asks for it again itself).
#[tokio::test(start_paused = true)]
async fn an_item_whose_reply_streams_is_not_retried() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let h = harness(vec![Step::Hold(vec![text("half")], gate.clone())]);
    let c = new_conv(&h);
    h.engine.start();
    let id = h.engine.send_text(c, "q").unwrap();
    settle().await;
    let err = h.engine.retry(id).unwrap_err().to_string();
    assert!(err.contains("streaming now"), "{err}");
    assert!(err.contains(&format!("tock stop {c}")), "{err}");
    gate.notify_one();
    settle().await;
    let msgs = h.engine.store().messages(c).unwrap();
    assert_eq!(
        msgs.iter().filter(|m| m.role == Role::Assistant).count(),
        1,
        "{msgs:?}"
    );
    assert_eq!(h.provider.requests().len(), 1);

    // Left streaming by a tock that died.
    let dir = tempfile::tempdir().unwrap();
    let (store, _, id) = left_streaming_by_a_dead_tock(&dir);
    let engine = Engine::new(
        store,
        Arc::new(ConfigSource::from_config(Config::default())),
        Arc::new(ManualClock::new(T0 + 1_000)),
        Default::default(),
    );
    let err = engine.retry(id).unwrap_err().to_string();
    assert!(err.contains("the next tock asks for it again"), "{err}");
    assert_eq!(
        engine.store().item(id).unwrap().unwrap().status,
        Status::Sent
    );
}

#[tokio::test(start_paused = true)]
async fn text_is_saved_even_if_no_further_chunk_arrives() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let h = harness(vec![Step::Hold(vec![text("a"), text("b")], gate.clone())]);
    let c = new_conv(&h);
    h.engine.start();
    h.engine.send_text(c, "q").unwrap();
    settle().await;
    // The first text was stored at once; the rest when the save is due,
    // though nothing more arrives.
    let every = tock::engine::Options::default().persist_every;
    tokio::time::sleep(every + Duration::from_millis(200)).await;
    settle().await;
    let m = h.engine.store().messages(c).unwrap()[1].clone();
    assert_eq!(
        (m.status, m.content.as_str()),
        (MessageStatus::Streaming, "ab")
    );
    gate.notify_one();
    settle().await;
}

/// A database in `dir` whose item `id` (in conversation `c`) a tock that
/// died had sent and was streaming the reply of ("partial" so far).
fn left_streaming_by_a_dead_tock(dir: &tempfile::TempDir) -> (Store, i64, i64) {
    let store = Store::open(&dir.path().join("tock.db")).unwrap();
    let c = store.create_conversation(Some("c"), "user", T0).unwrap();
    let id = store
        .enqueue(&NewItem::new(c, Kind::Queued, "question"), T0)
        .unwrap();
    assert!(store.claim(id, "dead", T0).unwrap());
    let item = store.item(id).unwrap().unwrap();
    let reply = store.accept(&item, "dead", "m", T0).unwrap().unwrap();
    store.update_streaming(reply, "partial").unwrap();
    (store, c, id)
}

#[tokio::test(start_paused = true)]
async fn a_crash_mid_reply_regenerates_from_the_item_without_a_new_row() {
    let dir = tempfile::tempdir().unwrap();
    let (store, c, id) = left_streaming_by_a_dead_tock(&dir);
    let rows_before = store.list_items(true).unwrap().len();
    // Long after the grace period: a reply owed is still generated, never expired.
    let h = engine_on(store, Scripted::new(vec![]), Config::default(), dir);
    h.clock.jump(13 * 3_600_000);
    h.engine.start();
    settle().await;
    let it = h.engine.store().item(id).unwrap().unwrap();
    assert_eq!((it.status, it.attempts), (Status::Sent, 1));
    assert_eq!(
        h.engine.store().list_items(true).unwrap().len(),
        rows_before
    );
    let msgs = h.engine.store().messages(c).unwrap();
    assert_eq!(msgs.len(), 3);
    assert_eq!(msgs[1].status, MessageStatus::Interrupted);
    assert_eq!(msgs[2].status, MessageStatus::Complete);
}

#[tokio::test(start_paused = true)]
async fn ollama_stream_cut_after_acceptance_is_generated_again() {
    let line = |t: &str, done: bool| {
        format!(
            "{}\n",
            json!({"model": "m", "message": {"role": "assistant", "content": t}, "done": done})
        )
    };
    let nd = "application/x-ndjson";
    let fault = vec![head(nd), chunk(&line("Par", false))];
    let ok = vec![
        head(nd),
        chunk(&line("Whole.", false)),
        chunk(&line("", true)),
        end_body(),
    ];
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(vec![fault, ok], Vec::new).await;
    let e = engine_for(ProviderKind::Ollama, &server.base, &dir, Config::default());
    let c = conv(&e);
    e.start();
    let id = e.send_text(c, "q").unwrap();
    run_for(6).await;
    assert_eq!(e.store().item(id).unwrap().unwrap().status, Status::Sent);
    let h = history(&e, c);
    assert_eq!(
        h.iter().map(|m| (m.1, m.2.as_str())).collect::<Vec<_>>()[1..],
        [
            (MessageStatus::Interrupted, "Par"),
            (MessageStatus::Complete, "Whole.")
        ]
    );
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_clean_retry(&reqs[1], "q", "Par");
}

#[tokio::test(start_paused = true)]
async fn a_reply_being_generated_again_cannot_be_edited_or_taken_back() {
    let h = harness(vec![Step::Cut(
        vec![text("half")],
        LlmError::transient("connection reset"),
    )]);
    let c = new_conv(&h);
    h.engine.start();
    let id = h.engine.send_text(c, "already sent").unwrap();
    settle().await;
    let it = h.engine.store().item(id).unwrap().unwrap();
    assert!(it.accepted() && it.status == Status::Pending);
    // Its text is in the conversation: changing or retrieving it would send it twice.
    assert!(h.engine.edit(id, "changed").is_err());
    assert!(h.engine.pull_back(id, it.updated_at).is_err());
    run_for(6).await;
    let msgs = h.engine.store().messages(c).unwrap();
    let users: Vec<&str> = msgs
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(users, ["already sent"]);
    assert_eq!(msgs.last().unwrap().status, MessageStatus::Complete);
}

// ------------------------------------------------------------ token usage --

/// The usage stored with each reply of the conversation: (prompt, completion, cached).
fn stored_usage(e: &Engine, conv: i64) -> Vec<(Option<u64>, Option<u64>, Option<u64>)> {
    e.store()
        .conversation_usage(conv)
        .unwrap()
        .into_iter()
        .map(|u| {
            (
                u.usage.prompt_tokens,
                u.usage.completion_tokens,
                u.usage.cached_tokens,
            )
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn openai_usage_is_asked_for_parsed_and_stored() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(vec![oa_reply("Hi.")], Vec::new).await;
    let e = engine_for(ProviderKind::Openai, &server.base, &dir, Config::default());
    let c = conv(&e);
    e.start();
    e.send_text(c, "q").unwrap();
    run_for(2).await;
    assert_eq!(
        server.requests()[0]["stream_options"],
        json!({"include_usage": true})
    );
    assert_eq!(stored_usage(&e, c), [(Some(120), Some(7), Some(100))]);
}

#[tokio::test(start_paused = true)]
async fn anthropic_usage_from_message_start_and_delta_is_stored() {
    let ev = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
    let script = vec![
        head(SSE),
        chunk(&ev(
            "message_start",
            json!({"type":"message_start","message":{"id":"m1","type":"message","role":"assistant","content":[],
                   "model":"m","stop_reason":null,"usage":{"input_tokens":25,"cache_creation_input_tokens":10,
                   "cache_read_input_tokens":2000,"output_tokens":1}}}),
        )),
        chunk(&ev(
            "content_block_start",
            json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
        )),
        chunk(&ev("ping", json!({"type": "ping"}))),
        chunk(&ev(
            "content_block_delta",
            json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello."}}),
        )),
        chunk(&ev(
            "content_block_stop",
            json!({"type":"content_block_stop","index":0}),
        )),
        chunk(&ev(
            "message_delta",
            json!({"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":42}}),
        )),
        chunk(&ev("message_stop", json!({"type":"message_stop"}))),
        end_body(),
    ];
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(vec![script], Vec::new).await;
    let e = engine_for(
        ProviderKind::Anthropic,
        &server.base,
        &dir,
        Config::default(),
    );
    let c = conv(&e);
    e.start();
    e.send_text(c, "q").unwrap();
    run_for(2).await;
    assert_eq!(history(&e, c)[1].2, "Hello.");
    // The whole prompt: uncached input + cache writes + cache reads.
    assert_eq!(stored_usage(&e, c), [(Some(2035), Some(42), Some(2000))]);
}

#[tokio::test(start_paused = true)]
async fn ollama_usage_from_the_done_line_is_stored() {
    let line = |v: Value| format!("{v}\n");
    let script = vec![
        head("application/x-ndjson"),
        chunk(&line(
            json!({"model":"m","created_at":"2026-11-30T00:00:00Z",
                           "message":{"role":"assistant","content":"Hey"},"done":false}),
        )),
        chunk(&line(
            json!({"model":"m","created_at":"2026-11-30T00:00:01Z",
                           "message":{"role":"assistant","content":""},"done":true,"done_reason":"stop",
                           "total_duration":1000,"load_duration":10,"prompt_eval_count":31,
                           "prompt_eval_duration":100,"eval_count":9,"eval_duration":200}),
        )),
        end_body(),
    ];
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(vec![script], Vec::new).await;
    let e = engine_for(ProviderKind::Ollama, &server.base, &dir, Config::default());
    let c = conv(&e);
    e.start();
    e.send_text(c, "q").unwrap();
    run_for(2).await;
    assert_eq!(history(&e, c)[1].2, "Hey");
    assert_eq!(stored_usage(&e, c), [(Some(31), Some(9), None)]);
}

/// A scheduled message that failed for good holds what was typed after it;
/// retried, it goes first, as the strip showed them (its due time is reset
/// to the retry, which sorted it behind the message typed meanwhile).
#[tokio::test(start_paused = true)]
async fn a_retried_scheduled_message_goes_before_what_was_queued_behind_it() {
    let mut cfg = Config::default();
    cfg.outbox.max_attempts = 2;
    cfg.outbox.backoff_base_secs = 4;
    let refused = || Step::Fail(LlmError::transient("connection refused"));
    let ok = |t: &str| Step::Reply(vec![text(t), done()]);
    let h = harness_with(
        Scripted::new(vec![
            refused(),
            refused(),
            ok("to the scheduled one"),
            ok("to the typed one"),
        ]),
        cfg,
    );
    let c = new_conv(&h);
    h.engine.start();
    let mut it = NewItem::new(c, Kind::Message, "scheduled");
    it.due_at = Some(h.engine.now_ms() + 2_000);
    let scheduled = h.engine.submit(it).unwrap();
    run_for(3).await;
    assert_eq!(status(&h, scheduled), Status::Pending, "in its back-off");
    let typed = h.engine.send_text(c, "typed while it retries").unwrap();
    run_for(60).await;
    assert_eq!(status(&h, scheduled), Status::Failed);
    assert_eq!(status(&h, typed), Status::Pending, "held behind it");
    h.engine.retry(scheduled).unwrap();
    run_for(60).await;
    assert_eq!(
        user_texts(&h, c),
        vec!["scheduled", "typed while it retries"]
    );
}

/// An occurrence of a series that failed, once a later occurrence went out,
/// is not sent again by a retry: it would repeat the same text after the
/// newer one (the series skips an occurrence the next one overtook).
#[tokio::test(start_paused = true)]
async fn a_failed_occurrence_overtaken_by_a_later_one_is_not_retried() {
    let ok = |t: &str| Step::Reply(vec![text(t), done()]);
    let h = harness(vec![
        Step::Fail(LlmError::permanent("400 bad request")),
        ok("to the second occurrence"),
    ]);
    let c = new_conv(&h);
    let rule = h.engine.parse_schedule("every minute for 2 times").unwrap();
    let series = h
        .engine
        .create_series(c, Kind::Message, "check the build", &rule)
        .unwrap();
    h.engine.start();
    run_for(150).await;
    let occ = h.engine.store().series_occurrences(series).unwrap();
    assert_eq!(
        occ.iter().map(|o| o.status).collect::<Vec<_>>(),
        vec![Status::Failed, Status::Sent]
    );
    let e = h.engine.retry(occ[0].id).unwrap_err().to_string();
    assert!(e.contains("a later occurrence"), "{e}");
    // Pruning every finished row keeps the newest sent occurrence, which
    // is what says the failed one was overtaken.
    h.engine.store().prune(i64::MAX).unwrap();
    let e = h.engine.retry(occ[0].id).unwrap_err().to_string();
    assert!(e.contains("a later occurrence"), "after a prune: {e}");
    run_for(60).await;
    assert_eq!(user_texts(&h, c), vec!["check the build"]);
    assert_eq!(
        h.engine.store().item(occ[0].id).unwrap().unwrap().status,
        Status::Failed
    );
}

/// Two messages failed in turn (the queue was resumed in between by a new
/// message), and one typed after the second waits for it: retrying the
/// first sends the first only; the one behind the second stays held until
/// the second is retried, and then they go in their order.
#[tokio::test(start_paused = true)]
async fn retrying_one_failed_message_does_not_release_what_another_holds() {
    let mut cfg = Config::default();
    cfg.outbox.max_attempts = 1;
    let refused = || Step::Fail(LlmError::transient("connection refused"));
    let ok = |t: &str| Step::Reply(vec![text(t), done()]);
    let h = harness_with(
        Scripted::new(vec![refused(), refused(), ok("1"), ok("2"), ok("3")]),
        cfg,
    );
    let c = new_conv(&h);
    h.engine.start();
    let p1 = h.engine.send_text(c, "P1").unwrap();
    run_for(5).await;
    assert_eq!(status(&h, p1), Status::Failed);
    // A new message resumes the queue (the user's rule), and fails too.
    let p2 = h.engine.send_text(c, "P2").unwrap();
    let p3 = h.engine.send_text(c, "P3").unwrap();
    run_for(5).await;
    assert_eq!(status(&h, p2), Status::Failed);
    assert_eq!(status(&h, p3), Status::Pending, "held behind P2");
    h.engine.retry(p1).unwrap();
    run_for(30).await;
    assert_eq!(status(&h, p1), Status::Sent);
    assert_eq!(status(&h, p3), Status::Pending, "still held behind P2");
    assert_eq!(user_texts(&h, c), vec!["P1"]);
    h.engine.retry(p2).unwrap();
    run_for(30).await;
    assert_eq!(user_texts(&h, c), vec!["P1", "P2", "P3"]);
}

/// A failed message passed over (the queue went on without it) does not
/// explain a later pause: a stop then reads as a stop.
#[tokio::test(start_paused = true)]
async fn a_stop_after_an_old_failure_is_told_as_a_stop() {
    let mut cfg = Config::default();
    cfg.outbox.max_attempts = 1;
    let h = harness_with(
        Scripted::new(vec![Step::Fail(LlmError::transient("connection refused"))]),
        cfg,
    );
    let c = new_conv(&h);
    h.engine.start();
    let p1 = h.engine.send_text(c, "P1").unwrap();
    run_for(5).await;
    assert_eq!(status(&h, p1), Status::Failed);
    // Later, a reply is stopped with a message queued behind it.
    let now = h.engine.now_ms();
    let store = h.engine.store();
    let q = store
        .enqueue(&NewItem::new(c, Kind::Queued, "Q"), now)
        .unwrap();
    assert!(store.pause_queue(c, now).unwrap());
    assert_eq!(
        store.waiting(now).unwrap().get(&q),
        Some(&tock::store::Waiting::QueuePaused {
            by: tock::store::PausedBy::Stop
        })
    );
}

/// The same when nothing was queued behind the failed message (so its
/// failure paused nothing): a message sent a moment after the failure was
/// typed before it could be seen, and waits; it went out, without the
/// failed message before it.
#[tokio::test(start_paused = true)]
async fn a_message_sent_a_moment_after_a_failure_with_nothing_queued_waits() {
    let mut cfg = Config::default();
    cfg.outbox.max_attempts = 1;
    let ok = |t: &str| Step::Reply(vec![text(t), done()]);
    let h = harness_with(
        Scripted::new(vec![
            Step::Fail(LlmError::transient("connection refused")),
            ok("to B"),
            ok("to C"),
        ]),
        cfg,
    );
    let c = new_conv(&h);
    h.engine.start();
    let a = h.engine.send_text(c, "A").unwrap();
    settle().await;
    assert_eq!(status(&h, a), Status::Failed);
    let b = h.engine.send_text(c, "B").unwrap();
    settle().await;
    assert_eq!(status(&h, b), Status::Pending, "held behind the failed A");
    assert!(user_texts(&h, c).is_empty());
    assert!(
        h.engine
            .store()
            .conversation(c)
            .unwrap()
            .unwrap()
            .queue_paused_at
            .is_some()
    );
    // Sent once the failure has been on screen a while: it resumes.
    tokio::time::sleep(Duration::from_secs(3)).await;
    h.engine.send_text(c, "C").unwrap();
    run_for(30).await;
    assert_eq!(user_texts(&h, c), vec!["B", "C"]);
}

/// A message typed as a failure pauses the queue (its Enter lands a moment
/// after) was typed before the pause could be seen: it does not lift the
/// pause, and waits with what was queued. One sent once the pause has been
/// on screen a while lifts it, as documented.
#[tokio::test(start_paused = true)]
async fn a_message_typed_as_a_failure_pauses_the_queue_is_held_too() {
    let mut cfg = Config::default();
    cfg.outbox.max_attempts = 1;
    let ok = |t: &str| Step::Reply(vec![text(t), done()]);
    let h = harness_with(
        Scripted::new(vec![
            Step::Fail(LlmError::transient("connection refused")),
            ok("to Y"),
            ok("to Z"),
            ok("to W"),
        ]),
        cfg,
    );
    let c = new_conv(&h);
    h.engine.start();
    let x = h.engine.send_text(c, "X").unwrap();
    let y = h.engine.send_text(c, "Y").unwrap();
    settle().await;
    assert_eq!(status(&h, x), Status::Failed);
    let z = h.engine.send_text(c, "Z").unwrap();
    settle().await;
    assert_eq!(
        (status(&h, y), status(&h, z)),
        (Status::Pending, Status::Pending),
        "both held behind the failed X"
    );
    assert!(user_texts(&h, c).is_empty());
    tokio::time::sleep(Duration::from_secs(3)).await;
    h.engine.send_text(c, "W").unwrap();
    run_for(30).await;
    assert_eq!(user_texts(&h, c), vec!["Y", "Z", "W"]);
}

/// A pause a failure made, moved on by a message sent a moment after it (to
/// hold that one too), is still told as the failure's: the strip said
/// "paused after stop" though nothing was stopped.
#[tokio::test(start_paused = true)]
async fn a_pause_moved_on_by_a_message_typed_just_after_a_failure_is_the_failures() {
    let mut cfg = Config::default();
    cfg.outbox.max_attempts = 1;
    let h = harness_with(
        Scripted::new(vec![Step::Fail(LlmError::permanent("401 unauthorized"))]),
        cfg,
    );
    let c = new_conv(&h);
    h.engine.start();
    let x = h.engine.send_text(c, "X").unwrap();
    let y = h.engine.send_text(c, "Y").unwrap();
    settle().await;
    assert_eq!(status(&h, x), Status::Failed);
    h.clock.jump(600);
    let z = h.engine.send_text(c, "Z").unwrap();
    settle().await;
    let waiting = h.engine.store().waiting(h.engine.now_ms()).unwrap();
    for id in [y, z] {
        assert_eq!(
            waiting.get(&id),
            Some(&tock::store::Waiting::QueuePaused {
                by: tock::store::PausedBy::FailedMessage { item_id: x }
            }),
            "{id}"
        );
    }
}

/// Resending an edit while a reply streams in the conversation, in this
/// process or another (a second TUI, the daemon), is refused: that reply
/// went on into the exchange the edit replaced, and the edit waited for it.
#[tokio::test(start_paused = true)]
async fn an_edit_is_not_resent_while_a_reply_streams_elsewhere() {
    use tock::store::{Draft, NewMessage};
    let h = harness_with(Scripted::new(vec![]), Config::default());
    let c = new_conv(&h);
    let now = h.engine.now_ms();
    let store = h.engine.store();
    let user = |content| NewMessage {
        role: Some(Role::User),
        content,
        ..Default::default()
    };
    let asked = store.insert_message(c, &user("a question"), now).unwrap();
    // Another process streams its reply.
    let streaming = NewMessage {
        role: Some(Role::Assistant),
        content: "part of an answer",
        status: Some(MessageStatus::Streaming),
        ..Default::default()
    };
    store.insert_message(c, &streaming, now).unwrap();
    let edit = NewItem::message(c, "a better question", None);
    let err = h
        .engine
        .edit_and_resend(c, asked, edit, &Draft::default())
        .unwrap_err();
    assert!(err.to_string().starts_with("a reply is streaming"), "{err}");
    let statuses: Vec<MessageStatus> = store
        .messages(c)
        .unwrap()
        .into_iter()
        .map(|m| m.status)
        .collect();
    assert!(
        !statuses.contains(&MessageStatus::Superseded),
        "nothing replaced: {statuses:?}"
    );
    assert!(store.list_items(true).unwrap().is_empty(), "nothing queued");
}
