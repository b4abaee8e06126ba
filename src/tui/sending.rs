//! Sending from the composer: messages, edits, `/later`, `/at`, `/every`,
//! and the slash commands; copy and attach.

use super::app::App;
use super::chat::Scroll;
use super::commands::{self, Command};
use super::composer::{self};
use super::keymap::Action;
use super::model::local;
use super::theme::{Palette, ThemeSetting};
use super::views::{self, Intent};
use super::writes::after;
use crate::engine::Part;
use crate::store::{Draft, Kind, NewItem, Role};
use crate::when::{self, Mode};

impl App {
    /// The live preview for `/later`, `/at` and `/every` while typing.
    pub fn composer_preview(&self) -> Option<Result<Preview, String>> {
        let text = self.composer.text();
        if let Some(rest) = text.strip_prefix("/every ") {
            if rest.trim().is_empty() {
                return Some(Err(
                    "/every EXPR TEXT — e.g. /every weekday 9am stand-up notes".into(),
                ));
            }
            let engine = self.engine();
            return Some(match engine.split_schedule(rest) {
                Ok((s, _)) if let Err(e) = engine.check_schedule(&s) => Err(e.to_string()),
                Ok((s, text)) => {
                    let rule = engine.describe_schedule(&s);
                    // `, 5 times, until Sun 20 Dec 23:59` after the rule alone.
                    let end = rule
                        .strip_prefix(&s.rule.describe())
                        .map(|e| e.trim_start_matches(", ").to_string())
                        .filter(|e| !e.is_empty());
                    Ok(Preview {
                        rule: Some(rule),
                        end,
                        times: engine.preview_schedule(&s, 3),
                        next: engine.preview_schedule(&s, 1),
                        text: Some(text),
                    })
                }
                Err(e) => Err(e.to_string()),
            });
        }
        let (mode, rest) = timed_send(&text)?;
        if rest.trim().is_empty() {
            return Some(Err(match mode {
                Mode::Later => "/later DURATION TEXT — e.g. /later 1h30m check the build".into(),
                Mode::At => "/at TIME TEXT — e.g. /at tomorrow 9am stand-up notes".into(),
            }));
        }
        let now = self.model.now();
        Some(match when::split_time_prefix(rest, &now, mode) {
            Ok((due, text)) => {
                let times = format!("sends {}", when::preview(due, &now));
                Ok(Preview {
                    rule: None,
                    end: None,
                    next: times.clone(),
                    times,
                    text: Some(text),
                })
            }
            Err(e) => Err(e.to_string()),
        })
    }

    /// When the `/at` or `/later` preview next reads differently with time
    /// alone (its countdown; the time a `/later` comes to; a time that came
    /// this minute turning into tomorrow's), so that a screen left idle
    /// redraws it then: a preview left on "in 14s" for a minute was read
    /// as the truth, and Enter then sent it a day later.
    pub fn composer_preview_changes_at(&self) -> Option<i64> {
        const MINUTE: i64 = 60_000;
        // Asked for at every turn of the UI's loop: no copy of a long
        // draft unless it is a command.
        if !self.composer.starts_with("/") {
            return None;
        }
        let text = self.composer.text();
        let (mode, rest) = timed_send(&text)?;
        let now = self.model.now();
        let now_ms = now.timestamp_millis();
        let (due, _) = when::split_time_prefix(rest, &now, mode).ok()?;
        let due = due.timestamp_millis();
        Some(match mode {
            // Always the same distance ahead: the minute it comes to moves on.
            Mode::Later => {
                let span = due - now_ms;
                (due.div_euclid(MINUTE) + 1) * MINUTE - span
            }
            // "now" until its minute is over, then tomorrow's.
            Mode::At if due <= now_ms => now_ms + 1_000,
            Mode::At => views::label_change(due, now_ms)?,
        })
    }

    pub(super) fn submit(&mut self) {
        let text = self.composer.text();
        let trimmed = text.trim();
        if trimmed.is_empty() && self.composer.attachments.is_empty() {
            return;
        }
        if is_command(trimmed) {
            self.command(trimmed.to_string());
            return;
        }
        // An edit replaces the exchange the streaming reply belongs to:
        // not until it has finished (the engine would refuse it).
        if self.composer.edit.is_some() && self.model.is_busy() {
            self.said_to_wait_for_the_reply(
                "not yet: the reply is still streaming; Enter resends once it has finished (Ctrl+C stops it)",
            );
            return;
        }
        let body = if trimmed.starts_with("//") {
            unescape_slash(trimmed).to_string()
        } else {
            crate::sanitize::message_body(&text).to_string()
        };
        if !self.attach_mentions(&body) {
            return;
        }
        // What the status line said was about before this message.
        self.status = None;
        self.send(&body, None);
    }

    /// `@path` in a message attaches that file (the mention stays in the
    /// text), whenever the message goes. All or none: false (and said) if
    /// one cannot be attached; the message is then not sent.
    fn attach_mentions(&mut self, body: &str) -> bool {
        let before = self.composer.attachments.len();
        for path in commands::mentioned_files(body) {
            // Already attached (an edit brings its attachments back): once.
            if let Err(AttachError::Refused(e)) = self.attach(&path) {
                self.composer.attachments.truncate(before);
                self.error(format!("{e} (the message was not sent)"));
                return false;
            }
        }
        true
    }

