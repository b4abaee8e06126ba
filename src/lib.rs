//! tock: a terminal chat client for LLMs whose messages are never lost and are
//! sent when you said. The engine (store, outbox scheduler, providers) is
//! headless; the TUI, `tock daemon` and the CLI subcommands are front ends.

pub mod call_text;
pub mod cli;
pub mod config;
pub mod engine;
pub mod files;
pub mod llm;
pub mod logging;
pub mod mcp;
pub mod notify;
pub mod recur;
pub mod sanitize;
pub mod store;
pub mod transcript;
pub mod tui;
pub mod when;
