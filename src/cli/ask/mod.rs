//! `tock ask`: send a message now and print the reply on stdout, for
//! scripts and one-off questions. The message goes through the outbox like
//! any other: it is kept before anything is sent, and the reply is kept in
//! its conversation. This process runs an engine that sends this
//! conversation's messages only; while another tock holds the outbox (the
//! TUI, `tock daemon`, another `tock ask`) it stands by, and this one
//! follows the reply as that tock saves it, taking over if it stops.

mod input;
mod printer;
mod turn;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, anyhow, bail};
use clap::Args;

use self::printer::Printer;
use self::turn::{Turn, Wait, read_turn};
use super::send::{ConvArgs, conversation_for};
use crate::config::ConfigSource;
use crate::engine::{DispatchState, Engine, Event, Options, SystemClock};
use crate::store::{NewItem, Status, Store};

#[derive(Args, Debug)]
pub struct AskArgs {
    #[command(flatten)]
    pub target: ConvArgs,
    /// Read the message from this file (UTF-8 text)
    #[arg(long, value_name = "PATH", conflicts_with = "text")]
    pub file: Option<PathBuf>,
    /// Print one JSON object when it ends, for scripts: the answer, its
    /// conversation and item, the model, the tokens used
    #[arg(long)]
    pub json: bool,
    /// The message (several words are joined). Text piped in goes after
    /// them (stdin is read whenever it is not a terminal: `< /dev/null` in
    /// a loop that reads its own); `-` stands for stdin alone
    #[arg(num_args = 0..)]
    pub text: Vec<String>,
}

/// `tock ask` ended by a signal (Ctrl+C, SIGTERM, SIGHUP) or a reader that
/// went away: what was not sent was canceled, a reply streaming was
/// stopped (and kept). The process exits with this code (128 + the signal).
#[derive(Debug)]
pub struct Interrupted(pub u8);

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "interrupted ({})", self.0)
    }
}

impl std::error::Error for Interrupted {}

const SIGINT_EXIT: u8 = 130;
const SIGTERM_EXIT: u8 = 143;
const SIGHUP_EXIT: u8 = 129;
const SIGPIPE_EXIT: u8 = 141;

/// How often the database is read for the turn's state (and, when another
/// tock sends, for the reply's text, which it saves once a second).
const LOOK_EVERY: Duration = Duration::from_millis(200);

/// How long the message may wait on a tock that holds the outbox before
/// this one says so (a TUI or daemon has sent it long before).
const STANDBY_SAID_AFTER: Duration = Duration::from_millis(1500);

pub(super) fn ask(
    args: &AskArgs,
    model: Option<&str>,
    store: &Store,
    config: Arc<ConfigSource>,
) -> Result<()> {
    let input::Message { text, from_stdin } = input::message(&args.text, args.file.as_deref())?;
    if text.trim().is_empty() {
        bail!("the message is empty");
    }
    // Writes go through an engine as for `send`; it is not started.
    let writer = Engine::new(
        store.clone(),
        config.clone(),
        Arc::new(SystemClock),
        Options::default(),
    );
    if let Some(m) = model {
        writer.config().describe(Some(m)).map_err(|e| anyhow!(e))?;
    }
    refuse_implicit_echo(args, model, &config)?;
    let submitted = conversation_for(&args.target, &text, model, store, &writer).and_then(|conv| {
        let mut item = NewItem::message(conv, text.clone(), None);
        item.model_override = model.map(str::to_owned);
        Ok((conv, writer.submit(item)?))
    });
    let (conv, item) = match submitted {
        Ok(ids) => ids,
        Err(e) => {
            if from_stdin {
                super::send::give_back_stdin(&text);
            }
            return Err(e);
        }
    };
    let asked = Asked {
        conv,
        item,
        made_here: args.target.conv.is_none() && args.target.conv_id.is_none(),
    };
    let live = store.live_lease_holder(writer.now_ms())?;
    if live.is_none() && (!config.get().outbox.enabled || config.is_held()) {
        bail!(
            "kept as item {item} in conversation {conv}, but {}",
            super::status::held_by_config(&config)
        );
    }
    let rt = crate::engine::runtime()?;
    rt.block_on(async move {
        let engine = Engine::new(
            store.clone(),
            config,
            Arc::new(SystemClock),
            Options {
                only_conversation: Some(conv),
                ..Options::default()
            },
        );
        engine.show(Some(conv));
        let events = engine.subscribe();
        engine.start();
        let output = if args.json {
            Output::Json
        } else if std::io::stdout().is_terminal() {
            Output::Stream
        } else {
            Output::Whole
        };
        let outcome = follow(store, &writer, &engine, events, asked, output).await;
        engine.shutdown(Duration::from_millis(1500)).await;
        outcome
    })
}

