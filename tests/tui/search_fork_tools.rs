//! Search, fork, versions, tools, token usage, images and @path mentions.

use super::*;

/// At 60 columns a match deep in its snippet is still on screen: the row
/// starts nearer it.
#[tokio::test(start_paused = true)]
async fn a_search_match_far_into_its_snippet_is_shown_at_60_columns() {
    let mut ui = Ui::new(vec![reply_step("Noted.")]);
    ui.start().await;
    ui.say(
        "before you can talk to a real model you configure a provider, and then we talk penguins",
    );
    ui.settle().await;
    ui.ctrl('f');
    ui.typ("penguins");
    let s = ui.screen(60, 15);
    // The excerpt's row (below the message's first line) shows the match.
    assert!(
        s.lines()
            .any(|l| l.contains("    …") && l.contains("talk penguins")),
        "{s}"
    );
}

#[tokio::test(start_paused = true)]
async fn ctrl_f_searches_every_conversation_and_enter_opens_the_message() {
    let mut ui = Ui::new(vec![
        reply_step("Zebras are striped so flies miss them."),
        reply_step("Noted."),
    ]);
    ui.start().await;
    let first = ui.conv();
    ui.say("why do zebras have stripes?");
    ui.settle().await;
    ui.app
        .on_key(KeyEvent::new(KeyCode::Char('n'), KeyModifiers::ALT));
    ui.app.wait_writes(std::time::Duration::from_secs(20));
    ui.pump();
    assert_ne!(ui.conv(), first);
    ui.say("something else entirely");
    ui.settle().await;
    ui.ctrl('f');
    assert_eq!(ui.app.top(), Some(ViewKind::Search));
    ui.typ("zebra");
    let s = ui.screen(100, 30);
    assert!(s.contains("Search all conversations"), "{s}");
    assert!(s.contains("2 matches"), "the question and the reply: {s}");
    assert!(s.contains("Zebras are striped"), "{s}");
    assert!(!s.contains("something else"), "{s}");
    snap!("search_100x30", ui.render(100, 30).backend());
    snap!("search_120x40", ui.render(120, 40).backend());
    snap!("search_60x15", ui.render(60, 15).backend());
    // Newest first: the reply, then the question; ↓ then Enter opens the question.
    ui.press(KeyCode::Down);
    ui.enter();
    assert_eq!(ui.app.top(), None);
    assert_eq!(
        ui.conv(),
        first,
        "the search opened the conversation of the match"
    );
    // Nothing matches: said so, and Enter does nothing.
    ui.ctrl('f');
    ui.typ("qwertyuiop");
    assert!(ui.screen(100, 30).contains("no message has these words"));
    ui.enter();
    assert_eq!(ui.app.top(), Some(ViewKind::Search));
    ui.press(KeyCode::Esc);
    assert_eq!(ui.app.top(), None);
    // Query syntax a user may type is never an error.
    ui.say("/search \"unbalanced AND (");
    assert_eq!(ui.app.top(), Some(ViewKind::Search));
    assert!(
        !ui.screen(100, 30).contains("error"),
        "no error for odd input"
    );
}

#[tokio::test(start_paused = true)]
async fn fork_copies_the_history_up_to_the_last_message_on_screen() {
    let mut ui = Ui::new(vec![reply_step("one"), reply_step("two")]);
    ui.start().await;
    let original = ui.conv();
    // Nothing to fork yet: refused, and the command stays to be fixed.
    ui.say("/fork");
    assert_eq!(ui.conv(), original);
    assert_eq!(ui.app.composer_text(), "/fork");
    assert!(ui.status_line().contains("nothing to fork"));
    ui.app.set_composer("");
    ui.say("first question");
    ui.settle().await;
    ui.say("second question");
    ui.settle().await;
    assert_eq!(ui.messages().len(), 4);
    ui.render(100, 30);
    ui.say("/fork");
    ui.pump();
    let forked = ui.conv();
    assert_ne!(forked, original);
    let texts: Vec<String> = ui.messages().into_iter().map(|m| m.content).collect();
    assert_eq!(texts.len(), 4, "{texts:?}");
    assert!(ui.status_line().contains("forked"), "{}", ui.status_line());
    // The original is untouched, and "/fork" is not left as its draft.
    assert_eq!(ui.store().messages(original).unwrap().len(), 4);
    assert_eq!(ui.app.composer_text(), "");
    ui.app.open(original);
    ui.pump();
    assert_eq!(ui.app.composer_text(), "", "the command is not the draft");
}

