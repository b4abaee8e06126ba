//! Anthropic Messages API with streaming.

use std::collections::HashMap;

use futures::future::BoxFuture;
use reqwest::header::{ACCEPT, HeaderMap, HeaderValue};
use serde_json::{Value, json};

use super::http::{self, Decoder, Http, Item};
use super::sse::SseParser;
use super::{
    ChatMessage, ChatRequest, EventStream, LlmError, Provider, ProviderSpec, StreamEvent, ToolCall,
};

pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
const API_VERSION: &str = "2023-06-01";
const MAX_TOKENS: u32 = 8192;

#[derive(Debug)]
pub struct Anthropic {
    spec: ProviderSpec,
    http: Http,
}

impl Anthropic {
    pub fn new(spec: ProviderSpec) -> Self {
        let http = Http::new("anthropic", &spec);
        Self { spec, http }
    }

    fn endpoint(&self) -> String {
        let base = match http::base(&self.spec.base_url) {
            "" => DEFAULT_BASE_URL,
            b => b,
        };
        // ANTHROPIC_BASE_URL is conventionally given without `/v1`, but
        // accept it with one rather than requesting `/v1/v1/messages`.
        match base.strip_suffix("/v1") {
            Some(b) => format!("{b}/v1/messages"),
            None => format!("{base}/v1/messages"),
        }
    }
}

impl Provider for Anthropic {
    fn name(&self) -> &'static str {
        "anthropic"
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<super::ModelInfo>, LlmError>> {
        Box::pin(super::models::anthropic(
            &self.http,
            &self.spec.base_url,
            API_VERSION,
        ))
    }

    fn start<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<EventStream, LlmError>> {
        Box::pin(async move {
            let url = self.http.url(&self.endpoint())?;
            let mut headers = HeaderMap::new();
            headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
            headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
            self.http.add_key_header(&mut headers, "x-api-key", "")?;
            let resp = self.http.post(url, headers, &request_body(req)).await?;
            Ok(self
                .http
                .stream(resp, AnthropicDecoder::default(), &req.text_every))
        })
    }
}

/// The JSON body of a streaming Messages request. Content is always a block
/// array, and consecutive messages of one role are merged into one: the API
/// wants all tool results of a turn in a single user message.
pub fn request_body(req: &ChatRequest) -> Value {
    let mut messages: Vec<(&str, Vec<Value>)> = Vec::new();
    let mut push = |role: &'static str, blocks: Vec<Value>| {
        if blocks.is_empty() {
            // Empty content is rejected by the API; an empty turn says nothing.
            return;
        }
        match messages.last_mut() {
            Some((r, content)) if *r == role => content.extend(blocks),
            _ => messages.push((role, blocks)),
        }
    };
    for m in &req.messages {
        match m {
            ChatMessage::User { text, images } => {
                let mut blocks: Vec<Value> = images.iter().map(image_block).collect();
                // The API refuses a text block of whitespace alone (400).
                if !text.trim().is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                push("user", blocks);
            }
            // Thinking blocks go back only with Anthropic's signature,
            // which is not kept: the reasoning is left out.
            ChatMessage::Assistant {
                text, tool_calls, ..
            } => {
                let mut blocks = Vec::new();
                if !text.trim().is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for c in tool_calls {
                    // `input` must be an object; arguments that are not one
                    // (a model's malformed output) are sent as empty.
                    let input = serde_json::from_str::<Value>(&c.arguments)
                        .ok()
                        .filter(Value::is_object)
                        .unwrap_or_else(|| json!({}));
                    blocks.push(
                        json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}),
                    );
                }
                push("assistant", blocks);
            }
            ChatMessage::ToolResult {
                call_id,
                content,
                images,
                ..
            } => {
                // A call that failed, was declined or stopped is said so:
                // its result is `{"error": …}` alone, as tock writes one.
                let is_error = is_error_result(content);
                // With images, the content is a block array (text, then
                // the images); without, plain text.
                let content = if images.is_empty() {
                    json!(content)
                } else {
                    let mut blocks = Vec::new();
                    if !content.trim().is_empty() {
                        blocks.push(json!({"type": "text", "text": content}));
                    }
                    blocks.extend(images.iter().map(image_block));
                    Value::Array(blocks)
                };
                let mut block =
                    json!({"type": "tool_result", "tool_use_id": call_id, "content": content});
                if is_error {
                    block["is_error"] = json!(true);
                }
                push("user", vec![block]);
            }
        }
    }
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let mut body = json!({
        "model": req.model,
        "max_tokens": MAX_TOKENS,
        "stream": true,
        "messages": messages,
    });
    if let Some(system) = req.system.as_deref().filter(|s| !s.is_empty()) {
        body["system"] = json!(system);
    }
    if !req.tools.is_empty() {
        body["tools"] = req
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
    }
    body
}

