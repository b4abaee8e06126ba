//! What the TUI's reloads cost on a large database: the store queries it
//! makes after an outbox change and when the scheduled pane (F2) opens, the
//! same handlers end to end, and a frame of the pane while scrolling.
//!
//! `cargo bench --bench tui_store` (add `-- --quick` for a fast pass).
//!
//! The database (seeded once by `tock-seed` and cached, see
//! `benches/common`): 1,000 conversations, 200,000 messages, 1,000,000
//! finished outbox rows, 100,000 pending rows scheduled 1 hour to 30 days
//! ahead. The app is opened on its newest conversation.
//!
//! - `outbox_change/<call>`: each store call `App::on_engine(Event::Outbox)`
//!   makes (`Model::reload_items` and `Model::reload_summaries`, and the
//!   status bar's `pending_at` when a frame next reads the counts), and
//!   `outbox_change/app`: the whole handler; `outbox_change/app_rows`: the
//!   handler for a change that names its row (`Event::OutboxRows`).
//! - `f2_open/<call>`: each store call of `ScheduledPane::refresh_with`
//!   (`list_window` twice, around the selection; `conversations_by_id` for
//!   the titles of the rows read), and `f2_open/pane`: the whole load;
//!   `f2_open/toggle_finished`: `a`, which reloads with the finished rows
//!   shown or hidden (each run does one or the other).
//! - `f2_scroll/frame`: one key down in the open pane, then its frame
//!   (100 x 30 cells; the window is read further every 100 rows or so);
//!   `f2_scroll/app_frame`: the same key through `App::on_key` with the
//!   pane open, then the whole screen (`view::draw`); `f2_scroll/end_home`:
//!   End or Home (in turn) and the frame.
//! - `startup/app_new`: `App::new` (everything loaded before the first frame).
use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use tock::config::{Config, ConfigSource};
use tock::engine::{Engine, Event, ManualClock, Options};
use tock::store::{ListFilter, ListFrom, Store};
use tock::tui::app::App;
use tock::tui::scheduled::ScheduledPane;
use tock::tui::view;

mod common;
use common::{NOW, Shape};

/// The target scale.
pub const LARGE: Shape = Shape {
    conversations: 1_000,
    messages: 200_000,
    history: 1_000_000,
    scheduled: 100_000,
    due_now: 0,
};

fn engine() -> Engine {
    let store = Store::open(&common::database(LARGE)).expect("store");
    Engine::new(
        store,
        Arc::new(ConfigSource::from_config(Config::default())),
        Arc::new(ManualClock::new(NOW)),
        Options {
            watch_db: false,
            ..Options::default()
        },
    )
}

