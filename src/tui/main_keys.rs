//! Keys on the main screen. `on_key` offers a key to the view on top of the
//! stack, then to the focused pane (strip, sidebar), then to the composer's
//! bindings and the main ones, and last types it into the composer; what
//! those bindings do (submit, history, completion, quit, F2, switching
//! conversations, scrolling, the toggles) is here too.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::app::{App, Focus, QUIT_WINDOW_MS, TYPED_ON_MS, cx_of};
use super::chat::Scroll;
use super::command_menu;
use super::commands;
use super::keymap::{Action, Scope};
use super::scheduled::ScheduledPane;
use super::time_picker::TimePicker;
use super::views::{self, Intent, Outcome, ViewKind};

impl App {
    pub fn on_key(&mut self, key: KeyEvent) {
        self.key_to_focus(key);
        self.drop_status_about_a_command_gone();
    }

    fn key_to_focus(&mut self, key: KeyEvent) {
        if key.kind == KeyEventKind::Release {
            return;
        }
        if key.code == KeyCode::Enter && key.modifiers.contains(KeyModifiers::SHIFT) {
            self.enhanced_keys = true;
        }
        self.last_input_at = self.now();
        self.drop_status_about_the_last_key();
        let main_action = self.keys.action(Scope::Main, &key);
        // Ctrl+D on an empty composer: the end of input, as in a shell.
        let end_of_input = key.code == KeyCode::Char('d')
            && key.modifiers == KeyModifiers::CONTROL
            && self.focus == Focus::Composer
            && self.composer.is_blank()
            && self.views.is_empty();
        let arms_quit =
            end_of_input || matches!(main_action, Some(Action::Interrupt | Action::Quit));
        // Version keys pressed in a row keep to the message they started
        // on; any other key ends the run.
        if !matches!(
            main_action,
            Some(Action::OlderVersion | Action::NewerVersion)
        ) {
            self.model.stepping = None;
        }
        if !arms_quit {
            self.quit_armed = None;
            self.cleared_on_the_way_out = false;
        }
        // 0. The list of slash commands, shown only while the composer has
        // the keys: over an approval card too (its Tab and arrows choose
        // on the card otherwise), the one view that leaves it the keys.
        if self.focus == Focus::Composer && self.command_menu_key(key) {
            return;
        }
        // Ctrl+L over any view (F2, search, help), which take every other
        // key: what another program wrote over the screen, or a wide
        // character a terminal measured otherwise, is under each of them.
        if main_action == Some(Action::Redraw) {
            self.redraw = true;
            return;
        }
        // A letter of the strip or the list that opened a question or a
        // prompt, and another letter at once: a word being typed (Shift+Tab
        // had moved the keys), not an answer. Both go to the composer.
        if self.typed_on_after_a_pane_letter(key) || self.typed_on_after_a_held_letter(key) {
            return;
        }
        // 1. The view on top of the stack. The approval card has the keys
        // only beside the composer: Tab leaves it waiting for the strip or
        // the conversation list, whose keys are theirs (`d`, Enter).
        let card_left = self.focus != Focus::Composer && self.top() == Some(ViewKind::Approval);
        if !card_left && let Some(mut top) = self.views.pop() {
            let mut cx = self.cx();
            let outcome = top.handle_key(key, &mut cx);
            let intents = std::mem::take(&mut cx.intents);
            let modal = top.is_modal();
            if !matches!(outcome, Outcome::Done | Outcome::Dismissed) {
                self.views.push(top);
            }
            self.apply(intents);
            if outcome == Outcome::Dismissed {
                // Closed without using the key: it goes on as if the view
                // had not been there.
                return self.key_to_focus(key);
            }
            if outcome != Outcome::Ignored || modal {
                return;
            }
        }
        // 2. The focused pane.
        let mut cx = cx_of(&self.model, &self.keys, &self.composer);
        let outcome = match self.focus {
            Focus::Strip => self.strip.handle_key(key, &mut cx),
            Focus::Sidebar => self.sidebar.handle_key(key, &mut cx),
            Focus::Composer => Outcome::Ignored,
        };
        let intents = std::mem::take(&mut cx.intents);
        let Some(intents) = self.hold_a_pane_letter(key, intents) else {
            return;
        };
        let depth = self.views.len();
        self.apply(intents);
        // A letter that opened a question or a prompt: a letter right
        // after it is typing (see `typed_on_after_a_pane_letter`).
        let opened = self.views.len() == depth + 1
            && self.views.last().is_some_and(|v| !v.typed_into_at_once());
        self.pane_letter = match key.code {
            KeyCode::Char(c) if views::is_typing(&key) && opened => Some((c, self.now(), depth)),
            _ => None,
        };
        if outcome != Outcome::Ignored {
            return;
        }
        // 3. The composer's bindings, then the main ones.
        let composer_focused = self.focus == Focus::Composer;
        let inactive = self.top() == Some(ViewKind::Approval);
        let composer_action = self.keys.action(Scope::Composer, &key);
        // While a card waits: recalling a message sent only fills the
        // composer, but an edit of one would replace the reply that made
        // the call, so it is said why ↑ does nothing.
        if composer_focused && inactive {
            match composer_action {
                Some(Action::EditLast) if self.composer.is_blank() => {
                    self.apply_one(Intent::KeyError(format!(
                        "the tool call above waits for your answer: choose Approve or Deny ({}/{}), then {}; then ↑ edits your last message",
                        self.keys.first(Scope::Approval, Action::Left),
                        self.keys.first(Scope::Approval, Action::Right),
                        self.keys.first(Scope::Approval, Action::Confirm)
                    )));
                    return;
                }
                Some(a @ (Action::HistoryPrev | Action::HistoryNext))
                    if self.composer_action(a, key) =>
                {
                    return;
                }
                _ => {}
            }
        }
        if composer_focused
            && !inactive
            && let Some(a) = composer_action
            && self.composer_action(a, key)
        {
            return;
        }
        if let Some(a) = self.keys.action(Scope::Main, &key) {
            // Tab on an empty composer stays: it moved the focus to the
            // strip or the list, where a sentence typed on ran their
            // letters (`d` then the `y` of "yaml" deleted the conversation,
            // `s` sent a scheduled message early).
            // (Over an approval card Tab steps through its choices and
            // then on, as the card says.)
            if a == Action::FocusNext
                && key.code == KeyCode::Tab
                && self.focus == Focus::Composer
                && self.composer.is_blank()
                && !inactive
            {
                let shift_tab = self.keys.first(Scope::Main, Action::FocusNext);
                self.info_until_key(format!(
                    "{shift_tab} moves to the pending messages and the conversation list"
                ));
                return;
            }
            self.main_action(a);
            return;
        }
        // 4. Text. The letters of the strip and the conversation list are
        // their commands; one they do not use is typing meant for the
        // composer (Shift+Tab had moved the keys): the keys go back to it,
        // with the letter (dropped, it cut "hello" to "ello", which Enter
        // then sent).
        let typing = views::is_typing(&key);
        if typing && matches!(self.focus, Focus::Strip | Focus::Sidebar) {
            if key.code == KeyCode::Char('?') && self.composer.is_empty() && !inactive {
                self.views.push(Box::new(views::help::Help::default()));
            } else {
                self.type_into_the_composer(&[key]);
            }
            return;
        }
        if composer_focused || typing {
            if !composer_focused {
                self.focus = Focus::Composer;
            }
            if key.code == KeyCode::Char('?') && self.composer.is_empty() && !inactive {
                self.views.push(Box::new(views::help::Help::default()));
                return;
            }
            if key.code == KeyCode::End && self.composer.is_empty() {
                self.scroll = Scroll::default();
                return;
            }
            if end_of_input {
                return self.quit_on_second_press("press Ctrl+D again to quit".to_string());
            }
            self.composer.input(key, self.now());
        }
    }

