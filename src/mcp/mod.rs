//! MCP servers: the tools of `[mcp.NAME]` servers, offered to the model as
//! `NAME__tool` next to tock's own.
//!
//! Built on the official SDK (`rmcp`) rather than hand-written JSON-RPC: the
//! protocol's handshake, version negotiation, cancellation and both
//! transports (a child process on stdio, Streamable HTTP) come with it.
//!
//! One [`Manager`] per engine. It costs nothing while unused: a server is
//! started on the first turn that offers tools (or with tock when its config
//! says `startup = true`), its tool list is cached, and nothing polls it.
//! A server that cannot start, stops, times out or answers garbage becomes a
//! one-line status ([`ServerInfo::problem`]) and an error result the model
//! reads; the turn goes on. A crashed server is started again on its next
//! use, after an exponential back-off. Secrets (`env`, `headers`, and the
//! values their commands print) are kept in memory only and are replaced by
//! `<redacted>` in everything that comes from the server — every status,
//! log line and error, every tool result, every tool's name, description
//! and schema — before it is stored, shown or given to a model.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, ResourceContents};
use rmcp::service::{Peer, RunningService};
use rmcp::{RoleClient, ServiceError, ServiceExt};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;
use tokio::time::Instant;

use crate::config::{ConfigSource, McpServerConfig};
use crate::llm::{Image, ToolSpec};

/// Separates the server's name from the tool's in the names the model sees.
pub const SEPARATOR: &str = "__";

/// The longest result text given back to the model (a listing of a big
/// folder must not fill the context window).
const MAX_RESULT_CHARS: usize = 100_000;

/// A server that ran at least this long before it stopped starts its
/// back-off again from the beginning.
const HEALTHY_RUN: Duration = Duration::from_secs(300);

/// A server's state as front ends show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", content = "reason", rename_all = "snake_case")]
pub enum ServerState {
    /// Configured, not started yet (it starts on the first turn that offers tools).
    NotStarted,
    Starting,
    Running,
    /// It could not start or it stopped; the reason is one line.
    Failed(String),
    /// `enabled = false`.
    Disabled,
}

/// One tool of an MCP server.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct McpTool {
    /// The name the model sees: `server__tool`.
    pub name: String,
    /// The name the server knows it by, as it may be shown (redacted).
    pub tool: String,
    /// The name the server knows it by, for calls.
    #[serde(skip)]
    pub remote: String,
    pub description: String,
    /// The tool declares it does not change anything (`readOnlyHint`).
    pub read_only: bool,
    #[serde(skip)]
    pub input_schema: Value,
}

/// A configured server, its state and its tools (plain data for `/tools`
/// and `tock tools`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ServerInfo {
    pub name: String,
    /// `stdio` or `http`.
    pub transport: &'static str,
    #[serde(flatten)]
    pub state: ServerState,
    /// The last call that went wrong while the server kept running (a timeout,
    /// an answer that was not MCP), as one line.
    pub problem: Option<String>,
    /// The tools it listed when it last started.
    pub tools: Vec<McpTool>,
}

/// What a call gives back to the model.
#[derive(Clone, Debug, PartialEq)]
pub struct CallOutcome {
    pub text: String,
    pub is_error: bool,
    /// The images of the result that may be given to a model (a type models
    /// take, valid base64, within the budget), in order. Others are a note
    /// in `text`.
    pub images: Vec<Image>,
}

impl CallOutcome {
    fn error(msg: impl Into<String>) -> Self {
        Self {
            text: json!({"error": msg.into()}).to_string(),
            is_error: true,
            images: Vec::new(),
        }
    }
}

struct Connection {
    service: RunningService<RoleClient, ()>,
    peer: Peer<RoleClient>,
    /// Which start of the server this is (a call that saw it stop must not
    /// take down the one started after it).
    generation: u64,
}

#[derive(Default)]
struct View {
    state: Option<ServerState>,
    problem: Option<String>,
    tools: Vec<McpTool>,
    started_at: Option<Instant>,
    /// Stops (or failed starts) in a row, for the back-off.
    failures: i64,
    /// No new start before this.
    restart_at: Option<Instant>,
    /// The server's last line on stderr (redacted), to say why it stopped.
    stderr_tail: Option<String>,
}

