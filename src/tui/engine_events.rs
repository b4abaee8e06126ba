//! Engine events into the app: what each event reloads, and notices (the
//! status line, the notices list, the bell and desktop notifications).

use super::app::App;
use super::reveal::Streamed;
use super::views::notices::Entry as NoticeEntry;
use crate::engine::{Event, NoticeKind, Notification};

/// How many notices the notices list (F3) holds.
const NOTICES_KEPT: usize = 100;

impl App {
    /// Apply an engine event; false when it changed nothing on screen (the
    /// text of a reply in a conversation not shown), so no frame is drawn.
    pub fn on_engine(&mut self, ev: Event) -> bool {
        let streamed_or_dispatch = matches!(ev, Event::Delta { .. } | Event::Dispatch(_));
        let finished = matches!(ev, Event::TurnFinished { .. });
        match ev {
            Event::Delta {
                conversation_id,
                message_id,
                offset,
                text,
            } => {
                if Some(conversation_id) != self.model.current {
                    return false;
                }
                let handed = Streamed {
                    conversation_id,
                    message_id,
                    offset,
                    text,
                };
                // Shown over the frames until the next is due (at once
                // where hand-overs come as often as frames).
                let every = self.model.engine.shown_text_every();
                if let Some(earlier) = self.reveal.hold(handed, every) {
                    self.show_streamed(earlier);
                }
                if let Some(step) = self.reveal.step() {
                    self.show_streamed(step);
                }
                return true;
            }
            Event::Thinking {
                conversation_id,
                message_id,
                chars,
                latest,
            } => {
                if Some(conversation_id) != self.model.current {
                    return false;
                }
                self.model.thinking = Some((message_id, chars));
                self.model.thinking_latest = Some(latest);
                let shown = self.model.thinking_latest_of(message_id);
                let Some(e) = self
                    .model
                    .entries
                    .iter_mut()
                    .rfind(|e| e.msg.id == message_id)
                else {
                    return false;
                };
                e.thinking = Some(chars);
                e.thinking_latest = shown;
                return e.msg.content.is_empty();
            }
            Event::Conversation(id)
            | Event::TurnFinished {
                conversation_id: id,
            } => {
                if Some(id) == self.model.current {
                    // The end of a reply is on screen at once: the reply
                    // was saved whole before it was announced, so what is
                    // still held is in what the reload reads.
                    if finished {
                        self.reveal.all();
                        self.model.thinking = None;
                        self.model.thinking_latest = None;
                    }
                    self.model.reload_messages();
                    self.model.reload_items();
                }
                self.model.reload_convs();
            }
            Event::Conversations => {
                self.model.reload_convs();
                self.model.reload_summaries();
                // The clock was set back (conversations written ahead came
                // back to now): messages shown with a time still ahead are
                // read again, and headed with now.
                let now = self.model.now_ms();
                if self.model.entries.iter().any(|e| e.msg.created_at > now) {
                    self.model.reload_messages();
                }
            }
            // The store keeps the counts: a change that names its rows costs
            // the same cheap read as one that does not.
            Event::Outbox | Event::OutboxRows(_) => {
                self.model.reload_items();
                self.model.reload_summaries();
                self.update_title();
                self.take_back_stopped_message();
            }
            Event::External => {
                self.model.reload_all();
                // Another process held the message stopped here.
                self.take_back_stopped_message();
                if self.model.current.is_none() {
                    self.open_other_or_new();
                }
                self.take_draft_saved_elsewhere();
                self.update_title();
            }
            Event::Dispatch(s) => self.model.dispatch = s,
            Event::Tools => {}
            Event::ConfigReloaded => {
                self.apply_config_if_changed();
            }
            Event::Notice(n) => self.on_notice(n),
        }
        // A token or a dispatch state changes nothing a view shows; the views
        // (F2 reloads its whole list) are brought up to date on the rest.
        if !streamed_or_dispatch {
            self.sync_views();
            self.drop_stale_status();
        }
        true
    }

