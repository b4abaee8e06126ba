//! Recurring series and the F2 pane, and the status and exit lines about them.

use super::*;

#[tokio::test(start_paused = true)]
async fn every_creates_a_series_with_a_live_preview() {
    let mut ui = Ui::new(vec![]);
    ui.typ("/every weekday 9am stand-up notes");
    let s = ui.screen(120, 40);
    // 2026-11-30 00:53 UTC is a Monday.
    assert!(
        s.contains("⏰ every weekday at 09:00 — next Mon 30 Nov 09:00, then Tue, Wed"),
        "{s}"
    );
    snap!("every_preview_120x40", s);
    // Where rule and times do not both fit, the rule and its next time.
    ui.app.sidebar_pref = None;
    ui.app.sidebar_pref = Some(false);
    let narrow = ui.screen(60, 15);
    ui.app.sidebar_pref = Some(true);
    assert!(
        narrow.contains("⏰ every weekday at 09:00 — next Mon 30 Nov 09:00 "),
        "{narrow}"
    );
    // Where the three times do not fit beside the rule, two do before one
    // (the 31st of each month: the second shows a month skipped), and an
    // ellipsis says more follow.
    ui.ctrl('u');
    ui.typ("/every month on the 31st 9am pay the rent");
    ui.app.sidebar_pref = Some(true);
    let mid = ui.screen(120, 40);
    assert!(
        mid.contains(
            "⏰ every month on the 31st at 09:00 — next Thu 31 Dec 09:00, then Sun 31 Jan, … ─"
        ),
        "{mid}"
    );
    ui.app.sidebar_pref = None;
    // Where the rule and its next time do not fit, the next time's day:
    // the rule in words stays (it is what the preview confirms; its end
    // alone, or the times cut, left what was understood to be guessed).
    ui.ctrl('u');
    ui.typ("/every weekday 9am stand-up notes for 3 times");
    ui.app.sidebar_pref = Some(false);
    let narrow = ui.screen(60, 15);
    assert!(
        narrow.contains("╭ ⏰ every weekday at 09:00, 3 times — next Mon 30 Nov ─"),
        "{narrow}"
    );
    ui.ctrl('u');
    ui.typ("/every mon,wed,fri 8:30 gym");
    let narrow = ui.screen(60, 15);
    assert!(
        narrow.contains("╭ ⏰ every Mon, Wed and Fri at 08:30 — next Mon 30 Nov ─"),
        "{narrow}"
    );
    // An end said after the text is the series' end, and shown as one.
    ui.ctrl('u');
    ui.typ("/every mon,wed,fri 8:30 gym until 2027-01-31");
    let narrow = ui.screen(60, 15);
    assert!(
        narrow.contains("╭ ⏰ every Mon, Wed, Fri 08:30, until 31 Jan 2027 · \"gym\" ─"),
        "{narrow}"
    );
    // Where even that does not fit, the rule in fewer words, its end kept
    // (what a typo would lose), before anything is cut.
    ui.ctrl('u');
    ui.typ("/every mon,wed,fri 8:30 until 2027-01-31 team sync");
    let narrow = ui.screen(60, 15);
    ui.app.sidebar_pref = Some(true);
    assert!(
        narrow.contains("╭ ⏰ every Mon, Wed, Fri 08:30, until 31 Jan 2027 ─"),
        "{narrow}"
    );
    assert!(!narrow.contains('…'), "{narrow}");
    ui.ctrl('u');
    ui.typ("/every weekday 9am stand-up notes");
    ui.enter();
    assert_eq!(ui.app.composer_text(), "", "{}", ui.status_line());
    let series = ui.h.engine.list_series(false).unwrap();
    assert_eq!(series.len(), 1);
    assert_eq!(series[0].series.text, "stand-up notes");
    assert_eq!(series[0].description, "every weekday at 09:00");
    // A rule that cannot be read keeps the text and creates nothing.
    ui.typ("/every blursday 9am x");
    assert!(ui.screen(120, 40).contains("✗ "));
    ui.enter();
    assert!(ui.app.status_pair().1);
    assert_eq!(ui.app.composer_text(), "/every blursday 9am x");
    assert_eq!(ui.h.engine.list_series(false).unwrap().len(), 1);
    // A rule the send would refuse is refused by the preview as you type.
    ui.ctrl('u');
    ui.typ("/every 99999h x");
    let s = ui.screen(120, 40);
    assert!(s.contains("✗ its first time is too far ahead"), "{s}");
}

