//! The status bar says what is true now: a line about a command the user
//! sent, a key just pressed, or choices to type from goes once the composer
//! or the next key has moved on.

use super::*;

/// The status bar as drawn: the row that names the model (`echo  offline
/// │ …`) and the rows under it (where a long line wraps), joined.
fn status_bar(ui: &mut Ui) -> String {
    let screen = ui.screen(120, 40);
    let rows: Vec<&str> = screen.lines().collect();
    let bar = rows
        .iter()
        .rposition(|r| r.trim_start().starts_with("echo "))
        .expect("the status bar");
    rows[bar..]
        .iter()
        .map(|r| r.trim())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `cmd` sent, refused: its error is in the status bar, and the command
/// stays in the composer.
fn refused(ui: &mut Ui, cmd: &str) -> String {
    ui.say(cmd);
    let error = ui.status_line();
    assert!(!error.is_empty(), "{cmd}: no error");
    assert_eq!(ui.app.composer_text(), cmd);
    let bar = status_bar(ui);
    let start: String = error.chars().take(30).collect();
    assert!(bar.contains(&start), "{cmd}: {bar}");
    start
}

#[tokio::test(start_paused = true)]
async fn an_error_about_a_command_goes_once_the_composer_no_longer_holds_it() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    for cmd in ["/every second monday x", "/at 7", "/model nosuchmodel"] {
        // Editing the command to fix it keeps the error in sight.
        let error = refused(&mut ui, cmd);
        ui.press(KeyCode::Backspace);
        assert!(status_bar(&mut ui).contains(&error), "{cmd}");
        // Cleared: the error goes, and typing something else does not
        // bring it back.
        ui.ctrl('u');
        assert!(!status_bar(&mut ui).contains(&error), "{cmd}");
        ui.typ("hello");
        ui.press(KeyCode::Esc);
        assert!(!status_bar(&mut ui).contains(&error), "{cmd}");
        ui.ctrl('u');
        // Typed over with something else, without clearing first.
        let error = refused(&mut ui, cmd);
        ui.press(KeyCode::Home);
        ui.typ("hello ");
        assert!(!status_bar(&mut ui).contains(&error), "{cmd}");
        ui.ctrl('u');
        ui.press(KeyCode::End);
        ui.ctrl('u');
        assert_eq!(ui.app.composer_text(), "");
    }
}

#[tokio::test(start_paused = true)]
async fn a_command_sent_after_a_refused_one_replaces_its_error() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    let error = refused(&mut ui, "/every second monday x");
    // Fixed in place, then sent: /rename says nothing of its own (the
    // title shows it), and the old error is not left standing.
    ui.ctrl('u');
    ui.say("/rename water chat 2");
    ui.settle().await;
    assert_eq!(ui.app.composer_text(), "");
    let bar = status_bar(&mut ui);
    assert!(!bar.contains(&error), "{bar}");
    // Another refused command: its own error, not the first one's.
    let error = refused(&mut ui, "/at 7");
    ui.ctrl('u');
    let again = refused(&mut ui, "/every");
    assert!(!status_bar(&mut ui).contains(&error));
    assert!(status_bar(&mut ui).contains(&again));
}

#[tokio::test(start_paused = true)]
async fn moved_back_with_its_time_goes_with_the_next_key() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.say("/later 1h check the build");
    ui.tab();
    ui.ch('u');
    ui.settle().await;
    assert!(
        status_bar(&mut ui).contains("with its time"),
        "{}",
        status_bar(&mut ui)
    );
    ui.press(KeyCode::Down);
    let bar = status_bar(&mut ui);
    assert!(!bar.contains("moved back"), "{bar}");
}

