use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use tock::cli::{Cli, Command};
use tock::engine::{Engine, Event, Options, SystemClock};

fn main() -> ExitCode {
    let cli = match Cli::parse_here() {
        Ok(c) => c,
        Err(e) => return usage_error(e),
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        // Ctrl+C ended `tock ask`, which said what became of the message.
        Err(e) if e.is::<tock::cli::Interrupted>() => ExitCode::from(
            e.downcast_ref::<tock::cli::Interrupted>()
                .map_or(130, |i| i.0),
        ),
        Err(e) => {
            let line = tock::sanitize::sanitize_line(&format!("{e:#}")).into_owned();
            eprintln!("tock: {line}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let daemon = matches!(cli.command, Some(Command::Daemon));
    let _log = tock::logging::init(daemon);
    let (store, config) = tock::cli::open(&cli)?;
    match cli.command {
        None => tock::tui::run(store, config),
        Some(Command::Daemon) => daemon_main(store, config),
        Some(ref command) => {
            // `tock tools` starts MCP servers, and one that exits at once
            // must not kill it by a write to its closed pipe: it puts the
            // default back itself once they are stopped, before it prints.
            // `tock ask` may start them too, and stops its reply instead.
            if !matches!(command, Command::Tools { .. } | Command::Ask(_)) {
                tock::cli::end_quietly_on_a_closed_stdout();
            }
            tock::cli::run(&cli, &store, config).map_err(|e| tock::store::explain(e, store.path()))
        }
    }
}

fn daemon_main(
    store: tock::store::Store,
    config: Arc<tock::config::ConfigSource>,
) -> anyhow::Result<()> {
    let rt = tock::engine::runtime()?;
    rt.block_on(async move {
        let engine = Engine::new(
            store,
            config.clone(),
            Arc::new(SystemClock),
            Options::default(),
        );
        // Nothing here shows a reply as it streams (a TUI open on the same
        // database sees it through its saves): its text is taken once a
        // second, not ten times.
        engine.show(None);
        // A daemon started by a service or cron lacks the shell's exports:
        // a model whose key variable is not set here holds what is due for
        // it, said now rather than found at 9 am.
        for name in config.get().models.keys() {
            if let Some(why) = config.key_env_missing(name) {
                let line = format!(
                    "model {name}: {why} where tock daemon runs; what is due for it is held until it is (export it before starting the daemon, or give the key with api_key_cmd)"
                );
                tracing::warn!("{line}");
                eprintln!("tock daemon: {}", tock::sanitize::sanitize_line(&line));
            }
        }
        let events = engine.subscribe();
        engine.start();
        tracing::info!(db = %engine.store().path().display(), "tock daemon started");
        // Run on the engine's worker, not this thread: an event it is sent
        // (a hand-over, an outbox change) then wakes no thread of its own.
        let listen = tokio::spawn(daemon_loop(events, config));
        let result = listen.await;
        tracing::info!("tock daemon stopping");
        engine.shutdown(Duration::from_millis(1500)).await;
        result?
    })
}

/// Until a signal or the engine's end: runs `notify_command` for each notice.
async fn daemon_loop(
    mut events: tokio::sync::broadcast::Receiver<Event>,
    config: Arc<tock::config::ConfigSource>,
) -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    // Made once: a listener made anew in each turn of the loop would miss
    // a Ctrl+C that came while a notify command ran.
    let mut int = signal(SignalKind::interrupt())?;
    let mut term = signal(SignalKind::terminate())?;
    let mut hup = signal(SignalKind::hangup())?;
    loop {
        tokio::select! {
            _ = int.recv() => break,
            _ = term.recv() => break,
            _ = hup.recv() => break,
            ev = events.recv() => match ev {
                Ok(Event::Notice(n)) if !n.elsewhere => {
                    if let Some(cmd) = &config.get().notify_command {
                        // Logged; the daemon has no screen to say it on.
                        let _ = tock::notify::run_command(cmd, &n);
                    }
                }
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
            }
        }
    }
    Ok(())
}

/// The (sub)command the arguments name, as typed: `tock send`, whose own
/// `--help` lists what it takes (the top level's lists the commands).
fn command_named() -> String {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    let mut path = vec!["tock".to_string()];
    // `args_os`: `args` panics on an argument that is not UTF-8, which is
    // just the error being reported here.
    let args = std::env::args_os().skip(1);
    for arg in args
        .filter_map(|a| a.into_string().ok())
        .filter(|a| !a.starts_with('-'))
    {
        match cmd.find_subcommand(&arg) {
            Some(sub) => {
                path.push(sub.get_name().to_string());
                cmd = sub.clone();
            }
            None => break,
        }
    }
    path.join(" ")
}

/// clap's errors run to several lines with usage and tips; a script wants
/// one line. Help and version still print in full.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
            ExitCode::from(2)
        } else {
            ExitCode::SUCCESS
        };
    }
    let text = e.render().to_string();
    // The first paragraph: the error, with the arguments it lists (e.g. the
    // missing `--every <EXPR>`), joined into one line.
    let first: Vec<&str> = text
        .lines()
        .map(str::trim)
        .skip_while(|l| l.is_empty())
        .take_while(|l| !l.is_empty())
        .collect();
    let first = if first.is_empty() {
        "invalid arguments".to_string()
    } else {
        first.join(" ")
    };
    let first = first.strip_prefix("error: ").unwrap_or(&first);
    let line = tock::sanitize::sanitize_line(first).into_owned();
    eprintln!(
        "tock: {line} ({} --help lists the options)",
        command_named()
    );
    ExitCode::from(2)
}
