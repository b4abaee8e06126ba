//! Tasks the model schedules, end to end against each provider's real wire
//! format on a local server: the tool call is streamed, the user approves or
//! denies, the tool result goes back in the next request, the model continues.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tock::config::{Config, ConfigSource, ModelConfig};
use tock::engine::{Engine, Options, SystemClock};
use tock::llm::ProviderKind;
use tock::store::{Kind, MessageStatus, Role, Status, Store};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A one-shot-per-connection HTTP server: records each JSON request body and
/// answers with the next canned (content type, body).
struct Server {
    base: String,
    requests: Arc<Mutex<Vec<Value>>>,
}

async fn server(replies: Vec<(&'static str, String)>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let queue = Arc::new(Mutex::new(VecDeque::from(replies)));
    let recorded = requests.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let mut buf = Vec::new();
            let body = loop {
                let mut chunk = [0u8; 4096];
                let n = sock.read(&mut chunk).await.unwrap_or(0);
                if n == 0 {
                    break None;
                }
                buf.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&buf).to_string();
                if let Some(end) = text.find("\r\n\r\n") {
                    let len = text[..end]
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap())
                        })
                        .unwrap_or(0);
                    if buf.len() >= end + 4 + len {
                        break Some(buf[end + 4..end + 4 + len].to_vec());
                    }
                }
            };
            let Some(body) = body else { continue };
            recorded
                .lock()
                .unwrap()
                .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
            let (ctype, reply) = queue
                .lock()
                .unwrap()
                .pop_front()
                .unwrap_or(("text/plain", String::new()));
            let head =
                format!("HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nConnection: close\r\n\r\n");
            let _ = sock.write_all(head.as_bytes()).await;
            let _ = sock.write_all(reply.as_bytes()).await;
            let _ = sock.shutdown().await;
        }
    });
    Server { base, requests }
}

const ARGS: &str = r#"{"instruction":"check the build","delay_secs":3600,"title":"build"}"#;

fn openai_tool_call() -> String {
    let args = serde_json::to_string(ARGS).unwrap();
    let (a, b) = args.split_at(20);
    format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"role\":\"assistant\",\"content\":\"On it.\"}}}}]}}\n\n\
         data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{{\"name\":\"schedule_task\",\"arguments\":\"\"}}}}]}}}}]}}\n\n\
         data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":{a}\"}}}}]}}}}]}}\n\n\
         data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":\"{b}}}}}]}}}}]}}\n\n\
         data: {{\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"tool_calls\"}}]}}\n\n\
         data: [DONE]\n\n"
    )
}

fn openai_text(t: &str) -> String {
    format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{t}\"}}}}]}}\n\n\
         data: {{\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"stop\"}}]}}\n\ndata: [DONE]\n\n"
    )
}

fn sse(event: &str, data: Value) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}

fn anthropic_tool_call() -> String {
    let (a, b) = ARGS.split_at(25);
    [
        sse("message_start", serde_json::json!({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}})),
        sse("content_block_start", serde_json::json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})),
        sse("content_block_delta", serde_json::json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"On it."}})),
        sse("content_block_stop", serde_json::json!({"type":"content_block_stop","index":0})),
        sse("content_block_start", serde_json::json!({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"schedule_task","input":{}}})),
        sse("content_block_delta", serde_json::json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":a}})),
        "event: ping\ndata: {\"type\":\"ping\"}\n\n".to_string(),
        sse("content_block_delta", serde_json::json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":b}})),
        sse("content_block_stop", serde_json::json!({"type":"content_block_stop","index":1})),
        sse("message_delta", serde_json::json!({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}})),
        sse("message_stop", serde_json::json!({"type":"message_stop"})),
    ]
    .concat()
}

