//! The TUI driven as a user would: key events into the real `App`, the real
//! engine on a temp database with a scripted provider and paused time, frames
//! drawn on ratatui's `TestBackend`.
//!
//! Snapshots are plain text (no colours); times come from the manual clock
//! (2026-11-30 00:53:20 UTC) shown in UTC.

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
        self.app.on_key(KeyEvent::new(code, mods));
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
    /// Backspace `n` times (the text inputs' Ctrl+U is undo, not "delete line").
    fn erase(&mut self, n: usize) {
        for _ in 0..n {
            self.press(KeyCode::Backspace);
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

// ----- snapshots ------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn snapshot_empty_start() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    let small = ui.render(80, 24);
    let s = screen_text(&small);
    assert!(s.contains("New conversation."), "{s}");
    assert!(s.contains(" echo ") && s.contains(" offline "), "{s}");
    insta::assert_snapshot!("empty_start_80x24", small.backend());
    insta::assert_snapshot!("empty_start_120x32", ui.render(120, 32).backend());
}

#[tokio::test(start_paused = true)]
async fn snapshot_streamed_markdown_reply() {
    let mut ui = Ui::new(markdown_steps());
    ui.start().await;
    ui.say("How do I build it?");
    ui.settle().await;
    let msgs = ui.messages();
    assert_eq!(msgs.len(), 2);
    assert_eq!(msgs[1].content, MARKDOWN_REPLY.concat());
    assert_eq!(msgs[1].status, MessageStatus::Complete);
    let s = ui.screen(80, 24);
    assert!(
        s.contains("Building tock")
            && !s.contains("# Building")
            && s.contains("• install Rust 1.85"),
        "headings without their #: {s}"
    );
    assert!(s.contains("▎ fn main() {"), "code set apart by a bar: {s}");
    assert!(
        !s.contains("**") && !s.contains('`'),
        "inline markup is rendered:\n{s}"
    );
    assert!(s.contains("println!(\"hello\");"), "{s}");
    assert!(!s.contains("```"), "fences are not shown raw:\n{s}");
    insta::assert_snapshot!("markdown_reply_80x24", ui.render(80, 24).backend());
    insta::assert_snapshot!("markdown_reply_120x32", ui.render(120, 32).backend());
}

#[tokio::test(start_paused = true)]
async fn snapshot_streaming_reply_with_two_queued() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![Step::Hold(
        vec![text("Let me think about "), text("that for a moment")],
        gate.clone(),
    )]);
    ui.start().await;
    ui.say("What is a monad?");
    ui.settle().await;
    ui.streamed().await;
    assert!(ui.app.model.is_busy());
    ui.say("and a functor?");
    ui.say("answer both in one table please");
    ui.settle().await;
    let s = ui.screen(80, 24);
    assert_eq!(s.matches("⏳ queued").count(), 2, "{s}");
    assert!(s.contains("streaming"), "{s}");
    insta::assert_snapshot!("streaming_two_queued_80x24", ui.render(80, 24).backend());
    insta::assert_snapshot!("streaming_two_queued_120x32", ui.render(120, 32).backend());
    gate.notify_one();
    ui.settle().await;
}

/// A model that reasons before it answers: where its text will be, the
/// reply says so and how far it has got; the reasoning is not shown, and
/// the note goes once the text begins.
#[tokio::test(start_paused = true)]
async fn a_reasoning_model_shows_it_is_thinking_until_its_text_comes() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let reasoning = tock::llm::StreamEvent::Reasoning("Weighing the options here.".into());
    let mut ui = Ui::new(vec![Step::Hold(vec![reasoning], gate.clone())]);
    ui.start().await;
    ui.say("Which one?");
    ui.settle().await;
    ui.streamed().await;
    let s = ui.screen(80, 24);
    assert!(s.contains("… thinking (26 characters so far)"), "{s}");
    assert!(!s.contains("Weighing"), "{s}");
    insta::assert_snapshot!("thinking_80x24", s);
    // Drawn again (a reload of the conversation), it still says so.
    ui.app.model.reload_messages();
    assert!(ui.screen(80, 24).contains("thinking (26 characters"));
    gate.notify_one();
    ui.settle().await;
    assert!(!ui.screen(80, 24).contains("thinking"));
}

/// A reply another process streams (`tock daemon`) whose model reasons:
/// this TUI reads how much from the database and says so too (it showed
/// only "…", the count being an event of the other process).
#[tokio::test(start_paused = true)]
async fn thinking_in_another_process_shows_here_too() {
    let mut ui = Ui::new(vec![]);
    let c = ui.conv();
    let store = ui.store();
    let id = store
        .enqueue(&NewItem::new(c, Kind::Queued, "a deep question"), T0)
        .unwrap();
    assert!(store.claim(id, "the daemon", T0).unwrap());
    let item = store.item(id).unwrap().unwrap();
    let reply = store.accept(&item, "the daemon", "m", T0).unwrap().unwrap();
    store.set_reasoning_chars(reply, 1234).unwrap();
    ui.app.on_engine(Event::External);
    let s = ui.screen(80, 24);
    assert!(s.contains("… thinking (1.2k characters so far)"), "{s}");
}

/// "queued: it goes as soon as this reply finishes" is not left standing
/// once the reply is stopped elsewhere (`tock stop`, another tock): the
/// queue is paused then, and the strip says so.
#[tokio::test(start_paused = true)]
async fn the_queued_line_goes_when_the_reply_is_stopped_elsewhere() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![Step::Hold(vec![text("Let me think")], gate.clone())]);
    ui.start().await;
    ui.say("What is a monad?");
    ui.settle().await;
    ui.streamed().await;
    ui.say("and a functor?");
    ui.settle().await;
    assert_eq!(
        ui.status_line(),
        "queued: it goes as soon as this reply finishes"
    );
    // Stopped by the engine, not by a key here.
    assert!(ui.h.engine.stop(ui.conv()));
    ui.settle().await;
    let s = ui.screen(100, 30);
    assert!(s.contains("paused after stop"), "{s}");
    assert!(!s.contains("it goes as soon as this reply finishes"), "{s}");
}

/// ↑ while a reply streams says to wait for it; the line goes once the
/// reply has finished, where it would have stood for its full 20 s.
#[tokio::test(start_paused = true)]
async fn the_wait_for_the_reply_line_goes_when_the_reply_finishes() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![Step::Hold(vec![text("Let me think")], gate.clone())]);
    ui.start().await;
    ui.say("What is a monad?");
    ui.settle().await;
    ui.streamed().await;
    ui.press(KeyCode::Up);
    assert!(
        ui.status_line().starts_with("wait for the reply to finish"),
        "{}",
        ui.status_line()
    );
    gate.notify_one();
    ui.settle().await;
    assert!(!ui.app.model.is_busy());
    assert!(
        !ui.status_line().contains("wait for the reply"),
        "{}",
        ui.status_line()
    );
    // ↑ now edits the last message.
    ui.press(KeyCode::Up);
    assert_eq!(ui.app.composer_text(), "What is a monad?");
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

#[tokio::test(start_paused = true)]
async fn snapshot_sending_bubble() {
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
    ui.say("is anyone there?");
    ui.settle().await;
    let rows = ui.rows();
    assert_eq!(rows[0].status, Status::Sending);
    let s = ui.screen(80, 24);
    assert!(
        s.contains("◌ sending…") && s.contains("is anyone there?"),
        "{s}"
    );
    assert!(
        !s.contains("pending ("),
        "a sending item is a bubble, not a strip row:\n{s}"
    );
    insta::assert_snapshot!("sending_bubble_80x24", ui.render(80, 24).backend());
    gate.notify_one();
    ui.settle().await;
    assert_eq!(ui.row(rows[0].id).status, Status::Sent);
    assert_eq!(ui.messages()[1].content, "ok");
}

#[tokio::test(start_paused = true)]
async fn snapshot_retrying_item() {
    let mut ui = Ui::new(vec![Step::Fail(LlmError::transient("connection refused"))]);
    ui.start().await;
    ui.say("ping");
    ui.settle().await;
    let row = ui.rows().remove(0);
    assert_eq!((row.status, row.attempts), (Status::Pending, 1));
    assert!(row.next_attempt_at.is_some());
    let s = ui.screen(80, 24);
    assert!(s.contains("↯ retrying in 5s: connection refused"), "{s}");
    insta::assert_snapshot!("retrying_80x24", ui.render(80, 24).backend());
    // The countdown follows the clock.
    tokio::time::advance(std::time::Duration::from_secs(2)).await;
    assert!(ui.screen(80, 24).contains("↯ retrying in 3s"));
}

#[tokio::test(start_paused = true)]
async fn snapshot_failed_item() {
    let mut ui = Ui::new(vec![Step::Fail(LlmError::permanent(
        "401 Unauthorized: invalid API key",
    ))]);
    ui.start().await;
    ui.say("ping");
    ui.settle().await;
    assert_eq!(ui.rows()[0].status, Status::Failed);
    let s = ui.screen(80, 24);
    assert!(s.contains("✗ failed: 401 Unauthorized"), "{s}");
    insta::assert_snapshot!("failed_80x24", ui.render(80, 24).backend());
}

/// A reply that fails for good holds what was queued behind its message,
/// and the strip says why the queue is paused.
#[tokio::test(start_paused = true)]
async fn a_reply_failed_for_good_says_the_queue_behind_it_is_paused() {
    let mut ui = Ui::new(vec![Step::Cut(
        vec![text("half ")],
        LlmError::permanent("malformed stream event"),
    )]);
    ui.start().await;
    ui.say("first");
    ui.say("second");
    ui.settle().await;
    let s = ui.screen(100, 24);
    assert!(s.contains("⏸ paused after a failed reply"), "{s}");
    assert!(s.contains("second"), "{s}");
}

/// A Ctrl+R whose request cannot reach the provider shows where its reply
/// will be, counting down to the next try; Esc calls it off and the
/// earlier reply is the answer again.
#[tokio::test(start_paused = true)]
async fn a_regeneration_retrying_shows_in_the_chat_and_esc_calls_it_off() {
    let mut ui = Ui::new(vec![
        Step::Reply(vec![text("the first answer"), done()]),
        Step::Fail(LlmError::transient("connection refused")),
        Step::Reply(vec![text("never asked for"), done()]),
    ]);
    ui.start().await;
    ui.say("ping");
    ui.settle().await;
    ui.ctrl('r');
    ui.settle().await;
    let s = ui.screen(80, 24);
    assert!(
        s.contains("new reply  ↯ retrying in 5s: connection refused"),
        "{s}"
    );
    assert!(
        s.contains("Esc calls it off and keeps the earlier reply"),
        "{s}"
    );
    insta::assert_snapshot!("regeneration_retrying_80x24", ui.render(80, 24).backend());
    // At 60 columns the reason gives way to the countdown.
    ui.app.sidebar_pref = Some(false);
    let narrow = ui.screen(60, 15);
    ui.app.sidebar_pref = Some(true);
    assert!(narrow.contains("new reply  ↯ retrying in 5s"), "{narrow}");
    // The countdown follows the clock.
    tokio::time::advance(std::time::Duration::from_secs(2)).await;
    assert!(ui.screen(80, 24).contains("↯ retrying in 3s"));
    let now = ui.app.model.now_ms();
    assert!(ui.app.next_tick_at().is_some_and(|t| t <= now + 1000));
    // Esc: called off; the earlier reply is back, and nothing more is sent.
    ui.press(KeyCode::Esc);
    ui.settle().await;
    assert!(
        ui.status_line().contains("regeneration called off"),
        "{}",
        ui.status_line()
    );
    let s = ui.screen(80, 24);
    assert!(!s.contains("new reply"), "{s}");
    assert!(!s.contains("(replaced)"), "{s}");
    assert!(s.contains("the first answer"), "{s}");
    tokio::time::advance(std::time::Duration::from_secs(30)).await;
    ui.settle().await;
    assert!(!ui.screen(80, 24).contains("never asked for"));
    assert_eq!(ui.h.provider.requests().len(), 2);
}

#[tokio::test(start_paused = true)]
async fn snapshot_scheduled_item() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.say("/later 1h check the build");
    ui.settle().await;
    let s = ui.screen(80, 24);
    assert!(s.contains("⏰ Mon 30 Nov 01:53"), "{s}");
    assert!(s.contains("check the build"), "{s}");
    insta::assert_snapshot!("scheduled_80x24", ui.render(80, 24).backend());
}

/// In a narrow strip, a scheduled item's time stays whole and readable:
/// the date goes first (the time alone today), then the text is cut (the
/// countdown was cut mid-number: `⏰ Sun 6 Dec 17:12 (in 9m 4…`).
#[tokio::test(start_paused = true)]
async fn a_narrow_strip_shortens_the_date_not_the_countdown() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.say(
        "/later 10m review the pull requests that are waiting for me in the main repository today",
    );
    ui.settle().await;
    tokio::time::advance(std::time::Duration::from_secs(56)).await;
    ui.settle().await;
    ui.app.sidebar_pref = Some(false);
    let s = ui.screen(60, 15);
    assert!(
        s.contains("  ⏰ 01:03 (in 9m 4s) · review the pull requests that are w…"),
        "{s}"
    );
    insta::assert_snapshot!("strip_narrow_time_60x15", s);
    // Where there is room, the whole date.
    let s = ui.screen(120, 40);
    assert!(
        s.contains("  ⏰ Mon 30 Nov 01:03 (in 9m 4s) · review the pull requests"),
        "{s}"
    );
    insta::assert_snapshot!("strip_narrow_time_120x40", s);
    ui.app.sidebar_pref = None;
}

#[tokio::test(start_paused = true)]
async fn snapshot_composer_previews() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.typ("/at tomorrow 9am standup");
    let s = ui.screen(80, 24);
    assert!(s.contains("⏰ sends Tue 1 Dec 09:00"), "{s}");
    insta::assert_snapshot!("preview_at_80x24", ui.render(80, 24).backend());
    ui.app.set_composer("");
    ui.typ("/later blah x");
    let s = ui.screen(80, 24);
    assert!(s.contains("✗ "), "{s}");
    insta::assert_snapshot!("preview_error_80x24", ui.render(80, 24).backend());
    // Too long for the top border, it goes on along the bottom one: the
    // example at its end is shown, not cut.
    ui.app.set_composer("");
    ui.typ("/later 1y x");
    let s = ui.screen(120, 40);
    assert!(s.contains("╭ ✗ years and months are not durations"), "{s}");
    assert!(s.contains("2030-01-15 09:00 ─"), "{s}");
}

#[tokio::test(start_paused = true)]
async fn snapshot_help_popup() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.press(KeyCode::F(1));
    assert!(ui.app.popup() == Some(ViewKind::Help));
    insta::assert_snapshot!("help_80x24", ui.render(80, 24).backend());
    insta::assert_snapshot!("help_120x32", ui.render(120, 32).backend());
    // At 80x24 it does not fit: it scrolls, and everything in it can be reached.
    let mut seen = ui.screen(80, 24);
    assert!(seen.contains(" more ╯"), "{seen}");
    for _ in 0..200 {
        ui.press(KeyCode::Down);
        seen.push_str(&ui.screen(80, 24));
    }
    for (_, keys, _) in ui.app.keys.help_rows(false) {
        assert!(seen.contains(&keys), "{keys:?} cannot be reached in help");
    }
    for c in COMMANDS {
        assert!(
            seen.contains(c.usage),
            "{} cannot be reached in help",
            c.usage
        );
    }
    for _ in 0..10 {
        ui.press(KeyCode::PageDown);
    }
    let s = ui.screen(80, 24);
    assert!(s.contains("/quit") && !s.contains("more ╯"), "{s}");
    insta::assert_snapshot!("help_80x24_end", ui.render(80, 24).backend());
    ui.press(KeyCode::PageUp);
    assert!(ui.screen(80, 24).contains("more ╯"));
    assert!(ui.app.popup() == Some(ViewKind::Help));
    // Any other key closes it, and a character is not lost: it is typed.
    ui.ch('a');
    assert!(ui.app.popup().is_none());
    assert_eq!(ui.app.composer_text(), "a", "the closing key is typed");
    // `?` (which opens help on an empty composer) and Esc only close it.
    ui.press(KeyCode::F(1));
    ui.ch('?');
    assert!(ui.app.popup().is_none());
    ui.press(KeyCode::F(1));
    ui.press(KeyCode::Esc);
    assert!(ui.app.popup().is_none());
    assert_eq!(ui.app.composer_text(), "a");
    // `q`, which the help lists as closing it, is not typed.
    ui.press(KeyCode::F(1));
    ui.ch('q');
    assert!(ui.app.popup().is_none());
    assert_eq!(ui.app.composer_text(), "a", "q only closes the help");
    // Its title says so, whole, at 60 columns too.
    ui.press(KeyCode::F(1));
    let narrow = ui.screen(60, 15);
    assert!(
        narrow.contains("╭ tock — keys (↑/↓ PgUp/PgDn scroll · Esc/q close) ─"),
        "{narrow}"
    );
}

#[tokio::test(start_paused = true)]
async fn snapshot_sidebar_with_several_conversations() {
    init_env();
    let h = harness(vec![]);
    let st = h.engine.store();
    let day = 86_400_000;
    for (title, age) in [
        ("Trip to Lisbon", 3 * day),
        ("Rust lifetimes", day),
        ("Why is the build red?", 2 * 3_600_000),
        ("Groceries", 5 * 60_000),
    ] {
        st.create_conversation(Some(title), "user", T0 - age)
            .unwrap();
    }
    let mut ui = Ui::on(h);
    ui.start().await;
    // The most recent one is open; queue something in another to show its badge.
    assert_eq!(
        ui.app.model.current_conv().unwrap().title.as_deref(),
        Some("Groceries")
    );
    ui.key(KeyCode::Down, KeyModifiers::ALT);
    assert_eq!(
        ui.app.model.current_conv().unwrap().title.as_deref(),
        Some("Why is the build red?")
    );
    ui.say("/later 3h is it green now?");
    ui.settle().await;
    ui.press(KeyCode::Tab); // strip
    ui.press(KeyCode::Tab); // sidebar
    assert_eq!(ui.app.focus, Focus::Sidebar);
    ui.ch('j');
    let s = ui.screen(80, 24);
    assert!(s.contains("1 pending"), "{s}");
    insta::assert_snapshot!("sidebar_80x24", ui.render(80, 24).backend());
    insta::assert_snapshot!("sidebar_120x32", ui.render(120, 32).backend());
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

#[tokio::test(start_paused = true)]
async fn snapshot_approval_then_task_card_then_canceled() {
    let mut ui = Ui::new(task_steps());
    ui.start().await;
    ui.say("remind me to check the build");
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_some());
    let s = ui.screen(80, 24);
    assert!(
        s.contains("needs approval") && s.contains("build check"),
        "{s}"
    );
    insta::assert_snapshot!("approval_card_80x24", ui.render(80, 24).backend());

    ui.approve();
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_none());
    let task = ui
        .rows()
        .into_iter()
        .find(|i| i.kind == Kind::Task)
        .expect("a task row after approval");
    assert_eq!(task.status, Status::Pending);
    let s = ui.screen(80, 24);
    assert!(
        s.contains(&format!("task #{}", task.id)) && s.contains("[scheduled]"),
        "{s}"
    );
    insta::assert_snapshot!("task_card_80x24", ui.render(80, 24).backend());

    // Cancel it from the strip: the card follows.
    ui.press(KeyCode::Tab);
    assert_eq!(ui.app.focus, Focus::Strip);
    ui.ch('x');
    ui.ch('y');
    ui.settle().await;
    assert_eq!(ui.row(task.id).status, Status::Canceled);
    let s = ui.screen(80, 24);
    assert!(s.contains("[canceled]"), "{s}");
    assert!(
        s.contains("was due Mon 30 Nov 01:53") && !s.contains("fires"),
        "a canceled task does not say it fires:\n{s}"
    );
    insta::assert_snapshot!("task_card_canceled_80x24", ui.render(80, 24).backend());
}

/// A recurring task the model scheduled gets a card as a one-off task
/// does (its rule, its next time, its live state), not the tool's JSON.
#[tokio::test(start_paused = true)]
async fn a_recurring_task_has_a_live_card() {
    let mut ui = Ui::new(vec![
        Step::Reply(vec![
            text("I'll remind you every evening."),
            tool_call(
                "schedule_task",
                r#"{"instruction":"feed the cat","repeat":"every day at 7pm","title":"Cat"}"#,
            ),
            done(),
        ]),
        Step::Reply(vec![text("Scheduled."), done()]),
    ]);
    ui.start().await;
    ui.say("remind me to feed the cat every evening");
    ui.settle().await;
    ui.approve();
    ui.settle().await;
    let series = ui.h.engine.list_series(true).unwrap();
    let [v] = series.as_slice() else {
        panic!("one series: {series:?}")
    };
    let id = v.series.id;
    let s = ui.screen(80, 24);
    assert!(
        s.contains(&format!("task #{id} · Cat")) && s.contains("[recurring]"),
        "{s}"
    );
    assert!(
        s.contains("every day at 19:00 · next Mon 30 Nov 19:00"),
        "{s}"
    );
    assert!(!s.contains("job_id"), "the tool's JSON is not shown:\n{s}");
    insta::assert_snapshot!("recurring_task_card_80x24", ui.render(80, 24).backend());

    // Its state follows the series, wherever it changes.
    ui.h.engine.pause_series(id).unwrap();
    ui.settle().await;
    let s = ui.screen(80, 24);
    assert!(
        s.contains("[paused]") && s.contains("paused (F2 resumes it)"),
        "{s}"
    );
    ui.h.engine.end_series(id).unwrap();
    ui.settle().await;
    let s = ui.screen(80, 24);
    assert!(
        s.contains("[ended]") && s.contains("never ran, ended"),
        "{s}"
    );
}

/// A task's message in the chat is marked as one (whether it went at its
/// time or was sent early from F2, it is the task's).
#[tokio::test(start_paused = true)]
async fn a_fired_task_is_marked_in_the_chat() {
    let mut steps = task_steps();
    steps.push(Step::Reply(vec![text("The build is green."), done()]));
    let mut ui = Ui::new(steps);
    ui.start().await;
    ui.say("remind me to check the build");
    ui.settle().await;
    ui.approve();
    ui.settle().await;
    tokio::time::sleep(std::time::Duration::from_secs(3_700)).await;
    ui.settle().await;
    let s = ui.screen(100, 30);
    assert!(
        s.contains("⏰ scheduled task") && s.contains("[Scheduled task] check whether"),
        "{s}"
    );
    assert!(s.contains("The build is green."), "{s}");
}

#[tokio::test(start_paused = true)]
async fn snapshot_interrupted_reply() {
    let mut ui = Ui::new(vec![Step::Cut(
        vec![text("The short answer is that a monad is ")],
        LlmError::transient("connection reset by peer"),
    )]);
    ui.start().await;
    ui.say("What is a monad?");
    ui.settle().await;
    assert_eq!(ui.messages()[1].status, MessageStatus::Interrupted);
    let s = ui.screen(80, 24);
    // A transient cut is generated again by itself: no key is offered for it.
    assert!(
        s.contains("connection reset by peer") && s.contains("being generated again"),
        "{s}"
    );
    assert!(!s.contains("Ctrl+R retries"), "{s}");
    assert!(
        s.contains("↯ reply again in 5s · to “What is a monad?”"),
        "{s}"
    );
    insta::assert_snapshot!("interrupted_80x24", ui.render(80, 24).backend());
    // However narrow, the reason wraps and the state stays visible.
    let s = ui.screen(64, 20);
    assert!(s.contains("being generated again"), "{s}");
}

// ----- whole-app tests, driven by keys, checked against the database -------------

/// A message sent as `//usr/bin is here` (a literal slash) comes back as
/// typed when recalled or edited: without its "//" it read as a command,
/// and Enter said "unknown command /usr/bin".
#[tokio::test(start_paused = true)]
async fn a_message_that_starts_with_a_slash_is_recalled_with_its_escape() {
    let mut ui = Ui::new(vec![
        Step::Reply(vec![text("noted"), done()]),
        Step::Reply(vec![text("noted again"), done()]),
    ]);
    ui.start().await;
    ui.say("//usr/bin is here");
    ui.settle().await;
    assert_eq!(
        ui.messages()[0].content,
        "/usr/bin is here",
        "sent with one slash"
    );
    ui.press(KeyCode::Up);
    assert_eq!(
        ui.app.composer_text(),
        "//usr/bin is here",
        "edited as typed"
    );
    ui.press(KeyCode::Esc);
    ui.ctrl('p');
    assert_eq!(
        ui.app.composer_text(),
        "//usr/bin is here",
        "recalled as typed"
    );
    ui.enter();
    ui.settle().await;
    let users: Vec<String> = ui
        .messages()
        .into_iter()
        .filter(|m| m.role == tock::store::Role::User)
        .map(|m| m.content)
        .collect();
    assert_eq!(
        users,
        ["/usr/bin is here", "/usr/bin is here"],
        "sent again, not refused"
    );
}

#[tokio::test(start_paused = true)]
async fn typing_and_enter_sends_and_the_reply_arrives() {
    let mut ui = Ui::new(vec![Step::Reply(vec![
        text("Hello "),
        text("there"),
        done(),
    ])]);
    ui.start().await;
    ui.typ("hi");
    ui.key(KeyCode::Enter, KeyModifiers::ALT);
    ui.typ("two lines");
    assert_eq!(ui.app.composer_text(), "hi\ntwo lines");
    ui.enter();
    assert_eq!(ui.app.composer_text(), "", "Enter clears the composer");
    let rows = ui.rows();
    assert_eq!(rows.len(), 1, "one outbox row before anything is sent");
    assert_eq!(
        (rows[0].kind, rows[0].text.as_str(), rows[0].due_at),
        (Kind::Queued, "hi\ntwo lines", None)
    );
    ui.settle().await;
    assert_eq!(ui.row(rows[0].id).status, Status::Sent);
    let msgs = ui.messages();
    assert_eq!(
        msgs.iter()
            .map(|m| (m.role, m.content.as_str()))
            .collect::<Vec<_>>(),
        vec![
            (Role::User, "hi\ntwo lines"),
            (Role::Assistant, "Hello there")
        ]
    );
    // The app shows it without a keypress.
    assert_eq!(ui.app.model.entries.len(), 2);
    let s = ui.screen(80, 24);
    assert!(s.contains("Hello there") && s.contains("two lines"), "{s}");
    assert_eq!(
        ui.app.model.current_conv().unwrap().display_title(),
        "hi",
        "titled from the first message"
    );
}

#[tokio::test(start_paused = true)]
async fn enter_while_answering_queues_and_everything_goes_in_order() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![Step::Hold(vec![text("thinking")], gate.clone())]);
    ui.start().await;
    ui.say("one");
    ui.settle().await;
    assert!(ui.app.model.is_busy());
    ui.say("two");
    ui.say("three");
    ui.settle().await;
    assert_eq!(
        ui.h.provider.count(),
        1,
        "nothing else goes while answering"
    );
    let rows = ui.rows();
    assert_eq!(
        rows.iter()
            .map(|r| (r.text.as_str(), r.status))
            .collect::<Vec<_>>(),
        vec![
            ("one", Status::Sent),
            ("two", Status::Pending),
            ("three", Status::Pending)
        ]
    );
    assert_eq!(
        ui.app
            .model
            .strip_items()
            .map(|i| i.text.as_str())
            .collect::<Vec<_>>(),
        vec!["two", "three"]
    );
    assert!(
        ui.status_line().starts_with("queued"),
        "{}",
        ui.status_line()
    );
    let s = ui.screen(80, 24);
    assert!(
        s.contains("⏳ queued · two") && s.contains("⏳ queued · three"),
        "{s}"
    );
    gate.notify_one();
    ui.settle().await;
    assert_eq!(ui.user_texts(), vec!["one", "two", "three"]);
    assert!(ui.rows().iter().all(|r| r.status == Status::Sent));
    assert!(ui.app.model.strip_items().collect::<Vec<_>>().is_empty());
    assert!(!ui.screen(80, 24).contains("pending ("));
}

#[tokio::test(start_paused = true)]
async fn later_creates_a_scheduled_message_row() {
    // Not dispatching: the clock stays at T0.
    let mut ui = Ui::new(vec![]);
    ui.say("/later 2h x");
    let rows = ui.rows();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (
            rows[0].kind,
            rows[0].text.as_str(),
            rows[0].due_at,
            rows[0].status
        ),
        (
            Kind::Message,
            "x",
            Some(T0 + 2 * 3_600_000),
            Status::Pending
        )
    );
    assert_eq!(ui.app.composer_text(), "");
    assert!(
        ui.status_line().starts_with("scheduled: Mon 30 Nov 02:53"),
        "{}",
        ui.status_line()
    );
    // `/at` too.
    ui.say("/at 9am standup");
    let due = ui.rows().last().unwrap().due_at.unwrap();
    assert_eq!(due, T0 - 53 * 60_000 - 20_000 + 9 * 3_600_000);
}

/// `/at` with the minute about to come: the preview counts down on an idle
/// screen (a redraw is asked for each second), and Enter a few seconds into
/// that minute sends it now, not tomorrow. A minute later it reads tomorrow.
#[tokio::test(start_paused = true)]
async fn a_clock_time_typed_just_before_it_comes_is_sent_then_not_tomorrow() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    // T0 is 00:53:20 UTC: to 00:53:50.
    ui.h.clock.jump(30_000);
    ui.typ("/at 00:54 standup");
    let s = ui.screen(120, 40);
    assert!(s.contains("⏰ sends Mon 30 Nov 00:54, in 10s"), "{s}");
    let now = ui.h.engine.now_ms();
    assert_eq!(
        ui.app.composer_preview_changes_at(),
        Some(now + 1_000 - now % 1_000),
        "the countdown is redrawn"
    );
    ui.h.clock.jump(15_000);
    let s = ui.screen(120, 40);
    assert!(s.contains("⏰ sends Mon 30 Nov 00:54, now"), "{s}");
    ui.enter();
    let due = ui.rows().last().unwrap().due_at.unwrap();
    assert_eq!(due, ui.h.engine.now_ms(), "sent now, not tomorrow");
    // Once its minute is over, the same time is tomorrow's.
    ui.h.clock.jump(60_000);
    ui.typ("/at 00:54 standup");
    let s = ui.screen(120, 40);
    assert!(s.contains("⏰ sends Tue 1 Dec 00:54, in 23h 58m"), "{s}");
    // `/later` is redrawn when the minute it comes to moves on.
    ui.app.composer.clear(0);
    ui.typ("/later 10m x");
    let now = ui.h.engine.now_ms();
    assert_eq!(
        ui.app.composer_preview_changes_at(),
        Some(now + 60_000 - now % 60_000),
        "{now}"
    );
}

