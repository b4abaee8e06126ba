//! Keymap as data: the key handlers look actions up here and the help popup
//! is generated from the same table.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ctx {
    /// Anywhere (unless a popup takes the key).
    Global,
    Composer,
    Sidebar,
    Strip,
    Approval,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Quit,
    Help,
    Notices,
    ScheduledPane,
    TimePicker,
    NewConversation,
    ToggleSidebar,
    PrevConversation,
    NextConversation,
    FocusNext,
    Stop,
    Regenerate,
    EditLast,
    CopyLast,
    ScrollUp,
    ScrollDown,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Submit,
    Newline,
    HistoryPrev,
    HistoryNext,
    Suspend,
    // Sidebar
    Up,
    Down,
    Open,
    Rename,
    Delete,
    Search,
    // Strip
    EditItem,
    CancelItem,
    SendNow,
    PullBack,
    RescheduleItem,
    RetryItem,
    Back,
    // Approval
    Approve,
    Deny,
}

pub struct Binding {
    pub ctx: Ctx,
    pub code: KeyCode,
    pub mods: KeyModifiers,
    pub action: Action,
    /// Shown in help; empty = an alias not listed separately.
    pub keys: &'static str,
    pub help: &'static str,
}

const fn b(
    ctx: Ctx,
    code: KeyCode,
    mods: KeyModifiers,
    action: Action,
    keys: &'static str,
    help: &'static str,
) -> Binding {
    Binding {
        ctx,
        code,
        mods,
        action,
        keys,
        help,
    }
}

const N: KeyModifiers = KeyModifiers::NONE;
const C: KeyModifiers = KeyModifiers::CONTROL;
const A: KeyModifiers = KeyModifiers::ALT;
const S: KeyModifiers = KeyModifiers::SHIFT;

use Action as Ac;
use Ctx::*;
use KeyCode as K;

