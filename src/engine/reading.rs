//! Reading a reply's stream: text is taken as it arrives and handed to the
//! front ends at a reader's pace; the partial reply is saved now and then.
//!
//! What a streamed reply costs is mostly wake-ups: of this task, and of each
//! front end a hand-over reaches (a frame each). So:
//! - the stream is read as it arrives, in the wake-up its arrival causes
//!   anyway (a read put off until later would be a wake-up of its own);
//! - text is handed on at most every [`HAND_ON_EVERY`] while a front end
//!   shows the conversation (see `pace`), the first word (with any
//!   whitespace before it) and the last text at once (time to first token;
//!   a finished reply is on screen without waiting),
//!   the second sooner than the rest where the pace is slow (`Pace::first`).
//!   Text that falls due waits for the next read to bring more, which a
//!   steady stream does within a token's gap (or a read of the socket,
//!   which is paced the same), and goes out with all that read brought,
//!   only past [`SLACK`] more for a timer of its own;
//! - the deadlines (no progress, the longest reply, the next save) share one
//!   timer that is moved only when the earliest of them changes, rather than
//!   a timer per deadline set up again for every event.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::{FutureExt, StreamExt};
use tokio::sync::watch;
use tokio::time::{Instant, Sleep};

use super::StopReason;
use super::pace::Pace;
use crate::llm::{EventStream, LlmError, StreamEvent, ToolCall, Usage};

/// How often streamed text is handed to a front end that shows it at most:
/// ten times a second is smooth to a reader, and a front end draws a frame
/// per hand-over.
pub(crate) const HAND_ON_EVERY: Duration = Duration::from_millis(100);
/// How much longer than the pace of hand-overs text that is due may wait
/// for the next event before a timer hands it on by itself; the same for a
/// save. At ten hand-overs a second that is 120 ms: longer than the runtime
/// timer wheel's 64 ms blocks plus a read's 40 ms (a timer is moved to a
/// finer level, a wake-up, up to 64 ms before its deadline, and a stream
/// that keeps coming resets it before that), and longer than the 100 ms
/// between reads of a socket left quiet; at once a second, 1.02 s, for
/// reads as far apart.
const SLACK: Duration = Duration::from_millis(20);
/// Stream events taken in a row without waiting, before the stop is looked
/// at again.
const MAX_READY_IN_A_ROW: usize = 256;

pub(crate) enum End {
    Done,
    Failed(LlmError),
    Stopped(StopReason),
}

/// What a read stream left.
pub(crate) struct Read {
    pub end: End,
    pub text: String,
    pub calls: Vec<ToolCall>,
    pub usage: Option<Usage>,
    /// Why the provider ended the reply, as it said (`max_tokens`, `length`).
    pub stop_reason: Option<String>,
    /// What the model reasoned (its first [`MAX_REASONING_BYTES`]).
    pub reasoning: String,
}

/// The most of a reply's reasoning kept: a model that reasons for hours
/// does not fill the database.
pub(crate) const MAX_REASONING_BYTES: usize = 1 << 20;

/// Limits of one reply's stream, and what the reader reports them as.
pub(crate) struct Limits<'a> {
    pub provider: &'a str,
    /// No new text or tool call for this long ends the reply.
    pub stream_timeout: Duration,
    /// The longest a reply may take.
    pub max_reply: Duration,
    /// How often the partial reply is saved.
    pub persist_every: Duration,
}

/// How often the front ends hear how much a model has reasoned so far.
const THINKING_TOLD_EVERY: Duration = Duration::from_secs(1);