/// At 60 columns a cron rule's words, too long for the composer's title,
/// are cut after a whole day of their list (`on Monday, Tuesday, …)`), not
/// inside one (`on Monday, T…`, a day that is not there), and never inside
/// the quoted pattern; its end stays whole.
#[tokio::test(start_paused = true)]
async fn the_every_preview_of_a_cron_rule_is_cut_after_a_whole_word() {
    let mut ui = Ui::new(vec![]);
    ui.app.sidebar_pref = Some(false);
    ui.typ("/every cron \"0 9 * * 1-5\" stand-up notes");
    let s = ui.screen(60, 15);
    assert!(
        s.contains("╭ ⏰ cron \"0 9 * * 1-5\" (at 09:00, on Monday, Tuesday, …) ─"),
        "{s}"
    );
    snap!("every_preview_cron_60x15", s);
    ui.ctrl('u');
    ui.typ("/every cron \"*/15 9-17 * * 1-5\" until 2027-01-31 check the queue");
    let s = ui.screen(60, 15);
    assert!(
        s.contains("╭ ⏰ cron \"*/15 9-17 * * 1-5\" …, until 31 Jan 2027 ─"),
        "{s}"
    );
    // Wider, more of the words, still cut after a whole one.
    let s = ui.screen(80, 15);
    assert!(
        s.contains("⏰ cron \"*/15 9-17 * * 1-5\" (every 15 minutes, …), until 31 Jan 2027 ─"),
        "{s}"
    );
}

/// The approval card of a repeating task at 60 columns: its rule cut (the
/// `until …` that ends it) says Ctrl+O shows the whole call, as a cut
/// instruction does; where nothing is cut, no hint.
#[tokio::test(start_paused = true)]
async fn the_approval_card_wraps_its_rule_and_says_ctrl_o_when_it_is_cut() {
    let mut ui = Ui::new(vec![Step::Reply(vec![
        text("I'll check the build every weekday morning."),
        tool_call(
            "schedule_task",
            r#"{"instruction":"check the build","repeat":"every weekday at 8:30","until":"2027-01-31","title":"build"}"#,
        ),
        done(),
    ])]);
    ui.start().await;
    ui.say("check the build every weekday morning until the end of january");
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_some());
    ui.app.sidebar_pref = Some(false);
    // At 60 columns the rule takes a second row, whole.
    let s = ui.screen(60, 20);
    assert!(
        s.contains("│ repeats every weekday at 08:30, until Sun 31 Jan 2027")
            && s.contains("│ 23:59"),
        "{s}"
    );
    assert!(!s.contains("shows the whole"), "{s}");
    snap!("approval_repeating_until_60x20", s);
    // Narrower, two rows do not hold it: cut, and the card says Ctrl+O.
    let s = ui.screen(34, 24);
    assert!(s.contains("…"), "{s}");
    assert!(s.contains("Ctrl+O shows the whole"), "{s}");
    let s = ui.screen(120, 40);
    assert!(s.contains("until Sun 31 Jan 2027 23:59"), "{s}");
    assert!(!s.contains("shows the whole"), "{s}");
}

#[tokio::test(start_paused = true)]
async fn the_approval_card_of_a_repeating_task_shows_the_rule() {
    let mut ui = Ui::new(vec![Step::Reply(vec![
        text("I'll summarise your notes every morning."),
        tool_call(
            "schedule_task",
            r#"{"instruction":"summarise what changed in ~/notes","repeat":"every day at 8am","title":"notes"}"#,
        ),
        done(),
    ])]);
    ui.start().await;
    ui.say("summarise my notes every morning");
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_some());
    let s = ui.screen(100, 30);
    assert!(s.contains("repeats every day at 08:00"), "{s}");
    assert!(s.contains("next "), "{s}");
    snap!("approval_repeating_100x30", s);
}

/// A repeating task's card counts its next time down as a one-off's does:
/// on an idle screen it showed "in 48s" 26 s late (until the clock check).
#[tokio::test(start_paused = true)]
async fn a_repeating_task_card_counts_down_on_an_idle_screen() {
    let mut ui = Ui::new(vec![
        Step::Reply(vec![
            tool_call(
                "schedule_task",
                r#"{"instruction":"stretch","repeat":"every 2 minutes","title":"stretch"}"#,
            ),
            done(),
        ]),
        Step::Reply(vec![text("scheduled"), done()]),
    ]);
    ui.start().await;
    ui.say("remind me to stretch every 2 minutes");
    ui.settle().await;
    ui.press(KeyCode::Left);
    ui.enter();
    ui.settle().await;
    ui.pump();
    assert!(!ui.app.model.task_series.is_empty(), "the card's series");
    let next = ui
        .app
        .model
        .task_series
        .values()
        .next()
        .unwrap()
        .series
        .next_due_at
        .unwrap();
    ui.app.status = None;
    let now = ui.h.engine.now_ms();
    let tick = ui.app.next_tick_at().unwrap();
    assert!(
        tick <= now + 1_000 || tick == next,
        "next tick {} ms on",
        tick - now
    );
}

