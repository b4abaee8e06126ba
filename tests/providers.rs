//! Providers against real HTTP servers on 127.0.0.1 that speak each
//! provider's wire format byte for byte (hand-written HTTP/1.1, chunked
//! framing split at awkward places), and record what the client sent.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use tock::llm::anthropic::Anthropic;
use tock::llm::echo::Echo;
use tock::llm::ollama::Ollama;
use tock::llm::openai::OpenAi;
use tock::llm::{
    ChatMessage, ChatRequest, ErrorKind, Image, LlmError, Provider, ProviderKind, ProviderSpec,
    StreamEvent, TextPace, ToolCall, ToolSpec, Usage,
};

/// A sentinel key: no error message may ever contain it.
const KEY: &str = "sk-SENTINEL-7f3a9c-do-not-leak";

// ---------------------------------------------------------------- server --

#[derive(Clone, Debug)]
struct Recorded {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    raw_body: String,
    body: Value,
}

impl Recorded {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

enum Step {
    Write(Vec<u8>),
    Pause(u64),
    /// Keep the connection open, sending nothing, until the client leaves.
    Hang,
}

struct Server {
    base: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
    /// Connections whose `Hang` ended because the client went away.
    hangs_ended: Arc<AtomicUsize>,
}

impl Server {
    /// One script per expected connection, in order.
    async fn start(scripts: Vec<Vec<Step>>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let requests: Arc<Mutex<Vec<Recorded>>> = Arc::default();
        let hangs_ended: Arc<AtomicUsize> = Arc::default();
        let recorded = requests.clone();
        let ended = hangs_ended.clone();
        tokio::spawn(async move {
            for script in scripts {
                let Ok((sock, _)) = listener.accept().await else {
                    return;
                };
                tokio::spawn(serve(sock, script, recorded.clone(), ended.clone()));
            }
        });
        Server {
            base: format!("http://{addr}"),
            requests,
            hangs_ended,
        }
    }

    fn request(&self, n: usize) -> Recorded {
        self.requests.lock().unwrap()[n].clone()
    }

    fn count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
}

async fn serve(
    mut sock: TcpStream,
    script: Vec<Step>,
    recorded: Arc<Mutex<Vec<Recorded>>>,
    hangs_ended: Arc<AtomicUsize>,
) {
    sock.set_nodelay(true).unwrap();
    let Some(req) = read_request(&mut sock).await else {
        return;
    };
    recorded.lock().unwrap().push(req);
    for step in script {
        match step {
            Step::Write(bytes) => {
                if sock.write_all(&bytes).await.is_err() {
                    return;
                }
                let _ = sock.flush().await;
            }
            Step::Pause(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
            Step::Hang => {
                let mut buf = [0u8; 1024];
                let left = tokio::time::timeout(Duration::from_secs(10), async {
                    while let Ok(n) = sock.read(&mut buf).await {
                        if n == 0 {
                            break;
                        }
                    }
                })
                .await;
                if left.is_ok() {
                    hangs_ended.fetch_add(1, Ordering::SeqCst);
                }
            }
        }
    }
    // Dropping the socket closes the connection: whatever was not sent is
    // "cut mid-way" from the client's point of view.
}

async fn read_request(sock: &mut TcpStream) -> Option<Recorded> {
    let req = common::read_http_request(sock).await?;
    let mut lines = req.head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_string();
    let path = request_line.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let raw_body = String::from_utf8(req.body).unwrap();
    let body = serde_json::from_str(&raw_body).unwrap_or(Value::Null);
    Some(Recorded {
        method,
        path,
        headers,
        raw_body,
        body,
    })
}

fn head(status: &str, headers: &[(&str, &str)], framing: &str) -> Vec<u8> {
    let mut h = format!("HTTP/1.1 {status}\r\nConnection: close\r\n{framing}\r\n");
    for (k, v) in headers {
        h.push_str(&format!("{k}: {v}\r\n"));
    }
    h.push_str("\r\n");
    h.into_bytes()
}

fn chunk(data: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    out
}

/// A 200 chunked response carrying `chunks` as separate HTTP chunks.
fn streamed(content_type: &str, chunks: Vec<Vec<u8>>) -> Vec<Step> {
    let mut steps = vec![Step::Write(head(
        "200 OK",
        &[("Content-Type", content_type)],
        "Transfer-Encoding: chunked",
    ))];
    steps.extend(chunks.iter().map(|c| Step::Write(chunk(c))));
    steps.push(Step::Write(b"0\r\n\r\n".to_vec()));
    steps
}

/// Like [`streamed`] but the connection is closed before the last chunk.
fn streamed_then_cut(content_type: &str, chunks: Vec<Vec<u8>>) -> Vec<Step> {
    let mut steps = streamed(content_type, chunks);
    steps.pop();
    steps
}

fn fixed(status: &str, headers: &[(&str, &str)], body: &str) -> Vec<Step> {
    let mut h = head(status, headers, &format!("Content-Length: {}", body.len()));
    h.extend_from_slice(body.as_bytes());
    vec![Step::Write(h)]
}

/// Splits `body` into pieces of `n` bytes, regardless of UTF-8 or line
/// boundaries.
fn every(body: &[u8], n: usize) -> Vec<Vec<u8>> {
    body.chunks(n).map(<[u8]>::to_vec).collect()
}

/// Splits `body` right before each occurrence of each marker (and once in
/// the middle of each marker), so data lines and JSON strings are cut.
fn cut_at(body: &[u8], markers: &[&str]) -> Vec<Vec<u8>> {
    let mut points = vec![0, body.len()];
    for m in markers {
        let m = m.as_bytes();
        let mut from = 0;
        while let Some(p) = body[from..].windows(m.len()).position(|w| w == m) {
            points.push(from + p);
            points.push(from + p + m.len() / 2);
            from += p + 1;
        }
    }
    points.sort_unstable();
    points.dedup();
    points
        .windows(2)
        .map(|w| body[w[0]..w[1]].to_vec())
        .collect()
}

// ---------------------------------------------------------------- client --

fn spec(kind: ProviderKind, base: &str, key: Option<&str>) -> ProviderSpec {
    let mut s = ProviderSpec::new(kind, base, key.map(str::to_string));
    s.connect_timeout = Duration::from_secs(2);
    s.idle_timeout = Duration::from_secs(5);
    s
}

fn openai(base: &str) -> OpenAi {
    OpenAi::new(spec(ProviderKind::Openai, base, Some(KEY)))
}

fn anthropic(base: &str) -> Anthropic {
    Anthropic::new(spec(ProviderKind::Anthropic, base, Some(KEY)))
}

fn ollama(base: &str) -> Ollama {
    Ollama::new(spec(ProviderKind::Ollama, base, None))
}

fn user(text: &str) -> ChatMessage {
    ChatMessage::User {
        text: text.into(),
        images: vec![],
    }
}

fn simple_request() -> ChatRequest {
    ChatRequest {
        model: "test-model".into(),
        system: Some("Be brief.".into()),
        messages: vec![user("Hi")],
        tools: vec![],
        text_every: TextPace::new(Duration::from_millis(100)),
    }
}

fn weather_tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "get_weather".into(),
            description: "Weather for a city".into(),
            parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        },
        ToolSpec {
            name: "get_time".into(),
            description: "Current time".into(),
            parameters: json!({"type": "object", "properties": {}}),
        },
    ]
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

