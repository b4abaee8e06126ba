//! Applying the intents views return: each one through the engine, with a
//! one-line status for the user.

use super::app::{App, Focus};
use super::composer::Composer;
use super::model::local;
use super::views::Intent;
use crate::engine::ItemAction;

impl App {
    // ----- intents -------------------------------------------------------------

    pub fn apply(&mut self, intents: Vec<Intent>) {
        for i in intents {
            self.apply_one(i);
        }
    }

    pub(super) fn apply_one(&mut self, intent: Intent) {
        let now = self.now();
        match intent {
            Intent::Info(s) => self.info_until_key(s),
            // As if typed: an error about it stays with the line, to be fixed.
            Intent::ChooseModel(name) => {
                let line = format!("/model {name}");
                self.composer.set_text(&line, now);
                self.run_command(line, false);
            }
            Intent::Error(s) => self.error(s),
            Intent::KeyError(s) => {
                self.error(s);
                // About the card of an approval waiting here ("choose
                // Approve or Deny first"): stale once it is answered, from
                // anywhere, as well as at the next key.
                let current = self
                    .model
                    .current
                    .filter(|c| self.model.awaiting.contains(c));
                self.status_ends_with_next_key();
                if let Some(st) = self.status.as_mut() {
                    st.approval_in = current;
                }
            }
            Intent::Item { id, seen, action } => {
                let done = match &action {
                    ItemAction::Cancel { .. } => "canceled".to_string(),
                    ItemAction::SendNow => "sending as soon as the conversation is free".into(),
                    ItemAction::Retry => "retrying".into(),
                    ItemAction::Reschedule(at) => {
                        format!("rescheduled: {}", super::views::preview(*at, &local(now)))
                    }
                    ItemAction::Edit(_) => "edited".into(),
                };
                let edited = match &action {
                    ItemAction::Edit(text) => Some(text.clone()),
                    _ => None,
                };
                // Cancel, send now and retry take it out of the strip (a
                // retried item goes, or fails again): the row that takes its
                // place is selected then (marked before the write, whose
                // events may come before its result).
                let leaves = matches!(
                    action,
                    ItemAction::Cancel { .. } | ItemAction::SendNow | ItemAction::Retry
                );
                let marked = leaves && self.strip.acted_on(id, &self.model);
                let canceled = matches!(action, ItemAction::Cancel { .. });
                self.write(
                    move |e| e.act_on_item(id, seen, action),
                    move |app, r| match (r, edited) {
                        // A key's confirmation: the next key makes it stale.
                        (Ok(()), _) => {
                            // Gone from the strip at once, not at the
                            // engine's event after keys typed ahead: those
                            // meet the row that took its place, not seen
                            // yet, instead of the item just canceled.
                            if canceled {
                                app.model.reload_items();
                                app.sync_views();
                            }
                            app.info_until_key(done);
                        }
                        // The item went (or changed) while it was being
                        // edited: what was typed is not lost, it waits in
                        // the composer.
                        (Err(e), Some(text)) => app.apply_one(Intent::KeepInComposer {
                            text,
                            error: e.to_string(),
                        }),
                        (Err(e), None) => {
                            if marked {
                                app.strip.not_acted_on(id);
                            }
                            app.error(e)
                        }
                    },
                );
            }
            Intent::KeepInComposer { text, error } => {
                self.keep_in_composer(&text);
                self.error(format!("{error} — your edit is in the composer"));
            }
            Intent::CancelQueued(conv) => self.write(
                move |e| e.cancel_queued(conv),
                |app, r| {
                    match r {
                        Ok(1) => app.info_until_key("canceled 1 queued message"),
                        Ok(n) => app.info_until_key(format!("canceled {n} queued messages")),
                        Err(e) => app.error(e),
                    }
                    // What is left (scheduled items) is chosen at once, so
                    // the strip's keys act on it without a ↓ first.
                    app.model.reload_items();
                    if app.focus == Focus::Strip {
                        app.strip.focus(&app.model);
                    }
                },
            ),
            Intent::PullBack { id, seen, stopped } => {
                if !self.composer.is_blank() {
                    self.error("the composer holds a draft; send or clear it first (the item stays queued)");
                    return;
                }
                self.save_draft();
                // A scheduled item comes back with its time, as `/at` takes
                // it, so Enter schedules it again rather than sending it now.
                let due = self
                    .model
                    .items
                    .iter()
                    .find(|i| i.id == id)
                    .and_then(|i| i.due_at)
                    .filter(|d| *d > now);
                let marked = self.strip.acted_on(id, &self.model);
                self.write(
                    move |e| e.pull_back(id, seen),
                    move |app, r| match r {
                        Ok((conv, mut draft)) => {
                            // Typed on while the write waited: the item is the draft
                            // in the database, and the composer keeps what was typed.
                            if Some(conv) == app.model.current && app.composer.is_blank() {
                                // The composer's next save replaces it (where
                                // the composer kept what was typed instead, that
                                // save puts both together).
                                app.drafts.stored(conv, draft.text.clone());
                                let history = app.model.sent_texts();
                                let at = due.map(local);
                                if let Some(at) = &at {
                                    draft.text =
                                        at_line(&at_command(at), &draft.text, &app.model.now());
                                }
                                app.composer.load(&draft, history);
                                app.focus = Focus::Composer;
                                if at.is_some() {
                                    app.composer.unsaved_since = Some(app.now());
                                    app.info_until_key("moved back into the composer with its time: Enter schedules it again");
                                } else if stopped {
                                    app.info_until_key(
                                        "stopped before it was sent: your message is back in the composer",
                                    );
                                } else {
                                    app.info_until_key("moved back into the composer");
                                }
                            } else {
                                app.info_until_key("moved back into its conversation's draft");
                            }
                        }
                        Err(e) => {
                            if marked {
                                app.strip.not_acted_on(id);
                            }
                            app.error(e)
                        }
                    },
                );
            }
            Intent::ResumeQueue => {
                if let Some(c) = self.model.current {
                    self.write(
                        move |e| e.resume_queue(c),
                        move |app, r| match r {
                            Ok(true) => {
                                app.info_until_key("queue resumed");
                                app.status_about_a_resume(c);
                            }
                            Ok(false) => app.info_until_key("the queue is not paused"),
                            Err(e) => app.error(e),
                        },
                    );
                }
            }
            Intent::Open(id) => {
                if self.model.convs.iter().any(|c| c.id == id) {
                    self.open(id);
                } else {
                    self.error("that conversation no longer exists");
                }
            }
            Intent::OpenAt {
                conversation,
                message,
            } => {
                if self.model.convs.iter().any(|c| c.id == conversation) {
                    self.open(conversation);
                    self.focus = Focus::Composer;
                    if !self.scroll_to_message(message) {
                        self.info_until_key("that message is no longer shown here");
                    }
                } else {
                    self.error("that conversation no longer exists");
                }
            }
            Intent::NewConversation => self.new_conversation(None),
            Intent::Rename { id, title } => self.write(
                move |e| e.rename_conversation(id, &title),
                |app, r| match r {
                    Ok(()) => {
                        app.model.reload_convs();
                        app.update_title();
                        app.info_until_key("renamed");
                    }
                    Err(e) => app.error(e),
                },
            ),
            Intent::Delete(id) => self.write(
                move |e| e.delete_conversation(id),
                move |app, r| match r {
                    Ok(()) => {
                        app.model.reload_convs();
                        app.model.reload_summaries();
                        if app.model.current == Some(id) {
                            app.model.set_current(None);
                            app.composer = Composer::default();
                            app.open_other_or_new();
                        }
                        app.info_until_key("conversation deleted");
                        app.focus = Focus::Composer;
                    }
                    Err(e) => app.error(format!("{e:#}")),
                },
            ),
            Intent::Answer { id, approve } => self.write(
                move |e| e.answer_approval(id, approve),
                move |app, r| {
                    match r {
                        Ok(()) => app.info_until_key(if approve { "approved" } else { "denied" }),
                        Err(e) => app.error(e),
                    }
                    app.model.reload_messages();
                    app.model.reload_items();
                    app.model.reload_summaries();
                    app.sync_views();
                },
            ),
            Intent::ScheduleComposer(due) => {
                let text = self.composer.text();
                self.schedule(super::sending::unescape_slash(text.trim()), due);
            }
            Intent::Filter(s) => {
                self.sidebar.filter = s;
                self.sidebar.selected = self.sidebar.visible(&self.model).first().map(|c| c.id);
            }
            Intent::OpenFiltered => {
                if let Some(id) = self.sidebar.visible(&self.model).first().map(|c| c.id) {
                    self.open(id);
                    self.focus = Focus::Composer;
                    // Used: the list is whole again, so Alt+↑/↓ and the
                    // sidebar reach every conversation (a filter left on hid
                    // them, and Alt+↓ silently did nothing).
                    self.sidebar.filter.clear();
                    self.sidebar.selected = Some(id);
                }
            }
            Intent::Push(v) => self.views.push(v),
            Intent::Type(key) => {
                self.focus = Focus::Composer;
                self.composer.input(key, now);
            }
            Intent::Submit => {
                self.focus = Focus::Composer;
                self.submit();
            }
            Intent::Focus(f) => {
                self.focus = f;
                if f == Focus::Strip {
                    self.strip.focus(&self.model);
                }
            }
        }
    }

