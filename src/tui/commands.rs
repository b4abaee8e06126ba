//! Slash commands: one table used for parsing, for `/help`, and for Tab
//! completion. Aliases live here and nowhere else.

/// What a command's argument is, for completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    None,
    Text,
    Model,
    Role,
    Path,
    Theme,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    Later,
    At,
    Every,
    New,
    Rename,
    Delete,
    Model,
    With,
    Role,
    Attach,
    Detach,
    Retry,
    Resume,
    Copy,
    Export,
    Search,
    Fork,
    Tools,
    Status,
    Sidebar,
    Mouse,
    Theme,
    Help,
    Quit,
}

pub struct Spec {
    pub command: Command,
    /// The name first, then its aliases.
    pub names: &'static [&'static str],
    pub usage: &'static str,
    pub help: &'static str,
    pub arg: Arg,
}

const fn spec(
    command: Command,
    names: &'static [&'static str],
    usage: &'static str,
    help: &'static str,
    arg: Arg,
) -> Spec {
    Spec {
        command,
        names,
        usage,
        help,
        arg,
    }
}

pub static COMMANDS: &[Spec] = &[
    spec(
        Command::Later,
        &["/later"],
        "/later DURATION TEXT",
        "send later: /later 1h30m check the build",
        Arg::Text,
    ),
    spec(
        Command::At,
        &["/at"],
        "/at TIME TEXT",
        "send at a time: /at tomorrow 9am stand-up notes",
        Arg::Text,
    ),
    spec(
        Command::Every,
        &["/every"],
        "/every EXPR TEXT",
        "repeat: /every weekday 9am stand-up notes, /every 2h check the queue, /every cron \"0 9 * * 1-5\" …",
        Arg::Text,
    ),
    spec(
        Command::New,
        // `/clear` as Claude Code names it: a fresh context (the
        // conversation left stays in the list).
        &["/new", "/clear"],
        "/new [TITLE]",
        "new conversation (the one left stays in the list)",
        Arg::Text,
    ),
    spec(
        Command::Rename,
        &["/rename"],
        "/rename TITLE",
        "rename this conversation",
        Arg::Text,
    ),
    spec(
        Command::Delete,
        &["/delete"],
        "/delete",
        "delete this conversation (asks first: Enter yes, Esc no)",
        Arg::None,
    ),
    spec(
        Command::Model,
        &["/model"],
        "/model [NAME]",
        "show or switch this conversation's model",
        Arg::Model,
    ),
    spec(
        Command::With,
        &["/with"],
        "/with MODEL TEXT",
        "send one message to another model",
        Arg::Model,
    ),
    spec(
        Command::Role,
        &["/role"],
        "/role [NAME|none]",
        "show or set the role (system prompt)",
        Arg::Role,
    ),
    spec(
        Command::Attach,
        &["/attach"],
        "/attach PATH",
        "attach an image or text file to the next message",
        Arg::Path,
    ),
    spec(
        Command::Detach,
        &["/detach"],
        "/detach [NAME]",
        "remove an attachment of the next message by its name, or all of them",
        Arg::Text,
    ),
    spec(
        Command::Retry,
        &["/retry", "/regen"],
        "/retry",
        "regenerate the last reply",
        Arg::None,
    ),
    spec(
        Command::Resume,
        &["/resume"],
        "/resume",
        "resume a queue paused by a stop",
        Arg::None,
    ),
    spec(
        Command::Copy,
        &["/copy"],
        "/copy [N]",
        "copy the last reply, or its code block N (the last reply with code)",
        Arg::Text,
    ),
    spec(
        Command::Export,
        &["/export"],
        "/export [PATH]",
        "export this conversation to Markdown",
        Arg::Path,
    ),
    spec(
        Command::Search,
        &["/search", "/find"],
        "/search [TEXT]",
        "search every conversation (Ctrl+F): Enter opens the message",
        Arg::Text,
    ),
    spec(
        Command::Tools,
        &["/tools", "/mcp"],
        "/tools",
        "the tools the model is offered (tock's and the MCP servers'), their state and approval rules",
        Arg::None,
    ),
    spec(
        Command::Status,
        &["/status"],
        "/status",
        "what `tock status` prints: the dispatcher, what waits and why, the model and whether its server answers",
        Arg::None,
    ),
    spec(
        Command::Fork,
        &["/fork"],
        "/fork",
        "a new conversation with this one's history up to the last message on screen (scroll up to fork earlier)",
        Arg::None,
    ),
    spec(
        Command::Sidebar,
        &["/sidebar"],
        "/sidebar",
        "show / hide the conversation list",
        Arg::None,
    ),
    spec(
        Command::Mouse,
        &["/mouse"],
        "/mouse",
        "mouse capture on / off",
        Arg::None,
    ),
    spec(
        Command::Theme,
        &["/theme"],
        "/theme [auto|dark|light]",
        "show or switch the colours for this session ([ui] theme in the config keeps it)",
        Arg::Theme,
    ),
    spec(
        Command::Help,
        &["/help"],
        "/help",
        "every key and command",
        Arg::None,
    ),
    spec(
        Command::Quit,
        &["/quit", "/q", "/exit"],
        "/quit",
        "quit",
        Arg::None,
    ),
];