/// A conversation where the model called two tools and their results follow,
/// with an image on the first user message.
fn tool_result_request() -> ChatRequest {
    ChatRequest {
        model: "test-model".into(),
        system: Some("Be brief.".into()),
        messages: vec![
            ChatMessage::User {
                text: "Weather and time in Paris? See picture.".into(),
                images: vec![Image {
                    mime: "image/png".into(),
                    data_base64: "iVBORw0KGgo=".into(),
                }],
            },
            ChatMessage::Assistant {
                text: String::new(),
                tool_calls: vec![
                    call("call_1", "get_weather", r#"{"city":"Paris"}"#),
                    call("call_2", "get_time", "{}"),
                ],
                reasoning: None,
            },
            ChatMessage::ToolResult {
                call_id: "call_1".into(),
                name: "get_weather".into(),
                content: "18°C, sunny".into(),
                images: vec![],
            },
            ChatMessage::ToolResult {
                call_id: "call_2".into(),
                name: "get_time".into(),
                content: "14:05".into(),
                images: vec![],
            },
        ],
        tools: weather_tools(),
        text_every: TextPace::new(Duration::from_millis(100)),
    }
}

/// [`tool_result_request`] where the first tool returned an image (the
/// second did not), then a new user message.
fn tool_image_request() -> ChatRequest {
    let mut req = tool_result_request();
    if let ChatMessage::ToolResult { images, .. } = &mut req.messages[2] {
        images.push(Image {
            mime: "image/gif".into(),
            data_base64: "R0lGODlh".into(),
        });
    }
    req.messages.push(user("And tomorrow?"));
    req
}

#[derive(Debug)]
struct Outcome {
    events: Vec<StreamEvent>,
    error: Option<LlmError>,
}

impl Outcome {
    fn text(&self) -> String {
        self.events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }

    fn tool_calls(&self) -> Vec<ToolCall> {
        self.events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ToolCall(c) => Some(c.clone()),
                _ => None,
            })
            .collect()
    }

    fn usage(&self) -> Option<Usage> {
        self.events.iter().rev().find_map(|e| match e {
            StreamEvent::Usage(u) => Some(*u),
            _ => None,
        })
    }

    fn done(&self) -> Option<Option<String>> {
        match self.events.last() {
            Some(StreamEvent::Done { stop_reason }) => Some(stop_reason.clone()),
            _ => None,
        }
    }

    fn err(&self) -> &LlmError {
        self.error
            .as_ref()
            .unwrap_or_else(|| panic!("expected a stream error, got {:?}", self.events))
    }
}

fn assert_clean(e: &LlmError) {
    assert!(!e.message.contains(KEY), "key leaked: {}", e.message);
    assert!(
        !format!("{e:?}").contains(KEY),
        "key leaked in Debug: {e:?}"
    );
    assert!(!e.message.contains('\n'), "not one line: {}", e.message);
    assert!(e.message.chars().count() <= 300, "too long: {}", e.message);
}

/// Starts the request and drains the stream, checking the stream contract:
/// nothing after `Done` or an error, and no empty text.
async fn run(p: &dyn Provider, req: &ChatRequest) -> Result<Outcome, LlmError> {
    let fut = async {
        let mut stream = match p.start(req).await {
            Ok(s) => s,
            Err(e) => {
                assert_clean(&e);
                return Err(e);
            }
        };
        let mut events = Vec::new();
        let mut error = None;
        while let Some(item) = stream.next().await {
            assert!(error.is_none(), "item after an error: {item:?}");
            assert!(
                !matches!(events.last(), Some(StreamEvent::Done { .. })),
                "item after Done: {item:?}"
            );
            match item {
                Ok(StreamEvent::Text(t)) => {
                    assert!(!t.is_empty(), "empty text event");
                    events.push(StreamEvent::Text(t));
                }
                Ok(ev) => events.push(ev),
                Err(e) => {
                    assert_clean(&e);
                    error = Some(e);
                }
            }
        }
        assert!(
            error.is_some() || matches!(events.last(), Some(StreamEvent::Done { .. })),
            "stream ended without Done or error: {events:?}"
        );
        Ok(Outcome { events, error })
    };
    tokio::time::timeout(Duration::from_secs(20), fut)
        .await
        .expect("test hung")
}

fn transient_after(e: &LlmError) -> Option<Duration> {
    match e.kind {
        ErrorKind::Transient { retry_after } => retry_after,
        ErrorKind::Permanent => panic!("expected transient, got permanent: {}", e.message),
    }
}

fn assert_transient(e: &LlmError, needle: &str) {
    assert!(e.is_transient(), "expected transient: {e:?}");
    assert!(
        e.message.contains(needle),
        "expected {needle:?} in {:?}",
        e.message
    );
}

fn assert_permanent(e: &LlmError, needle: &str) {
    assert_eq!(e.kind, ErrorKind::Permanent, "expected permanent: {e:?}");
    assert!(
        e.message.contains(needle),
        "expected {needle:?} in {:?}",
        e.message
    );
}

/// A local port with nothing listening.
async fn refused_base() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}")
}

// ---------------------------------------------------------------- openai --

const SSE: &str = "text/event-stream";

fn oa_chunk(delta: Value, finish: Option<&str>) -> String {
    let v = json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-x",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
    });
    format!("data: {v}\n\n")
}

fn oa_text_body() -> String {
    [
        oa_chunk(
            json!({"role": "assistant", "content": "", "refusal": null}),
            None,
        ),
        ": OPENROUTER PROCESSING\n\n".to_string(),
        oa_chunk(json!({"content": "Hello"}), None),
        oa_chunk(json!({"content": " wörld 😀 известни"}), None),
        oa_chunk(json!({}), Some("stop")),
        oa_usage_chunk(),
        "data: [DONE]\n\n".to_string(),
    ]
    .concat()
}

/// The last chunk of a stream asked for with `stream_options.include_usage`.
fn oa_usage_chunk() -> String {
    let v = json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-x",
        "choices": [], "usage": {"prompt_tokens": 1117, "completion_tokens": 46, "total_tokens": 1163,
        "prompt_tokens_details": {"cached_tokens": 1024, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0}},
    });
    format!("data: {v}\n\n")
}

#[tokio::test]
async fn openai_text_stream_survives_any_chunking() {
    let body = oa_text_body();
    for n in [1, 2, 3, 7, 64, body.len()] {
        let server = Server::start(vec![streamed(SSE, every(body.as_bytes(), n))]).await;
        let p = openai(&format!("{}/v1/", server.base));
        let out = run(&p, &simple_request()).await.unwrap();
        assert_eq!(out.text(), "Hello wörld 😀 известни", "chunk size {n}");
        assert_eq!(out.done(), Some(Some("stop".into())));
        assert!(out.error.is_none());
        assert_eq!(
            out.usage(),
            Some(Usage {
                prompt_tokens: Some(1117),
                completion_tokens: Some(46),
                cached_tokens: Some(1024)
            }),
            "chunk size {n}"
        );

        let req = server.request(0);
        assert_eq!(req.method, "POST");
        assert_eq!(req.path, "/v1/chat/completions");
        assert_eq!(
            req.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
        assert!(
            req.header("content-type")
                .unwrap()
                .starts_with("application/json")
        );
        assert!(
            !req.raw_body.contains(KEY) && !req.path.contains(KEY),
            "key only in the header"
        );
        assert_eq!(
            req.body,
            json!({
                "model": "test-model",
                "stream": true,
                "stream_options": {"include_usage": true},
                "messages": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "Hi"},
                ],
            }),
            "no tools key when no tools"
        );
    }
}

#[tokio::test]
async fn openai_without_key_sends_no_authorization() {
    let body = oa_text_body();
    let server = Server::start(vec![streamed(SSE, vec![body.into_bytes()])]).await;
    let p = OpenAi::new(spec(ProviderKind::Openai, &server.base, None));
    let out = run(&p, &simple_request()).await.unwrap();
    assert_eq!(out.text(), "Hello wörld 😀 известни");
    assert_eq!(server.request(0).path, "/chat/completions");
    assert_eq!(server.request(0).header("authorization"), None);
}

