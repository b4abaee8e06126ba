//! The scriptable front end: `tock send|list|cancel|…` on the same database and rules.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use clap::{Parser, Subcommand};
use serde_json::json;

use crate::config::ConfigSource;
use crate::engine::{Clock, Engine, ItemState, Options, SeriesView, SystemClock};
use crate::store::{Kind, NewItem, OutboxItem, Store, Waiting};
use crate::when::{self, Mode};

#[derive(Parser, Debug)]
#[command(
    name = "tock",
    version,
    about = "A terminal chat client for LLMs: messages are never lost and are sent when you said"
)]
pub struct Cli {
    /// Database file [default: the platform data dir]
    #[arg(long, global = true, env = "TOCK_DB")]
    pub db: Option<PathBuf>,
    /// Config file [default: the platform config dir]
    #[arg(long, global = true, env = "TOCK_CONFIG")]
    pub config: Option<PathBuf>,
    /// Model to use (a name from the config, or a model id)
    #[arg(long, global = true, env = "TOCK_MODEL")]
    pub model: Option<String>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Queue or schedule a message; prints the new item's id
    Send {
        /// Conversation: exact title, #ID, or an id that is not also a title
        #[arg(long, conflicts_with_all = ["new", "conv_id"])]
        conv: Option<String>,
        /// Conversation by id only
        #[arg(long, conflicts_with = "new")]
        conv_id: Option<i64>,
        /// Read the message from this file (UTF-8 text)
        #[arg(long, value_name = "PATH", conflicts_with = "text")]
        file: Option<PathBuf>,
        /// Start a new conversation with this title
        #[arg(long)]
        new: Option<String>,
        /// Send after this long, e.g. 10m, 1h30m
        #[arg(long = "in", value_name = "DUR", conflicts_with = "at")]
        in_: Option<String>,
        /// Send at this time, e.g. 9am, "tomorrow 14:30", "2026-12-01 09:00"
        #[arg(long, conflicts_with = "every")]
        at: Option<String>,
        /// Repeat: "every weekday 9am", "every 2h", "cron '0 9 * * 1-5'"; prints the series id
        #[arg(long, value_name = "EXPR", conflicts_with = "in_")]
        every: Option<String>,
        /// With --every: the last day or instant, e.g. "dec 24", 2026-12-31
        #[arg(long, value_name = "DATE", requires = "every")]
        until: Option<String>,
        /// The message (several words are joined); `-` reads it from stdin
        #[arg(required_unless_present = "file", num_args = 1..)]
        text: Vec<String>,
    },
    /// List outbox items (pending, scheduled, failed, expired) and recurring series
    List {
        /// Include finished (sent, canceled) items and ended series
        #[arg(long)]
        all: bool,
        #[arg(long)]
        json: bool,
    },
    /// Cancel an item, or end a recurring series
    Cancel { id: i64 },
    /// Pause a recurring series
    Pause { id: i64 },
    /// Resume a paused series at its next occurrence
    Resume { id: i64 },
    /// Give an item a new time, or a series a new rule
    Reschedule {
        id: i64,
        #[arg(required = true, num_args = 1..)]
        time: Vec<String>,
    },
    /// Change an item's or a series' text
    Edit {
        id: i64,
        #[arg(required = true, num_args = 1..)]
        text: Vec<String>,
    },
    /// Retry a failed or expired item, or generate again the cut reply of a sent one
    Retry { id: i64 },
    /// Generate the conversation's last reply again
    Regenerate {
        /// Conversation id or exact title
        conv: String,
    },
    /// List conversations
    Conversations {
        #[arg(long)]
        json: bool,
    },
    /// Print a conversation's history
    Show {
        /// Conversation: exact title, #ID, or an id that is not also a title
        conv: String,
        #[arg(long)]
        json: bool,
    },
    /// Search the text of every conversation; newest matches first
    Search {
        /// Words to find (all must occur; the last also as a prefix); "quotes" for a phrase
        #[arg(required = true, num_args = 1..)]
        text: Vec<String>,
        /// At most this many matches
        #[arg(long, default_value_t = 20)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
    /// Start a new conversation with a copy of another's history; prints its id
    Fork {
        /// Conversation: exact title, #ID, or an id that is not also a title
        conv: String,
        /// Copy up to and including this message [default: the last one shown]
        #[arg(long, value_name = "MESSAGE_ID")]
        at: Option<i64>,
        #[arg(long)]
        json: bool,
    },
    /// List the models the provider's server offers (of --model, or the default model)
    Models {
        #[arg(long)]
        json: bool,
    },
    /// List tool calls waiting for your approval
    Approvals {
        #[arg(long)]
        json: bool,
        /// List the tools allowed with `approve --always` instead
        #[arg(long)]
        rules: bool,
    },
    /// Approve a waiting tool call; the conversation continues
    Approve {
        #[arg(required_unless_present = "forget")]
        id: Option<i64>,
        /// Also allow this tool from now on (saved in the database, not the config file)
        #[arg(long, conflicts_with = "forget")]
        always: bool,
        /// Remove a rule saved with --always (asks again from now on)
        #[arg(long, value_name = "TOOL", conflicts_with = "id")]
        forget: Option<String>,
    },
    /// MCP servers with their state and tools (starts the servers to list them)
    Tools {
        #[arg(long)]
        json: bool,
    },
    /// Decline a waiting tool call; the model is told
    Deny {
        id: i64,
        /// Why, passed to the model with the refusal
        #[arg(long, value_name = "TEXT")]
        reason: Option<String>,
    },
    /// Run the engine headless (no UI)
    Daemon,
    /// Delete finished outbox rows
    Prune {
        #[arg(long, value_name = "DUR", default_value = "30d")]
        older_than: String,
    },
    /// Dispatcher, counts by state, next due item, provider
    Status {
        #[arg(long)]
        json: bool,
    },
}

impl Command {
    /// Commands that never write to the database.
    pub fn only_reads(&self) -> bool {
        matches!(
            self,
            Command::List { .. }
                | Command::Show { .. }
                | Command::Conversations { .. }
                | Command::Status { .. }
                | Command::Approvals { .. }
                | Command::Search { .. }
                | Command::Tools { .. }
                | Command::Models { .. }
        )
    }
}

fn rfc3339(ms: Option<i64>) -> serde_json::Value {
    ms.and_then(chrono::DateTime::from_timestamp_millis)
        .map(|d| json!(d.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)))
        .unwrap_or(serde_json::Value::Null)
}

