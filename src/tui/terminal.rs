//! The one module that owns the terminal: raw mode, alternate screen, mouse,
//! bracketed paste, keyboard enhancement, the panic hook, and restoring all
//! of it on exit, panic, signals and Ctrl+Z.

use std::io::{BufWriter, Stdout, Write, stdout};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Result;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, DisableMouseCapture, EnableBracketedPaste,
    EnableFocusChange, EnableMouseCapture, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags,
    PushKeyboardEnhancementFlags,
};
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::crossterm::{cursor, execute};
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};

/// Frames are written through a buffer big enough for a whole frame, so one
/// frame is one `write` (the bare `Stdout` flushes every 1 KiB).
pub type Term = Terminal<CrosstermBackend<BufWriter<Stdout>>>;

/// A fixed viewport, resized only when the terminal says it was resized: a
/// full-screen viewport asks the terminal for its size on every frame (which
/// opens `/dev/tty` each time).
fn new_term() -> Result<Term> {
    let (width, height) = ratatui::crossterm::terminal::size()?;
    let options = TerminalOptions {
        viewport: Viewport::Fixed(Rect::new(0, 0, width, height)),
    };
    let out = BufWriter::with_capacity(1 << 16, stdout());
    Ok(Terminal::with_options(CrosstermBackend::new(out), options)?)
}

/// The terminal was resized to `width`×`height` (a resize event).
pub fn resize(t: &mut Term, width: u16, height: u16) -> Result<()> {
    t.resize(Rect::new(0, 0, width, height))?;
    Ok(())
}

static ENHANCED: AtomicBool = AtomicBool::new(false);
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Mouse capture wanted (the config's `ui.mouse`, toggled by a key).
static MOUSE: AtomicBool = AtomicBool::new(true);

/// Take over the terminal.
pub fn enter(mouse: bool) -> Result<Term> {
    MOUSE.store(mouse, Ordering::SeqCst);
    install_panic_hook();
    setup()?;
    // No `Terminal::clear()`: it asks the terminal for the cursor position and
    // waits for the answer; the fresh alternate screen is already blank.
    new_term()
}

/// Keys typed before the UI reads the terminal (`tock⏎` and typing on at
/// once) are taken into crossterm's queue of events, where the UI's reader
/// finds them: the colour query (`theme::detect_background`) reads the
/// terminal itself and drops whatever comes before its answer. Raw mode
/// for the read: it makes a line typed but not ended readable.
pub fn keep_type_ahead() {
    if enable_raw_mode().is_err() {
        return;
    }
    // Only when something waits: crossterm's poll does not read at all
    // with no time to wait, and would wait the time it is given when
    // nothing was typed. Then one read of it (up to crossterm's 1 KB),
    // parsed and kept.
    let mut stdin = libc::pollfd {
        fd: libc::STDIN_FILENO,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, for the length given; no wait.
    let waiting = unsafe { libc::poll(&mut stdin, 1, 0) } == 1 && stdin.revents & libc::POLLIN != 0;
    if waiting {
        let _ = crossterm::event::poll(std::time::Duration::from_millis(5));
    }
    let _ = disable_raw_mode();
}

fn setup() -> Result<()> {
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let mut out = stdout();
    execute!(
        out,
        EnterAlternateScreen,
        EnableBracketedPaste,
        // Told when the window (or tmux pane, with `focus-events on`) is
        // left and come back to: a reply that finishes on screen while it
        // is left rings as one elsewhere does.
        EnableFocusChange,
        cursor::Hide
    )?;
    if MOUSE.load(Ordering::SeqCst) {
        execute!(out, EnableMouseCapture)?;
    }
    // Lets Shift+Enter be told apart from Enter where the terminal supports it.
    // Pushed without asking first: the query blocks for up to 2 s on terminals
    // that never answer, and terminals without the protocol ignore the push.
    let flags = KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES;
    if execute!(out, PushKeyboardEnhancementFlags(flags)).is_ok() {
        ENHANCED.store(true, Ordering::SeqCst);
    }
    Ok(())
}

/// Give the terminal back as we found it. Safe to call more than once.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = stdout();
    if ENHANCED.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, PopKeyboardEnhancementFlags);
    }
    let _ = execute!(
        out,
        DisableBracketedPaste,
        DisableFocusChange,
        DisableMouseCapture,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = disable_raw_mode();
    let _ = out.flush();
}

fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
}