/// A composer taller than its box says how much is out of sight, above
/// and below the cursor (nothing told of the hidden lines).
#[tokio::test(start_paused = true)]
async fn a_tall_composer_says_how_many_lines_are_hidden() {
    let mut ui = Ui::new(vec![]);
    ui.app.set_composer(
        &(1..=30)
            .map(|i| format!("line {i}"))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    // The cursor at the end: the first lines are above.
    let s = ui.screen(60, 15);
    assert!(s.contains("line 30"), "{s}");
    let hidden = s.lines().find(|l| l.contains("more")).unwrap_or_default();
    assert!(hidden.contains("↑") && !hidden.contains("↓"), "{s}");
    // At the top, the rest is below.
    for _ in 0..40 {
        ui.press(KeyCode::Up);
    }
    let s = ui.screen(60, 15);
    assert!(s.contains("line 1 "), "{s}");
    let hidden = s.lines().find(|l| l.contains("more")).unwrap_or_default();
    assert!(hidden.contains("↓") && !hidden.contains("↑"), "{s}");
    // Short text: no such line.
    ui.app.set_composer("short");
    assert!(!ui.screen(60, 15).contains("more "));
}

/// The strip's reschedule prompt at 60 columns: an error wraps rather than
/// losing its end (the advice on what to type is at its end).
#[tokio::test(start_paused = true)]
async fn the_reschedule_prompt_error_is_whole_at_60_columns() {
    let mut ui = Ui::new(vec![]);
    ui.say("/later 2h x");
    ui.press(KeyCode::Tab);
    assert_eq!(ui.app.focus, Focus::Strip);
    ui.ch('r');
    assert_eq!(ui.app.top(), Some(ViewKind::Prompt));
    ui.typ("next blursday");
    let s = ui.screen(60, 15);
    let flat: String = s
        .lines()
        .map(|l| l.trim_matches(|c: char| c == ' ' || c == '│'))
        .collect::<Vec<_>>()
        .join(" ");
    assert!(flat.contains("✗ "), "{s}");
    assert!(
        flat.contains("fri 5pm"),
        "the error's advice is on screen:\n{s}"
    );
    // The error is inside the prompt's box: nothing of the screen behind
    // shows at the ends of its lines.
    insta::assert_snapshot!("strip_reschedule_error_60x15", s);
    insta::assert_snapshot!("strip_reschedule_error_120x40", ui.screen(120, 40));
}

/// Tab completes `/la` to `/later `, and the composer says how it is used
/// as a hint, not as an error, until something is typed after it.
#[tokio::test(start_paused = true)]
async fn a_completed_command_shows_its_usage_as_a_hint() {
    let mut ui = Ui::new(vec![]);
    ui.typ("/la");
    ui.press(KeyCode::Tab);
    assert_eq!(ui.app.composer_text(), "/later ");
    let s = ui.screen(100, 30);
    assert!(s.contains("/later DURATION TEXT — e.g."), "{s}");
    assert!(!s.contains("✗"), "{s}");
    ui.typ("blah x");
    assert!(ui.screen(100, 30).contains("✗"), "a real error is one");
}

/// Typing a command's name lists the commands it starts above the
/// composer, with how each is used; ↑/↓ choose, Tab completes, Enter runs
/// (or completes one that needs an argument); a space (the name is done)
/// or `//` (a literal slash) closes the list.
#[tokio::test(start_paused = true)]
async fn a_command_name_being_typed_lists_the_matching_commands() {
    let mut ui = Ui::new(vec![]);
    ui.typ("/");
    let s = ui.screen(120, 40);
    assert!(s.contains("commands · ↑↓ choose · Tab completes"), "{s}");
    assert!(
        s.contains("/later DURATION TEXT  send later: /later 1h30m"),
        "{s}"
    );
    assert!(s.contains("more: keep typing or ↓"), "{s}");
    insta::assert_snapshot!("command_menu_120x40", s);
    ui.typ("mo");
    let s = ui.screen(60, 15);
    assert!(s.contains("/model [NAME]"), "{s}");
    assert!(s.contains("/mouse"), "{s}");
    assert!(!s.contains("/later DURATION"), "{s}");
    insta::assert_snapshot!("command_menu_60x15", s);
    // ↓ chooses the second; Tab completes it.
    ui.press(KeyCode::Down);
    ui.press(KeyCode::Tab);
    assert_eq!(ui.app.composer_text(), "/mouse ");
    assert!(
        !ui.screen(120, 40).contains("commands ·"),
        "closed by the space"
    );
    // Enter on one that needs an argument completes it, to type that.
    ui.ctrl('u');
    ui.typ("/ren");
    ui.press(KeyCode::Enter);
    assert_eq!(ui.app.composer_text(), "/rename ");
    // Enter on one that needs none runs it: ↑ from the first goes round
    // to the last (`/he`: only /help).
    ui.ctrl('u');
    ui.typ("/he");
    ui.press(KeyCode::Up);
    ui.press(KeyCode::Enter);
    assert!(ui.app.composer_text().is_empty());
    let s = ui.screen(120, 40);
    assert!(s.contains("tock — keys"), "the help is open: {s}");
    ui.press(KeyCode::Esc);
    // Past the rows shown, the list follows the choice.
    ui.typ("/");
    for _ in 0..12 {
        ui.press(KeyCode::Down);
    }
    let s = ui.screen(120, 40);
    assert!(s.contains("above, "), "{s}");
    assert!(!s.contains("/later DURATION"), "{s}");
    ui.ctrl('u');
    ui.typ("//");
    assert!(!ui.screen(120, 40).contains("commands ·"));
}

/// A line about the key just pressed goes with the next key: "nothing
/// (more) to complete" stayed ten seconds, over what came next (Tab on `/`
/// completed `/later` under it).
#[tokio::test(start_paused = true)]
async fn a_line_about_a_tab_goes_with_the_next_key() {
    let mut ui = Ui::new(vec![]);
    ui.typ("/later ");
    ui.press(KeyCode::Tab);
    assert!(ui.status_line().contains("nothing (more) to complete"));
    ui.ctrl('u');
    assert!(!ui.status_line().contains("nothing (more) to complete"));
}

/// What a key or a command did is said until the next key, not for ten
/// seconds over what the user does next ("exported to …" stayed while the
/// next message was typed and sent); what to type next (`/model`'s list)
/// and an error stay their time.
#[tokio::test(start_paused = true)]
async fn a_report_of_what_a_key_did_goes_with_the_next_key() {
    let mut ui = Ui::new(vec![Step::Reply(vec![text("hi"), done()])]);
    ui.start().await;
    let bar = |ui: &mut Ui| {
        let s = ui.screen(120, 30);
        s.lines().last().unwrap_or_default().to_string()
    };
    // (key that made the line, what the line says)
    type Press = fn(&mut Ui);
    let reports: [(Press, &str); 6] = [
        (
            |ui| {
                let out = ui.h.dir.path().join("out.md");
                ui.say(&format!("/export {}", out.display()))
            },
            "exported to",
        ),
        (
            |ui| ui.key(KeyCode::Char('m'), KeyModifiers::ALT),
            "mouse capture",
        ),
        (|ui| ui.ctrl('p'), "no earlier message"),
        (|ui| ui.ctrl('c'), "press Ctrl+C again to quit"),
        (|ui| ui.ctrl('t'), "type the message first"),
        (|ui| ui.ctrl('y'), "no reply to copy yet"),
    ];
    for (make, says) in reports {
        make(&mut ui);
        assert!(bar(&mut ui).contains(says), "{says}: {}", bar(&mut ui));
        ui.ch('x');
        assert!(
            !bar(&mut ui).contains(says),
            "{says} went with the next key: {}",
            bar(&mut ui)
        );
        ui.press(KeyCode::Backspace);
    }
    // Sending is a key too: "exported to …" is not left over the send.
    let out = ui.h.dir.path().join("again.md");
    ui.say(&format!("/export {}", out.display()));
    assert!(ui.status_line().starts_with("exported to"));
    ui.say("hello");
    ui.settle().await;
    assert_eq!(ui.status_line(), "");
    assert_eq!(ui.user_texts(), vec!["hello"]);
    // What to type next stays while it is typed.
    ui.say("/model");
    assert!(
        ui.status_line().starts_with("model: "),
        "{}",
        ui.status_line()
    );
    ui.typ("/model e");
    assert!(
        ui.status_line().starts_with("model: "),
        "{}",
        ui.status_line()
    );
}

#[tokio::test(start_paused = true)]
async fn later_with_an_unreadable_time_creates_nothing_and_keeps_the_text() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.say("/later blah x");
    assert!(ui.rows().is_empty());
    assert_eq!(ui.app.composer_text(), "/later blah x");
    let (msg, is_err) = ui.app.status_pair();
    assert!(is_err && msg.contains("blah"), "{msg}");
    ui.app.set_composer("");
    ui.say("/at yesterday 9am x");
    assert!(ui.rows().is_empty(), "nothing for a past time");
    assert_eq!(ui.app.composer_text(), "/at yesterday 9am x");
    // Alone, each scheduling command says how it is used, with an example.
    for (cmd, usage) in [
        (
            "/later",
            "usage: /later DURATION TEXT — e.g. /later 1h30m check the build",
        ),
        (
            "/at ",
            "usage: /at TIME TEXT — e.g. /at tomorrow 9am stand-up notes",
        ),
        (
            "/every",
            "usage: /every EXPR TEXT — e.g. /every weekday 9am stand-up notes",
        ),
    ] {
        ui.app.set_composer("");
        ui.say(cmd);
        let (msg, is_err) = ui.app.status_pair();
        assert!(is_err && msg == usage, "{cmd}: {msg}");
    }
    assert!(ui.rows().is_empty());
    ui.settle().await;
    assert_eq!(ui.h.provider.count(), 0);
}

#[tokio::test(start_paused = true)]
async fn unknown_commands_are_never_sent() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.say("/frobnicate the widget");
    ui.settle().await;
    assert!(ui.rows().is_empty());
    assert_eq!(ui.h.provider.count(), 0);
    assert_eq!(ui.app.composer_text(), "/frobnicate the widget");
    let (msg, is_err) = ui.app.status_pair();
    assert!(
        is_err && msg.contains("unknown command /frobnicate"),
        "{msg}"
    );
    let s = ui.screen(120, 32);
    assert!(s.contains("unknown command /frobnicate"), "{s}");
    // A literal leading slash is sent with `//`.
    ui.app.set_composer("");
    ui.say("//etc/hosts is a file");
    assert_eq!(ui.rows()[0].text, "/etc/hosts is a file");
}

#[tokio::test(start_paused = true)]
async fn strip_cancel_asks_first() {
    // Not dispatching: both stay queued.
    let mut ui = Ui::new(vec![]);
    ui.say("first");
    ui.say("second");
    let ids: Vec<i64> = ui.rows().iter().map(|r| r.id).collect();
    ui.press(KeyCode::Tab);
    assert_eq!(ui.app.focus, Focus::Strip);
    ui.ch('j');
    assert_eq!(ui.strip_sel(), Some(1));
    let s = ui.screen(80, 24);
    assert!(s.contains("› ⏳ queued · second"), "{s}");
    // Every key of the focused strip is shown, even at 80 columns with the sidebar.
    for k in [
        "e edit",
        "x cancel",
        "s send now",
        "u to composer",
        "r reschedule",
        "R retry",
        "Esc back",
    ] {
        assert!(s.contains(k), "{k:?} not shown:\n{s}");
    }
    insta::assert_snapshot!("strip_focused_80x24", ui.render(80, 24).backend());
    ui.ch('x');
    assert!(ui.app.popup() == Some(ViewKind::Confirm));
    assert!(ui.screen(80, 24).contains("Cancel “second”? y / n"));
    ui.ch('n');
    assert!(ui.app.popup().is_none());
    assert_eq!(ui.row(ids[1]).status, Status::Pending, "n keeps it");
    ui.ch('x');
    ui.ch('y');
    ui.pump();
    assert_eq!(ui.row(ids[1]).status, Status::Canceled);
    assert_eq!(ui.row(ids[0]).status, Status::Pending);
    assert_eq!(ui.app.model.strip_items().collect::<Vec<_>>().len(), 1);
    assert_eq!(
        ui.strip_sel(),
        Some(0),
        "the canceled item left: the one that took its place (the one before, as it was last) is selected"
    );
    // Esc goes back to the composer.
    ui.press(KeyCode::Esc);
    assert_eq!(ui.app.focus, Focus::Composer);
}

/// Three scheduled items, x y three times: each cancel selects the row that
/// took the canceled one's place, shown before a key acts on it, so the
/// next x y cancels it; nothing is typed into the composer.
#[tokio::test(start_paused = true)]
async fn strip_cancels_item_after_item_with_x_y() {
    let mut ui = Ui::new(vec![]);
    for n in 1..=3 {
        ui.say(&format!("/later {n}h strip item {n}"));
    }
    let ids: Vec<i64> = ui.rows().iter().map(|r| r.id).collect();
    assert_eq!(ids.len(), 3);
    ui.press(KeyCode::Tab);
    assert_eq!(ui.app.focus, Focus::Strip);
    for n in 1..=3 {
        let s = ui.screen(120, 40);
        let marked = s.lines().find(|l| l.contains("› ")).unwrap_or_default();
        assert!(
            marked.contains(&format!("strip item {n}")),
            "item {n} is shown selected:\n{s}"
        );
        ui.ch('x');
        assert_eq!(ui.app.popup(), Some(ViewKind::Confirm));
        ui.ch('y');
        ui.pump();
        assert_eq!(ui.row(ids[n - 1]).status, Status::Canceled, "item {n}");
        let (msg, is_err) = ui.app.status_pair();
        assert!(!is_err, "{msg}");
    }
    assert!(ui.app.model.strip_items().next().is_none());
    assert_eq!(
        ui.app.composer_text(),
        "",
        "nothing typed into the composer"
    );
}

/// `u` takes the selected item back into the composer: back in the strip,
/// the row that took its place is selected, not the first.
#[tokio::test(start_paused = true)]
async fn after_a_pull_back_the_strip_selects_the_row_that_took_its_place() {
    let mut ui = Ui::new(vec![]);
    for n in 1..=3 {
        ui.say(&format!("queued item {n}"));
    }
    let ids: Vec<i64> = ui.rows().iter().map(|r| r.id).collect();
    ui.press(KeyCode::Tab);
    ui.press(KeyCode::Down);
    ui.ch('u');
    ui.pump();
    assert_eq!(ui.row(ids[1]).status, Status::Canceled);
    assert_eq!(ui.app.composer_text(), "queued item 2");
    assert_eq!(ui.app.focus, Focus::Composer);
    ui.press(KeyCode::Tab);
    assert_eq!(ui.app.focus, Focus::Strip);
    assert_eq!(ui.app.strip.selected, Some(ids[2]));
    let s = ui.screen(120, 40);
    assert!(s.contains("› ⏳ queued · queued item 3"), "{s}");
}

/// An item that leaves the strip by another hand (`tock cancel`, another
/// tock) takes the selection with it: the row that slid into its place is
/// not selected, and a key acts on nothing until ↑/↓ chooses.
#[tokio::test(start_paused = true)]
async fn strip_item_canceled_elsewhere_leaves_nothing_selected() {
    let mut ui = Ui::new(vec![]);
    for n in 1..=2 {
        ui.say(&format!("/later {n}h strip item {n}"));
    }
    let ids: Vec<i64> = ui.rows().iter().map(|r| r.id).collect();
    ui.press(KeyCode::Tab);
    assert_eq!(ui.strip_sel(), Some(0));
    ui.screen(120, 40);
    ui.h.engine.cancel(ids[0]).unwrap();
    ui.pump();
    assert_eq!(ui.strip_sel(), None);
    let s = ui.screen(120, 40);
    assert!(!s.contains("› "), "no row is marked:\n{s}");
    ui.ch('x');
    assert_eq!(ui.app.popup(), None);
    assert!(ui.status_line().contains("no item selected"));
    assert_eq!(ui.row(ids[1]).status, Status::Pending);
}

/// Keys typed ahead, before a frame showed the row that took the canceled
/// item's place: they do not act on it (the user has not seen it
/// selected), and the `y` meant for a question is not typed either.
#[tokio::test(start_paused = true)]
async fn strip_keys_typed_ahead_of_the_new_selection_do_not_act_on_it() {
    let mut ui = Ui::new(vec![]);
    for n in 1..=3 {
        ui.say(&format!("/later {n}h strip item {n}"));
    }
    let ids: Vec<i64> = ui.rows().iter().map(|r| r.id).collect();
    ui.press(KeyCode::Tab);
    ui.screen(120, 40);
    // x y x y x y in one burst: no frame between the keys, and the
    // engine's events about the cancel wait until the burst is done.
    for c in "xyxyxy".chars() {
        ui.ch(c);
    }
    ui.pump();
    assert_eq!(ui.row(ids[0]).status, Status::Canceled);
    assert_eq!(ui.row(ids[1]).status, Status::Pending, "not seen selected");
    assert_eq!(ui.row(ids[2]).status, Status::Pending);
    assert_eq!(ui.app.popup(), None);
    assert_eq!(ui.app.composer_text(), "", "no y typed into the composer");
    assert_eq!(ui.app.focus, Focus::Strip);
    let (msg, is_err) = ui.app.status_pair();
    assert!(is_err && msg.contains("no question is open"), "{msg}");
    // Once a frame has shown it selected, x acts on it.
    let s = ui.screen(120, 40);
    let marked = s.lines().find(|l| l.contains("› ")).unwrap_or_default();
    assert!(marked.contains("strip item 2"), "{s}");
    ui.ch('x');
    ui.ch('y');
    ui.pump();
    assert_eq!(ui.row(ids[1]).status, Status::Canceled);
    assert_eq!(ui.row(ids[2]).status, Status::Pending);
    // Another letter the strip does not use is not typed either.
    ui.ch('q');
    assert_eq!(ui.app.composer_text(), "");
    assert!(ui.status_line().contains("not a key of the pending strip"));
}

#[tokio::test(start_paused = true)]
async fn strip_pull_back_into_the_composer() {
    let mut ui = Ui::new(vec![]);
    ui.say("a draft\nwith two lines");
    let id = ui.rows()[0].id;
    ui.press(KeyCode::Tab);
    ui.ch('u');
    ui.pump();
    assert_eq!(ui.row(id).status, Status::Canceled);
    assert_eq!(ui.app.composer_text(), "a draft\nwith two lines");
    assert_eq!(ui.app.focus, Focus::Composer);
    // The line about it goes with the next key.
    assert!(ui.status_line().contains("moved back into the composer"));
    ui.press(KeyCode::End);
    assert_eq!(ui.status_line(), "");
    assert!(ui.app.model.strip_items().collect::<Vec<_>>().is_empty());
}

/// What `u` brings back is this tock's own draft: saving it after typing
/// on, or clearing it, is no change by "another tock" to be merged with
/// (it doubled the text, and a cleared composer got it back).
#[tokio::test(start_paused = true)]
async fn a_pulled_back_item_is_the_draft_and_typing_on_or_clearing_it_merges_nothing() {
    let mut ui = Ui::new(vec![]);
    let conv = ui.conv();
    // A queued one, typed on.
    ui.say("queued");
    ui.press(KeyCode::Tab);
    ui.ch('u');
    ui.pump();
    assert_eq!(ui.app.composer_text(), "queued");
    ui.typ(" and more");
    ui.app.save_draft();
    ui.pump();
    assert_eq!(ui.app.composer_text(), "queued and more");
    assert_eq!(ui.store().draft(conv).unwrap().text, "queued and more");
    assert!(
        !ui.screen(120, 40).contains("another tock"),
        "{}",
        ui.screen(120, 40)
    );
    // Cleared: it stays cleared.
    ui.ctrl('u');
    ui.app.save_draft();
    ui.pump();
    assert_eq!(ui.app.composer_text(), "");
    assert_eq!(ui.store().draft(conv).unwrap().text, "");
    assert!(!ui.screen(120, 40).contains("another tock"));
    // A scheduled one comes back as `/at TIME TEXT`, saved as it is shown.
    ui.say("/later 1h quick");
    ui.press(KeyCode::Tab);
    ui.ch('u');
    ui.pump();
    let shown = ui.app.composer_text();
    assert!(
        shown.starts_with("/at ") && shown.ends_with(" quick"),
        "{shown}"
    );
    ui.app.save_draft();
    ui.pump();
    assert_eq!(ui.app.composer_text(), shown, "not doubled");
    assert_eq!(ui.store().draft(conv).unwrap().text, shown);
    assert!(!ui.screen(120, 40).contains("another tock"));
    ui.ctrl('u');
    ui.app.save_draft();
    ui.pump();
    assert_eq!(ui.app.composer_text(), "", "not brought back");
    assert_eq!(ui.store().draft(conv).unwrap().text, "");
}

/// The new conversation's hint is never cut off at the foot: where all of
/// it does not fit (60×15 beside the sidebar), a shorter one that does.
#[tokio::test(start_paused = true)]
async fn the_new_conversation_hint_fits_or_is_shortened_whole() {
    let mut ui = Ui::new(vec![]);
    ui.app.sidebar_pref = Some(true);
    let s = ui.screen(60, 15);
    assert!(s.contains("F1 shows every key."), "{s}");
    assert!(s.contains("answers: messages queue."), "{s}");
    let s = ui.screen(120, 40);
    assert!(s.contains("Ctrl+T picks a time"), "{s}");
    assert!(s.contains("F1 shows every key."), "{s}");
}

#[tokio::test(start_paused = true)]
async fn strip_send_now_skips_the_queue() {
    let mut ui = Ui::new(vec![]);
    ui.say("first");
    ui.say("urgent");
    let ids: Vec<i64> = ui.rows().iter().map(|r| r.id).collect();
    ui.press(KeyCode::Tab);
    ui.press(KeyCode::Down);
    ui.ch('s');
    assert_eq!(ui.row(ids[1]).priority, 1);
    assert_eq!(ui.row(ids[0]).priority, 0);
    ui.start().await;
    ui.settle().await;
    assert_eq!(ui.user_texts(), vec!["urgent", "first"]);
}

#[tokio::test(start_paused = true)]
async fn strip_edit_changes_the_text() {
    let mut ui = Ui::new(vec![]);
    ui.say("orignal text");
    let id = ui.rows()[0].id;
    ui.press(KeyCode::Tab);
    ui.ch('e');
    assert!(ui.app.popup() == Some(ViewKind::Prompt));
    ui.erase(20);
    ui.typ("original text");
    ui.key(KeyCode::Enter, KeyModifiers::ALT);
    ui.typ("and more");
    ui.enter();
    assert!(ui.app.popup().is_none());
    ui.pump();
    assert_eq!(ui.row(id).text, "original text\nand more");
    assert!(ui.screen(80, 24).contains("original text and more"));
}

/// The item went out while it was being edited: the edit cannot apply, and
/// what was typed waits in the composer instead of being dropped.
#[tokio::test(start_paused = true)]
async fn a_strip_edit_of_an_item_sent_meanwhile_lands_in_the_composer() {
    edit_of_an_item_sent_meanwhile(KeyCode::Tab).await;
}

/// The same in F2: an item sent while its edit was open. Esc there would
/// have dropped what was typed with the editor; saving puts it in the
/// composer instead.
#[tokio::test(start_paused = true)]
async fn an_f2_edit_of_an_item_sent_meanwhile_lands_in_the_composer() {
    edit_of_an_item_sent_meanwhile(KeyCode::F(2)).await;
}

/// Open the edit of a queued item with `open` (Tab: the strip, F2: the
/// pane), let the item go meanwhile, then save the edit.
async fn edit_of_an_item_sent_meanwhile(open: KeyCode) {
    let mut ui = Ui::new(vec![]);
    ui.say("orignal text");
    let id = ui.rows()[0].id;
    ui.press(open);
    ui.ch('e');
    ui.erase(20);
    ui.typ("original text, edited");
    ui.start().await;
    assert_eq!(ui.row(id).status, Status::Sent, "it went meanwhile");
    ui.enter();
    ui.pump();
    assert_eq!(ui.user_texts(), vec!["orignal text"]);
    assert_eq!(ui.app.composer_text(), "original text, edited");
    assert_eq!(ui.app.focus, Focus::Composer);
    let (msg, is_err) = ui.app.status_pair();
    assert!(
        is_err && msg.ends_with("your edit is in the composer"),
        "{msg}"
    );
    // Esc (closing F2, if open) keeps the text.
    ui.press(KeyCode::Esc);
    assert_eq!(ui.app.composer_text(), "original text, edited");
}

/// Scrolled up while a reply streams, the view stays where it is: the rows
/// arriving below do not move it (they did, a row for each row).
#[tokio::test(start_paused = true)]
async fn a_scrolled_up_view_stays_put_while_a_reply_streams() {
    let long: String = (0..40).map(|i| format!("earlier line {i}\n\n")).collect();
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![
        Step::Reply(vec![text(&long), done()]),
        Step::Hold(vec![text("the start\n\n")], gate.clone()),
    ]);
    ui.start().await;
    ui.say("first");
    ui.settle().await;
    ui.say("second");
    ui.settle().await;
    assert!(ui.app.model.is_busy());
    ui.screen(80, 24);
    ui.press(KeyCode::PageUp);
    let chat = |s: &str| s.lines().take(12).map(str::to_string).collect::<Vec<_>>();
    let before = chat(&ui.screen(80, 24));
    assert!(
        before.iter().any(|l| l.contains("earlier line")),
        "{before:#?}"
    );
    // More of the reply arrives, as the engine hands it on.
    for i in 0..5 {
        let (id, offset) = ui
            .app
            .model
            .entries
            .last()
            .map(|e| (e.msg.id, e.msg.content.len()))
            .unwrap();
        ui.app.on_engine(Event::Delta {
            conversation_id: ui.conv(),
            message_id: id,
            offset,
            text: format!("new paragraph {i}\n\n"),
        });
        while ui.app.reveal_step() {}
        assert_eq!(chat(&ui.screen(80, 24)), before, "the view moved");
    }
    let shown = &ui.app.model.entries.last().unwrap().msg.content;
    assert!(shown.ends_with("new paragraph 4\n\n"), "{shown}");
    // End jumps to the latest, which is below.
    ui.press(KeyCode::End);
    assert!(ui.screen(80, 24).contains("new paragraph 4"));
    gate.notify_one();
    ui.settle().await;
}

/// A reply another tock on the same database streams (a daemon, a second
/// TUI) is stopped from here: Esc asks that process, through the database,
/// and pauses the queue (it could only say "stop it there"); a second
/// Ctrl+C still quits. The process streaming it is tested stopping in
/// `tests/cli_edges.rs`.
#[tokio::test(start_paused = true)]
async fn esc_asks_another_tock_to_stop_the_reply_it_streams() {
    let mut ui = Ui::new(vec![]);
    let conv = ui.conv();
    let new = |role, content, status| tock::store::NewMessage {
        role: Some(role),
        content,
        status: Some(status),
        ..Default::default()
    };
    ui.store()
        .insert_message(
            conv,
            &new(Role::User, "question", MessageStatus::Complete),
            1,
        )
        .unwrap();
    ui.store()
        .insert_message(
            conv,
            &new(Role::Assistant, "half an ans", MessageStatus::Streaming),
            2,
        )
        .unwrap();
    // Something queued behind it, for the stop to hold.
    ui.store()
        .enqueue(&NewItem::new(conv, Kind::Queued, "and then?"), 3)
        .unwrap();
    ui.app.on_engine(Event::External);
    let s = ui.screen(100, 24);
    assert!(s.contains("answering… Enter queues · Esc stops"), "{s}");
    ui.press(KeyCode::Esc);
    ui.pump();
    let (msg, is_err) = ui.app.status_pair();
    assert!(
        !is_err
            && msg.contains("asked the tock streaming this reply to stop it — the queue is paused"),
        "{msg}"
    );
    assert!(
        ui.store()
            .conversation(conv)
            .unwrap()
            .unwrap()
            .queue_paused_at
            .is_some(),
        "the queue is paused at once"
    );
    // The request is noted for the process streaming it.
    assert!(ui.store().take_stop_request(conv).unwrap());
    // Asked once: Ctrl+C goes on to arm a quit, and a second one quits.
    ui.ctrl('c');
    assert!(!ui.app.quit);
    assert!(
        ui.app
            .status_pair()
            .0
            .ends_with("press Ctrl+C again to quit")
    );
    ui.ctrl('c');
    assert!(ui.app.quit, "quitting still works");
}

/// A Ctrl+R whose request fails: the earlier reply is back on screen at
/// once (the database had it back, the open view still said "replaced").
#[tokio::test(start_paused = true)]
async fn a_failed_ctrl_r_shows_the_earlier_reply_again() {
    // Unreachable, try after try, until the tries run out.
    let mut steps = vec![Step::Reply(vec![text("the first answer"), done()])];
    steps.extend((0..10).map(|_| Step::Fail(LlmError::transient("cannot connect"))));
    let mut ui = Ui::new(steps);
    ui.start().await;
    ui.say("question");
    ui.settle().await;
    ui.ctrl('r');
    ui.settle().await;
    assert!(
        ui.screen(80, 24).contains("(replaced)"),
        "while it is retried"
    );
    for _ in 0..40 {
        tokio::time::advance(std::time::Duration::from_secs(10)).await;
        ui.settle().await;
    }
    let s = ui.screen(80, 24);
    assert!(
        s.contains("the first answer") && !s.contains("(replaced)"),
        "{s}"
    );
    let (msg, is_err) = ui.app.status_pair();
    assert!(
        is_err && msg.ends_with("the earlier reply is kept — Ctrl+R tries again"),
        "{msg}"
    );
}

#[tokio::test(start_paused = true)]
async fn esc_stops_a_streaming_reply() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![Step::Hold(vec![text("a partial ans")], gate)]);
    ui.start().await;
    ui.say("q");
    ui.settle().await;
    assert!(ui.app.model.is_busy());
    ui.press(KeyCode::Esc);
    ui.settle().await;
    assert!(!ui.app.model.is_busy());
    let m = ui.messages().pop().unwrap();
    assert_eq!(
        (m.status, m.error.as_deref(), m.content.as_str()),
        (
            MessageStatus::Interrupted,
            Some("stopped by you"),
            "a partial ans"
        )
    );
    let s = ui.screen(80, 24);
    assert!(
        s.contains("stopped by you") && s.contains("a partial ans"),
        "{s}"
    );
}

#[tokio::test(start_paused = true)]
async fn ctrl_r_regenerates_the_last_reply() {
    let mut ui = Ui::new(vec![
        Step::Reply(vec![text("first answer"), done()]),
        Step::Reply(vec![text("second answer"), done()]),
    ]);
    ui.start().await;
    ui.say("q");
    ui.settle().await;
    ui.ctrl('r');
    ui.settle().await;
    let msgs = ui.messages();
    assert_eq!(
        msgs.iter()
            .map(|m| (m.role, m.content.as_str(), m.status))
            .collect::<Vec<_>>(),
        vec![
            (Role::User, "q", MessageStatus::Complete),
            (Role::Assistant, "first answer", MessageStatus::Superseded),
            (Role::Assistant, "second answer", MessageStatus::Complete),
        ]
    );
    assert_eq!(ui.h.provider.count(), 2);
    // One version is drawn, marked as one of two; the other is not stacked.
    let s = ui.screen(80, 24);
    assert!(s.contains("‹2/2›") && s.contains("second answer"), "{s}");
    assert!(
        !s.contains("first answer") && !s.contains("(replaced)"),
        "{s}"
    );
}

