//! The offline model: used when nothing is configured so a new user can try
//! every feature (streaming, Markdown, code highlighting, the scheduling
//! tool, failures) without a network or a key. It never touches the network.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use serde_json::json;

use super::{ChatMessage, ChatRequest, EventStream, LlmError, Provider, StreamEvent, ToolCall};

/// Delay between streamed words unless `TOCK_ECHO_DELAY_MS` says otherwise.
const DEFAULT_DELAY_MS: u64 = 12;
/// Words streamed one by one; the rest of a long reply comes in one piece.
const MAX_STREAMED_WORDS: usize = 300;
const SCHEDULE_TOOL: &str = "schedule_task";
/// How a newcomer reaches a real model is said where they first look.
const HEADER: &str = "**echo** (offline model: to talk to a real LLM, run `tock setup`, or export `OPENAI_API_KEY`, `ANTHROPIC_API_KEY` or `OLLAMA_HOST`, or write a config file; `tock status` names its path)";

#[derive(Clone, Debug, Default)]
pub struct Echo {
    /// Fixed delay per word; `None` reads `TOCK_ECHO_DELAY_MS` on each request.
    delay: Option<Duration>,
}

impl Echo {
    /// An echo model with a fixed per-word delay (tests use zero).
    pub fn with_delay(delay: Duration) -> Self {
        Self { delay: Some(delay) }
    }

    fn delay(&self) -> Duration {
        self.delay.unwrap_or_else(|| {
            let ms = std::env::var("TOCK_ECHO_DELAY_MS")
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .unwrap_or(DEFAULT_DELAY_MS);
            Duration::from_millis(ms)
        })
    }
}

impl Provider for Echo {
    fn name(&self) -> &'static str {
        "echo"
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<super::ModelInfo>, LlmError>> {
        Box::pin(async {
            Ok(vec![super::ModelInfo {
                id: "echo".into(),
                display_name: None,
            }])
        })
    }

    fn start<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<EventStream, LlmError>> {
        let delay = self.delay();
        let reply = respond(req);
        Box::pin(async move {
            let Reply { text, tool_call } = reply?;
            let mut pieces = words(&text);
            if pieces.len() > MAX_STREAMED_WORDS {
                // A huge paste is echoed at once after the first words
                // rather than taking minutes.
                let rest = pieces.split_off(MAX_STREAMED_WORDS).concat();
                pieces.push(rest);
            }
            let mut events: Vec<StreamEvent> = pieces.into_iter().map(StreamEvent::Text).collect();
            let stop_reason = if let Some(call) = tool_call {
                events.push(StreamEvent::ToolCall(call));
                "tool_use"
            } else {
                "end_turn"
            };
            events.push(StreamEvent::Done {
                stop_reason: Some(stop_reason.to_string()),
            });
            let stream = futures::stream::iter(events).then(move |ev| async move {
                if !delay.is_zero() && matches!(ev, StreamEvent::Text(_)) {
                    tokio::time::sleep(delay).await;
                }
                Ok(ev)
            });
            Ok(Box::pin(stream) as EventStream)
        })
    }
}

struct Reply {
    text: String,
    tool_call: Option<ToolCall>,
}

