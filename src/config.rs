//! Layered configuration: defaults -> TOML file in the platform config dir ->
//! environment -> command line. Secrets are resolved late, kept in memory
//! only, and never written anywhere.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};
use serde::Deserialize;

use crate::llm::{self, Provider, ProviderKind, ProviderSpec};

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Name of the model used when a conversation has none (a key of `models`, or a model id).
    pub default_model: Option<String>,
    #[serde(default)]
    pub models: BTreeMap<String, ModelConfig>,
    #[serde(default)]
    pub roles: BTreeMap<String, RoleConfig>,
    #[serde(default)]
    pub outbox: OutboxConfig,
    #[serde(default)]
    pub notify: NotifyConfig,
    /// Tools that run without asking, e.g. `["schedule_task"]`.
    #[serde(default)]
    pub auto_approve: Vec<String>,
    /// Which tool calls run, wait for the user, or are refused.
    #[serde(default)]
    pub approvals: ApprovalsConfig,
    /// Program (and arguments) run on each notification; the event is passed as
    /// arguments and in TOCK_EVENT / TOCK_TEXT, never through a shell.
    #[serde(default)]
    pub notify_command: Option<Vec<String>>,
    /// Largest attachment total per message, in bytes (default 20 MB).
    pub max_attachment_bytes: Option<u64>,
    /// Key bindings that replace the defaults: `"strip.cancel" = "x"` or a list of keys.
    #[serde(default)]
    pub keys: BTreeMap<String, KeySpec>,
    #[serde(default)]
    pub ui: UiConfig,
    #[serde(default)]
    pub turn: TurnConfig,
    /// MCP servers whose tools are offered to the model, by name (`[mcp.files]`).
    #[serde(default)]
    pub mcp: BTreeMap<String, McpServerConfig>,
}

/// `[mcp.NAME]`: one MCP server, started as a child process speaking stdio
/// (`command`) or reached over Streamable HTTP (`url`). Its tools are offered
/// as `NAME__tool`. `Debug` hides the values of `env` and `headers`.
#[derive(Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// The program to run (looked up in `PATH`).
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables added to the server's environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Variables whose values are printed by a shell command, like `api_key_cmd`
    /// (run when the server starts; kept in memory only).
    #[serde(default)]
    pub env_cmd: BTreeMap<String, String>,
    /// The server's working directory.
    pub cwd: Option<PathBuf>,
    /// A Streamable HTTP endpoint instead of a command.
    pub url: Option<String>,
    /// HTTP headers sent with every request to `url`.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Headers whose values are printed by a shell command.
    #[serde(default)]
    pub headers_cmd: BTreeMap<String, String>,
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Start with tock instead of on the first turn that offers tools.
    #[serde(default)]
    pub startup: bool,
    /// The longest one call (and the start) may take, in seconds (default 60).
    pub timeout_secs: Option<f64>,
}

impl McpServerConfig {
    pub fn timeout(&self) -> Duration {
        let secs = self.timeout_secs.unwrap_or(60.0);
        Duration::try_from_secs_f64(secs.max(0.05)).unwrap_or(Duration::from_secs(60))
    }
}

impl std::fmt::Debug for McpServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let keys = |m: &BTreeMap<String, String>| m.keys().cloned().collect::<Vec<_>>();
        f.debug_struct("McpServerConfig")
            .field("command", &self.command)
            .field("args", &self.args)
            .field("env", &keys(&self.env))
            .field("env_cmd", &keys(&self.env_cmd))
            .field("cwd", &self.cwd)
            .field("url", &self.url)
            .field("headers", &keys(&self.headers))
            .field("headers_cmd", &keys(&self.headers_cmd))
            .field("enabled", &self.enabled)
            .field("startup", &self.startup)
            .field("timeout_secs", &self.timeout_secs)
            .finish()
    }
}

/// Bounds on one model turn, so a model or server that never stops cannot
/// keep a conversation busy (or a bill growing) forever.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TurnConfig {
    /// A reply that brings no new text or tool call for this long is ended
    /// (keep-alives do not count) and retried like a cut stream.
    pub stream_timeout_secs: u64,
    /// Tool rounds (model calls a tool, gets the result, continues) after one user message.
    pub max_tool_rounds: usize,
    /// The same tool calls this many rounds in a row end the turn.
    pub max_identical_tool_calls: usize,
    /// The longest one reply may stream, however steadily (a trickle of a
    /// token a minute would otherwise hold its conversation for hours).
    pub max_reply_secs: u64,
}

impl Default for TurnConfig {
    fn default() -> Self {
        Self {
            stream_timeout_secs: 120,
            max_tool_rounds: 25,
            max_identical_tool_calls: 3,
            max_reply_secs: 1800,
        }
    }
}

/// What happens to a tool call: `ask` waits for the user's answer, `allow`
/// runs it at once, `deny` refuses it at once (the model reads the refusal).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    #[default]
    Ask,
    Allow,
    Deny,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Ask => "ask",
            Decision::Allow => "allow",
            Decision::Deny => "deny",
        }
    }
}

/// `[approvals]`: a default and per-tool rules keyed by tool name or glob
/// (`*` matches any run of characters), e.g. `"files__read_*" = "allow"`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ApprovalsConfig {
    pub default: Decision,
    pub rules: BTreeMap<String, Decision>,
    /// Allow at once the MCP tools that declare themselves read-only
    /// (`readOnlyHint`), unless a rule says otherwise.
    pub allow_read_only: bool,
    /// A call still waiting after this long (e.g. `"2h"`) is declined with a
    /// note to the model, and the turn goes on. Off unless set.
    pub approval_timeout: Option<String>,
}

impl ApprovalsConfig {
    /// `approval_timeout` in milliseconds; an unreadable value counts as off
    /// (and is reported by `tock tools`).
    pub fn timeout_ms(&self) -> Option<i64> {
        let expr = self.approval_timeout.as_deref()?.trim();
        crate::when::parse_duration(expr)
            .ok()
            .map(|d| d.num_milliseconds())
            .filter(|ms| *ms > 0)
    }
}

/// One key (`"ctrl+q"`) or several (`["ctrl+q", "f10"]`) for an action.
/// Anything else is kept as written (`Invalid`), so that one bad entry is
/// reported and keeps its default instead of failing the whole file.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum KeySpec {
    One(String),
    Many(Vec<String>),
    Invalid(toml::Value),
}