/// Forked while a call waits for its approval: the fork has no result for
/// it, so the call is left out, and the notice says so.
#[tokio::test(start_paused = true)]
async fn a_fork_beside_a_waiting_call_says_it_left_the_call_out() {
    let mut ui = Ui::new(task_steps());
    ui.start().await;
    ui.say("remind me to check the build");
    ui.settle().await;
    let original = ui.conv();
    assert!(!ui.store().approvals(original).unwrap().is_empty());
    ui.say("/fork");
    ui.pump();
    assert_ne!(ui.conv(), original);
    assert_eq!(
        ui.status_line(),
        "forked: this is a new conversation with the history up to there; the tool call \
         schedule_task was left out of the fork: it has no result up to there"
    );
}

#[tokio::test(start_paused = true)]
async fn alt_shift_f_forks_at_the_message_scrolled_to() {
    let long: String = (1..=60)
        .map(|i| format!("line {i} of the first answer\n\n"))
        .collect();
    let mut ui = Ui::new(vec![reply_step(&long), reply_step("two")]);
    ui.start().await;
    let original = ui.conv();
    ui.say("first question");
    ui.settle().await;
    ui.say("second question");
    ui.settle().await;
    ui.render(100, 30);
    // Up until the second exchange is off screen: the first answer is the last shown.
    for _ in 0..3 {
        ui.press(KeyCode::PageUp);
        ui.render(100, 30);
    }
    ui.key(KeyCode::Char('F'), KeyModifiers::ALT | KeyModifiers::SHIFT);
    ui.pump();
    let forked = ui.conv();
    assert_ne!(forked, original, "{}", ui.status_line());
    let texts: Vec<String> = ui.messages().into_iter().map(|m| m.content).collect();
    assert_eq!(texts.len(), 2, "up to the first answer: {texts:?}");
    assert!(
        texts[1].starts_with("line 1 of the first answer"),
        "{texts:?}"
    );
    assert_eq!(ui.store().messages(original).unwrap().len(), 4);
}

/// Alt+f moves the composer's cursor a word forward, as Alt+b moves it
/// back (readline): it forked the conversation and left the draft behind.
#[tokio::test(start_paused = true)]
async fn alt_f_moves_a_word_forward_in_the_composer() {
    let mut ui = Ui::new(vec![reply_step("noted")]);
    ui.start().await;
    ui.say("first question");
    ui.settle().await;
    let original = ui.conv();
    ui.typ("draft with word");
    ui.ctrl('a');
    ui.key(KeyCode::Char('f'), KeyModifiers::ALT);
    ui.key(KeyCode::Char('f'), KeyModifiers::ALT);
    ui.typ("X");
    assert_eq!(ui.conv(), original, "{}", ui.status_line());
    // To the end of the word, as readline's Alt+f goes.
    assert_eq!(ui.app.composer_text(), "draft withX word");
    ui.key(KeyCode::Char('b'), KeyModifiers::ALT);
    ui.typ("Y");
    assert_eq!(ui.app.composer_text(), "draft YwithX word");
}

