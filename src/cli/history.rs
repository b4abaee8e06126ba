//! `tock conversations`, `show`, `fork` and `search`: conversations and
//! their history, read from the command line.

use anyhow::{Result, anyhow};
use serde_json::json;

use super::{local, rfc3339};
use crate::engine::Engine;
use crate::store::Store;

/// `tock conversations [--json]`: when each last changed, as the TUI's
/// list says it (a time stored ahead of now is now).
pub(super) fn conversations(store: &Store, now: i64, json: bool) -> Result<()> {
    let convs = store.conversations()?;
    if json {
        let arr: Vec<_> = convs
            .iter()
            .map(|c| json!({"id": c.id, "title": c.title, "updated_at": rfc3339(Some(c.updated_at))}))
            .collect();
        println!("{}", crate::sanitize::json_text(&arr)?);
    } else {
        for c in convs {
            println!(
                "{:>5}  {}  {}",
                c.id,
                local(crate::when::happened(c.updated_at, now)),
                c.display_title()
            );
        }
    }
    Ok(())
}

/// `tock show CONV [--json]`: every message, its attachments and tokens.
pub(super) fn show(store: &Store, engine: &Engine, conv: &str, json: bool) -> Result<()> {
    let c = store
        .find_conversation(conv)?
        .ok_or_else(|| anyhow!("no conversation \"{conv}\""))?;
    let msgs = store.messages(c.id)?;
    let usage = engine.usage(c.id)?;
    let by_message: std::collections::HashMap<i64, &crate::engine::ReplyUsage> =
        usage.replies.iter().map(|u| (u.message_id, u)).collect();
    // What reasoning models thought before their replies, kept with them.
    let mut reasoning = std::collections::HashMap::new();
    for (id, _) in store.reasoned(c.id)? {
        if let Some(text) = store.reasoning(id)? {
            reasoning.insert(id, text);
        }
    }
    let collapsed = crate::store::collapse_attempts(&msgs, |id| reasoning.contains_key(&id));
    // A reply stored as streaming with no live dispatcher to write it was
    // cut off by a tock that died; the next one asks for it again.
    let now = engine.now_ms();
    let writer_alive = store.live_lease_holder(now)?.is_some();
    let cut_off = |m: &crate::store::Message| {
        m.status == crate::store::MessageStatus::Streaming && !writer_alive
    };
    if json {
        // Every message is listed (scripts audit them); `hidden` marks
        // an earlier attempt at a reply that the views collapse.
        let arr: Vec<_> = msgs
            .iter()
            .map(|m| {
                let usage = by_message.get(&m.id).map(|u| usage_json(&u.usage, u.cost));
                json!({"id": m.id, "role": m.role.as_str(), "content": m.content,
                       "status": m.status.as_str(), "created_at": rfc3339(Some(m.created_at)),
                       "error": m.error, "hidden": collapsed.is_hidden(m.id),
                       "reasoning": reasoning.get(&m.id),
                       "cut_off": cut_off(m),
                       "attachments": crate::files::attachment_infos(m.parts_json.as_deref()),
                       "tool_calls": m.tool_calls().iter()
                           .map(|c| json!({"id": c.id, "name": c.name, "arguments": c.arguments}))
                           .collect::<Vec<_>>(),
                       "tool": (m.role == crate::store::Role::Tool).then_some(&m.model),
                       "usage": usage})
            })
            .collect();
        let mut total = usage_json(&usage.total, usage.cost);
        total["context_used"] = json!(usage.context_used);
        total["context_tokens"] = json!(usage.context_tokens);
        println!(
            "{}",
            crate::sanitize::json_text(
                &json!({"id": c.id, "title": c.title, "messages": arr, "usage": total})
            )?
        );
    } else {
        println!("# {}\n", c.display_title());
        for m in msgs.iter().filter(|m| !collapsed.is_hidden(m.id)) {
            let mut status = if m.status == crate::store::MessageStatus::Complete {
                String::new()
            } else if cut_off(m) {
                " (cut off when its tock stopped; the next tock or tock daemon asks for it again)"
                    .to_string()
            } else {
                format!(" ({})", m.status.as_str())
            };
            if let Some(n) = collapsed.earlier.get(&m.id) {
                status.push_str(&format!(" (after {n} earlier interrupted attempts)"));
            }
            // A tool's result names its tool.
            let tool = match (&m.role, &m.model) {
                (crate::store::Role::Tool, Some(name)) => {
                    format!(" {}", crate::sanitize::sanitize_line(name))
                }
                _ => String::new(),
            };
            println!(
                "## {}{tool}{status} — {}\n",
                m.role.as_str(),
                local(crate::when::happened(m.created_at, now))
            );
            if let Some(r) = reasoning.get(&m.id) {
                print!("{}", crate::transcript::reasoning_quote(r));
            }
            println!("{}\n", crate::sanitize::sanitize(&m.content));
            // The calls a reply made, every argument on its own line.
            for c in m.tool_calls() {
                println!("→ tool call {}", crate::sanitize::sanitize_line(&c.name));
                for line in crate::call_text::argument_lines(&c.arguments) {
                    println!("    {line}");
                }
                println!();
            }
            for a in crate::files::attachment_infos(m.parts_json.as_deref()) {
                // The size rounded as the chat shows it.
                println!(
                    "[attached: {} ({}, {})]",
                    crate::sanitize::sanitize_line(&a.name),
                    crate::sanitize::sanitize_line(&a.mime),
                    crate::files::human_size(a.bytes)
                );
            }
            if let Some(u) = by_message.get(&m.id) {
                println!("[{}]\n", usage_line(&u.usage, u.cost));
            }
            // Why a reply did not end as meant, or how a whole one ended
            // (cut short by the length limit).
            if let Some(e) = &m.error {
                println!("[{}]\n", crate::sanitize::sanitize_line(e));
            }
        }
    }
    Ok(())
}