    /// ↑/↓, Tab and Enter while the list of slash commands shows (see
    /// `command_menu`). False when the key is not the list's.
    fn command_menu_key(&mut self, key: KeyEvent) -> bool {
        // Closed on a line that has changed since: the list may show again.
        if self.menu_closed_on.is_some()
            && self.menu_closed_on.as_deref() != self.composer.single_line()
        {
            self.menu_closed_on = None;
        }
        let menu = super::view::command_menu(self);
        if menu.is_empty() {
            // A choice made in a list that closed is not the next list's.
            self.menu_pick = None;
            return false;
        }
        if !key.modifiers.is_empty() {
            return false;
        }
        let now = self.now();
        let line = self.composer.text();
        let chosen = menu[command_menu::picked(&menu, self.menu_pick)];
        match key.code {
            // Closes the list (and only that: while a reply streams, Esc
            // stopped it), until the line changes.
            KeyCode::Esc => {
                self.menu_pick = None;
                self.menu_closed_on = Some(line);
            }
            KeyCode::Up => self.menu_pick = command_menu::step(&menu, self.menu_pick, -1),
            KeyCode::Down => self.menu_pick = command_menu::step(&menu, self.menu_pick, 1),
            KeyCode::Tab => {
                self.menu_pick = None;
                self.composer
                    .set_text(&format!("{} ", chosen.names[0]), now);
            }
            KeyCode::Enter => {
                // A whole name typed (an alias too) runs as typed, unless
                // another was chosen with ↑/↓ (`/at`, ↓ to `/attach`).
                if self.menu_pick.is_none() && menu.iter().any(|s| s.names.contains(&line.as_str()))
                {
                    return false;
                }
                self.menu_pick = None;
                let name = chosen.names[0];
                if command_menu::needs_argument(chosen) {
                    self.composer.set_text(&format!("{name} "), now);
                } else {
                    self.composer.set_text(name, now);
                    self.submit();
                }
            }
            _ => return false,
        }
        true
    }