#[tokio::test(start_paused = true)]
async fn f2_lists_series_and_its_keys_act_on_them() {
    let mut ui = Ui::new(vec![]);
    ui.say("/every day at 9am water the plants");
    ui.say("/later 1h a one-off");
    let id = ui.h.engine.list_series(false).unwrap()[0].series.id;
    ui.pump();
    let s = ui.screen(110, 30);
    assert!(
        s.contains("↻1 recurring"),
        "the status bar counts series:\n{s}"
    );
    ui.press(KeyCode::F(2));
    let s = ui.screen(110, 30);
    assert!(
        s.contains("recurring") && s.contains("water the plants"),
        "{s}"
    );
    assert!(s.contains("every day at 09:00"), "the rule in words:\n{s}");
    assert!(s.contains("0 sent, 0 skipped"), "{s}");
    snap!("f2_with_a_series_110x30", s);
    // A series' own keys are on its detail line even at 60 columns.
    ui.app.sidebar_pref = None;
    ui.app.sidebar_pref = Some(false);
    let narrow = ui.screen(60, 15);
    ui.app.sidebar_pref = Some(true);
    assert!(narrow.contains("p pause · n skip · r rule"), "{narrow}");
    let status = |ui: &Ui| ui.h.engine.series_view(id).unwrap().unwrap().series.status;
    // p pauses, p resumes.
    ui.ch('p');
    assert_eq!(status(&ui), tock::store::SeriesStatus::Paused);
    // Paused, it has no time counting down (it looked about to fire).
    let s = ui.screen(110, 30);
    let row = s.lines().find(|l| l.contains("water the plants")).unwrap();
    assert!(
        row.contains("paused") && !row.contains(" in ") && !row.contains("09:00"),
        "{row}"
    );
    assert!(
        s.contains("paused: nothing is sent until it is resumed"),
        "{s}"
    );
    ui.ch('p');
    assert_eq!(status(&ui), tock::store::SeriesStatus::Active);
    // n skips the next occurrence: 09:00 today becomes 09:00 tomorrow.
    let before =
        ui.h.engine
            .series_view(id)
            .unwrap()
            .unwrap()
            .series
            .next_due_at
            .unwrap();
    ui.ch('n');
    let after =
        ui.h.engine
            .series_view(id)
            .unwrap()
            .unwrap()
            .series
            .next_due_at
            .unwrap();
    assert_eq!(after - before, 24 * 3_600_000);
    // s sends one extra occurrence now.
    ui.ch('s');
    let occ = ui.store().series_occurrences(id).unwrap();
    assert_eq!(occ.len(), 1, "{occ:?}");
    // r edits the rule, with a preview; a bad rule is refused in place.
    ui.ch('r');
    ui.ctrl('u');
    ui.typ("every weekday 8:30");
    let s = ui.screen(110, 30);
    assert!(s.contains("every weekday at 08:30 — next"), "{s}");
    ui.enter();
    let v = ui.h.engine.series_view(id).unwrap().unwrap();
    assert_eq!(v.description, "every weekday at 08:30");
    // e edits the text.
    ui.ch('e');
    ui.ctrl('u');
    ui.typ("water the ferns");
    ui.enter();
    assert_eq!(
        ui.h.engine.series_view(id).unwrap().unwrap().series.text,
        "water the ferns"
    );
    // x then y ends it: the question says it is a series that ends.
    ui.ch('x');
    let s = ui.screen(110, 30);
    assert!(
        s.contains(&format!("End recurring series #{id}? Enter/Esc")) && s.contains("Enter end it"),
        "{s}"
    );
    ui.enter();
    assert_eq!(status(&ui), tock::store::SeriesStatus::Ended);
    // Finished occurrences are listed under their series with `a`.
    ui.ch('a');
    let s = ui.screen(110, 30);
    assert!(s.contains("↳ water the plants"), "{s}");
}

/// A series that ran its course reads as finished in F2: how many times
/// it ran, and that it ended, without the keys that would only answer that
/// it has ended.
#[tokio::test(start_paused = true)]
async fn f2_a_series_that_ran_its_course_reads_as_finished() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.say("/every 1 minute for 2 times stretch");
    let id = ui.h.engine.list_series(false).unwrap()[0].series.id;
    tokio::time::sleep(std::time::Duration::from_secs(2 * 60 + 5)).await;
    ui.settle().await;
    let v = ui.h.engine.series_view(id).unwrap().unwrap();
    assert_eq!(
        (v.series.status, v.series.occurrences, v.series.skipped),
        (tock::store::SeriesStatus::Ended, 2, 0)
    );
    // The status bar counts it no more.
    let s = ui.screen(110, 30);
    assert!(!s.contains("↻1"), "{s}");
    ui.press(KeyCode::F(2));
    ui.ch('a');
    ui.press(KeyCode::Home);
    let s = ui.screen(110, 30);
    assert!(s.contains("every minute · ran 2 times, ended"), "{s}");
    assert!(!s.contains("so far") && !s.contains("p pause"), "{s}");
    snap!("f2_with_an_ended_series_110x30", s);
}

