//! Tracing to a file in the state dir (never to the terminal the TUI owns);
//! the daemon also logs to stderr. Level from TOCK_LOG (default info).

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::prelude::*;

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
            let (nb, guard) = tracing_appender::non_blocking(f);
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
