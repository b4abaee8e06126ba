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

const fn b(ctx: Ctx, code: KeyCode, mods: KeyModifiers, action: Action, keys: &'static str, help: &'static str) -> Binding {
    Binding { ctx, code, mods, action, keys, help }
}

const N: KeyModifiers = KeyModifiers::NONE;
const C: KeyModifiers = KeyModifiers::CONTROL;
const A: KeyModifiers = KeyModifiers::ALT;
const S: KeyModifiers = KeyModifiers::SHIFT;

use Action::*;
use Ctx::*;
use KeyCode::*;

pub static BINDINGS: &[Binding] = &[
    b(Global, F(1), N, Help, "F1 / ?", "this help (? when the composer is empty)"),
    b(Global, F(2), N, ScheduledPane, "F2", "scheduled list: everything tock will send, all conversations"),
    b(Global, Char('q'), C, Quit, "Ctrl+Q", "quit (pending items are kept and sent next time)"),
    b(Global, Char('n'), C, NewConversation, "Ctrl+N", "new conversation"),
    b(Global, Char('b'), C, ToggleSidebar, "Ctrl+B", "show / hide the conversation list"),
    b(Global, Up, A, PrevConversation, "Alt+↑ / Alt+↓", "previous / next conversation"),
    b(Global, Down, A, NextConversation, "", ""),
    b(Global, Tab, N, FocusNext, "Tab", "move focus: composer → pending strip → conversations"),
    b(Global, Esc, N, Stop, "Esc", "stop the reply (keeps what arrived, marked interrupted)"),
    b(Global, Char('r'), C, Regenerate, "Ctrl+R", "regenerate / retry the last reply"),
    b(Global, Char('e'), C, EditLast, "Ctrl+E", "edit and resend your last message"),
    b(Global, Char('y'), C, CopyLast, "Ctrl+Y", "copy the last reply (OSC 52; /copy N for code block N)"),
    b(Global, PageUp, N, PageUp, "PgUp / PgDn", "scroll the conversation (mouse wheel too)"),
    b(Global, PageDown, N, PageDown, "", ""),
    b(Global, Home, C, Top, "Ctrl+Home / Ctrl+End", "oldest / latest (End too when the composer is empty)"),
    b(Global, End, C, Bottom, "", ""),
    b(Global, Up, S, ScrollUp, "Shift+↑ / Shift+↓", "scroll by a line"),
    b(Global, Down, S, ScrollDown, "", ""),
    b(Global, Char('z'), C, Suspend, "Ctrl+Z", "suspend (fg to come back)"),
    b(Composer, Enter, N, Submit, "Enter", "send (queued if the model is answering) or run a /command"),
    b(Composer, Enter, A, Newline, "Alt+Enter / Shift+Enter", "new line (Ctrl+J too)"),
    b(Composer, Enter, S, Newline, "", ""),
    b(Composer, Char('j'), C, Newline, "", ""),
    b(Composer, Char('t'), C, TimePicker, "Ctrl+T", "schedule the composer text: presets or a time expression"),
    b(Composer, Up, N, HistoryPrev, "↑ / ↓ (empty composer)", "recall earlier messages"),
    b(Composer, Down, N, HistoryNext, "", ""),
    b(Sidebar, Up, N, Up, "↑ / ↓ / k / j", "select a conversation"),
    b(Sidebar, Down, N, Down, "", ""),
    b(Sidebar, Char('k'), N, Up, "", ""),
    b(Sidebar, Char('j'), N, Down, "", ""),
    b(Sidebar, Enter, N, Open, "Enter", "open it"),
    b(Sidebar, Char('n'), N, NewConversation, "n", "new conversation"),
    b(Sidebar, Char('r'), N, Rename, "r", "rename"),
    b(Sidebar, Char('d'), N, Delete, "d", "delete (asks y/n)"),
    b(Sidebar, Char('/'), N, Search, "/", "filter by title"),
    b(Strip, Up, N, Up, "↑ / ↓", "select a pending item"),
    b(Strip, Down, N, Down, "", ""),
    b(Strip, Char('k'), N, Up, "", ""),
    b(Strip, Char('j'), N, Down, "", ""),
    b(Strip, Char('e'), N, EditItem, "e", "edit its text"),
    b(Strip, Char('x'), N, CancelItem, "x", "cancel it (asks y/n)"),
    b(Strip, Char('s'), N, SendNow, "s", "send now (skip the queue)"),
    b(Strip, Char('u'), N, PullBack, "u", "pull it back into the composer"),
    b(Strip, Char('r'), N, RescheduleItem, "r", "reschedule"),
    b(Strip, Char('R'), S, RetryItem, "R", "retry a failed or expired item"),
    b(Strip, Char('R'), N, RetryItem, "", ""),
    b(Strip, Esc, N, Back, "Esc", "back to the composer"),
    b(Approval, Char('y'), N, Approve, "y", "approve the tool call"),
    b(Approval, Char('n'), N, Deny, "n", "deny it"),
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
    ("/later DURATION TEXT", "send later: /later 1h30m check the build"),
    ("/at TIME TEXT", "send at: /at tomorrow 9am stand-up notes"),
    ("/new [TITLE]", "new conversation"),
    ("/rename TITLE", "rename this conversation"),
    ("/delete", "delete this conversation (asks y/n)"),
    ("/model [NAME]", "show or switch this conversation's model"),
    ("/role [NAME]", "show or set the role (system prompt)"),
    ("/attach PATH", "attach an image or text file to the next message"),
    ("/retry", "regenerate the last reply"),
    ("/copy [N]", "copy the last reply, or code block N"),
    ("/export [PATH]", "export this conversation to Markdown"),
    ("/help", "this help"),
    ("/quit", "quit"),
];
