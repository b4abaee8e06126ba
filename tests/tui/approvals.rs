//! Tool calls waiting for approval: the card, typing past it, commands while it waits.

use super::*;

/// The card of a server's tool call shows its arguments line by line, as
/// many as fit; Ctrl+O shows all of them (what a long file ends with, where
/// a harmful line would hide), and Esc goes back to the card to answer.
#[tokio::test(start_paused = true)]
async fn the_approval_card_shows_every_argument_of_a_long_call_on_ctrl_o() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.say("hello");
    ui.settle().await;
    let conv = ui.conv();
    let mut content: String = (0..60)
        .map(|i| format!("line {i}: harmless text\n"))
        .collect();
    content.push_str("rm -rf ~ # hidden at the end");
    let args = serde_json::json!({"path": "/tmp/notes/long.txt", "content": content}).to_string();
    let now = ui.h.engine.now_ms();
    ui.store()
        .add_approval(conv, 0, "call_9", "files__write_file", &args, "{}", now)
        .unwrap();
    ui.app.on_engine(Event::Conversation(conv));
    ui.pump();
    assert_eq!(ui.app.top(), Some(ViewKind::Approval));
    let s = ui.screen(100, 30);
    assert!(s.contains("Allow files__write_file?"), "{s}");
    assert!(s.contains("path: /tmp/notes/long.txt"), "{s}");
    assert!(
        s.contains("content: (61 lines)") && s.contains("line 0: harmless text"),
        "{s}"
    );
    assert!(
        s.contains("more lines — Ctrl+O shows the whole call"),
        "{s}"
    );
    assert!(!s.contains("rm -rf"), "{s}");
    snap!("approval_long_call_100x30", ui.render(100, 30).backend());
    // In 40 columns the note keeps its key (it was cut to "Ctrl+O shows the wh").
    let narrow = ui.screen(40, 20);
    assert!(
        narrow
            .lines()
            .any(|l| l.contains("more lines — Ctrl+O shows all")
                || l.trim_end().ends_with("more — Ctrl+O │")),
        "{narrow}"
    );
    ui.key(KeyCode::Char('o'), KeyModifiers::CONTROL);
    assert_eq!(ui.app.top(), Some(ViewKind::Call));
    ui.render(100, 30);
    ui.press(KeyCode::End);
    let s = ui.screen(100, 30);
    assert!(s.contains("rm -rf ~ # hidden at the end"), "{s}");
    ui.render(60, 15);
    ui.press(KeyCode::End);
    snap!("approval_call_end_60x15", ui.render(60, 15).backend());
    ui.press(KeyCode::Esc);
    assert_eq!(ui.app.top(), Some(ViewKind::Approval), "back to answer it");
    ui.press(KeyCode::Right);
    ui.enter();
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_none(), "denied");
}

