//! A view scrolled up stays where it is while text arrives below it (a
//! reply streaming, a new message): the scroll offset counts rows from the
//! bottom, so without this every new row would move the view down by one.

use super::app::App;

/// Which row the foot of a scrolled-up view showed after the last frame:
/// row `row` (from its top) of message `message`, when the offset was
/// `from_bottom` at chat width `width`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScrollAnchor {
    message: i64,
    row: usize,
    from_bottom: usize,
    width: u16,
}

impl App {
    /// After a frame: where the foot of a scrolled-up view is.
    pub(super) fn anchor_scroll(&mut self) {
        self.scroll_anchor = self.scroll.from_bottom.and_then(|n| self.anchor_at(n));
    }

    fn anchor_at(&self, from_bottom: usize) -> Option<ScrollAnchor> {
        let width = self.layout.chat.width;
        let tail = super::view::chat_tail(self, self.layout.chat).len();
        // At the foot of the tail (the bubbles of messages being sent), there
        // is no message to hold on to.
        let mut skip = from_bottom.checked_sub(tail)?;
        for e in self.model.entries.iter().rev() {
            let rows = e.row_count(width);
            if skip < rows {
                return Some(ScrollAnchor {
                    message: e.msg.id,
                    row: rows - 1 - skip,
                    from_bottom,
                    width,
                });
            }
            skip -= rows;
        }
        None
    }

    /// Before a frame: the offset that shows the anchored row at the foot
    /// again, however many rows arrived below it. Not when the user has
    /// scrolled since (the offset is not the anchored one), the width
    /// changed (rows wrap anew) or the message is gone.
    pub fn hold_scroll(&mut self) {
        let Some(a) = self.scroll_anchor else {
            return;
        };
        if self.scroll.from_bottom != Some(a.from_bottom) || self.layout.chat.width != a.width {
            return;
        }
        let mut below = super::view::chat_tail(self, self.layout.chat).len();
        for e in self.model.entries.iter().rev() {
            let rows = e.row_count(a.width);
            if e.msg.id == a.message {
                // The anchor itself is taken again after the frame.
                if a.row < rows {
                    self.scroll.from_bottom = Some(below + rows - 1 - a.row);
                }
                return;
            }
            below += rows;
        }
    }
}
