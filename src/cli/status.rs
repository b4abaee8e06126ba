//! `tock status` and `tock models`: the dispatcher, the outbox's counts and
//! the provider, as the command line reports them.

use anyhow::{Result, anyhow};
use serde_json::json;

use super::list::item_json;
use super::{local, rfc3339};
use crate::config::ConfigSource;
use crate::engine::Engine;
use crate::store::{Store, Waiting};
use crate::when;

/// The model and provider of held defaults, which are no one's.
const UNKNOWN_HERE: &str = "unknown here: the config file cannot be read";

/// `tock status [--json]`.
pub(super) fn status(store: &Store, config: &ConfigSource, now: i64, as_json: bool) -> Result<()> {
    for line in report(store, config, now, as_json)? {
        println!("{line}");
    }
    Ok(())
}

/// What `tock status` prints, line by line (one line of JSON with
/// `as_json`); the TUI's `/status` shows the same. It checks whether the
/// servers can be reached, so it can take up to a second per server.
pub fn report(
    store: &Store,
    config: &ConfigSource,
    now: i64,
    as_json: bool,
) -> Result<Vec<String>> {
    let mut lines = Vec::new();
    macro_rules! say {
        ($($arg:tt)*) => {
            lines.push(format!($($arg)*))
        };
    }
    let lease = store.live_lease_holder(now)?;
    let counts = store.counts()?;
    // The next to go by itself: what waits for the user (a queue paused
    // by a stop, an approval) is not next.
    let gates = crate::engine::state::gates(store)?;
    let state_of = |i: &crate::store::OutboxItem| {
        let gate = i
            .conversation_id
            .and_then(|c| gates.get(&c).copied())
            .unwrap_or_default();
        crate::engine::item_state(i, now, gate)
    };
    let items = super::list::with_regenerations(store, store.list_items(false)?)?;
    let waiting = store.waiting(now)?;
    // When a row goes by itself: a row waiting out a back-off at its
    // retry, not "asap"; None: as soon as it can.
    let goes_at =
        |i: &crate::store::OutboxItem| i.next_attempt_at.filter(|t| *t > now).or(i.due_at);
    let next = items
        .iter()
        .filter(|i| i.status.as_str() == "pending")
        .filter(|i| {
            !matches!(
                state_of(i),
                crate::engine::ItemState::Paused | crate::engine::ItemState::AwaitingApproval
            )
        })
        // Nor what waits behind another row of its conversation: that one
        // goes first.
        .filter(|i| !waiting.get(&i.id).is_some_and(Waiting::is_behind))
        .min_by_key(|i| goes_at(i).unwrap_or(0));
    let model = config.resolve(None);
    let (model_name, provider) = match &model {
        Ok(m) => (m.name.clone(), format!("{:?}", m.kind).to_lowercase()),
        Err(e) => (String::new(), format!("error: {e}")),
    };
    // Where the default model's requests go, known also when its key is
    // missing (that is said on the model's line).
    let facts = config.facts(None);
    // The other models configured, by server: the default's is checked
    // with it, each other once.
    let mut servers = if config.is_held() {
        Default::default()
    } else {
        models_by_server(config, facts.as_ref().ok())
    };
    let reachable = match &facts {
        // The held defaults name no provider of the user's: the
        // environment's would be asked (api.openai.com) for nothing.
        _ if config.is_held() => UNKNOWN_HERE.to_string(),
        // Reachable, yet another entry on it without its key sends nothing.
        Ok(m) if !m.base_url.is_empty() => {
            let here = servers.remove(&m.base_url).unwrap_or_default();
            reachability(&m.base_url) + &keys_missing(config, &here)
        }
        Ok(_) => "offline model: no network needed".to_string(),
        Err(_) => "no provider".to_string(),
    };
    let others = other_servers(config, servers);
    // Held here by a config file this command cannot read, while a tock
    // that read it before dispatches: that one goes on sending.
    let held_here_only = config.is_held() && lease.is_some();
    let enabled = config.get().outbox.enabled || held_here_only;
    // What holds each conversation that has items waiting: the most telling
    // reason of its pending items (an approval or a busy reply first).
    let rank = |w: &Waiting| match w {
        Waiting::Approval { .. } => 0,
        Waiting::Behind { .. }
        | Waiting::BehindReply
        | Waiting::BehindCutReply
        | Waiting::BehindToolCall { .. }
        | Waiting::BehindCutToolCall { .. } => 1,
        Waiting::ReplyRetry { .. } => 2,
        Waiting::Backoff { .. } => 3,
        Waiting::QueuePaused { .. } => 1,
        Waiting::Ready => 4,
        Waiting::Due { .. } => 5,
        Waiting::Disabled => 6,
    };
    let mut blocked: std::collections::BTreeMap<i64, (i64, Waiting)> = Default::default();
    for i in &items {
        let (Some(c), Some(w)) = (i.conversation_id, waiting.get(&i.id)) else {
            continue;
        };
        match blocked.get(&c) {
            Some((_, cur)) if rank(cur) <= rank(w) => {}
            _ => {
                blocked.insert(c, (i.id, w.clone()));
            }
        }
    }
    let describe = |w: &Waiting| {
        if enabled {
            w.describe(now)
        } else {
            Waiting::Disabled.describe(now)
        }
    };
    // A reply being written now, or left half-written by a tock that died
    // (the next start asks for it again).
    let replies = store.streaming_replies()?;
    // Tool calls waiting for the user: they hold their conversations.
    let approvals = store.waiting_approvals()?;
    let live = lease.is_some();
    // Tool calls running now: only the live dispatcher's run (a row of
    // another owner was left by a tock that died, and the next start
    // settles it).
    let calls: Vec<crate::store::ToolRun> = store
        .tool_runs()?
        .into_iter()
        .filter(|r| lease.as_ref().is_some_and(|l| l.owner == r.owner))
        .collect();
    let series = store.list_series(false)?;
    let active = series
        .iter()
        .filter(|s| s.status == crate::store::SeriesStatus::Active)
        .count();
    let next_series = series
        .iter()
        .filter(|s| s.status == crate::store::SeriesStatus::Active)
        .filter_map(|s| s.next_due_at)
        .min();
    if as_json {
        let b: Vec<_> = blocked
            .iter()
            .map(|(c, (id, w))| json!({"conversation_id": c, "item": id, "waiting": describe(w)}))
            .collect();
        let c: Vec<_> = counts
            .iter()
            .map(|(k, s, n)| json!({"kind": k, "status": s, "count": n}))
            .collect();
        say!(
            "{}",
            crate::sanitize::json_text(&json!({
                "dispatcher": lease.as_ref().map(|l| json!({"pid": l.pid, "lease_expires_at": rfc3339(Some(l.expires_at))})),
                "outbox_enabled": enabled,
                "counts": c,
                "next": next.as_ref().map(|i| item_json(i, &state_of(i), waiting.get(&i.id), now)),
                "conversations": b,
                "approvals_waiting": approvals.iter().map(|a| json!({
                    "id": a.id,
                    "conversation_id": a.conversation_id,
                    "tool": a.tool,
                })).collect::<Vec<_>>(),
                "replies_streaming": replies.iter().map(|r| json!({
                    "conversation_id": r.conversation_id,
                    "message_id": r.message_id,
                    "characters": r.characters,
                    "started_at": rfc3339(Some(r.started_at)),
                    "live": live,
                })).collect::<Vec<_>>(),
                "tool_calls_running": calls.iter().map(|r| json!({
                    "conversation_id": r.conversation_id,
                    "message_id": r.message_id,
                    "call_id": r.call_id,
                    "tool": r.tool,
                    "started_at": rfc3339(Some(r.started_at)),
                })).collect::<Vec<_>>(),
                "series": {"active": active, "paused": series.len() - active, "next_due_at": rfc3339(next_series)},
                "model": model_name,
                "provider": provider,
                "reachability": reachable,
                "other_servers": others.iter().map(|(names, reach)| json!({
                    "models": names,
                    "reachability": reach,
                })).collect::<Vec<_>>(),
            }))?
        );
        return Ok(lines);
    }
    match &lease {
        Some(l) => say!(
            "dispatcher: pid {} (lease until {})",
            l.pid,
            local(l.expires_at)
        ),
        // A tock running on a config it cannot read holds no lease: "start
        // tock" told a user whose tock was open to start it.
        None if !enabled => say!(
            "dispatcher: none while the outbox is held (a tock or tock daemon already running sends once the config is fixed)"
        ),
        None => {
            say!("dispatcher: none running — start `tock` or `tock daemon` to send due items")
        }
    }
    if !enabled {
        say!("outbox: {}", held_by_config(config));
    } else if let Some(l) = lease.as_ref().filter(|_| held_here_only) {
        say!("outbox: {}", held_here(l.pid));
    }
    let mut by_status: std::collections::BTreeMap<String, i64> = Default::default();
    for (_, s, n) in &counts {
        *by_status.entry(s.clone()).or_default() += n;
    }
    let line: Vec<String> = by_status.iter().map(|(s, n)| format!("{s} {n}")).collect();
    say!(
        "items: {}",
        if line.is_empty() {
            "none".into()
        } else {
            line.join(", ")
        }
    );
    // The next to go by itself: an item, or a series' next occurrence if
    // that comes first.
    let first_series = series
        .iter()
        .filter(|s| s.status == crate::store::SeriesStatus::Active)
        .filter_map(|s| s.next_due_at.map(|d| (d, s)))
        .min_by_key(|(d, _)| *d);
    let item_at = next.as_ref().map(|n| n.due_at.unwrap_or(now));
    if let Some((d, s)) = first_series
        && item_at.is_none_or(|at| d < at)
    {
        say!(
            "next: recurring #{} {} ({}): {}",
            s.id,
            local(d),
            when::countdown(d, now),
            crate::sanitize::excerpt(&s.text, 60)
        );
    } else if let Some(n) = next {
        let due = goes_at(n)
            .map(|d| format!("{} ({})", local(d), when::countdown(d, now)))
            .unwrap_or_else(|| "asap".into());
        say!("next: #{} {due}: {}", n.id, super::list::what(n, 60));
    }
    // The most telling first; a long tail is counted, not listed (`tock
    // list` has every item): 210 lines of "ready" buried the rest.
    let mut shown: Vec<_> = blocked.iter().collect();
    shown.sort_by_key(|(c, (_, w))| (rank(w), **c));
    for (c, (id, w)) in shown.iter().take(BLOCKED_SHOWN) {
        let title = title_of(store, **c)?;
        say!(
            "conversation #{c} “{}”: {} (item #{id})",
            crate::sanitize::sanitize_line(&title),
            describe(w)
        );
    }
    if shown.len() > BLOCKED_SHOWN {
        say!(
            "… and {} more conversations with items waiting (tock list shows every item)",
            shown.len() - BLOCKED_SHOWN
        );
    }
    if !approvals.is_empty() {
        let mut convs: Vec<i64> = approvals.iter().map(|a| a.conversation_id).collect();
        convs.sort_unstable();
        convs.dedup();
        let list: Vec<String> = convs.iter().map(|c| format!("#{c}")).collect();
        say!(
            "approvals: {} tool call{} waiting for your answer, holding conversation{} {} (tock approvals)",
            approvals.len(),
            if approvals.len() == 1 { "" } else { "s" },
            if convs.len() == 1 { "" } else { "s" },
            list.join(", ")
        );
    }
    for line in reply_lines(store, &replies, live)? {
        say!("{line}");
    }
    // Sent, and no word of the answer yet (no reply row until the server
    // answers): what `tock stop` would stop. It went unnamed.
    for i in items
        .iter()
        .filter(|i| i.status == crate::store::Status::Sending)
    {
        let Some(c) = i.conversation_id else { continue };
        if replies.iter().any(|r| r.conversation_id == c) {
            continue;
        }
        let title = title_of(store, c)?;
        say!(
            "conversation #{c} “{}”: item #{} was sent {}, and its server has not answered yet (`tock stop {c}` stops it)",
            crate::sanitize::sanitize_line(&title),
            i.id,
            when::relative(i.updated_at, now)
        );
    }
    for line in tool_call_lines(store, &calls, now)? {
        say!("{line}");
    }
    if !series.is_empty() {
        let next = next_series
            .map(|d| format!("; next {} ({})", local(d), when::countdown(d, now)))
            .unwrap_or_default();
        say!(
            "recurring: {active} active, {} paused{next}",
            series.len() - active
        );
    }
    match &model {
        // The held defaults' offline model is no model of the user's.
        Ok(_) if config.is_held() => {
            say!("model: {UNKNOWN_HERE}")
        }
        Ok(_) if provider == "echo" => {
            say!("model: {model_name} ({provider}) — offline");
            // Where a newcomer goes from here.
            say!(
                "to talk to a real model: {}",
                super::how_to_configure(config)
            );
        }
        Ok(_) => say!("model: {model_name} ({provider})"),
        Err(e) => say!("model: {}", crate::sanitize::sanitize_line(e)),
    }
    say!("provider: {reachable}");
    for (names, reach) in &others {
        say!(
            "also: {} — {reach}",
            names
                .iter()
                .map(|n| crate::sanitize::sanitize_line(n).into_owned())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(lines)
}

/// The models of the config but the default, by server (models with no
/// server, the offline one, left out).
fn models_by_server(
    config: &ConfigSource,
    default: Option<&crate::config::ModelFacts>,
) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut by_server: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for name in config.get().models.keys() {
        if default.is_some_and(|d| &d.name == name) {
            continue;
        }
        let Ok(m) = config.facts(Some(name)) else {
            continue;
        };
        if !m.base_url.is_empty() {
            by_server.entry(m.base_url).or_default().push(name.clone());
        }
    }
    by_server
}

/// The servers of the other models (`by_server`, the default model's taken
/// out): a conversation set to one of them goes nowhere while its server
/// is down. The servers are tried side by side.
fn other_servers(
    config: &ConfigSource,
    by_server: std::collections::BTreeMap<String, Vec<String>>,
) -> Vec<(Vec<String>, String)> {
    std::thread::scope(|scope| {
        let checks: Vec<_> = by_server
            .into_iter()
            .map(|(url, names)| (names, scope.spawn(move || reachability(&url))))
            .collect();
        checks
            .into_iter()
            .map(|(names, check)| {
                let mut reach = check
                    .join()
                    .unwrap_or_else(|_| "could not be checked".to_string());
                // Reachable, yet an entry without its key sends nothing.
                reach.push_str(&keys_missing(config, &names));
                (names, reach)
            })
            .collect()
    })
}

/// "; NAME: WHY" for each of `names` whose key variable is not set.
fn keys_missing(config: &ConfigSource, names: &[String]) -> String {
    names
        .iter()
        .filter_map(|name| {
            config
                .key_env_missing(name)
                .map(|why| format!("; {name}: {why}"))
        })
        .collect()
}

/// One line per reply stored as streaming: its message has left the
/// outbox, so no item shows it, yet its answer is still on its way — being
/// written by the live dispatcher, or cut off by one that died.
pub(super) fn reply_lines(
    store: &Store,
    replies: &[crate::store::StreamingReply],
    live: bool,
) -> Result<Vec<String>> {
    let mut lines = Vec::with_capacity(replies.len());
    for r in replies {
        let title = title_of(store, r.conversation_id)?;
        let what = if live {
            format!(
                "a reply is streaming since {} ({} characters so far; `tock stop {}` stops it)",
                local(r.started_at),
                r.characters,
                r.conversation_id
            )
        } else {
            "a reply was cut off when its tock stopped; the next `tock` or `tock daemon` asks for it again"
                .to_string()
        };
        lines.push(format!(
            "conversation #{} “{}”: {what}",
            r.conversation_id,
            crate::sanitize::sanitize_line(&title)
        ));
    }
    Ok(lines)
}

/// One line per tool call running now: `running tool files__read (12s)`.
pub(super) fn tool_call_lines(
    store: &Store,
    calls: &[crate::store::ToolRun],
    now: i64,
) -> Result<Vec<String>> {
    let mut lines = Vec::with_capacity(calls.len());
    for r in calls {
        let title = title_of(store, r.conversation_id)?;
        let secs = u128::try_from(now.saturating_sub(r.started_at).max(0) / 1000).unwrap_or(0);
        lines.push(format!(
            "conversation #{} “{}”: running tool {} ({}; `tock stop {}` stops it)",
            r.conversation_id,
            crate::sanitize::sanitize_line(&title),
            crate::sanitize::sanitize_line(&r.tool),
            crate::when::compact_span(secs),
            r.conversation_id
        ));
    }
    Ok(lines)
}

/// Can we open a TCP connection to the provider? (No request is sent, no key used.)
fn reachability(base_url: &str) -> String {
    use std::net::ToSocketAddrs;
    let Ok(url) = reqwest::Url::parse(base_url) else {
        return format!("bad base_url {}", crate::sanitize::sanitize_line(base_url));
    };
    let host = url.host_str().unwrap_or_default().to_string();
    let Some(port) = url.port_or_known_default() else {
        return format!("no port in {}", url.as_str());
    };
    let addrs = match (host.as_str(), port).to_socket_addrs() {
        Ok(a) => a.collect::<Vec<_>>(),
        Err(e) => return format!("{host}: cannot resolve ({e})"),
    };
    let start = std::time::Instant::now();
    for a in &addrs {
        if std::net::TcpStream::connect_timeout(a, std::time::Duration::from_secs(2)).is_ok() {
            return format!(
                "{host}:{port} reachable ({} ms)",
                start.elapsed().as_millis()
            );
        }
    }
    format!("{host}:{port} NOT reachable")
}

/// `tock models [--json]`: the server's list, fetched now.
pub(super) fn models(engine: &Engine, model: Option<&str>, as_json: bool) -> Result<()> {
    let resolved = engine.config().resolve(model).map_err(|e| anyhow!(e))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let list = rt.block_on(engine.fetch_models(model))?;
    if as_json {
        let arr: Vec<_> = list
            .iter()
            .map(|m| json!({"id": m.id, "display_name": m.display_name}))
            .collect();
        println!(
            "{}",
            crate::sanitize::json_text(&json!({
                "provider": resolved.kind.label(),
                "base_url": resolved.base_url,
                "models": arr,
            }))?
        );
        return Ok(());
    }
    if list.is_empty() {
        eprintln!("{} lists no models", resolved.kind.label());
    }
    for m in list.iter() {
        let id = crate::sanitize::sanitize_line(&m.id);
        match &m.display_name {
            Some(d) => println!("{id}  ({})", crate::sanitize::sanitize_line(d)),
            None => println!("{id}"),
        }
    }
    Ok(())
}

/// A conversation's title as shown, or nothing for one that is gone.
fn title_of(store: &Store, conversation_id: i64) -> Result<String> {
    Ok(store
        .conversation(conversation_id)?
        .map(|c| c.display_title())
        .unwrap_or_default())
}

/// How many conversations' waiting items `tock status` names.
const BLOCKED_SHOWN: usize = 20;

/// What goes on when the config file cannot be read here while a tock that
/// read it before dispatches (it keeps those settings).
pub(super) fn held_here(pid: i64) -> String {
    format!(
        "the config file cannot be read here; the tock running as pid {pid} goes on with the settings it read before (a tock started now would send nothing until it is fixed)"
    )
}

/// Why nothing is sent when the config holds dispatch: the outbox switched
/// off, or a config file that cannot be read (which holds it until fixed).
pub(super) fn held_by_config(config: &ConfigSource) -> String {
    match config.error() {
        Some(_) => {
            "nothing is sent until the config file is fixed (it cannot be read; items are kept)"
                .to_string()
        }
        None => "disabled in the config (items are kept, nothing is sent)".to_string(),
    }
}
