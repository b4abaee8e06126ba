//! Frame cost of a long conversation (the target: a frame under 5 ms for a
//! 5,000-message conversation) and of one streamed token.
//!
//! `cargo bench --bench render` (add `-- --quick` for a fast pass).
//!
//! - `chat_5000/warm`: `chat::draw` of the newest rows when the messages
//!   that reach the window are already rendered (every frame while reading
//!   or typing). `warm_scrolled_2000_rows` and `warm_top`: the same, scrolled
//!   up a few pages and to the very top (every message then reaches it).
//! - `chat_5000/cold`: a fresh cache (`Entry::new` for every message, syntect
//!   results forgotten): the first frame after opening the conversation.
//! - `view_5000/warm`: the whole screen (`view::draw`: sidebar, chat, strip,
//!   composer, status bar) of an `App` on a 5,000-message conversation.
//! - `key_frame/5000_messages`: a key typed into the composer, then the
//!   whole screen drawn, in the 5,000-message conversation.
//!   `key_frame/streaming_1000_pending`: the same while the conversation's
//!   last reply is streaming (an open code block) and 1,000 items wait in its
//!   outbox (half queued behind the reply, half scheduled), shown in the
//!   inline queue and counted in the strip and the status bar.
//! - `stream_token/*`: one token appended to a streaming reply of 8–12 KB at
//!   the end of the 5,000 messages, then a frame (chat alone, and the whole
//!   screen through `App::on_engine(Event::Delta)`).
//! - `stream_reply/chat_only_120x40`: what a reply streamed at a model's
//!   pace costs per frame as the TUI draws it: ten tokens of prose, lists
//!   and code handed on, then the chat-only frame (`Frames`) written through
//!   the crossterm backend (its bytes go nowhere) at 120×40, the screen
//!   scrolling as the reply grows. Its turn is real (a model that never
//!   answers keeps the conversation busy), so the frames are the ones a
//!   streaming reply gets.
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use futures::future::BoxFuture;
use ratatui::backend::{CrosstermBackend, TestBackend};
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};
use tock::config::{Config, ConfigSource};
use tock::engine::{Engine, Event, Options, SystemClock};
use tock::llm::{ChatRequest, EventStream, LlmError, Provider};
use tock::store::{Message, MessageStatus, NewItem, Role, Store};
use tock::tui::app::App;
use tock::tui::chat::{self, Entry, Scroll, Tail};
use tock::tui::frames::Frames;
use tock::tui::highlight::clear_cache;
use tock::tui::view;

const MESSAGES: usize = 5_000;
const W: u16 = 100;
const H: u16 = 30;

const LANGS: [&str; 4] = ["rust", "python", "bash", "json"];

/// Message `i` of a synthetic conversation: short user questions, assistant
/// replies of about 1 KB with prose, a list and (every other reply) a code
/// block whose text differs per message (so the highlight cache cannot hit).
fn content(i: usize) -> (Role, String) {
    if i.is_multiple_of(2) {
        return (
            Role::User,
            format!(
                "Question {i}: how do I read a file line by line and count the non-blank lines?"
            ),
        );
    }
    let mut s = format!(
        "## Answer {i}\n\nUse a **buffered reader**: it reads the file in chunks and hands out \
         one line at a time, so memory stays flat however large the file is. See `BufRead::lines` \
         and the [docs](https://doc.rust-lang.org/std/io/trait.BufRead.html).\n\n\
         1. open the file,\n2. wrap it in a `BufReader`,\n3. count the lines that are not blank.\n\n"
    );
    if i % 4 == 1 {
        let lang = LANGS[(i / 4) % LANGS.len()];
        let code = match lang {
            "rust" => format!(
                "use std::io::{{self, BufRead}};\n\nfn count_{i}(path: &str) -> io::Result<usize> {{\n    \
                 let file = std::fs::File::open(path)?;\n    let mut n = 0;\n    \
                 for line in io::BufReader::new(file).lines() {{\n        \
                 if !line?.trim().is_empty() {{ n += {i}; }}\n    }}\n    Ok(n)\n}}\n"
            ),
            "python" => format!(
                "def count_{i}(path):\n    n = 0\n    with open(path) as f:\n        \
                 for line in f:\n            if line.strip():\n                n += {i}\n    return n\n"
            ),
            "bash" => format!("grep -cv '^\\s*$' \"$FILE_{i}\"  # {i}\nwc -l < \"$FILE_{i}\"\n"),
            _ => format!("{{\"id\": {i}, \"lines\": [1, 2, 3], \"name\": \"file-{i}.txt\"}}\n"),
        };
        s.push_str(&format!("```{lang}\n{code}```\n\n"));
    }
    s.push_str("That should cover most cases; ask if the file is not UTF-8.\n");
    (Role::Assistant, s)
}

