//! The frame of a popup that narrows a list as a query is typed (the
//! search, the model picker): cleared, bordered, its title and keys fitted
//! to its width, the query on the first row and the list below.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Clear, Widget};
use ratatui_textarea::TextArea;
use unicode_width::UnicodeWidthStr;

use super::RenderCx;
use crate::tui::keymap::{Action, Scope};
use crate::tui::theme::palette;

/// What the frame says around the list.
pub struct Frame<'a> {
    /// Longest first: the first that fits beside `count` is shown.
    pub titles: &'a [String],
    /// Top right ("12 matches"), or empty.
    pub count: &'a str,
    /// Longest first, the key that closes it the last to go: the first
    /// that fits along the foot is shown (the search's list keys).
    pub keys: &'a [&'a [(Action, &'static str)]],
}

/// Draws the frame over `r` with `query` on its first row. Returns the
/// rows left for the list, None when `r` is too small for one.
pub fn draw(
    frame: &Frame<'_>,
    query: &TextArea<'static>,
    r: Rect,
    buf: &mut Buffer,
    cx: &RenderCx<'_>,
) -> Option<Rect> {
    Clear.render(r, buf);
    let room = usize::from(r.width.saturating_sub(2));
    let keys: Vec<String> = frame
        .keys
        .iter()
        .map(|k| format!(" {} ", cx.keys.hints(Scope::Search, k).join(" · ")))
        .collect();
    let keys = crate::tui::text::first_fitting(&keys, room)
        .cloned()
        .unwrap_or_default();
    // The title and the count share the top border: the title gives way.
    let title = frame
        .titles
        .iter()
        .find(|t| t.width() + frame.count.width() < room)
        .cloned()
        .unwrap_or_default();
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .title(title)
        .title_bottom(Line::from(keys))
        .title_top(Line::from(frame.count.to_string()).right_aligned())
        .border_style(Style::new().fg(palette().accent));
    let inner = block.inner(r);
    block.render(r, buf);
    if inner.height < 3 || inner.width < 10 {
        return None;
    }
    buf.set_string(inner.x, inner.y, "› ", Style::new().fg(palette().accent));
    let input_r = Rect::new(inner.x + 2, inner.y, inner.width - 2, 1);
    query.render(input_r, buf);
    Some(Rect::new(
        inner.x,
        inner.y + 2,
        inner.width,
        inner.height - 2,
    ))
}