#[tokio::test]
async fn openai_parallel_tool_calls_assembled_from_fragments() {
    let tc = |index: u64, id: Option<&str>, name: Option<&str>, args: &str| {
        let mut f = json!({"index": index, "function": {"arguments": args}});
        if let Some(id) = id {
            f["id"] = json!(id);
            f["type"] = json!("function");
        }
        if let Some(name) = name {
            f["function"]["name"] = json!(name);
        }
        oa_chunk(json!({"tool_calls": [f]}), None)
    };
    let body = [
        oa_chunk(json!({"role": "assistant", "content": "Checking."}), None),
        tc(0, Some("call_abc"), Some("get_weather"), ""),
        tc(0, None, None, "{\"ci"),
        tc(1, Some("call_def"), Some("get_time"), ""),
        tc(0, None, None, "ty\": \"Par"),
        tc(1, None, None, "{}"),
        tc(0, None, None, "is\"}"),
        oa_chunk(json!({}), Some("tool_calls")),
        "data: [DONE]\n\n".to_string(),
    ]
    .concat();
    let chunks = cut_at(body.as_bytes(), &["data:", "arguments", "Par", "[DONE]"]);
    assert!(chunks.len() > 20);
    let server = Server::start(vec![streamed(SSE, chunks)]).await;
    let mut req = simple_request();
    req.tools = weather_tools();
    let out = run(&openai(&server.base), &req).await.unwrap();
    assert_eq!(
        out.events,
        vec![
            StreamEvent::Text("Checking.".into()),
            StreamEvent::ToolCall(call("call_abc", "get_weather", r#"{"city": "Paris"}"#)),
            StreamEvent::ToolCall(call("call_def", "get_time", "{}")),
            StreamEvent::Done {
                stop_reason: Some("tool_calls".into())
            },
        ]
    );
    assert_eq!(
        server.request(0).body["tools"],
        json!([
            {"type": "function", "function": {
                "name": "get_weather", "description": "Weather for a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            }},
            {"type": "function", "function": {
                "name": "get_time", "description": "Current time",
                "parameters": {"type": "object", "properties": {}},
            }},
        ])
    );
}

#[tokio::test]
async fn openai_tool_results_and_images_on_the_wire() {
    let server = Server::start(vec![streamed(SSE, vec![oa_text_body().into_bytes()])]).await;
    let out = run(&openai(&server.base), &tool_result_request())
        .await
        .unwrap();
    assert_eq!(out.done(), Some(Some("stop".into())));
    assert_eq!(
        server.request(0).body["messages"],
        json!([
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [
                {"type": "text", "text": "Weather and time in Paris? See picture."},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            ]},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
                {"id": "call_2", "type": "function", "function": {"name": "get_time", "arguments": "{}"}},
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "18°C, sunny"},
            {"role": "tool", "tool_call_id": "call_2", "content": "14:05"},
        ])
    );
}

#[tokio::test]
async fn openai_tool_images_follow_the_tool_messages_as_a_user_message() {
    let server = Server::start(vec![streamed(SSE, vec![oa_text_body().into_bytes()])]).await;
    run(&openai(&server.base), &tool_image_request())
        .await
        .unwrap();
    let messages = server.request(0).body["messages"].clone();
    assert_eq!(
        messages.as_array().map(|m| m[3..].to_vec()),
        Some(vec![
            json!({"role": "tool", "tool_call_id": "call_1", "content": "18°C, sunny\n[1 image returned: in the next message]"}),
            json!({"role": "tool", "tool_call_id": "call_2", "content": "14:05"}),
            json!({"role": "user", "content": [
                {"type": "text", "text": "The image below was returned by the tool call get_weather (call_1)."},
                {"type": "image_url", "image_url": {"url": "data:image/gif;base64,R0lGODlh"}},
            ]}),
            json!({"role": "user", "content": "And tomorrow?"}),
        ])
    );
}

#[tokio::test]
async fn openai_crlf_framing_and_keepalives() {
    let body = oa_text_body().replace("\n", "\r\n");
    let body = format!(": ping\r\n\r\n{body}");
    let chunks = cut_at(body.as_bytes(), &["\r\n", "ö", "😀"]);
    let server = Server::start(vec![streamed(SSE, chunks)]).await;
    let out = run(&openai(&server.base), &simple_request()).await.unwrap();
    assert_eq!(out.text(), "Hello wörld 😀 известни");
    assert_eq!(out.done(), Some(Some("stop".into())));
}

#[tokio::test]
async fn openai_error_statuses_are_classified() {
    let key_echo = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {KEY}. You can find your API key at https://platform.openai.com.","type":"invalid_request_error","code":"invalid_api_key"}}}}"#
    );
    let json = [("Content-Type", "application/json")];
    let server = Server::start(vec![
        fixed("401 Unauthorized", &json, &key_echo),
        fixed(
            "429 Too Many Requests",
            &[("Content-Type", "application/json"), ("Retry-After", "7")],
            r#"{"error":{"message":"Rate limit reached"}}"#,
        ),
        fixed(
            "500 Internal Server Error",
            &json,
            r#"{"error":{"message":"The server had an error"}}"#,
        ),
        fixed(
            "503 Service Unavailable",
            &[("Content-Type", "text/html")],
            "<html>down</html>",
        ),
        fixed(
            "404 Not Found",
            &json,
            r#"{"error":{"message":"The model `nope` does not exist"}}"#,
        ),
        fixed("400 Bad Request", &[], "plain words\nsecond line"),
        fixed(
            "429 Too Many Requests",
            &json,
            r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#,
        ),
    ])
    .await;
    let p = openai(&server.base);
    let req = simple_request();

    let e = run(&p, &req).await.unwrap_err();
    assert_permanent(&e, "openai: 401 Unauthorized: Incorrect API key provided");
    assert!(e.message.contains("<redacted>"), "{}", e.message);

    let e = run(&p, &req).await.unwrap_err();
    assert_eq!(transient_after(&e), Some(Duration::from_secs(7)));
    assert_eq!(
        e.message,
        "openai: 429 Too Many Requests: Rate limit reached"
    );

    let e = run(&p, &req).await.unwrap_err();
    assert_transient(&e, "500 Internal Server Error: The server had an error");
    assert_eq!(transient_after(&e), None);

    let e = run(&p, &req).await.unwrap_err();
    assert_eq!(e.message, "openai: 503 Service Unavailable");
    assert!(e.is_transient());

    let e = run(&p, &req).await.unwrap_err();
    assert_permanent(&e, "404 Not Found: The model `nope` does not exist");

    let e = run(&p, &req).await.unwrap_err();
    assert_eq!(
        e.message,
        "openai: 400 Bad Request: plain words second line"
    );
    assert_eq!(server.count(), 6);
}

#[tokio::test]
async fn openai_error_mid_stream_after_text() {
    let body = [
        oa_chunk(json!({"content": "Partial"}), None),
        format!("data: {}\n\n", json!({"error": {"message": format!("Upstream failed for key {KEY}"), "type": "server_error"}})),
    ]
    .concat();
    let server = Server::start(vec![streamed(SSE, vec![body.into_bytes()])]).await;
    let out = run(&openai(&server.base), &simple_request()).await.unwrap();
    assert_eq!(out.events, vec![StreamEvent::Text("Partial".into())]);
    assert_transient(out.err(), "Upstream failed for key <redacted>");
}

#[tokio::test]
async fn openai_stream_cut_before_done_is_transient() {
    let chunks = vec![
        oa_chunk(json!({"content": "Hello"}), None).into_bytes(),
        b"data: {\"choi".to_vec(),
    ];
    // Closed abruptly, without the final chunk of the chunked encoding.
    let server = Server::start(vec![
        streamed_then_cut(SSE, chunks.clone()),
        // Cleanly finished HTTP body, but no `[DONE]`.
        streamed(SSE, chunks),
    ])
    .await;
    for _ in 0..2 {
        let out = run(&openai(&server.base), &simple_request()).await.unwrap();
        assert_eq!(out.text(), "Hello");
        assert_transient(out.err(), "stream ended early");
    }
}

#[tokio::test]
async fn openai_empty_200_body_is_transient() {
    let server = Server::start(vec![
        fixed("200 OK", &[("Content-Type", SSE)], ""),
        streamed(SSE, vec![]),
    ])
    .await;
    for _ in 0..2 {
        let out = run(&openai(&server.base), &simple_request()).await.unwrap();
        assert!(out.events.is_empty());
        assert_transient(out.err(), "empty response");
    }
}

#[tokio::test]
async fn openai_invalid_utf8_is_replaced() {
    let mut body = b"data: {\"choices\":[{\"delta\":{\"content\":\"a".to_vec();
    body.extend_from_slice(b"\xFF\xC3b");
    body.extend_from_slice(b"\"}}]}\n\ndata: [DONE]\n\n");
    let server = Server::start(vec![streamed(SSE, every(&body, 5))]).await;
    let out = run(&openai(&server.base), &simple_request()).await.unwrap();
    assert_eq!(out.text(), "a\u{FFFD}\u{FFFD}b");
    assert_eq!(out.done(), Some(None));
}

// -------------------------------------------------------------- timeouts --

#[tokio::test]
async fn stall_after_headers_is_transient_within_idle_timeout() {
    let mut steps = vec![Step::Write(head(
        "200 OK",
        &[("Content-Type", SSE)],
        "Transfer-Encoding: chunked",
    ))];
    steps.push(Step::Write(chunk(
        oa_chunk(json!({"content": "Hi"}), None).as_bytes(),
    )));
    steps.push(Step::Hang);
    let server = Server::start(vec![steps]).await;
    let mut s = spec(ProviderKind::Openai, &server.base, Some(KEY));
    s.idle_timeout = Duration::from_millis(300);
    let t0 = Instant::now();
    let out = run(&OpenAi::new(s), &simple_request()).await.unwrap();
    assert_eq!(out.text(), "Hi");
    assert_transient(out.err(), "no data for 0.3s");
    assert!(
        t0.elapsed() < Duration::from_secs(3),
        "took {:?}",
        t0.elapsed()
    );
}

#[tokio::test]
async fn idle_timeout_bounds_each_gap_not_the_whole_reply() {
    // Eight gaps of 50 ms with a 300 ms idle timeout: 400 ms in total is fine.
    let mut steps = vec![Step::Write(head(
        "200 OK",
        &[("Content-Type", SSE)],
        "Transfer-Encoding: chunked",
    ))];
    for word in ["a", "b", "c", "d", "e", "f", "g"] {
        steps.push(Step::Pause(50));
        steps.push(Step::Write(chunk(
            oa_chunk(json!({"content": word}), None).as_bytes(),
        )));
    }
    steps.push(Step::Pause(50));
    steps.push(Step::Write(chunk(b"data: [DONE]\n\n")));
    steps.push(Step::Write(b"0\r\n\r\n".to_vec()));
    let server = Server::start(vec![steps]).await;
    let mut s = spec(ProviderKind::Openai, &server.base, Some(KEY));
    s.idle_timeout = Duration::from_millis(300);
    let t0 = Instant::now();
    let out = run(&OpenAi::new(s), &simple_request()).await.unwrap();
    assert_eq!(out.text(), "abcdefg");
    assert_eq!(out.done(), Some(None));
    assert!(t0.elapsed() > Duration::from_millis(300));
}

#[tokio::test]
async fn start_resolves_on_headers_and_dropping_the_stream_hangs_up() {
    let steps = vec![
        Step::Write(head(
            "200 OK",
            &[("Content-Type", SSE)],
            "Transfer-Encoding: chunked",
        )),
        Step::Pause(50),
        Step::Write(chunk(
            oa_chunk(json!({"content": "first"}), None).as_bytes(),
        )),
        Step::Hang,
    ];
    let server = Server::start(vec![steps]).await;
    let p = openai(&server.base);
    let req = simple_request();
    // Accepted as soon as the headers arrive, before any body byte.
    let mut stream = tokio::time::timeout(Duration::from_secs(2), p.start(&req))
        .await
        .expect("start waited for the body")
        .unwrap();
    assert_eq!(
        stream.next().await,
        Some(Ok(StreamEvent::Text("first".into())))
    );
    assert_eq!(server.hangs_ended.load(Ordering::SeqCst), 0);
    drop(stream);
    let t0 = Instant::now();
    while server.hangs_ended.load(Ordering::SeqCst) == 0 {
        assert!(
            t0.elapsed() < Duration::from_secs(3),
            "connection not closed after drop"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn no_response_headers_is_transient_within_idle_timeout() {
    let server = Server::start(vec![vec![Step::Hang], vec![Step::Hang], vec![Step::Hang]]).await;
    let t0 = Instant::now();
    let providers: Vec<Box<dyn Provider>> = {
        let mut v: Vec<Box<dyn Provider>> = Vec::new();
        for kind in [
            ProviderKind::Openai,
            ProviderKind::Anthropic,
            ProviderKind::Ollama,
        ] {
            let mut s = spec(kind, &server.base, Some(KEY));
            s.idle_timeout = Duration::from_millis(300);
            v.push(match kind {
                ProviderKind::Openai => Box::new(OpenAi::new(s)),
                ProviderKind::Anthropic => Box::new(Anthropic::new(s)),
                _ => Box::new(Ollama::new(s)),
            });
        }
        v
    };
    for p in &providers {
        let e = run(p.as_ref(), &simple_request()).await.unwrap_err();
        assert_transient(&e, "no response from 127.0.0.1");
        assert!(e.message.starts_with(p.name()), "{}", e.message);
    }
    assert!(
        t0.elapsed() < Duration::from_secs(4),
        "took {:?}",
        t0.elapsed()
    );
}

#[tokio::test]
async fn anthropic_and_ollama_stalls_are_transient() {
    let mut a = vec![Step::Write(head(
        "200 OK",
        &[("Content-Type", SSE)],
        "Transfer-Encoding: chunked",
    ))];
    a.push(Step::Write(chunk(
        b"event: ping\ndata: {\"type\": \"ping\"}\n\n",
    )));
    a.push(Step::Hang);
    let mut o = vec![Step::Write(head(
        "200 OK",
        &[("Content-Type", "application/x-ndjson")],
        "Transfer-Encoding: chunked",
    ))];
    o.push(Step::Hang);
    let server = Server::start(vec![a, o]).await;

    let mut s = spec(ProviderKind::Anthropic, &server.base, Some(KEY));
    s.idle_timeout = Duration::from_millis(300);
    let out = run(&Anthropic::new(s), &simple_request()).await.unwrap();
    assert_transient(out.err(), "anthropic: no data for 0.3s");

    let mut s = spec(ProviderKind::Ollama, &server.base, None);
    s.idle_timeout = Duration::from_millis(300);
    let out = run(&Ollama::new(s), &simple_request()).await.unwrap();
    assert_transient(out.err(), "ollama: no data for 0.3s");
}

#[tokio::test]
async fn connection_refused_is_transient_for_every_provider() {
    let base = refused_base().await;
    let providers: Vec<Box<dyn Provider>> = vec![
        Box::new(openai(&base)),
        Box::new(anthropic(&base)),
        Box::new(ollama(&base)),
    ];
    for p in &providers {
        let e = run(p.as_ref(), &simple_request()).await.unwrap_err();
        assert_transient(&e, "cannot connect to 127.0.0.1");
        assert!(e.message.contains(": Connection refused"), "{}", e.message);
        assert!(e.message.starts_with(p.name()), "{}", e.message);
    }
}

#[tokio::test]
async fn bad_base_url_is_permanent() {
    let e = run(&openai("not a url"), &simple_request())
        .await
        .unwrap_err();
    assert_permanent(&e, "invalid base URL 'not a url/chat/completions'");
    let e = run(&openai("ftp://example.com"), &simple_request())
        .await
        .unwrap_err();
    assert_permanent(&e, "unsupported URL scheme");
}

#[tokio::test]
async fn key_never_in_debug_output() {
    for s in [
        spec(ProviderKind::Openai, "http://x", Some(KEY)),
        spec(ProviderKind::Anthropic, "http://x", Some(KEY)),
        spec(ProviderKind::Ollama, "http://x", Some(KEY)),
    ] {
        assert!(!format!("{s:?}").contains(KEY));
        assert!(!format!("{:?}", OpenAi::new(s.clone())).contains(KEY));
        assert!(!format!("{:?}", Anthropic::new(s.clone())).contains(KEY));
        assert!(!format!("{:?}", Ollama::new(s)).contains(KEY));
    }
}

// ------------------------------------------------------------- anthropic --

fn an_event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

fn an_message_start() -> String {
    an_event(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-x",
            "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 25, "output_tokens": 1},
        }}),
    )
}

fn an_text_delta(index: u64, text: &str) -> String {
    an_event(
        "content_block_delta",
        json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}),
    )
}

