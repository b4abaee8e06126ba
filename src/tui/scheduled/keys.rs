//! What a key does in the F2 pane, in each of its modes: the list (moves,
//! jumps, and the keys that act on the selected item or series), the
//! reschedule prompt, the text editor, the rule editor and the cancel
//! confirmation. Every change goes through the engine as a write.

use crate::tui::shown_zone::ShownZone;
use chrono::DateTime;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::style::Style;
use ratatui_textarea::TextArea;

use super::{DEFAULT_KEYS, Mode, PaneAction, ScheduledPane};
use crate::engine::{Engine, ItemAction};
use crate::sanitize::sanitize;
use crate::store::{Kind, Status, error_line};
use crate::tui::keymap::{Action, Keymap, Scope};
use crate::tui::theme::palette;
use crate::tui::time_picker::TimeInput;
use crate::when;

/// How a key answers one of the pane's questions (cancel, end, send
/// early).
enum Answer {
    Yes,
    No,
    /// A letter is no answer, and the question goes with it: it is typing
    /// meant elsewhere (`y` answered, and "sync" sent a message early).
    Typing,
    /// Anything else: still asking.
    Asking,
}

impl Answer {
    fn of(key: &KeyEvent) -> Self {
        match key.code {
            KeyCode::Enter => Answer::Yes,
            KeyCode::Char('n' | 'N') | KeyCode::Esc => Answer::No,
            _ if crate::tui::views::is_typing(key) => Answer::Typing,
            _ => Answer::Asking,
        }
    }
}

const NOT_AN_ANSWER: &str = "not done: only Enter answers yes";

impl ScheduledPane {
    pub fn handle_key(
        &mut self,
        key: KeyEvent,
        engine: &Engine,
        now: DateTime<ShownZone>,
    ) -> PaneAction {
        self.handle_key_with(key, engine, now, &DEFAULT_KEYS)
    }

    /// A key, looked up in `keys` (the user's keymap).
    pub fn handle_key_with(
        &mut self,
        key: KeyEvent,
        engine: &Engine,
        now: DateTime<ShownZone>,
        keys: &Keymap,
    ) -> PaneAction {
        if key.kind == KeyEventKind::Release {
            return PaneAction::None;
        }
        let now_ms = now.timestamp_millis();
        if let Some(at) = self.text_opened_at.take()
            && matches!(self.mode, Mode::Edit { .. })
            && matches!(key.code, KeyCode::Char(c) if c.is_alphabetic())
            && crate::tui::views::is_typing(&key)
            && now_ms.saturating_sub(at) < crate::tui::app::TYPED_ON_MS
        {
            self.mode = Mode::List;
            return PaneAction::Info(
                "closed, nothing changed: a letter came at once after the one that opened it (typing meant for the composer? Esc closes F2)".into(),
            );
        }
        match std::mem::replace(&mut self.mode, Mode::List) {
            Mode::List => {
                let action = self.list_key(key, engine, keys);
                if matches!(self.mode, Mode::Edit { .. }) {
                    self.text_opened_at = Some(now_ms);
                }
                action
            }
            Mode::Reschedule { id, seen, input } => {
                self.reschedule_key(key, engine, now, (id, seen), input)
            }
            Mode::Edit {
                id,
                seen,
                editor,
                error,
            } => self.edit_key(key, engine, (id, seen), editor, error),
            Mode::ConfirmCancel { id, seen, text } => self.confirm_key(key, engine, id, seen, text),
            Mode::ConfirmSendEarly { id, seen, ahead } => match Answer::of(&key) {
                Answer::Yes => self.send_now(engine, id, seen),
                Answer::No => PaneAction::None,
                Answer::Typing => PaneAction::Info(NOT_AN_ANSWER.into()),
                Answer::Asking => {
                    self.mode = Mode::ConfirmSendEarly { id, seen, ahead };
                    PaneAction::None
                }
            },
            Mode::Rule { id, input, preview } => self.rule_key(key, engine, id, input, preview),
        }
    }

