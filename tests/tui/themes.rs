//! Themes: every text readable on its background.

use super::*;

/// Every visible character whose colour, on a light terminal (black text on
/// white), has less contrast than text needs: 4:1, or 2.5:1 for text drawn
/// faint on purpose (DIM: placeholders, finished rows), with faint taken as
/// 30% of the way to the background.
fn unreadable_on_light(t: &Terminal<TestBackend>) -> Vec<String> {
    use ratatui::style::Modifier;
    let buf = t.backend().buffer();
    let mut bad = Vec::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            let cell = &buf[(x, y)];
            if cell.symbol().trim().is_empty() {
                continue;
            }
            let reversed = cell.modifier.contains(Modifier::REVERSED);
            let (mut fg, mut bg) = (rgb(cell.fg, (0, 0, 0)), rgb(cell.bg, (255, 255, 255)));
            if reversed {
                std::mem::swap(&mut fg, &mut bg);
            }
            let faint = cell.modifier.contains(Modifier::DIM);
            if faint {
                let mix = |f: u8, b: u8| (f64::from(f) + 0.3 * (f64::from(b) - f64::from(f))) as u8;
                fg = (mix(fg.0, bg.0), mix(fg.1, bg.1), mix(fg.2, bg.2));
            }
            let need = if faint { 2.5 } else { 4.0 };
            let ratio = contrast(fg, bg);
            if ratio < need {
                bad.push(format!(
                    "({x},{y}) {:?} {:?} on {:?}: {ratio:.2}",
                    cell.symbol(),
                    cell.fg,
                    cell.bg
                ));
            }
        }
    }
    bad
}

/// A frame with its colours: each row's text, then a row of letters naming
/// each cell's style (`.` for the terminal's own), and the legend.
fn styled(t: &Terminal<TestBackend>) -> String {
    let buf = t.backend().buffer();
    let mut legend: Vec<String> = Vec::new();
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut text = String::new();
        let mut marks = String::new();
        for x in 0..buf.area.width {
            let cell = &buf[(x, y)];
            let sym = cell.symbol();
            if sym.is_empty() {
                continue;
            }
            text.push_str(sym);
            let plain = cell.fg == ratatui::style::Color::Reset
                && cell.bg == ratatui::style::Color::Reset
                && cell.modifier.is_empty();
            let mark = if plain {
                '.'
            } else {
                let key = format!("fg {:?} bg {:?} {:?}", cell.fg, cell.bg, cell.modifier);
                let i = legend.iter().position(|l| *l == key).unwrap_or_else(|| {
                    legend.push(key);
                    legend.len() - 1
                });
                char::from_u32(u32::from(b'a') + (i as u32 % 26)).unwrap_or('?')
            };
            let w = unicode_width::UnicodeWidthStr::width(sym).max(1);
            for _ in 0..w {
                marks.push(mark);
            }
        }
        out.push_str(&format!(
            "{}\n{}\n",
            text.trim_end(),
            marks.trim_end_matches('.')
        ));
    }
    for (i, l) in legend.iter().enumerate() {
        let c = char::from_u32(u32::from(b'a') + (i as u32 % 26)).unwrap_or('?');
        out.push_str(&format!("{c} = {l}\n"));
    }
    out
}

/// A screen with most of what the UI colours: the sidebar, a Markdown reply
/// with code, a failed item, a scheduled one, the strip and the status bar.
async fn busy_screen(theme: &str) -> Ui {
    init_env();
    let h = harness_with(
        Scripted::new({
            let mut steps = markdown_steps();
            steps.push(Step::Fail(LlmError::permanent("401 Unauthorized")));
            steps
        }),
        theme_config(theme),
    );
    h.engine
        .store()
        .create_conversation(Some("An older chat"), "user", T0 - 86_400_000)
        .unwrap();
    let mut ui = Ui::on(h);
    ui.start().await;
    ui.say("show me markdown");
    ui.settle().await;
    ui.say("and fail");
    ui.settle().await;
    ui.say("/later 1h check the build");
    ui.settle().await;
    ui.tab(); // the strip, with its selection
    ui
}