    pub(super) fn send(&mut self, text: &str, due: Option<i64>) {
        let Some(conv) = self.model.current else {
            return;
        };
        let now = self.now();
        let mut item = NewItem::message(conv, text, due);
        item.model_override = self.model_override.clone();
        if !self.composer.attachments.is_empty() {
            item.parts_json = serde_json::to_string(&self.composer.attachments).ok();
        }
        // Named in the notice, so an `@path` that attached a file says so.
        let attached: Vec<String> = self
            .composer
            .attachments
            .iter()
            .map(|p| super::composer::describe(p).0)
            .collect();
        let busy = self.model.is_busy();
        let behind_a_call = self.model.waiting_approval().is_some();
        let paused = self.model.paused();
        // Resending an edit: the old exchange is marked replaced in the same transaction.
        let editing = self
            .composer
            .edit
            .as_ref()
            .map(|e| e.message_id)
            .filter(|_| due.is_none());
        let sent = self.composer.draft();
        // The saved draft as this window knows it: a text another window
        // has just sent from the same draft is not sent again.
        let known = self.drafts.known(conv).map(str::to_string);
        let restore = editing.map(|_| self.composer.stash_after_edit());
        // The composer moves on at once; the write clears (or, after an
        // edit, sets) the saved draft itself, and if it fails what was sent
        // comes back.
        self.composer.history.push(escape_slash(text).into_owned());
        match &restore {
            Some(d) => {
                let history = std::mem::take(&mut self.composer.history);
                self.composer.load(d, history);
            }
            None => self.composer.clear(now),
        }
        self.composer.unsaved_since = None;
        let left = self.composer.draft();
        let seq = self.sending(conv, left.clone());
        self.sends_in_flight
            .insert(seq, (conv, sent.clone(), false));
        self.scroll = Scroll::default();
        let resume = paused && due.is_none() && editing.is_none();
        self.write(
            move |e| {
                let attempt = || {
                    // A message to go now resumes a paused queue (the engine's rule).
                    let (id, tasks_kept) = match (editing, &restore) {
                        (Some(message_id), Some(r)) => {
                            let id = e.edit_and_resend(conv, message_id, item.clone(), r)?;
                            // What the replaced exchanges scheduled stays: said.
                            let kept = e
                                .store()
                                .tasks_scheduled_since(conv, message_id)
                                .unwrap_or_default();
                            (id, kept)
                        }
                        _ => (
                            e.submit_clearing_draft(item.clone(), known.as_deref())?,
                            Vec::new(),
                        ),
                    };
                    anyhow::Ok((id, tasks_kept))
                };
                // Another process holds the database (each try waits out
                // the store's busy timeout): tried again until it lets
                // go, as the status line says. Given back after one try,
                // the message waited in the composer, unsent, and two
                // typed meanwhile ran together into one draft. A tock
                // killed meanwhile has it in a file (`tui::unsent`).
                loop {
                    match attempt() {
                        Err(err) if crate::store::is_busy(&err) => {
                            std::thread::sleep(std::time::Duration::from_millis(100));
                        }
                        done => return done,
                    }
                }
            },
            move |app, r| {
                app.send_done(seq);
                match r {
                    Ok((_, tasks_kept)) => {
                        app.sent(conv, seq);
                        let note = if editing.is_some() {
                            Some(format!(
                                "resent; the old exchange is marked replaced{}",
                                tasks_kept_line(&tasks_kept)
                            ))
                        } else if let Some(d) = due {
                            Some(format!(
                                "scheduled: {}",
                                super::views::preview(d, &local(app.now()))
                            ))
                        } else if resume {
                            Some("queue resumed with your message".to_string())
                        } else if behind_a_call {
                            Some("queued: it goes once the call above is answered and its reply is in".to_string())
                        } else if busy {
                            Some("queued: it goes as soon as this reply finishes".to_string())
                        } else {
                            None
                        };
                        let files = attached.join(", ");
                        match (note, attached.is_empty()) {
                            (Some(n), true) => app.info_until_key(n),
                            (Some(n), false) => app.info_until_key(format!("{n} · 📎 {files}")),
                            (None, false) => app.info_until_key(format!("sent with 📎 {files}")),
                            (None, true) => {}
                        }
                        if (busy || behind_a_call)
                            && due.is_none()
                            && let Some(s) = app.status.as_mut()
                        {
                            s.queued_in = Some(conv);
                        }
                        if resume {
                            app.status_about_a_resume(conv);
                        }
                    }
                    Err(e) => {
                        // The message edited was edited or replaced since
                        // (another tock, a regeneration): the edit leads
                        // nowhere now, and Enter refused it for ever. The
                        // text comes back as a draft of its own, after
                        // what was put aside when the edit began.
                        let sent = match editing {
                            Some(id) if !app.model.is_live_user_message(id) => Draft {
                                edit_of: None,
                                stash: None,
                                ..after(
                                    &Draft {
                                        text: sent.stash.clone().unwrap_or_default(),
                                        ..Draft::default()
                                    },
                                    &sent,
                                )
                            },
                            _ => sent,
                        };
                        let back = app.give_back(conv, seq, sent, &left);
                        app.error(format!(
                            "not sent: {}; {back}",
                            crate::store::error_line(&e)
                        ));
                    }
                }
                app.model.reload_items();
            },
        );
    }

    pub(super) fn schedule(&mut self, text: &str, due: i64) {
        if text.is_empty() {
            self.error("nothing to send after the time");
            return;
        }
        // A file named with @path goes with a scheduled message too (it
        // was sent without it, silently).
        if !self.attach_mentions(text) {
            return;
        }
        self.send(text, Some(due));
    }