    fn list_key(&mut self, key: KeyEvent, engine: &Engine, keys: &Keymap) -> PaneAction {
        let page = self.page.get().max(1) as isize;
        let Some(action) = keys.action(Scope::Scheduled, &key) else {
            // A letter the list does not use is typing meant for the
            // composer: F2 closes and it goes there (its own letters in
            // the words acted: "… the docs" Enter sent a message early).
            if crate::tui::views::is_typing(&key) {
                return PaneAction::Dismiss;
            }
            return PaneAction::None;
        };
        let store = engine.reader();
        let moved = match action {
            Action::Back => return PaneAction::Close,
            Action::Up => self.move_by(-1, store),
            Action::Down => self.move_by(1, store),
            Action::PageUpList => self.move_by(-page, store),
            Action::PageDownList => self.move_by(page, store),
            Action::First => self.first(store),
            Action::Last => self.last(store),
            _ => Ok(()),
        };
        if let Err(e) = moved {
            return PaneAction::Error(error_line(&e));
        }
        match action {
            Action::ShowFinished => {
                self.show_all = !self.show_all;
                return match self.refresh_with(engine) {
                    Ok(()) => PaneAction::None,
                    Err(e) => PaneAction::Error(error_line(&e)),
                };
            }
            Action::Jump => {
                let Some(row) = self.selected_row() else {
                    return PaneAction::None;
                };
                return match (row.item.conversation_id, &row.conversation) {
                    (Some(cid), Some(_)) => PaneAction::Jump(cid),
                    _ => PaneAction::Info(format!(
                        "#{}: its conversation was deleted{}",
                        row.item.id,
                        if row.item.kind == Kind::Task {
                            "; the task will open a new one"
                        } else {
                            ""
                        }
                    )),
                };
            }
            Action::RescheduleItem => return self.item_key('r', engine),
            Action::EditItem => return self.item_key('e', engine),
            Action::CancelItem => return self.item_key('x', engine),
            Action::SendNow => return self.item_key('s', engine),
            Action::RetryItem => return self.item_key('R', engine),
            Action::PauseSeries => return self.item_key('p', engine),
            Action::SkipNext => return self.item_key('n', engine),
            _ => {}
        }
        PaneAction::None
    }

    /// The keys that act on the selected item.
    fn item_key(&mut self, c: char, engine: &Engine) -> PaneAction {
        let Some(row) = self.selected_row() else {
            return PaneAction::Info(if self.list.is_empty() {
                "nothing is scheduled".to_string()
            } else {
                "no item is selected (the one selected has gone): ↑/↓ chooses one".to_string()
            });
        };
        if self.unseen.get() {
            // Typed ahead for the item that left: not for the one that
            // took its place, which no frame has shown selected yet.
            return PaneAction::Info(
                "the item you chose has left; the next one is selected now: press again to act on it"
                    .to_string(),
            );
        }
        if let Some(v) = &row.series {
            return self.series_key(c, engine, v.clone());
        }
        if let Some(a) = &row.approval {
            return PaneAction::Info(format!(
                "approval {} waits for your answer in its conversation: Enter goes there",
                a.id
            ));
        }
        let id = row.item.id;
        let seen = row.item.updated_at;
        let status = row.item.status;
        // Refuse up front what the store would refuse, with the reason, so
        // nobody types a new time or text only to have it thrown away.
        let open = matches!(status, Status::Pending | Status::Failed | Status::Expired);
        let why_not = || match status {
            Status::Sending => format!("#{id} is being sent right now"),
            Status::Sent => format!("#{id} was already sent"),
            Status::Canceled => format!("#{id} is canceled (r reschedules it, R sends it again)"),
            _ => format!("#{id} can't be changed now"),
        };
        if row.item.kind == Kind::Regenerate && matches!(c, 'r' | 'e') {
            return PaneAction::Info(format!(
                "#{id} generates the last reply again: it has no text or time to change (x calls it off and keeps the earlier reply)"
            ));
        }
        match c {
            'r' if open || status == Status::Canceled => {
                self.mode = Mode::Reschedule {
                    id,
                    seen,
                    input: Box::new(TimeInput::new()),
                };
                PaneAction::None
            }
            'e' if open => {
                let editor = editor_for(&row.item.text);
                self.mode = Mode::Edit {
                    id,
                    seen,
                    editor: Box::new(editor),
                    error: None,
                };
                PaneAction::None
            }
            'x' if open => {
                self.mode = Mode::ConfirmCancel {
                    id,
                    seen,
                    text: row.item.text.clone(),
                };
                PaneAction::None
            }
            's' if open => match crate::tui::views::sent_early_by(row.item.due_at, engine.now_ms())
            {
                Some(ahead) => {
                    self.mode = Mode::ConfirmSendEarly { id, seen, ahead };
                    PaneAction::None
                }
                None => self.send_now(engine, id, seen),
            },
            'R' if matches!(status, Status::Failed | Status::Expired | Status::Canceled) => self
                .act(
                    engine,
                    move |e| e.act_on_item(id, seen, ItemAction::Retry),
                    format!("#{id} will be sent again"),
                ),
            'R' if status == Status::Pending => {
                PaneAction::Info(format!("#{id} is still waiting to be sent; s sends it now"))
            }
            _ => PaneAction::Info(why_not()),
        }
    }

