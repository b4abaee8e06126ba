//! Undo for the composer (Ctrl+_, as readline's): the draft as it was
//! before each step of editing, a step being a word typed (with the spaces
//! after it), a run of deletions, or one cut, paste, line break or
//! replacement. The textarea's own history undoes a character at a time,
//! fifty deep, and its key (Ctrl+U) is readline's kill here.

use std::collections::VecDeque;

/// The most steps kept, and the most text they hold in all: a draft of a
/// megabyte pasted and edited keeps a few of its states, not a thousand.
const MAX_STEPS: usize = 1000;
const MAX_BYTES: usize = 4 << 20;

/// What an edit is, for where its step starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edit {
    /// A character of a word typed.
    Letter,
    /// A space typed (it ends the word before it, in the same step).
    Space,
    /// A character deleted (Backspace, Delete).
    Deletion,
    /// A cut, a paste, a line break, the text replaced: a step alone.
    Whole,
}

/// The draft before each step, newest last.
#[derive(Default)]
pub struct UndoSteps {
    states: VecDeque<State>,
    bytes: usize,
    /// The last edit, while the next may go on with its step (a key that
    /// moves the cursor ends it).
    last: Option<Edit>,
}

/// A draft and its cursor (row, column in characters).
pub type State = (String, (usize, usize));

impl UndoSteps {
    /// Whether an edit of kind `edit` now starts a step: the draft as it
    /// is before it must be kept.
    pub fn starts_step(&self, edit: Edit) -> bool {
        !matches!(
            (self.last, edit),
            (Some(Edit::Letter), Edit::Letter | Edit::Space)
                | (Some(Edit::Space), Edit::Space)
                | (Some(Edit::Deletion), Edit::Deletion)
        )
    }

    /// The draft as it was before an edit that started a step.
    pub fn keep(&mut self, before: State) {
        self.bytes += before.0.len();
        self.states.push_back(before);
        while self.states.len() > MAX_STEPS || (self.bytes > MAX_BYTES && self.states.len() > 1) {
            if let Some((text, _)) = self.states.pop_front() {
                self.bytes -= text.len();
            }
        }
    }

    /// An edit of kind `edit` was made.
    pub fn edited(&mut self, edit: Edit) {
        self.last = Some(edit);
    }

    /// The cursor moved (or a key changed nothing): the next edit starts
    /// a step of its own.
    pub fn moved(&mut self) {
        self.last = None;
    }

    /// The draft before the last step, taken off.
    pub fn undo(&mut self) -> Option<State> {
        self.last = None;
        let state = self.states.pop_back()?;
        self.bytes -= state.0.len();
        Some(state)
    }

    /// A new draft (after a send): nothing before it to go back to.
    pub fn clear(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Types `text` into `steps` as the composer does, keeping the draft
    /// before each step.
    fn typed(steps: &mut UndoSteps, draft: &mut String, text: &str) {
        for c in text.chars() {
            let edit = if c == ' ' { Edit::Space } else { Edit::Letter };
            if steps.starts_step(edit) {
                steps.keep((draft.clone(), (0, draft.chars().count())));
            }
            draft.push(c);
            steps.edited(edit);
        }
    }

    #[test]
    fn a_step_is_a_word_with_its_spaces() {
        let mut steps = UndoSteps::default();
        let mut draft = String::new();
        typed(&mut steps, &mut draft, "hello big  world");
        assert_eq!(steps.undo().map(|s| s.0).as_deref(), Some("hello big  "));
        assert_eq!(steps.undo().map(|s| s.0).as_deref(), Some("hello "));
        assert_eq!(steps.undo().map(|s| s.0).as_deref(), Some(""));
        assert_eq!(steps.undo(), None);
    }

    #[test]
    fn deletions_in_a_row_are_one_step_and_a_move_ends_a_step() {
        let mut steps = UndoSteps::default();
        let mut draft = String::new();
        typed(&mut steps, &mut draft, "abc");
        for _ in 0..2 {
            if steps.starts_step(Edit::Deletion) {
                steps.keep((draft.clone(), (0, 0)));
            }
            draft.pop();
            steps.edited(Edit::Deletion);
        }
        steps.moved();
        typed(&mut steps, &mut draft, "x");
        typed(&mut steps, &mut draft, "y");
        assert_eq!(draft, "axy");
        // `y` went on with the step `x` started after the move.
        assert_eq!(steps.undo().map(|s| s.0).as_deref(), Some("a"));
        assert_eq!(steps.undo().map(|s| s.0).as_deref(), Some("abc"));
        assert_eq!(steps.undo().map(|s| s.0).as_deref(), Some(""));
    }

    #[test]
    fn a_whole_edit_is_a_step_alone() {
        let mut steps = UndoSteps::default();
        assert!(steps.starts_step(Edit::Whole));
        steps.edited(Edit::Whole);
        assert!(steps.starts_step(Edit::Whole));
        assert!(steps.starts_step(Edit::Letter));
    }

    #[test]
    fn what_is_kept_is_bounded_by_size() {
        let mut steps = UndoSteps::default();
        let big = "x".repeat(1 << 20);
        for _ in 0..10 {
            steps.keep((big.clone(), (0, 0)));
        }
        assert!(steps.bytes <= MAX_BYTES);
        assert_eq!(steps.states.len(), MAX_BYTES / big.len());
        for _ in 0..MAX_STEPS + 5 {
            steps.keep((String::new(), (0, 0)));
        }
        assert_eq!(steps.states.len(), MAX_STEPS);
        assert_eq!(steps.bytes, 0);
    }
}
