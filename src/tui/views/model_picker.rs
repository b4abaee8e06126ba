//! The model picker (`/model` with no name): the config's models, the
//! offline `echo`, and the ids their servers list, filtered as you type;
//! Enter makes the chosen one this conversation's model, as `/model NAME`
//! does. The servers' lists come in the background: the picker shows what
//! is in and says what is still being asked for.

use std::cell::Cell;

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui_textarea::TextArea;
use unicode_width::UnicodeWidthStr;

use super::{Cx, Intent, Outcome, RenderCx, View, ViewKind};
use crate::engine::Engine;
use crate::sanitize::sanitize_line;
use crate::tui::keymap::{Action, Scope};
use crate::tui::text::elide;
use crate::tui::theme::palette;

/// How often the picker looks again while a server's list is on its way.
const LOOK_AGAIN_MS: i64 = 250;

pub struct ModelPicker {
    filter: TextArea<'static>,
    /// The conversation's model as chosen (None: the default).
    current: Option<String>,
    /// The name of the model in use (the default's when none was chosen).
    in_use: String,
    /// The name on offer that is the model in use (`fake-2` in the list
    /// of its server for `x/fake-2`), once it is on offer.
    in_use_offered: Option<String>,
    /// What the current model is, for the title ("gpt-4o-mini (openai)").
    current_label: String,
    /// Every name offered, in the engine's order, and the ones the filter keeps.
    names: Vec<String>,
    shown: Vec<usize>,
    /// The chosen name (it stays on its name as the list grows).
    selected: Option<String>,
    /// Nothing moved the choice yet: it goes to the model in use once that
    /// is listed (an id of its server's list, which comes later).
    on_current: bool,
    /// A server's list is still being asked for.
    coming: bool,
    /// Why a server's list could not be read, if one could not.
    failed: Option<String>,
    /// First row shown; set while drawing to keep the choice in view.
    offset: Cell<usize>,
}

impl ModelPicker {
    /// `in_use`: the name of the model the conversation uses, and
    /// `current_label` how the status bar names it with its provider.
    pub fn new(
        engine: &Engine,
        current: Option<String>,
        in_use: String,
        current_label: String,
    ) -> Self {
        let mut filter = TextArea::default();
        filter.set_cursor_line_style(Style::default());
        let mut p = Self {
            filter,
            selected: Some(in_use.clone()),
            on_current: true,
            current,
            in_use,
            in_use_offered: None,
            current_label,
            names: Vec::new(),
            shown: Vec::new(),
            coming: false,
            failed: None,
            offset: Cell::new(0),
        };
        p.look(engine);
        p
    }

    /// The names on offer now, and whether more are coming.
    fn look(&mut self, engine: &Engine) {
        let current = self.current.as_deref();
        let mut names = engine.model_candidates(current);
        // The model in use, the default one and what the default's server
        // lists are always on offer: with no config file, or after `echo`
        // was chosen, they were not (and Enter fell to `echo`).
        let offered = |names: &[String]| {
            names
                .iter()
                .find(|n| **n == self.in_use || engine.model_name_for(n, current) == self.in_use)
                .cloned()
        };
        if offered(&names).is_none() && !self.in_use.is_empty() {
            names.insert(0, self.in_use.clone());
        }
        // Each model once: `fake-1` is not offered beside `x/fake-1`.
        let default = engine.config().facts(None).ok().map(|f| f.name);
        let mut chosen_as: Vec<String> = names
            .iter()
            .map(|n| engine.model_name_for(n, current))
            .collect();
        for name in default.into_iter().chain(engine.model_candidates(None)) {
            let as_chosen = engine.model_name_for(&name, current);
            if !name.is_empty() && !names.contains(&name) && !chosen_as.contains(&as_chosen) {
                names.push(name);
                chosen_as.push(as_chosen);
            }
        }
        self.in_use_offered = offered(&names);
        self.names = names;
        self.coming = engine.model_lists_coming()
            || engine.model_list_coming(current)
            || engine.model_list_coming(None);
        // Each server whose list could not be read is said (its ids are
        // missing), the first in full.
        let failures = engine.model_list_failures(current);
        // The names first (a narrow row cuts the reasons, not them).
        self.failed = match failures.as_slice() {
            [] => None,
            [(None, why)] => Some(format!(
                "the server's list could not be read: {}",
                sanitize_line(why)
            )),
            [(Some(e), why)] => Some(format!(
                "the list of {}'s server could not be read: {}",
                sanitize_line(e),
                sanitize_line(why)
            )),
            all => {
                let name = |e: &Option<String>| match e {
                    None => "this model's".to_string(),
                    Some(e) => sanitize_line(e).into_owned(),
                };
                let names: Vec<String> = all.iter().map(|(e, _)| name(e)).collect();
                let whys: Vec<String> = all
                    .iter()
                    .map(|(e, why)| format!("{}: {}", name(e), sanitize_line(why)))
                    .collect();
                Some(format!(
                    "the lists of the servers of {} could not be read — {}",
                    names.join(", "),
                    whys.join("; ")
                ))
            }
        };
        self.apply_filter();
    }

