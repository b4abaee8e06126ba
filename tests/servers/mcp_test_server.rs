//! A small MCP server for tock's tests, on rmcp's server side.
//!
//! `mcp_test_server` speaks MCP on stdio; `mcp_test_server --http` serves
//! Streamable HTTP on 127.0.0.1 and prints its URL as the first line of
//! stdout; `mcp_test_server --garbage` answers the handshake with text that
//! is not JSON-RPC. With `MCP_TEST_LOG=FILE` every call is appended to FILE
//! (one line: the tool and its arguments) so tests can see what ran.
//!
//! Tools: `echo` (text result), `fail` (an error result), `slow` (sleeps),
//! `crash` (the process exits during the call), `peek` (declares
//! `readOnlyHint`), `whoami` (the process id, to see a restart),
//! `has_env` (whether a variable has a value, without printing it),
//! `header` (a request header of the HTTP call, for `headers`), `shot`
//! (a text and a 1x1 PNG image, declares `readOnlyHint`), `wait_file`
//! (answers once a file exists, declares `readOnlyHint`: a call that is
//! still running while a test kills tock), `block` (runs until the client
//! cancels the call, then logs `block cancelled`).
//!
//! With `MCP_TEST_LEAK=VAR,VAR2,…` the server gives away the values of
//! those variables everywhere it can (as a careless server does with its
//! token): in its instructions, in every tool's title, description and
//! input schema, in the name of `echo` (`echo_VALUE`), and through the tool
//! `leak`, which only exists then: `how` = `error` (an error result),
//! `parts` (text, an embedded resource, a resource link, an image and audio
//! of odd types), `structured` (structured content only) or `rpc` (a
//! JSON-RPC error).

