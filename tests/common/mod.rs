//! Shared test harness: a scripted provider and an engine on a temp database.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use tock::config::{Config, ConfigSource};
use tock::engine::{Engine, ManualClock, Options};
use tock::llm::{ChatRequest, EventStream, LlmError, Provider, StreamEvent};
use tock::store::{Role, Store};

/// What the provider does for one request.
pub enum Step {
    /// Accept and stream these events (each text after `gap`).
    Reply(Vec<StreamEvent>),
    /// Fail before accepting.
    Fail(LlmError),
    /// Accept, stream the events, then wait until released, then Done.
    Hold(Vec<StreamEvent>, Arc<tokio::sync::Notify>),
    /// Accept, stream the events, then fail mid-stream.
    Cut(Vec<StreamEvent>, LlmError),
}

pub fn text(s: &str) -> StreamEvent {
    StreamEvent::Text(s.to_string())
}
pub fn done() -> StreamEvent {
    StreamEvent::Done { stop_reason: None }
}

#[derive(Default)]
pub struct Scripted {
    pub steps: Mutex<VecDeque<Step>>,
    pub requests: Mutex<Vec<ChatRequest>>,
    /// Used when the script runs out: a plain reply "ok".
    pub gap: Duration,
}

impl Scripted {
    pub fn new(steps: Vec<Step>) -> Arc<Self> {
        Arc::new(Self {
            steps: Mutex::new(steps.into()),
            ..Default::default()
        })
    }
    pub fn push(&self, s: Step) {
        self.steps.lock().unwrap().push_back(s);
    }
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().unwrap().clone()
    }
    pub fn count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
}

impl Provider for Scripted {
    fn name(&self) -> &'static str {
        "scripted"
    }
    fn start<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<EventStream, LlmError>> {
        self.requests.lock().unwrap().push(req.clone());
        let step = self
            .steps
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or(Step::Reply(vec![text("ok"), done()]));
        Box::pin(async move {
            match step {
                Step::Fail(e) => Err(e),
                Step::Reply(evs) => {
                    let s: EventStream = Box::pin(futures::stream::iter(evs.into_iter().map(Ok)));
                    Ok(s)
                }
                Step::Hold(evs, gate) => {
                    let head = futures::stream::iter(evs.into_iter().map(Ok));
                    let tail = futures::stream::once(async move {
                        gate.notified().await;
                        Ok(done())
                    });
                    let s: EventStream = Box::pin(futures::StreamExt::chain(head, tail));
                    Ok(s)
                }
                Step::Cut(evs, e) => {
                    let s: EventStream = Box::pin(futures::stream::iter(
                        evs.into_iter().map(Ok).chain(std::iter::once(Err(e))),
                    ));
                    Ok(s)
                }
            }
        })
    }
}

pub const T0: i64 = 1_796_000_000_000; // a fixed wall-clock start (2026-11-30)

pub struct Harness {
    pub engine: Engine,
    pub clock: Arc<ManualClock>,
    pub provider: Arc<Scripted>,
    pub dir: tempfile::TempDir,
}

pub fn options() -> Options {
    Options {
        watch_db: false,
        ..Options::default()
    }
}

pub fn harness_with(provider: Arc<Scripted>, cfg: Config) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("tock.db")).unwrap();
    engine_on(store, provider, cfg, dir)
}

pub fn engine_on(
    store: Store,
    provider: Arc<Scripted>,
    cfg: Config,
    dir: tempfile::TempDir,
) -> Harness {
    let clock = Arc::new(ManualClock::new(T0));
    let config = Arc::new(ConfigSource::from_config(cfg).with_provider(provider.clone()));
    let engine = Engine::new(store, config, clock.clone(), options());
    Harness {
        engine,
        clock,
        provider,
        dir,
    }
}

/// A new conversation titled "c", created now.
pub fn new_conv(h: &Harness) -> i64 {
    h.engine
        .store()
        .create_conversation(Some("c"), "user", h.engine.now_ms())
        .unwrap()
}

pub fn harness(steps: Vec<Step>) -> Harness {
    harness_with(Scripted::new(steps), Config::default())
}

/// Let the engine run until nothing more happens (paused time auto-advances
/// only when idle). 50 ms is longer than the engine waits between handing on
/// streamed text (30 ms), so a reply whose stream has ended is finished.
pub async fn settle() {
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
}

/// The test server's binary: built with the examples by `cargo test`, or
/// built here when only this test target was asked for.
pub fn mcp_test_server_bin() -> std::path::PathBuf {
    static BIN: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        let exe = std::env::current_exe().expect("test binary path");
        let debug = exe
            .parent()
            .and_then(std::path::Path::parent)
            .expect("target directory");
        let bin = debug.join("examples").join("mcp_test_server");
        if !bin.exists() {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let status = std::process::Command::new(cargo)
                .args(["build", "--example", "mcp_test_server"])
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .status()
                .expect("running cargo build --example mcp_test_server");
            assert!(status.success(), "building the MCP test server failed");
        }
        bin
    })
    .clone()
}

/// The cells of row `y` a terminal shows: those a wide character covers
/// (the columns after it) are left out.
pub fn visible_cells(buf: &ratatui::buffer::Buffer, y: u16) -> Vec<&ratatui::buffer::Cell> {
    let mut out = Vec::new();
    let mut covered = 0;
    for x in 0..buf.area.width {
        if covered > 0 {
            covered -= 1;
            continue;
        }
        let c = &buf[(x, y)];
        covered = unicode_width::UnicodeWidthStr::width(c.symbol()).saturating_sub(1);
        out.push(c);
    }
    out
}

/// One request as a test HTTP server read it off its socket.
pub struct HttpRequest {
    /// Request line and headers, without the blank line that ends them.
    pub head: String,
    /// The body, `Content-Length` bytes of it.
    pub body: Vec<u8>,
}

/// Reads one HTTP/1.1 request (its head and a `Content-Length` body) from a
/// test server's socket; None when the connection ends first.
pub async fn read_http_request(sock: &mut tokio::net::TcpStream) -> Option<HttpRequest> {
    use tokio::io::AsyncReadExt;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            let len: usize = head
                .lines()
                .filter_map(|l| l.split_once(':'))
                .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
                .and_then(|(_, v)| v.trim().parse().ok())
                .unwrap_or(0);
            if buf.len() >= end + 4 + len {
                let body = buf[end + 4..end + 4 + len].to_vec();
                return Some(HttpRequest { head, body });
            }
        }
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// The texts of the user's messages in `conv`, in order.
pub fn user_texts(h: &Harness, conv: i64) -> Vec<String> {
    h.engine
        .store()
        .messages(conv)
        .unwrap()
        .into_iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.content)
        .collect()
}
