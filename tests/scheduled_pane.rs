//! The F2 pane and the Ctrl+T time picker: snapshots at fixed sizes with a
//! fixed clock, and key-driven tests that assert the database row after each
//! action.
//!
//! Tests that act through the engine run on tokio's paused clock so that the
//! engine's clock (`common::T0`) and the `now` handed to the pane agree to
//! the millisecond.

mod common;

use chrono::{DateTime, Duration, FixedOffset, TimeZone, Utc};
use common::*;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tock::store::{Kind, NewItem, Status, Store};
use tock::tui::scheduled::{PaneAction, ScheduledPane};
use tock::tui::shown_zone::ShownZone;
use tock::tui::time_picker::{PickerAction, TimePicker};

/// Snapshots live with the TUI code they show, not beside this file.
macro_rules! snap {
    ($terminal:expr) => {{
        let terminal = $terminal;
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path("../src/tui/snapshots");
        settings.bind(|| insta::assert_snapshot!(terminal.backend()));
    }};
}

const MIN: i64 = 60_000;
const HOUR: i64 = 60 * MIN;

/// T0 (Mon 30 Nov 2026 00:53:20 UTC) seen from a +01:00 zone: 01:53:20.
fn now() -> DateTime<ShownZone> {
    ShownZone::Fixed(FixedOffset::east_opt(3600).unwrap())
        .timestamp_millis_opt(T0)
        .unwrap()
}

/// 09:00 local on the day of T0.
const NINE_AM: i64 = T0 + 7 * HOUR + 6 * MIN + 40_000;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}
fn ch(c: char) -> KeyEvent {
    key(KeyCode::Char(c))
}

fn press(pane: &mut ScheduledPane, h: &Harness, keys: &[KeyEvent]) -> Vec<PaneAction> {
    keys.iter()
        .map(|k| pane.handle_key(*k, &h.engine, now()))
        .collect()
}

/// Move the selection down until it is on `id`.
fn select(pane: &mut ScheduledPane, h: &Harness, id: i64) {
    pane.handle_key(key(KeyCode::Home), &h.engine, now());
    for _ in 0..100 {
        if pane.selected_id() == Some(id) {
            return;
        }
        pane.handle_key(ch('j'), &h.engine, now());
    }
    panic!("item {id} is not in the list");
}

/// Typed as a user does into what a key opened: read first, a second
/// later (a letter at once after `e` is a word typed where the composer
/// was meant).
fn type_str(pane: &mut ScheduledPane, h: &Harness, s: &str) {
    let later = now() + chrono::TimeDelta::seconds(1);
    for c in s.chars() {
        assert_eq!(pane.handle_key(ch(c), &h.engine, later), PaneAction::None);
    }
}

fn draw(pane: &ScheduledPane, w: u16, hgt: u16) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(w, hgt)).unwrap();
    t.draw(|f| pane.render(f.area(), f.buffer_mut(), now()))
        .unwrap();
    t
}

fn draw_picker(p: &TimePicker, w: u16, hgt: u16) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(w, hgt)).unwrap();
    t.draw(|f| p.render(f.area(), f.buffer_mut(), now()))
        .unwrap();
    t
}

fn conv(store: &Store, title: &str) -> i64 {
    store
        .create_conversation(Some(title), "user", T0 - 3 * HOUR)
        .unwrap()
}

fn add(
    store: &Store,
    conv: Option<i64>,
    kind: Kind,
    text: &str,
    due: Option<i64>,
    created: i64,
) -> i64 {
    let mut it = NewItem::new(0, kind, text);
    it.conversation_id = conv;
    it.due_at = due;
    store.enqueue(&it, created).unwrap()
}

/// Claim a row `n` times, each attempt failing with a transient error.
fn fail_transiently(store: &Store, id: i64, n: usize, error: &str, retry_at: i64, at: i64) {
    for _ in 0..n {
        assert!(store.claim(id, "test", at).unwrap());
        assert!(
            store
                .release_for_retry(id, "test", error, retry_at, at)
                .unwrap()
        );
    }
}

struct Fixture {
    plan: i64,
    standup: i64,
    queued: i64,
    scheduled: i64,
    task: i64,
    failed: i64,
    expired: i64,
    retrying: i64,
    orphan_task: i64,
    sent: i64,
    canceled: i64,
}

/// One item in every state and kind, with fixed times.
fn fixture(store: &Store) -> Fixture {
    let plan = conv(store, "Release planning");
    let standup = conv(store, "Stand-up notes");
    let scratch = conv(store, "Scratch");

    // Expired first: start-up recovery expires every pending row late by
    // more than the grace period, and resets rows in `sending`.
    let expired = add(
        store,
        Some(plan),
        Kind::Message,
        "Good morning! Remind me to water the plants",
        Some(T0 - 20 * HOUR),
        T0 - 30 * HOUR,
    );
    store.recover(T0, 12 * HOUR).unwrap();

    let queued = add(
        store,
        Some(standup),
        Kind::Queued,
        "and what about the flaky test?",
        None,
        T0 - 2 * MIN,
    );
    let scheduled = add(
        store,
        Some(plan),
        Kind::Message,
        "check the build",
        Some(NINE_AM),
        T0 - HOUR,
    );
    let mut t = NewItem::new(
        plan,
        Kind::Task,
        "Look at the nightly build and summarise the failures",
    );
    t.title = Some("Nightly review".into());
    t.due_at = Some(NINE_AM + 24 * HOUR);
    let task = store.enqueue(&t, T0 - HOUR).unwrap();

    let failed = add(
        store,
        Some(standup),
        Kind::Message,
        "post the stand-up summary",
        Some(T0 - 30 * MIN),
        T0 - 5 * HOUR,
    );
    fail_transiently(store, failed, 2, "timeout", T0 - 29 * MIN, T0 - 30 * MIN);
    assert!(store.claim(failed, "test", T0 - 28 * MIN).unwrap());
    assert!(
        store
            .mark_failed(
                failed,
                "test",
                "401 Unauthorized: invalid x-api-key",
                T0 - 28 * MIN
            )
            .unwrap()
    );

    let retrying = add(store, Some(standup), Kind::Queued, "ping", None, T0 - MIN);
    fail_transiently(
        store,
        retrying,
        2,
        "connection refused (localhost:11434)",
        T0 + 40_000,
        T0 - 30_000,
    );

    let mut t = NewItem::new(scratch, Kind::Task, "Ask how the migration went");
    t.due_at = Some(T0 + 3 * HOUR);
    let orphan_task = store.enqueue(&t, T0 - HOUR).unwrap();
    store.delete_conversation(scratch, T0 - 30 * MIN).unwrap();

    let sent = add(
        store,
        Some(plan),
        Kind::Queued,
        "hello there",
        None,
        T0 - 10 * MIN,
    );
    assert!(store.claim(sent, "test", T0 - 10 * MIN).unwrap());
    let item = store.item(sent).unwrap().unwrap();
    store
        .accept(&item, "test", "echo", T0 - 10 * MIN)
        .unwrap()
        .unwrap();

    let canceled = add(
        store,
        Some(standup),
        Kind::Message,
        "never mind",
        Some(T0 + 2 * HOUR),
        T0 - 40 * MIN,
    );
    store.cancel_item(canceled, T0 - 20 * MIN).unwrap();

    Fixture {
        plan,
        standup,
        queued,
        scheduled,
        task,
        failed,
        expired,
        retrying,
        orphan_task,
        sent,
        canceled,
    }
}

