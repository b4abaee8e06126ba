//! Streamed text reaches the front ends in batches: at most one `Delta` per
//! 100 ms however fast the tokens come, the first and the last text at once,
//! nothing lost, nothing out of order, and a stop is still seen at once.
//! Time is tokio's paused clock.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{T0, options, settle};
use futures::future::BoxFuture;
use tock::config::{Config, ConfigSource};
use tock::engine::{Engine, Event, ManualClock, Options};
use tock::llm::{ChatRequest, EventStream, LlmError, Provider, StreamEvent, TextPace};
use tock::store::{MessageStatus, Role, Store};
use tokio::time::Instant;

/// What the provider streams: `lead` at once (empty: nothing), then
/// `tokens` texts ("t0 ", "t1 ", …), `burst` at a time `gap` apart, then
/// Done.
#[derive(Clone, Copy)]
struct Stream {
    lead: &'static str,
    tokens: usize,
    gap: Duration,
    burst: usize,
}

impl Stream {
    /// Each token on its own.
    fn new(tokens: usize, gap: Duration) -> Self {
        Self {
            lead: "",
            tokens,
            gap,
            burst: 1,
        }
    }
}

struct Paced {
    stream: Stream,
    /// How often each request says its text is taken (it may change).
    text_every: Arc<Mutex<Vec<TextPace>>>,
}

impl Provider for Paced {
    fn name(&self) -> &'static str {
        "paced"
    }
    fn start<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<EventStream, LlmError>> {
        let Stream {
            lead,
            tokens,
            gap,
            burst,
        } = self.stream;
        self.text_every.lock().unwrap().push(req.text_every.clone());
        Box::pin(async move {
            // Sent on a timeline of its own, as a server does: what arrives
            // while the engine is not reading waits in the channel, as it
            // would in a socket.
            let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
            if !lead.is_empty() {
                let _ = tx.send(Ok(StreamEvent::Text(lead.to_string())));
            }
            tokio::spawn(async move {
                for i in 0..=tokens {
                    // No gap: all of it is there at once (a backlog).
                    if !gap.is_zero() && i % burst.max(1) == 0 {
                        tokio::time::sleep(gap).await;
                    }
                    let ev = if i == tokens {
                        StreamEvent::Done { stop_reason: None }
                    } else {
                        StreamEvent::Text(format!("t{i} "))
                    };
                    if tx.send(Ok(ev)).is_err() {
                        return;
                    }
                }
            });
            let texts =
                futures::stream::unfold(
                    rx,
                    |mut rx| async move { rx.recv().await.map(|ev| (ev, rx)) },
                );
            Ok(Box::pin(texts) as EventStream)
        })
    }
}

/// An engine on a fresh database whose provider streams `tokens` texts
/// `gap` apart, already answering a message sent in a new conversation.
struct Reply {
    _dir: tempfile::TempDir,
    e: Engine,
    events: tokio::sync::broadcast::Receiver<Event>,
    conv: i64,
    text_every: Arc<Mutex<Vec<TextPace>>>,
}

impl Reply {
    fn start(tokens: usize, gap: Duration) -> Self {
        Self::start_with(tokens, gap, |_, _| {})
    }

    /// The same, after `before_start` (given the engine and the reply's
    /// conversation) has run.
    fn start_with(tokens: usize, gap: Duration, before_start: impl FnOnce(&Engine, i64)) -> Self {
        Self::of(Stream::new(tokens, gap), options(), before_start)
    }

    /// The provider streaming `stream`, the engine with `options`.
    fn of(stream: Stream, options: Options, before_start: impl FnOnce(&Engine, i64)) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("tock.db")).unwrap();
        let text_every = Arc::default();
        let provider = Arc::new(Paced {
            stream,
            text_every: Arc::clone(&text_every),
        });
        let config = Arc::new(ConfigSource::from_config(Config::default()).with_provider(provider));
        let e = Engine::new(store, config, Arc::new(ManualClock::new(T0)), options);
        let events = e.subscribe();
        let conv = e
            .store()
            .create_conversation(Some("c"), "user", T0)
            .unwrap();
        before_start(&e, conv);
        e.start();
        e.send_text(conv, "go").unwrap();
        Self {
            _dir: dir,
            e,
            events,
            conv,
            text_every,
        }
    }

    /// The pace the provider was last told.
    fn pace(&self) -> Duration {
        self.text_every.lock().unwrap().last().unwrap().get()
    }

    /// The first gap at that pace the provider was told.
    fn first_gap(&self) -> Duration {
        self.text_every.lock().unwrap().last().unwrap().first()
    }

    /// Whether the reply is stored as no longer streaming.
    fn ended(&self) -> bool {
        self.e
            .store()
            .messages(self.conv)
            .unwrap()
            .iter()
            .any(|m| m.role == Role::Assistant && m.status != MessageStatus::Streaming)
    }
}