#[tokio::test(start_paused = true)]
async fn up_on_an_empty_composer_edits_and_resends_the_last_message() {
    let mut ui = Ui::new(vec![
        Step::Reply(vec![text("about cats"), done()]),
        Step::Reply(vec![text("about dogs"), done()]),
    ]);
    ui.start().await;
    ui.say("tell me about cats");
    ui.settle().await;
    // Ctrl+E is end of line, as in readline: the draft is untouched.
    ui.typ("my draft");
    ui.ctrl('e');
    assert_eq!(ui.app.composer_text(), "my draft");
    // ↑ edits only on an empty composer.
    ui.press(KeyCode::Up);
    assert_eq!(ui.app.composer_text(), "my draft");
    ui.erase(8);
    ui.press(KeyCode::Up);
    assert_eq!(ui.app.composer_text(), "tell me about cats");
    let s = ui.screen(100, 24);
    assert!(
        s.contains("✎ editing your last message"),
        "the mode has a banner:\n{s}"
    );
    // Esc leaves the edit and nothing was marked replaced.
    ui.press(KeyCode::Esc);
    assert_eq!(ui.app.composer_text(), "");
    assert!(!ui.screen(100, 24).contains("✎ editing"));
    assert!(
        ui.messages()
            .iter()
            .all(|m| m.status != MessageStatus::Superseded)
    );
    // A draft typed before the edit comes back after it.
    ui.typ("keep me");
    ui.ctrl('u');
    assert_eq!(
        ui.app.composer_text(),
        "",
        "Ctrl+U kills to the start of the line"
    );
    ui.typ("keep me");
    ui.app.composer.clear(0);
    ui.press(KeyCode::Up);
    ui.app.set_composer("tell me about dogs");
    ui.enter();
    ui.settle().await;
    let last = ui.h.provider.requests().pop().unwrap();
    let users: Vec<String> = last
        .messages
        .iter()
        .filter_map(|m| match m {
            tock::llm::ChatMessage::User { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        users,
        vec!["tell me about dogs"],
        "the old exchange is not sent"
    );
    assert_eq!(ui.messages().pop().unwrap().content, "about dogs");
    let replaced: Vec<String> = ui
        .messages()
        .into_iter()
        .filter(|m| m.status == MessageStatus::Superseded)
        .map(|m| m.content)
        .collect();
    assert_eq!(
        replaced,
        vec!["tell me about cats", "about cats"],
        "marked only once sent"
    );
    assert!(
        !ui.screen(100, 24).contains("✎ editing"),
        "the banner is gone after the send"
    );
}

#[tokio::test(start_paused = true)]
async fn alt_n_new_conversation_and_rename() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    let first = ui.conv();
    ui.say("hello");
    ui.settle().await;
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    ui.pump();
    let second = ui.conv();
    assert_ne!(first, second);
    assert_eq!(ui.store().conversations().unwrap().len(), 2);
    assert!(ui.app.model.entries.is_empty());
    assert!(ui.screen(80, 24).contains("New conversation."));
    let title = |ui: &Ui| ui.store().conversation(second).unwrap().unwrap().title;
    ui.say("/rename Shopping list");
    assert_eq!(title(&ui).as_deref(), Some("Shopping list"));
    assert_eq!(ui.app.composer_text(), "");
    assert!(ui.screen(80, 24).contains("▸ Shopping list"));
    // With no title: the rename prompt, holding the title (it printed a
    // usage line); Enter saves what it becomes.
    ui.say("/rename");
    assert_eq!(ui.app.top(), Some(ViewKind::Prompt));
    assert!(ui.screen(80, 24).contains("Shopping list"));
    ui.typ(" for Sat");
    ui.enter();
    ui.pump();
    assert_eq!(title(&ui).as_deref(), Some("Shopping list for Sat"));
    assert_eq!(ui.app.composer_text(), "");
    assert_eq!(
        ui.app.output.title.as_deref(),
        Some("tock — Shopping list for Sat")
    );
    // Sends go to the conversation they were typed in.
    ui.say("milk");
    ui.settle().await;
    assert_eq!(ui.user_texts(), vec!["milk"]);
    ui.key(KeyCode::Down, KeyModifiers::ALT);
    assert_eq!(ui.conv(), first);
    assert_eq!(ui.user_texts(), vec!["hello"]);
}

#[tokio::test(start_paused = true)]
async fn f4_and_slash_sidebar_hide_and_show_the_sidebar() {
    let mut ui = Ui::new(vec![]);
    ui.app.sidebar_pref = None;
    // Below 100 columns it hides itself; F4 shows it, F4 hides it again.
    assert!(ui.screen(120, 24).contains("Conversations"));
    assert!(!ui.screen(80, 24).contains("Conversations"));
    ui.press(KeyCode::F(4));
    assert!(ui.screen(80, 24).contains("Conversations"));
    ui.press(KeyCode::F(4));
    let s = ui.screen(80, 24);
    assert!(!s.contains("Conversations"), "{s}");
    assert!(s.lines().nth(21).unwrap().starts_with("│ Message"), "{s}");
    ui.say("/sidebar");
    assert!(ui.screen(80, 24).contains("Conversations"));
    // Ctrl+B is tmux's prefix: tock leaves it alone.
    ui.ctrl('b');
    assert!(ui.screen(80, 24).contains("Conversations"));
}

#[tokio::test(start_paused = true)]
async fn history_recalls_sent_messages() {
    let mut ui = Ui::new(vec![]);
    ui.say("first");
    ui.say("second");
    // Nothing was sent yet (nothing dispatches here), so ↑ recalls instead of editing.
    ui.press(KeyCode::Up);
    assert_eq!(ui.app.composer_text(), "second");
    ui.press(KeyCode::Up);
    assert_eq!(ui.app.composer_text(), "first");
    ui.press(KeyCode::Down);
    assert_eq!(ui.app.composer_text(), "second");
    ui.press(KeyCode::Down);
    assert_eq!(ui.app.composer_text(), "");
    ui.ctrl('p');
    assert_eq!(ui.app.composer_text(), "second", "Ctrl+P recalls too");
    ui.ctrl('n');
    assert_eq!(ui.app.composer_text(), "");
    // A draft being typed is not thrown away by a look at earlier messages:
    // Ctrl+N past the newest gives it back.
    ui.typ("precious unsent draft");
    ui.ctrl('p');
    assert_eq!(ui.app.composer_text(), "second");
    ui.ctrl('p');
    assert_eq!(ui.app.composer_text(), "first");
    ui.ctrl('n');
    assert_eq!(ui.app.composer_text(), "second");
    ui.ctrl('n');
    assert_eq!(ui.app.composer_text(), "precious unsent draft");
    ui.ctrl('n');
    assert_eq!(ui.app.composer_text(), "precious unsent draft");
    // However the recall ends (here: the recalled message typed on), Ctrl+P
    // finds the draft.
    ui.ctrl('p');
    assert_eq!(ui.app.composer_text(), "second");
    ui.typ(" again");
    ui.ctrl('p');
    assert_eq!(ui.app.composer_text(), "precious unsent draft");
    ui.ctrl('u');
    ui.ctrl('u');
    assert_eq!(ui.app.composer_text(), "");
    ui.ctrl('p');
    assert_eq!(ui.app.composer_text(), "second again");
    ui.ctrl('n');
    assert_eq!(ui.app.composer_text(), "");
    // With text in the composer, Up moves the cursor instead.
    ui.typ("a");
    ui.key(KeyCode::Enter, KeyModifiers::SHIFT);
    ui.typ("b");
    ui.press(KeyCode::Up);
    assert_eq!(ui.app.composer_text(), "a\nb");
}

/// ↑ and ↓ move between the rows of a line wrapped over several, as on
/// screen; only from the first row does ↑ recall an earlier message.
#[tokio::test(start_paused = true)]
async fn up_and_down_move_between_the_rows_of_a_wrapped_line() {
    let mut ui = Ui::new(vec![]);
    ui.say("sent before");
    let long = "alpha beta gamma delta ".repeat(12);
    ui.typ(long.trim_end());
    let before = ui.screen(120, 40);
    let rows = before.lines().filter(|l| l.contains("alpha beta")).count();
    assert!(rows >= 3, "{before}");
    ui.press(KeyCode::Up);
    ui.typ("Q");
    let text = ui.app.composer_text();
    let at = text.find('Q').unwrap_or_else(|| panic!("{text}"));
    assert!(at < text.len() - 60, "Q a row up, not at the end: {text}");
    assert!(text.ends_with("gamma delta"), "{text}");
    ui.screen(120, 40);
    ui.press(KeyCode::Down);
    ui.typ("Z");
    let text = ui.app.composer_text();
    let z = text.find('Z').unwrap_or_else(|| panic!("{text}"));
    assert!(z > at, "Z a row down from Q: {text}");
    // From the first row, ↑ goes on to the messages sent before.
    for _ in 0..rows {
        ui.press(KeyCode::Up);
    }
    ui.ctrl('p');
    assert_eq!(ui.app.composer_text(), "sent before");
}

#[tokio::test(start_paused = true)]
async fn huge_paste_with_control_characters_lands_clean() {
    let mut ui = Ui::new(vec![]);
    let mut paste = String::new();
    for i in 0..10_000 {
        paste.push_str(&format!(
            "line {i}\t\x1b[31mred\x1b[0m \x07\x00\u{9b}2J\u{7f}\r\n"
        ));
    }
    ui.app.on_terminal(TermEvent::Paste(paste));
    let text = ui.app.composer_text();
    assert!(
        text.chars()
            .all(|c| c == '\n' || c == '\t' || !c.is_control()),
        "control characters in the composer"
    );
    assert_eq!(text.matches('\n').count(), 10_000);
    assert!(text.starts_with("line 0\t"), "tabs stay tabs");
    assert!(text.contains("line 9999"));
    assert!(text.contains("␛[31mred"), "escapes are visible, not active");
    let s = ui.screen(80, 24);
    assert!(s.contains("╭") && s.contains(" echo "), "{s}");
    assert!(
        !s.contains('\t'),
        "a tab is drawn as spaces, not written raw"
    );
    // It can be sent like any message, tabs and all.
    ui.enter();
    assert_eq!(ui.rows().len(), 1);
    assert!(ui.rows()[0].text.starts_with("line 0\t"));
}

#[tokio::test(start_paused = true)]
async fn ctrl_y_copies_the_last_reply_with_osc52() {
    let reply = "Hello **world**";
    let mut ui = Ui::new(vec![Step::Reply(vec![text(reply), done()])]);
    ui.start().await;
    ui.ctrl('y');
    assert!(ui.app.output.raw.is_empty(), "nothing to copy yet");
    assert!(ui.status_line().contains("no reply"));
    ui.say("hi");
    ui.settle().await;
    ui.ctrl('y');
    assert_eq!(
        ui.app.output.raw,
        vec![format!("\x1b]52;c;{}\x07", b64(reply))]
    );
    // Honest: it was sent to the terminal, which may or may not take it.
    assert!(
        ui.status_line()
            .contains("sent 15 characters to the terminal's clipboard"),
        "{}",
        ui.status_line()
    );
}

#[tokio::test(start_paused = true)]
async fn copy_n_copies_a_code_block() {
    let mut ui = Ui::new(markdown_steps());
    ui.start().await;
    ui.say("How do I build it?");
    ui.settle().await;
    ui.render(80, 24);
    ui.say("/copy 1");
    assert_eq!(
        clipboard_writes(&ui.app),
        vec!["fn main() {\n    println!(\"hello\");\n}\n"]
    );
    assert_eq!(ui.app.composer_text(), "");
    ui.say("/copy 2");
    assert_eq!(clipboard_writes(&ui.app).len(), 1);
    assert!(ui.status_line().contains("no code block 2"));
}

/// Each reply numbers its code blocks from 1, and `/copy N` takes block N
/// of the latest reply with code: the `[1]` on screen is what `/copy 1`
/// copies (it counted across the conversation and copied the first
/// reply's block).
#[tokio::test(start_paused = true)]
async fn copy_n_takes_the_block_numbered_so_in_the_latest_reply() {
    let block = |code: &str| format!("Here:\n\n```python\n{code}\n```\n");
    let mut ui = Ui::new(vec![
        Step::Reply(vec![text(&block("print(1)")), done()]),
        Step::Reply(vec![text(&block("print(2)")), done()]),
        Step::Reply(vec![text("no code in this one"), done()]),
    ]);
    ui.start().await;
    for q in ["one", "two", "three"] {
        ui.say(q);
        ui.settle().await;
    }
    let s = ui.screen(80, 40);
    assert!(s.contains("python [1]") && !s.contains("python [2]"), "{s}");
    ui.say("/copy 1");
    assert_eq!(clipboard_writes(&ui.app), vec!["print(2)\n"]);
    ui.say("/copy 2");
    assert!(
        ui.status_line()
            .contains("no code block 2 in the last reply with code (it has 1)"),
        "{}",
        ui.status_line()
    );
}

#[tokio::test(start_paused = true)]
async fn export_writes_markdown() {
    let mut ui = Ui::new(markdown_steps());
    ui.start().await;
    ui.say("How do I build it?");
    ui.settle().await;
    // Into a folder that does not exist yet: it is made, private.
    let path = ui.h.dir.path().join("exports/2026").join("out.md");
    ui.say(&format!("/export {}", path.display()));
    assert!(
        ui.status_line().starts_with("exported to"),
        "{}",
        ui.status_line()
    );
    // The folder did not exist: made, and said so (a typo in it shows).
    assert!(
        ui.status_line().contains("/exports/2026 was made for it)"),
        "{}",
        ui.status_line()
    );
    let md = std::fs::read_to_string(&path).unwrap();
    assert!(md.starts_with("# How do I build it?\n"), "{md}");
    assert!(
        md.contains("## You — 2026-11-30 00:53\n\nHow do I build it?"),
        "{md}"
    );
    assert!(md.contains(&MARKDOWN_REPLY.concat()), "{md}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path.parent().unwrap())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
    // Again: the file there is replaced, and the line says so.
    ui.say(&format!("/export {}", path.display()));
    assert!(
        ui.status_line()
            .ends_with("(it replaced the file that was there)"),
        "{}",
        ui.status_line()
    );
    // A symbolic link is refused; the file it points to is untouched.
    let precious = ui.h.dir.path().join("precious.txt");
    std::fs::write(&precious, "precious").unwrap();
    let link = ui.h.dir.path().join("link.md");
    std::os::unix::fs::symlink(&precious, &link).unwrap();
    ui.say(&format!("/export {}", link.display()));
    assert!(
        ui.status_line().contains("is a symbolic link"),
        "{}",
        ui.status_line()
    );
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "precious");
    ui.app.set_composer("");
    // An unwritable path (under a file) is an error, and the command stays
    // to be fixed.
    let file = ui.h.dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let bad = format!("/export {}/x.md", file.display());
    ui.say(&bad);
    assert!(ui.app.status_pair().1);
    assert_eq!(ui.app.composer_text(), bad);
}

/// A scheduled message sent with a file shows the 📎 in the strip (the
/// text alone hid it), and `tock list` names the file.
#[tokio::test(start_paused = true)]
async fn a_scheduled_item_with_a_file_shows_it() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    let path = ui.h.dir.path().join("paste.txt");
    std::fs::write(&path, "line 1\n").unwrap();
    ui.say(&format!("/attach {}", path.display()));
    ui.say("/later 1m read the attached log");
    let s = ui.screen(100, 30);
    assert!(s.contains("· 📎 read the attached log"), "{s}");
}

#[tokio::test(start_paused = true)]
async fn attach_a_text_file_then_send() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    let path = ui.h.dir.path().join("notes.txt");
    std::fs::write(&path, "remember the milk\n").unwrap();
    ui.say(&format!("/attach {}", path.display()));
    assert!(
        ui.status_line().contains("attached notes.txt"),
        "{}",
        ui.status_line()
    );
    assert_eq!(ui.app.composer_text(), "");
    assert!(
        ui.screen(80, 24).contains("📎 notes.txt · text · 18 B"),
        "a chip, with an honest size"
    );
    ui.say("see the attached notes");
    let row = ui.rows().remove(0);
    let parts = row.parts_json.expect("parts_json on the row");
    assert!(
        parts.contains("notes.txt") && parts.contains("remember the milk"),
        "{parts}"
    );
    assert!(
        ui.app.composer.attachments.is_empty(),
        "attachments go with one message"
    );
    ui.settle().await;
    let req = ui.h.provider.requests().pop().unwrap();
    assert!(
        format!("{:?}", req.messages).contains("remember the milk"),
        "the model gets the file"
    );
    // The sent message keeps its chip in the conversation.
    let s = ui.screen(80, 24);
    assert!(
        s.contains("see the attached notes") && s.contains("📎 notes.txt · text · 18 B"),
        "{s}"
    );
    // Exported: the export carries the file as the model read it, in a
    // fence its own backticks cannot close, and an image inline.
    std::fs::write(&path, "remember the milk\n```\nnot the end\n").unwrap();
    ui.say(&format!("/attach {}", path.display()));
    let png = ui.h.dir.path().join("dot.png");
    std::fs::write(&png, b"\x89PNG\r\n\x1a\n0000").unwrap();
    ui.say(&format!("/attach {}", png.display()));
    ui.say("see these");
    ui.settle().await;
    let out = ui.h.dir.path().join("out.md");
    ui.say(&format!("/export {}", out.display()));
    let md = std::fs::read_to_string(&out).unwrap();
    assert!(
        md.contains("Attached `notes.txt` (text, 18 B):\n\n```\nremember the milk\n```\n"),
        "{md}"
    );
    assert!(
        md.contains("Attached `notes.txt` (text, 34 B):\n\n````\nremember the milk\n```\nnot the end\n````\n"),
        "{md}"
    );
    assert!(
        md.contains("Attached `dot.png` (image/png, 12 B):\n\n![dot.png](data:image/png;base64,iVBORw0KGgowMDAw)"),
        "{md}"
    );
}

#[tokio::test(start_paused = true)]
async fn attach_over_the_cap_is_refused() {
    let cfg = Config {
        max_attachment_bytes: Some(1024),
        ..Config::default()
    };
    let mut ui = Ui::with_config(vec![], cfg);
    let path = ui.h.dir.path().join("big.txt");
    std::fs::write(&path, "x".repeat(4096)).unwrap();
    let cmd = format!("/attach {}", path.display());
    ui.say(&cmd);
    let (msg, is_err) = ui.app.status_pair();
    assert!(
        is_err && msg.contains("refused") && msg.contains("cap"),
        "{msg}"
    );
    assert!(ui.app.composer.attachments.is_empty());
    assert_eq!(ui.app.composer_text(), cmd);
    assert!(ui.rows().is_empty());
}

#[tokio::test(start_paused = true)]
async fn delete_a_conversation_from_the_sidebar() {
    let mut ui = Ui::new(vec![]);
    let doomed = ui.conv();
    ui.say("/rename Doomed");
    ui.say("/later 1h never sent");
    ui.say("/every day at 9am water the plants");
    ui.typ("half a thought");
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    let keeper = ui.conv();
    ui.say("/rename Keeper");
    ui.pump();
    ui.press(KeyCode::Tab);
    assert_eq!(ui.app.focus, Focus::Sidebar);
    let pos = ui
        .app
        .sidebar
        .visible(&ui.app.model)
        .iter()
        .position(|c| c.id == doomed)
        .unwrap();
    while ui.sidebar_sel() < pos {
        ui.ch('j');
    }
    while ui.sidebar_sel() > pos {
        ui.ch('k');
    }
    ui.ch('d');
    let s = ui.screen(80, 24);
    assert!(s.contains("Delete “Doomed”"), "{s}");
    assert!(s.contains("Its 1 pending message(s) will be"), "{s}");
    // Its draft is named too: it goes with it.
    assert!(s.contains("unsent draft"), "{s}");
    // What goes on without it is said too (it had not been).
    // The dialog's text, its rows joined.
    let question = |s: &str| {
        s.lines()
            .filter(|l| l.starts_with(" │"))
            .filter_map(|l| {
                let (a, b) = (l.find('│')?, l.rfind('│')?);
                Some(l[a + '│'.len_utf8()..b].trim().to_string())
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert!(
        question(&s).contains("Its 1 recurring series goes on, in a new conversation (F2 ends it)"),
        "{s}"
    );
    assert!(
        s.contains("y / n"),
        "the question must show its answers:\n{s}"
    );
    ui.ch('n');
    assert!(
        ui.store().conversation(doomed).unwrap().is_some(),
        "n keeps it"
    );
    // Two of them: each goes on in a conversation of its own (it read as
    // if they shared one).
    let weekly = ui.h.engine.parse_schedule("every monday 9am").unwrap();
    ui.h.engine
        .create_series(doomed, Kind::Message, "stand-up notes", &weekly)
        .unwrap();
    ui.pump();
    ui.ch('d');
    let s = ui.screen(80, 24);
    assert!(
        question(&s).contains(
            "Its 2 recurring series go on, each in a new conversation of its own (F2 ends them)"
        ),
        "{s}"
    );
    ui.ch('n');
    ui.ch('d');
    ui.ch('y');
    ui.pump();
    assert!(ui.store().conversation(doomed).unwrap().is_none());
    assert_eq!(
        ui.store()
            .list_items(true)
            .unwrap()
            .iter()
            .map(|i| i.status)
            .collect::<Vec<_>>(),
        vec![Status::Canceled],
        "its pending message is canceled, not sent elsewhere"
    );
    assert_eq!(ui.conv(), keeper);
    assert_eq!(ui.app.model.convs.len(), 1);
    let s = ui.screen(80, 24);
    assert!(!s.contains("Doomed") || s.contains("deleted"), "{s}");
    assert!(s.contains("Keeper"), "{s}");
}

// ----- untrusted text never reaches the terminal as control sequences ------------

const EVIL: &str = "title \x1b]0;evil title\x07 clear \x1b[2J clip \x1b]52;c;ZXZpbA==\x07 c1 \u{9b}31m bidi \u{202e}txet desrever";

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

fn assert_no_escapes_from_the_model(app: &App) {
    for raw in &app.output.raw {
        assert!(
            !raw.contains("]52;") && !raw.contains("]0;") && !raw.contains("[2J"),
            "model output reached the terminal: {raw:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn escape_sequences_in_a_reply_are_inert() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![Step::Hold(
        vec![text("# \x1b[2J heading\n\n"), text(EVIL)],
        gate.clone(),
    )]);
    ui.start().await;
    ui.say("say something nasty");
    ui.settle().await;
    ui.streamed().await;
    // While streaming and when finished, at two sizes.
    for _ in 0..2 {
        for (w, h) in [(80, 24), (120, 32)] {
            let t = ui.render(w, h);
            assert_clean(&t);
            let s = screen_text(&t);
            assert!(s.contains("␛]0;evil title␇"), "shown visibly:\n{s}");
        }
        assert_no_escapes_from_the_model(&ui.app);
        gate.notify_one();
        ui.settle().await;
    }
    assert_eq!(ui.messages().pop().unwrap().status, MessageStatus::Complete);
    let title = ui.app.output.title.clone().unwrap();
    assert!(!title.chars().any(forbidden), "{title:?}");
    // Copying is the one thing that writes OSC 52, and only when asked.
    ui.ctrl('y');
    assert_eq!(ui.app.output.raw.len(), 1);
    assert!(ui.app.output.raw[0].starts_with("\x1b]52;c;"));
    assert!(!ui.app.output.raw[0][7..].contains('\x1b'));
}

#[tokio::test(start_paused = true)]
async fn escape_sequences_in_a_title_are_inert() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    let conv = ui.conv();
    ui.store()
        .rename_conversation(
            conv,
            "\x1b]0;pwned\x07 \u{9b}2J \x1b]52;c;ZXZpbA==\x07 \u{202e}evil",
            T0,
        )
        .unwrap();
    // As another process would: the change is noticed, everything reloads.
    ui.app.on_engine(Event::External);
    let t = ui.render(80, 24);
    assert_clean(&t);
    let s = screen_text(&t);
    assert!(s.contains("␛]0;pwned␇"), "{s}");
    let title = ui.app.output.title.clone().unwrap();
    assert!(title.starts_with("tock — "), "{title:?}");
    assert!(!title.chars().any(forbidden), "{title:?}");
    assert!(title.contains("pwned"), "{title:?}");
    assert_no_escapes_from_the_model(&ui.app);
    // The delete confirmation shows it sanitised too.
    ui.say("/delete");
    assert_clean(&ui.render(80, 24));
}

// ----- the keymap table and the help popup agree ------------------------------------

#[test]
fn every_listed_binding_is_reachable_and_labelled() {
    let keys = Keymap::default();
    let mut listed = 0;
    for b in keys.bindings() {
        for k in &b.keys {
            listed += 1;
            let ev = KeyEvent::new(k.code, k.mods);
            assert_eq!(
                keys.action(b.scope, &ev),
                Some(b.action),
                "{:?} {} is shadowed by an earlier binding",
                b.scope,
                k.label()
            );
        }
    }
    assert!(listed >= 60, "only {listed} keys bound");
    // A main key works wherever the composer has focus: no composer binding hides it
    // (Tab completes a /command first, and falls back to moving focus).
    for g in keys.bindings().iter().filter(|b| b.scope == Scope::Main) {
        for k in &g.keys {
            let hidden = keys.action(Scope::Composer, &KeyEvent::new(k.code, k.mods));
            assert!(
                hidden.is_none() || k.code == KeyCode::Tab,
                "the composer hides {} ({:?})",
                k.label(),
                g.action
            );
        }
    }
}

#[tokio::test(start_paused = true)]
async fn the_help_popup_lists_every_binding() {
    let mut ui = Ui::new(vec![]);
    ui.ch('?');
    assert!(ui.app.popup() == Some(ViewKind::Help));
    // Tall enough to show everything.
    let s = ui.screen(140, 170);
    for (_, keys, help) in ui.app.keys.help_rows(false) {
        assert!(
            s.lines().any(|l| l.contains(&keys)
                && l.contains(&help.split(' ').take(3).collect::<Vec<_>>().join(" "))),
            "{keys:?} missing from help:\n{s}"
        );
    }
    for c in COMMANDS {
        assert!(s.contains(c.usage), "{} missing from help", c.usage);
    }
    // Shift+Enter is not advertised until the terminal shows it can report it.
    assert!(!s.contains("Shift+Enter"), "{s}");
}

// ----- more of what a user does ---------------------------------------------------

#[tokio::test(start_paused = true)]
async fn a_reply_finishing_elsewhere_notifies_without_a_keypress() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![Step::Hold(vec![text("slow")], gate.clone())]);
    ui.start().await;
    ui.say("the slow question");
    ui.settle().await;
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    assert!(ui.app.output.raw.is_empty());
    gate.notify_one();
    ui.settle().await;
    assert!(
        ui.status_line().starts_with("reply finished in “"),
        "{}",
        ui.status_line()
    );
    let raw = ui.app.output.raw.concat();
    assert!(raw.starts_with('\x07'), "bell: {raw:?}");
    assert!(
        raw.contains("\x1b]9;tock: reply finished"),
        "OSC 9: {raw:?}"
    );
    assert!(raw.contains("\x1b]777;notify;tock;"), "OSC 777: {raw:?}");
    assert!(ui.screen(80, 24).contains("reply finished"));
    // The conversation is marked unread in the sidebar until it is opened.
    let slow = ui
        .app
        .model
        .convs
        .iter()
        .find(|c| c.title.as_deref() == Some("the slow question"))
        .map(|c| c.id);
    let slow = slow
        .or_else(|| ui.app.model.unread.iter().next().copied())
        .unwrap();
    assert!(ui.app.model.unread.contains(&slow));
    assert!(
        ui.screen(80, 24).contains("• the slow question")
            || ui.screen(80, 24).contains("new reply"),
        "{}",
        ui.screen(80, 24)
    );
    ui.app.open(slow);
    assert!(!ui.app.model.unread.contains(&slow));
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    // A reply in the conversation in view does not ring.
    ui.app.output.raw.clear();
    ui.say("here");
    ui.settle().await;
    assert!(ui.app.output.raw.is_empty());
}

#[tokio::test(start_paused = true)]
async fn scrolling_a_long_conversation() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    for i in 0..30 {
        ui.say(&format!("message number {i}"));
        ui.settle().await;
    }
    let s = ui.screen(80, 24);
    assert!(s.contains("message number 29") && !s.contains("message number 0\n"));
    ui.press(KeyCode::PageUp);
    let s = ui.screen(80, 24);
    assert!(!s.contains("message number 29"), "{s}");
    assert!(s.contains("End: jump to latest"), "{s}");
    ui.key(KeyCode::Home, KeyModifiers::CONTROL);
    let s = ui.screen(80, 24);
    assert!(s.contains("│  message number 0 "), "{s}");
    ui.app
        .on_terminal(TermEvent::Mouse(ratatui::crossterm::event::MouseEvent {
            kind: ratatui::crossterm::event::MouseEventKind::ScrollDown,
            column: 40,
            row: 10,
            modifiers: KeyModifiers::NONE,
        }));
    let s = ui.screen(80, 24);
    assert!(!s.contains("│  message number 0 "), "{s}");
    // End on an empty composer jumps back to the latest.
    ui.press(KeyCode::End);
    let s = ui.screen(80, 24);
    assert!(
        s.contains("message number 29") && !s.contains("jump to latest"),
        "{s}"
    );
    ui.key(KeyCode::Up, KeyModifiers::SHIFT);
    assert_eq!(ui.app.scroll.from_bottom, Some(1));
    ui.key(KeyCode::End, KeyModifiers::CONTROL);
    assert_eq!(ui.app.scroll.from_bottom, None);
}

#[tokio::test(start_paused = true)]
async fn scrolled_up_during_a_stream_says_new_text_is_below() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    for i in 0..10 {
        ui.say(&format!("filler {i}"));
        ui.settle().await;
    }
    ui.h.provider
        .push(Step::Hold(vec![text("streaming now")], gate.clone()));
    ui.say("one more");
    ui.settle().await;
    ui.press(KeyCode::PageUp);
    let s = ui.screen(80, 24);
    assert!(s.contains("new text below — End to jump to latest"), "{s}");
    // The label's row holds nothing else: no fragment of the text under it.
    let row = s
        .lines()
        .find(|l| l.contains("new text below"))
        .unwrap_or_default();
    let chat_part = row.split('│').nth(1).unwrap_or_default();
    assert_eq!(
        chat_part.trim(),
        "↓ new text below — End to jump to latest",
        "{s}"
    );
    gate.notify_one();
    ui.settle().await;
}

#[tokio::test(start_paused = true)]
async fn clicking_a_conversation_in_the_sidebar_opens_it() {
    init_env();
    let h = harness(vec![]);
    let older = h
        .engine
        .store()
        .create_conversation(Some("Older"), "user", T0 - 60_000)
        .unwrap();
    h.engine
        .store()
        .create_conversation(Some("Newer"), "user", T0)
        .unwrap();
    let mut ui = Ui::on(h);
    let s = ui.screen(80, 24);
    let row = s.lines().position(|l| l.contains("Older")).unwrap() as u16;
    ui.app
        .on_terminal(TermEvent::Mouse(ratatui::crossterm::event::MouseEvent {
            kind: ratatui::crossterm::event::MouseEventKind::Down(
                ratatui::crossterm::event::MouseButton::Left,
            ),
            column: 5,
            row,
            modifiers: KeyModifiers::NONE,
        }));
    assert_eq!(ui.conv(), older);
    assert!(ui.screen(80, 24).contains("▸ Older"));
}

#[tokio::test(start_paused = true)]
async fn clicking_an_item_in_the_pending_strip_chooses_it_for_the_strips_keys() {
    let mut ui = Ui::new(vec![]);
    ui.say("first");
    ui.say("second, clicked");
    let ids: Vec<i64> = ui.rows().iter().map(|r| r.id).collect();
    let s = ui.screen(100, 30);
    let row = s
        .lines()
        .position(|l| l.contains("second, clicked"))
        .unwrap() as u16;
    let col = s.lines().nth(row as usize).unwrap().find("second").unwrap() as u16;
    ui.app
        .on_terminal(TermEvent::Mouse(ratatui::crossterm::event::MouseEvent {
            kind: ratatui::crossterm::event::MouseEventKind::Down(
                ratatui::crossterm::event::MouseButton::Left,
            ),
            column: col,
            row,
            modifiers: KeyModifiers::NONE,
        }));
    assert_eq!(ui.app.focus, Focus::Strip);
    assert_eq!(ui.app.strip.selected, Some(ids[1]));
    assert!(
        ui.screen(100, 30).contains("› "),
        "the clicked row is marked"
    );
    // The strip's keys now act on the clicked item, not the first one.
    ui.ch('s');
    assert_eq!(ui.row(ids[1]).priority, 1);
    assert_eq!(ui.row(ids[0]).priority, 0);
    // A click on no item changes nothing.
    ui.app
        .on_terminal(TermEvent::Mouse(ratatui::crossterm::event::MouseEvent {
            kind: ratatui::crossterm::event::MouseEventKind::Down(
                ratatui::crossterm::event::MouseButton::Left,
            ),
            column: col,
            row: 0,
            modifiers: KeyModifiers::NONE,
        }));
    assert_eq!(ui.app.strip.selected, Some(ids[1]));
}

#[tokio::test(start_paused = true)]
async fn sidebar_search_and_rename() {
    init_env();
    let h = harness(vec![]);
    for t in [
        "Trip to Lisbon",
        "Rust lifetimes",
        "Lisp macros",
        "Café in São Paulo",
    ] {
        h.engine
            .store()
            .create_conversation(Some(t), "user", T0)
            .unwrap();
    }
    let mut ui = Ui::on(h);
    ui.press(KeyCode::Tab);
    assert_eq!(ui.app.focus, Focus::Sidebar);
    ui.ch('/');
    ui.typ("lis");
    let titles: Vec<String> = ui
        .app
        .sidebar
        .visible(&ui.app.model)
        .iter()
        .map(|c| c.display_title())
        .collect();
    assert_eq!(titles.len(), 2, "{titles:?}");
    assert!(titles.iter().all(|t| t.to_lowercase().contains("lis")));
    let s = ui.screen(80, 24);
    assert!(!s.contains("Rust lifetimes") && s.contains("/lis"), "{s}");
    ui.enter();
    // Enter opened the first match, and the list is whole again: Alt+↓
    // moves on to a conversation the filter had hidden.
    let opened = ui.app.model.current_conv().unwrap().display_title();
    assert!(opened.to_lowercase().contains("lis"), "{opened}");
    assert_eq!(ui.app.focus, Focus::Composer);
    assert_eq!(ui.app.sidebar.filter, "");
    assert_eq!(ui.app.sidebar.visible(&ui.app.model).len(), 4);
    let before = ui.app.model.current;
    ui.key(KeyCode::Down, KeyModifiers::ALT);
    assert_ne!(ui.app.model.current, before, "Alt+↓ moved on");
    ui.press(KeyCode::Tab);
    assert_eq!(ui.app.focus, Focus::Sidebar);
    ui.ch('/');
    ui.press(KeyCode::Esc);
    assert_eq!(ui.app.sidebar.filter, "", "Esc clears the filter");
    assert_eq!(ui.app.sidebar.visible(&ui.app.model).len(), 4);
    // Accents aside, as search does: "cafe sao" finds "Café in São Paulo",
    // and "CAFÉ" too.
    for q in ["cafe", "sao paulo", "CAFÉ"] {
        ui.ch('/');
        ui.typ(q);
        let titles: Vec<String> = ui
            .app
            .sidebar
            .visible(&ui.app.model)
            .iter()
            .map(|c| c.display_title())
            .collect();
        assert_eq!(titles, vec!["Café in São Paulo"], "{q}");
        ui.press(KeyCode::Esc);
    }
    // Rename the selected one.
    let target = ui.app.sidebar.visible(&ui.app.model)[ui.sidebar_sel()].id;
    ui.ch('r');
    ui.erase(20);
    ui.typ("Renamed");
    ui.enter();
    assert!(ui.app.popup().is_none());
    assert_eq!(
        ui.store()
            .conversation(target)
            .unwrap()
            .unwrap()
            .title
            .as_deref(),
        Some("Renamed")
    );
    // An empty title is refused in place.
    ui.ch('r');
    ui.erase(20);
    ui.enter();
    assert!(ui.app.popup() == Some(ViewKind::Prompt));
    assert!(ui.screen(80, 24).contains("a title cannot be empty"));
    ui.press(KeyCode::Esc);
    assert!(ui.app.popup().is_none());
    // Enter opens the selected conversation.
    ui.ch('j');
    let sel = ui.app.sidebar.visible(&ui.app.model)[ui.sidebar_sel()].id;
    ui.enter();
    assert_eq!((ui.conv(), ui.app.focus), (sel, Focus::Composer));
}

#[tokio::test(start_paused = true)]
async fn strip_reschedule_with_a_live_preview() {
    let mut ui = Ui::new(vec![]);
    ui.say("/later 1h check the build");
    let id = ui.rows()[0].id;
    ui.press(KeyCode::Tab);
    ui.ch('r');
    ui.typ("blah");
    assert!(ui.screen(80, 24).contains("✗ "));
    ui.enter();
    assert!(
        ui.app.popup() == Some(ViewKind::Prompt),
        "an unreadable time keeps the prompt open"
    );
    assert_eq!(ui.row(id).due_at, Some(T0 + 3_600_000));
    ui.erase(20);
    ui.typ("3h");
    let s = ui.screen(80, 24);
    assert!(s.contains("⏰ sends Mon 30 Nov 03:53, in 3h"), "{s}");
    ui.enter();
    assert!(ui.app.popup().is_none());
    assert_eq!(ui.row(id).due_at, Some(T0 + 3 * 3_600_000));
    assert!(ui.status_line().starts_with("rescheduled"));
}

/// At 60 columns a failed item's row keeps room for its own text: a long
/// error is cut (with …) rather than the message it belongs to.
#[tokio::test(start_paused = true)]
async fn a_failed_row_keeps_its_text_when_the_error_is_long() {
    let mut ui = Ui::new(vec![Step::Fail(LlmError::permanent(
        "openai: cannot connect to 127.0.0.1:33667 (connection refused); is the server running at that address?",
    ))]);
    ui.start().await;
    ui.say("message while server down");
    ui.settle().await;
    ui.app.sidebar_pref = Some(false);
    let s = ui.screen(60, 15);
    let row = s
        .lines()
        .find(|l| l.contains("✗"))
        .unwrap_or_else(|| panic!("{s}"));
    assert!(row.contains("· message while server down"), "{s}");
    assert!(row.contains('…'), "the error is cut, and says so: {s}");
}

/// A status message never runs into the hint at the right ("… marked
/// replaced F1 help"): with less than two spaces between, the hint goes.
#[tokio::test(start_paused = true)]
async fn a_status_message_never_runs_into_the_help_hint() {
    let mut ui = Ui::new(vec![]);
    for n in 40..120 {
        ui.app.info(format!("{}QZ", "x".repeat(n)));
        let s = ui.screen(120, 40);
        let bar = s.lines().find(|l| l.contains("QZ")).unwrap_or_default();
        assert!(!bar.contains("QZ F1 help"), "{n}: {bar}");
    }
}

/// The reschedule prompt's "now due … in …" and the strip's countdown
/// agree, whatever the fraction of a second (one rounded to the nearest
/// second, the other stepped, they differed by a minute now and then).
#[tokio::test(start_paused = true)]
async fn the_prompt_and_the_strip_count_down_alike() {
    let mut ui = Ui::new(vec![]);
    ui.say("/later 2h check the build");
    ui.press(KeyCode::Tab);
    ui.ch('r');
    let countdown = |line: &str| {
        line.rsplit("in ")
            .next()
            .unwrap_or_default()
            .trim_end_matches([')', ' ', '│'])
            .split(')')
            .next()
            .unwrap_or_default()
            .to_string()
    };
    for _ in 0..400 {
        ui.h.clock.jump(300);
        let s = ui.screen(100, 30);
        let strip = s
            .lines()
            .find(|l| l.contains("check the build"))
            .unwrap_or_default();
        let prompt = s
            .lines()
            .find(|l| l.contains("now due"))
            .unwrap_or_default();
        assert_eq!(countdown(strip), countdown(prompt), "{s}");
    }
}

/// `u` on a scheduled item brings it back with its time (`/at …`), so
/// Enter schedules it again instead of sending it at once.
#[tokio::test(start_paused = true)]
async fn a_scheduled_item_taken_back_keeps_its_time() {
    let mut ui = Ui::new(vec![]);
    ui.say("/later 1h check the build");
    let first = ui.rows()[0].clone();
    let due = first.due_at.unwrap();
    ui.press(KeyCode::Tab);
    ui.ch('u');
    ui.settle().await;
    let text = ui.app.composer_text();
    assert!(
        text.starts_with("/at ") && text.ends_with(" check the build"),
        "{text}"
    );
    assert!(
        ui.status_line().contains("with its time"),
        "{}",
        ui.status_line()
    );
    ui.enter();
    ui.settle().await;
    let again = ui
        .rows()
        .into_iter()
        .find(|r| r.status == Status::Pending)
        .expect("scheduled again");
    assert_eq!(again.text, "check the build");
    let back = again.due_at.unwrap();
    // To the second (it lost its seconds, and went up to 59 s early).
    assert!((due - 1_000..=due).contains(&back), "{due} {back}");
}

/// The same at a time with seconds: they are kept.
#[tokio::test(start_paused = true)]
async fn a_scheduled_item_taken_back_keeps_its_seconds() {
    let mut ui = Ui::new(vec![]);
    ui.say("/later 1h 30s check the build");
    let due = ui.rows()[0].due_at.unwrap();
    assert_ne!(due % 60_000, 0, "a time with seconds");
    ui.press(KeyCode::Tab);
    ui.ch('u');
    ui.settle().await;
    ui.enter();
    ui.settle().await;
    let again = ui
        .rows()
        .into_iter()
        .find(|r| r.status == Status::Pending)
        .expect("scheduled again");
    let back = again.due_at.unwrap();
    assert!((due - 1_000..=due).contains(&back), "{due} {back}");
}

/// Several bad `[keys]` entries: the first is said, with how many more and
/// where they are.
#[tokio::test(start_paused = true)]
async fn several_bad_key_bindings_say_where_the_rest_are() {
    let cfg: Config = toml::from_str(
        "[keys]\n\"main.quit\" = \"ctrl+shift+banana\"\n\"strip.cancel\" = 5\n\"composer.nonsense\" = \"ctrl+x\"\n",
    )
    .unwrap();
    let ui = Ui::with_config(vec![], cfg);
    let (line, error) = ui.app.status_pair();
    assert!(error && line.contains("(+2 more, in the log)"), "{line}");
}

