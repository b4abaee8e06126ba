//! One model turn: dispatch one outbox row, stream the reply into the history.

use std::time::Duration;

use tokio::sync::watch;

use super::reading::{self, End};
use super::{Engine, Event, NoticeKind, StopReason, backoff, tools};
use crate::llm::{ChatMessage, ChatRequest, Image, LlmError, ToolCall};
use crate::store::{Kind, Message, MessageStatus, OutboxItem, Role};

/// Attachment stored with a user message (`parts_json` is a list of these).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    Image {
        name: String,
        mime: String,
        data_base64: String,
    },
    Text {
        name: String,
        content: String,
    },
}

/// Runs the turn for a claimed row; returns the conversation it ran in.
pub(crate) async fn run(
    engine: &Engine,
    item: OutboxItem,
    mut stop: watch::Receiver<Option<StopReason>>,
) -> Option<i64> {
    let store = engine.store();
    let owner = engine.owner().to_string();
    let cfg = engine.config().get();

    let conv_id = match item.conversation_id {
        Some(c) => c,
        None => match store.rehome(item.id, engine.now_ms()) {
            Ok(c) => {
                engine.emit(Event::Conversations);
                c
            }
            Err(e) => {
                fail(
                    engine,
                    &item,
                    &owner,
                    &format!("cannot create a conversation: {e:#}"),
                );
                return None;
            }
        },
    };
    let item = OutboxItem {
        conversation_id: Some(conv_id),
        ..item
    };
    let conversation = match store.conversation(conv_id) {
        Ok(Some(c)) => c,
        Ok(None) => {
            fail(engine, &item, &owner, "the conversation no longer exists");
            return Some(conv_id);
        }
        Err(e) => {
            retry_later(
                engine,
                &item,
                &owner,
                &LlmError::transient(format!("database: {e:#}")),
            );
            return Some(conv_id);
        }
    };
    let model_name = item.model_override.clone().or(conversation.model.clone());
    let resolved = match engine.config().resolve(model_name.as_deref()) {
        Ok(r) => r,
        // The key's command failed: it may answer later (a password manager
        // still locked), so the send backs off as from a network error.
        Err(msg) if engine.config().key_command_failed(model_name.as_deref()) => {
            retry_later(engine, &item, &owner, &LlmError::transient(msg));
            return Some(conv_id);
        }
        // The model cannot be used as the config and this process's
        // environment stand (a key variable not set where the daemon was
        // started, a model renamed): the fix is the user's, so it is held
        // and tried again, not failed at once as a provider's refusal is.
        Err(msg) => {
            hold_for_config(engine, &item, &owner, &msg);
            return Some(conv_id);
        }
    };
    let history = match store.messages(conv_id) {
        Ok(h) => h,
        Err(e) => {
            retry_later(
                engine,
                &item,
                &owner,
                &LlmError::transient(format!("database: {e:#}")),
            );
            return Some(conv_id);
        }
    };
    let role_prompt = conversation
        .role
        .as_ref()
        .and_then(|r| cfg.roles.get(r))
        .map(|r| r.system.clone());
    let tools = if resolved.provider.supports_tools() {
        let mut specs = tools::specs();
        if engine.mcp().configured() {
            // The first turn starts the servers (each bounded by its
            // timeout); later turns use their cached lists.
            tokio::select! {
                mcp = engine.mcp().tool_specs() => specs.extend(mcp),
                _ = stop.changed() => {
                    not_sent(engine, &item, &owner, *stop.borrow());
                    return Some(conv_id);
                }
            }
        }
        specs
    } else {
        Vec::new()
    };
    let mut pace = super::pace::Pace::new(
        conv_id,
        engine.inner.options.persist_every,
        engine.shown_text_every(),
        engine.inner.shown.subscribe(),
    );
    let req = ChatRequest {
        model: resolved.model.clone(),
        system: Some(system_prompt(
            role_prompt.as_deref(),
            engine.now_ms(),
            !tools.is_empty(),
        )),
        messages: build_messages(
            &history,
            &item,
            resolved.vision,
            &reasoning_before_calls(store, &history),
        ),
        tools,
        text_every: pace.text().clone(),
    };

    // Until the provider accepts, a stop means "not sent".
    let started = tokio::select! {
        r = resolved.provider.start(&req) => r,
        _ = stop.changed() => {
            not_sent(engine, &item, &owner, *stop.borrow());
            return Some(conv_id);
        }
    };
    let stream = match started {
        Ok(s) => s,
        Err(e) => {
            if e.is_transient() {
                retry_later(engine, &item, &owner, &e);
            } else {
                fail(engine, &item, &owner, &e.message);
            }
            return Some(conv_id);
        }
    };

    let now = engine.now_ms();
    let reply_id = match store.accept(&item, &owner, &resolved.name, now) {
        Ok(Some(id)) => id,
        Ok(None) => {
            tracing::warn!(
                "item {} was taken over by another dispatcher; abandoning",
                item.id
            );
            return Some(conv_id);
        }
        Err(e) => {
            retry_later(
                engine,
                &item,
                &owner,
                &LlmError::transient(format!("database: {e:#}")),
            );
            return Some(conv_id);
        }
    };
    engine.emit(Event::OutboxRows(vec![item.id]));
    engine.emit(Event::Conversation(conv_id));
    // The first message may just have given the conversation its title.
    let conversation = store
        .conversation(conv_id)
        .ok()
        .flatten()
        .unwrap_or(conversation);
    // A reply generated again after a failure was announced the first time.
    if matches!(item.kind, Kind::Message | Kind::Task) && !item.accepted() {
        let what = if item.kind == Kind::Task {
            "scheduled task fired"
        } else if item.series_id.is_some() {
            "recurring message sent"
        } else {
            "scheduled message sent"
        };
        // Which one: its first words (two sent in one conversation read alike).
        let words = crate::sanitize::excerpt(item.title.as_deref().unwrap_or(&item.text), 40);
        engine.notify(
            NoticeKind::Fired,
            Some(conv_id),
            format!("{what} in “{}”: {words}", conversation.display_title()),
        );
    }

    // Secrets the model echoes (a proxy reflecting headers) are never
    // stored. Each save redacts the whole text so far, so a secret split
    // over two chunks is caught once both arrived.
    let secrets = engine.secrets();
    let redact = |text: &str, cut: bool| crate::llm::http::redact_secrets(text, &secrets, cut);
    let save = |text: &str| {
        if let Err(e) = store.update_streaming(reply_id, &redact(text, true)) {
            tracing::warn!("saving the partial reply: {e:#}");
        }
    };
    // What the front ends are handed is redacted too, and a beginning of a
    // secret is held back until the next chunk settles it: no secret ever
    // reaches a screen, and the offsets are those of the stored text.
    let mut shown = crate::llm::http::StreamRedactor::new(&secrets);
    let show = |(offset, text): (usize, String)| {
        if !text.is_empty() {
            engine.emit(Event::Delta {
                conversation_id: conv_id,
                message_id: reply_id,
                offset,
                text,
            });
        }
    };
    let mut hand_on = |_: usize, text: String| {
        show(shown.push(&text));
        engine.handed_over();
    };
    let thinking = |chars: usize, reasoning: &str| {
        // Kept for the front ends of other processes (they read the row).
        if let Err(e) = store.set_reasoning_chars(reply_id, chars) {
            tracing::warn!("saving how much the model reasoned: {e:#}");
        }
        engine.emit(Event::Thinking {
            conversation_id: conv_id,
            message_id: reply_id,
            chars,
            latest: std::sync::Arc::from(latest_reasoning(reasoning, &secrets)),
        });
    };
    let provider_name = resolved.provider.name();
    let limits = reading::Limits {
        provider: provider_name,
        // Keep-alives and empty chunks reset the provider's idle timeout but
        // not this one: a reply must make progress to keep its conversation busy.
        stream_timeout: resolved.stream_timeout,
        max_reply: Duration::from_secs(cfg.turn.max_reply_secs.max(1)),
        persist_every: engine.inner.options.persist_every,
    };
    let reading::Read {
        end,
        text,
        calls,
        usage,
        stop_reason,
        reasoning,
    } = reading::read(
        stream,
        &mut stop,
        limits,
        &mut pace,
        &mut hand_on,
        save,
        thinking,
    )
    .await;
    // An answer with no word and no call in it (a model that said nothing,
    // or only spaces) answers nothing: generated again, as a cut one is.
    let end = match end {
        End::Done if text.trim().is_empty() && calls.is_empty() => End::Failed(
            LlmError::transient(format!("{}: the answer was empty", provider_name)),
        ),
        end => end,
    };
    // A reply that did not end as the model meant may end in a secret's beginning.
    let cut = !matches!(end, End::Done);
    show(shown.finish(cut));
    let text = redact(&text, cut);
    // Kept with the reply, whatever its end, to be read afterwards
    // (secrets taken out, as from the text).
    if !reasoning.is_empty()
        && let Err(e) = store.set_reasoning(reply_id, &redact(&reasoning, false))
    {
        tracing::warn!("saving the reasoning of reply {reply_id}: {e:#}");
    }
    // Stored whatever the end: a cut or stopped reply was paid for too.
    if let Some(u) = &usage
        && let Err(e) = store.set_message_usage(reply_id, u)
    {
        tracing::warn!("saving the usage of reply {reply_id}: {e:#}");
    }

    let now = engine.now_ms();
    match end {
        End::Done => {
            // The calls as stored and shown: redacted (those that run at
            // once still get what the model sent).
            let stored: Vec<ToolCall> = calls
                .iter()
                .map(|c| tools::redact_call(c, &secrets))
                .collect();
            let calls_json =
                (!calls.is_empty()).then(|| serde_json::to_string(&stored).unwrap_or_default());
            // Ended by the model's length limit: whole as far as it goes,
            // and said, so that the reader knows to ask for the rest.
            let cut_short = stop_reason
                .as_deref()
                .filter(|r| matches!(*r, "max_tokens" | "length"))
                .map(|r| {
                    format!(
                        "cut short: the reply reached the model's length limit ({r}); ask it to go on"
                    )
                });
            let saved = write_end(engine, reply_id, &mut stop, || {
                store.finish_message(
                    reply_id,
                    &text,
                    MessageStatus::Complete,
                    cut_short.as_deref(),
                    calls_json.as_deref(),
                    engine.now_ms(),
                )
            })
            .await;
            let finished_here = matches!(saved, Ok(true));
            match saved {
                Ok(true) => {
                    if !calls.is_empty() {
                        tools::handle_calls(engine, conv_id, reply_id, &calls, &cfg.turn, &stop)
                            .await;
                    }
                }
                Ok(false) => tracing::warn!(
                    "reply {reply_id} was taken over by another dispatcher, or its conversation deleted"
                ),
                Err(e) => tracing::error!("saving reply {reply_id}: {e:#}"),
            }
            // A reply that ends asking for approval is not finished: its
            // notice ("… waits for your approval") is the one that stands.
            // Nor is one this process did not finish (another took it
            // over, or its conversation is gone): a second notice was
            // told for one reply, or one for a conversation deleted.
            let awaits_approval = store
                .waiting_approvals()
                .is_ok_and(|waiting| waiting.iter().any(|a| a.conversation_id == conv_id));
            if finished_here && !awaits_approval {
                engine.notify(
                    NoticeKind::ReplyFinished,
                    Some(conv_id),
                    format!("reply finished in “{}”", conversation.display_title()),
                );
            }
        }
        End::Failed(e) => {
            let msg = crate::sanitize::sanitize_line(&e.message).into_owned();
            let reason = format!("interrupted: {msg}");
            // The same budget and back-off as before acceptance (`attempts`
            // was incremented when the row was claimed).
            let attempts = item.attempts + 1;
            let retry = (e.is_transient() && attempts < cfg.outbox.max_attempts.max(1))
                .then(|| now + retry_wait(&cfg.outbox, attempts, &e).as_millis() as i64);
            let error = match retry {
                Some(_) => format!("reply {reason}"),
                None if e.is_transient() => format!("reply {reason} (after {attempts} attempts)"),
                None => format!("reply {reason}"),
            };
            // The pause goes first, and the failure is written no earlier
            // than it: a failure written before the pause reads as no cause
            // of it (an older one passed over), and the queue as stopped.
            if retry.is_none() {
                hold_queue_behind_unanswered(engine, Some(conv_id));
            }
            let saved = write_end(engine, reply_id, &mut stop, || {
                let at = engine.now_ms();
                store
                    .reply_interrupted(item.id, &owner, reply_id, &text, &reason, retry, &error, at)
            })
            .await;
            match saved {
                Ok(true) => {}
                Ok(false) => tracing::warn!("reply {reply_id} was recovered by another dispatcher"),
                Err(err) => tracing::error!("saving reply {reply_id}: {err:#}"),
            }
            let title = conversation.display_title();
            match retry {
                Some(at) => {
                    tracing::info!(item = item.id, attempts, retry_at = at, "reply {reason}");
                    engine.notify(
                        NoticeKind::ReplyRetrying,
                        Some(conv_id),
                        // A time of day, not "in 4s": the line stays in the
                        // status bar and the notice history, and a countdown
                        // read there later was long past.
                        format!(
                            "reply in “{title}” {reason}; generating it again at {}",
                            engine.inner.options.zone.time_of_day(at)
                        ),
                    );
                }
                None => engine.notify(
                    NoticeKind::Failed,
                    Some(conv_id),
                    format!("reply in “{title}” failed: {error}"),
                ),
            }
            engine.emit(Event::OutboxRows(vec![item.id]));
        }
        End::Stopped(StopReason::User) => {
            // Paused before the turn ends, so the dispatcher cannot take
            // what was queued behind this reply in the meantime (a front
            // end's own pause write may come later).
            engine.pause_after_stop(conv_id);
            let _ = write_end(engine, reply_id, &mut stop, || {
                store.finish_message(
                    reply_id,
                    &text,
                    MessageStatus::Interrupted,
                    Some("stopped by you"),
                    None,
                    now,
                )
            })
            .await;
        }
        End::Stopped(StopReason::Regenerate) => {
            // The queue is not paused: the user asked for this reply again,
            // and its row goes first (`retry_reply`), before what is queued.
            let _ = write_end(engine, reply_id, &mut stop, || {
                store.finish_message(
                    reply_id,
                    &text,
                    MessageStatus::Interrupted,
                    Some("stopped for a new reply"),
                    None,
                    now,
                )
            })
            .await;
            if let Err(e) = store.retry_reply(item.id, now) {
                tracing::warn!("generating reply {reply_id} again: {e:#}");
            }
            engine.emit(Event::OutboxRows(vec![item.id]));
            engine.wake();
        }
        End::Stopped(StopReason::Shutdown) => {
            // Leave it as a crash would: the next start marks it interrupted and regenerates it.
            let _ = store.update_streaming(reply_id, &text);
        }
    }
    engine.emit(Event::Conversation(conv_id));
    engine.emit(Event::TurnFinished {
        conversation_id: conv_id,
    });
    Some(conv_id)
}

