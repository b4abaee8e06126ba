//! `tock setup`: a config file for a provider, question by question. It
//! asks which provider, where its key comes from (an environment variable
//! or a command; never the key itself), checks the server by listing its
//! models, and writes the file (private) where tock reads it. With a file
//! there already it changes nothing and prints what to add to it.

use std::io::{BufRead, Write};
use std::path::Path;
use std::time::Duration;

use anyhow::{Result, anyhow, bail};

use crate::config::{Config, ConfigSource};

/// How long the check of the server may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(15);

/// One provider as setup offers it.
struct Choice {
    label: &'static str,
    provider: &'static str,
    /// The entry's name, offered.
    name: &'static str,
    model: &'static str,
    key_env: Option<&'static str>,
}

const CHOICES: [Choice; 4] = [
    Choice {
        label: "OpenAI (api.openai.com)",
        provider: "openai",
        name: "openai",
        model: "gpt-4o-mini",
        key_env: Some("OPENAI_API_KEY"),
    },
    Choice {
        label: "Anthropic (api.anthropic.com)",
        provider: "anthropic",
        name: "claude",
        model: "claude-sonnet-4-5",
        key_env: Some("ANTHROPIC_API_KEY"),
    },
    Choice {
        label: "Ollama (a local server)",
        provider: "ollama",
        name: "local",
        model: "llama3.2",
        key_env: None,
    },
    Choice {
        label: "another OpenAI-compatible server (OpenRouter, LM Studio, vLLM, …)",
        provider: "openai",
        name: "main",
        model: "",
        key_env: Some("OPENAI_API_KEY"),
    },
];

/// The questions, read from `input` and asked on `out`.
struct Asker<R: BufRead, W: Write> {
    input: R,
    out: W,
}

impl<R: BufRead, W: Write> Asker<R, W> {
    /// The answer to `question`, or `default` for an empty one.
    fn ask(&mut self, question: &str, default: &str) -> Result<String> {
        if default.is_empty() {
            write!(self.out, "{question}: ")?;
        } else {
            write!(self.out, "{question} [{default}]: ")?;
        }
        self.out.flush()?;
        let mut line = String::new();
        if self.input.read_line(&mut line)? == 0 {
            bail!("setup ended before it was done (no more input); nothing was written");
        }
        let answer = line.trim();
        Ok(if answer.is_empty() {
            default.to_string()
        } else {
            answer.to_string()
        })
    }

    /// A number from 1 to `n`, asked again until it is one.
    fn choose(&mut self, question: &str, n: usize) -> Result<usize> {
        loop {
            let a = self.ask(question, "1")?;
            match a.parse::<usize>() {
                Ok(k) if (1..=n).contains(&k) => return Ok(k),
                _ => writeln!(self.out, "  a number from 1 to {n}, please")?,
            }
        }
    }

    /// An answer that is not empty, asked again until it is given.
    fn require(&mut self, question: &str) -> Result<String> {
        loop {
            let a = self.ask(question, "")?;
            if !a.is_empty() {
                return Ok(a);
            }
            writeln!(self.out, "  this one is needed")?;
        }
    }
}

/// A TOML string (quoted and escaped).
fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

pub(super) fn setup(path: Option<&Path>) -> Result<()> {
    let stdin = std::io::stdin();
    let mut asker = Asker {
        input: stdin.lock(),
        out: std::io::stdout(),
    };
    run(&mut asker, path)
}