/// A schedule_task card in a narrow window: the instruction wraps, and
/// where it is longer than the card holds its last row ends in `…` and the
/// card says Ctrl+O shows it all; the title is cut inside its quotes and
/// its `[needs approval]` badge is whole (it was cut to `[needs approv`,
/// the instruction to its first row with no `…`).
#[tokio::test(start_paused = true)]
async fn a_long_instruction_on_the_approval_card_says_it_is_cut() {
    let instruction = "review the pull requests that are waiting for me in the main \
        repository today and then also the ones in the docs repository and the \
        website, and write a summary for the team";
    let args = serde_json::json!({
        "instruction": instruction,
        "delay_secs": 600,
        "title": "review the pull requests that",
    })
    .to_string();
    let mut ui = Ui::new(vec![
        Step::Reply(vec![tool_call("schedule_task", &args), done()]),
        Step::Reply(vec![text("Done."), done()]),
    ]);
    ui.start().await;
    ui.say("remind me");
    ui.settle().await;
    assert_eq!(ui.app.top(), Some(ViewKind::Approval));
    ui.app.sidebar_pref = Some(false);
    let s = ui.screen(60, 15);
    assert!(
        s.contains("╭─ Schedule “review the pull request…”? [needs approval] ─"),
        "{s}"
    );
    assert!(
        s.contains("│ review the pull requests that are waiting for me in the"),
        "{s}"
    );
    assert!(
        s.contains("│ main repository today and then also the ones in the …"),
        "{s}"
    );
    assert!(s.contains("│ Ctrl+O shows the whole instruction"), "{s}");
    assert!(s.contains("│ fires Mon 30 Nov 01:03, in 10m"), "{s}");
    snap!("approval_long_instruction_60x15", s);
    // Where there is room, all of it, and no word of a cut.
    let s = ui.screen(120, 40);
    assert!(
        s.contains("│ the website, and write a summary for the team"),
        "{s}"
    );
    assert!(!s.contains("shows the whole instruction"), "{s}");
    snap!("approval_long_instruction_120x40", s);
    // With the sidebar, the badge goes whole rather than be cut.
    ui.app.sidebar_pref = Some(true);
    let s = ui.screen(60, 15);
    assert!(!s.contains("[needs"), "{s}");
    // and the time in fewer words rather than its countdown cut.
    assert!(s.contains("│ fires 01:03, in 10m "), "{s}");
    ui.app.sidebar_pref = None;
    ui.key(KeyCode::Char('o'), KeyModifiers::CONTROL);
    assert_eq!(ui.app.top(), Some(ViewKind::Call));
}

/// With `approval_timeout`, the card says when the call is declined if
/// nobody answers, and counts down to it.
#[tokio::test(start_paused = true)]
async fn the_approval_card_says_when_an_unanswered_call_is_declined() {
    let mut cfg = Config::default();
    cfg.approvals.approval_timeout = Some("90m".into());
    let mut ui = Ui::with_config(task_steps(), cfg);
    ui.start().await;
    ui.say("remind me to check the build");
    ui.settle().await;
    assert_eq!(ui.app.top(), Some(ViewKind::Approval));
    let s = ui.screen(100, 30);
    assert!(
        s.contains("unanswered, it is declined Mon 30 Nov 02:23, in 1h 30m"),
        "{s}"
    );
    tokio::time::sleep(std::time::Duration::from_secs(30 * 60)).await;
    ui.pump();
    let s = ui.screen(100, 30);
    assert!(
        s.contains("unanswered, it is declined Mon 30 Nov 02:23, in 1h "),
        "{s}"
    );
}

#[tokio::test(start_paused = true)]
async fn typed_text_never_answers_an_approval_and_is_kept() {
    let mut ui = Ui::new(task_steps());
    ui.start().await;
    ui.say("remind me to check the build");
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_some());
    assert_eq!(ui.app.top(), Some(ViewKind::Approval));
    // A word typed before noticing the card, then Enter: a message, queued
    // behind the call, never an answer to it.
    ui.typ("yes and now");
    ui.enter();
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_some(), "not answered");
    assert_eq!(ui.app.composer_text(), "");
    assert!(
        ui.rows()
            .iter()
            .any(|r| r.user_text().as_deref() == Some("yes and now") && !r.status.is_finished()),
        "queued"
    );
    assert!(ui.rows().iter().all(|r| r.kind != Kind::Task));
    // "a" on an empty composer followed by more letters is a word, not a choice.
    ui.typ("apple");
    assert!(ui.app.model.waiting_approval().is_some());
    assert_eq!(ui.app.composer_text(), "apple");
    snap!("approval_pending_60x15", ui.screen(60, 15));
    snap!("approval_pending_120x40", ui.screen(120, 40));
    // At 40 columns the composer's border says it in fewer words, whole.
    ui.app.composer.clear(0);
    let tiny = ui.screen(40, 12);
    assert!(
        tiny.contains("╭ a tool call waits above ─")
            && tiny.contains("│answer the approval above first"),
        "{tiny}"
    );
    // Enter on nothing chosen with nothing typed asks for a choice; a
    // deliberate choice answers it, and the hint to choose goes with the key.
    ui.enter();
    assert!(
        ui.status_line().starts_with("choose Approve or Deny first"),
        "{}",
        ui.status_line()
    );
    ui.press(KeyCode::Left);
    assert_eq!(
        ui.status_line(),
        "",
        "the hint is stale once a choice is made"
    );
    ui.enter();
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_none());
    assert!(ui.rows().iter().any(|r| r.kind == Kind::Task));
}

