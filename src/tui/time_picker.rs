//! The Ctrl+T time picker: choose when the text in the composer is sent.
//!
//! Also home of [`TimeInput`], the one-line time expression input with a live
//! preview, shared with the F2 pane's reschedule prompt so both teach the
//! same expressions the same way.

use crate::tui::shown_zone::ShownZone;
use crate::tui::theme::palette;
use chrono::{DateTime, Duration, Utc};
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget, Wrap};
use ratatui_textarea::TextArea;

use crate::tui::keymap::{Action, Keymap, Scope};
use crate::tui::views::{Cx, Intent, Outcome, RenderCx, View, ViewKind};
use crate::when;

/// Shown under an empty input: the expressions people reach for first.
const EXAMPLES: &str = "e.g. 10m, 1h30m, 9am, tomorrow 14:30, fri 5pm";

/// A one-line input for a time expression, with the parsed instant (or the
/// reason it cannot be read) previewed under it as the user types.
pub struct TimeInput {
    area: TextArea<'static>,
    /// A refusal from the last confirm (e.g. the engine's "in the past"),
    /// shown instead of the live preview until the text changes.
    error: Option<String>,
}

impl Default for TimeInput {
    fn default() -> Self {
        Self::new()
    }
}

impl TimeInput {
    pub fn new() -> Self {
        let mut area = TextArea::default();
        // The default underlined cursor line is noise in a one-line input.
        area.set_cursor_line_style(Style::default());
        area.set_placeholder_text(EXAMPLES);
        area.set_placeholder_style(Style::default().fg(palette().dim));
        Self { area, error: None }
    }

    /// The expression as typed, trimmed.
    pub fn text(&self) -> String {
        self.area.lines().join(" ").trim().to_string()
    }

    /// Empties the input (a new expression starts).
    pub fn clear(&mut self) {
        *self = Self::new();
    }

    pub fn set_error(&mut self, error: impl Into<String>) {
        self.error = Some(error.into());
    }

    /// Feed an editing key. Enter and the other newline keys are the caller's
    /// (they confirm); everything else edits the line. Returns whether the
    /// text changed.
    pub fn input(&mut self, key: KeyEvent) -> bool {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let newline = matches!(key.code, KeyCode::Enter)
            || (ctrl && matches!(key.code, KeyCode::Char('m' | 'j')));
        if newline {
            return false;
        }
        let changed = crate::tui::text::edit_line(&mut self.area, key);
        if changed {
            self.error = None;
        }
        changed
    }

    /// Insert a character (used when typing starts the input).
    pub fn insert_char(&mut self, c: char) {
        self.area.insert_char(c);
        self.error = None;
    }

    /// Pasted text, on one line (a time expression has no newlines).
    pub fn paste(&mut self, s: &str) {
        let line = crate::sanitize::sanitize_line(s);
        self.area.insert_str(line.trim());
        self.error = None;
    }

    /// The instant the expression resolves to, or one line saying why not.
    pub fn parse(&self, now: &DateTime<ShownZone>) -> Result<DateTime<Utc>, String> {
        let text = self.text();
        if text.is_empty() {
            return Err(format!("type a time first, {EXAMPLES}"));
        }
        let due = when::parse_time(&text, now, when::Mode::At).map_err(|e| e.to_string())?;
        // The parser promises a future instant (or this one, for `now`);
        // checked here too because a past one would be dispatched at once,
        // which is never what was meant.
        if due < now.with_timezone(&Utc) {
            return Err("that time is in the past".to_string());
        }
        Ok(due)
    }

    /// Draw the input on the first row of `area` and the preview (wrapped,
    /// up to the remaining rows) under it. `focused` shows the cursor;
    /// without focus the text is dim and has no preview, so it does not
    /// read as the time chosen.
    pub fn render(&self, area: Rect, buf: &mut Buffer, now: &DateTime<ShownZone>, focused: bool) {
        if area.height == 0 || area.width < 3 {
            return;
        }
        let prompt_style = if focused {
            Style::default()
                .fg(palette().accent)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default().fg(palette().dim)
        };
        // The `›` marks where the keys go: here only while focused (a preset
        // chosen above has its own, and two read as two choices).
        let prompt = if focused { "› " } else { "  " };
        buf.set_stringn(area.x, area.y, prompt, 2, prompt_style);
        let input = Rect::new(area.x + 2, area.y, area.width - 2, 1);
        if focused {
            (&self.area).render(input, buf);
        } else {
            // Without focus, no cursor block and no preview: the text (or the
            // placeholder) is drawn dim so it reads as neither editable nor
            // chosen.
            let text = self.text();
            let s = if text.is_empty() {
                EXAMPLES.to_string()
            } else {
                crate::sanitize::sanitize_line(&text).into_owned()
            };
            let style = Style::default().fg(palette().dim);
            buf.set_stringn(input.x, input.y, s, input.width as usize, style);
            return;
        }
        if area.height < 2 {
            return;
        }
        let rest = Rect::new(area.x, area.y + 1, area.width, area.height - 1);
        self.preview_line(now)
            .wrap(Wrap { trim: true })
            .render(rest, buf);
    }

