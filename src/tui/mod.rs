//! The interactive front end: one event loop merging terminal input, engine
//! events and timers; state changes only in `App` (a coordinator of the
//! views in `views/`, the composer, the strip and the sidebar); `view::draw`
//! reads the app and returns the layout it used; frames are requested and
//! coalesced (at most ~60/s), none when nothing changed.

pub mod app;
mod backend;
pub mod chat;
mod command_menu;
pub mod commands;
pub mod composer;
mod engine_events;
pub mod export;
pub mod frames;
pub mod highlight;
mod intents;
pub mod keymap;
mod main_keys;
pub mod markdown;
pub mod model;
mod put_line;
pub mod reveal;
pub mod scheduled;
mod scroll_hold;
mod sending;
pub mod shown_zone;
pub mod terminal;
pub mod text;
pub mod theme;
pub mod time_picker;
mod undo;
mod unsent;
mod versions;
pub mod view;
pub mod views;
pub mod writer;
mod writes;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use ratatui::crossterm::event::EventStream;
use tokio::sync::broadcast;
use tokio::time::Instant;

use crate::config::ConfigSource;
use crate::engine::{Engine, Event, Options, SystemClock};
use crate::store::Store;

/// The shortest gap before a frame (about 60 per second), except one that
/// shows input: that is drawn at once.
const FRAME: Duration = Duration::from_millis(16);

/// Telling pasted line breaks from Enter where the terminal does not mark
/// pastes (no bracketed paste): a burst of keys is a paste.
mod paste {
    use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
    use std::time::Duration;

    /// Keys that arrive closer than this came in one read of the terminal
    /// (its parser hands them over microseconds apart); keys typed, even
    /// by a script, come milliseconds apart.
    pub const SAME_READ: Duration = Duration::from_millis(1);
    /// How long an Enter inside a burst waits for the rest of it (a burst
    /// split between two reads).
    pub const GAP: Duration = Duration::from_millis(3);

    pub fn is_plain_enter(ev: &std::io::Result<Event>) -> bool {
        matches!(ev, Ok(Event::Key(KeyEvent { code: KeyCode::Enter, modifiers, kind: KeyEventKind::Press, .. })) if modifiers.is_empty())
    }

    /// Typing that goes on: a character, a line break or a paste.
    pub fn continues_text(ev: &std::io::Result<Event>) -> bool {
        match ev {
            Ok(Event::Key(k)) if k.kind == KeyEventKind::Press => match k.code {
                KeyCode::Char(_) => !k
                    .modifiers
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT),
                KeyCode::Enter | KeyCode::Tab => k.modifiers.is_empty(),
                _ => false,
            },
            Ok(Event::Paste(_)) => true,
            _ => false,
        }
    }

    /// A line break where it is typed (the composer, an editor).
    pub fn line_break() -> Event {
        Event::Paste("\n".to_string())
    }
}
/// How often the engine hands this screen a reply's text. Each hand-over
/// is a wake-up of the engine's worker and of this thread: at two and a
/// half a second instead of ten (with this thread's timers its own), a
/// reply at 30 tokens/s cost the process 86–91 ms of CPU per 30 s instead
/// of 105–110; at 600 ms instead of 400, a 4,000-token reply at 30 tokens/s
/// 220–230 ms instead of 240–270. `reveal` spreads each over the frames
/// until the next (five to ten a second either way), so what a reader sees
/// moves as often, a little further behind the network.
const SHOWN_TEXT_EVERY: Duration = Duration::from_millis(600);