    /// A composer binding. False when it does not apply here (the key goes on).
    pub(super) fn composer_action(&mut self, a: Action, key: KeyEvent) -> bool {
        let now = self.now();
        match a {
            Action::Submit => self.submit(),
            Action::Newline => self.composer.newline(now),
            Action::TimePicker => {
                let text = self.composer.text();
                // Why the key did nothing: typing on makes it stale.
                if text.trim().is_empty() {
                    self.error_until_key(
                        "type the message first, then Ctrl+T to choose when it is sent",
                    );
                } else if super::sending::is_command(text.trim()) {
                    self.error_until_key(
                        "a command is not sent later; Ctrl+T schedules a message (start with // to send a literal /)",
                    );
                } else {
                    self.views.push(Box::new(TimePicker::new()));
                }
            }
            Action::EditLast => {
                // ↑: on an empty composer, edit the last message; pressed
                // again (or while recalling), earlier messages; else the cursor.
                let n = self.composer.history.len();
                if self.composer.is_blank() {
                    self.edit_last();
                } else if self.composer.edit.is_none() && self.composer.history_pos.is_none() {
                    return self.cursor_key(key);
                } else if self.composer.move_row(true) {
                    // Up a row of what is edited or recalled.
                } else if self.composer.edit.is_some() {
                    // The edit showed the last message: the one before it,
                    // with the draft the edit put aside kept as a recall keeps it.
                    self.composer.abandon_edit(now);
                    self.composer.recall(true, now);
                    if n > 1 {
                        self.composer.recall(true, now);
                    }
                } else {
                    self.composer.recall(true, now);
                }
            }
            Action::HistoryPrev => {
                if self.composer.take_back(now) {
                    self.info_until_key("what Ctrl+C cleared is back");
                } else if !self.composer.recall(true, now) {
                    self.info_until_key("no earlier message in this conversation");
                }
            }
            Action::HistoryNext => {
                // ↓ moves down the rows of a recalled message first.
                if self.composer.history_pos.is_some() {
                    if key.code != KeyCode::Down || !self.composer.move_row(false) {
                        self.composer.recall(false, now);
                    }
                } else if key.code == KeyCode::Down {
                    return self.cursor_key(key);
                }
            }
            Action::Complete => {
                let line = self.composer.text();
                if let Some(done) = (!line.starts_with('/'))
                    .then(|| commands::complete_mention(&line))
                    .flatten()
                {
                    self.composer.set_text(&done, now);
                    return true;
                }
                // A mention that could be several files: which (Tab
                // again after typing more completes it).
                if !line.starts_with('/') {
                    let many = commands::mention_choices(&line);
                    if many.len() > 1 {
                        self.info_until_key(choices_line(&many));
                        return true;
                    }
                }
                // Text typed and nothing to complete: Tab indents, as in
                // an editor. It moved the focus to the strip or the list,
                // where the next letters typed were commands (`s` sent a
                // scheduled message, `d` `y` deleted the conversation).
                if !line.starts_with('/') && !self.composer.holds_no_text() {
                    self.composer.insert(INDENT, now);
                    return true;
                }
                if !line.starts_with('/') || line.contains('\n') {
                    return false;
                }
                // The config's names and the ids the provider's server lists
                // (cached; fetched in the background the first time).
                let current = self.model.current_conv().and_then(|c| c.model.clone());
                let models = self.engine().model_candidates(current.as_deref());
                let roles: Vec<String> =
                    self.engine().config().get().roles.keys().cloned().collect();
                let c = commands::Candidates {
                    models: &models,
                    roles: &roles,
                };
                match commands::complete(&line, &c) {
                    Some(done) => self.composer.set_text(&done, now),
                    None => match commands::choices(&line, &c).as_slice() {
                        // The server's ids are not in yet: the fetch has just
                        // started (`model_candidates`).
                        [] | [_]
                            if commands::completes_a_model(&line)
                                && self.engine().cached_models(current.as_deref())
                                    == crate::engine::ModelList::Unknown =>
                        {
                            self.info_until_key("asking the server for its models — Tab again")
                        }
                        [] | [_]
                            if commands::completes_a_model(&line)
                                && let crate::engine::ModelList::Failed(why) =
                                    self.engine().cached_models(current.as_deref()) =>
                        {
                            self.info_until_key(format!(
                                "nothing (more) to complete: the server's model list could not be read ({})",
                                crate::sanitize::sanitize_line(&why)
                            ))
                        }
                        [] | [_] => self.info_until_key("nothing (more) to complete"),
                        // A command's name: the menu above the composer lists them.
                        _ if !line.contains(' ') => {}
                        // Tab again shows them again: any other key ends them.
                        many => self.info_until_key(choices_line(many)),
                    },
                }
            }
            Action::KillToStart => self.composer.input(key, now),
            Action::Undo => {
                if !self.composer.undo(now) {
                    self.info_until_key("nothing to undo");
                }
            }
            Action::ExternalEditor => self.editor_request = true,
            _ => return false,
        }
        true
    }

