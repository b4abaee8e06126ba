//! Notification side effects shared by the front ends: the bell, desktop
//! notification escapes (OSC 9 / OSC 777, wrapped for tmux) and the user's
//! `notify_command`. Text is sanitised; the command gets no shell.

use crate::engine::{NoticeKind, Notification};

pub fn kind_label(k: &NoticeKind) -> &'static str {
    match k {
        NoticeKind::Fired => "fired",
        NoticeKind::ReplyFinished => "reply",
        NoticeKind::Failed | NoticeKind::RegenerateFailed | NoticeKind::ConfigUnreadable => {
            "failed"
        }
        NoticeKind::Expired => "expired",
        NoticeKind::Approval => "approval",
        NoticeKind::Info
        | NoticeKind::ToolRunning
        | NoticeKind::ConfigReadable
        | NoticeKind::ReplyRetrying => "info",
    }
}

/// The bytes to write to the terminal for a notification: BEL, then OSC 9 and
/// OSC 777 (inside a tmux DCS passthrough when running under tmux).
pub fn terminal_bytes(text: &str, bell: bool, desktop: bool, in_tmux: bool) -> String {
    let mut out = String::new();
    if bell {
        out.push('\x07');
    }
    if desktop {
        // The text goes inside an escape sequence: nothing in it may end or start one.
        let clean: String = crate::sanitize::sanitize_line(text)
            .chars()
            .filter(|c| !c.is_control() && *c != ';' && *c != '\u{241B}' && *c != '\u{2407}')
            .take(200)
            .collect();
        let osc9 = format!("\x1b]9;tock: {clean}\x07");
        let osc777 = format!("\x1b]777;notify;tock;{clean}\x07");
        for seq in [osc9, osc777] {
            if in_tmux {
                // tmux passthrough: ESC P tmux; <seq with ESC doubled> ESC \
                out.push_str("\x1bPtmux;");
                out.push_str(&seq.replace('\x1b', "\x1b\x1b"));
                out.push_str("\x1b\\");
            } else {
                out.push_str(&seq);
            }
        }
    }
    out
}

/// Run the configured notify command with the event as arguments and env.
/// A command that cannot be started is logged and said, in one line, to
/// the caller (a front end that can show it).
pub fn run_command(cmd: &[String], n: &Notification) -> Result<(), String> {
    let Some((prog, args)) = cmd.split_first() else {
        return Ok(());
    };
    let text = crate::sanitize::sanitize_line(&n.text).into_owned();
    let kind = kind_label(&n.kind);
    let mut c = std::process::Command::new(prog);
    c.args(args)
        .arg(kind)
        .arg(&text)
        .env("TOCK_EVENT", kind)
        .env("TOCK_TEXT", &text)
        .env(
            "TOCK_CONVERSATION",
            n.conversation_id.map(|c| c.to_string()).unwrap_or_default(),
        )
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    match c.spawn() {
        // Reap it in the background so no zombie is left.
        Ok(mut child) => {
            std::thread::spawn(move || {
                let _ = child.wait();
            });
            Ok(())
        }
        Err(e) => {
            tracing::warn!("notify_command {prog}: {e}");
            Err(format!(
                "notify_command {} could not be run: {e} (notices still show here and in F3)",
                crate::sanitize::sanitize_line(prog)
            ))
        }
    }
}