struct Server {
    name: String,
    config: McpServerConfig,
    /// Held while starting, so two turns never start one server twice.
    conn: tokio::sync::Mutex<Option<Connection>>,
    view: Arc<Mutex<View>>,
    /// Values that must never be shown (resolved env and header values,
    /// longest first).
    secrets: Mutex<Vec<String>>,
    starts: std::sync::atomic::AtomicU64,
}

/// The MCP servers of one engine.
pub struct Manager {
    config: Arc<ConfigSource>,
    servers: Mutex<BTreeMap<String, Arc<Server>>>,
    restart_backoff: Duration,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A tool name as the model may see it (`[A-Za-z0-9_-]`, as OpenAI requires).
fn exposed_name(server: &str, tool: &str) -> String {
    let clean: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{server}{SEPARATOR}{clean}")
}

/// Whether `name` can name a server (it becomes the prefix of tool names).
pub fn valid_server_name(name: &str) -> bool {
    server_name_problem(name).is_none()
}

/// Why `name` cannot name a server, if it cannot: tool names are
/// `NAME__tool`, and providers take only `[A-Za-z0-9_-]` in them.
pub fn server_name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("a server name cannot be empty")
    } else if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        Some("a server name may only use letters, digits, - and _")
    } else if name.contains(SEPARATOR) {
        Some("a server name may not hold \"__\" (it joins the server's name to its tools' names)")
    } else {
        None
    }
}

impl Manager {
    pub fn new(config: Arc<ConfigSource>, restart_backoff: Duration) -> Self {
        Self {
            config,
            servers: Mutex::new(BTreeMap::new()),
            restart_backoff,
        }
    }

    /// Whether any server is configured (enabled or not).
    pub fn configured(&self) -> bool {
        !self.config.get().mcp.is_empty()
    }

