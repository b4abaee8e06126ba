//! Keymap as data, for every view: handlers look actions up here, and the
//! help popup and every footer are generated from the same table. The
//! config's `[keys]` section replaces a binding's keys (`"strip.cancel" =
//! "x"`); a binding that cannot be read keeps its default and says why.

use std::collections::BTreeMap;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::config::KeySpec;

/// Where a binding applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Anywhere on the main screen (unless a popup takes the key).
    Main,
    Composer,
    Strip,
    Sidebar,
    Approval,
    Scheduled,
    Picker,
    Prompt,
    Confirm,
    Help,
    Search,
}

impl Scope {
    pub const ALL: [Scope; 11] = [
        Scope::Main,
        Scope::Composer,
        Scope::Strip,
        Scope::Sidebar,
        Scope::Approval,
        Scope::Scheduled,
        Scope::Picker,
        Scope::Prompt,
        Scope::Confirm,
        Scope::Help,
        Scope::Search,
    ];

    /// The prefix of this scope's names in `[keys]`.
    pub fn config_name(self) -> &'static str {
        match self {
            Scope::Main => "main",
            Scope::Composer => "composer",
            Scope::Strip => "strip",
            Scope::Sidebar => "sidebar",
            Scope::Approval => "approval",
            Scope::Scheduled => "scheduled",
            Scope::Picker => "picker",
            Scope::Prompt => "prompt",
            Scope::Confirm => "confirm",
            Scope::Help => "help",
            Scope::Search => "search",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Scope::Main => "Anywhere",
            Scope::Composer => "Composer",
            Scope::Strip => "Pending strip (Tab to focus)",
            Scope::Sidebar => "Conversation list (Tab to focus)",
            Scope::Approval => "Tool approval card",
            Scope::Scheduled => "Scheduled list (F2)",
            Scope::Picker => "Time picker (Ctrl+T)",
            Scope::Prompt => "Text prompts",
            Scope::Confirm => "Confirmations",
            Scope::Help => "This help",
            Scope::Search => "Search (Ctrl+F)",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    // Main
    Quit,
    Interrupt,
    Suspend,
    Redraw,
    Help,
    Notices,
    ScheduledPane,
    SearchAll,
    Fork,
    NewConversation,
    ToggleSidebar,
    ToggleMouse,
    PrevConversation,
    NextConversation,
    FocusNext,
    Stop,
    Regenerate,
    OlderVersion,
    NewerVersion,
    CopyLast,
    ToggleFold,
    PageUp,
    PageDown,
    ScrollUp,
    ScrollDown,
    Top,
    Bottom,
    // Composer
    Submit,
    Newline,
    TimePicker,
    EditLast,
    HistoryPrev,
    HistoryNext,
    Complete,
    KillToStart,
    Undo,
    ExternalEditor,
    // Lists (strip, sidebar, F2, picker, help)
    Up,
    Down,
    PageUpList,
    PageDownList,
    First,
    Last,
    Back,
    // Strip and F2
    EditItem,
    CancelItem,
    CancelQueued,
    SendNow,
    PullBack,
    RescheduleItem,
    RetryItem,
    Resume,
    Jump,
    ShowFinished,
    PauseSeries,
    SkipNext,
    // Sidebar
    Open,
    Rename,
    Delete,
    Filter,
    // Approval
    Left,
    Right,
    PickApprove,
    PickDeny,
    ShowCall,
    Confirm,
    // Confirm / prompts / picker
    Yes,
    No,
    Accept,
    Cancel,
    Preset1,
    Preset2,
    Preset3,
    Preset4,
    Custom,
}

/// A key as the user writes it: a code and modifiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

impl Key {
    const fn new(code: KeyCode, mods: KeyModifiers) -> Self {
        Self { code, mods }
    }

