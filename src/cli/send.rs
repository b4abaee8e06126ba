//! `tock send`: queue, schedule or repeat a message from the command line.

use std::path::PathBuf;

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;

use super::when_args::{parse_due, parse_every};
use crate::engine::Engine;
use crate::store::{Kind, NewItem, Store};
use crate::when::{self, Mode};

/// Which conversation a message goes to (`send` and `ask` alike).
#[derive(Args, Debug)]
pub struct ConvArgs {
    /// Conversation: exact title, #ID, or an id that is not also a title
    #[arg(long, conflicts_with_all = ["new", "conv_id"])]
    pub conv: Option<String>,
    /// Conversation by id only
    #[arg(long, conflicts_with = "new")]
    pub conv_id: Option<i64>,
    /// Start a new conversation with this title
    #[arg(long)]
    pub new: Option<String>,
}

#[derive(Args, Debug)]
pub struct SendArgs {
    #[command(flatten)]
    pub target: ConvArgs,
    /// Read the message from this file (UTF-8 text)
    #[arg(long, value_name = "PATH", conflicts_with = "text")]
    pub file: Option<PathBuf>,
    /// Send after this long, e.g. 10m, 1h30m
    #[arg(long = "in", value_name = "DUR", conflicts_with = "at")]
    pub in_: Option<String>,
    /// Send at this time, e.g. 9am, "tomorrow 14:30", "2026-12-01 09:00"
    #[arg(long, conflicts_with = "every")]
    pub at: Option<String>,
    /// Repeat: "every weekday 9am", "every 2h", "cron '0 9 * * 1-5'"; prints the series id
    #[arg(long, value_name = "EXPR", conflicts_with = "in_")]
    pub every: Option<String>,
    /// With --every: the last day or instant, e.g. "dec 24", 2026-12-31
    #[arg(long, value_name = "DATE", requires = "every")]
    pub until: Option<String>,
    /// The message (several words are joined); `-` reads it from stdin
    #[arg(required_unless_present = "file", num_args = 1..)]
    pub text: Vec<String>,
}

/// Queue or schedule the message (prints the item's id), or start a series
/// with `--every` (prints the series' id).
pub(super) fn send(
    args: &SendArgs,
    model: Option<&str>,
    store: &Store,
    engine: &Engine,
) -> Result<()> {
    let text = message_text(&args.text, args.file.as_deref())?;
    if text.trim().is_empty() {
        bail!("the message is empty");
    }
    // A model nothing can resolve would fail the message later, after this
    // command had said it was sent: refused before anything is stored.
    if let Some(m) = model {
        engine.config().describe(Some(m)).map_err(|e| anyhow!(e))?;
    }
    let sent = send_text(args, &text, model, store, engine);
    let from_stdin = args.file.is_none() && args.text.len() == 1 && args.text[0] == "-";
    if sent.is_err() && from_stdin {
        give_back_stdin(&text);
    }
    sent
}

/// Text read from stdin is gone from the pipe: a send that failed (a
/// database locked too long, say) gives it back, for the script to retry.
pub(super) fn give_back_stdin(text: &str) {
    eprintln!(
        "tock: the message read from stdin was not kept; here it is:\n{}",
        crate::sanitize::sanitize(text)
    );
}

fn send_text(
    args: &SendArgs,
    text: &str,
    model: Option<&str>,
    store: &Store,
    engine: &Engine,
) -> Result<()> {
    let text = text.to_string();
    // "in 2h" is counted from when it was asked, not from after the write
    // (a few milliseconds on, which made it "in 1h 59m").
    let asked_at = engine.now_ms();
    let SendArgs {
        in_,
        at,
        every,
        until,
        ..
    } = args;
    let schedule = match every {
        Some(e) => {
            let expr = match until {
                Some(u) => format!("{e} until {u}"),
                None => e.clone(),
            };
            Some(parse_every(&expr)?)
        }
        None => None,
    };
    let due = match (in_, at) {
        (Some(d), _) => Some(parse_due(d, Mode::Later)?.timestamp_millis()),
        (_, Some(t)) => Some(parse_due(t, Mode::At)?.timestamp_millis()),
        _ => None,
    };
    let conv_id = conversation_for(&args.target, &text, model, store, engine)?;
    if let Some(schedule) = schedule {
        let mut series = engine.new_series(conv_id, Kind::Message, &text, &schedule)?;
        series.model_override = model.map(str::to_owned);
        let id = engine.submit_series(&series)?;
        println!("{id}");
        say_when("first scheduled for", series.next_due_at, asked_at);
        say_if_no_tock_sends(store, engine)?;
        return Ok(());
    }
    let mut item = NewItem::message(conv_id, text, due);
    item.model_override = model.map(str::to_owned);
    let id = engine.submit(item)?;
    println!("{id}");
    if let Some(d) = due.filter(|&d| d > asked_at) {
        say_when("scheduled for", d, asked_at);
    }
    say_if_no_tock_sends(store, engine)?;
    // The id is the output scripts read; why it waits goes to stderr. A tool
    // call waiting for an answer holds its conversation (the TUI asks for
    // the answer before it takes a message there).
    if due.is_none()
        && let Some(a) = store
            .waiting_approvals()?
            .into_iter()
            .find(|a| a.conversation_id == conv_id)
    {
        eprintln!(
            "queued: it waits until approval {} ({}) in this conversation is answered (tock approvals {})",
            a.id,
            crate::sanitize::sanitize_line(&a.tool),
            a.id
        );
    }
    Ok(())
}

