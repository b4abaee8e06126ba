//! Applying the intents views return: each one through the engine, with a
//! one-line status for the user.

use super::app::{App, Focus};
use super::composer::Composer;
use super::model::local;
use super::views::Intent;
use crate::engine::ItemAction;
use crate::when::{self};

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
            Intent::Info(s) => self.info(s),
            Intent::Error(s) => self.error(s),
            Intent::Item { id, seen, action } => {
                let done = match &action {
                    ItemAction::Cancel => "canceled".to_string(),
                    ItemAction::SendNow => "sending as soon as the conversation is free".into(),
                    ItemAction::Retry => "retrying".into(),
                    ItemAction::Reschedule(at) => format!(
                        "rescheduled: {}",
                        when::preview(
                            chrono::DateTime::from_timestamp_millis(*at).unwrap_or_default(),
                            &local(now)
                        )
                    ),
                    ItemAction::Edit(_) => "edited".into(),
                };
                match self.engine().act_on_item(id, seen, action) {
                    Ok(()) => self.info(done),
                    Err(e) => self.error(e),
                }
            }
            Intent::PullBack { id, seen } => {
                if !self.composer.is_blank() {
                    self.error("the composer holds a draft; send or clear it first (the item stays queued)");
                    return;
                }
                self.save_draft();
                match self.engine().pull_back(id, seen) {
                    Ok((conv, draft)) => {
                        if Some(conv) == self.model.current {
                            self.composer.load(&draft, self.model.sent_texts());
                        }
                        self.focus = Focus::Composer;
                        self.info("moved back into the composer");
                    }
                    Err(e) => self.error(e),
                }
            }
            Intent::ResumeQueue => {
                if let Some(c) = self.model.current {
                    match self.engine().resume_queue(c) {
                        Ok(true) => self.info("queue resumed"),
                        Ok(false) => self.info("the queue is not paused"),
                        Err(e) => self.error(e),
                    }
                }
            }
            Intent::Open(id) => {
                if self.model.convs.iter().any(|c| c.id == id) {
                    self.open(id);
                } else {
                    self.error("that conversation no longer exists");
                }
            }
            Intent::NewConversation => self.new_conversation(None),
            Intent::Rename { id, title } => match self.engine().rename_conversation(id, &title) {
                Ok(()) => {
                    self.model.reload_convs();
                    self.update_title();
                    self.info("renamed");
                }
                Err(e) => self.error(e),
            },
            Intent::Delete(id) => match self.engine().delete_conversation(id) {
                Ok(()) => {
                    self.model.reload_convs();
                    self.model.reload_summaries();
                    if self.model.current == Some(id) {
                        self.model.current = None;
                        self.composer = Composer::default();
                        self.open_other_or_new();
                    }
                    self.info("conversation deleted");
                    self.focus = Focus::Composer;
                }
                Err(e) => self.error(format!("{e:#}")),
            },
            Intent::Answer { id, approve } => {
                match self.engine().answer_approval(id, approve) {
                    Ok(()) => self.info(if approve { "approved" } else { "denied" }),
                    Err(e) => self.error(e),
                }
                self.model.reload_messages();
                self.model.reload_items();
                self.model.reload_summaries();
                self.sync_views();
            }
            Intent::ScheduleComposer(due) => {
                let text = self.composer.text();
                self.schedule(text.trim(), due);
            }
            Intent::Filter(s) => {
                self.sidebar.filter = s;
                self.sidebar.selected = self.sidebar.visible(&self.model).first().map(|c| c.id);
            }
            Intent::OpenFiltered => {
                if let Some(id) = self.sidebar.visible(&self.model).first().map(|c| c.id) {
                    self.open(id);
                    self.focus = Focus::Composer;
                }
            }
            Intent::Push(v) => self.views.push(v),
            Intent::Type(key) => {
                self.focus = Focus::Composer;
                self.composer.input(key, now);
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
        match self.engine().create_conversation(title, "user") {
            Ok(id) => {
                self.model.reload_convs();
                self.sidebar.filter.clear();
                self.open(id);
                self.focus = Focus::Composer;
            }
            Err(e) => self.error(format!("{e:#}")),
        }
    }

    // ----- sending -------------------------------------------------------------
}
