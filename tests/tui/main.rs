//! The TUI driven as a user would: key events into the real `App`, the real
//! engine on a temp database with a scripted provider and paused time, frames
//! drawn on ratatui's `TestBackend`.
//!
//! Snapshots are plain text (no colours); times come from the manual clock
//! (2026-11-30 00:53:20 UTC) shown in UTC.

#[path = "../common/mod.rs"]
mod common;

use std::sync::{Arc, Once};

use common::*;
use futures::future::BoxFuture;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
use tock::config::{Config, ConfigSource};
use tock::engine::{Engine, Event, ManualClock};
use tock::llm::{ChatRequest, EventStream, LlmError, Provider, StreamEvent, ToolCall};
use tock::store::{Kind, Message, MessageStatus, NewItem, OutboxItem, Role, Status, Store};
use tock::tui::app::{App, Focus};
use tock::tui::commands::COMMANDS;
use tock::tui::keymap::{Keymap, Scope};
use tock::tui::views::ViewKind;

/// A snapshot under the name it had when these tests were one file
/// (`tests/snapshots/tui__NAME.snap`), whichever module asserts it.
macro_rules! snap {
    ($name:expr, $value:expr) => {
        insta::with_settings!({ prepend_module_to_snapshot => false, snapshot_path => "../snapshots" }, {
            insta::assert_snapshot!(format!("tui__{}", $name), $value);
        })
    };
}

mod approvals;
mod composer_and_strip;
mod countdowns;
mod daily;
mod hostile;
mod keymap;
mod locks;
mod promises;
mod replies_and_files;
mod search_fork_tools;
mod series_and_f2;
mod snapshots;
mod status_lines;
mod themes;
mod updates;

// ----- harness ------------------------------------------------------------------

/// Make the process environment deterministic, once, before any test reads it:
/// times in UTC, no provider from the environment (the model label is `echo`),
/// not inside tmux (OSC 52 unwrapped).
fn init_env() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: every test calls this first, and `call_once` blocks the others
        // until it returns, so nothing reads the environment concurrently.
        unsafe {
            std::env::set_var("TZ", "UTC");
            std::env::set_var("TOCK_ECHO_DELAY_MS", "0");
            for k in [
                "OPENAI_API_KEY",
                "OPENAI_BASE_URL",
                "ANTHROPIC_API_KEY",
                "ANTHROPIC_BASE_URL",
                "OLLAMA_HOST",
                "TOCK_MODEL",
                "TMUX",
            ] {
                std::env::remove_var(k);
            }
        }
    });
}

/// The app, its engine, and the engine's event stream pumped into the app.
struct Ui {
    h: Harness,
    app: App,
    rx: tokio::sync::broadcast::Receiver<Event>,
}

impl Ui {
    fn new(steps: Vec<Step>) -> Self {
        Self::with_config(steps, Config::default())
    }

    fn with_config(steps: Vec<Step>, cfg: Config) -> Self {
        init_env();
        Self::on(harness_with(Scripted::new(steps), cfg))
    }

    fn on(h: Harness) -> Self {
        let rx = h.engine.subscribe();
        let mut app = App::new(h.engine.clone()).unwrap();
        app.in_tmux = false;
        // Most screens here are 80 columns, where the sidebar hides itself;
        // these tests keep it shown (`narrow_windows_*` test the default).
        app.sidebar_pref = Some(true);
        Self { h, app, rx }
    }

    /// Start dispatching and let the engine report its state.
    async fn start(&mut self) {
        self.h.engine.start();
        self.settle().await;
    }

    /// Let the engine run until idle, then hand everything it reported to the app.
    async fn settle(&mut self) {
        settle().await;
        self.pump();
    }

    /// Streamed text reaches the front ends at most every 100 ms: text that
    /// follows other text at once, and then nothing more, is handed on
    /// within 220 ms. Time for that, then settle.
    async fn streamed(&mut self) {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        self.settle().await;
    }