impl KeySpec {
    /// The keys, or why the entry names none.
    pub fn keys(&self) -> Result<Vec<&str>, String> {
        match self {
            KeySpec::One(k) => Ok(vec![k.as_str()]),
            KeySpec::Many(v) => Ok(v.iter().map(String::as_str).collect()),
            KeySpec::Invalid(v) => Err(format!(
                "{v} is not a key (write one in quotes, \"ctrl+q\", or a list of them)"
            )),
        }
    }
}

/// `[ui.colors]` values as text whatever their TOML type: `accent = 24` is
/// the 256-colour index 24, and a value of another type (`true`) reaches the
/// colour parser as written, which refuses that one entry with its reason
/// rather than the whole file failing to load.
fn colour_texts<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<String, String>, D::Error> {
    let raw = BTreeMap::<String, toml::Value>::deserialize(d)?;
    Ok(raw
        .into_iter()
        .map(|(name, value)| {
            let text = match value {
                toml::Value::String(s) => s,
                other => other.to_string(),
            };
            (name, text)
        })
        .collect())
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UiConfig {
    /// Capture the mouse (wheel scrolling, clicks). Off leaves selection to the terminal.
    #[serde(default = "yes")]
    pub mouse: bool,
    /// The widest the conversation's text is laid out, in columns (lines of
    /// prose much wider than this are hard to read on a wide terminal).
    #[serde(default = "default_max_width")]
    pub max_width: u16,
    /// `auto` (ask the terminal for its background), `dark` or `light`.
    /// Kept as text so that a typo gives one line, not a config that fails to load.
    #[serde(default)]
    pub theme: Option<String>,
    /// Colours by role, over the theme's own: `accent = "#d75f00"`.
    #[serde(default, deserialize_with = "colour_texts")]
    pub colors: BTreeMap<String, String>,
    /// A paste of more lines than this goes with the message as a chip
    /// (`pasted text 1`), not into the composer's text; 0 keeps every paste
    /// in the text.
    #[serde(default = "default_paste_chip_lines")]
    pub paste_chip_lines: usize,
}

impl Default for UiConfig {
    fn default() -> Self {
        Self {
            mouse: true,
            max_width: default_max_width(),
            theme: None,
            colors: BTreeMap::new(),
            paste_chip_lines: default_paste_chip_lines(),
        }
    }
}

fn default_paste_chip_lines() -> usize {
    20
}

fn default_max_width() -> u16 {
    100
}

fn yes() -> bool {
    true
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    pub provider: ProviderKind,
    /// The provider's model id (defaults to the table's name).
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// A literal key (prefer api_key_env or api_key_cmd; tock warns if the file is readable by others).
    pub api_key: Option<String>,
    /// Environment variable holding the key.
    pub api_key_env: Option<String>,
    /// Command printing the key, e.g. `pass show openai`.
    pub api_key_cmd: Option<String>,
    /// Whether the model accepts images.
    #[serde(default)]
    pub vision: bool,
    /// The longest silence on the wire (waiting for the response, or
    /// between its chunks, keep-alives included); default: the model's
    /// stream timeout.
    pub timeout_secs: Option<u64>,
    /// Overrides `turn.stream_timeout_secs` for this model (a slow local model may need more).
    pub stream_timeout_secs: Option<u64>,
    /// Price per million prompt tokens (any currency; shown as a cost).
    pub price_in: Option<f64>,
    /// Price per million reply tokens.
    pub price_out: Option<f64>,
    /// Price per million prompt tokens read from the provider's cache (default: `price_in`).
    pub price_cached: Option<f64>,
    /// The model's context length in tokens, to show how full the context is.
    pub context_tokens: Option<u64>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoleConfig {
    pub system: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutboxConfig {
    /// Off: items are accepted and kept, nothing is dispatched (and the status bar says so).
    pub enabled: bool,
    pub max_attempts: i64,
    pub backoff_base_secs: u64,
    /// Late items are still sent on start if late by less than this (e.g. "12h").
    pub catchup_grace: String,
}

impl Default for OutboxConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            max_attempts: 5,
            backoff_base_secs: 5,
            catchup_grace: "12h".into(),
        }
    }
}

/// The catch-up grace when `catchup_grace` cannot be read.
const DEFAULT_GRACE: Duration = Duration::from_secs(12 * 3600);

impl OutboxConfig {
    /// How late an item found at start may be and still be sent.
    pub fn grace(&self) -> Duration {
        self.grace_checked().unwrap_or(DEFAULT_GRACE)
    }

    /// `catchup_grace` read, or why it cannot be: zero (`"0s"`) is allowed
    /// and means nothing late is sent at start (it is marked expired).
    fn grace_checked(&self) -> Result<Duration, String> {
        let text = self.catchup_grace.trim();
        // `0`, `0s`, `0 hours`: durations elsewhere must be positive.
        let number = text.trim_end_matches(char::is_alphabetic).trim_end();
        if !number.is_empty() && number.chars().all(|c| c == '0') {
            return Ok(Duration::ZERO);
        }
        crate::when::parse_duration(text)
            .map_err(|e| e.to_string())
            .and_then(|d| d.to_std().map_err(|e| e.to_string()))
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NotifyConfig {
    pub bell: bool,
    /// Desktop notification escapes (OSC 9 and OSC 777), wrapped for tmux.
    pub desktop: bool,
    /// Show the conversation and scheduled count in the terminal title.
    pub title: bool,
}

impl Default for NotifyConfig {
    fn default() -> Self {
        Self {
            bell: true,
            desktop: true,
            title: true,
        }
    }
}

/// A model as `ConfigSource::facts` describes it (no key, no provider).
#[derive(Clone, Debug, PartialEq)]
pub struct ModelFacts {
    pub name: String,
    pub model: String,
    pub kind: ProviderKind,
    pub vision: bool,
    pub base_url: String,
}

/// The name a config entry's model goes by and the id asked of its
/// server: the entry's own (`x`, its `model`), or another its server
/// offers (`x/ID`, `ID`).
fn entry_model(entry: &str, mc: &ModelConfig, id: Option<String>) -> (String, String) {
    match id {
        Some(id) => (format!("{entry}/{id}"), id),
        None => (
            entry.to_string(),
            mc.model.clone().unwrap_or_else(|| entry.to_string()),
        ),
    }
}

/// Why `name` leads nowhere, with the way to name a model a configured
/// server offers.
fn unknown_model(cfg: &Config, name: &str) -> String {
    let shown = crate::sanitize::sanitize_line(name);
    let Some(entry) = cfg.models.keys().next() else {
        return format!(
            "unknown model \"{shown}\": not in the config and no provider in the environment"
        );
    };
    if let Some((e, "")) = name.split_once('/')
        && cfg.models.contains_key(e)
    {
        let e = crate::sanitize::sanitize_line(e);
        return format!(
            "\"{shown}\" names no model: write {e}/ID with an id its server offers (tock --model {e} models lists them)"
        );
    }
    format!(
        "unknown model \"{shown}\": not in the config and no provider in the environment \
         (a model a configured server offers is named ENTRY/ID, e.g. {entry}/ID; tock models lists them)"
    )
}

/// Where a model name leads (see `ConfigSource::lookup`).
enum Found<'a> {
    /// A config entry, and the model id asked of its server when named
    /// `ENTRY/ID` (else the entry's own `model`).
    Config(&'a str, &'a ModelConfig, Option<String>),
    Echo,
    Env(ProviderSpec, String),
}

/// A model ready to be called.
#[derive(Clone)]
pub struct ResolvedModel {
    /// What the user calls it (config name or model id).
    pub name: String,
    /// The provider's model id.
    pub model: String,
    pub kind: ProviderKind,
    pub vision: bool,
    /// Where requests go (empty for the offline model).
    pub base_url: String,
    pub provider: Arc<dyn Provider>,
    /// How long a reply may go without new content before it is ended.
    pub stream_timeout: Duration,
}

impl std::fmt::Debug for ResolvedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ResolvedModel({} = {:?} {})",
            self.name, self.kind, self.model
        )
    }
}