    /// Read `"ctrl+q"`, `"alt+enter"`, `"f2"`, `"shift+up"`, `"x"`, `"R"`.
    pub fn parse(s: &str) -> Result<Key, String> {
        let mut mods = KeyModifiers::NONE;
        let parts: Vec<&str> = s.split('+').collect();
        let (last, modifiers) = match parts.split_last() {
            // "ctrl++" binds the plus key.
            Some((l, m)) if l.is_empty() && s.ends_with("++") => ("+", &m[..m.len() - 1]),
            Some((l, m)) => (*l, m),
            None => return Err(format!("\"{s}\" is not a key")),
        };
        for m in modifiers {
            match m.to_ascii_lowercase().as_str() {
                "ctrl" | "control" | "c" => mods |= KeyModifiers::CONTROL,
                "alt" | "meta" | "m" | "a" => mods |= KeyModifiers::ALT,
                "shift" | "s" => mods |= KeyModifiers::SHIFT,
                other => {
                    return Err(format!(
                        "\"{other}\" in \"{s}\" is not a modifier (ctrl, alt, shift)"
                    ));
                }
            }
        }
        let lower = last.to_ascii_lowercase();
        let code = match lower.as_str() {
            "enter" | "return" => KeyCode::Enter,
            "esc" | "escape" => KeyCode::Esc,
            "tab" => KeyCode::Tab,
            "backtab" => KeyCode::BackTab,
            "backspace" => KeyCode::Backspace,
            "delete" | "del" => KeyCode::Delete,
            "insert" => KeyCode::Insert,
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "pageup" | "pgup" => KeyCode::PageUp,
            "pagedown" | "pgdn" => KeyCode::PageDown,
            "space" => KeyCode::Char(' '),
            f if f.len() > 1 && f.starts_with('f') && f[1..].parse::<u8>().is_ok() => {
                match f[1..].parse::<u8>() {
                    Ok(n @ 1..=24) => KeyCode::F(n),
                    _ => return Err(format!("\"{s}\": function keys go from f1 to f24")),
                }
            }
            _ => {
                let mut chars = last.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => {
                        // "R" is Shift+r; "Ctrl+Q" is how Ctrl+q is written.
                        if c.is_ascii_uppercase() && !mods.contains(KeyModifiers::CONTROL) {
                            mods |= KeyModifiers::SHIFT;
                        }
                        KeyCode::Char(if mods.contains(KeyModifiers::CONTROL) {
                            c.to_ascii_lowercase()
                        } else {
                            c
                        })
                    }
                    _ => return Err(format!("\"{last}\" in \"{s}\" is not a key name")),
                }
            }
        };
        Ok(Key { code, mods })
    }

    /// How help and footers write it: "Ctrl+Q", "Alt+Enter", "F2", "↑", "x".
    pub fn label(&self) -> String {
        let mut s = String::new();
        if self.mods.contains(KeyModifiers::CONTROL) {
            s.push_str("Ctrl+");
        }
        if self.mods.contains(KeyModifiers::ALT) {
            s.push_str("Alt+");
        }
        let shifted_char = matches!(self.code, KeyCode::Char(c) if c.is_ascii_uppercase())
            || self.code == KeyCode::BackTab;
        if self.mods.contains(KeyModifiers::SHIFT) && !shifted_char {
            s.push_str("Shift+");
        }
        let name = match self.code {
            KeyCode::Enter => "Enter".to_string(),
            KeyCode::Esc => "Esc".into(),
            KeyCode::Tab => "Tab".into(),
            KeyCode::BackTab => "Shift+Tab".into(),
            KeyCode::Backspace => "Backspace".into(),
            KeyCode::Delete => "Del".into(),
            KeyCode::Insert => "Ins".into(),
            KeyCode::Up => "↑".into(),
            KeyCode::Down => "↓".into(),
            KeyCode::Left => "←".into(),
            KeyCode::Right => "→".into(),
            KeyCode::Home => "Home".into(),
            KeyCode::End => "End".into(),
            KeyCode::PageUp => "PgUp".into(),
            KeyCode::PageDown => "PgDn".into(),
            KeyCode::F(n) => format!("F{n}"),
            KeyCode::Char(' ') => "Space".into(),
            KeyCode::Char(c) if self.mods.contains(KeyModifiers::CONTROL) => {
                c.to_ascii_uppercase().to_string()
            }
            KeyCode::Char(c) => c.to_string(),
            other => format!("{other:?}"),
        };
        s.push_str(&name);
        s
    }