    /// ↑ on an empty composer: edit and resend your last message. While
    /// its reply streams the edit opens too (refused, the correction typed
    /// next went out as a new message), and Enter waits for the reply.
    pub(super) fn edit_last(&mut self) {
        let Some(m) = self.model.last_user_message().cloned() else {
            // Nothing sent here yet: ↑ recalls what was typed before, if anything.
            let now = self.now();
            if !self.composer.recall(true, now) {
                self.info_until_key("no message to edit yet");
            }
            return;
        };
        let parts: Vec<Part> = m
            .parts_json
            .as_deref()
            .and_then(|j| serde_json::from_str(j).ok())
            .unwrap_or_default();
        // Sent to another model (`/with`): its outbox row says which.
        let to = m
            .outbox_id
            .and_then(|id| self.model.engine.reader().item(id).ok().flatten())
            .and_then(|item| item.model_override);
        self.composer
            .begin_edit(m.id, &escape_slash(&m.content), parts, to, self.now());
        if self.model.is_busy() {
            self.said_to_wait_for_the_reply(
                "the reply is still streaming: Enter resends once it has finished (Esc here keeps the old message)",
            );
        }
    }

    /// An error that stands until the reply streaming here has finished.
    fn said_to_wait_for_the_reply(&mut self, line: &str) {
        self.error(line);
        if let Some(s) = self.status.as_mut() {
            s.while_busy_in = self.model.current;
        }
    }

    pub(super) fn copy(&mut self, block: Option<usize>) {
        let width = self.layout.chat.width.saturating_sub(2).max(1);
        let Some(last) = self
            .model
            .entries
            .iter()
            .rev()
            .find(|e| e.msg.role == Role::Assistant)
        else {
            self.error_until_key("no reply to copy yet");
            return;
        };
        let text = match block {
            None => last.msg.content.clone(),
            Some(n) => {
                // Each reply numbers its blocks from 1 in their headers: N is
                // block N of the latest reply that has any (it counted across
                // the conversation, so `[1]` on screen copied another block).
                let blocks = self
                    .model
                    .entries
                    .iter()
                    .rev()
                    .filter(|e| e.msg.role == Role::Assistant)
                    .map(|e| e.code_blocks(width))
                    .find(|b| !b.is_empty())
                    .unwrap_or_default();
                let count = blocks.len();
                match blocks.into_iter().nth(n.saturating_sub(1)) {
                    Some(b) if n > 0 => b.code,
                    _ if count == 0 => {
                        self.error("no code block in this conversation's replies");
                        return;
                    }
                    _ => {
                        self.error(format!(
                            "no code block {n} in the last reply with code (it has {count})"
                        ));
                        return;
                    }
                }
            }
        };
        let text = crate::sanitize::sanitize(&text).into_owned();
        self.output.raw.push(osc52(&text));
        self.info_until_key(format!(
            "sent {} characters to the terminal's clipboard (OSC 52){}",
            text.chars().count(),
            if self.in_tmux {
                "; tmux passes it on with set-clipboard on"
            } else {
                ""
            }
        ));
    }

    pub(super) fn command(&mut self, line: String) {
        self.run_command(line, true);
    }

