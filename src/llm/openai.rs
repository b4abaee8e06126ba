//! OpenAI-compatible Chat Completions with streaming (OpenAI, OpenRouter,
//! vLLM, llama.cpp server, LM Studio, Ollama's /v1, ...).

use std::collections::BTreeMap;

use futures::future::BoxFuture;
use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderMap, HeaderValue};
use serde_json::{Value, json};

use super::http::{self, Decoder, Http, Item};
use super::sse::SseParser;
use super::{
    ChatMessage, ChatRequest, EventStream, LlmError, Provider, ProviderSpec, StreamEvent, ToolCall,
};

#[derive(Debug)]
pub struct OpenAi {
    spec: ProviderSpec,
    http: Http,
    /// The server refused `stream_options` once: requests go without it
    /// (and without usage) from then on.
    no_stream_options: std::sync::atomic::AtomicBool,
}

impl OpenAi {
    pub fn new(spec: ProviderSpec) -> Self {
        let http = Http::new("openai", &spec);
        Self {
            spec,
            http,
            no_stream_options: std::sync::atomic::AtomicBool::new(false),
        }
    }
}

/// Whether a refusal is about `stream_options` (a compatible server that
/// does not know it answers 400 or 422 naming it).
fn refuses_stream_options(e: &LlmError) -> bool {
    !e.is_transient() && e.message.contains("stream_options")
}

impl Provider for OpenAi {
    fn name(&self) -> &'static str {
        "openai"
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<super::ModelInfo>, LlmError>> {
        Box::pin(super::models::openai(&self.http, &self.spec.base_url))
    }

    fn start<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<EventStream, LlmError>> {
        Box::pin(async move {
            let url = self.http.url(&format!(
                "{}/chat/completions",
                http::base(&self.spec.base_url)
            ))?;
            let mut headers = HeaderMap::new();
            headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
            self.http
                .add_key_header(&mut headers, AUTHORIZATION, "Bearer ")?;
            use std::sync::atomic::Ordering;
            let mut body = request_body(req);
            if self.no_stream_options.load(Ordering::Relaxed)
                && let Some(o) = body.as_object_mut()
            {
                o.remove("stream_options");
            }
            let resp = match self.http.post(url.clone(), headers.clone(), &body).await {
                Err(e) if refuses_stream_options(&e) && body.get("stream_options").is_some() => {
                    tracing::info!("the server refuses stream_options; asking without usage");
                    self.no_stream_options.store(true, Ordering::Relaxed);
                    if let Some(o) = body.as_object_mut() {
                        o.remove("stream_options");
                    }
                    self.http.post(url, headers, &body).await?
                }
                r => r?,
            };
            Ok(self
                .http
                .stream(resp, OpenAiDecoder::default(), &req.text_every))
        })
    }
}