fn an_json_delta(index: u64, partial: &str) -> String {
    an_event(
        "content_block_delta",
        json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": partial}}),
    )
}

fn an_block_stop(index: u64) -> String {
    an_event(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": index}),
    )
}

fn an_end(stop_reason: &str) -> String {
    [
        an_event(
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": 15}}),
        ),
        an_event("message_stop", json!({"type": "message_stop"})),
    ]
    .concat()
}

fn an_text_start(index: u64) -> String {
    an_event(
        "content_block_start",
        json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
    )
}

fn an_text_body() -> String {
    [
        an_message_start(),
        an_text_start(0),
        an_event("ping", json!({"type": "ping"})),
        an_text_delta(0, "Hello"),
        an_text_delta(0, " wörld 😀 известни"),
        an_block_stop(0),
        an_end("end_turn"),
    ]
    .concat()
}

#[tokio::test]
async fn anthropic_text_stream_survives_any_chunking() {
    let body = an_text_body();
    for n in [1, 3, 7, 64, body.len()] {
        let server = Server::start(vec![streamed(SSE, every(body.as_bytes(), n))]).await;
        let out = run(&anthropic(&format!("{}/", server.base)), &simple_request())
            .await
            .unwrap();
        assert_eq!(out.text(), "Hello wörld 😀 известни", "chunk size {n}");
        assert_eq!(out.done(), Some(Some("end_turn".into())));
        assert_eq!(
            out.usage(),
            Some(Usage {
                prompt_tokens: Some(25),
                completion_tokens: Some(15),
                cached_tokens: None
            })
        );

        let req = server.request(0);
        assert_eq!(req.method, "POST");
        assert_eq!(req.path, "/v1/messages");
        assert_eq!(req.header("x-api-key"), Some(KEY));
        assert_eq!(req.header("anthropic-version"), Some("2023-06-01"));
        assert_eq!(req.header("authorization"), None);
        assert!(!req.raw_body.contains(KEY));
        assert_eq!(
            req.body,
            json!({
                "model": "test-model",
                "max_tokens": 8192,
                "stream": true,
                "system": "Be brief.",
                "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
            })
        );
    }
}

