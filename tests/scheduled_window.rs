//! F2 with more rows than it loads: a pane that reads 3 rows per query
//! must show, select and count what one that holds the whole list does,
//! wherever the selection goes and whatever changes under it.

mod common;

use common::*;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tock::store::{Kind, NewItem, Store};
use tock::tui::scheduled::ScheduledPane;

const MIN: i64 = 60_000;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

use tock::tui::shown_zone::ShownZone;

fn now() -> chrono::DateTime<ShownZone> {
    chrono::DateTime::from_timestamp_millis(T0)
        .unwrap()
        .with_timezone(&ShownZone::Fixed(chrono::FixedOffset::east_opt(0).unwrap()))
}

fn draw(pane: &ScheduledPane) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(90, 14)).unwrap();
    t.draw(|f| pane.render(f.area(), f.buffer_mut(), now()))
        .unwrap();
    t
}

fn screen(pane: &ScheduledPane) -> String {
    let t = draw(pane);
    let buf = t.backend().buffer();
    let mut s = String::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            s.push_str(buf[(x, y)].symbol());
        }
        s.push('\n');
    }
    s
}

fn press(pane: &mut ScheduledPane, h: &Harness, code: KeyCode) {
    pane.handle_key(key(code), &h.engine, now());
    // Each key is followed by its frame, as in the app (the frame sets the page).
    draw(pane);
}

/// 150 items over three conversations, due in an order unlike their ids,
/// some as soon as possible (ordered by creation).
fn many(store: &Store) -> Vec<i64> {
    let convs: Vec<i64> = (0..3)
        .map(|i| {
            store
                .create_conversation(Some(&format!("chat {i}")), "user", T0 - 60 * MIN)
                .unwrap()
        })
        .collect();
    for i in 0..150i64 {
        let due = (i % 10 != 0).then_some(T0 + ((i * 37) % 150 + 1) * MIN);
        let mut it = NewItem::new(convs[(i % 3) as usize], Kind::Message, format!("item {i}"));
        it.due_at = due;
        store.enqueue(&it, T0 - 30 * MIN + i).unwrap();
    }
    store
        .list_items(false)
        .unwrap()
        .iter()
        .map(|i| i.id)
        .collect()
}

fn pane(h: &Harness, chunk: usize) -> ScheduledPane {
    let mut p = ScheduledPane::new().with_chunk(chunk);
    p.refresh_with(&h.engine).unwrap();
    draw(&p);
    p
}

/// From the top down to where Down stops: the ids in the order shown.
fn walk_down(p: &mut ScheduledPane, h: &Harness) -> Vec<i64> {
    press(p, h, KeyCode::Home);
    let mut ids = vec![p.selected_id().unwrap()];
    loop {
        press(p, h, KeyCode::Down);
        let id = p.selected_id().unwrap();
        if Some(&id) == ids.last() {
            return ids;
        }
        ids.push(id);
    }
}

/// From the bottom up to where Up stops, in list order.
fn walk_up(p: &mut ScheduledPane, h: &Harness) -> Vec<i64> {
    press(p, h, KeyCode::End);
    let mut ids = vec![p.selected_id().unwrap()];
    loop {
        press(p, h, KeyCode::Up);
        let id = p.selected_id().unwrap();
        if Some(&id) == ids.last() {
            ids.reverse();
            return ids;
        }
        ids.push(id);
    }
}

#[test]
fn a_small_window_walks_and_counts_the_whole_list() {
    let h = harness(vec![]);
    let want = many(h.engine.store());
    let mut p = pane(&h, 3);
    assert_eq!(p.count(), want.len());
    assert_eq!(walk_down(&mut p, &h), want);
    assert_eq!(walk_up(&mut p, &h), want);
}

#[test]
fn end_and_home_reach_the_true_ends_and_pages_step_by_a_page() {
    let h = harness(vec![]);
    let want = many(h.engine.store());
    let mut p = pane(&h, 3);
    press(&mut p, &h, KeyCode::End);
    assert_eq!(p.selected_id(), want.last().copied());
    assert!(screen(&p).contains("item "), "the last rows are drawn");
    press(&mut p, &h, KeyCode::Home);
    assert_eq!(p.selected_id(), want.first().copied());
    let at = |p: &ScheduledPane| {
        want.iter()
            .position(|id| Some(*id) == p.selected_id())
            .unwrap()
    };
    press(&mut p, &h, KeyCode::PageDown);
    let page = at(&p);
    assert!(page > 1, "a page is more than a row");
    for n in 2..=4 {
        press(&mut p, &h, KeyCode::PageDown);
        assert_eq!(at(&p), n * page);
    }
    press(&mut p, &h, KeyCode::PageUp);
    assert_eq!(at(&p), 3 * page);
    for _ in 0..want.len() {
        press(&mut p, &h, KeyCode::PageDown);
    }
    assert_eq!(at(&p), want.len() - 1, "PageDown stops at the last row");
}