fn memory_store() -> Store {
    Store::open_in_memory().unwrap()
}

fn pane_on(store: &Store) -> ScheduledPane {
    let mut p = ScheduledPane::new();
    p.refresh(store).unwrap();
    p
}

fn item(h: &Harness, id: i64) -> tock::store::OutboxItem {
    h.engine.store().item(id).unwrap().unwrap()
}

// ---------------------------------------------------------------------------
// Snapshots
// ---------------------------------------------------------------------------

#[test]
fn snapshot_empty() {
    let store = memory_store();
    let pane = pane_on(&store);
    assert_eq!(pane.count(), 0);
    snap!(draw(&pane, 100, 12));
}

#[test]
fn snapshot_empty_80x24() {
    let store = memory_store();
    let pane = pane_on(&store);
    snap!(draw(&pane, 80, 24));
}

#[test]
fn snapshot_mixed_kinds_and_states_wide() {
    let store = memory_store();
    fixture(&store);
    let pane = pane_on(&store);
    // sent and canceled are hidden until `a`.
    assert_eq!(pane.count(), 7);
    snap!(draw(&pane, 120, 16));
}

#[test]
fn snapshot_mixed_100x20() {
    let store = memory_store();
    fixture(&store);
    let pane = pane_on(&store);
    snap!(draw(&pane, 100, 20));
}

#[test]
fn snapshot_mixed_80x24() {
    let store = memory_store();
    fixture(&store);
    let pane = pane_on(&store);
    snap!(draw(&pane, 80, 24));
}

#[tokio::test(start_paused = true)]
async fn snapshot_failed_row_selected_shows_its_error() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    select(&mut pane, &h, f.failed);
    snap!(draw(&pane, 80, 24));
}

#[tokio::test(start_paused = true)]
async fn snapshot_retrying_row_selected_shows_next_try() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    select(&mut pane, &h, f.retrying);
    snap!(draw(&pane, 100, 20));
}

#[tokio::test(start_paused = true)]
async fn snapshot_show_finished() {
    let h = harness(vec![]);
    fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    press(&mut pane, &h, &[ch('a')]);
    // A row done with says when it was sent, or the time it had: not
    // `asap`, not a countdown to a send that will not come, and no "ago"
    // that nothing would move on.
    let t = draw(&pane, 100, 20);
    let screen = screen_of(&t);
    // The fixture's sent row and its canceled one.
    let done: Vec<&str> = screen
        .lines()
        .filter(|l| l.contains("hello there") || l.contains("never mind"))
        .collect();
    assert_eq!(done.len(), 2, "{screen}");
    for line in done {
        assert!(
            !line.contains("asap") && !line.contains(" in ") && !line.contains(" ago "),
            "{line}"
        );
    }
    snap!(t);
}

#[test]
fn snapshot_long_texts_elided() {
    let store = memory_store();
    let c = conv(
        &store,
        "A conversation whose title is far too long to fit in any column",
    );
    add(
        &store,
        Some(c),
        Kind::Message,
        &format!(
            "First line of a long message\nsecond line\twith a tab and {} the end",
            "very ".repeat(40)
        ),
        Some(NINE_AM),
        T0,
    );
    add(
        &store,
        Some(c),
        Kind::Message,
        "日本語のテキストも正しく省略されるべきです。これは長い文章です。まだ続きます。",
        Some(NINE_AM + 5 * MIN),
        T0,
    );
    let pane = pane_on(&store);
    snap!(draw(&pane, 80, 10));
}

#[test]
fn escape_sequences_in_text_title_and_error_never_reach_the_screen() {
    let store = memory_store();
    let c = conv(&store, "evil\x1b]0;title\x07 chat");
    let mut t = NewItem::new(c, Kind::Task, "run \x1b[2J\x1b[31mthis\u{9b}31m");
    t.title = Some("\x1b]52;c;cGF5bG9hZA==\x07".into());
    t.due_at = Some(T0 - 10 * MIN);
    let id = store.enqueue(&t, T0 - 20 * MIN).unwrap();
    assert!(store.claim(id, "test", T0).unwrap());
    assert!(
        store
            .mark_failed(id, "test", "bad \x1b[5m blink", T0)
            .unwrap()
    );
    let pane = pane_on(&store);
    for (w, hgt) in [(80, 24), (140, 10)] {
        let t = draw(&pane, w, hgt);
        let buf = t.backend().buffer();
        for cell in buf.content() {
            assert!(
                !cell.symbol().chars().any(|c| c.is_control()),
                "control character on screen: {:?}",
                cell.symbol()
            );
        }
    }
}

#[test]
fn snapshot_many_rows_scroll_to_keep_selection_visible() {
    let store = memory_store();
    let c = conv(&store, "Chores");
    for i in 0..30 {
        add(
            &store,
            Some(c),
            Kind::Message,
            &format!("chore number {i}"),
            Some(T0 + (i + 1) * 10 * MIN),
            T0,
        );
    }
    let h = harness(vec![]);
    let mut pane = pane_on(&store);
    // Render once so the pane knows its page size, then go to the 26th row.
    draw(&pane, 80, 16);
    for _ in 0..25 {
        pane.handle_key(ch('j'), &h.engine, now());
    }
    snap!(draw(&pane, 80, 16));
}