fn run<R: BufRead, W: Write>(q: &mut Asker<R, W>, path: Option<&Path>) -> Result<()> {
    writeln!(
        q.out,
        "tock setup: a model for tock to talk to. Enter takes the answer in [brackets]."
    )?;
    writeln!(q.out, "Which provider?")?;
    for (i, c) in CHOICES.iter().enumerate() {
        writeln!(q.out, "  {}) {}", i + 1, c.label)?;
    }
    let choice = &CHOICES[q.choose("provider", CHOICES.len())? - 1];
    let mut entry = vec![format!("provider = {}", quoted(choice.provider))];
    match choice.provider {
        "ollama" => {
            let host = q.ask("Ollama's address", "127.0.0.1:11434")?;
            entry.push(format!(
                "base_url = {}",
                quoted(&crate::llm::ollama::normalize_base_url(&host))
            ));
        }
        _ if choice.model.is_empty() => {
            let url = q.require("the server's base URL (e.g. http://localhost:1234/v1)")?;
            entry.push(format!("base_url = {}", quoted(&url)));
        }
        _ => {}
    }
    if let Some(var) = choice.key_env {
        writeln!(
            q.out,
            "Where does the API key come from? (it is never written to the file)"
        )?;
        writeln!(q.out, "  1) an environment variable")?;
        writeln!(
            q.out,
            "  2) a command that prints it (a password manager: pass show openai)"
        )?;
        writeln!(q.out, "  3) none (a local server that needs no key)")?;
        match q.choose("key", 3)? {
            1 => {
                let name = q.ask("the variable", var)?;
                entry.push(format!("api_key_env = {}", quoted(&name)));
            }
            2 => {
                let cmd = q.require("the command")?;
                entry.push(format!("api_key_cmd = {}", quoted(&cmd)));
            }
            _ => {}
        }
    }
    // The server's list of models, as the entry reaches it: a wrong key or
    // address shows now, not at the first message.
    let name = "setup";
    let listed = check(&entry, name);
    match &listed {
        Ok(ids) if ids.is_empty() => writeln!(q.out, "checked: the server answers")?,
        Ok(ids) => {
            let shown: Vec<&str> = ids.iter().take(15).map(String::as_str).collect();
            let more = ids.len().saturating_sub(shown.len());
            writeln!(
                q.out,
                "checked: the server lists {} models: {}{}",
                ids.len(),
                shown.join(", "),
                if more > 0 {
                    format!(" (+{more} more)")
                } else {
                    String::new()
                }
            )?;
        }
        Err(e) => writeln!(
            q.out,
            "check failed: {} (the file is written all the same; fix it there, or in the environment)",
            crate::sanitize::sanitize_line(e)
        )?,
    }
    let suggested = match &listed {
        Ok(ids) if !choice.model.is_empty() && ids.iter().any(|i| i == choice.model) => {
            choice.model.to_string()
        }
        Ok(ids) if !ids.is_empty() && choice.model.is_empty() => ids[0].clone(),
        _ => choice.model.to_string(),
    };
    let model = if suggested.is_empty() {
        q.require("the model's id")?
    } else {
        q.ask("the model's id", &suggested)?
    };
    entry.insert(1, format!("model = {}", quoted(&model)));
    let entry_name = loop {
        let n = q.ask("a name for it in tock (/model NAME)", choice.name)?;
        if !n.is_empty()
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            break n;
        }
        writeln!(q.out, "  letters, digits, - and _ only")?;
    };
    let table = format!("[models.{entry_name}]\n{}\n", entry.join("\n"));
    let file = format!(
        "# Written by `tock setup`. Every setting: the Configuration section of tock's README.\ndefault_model = {}\n\n{table}",
        quoted(&entry_name)
    );
    // What is written must read back as a config tock takes.
    toml::from_str::<Config>(&file).map_err(|e| anyhow!("the config setup made is wrong: {e}"))?;
    let Some(path) = path else {
        writeln!(
            q.out,
            "\nNo config directory is known here; put this in a file and name it with --config or TOCK_CONFIG:\n\n{file}"
        )?;
        return Ok(());
    };
    let shown = path.display();
    if path.exists() {
        writeln!(
            q.out,
            "\n{shown} is there already, and setup changes nothing in it. To use this model, add:\n\n{table}\nand make it the default with `default_model = {}` at the top (or choose it with /model {entry_name}).",
            quoted(&entry_name)
        )?;
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        crate::files::create_private_dir(dir)
            .map_err(|e| anyhow!("creating {}: {e}", dir.display()))?;
    }
    crate::files::write_private(path, file.as_bytes()).map_err(|e| anyhow!(e))?;
    writeln!(
        q.out,
        "\nwrote {shown}: tock now talks to {model} ({}) as `{entry_name}`; run `tock` (or `tock ask \"hello\"`).",
        choice.provider
    )?;
    Ok(())
}

/// The ids the entry's server lists, or why it could not be asked.
fn check(entry: &[String], name: &str) -> std::result::Result<Vec<String>, String> {
    // A model id is needed to build the entry; the list does not depend on it.
    let text = format!("[models.{name}]\nmodel = \"x\"\n{}\n", entry.join("\n"));
    let cfg: Config = toml::from_str(&text).map_err(|e| e.to_string())?;
    let source = ConfigSource::from_config(cfg);
    let resolved = source.resolve(Some(name))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async {
        match tokio::time::timeout(CHECK_TIMEOUT, resolved.provider.list_models()).await {
            Ok(Ok(list)) => Ok(list.into_iter().map(|m| m.id).collect()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("no answer in {} s", CHECK_TIMEOUT.as_secs())),
        }
    })
}
