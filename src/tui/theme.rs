//! Colours by what they mean, for a dark or a light terminal background.
//!
//! Views ask [`palette()`] for a role (`dim`, `accent`, `warning`, …) instead
//! of naming a colour, so `[ui] theme` and `[ui.colors]` change every screen
//! at once. The dark palette uses the terminal's own 16 colours, which dark
//! terminal palettes tune for their background. On a light background those
//! colours (yellow, cyan and white above all) are often unreadable, so the
//! light palette uses fixed colours of the 256-colour cube, each at least
//! 4:1 against white and against the selected row's grey.
//!
//! The palette in effect is kept per thread: only the UI thread draws, and
//! tests that draw with the light palette run beside tests drawing with the
//! dark one.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::str::FromStr;
use std::time::Duration;

use ratatui::style::Color;

/// Whether the terminal's background is dark or light.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Background {
    #[default]
    Dark,
    Light,
}

/// `[ui] theme`: a palette, or `auto` to ask the terminal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ThemeSetting {
    #[default]
    Auto,
    Dark,
    Light,
}

impl FromStr for ThemeSetting {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" | "" => Ok(Self::Auto),
            "dark" => Ok(Self::Dark),
            "light" => Ok(Self::Light),
            other => Err(format!("unknown theme \"{other}\" (auto, dark or light)")),
        }
    }
}

impl ThemeSetting {
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Dark => "dark",
            Self::Light => "light",
        }
    }
}

/// The colour of each role.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Palette {
    pub background: Background,
    /// Secondary text: times, hints, borders, folded and replaced things.
    pub dim: Color,
    /// Selection marks, titles, scheduled items, prompts.
    pub accent: Color,
    /// Your own messages, queued items, links.
    pub info: Color,
    /// In progress or needing you: sending, retrying, paused, approvals.
    pub warning: Color,
    pub error: Color,
    pub success: Color,
    /// Tasks the model scheduled, expired items, top headings.
    pub special: Color,
    /// Background of a search match and of a chosen button.
    pub highlight: Color,
    /// Background of the selected row of a table.
    pub selection: Color,
    /// Background of a popup's input line.
    pub popup: Color,
}

impl Palette {
    pub const DARK: Palette = Palette {
        background: Background::Dark,
        dim: Color::DarkGray,
        accent: Color::Cyan,
        info: Color::Blue,
        warning: Color::Yellow,
        error: Color::Red,
        success: Color::Green,
        special: Color::Magenta,
        highlight: Color::Yellow,
        selection: Color::Rgb(40, 44, 52),
        popup: Color::Black,
    };

    pub const LIGHT: Palette = Palette {
        background: Background::Light,
        dim: Color::Indexed(242),       // #6c6c6c
        accent: Color::Indexed(24),     // #005f87
        info: Color::Indexed(61),       // #5f5faf
        warning: Color::Indexed(130),   // #af5f00
        error: Color::Indexed(160),     // #d70000
        success: Color::Indexed(28),    // #008700
        special: Color::Indexed(90),    // #870087
        highlight: Color::Indexed(222), // #ffd787
        selection: Color::Indexed(255), // #eeeeee
        popup: Color::Indexed(254),     // #e4e4e4
    };

    pub fn for_background(bg: Background) -> Palette {
        match bg {
            Background::Dark => Self::DARK,
            Background::Light => Self::LIGHT,
        }
    }

    /// Text on a coloured background `bg` (a badge, a button, a search
    /// match): black, or white where `bg` is dark enough that black would be
    /// hard to read. The terminal's named colours get black: their shade is
    /// the terminal's to choose.
    pub fn on(&self, bg: Color) -> Color {
        let rgb = match bg {
            Color::Rgb(r, g, b) => (r, g, b),
            Color::Indexed(i) if (16..232).contains(&i) => {
                let level = |v: u8| if v == 0 { 0 } else { 55 + 40 * v };
                let i = i - 16;
                (level(i / 36), level(i / 6 % 6), level(i % 6))
            }
            Color::Indexed(i) if i >= 232 => {
                let v = 8 + 10 * (i - 232);
                (v, v, v)
            }
            _ => return Color::Black,
        };
        // Black's contrast beats white's above a luminance of about 0.18.
        if luminance(rgb) > 0.18 {
            Color::Indexed(16)
        } else {
            Color::Indexed(231)
        }
    }

