//! The app's side of the writer thread: running a write with what follows
//! it, applying results that came after their key, and keeping each
//! conversation's draft in memory until the database has it.

use std::collections::HashMap;
use std::time::Duration;

use super::app::App;
use super::scheduled::{PaneAction, ScheduledPane, WAITING};
use super::views::Outcome;
use super::writer::{Outcome as WriteOutcome, typed};
use crate::engine::Engine;
use crate::store::Draft;

/// How long a write waits before the status line says so (a write that
/// takes longer than a frame is rare; one that takes this long waits for a lock).
pub const WAIT_NOTICE_MS: i64 = 300;

/// How soon a draft the database refused is tried again.
const DRAFT_RETRY_MS: i64 = 1_000;

/// A draft handed to the writer and not known to be saved yet.
#[derive(Clone, Debug)]
pub struct UnsavedDraft {
    /// Which save this is: only the newest one's result counts.
    pub seq: u64,
    pub draft: Draft,
    /// Its save failed; it is tried again at `App::drafts.retry_at`.
    pub failed: bool,
}

/// Drafts on their way to the database, newest per conversation. Until the
/// database has one, this is what that conversation's draft is: opening
/// the conversation again reads it from here.
#[derive(Default)]
pub struct PendingDrafts {
    pub by_conv: HashMap<i64, UnsavedDraft>,
    /// Each conversation's saved draft text as this process last read or
    /// wrote it: an empty composer here does not remove a draft another
    /// tock saved since.
    known: HashMap<i64, String>,
    seq: u64,
    pub retry_at: Option<i64>,
}

impl PendingDrafts {
    fn next(&mut self, conv: i64, draft: Draft) -> u64 {
        self.seq += 1;
        self.by_conv.insert(
            conv,
            UnsavedDraft {
                seq: self.seq,
                draft,
                failed: false,
            },
        );
        self.seq
    }

    /// The saved draft of `conv` as this process last read or wrote it.
    pub fn known(&self, conv: i64) -> Option<&str> {
        self.known.get(&conv).map(String::as_str)
    }

    /// The draft of `conv` not saved yet, if any.
    pub fn get(&self, conv: i64) -> Option<&Draft> {
        self.by_conv.get(&conv).map(|u| &u.draft)
    }

    /// The saved draft of `conv` is `text`, as this process has just
    /// written it another way (an item taken back into it): a save over it
    /// is no change by another tock.
    pub fn stored(&mut self, conv: i64, text: String) {
        self.known.insert(conv, text);
    }

    fn is_newest(&self, conv: i64, seq: u64) -> bool {
        self.by_conv.get(&conv).is_some_and(|u| u.seq == seq)
    }

    fn saved(&mut self, conv: i64, seq: u64) {
        if self.is_newest(conv, seq)
            && let Some(u) = self.by_conv.remove(&conv)
        {
            self.known.insert(conv, u.draft.text);
        }
    }
}