    fn pump(&mut self) {
        use tokio::sync::broadcast::error::TryRecvError;
        self.app.collect_writes();
        loop {
            let ev = match self.rx.try_recv() {
                Ok(e) => e,
                Err(TryRecvError::Lagged(_)) => Event::External,
                Err(_) => break,
            };
            self.app.on_engine(ev);
        }
    }

    /// A key, and whatever database write it started (the app runs those
    /// on its writer thread); tests of that thread call `app.on_key`.
    fn key(&mut self, code: KeyCode, mods: KeyModifiers) {
        // A question or a prompt on top is read before it is answered: a
        // letter at once after the strip's letter that opened it is taken
        // for typing meant for the composer.
        if matches!(self.app.top(), Some(ViewKind::Confirm | ViewKind::Prompt))
            && self.app.pane_letter_opened_the_top()
        {
            self.h.clock.jump(tock::tui::app::TYPED_ON_MS);
        }
        self.app.on_key(KeyEvent::new(code, mods));
        // A letter of the strip or the list that acts at once waits to see
        // whether a word is being typed; a user reading the screen types
        // nothing more at once, so it acts.
        if self.app.holds_a_pane_letter() {
            self.h.clock.jump(tock::tui::app::TYPED_ON_MS);
            self.app.on_tick();
        }
        if self.app.writes_pending() {
            self.app.wait_writes(std::time::Duration::from_secs(20));
        }
    }
    fn press(&mut self, code: KeyCode) {
        self.key(code, KeyModifiers::NONE);
    }
    fn ch(&mut self, c: char) {
        self.press(KeyCode::Char(c));
    }
    fn ctrl(&mut self, c: char) {
        self.key(KeyCode::Char(c), KeyModifiers::CONTROL);
    }
    fn typ(&mut self, s: &str) {
        for c in s.chars() {
            self.ch(c);
        }
    }
    /// Keys as the app gets them from a fast typist: no time between them,
    /// and no waiting for the writes they start (see `key`).
    fn typ_at_once(&mut self, s: &str) {
        for c in s.chars() {
            self.app.on_key(KeyEvent::from(KeyCode::Char(c)));
        }
    }
    /// Backspace `n` times (the text inputs' Ctrl+U is undo, not "delete line").
    fn erase(&mut self, n: usize) {
        for _ in 0..n {
            self.press(KeyCode::Backspace);
        }
    }
    /// The key that moves the focus on, as a user presses it: Shift+Tab
    /// from an empty composer (Tab stays there), Tab elsewhere and over an
    /// approval card (which Tab steps through).
    fn tab(&mut self) {
        if self.app.focus == tock::tui::app::Focus::Composer
            && self.app.composer.is_blank()
            && self.app.top() != Some(ViewKind::Approval)
        {
            self.key(KeyCode::BackTab, KeyModifiers::SHIFT);
        } else {
            self.press(KeyCode::Tab);
        }
    }
    fn enter(&mut self) {
        self.press(KeyCode::Enter);
    }
    /// Type a line and press Enter.
    fn say(&mut self, s: &str) {
        self.typ(s);
        self.enter();
    }

    fn render(&mut self, w: u16, h: u16) -> Terminal<TestBackend> {
        // As the app's loop does before each frame.
        self.app.hold_scroll();
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        let mut layout = Default::default();
        t.draw(|f| layout = tock::tui::view::draw(f, &self.app))
            .unwrap();
        self.app.take_layout(layout);
        t
    }

    /// The frame as text, one line per row.
    fn screen(&mut self, w: u16, h: u16) -> String {
        let t = self.render(w, h);
        screen_text(&t)
    }