#[tokio::test(start_paused = true)]
async fn snapshot_reschedule_prompt_with_preview() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    select(&mut pane, &h, f.scheduled);
    press(&mut pane, &h, &[ch('r')]);
    type_str(&mut pane, &h, "2h");
    snap!(draw(&pane, 80, 24));
}

#[tokio::test(start_paused = true)]
async fn snapshot_reschedule_prompt_with_error() {
    let h = harness(vec![]);
    fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    press(&mut pane, &h, &[ch('r')]);
    type_str(&mut pane, &h, "blah");
    press(&mut pane, &h, &[key(KeyCode::Enter)]);
    snap!(draw(&pane, 80, 24));
}

#[tokio::test(start_paused = true)]
async fn snapshot_cancel_confirmation() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    select(&mut pane, &h, f.scheduled);
    press(&mut pane, &h, &[ch('x')]);
    snap!(draw(&pane, 80, 24));
}

#[tokio::test(start_paused = true)]
async fn snapshot_send_early_confirmation() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    select(&mut pane, &h, f.scheduled);
    press(&mut pane, &h, &[ch('s')]);
    snap!(draw(&pane, 80, 24));
}

/// The edit box open on a message of `text` (the harness goes with it).
fn editing(text: &str) -> (Harness, ScheduledPane) {
    let h = harness(vec![]);
    let store = h.engine.store();
    let c = conv(store, "Notes");
    add(store, Some(c), Kind::Message, text, Some(NINE_AM), T0);
    let mut pane = pane_on(store);
    press(&mut pane, &h, &[ch('e')]);
    (h, pane)
}

/// The text of a drawn screen, a line per row.
fn screen_of(t: &Terminal<TestBackend>) -> String {
    let width = t.backend().buffer().area.width.max(1) as usize;
    t.backend()
        .buffer()
        .content()
        .chunks(width)
        .map(|r| r.iter().map(|c| c.symbol()).collect::<String>() + "\n")
        .collect()
}

#[tokio::test(start_paused = true)]
async fn snapshot_edit_popup() {
    let (_h, pane) = editing("line one\nline two");
    snap!(draw(&pane, 80, 24));
}

/// A long text in the edit box wraps onto the rows it has, whole, rather
/// than scrolling sideways with its start out of sight.
#[tokio::test]
async fn the_edit_box_wraps_a_long_text() {
    let (_h, pane) =
        editing("a later message with a long text that will not fit in the narrow pane");
    let screen = screen_of(&draw(&pane, 60, 15));
    assert!(
        screen.contains("│a later message with a long text that will not fit in │"),
        "{screen}"
    );
    assert!(screen.contains("│the narrow pane "), "{screen}");
}

#[test]
fn snapshot_picker_list() {
    let p = TimePicker::new();
    snap!(draw_picker(&p, 80, 24));
}

#[test]
fn snapshot_picker_custom_with_preview() {
    let mut p = TimePicker::new();
    p.handle_key(ch('5'), now());
    for c in "in 2h".chars() {
        assert_eq!(p.handle_key(ch(c), now()), PickerAction::None);
    }
    snap!(draw_picker(&p, 80, 24));
}

#[test]
fn snapshot_picker_custom_with_error() {
    let mut p = TimePicker::new();
    p.handle_key(ch('5'), now());
    for c in "blah".chars() {
        p.handle_key(ch(c), now());
    }
    assert_eq!(p.handle_key(key(KeyCode::Enter), now()), PickerAction::None);
    snap!(draw_picker(&p, 80, 24));
}

// ---------------------------------------------------------------------------
// Keys against the database
// ---------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn reschedule_with_2h_sets_due_at() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    assert_eq!(h.engine.now_ms(), T0);
    select(&mut pane, &h, f.scheduled);
    assert_eq!(pane.selected_id(), Some(f.scheduled));
    press(&mut pane, &h, &[ch('r')]);
    type_str(&mut pane, &h, "2h");
    let a = pane.handle_key(key(KeyCode::Enter), &h.engine, now());
    assert!(
        matches!(a, PaneAction::Info(ref s) if s.contains("rescheduled")),
        "{a:?}"
    );
    let it = item(&h, f.scheduled);
    assert_eq!(it.due_at, Some(T0 + 2 * HOUR));
    assert_eq!(it.status, Status::Pending);
    // The selection follows the item to its new place in the order.
    assert_eq!(pane.selected_id(), Some(f.scheduled));
}

/// `now` is at once, as the prompt's hint says (it was refused as past).
#[tokio::test(start_paused = true)]
async fn reschedule_now_makes_it_due_at_once() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    select(&mut pane, &h, f.scheduled);
    press(&mut pane, &h, &[ch('r')]);
    type_str(&mut pane, &h, "now");
    let a = pane.handle_key(key(KeyCode::Enter), &h.engine, now());
    assert!(
        matches!(a, PaneAction::Info(ref s) if s.contains("rescheduled")),
        "{a:?}"
    );
    assert_eq!(item(&h, f.scheduled).due_at, Some(T0));
}

#[tokio::test(start_paused = true)]
async fn reschedule_unreadable_keeps_prompt_and_row() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    select(&mut pane, &h, f.scheduled);
    press(&mut pane, &h, &[ch('r')]);
    type_str(&mut pane, &h, "blah");
    assert_eq!(
        pane.handle_key(key(KeyCode::Enter), &h.engine, now()),
        PaneAction::None
    );
    assert_eq!(item(&h, f.scheduled).due_at, Some(NINE_AM));
    // Still in the prompt: fixing the text and confirming works.
    for _ in 0..4 {
        pane.handle_key(key(KeyCode::Backspace), &h.engine, now());
    }
    type_str(&mut pane, &h, "30m");
    pane.handle_key(key(KeyCode::Enter), &h.engine, now());
    assert_eq!(item(&h, f.scheduled).due_at, Some(T0 + 30 * MIN));
}