    /// The servers of the current config, in name order; servers removed or
    /// changed in the config are stopped.
    fn sync(&self) -> Vec<Arc<Server>> {
        let cfg = self.config.get();
        let mut servers = lock(&self.servers);
        let mut stale = Vec::new();
        servers.retain(|name, s| {
            let keep = cfg.mcp.get(name) == Some(&s.config);
            if !keep {
                stale.push(s.clone());
            }
            keep
        });
        for (name, sc) in &cfg.mcp {
            if !valid_server_name(name) {
                continue;
            }
            servers.entry(name.clone()).or_insert_with(|| {
                Arc::new(Server {
                    name: name.clone(),
                    config: sc.clone(),
                    conn: tokio::sync::Mutex::new(None),
                    view: Arc::new(Mutex::new(View::default())),
                    secrets: Mutex::new(Vec::new()),
                    starts: std::sync::atomic::AtomicU64::new(0),
                })
            });
        }
        drop(servers);
        for s in stale {
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move { s.stop().await });
            }
        }
        lock(&self.servers).values().cloned().collect()
    }

    /// The tools to offer the model. Starts the enabled servers not started
    /// yet (all at once, each bounded by its timeout); a running server's
    /// cached list is used as it is. A server that failed recently is not
    /// started again before its back-off ends (its last list is offered).
    pub async fn tool_specs(&self) -> Vec<ToolSpec> {
        let servers: Vec<Arc<Server>> = self
            .sync()
            .into_iter()
            .filter(|s| s.config.enabled)
            .collect();
        if servers.is_empty() {
            return Vec::new();
        }
        let backoff = self.restart_backoff;
        futures::future::join_all(servers.iter().map(|s| s.ensure(backoff, false))).await;
        servers
            .iter()
            .flat_map(|s| lock(&s.view).tools.clone())
            .map(|t| ToolSpec {
                name: t.name,
                description: t.description,
                parameters: t.input_schema,
            })
            .collect()
    }

    /// Start the servers configured with `startup = true`.
    pub async fn start_eager(&self) {
        let servers: Vec<Arc<Server>> = self
            .sync()
            .into_iter()
            .filter(|s| s.config.enabled && s.config.startup)
            .collect();
        let backoff = self.restart_backoff;
        futures::future::join_all(servers.iter().map(|s| s.ensure(backoff, false))).await;
    }

    /// The secrets of the servers started so far (their `env` and `headers`
    /// values, with what `env_cmd` and `headers_cmd` printed).
    pub fn secrets(&self) -> Vec<String> {
        let servers: Vec<Arc<Server>> = lock(&self.servers).values().cloned().collect();
        servers
            .iter()
            .flat_map(|s| lock(&s.secrets).clone())
            .collect()
    }

    /// The configured server a tool name belongs to (`files__read` →
    /// `files`), whether or not it runs.
    pub fn server_of(&self, tool_name: &str) -> Option<String> {
        let (server, rest) = tool_name.split_once(SEPARATOR)?;
        (!rest.is_empty() && self.config.get().mcp.contains_key(server)).then(|| server.to_string())
    }

    /// Whether the tool's server is running and did not list it: a call to
    /// it is refused at once, not put to the user for approval first.
    pub fn lacks(&self, tool_name: &str) -> bool {
        let Some(server) = self.server_of(tool_name) else {
            return false;
        };
        let servers = lock(&self.servers);
        servers.get(&server).is_some_and(|s| {
            let view = lock(&s.view);
            view.state == Some(ServerState::Running)
                && !view.tools.iter().any(|t| t.name == tool_name)
        })
    }

    /// Whether the tool declared itself read-only when its server last listed it.
    pub fn read_only(&self, tool_name: &str) -> bool {
        let Some(server) = self.server_of(tool_name) else {
            return false;
        };
        let servers = lock(&self.servers);
        servers.get(&server).is_some_and(|s| {
            lock(&s.view)
                .tools
                .iter()
                .any(|t| t.name == tool_name && t.read_only)
        })
    }

    /// The servers and their tools as last seen, without starting anything
    /// (cheap: for a `/tools` view).
    pub fn snapshot(&self) -> Vec<ServerInfo> {
        self.sync().iter().map(|s| s.info()).collect()
    }

    /// Start every enabled server not running yet (one in back-off after a
    /// failure is left alone), then describe them all.
    pub async fn refresh(&self) -> Vec<ServerInfo> {
        let servers = self.sync();
        futures::future::join_all(
            servers
                .iter()
                .filter(|s| s.config.enabled)
                .map(|s| s.ensure(self.restart_backoff, false)),
        )
        .await;
        servers.iter().map(|s| s.info()).collect()
    }

    /// Call a tool by the name the model used, with the arguments it sent
    /// (JSON text). Never fails: every problem is an error result.
    pub async fn call(&self, tool_name: &str, arguments: &str) -> CallOutcome {
        let Some(server_name) = self.server_of(tool_name) else {
            return CallOutcome::error(format!("no MCP server offers {tool_name}"));
        };
        let server = self.sync().into_iter().find(|s| s.name == server_name);
        let Some(server) = server else {
            return CallOutcome::error(format!(
                "the MCP server {server_name} is not configured correctly"
            ));
        };
        if !server.config.enabled {
            return CallOutcome::error(format!("the MCP server {server_name} is disabled"));
        }
        let args = match call_arguments(arguments) {
            Ok(map) => map,
            Err(e) => return CallOutcome::error(e),
        };
        let image_budget = self.config.get().max_attachment_bytes();
        server
            .call(tool_name, args, self.restart_backoff, image_budget)
            .await
    }

    /// Stop every server (closing stdin, then SIGTERM, then SIGKILL for a
    /// child process), each bounded by `limit`.
    pub async fn shutdown(&self, limit: Duration) {
        let servers: Vec<Arc<Server>> = lock(&self.servers).values().cloned().collect();
        let _ = tokio::time::timeout(
            limit,
            futures::future::join_all(servers.iter().map(|s| s.stop())),
        )
        .await;
    }
}

