//! Files the composer reads and writes: `/attach` and `/export`.

use std::io::Read;
use std::path::Path;

use super::model::Model;
use crate::engine::Part;
use crate::store::{MessageStatus, Role};

/// Read a file to attach: a regular file only (not a device, FIFO or
/// socket, which could block or never end), read with a hard cap on the
/// bytes actually read, so the cap holds whatever the metadata says.
pub fn read_attachment(path: &Path, used: u64, cap: u64) -> Result<Part, String> {
    if path.as_os_str().is_empty() {
        return Err("usage: /attach PATH".into());
    }
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{shown} is not a regular file"));
    }
    if used + meta.len() > cap {
        return Err(format!(
            "refused: {shown} would bring this message's attachments to {} KB, over the {} KB cap",
            (used + meta.len()).div_ceil(1024),
            cap / 1024
        ));
    }
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let mut bytes = Vec::new();
    file.take(cap - used + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if used + bytes.len() as u64 > cap {
        return Err(format!(
            "refused: {shown} grew past the {} KB cap while reading",
            cap / 1024
        ));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase());
    let mime = match ext.as_deref() {
        Some("png") => Some("image/png"),
        Some("jpg") | Some("jpeg") => Some("image/jpeg"),
        Some("gif") => Some("image/gif"),
        Some("webp") => Some("image/webp"),
        _ => None,
    };
    match mime {
        Some(m) => {
            use base64::Engine as _;
            Ok(Part::Image {
                name,
                mime: m.into(),
                data_base64: base64::engine::general_purpose::STANDARD.encode(&bytes),
            })
        }
        None => match String::from_utf8(bytes) {
            Ok(content) => Ok(Part::Text { name, content }),
            Err(_) => Err(format!(
                "{name} is neither text nor a supported image (png, jpeg, gif, webp)"
            )),
        },
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
        let body = crate::sanitize::sanitize_keep_tabs(&m.content);
        md.push_str(&format!("## {who}{status} — {when}\n\n{body}\n\n"));
    }
    std::fs::write(&path, md).map_err(|e| format!("cannot write {path}: {e}"))?;
    let abs = std::fs::canonicalize(&path)
        .map(|p| p.display().to_string())
        .unwrap_or(path);
    Ok(abs)
}