impl App {
    /// Run a database write on the writer thread; `then` gets its result at
    /// once when the write is done within a frame, else when it arrives
    /// (after [`WAIT_NOTICE_MS`] the status line says it is waiting).
    pub(super) fn write<T: Send + 'static>(
        &mut self,
        job: impl FnOnce(&Engine) -> T + Send + 'static,
        then: impl FnOnce(&mut App, T) + 'static,
    ) {
        let writer = self.model.writer.clone();
        match writer.run(self.engine(), job) {
            WriteOutcome::Ready(t) => then(self, t),
            WriteOutcome::Pending(ticket) => {
                writer.then(ticket, typed(then));
                self.writes_waiting_since.get_or_insert(self.now());
            }
        }
    }

    /// A write nobody waits to hear about.
    pub(super) fn write_quietly(&mut self, job: impl FnOnce(&Engine) + Send + 'static) {
        self.write(job, |_, ()| {});
    }

    /// Stop the reply streaming in `conv`, if one is: the stream is told at
    /// once (its turn pauses the queue before it ends, so nothing queued
    /// slips out first); the pause is written here too, on the writer
    /// thread, for a turn already past its reading.
    pub(super) fn stop_reply(&mut self, conv: i64) -> bool {
        // Still "sending…": the model has not taken it, so it comes back.
        let unsent = self
            .model
            .items
            .iter()
            .find(|i| {
                i.conversation_id == Some(conv)
                    && i.status == crate::store::Status::Sending
                    && i.held_when_stopped_unsent()
            })
            .map(|i| i.id);
        if !self.engine().interrupt(conv) {
            return false;
        }
        self.take_back_after_stop = unsent;
        self.write_quietly(move |e| e.pause_after_stop(conv));
        true
    }

    /// The message stopped before it was sent, once the engine holds it
    /// (paused, in its conversation): back into the composer if that is
    /// empty and shows its conversation; otherwise it stays held, where
    /// the strip shows it.
    pub(super) fn take_back_stopped_message(&mut self) {
        let Some(id) = self.take_back_after_stop else {
            return;
        };
        let Some(item) = self.model.items.iter().find(|i| i.id == id) else {
            self.take_back_after_stop = None;
            return;
        };
        if item.status == crate::store::Status::Sending {
            return;
        }
        self.take_back_after_stop = None;
        if item.status == crate::store::Status::Pending
            && item.conversation_id == self.model.current
            && self.composer.is_blank()
        {
            let seen = item.updated_at;
            self.apply_one(super::views::Intent::PullBack {
                id,
                seen,
                stopped: true,
            });
        }
    }

    /// Esc or Ctrl+C while a regeneration waits to start (queued, or
    /// retrying): call it off, so the earlier reply is the answer again.
    /// False if none waits.
    pub(super) fn call_off_regeneration(&mut self) -> bool {
        let Some(conv) = self.model.current else {
            return false;
        };
        if self.model.waiting_regeneration().is_none() || self.model.is_busy() {
            return false;
        }
        self.write(
            move |e| e.cancel_regeneration(conv),
            |app, r| match r {
                Ok(true) => {
                    app.info_until_key("regeneration called off; the earlier reply is kept")
                }
                Ok(false) => app.info_until_key("the new reply has already started"),
                Err(e) => app.error(e),
            },
        );
        true
    }

    /// Apply the results of writes that finished after their key returned.
    pub fn collect_writes(&mut self) {
        for (later, result) in self.model.writer.take_ready() {
            later(self, result);
        }
        self.writes_settled();
    }

    /// Wait (at most `limit`) for every write sent so far, and apply their results.
    pub fn wait_writes(&mut self, limit: Duration) {
        for (later, result) in self.model.writer.wait_idle(limit) {
            later(self, result);
        }
        self.writes_settled();
    }

    /// No write waits any more: the notice that one did goes.
    fn writes_settled(&mut self) {
        if self.model.writer.busy() {
            return;
        }
        self.writes_waiting_since = None;
        if self.status.as_ref().is_some_and(|s| s.text == WAITING) {
            self.status = None;
        }
    }

    /// When the "waiting for the database" notice is due, if a write waits.
    pub(super) fn wait_notice_at(&self) -> Option<i64> {
        let since = match self.writes_waiting_since {
            Some(t) => t,
            // One of F2's: the tick that sees it starts the count.
            None if self.model.writer.busy() => self.now(),
            None => return None,
        };
        let shown = self.status.as_ref().is_some_and(|s| s.text == WAITING);
        (!shown).then_some(since + WAIT_NOTICE_MS)
    }

    /// A tick: say that a write waits, once it has waited long enough to notice.
    pub(super) fn notice_waiting_writes(&mut self) {
        if !self.model.writer.busy() {
            self.writes_waiting_since = None;
            return;
        }
        let now = self.now();
        let since = *self.writes_waiting_since.get_or_insert(now);
        if now - since >= WAIT_NOTICE_MS {
            self.spool_sends_in_flight();
            if self.status.as_ref().is_none_or(|s| s.text != WAITING) {
                self.info(WAITING);
            }
        }
    }

    /// Sends waiting long enough to be noticed are written to a file too,
    /// so a kill while they wait does not lose them (`tui::unsent`).
    fn spool_sends_in_flight(&mut self) {
        let db = self.engine().store().path().to_path_buf();
        for (seq, (conv, draft, spooled)) in self.sends_in_flight.iter_mut() {
            if *spooled {
                continue;
            }
            match super::unsent::spool(&db, *seq, *conv, draft) {
                Ok(()) => *spooled = true,
                Err(e) => tracing::warn!("keeping a waiting send in a file: {e}"),
            }
        }
    }

    /// A send's write is done (written, or refused and given back).
    pub(super) fn send_done(&mut self, seq: u64) {
        if let Some((_, _, true)) = self.sends_in_flight.remove(&seq) {
            super::unsent::done(self.engine().store().path(), seq);
        }
    }

    /// What a tock killed while its sends waited for the database left in
    /// files: back into each conversation's draft (after what is there), so
    /// nothing is sent twice if a write did land. Before the first frame.
    pub(super) fn restore_unsent(&mut self) {
        let db = self.engine().store().path().to_path_buf();
        let mut back = 0;
        for (file, conv, draft) in super::unsent::left_behind(&db) {
            let store = self.engine().store();
            if store.conversation(conv).ok().flatten().is_none() {
                let _ = std::fs::remove_file(&file);
                continue;
            }
            let merged = after(&store.draft(conv).unwrap_or_default(), &draft);
            match self.engine().save_draft(conv, &merged) {
                Ok(()) => {
                    let _ = std::fs::remove_file(&file);
                    back += 1;
                }
                // Kept for the next start.
                Err(e) => tracing::warn!("restoring an unsent message: {e:#}"),
            }
        }
        if back > 0 {
            self.info(format!(
                "{back} message(s) sent while the database was held, by a tock that stopped, may not have gone out: back in their draft"
            ));
        }
    }

    /// Writes sent and not finished (or finished and not applied).
    pub fn writes_pending(&self) -> bool {
        self.model.writer.busy()
    }

    /// What follows a write of F2's that finished after its key: done on
    /// the pane if it is still open (else on a stand-in, for its report).
    pub(super) fn after_pane_write(
        &mut self,
        f: impl FnOnce(&mut ScheduledPane, &Engine) -> PaneAction,
    ) {
        let engine = self.engine().clone();
        let at = self
            .views
            .iter()
            .rposition(|v| v.kind() == super::views::ViewKind::Scheduled);
        let action = match at.and_then(|i| self.views[i].as_scheduled()) {
            Some(pane) => f(pane, &engine),
            None => f(&mut ScheduledPane::new(), &engine),
        };
        let (intent, outcome) = action.into_intent();
        if outcome == Outcome::Done
            && let Some(i) = at
        {
            self.views.remove(i);
        }
        if let Some(i) = intent {
            self.apply_one(i);
        }
    }

    // ----- drafts --------------------------------------------------------------

    /// Save the composer's draft now, if it changed (a switch, a quit, or
    /// typing stopped). The save runs on the writer thread, so it waits for
    /// a database busy in another process without holding up the keyboard;
    /// until it is saved, the draft is kept here.
    pub fn save_draft(&mut self) {
        let Some(conv) = self.model.current else {
            return;
        };
        if self.composer.unsaved_since.take().is_none() {
            return;
        }
        let draft = self.composer.draft();
        self.queue_draft(conv, draft);
    }

    pub(super) fn queue_draft(&mut self, conv: i64, draft: Draft) {
        let seq = self.drafts.next(conv, draft.clone());
        let known = self.drafts.known.get(&conv).cloned().unwrap_or_default();
        let sent = draft.text.clone();
        self.write(
            move |e| e.save_draft_over(conv, &draft, &known),
            move |app, r| app.draft_saved(conv, seq, &sent, r),
        );
    }

    fn draft_saved(&mut self, conv: i64, seq: u64, sent: &str, r: anyhow::Result<Option<Draft>>) {
        match r {
            Ok(None) => self.drafts.saved(conv, seq),
            // Saved over a draft another tock saved since: merged, and the
            // merge shown here if nothing was typed since (else the next
            // save merges again, ours in place of what was saved now).
            Ok(Some(merged)) if !sent.is_empty() => {
                if self.drafts.is_newest(conv, seq) {
                    self.drafts.by_conv.remove(&conv);
                }
                let shown = self.model.current == Some(conv);
                if shown && self.composer.text() == sent {
                    let history = self.model.sent_texts();
                    self.composer.load(&merged, history);
                    self.drafts.known.insert(conv, merged.text.clone());
                } else {
                    self.drafts.known.insert(conv, sent.to_string());
                }
                if shown {
                    self.info(
                        "another tock changed this draft meanwhile: its text is kept with yours",
                    );
                }
            }
            // Emptied here, while another tock had saved a draft there: it
            // is kept, and shown here if nothing was typed since.
            Ok(Some(theirs)) => {
                if self.drafts.is_newest(conv, seq) {
                    self.drafts.by_conv.remove(&conv);
                }
                self.drafts.known.insert(conv, theirs.text.clone());
                if self.model.current == Some(conv) && self.composer.is_blank() {
                    let history = self.model.sent_texts();
                    self.composer.load(&theirs, history);
                    self.info("the draft another tock saved here is back in the composer");
                }
            }
            Err(e) => {
                if let Some(u) = self.drafts.by_conv.get_mut(&conv).filter(|u| u.seq == seq) {
                    u.failed = true;
                    self.drafts.retry_at = Some(self.now() + DRAFT_RETRY_MS);
                }
                // A busy database is no news: the draft is kept and tried again.
                if !crate::store::is_busy(&e) {
                    self.error(format!(
                        "saving the draft: {}",
                        crate::store::error_line(&e)
                    ));
                }
            }
        }
    }

    /// Try again the drafts the database refused, when it is time.
    pub(super) fn retry_drafts_if_due(&mut self) {
        if self.drafts.retry_at.is_none_or(|t| t > self.now()) {
            return;
        }
        self.drafts.retry_at = None;
        let failed: Vec<(i64, Draft)> = self
            .drafts
            .by_conv
            .iter()
            .filter(|(_, u)| u.failed)
            .map(|(c, u)| (*c, u.draft.clone()))
            .collect();
        for (conv, draft) in failed {
            self.queue_draft(conv, draft);
        }
    }

    /// At exit: the drafts the database has not taken, whole, for the terminal.
    pub fn unsaved_drafts_lines(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (conv, u) in &self.drafts.by_conv {
            if u.draft.text.trim().is_empty() {
                continue;
            }
            let title = self
                .model
                .convs
                .iter()
                .find(|c| c.id == *conv)
                .map(|c| c.display_title())
                .unwrap_or_else(|| format!("#{conv}"));
            out.push(format!(
                "tock: your draft in \"{}\" could not be saved; here it is:\n{}",
                crate::sanitize::sanitize_line(&title),
                crate::sanitize::sanitize(&u.draft.text)
            ));
        }
        out
    }

    /// Another tock changed this conversation's saved draft (typed in it,
    /// merged it, sent or cleared it): the composer takes it, unless
    /// something typed here is not saved yet (the next save merges then).
    /// An idle composer kept its older text, sent it, and its next save
    /// brought back what the other had sent.
    pub(super) fn take_draft_saved_elsewhere(&mut self) {
        let Some(conv) = self.model.current else {
            return;
        };
        let busy_here = self.composer.unsaved_since.is_some()
            || self.composer.edit.is_some()
            || self.composer.history_pos.is_some()
            || self.drafts.get(conv).is_some();
        if busy_here {
            return;
        }
        let Ok(stored) = self.engine().reader().draft(conv) else {
            return;
        };
        let known = self.drafts.known.get(&conv).cloned().unwrap_or_default();
        if stored.text == known {
            return;
        }
        self.drafts.known.insert(conv, stored.text.clone());
        // Another tock's edit of a message (↑) stays there: taken here it
        // would resend the old text over what that tock sends meanwhile.
        // What its send leaves (the draft from before the edit) comes next.
        if stored.edit_of.is_some() {
            return;
        }
        if stored.text != self.composer.text() {
            let history = self.model.sent_texts();
            self.composer.load(&stored, history);
        }
    }

    /// The draft of `conv`: the one on its way to the database if there is
    /// one, else the saved one.
    pub(super) fn draft_of(&mut self, conv: i64) -> Draft {
        match self.drafts.get(conv) {
            Some(d) => d.clone(),
            None => {
                let d = self.engine().reader().draft(conv).unwrap_or_default();
                self.drafts.known.insert(conv, d.text.clone());
                d
            }
        }
    }

    /// A send from the composer is on its way: until it is written (and
    /// clears or sets the saved draft with it), `draft` is this
    /// conversation's draft. The returned number goes to [`Self::sent`].
    pub(super) fn sending(&mut self, conv: i64, draft: Draft) -> u64 {
        self.drafts.next(conv, draft)
    }

    /// A send was written (or refused): the draft kept for it is done with.
    pub(super) fn sent(&mut self, conv: i64, seq: u64) {
        self.drafts.saved(conv, seq);
    }

    /// A send was refused: give what was sent back, so nothing typed is
    /// lost. It goes back into the composer if that still holds what the
    /// send left there (`left`); else it is put after what was typed since.
    /// Returns where it went, for the error line.
    pub(super) fn give_back(
        &mut self,
        conv: i64,
        seq: u64,
        sent: Draft,
        left: &Draft,
    ) -> &'static str {
        let newest = self.drafts.is_newest(conv, seq);
        self.sent(conv, seq);
        if self.model.current == Some(conv) {
            let now = self.now();
            if self.composer.draft() == *left {
                let history = std::mem::take(&mut self.composer.history);
                self.composer.load(&sent, history);
            } else {
                let merged = after(&self.composer.draft(), &sent);
                let history = std::mem::take(&mut self.composer.history);
                self.composer.load(&merged, history);
            }
            self.composer.unsaved_since = Some(now);
            self.save_draft();
            return "your text is back in the composer";
        }
        let draft = if newest {
            sent
        } else {
            after(&self.draft_of(conv), &sent)
        };
        self.queue_draft(conv, draft);
        "your text is back in that conversation's draft"
    }
}

/// `newer` with `back` put after it (text and attachments).
pub(super) fn after(newer: &Draft, back: &Draft) -> Draft {
    let parts = |d: &Draft| -> Vec<serde_json::Value> {
        d.parts_json
            .as_deref()
            .and_then(|j| serde_json::from_str(j).ok())
            .unwrap_or_default()
    };
    let mut all = parts(newer);
    all.extend(parts(back));
    let text = match (newer.text.trim().is_empty(), back.text.trim().is_empty()) {
        (true, _) => back.text.clone(),
        (false, true) => newer.text.clone(),
        (false, false) => format!("{}\n\n{}", newer.text, back.text),
    };
    Draft {
        text,
        edit_of: newer.edit_of.or(back.edit_of),
        stash: newer.stash.clone().or_else(|| back.stash.clone()),
        parts_json: (!all.is_empty())
            .then(|| serde_json::to_string(&all).ok())
            .flatten(),
    }
}