    /// An approval notice goes once nothing waits for approval in its
    /// conversation any more, wherever it was answered; "queued: it goes as
    /// soon as this reply finishes" goes once the queue is paused instead
    /// (the strip says so, and how to resume); "wait for the reply to
    /// finish" goes once it has, "approved: running it" once it has run.
    fn drop_stale_status(&mut self) {
        let (current, paused_now) = (self.model.current, self.model.paused());
        let Some(s) = self.status.as_mut() else {
            return;
        };
        let answered = s
            .approval_in
            .is_some_and(|c| !self.model.awaiting.contains(&c));
        let paused = s.queued_in.is_some() && s.queued_in == current && paused_now;
        // "the queue is paused", and resumed since; "queue resumed", and
        // paused again since.
        let resumed = gone_once_seen(&mut s.paused_in, current, paused_now);
        let paused_again = gone_once_seen(&mut s.resumed_in, current, !paused_now);
        let now = self.model.now_ms();
        let model = &self.model;
        // Read only while a retry's line stands.
        let waits_to_retry = s.retrying_in.is_some()
            && model.items.iter().any(|i| {
                matches!(
                    model.state_of(i, now),
                    crate::engine::ItemState::Retrying { .. }
                )
            });
        let retry_began = gone_once_seen(&mut s.retrying_in, current, waits_to_retry);
        let Some(s) = self.status.as_ref() else {
            return;
        };
        let finished = s.while_busy_in.is_some_and(|c| !self.engine().is_busy(c));
        let ran = s
            .tool_running_in
            .is_some_and(|c| !self.engine().runs_approved_call_in(c));
        let regenerated = s.regenerating_in.is_some_and(|c| {
            self.model.current == Some(c)
                && !self.engine().is_busy(c)
                && self
                    .model
                    .regeneration
                    .as_ref()
                    .is_none_or(|r| r.status.is_finished() || r.status.gave_up())
        });
        let series_changed = s.series_shown.as_ref().is_some_and(|shown| {
            match self.engine().reader().series(shown.id) {
                Ok(Some(now)) => !same_as_shown(shown, &now),
                Ok(None) => true,
                // Unknown: the line stays its ten seconds, as before.
                Err(e) => {
                    tracing::warn!("reading series {}: {e:#}", shown.id);
                    false
                }
            }
        });
        let retried = s
            .failed_in
            .is_some_and(|c| self.model.failed_by_conv.get(&c).is_none_or(|n| *n == 0));
        if answered
            || paused
            || resumed
            || paused_again
            || retry_began
            || finished
            || ran
            || regenerated
            || series_changed
            || retried
        {
            self.status = None;
        }
    }