    /// The names `[ui.colors]` takes, with the role each sets.
    pub const ROLES: &'static [(&'static str, &'static str)] = &[
        ("dim", "secondary text: times, hints, borders"),
        ("accent", "selection marks, titles, scheduled items"),
        ("info", "your messages, queued items, links"),
        ("warning", "sending, retrying, paused, approvals"),
        ("error", "failures"),
        ("success", "done, allowed"),
        ("special", "tasks, expired items, top headings"),
        ("highlight", "background of a search match, a chosen button"),
        ("selection", "background of the selected row"),
        ("popup", "background of a popup's input line"),
    ];

    fn role_mut(&mut self, name: &str) -> Option<&mut Color> {
        Some(match name {
            "dim" => &mut self.dim,
            "accent" => &mut self.accent,
            "info" => &mut self.info,
            "warning" => &mut self.warning,
            "error" => &mut self.error,
            "success" => &mut self.success,
            "special" => &mut self.special,
            "highlight" => &mut self.highlight,
            "selection" => &mut self.selection,
            "popup" => &mut self.popup,
            _ => return None,
        })
    }

    /// This palette with `[ui.colors]` applied (`accent = "#d75f00"`, a
    /// colour name, or a 256-colour index). A bad entry gives one line in the
    /// returned errors and keeps the palette's own colour.
    pub fn with_overrides(mut self, colors: &BTreeMap<String, String>) -> (Palette, Vec<String>) {
        let mut errors = Vec::new();
        for (name, value) in colors {
            let Some(slot) = self.role_mut(name) else {
                let names: Vec<&str> = Self::ROLES.iter().map(|(n, _)| *n).collect();
                errors.push(format!(
                    "[ui.colors] unknown colour \"{name}\" (one of {})",
                    names.join(", ")
                ));
                continue;
            };
            match Color::from_str(value) {
                Ok(c) => *slot = c,
                Err(_) => errors.push(format!(
                    "[ui.colors] {name} = \"{value}\" is not a colour (a name such as \"blue\", \"#rrggbb\" or 0–255); keeping the default"
                )),
            }
        }
        (self, errors)
    }
}

/// Relative luminance of an sRGB colour (WCAG), 0 to 1.
pub fn luminance((r, g, b): (u8, u8, u8)) -> f64 {
    let ch = |v: u8| {
        let v = f64::from(v) / 255.0;
        if v <= 0.03928 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * ch(r) + 0.7152 * ch(g) + 0.0722 * ch(b)
}

thread_local! {
    static CURRENT: Cell<Palette> = const { Cell::new(Palette::DARK) };
}

/// The palette this thread draws with.
pub fn palette() -> Palette {
    CURRENT.with(Cell::get)
}

/// Draw with `p` on this thread from now on. Cached renderings are redone:
/// they carry colours.
pub fn set_palette(p: Palette) {
    if CURRENT.with(|c| c.replace(p)) != p {
        super::highlight::invalidate();
    }
}

/// Asks the terminal for its colours (OSC 10/11), waiting at most `timeout`.
/// `None` when it does not say (no answer in time, not a terminal, `TERM=dumb`,
/// or a terminal known not to support the query); the caller then takes dark.
///
/// terminal-colorsaurus does the asking: it sends a device-attributes query
/// after the colour queries, which every terminal answers, so one that
/// ignores the colour queries is told apart at once rather than by the timeout.
/// It must run before the UI reads the terminal's input, or the answer would
/// arrive as key presses.
pub fn detect_background(timeout: Duration) -> Option<Background> {
    use terminal_colorsaurus::{QueryOptions, ThemeMode, theme_mode};
    let mut options = QueryOptions::default();
    options.timeout = timeout;
    match theme_mode(options) {
        Ok(ThemeMode::Light) => Some(Background::Light),
        Ok(ThemeMode::Dark) => Some(Background::Dark),
        Err(_) => None,
    }
}

/// How long `auto` waits for the terminal's answer. A local terminal answers
/// in about a millisecond, one over ssh in a round trip; this only bounds a
/// terminal that answers nothing at all.
pub const DETECT_TIMEOUT: Duration = Duration::from_millis(150);

/// Which palette the UI draws with, and why.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ThemeChoice {
    /// `[ui] theme`.
    pub setting: ThemeSetting,
    /// Set by `/theme` for this session, over the config's.
    pub session: Option<ThemeSetting>,
    /// What the terminal said at start (`None`: not asked, or no answer).
    pub detected: Option<Background>,
    /// `[ui.colors]`.
    pub colors: BTreeMap<String, String>,
}

impl ThemeChoice {
    /// The choice the config makes, and one line if its `theme` is not one.
    pub fn from_config(ui: &crate::config::UiConfig) -> (Self, Option<String>) {
        let (setting, error) = match ui.theme.as_deref().map(str::parse::<ThemeSetting>) {
            None => (ThemeSetting::Auto, None),
            Some(Ok(t)) => (t, None),
            Some(Err(e)) => (
                ThemeSetting::Auto,
                Some(format!("[ui] theme: {e}; using auto")),
            ),
        };
        let choice = Self {
            setting,
            session: None,
            detected: None,
            colors: ui.colors.clone(),
        };
        (choice, error)
    }

