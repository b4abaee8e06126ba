//! The local files tock reads and writes on the user's behalf.
//!
//! Everything tock writes (database and its `-wal`/`-shm`, log, exports) is
//! private to the user (0600, directories 0700) whatever the umask, because
//! conversations are as private as mail. Reading a path the user names
//! (`/attach`) or writing one (`/export`) only ever touches a regular file:
//! a device, FIFO, socket or procfs/sysfs file could block forever, never
//! end (`/dev/zero`), or hand over secrets (`/proc/self/environ`). Reads are
//! capped on the bytes actually read, not on what `stat` claims (0 for most
//! of those files).
//!
//! These functions block on the file system: front ends call them off their
//! UI thread (`tokio::task::spawn_blocking`, or the `_async` variants).

use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::engine::Part;

pub const FILE_MODE: u32 = 0o600;
pub const DIR_MODE: u32 = 0o700;

/// A size with honest rounding: 41 B, 1.5 KB, 20 MB (a 69-byte image
/// was "1 KB").
pub fn human_size(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
    }
}

/// Create `dir` (and missing parents) readable by the user only. An
/// existing directory is left as it is (see [`tighten`]).
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    if let Err(e) = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(dir)
    {
        return Err(in_the_way(dir).map(std::io::Error::other).unwrap_or(e));
    }
    // The umask may have taken bits the mode asked for; never gives any.
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(DIR_MODE))
}

/// What stops `dir` from being made, when a part of its path is there but
/// is no folder: the OS says only "File exists" or "Not a directory".
fn in_the_way(dir: &Path) -> Option<String> {
    let mut part = PathBuf::new();
    for c in dir.components() {
        part.push(c);
        let Ok(meta) = std::fs::symlink_metadata(&part) else {
            return None;
        };
        if meta.file_type().is_symlink() {
            if part.is_dir() {
                continue;
            }
            let to = std::fs::read_link(&part).unwrap_or_default();
            return Some(if part.exists() {
                format!(
                    "{} is a symbolic link to {}, which is not a folder",
                    part.display(),
                    to.display()
                )
            } else {
                format!(
                    "{} is a symbolic link to {}, which does not exist",
                    part.display(),
                    to.display()
                )
            });
        }
        if !meta.is_dir() {
            return Some(if meta.is_file() {
                format!("{} is a file, not a folder", part.display())
            } else {
                format!("{} is {}, not a folder", part.display(), kind_of(&meta))
            });
        }
    }
    None
}

/// Take group and other permissions away from an existing file or directory
/// of tock's. Returns a one-line notice when something was changed.
pub fn tighten(path: &Path) -> std::io::Result<Option<String>> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    // Only what tock itself creates: never follow a link, never chmod a device.
    if !(meta.is_file() || meta.is_dir()) {
        return Ok(None);
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o077 == 0 {
        return Ok(None);
    }
    // Only take bits away: a read-only file stays read-only.
    let want = mode & !0o077;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(want))?;
    Ok(Some(format!(
        "{} was readable by others (mode {mode:o}); it is now {want:o}",
        path.display()
    )))
}

/// Create `path` empty with mode 0600 if it does not exist, so whatever
/// opens it next (SQLite, which gives its `-wal` and `-shm` the database
/// file's mode) keeps it private.
pub fn ensure_private_file(path: &Path) -> std::io::Result<()> {
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(FILE_MODE)
        .open(path)
    {
        Ok(f) => f.set_permissions(std::fs::Permissions::from_mode(FILE_MODE)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// Open a file in append mode, created 0600 (the log file).
pub fn open_private_append(path: &Path) -> std::io::Result<File> {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(FILE_MODE)
        .open(path)?;
    f.set_permissions(std::fs::Permissions::from_mode(FILE_MODE))?;
    Ok(f)
}

/// What a path turned out to be, when it is not a regular file.
fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

/// procfs and sysfs files report a size of 0 (or 4096) whatever they hold.
fn on_pseudo_fs(f: &File) -> bool {
    use std::os::fd::AsRawFd;
    const PROC_SUPER_MAGIC: i64 = 0x9fa0;
    const SYSFS_MAGIC: i64 = 0x6265_6572;
    // SAFETY: statfs is plain data; all zeroes is a valid value to fill in.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `f` is an open descriptor and `st` is a valid out-pointer.
    let r = unsafe { libc::fstatfs(f.as_raw_fd(), &mut st) };
    #[allow(clippy::unnecessary_cast)]
    let magic = st.f_type as i64;
    r == 0 && (magic == PROC_SUPER_MAGIC || magic == SYSFS_MAGIC)
}

/// Open `path` for reading only if it is a regular file on a real file
/// system. Opening never blocks (a FIFO without a writer would).
fn open_regular(path: &Path) -> Result<(File, u64), String> {
    let shown = path.display();
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    let meta = f
        .metadata()
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "refused: {shown} is {}, not a regular file",
            kind_of(&meta)
        ));
    }
    if on_pseudo_fs(&f) {
        return Err(format!(
            "refused: {shown} is a /proc or /sys file, not a regular file"
        ));
    }
    Ok((f, meta.len()))
}