    /// Send item `id` now, as soon as its conversation is free.
    fn send_now(&mut self, engine: &Engine, id: i64, seen: i64) -> PaneAction {
        let conv = self
            .index_of(id)
            .and_then(|i| self.list.get(i))
            .and_then(|row| row.conversation.clone())
            .unwrap_or_else(|| "its conversation".to_string());
        self.act_leaving(
            engine,
            id,
            move |e| e.act_on_item(id, seen, ItemAction::SendNow),
            format!("#{id} will be sent as soon as {conv} is free"),
        )
    }

    /// The keys on a recurring series: pause/resume, skip next, edit text,
    /// edit rule, end, send one extra occurrence now.
    fn series_key(&mut self, c: char, engine: &Engine, v: crate::engine::SeriesView) -> PaneAction {
        use crate::store::SeriesStatus;
        let id = v.series.id;
        if v.series.status == SeriesStatus::Ended {
            return PaneAction::Info(format!("series #{id} has ended"));
        }
        match c {
            'p' if v.series.status == SeriesStatus::Paused => {
                self.act(engine, move |e| e.resume_series(id), format!("series #{id} resumed"))
            }
            'p' => self.act(engine, move |e| e.pause_series(id), format!("series #{id} paused")),
            'n' => self.write(engine, move |e| e.skip_next(id), move |pane, engine, r| match r {
                Ok(Some(next)) => {
                    let when = engine.show_time(next);
                    pane.reload(engine, format!("series #{id}: skipped one; next {when}"))
                }
                Ok(None) => pane.reload(engine, format!("series #{id}: skipped its last occurrence; it has ended")),
                Err(e) => PaneAction::Error(error_line(&e)),
            }),
            'e' => {
                let editor = editor_for(&v.series.text);
                self.mode = Mode::Edit {
                    id,
                    seen: v.series.updated_at,
                    editor: Box::new(editor),
                    error: None,
                };
                PaneAction::None
            }
            'r' => {
                // The whole schedule, its ends too: Enter on it changes
                // nothing. It is selected, so a new rule typed replaces it
                // (typed after it, the two ran together: `every weekday at
                // 09:00every mon,wed 8:30`); a move first keeps it to edit.
                let expr = engine.series_expression(&v.series);
                let mut input = TextArea::new(vec![sanitize(&expr).into_owned()]);
                input.set_cursor_line_style(Style::default());
                input.set_selection_style(
                    Style::default()
                        .fg(palette().on(palette().highlight))
                        .bg(palette().highlight),
                );
                input.select_all();
                let preview = rule_preview(engine, id, &expr);
                self.mode = Mode::Rule {
                    id,
                    input: Box::new(input),
                    preview,
                };
                PaneAction::None
            }
            'x' => {
                self.mode = Mode::ConfirmCancel {
                    id,
                    seen: v.series.updated_at,
                    text: String::new(),
                };
                PaneAction::None
            }
            's' => self.write(engine, move |e| e.send_series_now(id), move |pane, engine, r| match r {
                Ok(item) => pane.reload(engine, format!("series #{id}: one extra occurrence (#{item}) sent as soon as its conversation is free")),
                Err(e) => PaneAction::Error(error_line(&e)),
            }),
            'R' => PaneAction::Info(format!("series #{id}: s sends one occurrence now")),
            _ => PaneAction::None,
        }
    }