/// The provider and model the environment describes, when there is no config entry.
fn env_model(model_name: Option<&str>) -> Option<(ProviderSpec, String)> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    if var("OPENAI_API_KEY").is_some() || var("OPENAI_BASE_URL").is_some() {
        let base = var("OPENAI_BASE_URL").unwrap_or_else(|| "https://api.openai.com/v1".into());
        let spec = ProviderSpec::new(ProviderKind::Openai, base, var("OPENAI_API_KEY"));
        return Some((spec, model_name.unwrap_or("gpt-4o-mini").to_string()));
    }
    if let Some(key) = var("ANTHROPIC_API_KEY") {
        let base = var("ANTHROPIC_BASE_URL").unwrap_or_else(|| "https://api.anthropic.com".into());
        let spec = ProviderSpec::new(ProviderKind::Anthropic, base, Some(key));
        return Some((spec, model_name.unwrap_or("claude-sonnet-4-5").to_string()));
    }
    if let Some(host) = var("OLLAMA_HOST") {
        // As Ollama reads it: `127.0.0.1` alone is port 11434, not 80.
        let base = crate::llm::ollama::normalize_base_url(&host);
        let spec = ProviderSpec::new(ProviderKind::Ollama, base, None);
        return Some((spec, model_name.unwrap_or("llama3.2").to_string()));
    }
    None
}

fn default_base_url(kind: ProviderKind) -> String {
    match kind {
        ProviderKind::Openai => {
            std::env::var("OPENAI_BASE_URL").unwrap_or_else(|_| "https://api.openai.com/v1".into())
        }
        ProviderKind::Anthropic => std::env::var("ANTHROPIC_BASE_URL")
            .unwrap_or_else(|_| "https://api.anthropic.com".into()),
        ProviderKind::Ollama => {
            let host = std::env::var("OLLAMA_HOST").unwrap_or_else(|_| "127.0.0.1:11434".into());
            crate::llm::ollama::normalize_base_url(&host)
        }
        ProviderKind::Echo => String::new(),
    }
}

/// A key `api_key_cmd` printed, or why it failed and when.
type KeyFromCommand = Result<String, (String, tokio::time::Instant)>;

/// How long a failed `api_key_cmd` is taken as failing before it runs again
/// (tokio's clock: tests can move it).
pub const KEY_CMD_RETRY: Duration = Duration::from_secs(5);

fn run_key_cmd(cmd: &str) -> Result<String, String> {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("api_key_cmd could not run: {e}"))?;
    if !out.status.success() {
        return Err(format!("api_key_cmd {}", command_failure(cmd, out.status)));
    }
    let key = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if key.is_empty() {
        return Err("api_key_cmd printed nothing".into());
    }
    Ok(key)
}

/// Why a shell command that was to print a secret failed, in words: the
/// shell's 127 is a program not installed (`pass show openai` copied from
/// the example without `pass`), 126 one that cannot be run. The command's
/// own output is never quoted (it may hold the secret).
pub fn command_failure(cmd: &str, status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    let program = cmd.split_whitespace().next().unwrap_or(cmd);
    let program = crate::sanitize::sanitize_line(program);
    match (status.code(), status.signal()) {
        (Some(127), _) => format!("failed: {program}: command not found"),
        (Some(126), _) => format!("failed: {program}: cannot be run (not executable)"),
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(sig)) => format!("was killed by signal {sig}"),
        (None, None) => format!("failed ({status})"),
    }
}

/// A parse error's message with the values it quotes taken out where they
/// look like a secret: a key pasted into the wrong field (`vision =
/// "sk-…"`) is quoted back by the parser (`invalid type: string "sk-…"`),
/// and the message is shown, logged, kept as a notice and passed to
/// `notify_command`. The values are the parser's double-quoted strings and
/// an unknown variant's name; field names and the expected variants are
/// the file's keys and tock's own words, kept.
fn redact_quoted_values(msg: &str) -> String {
    const VARIANT: &str = "unknown variant `";
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    loop {
        // Where the next value starts, and the character that ends it.
        let next = [
            rest.find('"').map(|at| (at + 1, '"')),
            rest.find(VARIANT).map(|at| (at + VARIANT.len(), '`')),
        ]
        .into_iter()
        .flatten()
        .min_by_key(|(start, _)| *start);
        let Some((start, close)) = next else {
            out.push_str(rest);
            return out;
        };
        let (before, after) = rest.split_at(start);
        out.push_str(before);
        let Some(end) = after.find(close) else {
            out.push_str(after);
            return out;
        };
        let value = &after[..end];
        if crate::llm::http::looks_like_a_secret(value) {
            out.push_str("<redacted>");
        } else {
            out.push_str(value);
        }
        out.push(close);
        rest = &after[end + close.len_utf8()..];
    }
}