    pub(super) fn new_conversation(&mut self, title: Option<&str>) {
        // Alt+n (or /new) in a conversation with nothing in it yet stays
        // there: each press made another "Conversation N" that stayed in
        // the sidebar for good.
        if title.is_none() && self.shows_an_unused_conversation() {
            self.focus = Focus::Composer;
            self.info_until_key("this conversation is new and empty: type a message to start it");
            return;
        }
        let title = title.map(str::to_string);
        self.write(
            move |e| e.create_conversation(title.as_deref(), "user"),
            |app, r| match r {
                Ok(id) => {
                    app.model.reload_convs();
                    app.sidebar.filter.clear();
                    app.open(id);
                    app.focus = Focus::Composer;
                }
                Err(e) => app.error(format!("{e:#}")),
            },
        );
    }

    /// The conversation shown has nothing of its own: no message, draft,
    /// title, model, role, pending item or series.
    fn shows_an_unused_conversation(&self) -> bool {
        let Some(conv) = self.model.current_conv() else {
            return false;
        };
        self.model.entries.is_empty()
            && self.composer.is_blank()
            && conv.title.is_none()
            && conv.model.is_none()
            && conv.role.is_none()
            && self.model.strip_items().next().is_none()
            && self.model.outliving_deletion(conv.id) == (0, 0)
    }