/// With text in the composer, ← / → move its cursor: they do not choose on
/// the card (a draft's ← then Enter approved the call). Tab still chooses,
/// and the card says so, and that Enter alone would queue the text.
#[tokio::test(start_paused = true)]
async fn arrows_edit_a_draft_while_an_approval_waits_and_tab_chooses() {
    let mut ui = Ui::new(task_steps());
    ui.start().await;
    ui.say("remind me to check the build");
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_some());
    ui.typ("my draft");
    ui.press(KeyCode::Left);
    ui.press(KeyCode::Left);
    ui.ch('X');
    assert_eq!(ui.app.composer_text(), "my draXft", "← moved the cursor");
    ui.press(KeyCode::Right);
    let screen = ui.screen(120, 40);
    assert!(
        screen.contains("Tab to choose, then Enter (Enter alone queues your text)"),
        "{screen}"
    );
    // Tab chooses Approve (then Deny); Enter confirms it, text and all.
    ui.tab();
    ui.enter();
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_none());
    assert!(ui.rows().iter().any(|r| r.kind == Kind::Task));
    assert_eq!(ui.app.composer_text(), "my draXft", "the draft is kept");
}

/// While an approval waits, a slash command still runs (`/tools` shows what
/// the call would use; `/later` schedules), and a message is queued behind
/// the call: only Enter on nothing typed and nothing chosen asks for a choice.
#[tokio::test(start_paused = true)]
async fn slash_commands_run_while_an_approval_waits() {
    let mut ui = Ui::new(task_steps());
    ui.start().await;
    ui.say("remind me to check the build");
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_some());
    ui.typ("/later 10m water the plants");
    let s = ui.screen(120, 40);
    assert!(
        s.contains("Tab to choose, then Enter (Enter alone runs your command)"),
        "{s}"
    );
    ui.enter();
    ui.settle().await;
    assert_eq!(ui.app.composer_text(), "", "the command ran");
    assert!(
        ui.rows()
            .iter()
            .any(|r| r.user_text().as_deref() == Some("water the plants")),
        "scheduled"
    );
    assert!(ui.app.model.waiting_approval().is_some(), "not answered");
    ui.typ("/tools");
    ui.enter();
    assert_eq!(ui.app.top(), Some(ViewKind::Tools));
    assert!(ui.app.model.waiting_approval().is_some(), "not answered");
    // A message is queued, as while a reply streams: it goes once the
    // call is answered and the turn is over, and the card still waits.
    ui.press(KeyCode::Esc);
    ui.typ("a message");
    ui.enter();
    ui.settle().await;
    assert_eq!(ui.app.composer_text(), "");
    assert_eq!(
        ui.status_line(),
        "queued: it goes once the call above is answered and its reply is in"
    );
    assert!(ui.app.model.waiting_approval().is_some(), "not answered");
    assert!(!ui.user_texts().contains(&"a message".to_string()));
    let queued = ui
        .rows()
        .into_iter()
        .find(|r| r.user_text().as_deref() == Some("a message"))
        .expect("queued");
    assert!(!queued.status.is_finished());
    // Enter on nothing chosen with an empty composer still asks for a
    // choice, as it does on spaces alone.
    ui.enter();
    assert!(ui.status_line().starts_with("choose Approve or Deny first"));
    ui.typ("   ");
    let s = ui.screen(120, 40);
    assert!(!s.contains("queues your text"), "spaces are no text: {s}");
    ui.enter();
    assert!(
        ui.status_line().starts_with("choose Approve or Deny first"),
        "{}",
        ui.status_line()
    );
    ui.ctrl('u');
    ui.press(KeyCode::Left);
    ui.enter();
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_none());
    assert!(
        ui.user_texts().contains(&"a message".to_string()),
        "sent after the turn"
    );
}