/// How long the end of a reply waits between tries to write it, at most.
const WRITE_END_MAX_WAIT: Duration = Duration::from_secs(5);

/// The end of a reply is written whatever holds the database up: another
/// process's long write (a backup, `sqlite3`, a big migration) or a full
/// disk only delays it. Until it is written this turn is not over, so its
/// conversation stays busy here and nothing queued behind the reply is sent
/// before its answer is stored. Only a shutdown gives up: the reply is left
/// as streaming, and the next start asks for it again (as after a crash).
async fn write_end<T>(
    engine: &Engine,
    reply_id: i64,
    stop: &mut watch::Receiver<Option<StopReason>>,
    mut write: impl FnMut() -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let mut wait = Duration::from_millis(100);
    let mut told = false;
    loop {
        let err = match write() {
            Ok(v) => {
                if told {
                    tracing::info!("reply {reply_id} saved after all");
                }
                return Ok(v);
            }
            Err(e) => e,
        };
        if *stop.borrow() == Some(StopReason::Shutdown) {
            return Err(err);
        }
        if !told {
            told = true;
            tracing::warn!("saving reply {reply_id}: {err:#}; trying again until it is saved");
            engine.notify(
                NoticeKind::Info,
                None,
                format!(
                    "a reply could not be saved yet ({}); tock keeps trying",
                    crate::store::error_line(&err)
                ),
            );
        }
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            // A shutdown is noticed at once; the sender gone, the wait runs out.
            r = stop.changed() => if r.is_err() { tokio::time::sleep(wait).await },
        }
        wait = (wait * 2).min(WRITE_END_MAX_WAIT);
    }
}