    fn store(&self) -> &Store {
        self.h.engine.store()
    }
    fn conv(&self) -> i64 {
        self.app.model.current.unwrap()
    }
    fn messages(&self) -> Vec<Message> {
        self.store().messages(self.conv()).unwrap()
    }
    fn user_texts(&self) -> Vec<String> {
        self.messages()
            .into_iter()
            .filter(|m| m.role == Role::User)
            .map(|m| m.content)
            .collect()
    }
    /// Every outbox row of the current conversation, finished ones included.
    fn rows(&self) -> Vec<OutboxItem> {
        let conv = self.conv();
        self.store()
            .list_items(true)
            .unwrap()
            .into_iter()
            .filter(|i| i.conversation_id == Some(conv))
            .collect()
    }
    fn row(&self, id: i64) -> OutboxItem {
        self.store().item(id).unwrap().unwrap()
    }
    /// The row of the strip's selected item, if one is selected.
    fn strip_sel(&self) -> Option<usize> {
        let id = self.app.strip.selected?;
        self.app.model.strip_items().position(|i| i.id == id)
    }
    /// The sidebar row the cursor is on.
    fn sidebar_sel(&self) -> usize {
        let sel = self.app.sidebar.selected.or(self.app.model.current);
        self.app
            .sidebar
            .visible(&self.app.model)
            .iter()
            .position(|c| Some(c.id) == sel)
            .unwrap_or(0)
    }
    /// Answer the approval card deliberately: choose, then confirm.
    fn approve(&mut self) {
        self.press(KeyCode::Left);
        self.enter();
    }
    fn deny(&mut self) {
        self.press(KeyCode::Right);
        self.enter();
    }
    fn status_line(&self) -> String {
        self.app
            .status
            .as_ref()
            .map(|s| s.text.clone())
            .unwrap_or_default()
    }
}

fn screen_text(t: &Terminal<TestBackend>) -> String {
    let buf = t.backend().buffer();
    let mut out = String::new();
    for y in 0..buf.area.height {
        for c in visible_cells(buf, y) {
            out.push_str(c.symbol());
        }
        out.push('\n');
    }
    out
}

fn tool_call(name: &str, args: &str) -> StreamEvent {
    StreamEvent::ToolCall(ToolCall {
        id: "call_1".into(),
        name: name.into(),
        arguments: args.into(),
    })
}

fn b64(s: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(s)
}

fn unb64(s: &str) -> String {
    use base64::Engine as _;
    String::from_utf8(base64::engine::general_purpose::STANDARD.decode(s).unwrap()).unwrap()
}

/// The payloads of the OSC 52 clipboard writes in the app's output.
fn clipboard_writes(app: &App) -> Vec<String> {
    app.output
        .raw
        .iter()
        .filter_map(|r| r.strip_prefix("\x1b]52;c;"))
        .map(|r| unb64(r.trim_end_matches('\x07')))
        .collect()
}

const MARKDOWN_REPLY: [&str; 4] = [
    "# Building tock\n\nThree steps:\n\n",
    "- install **Rust** 1.85\n- run `cargo build`\n- run the tests\n",
    "\n```rust\nfn main() {\n    println!(\"hello\");\n}\n```\n",
    "\nThat is all.",
];

fn markdown_steps() -> Vec<Step> {
    let mut evs: Vec<StreamEvent> = MARKDOWN_REPLY.iter().map(|s| text(s)).collect();
    evs.push(done());
    vec![Step::Reply(evs)]
}

impl Ui {
    /// A started app whose provider accepts a request only when the gate
    /// returned is notified (the row stays in *sending* until then).
    async fn slow_to_accept() -> (Self, Arc<tokio::sync::Notify>) {
        init_env();
        let gate = Arc::new(tokio::sync::Notify::new());
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("tock.db")).unwrap();
        let clock = Arc::new(ManualClock::new(T0));
        let config = Arc::new(
            ConfigSource::from_config(Config::default())
                .with_provider(Arc::new(SlowAccept { gate: gate.clone() })),
        );
        let engine = Engine::new(store, config, clock.clone(), options());
        let mut ui = Ui::on(Harness {
            engine,
            clock,
            provider: Scripted::new(vec![]),
            dir,
        });
        ui.start().await;
        (ui, gate)
    }
}

/// A provider that accepts a request only when told to (the row stays in *sending*).
struct SlowAccept {
    gate: Arc<tokio::sync::Notify>,
}

impl Provider for SlowAccept {
    fn name(&self) -> &'static str {
        "slow"
    }
    fn start<'a>(&'a self, _req: &'a ChatRequest) -> BoxFuture<'a, Result<EventStream, LlmError>> {
        Box::pin(async move {
            self.gate.notified().await;
            let s: EventStream = Box::pin(futures::stream::iter(vec![Ok(text("ok")), Ok(done())]));
            Ok(s)
        })
    }
}