/// A tool result that says only that the call failed: `{"error": "…"}`.
fn is_error_result(content: &str) -> bool {
    serde_json::from_str::<serde_json::Map<String, Value>>(content)
        .is_ok_and(|m| m.len() == 1 && m.contains_key("error"))
}

/// An image as a content block (base64 source).
fn image_block(img: &super::Image) -> Value {
    json!({
        "type": "image",
        "source": {"type": "base64", "media_type": img.mime, "data": img.data_base64},
    })
}

struct ToolBlock {
    id: String,
    name: String,
    json: String,
    /// `input` from `content_block_start`, used if no deltas follow.
    initial: Option<Value>,
}

#[derive(Default)]
struct AnthropicDecoder {
    sse: SseParser,
    /// The body has ended; only the parser's leftovers are being processed.
    eof: bool,
    tools: HashMap<u64, ToolBlock>,
    stop_reason: Option<String>,
    done: bool,
    /// From `message_start`, completed by `message_delta`.
    usage: AnthropicUsage,
}

/// Anthropic's counts: `input_tokens` excludes what was read from or
/// written to the prompt cache, so the whole prompt is the sum of three.
#[derive(Default)]
struct AnthropicUsage {
    input: Option<u64>,
    cache_read: Option<u64>,
    cache_write: Option<u64>,
    output: Option<u64>,
}

impl AnthropicUsage {
    /// Take the fields `u` has (a delta repeats or updates some of them).
    fn merge(&mut self, u: &Value) {
        let n = |k: &str| u.get(k).and_then(Value::as_u64);
        self.input = n("input_tokens").or(self.input);
        self.cache_read = n("cache_read_input_tokens").or(self.cache_read);
        self.cache_write = n("cache_creation_input_tokens").or(self.cache_write);
        self.output = n("output_tokens").or(self.output);
    }

    fn usage(&self) -> Option<super::Usage> {
        let prompt = match (self.input, self.cache_read, self.cache_write) {
            (None, None, None) => None,
            (i, r, w) => Some(i.unwrap_or(0) + r.unwrap_or(0) + w.unwrap_or(0)),
        };
        let u = super::Usage {
            prompt_tokens: prompt,
            completion_tokens: self.output,
            cached_tokens: self.cache_read,
        };
        (!u.is_empty()).then_some(u)
    }
}