#[tokio::test(start_paused = true)]
async fn a_regenerated_reply_shows_one_version_and_alt_comma_brings_the_other_back() {
    let mut ui = Ui::new(vec![
        reply_step("the first answer"),
        reply_step("the second answer"),
        reply_step("an answer to the edit"),
    ]);
    ui.start().await;
    ui.say("a question");
    ui.settle().await;
    ui.ctrl('r');
    ui.settle().await;
    let s = ui.screen(100, 30);
    assert!(
        s.contains("the second answer") && s.contains("‹2/2›"),
        "{s}"
    );
    assert!(
        !s.contains("the first answer"),
        "older versions are not stacked: {s}"
    );
    snap!("versions_100x30", ui.render(100, 30).backend());
    snap!("versions_60x15", ui.render(60, 15).backend());
    // Alt+, : the first reply again, and the conversation goes on from it.
    ui.key(KeyCode::Char(','), KeyModifiers::ALT);
    ui.pump();
    let s = ui.screen(100, 30);
    assert!(s.contains("the first answer") && s.contains("‹1/2›"), "{s}");
    assert!(!s.contains("the second answer"), "{s}");
    let visible: Vec<String> = ui
        .messages()
        .into_iter()
        .filter(|m| m.role == Role::Assistant && m.status == MessageStatus::Complete)
        .map(|m| m.content)
        .collect();
    assert_eq!(
        visible,
        vec!["the first answer"],
        "the model sees the chosen one"
    );
    ui.key(KeyCode::Char(','), KeyModifiers::ALT);
    assert!(
        ui.status_line().contains("first version"),
        "{}",
        ui.status_line()
    );
    // An edit and resend: the old text is a version, only looked at.
    ui.press(KeyCode::Up);
    ui.erase(20);
    ui.say("an edited question");
    ui.settle().await;
    let s = ui.screen(100, 30);
    assert!(
        s.contains("an edited question") && s.contains("an answer to the edit"),
        "{s}"
    );
    assert!(
        !s.contains("a question ·") && !s.contains("the first answer"),
        "{s}"
    );
    ui.key(KeyCode::Char(','), KeyModifiers::ALT);
    let s = ui.screen(100, 30);
    assert!(s.contains("only looked at"), "{}", ui.status_line());
    assert!(s.contains("an earlier version"), "{s}");
    // At 60 columns (the sidebar hidden) a shorter wording, whole.
    ui.app.sidebar_pref = Some(false);
    let narrow = ui.screen(60, 30);
    ui.app.sidebar_pref = None;
    let header = narrow
        .lines()
        .find(|l| l.contains("‹1/2›"))
        .unwrap_or_else(|| panic!("{narrow}"));
    assert!(
        header.trim_end().ends_with("not in the conversation"),
        "{narrow}"
    );
    // The earlier text with the replies it had then (both were put aside
    // by the edit: the newer is drawn), not the edit's reply.
    assert!(s.contains("the second answer"), "{s}");
    assert!(!s.contains("an answer to the edit"), "{s}");
    ui.key(KeyCode::Char('.'), KeyModifiers::ALT);
    assert!(ui.screen(100, 30).contains("an edited question"));
}