/// r on a series shows its rule selected: a new rule typed replaces it
/// (typed after it, the two ran together — `every weekday at 09:00every
/// mon,wed 8:30` — and were refused), and the prompt says so; a move first
/// keeps it to edit.
#[tokio::test(start_paused = true)]
async fn f2_r_on_a_series_a_new_rule_typed_replaces_the_old() {
    let mut ui = Ui::new(vec![]);
    ui.say("/every weekday 9am stand-up notes");
    let id = ui.h.engine.list_series(false).unwrap()[0].series.id;
    ui.pump();
    ui.press(KeyCode::F(2));
    ui.ch('r');
    ui.app.sidebar_pref = Some(false);
    let s = ui.screen(60, 15);
    assert!(
        s.contains("│typing replaces this rule · ← or → to edit it"),
        "{s}"
    );
    snap!("f2_rule_prompt_60x15", s);
    let s = ui.screen(120, 40);
    assert!(
        s.contains("every weekday at 09:00")
            && s.contains("typing replaces this rule · ← or → to edit it"),
        "{s}"
    );
    snap!("f2_rule_prompt_120x40", s);
    ui.app.sidebar_pref = None;
    ui.typ("every mon,wed 8:30");
    let s = ui.screen(120, 40);
    assert!(
        !s.contains("typing replaces"),
        "said while it is selected:\n{s}"
    );
    assert!(s.contains("↻ every Mon and Wed at 08:30"), "{s}");
    ui.enter();
    let v = ui.h.engine.series_view(id).unwrap().unwrap();
    assert_eq!(
        v.description,
        "every Mon and Wed at 08:30",
        "{}",
        ui.status_line()
    );
    // A move first keeps the rule: what is typed then goes where the cursor is.
    ui.ch('r');
    ui.press(KeyCode::End);
    ui.typ(" for 3 times");
    ui.enter();
    let v = ui.h.engine.series_view(id).unwrap().unwrap();
    assert_eq!(
        v.description,
        "every Mon and Wed at 08:30, 3 left",
        "{}",
        ui.status_line()
    );
    // A delete takes the selected rule whole, as typing does; the end it
    // had goes with it, and the preview says so (it went unsaid).
    ui.ch('r');
    ui.press(KeyCode::Backspace);
    ui.typ("every day 7am");
    let s = ui.screen(120, 40);
    assert!(
        s.contains("· its end") && s.contains("goes: add \"for 3 times\" to keep it"),
        "{s}"
    );
    ui.enter();
    let v = ui.h.engine.series_view(id).unwrap().unwrap();
    assert_eq!(v.description, "every day at 07:00", "{}", ui.status_line());
}

/// The status line `/every` leaves ("repeating: every day at 09:00 — …")
/// goes when the series it names changes — a new rule, a pause, its end,
/// in F2 or from another tock — instead of showing the old rule out its
/// ten seconds; a change to another series leaves it.
#[tokio::test(start_paused = true)]
async fn the_repeating_line_goes_when_its_series_changes() {
    let repeating = |ui: &Ui| {
        ui.status_line()
            .starts_with("repeating: every day at 09:00")
    };
    let mut ui = Ui::new(vec![]);
    ui.say("/every day at 9am water the plants");
    ui.pump();
    assert!(repeating(&ui), "{}", ui.status_line());
    let id = ui.h.engine.list_series(false).unwrap()[0].series.id;
    // Another series changed: the line still holds.
    let other =
        ui.h.engine
            .create_series(
                ui.app.model.current.unwrap(),
                Kind::Message,
                "feed the cat",
                &ui.h.engine.parse_schedule("every day at 7pm").unwrap(),
            )
            .unwrap();
    ui.h.engine.pause_series(other).unwrap();
    ui.pump();
    assert!(repeating(&ui), "{}", ui.status_line());
    // A new rule in F2.
    ui.press(KeyCode::F(2));
    ui.ch('r');
    ui.typ("every weekday 8:30");
    ui.enter();
    ui.pump();
    ui.press(KeyCode::Esc);
    let s = ui.screen(110, 30);
    assert!(!s.contains("repeating: every day"), "{s}");
    assert_eq!(
        ui.h.engine.series_view(id).unwrap().unwrap().description,
        "every weekday at 08:30"
    );

    // Paused from another tock (the CLI): the same.
    ui.say("/every day at 9am water the roses");
    ui.pump();
    assert!(repeating(&ui), "{}", ui.status_line());
    let roses = ui.h.engine.list_series(false).unwrap();
    let roses = roses
        .iter()
        .find(|v| v.series.text == "water the roses")
        .unwrap()
        .series
        .id;
    ui.h.engine.pause_series(roses).unwrap();
    ui.pump();
    assert!(!repeating(&ui), "{}", ui.status_line());

    // Ended in F2.
    ui.say("/every day at 9am water the ferns");
    ui.pump();
    assert!(repeating(&ui), "{}", ui.status_line());
    let ferns = ui.h.engine.list_series(false).unwrap();
    let ferns = ferns
        .iter()
        .find(|v| v.series.text == "water the ferns")
        .unwrap()
        .series
        .id;
    ui.h.engine.end_series(ferns).unwrap();
    ui.pump();
    assert!(!repeating(&ui), "{}", ui.status_line());
}