#[tokio::test]
async fn anthropic_tool_use_with_input_json_deltas() {
    let tool_start = |index: u64, id: &str, name: &str| {
        an_event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
                   "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
        )
    };
    let body = [
        an_message_start(),
        an_text_start(0),
        an_text_delta(0, "Let me check."),
        an_block_stop(0),
        tool_start(1, "toolu_01", "get_weather"),
        an_json_delta(1, ""),
        an_json_delta(1, "{\"city\": \"Par"),
        an_event("ping", json!({"type": "ping"})),
        an_json_delta(1, "is\"}"),
        an_block_stop(1),
        tool_start(2, "toolu_02", "get_time"),
        an_json_delta(2, ""),
        an_block_stop(2),
        an_end("tool_use"),
    ]
    .concat();
    let chunks = cut_at(body.as_bytes(), &["event:", "data:", "partial_json", "Par"]);
    let server = Server::start(vec![streamed(SSE, chunks)]).await;
    let mut req = simple_request();
    req.tools = weather_tools();
    let out = run(&anthropic(&server.base), &req).await.unwrap();
    assert_eq!(
        out.events,
        vec![
            StreamEvent::Text("Let me check.".into()),
            StreamEvent::ToolCall(call("toolu_01", "get_weather", r#"{"city": "Paris"}"#)),
            StreamEvent::ToolCall(call("toolu_02", "get_time", "{}")),
            // message_start's input_tokens, message_delta's output_tokens.
            StreamEvent::Usage(Usage {
                prompt_tokens: Some(25),
                completion_tokens: Some(15),
                cached_tokens: None
            }),
            StreamEvent::Done {
                stop_reason: Some("tool_use".into())
            },
        ]
    );
    assert_eq!(
        server.request(0).body["tools"],
        json!([
            {"name": "get_weather", "description": "Weather for a city",
             "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
            {"name": "get_time", "description": "Current time", "input_schema": {"type": "object", "properties": {}}},
        ])
    );
}

#[tokio::test]
async fn anthropic_tool_results_merged_into_one_user_message() {
    let server = Server::start(vec![streamed(SSE, vec![an_text_body().into_bytes()])]).await;
    let mut req = tool_result_request();
    req.messages.push(user("And tomorrow?"));
    let out = run(&anthropic(&server.base), &req).await.unwrap();
    assert_eq!(out.done(), Some(Some("end_turn".into())));
    let body = server.request(0).body;
    assert_eq!(body["system"], json!("Be brief."));
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
                {"type": "text", "text": "Weather and time in Paris? See picture."},
            ]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "call_2", "name": "get_time", "input": {}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_1", "content": "18°C, sunny"},
                {"type": "tool_result", "tool_use_id": "call_2", "content": "14:05"},
                {"type": "text", "text": "And tomorrow?"},
            ]},
        ])
    );
}

#[tokio::test]
async fn anthropic_tool_images_are_blocks_of_the_tool_result() {
    let server = Server::start(vec![streamed(SSE, vec![an_text_body().into_bytes()])]).await;
    run(&anthropic(&server.base), &tool_image_request())
        .await
        .unwrap();
    let body = server.request(0).body;
    assert_eq!(
        body["messages"][2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "call_1", "content": [
                {"type": "text", "text": "18°C, sunny"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/gif", "data": "R0lGODlh"}},
            ]},
            {"type": "tool_result", "tool_use_id": "call_2", "content": "14:05"},
            {"type": "text", "text": "And tomorrow?"},
        ]})
    );
}

#[tokio::test]
async fn anthropic_crlf_framing() {
    let body = an_text_body().replace('\n', "\r\n");
    let chunks = cut_at(body.as_bytes(), &["\r\n", "😀"]);
    let server = Server::start(vec![streamed(SSE, chunks)]).await;
    let out = run(&anthropic(&server.base), &simple_request())
        .await
        .unwrap();
    assert_eq!(out.text(), "Hello wörld 😀 известни");
    assert_eq!(out.done(), Some(Some("end_turn".into())));
}

#[tokio::test]
async fn anthropic_overloaded_error_event_mid_stream() {
    let body = [
        an_message_start(),
        an_text_start(0),
        an_text_delta(0, "Part"),
        an_event("error", json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})),
    ]
    .concat();
    let server = Server::start(vec![streamed(SSE, vec![body.into_bytes()])]).await;
    let out = run(&anthropic(&server.base), &simple_request())
        .await
        .unwrap();
    assert_eq!(out.events, vec![StreamEvent::Text("Part".into())]);
    assert_transient(out.err(), "anthropic: overloaded_error: Overloaded");
}