impl AnthropicDecoder {
    fn on_event(&mut self, name: Option<&str>, data: &str, out: &mut Vec<Item>) {
        let v: Value = match serde_json::from_str(data) {
            Ok(v) => v,
            // A `ping` or unknown event without JSON is harmless.
            Err(_) if matches!(name, Some("ping")) || data.trim().is_empty() => return,
            // A truncated last line at the end of the body is a cut
            // stream, reported as such by `finish`.
            Err(_) if self.eof => return,
            Err(e) => {
                out.push(Err(LlmError::transient(format!(
                    "malformed stream event ({e})"
                ))));
                self.done = true;
                return;
            }
        };
        let ty = v.get("type").and_then(Value::as_str).or(name).unwrap_or("");
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        match ty {
            "content_block_start" => {
                let block = v.get("content_block").unwrap_or(&Value::Null);
                match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        if let Some(t) = block
                            .get("text")
                            .and_then(Value::as_str)
                            .filter(|t| !t.is_empty())
                        {
                            out.push(Ok(StreamEvent::Text(t.to_string())));
                        }
                    }
                    Some("tool_use") => {
                        let s = |k: &str| {
                            block
                                .get(k)
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string()
                        };
                        let initial = block
                            .get("input")
                            .filter(|i| i.as_object().is_some_and(|o| !o.is_empty()));
                        self.tools.insert(
                            index,
                            ToolBlock {
                                id: s("id"),
                                name: s("name"),
                                json: String::new(),
                                initial: initial.cloned(),
                            },
                        );
                    }
                    // thinking, server tool blocks, ...: not shown.
                    _ => {}
                }
            }
            "content_block_delta" => {
                let delta = v.get("delta").unwrap_or(&Value::Null);
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        if let Some(t) = delta
                            .get("text")
                            .and_then(Value::as_str)
                            .filter(|t| !t.is_empty())
                        {
                            out.push(Ok(StreamEvent::Text(t.to_string())));
                        }
                    }
                    Some("thinking_delta") => {
                        if let Some(t) = delta
                            .get("thinking")
                            .and_then(Value::as_str)
                            .filter(|t| !t.is_empty())
                        {
                            out.push(Ok(StreamEvent::Reasoning(t.to_string())));
                        }
                    }
                    Some("input_json_delta") => {
                        if let (Some(block), Some(p)) = (
                            self.tools.get_mut(&index),
                            delta.get("partial_json").and_then(Value::as_str),
                        ) {
                            block.json.push_str(p);
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(block) = self.tools.remove(&index) {
                    out.push(Ok(StreamEvent::ToolCall(finish_tool(block))));
                }
            }
            "message_start" => {
                if let Some(u) = v.get("message").and_then(|m| m.get("usage")) {
                    self.usage.merge(u);
                }
            }
            "message_delta" => {
                if let Some(u) = v.get("usage") {
                    self.usage.merge(u);
                    if let Some(u) = self.usage.usage() {
                        out.push(Ok(StreamEvent::Usage(u)));
                    }
                }
                if let Some(r) = v
                    .get("delta")
                    .and_then(|d| d.get("stop_reason"))
                    .and_then(Value::as_str)
                {
                    self.stop_reason = Some(r.to_string());
                }
            }
            "message_stop" => {
                // Blocks never closed (should not happen) still count.
                let mut open: Vec<(u64, ToolBlock)> = self.tools.drain().collect();
                open.sort_by_key(|(i, _)| *i);
                for (_, block) in open {
                    out.push(Ok(StreamEvent::ToolCall(finish_tool(block))));
                }
                out.push(Ok(StreamEvent::Done {
                    stop_reason: self.stop_reason.take(),
                }));
                self.done = true;
            }
            "error" => {
                out.push(Err(stream_error(v.get("error").unwrap_or(&v))));
                self.done = true;
            }
            // ping, and event types added later.
            _ => {}
        }
    }

    fn on_events(&mut self, events: Vec<super::sse::SseEvent>, out: &mut Vec<Item>) {
        for ev in events {
            if self.done {
                break;
            }
            self.on_event(ev.event.as_deref(), &ev.data, out);
        }
    }
}

fn finish_tool(block: ToolBlock) -> ToolCall {
    let arguments = if !block.json.trim().is_empty() {
        block.json
    } else if let Some(initial) = block.initial {
        initial.to_string()
    } else {
        "{}".to_string()
    };
    ToolCall {
        id: block.id,
        name: block.name,
        arguments,
    }
}

/// An `error` event inside a 200 stream: overload and server trouble pass,
/// a rejected request does not.
fn stream_error(err: &Value) -> LlmError {
    let ty = err.get("type").and_then(Value::as_str).unwrap_or("");
    let message =
        http::json_error_message(&json!({"error": err})).unwrap_or_else(|| err.to_string());
    let message = if ty.is_empty() || message == ty {
        message
    } else {
        format!("{ty}: {message}")
    };
    match ty {
        "invalid_request_error"
        | "authentication_error"
        | "permission_error"
        | "not_found_error"
        | "request_too_large"
        | "billing_error" => LlmError::permanent(message),
        _ => LlmError::transient(message),
    }
}

impl Decoder for AnthropicDecoder {
    fn feed(&mut self, chunk: &[u8]) -> Vec<Item> {
        let mut out = Vec::new();
        match self.sse.push(chunk) {
            Ok(events) => self.on_events(events, &mut out),
            Err(e) => out.push(Err(LlmError::transient(e.to_string()))),
        }
        out
    }