/// Read a regular file, refusing anything over `cap` bytes — counted on what
/// is read, so a file that grows while read cannot exceed it either.
pub fn read_regular(path: &Path, cap: u64) -> Result<Vec<u8>, String> {
    let (f, len) = open_regular(path)?;
    let shown = path.display();
    if len > cap {
        return Err(over_cap(path, len, cap));
    }
    let mut out = Vec::with_capacity(len as usize);
    f.take(cap.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if out.len() as u64 > cap {
        return Err(over_cap(path, out.len() as u64, cap));
    }
    Ok(out)
}

fn over_cap(path: &Path, len: u64, cap: u64) -> String {
    format!(
        "refused: {} is over the {} limit ({} or more)",
        path.display(),
        human_size(cap),
        human_size(len)
    )
}

/// The image type of a path by its extension (png, jpeg, gif, webp), or
/// `None` for anything else (attached as text).
pub fn image_mime(path: &Path) -> Option<&'static str> {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
        .as_deref()
    {
        Some("png") => Some("image/png"),
        Some("jpg") | Some("jpeg") => Some("image/jpeg"),
        Some("gif") => Some("image/gif"),
        Some("webp") => Some("image/webp"),
        _ => None,
    }
}

/// Refuse, before anything is read, an image for a model that does not
/// take images (`vision` false), naming the file and the model. A path
/// that names no file is left to the read, which says so.
pub fn refuse_image_without_vision(path: &Path, model: &str, vision: bool) -> Result<(), String> {
    if vision || image_mime(path).is_none() || std::fs::metadata(path).is_err() {
        return Ok(());
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    Err(format!(
        "refused: {} is an image and the model {} does not take images (`vision = true` in its config entry says it does)",
        crate::sanitize::sanitize_line(&name),
        crate::sanitize::sanitize_line(model)
    ))
}

/// What an attachment is, as listings show it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct AttachmentInfo {
    pub name: String,
    pub mime: String,
    /// Size of the file that was attached (decoded, for an image).
    pub bytes: u64,
}

/// The attachments stored with a message (`parts_json`), in order. Parts
/// that cannot be read are left out.
pub fn attachment_infos(parts_json: Option<&str>) -> Vec<AttachmentInfo> {
    let parts: Vec<Part> = parts_json
        .and_then(|j| serde_json::from_str(j).ok())
        .unwrap_or_default();
    parts
        .into_iter()
        .map(|p| match p {
            Part::Image {
                name,
                mime,
                data_base64,
            } => {
                // Decoded size from the base64 length, without decoding.
                let len = data_base64.trim_end().len() as u64;
                let pad = data_base64
                    .trim_end()
                    .bytes()
                    .rev()
                    .take_while(|&b| b == b'=')
                    .count() as u64;
                AttachmentInfo {
                    name,
                    mime,
                    bytes: (len / 4 * 3).saturating_sub(pad),
                }
            }
            Part::Text { name, content } => AttachmentInfo {
                name,
                mime: "text/plain".into(),
                bytes: content.len() as u64,
            },
        })
        .collect()
}