fn respond(req: &ChatRequest) -> Result<Reply, LlmError> {
    let last_user = req.messages.iter().rev().find_map(|m| match m {
        ChatMessage::User { text, .. } => Some(text.as_str()),
        _ => None,
    });
    if let Some(text) = last_user {
        if text.contains("ECHO_FAIL_PERMANENT") {
            return Err(LlmError::permanent(
                "echo: simulated permanent failure (ECHO_FAIL_PERMANENT)",
            ));
        }
        if text.contains("ECHO_FAIL_TRANSIENT") {
            return Err(LlmError::transient(
                "echo: simulated transient failure (ECHO_FAIL_TRANSIENT)",
            ));
        }
    }
    let plain = |text: String| {
        Ok(Reply {
            text,
            tool_call: None,
        })
    };
    match req.messages.last() {
        Some(ChatMessage::ToolResult { name, content, .. }) => {
            plain(summarise_tool_result(name, content))
        }
        Some(ChatMessage::User { text, images }) => {
            if let Some(instruction) = text
                .trim_start()
                .strip_prefix(crate::store::TASK_TURN_PREFIX)
            {
                return plain(format!("Reminder: {}", instruction.trim()));
            }
            let offers_tool = req.tools.iter().any(|t| t.name == SCHEDULE_TOOL);
            if offers_tool && let Some(r) = parse_reminder(text) {
                let arguments =
                    json!({"instruction": r.instruction, "at": r.at, "title": r.title}).to_string();
                let call = ToolCall {
                    id: next_call_id(),
                    name: SCHEDULE_TOOL.to_string(),
                    arguments,
                };
                return Ok(Reply {
                    text: "I'll schedule that.".to_string(),
                    tool_call: Some(call),
                });
            }
            plain(echo_markdown(text, images.len()))
        }
        _ => plain(format!("{HEADER}\n\nSay something and I will repeat it.")),
    }
}