/// The reply's text as stored so far (empty before it is).
fn stored_reply(e: &Engine, conv: i64) -> String {
    e.store()
        .messages(conv)
        .unwrap()
        .into_iter()
        .find(|m| m.role == Role::Assistant)
        .map(|m| m.content)
        .unwrap_or_default()
}

fn expected(tokens: usize) -> String {
    (0..tokens).map(|i| format!("t{i} ")).collect()
}

/// Deltas of `reply`'s conversation received until the reply is no longer
/// streaming, with the (paused) time each arrived.
async fn deltas_until_done(r: &mut Reply) -> Vec<(Instant, String)> {
    let mut got = Vec::new();
    for _ in 0..100_000 {
        match tokio::time::timeout(Duration::from_secs(5), r.events.recv()).await {
            Ok(Ok(Event::Delta { text, .. })) => got.push((Instant::now(), text)),
            Ok(Ok(_)) => {}
            Ok(Err(e)) => panic!("events: {e}"),
            Err(_) => break,
        }
        if r.ended() {
            break;
        }
    }
    // What is emitted right after the reply was stored is taken too.
    settle().await;
    while let Ok(ev) = r.events.try_recv() {
        if let Event::Delta { text, .. } = ev {
            got.push((Instant::now(), text));
        }
    }
    got
}

#[tokio::test(start_paused = true)]
async fn tokens_arriving_every_10_ms_reach_front_ends_in_deltas_100_ms_apart() {
    let tokens = 200;
    let start = Instant::now();
    let mut r = Reply::start(tokens, Duration::from_millis(10));
    let deltas = deltas_until_done(&mut r).await;

    let joined: String = deltas.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(joined, expected(tokens), "every token, once, in order");
    assert_eq!(
        r.pace(),
        Duration::from_millis(100),
        "the provider is told text is taken ten times a second"
    );
    // 2 s of tokens: about 20 deltas (one per 100 ms), not 200.
    assert!(
        (15..=25).contains(&deltas.len()),
        "{} deltas for {tokens} tokens",
        deltas.len()
    );
    // The first token is handed on as it arrives (10 ms after the start).
    assert_eq!(deltas[0].1, "t0 ");
    assert!(
        deltas[0].0 - start <= Duration::from_millis(11),
        "first text after {:?}",
        deltas[0].0 - start
    );
    for pair in deltas.windows(2) {
        let gap = pair[1].0 - pair[0].0;
        assert!(gap >= Duration::from_millis(100), "deltas {gap:?} apart");
    }
    let reply =
        r.e.store()
            .messages(r.conv)
            .unwrap()
            .into_iter()
            .find(|m| m.role == Role::Assistant)
            .unwrap();
    assert_eq!(
        (reply.status, reply.content),
        (MessageStatus::Complete, expected(tokens))
    );
}

#[tokio::test(start_paused = true)]
async fn tokens_slower_than_the_pace_each_go_out_at_once() {
    let tokens = 20;
    let start = Instant::now();
    let mut r = Reply::start(tokens, Duration::from_millis(150));
    let deltas = deltas_until_done(&mut r).await;
    // Under 10 tokens/s nothing waits for company: one delta per token, as
    // it arrives.
    let texts: Vec<&str> = deltas.iter().map(|(_, t)| t.as_str()).collect();
    let each: Vec<String> = (0..tokens).map(|i| format!("t{i} ")).collect();
    assert_eq!(texts, each);
    for (i, (at, _)) in deltas.iter().enumerate() {
        let arrived = Duration::from_millis(150) * (i as u32 + 1);
        assert!(
            *at - start >= arrived && *at - start <= arrived + Duration::from_millis(1),
            "token {i} arrived at {arrived:?}, handed on at {:?}",
            *at - start
        );
    }
}