/// `tock fork CONV [--at MESSAGE_ID] [--json]`: prints the new conversation's id.
pub(super) fn fork(
    store: &Store,
    engine: &Engine,
    conv: &str,
    at: Option<i64>,
    json: bool,
) -> Result<()> {
    let c = store
        .find_conversation(conv)?
        .ok_or_else(|| anyhow!("no conversation \"{conv}\""))?;
    let at = match at {
        Some(m) => m,
        None => store
            .messages(c.id)?
            .iter()
            .rev()
            .find(|m| {
                !matches!(
                    m.status,
                    crate::store::MessageStatus::Superseded
                        | crate::store::MessageStatus::Streaming
                )
            })
            .map(|m| m.id)
            .ok_or_else(|| anyhow!("conversation {} has no message to fork", c.id))?,
    };
    let fork = engine.fork_conversation(c.id, at)?;
    let id = fork.id;
    if json {
        let made = store.conversation(id)?;
        let copied = store.messages(id)?.len();
        println!(
            "{}",
            crate::sanitize::json_text(&json!({
                "id": id,
                "title": made.and_then(|f| f.title),
                "forked_from": c.id,
                "up_to_message_id": at,
                "messages": copied,
                "tool_calls_left_out": fork.calls_left_out,
            }))?
        );
    } else {
        // The id alone on stdout, for scripts; what was left out on stderr.
        println!("{id}");
        if let Some(note) = crate::call_text::calls_left_out(&fork.calls_left_out) {
            eprintln!("{note}");
        }
    }
    Ok(())
}

/// Token counts as `show --json` prints them.
fn usage_json(u: &crate::llm::Usage, cost: Option<f64>) -> serde_json::Value {
    json!({"prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens,
           "cached_tokens": u.cached_tokens, "cost": cost})
}

/// "120 tokens in (100 cached), 7 out, cost 0.0004".
fn usage_line(u: &crate::llm::Usage, cost: Option<f64>) -> String {
    let mut parts = Vec::new();
    if let Some(p) = u.prompt_tokens {
        match u.cached_tokens.filter(|&c| c > 0) {
            Some(c) => parts.push(format!("{p} tokens in ({c} cached)")),
            None => parts.push(format!("{p} tokens in")),
        }
    }
    if let Some(c) = u.completion_tokens {
        parts.push(format!("{c} out"));
    }
    if let Some(c) = cost {
        parts.push(format!("cost {c:.4}"));
    }
    parts.join(", ")
}

/// `tock search TEXT [--limit N] [--json]`.
pub(super) fn search(engine: &Engine, text: &str, limit: usize, as_json: bool) -> Result<()> {
    let hits = engine.search(text, limit)?;
    // A time stored ahead of now is shown as now, as the lists do.
    let now = engine.now_ms();
    if as_json {
        let arr: Vec<_> = hits
            .iter()
            .map(|h| {
                json!({
                    "conversation_id": h.conversation_id,
                    "conversation_title": h.conversation_title,
                    "message_id": h.message_id,
                    "role": h.role.as_str(),
                    "created_at": rfc3339(Some(h.created_at)),
                    "snippet": h.snippet,
                    "highlights": h.highlights.iter().map(|r| [r.start, r.end]).collect::<Vec<_>>(),
                })
            })
            .collect();
        println!("{}", crate::sanitize::json_text(&arr)?);
        return Ok(());
    }
    if hits.is_empty() {
        // `tock search ''` said "no message matches", as if it had looked.
        if crate::store::SearchQuery::parse(text).is_none() {
            eprintln!(
                "nothing to search for: it has no words (spaces and punctuation alone are not searched)"
            );
        } else {
            eprintln!("no message matches");
        }
        return Ok(());
    }
    // Bold matches only on a terminal; a pipe gets plain text.
    let bold = std::io::IsTerminal::is_terminal(&std::io::stdout());
    for h in &hits {
        let title = match &h.conversation_title {
            Some(t) if !t.trim().is_empty() => crate::sanitize::sanitize_line(t).into_owned(),
            _ => format!("Conversation {}", h.conversation_id),
        };
        println!(
            "#{} {title} · {} · message {} ({})",
            h.conversation_id,
            local(crate::when::happened(h.created_at, now)),
            h.message_id,
            h.role.as_str()
        );
        let mut line = String::new();
        let mut at = 0;
        for r in &h.highlights {
            line.push_str(&h.snippet[at..r.start]);
            if bold {
                line.push_str(&format!("\x1b[1m{}\x1b[0m", &h.snippet[r.clone()]));
            } else {
                line.push_str(&h.snippet[r.clone()]);
            }
            at = r.end;
        }
        line.push_str(&h.snippet[at..]);
        println!("    {line}");
    }
    Ok(())
}
