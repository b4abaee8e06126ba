//! `tock ask`: send a message now and print the reply on stdout as it
//! streams, for scripts and one-off questions. The message goes through the
//! outbox like any other: it is kept before anything is sent, and the reply
//! is kept in its conversation. With a tock already running on the database
//! that tock sends it, and this one follows the reply as it is saved; with
//! none, this one runs an engine for this conversation only.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, anyhow, bail};
use clap::Args;

use super::send::{ConvArgs, conversation_for, message_text};
use crate::config::ConfigSource;
use crate::engine::Clock;
use crate::engine::{Engine, Event, Options, SystemClock};
use crate::store::{ApprovalStatus, Kind, MessageStatus, NewItem, OutboxItem, Role, Status, Store};

#[derive(Args, Debug)]
pub struct AskArgs {
    #[command(flatten)]
    pub target: ConvArgs,
    /// Read the message from this file (UTF-8 text)
    #[arg(long, value_name = "PATH", conflicts_with = "text")]
    pub file: Option<PathBuf>,
    /// The message (several words are joined); `-` reads it from stdin
    #[arg(required_unless_present = "file", num_args = 1..)]
    pub text: Vec<String>,
}

/// Ctrl+C ended `tock ask`: what was not sent was canceled, a reply
/// streaming was stopped (and kept). The process exits with 130.
#[derive(Debug)]
pub struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Interrupted {}

/// How often the database is read for the turn's state (and, when another
/// tock sends, for the reply's text, which it saves once a second).
const LOOK_EVERY: Duration = Duration::from_millis(200);

pub(super) fn ask(
    args: &AskArgs,
    model: Option<&str>,
    store: &Store,
    config: Arc<ConfigSource>,
) -> Result<()> {
    let text = message_text(&args.text, args.file.as_deref())?;
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
    let submitted = conversation_for(&args.target, &text, model, store, &writer).and_then(|conv| {
        let mut item = NewItem::message(conv, text.clone(), None);
        item.model_override = model.map(str::to_owned);
        Ok((conv, writer.submit(item)?))
    });
    let (conv, item) = match submitted {
        Ok(ids) => ids,
        Err(e) => {
            super::send::give_back_stdin(&args.text, args.file.as_deref(), &text);
            return Err(e);
        }
    };
    let live = store.live_lease_holder(writer.now_ms())?;
    if live.is_none() && (!config.get().outbox.enabled || config.is_held()) {
        bail!(
            "kept as item {item} in conversation {conv}, but {}",
            super::status::held_by_config(&config)
        );
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    rt.block_on(async move {
        // No tock sends: this one does, for this conversation only.
        let engine = live.is_none().then(|| {
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
            engine
        });
        let events = engine.as_ref().map(Engine::subscribe);
        if let Some(e) = &engine {
            e.start();
        }
        let outcome = follow(store, &writer, engine.as_ref(), events, conv, item).await;
        if let Some(e) = engine {
            e.shutdown(Duration::from_millis(1500)).await;
        }
        outcome
    })
}

/// Prints the turn's text until it ends; Ok once the model has answered.
/// Ctrl+C, or a reader that went away (`tock ask … | head -1`), ends it as
/// the user's stop: what is not sent is canceled, a reply is stopped.
async fn follow(
    store: &Store,
    writer: &Engine,
    engine: Option<&Engine>,
    events: Option<tokio::sync::broadcast::Receiver<Event>>,
    conv: i64,
    item: i64,
) -> Result<()> {
    let mut out = Printer::new(std::io::stdout().lock());
    let printed = print_turn(store, &mut out, events, conv, item).await;
    let ended = out.end();
    match printed {
        Ok(Some(Ok(()))) => Ok(ended?),
        Ok(Some(Err(why))) => bail!("{why} (conversation {conv})"),
        Ok(None) => {
            interrupt(store, writer, engine, conv, item).await;
            Err(Interrupted.into())
        }
        Err(e) => {
            interrupt(store, writer, engine, conv, item).await;
            let gone = e
                .downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe);
            // The reader went away: nothing more to say to it.
            Err(if gone { Interrupted.into() } else { e })
        }
    }
}

