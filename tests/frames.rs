//! Chat-only frames: while a reply streams and nothing else changes, a frame
//! redraws only the chat area. The terminal must then show exactly what a
//! whole frame would, also after keys, scrolling and wide characters.

mod common;

use std::ops::Range;
use std::sync::Arc;

use common::*;
use ratatui::Terminal;
use ratatui::backend::{Backend, ClearType, TestBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::{Position, Size};
use tock::config::Config;
use tock::engine::Event;
use tock::tui::app::App;
use tock::tui::frames::{Frames, ScrollRows};

/// Streamed text of every kind the chat renders: prose, a list, code,
/// wide characters, emoji, a long line that wraps.
fn chunk(i: usize) -> String {
    match i % 11 {
        0 => "\n\n- an item".to_string(),
        1 => " with words\n".to_string(),
        2 => "\n```rust\nfn f() {\n".to_string(),
        3 => "    let x = 1;\n".to_string(),
        4 => "}\n```\n\n".to_string(),
        5 => " 中文字符和".to_string(),
        6 => " 🙂 emoji".to_string(),
        7 => " **bold** and `code`".to_string(),
        8 => " a long run of words that wraps at the width of the chat area".to_string(),
        9 => "\n\n> quoted".to_string(),
        _ => format!(" word{i}"),
    }
}

/// A `TestBackend` that treats wide characters as a terminal does: writing
/// over either half of one erases both halves, and a wide character hides
/// the cell after it. (`TestBackend` sets only the cell written, so a cell
/// hidden behind a wide character would keep text a terminal has erased,
/// and show it once the wide character moves on.)
/// Also counts the times a scroll region moved rows.
struct Vt(TestBackend, usize);

fn wide(c: &Cell) -> bool {
    unicode_width::UnicodeWidthStr::width(c.symbol()) > 1
}

impl Backend for Vt {
    type Error = <TestBackend as Backend>::Error;
    fn draw<'a, I>(&mut self, content: I) -> Result<(), Self::Error>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        let blank = Cell::default();
        for (x, y, cell) in content {
            let width = self.0.buffer().area.width;
            let mut erase = Vec::new();
            if wide(&self.0.buffer()[(x, y)]) || wide(cell) {
                erase.push(x + 1);
            }
            if x > 0 && wide(&self.0.buffer()[(x - 1, y)]) {
                erase.push(x - 1);
            }
            for e in erase.into_iter().filter(|e| *e < width) {
                self.0.draw(std::iter::once((e, y, &blank)))?;
            }
            self.0.draw(std::iter::once((x, y, cell)))?;
        }
        Ok(())
    }
    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        self.0.hide_cursor()
    }
    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        self.0.show_cursor()
    }
    fn get_cursor_position(&mut self) -> Result<Position, Self::Error> {
        self.0.get_cursor_position()
    }
    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> Result<(), Self::Error> {
        self.0.set_cursor_position(position)
    }
    fn clear(&mut self) -> Result<(), Self::Error> {
        self.0.clear()
    }
    fn clear_region(&mut self, clear_type: ClearType) -> Result<(), Self::Error> {
        self.0.clear_region(clear_type)
    }
    fn size(&self) -> Result<Size, Self::Error> {
        self.0.size()
    }
    fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
        self.0.window_size()
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        self.0.flush()
    }
}

/// A terminal's scroll region moves whole rows, wide characters and all;
/// the rows at its foot come out blank.
impl ScrollRows for Vt {
    fn scroll_rows_up(&mut self, rows: Range<u16>, n: u16) -> Result<(), Self::Error> {
        self.1 += 1;
        let buf = self.0.buffer().clone();
        let blank = Cell::default();
        let moved = rows.clone().flat_map(|y| {
            let from = y + n;
            (0..buf.area.width).map(move |x| (x, y, from))
        });
        let cells: Vec<(u16, u16, &Cell)> = moved
            .map(|(x, y, from)| {
                let cell = if from < rows.end {
                    &buf[(x, from)]
                } else {
                    &blank
                };
                (x, y, cell)
            })
            .collect();
        self.0.draw(cells.into_iter())
    }
}