/// After x Enter in F2 the ended series has left and the row that took its
/// place (the other series) is selected; a key typed before a frame showed
/// it does not act on it, and says why; once shown, keys act on it.
#[tokio::test(start_paused = true)]
async fn f2_after_ending_a_series_the_next_row_is_selected_once_shown() {
    let mut ui = Ui::new(vec![]);
    ui.say("/every day at 9am first series");
    ui.say("/every day at 10am second series");
    ui.pump();
    ui.press(KeyCode::F(2));
    assert!(ui.screen(110, 30).contains("› "));
    ui.ch('x');
    ui.enter();
    let left = ui.h.engine.list_series(false).unwrap();
    assert_eq!(left.len(), 1, "one series ended");
    let status = |ui: &Ui| {
        ui.h.engine
            .series_view(left[0].series.id)
            .unwrap()
            .unwrap()
            .series
            .status
    };
    // Typed ahead of the frame that shows the new selection: nothing done.
    ui.ch('p');
    assert!(
        ui.status_line().contains("press again"),
        "{}",
        ui.status_line()
    );
    assert_eq!(status(&ui), tock::store::SeriesStatus::Active);
    let s = ui.screen(110, 30);
    let marked = s.lines().find(|l| l.starts_with('›')).unwrap_or_default();
    assert!(marked.contains("second series"), "{s}");
    ui.ch('p');
    assert_eq!(status(&ui), tock::store::SeriesStatus::Paused);
}

/// A series ended by another hand while F2 shows it selected: nothing is
/// selected (a stray key cannot act on the row that slid into its place),
/// no row is marked, a key says why it does nothing, and a move selects
/// again. The first row had looked selected while keys did nothing, silently.
#[tokio::test(start_paused = true)]
async fn f2_after_a_series_ends_elsewhere_no_row_looks_selected_and_keys_say_why() {
    let mut ui = Ui::new(vec![]);
    ui.say("/every day at 9am first series");
    ui.say("/every day at 10am second series");
    ui.pump();
    ui.press(KeyCode::F(2));
    assert!(ui.screen(110, 30).contains("› "));
    let all = ui.h.engine.list_series(false).unwrap();
    let first = all
        .iter()
        .find(|v| v.series.text == "first series")
        .unwrap()
        .series
        .id;
    ui.h.engine.end_series(first).unwrap();
    ui.pump();
    let left = ui.h.engine.list_series(false).unwrap();
    assert_eq!(left.len(), 1, "one series ended");
    let s = ui.screen(110, 30);
    assert!(!s.contains("›"), "no row is marked:\n{s}");
    ui.ch('p');
    assert!(
        ui.status_line().contains("no item is selected"),
        "{}",
        ui.status_line()
    );
    let status = |ui: &Ui| {
        ui.h.engine
            .series_view(left[0].series.id)
            .unwrap()
            .unwrap()
            .series
            .status
    };
    assert_eq!(
        status(&ui),
        tock::store::SeriesStatus::Active,
        "the stray key did nothing"
    );
    // A move selects (and marks) a row; keys act on it.
    ui.press(KeyCode::Down);
    assert!(ui.screen(110, 30).contains("› "));
    ui.ch('p');
    assert_eq!(status(&ui), tock::store::SeriesStatus::Paused);
}

/// F2, x Enter x in one burst (no frame between): the second x is not for
/// the row that took the first one's place, unseen; nothing is typed.
#[tokio::test(start_paused = true)]
async fn f2_keys_typed_ahead_of_the_new_selection_do_not_act_on_it() {
    let mut ui = Ui::new(vec![]);
    for n in 1..=2 {
        ui.say(&format!("/later {n}h f2 item {n}"));
    }
    let ids: Vec<i64> = ui.rows().iter().map(|r| r.id).collect();
    ui.press(KeyCode::F(2));
    ui.screen(110, 30);
    // (Not a second Enter: on the list it opens the row's conversation.)
    ui.ch('x');
    ui.enter();
    ui.ch('x');
    ui.pump();
    assert_eq!(ui.row(ids[0]).status, Status::Canceled);
    assert_eq!(ui.row(ids[1]).status, Status::Pending, "not seen selected");
    assert_eq!(ui.app.composer_text(), "");
    let s = ui.screen(110, 30);
    let marked = s.lines().find(|l| l.starts_with('›')).unwrap_or_default();
    assert!(marked.contains("f2 item 2"), "{s}");
    ui.ch('x');
    ui.enter();
    ui.pump();
    assert_eq!(ui.row(ids[1]).status, Status::Canceled);
}