/// Split a composer line starting with `/` into its command and argument.
pub fn parse(line: &str) -> Result<(&'static Spec, &str), String> {
    let (name, arg) = line
        .split_once(char::is_whitespace)
        .map(|(c, a)| (c, a.trim()))
        .unwrap_or((line.trim(), ""));
    COMMANDS
        .iter()
        .find(|s| s.names.contains(&name))
        .map(|s| (s, arg))
        .ok_or_else(|| {
            // A slip of a letter or two names the command meant.
            let meant = COMMANDS
                .iter()
                .flat_map(|s| s.names.iter())
                .filter(|n| n.len() > 2)
                .map(|n| (strsim::levenshtein(name, n), *n))
                .filter(|(d, _)| *d <= 2)
                .min();
            match meant {
                Some((_, n)) => format!(
                    "unknown command {} — did you mean {n}? (/help lists them; start with // to send a literal /)",
                    crate::sanitize::sanitize_line(name)
                ),
                None => format!(
                    "unknown command {} — /help lists them (start with // to send a literal /)",
                    crate::sanitize::sanitize_line(name)
                ),
            }
        })
}

/// Where completion candidates come from.
pub struct Candidates<'a> {
    pub models: &'a [String],
    pub roles: &'a [String],
}

/// Complete the composer line (Tab): a command name, or the argument of a
/// command that takes a model, a role or a path. Returns the new line, or
/// None when nothing (or nothing more) completes.
pub fn complete(line: &str, c: &Candidates<'_>) -> Option<String> {
    if let Some((name, arg)) = line.split_once(' ')
        && let Some(spec) = COMMANDS.iter().find(|s| s.names.contains(&name))
        && matches!(spec.arg, Arg::Path)
    {
        return complete_path(arg).map(|p| format!("{name} {p}"));
    }
    let (head, typed, names) = matching(line, c)?;
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let one = names.len() == 1;
    extend(typed, &refs).map(|done| format!("{head}{done}{}", if one { " " } else { "" }))
}

/// Whether Tab on `line` completes a model name (`/model gp`, `/with o`).
pub fn completes_a_model(line: &str) -> bool {
    line.split_once(' ').is_some_and(|(name, arg)| {
        !arg.contains(' ')
            && COMMANDS
                .iter()
                .any(|s| s.names.contains(&name) && s.arg == Arg::Model)
    })
}

/// What Tab could complete the line to, when it cannot go further alone:
/// the command names, or the argument's values, that start with what is
/// typed (`/mo` → `/model`, `/mouse`).
pub fn choices(line: &str, c: &Candidates<'_>) -> Vec<String> {
    if let Some((name, arg)) = line.split_once(' ')
        && COMMANDS
            .iter()
            .any(|s| s.arg == Arg::Path && s.names.contains(&name))
    {
        return path_choices(&expand_home(arg));
    }
    matching(line, c).map(|(_, _, n)| n).unwrap_or_default()
}

