//! The views of the TUI. Each overlay (F2, the time picker, prompts,
//! confirmations, help, notifications, the approval card) is a [`View`] kept
//! on the app's view stack: it handles the keys it is given and says what it
//! did ([`Outcome`]); anything that changes the database or the rest of the
//! screen it asks for as an [`Intent`], which the app applies. The panes of
//! the main screen (composer, pending strip, sidebar) follow the same shape.

pub mod approval;
pub mod call;
pub mod confirm;
pub mod help;
pub mod model_picker;
pub mod notices;
pub mod prompt;
pub mod query_popup;
pub mod search;
pub mod sidebar;
pub mod strip;
pub mod tools;

use crate::tui::shown_zone::ShownZone;
use chrono::{DateTime, TimeZone};
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;

use super::keymap::Keymap;
use super::model::Model;
use crate::engine::ItemAction;
use crate::when;

/// What a view did with a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Not for this view: the app passes it on (or drops it, under a modal view).
    Ignored,
    /// Handled; the view stays.
    Consumed,
    /// Handled, and the view is finished: the app takes it off the stack.
    Done,
    /// The view is finished without using the key: the app takes it off
    /// the stack and passes the key on (a character typed at a popup that
    /// only shows something goes to the composer, not nowhere).
    Dismissed,
}

/// A key that types a character (no Ctrl or Alt held): text, where a
/// view's letters are its commands or a question's answers.
pub fn is_typing(key: &KeyEvent) -> bool {
    use ratatui::crossterm::event::{KeyCode, KeyModifiers};
    matches!(key.code, KeyCode::Char(_))
        && !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
}

/// How far a list's keys move its choice: a row up or down, or ten (the
/// search and the model picker move alike).
pub fn list_step(action: Option<super::keymap::Action>) -> Option<isize> {
    use super::keymap::Action;
    match action? {
        Action::Up => Some(-1),
        Action::Down => Some(1),
        Action::PageUpList => Some(-10),
        Action::PageDownList => Some(10),
        _ => None,
    }
}

/// Where the choice in a list of `len` rows goes from row `at` by `step`,
/// kept within the list.
pub fn stepped(at: usize, len: usize, step: isize) -> usize {
    at.saturating_add_signed(step).min(len.saturating_sub(1))
}

/// How a popup that only shows something (help, notifications) answers a
/// key it has no use for: Esc, Enter, a function key and `?` (which would
/// open help again) close it; any other key closes it and goes on.
pub fn dismiss(key: &KeyEvent) -> Outcome {
    use ratatui::crossterm::event::KeyCode;
    match key.code {
        KeyCode::Esc | KeyCode::Enter | KeyCode::F(_) | KeyCode::Char('?') => Outcome::Done,
        _ => Outcome::Dismissed,
    }
}

/// A change a view asks the app to make.
pub enum Intent {
    /// One line for the status bar.
    Info(String),
    Error(String),
    /// An error about the key just pressed ("choose first"): gone with the next key.
    KeyError(String),
    /// Act on an item as it was shown (`seen` = its `updated_at` then).
    Item {
        id: i64,
        seen: i64,
        action: ItemAction,
    },
    /// Text that could not be saved where it was typed: it goes to the
    /// composer, and `error` says why.
    KeepInComposer {
        text: String,
        error: String,
    },
    /// Cancel everything queued in this conversation.
    CancelQueued(i64),
    /// Take an item back into the composer.
    PullBack {
        id: i64,
        seen: i64,
        /// Because the user stopped it before it was sent (not a key of the strip).
        stopped: bool,
    },
    ResumeQueue,
    /// Show this conversation.
    Open(i64),
    /// Show this conversation at this message (a search result).
    OpenAt {
        conversation: i64,
        message: i64,
    },
    NewConversation,
    Rename {
        id: i64,
        title: String,
    },
    Delete(i64),
    /// Answer the approval shown.
    Answer {
        id: i64,
        approve: bool,
    },
    /// Send the composer text at this instant (the time picker's choice).
    ScheduleComposer(i64),
    /// Live filter of the conversation list.
    Filter(String),
    /// Open the first conversation the filter shows.
    OpenFiltered,
    /// Put a view on the stack.
    Push(Box<dyn View>),
    /// Text typed while a non-modal view had focus, for the composer.
    Type(KeyEvent),
    /// Enter in the composer while a non-modal view had focus.
    Submit,
    Focus(super::app::Focus),
    /// Make this the conversation's model, as `/model NAME` does.
    ChooseModel(String),
}