/// The JSON body of a streaming Chat Completions request.
pub fn request_body(req: &ChatRequest) -> Value {
    let mut messages = Vec::new();
    if let Some(system) = req.system.as_deref().filter(|s| !s.is_empty()) {
        messages.push(json!({"role": "system", "content": system}));
    }
    // Images a tool returned: a `tool` message takes text only, so they
    // follow the run of tool results as a user message.
    let mut tool_images: Vec<Value> = Vec::new();
    for m in &req.messages {
        if !matches!(m, ChatMessage::ToolResult { .. }) && !tool_images.is_empty() {
            messages.push(json!({"role": "user", "content": std::mem::take(&mut tool_images)}));
        }
        messages.push(match m {
            ChatMessage::User { text, images } if images.is_empty() => {
                json!({"role": "user", "content": text})
            }
            ChatMessage::User { text, images } => {
                let mut parts = Vec::new();
                if !text.is_empty() {
                    parts.push(json!({"type": "text", "text": text}));
                }
                parts.extend(images.iter().map(image_url));
                json!({"role": "user", "content": parts})
            }
            ChatMessage::Assistant {
                text,
                tool_calls,
                reasoning,
            } => {
                let mut msg = json!({"role": "assistant", "content": text});
                // As DeepSeek sends it: its thinking mode refuses (400) a
                // tool-call turn whose reasoning is not sent back.
                if let Some(r) = reasoning.as_deref().filter(|_| !tool_calls.is_empty()) {
                    msg["reasoning_content"] = json!(r);
                }
                if !tool_calls.is_empty() {
                    if text.is_empty() {
                        msg["content"] = Value::Null;
                    }
                    msg["tool_calls"] = tool_calls
                        .iter()
                        .map(|c| {
                            json!({
                                "id": c.id,
                                "type": "function",
                                "function": {"name": c.name, "arguments": c.arguments},
                            })
                        })
                        .collect();
                }
                msg
            }
            ChatMessage::ToolResult {
                call_id,
                name,
                content,
                images,
            } => {
                let mut content = content.clone();
                if !images.is_empty() {
                    tool_images.push(json!({"type": "text", "text": format!(
                        "The image{} below {} returned by the tool call {name} ({call_id}).",
                        if images.len() == 1 { "" } else { "s" },
                        if images.len() == 1 { "was" } else { "were" },
                    )}));
                    tool_images.extend(images.iter().map(image_url));
                    if !content.is_empty() {
                        content.push('\n');
                    }
                    content.push_str(&format!(
                        "[{} image{} returned: in the next message]",
                        images.len(),
                        if images.len() == 1 { "" } else { "s" }
                    ));
                }
                json!({"role": "tool", "tool_call_id": call_id, "content": content})
            }
        });
    }
    if !tool_images.is_empty() {
        messages.push(json!({"role": "user", "content": tool_images}));
    }
    // `include_usage`: the last chunk then carries the reply's token counts.
    let mut body = json!({
        "model": req.model,
        "stream": true,
        "stream_options": {"include_usage": true},
        "messages": messages,
    });
    if !req.tools.is_empty() {
        body["tools"] = function_tools(&req.tools);
    }
    body
}

/// An image as a content part (a data URL).
fn image_url(img: &super::Image) -> Value {
    let url = format!("data:{};base64,{}", img.mime, img.data_base64);
    json!({"type": "image_url", "image_url": {"url": url}})
}

/// Tools in the `{"type": "function", "function": {…}}` form (OpenAI; Ollama uses it too).
pub(crate) fn function_tools(tools: &[super::ToolSpec]) -> Value {
    tools
        .iter()
        .map(|t| {
            json!({
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
            })
        })
        .collect()
}

#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

#[derive(Default)]
struct OpenAiDecoder {
    sse: SseParser,
    /// The body has ended; only the parser's leftovers are being processed.
    eof: bool,
    /// Tool calls being assembled, by their `index`.
    calls: BTreeMap<u64, PartialCall>,
    last_index: Option<u64>,
    finish_reason: Option<String>,
    calls_emitted: bool,
    done: bool,
    /// The body as received while no SSE event has been seen, so that a
    /// server that ignored `stream: true`, or sent a JSON error with status
    /// 200, is still understood at the end.
    raw: Vec<u8>,
    saw_event: bool,
    /// A `<think>` block opening the text is reasoning.
    think: super::think_tags::ThinkTags,
}

/// The shape of almost every event of a streamed reply: one choice whose
/// delta carries text and nothing else of note. Read into this, borrowing
/// the text where it has no escapes, an event costs a third of what a
/// `Value` tree does; anything else (an error, usage, tool calls, a refusal,
/// a finish reason, more choices) takes the general path.
#[derive(serde::Deserialize)]
struct TextChunk<'a> {
    #[serde(borrow)]
    choices: Vec<TextChoice<'a>>,
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    usage: Option<serde::de::IgnoredAny>,
}

#[derive(serde::Deserialize)]
struct TextChoice<'a> {
    #[serde(borrow)]
    delta: TextDelta<'a>,
    #[serde(default)]
    finish_reason: Option<serde::de::IgnoredAny>,
}