#[tokio::test]
async fn anthropic_error_statuses_are_classified() {
    let json = [("Content-Type", "application/json")];
    let err = |ty: &str, msg: &str| {
        json!({"type": "error", "error": {"type": ty, "message": msg}}).to_string()
    };
    let server = Server::start(vec![
        fixed(
            "401 Unauthorized",
            &json,
            &err("authentication_error", "invalid x-api-key"),
        ),
        fixed("529 ", &json, &err("overloaded_error", "Overloaded")),
        fixed(
            "429 Too Many Requests",
            &[("Content-Type", "application/json"), ("retry-after", "7")],
            &err(
                "rate_limit_error",
                "Number of request tokens has exceeded your per-minute rate limit",
            ),
        ),
        fixed(
            "400 Bad Request",
            &json,
            &err(
                "invalid_request_error",
                "messages: at least one message is required",
            ),
        ),
    ])
    .await;
    let p = anthropic(&server.base);
    let req = simple_request();
    let e = run(&p, &req).await.unwrap_err();
    assert_eq!(e.message, "anthropic: 401 Unauthorized: invalid x-api-key");
    assert_eq!(e.kind, ErrorKind::Permanent);
    let e = run(&p, &req).await.unwrap_err();
    assert_eq!(e.message, "anthropic: 529 Overloaded: Overloaded");
    assert!(e.is_transient());
    let e = run(&p, &req).await.unwrap_err();
    assert_eq!(transient_after(&e), Some(Duration::from_secs(7)));
    let e = run(&p, &req).await.unwrap_err();
    assert_permanent(
        &e,
        "400 Bad Request: messages: at least one message is required",
    );
}

#[tokio::test]
async fn anthropic_cut_before_message_stop_and_empty_body() {
    let partial = [
        an_message_start(),
        an_text_start(0),
        an_text_delta(0, "Hel"),
    ]
    .concat();
    let server = Server::start(vec![
        streamed_then_cut(SSE, vec![partial.clone().into_bytes()]),
        streamed(SSE, vec![partial.into_bytes()]),
        fixed("200 OK", &[("Content-Type", SSE)], ""),
    ])
    .await;
    let p = anthropic(&server.base);
    for _ in 0..2 {
        let out = run(&p, &simple_request()).await.unwrap();
        assert_eq!(out.text(), "Hel");
        assert_transient(out.err(), "anthropic: stream ended early");
    }
    let out = run(&p, &simple_request()).await.unwrap();
    assert_transient(out.err(), "anthropic: empty response");
}

// ---------------------------------------------------------------- ollama --

const NDJSON: &str = "application/x-ndjson";

fn ol_line(content: &str, done: bool) -> String {
    let mut v = json!({"model": "llama3.2", "created_at": "2025-01-01T00:00:00Z",
                       "message": {"role": "assistant", "content": content}, "done": done});
    if done {
        v["done_reason"] = json!("stop");
        v["total_duration"] = json!(123);
        v["prompt_eval_count"] = json!(26);
        v["eval_count"] = json!(298);
    }
    format!("{v}\n")
}

fn ol_text_body() -> String {
    [
        ol_line("Hello", false),
        ol_line(" wörld 😀 известни", false),
        ol_line("", true),
    ]
    .concat()
}

#[tokio::test]
async fn ollama_text_stream_survives_any_chunking() {
    let body = ol_text_body();
    for n in [1, 3, 64, body.len()] {
        let server = Server::start(vec![streamed(NDJSON, every(body.as_bytes(), n))]).await;
        // An OLLAMA_HOST-style value without scheme.
        let host = server.base.trim_start_matches("http://").to_string();
        let out = run(&ollama(&host), &simple_request()).await.unwrap();
        assert_eq!(out.text(), "Hello wörld 😀 известни", "chunk size {n}");
        assert_eq!(out.done(), Some(Some("stop".into())));
        assert_eq!(
            out.usage(),
            Some(Usage {
                prompt_tokens: Some(26),
                completion_tokens: Some(298),
                cached_tokens: None
            })
        );
        let req = server.request(0);
        assert_eq!(req.path, "/api/chat");
        assert_eq!(req.header("authorization"), None);
        assert_eq!(
            req.body,
            json!({
                "model": "test-model",
                "stream": true,
                "messages": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "Hi"},
                ],
            })
        );
    }
}