    /// [`Self::command`]; `may_wait`: a `/model` or `/with` may wait for a
    /// model list on its way (not when it is the run after that wait).
    pub(super) fn run_command(&mut self, line: String, may_wait: bool) {
        // What the line said about the command before is stale: this one
        // says its own (or nothing, where what it did shows).
        self.drop_status_about_a_command();
        // Errors below are about this command, which stays in the composer
        // to be fixed (`App::command_error`).
        let cmd = line.clone();
        let (spec, arg) = match commands::parse(&line) {
            Ok(p) => p,
            // Never sent to the model; the text stays so it can be fixed.
            Err(e) => return self.command_error(&cmd, e),
        };
        let arg = arg.to_string();
        let now = self.now();
        let conv = self.model.current;
        let done = |app: &mut App| {
            app.composer.clear(now);
        };
        // After a write: the command leaves the composer if it is still
        // there (the user may have typed on while the write waited).
        let done_later = move |app: &mut App| {
            if app.composer.text().trim() == line.trim() {
                app.composer.clear(app.now());
            }
        };
        // Words after a command that takes none are a slip, not ignored.
        if spec.arg == commands::Arg::None && !arg.trim().is_empty() {
            return self.command_error(
                &cmd,
                format!(
                    "{} takes nothing after it: remove “{}”",
                    spec.usage,
                    crate::sanitize::sanitize_line(arg.trim())
                ),
            );
        }
        // A scheduling command alone: say how it is used, with an example
        // (the parser's "empty time" tells a new user nothing).
        if matches!(spec.command, Command::Later | Command::At | Command::Every)
            && arg.trim().is_empty()
        {
            let example = spec
                .help
                .split_once(": ")
                .and_then(|(_, e)| e.split(", ").next())
                .unwrap_or_default();
            return self.command_error(&cmd, format!("usage: {} — e.g. {example}", spec.usage));
        }
        match spec.command {
            Command::Later | Command::At => {
                let mode = if spec.command == Command::Later {
                    Mode::Later
                } else {
                    Mode::At
                };
                match when::split_time_prefix(&arg, &self.model.now(), mode) {
                    Ok((_, text)) if text.is_empty() => {
                        self.command_error(&cmd, "nothing to send after the time")
                    }
                    Ok((due, text)) => self.schedule(&text, due.timestamp_millis()),
                    Err(e) => self.command_error(&cmd, e),
                }
            }
            Command::Every => {
                let Some(id) = conv else { return };
                let engine = self.engine().clone();
                match engine.split_schedule(&arg) {
                    // A series sends text only: a file it named would be
                    // left out of every occurrence, without a word.
                    Ok((_, text))
                        if !commands::mentioned_files(&text).is_empty()
                            || !self.composer.attachments.is_empty() =>
                    {
                        self.command_error(
                            &cmd,
                            "a recurring message cannot carry files: remove the @path or attachment (send the file once with a plain message)",
                        );
                    }
                    Ok((s, text)) => {
                        let what = format!(
                            "{} — {}",
                            engine.describe_schedule(&s),
                            engine.preview_schedule(&s, 1)
                        );
                        self.write(
                            move |e| e.create_series(id, Kind::Message, &text, &s),
                            move |app, r| match r {
                                Ok(series) => {
                                    app.info_until_key(format!(
                                        "repeating: {what} (F2 to pause, edit or end it)"
                                    ));
                                    app.status_names_series(series);
                                    done_later(app);
                                }
                                // The text stays in the composer so nothing is lost.
                                Err(e) => app.command_error(&cmd, format!("{e:#}")),
                            },
                        );
                    }
                    Err(e) => self.command_error(&cmd, e),
                }
            }
            Command::New => {
                done(self);
                self.new_conversation((!arg.is_empty()).then_some(arg.as_str()));
            }
            Command::Rename => match conv {
                // No title given: the rename prompt, holding the title now
                // (as `r` in the sidebar opens it).
                Some(id) if arg.is_empty() => {
                    done(self);
                    let title = self
                        .model
                        .current_conv()
                        .map(|c| c.display_title())
                        .unwrap_or_default();
                    self.views
                        .push(Box::new(views::prompt::Prompt::rename(id, &title)));
                }
                Some(id) => self.write(
                    move |e| e.rename_conversation(id, &arg),
                    move |app, r| match r {
                        Ok(()) => {
                            app.model.reload_convs();
                            app.update_title();
                            done_later(app);
                        }
                        Err(e) => app.command_error(&cmd, e),
                    },
                ),
                None => {}
            },
            Command::Delete => {
                if let Some((id, title)) =
                    self.model.current_conv().map(|c| (c.id, c.display_title()))
                {
                    done(self);
                    self.views
                        .push(Box::new(views::confirm::Confirm::delete_conversation(
                            &self.model,
                            id,
                            &title,
                            false,
                        )));
                }
            }
            Command::Model => {
                if arg.is_empty() {
                    // The picker: what is configured and what the servers
                    // list, filtered as you type (their lists come in
                    // while it is open).
                    let (name, provider) = self.model.model_label();
                    let current = self.model.current_conv().and_then(|c| c.model.clone());
                    done(self);
                    let label = format!("{name} ({provider})");
                    // As the list names it: the entry chosen, else the default's.
                    let in_use = current
                        .clone()
                        .or_else(|| self.engine().config().get().default_model.clone())
                        .unwrap_or(name);
                    let picker = views::model_picker::ModelPicker::new(
                        self.engine(),
                        current,
                        in_use,
                        label,
                    );
                    self.views.push(Box::new(picker));
                } else if let Some(id) = conv {
                    // An id completion offered from a configured server
                    // becomes `ENTRY/ID`, which every process resolves.
                    let current = self.model.current_conv().and_then(|c| c.model.clone());
                    let arg = self.engine().model_name_for(&arg, current.as_deref());
                    if may_wait && self.wait_for_model_lists(&arg, &cmd) {
                        return;
                    }
                    let name = arg.clone();
                    self.write(
                        move |e| e.set_conversation_model(id, Some(&name)),
                        move |app, r| match r {
                            Ok(kind) => {
                                app.model.reload_convs();
                                // Said once: the name may still be right (a server
                                // that does not list every model it serves).
                                match app.engine().unknown_model(&arg) {
                                    Some(u) => app.error_until_key(format!(
                                        "model for this conversation: {arg} — but the {} server does not list {}{}",
                                        u.provider,
                                        u.name,
                                        if u.suggestions.is_empty() {
                                            String::new()
                                        } else {
                                            format!(" (did you mean {}?)", u.suggestions.join(", "))
                                        }
                                    )),
                                    None => app.info_until_key(format!(
                                        "model for this conversation: {arg} ({kind})"
                                    )),
                                }
                                done_later(app);
                            }
                            Err(e) => app.command_error(&cmd, e),
                        },
                    );
                }
            }
            Command::Role => {
                if arg.is_empty() {
                    let roles: Vec<String> =
                        self.engine().config().get().roles.keys().cloned().collect();
                    let cur = self
                        .model
                        .current_conv()
                        .and_then(|c| c.role.clone())
                        .unwrap_or_else(|| "none".into());
                    self.info(format!(
                        "role: {cur} — available: {}",
                        if roles.is_empty() {
                            "none (add [roles.NAME] to the config)".into()
                        } else {
                            roles.join(", ")
                        }
                    ));
                    done(self);
                } else if let Some(id) = conv {
                    let role = (arg != "none").then(|| arg.clone());
                    self.write(
                        move |e| e.set_conversation_role(id, role.as_deref()),
                        move |app, r| match r {
                            Ok(()) => {
                                app.model.reload_convs();
                                app.info_until_key(format!("role: {arg}"));
                                done_later(app);
                            }
                            Err(e) => app.command_error(&cmd, e),
                        },
                    );
                }
            }
            // A space written `\ ` (as a shell, and Tab for `@path`, write
            // it) is a space of the name.
            Command::Attach => {
                match self.attach(&commands::expand_home(&commands::unescape_spaces(&arg))) {
                    Ok(msg) => {
                        self.info_until_key(msg);
                        self.composer.set_text("", now);
                    }
                    Err(e) => self.command_error(&cmd, e),
                }
            }
            Command::Detach => match self.detach(arg.trim()) {
                Ok(msg) => {
                    self.info_until_key(msg);
                    self.composer.set_text("", now);
                }
                Err(e) => self.command_error(&cmd, e),
            },
            Command::With => match arg.split_once(char::is_whitespace) {
                Some((model, text)) if !text.trim().is_empty() => {
                    let current = self.model.current_conv().and_then(|c| c.model.clone());
                    let model = self.engine().model_name_for(model, current.as_deref());
                    if may_wait && self.wait_for_model_lists(&model, &cmd) {
                        return;
                    }
                    match self.engine().config().describe(Some(&model)) {
                        Ok(_) => {
                            self.model_override = Some(model);
                            self.send(text.trim(), None);
                            self.model_override = None;
                        }
                        Err(e) => self.command_error(&cmd, e),
                    }
                }
                _ => self.command_error(
                    &cmd,
                    "usage: /with MODEL TEXT — sends this one message to another model",
                ),
            },
            Command::Retry => {
                done(self);
                self.main_action(Action::Regenerate);
            }
            Command::Resume => {
                done(self);
                self.apply(vec![Intent::ResumeQueue]);
            }
            Command::Copy => {
                if arg.is_empty() {
                    done(self);
                    self.copy(None);
                } else {
                    match arg.parse::<usize>() {
                        Ok(n) => {
                            done(self);
                            self.copy(Some(n));
                        }
                        Err(_) => self.command_error(
                            &cmd,
                            "usage: /copy [N] — N is the code block number shown in its header",
                        ),
                    }
                }
            }
            Command::Export => match super::export::export(&self.model, &arg) {
                Ok(p) => {
                    self.info_until_key(format!("exported to {p}"));
                    done(self);
                }
                Err(e) => self.command_error(&cmd, e),
            },
            Command::Search => {
                done(self);
                let view = views::search::Search::new(&arg, &self.model);
                self.views.push(Box::new(view));
            }
            Command::Tools => {
                done(self);
                let view = views::tools::Tools::open(&self.model);
                self.views.push(Box::new(view));
            }
            Command::Status => {
                done(self);
                let engine = self.engine().clone();
                let now = self.now();
                let view = views::call::Pager::status(move || status_report(&engine, now));
                self.views.push(Box::new(view));
            }
            Command::Fork => {
                // Cleared first: the fork opens the new conversation, which
                // saves the draft of the one left (at once when the write
                // is quick), and "/fork" is not that draft.
                let typed = self.composer.draft();
                done(self);
                if !self.fork_here() {
                    let history = std::mem::take(&mut self.composer.history);
                    self.composer.load(&typed, history);
                }
            }
            Command::Sidebar => {
                done(self);
                self.toggle_sidebar();
            }
            Command::Mouse => {
                done(self);
                self.toggle_mouse();
            }
            Command::Theme if arg.is_empty() => {
                done(self);
                let roles: Vec<&str> = Palette::ROLES.iter().map(|(n, _)| *n).collect();
                self.info(format!(
                    "theme: {} — /theme auto|dark|light switches; [ui.colors] in the config sets {}",
                    self.theme.describe(),
                    roles.join(", ")
                ));
            }
            Command::Theme => match arg.parse::<ThemeSetting>() {
                Ok(t) => {
                    done(self);
                    self.theme.session = Some(t);
                    // Bad `[ui.colors]` entries were reported at start.
                    let _ = self.apply_theme();
                    self.info_until_key(format!(
                        "theme: {} for this session (set [ui] theme = \"{}\" in the config to keep it)",
                        self.theme.describe(),
                        t.name()
                    ));
                }
                Err(e) => self.command_error(&cmd, e),
            },
            Command::Help => {
                done(self);
                self.views.push(Box::new(views::help::Help::default()));
            }
            Command::Quit => {
                done(self);
                self.quit = true;
            }
        }
    }