/// Alt+, and Alt+. step the versions of a message in the window; one
/// scrolled away (a long reply below it) is left as it is.
#[tokio::test(start_paused = true)]
async fn version_keys_leave_a_message_off_screen_alone() {
    let long: String = (1..=40)
        .map(|i| format!("line {i} of a long answer\n\n"))
        .collect();
    let mut ui = Ui::new(vec![
        reply_step("the first answer"),
        reply_step("the second answer"),
        reply_step(&long),
    ]);
    ui.start().await;
    ui.say("a question");
    ui.settle().await;
    ui.ctrl('r');
    ui.settle().await;
    ui.say("another question");
    ui.settle().await;
    let s = ui.screen(100, 30);
    assert!(!s.contains("the second answer"), "scrolled away: {s}");
    ui.key(KeyCode::Char(','), KeyModifiers::ALT);
    ui.pump();
    assert!(
        ui.status_line()
            .contains("no message on screen has other versions"),
        "{}",
        ui.status_line()
    );
    let kept: Vec<String> = ui
        .messages()
        .into_iter()
        .filter(|m| m.role == Role::Assistant && m.status == MessageStatus::Complete)
        .map(|m| m.content)
        .collect();
    assert_eq!(kept[0], "the second answer", "not switched unseen");
    // Scrolled back to it, the keys step it.
    for _ in 0..4 {
        ui.press(KeyCode::PageUp);
        ui.render(100, 30);
    }
    assert!(ui.screen(100, 30).contains("the second answer"));
    ui.key(KeyCode::Char(','), KeyModifiers::ALT);
    ui.pump();
    assert!(ui.status_line().contains("‹1/2›"), "{}", ui.status_line());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_tools_lists_tock_s_tools_and_each_mcp_server_with_its_state() {
    let mut cfg = Config::default();
    let bin = common::mcp_test_server_bin();
    let toml = format!(
        "[mcp.test]\ncommand = {:?}\n[mcp.broken]\ncommand = \"/nonexistent/mcp-server\"\n[approvals.rules]\n\"test__echo\" = \"allow\"\n",
        bin.display().to_string()
    );
    let parsed: Config = toml::from_str(&toml).unwrap();
    cfg.mcp = parsed.mcp;
    cfg.approvals = parsed.approvals;
    let mut ui = Ui::with_config(vec![], cfg);
    ui.say("/tools");
    assert_eq!(ui.app.top(), Some(ViewKind::Tools));
    let s = ui.screen(120, 40);
    assert!(
        s.contains("Tools the model is offered") && s.contains("schedule_task"),
        "{s}"
    );
    // The servers start in the background; the view follows.
    let mut s = String::new();
    for _ in 0..200 {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        ui.pump();
        s = ui.screen(120, 40);
        if s.contains("test__echo") && s.contains("failed") {
            break;
        }
    }
    assert!(s.contains("test (stdio) running"), "{s}");
    assert!(
        s.contains("runs    test__echo"),
        "the allow rule shows: {s}"
    );
    assert!(s.contains("read-only"), "readOnlyHint shows: {s}");
    assert!(s.contains("broken (stdio) failed"), "{s}");
    // End goes to the foot of a list taller than the window, Home back up.
    let top = ui.screen(60, 15);
    assert!(top.contains("↓"), "{top}");
    ui.press(KeyCode::End);
    let end = ui.screen(60, 15);
    assert!(!end.contains("↓") && end != top, "{end}");
    ui.press(KeyCode::Home);
    assert_eq!(ui.screen(60, 15), top);
    ui.press(KeyCode::Esc);
    assert_eq!(ui.app.top(), None);
    ui.h.engine
        .shutdown(std::time::Duration::from_secs(2))
        .await;
}

/// A TUI whose config has the MCP test server as `test`.
fn with_the_test_mcp_server(steps: Vec<Step>) -> Ui {
    let mut cfg = Config::default();
    let bin = common::mcp_test_server_bin();
    let toml = format!("[mcp.test]\ncommand = {:?}\n", bin.display().to_string());
    let parsed: Config = toml::from_str(&toml).unwrap();
    cfg.mcp = parsed.mcp;
    Ui::with_config(steps, cfg)
}

/// Pump the UI until `ok`, for what runs in real time (an MCP server).
fn poll(ui: &mut Ui, what: &str, ok: &dyn Fn(&mut Ui) -> bool) {
    for _ in 0..400 {
        ui.pump();
        if ok(ui) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    panic!("timed out waiting for {what}: {}", ui.screen(100, 30));
}

/// "approved: running it" stands while an approved MCP call runs and goes
/// once its result is in (the clock here is still: without that, the line
/// would stand for good).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_running_line_of_an_approved_call_goes_once_it_has_run() {
    let mut ui = with_the_test_mcp_server(vec![
        Step::Reply(vec![tool_call("test__echo", r#"{"text":"hello"}"#), done()]),
        Step::Reply(vec![text("it said hello back"), done()]),
    ]);
    ui.h.engine.start();
    ui.say("echo hello");
    poll(&mut ui, "the approval", &|ui: &mut Ui| {
        ui.app.model.waiting_approval().is_some()
    });
    ui.approve();
    poll(&mut ui, "the reply after the call", &|ui: &mut Ui| {
        ui.screen(100, 30).contains("it said hello back")
    });
    let notices: Vec<String> = ui.app.notices.iter().map(|n| n.text.clone()).collect();
    assert!(
        notices
            .iter()
            .any(|n| n.contains("test__echo approved: running it")),
        "{notices:?}"
    );
    assert!(
        !ui.status_line().contains("running it"),
        "{}",
        ui.status_line()
    );
    ui.h.engine
        .shutdown(std::time::Duration::from_secs(2))
        .await;
}

/// Ctrl+Q while an approved MCP call runs warns first, as while a reply
/// streams: one press quit at once, and the next tock ran the call again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_q_while_a_tool_call_runs_warns_first() {
    let mut ui = with_the_test_mcp_server(vec![
        Step::Reply(vec![tool_call("test__slow", r#"{"ms":30000}"#), done()]),
        Step::Reply(vec![text("done"), done()]),
    ]);
    ui.h.engine.start();
    ui.say("be slow");
    poll(&mut ui, "the approval", &|ui: &mut Ui| {
        ui.app.model.waiting_approval().is_some()
    });
    ui.approve();
    poll(&mut ui, "the call running", &|ui: &mut Ui| {
        ui.h.engine.calls_in_flight() == 1
    });
    ui.ctrl('q');
    assert!(!ui.app.quit, "one press warns");
    assert!(
        ui.status_line()
            .starts_with("a tool call is running: Ctrl+Q again quits and cuts it off"),
        "{}",
        ui.status_line()
    );
    ui.ctrl('q');
    assert!(ui.app.quit);
    // On the way out, as the TUI's exit does: the cut call is said.
    ui.app.calls_cut_at_exit = ui.h.engine.calls_in_flight();
    let line = ui.app.exit_line().unwrap_or_default();
    assert!(
        line.contains(
            "1 tool call cut off by quitting (to be run again: its effects may happen twice)"
        ),
        "{line}"
    );
    ui.h.engine
        .shutdown(std::time::Duration::from_secs(2))
        .await;
}

#[tokio::test(start_paused = true)]
async fn snapshot_tools_view_without_servers() {
    let mut ui = Ui::new(vec![]);
    ui.say("/tools");
    snap!("tools_100x30", ui.render(100, 30).backend());
    snap!("tools_120x40", ui.render(120, 40).backend());
    snap!("tools_60x15", ui.render(60, 15).backend());
    assert!(ui.screen(60, 15).contains("↓ 10 more ╯"));
    assert!(ui.screen(100, 30).contains("No MCP servers"));
    // At 60 columns the descriptions wrap, and scrolling reaches their end.
    ui.render(60, 15);
    for _ in 0..40 {
        ui.press(KeyCode::Down);
    }
    let s = ui.screen(60, 15);
    assert!(s.contains("No MCP servers"), "{s}");
    // At the end, nothing more below; above it, the rows out of sight are said.
    assert!(!s.contains(" more ╯"), "{s}");
    ui.press(KeyCode::Up);
    ui.press(KeyCode::Up);
    let s = ui.screen(60, 15);
    assert!(s.contains("series. The user may have to"), "{s}");
}

#[tokio::test(start_paused = true)]
async fn a_replys_token_usage_shows_under_it_and_the_conversation_total_in_the_status_bar() {
    let usage = tock::llm::Usage {
        prompt_tokens: Some(1_234),
        completion_tokens: Some(56),
        cached_tokens: Some(800),
    };
    let mut ui = Ui::new(vec![Step::Reply(vec![
        text("counted"),
        StreamEvent::Usage(usage),
        done(),
    ])]);
    ui.start().await;
    ui.say("count me");
    ui.settle().await;
    let s = ui.screen(100, 30);
    assert!(s.contains("1.2k in (800 cached) · 56 out"), "{s}");
    assert!(s.contains("Σ 1.3k tokens"), "prompt and reply: {s}");
}

#[tokio::test(start_paused = true)]
async fn an_image_for_a_model_without_vision_is_refused_when_attached() {
    let cfg: Config = toml::from_str(
        "[models.blind]\nprovider = \"openai\"\nmodel = \"text-only\"\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key = \"sk-test-0000000000\"\nvision = false\n",
    )
    .unwrap();
    let mut ui = Ui::with_config(vec![], cfg);
    ui.say("/model blind");
    let img = ui.h.dir.path().join("photo.png");
    std::fs::write(&img, b"\x89PNG\r\n\x1a\n0000").unwrap();
    ui.say(&format!("/attach {}", img.display()));
    let (line, error) = ui.app.status_pair();
    assert!(error && line.contains("vision"), "{line}");
    assert!(ui.app.composer.attachments.is_empty());
    assert!(
        ui.app.composer_text().starts_with("/attach"),
        "kept to be fixed"
    );
    ui.app.set_composer("");
    // A text file is still fine.
    let txt = ui.h.dir.path().join("notes.txt");
    std::fs::write(&txt, "plain text").unwrap();
    ui.say(&format!("/attach {}", txt.display()));
    assert_eq!(ui.app.composer.attachments.len(), 1, "{}", ui.status_line());
}

#[tokio::test(start_paused = true)]
async fn prose_is_laid_out_at_most_max_width_columns_on_a_wide_terminal() {
    let long = "word ".repeat(80);
    let mut ui = Ui::new(vec![reply_step(&long)]);
    ui.start().await;
    ui.say("a long answer please");
    ui.settle().await;
    let s = ui.screen(220, 30);
    let widest = s
        .lines()
        .filter(|l| l.contains("word"))
        .map(|l| l.trim_end().chars().count())
        .max()
        .unwrap();
    // The sidebar (28 columns) plus at most 100 of text.
    assert!(widest <= 28 + 100, "widest row {widest}:\n{s}");
    assert!(s.lines().filter(|l| l.contains("word")).count() >= 4, "{s}");
}

#[tokio::test(start_paused = true)]
async fn an_at_path_mention_attaches_the_file_and_tab_completes_it() {
    let mut ui = Ui::new(vec![]);
    let dir = ui.h.dir.path().to_path_buf();
    std::fs::write(dir.join("meeting-notes.txt"), "the notes").unwrap();
    // Tab completes the mention as a path.
    ui.typ(&format!("summarise @{}/meeting-n", dir.display()));
    ui.tab();
    assert_eq!(
        ui.app.composer_text(),
        format!("summarise @{}/meeting-notes.txt", dir.display())
    );
    ui.typ(" please, and greet @nobody");
    ui.enter();
    let rows = ui.rows();
    assert_eq!(rows.len(), 1, "{}", ui.status_line());
    let parts = rows[0].parts_json.clone().unwrap_or_default();
    assert!(parts.contains("meeting-notes.txt"), "attached: {parts}");
    assert!(
        rows[0].text.contains("@nobody"),
        "a mention that is no file stays text"
    );
    // What the mention attached is shown with the message, and said at once.
    assert!(
        ui.status_line().contains("meeting-notes.txt"),
        "{}",
        ui.status_line()
    );
    ui.start().await;
    ui.settle().await;
    let s = ui.screen(100, 30);
    assert!(s.contains("📎 meeting-notes.txt · text · 9 B"), "{s}");
}

/// Tab on a mention (or an `/attach` path) that could be several files
/// lists them, and the keys after it are typed as ever: it left the
/// composer in a state that took every key and showed nothing.
#[tokio::test(start_paused = true)]
async fn tab_on_an_ambiguous_path_lists_the_choices() {
    let mut ui = Ui::new(vec![]);
    let dir = ui.h.dir.path().to_path_buf();
    for f in ["big.txt", "big2.txt", "bin.dat"] {
        std::fs::write(dir.join(f), "x").unwrap();
    }
    std::fs::create_dir(dir.join("bin")).unwrap();
    let typed = format!("summarize @{}/bi", dir.display());
    ui.typ(&typed);
    ui.tab();
    assert_eq!(ui.app.composer_text(), typed);
    assert_eq!(ui.app.status_pair().0, "big.txt  big2.txt  bin.dat  bin/");
    ui.typ("g2");
    ui.tab();
    assert_eq!(
        ui.app.composer_text(),
        format!("summarize @{}/big2.txt", dir.display())
    );
    ui.app.set_composer("");
    ui.typ(&format!("/attach {}/bi", dir.display()));
    ui.tab();
    assert_eq!(ui.app.status_pair().0, "big.txt  big2.txt  bin.dat  bin/");
}

/// A file name with a space: Tab writes the space as `\ `, as a shell does,
/// and the mention attaches the file (it completed the name, and then the
/// message went without it, silently).
#[tokio::test(start_paused = true)]
async fn a_mention_of_a_file_with_a_space_in_its_name_attaches_it() {
    let mut ui = Ui::new(vec![]);
    let dir = ui.h.dir.path().to_path_buf();
    std::fs::write(dir.join("my file.txt"), "spaced content").unwrap();
    ui.typ(&format!("read @{}/my", dir.display()));
    ui.tab();
    assert_eq!(
        ui.app.composer_text(),
        format!("read @{}/my\\ file.txt", dir.display())
    );
    ui.typ(" please");
    ui.enter();
    let parts = ui.rows()[0].parts_json.clone().unwrap_or_default();
    assert!(parts.contains("spaced content"), "{parts}");
    // `/attach` reads the space written so too.
    ui.say(&format!("/attach {}/my\\ file.txt", dir.display()));
    assert_eq!(ui.app.composer.attachments.len(), 1, "{}", ui.status_line());
}

/// An edit of a message that mentioned `@path` brings its attachment back
/// as a chip; resent, the mention does not attach the file a second time.
#[tokio::test(start_paused = true)]
async fn an_edited_message_with_a_mention_carries_its_file_once() {
    let mut ui = Ui::new(vec![reply_step("one"), reply_step("two")]);
    ui.start().await;
    let dir = ui.h.dir.path().to_path_buf();
    std::fs::write(dir.join("a.txt"), "hello attach").unwrap();
    ui.say(&format!("summarize @{}/a.txt please", dir.display()));
    ui.settle().await;
    ui.press(KeyCode::Up);
    assert_eq!(ui.app.composer.attachments.len(), 1);
    ui.enter();
    ui.settle().await;
    let req = ui.h.provider.requests().pop().unwrap();
    let sent = format!("{:?}", req.messages);
    assert_eq!(sent.matches("hello attach").count(), 1, "{sent}");
}

/// `@path` attaches its file to a message sent later too (`/later`, `/at`,
/// Ctrl+T): it went without it, silently. A recurring message cannot carry
/// files, and says so instead of dropping them.
#[tokio::test(start_paused = true)]
async fn an_at_path_mention_attaches_the_file_to_a_scheduled_message_too() {
    let mut ui = Ui::new(vec![]);
    let dir = ui.h.dir.path().to_path_buf();
    std::fs::write(dir.join("report.txt"), "numbers").unwrap();
    let path = dir.join("report.txt").display().to_string();
    ui.say(&format!("/later 1h summarise @{path}"));
    let rows = ui.rows();
    assert_eq!(rows.len(), 1, "{}", ui.status_line());
    assert!(rows[0].due_at.is_some());
    let parts = rows[0].parts_json.clone().unwrap_or_default();
    assert!(parts.contains("report.txt"), "attached: {parts}");
    assert!(
        ui.status_line().contains("📎 report.txt"),
        "{}",
        ui.status_line()
    );
    // Ctrl+T's time goes the same way.
    ui.typ(&format!("and again @{path}"));
    let at = ui.h.engine.now_ms() + 3_600_000;
    ui.app
        .apply(vec![tock::tui::views::Intent::ScheduleComposer(at)]);
    ui.pump();
    let rows = ui.rows();
    assert_eq!(rows.len(), 2, "{}", ui.status_line());
    assert!(
        rows[1]
            .parts_json
            .clone()
            .unwrap_or_default()
            .contains("report.txt")
    );
    // A series: refused, with the reason; nothing made, the text kept.
    let cmd = format!("/every day at 9am look at @{path}");
    ui.say(&cmd);
    assert!(ui.h.engine.list_series(false).unwrap().is_empty());
    let (msg, is_err) = ui.app.status_pair();
    assert!(is_err && msg.contains("cannot carry files"), "{msg}");
    assert_eq!(ui.app.composer_text(), cmd);
}

/// Version keys pressed in a row keep to the message they started on;
/// anything else in between ends the run, so the next Alt+, steps the
/// newest message with versions (after a Ctrl+R on the last reply, it
/// stepped the reply stepped before, higher up).
#[tokio::test(start_paused = true)]
async fn version_keys_after_other_keys_step_the_newest_message_with_versions() {
    let mut ui = Ui::new(vec![
        reply_step("first answer"),
        reply_step("first answer again"),
        reply_step("second answer"),
        reply_step("second answer again"),
    ]);
    ui.start().await;
    ui.say("one");
    ui.settle().await;
    ui.ctrl('r');
    ui.settle().await;
    ui.screen(100, 40);
    ui.key(KeyCode::Char(','), KeyModifiers::ALT);
    ui.pump();
    assert!(ui.screen(100, 40).contains("first answer ·") || ui.status_line().contains("‹1/2›"));
    ui.say("two");
    ui.settle().await;
    ui.ctrl('r');
    ui.settle().await;
    ui.screen(100, 40);
    ui.key(KeyCode::Char(','), KeyModifiers::ALT);
    ui.pump();
    let s = ui.screen(100, 40);
    assert!(
        s.contains("second answer") && !s.contains("second answer again"),
        "{s}"
    );
    assert!(
        ui.status_line()
            .starts_with("‹1/2›: the conversation goes on"),
        "{}",
        ui.status_line()
    );
}