fn next_call_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    // The timestamp keeps ids unique across restarts within a conversation.
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    format!(
        "call_echo_{millis}_{}",
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

fn summarise_tool_result(name: &str, content: &str) -> String {
    let short: String = content.trim().chars().take(300).collect();
    if name != SCHEDULE_TOOL {
        return format!("Tool `{name}` returned: {short}");
    }
    let lower = content.to_lowercase();
    let failed = [
        "error",
        "denied",
        "declined",
        "rejected",
        "refused",
        "not scheduled",
        "fail",
        "invalid",
    ]
    .iter()
    .any(|w| lower.contains(w));
    if failed {
        format!("Not scheduled: {short}")
    } else {
        format!("Scheduled: {short}")
    }
}

/// The user's words as a Markdown quote, followed by any fenced code blocks
/// verbatim so syntax highlighting can be seen.
fn echo_markdown(text: &str, images: usize) -> String {
    let (prose, blocks) = split_code_blocks(text);
    let prose = prose.trim();
    let mut out = format!("{HEADER}\n\n");
    if !prose.is_empty() {
        out.push_str("You said:\n\n");
        for line in prose.lines() {
            if line.trim().is_empty() {
                out.push_str(">\n");
            } else {
                out.push_str(&format!("> {line}\n"));
            }
        }
    } else if blocks.is_empty() && images == 0 {
        out.push_str("You said nothing.\n");
    }
    if images > 0 {
        out.push_str(&format!(
            "\n*({images} image{} attached)*\n",
            if images == 1 { "" } else { "s" }
        ));
    }
    if !blocks.is_empty() {
        out.push_str(if blocks.len() == 1 {
            "\nYour code block:\n\n"
        } else {
            "\nYour code blocks:\n\n"
        });
        for b in blocks {
            out.push_str(&b);
            out.push_str("\n\n");
        }
    }
    out.trim_end().to_string()
}

/// Splits fenced code blocks (``` or ~~~, with their fences) from the rest.
/// An unclosed fence runs to the end, as in CommonMark.
fn split_code_blocks(text: &str) -> (String, Vec<String>) {
    let mut prose = String::new();
    let mut blocks = Vec::new();
    let mut current: Option<(String, String)> = None; // (fence, block text)
    for line in text.lines() {
        let trimmed = line.trim_start();
        match current.as_mut() {
            None => {
                let first = trimmed.chars().next().filter(|&c| c == '`' || c == '~');
                let fence: String = trimmed.chars().take_while(|&c| Some(c) == first).collect();
                if fence.len() >= 3 {
                    current = Some((fence, format!("{trimmed}\n")));
                } else {
                    prose.push_str(line);
                    prose.push('\n');
                }
            }
            Some((fence, block)) => {
                block.push_str(line);
                if trimmed.starts_with(fence.as_str())
                    && trimmed.trim_end().chars().all(|c| c == '`' || c == '~')
                {
                    if let Some((_, b)) = current.take() {
                        blocks.push(b);
                    }
                } else {
                    block.push('\n');
                }
            }
        }
    }
    if let Some((fence, mut block)) = current {
        block.push_str(&fence);
        blocks.push(block);
    }
    (prose, blocks)
}

/// Splits text into word-sized pieces that concatenate back to it exactly:
/// each piece is a run of whitespace followed by a word.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    for c in text.chars() {
        if c.is_whitespace() {
            if in_word {
                out.push(std::mem::take(&mut cur));
                in_word = false;
            }
        } else {
            in_word = true;
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[derive(Debug, PartialEq)]
struct Reminder {
    instruction: String,
    at: String,
    title: String,
}

/// `remind me (in|at) <time> to <instruction>`, case-insensitive, anywhere
/// in the text. The time is everything up to the first " to ".
fn parse_reminder(text: &str) -> Option<Reminder> {
    // ASCII lowercasing keeps byte offsets valid for slicing `text`.
    let lower = text.to_ascii_lowercase();
    let start = lower.find("remind me ")?;
    let rest_at = start + "remind me ".len();
    let rest = &lower[rest_at..];
    let (is_in, time_at) = if rest.starts_with("in ") {
        (true, rest_at + 3)
    } else if rest.starts_with("at ") {
        (false, rest_at + 3)
    } else {
        return None;
    };
    let to = lower[time_at..].find(" to ")? + time_at;
    let time = text[time_at..to].trim();
    let instruction = text[to + " to ".len()..]
        .trim()
        .trim_end_matches(['.', '!'])
        .trim();
    if time.is_empty() || instruction.is_empty() {
        return None;
    }
    let at = if is_in {
        format!("in {time}")
    } else {
        time.to_string()
    };
    let title: Vec<&str> = instruction.split_whitespace().take(5).collect();
    let mut title = title.join(" ");
    if title.chars().count() > 40 {
        title = title
            .chars()
            .take(40)
            .collect::<String>()
            .trim_end()
            .to_string();
    }
    Some(Reminder {
        instruction: instruction.to_string(),
        at,
        title,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(instruction: &str, at: &str, title: &str) -> Option<Reminder> {
        Some(Reminder {
            instruction: instruction.into(),
            at: at.into(),
            title: title.into(),
        })
    }

    #[test]
    fn reminder_forms() {
        assert_eq!(
            parse_reminder("remind me in 1 minute to stretch"),
            r("stretch", "in 1 minute", "stretch")
        );
        assert_eq!(
            parse_reminder("Remind me AT 9am to call Bob."),
            r("call Bob", "9am", "call Bob")
        );
        assert_eq!(
            parse_reminder("please remind me in 2 hours to go to the store and buy milk"),
            r(
                "go to the store and buy milk",
                "in 2 hours",
                "go to the store and"
            )
        );
        assert_eq!(parse_reminder("remind me tomorrow to x"), None);
        assert_eq!(parse_reminder("remind me in 5 minutes"), None);
        assert_eq!(parse_reminder("remind me at  to x"), None);
        // Non-ASCII text around the match must not break the byte offsets.
        assert_eq!(
            parse_reminder("Ünïcödé: remind me in 1 h to café"),
            r("café", "in 1 h", "café")
        );
    }

    #[test]
    fn words_concatenate_back() {
        let text = "  **echo** hi\n\n> you  said\t ok ";
        let w = words(text);
        assert_eq!(w.concat(), text);
        assert!(w.len() > 4);
        assert!(w.iter().all(|p| !p.is_empty()));
    }

    #[test]
    fn markdown_quotes_prose_and_echoes_code() {
        let md = echo_markdown("look:\n```rust\nfn main() {}\n```\nthanks", 0);
        assert!(md.starts_with(HEADER));
        assert!(md.contains("> look:\n> thanks"), "{md}");
        assert!(md.contains("```rust\nfn main() {}\n```"), "{md}");
        let md = echo_markdown("~~~\nunclosed", 1);
        assert!(md.contains("~~~\nunclosed\n~~~"), "{md}");
        assert!(md.contains("1 image attached"));
    }
}
