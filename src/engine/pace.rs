//! How often a streaming reply's text is taken: at a reader's pace
//! (`HAND_ON_EVERY`, or the slower `Options::shown_text_every` a front end
//! asked for) while a front end shows its conversation, as seldom as
//! it is saved while none does. A front end that never says what it shows
//! (a test, the CLI) has every reply taken at a reader's pace.

use std::time::Duration;

use tokio::sync::watch;

use super::reading::HAND_ON_EVERY;
use crate::llm::TextPace;

/// What the front ends of this process show, as far as they said.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Shown {
    #[default]
    Unsaid,
    /// This conversation, or (None) no conversation at all (`tock daemon`).
    Conversation(Option<i64>),
}

/// The pace of one reply's text, following what is shown.
pub(crate) struct Pace {
    conversation: i64,
    /// While no front end shows the reply: how often it is saved.
    unwatched: Duration,
    /// While one does (or none said): how often the front ends want text.
    watched: Duration,
    shown: watch::Receiver<Shown>,
    /// Shared with the provider, which paces its reads by it.
    text: TextPace,
}

impl Pace {
    /// `shown`: a receiver that has seen the current value (a new one).
    /// `watched`: as `Engine::shown_text_every` gives it, never more often
    /// than `HAND_ON_EVERY`.
    pub fn new(
        conversation: i64,
        unwatched: Duration,
        watched: Duration,
        shown: watch::Receiver<Shown>,
    ) -> Self {
        let pace = Self {
            conversation,
            unwatched: unwatched.max(watched),
            watched,
            shown,
            text: TextPace::new(watched),
        };
        pace.text.set_with_first(pace.every(), pace.first());
        pace
    }

    /// Handed to the provider with the request.
    pub fn text(&self) -> &TextPace {
        &self.text
    }

    /// How often text is handed on now.
    pub fn every(&self) -> Duration {
        if self.is_watched() {
            self.watched
        } else {
            self.unwatched
        }
    }

    /// Whether a front end shows the reply (or none said what it shows).
    fn is_watched(&self) -> bool {
        !matches!(*self.shown.borrow(), Shown::Conversation(c) if c != Some(self.conversation))
    }

    /// The first gap at the pace now: half of it while the reply is shown
    /// (never under `HAND_ON_EVERY`), so that a reply that has just come on
    /// screen, its first words at once, moves on soon after them rather
    /// than standing still for a whole gap; the pace itself where none
    /// shows it.
    pub fn first(&self) -> Duration {
        if self.is_watched() {
            (self.watched / 2).max(HAND_ON_EVERY).min(self.watched)
        } else {
            self.unwatched
        }
    }

    /// Resolves with the new pace when it changes (never, once the engine
    /// is gone).
    pub async fn changed(&mut self) -> Duration {
        loop {
            if self.shown.changed().await.is_err() {
                return std::future::pending().await;
            }
            let every = self.every();
            if every != self.text.get() {
                self.text.set_with_first(every, self.first());
                return every;
            }
        }
    }
}