/// The list of slash commands while an approval card waits: shown over
/// the card, and ↓, Tab and Enter are the list's (the card's Tab chose on
/// the card and the list vanished); with the list closed, the card has its
/// keys again.
#[tokio::test(start_paused = true)]
async fn the_command_list_works_while_an_approval_waits() {
    let mut ui = Ui::new(task_steps());
    ui.start().await;
    ui.say("remind me to check the build");
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_some());
    ui.typ("/h");
    for (w, h) in [(120, 40), (60, 15)] {
        let s = ui.screen(w, h);
        assert!(s.contains("/help"), "{w}×{h}:\n{s}");
    }
    ui.press(KeyCode::Enter);
    assert_eq!(ui.app.top(), Some(ViewKind::Help), "/help ran");
    ui.press(KeyCode::Esc);
    ui.typ("/mo");
    ui.press(KeyCode::Down);
    ui.tab();
    assert_eq!(ui.app.composer_text(), "/mouse ");
    assert!(ui.app.model.waiting_approval().is_some(), "not answered");
}

/// Esc closes the list, and does nothing else: while a reply streamed it
/// stopped the reply. A choice made in a list that closed is not the next
/// list's (`/`, ↑ to `/quit`, Ctrl+U, `/`, Enter quit tock). A command
/// chosen with ↓ wins over a whole name typed (`/at`, ↓, Enter ran `/at`).
#[tokio::test(start_paused = true)]
async fn esc_closes_the_command_list_and_a_choice_does_not_outlive_it() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![Step::Hold(vec![text("Let me think")], gate.clone())]);
    ui.start().await;
    ui.say("a question");
    ui.settle().await;
    ui.streamed().await;
    assert!(ui.app.model.is_busy());
    ui.typ("/");
    assert!(ui.screen(120, 40).contains("commands ·"));
    ui.press(KeyCode::Esc);
    assert!(ui.app.model.is_busy(), "the reply goes on");
    assert!(!ui.screen(120, 40).contains("commands ·"), "closed");
    assert_eq!(ui.app.composer_text(), "/", "what was typed stays");
    ui.typ("m");
    assert!(
        ui.screen(120, 40).contains("commands ·"),
        "open again as the line changes"
    );
    ui.ctrl('u');
    ui.typ("/");
    ui.press(KeyCode::Up);
    ui.ctrl('u');
    ui.typ("/");
    ui.press(KeyCode::Enter);
    assert!(!ui.app.quit, "the first command, not /quit");
    assert_eq!(ui.app.composer_text(), "/later ");
    ui.ctrl('u');
    ui.typ("/at");
    ui.press(KeyCode::Down);
    ui.press(KeyCode::Enter);
    assert_eq!(ui.app.composer_text(), "/attach ");
    gate.notify_one();
    ui.settle().await;
}

/// "choose Approve or Deny first" goes once the approval is answered
/// elsewhere (`tock approve`), with no key pressed here; a key's
/// confirmation ("conversation deleted", "retrying") goes with the next key.
#[tokio::test(start_paused = true)]
async fn key_hints_go_when_answered_elsewhere_or_at_the_next_key() {
    let mut ui = Ui::new(task_steps());
    ui.start().await;
    ui.say("remind me to check the build");
    ui.settle().await;
    let approval = ui.app.model.waiting_approval().unwrap().id;
    ui.enter();
    assert!(
        ui.status_line().starts_with("choose Approve or Deny first"),
        "{}",
        ui.status_line()
    );
    ui.h.engine.answer_approval(approval, true).unwrap();
    ui.settle().await;
    assert_eq!(ui.status_line(), "", "answered from elsewhere");
    // An item's confirmation lasts until the next key.
    let task = ui
        .rows()
        .into_iter()
        .find(|i| i.kind == Kind::Task)
        .expect("the task");
    ui.tab();
    ui.ch('x');
    ui.enter();
    ui.settle().await;
    assert_eq!(ui.row(task.id).status, Status::Canceled);
    assert_eq!(ui.status_line(), "canceled");
    ui.press(KeyCode::Esc);
    assert_eq!(ui.status_line(), "");
}