/// The conversation `target` names, or a new one for `text`.
pub(super) fn conversation_for(
    target: &ConvArgs,
    text: &str,
    model: Option<&str>,
    store: &Store,
    engine: &Engine,
) -> Result<i64> {
    let ConvArgs { conv, conv_id, new } = target;
    let made_here = conv.is_none() && conv_id.is_none();
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
        // Named after the message at once, as `--help` says: named when
        // sent, it was "Conversation N" until a tock ran (and `tock show
        // TEXT` found nothing).
        (None, None, None) => {
            engine.create_conversation(Some(&crate::store::derive_title(text)), "cli")?
        }
    };
    // A conversation made for this message is the model's, as `/model`
    // makes it: the next `tock send --conv` went to the default model, and
    // read the other model's answers as its own.
    if made_here && let Some(m) = model {
        engine.set_conversation_model(conv_id, Some(m))?;
    }
    Ok(conv_id)
}

/// The item is kept, but only a running tock sends it: with none running
/// on this database, or none allowed to by the config, say so (on stderr:
/// the id is what scripts read).
pub(super) fn say_if_no_tock_sends(store: &crate::store::Store, engine: &Engine) -> Result<()> {
    let config = engine.config();
    let live = store.live_lease_holder(engine.now_ms())?;
    if let Some(l) = live.as_ref().filter(|_| config.is_held()) {
        eprintln!("kept; {}", super::status::held_here(l.pid));
        return Ok(());
    }
    if !config.get().outbox.enabled {
        // A file that cannot be read was said to hold it already.
        if config.error().is_none() {
            eprintln!("kept; {}", super::status::held_by_config(config));
        }
        return Ok(());
    }
    if live.is_none() {
        // With no catch-up, what is due by the time one starts is late.
        let when = if config.get().outbox.grace().is_zero() {
            "catchup_grace is 0s, so once one runs it is marked expired if its time has passed (tock retry sends it)"
        } else {
            "it is sent once `tock` or `tock daemon` runs"
        };
        eprintln!("kept; no tock runs on this database now: {when}");
    }
    Ok(())
}

/// Largest message text `send` takes from stdin or a file.
const MAX_TEXT_BYTES: u64 = 20 * 1024 * 1024;

/// The message text of `send`: the words, or stdin for `-`, or a file.
pub(super) fn message_text(text: &[String], file: Option<&std::path::Path>) -> Result<String> {
    match (file, text) {
        (Some(p), _) => {
            let bytes =
                crate::files::read_regular(p, MAX_TEXT_BYTES).map_err(|e| anyhow!("{e}"))?;
            let text =
                String::from_utf8(bytes).map_err(|_| anyhow!("the message is not UTF-8 text"))?;
            let text = crate::sanitize::without_escapes(&text);
            Ok(crate::sanitize::message_body(&text).to_string())
        }
        (None, [dash]) if dash == "-" => stdin_text(),
        (None, words) => Ok(words.join(" ")),
    }
}

/// All of stdin, as message text (at most [`MAX_TEXT_BYTES`], UTF-8).
pub(super) fn stdin_text() -> Result<String> {
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
    let text =
        String::from_utf8(buf).map_err(|_| anyhow!("the message on stdin is not UTF-8 text"))?;
    // A coloured command's output piped in (`cargo build 2>&1 | tock send -`).
    let text = crate::sanitize::without_escapes(&text);
    Ok(crate::sanitize::message_body(&text).to_string())
}

/// What a send for later resolved to (`--at fri 9am`: which Friday), on
/// stderr: stdout is the id scripts read.
fn say_when(what: &str, at: i64, now: i64) {
    eprintln!("{what} {} ({})", super::local(at), when::countdown(at, now));
}