#[tokio::test(start_paused = true)]
async fn the_light_theme_keeps_every_text_readable_on_a_light_background() {
    let mut ui = busy_screen("light").await;
    let mut screens = vec![("main", ui.render(120, 40))];
    ui.press(KeyCode::Esc);
    ui.press(KeyCode::F(2));
    screens.push(("F2", ui.render(120, 40)));
    ui.press(KeyCode::Esc);
    ui.press(KeyCode::F(1));
    screens.push(("help", ui.render(120, 40)));
    ui.press(KeyCode::Esc);
    ui.say("/search markdown");
    screens.push(("search", ui.render(120, 40)));
    ui.press(KeyCode::Esc);
    ui.say("/tools");
    screens.push(("tools", ui.render(120, 40)));
    ui.press(KeyCode::Esc);
    ui.typ("/at tomorrow 9am standup");
    screens.push(("preview", ui.render(60, 15)));
    for (name, t) in &screens {
        let bad = unreadable_on_light(t);
        assert!(
            bad.is_empty(),
            "{name}: {} cells unreadable on white, e.g. {:?}\n{}",
            bad.len(),
            &bad[..bad.len().min(8)],
            screen_text(t)
        );
    }
    // The same screen in the dark palette is what a light terminal showed
    // before: the check above would have caught it.
    let mut dark = busy_screen("dark").await;
    assert!(
        !unreadable_on_light(&dark.render(120, 40)).is_empty(),
        "the contrast check finds the dark palette's yellow and grey on white"
    );
}

#[tokio::test(start_paused = true)]
async fn snapshot_both_themes_with_their_colours() {
    let mut ui = busy_screen("light").await;
    snap!("light_busy_80x24", styled(&ui.render(80, 24)));
    snap!("light_busy_60x15", styled(&ui.render(60, 15)));
    let mut ui = busy_screen("dark").await;
    snap!("dark_busy_80x24", styled(&ui.render(80, 24)));
    snap!("dark_busy_60x15", styled(&ui.render(60, 15)));
}

#[tokio::test(start_paused = true)]
async fn slash_theme_switches_the_palette_for_the_session_and_bad_colours_say_so() {
    init_env();
    let cfg: Config = toml::from_str(
        "[ui]\ntheme = \"dark\"\n[ui.colors]\naccent = \"#5f00af\"\nerror = \"reddish\"\n",
    )
    .unwrap();
    let mut ui = Ui::with_config(markdown_steps(), cfg);
    let (line, error) = ui.app.status_pair();
    assert!(error && line.contains("reddish"), "one line: {line}");
    assert_eq!(
        tock::tui::theme::palette().accent,
        ratatui::style::Color::Rgb(0x5f, 0x00, 0xaf)
    );
    ui.start().await;
    ui.say("show me markdown");
    ui.settle().await;
    ui.say("/theme");
    assert!(
        ui.status_line().contains("theme: dark"),
        "{}",
        ui.status_line()
    );
    ui.say("/theme light");
    assert!(
        ui.status_line().contains("light for this session"),
        "{}",
        ui.status_line()
    );
    let p = tock::tui::theme::palette();
    assert_eq!(p.background, tock::tui::theme::Background::Light);
    assert_eq!(
        p.accent,
        ratatui::style::Color::Rgb(0x5f, 0x00, 0xaf),
        "custom colours stay"
    );
    // Already rendered messages are drawn again in the new colours.
    let t = ui.render(100, 30);
    let bad = unreadable_on_light(&t);
    assert!(bad.is_empty(), "{bad:?}");
    ui.say("/theme purple");
    let (line, error) = ui.app.status_pair();
    assert!(error && line.contains("purple"), "{line}");
    // Tab completes the names.
    ui.app.set_composer("/theme li");
    ui.tab();
    assert_eq!(ui.app.composer_text(), "/theme light ");
}