fn message(i: usize) -> Message {
    let (role, content) = content(i);
    Message {
        id: i as i64 + 1,
        conversation_id: 1,
        role,
        content,
        status: MessageStatus::Complete,
        model: (role == Role::Assistant).then(|| "gpt-4o-mini".to_string()),
        outbox_id: None,
        parts_json: None,
        tool_calls_json: None,
        tool_call_id: None,
        error: None,
        created_at: 1_796_000_000_000 + i as i64 * 1000,
    }
}

fn entries() -> Vec<Entry> {
    (0..MESSAGES).map(|i| Entry::new(message(i))).collect()
}

/// About 8 KB of a reply in progress: prose and a code block still open.
fn streaming_base() -> String {
    let mut s = String::new();
    let mut i = 0;
    while s.len() < 8 * 1024 {
        s.push_str(&content(i * 2 + 1).1);
        i += 1;
    }
    s.push_str("```rust\nfn main() {\n");
    s
}

/// The `n`th token of the stream: about 4 bytes, a newline now and then.
fn token(n: usize) -> &'static str {
    if n % 16 == 15 { "x;\n" } else { " let" }
}

/// Keep the streaming reply between 8 and 12 KB however long the bench runs;
/// true when it was cut back. A stream never shrinks, and a reply that did
/// is rendered (and its open code block highlighted) again from its start,
/// so the frame after a cut is not timed: timed, that one frame in a
/// thousand made the mean swing between 0.15 and 0.45 ms from run to run.
fn trim_reply(content: &mut String, base_len: usize) -> bool {
    let cut = content.len() > base_len + 4 * 1024;
    if cut {
        content.truncate(base_len);
    }
    cut
}

fn bench_chat(c: &mut Criterion) {
    let area = Rect::new(0, 0, W, H);
    let mut buf = Buffer::empty(area);
    let tail = Tail::new();

    let mut g = c.benchmark_group("chat_5000");
    let warm = entries();
    chat::draw(&warm, &tail, Scroll::default(), area, &mut buf);
    g.bench_function("warm", |b| {
        b.iter(|| {
            buf.reset();
            black_box(chat::draw(&warm, &tail, Scroll::default(), area, &mut buf))
        })
    });
    // Scrolled a few pages up (2,000 rows), and to the very top.
    for (name, rows) in [("warm_scrolled_2000_rows", 2_000), ("warm_top", usize::MAX)] {
        let scroll = Scroll {
            from_bottom: Some(rows),
            ..Scroll::default()
        };
        g.bench_function(name, |b| {
            b.iter(|| {
                buf.reset();
                black_box(chat::draw(&warm, &tail, scroll, area, &mut buf))
            })
        });
    }
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    g.bench_function("cold", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let fresh = entries();
                clear_cache();
                let t = Instant::now();
                chat::draw(&fresh, &tail, Scroll::default(), area, &mut buf);
                total += t.elapsed();
                drop(black_box(fresh));
            }
            total
        })
    });
    g.finish();

    let mut g = c.benchmark_group("stream_token");
    let mut es = entries();
    let mut last = message(MESSAGES);
    last.role = Role::Assistant;
    last.status = MessageStatus::Streaming;
    last.content = streaming_base();
    let base_len = last.content.len();
    es.push(Entry::new(last));
    chat::draw(&es, &tail, Scroll::default(), area, &mut buf);
    let mut n = 0;
    g.bench_function("chat", |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                n += 1;
                let e = es.last_mut().expect("entries");
                let cut = trim_reply(&mut e.msg.content, base_len);
                e.msg.content.push_str(token(n));
                buf.reset();
                let start = Instant::now();
                black_box(chat::draw(&es, &tail, Scroll::default(), area, &mut buf));
                if !cut {
                    timed += start.elapsed();
                }
            }
            timed
        })
    });
    g.finish();
}