    fn matches(&self, ev: &KeyEvent) -> bool {
        // Terminals differ on whether Shift is reported with uppercase letters.
        let mut mods =
            ev.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT);
        let mut want = self.mods;
        if let KeyCode::Char(c) = ev.code
            && !c.is_ascii_alphabetic()
            && !mods.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            // '?' or '/' arrive with or without Shift depending on the layout.
            mods.remove(KeyModifiers::SHIFT);
            want.remove(KeyModifiers::SHIFT);
        }
        if let KeyCode::Char(c) = ev.code
            && c.is_ascii_uppercase()
        {
            mods |= KeyModifiers::SHIFT;
        }
        self.code == ev.code && want == mods
    }
}

pub struct Binding {
    pub scope: Scope,
    pub action: Action,
    /// The name in `[keys]`, after the scope: `cancel` in `strip.cancel`.
    pub name: &'static str,
    pub keys: Vec<Key>,
    /// Shown in help; empty = not listed (a key the footer or help shows elsewhere).
    pub help: &'static str,
    /// Shown in help only once the terminal has shown it can report the key.
    pub needs_enhanced: bool,
}

const N: KeyModifiers = KeyModifiers::NONE;
const C: KeyModifiers = KeyModifiers::CONTROL;
const A: KeyModifiers = KeyModifiers::ALT;
const S: KeyModifiers = KeyModifiers::SHIFT;

fn k(code: KeyCode, mods: KeyModifiers) -> Key {
    Key::new(code, mods)
}
fn ch(c: char) -> Key {
    Key::new(KeyCode::Char(c), if c.is_ascii_uppercase() { S } else { N })
}
fn ctrl(c: char) -> Key {
    Key::new(KeyCode::Char(c), C)
}

