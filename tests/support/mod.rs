//! Shared helpers for the end-to-end suites (cli, e2e_pty, tmux, crash):
//! a local OpenAI-compatible SSE server that records every request, the real
//! `tock` binary run on a temp database / config / log dir, and a pty runner.
//!
//! Everything here cleans up after itself: servers stop and child processes
//! are killed (SIGKILL) and reaped when their handles are dropped.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

/// The API key given to tock in tests; it must never show up anywhere tock writes.
pub const SENTINEL: &str = "sk-test-SENTINEL-5c1f0e7d9a3b42c6";

pub fn tock_bin() -> &'static str {
    env!("CARGO_BIN_EXE_tock")
}

/// Wall-clock now in UTC epoch milliseconds.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Poll `f` every 20 ms until it gives `Some`, or panic after `timeout` with `what`.
pub fn wait_until<T>(timeout: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = f() {
            return v;
        }
        if Instant::now() >= deadline {
            panic!("timed out after {timeout:?} waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// An RFC 3339 string from tock's JSON as epoch milliseconds.
pub fn rfc_ms(v: &Value) -> Option<i64> {
    let s = v.as_str()?;
    chrono::DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|d| d.timestamp_millis())
}

/// Whether `hay` contains `needle` (bytes).
pub fn contains_bytes(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// A tiny xorshift64* generator: seeded, reproducible, no dependency.
pub struct XorShift(u64);

impl XorShift {
    pub fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `lo..hi` (hi exclusive; `lo` when the range is empty).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        lo + self.next_u64() % (hi - lo)
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.range(0, 100) < percent
    }
}

// ---------------------------------------------------------------------------
// The local OpenAI-compatible server
// ---------------------------------------------------------------------------

/// What the server does with one request.
#[derive(Clone, Debug)]
pub enum Reply {
    /// 200, stream the text pieces `gap` apart (each one SSE chunk), then any
    /// tool calls `(name, arguments JSON)`, then `finish_reason` and `[DONE]`.
    Stream {
        chunks: Vec<String>,
        gap: Duration,
        tool_calls: Vec<(String, String)>,
    },
    /// Fail with this status and an OpenAI-style JSON error body.
    Status(u16, String),
    /// 200, stream the pieces, then drop the connection mid-stream.
    Cut { chunks: Vec<String>, gap: Duration },
    /// 200 and headers, then no data at all for this long (or until the server stops).
    Stall(Duration),
    /// Nothing at all, not even the status line, for this long (or until
    /// the server stops): a server that took the request and never answers.
    Silent(Duration),
    /// 200, stream the pieces, then `finish_reason: "length"`: the model's
    /// length limit cut the reply short.
    Truncated(Vec<String>),
    /// 200: a reasoning model's thinking (`reasoning_content` deltas, as
    /// DeepSeek and vLLM send it), then its text, then `[DONE]`.
    Reasoned {
        reasoning: Vec<String>,
        text: String,
    },
    /// 200, stream the pieces, then an OpenAI error event (`data: {"error": ...}`).
    StreamError {
        chunks: Vec<String>,
        gap: Duration,
        message: String,
    },
}

impl Reply {
    /// The whole text, streamed word by word with no delay.
    pub fn text(s: &str) -> Reply {
        Reply::slow(s, Duration::ZERO)
    }
    /// The text streamed word by word (whitespace kept), `gap` between words.
    pub fn slow(s: &str, gap: Duration) -> Reply {
        Reply::Stream {
            chunks: split_words(s),
            gap,
            tool_calls: Vec::new(),
        }
    }
    /// `n` chunks of text, `gap` apart; the text is `tag` then numbered pieces,
    /// and ends with `END` so a complete reply can be told from a partial one.
    pub fn chunks(tag: &str, n: usize, gap: Duration) -> Reply {
        let mut chunks: Vec<String> = (0..n).map(|i| format!("{tag}-{i} ")).collect();
        chunks.push("END".into());
        Reply::Stream {
            chunks,
            gap,
            tool_calls: Vec::new(),
        }
    }
    pub fn with_tool_call(mut self, name: &str, args: Value) -> Reply {
        if let Reply::Stream { tool_calls, .. } = &mut self {
            tool_calls.push((name.to_string(), args.to_string()));
        }
        self
    }
}

fn split_words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in s.chars() {
        cur.push(c);
        if c == ' ' {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// How a request ended, as seen by the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Still being answered.
    Open,
    /// The whole reply (up to `[DONE]`) was written.
    Completed,
    /// An error status was sent.
    Status(u16),
    /// Cut on purpose.
    Cut,
    /// Stalled, then closed.
    Stalled,
    /// The client went away while the reply was being written.
    ClientGone,
}

/// One request as the server received it.
#[derive(Clone, Debug)]
pub struct Request {
    /// 0-based arrival order.
    pub n: usize,
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
    /// When the full request had arrived (UTC epoch ms).
    pub at_ms: i64,
    pub outcome: Outcome,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    /// `(role, text)` of each message in the body.
    pub fn messages(&self) -> Vec<(String, String)> {
        self.body["messages"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|m| {
                        let role = m["role"].as_str().unwrap_or("").to_string();
                        let text = match &m["content"] {
                            Value::String(s) => s.clone(),
                            Value::Array(parts) => parts
                                .iter()
                                .filter_map(|p| p["text"].as_str())
                                .collect::<Vec<_>>()
                                .join(""),
                            _ => String::new(),
                        };
                        (role, text)
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
    /// The text of the last user message.
    pub fn last_user_text(&self) -> Option<String> {
        self.messages()
            .into_iter()
            .rev()
            .find(|(r, _)| r == "user")
            .map(|(_, t)| t)
    }
    /// The role of the last message (a tool result ends with "tool").
    pub fn last_role(&self) -> Option<String> {
        self.messages().last().map(|(r, _)| r.clone())
    }
}

type Responder = Box<dyn Fn(&Request) -> Reply + Send>;

struct Shared {
    log: Mutex<Vec<Request>>,
    queue: Mutex<VecDeque<Reply>>,
    responder: Mutex<Responder>,
    stop: AtomicBool,
}

/// A local OpenAI-compatible Chat Completions server on 127.0.0.1. Replies
/// come from a queue of one-shot [`Reply`]s, then from the responder
/// function (default: a short complete text). Stops when dropped.
pub struct MockServer {
    pub port: u16,
    shared: Arc<Shared>,
    accept: Option<std::thread::JoinHandle<()>>,
}

impl MockServer {
    pub fn start() -> Self {
        Self::start_on(0)
    }

    /// A port that is free now (for a server that is "down" at first and started later).
    pub fn free_port() -> u16 {
        TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("no free port")
    }

    /// Start on `port` (0 = any); retries a little if the port is still busy.
    pub fn start_on(port: u16) -> Self {
        let listener = wait_until(Duration::from_secs(5), "binding the mock server", || {
            TcpListener::bind(("127.0.0.1", port)).ok()
        });
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let shared = Arc::new(Shared {
            log: Mutex::new(Vec::new()),
            queue: Mutex::new(VecDeque::new()),
            responder: Mutex::new(Box::new(|_| Reply::text("ok, done."))),
            stop: AtomicBool::new(false),
        });
        let s = shared.clone();
        let accept = std::thread::spawn(move || {
            while !s.stop.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let s = s.clone();
                        std::thread::spawn(move || serve(stream, s));
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Self {
            port,
            shared,
            accept: Some(accept),
        }
    }

    /// `OPENAI_BASE_URL` for tock.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// The next request gets this reply (one-shot, in order).
    pub fn push(&self, r: Reply) {
        self.shared.queue.lock().unwrap().push_back(r);
    }

    /// Replies for requests when the one-shot queue is empty.
    pub fn respond_with(&self, f: impl Fn(&Request) -> Reply + Send + 'static) {
        *self.shared.responder.lock().unwrap() = Box::new(f);
    }

    pub fn requests(&self) -> Vec<Request> {
        self.shared.log.lock().unwrap().clone()
    }

    pub fn count(&self) -> usize {
        self.shared.log.lock().unwrap().len()
    }

    /// Wait until at least `n` requests arrived; returns them all.
    pub fn wait_requests(&self, n: usize, timeout: Duration) -> Vec<Request> {
        wait_until(timeout, &format!("{n} request(s) at the server"), || {
            let r = self.requests();
            (r.len() >= n).then_some(r)
        })
    }

    /// Stop accepting; open connections end soon after.
    pub fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn serve(stream: TcpStream, shared: Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(match stream.try_clone() {
        Ok(s) => s,
        Err(_) => return,
    });
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    let mut len = 0usize;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 {
            return;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            let (k, v) = (k.trim().to_string(), v.trim().to_string());
            if k.eq_ignore_ascii_case("content-length") {
                len = v.parse().unwrap_or(0);
            }
            headers.push((k, v));
        }
    }
    let mut body = vec![0u8; len];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let (n, req) = {
        let mut log = shared.log.lock().unwrap();
        let req = Request {
            n: log.len(),
            method,
            path,
            headers,
            body,
            at_ms: now_ms(),
            outcome: Outcome::Open,
        };
        log.push(req.clone());
        (req.n, req)
    };
    // The model list, as OpenAI's `GET /v1/models` answers it.
    if req.method == "GET" && req.path.ends_with("/models") {
        let body = json!({"object": "list", "data": [
            {"id": "gpt-4o-mini", "object": "model", "created": 1721172741, "owned_by": "system"},
            {"id": "gpt-4o", "object": "model", "created": 1715367049, "owned_by": "system"},
        ]})
        .to_string();
        let mut stream = stream;
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.flush();
        shared.log.lock().unwrap()[n].outcome = Outcome::Completed;
        return;
    }
    let reply = {
        let queued = shared.queue.lock().unwrap().pop_front();
        match queued {
            Some(r) => r,
            None => (shared.responder.lock().unwrap())(&req),
        }
    };
    // Usage only when asked for, as OpenAI does: 10 tokens per message of
    // the prompt, one per chunk of the reply, 4 of the prompt from the cache.
    let usage = (req.body["stream_options"]["include_usage"] == true).then(|| {
        let prompt = 10 * req.body["messages"].as_array().map_or(0, |m| m.len()) as u64;
        (prompt, 4u64)
    });
    let outcome = write_reply(stream, &reply, &shared.stop, usage);
    shared.log.lock().unwrap()[n].outcome = outcome;
}

fn sse_chunk(delta: Value, finish: Option<&str>) -> String {
    let ev = json!({
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    });
    format!("data: {ev}\n\n")
}

fn write_chunk(s: &mut TcpStream, data: &str) -> std::io::Result<()> {
    write!(s, "{:x}\r\n{data}\r\n", data.len())?;
    s.flush()
}

/// Sleep `d`, waking early when the server stops. False if it stopped.
fn nap(d: Duration, stop: &AtomicBool) -> bool {
    let end = Instant::now() + d;
    while Instant::now() < end {
        if stop.load(Ordering::SeqCst) {
            return false;
        }
        std::thread::sleep((end - Instant::now()).min(Duration::from_millis(10)));
    }
    true
}

const STREAM_HEAD: &str = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";

fn write_reply(
    mut s: TcpStream,
    reply: &Reply,
    stop: &AtomicBool,
    usage: Option<(u64, u64)>,
) -> Outcome {
    let gone = |_| Outcome::ClientGone;
    match reply {
        Reply::Status(code, msg) => {
            let body = json!({"error": {"message": msg, "type": "server_error", "code": null}})
                .to_string();
            let r = write!(
                s,
                "HTTP/1.1 {code} Test\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .and_then(|_| s.flush());
            match r {
                Ok(()) => Outcome::Status(*code),
                Err(_) => Outcome::ClientGone,
            }
        }
        Reply::Silent(d) => {
            nap(*d, stop);
            Outcome::Stalled
        }
        Reply::Stall(d) => {
            if s.write_all(STREAM_HEAD.as_bytes()).is_err() {
                return Outcome::ClientGone;
            }
            let _ = s.flush();
            nap(*d, stop);
            Outcome::Stalled
        }
        Reply::Cut { chunks, gap } => {
            let r: std::io::Result<()> = (|| {
                s.write_all(STREAM_HEAD.as_bytes())?;
                write_chunk(&mut s, &sse_chunk(json!({"role": "assistant"}), None))?;
                for c in chunks {
                    if !nap(*gap, stop) {
                        break;
                    }
                    write_chunk(&mut s, &sse_chunk(json!({"content": c}), None))?;
                }
                Ok(())
            })();
            let _ = s.shutdown(std::net::Shutdown::Both);
            r.map(|_| Outcome::Cut).unwrap_or_else(gone)
        }
        Reply::Truncated(chunks) => {
            let r: std::io::Result<()> = (|| {
                s.write_all(STREAM_HEAD.as_bytes())?;
                write_chunk(&mut s, &sse_chunk(json!({"role": "assistant"}), None))?;
                for c in chunks {
                    write_chunk(&mut s, &sse_chunk(json!({"content": c}), None))?;
                }
                write_chunk(&mut s, &sse_chunk(json!({}), Some("length")))?;
                write_chunk(&mut s, "data: [DONE]\n\n")?;
                s.write_all(b"0\r\n\r\n")?;
                s.flush()
            })();
            r.map(|_| Outcome::Completed).unwrap_or_else(gone)
        }
        Reply::Reasoned { reasoning, text } => {
            let r: std::io::Result<()> = (|| {
                s.write_all(STREAM_HEAD.as_bytes())?;
                write_chunk(&mut s, &sse_chunk(json!({"role": "assistant"}), None))?;
                for r in reasoning {
                    let delta = json!({"content": null, "reasoning_content": r});
                    write_chunk(&mut s, &sse_chunk(delta, None))?;
                }
                write_chunk(&mut s, &sse_chunk(json!({"content": text}), None))?;
                write_chunk(&mut s, &sse_chunk(json!({}), Some("stop")))?;
                write_chunk(&mut s, "data: [DONE]\n\n")?;
                s.write_all(b"0\r\n\r\n")?;
                s.flush()
            })();
            r.map(|_| Outcome::Completed).unwrap_or_else(gone)
        }
        Reply::StreamError {
            chunks,
            gap,
            message,
        } => {
            let r: std::io::Result<()> = (|| {
                s.write_all(STREAM_HEAD.as_bytes())?;
                write_chunk(&mut s, &sse_chunk(json!({"role": "assistant"}), None))?;
                for c in chunks {
                    nap(*gap, stop);
                    write_chunk(&mut s, &sse_chunk(json!({"content": c}), None))?;
                }
                let err = json!({"error": {"message": message, "type": "server_error"}});
                write_chunk(&mut s, &format!("data: {err}\n\n"))?;
                s.write_all(b"0\r\n\r\n")?;
                s.flush()
            })();
            r.map(|_| Outcome::Status(200)).unwrap_or_else(gone)
        }
        Reply::Stream {
            chunks,
            gap,
            tool_calls,
        } => {
            let r: std::io::Result<bool> = (|| {
                s.write_all(STREAM_HEAD.as_bytes())?;
                write_chunk(&mut s, &sse_chunk(json!({"role": "assistant"}), None))?;
                for c in chunks {
                    if !nap(*gap, stop) {
                        return Ok(false);
                    }
                    write_chunk(&mut s, &sse_chunk(json!({"content": c}), None))?;
                }
                for (i, (name, args)) in tool_calls.iter().enumerate() {
                    let id = format!("call_{}_{i}", now_ms());
                    write_chunk(
                        &mut s,
                        &sse_chunk(
                            json!({"tool_calls": [{"index": i, "id": id, "type": "function",
                                   "function": {"name": name, "arguments": args}}]}),
                            None,
                        ),
                    )?;
                }
                let finish = if tool_calls.is_empty() {
                    "stop"
                } else {
                    "tool_calls"
                };
                write_chunk(&mut s, &sse_chunk(json!({}), Some(finish)))?;
                if let Some((prompt, cached)) = usage {
                    let completion = chunks.len() as u64;
                    let ev = json!({"id": "chatcmpl-test", "object": "chat.completion.chunk",
                        "created": 0, "model": "gpt-4o-mini", "choices": [],
                        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                                  "total_tokens": prompt + completion,
                                  "prompt_tokens_details": {"cached_tokens": cached}}});
                    write_chunk(&mut s, &format!("data: {ev}\n\n"))?;
                }
                write_chunk(&mut s, "data: [DONE]\n\n")?;
                s.write_all(b"0\r\n\r\n")?;
                s.flush()?;
                Ok(true)
            })();
            match r {
                Ok(true) => Outcome::Completed,
                Ok(false) => Outcome::Cut,
                Err(_) => Outcome::ClientGone,
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The real binary on a temp database
// ---------------------------------------------------------------------------

/// A tock under TZ=Europe/Berlin, and next year's night its clocks go
/// back (the last Sunday of October: 02:00–03:00 happens twice).
pub fn berlin_and_next_years_fold() -> (Tock, chrono::NaiveDate) {
    use chrono::Datelike;
    let mut t = Tock::new();
    t.set_env("TZ", "Europe/Berlin");
    let year = chrono::Utc::now().year() + 1;
    let last_sunday = (25..=31)
        .filter_map(|d| chrono::NaiveDate::from_ymd_opt(year, 10, d))
        .find(|d| d.weekday() == chrono::Weekday::Sun)
        .unwrap();
    (t, last_sunday)
}

/// A temp home for tock: database, config path, log dir, and the environment
/// every spawned tock gets (inherited OPENAI_*/ANTHROPIC_*/OLLAMA_HOST and
/// everything else are cleared).
pub struct Tock {
    pub dir: tempfile::TempDir,
    pub db: PathBuf,
    pub config: PathBuf,
    pub log_dir: PathBuf,
    pub env: Vec<(String, String)>,
}

/// What a one-shot command printed.
#[derive(Debug)]
pub struct Out {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Tock {
    /// On the offline echo model.
    pub fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("tock-e2e-")
            .tempdir()
            .unwrap();
        let db = dir.path().join("data").join("tock.db");
        let config = dir.path().join("config.toml");
        // An empty file, as a user's with nothing set: a path named by
        // TOCK_CONFIG that holds no file is told on every command.
        std::fs::write(&config, "").unwrap();
        let log_dir = dir.path().join("log");
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let mut env: Vec<(String, String)> = vec![
            (
                "PATH".into(),
                std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()),
            ),
            ("HOME".into(), home.display().to_string()),
            (
                "XDG_CONFIG_HOME".into(),
                home.join(".config").display().to_string(),
            ),
            (
                "XDG_DATA_HOME".into(),
                home.join(".local/share").display().to_string(),
            ),
            (
                "XDG_STATE_HOME".into(),
                home.join(".local/state").display().to_string(),
            ),
            ("LANG".into(), "C.UTF-8".into()),
            ("TOCK_DB".into(), db.display().to_string()),
            ("TOCK_CONFIG".into(), config.display().to_string()),
            ("TOCK_LOG_DIR".into(), log_dir.display().to_string()),
            ("TOCK_LOG".into(), "debug".into()),
        ];
        if let Ok(tz) = std::env::var("TZ") {
            env.push(("TZ".into(), tz));
        }
        Self {
            dir,
            db,
            config,
            log_dir,
            env,
        }
    }

    /// On the OpenAI-compatible provider at `base_url`, with the sentinel key.
    pub fn with_openai(base_url: &str) -> Self {
        let mut t = Self::new();
        t.set_env("OPENAI_BASE_URL", base_url);
        t.set_env("OPENAI_API_KEY", SENTINEL);
        t
    }

    pub fn set_env(&mut self, k: &str, v: &str) {
        self.env.retain(|(key, _)| key != k);
        self.env.push((k.to_string(), v.to_string()));
    }

    pub fn write_config(&self, toml: &str) {
        std::fs::write(&self.config, toml).unwrap();
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `tock ARGS` with the test environment (and nothing else).
    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(tock_bin());
        c.args(args).env_clear().stdin(Stdio::null());
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c
    }

    /// Run a one-shot command with `input` piped into its stdin.
    pub fn run_with_stdin(&self, args: &[&str], input: &[u8]) -> Out {
        let mut c = self.command(args);
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().expect("spawning tock");
        {
            use std::io::Write;
            // A command that exits before reading it all closes the pipe.
            let _ = child.stdin.take().unwrap().write_all(input);
        }
        let out = child.wait_with_output().unwrap();
        Out {
            status: out.status,
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Run a one-shot command (killed after 30 s).
    pub fn run(&self, args: &[&str]) -> Out {
        let mut c = self.command(args);
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = c.spawn().expect("spawning tock");
        let mut out_pipe = child.stdout.take().unwrap();
        let mut err_pipe = child.stderr.take().unwrap();
        let t_out = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = out_pipe.read_to_string(&mut s);
            s
        });
        let t_err = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err_pipe.read_to_string(&mut s);
            s
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("tock {args:?} did not finish within 30 s");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        Out {
            status,
            stdout: t_out.join().unwrap(),
            stderr: t_err.join().unwrap(),
        }
    }

    /// Run; assert success; return stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert!(
            o.status.success(),
            "tock {args:?} failed ({}): {}",
            o.status,
            o.stderr
        );
        o.stdout
    }

    /// Run; assert failure with exactly one line on stderr; return that line.
    pub fn fails(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert!(
            !o.status.success(),
            "tock {args:?} should fail but printed {:?}",
            o.stdout
        );
        let lines: Vec<&str> = o.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(
            lines.len(),
            1,
            "tock {args:?}: want one line on stderr, got {:?}",
            o.stderr
        );
        lines[0].to_string()
    }

    pub fn json(&self, args: &[&str]) -> Value {
        let out = self.ok(args);
        serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("tock {args:?}: not JSON ({e}): {out}"))
    }

    /// `tock send ARGS`; returns the printed id.
    pub fn send(&self, args: &[&str]) -> i64 {
        let mut a = vec!["send"];
        a.extend_from_slice(args);
        let out = self.ok(&a);
        out.trim()
            .parse()
            .unwrap_or_else(|_| panic!("send printed {out:?}, not an id"))
    }

    /// `list --all --json`
    pub fn items(&self) -> Vec<Value> {
        self.json(&["list", "--all", "--json"])
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    pub fn item(&self, id: i64) -> Value {
        self.items()
            .into_iter()
            .find(|i| i["id"] == id)
            .unwrap_or_else(|| panic!("item {id} not in list --all"))
    }

    pub fn show(&self, conv: &str) -> Value {
        self.json(&["show", conv, "--json"])
    }

    /// Start `tock ARGS` in the background; stdout and stderr go to files in the temp dir.
    pub fn spawn(&self, args: &[&str], name: &str) -> Proc {
        let out = self.path(&format!("{name}.out"));
        let err = self.path(&format!("{name}.err"));
        let mut c = self.command(args);
        c.stdout(append(&out)).stderr(append(&err));
        let child = c.spawn().expect("spawning tock");
        Proc {
            child: Some(child),
            out,
            err,
        }
    }

    pub fn spawn_daemon(&self) -> Proc {
        self.spawn(&["daemon"], "daemon")
    }

    /// Every file tock wrote in the log dir, concatenated.
    pub fn log_bytes(&self) -> Vec<u8> {
        let mut all = Vec::new();
        if let Ok(rd) = std::fs::read_dir(&self.log_dir) {
            for e in rd.flatten() {
                if let Ok(b) = std::fs::read(e.path()) {
                    all.extend(b);
                }
            }
        }
        all
    }

    /// The database, its WAL and shm, as bytes.
    pub fn db_bytes(&self) -> Vec<u8> {
        let mut all = Vec::new();
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let p = PathBuf::from(format!("{}{suffix}", self.db.display()));
            if let Ok(b) = std::fs::read(p) {
                all.extend(b);
            }
        }
        all
    }

    /// A read-only connection to the database (for invariant checks).
    pub fn sql(&self) -> rusqlite::Connection {
        let c = rusqlite::Connection::open_with_flags(
            &self.db,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .unwrap();
        c.busy_timeout(Duration::from_secs(5)).unwrap();
        c
    }
}

impl Default for Tock {
    fn default() -> Self {
        Self::new()
    }
}

fn append(p: &Path) -> std::fs::File {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(p)
        .unwrap()
}

/// A background tock process, SIGKILLed and reaped on drop.
pub struct Proc {
    child: Option<Child>,
    pub out: PathBuf,
    pub err: PathBuf,
}

impl Proc {
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(|c| c.id()).unwrap_or(0)
    }

    pub fn signal(&self, sig: i32) {
        if let Some(c) = &self.child {
            // SAFETY: signalling our own child, which is not reaped yet (its pid is still ours).
            unsafe {
                libc::kill(c.id() as i32, sig);
            }
        }
    }

    /// SIGKILL and reap.
    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Wait for exit up to `timeout`; None if still running.
    pub fn wait_timeout(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            let c = self.child.as_mut()?;
            if let Some(st) = c.try_wait().ok().flatten() {
                self.child = None;
                return Some(st);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn running(&mut self) -> bool {
        match self.child.as_mut() {
            Some(c) => matches!(c.try_wait(), Ok(None)),
            None => false,
        }
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.err).unwrap_or_default()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill9();
    }
}

// ---------------------------------------------------------------------------
// A pseudo-terminal runner (portable-pty + vt100)
// ---------------------------------------------------------------------------

/// The real binary in a pty, its output parsed by a vt100 screen and also kept raw.
pub struct Pty {
    child: Box<dyn portable_pty::Child + Send + Sync>,
    _master: Box<dyn portable_pty::MasterPty + Send>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    raw: Arc<Mutex<Vec<u8>>>,
    parser: Arc<Mutex<vt100::Parser>>,
    eof: Arc<AtomicBool>,
    pub rows: u16,
    pub cols: u16,
}

impl Pty {
    /// Start `tock ARGS` in a `rows`×`cols` pty with exactly `env`.
    pub fn spawn(args: &[&str], env: &[(String, String)], rows: u16, cols: u16) -> Pty {
        Self::spawn_answering(args, env, rows, cols, None)
    }

    /// As `spawn`, for a terminal that answers colour queries (OSC 10/11)
    /// with `colors` = (foreground, background), e.g. `("rgb:0000/0000/0000",
    /// "rgb:ffff/ffff/ffff")`; `None` ignores them, as many terminals do.
    pub fn spawn_answering(
        args: &[&str],
        env: &[(String, String)],
        rows: u16,
        cols: u16,
        colors: Option<(&str, &str)>,
    ) -> Pty {
        use portable_pty::{CommandBuilder, PtySize, native_pty_system};
        let colors = colors.map(|(fg, bg)| (fg.to_string(), bg.to_string()));
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("openpty");
        let mut cmd = CommandBuilder::new(tock_bin());
        cmd.args(args);
        cmd.env_clear();
        for (k, v) in env {
            cmd.env(k, v);
        }
        if !env.iter().any(|(k, _)| k == "TERM") {
            cmd.env("TERM", "xterm-256color");
        }
        let child = pair.slave.spawn_command(cmd).expect("spawn in pty");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer: Arc<Mutex<Box<dyn Write + Send>>> =
            Arc::new(Mutex::new(pair.master.take_writer().unwrap()));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let parser = Arc::new(Mutex::new(vt100::Parser::new(
            std::num::NonZeroU16::new(rows).unwrap(),
            std::num::NonZeroU16::new(cols).unwrap(),
            0,
        )));
        let eof = Arc::new(AtomicBool::new(false));
        {
            let (raw, parser, eof, writer) =
                (raw.clone(), parser.clone(), eof.clone(), writer.clone());
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                let mut tail: Vec<u8> = Vec::new();
                loop {
                    match reader.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            let chunk = &buf[..n];
                            raw.lock().unwrap().extend_from_slice(chunk);
                            parser.lock().unwrap().process(chunk);
                            // Answer the terminal queries a real terminal would
                            // (crossterm waits 2 s for a device-attributes reply).
                            tail.extend_from_slice(chunk);
                            let mut answer = Vec::new();
                            if let Some((fg, bg)) = &colors {
                                if contains_bytes(&tail, b"\x1b]10;?") {
                                    answer.extend_from_slice(
                                        format!("\x1b]10;{fg}\x1b\\").as_bytes(),
                                    );
                                }
                                if contains_bytes(&tail, b"\x1b]11;?") {
                                    answer.extend_from_slice(
                                        format!("\x1b]11;{bg}\x1b\\").as_bytes(),
                                    );
                                }
                            }
                            if contains_bytes(&tail, b"\x1b[c") {
                                answer.extend_from_slice(b"\x1b[?62;22c");
                            }
                            if contains_bytes(&tail, b"\x1b[6n") {
                                answer.extend_from_slice(b"\x1b[1;1R");
                            }
                            if !answer.is_empty() {
                                tail.clear();
                                let mut w = writer.lock().unwrap();
                                let _ = w.write_all(&answer);
                                let _ = w.flush();
                            } else if tail.len() > 16 {
                                tail.drain(..tail.len() - 16);
                            }
                        }
                    }
                }
                eof.store(true, Ordering::SeqCst);
            });
        }
        Pty {
            child,
            _master: pair.master,
            writer,
            raw,
            parser,
            eof,
            rows,
            cols,
        }
    }

    /// The foreground colours of the screen's visible characters.
    pub fn foreground_colors(&self) -> Vec<vt100::Color> {
        let parser = self.parser.lock().unwrap();
        let screen = parser.screen();
        let mut out = Vec::new();
        for r in 0..self.rows {
            for c in 0..self.cols {
                if let Some(cell) = screen.cell(r, c)
                    && !cell.contents().trim().is_empty()
                    && !out.contains(&cell.fgcolor())
                {
                    out.push(cell.fgcolor());
                }
            }
        }
        out
    }

    /// The screen as text (rows joined by newlines).
    pub fn screen(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// Whether the (parsed) terminal is in the alternate screen.
    pub fn alternate_screen(&self) -> bool {
        self.parser.lock().unwrap().screen().alternate_screen()
    }

    /// Whether the (parsed) terminal's cursor is hidden.
    pub fn cursor_hidden(&self) -> bool {
        self.parser.lock().unwrap().screen().hide_cursor()
    }

    pub fn raw(&self) -> Vec<u8> {
        self.raw.lock().unwrap().clone()
    }

    /// Poll the parsed screen every 20 ms until `pred` holds.
    pub fn wait_for(&self, timeout: Duration, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let s = self.screen();
            if pred(&s) {
                return s;
            }
            if Instant::now() >= deadline {
                panic!("timed out after {timeout:?} waiting for {what}; screen:\n{s}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn wait_text(&self, needle: &str, timeout: Duration) -> String {
        self.wait_for(timeout, &format!("{needle:?} on screen"), |s| {
            s.contains(needle)
        })
    }

    pub fn write(&self, bytes: &[u8]) {
        let mut w = self.writer.lock().unwrap();
        w.write_all(bytes).unwrap();
        w.flush().unwrap();
    }

    /// Type text (each char sent as typed), then optionally Enter.
    pub fn type_text(&self, s: &str) {
        self.write(s.as_bytes());
    }

    pub fn enter(&self) {
        self.write(b"\r");
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.process_id()
    }

    /// SIGKILL the process and reap it.
    pub fn kill9(&mut self) {
        if let Some(pid) = self.child.process_id() {
            // SAFETY: our own child, not reaped yet.
            unsafe {
                libc::kill(pid as i32, libc::SIGKILL);
            }
        }
        let _ = self.child.wait();
    }

    /// Wait for the process to exit; true if it did within `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(Some(_)) = self.child.try_wait() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Wait until the reader saw the end of the output (after the process exited).
    pub fn wait_eof(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while !self.eof.load(Ordering::SeqCst) {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        true
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.kill9();
        }
    }
}