pub static BINDINGS: &[Binding] = &[
    b(
        Global,
        K::F(1),
        N,
        Ac::Help,
        "F1 / ?",
        "this help (? when the composer is empty)",
    ),
    b(
        Global,
        K::F(3),
        N,
        Ac::Notices,
        "F3",
        "notification history",
    ),
    b(
        Global,
        K::F(2),
        N,
        Ac::ScheduledPane,
        "F2",
        "scheduled list: everything tock will send, all conversations",
    ),
    b(
        Global,
        K::Char('q'),
        C,
        Ac::Quit,
        "Ctrl+Q",
        "quit (pending items are kept and sent next time)",
    ),
    b(
        Global,
        K::Char('n'),
        C,
        Ac::NewConversation,
        "Ctrl+N",
        "new conversation",
    ),
    b(
        Global,
        K::Char('b'),
        C,
        Ac::ToggleSidebar,
        "Ctrl+B",
        "show / hide the conversation list",
    ),
    b(
        Global,
        K::Up,
        A,
        Ac::PrevConversation,
        "Alt+↑ / Alt+↓",
        "previous / next conversation",
    ),
    b(Global, K::Down, A, Ac::NextConversation, "", ""),
    b(
        Global,
        K::Tab,
        N,
        Ac::FocusNext,
        "Tab",
        "move focus: composer → pending strip → conversations",
    ),
    b(
        Global,
        K::Esc,
        N,
        Ac::Stop,
        "Esc",
        "stop the reply (keeps what arrived, marked interrupted)",
    ),
    b(
        Global,
        K::Char('r'),
        C,
        Ac::Regenerate,
        "Ctrl+R",
        "regenerate / retry the last reply",
    ),
    b(
        Global,
        K::Char('e'),
        C,
        Ac::EditLast,
        "Ctrl+E",
        "edit and resend your last message",
    ),
    b(
        Global,
        K::Char('y'),
        C,
        Ac::CopyLast,
        "Ctrl+Y",
        "copy the last reply (OSC 52; /copy N for code block N)",
    ),
    b(
        Global,
        K::PageUp,
        N,
        Ac::PageUp,
        "PgUp / PgDn",
        "scroll the conversation (mouse wheel too)",
    ),
    b(Global, K::PageDown, N, Ac::PageDown, "", ""),
    b(
        Global,
        K::Home,
        C,
        Ac::Top,
        "Ctrl+Home / Ctrl+End",
        "oldest / latest (End too when the composer is empty)",
    ),
    b(Global, K::End, C, Ac::Bottom, "", ""),
    b(
        Global,
        K::Up,
        S,
        Ac::ScrollUp,
        "Shift+↑ / Shift+↓",
        "scroll by a line",
    ),
    b(Global, K::Down, S, Ac::ScrollDown, "", ""),
    b(
        Global,
        K::Char('z'),
        C,
        Ac::Suspend,
        "Ctrl+Z",
        "suspend (fg to come back)",
    ),
    b(
        Composer,
        K::Enter,
        N,
        Ac::Submit,
        "Enter",
        "send (queued if the model is answering) or run a /command",
    ),
    b(
        Composer,
        K::Enter,
        A,
        Ac::Newline,
        "Alt+Enter / Shift+Enter",
        "new line (Ctrl+J too)",
    ),
    b(Composer, K::Enter, S, Ac::Newline, "", ""),
    b(Composer, K::Char('j'), C, Ac::Newline, "", ""),
    b(
        Composer,
        K::Char('t'),
        C,
        Ac::TimePicker,
        "Ctrl+T",
        "schedule the composer text: presets or a time expression",
    ),
    b(
        Composer,
        K::Up,
        N,
        Ac::HistoryPrev,
        "↑ / ↓ (empty composer)",
        "recall earlier messages",
    ),
    b(Composer, K::Down, N, Ac::HistoryNext, "", ""),
    b(
        Sidebar,
        K::Up,
        N,
        Ac::Up,
        "↑ / ↓ / k / j",
        "select a conversation",
    ),
    b(Sidebar, K::Down, N, Ac::Down, "", ""),
    b(Sidebar, K::Char('k'), N, Ac::Up, "", ""),
    b(Sidebar, K::Char('j'), N, Ac::Down, "", ""),
    b(Sidebar, K::Enter, N, Ac::Open, "Enter", "open it"),
    b(
        Sidebar,
        K::Char('n'),
        N,
        Ac::NewConversation,
        "n",
        "new conversation",
    ),
    b(Sidebar, K::Char('r'), N, Ac::Rename, "r", "rename"),
    b(
        Sidebar,
        K::Char('d'),
        N,
        Ac::Delete,
        "d",
        "delete (asks y/n)",
    ),
    b(Sidebar, K::Char('/'), N, Ac::Search, "/", "filter by title"),
    b(Strip, K::Up, N, Ac::Up, "↑ / ↓", "select a pending item"),
    b(Strip, K::Down, N, Ac::Down, "", ""),
    b(Strip, K::Char('k'), N, Ac::Up, "", ""),
    b(Strip, K::Char('j'), N, Ac::Down, "", ""),
    b(Strip, K::Char('e'), N, Ac::EditItem, "e", "edit its text"),
    b(
        Strip,
        K::Char('x'),
        N,
        Ac::CancelItem,
        "x",
        "cancel it (asks y/n)",
    ),
    b(
        Strip,
        K::Char('s'),
        N,
        Ac::SendNow,
        "s",
        "send now (skip the queue)",
    ),
    b(
        Strip,
        K::Char('u'),
        N,
        Ac::PullBack,
        "u",
        "pull it back into the composer",
    ),
    b(
        Strip,
        K::Char('r'),
        N,
        Ac::RescheduleItem,
        "r",
        "reschedule",
    ),
    b(
        Strip,
        K::Char('R'),
        S,
        Ac::RetryItem,
        "R",
        "retry a failed or expired item",
    ),
    b(Strip, K::Char('R'), N, Ac::RetryItem, "", ""),
    b(Strip, K::Esc, N, Ac::Back, "Esc", "back to the composer"),
    b(
        Approval,
        K::Char('y'),
        N,
        Ac::Approve,
        "y",
        "approve the tool call",
    ),
    b(Approval, K::Char('n'), N, Ac::Deny, "n", "deny it"),
];

/// The action bound to `key` in `ctx` (Global bindings are looked up by the caller after).
pub fn lookup(ctx: Ctx, key: &KeyEvent) -> Option<Action> {
    // Terminals differ on whether Shift is reported with uppercase letters.
    let mods = key.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT);
    BINDINGS
        .iter()
        .find(|b| b.ctx == ctx && b.code == key.code && b.mods == mods)
        .map(|b| b.action)
}

pub fn context_name(ctx: Ctx) -> &'static str {
    match ctx {
        Global => "Anywhere",
        Composer => "Composer",
        Sidebar => "Conversation list (Tab to focus)",
        Strip => "Pending strip (Tab to focus)",
        Approval => "Tool approval card",
    }
}

/// Slash commands, for the help popup and completion hints.
pub static COMMANDS: &[(&str, &str)] = &[
    (
        "/later DURATION TEXT",
        "send later: /later 1h30m check the build",
    ),
    ("/at TIME TEXT", "send at: /at tomorrow 9am stand-up notes"),
    ("/new [TITLE]", "new conversation"),
    ("/rename TITLE", "rename this conversation"),
    ("/delete", "delete this conversation (asks y/n)"),
    ("/model [NAME]", "show or switch this conversation's model"),
    ("/with MODEL TEXT", "send one message to another model"),
    ("/role [NAME]", "show or set the role (system prompt)"),
    (
        "/attach PATH",
        "attach an image or text file to the next message",
    ),
    ("/retry", "regenerate the last reply"),
    ("/copy [N]", "copy the last reply, or code block N"),
    ("/export [PATH]", "export this conversation to Markdown"),
    ("/help", "this help"),
    ("/quit", "quit"),
];