fn local(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|d| {
            d.with_timezone(&chrono::Local)
                .format("%a %d %b %H:%M")
                .to_string()
        })
        .unwrap_or_default()
}

/// An item as `list --json` prints it: the documented fields, plus `state`
/// (what every view shows), `next_attempt_at` (back-off) and `waiting` (why a
/// pending item has not gone out yet, one line; null otherwise).
pub fn item_json(
    i: &OutboxItem,
    state: &ItemState,
    waiting: Option<&Waiting>,
    now: i64,
) -> serde_json::Value {
    let mut v = json!({
        "id": i.id,
        "conversation_id": i.conversation_id,
        "kind": i.kind.as_str(),
        "text": i.text,
        "status": i.status.as_str(),
        "state": state.label(),
        "due_at": rfc3339(i.due_at),
        "attempts": i.attempts,
        "last_error": i.last_error,
        "created_at": rfc3339(Some(i.created_at)),
        "sent_at": rfc3339(i.sent_at),
        "next_attempt_at": rfc3339(i.next_attempt_at),
        "waiting": waiting.map(|w| w.describe(now)),
    });
    // Only occurrences of a recurring series carry the extra field.
    if let (Some(series), Some(obj)) = (i.series_id, v.as_object_mut()) {
        obj.insert("series_id".into(), json!(series));
    }
    v
}

