//! Messages handed to the writer while another process held the database:
//! until the write is done they live only in this process, so one that has
//! waited long enough to be noticed is also written to a private file next
//! to the database (`<db>.unsent/<pid>-<n>.json`, removed once the write is
//! done). A tock killed meanwhile leaves the file; the next TUI puts its text
//! back into that conversation's draft — a draft, never a send, so a message
//! whose write did land just before the kill is not sent twice.
//!
//! A file per message, written without fsync: what a killed process wrote
//! is in the kernel's cache and survives it (only a power cut loses it, as
//! it would lose the draft being typed).

use std::path::{Path, PathBuf};

use crate::store::Draft;

/// A message in flight, as spooled.
#[derive(serde::Serialize, serde::Deserialize)]
struct Spooled {
    conversation_id: i64,
    text: String,
    parts_json: Option<String>,
}

/// The spool folder of the database at `db`.
pub fn dir_of(db: &Path) -> PathBuf {
    let mut name = db.file_name().unwrap_or_default().to_os_string();
    name.push(".unsent");
    db.with_file_name(name)
}

/// Write `draft` (sent to `conv`) as this process's `n`th spooled message.
pub fn spool(db: &Path, n: u64, conv: i64, draft: &Draft) -> Result<(), String> {
    let dir = dir_of(db);
    crate::files::create_private_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let body = serde_json::to_vec(&Spooled {
        conversation_id: conv,
        text: draft.text.clone(),
        parts_json: draft.parts_json.clone(),
    })
    .map_err(|e| e.to_string())?;
    crate::files::write_private(&file_of(db, std::process::id(), n), &body)
}

/// The write of the `n`th spooled message is done (or refused, and given back).
pub fn done(db: &Path, n: u64) {
    let _ = std::fs::remove_file(file_of(db, std::process::id(), n));
}

fn file_of(db: &Path, pid: u32, n: u64) -> PathBuf {
    dir_of(db).join(format!("{pid}-{n}.json"))
}

/// What tocks that are gone left behind: (file, conversation, draft). A
/// file of a live process is its own (its write still waits), and stays.
pub fn left_behind(db: &Path) -> Vec<(PathBuf, i64, Draft)> {
    let Ok(entries) = std::fs::read_dir(dir_of(db)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let path = e.path();
        let Some(pid) = path
            .file_stem()
            .and_then(|s| s.to_str())
            .and_then(|s| s.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == std::process::id() || crate::store::process_alive(i64::from(pid)) {
            continue;
        }
        let Some(s) = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Spooled>(&b).ok())
        else {
            continue;
        };
        let draft = Draft {
            text: s.text,
            edit_of: None,
            stash: None,
            parts_json: s.parts_json,
        };
        out.push((path, s.conversation_id, draft));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}