/// The word Tab completes: what comes before it, what of it is typed, and
/// the candidates that start with that. None for a path or free text.
fn matching<'a>(line: &'a str, c: &Candidates<'_>) -> Option<(&'a str, &'a str, Vec<String>)> {
    let Some((name, arg)) = line.split_once(' ') else {
        let names = COMMANDS
            .iter()
            .flat_map(|s| s.names.iter().copied())
            .filter(|n| n.starts_with(line))
            .map(String::from)
            .collect();
        return Some(("", line, names));
    };
    let spec = COMMANDS.iter().find(|s| s.names.contains(&name))?;
    let pool: Vec<String> = match spec.arg {
        Arg::Model => c.models.to_vec(),
        Arg::Role => c
            .roles
            .iter()
            .cloned()
            .chain(["none".to_string()])
            .collect(),
        Arg::Theme => ["auto", "dark", "light"].map(String::from).to_vec(),
        Arg::Path | Arg::None | Arg::Text => return None,
    };
    // Only the first word after the command (`/with MODEL TEXT`).
    if arg.contains(' ') {
        return None;
    }
    let names = pool.into_iter().filter(|n| n.starts_with(arg)).collect();
    Some((&line[..name.len() + 1], arg, names))
}

/// The longest common extension of `prefix` among `names`, if longer than it.
fn extend(prefix: &str, names: &[&str]) -> Option<String> {
    let first = names.first()?;
    let mut common = first.to_string();
    for n in &names[1..] {
        while !n.starts_with(&common) {
            common.pop();
        }
    }
    (common.len() > prefix.len()).then_some(common)
}

/// Complete a file path (`~/` expanded for reading, kept as typed).
/// Tab on `… @pa`: the last word, an `@path` mention, completed as a path
/// (a space in it written `\ `, as a shell does, so that it stays one word).
pub fn complete_mention(line: &str) -> Option<String> {
    let start = last_word_start(line);
    let word = unescape_spaces(line[start..].strip_prefix('@')?);
    complete_path(&word).map(|p| format!("{}@{}", &line[..start], p.replace(' ', "\\ ")))
}

/// Where the last word of `line` starts: after its last space that is not
/// written `\ `.
fn last_word_start(line: &str) -> usize {
    let mut start = 0;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        if c.is_whitespace() && !escaped {
            start = i + c.len_utf8();
        }
        escaped = c == '\\' && !escaped;
    }
    start
}

/// A space written `\ ` (as a shell writes it, and Tab for `@path`) as a space.
pub fn unescape_spaces(word: &str) -> String {
    word.replace("\\ ", " ")
}

/// The words of a message as mentions read them: split at spaces, where
/// `\ ` is a space within a word (a path with a space, as Tab writes it).
fn mention_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek() == Some(&' ') {
            word.push(' ');
            chars.next();
        } else if c.is_whitespace() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
        } else {
            word.push(c);
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// The files a message mentions as `@path` (words that name a readable
/// file; `@someone` that is no file stays text).
pub fn mentioned_files(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in mention_words(text) {
        let Some(p) = word.strip_prefix('@') else {
            continue;
        };
        // A mention at the end of a sentence: "see @notes.txt."
        let p = p.trim_end_matches([',', '.', ';', ':', ')', '!', '?']);
        let path = expand_home(p);
        if !p.is_empty() && std::path::Path::new(&path).is_file() && !out.contains(&path) {
            out.push(path);
        }
    }
    out
}

fn complete_path(arg: &str) -> Option<String> {
    let (dir_part, file_part, names) = path_names(arg)?;
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    extend(file_part, &refs).map(|done| format!("{dir_part}{done}"))
}

/// The names in the folder of `arg` that start as its last part does
/// (folders with a `/`), sorted: what Tab chooses among.
pub fn path_choices(arg: &str) -> Vec<String> {
    path_names(arg)
        .map(|(_, _, names)| names)
        .unwrap_or_default()
}

/// The names Tab may complete the mention at the end of `line` to.
pub fn mention_choices(line: &str) -> Vec<String> {
    line[last_word_start(line)..]
        .strip_prefix('@')
        .map(|w| path_choices(&unescape_spaces(w)))
        .unwrap_or_default()
}

fn path_names(arg: &str) -> Option<(&str, &str, Vec<String>)> {
    let (dir_part, file_part) = match arg.rfind('/') {
        Some(i) => (&arg[..=i], &arg[i + 1..]),
        None => ("", arg),
    };
    let dir = if dir_part.is_empty() {
        ".".to_string()
    } else {
        expand_home(dir_part)
    };
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            // Hidden files only when asked for.
            if !name.starts_with(file_part)
                || (name.starts_with('.') && !file_part.starts_with('.'))
            {
                return None;
            }
            let is_dir = e.file_type().map(|t| t.is_dir()).unwrap_or(false);
            Some(if is_dir { format!("{name}/") } else { name })
        })
        .collect();
    names.sort();
    Some((dir_part, file_part, names))
}