/// At a model's pace (30 tokens/s, a token every 33 ms) text that falls
/// due goes out with the next token to arrive, not on a timer of its own,
/// and the last text goes out with the end of the stream, not 100 ms later.
#[tokio::test(start_paused = true)]
async fn at_a_models_pace_text_goes_out_with_an_arriving_token_and_the_last_at_once() {
    let tokens = 60;
    let gap = Duration::from_millis(33);
    let start = Instant::now();
    let mut r = Reply::start(tokens, gap);
    let deltas = deltas_until_done(&mut r).await;
    let joined: String = deltas.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(joined, expected(tokens), "every token, once, in order");
    for (at, text) in &deltas {
        let since = (*at - start).as_millis();
        assert_eq!(
            since % 33,
            0,
            "{text:?} was handed on at {since} ms, between two arrivals"
        );
    }
    // The end of the stream (Done, one gap after the last token) brings the
    // rest at once.
    let (last_at, last_text) = deltas.last().unwrap();
    assert!(last_text.ends_with(&format!("t{} ", tokens - 1)));
    assert!(*last_at - start <= gap * (tokens as u32 + 1) + Duration::from_millis(1));
    assert!(
        (14..=18).contains(&deltas.len()),
        "{} deltas over 2 s (one per 132 ms: the first token at or after each 100 ms)",
        deltas.len()
    );
}

#[tokio::test(start_paused = true)]
async fn a_stop_while_text_waits_for_its_turn_ends_the_reply_at_once() {
    let mut r = Reply::start(100_000, Duration::from_millis(5));
    // The first delta; the next one is at least 100 ms away.
    loop {
        if let Event::Delta { .. } = r.events.recv().await.unwrap() {
            break;
        }
    }
    tokio::time::sleep(Duration::from_millis(10)).await;
    let asked = Instant::now();
    assert!(r.e.stop(r.conv), "a reply was streaming");
    loop {
        for _ in 0..50 {
            tokio::task::yield_now().await;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
        if r.ended() {
            break;
        }
        assert!(
            asked.elapsed() < Duration::from_secs(1),
            "the stop was not seen"
        );
    }
    assert!(
        asked.elapsed() < Duration::from_millis(40),
        "stopped {:?} after the stop",
        asked.elapsed()
    );
}

/// A stream with everything ready at once (a fast model, or a backlog after
/// a pause) is read on without pausing: the reply is complete when its text
/// has been read. Paced as a slow stream, 20,000 events would wait one pause
/// per batch read: about 78 pauses, over 2 s.
#[tokio::test(start_paused = true)]
async fn a_stream_with_everything_ready_is_read_without_pausing() {
    let tokens = 20_000;
    let start = Instant::now();
    let mut r = Reply::start(tokens, Duration::ZERO);
    let deltas = deltas_until_done(&mut r).await;
    let joined: String = deltas.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(joined, expected(tokens), "every token, once, in order");
    let (last, _) = deltas.last().unwrap();
    assert!(
        *last - start <= Duration::from_millis(100),
        "the last text was handed on {:?} after the start, in {} deltas",
        *last - start,
        deltas.len()
    );
}

/// The partial reply is stored as it streams: its first text at once (a
/// reply cut by a crash shows that it had begun), then at most once a second.
#[tokio::test(start_paused = true)]
async fn the_first_text_is_saved_at_once_then_once_a_second() {
    let mut r = Reply::start(300, Duration::from_millis(10));
    let stored = |r: &Reply| stored_reply(&r.e, r.conv);
    loop {
        if let Event::Delta { .. } = r.events.recv().await.unwrap() {
            break;
        }
    }
    assert_eq!(
        stored(&r),
        "t0 ",
        "the first text is stored with its hand-over"
    );
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert_eq!(stored(&r), "t0 ", "not stored again within the second");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let later = stored(&r);
    assert!(
        later.len() > "t0 ".len() && expected(300).starts_with(&later),
        "stored again after a second: {later:?}"
    );
}

/// Where a front end shows no conversation (the daemon, which shows no
/// reply as it streams) a reply's text is taken as seldom as it is saved:
/// the provider is told so (it reads a trickling socket that seldom), text
/// goes out at most once a second, the first and the last still at once,
/// and the partial reply is still saved as it goes.
#[tokio::test(start_paused = true)]
async fn with_no_conversation_shown_text_is_taken_as_seldom_as_it_is_saved() {
    let tokens = 300;
    let gap = Duration::from_millis(10);
    let start = Instant::now();
    assert_eq!(options().persist_every, Duration::from_secs(1));
    let mut r = Reply::start_with(tokens, gap, |e, _| e.show(None));
    // What is stored 20 ms and 2 s in: the first text at once, and more
    // within two seconds (saved with the first read after it is due).
    let (e, conv) = (r.e.clone(), r.conv);
    let stored = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let first = stored_reply(&e, conv);
        tokio::time::sleep(Duration::from_millis(1980)).await;
        (first, stored_reply(&e, conv))
    });
    let deltas = deltas_until_done(&mut r).await;
    let (first, later) = stored.await.unwrap();
    assert_eq!(first, "t0 ");
    assert!(
        later.len() > "t0 ".len() && expected(tokens).starts_with(&later),
        "stored again within two seconds: {later:?}"
    );
    assert_eq!(deltas[0].1, "t0 ");
    let joined: String = deltas.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(joined, expected(tokens), "every token, once, in order");
    assert_eq!(r.pace(), Duration::from_secs(1));
    // 3 s of tokens: the first, then one a second, then the rest at the end.
    assert!(
        (3..=5).contains(&deltas.len()),
        "{} deltas over 3 s",
        deltas.len()
    );
    for pair in deltas[..deltas.len() - 1].windows(2) {
        let apart = pair[1].0 - pair[0].0;
        assert!(apart >= Duration::from_secs(1), "deltas {apart:?} apart");
    }
    let (last_at, _) = deltas.last().unwrap();
    assert!(
        *last_at - start <= gap * (tokens as u32 + 1) + Duration::from_millis(1),
        "the last text went out {:?} after the start",
        *last_at - start
    );
}

