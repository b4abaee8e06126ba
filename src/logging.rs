//! Tracing to a file in the state dir (never to the terminal the TUI owns);
//! the daemon also logs to stderr. Level from TOCK_LOG (default info).
//!
//! The file is private (0600, its directory 0700) and size-capped: it rotates
//! to `tock.log.1` … `tock.log.N` so a chatty level or a long-lived daemon
//! cannot fill the disk.

use std::io::Write;
use std::path::{Path, PathBuf};

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::prelude::*;

/// Log lines queued for the writer thread at most.
const LOG_QUEUE_LINES: usize = 1024;
/// Size at which tock.log is rotated.
pub const LOG_MAX_BYTES: u64 = 8 * 1024 * 1024;
/// Rotated files kept besides tock.log.
pub const LOG_KEEP: usize = 3;

/// An append-only log file that rotates when it reaches `max_bytes`.
pub struct RotatingFile {
    path: PathBuf,
    max_bytes: u64,
    keep: usize,
    file: Option<std::fs::File>,
    len: u64,
}

impl RotatingFile {
    pub fn open(path: &Path, max_bytes: u64, keep: usize) -> std::io::Result<Self> {
        let file = crate::files::open_private_append(path)?;
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        Ok(Self {
            path: path.to_path_buf(),
            max_bytes: max_bytes.max(1),
            keep,
            file: Some(file),
            len,
        })
    }

    fn rotated(&self, n: usize) -> PathBuf {
        PathBuf::from(format!("{}.{n}", self.path.display()))
    }

    fn rotate(&mut self) -> std::io::Result<()> {
        self.file = None;
        if self.keep == 0 {
            let _ = std::fs::remove_file(&self.path);
        } else {
            let _ = std::fs::remove_file(self.rotated(self.keep));
            for n in (1..self.keep).rev() {
                let _ = std::fs::rename(self.rotated(n), self.rotated(n + 1));
            }
            std::fs::rename(&self.path, self.rotated(1))?;
        }
        self.file = Some(crate::files::open_private_append(&self.path)?);
        self.len = 0;
        Ok(())
    }
}

impl Write for RotatingFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.len > 0 && self.len + buf.len() as u64 > self.max_bytes {
            self.rotate()?;
        }
        let f = match &mut self.file {
            Some(f) => f,
            None => {
                self.file = Some(crate::files::open_private_append(&self.path)?);
                self.file.as_mut().ok_or(std::io::ErrorKind::NotFound)?
            }
        };
        let n = f.write(buf)?;
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.file {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

/// TOCK_LOG, with the file watcher's own tracing kept quiet: at trace level
/// it logs every file event, and a log file next to the database would make
/// each line cause the next.
fn filter() -> EnvFilter {
    let spec = std::env::var("TOCK_LOG").unwrap_or_else(|_| "info".into());
    filter_from(&spec)
}

/// The filter `spec` (TOCK_LOG) asks for, with the MCP SDK's own tracing
/// off whatever it says (a directive for `rmcp` or one of its modules is
/// dropped): from `info` on that logs what servers send as it is (their
/// instructions, notifications, results), secrets and all; tock logs what
/// it makes of them, redacted.
fn filter_from(spec: &str) -> EnvFilter {
    let spec: String = spec
        .split(',')
        .filter(|d| !d.trim_start().starts_with("rmcp"))
        .collect::<Vec<_>>()
        .join(",");
    let mut f = EnvFilter::try_new(&spec).unwrap_or_else(|_| EnvFilter::new("info"));
    if let Ok(d) = "rmcp=off".parse() {
        f = f.add_directive(d);
    }
    for quiet in ["notify=warn", "inotify=warn", "mio=warn"] {
        let target = quiet.split('=').next().unwrap_or_default();
        if !spec.contains(target)
            && let Ok(d) = quiet.parse()
        {
            f = f.add_directive(d);
        }
    }
    f
}

/// The directory tock logs to: `TOCK_LOG_DIR`, or the platform's state dir.
fn log_dir() -> std::path::PathBuf {
    std::env::var_os("TOCK_LOG_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(crate::config::log_dir)
}

/// The file tock logs to, for lines that send the user there.
pub fn log_file() -> std::path::PathBuf {
    log_dir().join("tock.log")
}

pub fn init(to_stderr: bool) -> Option<WorkerGuard> {
    use std::io::IsTerminal;
    let dir = log_dir();
    let file = crate::files::create_private_dir(&dir)
        .ok()
        .map(|_| {
            let path = dir.join("tock.log");
            // Said, as the database's are: a log others could read held
            // what the conversations hold.
            for p in [&dir, &path] {
                if let Ok(Some(note)) = crate::files::tighten(p) {
                    eprintln!("tock: {}", crate::sanitize::sanitize_line(&note));
                }
            }
            path
        })
        .and_then(|p| RotatingFile::open(&p, LOG_MAX_BYTES, LOG_KEEP).ok());
    let (file_layer, guard) = match file {
        Some(f) => {
            // The default queue holds 128,000 lines: a 4 MB array that is written
            // in full when created (3 ms at start and 4 MB resident for the whole
            // run). tock logs a few lines a minute; 1,024 is ample, and when full
            // the appender drops lines rather than block the UI (as before).
            let (nb, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
                .buffered_lines_limit(LOG_QUEUE_LINES)
                .finish(f);
            (
                Some(
                    tracing_subscriber::fmt::layer()
                        .with_writer(nb)
                        .with_ansi(false)
                        .with_filter(filter()),
                ),
                Some(guard),
            )
        }
        None => (None, None),
    };
    // Colour only for a person at a terminal, not for a file or journald.
    let ansi = std::io::stderr().is_terminal();
    let stderr_layer = to_stderr.then(|| {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(ansi)
            .with_filter(filter())
    });
    let _ = tracing_subscriber::registry()
        .with(file_layer)
        .with(stderr_layer)
        .try_init();
    guard
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_mcp_sdk_is_never_logged_whatever_tock_log_says() {
        use tracing_subscriber::layer::SubscriberExt;
        for spec in ["trace", "info,rmcp=trace", "rmcp::service=debug,info"] {
            let out = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
            let sink = out.clone();
            let layer = tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_writer(move || Sink(sink.clone()));
            let sub = tracing_subscriber::registry()
                .with(filter_from(spec))
                .with(layer);
            tracing::subscriber::with_default(sub, || {
                tracing::info!(target: "rmcp::service", "peer info SECRET");
                tracing::error!(target: "rmcp", "fatal SECRET");
                tracing::info!(target: "tock::mcp", "tock's own line");
            });
            let text = String::from_utf8_lossy(&out.lock().unwrap()).into_owned();
            assert!(!text.contains("SECRET"), "{spec}: {text}");
            assert!(text.contains("tock's own line"), "{spec}: {text}");
        }
    }

    struct Sink(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_log_rotates_and_keeps_a_few_private_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("tock.log");
        let mut f = RotatingFile::open(&p, 100, 2).unwrap();
        for i in 0..50 {
            // One write per line, as the log's writer thread does.
            f.write_all(format!("line {i:04} of the log\n").as_bytes())
                .unwrap();
        }
        f.flush().unwrap();
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["tock.log", "tock.log.1", "tock.log.2"]);
        for n in &names {
            let meta = std::fs::metadata(dir.path().join(n)).unwrap();
            assert!(meta.len() <= 100, "{n} is {} bytes", meta.len());
            assert_eq!(meta.permissions().mode() & 0o777, 0o600, "{n}");
        }
        let newest = std::fs::read_to_string(&p).unwrap();
        assert!(newest.contains("line 0049"));
    }
}