/// A recurring series in `list --json`: the item fields plus the series'.
pub fn series_json(v: &SeriesView) -> serde_json::Value {
    let s = &v.series;
    json!({
        "id": s.id,
        "conversation_id": s.conversation_id,
        "kind": "recurring",
        "text": s.text,
        "status": s.status.as_str(),
        "state": s.status.as_str(),
        "due_at": rfc3339(s.next_due_at),
        "attempts": 0,
        "last_error": null,
        "created_at": rfc3339(Some(s.created_at)),
        "sent_at": null,
        "next_attempt_at": null,
        "waiting": null,
        "rule": v.description,
        "expression": s.rule,
        "next_due_at": rfc3339(s.next_due_at),
        "upcoming": v.upcoming.iter().map(|t| rfc3339(Some(*t))).collect::<Vec<_>>(),
        "occurrences": s.occurrences,
        "skipped": s.skipped,
        "remaining": s.remaining,
        "until_at": rfc3339(s.until_at),
        "occurrence_kind": s.kind.as_str(),
    })
}

/// Largest message text `send` takes from stdin or a file.
const MAX_TEXT_BYTES: u64 = 20 * 1024 * 1024;

/// How far ahead `send` and `reschedule` may schedule.
const MAX_AHEAD_DAYS: i64 = 3653;

/// A time expression from the command line, with the CLI's extra rules:
/// not beyond ten years, and a clear word about years and months.
fn parse_due(expr: &str, mode: Mode) -> Result<chrono::DateTime<chrono::Utc>> {
    let now = now_local();
    let due = when::parse_time(expr, &now, mode).map_err(|e| {
        if says_years_or_months(expr) {
            anyhow!(
                "years and months are not durations (their length varies); give a date instead, e.g. --at \"2030-01-15 09:00\""
            )
        } else {
            e.into()
        }
    })?;
    when::check_not_too_far(
        due,
        now.with_timezone(&chrono::Utc),
        chrono::Duration::days(MAX_AHEAD_DAYS),
    )?;
    Ok(due)
}

/// `1000y`, `in 2 years`, `3 months`, `6mo`.
fn says_years_or_months(expr: &str) -> bool {
    let e = expr.trim().to_ascii_lowercase();
    let e = e.strip_prefix("in ").unwrap_or(&e).trim();
    let digits = e
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(e.len());
    if digits == 0 {
        return false;
    }
    let unit = e[digits..].trim();
    ["y", "yr", "yrs", "year", "years", "mo", "month", "months"].contains(&unit)
}

/// The message text of `send`: the words, or stdin for `-`, or a file.
fn message_text(text: &[String], file: Option<&std::path::Path>) -> Result<String> {
    let bytes = match (file, text) {
        (Some(p), _) => {
            crate::files::read_regular(p, MAX_TEXT_BYTES).map_err(|e| anyhow!("{e}"))?
        }
        (None, [dash]) if dash == "-" => {
            use std::io::Read;
            let mut buf = Vec::new();
            std::io::stdin()
                .lock()
                .take(MAX_TEXT_BYTES + 1)
                .read_to_end(&mut buf)
                .context("reading the message from stdin")?;
            if buf.len() as u64 > MAX_TEXT_BYTES {
                bail!(
                    "the message on stdin is over {} MB",
                    MAX_TEXT_BYTES / 1024 / 1024
                );
            }
            buf
        }
        (None, words) => return Ok(words.join(" ")),
    };
    String::from_utf8(bytes).map_err(|_| anyhow!("the message is not UTF-8 text"))
}

fn now_local() -> chrono::DateTime<chrono::Local> {
    chrono::Local::now()
}

