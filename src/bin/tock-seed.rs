//! Fills a tock database for benchmarks (`bench/run.sh`).
//!
//! ```text
//! tock-seed --db PATH [--conversations 1000] [--messages 200000] [--scheduled 10000]
//! tock-seed --db PATH --due 100 --due-start-ms 3000 --due-spread-ms 10000
//! ```
//!
//! The first form creates the schema through `Store::open` and bulk-inserts,
//! in one transaction: conversations, messages (alternating user questions
//! and assistant replies of about 1 KB, a quarter of them with a code
//! block), one sent outbox row per user message (the history a real database
//! accumulates) and pending items scheduled 1 hour to 30 days ahead.
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
    let tx = conn.transaction()?;
    let now = now_ms();
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
                    Some(tx.last_insert_rowid())
                } else {
                    None
                };
                let model = (role == "assistant").then_some("gpt-4o-mini");
                msg_st.execute(params![conv, role, text, model, outbox, at])?;
            }
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
        "tock-seed: {} conversations, {} messages, {} scheduled items in {} ({:.1} s)",
        store.conversations()?.len(),
        store.message_count()?,
        args.scheduled,
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