/// Whether `api_key_env` holds what can be an environment variable's name
/// and not, by the look of it, a key pasted in its place (which an error
/// would otherwise print): letters, digits and `_`, and either capitals
/// and digits only, as such names are, or short.
fn names_an_environment_variable(var: &str) -> bool {
    let name_chars = var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && var.chars().next().is_some_and(|c| !c.is_ascii_digit());
    let conventional = var.chars().all(|c| !c.is_ascii_lowercase());
    name_chars && (conventional || var.len() < 20)
}

impl Config {
    pub fn load(path: &Path) -> Result<Self> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => {
                return Err(e).with_context(|| format!("cannot read config {}", path.display()));
            }
        };
        let cfg: Config = toml::from_str(&text).map_err(|e| {
            let msg = e.message().to_string();
            // The line, so that the one bad value is found in a long file.
            let line = e
                .span()
                .map(|span| {
                    let before = text.get(..span.start).unwrap_or_default();
                    format!(", line {}", before.matches('\n').count() + 1)
                })
                .unwrap_or_default();
            anyhow::anyhow!(
                "config {}{line}: {}",
                path.display(),
                crate::sanitize::sanitize_line(&redact_quoted_values(&msg))
            )
        })?;
        // `default_model = "mni"` beside a `[models.mini]`: a typo, which
        // the environment's provider would have taken as a model id of its
        // own (the user's messages and key to api.openai.com, where they
        // configured a local server). Held as a file that cannot be read.
        if let Some(d) = &cfg.default_model
            && !cfg.models.contains_key(d)
            && d != "echo"
            && !d
                .split_once('/')
                .is_some_and(|(e, _)| cfg.models.contains_key(e))
            && let Some(meant) = cfg.models.keys().find(|k| strsim::levenshtein(k, d) <= 2)
        {
            anyhow::bail!(
                "config {}: default_model = {:?} is no entry of [models]: did you mean {:?}?",
                path.display(),
                crate::sanitize::sanitize_line(d),
                crate::sanitize::sanitize_line(meant)
            );
        }
        Ok(cfg)
    }

    /// A warning if the file holds a literal key and others can read it.
    pub fn permission_warning(&self, path: &Path) -> Option<String> {
        use std::os::unix::fs::PermissionsExt;
        // A dummy key for a local server (`api_key = ""`, `none`) is no secret.
        let has_key = self.models.values().any(|m| {
            m.api_key
                .as_deref()
                .is_some_and(crate::llm::http::looks_like_a_secret)
        });
        let mode = std::fs::metadata(path).ok()?.permissions().mode();
        (has_key && mode & 0o077 != 0).then(|| {
            format!(
                "{} holds an API key and is readable by others; run chmod 600 on it",
                path.display()
            )
        })
    }

    /// Settings the file holds that cannot be used, one line each; each
    /// falls back to its default (the rest of the file is in effect).
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Err(e) = self.outbox.grace_checked() {
            out.push(format!(
                "[outbox] catchup_grace = {:?}: {e}; using 12h",
                crate::sanitize::sanitize_line(&self.outbox.catchup_grace)
            ));
        }
        for name in self.mcp.keys() {
            if let Some(why) = crate::mcp::server_name_problem(name) {
                // As the table is written: bare when TOML allows it.
                let bare = !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                let table = if bare {
                    name.clone()
                } else {
                    format!("{name:?}")
                };
                out.push(format!(
                    "[mcp.{}]: {why}; the server is not used",
                    crate::sanitize::sanitize_line(&table)
                ));
            }
        }
        out
    }

    pub fn max_attachment_bytes(&self) -> u64 {
        self.max_attachment_bytes.unwrap_or(20 * 1024 * 1024)
    }
}

/// The live configuration: reloaded when the file changes, resolving model names
/// to providers (keys from commands are cached in memory for the process).
pub struct ConfigSource {
    path: Option<PathBuf>,
    /// The file's mtime and the settings read from it, shared (not cloned) per call.
    state: RwLock<(Option<SystemTime>, Arc<Config>)>,
    /// Model name given on the command line / TOCK_MODEL.
    cli_model: Option<String>,
    /// Keys from `api_key_cmd` (per config generation), and failures with
    /// when they happened: a failing command runs again only after
    /// [`KEY_CMD_RETRY`] (not on every turn), so it can come right (a
    /// password manager unlocked) without a failure at every try.
    key_cache: Mutex<BTreeMap<String, KeyFromCommand>>,
    /// Tests inject a provider that every model resolves to.
    pub provider_override: Option<Arc<dyn Provider>>,
    /// Why the file could not be read when last read (bad TOML, a value of
    /// the wrong type), if it could not: the settings before stay.
    last_error: Mutex<Option<String>>,
    /// The file has not been read since start: the settings in effect are
    /// the held defaults, which send nothing.
    held: std::sync::atomic::AtomicBool,
    /// Built providers by endpoint, so a resolve (every frame's status bar,
    /// every turn) neither builds an HTTP client nor loses pooled connections.
    providers: Mutex<BTreeMap<String, Arc<dyn Provider>>>,
}

impl ConfigSource {
    /// Load the config. A file that cannot be read or parsed does not stop
    /// tock: it says why (`last_error`) and picks the file up as soon as it
    /// is fixed. Meanwhile nothing is sent: the defaults would send what is
    /// due to the offline model (the file's models unknown), marking it sent
    /// where the user meant a real one; the outbox keeps it instead.
    pub fn new(path: Option<PathBuf>, cli_model: Option<String>) -> Result<Self> {
        let mut error = None;
        let (mtime, cfg) = match &path {
            Some(p) => match Config::load(p) {
                Ok(cfg) => (mtime(p), cfg),
                Err(e) => {
                    error = Some(format!("{e:#}"));
                    let mut held = Config::default();
                    held.outbox.enabled = false;
                    held.notify_command = notify_command_of_unreadable(p);
                    (mtime(p), held)
                }
            },
            None => (None, Config::default()),
        };
        Ok(Self {
            path,
            state: RwLock::new((mtime, Arc::new(cfg))),
            cli_model,
            key_cache: Mutex::new(BTreeMap::new()),
            provider_override: None,
            held: std::sync::atomic::AtomicBool::new(error.is_some()),
            last_error: Mutex::new(error),
            providers: Mutex::new(BTreeMap::new()),
        })
    }