/// A stop before the provider accepted: the user's stop of a message
/// typed to go now holds it, paused, in its conversation (a deliberate stop
/// is no failure; a front end may take it back to its composer); of
/// anything else it fails the row. A shutdown leaves it to be sent by the
/// next start.
fn not_sent(engine: &Engine, item: &OutboxItem, owner: &str, reason: Option<StopReason>) {
    match reason {
        Some(StopReason::User)
            if item.held_when_stopped_unsent()
                && engine
                    .store()
                    .hold_unsent(item.id, owner, engine.now_ms())
                    .unwrap_or_else(|e| {
                        tracing::error!("holding {} after a stop: {e:#}", item.id);
                        false
                    }) =>
        {
            engine.emit(Event::OutboxRows(vec![item.id]));
            engine.emit(Event::Conversations);
        }
        Some(StopReason::User) => {
            if let Some(conv) = item.conversation_id {
                engine.pause_after_stop(conv);
            }
            fail(engine, item, owner, "stopped before it was sent")
        }
        _ => {
            let _ = engine
                .store()
                .release_unattempted(item.id, owner, engine.now_ms());
            engine.emit(Event::OutboxRows(vec![item.id]));
        }
    }
}

fn fail(engine: &Engine, item: &OutboxItem, owner: &str, reason: &str) {
    let reason = crate::sanitize::sanitize_line(reason).into_owned();
    // A reply that failed, or a message that could not be sent (the user's,
    // or a task the model scheduled, which is a message of the
    // conversation too): what was queued behind it waits (sent now, it
    // would go out of the order the conversation was given them in).
    if (item.accepted() && item.kind != Kind::Regenerate)
        || matches!(item.kind, Kind::Message | Kind::Queued | Kind::Task)
    {
        hold_queue_behind_unanswered(engine, item.conversation_id);
    }
    match engine
        .store()
        .mark_failed(item.id, owner, &reason, engine.now_ms())
    {
        Ok(_) if item.kind == Kind::Regenerate => {
            // The reply it put aside is back: the history changed.
            if let Some(conv) = item.conversation_id {
                engine.emit(Event::Conversation(conv));
            }
            engine.notify(
                NoticeKind::RegenerateFailed,
                item.conversation_id,
                format!("generating the reply again failed: {reason}; the earlier reply is kept"),
            )
        }
        Ok(_) => engine.notify(
            NoticeKind::Failed,
            item.conversation_id,
            format!("failed: {reason}"),
        ),
        Err(e) => tracing::error!("marking {} failed: {e:#}", item.id),
    }
    engine.emit(Event::OutboxRows(vec![item.id]));
}