/// A notify_command that cannot be run is said on the screen, once, not
/// only in the log.
#[tokio::test(start_paused = true)]
async fn a_notify_command_that_cannot_run_is_said_once() {
    let cfg: Config = toml::from_str("notify_command = [\"/no/such/notify\"]\n").unwrap();
    let mut ui = Ui::with_config(
        vec![
            Step::Fail(LlmError::permanent("400 Bad Request")),
            Step::Fail(LlmError::permanent("400 Bad Request")),
        ],
        cfg,
    );
    ui.start().await;
    ui.say("try me");
    ui.settle().await;
    let (line, error) = ui.app.status_pair();
    assert!(
        error && line.contains("notify_command /no/such/notify could not be run"),
        "{line}"
    );
    // The next notice is not followed by the same line again.
    ui.app.status = None;
    ui.say("/new");
    ui.say("again");
    ui.settle().await;
    assert!(
        !ui.status_line().contains("could not be run"),
        "{}",
        ui.status_line()
    );
}

#[tokio::test(start_paused = true)]
async fn strip_retry_a_failed_item() {
    let mut ui = Ui::new(vec![Step::Fail(LlmError::permanent("400 Bad Request"))]);
    ui.start().await;
    ui.say("try me");
    ui.settle().await;
    let id = ui.rows()[0].id;
    assert_eq!(ui.row(id).status, Status::Failed);
    ui.press(KeyCode::Tab);
    ui.key(KeyCode::Char('R'), KeyModifiers::SHIFT);
    ui.settle().await;
    assert_eq!(ui.row(id).status, Status::Sent);
    assert_eq!(ui.user_texts(), vec!["try me"]);
    assert_eq!(ui.app.focus, Focus::Composer, "the strip is empty again");
}

/// "… failed — F2 to retry" goes once nothing in its conversation is failed
/// any more: retried from the command line, it stayed on for its seconds
/// after the message had gone out.
#[tokio::test(start_paused = true)]
async fn a_failure_line_goes_once_the_item_is_retried_elsewhere() {
    let mut ui = Ui::new(vec![
        Step::Fail(LlmError::permanent("400 Bad Request")),
        Step::Reply(vec![text("ok"), done()]),
    ]);
    ui.start().await;
    ui.say("try me");
    ui.settle().await;
    let id = ui.rows()[0].id;
    assert_eq!(ui.row(id).status, Status::Failed);
    assert!(
        ui.status_line().contains("F2 to retry"),
        "{}",
        ui.status_line()
    );
    ui.h.engine.retry(id).unwrap();
    ui.settle().await;
    assert_eq!(ui.row(id).status, Status::Sent);
    assert_eq!(ui.status_line(), "", "stale once retried");
}

#[tokio::test(start_paused = true)]
async fn denying_a_tool_call_schedules_nothing() {
    let mut ui = Ui::new(task_steps());
    ui.start().await;
    ui.say("remind me to check the build");
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_some());
    // With text in the composer, y and n are typed, not answers.
    ui.typ("ok yn");
    assert!(ui.app.model.waiting_approval().is_some());
    ui.app.set_composer("");
    ui.deny();
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_none());
    assert!(ui.rows().iter().all(|r| r.kind != Kind::Task));
    assert_eq!(ui.status_line(), "denied");
    // The call and its refusal are small cards, not raw JSON.
    let s = ui.screen(100, 30);
    assert!(s.contains("→ schedule_task"), "{s}");
    assert!(s.contains("✗ declined by you"), "{s}");
    assert!(!s.contains("{\"error\""), "{s}");
    // The export has the call with its arguments.
    let out = ui.h.dir.path().join("out.md");
    ui.say(&format!("/export {}", out.display()));
    let md = std::fs::read_to_string(&out).unwrap();
    assert!(md.contains("Tool call `schedule_task`"), "{md}");
    assert!(md.contains("\"instruction\""), "the arguments: {md}");
}

/// A card waiting for an answer does not hold the user in its
/// conversation: Tab steps through its buttons and on to the conversation
/// list, whose keys are the list's then (`j`, Enter), and Alt+↑/↓ switch
/// conversations; none of it answers the call, which waits where it was.
#[tokio::test(start_paused = true)]
async fn tab_and_alt_arrows_leave_an_approval_card_waiting() {
    init_env();
    let h = harness_with(Scripted::new(task_steps()), Config::default());
    let other = h
        .engine
        .store()
        .create_conversation(Some("Groceries"), "user", T0 - 3_600_000)
        .unwrap();
    let mut ui = Ui::on(h);
    ui.start().await;
    assert_eq!(ui.conv(), other, "the one conversation there is");
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    let asked = ui.conv();
    assert_ne!(asked, other);
    ui.say("remind me to check the build");
    ui.settle().await;
    let card = |ui: &mut Ui| ui.screen(100, 30).contains("Schedule “build check”?");
    let chosen = |ui: &mut Ui| ui.screen(100, 30).contains("Enter confirms");
    let waiting = |ui: &Ui| {
        ui.store()
            .approvals(asked)
            .unwrap()
            .iter()
            .filter(|a| a.status == tock::store::ApprovalStatus::Waiting)
            .count()
    };
    assert!(card(&mut ui));
    assert_eq!(waiting(&ui), 1);

    // Alt+↓ goes to the other conversation, Alt+↑ back to the card.
    ui.key(KeyCode::Down, KeyModifiers::ALT);
    assert_eq!(ui.conv(), other, "Alt+↓ left the card's conversation");
    assert!(!card(&mut ui));
    ui.key(KeyCode::Up, KeyModifiers::ALT);
    assert_eq!(ui.conv(), asked, "Alt+↑ came back");
    assert!(card(&mut ui) && !chosen(&mut ui), "waiting, nothing chosen");

    // Tab: Approve, Deny, then on to the list, the choice taken back.
    ui.press(KeyCode::Tab);
    assert!(chosen(&mut ui), "Tab chooses on the card first");
    ui.press(KeyCode::Tab);
    assert_eq!(ui.app.focus, Focus::Composer);
    ui.press(KeyCode::Tab);
    if ui.app.focus == Focus::Strip {
        ui.press(KeyCode::Tab);
    }
    assert_eq!(ui.app.focus, Focus::Sidebar, "Tab reached the list");
    assert!(!chosen(&mut ui), "leaving the card takes its choice back");
    // The list's keys: j moves down to the other conversation, Enter opens it.
    ui.ch('j');
    ui.enter();
    assert_eq!(
        ui.conv(),
        other,
        "Enter in the list opened the conversation"
    );
    assert_eq!(waiting(&ui), 1, "nothing answered the call");

    // And back (Alt+↑ from here, or Tab and Enter in the list): the card
    // still waits, nothing chosen, and is answered deliberately.
    ui.key(KeyCode::Up, KeyModifiers::ALT);
    assert_eq!(ui.conv(), asked);
    assert_eq!(ui.app.focus, Focus::Composer);
    assert!(card(&mut ui) && !chosen(&mut ui));
    assert_eq!(waiting(&ui), 1);
    ui.approve();
    ui.settle().await;
    assert_eq!(waiting(&ui), 0, "answered on the card");
}

/// A message sent while the clock was three hours ahead, then set right:
/// it happened, so the conversation list and F2 tell it as now, not as a
/// time to come ("03:53", "in 3h").
#[tokio::test(start_paused = true)]
async fn what_was_written_on_a_clock_ahead_is_told_as_past_once_it_is_set_right() {
    let mut ui = Ui::new(vec![Step::Reply(vec![text("hi"), done()])]);
    ui.start().await;
    let ahead = 3 * 3_600_000;
    ui.h.clock.jump(ahead);
    ui.say("hello");
    ui.settle().await;
    ui.h.clock.jump(-ahead);
    ui.settle().await;
    let conv = ui.store().conversation(ui.conv()).unwrap().unwrap();
    assert!(conv.updated_at > T0 + ahead - 1, "stored as written");
    let s = ui.screen(120, 30);
    // The list (the chat's headers keep the time each message has).
    let list: String = s
        .lines()
        .map(|l| l.chars().take(26).collect::<String>() + "\n")
        .collect();
    assert!(list.contains("  00:53"), "the list says now:\n{s}");
    assert!(!list.contains("03:53"), "not three hours from now:\n{s}");
    // F2, finished rows shown: the message went, by now at the latest.
    ui.press(KeyCode::F(2));
    ui.ch('a');
    ui.press(KeyCode::Down);
    let s = ui.screen(120, 30);
    assert!(s.contains("Mon 30 Nov 00:53 sent"), "its row: {s}");
    assert!(
        s.contains("sent Mon 30 Nov 00:53 (now)"),
        "its details: {s}"
    );
    assert!(!s.contains("in 3h") && !s.contains("03:53"), "{s}");
}

#[tokio::test(start_paused = true)]
async fn model_and_role_commands() {
    let mut ui = Ui::new(vec![]);
    ui.say("/model");
    assert!(
        ui.status_line().starts_with("model: echo (echo)"),
        "{}",
        ui.status_line()
    );
    ui.say("/model nonesuch");
    let (msg, is_err) = ui.app.status_pair();
    assert!(is_err && msg.contains("unknown model"), "{msg}");
    assert_eq!(ui.app.model.current_conv().unwrap().model, None);
    assert_eq!(
        ui.app.composer_text(),
        "/model nonesuch",
        "a failed command stays to be fixed"
    );
    ui.app.set_composer("");
    ui.say("/role");
    assert!(
        ui.status_line().starts_with("role: none"),
        "{}",
        ui.status_line()
    );
    ui.say("/role pirate");
    assert!(ui.app.status_pair().1);
    assert_eq!(
        ui.app.composer_text(),
        "/role pirate",
        "a failed command stays to be fixed"
    );
}

/// Another tock dispatching: where the status bar cannot say so at length,
/// it says so briefly before dropping the rest (the provider, the
/// conversation's title, the usage all went for it at 120 columns).
#[tokio::test(start_paused = true)]
async fn the_status_bar_says_another_dispatcher_briefly_before_dropping_the_rest() {
    let mut ui = Ui::new(vec![]);
    // A live process (this one) holds the lease under another owner.
    let pid = std::process::id();
    assert!(
        ui.store()
            .acquire_lease("another-tock", pid, T0, 3_600_000)
            .unwrap()
    );
    ui.start().await;
    ui.app.sidebar_pref = Some(false);
    let last = |ui: &mut Ui, w| {
        let s = ui.screen(w, 24);
        s.lines().last().unwrap_or_default().to_string()
    };
    let wide = last(&mut ui, 160);
    assert!(
        wide.contains(&format!("another tock (pid {pid}) sends")),
        "{wide}"
    );
    let mut brief_seen = false;
    for w in (60..160).rev() {
        let bar = last(&mut ui, w);
        if bar.contains("other tock sends") && !bar.contains("another") && bar.contains("offline") {
            brief_seen = true;
            break;
        }
    }
    assert!(
        brief_seen,
        "no width showed the brief form with the provider"
    );
}

#[tokio::test(start_paused = true)]
async fn quit_suspend_and_ctrl_c() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![Step::Hold(vec![text("x")], gate)]);
    ui.start().await;
    ui.ctrl('z');
    assert!(ui.app.suspend);
    ui.say("q");
    ui.settle().await;
    // Ctrl+C: stops a reply first, then clears the composer, then quits.
    ui.ctrl('c');
    ui.settle().await;
    assert!(!ui.app.model.is_busy());
    assert!(!ui.app.quit);
    ui.typ("draft");
    ui.ctrl('c');
    assert_eq!(ui.app.composer_text(), "");
    assert!(!ui.app.quit);
    // "cleared" is about that key: what is typed or pasted next ends it.
    assert!(ui.status_line().contains("cleared (Ctrl+P brings it back)"));
    ui.app.on_terminal(TermEvent::Paste("pasted".into()));
    assert_eq!(ui.status_line(), "", "stale once something else is typed");
    ui.ctrl('u');
    // On an empty composer one Ctrl+C only warns; a second within 2 s quits.
    ui.ctrl('c');
    assert!(!ui.app.quit);
    assert!(ui.status_line().contains("press Ctrl+C again to quit"));
    tokio::time::advance(std::time::Duration::from_secs(3)).await;
    ui.app.on_tick();
    assert_eq!(ui.status_line(), "", "the warning goes with its window");
    ui.ctrl('c');
    assert!(!ui.app.quit, "too late: this press warns again");
    ui.ctrl('c');
    assert!(ui.app.quit);
    let mut ui = Ui::new(vec![]);
    ui.ctrl('q');
    assert!(ui.app.quit);
    // Ctrl+Q while a reply streams warns first: quitting cuts it off.
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![Step::Hold(vec![text("x")], gate)]);
    ui.start().await;
    ui.say("q");
    ui.settle().await;
    assert!(ui.app.model.is_busy());
    ui.ctrl('q');
    assert!(!ui.app.quit);
    assert!(
        ui.status_line()
            .contains("a reply is streaming: Ctrl+Q again quits")
            && ui.status_line().contains("Esc stops it"),
        "{}",
        ui.status_line()
    );
    // Another key in between disarms it.
    ui.typ("x");
    ui.ctrl('q');
    assert!(!ui.app.quit);
    ui.ctrl('q');
    assert!(ui.app.quit);
    // ? opens help only on an empty composer.
    let mut ui = Ui::new(vec![]);
    ui.typ("why?");
    assert_eq!(ui.app.composer_text(), "why?");
    assert!(ui.app.popup().is_none());
}

#[tokio::test(start_paused = true)]
async fn renders_at_any_size_in_any_state() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(task_steps());
    ui.h.provider
        .push(Step::Hold(vec![text("long")], gate.clone()));
    ui.start().await;
    ui.say("remind me to check the build");
    ui.settle().await;
    let sizes = [
        (1, 1),
        (2, 2),
        (5, 3),
        (12, 4),
        (20, 6),
        (40, 10),
        (59, 20),
        (60, 20),
        (80, 24),
        (250, 70),
    ];
    let check = |ui: &mut Ui, what: &str| {
        for (w, h) in sizes {
            let t = ui.render(w, h);
            assert_clean(&t);
            let _ = what;
        }
    };
    check(&mut ui, "approval");
    ui.approve();
    ui.settle().await;
    check(&mut ui, "task card");
    ui.say("and this one streams");
    ui.settle().await;
    ui.say("queued behind it");
    ui.say("/later 5m and this is scheduled");
    check(&mut ui, "streaming with a strip");
    ui.press(KeyCode::Tab);
    check(&mut ui, "strip focused");
    ui.ch('x');
    check(&mut ui, "confirm");
    ui.press(KeyCode::Esc);
    ui.ch('e');
    check(&mut ui, "edit prompt");
    ui.press(KeyCode::Esc);
    ui.ch('r');
    ui.typ("10m");
    check(&mut ui, "reschedule prompt");
    ui.press(KeyCode::Esc);
    ui.press(KeyCode::Esc);
    ui.press(KeyCode::F(1));
    check(&mut ui, "help");
    ui.ch('q');
    ui.app.on_terminal(TermEvent::Paste("a\n".repeat(50)));
    check(&mut ui, "tall composer");
    ui.press(KeyCode::F(4));
    check(&mut ui, "no sidebar");
    gate.notify_one();
    ui.settle().await;
}

#[tokio::test(start_paused = true)]
async fn a_long_strip_keeps_its_header_and_the_selection_in_view() {
    let mut ui = Ui::new(vec![]);
    for i in 0..12 {
        ui.say(&format!("queued item {i}"));
    }
    let s = ui.screen(80, 24);
    assert!(s.contains("─ pending (12) Tab to manage"), "{s}");
    assert!(
        s.contains("queued item 0") && !s.contains("queued item 11"),
        "{s}"
    );
    ui.press(KeyCode::Tab);
    for _ in 0..11 {
        ui.press(KeyCode::Down);
    }
    assert_eq!(ui.strip_sel(), Some(11));
    let s = ui.screen(80, 24);
    assert!(s.contains("─ pending (12)"), "the header stays:\n{s}");
    assert!(s.contains("› ⏳ queued · queued item 11"), "{s}");
    ui.ch('x');
    ui.ch('y');
    ui.pump();
    assert_eq!(ui.rows()[11].status, Status::Canceled);
    assert_eq!(
        ui.strip_sel(),
        Some(10),
        "the canceled item left; it was last, so the one before it is selected"
    );
    let s = ui.screen(80, 24);
    assert!(s.contains("─ pending (11)"), "the header stays:\n{s}");
    assert!(s.contains("› ⏳ queued · queued item 10"), "{s}");
    ui.press(KeyCode::Up);
    assert!(ui.screen(80, 24).contains("› ⏳ queued · queued item 9"));
}

#[tokio::test(start_paused = true)]
async fn changes_by_another_process_show_up() {
    let mut ui = Ui::new(vec![]);
    let conv = ui.conv();
    // The CLI, on the same database file.
    let cli = Store::open(&ui.h.dir.path().join("tock.db")).unwrap();
    let mut it = tock::store::NewItem::new(conv, Kind::Message, "sent from the CLI");
    it.due_at = Some(T0 + 600_000);
    cli.enqueue(&it, T0).unwrap();
    cli.rename_conversation(conv, "Renamed by the CLI", T0)
        .unwrap();
    let other = cli
        .create_conversation(Some("Made by the CLI"), "cli", T0)
        .unwrap();
    // What the database watcher reports.
    ui.app.on_engine(Event::External);
    let s = ui.screen(80, 24);
    assert!(
        s.contains("sent from the CLI") && s.contains("⏰ Mon 30 Nov 01:03"),
        "{s}"
    );
    assert!(
        s.contains("Renamed by the CLI") && s.contains("Made by the CLI"),
        "{s}"
    );
    assert!(s.contains("⏰1 scheduled"), "{s}");
    // The CLI deletes the conversation in view: another one is opened.
    cli.delete_conversation(conv, T0).unwrap();
    ui.app.on_engine(Event::External);
    assert_eq!(ui.conv(), other);
    assert!(!ui.screen(80, 24).contains("Renamed by the CLI"));
}

#[tokio::test(start_paused = true)]
async fn escape_sequences_in_a_tool_call_are_inert() {
    let mut ui = Ui::new(vec![Step::Reply(vec![
        tool_call(
            "schedule_task",
            r#"{"instruction":"\u001b]52;c;ZXZpbA==\u0007 rm -rf \u202e fdp.exe","delay_secs":60,"title":"\u001b]0;t\u0007\u009b2J"}"#,
        ),
        done(),
    ])]);
    ui.start().await;
    ui.say("schedule something");
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_some());
    for (w, h) in [(80, 24), (120, 32)] {
        let t = ui.render(w, h);
        assert_clean(&t);
        assert!(screen_text(&t).contains("␛]52;c;ZXZpbA==␇ rm -rf"));
    }
    ui.approve();
    ui.settle().await;
    assert!(ui.rows().iter().any(|r| r.kind == Kind::Task));
    for (w, h) in [(80, 24), (120, 32)] {
        let t = ui.render(w, h);
        assert_clean(&t);
        assert!(screen_text(&t).contains("[scheduled]"));
    }
    ui.press(KeyCode::Tab);
    ui.ch('e');
    assert_clean(&ui.render(80, 24));
    assert_no_escapes_from_the_model(&ui.app);
}

// ----- hostile and huge input ------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn a_ten_megabyte_paste_is_kept_whole_and_sent() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    let line = "paste line with a \x1b[31mred\x1b[0m escape and \u{7} bell\n";
    let big = line.repeat(10 * 1024 * 1024 / line.len() + 1);
    ui.app
        .on_terminal(ratatui::crossterm::event::Event::Paste(big.clone()));
    let s = ui.screen(80, 24);
    assert!(!s.contains('\x1b') && !s.contains('\u{7}'));
    ui.enter();
    ui.settle().await;
    let sent = ui.user_texts();
    assert_eq!(sent.len(), 1);
    assert!(
        sent[0].len() >= 10 * 1024 * 1024 - line.len(),
        "the whole paste was accepted ({} bytes)",
        sent[0].len()
    );
    assert!(
        !sent[0].contains('\x1b'),
        "control characters are made visible, not stored raw"
    );
    let s = ui.screen(80, 24);
    assert!(s.contains("paste line"), "{s}");
}

#[tokio::test(start_paused = true)]
async fn a_megabyte_reply_and_a_100k_line_code_block_render() {
    let prose = "All work and no play makes a very long reply. ".repeat(1024 * 1024 / 47);
    let code: String = (0..100_000).map(|i| format!("let x{i} = {i};\n")).collect();
    let mut chunks: Vec<StreamEvent> = prose
        .as_bytes()
        .chunks(4096)
        .map(|c| text(std::str::from_utf8(c).unwrap()))
        .collect();
    chunks.push(text("\n\n```rust\n"));
    chunks.extend(
        code.as_bytes()
            .chunks(65_536)
            .map(|c| text(std::str::from_utf8(c).unwrap())),
    );
    chunks.push(text("```\n\nTHE END"));
    chunks.push(done());
    let mut ui = Ui::new(vec![Step::Reply(chunks)]);
    ui.start().await;
    ui.say("go");
    ui.settle().await;
    let s = ui.screen(100, 30);
    assert!(s.contains("THE END"), "{s}");
    let last = ui.messages().pop().unwrap();
    assert_eq!(last.status, MessageStatus::Complete);
    assert!(last.content.len() > 2_000_000);
    // Scrolling into the middle of it still draws.
    ui.press(KeyCode::PageUp);
    ui.press(KeyCode::PageUp);
    let s = ui.screen(100, 30);
    assert!(s.contains("let x99"), "{s}");
}

#[tokio::test(start_paused = true)]
async fn ten_thousand_pending_items_and_a_thousand_conversations_stay_usable() {
    let mut ui = Ui::new(vec![]);
    let now = ui.h.engine.now_ms();
    for i in 0..1_000 {
        ui.store()
            .create_conversation(Some(&format!("conversation {i}")), "user", now + i)
            .unwrap();
    }
    let conv = ui
        .store()
        .create_conversation(Some("busy one"), "user", now + 5_000)
        .unwrap();
    for i in 0..10_000 {
        let mut it = NewItem::new(conv, Kind::Message, format!("scheduled item {i}"));
        it.due_at = Some(now + 3_600_000 + i);
        ui.store().enqueue(&it, now).unwrap();
    }
    ui.app.on_engine(Event::External);
    ui.app.open(conv);
    ui.start().await;
    let s = ui.screen(100, 30);
    assert!(s.contains("pending (10000)"), "{s}");
    assert!(
        s.contains("10000 scheduled") || s.contains("⏰10000"),
        "{s}"
    );
    ui.press(KeyCode::Tab);
    for _ in 0..30 {
        ui.press(KeyCode::Down);
    }
    let s = ui.screen(100, 30);
    assert!(
        s.contains("scheduled item 30"),
        "the selection stays visible: {s}"
    );
    ui.press(KeyCode::Esc);
    ui.press(KeyCode::F(2));
    let s = ui.screen(100, 30);
    assert!(s.contains("10000"), "{s}");
    ui.press(KeyCode::Esc);
    // The conversation list scrolls to a selection far down.
    ui.press(KeyCode::F(4));
    ui.press(KeyCode::F(4));
    for _ in 0..500 {
        ui.app
            .on_key(KeyEvent::new(KeyCode::Down, KeyModifiers::ALT));
    }
    let s = ui.screen(100, 30);
    assert!(s.contains("conversation 5"), "{s}");
}

#[tokio::test(start_paused = true)]
async fn f3_shows_the_notification_history() {
    let mut ui = Ui::new(vec![Step::Fail(LlmError::permanent(
        "401 Unauthorized: bad key",
    ))]);
    ui.start().await;
    ui.say("hello");
    ui.settle().await;
    ui.press(KeyCode::F(3));
    assert!(ui.app.popup() == Some(ViewKind::Notices));
    let s = ui.screen(80, 24);
    assert!(s.contains("Notifications"), "{s}");
    assert!(s.contains("401 Unauthorized"), "{s}");
    ui.press(KeyCode::Char('q'));
    assert!(ui.app.popup().is_none());
    // A command typed at the popup closes it and reaches the composer whole,
    // so it runs as a command instead of going to the model as text.
    ui.press(KeyCode::F(3));
    ui.typ("/tools");
    assert!(ui.app.popup().is_none());
    assert_eq!(ui.app.composer_text(), "q/tools");
    // A notification about another conversation: chosen, Enter goes there.
    let first = ui.conv();
    ui.app.set_composer("");
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    ui.pump();
    assert_ne!(ui.conv(), first);
    ui.app.on_engine(Event::Notice(tock::engine::Notification {
        kind: tock::engine::NoticeKind::Info,
        conversation_id: None,
        text: "configuration reloaded".into(),
        elsewhere: false,
    }));
    ui.press(KeyCode::F(3));
    let s = ui.screen(80, 24);
    assert!(
        s.contains("› ") && s.contains("configuration reloaded"),
        "{s}"
    );
    assert!(
        s.contains("“Conversation 1” · failed: 401 Unauthorized: bad key"),
        "names its conversation: {s}"
    );
    // One that names its conversation is not told it twice.
    ui.press(KeyCode::Esc);
    ui.app.on_engine(Event::Notice(tock::engine::Notification {
        kind: tock::engine::NoticeKind::ReplyFinished,
        conversation_id: Some(first),
        text: "reply finished in “Conversation 1”".into(),
        elsewhere: false,
    }));
    ui.press(KeyCode::F(3));
    let s = ui.screen(120, 40);
    assert!(
        s.contains("› 00:53 reply finished in “Conversation 1”  "),
        "{s}"
    );
    ui.press(KeyCode::Down);
    ui.press(KeyCode::Down);
    insta::assert_snapshot!("notifications_chosen_120x40", ui.render(120, 40).backend());
    insta::assert_snapshot!("notifications_chosen_60x15", ui.render(60, 15).backend());
    ui.press(KeyCode::Enter);
    assert!(ui.app.popup().is_none());
    assert_eq!(
        ui.conv(),
        first,
        "Enter opened the failed message's conversation"
    );
}

/// A message sent at its time and a reply ring the terminal once per
/// conversation until it is opened again (a series every minute rang every
/// minute); a failure rings each time.
#[tokio::test(start_paused = true)]
async fn routine_notices_ring_once_per_conversation_until_it_is_opened() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.say("hello");
    ui.settle().await;
    let other = ui.conv();
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    ui.pump();
    let notice = |ui: &mut Ui, kind: tock::engine::NoticeKind| {
        ui.app.output.raw.clear();
        ui.app.on_engine(Event::Notice(tock::engine::Notification {
            kind,
            conversation_id: Some(other),
            text: "recurring message sent in “hello”".into(),
            elsewhere: false,
        }));
        ui.app.output.raw.iter().any(|r| r.contains('\x07'))
    };
    use tock::engine::NoticeKind::{Failed, Fired, ReplyFinished};
    assert!(notice(&mut ui, Fired), "the first rings");
    assert!(
        !notice(&mut ui, ReplyFinished),
        "its reply does not ring again"
    );
    assert!(!notice(&mut ui, Fired), "nor the next occurrence");
    assert!(notice(&mut ui, Failed), "a failure always rings");
    // Looked at, it rings again for what comes next.
    let here = ui.conv();
    ui.app.open(other);
    ui.app.open(here);
    assert!(notice(&mut ui, Fired));
    // Every notice is in F3 all the same.
    assert_eq!(ui.app.notices.len(), 5);
}

/// F2 covers the screen but the status bar: what its keys did, a refusal
/// with its reason too, is read under it.
#[tokio::test(start_paused = true)]
async fn f2_leaves_the_status_bar_to_say_why_a_key_was_refused() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.say("/later 1h water the plants");
    ui.settle().await;
    ui.press(KeyCode::F(2));
    ui.ch('R');
    ui.settle().await;
    assert_eq!(ui.app.top(), Some(ViewKind::Scheduled));
    let s = ui.screen(100, 30);
    let last = s.lines().last().unwrap_or_default();
    assert!(
        last.contains("#1 is still waiting to be sent; s sends it now"),
        "{s}"
    );
}

/// Reschedules a `/later 1h` item from F2 with what `f2_input` types into
/// its prompt, then schedules "second" from the Ctrl+T picker with what
/// `picker_input` types there: both must read as 2 h and 3 h from now.
async fn time_inputs_read_2h_and_3h(f2_input: impl Fn(&mut Ui), picker_input: impl Fn(&mut Ui)) {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    let t0 = ui.h.engine.now_ms();
    ui.say("/later 1h first");
    ui.settle().await;
    let id = ui.rows()[0].id;
    ui.press(KeyCode::F(2));
    ui.ch('r');
    f2_input(&mut ui);
    ui.enter();
    ui.settle().await;
    let due = ui.store().item(id).unwrap().unwrap().due_at.unwrap();
    assert!(
        (due - (t0 + 2 * 3_600_000)).abs() < 1_000,
        "rescheduled to about now+2h: {}",
        due - t0
    );
    ui.press(KeyCode::Esc);
    ui.typ("second");
    ui.ctrl('t');
    picker_input(&mut ui);
    ui.enter();
    ui.settle().await;
    let second = ui
        .rows()
        .into_iter()
        .find(|r| r.text == "second")
        .expect("scheduled from the picker");
    let due = second.due_at.unwrap();
    assert!(
        (due - (t0 + 3 * 3_600_000)).abs() < 1_000,
        "picked about now+3h: {}",
        due - t0
    );
}

/// Ctrl+T schedules messages, never commands: `/rename Foo` is refused as
/// Enter would refuse to send it, and `//` sends a literal slash later too.
#[tokio::test(start_paused = true)]
async fn ctrl_t_refuses_a_command_and_unescapes_a_literal_slash() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.typ("/rename Foo");
    ui.ctrl('t');
    assert_eq!(ui.app.top(), None, "no picker for a command");
    let (msg, is_err) = ui.app.status_pair();
    assert!(
        is_err && msg.contains("a command is not sent later"),
        "{msg}"
    );
    assert_eq!(ui.app.composer_text(), "/rename Foo", "the text stays");
    ui.app.set_composer("");
    ui.typ("//etc/hosts is the file");
    ui.ctrl('t');
    assert_eq!(ui.app.top(), Some(ViewKind::Picker));
    ui.ch('1');
    ui.enter();
    ui.pump();
    let rows = ui.rows();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].text, "/etc/hosts is the file");
    assert!(rows[0].due_at.is_some());
}

/// More than ten years ahead is refused by every time input as you type,
/// as sending would refuse it (the previews said "sends Sun 2 May 2038").
#[tokio::test(start_paused = true)]
async fn every_time_input_refuses_more_than_ten_years_ahead_as_you_type() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.typ("/later 99999h check");
    let preview = ui.app.composer_preview();
    assert_eq!(
        preview,
        Some(Err("too far ahead (more than 10 years)".into())),
        "{preview:?}"
    );
    ui.app.set_composer("");
    ui.typ("check the build");
    ui.ctrl('t');
    ui.ch('5');
    ui.typ("99999h");
    let s = ui.screen(60, 15);
    assert!(s.contains("too far ahead (more than 10 years)"), "{s}");
    ui.enter();
    assert_eq!(ui.app.top(), Some(ViewKind::Picker), "the picker stays");
    assert!(ui.rows().is_empty(), "nothing scheduled");
    ui.press(KeyCode::Esc);
    ui.press(KeyCode::Esc);
    assert_eq!(ui.app.composer_text(), "check the build");
}

#[tokio::test(start_paused = true)]
async fn pastes_reach_the_f2_prompt_and_the_time_picker() {
    time_inputs_read_2h_and_3h(
        |ui| {
            ui.app.on_terminal(TermEvent::Paste("2h".into()));
        },
        |ui| {
            ui.app.on_terminal(TermEvent::Paste("in 3h".into()));
        },
    )
    .await;
}

/// Ctrl+U kills to the start of the line in the time prompts too, as in the
/// composer (the textarea alone made it an undo: one character went).
#[tokio::test(start_paused = true)]
async fn ctrl_u_clears_the_f2_time_prompt_and_the_picker_input() {
    time_inputs_read_2h_and_3h(
        |ui| {
            ui.typ("abc def");
            ui.ctrl('u');
            ui.typ("2h");
        },
        |ui| {
            ui.ch('5'); // "custom…"
            ui.typ("xyz");
            ui.ctrl('u');
            ui.typ("in 3h");
        },
    )
    .await;
}

// ----- the behaviours a user relies on (each asserts the database) ------------------

#[tokio::test(start_paused = true)]
async fn a_key_acts_on_the_item_selected_not_the_row_that_slid_into_its_place() {
    let (gate_a, gate_b) = (
        Arc::new(tokio::sync::Notify::new()),
        Arc::new(tokio::sync::Notify::new()),
    );
    let mut ui = Ui::new(vec![
        Step::Hold(vec![text("A…")], gate_a.clone()),
        Step::Hold(vec![text("B…")], gate_b.clone()),
        Step::Reply(vec![text("C!"), done()]),
    ]);
    ui.start().await;
    ui.say("/later 1h D scheduled for later");
    ui.say("A");
    ui.settle().await;
    ui.say("B");
    ui.say("C");
    ui.settle().await;
    // The strip: B, C, D. The cursor goes to C (the second row).
    ui.press(KeyCode::Tab);
    ui.press(KeyCode::Down);
    let c = ui.rows().into_iter().find(|r| r.text == "C").unwrap();
    let d = ui
        .rows()
        .into_iter()
        .find(|r| r.text.starts_with("D"))
        .unwrap();
    assert_eq!(ui.app.strip.selected, Some(c.id));
    // A finishes, B leaves the strip (sending): rows slide up, the cursor stays on C.
    gate_a.notify_one();
    ui.settle().await;
    assert_eq!(ui.app.strip.selected, Some(c.id));
    assert!(
        ui.screen(100, 24).contains("› ⏳ queued · C"),
        "{}",
        ui.screen(100, 24)
    );
    ui.ch('s');
    ui.pump();
    assert_eq!(ui.row(c.id).priority, 1, "C was the one sent first");
    assert_eq!(ui.row(d.id).due_at, d.due_at, "nothing scheduled moved");
    gate_b.notify_one();
    ui.settle().await;
    assert_eq!(ui.row(c.id).status, Status::Sent);
    assert_eq!(
        ui.row(d.id).status,
        Status::Pending,
        "D still waits for its time"
    );
    // An action on an item that changed since it was shown is refused.
    let stale = ui.row(d.id).updated_at;
    ui.h.engine.edit(d.id, "D changed elsewhere").unwrap();
    let r =
        ui.h.engine
            .act_on_item(d.id, stale, tock::engine::ItemAction::SendNow);
    assert!(r.is_err_and(|e| e.to_string().contains("changed since it was shown")));
    assert_eq!(ui.row(d.id).priority, 0);
}