    /// `name` (from `/model` or `/with`) leads nowhere yet, and a configured
    /// server's model list, which may list it as an id, is on its way: the
    /// command `line` is run again when the list is in, or after
    /// [`MODEL_WAIT_MS`] (then saying what it says without the list), so
    /// the same command gives the same answer in a TUI just started. True
    /// when it waits; the UI thread does not.
    fn wait_for_model_lists(&mut self, name: &str, line: &str) -> bool {
        // Not for an id the environment's provider would take: a configured
        // server's list, once in, comes first (`model_name_for`).
        if self.engine().config().names_a_config_model(name) || !self.engine().model_lists_coming()
        {
            return false;
        }
        self.wait_for_models(line);
        true
    }

    /// Runs command `line` again once the model lists are in (or after
    /// [`MODEL_WAIT_MS`]), if the composer still holds it.
    fn wait_for_models(&mut self, line: &str) {
        let now = self.now();
        self.model_wait = Some(ModelWait {
            line: line.to_string(),
            conv: self.model.current,
            until: now + MODEL_WAIT_MS,
        });
        self.info(ASKING_FOR_MODELS);
    }

    /// On a tick: a command waiting for a model list runs again once the
    /// list is in (or the wait is over), if the composer still holds it in
    /// the same conversation; otherwise it is dropped with its line.
    pub(super) fn retry_command_waiting_for_models(&mut self) {
        let Some(wait) = &self.model_wait else {
            return;
        };
        let current = self.model.current_conv().and_then(|c| c.model.clone());
        if self.now() < wait.until
            && (self.engine().model_lists_coming()
                || self.engine().model_list_coming(current.as_deref()))
        {
            return;
        }
        let Some(wait) = self.model_wait.take() else {
            return;
        };
        if self
            .status
            .as_ref()
            .is_some_and(|s| s.text == ASKING_FOR_MODELS)
        {
            self.status = None;
        }
        if self.model.current != wait.conv || self.composer.text().trim() != wait.line.trim() {
            return;
        }
        self.run_command(wait.line, false);
    }