#[test]
fn a_windowed_pane_draws_what_a_whole_one_does() {
    let h = harness(vec![]);
    many(h.engine.store());
    let mut small = pane(&h, 3);
    let mut whole = pane(&h, 10_000);
    let keys = [KeyCode::Down; 40]
        .into_iter()
        .chain([KeyCode::PageDown; 6])
        .chain([KeyCode::Up; 25])
        .chain([KeyCode::End, KeyCode::PageUp, KeyCode::Up, KeyCode::Home])
        .chain([KeyCode::PageDown; 3]);
    for (i, k) in keys.enumerate() {
        press(&mut small, &h, k);
        press(&mut whole, &h, k);
        assert_eq!(screen(&small), screen(&whole), "after key {i} ({k:?})");
    }
}

#[test]
fn the_selection_follows_its_item_deep_in_the_list() {
    let h = harness(vec![]);
    let store = h.engine.store();
    let want = many(store);
    let mut p = pane(&h, 3);
    press(&mut p, &h, KeyCode::Home);
    for _ in 0..100 {
        press(&mut p, &h, KeyCode::Down);
    }
    let id = want[100];
    assert_eq!(p.selected_id(), Some(id));
    let text = store.item(id).unwrap().unwrap().text;
    // Rows arrive before it: it stays selected and on screen.
    let conv = store.item(id).unwrap().unwrap().conversation_id.unwrap();
    for i in 0..5 {
        let mut it = NewItem::new(conv, Kind::Message, format!("earlier {i}"));
        it.due_at = Some(T0 + MIN / 2);
        store.enqueue(&it, T0).unwrap();
    }
    p.refresh_with(&h.engine).unwrap();
    assert_eq!(p.selected_id(), Some(id));
    assert!(screen(&p).contains(&text), "{}", screen(&p));
    assert_eq!(p.count(), want.len() + 5);
    // Rescheduled to the end of the list: it is followed there.
    store.reschedule_item(id, T0 + 10_000 * MIN, T0).unwrap();
    p.refresh_with(&h.engine).unwrap();
    assert_eq!(p.selected_id(), Some(id));
    assert!(screen(&p).contains(&text), "{}", screen(&p));
    press(&mut p, &h, KeyCode::Down);
    assert_eq!(p.selected_id(), Some(id), "it is the last row now");
    // Walking up from it goes through the whole list.
    let order: Vec<i64> = store
        .list_items(false)
        .unwrap()
        .iter()
        .map(|i| i.id)
        .collect();
    assert_eq!(walk_up(&mut p, &h), order);
    // Canceled by someone else: nothing is selected, and a move selects
    // the first row.
    press(&mut p, &h, KeyCode::End);
    store.cancel_item(id, T0).unwrap();
    p.refresh_with(&h.engine).unwrap();
    assert_eq!(p.selected_id(), None);
    press(&mut p, &h, KeyCode::Down);
    assert_eq!(p.selected_id(), order.first().copied());
}

#[test]
fn finished_rows_are_windowed_and_counted_too() {
    let h = harness(vec![]);
    let store = h.engine.store();
    let ids = many(store);
    for id in ids.iter().step_by(2) {
        store.cancel_item(*id, T0).unwrap();
    }
    let mut p = pane(&h, 3);
    assert_eq!(p.count(), ids.len() / 2);
    p.handle_key(key(KeyCode::Char('a')), &h.engine, now());
    let all: Vec<i64> = store
        .list_items(true)
        .unwrap()
        .iter()
        .map(|i| i.id)
        .collect();
    assert_eq!(walk_down(&mut p, &h), all);
    assert_eq!(p.count(), ids.len() / 2, "finished rows are not counted");
    let s = screen(&p);
    assert!(
        s.contains(&format!(
            "· {} · showing {} finished",
            ids.len() / 2,
            ids.len() / 2
        )),
        "{s}"
    );
}

#[test]
fn series_and_their_occurrences_come_first_whatever_the_window() {
    let h = harness(vec![]);
    let store = h.engine.store();
    many(store);
    let conv = store
        .create_conversation(Some("plants"), "user", T0)
        .unwrap();
    let rule = h.engine.parse_schedule("every day at 9am").unwrap();
    let series = h
        .engine
        .create_series(conv, Kind::Message, "water the plants", &rule)
        .unwrap();
    let first = h.engine.send_series_now(series).unwrap();
    let mut p = pane(&h, 2);
    let mut whole = pane(&h, 10_000);
    let shown = walk_down(&mut p, &h);
    assert_eq!(shown, walk_down(&mut whole, &h));
    assert_eq!(
        &shown[..2],
        &[series, first],
        "the series, then its occurrence"
    );
    assert_eq!(p.count(), whole.count());
    assert_eq!(walk_up(&mut p, &h), shown);
    // A rule under them says the rest go by time; the row it takes leaves
    // the selected row on screen wherever the window is.
    press(&mut p, &h, KeyCode::Home);
    let top = screen(&p);
    let rows: Vec<&str> = top.lines().collect();
    let at = rows
        .iter()
        .position(|r| r.contains("── the rest by time ─"))
        .expect(&top);
    assert!(rows[at - 1].contains("↳ water the plants"), "{top}");
    assert!(rows[at - 2].contains("recurring"), "{top}");
    for _ in 0..shown.len() {
        let s = screen(&p);
        assert!(
            s.lines().any(|l| l.starts_with('›')),
            "selection off screen:\n{s}"
        );
        press(&mut p, &h, KeyCode::Down);
    }
}