/// `~/x` → `$HOME/x`.
pub fn expand_home(p: &str) -> String {
    match (p.strip_prefix("~/"), std::env::var("HOME")) {
        (Some(rest), Ok(home)) => format!("{home}/{rest}"),
        _ => p.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_parse_to_one_command() {
        assert_eq!(
            parse("/regen").map(|(s, _)| s.command).ok(),
            Some(Command::Retry)
        );
        assert_eq!(
            parse("/retry").map(|(s, _)| s.command).ok(),
            Some(Command::Retry)
        );
        // As Claude Code and codex name them.
        assert_eq!(
            parse("/clear").map(|(s, _)| s.command).ok(),
            Some(Command::New)
        );
        assert_eq!(
            parse("/exit").map(|(s, _)| s.command).ok(),
            Some(Command::Quit)
        );
        assert_eq!(
            parse("/later 1h  check it ")
                .map(|(s, a)| (s.command, a))
                .ok(),
            Some((Command::Later, "1h  check it"))
        );
        assert!(
            parse("/nope x")
                .err()
                .is_some_and(|e| e.starts_with("unknown command /nope"))
        );
    }

    #[test]
    fn completion_of_names_models_and_roles() {
        let models = vec![
            "gpt-4o".to_string(),
            "gpt-4o-mini".to_string(),
            "echo".to_string(),
        ];
        let roles = vec!["pirate".to_string()];
        let c = Candidates {
            models: &models,
            roles: &roles,
        };
        assert_eq!(complete("/ren", &c).as_deref(), Some("/rename "));
        assert_eq!(
            complete("/re", &c),
            None,
            "rename, retry, regen, resume share only /re"
        );
        // Then Tab shows what it could be.
        let re = choices("/re", &c);
        assert!(
            re.len() >= 4 && re.iter().all(|n| n.starts_with("/re")),
            "{re:?}"
        );
        assert_eq!(choices("/mo", &c), ["/model", "/mouse"]);
        assert_eq!(choices("/model gpt", &c), ["gpt-4o", "gpt-4o-mini"]);
        assert!(choices("/later 1", &c).is_empty());
        assert_eq!(complete("/model g", &c).as_deref(), Some("/model gpt-4o"));
        assert_eq!(complete("/model e", &c).as_deref(), Some("/model echo "));
        assert_eq!(complete("/role p", &c).as_deref(), Some("/role pirate "));
        assert_eq!(complete("/with ec", &c).as_deref(), Some("/with echo "));
        assert!(completes_a_model("/model fake-") && completes_a_model("/with o"));
        assert!(!completes_a_model("/with o3 hi") && !completes_a_model("/role p"));
        assert!(!completes_a_model("/model"));
        assert_eq!(complete("/later 1", &c), None);
    }

    #[test]
    fn completion_of_paths() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes-2026.md"), "x").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let c = Candidates {
            models: &[],
            roles: &[],
        };
        let base = dir.path().display().to_string();
        assert_eq!(
            complete(&format!("/attach {base}/no"), &c),
            Some(format!("/attach {base}/notes-2026.md"))
        );
        assert_eq!(
            complete(&format!("/export {base}/s"), &c),
            Some(format!("/export {base}/sub/"))
        );
    }
}