    fn rule_key(
        &mut self,
        key: KeyEvent,
        engine: &Engine,
        id: i64,
        mut input: Box<TextArea<'static>>,
        preview: Result<String, String>,
    ) -> PaneAction {
        match key.code {
            KeyCode::Esc => PaneAction::None,
            KeyCode::Enter => {
                let expr = input.lines().join(" ");
                let rule = expr.trim().to_string();
                self.write(
                    engine,
                    move |e| e.edit_series_rule(id, &rule),
                    move |pane, engine, r| match r {
                        Ok(()) => pane.reload(
                            engine,
                            format!("series #{id}: {}", preview.unwrap_or_default()),
                        ),
                        Err(e) => {
                            // Kept open: the user fixes the rule rather than retyping it.
                            let line = error_line(&e);
                            pane.mode = Mode::Rule {
                                id,
                                input,
                                preview: Err(line.clone()),
                            };
                            PaneAction::Error(line)
                        }
                    },
                )
            }
            _ => {
                // While the old rule is selected, a letter or a delete
                // replaces it; any other key (a move) keeps it to edit.
                let replaces = matches!(key.code, KeyCode::Backspace | KeyCode::Delete)
                    || crate::tui::views::is_typing(&key);
                if !replaces {
                    input.cancel_selection();
                }
                crate::tui::text::edit_line(&mut input, key);
                let preview = rule_preview(engine, id, &input.lines().join(" "));
                self.mode = Mode::Rule { id, input, preview };
                PaneAction::None
            }
        }
    }

    fn reschedule_key(
        &mut self,
        key: KeyEvent,
        engine: &Engine,
        now: DateTime<ShownZone>,
        (id, seen): (i64, i64),
        mut input: Box<TimeInput>,
    ) -> PaneAction {
        match key.code {
            KeyCode::Esc => PaneAction::None,
            KeyCode::Enter => match input.parse(&now) {
                Err(e) => {
                    input.set_error(e);
                    self.mode = Mode::Reschedule { id, seen, input };
                    PaneAction::None
                }
                Ok(due) => self.write(
                    engine,
                    move |e| {
                        e.act_on_item(id, seen, ItemAction::Reschedule(due.timestamp_millis()))
                    },
                    move |pane, engine, r| match r {
                        Ok(()) => pane.reload(
                            engine,
                            format!("#{id} rescheduled: {}", when::preview(due, &now)),
                        ),
                        Err(e) => {
                            // Kept open: the user fixes the time rather than retyping it.
                            let line = error_line(&e);
                            input.set_error(line.clone());
                            pane.mode = Mode::Reschedule { id, seen, input };
                            PaneAction::Error(line)
                        }
                    },
                ),
            },
            _ => {
                input.input(key);
                self.mode = Mode::Reschedule { id, seen, input };
                PaneAction::None
            }
        }
    }