    pub(super) fn cursor_key(&mut self, key: KeyEvent) -> bool {
        self.composer.input(key, self.now());
        true
    }

    pub(super) fn main_action(&mut self, a: Action) {
        let conv = self.model.current;
        match a {
            Action::Quit => self.quit_asked(),
            Action::Interrupt => self.interrupt(),
            Action::Suspend => self.suspend = true,
            Action::Help => self.views.push(Box::new(views::help::Help::default())),
            Action::Notices => self
                .views
                .push(Box::new(views::notices::Notices::new(self.notices.clone()))),
            Action::OlderVersion => self.step_version(-1),
            Action::NewerVersion => self.step_version(1),
            Action::SearchAll => {
                let view = views::search::Search::new("", &self.model);
                self.views.push(Box::new(view));
            }
            Action::ScheduledPane => {
                // What the status bar calls "need attention" first: an
                // approval leads the list; else the first failed or expired.
                let first = if self.model.awaiting.is_empty() {
                    self.engine()
                        .reader()
                        .first_needing_attention()
                        .unwrap_or_default()
                } else {
                    None
                };
                let mut p = ScheduledPane::new()
                    .selecting(first)
                    .with_writer(self.model.writer.clone());
                if let Err(e) = p.refresh_with(self.engine()) {
                    self.error(format!("{e:#}"));
                }
                self.views.push(Box::new(p));
            }
            Action::NewConversation => self.apply(vec![Intent::NewConversation]),
            Action::Fork => {
                self.fork_here();
            }
            Action::ToggleSidebar => self.toggle_sidebar(),
            Action::ToggleMouse => self.toggle_mouse(),
            Action::PrevConversation | Action::NextConversation => {
                let list: Vec<i64> = self
                    .sidebar
                    .visible(&self.model)
                    .iter()
                    .map(|c| c.id)
                    .collect();
                if list.is_empty() {
                    return;
                }
                let pos = conv
                    .and_then(|id| list.iter().position(|c| *c == id))
                    .unwrap_or(0);
                let next = if a == Action::PrevConversation {
                    pos.saturating_sub(1)
                } else {
                    (pos + 1).min(list.len() - 1)
                };
                self.open(list[next]);
            }
            Action::FocusNext => {
                let strip = self.model.strip_items().next().is_some() || self.model.paused();
                // Before the first frame, as the preference says.
                let sidebar = self.layout.sidebar_visible
                    || (self.layout.chat.width == 0 && self.sidebar_pref != Some(false));
                self.focus = match self.focus {
                    Focus::Composer if strip => Focus::Strip,
                    Focus::Composer | Focus::Strip if sidebar => Focus::Sidebar,
                    _ => Focus::Composer,
                };
                if self.focus == Focus::Strip {
                    self.strip.focus(&self.model);
                }
            }
            Action::Stop => {
                if self.composer.abandon_edit(self.now()) {
                    self.info_until_key("edit abandoned; your draft is back");
                } else if conv.is_some_and(|c| self.stop_reply(c)) {
                    self.say_stopped();
                } else if self.call_off_regeneration() || self.stop_elsewhere() {
                    // Its outcome is said when the write is done.
                } else if !self.sidebar.filter.is_empty() {
                    self.sidebar.filter.clear();
                }
                self.focus = Focus::Composer;
            }
            Action::Regenerate => {
                if let Some(c) = conv {
                    self.write(
                        move |e| e.regenerate(c),
                        move |app, r| match r {
                            Ok(_) => {
                                app.info("regenerating the last reply");
                                if let Some(s) = app.status.as_mut() {
                                    s.regenerating_in = Some(c);
                                }
                            }
                            Err(e) => app.error(e),
                        },
                    );
                }
            }
            // After a kill key in the composer, readline's yank; else
            // the last reply to the clipboard.
            Action::CopyLast => {
                if self.focus == Focus::Composer && self.composer.yank(self.now()) {
                    self.info_until_key("pasted back what was cut (/copy copies the last reply)");
                } else {
                    self.copy(None)
                }
            }
            Action::ToggleFold => {
                self.model.unfolded = !self.model.unfolded;
                self.model.apply_fold();
            }
            Action::ScrollUp => self.scroll_by(1),
            Action::ScrollDown => self.scroll_by(-1),
            Action::PageUp => {
                self.scroll_by(self.layout.chat.height.saturating_sub(2).max(1) as isize)
            }
            Action::PageDown => {
                self.scroll_by(-(self.layout.chat.height.saturating_sub(2).max(1) as isize))
            }
            Action::Top => self.scroll.from_bottom = Some(usize::MAX / 2),
            Action::Bottom => self.scroll = Scroll::default(),
            _ => {}
        }
    }