    fn finish(&mut self) -> Vec<Item> {
        let mut out = Vec::new();
        self.eof = true;
        match self.sse.finish() {
            Ok(events) => self.on_events(events, &mut out),
            Err(e) => out.push(Err(LlmError::transient(e.to_string()))),
        }
        if !self.done {
            out.push(Err(LlmError::transient("stream ended early")));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(body: &str) -> Vec<Item> {
        let mut d = AnthropicDecoder::default();
        let mut out = d.feed(body.as_bytes());
        if !d.done {
            out.extend(d.finish());
        }
        out
    }

    #[test]
    fn tool_block_with_initial_input_and_no_deltas() {
        let out = run(concat!(
            "event: content_block_start\n",
            "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\",\"input\":{\"a\":1}}}\n\n",
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        ));
        assert_eq!(
            out,
            vec![
                Ok(StreamEvent::ToolCall(ToolCall {
                    id: "t".into(),
                    name: "n".into(),
                    arguments: "{\"a\":1}".into()
                })),
                Ok(StreamEvent::Done { stop_reason: None }),
            ]
        );
    }

    #[test]
    fn thinking_is_reasoning_not_reply_text() {
        let out = run(concat!(
            "event: content_block_start\n",
            "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n",
            "event: content_block_delta\n",
            "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hmm\"}}\n\n",
            "event: content_block_delta\n",
            "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"x\"}}\n\n",
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        ));
        // Its text says the model is working, and is not reply text.
        assert_eq!(
            out,
            vec![
                Ok(StreamEvent::Reasoning("hmm".into())),
                Ok(StreamEvent::Done { stop_reason: None })
            ]
        );
    }

    #[test]
    fn error_types_are_classified() {
        let ev = |ty: &str| {
            format!(
                "event: error\ndata: {{\"type\":\"error\",\"error\":{{\"type\":\"{ty}\",\"message\":\"m\"}}}}\n\n"
            )
        };
        for (ty, transient) in [
            ("overloaded_error", true),
            ("api_error", true),
            ("invalid_request_error", false),
        ] {
            let out = run(&ev(ty));
            assert!(
                matches!(&out[..], [Err(e)] if e.is_transient() == transient && e.message.contains(ty)),
                "{ty}: {out:?}"
            );
        }
    }

    /// A text block of whitespace alone is refused by the API (400), and a
    /// stored reply that held one would fail every later request: left out.
    #[test]
    fn whitespace_alone_is_no_text_block() {
        let req = ChatRequest {
            model: "m".into(),
            system: None,
            messages: vec![
                ChatMessage::User {
                    text: "hi".into(),
                    images: vec![],
                },
                ChatMessage::Assistant {
                    text: " \n\n  ".into(),
                    tool_calls: vec![],
                    reasoning: None,
                },
                ChatMessage::User {
                    text: "and".into(),
                    images: vec![],
                },
                ChatMessage::Assistant {
                    text: "\n\n".into(),
                    tool_calls: vec![ToolCall {
                        id: "t1".into(),
                        name: "x".into(),
                        arguments: "{}".into(),
                    }],
                    reasoning: None,
                },
            ],
            tools: vec![],
            text_every: crate::llm::TextPace::new(std::time::Duration::ZERO),
        };
        let body = request_body(&req);
        let texts: Vec<&str> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|m| m["content"].as_array().unwrap())
            .filter(|b| b["type"] == "text")
            .map(|b| b["text"].as_str().unwrap())
            .collect();
        assert_eq!(texts, ["hi", "and"], "{body:#}");
        assert_eq!(
            body["messages"][1]["content"][0]["type"], "tool_use",
            "{body:#}"
        );
    }

    /// A failed, declined or stopped call's result is marked `is_error`;
    /// any other is not, whatever it holds.
    #[test]
    fn an_error_result_is_marked_as_one() {
        let result = |content: &str| ChatMessage::ToolResult {
            call_id: "t1".into(),
            name: "x".into(),
            content: content.into(),
            images: vec![],
        };
        let req = ChatRequest {
            model: "m".into(),
            system: None,
            messages: vec![
                result(r#"{"error":"the user declined this request"}"#),
                result(r#"{"error":"x","detail":"y"}"#),
                result("18°C, sunny"),
            ],
            tools: vec![],
            text_every: crate::llm::TextPace::new(std::time::Duration::ZERO),
        };
        let body = request_body(&req);
        let marks: Vec<bool> = body["messages"][0]["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["is_error"] == json!(true))
            .collect();
        assert_eq!(marks, [true, false, false], "{body:#}");
    }

    #[test]
    fn endpoint_accepts_base_with_or_without_v1() {
        let mk = |base: &str| {
            Anthropic::new(ProviderSpec::new(
                super::super::ProviderKind::Anthropic,
                base,
                None,
            ))
            .endpoint()
        };
        assert_eq!(mk(""), "https://api.anthropic.com/v1/messages");
        assert_eq!(mk("https://x.example/"), "https://x.example/v1/messages");
        assert_eq!(mk("https://x.example/v1/"), "https://x.example/v1/messages");
    }
}