/// Ctrl+Z: restore the terminal, stop the process, and take the terminal back on `fg`.
pub fn suspend(t: &mut Term, say: Option<String>) -> Result<()> {
    restore();
    if let Some(line) = say {
        eprintln!("{line}");
    }
    // SAFETY: raising SIGTSTP on ourselves is what a shell job-control stop is.
    unsafe {
        libc::raise(libc::SIGTSTP);
    }
    setup()?;
    // A fresh Terminal redraws everything on the next frame (see `enter`).
    *t = new_term()?;
    Ok(())
}

/// Ctrl+L: clear the screen; a fresh Terminal draws every cell on the next
/// frame. (Not `Terminal::clear()`, which asks the terminal for the cursor
/// position and waits for the answer.)
pub fn redraw(t: &mut Term) -> Result<()> {
    use ratatui::crossterm::terminal::{Clear, ClearType};
    execute!(stdout(), Clear(ClearType::All))?;
    *t = new_term()?;
    Ok(())
}

/// Why the editor run through the shell did not succeed, in words: the
/// shell's 127 and 126 are an editor not found and one it cannot run.
fn editor_failure(editor: &str, status: std::process::ExitStatus) -> String {
    let editor = crate::sanitize::sanitize_line(editor);
    match status.code() {
        Some(127) => format!("the editor \"{editor}\" was not found"),
        Some(126) => format!("the editor \"{editor}\" could not be run"),
        Some(code) => format!("the editor \"{editor}\" ended with code {code}"),
        None => format!("the editor \"{editor}\" was stopped by a signal"),
    }
}

/// Ctrl+G: hand the terminal to `$VISUAL` (or `$EDITOR`, else `vi`, as git
/// does) on `text`, and take it back. Returns the edited text, or None
/// when there is no editor at all.
pub fn run_editor(t: &mut Term, text: &str) -> Result<Option<String>> {
    let Some(editor) = ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .find(|e| !e.trim().is_empty())
        .or_else(|| on_path("vi").then(|| "vi".to_string()))
    else {
        return Ok(None);
    };
    let path = std::env::temp_dir().join(format!("tock-draft-{}.md", std::process::id()));
    // Ended with a newline, as text files are: a line an editor or a
    // script adds (`echo … >>`) is then a line of its own.
    let file = if text.is_empty() || text.ends_with('\n') {
        text.to_string()
    } else {
        format!("{text}\n")
    };
    crate::files::write_private(&path, file.as_bytes()).map_err(anyhow::Error::msg)?;
    restore();
    // Through the shell, so "code -w" or "vim -u NONE" work as they do for git.
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(&path)
        .status();
    setup()?;
    *t = new_term()?;
    let edited = std::fs::read_to_string(&path);
    let _ = std::fs::remove_file(&path);
    let status = status?;
    if !status.success() {
        anyhow::bail!(
            "{}; the draft is unchanged",
            editor_failure(&editor, status)
        );
    }
    let mut edited = edited?;
    // Editors end the file with a newline the draft did not have.
    if edited.ends_with('\n') && !text.ends_with('\n') {
        edited.pop();
    }
    Ok(Some(edited))
}

/// Whether an executable file named `name` is in a directory of `$PATH`.
fn on_path(name: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(name))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// Turn mouse capture on or off (off leaves selection to the terminal).
pub fn set_mouse(on: bool) {
    MOUSE.store(on, Ordering::SeqCst);
    let mut out = stdout();
    let _ = if on {
        execute!(out, EnableMouseCapture)
    } else {
        execute!(out, DisableMouseCapture)
    };
}

/// Write raw bytes (bell, notification escapes, OSC 52) between frames.
pub fn write_raw(s: &str) {
    let mut out = stdout();
    let _ = out.write_all(s.as_bytes());
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt;

    use super::editor_failure;

    #[test]
    fn an_editor_that_fails_is_told_in_words() {
        let st = |code: i32| std::process::ExitStatus::from_raw(code << 8);
        assert_eq!(
            editor_failure("nano-typo", st(127)),
            "the editor \"nano-typo\" was not found"
        );
        assert_eq!(
            editor_failure("./notes", st(126)),
            "the editor \"./notes\" could not be run"
        );
        assert_eq!(
            editor_failure("vim", st(1)),
            "the editor \"vim\" ended with code 1"
        );
        assert_eq!(
            editor_failure("vim", std::process::ExitStatus::from_raw(9)),
            "the editor \"vim\" was stopped by a signal"
        );
    }
}