/// A message of the conversation whose reply failed for good is left
/// unanswered: what was queued behind it is held, as after a stop, rather
/// than sent into a context missing that answer (retrying the reply, or
/// resuming, lets it go).
fn hold_queue_behind_unanswered(engine: &Engine, conversation_id: Option<i64>) {
    if let Some(conv) = conversation_id {
        engine.pause_after_stop(conv);
    }
}

/// A transient failure before acceptance: back-off, or failed after max attempts.
fn retry_later(engine: &Engine, item: &OutboxItem, owner: &str, e: &LlmError) {
    let cfg = engine.config().get();
    // `attempts` was incremented when the row was claimed.
    let attempts = item.attempts + 1;
    if attempts >= cfg.outbox.max_attempts.max(1) {
        fail(
            engine,
            item,
            owner,
            &format!("{} (after {attempts} attempts)", e.message),
        );
        return;
    }
    let wait = retry_wait(&cfg.outbox, attempts, e);
    let now = engine.now_ms();
    let msg = crate::sanitize::sanitize_line(&e.message).into_owned();
    if let Err(err) =
        engine
            .store()
            .release_for_retry(item.id, owner, &msg, now + wait.as_millis() as i64, now)
    {
        tracing::error!("releasing {}: {err:#}", item.id);
    }
    tracing::info!(item = item.id, attempts, ?wait, "transient failure: {msg}");
    engine.emit(Event::OutboxRows(vec![item.id]));
}

