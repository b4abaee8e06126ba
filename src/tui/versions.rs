//! Browsing the versions of a message (‹2/3›): the replies a regeneration
//! put aside, the texts an edit replaced. Only one version is drawn; keys
//! step through the others. Where the conversation can go on from another
//! reply (the last one), stepping to it makes it the one the model sees;
//! elsewhere a version is only looked at.

use super::app::App;

impl App {
    /// The message whose versions the keys step through: the newest one
    /// with versions, at or above the foot of the window and in it.
    fn versioned_message(&self) -> Option<i64> {
        // Keys pressed in a row keep to the message they started on.
        if let Some(first) = self.model.stepping {
            let on_screen = self.model.entries.iter().find(|e| {
                self.model
                    .alternates
                    .of(e.msg.id)
                    .is_some_and(|g| g.versions.first() == Some(&first))
            });
            if let Some(e) = on_screen.filter(|e| self.message_on_screen(e.msg.id)) {
                return Some(e.msg.id);
            }
        }
        let bottom = self.message_at_bottom()?;
        let at = self.model.entries.iter().position(|e| e.msg.id == bottom)?;
        // Only one in the window: stepping a reply scrolled away (a long
        // one streaming below it) changed what nobody could see.
        self.model.entries[..=at]
            .iter()
            .rev()
            .find(|e| e.version.is_some())
            .map(|e| e.msg.id)
            .filter(|id| self.message_on_screen(*id))
    }

    /// Step `by` versions (−1 older, +1 newer) on the message with versions nearest the foot of the window.
    pub(super) fn step_version(&mut self, by: isize) {
        let Some(id) = self.versioned_message() else {
            self.info_until_key(
                "no message on screen has other versions (Ctrl+R regenerates a reply)",
            );
            return;
        };
        let Some(group) = self.model.alternates.of(id).cloned() else {
            return;
        };
        let Some(at) = group.versions.iter().position(|v| *v == id) else {
            return;
        };
        let n = group.versions.len();
        let to = at as isize + by;
        if to < 0 || to >= n as isize {
            self.info_until_key(if by < 0 {
                format!("‹{}/{n}› is the first version", at + 1)
            } else {
                format!("‹{}/{n}› is the newest version", at + 1)
            });
            return;
        }
        let to = to as usize;
        let next = group.versions[to];
        let first = group.versions[0];
        self.model.stepping = Some(first);
        if group.can_choose {
            self.write(
                move |e| e.show_alternate(next),
                move |app, r| match r {
                    Ok(()) => {
                        app.model.browsing.remove(&first);
                        app.model.reload_messages();
                        app.info_until_key(format!(
                            "‹{}/{n}›: the conversation goes on from this reply",
                            to + 1
                        ));
                    }
                    Err(e) => app.error(format!("{e:#}")),
                },
            );
            return;
        }
        if group.shown == Some(to) {
            self.model.browsing.remove(&first);
        } else {
            self.model.browsing.insert(first, next);
        }
        self.model.reload_messages();
        match group.shown {
            Some(s) if s != to => self.info(format!(
                "‹{}/{n}›: an earlier version, only looked at (the conversation went on from ‹{}/{n}›)",
                to + 1,
                s + 1
            )),
            _ => self.info_until_key(format!("‹{}/{n}›", to + 1)),
        }
    }
}
