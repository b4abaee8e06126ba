//! Model providers: one trait, four wire formats.
//!
//! Hand-written on reqwest rather than `genai`: the engine needs the HTTP
//! status and `Retry-After` to classify failures, the exact moment a request
//! is accepted (response headers received) to commit the user message, and
//! cancellation by dropping the stream. `genai` hides all three.

pub mod anthropic;
pub mod echo;
pub mod http;
pub mod models;
pub mod ndjson;
pub mod ollama;
pub mod openai;
pub mod quiet;
pub mod sse;
mod think_tags;

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::Stream;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};

pub use models::ModelInfo;

/// An image attached to a user message, or returned by a tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Image {
    pub mime: String,
    pub data_base64: String,
}

/// A tool call the model made. `arguments` is the JSON text of the arguments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ChatMessage {
    User {
        text: String,
        images: Vec<Image>,
    },
    Assistant {
        text: String,
        tool_calls: Vec<ToolCall>,
        /// What the model reasoned before these tool calls, sent back where
        /// the provider asks for it (DeepSeek's and Kimi's thinking modes
        /// refuse a tool-call turn without it). None for a reply without
        /// calls, or without reasoning kept.
        reasoning: Option<String>,
    },
    ToolResult {
        call_id: String,
        name: String,
        content: String,
        /// Images the tool returned, for a model that takes images (empty
        /// otherwise: the text then says what was left out).
        images: Vec<Image>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the parameters object.
    pub parameters: serde_json::Value,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ChatRequest {
    pub model: String,
    pub system: Option<String>,
    pub messages: Vec<ChatMessage>,
    pub tools: Vec<ToolSpec>,
    /// How often the caller takes the reply's text as it streams: a stream
    /// that trickles is left unread between reads about this long, where
    /// the server's close will announce its end (see `http`).
    pub text_every: TextPace,
}

/// How often a reply's text is taken as it streams, which may change while
/// it streams (a front end starts or stops showing its conversation): the
/// engine sets it, the stream's reader reads it before each quiet spell and
/// ends a spell early when it changes. The first gap at a pace may be
/// shorter (`first`): a reply that has just come on screen moves on soon
/// after its first words, then at the pace.
#[derive(Clone, Debug)]
pub struct TextPace(Arc<PaceCell>);

#[derive(Debug)]
struct PaceCell {
    micros: AtomicU64,
    first_micros: AtomicU64,
    changed: tokio::sync::Notify,
}

impl TextPace {
    pub fn new(every: Duration) -> Self {
        Self(Arc::new(PaceCell {
            micros: AtomicU64::new(Self::micros(every)),
            first_micros: AtomicU64::new(Self::micros(every)),
            changed: tokio::sync::Notify::new(),
        }))
    }

    fn micros(d: Duration) -> u64 {
        u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
    }

    pub fn get(&self) -> Duration {
        Duration::from_micros(self.0.micros.load(Ordering::Relaxed))
    }

    /// The first gap at the current pace (never longer than the pace).
    pub fn first(&self) -> Duration {
        Duration::from_micros(self.0.first_micros.load(Ordering::Relaxed)).min(self.get())
    }

    /// Every gap `every`, the first too.
    pub fn set(&self, every: Duration) {
        self.set_with_first(every, every);
    }

    /// Every gap `every`, the first `first`.
    pub fn set_with_first(&self, every: Duration, first: Duration) {
        self.0
            .first_micros
            .store(Self::micros(first), Ordering::Relaxed);
        let new = Self::micros(every);
        if self.0.micros.swap(new, Ordering::Relaxed) != new {
            self.0.changed.notify_waiters();
        }
    }

    /// Resolves at the next change (a future made before it sees it).
    pub async fn changed(&self) {
        self.0.changed.notified().await
    }
}

/// Requests compare by the pace they ask for, not by who shares it.
impl PartialEq for TextPace {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum StreamEvent {
    /// A piece of reply text (may be any size, never empty).
    Text(String),
    /// A piece of the model's reasoning before or between its reply's text
    /// (never empty): it says the model is working, which a long reasoning
    /// phase must be able to say, and is kept with the reply, to be read.
    Reasoning(String),
    /// A complete tool call (arguments fully assembled).
    ToolCall(ToolCall),
    /// Token counts for the reply, as the provider reported them (sent
    /// before `Done`; a later one replaces an earlier one).
    Usage(Usage),
    /// The provider finished the reply normally. Always the last event.
    Done { stop_reason: Option<String> },
}

/// Tokens one reply cost, as reported (`None`: the provider did not say).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// The whole prompt, including any part read from the prompt cache.
    pub prompt_tokens: Option<u64>,
    /// The reply.
    pub completion_tokens: Option<u64>,
    /// The part of the prompt read from the provider's cache.
    pub cached_tokens: Option<u64>,
}

impl Usage {
    /// Adds `other`'s counts to these; a count neither has stays unknown.
    pub fn add(&mut self, other: &Usage) {
        let sum = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
        };
        self.prompt_tokens = sum(self.prompt_tokens, other.prompt_tokens);
        self.completion_tokens = sum(self.completion_tokens, other.completion_tokens);
        self.cached_tokens = sum(self.cached_tokens, other.cached_tokens);
    }

    pub fn is_empty(&self) -> bool {
        self.prompt_tokens.is_none()
            && self.completion_tokens.is_none()
            && self.cached_tokens.is_none()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum ErrorKind {
    /// Worth retrying: connect error, timeout, 429, 5xx, stream cut, overloaded.
    Transient { retry_after: Option<Duration> },
    /// Retrying will not help: 400/401/403/404, no provider, bad config.
    Permanent,
}

/// A provider failure. `message` is one readable line and never contains a secret.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct LlmError {
    pub kind: ErrorKind,
    pub message: String,
}

impl LlmError {
    pub fn transient(message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Transient { retry_after: None },
            message: message.into(),
        }
    }
    pub fn permanent(message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Permanent,
            message: message.into(),
        }
    }
    pub fn is_transient(&self) -> bool {
        matches!(self.kind, ErrorKind::Transient { .. })
    }
}

pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, LlmError>> + Send>>;

pub trait Provider: Send + Sync {
    /// Short provider label for the status bar: "openai", "anthropic", "ollama", "echo".
    fn name(&self) -> &'static str;
    /// Whether the provider can be given tools.
    fn supports_tools(&self) -> bool {
        true
    }
    /// Send the request. Resolves once the provider has *accepted* it (2xx
    /// status and headers received); errors before that are returned here.
    /// Dropping the stream cancels the request.
    fn start<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<EventStream, LlmError>>;
    /// The models the server offers (see [`models`]), sorted by id. A
    /// provider without a list answers with none.
    fn list_models(&self) -> BoxFuture<'_, Result<Vec<ModelInfo>, LlmError>> {
        Box::pin(async { Ok(Vec::new()) })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    #[serde(alias = "openai-compatible", alias = "openai_compatible")]
    Openai,
    Anthropic,
    Ollama,
    Echo,
}

impl ProviderKind {
    /// The name shown to users, the same everywhere.
    pub fn label(self) -> &'static str {
        match self {
            ProviderKind::Openai => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Ollama => "ollama",
            ProviderKind::Echo => "echo",
        }
    }
}

/// Everything needed to talk to one endpoint. `Debug` hides the key.
#[derive(Clone)]
pub struct ProviderSpec {
    pub kind: ProviderKind,
    /// e.g. `https://api.openai.com/v1`, `https://api.anthropic.com`, `http://127.0.0.1:11434`.
    pub base_url: String,
    pub api_key: Option<String>,
    pub connect_timeout: Duration,
    /// Longest silence allowed while waiting for headers or between stream chunks.
    pub idle_timeout: Duration,
}

impl std::fmt::Debug for ProviderSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderSpec")
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl ProviderSpec {
    pub fn new(kind: ProviderKind, base_url: impl Into<String>, api_key: Option<String>) -> Self {
        Self {
            kind,
            base_url: base_url.into(),
            api_key,
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(90),
        }
    }
}

/// Build the provider for a spec.
pub fn build(spec: ProviderSpec) -> Arc<dyn Provider> {
    match spec.kind {
        ProviderKind::Openai => Arc::new(openai::OpenAi::new(spec)),
        ProviderKind::Anthropic => Arc::new(anthropic::Anthropic::new(spec)),
        ProviderKind::Ollama => Arc::new(ollama::Ollama::new(spec)),
        ProviderKind::Echo => Arc::new(echo::Echo::default()),
    }
}