    fn preview_line(&self, now: &DateTime<ShownZone>) -> Paragraph<'static> {
        let line = if let Some(e) = &self.error {
            Line::from(Span::styled(
                crate::sanitize::sanitize_line(e).into_owned(),
                Style::default().fg(palette().error),
            ))
        } else if self.text().is_empty() {
            // The placeholder in the input already shows examples.
            Line::default()
        } else {
            match self.parse(now) {
                Ok(due) => Line::from(vec![
                    Span::styled("sends ", Style::default().fg(palette().dim)),
                    Span::styled(
                        when::preview(due, now),
                        Style::default().fg(palette().success),
                    ),
                ]),
                Err(e) => Line::from(Span::styled(
                    crate::sanitize::sanitize_line(&e).into_owned(),
                    Style::default().fg(palette().error),
                )),
            }
        };
        Paragraph::new(line)
    }
}

/// The picker's entries, in order; the digit keys 1–5 jump to them.
const PRESETS: [&str; 5] = [
    "in 5 minutes",
    "in 30 minutes",
    "in 1 hour",
    "tomorrow 09:00",
    "custom…",
];
const CUSTOM: usize = PRESETS.len() - 1;

/// Whether `c` typed after a digit goes on with a number (`3pm`, `10m`,
/// `5:30`, `2 h`) rather than starting a word (`tomorrow`).
fn continues_a_number(c: char) -> bool {
    c.is_ascii_digit()
        || matches!(
            c.to_ascii_lowercase(),
            ':' | '.' | ' ' | 'm' | 'h' | 'd' | 'w' | 'p' | 'a'
        )
}

/// What the composer does after a key in the picker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PickerAction {
    None,
    Cancel,
    Pick(DateTime<Utc>),
}

/// The Ctrl+T popup: presets with their resolved times, and a custom
/// expression with a live preview.
pub struct TimePicker {
    selected: usize,
    custom: TimeInput,
    /// Keys go to the custom input (it is selected and being typed in).
    typing: bool,
    /// The digit that just jumped to a preset: a character typed next makes
    /// them both the start of a time (`3` then `pm`), not two jumps.
    jumped: Option<char>,
}

impl Default for TimePicker {
    fn default() -> Self {
        Self::new()
    }
}

impl TimePicker {
    /// Paste goes to the custom expression (selecting it).
    pub fn paste(&mut self, s: &str) {
        self.selected = CUSTOM;
        self.typing = true;
        self.custom.paste(s);
    }

    pub fn new() -> Self {
        Self {
            selected: 0,
            custom: TimeInput::new(),
            typing: false,
            jumped: None,
        }
    }

    /// The instant preset `index` stands for at `now` (None for "custom…").
    ///
    /// Computed here rather than parsed so the presets cannot drift from
    /// their labels. "tomorrow 09:00" is the next calendar day at 09:00 in
    /// `now`'s offset.
    pub fn preset(index: usize, now: &DateTime<ShownZone>) -> Option<DateTime<Utc>> {
        let utc = now.with_timezone(&Utc);
        match index {
            0 => Some(utc + Duration::minutes(5)),
            1 => Some(utc + Duration::minutes(30)),
            2 => Some(utc + Duration::hours(1)),
            3 => now
                .date_naive()
                .succ_opt()?
                .and_hms_opt(9, 0, 0)?
                .and_local_timezone(now.timezone())
                .earliest()
                .map(|t| t.with_timezone(&Utc)),
            _ => None,
        }
    }

    fn select(&mut self, index: usize) {
        self.selected = index.min(CUSTOM);
        // Landing on "custom…" means the user wants to type: no extra key.
        self.typing = self.selected == CUSTOM;
    }