#[tokio::test(start_paused = true)]
async fn reschedule_esc_changes_nothing() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    select(&mut pane, &h, f.scheduled);
    press(&mut pane, &h, &[ch('r')]);
    type_str(&mut pane, &h, "2h");
    assert_eq!(
        press(&mut pane, &h, &[key(KeyCode::Esc)]),
        vec![PaneAction::None]
    );
    assert_eq!(item(&h, f.scheduled).due_at, Some(NINE_AM));
    // Back in the list: the next Esc closes the pane.
    assert_eq!(
        press(&mut pane, &h, &[key(KeyCode::Esc)]),
        vec![PaneAction::Close]
    );
}

#[tokio::test(start_paused = true)]
async fn reschedule_a_failed_item_makes_it_pending() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    press(&mut pane, &h, &[ch('j'), ch('r')]);
    assert_eq!(pane.selected_id(), Some(f.failed));
    type_str(&mut pane, &h, "10m");
    pane.handle_key(key(KeyCode::Enter), &h.engine, now());
    let it = item(&h, f.failed);
    assert_eq!(
        (it.status, it.due_at, it.attempts),
        (Status::Pending, Some(T0 + 10 * MIN), 0)
    );
}

#[tokio::test(start_paused = true)]
async fn edit_and_save_changes_text() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    select(&mut pane, &h, f.scheduled);
    press(&mut pane, &h, &[ch('e')]);
    // The cursor starts at the end of the text.
    type_str(&mut pane, &h, " now");
    press(
        &mut pane,
        &h,
        &[KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT)],
    );
    type_str(&mut pane, &h, "and tests");
    let a = pane.handle_key(key(KeyCode::Enter), &h.engine, now());
    assert_eq!(a, PaneAction::Info(format!("#{} saved", f.scheduled)));
    assert_eq!(item(&h, f.scheduled).text, "check the build now\nand tests");
}

#[tokio::test(start_paused = true)]
async fn edit_esc_discards() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    select(&mut pane, &h, f.scheduled);
    press(&mut pane, &h, &[ch('e')]);
    type_str(&mut pane, &h, "xyz");
    press(&mut pane, &h, &[key(KeyCode::Esc)]);
    assert_eq!(item(&h, f.scheduled).text, "check the build");
}

/// `e` and a letter at once ("explain this" typed into F2 where the
/// composer was meant): the editor closes and nothing is changed (the
/// letters were appended to the text, and the Enter ending the line saved
/// it).
#[tokio::test(start_paused = true)]
async fn a_letter_at_once_after_e_closes_the_editor_unchanged() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    select(&mut pane, &h, f.scheduled);
    let acts = press(&mut pane, &h, &[ch('e'), ch('x')]);
    assert!(
        matches!(&acts[1], PaneAction::Info(m) if m.starts_with("closed, nothing changed")),
        "{acts:?}"
    );
    for c in "plain this".chars() {
        pane.handle_key(ch(c), &h.engine, now());
    }
    pane.handle_key(key(KeyCode::Enter), &h.engine, now());
    assert_eq!(item(&h, f.scheduled).text, "check the build");
    // Read first, a letter is the edit's.
    press(&mut pane, &h, &[ch('e')]);
    type_str(&mut pane, &h, "!");
    assert!(!matches!(
        pane.handle_key(key(KeyCode::Enter), &h.engine, now()),
        PaneAction::Error(_)
    ));
}

/// The item is canceled elsewhere while its edit is open: saving cannot
/// change it, and what was typed goes to the composer instead of being lost
/// with the editor.
#[tokio::test(start_paused = true)]
async fn edit_of_an_item_gone_meanwhile_keeps_the_text() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    select(&mut pane, &h, f.scheduled);
    press(&mut pane, &h, &[ch('e')]);
    type_str(&mut pane, &h, " and the docs");
    h.engine.store().cancel_item(f.scheduled, T0).unwrap();
    let a = pane.handle_key(key(KeyCode::Enter), &h.engine, now());
    match a {
        PaneAction::KeepInComposer { text, error } => {
            assert_eq!(text, "check the build and the docs");
            assert!(!error.is_empty());
        }
        other => panic!("expected the text kept for the composer, got {other:?}"),
    }
    assert_eq!(item(&h, f.scheduled).text, "check the build");
    // The editor closed: keys act on the list again.
    assert!(!pane.is_editing());
}

#[tokio::test(start_paused = true)]
async fn edit_to_empty_is_refused_and_stays_open() {
    let h = harness(vec![]);
    let store = h.engine.store();
    let c = conv(store, "c");
    let id = add(store, Some(c), Kind::Message, "ab", Some(NINE_AM), T0);
    let mut pane = pane_on(store);
    press(
        &mut pane,
        &h,
        &[ch('e'), key(KeyCode::Backspace), key(KeyCode::Backspace)],
    );
    let a = pane.handle_key(key(KeyCode::Enter), &h.engine, now());
    assert!(matches!(a, PaneAction::Error(_)), "{a:?}");
    type_str(&mut pane, &h, "cd");
    pane.handle_key(key(KeyCode::Enter), &h.engine, now());
    assert_eq!(item(&h, id).text, "cd");
}

#[tokio::test(start_paused = true)]
async fn cancel_then_yes_cancels() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    select(&mut pane, &h, f.scheduled);
    let before = pane.count();
    assert_eq!(pane.handle_key(ch('x'), &h.engine, now()), PaneAction::None);
    // Nothing happens before the answer.
    assert_eq!(item(&h, f.scheduled).status, Status::Pending);
    let a = pane.handle_key(key(KeyCode::Enter), &h.engine, now());
    assert_eq!(a, PaneAction::Info(format!("#{} canceled", f.scheduled)));
    assert_eq!(item(&h, f.scheduled).status, Status::Canceled);
    assert_eq!(pane.count(), before - 1);
    // The canceled item left: the row that took its place is selected...
    assert_eq!(pane.selected_id(), Some(f.task));
    // ...but no key acts on it before a frame has shown it selected (here:
    // the task must not be sent by an `s` typed ahead).
    let task_before = item(&h, f.task);
    let a = pane.handle_key(ch('s'), &h.engine, now());
    assert!(
        matches!(&a, PaneAction::Info(m) if m.contains("press again")),
        "{a:?}"
    );
    assert_eq!(
        item(&h, f.task),
        task_before,
        "no key acts on a selection not shown yet"
    );
    let screen = screen_of(&draw(&pane, 100, 24));
    let marked = screen
        .lines()
        .find(|l| l.starts_with('›'))
        .unwrap_or_default();
    assert!(marked.contains("Nightly review"), "{screen}");
    // Shown: its keys act on it (scheduled ahead, `s` asks first).
    pane.handle_key(ch('s'), &h.engine, now());
    pane.handle_key(key(KeyCode::Enter), &h.engine, now());
    assert_ne!(item(&h, f.task), task_before, "s sent the task now");
}