/// With nothing configured, the model is the offline echo: a script would
/// take its demo text for an answer (a CI job with a secret missing).
/// Asked by name (`--model echo`, the config's default), it answers.
fn refuse_implicit_echo(args: &AskArgs, model: Option<&str>, config: &ConfigSource) -> Result<()> {
    let named = model.is_some()
        || config.get().default_model.is_some()
        || args.target.conv.is_some()
        || args.target.conv_id.is_some();
    let echo = config
        .facts(None)
        .is_ok_and(|f| f.kind == crate::llm::ProviderKind::Echo);
    if named || !echo {
        return Ok(());
    }
    // A config file there that cannot be read names no model either; that
    // is what to fix, not a provider to set up.
    if config.is_held()
        && let Some(why) = config.unreadable()
    {
        bail!(
            "the config file cannot be read, so no model is known: {}",
            crate::sanitize::sanitize_line(&why)
        );
    }
    bail!(
        "no model is configured, so only the offline echo model would answer: {} (--model echo asks the echo model anyway)",
        super::how_to_configure(config)
    )
}

/// The message this ask sent, and where.
#[derive(Clone, Copy)]
struct Asked {
    conv: i64,
    item: i64,
    /// The conversation was made for it (none was named).
    made_here: bool,
}

/// How the answer is written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Output {
    /// As it streams (stdout is a terminal).
    Stream,
    /// Once complete (into a pipe or a file).
    Whole,
    /// One JSON object at the end (`--json`).
    Json,
}

/// How `print_turn` ended.
enum Ended {
    /// The turn ended: answered (with a note, if any), or why not.
    Turn(std::result::Result<Option<String>, String>),
    /// A signal: its exit code.
    Signal(u8),
}

/// Prints the turn's text until it ends; Ok once the model has answered.
/// On a terminal the reply streams; into a pipe or a file the answer is
/// written once it is complete (a reply cut and asked for again leaves one
/// answer there, not a piece and then the whole). A signal, or a reader
/// that went away (`tock ask … | head -1`), ends it as the user's stop:
/// what is not sent is canceled, a reply is stopped.
async fn follow(
    store: &Store,
    writer: &Engine,
    engine: &Engine,
    events: tokio::sync::broadcast::Receiver<Event>,
    asked: Asked,
    output: Output,
) -> Result<()> {
    let Asked { conv, item, .. } = asked;
    let streaming = output == Output::Stream;
    let mut out = Printer::new(std::io::stdout().lock());
    let ended = print_turn(store, engine, &mut out, events, conv, item, streaming).await;
    let written = match (output, &ended) {
        (Output::Stream, _) => out.end().map_err(Into::into),
        // Into a pipe or a file: the answer as it stands now, whole.
        (Output::Whole, _) => read_turn(store, conv, item)
            .and_then(|t| {
                t.answer()
                    .try_for_each(|m| out.saved(m.id, &m.content))
                    .map_err(Into::into)
            })
            .and_then(|()| out.end().map_err(Into::into)),
        (Output::Json, Ok(Ended::Turn(end))) => {
            drop(out);
            print_json(store, engine, asked, end)
        }
        (Output::Json, _) => Ok(()),
    };
    let code = match (ended, written) {
        (Ok(Ended::Turn(Ok(note))), Ok(())) => {
            if let Some(note) = note {
                eprintln!("tock: {note}");
            }
            return Ok(());
        }
        (Ok(Ended::Turn(Err(why))), _) => bail!("{why} (conversation {conv})"),
        // Answered, and the reader went before the end of it: nothing to stop.
        (Ok(Ended::Turn(Ok(_))), Err(e)) if is_broken_pipe(&e) => {
            return Err(Interrupted(SIGPIPE_EXIT).into());
        }
        (Ok(Ended::Signal(code)), _) => code,
        (Err(e), _) | (_, Err(e)) if !is_broken_pipe(&e) => {
            interrupt(store, writer, engine, asked).await;
            return Err(e);
        }
        // The reader went away: nothing more to say to it.
        _ => SIGPIPE_EXIT,
    };
    interrupt(store, writer, engine, asked).await;
    Err(Interrupted(code).into())
}

