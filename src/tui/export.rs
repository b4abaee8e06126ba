//! Files the composer reads and writes: `/attach` and `/export`.

use std::path::Path;

use super::model::Model;
use crate::engine::Part;
use crate::store::{MessageStatus, Role};

/// Read a file to attach within what the message's cap leaves (regular
/// files only, bytes counted as read: see [`crate::files::read_attachment`]).
pub fn read_attachment(path: &Path, used: u64, cap: u64) -> Result<Part, String> {
    if path.as_os_str().is_empty() {
        return Err("usage: /attach PATH".into());
    }
    let left = cap.saturating_sub(used);
    // Said against the cap per message, not against what is left of it.
    if let Ok(meta) = std::fs::metadata(path)
        && meta.is_file()
        && meta.len() > left
    {
        let size = crate::files::human_size(meta.len());
        let cap = crate::files::human_size(cap);
        return Err(if used == 0 {
            format!(
                "refused: {} is {size}, over the {cap} attachment cap per message",
                path.display()
            )
        } else {
            format!(
                "refused: {} is {size}; with the {} already attached that is over the {cap} attachment cap per message",
                path.display(),
                crate::files::human_size(used)
            )
        });
    }
    crate::files::read_attachment(path, left)
}

/// An attachment in an export: a heading line, then its text in a fence
/// longer than any run of backticks in it, or the image as a data URI.
fn attachment_markdown(p: &Part) -> String {
    let (name, kind, bytes) = super::composer::describe(p);
    let name = name.replace('`', "'");
    let head = format!(
        "Attached `{name}` ({kind}, {}):\n\n",
        crate::files::human_size(bytes)
    );
    match p {
        Part::Text { content, .. } => {
            let content = crate::sanitize::sanitize_source(content);
            let longest = content.split(|c| c != '`').map(str::len).max().unwrap_or(0);
            let fence = "`".repeat(longest.max(2) + 1);
            format!(
                "{head}{fence}\n{}\n{fence}\n\n",
                content.trim_end_matches('\n')
            )
        }
        Part::Image {
            mime, data_base64, ..
        } => {
            // Only what is a plain base64 image can go into a link unaltered.
            let plain = mime.starts_with("image/")
                && mime[6..]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '+' || c == '-')
                && data_base64
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='));
            if plain {
                format!("{head}![{name}](data:{mime};base64,{data_base64})\n\n")
            } else {
                format!("{head}(not included: not a plain base64 image)\n\n")
            }
        }
    }
}

/// Export the open conversation to Markdown. Returns the absolute path written.
/// Model output is made safe first: the file never carries its escape sequences.
pub fn export(model: &Model, arg: &str) -> Result<String, String> {
    let conv = model.current_conv().ok_or("no conversation")?;
    let title = conv.display_title();
    let path = if arg.is_empty() {
        let slug = title
            .chars()
            .map(|c| {
                if c.is_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .collect::<String>()
            .split('-')
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("-");
        let name = format!(
            "tock-{}-{}.md",
            conv.id,
            if slug.is_empty() {
                "conversation".into()
            } else {
                slug
            }
        );
        std::env::current_dir()
            .map(|d| d.join(&name).display().to_string())
            .unwrap_or(name)
    } else {
        super::commands::expand_home(arg)
    };
    let mut md = format!("# {title}\n\n");
    for e in &model.entries {
        let m = &e.msg;
        let when = chrono::DateTime::from_timestamp_millis(m.created_at)
            .map(|d| {
                d.with_timezone(&chrono::Local)
                    .format("%Y-%m-%d %H:%M")
                    .to_string()
            })
            .unwrap_or_default();
        let who = match m.role {
            Role::User => "You".to_string(),
            Role::Assistant => m.model.clone().unwrap_or_else(|| "Assistant".into()),
            Role::Tool => format!("Tool {}", m.model.clone().unwrap_or_default()),
            Role::Notice => "tock".into(),
        };
        let status = match m.status {
            MessageStatus::Complete => String::new(),
            MessageStatus::Superseded => " (replaced)".into(),
            other => format!(" ({})", other.as_str()),
        };
        let who = crate::sanitize::sanitize_line(&who);
        let body = crate::sanitize::sanitize_source(&m.content);
        md.push_str(&format!("## {who}{status} — {when}\n\n"));
        // What a reasoning model thought before this reply, kept with it.
        if e.reasoned.is_some()
            && let Ok(Some(r)) = model.engine.reader().reasoning(m.id)
        {
            md.push_str(&crate::transcript::reasoning_quote(&r));
        }
        md.push_str(&format!("{body}\n\n"));
        // What went with it: a text file as the model read it, an image
        // inline (a data URI: the export stays one file).
        let parts: Vec<Part> = m
            .parts_json
            .as_deref()
            .and_then(|j| serde_json::from_str(j).ok())
            .unwrap_or_default();
        for p in &parts {
            md.push_str(&attachment_markdown(p));
        }
        // The calls a reply made, with their arguments, as the model sent them.
        for c in m.tool_calls() {
            let args = crate::sanitize::sanitize_source(&c.arguments);
            md.push_str(&format!(
                "Tool call `{}`:\n\n```json\n{}\n```\n\n",
                crate::sanitize::sanitize_line(&c.name),
                args.trim()
            ));
        }
    }
    // A folder named that does not exist yet is made (private, 0700), as
    // an editor's "save as" does, and said so (a typo in it shows).
    let mut made = None;
    if let Some(dir) = Path::new(&path)
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
    {
        if std::fs::symlink_metadata(dir).is_err() {
            made = Some(dir.display().to_string());
        }
        crate::files::create_private_dir(dir)
            .map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    }
    // Private (0600), and never blocking on a FIFO, writing into /proc or
    // through a symbolic link. A file already there is replaced: said so.
    let replaced = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
    crate::files::write_private(Path::new(&path), md.as_bytes())?;
    let abs = std::fs::canonicalize(&path)
        .map(|p| p.display().to_string())
        .unwrap_or(path);
    Ok(match (replaced, made) {
        (true, _) => format!("{abs} (it replaced the file that was there)"),
        (false, Some(dir)) => format!("{abs} (the folder {dir} was made for it)"),
        (false, None) => abs,
    })
}