impl Server {
    fn transport(&self) -> &'static str {
        if self.config.url.is_some() {
            "http"
        } else {
            "stdio"
        }
    }

    fn info(&self) -> ServerInfo {
        let v = lock(&self.view);
        let state = if !self.config.enabled {
            ServerState::Disabled
        } else {
            v.state.clone().unwrap_or(ServerState::NotStarted)
        };
        ServerInfo {
            name: self.name.clone(),
            transport: self.transport(),
            state,
            problem: v.problem.clone(),
            tools: v.tools.clone(),
        }
    }

    /// Replace every secret value in `text`, and make it one line.
    fn redact(&self, text: &str) -> String {
        let out = scrub(&lock(&self.secrets), text);
        let line = crate::sanitize::sanitize_line(&out).into_owned();
        let mut line: String = line.chars().take(300).collect();
        if line.len() < out.len() && line.chars().count() == 300 {
            line.push('…');
        }
        line
    }

    fn set_state(&self, state: ServerState) {
        lock(&self.view).state = Some(state);
    }

    /// Record a stop or a failed start: the state says why, and the next
    /// start waits for the back-off.
    fn failed(&self, reason: &str, base: Duration) {
        let reason = self.redact(reason);
        let mut v = lock(&self.view);
        let ran_long = v.started_at.is_some_and(|t| t.elapsed() >= HEALTHY_RUN);
        v.failures = if ran_long { 1 } else { v.failures + 1 };
        v.restart_at = Some(Instant::now() + crate::engine::backoff(base, v.failures));
        v.started_at = None;
        let reason = match v.stderr_tail.take() {
            Some(tail) if !tail.is_empty() && !reason.contains(&tail) => {
                format!("{reason} (it said: {tail})")
            }
            _ => reason,
        };
        tracing::warn!(server = %self.name, "MCP server: {reason}");
        v.state = Some(ServerState::Failed(reason));
    }

    /// A connection to the running server, starting it if needed. With
    /// `wait_backoff`, a server in back-off is waited for (when the wait
    /// fits in its timeout); without, it is left alone until the next use.
    async fn ensure(
        &self,
        base: Duration,
        wait_backoff: bool,
    ) -> Result<(Peer<RoleClient>, u64), String> {
        let mut conn = self.conn.lock().await;
        if let Some(c) = conn.as_ref() {
            if !c.peer.is_transport_closed() {
                return Ok((c.peer.clone(), c.generation));
            }
            if let Some(c) = conn.take() {
                drop(c.service);
            }
            self.failed("the server stopped", base);
        }
        let restart_at = lock(&self.view).restart_at;
        if let Some(at) = restart_at {
            let now = Instant::now();
            if at > now {
                let wait = at - now;
                if !wait_backoff || wait > self.config.timeout() {
                    return Err(match lock(&self.view).state.clone() {
                        Some(ServerState::Failed(r)) => format!(
                            "the MCP server {} is not running ({r}); it is started again in {}",
                            self.name,
                            crate::llm::http::fmt_duration(wait)
                        ),
                        _ => format!("the MCP server {} is not running", self.name),
                    });
                }
                tokio::time::sleep(wait).await;
            }
        }
        self.set_state(ServerState::Starting);
        let started = tokio::time::timeout(self.config.timeout(), self.start()).await;
        match started {
            Ok(Ok((c, tools))) => {
                let peer = (c.peer.clone(), c.generation);
                {
                    let mut v = lock(&self.view);
                    v.tools = tools;
                    v.state = Some(ServerState::Running);
                    v.problem = None;
                    v.started_at = Some(Instant::now());
                }
                *conn = Some(c);
                tracing::info!(server = %self.name, "MCP server started");
                Ok(peer)
            }
            Ok(Err(e)) => {
                self.failed(&e, base);
                Err(self.not_running())
            }
            Err(_) => {
                self.failed(
                    &format!(
                        "did not answer MCP's start within {} (a server that prints anything else on its output is not heard)",
                        crate::llm::http::fmt_duration(self.config.timeout())
                    ),
                    base,
                );
                Err(self.not_running())
            }
        }
    }

    fn not_running(&self) -> String {
        match lock(&self.view).state.clone() {
            Some(ServerState::Failed(r)) => {
                format!("the MCP server {} could not start: {r}", self.name)
            }
            _ => format!("the MCP server {} could not start", self.name),
        }
    }

    /// Resolve the secrets, start the server, list its tools.
    async fn start(&self) -> Result<(Connection, Vec<McpTool>), String> {
        let cfg = &self.config;
        // A literal value is a secret when it looks like one, as for API
        // keys (`LOG_LEVEL = "info"` is not: every "info" of every result
        // would be mangled); what a command prints always is.
        let mut secrets: Vec<String> = cfg
            .env
            .values()
            .chain(cfg.headers.values())
            .map(|v| v.trim())
            .filter(|v| crate::llm::http::looks_like_a_secret(v))
            .map(str::to_string)
            .collect();
        let mut env = cfg.env.clone();
        for (k, cmd) in &cfg.env_cmd {
            let v = run_secret_cmd(cmd)
                .await
                .map_err(|e| format!("env_cmd {k}: {e}"))?;
            secrets.push(v.clone());
            env.insert(k.clone(), v);
        }
        let mut headers = cfg.headers.clone();
        for (k, cmd) in &cfg.headers_cmd {
            let v = run_secret_cmd(cmd)
                .await
                .map_err(|e| format!("headers_cmd {k}: {e}"))?;
            secrets.push(v.clone());
            headers.insert(k.clone(), v);
        }
        secrets.retain(|s| s.len() >= MIN_SECRET);
        // Longest first: a secret that holds another is replaced whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        *lock(&self.secrets) = secrets.clone();
        let service = match (&cfg.command, &cfg.url) {
            (Some(command), None) => {
                let mut cmd = tokio::process::Command::new(command);
                cmd.args(&cfg.args).envs(&env).kill_on_drop(true);
                if let Some(dir) = &cfg.cwd {
                    cmd.current_dir(expand_home(dir));
                }
                let (transport, stderr) = rmcp::transport::TokioChildProcess::builder(cmd)
                    .stderr(Stdio::piped())
                    .spawn()
                    .map_err(|e| format!("cannot run {command}: {e}"))?;
                if let Some(stderr) = stderr {
                    self.follow_stderr(stderr);
                }
                ().serve(transport).await.map_err(start_failure)?
            }
            (None, Some(url)) => {
                // Said plainly: the HTTP client's word for it is "builder error".
                let is_url = url.parse::<http::Uri>().is_ok_and(|u| {
                    matches!(u.scheme_str(), Some("http" | "https")) && u.host().is_some()
                });
                if !is_url {
                    return Err(format!(
                        "its url {:?} is not an http:// or https:// address",
                        crate::sanitize::sanitize_line(url)
                    ));
                }
                use rmcp::transport::StreamableHttpClientTransport;
                use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
                install_crypto_provider();
                let mut custom = std::collections::HashMap::new();
                for (k, v) in &headers {
                    let name = http::HeaderName::from_bytes(k.as_bytes())
                        .map_err(|_| format!("header {k} is not a valid header name"))?;
                    let value = http::HeaderValue::from_str(v)
                        .map_err(|_| format!("the value of header {k} is not valid"))?;
                    custom.insert(name, value);
                }
                let transport = StreamableHttpClientTransport::from_config(
                    StreamableHttpClientTransportConfig::with_uri(url.as_str())
                        .custom_headers(custom),
                );
                ().serve(transport).await.map_err(start_failure)?
            }
            (Some(_), Some(_)) => return Err("give command or url, not both".into()),
            (None, None) => return Err("give command (stdio) or url (Streamable HTTP)".into()),
        };
        let peer = service.peer().clone();
        let listed = peer
            .list_all_tools()
            .await
            .map_err(|e| format!("listing its tools failed: {e}"))?;
        // What the server says of its tools goes to the model, the screen
        // and `tock tools`: without the secrets.
        let tools = listed
            .into_iter()
            .map(|t| {
                let shown = scrub(&secrets, &t.name);
                McpTool {
                    name: exposed_name(&self.name, &shown),
                    tool: shown,
                    remote: t.name.to_string(),
                    description: scrub(
                        &secrets,
                        t.description
                            .as_deref()
                            .or(t.title.as_deref())
                            .unwrap_or_default(),
                    ),
                    read_only: t
                        .annotations
                        .as_ref()
                        .and_then(|a| a.read_only_hint)
                        .unwrap_or(false),
                    input_schema: scrub_value(&secrets, Value::Object((*t.input_schema).clone())),
                }
            })
            .collect();
        let generation = self
            .starts
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok((
            Connection {
                service,
                peer,
                generation,
            },
            tools,
        ))
    }

    /// Log the server's stderr (redacted) and keep its last line for the status.
    fn follow_stderr(&self, stderr: tokio::process::ChildStderr) {
        let view = self.view.clone();
        let name = self.name.clone();
        let secrets = lock(&self.secrets).clone();
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let line = scrub(&secrets, &line);
                let line: String = crate::sanitize::sanitize_line(&line)
                    .chars()
                    .take(200)
                    .collect();
                if line.trim().is_empty() {
                    continue;
                }
                tracing::debug!(server = %name, "MCP server stderr: {line}");
                lock(&view).stderr_tail = Some(line);
            }
        });
    }

    async fn call(
        &self,
        tool_name: &str,
        args: serde_json::Map<String, Value>,
        base: Duration,
        image_budget: u64,
    ) -> CallOutcome {
        let (peer, generation) = match self.ensure(base, true).await {
            Ok(p) => p,
            Err(e) => return CallOutcome::error(e),
        };
        let tool = lock(&self.view)
            .tools
            .iter()
            .find(|t| t.name == tool_name)
            .map(|t| t.remote.clone());
        let Some(tool) = tool else {
            return CallOutcome::error(format!(
                "the MCP server {} has no tool {tool_name}",
                self.name
            ));
        };
        let timeout = self.config.timeout();
        let params = CallToolRequestParams::new(tool).with_arguments(args);
        match tokio::time::timeout(timeout, peer.call_tool(params)).await {
            Err(_) => {
                let msg = format!(
                    "{tool_name} did not answer within {}",
                    crate::llm::http::fmt_duration(timeout)
                );
                if self.transport() == "http" {
                    // The next call starts a new session: a server started
                    // again may answer the old one with an error (400 "No
                    // valid session ID") that the client never hands to the
                    // call, and every call then waited its whole timeout
                    // until tock was restarted.
                    let mut conn = self.conn.lock().await;
                    if conn.as_ref().is_some_and(|c| c.generation == generation) {
                        drop(conn.take());
                    }
                }
                lock(&self.view).problem = Some(msg.clone());
                CallOutcome::error(msg)
            }
            Ok(Ok(result)) => {
                let secrets = lock(&self.secrets).clone();
                render(result, image_budget, &secrets)
            }
            Ok(Err(ServiceError::McpError(e))) => CallOutcome::error(self.redact(&e.message)),
            Ok(Err(e)) => {
                let closed = matches!(
                    e,
                    ServiceError::TransportClosed | ServiceError::TransportSend(_)
                ) || peer.is_transport_closed();
                if closed {
                    let mut conn = self.conn.lock().await;
                    if conn.as_ref().is_some_and(|c| c.generation == generation) {
                        drop(conn.take());
                        self.failed("the server stopped during a call", base);
                    }
                    drop(conn);
                    CallOutcome::error(format!(
                        "the MCP server {} stopped during the call; it is started again on the next call",
                        self.name
                    ))
                } else {
                    let msg = self.redact(&format!("{tool_name}: {e}"));
                    lock(&self.view).problem = Some(msg.clone());
                    CallOutcome::error(msg)
                }
            }
        }
    }

    async fn stop(&self) {
        let taken = self.conn.lock().await.take();
        if let Some(mut c) = taken {
            let _ = c.service.close_with_timeout(Duration::from_secs(5)).await;
            tracing::info!(server = %self.name, "MCP server stopped");
        }
        let mut v = lock(&self.view);
        if v.state == Some(ServerState::Running) {
            v.state = None;
        }
    }
}