    fn apply_filter(&mut self) {
        let q = self.filter.lines().join(" ").to_lowercase();
        let words: Vec<&str> = q.split_whitespace().collect();
        self.shown = self
            .names
            .iter()
            .enumerate()
            .filter(|(_, n)| {
                let n = n.to_lowercase();
                words.iter().all(|w| n.contains(w))
            })
            .map(|(i, _)| i)
            .collect();
        if let Some(name) = self.in_use_offered.as_ref().filter(|_| self.on_current)
            && self.shown.iter().any(|&i| &self.names[i] == name)
        {
            self.selected = Some(name.clone());
        }
        if !self
            .selected
            .as_ref()
            .is_some_and(|s| self.shown.iter().any(|&i| &self.names[i] == s))
        {
            self.selected = self.shown.first().map(|&i| self.names[i].clone());
        }
    }

    /// The names the filter keeps, in order (for tests).
    pub fn shown(&self) -> Vec<&str> {
        self.shown.iter().map(|&i| self.names[i].as_str()).collect()
    }

    pub fn selected(&self) -> Option<&str> {
        self.selected.as_deref()
    }

    fn index(&self) -> Option<usize> {
        let s = self.selected.as_ref()?;
        self.shown.iter().position(|&i| &self.names[i] == s)
    }

    fn move_by(&mut self, d: isize) {
        if self.shown.is_empty() {
            return;
        }
        self.on_current = false;
        let i = super::stepped(self.index().unwrap_or(0), self.shown.len(), d);
        self.selected = Some(self.names[self.shown[i]].clone());
    }

    /// What a name is, in a few words, beside it.
    fn what(&self, name: &str, engine: &Engine) -> String {
        let config = engine.config();
        let mut words = Vec::new();
        if self.in_use_offered.as_deref() == Some(name) {
            words.push("current".to_string());
        }
        if name == "echo" {
            words.push("offline".to_string());
        } else if config.names_a_config_model(name) && !name.contains('/') {
            if let Ok(f) = config.facts(Some(name)) {
                words.push(format!("{} {}", f.kind.label(), sanitize_line(&f.model)));
            }
        } else {
            words.push("listed by its server".to_string());
        }
        words.join(" · ")
    }
}

impl View for ModelPicker {
    fn kind(&self) -> ViewKind {
        ViewKind::ModelPicker
    }

    fn handle_key(&mut self, key: KeyEvent, cx: &mut Cx<'_>) -> Outcome {
        // The search's list keys: the same keys move in every list.
        let action = cx.keys.action(Scope::Search, &key);
        if let Some(step) = super::list_step(action) {
            self.move_by(step);
            return Outcome::Consumed;
        }
        match action {
            Some(Action::Cancel) => Outcome::Done,
            Some(Action::Accept) => {
                let typed = self.filter.lines().join(" ").trim().to_string();
                match self.selected.clone() {
                    Some(name) if self.index().is_some() => {
                        cx.push(Intent::ChooseModel(name));
                        Outcome::Done
                    }
                    // A name no list has (a server that lists not all it
                    // serves): taken as `/model NAME` would take it.
                    _ if !typed.is_empty() => {
                        cx.push(Intent::ChooseModel(typed));
                        Outcome::Done
                    }
                    _ => Outcome::Consumed,
                }
            }
            _ => {
                use ratatui::crossterm::event::KeyCode;
                if key.code != KeyCode::Enter && crate::tui::text::edit_line(&mut self.filter, key)
                {
                    // Searching: the name typed whole is the choice, else
                    // the first that has the letters.
                    self.on_current = false;
                    self.apply_filter();
                    let typed = self.filter.lines().join(" ");
                    let shown: Vec<&str> = self.shown();
                    self.selected = choice_for(&shown, &typed).map(str::to_string);
                }
                Outcome::Consumed
            }
        }
    }

    fn handle_paste(&mut self, text: &str, _cx: &mut Cx<'_>) -> Outcome {
        self.filter.insert_str(text.replace(['\n', '\r'], " "));
        self.on_current = false;
        self.apply_filter();
        Outcome::Consumed
    }

    fn refresh(&mut self, model: &crate::tui::model::Model) {
        self.look(&model.engine);
    }

    /// While a list is on its way: look again soon.
    fn next_change(&self, now_ms: i64) -> Option<i64> {
        self.coming.then_some(now_ms + LOOK_AGAIN_MS)
    }