/// A database holding one conversation of `MESSAGES` messages (the last one
/// streaming when `streaming`; bulk-inserted with rusqlite), and an `App`
/// opened on it. Returns the app, the conversation id and the last message id.
fn app(dir: &Path, streaming: bool, pending: usize) -> (App, i64, i64) {
    let path = dir.join(format!("render-{streaming}-{pending}.db"));
    drop(Store::open(&path).expect("store"));
    let mut conn = rusqlite::Connection::open(&path).expect("open");
    let tx = conn.transaction().expect("tx");
    let t0 = 1_796_000_000_000i64;
    tx.execute(
        "INSERT INTO conversations (id, title, created_at, updated_at) VALUES (1, 'bench', ?1, ?1)",
        [t0],
    )
    .expect("conversation");
    {
        let mut st = tx
            .prepare(
                "INSERT INTO messages (conversation_id, role, content, status, model, created_at)
                 VALUES (1, ?1, ?2, ?3, ?4, ?5)",
            )
            .expect("prepare");
        let n = MESSAGES + usize::from(streaming);
        for i in 0..n {
            let (role, content, status) = if i == MESSAGES {
                (Role::Assistant, streaming_base(), MessageStatus::Streaming)
            } else {
                let (role, content) = content(i);
                (role, content, MessageStatus::Complete)
            };
            st.execute(rusqlite::params![
                role.as_str(),
                content,
                status.as_str(),
                (role == Role::Assistant).then_some("gpt-4o-mini"),
                t0 + i as i64 * 1000
            ])
            .expect("message");
        }
    }
    tx.commit().expect("commit");
    let last: i64 = conn
        .query_row("SELECT max(id) FROM messages", [], |r| r.get(0))
        .expect("max id");
    drop(conn);
    let store = Store::open(&path).expect("store");
    // Waiting items: queued (sent when the model is free) and scheduled.
    for i in 0..pending {
        let due = (i % 2 == 1).then_some(t0 + 86_400_000 + i as i64 * 60_000);
        store
            .enqueue(&NewItem::message(1, format!("follow-up {i}"), due), t0)
            .expect("enqueue");
    }
    let config = Arc::new(ConfigSource::from_config(Config::default()));
    let engine = Engine::new(
        store,
        config,
        Arc::new(SystemClock),
        Options {
            watch_db: false,
            ..Options::default()
        },
    );
    (App::new(engine).expect("app"), 1, last)
}

/// Types one character into the composer (emptied every 200 keys, so the
/// draft stays short), then draws the whole screen. Inlined, as the
/// closures it replaced were: called, it measured 10 µs slower.
#[inline(always)]
fn key_then_frame(a: &mut App, term: &mut Terminal<TestBackend>, typed: &mut usize) {
    *typed += 1;
    if typed.is_multiple_of(200) {
        a.set_composer("");
    }
    a.on_key(KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE));
    let mut f = term.get_frame();
    view::draw(&mut f, a);
}

fn bench_view(c: &mut Criterion) {
    let mut term = Terminal::new(TestBackend::new(W + 28, H + 4)).expect("terminal");

    let dir = tempfile::tempdir().expect("tempdir");
    let (a, _, _) = app(dir.path(), false, 0);
    term.draw(|f| {
        view::draw(f, &a);
    })
    .expect("draw");
    let mut g = c.benchmark_group("view_5000");
    g.bench_function("warm", |b| {
        b.iter(|| {
            let mut f = term.get_frame();
            view::draw(&mut f, &a);
        })
    });
    g.finish();

    // A keypress in the composer, then the frame that shows it.
    let mut a = a;
    let mut g = c.benchmark_group("key_frame");
    let mut typed = 0usize;
    g.bench_function("5000_messages", |b| {
        b.iter(|| key_then_frame(&mut a, &mut term, &mut typed))
    });
    let (mut busy, _, _) = app(dir.path(), true, 1_000);
    assert_eq!(
        busy.model.items.len(),
        1_000,
        "the waiting items are loaded"
    );
    term.draw(|f| {
        view::draw(f, &busy);
    })
    .expect("draw");
    g.bench_function("streaming_1000_pending", |b| {
        b.iter(|| key_then_frame(&mut busy, &mut term, &mut typed))
    });
    g.finish();

    let (mut a, conv, msg) = app(dir.path(), true, 0);
    let base_len = a
        .model
        .entries
        .last()
        .map(|e| e.msg.content.len())
        .unwrap_or(0);
    term.draw(|f| {
        view::draw(f, &a);
    })
    .expect("draw");
    let mut g = c.benchmark_group("stream_token");
    let mut n = 0;
    g.bench_function("view", |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                n += 1;
                let mut offset = 0;
                let mut cut = false;
                if let Some(e) = a.model.entries.last_mut() {
                    cut = trim_reply(&mut e.msg.content, base_len);
                    offset = e.msg.content.len();
                }
                let start = Instant::now();
                a.on_engine(Event::Delta {
                    conversation_id: conv,
                    message_id: msg,
                    offset,
                    text: token(n).to_string(),
                });
                while a.reveal_step() {}
                let mut f = term.get_frame();
                view::draw(&mut f, &a);
                if !cut {
                    timed += start.elapsed();
                }
            }
            timed
        })
    });
    g.finish();
}

/// A model that starts a reply and never sends a word: its turn keeps the
/// conversation busy while the bench hands on the reply's text itself.
struct Silent;