/// The image types every provider takes (as for attachments).
const MODEL_IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// A result for the model: text parts as they are; images of a type models
/// take, valid and together within `image_budget` bytes (decoded), as
/// images; every other part, and an image left out, as a short note; an
/// error result as `{"error": ...}`. The text has `secrets` taken out,
/// whatever part of the result they came in.
fn render(result: CallToolResult, image_budget: u64, secrets: &[String]) -> CallOutcome {
    use base64::Engine as _;
    let mut parts: Vec<String> = Vec::new();
    let mut images: Vec<Image> = Vec::new();
    let mut image_bytes: u64 = 0;
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => parts.push(t.text.clone()),
            ContentBlock::Image(i) => {
                let mime = i
                    .mime_type
                    .split(';')
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .to_ascii_lowercase();
                let shown = crate::sanitize::sanitize_line(&i.mime_type)
                    .chars()
                    .take(60)
                    .collect::<String>();
                if !MODEL_IMAGE_TYPES.contains(&mime.as_str()) {
                    parts.push(format!(
                        "[image {shown}: not passed to the model: models take png, jpeg, gif or webp images]"
                    ));
                    continue;
                }
                let data: String = i.data.split_ascii_whitespace().collect();
                let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(&data) else {
                    parts.push(format!(
                        "[image {shown}: not passed to the model: its data is not valid base64]"
                    ));
                    continue;
                };
                let len = bytes.len() as u64;
                if image_bytes.saturating_add(len) > image_budget {
                    parts.push(format!(
                        "[image {shown}, {}: not passed to the model: over the {} limit for the images of one result]",
                        crate::files::human_size(len),
                        crate::files::human_size(image_budget)
                    ));
                    continue;
                }
                image_bytes += len;
                // A plain mark where it came, for whoever reads the result
                // (the image itself goes with it, never its bytes as text).
                parts.push(format!("[image {mime}, {}]", crate::files::human_size(len)));
                images.push(Image {
                    mime,
                    data_base64: data,
                });
            }
            ContentBlock::Audio(a) => parts.push(format!(
                "[audio {}: audio from tools is not passed to the model]",
                a.mime_type
            )),
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents { uri, text, .. } => {
                    parts.push(format!("--- {uri} ---\n{text}"))
                }
                ResourceContents::BlobResourceContents { uri, .. } => {
                    parts.push(format!("[binary resource {uri}]"))
                }
                _ => parts.push("[a resource of a kind tock does not read]".into()),
            },
            ContentBlock::ResourceLink(l) => {
                parts.push(format!("[resource {} ({})]", l.name, l.uri))
            }
            _ => parts.push("[a part of a kind tock does not read]".into()),
        }
    }
    if parts.is_empty()
        && let Some(v) = &result.structured_content
    {
        // Each string, before JSON escapes could hide a secret.
        parts.push(scrub_value(secrets, v.clone()).to_string());
    }
    let mut text = scrub(secrets, &parts.join("\n"));
    if text.chars().count() > MAX_RESULT_CHARS {
        text = text.chars().take(MAX_RESULT_CHARS).collect();
        text.push_str("\n[result cut: too long]");
    }
    if result.is_error == Some(true) {
        CallOutcome {
            images,
            ..CallOutcome::error(text)
        }
    } else {
        CallOutcome {
            text,
            is_error: false,
            images,
        }
    }
}