    /// The setting in effect (this session's, else the config's).
    pub fn effective(&self) -> ThemeSetting {
        self.session.unwrap_or(self.setting)
    }

    /// Whether the terminal needs asking for its background.
    pub fn wants_detection(&self) -> bool {
        self.effective() == ThemeSetting::Auto
    }

    pub fn background(&self) -> Background {
        match self.effective() {
            ThemeSetting::Dark => Background::Dark,
            ThemeSetting::Light => Background::Light,
            ThemeSetting::Auto => self.detected.unwrap_or_default(),
        }
    }

    /// The palette, with one line per bad `[ui.colors]` entry.
    pub fn palette(&self) -> (Palette, Vec<String>) {
        Palette::for_background(self.background()).with_overrides(&self.colors)
    }

    /// "dark", "light", or "auto (light: the terminal's background)".
    pub fn describe(&self) -> String {
        let bg = match self.background() {
            Background::Dark => "dark",
            Background::Light => "light",
        };
        match self.effective() {
            ThemeSetting::Auto => match self.detected {
                Some(_) => format!("auto ({bg}, as the terminal said)"),
                None => format!("auto ({bg}: the terminal did not say)"),
            },
            t => t.name().to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn theme_setting_parses_and_refuses_with_a_reason() {
        assert_eq!("Light".parse::<ThemeSetting>(), Ok(ThemeSetting::Light));
        assert_eq!(" dark ".parse::<ThemeSetting>(), Ok(ThemeSetting::Dark));
        assert_eq!("auto".parse::<ThemeSetting>(), Ok(ThemeSetting::Auto));
        let e = "solarized".parse::<ThemeSetting>().unwrap_err();
        assert!(e.contains("solarized") && e.contains("light"), "{e}");
    }

    #[test]
    fn overrides_set_roles_and_report_bad_entries_keeping_the_default() {
        let mut m = BTreeMap::new();
        m.insert("accent".to_string(), "#d75f00".to_string());
        m.insert("dim".to_string(), "245".to_string());
        m.insert("warning".to_string(), "light-red".to_string());
        m.insert("error".to_string(), "reddish".to_string());
        m.insert("bogus".to_string(), "red".to_string());
        let (p, errors) = Palette::LIGHT.with_overrides(&m);
        assert_eq!(p.accent, Color::Rgb(0xd7, 0x5f, 0x00));
        assert_eq!(p.dim, Color::Indexed(245));
        assert_eq!(p.warning, Color::LightRed);
        assert_eq!(
            p.error,
            Palette::LIGHT.error,
            "a bad value keeps the default"
        );
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors.iter().any(|e| e.contains("reddish")), "{errors:?}");
        assert!(errors.iter().any(|e| e.contains("bogus")), "{errors:?}");
        assert!(errors.iter().all(|e| !e.contains('\n')));
    }

    #[test]
    fn the_choice_follows_session_then_config_then_the_terminal() {
        let ui = crate::config::UiConfig {
            theme: Some("nope".into()),
            ..Default::default()
        };
        let (mut c, err) = ThemeChoice::from_config(&ui);
        assert!(err.is_some_and(|e| e.contains("nope") && e.contains("using auto")));
        assert_eq!(c.background(), Background::Dark, "no answer: dark");
        c.detected = Some(Background::Light);
        assert_eq!(c.background(), Background::Light);
        assert!(
            c.describe().contains("as the terminal said"),
            "{}",
            c.describe()
        );
        c.session = Some(ThemeSetting::Dark);
        assert_eq!(c.background(), Background::Dark);
        assert!(!c.wants_detection());
        assert_eq!(c.palette().0, Palette::DARK);
    }

    #[test]
    fn text_on_a_colour_is_black_or_white_by_contrast() {
        let p = Palette::LIGHT;
        assert_eq!(p.on(Color::Rgb(0x5f, 0x00, 0xaf)), Color::Indexed(231));
        assert_eq!(p.on(Color::Indexed(222)), Color::Indexed(16));
        assert_eq!(p.on(Color::Indexed(232)), Color::Indexed(231));
        assert_eq!(p.on(Color::Yellow), Color::Black);
    }

    #[test]
    fn the_palette_is_per_thread() {
        set_palette(Palette::LIGHT);
        assert_eq!(palette(), Palette::LIGHT);
        let other = std::thread::spawn(palette).join().unwrap();
        assert_eq!(other, Palette::DARK);
        set_palette(Palette::DARK);
    }
}