#[derive(serde::Deserialize)]
struct TextDelta<'a> {
    #[serde(borrow, default)]
    content: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    refusal: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    tool_calls: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    reasoning_content: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    reasoning: Option<serde::de::IgnoredAny>,
}

/// The text of an event that is a plain text delta, or None for any other
/// event (which the general path reads).
fn plain_text_delta(data: &str) -> Option<std::borrow::Cow<'_, str>> {
    let chunk: TextChunk = serde_json::from_str(data).ok()?;
    let [choice] = <[TextChoice; 1]>::try_from(chunk.choices).ok()?;
    let plain = chunk.error.is_none()
        && chunk.usage.is_none()
        && choice.finish_reason.is_none()
        && choice.delta.refusal.is_none()
        && choice.delta.tool_calls.is_none()
        && choice.delta.reasoning_content.is_none()
        && choice.delta.reasoning.is_none();
    plain.then(|| choice.delta.content.unwrap_or_default())
}

/// How much of a non-SSE body is kept for [`OpenAiDecoder::raw`].
const MAX_RAW: usize = 1024 * 1024;

impl OpenAiDecoder {
    fn on_events(&mut self, events: Vec<super::sse::SseEvent>, out: &mut Vec<Item>) {
        if !events.is_empty() {
            self.saw_event = true;
            self.raw = Vec::new();
        }
        for ev in events {
            if self.done {
                break;
            }
            self.on_data(&ev.data, out);
        }
    }

    /// A complete, non-streamed Chat Completions body (or a JSON error).
    fn on_whole_body(&mut self, out: &mut Vec<Item>) {
        let Ok(v) = serde_json::from_slice::<Value>(&self.raw) else {
            return;
        };
        if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
            out.push(Err(stream_error(err)));
            self.done = true;
            return;
        }
        let Some(choice) = v.get("choices").and_then(|c| c.get(0)) else {
            return;
        };
        let Some(msg) = choice.get("message") else {
            return;
        };
        if let Some(t) = msg.get("content").and_then(Value::as_str) {
            self.text(t, out);
        }
        for (n, c) in msg
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let mut frag = c.clone();
            frag["index"] = json!(n);
            self.on_tool_fragment(&frag);
        }
        self.finish_reason = choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_string);
        self.emit_calls(out);
        if let Some(u) = usage(&v) {
            out.push(Ok(StreamEvent::Usage(u)));
        }
        out.push(Ok(StreamEvent::Done {
            stop_reason: self.finish_reason.take(),
        }));
        self.done = true;
    }

    fn on_data(&mut self, data: &str, out: &mut Vec<Item>) {
        let data = data.trim();
        if data.is_empty() {
            return;
        }
        if data == "[DONE]" {
            self.emit_calls(out);
            out.push(Ok(StreamEvent::Done {
                stop_reason: self.finish_reason.take(),
            }));
            self.done = true;
            return;
        }
        if let Some(text) = plain_text_delta(data) {
            self.text(&text, out);
            return;
        }
        let v: Value = match serde_json::from_str(data) {
            Ok(v) => v,
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
        if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
            out.push(Err(stream_error(err)));
            self.done = true;
            return;
        }
        if let Some(u) = usage(&v) {
            out.push(Ok(StreamEvent::Usage(u)));
        }
        let Some(choice) = v.get("choices").and_then(|c| c.get(0)) else {
            // Usage-only or keep-alive objects carry no choices.
            return;
        };
        if let Some(delta) = choice.get("delta") {
            // Reasoning models' thinking: `reasoning_content` (DeepSeek,
            // vLLM, llama.cpp) or `reasoning` (OpenRouter, Ollama); one of
            // them, where a server sends both.
            if let Some(text) = ["reasoning_content", "reasoning"]
                .iter()
                .find_map(|key| delta.get(key).and_then(Value::as_str))
                .filter(|s| !s.is_empty())
            {
                out.push(Ok(StreamEvent::Reasoning(text.to_string())));
            }
            if let Some(text) = delta.get("content").and_then(Value::as_str) {
                self.text(text, out);
            }
            if let Some(text) = delta
                .get("refusal")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
            {
                out.push(Ok(StreamEvent::Text(text.to_string())));
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for frag in calls {
                    self.on_tool_fragment(frag);
                }
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_string());
            self.emit_calls(out);
        }
    }

    fn on_tool_fragment(&mut self, frag: &Value) {
        let id = frag.get("id").and_then(Value::as_str).unwrap_or("");
        let index = match frag.get("index").and_then(Value::as_u64) {
            Some(i) => i,
            // Some servers omit `index`: a new id starts a new call, anything
            // else continues the last one.
            None => match self.last_index {
                Some(last)
                    if id.is_empty() || self.calls.get(&last).is_some_and(|c| c.id == id) =>
                {
                    last
                }
                Some(last) => last + 1,
                None => 0,
            },
        };
        self.last_index = Some(index);
        let call = self.calls.entry(index).or_default();
        if call.id.is_empty() {
            call.id = id.to_string();
        }
        let func = frag.get("function");
        if let Some(name) = func.and_then(|f| f.get("name")).and_then(Value::as_str) {
            // OpenAI sends the name once; some servers repeat it in every
            // fragment and a few split it. Repeats are ignored, pieces appended.
            if call.name != name {
                call.name.push_str(name);
            }
        }
        if let Some(args) = func.and_then(|f| f.get("arguments")) {
            match args {
                Value::String(s) => call.arguments.push_str(s),
                // Non-standard servers sometimes send an object at once.
                Value::Null => {}
                other => call.arguments.push_str(&other.to_string()),
            }
        }
    }

    /// A piece of the reply's text, a leading `<think>` block split off.
    fn text(&mut self, piece: &str, out: &mut Vec<Item>) {
        self.think.push(piece, &mut |ev| out.push(Ok(ev)));
    }

    /// The reply is over: its calls, and what the `<think>` split held.
    fn emit_calls(&mut self, out: &mut Vec<Item>) {
        self.think.finish(&mut |ev| out.push(Ok(ev)));
        if self.calls_emitted {
            return;
        }
        self.calls_emitted = true;
        for (n, (_, call)) in std::mem::take(&mut self.calls).into_iter().enumerate() {
            let id = if call.id.is_empty() {
                format!("call_{n}")
            } else {
                call.id
            };
            let arguments = if call.arguments.trim().is_empty() {
                "{}".to_string()
            } else {
                call.arguments
            };
            out.push(Ok(StreamEvent::ToolCall(ToolCall {
                id,
                name: call.name,
                arguments,
            })));
        }
    }
}