    /// A new conversation with this one's history up to the last message on
    /// screen (`/fork`, or its key). Returns whether there was one to fork.
    pub(super) fn fork_here(&mut self) -> bool {
        let Some((conv, at)) = self.model.current.zip(self.message_at_bottom()) else {
            self.error("nothing to fork yet: the conversation is empty");
            return false;
        };
        self.write(
            move |e| e.fork_conversation(conv, at),
            |app, r| match r {
                Ok(fork) => {
                    app.model.reload_convs();
                    app.open(fork.id);
                    let left_out = crate::call_text::calls_left_out(&fork.calls_left_out)
                        .map(|n| format!("; {n}"))
                        .unwrap_or_default();
                    app.info_until_key(format!(
                        "forked: this is a new conversation with the history up to there{left_out}"
                    ));
                }
                Err(e) => app.error(format!("{e:#}")),
            },
        );
        true
    }

    /// `/detach NAME`: the attachments of that name go; `/detach`: all.
    fn detach(&mut self, name: &str) -> Result<String, String> {
        let all = &mut self.composer.attachments;
        if all.is_empty() {
            return Err("nothing is attached to the next message".into());
        }
        if name.is_empty() {
            let n = all.len();
            all.clear();
            return Ok(match n {
                1 => "removed the attachment".into(),
                n => format!("removed the {n} attachments"),
            });
        }
        let named = |p: &Part| composer::describe(p).0 == name;
        let n = all.iter().filter(|p| named(p)).count();
        if n > 1 {
            // Two files of one name (from two folders): the last attached
            // goes, and the other is said to stay.
            if let Some(last) = all.iter().rposition(&named) {
                let (_, kind, bytes) = composer::describe(&all.remove(last));
                return Ok(format!(
                    "removed the last {} attached ({kind}, {}); another of that name stays (/detach {} again removes it)",
                    crate::sanitize::sanitize_line(name),
                    crate::files::human_size(bytes),
                    crate::sanitize::sanitize_line(name),
                ));
            }
        }
        if n == 0 {
            let names: Vec<String> = all.iter().map(|p| composer::describe(p).0).collect();
            return Err(format!(
                "no attachment named “{}”: attached are {}",
                crate::sanitize::sanitize_line(name),
                names.join(", ")
            ));
        }
        all.retain(|p| !named(p));
        Ok(format!(
            "removed {}{}",
            crate::sanitize::sanitize_line(name),
            match all.len() {
                0 => String::new(),
                k => format!(" ({k} still attached)"),
            }
        ))
    }

    pub(super) fn attach(&mut self, path: &str) -> Result<String, AttachError> {
        let cap = self.engine().config().get().max_attachment_bytes();
        let used: u64 = self
            .composer
            .attachments
            .iter()
            .map(|p| composer::describe(p).2)
            .sum();
        // An image for a model that cannot see it is refused now, with the
        // reason, rather than replaced by a note when it is sent.
        let model = self.model.current_conv().and_then(|c| c.model.clone());
        self.engine()
            .check_attachment(model.as_deref(), std::path::Path::new(path))
            .map_err(|e| format!("{e:#}"))?;
        let part = super::export::read_attachment(std::path::Path::new(path), used, cap)?;
        let (name, kind, bytes) = composer::describe(&part);
        if self.composer.attachments.contains(&part) {
            return Err(AttachError::Again(name));
        }
        self.composer.attachments.push(part);
        Ok(format!(
            "attached {name} ({kind}, {}) to the next message (/detach removes)",
            crate::files::human_size(bytes)
        ))
    }
}

/// How long `/model` or `/with` waits for a server's model list that is on
/// its way before it answers without it.
pub const MODEL_WAIT_MS: i64 = 5_000;
/// How often a command waiting for a model list looks whether it is in.
pub(super) const MODEL_WAIT_POLL_MS: i64 = 100;
const ASKING_FOR_MODELS: &str = "asking the server for its models…";

/// A `/model` or `/with` waiting for a model list (`App::model_wait`).
pub struct ModelWait {
    line: String,
    conv: Option<i64>,
    pub(super) until: i64,
}

/// OSC 52 clipboard write. Sent raw inside tmux too: tmux takes it into its
/// buffer and passes it on to the outer terminal with `set-clipboard on`,
/// whereas a passthrough-wrapped one is dropped unless `allow-passthrough` is on.
pub fn osc52(text: &str) -> String {
    use base64::Engine as _;
    format!(
        "\x1b]52;c;{}\x07",
        base64::engine::general_purpose::STANDARD.encode(text)
    )
}