/// An attachment for the next message, read from `path` within `budget`
/// bytes (what the message's cap leaves). Images (png, jpeg, gif, webp by
/// extension) are sent as images, anything else must be UTF-8 text.
pub fn read_attachment(path: &Path, budget: u64) -> Result<Part, String> {
    if path.as_os_str().is_empty() {
        return Err("no file named".into());
    }
    let bytes = read_regular(path, budget)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match image_mime(path) {
        Some(m) => {
            use base64::Engine as _;
            Ok(Part::Image {
                name,
                mime: m.into(),
                data_base64: base64::engine::general_purpose::STANDARD.encode(&bytes),
            })
        }
        None => String::from_utf8(bytes)
            .map(|content| Part::Text {
                name: name.clone(),
                content,
            })
            .map_err(|e| {
                // Text in another encoding (Latin-1, Windows-1252): bytes
                // that are no UTF-8 but no control characters either.
                let bytes = e.as_bytes();
                let texty = !bytes.is_empty()
                    && bytes
                        .iter()
                        .all(|b| *b >= 0x20 || matches!(b, b'\n' | b'\r' | b'\t'));
                if texty {
                    return format!(
                        "{name} is text in another encoding than UTF-8 (Latin-1?) — convert it first, e.g. iconv -f latin1 -t utf-8"
                    );
                }
                format!("{name} is neither text nor a supported image (png, jpeg, gif, webp)")
            }),
    }
}

/// [`read_attachment`] on a blocking thread.
pub async fn read_attachment_async(path: PathBuf, budget: u64) -> Result<Part, String> {
    tokio::task::spawn_blocking(move || read_attachment(&path, budget))
        .await
        .unwrap_or_else(|e| Err(format!("reading the attachment failed: {e}")))
}

/// Write `contents` to `path` (an export), created or replaced as a private
/// regular file. Refuses an existing path that is not a regular file, and
/// never blocks on one (a FIFO without a reader).
pub fn write_private(path: &Path, contents: &[u8]) -> Result<(), String> {
    let shown = path.display();
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .mode(FILE_MODE)
        // A symbolic link is not followed: one planted where tock writes
        // (a predictable name in /tmp) would aim the write at another file.
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            // O_NONBLOCK on a FIFO with no reader.
            Some(libc::ENXIO) => {
                format!("refused: {shown} is a FIFO (named pipe), not a regular file")
            }
            Some(libc::ELOOP) => {
                format!("refused: {shown} is a symbolic link; give the path of the file itself")
            }
            _ => format!("cannot write {shown}: {e}"),
        })?;
    let meta = f
        .metadata()
        .map_err(|e| format!("cannot write {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "refused: {shown} is {}, not a regular file",
            kind_of(&meta)
        ));
    }
    if on_pseudo_fs(&f) {
        return Err(format!("refused: {shown} is a /proc or /sys file"));
    }
    // Only now is it safe to truncate: it is a plain file.
    f.set_len(0)
        .and_then(|_| f.set_permissions(std::fs::Permissions::from_mode(FILE_MODE)))
        .and_then(|_| f.write_all(contents))
        .and_then(|_| f.flush())
        .map_err(|e| format!("cannot write {shown}: {e}"))
}