    /// The status line says the queue of `conv` is paused: it goes once
    /// the queue is resumed, wherever that is done.
    pub(super) fn status_about_a_pause(&mut self, conv: i64) {
        if let Some(s) = self.status.as_mut() {
            s.paused_in = Some((conv, false));
        }
    }

    /// The status line says the queue of `conv` was resumed: it goes once
    /// the queue is paused again, wherever that is done.
    pub(super) fn status_about_a_resume(&mut self, conv: i64) {
        if let Some(s) = self.status.as_mut() {
            s.resumed_in = Some((conv, false));
        }
    }

    /// What a stop says: the queue is paused only when something waits in
    /// it to go at once, and then the line goes once it is resumed.
    fn say_stopped(&mut self) {
        if self.take_back_after_stop.is_some() {
            // What becomes of it is said once the engine has held it.
            self.info_until_key("stopped before it was sent");
            return;
        }
        match self.model.current.filter(|_| self.queued_here()) {
            Some(conv) => {
                self.info(
                    "stopped — the queue is paused (Enter in the strip or /resume); Ctrl+R retries the reply",
                );
                self.status_about_a_pause(conv);
            }
            None => self.info_until_key("stopped; Ctrl+R retries the reply"),
        }
    }

    /// Whether the conversation shown has items queued to go at once (what
    /// a stop holds).
    fn queued_here(&self) -> bool {
        self.model
            .strip_items()
            .any(|i| i.status == crate::store::Status::Pending && i.due_at.is_none())
    }

