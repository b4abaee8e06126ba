//! Ollama's native chat API (`/api/chat`, newline-delimited JSON).

use futures::future::BoxFuture;
use reqwest::header::{AUTHORIZATION, HeaderMap};
use serde_json::{Value, json};

use super::http::{self, Decoder, Http, Item};
use super::ndjson::NdjsonParser;
use super::{
    ChatMessage, ChatRequest, EventStream, LlmError, Provider, ProviderSpec, StreamEvent, ToolCall,
};

pub const DEFAULT_BASE_URL: &str = "http://127.0.0.1:11434";
const DEFAULT_PORT: u16 = 11434;

#[derive(Debug)]
pub struct Ollama {
    spec: ProviderSpec,
    http: Http,
}

impl Ollama {
    pub fn new(spec: ProviderSpec) -> Self {
        let http = Http::new("ollama", &spec);
        Self { spec, http }
    }
}

/// Accepts what `OLLAMA_HOST` accepts: a full URL, `host`, `host:port` or
/// `:port`; a missing scheme means http and a missing port 11434.
pub fn normalize_base_url(raw: &str) -> String {
    let raw = http::base(raw);
    if raw.is_empty() {
        return DEFAULT_BASE_URL.to_string();
    }
    if raw.contains("://") {
        return raw.to_string();
    }
    let (host, path) = match raw.find('/') {
        Some(i) => (&raw[..i], &raw[i..]),
        None => (raw, ""),
    };
    // `[::1]:port`, `[::1]`, `host:port`, `host`, `:port`
    let has_port = match host.rfind(']') {
        Some(close) => host[close..].contains(':'),
        None => host.contains(':'),
    };
    let host = match host {
        h if h.starts_with(':') => format!("127.0.0.1{h}"),
        h if has_port => h.to_string(),
        h => format!("{h}:{DEFAULT_PORT}"),
    };
    format!("http://{host}{path}")
}

impl Provider for Ollama {
    fn name(&self) -> &'static str {
        "ollama"
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<super::ModelInfo>, LlmError>> {
        Box::pin(async move {
            super::models::ollama(&self.http, &normalize_base_url(&self.spec.base_url)).await
        })
    }

    fn start<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<EventStream, LlmError>> {
        Box::pin(async move {
            let url = self.http.url(&format!(
                "{}/api/chat",
                normalize_base_url(&self.spec.base_url)
            ))?;
            let mut headers = HeaderMap::new();
            // Ollama needs no key, but one set for a proxy in front of it is sent.
            self.http
                .add_key_header(&mut headers, AUTHORIZATION, "Bearer ")?;
            let resp = self.http.post(url, headers, &request_body(req)).await?;
            Ok(self
                .http
                .stream(resp, OllamaDecoder::default(), &req.text_every))
        })
    }
}

/// The JSON body of a streaming `/api/chat` request.
pub fn request_body(req: &ChatRequest) -> Value {
    let mut messages = Vec::new();
    if let Some(system) = req.system.as_deref().filter(|s| !s.is_empty()) {
        messages.push(json!({"role": "system", "content": system}));
    }
    for m in &req.messages {
        messages.push(match m {
            ChatMessage::User { text, images } => {
                let mut msg = json!({"role": "user", "content": text});
                if !images.is_empty() {
                    msg["images"] = images.iter().map(|i| json!(i.data_base64)).collect();
                }
                msg
            }
            ChatMessage::Assistant {
                text, tool_calls, ..
            } => {
                let mut msg = json!({"role": "assistant", "content": text});
                if !tool_calls.is_empty() {
                    msg["tool_calls"] = tool_calls
                        .iter()
                        .map(|c| {
                            // Ollama wants the arguments as an object.
                            let args = serde_json::from_str::<Value>(&c.arguments)
                                .ok()
                                .filter(Value::is_object)
                                .unwrap_or_else(|| json!({}));
                            json!({"function": {"name": c.name, "arguments": args}})
                        })
                        .collect();
                }
                msg
            }
            ChatMessage::ToolResult {
                name,
                content,
                images,
                ..
            } => {
                let mut msg = json!({"role": "tool", "content": content, "tool_name": name});
                if !images.is_empty() {
                    msg["images"] = images.iter().map(|i| json!(i.data_base64)).collect();
                }
                msg
            }
        });
    }
    let mut body = json!({"model": req.model, "stream": true, "messages": messages});
    if !req.tools.is_empty() {
        body["tools"] = super::openai::function_tools(&req.tools);
    }
    body
}

#[derive(Default)]
struct OllamaDecoder {
    lines: NdjsonParser,
    /// The body has ended; only the parser's leftovers are being processed.
    eof: bool,
    /// Tool calls seen so far, for synthesized ids (`call_0`, `call_1`, ...).
    calls: usize,
    done: bool,
}

impl OllamaDecoder {
    fn on_lines(&mut self, lines: Vec<String>, out: &mut Vec<Item>) {
        for line in lines {
            if self.done {
                break;
            }
            self.on_line(&line, out);
        }
    }