/// The `usage` object of a chunk (the last one, with `include_usage`):
/// `prompt_tokens`, `completion_tokens`, `prompt_tokens_details.cached_tokens`.
fn usage(v: &Value) -> Option<super::Usage> {
    let u = v.get("usage").filter(|u| u.is_object())?;
    let n = |v: Option<&Value>| v.and_then(Value::as_u64);
    let usage = super::Usage {
        prompt_tokens: n(u.get("prompt_tokens")),
        completion_tokens: n(u.get("completion_tokens")),
        cached_tokens: n(u
            .get("prompt_tokens_details")
            .and_then(|d| d.get("cached_tokens"))),
    };
    (!usage.is_empty()).then_some(usage)
}

/// An `{"error": ...}` object inside a 200 stream. Only a request the server
/// calls invalid is worth giving up on; the rest (overload, server errors)
/// may pass.
fn stream_error(err: &Value) -> LlmError {
    let message =
        http::json_error_message(&json!({"error": err})).unwrap_or_else(|| err.to_string());
    let text = |k: &str| {
        err.get(k).map(|v| {
            v.as_str()
                .map(str::to_string)
                .unwrap_or_else(|| v.to_string())
        })
    };
    let kind = [text("type"), text("code")]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    let invalid = kind.contains("invalid_request") || kind.contains("invalid_api_key");
    let message = format!("stream error: {message}");
    if invalid {
        LlmError::permanent(message)
    } else {
        LlmError::transient(message)
    }
}