#[tokio::test(start_paused = true)]
async fn drafts_are_per_conversation_and_survive_a_restart() {
    let mut ui = Ui::new(vec![]);
    let first = ui.conv();
    ui.typ("draft meant for the first");
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    let second = ui.conv();
    assert_ne!(first, second);
    assert_eq!(
        ui.app.composer_text(),
        "",
        "the other conversation has its own draft"
    );
    ui.typ("second draft");
    ui.key(KeyCode::Down, KeyModifiers::ALT);
    assert_eq!(ui.conv(), first);
    assert_eq!(ui.app.composer_text(), "draft meant for the first");
    // Saved as you type (debounced), not only on a switch.
    ui.typ(" and more");
    tokio::time::advance(std::time::Duration::from_millis(400)).await;
    ui.app.on_tick();
    assert_eq!(
        ui.store().draft(first).unwrap().text,
        "draft meant for the first and more"
    );
    assert_eq!(ui.store().draft(second).unwrap().text, "second draft");
    // A new app on the same database (a restart, or after a crash): the draft is back.
    let app = App::new(ui.h.engine.clone()).unwrap();
    assert_eq!(app.model.current, Some(first));
    assert_eq!(app.composer_text(), "draft meant for the first and more");
    // Sending clears the draft in the same transaction.
    ui.enter();
    assert_eq!(ui.store().draft(first).unwrap().text, "");
}

#[tokio::test(start_paused = true)]
async fn pulling_an_item_back_never_overwrites_a_draft() {
    let mut ui = Ui::new(vec![]);
    ui.say("do 30 minutes of reading");
    let id = ui.rows()[0].id;
    ui.typ("my precious draft");
    ui.press(KeyCode::Tab);
    ui.ch('u');
    assert_eq!(ui.app.composer_text(), "my precious draft");
    assert_eq!(
        ui.row(id).status,
        Status::Pending,
        "refused: the item stays queued"
    );
    assert!(
        ui.status_line().contains("holds a draft"),
        "{}",
        ui.status_line()
    );
    // With an empty composer it comes back, and is the draft in the database at once.
    ui.app.composer.clear(0);
    assert_eq!(ui.app.focus, Focus::Strip);
    ui.ch('u');
    assert_eq!(ui.app.composer_text(), "do 30 minutes of reading");
    assert_eq!(ui.row(id).status, Status::Canceled);
    assert_eq!(
        ui.store().draft(ui.conv()).unwrap().text,
        "do 30 minutes of reading"
    );
}

/// Two tocks on one conversation: one saved a draft; in the other, whose
/// composer was empty, a key typed and erased saved an empty draft that
/// removed it (a crash of the first then lost it). An empty composer no
/// longer removes a draft it has not seen, and shows it instead.
#[tokio::test(start_paused = true)]
async fn an_empty_composer_does_not_remove_a_draft_another_tock_saved() {
    let mut ui = Ui::new(vec![]);
    let conv = ui.conv();
    // Written by the other tock, after this one loaded the (empty) draft.
    let theirs = tock::store::Draft {
        text: "draft typed in the other window".into(),
        ..Default::default()
    };
    ui.store().save_draft(conv, &theirs, T0).unwrap();
    ui.typ("y");
    ui.press(KeyCode::Backspace);
    ui.app.save_draft();
    ui.pump();
    assert_eq!(ui.store().draft(conv).unwrap().text, theirs.text, "kept");
    assert_eq!(ui.app.composer_text(), theirs.text, "and shown here");
    // Its own draft, once saved, it still empties as before.
    ui.press(KeyCode::End);
    ui.typ(" and more");
    ui.app.save_draft();
    ui.pump();
    ui.app.composer.clear(0);
    ui.app.save_draft();
    ui.pump();
    assert_eq!(ui.store().draft(conv).unwrap().text, "");
}

/// A reply streaming and held there (until the gate is opened), its
/// question "slow-story"; the next reply is "pong".
async fn streaming_a_held_reply() -> (Ui, Arc<tokio::sync::Notify>) {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![
        Step::Hold(vec![text("Once upon a time")], gate.clone()),
        Step::Reply(vec![text("pong"), done()]),
    ]);
    ui.start().await;
    ui.say("slow-story");
    ui.settle().await;
    (ui, gate)
}

/// Emoji a terminal measures otherwise than ratatui (`⚠️` one column in
/// tmux, two for ratatui; `👍🏽` four against two) are drawn without what
/// makes them differ; the stored reply keeps it.
#[tokio::test(start_paused = true)]
async fn emoji_modifiers_are_not_drawn_but_kept() {
    let reply = "\u{26A0}\u{FE0F} careful \u{1F44D}\u{1F3FD} done";
    let mut ui = Ui::new(vec![Step::Reply(vec![text(reply), done()])]);
    ui.start().await;
    ui.say("hi");
    ui.settle().await;
    let s = ui.screen(80, 24);
    assert!(s.contains("\u{26A0} careful \u{1F44D} done"), "{s}");
    assert!(!s.contains('\u{FE0F}') && !s.contains('\u{1F3FD}'), "{s}");
    let conv = ui.conv();
    let stored = ui.store().messages(conv).unwrap();
    assert_eq!(stored.last().unwrap().content, reply);
}

/// A burst of queued messages (a paste sent line by line) is canceled in
/// one go from the strip: X asks, y cancels what was queued; what is
/// scheduled stays, and a stop's pause with nothing left to hold is lifted.
#[tokio::test(start_paused = true)]
async fn x_in_the_strip_cancels_everything_queued_after_asking() {
    let (mut ui, _gate) = streaming_a_held_reply().await;
    for i in 0..3 {
        ui.say(&format!("line {i}"));
    }
    ui.say("/later 1h stays scheduled");
    ui.press(KeyCode::Esc);
    ui.settle().await;
    assert!(ui.app.model.paused());
    ui.press(KeyCode::Tab);
    assert_eq!(ui.app.focus, Focus::Strip);
    assert!(
        ui.screen(120, 40).contains("X cancel all"),
        "{}",
        ui.screen(120, 40)
    );
    ui.ch('X');
    let s = ui.screen(100, 30);
    assert!(s.contains("Cancel all 3 messages queued here?"), "{s}");
    ui.ch('y');
    ui.pump();
    let open: Vec<String> = ui
        .rows()
        .into_iter()
        .filter(|r| r.status == Status::Pending)
        .map(|r| r.text)
        .collect();
    assert_eq!(open, vec!["stays scheduled"]);
    assert_eq!(ui.status_line(), "canceled 3 queued messages");
    assert!(!ui.app.model.paused(), "nothing left to hold");
    // What is left is chosen: its keys act on it at once.
    assert_eq!(ui.app.focus, Focus::Strip);
    ui.ch('x');
    assert!(
        ui.screen(100, 30).contains("Cancel “stays scheduled”?"),
        "{}",
        ui.screen(100, 30)
    );
    ui.press(KeyCode::Esc);
    // Nothing queued: X says so.
    assert_eq!(
        ui.app.focus,
        Focus::Strip,
        "the strip still shows the scheduled one"
    );
    ui.ch('X');
    assert_eq!(ui.status_line(), "nothing is queued here");
}

/// F2 open while a conversation is renamed (here, or by another process):
/// its rows show the new title.
#[tokio::test(start_paused = true)]
async fn f2_follows_a_conversation_renamed_while_it_is_open() {
    let mut ui = Ui::new(vec![]);
    let conv = ui.conv();
    ui.say("/rename Before");
    ui.say("/every day at 9am water the plants");
    ui.say("/later 1h one-off");
    ui.press(KeyCode::F(2));
    let s = ui.screen(120, 30);
    assert!(s.contains("Before"), "{s}");
    ui.h.engine.rename_conversation(conv, "After").unwrap();
    ui.pump();
    let s = ui.screen(120, 30);
    assert!(s.contains("After") && !s.contains("Before"), "{s}");
    // Renamed by another process: told by the database watch.
    ui.store()
        .rename_conversation(conv, "Elsewhere", T0)
        .unwrap();
    ui.app.on_engine(Event::External);
    let s = ui.screen(120, 30);
    assert!(s.contains("Elsewhere") && !s.contains("After"), "{s}");
}

/// Nothing queued behind the stopped reply: nothing to hold, so no pause
/// ("pending (0) ⏸ paused" stayed on screen with nothing in it).
#[tokio::test(start_paused = true)]
async fn esc_with_nothing_queued_stops_without_a_pause() {
    let (mut ui, _gate) = streaming_a_held_reply().await;
    ui.press(KeyCode::Esc);
    ui.settle().await;
    let (msg, _) = ui.app.status_pair();
    assert_eq!(msg, "stopped; Ctrl+R regenerates");
    let conv = ui.conv();
    assert!(
        ui.store()
            .conversation(conv)
            .unwrap()
            .unwrap()
            .queue_paused_at
            .is_none()
    );
    let s = ui.screen(100, 30);
    assert!(!s.contains("pending (0)") && !s.contains("paused"), "{s}");
    // The next message goes at once.
    ui.say("ping");
    ui.settle().await;
    assert_eq!(ui.user_texts(), vec!["slow-story", "ping"]);
}

#[tokio::test(start_paused = true)]
async fn esc_stops_the_reply_and_pauses_the_queue_until_resumed() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![
        Step::Hold(vec![text("Once upon a time")], gate.clone()),
        Step::Reply(vec![text("the story, again"), done()]),
        Step::Reply(vec![text("pong"), done()]),
    ]);
    ui.start().await;
    ui.say("slow-story");
    ui.settle().await;
    ui.say("ping after esc");
    ui.press(KeyCode::Esc);
    ui.settle().await;
    let queued = ui
        .rows()
        .into_iter()
        .find(|r| r.text == "ping after esc")
        .unwrap();
    assert_eq!(
        ui.row(queued.id).status,
        Status::Pending,
        "the follow-up waits"
    );
    // Unfocused, the strip says how to reach its keys, also at 60 columns.
    let s = ui.screen(100, 30);
    assert!(s.contains("paused after stop — Tab, Enter resumes"), "{s}");
    insta::assert_snapshot!("paused_queue_100x30", s);
    ui.app.sidebar_pref = Some(false);
    let narrow = ui.screen(60, 15);
    ui.app.sidebar_pref = Some(true);
    assert!(
        narrow.contains("paused after stop — Tab, Enter resumes"),
        "{narrow}"
    );
    ui.press(KeyCode::Tab);
    let s = ui.screen(100, 30);
    assert!(s.contains("paused after stop — Enter or s resumes"), "{s}");
    ui.press(KeyCode::Esc);
    // Ctrl+R regenerates the stopped reply (and resumes): the story first, then the ping.
    ui.ctrl('r');
    ui.settle().await;
    let replies: Vec<String> = ui
        .messages()
        .into_iter()
        .filter(|m| m.role == Role::Assistant && m.status == MessageStatus::Complete)
        .map(|m| m.content)
        .collect();
    assert_eq!(replies, vec!["the story, again", "pong"]);
    assert_eq!(ui.row(queued.id).status, Status::Sent);
}

/// "the queue is paused (… /resume)" goes once the queue is resumed
/// elsewhere (another tock, the CLI): it stood after the queue had gone on.
#[tokio::test(start_paused = true)]
async fn the_line_saying_the_queue_is_paused_goes_when_it_is_resumed_elsewhere() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![
        Step::Hold(vec![text("Once upon a time")], gate.clone()),
        Step::Hold(vec![text("pong")], gate.clone()),
    ]);
    ui.start().await;
    ui.say("slow-story");
    ui.settle().await;
    ui.say("ping after esc");
    ui.press(KeyCode::Esc);
    ui.settle().await;
    assert!(
        ui.status_line().contains("the queue is paused"),
        "{}",
        ui.status_line()
    );
    let conv = ui.conv();
    assert!(ui.h.engine.resume_queue(conv).unwrap());
    ui.settle().await;
    assert!(
        !ui.status_line().contains("the queue is paused"),
        "{}",
        ui.status_line()
    );
}

/// A pause holds what was queued; cancelling the last of it (or taking it
/// back into the composer) leaves nothing to hold, and the pause goes.
#[tokio::test(start_paused = true)]
async fn cancelling_the_last_held_item_lifts_the_pause() {
    for last_back_to_composer in [false, true] {
        let gate = Arc::new(tokio::sync::Notify::new());
        let mut ui = Ui::new(vec![Step::Hold(vec![text("…")], gate)]);
        ui.start().await;
        ui.say("slow");
        ui.settle().await;
        ui.say("first held");
        ui.say("second held");
        ui.press(KeyCode::Esc);
        ui.settle().await;
        let paused = |ui: &Ui| {
            ui.store()
                .conversation(ui.conv())
                .unwrap()
                .unwrap()
                .queue_paused_at
                .is_some()
        };
        assert!(paused(&ui));
        ui.press(KeyCode::Tab);
        ui.ch('x');
        ui.ch('y');
        ui.settle().await;
        assert!(paused(&ui), "one item is still held");
        ui.press(KeyCode::Down);
        if last_back_to_composer {
            ui.ch('u');
            ui.settle().await;
            assert_eq!(ui.app.composer_text(), "second held");
        } else {
            ui.ch('x');
            ui.ch('y');
            ui.settle().await;
        }
        assert!(
            !paused(&ui),
            "nothing is held (back to composer: {last_back_to_composer})"
        );
        let s = ui.screen(100, 30);
        assert!(!s.contains("paused"), "{s}");
    }
}

#[tokio::test(start_paused = true)]
async fn enter_in_the_strip_resumes_a_paused_queue() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![
        Step::Hold(vec![text("…")], gate),
        Step::Reply(vec![text("pong"), done()]),
    ]);
    ui.start().await;
    ui.say("slow");
    ui.settle().await;
    ui.say("next");
    ui.press(KeyCode::Esc);
    ui.settle().await;
    assert!(
        ui.store()
            .conversation(ui.conv())
            .unwrap()
            .unwrap()
            .queue_paused_at
            .is_some()
    );
    ui.press(KeyCode::Tab);
    ui.enter();
    ui.settle().await;
    assert!(
        ui.store()
            .conversation(ui.conv())
            .unwrap()
            .unwrap()
            .queue_paused_at
            .is_none()
    );
    assert!(ui.user_texts().contains(&"next".to_string()));
}

/// The card of a server's tool call shows its arguments line by line, as
/// many as fit; Ctrl+O shows all of them (what a long file ends with, where
/// a harmful line would hide), and Esc goes back to the card to answer.
#[tokio::test(start_paused = true)]
async fn the_approval_card_shows_every_argument_of_a_long_call_on_ctrl_o() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.say("hello");
    ui.settle().await;
    let conv = ui.conv();
    let mut content: String = (0..60)
        .map(|i| format!("line {i}: harmless text\n"))
        .collect();
    content.push_str("rm -rf ~ # hidden at the end");
    let args = serde_json::json!({"path": "/tmp/notes/long.txt", "content": content}).to_string();
    let now = ui.h.engine.now_ms();
    ui.store()
        .add_approval(conv, 0, "call_9", "files__write_file", &args, "{}", now)
        .unwrap();
    ui.app.on_engine(Event::Conversation(conv));
    ui.pump();
    assert_eq!(ui.app.top(), Some(ViewKind::Approval));
    let s = ui.screen(100, 30);
    assert!(s.contains("Allow files__write_file?"), "{s}");
    assert!(s.contains("path: /tmp/notes/long.txt"), "{s}");
    assert!(
        s.contains("content: (61 lines)") && s.contains("line 0: harmless text"),
        "{s}"
    );
    assert!(
        s.contains("more lines — Ctrl+O shows the whole call"),
        "{s}"
    );
    assert!(!s.contains("rm -rf"), "{s}");
    insta::assert_snapshot!("approval_long_call_100x30", ui.render(100, 30).backend());
    ui.key(KeyCode::Char('o'), KeyModifiers::CONTROL);
    assert_eq!(ui.app.top(), Some(ViewKind::Call));
    ui.render(100, 30);
    ui.press(KeyCode::End);
    let s = ui.screen(100, 30);
    assert!(s.contains("rm -rf ~ # hidden at the end"), "{s}");
    ui.render(60, 15);
    ui.press(KeyCode::End);
    insta::assert_snapshot!("approval_call_end_60x15", ui.render(60, 15).backend());
    ui.press(KeyCode::Esc);
    assert_eq!(ui.app.top(), Some(ViewKind::Approval), "back to answer it");
    ui.press(KeyCode::Right);
    ui.enter();
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_none(), "denied");
}

/// A schedule_task card in a narrow window: the instruction wraps, and
/// where it is longer than the card holds its last row ends in `…` and the
/// card says Ctrl+O shows it all; the title is cut inside its quotes and
/// its `[needs approval]` badge is whole (it was cut to `[needs approv`,
/// the instruction to its first row with no `…`).
#[tokio::test(start_paused = true)]
async fn a_long_instruction_on_the_approval_card_says_it_is_cut() {
    let instruction = "review the pull requests that are waiting for me in the main \
        repository today and then also the ones in the docs repository and the \
        website, and write a summary for the team";
    let args = serde_json::json!({
        "instruction": instruction,
        "delay_secs": 600,
        "title": "review the pull requests that",
    })
    .to_string();
    let mut ui = Ui::new(vec![
        Step::Reply(vec![tool_call("schedule_task", &args), done()]),
        Step::Reply(vec![text("Done."), done()]),
    ]);
    ui.start().await;
    ui.say("remind me");
    ui.settle().await;
    assert_eq!(ui.app.top(), Some(ViewKind::Approval));
    ui.app.sidebar_pref = Some(false);
    let s = ui.screen(60, 15);
    assert!(
        s.contains("╭─ Schedule “review the pull request…”? [needs approval] ─"),
        "{s}"
    );
    assert!(
        s.contains("│ review the pull requests that are waiting for me in the"),
        "{s}"
    );
    assert!(
        s.contains("│ main repository today and then also the ones in the …"),
        "{s}"
    );
    assert!(s.contains("│ Ctrl+O shows the whole instruction"), "{s}");
    assert!(s.contains("│ fires Mon 30 Nov 01:03, in 10m"), "{s}");
    insta::assert_snapshot!("approval_long_instruction_60x15", s);
    // Where there is room, all of it, and no word of a cut.
    let s = ui.screen(120, 40);
    assert!(
        s.contains("│ the website, and write a summary for the team"),
        "{s}"
    );
    assert!(!s.contains("shows the whole instruction"), "{s}");
    insta::assert_snapshot!("approval_long_instruction_120x40", s);
    // With the sidebar, the badge goes whole rather than be cut.
    ui.app.sidebar_pref = Some(true);
    let s = ui.screen(60, 15);
    assert!(!s.contains("[needs"), "{s}");
    // and the time in fewer words rather than its countdown cut.
    assert!(s.contains("│ fires 01:03, in 10m "), "{s}");
    ui.app.sidebar_pref = None;
    ui.key(KeyCode::Char('o'), KeyModifiers::CONTROL);
    assert_eq!(ui.app.top(), Some(ViewKind::Call));
}

/// With `approval_timeout`, the card says when the call is declined if
/// nobody answers, and counts down to it.
#[tokio::test(start_paused = true)]
async fn the_approval_card_says_when_an_unanswered_call_is_declined() {
    let mut cfg = Config::default();
    cfg.approvals.approval_timeout = Some("90m".into());
    let mut ui = Ui::with_config(task_steps(), cfg);
    ui.start().await;
    ui.say("remind me to check the build");
    ui.settle().await;
    assert_eq!(ui.app.top(), Some(ViewKind::Approval));
    let s = ui.screen(100, 30);
    assert!(
        s.contains("unanswered, it is declined Mon 30 Nov 02:23, in 1h 30m"),
        "{s}"
    );
    tokio::time::sleep(std::time::Duration::from_secs(30 * 60)).await;
    ui.pump();
    let s = ui.screen(100, 30);
    assert!(
        s.contains("unanswered, it is declined Mon 30 Nov 02:23, in 1h "),
        "{s}"
    );
}

#[tokio::test(start_paused = true)]
async fn typed_text_never_answers_an_approval_and_is_kept() {
    let mut ui = Ui::new(task_steps());
    ui.start().await;
    ui.say("remind me to check the build");
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_some());
    assert_eq!(ui.app.top(), Some(ViewKind::Approval));
    // A word typed before noticing the card, then Enter.
    ui.typ("yes and now");
    ui.enter();
    assert!(ui.app.model.waiting_approval().is_some(), "not answered");
    assert_eq!(
        ui.app.composer_text(),
        "yes and now",
        "the letters are kept"
    );
    assert!(ui.rows().iter().all(|r| r.kind != Kind::Task));
    // "a" on an empty composer followed by more letters is a word, not a choice.
    ui.app.composer.clear(0);
    ui.typ("apple");
    ui.enter();
    assert!(ui.app.model.waiting_approval().is_some());
    assert_eq!(ui.app.composer_text(), "apple");
    insta::assert_snapshot!("approval_pending_60x15", ui.screen(60, 15));
    insta::assert_snapshot!("approval_pending_120x40", ui.screen(120, 40));
    // At 40 columns the composer's border says it in fewer words, whole.
    ui.app.composer.clear(0);
    let tiny = ui.screen(40, 12);
    assert!(
        tiny.contains("╭ a tool call waits above ─")
            && tiny.contains("│answer the approval above first"),
        "{tiny}"
    );
    // A deliberate choice answers it; the hint to choose goes with the key.
    ui.app.composer.clear(0);
    assert!(
        ui.status_line().starts_with("choose Approve or Deny first"),
        "{}",
        ui.status_line()
    );
    ui.press(KeyCode::Left);
    assert_eq!(
        ui.status_line(),
        "",
        "the hint is stale once a choice is made"
    );
    ui.enter();
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_none());
    assert!(ui.rows().iter().any(|r| r.kind == Kind::Task));
}

/// With text in the composer, ← / → move its cursor: they do not choose on
/// the card (a draft's ← then Enter approved the call). Tab still chooses,
/// and the card says so.
#[tokio::test(start_paused = true)]
async fn arrows_edit_a_draft_while_an_approval_waits_and_tab_chooses() {
    let mut ui = Ui::new(task_steps());
    ui.start().await;
    ui.say("remind me to check the build");
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_some());
    ui.typ("my draft");
    ui.press(KeyCode::Left);
    ui.press(KeyCode::Left);
    ui.ch('X');
    assert_eq!(ui.app.composer_text(), "my draXft", "← moved the cursor");
    ui.press(KeyCode::Right);
    ui.enter();
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_some(), "not answered");
    assert!(ui.rows().iter().all(|r| r.kind != Kind::Task));
    let screen = ui.screen(120, 40);
    assert!(
        screen.contains("Tab to choose (←/→ edit your text), then Enter"),
        "{screen}"
    );
    assert_eq!(
        ui.status_line(),
        "choose Approve or Deny first (Tab), then Enter"
    );
    // Tab chooses Approve (then Deny); Enter confirms it, text and all.
    ui.press(KeyCode::Tab);
    ui.enter();
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_none());
    assert!(ui.rows().iter().any(|r| r.kind == Kind::Task));
    assert_eq!(ui.app.composer_text(), "my draXft", "the draft is kept");
}

/// While an approval waits, a slash command still runs (`/tools` shows what
/// the call would use; `/later` schedules): only a message or Enter on
/// nothing chosen waits for the answer.
#[tokio::test(start_paused = true)]
async fn slash_commands_run_while_an_approval_waits() {
    let mut ui = Ui::new(task_steps());
    ui.start().await;
    ui.say("remind me to check the build");
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_some());
    ui.typ("/later 10m water the plants");
    ui.enter();
    ui.settle().await;
    assert_eq!(ui.app.composer_text(), "", "the command ran");
    assert!(
        ui.rows()
            .iter()
            .any(|r| r.user_text().as_deref() == Some("water the plants")),
        "scheduled"
    );
    assert!(ui.app.model.waiting_approval().is_some(), "not answered");
    ui.typ("/tools");
    ui.enter();
    assert_eq!(ui.app.top(), Some(ViewKind::Tools));
    assert!(ui.app.model.waiting_approval().is_some(), "not answered");
    // A message still waits for the answer.
    ui.press(KeyCode::Esc);
    ui.typ("a message");
    ui.enter();
    assert_eq!(ui.app.composer_text(), "a message");
    assert!(ui.status_line().starts_with("choose Approve or Deny first"));
}

/// The list of slash commands while an approval card waits: shown over
/// the card, and ↓, Tab and Enter are the list's (the card's Tab chose on
/// the card and the list vanished); with the list closed, the card has its
/// keys again.
#[tokio::test(start_paused = true)]
async fn the_command_list_works_while_an_approval_waits() {
    let mut ui = Ui::new(task_steps());
    ui.start().await;
    ui.say("remind me to check the build");
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_some());
    ui.typ("/h");
    for (w, h) in [(120, 40), (60, 15)] {
        let s = ui.screen(w, h);
        assert!(s.contains("/help"), "{w}×{h}:\n{s}");
    }
    ui.press(KeyCode::Enter);
    assert_eq!(ui.app.top(), Some(ViewKind::Help), "/help ran");
    ui.press(KeyCode::Esc);
    ui.typ("/mo");
    ui.press(KeyCode::Down);
    ui.press(KeyCode::Tab);
    assert_eq!(ui.app.composer_text(), "/mouse ");
    assert!(ui.app.model.waiting_approval().is_some(), "not answered");
}

/// Esc closes the list, and does nothing else: while a reply streamed it
/// stopped the reply. A choice made in a list that closed is not the next
/// list's (`/`, ↑ to `/quit`, Ctrl+U, `/`, Enter quit tock). A command
/// chosen with ↓ wins over a whole name typed (`/at`, ↓, Enter ran `/at`).
#[tokio::test(start_paused = true)]
async fn esc_closes_the_command_list_and_a_choice_does_not_outlive_it() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![Step::Hold(vec![text("Let me think")], gate.clone())]);
    ui.start().await;
    ui.say("a question");
    ui.settle().await;
    ui.streamed().await;
    assert!(ui.app.model.is_busy());
    ui.typ("/");
    assert!(ui.screen(120, 40).contains("commands ·"));
    ui.press(KeyCode::Esc);
    assert!(ui.app.model.is_busy(), "the reply goes on");
    assert!(!ui.screen(120, 40).contains("commands ·"), "closed");
    assert_eq!(ui.app.composer_text(), "/", "what was typed stays");
    ui.typ("m");
    assert!(
        ui.screen(120, 40).contains("commands ·"),
        "open again as the line changes"
    );
    ui.ctrl('u');
    ui.typ("/");
    ui.press(KeyCode::Up);
    ui.ctrl('u');
    ui.typ("/");
    ui.press(KeyCode::Enter);
    assert!(!ui.app.quit, "the first command, not /quit");
    assert_eq!(ui.app.composer_text(), "/later ");
    ui.ctrl('u');
    ui.typ("/at");
    ui.press(KeyCode::Down);
    ui.press(KeyCode::Enter);
    assert_eq!(ui.app.composer_text(), "/attach ");
    gate.notify_one();
    ui.settle().await;
}

/// "choose Approve or Deny first" goes once the approval is answered
/// elsewhere (`tock approve`), with no key pressed here; a key's
/// confirmation ("conversation deleted", "retrying") goes with the next key.
#[tokio::test(start_paused = true)]
async fn key_hints_go_when_answered_elsewhere_or_at_the_next_key() {
    let mut ui = Ui::new(task_steps());
    ui.start().await;
    ui.say("remind me to check the build");
    ui.settle().await;
    let approval = ui.app.model.waiting_approval().unwrap().id;
    ui.enter();
    assert!(
        ui.status_line().starts_with("choose Approve or Deny first"),
        "{}",
        ui.status_line()
    );
    ui.h.engine.answer_approval(approval, true).unwrap();
    ui.settle().await;
    assert_eq!(ui.status_line(), "", "answered from elsewhere");
    // An item's confirmation lasts until the next key.
    let task = ui
        .rows()
        .into_iter()
        .find(|i| i.kind == Kind::Task)
        .expect("the task");
    ui.press(KeyCode::Tab);
    ui.ch('x');
    ui.ch('y');
    ui.settle().await;
    assert_eq!(ui.row(task.id).status, Status::Canceled);
    assert_eq!(ui.status_line(), "canceled");
    ui.press(KeyCode::Esc);
    assert_eq!(ui.status_line(), "");
}

#[tokio::test(start_paused = true)]
async fn your_own_message_is_shown_verbatim() {
    let mut ui = Ui::new(vec![Step::Reply(vec![text("**bold** reply"), done()])]);
    ui.start().await;
    let msg = "Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\n    main()\nZeroDivisionError: division by zero\nwhy does my __init__ fail with *args and 2*3*4?";
    ui.app.set_composer(msg);
    ui.enter();
    ui.settle().await;
    let s = ui.screen(120, 40);
    assert!(
        s.contains("why does my __init__ fail with *args and 2*3*4?"),
        "{s}"
    );
    assert!(
        s.contains("    main()"),
        "indentation and line breaks kept:\n{s}"
    );
    assert!(
        s.contains("bold reply") && !s.contains("**bold**"),
        "replies are Markdown:\n{s}"
    );
    insta::assert_snapshot!("verbatim_user_message_120x40", s);
    ui.app.sidebar_pref = None;
    insta::assert_snapshot!("verbatim_user_message_60x15", ui.screen(60, 15));
    // A long paste is folded, and Ctrl+O shows it whole.
    let long: String = (0..60).map(|i| format!("line {i}\n")).collect();
    ui.app.set_composer(&long);
    ui.enter();
    ui.settle().await;
    let s = ui.screen(120, 40);
    // 60 lines (the last line break ends the text), 12 shown: 48 more.
    assert!(s.contains("⋯ 48 more lines (Ctrl+O unfolds)"), "{s}");
    // Lines of the text, not rows of the screen: 30 lines of 100
    // characters take 60 rows at 60 columns, and 24 lines are hidden.
    let wide_lines: String = (0..30)
        .map(|i| format!("{i:02}{}\n", "x".repeat(98)))
        .collect();
    ui.app.set_composer(&wide_lines);
    ui.enter();
    ui.settle().await;
    ui.app.sidebar_pref = Some(false);
    let narrow = ui.screen(60, 40);
    assert!(narrow.contains("⋯ 24 more lines"), "{narrow}");
    ui.app.sidebar_pref = None;
    ui.ctrl('o');
    ui.key(KeyCode::Home, KeyModifiers::CONTROL);
    assert!(!ui.screen(120, 200).contains("more lines"));
}

#[tokio::test(start_paused = true)]
async fn narrow_windows_hide_the_sidebar_and_cap_the_strip() {
    let mut ui = Ui::new(vec![]);
    ui.app.sidebar_pref = None;
    for i in 0..9 {
        ui.say(&format!("/later {}m item number {i}", i + 1));
    }
    let s = ui.screen(60, 15);
    insta::assert_snapshot!("narrow_60x15", s);
    assert!(
        !s.contains("Conversations"),
        "no sidebar under 100 columns:\n{s}"
    );
    assert!(s.contains("more (F2 lists all)"), "{s}");
    assert!(
        s.contains("item number 0"),
        "each item shows its text:\n{s}"
    );
    // The chat keeps at least 6 rows: status 1, composer 3, strip at most 5.
    let strip_rows = s
        .lines()
        .filter(|l| l.contains("item number") || l.contains("pending (") || l.contains("more ("))
        .count();
    assert!(strip_rows <= 5, "{s}");
    insta::assert_snapshot!("wide_120x40", ui.screen(120, 40));
}

#[tokio::test(start_paused = true)]
async fn the_composer_soft_wraps_and_grows() {
    let mut ui = Ui::new(vec![]);
    let words: Vec<String> = (0..80).map(|i| format!("w{i}")).collect();
    ui.typ(&words.join(" "));
    let s = ui.screen(100, 30);
    assert!(
        s.contains("w0 w1") && s.contains("w79"),
        "the whole paragraph is visible:\n{s}"
    );
    // Up to a third of the screen, then it scrolls (the cursor stays in view).
    let long: String = (0..40).map(|i| format!("row {i}\n")).collect();
    ui.app.set_composer(&long);
    let s = ui.screen(100, 30);
    let composer_rows = s.lines().filter(|l| l.contains("│row ")).count();
    assert!(composer_rows <= 8, "{composer_rows} rows:\n{s}");
}

#[tokio::test(start_paused = true)]
async fn a_failing_api_key_cmd_is_not_run_per_frame_nor_again_at_once() {
    init_env();
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("runs");
    let mut cfg = Config::default();
    let toml = format!(
        "default_model = \"m\"\n[models.m]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9\"\napi_key_cmd = \"echo run >> {}; exit 1\"\n",
        count.display()
    );
    cfg = toml::from_str(&toml).unwrap_or(cfg);
    let h = harness_with(Scripted::new(vec![]), cfg);
    let source = h.engine.config().clone();
    let mut ui = Ui::on(h);
    for _ in 0..20 {
        ui.screen(120, 40);
    }
    assert!(!count.exists(), "drawing never runs api_key_cmd");
    for _ in 0..5 {
        assert!(source.resolve(Some("m")).is_err());
    }
    let runs = std::fs::read_to_string(&count).unwrap_or_default();
    assert_eq!(
        runs.lines().count(),
        1,
        "a failing command is not run again at once"
    );
}

#[tokio::test(start_paused = true)]
async fn repeated_interrupted_attempts_show_as_one() {
    let cut = || {
        Step::Cut(
            vec![text("partial ")],
            LlmError::transient("connection reset by peer"),
        )
    };
    let mut ui = Ui::new(vec![
        cut(),
        cut(),
        cut(),
        Step::Reply(vec![text("whole answer"), done()]),
    ]);
    ui.start().await;
    ui.say("question");
    for _ in 0..10 {
        tokio::time::advance(std::time::Duration::from_secs(30)).await;
        ui.settle().await;
    }
    let interrupted = ui
        .messages()
        .iter()
        .filter(|m| m.status == MessageStatus::Interrupted)
        .count();
    assert_eq!(interrupted, 3, "every attempt is kept in the database");
    let s = ui.screen(120, 40);
    assert_eq!(s.matches("⚠ interrupted").count(), 1, "one shown:\n{s}");
    assert!(s.contains("(after 2 earlier interrupted attempts)"), "{s}");
    assert!(s.contains("whole answer"), "{s}");
}