/// F2 on three scheduled messages: x Enter three times cancels all three, each
/// time on the row shown selected after the one before left; nothing is
/// typed into the composer.
#[tokio::test(start_paused = true)]
async fn f2_cancels_row_after_row_with_x_enter() {
    let mut ui = Ui::new(vec![]);
    for n in 1..=3 {
        ui.say(&format!("/later {n}h f2 item {n}"));
    }
    let ids: Vec<i64> = ui.rows().iter().map(|r| r.id).collect();
    ui.press(KeyCode::F(2));
    for n in 1..=3 {
        let s = ui.screen(110, 30);
        let marked = s.lines().find(|l| l.starts_with('›')).unwrap_or_default();
        assert!(marked.contains(&format!("f2 item {n}")), "{s}");
        ui.ch('x');
        ui.enter();
        ui.pump();
        assert_eq!(ui.row(ids[n - 1]).status, Status::Canceled, "item {n}");
    }
    // Typed ahead on an empty list: Enter answers nothing and types nothing.
    ui.ch('x');
    ui.enter();
    assert_eq!(ui.app.popup(), Some(ViewKind::Scheduled));
    assert_eq!(ui.app.composer_text(), "");
}

/// `r` on a series offers its whole schedule, ends included: Enter on it
/// as it is keeps the end, the count and a skip (they were dropped).
#[tokio::test(start_paused = true)]
async fn f2_rule_prompt_offers_the_whole_schedule_and_enter_keeps_it() {
    let mut ui = Ui::new(vec![]);
    ui.say("/every 3h for 5 times for 2 weeks ping");
    let id = ui.h.engine.list_series(false).unwrap()[0].series.id;
    ui.pump();
    ui.press(KeyCode::F(2));
    ui.ch('n');
    let before = ui.store().series(id).unwrap().unwrap();
    assert_eq!(before.remaining, Some(4));
    assert!(before.until_at.is_some());
    ui.ch('r');
    let s = ui.screen(110, 30);
    let expr = ui.h.engine.series_expression(&before);
    assert!(
        expr.starts_with("every 3 hours for 4 times until 20"),
        "{expr}"
    );
    assert!(s.contains(&expr), "{s}");
    ui.enter();
    let after = ui.store().series(id).unwrap().unwrap();
    assert_eq!(
        (after.next_due_at, after.until_at, after.remaining),
        (before.next_due_at, before.until_at, before.remaining)
    );
}

#[tokio::test(start_paused = true)]
async fn a_pending_approval_is_listed_in_f2_and_marked_in_the_sidebar() {
    let mut ui = Ui::new(task_steps());
    ui.start().await;
    let asking = ui.conv();
    ui.say("remind me to check the build");
    ui.settle().await;
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    assert_ne!(ui.conv(), asking);
    let s = ui.screen(100, 30);
    assert!(
        s.contains("? remind me") && s.contains("needs approval"),
        "{s}"
    );
    assert!(s.contains("?1 to approve"), "{s}");
    ui.press(KeyCode::F(2));
    let s = ui.screen(100, 30);
    assert!(s.contains("approval") && s.contains("asking"), "{s}");
    // As `tock approvals` says it: the task, and when it would go.
    assert!(s.contains("schedule_task: \"build check\" at "), "{s}");
    // Only the keys that do something to it are offered.
    assert!(s.contains("answer it in its conversation"), "{s}");
    assert!(!s.contains("reschedule"), "{s}");
    snap!("f2_with_an_approval_100x30", s);
    // Enter goes to its conversation, where the card has the keys.
    ui.press(KeyCode::Home);
    ui.enter();
    assert_eq!(ui.conv(), asking);
    assert_eq!(ui.app.top(), Some(ViewKind::Approval));
}