/// Read `stream` to its end, a stop, or a limit. `hand_on` gets the text
/// for the front ends and where it starts in the reply, as often as `pace`
/// says; `save` gets the whole text so far, to store; `thinking` gets the
/// characters of reasoning so far and the reasoning kept so far, at most
/// once a second while it comes.
pub(crate) async fn read(
    mut stream: EventStream,
    stop: &mut watch::Receiver<Option<StopReason>>,
    limits: Limits<'_>,
    pace: &mut Pace,
    mut hand_on: impl FnMut(usize, String),
    mut save: impl FnMut(&str),
    mut thinking: impl FnMut(usize, &str),
) -> Read {
    let started = Instant::now();
    let reply_deadline = started + limits.max_reply;
    let mut taken = Taken::new(started, limits.persist_every, pace.every(), pace.first());
    let mut calls: Vec<ToolCall> = Vec::new();
    let mut usage: Option<Usage> = None;
    let mut stop_reason: Option<String> = None;
    // Moved forward with each event; the timer that watches it is moved
    // only when it fires (a stream that makes progress never sees it fire
    // more than once per `stream_timeout`).
    let mut progress_by = started + limits.stream_timeout;
    let mut progress_checked = progress_by;
    let mut timer = Deadline::new(progress_checked.min(reply_deadline));
    let mut ready_in_a_row = 0usize;
    // Reasoning read so far (characters), and when the front ends last heard.
    let mut thought = 0usize;
    let mut thought_told: Option<Instant> = None;
    let mut reasoning = String::new();
    let end = loop {
        let ev = match (ready_in_a_row < MAX_READY_IN_A_ROW)
            .then(|| stream.next().now_or_never())
            .flatten()
        {
            Some(ev) => {
                ready_in_a_row += 1;
                ev
            }
            None => {
                ready_in_a_row = 0;
                // What the read brought goes out together, once it has all
                // been taken: handed on with its first event, the rest would
                // wait a whole gap for the next hand-over. Every wake-up
                // (a timer's, a change of pace) comes back here before it
                // waits again, so this is the one place text goes out.
                taken.pass_on(Instant::now(), &mut hand_on, &mut save);
                let slack = taken.hand_on_every + SLACK;
                let next = [
                    Some(progress_checked),
                    Some(reply_deadline),
                    taken.hand_on_due().map(|at| at + slack),
                    taken.save_due().map(|at| at + slack),
                ]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(reply_deadline);
                timer.set(next);
                tokio::select! {
                    biased;
                    _ = stop.changed() => break End::Stopped((*stop.borrow()).unwrap_or(StopReason::User)),
                    ev = stream.next() => ev,
                    every = pace.changed() => {
                        // Sooner than before: the reply has just come on
                        // screen, and what waits goes out at once (above).
                        taken.set_every(Instant::now(), every, pace.first());
                        continue;
                    }
                    _ = &mut timer => {
                        let now = Instant::now();
                        if now >= reply_deadline {
                            break End::Failed(LlmError::transient(format!(
                                "{}: the reply took longer than {} (the reply was ended)",
                                limits.provider,
                                crate::llm::http::fmt_duration(limits.max_reply)
                            )));
                        }
                        if now >= progress_checked {
                            if now >= progress_by {
                                break End::Failed(LlmError::transient(format!(
                                    "{}: nothing new for {} (the reply was ended)",
                                    limits.provider,
                                    crate::llm::http::fmt_duration(limits.stream_timeout)
                                )));
                            }
                            progress_checked = progress_by;
                        }
                        continue;
                    }
                }
            }
        };
        match ev {
            Some(Ok(StreamEvent::Text(t))) => {
                progress_by = Instant::now() + limits.stream_timeout;
                taken.push(&t);
            }
            Some(Ok(StreamEvent::ToolCall(mut c))) => {
                progress_by = Instant::now() + limits.stream_timeout;
                c.id = own_call_id(&calls, std::mem::take(&mut c.id));
                calls.push(c);
            }
            // A model that reasons at length before it answers is working:
            // its reasoning is progress, not silence.
            Some(Ok(StreamEvent::Reasoning(r))) => {
                let now = Instant::now();
                progress_by = now + limits.stream_timeout;
                thought += r.chars().count();
                if reasoning.len() + r.len() <= MAX_REASONING_BYTES {
                    reasoning.push_str(&r);
                }
                if thought_told.is_none_or(|t| now >= t + THINKING_TOLD_EVERY) {
                    thought_told = Some(now);
                    thinking(thought, &reasoning);
                }
            }
            Some(Ok(StreamEvent::Usage(u))) => usage = Some(u),
            Some(Ok(StreamEvent::Done { stop_reason: why })) => {
                stop_reason = why;
                break End::Done;
            }
            Some(Err(e)) => break End::Failed(e),
            None => {
                break End::Failed(LlmError::transient(
                    "the stream ended before the reply was complete",
                ));
            }
        }
    };
    // What was read and not handed on yet goes out at once, whatever the end.
    if !taken.unsent.is_empty() {
        taken.hand_on(Instant::now(), &mut hand_on);
    }
    Read {
        end,
        text: taken.text,
        calls,
        usage,
        stop_reason,
        reasoning,
    }
}

