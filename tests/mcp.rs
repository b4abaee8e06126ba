//! MCP tools end to end: tock's manager against a real MCP server written
//! with rmcp's server side (`tests/servers/mcp_test_server.rs`) over stdio and
//! Streamable HTTP, the engine offering its tools to each wire format on a
//! local provider server, the approval policy, `approval_timeout` on a
//! controlled clock, `tock tools` and `tock daemon` on the real binary, and
//! the official third-party servers when `npx` can fetch them.

mod common;
mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tock::config::{Config, ConfigSource};
use tock::engine::tools::Answer;
use tock::engine::{Engine, ManualClock, Options};
use tock::llm::{StreamEvent, ToolCall};
use tock::mcp::{Manager, ServerState};
use tock::store::{ApprovalStatus, MessageStatus, Role, Store};
use tokio::io::AsyncWriteExt;

// ------------------------------------------------------------- helpers --

fn server_bin() -> PathBuf {
    common::mcp_test_server_bin()
}

fn toml_str(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// `[mcp.test]` on stdio, logging its calls to `log`.
fn stdio_server(name: &str, log: &Path, extra: &str) -> String {
    format!(
        "[mcp.{name}]\ncommand = {}\nenv = {{ MCP_TEST_LOG = {} }}\n{extra}\n",
        toml_str(&server_bin().display().to_string()),
        toml_str(&log.display().to_string()),
    )
}

/// The test server over Streamable HTTP, as a separate process (killed on drop).
struct HttpServer {
    child: Child,
    url: String,
}

impl HttpServer {
    fn start(log: &Path) -> Self {
        Self::start_on(log, 0)
    }

    /// On `port` (0: any free one).
    fn start_on(log: &Path, port: u16) -> Self {
        let mut child = Command::new(server_bin())
            .arg("--http")
            .env("MCP_TEST_LOG", log)
            .env("MCP_TEST_PORT", port.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting the HTTP test server");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout");
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the server's URL");
        Self {
            child,
            url: line.trim().to_string(),
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn config(text: &str) -> Config {
    match toml::from_str(text) {
        Ok(c) => c,
        Err(e) => panic!("test config: {e}\n{text}"),
    }
}

fn manager(text: &str) -> Manager {
    Manager::new(
        Arc::new(ConfigSource::from_config(config(text))),
        Duration::from_millis(100),
    )
}

fn log_lines(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

async fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(v) = f() {
            return v;
        }
        if tokio::time::Instant::now() >= deadline {
            panic!("timed out waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn options() -> Options {
    Options {
        watch_db: false,
        clock_check: Duration::from_millis(50),
        mcp_restart_backoff: Duration::from_millis(100),
        ..Options::default()
    }
}

struct Rig {
    engine: Engine,
    clock: Arc<ManualClock>,
    _dir: tempfile::TempDir,
}

fn rig(cfg: Config, provider: Option<Arc<common::Scripted>>) -> Rig {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(&dir.path().join("tock.db")).expect("store");
    let clock = Arc::new(ManualClock::new(common::T0));
    let mut source = ConfigSource::from_config(cfg);
    if let Some(p) = provider {
        source = source.with_provider(p);
    }
    let engine = Engine::new(store, Arc::new(source), clock.clone(), options());
    engine.start();
    Rig {
        engine,
        clock,
        _dir: dir,
    }
}

impl Rig {
    fn conversation(&self, text: &str) -> i64 {
        let now = self.engine.now_ms();
        let conv = self
            .engine
            .store()
            .create_conversation(Some(text), "user", now)
            .expect("conversation");
        self.engine.send_text(conv, text).expect("send");
        conv
    }

    async fn waiting_approval(&self, conv: i64) -> tock::store::Approval {
        let store = self.engine.store().clone();
        wait_for("an approval", || {
            store
                .approvals(conv)
                .ok()?
                .into_iter()
                .find(|a| a.status == ApprovalStatus::Waiting)
        })
        .await
    }

    /// Wait for the model's final answer `text` in `conv`.
    async fn reply(&self, conv: i64, text: &str) {
        let store = self.engine.store().clone();
        wait_for(&format!("the reply {text:?}"), || {
            store
                .messages(conv)
                .ok()?
                .iter()
                .any(|m| {
                    m.role == Role::Assistant
                        && m.status == MessageStatus::Complete
                        && m.content == text
                })
                .then_some(())
        })
        .await
    }

    fn tool_messages(&self, conv: i64) -> Vec<String> {
        self.engine
            .store()
            .messages(conv)
            .unwrap_or_default()
            .into_iter()
            .filter(|m| m.role == Role::Tool)
            .map(|m| m.content)
            .collect()
    }
}

fn call(id: &str, name: &str, args: Value) -> StreamEvent {
    StreamEvent::ToolCall(ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: args.to_string(),
    })
}

/// The tool results a scripted provider was given, across all requests.
fn scripted_results(p: &common::Scripted) -> Vec<String> {
    p.requests()
        .iter()
        .flat_map(|r| r.messages.clone())
        .filter_map(|m| match m {
            tock::llm::ChatMessage::ToolResult { content, .. } => Some(content),
            _ => None,
        })
        .collect()
}

// ------------------------------------------- the manager, stdio and HTTP --

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_server_lists_calls_fails_times_out_and_is_restarted_after_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let m = manager(&stdio_server("test", &log, "timeout_secs = 0.5"));
    assert_eq!(m.snapshot()[0].state, ServerState::NotStarted);
    assert!(
        log_lines(&log).is_empty(),
        "nothing runs before the first use"
    );

    let specs = m.tool_specs().await;
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    for t in [
        "test__echo",
        "test__fail",
        "test__slow",
        "test__crash",
        "test__peek",
        "test__whoami",
    ] {
        assert!(names.contains(&t), "{t} in {names:?}");
    }
    let echo = specs.iter().find(|s| s.name == "test__echo").unwrap();
    assert_eq!(echo.parameters["properties"]["text"]["type"], "string");
    let info = &m.snapshot()[0];
    assert_eq!(info.state, ServerState::Running);
    assert_eq!(info.transport, "stdio");
    assert!(m.read_only("test__peek"));
    assert!(!m.read_only("test__echo"));
    assert_eq!(m.server_of("test__echo").as_deref(), Some("test"));
    assert_eq!(m.server_of("schedule_task"), None);

    let out = m.call("test__echo", r#"{"text":"hello"}"#).await;
    assert_eq!(out.text, "echo: hello");
    assert!(!out.is_error);

    let out = m.call("test__fail", "{}").await;
    assert!(out.is_error);
    assert_eq!(
        out.text,
        json!({"error": "the disk is on fire"}).to_string()
    );

    let out = m.call("test__echo", "[1]").await;
    assert!(
        out.is_error && out.text.contains("JSON object"),
        "{}",
        out.text
    );

    let started = std::time::Instant::now();
    let out = m.call("test__slow", r#"{"ms": 5000}"#).await;
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(
        out.is_error && out.text.contains("did not answer within 0.5s"),
        "{}",
        out.text
    );
    let info = &m.snapshot()[0];
    assert_eq!(info.state, ServerState::Running, "a timeout is not a crash");
    assert!(info.problem.as_deref().unwrap_or("").contains("test__slow"));

    let first_pid = m.call("test__whoami", "{}").await.text;
    let out = m.call("test__crash", "{}").await;
    assert!(
        out.is_error && out.text.contains("stopped during the call"),
        "{}",
        out.text
    );
    assert!(matches!(m.snapshot()[0].state, ServerState::Failed(_)));
    // The next call starts it again (after the back-off).
    let second_pid = m.call("test__whoami", "{}").await.text;
    assert!(second_pid.starts_with("pid "), "{second_pid}");
    assert_ne!(first_pid, second_pid, "a new process");
    assert_eq!(m.snapshot()[0].state, ServerState::Running);
    // A second crash in a row waits longer before the restart.
    let _ = m.call("test__crash", "{}").await;
    let t = std::time::Instant::now();
    let third_pid = m.call("test__whoami", "{}").await.text;
    assert!(
        t.elapsed() >= Duration::from_millis(150),
        "{:?}",
        t.elapsed()
    );
    assert!(third_pid.starts_with("pid ") && third_pid != second_pid);

    let calls = log_lines(&log);
    assert!(calls.contains(&"echo hello".to_string()), "{calls:?}");
    m.shutdown(Duration::from_secs(5)).await;
    assert_eq!(m.snapshot()[0].state, ServerState::NotStarted);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamable_http_server_lists_calls_fails_times_out_and_gets_the_headers() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let server = HttpServer::start(&log);
    let m = manager(&format!(
        "[mcp.web]\nurl = {}\ntimeout_secs = 0.5\nheaders = {{ x-plain = \"visible\" }}\nheaders_cmd = {{ authorization = \"echo Bearer tok-SENTINEL-42\" }}\n",
        toml_str(&server.url)
    ));
    let names: Vec<String> = m.tool_specs().await.into_iter().map(|s| s.name).collect();
    assert!(names.contains(&"web__echo".to_string()), "{names:?}");
    let info = &m.snapshot()[0];
    assert_eq!(
        (info.transport, &info.state),
        ("http", &ServerState::Running)
    );
    assert!(m.read_only("web__peek"));

    assert_eq!(
        m.call("web__echo", r#"{"text":"over http"}"#).await.text,
        "echo: over http"
    );
    assert!(m.call("web__fail", "{}").await.is_error);
    let out = m.call("web__slow", r#"{"ms": 5000}"#).await;
    assert!(
        out.is_error && out.text.contains("did not answer"),
        "{}",
        out.text
    );
    // After a call that timed out, the next starts a new session: a server
    // started again may answer the old one with an error the client never
    // hands to the call (every call then waited its whole timeout, until
    // tock was restarted).
    assert_eq!(m.call("web__session", "{}").await.text, "session 2");
    assert_eq!(
        m.call("web__header", r#"{"text":"x-plain"}"#).await.text,
        "visible"
    );
    // The server got the value headers_cmd printed: it gives back exactly
    // that, which reaches no one but as `<redacted>`.
    assert_eq!(
        m.call("web__header", r#"{"text":"authorization"}"#)
            .await
            .text,
        "<redacted>"
    );
    let listed = serde_json::to_string(&m.snapshot()).unwrap();
    assert!(!listed.contains("SENTINEL"), "{listed}");
    m.shutdown(Duration::from_secs(5)).await;
}

/// An HTTP server started again (its sessions gone) is used again without
/// restarting tock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_server_started_again_is_connected_to_again() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let server = HttpServer::start(&log);
    let m = manager(&format!(
        "[mcp.web]\nurl = {}\ntimeout_secs = 1\n",
        toml_str(&server.url)
    ));
    assert_eq!(
        m.call("web__echo", r#"{"text":"one"}"#).await.text,
        "echo: one"
    );
    let port: u16 = server
        .url
        .rsplit(':')
        .next()
        .and_then(|p| p.split('/').next())
        .and_then(|p| p.parse().ok())
        .expect("the port");
    drop(server);
    let again = HttpServer::start_on(&log, port);
    assert!(
        again.url.ends_with(&format!(":{port}/mcp")),
        "{}",
        again.url
    );
    // At most one call is lost to the old session; then it works again.
    let first = m.call("web__echo", r#"{"text":"two"}"#).await;
    let mut texts = vec![first.text.clone()];
    if first.is_error {
        texts.push(m.call("web__echo", r#"{"text":"three"}"#).await.text);
    }
    assert!(
        texts.last().is_some_and(|t| t.starts_with("echo: ")),
        "{texts:?}"
    );
    assert_eq!(m.snapshot()[0].state, ServerState::Running);
    m.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_that_cannot_start_or_speak_garbage_fail_with_one_line_and_keep_their_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let cfg = format!(
        "[mcp.missing]\ncommand = \"/nonexistent/tock-mcp-server\"\n\n\
         [mcp.garbage]\ncommand = {}\nargs = [\"--garbage\"]\ntimeout_secs = 1\n\n\
         [mcp.leaky]\ncommand = \"sh\"\nargs = [\"-c\", \"echo token is $MY_TOKEN >&2; exit 1\"]\nenv_cmd = {{ MY_TOKEN = \"echo s3cr3t-SENTINEL\" }}\n\n\
         [mcp.off]\ncommand = \"/nonexistent\"\nenabled = false\n\n\
         {}",
        toml_str(&server_bin().display().to_string()),
        stdio_server(
            "envy",
            &log,
            "env_cmd = { FROM_CMD = \"printf 'v-SENTINEL-7'\" }"
        ),
    );
    let m = manager(&cfg);
    let names: Vec<String> = m.tool_specs().await.into_iter().map(|s| s.name).collect();
    assert!(names.iter().all(|n| n.starts_with("envy__")), "{names:?}");
    let by_name = |n: &str| {
        m.snapshot()
            .into_iter()
            .find(|s| s.name == n)
            .expect("listed")
    };
    for n in ["missing", "garbage", "leaky"] {
        match by_name(n).state {
            ServerState::Failed(reason) => {
                assert!(!reason.contains('\n'), "{reason}");
                assert!(!reason.contains("s3cr3t"), "{reason}");
                if n == "missing" {
                    assert!(reason.contains("cannot run"), "{reason}");
                }
            }
            other => panic!("{n}: {other:?}"),
        }
    }
    assert_eq!(by_name("off").state, ServerState::Disabled);
    let out = m.call("missing__anything", "{}").await;
    assert!(out.is_error && out.text.contains("missing"), "{}", out.text);
    assert!(m.call("off__x", "{}").await.text.contains("disabled"));
    // env_cmd's value reached the server, and shows nowhere.
    let out = m
        .call(
            "envy__has_env",
            r#"{"name":"FROM_CMD","value":"v-SENTINEL-7"}"#,
        )
        .await;
    assert_eq!(out.text, "yes");
    let listed = serde_json::to_string(&m.snapshot()).unwrap();
    assert!(!listed.contains("SENTINEL"), "{listed}");
    let debug = format!("{:?}", config(&cfg));
    assert!(
        !debug.contains("SENTINEL") && !debug.contains("calls.log"),
        "{debug}"
    );
    m.shutdown(Duration::from_secs(5)).await;
}

/// The secrets of `leaky_server`: one printed by `env_cmd`, one literal.
const CMD_SECRET: &str = "MCPSECRETVALUE42";
const LITERAL_SECRET: &str = "Literal-s3cret-0042";

/// `[mcp.NAME]`: the test server giving away the values of its `TOKEN`
/// (from `env_cmd`) and `OTHER` (literal) everywhere it can.
fn leaky_server(name: &str, log: &Path) -> String {
    format!(
        "[mcp.{name}]\ncommand = {}\nenv = {{ MCP_TEST_LOG = {}, MCP_TEST_LEAK = \"TOKEN,OTHER\", OTHER = \"{LITERAL_SECRET}\", LEVEL = \"info\" }}\nenv_cmd = {{ TOKEN = \"echo {CMD_SECRET}\" }}\n",
        toml_str(&server_bin().display().to_string()),
        toml_str(&log.display().to_string()),
    )
}

fn assert_no_mcp_secret(what: &str, text: &str) {
    for secret in [CMD_SECRET, LITERAL_SECRET] {
        assert!(!text.contains(secret), "{what} shows {secret}: {text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_server_says_never_holds_its_env_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let m = manager(&leaky_server("sec", &log));
    let specs = m.tool_specs().await;
    let offered = format!("{specs:?}");
    assert_no_mcp_secret("the tools offered", &offered);
    let leak = specs.iter().find(|s| s.name == "sec__leak").expect("leak");
    assert!(
        leak.description.ends_with("(uses <redacted> <redacted>)"),
        "{}",
        leak.description
    );
    assert_eq!(leak.parameters["description"], "key <redacted> <redacted>");
    let listed = serde_json::to_string(&m.snapshot()).unwrap();
    assert_no_mcp_secret("the snapshot", &listed);

    // A tool whose name holds a secret is offered redacted, and calls it.
    let echo = specs
        .iter()
        .find(|s| s.name.starts_with("sec__echo"))
        .expect("echo");
    assert_eq!(echo.name, "sec__echo__redacted___redacted_");
    let out = m.call(&echo.name, r#"{"text":"hi"}"#).await;
    assert_eq!(out.text, "echo: hi");

    for (how, want) in [
        ("error", "auth failed using TOKEN=<redacted> <redacted>"),
        ("parts", "text <redacted> <redacted>"),
        ("structured", r#""token":"<redacted> <redacted>""#),
        ("rpc", "bad token <redacted> <redacted>"),
    ] {
        let out = m.call("sec__leak", &json!({"how": how}).to_string()).await;
        assert_no_mcp_secret(how, &out.text);
        assert!(out.text.contains(want), "{how}: {}", out.text);
        assert_eq!(out.is_error, how == "error" || how == "rpc", "{how}");
    }
    let out = m
        .call("sec__leak", &json!({"how": "parts"}).to_string())
        .await;
    for part in [
        "--- file:///<redacted> <redacted> ---\nresource <redacted> <redacted>",
        "[resource link <redacted> <redacted> (file:///link/<redacted> <redacted>)]",
        "[image image/x-<redacted> <redacted>:",
        "[audio audio/x-<redacted> <redacted>:",
    ] {
        assert!(out.text.contains(part), "{part} in {}", out.text);
    }
    // A literal value that is no secret (`LEVEL = "info"`) mangles nothing.
    let out = m.call(&echo.name, r#"{"text":"info: 3 files"}"#).await;
    assert_eq!(out.text, "echo: info: 3 files");
    m.shutdown(Duration::from_secs(5)).await;
}

// --------------------------------------------- the engine, each wire format --

#[derive(Clone, Copy, Debug)]
enum Wire {
    OpenAi,
    Anthropic,
    Ollama,
}

/// A provider server on 127.0.0.1 speaking one wire format. The model it
/// plays calls a tool (`test__echo` unless told otherwise) in a
/// conversation without a tool result yet and answers "done" once it has
/// one.
struct WireServer {
    base: String,
    bodies: Arc<Mutex<Vec<Value>>>,
    /// How many requests carrying a tool result are still to be refused
    /// with a 503 (before anything is accepted).
    refuse: Arc<std::sync::atomic::AtomicUsize>,
}

fn has_tool_result(body: &Value) -> bool {
    body["messages"].as_array().into_iter().flatten().any(|m| {
        m["role"] == "tool"
            || m["content"]
                .as_array()
                .is_some_and(|c| c.iter().any(|p| p["type"] == "tool_result"))
    })
}

/// The tool results in a request, in any of the three formats.
fn tool_results(body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for m in body["messages"].as_array().into_iter().flatten() {
        if m["role"] == "tool" {
            out.push(m["content"].as_str().unwrap_or_default().to_string());
        }
        for p in m["content"].as_array().into_iter().flatten() {
            if p["type"] == "tool_result" {
                out.push(p["content"].as_str().unwrap_or_default().to_string());
            }
        }
    }
    out
}

fn offered(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().or(t["name"].as_str()))
        .map(str::to_string)
        .collect()
}

fn wire_reply(wire: Wire, text: &str, call: Option<(&str, &str, Value)>) -> (String, String) {
    match wire {
        Wire::OpenAi => {
            let chunk = |delta: Value, finish: Option<&str>| {
                format!(
                    "data: {}\n\n",
                    json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
                           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
                )
            };
            let mut s = chunk(json!({"role": "assistant", "content": text}), None);
            let finish = if let Some((id, name, args)) = &call {
                s.push_str(&chunk(
                    json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
                       "function": {"name": name, "arguments": args.to_string()}}]}),
                    None,
                ));
                "tool_calls"
            } else {
                "stop"
            };
            s.push_str(&chunk(json!({}), Some(finish)));
            s.push_str("data: [DONE]\n\n");
            ("text/event-stream".into(), s)
        }
        Wire::Anthropic => {
            let ev = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
            let mut s = ev(
                "message_start",
                json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                   "content": [], "model": "m", "stop_reason": null, "usage": {"input_tokens": 1, "output_tokens": 1}}}),
            );
            let mut index = 0;
            if !text.is_empty() {
                s.push_str(&ev("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})));
                s.push_str(&ev("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}})));
                s.push_str(&ev(
                    "content_block_stop",
                    json!({"type": "content_block_stop", "index": 0}),
                ));
                index = 1;
            }
            let stop = if let Some((id, name, args)) = &call {
                s.push_str(&ev(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
                ));
                s.push_str(&ev(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": args.to_string()}}),
                ));
                s.push_str(&ev(
                    "content_block_stop",
                    json!({"type": "content_block_stop", "index": index}),
                ));
                "tool_use"
            } else {
                "end_turn"
            };
            s.push_str(&ev("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 2}})));
            s.push_str(&ev("message_stop", json!({"type": "message_stop"})));
            ("text/event-stream".into(), s)
        }
        Wire::Ollama => {
            let mut msg = json!({"role": "assistant", "content": text});
            if let Some((_, name, args)) = &call {
                msg["tool_calls"] = json!([{"function": {"name": name, "arguments": args}}]);
            }
            let s = format!(
                "{}\n{}\n",
                json!({"model": "m", "message": msg, "done": false}),
                json!({"model": "m", "message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop"})
            );
            ("application/x-ndjson".into(), s)
        }
    }
}

impl WireServer {
    async fn start(wire: Wire) -> Self {
        Self::calling(wire, "test__echo", json!({"text": "hi"})).await
    }

    async fn calling(wire: Wire, tool: &'static str, args: Value) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let bodies: Arc<Mutex<Vec<Value>>> = Arc::default();
        let recorded = bodies.clone();
        let refuse: Arc<std::sync::atomic::AtomicUsize> = Arc::default();
        let refusing = refuse.clone();
        tokio::spawn(async move {
            let mut n = 0usize;
            while let Ok((mut sock, _)) = listener.accept().await {
                n += 1;
                let recorded = recorded.clone();
                let refusing = refusing.clone();
                let call_id = format!("call_{n}");
                let args = args.clone();
                tokio::spawn(async move {
                    let Some(body) = read_body(&mut sock).await else {
                        return;
                    };
                    recorded.lock().unwrap().push(body.clone());
                    use std::sync::atomic::Ordering;
                    if has_tool_result(&body)
                        && refusing
                            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                            .is_ok()
                    {
                        let payload = r#"{"error":{"message":"busy, try later"}}"#;
                        let head = format!(
                            "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                            payload.len()
                        );
                        let _ = sock.write_all(head.as_bytes()).await;
                        let _ = sock.write_all(payload.as_bytes()).await;
                        let _ = sock.shutdown().await;
                        return;
                    }
                    let (ctype, payload) = if has_tool_result(&body) {
                        wire_reply(wire, "done", None)
                    } else {
                        wire_reply(wire, "", Some((&call_id, tool, args)))
                    };
                    let head = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                        payload.len()
                    );
                    let _ = sock.write_all(head.as_bytes()).await;
                    let _ = sock.write_all(payload.as_bytes()).await;
                    let _ = sock.shutdown().await;
                });
            }
        });
        let base = match wire {
            Wire::OpenAi => format!("http://{addr}/v1"),
            _ => format!("http://{addr}"),
        };
        Self {
            base,
            bodies,
            refuse,
        }
    }

    fn bodies(&self) -> Vec<Value> {
        self.bodies.lock().unwrap().clone()
    }
}

async fn read_body(sock: &mut tokio::net::TcpStream) -> Option<Value> {
    let req = common::read_http_request(sock).await?;
    serde_json::from_slice(&req.body).ok()
}

async fn approve_and_deny_on(wire: Wire) {
    let server = WireServer::start(wire).await;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let provider = match wire {
        Wire::OpenAi => "openai",
        Wire::Anthropic => "anthropic",
        Wire::Ollama => "ollama",
    };
    let cfg = config(&format!(
        "default_model = \"m\"\n[models.m]\nprovider = \"{provider}\"\nbase_url = {}\napi_key = \"sk-test\"\n\n{}",
        toml_str(&server.base),
        stdio_server("test", &log, "")
    ));
    let rig = rig(cfg, None);

    // Approve: the call runs once approved, its result goes back, the reply continues.
    let conv = rig.conversation("please echo");
    let a = rig.waiting_approval(conv).await;
    assert_eq!(a.tool, "test__echo");
    let summary: Value = serde_json::from_str(&a.summary).unwrap();
    assert_eq!(
        summary,
        json!({"server": "test", "tool": "echo", "arguments": {"text": "hi"}})
    );
    assert!(log_lines(&log).is_empty(), "nothing runs before approval");
    let first = &server.bodies()[0];
    let tools = offered(first);
    assert!(
        tools.contains(&"test__echo".to_string()) && tools.contains(&"schedule_task".to_string()),
        "{wire:?}: {tools:?}"
    );
    rig.engine.answer_approval(a.id, true).unwrap();
    rig.reply(conv, "done").await;
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 2, "{wire:?}");
    assert_eq!(tool_results(&bodies[1]), ["echo: hi"], "{wire:?}");
    let a = rig.engine.store().approval(a.id).unwrap().unwrap();
    assert_eq!(a.status, ApprovalStatus::Approved);
    assert_eq!(a.result.as_deref(), Some("echo: hi"));
    assert_eq!(rig.tool_messages(conv), ["echo: hi"]);
    assert_eq!(log_lines(&log), ["echo hi"]);

    // Deny: nothing runs, the model reads the refusal and its reason.
    let conv = rig.conversation("echo again");
    let a = rig.waiting_approval(conv).await;
    rig.engine
        .answer_approval_with(
            a.id,
            &Answer::Deny {
                reason: Some("not now".into()),
            },
        )
        .unwrap();
    rig.reply(conv, "done").await;
    let bodies = server.bodies();
    let refusal = tool_results(&bodies[3]);
    assert_eq!(refusal.len(), 1, "{wire:?}: {refusal:?}");
    assert!(
        refusal[0].contains("declined") && refusal[0].contains("not now"),
        "{refusal:?}"
    );
    assert_eq!(log_lines(&log), ["echo hi"], "the denied call never ran");
    rig.engine.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_approve_runs_the_mcp_call_and_deny_tells_the_model() {
    approve_and_deny_on(Wire::OpenAi).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_approve_runs_the_mcp_call_and_deny_tells_the_model() {
    approve_and_deny_on(Wire::Anthropic).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ollama_approve_runs_the_mcp_call_and_deny_tells_the_model() {
    approve_and_deny_on(Wire::Ollama).await;
}

// ------------------------------------------------------ images from tools --

/// The 1x1 PNG the test server's `shot` tool returns (with "a red dot").
const SHOT_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

/// What a model without vision reads instead of the image.
const SHOT_NOTE: &str = "a red dot\n[image image/png, 69 B]\n[the tool returned an image (image/png, 69 B); it is not shown to you: this model does not take images]";

/// The result of the `shot` call in a request carries the image in the
/// shape of `wire` (vision), or only the note and no image data anywhere.
fn assert_shot_in(wire: Wire, body: &Value, vision: bool) {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    if !vision {
        assert_eq!(tool_results(body), [SHOT_NOTE], "{wire:?}: {body:#}");
        assert!(
            !body.to_string().contains(SHOT_PNG),
            "{wire:?}: no image for a model without vision: {body:#}"
        );
        assert!(
            !body.to_string().contains("image_url") && !body.to_string().contains("\"images\""),
            "{wire:?}: {body:#}"
        );
        return;
    }
    match wire {
        Wire::OpenAi => {
            let i = messages
                .iter()
                .position(|m| m["role"] == "tool")
                .unwrap_or_else(|| panic!("no tool message: {body:#}"));
            assert_eq!(messages[i]["tool_call_id"], "call_1");
            assert_eq!(
                messages[i]["content"],
                "a red dot\n[image image/png, 69 B]\n[1 image returned: in the next message]"
            );
            let next = &messages[i + 1];
            assert_eq!(next["role"], "user", "{body:#}");
            let parts = next["content"].as_array().cloned().unwrap_or_default();
            assert_eq!(parts.len(), 2, "{next:#}");
            assert_eq!(parts[0]["type"], "text");
            let says = parts[0]["text"].as_str().unwrap_or_default();
            assert!(
                says.contains("test__shot") && says.contains("call_1"),
                "{says}"
            );
            assert_eq!(
                parts[1],
                json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{SHOT_PNG}")}})
            );
        }
        Wire::Anthropic => {
            let result = messages
                .iter()
                .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
                .find(|b| b["type"] == "tool_result")
                .unwrap_or_else(|| panic!("no tool_result: {body:#}"));
            assert_eq!(result["tool_use_id"], "call_1");
            assert_eq!(
                result["content"],
                json!([
                    {"type": "text", "text": "a red dot\n[image image/png, 69 B]"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": SHOT_PNG}},
                ])
            );
        }
        Wire::Ollama => {
            let m = messages
                .iter()
                .find(|m| m["role"] == "tool")
                .unwrap_or_else(|| panic!("no tool message: {body:#}"));
            assert_eq!(m["content"], "a red dot\n[image image/png, 69 B]");
            assert_eq!(m["tool_name"], "test__shot");
            assert_eq!(m["images"], json!([SHOT_PNG]));
        }
    }
}

/// `shot` runs (read-only, allowed), its image is stored with the tool
/// message and reaches the next request in the wire's shape (or as a note
/// without vision); an engine started again on the same database sends it
/// again with the next message.
async fn tool_images_on(wire: Wire, vision: bool) {
    let server = WireServer::calling(wire, "test__shot", json!({})).await;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let provider = match wire {
        Wire::OpenAi => "openai",
        Wire::Anthropic => "anthropic",
        Wire::Ollama => "ollama",
    };
    let cfg_text = format!(
        "default_model = \"m\"\n[models.m]\nprovider = \"{provider}\"\nbase_url = {}\napi_key = \"sk-test\"\nvision = {vision}\n\n[approvals]\nallow_read_only = true\n\n{}",
        toml_str(&server.base),
        stdio_server("test", &log, "")
    );
    let rig = rig(config(&cfg_text), None);
    let conv = rig.conversation("take a shot");
    rig.reply(conv, "done").await;
    assert_eq!(log_lines(&log), ["shot "]);
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 2, "{wire:?}");
    assert_shot_in(wire, &bodies[1], vision);
    // Stored with the tool message, as a user message's attachments are.
    let tool = rig
        .engine
        .store()
        .messages(conv)
        .unwrap()
        .into_iter()
        .find(|m| m.role == Role::Tool)
        .expect("the tool message");
    // Its mark is in the result as stored and shown; never its bytes.
    assert_eq!(tool.content, "a red dot\n[image image/png, 69 B]");
    let infos = tock::files::attachment_infos(tool.parts_json.as_deref());
    assert_eq!(infos.len(), 1, "{:?}", tool.parts_json);
    assert_eq!(infos[0].mime, "image/png");
    assert_eq!(infos[0].bytes, 69);
    assert!(tool.parts_json.as_deref().unwrap_or("").contains(SHOT_PNG));
    rig.engine.shutdown(Duration::from_secs(5)).await;

    // A new engine on the same database: the history it rebuilds from the
    // store still carries the image.
    let store = Store::open(&rig._dir.path().join("tock.db")).expect("store again");
    let again = Engine::new(
        store,
        Arc::new(ConfigSource::from_config(config(&cfg_text))),
        Arc::new(ManualClock::new(common::T0 + 60_000)),
        options(),
    );
    again.start();
    again.send_text(conv, "and now?").expect("send");
    let reader = again.store().clone();
    wait_for("the second reply", || {
        let done = reader
            .messages(conv)
            .ok()?
            .iter()
            .filter(|m| m.role == Role::Assistant && m.content == "done")
            .count();
        (done == 2).then_some(())
    })
    .await;
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 3, "{wire:?}");
    assert_shot_in(wire, &bodies[2], vision);
    assert_eq!(log_lines(&log), ["shot "], "the tool ran once");
    again.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_gets_a_tool_image_as_a_user_message_after_the_tool_message() {
    tool_images_on(Wire::OpenAi, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_gets_a_tool_image_inside_the_tool_result() {
    tool_images_on(Wire::Anthropic, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ollama_gets_a_tool_image_on_the_tool_message() {
    tool_images_on(Wire::Ollama, true).await;
}

/// The engine stops after the image's result was recorded and before any
/// request carrying it was accepted (the provider refused it with a 503);
/// the next engine on the same database sends the image.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_between_the_tool_result_and_the_next_request_keeps_the_image() {
    let wire = Wire::OpenAi;
    let server = WireServer::calling(wire, "test__shot", json!({})).await;
    server.refuse.store(1, std::sync::atomic::Ordering::SeqCst);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let cfg_text = format!(
        "default_model = \"m\"\n[models.m]\nprovider = \"openai\"\nbase_url = {}\napi_key = \"sk-test\"\nvision = true\n\n[approvals]\nallow_read_only = true\n\n{}",
        toml_str(&server.base),
        stdio_server("test", &log, "")
    );
    let rig = rig(config(&cfg_text), None);
    let conv = rig.conversation("take a shot");
    let store = rig.engine.store().clone();
    let db = rig._dir.path().join("tock.db");
    // The continuation was refused and waits for its back-off (on the
    // engine's clock, which does not move).
    wait_for("the refused continuation", || {
        let sql = rusqlite::Connection::open(&db).ok()?;
        let waiting: i64 = sql
            .query_row(
                "SELECT COUNT(*) FROM outbox WHERE kind = 'regenerate' AND status = 'pending' AND next_attempt_at IS NOT NULL",
                [],
                |r| r.get(0),
            )
            .ok()?;
        (waiting == 1).then_some(())
    })
    .await;
    assert_eq!(server.bodies().len(), 2);
    rig.engine.shutdown(Duration::from_secs(5)).await;
    assert!(
        !store
            .messages(conv)
            .unwrap()
            .iter()
            .any(|m| m.role == Role::Assistant && m.content == "done"),
        "nothing was accepted after the tool result"
    );

    let store = Store::open(&db).expect("store again");
    let again = Engine::new(
        store,
        Arc::new(ConfigSource::from_config(config(&cfg_text))),
        Arc::new(ManualClock::new(common::T0 + 3_600_000)),
        options(),
    );
    again.start();
    let reader = again.store().clone();
    wait_for("the reply after the restart", || {
        reader
            .messages(conv)
            .ok()?
            .iter()
            .any(|m| m.role == Role::Assistant && m.content == "done")
            .then_some(())
    })
    .await;
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 3);
    assert_shot_in(wire, &bodies[2], true);
    assert_eq!(log_lines(&log), ["shot "], "the tool ran once");
    again.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_without_vision_reads_that_a_tool_image_was_not_shown() {
    for wire in [Wire::OpenAi, Wire::Anthropic, Wire::Ollama] {
        tool_images_on(wire, false).await;
    }
}

// ------------------------------------------------------------ the policy --

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_tools_run_without_asking_when_allowed_and_rules_still_decide() {
    use common::{Scripted, Step, done, text};
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let provider = Scripted::new(vec![
        Step::Reply(vec![
            call("c1", "test__peek", json!({})),
            call("c2", "test__fail", json!({})),
            call("c3", "test__echo", json!({"text": "ask me"})),
            done(),
        ]),
        Step::Reply(vec![text("fine"), done()]),
    ]);
    let cfg = config(&format!(
        "[approvals]\nallow_read_only = true\nrules = {{ \"test__f*\" = \"deny\" }}\n\n{}",
        stdio_server("test", &log, "")
    ));
    let rig = rig(cfg, Some(provider.clone()));
    let conv = rig.conversation("look");
    let a = rig.waiting_approval(conv).await;
    assert_eq!(a.tool, "test__echo", "only the unmarked tool asks");
    let approvals = rig.engine.store().approvals(conv).unwrap();
    assert_eq!(approvals.len(), 1);
    // The read-only call runs without asking, beside the approval: its
    // result is saved when the server answers, which may come just after
    // the approval shows.
    let results = wait_for("the read-only call's result and the refusal", || {
        let results = rig.tool_messages(conv);
        let refused = results
            .iter()
            .any(|r| r.contains("approval policy does not allow test__fail"));
        (refused && results.contains(&"nothing changed".to_string())).then_some(results)
    })
    .await;
    assert_eq!(log_lines(&log), ["peek "], "the read-only call ran at once");
    assert!(
        results
            .iter()
            .any(|r| r.contains("approval policy does not allow test__fail")),
        "{results:?}"
    );
    rig.engine
        .answer_approval_with(a.id, &Answer::Approve { always: true })
        .unwrap();
    rig.reply(conv, "fine").await;
    assert!(scripted_results(&provider).contains(&"echo: ask me".to_string()));
    assert_eq!(
        tock::engine::policy::parse_saved(
            rig.engine
                .store()
                .setting(tock::engine::policy::SAVED_RULES_KEY)
                .unwrap()
                .as_deref()
        ),
        ["test__echo"]
    );
    rig.engine.shutdown(Duration::from_secs(5)).await;
}

/// A call to a tool its server did not list (`test__rm_rf` where `test`
/// has no such tool) is refused at once, as a call to no server is: it
/// was put to the user as "Allow test__rm_rf?", with its arguments shown
/// as though it would run, and failed only once approved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_to_a_tool_the_server_does_not_have_is_refused_without_asking() {
    use common::{Scripted, Step, done, text};
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let provider = Scripted::new(vec![
        Step::Reply(vec![
            call("c1", "test__rm_rf", json!({"path": "/"})),
            call("c2", "nosuch__x", json!({})),
            done(),
        ]),
        Step::Reply(vec![text("understood"), done()]),
    ]);
    let cfg = config(&stdio_server("test", &log, ""));
    let rig = rig(cfg, Some(provider.clone()));
    let conv = rig.conversation("clean up");
    rig.reply(conv, "understood").await;
    assert!(rig.engine.store().approvals(conv).unwrap().is_empty());
    let results = scripted_results(&provider);
    assert_eq!(
        results,
        [
            "{\"error\":\"unknown tool test__rm_rf: the MCP server test has no such tool\"}",
            "{\"error\":\"unknown tool nosuch__x\"}"
        ]
    );
    assert!(log_lines(&log).is_empty(), "nothing ran");
    rig.engine.shutdown(Duration::from_secs(5)).await;
}

/// A key the model puts in a call's arguments: a call that runs without
/// asking gets it as sent, but the call is stored with it replaced, and so
/// is the result of a server that echoes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_in_a_call_s_arguments_reaches_the_tool_but_is_stored_redacted() {
    use common::{Scripted, Step, done, text};
    let key = "sk-testSECRETkey123456";
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let provider = Scripted::new(vec![
        Step::Reply(vec![
            call("c1", "test__echo", json!({"text": format!("use {key}")})),
            done(),
        ]),
        Step::Reply(vec![text("echoed"), done()]),
    ]);
    let cfg = config(&format!(
        "default_model = \"m\"\n[models.m]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key = \"{key}\"\n\n\
         [approvals]\nrules = {{ \"test__echo\" = \"allow\" }}\n\n{}",
        stdio_server("test", &log, "")
    ));
    let rig = rig(cfg, Some(provider.clone()));
    let conv = rig.conversation("echo my key");
    rig.reply(conv, "echoed").await;
    assert_eq!(log_lines(&log), [format!("echo use {key}")], "sent as is");
    assert_eq!(rig.tool_messages(conv), ["echo: use <redacted>"]);
    let stored = rig.engine.store().messages(conv).unwrap();
    let calls: Vec<ToolCall> = stored.iter().flat_map(|m| m.tool_calls()).collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].arguments, r#"{"text":"use <redacted>"}"#);
    assert_eq!(scripted_results(&provider), ["echo: use <redacted>"]);
    rig.engine.shutdown(Duration::from_secs(5)).await;
}

// ------------------------------------------------ stopping a running call --

/// The notes the conversation shows (never sent to the model).
fn notes(engine: &Engine, conv: i64) -> Vec<String> {
    engine
        .store()
        .messages(conv)
        .unwrap_or_default()
        .into_iter()
        .filter(|m| m.role == Role::Notice)
        .map(|m| m.content)
        .collect()
}

/// Esc (the engine's stop) on a call that runs until it is cancelled: the
/// server is told to cancel it, the call's result says the user stopped
/// it, the turn ends there as a stopped reply's does (no further model
/// round, a note in the conversation), and nothing is left running.
async fn stop_a_running_call(approve: bool) {
    use common::{Scripted, Step, done, text};
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let provider = Scripted::new(vec![
        Step::Reply(vec![call("c1", "test__block", json!({})), done()]),
        Step::Reply(vec![text("went on after a stop"), done()]),
    ]);
    let rule = if approve { "ask" } else { "allow" };
    let cfg = config(&format!(
        "[approvals]\nrules = {{ \"test__block\" = \"{rule}\" }}\n\n{}",
        stdio_server("test", &log, "")
    ));
    let rig = rig(cfg, Some(provider.clone()));
    let conv = rig.conversation("block");
    if approve {
        let a = rig.waiting_approval(conv).await;
        rig.engine.answer_approval(a.id, true).unwrap();
    }
    let store = rig.engine.store().clone();
    // While it runs, every process on the database sees it.
    let run = wait_for("the running call", || {
        store
            .tool_runs()
            .ok()?
            .into_iter()
            .find(|r| r.conversation_id == conv)
    })
    .await;
    assert_eq!(run.tool, "test__block");
    assert_eq!(run.call_id, "c1");
    assert_eq!(run.owner, rig.engine.owner());
    wait_for("the server to run it", || {
        (log_lines(&log) == ["block "]).then_some(())
    })
    .await;
    assert!(rig.engine.runs_tool_call_in(conv));
    assert!(rig.engine.stop(conv), "a running call is something to stop");
    let results = wait_for("the stopped call's result", || {
        let r = rig.tool_messages(conv);
        (!r.is_empty()).then_some(r)
    })
    .await;
    assert_eq!(results.len(), 1, "{results:?}");
    let v: Value = serde_json::from_str(&results[0]).expect("a JSON result");
    assert_eq!(v["error"], "stopped by the user while it ran", "{v}");
    wait_for("the server to hear of the cancel", || {
        (log_lines(&log) == ["block ", "block cancelled"]).then_some(())
    })
    .await;
    assert!(store.tool_runs().unwrap().is_empty(), "nothing runs now");
    assert!(!rig.engine.runs_tool_call_in(conv));
    assert_eq!(
        notes(&rig.engine, conv),
        ["The turn was ended: you stopped test__block while it ran."]
    );
    if approve {
        let a = store.approvals(conv).unwrap();
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].status, ApprovalStatus::Approved);
    }
    // The turn ended: no request after the first, nothing left to send.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(provider.count(), 1, "the model was not asked again");
    assert!(
        store
            .list_items(true)
            .unwrap()
            .iter()
            .all(|i| i.status != tock::store::Status::Pending),
        "nothing waits to go"
    );
    assert!(!rig.engine.stop(conv), "nothing runs to stop");
    // The next message goes on from there: the model reads the call and
    // that it was stopped.
    rig.engine.send_text(conv, "never mind").unwrap();
    rig.reply(conv, "went on after a stop").await;
    assert_eq!(
        scripted_results(&provider),
        [results[0].clone()],
        "the model reads the stopped result once"
    );
    rig.engine.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowed_call_running_is_stopped_by_the_user_and_the_turn_ends() {
    stop_a_running_call(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_call_running_is_stopped_by_the_user_and_the_turn_ends() {
    stop_a_running_call(true).await;
}

/// A reply calls two tools: one allowed, which runs, and one that waits
/// for approval. Stopping the running one ends the turn, the waiting one
/// with it: it is not asked about any more (answering it later carried the
/// turn on, the model asked again), and the model reads that it never ran.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_ends_the_turn_and_its_calls_still_waiting_for_approval() {
    use common::{Scripted, Step, done, text};
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let provider = Scripted::new(vec![
        Step::Reply(vec![
            call("c1", "test__block", json!({})),
            call("c2", "test__echo", json!({"text": "later"})),
            done(),
        ]),
        Step::Reply(vec![text("went on after a stop"), done()]),
    ]);
    let cfg = config(&format!(
        "[approvals]\nrules = {{ \"test__block\" = \"allow\", \"test__echo\" = \"ask\" }}\n\n{}",
        stdio_server("test", &log, "")
    ));
    let rig = rig(cfg, Some(provider.clone()));
    let conv = rig.conversation("block and ask");
    let store = rig.engine.store().clone();
    let waiting = rig.waiting_approval(conv).await;
    assert_eq!(waiting.call_id, "c2");
    wait_for("the server to run the allowed call", || {
        (log_lines(&log) == ["block "]).then_some(())
    })
    .await;
    assert!(rig.engine.stop(conv));
    let results = wait_for("a result for each call", || {
        let r = rig.tool_messages(conv);
        (r.len() == 2).then_some(r)
    })
    .await;
    assert!(
        results
            .iter()
            .any(|r| r.contains("stopped by the user while it ran")),
        "{results:?}"
    );
    assert!(
        results
            .iter()
            .any(|r| r.contains("not run: the turn ended before this call was answered")),
        "{results:?}"
    );
    let a = store.approval(waiting.id).unwrap().unwrap();
    assert_eq!(a.status, ApprovalStatus::Denied);
    assert!(
        rig.engine.answer_approval(a.id, true).is_err(),
        "nothing left to answer"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(provider.count(), 1, "the model was not asked again");
    assert_eq!(
        log_lines(&log),
        ["block ", "block cancelled"],
        "echo never ran"
    );
    rig.engine.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswered_approval_is_declined_after_approval_timeout_on_the_engine_clock() {
    use common::{Scripted, Step, done, text};
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let provider = Scripted::new(vec![
        Step::Reply(vec![
            call("c1", "test__echo", json!({"text": "late"})),
            done(),
        ]),
        Step::Reply(vec![text("understood"), done()]),
    ]);
    let cfg = config(&format!(
        "[approvals]\napproval_timeout = \"2h\"\n\n{}",
        stdio_server("test", &log, "")
    ));
    let rig = rig(cfg, Some(provider.clone()));
    let conv = rig.conversation("echo late");
    let a = rig.waiting_approval(conv).await;
    // An hour later it still waits.
    rig.clock.jump(3_600_000);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let still = rig.engine.store().approval(a.id).unwrap().unwrap();
    assert_eq!(still.status, ApprovalStatus::Waiting);
    assert_eq!(provider.count(), 1);
    // Past two hours: declined with a note, and the turn goes on.
    rig.clock.jump(3_600_000 + 1_000);
    rig.reply(conv, "understood").await;
    let a = rig.engine.store().approval(a.id).unwrap().unwrap();
    assert_eq!(a.status, ApprovalStatus::Denied);
    let results = scripted_results(&provider);
    assert_eq!(results.len(), 1);
    assert!(results[0].contains("no answer within 2h"), "{results:?}");
    assert!(log_lines(&log).is_empty(), "the declined call never ran");
    rig.engine.shutdown(Duration::from_secs(5)).await;
}

/// A call whose arguments are not a JSON object is not put to the user:
/// approving it ran nothing but "arguments are not valid JSON". The model
/// is told at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_with_arguments_that_are_no_json_is_refused_without_asking() {
    use common::{Scripted, Step, done, text};
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let provider = Scripted::new(vec![
        Step::Reply(vec![
            StreamEvent::ToolCall(ToolCall {
                id: "c1".into(),
                name: "test__echo".into(),
                arguments: "{\"text\": \"hi\"".into(),
            }),
            call("c2", "test__echo", json!(["not", "an", "object"])),
            done(),
        ]),
        Step::Reply(vec![text("sorry"), done()]),
    ]);
    let rig = rig(
        config(&stdio_server("test", &log, "")),
        Some(provider.clone()),
    );
    let conv = rig.conversation("echo with bad arguments");
    rig.reply(conv, "sorry").await;
    assert!(
        rig.engine.store().approvals(conv).unwrap().is_empty(),
        "nothing was asked"
    );
    let results = scripted_results(&provider);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(
        results[0].contains("arguments are not valid JSON"),
        "{results:?}"
    );
    assert!(
        results[1].contains("arguments must be a JSON object"),
        "{results:?}"
    );
    assert!(log_lines(&log).is_empty(), "nothing ran");
    rig.engine.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_start_gives_an_error_result_and_the_turn_ends_normally() {
    use common::{Scripted, Step, done, text};
    let provider = Scripted::new(vec![
        Step::Reply(vec![call("c1", "broken__list", json!({})), done()]),
        Step::Reply(vec![text("I could not list them"), done()]),
    ]);
    let cfg = config(
        "[approvals]\nrules = { \"broken__*\" = \"allow\" }\n\n[mcp.broken]\ncommand = \"/nonexistent/tock-mcp-server\"\n",
    );
    let rig = rig(cfg, Some(provider.clone()));
    let conv = rig.conversation("list");
    rig.reply(conv, "I could not list them").await;
    let results = scripted_results(&provider);
    assert_eq!(results.len(), 1);
    assert!(
        results[0].contains("could not start") && results[0].contains("broken"),
        "{results:?}"
    );
    // Nothing offered from a server that is not running; tock's own tools still are.
    let names: Vec<String> = provider.requests()[0]
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert!(names.contains(&"schedule_task".to_string()));
    assert!(!names.iter().any(|n| n.starts_with("broken__")));
    let info = rig.engine.mcp_servers();
    assert!(matches!(&info[0].state, ServerState::Failed(r) if r.contains("cannot run")));
    rig.engine.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_engine_with_mcp_configured_starts_no_server() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let rig = rig(config(&stdio_server("test", &log, "")), None);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(rig.engine.mcp_servers()[0].state, ServerState::NotStarted);
    rig.engine.shutdown(Duration::from_secs(5)).await;

    // `startup = true` starts it with the engine.
    let rig = self::rig(config(&stdio_server("test", &log, "startup = true")), None);
    let engine = rig.engine.clone();
    wait_for("the eager start", || {
        (engine.mcp_servers()[0].state == ServerState::Running).then_some(())
    })
    .await;
    rig.engine.shutdown(Duration::from_secs(5)).await;
}

// ------------------------------------------------ the real binary: CLI, daemon --

#[test]
fn tock_tools_lists_servers_and_the_daemon_runs_approved_calls_answered_from_the_cli() {
    use support::{MockServer, Reply, Tock, wait_until};
    let server = MockServer::start();
    server.respond_with(|r| {
        if r.last_role().as_deref() == Some("tool") {
            return Reply::text("all done");
        }
        Reply::text("")
            .with_tool_call("test__peek", json!({}))
            .with_tool_call("test__echo", json!({"text": "from the daemon"}))
    });
    let t = Tock::with_openai(&server.base_url());
    let log = t.path("calls.log");
    t.write_config(&format!(
        "[approvals]\nallow_read_only = true\n\n{}\n[mcp.gone]\ncommand = \"/nonexistent/x\"\n\n[mcp.off]\ncommand = \"x\"\nenabled = false\n",
        stdio_server("test", &log, "")
    ));

    let listed = t.json(&["tools", "--json"]);
    let servers = listed.as_array().cloned().unwrap_or_default();
    let find = |n: &str| {
        servers
            .iter()
            .find(|s| s["name"] == n)
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(find("test")["state"], "running", "{listed:#}");
    let tools = find("test")["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let peek = tools.iter().find(|t| t["name"] == "test__peek").unwrap();
    assert_eq!(peek["read_only"], true);
    assert_eq!(peek["approval"], "allow");
    let echo = tools.iter().find(|t| t["name"] == "test__echo").unwrap();
    assert_eq!(echo["approval"], "ask");
    assert_eq!(find("gone")["state"], "failed");
    assert!(
        find("gone")["reason"]
            .as_str()
            .unwrap_or("")
            .contains("cannot run")
    );
    assert_eq!(find("off")["state"], "disabled");
    let human = t.ok(&["tools"]);
    assert!(human.contains("test (stdio) — running"), "{human}");
    assert!(human.contains("off (stdio) — disabled"), "{human}");

    let _daemon = t.spawn_daemon();
    t.send(&["--new", "Echo", "echo something"]);
    let waiting = wait_until(Duration::from_secs(30), "the approval", || {
        let w = t.json(&["approvals", "--json"]);
        w.as_array().filter(|a| a.len() == 1).cloned()
    });
    assert_eq!(waiting[0]["tool"], "test__echo");
    // The read-only call already ran in the daemon; the other waits.
    assert_eq!(log_lines(&log), ["peek "]);
    let id = waiting[0]["id"].as_i64().unwrap().to_string();
    let out = t.ok(&["approve", &id, "--always"]);
    assert!(out.contains("allowed from now on"), "{out}");
    let reqs = wait_until(Duration::from_secs(30), "the continued turn", || {
        let r = server.requests();
        (r.len() >= 2).then_some(r)
    });
    let results: Vec<String> = reqs[1]
        .messages()
        .into_iter()
        .filter(|(role, _)| role == "tool")
        .map(|(_, c)| c)
        .collect();
    assert_eq!(results, ["nothing changed", "echo: from the daemon"]);
    assert_eq!(log_lines(&log), ["peek ", "echo from the daemon"]);

    assert_eq!(t.ok(&["approvals", "--rules"]).trim(), "test__echo");
    assert!(
        t.ok(&["approve", "--forget", "test__echo"])
            .contains("forgot test__echo")
    );
    assert_eq!(
        t.ok(&["approvals", "--rules"]).trim(),
        "no tool is allowed with --always"
    );
    assert!(
        t.fails(&["approve", "--forget", "test__echo"])
            .contains("no saved rule")
    );
}

/// `tock tools` with a server that exits as it starts: one line for it
/// every time. A write to its closed pipe ended tock by SIGPIPE (exit 141,
/// nothing printed) about two runs in three.
/// A config file that cannot be read names no server tock can trust:
/// `tock tools` says why in one line and fails, rather than "no MCP server
/// is configured".
#[test]
fn tock_tools_on_a_config_it_cannot_read_gives_the_reason_and_fails() {
    use support::Tock;
    let t = Tock::new();
    t.write_config("[mcp.test]\ncommand = 3\n");
    // The database made first (a new one is said so on a line of its own).
    t.run(&["list"]);
    for args in [&["tools"][..], &["tools", "--json"]] {
        let line = t.fails(args);
        assert!(
            line.contains("line 2") && line.contains("invalid type"),
            "{args:?}: {line}"
        );
        assert!(!line.contains("no MCP server"), "{line}");
    }
    // A file that cannot be read at all (here a directory in its place).
    let mut t = Tock::new();
    let dir = t.path("config-dir");
    std::fs::create_dir(&dir).unwrap();
    t.set_env("TOCK_CONFIG", &dir.display().to_string());
    t.run(&["list"]);
    let line = t.fails(&["tools"]);
    assert!(line.contains("cannot read config"), "{line}");
}

#[test]
fn tock_tools_survives_a_server_that_exits_at_once() {
    use support::Tock;
    let t = Tock::new();
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    t.write_config(&format!(
        "[mcp.gone]\ncommand = \"sh\"\nargs = [\"-c\", \"exit 3\"]\n\n[mcp.missing]\ncommand = \"/no/such/server\"\n\n[mcp.web]\nurl = \"http://127.0.0.1:{port}/mcp\"\n",
    ));
    for run in 0..8 {
        let o = t.run(&["tools"]);
        assert_eq!(o.status.code(), Some(0), "run {run}: {o:?}");
        assert!(
            o.stdout.contains("gone (stdio) — failed"),
            "run {run}: {}",
            o.stdout
        );
        assert!(
            o.stdout.contains("missing (stdio) — failed"),
            "run {run}: {}",
            o.stdout
        );
        // One plain line: what happened, not the transport's Rust type.
        let web = o
            .stdout
            .lines()
            .find(|l| l.starts_with("web (http)"))
            .unwrap_or_else(|| panic!("{}", o.stdout));
        assert!(
            web.contains("failed: cannot reach it: ")
                && web.contains(&format!("127.0.0.1:{port}/mcp")),
            "{web}"
        );
        assert!(!o.stdout.contains("rmcp::"), "{}", o.stdout);
    }
}

#[test]
fn mcp_env_secrets_reach_neither_the_database_the_log_the_provider_nor_the_terminal() {
    use support::{MockServer, Reply, Tock, wait_until};
    let server = MockServer::start();
    server.respond_with(|r| {
        if r.last_role().as_deref() == Some("tool") {
            return Reply::text("all done");
        }
        let mut reply = Reply::text("");
        for how in ["error", "parts", "structured", "rpc"] {
            reply = reply.with_tool_call("sec__leak", json!({ "how": how }));
        }
        reply
    });
    let t = Tock::with_openai(&server.base_url());
    let log = t.path("calls.log");
    t.write_config(&format!(
        "[approvals]\nrules = {{ \"sec__*\" = \"allow\" }}\n\n{}",
        leaky_server("sec", &log)
    ));
    let human = t.ok(&["tools"]);
    assert!(human.contains("sec__leak"), "{human}");
    assert_no_mcp_secret("tock tools", &human);
    let listed = t.ok(&["tools", "--json"]);
    assert!(listed.contains("<redacted>"), "{listed}");
    assert_no_mcp_secret("tock tools --json", &listed);

    let mut daemon = t.spawn_daemon();
    t.send(&["--new", "Leak", "leak it"]);
    wait_until(
        Duration::from_secs(30),
        "the reply after the results",
        || {
            (count(
            &t,
            "SELECT COUNT(*) FROM messages WHERE role = 'assistant' AND status = 'complete' AND content = 'all done'",
        ) == 1)
            .then_some(())
        },
    );
    daemon.signal(libc::SIGTERM);
    assert!(daemon.wait_timeout(Duration::from_secs(5)).is_some());
    assert_eq!(log_lines(&log).len(), 4, "{:?}", log_lines(&log));

    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    for r in &reqs {
        assert_no_mcp_secret("a request to the provider", &r.body.to_string());
    }
    let results: Vec<String> = reqs[1]
        .messages()
        .into_iter()
        .filter(|(role, _)| role == "tool")
        .map(|(_, c)| c)
        .collect();
    assert_eq!(results.len(), 4, "{results:?}");
    assert!(results[0].contains("TOKEN=<redacted>"), "{results:?}");
    let shown = t.ok(&["show", "Leak", "--json"]);
    assert!(shown.contains("TOKEN=<redacted>"), "{shown}");
    assert_no_mcp_secret("tock show", &shown);
    assert_no_mcp_secret("the daemon's stderr", &daemon.stderr());
    for (what, bytes) in [("the database", t.db_bytes()), ("the log", t.log_bytes())] {
        assert!(!bytes.is_empty(), "{what} is empty");
        for secret in [CMD_SECRET, LITERAL_SECRET] {
            assert!(
                !support::contains_bytes(&bytes, secret.as_bytes()),
                "{what} holds {secret}"
            );
        }
    }
}

// ----------------------------------------- SIGKILL during an MCP call --

/// The provider plays a model that calls `test__wait_file` (answered once
/// `gate` exists) and says "all done" once it has the result.
fn waiting_model(gate: &Path) -> support::MockServer {
    use support::{MockServer, Reply};
    let server = MockServer::start();
    let args = json!({"path": gate.display().to_string()});
    server.respond_with(move |r| {
        if r.last_role().as_deref() == Some("tool") {
            return Reply::text("all done");
        }
        Reply::text("").with_tool_call("test__wait_file", args.clone())
    });
    server
}

/// One number from the database.
fn count(t: &support::Tock, sql: &str) -> i64 {
    t.sql()
        .query_row(sql, [], |r| r.get(0))
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// After the restart: the turn finished with one reply, the user message
/// and the tool result are there once, nothing is left to send, and the
/// request that continued the turn carried `result` for the call.
fn assert_turn_finished_once(t: &support::Tock, server: &support::MockServer) -> String {
    use support::wait_until;
    wait_until(
        Duration::from_secs(30),
        "the reply after the restart",
        || {
            (count(
            t,
            "SELECT COUNT(*) FROM messages WHERE role = 'assistant' AND status = 'complete' AND content = 'all done'",
        ) == 1)
            .then_some(())
        },
    );
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "the first request and the continuation");
    let results: Vec<String> = reqs[1]
        .messages()
        .into_iter()
        .filter(|(role, _)| role == "tool")
        .map(|(_, c)| c)
        .collect();
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(
        count(t, "SELECT COUNT(*) FROM messages WHERE role = 'user'"),
        1
    );
    assert_eq!(
        count(t, "SELECT COUNT(*) FROM messages WHERE role = 'tool'"),
        1,
        "one result for the call"
    );
    assert_eq!(
        count(
            t,
            "SELECT COUNT(*) FROM outbox WHERE status IN ('pending', 'sending')"
        ),
        0,
        "nothing left to send"
    );
    results[0].clone()
}

#[test]
fn an_approved_call_running_when_the_daemon_is_killed_is_run_again_and_the_model_is_told() {
    use support::{Tock, wait_until};
    let mut t = Tock::new();
    let gate = t.path("gate");
    let server = waiting_model(&gate);
    t.set_env("OPENAI_BASE_URL", &server.base_url());
    t.set_env("OPENAI_API_KEY", "sk-test");
    let log = t.path("calls.log");
    t.write_config(&stdio_server("test", &log, ""));
    let mut daemon = t.spawn_daemon();
    t.send(&["--new", "Wait", "wait for the file"]);
    let waiting = wait_until(Duration::from_secs(30), "the approval", || {
        let w = t.json(&["approvals", "--json"]);
        w.as_array().filter(|a| a.len() == 1).cloned()
    });
    assert_eq!(waiting[0]["tool"], "test__wait_file");
    let id = waiting[0]["id"].as_i64().expect("approval id").to_string();
    t.ok(&["approve", &id]);
    let started = format!("wait_file {}", gate.display());
    wait_until(Duration::from_secs(30), "the call to start", || {
        (log_lines(&log) == [started.clone()]).then_some(())
    });
    daemon.kill9();
    assert_eq!(
        count(
            &t,
            "SELECT COUNT(*) FROM approvals WHERE status = 'executing' AND runs = 1"
        ),
        1,
        "killed while the approved call ran"
    );
    assert_eq!(
        count(&t, "SELECT COUNT(*) FROM messages WHERE role = 'tool'"),
        0
    );

    std::fs::write(&gate, "").expect("the gate file");
    let _daemon = t.spawn_daemon();
    let result = assert_turn_finished_once(&t, &server);
    // The documented rule: an approved call whose result was not saved runs
    // again (never zero times) — and the model reads that it did.
    assert_eq!(log_lines(&log), [started.clone(), started.clone()]);
    assert!(
        result.starts_with("[note from tock: an earlier run of this call never saved its result")
            && result.contains("may have happened twice")
            && result.ends_with("the file is there"),
        "{result}"
    );
    assert_eq!(
        count(
            &t,
            "SELECT COUNT(*) FROM approvals WHERE status = 'approved' AND runs = 2"
        ),
        1
    );
}

#[test]
fn an_allowed_call_running_when_the_daemon_is_killed_is_not_run_again_and_the_model_is_told() {
    use support::{Tock, wait_until};
    let mut t = Tock::new();
    let gate = t.path("gate");
    let server = waiting_model(&gate);
    t.set_env("OPENAI_BASE_URL", &server.base_url());
    t.set_env("OPENAI_API_KEY", "sk-test");
    let log = t.path("calls.log");
    t.write_config(&format!(
        "[approvals]\nallow_read_only = true\n\n{}",
        stdio_server("test", &log, "")
    ));
    let mut daemon = t.spawn_daemon();
    t.send(&["--new", "Wait", "wait for the file"]);
    let started = format!("wait_file {}", gate.display());
    wait_until(Duration::from_secs(30), "the call to start", || {
        (log_lines(&log) == [started.clone()]).then_some(())
    });
    daemon.kill9();
    assert_eq!(
        count(&t, "SELECT COUNT(*) FROM approvals"),
        0,
        "it needed no approval"
    );
    assert_eq!(
        count(&t, "SELECT COUNT(*) FROM messages WHERE role = 'tool'"),
        0
    );

    std::fs::write(&gate, "").expect("the gate file");
    let _daemon = t.spawn_daemon();
    let result = assert_turn_finished_once(&t, &server);
    assert_eq!(log_lines(&log), [started], "not run a second time");
    let v: Value = serde_json::from_str(&result).expect("a JSON error result");
    let error = v["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("may or may not have taken effect") && error.contains("not run again"),
        "{result}"
    );
}

/// A model that calls `test__block` (allowed) and, once it reads a result,
/// answers "all done".
fn blocking_model() -> support::MockServer {
    use support::{MockServer, Reply};
    let server = MockServer::start();
    server.respond_with(|r| {
        if r.last_role().as_deref() == Some("tool") {
            return Reply::text("all done");
        }
        Reply::text("").with_tool_call("test__block", json!({}))
    });
    server
}

/// The stopped call's result and the note, as `tock show` gives them.
fn assert_stopped_in(t: &support::Tock, conv: &str) {
    let shown = t.show(conv);
    let msgs = shown["messages"].as_array().cloned().unwrap_or_default();
    let tools: Vec<&Value> = msgs.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(tools.len(), 1, "{msgs:#?}");
    assert!(
        tools[0]["content"]
            .as_str()
            .unwrap_or_default()
            .contains("stopped by the user while it ran"),
        "{:?}",
        tools[0]
    );
    assert!(
        msgs.iter().any(|m| m["role"] == "notice"
            && m["content"] == "The turn was ended: you stopped test__block while it ran."),
        "{msgs:#?}"
    );
}

/// `tock status` shows a call the daemon runs, and `tock stop` from a shell
/// stops it: the daemon hears the request through the database, cancels
/// the call, and the turn ends there.
#[test]
fn tock_status_shows_a_running_call_and_tock_stop_stops_it_in_the_daemon() {
    use support::{Tock, wait_until};
    let server = blocking_model();
    let t = Tock::with_openai(&server.base_url());
    let log = t.path("calls.log");
    t.write_config(&format!(
        "[approvals]\nrules = {{ \"test__block\" = \"allow\" }}\n\n{}",
        stdio_server("test", &log, "")
    ));
    let _daemon = t.spawn_daemon();
    t.send(&["--new", "Block", "block"]);
    wait_until(Duration::from_secs(30), "the call to start", || {
        (log_lines(&log) == ["block "]).then_some(())
    });
    let status = wait_until(Duration::from_secs(30), "status to show the call", || {
        let out = t.ok(&["status"]);
        out.contains("running tool test__block").then_some(out)
    });
    assert!(status.contains("`tock stop 1` stops it"), "{status}");
    let json = t.json(&["status", "--json"]);
    assert_eq!(
        json["tool_calls_running"][0]["tool"], "test__block",
        "{json}"
    );
    assert_eq!(
        json["tool_calls_running"][0]["conversation_id"], 1,
        "{json}"
    );

    let said = t.ok(&["stop", "Block"]);
    assert!(
        said.contains("asked the tock running test__block in “Block” to stop it"),
        "{said}"
    );
    // Nothing is queued there: no pause to speak of.
    assert!(!said.contains("paused"), "{said}");
    wait_until(
        Duration::from_secs(30),
        "the server to hear of the cancel",
        || (log_lines(&log) == ["block ", "block cancelled"]).then_some(()),
    );
    wait_until(Duration::from_secs(30), "the stopped result", || {
        (count(&t, "SELECT COUNT(*) FROM messages WHERE role = 'tool'") == 1).then_some(())
    });
    assert_stopped_in(&t, "Block");
    let status = t.ok(&["status"]);
    assert!(!status.contains("running tool"), "{status}");
    assert_eq!(count(&t, "SELECT COUNT(*) FROM tool_runs"), 0);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(server.count(), 1, "the model was not asked again");
    let again = t.fails(&["stop", "Block"]);
    assert!(again.contains("no tool call runs"), "{again}");
}

/// Esc in the TUI stops a call it runs, as it stops a streaming reply.
#[test]
fn esc_in_the_tui_stops_a_running_tool_call() {
    use support::{Pty, Tock, wait_until};
    let server = blocking_model();
    let t = Tock::with_openai(&server.base_url());
    let log = t.path("calls.log");
    t.write_config(&format!(
        "[approvals]\nrules = {{ \"test__block\" = \"allow\" }}\n\n{}",
        stdio_server("test", &log, "")
    ));
    let long = Duration::from_secs(30);
    let pty = Pty::spawn(&[], &t.env, 30, 100);
    pty.wait_text("Enter sends", long);
    pty.type_text("block please");
    pty.enter();
    wait_until(long, "the call to start", || {
        (log_lines(&log) == ["block "]).then_some(())
    });
    // The composer says it runs, for how long, and that Esc stops it.
    pty.wait_text("running test__block (", long);
    pty.wait_text("s)… Esc stops", long);
    pty.write(b"\x1b");
    wait_until(long, "the server to hear of the cancel", || {
        (log_lines(&log) == ["block ", "block cancelled"]).then_some(())
    });
    pty.wait_text("you stopped test__block while it ran", long);
    pty.wait_text("Message (Enter sends", long);
    let conv = wait_until(long, "the conversation", || {
        let c = t.json(&["conversations", "--json"]);
        c.as_array()
            .and_then(|a| a.first())
            .map(|c| c["id"].to_string())
    });
    assert_stopped_in(&t, &conv);
    assert_eq!(count(&t, "SELECT COUNT(*) FROM tool_runs"), 0);
    assert_eq!(server.count(), 1, "the model was not asked again");
}

// ------------------------------------------------- third-party servers --

/// The official servers through `npx`, when node and the registry are there.
fn npx_available() -> bool {
    let ok = Command::new("npx")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        println!("skipped: npx is not installed (the third-party MCP servers need node)");
    }
    ok
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_everything_and_filesystem_servers_work_through_npx() {
    if !npx_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hello-from-tock.txt"), "hi").unwrap();
    let m = manager(&format!(
        "[mcp.everything]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-everything\"]\ntimeout_secs = 180\n\n\
         [mcp.files]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-filesystem\", {}]\ntimeout_secs = 180\n",
        toml_str(&dir.path().display().to_string())
    ));
    let names: Vec<String> = m.tool_specs().await.into_iter().map(|s| s.name).collect();
    let info = m.snapshot();
    for s in &info {
        if let ServerState::Failed(reason) = &s.state {
            println!(
                "skipped {}: it could not be fetched or started ({reason})",
                s.name
            );
        }
    }
    if info
        .iter()
        .any(|s| s.name == "everything" && s.state == ServerState::Running)
    {
        assert!(names.contains(&"everything__echo".to_string()), "{names:?}");
        let out = m
            .call("everything__echo", r#"{"message":"tock says hi"}"#)
            .await;
        assert!(
            !out.is_error && out.text.contains("tock says hi"),
            "{}",
            out.text
        );
    }
    if info
        .iter()
        .any(|s| s.name == "files" && s.state == ServerState::Running)
    {
        assert!(
            names.contains(&"files__list_directory".to_string()),
            "{names:?}"
        );
        let args = json!({"path": dir.path().display().to_string()}).to_string();
        let out = m.call("files__list_directory", &args).await;
        assert!(
            !out.is_error && out.text.contains("hello-from-tock.txt"),
            "{}",
            out.text
        );
    }
    m.shutdown(Duration::from_secs(10)).await;
}

/// A server whose name cannot prefix tool names is not dropped without a
/// word: `tock tools` (and every command, and the TUI's status line at
/// start) says which server and why, as for any setting that cannot be used.
/// A server whose url is no address says so: it read "cannot reach it:
/// Client error: builder error".
#[test]
fn a_server_url_that_is_no_address_says_so() {
    use support::Tock;
    let t = Tock::new();
    t.write_config("[mcp.u]\nurl = \"not a url\"\n");
    let o = t.run(&["tools"]);
    let all = format!("{}{}", o.stdout, o.stderr);
    assert!(
        all.contains("its url \"not a url\" is not an http:// or https:// address"),
        "{all}"
    );
    assert!(!all.contains("builder error"), "{all}");
}

#[test]
fn a_server_name_tock_cannot_use_is_reported_not_dropped() {
    use support::Tock;
    let t = Tock::new();
    t.write_config(
        "[mcp.\"my.files\"]\ncommand = \"true\"\n\n[mcp.a__b]\ncommand = \"true\"\n\n\
         [mcp.\"bad name\"]\ncommand = \"true\"\n",
    );
    let o = t.run(&["tools"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let warnings: Vec<&str> = o
        .stderr
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .collect();
    assert_eq!(warnings.len(), 3, "{}", o.stderr);
    for (name, why) in [
        ("[mcp.\"my.files\"]", "letters, digits"),
        ("[mcp.a__b]", "\"__\""),
        ("[mcp.\"bad name\"]", "letters, digits"),
    ] {
        let w = warnings
            .iter()
            .find(|w| w.contains(name))
            .unwrap_or_else(|| panic!("{name}: {}", o.stderr));
        assert!(w.starts_with("warning: ") && w.contains(why), "{w}");
    }
    assert!(!o.stdout.contains("add an [mcp.NAME]"), "{}", o.stdout);
    assert!(o.stdout.contains("no MCP server"), "{}", o.stdout);
}