/// A reply streaming in a conversation other than the one a front end
/// shows is taken once a second; when the front end turns to it, what
/// waits goes out at once, and the rest at a reader's pace (the provider
/// is told too). Turning away slows it down again.
#[tokio::test(start_paused = true)]
async fn a_reply_is_taken_at_a_readers_pace_only_while_its_conversation_is_shown() {
    let tokens = 450;
    let gap = Duration::from_millis(10);
    let start = Instant::now();
    let mut r = Reply::start_with(tokens, gap, |e, conv| e.show(Some(conv + 1)));
    let (e, conv) = (r.e.clone(), r.conv);
    let turns = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        e.show(Some(conv));
        tokio::time::sleep(Duration::from_millis(1500)).await;
        e.show(Some(conv + 1));
    });
    // The pace the provider is told, sampled on the way.
    let text_every = r.text_every.clone();
    let sample = async move {
        let mut paces = Vec::new();
        for ms in [500, 750, 1000, 1500] {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            paces.push(text_every.lock().unwrap().last().unwrap().get());
        }
        paces
    };
    let (deltas, paces) = futures::join!(deltas_until_done(&mut r), sample);
    turns.await.unwrap();
    let joined: String = deltas.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(joined, expected(tokens), "every token, once, in order");
    let ms = |d: Duration| d.as_millis();
    assert_eq!(
        paces.iter().map(|p| ms(*p)).collect::<Vec<_>>(),
        [1000, 1000, 100, 1000],
        "the pace at 0.5, 1.25, 2.25 and 3.75 s"
    );
    let at = |d: &(Instant, String)| d.0 - start;
    let before: Vec<_> = deltas
        .iter()
        .filter(|d| at(d) < Duration::from_millis(1500))
        .collect();
    let shown: Vec<_> = deltas
        .iter()
        .filter(|d| at(d) >= Duration::from_millis(1500) && at(d) < Duration::from_millis(3000))
        .collect();
    // Before: the first text, then once a second.
    assert!(
        (2..=3).contains(&before.len()),
        "{} deltas in the first 1.5 s",
        before.len()
    );
    // Shown: what waited goes out at once, then ten a second.
    assert_eq!(
        at(shown[0]),
        Duration::from_millis(1500),
        "the text that waited went out at once"
    );
    assert!(
        (14..=17).contains(&shown.len()),
        "{} deltas while shown",
        shown.len()
    );
    // After: once a second again, and the end at once.
    let after = deltas
        .iter()
        .filter(|d| at(d) >= Duration::from_millis(3000))
        .count();
    assert!((2..=4).contains(&after), "{after} deltas in the last 1.5 s");
}