/// The status bar counts the calls that wait, not the conversations they
/// wait in: two calls of one reply are two to approve, and one answered
/// leaves one.
#[tokio::test(start_paused = true)]
async fn the_status_bar_counts_each_call_waiting_for_approval() {
    let call = |id: &str, title: &str| {
        StreamEvent::ToolCall(ToolCall {
            id: id.into(),
            name: "schedule_task".into(),
            arguments: format!(
                r#"{{"instruction":"check {title}","delay_secs":3600,"title":"{title}"}}"#
            ),
        })
    };
    let mut ui = Ui::new(vec![
        Step::Reply(vec![call("c1", "build"), call("c2", "deploy"), done()]),
        Step::Reply(vec![text("both scheduled"), done()]),
    ]);
    ui.start().await;
    ui.say("remind me twice");
    ui.settle().await;
    let waiting = ui.store().approvals(ui.conv()).unwrap();
    assert_eq!(waiting.len(), 2);
    let s = ui.screen(100, 30);
    assert!(s.contains("?2 to approve"), "{s}");
    ui.h.engine.answer_approval(waiting[0].id, true).unwrap();
    ui.settle().await;
    let s = ui.screen(100, 30);
    assert!(s.contains("?1 to approve"), "{s}");
    let exit = ui.app.exit_line().unwrap_or_default();
    assert!(
        exit.contains("1 tool call waiting for your approval"),
        "{exit}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_status_line_goes_when_what_it_describes_has_changed() {
    let mut ui = Ui::new(task_steps());
    ui.start().await;
    ui.say("remind me to check the build");
    ui.settle().await;
    let approval = ui.app.model.waiting_approval().expect("asked").id;
    assert!(
        ui.status_line().contains("approval"),
        "{}",
        ui.status_line()
    );
    // The notice can come before the events that reload the gates (the
    // engine tells it right after saving the approval): it stays.
    ui.app.model.awaiting.clear();
    ui.app.on_engine(Event::Notice(tock::engine::Notification {
        kind: tock::engine::NoticeKind::Approval,
        conversation_id: Some(ui.conv()),
        text: "schedule_task waits for your approval".into(),
        elsewhere: false,
    }));
    assert!(
        ui.status_line().contains("approval"),
        "it stays until answered"
    );
    // Answered elsewhere (as `tock approve` does): the line is stale.
    ui.h.engine.answer_approval(approval, true).unwrap();
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_none());
    assert_eq!(ui.status_line(), "", "the approval notice went with it");
    // A line about what you did here goes when you go elsewhere.
    ui.say("/later blah check again");
    assert!(ui.status_line().contains("blah"), "{}", ui.status_line());
    let here = ui.conv();
    ui.key(KeyCode::Char('n'), KeyModifiers::ALT);
    ui.pump();
    assert_ne!(ui.conv(), here);
    assert_eq!(ui.status_line(), "");
    // What a switch itself reports stays.
    ui.say("/delete");
    ui.enter();
    ui.pump();
    assert_eq!(ui.conv(), here, "the other conversation is shown");
    assert_eq!(ui.status_line(), "conversation deleted");
    // Sending a message moves on from what the line said before.
    ui.say("/later blah check again");
    assert!(ui.status_line().contains("blah"));
    ui.app.set_composer("");
    ui.say("check again");
    assert_eq!(ui.status_line(), "");
    assert!(ui.rows().iter().any(|r| r.text == "check again"));
}

#[tokio::test(start_paused = true)]
async fn the_exit_line_says_what_is_still_pending() {
    let mut ui = Ui::new(vec![]);
    assert_eq!(ui.app.exit_line(), None, "nothing pending: nothing to say");
    ui.say("/later 1h check the build");
    ui.say("/every day at 9am water the plants");
    ui.pump();
    ui.app.model.reload_summaries();
    let line = ui.app.exit_line().unwrap();
    assert!(
        line.contains("1 scheduled (next Mon 30 Nov 01:53)"),
        "{line}"
    );
    assert!(line.contains("1 recurring series"), "{line}");
    assert!(
        line.contains("a tock or `tock daemon` already running on this database takes them over at once, else the next `tock` started does"),
        "{line}"
    );
    assert!(
        !line.contains("queued") && !line.contains("waiting"),
        "{line}"
    );
    // What a stop holds is not counted as queued: the next start does not send it.
    let conv = ui.conv();
    ui.h.engine
        .store()
        .enqueue(
            &tock::store::NewItem::new(conv, tock::store::Kind::Queued, "held"),
            ui.h.engine.now_ms(),
        )
        .unwrap();
    ui.h.engine
        .store()
        .set_queue_paused(conv, Some(ui.h.engine.now_ms()))
        .unwrap();
    ui.app.model.reload_all();
    let line = ui.app.exit_line().unwrap();
    assert!(line.contains("1 waiting for you"), "{line}");
    assert!(!line.contains("queued"), "{line}");
    // Another tock dispatching sends them, not the next start.
    ui.app.model.dispatch = tock::engine::DispatchState::Standby { pid: 4242 };
    let line = ui.app.exit_line().unwrap();
    assert!(
        line.ends_with("the tock running as pid 4242 sends them."),
        "{line}"
    );
    // Only what waits for the user (or failed): nothing says it will be sent.
    for r in ui.rows() {
        if r.status == Status::Pending && r.due_at.is_some() {
            ui.h.engine.cancel(r.id).unwrap();
        }
    }
    for s in ui.h.engine.list_series(false).unwrap() {
        ui.h.engine.end_series(s.series.id).unwrap();
    }
    ui.app.model.reload_all();
    let line = ui.app.exit_line().unwrap();
    assert!(line.ends_with("kept in the database."), "{line}");
}