/// With a card up, the rows above the composer are the card's: a time
/// error too long for the borders stays on them (cut) rather than under
/// the card, unseen. The card's notice goes with a key pressed once it
/// has been up a while (the card, its count and the list's mark stay).
#[tokio::test(start_paused = true)]
async fn a_time_error_and_the_notice_beside_an_approval_card() {
    let mut ui = Ui::new(task_steps());
    ui.start().await;
    ui.app.sidebar_pref = Some(false);
    ui.say("remind me to check the build");
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_some());
    let notice = "schedule_task waits for your approval";
    assert!(ui.status_line().contains(notice), "{}", ui.status_line());
    ui.typ("/at 9am friday prep");
    assert!(ui.status_line().contains(notice), "typed as it came");
    let s = ui.screen(60, 15);
    let top = s.lines().find(|l| l.starts_with('╭')).unwrap_or_default();
    assert!(top.contains("✗ \"friday\" after \"9am\""), "{s}");
    tokio::time::advance(std::time::Duration::from_secs(3)).await;
    ui.settle().await;
    ui.press(KeyCode::End);
    assert!(!ui.status_line().contains(notice), "{}", ui.status_line());
    assert!(ui.app.model.waiting_approval().is_some());
    assert!(ui.screen(120, 40).contains("?1 to approve"));
}

/// A task the model gave no title is named on its cards by the start of
/// its instruction, not "task" again ("Schedule “task”?", "task #3 · task").
#[tokio::test(start_paused = true)]
async fn a_task_without_a_title_is_named_by_its_instruction() {
    let mut ui = Ui::new(vec![
        Step::Reply(vec![
            tool_call(
                "schedule_task",
                r#"{"instruction":"remind the user to stretch their legs","delay_secs":600}"#,
            ),
            done(),
        ]),
        Step::Reply(vec![text("Scheduled."), done()]),
    ]);
    ui.start().await;
    ui.say("remind me to stretch");
    ui.settle().await;
    let s = ui.screen(120, 40);
    assert!(s.contains("Schedule “remind the user to stretch…”?"), "{s}");
    ui.approve();
    ui.settle().await;
    let s = ui.screen(120, 40);
    assert!(
        s.contains("· remind the user to stretch… [scheduled]"),
        "{s}"
    );
    assert!(!s.contains("“task”") && !s.contains("· task ["), "{s}");
}

/// While a card waits, ↑ on an empty composer says why it edits nothing
/// (an edit would replace the reply that made the call); Ctrl+P still
/// recalls a message sent into the composer, to queue it again.
#[tokio::test(start_paused = true)]
async fn up_beside_an_approval_card_says_why_and_ctrl_p_recalls() {
    let mut ui = Ui::new(task_steps());
    ui.start().await;
    ui.say("remind me to check the build");
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_some());
    ui.press(KeyCode::Up);
    assert!(
        ui.status_line()
            .starts_with("the tool call above waits for your answer"),
        "{}",
        ui.status_line()
    );
    assert!(ui.app.composer.edit.is_none());
    ui.ctrl('p');
    assert_eq!(ui.app.composer_text(), "remind me to check the build");
    assert!(ui.app.model.waiting_approval().is_some(), "not answered");
}

/// An edit resent over an exchange whose call scheduled a task says the
/// task stays (it fired twice, v1's and v2's, with nothing said).
#[tokio::test(start_paused = true)]
async fn an_edit_over_an_exchange_that_scheduled_a_task_says_it_stays() {
    let mut ui = Ui::new(task_steps());
    ui.start().await;
    ui.say("check the build in an hour");
    ui.settle().await;
    ui.approve();
    ui.settle().await;
    let task = ui
        .rows()
        .into_iter()
        .find(|r| r.kind == Kind::Task)
        .expect("the task");
    ui.press(KeyCode::Up);
    ui.typ(" please");
    ui.enter();
    ui.settle().await;
    let line = ui.status_line();
    assert!(
        line.contains(&format!(
            "the task it scheduled, “build check” (#{}), stays: x in the strip cancels it",
            task.id
        )),
        "{line}"
    );
}
