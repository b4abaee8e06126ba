//! `tock tools`, `tock approvals --rules` and `tock approve --forget`: the
//! MCP servers and the saved `allow` rules, from the command line.

use std::time::Duration;

use anyhow::{Result, bail};
use serde_json::json;

use super::{local, rfc3339};
use crate::engine::Engine;
use crate::engine::policy::{SAVED_RULES_KEY, parse_saved};
use crate::mcp::ServerState;
use crate::store::Store;

/// `tock tools [--json]`: every configured server with its state and tools.
/// Servers not running are started to list them, then stopped again.
pub(super) fn tools(engine: &Engine, as_json: bool) -> Result<()> {
    // Its servers are unknown: "no server is configured" would be untrue.
    if let Some(e) = engine.config().read_error() {
        bail!("{e}; its MCP servers cannot be listed until it is fixed");
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let servers = rt.block_on(async {
        let servers = engine.refresh_mcp_servers().await;
        engine.mcp().shutdown(Duration::from_secs(5)).await;
        servers
    });
    // The servers are stopped: what is printed now may end quietly.
    super::end_quietly_on_a_closed_stdout();
    let line = |s: &str| crate::sanitize::sanitize_line(s).into_owned();
    let policy = engine.approval_policy();
    if as_json {
        let arr: Vec<_> = servers
            .iter()
            .map(|s| {
                let mut v = serde_json::to_value(s).unwrap_or_default();
                if let Some(tools) = v.get_mut("tools").and_then(|t| t.as_array_mut()) {
                    for (t, info) in tools.iter_mut().zip(&s.tools) {
                        t["approval"] =
                            json!(policy.decide_tool(&info.name, info.read_only).as_str());
                    }
                }
                v
            })
            .collect();
        println!("{}", crate::sanitize::json_text(&arr)?);
        return Ok(());
    }
    if servers.is_empty() && engine.mcp().configured() {
        // Each server left out was named in a warning already.
        println!("no MCP server tock can use is configured (see the warnings above)");
        return Ok(());
    }
    if servers.is_empty() {
        println!("no MCP server is configured (add an [mcp.NAME] table to the config)");
        return Ok(());
    }
    for s in &servers {
        let state = match &s.state {
            ServerState::NotStarted => "not started".to_string(),
            ServerState::Starting => "starting".to_string(),
            ServerState::Running => "running".to_string(),
            ServerState::Failed(r) => format!("failed: {}", line(r)),
            ServerState::Disabled => "disabled".to_string(),
        };
        println!("{} ({}) — {state}", line(&s.name), s.transport);
        if let Some(p) = &s.problem {
            println!("  last problem: {}", line(p));
        }
        for t in &s.tools {
            let desc: String = line(&t.description).chars().take(70).collect();
            println!(
                "  {:<32} {:<5} {}{desc}",
                line(&t.name),
                policy.decide_tool(&t.name, t.read_only).as_str(),
                if t.read_only { "[read-only] " } else { "" },
            );
        }
    }
    Ok(())
}

/// `tock approvals --rules [--json]`: the tools allowed with `--always`.
pub(super) fn saved_rules(store: &Store, as_json: bool) -> Result<()> {
    let rules = parse_saved(store.setting(SAVED_RULES_KEY)?.as_deref());
    if as_json {
        println!("{}", crate::sanitize::json_text(&rules)?);
    } else if rules.is_empty() {
        println!("no tool is allowed with --always");
    } else {
        for r in &rules {
            println!("{}", crate::sanitize::sanitize_line(r));
        }
    }
    Ok(())
}

/// `tock approve --forget TOOL`: remove a saved `allow` rule.
pub(super) fn forget_rule(store: &Store, rule: &str) -> Result<()> {
    let mut rules = parse_saved(store.setting(SAVED_RULES_KEY)?.as_deref());
    let before = rules.len();
    rules.retain(|r| r != rule);
    if rules.len() == before {
        bail!(
            "no saved rule \"{}\" (tock approvals --rules lists them)",
            crate::sanitize::sanitize_line(rule)
        );
    }
    store.set_setting(SAVED_RULES_KEY, &serde_json::to_string(&rules)?)?;
    println!(
        "forgot {}; it asks again",
        crate::sanitize::sanitize_line(rule)
    );
    Ok(())
}

/// `tock approvals [--json]`: the tool calls waiting for an answer, oldest first.
pub(super) fn approvals(store: &Store, as_json: bool) -> Result<()> {
    let waiting = store.waiting_approvals()?;
    let line = |s: &str| crate::sanitize::sanitize_line(s).into_owned();
    if as_json {
        let arr: Vec<_> = waiting
            .iter()
            .map(|a| {
                json!({
                    "id": a.id,
                    "conversation_id": a.conversation_id,
                    "tool": a.tool,
                    "summary": line(&crate::call_text::approval_summary(&a.summary, &a.arguments, local)),
                    "details": machine_details(&a.summary),
                    "created_at": rfc3339(Some(a.created_at)),
                })
            })
            .collect();
        println!("{}", crate::sanitize::json_text(&arr)?);
    } else if waiting.is_empty() {
        println!("no tool call waits for approval");
    } else {
        println!(
            "{:>5}  {:>5}  {:<16} {:<20} SUMMARY",
            "ID", "CONV", "CREATED", "TOOL"
        );
        let mut cut = false;
        for a in &waiting {
            let summary = line(&crate::call_text::approval_summary(
                &a.summary,
                &a.arguments,
                local,
            ));
            let summary = if summary.chars().count() > 80 {
                cut = true;
                crate::sanitize::excerpt(&summary, 80)
            } else {
                summary
            };
            println!(
                "{:>5}  {:>5}  {:<16} {:<20} {summary}",
                a.id,
                a.conversation_id,
                local(a.created_at),
                line(&a.tool)
            );
        }
        if cut {
            println!("(tock approvals ID shows a call with every argument)");
        }
    }
    Ok(())
}

/// `tock approvals ID`: one call with every argument, to decide on it.
pub(super) fn approval(store: &Store, id: i64, as_json: bool) -> Result<()> {
    let a = store
        .approval(id)?
        .ok_or_else(|| anyhow::anyhow!("no approval {id}"))?;
    let line = |s: &str| crate::sanitize::sanitize_line(s).into_owned();
    if as_json {
        let arguments: serde_json::Value =
            serde_json::from_str(&a.arguments).unwrap_or_else(|_| a.arguments.clone().into());
        let v = json!({
            "id": a.id,
            "conversation_id": a.conversation_id,
            "tool": a.tool,
            "status": a.status.as_str(),
            "arguments": arguments,
            "created_at": rfc3339(Some(a.created_at)),
        });
        println!("{}", crate::sanitize::json_text(&v)?);
        return Ok(());
    }
    println!(
        "approval {} · {} · conversation {} · {} · {}",
        a.id,
        line(&a.tool),
        a.conversation_id,
        a.status.as_str(),
        local(a.created_at)
    );
    for l in crate::call_text::argument_lines(&a.arguments) {
        println!("  {l}");
    }
    Ok(())
}

/// An approval's stored summary for a program: the same JSON object, with
/// its times (`due_at`, `until_at`, the `next` occurrences: epoch ms as
/// stored) in RFC 3339 like every other time `--json` prints.
fn machine_details(summary: &str) -> serde_json::Value {
    let Ok(mut v) = serde_json::from_str::<serde_json::Value>(summary) else {
        return json!(summary);
    };
    if let Some(o) = v.as_object_mut() {
        for key in ["due_at", "until_at"] {
            if let Some(t) = o.get_mut(key)
                && let Some(ms) = t.as_i64()
            {
                *t = rfc3339(Some(ms));
            }
        }
        if let Some(next) = o.get_mut("next").and_then(|n| n.as_array_mut()) {
            for t in next {
                if let Some(ms) = t.as_i64() {
                    *t = rfc3339(Some(ms));
                }
            }
        }
    }
    v
}

/// `tock approve ID [--always]`: the conversation continues.
pub(super) fn approve(engine: &Engine, id: i64, always: bool) -> Result<()> {
    let a = engine.answer_approval_with(id, &crate::engine::tools::Answer::Approve { always })?;
    let tool = crate::sanitize::sanitize_line(&a.tool).into_owned();
    if !always {
        println!("approved {id} ({tool})");
    } else {
        use crate::engine::policy::Source;
        match engine.approval_policy().explain(&a.tool) {
            (crate::config::Decision::Allow, _) => {
                println!("approved {id}; {tool} is allowed from now on")
            }
            (d, Source::Config(rule)) => println!(
                "approved {id}; {tool} saved as allowed, but the config rule \"{}\" = \"{}\" decides it first",
                crate::sanitize::sanitize_line(&rule),
                d.as_str()
            ),
            (d, _) => println!("approved {id}; {tool} still decides {}", d.as_str()),
        }
    }
    Ok(())
}

/// `tock deny ID [--reason TEXT]`: the model is told.
pub(super) fn deny(engine: &Engine, id: i64, reason: Option<&str>) -> Result<()> {
    let a = engine.answer_approval_with(
        id,
        &crate::engine::tools::Answer::Deny {
            reason: reason.map(str::to_owned),
        },
    )?;
    println!("denied {id} ({})", crate::sanitize::sanitize_line(&a.tool));
    Ok(())
}