#[tokio::test(start_paused = true)]
async fn tab_choices_go_with_the_next_key_that_is_not_tab() {
    let mut cfg = Config::default();
    for name in ["coach", "critic"] {
        cfg.roles.insert(
            name.into(),
            tock::config::RoleConfig {
                system: "be brief".into(),
            },
        );
    }
    let mut ui = Ui::with_config(vec![], cfg);
    ui.start().await;
    ui.typ("/role c");
    ui.tab();
    assert!(status_bar(&mut ui).contains("coach  critic"));
    // Tab again: still the choices.
    ui.tab();
    assert!(status_bar(&mut ui).contains("coach  critic"));
    // Another key: they go.
    ui.ch('o');
    let bar = status_bar(&mut ui);
    assert!(!bar.contains("coach  critic"), "{bar}");
    // And a new message typed does not see them either.
    ui.ctrl('u');
    ui.typ("/role c");
    ui.tab();
    ui.press(KeyCode::Backspace);
    ui.press(KeyCode::Backspace);
    ui.press(KeyCode::Backspace);
    ui.press(KeyCode::Backspace);
    ui.press(KeyCode::Backspace);
    ui.press(KeyCode::Backspace);
    ui.press(KeyCode::Backspace);
    ui.typ("hello");
    let bar = status_bar(&mut ui);
    assert!(!bar.contains("coach  critic"), "{bar}");
}

/// A notice (a scheduled message went, a reply came elsewhere) is news,
/// not about a key: keys typed as it comes leave it to be read, a key
/// pressed once it has been up a while ends it (F3 keeps it).
#[tokio::test(start_paused = true)]
async fn a_notice_goes_with_a_key_pressed_once_it_has_been_read() {
    let ok = || Step::Reply(vec![text("ok"), done()]);
    let mut ui = Ui::new(vec![ok(), ok()]);
    ui.start().await;
    ui.say("/later 1m check the build");
    tokio::time::advance(std::time::Duration::from_secs(61)).await;
    ui.settle().await;
    let notice = "scheduled message sent in";
    assert!(ui.status_line().starts_with(notice), "{}", ui.status_line());
    // Typing already under way when it came: it stays.
    ui.typ("a");
    assert!(ui.status_line().starts_with(notice), "{}", ui.status_line());
    // A key a few seconds later: read by now, it goes.
    tokio::time::advance(std::time::Duration::from_secs(3)).await;
    ui.settle().await;
    assert!(ui.status_line().starts_with(notice), "{}", ui.status_line());
    ui.ctrl('t');
    assert!(
        !status_bar(&mut ui).contains(notice),
        "{}",
        status_bar(&mut ui)
    );
    assert!(ui.app.notices.iter().any(|n| n.text.starts_with(notice)));
}

/// An error about a time too long for the composer's two borders (at 60
/// columns) is written whole on the rows above the box: its second way of
/// writing the time was cut off.
#[tokio::test(start_paused = true)]
async fn a_long_time_error_is_shown_whole_above_the_composer() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.app.sidebar_pref = Some(false);
    ui.typ("/at 9am friday prep");
    let s = ui.screen(60, 15);
    let joined = s.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        joined.contains(r#"write "friday 9am …" for that day, or "9am -- friday …" for the text"#),
        "{s}"
    );
    snap!("time_error_above_the_composer_60x15", s);
    // Where the borders hold it, it stays on them.
    let wide = ui.screen(120, 40);
    let rows: Vec<&str> = wide.lines().collect();
    let top = rows
        .iter()
        .position(|r| r.contains("╭"))
        .expect("the composer");
    assert!(rows[top].contains("✗ \"friday\" after \"9am\""), "{wide}");
    assert!(
        rows[top + 2].contains("-- friday …\" for the text"),
        "{wide}"
    );
}

/// A TUI reading its settings from a config file holding `text` (which
/// tests may write again while it runs), with a conversation open.
fn ui_on_config_file(text: &str) -> (Ui, std::path::PathBuf) {
    init_env();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, text).unwrap();
    let store = Store::open(&dir.path().join("tock.db")).unwrap();
    store.create_conversation(Some("c"), "user", T0).unwrap();
    let provider = Scripted::new(vec![]);
    let config = Arc::new(
        ConfigSource::new(Some(path.clone()), None)
            .unwrap()
            .with_provider(provider.clone()),
    );
    let clock = Arc::new(ManualClock::new(T0));
    let engine = Engine::new(store, config, clock.clone(), options());
    let ui = Ui::on(Harness {
        engine,
        clock,
        provider,
        dir,
    });
    (ui, path)
}