fn task_steps() -> Vec<Step> {
    vec![
        Step::Reply(vec![
            text("I'll check the build in an hour."),
            tool_call(
                "schedule_task",
                r#"{"instruction":"check whether the CI build is green","delay_secs":3600,"title":"build check"}"#,
            ),
            done(),
        ]),
        Step::Reply(vec![text("Done: scheduled for an hour from now."), done()]),
    ]
}

fn forbidden(c: char) -> bool {
    (c as u32) < 0x20
        || (0x7f..=0x9f).contains(&(c as u32))
        || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

fn assert_clean(t: &Terminal<TestBackend>) {
    let buf = t.backend().buffer();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            let sym = buf[(x, y)].symbol();
            assert!(
                !sym.chars().any(forbidden),
                "cell ({x},{y}) holds {sym:?}:\n{}",
                screen_text(t)
            );
        }
    }
}

fn reply_step(s: &str) -> Step {
    Step::Reply(vec![text(s), done()])
}

/// An sRGB colour as a terminal shows it: named colours as xterm's defaults,
/// the 256-colour cube and greys as every terminal defines them. `Reset`
/// stands for the terminal's own colour (`default`).
fn rgb(c: ratatui::style::Color, default: (u8, u8, u8)) -> (u8, u8, u8) {
    use ratatui::style::Color as C;
    const NAMED: [(u8, u8, u8); 16] = [
        (0, 0, 0),
        (205, 0, 0),
        (0, 205, 0),
        (205, 205, 0),
        (0, 0, 238),
        (205, 0, 205),
        (0, 205, 205),
        (229, 229, 229),
        (127, 127, 127),
        (255, 0, 0),
        (0, 255, 0),
        (255, 255, 0),
        (92, 92, 255),
        (255, 0, 255),
        (0, 255, 255),
        (255, 255, 255),
    ];
    let named = |i: usize| NAMED[i];
    match c {
        C::Reset => default,
        C::Black => named(0),
        C::Red => named(1),
        C::Green => named(2),
        C::Yellow => named(3),
        C::Blue => named(4),
        C::Magenta => named(5),
        C::Cyan => named(6),
        C::Gray => named(7),
        C::DarkGray => named(8),
        C::LightRed => named(9),
        C::LightGreen => named(10),
        C::LightYellow => named(11),
        C::LightBlue => named(12),
        C::LightMagenta => named(13),
        C::LightCyan => named(14),
        C::White => named(15),
        C::Rgb(r, g, b) => (r, g, b),
        C::Indexed(i) if i < 16 => named(i as usize),
        C::Indexed(i) if i < 232 => {
            let level = |v: u8| if v == 0 { 0 } else { 55 + 40 * v };
            let i = i - 16;
            (level(i / 36), level(i / 6 % 6), level(i % 6))
        }
        C::Indexed(i) => {
            let v = 8 + 10 * (i - 232);
            (v, v, v)
        }
    }
}

/// WCAG contrast ratio of two colours (1 to 21).
fn contrast(a: (u8, u8, u8), b: (u8, u8, u8)) -> f64 {
    let lum = |(r, g, b): (u8, u8, u8)| {
        let ch = |v: u8| {
            let v = f64::from(v) / 255.0;
            if v <= 0.03928 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * ch(r) + 0.7152 * ch(g) + 0.0722 * ch(b)
    };
    let (x, y) = (lum(a), lum(b));
    (x.max(y) + 0.05) / (x.min(y) + 0.05)
}

fn theme_config(theme: &str) -> Config {
    toml::from_str(&format!("[ui]\ntheme = \"{theme}\"\n")).unwrap()
}

/// A UI whose first message's reply has streamed `first` and waits for
/// more, with its conversation.
async fn streaming(first: &str) -> (Ui, i64) {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![Step::Hold(vec![text(first)], gate)]);
    ui.start().await;
    ui.say("hello");
    ui.settle().await;
    let conv = ui.conv();
    (ui, conv)
}