    /// Why the config file is not in effect, if it is not, and what is in
    /// effect instead. The same file read again (by this tock after a save,
    /// by another on the same database) says the same.
    pub fn error(&self) -> Option<String> {
        let error = self
            .last_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()?;
        Some(if self.held.load(std::sync::atomic::Ordering::Relaxed) {
            format!("{error}; nothing is sent until it is fixed (messages wait in the outbox)")
        } else {
            format!("{error}; keeping the settings read before")
        })
    }

    /// Why the file cannot be read, as read (no word on what is in effect).
    pub fn unreadable(&self) -> Option<String> {
        self.last_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The file could not be read when tock started: the settings in
    /// effect are held defaults, which send nothing (and name no model).
    pub fn is_held(&self) -> bool {
        self.held.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Why the config file could not be read when it was last read, in one
    /// line, without what is in effect instead (see [`ConfigSource::error`]).
    pub fn read_error(&self) -> Option<String> {
        self.last_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn from_config(cfg: Config) -> Self {
        Self {
            path: None,
            state: RwLock::new((None, Arc::new(cfg))),
            cli_model: None,
            key_cache: Mutex::new(BTreeMap::new()),
            provider_override: None,
            last_error: Mutex::new(None),
            held: std::sync::atomic::AtomicBool::new(false),
            providers: Mutex::new(BTreeMap::new()),
        }
    }

    pub fn with_provider(mut self, p: Arc<dyn Provider>) -> Self {
        self.provider_override = Some(p);
        self
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub fn get(&self) -> Arc<Config> {
        self.state
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .1
            .clone()
    }

    /// Re-read the file if it changed. Returns true when a new config was loaded.
    pub fn reload_if_changed(&self) -> bool {
        let Some(path) = &self.path else { return false };
        let m = mtime(path);
        if self.state.read().unwrap_or_else(|p| p.into_inner()).0 == m {
            return false;
        }
        match Config::load(path) {
            Ok(cfg) => {
                *self.state.write().unwrap_or_else(|p| p.into_inner()) = (m, Arc::new(cfg));
                *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = None;
                self.held.store(false, std::sync::atomic::Ordering::Relaxed);
                self.key_cache
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .clear();
                true
            }
            Err(e) => {
                tracing::warn!("config reload failed: {e:#}");
                *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(format!("{e:#}"));
                // Remember the mtime so a broken file is not re-read every tick.
                let mut state = self.state.write().unwrap_or_else(|p| p.into_inner());
                state.0 = m;
                // The problem is a notice, and the command is how the user
                // hears one away from a terminal: where the settings kept
                // have none (the file was deleted, then written again with
                // a mistake), the broken file's own is taken, as at start.
                if state.1.notify_command.is_none()
                    && let Some(command) = notify_command_of_unreadable(path)
                {
                    let mut kept = (*state.1).clone();
                    kept.notify_command = Some(command);
                    state.1 = Arc::new(kept);
                }
                false
            }
        }
    }

    /// The default model's name as the user would write it.
    pub fn default_model_name(&self) -> Option<String> {
        self.cli_model
            .clone()
            .or_else(|| self.get().default_model.clone())
    }

    /// Resolve a model name (config entry, `echo`, or a model id for the
    /// environment's provider) to something callable.
    pub fn resolve(&self, name: Option<&str>) -> Result<ResolvedModel, String> {
        let cfg = self.get();
        let mk = |name: String,
                  model: String,
                  kind: ProviderKind,
                  vision: bool,
                  spec: Option<ProviderSpec>| {
            let base_url = spec
                .as_ref()
                .map(|s| s.base_url.clone())
                .unwrap_or_default();
            let provider = match (&self.provider_override, spec) {
                (Some(p), _) => p.clone(),
                (None, Some(spec)) => self.provider_for(spec),
                (None, None) => self.provider_for(ProviderSpec::new(ProviderKind::Echo, "", None)),
            };
            ResolvedModel {
                name,
                model,
                kind,
                vision,
                base_url,
                provider,
                stream_timeout: Duration::from_secs(cfg.turn.stream_timeout_secs.max(1)),
            }
        };
        Ok(match self.lookup(&cfg, name)? {
            Found::Config(n, mc, id) => {
                let key = self.key_for(n, mc)?;
                let mut spec = ProviderSpec::new(
                    mc.provider,
                    mc.base_url
                        .clone()
                        .unwrap_or_else(|| default_base_url(mc.provider)),
                    key,
                );
                let stream_timeout = mc
                    .stream_timeout_secs
                    .unwrap_or(cfg.turn.stream_timeout_secs)
                    .max(1);
                // Silence on the wire is no new text either: waited for as
                // long as the reply's own timeout allows (a shorter wait cut
                // a model that reads a long prompt silently at 90 s, however
                // long `stream_timeout_secs` was), unless set on its own.
                spec.idle_timeout =
                    Duration::from_secs(mc.timeout_secs.unwrap_or(stream_timeout).max(1));
                let (name, model) = entry_model(n, mc, id);
                let mut r = mk(name, model, mc.provider, mc.vision, Some(spec));
                r.stream_timeout = Duration::from_secs(stream_timeout);
                r
            }
            Found::Echo => mk("echo".into(), "echo".into(), ProviderKind::Echo, true, None),
            Found::Env(mut spec, model) => {
                spec.idle_timeout = Duration::from_secs(cfg.turn.stream_timeout_secs.max(1));
                let kind = spec.kind;
                mk(model.clone(), model, kind, true, Some(spec))
            }
        })
    }

    /// Which model `name` (`None`: the default) is: a config entry, the
    /// offline model, or a model of the environment's provider. Shared by
    /// `resolve` and `facts`, so the two always find the same model.
    fn lookup<'a>(&self, cfg: &'a Config, name: Option<&str>) -> Result<Found<'a>, String> {
        let name = name
            .map(str::to_string)
            .or_else(|| self.default_model_name());
        if let Some(n) = &name {
            if let Some((n, mc)) = cfg.models.get_key_value(n) {
                return Ok(Found::Config(n, mc, None));
            }
            if n == "echo" {
                return Ok(Found::Echo);
            }
            // `ENTRY/ID`: another model of a configured entry's server (ids
            // may hold slashes themselves: `x/meta-llama/Llama-3`).
            if let Some((entry, id)) = n.split_once('/')
                && let Some((entry, mc)) = cfg.models.get_key_value(entry)
                && !id.trim().is_empty()
            {
                return Ok(Found::Config(entry, mc, Some(id.trim().to_string())));
            }
        }
        match env_model(name.as_deref()) {
            Some((spec, model)) => Ok(Found::Env(spec, model)),
            None => match name {
                Some(n) if n != "echo" => Err(unknown_model(cfg, &n)),
                _ => Ok(Found::Echo),
            },
        }
    }

    /// A config file named by `--config` or `TOCK_CONFIG` (a path other than
    /// the platform's) that is not there, said: the defaults (the offline
    /// model, or the environment's provider) answer what is sent, which the
    /// user did not mean. The platform's own path not being there is a
    /// first run.
    pub fn missing_named_file(&self) -> Option<String> {
        let path = self.path.as_deref()?;
        (default_config_path().as_deref() != Some(path) && !path.exists()).then(|| {
            format!(
                "there is no config file at {} (named by --config or TOCK_CONFIG): the defaults are in effect",
                path.display()
            )
        })
    }

    /// Whether `name` is a model of the config itself (an entry, `ENTRY/ID`
    /// or the offline model), not one the environment's provider would take.
    pub fn names_a_config_model(&self, name: &str) -> bool {
        let cfg = self.get();
        matches!(
            self.lookup(&cfg, Some(name)),
            Ok(Found::Config(..) | Found::Echo)
        )
    }

    /// What `resolve` would find for a model — its names, provider kind,
    /// vision and endpoint — without its key: no `api_key_cmd` runs and no
    /// provider is built, so the UI thread may ask at any time.
    pub fn facts(&self, name: Option<&str>) -> Result<ModelFacts, String> {
        let cfg = self.get();
        Ok(match self.lookup(&cfg, name)? {
            Found::Config(n, mc, id) => {
                let (name, model) = entry_model(n, mc, id);
                ModelFacts {
                    name,
                    model,
                    kind: mc.provider,
                    vision: mc.vision,
                    base_url: mc
                        .base_url
                        .clone()
                        .unwrap_or_else(|| default_base_url(mc.provider)),
                }
            }
            Found::Echo => ModelFacts {
                name: "echo".into(),
                model: "echo".into(),
                kind: ProviderKind::Echo,
                vision: true,
                base_url: String::new(),
            },
            Found::Env(spec, model) => ModelFacts {
                name: model.clone(),
                model,
                kind: spec.kind,
                vision: true,
                base_url: spec.base_url,
            },
        })
    }

    /// The provider for an endpoint, built once. The key enters the cache id
    /// only as a hash (memory only), so a changed key gets a new client.
    fn provider_for(&self, spec: ProviderSpec) -> Arc<dyn Provider> {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        spec.api_key.hash(&mut h);
        let id = format!(
            "{:?}|{}|{}|{}|{:x}",
            spec.kind,
            spec.base_url,
            spec.connect_timeout.as_millis(),
            spec.idle_timeout.as_millis(),
            h.finish()
        );
        let mut cache = self.providers.lock().unwrap_or_else(|p| p.into_inner());
        cache.entry(id).or_insert_with(|| llm::build(spec)).clone()
    }

    /// Why config entry `name` has no key from the environment (its
    /// `api_key_env` unset or empty), found without running any command.
    pub fn key_env_missing(&self, name: &str) -> Option<String> {
        let cfg = self.get();
        let mc = cfg.models.get(name)?;
        if mc.api_key.is_some() {
            return None;
        }
        let var = mc.api_key_env.as_ref()?;
        match std::env::var(var) {
            Ok(k) if !k.trim().is_empty() => None,
            Ok(_) => Some(format!("{var} is empty")),
            Err(_) => Some(format!("{var} is not set")),
        }
    }

    fn key_for(&self, name: &str, mc: &ModelConfig) -> Result<Option<String>, String> {
        // Trimmed as api_key_cmd's output is: whitespace around a key is
        // no part of it (and `Http` trims again, for keys from elsewhere).
        if let Some(k) = &mc.api_key {
            return Ok(Some(k.trim().to_string()));
        }
        if let Some(var) = &mc.api_key_env {
            return match std::env::var(var) {
                // Set but empty (`export KEY=` with the value missing) is
                // a slip, not a key: sent, it fails as a wrong key would.
                Ok(k) if k.trim().is_empty() => {
                    Err(format!("{var} is set but empty (api_key_env of {name})"))
                }
                k => k.map(|k| Some(k.trim().to_string())).map_err(|_| {
                    if names_an_environment_variable(var) {
                        // A running tock cannot see a variable exported
                        // after it started: retrying alone cannot help.
                        format!(
                            "{var} is not set (api_key_env of {name}): export it and start tock again, or give the key with api_key_cmd"
                        )
                    } else {
                        format!(
                            "api_key_env of {name} is no environment variable's name \
                             (is it the key itself? that goes in api_key)"
                        )
                    }
                }),
            };
        }
        if let Some(cmd) = &mc.api_key_cmd {
            let mut cache = self.key_cache.lock().unwrap_or_else(|p| p.into_inner());
            match cache.get(name) {
                Some(Ok(key)) => return Ok(Some(key.clone())),
                Some(Err((e, at))) if at.elapsed() < KEY_CMD_RETRY => return Err(e.clone()),
                _ => {}
            }
            let got = run_key_cmd(cmd).map_err(|e| format!("{name}: {e}"));
            let kept = match &got {
                Ok(key) => Ok(key.clone()),
                Err(e) => Err((e.clone(), tokio::time::Instant::now())),
            };
            cache.insert(name.to_string(), kept);
            return got.map(Some);
        }
        let env_key = match mc.provider {
            ProviderKind::Openai => std::env::var("OPENAI_API_KEY").ok(),
            ProviderKind::Anthropic => std::env::var("ANTHROPIC_API_KEY").ok(),
            _ => None,
        };
        Ok(env_key)
    }

    /// Every configured secret known without running a command, with the
    /// keys `api_key_cmd` printed so far: the models' keys (literal, from
    /// their variable, from the provider's variable) and the MCP servers'
    /// literal `env` and `headers` values. Only what looks like a secret
    /// (a dummy key such as `x` would mangle ordinary words).
    pub fn secrets(&self) -> Vec<String> {
        let cfg = self.get();
        let mut out: Vec<String> = Vec::new();
        for mc in cfg.models.values() {
            out.extend(mc.api_key.clone());
            out.extend(mc.api_key_env.as_ref().and_then(|v| std::env::var(v).ok()));
        }
        out.extend(
            ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"]
                .iter()
                .filter_map(|v| std::env::var(v).ok()),
        );
        for sc in cfg.mcp.values() {
            out.extend(sc.env.values().chain(sc.headers.values()).cloned());
        }
        let cache = self.key_cache.lock().unwrap_or_else(|p| p.into_inner());
        out.extend(cache.values().filter_map(|k| k.as_ref().ok().cloned()));
        // Ordered and deduplicated with the MCP servers' by `Engine::secrets`.
        out.into_iter()
            .map(|k| k.trim().to_string())
            .filter(|k| llm::http::looks_like_a_secret(k))
            .collect()
    }

    /// Whether the model's `api_key_cmd` failed when last run: what it
    /// answers may change (a password manager unlocked), so a send that
    /// needs it is tried again later rather than failed.
    pub fn key_command_failed(&self, name: Option<&str>) -> bool {
        // Keys are the entry's: `x/other-id` runs the `api_key_cmd` of `x`.
        let cfg = self.get();
        let Ok(Found::Config(name, _, _)) = self.lookup(&cfg, name) else {
            return false;
        };
        matches!(
            self.key_cache
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(name),
            Some(Err(_))
        )
    }

    /// A model's name and provider, as `resolve` would find them, without
    /// building a provider or running `api_key_cmd` (cheap enough for every frame).
    pub fn describe(&self, name: Option<&str>) -> Result<(String, &'static str), String> {
        let cfg = self.get();
        Ok(match self.lookup(&cfg, name)? {
            Found::Config(n, mc, id) => (entry_model(n, mc, id).0, mc.provider.label()),
            Found::Echo => ("echo".into(), ProviderKind::Echo.label()),
            Found::Env(spec, model) => (model, spec.kind.label()),
        })
    }

    /// Names to offer for `/model`: config entries, plus `echo`.
    pub fn model_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.get().models.keys().cloned().collect();
        v.push("echo".into());
        v
    }
}

fn mtime(p: &Path) -> Option<SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// The `notify_command` of a config file that cannot be read as a whole
/// (a value of the wrong type elsewhere in it): that problem is itself a
/// notice, and the command is how the user hears of notices away from a
/// terminal (`tock daemon`). None when the file is no TOML at all or the
/// command is no list of strings.
fn notify_command_of_unreadable(path: &Path) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(path).ok()?;
    let table: toml::Table = toml::from_str(&text).ok()?;
    table.get("notify_command")?.clone().try_into().ok()
}