/// The text read so far, and what of it the front ends and the store have
/// not had yet, with when each is next due.
struct Taken {
    text: String,
    /// The end of `text` not handed on yet.
    unsent: String,
    /// How much of `text` was saved last.
    saved: usize,
    hand_on_at: Instant,
    save_at: Instant,
    persist_every: Duration,
    hand_on_every: Duration,
    /// The gap after the next hand-over, when it is the first at this pace.
    first_gap: Option<Duration>,
    /// Whether `text` has more than whitespace: whitespace before the first
    /// word shows nothing, so it waits for the word (which goes out at
    /// once) rather than take the first hand-over.
    has_word: bool,
}

impl Taken {
    /// The first text goes out and is saved at once (a reply cut by a crash
    /// shows that it had begun), then text `first_gap` later and at most
    /// every `hand_on_every` after that, and saves at most every
    /// `persist_every`.
    fn new(
        started: Instant,
        persist_every: Duration,
        hand_on_every: Duration,
        first_gap: Duration,
    ) -> Self {
        Self {
            text: String::new(),
            unsent: String::new(),
            saved: 0,
            hand_on_at: started,
            save_at: started,
            persist_every,
            hand_on_every,
            first_gap: Some(first_gap),
            has_word: false,
        }
    }

    /// Hand text on every `every` from now on, `first` after the next
    /// hand-over. Sooner than before means a front end has just begun to
    /// show the reply: what waits is handed on and saved at once, so that
    /// the front end, which has just read the reply from the database, finds
    /// the text before what it is handed.
    fn set_every(&mut self, now: Instant, every: Duration, first: Duration) {
        if every < self.hand_on_every {
            self.hand_on_at = self.hand_on_at.min(now);
            self.save_at = self.save_at.min(now);
        }
        self.hand_on_every = every;
        self.first_gap = Some(first);
    }

    fn push(&mut self, t: &str) {
        self.has_word = self.has_word || t.chars().any(|c| !c.is_whitespace());
        self.text.push_str(t);
        self.unsent.push_str(t);
    }

    /// When text waiting to be handed on falls due; None when none waits,
    /// or only whitespace before the first word.
    fn hand_on_due(&self) -> Option<Instant> {
        (self.has_word && !self.unsent.is_empty()).then_some(self.hand_on_at)
    }

    /// When text not saved yet falls due; None when all is saved.
    fn save_due(&self) -> Option<Instant> {
        (self.text.len() != self.saved).then_some(self.save_at)
    }

    /// Hands on and saves what is due at `now`.
    fn pass_on(
        &mut self,
        now: Instant,
        hand_on: &mut impl FnMut(usize, String),
        save: &mut impl FnMut(&str),
    ) {
        if self.hand_on_due().is_some_and(|at| now >= at) {
            self.hand_on(now, hand_on);
        }
        if self.save_due().is_some_and(|at| now >= at) {
            self.save_at = now + self.persist_every;
            self.saved = self.text.len();
            save(&self.text);
        }
    }

    fn hand_on(&mut self, now: Instant, hand_on: &mut impl FnMut(usize, String)) {
        let unsent = std::mem::take(&mut self.unsent);
        hand_on(self.text.len() - unsent.len(), unsent);
        self.hand_on_at = now + self.first_gap.take().unwrap_or(self.hand_on_every);
    }
}