/// How often an item held by the config (see [`hold_for_config`]) is tried
/// again; a reload of the config that changes its models tries it at once.
pub(crate) const CONFIG_HOLD: Duration = Duration::from_secs(60);

/// `item`'s model cannot be used as things stand: back to pending, the
/// attempt not counted, tried again in [`CONFIG_HOLD`]; said once.
fn hold_for_config(engine: &Engine, item: &OutboxItem, owner: &str, reason: &str) {
    let now = engine.now_ms();
    let reason = format!("held: {}", crate::sanitize::sanitize_line(reason));
    match engine.store().release_held(
        item.id,
        owner,
        &reason,
        now + CONFIG_HOLD.as_millis() as i64,
        now,
    ) {
        Ok(true) if item.last_error.as_deref() != Some(reason.as_str()) => {
            tracing::warn!(item = item.id, "{reason}");
            engine.notify(
                NoticeKind::Info,
                item.conversation_id,
                format!("not sent yet, {reason}"),
            );
        }
        Ok(_) => {}
        Err(err) => tracing::error!("holding {}: {err:#}", item.id),
    }
    engine.emit(Event::OutboxRows(vec![item.id]));
}

/// Back-off before attempt `attempts + 1`; a provider's Retry-After wins if longer.
fn retry_wait(outbox: &crate::config::OutboxConfig, attempts: i64, e: &LlmError) -> Duration {
    let wait = backoff(
        Duration::from_secs(outbox.backoff_base_secs.max(1)),
        attempts,
    );
    match e.kind {
        crate::llm::ErrorKind::Transient {
            retry_after: Some(ra),
        } => wait.max(ra),
        _ => wait,
    }
}