/// The selected item canceled by another hand (`tock cancel`, another
/// tock): nothing is selected, so no key acts on the row that slid into its
/// place; the details say so, and a move selects again.
#[tokio::test(start_paused = true)]
async fn an_item_that_leaves_by_another_hand_leaves_nothing_selected() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    select(&mut pane, &h, f.scheduled);
    draw(&pane, 100, 24);
    h.engine.cancel(f.scheduled).unwrap();
    pane.refresh_with(&h.engine).unwrap();
    assert_eq!(pane.selected_id(), None);
    // Said where the details were, not left blank.
    let screen = screen_of(&draw(&pane, 100, 24));
    assert!(
        screen.contains("nothing selected: the item left the list · ↑/↓ choose a row"),
        "{screen}"
    );
    let task_before = item(&h, f.task);
    pane.handle_key(ch('s'), &h.engine, now());
    assert_eq!(
        item(&h, f.task),
        task_before,
        "no key acts without a selection"
    );
    // A move selects again, from the top.
    pane.handle_key(ch('j'), &h.engine, now());
    assert!(pane.selected_id().is_some());
}

/// `s` on a message scheduled ahead asks first, as the strip does: one
/// slip of a letter key sent it hours early. `n` keeps it scheduled.
#[tokio::test(start_paused = true)]
async fn send_now_of_a_scheduled_message_asks_first() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    select(&mut pane, &h, f.scheduled);
    press(&mut pane, &h, &[ch('s')]);
    let screen = screen_of(&draw(&pane, 100, 24));
    assert!(
        screen.contains(&format!("Send #{} now,", f.scheduled))
            && screen.contains("before its time?"),
        "{screen}"
    );
    assert_eq!(item(&h, f.scheduled).due_at, Some(NINE_AM));
    press(&mut pane, &h, &[ch('n')]);
    assert_eq!(item(&h, f.scheduled).due_at, Some(NINE_AM), "kept");
    press(&mut pane, &h, &[ch('s'), key(KeyCode::Enter)]);
    let it = item(&h, f.scheduled);
    assert!(it.due_at.is_none_or(|d| d <= h.engine.now_ms()), "{it:?}");
}

/// x y twice: each cancel selects the row that took the canceled one's
/// place, so once it is shown the next x y cancels it.
#[tokio::test(start_paused = true)]
async fn cancel_two_rows_in_a_row() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    select(&mut pane, &h, f.scheduled);
    draw(&pane, 100, 24);
    press(&mut pane, &h, &[ch('x'), key(KeyCode::Enter)]);
    assert_eq!(item(&h, f.scheduled).status, Status::Canceled);
    assert_eq!(pane.selected_id(), Some(f.task));
    let screen = screen_of(&draw(&pane, 100, 24));
    assert!(!screen.contains("nothing selected"), "{screen}");
    press(&mut pane, &h, &[ch('x'), key(KeyCode::Enter)]);
    assert_eq!(item(&h, f.task).status, Status::Canceled);
    assert!(pane.selected_id().is_some());
}

#[tokio::test(start_paused = true)]
async fn cancel_then_no_keeps_it_pending() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    select(&mut pane, &h, f.scheduled);
    press(&mut pane, &h, &[ch('x'), ch('n')]);
    assert_eq!(item(&h, f.scheduled).status, Status::Pending);
    // Esc also says no, and any other key keeps asking.
    press(&mut pane, &h, &[ch('x'), ch('q'), key(KeyCode::Esc)]);
    assert_eq!(item(&h, f.scheduled).status, Status::Pending);
    assert_eq!(pane.selected_id(), Some(f.scheduled));
}

#[tokio::test(start_paused = true)]
async fn send_now_sets_priority_and_due_now() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    select(&mut pane, &h, f.scheduled);
    // Scheduled ahead: asked first, then sent.
    assert_eq!(pane.handle_key(ch('s'), &h.engine, now()), PaneAction::None);
    let a = pane.handle_key(key(KeyCode::Enter), &h.engine, now());
    assert!(
        matches!(a, PaneAction::Info(ref s) if s.contains("Release planning")),
        "{a:?}"
    );
    let it = item(&h, f.scheduled);
    assert_eq!(
        (it.status, it.priority, it.due_at),
        (Status::Pending, 1, Some(T0))
    );
}

#[tokio::test(start_paused = true)]
async fn retry_failed_and_expired() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    select(&mut pane, &h, f.failed);
    let a = pane.handle_key(ch('R'), &h.engine, now());
    assert!(matches!(a, PaneAction::Info(_)), "{a:?}");
    let it = item(&h, f.failed);
    assert_eq!(
        (it.status, it.attempts, it.last_error),
        (Status::Pending, 0, None)
    );

    // Ordered by its due time, 20 hours ago, the expired row comes first.
    press(&mut pane, &h, &[key(KeyCode::Home)]);
    assert_eq!(pane.selected_id(), Some(f.expired));
    pane.handle_key(ch('R'), &h.engine, now());
    let it = item(&h, f.expired);
    assert_eq!((it.status, it.attempts), (Status::Pending, 0));
    assert_eq!(it.due_at, Some(T0));
}

#[tokio::test(start_paused = true)]
async fn retry_on_a_pending_item_changes_nothing() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    select(&mut pane, &h, f.scheduled);
    let before = item(&h, f.scheduled);
    let a = pane.handle_key(ch('R'), &h.engine, now());
    assert!(matches!(a, PaneAction::Info(_)), "{a:?}");
    assert_eq!(item(&h, f.scheduled), before);
}

#[tokio::test(start_paused = true)]
async fn enter_jumps_to_the_conversation() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    select(&mut pane, &h, f.scheduled);
    assert_eq!(
        pane.handle_key(key(KeyCode::Enter), &h.engine, now()),
        PaneAction::Jump(f.plan)
    );
    select(&mut pane, &h, f.failed);
    assert_eq!(
        pane.handle_key(key(KeyCode::Enter), &h.engine, now()),
        PaneAction::Jump(f.standup)
    );
    // A task whose conversation was deleted has nowhere to jump to.
    select(&mut pane, &h, f.orphan_task);
    assert!(matches!(
        pane.handle_key(key(KeyCode::Enter), &h.engine, now()),
        PaneAction::Info(_)
    ));
}