    // ----- sending -------------------------------------------------------------
}

/// `/at TIME TEXT` for an item pulled back, or `/at TIME -- TEXT` when
/// `/at` would not read TEXT back as its text (one that starts with more
/// time, `evening class`, would be refused, or read as part of the time).
fn at_line<Tz: chrono::TimeZone>(command: &str, text: &str, now: &chrono::DateTime<Tz>) -> String {
    let line = format!("{command} {text}");
    let time = line.strip_prefix("/at ").unwrap_or(&line);
    match crate::when::split_time_prefix(time, now, crate::when::Mode::At) {
        Ok((_, read)) if read == text => line,
        _ => format!("{command} -- {text}"),
    }
}

/// `/at TIME` that reads back as exactly `at`: with its seconds where it
/// has any (without them Enter moved it up to 59 s earlier), and with its
/// offset where the clocks pass its wall time twice (a bare time there is
/// the first of the two: Enter moved one in the second an hour earlier).
fn at_command<Tz: chrono::TimeZone>(at: &chrono::DateTime<Tz>) -> String
where
    Tz::Offset: std::fmt::Display,
{
    use chrono::Timelike;
    let twice = matches!(
        at.timezone().from_local_datetime(&at.naive_local()),
        chrono::LocalResult::Ambiguous(..)
    );
    let format = match (at.second() == 0, twice) {
        (true, false) => "%Y-%m-%d %H:%M",
        (false, false) => "%Y-%m-%d %H:%M:%S",
        (true, true) => "%Y-%m-%d %H:%M %:z",
        (false, true) => "%Y-%m-%d %H:%M:%S %:z",
    };
    format!("/at {}", at.format(format))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};
    use chrono_tz::America::New_York;

    #[test]
    fn an_at_command_reads_back_as_the_same_instant_in_a_repeated_hour() {
        // 1 Nov 2026, New York: 01:30 happens at 05:30 UTC (EDT), then
        // again at 06:30 UTC (EST).
        for (utc, text) in [
            (
                Utc.with_ymd_and_hms(2026, 11, 1, 5, 30, 0).unwrap(),
                "/at 2026-11-01 01:30 -04:00",
            ),
            (
                Utc.with_ymd_and_hms(2026, 11, 1, 6, 30, 0).unwrap(),
                "/at 2026-11-01 01:30 -05:00",
            ),
            (
                Utc.with_ymd_and_hms(2026, 11, 1, 6, 30, 15).unwrap(),
                "/at 2026-11-01 01:30:15 -05:00",
            ),
            (
                Utc.with_ymd_and_hms(2026, 11, 2, 14, 0, 0).unwrap(),
                "/at 2026-11-02 09:00",
            ),
        ] {
            let at = utc.with_timezone(&New_York);
            assert_eq!(at_command(&at), text);
            let now = Utc
                .with_ymd_and_hms(2026, 10, 30, 12, 0, 0)
                .unwrap()
                .with_timezone(&New_York);
            let read = crate::when::parse_time(&text["/at ".len()..], &now, crate::when::Mode::At);
            assert_eq!(read, Ok(utc), "{text}");
        }
    }
}