/// Started on a config file that cannot be read, nothing is sent; the
/// status bar does not name the offline model the held settings fall back
/// to ("echo offline") as the one a conversation uses.
#[tokio::test(start_paused = true)]
async fn on_a_config_that_cannot_be_read_the_status_bar_says_so() {
    // Its model comes from the config (the default there): unknown now.
    let (mut ui, _) = ui_on_config_file("[models.fake\nprovider = ");
    ui.start().await;
    let screen = ui.screen(120, 40);
    let bar = screen
        .lines()
        .find(|l| l.contains("outbox off (config)"))
        .unwrap_or_default();
    assert!(bar.starts_with(" config error "), "{screen}");
    assert!(!bar.contains("offline") && !bar.contains("echo"), "{bar}");
}

/// Bad `[keys]` and `[ui.colors]` values saved while tock runs are said
/// with the reload ("configuration reloaded" alone had hidden them until
/// a restart), and the line names the log file that holds the rest.
#[tokio::test(start_paused = true)]
async fn bad_settings_saved_while_running_are_said_with_the_reload() {
    let (mut ui, path) = ui_on_config_file("");
    ui.start().await;
    std::fs::write(
        &path,
        "[keys]\n\"main.quit\" = \"ctrl+qq\"\n\"composer.tim_picker\" = \"alt+t\"\n\n[ui.colors]\naccent = \"notacolor\"\n",
    )
    .unwrap();
    ui.h.engine.wake();
    ui.settle().await;
    let (line, error) = ui.app.status_pair();
    assert!(error, "{line}");
    assert!(line.starts_with("configuration reloaded; "), "{line}");
    let log = tock::logging::log_file();
    assert!(
        line.contains(&format!("(+2 more, in {})", log.display())),
        "{line}"
    );
    // The notices list keeps the reload, with what it could not take.
    assert!(
        ui.app
            .notices
            .iter()
            .any(|n| n.text.starts_with("configuration reloaded; ")
                && n.text.contains("(+2 more, in ")),
        "{:?}",
        ui.app
            .notices
            .iter()
            .map(|n| n.text.clone())
            .collect::<Vec<_>>()
    );
    // Saved again with the problems still in it (a comment added): said
    // again, not "configuration reloaded" alone.
    ui.app.status = None;
    std::fs::write(
        &path,
        "# edited\n[keys]\n\"main.quit\" = \"ctrl+qq\"\n\"composer.tim_picker\" = \"alt+t\"\n\n[ui.colors]\naccent = \"notacolor\"\n",
    )
    .unwrap();
    ui.h.engine.wake();
    ui.settle().await;
    let (line, error) = ui.app.status_pair();
    assert!(
        error && line.starts_with("configuration reloaded; "),
        "{line}"
    );
    assert!(line.contains("(+2 more, in "), "{line}");
}

/// "reply … interrupted; generating it again at …" goes once the reply has
/// been asked for again (it stayed its ten seconds, after the new reply had
/// finished). The attempt was cut while the model reasoned, before its first
/// word: it stays, with what it thought (it left no trace).
#[tokio::test(start_paused = true)]
async fn a_retry_notice_goes_once_the_reply_is_asked_for_again() {
    let mut ui = Ui::new(vec![
        Step::Cut(
            vec![tock::llm::StreamEvent::Reasoning(
                "thinking hard about it".into(),
            )],
            LlmError::transient("connection reset"),
        ),
        Step::Reply(vec![text("the whole answer"), done()]),
    ]);
    ui.start().await;
    ui.say("a question");
    ui.streamed().await;
    let line = ui.status_line();
    assert!(line.contains("generating it again at"), "{line}");
    // The back-off (5 s), then the reply is written again.
    tokio::time::sleep(std::time::Duration::from_secs(6)).await;
    ui.streamed().await;
    let s = ui.screen(120, 40);
    assert!(s.contains("the whole answer"), "{s}");
    let line = ui.status_line();
    assert!(!line.contains("generating it again"), "{line}");
    let cut = s.find("⚠ interrupted: connection reset").expect(&s);
    let thought = s.find("▸ thought: 22 characters").expect(&s);
    assert!(
        cut < thought && thought < s.find("the whole answer").unwrap_or(0),
        "{s}"
    );
}