pub(crate) fn system_prompt(role: Option<&str>, now_ms: i64, tools: bool) -> String {
    let local = chrono::DateTime::from_timestamp_millis(now_ms)
        .unwrap_or_default()
        .with_timezone(&chrono::Local);
    let tz = std::env::var("TZ")
        .ok()
        .filter(|t| !t.is_empty())
        .map(|t| format!(" ({t})"))
        .unwrap_or_default();
    let mut s = String::new();
    if let Some(r) = role {
        s.push_str(r);
        s.push_str("\n\n");
    }
    s.push_str(&format!(
        "The current local date and time is {} (UTC{}){tz}.",
        local.format("%A %Y-%m-%d %H:%M"),
        local.format("%:z")
    ));
    if tools {
        s.push_str(
            " You can schedule a follow-up with the schedule_task tool: when it fires, its instruction \
             comes back into this conversation as a user message starting with [Scheduled task].",
        );
    }
    s
}

/// What the model reasoned before each reply of `history` that called tools
/// (kept with the reply), by reply: sent back with those calls.
fn reasoning_before_calls(
    store: &crate::store::Store,
    history: &[Message],
) -> std::collections::HashMap<i64, String> {
    history
        .iter()
        .filter(|m| m.role == Role::Assistant && m.tool_calls_json.is_some())
        .filter_map(|m| match store.reasoning(m.id) {
            Ok(r) => Some((m.id, r?)),
            Err(e) => {
                tracing::warn!("reading the reasoning of reply {}: {e:#}", m.id);
                None
            }
        })
        .collect()
}

/// The history as the model should see it: complete messages only (interrupted
/// and superseded replies are shown to the user, not sent back), tool calls
/// paired with their results, then the new user message.
pub(crate) fn build_messages(
    history: &[Message],
    item: &OutboxItem,
    vision: bool,
    reasoning: &std::collections::HashMap<i64, String>,
) -> Vec<ChatMessage> {
    use std::collections::{HashMap, HashSet};
    // Each reply's calls that have a result: the tool messages after it, up
    // to the next reply. (Providers reuse ids from reply to reply, `call_1`:
    // a result is only ever its own reply's.)
    let mut answered: HashMap<usize, HashSet<&str>> = HashMap::new();
    let mut reply = None;
    for (i, m) in history.iter().enumerate() {
        match m.role {
            Role::Assistant => reply = Some(i),
            Role::Tool if m.status == MessageStatus::Complete => {
                if let (Some(r), Some(id)) = (reply, m.tool_call_id.as_deref()) {
                    answered.entry(r).or_default().insert(id);
                }
            }
            _ => {}
        }
    }
    // The last reply's calls, by id as stored and as sent: a result goes
    // with them or not at all (after a reply put aside, with none). An id
    // an earlier reply already used (`call_0` of every Ollama reply) is
    // sent as another, so that no two calls of one request share an id
    // (Anthropic refuses that), and its results follow it; two calls of one
    // reply stored under one id (before tock gave each its own) take that
    // id's results in turn.
    let mut offered: HashMap<String, std::collections::VecDeque<String>> = HashMap::new();
    let mut sent_ids: HashSet<String> = HashSet::new();
    let mut out = Vec::with_capacity(history.len() + 1);
    for (i, m) in history.iter().enumerate() {
        if m.role == Role::Assistant {
            offered.clear();
        }
        if m.status != MessageStatus::Complete {
            continue;
        }
        match m.role {
            Role::User => out.push(user_message(&m.content, m.parts_json.as_deref(), vision)),
            Role::Assistant => {
                let calls: Vec<ToolCall> = m
                    .tool_calls()
                    .into_iter()
                    .filter(|c| answered.get(&i).is_some_and(|a| a.contains(c.id.as_str())))
                    .map(|mut c| {
                        let id = reading::unused_call_id(&c.id, |id| sent_ids.contains(id));
                        sent_ids.insert(id.clone());
                        offered
                            .entry(std::mem::replace(&mut c.id, id.clone()))
                            .or_default()
                            .push_back(id);
                        c
                    })
                    .collect();
                if m.content.is_empty() && calls.is_empty() {
                    continue;
                }
                let reasoning = (!calls.is_empty())
                    .then(|| reasoning.get(&m.id).cloned())
                    .flatten();
                out.push(ChatMessage::Assistant {
                    text: m.content.clone(),
                    tool_calls: calls,
                    reasoning,
                });
            }
            Role::Tool => {
                let Some(id) = m.tool_call_id.as_deref() else {
                    continue;
                };
                if let Some(sent) = offered.get_mut(id) {
                    // The last of them keeps any further result.
                    let to = match sent.len() {
                        0 => continue,
                        1 => sent[0].clone(),
                        _ => sent.pop_front().unwrap_or_default(),
                    };
                    out.push(tool_message(&to, m, vision));
                }
            }
            Role::Notice => {}
        }
    }
    // A reply generated again after acceptance: the user message is already
    // in the history above.
    let in_history = history
        .iter()
        .any(|m| m.role == Role::User && m.outbox_id == Some(item.id));
    if let Some(text) = item.user_text().filter(|_| !in_history) {
        out.push(user_message(&text, item.parts_json.as_deref(), vision));
    }
    out
}