/// `--json`: the turn's answer (or why there is none) as one object.
fn print_json(
    store: &Store,
    engine: &Engine,
    Asked { conv, item, .. }: Asked,
    end: &std::result::Result<Option<String>, String>,
) -> Result<()> {
    let turn = read_turn(store, conv, item)?;
    let answer: Vec<&crate::store::Message> = turn.answer().collect();
    let text = answer
        .iter()
        .map(|m| m.content.as_str())
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    let ids: Vec<i64> = answer.iter().map(|m| m.id).collect();
    let (total, cost) = engine.usage(conv)?.of_replies(&ids);
    let (error, note) = match end {
        Ok(note) => (None, note.clone()),
        Err(why) => (Some(why.clone()), None),
    };
    let value = serde_json::json!({
        "conversation_id": conv,
        "item_id": item,
        "model": answer.last().and_then(|m| m.model.clone()),
        "text": text,
        "answered": error.is_none(),
        "error": error,
        "note": note,
        "usage": {
            "prompt_tokens": total.prompt_tokens,
            "completion_tokens": total.completion_tokens,
            "cached_tokens": total.cached_tokens,
            "cost": cost,
        },
    });
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{}", crate::sanitize::json_text(&value)?)?;
    stdout.flush()?;
    Ok(())
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.downcast_ref::<std::io::Error>()
        .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
}

/// Until the turn ends or a signal comes. Says on stderr what it waits for
/// and the tool calls the model makes, each once.
async fn print_turn<W: Write>(
    store: &Store,
    engine: &Engine,
    out: &mut Printer<W>,
    mut events: tokio::sync::broadcast::Receiver<Event>,
    conv: i64,
    item: i64,
    streaming: bool,
) -> Result<Ended> {
    use tokio::signal::unix::{SignalKind, signal};
    // Each listener made once, before the loop: a listener made anew in
    // each turn of it misses a signal that comes between two turns (tokio
    // delivers only what comes after a listener exists).
    let mut int = signal(SignalKind::interrupt())?;
    let mut term = signal(SignalKind::terminate())?;
    let mut hup = signal(SignalKind::hangup())?;
    let mut said = Said::default();
    let mut look = tokio::time::interval(LOOK_EVERY);
    let started = tokio::time::Instant::now();
    loop {
        tokio::select! {
            ev = events.recv() => match ev {
                // A message of the turn new here is read from the
                // database first, after the tail of the one before it.
                Ok(Event::Delta { conversation_id, message_id, offset, text })
                    if streaming && conversation_id == conv && out.is_writing(message_id) =>
                {
                    out.delta(message_id, offset, &text)?;
                    continue;
                }
                // Text missed here is read from the database at the next look.
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                    bail!("the engine of this tock ask stopped")
                }
            },
            _ = look.tick() => {}
            _ = int.recv() => return Ok(Ended::Signal(SIGINT_EXIT)),
            _ = term.recv() => return Ok(Ended::Signal(SIGTERM_EXIT)),
            _ = hup.recv() => return Ok(Ended::Signal(SIGHUP_EXIT)),
        }
        let mut turn = read_turn(store, conv, item)?;
        if streaming {
            for m in &turn.replies {
                out.saved(m.id, &m.content)?;
            }
        }
        if turn.waits.is_none() && started.elapsed() >= STANDBY_SAID_AFTER {
            turn.waits = standby_wait(store, engine, item)?;
        }
        let news = said.news(&turn);
        if !news.is_empty() {
            // On a line of its own, not glued to the reply's text.
            out.break_line()?;
            for line in news {
                eprintln!("tock: {line}");
            }
        }
        if let Some(end) = turn.end {
            // A task the model scheduled fires only while a tock runs: with
            // this one the only one, nothing would send it when it is due.
            let scheduled = turn.calls.iter().any(|(_, tool)| tool == "schedule_task");
            if end.is_ok() && scheduled && engine.dispatch_state() == DispatchState::Dispatching {
                out.break_line()?;
                eprintln!(
                    "tock: the task it scheduled goes at its time only while a tock runs on this database (tock daemon, or the TUI)"
                );
            }
            return Ok(Ended::Turn(end.map(|()| turn.note)));
        }
    }
}