fn expand_home(dir: &std::path::Path) -> std::path::PathBuf {
    match (dir.strip_prefix("~"), std::env::var_os("HOME")) {
        (Ok(rest), Some(home)) => std::path::PathBuf::from(home).join(rest),
        _ => dir.to_path_buf(),
    }
}

/// The TLS of the HTTP transport uses the same crypto as tock's providers.
fn install_crypto_provider() {
    // Fails only when one is installed already, which is what we want.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Why a server's start failed, in one plain line. rmcp's message for a
/// transport that failed names the transport's Rust type
/// (`Transport [rmcp::transport::worker::WorkerTransport<…>] error: …`);
/// the innermost cause says what happened (`Connection refused`).
fn start_failure(e: rmcp::service::ClientInitializeError) -> String {
    use rmcp::service::ClientInitializeError as E;
    match e {
        E::TransportError { error, .. } => {
            let mut cause: &dyn std::error::Error = &*error.error;
            while let Some(inner) = cause.source() {
                cause = inner;
            }
            format!("cannot reach it: {cause}")
        }
        E::ExpectedInitResponse(_) | E::ExpectedInitResult(_) => {
            "it answered its start with something other than MCP's".to_string()
        }
        other => other.to_string(),
    }
}

/// The shortest value taken as a secret (a shorter one would mangle text).
const MIN_SECRET: usize = 3;

/// `text` with every secret (longest first) replaced by `<redacted>`.
fn scrub(secrets: &[String], text: &str) -> String {
    let mut out = text.to_string();
    for s in secrets {
        if out.contains(s.as_str()) {
            out = out.replace(s.as_str(), "<redacted>");
        }
    }
    out
}

/// `v` with every string in it, and every key, scrubbed.
fn scrub_value(secrets: &[String], v: Value) -> Value {
    match v {
        Value::String(s) => Value::String(scrub(secrets, &s)),
        Value::Array(a) => Value::Array(a.into_iter().map(|v| scrub_value(secrets, v)).collect()),
        Value::Object(o) => Value::Object(
            o.into_iter()
                .map(|(k, v)| (scrub(secrets, &k), scrub_value(secrets, v)))
                .collect(),
        ),
        other => other,
    }
}

/// Run a shell command that prints a secret; its output never appears in an error.
async fn run_secret_cmd(cmd: &str) -> Result<String, String> {
    let out = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| format!("could not run: {e}"))?;
    if !out.status.success() {
        return Err(crate::config::command_failure(cmd, out.status));
    }
    let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if v.is_empty() {
        return Err("printed nothing".into());
    }
    Ok(v)
}