/// Until the turn ends (Some: answered, or why not) or Ctrl+C (None).
async fn print_turn<W: Write>(
    store: &Store,
    out: &mut Printer<W>,
    mut events: Option<tokio::sync::broadcast::Receiver<Event>>,
    conv: i64,
    item: i64,
) -> Result<Option<std::result::Result<(), String>>> {
    let mut said = Said::default();
    let mut look = tokio::time::interval(LOOK_EVERY);
    loop {
        tokio::select! {
            ev = next_event(&mut events) => {
                match ev {
                    // A message of the turn new here is read from the
                    // database first, after the tail of the one before it.
                    Some(Event::Delta { conversation_id, message_id, offset, text })
                        if conversation_id == conv && out.is_writing(message_id) =>
                    {
                        out.delta(message_id, offset, &text)?;
                        continue;
                    }
                    Some(_) => {}
                    None => events = None,
                }
            }
            _ = look.tick() => {}
            _ = tokio::signal::ctrl_c() => return Ok(None),
        }
        let turn = read_turn(store, conv, item)?;
        for m in &turn.replies {
            out.saved(m.id, &m.content)?;
        }
        said.tell(&turn);
        if turn.end.is_some() {
            return Ok(turn.end);
        }
    }
}

/// The next event of the engine this process runs; never, without one.
async fn next_event(events: &mut Option<tokio::sync::broadcast::Receiver<Event>>) -> Option<Event> {
    use tokio::sync::broadcast::error::RecvError;
    let Some(rx) = events else {
        return std::future::pending().await;
    };
    loop {
        match rx.recv().await {
            Ok(ev) => return Some(ev),
            // Text missed here is read from the database at the next look.
            Err(RecvError::Lagged(_)) => continue,
            Err(RecvError::Closed) => return None,
        }
    }
}