/// [`write_private`] on a blocking thread.
pub async fn write_private_async(path: PathBuf, contents: Vec<u8>) -> Result<(), String> {
    tokio::task::spawn_blocking(move || write_private(&path, &contents))
        .await
        .unwrap_or_else(|e| Err(format!("writing the file failed: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text in Latin-1 is named as text in another encoding; binary bytes
    /// as neither text nor an image.
    #[test]
    fn a_file_in_another_encoding_is_told_from_a_binary_one() {
        let dir = tempfile::tempdir().unwrap();
        let latin = dir.path().join("latin1.txt");
        std::fs::write(&latin, b"caf\xe9 latin1\n").unwrap();
        let e = read_attachment(&latin, 1 << 20).unwrap_err();
        assert!(e.contains("another encoding than UTF-8"), "{e}");
        let bin = dir.path().join("blob.dat");
        std::fs::write(&bin, b"\x00\x01\xff\xfe").unwrap();
        let e = read_attachment(&bin, 1 << 20).unwrap_err();
        assert!(e.contains("neither text nor a supported image"), "{e}");
    }

    /// A folder that cannot be made because a part of its path is a link
    /// to nothing, or a file, names that part; the OS said "File exists".
    #[test]
    fn a_folder_under_a_dangling_link_or_a_file_names_it() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("gone");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &link).unwrap();
        let e = create_private_dir(&link.join("sub"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("{} is a symbolic link to", link.display()))
                && e.contains("which does not exist"),
            "{e}"
        );
        let e = create_private_dir(&link).unwrap_err().to_string();
        assert!(e.contains("which does not exist"), "{e}");
        let file = dir.path().join("notes.txt");
        std::fs::write(&file, "x").unwrap();
        let e = create_private_dir(&file.join("sub"))
            .unwrap_err()
            .to_string();
        assert_eq!(e, format!("{} is a file, not a folder", file.display()));
    }

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p)
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap_or(0)
    }

    fn mkfifo(p: &Path) {
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap_or_default();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    #[test]
    fn devices_fifos_sockets_proc_and_directories_are_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        mkfifo(&fifo);
        let sock_path = dir.path().join("sock");
        let _sock = std::os::unix::net::UnixListener::bind(&sock_path).unwrap();
        let started = std::time::Instant::now();
        for (p, what) in [
            (Path::new("/dev/zero"), "a device"),
            (Path::new("/dev/urandom"), "a device"),
            (fifo.as_path(), "FIFO"),
            (sock_path.as_path(), "socket"),
            (Path::new("/proc/self/environ"), "/proc"),
            (dir.path(), "a directory"),
        ] {
            let e = read_attachment(p, 20 << 20).unwrap_err();
            assert!(
                e.contains("refused") || e.contains("cannot read"),
                "{p:?}: {e}"
            );
            assert!(e.contains(what) || e.contains("cannot read"), "{p:?}: {e}");
        }
        let e = write_private(&fifo, b"x").unwrap_err();
        assert!(e.contains("FIFO"), "{e}");
        let e = write_private(Path::new("/dev/null"), b"x").unwrap_err();
        assert!(e.contains("device"), "{e}");
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
    }

    #[test]
    fn the_cap_counts_bytes_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("notes.txt");
        std::fs::write(&p, "x".repeat(2048)).unwrap();
        assert!(
            read_regular(&p, 2047)
                .unwrap_err()
                .contains("over the 2.0 KB limit")
        );
        assert_eq!(read_regular(&p, 2048).unwrap().len(), 2048);
        match read_attachment(&p, 4096).unwrap() {
            Part::Text { name, content } => {
                assert_eq!((name.as_str(), content.len()), ("notes.txt", 2048))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn exports_and_created_files_are_private_whatever_the_umask() {
        // SAFETY: umask only changes this process's file creation mask.
        let old = unsafe { libc::umask(0o022) };
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("export.md");
        std::fs::write(&out, "old, longer content").unwrap();
        std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_private(&out, b"new").unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"new");
        assert_eq!(mode(&out), 0o600);
        // A symbolic link is refused, and what it points to is untouched.
        let precious = dir.path().join("precious.txt");
        std::fs::write(&precious, "precious").unwrap();
        let link = dir.path().join("link.md");
        std::os::unix::fs::symlink(&precious, &link).unwrap();
        let e = write_private(&link, b"overwritten").unwrap_err();
        assert!(e.contains("is a symbolic link"), "{e}");
        assert_eq!(std::fs::read(&precious).unwrap(), b"precious");
        let sub = dir.path().join("a/b");
        create_private_dir(&sub).unwrap();
        assert_eq!(mode(&sub), 0o700);
        let f = sub.join("f");
        ensure_private_file(&f).unwrap();
        assert_eq!(mode(&f), 0o600);
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        let note = tighten(&f).unwrap().unwrap();
        assert!(note.contains("readable by others"), "{note}");
        assert_eq!(mode(&f), 0o600);
        assert_eq!(tighten(&f).unwrap(), None);
        // Tightening never adds a permission.
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o444)).unwrap();
        assert!(tighten(&f).unwrap().is_some());
        assert_eq!(mode(&f), 0o400);
        // SAFETY: restores the mask saved above.
        unsafe { libc::umask(old) };
    }
}
