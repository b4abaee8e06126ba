//! `/tools`: the tools the model is offered — tock's own and each MCP
//! server's — with each server's state and what a call of each tool does
//! (asks, runs, or is refused). Opening it starts the servers that are not
//! running yet (in the background), so their tools can be listed.

use crate::tui::theme::palette;
use std::cell::Cell;

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph, Widget};

use super::{Cx, Outcome, RenderCx, View, ViewKind};
use crate::config::Decision;
use crate::mcp::{ServerInfo, ServerState};
use crate::sanitize::sanitize_line;
use crate::tui::keymap::{Action, Scope};
use crate::tui::model::Model;

pub struct Tools {
    lines: Vec<Line<'static>>,
    scroll: usize,
    page: Cell<usize>,
    /// Rows the lines took at the last frame's width (they wrap).
    rows: Cell<usize>,
}

/// A line folded to `width`: what fits, then the rest word-wrapped on rows
/// of its own, indented under the tool's name, so a long description is
/// read whole at 60 columns instead of cut off.
fn fold(line: &Line<'static>, width: usize) -> Vec<Line<'static>> {
    use unicode_width::UnicodeWidthStr;
    if line.width() <= width || width < 16 {
        return vec![line.clone()];
    }
    let mut head = Vec::new();
    let mut used = 0;
    let mut rest = String::new();
    let mut rest_style = Style::new();
    for span in &line.spans {
        let w = span.content.width();
        if rest.is_empty() && used + w <= width {
            used += w;
            head.push(span.clone());
        } else {
            if rest.is_empty() {
                rest_style = span.style;
            }
            rest.push_str(&span.content);
        }
    }
    // Under a head (a tool's name), the description is indented; a line
    // that is all one span (a sentence) wraps flush.
    let (indent, mut out) = if head.is_empty() {
        (0, Vec::new())
    } else {
        (6, vec![Line::from(head)])
    };
    for row in crate::tui::chat::wrap_words(rest.trim(), width - indent) {
        out.push(Line::from(Span::styled(
            format!("{}{row}", " ".repeat(indent)),
            rest_style,
        )));
    }
    out
}

fn decision(d: Decision) -> Span<'static> {
    match d {
        Decision::Ask => Span::styled("asks  ", Style::new().fg(palette().warning)),
        Decision::Allow => Span::styled("runs  ", Style::new().fg(palette().success)),
        Decision::Deny => Span::styled("denied", Style::new().fg(palette().error)),
    }
}

fn state(s: &ServerInfo) -> Span<'static> {
    match &s.state {
        ServerState::NotStarted => Span::styled("not started", Style::new().fg(palette().dim)),
        ServerState::Starting => Span::styled("starting…", Style::new().fg(palette().warning)),
        ServerState::Running => Span::styled("running", Style::new().fg(palette().success)),
        ServerState::Failed(why) => Span::styled(
            format!("failed: {}", sanitize_line(why)),
            Style::new().fg(palette().error),
        ),
        ServerState::Disabled => Span::styled("disabled", Style::new().fg(palette().dim)),
    }
}

/// What the view shows, from the engine's current knowledge (nothing started here).
fn build(model: &Model) -> Vec<Line<'static>> {
    let policy = model.engine.approval_policy();
    let bold = Style::new().add_modifier(Modifier::BOLD);
    let dim = Style::new().fg(palette().dim);
    let tool_row = |name: &str, d: Decision, note: &str, description: &str| {
        let first = description.lines().next().unwrap_or("");
        Line::from(vec![
            Span::raw("  "),
            decision(d),
            Span::raw("  "),
            Span::styled(
                sanitize_line(name).into_owned(),
                Style::new().fg(palette().accent),
            ),
            Span::styled(note.to_string(), Style::new().fg(palette().success)),
            Span::styled(format!("  {}", sanitize_line(first)), dim),
        ])
    };
    let mut out = vec![Line::styled("tock (built in)", bold)];
    for spec in crate::engine::tools::specs() {
        out.push(tool_row(
            &spec.name,
            policy.decide_tool(&spec.name, false),
            "",
            &spec.description,
        ));
    }
    let servers = model.engine.mcp_servers();
    if servers.is_empty() {
        out.push(Line::default());
        out.push(Line::styled(
            "No MCP servers: add [mcp.NAME] with command = \"…\" (or url = \"…\") to the config.",
            dim,
        ));
    }
    for s in servers {
        out.push(Line::default());
        out.push(Line::from(vec![
            Span::styled(sanitize_line(&s.name).into_owned(), bold),
            Span::styled(format!(" ({}) ", s.transport), dim),
            state(&s),
        ]));
        if let Some(p) = &s.problem {
            out.push(Line::styled(
                format!("  last problem: {}", sanitize_line(p)),
                Style::new().fg(palette().warning),
            ));
        }
        if s.tools.is_empty() && matches!(s.state, ServerState::Running) {
            out.push(Line::styled("  (it offers no tools)", dim));
        }
        for t in &s.tools {
            out.push(tool_row(
                &t.name,
                policy.decide_tool(&t.name, t.read_only),
                if t.read_only { "  read-only" } else { "" },
                &t.description,
            ));
        }
    }
    out
}