/// The default bindings, one row per action and scope.
fn defaults() -> Vec<Binding> {
    use Action as Ac;
    use KeyCode as K;
    use Scope::*;
    let b = |scope, action, name, keys: Vec<Key>, help| Binding {
        scope,
        action,
        name,
        keys,
        help,
        needs_enhanced: false,
    };
    let list = |scope| {
        vec![
            b(scope, Ac::Up, "up", vec![k(K::Up, N), ch('k')], "move up"),
            b(
                scope,
                Ac::Down,
                "down",
                vec![k(K::Down, N), ch('j')],
                "move down",
            ),
        ]
    };
    let mut v = vec![
        b(
            Main,
            Ac::Help,
            "help",
            vec![k(K::F(1), N)],
            "every key (? too, on an empty composer)",
        ),
        b(
            Main,
            Ac::ScheduledPane,
            "scheduled",
            vec![k(K::F(2), N)],
            "everything tock will send, in all conversations",
        ),
        b(
            Main,
            Ac::Notices,
            "notices",
            vec![k(K::F(3), N)],
            "notification history",
        ),
        b(
            Main,
            Ac::OlderVersion,
            "older_version",
            vec![k(K::Char(','), A)],
            "previous version of a regenerated or edited message (‹1/2›)",
        ),
        b(
            Main,
            Ac::NewerVersion,
            "newer_version",
            vec![k(K::Char('.'), A)],
            "next version (on the last reply: the one the conversation goes on from)",
        ),
        b(
            Main,
            Ac::SearchAll,
            "search",
            vec![ctrl('f')],
            "search every conversation (/search TEXT too)",
        ),
        b(
            Main,
            Ac::Fork,
            "fork",
            // Alt+F (with Shift): Alt+f is the composer's word forward,
            // as in every readline, beside Alt+b.
            vec![k(K::Char('F'), A | S)],
            "fork: a new conversation with the history up to the last message on screen (scroll up to fork earlier; /fork too)",
        ),
        b(
            Main,
            Ac::ToggleSidebar,
            "sidebar",
            vec![k(K::F(4), N)],
            "show / hide the conversation list (/sidebar)",
        ),
        b(
            Main,
            Ac::ToggleMouse,
            "mouse",
            vec![k(K::Char('m'), A)],
            "mouse capture on / off (off: select text with the terminal)",
        ),
        b(
            Main,
            Ac::Interrupt,
            "interrupt",
            vec![ctrl('c')],
            "stop the reply, else clear the composer, else quit (press twice)",
        ),
        b(
            Main,
            Ac::Quit,
            "quit",
            vec![ctrl('q')],
            "quit (the draft and everything pending are kept)",
        ),
        b(
            Main,
            Ac::Suspend,
            "suspend",
            vec![ctrl('z')],
            "suspend (fg to come back)",
        ),
        b(
            Main,
            Ac::Redraw,
            "redraw",
            vec![ctrl('l')],
            "redraw the whole screen (after another program wrote over it)",
        ),
        b(
            Main,
            Ac::NewConversation,
            "new",
            vec![k(K::Char('n'), A)],
            "new conversation (/new)",
        ),
        b(
            Main,
            Ac::PrevConversation,
            "prev_conversation",
            vec![k(K::Up, A)],
            "previous conversation",
        ),
        b(
            Main,
            Ac::NextConversation,
            "next_conversation",
            vec![k(K::Down, A)],
            "next conversation",
        ),
        b(
            Main,
            Ac::FocusNext,
            "focus",
            // Shift+Tab from the composer: there Tab completes, indents,
            // or (on an empty composer) stays, so that a sentence typed
            // after a stray Tab is not read as the strip's letters.
            vec![k(K::BackTab, S), k(K::Tab, N)],
            "move focus: composer → pending strip → conversations (from the composer Shift+Tab; Tab there completes or indents)",
        ),
        b(
            Main,
            Ac::Stop,
            "stop",
            vec![k(K::Esc, N)],
            "stop the reply (kept, marked interrupted) and pause the queue; call off a regeneration not yet started",
        ),
        b(
            Main,
            Ac::Regenerate,
            "regenerate",
            vec![ctrl('r')],
            "regenerate the last (or stopped) reply",
        ),
        b(
            Main,
            Ac::CopyLast,
            "copy",
            vec![ctrl('y')],
            "copy the last reply (OSC 52; /copy N for code block N); after Ctrl+K/U/W in the composer, paste back what they cut",
        ),
        b(
            Main,
            Ac::ToggleFold,
            "fold",
            vec![ctrl('o')],
            "unfold / fold long messages of yours",
        ),
        b(
            Main,
            Ac::PageUp,
            "page_up",
            vec![k(K::PageUp, N)],
            "scroll the conversation a page up (mouse wheel too)",
        ),
        b(
            Main,
            Ac::PageDown,
            "page_down",
            vec![k(K::PageDown, N)],
            "scroll a page down",
        ),
        b(
            Main,
            Ac::ScrollUp,
            "scroll_up",
            vec![k(K::Up, S)],
            "scroll a line up",
        ),
        b(
            Main,
            Ac::ScrollDown,
            "scroll_down",
            vec![k(K::Down, S)],
            "scroll a line down",
        ),
        b(Main, Ac::Top, "top", vec![k(K::Home, C)], "oldest message"),
        b(
            Main,
            Ac::Bottom,
            "bottom",
            vec![k(K::End, C)],
            "latest message (End too, on an empty composer)",
        ),
        b(
            Composer,
            Ac::Submit,
            "submit",
            vec![k(K::Enter, N)],
            "send (queued while the model answers) or run a /command",
        ),
        b(
            Composer,
            Ac::Newline,
            "newline",
            vec![k(K::Enter, A), ctrl('j')],
            "new line",
        ),
        Binding {
            needs_enhanced: true,
            ..b(
                Composer,
                Ac::Newline,
                "newline_shift",
                vec![k(K::Enter, S)],
                "new line (this terminal reports it)",
            )
        },
        b(
            Composer,
            Ac::ExternalEditor,
            "editor",
            vec![ctrl('g')],
            "edit the draft in $VISUAL / $EDITOR",
        ),
        b(
            Composer,
            Ac::TimePicker,
            "time_picker",
            vec![ctrl('t')],
            "choose when the text is sent: presets or a time",
        ),
        b(
            Composer,
            Ac::EditLast,
            "edit_last",
            vec![k(K::Up, N)],
            "on an empty composer: edit and resend your last message",
        ),
        b(
            Composer,
            Ac::HistoryPrev,
            "history_prev",
            vec![ctrl('p')],
            "earlier message (↑ too, at the top while recalling)",
        ),
        b(
            Composer,
            Ac::HistoryNext,
            "history_next",
            vec![ctrl('n'), k(K::Down, N)],
            "later message (while recalling)",
        ),
        b(
            Composer,
            Ac::Complete,
            "complete",
            vec![k(K::Tab, N)],
            "complete a /command, model, role or path",
        ),
        b(
            Composer,
            Ac::KillToStart,
            "kill_line",
            vec![ctrl('u')],
            "delete to the start of the line (Ctrl+K to the end, Ctrl+W or Alt+Backspace a word back, Alt+d a word forward, Ctrl+A/E home/end, Alt+b/Alt+f a word back/forward)",
        ),
        b(
            Composer,
            Ac::Undo,
            "undo",
            // Ctrl+_ and Ctrl+/ send the byte crossterm reads as Ctrl+7.
            vec![ctrl('_'), ctrl('7'), ctrl('/')],
            "undo the last change to the draft: a word typed, deletions in a row, a cut or a paste (again for the one before)",
        ),
    ];
    v.extend(list(Strip));
    v.extend([
        b(Strip, Ac::EditItem, "edit", vec![ch('e')], "edit its text"),
        b(
            Strip,
            Ac::CancelItem,
            "cancel",
            vec![ch('x')],
            "cancel it (asks first: Enter yes, Esc no)",
        ),
        b(
            Strip,
            Ac::CancelQueued,
            "cancel-queued",
            vec![ch('X')],
            "cancel everything queued in this conversation (asks first; scheduled items stay)",
        ),
        b(
            Strip,
            Ac::SendNow,
            "send_now",
            vec![ch('s')],
            "send now (skip the queue)",
        ),
        b(
            Strip,
            Ac::PullBack,
            "pull_back",
            vec![ch('u')],
            "take it back into an empty composer",
        ),
        b(
            Strip,
            Ac::RescheduleItem,
            "reschedule",
            vec![ch('r')],
            "reschedule",
        ),
        b(
            Strip,
            Ac::RetryItem,
            "retry",
            vec![ch('R')],
            "retry a failed or expired item",
        ),
        b(
            Strip,
            Ac::Resume,
            "resume",
            vec![k(K::Enter, N)],
            "resume a queue paused by a stop",
        ),
        b(
            Strip,
            Ac::Back,
            "back",
            vec![k(K::Esc, N)],
            "back to the composer",
        ),
    ]);
    v.extend(list(Sidebar));
    v.extend([
        b(Sidebar, Ac::Open, "open", vec![k(K::Enter, N)], "open it"),
        b(
            Sidebar,
            Ac::NewConversation,
            "new",
            vec![ch('n')],
            "new conversation",
        ),
        b(Sidebar, Ac::Rename, "rename", vec![ch('r')], "rename"),
        b(
            Sidebar,
            Ac::Delete,
            "delete",
            vec![ch('d')],
            "delete (asks first: Enter yes, Esc no)",
        ),
        b(
            Sidebar,
            Ac::Filter,
            "filter",
            vec![ch('/')],
            "filter by title (Enter opens the first match, Esc clears)",
        ),
        b(
            Sidebar,
            Ac::Back,
            "back",
            vec![k(K::Esc, N)],
            "back to the composer (clears a filter)",
        ),
        b(
            Approval,
            Ac::Left,
            "left",
            vec![k(K::Left, N), k(K::BackTab, S)],
            "choose Approve",
        ),
        b(
            Approval,
            Ac::Right,
            "right",
            vec![k(K::Right, N), k(K::Tab, N)],
            "choose Deny (Tab: Approve, Deny, then on to the strip and the list)",
        ),
        b(
            Approval,
            Ac::PickApprove,
            "approve",
            vec![ch('a')],
            "choose Approve",
        ),
        b(Approval, Ac::PickDeny, "deny", vec![ch('d')], "choose Deny"),
        b(
            Approval,
            Ac::ShowCall,
            "show_call",
            vec![k(K::Char('o'), C)],
            "show the whole call, every argument (the card shows its start)",
        ),
        b(
            Approval,
            Ac::Confirm,
            "confirm",
            vec![k(K::Enter, N)],
            "confirm the choice (other typing goes to the composer; Enter on a message there queues it behind the call)",
        ),
    ]);
    v.extend(list(Scheduled));
    v.extend([
        b(
            Scheduled,
            Ac::PageUpList,
            "page_up",
            vec![k(K::PageUp, N)],
            "page up",
        ),
        b(
            Scheduled,
            Ac::PageDownList,
            "page_down",
            vec![k(K::PageDown, N)],
            "page down",
        ),
        b(
            Scheduled,
            Ac::First,
            "first",
            vec![k(K::Home, N), ch('g')],
            "first item",
        ),
        b(
            Scheduled,
            Ac::Last,
            "last",
            vec![k(K::End, N), ch('G')],
            "last item",
        ),
        b(
            Scheduled,
            Ac::RescheduleItem,
            "reschedule",
            vec![ch('r')],
            "reschedule",
        ),
        b(Scheduled, Ac::EditItem, "edit", vec![ch('e')], "edit"),
        b(
            Scheduled,
            Ac::CancelItem,
            "cancel",
            vec![ch('x')],
            "cancel (then Enter)",
        ),
        b(
            Scheduled,
            Ac::SendNow,
            "send_now",
            vec![ch('s')],
            "send now",
        ),
        b(Scheduled, Ac::RetryItem, "retry", vec![ch('R')], "retry"),
        b(
            Scheduled,
            Ac::Jump,
            "jump",
            vec![k(K::Enter, N)],
            "go to its conversation",
        ),
        b(
            Scheduled,
            Ac::ShowFinished,
            "show_finished",
            vec![ch('a')],
            "show / hide finished items",
        ),
        b(
            Scheduled,
            Ac::PauseSeries,
            "pause",
            vec![ch('p')],
            "pause / resume a recurring series",
        ),
        b(
            Scheduled,
            Ac::SkipNext,
            "skip_next",
            vec![ch('n')],
            "skip a series' next occurrence",
        ),
        b(
            Scheduled,
            Ac::Back,
            "close",
            vec![k(K::Esc, N), k(K::F(2), N)],
            "close",
        ),
    ]);
    // No j/k here: letters type a time (`jun 3 9am`), arrows move.
    v.extend([
        b(Picker, Ac::Up, "up", vec![k(K::Up, N)], "move up"),
        b(Picker, Ac::Down, "down", vec![k(K::Down, N)], "move down"),
        b(
            Picker,
            Ac::Preset1,
            "preset1",
            vec![ch('1')],
            "in 5 minutes",
        ),
        b(
            Picker,
            Ac::Preset2,
            "preset2",
            vec![ch('2')],
            "in 30 minutes",
        ),
        b(Picker, Ac::Preset3, "preset3", vec![ch('3')], "in 1 hour"),
        b(
            Picker,
            Ac::Preset4,
            "preset4",
            vec![ch('4')],
            "tomorrow 9:00",
        ),
        b(
            Picker,
            Ac::Custom,
            "custom",
            vec![ch('5'), ch('c')],
            "type a time",
        ),
        b(
            Picker,
            Ac::Accept,
            "accept",
            vec![k(K::Enter, N)],
            "schedule",
        ),
        b(Picker, Ac::Cancel, "cancel", vec![k(K::Esc, N)], "cancel"),
        b(Prompt, Ac::Accept, "accept", vec![k(K::Enter, N)], "save"),
        b(
            Prompt,
            Ac::Newline,
            "newline",
            vec![k(K::Enter, A), ctrl('j')],
            "new line (editing a message)",
        ),
        b(Prompt, Ac::Cancel, "cancel", vec![k(K::Esc, N)], "cancel"),
        b(
            Search,
            Ac::Up,
            "up",
            vec![k(K::Up, N), ctrl('p')],
            "previous match",
        ),
        b(
            Search,
            Ac::Down,
            "down",
            vec![k(K::Down, N), ctrl('n')],
            "next match",
        ),
        b(
            Search,
            Ac::PageUpList,
            "page_up",
            vec![k(K::PageUp, N)],
            "ten up",
        ),
        b(
            Search,
            Ac::PageDownList,
            "page_down",
            vec![k(K::PageDown, N)],
            "ten down",
        ),
        b(
            Search,
            Ac::Accept,
            "open",
            vec![k(K::Enter, N)],
            "open the conversation at the match",
        ),
        b(Search, Ac::Cancel, "close", vec![k(K::Esc, N)], "close"),
        // Not `y`: the question may be up under a word being typed where
        // the composer was meant ("dynamic" deleted a conversation with its
        // `d` and `y`, at any speed a person types).
        b(Confirm, Ac::Yes, "yes", vec![k(K::Enter, N)], "yes"),
        b(Confirm, Ac::No, "no", vec![k(K::Esc, N)], "no"),
    ]);
    // Help takes no letters: it opens on `?` in an empty composer, and
    // every other key closes it and goes on, so what is typed next lands
    // in the composer (j, k and q were taken, and "quick" lost its q).
    v.extend([
        b(Help, Ac::Up, "up", vec![k(K::Up, N)], "move up"),
        b(Help, Ac::Down, "down", vec![k(K::Down, N)], "move down"),
        b(
            Help,
            Ac::PageUpList,
            "page_up",
            vec![k(K::PageUp, N)],
            "page up",
        ),
        b(
            Help,
            Ac::PageDownList,
            "page_down",
            vec![k(K::PageDown, N)],
            "page down",
        ),
        b(Help, Ac::First, "top", vec![k(K::Home, N)], "top"),
        b(Help, Ac::Last, "bottom", vec![k(K::End, N)], "bottom"),
        b(
            Help,
            Ac::Back,
            "close",
            vec![k(K::Esc, N), k(K::F(1), N)],
            "close",
        ),
    ]);
    v
}

