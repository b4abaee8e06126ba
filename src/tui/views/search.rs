//! Search everything (Ctrl+F, `/search TEXT`): a query line and the messages
//! of every conversation that match it, newest first, each with its
//! conversation, time and the matching words highlighted. Enter opens the
//! conversation at that message. It searches as you type, on the front
//! end's own connection (the full-text index answers in milliseconds).

use crate::tui::theme::palette;
use std::cell::Cell;

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui_textarea::TextArea;

use super::{Cx, Intent, Outcome, RenderCx, View, ViewKind};
use crate::sanitize::sanitize_line;
use crate::store::{Role, SearchHit};
use crate::tui::keymap::{Action, Scope};
use crate::tui::text::elide;

/// How many matches are listed (the newest).
pub const LIMIT: usize = 200;

pub struct Search {
    input: TextArea<'static>,
    hits: Vec<SearchHit>,
    /// The chosen match, by message id (it stays on its match as the list changes).
    selected: Option<i64>,
    error: Option<String>,
    /// First row shown; set while drawing to keep the choice in view.
    offset: Cell<usize>,
}

impl Search {
    /// The view, with `query` typed in and searched for.
    pub fn new(query: &str, cx_model: &crate::tui::model::Model) -> Self {
        let mut input = TextArea::default();
        input.set_cursor_line_style(Style::default());
        input.insert_str(query);
        let mut s = Self {
            input,
            hits: Vec::new(),
            selected: None,
            error: None,
            offset: Cell::new(0),
        };
        s.run(cx_model);
        s
    }

    pub fn query(&self) -> String {
        self.input.lines().join(" ")
    }

    pub fn hits(&self) -> &[SearchHit] {
        &self.hits
    }

    pub fn selected(&self) -> Option<i64> {
        self.selected
    }

    fn run(&mut self, model: &crate::tui::model::Model) {
        let q = self.query();
        match model.engine.reader().search(&q, LIMIT) {
            Ok(hits) => {
                self.hits = hits;
                self.error = None;
            }
            Err(e) => {
                self.hits.clear();
                self.error = Some(crate::store::error_line(&e));
            }
        }
        if !self
            .selected
            .is_some_and(|id| self.hits.iter().any(|h| h.message_id == id))
        {
            self.selected = self.hits.first().map(|h| h.message_id);
        }
    }

    fn index(&self) -> Option<usize> {
        let id = self.selected?;
        self.hits.iter().position(|h| h.message_id == id)
    }

    fn move_by(&mut self, d: isize) {
        if self.hits.is_empty() {
            return;
        }
        let i = super::stepped(self.index().unwrap_or(0), self.hits.len(), d);
        self.selected = Some(self.hits[i].message_id);
    }
}

fn when(ms: i64, now: &chrono::DateTime<crate::tui::shown_zone::ShownZone>) -> String {
    let t = chrono::DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .with_timezone(&now.timezone());
    if t.date_naive() == now.date_naive() {
        t.format("%H:%M").to_string()
    } else {
        t.format("%a %d %b %Y %H:%M").to_string()
    }
}

/// The snippet as spans, the matched ranges highlighted, cut to `width`.
fn snippet_line(hit: &SearchHit, width: usize) -> Line<'static> {
    let text = &hit.snippet;
    let mut spans = vec![Span::raw("    ")];
    let mut at = 0;
    // A first match beyond the width: start nearer it (a third of the row
    // before it), so the word searched for is on screen.
    if let Some(first) = hit.highlights.first()
        && let Some(upto) = text.get(..first.end)
        && unicode_width::UnicodeWidthStr::width(upto) + 4 > width
    {
        let keep = width / 3;
        let mut used = 0;
        let mut start = first.start;
        for (i, ch) in text[..first.start].char_indices().rev() {
            used += unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
            if used > keep {
                break;
            }
            start = i;
        }
        // From the start of a word.
        if let Some(space) = text[start..first.start].find(' ')
            && start > 0
            && !text[..start].ends_with(' ')
        {
            start += space + 1;
        }
        spans.push(Span::raw("…"));
        at = start;
    }
    let mark = Style::new()
        .fg(palette().warning)
        .add_modifier(Modifier::BOLD | Modifier::UNDERLINED);
    for r in &hit.highlights {
        if r.start < at || r.end > text.len() {
            continue;
        }
        if let (Some(before), Some(hit)) = (text.get(at..r.start), text.get(r.clone())) {
            spans.push(Span::raw(sanitize_line(before).into_owned()));
            spans.push(Span::styled(sanitize_line(hit).into_owned(), mark));
            at = r.end;
        }
    }
    if let Some(rest) = text.get(at..) {
        spans.push(Span::raw(sanitize_line(rest).into_owned()));
    }
    // Cut at the width, span by span.
    let mut left = width;
    let mut out = Vec::new();
    for s in spans {
        if left == 0 {
            break;
        }
        let w = unicode_width::UnicodeWidthStr::width(s.content.as_ref());
        if w <= left {
            left -= w;
            out.push(s);
        } else {
            out.push(Span::styled(elide(&s.content, left), s.style));
            left = 0;
        }
    }
    Line::from(out)
}