use std::io::Write;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ServerCapabilities, ServerConfig};
use rmcp::{ErrorData, ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct Text {
    /// The text to give back.
    text: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct Millis {
    /// How long to take, in milliseconds.
    ms: u64,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct FilePath {
    /// The file to wait for.
    path: String,
}

/// A 1x1 red PNG.
const SHOT_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct EnvCheck {
    name: String,
    value: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct How {
    how: String,
}

/// The values of the variables `MCP_TEST_LEAK` names, joined by spaces.
fn leaked() -> Option<String> {
    let names = std::env::var("MCP_TEST_LEAK").ok()?;
    let values: Vec<String> = names
        .split(',')
        .map(|n| std::env::var(n).unwrap_or_default())
        .collect();
    Some(values.join(" "))
}

#[derive(Debug, Clone)]
struct TestServer {
    tool_router: ToolRouter<Self>,
    /// Which session of this process this is (over HTTP, one per client
    /// session), from 1.
    session: usize,
}

static SESSIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn log_call(tool: &str, args: &str) {
    if let Ok(path) = std::env::var("MCP_TEST_LOG")
        && let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
    {
        let _ = writeln!(f, "{tool} {args}");
    }
}

#[tool_router]
impl TestServer {
    fn new() -> Self {
        let mut tool_router = Self::tool_router();
        match leaked() {
            None => tool_router.remove_route("leak"),
            Some(v) => {
                for route in tool_router.map.values_mut() {
                    let attr = &mut route.attr;
                    attr.title = Some(format!("title {v}"));
                    let desc = attr.description.as_deref().unwrap_or_default();
                    attr.description = Some(format!("{desc} (uses {v})").into());
                    let mut schema = (*attr.input_schema).clone();
                    schema.insert("description".into(), format!("key {v}").into());
                    attr.input_schema = std::sync::Arc::new(schema);
                }
                if let Some(mut echo) = tool_router.map.remove("echo") {
                    echo.attr.name = format!("echo_{v}").into();
                    tool_router.add_route(echo);
                }
            }
        }
        let session = SESSIONS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        Self {
            tool_router,
            session,
        }
    }

    #[tool(description = "Give the text back.")]
    async fn echo(&self, Parameters(Text { text }): Parameters<Text>) -> String {
        log_call("echo", &text);
        format!("echo: {text}")
    }

    #[tool(description = "Always fails.")]
    async fn fail(&self) -> Result<CallToolResult, ErrorData> {
        log_call("fail", "");
        Ok(CallToolResult::error(vec![ContentBlock::text(
            "the disk is on fire",
        )]))
    }

    #[tool(description = "Answer after a while.")]
    async fn slow(&self, Parameters(Millis { ms }): Parameters<Millis>) -> String {
        log_call("slow", &ms.to_string());
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
        "finally".to_string()
    }

    #[tool(description = "Exit in the middle of the call.")]
    async fn crash(&self) -> String {
        log_call("crash", "");
        std::process::exit(3)
    }

    #[tool(
        description = "Look without touching.",
        annotations(read_only_hint = true)
    )]
    async fn peek(&self) -> String {
        log_call("peek", "");
        "nothing changed".to_string()
    }

    #[tool(
        description = "The server's process id.",
        annotations(read_only_hint = true)
    )]
    async fn whoami(&self) -> String {
        log_call("whoami", "");
        format!("pid {}", std::process::id())
    }

    #[tool(
        description = "Which session of the server this is.",
        annotations(read_only_hint = true)
    )]
    async fn session(&self) -> String {
        log_call("session", "");
        format!("session {}", self.session)
    }

    #[tool(
        description = "A picture of the screen.",
        annotations(read_only_hint = true)
    )]
    async fn shot(&self) -> Result<CallToolResult, ErrorData> {
        log_call("shot", "");
        Ok(CallToolResult::success(vec![
            ContentBlock::text("a red dot"),
            ContentBlock::image(SHOT_PNG, "image/png"),
        ]))
    }

    #[tool(
        description = "Answer once the file exists.",
        annotations(read_only_hint = true)
    )]
    async fn wait_file(&self, Parameters(FilePath { path }): Parameters<FilePath>) -> String {
        log_call("wait_file", &path);
        // Bounded, so a server left behind by a killed client ends too.
        for _ in 0..6000 {
            if std::path::Path::new(&path).exists() {
                return "the file is there".to_string();
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        "gave up waiting".to_string()
    }

    #[tool(description = "Run until the client cancels the call.")]
    async fn block(&self, context: rmcp::service::RequestContext<rmcp::RoleServer>) -> String {
        log_call("block", "");
        // Bounded, so a server left behind by a killed client ends too.
        tokio::select! {
            _ = context.ct.cancelled() => {
                log_call("block", "cancelled");
                "cancelled".to_string()
            }
            _ = tokio::time::sleep(std::time::Duration::from_secs(120)) => "gave up".to_string(),
        }
    }

    #[tool(description = "Whether a variable has the given value.")]
    async fn has_env(&self, Parameters(EnvCheck { name, value }): Parameters<EnvCheck>) -> String {
        log_call("has_env", &name);
        let same = std::env::var(&name).is_ok_and(|v| v == value);
        if same { "yes" } else { "no" }.to_string()
    }

    #[tool(description = "Give away the variables MCP_TEST_LEAK names.")]
    async fn leak(
        &self,
        Parameters(How { how }): Parameters<How>,
    ) -> Result<CallToolResult, ErrorData> {
        log_call("leak", &how);
        let v = leaked().unwrap_or_default();
        match how.as_str() {
            "error" => Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                "auth failed using TOKEN={v}"
            ))])),
            "parts" => Ok(CallToolResult::success(vec![
                ContentBlock::text(format!("text {v}")),
                ContentBlock::embedded_text(format!("file:///{v}"), format!("resource {v}")),
                ContentBlock::resource_link(rmcp::model::Resource::new(
                    format!("file:///link/{v}"),
                    format!("link {v}"),
                )),
                ContentBlock::image("aGVsbG8=", format!("image/x-{v}")),
                ContentBlock::audio("aGVsbG8=", format!("audio/x-{v}")),
            ])),
            "structured" => {
                let mut r = CallToolResult::structured(serde_json::json!({
                    "token": v,
                    "quoted": format!("\"{v}\""),
                }));
                r.content.clear();
                Ok(r)
            }
            _ => Err(ErrorData::internal_error(format!("bad token {v}"), None)),
        }
    }

    #[tool(description = "A request header of this HTTP call (http only).")]
    async fn header(
        &self,
        Parameters(Text { text }): Parameters<Text>,
        parts: rmcp::handler::server::tool::Extension<http::request::Parts>,
    ) -> String {
        log_call("header", &text);
        parts
            .0
            .headers
            .get(text.as_str())
            .and_then(|v| v.to_str().ok())
            .unwrap_or("(none)")
            .to_string()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        let config = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        match leaked() {
            Some(v) => config.with_instructions(format!("log in with {v}")),
            None => config,
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mode = std::env::args().nth(1).unwrap_or_default();
    match mode.as_str() {
        "--garbage" => {
            // Read the handshake, answer nonsense, stay alive.
            let mut line = String::new();
            let _ = std::io::stdin().read_line(&mut line);
            println!("this is not JSON-RPC");
            std::io::stdout().flush()?;
            tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
            Ok(())
        }
        "--http" => serve_http().await,
        _ => {
            let service = TestServer::new().serve(rmcp::transport::stdio()).await?;
            service.waiting().await?;
            Ok(())
        }
    }
}

async fn serve_http() -> Result<(), Box<dyn std::error::Error>> {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    };
    let service: StreamableHttpService<TestServer, LocalSessionManager> =
        StreamableHttpService::new(
            || Ok(TestServer::new()),
            Default::default(),
            StreamableHttpServerConfig::default().with_sse_keep_alive(None),
        );
    // MCP_TEST_PORT: the port of a server that is started again (a new
    // process, sessions and all, where the last one listened).
    let port = std::env::var("MCP_TEST_PORT").unwrap_or_else(|_| "0".into());
    let listener = tokio::net::TcpListener::bind(format!("127.0.0.1:{port}")).await?;
    println!("http://{}/mcp", listener.local_addr()?);
    std::io::stdout().flush()?;
    loop {
        let (stream, _) = listener.accept().await?;
        let svc = hyper_util::service::TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ =
                hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new())
                    .serve_connection(io, svc)
                    .await;
        });
    }
}