    /// A key, with the default keymap.
    pub fn handle_key(&mut self, key: KeyEvent, now: DateTime<ShownZone>) -> PickerAction {
        static DEFAULT: std::sync::LazyLock<Keymap> = std::sync::LazyLock::new(Keymap::default);
        self.handle_key_with(key, now, &DEFAULT)
    }

    /// A key, looked up in the user's keymap.
    pub fn handle_key_with(
        &mut self,
        key: KeyEvent,
        now: DateTime<ShownZone>,
        keys: &Keymap,
    ) -> PickerAction {
        if key.kind == KeyEventKind::Release {
            return PickerAction::None;
        }
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        if let (Some(digit), KeyCode::Char(c), true) = (self.jumped.take(), key.code, plain)
            && continues_a_number(c)
            && self.custom.text().is_empty()
        {
            // `3pm`, `10m`, `5:30`: the digit began a time.
            self.start_typing(&[digit, c]);
            return PickerAction::None;
        }
        if self.typing {
            return self.custom_key(key, &now);
        }
        let tab = matches!(key.code, KeyCode::Tab | KeyCode::BackTab);
        match keys.action(Scope::Picker, &key) {
            Some(Action::Cancel) => PickerAction::Cancel,
            Some(Action::Up) => {
                self.select(self.selected.saturating_sub(1));
                PickerAction::None
            }
            Some(Action::Down) => {
                self.select(self.selected + 1);
                PickerAction::None
            }
            _ if tab => {
                if key.code == KeyCode::Tab {
                    self.select(self.selected + 1);
                } else {
                    self.select(self.selected.saturating_sub(1));
                }
                PickerAction::None
            }
            Some(
                a @ (Action::Preset1
                | Action::Preset2
                | Action::Preset3
                | Action::Preset4
                | Action::Custom),
            ) => {
                self.select(match a {
                    Action::Preset1 => 0,
                    Action::Preset2 => 1,
                    Action::Preset3 => 2,
                    Action::Preset4 => 3,
                    _ => CUSTOM,
                });
                if let KeyCode::Char(c) = key.code {
                    // A typed key in the list starts over, as in a fresh
                    // picker: a custom time left by Esc or ↑ is dropped.
                    self.custom.clear();
                    if c.is_ascii_digit() {
                        self.jumped = Some(c);
                    }
                }
                PickerAction::None
            }
            Some(Action::Accept) => match Self::preset(self.selected, &now) {
                Some(due) => PickerAction::Pick(due),
                None => {
                    self.typing = true;
                    PickerAction::None
                }
            },
            _ => match key.code {
                KeyCode::Char(c) if plain => {
                    // Any other character starts a time of the user's own
                    // (`tomorrow 3pm`, `8pm`): never dropped, never a
                    // preset picked instead of what was typed.
                    self.start_typing(&[c]);
                    PickerAction::None
                }
                _ => PickerAction::None,
            },
        }
    }

    /// Selects "custom…" and types `chars` into it, as a new expression:
    /// typing in the list after Esc or ↑ never appends to the old one.
    fn start_typing(&mut self, chars: &[char]) {
        self.select(CUSTOM);
        self.custom.clear();
        for &c in chars {
            self.custom.insert_char(c);
        }
    }

    fn custom_key(&mut self, key: KeyEvent, now: &DateTime<ShownZone>) -> PickerAction {
        match key.code {
            // Esc leaves the input for the list; a second Esc closes the picker.
            KeyCode::Esc => {
                self.typing = false;
                PickerAction::None
            }
            KeyCode::Up | KeyCode::BackTab => {
                self.select(CUSTOM - 1);
                PickerAction::None
            }
            KeyCode::Down | KeyCode::Tab => PickerAction::None,
            KeyCode::Enter => match self.custom.parse(now) {
                Ok(due) => PickerAction::Pick(due),
                Err(e) => {
                    self.custom.set_error(e);
                    PickerAction::None
                }
            },
            _ => {
                self.custom.input(key);
                PickerAction::None
            }
        }
    }