#[tokio::test(start_paused = true)]
async fn a_toggles_finished_rows() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    let ids = |p: &mut ScheduledPane| {
        let mut v = Vec::new();
        p.handle_key(key(KeyCode::Home), &h.engine, now());
        loop {
            v.push(p.selected_id().unwrap());
            p.handle_key(ch('j'), &h.engine, now());
            if p.selected_id() == v.last().copied() {
                return v;
            }
        }
    };
    let hidden = ids(&mut pane);
    assert_eq!(
        hidden,
        vec![
            f.expired,
            f.failed,
            f.queued,
            f.retrying,
            f.orphan_task,
            f.scheduled,
            f.task
        ]
    );
    pane.handle_key(ch('a'), &h.engine, now());
    let shown = ids(&mut pane);
    assert!(shown.contains(&f.sent) && shown.contains(&f.canceled));
    assert_eq!(pane.count(), 7, "finished rows are not counted");
    pane.handle_key(ch('a'), &h.engine, now());
    assert_eq!(ids(&mut pane), hidden);
}

#[tokio::test(start_paused = true)]
async fn esc_and_f2_close() {
    let h = harness(vec![]);
    let mut pane = pane_on(h.engine.store());
    assert_eq!(
        pane.handle_key(key(KeyCode::Esc), &h.engine, now()),
        PaneAction::Close
    );
    assert_eq!(
        pane.handle_key(key(KeyCode::F(2)), &h.engine, now()),
        PaneAction::Close
    );
}

#[tokio::test(start_paused = true)]
async fn selection_moves_and_clamps_at_both_ends() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    let order = [
        f.expired,
        f.failed,
        f.queued,
        f.retrying,
        f.orphan_task,
        f.scheduled,
        f.task,
    ];
    assert_eq!(pane.selected_id(), Some(order[0]));
    // Up at the top stays at the top.
    press(&mut pane, &h, &[ch('k'), key(KeyCode::Up)]);
    assert_eq!(pane.selected_id(), Some(order[0]));
    for want in &order[1..] {
        pane.handle_key(key(KeyCode::Down), &h.engine, now());
        assert_eq!(pane.selected_id(), Some(*want));
    }
    // Down at the bottom stays at the bottom.
    press(&mut pane, &h, &[ch('j'), key(KeyCode::Down)]);
    assert_eq!(pane.selected_id(), Some(order[6]));
    press(&mut pane, &h, &[ch('k'), ch('k')]);
    assert_eq!(pane.selected_id(), Some(order[4]));
}

#[tokio::test(start_paused = true)]
async fn selection_follows_the_item_across_refresh() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    select(&mut pane, &h, f.scheduled);
    assert_eq!(pane.selected_id(), Some(f.scheduled));
    // Another process adds an earlier item: the selection stays on its item.
    let store = h.engine.store();
    add(
        store,
        Some(f.plan),
        Kind::Message,
        "earlier",
        Some(T0 + MIN),
        T0,
    );
    pane.refresh(store).unwrap();
    assert_eq!(pane.selected_id(), Some(f.scheduled));
}

#[tokio::test(start_paused = true)]
async fn actions_on_finished_items_are_refused_with_a_reason() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    pane.handle_key(ch('a'), &h.engine, now());
    while pane.selected_id() != Some(f.sent) {
        pane.handle_key(ch('j'), &h.engine, now());
    }
    let before = item(&h, f.sent);
    for c in ['e', 'x', 's', 'r', 'R'] {
        let a = pane.handle_key(ch(c), &h.engine, now());
        assert!(
            matches!(a, PaneAction::Info(ref s) if s.contains("sent")),
            "{c}: {a:?}"
        );
    }
    assert_eq!(item(&h, f.sent), before);
}

#[tokio::test(start_paused = true)]
async fn engine_refusal_becomes_an_error() {
    let h = harness(vec![]);
    let f = fixture(h.engine.store());
    let mut pane = pane_on(h.engine.store());
    select(&mut pane, &h, f.scheduled);
    // The item is sent by someone else while the pane still shows it pending.
    let store = h.engine.store();
    store.cancel_item(f.scheduled, T0).unwrap();
    pane.handle_key(ch('s'), &h.engine, now());
    let a = pane.handle_key(key(KeyCode::Enter), &h.engine, now());
    assert!(
        matches!(a, PaneAction::Error(ref s) if !s.contains('\n')),
        "{a:?}"
    );
}

// ---------------------------------------------------------------------------
// The time picker
// ---------------------------------------------------------------------------

fn utc(ms: i64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(ms).unwrap()
}

#[test]
fn picker_presets_resolve() {
    let want = [
        T0 + 5 * MIN,
        T0 + 30 * MIN,
        T0 + HOUR,
        // Tue 1 Dec 09:00 +01:00
        NINE_AM + 24 * HOUR,
    ];
    for (i, w) in want.iter().enumerate() {
        // By digit, then Enter.
        let mut p = TimePicker::new();
        let d = char::from(b'1' + i as u8);
        assert_eq!(p.handle_key(ch(d), now()), PickerAction::None);
        assert_eq!(
            p.handle_key(key(KeyCode::Enter), now()),
            PickerAction::Pick(utc(*w)),
            "preset {}",
            i + 1
        );
        // By arrows from the top.
        let mut p = TimePicker::new();
        for _ in 0..i {
            p.handle_key(key(KeyCode::Down), now());
        }
        assert_eq!(
            p.handle_key(key(KeyCode::Enter), now()),
            PickerAction::Pick(utc(*w))
        );
    }
    assert_eq!(
        TimePicker::preset(3, &now()).unwrap(),
        utc(T0) + Duration::hours(31) + Duration::minutes(6) + Duration::seconds(40)
    );
}

#[test]
fn picker_tomorrow_is_the_next_calendar_day_late_in_the_evening() {
    let late = ShownZone::Fixed(FixedOffset::east_opt(3600).unwrap())
        .with_ymd_and_hms(2026, 11, 30, 23, 30, 0)
        .unwrap();
    assert_eq!(
        TimePicker::preset(3, &late).unwrap(),
        Utc.with_ymd_and_hms(2026, 12, 1, 8, 0, 0).unwrap()
    );
}