#[tokio::test(start_paused = true)]
async fn every_creates_a_series_with_a_live_preview() {
    let mut ui = Ui::new(vec![]);
    ui.typ("/every weekday 9am stand-up notes");
    let s = ui.screen(120, 40);
    // 2026-11-30 00:53 UTC is a Monday.
    assert!(
        s.contains("⏰ every weekday at 09:00 — next Mon 30 Nov 09:00, then Tue, Wed"),
        "{s}"
    );
    insta::assert_snapshot!("every_preview_120x40", s);
    // Where rule and times do not both fit, the rule and its next time.
    ui.app.sidebar_pref = None;
    ui.app.sidebar_pref = Some(false);
    let narrow = ui.screen(60, 15);
    ui.app.sidebar_pref = Some(true);
    assert!(
        narrow.contains("⏰ every weekday at 09:00 — next Mon 30 Nov 09:00 "),
        "{narrow}"
    );
    // Where the three times do not fit beside the rule, two do before one
    // (the 31st of each month: the second shows a month skipped), and an
    // ellipsis says more follow.
    ui.ctrl('u');
    ui.typ("/every month on the 31st 9am pay the rent");
    ui.app.sidebar_pref = Some(true);
    let mid = ui.screen(120, 40);
    assert!(
        mid.contains(
            "⏰ every month on the 31st at 09:00 — next Thu 31 Dec 09:00, then Sun 31 Jan, … ─"
        ),
        "{mid}"
    );
    ui.app.sidebar_pref = None;
    // Where the rule and its next time do not fit, the next time's day:
    // the rule in words stays (it is what the preview confirms; its end
    // alone, or the times cut, left what was understood to be guessed).
    ui.ctrl('u');
    ui.typ("/every weekday 9am stand-up notes for 3 times");
    ui.app.sidebar_pref = Some(false);
    let narrow = ui.screen(60, 15);
    assert!(
        narrow.contains("╭ ⏰ every weekday at 09:00, 3 times — next Mon 30 Nov ─"),
        "{narrow}"
    );
    ui.ctrl('u');
    ui.typ("/every mon,wed,fri 8:30 gym");
    let narrow = ui.screen(60, 15);
    assert!(
        narrow.contains("╭ ⏰ every Mon, Wed and Fri at 08:30 — next Mon 30 Nov ─"),
        "{narrow}"
    );
    // An end said after the text is the series' end, and shown as one.
    ui.ctrl('u');
    ui.typ("/every mon,wed,fri 8:30 gym until 2027-01-31");
    let narrow = ui.screen(60, 15);
    assert!(
        narrow.contains("╭ ⏰ every Mon, Wed, Fri 08:30, until 31 Jan 2027 · \"gym\" ─"),
        "{narrow}"
    );
    // Where even that does not fit, the rule in fewer words, its end kept
    // (what a typo would lose), before anything is cut.
    ui.ctrl('u');
    ui.typ("/every mon,wed,fri 8:30 until 2027-01-31 team sync");
    let narrow = ui.screen(60, 15);
    ui.app.sidebar_pref = Some(true);
    assert!(
        narrow.contains("╭ ⏰ every Mon, Wed, Fri 08:30, until 31 Jan 2027 ─"),
        "{narrow}"
    );
    assert!(!narrow.contains('…'), "{narrow}");
    ui.ctrl('u');
    ui.typ("/every weekday 9am stand-up notes");
    ui.enter();
    assert_eq!(ui.app.composer_text(), "", "{}", ui.status_line());
    let series = ui.h.engine.list_series(false).unwrap();
    assert_eq!(series.len(), 1);
    assert_eq!(series[0].series.text, "stand-up notes");
    assert_eq!(series[0].description, "every weekday at 09:00");
    // A rule that cannot be read keeps the text and creates nothing.
    ui.typ("/every blursday 9am x");
    assert!(ui.screen(120, 40).contains("✗ "));
    ui.enter();
    assert!(ui.app.status_pair().1);
    assert_eq!(ui.app.composer_text(), "/every blursday 9am x");
    assert_eq!(ui.h.engine.list_series(false).unwrap().len(), 1);
    // A rule the send would refuse is refused by the preview as you type.
    ui.ctrl('u');
    ui.typ("/every 99999h x");
    let s = ui.screen(120, 40);
    assert!(s.contains("✗ its first time is too far ahead"), "{s}");
}

/// At 60 columns a cron rule's words, too long for the composer's title,
/// are cut after a whole day of their list (`on Monday, Tuesday, …)`), not
/// inside one (`on Monday, T…`, a day that is not there), and never inside
/// the quoted pattern; its end stays whole.
#[tokio::test(start_paused = true)]
async fn the_every_preview_of_a_cron_rule_is_cut_after_a_whole_word() {
    let mut ui = Ui::new(vec![]);
    ui.app.sidebar_pref = Some(false);
    ui.typ("/every cron \"0 9 * * 1-5\" stand-up notes");
    let s = ui.screen(60, 15);
    assert!(
        s.contains("╭ ⏰ cron \"0 9 * * 1-5\" (at 09:00, on Monday, Tuesday, …) ─"),
        "{s}"
    );
    insta::assert_snapshot!("every_preview_cron_60x15", s);
    ui.ctrl('u');
    ui.typ("/every cron \"*/15 9-17 * * 1-5\" until 2027-01-31 check the queue");
    let s = ui.screen(60, 15);
    assert!(
        s.contains("╭ ⏰ cron \"*/15 9-17 * * 1-5\" …, until 31 Jan 2027 ─"),
        "{s}"
    );
    // Wider, more of the words, still cut after a whole one.
    let s = ui.screen(80, 15);
    assert!(
        s.contains("⏰ cron \"*/15 9-17 * * 1-5\" (every 15 minutes, …), until 31 Jan 2027 ─"),
        "{s}"
    );
}

/// The approval card of a repeating task at 60 columns: its rule cut (the
/// `until …` that ends it) says Ctrl+O shows the whole call, as a cut
/// instruction does; where nothing is cut, no hint.
#[tokio::test(start_paused = true)]
async fn the_approval_card_wraps_its_rule_and_says_ctrl_o_when_it_is_cut() {
    let mut ui = Ui::new(vec![Step::Reply(vec![
        text("I'll check the build every weekday morning."),
        tool_call(
            "schedule_task",
            r#"{"instruction":"check the build","repeat":"every weekday at 8:30","until":"2027-01-31","title":"build"}"#,
        ),
        done(),
    ])]);
    ui.start().await;
    ui.say("check the build every weekday morning until the end of january");
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_some());
    ui.app.sidebar_pref = Some(false);
    // At 60 columns the rule takes a second row, whole.
    let s = ui.screen(60, 20);
    assert!(
        s.contains("│ repeats every weekday at 08:30, until Sun 31 Jan 2027")
            && s.contains("│ 23:59"),
        "{s}"
    );
    assert!(!s.contains("shows the whole"), "{s}");
    insta::assert_snapshot!("approval_repeating_until_60x20", s);
    // Narrower, two rows do not hold it: cut, and the card says Ctrl+O.
    let s = ui.screen(34, 24);
    assert!(s.contains("…"), "{s}");
    assert!(s.contains("Ctrl+O shows the whole"), "{s}");
    let s = ui.screen(120, 40);
    assert!(s.contains("until Sun 31 Jan 2027 23:59"), "{s}");
    assert!(!s.contains("shows the whole"), "{s}");
}

#[tokio::test(start_paused = true)]
async fn the_approval_card_of_a_repeating_task_shows_the_rule() {
    let mut ui = Ui::new(vec![Step::Reply(vec![
        text("I'll summarise your notes every morning."),
        tool_call(
            "schedule_task",
            r#"{"instruction":"summarise what changed in ~/notes","repeat":"every day at 8am","title":"notes"}"#,
        ),
        done(),
    ])]);
    ui.start().await;
    ui.say("summarise my notes every morning");
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_some());
    let s = ui.screen(100, 30);
    assert!(s.contains("repeats every day at 08:00"), "{s}");
    assert!(s.contains("next "), "{s}");
    insta::assert_snapshot!("approval_repeating_100x30", s);
}

#[tokio::test(start_paused = true)]
async fn f2_lists_series_and_its_keys_act_on_them() {
    let mut ui = Ui::new(vec![]);
    ui.say("/every day at 9am water the plants");
    ui.say("/later 1h a one-off");
    let id = ui.h.engine.list_series(false).unwrap()[0].series.id;
    ui.pump();
    let s = ui.screen(110, 30);
    assert!(
        s.contains("↻1 recurring"),
        "the status bar counts series:\n{s}"
    );
    ui.press(KeyCode::F(2));
    let s = ui.screen(110, 30);
    assert!(
        s.contains("recurring") && s.contains("water the plants"),
        "{s}"
    );
    assert!(s.contains("every day at 09:00"), "the rule in words:\n{s}");
    assert!(s.contains("0 sent, 0 skipped"), "{s}");
    insta::assert_snapshot!("f2_with_a_series_110x30", s);
    // A series' own keys are on its detail line even at 60 columns.
    ui.app.sidebar_pref = None;
    ui.app.sidebar_pref = Some(false);
    let narrow = ui.screen(60, 15);
    ui.app.sidebar_pref = Some(true);
    assert!(narrow.contains("p pause · n skip · r rule"), "{narrow}");
    let status = |ui: &Ui| ui.h.engine.series_view(id).unwrap().unwrap().series.status;
    // p pauses, p resumes.
    ui.ch('p');
    assert_eq!(status(&ui), tock::store::SeriesStatus::Paused);
    // Paused, it has no time counting down (it looked about to fire).
    let s = ui.screen(110, 30);
    let row = s.lines().find(|l| l.contains("water the plants")).unwrap();
    assert!(
        row.contains("paused") && !row.contains(" in ") && !row.contains("09:00"),
        "{row}"
    );
    assert!(
        s.contains("paused: nothing is sent until it is resumed"),
        "{s}"
    );
    ui.ch('p');
    assert_eq!(status(&ui), tock::store::SeriesStatus::Active);
    // n skips the next occurrence: 09:00 today becomes 09:00 tomorrow.
    let before =
        ui.h.engine
            .series_view(id)
            .unwrap()
            .unwrap()
            .series
            .next_due_at
            .unwrap();
    ui.ch('n');
    let after =
        ui.h.engine
            .series_view(id)
            .unwrap()
            .unwrap()
            .series
            .next_due_at
            .unwrap();
    assert_eq!(after - before, 24 * 3_600_000);
    // s sends one extra occurrence now.
    ui.ch('s');
    let occ = ui.store().series_occurrences(id).unwrap();
    assert_eq!(occ.len(), 1, "{occ:?}");
    // r edits the rule, with a preview; a bad rule is refused in place.
    ui.ch('r');
    ui.ctrl('u');
    ui.typ("every weekday 8:30");
    let s = ui.screen(110, 30);
    assert!(s.contains("every weekday at 08:30 — next"), "{s}");
    ui.enter();
    let v = ui.h.engine.series_view(id).unwrap().unwrap();
    assert_eq!(v.description, "every weekday at 08:30");
    // e edits the text.
    ui.ch('e');
    ui.ctrl('u');
    ui.typ("water the ferns");
    ui.enter();
    assert_eq!(
        ui.h.engine.series_view(id).unwrap().unwrap().series.text,
        "water the ferns"
    );
    // x then y ends it: the question says it is a series that ends.
    ui.ch('x');
    let s = ui.screen(110, 30);
    assert!(
        s.contains(&format!("End recurring series #{id}? y/n")) && s.contains("y end it"),
        "{s}"
    );
    ui.ch('y');
    assert_eq!(status(&ui), tock::store::SeriesStatus::Ended);
    // Finished occurrences are listed under their series with `a`.
    ui.ch('a');
    let s = ui.screen(110, 30);
    assert!(s.contains("↳ water the plants"), "{s}");
}

/// A series that ran its course reads as finished in F2: how many times
/// it ran, and that it ended, without the keys that would only answer that
/// it has ended.
#[tokio::test(start_paused = true)]
async fn f2_a_series_that_ran_its_course_reads_as_finished() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.say("/every 1 minute for 2 times stretch");
    let id = ui.h.engine.list_series(false).unwrap()[0].series.id;
    tokio::time::sleep(std::time::Duration::from_secs(2 * 60 + 5)).await;
    ui.settle().await;
    let v = ui.h.engine.series_view(id).unwrap().unwrap();
    assert_eq!(
        (v.series.status, v.series.occurrences, v.series.skipped),
        (tock::store::SeriesStatus::Ended, 2, 0)
    );
    // The status bar counts it no more.
    let s = ui.screen(110, 30);
    assert!(!s.contains("↻1"), "{s}");
    ui.press(KeyCode::F(2));
    ui.ch('a');
    ui.press(KeyCode::Home);
    let s = ui.screen(110, 30);
    assert!(s.contains("every minute · ran 2 times, ended"), "{s}");
    assert!(!s.contains("so far") && !s.contains("p pause"), "{s}");
    insta::assert_snapshot!("f2_with_an_ended_series_110x30", s);
}

/// r on a series shows its rule selected: a new rule typed replaces it
/// (typed after it, the two ran together — `every weekday at 09:00every
/// mon,wed 8:30` — and were refused), and the prompt says so; a move first
/// keeps it to edit.
#[tokio::test(start_paused = true)]
async fn f2_r_on_a_series_a_new_rule_typed_replaces_the_old() {
    let mut ui = Ui::new(vec![]);
    ui.say("/every weekday 9am stand-up notes");
    let id = ui.h.engine.list_series(false).unwrap()[0].series.id;
    ui.pump();
    ui.press(KeyCode::F(2));
    ui.ch('r');
    ui.app.sidebar_pref = Some(false);
    let s = ui.screen(60, 15);
    assert!(
        s.contains("│typing replaces this rule · ← or → to edit it"),
        "{s}"
    );
    insta::assert_snapshot!("f2_rule_prompt_60x15", s);
    let s = ui.screen(120, 40);
    assert!(
        s.contains("every weekday at 09:00")
            && s.contains("typing replaces this rule · ← or → to edit it"),
        "{s}"
    );
    insta::assert_snapshot!("f2_rule_prompt_120x40", s);
    ui.app.sidebar_pref = None;
    ui.typ("every mon,wed 8:30");
    let s = ui.screen(120, 40);
    assert!(
        !s.contains("typing replaces"),
        "said while it is selected:\n{s}"
    );
    assert!(s.contains("↻ every Mon and Wed at 08:30"), "{s}");
    ui.enter();
    let v = ui.h.engine.series_view(id).unwrap().unwrap();
    assert_eq!(
        v.description,
        "every Mon and Wed at 08:30",
        "{}",
        ui.status_line()
    );
    // A move first keeps the rule: what is typed then goes where the cursor is.
    ui.ch('r');
    ui.press(KeyCode::End);
    ui.typ(" for 3 times");
    ui.enter();
    let v = ui.h.engine.series_view(id).unwrap().unwrap();
    assert_eq!(
        v.description,
        "every Mon and Wed at 08:30, 3 left",
        "{}",
        ui.status_line()
    );
    // A delete takes the selected rule whole, as typing does.
    ui.ch('r');
    ui.press(KeyCode::Backspace);
    ui.typ("every day 7am");
    ui.enter();
    let v = ui.h.engine.series_view(id).unwrap().unwrap();
    assert_eq!(v.description, "every day at 07:00", "{}", ui.status_line());
}

/// The status line `/every` leaves ("repeating: every day at 09:00 — …")
/// goes when the series it names changes — a new rule, a pause, its end,
/// in F2 or from another tock — instead of showing the old rule out its
/// ten seconds; a change to another series leaves it.
#[tokio::test(start_paused = true)]
async fn the_repeating_line_goes_when_its_series_changes() {
    let repeating = |ui: &Ui| {
        ui.status_line()
            .starts_with("repeating: every day at 09:00")
    };
    let mut ui = Ui::new(vec![]);
    ui.say("/every day at 9am water the plants");
    ui.pump();
    assert!(repeating(&ui), "{}", ui.status_line());
    let id = ui.h.engine.list_series(false).unwrap()[0].series.id;
    // Another series changed: the line still holds.
    let other =
        ui.h.engine
            .create_series(
                ui.app.model.current.unwrap(),
                Kind::Message,
                "feed the cat",
                &ui.h.engine.parse_schedule("every day at 7pm").unwrap(),
            )
            .unwrap();
    ui.h.engine.pause_series(other).unwrap();
    ui.pump();
    assert!(repeating(&ui), "{}", ui.status_line());
    // A new rule in F2.
    ui.press(KeyCode::F(2));
    ui.ch('r');
    ui.typ("every weekday 8:30");
    ui.enter();
    ui.pump();
    ui.press(KeyCode::Esc);
    let s = ui.screen(110, 30);
    assert!(!s.contains("repeating: every day"), "{s}");
    assert_eq!(
        ui.h.engine.series_view(id).unwrap().unwrap().description,
        "every weekday at 08:30"
    );

    // Paused from another tock (the CLI): the same.
    ui.say("/every day at 9am water the roses");
    ui.pump();
    assert!(repeating(&ui), "{}", ui.status_line());
    let roses = ui.h.engine.list_series(false).unwrap();
    let roses = roses
        .iter()
        .find(|v| v.series.text == "water the roses")
        .unwrap()
        .series
        .id;
    ui.h.engine.pause_series(roses).unwrap();
    ui.pump();
    assert!(!repeating(&ui), "{}", ui.status_line());

    // Ended in F2.
    ui.say("/every day at 9am water the ferns");
    ui.pump();
    assert!(repeating(&ui), "{}", ui.status_line());
    let ferns = ui.h.engine.list_series(false).unwrap();
    let ferns = ferns
        .iter()
        .find(|v| v.series.text == "water the ferns")
        .unwrap()
        .series
        .id;
    ui.h.engine.end_series(ferns).unwrap();
    ui.pump();
    assert!(!repeating(&ui), "{}", ui.status_line());
}

/// After x y in F2 the ended series has left and the row that took its
/// place (the other series) is selected; a key typed before a frame showed
/// it does not act on it, and says why; once shown, keys act on it.
#[tokio::test(start_paused = true)]
async fn f2_after_ending_a_series_the_next_row_is_selected_once_shown() {
    let mut ui = Ui::new(vec![]);
    ui.say("/every day at 9am first series");
    ui.say("/every day at 10am second series");
    ui.pump();
    ui.press(KeyCode::F(2));
    assert!(ui.screen(110, 30).contains("› "));
    ui.ch('x');
    ui.ch('y');
    let left = ui.h.engine.list_series(false).unwrap();
    assert_eq!(left.len(), 1, "one series ended");
    let status = |ui: &Ui| {
        ui.h.engine
            .series_view(left[0].series.id)
            .unwrap()
            .unwrap()
            .series
            .status
    };
    // Typed ahead of the frame that shows the new selection: nothing done.
    ui.ch('p');
    assert!(
        ui.status_line().contains("press again"),
        "{}",
        ui.status_line()
    );
    assert_eq!(status(&ui), tock::store::SeriesStatus::Active);
    let s = ui.screen(110, 30);
    let marked = s.lines().find(|l| l.starts_with('›')).unwrap_or_default();
    assert!(marked.contains("second series"), "{s}");
    ui.ch('p');
    assert_eq!(status(&ui), tock::store::SeriesStatus::Paused);
}

/// A series ended by another hand while F2 shows it selected: nothing is
/// selected (a stray key cannot act on the row that slid into its place),
/// no row is marked, a key says why it does nothing, and a move selects
/// again. The first row had looked selected while keys did nothing, silently.
#[tokio::test(start_paused = true)]
async fn f2_after_a_series_ends_elsewhere_no_row_looks_selected_and_keys_say_why() {
    let mut ui = Ui::new(vec![]);
    ui.say("/every day at 9am first series");
    ui.say("/every day at 10am second series");
    ui.pump();
    ui.press(KeyCode::F(2));
    assert!(ui.screen(110, 30).contains("› "));
    let all = ui.h.engine.list_series(false).unwrap();
    let first = all
        .iter()
        .find(|v| v.series.text == "first series")
        .unwrap()
        .series
        .id;
    ui.h.engine.end_series(first).unwrap();
    ui.pump();
    let left = ui.h.engine.list_series(false).unwrap();
    assert_eq!(left.len(), 1, "one series ended");
    let s = ui.screen(110, 30);
    assert!(!s.contains("›"), "no row is marked:\n{s}");
    ui.ch('p');
    assert!(
        ui.status_line().contains("no item is selected"),
        "{}",
        ui.status_line()
    );
    let status = |ui: &Ui| {
        ui.h.engine
            .series_view(left[0].series.id)
            .unwrap()
            .unwrap()
            .series
            .status
    };
    assert_eq!(
        status(&ui),
        tock::store::SeriesStatus::Active,
        "the stray key did nothing"
    );
    // A move selects (and marks) a row; keys act on it.
    ui.press(KeyCode::Down);
    assert!(ui.screen(110, 30).contains("› "));
    ui.ch('p');
    assert_eq!(status(&ui), tock::store::SeriesStatus::Paused);
}

/// F2, x y x y in one burst (no frame between): the second x is not for
/// the row that took the first one's place, unseen; nothing is typed.
#[tokio::test(start_paused = true)]
async fn f2_keys_typed_ahead_of_the_new_selection_do_not_act_on_it() {
    let mut ui = Ui::new(vec![]);
    for n in 1..=2 {
        ui.say(&format!("/later {n}h f2 item {n}"));
    }
    let ids: Vec<i64> = ui.rows().iter().map(|r| r.id).collect();
    ui.press(KeyCode::F(2));
    ui.screen(110, 30);
    for c in "xyxy".chars() {
        ui.ch(c);
    }
    ui.pump();
    assert_eq!(ui.row(ids[0]).status, Status::Canceled);
    assert_eq!(ui.row(ids[1]).status, Status::Pending, "not seen selected");
    assert_eq!(ui.app.composer_text(), "");
    let s = ui.screen(110, 30);
    let marked = s.lines().find(|l| l.starts_with('›')).unwrap_or_default();
    assert!(marked.contains("f2 item 2"), "{s}");
    ui.ch('x');
    ui.ch('y');
    ui.pump();
    assert_eq!(ui.row(ids[1]).status, Status::Canceled);
}

/// F2 on three scheduled messages: x y, x y, x y cancels all three, each
/// time on the row shown selected after the one before left; nothing is
/// typed into the composer.
#[tokio::test(start_paused = true)]
async fn f2_cancels_row_after_row_with_x_y() {
    let mut ui = Ui::new(vec![]);
    for n in 1..=3 {
        ui.say(&format!("/later {n}h f2 item {n}"));
    }
    let ids: Vec<i64> = ui.rows().iter().map(|r| r.id).collect();
    ui.press(KeyCode::F(2));
    for n in 1..=3 {
        let s = ui.screen(110, 30);
        let marked = s.lines().find(|l| l.starts_with('›')).unwrap_or_default();
        assert!(marked.contains(&format!("f2 item {n}")), "{s}");
        ui.ch('x');
        ui.ch('y');
        ui.pump();
        assert_eq!(ui.row(ids[n - 1]).status, Status::Canceled, "item {n}");
    }
    // Typed ahead on an empty list: y answers nothing and types nothing.
    ui.ch('x');
    ui.ch('y');
    assert_eq!(ui.app.popup(), Some(ViewKind::Scheduled));
    assert_eq!(ui.app.composer_text(), "");
}

/// `r` on a series offers its whole schedule, ends included: Enter on it
/// as it is keeps the end, the count and a skip (they were dropped).
#[tokio::test(start_paused = true)]
async fn f2_rule_prompt_offers_the_whole_schedule_and_enter_keeps_it() {
    let mut ui = Ui::new(vec![]);
    ui.say("/every 3h for 5 times for 2 weeks ping");
    let id = ui.h.engine.list_series(false).unwrap()[0].series.id;
    ui.pump();
    ui.press(KeyCode::F(2));
    ui.ch('n');
    let before = ui.store().series(id).unwrap().unwrap();
    assert_eq!(before.remaining, Some(4));
    assert!(before.until_at.is_some());
    ui.ch('r');
    let s = ui.screen(110, 30);
    let expr = ui.h.engine.series_expression(&before);
    assert!(
        expr.starts_with("every 3 hours for 4 times until 20"),
        "{expr}"
    );
    assert!(s.contains(&expr), "{s}");
    ui.enter();
    let after = ui.store().series(id).unwrap().unwrap();
    assert_eq!(
        (after.next_due_at, after.until_at, after.remaining),
        (before.next_due_at, before.until_at, before.remaining)
    );
}

#[tokio::test(start_paused = true)]
async fn a_pending_approval_is_listed_in_f2_and_marked_in_the_sidebar() {
    let mut ui = Ui::new(task_steps());
    ui.start().await;
    let asking = ui.conv();
    ui.say("remind me to check the build");
    ui.settle().await;
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    assert_ne!(ui.conv(), asking);
    let s = ui.screen(100, 30);
    assert!(
        s.contains("? remind me") && s.contains("needs approval"),
        "{s}"
    );
    assert!(s.contains("?1 to approve"), "{s}");
    ui.press(KeyCode::F(2));
    let s = ui.screen(100, 30);
    assert!(s.contains("approval") && s.contains("asking"), "{s}");
    assert!(s.contains("schedule_task wants to run: build check"), "{s}");
    insta::assert_snapshot!("f2_with_an_approval_100x30", s);
    // Enter goes to its conversation, where the card has the keys.
    ui.press(KeyCode::Home);
    ui.enter();
    assert_eq!(ui.conv(), asking);
    assert_eq!(ui.app.top(), Some(ViewKind::Approval));
}

/// The status bar counts the calls that wait, not the conversations they
/// wait in: two calls of one reply are two to approve, and one answered
/// leaves one.
#[tokio::test(start_paused = true)]
async fn the_status_bar_counts_each_call_waiting_for_approval() {
    let call = |id: &str, title: &str| {
        StreamEvent::ToolCall(ToolCall {
            id: id.into(),
            name: "schedule_task".into(),
            arguments: format!(
                r#"{{"instruction":"check {title}","delay_secs":3600,"title":"{title}"}}"#
            ),
        })
    };
    let mut ui = Ui::new(vec![
        Step::Reply(vec![call("c1", "build"), call("c2", "deploy"), done()]),
        Step::Reply(vec![text("both scheduled"), done()]),
    ]);
    ui.start().await;
    ui.say("remind me twice");
    ui.settle().await;
    let waiting = ui.store().approvals(ui.conv()).unwrap();
    assert_eq!(waiting.len(), 2);
    let s = ui.screen(100, 30);
    assert!(s.contains("?2 to approve"), "{s}");
    ui.h.engine.answer_approval(waiting[0].id, true).unwrap();
    ui.settle().await;
    let s = ui.screen(100, 30);
    assert!(s.contains("?1 to approve"), "{s}");
    let exit = ui.app.exit_line().unwrap_or_default();
    assert!(
        exit.contains("1 tool call waiting for your approval"),
        "{exit}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_status_line_goes_when_what_it_describes_has_changed() {
    let mut ui = Ui::new(task_steps());
    ui.start().await;
    ui.say("remind me to check the build");
    ui.settle().await;
    let approval = ui.app.model.waiting_approval().expect("asked").id;
    assert!(
        ui.status_line().contains("approval"),
        "{}",
        ui.status_line()
    );
    // The notice can come before the events that reload the gates (the
    // engine tells it right after saving the approval): it stays.
    ui.app.model.awaiting.clear();
    ui.app.on_engine(Event::Notice(tock::engine::Notification {
        kind: tock::engine::NoticeKind::Approval,
        conversation_id: Some(ui.conv()),
        text: "schedule_task waits for your approval".into(),
        elsewhere: false,
    }));
    assert!(
        ui.status_line().contains("approval"),
        "it stays until answered"
    );
    // Answered elsewhere (as `tock approve` does): the line is stale.
    ui.h.engine.answer_approval(approval, true).unwrap();
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_none());
    assert_eq!(ui.status_line(), "", "the approval notice went with it");
    // A line about what you did here goes when you go elsewhere.
    ui.say("/later blah check again");
    assert!(ui.status_line().contains("blah"), "{}", ui.status_line());
    let here = ui.conv();
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    ui.pump();
    assert_ne!(ui.conv(), here);
    assert_eq!(ui.status_line(), "");
    // What a switch itself reports stays.
    ui.say("/delete");
    ui.ch('y');
    ui.pump();
    assert_eq!(ui.conv(), here, "the other conversation is shown");
    assert_eq!(ui.status_line(), "conversation deleted");
    // Sending a message moves on from what the line said before.
    ui.say("/later blah check again");
    assert!(ui.status_line().contains("blah"));
    ui.app.set_composer("");
    ui.say("check again");
    assert_eq!(ui.status_line(), "");
    assert!(ui.rows().iter().any(|r| r.text == "check again"));
}

#[tokio::test(start_paused = true)]
async fn the_exit_line_says_what_is_still_pending() {
    let mut ui = Ui::new(vec![]);
    assert_eq!(ui.app.exit_line(), None, "nothing pending: nothing to say");
    ui.say("/later 1h check the build");
    ui.say("/every day at 9am water the plants");
    ui.pump();
    ui.app.model.reload_summaries();
    let line = ui.app.exit_line().unwrap();
    assert!(
        line.contains("1 scheduled (next Mon 30 Nov 01:53)"),
        "{line}"
    );
    assert!(line.contains("1 recurring series"), "{line}");
    assert!(
        line.contains("a tock or `tock daemon` already running on this database takes them over at once, else the next `tock` started does"),
        "{line}"
    );
    assert!(
        !line.contains("queued") && !line.contains("waiting"),
        "{line}"
    );
    // What a stop holds is not counted as queued: the next start does not send it.
    let conv = ui.conv();
    ui.h.engine
        .store()
        .enqueue(
            &tock::store::NewItem::new(conv, tock::store::Kind::Queued, "held"),
            ui.h.engine.now_ms(),
        )
        .unwrap();
    ui.h.engine
        .store()
        .set_queue_paused(conv, Some(ui.h.engine.now_ms()))
        .unwrap();
    ui.app.model.reload_all();
    let line = ui.app.exit_line().unwrap();
    assert!(line.contains("1 waiting for you"), "{line}");
    assert!(!line.contains("queued"), "{line}");
    // Another tock dispatching sends them, not the next start.
    ui.app.model.dispatch = tock::engine::DispatchState::Standby { pid: 4242 };
    let line = ui.app.exit_line().unwrap();
    assert!(
        line.ends_with("the tock running as pid 4242 sends them."),
        "{line}"
    );
    // Only what waits for the user (or failed): nothing says it will be sent.
    for r in ui.rows() {
        if r.status == Status::Pending && r.due_at.is_some() {
            ui.h.engine.cancel(r.id).unwrap();
        }
    }
    for s in ui.h.engine.list_series(false).unwrap() {
        ui.h.engine.end_series(s.series.id).unwrap();
    }
    ui.app.model.reload_all();
    let line = ui.app.exit_line().unwrap();
    assert!(line.ends_with("kept in the database."), "{line}");
}

/// Quitting says what only the user can settle (a tool call to approve)
/// and what quitting cut (a reply streaming), also with nothing else left.
#[tokio::test(start_paused = true)]
async fn the_exit_line_names_approvals_waiting_and_a_reply_cut_off() {
    let mut ui = Ui::new(task_steps());
    ui.start().await;
    ui.say("remind me to check the build");
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_some());
    ui.app.model.reload_summaries();
    let line = ui.app.exit_line().unwrap();
    assert!(
        line.contains("1 tool call waiting for your approval (tock approvals)"),
        "{line}"
    );

    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![Step::Hold(vec![text("streaming")], gate)]);
    ui.start().await;
    assert_eq!(ui.app.exit_line(), None);
    ui.say("a long answer please");
    ui.settle().await;
    // As the TUI counts them right before it stops the engine.
    ui.app.replies_cut_at_exit = ui.h.engine.turns_in_flight();
    let line = ui.app.exit_line().unwrap();
    assert!(
        line.starts_with(
            "tock: 1 reply cut off by quitting (to be asked for again) — kept in the database; a tock or `tock daemon` already running on this database takes them over at once"
        ),
        "{line}"
    );
}

/// What tock sent at its time is marked in the chat: a scheduled message
/// and a series' occurrence (they read like messages just typed).
#[tokio::test(start_paused = true)]
async fn messages_sent_at_their_time_are_marked_in_the_chat() {
    let ok = || Step::Reply(vec![text("ok"), done()]);
    let mut ui = Ui::new(vec![ok(), ok(), ok()]);
    ui.start().await;
    ui.say("typed now");
    ui.settle().await;
    ui.say("/later 1m check the build");
    ui.say("/every 2 minutes tick");
    for _ in 0..5 {
        tokio::time::advance(std::time::Duration::from_secs(30)).await;
        ui.settle().await;
    }
    assert_eq!(
        ui.user_texts(),
        vec!["typed now", "check the build", "tick"]
    );
    ui.app.model.reload_messages();
    let s = ui.screen(100, 30);
    let header = |text: &str| {
        let lines: Vec<&str> = s.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.contains(text))
            .unwrap_or_else(|| panic!("{text}:\n{s}"));
        lines[at - 1].to_string()
    };
    assert!(header("check the build").contains("⏰ scheduled"), "{s}");
    assert!(header("  tick").contains("↻ recurring"), "{s}");
    let typed = header("typed now");
    assert!(!typed.contains("⏰") && !typed.contains("↻"), "{s}");
    // F3 says which message went, not only where.
    let notices: Vec<String> = ui.app.notices.iter().map(|n| n.text.clone()).collect();
    assert!(
        notices
            .iter()
            .any(|n| n.starts_with("scheduled message sent in") && n.ends_with(": check the build")),
        "{notices:?}"
    );
    assert!(
        notices
            .iter()
            .any(|n| n.starts_with("recurring message sent in") && n.ends_with(": tick")),
        "{notices:?}"
    );
}

/// Advance the clock to `at` and tick there, as the app's loop does.
async fn tick_at(ui: &mut Ui, at: i64) {
    let now = ui.h.engine.now_ms();
    assert!(at > now, "a tick at {at} asked for at {now}");
    tokio::time::advance(std::time::Duration::from_millis((at - now) as u64)).await;
    ui.app.on_tick();
}

