//! Fills a tock database for benchmarks (`bench/run.sh`).
//!
//! ```text
//! tock-seed --db PATH [--conversations 1000] [--messages 200000] [--scheduled 10000]
//!           [--outbox-history N] [--due-now N] [--now-ms MS]
//! tock-seed --db PATH --due 100 --due-start-ms 3000 --due-spread-ms 10000
//! ```
//!
//! The first form creates the schema through `Store::open` and bulk-inserts,
//! in one transaction with prepared statements: conversations, messages
//! (alternating user questions and assistant replies of about 1 KB, a
//! quarter of them with a code block), one sent outbox row per user message
//! (the history a real database accumulates) and pending items scheduled 1
//! hour to 30 days ahead. `--outbox-history N` makes the finished outbox
//! history N rows whatever the message count (at least one per user
//! message): the rows beyond those are sent messages older than the history,
//! one in 50 canceled, spread over the conversations, as months of use
//! leave them. `--due-now N` adds N pending items already due (one per
//! conversation in turn), for a dispatch pass that has work. Everything is
//! placed relative to `--now-ms` (default: the current time), so a fixed
//! instant gives the same database every time (benchmarks cache it).
//!
//! The second form adds COUNT items through the `Store` API, each in a new
//! conversation, due at evenly spaced instants from now + START over SPREAD
//! milliseconds; each item's text is `bench-due <due_at ms>` so that a
//! server receiving the request can tell how late it came.
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Parser;
use rusqlite::params;
use tock::store::{Kind, NewItem, Store};

#[derive(Parser)]
#[command(about = "Fill a tock database for benchmarks")]
struct Args {
    /// The database file (created if missing).
    #[arg(long)]
    db: PathBuf,
    #[arg(long, default_value_t = 1_000)]
    conversations: i64,
    #[arg(long, default_value_t = 200_000)]
    messages: i64,
    /// Pending items scheduled 1 h to 30 days ahead.
    #[arg(long, default_value_t = 10_000)]
    scheduled: i64,
    /// Finished (sent or canceled) outbox rows in all, independent of the
    /// message count; default and minimum: one per user message.
    #[arg(long)]
    outbox_history: Option<i64>,
    /// Pending items already due (one per conversation in turn).
    #[arg(long, default_value_t = 0)]
    due_now: i64,
    /// The instant everything is placed relative to (UTC epoch ms; default: now).
    #[arg(long)]
    now_ms: Option<i64>,
    /// Instead of bulk seeding: add this many items due soon, one per new conversation.
    #[arg(long)]
    due: Option<i64>,
    /// When the first `--due` item is due, from now.
    #[arg(long, default_value_t = 3_000)]
    due_start_ms: i64,
    /// Over how long the `--due` items are spread.
    #[arg(long, default_value_t = 10_000)]
    due_spread_ms: i64,
}

const LANGS: [&str; 4] = ["rust", "python", "bash", "json"];