impl View for Search {
    fn kind(&self) -> ViewKind {
        ViewKind::Search
    }

    fn handle_key(&mut self, key: KeyEvent, cx: &mut Cx<'_>) -> Outcome {
        let action = cx.keys.action(Scope::Search, &key);
        if let Some(step) = super::list_step(action) {
            self.move_by(step);
            return Outcome::Consumed;
        }
        match action {
            Some(Action::Cancel) => Outcome::Done,
            Some(Action::Accept) => match self.index().map(|i| &self.hits[i]) {
                Some(h) => {
                    cx.push(Intent::OpenAt {
                        conversation: h.conversation_id,
                        message: h.message_id,
                    });
                    Outcome::Done
                }
                None => Outcome::Consumed,
            },
            _ => {
                use ratatui::crossterm::event::KeyCode;
                if key.code == KeyCode::Enter || !crate::tui::text::edit_line(&mut self.input, key)
                {
                    return Outcome::Consumed;
                }
                self.run(cx.model);
                Outcome::Consumed
            }
        }
    }

    fn handle_paste(&mut self, text: &str, cx: &mut Cx<'_>) -> Outcome {
        self.input.insert_str(text.replace(['\n', '\r'], " "));
        self.run(cx.model);
        Outcome::Consumed
    }

    fn refresh(&mut self, model: &crate::tui::model::Model) {
        self.run(model);
    }

    fn render(&self, area: Rect, buf: &mut Buffer, cx: &RenderCx<'_>) {
        let r = super::help::centered(
            area,
            area.width.saturating_sub(4).min(110),
            area.height.saturating_sub(2),
        );
        let count = match (&self.error, self.hits.len()) {
            (Some(_), _) => String::new(),
            (None, n) if n >= LIMIT => format!(" newest {LIMIT} matches "),
            (None, 1) => " 1 match ".to_string(),
            (None, n) => format!(" {n} matches "),
        };
        let titles = [" Search all conversations ", " Search ", ""].map(String::from);
        let frame = super::query_popup::Frame {
            titles: &titles,
            count: &count,
            keys: &[
                &[
                    (Action::Down, "next"),
                    (Action::Accept, "open"),
                    (Action::Cancel, "close"),
                ],
                &[(Action::Accept, "open"), (Action::Cancel, "close")],
                &[(Action::Cancel, "close")],
            ],
        };
        let Some(list) = super::query_popup::draw(&frame, &self.input, r, buf, cx) else {
            return;
        };
        let width = list.width as usize;
        if let Some(e) = &self.error {
            buf.set_stringn(list.x, list.y, e, width, Style::new().fg(palette().error));
            return;
        }
        if self.hits.is_empty() {
            let why = if self.query().trim().is_empty() {
                "type words to find them in every conversation"
            } else {
                "no message has these words"
            };
            buf.set_stringn(list.x, list.y, why, width, Style::new().fg(palette().dim));
            return;
        }
        // Two rows per match: where and when, then the matching line.
        let per_page = (list.height as usize / 2).max(1);
        let sel = self.index().unwrap_or(0);
        let mut offset = self.offset.get().min(sel);
        if sel >= offset + per_page {
            offset = sel + 1 - per_page;
        }
        self.offset.set(offset);
        for (row, (i, h)) in self
            .hits
            .iter()
            .enumerate()
            .skip(offset)
            .take(per_page)
            .enumerate()
        {
            let y = list.y + (row * 2) as u16;
            let chosen = i == sel;
            let title = h
                .conversation_title
                .as_deref()
                .map(|t| sanitize_line(t).into_owned())
                .unwrap_or_else(|| format!("conversation #{}", h.conversation_id));
            let who = match h.role {
                Role::User => "you",
                Role::Assistant => "reply",
                Role::Tool => "tool",
                Role::Notice => "tock",
            };
            let head = format!(
                "{}{} · {} · {who}",
                if chosen { "› " } else { "  " },
                title,
                when(crate::when::happened(h.created_at, cx.now_ms), &cx.now)
            );
            let style = if chosen {
                Style::new()
                    .fg(palette().accent)
                    .add_modifier(Modifier::BOLD)
            } else {
                Style::new()
            };
            buf.set_stringn(list.x, y, elide(&head, width), width, style);
            if y + 1 < list.y + list.height {
                buf.set_line(
                    list.x,
                    y + 1,
                    &snippet_line(h, width.saturating_sub(4)),
                    list.width,
                );
            }
        }
    }
}