impl Provider for Silent {
    fn name(&self) -> &'static str {
        "silent"
    }
    fn start<'a>(&'a self, _req: &'a ChatRequest) -> BoxFuture<'a, Result<EventStream, LlmError>> {
        Box::pin(async { Ok(Box::pin(futures::stream::pending()) as EventStream) })
    }
}

/// A reply as a model streams it, a token (about four bytes) at a time:
/// prose, a list, a code block.
fn reply_token(n: usize) -> &'static str {
    const TOKENS: &[&str] = &[
        " The",
        " reader",
        " hands",
        " out",
        " one",
        " line",
        " at",
        " a",
        " time,",
        " so",
        " memory",
        " stays",
        " flat",
        " however",
        " large",
        " the",
        " file",
        " is;",
        " errors",
        " are",
        " reported",
        " per",
        " line,",
        " which",
        " is",
        " why",
        " the",
        " loop",
        " uses",
        " a",
        " question",
        " mark",
        " inside.",
        "\n\n",
        "- item",
        " one",
        ":",
        " a",
        " short",
        " note\n",
        "- item",
        " two",
        ":",
        " another",
        " note\n\n",
        "```rust\n",
        "fn",
        " count",
        "(path",
        ": &str)",
        " ->",
        " usize",
        " {\n",
        "    let",
        " n",
        " =",
        " 0;\n",
        "    n\n",
        "}\n",
        "```\n\n",
    ];
    TOKENS[n % TOKENS.len()]
}

fn bench_stream_reply(c: &mut Criterion) {
    const TOKENS_PER_FRAME: usize = 10;
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let _entered = rt.enter();
    let dir = tempfile::tempdir().expect("tempdir");
    // The 5,000 messages, reopened with a model that keeps a turn going.
    let (a, conv, _) = app(dir.path(), false, 0);
    let path = a.model.engine.store().path().to_path_buf();
    drop(a);
    let mut cfg = Config::default();
    cfg.turn.stream_timeout_secs = 24 * 3600;
    let config = Arc::new(ConfigSource::from_config(cfg).with_provider(Arc::new(Silent)));
    let engine = Engine::new(
        Store::open(&path).expect("store"),
        config,
        Arc::new(SystemClock),
        Options {
            watch_db: false,
            ..Options::default()
        },
    );
    let _scheduler = engine.start();
    engine.send_text(conv, "stream a reply").expect("send");
    let started = Instant::now();
    while !engine.is_busy(conv)
        || engine.store().messages(conv).map_or(0, |m| m.len()) < MESSAGES + 2
    {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the reply did not start"
        );
        rt.block_on(tokio::time::sleep(Duration::from_millis(5)));
    }
    let mut a = App::new(engine).expect("app");
    a.in_tmux = false;
    let reply = a.model.entries.last().map(|e| e.msg.id).expect("the reply");
    let backend = CrosstermBackend::new(std::io::sink());
    let mut term = Terminal::with_options(
        backend,
        TerminalOptions {
            viewport: Viewport::Fixed(Rect::new(0, 0, 120, 40)),
        },
    )
    .expect("terminal");
    let mut frames = Frames::new();
    let mut n = 0;
    let mut hand_on = |a: &mut App, tokens: usize| {
        for _ in 0..tokens {
            let offset = a.model.entries.last().map_or(0, |e| e.msg.content.len());
            a.on_engine(Event::Delta {
                conversation_id: conv,
                message_id: reply,
                offset,
                text: reply_token(n).to_string(),
            });
            // All of it on screen, not a frame's share.
            while a.reveal_step() {}
            n += 1;
        }
    };
    // A screenful of the reply first, so that every frame scrolls.
    hand_on(&mut a, 1_000);
    let layout = frames.draw(&mut term, &a, false).expect("frame");
    a.take_layout(layout);
    let base_len = a.model.entries.last().map_or(0, |e| e.msg.content.len());
    let mut g = c.benchmark_group("stream_reply");
    g.bench_function("chat_only_120x40", |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                let mut cut = false;
                if let Some(e) = a.model.entries.last_mut() {
                    cut = trim_reply(&mut e.msg.content, base_len);
                }
                let start = Instant::now();
                hand_on(&mut a, TOKENS_PER_FRAME);
                let layout = frames.draw(&mut term, &a, !cut).expect("frame");
                a.take_layout(layout);
                if !cut {
                    timed += start.elapsed();
                }
            }
            timed
        })
    });
    g.finish();
    assert!(
        frames.chat_only > frames.whole,
        "the frames were chat-only ({} of {})",
        frames.chat_only,
        frames.chat_only + frames.whole
    );
}

criterion_group!(benches, bench_chat, bench_view, bench_stream_reply);
criterion_main!(benches);