impl Intent {
    /// Changes something at once (sends, takes back, deletes, opens), as
    /// opposed to asking first, saying something or moving the keys.
    pub fn acts_at_once(&self) -> bool {
        !matches!(
            self,
            Intent::Info(_)
                | Intent::Error(_)
                | Intent::KeyError(_)
                | Intent::Push(_)
                | Intent::Focus(_)
                | Intent::Filter(_)
        )
    }
}

/// What a view gets with each key.
pub struct Cx<'a> {
    pub model: &'a Model,
    pub keys: &'a Keymap,
    pub now: DateTime<ShownZone>,
    pub now_ms: i64,
    /// Nothing but spaces typed in the composer (letters may then be choices
    /// on a card).
    pub composer_empty: bool,
    /// The composer holds a slash command (`/tools`, `/later 10m …`).
    pub composer_command: bool,
    /// The composer holds an edit of a message sent (Enter resends it).
    pub composer_editing: bool,
    pub intents: Vec<Intent>,
}

impl Cx<'_> {
    pub fn push(&mut self, i: Intent) {
        self.intents.push(i);
    }
}

/// What a view gets to draw itself.
pub struct RenderCx<'a> {
    pub model: &'a Model,
    pub keys: &'a Keymap,
    pub now: DateTime<ShownZone>,
    pub now_ms: i64,
    /// The terminal has reported a key only the keyboard protocol can (Shift+Enter).
    pub enhanced_keys: bool,
    /// Where the conversation is drawn on the main screen (cards sit at its foot).
    pub chat: Rect,
    /// Nothing but spaces typed in the composer.
    pub composer_empty: bool,
    /// The composer holds an edit of a message sent.
    pub composer_editing: bool,
    /// The composer holds a slash command (Enter runs it).
    pub composer_command: bool,
}