    /// Ctrl+Q: quit, but not straight through a reply this tock streams:
    /// quitting cuts it off and the next tock asks for it again from the
    /// start (a paid reply paid twice), so the first press says so and a
    /// second within two seconds quits.
    fn quit_asked(&mut self) {
        let streaming = self.engine().turns_in_flight();
        let calls = self.engine().calls_in_flight();
        if streaming == 0 && calls == 0 {
            self.quit = true;
            return;
        }
        // A tool call cut off is run again by the next tock: its effects
        // may happen twice. (One Ctrl+Q quit at once, and it ran twice.)
        if streaming == 0 {
            let what = if calls == 1 {
                "a tool call is".to_string()
            } else {
                format!("{calls} tool calls are")
            };
            return self.quit_on_second_press(format!(
                "{what} running: Ctrl+Q again quits and cuts it off (the next tock runs it again: its effects may happen twice); Esc stops it"
            ));
        }
        // Sent, with no answer yet: nothing is cut but the wait.
        if self.engine().replies_streaming_here() == 0 && calls == 0 {
            return self.quit_on_second_press(
                "a message is on its way, with no answer yet: Ctrl+Q again quits (the next tock sends it again)"
                    .to_string(),
            );
        }
        let replies = if streaming == 1 {
            "a reply is".to_string()
        } else {
            format!("{streaming} replies are")
        };
        // Esc stops the reply of the conversation on screen only.
        let esc = if self.model.is_busy() {
            "Esc stops it"
        } else {
            "Esc in its conversation stops it"
        };
        self.quit_on_second_press(format!(
            "{replies} streaming: Ctrl+Q again quits and cuts it off (asked for again later); {esc}"
        ));
    }

    /// Quit if this is the second press within two seconds; else arm the
    /// quit and say `warning` for as long as a second press would quit.
    fn quit_on_second_press(&mut self, warning: String) {
        let now = self.now();
        if self.quit_armed.is_some_and(|t| now - t <= QUIT_WINDOW_MS) {
            self.quit = true;
            return;
        }
        self.quit_armed = Some(now);
        // Any other key disarms the quit: the line goes with it.
        self.info_until_key(warning);
        if let Some(s) = self.status.as_mut() {
            s.until = now + QUIT_WINDOW_MS;
        }
    }

    /// Ctrl+C: stop the reply; else leave an edit; else clear the composer;
    /// else quit — only when pressed twice within two seconds.
    pub(super) fn interrupt(&mut self) {
        let now = self.now();
        if self.model.current.is_some_and(|c| self.stop_reply(c)) {
            self.say_stopped();
        } else if self.call_off_regeneration() || self.stop_elsewhere() {
            // Its outcome is said when the write is done.
        } else if self.composer.abandon_edit(now) {
            self.info_until_key("edit abandoned; your draft is back");
        } else if !self.composer.is_blank() {
            self.composer.set_aside(now);
            self.cleared_on_the_way_out = true;
            self.info_until_key("cleared (Ctrl+P brings it back)");
        } else {
            self.quit_on_second_press("press Ctrl+C again to quit".to_string());
        }
    }

    /// The reply on screen streams, but from another process on this
    /// database (a daemon, a second TUI): its message id.
    pub(super) fn streaming_elsewhere(&self) -> Option<i64> {
        if self.model.is_busy() {
            return None;
        }
        self.model
            .entries
            .last()
            .filter(|e| e.msg.status == crate::store::MessageStatus::Streaming)
            .map(|e| e.msg.id)
    }

