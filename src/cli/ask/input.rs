//! The message `tock ask` sends: its words (or a file), and what is piped
//! in, which goes after them. `-` among the words stands for stdin alone.

use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

use anyhow::{Result, anyhow, bail};

use super::super::send::{message_text, stdin_text};

/// How long a pipe may stay open with nothing in it before tock says what
/// it waits for (a `tock ask` in a loop that reads its own stdin).
const STDIN_SAID_AFTER: Duration = Duration::from_secs(3);

/// The message, and whether stdin went into it (to give it back if it
/// cannot be kept).
pub(super) struct Message {
    pub text: String,
    pub from_stdin: bool,
}

pub(super) fn message(words: &[String], file: Option<&Path>) -> Result<Message> {
    let dash = words.iter().any(|w| w == "-");
    let words: Vec<String> = words.iter().filter(|w| *w != "-").cloned().collect();
    let piped = !std::io::stdin().is_terminal();
    if words.is_empty() && file.is_none() && !dash && !piped {
        bail!("nothing to ask: give the message (tock ask TEXT), or pipe it in");
    }
    let mut text = match (file, words.is_empty()) {
        (Some(f), _) => message_text(&[], Some(f))?,
        (None, false) => message_text(&words, None)?,
        (None, true) => String::new(),
    };
    // stdin: asked for by `-`, or piped in (read whenever it is no terminal).
    // Whether it went into the message: an empty one (cron, `</dev/null`)
    // did not, and a failure was blamed on it.
    let mut from_stdin = false;
    if dash || piped {
        let stdin = read_stdin(dash && !piped)?;
        if !stdin.trim().is_empty() {
            from_stdin = true;
            text = if text.is_empty() {
                stdin
            } else {
                format!("{text}\n\n{stdin}")
            };
        }
    }
    Ok(Message { text, from_stdin })
}

/// All of stdin. On a terminal (`tock ask -`) it says how to end it; from
/// a pipe that stays open with nothing in it, after a while, what it waits for.
fn read_stdin(terminal: bool) -> Result<String> {
    if terminal {
        eprintln!("tock: type the message; Ctrl+D on a line of its own ends it");
        return stdin_text();
    }
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(stdin_text());
    });
    match rx.recv_timeout(STDIN_SAID_AFTER) {
        Ok(text) => text,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            eprintln!(
                "tock: waiting for stdin to end: what is piped in goes after the words (< /dev/null when there is nothing to add)"
            );
            rx.recv().map_err(|_| anyhow!("reading stdin"))?
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(anyhow!("reading stdin")),
    }
}