    /// The status line just set names series `id` (see
    /// [`super::app::Status::series_shown`]).
    pub(super) fn status_names_series(&mut self, id: i64) {
        let series = match self.engine().reader().series(id) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("reading series {id}: {e:#}");
                None
            }
        };
        if let Some(s) = self.status.as_mut() {
            s.series_shown = series;
        }
    }

    /// The next frame's share of the streamed text held back; false when
    /// none is held.
    pub fn reveal_step(&mut self) -> bool {
        match self.reveal.step() {
            Some(step) => {
                self.show_streamed(step);
                true
            }
            None => false,
        }
    }

    /// Put streamed text on screen, if its conversation still is.
    fn show_streamed(&mut self, s: Streamed) {
        if Some(s.conversation_id) != self.model.current {
            return;
        }
        let shown = |app: &mut App| {
            app.model
                .entries
                .iter_mut()
                .rev()
                .find(|e| e.msg.id == s.message_id)
                .map(|e| append_streamed(&mut e.msg.content, s.offset, &s.text))
        };
        // Not shown yet, or text before this is missing (events were lost
        // to a lag): what the database has, then this.
        if shown(self) != Some(true) {
            self.model.reload_messages();
            shown(self);
        }
    }

    /// The notices list's entry for a notice told at `at_ms`: its time of
    /// day, with the day when it was not today (one kept from before).
    pub(super) fn notice_entry(&self, at_ms: i64, n: &Notification) -> NoticeEntry {
        let at = super::model::local(at_ms);
        let stamp = if at.date_naive() == self.model.now().date_naive() {
            at.format("%H:%M")
        } else {
            at.format("%a %d %b %H:%M")
        };
        NoticeEntry {
            stamp: stamp.to_string(),
            text: crate::sanitize::sanitize_line(&n.text).into_owned(),
            conversation_id: n.conversation_id,
            is_error: matches!(
                n.kind,
                NoticeKind::Failed
                    | NoticeKind::RegenerateFailed
                    | NoticeKind::Expired
                    | NoticeKind::ConfigUnreadable
            ),
        }
    }

    /// The notices kept in the database (this tock's and others', before it
    /// started) as the notices list's history.
    pub(super) fn load_notice_history(&mut self) {
        let kept = self.engine().recent_notices(NOTICES_KEPT);
        self.notices = kept
            .iter()
            .map(|(at, n)| self.notice_entry(*at, n))
            .collect();
    }

    pub(super) fn on_notice(&mut self, n: Notification) {
        // A reload is announced by a notice; what of it could not be
        // taken is said with it, not overwritten by it.
        let not_taken = self.apply_config_if_changed();
        // On screen, and the window is looked at: a reply finishing in a
        // window left for another (a tmux window) rings as elsewhere.
        let on_screen = n.conversation_id.is_some() && n.conversation_id == self.model.current;
        let in_view = on_screen && self.window_focused;
        if n.kind == NoticeKind::ReplyFinished && in_view {
            return;
        }
        if n.kind == NoticeKind::ReplyFinished
            && let Some(c) = n.conversation_id
        {
            self.model.unread.insert(c);
        }
        let mut entry = self.notice_entry(self.model.now_ms(), &n);
        let (text, is_err) = (entry.text.clone(), entry.is_error);
        // The notices list keeps what the reload could not take, too.
        if let Some(problem) = &not_taken {
            entry.text = format!("{text}; {problem}");
            entry.is_error = true;
        }
        self.notices.push(entry);
        if self.notices.len() > NOTICES_KEPT {
            self.notices.remove(0);
        }
        // The engine says what happened; here we add which key helps.
        let hint = match n.kind {
            // About an item (a config that cannot be read is no item).
            NoticeKind::Failed | NoticeKind::Expired if n.conversation_id.is_some() => {
                " — F2 to retry"
            }
            NoticeKind::RegenerateFailed => " — Ctrl+R tries again",
            NoticeKind::Approval if !on_screen => " — Alt+↑/↓ or F2 to go there",
            _ => "",
        };
        if let Some(problem) = not_taken {
            self.error(format!("{text}; {problem}"));
        } else if is_err {
            self.error(format!("{text}{hint}"));
        } else {
            self.info(format!("{text}{hint}"));
        }
        // News: once it has been up long enough to be read, the user's next
        // key moves on from it (a call waiting keeps its card, its count
        // in the status bar and its mark in the list).
        if matches!(
            n.kind,
            NoticeKind::Fired
                | NoticeKind::ReplyFinished
                | NoticeKind::ReplyRetrying
                | NoticeKind::Info
                | NoticeKind::ConfigReadable
                | NoticeKind::Approval
        ) && let Some(s) = self.status.as_mut()
        {
            s.key_ends_it_from = Some(self.model.now_ms() + super::app::NOTICE_READ_MS);
        }
        if n.kind == NoticeKind::ReplyRetrying
            && let (Some(c), Some(s)) = (n.conversation_id, self.status.as_mut())
        {
            s.retrying_in = Some((c, false));
        }
        if n.kind == NoticeKind::Failed && n.conversation_id.is_some() && self.status.is_some() {
            // Told before the events that reload the counts: read them now
            // (the failure is saved first), or the line would look stale at once.
            self.model.reload_summaries();
            if let Some(s) = self.status.as_mut() {
                s.failed_in = n.conversation_id;
            }
        }
        if n.kind == NoticeKind::Approval
            && let Some(s) = self.status.as_mut()
        {
            // Told before the events that reload the gates: read them now
            // (the approval is saved first), or the line would look
            // answered at once.
            self.model.reload_summaries();
            s.approval_in = n.conversation_id;
        }
        if n.kind == NoticeKind::ToolRunning
            && let Some(s) = self.status.as_mut()
        {
            s.tool_running_in = n.conversation_id;
        }
        if matches!(
            n.kind,
            NoticeKind::Info | NoticeKind::ToolRunning | NoticeKind::ReplyRetrying
        ) {
            return;
        }
        let cfg = self.engine().config().get();
        // A message sent at its time and a reply that came ring once per
        // conversation until it is opened again; failures, expiries and
        // approvals ring every time.
        let routine = matches!(n.kind, NoticeKind::Fired | NoticeKind::ReplyFinished);
        let quiet = routine
            && n.conversation_id
                .is_some_and(|c| !self.model.rang.insert(c))
            // Good news about the file: listed and passed to notify_command
            // (which heard of the problem), not rung.
            || n.kind == NoticeKind::ConfigReadable;
        let bytes = if quiet {
            String::new()
        } else {
            crate::notify::terminal_bytes(&text, cfg.notify.bell, cfg.notify.desktop, self.in_tmux)
        };
        if !bytes.is_empty() {
            self.output.raw.push(bytes);
        }
        if let Some(cmd) = cfg.notify_command.as_ref().filter(|_| !n.elsewhere)
            && let Err(e) = crate::notify::run_command(cmd, &n)
            && self.notify_failure.as_deref() != Some(e.as_str())
        {
            // Said once (each notice would say it again), not only logged.
            self.error(&e);
            self.notify_failure = Some(e);
        }
    }
}