/// Whether composer text is a command (`/help`), not a message (`//help`
/// sends "/help").
/// `/later REST` or `/at REST`: how the time in REST is read, and REST.
fn timed_send(text: &str) -> Option<(Mode, &str)> {
    text.strip_prefix("/later ")
        .map(|r| (Mode::Later, r))
        .or_else(|| text.strip_prefix("/at ").map(|r| (Mode::At, r)))
}

pub(super) fn is_command(text: &str) -> bool {
    text.starts_with('/') && !text.starts_with("//")
}

/// A message's text as sent: "//" escapes one that starts with a slash.
pub(super) fn unescape_slash(text: &str) -> &str {
    text.strip_prefix('/')
        .filter(|_| text.starts_with("//"))
        .unwrap_or(text)
}

/// A message's text as it is typed again (recalled, edited): one that
/// starts with a slash gets its "//" back, or it would read as a command.
pub(super) fn escape_slash(text: &str) -> std::borrow::Cow<'_, str> {
    if text.starts_with('/') {
        format!("/{text}").into()
    } else {
        text.into()
    }
}

/// What a `/later`, `/at` or `/every` line will do, as it is typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Preview {
    /// The rule in words with its end, for `/every`.
    pub rule: Option<String>,
    /// Its end alone (`5 times, until Sun 20 Dec 23:59`): where the rule
    /// does not fit, what shows that the end was understood.
    pub end: Option<String>,
    /// When it sends (for a rule, its next three times).
    pub times: String,
    /// Its next time alone.
    pub next: String,
    /// The text it sends, shown after the times where there is room:
    /// what was read as the time is then plain to see.
    pub text: Option<String>,
}

impl Preview {
    /// One line of at most `width` cells. Its rule and times; where that
    /// does not fit, the rule with fewer times (two, then the next), then
    /// with the next time's day alone where the rule says its time of day;
    /// then the rule in fewer words (`every Mon, Wed, Fri 08:30, until 31
    /// Jan 2027`) with the next time, then without it. The rule is what
    /// the preview is there to confirm, so it is cut (after a whole word,
    /// keeping its end, what a typo would lose) only where even that does
    /// not fit.
    pub fn line(&self, width: usize) -> String {
        use unicode_width::UnicodeWidthStr;
        let line = self.without_text(width);
        let Some(text) = &self.text else {
            return line;
        };
        // ` · "…"`: the text on one line, cut to what is left, if at least
        // a word of it shows.
        let text = crate::sanitize::sanitize_line(text).replace(['\n', '\t'], " ");
        let room = width.saturating_sub(line.width() + 5);
        if room < 6.min(text.width()) || room == 0 {
            return line;
        }
        format!("{line} · \"{}\"", super::text::elide(&text, room))
    }

    /// [`Preview::line`] without the text.
    fn without_text(&self, width: usize) -> String {
        use unicode_width::UnicodeWidthStr;
        let fits = |a: &str, b: &str| a.width() + 3 + b.width() <= width;
        let Some(rule) = &self.rule else {
            return super::text::elide(&self.times, width);
        };
        // The times without the last: the next one and the one after it
        // still show the rule's step (a month without a 31st skipped).
        let two = self.times.rsplit_once(", ").map(|(two, _)| two);
        if fits(rule, &self.times) {
            return format!("{rule} — {}", self.times);
        }
        // The third left out says so: `then Tue` alone read as a list cut
        // off by the border.
        if let Some(two) = two
            .filter(|t| t.contains(", then "))
            .map(|t| format!("{t}, …"))
            .filter(|t| fits(rule, t))
        {
            return format!("{rule} — {two}");
        }
        let day = next_day(&self.next, rule);
        let end = self.end.as_deref().map(short_end);
        let core = rule
            .strip_suffix(self.end.as_deref().unwrap_or_default())
            .unwrap_or(rule)
            .trim_end_matches(", ");
        let short_core = short_rule(core);
        let short = match &end {
            Some(end) => format!("{short_core}, {end}"),
            None => short_core.clone(),
        };
        for r in [rule.as_str(), &short] {
            for n in [self.next.as_str(), &day] {
                if fits(r, n) {
                    return format!("{r} — {n}");
                }
            }
        }
        for r in [rule.as_str(), &short] {
            if r.width() <= width {
                return r.to_string();
            }
        }
        // Cut after a whole word: a list of days cut inside a name
        // (`on Monday, T…`) reads as a day that is not there.
        match end {
            Some(end) if width >= end.width() + 2 + 12 => format!(
                "{}, {end}",
                super::text::elide_words(&short_core, width - end.width() - 2)
            ),
            _ => super::text::elide_words(&short, width),
        }
    }
}

/// `next Mon 7 Dec` for `next Mon 7 Dec 09:00` where the rule says `at
/// 09:00` (a time the clocks skip moves it: then it is kept).
fn next_day(next: &str, rule: &str) -> String {
    match next.rsplit_once(' ') {
        Some((day, time))
            if time.contains(':') && day.contains(' ') && rule.contains(&format!("at {time}")) =>
        {
            day.to_string()
        }
        _ => next.to_string(),
    }
}

/// A rule in fewer words: `every Mon, Wed, Fri 08:30` for `every Mon, Wed
/// and Fri at 08:30` (a cron rule's words are left as they are).
fn short_rule(rule: &str) -> String {
    if rule.starts_with("cron ") {
        return rule.to_string();
    }
    let mut out = rule.replace(" and ", ", ");
    while let Some(i) = out.find(" at ").filter(|&i| {
        out[i + 4..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit())
    }) {
        out.replace_range(i..i + 4, " ");
    }
    out
}