    fn on_line(&mut self, line: &str, out: &mut Vec<Item>) {
        let v: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            // A truncated last line at the end of the body is a cut
            // stream, reported as such by `finish`.
            Err(_) if self.eof => return,
            Err(e) => {
                out.push(Err(LlmError::transient(format!(
                    "malformed stream line ({e})"
                ))));
                self.done = true;
                return;
            }
        };
        if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
            let msg = err
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| err.to_string());
            out.push(Err(LlmError::transient(format!("stream error: {msg}"))));
            self.done = true;
            return;
        }
        if let Some(msg) = v.get("message") {
            // A thinking model's reasoning (`think`), before its content.
            if let Some(t) = msg
                .get("thinking")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
            {
                out.push(Ok(StreamEvent::Reasoning(t.to_string())));
            }
            if let Some(t) = msg
                .get("content")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
            {
                out.push(Ok(StreamEvent::Text(t.to_string())));
            }
            for call in msg
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let func = call.get("function").unwrap_or(&Value::Null);
                let name = func
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let arguments = match func.get("arguments") {
                    None | Some(Value::Null) => "{}".to_string(),
                    Some(Value::String(s)) if s.trim().is_empty() => "{}".to_string(),
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                };
                // Older Ollama sends no id; newer may.
                let id = match call
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                {
                    Some(id) => id.to_string(),
                    None => format!("call_{}", self.calls),
                };
                self.calls += 1;
                out.push(Ok(StreamEvent::ToolCall(ToolCall {
                    id,
                    name,
                    arguments,
                })));
            }
        }
        if v.get("done").and_then(Value::as_bool) == Some(true) {
            // The last line counts the prompt and the reply (no cache figure).
            let usage = super::Usage {
                prompt_tokens: v.get("prompt_eval_count").and_then(Value::as_u64),
                completion_tokens: v.get("eval_count").and_then(Value::as_u64),
                cached_tokens: None,
            };
            if !usage.is_empty() {
                out.push(Ok(StreamEvent::Usage(usage)));
            }
            let reason = v
                .get("done_reason")
                .and_then(Value::as_str)
                .map(str::to_string);
            out.push(Ok(StreamEvent::Done {
                stop_reason: reason,
            }));
            self.done = true;
        }
    }
}

impl Decoder for OllamaDecoder {
    fn feed(&mut self, chunk: &[u8]) -> Vec<Item> {
        let mut out = Vec::new();
        match self.lines.push(chunk) {
            Ok(lines) => self.on_lines(lines, &mut out),
            Err(e) => out.push(Err(LlmError::transient(e.to_string()))),
        }
        out
    }

    fn finish(&mut self) -> Vec<Item> {
        let mut out = Vec::new();
        self.eof = true;
        let lines = self.lines.finish();
        self.on_lines(lines, &mut out);
        if !self.done {
            out.push(Err(LlmError::transient("stream ended early")));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_url_forms() {
        assert_eq!(normalize_base_url(""), "http://127.0.0.1:11434");
        assert_eq!(
            normalize_base_url("http://127.0.0.1:11434/"),
            "http://127.0.0.1:11434"
        );
        assert_eq!(
            normalize_base_url("https://ollama.example"),
            "https://ollama.example"
        );
        assert_eq!(normalize_base_url("0.0.0.0"), "http://0.0.0.0:11434");
        assert_eq!(normalize_base_url("gpu-box:8080"), "http://gpu-box:8080");
        assert_eq!(normalize_base_url(":9999"), "http://127.0.0.1:9999");
        assert_eq!(normalize_base_url("[::1]"), "http://[::1]:11434");
        assert_eq!(normalize_base_url("[::1]:1234/x"), "http://[::1]:1234/x");
    }

    #[test]
    fn thinking_is_reasoning_before_the_content() {
        let mut d = OllamaDecoder::default();
        let out = d.feed(
            b"{\"message\":{\"role\":\"assistant\",\"content\":\"\",\"thinking\":\"Hmm.\"},\"done\":false}\n{\"message\":{\"role\":\"assistant\",\"content\":\"Yes.\"},\"done\":false}\n",
        );
        assert_eq!(
            out,
            vec![
                Ok(StreamEvent::Reasoning("Hmm.".into())),
                Ok(StreamEvent::Text("Yes.".into()))
            ]
        );
    }

    #[test]
    fn string_arguments_and_ids_are_kept() {
        let mut d = OllamaDecoder::default();
        let out = d.feed(
            b"{\"message\":{\"content\":\"\",\"tool_calls\":[{\"id\":\"abc\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":1}\"}},{\"function\":{\"name\":\"g\"}}]},\"done\":false}\n",
        );
        assert_eq!(
            out,
            vec![
                Ok(StreamEvent::ToolCall(ToolCall {
                    id: "abc".into(),
                    name: "f".into(),
                    arguments: "{\"a\":1}".into()
                })),
                Ok(StreamEvent::ToolCall(ToolCall {
                    id: "call_1".into(),
                    name: "g".into(),
                    arguments: "{}".into()
                })),
            ]
        );
    }
}
