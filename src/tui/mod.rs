//! The interactive front end.
pub mod markdown;
pub mod scheduled;
pub mod time_picker;

use std::sync::Arc;

/// Run the TUI (placeholder until the TUI lands).
pub fn run(
    _store: crate::store::Store,
    _config: Arc<crate::config::ConfigSource>,
) -> anyhow::Result<()> {
    anyhow::bail!("the TUI is not built yet; use the CLI subcommands")
}