/// An end in fewer words: `until 31 Jan 2027` for `until Sun 31 Jan 2027
/// 23:59` (the end of the day `until DATE` means, so the date alone says it).
fn short_end(end: &str) -> String {
    end.split(", ")
        .map(|part| match part.strip_prefix("until ") {
            Some(at) => {
                let at = at.strip_suffix(" 23:59").unwrap_or(at);
                let at = match at.split_once(' ') {
                    Some((wd, rest)) if wd.len() == 3 && wd.chars().all(|c| c.is_alphabetic()) => {
                        rest
                    }
                    _ => at,
                };
                format!("until {at}")
            }
            None => part.to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `/status`'s lines, read through a connection of their own (the report
/// takes up to a few seconds: the servers are tried), or why there are none.
fn status_report(engine: &crate::engine::Engine, now: i64) -> Vec<String> {
    let made = crate::store::Store::open_read_only(engine.store().path())
        .and_then(|store| crate::cli::status_report(&store, engine.config(), now));
    made.unwrap_or_else(|e| vec![format!("the status could not be read: {e:#}")])
}

#[cfg(test)]
mod tests {
    use super::Preview;

    fn every(rule: &str, end: Option<&str>, times: &str, next: &str) -> Preview {
        Preview {
            rule: Some(rule.into()),
            end: end.map(Into::into),
            times: times.into(),
            next: next.into(),
            text: None,
        }
    }

    #[test]
    fn a_rule_too_long_for_the_line_is_cut_with_its_end_kept() {
        let p = every(
            "cron \"0 9 * * 1-5\" (at 09:00 on Monday through Friday), until Sun 31 Jan 2027 23:59",
            Some("until Sun 31 Jan 2027 23:59"),
            "next Mon 7 Dec 09:00, then Tue, Wed",
            "next Mon 7 Dec 09:00",
        );
        let line = p.line(52);
        // After a whole word, not the joining `on`; the bracket closed.
        assert_eq!(line, "cron \"0 9 * * 1-5\" (at 09:00 …), until 31 Jan 2027");
        assert!(unicode_width::UnicodeWidthStr::width(line.as_str()) <= 52);
    }

    #[test]
    fn a_list_of_times_shortened_to_two_says_that_more_follow() {
        let p = every(
            "every weekday at 09:00, until Sun 31 Jan 2027 23:59",
            Some("until Sun 31 Jan 2027 23:59"),
            "next Mon 7 Dec 09:00, then Tue, Wed",
            "next Mon 7 Dec 09:00",
        );
        // All three where they fit; two and an ellipsis where the third
        // does not (what the composer's border showed at 120 columns with
        // the sidebar: `… then Tue`, which read as cut off).
        assert_eq!(
            p.line(95),
            "every weekday at 09:00, until Sun 31 Jan 2027 23:59 — next Mon 7 Dec 09:00, then Tue, Wed"
        );
        assert_eq!(
            p.line(87),
            "every weekday at 09:00, until Sun 31 Jan 2027 23:59 — next Mon 7 Dec 09:00, then Tue, …"
        );
        // No room for the ellipsis: the next time alone, its day only.
        assert_eq!(
            p.line(84),
            "every weekday at 09:00, until Sun 31 Jan 2027 23:59 — next Mon 7 Dec 09:00"
        );
    }

    #[test]
    fn the_next_time_keeps_its_time_of_day_where_the_rule_does_not_say_it() {
        // Every 3 hours: the rule has no time of day, so the next one's is
        // not dropped to make room (the rule alone shows instead).
        let p = every(
            "every 3 hours, 12 times, until Sun 31 Jan 2027 23:59",
            Some("12 times, until Sun 31 Jan 2027 23:59"),
            "next Mon 7 Dec 09:00, then 12:00, 15:00",
            "next Mon 7 Dec 09:00",
        );
        assert_eq!(
            p.line(92),
            "every 3 hours, 12 times, until Sun 31 Jan 2027 23:59 — next Mon 7 Dec 09:00, then 12:00, …"
        );
        assert_eq!(p.line(48), "every 3 hours, 12 times, until 31 Jan 2027");
        assert_eq!(
            p.line(70),
            "every 3 hours, 12 times, until 31 Jan 2027 — next Mon 7 Dec 09:00"
        );
    }
}

/// The tasks an exchange replaced by an edit scheduled, which stay.
fn tasks_kept_line(kept: &[(i64, String)]) -> String {
    let named: Vec<String> = kept
        .iter()
        .map(|(id, t)| {
            format!(
                "“{}” (#{id})",
                crate::tui::text::elide(&crate::sanitize::sanitize_line(t), 40)
            )
        })
        .collect();
    match named.len() {
        0 => String::new(),
        1 => format!(
            " — the task it scheduled, {}, stays: x in the strip cancels it",
            named[0]
        ),
        _ => format!(
            " — the tasks it scheduled stay ({}): x in the strip cancels one",
            named.join(", ")
        ),
    }
}

/// Why `/attach` (or an `@path`) attached nothing.
#[derive(Debug)]
pub(super) enum AttachError {
    /// The same file (name and content) is attached already.
    Again(String),
    /// Refused: the reason, in a line.
    Refused(String),
}

impl From<String> for AttachError {
    fn from(reason: String) -> Self {
        AttachError::Refused(reason)
    }
}

impl std::fmt::Display for AttachError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AttachError::Again(name) => write!(
                f,
                "{} is attached already (the same file)",
                crate::sanitize::sanitize_line(name)
            ),
            AttachError::Refused(reason) => f.write_str(reason),
        }
    }
}