impl Decoder for OpenAiDecoder {
    fn feed(&mut self, chunk: &[u8]) -> Vec<Item> {
        let mut out = Vec::new();
        if !self.saw_event && self.raw.len() < MAX_RAW {
            self.raw.extend_from_slice(chunk);
        }
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
        if !self.done && !self.saw_event {
            self.on_whole_body(&mut out);
        }
        if !self.done {
            if self.finish_reason.is_some() {
                // The model said it finished; only the `[DONE]` marker is
                // missing, which several compatible servers never send.
                self.emit_calls(&mut out);
                out.push(Ok(StreamEvent::Done {
                    stop_reason: self.finish_reason.take(),
                }));
            } else {
                out.push(Err(LlmError::transient("stream ended early")));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(chunks: &[&str]) -> Vec<Item> {
        let mut d = OpenAiDecoder::default();
        let mut out = Vec::new();
        for c in chunks {
            out.extend(d.feed(c.as_bytes()));
        }
        out.extend(d.finish());
        out
    }

    #[test]
    fn fragments_without_index_are_grouped_by_id() {
        let out = run(&[
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"x\\\"\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":\":1}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"b\",\"function\":{\"name\":\"g\",\"arguments\":{\"y\":2}}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
        ]);
        let tc = |id: &str, name: &str, args: &str| {
            Ok(StreamEvent::ToolCall(ToolCall {
                id: id.into(),
                name: name.into(),
                arguments: args.into(),
            }))
        };
        assert_eq!(
            out,
            vec![
                tc("a", "f", "{\"x\":1}"),
                tc("b", "g", "{\"y\":2}"),
                Ok(StreamEvent::Done {
                    stop_reason: Some("tool_calls".into())
                })
            ]
        );
    }

    /// Reasoning models' thinking comes as `reasoning_content` or
    /// `reasoning` beside an empty or null `content`: reasoning, not text
    /// (and not nothing: it is what says a long-thinking model is working).
    #[test]
    fn reasoning_deltas_are_reasoning_not_text() {
        let out = run(&[
            "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":null,\"reasoning_content\":\"Let me\"}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"content\":\"\",\"reasoning\":\" think.\",\"reasoning_details\":[]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\",\"reasoning_content\":null}}]}\n\n",
            "data: [DONE]\n\n",
        ]);
        assert_eq!(
            out,
            vec![
                Ok(StreamEvent::Reasoning("Let me".into())),
                Ok(StreamEvent::Reasoning(" think.".into())),
                Ok(StreamEvent::Text("Hi".into())),
                Ok(StreamEvent::Done { stop_reason: None }),
            ]
        );
    }

    #[test]
    fn missing_id_and_arguments_are_filled_in() {
        let out = run(&[
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"now\"}}]}}]}\n\n",
            "data: [DONE]\n\n",
        ]);
        assert_eq!(
            out[0],
            Ok(StreamEvent::ToolCall(ToolCall {
                id: "call_0".into(),
                name: "now".into(),
                arguments: "{}".into()
            }))
        );
    }

    #[test]
    fn invalid_request_error_in_stream_is_permanent() {
        let out = run(&[
            "data: {\"error\":{\"message\":\"bad\",\"type\":\"invalid_request_error\"}}\n\n",
        ]);
        assert_eq!(out.len(), 1);
        assert!(matches!(&out[0], Err(e) if !e.is_transient() && e.message.contains("bad")));
        let out =
            run(&["data: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}\n\n"]);
        assert!(matches!(&out[0], Err(e) if e.is_transient()));
    }

    #[test]
    fn finish_reason_without_done_marker_completes() {
        let out = run(&[
            "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\n",
        ]);
        assert_eq!(
            out,
            vec![
                Ok(StreamEvent::Text("hi".into())),
                Ok(StreamEvent::Done {
                    stop_reason: Some("stop".into())
                })
            ]
        );
    }

    #[test]
    fn non_streamed_body_is_understood() {
        let body = r#"{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"Hi",
            "tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},
            "finish_reason":"tool_calls"}]}"#;
        assert_eq!(
            run(&[&body[..10], &body[10..]]),
            vec![
                Ok(StreamEvent::Text("Hi".into())),
                Ok(StreamEvent::ToolCall(ToolCall {
                    id: "c".into(),
                    name: "f".into(),
                    arguments: "{}".into()
                })),
                Ok(StreamEvent::Done {
                    stop_reason: Some("tool_calls".into())
                }),
            ]
        );
        let out = run(&[r#"{"error":{"message":"quota exceeded","type":"insufficient_quota"}}"#]);
        assert!(
            matches!(&out[..], [Err(e)] if e.message.contains("quota exceeded")),
            "{out:?}"
        );
        let out = run(&["not json at all"]);
        assert!(
            matches!(&out[..], [Err(e)] if e.message == "stream ended early"),
            "{out:?}"
        );
    }

    #[test]
    fn malformed_json_is_an_error() {
        let out = run(&["data: {not json\n\n"]);
        assert!(matches!(&out[0], Err(e) if e.is_transient()));
    }

    #[test]
    fn only_plain_text_deltas_take_the_fast_path() {
        let text = |d: &str| plain_text_delta(d).map(|t| t.into_owned());
        let chunk = |choice: &str| {
            format!(
                r#"{{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{choice}]}}"#
            )
        };
        assert_eq!(
            text(&chunk(
                r#"{"index":0,"delta":{"content":"a \"q\" \u00e9 ü\n"},"logprobs":null,"finish_reason":null}"#
            )),
            Some("a \"q\" é ü\n".to_string()),
            "escapes and non-ASCII"
        );
        assert_eq!(
            text(&chunk(
                r#"{"index":0,"delta":{"role":"assistant","content":"","refusal":null}}"#
            )),
            Some(String::new())
        );
        assert_eq!(
            text(&chunk(r#"{"index":0,"delta":{}}"#)),
            Some(String::new())
        );
        // Everything else is read by the general path.
        for other in [
            chunk(r#"{"index":0,"delta":{},"finish_reason":"stop"}"#),
            chunk(r#"{"index":0,"delta":{"refusal":"no"}}"#),
            chunk(r#"{"index":0,"delta":{"tool_calls":[{"index":0,"id":"x"}]}}"#),
            chunk(r#"{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"}}"#),
            r#"{"choices":[],"usage":{"prompt_tokens":1}}"#.to_string(),
            r#"{"choices":[{"delta":{"content":"a"}}],"usage":{"prompt_tokens":1}}"#.to_string(),
            r#"{"error":{"message":"boom"},"choices":[{"delta":{"content":"a"}}]}"#.to_string(),
            r#"{"choices":[{"message":{"content":"a"}}]}"#.to_string(),
            "{not json".to_string(),
        ] {
            assert_eq!(text(&other), None, "{other}");
        }
    }

    #[test]
    fn the_fast_path_and_the_general_path_agree() {
        let event = |d: &str| format!("data: {d}\n\n");
        let chunks = [
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"Hel"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"lo \"w\u00f6rld\""}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":" more"},"finish_reason":"stop"}]}"#,
        ];
        let fast: Vec<String> = chunks.iter().map(|c| event(c)).collect();
        let fast = run(&fast.iter().map(String::as_str).collect::<Vec<_>>());
        // The same events sent down the general path (an empty list of
        // tool calls makes them not plain) give the same text.
        let texts = |out: &[Item]| -> String {
            out.iter()
                .filter_map(|i| match i {
                    Ok(StreamEvent::Text(t)) => Some(t.as_str()),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(texts(&fast), "Hello \"wörld\" more");
        let general: Vec<String> = chunks
            .iter()
            .map(|c| {
                let mut v: Value = serde_json::from_str(c).unwrap();
                v["choices"][0]["delta"]["tool_calls"] = json!([]);
                event(&v.to_string())
            })
            .collect();
        let general = run(&general.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(texts(&general), texts(&fast));
    }
}
