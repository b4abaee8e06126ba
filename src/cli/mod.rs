//! The scriptable front end: `tock send|list|cancel|…` on the same database
//! and rules. One module per group of commands; this one parses the command
//! line and hands each command to its function.

mod ask;
mod history;
mod list;
mod send;
mod setup;
mod status;
mod tools;
mod when_args;

/// What `tock status` prints, for the TUI's `/status`.
pub fn status_report(
    store: &crate::store::Store,
    config: &crate::config::ConfigSource,
    now: i64,
) -> anyhow::Result<Vec<String>> {
    status::report(store, config, now, false)
}

pub use ask::{AskArgs, Interrupted};
pub use send::SendArgs;

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use clap::{Parser, Subcommand};
use serde_json::json;

use crate::config::ConfigSource;
use crate::engine::{Clock, Engine, Options, SystemClock};
use crate::store::Store;
use crate::when::{self, Mode};

#[derive(Parser, Debug)]
#[command(
    name = "tock",
    version,
    about = "A terminal chat client for LLMs: messages are never lost and are sent when you said"
)]
pub struct Cli {
    // The values of the variables are not shown: unset, `[env: TOCK_DB=]`
    // read as "set to nothing". The defaults are this machine's paths
    // ([`Cli::parse_here`]).
    /// Database file [default: the platform data dir]
    #[arg(long, global = true, env = "TOCK_DB", hide_env_values = true)]
    pub db: Option<PathBuf>,
    /// Config file [default: the platform config dir]
    #[arg(long, global = true, env = "TOCK_CONFIG", hide_env_values = true)]
    pub config: Option<PathBuf>,
    /// Model to use (a name from the config, or a model id)
    #[arg(long, global = true, env = "TOCK_MODEL", hide_env_values = true)]
    pub model: Option<String>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

impl Cli {
    /// The command line, with `--help` naming this machine's default paths.
    pub fn parse_here() -> Result<Self, clap::Error> {
        use clap::{CommandFactory, FromArgMatches};
        let db = crate::config::default_db_path();
        let config = crate::config::default_config_path();
        let cmd = Self::command()
            .mut_arg("db", |a| {
                a.help(format!("Database file [default: {}]", db.display()))
            })
            .mut_arg("config", |a| match &config {
                Some(p) => a.help(format!("Config file [default: {}]", p.display())),
                None => a,
            });
        Self::from_arg_matches(&cmd.try_get_matches()?)
    }
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Queue or schedule a message; prints the new item's id. Without --conv,
    /// --conv-id or --new it starts a new conversation, named after the message
    Send(SendArgs),
    /// Send a message now and print the answer: as it streams on a terminal,
    /// whole into a pipe or a file (both are kept in the conversation).
    /// Exit 0 answered, 1 not (the reason on stderr); Ctrl+C, SIGTERM or
    /// SIGHUP cancel what is not sent or stop the reply (130, 143, 129)
    Ask(AskArgs),
    /// List outbox items (pending, scheduled, failed, expired) and recurring series
    List {
        /// Include finished (sent, canceled) items and ended series
        #[arg(long)]
        all: bool,
        /// Print JSON, for scripts
        #[arg(long)]
        json: bool,
    },
    /// Cancel an item, or end a recurring series
    Cancel {
        /// The item's or the series' id (tock list)
        id: i64,
    },
    /// Pause a recurring series
    Pause {
        /// The series' id (tock list)
        id: i64,
    },
    /// Resume a paused series at its next occurrence, or with --conv a
    /// conversation's queue paused by a stop or a failed reply
    Resume {
        /// The series' id (tock list)
        #[arg(required_unless_present = "conv", conflicts_with = "conv")]
        id: Option<i64>,
        /// Conversation id or exact title whose queue to resume
        #[arg(long, value_name = "CONV")]
        conv: Option<String>,
    },
    /// Give an item a new time, or a series a new rule
    Reschedule {
        /// The item's or the series' id (tock list)
        id: i64,
        /// For an item a time (`tomorrow 9am`, `fri 17:00`); for a series a
        /// rule (`every day 10am`), which keeps the series' end (`until`,
        /// `for N times`) unless it names one
        #[arg(required = true, num_args = 1..)]
        time: Vec<String>,
    },
    /// Change an item's or a series' text
    Edit {
        /// The item's or the series' id (tock list)
        id: i64,
        /// The new text (several words are joined)
        #[arg(required = true, num_args = 1..)]
        text: Vec<String>,
    },
    /// Retry a failed or expired item, or generate again the cut reply of a sent one
    Retry {
        /// The item's id (tock list)
        id: i64,
    },
    /// Stop the reply streaming in a conversation, or the tool call running
    /// there, from whichever tock runs it (a daemon, a TUI), and pause the
    /// conversation's queue
    Stop {
        /// Conversation id or exact title
        conv: String,
    },
    /// Generate the conversation's last reply again
    Regenerate {
        /// Conversation id or exact title
        conv: String,
    },
    /// List conversations
    Conversations {
        /// Print JSON, for scripts
        #[arg(long)]
        json: bool,
    },
    /// Print a conversation's history
    Show {
        /// Conversation: exact title, #ID, or an id that is not also a title
        conv: String,
        /// Print JSON, for scripts
        #[arg(long)]
        json: bool,
    },
    /// Search the text of every conversation; newest matches first
    Search {
        /// Words to find (all must occur; the last also as a prefix); "quotes" for a phrase
        #[arg(required = true, num_args = 1..)]
        text: Vec<String>,
        /// At most this many matches (at least 1)
        #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..))]
        limit: u64,
        /// Print JSON, for scripts
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
        /// Print JSON, for scripts
        #[arg(long)]
        json: bool,
    },
    /// List the models the provider's server offers (of --model, or the default model)
    Models {
        /// Print JSON, for scripts
        #[arg(long)]
        json: bool,
    },
    /// List tool calls waiting for your approval, or show one in full
    Approvals {
        /// One approval: the call with every argument, line by line
        id: Option<i64>,
        /// Print JSON, for scripts
        #[arg(long)]
        json: bool,
        /// List the tools allowed with `approve --always` instead
        #[arg(long)]
        rules: bool,
    },
    /// Approve a waiting tool call; the conversation continues
    Approve {
        /// The waiting call's id (tock approvals)
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
        /// Print JSON, for scripts
        #[arg(long)]
        json: bool,
    },
    /// Decline a waiting tool call; the model is told
    Deny {
        /// The waiting call's id (tock approvals)
        id: i64,
        /// Why, passed to the model with the refusal
        #[arg(long, value_name = "TEXT")]
        reason: Option<String>,
    },
    /// Write a config file for a provider, question by question: which one,
    /// where its key comes from (never the key itself); checks the server
    Setup,
    /// Run the engine headless (no UI)
    Daemon,
    /// Delete finished outbox rows
    Prune {
        /// How long ago they finished: 12h, 30d, 2w, 6mo (30 days), 1y (365 days)
        #[arg(long, value_name = "DUR", default_value = "30d")]
        older_than: String,
    },
    /// Dispatcher, counts by state, next due item, replies streaming, tool calls running, provider
    Status {
        /// Print JSON, for scripts
        #[arg(long)]
        json: bool,
    },
}

/// A reply stored as streaming with no tock running to write it was cut
/// off when its tock stopped: there is nothing to stop, and the next tock
/// asks for it again (so it is not generated twice).
fn cut_off_reply(store: &Store, conversation_id: i64, title: &str, now: i64) -> Result<()> {
    let streaming = store.streaming_reply_item(conversation_id)?.is_some();
    if streaming && store.live_lease_holder(now)?.is_none() {
        bail!(
            "the reply in “{title}” was cut off when its tock stopped; no tock runs now, and the next `tock` or `tock daemon` asks for it again"
        );
    }
    Ok(())
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

/// A one-shot command whose reader went away (`tock list | head -1`) ends
/// quietly, as other Unix tools do, instead of panicking on the next print:
/// SIGPIPE's default disposition put back (Rust ignores it, and the TUI and
/// the daemon keep it that way). What the command wrote to the database is
/// already committed (or rolled back by SQLite) when it is cut. Not while
/// child processes it writes to may have gone (MCP servers starting): a
/// write to one that exited would end tock without a word.
pub fn end_quietly_on_a_closed_stdout() {
    // SAFETY: sets the disposition of one signal to its default; no
    // handler of tock's is replaced (SIGPIPE has none).
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Where a newcomer with no provider goes from here (`tock status`, and
/// `tock ask`'s refusal to print the offline model's words as an answer).
fn how_to_configure(config: &ConfigSource) -> String {
    let file = config.path().map_or_else(
        || "a config file".to_string(),
        |p| crate::sanitize::sanitize_line(&p.display().to_string()).into_owned(),
    );
    format!(
        "run `tock setup`, or export OPENAI_API_KEY, ANTHROPIC_API_KEY or OLLAMA_HOST, or write {file}"
    )
}

fn rfc3339(ms: Option<i64>) -> serde_json::Value {
    ms.and_then(chrono::DateTime::from_timestamp_millis)
        .map(|d| json!(d.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)))
        .unwrap_or(serde_json::Value::Null)
}

/// `Mon 30 Nov 09:00`, with the year when it is not this year's (as the
/// TUI shows it): a date years away must not read as one of this year.
fn local(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|d| when::absolute(d, &now_local()))
        .unwrap_or_default()
}

fn now_local() -> chrono::DateTime<chrono::Local> {
    chrono::Local::now()
}

/// Run one non-interactive subcommand.
pub fn run(cli: &Cli, store: &Store, config: Arc<ConfigSource>) -> Result<()> {
    let now = SystemClock.now_ms();
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
        Command::Send(args) => send::send(args, cli.model.as_deref(), store, &engine)?,
        Command::Ask(args) => ask::ask(args, cli.model.as_deref(), store, config.clone())?,
        Command::List { all, json } => list::list(store, &engine, &config, now, *all, *json)?,
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
        Command::Resume {
            conv: Some(conv), ..
        } => {
            let c = store
                .find_conversation(conv)?
                .ok_or_else(|| anyhow!("no conversation \"{conv}\""))?;
            if !engine.resume_queue(c.id)? {
                bail!("the queue of “{}” is not paused", c.display_title());
            }
            println!(
                "resumed the queue of “{}”: what waits there is sent in order",
                c.display_title()
            );
        }
        Command::Resume { id: None, .. } => bail!("resume needs a series ID or --conv CONV"),
        Command::Resume { id: Some(id), .. } => {
            require_series(store, *id)?;
            engine.resume_series(*id)?;
            let next = store.series(*id)?.and_then(|s| s.next_due_at);
            match next {
                Some(t) => println!("resumed series {id}; next {}", local(t)),
                None => println!("resumed series {id}"),
            }
        }
        Command::Reschedule { id, time } if store.series(*id)?.is_some() => {
            let expr = time.join(" ");
            if let Err(e) = engine.edit_series_rule_keeping_end(*id, &expr) {
                // Not read at all: where it stops reading, if anywhere.
                return Err(match e.downcast_ref::<crate::recur::RecurError>() {
                    Some(crate::recur::RecurError::Unrecognised(_)) => {
                        when_args::parse_every(&expr).err().unwrap_or(e)
                    }
                    _ => e,
                });
            }
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
            let due = when_args::parse_due(&expr, Mode::At)?;
            engine.reschedule(*id, due.timestamp_millis())?;
            println!("{id} now due {}", when::preview(due, &now_local()));
        }
        Command::Edit { id, text } => {
            engine.edit(*id, &text.join(" "))?;
            println!("edited {id}");
        }
        Command::Approvals {
            json, rules: true, ..
        } => tools::saved_rules(store, *json)?,
        Command::Approvals {
            id: Some(id), json, ..
        } => tools::approval(store, *id, *json)?,
        Command::Approvals { json, .. } => tools::approvals(store, *json)?,
        Command::Tools { json } => tools::tools(&engine, *json)?,
        Command::Approve {
            forget: Some(rule), ..
        } => tools::forget_rule(store, rule)?,
        Command::Approve { id: None, .. } => bail!("give the approval's id"),
        Command::Approve {
            id: Some(id),
            always,
            ..
        } => tools::approve(&engine, *id, *always)?,
        Command::Deny { id, reason } => tools::deny(&engine, *id, reason.as_deref())?,
        Command::Retry { id } => {
            engine.retry(*id)?;
            println!("{id} will be retried");
        }
        Command::Stop { conv } => {
            let c = store
                .find_conversation(conv)?
                .ok_or_else(|| anyhow!("no conversation \"{conv}\""))?;
            cut_off_reply(store, c.id, &c.display_title(), now)?;
            let calls: Vec<String> = store
                .tool_runs()?
                .into_iter()
                .filter(|r| r.conversation_id == c.id)
                .map(|r| crate::sanitize::sanitize_line(&r.tool).into_owned())
                .collect();
            if !engine.stop_elsewhere(c.id)? {
                bail!(
                    "no reply is streaming and no tool call runs in “{}”",
                    c.display_title()
                );
            }
            let asked = if calls.is_empty() {
                format!(
                    "asked the tock streaming “{}” to stop its reply",
                    c.display_title()
                )
            } else {
                format!(
                    "asked the tock running {} in “{}” to stop it",
                    calls.join(", "),
                    c.display_title()
                )
            };
            // With nothing queued behind it there is no pause to speak of.
            let queued = store.conversation_items(c.id)?.iter().any(|i| {
                i.status == crate::store::Status::Pending && i.due_at.is_none_or(|d| d <= now)
            });
            if queued {
                println!(
                    "{asked}; its queue is paused until a message is sent there or `tock resume --conv` resumes it"
                );
            } else {
                println!("{asked}");
            }
        }
        Command::Regenerate { conv } => {
            let c = store
                .find_conversation(conv)?
                .ok_or_else(|| anyhow!("no conversation \"{conv}\""))?;
            cut_off_reply(store, c.id, &c.display_title(), now)?;
            let id = engine.regenerate(c.id)?;
            println!("{id}");
        }
        Command::Conversations { json } => history::conversations(store, now, *json)?,
        Command::Show { conv, json } => history::show(store, &engine, conv, *json)?,
        Command::Prune { older_than } => {
            // "0s" means every finished row; durations elsewhere must be
            // positive. How long ago also takes months and years (30 and
            // 365 days): `--older-than 1y`.
            let ms = match when::parse_age(older_than) {
                Ok(d) => d.num_milliseconds(),
                Err(_) if is_zero_duration(older_than) => 0,
                Err(e) => return Err(e.into()),
            };
            let n = store.prune(now - ms)?;
            println!("pruned {n} finished item(s) and ended series");
        }
        Command::Status { json } => status::status(store, &config, now, *json)?,
        Command::Fork { conv, at, json } => history::fork(store, &engine, conv, *at, *json)?,
        Command::Models { json } => status::models(&engine, cli.model.as_deref(), *json)?,
        Command::Search { text, limit, json } => history::search(
            &engine,
            &text.join(" "),
            usize::try_from(*limit).unwrap_or(usize::MAX),
            *json,
        )?,
        Command::Setup => setup::setup(config.path())?,
        Command::Daemon => bail!("daemon is not a one-shot command"),
    }
    Ok(())
}

/// Pause and resume act on series only: say so for an item id.
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
    // A mistyped --db (or TOCK_DB) must not look like an empty outbox
    // without a word: a command that only reads says it found nothing there.
    let created = cli.db.is_some() && !db.exists();
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
    // A path can hold anything, escape sequences too: lines are made safe.
    let say = |line: String| eprintln!("tock: {}", crate::sanitize::sanitize_line(&line));
    for n in store.notices().iter().filter(|_| !store.is_read_only()) {
        say(n.to_string());
    }
    if created && cli.command.as_ref().is_some_and(Command::only_reads) {
        say(format!(
            "there was no database at {}; a new, empty one was made (check --db or TOCK_DB if you expected your items)",
            db.display()
        ));
    }
    let cfg_path = cli
        .config
        .clone()
        .or_else(crate::config::default_config_path);
    let config = ConfigSource::new(cfg_path.clone(), cli.model.clone())
        .context("loading the configuration")?;
    if cli.command.is_some() {
        // `tock setup` is there to write it.
        if let Some(line) = config
            .missing_named_file()
            .filter(|_| !matches!(cli.command, Some(Command::Setup)))
        {
            say(line);
        }
        // `tock tools` fails with the reason instead (it can list nothing).
        let tools = matches!(cli.command, Some(Command::Tools { .. }));
        // Held here only: a tock that read the file before goes on with it.
        let dispatcher = config
            .is_held()
            .then(|| store.live_lease_holder(SystemClock.now_ms()).ok().flatten())
            .flatten();
        let unreadable = match dispatcher {
            Some(l) => config
                .unreadable()
                .map(|e| format!("{e}; {}", status::held_here(l.pid))),
            None => config.error(),
        }
        .filter(|_| !tools);
        for e in unreadable.into_iter().chain(config.get().problems()) {
            eprintln!("warning: {}", crate::sanitize::sanitize_line(&e));
        }
    }
    if let Some(p) = &cfg_path
        && let Some(w) = config.get().permission_warning(p)
    {
        eprintln!("warning: {w}");
    }
    Ok((store, Arc::new(config)))
}