#[test]
fn picker_custom_in_2h() {
    let mut p = TimePicker::new();
    p.handle_key(ch('5'), now());
    for c in "in 2h".chars() {
        p.handle_key(ch(c), now());
    }
    assert_eq!(
        p.handle_key(key(KeyCode::Enter), now()),
        PickerAction::Pick(utc(T0 + 2 * HOUR))
    );
}

#[test]
fn picker_custom_by_arrows_then_typing() {
    let mut p = TimePicker::new();
    for _ in 0..10 {
        p.handle_key(key(KeyCode::Down), now());
    }
    for c in "45m".chars() {
        p.handle_key(ch(c), now());
    }
    assert_eq!(
        p.handle_key(key(KeyCode::Enter), now()),
        PickerAction::Pick(utc(T0 + 45 * MIN))
    );
}

#[test]
fn picker_invalid_custom_does_not_pick() {
    let mut p = TimePicker::new();
    p.handle_key(ch('5'), now());
    for c in "blah".chars() {
        p.handle_key(ch(c), now());
    }
    assert_eq!(p.handle_key(key(KeyCode::Enter), now()), PickerAction::None);
    assert_eq!(p.handle_key(key(KeyCode::Enter), now()), PickerAction::None);
    // Empty is not a time either.
    let mut p = TimePicker::new();
    p.handle_key(ch('5'), now());
    assert_eq!(p.handle_key(key(KeyCode::Enter), now()), PickerAction::None);
}

#[test]
fn picker_esc_leaves_custom_first_then_cancels() {
    let mut p = TimePicker::new();
    p.handle_key(ch('5'), now());
    p.handle_key(ch('1'), now()); // typed into the input, not a jump
    assert_eq!(p.handle_key(key(KeyCode::Esc), now()), PickerAction::None);
    // Back in the list, digits jump again.
    p.handle_key(ch('1'), now());
    assert_eq!(
        p.handle_key(key(KeyCode::Enter), now()),
        PickerAction::Pick(utc(T0 + 5 * MIN))
    );
    let mut p = TimePicker::new();
    assert_eq!(p.handle_key(key(KeyCode::Esc), now()), PickerAction::Cancel);
}

#[test]
fn picker_selection_clamps() {
    let mut p = TimePicker::new();
    p.handle_key(key(KeyCode::Up), now());
    p.handle_key(key(KeyCode::Up), now());
    assert_eq!(
        p.handle_key(key(KeyCode::Enter), now()),
        PickerAction::Pick(utc(T0 + 5 * MIN))
    );
}

/// A failure whose reason already counts the attempts ("… (after 2
/// attempts)", as a transient error that ran out of tries says) is not
/// told "failed after 2 attempts" a second time.
#[tokio::test(start_paused = true)]
async fn a_failure_that_counts_its_attempts_says_so_once() {
    let h = harness(vec![]);
    let store = h.engine.store();
    let c = conv(store, "Build");
    let id = add(store, Some(c), Kind::Message, "check the build", None, T0);
    fail_transiently(store, id, 1, "cannot connect", T0, T0);
    assert!(store.claim(id, "test", T0).unwrap());
    assert!(
        store
            .mark_failed(id, "test", "openai: cannot connect (after 2 attempts)", T0)
            .unwrap()
    );
    let mut pane = pane_on(store);
    select(&mut pane, &h, id);
    let t = draw(&pane, 120, 24);
    let screen: String = t
        .backend()
        .buffer()
        .content()
        .iter()
        .map(|c| c.symbol())
        .collect();
    assert_eq!(screen.matches("attempts").count(), 1, "{screen}");
    assert!(
        screen.contains("failed: openai: cannot connect (after 2 attempts) · R retries"),
        "{screen}"
    );
}

/// A regeneration on its way (Ctrl+R while the provider cannot be
/// reached: it retries) is listed with the rest, as what it is: F2 left it
/// out, though it lists everything tock will send. It has no text or time
/// to change; `x` calls it off and the earlier reply stays.
#[tokio::test(start_paused = true)]
async fn a_regeneration_on_its_way_is_listed_and_can_be_called_off() {
    let h = harness(vec![
        Step::Reply(vec![text("the first answer"), done()]),
        Step::Fail(tock::llm::LlmError::transient("connection refused")),
    ]);
    let c = h
        .engine
        .store()
        .create_conversation(Some("Plans"), "user", T0)
        .unwrap();
    h.engine.start();
    h.engine.send_text(c, "a question").unwrap();
    settle().await;
    let id = h.engine.regenerate(c).unwrap();
    settle().await;
    assert_eq!(item(&h, id).status, Status::Pending, "it retries");
    let mut pane = pane_on(h.engine.store());
    select(&mut pane, &h, id);
    let shown = screen_of(&draw(&pane, 100, 20));
    assert!(shown.contains("regenerate the last reply"), "{shown}");
    assert!(shown.contains("Plans"), "{shown}");
    for k in ['e', 'r'] {
        let a = pane.handle_key(ch(k), &h.engine, now());
        assert!(
            matches!(&a, PaneAction::Info(s) if s.contains("has no text or time to change")),
            "{k}: {a:?}"
        );
    }
    press(&mut pane, &h, &[ch('x'), key(KeyCode::Enter)]);
    assert_eq!(item(&h, id).status, Status::Canceled);
    let replies: Vec<String> = h
        .engine
        .store()
        .messages(c)
        .unwrap()
        .into_iter()
        .filter(|m| m.role == tock::store::Role::Assistant)
        .map(|m| m.content)
        .collect();
    assert_eq!(replies, ["the first answer"]);
    h.engine.shutdown(std::time::Duration::from_secs(1)).await;
}

/// What `typed` then Enter picks in a fresh picker.
fn picker_pick(typed: &str) -> PickerAction {
    let mut p = TimePicker::new();
    for c in typed.chars() {
        p.handle_key(ch(c), now());
    }
    p.handle_key(key(KeyCode::Enter), now())
}