pub trait View {
    fn handle_key(&mut self, key: KeyEvent, cx: &mut Cx<'_>) -> Outcome;

    fn handle_paste(&mut self, _text: &str, _cx: &mut Cx<'_>) -> Outcome {
        Outcome::Ignored
    }

    /// Draw over `area` (the whole screen; the view places itself in it).
    fn render(&self, area: Rect, buf: &mut Buffer, cx: &RenderCx<'_>);

    /// The database changed: views that show rows reload them.
    fn refresh(&mut self, _model: &Model) {}

    /// A modal view takes every key; a non-modal one lets the ones it ignores through.
    fn is_modal(&self) -> bool {
        true
    }

    /// What this view is, for tests and for the app to find it on the stack.
    fn kind(&self) -> ViewKind;

    /// Opened to be typed into at once (the list's filter): a quick key
    /// after the letter that opened it is meant for it, not a word meant
    /// for the composer.
    fn typed_into_at_once(&self) -> bool {
        false
    }

    /// F2 itself, for a write of its that finished after its key returned.
    fn as_scheduled(&mut self) -> Option<&mut super::scheduled::ScheduledPane> {
        None
    }

    /// The next instant (ms) this view's content changes with time, if any.
    fn next_change(&self, _now_ms: i64) -> Option<i64> {
        None
    }

    /// A tick came (one asked for by [`View::next_change`], or another's).
    fn on_tick(&mut self, _model: &Model) {}
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewKind {
    Scheduled,
    Picker,
    Prompt,
    Confirm,
    Help,
    Notices,
    Approval,
    Search,
    Tools,
    /// A tool call's arguments in full (from the approval card).
    Call,
    /// `/status`: the dispatcher, the outbox and the servers.
    Status,
    /// `/model` with no name: choose this conversation's model.
    ModelPicker,
}

const SECOND: i64 = 1_000;
const MINUTE: i64 = 60 * SECOND;
const HOUR: i64 = 60 * MINUTE;
const DAY: i64 = 24 * HOUR;

/// `t` rounded down to a whole `unit` (a second, a minute) of the wall clock.
fn floor_to(t: i64, unit: i64) -> i64 {
    t.saturating_sub(t.rem_euclid(unit))
}

/// The instant a countdown to `due` is computed for when drawn at `now`.
///
/// An hour or more ahead, labels show minutes (`in 3h 5m`) or hours
/// (`in 2d 4h`): they are computed for the last whole minute of the wall
/// clock, so the minutes read are those from the clock's minute to the due
/// minute (`Wed 05:22 (in 8h 10m)` while the clock shows 21:12), the same
/// whatever second the item is due at. Every such label on screen changes at
/// the same whole minutes, where the engine's clock check also runs, so an
/// idle screen of them redraws once a minute in the same wake-up (not at a
/// second of its own per item).
///
/// Under an hour, labels show seconds and are computed for the last whole
/// second: every countdown on screen steps at the same instants, and one
/// redraw a second serves them all. A label so reads "now" up to a second
/// before `due`; once `due` has come, the instant is `now` itself, so a label
/// never reads "in …" after its time.
pub fn label_at(due: i64, now: i64) -> i64 {
    if due <= now {
        return now;
    }
    let minute = floor_to(now, MINUTE);
    if due.saturating_sub(minute) >= HOUR {
        minute
    } else {
        floor_to(now, SECOND)
    }
}

/// How long a message is sent for before its bubble says how long it has
/// waited: a provider that takes the request and does not answer is
/// otherwise only "sending…" until the stream times out (two minutes).
pub const WAITED_SHOWN_AFTER: i64 = 3 * SECOND;

/// How long a send that began at `since` has waited at `now`, as its bubble
/// shows it: nothing for the first [`WAITED_SHOWN_AFTER`], then `12s`,
/// `2m 05s`, `1h 02m`. A start ahead of `now` (another machine's clock) is now.
pub fn waited(since: i64, now: i64) -> Option<String> {
    let ms = now.saturating_sub(since).max(0);
    if ms < WAITED_SHOWN_AFTER {
        return None;
    }
    let secs = ms / SECOND;
    Some(match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m {:02}s", secs / 60, secs % 60),
        _ => format!("{}h {:02}m", secs / 3600, secs % 3600 / 60),
    })
}

/// When [`waited`] for a send that began at `since` next changes, seen at
/// `now`: when it first shows, then at each whole second of the wait (each
/// minute once it shows hours).
pub fn waited_change(since: i64, now: i64) -> i64 {
    let ms = now.saturating_sub(since).max(0);
    if ms < WAITED_SHOWN_AFTER {
        return since.saturating_add(WAITED_SHOWN_AFTER);
    }
    let step = if ms >= HOUR { MINUTE } else { SECOND };
    since.saturating_add((ms / step + 1) * step)
}

/// How far ahead of its time `s` would send a message due at `due_at`
/// ("54m"), when that is more than a minute: then the strip and F2 ask
/// first (`s` is also the first letter of many a word typed in the wrong
/// place).
pub fn sent_early_by(due_at: Option<i64>, now: i64) -> Option<String> {
    let due = due_at.filter(|due| *due > now + 60_000)?;
    Some(
        crate::when::countdown(due, now)
            .trim_start_matches("in ")
            .to_string(),
    )
}

/// When the countdown to `due` next changes, seen at `now` (see
/// [`label_at`]): the next whole second while it shows seconds (below an
/// hour); above, the whole minute at which its minutes (below a day) or its
/// hours next drop; or `due` itself if sooner, since its item changes state
/// then and its label must not still show time to come.
pub fn label_change(due: i64, now: i64) -> Option<i64> {
    if due <= now {
        return None;
    }
    let at = label_at(due, now);
    let left = due.saturating_sub(at);
    // The unit the label shows, and the whole instants it is computed at.
    let (unit, step) = if left < HOUR {
        (SECOND, SECOND)
    } else if left < DAY {
        (MINUTE, MINUTE)
    } else {
        (HOUR, MINUTE)
    };
    // The label shows `left` in whole units; it drops at the first whole
    // step less than `units` whole units before `due`.
    let units = left.div_euclid(unit);
    let drop = floor_to(due.saturating_sub(units.saturating_mul(unit)), step).saturating_add(step);
    Some(drop.min(due))
}

/// The countdown to `due` drawn at `now`: `in 59m 12s`, `in 3h 5m`, `now`,
/// or once due `2m ago`; it steps with every other one (see [`label_at`]).
pub fn countdown(due: i64, now: i64) -> String {
    when::countdown(due, label_at(due, now))
}

/// `Mon 30 Nov 09:00, in 14h 11m`: [`when::preview`], its countdown as
/// [`countdown`] draws it.
pub fn preview<Tz: TimeZone>(due: i64, now: &DateTime<Tz>) -> String {
    let at = DateTime::from_timestamp_millis(due).unwrap_or_default();
    format!(
        "{}, {}",
        when::absolute(at, now),
        countdown(due, now.timestamp_millis())
    )
}

/// `ms` as a wall-clock time in `now`'s zone, and today's date there.
fn local_and_today<Tz: TimeZone>(
    ms: i64,
    now: &DateTime<Tz>,
) -> (chrono::NaiveDateTime, chrono::NaiveDate) {
    let at = DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .with_timezone(&now.timezone())
        .naive_local();
    (at, now.naive_local().date())
}

/// `due` in fewer words than [`when::absolute`], for where that does not
/// fit beside its countdown: the time alone today (`17:12`), with its
/// weekday within the week ahead (`Tue 09:00`), else with its date (`14 Dec
/// 09:00`, `5 Jan 2027 09:00`).
pub fn short_absolute<Tz: TimeZone>(due: i64, now: &DateTime<Tz>) -> String {
    use chrono::Datelike;
    let (due, today) = local_and_today(due, now);
    let days = (due.date() - today).num_days();
    let format = if days == 0 {
        "%H:%M"
    } else if (1..7).contains(&days) {
        "%a %H:%M"
    } else if due.date().year() == today.year() {
        "%-d %b %H:%M"
    } else {
        "%-d %b %Y %H:%M"
    };
    due.format(format).to_string()
}

/// A time past in few words, which never needs redrawing as time goes on
/// (an idle screen draws nothing, so "4s ago" stood for minutes): the time
/// alone today (`17:12`), the weekday within the week before (`Tue 09:00`),
/// else the date (`14 Nov`, `5 Jan 2025`): short, so that what follows it
/// in the sidebar (`· 1 pending`) fits.
pub fn short_past<Tz: TimeZone>(at: i64, now: &DateTime<Tz>) -> String {
    use chrono::Datelike;
    // Stored ahead of now (a clock that was ahead, set right since): it
    // happened by now, not hours or days from now.
    let at = when::happened(at, now.timestamp_millis());
    let (at, today) = local_and_today(at, now);
    let format = match (today - at.date()).num_days() {
        ..=0 => "%H:%M",
        1..7 => "%a %H:%M",
        _ if at.date().year() == today.year() => "%-d %b",
        _ => "%-d %b %Y",
    };
    at.format(format).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_shows_after_a_few_seconds_and_changes_when_its_label_does() {
        let since = 1_000_000_123;
        assert_eq!(waited(since, since + 2_999), None);
        assert_eq!(waited_change(since, since), since + 3_000);
        assert_eq!(waited(since, since + 3_000).as_deref(), Some("3s"));
        assert_eq!(waited_change(since, since + 3_000), since + 4_000);
        assert_eq!(waited(since, since + 59_999).as_deref(), Some("59s"));
        assert_eq!(waited(since, since + 75_500).as_deref(), Some("1m 15s"));
        assert_eq!(waited_change(since, since + 75_500), since + 76_000);
        assert_eq!(
            waited(since, since + HOUR + 5 * MINUTE).as_deref(),
            Some("1h 05m")
        );
        assert_eq!(
            waited_change(since, since + HOUR + 5 * MINUTE + 1),
            since + HOUR + 6 * MINUTE
        );
        // Begun on a clock that was ahead: no wait yet, and no tick before
        // the one at which it would show.
        assert_eq!(waited(since, since - 10_000), None);
        assert_eq!(waited_change(since, since - 10_000), since + 3_000);
    }

    #[test]
    fn a_time_past_is_told_without_a_count_that_goes_stale() {
        // Sun 6 Dec 2026 17:02 UTC.
        let now = DateTime::parse_from_rfc3339("2026-12-06T17:02:00+00:00").unwrap();
        let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().timestamp_millis();
        assert_eq!(short_past(at("2026-12-06T17:01:55+00:00"), &now), "17:01");
        assert_eq!(
            short_past(at("2026-12-05T23:30:00+00:00"), &now),
            "Sat 23:30"
        );
        assert_eq!(
            short_past(at("2026-12-01T09:00:00+00:00"), &now),
            "Tue 09:00"
        );
        assert_eq!(short_past(at("2026-11-14T09:00:00+00:00"), &now), "14 Nov");
        assert_eq!(
            short_past(at("2025-01-05T09:00:00+00:00"), &now),
            "5 Jan 2025"
        );
    }

    #[test]
    fn a_time_past_stored_ahead_of_the_clock_is_told_as_now() {
        // Sun 6 Dec 2026 17:02 UTC: written on a clock that was ahead, by
        // hours (later today) or by days (no date, it read as today's).
        let now = DateTime::parse_from_rfc3339("2026-12-06T17:02:00+00:00").unwrap();
        let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().timestamp_millis();
        assert_eq!(short_past(at("2026-12-06T20:15:00+00:00"), &now), "17:02");
        assert_eq!(short_past(at("2026-12-08T09:00:00+00:00"), &now), "17:02");
        assert_eq!(short_past(at("2027-01-05T09:00:00+00:00"), &now), "17:02");
    }

    #[test]
    fn a_short_time_says_the_date_only_where_it_is_not_today() {
        // Sun 6 Dec 2026 17:02 UTC.
        let now = DateTime::parse_from_rfc3339("2026-12-06T17:02:00+00:00").unwrap();
        let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().timestamp_millis();
        assert_eq!(
            short_absolute(at("2026-12-06T17:12:00+00:00"), &now),
            "17:12"
        );
        assert_eq!(
            short_absolute(at("2026-12-07T09:00:00+00:00"), &now),
            "Mon 09:00"
        );
        assert_eq!(
            short_absolute(at("2026-12-13T09:00:00+00:00"), &now),
            "13 Dec 09:00"
        );
        assert_eq!(
            short_absolute(at("2027-01-05T09:00:00+00:00"), &now),
            "5 Jan 2027 09:00"
        );
    }

    /// A whole second (and minute) of the wall clock.
    const T: i64 = 1_796_000_040_000;

    #[test]
    fn countdowns_due_at_different_offsets_change_at_the_same_whole_second() {
        for now in [T, T + 1, T + 499, T + 999] {
            let next: std::collections::BTreeSet<i64> = (0..20)
                .map(|i| T + 10_000 + 2_000 * i + 37 * i + 1)
                .filter_map(|due| label_change(due, now))
                .collect();
            assert_eq!(next.into_iter().collect::<Vec<_>>(), [T + 1_000], "{now}");
        }
    }

    #[test]
    fn the_due_instant_is_a_change_when_it_comes_before_the_next_second() {
        assert_eq!(label_change(T + 1_400, T + 1_100), Some(T + 1_400));
        assert_eq!(label_change(T + 2_000, T + 1_100), Some(T + 2_000));
        assert_eq!(label_change(T + 1_400, T + 1_400), None);
        // Before it the label reads at most "now", after it never "in …".
        assert_eq!(countdown(T + 1_400, T + 1_399), "now");
        assert_eq!(countdown(T + 1_400, T + 1_400), "now");
        assert_eq!(countdown(T + 1_400, T + 1_800), "now");
        assert_eq!(countdown(T + 1_400, T + 2_400), "1s ago");
    }

    #[test]
    fn a_label_is_the_same_from_one_change_to_the_next() {
        // Due times at odd offsets, seconds to days away: walk every change,
        // and check the label in between, and that each change changes it.
        for due in [
            T + 5_432,
            T + HOUR + 61_234,
            T + DAY + 3_599_999,
            T + 3 * DAY + 7 * HOUR + 41_017,
        ] {
            let mut now = T + 7;
            let mut changes = 0;
            while let Some(next) = label_change(due, now) {
                assert!(next > now, "{due} {now}");
                let label = countdown(due, now);
                for t in [now + 1, (now + next) / 2, next - 1] {
                    if t > now && t < next {
                        assert_eq!(countdown(due, t), label, "{due} {now} {t}");
                    }
                }
                // The due instant changes the item's state, not always its
                // label; every other change is at a whole second, and at a
                // whole minute while more than an hour is left.
                if next != due {
                    assert_eq!(next % SECOND, 0, "{due} {next}");
                    if due - next > HOUR {
                        assert_eq!(next % MINUTE, 0, "{due} {next}");
                    }
                    assert_ne!(countdown(due, next), label, "{due} {next}: nothing changed");
                }
                now = next;
                changes += 1;
                assert!(changes < 10_000, "{due}");
            }
            assert_eq!(now, due, "the last change is the due instant");
        }
    }

    #[test]
    fn minutes_and_hours_change_at_whole_minutes_of_the_clock() {
        // Due 3 h and 12.345 s ahead: "in 3h" until the clock's next minute.
        let due = T + 3 * HOUR + 12_345;
        assert_eq!(countdown(due, T + 5), "in 3h");
        assert_eq!(countdown(due, T + 59_999), "in 3h");
        assert_eq!(label_change(due, T + 5), Some(T + MINUTE));
        assert_eq!(countdown(due, T + MINUTE), "in 2h 59m");
        assert_eq!(label_change(due, T + MINUTE), Some(T + 2 * MINUTE));
        // Days and hours: the hours drop at the whole minute at which fewer
        // whole hours are left from the clock's minute (T + 1 min here).
        let far = T + 3 * DAY + 12_345;
        assert_eq!(countdown(far, T + 5), "in 3d");
        assert_eq!(label_change(far, T + 5), Some(T + MINUTE));
        assert_eq!(countdown(far, T + MINUTE), "in 2d 23h");
        assert_eq!(label_change(far, T + MINUTE), Some(T + HOUR + MINUTE));
        // Seconds begin to show at the whole minute from which under an
        // hour is left, and then tick on whole seconds.
        let near = T + HOUR + 1_500;
        assert_eq!(countdown(near, T + 5), "in 1h");
        assert_eq!(countdown(near, T + 59_000), "in 1h");
        assert_eq!(label_change(near, T + 5), Some(T + MINUTE));
        assert_eq!(countdown(near, T + MINUTE), "in 59m 1s");
        assert_eq!(label_change(near, T + MINUTE), Some(T + MINUTE + SECOND));
    }

    #[test]
    fn a_minute_label_reads_the_clock_minutes_to_the_due_minute() {
        // 21:12:40 now, due 05:22:10 the next day: the clock reads 21:12 and
        // the due time is shown as 05:22, so "in 8h 10m" (not the 8h 9m
        // 30s truncated to 8h 9m, which would change at 21:13:10).
        let now = T + 21 * HOUR + 12 * MINUTE + 40_000;
        let due = T + DAY + 5 * HOUR + 22 * MINUTE + 10_000;
        assert_eq!(countdown(due, now), "in 8h 10m");
        assert_eq!(label_change(due, now), Some(now - 40_000 + MINUTE));
    }

    #[test]
    fn labels_above_an_hour_at_different_offsets_change_at_the_same_whole_minute() {
        // 100 items an hour to 30 days ahead, each due at its own second
        // and millisecond: seen at any instant of a minute, every label
        // next changes at the next whole minute, or later for those that
        // show hours; none at a second of its own.
        let dues: Vec<i64> = (0..100)
            .map(|i| T + HOUR + MINUTE + i * 7 * HOUR + (i * 7_919) % MINUTE)
            .collect();
        for now in [T, T + 1, T + 13_500, T + 59_999] {
            let next: std::collections::BTreeSet<i64> = dues
                .iter()
                .filter_map(|&due| label_change(due, now))
                .collect();
            assert!(next.iter().all(|t| t % MINUTE == 0), "{now}: {next:?}");
            assert_eq!(next.first(), Some(&(T + MINUTE)), "{now}");
        }
    }

    #[test]
    fn no_label_reads_in_once_its_time_has_come() {
        // Walked millisecond by millisecond around the switch to seconds and
        // around the due instant: before `due` a label reads "in …" or
        // "now", from `due` on never "in …".
        let due = T + HOUR + 1_500;
        for now in (T + 59_000..T + 62_000).chain(due - 2_000..due + 2_000) {
            let label = countdown(due, now);
            if now < due {
                assert!(label.starts_with("in ") || label == "now", "{now}: {label}");
            } else {
                assert!(!label.starts_with("in "), "{now}: {label}");
            }
        }
    }

    #[test]
    fn extremes_do_not_overflow() {
        for (due, now) in [
            (i64::MAX, i64::MIN),
            (i64::MIN, i64::MAX),
            (i64::MAX, i64::MAX - 1),
        ] {
            let _ = label_change(due, now);
            let _ = countdown(due, now);
        }
    }
}