pub struct Keymap {
    bindings: Vec<Binding>,
}

impl Default for Keymap {
    fn default() -> Self {
        Self {
            bindings: defaults(),
        }
    }
}

impl Keymap {
    /// The defaults with the config's `[keys]` applied. Each entry that cannot
    /// be used gives one line in the returned errors and keeps its default.
    pub fn with_overrides(overrides: &BTreeMap<String, KeySpec>) -> (Self, Vec<String>) {
        let mut map = Self::default();
        let mut errors = Vec::new();
        for (name, spec) in overrides {
            let Some((scope, action)) = name.split_once('.') else {
                errors.push(format!(
                    "[keys] \"{name}\": write it as VIEW.ACTION, e.g. strip.cancel"
                ));
                continue;
            };
            let Some(b) = map
                .bindings
                .iter_mut()
                .find(|b| b.scope.config_name() == scope && b.name == action)
            else {
                errors.push(format!(
                    "[keys] \"{name}\" is not a binding (F1 lists them)"
                ));
                continue;
            };
            let keys = match spec.keys() {
                Ok(keys) => keys,
                Err(e) => {
                    errors.push(format!("[keys] \"{name}\": {e}; keeping the default"));
                    continue;
                }
            };
            match keys
                .into_iter()
                .map(Key::parse)
                .collect::<Result<Vec<_>, _>>()
            {
                Ok(keys) if !keys.is_empty() => b.keys = keys,
                Ok(_) => errors.push(format!("[keys] \"{name}\" has no key; keeping the default")),
                Err(e) => errors.push(format!("[keys] \"{name}\": {e}; keeping the default")),
            }
        }
        (map, errors)
    }