/// Quitting says what only the user can settle (a tool call to approve)
/// and what quitting cut (a reply streaming), also with nothing else left.
#[tokio::test(start_paused = true)]
async fn the_exit_line_names_approvals_waiting_and_a_reply_cut_off() {
    let mut ui = Ui::new(task_steps());
    ui.start().await;
    ui.say("remind me to check the build");
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_some());
    ui.app.model.reload_summaries();
    let line = ui.app.exit_line().unwrap();
    assert!(
        line.contains("1 tool call waiting for your approval (tock approvals)"),
        "{line}"
    );

    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![Step::Hold(vec![text("streaming")], gate)]);
    ui.start().await;
    assert_eq!(ui.app.exit_line(), None);
    ui.say("a long answer please");
    ui.settle().await;
    // As the TUI counts them right before it stops the engine.
    ui.app.replies_cut_at_exit = ui.h.engine.turns_in_flight();
    let line = ui.app.exit_line().unwrap();
    assert!(
        line.starts_with(
            "tock: 1 reply cut off by quitting (to be asked for again) — kept in the database; a tock or `tock daemon` already running on this database takes them over at once"
        ),
        "{line}"
    );
}

/// An occurrence replaced by a newer one while it waited is listed (with
/// `a`) as skipped, as the chat and the series' counts call it, not as
/// canceled.
#[tokio::test(start_paused = true)]
async fn f2_lists_a_replaced_occurrence_as_skipped() {
    let gate = std::sync::Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![Step::Hold(vec![text("long")], gate.clone())]);
    ui.start().await;
    ui.say("a long question");
    ui.settle().await;
    ui.say("/every 1 minute ping");
    ui.settle().await;
    for _ in 0..5 {
        tokio::time::advance(std::time::Duration::from_secs(30)).await;
        ui.settle().await;
    }
    let skipped: Vec<i64> = ui
        .rows()
        .iter()
        .filter(|r| r.status == Status::Canceled && r.series_id.is_some())
        .map(|r| r.id)
        .collect();
    assert!(
        !skipped.is_empty(),
        "{:?}",
        ui.rows()
            .iter()
            .map(|r| (r.id, r.status, r.series_id, r.due_at))
            .collect::<Vec<_>>()
    );
    ui.press(KeyCode::F(2));
    ui.ch('a');
    let s = ui.screen(120, 40);
    let row = s
        .lines()
        .find(|l| l.contains("↳ ping") && !l.contains("scheduled") && !l.contains("queued"))
        .unwrap_or_default()
        .to_string();
    assert!(row.contains("skipped") && !row.contains("canceled"), "{s}");
    gate.notify_one();
}

/// In 40 columns F2's footer, its edit prompt and the search keep the key
/// that closes them: each was cut before it (`… s send R retry`, `Enter
/// save · Alt+Enter new line · `, `Search all conversatio 3 matches`).
#[tokio::test(start_paused = true)]
async fn narrow_views_keep_the_key_that_closes_them() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.say("stretch your legs");
    ui.say("/later 1h stretch");
    ui.settle().await;
    ui.press(KeyCode::F(2));
    let f2 = ui.screen(40, 10);
    assert!(f2.contains("Esc"), "{f2}");
    ui.ch('e');
    let edit = ui.screen(40, 10);
    assert!(edit.contains("Esc discard"), "{edit}");
    ui.press(KeyCode::Esc);
    ui.press(KeyCode::Esc);
    ui.key(KeyCode::Char('f'), KeyModifiers::CONTROL);
    ui.typ("stretch");
    let search = ui.screen(40, 10);
    assert!(search.contains("Esc close"), "{search}");
    assert!(
        search.contains(" Search ") && search.contains("1 match"),
        "{search}"
    );
    assert!(!search.contains("conversatio"), "{search}");
}

/// A letter F2 does not use is typing meant for the composer: F2 closes
/// and the letters go there (they stayed in F2, and its own letters in
/// the words acted: "… the docs" then Enter sent a message early).
#[tokio::test(start_paused = true)]
async fn a_letter_f2_does_not_use_closes_it_and_is_typed() {
    let mut ui = Ui::new(vec![]);
    ui.say("/later 45m F2 victim");
    let id = ui.rows()[0].id;
    ui.press(KeyCode::F(2));
    assert_eq!(ui.app.popup(), Some(ViewKind::Scheduled));
    ui.typ("what about the docs");
    assert_eq!(ui.app.popup(), None);
    assert_eq!(ui.app.composer_text(), "what about the docs");
    assert_eq!(ui.row(id).status, Status::Pending);
    assert!(ui.row(id).due_at.is_some(), "still scheduled");
}