    /// A letter typed within [`TYPED_ON_MS`] of the strip's or the list's
    /// letter that opened a question or a prompt (still open) is a word
    /// being typed where the composer was meant (Shift+Tab, a Claude Code
    /// habit, had moved the keys): `d` then `y` of "dynamic" deleted a
    /// conversation, `s` `y` of "sync" sent a message early, `e` then "xplain"
    /// rewrote one. The question or prompt goes unanswered, and both
    /// letters go into the composer, which has the keys again.
    fn typed_on_after_a_pane_letter(&mut self, key: KeyEvent) -> bool {
        let Some((first, at, depth)) = self.pane_letter.take() else {
            return false;
        };
        let KeyCode::Char(next) = key.code else {
            return false;
        };
        // A prompt takes a time or text: a digit at once is its input
        // (`r` then `2h`), a letter the rest of a word. A question takes
        // no letter as its answer, so a letter after it is typing however
        // slowly it comes.
        let prompt = self.top() == Some(ViewKind::Prompt);
        let question = self.top() == Some(ViewKind::Confirm);
        if !views::is_typing(&key)
            || (prompt && !next.is_alphabetic())
            || self.views.len() != depth + 1
            || (!question && self.now().saturating_sub(at) >= TYPED_ON_MS)
        {
            if question && self.views.len() == depth + 1 {
                // Still open: a later letter is typing too.
                self.pane_letter = Some((first, at, depth));
            }
            return false;
        }
        self.views.truncate(depth);
        self.letters_to_the_composer(first, key);
        true
    }

    /// A letter of the strip or the list that acts at once (the intents it
    /// made, none of them a question or a prompt) waits [`TYPED_ON_MS`]:
    /// "sure" sent a queued message ahead of the queue with its `s`, "now"
    /// made a conversation with its `n`, "update" took a message back with
    /// its `u`. Returns the intents when the key is not such a letter.
    fn hold_a_pane_letter(
        &mut self,
        key: KeyEvent,
        intents: Vec<views::Intent>,
    ) -> Option<Vec<views::Intent>> {
        let KeyCode::Char(letter) = key.code else {
            return Some(intents);
        };
        if !views::is_typing(&key) || !intents.iter().any(views::Intent::acts_at_once) {
            return Some(intents);
        }
        self.pane_letter = None;
        self.held_pane_letter = Some(super::app::HeldLetter {
            letter,
            at: self.now(),
            intents,
        });
        None
    }

    /// The held letter's action, now that no letter followed it at once
    /// (or a key that is not typing did).
    pub(super) fn act_on_the_held_pane_letter(&mut self) {
        if let Some(held) = self.held_pane_letter.take() {
            self.apply(held.intents);
        }
    }

    /// A key after a held letter: another letter at once is typing (the
    /// action is dropped, both letters go to the composer); anything else
    /// lets the letter act first. True when the key was typed in.
    fn typed_on_after_a_held_letter(&mut self, key: KeyEvent) -> bool {
        let Some(held) = &self.held_pane_letter else {
            return false;
        };
        if views::is_typing(&key) && self.now().saturating_sub(held.at) < TYPED_ON_MS {
            let first = held.letter;
            self.held_pane_letter = None;
            self.letters_to_the_composer(first, key);
            return true;
        }
        self.act_on_the_held_pane_letter();
        false
    }

    /// A word's first letter, taken by the strip or the list, and the key
    /// after it, into the composer, which gets the keys back.
    fn letters_to_the_composer(&mut self, first: char, key: KeyEvent) {
        self.type_into_the_composer(&[KeyEvent::from(KeyCode::Char(first)), key]);
    }

    /// Keys typed where the strip or the list had the keys, into the
    /// composer, which gets them back.
    fn type_into_the_composer(&mut self, keys: &[KeyEvent]) {
        self.focus = Focus::Composer;
        let now = self.now();
        for key in keys {
            self.composer.input(*key, now);
        }
        self.info_until_key(
            "typed into the composer: the keys were in the pending strip or the conversation list (Shift+Tab moves them; Esc brings them back)",
        );
    }