/// Ctrl+C: a message not sent yet is canceled (also one stopped before
/// the model took it, which the engine holds); a reply streaming (or a tool
/// call running) is stopped, and what it said so far is kept.
async fn interrupt(store: &Store, writer: &Engine, engine: Option<&Engine>, conv: i64, item: i64) {
    let status = |store: &Store| store.item(item).ok().flatten().map(|i| i.status);
    let cancel = || {
        if writer.cancel(item).is_ok() {
            eprintln!("tock: canceled item {item}; it was not sent");
        }
    };
    if status(store) == Some(Status::Pending) {
        return cancel();
    }
    let stopped = match engine {
        Some(e) => e.stop(conv),
        None => writer.stop_elsewhere(conv).unwrap_or(false),
    };
    // Until the stop is recorded: a reply kept as stopped (a shutdown under
    // it would leave it to be generated again by the next tock), or a
    // message held unsent.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    while tokio::time::Instant::now() < deadline
        && (status(store) == Some(Status::Sending) || engine.is_some_and(|e| e.is_busy(conv)))
    {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    if status(store) == Some(Status::Pending) {
        cancel();
    } else if stopped {
        eprintln!("tock: stopped; the reply so far is kept in conversation {conv}");
    }
}

/// Where the turn started by one message stands, as the database has it.
struct Turn {
    /// The model's messages of the turn so far, oldest first.
    replies: Vec<crate::store::Message>,
    /// What it waits for now, said once each.
    waits: Option<String>,
    /// Tool calls the model asked for, by message: said once each.
    calls: Vec<(i64, String)>,
    /// None while it goes on; the answer, or why there is none.
    end: Option<std::result::Result<(), String>>,
}

fn read_turn(store: &Store, conv: i64, item_id: i64) -> Result<Turn> {
    let Some(item) = store.item(item_id)? else {
        bail!("item {item_id} was deleted");
    };
    let mut turn = Turn {
        replies: Vec::new(),
        waits: None,
        calls: Vec::new(),
        end: None,
    };
    match item.status {
        Status::Canceled => turn.end = Some(Err(format!("item {item_id} was canceled"))),
        Status::Failed | Status::Expired => {
            let why = item
                .last_error
                .clone()
                .unwrap_or_else(|| item.status.as_str().to_string());
            turn.end = Some(Err(format!(
                "not answered: {}",
                crate::sanitize::sanitize_line(&why)
            )));
        }
        Status::Pending | Status::Sending => turn.waits = waits_for(store, conv, &item)?,
        Status::Sent => {}
    }
    // What came after the item's message, up to the next message of the user's.
    let messages: Vec<crate::store::Message> = match store.user_message_of(item_id)? {
        Some(first) => store
            .messages_after(conv, first)?
            .into_iter()
            .take_while(|m| m.role != Role::User)
            .collect(),
        None => Vec::new(),
    };
    let after_tools: Vec<OutboxItem> = store
        .items_after(conv, item_id)?
        .into_iter()
        .filter(|i| i.kind == Kind::Regenerate)
        .collect();
    for m in messages.iter().filter(|m| m.role == Role::Assistant) {
        for call in m.tool_calls() {
            turn.calls.push((m.id, call.name));
        }
        if m.status != MessageStatus::Superseded {
            turn.replies.push(m.clone());
        }
    }
    if item.status != Status::Sent || turn.end.is_some() {
        return Ok(turn);
    }
    if let Some(failed) = after_tools.iter().find(|i| {
        matches!(
            i.status,
            Status::Failed | Status::Expired | Status::Canceled
        )
    }) {
        let why = failed
            .last_error
            .clone()
            .unwrap_or_else(|| failed.status.as_str().to_string());
        turn.end = Some(Err(format!(
            "the model's answer to the tool results was not had: {}",
            crate::sanitize::sanitize_line(&why)
        )));
        return Ok(turn);
    }
    if let Some(next) = after_tools
        .iter()
        .find(|i| matches!(i.status, Status::Pending | Status::Sending))
    {
        turn.waits = waits_for(store, conv, next)?;
        return Ok(turn);
    }
    if let Some(a) = store
        .approvals(conv)?
        .into_iter()
        .find(|a| a.status == ApprovalStatus::Waiting)
    {
        turn.waits = Some(format!(
            "waiting for your answer to the tool call {} (tock approve {id} / tock deny {id})",
            crate::sanitize::sanitize_line(&a.tool),
            id = a.id
        ));
        return Ok(turn);
    }
    let last = messages
        .iter()
        .rev()
        .find(|m| m.role != Role::Notice && m.status != MessageStatus::Superseded);
    match last {
        Some(m) if m.role == Role::Assistant => match m.status {
            MessageStatus::Complete if m.tool_calls().is_empty() => turn.end = Some(Ok(())),
            // Its tool calls run, or it streams.
            MessageStatus::Complete | MessageStatus::Streaming => {}
            _ => {
                let why = m
                    .error
                    .clone()
                    .unwrap_or_else(|| "the reply was stopped".into());
                turn.end = Some(Err(format!(
                    "the reply was cut: {}",
                    crate::sanitize::sanitize_line(&why)
                )));
            }
        },
        // The calls' results are in, and their answer is about to be asked.
        _ => {}
    }
    Ok(turn)
}

/// Why an item that is not sent yet waits, when it is not just its turn.
fn waits_for(store: &Store, conv: i64, item: &OutboxItem) -> Result<Option<String>> {
    let now = SystemClock.now_ms();
    if let Some(at) = item.next_attempt_at.filter(|&at| at > now) {
        let why = item.last_error.as_deref().unwrap_or("it failed");
        return Ok(Some(format!(
            "{}; trying again {}",
            crate::sanitize::sanitize_line(why),
            crate::when::countdown(at, now)
        )));
    }
    if let Some(a) = store
        .approvals(conv)?
        .into_iter()
        .find(|a| a.status == ApprovalStatus::Waiting)
    {
        return Ok(Some(format!(
            "it waits until the tool call {} in this conversation is answered (tock approve {id} / tock deny {id})",
            crate::sanitize::sanitize_line(&a.tool),
            id = a.id
        )));
    }
    if store
        .conversation(conv)?
        .is_some_and(|c| c.queue_paused_at.is_some())
    {
        return Ok(Some(format!(
            "the conversation's queue is paused (tock resume --conv {conv} lets it go)"
        )));
    }
    Ok(None)
}

/// What was said on stderr, so each thing is said once.
#[derive(Default)]
struct Said {
    waits: Option<String>,
    calls: std::collections::HashSet<(i64, String)>,
}

impl Said {
    fn tell(&mut self, turn: &Turn) {
        if turn.waits != self.waits {
            if let Some(w) = &turn.waits {
                eprintln!("tock: {w}");
            }
            self.waits = turn.waits.clone();
        }
        for call in &turn.calls {
            if self.calls.insert(call.clone()) {
                eprintln!(
                    "tock: the model calls {}",
                    crate::sanitize::sanitize_line(&call.1)
                );
            }
        }
    }
}

/// Writes a reply's text as it grows, made safe as `tock show` makes it:
/// each new piece is the part of its line's sanitized text not yet written
/// (a tab's width depends on what came before it on the line, and a CR at
/// the end may be half of a CRLF, so it waits for what follows).
struct Printer<W: Write> {
    out: W,
    /// The message being written, its text as far as known, and how much
    /// of that text is written.
    current: Option<(i64, String, usize)>,
    /// Nothing written yet, or what was written ends a line.
    at_line_start: bool,
}

impl<W: Write> Printer<W> {
    fn new(out: W) -> Self {
        Self {
            out,
            current: None,
            at_line_start: true,
        }
    }

    /// Whether message `id` is the one being written.
    fn is_writing(&self, id: i64) -> bool {
        self.current.as_ref().is_some_and(|(cur, _, _)| *cur == id)
    }

    /// Text streamed into message `id` at byte `offset` (an engine event).
    fn delta(&mut self, id: i64, offset: usize, text: &str) -> std::io::Result<()> {
        let mut known = match &self.current {
            Some((cur, known, _)) if *cur == id => known.clone(),
            _ => String::new(),
        };
        if offset > known.len() {
            // A piece was missed: the database has it, and the next look reads it.
            return Ok(());
        }
        known.truncate(offset);
        known.push_str(text);
        self.saved(id, &known)
    }

    /// Message `id`'s text as far as it is known (saved, or streamed).
    fn saved(&mut self, id: i64, text: &str) -> std::io::Result<()> {
        let written = match &self.current {
            // Written to its end when the next one began.
            Some((cur, _, _)) if id < *cur => return Ok(()),
            Some((cur, known, written)) if *cur == id => {
                if text.len() <= known.len() {
                    return Ok(());
                }
                *written
            }
            _ => {
                // A new message of the turn (the answer after tool calls).
                if !self.at_line_start {
                    self.out.write_all(b"\n")?;
                    self.at_line_start = true;
                }
                0
            }
        };
        let end = if text.ends_with('\r') {
            text.len() - 1
        } else {
            text.len()
        };
        let end = end.max(written);
        self.write_between(text, written, end)?;
        self.current = Some((id, text.to_string(), end));
        Ok(())
    }

    fn write_between(&mut self, text: &str, from: usize, to: usize) -> std::io::Result<()> {
        let (Some(line), Some(_)) = (text.get(..from), text.get(..to)) else {
            return Ok(());
        };
        let line_start = line.rfind('\n').map_or(0, |i| i + 1);
        let before = crate::sanitize::sanitize(&text[line_start..from]);
        let upto = crate::sanitize::sanitize(&text[line_start..to]);
        let new = upto.get(before.len()..).unwrap_or("");
        if new.is_empty() {
            return Ok(());
        }
        self.out.write_all(new.as_bytes())?;
        self.out.flush()?;
        self.at_line_start = new.ends_with('\n');
        Ok(())
    }

    /// The turn ended: what was held back is written, and the line ended.
    fn end(&mut self) -> std::io::Result<()> {
        if let Some((_, known, written)) = self.current.take() {
            self.write_between(&known, written, known.len())?;
        }
        if !self.at_line_start {
            self.out.write_all(b"\n")?;
            self.at_line_start = true;
        }
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::Printer;

    fn printed(steps: &[(i64, &str)]) -> String {
        let mut buf = Vec::new();
        let mut p = Printer::new(&mut buf);
        for (id, text) in steps {
            p.saved(*id, text).unwrap();
        }
        p.end().unwrap();
        drop(p);
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn text_is_written_once_as_it_grows_and_ends_with_a_newline() {
        assert_eq!(
            printed(&[(1, "Hel"), (1, "Hello"), (1, "Hello, world")]),
            "Hello, world\n"
        );
        assert_eq!(printed(&[(1, "done\n")]), "done\n");
        assert_eq!(printed(&[]), "");
    }

    #[test]
    fn escape_sequences_split_across_pieces_stay_inert() {
        let out = printed(&[(1, "a\x1b"), (1, "a\x1b]52;c;SGVsbG8=\x07b")]);
        assert!(!out.contains('\x1b') && !out.contains('\x07'), "{out:?}");
        assert_eq!(out, "a␛]52;c;SGVsbG8=␇b\n");
    }

    #[test]
    fn a_crlf_split_across_pieces_is_one_line_break() {
        assert_eq!(printed(&[(1, "one\r"), (1, "one\r\ntwo")]), "one\ntwo\n");
        // A CR the reply ends on is shown, not dropped.
        assert_eq!(printed(&[(1, "end\r")]), "end␍\n");
    }

    #[test]
    fn tabs_expand_by_the_column_of_the_whole_line_not_of_the_piece() {
        assert_eq!(printed(&[(1, "ab"), (1, "ab\tc")]), "ab  c\n");
    }

    #[test]
    fn each_message_of_the_turn_starts_on_its_own_line() {
        assert_eq!(
            printed(&[(1, "let me look"), (2, "found it")]),
            "let me look\nfound it\n"
        );
    }

    #[test]
    fn an_earlier_message_read_again_is_not_written_again() {
        assert_eq!(
            printed(&[
                (1, "let me look"),
                (2, "found"),
                (1, "let me look"),
                (2, "found it")
            ]),
            "let me look\nfound it\n"
        );
    }

    #[test]
    fn deltas_and_saves_of_the_same_text_are_written_once() {
        let mut buf = Vec::new();
        let mut p = Printer::new(&mut buf);
        p.delta(7, 0, "one ").unwrap();
        p.delta(7, 4, "two ").unwrap();
        p.saved(7, "one ").unwrap();
        p.saved(7, "one two three").unwrap();
        // A piece beyond what is known waits for the database.
        p.delta(7, 40, "lost?").unwrap();
        p.delta(7, 13, " four").unwrap();
        p.end().unwrap();
        drop(p);
        assert_eq!(String::from_utf8(buf).unwrap(), "one two three four\n");
    }
}