/// Platform paths (config, data, state), overridable by the caller.
pub fn project_dirs() -> Option<directories::ProjectDirs> {
    directories::ProjectDirs::from("", "", "tock")
}

pub fn default_config_path() -> Option<PathBuf> {
    project_dirs().map(|d| d.config_dir().join("config.toml"))
}

pub fn default_db_path() -> PathBuf {
    project_dirs()
        .map(|d| d.data_dir().join("tock.db"))
        .unwrap_or_else(|| PathBuf::from("tock.db"))
}

pub fn log_dir() -> PathBuf {
    project_dirs()
        .map(|d| d.state_dir().unwrap_or(d.data_dir()).to_path_buf())
        .unwrap_or_else(std::env::temp_dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_key_command_says_why_in_words_and_never_quotes_its_output() {
        let missing = run_key_cmd("tock-no-such-program-here show openai").unwrap_err();
        assert_eq!(
            missing,
            "api_key_cmd failed: tock-no-such-program-here: command not found"
        );
        let status = run_key_cmd("echo sk-secret-0000000000; exit 3").unwrap_err();
        assert_eq!(status, "api_key_cmd exited with status 3");
        let killed = run_key_cmd("echo sk-secret-0000000000; kill -9 $$").unwrap_err();
        assert_eq!(killed, "api_key_cmd was killed by signal 9");
    }

    #[test]
    fn an_unset_key_variable_says_a_restart_is_needed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "default_model = \"m\"\n[models.m]\nprovider = \"openai\"\nmodel = \"gpt-4o\"\napi_key_env = \"TOCK_TEST_UNSET_KEY_VAR\"\n",
        )
        .unwrap();
        let source = ConfigSource::new(Some(path), None).unwrap();
        let cfg = source.get();
        let err = source.key_for("m", &cfg.models["m"]).unwrap_err();
        assert!(
            err.starts_with("TOCK_TEST_UNSET_KEY_VAR is not set"),
            "{err}"
        );
        assert!(err.contains("start tock again"), "{err}");
    }

    #[test]
    fn only_a_real_key_in_a_file_others_can_read_is_warned_about() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let with_key = |key: &str| -> Config {
            toml::from_str(&format!(
                "[models.local]\nprovider = \"openai\"\napi_key = \"{key}\"\n"
            ))
            .unwrap()
        };
        for dummy in ["", "none", "x"] {
            assert_eq!(with_key(dummy).permission_warning(&path), None, "{dummy:?}");
        }
        assert!(
            with_key("sk-live-0123456789")
                .permission_warning(&path)
                .is_some()
        );
    }

    fn source(key: &str) -> ConfigSource {
        let mut models = BTreeMap::new();
        models.insert(
            "m".to_string(),
            ModelConfig {
                provider: ProviderKind::Openai,
                model: Some("gpt".into()),
                base_url: Some("http://127.0.0.1:9/v1".into()),
                api_key: Some(key.into()),
                api_key_env: None,
                api_key_cmd: None,
                vision: false,
                timeout_secs: None,
                stream_timeout_secs: None,
                price_in: None,
                price_out: None,
                price_cached: None,
                context_tokens: None,
            },
        );
        ConfigSource::from_config(Config {
            models,
            ..Default::default()
        })
    }

    #[test]
    fn the_example_config_parses_with_every_section() {
        let cfg: Config = match toml::from_str(include_str!("../assets/config.example.toml")) {
            Ok(c) => c,
            Err(e) => panic!("assets/config.example.toml: {e}"),
        };
        assert_eq!(cfg.turn.stream_timeout_secs, 120);
        assert_eq!(cfg.turn.max_tool_rounds, 25);
    }

    #[test]
    fn a_key_in_the_wrong_field_is_not_quoted_back_by_the_parse_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let key = "sk-proj-GOODSECRET1234567890";
        std::fs::write(
            &path,
            format!("[models.m]\nprovider = \"openai\"\nvision = \"{key}\"\n"),
        )
        .unwrap();
        let err = format!("{:#}", Config::load(&path).unwrap_err());
        assert!(!err.contains(key), "{err}");
        assert!(
            err.contains("line 3") && err.contains("<redacted>"),
            "{err}"
        );
        std::fs::write(&path, format!("[models.m]\nprovider = \"{key}\"\n")).unwrap();
        let err = format!("{:#}", Config::load(&path).unwrap_err());
        assert!(!err.contains(key), "{err}");
        // What is no secret stays, to find the mistake by.
        std::fs::write(
            &path,
            "[models.m]\nprovider = \"openia\"\nvision = \"yes\"\n",
        )
        .unwrap();
        let err = format!("{:#}", Config::load(&path).unwrap_err());
        assert!(err.contains("openia"), "{err}");
    }

    #[test]
    fn a_key_given_as_api_key_env_is_not_printed() {
        let key = "sk-proj-ENVSECRET1234567890";
        let mut src = source("unused");
        let cfg = Config {
            models: BTreeMap::from([(
                "m".to_string(),
                ModelConfig {
                    api_key: None,
                    api_key_env: Some(key.into()),
                    ..src.get().models["m"].clone()
                },
            )]),
            ..Default::default()
        };
        src = ConfigSource::from_config(cfg);
        let err = src.key_for("m", &src.get().models["m"]).unwrap_err();
        assert!(!err.contains(key), "{err}");
        assert!(err.contains("api_key_env of m"), "{err}");
        for name in ["TOCK_TEST_SURELY_UNSET_VAR", "my_key"] {
            assert!(names_an_environment_variable(name), "{name}");
        }
        for not_a_name in [key, "a1b2c3d4e5f6a7b8c9d0e1f2", "1ABC"] {
            assert!(!names_an_environment_variable(not_a_name), "{not_a_name}");
        }
    }

    #[test]
    fn a_file_broken_where_none_was_in_effect_gives_its_notify_command() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let src = ConfigSource::new(Some(path.clone()), None).unwrap();
        assert!(src.get().notify_command.is_none());
        // Written after being deleted (none before): its command, with a
        // wrong value elsewhere.
        std::fs::write(
            &path,
            "notify_command = [\"notify-send\"]\nmax_width = -3\n",
        )
        .unwrap();
        assert!(!src.reload_if_changed());
        assert!(src.error().is_some());
        assert_eq!(
            src.get().notify_command,
            Some(vec!["notify-send".to_string()])
        );
    }

    #[test]
    fn resolving_again_reuses_the_built_provider() {
        let src = source("sk-a");
        let a = src.resolve(Some("m")).map(|r| r.provider).ok();
        let b = src.resolve(Some("m")).map(|r| r.provider).ok();
        assert!(matches!((a, b), (Some(a), Some(b)) if Arc::ptr_eq(&a, &b)));
    }
}