fn anthropic_text(t: &str) -> String {
    [
        sse("message_start", serde_json::json!({"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}})),
        sse("content_block_start", serde_json::json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})),
        sse("content_block_delta", serde_json::json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":t}})),
        sse("content_block_stop", serde_json::json!({"type":"content_block_stop","index":0})),
        sse("message_delta", serde_json::json!({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}})),
        sse("message_stop", serde_json::json!({"type":"message_stop"})),
    ]
    .concat()
}

fn ollama_tool_call() -> String {
    let args: Value = serde_json::from_str(ARGS).unwrap();
    format!(
        "{}\n{}\n{}\n",
        serde_json::json!({"model":"m","message":{"role":"assistant","content":"On it."},"done":false}),
        serde_json::json!({"model":"m","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"schedule_task","arguments":args}}]},"done":false}),
        serde_json::json!({"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}),
    )
}

fn ollama_text(t: &str) -> String {
    format!(
        "{}\n{}\n",
        serde_json::json!({"model":"m","message":{"role":"assistant","content":t},"done":false}),
        serde_json::json!({"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}),
    )
}

fn engine_for(kind: ProviderKind, base: &str, dir: &tempfile::TempDir) -> Engine {
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
            timeout_secs: Some(10),
            stream_timeout_secs: None,
            price_in: None,
            price_out: None,
            price_cached: None,
            context_tokens: None,
        },
    );
    let cfg = Config {
        default_model: Some("m".into()),
        models,
        ..Default::default()
    };
    let store = Store::open(&dir.path().join("tock.db")).unwrap();
    let options = Options {
        watch_db: false,
        ..Options::default()
    };
    Engine::new(
        store,
        Arc::new(ConfigSource::from_config(cfg)),
        Arc::new(SystemClock),
        options,
    )
}

async fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    for _ in 0..500 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}");
}

/// The tool result as each wire format carries it in the follow-up request.
fn tool_result_in(kind: ProviderKind, req: &Value) -> String {
    let msgs = req["messages"].as_array().cloned().unwrap_or_default();
    match kind {
        ProviderKind::Anthropic => msgs
            .iter()
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .find(|b| b["type"] == "tool_result")
            .map(|b| {
                assert_eq!(b["tool_use_id"], "toolu_1");
                b["content"]
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| b["content"].to_string())
            })
            .expect("a tool_result block"),
        _ => msgs
            .iter()
            .find(|m| m["role"] == "tool")
            .map(|m| {
                if kind == ProviderKind::Openai {
                    assert_eq!(m["tool_call_id"], "call_1");
                }
                m["content"].as_str().unwrap_or_default().to_string()
            })
            .expect("a tool message"),
    }
}

async fn scenario(kind: ProviderKind, approve: bool) {
    let (call, text): (String, String) = match kind {
        ProviderKind::Openai => (openai_tool_call(), openai_text("Done.")),
        ProviderKind::Anthropic => (anthropic_tool_call(), anthropic_text("Done.")),
        _ => (ollama_tool_call(), ollama_text("Done.")),
    };
    let ctype = if kind == ProviderKind::Ollama {
        "application/x-ndjson"
    } else {
        "text/event-stream"
    };
    let srv = server(vec![(ctype, call), (ctype, text)]).await;
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_for(kind, &srv.base, &dir);
    let conv = engine
        .store()
        .create_conversation(Some("c"), "user", engine.now_ms())
        .unwrap();
    engine.start();
    engine
        .send_text(conv, "remind me in an hour to check the build")
        .unwrap();

    wait_for("the approval", || {
        !engine.store().approvals(conv).unwrap().is_empty()
    })
    .await;
    let first = srv.requests.lock().unwrap()[0].clone();
    let tools = first["tools"].as_array().expect("tools offered");
    assert!(
        tools
            .iter()
            .any(|t| t.to_string().contains("schedule_task")),
        "{first}"
    );
    let system = first.to_string();
    assert!(
        system.contains("current local date and time"),
        "a system line gives the model the time"
    );
    assert!(
        engine
            .store()
            .list_items(true)
            .unwrap()
            .iter()
            .all(|i| i.kind != Kind::Task),
        "nothing is scheduled before approval"
    );
    let approval = engine.store().approvals(conv).unwrap().remove(0);
    let summary: Value = serde_json::from_str(&approval.summary).unwrap();
    assert_eq!(summary["instruction"], "check the build");
    let due_shown = summary["due_at"].as_i64().unwrap();
    assert!((due_shown - engine.now_ms() - 3_600_000).abs() < 10_000);

    engine.answer_approval(approval.id, approve).unwrap();
    wait_for("the continued reply", || {
        engine
            .store()
            .messages(conv)
            .unwrap()
            .last()
            .is_some_and(|m| {
                m.role == Role::Assistant
                    && m.content == "Done."
                    && m.status == MessageStatus::Complete
            })
    })
    .await;

    let reqs = srv.requests.lock().unwrap().clone();
    assert_eq!(reqs.len(), 2);
    let result = tool_result_in(kind, &reqs[1]);
    let tasks: Vec<_> = engine
        .store()
        .list_items(true)
        .unwrap()
        .into_iter()
        .filter(|i| i.kind == Kind::Task)
        .collect();
    if approve {
        assert_eq!(tasks.len(), 1);
        let t = &tasks[0];
        assert_eq!(
            (t.status, t.text.as_str(), t.title.as_deref()),
            (Status::Pending, "check the build", Some("build"))
        );
        assert_eq!(
            t.due_at,
            Some(due_shown),
            "the task fires at the time the user approved"
        );
        assert!(
            t.payload_json
                .as_deref()
                .unwrap()
                .contains("check the build")
        );
        assert!(result.contains(&format!("\"job_id\":{}", t.id)), "{result}");
        assert!(result.contains("due_at"), "{result}");
    } else {
        assert!(tasks.is_empty());
        assert!(result.contains("declined"), "{result}");
    }
    engine.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_schedule_task_approved() {
    scenario(ProviderKind::Openai, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_schedule_task_denied() {
    scenario(ProviderKind::Openai, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_schedule_task_approved() {
    scenario(ProviderKind::Anthropic, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_schedule_task_denied() {
    scenario(ProviderKind::Anthropic, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ollama_schedule_task_approved() {
    scenario(ProviderKind::Ollama, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ollama_schedule_task_denied() {
    scenario(ProviderKind::Ollama, false).await;
}