    fn on_tick(&mut self, model: &crate::tui::model::Model) {
        if self.coming {
            self.look(&model.engine);
        }
    }

    fn render(&self, area: Rect, buf: &mut Buffer, cx: &RenderCx<'_>) {
        // As tall as the whole list (it does not jump as the filter
        // narrows it): the borders, the filter and a blank row, the names,
        // and the row that says what is still coming.
        let rows = u16::try_from(self.names.len()).unwrap_or(u16::MAX);
        let foot_rows = u16::from(self.coming || self.failed.is_some());
        let r = super::help::centered(
            area,
            area.width.saturating_sub(4).min(80),
            rows.saturating_add(4 + foot_rows)
                .max(6)
                .min(area.height.saturating_sub(2)),
        );
        let label = sanitize_line(&self.current_label);
        let titles = [
            format!(" Model for this conversation: {label} "),
            format!(" Model: {label} "),
            " Model ".to_string(),
        ];
        let frame = super::query_popup::Frame {
            titles: &titles,
            count: "",
            keys: &[
                &[
                    (Action::Up, "previous"),
                    (Action::Down, "next"),
                    (Action::Accept, "use"),
                    (Action::Cancel, "close"),
                ],
                &[
                    (Action::Down, "next"),
                    (Action::Accept, "use"),
                    (Action::Cancel, "close"),
                ],
                &[(Action::Accept, "use"), (Action::Cancel, "close")],
                &[(Action::Cancel, "close")],
            ],
        };
        let Some(mut list) = super::query_popup::draw(&frame, &self.filter, r, buf, cx) else {
            return;
        };
        let width = usize::from(list.width);
        // The last row says what is still on its way, or why it is not.
        let foot = if self.coming {
            Some((
                "asking the servers for their models…".to_string(),
                palette().dim,
            ))
        } else {
            self.failed
                .as_ref()
                .map(|why| (why.clone(), palette().error))
        };
        if let Some((text, colour)) = foot
            && list.height > 1
        {
            let y = list.y + list.height - 1;
            buf.set_stringn(
                list.x,
                y,
                elide(&text, width),
                width,
                Style::new().fg(colour),
            );
            list.height -= 1;
        }
        if self.shown.is_empty() {
            let why = if self.names.is_empty() {
                "no model is configured"
            } else {
                "no model listed has these letters: Enter takes them as the name"
            };
            buf.set_stringn(list.x, list.y, why, width, Style::new().fg(palette().dim));
            return;
        }
        let per_page = usize::from(list.height).max(1);
        let sel = self.index().unwrap_or(0);
        let mut offset = self.offset.get().min(sel);
        if sel >= offset + per_page {
            offset = sel + 1 - per_page;
        }
        self.offset.set(offset);
        let name_width = self
            .shown
            .iter()
            .map(|&i| self.names[i].width())
            .max()
            .unwrap_or(0)
            .min(width / 2);
        for (row, (at, &i)) in self
            .shown
            .iter()
            .enumerate()
            .skip(offset)
            .take(per_page)
            .enumerate()
        {
            let y = list.y + row as u16;
            let name = sanitize_line(&self.names[i]);
            let chosen = at == sel;
            let style = if chosen {
                Style::new()
                    .fg(palette().accent)
                    .add_modifier(Modifier::BOLD)
            } else {
                Style::new()
            };
            let head = format!(
                "{}{:<name_width$}",
                if chosen { "› " } else { "  " },
                elide(&name, name_width)
            );
            buf.set_stringn(list.x, y, &head, width, style);
            let used = head.width() + 2;
            if used < width {
                let what = self.what(&self.names[i], &cx.model.engine);
                buf.set_stringn(
                    list.x + used as u16,
                    y,
                    elide(&what, width - used),
                    width - used,
                    Style::new().fg(palette().dim),
                );
            }
        }
    }
}

/// The choice as letters are typed: the name typed whole (whatever its
/// case), else the first shown that has them.
fn choice_for<'a>(shown: &[&'a str], typed: &str) -> Option<&'a str> {
    let typed = typed.trim().to_lowercase();
    shown
        .iter()
        .find(|n| n.to_lowercase() == typed)
        .or_else(|| shown.first())
        .copied()
}

#[cfg(test)]
mod tests {
    use super::choice_for;

    #[test]
    fn the_name_typed_whole_is_chosen_before_a_longer_one_listed_first() {
        let shown = ["gpt-4o-mini", "gpt-4o", "gpt-4o-2024"];
        assert_eq!(choice_for(&shown, "gpt-4o"), Some("gpt-4o"));
        assert_eq!(choice_for(&shown, "GPT-4O "), Some("gpt-4o"));
        assert_eq!(choice_for(&shown, "gpt"), Some("gpt-4o-mini"));
        assert_eq!(choice_for(&[], "gpt"), None);
    }
}