/// Run one non-interactive subcommand.
pub fn run(cli: &Cli, store: &Store, config: Arc<ConfigSource>) -> Result<()> {
    let clock = SystemClock;
    let now = clock.now_ms();
    let Some(cmd) = &cli.command else {
        bail!("no command")
    };
    // CLI writes go through the same engine API as the TUI (no scheduler is started here).
    let engine = Engine::new(
        store.clone(),
        config.clone(),
        Arc::new(SystemClock),
        Options::default(),
    );
    match cmd {
        Command::Send {
            conv,
            conv_id,
            file,
            new,
            in_,
            at,
            every,
            until,
            text,
        } => {
            let text = message_text(text, file.as_deref())?;
            if text.trim().is_empty() {
                bail!("the message is empty");
            }
            let schedule = match every {
                Some(e) => {
                    let expr = match until {
                        Some(u) => format!("{e} until {u}"),
                        None => e.clone(),
                    };
                    Some(crate::recur::parse(&expr, &now_local())?)
                }
                None => None,
            };
            let due = match (in_, at) {
                (Some(d), _) => Some(parse_due(d, Mode::Later)?.timestamp_millis()),
                (_, Some(t)) => Some(parse_due(t, Mode::At)?.timestamp_millis()),
                _ => None,
            };
            let conv_id = match (conv, conv_id, new) {
                (Some(key), _, _) => {
                    store
                        .find_conversation(key)?
                        .ok_or_else(|| anyhow!("no conversation \"{key}\""))?
                        .id
                }
                (None, Some(id), _) => {
                    store
                        .conversation(*id)?
                        .ok_or_else(|| anyhow!("no conversation #{id}"))?
                        .id
                }
                (None, None, Some(title)) => engine.create_conversation(Some(title), "cli")?,
                (None, None, None) => engine.create_conversation(None, "cli")?,
            };
            if let Some(schedule) = schedule {
                let mut series = engine.new_series(conv_id, Kind::Message, &text, &schedule)?;
                series.model_override = cli.model.clone();
                let id = engine.submit_series(&series)?;
                println!("{id}");
                return Ok(());
            }
            let mut item = NewItem::message(conv_id, text, due);
            item.model_override = cli.model.clone();
            let id = engine.submit(item)?;
            println!("{id}");
        }
        Command::List { all, json } => {
            let items = store.list_items(*all)?;
            let mut waiting = store.waiting(now)?;
            if !config.get().outbox.enabled {
                waiting.values_mut().for_each(|w| *w = Waiting::Disabled);
            }
            let series = engine.list_series(*all)?;
            let gates = crate::engine::state::gates(store)?;
            let state_of = |i: &OutboxItem| {
                let gate = i
                    .conversation_id
                    .and_then(|c| gates.get(&c).copied())
                    .unwrap_or_default();
                crate::engine::item_state(i, now, gate)
            };
            if *json {
                // One list in due order; series by their next occurrence.
                let mut rows: Vec<(i64, serde_json::Value)> = items
                    .iter()
                    .map(|i| {
                        (
                            i.due_at.unwrap_or(i.created_at),
                            item_json(i, &state_of(i), waiting.get(&i.id), now),
                        )
                    })
                    .chain(series.iter().map(|v| {
                        (
                            v.series.next_due_at.unwrap_or(v.series.updated_at),
                            series_json(v),
                        )
                    }))
                    .collect();
                rows.sort_by_key(|(t, _)| *t);
                let arr: Vec<_> = rows.into_iter().map(|(_, v)| v).collect();
                println!("{}", serde_json::to_string_pretty(&arr)?);
            } else if items.is_empty() && series.is_empty() {
                println!(
                    "nothing scheduled or pending (tock send --in 10m TEXT schedules a message)"
                );
            } else {
                println!(
                    "{:>5}  {:<28} {:>5}  {:<8} {:<9} {:>3}  TEXT",
                    "ID", "DUE", "CONV", "KIND", "STATE", "TRY"
                );
                for i in &items {
                    let due = match i.due_at {
                        Some(d) => format!("{} ({})", local(d), when::relative(d, now)),
                        None => "asap".into(),
                    };
                    let text: String = crate::sanitize::sanitize_line(&i.text)
                        .chars()
                        .take(50)
                        .collect();
                    let conv = i
                        .conversation_id
                        .map(|c| c.to_string())
                        .unwrap_or_else(|| "-".into());
                    let mut err = i
                        .last_error
                        .as_deref()
                        .map(|e| format!("  [{}]", crate::sanitize::sanitize_line(e)))
                        .unwrap_or_default();
                    // The DUE column already says when a scheduled item goes.
                    if let Some(w) = waiting
                        .get(&i.id)
                        .filter(|w| !matches!(w, Waiting::Ready | Waiting::Due { .. }))
                    {
                        err.push_str(&format!("  ({})", w.describe(now)));
                    }
                    println!(
                        "{:>5}  {:<28} {:>5}  {:<8} {:<9} {:>3}  {text}{err}",
                        i.id,
                        due,
                        conv,
                        i.kind.as_str(),
                        state_of(i).label(),
                        i.attempts
                    );
                }
                for v in &series {
                    let s = &v.series;
                    let due = match s.next_due_at {
                        Some(d) if s.status == crate::store::SeriesStatus::Active => {
                            format!("{} ({})", local(d), when::relative(d, now))
                        }
                        _ => "-".into(),
                    };
                    let text: String = crate::sanitize::sanitize_line(&s.text)
                        .chars()
                        .take(50)
                        .collect();
                    let conv = s
                        .conversation_id
                        .map(|c| c.to_string())
                        .unwrap_or_else(|| "-".into());
                    println!(
                        "{:>5}  {:<28} {:>5}  {:<8} {:<9} {:>3}  {text}  [{}]",
                        s.id,
                        due,
                        conv,
                        "recurring",
                        s.status.as_str(),
                        s.occurrences,
                        crate::sanitize::sanitize_line(&v.description)
                    );
                }
            }
        }
        Command::Cancel { id } => {
            if store.item(*id)?.is_none() && store.series(*id)?.is_some() {
                engine.end_series(*id)?;
                println!("ended series {id}");
            } else {
                engine.cancel(*id)?;
                println!("canceled {id}");
            }
        }
        Command::Pause { id } => {
            require_series(store, *id)?;
            engine.pause_series(*id)?;
            println!("paused series {id}");
        }
        Command::Resume { id } => {
            require_series(store, *id)?;
            engine.resume_series(*id)?;
            let next = store.series(*id)?.and_then(|s| s.next_due_at);
            match next {
                Some(t) => println!("resumed series {id}; next {}", local(t)),
                None => println!("resumed series {id}"),
            }
        }
        Command::Reschedule { id, time } if store.series(*id)?.is_some() => {
            engine.edit_series_rule(*id, &time.join(" "))?;
            let v = engine
                .series_view(*id)?
                .ok_or_else(|| anyhow!("no series {id}"))?;
            println!("series {id} now {}", v.description);
        }
        Command::Edit { id, text } if store.series(*id)?.is_some() => {
            engine.edit_series_text(*id, &text.join(" "))?;
            println!("edited series {id}");
        }
        Command::Reschedule { id, time } => {
            let expr = time.join(" ");
            let due = parse_due(&expr, Mode::At)?;
            engine.reschedule(*id, due.timestamp_millis())?;
            println!("{id} now due {}", when::preview(due, &now_local()));
        }
        Command::Edit { id, text } => {
            engine.edit(*id, &text.join(" "))?;
            println!("edited {id}");
        }
        Command::Approvals { json, rules: true } => crate::cli_tools::saved_rules(store, *json)?,
        Command::Approvals { json, .. } => approvals(store, *json)?,
        Command::Tools { json } => crate::cli_tools::tools(&engine, *json)?,
        Command::Approve {
            forget: Some(rule), ..
        } => crate::cli_tools::forget_rule(store, rule)?,
        Command::Approve { id: None, .. } => bail!("give the approval's id"),
        Command::Approve {
            id: Some(id),
            always,
            ..
        } => {
            let a = engine.answer_approval_with(
                *id,
                &crate::engine::tools::Answer::Approve { always: *always },
            )?;
            let tool = crate::sanitize::sanitize_line(&a.tool).into_owned();
            if !*always {
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
        }
        Command::Deny { id, reason } => {
            let a = engine.answer_approval_with(
                *id,
                &crate::engine::tools::Answer::Deny {
                    reason: reason.clone(),
                },
            )?;
            println!("denied {id} ({})", crate::sanitize::sanitize_line(&a.tool));
        }
        Command::Retry { id } => {
            engine.retry(*id)?;
            println!("{id} will be retried");
        }
        Command::Regenerate { conv } => {
            let c = store
                .find_conversation(conv)?
                .ok_or_else(|| anyhow!("no conversation \"{conv}\""))?;
            let id = engine.regenerate(c.id)?;
            println!("{id}");
        }
        Command::Conversations { json } => {
            let convs = store.conversations()?;
            if *json {
                let arr: Vec<_> = convs
                    .iter()
                    .map(|c| json!({"id": c.id, "title": c.title, "updated_at": rfc3339(Some(c.updated_at))}))
                    .collect();
                println!("{}", serde_json::to_string_pretty(&arr)?);
            } else {
                for c in convs {
                    println!(
                        "{:>5}  {}  {}",
                        c.id,
                        local(c.updated_at),
                        c.display_title()
                    );
                }
            }
        }
        Command::Show { conv, json } => {
            let c = store
                .find_conversation(conv)?
                .ok_or_else(|| anyhow!("no conversation \"{conv}\""))?;
            let msgs = store.messages(c.id)?;
            let collapsed = crate::store::collapse_attempts(&msgs);
            let usage = engine.usage(c.id)?;
            let by_message: std::collections::HashMap<i64, &crate::engine::ReplyUsage> =
                usage.replies.iter().map(|u| (u.message_id, u)).collect();
            if *json {
                // Every message is listed (scripts audit them); `hidden` marks
                // an earlier attempt at a reply that the views collapse.
                let arr: Vec<_> = msgs
                    .iter()
                    .map(|m| {
                        let usage = by_message.get(&m.id).map(|u| usage_json(&u.usage, u.cost));
                        json!({"id": m.id, "role": m.role.as_str(), "content": m.content,
                               "status": m.status.as_str(), "created_at": rfc3339(Some(m.created_at)),
                               "error": m.error, "hidden": collapsed.is_hidden(m.id),
                               "attachments": crate::files::attachment_infos(m.parts_json.as_deref()),
                               "usage": usage})
                    })
                    .collect();
                let mut total = usage_json(&usage.total, usage.cost);
                total["context_used"] = json!(usage.context_used);
                total["context_tokens"] = json!(usage.context_tokens);
                println!(
                    "{}",
                    serde_json::to_string_pretty(
                        &json!({"id": c.id, "title": c.title, "messages": arr, "usage": total})
                    )?
                );
            } else {
                println!("# {}\n", c.display_title());
                for m in msgs.iter().filter(|m| !collapsed.is_hidden(m.id)) {
                    let mut status = if m.status == crate::store::MessageStatus::Complete {
                        String::new()
                    } else {
                        format!(" ({})", m.status.as_str())
                    };
                    if let Some(n) = collapsed.earlier.get(&m.id) {
                        status.push_str(&format!(" (after {n} earlier interrupted attempts)"));
                    }
                    println!("## {}{status} — {}\n", m.role.as_str(), local(m.created_at));
                    println!("{}\n", crate::sanitize::sanitize(&m.content));
                    for a in crate::files::attachment_infos(m.parts_json.as_deref()) {
                        println!(
                            "[attached: {} ({}, {} bytes)]",
                            crate::sanitize::sanitize_line(&a.name),
                            crate::sanitize::sanitize_line(&a.mime),
                            a.bytes
                        );
                    }
                    if let Some(u) = by_message.get(&m.id) {
                        println!("[{}]\n", usage_line(&u.usage, u.cost));
                    }
                    if m.status != crate::store::MessageStatus::Complete
                        && let Some(e) = &m.error
                    {
                        println!("[{}]\n", crate::sanitize::sanitize_line(e));
                    }
                }
            }
        }
        Command::Prune { older_than } => {
            // "0s" means every finished row; durations elsewhere must be positive.
            let ms = match when::parse_duration(older_than) {
                Ok(d) => d.num_milliseconds(),
                Err(_) if is_zero_duration(older_than) => 0,
                Err(e) => return Err(e.into()),
            };
            let n = store.prune(now - ms)?;
            println!("pruned {n} finished item(s) and ended series");
        }
        Command::Status { json } => status(store, &config, now, *json)?,
        Command::Fork { conv, at, json } => {
            let c = store
                .find_conversation(conv)?
                .ok_or_else(|| anyhow!("no conversation \"{conv}\""))?;
            let at = match at {
                Some(m) => *m,
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
            let id = engine.fork_conversation(c.id, at)?;
            if *json {
                let fork = store.conversation(id)?;
                let copied = store.messages(id)?.len();
                println!(
                    "{}",
                    serde_json::to_string_pretty(&json!({
                        "id": id,
                        "title": fork.and_then(|f| f.title),
                        "forked_from": c.id,
                        "up_to_message_id": at,
                        "messages": copied,
                    }))?
                );
            } else {
                println!("{id}");
            }
        }
        Command::Models { json } => models(&engine, cli.model.as_deref(), *json)?,
        Command::Search { text, limit, json } => search(&engine, &text.join(" "), *limit, *json)?,
        Command::Daemon => bail!("daemon is not a one-shot command"),
    }
    Ok(())
}

/// `tock models [--json]`: the server's list, fetched now.
fn models(engine: &Engine, model: Option<&str>, as_json: bool) -> Result<()> {
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
            serde_json::to_string_pretty(&json!({
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
fn search(engine: &Engine, text: &str, limit: usize, as_json: bool) -> Result<()> {
    let hits = engine.search(text, limit)?;
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
        println!("{}", serde_json::to_string_pretty(&arr)?);
        return Ok(());
    }
    if hits.is_empty() {
        eprintln!("no message matches");
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
            local(h.created_at),
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

/// Pause and resume act on series only: say so for an item id.
/// `tock approvals [--json]`: the tool calls waiting for an answer, oldest first.
fn approvals(store: &Store, as_json: bool) -> Result<()> {
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
                    "summary": line(&a.summary),
                    "created_at": rfc3339(Some(a.created_at)),
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&arr)?);
    } else if waiting.is_empty() {
        println!("no tool call waits for approval");
    } else {
        println!(
            "{:>5}  {:>5}  {:<16} {:<20} SUMMARY",
            "ID", "CONV", "CREATED", "TOOL"
        );
        for a in &waiting {
            let summary: String = line(&a.summary).chars().take(80).collect();
            println!(
                "{:>5}  {:>5}  {:<16} {:<20} {summary}",
                a.id,
                a.conversation_id,
                local(a.created_at),
                line(&a.tool)
            );
        }
    }
    Ok(())
}

fn require_series(store: &Store, id: i64) -> Result<()> {
    if store.series(id)?.is_some() {
        return Ok(());
    }
    if store.item(id)?.is_some() {
        bail!(
            "{id} is not a recurring series (pause and resume act on series; cancel or reschedule an item)"
        );
    }
    bail!("no series {id}")
}

/// "0", "0s", "0 days", ...
fn is_zero_duration(expr: &str) -> bool {
    let num = expr
        .trim()
        .trim_end_matches(|c: char| c.is_ascii_alphabetic() || c.is_whitespace());
    !num.is_empty() && num.chars().all(|c| c == '0')
}

fn status(store: &Store, config: &ConfigSource, now: i64, as_json: bool) -> Result<()> {
    let lease = store
        .lease_holder()?
        .filter(|l| l.expires_at >= now && crate::store::process_alive(l.pid));
    let counts = store.counts()?;
    let next = store
        .list_items(false)?
        .into_iter()
        .filter(|i| i.status.as_str() == "pending")
        .min_by_key(|i| i.due_at.unwrap_or(0));
    let model = config.resolve(None);
    let (model_name, provider) = match &model {
        Ok(m) => (m.name.clone(), format!("{:?}", m.kind).to_lowercase()),
        Err(e) => (String::new(), format!("error: {e}")),
    };
    let reachable = match &model {
        Ok(m) if !m.base_url.is_empty() => reachability(&m.base_url),
        Ok(_) => "offline model: no network needed".to_string(),
        Err(_) => "no provider".to_string(),
    };
    let enabled = config.get().outbox.enabled;
    // What holds each conversation that has items waiting: the most telling
    // reason of its pending items (an approval or a busy reply first).
    let waiting = store.waiting(now)?;
    let rank = |w: &Waiting| match w {
        Waiting::Approval { .. } => 0,
        Waiting::Behind { .. } => 1,
        Waiting::ReplyRetry { .. } => 2,
        Waiting::Backoff { .. } => 3,
        Waiting::QueuePaused => 1,
        Waiting::Ready => 4,
        Waiting::Due { .. } => 5,
        Waiting::Disabled => 6,
    };
    let mut blocked: std::collections::BTreeMap<i64, (i64, Waiting)> = Default::default();
    for i in store.list_items(false)? {
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
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "dispatcher": lease.as_ref().map(|l| json!({"pid": l.pid, "lease_expires_at": rfc3339(Some(l.expires_at))})),
                "outbox_enabled": enabled,
                "counts": c,
                "next": next.as_ref().map(|i| item_json(i, &crate::engine::item_state(i, now, Default::default()), waiting.get(&i.id), now)),
                "conversations": b,
                "series": {"active": active, "paused": series.len() - active, "next_due_at": rfc3339(next_series)},
                "model": model_name,
                "provider": provider,
                "reachability": reachable,
            }))?
        );
        return Ok(());
    }
    match &lease {
        Some(l) => println!(
            "dispatcher: pid {} (lease until {})",
            l.pid,
            local(l.expires_at)
        ),
        None => {
            println!("dispatcher: none running — start `tock` or `tock daemon` to send due items")
        }
    }
    if !enabled {
        println!("outbox: disabled in the config (items are kept, nothing is sent)");
    }
    let mut by_status: std::collections::BTreeMap<String, i64> = Default::default();
    for (_, s, n) in &counts {
        *by_status.entry(s.clone()).or_default() += n;
    }
    let line: Vec<String> = by_status.iter().map(|(s, n)| format!("{s} {n}")).collect();
    println!(
        "items: {}",
        if line.is_empty() {
            "none".into()
        } else {
            line.join(", ")
        }
    );
    if let Some(n) = next {
        let due = n
            .due_at
            .map(|d| format!("{} ({})", local(d), when::relative(d, now)))
            .unwrap_or_else(|| "asap".into());
        println!(
            "next: #{} {due}: {}",
            n.id,
            crate::sanitize::sanitize_line(&n.text)
                .chars()
                .take(60)
                .collect::<String>()
        );
    }
    for (c, (id, w)) in &blocked {
        let title = store
            .conversation(*c)?
            .map(|c| c.display_title())
            .unwrap_or_default();
        println!(
            "conversation #{c} “{}”: {} (item #{id})",
            crate::sanitize::sanitize_line(&title),
            describe(w)
        );
    }
    if !series.is_empty() {
        let next = next_series
            .map(|d| format!("; next {} ({})", local(d), when::relative(d, now)))
            .unwrap_or_default();
        println!(
            "recurring: {active} active, {} paused{next}",
            series.len() - active
        );
    }
    println!(
        "model: {model_name} ({provider}){}",
        if provider == "echo" {
            " — offline"
        } else {
            ""
        }
    );
    println!("provider: {reachable}");
    Ok(())
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

/// Open the store and config the way every front end does.
pub fn open(cli: &Cli) -> Result<(Store, Arc<ConfigSource>)> {
    let db = cli
        .db
        .clone()
        .unwrap_or_else(crate::config::default_db_path);
    // The default data dir is tock's own: make it private (a --db path's
    // directory may be shared, so only the database files are tightened).
    if cli.db.is_none()
        && let Some(dir) = db.parent()
        && let Ok(Some(n)) = crate::files::tighten(dir)
    {
        tracing::info!("{n}");
        eprintln!("tock: {n}");
    }
    let store = match Store::open(&db) {
        Ok(s) => s,
        // Looking must keep working on a full disk or in a read-only
        // directory, where SQLite cannot create the WAL's files.
        Err(e) if cli.command.as_ref().is_some_and(Command::only_reads) && db.is_file() => {
            match Store::open_read_only(&db) {
                Ok(s) => {
                    eprintln!("tock: {e:#} — showing it read-only");
                    s
                }
                Err(_) => return Err(e),
            }
        }
        Err(e) => return Err(e),
    };
    for n in store.notices().iter().filter(|_| !store.is_read_only()) {
        eprintln!("tock: {n}");
    }
    let cfg_path = cli
        .config
        .clone()
        .or_else(crate::config::default_config_path);
    let config = ConfigSource::new(cfg_path.clone(), cli.model.clone())
        .context("loading the configuration")?;
    if let Some(e) = config.error()
        && cli.command.is_some()
    {
        eprintln!("warning: {}", crate::sanitize::sanitize_line(&e));
    }
    if let Some(p) = &cfg_path
        && let Some(w) = config.get().permission_warning(p)
    {
        eprintln!("warning: {w}");
    }
    Ok((store, Arc::new(config)))
}
