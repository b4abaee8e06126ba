//! Untrusted text never reaches the terminal as control sequences; huge input stays usable.

use super::*;

const EVIL: &str = "title \x1b]0;evil title\x07 clear \x1b[2J clip \x1b]52;c;ZXZpbA==\x07 c1 \u{9b}31m bidi \u{202e}txet desrever";

fn assert_no_escapes_from_the_model(app: &App) {
    for raw in &app.output.raw {
        assert!(
            !raw.contains("]52;") && !raw.contains("]0;") && !raw.contains("[2J"),
            "model output reached the terminal: {raw:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn escape_sequences_in_a_reply_are_inert() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut ui = Ui::new(vec![Step::Hold(
        vec![text("# \x1b[2J heading\n\n"), text(EVIL)],
        gate.clone(),
    )]);
    ui.start().await;
    ui.say("say something nasty");
    ui.settle().await;
    ui.streamed().await;
    // While streaming and when finished, at two sizes.
    for _ in 0..2 {
        for (w, h) in [(80, 24), (120, 32)] {
            let t = ui.render(w, h);
            assert_clean(&t);
            let s = screen_text(&t);
            assert!(s.contains("␛]0;evil title␇"), "shown visibly:\n{s}");
        }
        assert_no_escapes_from_the_model(&ui.app);
        gate.notify_one();
        ui.settle().await;
    }
    assert_eq!(ui.messages().pop().unwrap().status, MessageStatus::Complete);
    let title = ui.app.output.title.clone().unwrap();
    assert!(!title.chars().any(forbidden), "{title:?}");
    // Copying is the one thing that writes OSC 52, and only when asked.
    ui.ctrl('y');
    assert_eq!(ui.app.output.raw.len(), 1);
    assert!(ui.app.output.raw[0].starts_with("\x1b]52;c;"));
    assert!(!ui.app.output.raw[0][7..].contains('\x1b'));
}

#[tokio::test(start_paused = true)]
async fn escape_sequences_in_a_title_are_inert() {
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    let conv = ui.conv();
    ui.store()
        .rename_conversation(
            conv,
            "\x1b]0;pwned\x07 \u{9b}2J \x1b]52;c;ZXZpbA==\x07 \u{202e}evil",
            T0,
        )
        .unwrap();
    // As another process would: the change is noticed, everything reloads.
    ui.app.on_engine(Event::External);
    let t = ui.render(80, 24);
    assert_clean(&t);
    let s = screen_text(&t);
    assert!(s.contains("␛]0;pwned␇"), "{s}");
    let title = ui.app.output.title.clone().unwrap();
    assert!(title.starts_with("tock — "), "{title:?}");
    assert!(!title.chars().any(forbidden), "{title:?}");
    assert!(title.contains("pwned"), "{title:?}");
    assert_no_escapes_from_the_model(&ui.app);
    // The delete confirmation shows it sanitised too.
    ui.say("/delete");
    assert_clean(&ui.render(80, 24));
}

#[tokio::test(start_paused = true)]
async fn escape_sequences_in_a_tool_call_are_inert() {
    let mut ui = Ui::new(vec![Step::Reply(vec![
        tool_call(
            "schedule_task",
            r#"{"instruction":"\u001b]52;c;ZXZpbA==\u0007 rm -rf \u202e fdp.exe","delay_secs":60,"title":"\u001b]0;t\u0007\u009b2J"}"#,
        ),
        done(),
    ])]);
    ui.start().await;
    ui.say("schedule something");
    ui.settle().await;
    assert!(ui.app.model.waiting_approval().is_some());
    for (w, h) in [(80, 24), (120, 32)] {
        let t = ui.render(w, h);
        assert_clean(&t);
        assert!(screen_text(&t).contains("␛]52;c;ZXZpbA==␇ rm -rf"));
    }
    ui.approve();
    ui.settle().await;
    assert!(ui.rows().iter().any(|r| r.kind == Kind::Task));
    for (w, h) in [(80, 24), (120, 32)] {
        let t = ui.render(w, h);
        assert_clean(&t);
        assert!(screen_text(&t).contains("[scheduled]"));
    }
    ui.tab();
    ui.ch('e');
    assert_clean(&ui.render(80, 24));
    assert_no_escapes_from_the_model(&ui.app);
}