#[test]
fn a_time_typed_into_the_picker_is_the_time_it_picks() {
    // Local 01:53 on Mon 30 Nov (+01:00): 15:00 local is 14:00 UTC.
    // (`tomorrow 3pm` at 01:53 is asked about: today's, or Tuesday's?)
    let three_pm_tuesday = Utc.with_ymd_and_hms(2026, 12, 1, 14, 0, 0).unwrap();
    let eight_pm_today = Utc.with_ymd_and_hms(2026, 11, 30, 19, 0, 0).unwrap();
    let three_pm_today = Utc.with_ymd_and_hms(2026, 11, 30, 14, 0, 0).unwrap();
    // Letters were dropped, and Enter picked the preset a digit had jumped to.
    assert_eq!(picker_pick("tue 3pm"), PickerAction::Pick(three_pm_tuesday));
    // A digit no preset has, then letters.
    assert_eq!(picker_pick("8pm"), PickerAction::Pick(eight_pm_today));
    // A preset's digit that goes on as a time.
    assert_eq!(picker_pick("3pm"), PickerAction::Pick(three_pm_today));
    assert_eq!(picker_pick("10m"), PickerAction::Pick(utc(T0 + 10 * MIN)));
    assert_eq!(picker_pick("45m"), PickerAction::Pick(utc(T0 + 45 * MIN)));
    // "5" is also "custom…": it still begins a time typed after it.
    assert_eq!(
        picker_pick("5pm"),
        PickerAction::Pick(Utc.with_ymd_and_hms(2026, 11, 30, 16, 0, 0).unwrap())
    );
    // `jun`: j is no longer "down" here.
    assert_eq!(
        picker_pick("jun 3 9am"),
        PickerAction::Pick(Utc.with_ymd_and_hms(2027, 6, 3, 8, 0, 0).unwrap())
    );
    // A digit alone, then Enter, is still its preset.
    assert_eq!(picker_pick("3"), PickerAction::Pick(utc(T0 + HOUR)));
    // So is "5", then a word: the word is the time.
    assert_eq!(
        picker_pick("5in 2h"),
        PickerAction::Pick(utc(T0 + 2 * HOUR))
    );
}

#[test]
fn typing_in_the_picker_shows_what_is_typed_and_its_time() {
    let mut p = TimePicker::new();
    for c in "tue 3pm".chars() {
        p.handle_key(ch(c), now());
    }
    let t = draw_picker(&p, 70, 16);
    let screen = format!("{:?}", t.backend().buffer());
    assert!(screen.contains("tue 3pm"), "{screen}");
    assert!(screen.contains("Tue 1 Dec 15:00"), "{screen}");
    assert!(screen.contains("Esc back"), "{screen}");
}

/// What the picker picks after `keys` (characters typed, `↑`, `↓` and
/// `⎋` for the arrows and Esc) then Enter.
fn picker_after(keys: &str) -> (TimePicker, PickerAction) {
    let mut p = TimePicker::new();
    for c in keys.chars() {
        let k = match c {
            '↑' => key(KeyCode::Up),
            '↓' => key(KeyCode::Down),
            '⎋' => key(KeyCode::Esc),
            c => ch(c),
        };
        assert_eq!(p.handle_key(k, now()), PickerAction::None, "{keys:?}");
    }
    let picked = p.handle_key(key(KeyCode::Enter), now());
    (p, picked)
}

fn picker_screen(p: &TimePicker) -> String {
    let t = draw_picker(p, 70, 16);
    let buf = t.backend().buffer();
    (0..buf.area.height)
        .map(|y| {
            (0..buf.area.width)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn typing_after_esc_back_in_the_picker_starts_a_new_time() {
    let three_pm_today = Utc.with_ymd_and_hms(2026, 11, 30, 14, 0, 0).unwrap();
    let nine_pm_today = Utc.with_ymd_and_hms(2026, 11, 30, 20, 0, 0).unwrap();
    // A preset's digit that goes on as a time: not `tomorrow 3pmpm`.
    let (_, picked) = picker_after("tomorrow 3pm⎋3pm");
    assert_eq!(picked, PickerAction::Pick(three_pm_today));
    // A letter: not `8pm9pm`.
    let (_, picked) = picker_after("8pm⎋9pm");
    assert_eq!(picked, PickerAction::Pick(nine_pm_today));
    // A word: not `8pmtue 3pm`.
    let (_, picked) = picker_after("8pm⎋tue 3pm");
    assert_eq!(
        picked,
        PickerAction::Pick(Utc.with_ymd_and_hms(2026, 12, 1, 14, 0, 0).unwrap())
    );
    // A digit alone is its preset, and the old time is gone with it.
    let (p, picked) = picker_after("8pm⎋2");
    assert_eq!(picked, PickerAction::Pick(utc(T0 + 30 * MIN)));
    assert!(!picker_screen(&p).contains("8pm"), "{}", picker_screen(&p));
}

#[test]
fn a_preset_chosen_after_a_custom_time_is_the_only_time_shown_as_chosen() {
    let tomorrow_nine = utc(NINE_AM + 24 * HOUR);
    for keys in ["8pm↑", "8pm⎋↑"] {
        let mut p = TimePicker::new();
        for c in keys.chars() {
            let k = match c {
                '↑' => key(KeyCode::Up),
                '⎋' => key(KeyCode::Esc),
                c => ch(c),
            };
            p.handle_key(k, now());
        }
        let screen = picker_screen(&p);
        // The preset is selected; the typed time has no "sends" preview.
        assert!(screen.contains("› 4 tomorrow 09:00"), "{keys}\n{screen}");
        assert!(!screen.contains("sends"), "{keys}\n{screen}");
        assert!(!screen.contains("20:00"), "{keys}\n{screen}");
        assert_eq!(
            p.handle_key(key(KeyCode::Enter), now()),
            PickerAction::Pick(tomorrow_nine),
            "{keys}"
        );
    }
    // Moving back down to "custom…" takes the typed time up again.
    let (_, picked) = picker_after("8pm↑↓");
    assert_eq!(
        picked,
        PickerAction::Pick(Utc.with_ymd_and_hms(2026, 11, 30, 19, 0, 0).unwrap())
    );
    // While typing, the preview is there.
    let mut p = TimePicker::new();
    for c in "8pm".chars() {
        p.handle_key(ch(c), now());
    }
    let screen = picker_screen(&p);
    assert!(screen.contains("sends Mon 30 Nov 20:00"), "{screen}");
}