/// A tool call's arguments as MCP takes them (a JSON object; nothing is
/// none), or what to tell the model instead. Checked before a call is put
/// to the user too: approving a call that cannot run asked for nothing.
pub fn call_arguments(arguments: &str) -> Result<serde_json::Map<String, Value>, String> {
    match arguments.trim() {
        "" => Ok(serde_json::Map::new()),
        text => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) => Err("arguments must be a JSON object".to_string()),
            Err(e) => Err(format!("arguments are not valid JSON: {e}")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_are_namespaced_and_safe_for_every_provider() {
        assert_eq!(exposed_name("files", "read_file"), "files__read_file");
        assert_eq!(exposed_name("web", "fetch.url v2"), "web__fetch_url_v2");
        assert!(valid_server_name("files"));
        assert!(valid_server_name("my-files_2"));
        assert!(!valid_server_name("a__b"));
        assert!(!valid_server_name("a.b"));
        assert!(!valid_server_name(""));
    }

    #[test]
    fn results_keep_text_and_images_and_describe_what_the_model_cannot_take() {
        let r = CallToolResult::success(vec![
            ContentBlock::text("hello"),
            ContentBlock::image("aGVsbG8=", "image/PNG"),
            ContentBlock::image("PHN2Zz4=", "image/svg+xml"),
            ContentBlock::image("not base64!", "image/png"),
            ContentBlock::image("d29ybGQh", "image/webp"),
        ]);
        let out = render(r, 8, &[]);
        assert!(!out.is_error);
        assert_eq!(
            out.images,
            [Image {
                mime: "image/png".into(),
                data_base64: "aGVsbG8=".into()
            }]
        );
        assert_eq!(
            out.text,
            "hello\n[image image/png, 5 B]\n[image image/svg+xml: not passed to the model: models take png, jpeg, gif or webp images]\n\
             [image image/png: not passed to the model: its data is not valid base64]\n\
             [image image/webp, 6 B: not passed to the model: over the 8 B limit for the images of one result]"
        );
        // Within the budget, both go.
        let r = CallToolResult::success(vec![
            ContentBlock::image("aGVsbG8=", "image/png"),
            ContentBlock::image("d29ybGQh", "image/webp"),
        ]);
        let out = render(r, 11, &[]);
        assert_eq!(out.images.len(), 2);
        assert_eq!(out.text, "[image image/png, 5 B]\n[image image/webp, 6 B]");
        let out = render(
            CallToolResult::error(vec![ContentBlock::text("boom")]),
            1024,
            &[],
        );
        assert!(out.is_error);
        assert_eq!(out.text, r#"{"error":"boom"}"#);
    }
}