/// A provider that takes the request and does not answer: after a few
/// seconds the bubble says how long it has waited, and that changes once a
/// second (a tick for each, and no other); once the reply has come, no
/// timer is left (an idle screen draws no frame).
#[tokio::test(start_paused = true)]
async fn a_send_the_model_does_not_answer_shows_how_long_it_has_waited() {
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
    ui.say("is anyone there?");
    ui.settle().await;
    let item = ui.rows()[0].clone();
    assert_eq!(item.status, Status::Sending);
    let since = item.updated_at;
    let bubble = |s: &str| {
        s.lines()
            .find(|l| l.contains("◌ sending…"))
            .map(|l| l.trim().to_string())
            .unwrap_or_default()
    };
    let s = ui.screen(80, 24);
    assert!(
        bubble(&s).ends_with("◌ sending…"),
        "at first, no time:\n{s}"
    );
    // The status line's expiry is a timer of its own: not this one's.
    ui.app.status = None;
    // The first tick is when the wait first shows…
    let at = ui.app.next_tick_at().unwrap();
    assert_eq!(at, since + 3_000);
    tick_at(&mut ui, at).await;
    assert!(bubble(&ui.screen(80, 24)).ends_with("◌ sending… 3s"));
    // … then one a second, each drawing the next second.
    for secs in 4..=12 {
        let at = ui.app.next_tick_at().unwrap();
        assert_eq!(at, since + secs * 1_000);
        tick_at(&mut ui, at).await;
        let s = ui.screen(80, 24);
        assert!(bubble(&s).ends_with(&format!("◌ sending… {secs}s")), "{s}");
    }
    // At 60×15 it shows too; past a minute, in minutes and seconds.
    tokio::time::advance(std::time::Duration::from_millis(63_000)).await;
    ui.app.on_tick();
    ui.app.sidebar_pref = Some(false);
    let s = ui.screen(60, 15);
    assert!(bubble(&s).ends_with("◌ sending… 1m 15s"), "{s}");
    // The model answers: the bubble goes, and with it its timer.
    gate.notify_one();
    ui.settle().await;
    assert_eq!(ui.row(item.id).status, Status::Sent);
    assert!(!ui.screen(80, 24).contains("sending…"));
    ui.app.status = None;
    assert_eq!(ui.app.next_tick_at(), None, "idle: no timer at all");
}

#[tokio::test(start_paused = true)]
async fn countdowns_tick_on_whole_seconds_and_never_show_a_past_time() {
    let mut ui = Ui::new(vec![]);
    assert_eq!(ui.app.next_tick_at(), None, "idle: no timer at all");
    ui.say("/later 3h far away");
    // Only the countdowns' ticks: the status line's expiry is not one.
    ui.app.status = None;
    let now = ui.h.engine.now_ms();
    // "in 3h" becomes "in 2h 59m" at the clock's next whole minute (where
    // every label of an hour or more changes, and the engine's clock check
    // runs)…
    assert!(ui.screen(100, 24).contains("in 3h"));
    let at = ui.app.next_tick_at().unwrap();
    assert!(at - now <= 60_000 && at % 60_000 == 0, "{now} {at}");
    tick_at(&mut ui, at).await;
    assert!(ui.screen(100, 24).contains("in 2h 59m"));
    // … and then changes once a minute, on the whole minute.
    let at = ui.app.next_tick_at().unwrap();
    assert_eq!(at - ui.h.engine.now_ms(), 60_000);
    // Created between two whole seconds, it shows seconds below an hour and
    // ticks with the others, on the next whole second.
    tokio::time::advance(std::time::Duration::from_millis(437)).await;
    ui.say("/later 90s soon");
    ui.app.status = None;
    let now = ui.h.engine.now_ms();
    let at = ui.app.next_tick_at().unwrap();
    assert!(at - now <= 1_000 && at % 1_000 == 0, "{now} {at}");
    assert!(ui.screen(100, 24).contains("in 1m 30s"));
    // Walked tick by tick, it counts down to "now" up to a second early, and
    // the due instant (between two whole seconds) is a tick of its own.
    let due = ui
        .rows()
        .iter()
        .find(|i| i.text == "soon")
        .and_then(|i| i.due_at)
        .unwrap();
    assert_ne!(due % 1_000, 0);
    loop {
        let at = ui.app.next_tick_at().unwrap();
        assert!(at <= due || at % 1_000 == 0, "{at}");
        tick_at(&mut ui, at).await;
        if at >= due {
            assert_eq!(at, due, "a tick at the due instant");
            break;
        }
        let s = ui.screen(100, 24);
        let soon = s.lines().filter(|l| l.contains("soon"));
        assert!(soon.clone().count() > 0, "{s}");
        assert!(
            soon.clone()
                .all(|l| !l.contains("in 0s") && !l.contains("ago")),
            "{s}"
        );
    }
    // One clock: after the time has passed nothing still says "in …s".
    let s = ui.screen(100, 24);
    assert!(
        !s.contains("in 1m") && !s.contains("in 1s") && !s.contains("in 0s"),
        "{s}"
    );
    assert!(
        s.contains("⏳ queued · soon"),
        "due now, it is simply queued:\n{s}"
    );
    // F2 ticks too while open.
    ui.press(KeyCode::F(2));
    assert!(ui.app.next_tick_at().is_some());
}

#[tokio::test(start_paused = true)]
async fn twenty_countdowns_at_different_offsets_tick_together_once_a_second() {
    let mut ui = Ui::new(vec![]);
    let conv = ui.conv();
    let start = ui.h.engine.now_ms();
    // 20 items due in 10–50 s, each at its own millisecond offset: had each
    // label its own tick, they would redraw the screen 20 times a second.
    for i in 0..20 {
        let mut it = NewItem::new(conv, Kind::Message, format!("countdown {i}"));
        it.due_at = Some(start + 10_000 + 2_000 * i + (137 * i + 11) % 1_000);
        ui.store().enqueue(&it, start).unwrap();
    }
    // And one whose due instant comes in the walk, between two whole seconds.
    let due = start + 4_321;
    let mut it = NewItem::new(conv, Kind::Message, "due during the walk");
    it.due_at = Some(due);
    ui.store().enqueue(&it, start).unwrap();
    ui.app.on_engine(Event::Outbox);
    // The strip counts them down, and F2 too.
    ui.press(KeyCode::F(2));
    ui.render(100, 40);
    assert!(ui.screen(100, 40).contains("countdown 19"));
    ui.app.status = None;
    // Walk 10 s of the clock from tick to tick, drawing each time.
    let mut ticks = std::collections::BTreeSet::new();
    loop {
        let at = ui.app.next_tick_at().unwrap();
        if at > start + 10_000 {
            break;
        }
        ticks.insert(at);
        tick_at(&mut ui, at).await;
        ui.render(100, 40);
    }
    assert!(ticks.len() <= 12, "{} ticks in 10 s", ticks.len());
    let (whole, other): (Vec<i64>, Vec<i64>) = ticks.into_iter().partition(|t| t % 1_000 == 0);
    assert!(
        (10..=11).contains(&whole.len()),
        "one tick a second: {whole:?}"
    );
    assert_eq!(other, [due], "besides whole seconds, only the due instant");
}

#[tokio::test(start_paused = true)]
async fn countdowns_above_an_hour_at_different_offsets_tick_together_once_a_minute() {
    let mut ui = Ui::new(vec![]);
    let conv = ui.conv();
    let start = ui.h.engine.now_ms();
    // 20 items 1 h 15 min to 3 days ahead, each due at its own second and
    // millisecond: had each label its own tick, an idle screen would redraw
    // at 20 instants a minute.
    for i in 0..20 {
        let mut it = NewItem::new(conv, Kind::Message, format!("far {i}"));
        it.due_at = Some(start + 75 * 60_000 + i * 3 * 3_600_000 + (i * 2_971 + 13) % 60_000);
        ui.store().enqueue(&it, start).unwrap();
    }
    ui.app.on_engine(Event::Outbox);
    // The strip counts them down, and F2 too.
    ui.press(KeyCode::F(2));
    ui.render(100, 40);
    assert!(ui.screen(100, 40).contains("far 19"));
    ui.app.status = None;
    // Walk 10 minutes of the clock from tick to tick, drawing each time.
    let mut ticks = Vec::new();
    loop {
        let at = ui.app.next_tick_at().unwrap();
        if at > start + 10 * 60_000 {
            break;
        }
        ticks.push(at);
        tick_at(&mut ui, at).await;
        ui.render(100, 40);
    }
    assert!(
        ticks.iter().all(|t| t % 60_000 == 0),
        "only whole minutes: {ticks:?}"
    );
    assert!((10..=11).contains(&ticks.len()), "once a minute: {ticks:?}");
    // The nearest comes under an hour at a whole minute too; from there it
    // shows seconds, and ticks once a second.
    for _ in 0..10 {
        if ui.screen(100, 40).contains("in 59m") {
            break;
        }
        let at = ui.app.next_tick_at().unwrap();
        assert_eq!(at % 60_000, 0, "{at}");
        tick_at(&mut ui, at).await;
    }
    let s = ui.screen(100, 40);
    assert!(s.contains("in 59m"), "{s}");
    let now = ui.h.engine.now_ms();
    assert_eq!(now % 60_000, 0, "{now}");
    assert_eq!(ui.app.next_tick_at(), Some(now + 1_000));
}

#[tokio::test(start_paused = true)]
async fn a_draft_never_waits_on_another_process_holding_the_write_lock() {
    let mut ui = Ui::new(vec![]);
    let conv = ui.conv();
    // Another process takes the write lock and keeps it.
    let other = rusqlite::Connection::open(ui.h.dir.path().join("tock.db")).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    ui.typ("typed while the database is locked");
    tokio::time::advance(std::time::Duration::from_millis(400)).await;
    // The save is due: it goes to the writer thread, which waits for the
    // lock; the keyboard does not.
    ui.app.on_tick();
    assert!(ui.app.writes_pending(), "the save waits on its own thread");
    assert!(
        !ui.app.status_pair().1,
        "no error for a busy database: {}",
        ui.status_line()
    );
    assert_eq!(ui.app.composer_text(), "typed while the database is locked");
    ui.app
        .on_key(KeyEvent::new(KeyCode::Char('!'), KeyModifiers::NONE));
    assert_eq!(
        ui.app.composer_text(),
        "typed while the database is locked!"
    );
    // The lock goes away: the waiting save goes through, then the next one.
    other.execute_batch("ROLLBACK").unwrap();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    assert_eq!(
        ui.store().draft(conv).unwrap().text,
        "typed while the database is locked"
    );
    tokio::time::advance(std::time::Duration::from_millis(400)).await;
    ui.app.on_tick();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    assert_eq!(
        ui.store().draft(conv).unwrap().text,
        "typed while the database is locked!"
    );
}

/// A send that waits for another process's lock is written to a file once
/// the wait is noticed; a tock killed meanwhile leaves it, and the next one
/// puts it back into the conversation's draft (a draft: if the write did
/// land, nothing is sent twice). Once the write is done, the file goes.
#[tokio::test(start_paused = true)]
async fn a_send_waiting_for_a_lock_survives_a_kill_as_a_draft() {
    let mut ui = Ui::new(vec![]);
    let conv = ui.conv();
    let db = ui.h.dir.path().join("tock.db");
    let spool = ui.h.dir.path().join("tock.db.unsent");
    // Refused at once rather than after SQLite's 5 s (the test does not wait).
    ui.h.engine
        .store()
        .set_busy_timeout(std::time::Duration::from_millis(20))
        .unwrap();
    let other = rusqlite::Connection::open(&db).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    ui.typ("typed during the lock");
    ui.app
        .on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert!(ui.app.writes_pending());
    assert!(
        !spool.exists(),
        "nothing written before the wait is noticed"
    );
    tokio::time::advance(std::time::Duration::from_millis(400)).await;
    ui.app.on_tick();
    let files: Vec<_> = std::fs::read_dir(&spool)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&files[0]).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // Killed here: the file is a dead process's (this one's is its own).
    let dead = {
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let pid = c.id();
        c.wait().unwrap();
        pid
    };
    std::fs::rename(&files[0], spool.join(format!("{dead}-1.json"))).unwrap();
    // The send is refused (the lock outlasts its busy timeout) before the
    // lock goes, its outcome left unapplied as a killed tock leaves it: a
    // write still waiting on the lock would land after the rollback and
    // clear the draft restored below (it did, once, in a loaded suite),
    // which a killed tock's write cannot.
    drop(
        ui.app
            .model
            .writer
            .wait_idle(std::time::Duration::from_secs(20)),
    );
    other.execute_batch("ROLLBACK").unwrap();
    ui.h.engine
        .store()
        .set_busy_timeout(std::time::Duration::from_secs(5))
        .unwrap();
    let next = tock::tui::app::App::new(ui.h.engine.clone()).unwrap();
    assert!(
        ui.store()
            .draft(conv)
            .unwrap()
            .text
            .contains("typed during the lock"),
        "back as the draft"
    );
    assert!(
        next.status
            .as_ref()
            .is_some_and(|s| s.text.contains("may not have gone out")),
    );
    assert_eq!(std::fs::read_dir(&spool).unwrap().count(), 0, "taken");
}

