//! Tracing to a file in the state dir (never to the terminal the TUI owns);
//! the daemon also logs to stderr. Level from TOCK_LOG (default info).

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::prelude::*;

/// Log lines queued for the writer thread at most.
const LOG_QUEUE_LINES: usize = 1024;

pub fn init(to_stderr: bool) -> Option<WorkerGuard> {
    let dir = std::env::var_os("TOCK_LOG_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(crate::config::log_dir);
    let filter = || EnvFilter::try_from_env("TOCK_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let file = std::fs::create_dir_all(&dir)
        .ok()
        .map(|_| tracing_appender::rolling::never(&dir, "tock.log"));
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
    let stderr_layer = to_stderr.then(|| {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_filter(filter())
    });
    let _ = tracing_subscriber::registry()
        .with(file_layer)
        .with(stderr_layer)
        .try_init();
    guard
}