/// A tool's result with the images it returned (stored as its
/// attachments); for a model without vision, a note for each image instead,
/// so the model knows one was returned but not shown.
fn tool_message(call_id: &str, m: &Message, vision: bool) -> ChatMessage {
    let parts: Vec<Part> = m
        .parts_json
        .as_deref()
        .and_then(|j| serde_json::from_str(j).ok())
        .unwrap_or_default();
    let mut content = m.content.clone();
    let mut images = Vec::new();
    for p in parts {
        let Part::Image {
            mime, data_base64, ..
        } = p
        else {
            continue;
        };
        if vision {
            images.push(Image { mime, data_base64 });
        } else {
            let size = crate::files::human_size(data_base64.len() as u64 / 4 * 3);
            if !content.is_empty() {
                content.push('\n');
            }
            content.push_str(&format!(
                "[the tool returned an image ({mime}, {size}); it is not shown to you: this model does not take images]"
            ));
        }
    }
    ChatMessage::ToolResult {
        call_id: call_id.to_string(),
        name: m.model.clone().unwrap_or_default(),
        content,
        images,
    }
}

fn user_message(text: &str, parts_json: Option<&str>, vision: bool) -> ChatMessage {
    let parts: Vec<Part> = parts_json
        .and_then(|j| serde_json::from_str(j).ok())
        .unwrap_or_default();
    let mut text = text.to_string();
    let mut images = Vec::new();
    for p in parts {
        match p {
            Part::Image {
                name,
                mime,
                data_base64,
            } => {
                if vision {
                    images.push(Image { mime, data_base64 });
                } else {
                    text.push_str(&format!(
                        "\n\n[image {name} not sent: this model does not take images]"
                    ));
                }
            }
            Part::Text { name, content } => {
                text.push_str(&format!(
                    "\n\n--- {name} ---\n{content}\n--- end of {name} ---"
                ));
            }
        }
    }
    ChatMessage::User { text, images }
}