    /// Draws a centred popup inside `area`.
    pub fn render(&self, area: Rect, buf: &mut Buffer, now: DateTime<ShownZone>) {
        let width = area.width.min(62);
        let height = area.height.min(13);
        if width < 12 || height < 3 {
            return;
        }
        let popup = centered(area, width, height);
        Clear.render(popup, buf);
        let block = Block::bordered()
            .title(Span::styled(
                " Send later ",
                Style::default().add_modifier(Modifier::BOLD),
            ))
            .border_style(Style::default().fg(palette().accent));
        let inner = block.inner(popup);
        block.render(popup, buf);

        let mut y = inner.y;
        let bottom = inner.y + inner.height;
        for (i, label) in PRESETS.iter().enumerate() {
            if y >= bottom {
                return;
            }
            let selected = i == self.selected;
            let marker = if selected { "›" } else { " " };
            let row_style = if selected {
                Style::default().add_modifier(Modifier::REVERSED)
            } else {
                Style::default()
            };
            let when_text = match Self::preset(i, &now) {
                Some(due) => when::preview(due, &now),
                None if self.typing => "type below".to_string(),
                None => "type your own".to_string(),
            };
            let mut spans = vec![
                Span::styled(format!("{marker} {} ", i + 1), row_style),
                Span::styled(format!("{label:<15}"), row_style),
                Span::raw(" "),
            ];
            spans.push(Span::styled(
                when_text,
                Style::default().fg(if i == CUSTOM {
                    palette().dim
                } else {
                    palette().success
                }),
            ));
            buf.set_line(inner.x, y, &Line::from(spans), inner.width);
            y += 1;
        }
        // A blank row, then the custom input with its preview; the footer
        // keeps the last row.
        y += 1;
        if y + 1 < bottom {
            let rows = (bottom - 1 - y).min(3);
            let input_area = Rect::new(inner.x, y, inner.width, rows);
            self.custom.render(input_area, buf, &now, self.typing);
        }
        if inner.height >= 2 {
            let footer = if self.typing {
                footer_line(
                    &[("Enter", "schedule"), ("↑", "presets"), ("Esc", "back")],
                    POPUP_SEP,
                )
            } else {
                footer_line(
                    &[
                        ("↑↓", "select"),
                        ("1-5", "jump"),
                        ("Enter", "schedule"),
                        ("Esc", "cancel"),
                    ],
                    POPUP_SEP,
                )
            };
            buf.set_line(inner.x, bottom - 1, &footer, inner.width);
        }
    }
}

/// Between the key hints of a popup's footer.
pub(crate) const POPUP_SEP: &str = " · ";

/// `key label<sep>key label …`, keys highlighted, labels dim: the footers
/// that teach the keys. An empty label shows the key alone.
pub(crate) fn footer_line(keys: &[(&str, &str)], sep: &'static str) -> Line<'static> {
    let mut spans = Vec::new();
    for (i, (key, label)) in keys.iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(sep, Style::default().fg(palette().dim)));
        }
        spans.push(Span::styled(
            key.to_string(),
            Style::default()
                .fg(palette().accent)
                .add_modifier(Modifier::BOLD),
        ));
        if !label.is_empty() {
            spans.push(Span::styled(
                format!(" {label}"),
                Style::default().fg(palette().dim),
            ));
        }
    }
    Line::from(spans)
}

/// A `width`×`height` rectangle centred in `area` (clamped to it).
pub(crate) fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let width = width.min(area.width);
    let height = height.min(area.height);
    Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height - height) / 2,
        width,
        height,
    )
}

impl View for TimePicker {
    fn kind(&self) -> ViewKind {
        ViewKind::Picker
    }

    fn handle_key(&mut self, key: KeyEvent, cx: &mut Cx<'_>) -> Outcome {
        match self.handle_key_with(key, cx.now, cx.keys) {
            PickerAction::None => Outcome::Consumed,
            PickerAction::Cancel => Outcome::Done,
            PickerAction::Pick(due) => {
                cx.push(Intent::ScheduleComposer(due.timestamp_millis()));
                Outcome::Done
            }
        }
    }

    fn handle_paste(&mut self, text: &str, _cx: &mut Cx<'_>) -> Outcome {
        self.paste(text);
        Outcome::Consumed
    }

    fn render(&self, area: Rect, buf: &mut Buffer, cx: &RenderCx<'_>) {
        TimePicker::render(self, area, buf, cx.now);
    }

    fn next_change(&self, now_ms: i64) -> Option<i64> {
        // The presets' times are shown to the minute.
        Some(now_ms + 60_000 - now_ms.rem_euclid(60_000))
    }
}