#[cfg(test)]
mod lenient_tests {
    use super::*;

    fn parse(text: &str) -> Config {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn colours_of_any_type_reach_the_colour_parser_as_text() {
        let cfg = parse("[ui.colors]\naccent = 24\nwarning = true\nerror = \"#ff0000\"\n");
        assert_eq!(cfg.ui.colors["accent"], "24");
        assert_eq!(cfg.ui.colors["warning"], "true");
        assert_eq!(cfg.ui.colors["error"], "#ff0000");
    }

    #[test]
    fn a_key_binding_that_is_no_key_is_kept_as_written() {
        let cfg = parse("[keys]\n\"main.quit\" = 5\n\"strip.cancel\" = [\"d\", \"x\"]\n");
        assert_eq!(
            cfg.keys["main.quit"],
            KeySpec::Invalid(toml::Value::Integer(5))
        );
        assert!(cfg.keys["main.quit"].keys().is_err());
        assert_eq!(cfg.keys["strip.cancel"].keys(), Ok(vec!["d", "x"]));
    }

    #[test]
    fn catchup_grace_zero_means_none_and_a_bad_one_is_reported() {
        let grace = |g: &str| OutboxConfig {
            catchup_grace: g.into(),
            ..OutboxConfig::default()
        };
        assert_eq!(grace("30m").grace(), Duration::from_secs(1800));
        assert_eq!(grace("0s").grace(), Duration::ZERO);
        assert_eq!(grace("0").grace(), Duration::ZERO);
        for bad in ["abc", "-5h"] {
            let o = grace(bad);
            assert_eq!(o.grace(), DEFAULT_GRACE, "{bad}");
            let cfg = Config {
                outbox: o,
                ..Config::default()
            };
            let problems = cfg.problems();
            assert_eq!(problems.len(), 1, "{bad}: {problems:?}");
            assert!(
                problems[0].contains("catchup_grace") && problems[0].contains(bad),
                "{problems:?}"
            );
        }
        assert!(Config::default().problems().is_empty());
    }

    #[test]
    fn an_mcp_server_name_tock_cannot_use_is_a_problem_named_with_why() {
        let cfg = parse(
            "[mcp.\"my.files\"]\ncommand = \"x\"\n[mcp.a__b]\ncommand = \"x\"\n\
             [mcp.good-one_2]\ncommand = \"x\"\n",
        );
        assert_eq!(
            cfg.problems(),
            vec![
                "[mcp.a__b]: a server name may not hold \"__\" (it joins the server's name to \
                 its tools' names); the server is not used"
                    .to_string(),
                "[mcp.\"my.files\"]: a server name may only use letters, digits, - and _; \
                 the server is not used"
                    .to_string(),
            ]
        );
    }

    #[test]
    fn a_file_that_cannot_be_read_holds_dispatch_and_names_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "default_model = \"m\"\n\n[ui]\nmax_width = -3\n").unwrap();
        let source = ConfigSource::new(Some(path.clone()), None).unwrap();
        assert!(!source.get().outbox.enabled);
        let e = source.error().unwrap();
        assert!(e.contains("line 4") && e.contains("nothing is sent"), "{e}");
        // No file at all is not an error: the defaults, dispatching.
        let none = ConfigSource::new(Some(dir.path().join("absent.toml")), None).unwrap();
        assert!(none.get().outbox.enabled && none.error().is_none());
    }
}