    /// The action bound to `key` in `scope`.
    pub fn action(&self, scope: Scope, key: &KeyEvent) -> Option<Action> {
        self.bindings
            .iter()
            .find(|b| b.scope == scope && b.keys.iter().any(|k| k.matches(key)))
            .map(|b| b.action)
    }

    /// "x" or "Esc / F2": the keys of `action` in `scope`, for footers.
    pub fn label(&self, scope: Scope, action: Action) -> String {
        self.bindings
            .iter()
            .filter(|b| b.scope == scope && b.action == action && !b.needs_enhanced)
            .flat_map(|b| b.keys.iter().map(Key::label))
            .collect::<Vec<_>>()
            .join(" / ")
    }

    /// The last key of `action` in `scope`: the one bound for where the
    /// first does something else (Shift+Tab moves the focus from a
    /// composer holding text, where Tab indents).
    pub fn last(&self, scope: Scope, action: Action) -> String {
        self.bindings
            .iter()
            .rfind(|b| b.scope == scope && b.action == action && !b.needs_enhanced)
            .and_then(|b| b.keys.last())
            .map(Key::label)
            .unwrap_or_default()
    }

    /// The first key of `action` in `scope` ("←"), for short hints.
    pub fn first(&self, scope: Scope, action: Action) -> String {
        self.bindings
            .iter()
            .find(|b| b.scope == scope && b.action == action && !b.needs_enhanced)
            .and_then(|b| b.keys.first())
            .map(Key::label)
            .unwrap_or_default()
    }