/// The message waits on another tock that holds the outbox: a TUI or a
/// daemon sends it at once, so this is mostly another `tock ask`.
fn standby_wait(store: &Store, engine: &Engine, item: i64) -> Result<Option<Wait>> {
    let DispatchState::Standby { pid } = engine.dispatch_state() else {
        return Ok(None);
    };
    let pending = store
        .item(item)?
        .is_some_and(|i| i.status == Status::Pending);
    let an_ask = store
        .lease_holder()?
        .is_some_and(|h| h.owner.ends_with(crate::engine::ONE_CONVERSATION_OWNER));
    Ok(pending.then(|| Wait {
        key: format!("standby {pid}"),
        text: if an_ask {
            format!(
                "waiting for the tock ask running as pid {pid} to finish (one sends at a time; with `tock daemon` running, asks go out together)"
            )
        } else {
            format!("waiting for the tock running as pid {pid}, which sends on this database")
        },
    }))
}

/// A signal: a message not sent yet is canceled (also one stopped before
/// the model took it, which the engine holds); a reply streaming (or a tool
/// call running) is stopped, and what it said so far is kept.
async fn interrupt(store: &Store, writer: &Engine, engine: &Engine, asked: Asked) {
    let Asked { conv, item, .. } = asked;
    let status = |store: &Store| store.item(item).ok().flatten().map(|i| i.status);
    if status(store) == Some(Status::Pending) {
        return cancel(store, writer, asked, "it was not sent");
    }
    let stopped = engine.stop(conv) || writer.stop_elsewhere(conv).unwrap_or(false);
    // Until the stop is recorded: a reply kept as stopped (a shutdown under
    // it would leave it to be generated again by the next tock), or a
    // message held unsent.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    while tokio::time::Instant::now() < deadline
        && (status(store) == Some(Status::Sending) || engine.is_busy(conv))
    {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    if status(store) == Some(Status::Pending) {
        // Sent, and stopped before an answer came: the server had it.
        cancel(store, writer, asked, "stopped before the model answered");
    } else if stopped {
        eprintln!("tock: stopped; the reply so far is kept in conversation {conv}");
    } else if let Ok(Some(w)) = turn::approval_wait(store, conv) {
        // Nothing to stop: the call waits for the user still.
        eprintln!("tock: the conversation stays held, {}", w.text);
    }
}

/// The message is called off; a conversation made for it that holds
/// nothing then goes too (it would stay in every list, empty).
fn cancel(store: &Store, writer: &Engine, asked: Asked, how: &str) {
    let Asked {
        conv,
        item,
        made_here,
    } = asked;
    if writer.cancel(item).is_err() {
        return;
    }
    let empty = store.messages(conv).is_ok_and(|m| m.is_empty())
        && store
            .conversation_items(conv)
            .is_ok_and(|i| i.iter().all(|i| i.id == item));
    if made_here && empty && writer.delete_conversation(conv).is_ok() {
        eprintln!("tock: canceled item {item}; {how} (its conversation, empty, is gone)");
    } else {
        eprintln!("tock: canceled item {item}; {how}");
    }
}

/// What was said on stderr, so each thing is said once.
#[derive(Default)]
struct Said {
    waits: Option<String>,
    calls: std::collections::HashSet<(i64, String)>,
    /// Replies cut off that another attempt follows.
    restarted: std::collections::HashSet<i64>,
}

impl Said {
    /// What to say of the turn that was not said yet.
    fn news(&mut self, turn: &Turn) -> Vec<String> {
        let mut lines = Vec::new();
        for m in &turn.replies {
            if turn.asked_again(m) && self.restarted.insert(m.id) {
                let why = m.error.as_deref().unwrap_or("it was cut off");
                lines.push(format!(
                    "the reply broke off ({}); it is asked for again, from the start",
                    crate::sanitize::sanitize_line(why)
                ));
            }
        }
        // The call before what it waits for (its approval).
        for call in &turn.calls {
            if self.calls.insert(call.clone()) {
                lines.push(format!(
                    "the model calls {}",
                    crate::sanitize::sanitize_line(&call.1)
                ));
            }
        }
        let key = turn.waits.as_ref().map(|w| w.key.clone());
        if key != self.waits {
            if let Some(w) = &turn.waits {
                lines.push(w.text.clone());
            }
            self.waits = key;
        }
        lines
    }
}