    fn edit_key(
        &mut self,
        key: KeyEvent,
        engine: &Engine,
        (id, seen): (i64, i64),
        mut editor: Box<TextArea<'static>>,
        error: Option<String>,
    ) -> PaneAction {
        let m = key.modifiers;
        let newline = (key.code == KeyCode::Enter
            && m.intersects(KeyModifiers::ALT | KeyModifiers::SHIFT))
            || (m.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('j'));
        let save = !newline
            && (key.code == KeyCode::Enter
                || (m.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('s')));
        if key.code == KeyCode::Esc {
            return PaneAction::None;
        }
        if newline {
            editor.insert_newline();
            self.mode = Mode::Edit {
                id,
                seen,
                editor,
                error: None,
            };
            return PaneAction::None;
        }
        if save {
            // The store refuses an empty text; the editor stays open either way.
            let text = editor.lines().join("\n");
            let typed = text.clone();
            let series = self.is_series(id);
            return self.write(
                engine,
                move |e| {
                    if series {
                        e.edit_series_text(id, &text)
                    } else {
                        e.act_on_item(id, seen, ItemAction::Edit(text))
                    }
                },
                move |pane, engine, r| match r {
                    Ok(()) => pane.reload(engine, format!("#{id} saved")),
                    // Nothing typed to lose: the editor stays for another try.
                    Err(e) if typed.trim().is_empty() => {
                        let line = error_line(&e);
                        pane.mode = Mode::Edit {
                            id,
                            seen,
                            editor,
                            error: Some(line.clone()),
                        };
                        PaneAction::Error(line)
                    }
                    // The item went or changed meanwhile (sent, canceled,
                    // edited elsewhere): what was typed waits in the
                    // composer, as the queue strip's edit does.
                    Err(e) => {
                        let error = error_line(&e);
                        match pane.refresh_with(engine) {
                            Ok(()) => PaneAction::KeepInComposer { text: typed, error },
                            Err(reload) => PaneAction::KeepInComposer {
                                text: typed,
                                error: format!("{error}; {}", error_line(&reload)),
                            },
                        }
                    }
                },
            );
        }
        let changed = crate::tui::text::edit_line(&mut editor, key);
        self.mode = Mode::Edit {
            id,
            seen,
            editor,
            error: if changed { None } else { error },
        };
        PaneAction::None
    }

    fn confirm_key(
        &mut self,
        key: KeyEvent,
        engine: &Engine,
        id: i64,
        seen: i64,
        text: String,
    ) -> PaneAction {
        match Answer::of(&key) {
            Answer::Yes if self.is_series(id) => self.act_leaving(
                engine,
                id,
                move |e| e.end_series(id),
                format!("series #{id} ended"),
            ),
            Answer::Yes => self.act_leaving(
                engine,
                id,
                move |e| e.act_on_item(id, seen, ItemAction::Cancel { text }),
                format!("#{id} canceled"),
            ),
            Answer::No => PaneAction::None,
            Answer::Typing => PaneAction::Info(NOT_AN_ANSWER.into()),
            Answer::Asking => {
                self.mode = Mode::ConfirmCancel { id, seen, text };
                PaneAction::None
            }
        }
    }
}

/// An editor on `text`, cursor at its end. Shown, so made safe; saving
/// then stores the safe form, which only differs for text with control
/// codes (made visible) or tabs (expanded).
fn editor_for(text: &str) -> TextArea<'static> {
    let lines: Vec<String> = sanitize(text).lines().map(str::to_string).collect();
    let mut editor = TextArea::new(lines);
    editor.set_cursor_line_style(Style::default());
    // Onto the rows the box has, as the composer does (sideways, the start
    // of a long text was out of sight with nothing to say so).
    editor.set_wrap_mode(ratatui_textarea::WrapMode::WordOrGlyph);
    editor.move_cursor(ratatui_textarea::CursorMove::Bottom);
    editor.move_cursor(ratatui_textarea::CursorMove::End);
    editor
}

/// The preview of a rule being typed for series `id`: in words with its
/// next occurrences, or why not; and, when the series had an end the rule
/// leaves out, that it goes (typed over, `for 3 times` was dropped unsaid).
fn rule_preview(engine: &Engine, id: i64, expr: &str) -> Result<String, String> {
    let schedule = engine.parse_schedule(expr).map_err(|e| e.to_string())?;
    let mut line = format!(
        "{} — {}",
        engine.describe_schedule(&schedule),
        engine.preview_schedule(&schedule, 3)
    );
    let had = engine.store().series(id).ok().flatten();
    if schedule.until.is_none()
        && schedule.count.is_none()
        && let Some(s) = had.filter(|s| s.remaining.is_some() || s.until_at.is_some())
    {
        // The end as the series' whole expression says it, after its rule.
        let whole = engine.series_expression(&s);
        let end = whole
            .strip_prefix(s.rule.as_str())
            .map(str::trim)
            .filter(|e| !e.is_empty());
        line.push_str(&match end {
            Some(end) => format!(" · its end goes: add \"{}\" to keep it", sanitize(end)),
            None => " · its end goes".to_string(),
        });
    }
    Ok(line)
}