/// Message `i` of a conversation: a short user question, or an assistant
/// reply of about 1 KB (every other one with a code block).
fn content(i: i64) -> (&'static str, String) {
    if i % 2 == 0 {
        return (
            "user",
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
        let lang = LANGS[(i as usize / 4) % LANGS.len()];
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
    ("assistant", s)
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn seed(args: &Args) -> Result<()> {
    let started = Instant::now();
    drop(Store::open(&args.db)?);
    let mut conn = rusqlite::Connection::open(&args.db)?;
    conn.pragma_update(None, "synchronous", "OFF")?;
    // Index pages of a million rows stay in memory while they are built.
    conn.pragma_update(None, "cache_size", -256_000)?;
    // Each insert whose triggers write (the search index, the counts) keeps
    // a statement journal of the pages it changes, a temporary file by
    // default: 40 % of the seeding time was its writes. In memory, the
    // database built is the same.
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    let tx = conn.transaction()?;
    let now = args.now_ms.unwrap_or_else(now_ms);
    let mut history = 0i64;
    let convs = args.conversations.max(1);
    let per_conv = args.messages / convs;
    let hour = 3_600_000;
    {
        let mut conv_st = tx.prepare(
            "INSERT INTO conversations (title, origin, created_at, updated_at) VALUES (?1, 'user', ?2, ?3)",
        )?;
        let mut msg_st = tx.prepare(
            "INSERT INTO messages (conversation_id, role, content, status, model, outbox_id, created_at)
             VALUES (?1, ?2, ?3, 'complete', ?4, ?5, ?6)",
        )?;
        let mut sent_st = tx.prepare(
            "INSERT INTO outbox (conversation_id, kind, text, status, attempts, created_at, updated_at, sent_at)
             VALUES (?1, 'queued', ?2, 'sent', 1, ?3, ?3, ?3)",
        )?;
        for c in 0..convs {
            // Conversation c was active (convs - c) hours ago: the last one is the newest.
            let end = now - (convs - c) * hour;
            let n = per_conv + i64::from(c < args.messages % convs);
            let start = end - n * 10_000;
            conv_st.execute(params![
                format!("Conversation about files #{c}"),
                start,
                end
            ])?;
            let conv = tx.last_insert_rowid();
            for i in 0..n {
                let (role, text) = content(c * per_conv + i);
                let at = start + i * 10_000;
                let outbox = if role == "user" {
                    sent_st.execute(params![conv, text, at])?;
                    history += 1;
                    Some(tx.last_insert_rowid())
                } else {
                    None
                };
                let model = (role == "assistant").then_some("gpt-4o-mini");
                msg_st.execute(params![conv, role, text, model, outbox, at])?;
            }
        }
        // Older history than the messages kept: sent (one in 50 canceled)
        // over the year before the first conversation, round the conversations.
        let extra = args.outbox_history.unwrap_or(0) - history;
        if extra > 0 {
            let mut old_st = tx.prepare(
                "INSERT INTO outbox (conversation_id, kind, text, status, attempts, due_at, created_at, updated_at, sent_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8)",
            )?;
            let first = now - (convs + 1) * hour;
            let year = 365 * 24 * hour;
            for i in 0..extra {
                let conv = i % convs + 1;
                let at = first - year + year * i / extra;
                let (kind, due) = if i % 10 == 0 {
                    ("message", Some(at))
                } else {
                    ("queued", None)
                };
                let canceled = i % 50 == 49;
                let (status, attempts, sent) = if canceled {
                    ("canceled", 0, None)
                } else {
                    ("sent", 1, Some(at))
                };
                old_st.execute(params![
                    conv,
                    kind,
                    format!("Earlier question {i}: what does this error mean?"),
                    status,
                    attempts,
                    due,
                    at,
                    sent
                ])?;
            }
            history += extra;
        }
        // Half typed to go as soon as possible, half scheduled a second ago.
        let mut due_st = tx.prepare(
            "INSERT INTO outbox (conversation_id, kind, text, due_at, status, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, 'pending', ?5, ?5)",
        )?;
        for i in 0..args.due_now {
            let at = now - 1_000 - i;
            let (kind, due) = if i % 2 == 0 {
                ("queued", None)
            } else {
                ("message", Some(at))
            };
            due_st.execute(params![
                i % convs + 1,
                kind,
                format!("due now {i}: summarise the build log"),
                due,
                at
            ])?;
        }
        let mut sched_st = tx.prepare(
            "INSERT INTO outbox (conversation_id, kind, text, due_at, status, created_at, updated_at)
             VALUES (?1, 'message', ?2, ?3, 'pending', ?4, ?4)",
        )?;
        let span = 30 * 24 * hour - hour;
        for i in 0..args.scheduled {
            let conv = i % convs + 1;
            let due = now + hour + span * i / args.scheduled.max(1);
            sched_st.execute(params![
                conv,
                format!("scheduled reminder {i}: check the build"),
                due,
                now
            ])?;
        }
    }
    tx.commit()?;
    drop(conn);
    let store = Store::open(&args.db)?;
    eprintln!(
        "tock-seed: {} conversations, {} messages, {history} finished outbox rows, {} scheduled items, \
         {} due now in {} ({:.1} s)",
        store.conversations()?.len(),
        store.message_count()?,
        args.scheduled,
        args.due_now,
        args.db.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn add_due(args: &Args, count: i64) -> Result<()> {
    let store = Store::open(&args.db)?;
    let now = now_ms();
    for i in 0..count {
        let due = now + args.due_start_ms + args.due_spread_ms * i / count.max(1);
        let conv = store.create_conversation(Some(&format!("due {i}")), "cli", now)?;
        let mut item = NewItem::new(conv, Kind::Message, format!("bench-due {due}"));
        item.due_at = Some(due);
        store.enqueue(&item, now)?;
    }
    eprintln!(
        "tock-seed: {count} items due from {} ms to {} ms from now",
        args.due_start_ms,
        args.due_start_ms + args.due_spread_ms
    );
    Ok(())
}

fn main() -> Result<()> {
    let args = Args::parse();
    match args.due {
        Some(n) => add_due(&args, n),
        None => seed(&args),
    }
    .with_context(|| format!("seeding {}", args.db.display()))
}