/// The end of the reasoning so far, for a front end to show as it comes:
/// its last [`super::THINKING_LATEST_BYTES`], secrets taken out. The part
/// redacted reaches back the length of the longest secret before that, so
/// a secret the cut falls in is still whole there (and cut off with it),
/// and a secret's beginning at the end is held back.
fn latest_reasoning(reasoning: &str, secrets: &[String]) -> String {
    let longest = secrets.iter().map(String::len).max().unwrap_or(0);
    let start = reasoning.floor_char_boundary(
        reasoning
            .len()
            .saturating_sub(super::THINKING_LATEST_BYTES + longest),
    );
    let redacted = crate::llm::http::redact_secrets(&reasoning[start..], secrets, true);
    let from =
        redacted.floor_char_boundary(redacted.len().saturating_sub(super::THINKING_LATEST_BYTES));
    redacted[from..].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{NewItem, Store};

    #[test]
    fn the_latest_reasoning_is_its_end_with_secrets_taken_out() {
        let secret = "sk-live-0123456789abcdef".to_string();
        let secrets = vec![secret.clone()];
        let short = format!("I must not say {secret} aloud.");
        assert_eq!(
            latest_reasoning(&short, &secrets),
            "I must not say <redacted> aloud."
        );
        // The cut falls inside the secret: no piece of it is left.
        let long = format!(
            "{secret}{}",
            "é".repeat(super::super::THINKING_LATEST_BYTES / 2 - 4)
        );
        let latest = latest_reasoning(&long, &secrets);
        assert!(
            latest.len() <= super::super::THINKING_LATEST_BYTES,
            "{}",
            latest.len()
        );
        assert!(
            !latest.contains("abcdef") && !latest.contains("sk-"),
            "{latest}"
        );
        // Its beginning at the end is taken out too.
        assert_eq!(
            latest_reasoning("thinking sk-live-0123", &secrets),
            "thinking <redacted>"
        );
    }

    fn message(id: i64, role: Role, status: MessageStatus, content: &str) -> Message {
        Message {
            id,
            conversation_id: 1,
            role,
            content: content.into(),
            status,
            model: None,
            outbox_id: None,
            parts_json: None,
            tool_calls_json: None,
            tool_call_id: None,
            error: None,
            created_at: 0,
        }
    }

    fn calling(id: i64, status: MessageStatus, call: &str) -> Message {
        let mut m = message(id, Role::Assistant, status, "");
        m.tool_calls_json = Some(format!(
            r#"[{{"id":"{call}","name":"schedule_task","arguments":"{{}}"}}]"#
        ));
        m
    }

    fn result(id: i64, call: &str) -> Message {
        let mut m = message(id, Role::Tool, MessageStatus::Complete, "{}");
        m.tool_call_id = Some(call.into());
        m
    }

    /// A result goes with its own reply's call, never with an earlier
    /// reply's call of the same id: a reply put aside (regenerated) with
    /// its call answered later left that result in every request, with
    /// no call before it, which providers refuse.
    #[test]
    fn a_result_is_sent_only_after_its_own_call() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db")).unwrap();
        let conv = store.create_conversation(None, "user", 0).unwrap();
        let id = store
            .enqueue(&NewItem::message(conv, "next", None), 0)
            .unwrap();
        let item = store.item(id).unwrap().unwrap();
        let history = [
            message(1, Role::User, MessageStatus::Complete, "remind a"),
            calling(2, MessageStatus::Complete, "call_1"),
            result(3, "call_1"),
            message(4, Role::Assistant, MessageStatus::Complete, "noted"),
            message(5, Role::User, MessageStatus::Complete, "remind b"),
            calling(6, MessageStatus::Superseded, "call_1"),
            result(7, "call_1"),
        ];
        let out = build_messages(&history, &item, false, &Default::default());
        let tools = out
            .iter()
            .filter(|m| matches!(m, ChatMessage::ToolResult { .. }))
            .count();
        assert_eq!(tools, 1, "{out:?}");
        assert_eq!(out.len(), 6, "{out:?}");
        // Two replies that each made `call_1`, both answered: sent under
        // two ids, each result under its own call's.
        let both = [
            &history[..5],
            &[
                calling(6, MessageStatus::Complete, "call_1"),
                result(7, "call_1"),
            ][..],
        ]
        .concat();
        let out = build_messages(&both, &item, false, &Default::default());
        let mut calls = Vec::new();
        let mut results = Vec::new();
        for m in &out {
            match m {
                ChatMessage::Assistant { tool_calls, .. } => {
                    calls.extend(tool_calls.iter().map(|c| c.id.clone()))
                }
                ChatMessage::ToolResult { call_id, .. } => results.push(call_id.clone()),
                _ => {}
            }
        }
        assert_eq!(calls, ["call_1", "call_1_2"], "{out:?}");
        assert_eq!(results, calls, "{out:?}");
        // One reply's two calls stored under one id: each takes one result.
        let mut twice = calling(2, MessageStatus::Complete, "dup");
        twice.tool_calls_json = Some(
            r#"[{"id":"dup","name":"a","arguments":"{}"},{"id":"dup","name":"b","arguments":"{}"}]"#
                .into(),
        );
        let stored = [
            message(1, Role::User, MessageStatus::Complete, "remind a"),
            twice,
            result(3, "dup"),
            result(4, "dup"),
        ];
        let out = build_messages(&stored, &item, false, &Default::default());
        let ids: Vec<&str> = out
            .iter()
            .flat_map(|m| match m {
                ChatMessage::Assistant { tool_calls, .. } => {
                    tool_calls.iter().map(|c| c.id.as_str()).collect()
                }
                ChatMessage::ToolResult { call_id, .. } => vec![call_id.as_str()],
                _ => vec![],
            })
            .collect();
        assert_eq!(ids, ["dup", "dup_2", "dup", "dup_2"], "{out:?}");
        // A result with no reply before it at all is left out too.
        let out = build_messages(&history[4..], &item, false, &Default::default());
        assert!(
            !out.iter()
                .any(|m| matches!(m, ChatMessage::ToolResult { .. })),
            "{out:?}"
        );
    }
}