    /// Footer hints "x cancel · s send now" for these actions, in this order.
    pub fn hints(&self, scope: Scope, actions: &[(Action, &'static str)]) -> Vec<String> {
        actions
            .iter()
            .filter_map(|(a, what)| {
                let keys = self.label(scope, *a);
                (!keys.is_empty()).then(|| format!("{keys} {what}"))
            })
            .collect()
    }

    /// Rows for the help popup: (scope, keys, what it does).
    pub fn help_rows(&self, enhanced_keys: bool) -> Vec<(Scope, String, &'static str)> {
        let mut rows = Vec::new();
        for scope in Scope::ALL {
            for b in self
                .bindings
                .iter()
                .filter(|b| b.scope == scope && !b.help.is_empty())
                .filter(|b| enhanced_keys || !b.needs_enhanced)
            {
                let keys = b
                    .keys
                    .iter()
                    .map(Key::label)
                    .collect::<Vec<_>>()
                    .join(" / ");
                rows.push((scope, keys, b.help));
            }
        }
        rows
    }

    /// Every binding (for tests that every listed key reaches its action).
    pub fn bindings(&self) -> &[Binding] {
        &self.bindings
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_parse_and_label_round_trip() {
        for s in [
            "ctrl+q",
            "alt+enter",
            "f2",
            "shift+up",
            "x",
            "R",
            "esc",
            "ctrl+home",
            "space",
        ] {
            let k = Key::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
            assert_eq!(
                Key::parse(&k.label().replace('↑', "up")).ok(),
                Some(k),
                "{s}"
            );
        }
        assert!(Key::parse("hyper+x").is_err());
        assert!(Key::parse("f99").is_err());
        assert!(Key::parse("ctrl+nope").is_err());
    }

    #[test]
    fn overrides_replace_defaults_and_bad_ones_keep_them() {
        let mut o = BTreeMap::new();
        o.insert("strip.cancel".to_string(), KeySpec::One("d".into()));
        o.insert(
            "strip.send_now".to_string(),
            KeySpec::One("ctrl+bogus".into()),
        );
        o.insert("nowhere.thing".to_string(), KeySpec::One("x".into()));
        // `"main.quit" = 5` in the file: the entry is refused, not the file.
        o.insert(
            "main.quit".to_string(),
            KeySpec::Invalid(toml::Value::Integer(5)),
        );
        let (map, errors) = Keymap::with_overrides(&o);
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(
            errors
                .iter()
                .any(|e| e.contains("main.quit") && e.contains("5 is not a key")),
            "{errors:?}"
        );
        let ctrl_q = KeyEvent::new(KeyCode::Char('q'), KeyModifiers::CONTROL);
        assert_eq!(map.action(Scope::Main, &ctrl_q), Some(Action::Quit));
        let d = KeyEvent::new(KeyCode::Char('d'), KeyModifiers::NONE);
        let x = KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE);
        let s = KeyEvent::new(KeyCode::Char('s'), KeyModifiers::NONE);
        assert_eq!(map.action(Scope::Strip, &d), Some(Action::CancelItem));
        assert_eq!(map.action(Scope::Strip, &x), None);
        assert_eq!(map.action(Scope::Strip, &s), Some(Action::SendNow));
    }

    #[test]
    fn no_default_takes_the_keys_of_tmux_and_readline() {
        let map = Keymap::default();
        for c in ['b', 'e', 'u', 'a', 'k', 'w'] {
            let ev = KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL);
            let taken = map.action(Scope::Main, &ev);
            assert_eq!(taken, None, "Ctrl+{c} is taken in Main by {taken:?}");
            let in_composer = map.action(Scope::Composer, &ev);
            assert!(
                in_composer.is_none() || (c == 'u' && in_composer == Some(Action::KillToStart)),
                "Ctrl+{c} in the composer: {in_composer:?}"
            );
        }
    }
}