fn bench(c: &mut Criterion) {
    let engine = engine();
    let mut app = App::new(engine.clone()).expect("app");
    let current = app.model.current.expect("a conversation is open");
    let reader = engine.reader().clone();

    let mut g = c.benchmark_group("outbox_change");
    g.sample_size(20);
    g.bench_function("conversation_items", |b| {
        b.iter(|| black_box(reader.conversation_items(current).expect("items")))
    });
    g.bench_function("item", |b| {
        b.iter(|| black_box(reader.item(1).expect("item")))
    });
    g.bench_function("active_series_by_conversation", |b| {
        b.iter(|| black_box(reader.active_series_by_conversation().expect("series")))
    });
    g.bench_function("open_counts", |b| {
        b.iter(|| black_box(reader.open_counts().expect("counts")))
    });
    g.bench_function("pending_at", |b| {
        b.iter(|| black_box(reader.pending_at(NOW).expect("pending")))
    });
    g.bench_function("gates", |b| {
        b.iter(|| black_box(tock::engine::state::gates(&reader).expect("gates")))
    });
    g.bench_function("app", |b| b.iter(|| app.on_engine(Event::Outbox)));
    // What a send, a claim or a finished reply costs: its row named.
    g.bench_function("app_rows", |b| {
        b.iter(|| app.on_engine(Event::OutboxRows(vec![1])))
    });
    g.finish();

    let mut g = c.benchmark_group("f2_open");
    g.sample_size(10);
    let filter = ListFilter {
        finished: false,
        outside_series: false,
    };
    g.bench_function("list_window", |b| {
        b.iter(|| {
            black_box(
                reader
                    .list_window(filter, ListFrom::After(None), 200)
                    .expect("window"),
            )
        })
    });
    let mut convs: Vec<i64> = reader
        .list_window(filter, ListFrom::After(None), 200)
        .expect("window")
        .iter()
        .filter_map(|i| i.conversation_id)
        .collect();
    convs.sort_unstable();
    convs.dedup();
    g.bench_function("conversations_by_id", |b| {
        b.iter(|| black_box(reader.conversations_by_id(&convs).expect("titles")))
    });
    g.bench_function("listed_counts", |b| {
        b.iter(|| black_box(reader.listed_counts().expect("counts")))
    });
    g.bench_function("list_series", |b| {
        b.iter(|| black_box(engine.list_series_from(&reader, false).expect("series")))
    });
    g.bench_function("waiting_approvals", |b| {
        b.iter(|| black_box(reader.waiting_approvals().expect("approvals")))
    });
    g.bench_function("pane", |b| {
        b.iter(|| {
            let mut p = ScheduledPane::new();
            p.refresh_with(&engine).expect("refresh");
            black_box(p)
        })
    });
    let now_local = chrono::DateTime::from_timestamp_millis(NOW)
        .expect("now")
        .with_timezone(&tock::tui::shown_zone::ShownZone::System);
    let mut toggled = ScheduledPane::new();
    toggled.refresh_with(&engine).expect("refresh");
    let a = KeyEvent::new(KeyCode::Char('a'), KeyModifiers::NONE);
    g.bench_function("toggle_finished", |b| {
        b.iter(|| black_box(toggled.handle_key(a, &engine, now_local)))
    });
    g.finish();

    let mut g = c.benchmark_group("f2_scroll");
    let mut pane = ScheduledPane::new();
    pane.refresh_with(&engine).expect("refresh");
    let area = Rect::new(0, 0, 100, 30);
    let mut buf = Buffer::empty(area);
    let now = chrono::DateTime::from_timestamp_millis(NOW)
        .expect("now")
        .with_timezone(&tock::tui::shown_zone::ShownZone::System);
    pane.render(area, &mut buf, now);
    let (down, up) = (
        KeyEvent::new(KeyCode::Down, KeyModifiers::NONE),
        KeyEvent::new(KeyCode::Up, KeyModifiers::NONE),
    );
    let mut n = 0usize;
    g.bench_function("frame", |b| {
        b.iter(|| {
            // Down 500 rows, back up 500, and again.
            n += 1;
            let key = if (n / 500).is_multiple_of(2) {
                down
            } else {
                up
            };
            black_box(pane.handle_key(key, &engine, now));
            buf.reset();
            pane.render(area, &mut buf, now);
        })
    });
    let (end, home) = (
        KeyEvent::new(KeyCode::End, KeyModifiers::NONE),
        KeyEvent::new(KeyCode::Home, KeyModifiers::NONE),
    );
    let mut n = 0usize;
    g.bench_function("end_home", |b| {
        b.iter(|| {
            n += 1;
            let key = if n.is_multiple_of(2) { end } else { home };
            black_box(pane.handle_key(key, &engine, now));
            buf.reset();
            pane.render(area, &mut buf, now);
        })
    });
    // The same through the app: F2 opens the pane over the chat.
    let mut term = Terminal::new(TestBackend::new(100, 30)).expect("terminal");
    app.on_key(KeyEvent::new(KeyCode::F(2), KeyModifiers::NONE));
    term.draw(|f| {
        view::draw(f, &app);
    })
    .expect("draw");
    let mut n = 0usize;
    g.bench_function("app_frame", |b| {
        b.iter(|| {
            n += 1;
            let key = if (n / 500).is_multiple_of(2) {
                down
            } else {
                up
            };
            app.on_key(key);
            let mut f = term.get_frame();
            view::draw(&mut f, &app);
        })
    });
    g.finish();

    let mut g = c.benchmark_group("startup");
    g.sample_size(10);
    g.bench_function("app_new", |b| {
        b.iter(|| black_box(App::new(engine.clone()).expect("app")))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
