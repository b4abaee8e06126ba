//! The views of the TUI. Each overlay (F2, the time picker, prompts,
//! confirmations, help, notifications, the approval card) is a [`View`] kept
//! on the app's view stack: it handles the keys it is given and says what it
//! did ([`Outcome`]); anything that changes the database or the rest of the
//! screen it asks for as an [`Intent`], which the app applies. The panes of
//! the main screen (composer, pending strip, sidebar) follow the same shape.

pub mod approval;
pub mod confirm;
pub mod help;
pub mod notices;
pub mod prompt;
pub mod sidebar;
pub mod strip;

use chrono::{DateTime, FixedOffset};
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;

use super::keymap::Keymap;
use super::model::Model;
use crate::engine::ItemAction;

/// What a view did with a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Not for this view: the app passes it on (or drops it, under a modal view).
    Ignored,
    /// Handled; the view stays.
    Consumed,
    /// Handled, and the view is finished: the app takes it off the stack.
    Done,
}

/// A change a view asks the app to make.
pub enum Intent {
    /// One line for the status bar.
    Info(String),
    Error(String),
    /// Act on an item as it was shown (`seen` = its `updated_at` then).
    Item {
        id: i64,
        seen: i64,
        action: ItemAction,
    },
    /// Take an item back into the composer.
    PullBack {
        id: i64,
        seen: i64,
    },
    ResumeQueue,
    /// Show this conversation.
    Open(i64),
    NewConversation,
    Rename {
        id: i64,
        title: String,
    },
    Delete(i64),
    /// Answer the approval shown.
    Answer {
        id: i64,
        approve: bool,
    },
    /// Send the composer text at this instant (the time picker's choice).
    ScheduleComposer(i64),
    /// Live filter of the conversation list.
    Filter(String),
    /// Open the first conversation the filter shows.
    OpenFiltered,
    /// Put a view on the stack.
    Push(Box<dyn View>),
    /// Text typed while a non-modal view had focus, for the composer.
    Type(KeyEvent),
    Focus(super::app::Focus),
}

/// What a view gets with each key.
pub struct Cx<'a> {
    pub model: &'a Model,
    pub keys: &'a Keymap,
    pub now: DateTime<FixedOffset>,
    pub now_ms: i64,
    /// Nothing typed in the composer (letters may then be choices on a card).
    pub composer_empty: bool,
    pub intents: Vec<Intent>,
}

impl Cx<'_> {
    pub fn push(&mut self, i: Intent) {
        self.intents.push(i);
    }
}

/// What a view gets to draw itself.
pub struct RenderCx<'a> {
    pub model: &'a Model,
    pub keys: &'a Keymap,
    pub now: DateTime<FixedOffset>,
    pub now_ms: i64,
    /// The terminal has reported a key only the keyboard protocol can (Shift+Enter).
    pub enhanced_keys: bool,
    /// Where the conversation is drawn on the main screen (cards sit at its foot).
    pub chat: Rect,
}

pub trait View {
    fn handle_key(&mut self, key: KeyEvent, cx: &mut Cx<'_>) -> Outcome;

    fn handle_paste(&mut self, _text: &str, _cx: &mut Cx<'_>) -> Outcome {
        Outcome::Ignored
    }

    /// Draw over `area` (the whole screen; the view places itself in it).
    fn render(&self, area: Rect, buf: &mut Buffer, cx: &RenderCx<'_>);

    /// The database changed: views that show rows reload them.
    fn refresh(&mut self, _model: &Model) {}

    /// A modal view takes every key; a non-modal one lets the ones it ignores through.
    fn is_modal(&self) -> bool {
        true
    }

    /// What this view is, for tests and for the app to find it on the stack.
    fn kind(&self) -> ViewKind;

    /// F2 itself, for a write of its that finished after its key returned.
    fn as_scheduled(&mut self) -> Option<&mut super::scheduled::ScheduledPane> {
        None
    }

    /// The next instant (ms) this view's content changes with time, if any.
    fn next_change(&self, _now_ms: i64) -> Option<i64> {
        None
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewKind {
    Scheduled,
    Picker,
    Prompt,
    Confirm,
    Help,
    Notices,
    Approval,
}

/// When a relative time label ("in 59m 12s", "in 3h 5m") for `due` next
/// changes. Labels show seconds below an hour, minutes above: so a label
/// next changes at the next whole second, or whole minute, of the distance.
pub fn label_change(due: i64, now: i64) -> Option<i64> {
    let left = due - now;
    if left <= 0 {
        return None;
    }
    let step = if left <= 3_600_000 {
        1_000
    } else if left <= 86_400_000 {
        60_000
    } else {
        3_600_000
    };
    let r = left.rem_euclid(step);
    Some(now + if r == 0 { step } else { r })
}