#[tokio::test(start_paused = true)]
async fn a_ten_megabyte_paste_is_kept_whole_and_sent() {
    let line = "paste line with a \x1b[31mred\x1b[0m escape and \u{7} bell\n";
    let copies = 10 * 1024 * 1024 / line.len() + 1;
    let big = line.repeat(copies);
    // What is kept of each line: its text, without the terminal's colours
    // and the bell.
    let kept = "paste line with a red escape and  bell\n".len() * copies;
    // As a chip (the default for a long paste): whole, and clean.
    let mut ui = Ui::new(vec![]);
    ui.start().await;
    ui.app
        .on_terminal(ratatui::crossterm::event::Event::Paste(big.clone()));
    assert_eq!(ui.app.composer.attachments.len(), 1);
    ui.enter();
    ui.settle().await;
    let parts = ui.rows()[0].parts_json.clone().unwrap_or_default();
    assert!(parts.len() >= kept, "{}", parts.len());
    assert!(
        !parts.contains('\x1b') && !parts.contains("\\u001b") && !parts.contains("[31m"),
        "taken out"
    );
    // Into the text (chips off).
    let cfg: Config = toml::from_str("[ui]\npaste_chip_lines = 0\n").unwrap();
    let mut ui = Ui::with_config(vec![], cfg);
    ui.start().await;
    ui.app
        .on_terminal(ratatui::crossterm::event::Event::Paste(big.clone()));
    let s = ui.screen(80, 24);
    assert!(!s.contains('\x1b') && !s.contains('\u{7}'));
    ui.enter();
    ui.settle().await;
    let sent = ui.user_texts();
    assert_eq!(sent.len(), 1);
    assert!(
        sent[0].len() >= kept - line.len(),
        "the whole paste was accepted ({} bytes)",
        sent[0].len()
    );
    assert!(
        !sent[0].contains('\x1b') && !sent[0].contains("[31m"),
        "a terminal's escape sequences are taken out, not stored raw"
    );
    let s = ui.screen(80, 24);
    assert!(s.contains("paste line"), "{s}");
}

#[tokio::test(start_paused = true)]
async fn a_megabyte_reply_and_a_100k_line_code_block_render() {
    let prose = "All work and no play makes a very long reply. ".repeat(1024 * 1024 / 47);
    let code: String = (0..100_000).map(|i| format!("let x{i} = {i};\n")).collect();
    let mut chunks: Vec<StreamEvent> = prose
        .as_bytes()
        .chunks(4096)
        .map(|c| text(std::str::from_utf8(c).unwrap()))
        .collect();
    chunks.push(text("\n\n```rust\n"));
    chunks.extend(
        code.as_bytes()
            .chunks(65_536)
            .map(|c| text(std::str::from_utf8(c).unwrap())),
    );
    chunks.push(text("```\n\nTHE END"));
    chunks.push(done());
    let mut ui = Ui::new(vec![Step::Reply(chunks)]);
    ui.start().await;
    ui.say("go");
    ui.settle().await;
    let s = ui.screen(100, 30);
    assert!(s.contains("THE END"), "{s}");
    let last = ui.messages().pop().unwrap();
    assert_eq!(last.status, MessageStatus::Complete);
    assert!(last.content.len() > 2_000_000);
    // Scrolling into the middle of it still draws.
    ui.press(KeyCode::PageUp);
    ui.press(KeyCode::PageUp);
    let s = ui.screen(100, 30);
    assert!(s.contains("let x99"), "{s}");
}

#[tokio::test(start_paused = true)]
async fn ten_thousand_pending_items_and_a_thousand_conversations_stay_usable() {
    let mut ui = Ui::new(vec![]);
    let now = ui.h.engine.now_ms();
    for i in 0..1_000 {
        ui.store()
            .create_conversation(Some(&format!("conversation {i}")), "user", now + i)
            .unwrap();
    }
    let conv = ui
        .store()
        .create_conversation(Some("busy one"), "user", now + 5_000)
        .unwrap();
    for i in 0..10_000 {
        let mut it = NewItem::new(conv, Kind::Message, format!("scheduled item {i}"));
        it.due_at = Some(now + 3_600_000 + i);
        ui.store().enqueue(&it, now).unwrap();
    }
    ui.app.on_engine(Event::External);
    ui.app.open(conv);
    ui.start().await;
    let s = ui.screen(100, 30);
    assert!(s.contains("pending (10000)"), "{s}");
    assert!(
        s.contains("10000 scheduled") || s.contains("⏰10000"),
        "{s}"
    );
    ui.tab();
    for _ in 0..30 {
        ui.press(KeyCode::Down);
    }
    let s = ui.screen(100, 30);
    assert!(
        s.contains("scheduled item 30"),
        "the selection stays visible: {s}"
    );
    ui.press(KeyCode::Esc);
    ui.press(KeyCode::F(2));
    let s = ui.screen(100, 30);
    assert!(s.contains("10000"), "{s}");
    ui.press(KeyCode::Esc);
    // The conversation list scrolls to a selection far down.
    ui.press(KeyCode::F(4));
    ui.press(KeyCode::F(4));
    for _ in 0..500 {
        ui.app
            .on_key(KeyEvent::new(KeyCode::Down, KeyModifiers::ALT));
    }
    let s = ui.screen(100, 30);
    assert!(s.contains("conversation 5"), "{s}");
}