#[tokio::test(start_paused = true)]
async fn a_send_while_another_process_holds_the_write_lock_leaves_the_keyboard_free_and_goes_once()
{
    let mut ui = Ui::new(vec![]);
    let conv = ui.conv();
    ui.typ("hello");
    tokio::time::advance(std::time::Duration::from_millis(400)).await;
    ui.app.on_tick();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    assert_eq!(ui.store().draft(conv).unwrap().text, "hello");
    let second =
        ui.h.engine
            .create_conversation(Some("other"), "user")
            .unwrap();
    ui.pump();
    let other = rusqlite::Connection::open(ui.h.dir.path().join("tock.db")).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    // Enter returns at once: the send waits for the lock on the writer thread.
    ui.app
        .on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert!(ui.app.writes_pending());
    assert_eq!(ui.app.composer_text(), "", "the composer moves on");
    // After a moment the status line says why nothing seems to happen.
    assert!(!ui.status_line().contains("waiting for the database"));
    tokio::time::advance(std::time::Duration::from_millis(400)).await;
    ui.app.on_tick();
    assert!(
        ui.status_line().contains("waiting for the database"),
        "{}",
        ui.status_line()
    );
    // Typing goes on; a switch away and back does not bring the sent text
    // back as a draft (the database still has it until the send is written).
    for c in "next".chars() {
        ui.app
            .on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    ui.app.open(second);
    ui.app.open(conv);
    assert_eq!(ui.app.composer_text(), "next");
    // (Read on the front end's connection: the engine's own is the one waiting.)
    assert!(
        ui.h.engine.reader().list_items(true).unwrap().is_empty(),
        "not written yet"
    );
    other.execute_batch("ROLLBACK").unwrap();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    let rows = ui.rows();
    assert_eq!(rows.len(), 1, "sent once: {rows:?} ({})", ui.status_line());
    assert_eq!(rows[0].text, "hello");
    // Kept in a file while it waited, and the file went once it was written.
    let spool = ui.h.dir.path().join("tock.db.unsent");
    assert!(spool.exists(), "it waited long enough to be kept in a file");
    assert_eq!(std::fs::read_dir(&spool).unwrap().count(), 0);
    assert_eq!(ui.store().draft(conv).unwrap().text, "next");
    assert!(!ui.app.status_pair().1, "{}", ui.status_line());
    assert!(
        !ui.status_line().contains("waiting"),
        "the notice goes with the wait"
    );
}

#[tokio::test(start_paused = true)]
async fn a_send_the_database_refuses_gives_the_text_back() {
    let mut ui = Ui::new(vec![]);
    // The disk says no to every new outbox row (as a full disk would).
    let other = rusqlite::Connection::open(ui.h.dir.path().join("tock.db")).unwrap();
    other
        .execute_batch(
            "CREATE TRIGGER refuse BEFORE INSERT ON outbox BEGIN SELECT RAISE(ABORT, 'no room'); END",
        )
        .unwrap();
    ui.say("keep this");
    let (line, error) = ui.app.status_pair();
    assert!(
        error && line.contains("not sent") && line.contains("back in the composer"),
        "{line}"
    );
    assert_eq!(ui.app.composer_text(), "keep this");
    assert!(ui.rows().is_empty());
    // And it is the draft again, in the database too.
    tokio::time::advance(std::time::Duration::from_millis(400)).await;
    ui.app.on_tick();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    assert_eq!(ui.store().draft(ui.conv()).unwrap().text, "keep this");
    other.execute_batch("DROP TRIGGER refuse").unwrap();
    ui.enter();
    assert_eq!(ui.rows().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn screens_reload_while_a_write_waits_for_another_processs_lock() {
    let mut ui = Ui::new(vec![]);
    let conv = ui.conv();
    ui.say("first");
    let other = rusqlite::Connection::open(ui.h.dir.path().join("tock.db")).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    // The engine's own connection is taken by a write waiting for the lock.
    let engine = ui.h.engine.clone();
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = done.clone();
    let blocked = std::thread::spawn(move || {
        let r = engine.store().set_setting("test.blocked", "1");
        flag.store(true, std::sync::atomic::Ordering::SeqCst);
        r
    });
    std::thread::sleep(std::time::Duration::from_millis(50));
    // Reloads read on the front end's own connection: they do not wait for it.
    ui.app.model.reload_all();
    ui.press(KeyCode::F(2));
    assert_eq!(ui.app.top(), Some(tock::tui::views::ViewKind::Scheduled));
    ui.press(KeyCode::Esc);
    ui.app.open(conv);
    assert!(
        !done.load(std::sync::atomic::Ordering::SeqCst),
        "the screens were read while the engine's write still waited"
    );
    assert_eq!(ui.app.model.items.len(), 1, "the conversation was read");
    other.execute_batch("ROLLBACK").unwrap();
    blocked.join().unwrap().unwrap();
}

fn reply_step(s: &str) -> Step {
    Step::Reply(vec![text(s), done()])
}

/// At 60 columns a match deep in its snippet is still on screen: the row
/// starts nearer it.
#[tokio::test(start_paused = true)]
async fn a_search_match_far_into_its_snippet_is_shown_at_60_columns() {
    let mut ui = Ui::new(vec![reply_step("Noted.")]);
    ui.start().await;
    ui.say(
        "before you can talk to a real model you configure a provider, and then we talk penguins",
    );
    ui.settle().await;
    ui.ctrl('f');
    ui.typ("penguins");
    let s = ui.screen(60, 15);
    // The excerpt's row (below the message's first line) shows the match.
    assert!(
        s.lines()
            .any(|l| l.contains("    …") && l.contains("talk penguins")),
        "{s}"
    );
}

#[tokio::test(start_paused = true)]
async fn ctrl_f_searches_every_conversation_and_enter_opens_the_message() {
    let mut ui = Ui::new(vec![
        reply_step("Zebras are striped so flies miss them."),
        reply_step("Noted."),
    ]);
    ui.start().await;
    let first = ui.conv();
    ui.say("why do zebras have stripes?");
    ui.settle().await;
    ui.app
        .on_key(KeyEvent::new(KeyCode::Char('n'), KeyModifiers::ALT));
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    ui.pump();
    assert_ne!(ui.conv(), first);
    ui.say("something else entirely");
    ui.settle().await;
    ui.ctrl('f');
    assert_eq!(ui.app.top(), Some(ViewKind::Search));
    ui.typ("zebra");
    let s = ui.screen(100, 30);
    assert!(s.contains("Search all conversations"), "{s}");
    assert!(s.contains("2 matches"), "the question and the reply: {s}");
    assert!(s.contains("Zebras are striped"), "{s}");
    assert!(!s.contains("something else"), "{s}");
    insta::assert_snapshot!("search_100x30", ui.render(100, 30).backend());
    insta::assert_snapshot!("search_120x40", ui.render(120, 40).backend());
    insta::assert_snapshot!("search_60x15", ui.render(60, 15).backend());
    // Newest first: the reply, then the question; ↓ then Enter opens the question.
    ui.press(KeyCode::Down);
    ui.enter();
    assert_eq!(ui.app.top(), None);
    assert_eq!(
        ui.conv(),
        first,
        "the search opened the conversation of the match"
    );
    // Nothing matches: said so, and Enter does nothing.
    ui.ctrl('f');
    ui.typ("qwertyuiop");
    assert!(ui.screen(100, 30).contains("no message has these words"));
    ui.enter();
    assert_eq!(ui.app.top(), Some(ViewKind::Search));
    ui.press(KeyCode::Esc);
    assert_eq!(ui.app.top(), None);
    // Query syntax a user may type is never an error.
    ui.say("/search \"unbalanced AND (");
    assert_eq!(ui.app.top(), Some(ViewKind::Search));
    assert!(
        !ui.screen(100, 30).contains("error"),
        "no error for odd input"
    );
}

#[tokio::test(start_paused = true)]
async fn fork_copies_the_history_up_to_the_last_message_on_screen() {
    let mut ui = Ui::new(vec![reply_step("one"), reply_step("two")]);
    ui.start().await;
    let original = ui.conv();
    // Nothing to fork yet: refused, and the command stays to be fixed.
    ui.say("/fork");
    assert_eq!(ui.conv(), original);
    assert_eq!(ui.app.composer_text(), "/fork");
    assert!(ui.status_line().contains("nothing to fork"));
    ui.app.set_composer("");
    ui.say("first question");
    ui.settle().await;
    ui.say("second question");
    ui.settle().await;
    assert_eq!(ui.messages().len(), 4);
    ui.render(100, 30);
    ui.say("/fork");
    ui.pump();
    let forked = ui.conv();
    assert_ne!(forked, original);
    let texts: Vec<String> = ui.messages().into_iter().map(|m| m.content).collect();
    assert_eq!(texts.len(), 4, "{texts:?}");
    assert!(ui.status_line().contains("forked"), "{}", ui.status_line());
    // The original is untouched, and "/fork" is not left as its draft.
    assert_eq!(ui.store().messages(original).unwrap().len(), 4);
    assert_eq!(ui.app.composer_text(), "");
    ui.app.open(original);
    ui.pump();
    assert_eq!(ui.app.composer_text(), "", "the command is not the draft");
}

#[tokio::test(start_paused = true)]
async fn alt_f_forks_at_the_message_scrolled_to() {
    let long: String = (1..=60)
        .map(|i| format!("line {i} of the first answer\n\n"))
        .collect();
    let mut ui = Ui::new(vec![reply_step(&long), reply_step("two")]);
    ui.start().await;
    let original = ui.conv();
    ui.say("first question");
    ui.settle().await;
    ui.say("second question");
    ui.settle().await;
    ui.render(100, 30);
    // Up until the second exchange is off screen: the first answer is the last shown.
    for _ in 0..3 {
        ui.press(KeyCode::PageUp);
        ui.render(100, 30);
    }
    ui.key(KeyCode::Char('f'), KeyModifiers::ALT);
    ui.pump();
    let forked = ui.conv();
    assert_ne!(forked, original, "{}", ui.status_line());
    let texts: Vec<String> = ui.messages().into_iter().map(|m| m.content).collect();
    assert_eq!(texts.len(), 2, "up to the first answer: {texts:?}");
    assert!(
        texts[1].starts_with("line 1 of the first answer"),
        "{texts:?}"
    );
    assert_eq!(ui.store().messages(original).unwrap().len(), 4);
}

#[tokio::test(start_paused = true)]
async fn a_regenerated_reply_shows_one_version_and_alt_comma_brings_the_other_back() {
    let mut ui = Ui::new(vec![
        reply_step("the first answer"),
        reply_step("the second answer"),
        reply_step("an answer to the edit"),
    ]);
    ui.start().await;
    ui.say("a question");
    ui.settle().await;
    ui.ctrl('r');
    ui.settle().await;
    let s = ui.screen(100, 30);
    assert!(
        s.contains("the second answer") && s.contains("‹2/2›"),
        "{s}"
    );
    assert!(
        !s.contains("the first answer"),
        "older versions are not stacked: {s}"
    );
    insta::assert_snapshot!("versions_100x30", ui.render(100, 30).backend());
    insta::assert_snapshot!("versions_60x15", ui.render(60, 15).backend());
    // Alt+, : the first reply again, and the conversation goes on from it.
    ui.key(KeyCode::Char(','), KeyModifiers::ALT);
    ui.pump();
    let s = ui.screen(100, 30);
    assert!(s.contains("the first answer") && s.contains("‹1/2›"), "{s}");
    assert!(!s.contains("the second answer"), "{s}");
    let visible: Vec<String> = ui
        .messages()
        .into_iter()
        .filter(|m| m.role == Role::Assistant && m.status == MessageStatus::Complete)
        .map(|m| m.content)
        .collect();
    assert_eq!(
        visible,
        vec!["the first answer"],
        "the model sees the chosen one"
    );
    ui.key(KeyCode::Char(','), KeyModifiers::ALT);
    assert!(
        ui.status_line().contains("first version"),
        "{}",
        ui.status_line()
    );
    // An edit and resend: the old text is a version, only looked at.
    ui.press(KeyCode::Up);
    ui.erase(20);
    ui.say("an edited question");
    ui.settle().await;
    let s = ui.screen(100, 30);
    assert!(
        s.contains("an edited question") && s.contains("an answer to the edit"),
        "{s}"
    );
    assert!(
        !s.contains("a question ·") && !s.contains("the first answer"),
        "{s}"
    );
    ui.key(KeyCode::Char(','), KeyModifiers::ALT);
    let s = ui.screen(100, 30);
    assert!(s.contains("only looked at"), "{}", ui.status_line());
    assert!(s.contains("an earlier version"), "{s}");
    // At 60 columns (the sidebar hidden) a shorter wording, whole.
    ui.app.sidebar_pref = Some(false);
    let narrow = ui.screen(60, 30);
    ui.app.sidebar_pref = None;
    let header = narrow
        .lines()
        .find(|l| l.contains("‹1/2›"))
        .unwrap_or_else(|| panic!("{narrow}"));
    assert!(
        header.trim_end().ends_with("not in the conversation"),
        "{narrow}"
    );
    // The earlier text with the replies it had then (both were put aside
    // by the edit: the newer is drawn), not the edit's reply.
    assert!(s.contains("the second answer"), "{s}");
    assert!(!s.contains("an answer to the edit"), "{s}");
    ui.key(KeyCode::Char('.'), KeyModifiers::ALT);
    assert!(ui.screen(100, 30).contains("an edited question"));
}

/// Alt+, and Alt+. step the versions of a message in the window; one
/// scrolled away (a long reply below it) is left as it is.
#[tokio::test(start_paused = true)]
async fn version_keys_leave_a_message_off_screen_alone() {
    let long: String = (1..=40)
        .map(|i| format!("line {i} of a long answer\n\n"))
        .collect();
    let mut ui = Ui::new(vec![
        reply_step("the first answer"),
        reply_step("the second answer"),
        reply_step(&long),
    ]);
    ui.start().await;
    ui.say("a question");
    ui.settle().await;
    ui.ctrl('r');
    ui.settle().await;
    ui.say("another question");
    ui.settle().await;
    let s = ui.screen(100, 30);
    assert!(!s.contains("the second answer"), "scrolled away: {s}");
    ui.key(KeyCode::Char(','), KeyModifiers::ALT);
    ui.pump();
    assert!(
        ui.status_line()
            .contains("no message on screen has other versions"),
        "{}",
        ui.status_line()
    );
    let kept: Vec<String> = ui
        .messages()
        .into_iter()
        .filter(|m| m.role == Role::Assistant && m.status == MessageStatus::Complete)
        .map(|m| m.content)
        .collect();
    assert_eq!(kept[0], "the second answer", "not switched unseen");
    // Scrolled back to it, the keys step it.
    for _ in 0..4 {
        ui.press(KeyCode::PageUp);
        ui.render(100, 30);
    }
    assert!(ui.screen(100, 30).contains("the second answer"));
    ui.key(KeyCode::Char(','), KeyModifiers::ALT);
    ui.pump();
    assert!(ui.status_line().contains("‹1/2›"), "{}", ui.status_line());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_tools_lists_tock_s_tools_and_each_mcp_server_with_its_state() {
    let mut cfg = Config::default();
    let bin = common::mcp_test_server_bin();
    let toml = format!(
        "[mcp.test]\ncommand = {:?}\n[mcp.broken]\ncommand = \"/nonexistent/mcp-server\"\n[approvals.rules]\n\"test__echo\" = \"allow\"\n",
        bin.display().to_string()
    );
    let parsed: Config = toml::from_str(&toml).unwrap();
    cfg.mcp = parsed.mcp;
    cfg.approvals = parsed.approvals;
    let mut ui = Ui::with_config(vec![], cfg);
    ui.say("/tools");
    assert_eq!(ui.app.top(), Some(ViewKind::Tools));
    let s = ui.screen(120, 40);
    assert!(
        s.contains("Tools the model is offered") && s.contains("schedule_task"),
        "{s}"
    );
    // The servers start in the background; the view follows.
    let mut s = String::new();
    for _ in 0..200 {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        ui.pump();
        s = ui.screen(120, 40);
        if s.contains("test__echo") && s.contains("failed") {
            break;
        }
    }
    assert!(s.contains("test (stdio) running"), "{s}");
    assert!(
        s.contains("runs    test__echo"),
        "the allow rule shows: {s}"
    );
    assert!(s.contains("read-only"), "readOnlyHint shows: {s}");
    assert!(s.contains("broken (stdio) failed"), "{s}");
    // End goes to the foot of a list taller than the window, Home back up.
    let top = ui.screen(60, 15);
    assert!(top.contains("↓"), "{top}");
    ui.press(KeyCode::End);
    let end = ui.screen(60, 15);
    assert!(!end.contains("↓") && end != top, "{end}");
    ui.press(KeyCode::Home);
    assert_eq!(ui.screen(60, 15), top);
    ui.press(KeyCode::Esc);
    assert_eq!(ui.app.top(), None);
    ui.h.engine
        .shutdown(std::time::Duration::from_secs(2))
        .await;
}

/// "approved: running it" stands while an approved MCP call runs and goes
/// once its result is in (the clock here is still: without that, the line
/// would stand for good).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_running_line_of_an_approved_call_goes_once_it_has_run() {
    let mut cfg = Config::default();
    let bin = common::mcp_test_server_bin();
    let toml = format!("[mcp.test]\ncommand = {:?}\n", bin.display().to_string());
    let parsed: Config = toml::from_str(&toml).unwrap();
    cfg.mcp = parsed.mcp;
    let mut ui = Ui::with_config(
        vec![
            Step::Reply(vec![tool_call("test__echo", r#"{"text":"hello"}"#), done()]),
            Step::Reply(vec![text("it said hello back"), done()]),
        ],
        cfg,
    );
    ui.h.engine.start();
    ui.say("echo hello");
    let poll = |ui: &mut Ui, what: &str, ok: &dyn Fn(&mut Ui) -> bool| {
        for _ in 0..400 {
            ui.pump();
            if ok(ui) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        panic!("timed out waiting for {what}: {}", ui.screen(100, 30));
    };
    poll(&mut ui, "the approval", &|ui: &mut Ui| {
        ui.app.model.waiting_approval().is_some()
    });
    ui.approve();
    poll(&mut ui, "the reply after the call", &|ui: &mut Ui| {
        ui.screen(100, 30).contains("it said hello back")
    });
    let notices: Vec<String> = ui.app.notices.iter().map(|n| n.text.clone()).collect();
    assert!(
        notices
            .iter()
            .any(|n| n.contains("test__echo approved: running it")),
        "{notices:?}"
    );
    assert!(
        !ui.status_line().contains("running it"),
        "{}",
        ui.status_line()
    );
    ui.h.engine
        .shutdown(std::time::Duration::from_secs(2))
        .await;
}

#[tokio::test(start_paused = true)]
async fn snapshot_tools_view_without_servers() {
    let mut ui = Ui::new(vec![]);
    ui.say("/tools");
    insta::assert_snapshot!("tools_100x30", ui.render(100, 30).backend());
    insta::assert_snapshot!("tools_120x40", ui.render(120, 40).backend());
    insta::assert_snapshot!("tools_60x15", ui.render(60, 15).backend());
    assert!(ui.screen(60, 15).contains("↓ 10 more ╯"));
    assert!(ui.screen(100, 30).contains("No MCP servers"));
    // At 60 columns the descriptions wrap, and scrolling reaches their end.
    ui.render(60, 15);
    for _ in 0..40 {
        ui.press(KeyCode::Down);
    }
    let s = ui.screen(60, 15);
    assert!(s.contains("No MCP servers"), "{s}");
    // At the end, nothing more below; above it, the rows out of sight are said.
    assert!(!s.contains(" more ╯"), "{s}");
    ui.press(KeyCode::Up);
    ui.press(KeyCode::Up);
    let s = ui.screen(60, 15);
    assert!(s.contains("series. The user may have to"), "{s}");
}

#[tokio::test(start_paused = true)]
async fn a_replys_token_usage_shows_under_it_and_the_conversation_total_in_the_status_bar() {
    let usage = tock::llm::Usage {
        prompt_tokens: Some(1_234),
        completion_tokens: Some(56),
        cached_tokens: Some(800),
    };
    let mut ui = Ui::new(vec![Step::Reply(vec![
        text("counted"),
        StreamEvent::Usage(usage),
        done(),
    ])]);
    ui.start().await;
    ui.say("count me");
    ui.settle().await;
    let s = ui.screen(100, 30);
    assert!(s.contains("1.2k in (800 cached) · 56 out"), "{s}");
    assert!(s.contains("Σ 1.3k tokens"), "prompt and reply: {s}");
}

#[tokio::test(start_paused = true)]
async fn an_image_for_a_model_without_vision_is_refused_when_attached() {
    let cfg: Config = toml::from_str(
        "[models.blind]\nprovider = \"openai\"\nmodel = \"text-only\"\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key = \"sk-test-0000000000\"\nvision = false\n",
    )
    .unwrap();
    let mut ui = Ui::with_config(vec![], cfg);
    ui.say("/model blind");
    let img = ui.h.dir.path().join("photo.png");
    std::fs::write(&img, b"\x89PNG\r\n\x1a\n0000").unwrap();
    ui.say(&format!("/attach {}", img.display()));
    let (line, error) = ui.app.status_pair();
    assert!(error && line.contains("vision"), "{line}");
    assert!(ui.app.composer.attachments.is_empty());
    assert!(
        ui.app.composer_text().starts_with("/attach"),
        "kept to be fixed"
    );
    ui.app.set_composer("");
    // A text file is still fine.
    let txt = ui.h.dir.path().join("notes.txt");
    std::fs::write(&txt, "plain text").unwrap();
    ui.say(&format!("/attach {}", txt.display()));
    assert_eq!(ui.app.composer.attachments.len(), 1, "{}", ui.status_line());
}

#[tokio::test(start_paused = true)]
async fn prose_is_laid_out_at_most_max_width_columns_on_a_wide_terminal() {
    let long = "word ".repeat(80);
    let mut ui = Ui::new(vec![reply_step(&long)]);
    ui.start().await;
    ui.say("a long answer please");
    ui.settle().await;
    let s = ui.screen(220, 30);
    let widest = s
        .lines()
        .filter(|l| l.contains("word"))
        .map(|l| l.trim_end().chars().count())
        .max()
        .unwrap();
    // The sidebar (28 columns) plus at most 100 of text.
    assert!(widest <= 28 + 100, "widest row {widest}:\n{s}");
    assert!(s.lines().filter(|l| l.contains("word")).count() >= 4, "{s}");
}

#[tokio::test(start_paused = true)]
async fn an_at_path_mention_attaches_the_file_and_tab_completes_it() {
    let mut ui = Ui::new(vec![]);
    let dir = ui.h.dir.path().to_path_buf();
    std::fs::write(dir.join("meeting-notes.txt"), "the notes").unwrap();
    // Tab completes the mention as a path.
    ui.typ(&format!("summarise @{}/meeting-n", dir.display()));
    ui.press(KeyCode::Tab);
    assert_eq!(
        ui.app.composer_text(),
        format!("summarise @{}/meeting-notes.txt", dir.display())
    );
    ui.typ(" please, and greet @nobody");
    ui.enter();
    let rows = ui.rows();
    assert_eq!(rows.len(), 1, "{}", ui.status_line());
    let parts = rows[0].parts_json.clone().unwrap_or_default();
    assert!(parts.contains("meeting-notes.txt"), "attached: {parts}");
    assert!(
        rows[0].text.contains("@nobody"),
        "a mention that is no file stays text"
    );
    // What the mention attached is shown with the message, and said at once.
    assert!(
        ui.status_line().contains("meeting-notes.txt"),
        "{}",
        ui.status_line()
    );
    ui.start().await;
    ui.settle().await;
    let s = ui.screen(100, 30);
    assert!(s.contains("📎 meeting-notes.txt · text · 9 B"), "{s}");
}

/// `@path` attaches its file to a message sent later too (`/later`, `/at`,
/// Ctrl+T): it went without it, silently. A recurring message cannot carry
/// files, and says so instead of dropping them.
#[tokio::test(start_paused = true)]
async fn an_at_path_mention_attaches_the_file_to_a_scheduled_message_too() {
    let mut ui = Ui::new(vec![]);
    let dir = ui.h.dir.path().to_path_buf();
    std::fs::write(dir.join("report.txt"), "numbers").unwrap();
    let path = dir.join("report.txt").display().to_string();
    ui.say(&format!("/later 1h summarise @{path}"));
    let rows = ui.rows();
    assert_eq!(rows.len(), 1, "{}", ui.status_line());
    assert!(rows[0].due_at.is_some());
    let parts = rows[0].parts_json.clone().unwrap_or_default();
    assert!(parts.contains("report.txt"), "attached: {parts}");
    assert!(
        ui.status_line().contains("📎 report.txt"),
        "{}",
        ui.status_line()
    );
    // Ctrl+T's time goes the same way.
    ui.typ(&format!("and again @{path}"));
    let at = ui.h.engine.now_ms() + 3_600_000;
    ui.app
        .apply(vec![tock::tui::views::Intent::ScheduleComposer(at)]);
    ui.pump();
    let rows = ui.rows();
    assert_eq!(rows.len(), 2, "{}", ui.status_line());
    assert!(
        rows[1]
            .parts_json
            .clone()
            .unwrap_or_default()
            .contains("report.txt")
    );
    // A series: refused, with the reason; nothing made, the text kept.
    let cmd = format!("/every day at 9am look at @{path}");
    ui.say(&cmd);
    assert!(ui.h.engine.list_series(false).unwrap().is_empty());
    let (msg, is_err) = ui.app.status_pair();
    assert!(is_err && msg.contains("cannot carry files"), "{msg}");
    assert_eq!(ui.app.composer_text(), cmd);
}

// ----- themes -----------------------------------------------------------------

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

/// Every visible character whose colour, on a light terminal (black text on
/// white), has less contrast than text needs: 4:1, or 2.5:1 for text drawn
/// faint on purpose (DIM: placeholders, finished rows), with faint taken as
/// 30% of the way to the background.
fn unreadable_on_light(t: &Terminal<TestBackend>) -> Vec<String> {
    use ratatui::style::Modifier;
    let buf = t.backend().buffer();
    let mut bad = Vec::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            let cell = &buf[(x, y)];
            if cell.symbol().trim().is_empty() {
                continue;
            }
            let reversed = cell.modifier.contains(Modifier::REVERSED);
            let (mut fg, mut bg) = (rgb(cell.fg, (0, 0, 0)), rgb(cell.bg, (255, 255, 255)));
            if reversed {
                std::mem::swap(&mut fg, &mut bg);
            }
            let faint = cell.modifier.contains(Modifier::DIM);
            if faint {
                let mix = |f: u8, b: u8| (f64::from(f) + 0.3 * (f64::from(b) - f64::from(f))) as u8;
                fg = (mix(fg.0, bg.0), mix(fg.1, bg.1), mix(fg.2, bg.2));
            }
            let need = if faint { 2.5 } else { 4.0 };
            let ratio = contrast(fg, bg);
            if ratio < need {
                bad.push(format!(
                    "({x},{y}) {:?} {:?} on {:?}: {ratio:.2}",
                    cell.symbol(),
                    cell.fg,
                    cell.bg
                ));
            }
        }
    }
    bad
}

/// A frame with its colours: each row's text, then a row of letters naming
/// each cell's style (`.` for the terminal's own), and the legend.
fn styled(t: &Terminal<TestBackend>) -> String {
    let buf = t.backend().buffer();
    let mut legend: Vec<String> = Vec::new();
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut text = String::new();
        let mut marks = String::new();
        for x in 0..buf.area.width {
            let cell = &buf[(x, y)];
            let sym = cell.symbol();
            if sym.is_empty() {
                continue;
            }
            text.push_str(sym);
            let plain = cell.fg == ratatui::style::Color::Reset
                && cell.bg == ratatui::style::Color::Reset
                && cell.modifier.is_empty();
            let mark = if plain {
                '.'
            } else {
                let key = format!("fg {:?} bg {:?} {:?}", cell.fg, cell.bg, cell.modifier);
                let i = legend.iter().position(|l| *l == key).unwrap_or_else(|| {
                    legend.push(key);
                    legend.len() - 1
                });
                char::from_u32(u32::from(b'a') + (i as u32 % 26)).unwrap_or('?')
            };
            let w = unicode_width::UnicodeWidthStr::width(sym).max(1);
            for _ in 0..w {
                marks.push(mark);
            }
        }
        out.push_str(&format!(
            "{}\n{}\n",
            text.trim_end(),
            marks.trim_end_matches('.')
        ));
    }
    for (i, l) in legend.iter().enumerate() {
        let c = char::from_u32(u32::from(b'a') + (i as u32 % 26)).unwrap_or('?');
        out.push_str(&format!("{c} = {l}\n"));
    }
    out
}

fn theme_config(theme: &str) -> Config {
    toml::from_str(&format!("[ui]\ntheme = \"{theme}\"\n")).unwrap()
}

/// A screen with most of what the UI colours: the sidebar, a Markdown reply
/// with code, a failed item, a scheduled one, the strip and the status bar.
async fn busy_screen(theme: &str) -> Ui {
    init_env();
    let h = harness_with(
        Scripted::new({
            let mut steps = markdown_steps();
            steps.push(Step::Fail(LlmError::permanent("401 Unauthorized")));
            steps
        }),
        theme_config(theme),
    );
    h.engine
        .store()
        .create_conversation(Some("An older chat"), "user", T0 - 86_400_000)
        .unwrap();
    let mut ui = Ui::on(h);
    ui.start().await;
    ui.say("show me markdown");
    ui.settle().await;
    ui.say("and fail");
    ui.settle().await;
    ui.say("/later 1h check the build");
    ui.settle().await;
    ui.press(KeyCode::Tab); // the strip, with its selection
    ui
}

#[tokio::test(start_paused = true)]
async fn the_light_theme_keeps_every_text_readable_on_a_light_background() {
    let mut ui = busy_screen("light").await;
    let mut screens = vec![("main", ui.render(120, 40))];
    ui.press(KeyCode::Esc);
    ui.press(KeyCode::F(2));
    screens.push(("F2", ui.render(120, 40)));
    ui.press(KeyCode::Esc);
    ui.press(KeyCode::F(1));
    screens.push(("help", ui.render(120, 40)));
    ui.press(KeyCode::Esc);
    ui.say("/search markdown");
    screens.push(("search", ui.render(120, 40)));
    ui.press(KeyCode::Esc);
    ui.say("/tools");
    screens.push(("tools", ui.render(120, 40)));
    ui.press(KeyCode::Esc);
    ui.typ("/at tomorrow 9am standup");
    screens.push(("preview", ui.render(60, 15)));
    for (name, t) in &screens {
        let bad = unreadable_on_light(t);
        assert!(
            bad.is_empty(),
            "{name}: {} cells unreadable on white, e.g. {:?}\n{}",
            bad.len(),
            &bad[..bad.len().min(8)],
            screen_text(t)
        );
    }
    // The same screen in the dark palette is what a light terminal showed
    // before: the check above would have caught it.
    let mut dark = busy_screen("dark").await;
    assert!(
        !unreadable_on_light(&dark.render(120, 40)).is_empty(),
        "the contrast check finds the dark palette's yellow and grey on white"
    );
}

#[tokio::test(start_paused = true)]
async fn snapshot_both_themes_with_their_colours() {
    let mut ui = busy_screen("light").await;
    insta::assert_snapshot!("light_busy_80x24", styled(&ui.render(80, 24)));
    insta::assert_snapshot!("light_busy_60x15", styled(&ui.render(60, 15)));
    let mut ui = busy_screen("dark").await;
    insta::assert_snapshot!("dark_busy_80x24", styled(&ui.render(80, 24)));
    insta::assert_snapshot!("dark_busy_60x15", styled(&ui.render(60, 15)));
}

#[tokio::test(start_paused = true)]
async fn slash_theme_switches_the_palette_for_the_session_and_bad_colours_say_so() {
    init_env();
    let cfg: Config = toml::from_str(
        "[ui]\ntheme = \"dark\"\n[ui.colors]\naccent = \"#5f00af\"\nerror = \"reddish\"\n",
    )
    .unwrap();
    let mut ui = Ui::with_config(markdown_steps(), cfg);
    let (line, error) = ui.app.status_pair();
    assert!(error && line.contains("reddish"), "one line: {line}");
    assert_eq!(
        tock::tui::theme::palette().accent,
        ratatui::style::Color::Rgb(0x5f, 0x00, 0xaf)
    );
    ui.start().await;
    ui.say("show me markdown");
    ui.settle().await;
    ui.say("/theme");
    assert!(
        ui.status_line().contains("theme: dark"),
        "{}",
        ui.status_line()
    );
    ui.say("/theme light");
    assert!(
        ui.status_line().contains("light for this session"),
        "{}",
        ui.status_line()
    );
    let p = tock::tui::theme::palette();
    assert_eq!(p.background, tock::tui::theme::Background::Light);
    assert_eq!(
        p.accent,
        ratatui::style::Color::Rgb(0x5f, 0x00, 0xaf),
        "custom colours stay"
    );
    // Already rendered messages are drawn again in the new colours.
    let t = ui.render(100, 30);
    let bad = unreadable_on_light(&t);
    assert!(bad.is_empty(), "{bad:?}");
    ui.say("/theme purple");
    let (line, error) = ui.app.status_pair();
    assert!(error && line.contains("purple"), "{line}");
    // Tab completes the names.
    ui.app.set_composer("/theme li");
    ui.press(KeyCode::Tab);
    assert_eq!(ui.app.composer_text(), "/theme light ");
}

/// The counts the app keeps (the store's, read again on each change) equal
/// a count of every unfinished row as the database has it: the sidebar's
/// badges and the status bar's counts by state.
fn assert_summaries_match(ui: &Ui, when: &str) {
    let rows = ui.store().item_summaries().unwrap();
    let (mut per_conv, mut failed_per_conv) = Default::default();
    for s in &rows {
        let Some(c) = s.conversation_id else { continue };
        let map: &mut std::collections::HashMap<i64, usize> =
            if matches!(s.status, Status::Failed | Status::Expired) {
                &mut failed_per_conv
            } else {
                &mut per_conv
            };
        *map.entry(c).or_insert(0) += 1;
    }
    assert_eq!(
        (&ui.app.model.pending_by_conv, &ui.app.model.failed_by_conv),
        (&per_conv, &failed_per_conv),
        "{when}: sidebar badges (pending, failed)"
    );
    let now = ui.app.model.now_ms();
    let mut by_state = tock::tui::model::StateCounts::default();
    for s in &rows {
        let gate = ui.app.model.gate(s.conversation_id);
        by_state.add(&tock::engine::state::summary_state(s, now, gate), 1);
    }
    assert_eq!(ui.app.model.state_counts(), by_state, "{when}: status bar");
}

#[tokio::test(start_paused = true)]
async fn an_outbox_change_patches_only_its_rows_and_the_result_equals_a_full_reload() {
    let mut ui = Ui::new(vec![
        reply_step("one"),
        Step::Fail(LlmError::transient("503 busy")),
        reply_step("two"),
        Step::Fail(LlmError::permanent("401 Unauthorized")),
        Step::Cut(vec![text("half")], LlmError::transient("connection reset")),
        reply_step("three"),
    ]);
    ui.start().await;
    let conv = ui.conv();
    let engine = ui.h.engine.clone();
    let mut rx = engine.subscribe();
    ui.say("a first message");
    ui.settle().await;
    assert_summaries_match(&ui, "after a send and its reply");
    ui.say("/later 1h check the build");
    ui.settle().await;
    assert_summaries_match(&ui, "after /later");
    let later = ui
        .rows()
        .iter()
        .find(|r| r.text == "check the build")
        .unwrap()
        .id;
    engine.reschedule(later, T0 + 7_200_000).unwrap();
    ui.pump();
    assert_summaries_match(&ui, "after a reschedule");
    engine.edit(later, "check the build again").unwrap();
    ui.pump();
    assert_summaries_match(&ui, "after an edit");
    engine.send_now(later).unwrap();
    ui.settle().await;
    assert_summaries_match(&ui, "after send now, a transient failure and its retry");
    tokio::time::sleep(std::time::Duration::from_secs(120)).await;
    ui.settle().await;
    assert_summaries_match(&ui, "after the retry went out");
    ui.say("this one fails");
    ui.settle().await;
    assert_summaries_match(&ui, "after a permanent failure");
    ui.say("this one is cut");
    ui.settle().await;
    tokio::time::sleep(std::time::Duration::from_secs(120)).await;
    ui.settle().await;
    assert_summaries_match(&ui, "after a cut reply and its regeneration");
    let other = engine
        .submit(NewItem {
            due_at: Some(T0 + 86_400_000),
            ..NewItem::new(conv, Kind::Message, "tomorrow")
        })
        .unwrap();
    ui.pump();
    assert_summaries_match(&ui, "after a submit");
    engine.cancel(other).unwrap();
    ui.pump();
    assert_summaries_match(&ui, "after a cancel");
    // The hot paths named their rows.
    let mut named = 0;
    while let Ok(e) = rx.try_recv() {
        named += usize::from(matches!(e, Event::OutboxRows(_)));
    }
    assert!(named >= 8, "{named} changes named their rows");
}

#[tokio::test(start_paused = true)]
async fn streamed_tokens_do_not_reload_an_open_f2() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    let conv = ui.conv();
    ui.press(KeyCode::F(2));
    assert_eq!(ui.app.top(), Some(ViewKind::Scheduled));
    // A row written behind the app's back (no event for it yet).
    ui.store()
        .enqueue(
            &NewItem {
                due_at: Some(T0 + 3_600_000),
                ..NewItem::new(conv, Kind::Message, "written behind its back")
            },
            T0,
        )
        .unwrap();
    // A token of a reply: F2 is not read again for it.
    ui.app.on_engine(Event::Delta {
        conversation_id: conv,
        message_id: 1,
        offset: 0,
        text: "tok".into(),
    });
    assert!(!ui.screen(120, 40).contains("written behind its back"));
    // An outbox change: it is.
    ui.app.on_engine(Event::Outbox);
    assert!(ui.screen(120, 40).contains("written behind its back"));
}

/// Every view and pane at the two sizes that matter most, 120×40 and 60×15:
/// a streaming reply with a queue, the paused queue after a stop, the strip
/// focused, its cancel confirmation, help, F2, the time picker, the
/// notification history, the rename prompt and the edit-and-resend banner
/// (the approval card and verbatim messages have their own snapshots).
#[tokio::test(start_paused = true)]
async fn snapshot_every_view_at_120x40_and_60x15() {
    fn both(ui: &mut Ui, name: &str) {
        for (w, h) in [(120, 40), (60, 15)] {
            insta::assert_snapshot!(format!("view_{name}_{w}x{h}"), ui.render(w, h).backend());
        }
    }
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![
        Step::Hold(
            vec![text(
                "A first part of the answer, long enough to wrap at sixty columns.",
            )],
            gate.clone(),
        ),
        Step::Reply(vec![text("the second answer"), done()]),
    ]);
    // As a user has it: the sidebar hides itself below 100 columns.
    ui.app.sidebar_pref = None;
    ui.start().await;
    both(&mut ui, "empty");
    ui.say("Plan the week: groceries, the dentist, and a call with Sam.");
    ui.say("also the car");
    ui.say("and water the plants");
    ui.settle().await;
    assert!(ui.app.model.is_busy());
    both(&mut ui, "streaming_with_a_queue");

    ui.press(KeyCode::Esc);
    ui.settle().await;
    assert!(ui.screen(120, 40).contains("paused after stop"));
    both(&mut ui, "paused_queue");

    ui.press(KeyCode::Tab);
    assert_eq!(ui.app.focus, Focus::Strip);
    both(&mut ui, "strip_focused");
    ui.ch('x');
    assert_eq!(ui.app.top(), Some(ViewKind::Confirm));
    both(&mut ui, "confirm_cancel");
    ui.press(KeyCode::Esc);
    ui.press(KeyCode::Esc);
    assert_eq!(ui.app.focus, Focus::Composer);

    ui.press(KeyCode::F(1));
    both(&mut ui, "help");
    ui.press(KeyCode::Esc);
    ui.press(KeyCode::F(2));
    both(&mut ui, "f2");
    ui.press(KeyCode::Esc);
    ui.press(KeyCode::F(3));
    both(&mut ui, "notifications");
    ui.press(KeyCode::Esc);

    ui.typ("remember the milk");
    ui.ctrl('t');
    both(&mut ui, "time_picker");
    ui.press(KeyCode::Esc);
    ui.erase(17);

    // The sidebar (shown at 120 columns) and its rename prompt.
    ui.app.sidebar_pref = Some(true);
    ui.render(120, 40);
    ui.press(KeyCode::Tab);
    ui.press(KeyCode::Tab);
    assert_eq!(ui.app.focus, Focus::Sidebar);
    ui.ch('r');
    assert_eq!(ui.app.top(), Some(ViewKind::Prompt));
    both(&mut ui, "rename_prompt");
    ui.press(KeyCode::Esc);
    // The filter prompt: its title gives way to a short one at 60 columns
    // (the long one lost its end there).
    ui.ch('/');
    assert_eq!(ui.app.top(), Some(ViewKind::Prompt));
    ui.typ("plan");
    both(&mut ui, "filter_prompt");
    assert!(
        ui.screen(60, 15)
            .contains("Filter (Enter opens, Esc clears)"),
        "{}",
        ui.screen(60, 15)
    );
    ui.press(KeyCode::Esc);
    ui.press(KeyCode::Esc);
    ui.app.sidebar_pref = None;

    assert_eq!(ui.app.composer_text(), "");
    ui.press(KeyCode::Up);
    assert!(ui.screen(120, 40).contains("editing your last message"));
    both(&mut ui, "edit_banner");
    ui.press(KeyCode::Esc);

    gate.notify_one();
    ui.settle().await;
}

/// The event loop draws a frame only for input `on_terminal` says it acted
/// on (at once, even while a reply streams): what it ignores must indeed
/// change nothing, and a key it acts on must change the screen.
#[tokio::test(start_paused = true)]
async fn input_that_cannot_change_the_screen_changes_nothing() {
    use ratatui::crossterm::event::{KeyEventKind, MouseButton, MouseEvent, MouseEventKind};
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.say("hello");
    ui.settle().await;
    let before = ui.render(80, 24).backend().buffer().clone();
    let mouse = |kind| {
        TermEvent::Mouse(MouseEvent {
            kind,
            column: 40,
            row: 10,
            modifiers: KeyModifiers::NONE,
        })
    };
    let inert = [
        mouse(MouseEventKind::Moved),
        mouse(MouseEventKind::Up(MouseButton::Left)),
        mouse(MouseEventKind::Drag(MouseButton::Left)),
        TermEvent::Key(KeyEvent::new_with_kind(
            KeyCode::Char('a'),
            KeyModifiers::NONE,
            KeyEventKind::Release,
        )),
        TermEvent::FocusGained,
        TermEvent::FocusLost,
    ];
    for ev in inert {
        let shown = format!("{ev:?}");
        assert!(!ui.app.on_terminal(ev), "{shown}");
    }
    assert_eq!(ui.render(80, 24).backend().buffer(), &before);
    // A key it acts on does change the screen.
    assert!(ui.app.on_terminal(TermEvent::Key(KeyEvent::new(
        KeyCode::Char('a'),
        KeyModifiers::NONE
    ))));
    assert_ne!(ui.render(80, 24).backend().buffer(), &before);
    let acting = [
        TermEvent::Paste("pasted".into()),
        mouse(MouseEventKind::ScrollUp),
        mouse(MouseEventKind::ScrollDown),
        mouse(MouseEventKind::Down(MouseButton::Left)),
    ];
    for ev in acting {
        let shown = format!("{ev:?}");
        assert!(ui.app.on_terminal(ev), "{shown}");
    }
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

/// The text of a reply streaming in a conversation not on screen changes
/// nothing there: no frame is drawn for it. Text of the reply on screen is.
#[tokio::test(start_paused = true)]
async fn the_text_of_a_reply_in_another_conversation_draws_nothing() {
    let (mut ui, conv) = streaming("streaming here").await;
    let reply = ui
        .store()
        .messages(conv)
        .unwrap()
        .into_iter()
        .find(|m| m.role == Role::Assistant)
        .expect("a reply streams");
    assert!(ui.screen(80, 24).contains("streaming here"));
    let other = ui
        .store()
        .create_conversation(Some("other"), "user", T0)
        .unwrap();
    let before = ui.render(80, 24).backend().buffer().clone();
    assert!(!ui.app.on_engine(Event::Delta {
        conversation_id: other,
        message_id: reply.id + 100,
        offset: 0,
        text: "elsewhere".into(),
    }));
    assert_eq!(ui.render(80, 24).backend().buffer(), &before);
    assert!(ui.app.on_engine(Event::Delta {
        conversation_id: conv,
        message_id: reply.id,
        offset: reply.content.len(),
        text: " and more".into(),
    }));
    assert!(ui.screen(80, 24).contains("streaming here and more"));
}

/// The engine is told which conversation is on screen: the text of a reply
/// streaming in another is taken once a second (the provider is told so),
/// and at a reader's pace again when its conversation is shown.
#[tokio::test(start_paused = true)]
async fn a_reply_streaming_off_screen_is_taken_once_a_second() {
    let (mut ui, conv) = streaming("streaming here").await;
    let pace = |ui: &Ui| ui.h.provider.requests().pop().unwrap().text_every.get();
    assert_eq!(pace(&ui), std::time::Duration::from_millis(100));
    // A new conversation on screen.
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    ui.settle().await;
    assert_ne!(ui.app.model.current, Some(conv));
    assert_eq!(pace(&ui), std::time::Duration::from_secs(1));
    // Back to the streaming one.
    ui.app.model.open(conv);
    ui.settle().await;
    assert_eq!(pace(&ui), std::time::Duration::from_millis(100));
}

/// Alt+n (and /new) in a conversation with nothing in it stays there and
/// says so: each press made another empty "Conversation N" for good. Once
/// the conversation has a message, it makes a new one.
#[tokio::test(start_paused = true)]
async fn a_new_conversation_is_not_made_from_an_unused_one() {
    let mut ui = Ui::new(vec![Step::Reply(vec![text("hi")])]);
    ui.start().await;
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    ui.settle().await;
    let convs = ui.app.model.convs.len();
    let here = ui.app.model.current;
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    ui.settle().await;
    ui.say("/new");
    ui.settle().await;
    assert_eq!(ui.app.model.convs.len(), convs);
    assert_eq!(ui.app.model.current, here);
    assert!(
        ui.status_line().contains("new and empty"),
        "{}",
        ui.status_line()
    );
    // A title asks for a conversation of its own.
    ui.say("/new Named");
    ui.settle().await;
    assert_eq!(ui.app.model.convs.len(), convs + 1);
    ui.say("hello");
    ui.settle().await;
    let here = ui.app.model.current;
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    ui.settle().await;
    assert_eq!(ui.app.model.convs.len(), convs + 2);
    assert_ne!(ui.app.model.current, here);
}

/// F2 opens on what the status bar says needs attention: the first failed
/// item, not the series listed first (with no approval waiting, which
/// leads the list).
#[tokio::test(start_paused = true)]
async fn f2_opens_on_the_failed_item_the_status_bar_points_to() {
    let mut ui = Ui::new(vec![Step::Fail(LlmError::permanent(
        "401 Unauthorized: invalid API key",
    ))]);
    ui.start().await;
    ui.say("ping that failed");
    ui.settle().await;
    assert_eq!(ui.rows()[0].status, Status::Failed);
    ui.say("/every day 9am stretch");
    ui.settle().await;
    ui.press(KeyCode::F(2));
    let s = ui.screen(100, 30);
    let chosen = s.lines().find(|l| l.contains('›')).unwrap_or_default();
    assert!(chosen.contains("ping that failed"), "{s}");
    assert!(s.contains("stretch"), "{s}");
}

/// A search hit opens with its message at the top of the chat, measured in
/// the chat of the conversation it opens: there a taller composer (a draft
/// of several lines) leaves fewer rows than where the search was typed,
/// and the message was left just above the view.
#[tokio::test(start_paused = true)]
async fn a_search_hit_opens_at_the_top_of_the_chat_it_opens_in() {
    let long: String = (1..=40)
        .map(|i| format!("line {i} of the answer\n\n"))
        .collect();
    let mut ui = Ui::new(vec![
        reply_step(&long),
        reply_step("ok"),
        reply_step("ok"),
        reply_step("fine"),
    ]);
    ui.start().await;
    ui.app.sidebar_pref = Some(false);
    let first = ui.conv();
    ui.say("needle question");
    ui.settle().await;
    ui.say("second question");
    ui.settle().await;
    ui.say("third question");
    ui.settle().await;
    for i in 0..6 {
        ui.typ(&format!("draft line {i}"));
        ui.key(KeyCode::Enter, KeyModifiers::ALT);
    }
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    ui.pump();
    assert_ne!(ui.conv(), first);
    ui.say("elsewhere");
    ui.settle().await;
    ui.screen(80, 24);
    ui.ctrl('f');
    ui.typ("needle");
    ui.enter();
    assert_eq!(ui.conv(), first);
    let s = ui.screen(80, 24);
    // Not only in the status bar's title: in the chat.
    let chat: Vec<&str> = s.lines().take(10).collect();
    assert!(chat.iter().any(|l| l.trim() == "needle question"), "{s}");
    assert!(s.contains("line 1 of the answer"), "{s}");
    assert!(s.contains("End: jump to latest"), "{s}");
}

/// "regenerating the last reply" goes once the new reply is in (it stayed
/// its ten seconds after the reply had finished).
#[tokio::test(start_paused = true)]
async fn the_regenerating_line_goes_when_the_new_reply_is_in() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![
        Step::Reply(vec![text("first answer"), done()]),
        Step::Hold(vec![text("second answer")], gate.clone()),
    ]);
    ui.start().await;
    ui.say("q");
    ui.settle().await;
    ui.ctrl('r');
    ui.settle().await;
    assert!(
        ui.status_line().contains("regenerating the last reply"),
        "{}",
        ui.status_line()
    );
    gate.notify_one();
    ui.settle().await;
    assert!(ui.screen(80, 24).contains("second answer"));
    assert_eq!(ui.status_line(), "", "the line outlived the regeneration");
}

/// `/delete` asks again when messages came into the conversation since it
/// asked (a shell's `tock send`): `y` would have canceled them unseen.
#[tokio::test(start_paused = true)]
async fn delete_asks_again_when_more_came_since_it_asked() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    let conv = ui.conv();
    ui.say("/later 1h first");
    ui.settle().await;
    ui.say("/delete");
    assert!(
        ui.screen(100, 30)
            .contains("Its 1 pending message(s) will be canceled"),
        "{}",
        ui.screen(100, 30)
    );
    let mut item = tock::store::NewItem::new(conv, tock::store::Kind::Message, "added meanwhile");
    item.due_at = Some(ui.app.model.now_ms() + 7_200_000);
    ui.h.engine.submit(item).unwrap();
    ui.settle().await;
    ui.ch('y');
    ui.pump();
    assert_eq!(ui.conv(), conv, "not deleted on the first y");
    let s = ui.screen(100, 30);
    assert!(
        s.contains("Changed meanwhile") && s.contains("Its 2 pending message(s)"),
        "{s}"
    );
    ui.ch('y');
    ui.pump();
    assert!(ui.app.model.convs.iter().all(|c| c.id != conv));
}

/// Another tock changes the draft while this one is idle: this composer
/// takes it (it kept its older text, sent that, and its next save brought
/// back what the other had sent). Text typed here and not saved yet is
/// never replaced.
#[tokio::test(start_paused = true)]
async fn an_idle_composer_takes_the_draft_another_tock_saved() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    let conv = ui.conv();
    let save_elsewhere = |ui: &Ui, text: &str| {
        let d = tock::store::Draft {
            text: text.into(),
            ..Default::default()
        };
        ui.store()
            .save_draft(conv, &d, ui.app.model.now_ms())
            .unwrap();
    };
    save_elsewhere(&ui, "one\n\ntwo, edited there");
    ui.app.on_engine(Event::External);
    assert_eq!(ui.app.composer_text(), "one\n\ntwo, edited there");
    // Typed here, not saved yet: kept; the save merges.
    ui.typ(" and here");
    save_elsewhere(&ui, "one\n\ntwo, edited there again");
    ui.app.on_engine(Event::External);
    assert_eq!(ui.app.composer_text(), "one\n\ntwo, edited there and here");
    tokio::time::advance(std::time::Duration::from_millis(400)).await;
    ui.app.on_tick();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    ui.pump();
    // Sent from the other tock (its draft cleared there): cleared here too.
    save_elsewhere(&ui, "");
    ui.app.on_engine(Event::External);
    assert_eq!(ui.app.composer_text(), "");
}

/// Two tocks typing a draft in one conversation: the one that saves last
/// merges the other's text in rather than saving over it (the other's was
/// lost), and shows both.
#[tokio::test(start_paused = true)]
async fn a_draft_saved_over_another_tocks_keeps_both_texts() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    let conv = ui.conv();
    // Another tock saves its draft here after this one loaded (an empty) one.
    let theirs = tock::store::Draft {
        text: "typed in the other tock".into(),
        ..Default::default()
    };
    ui.store()
        .save_draft(conv, &theirs, ui.app.model.now_ms())
        .unwrap();
    ui.typ("typed here");
    tokio::time::advance(std::time::Duration::from_millis(400)).await;
    ui.app.on_tick();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    ui.pump();
    let stored = ui.store().draft(conv).unwrap().text;
    assert_eq!(stored, "typed here\n\ntyped in the other tock");
    assert_eq!(ui.app.composer_text(), stored, "both shown here");
    assert!(ui.status_line().contains("another tock changed this draft"));
    // Typing on saves over the merge as usual (nothing doubled).
    ui.typ(" and more");
    tokio::time::advance(std::time::Duration::from_millis(400)).await;
    ui.app.on_tick();
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    ui.pump();
    assert_eq!(
        ui.store().draft(conv).unwrap().text,
        "typed here\n\ntyped in the other tock and more"
    );
}

/// `/at tomorrow evening 7pm call mom` is Tuesday 19:00 with the text
/// "call mom" (it was 09:00 with the text "evening 7pm call mom"); the
/// preview names the time and the text it will send.
#[tokio::test(start_paused = true)]
async fn at_a_part_of_the_day_with_a_clock_time_is_that_time_and_the_rest_is_the_text() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    // T0 is Mon 30 Nov 2026 00:53:20 UTC (TZ=UTC).
    ui.typ("/at tomorrow evening 7pm call mom");
    let s = ui.screen(120, 40);
    assert!(
        s.contains("⏰ sends Tue 1 Dec 19:00, in 1d 18h · \"call mom\""),
        "{s}"
    );
    // In a narrow window the text is cut to what is left.
    ui.app.sidebar_pref = Some(false);
    let s = ui.screen(60, 15);
    assert!(
        s.contains("╭ ⏰ sends Tue 1 Dec 19:00, in 1d 18h · \"call mom\" ─"),
        "{s}"
    );
    ui.typ(" about the weekend");
    let s = ui.screen(60, 15);
    assert!(
        s.contains("╭ ⏰ sends Tue 1 Dec 19:00, in 1d 18h · \"call mom about…\" ─╮"),
        "{s}"
    );
    ui.erase(" about the weekend".len());
    ui.app.sidebar_pref = Some(true);
    ui.enter();
    let rows = ui.rows();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].text, "call mom");
    let due = chrono::DateTime::from_timestamp_millis(rows[0].due_at.unwrap()).unwrap();
    assert_eq!(due.format("%a %d %b %H:%M").to_string(), "Tue 01 Dec 19:00");
    assert_eq!(ui.app.composer_text(), "");
    // `/every` reads parts of the day too.
    ui.say("/every sunday night check backups");
    let series = ui.h.engine.list_series(false).unwrap();
    assert_eq!(
        (
            series[0].description.as_str(),
            series[0].series.text.as_str()
        ),
        ("every Sunday at 21:00", "check backups")
    );
}

/// Text that starts with more time (`/at 9am evening call`, `/every
/// weekday at 9am and 5pm x`) is refused with a one-line question and
/// the composer keeps it, as `fri 5 apples` is; `--` sends it as text.
#[tokio::test(start_paused = true)]
async fn at_text_that_starts_with_more_time_is_asked_about_and_kept() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.typ("/at 9am evening call");
    let s = ui.screen(120, 40);
    assert!(
        s.contains("✗ \"evening\" after \"9am\" looks like more of the time"),
        "{s}"
    );
    ui.enter();
    assert!(ui.rows().is_empty(), "{:?}", ui.rows());
    assert_eq!(ui.app.composer_text(), "/at 9am evening call");
    let (msg, is_err) = ui.app.status_pair();
    assert!(is_err, "{msg}");
    assert_eq!(
        msg,
        "\"evening\" after \"9am\" looks like more of the time — say it all before the text, or write \"9am -- evening …\" to send it as text"
    );
    ui.app.set_composer("");
    ui.say("/every weekday at 9am and 5pm x");
    assert!(ui.h.engine.list_series(false).unwrap().is_empty());
    assert_eq!(ui.app.composer_text(), "/every weekday at 9am and 5pm x");
    let (msg, is_err) = ui.app.status_pair();
    assert!(is_err, "{msg}");
    assert_eq!(
        msg,
        "\"and 5pm\" after \"weekday at 9am\": one time per rule — make two, e.g. /every weekday at 9am … and /every weekday 5pm …"
    );
    ui.app.set_composer("");
    ui.say("/at 9am -- evening call");
    let rows = ui.rows();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].text, "evening call");
}