impl Tools {
    /// The view; the servers not running yet are started in the background
    /// (the engine says when they are, and the view redraws).
    pub fn open(model: &Model) -> Self {
        let engine = model.engine.clone();
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                engine.refresh_mcp_servers().await;
            });
        }
        Self {
            lines: build(model),
            scroll: 0,
            page: Cell::new(10),
            rows: Cell::new(0),
        }
    }

    pub fn text(&self) -> String {
        self.lines
            .iter()
            .map(|l| {
                l.spans
                    .iter()
                    .map(|s| s.content.as_ref())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl View for Tools {
    fn kind(&self) -> ViewKind {
        ViewKind::Tools
    }

    fn handle_key(&mut self, key: KeyEvent, cx: &mut Cx<'_>) -> Outcome {
        let page = self.page.get().max(1);
        let max = self.rows.get().max(self.lines.len()).saturating_sub(page);
        match cx.keys.action(Scope::Help, &key) {
            Some(Action::Back) => return Outcome::Done,
            Some(Action::Up) => self.scroll = self.scroll.saturating_sub(1),
            Some(Action::Down) => self.scroll = (self.scroll + 1).min(max),
            Some(Action::PageUpList) => self.scroll = self.scroll.saturating_sub(page),
            Some(Action::PageDownList) => self.scroll = (self.scroll + page).min(max),
            Some(Action::First) => self.scroll = 0,
            Some(Action::Last) => self.scroll = max,
            _ => {}
        }
        Outcome::Consumed
    }

    fn refresh(&mut self, model: &Model) {
        self.lines = build(model);
    }

    fn render(&self, area: Rect, buf: &mut Buffer, cx: &RenderCx<'_>) {
        let width = area.width.saturating_sub(4).min(110);
        let folded: Vec<Line<'static>> = self
            .lines
            .iter()
            .flat_map(|l| fold(l, width.saturating_sub(2) as usize))
            .collect();
        self.rows.set(folded.len());
        let h = (folded.len() as u16 + 2).min(area.height.saturating_sub(2));
        let r = super::help::centered(area, width, h.max(5));
        Clear.render(r, buf);
        let close = cx.keys.label(Scope::Help, Action::Back);
        let mut block = Block::bordered()
            .border_type(BorderType::Rounded)
            .title(" Tools the model is offered ")
            .title_bottom(Line::from(format!(" {close} closes ")))
            .border_style(Style::new().fg(palette().accent));
        // Rows below the fold are said, as in the help (at 60×15 a server's
        // error could be all there was, out of sight).
        let below = folded
            .len()
            .saturating_sub(self.scroll + r.height.saturating_sub(2) as usize);
        if below > 0 {
            block = block.title_bottom(Line::from(format!(" ↓ {below} more ")).right_aligned());
        }
        let inner = block.inner(r);
        block.render(r, buf);
        self.page.set(inner.height as usize);
        let shown: Vec<Line<'static>> = folded.into_iter().skip(self.scroll).collect();
        Paragraph::new(shown).render(inner, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Line<'static>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn a_sentence_wraps_flush_and_a_description_under_its_tool_is_indented() {
        let sentence = Line::from("No MCP servers: add [mcp.NAME] with command to the config.");
        assert_eq!(
            texts(&fold(&sentence, 30)),
            [
                "No MCP servers: add [mcp.NAME]",
                "with command to the config."
            ]
        );
        let tool = Line::from(vec![
            Span::raw("  asks    "),
            Span::raw("schedule_task "),
            Span::raw("Schedule a follow-up task in this conversation."),
        ]);
        assert_eq!(
            texts(&fold(&tool, 30)),
            [
                "  asks    schedule_task ",
                "      Schedule a follow-up",
                "      task in this",
                "      conversation."
            ]
        );
    }
}