    /// Esc or Ctrl+C on a reply another process streams: ask that process
    /// to stop it (it does within a moment, as its own Esc would), once per
    /// reply. False if no such reply, or it was asked already.
    fn stop_elsewhere(&mut self) -> bool {
        let Some(conv) = self.model.current else {
            return false;
        };
        // A reply streaming there, else a tool call of its reply running there.
        // Else a message another tock sent, whose server has not answered
        // yet (Esc here did nothing, and said nothing). Asked once per
        // thing: a reply by its id, a message in flight by its row's,
        // negated (they are not ids of one table).
        let (reply, what) = match self.streaming_elsewhere() {
            Some(reply) => (reply, "streaming this reply"),
            None => match self.call_running_elsewhere(conv) {
                Some(reply) => (reply, "running the tool call"),
                None => match self.request_waiting_elsewhere(conv) {
                    Some(item) => (-item, "sending this message"),
                    None => return false,
                },
            },
        };
        if self.stop_asked == Some(reply) {
            return false;
        }
        self.stop_asked = Some(reply);
        // A message typed to go now, stopped before the model took it: the
        // tock sending it holds it, and it comes back here as it does when
        // this tock sends (into an empty composer).
        if reply < 0 {
            self.take_back_after_stop = self
                .model
                .items
                .iter()
                .find(|i| i.id == -reply && i.held_when_stopped_unsent())
                .map(|i| i.id);
        }
        let queued = self.queued_here();
        self.write(
            move |e| e.stop_elsewhere(conv),
            move |app, r| match r {
                Ok(true) if queued => {
                    app.info(format!(
                        "asked the tock {what} to stop it — the queue is paused (Enter in the strip or /resume)",
                    ));
                    app.status_about_a_pause(conv);
                }
                Ok(true) => app.info_until_key(format!("asked the tock {what} to stop it")),
                Ok(false) => app.info_until_key("it had already ended"),
                Err(e) => app.error(e),
            },
        );
        true
    }

    /// A message of the conversation that another process on this
    /// database sent and waits for an answer to, before any of it came.
    pub(super) fn request_waiting_elsewhere(&self, conv: i64) -> Option<i64> {
        if self.model.is_busy() {
            return None;
        }
        self.model
            .items
            .iter()
            .find(|i| i.conversation_id == Some(conv) && i.status == crate::store::Status::Sending)
            .map(|i| i.id)
    }

    /// A tool call of the conversation that another process on this
    /// database runs: the reply that made it.
    fn call_running_elsewhere(&self, conv: i64) -> Option<i64> {
        if self.engine().runs_tool_call_in(conv) {
            return None;
        }
        match self.engine().reader().tool_runs() {
            Ok(runs) => runs
                .into_iter()
                .find(|r| r.conversation_id == conv)
                .map(|r| r.message_id),
            Err(e) => {
                tracing::warn!("reading the running tool calls: {e:#}");
                None
            }
        }
    }

    pub(super) fn toggle_sidebar(&mut self) {
        let width = self.layout.chat.width
            + if self.layout.sidebar_visible {
                super::view::SIDEBAR_WIDTH
            } else {
                0
            };
        let shown = self.sidebar_shown(width.max(1));
        self.sidebar_pref = Some(!shown);
        if shown && self.focus == Focus::Sidebar {
            self.focus = Focus::Composer;
        }
        if !shown && width < 60 {
            self.info_until_key(
                "the window is too narrow for the conversation list (Alt+↑/↓ switches)",
            );
        }
    }

    pub(super) fn toggle_mouse(&mut self) {
        self.mouse = !self.mouse;
        self.output.mouse = Some(self.mouse);
        self.info_until_key(if self.mouse {
            "mouse capture on (wheel scrolls, clicks select)"
        } else {
            "mouse capture off: select and copy text with the terminal"
        });
    }
}

/// What Tab inserts in a composer holding text (spaces: a tab character is
/// drawn at a width the terminal, not the layout, decides).
const INDENT: &str = "    ";

/// What Tab could complete to, on the status line (a long list is cut:
/// typing more narrows it).
fn choices_line(many: &[String]) -> String {
    const SHOWN: usize = 12;
    let mut line = many
        .iter()
        .take(SHOWN)
        .map(|n| crate::sanitize::sanitize_line(n).into_owned())
        .collect::<Vec<_>>()
        .join("  ");
    if many.len() > SHOWN {
        line.push_str(&format!(
            "  … {} more: type more, then Tab",
            many.len() - SHOWN
        ));
    }
    line
}