/// The engine's options with a shown reply's text taken every `every`.
fn shown_every(every: Duration) -> Options {
    Options {
        shown_text_every: every,
        ..options()
    }
}

/// The second delta went out half a gap of `every` after the first, with
/// the first token to arrive then (tokens `token_gap` apart).
fn assert_second_after_half_a_gap(
    deltas: &[(Instant, String)],
    every: Duration,
    token_gap: Duration,
) {
    let second = deltas[1].0 - deltas[0].0;
    assert!(
        second >= every / 2 && second <= every / 2 + token_gap,
        "the second text {second:?} after the first"
    );
}

/// Where the front end showing a reply asks for its text seldom (as the
/// TUI does, showing it over frames of its own), the reply does not stand
/// still after its first words for a whole gap: the second text goes out
/// half a gap after the first (with the first token to arrive then), the
/// rest a gap apart. The provider is told both, for the reads of its socket.
#[tokio::test(start_paused = true)]
async fn at_a_slow_pace_the_second_text_of_a_shown_reply_comes_after_half_a_gap() {
    let tokens = 60;
    let gap = Duration::from_millis(33);
    let every = Duration::from_millis(400);
    let start = Instant::now();
    let mut r = Reply::of(Stream::new(tokens, gap), shown_every(every), |e, conv| {
        e.show(Some(conv))
    });
    let deltas = deltas_until_done(&mut r).await;
    let joined: String = deltas.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(joined, expected(tokens), "every token, once, in order");
    assert_eq!((r.pace(), r.first_gap()), (every, every / 2));
    let at: Vec<Duration> = deltas.iter().map(|(at, _)| *at - start).collect();
    assert_eq!(at[0], gap, "the first text at once");
    assert_second_after_half_a_gap(&deltas, every, gap);
    // Then a gap apart, the end (with Done) at once.
    for pair in at[1..at.len() - 1].windows(2) {
        assert!(
            pair[1] - pair[0] >= every,
            "texts {:?} apart",
            pair[1] - pair[0]
        );
    }
    assert!(*at.last().unwrap() <= gap * (tokens as u32 + 1) + Duration::from_millis(1));
}

/// A reply that begins with whitespace (a newline, a space: some models
/// send one first) has its first word go out at once with it, and the
/// second text half a gap after that word: whitespace alone shows nothing,
/// so it is not what starts the clock (nor worth a frame of its own).
#[tokio::test(start_paused = true)]
async fn whitespace_before_the_first_word_waits_for_it_and_the_word_goes_out_at_once() {
    let tokens = 30;
    let gap = Duration::from_millis(33);
    let every = Duration::from_millis(400);
    let start = Instant::now();
    let stream = Stream {
        lead: "\n ",
        ..Stream::new(tokens, gap)
    };
    let mut r = Reply::of(stream, shown_every(every), |e, conv| e.show(Some(conv)));
    let deltas = deltas_until_done(&mut r).await;
    let joined: String = deltas.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(joined, format!("\n {}", expected(tokens)));
    assert_eq!(
        (deltas[0].0 - start, deltas[0].1.as_str()),
        (gap, "\n t0 "),
        "the first word at once, with the whitespace before it"
    );
    assert_second_after_half_a_gap(&deltas, every, gap);
}

/// Text that arrives together (a read of a socket brings several tokens)
/// goes out together: a hand-over falling due with the first of them would
/// leave the rest waiting a whole gap for the next.
#[tokio::test(start_paused = true)]
async fn tokens_that_arrive_together_go_out_together() {
    // Bursts of five tokens 150 ms apart: each burst's first token finds a
    // hand-over due (100 ms after the last).
    let stream = Stream {
        burst: 5,
        ..Stream::new(50, Duration::from_millis(150))
    };
    let mut r = Reply::of(stream, options(), |_, _| {});
    let deltas = deltas_until_done(&mut r).await;
    let texts: Vec<&str> = deltas.iter().map(|(_, t)| t.as_str()).collect();
    let bursts: Vec<String> = (0..10)
        .map(|b| (b * 5..b * 5 + 5).map(|i| format!("t{i} ")).collect())
        .collect();
    assert_eq!(texts, bursts, "one delta per burst, whole");
}