/// Run the TUI until the user quits or a signal arrives.
pub fn run(store: Store, config: Arc<ConfigSource>) -> anyhow::Result<()> {
    // This thread draws; the engine (the scheduler, streams, MCP servers)
    // runs on its own runtime's one worker.
    let engine_rt = crate::engine::runtime()?;
    // The drawing thread keeps its own timers and I/O: on the engine's
    // runtime each of its timers (a frame's, a share of streamed text's)
    // woke the worker first, which then woke this thread.
    let ui_rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let on_engine = engine_rt.handle().clone();
    ui_rt.block_on(async move {
        // What the engine spawns (the scheduler, turns, the writer's work)
        // runs on its worker, not on this thread.
        let (engine, mut app) = {
            let _engine = on_engine.enter();
            let options = Options {
                shown_text_every: SHOWN_TEXT_EVERY,
                ..Options::default()
            };
            let engine = Engine::new(store, config, Arc::new(SystemClock), options);
            let app = app::App::new(engine.clone())?;
            (engine, app)
        };
        // Shown in the status bar: a warning printed to stderr would vanish behind the UI.
        let cfg = engine.config();
        if let Some(w) = cfg.path().and_then(|p| cfg.get().permission_warning(p)) {
            app.error(w);
        }
        if let Some(e) = cfg
            .error()
            .or_else(|| cfg.missing_named_file())
            .or_else(|| cfg.get().problems().into_iter().next())
        {
            app.error(e);
        }
        // Subscribed before the engine starts, so its first events are not missed.
        let events = engine.subscribe();
        // Code in a language not compiled yet is drawn plain at first and
        // highlighted when a background thread has compiled it (no stalled frame).
        let (highlight_tx, highlight_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
        highlight::defer_on_this_thread(move || {
            let _ = highlight_tx.send(());
        });
        // Signals are caught before the terminal is taken over, so a SIGTERM
        // or SIGHUP at any moment restores it (the default action would not).
        use tokio::signal::unix::{SignalKind, signal};
        let signals = (
            signal(SignalKind::terminate())?,
            signal(SignalKind::hangup())?,
        );
        // `theme = auto`: asked before the UI reads the terminal's input, or
        // the answer would arrive as keys.
        if app.theme.wants_detection() {
            terminal::keep_type_ahead();
            app.theme.detected = theme::detect_background(theme::DETECT_TIMEOUT);
            // Bad colours were reported when the app was made.
            let _ = app.apply_theme();
        }
        let mut term = terminal::enter(app.mouse)?;
        // The first frame goes out before the engine (lease, recovery, the
        // database watcher) starts competing with it for the CPU: about 4 ms
        // sooner on an empty database (bench/run.sh).
        let mut layout = app::FrameLayout::default();
        let result = match term.draw(|f| layout = view::draw(f, &app)) {
            Ok(_) => {
                app.take_layout(layout);
                {
                    let _engine = on_engine.enter();
                    engine.start();
                }
                event_loop(&mut term, &mut app, events, highlight_rx, signals).await
            }
            Err(e) => Err(e.into()),
        };
        // Cleared by Ctrl+C on the way out (Ctrl+C, Ctrl+C, Ctrl+C): kept.
        let kept_cleared_draft = app.cleared_on_the_way_out && app.composer.take_back(app.now());
        app.save_draft();
        // What the writer still holds (a draft, a send waiting for another
        // process's lock) is waited for: the store gives up after its busy timeout.
        app.wait_writes(Duration::from_secs(6));
        terminal::restore();
        // Titles set by us are reset for the shell.
        terminal::write_raw("\x1b]0;\x07");
        app.replies_cut_at_exit = engine.replies_streaming_here();
        app.calls_cut_at_exit = engine.calls_in_flight();
        engine.shutdown(Duration::from_secs(1)).await;
        app.model.reload_summaries();
        if let Some(line) = app.exit_line() {
            eprintln!("{line}");
        }
        if kept_cleared_draft {
            eprintln!("tock: what Ctrl+C cleared as you quit is kept as the draft");
        }
        // A draft the database would not take is printed, so it is not lost.
        for line in app.unsaved_drafts_lines() {
            eprintln!("{line}");
        }
        result
    })
}

async fn event_loop(
    term: &mut terminal::Term,
    app: &mut app::App,
    mut events: broadcast::Receiver<Event>,
    mut highlight_ready: tokio::sync::mpsc::UnboundedReceiver<()>,
    (mut sigterm, mut sighup): (tokio::signal::unix::Signal, tokio::signal::unix::Signal),
) -> anyhow::Result<()> {
    let (mut input, mut input_thread) = forward_input()?;
    // When the last input arrived, and whether it was text.
    let mut last_input: Option<(Instant, bool)> = None;
    let mut writes_done = app.model.writer.take_wake();
    let mut dirty = true;
    // Something other than streamed text changed (a key, a tick, a resize).
    let mut urgent = true;
    // Input is waiting to be shown: drawn at once, not after the gap that
    // paces the other frames (a key typed just after a stream's frame would
    // wait up to 16 ms for it).
    let mut typed = false;
    let mut last_draw = Instant::now() - FRAME;
    let mut last_title: Option<String> = None;
    let mut frames = frames::Frames::new();
    // When the next share of held streamed text is shown. A kernel timer
    // where there is one: the runtime's timer wheel wakes its thread twice
    // for a 100 ms timer (it moves it to a finer level first).
    let mut reveal_at: Option<Instant> = None;
    let reveal_timer = crate::llm::quiet::QuietTimer::new();
    let next_reveal = |reveal: &reveal::Reveal, timer: &Option<crate::llm::quiet::QuietTimer>| {
        reveal.is_holding().then(|| {
            let gap = reveal.gap();
            if let Some(t) = timer {
                t.arm(gap);
            }
            Instant::now() + gap
        })
    };
    loop {
        if dirty && (typed || last_draw.elapsed() >= FRAME) {
            flush_output(app, &mut last_title);
            app.hold_scroll();
            let jumped = app.scroll.top_of.is_some();
            let layout = frames.draw(term, app, !urgent)?;
            app.take_layout(layout);
            last_draw = Instant::now();
            // A jump that landed at the foot after all was drawn with the
            // "scrolled up" label: draw it again without.
            dirty = (jumped && app.scroll.from_bottom.is_none()) | app.take_draw_again();
            urgent = false;
            typed = false;
        }
        let frame_at = last_draw + FRAME;
        let tick = app.next_tick_at().map(|at| {
            let ms = (at - app.model.now_ms()).max(1) as u64;
            Instant::now() + Duration::from_millis(ms)
        });
        // While only streamed text is waiting to be drawn, engine events are
        // left in the channel until the frame is due and then taken all at
        // once (the text of several replies streaming at once makes one
        // frame). Keys still wake it at once.
        let hold_events = dirty && !urgent && Instant::now() < frame_at;
        tokio::select! {
            ev = input.recv() => {
                let Some((mut at, mut ev)) = ev else { break };
                // What else has arrived (a burst of keys, a held key, the
                // mouse wheel) makes the same frame; a key that hands the
                // terminal over (quit, suspend, the editor) ends the burst,
                // so what follows it waits for the terminal's return.
                loop {
                    // Text pasted where the terminal does not mark pastes
                    // arrives as keys, its line breaks as Enter: an Enter
                    // read in one go with text before and after it is a
                    // line break, not one message sent per line. (Read in
                    // one go, not merely waiting together here: keys typed
                    // while a frame was drawn wait together too.)
                    let mut behind = None;
                    if paste::is_plain_enter(&ev)
                        && last_input.is_some_and(|(t, text)| text && at.duration_since(t) < paste::SAME_READ)
                    {
                        behind = match input.try_recv() {
                            Ok(next) => Some(next),
                            Err(_) => tokio::time::timeout(paste::GAP, input.recv()).await.ok().flatten(),
                        };
                        if behind.as_ref().is_some_and(|(t, next)| {
                            paste::continues_text(next) && t.duration_since(at) < paste::SAME_READ
                        }) {
                            ev = Ok(paste::line_break());
                        }
                    }
                    last_input = Some((at, paste::continues_text(&ev)));
                    match ev {
                        Ok(ev) => {
                            let mut resized = false;
                            if let ratatui::crossterm::event::Event::Resize(width, height) = ev {
                                terminal::resize(term, width, height)?;
                                frames.forget();
                                resized = true;
                            }
                            let shows = app.on_terminal(ev) || resized;
                            dirty |= shows;
                            urgent |= shows;
                            typed |= shows;
                        }
                        Err(e) => tracing::warn!("terminal input: {e}"),
                    }
                    if app.quit || app.suspend || app.editor_request {
                        // What was taken to look behind an Enter is not lost.
                        if let Some((_, Ok(next))) = behind
                            && !app.quit
                        {
                            app.on_terminal(next);
                        }
                        break;
                    }
                    match behind.map_or_else(|| input.try_recv().ok(), Some) {
                        Some((next_at, next)) => (at, ev) = (next_at, next),
                        None => break,
                    }
                }
            }
            ev = events.recv(), if !hold_events => {
                let mut only_text = matches!(ev, Ok(Event::Delta { .. }));
                let mut shows = match ev {
                    Ok(ev) => app.on_engine(ev),
                    // Fell behind a burst of events: reload everything from the database.
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => app.on_engine(crate::engine::Event::External),
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                };
                // Drain what else is waiting, so a burst of tokens costs one frame.
                let mut handed = only_text;
                while let Ok(ev) = events.try_recv() {
                    let delta = matches!(ev, Event::Delta { .. });
                    only_text &= delta;
                    handed |= delta;
                    shows |= app.on_engine(ev);
                }
                // The rest of what was handed over is shown frame by frame
                // from now until the next hand-over.
                if handed {
                    reveal_at = next_reveal(&app.reveal, &reveal_timer);
                }
                // The text of a reply in another conversation draws nothing.
                dirty |= shows;
                urgent |= shows && !only_text;
            }
            _ = tokio::time::sleep_until(frame_at), if dirty => {}
            _ = async {
                match (&reveal_timer, reveal_at) {
                    (Some(t), _) => t.fired().await,
                    (None, Some(at)) => tokio::time::sleep_until(at).await,
                    (None, None) => std::future::pending().await,
                }
            }, if reveal_at.is_some() => {
                dirty |= app.reveal_step();
                reveal_at = next_reveal(&app.reveal, &reveal_timer);
            }
            _ = async { if let Some(t) = tick { tokio::time::sleep_until(t).await } }, if tick.is_some() => {
                app.on_tick();
                dirty = true;
                urgent = true;
            }
            Some(()) = async { match writes_done.as_mut() { Some(rx) => rx.recv().await, None => std::future::pending().await } } => {
                // A write that outlasted its key finished: apply what follows it.
                while writes_done.as_mut().is_some_and(|rx| rx.try_recv().is_ok()) {}
                app.collect_writes();
                dirty = true;
                urgent = true;
            }
            Some(()) = highlight_ready.recv() => {
                // A language finished compiling: redraw the code shown plain so far.
                while highlight_ready.try_recv().is_ok() {}
                dirty = true;
            }
            _ = sigterm.recv() => break,
            _ = sighup.recv() => break,
        }
        if app.quit {
            break;
        }
        if app.editor_request {
            app.editor_request = false;
            // The editor reads the terminal now, key by key: reading it here
            // too took most of what was typed into it.
            drop(input_thread);
            let edited = terminal::run_editor(term, &app.composer_text());
            (input, input_thread) = forward_input()?;
            match edited {
                Ok(Some(text)) => {
                    app.set_composer(&text);
                    app.save_draft();
                    app.info_until_key("the draft is what you saved in the editor");
                }
                Ok(None) => {
                    app.error("no editor: set $VISUAL or $EDITOR (vi is not on $PATH either)")
                }
                Err(e) => app.error(format!("{e:#}")),
            }
            frames.forget();
            dirty = true;
            urgent = true;
        }
        if app.redraw {
            app.redraw = false;
            // What the terminal shows may not be what was drawn (a wide
            // character the terminal measured otherwise, another program's
            // output): clear it, and draw every cell again.
            terminal::redraw(term)?;
            frames.forget();
            dirty = true;
            urgent = true;
        }
        if app.suspend {
            app.suspend = false;
            // Stopped, it sends nothing: a tock standing by takes over now.
            app.engine().step_aside();
            terminal::suspend(term, app.suspend_line())?;
            app.engine().wake();
            frames.forget();
            dirty = true;
            urgent = true;
        }
    }
    flush_output(app, &mut last_title);
    Ok(())
}

/// A terminal event and when the input thread received it.
type TimedInput = (Instant, std::io::Result<ratatui::crossterm::event::Event>);

/// Terminal input, read on a thread of its own and handed over through a
/// channel. Not by a task on the engine's worker: an engine call that waits
/// for another process's write lock (up to the store's busy timeout, and
/// again while the lock is held) held up every key typed meanwhile, and
/// the screen showed them seconds later. Not by polling crossterm's
/// `EventStream` from the loop's `select!` either: that would poll it on
/// every wake-up (each frame, each engine event), and each such poll spins
/// on the input reader's lock (about seven `sched_yield`s) while its
/// waiting thread holds it.
fn forward_input() -> std::io::Result<(
    tokio::sync::mpsc::UnboundedReceiver<TimedInput>,
    InputThread,
)> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let (stop, mut stopped) = futures::channel::oneshot::channel::<()>();
    // A thread that cannot be made is an error: a TUI that reads no keys
    // could not even be quit.
    let thread = std::thread::Builder::new()
        .name("tock-input".into())
        .spawn(move || {
            futures::executor::block_on(async move {
                let mut input = EventStream::new();
                // Dropping the stream (on the way out) ends crossterm's
                // reading thread too.
                while let futures::future::Either::Left((Some(ev), _)) =
                    futures::future::select(input.next(), &mut stopped).await
                {
                    if tx.send((Instant::now(), ev)).is_err() {
                        break;
                    }
                }
            })
        })?;
    Ok((
        rx,
        InputThread {
            stop: Some(stop),
            thread: Some(thread),
        },
    ))
}

/// The thread reading terminal input; stopped and waited for when dropped,
/// so that it does not take what is typed after tock has given the
/// terminal back.
struct InputThread {
    stop: Option<futures::channel::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for InputThread {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Write side-effect output (bell, notification escapes, OSC 52, title, mouse mode) between frames.
fn flush_output(app: &mut app::App, last_title: &mut Option<String>) {
    if let Some(on) = app.output.mouse.take() {
        terminal::set_mouse(on);
    }
    for raw in app.output.raw.drain(..) {
        terminal::write_raw(&raw);
    }
    if let Some(t) = app.output.title.take()
        && last_title.as_ref() != Some(&t)
    {
        let clean: String = crate::sanitize::sanitize_line(&t)
            .chars()
            .filter(|c| !c.is_control())
            .collect();
        terminal::write_raw(&format!("\x1b]0;{clean}\x07"));
        *last_title = Some(t);
    }
}