/// Whether a series still says what a line about it said: its rule, its
/// end, its next time and whether it runs (not its text or counts).
fn same_as_shown(a: &crate::store::Series, b: &crate::store::Series) -> bool {
    (&a.rule, a.until_at, a.remaining, a.next_due_at, &a.status)
        == (&b.rule, b.until_at, b.remaining, b.next_due_at, &b.status)
}

/// Add text streamed at `offset` of a reply to what is shown of it: only the
/// part not shown yet (a reload from the database, which saves the reply as
/// it streams, may already have it). False if text before `offset` is
/// missing, leaving `shown` as it was.
pub(crate) fn append_streamed(shown: &mut String, offset: usize, text: &str) -> bool {
    let have = shown.len();
    if have < offset {
        return false;
    }
    if have < offset + text.len() {
        match text.get(have - offset..) {
            Some(rest) => shown.push_str(rest),
            None => return false,
        }
    }
    true
}

/// A line about the state of conversation `c` (`track`: `(c, seen)`, the
/// state seen since the line was written, which may be just before the
/// change it reports is read): stale once that state has been seen and
/// then no longer `holds` in the conversation shown.
fn gone_once_seen(track: &mut Option<(i64, bool)>, current: Option<i64>, holds: bool) -> bool {
    match *track {
        Some((c, seen)) if Some(c) == current => {
            if holds {
                *track = Some((c, true));
                false
            } else {
                seen
            }
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::append_streamed;

    #[test]
    fn streamed_text_is_added_once_whatever_was_read_from_the_database() {
        let reply = "Let me think about that, über-carefully.";
        // Every split of the reply into what was shown (read from the
        // database) and a delta at every offset gives the reply once.
        for shown_len in (0..=reply.len()).filter(|&i| reply.is_char_boundary(i)) {
            for offset in (0..=reply.len()).filter(|&i| reply.is_char_boundary(i)) {
                let mut shown = reply[..shown_len].to_string();
                let ok = append_streamed(&mut shown, offset, &reply[offset..]);
                if offset <= shown_len {
                    assert!(ok);
                    assert_eq!(shown, reply, "shown {shown_len}, offset {offset}");
                } else {
                    assert!(!ok, "a gap is reported");
                    assert_eq!(shown, &reply[..shown_len], "and nothing is added");
                }
            }
        }
    }
}