/// One timer for the earliest of several deadlines: moved only when that
/// changes (a `Sleep` made again per wait would be put into and taken out of
/// the timer wheel each time).
///
/// A later deadline gets a new `Sleep`: tokio's `Sleep::reset` to a later
/// time leaves the entry where it was in the timer wheel and only notes the
/// new time, so the runtime still wakes at the old deadline to find nothing
/// due. With the hand-over deadline pushed on by every hand-over, that was
/// about 7 wake-ups a second of a streaming reply (`strace`: epoll timeouts
/// followed by nothing but the next wait).
struct Deadline {
    sleep: Pin<Box<Sleep>>,
    at: Instant,
}

impl Deadline {
    fn new(at: Instant) -> Self {
        Self {
            sleep: Box::pin(tokio::time::sleep_until(at)),
            at,
        }
    }

    fn set(&mut self, at: Instant) {
        if at > self.at {
            *self = Self::new(at);
        } else if at < self.at {
            self.at = at;
            self.sleep.as_mut().reset(at);
        }
    }
}

impl Future for &mut Deadline {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.get_mut().sleep.as_mut().poll(cx)
    }
}

/// An id no earlier call of this reply has. Two calls under one id (a
/// provider's slip, or none given) could not be told apart by their
/// results, which are paired with their call by id: the later one is given
/// its own (`id_2`) before it is stored, run or sent back.
fn own_call_id(earlier: &[crate::llm::ToolCall], id: String) -> String {
    let base = if id.is_empty() { "call" } else { &id };
    unused_call_id(base, |own| earlier.iter().any(|c| c.id == own))
}

/// `base`, or `base_2`, `base_3`…: the first that `taken` does not hold.
/// (A reply's calls as read, and a request's calls as sent, are each kept
/// apart by id this way.)
pub(super) fn unused_call_id(base: &str, taken: impl Fn(&str) -> bool) -> String {
    let mut id = base.to_string();
    let mut n = 1;
    while taken(&id) {
        n += 1;
        id = format!("{base}_{n}");
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// The moments (on the paused clock) at which the runtime woke up while
    /// `body` ran to its end.
    fn wake_ups(body: impl Future<Output = ()>) -> Vec<Duration> {
        let start: Arc<Mutex<Option<Instant>>> = Arc::default();
        let woke: Arc<Mutex<Vec<Duration>>> = Arc::default();
        let (s, w) = (start.clone(), woke.clone());
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .on_thread_unpark(move || {
                if let Some(start) = *s.lock().unwrap() {
                    w.lock().unwrap().push(Instant::now() - start);
                }
            })
            .build()
            .unwrap();
        rt.block_on(async {
            *start.lock().unwrap() = Some(Instant::now());
            body.await;
        });
        let mut woke = woke.lock().unwrap().clone();
        woke.dedup();
        woke
    }

    #[test]
    fn a_deadline_moved_later_wakes_the_runtime_only_at_the_new_one() {
        let ms = Duration::from_millis;
        let woke = wake_ups(async {
            let start = Instant::now();
            let mut deadline = Deadline::new(start + ms(100));
            // A timer goes into the wheel when first polled.
            assert!(futures::poll!(&mut deadline).is_pending());
            tokio::time::sleep(ms(10)).await;
            deadline.set(start + ms(300));
            (&mut deadline).await;
            assert_eq!(Instant::now() - start, ms(300));
        });
        // Between the move (at 10 ms) and the new deadline the runtime may
        // wake only to bring it down to the wheel's finest level, whose
        // slots span 64 ms; the old deadline woke it at 64 ms.
        let between: Vec<_> = woke
            .iter()
            .filter(|&&t| t > ms(10) && t < ms(300 - 64))
            .collect();
        assert!(between.is_empty(), "woken for nothing at {between:?}");
        assert!(woke.contains(&ms(300)), "{woke:?}");
    }

    #[test]
    fn a_deadline_moved_earlier_fires_then() {
        let ms = Duration::from_millis;
        wake_ups(async {
            let start = Instant::now();
            let mut deadline = Deadline::new(start + ms(300));
            assert!(futures::poll!(&mut deadline).is_pending());
            deadline.set(start + ms(100));
            (&mut deadline).await;
            assert_eq!(Instant::now() - start, ms(100));
        });
    }
}