/// What a terminal shows of a buffer: every cell's text and style, rows as
/// lines, leaving out the cells a wide character covers (a terminal never
/// shows what is written there, and ratatui never writes them).
fn shown(buf: &ratatui::buffer::Buffer) -> Vec<String> {
    (0..buf.area.height)
        .map(|y| {
            visible_cells(buf, y)
                .iter()
                .map(|c| format!("{}[{:?}/{:?}/{:?}]", c.symbol(), c.fg, c.bg, c.modifier))
                .collect()
        })
        .collect()
}

fn whole_frame(app: &mut App, w: u16, h: u16) -> Vec<String> {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    let mut layout = Default::default();
    t.draw(|f| layout = tock::tui::view::draw(f, app)).unwrap();
    shown(t.backend().buffer())
}

#[tokio::test(start_paused = true)]
async fn chat_only_frames_leave_the_screen_as_a_whole_frame_would() {
    // SAFETY: this test binary has one test; nothing else reads the environment.
    unsafe {
        std::env::set_var("TZ", "UTC");
        std::env::set_var("TOCK_ECHO_DELAY_MS", "0");
    }
    // With the sidebar (whose columns scroll with the chat's rows and are
    // put back), without it, and without the scroll region (rows rewritten).
    for (w, h, scroll_region) in [
        (120u16, 40u16, true),
        (100, 30, true),
        (60, 15, true),
        (120, 40, false),
        (60, 15, false),
    ] {
        let gate = Arc::new(tokio::sync::Notify::new());
        let harness = harness_with(
            Scripted::new(vec![Step::Hold(vec![text("Start.")], gate.clone())]),
            Config::default(),
        );
        let mut rx = harness.engine.subscribe();
        let mut app = App::new(harness.engine.clone()).unwrap();
        app.in_tmux = false;
        app.sidebar_pref = Some(true);
        harness.engine.start();
        settle().await;
        for c in "explain".chars() {
            app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
        app.wait_writes(std::time::Duration::from_secs(20));
        settle().await;
        app.collect_writes();
        while let Ok(ev) = rx.try_recv() {
            app.on_engine(ev);
        }
        assert!(app.model.is_busy(), "the reply streams");
        let conversation_id = app.model.current.unwrap();
        let message_id = app.model.entries.last().unwrap().msg.id;

        let mut term = Terminal::new(Vt(TestBackend::new(w, h), 0)).unwrap();
        let mut frames = Frames::new();
        frames.scroll_region = scroll_region;
        let layout = frames.draw(&mut term, &app, false).unwrap();
        app.take_layout(layout);
        let mut offset = app.model.entries.last().unwrap().msg.content.len();
        for i in 0..300 {
            let text = chunk(i);
            let len = text.len();
            app.on_engine(Event::Delta {
                conversation_id,
                message_id,
                offset,
                text,
            });
            offset += len;
            // Every share of it on screen before the frame.
            while app.reveal_step() {}
            // Now and then something else changes: a key in the composer,
            // scrolling up and back down; at the end a command's name is
            // typed, and its menu stays over the chat while the reply
            // streams under it.
            let key = match i {
                _ if i % 37 == 36 && i < 280 => Some(KeyCode::Char('x')),
                150 => Some(KeyCode::PageUp),
                200 => Some(KeyCode::End),
                280 => {
                    let kill = KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL);
                    app.on_key(kill);
                    Some(KeyCode::Char('/'))
                }
                _ => None,
            };
            if let Some(k) = key {
                app.on_key(KeyEvent::new(k, KeyModifiers::NONE));
            }
            if i == 280 {
                assert_eq!(app.composer_text(), "/");
            }
            let layout = frames.draw(&mut term, &app, key.is_none()).unwrap();
            app.take_layout(layout);
            let expected = whole_frame(&mut app, w, h);
            let got = shown(term.backend().0.buffer());
            for (y, (a, b)) in got.iter().zip(&expected).enumerate() {
                assert_eq!(
                    a, b,
                    "{w}×{h}, scroll region {scroll_region}, after delta {i}, row {y}"
                );
            }
        }
        let scrolls = term.backend().1;
        assert_eq!(
            scrolls > 20,
            scroll_region,
            "{w}×{h}: rows moved by the terminal {scrolls} times"
        );
        assert!(
            frames.chat_only > 250,
            "{w}×{h}: most frames were chat-only ({} of {})",
            frames.chat_only,
            frames.chat_only + frames.whole
        );
        gate.notify_one();
        settle().await;
    }
}