#[tokio::test]
async fn ollama_tool_calls_get_ids_and_json_text() {
    let calls = json!({"model": "m", "message": {"role": "assistant", "content": "", "tool_calls": [
        {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
        {"function": {"name": "get_time", "arguments": {}}},
    ]}, "done": false});
    let body = format!("{calls}\r\n\r\n{}", ol_line("", true));
    let server = Server::start(vec![streamed(
        NDJSON,
        cut_at(body.as_bytes(), &["arguments", "\n"]),
    )])
    .await;
    let mut req = simple_request();
    req.tools = weather_tools();
    let out = run(&ollama(&server.base), &req).await.unwrap();
    assert_eq!(
        out.events,
        vec![
            StreamEvent::ToolCall(call("call_0", "get_weather", r#"{"city":"Paris"}"#)),
            StreamEvent::ToolCall(call("call_1", "get_time", "{}")),
            StreamEvent::Usage(Usage {
                prompt_tokens: Some(26),
                completion_tokens: Some(298),
                cached_tokens: None
            }),
            StreamEvent::Done {
                stop_reason: Some("stop".into())
            },
        ]
    );
    assert_eq!(
        server.request(0).body["tools"][0],
        json!({"type": "function", "function": {
            "name": "get_weather", "description": "Weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        }})
    );
}

#[tokio::test]
async fn ollama_tool_results_and_images_on_the_wire() {
    let server = Server::start(vec![streamed(NDJSON, vec![ol_text_body().into_bytes()])]).await;
    let out = run(&ollama(&server.base), &tool_result_request())
        .await
        .unwrap();
    assert_eq!(out.done(), Some(Some("stop".into())));
    assert_eq!(
        server.request(0).body["messages"],
        json!([
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather and time in Paris? See picture.", "images": ["iVBORw0KGgo="]},
            {"role": "assistant", "content": "", "tool_calls": [
                {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
                {"function": {"name": "get_time", "arguments": {}}},
            ]},
            {"role": "tool", "content": "18°C, sunny", "tool_name": "get_weather"},
            {"role": "tool", "content": "14:05", "tool_name": "get_time"},
        ])
    );
}

#[tokio::test]
async fn ollama_tool_images_go_on_the_tool_message() {
    let server = Server::start(vec![streamed(NDJSON, vec![ol_text_body().into_bytes()])]).await;
    run(&ollama(&server.base), &tool_image_request())
        .await
        .unwrap();
    let messages = server.request(0).body["messages"].clone();
    assert_eq!(
        messages.as_array().map(|m| m[3..].to_vec()),
        Some(vec![
            json!({"role": "tool", "content": "18°C, sunny", "tool_name": "get_weather", "images": ["R0lGODlh"]}),
            json!({"role": "tool", "content": "14:05", "tool_name": "get_time"}),
            json!({"role": "user", "content": "And tomorrow?"}),
        ])
    );
}

#[tokio::test]
async fn ollama_errors() {
    let mid = [
        ol_line("Par", false),
        "{\"error\":\"llama runner process has terminated\"}\n".to_string(),
    ]
    .concat();
    let server = Server::start(vec![
        fixed(
            "404 Not Found",
            &[("Content-Type", "application/json")],
            r#"{"error":"model 'nope' not found"}"#,
        ),
        streamed(NDJSON, vec![mid.into_bytes()]),
        streamed_then_cut(NDJSON, vec![ol_line("Hel", false).into_bytes()]),
        fixed(
            "500 Internal Server Error",
            &[("Content-Type", "application/json")],
            r#"{"error":"out of memory"}"#,
        ),
        fixed("200 OK", &[("Content-Type", NDJSON)], ""),
    ])
    .await;
    let p = ollama(&server.base);
    let req = simple_request();
    let e = run(&p, &req).await.unwrap_err();
    assert_eq!(e.message, "ollama: 404 Not Found: model 'nope' not found");
    assert_eq!(e.kind, ErrorKind::Permanent);

    let out = run(&p, &req).await.unwrap();
    assert_eq!(out.text(), "Par");
    assert_transient(
        out.err(),
        "ollama: stream error: llama runner process has terminated",
    );

    let out = run(&p, &req).await.unwrap();
    assert_eq!(out.text(), "Hel");
    assert_transient(out.err(), "stream ended early");

    let e = run(&p, &req).await.unwrap_err();
    assert_transient(&e, "ollama: 500 Internal Server Error: out of memory");

    let out = run(&p, &req).await.unwrap();
    assert_transient(out.err(), "empty response");
}

#[tokio::test]
async fn ollama_invalid_utf8_is_replaced() {
    let mut body = b"{\"message\":{\"content\":\"x\xE2\x82".to_vec();
    body.extend_from_slice(b"y\"},\"done\":false}\n{\"done\":true}\n");
    let server = Server::start(vec![streamed(NDJSON, every(&body, 4))]).await;
    let out = run(&ollama(&server.base), &simple_request()).await.unwrap();
    assert_eq!(out.text(), "x\u{FFFD}y");
    assert_eq!(out.done(), Some(None));
}

// ------------------------------------------------------------------ echo --

fn echo() -> Echo {
    Echo::with_delay(Duration::ZERO)
}

fn schedule_tool() -> ToolSpec {
    ToolSpec {
        name: "schedule_task".into(),
        description: "Schedule a task".into(),
        parameters: json!({"type": "object"}),
    }
}

#[tokio::test]
async fn echo_streams_the_user_text_word_by_word() {
    let req = ChatRequest {
        model: "echo".into(),
        system: None,
        messages: vec![user("Hello there\nsecond line\n```rust\nfn main() {}\n```")],
        tools: vec![],
        text_every: TextPace::new(Duration::from_millis(100)),
    };
    let out = run(&echo(), &req).await.unwrap();
    let text = out.text();
    assert!(text.starts_with("**echo** (offline model"), "{text}");
    assert!(
        text.contains("You said:\n\n> Hello there\n> second line"),
        "{text}"
    );
    assert!(text.contains("```rust\nfn main() {}\n```"), "{text}");
    assert!(
        out.events.len() > 10,
        "streamed in pieces: {:?}",
        out.events.len()
    );
    assert_eq!(out.done(), Some(Some("end_turn".into())));
    assert!(out.tool_calls().is_empty());
    assert!(echo().supports_tools());
    assert_eq!(echo().name(), "echo");
}

#[tokio::test]
async fn echo_long_paste_is_not_streamed_word_by_word() {
    let paste = "word ".repeat(5000);
    let out = run(
        &echo(),
        &ChatRequest {
            model: "echo".into(),
            system: None,
            messages: vec![user(&paste)],
            tools: vec![],
            text_every: TextPace::new(Duration::from_millis(100)),
        },
    )
    .await
    .unwrap();
    assert!(out.events.len() < 400, "{} events", out.events.len());
    assert_eq!(out.text().matches("word").count(), 5000);
}

#[tokio::test]
async fn echo_default_delay_streams_quickly() {
    let t0 = Instant::now();
    let out = run(&Echo::default(), &simple_request()).await.unwrap();
    assert!(out.text().contains("> Hi"));
    assert!(t0.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn echo_schedules_reminders_when_offered_the_tool() {
    let mut req = ChatRequest {
        model: "echo".into(),
        system: None,
        messages: vec![user(
            "Remind me in 1 minute to stretch my legs and drink water",
        )],
        tools: vec![schedule_tool()],
        text_every: TextPace::new(Duration::from_millis(100)),
    };
    let out = run(&echo(), &req).await.unwrap();
    assert_eq!(out.text(), "I'll schedule that.");
    let calls = out.tool_calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name, "schedule_task");
    assert!(!calls[0].id.is_empty());
    let args: Value = serde_json::from_str(&calls[0].arguments).unwrap();
    assert_eq!(
        args,
        json!({"instruction": "stretch my legs and drink water", "at": "in 1 minute", "title": "stretch my legs and drink"})
    );
    assert_eq!(out.done(), Some(Some("tool_use".into())));

    req.messages = vec![user("remind me at 9am to call Bob")];
    let out = run(&echo(), &req).await.unwrap();
    let args: Value = serde_json::from_str(&out.tool_calls()[0].arguments).unwrap();
    assert_eq!(args["at"], "9am");
    assert_eq!(args["instruction"], "call Bob");

    // Without the tool on offer it is just echoed.
    req.tools.clear();
    let out = run(&echo(), &req).await.unwrap();
    assert!(out.tool_calls().is_empty());
    assert!(out.text().contains("> remind me at 9am to call Bob"));
}

#[tokio::test]
async fn echo_answers_tool_results_and_fired_tasks() {
    let mut req = ChatRequest {
        model: "echo".into(),
        system: None,
        messages: vec![
            user("remind me in 5 min to stretch"),
            ChatMessage::Assistant {
                text: "I'll schedule that.".into(),
                tool_calls: vec![call("c1", "schedule_task", "{}")],
                reasoning: None,
            },
            ChatMessage::ToolResult {
                call_id: "c1".into(),
                name: "schedule_task".into(),
                content: r#"{"id":42,"fires_at":"2026-01-01T09:00:00Z"}"#.into(),
                images: vec![],
            },
        ],
        tools: vec![schedule_tool()],
        text_every: TextPace::new(Duration::from_millis(100)),
    };
    let out = run(&echo(), &req).await.unwrap();
    assert_eq!(
        out.text(),
        r#"Scheduled: {"id":42,"fires_at":"2026-01-01T09:00:00Z"}"#
    );
    assert!(out.tool_calls().is_empty(), "must not loop on the tool");

    if let Some(ChatMessage::ToolResult { content, .. }) = req.messages.last_mut() {
        *content = "denied by user".into();
    }
    let out = run(&echo(), &req).await.unwrap();
    assert_eq!(out.text(), "Not scheduled: denied by user");

    req.messages = vec![user("[Scheduled task] stretch")];
    let out = run(&echo(), &req).await.unwrap();
    assert_eq!(out.text(), "Reminder: stretch");
    assert!(out.tool_calls().is_empty());
}

#[tokio::test]
async fn echo_failure_triggers() {
    let mut req = simple_request();
    req.messages = vec![user("please ECHO_FAIL_PERMANENT now")];
    let e = run(&echo(), &req).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Permanent);
    req.messages = vec![user("ECHO_FAIL_TRANSIENT")];
    let e = run(&echo(), &req).await.unwrap_err();
    assert!(e.is_transient());
}

#[tokio::test]
async fn build_picks_the_provider() {
    for (kind, name) in [
        (ProviderKind::Openai, "openai"),
        (ProviderKind::Anthropic, "anthropic"),
        (ProviderKind::Ollama, "ollama"),
        (ProviderKind::Echo, "echo"),
    ] {
        assert_eq!(
            tock::llm::build(spec(kind, "http://127.0.0.1:1", None)).name(),
            name
        );
    }
}

// ----------------------------------------------------------- model lists --

fn ids(list: &[tock::llm::ModelInfo]) -> Vec<&str> {
    list.iter().map(|m| m.id.as_str()).collect()
}

#[tokio::test]
async fn openai_lists_models_with_its_key() {
    let body = json!({"object": "list", "data": [
        {"id": "gpt-4o-mini", "object": "model", "created": 1721172741, "owned_by": "system"},
        {"id": "gpt-4o", "object": "model", "created": 1715367049, "owned_by": "system"},
    ]})
    .to_string();
    let server = Server::start(vec![fixed(
        "200 OK",
        &[("Content-Type", "application/json")],
        &body,
    )])
    .await;
    let list = openai(&format!("{}/v1/", server.base))
        .list_models()
        .await
        .unwrap();
    assert_eq!(ids(&list), ["gpt-4o", "gpt-4o-mini"], "sorted by id");
    let req = server.request(0);
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("GET", "/v1/models")
    );
    assert_eq!(
        req.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
}

#[tokio::test]
async fn anthropic_lists_every_page_of_models() {
    let page = |data: Value, more: bool, last: &str| {
        fixed(
            "200 OK",
            &[("Content-Type", "application/json")],
            &json!({"data": data, "has_more": more, "first_id": "x", "last_id": last}).to_string(),
        )
    };
    let server = Server::start(vec![
        page(
            json!([{"type": "model", "id": "claude-sonnet-4-5", "display_name": "Claude Sonnet 4.5",
                    "created_at": "2025-09-29T00:00:00Z"}]),
            true,
            "claude-sonnet-4-5",
        ),
        page(
            json!([{"type": "model", "id": "claude-haiku-4-5", "display_name": "Claude Haiku 4.5",
                    "created_at": "2025-10-01T00:00:00Z"}]),
            false,
            "claude-haiku-4-5",
        ),
    ])
    .await;
    let list = anthropic(&server.base).list_models().await.unwrap();
    assert_eq!(ids(&list), ["claude-haiku-4-5", "claude-sonnet-4-5"]);
    assert_eq!(list[1].display_name.as_deref(), Some("Claude Sonnet 4.5"));
    let first = server.request(0);
    assert_eq!(first.method, "GET");
    assert_eq!(first.path, "/v1/models?limit=1000");
    assert_eq!(first.header("x-api-key"), Some(KEY));
    assert_eq!(first.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(
        server.request(1).path,
        "/v1/models?limit=1000&after_id=claude-sonnet-4-5"
    );
}

#[tokio::test]
async fn ollama_lists_its_pulled_models_from_api_tags() {
    let body = json!({"models": [
        {"name": "llama3.2:latest", "model": "llama3.2:latest", "modified_at": "2025-01-01T00:00:00Z",
         "size": 2019393189u64, "digest": "a80c4f17acd5", "details": {"family": "llama", "parameter_size": "3.2B"}},
        {"name": "qwen2.5-coder:7b", "model": "qwen2.5-coder:7b", "size": 4683087332u64},
    ]})
    .to_string();
    let server = Server::start(vec![streamed(
        "application/json",
        every(body.as_bytes(), 50),
    )])
    .await;
    let host = server.base.trim_start_matches("http://").to_string();
    let list = ollama(&host).list_models().await.unwrap();
    assert_eq!(ids(&list), ["llama3.2:latest", "qwen2.5-coder:7b"]);
    let req = server.request(0);
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("GET", "/api/tags")
    );
}

#[tokio::test]
async fn a_failed_model_list_is_one_clean_line() {
    let server = Server::start(vec![fixed(
        "401 Unauthorized",
        &[("Content-Type", "application/json")],
        &json!({"error": {"message": format!("Incorrect API key provided: {KEY}"), "type": "invalid_request_error"}})
            .to_string(),
    )])
    .await;
    let e = openai(&format!("{}/v1", server.base))
        .list_models()
        .await
        .unwrap_err();
    assert_clean(&e);
    assert_eq!(e.kind, ErrorKind::Permanent);
    assert!(e.message.contains("401"), "{}", e.message);
}

/// A dummy key such as `x` is not a secret: it is not "redacted" out of
/// the words of an error message.
#[tokio::test]
async fn a_dummy_key_leaves_error_messages_intact() {
    let server = Server::start(vec![fixed(
        "400 Bad Request",
        &[("Content-Type", "application/json")],
        &json!({"error": {"message": "unexpected max_tokens: expected a number", "type": "invalid_request_error"}})
            .to_string(),
    )])
    .await;
    let p = OpenAi::new(spec(
        ProviderKind::Openai,
        &format!("{}/v1", server.base),
        Some("x"),
    ));
    let e = match p.start(&simple_request()).await {
        Err(e) => e,
        Ok(_) => panic!("a 400 must fail"),
    };
    assert!(
        e.message
            .contains("unexpected max_tokens: expected a number"),
        "{}",
        e.message
    );
    assert!(!e.message.contains("<redacted>"), "{}", e.message);
}

/// A key read with whitespace around it (`KEY=" sk-… "` in the
/// environment) is sent trimmed, and taken out of an error that echoes what
/// the server received — which a server's message trims too.
#[tokio::test]
async fn a_key_with_whitespace_around_it_is_sent_trimmed_and_redacted() {
    let echo = |auth: &str| {
        json!({"error": {"message": format!("Incorrect API key provided: {auth}"), "type": "invalid_request_error"}})
            .to_string()
    };
    let json = [("Content-Type", "application/json")];
    // What the server says holds the key as the client sent it; the
    // client must send it trimmed for the 401 to say the trimmed key.
    let server = Server::start(vec![
        fixed("401 Unauthorized", &json, &echo(&format!("{KEY} "))),
        fixed("401 Unauthorized", &json, &echo(&format!(" {KEY}"))),
    ])
    .await;
    for (n, key) in [format!("{KEY} "), format!(" \t{KEY}  ")]
        .iter()
        .enumerate()
    {
        let e = if n == 0 {
            let p = OpenAi::new(spec(ProviderKind::Openai, &server.base, Some(key)));
            run(&p, &simple_request()).await.unwrap_err()
        } else {
            let p = Anthropic::new(spec(ProviderKind::Anthropic, &server.base, Some(key)));
            run(&p, &simple_request()).await.unwrap_err()
        };
        assert!(!e.message.contains("SENTINEL"), "{}", e.message);
        assert!(e.message.ends_with("provided: <redacted>"), "{}", e.message);
    }
    assert_eq!(
        server.request(0).header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(server.request(1).header("x-api-key"), Some(KEY));
}

/// An error body is read up to 64 KB; a key that the cut goes through is
/// taken out whole, never its first bytes left behind — also when the body
/// stops in the middle of the key.
#[tokio::test]
async fn a_key_cut_by_the_error_body_limit_leaves_no_part_behind() {
    const LIMIT: usize = 64 * 1024;
    let lead = "Incorrect API key provided: ";
    // The body: the lead, spaces, then the key with `inside` of its bytes
    // within the 64 KB read.
    let body = |inside: usize| {
        let pad = LIMIT - inside - lead.len();
        format!("{lead}{}{KEY} and more after it", " ".repeat(pad))
    };
    let text = [("Content-Type", "text/plain")];
    let sizes = [4, 12, KEY.len() - 1];
    let mut scripts: Vec<Vec<Step>> = sizes
        .iter()
        .map(|&n| fixed("401 Unauthorized", &text, &body(n)))
        .collect();
    // A body that stops inside the key, before the limit.
    let stopped = format!("{lead}{}", &KEY[..12]);
    scripts.push(vec![
        Step::Write(head(
            "401 Unauthorized",
            &text,
            "Transfer-Encoding: chunked",
        )),
        Step::Write(chunk(stopped.as_bytes())),
    ]);
    let server = Server::start(scripts).await;
    let p = openai(&server.base);
    for n in sizes.iter().map(Some).chain([None]) {
        let e = run(&p, &simple_request()).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::Permanent, "{n:?}: {}", e.message);
        assert!(
            !e.message.contains("sk-S"),
            "{n:?}: part of the key left: {}",
            e.message
        );
        assert!(
            e.message
                .starts_with("openai: 401 Unauthorized: Incorrect API key provided: <redacted>"),
            "{n:?}: {}",
            e.message
        );
    }
    assert_eq!(server.count(), 4);
}

/// A compatible server that does not know `stream_options` (asked for to
/// get usage) is asked again without it, and from then on.
#[tokio::test]
async fn openai_server_refusing_stream_options_is_asked_without() {
    let refusal =
        json!({"error": {"message": "Unrecognized request argument supplied: stream_options",
                                   "type": "invalid_request_error", "param": null, "code": null}})
        .to_string();
    let body = oa_text_body();
    let server = Server::start(vec![
        fixed(
            "400 Bad Request",
            &[("Content-Type", "application/json")],
            &refusal,
        ),
        streamed(SSE, every(body.as_bytes(), 64)),
        streamed(SSE, every(body.as_bytes(), 64)),
    ])
    .await;
    let p = openai(&format!("{}/v1", server.base));
    for _ in 0..2 {
        let out = run(&p, &simple_request()).await.unwrap();
        assert_eq!(out.text(), "Hello wörld 😀 известни");
    }
    assert_eq!(server.count(), 3);
    assert!(server.request(0).body.get("stream_options").is_some());
    assert!(server.request(1).body.get("stream_options").is_none());
    assert!(server.request(2).body.get("stream_options").is_none());
}
