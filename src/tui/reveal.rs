//! Streamed text put on screen a frame's worth at a time.
//!
//! The engine hands a reply's text on a few times a second (each hand-over
//! is a wake-up of the engine and of this thread, most of what a reply at a
//! model's pace costs); shown as it comes, the text would jump a few words
//! at a time. So what is handed over is held here and shown over the
//! frames until the next hand-over is due: the reply reads as smoothly as
//! if it were taken as it came, a fraction of a second behind the network,
//! which nobody watching can tell. The end of a reply is shown at once
//! (`all`), not held back.
//!
//! How many frames: one for every few words held ([`SHARE`]), at most ten
//! a second and at least five. A fast stream moves ten times a second; a
//! slow one (30 tokens/s: two words a frame at ten a second) a phrase at a
//! time, five times a second, which reads as well and halves its frames:
//! each is a wake-up and a draw, most of what such a reply costs
//! (4,000 tokens at 30/s: 450 → 250–290 ms of CPU).

use std::time::Duration;

/// Held text, or a frame's worth of it: `text` starts at byte `offset` of
/// message `message_id`'s reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Streamed {
    pub conversation_id: i64,
    pub message_id: i64,
    pub offset: usize,
    pub text: String,
}

/// How far past a frame's share a step may reach to end with a whole word.
const TO_WORD_END: usize = 24;
/// The least text a frame is drawn for while fewer than the most frames a
/// second would show it: about five words.
const SHARE: usize = 32;
/// Frames a second for held text: at most (smooth to a reader), and at
/// least, however slowly it comes (so it never stands still for long).
const MOST_A_SECOND: u128 = 10;
const FEWEST_A_SECOND: u128 = 5;

#[derive(Debug, Default)]
pub struct Reveal {
    held: Option<Streamed>,
    /// Frames left to show what is held in, before the next hand-over.
    steps: u32,
    /// The time between those frames.
    gap: Duration,
}

impl Reveal {
    /// Text handed over, to be shown with what is still held over the
    /// frames until the next hand-over, due in `every`. Text held for
    /// another reply, or text this one does not follow on from, is given
    /// back: to be shown at once.
    pub fn hold(&mut self, text: Streamed, every: Duration) -> Option<Streamed> {
        let earlier = match &mut self.held {
            Some(held)
                if held.message_id == text.message_id
                    && held.offset + held.text.len() == text.offset =>
            {
                held.text.push_str(&text.text);
                None
            }
            _ => self.held.replace(text),
        };
        let len = self.held.as_ref().map_or(0, |h| h.text.len());
        let ms = every.as_millis();
        let most = (ms * MOST_A_SECOND / 1000).max(1);
        let fewest = (ms * FEWEST_A_SECOND / 1000).clamp(1, most);
        let steps = ((len / SHARE) as u128).clamp(fewest, most);
        self.steps = u32::try_from(steps).unwrap_or(u32::MAX);
        self.gap = every / self.steps;
        earlier
    }

    /// The time until the next share is due, while text is held.
    pub fn gap(&self) -> Duration {
        self.gap
    }

    /// The next frame's share of what is held (all of it at the last
    /// step), ending with a whole word where one ends a little further on.
    pub fn step(&mut self) -> Option<Streamed> {
        let held = self.held.as_mut()?;
        let len = held.text.len();
        let steps = self.steps as usize;
        self.steps = self.steps.saturating_sub(1);
        let mut take = if steps <= 1 { len } else { len.div_ceil(steps) };
        while !held.text.is_char_boundary(take) {
            take += 1;
        }
        if take < len {
            let mut reach = (take + TO_WORD_END).min(len);
            while !held.text.is_char_boundary(reach) {
                reach -= 1;
            }
            let space = held.text[take..reach]
                .char_indices()
                .find(|(_, c)| c.is_whitespace());
            if let Some((at, c)) = space {
                take += at + c.len_utf8();
            } else if reach == len {
                take = len;
            }
        }
        if take >= len {
            return self.held.take();
        }
        let rest = held.text.split_off(take);
        let shown = std::mem::replace(&mut held.text, rest);
        let step = Streamed {
            conversation_id: held.conversation_id,
            message_id: held.message_id,
            offset: held.offset,
            text: shown,
        };
        held.offset += take;
        Some(step)
    }

    /// Everything held, at once.
    pub fn all(&mut self) -> Option<Streamed> {
        self.steps = 0;
        self.held.take()
    }

    pub fn is_holding(&self) -> bool {
        self.held.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-over pace slower than frames (the TUI asks for 600 ms).
    const EVERY: Duration = Duration::from_millis(400);

    /// `text` held, to be shown over `steps` frames.
    fn held(text: Streamed, steps: u32) -> Reveal {
        Reveal {
            held: Some(text),
            steps,
            gap: EVERY / steps.max(1),
        }
    }

    fn streamed(message_id: i64, offset: usize, text: &str) -> Streamed {
        Streamed {
            conversation_id: 1,
            message_id,
            offset,
            text: text.to_string(),
        }
    }

    /// Steps until nothing is held, applied to `shown` as the app does.
    fn show_all_steps(r: &mut Reveal, shown: &mut String) -> usize {
        let mut n = 0;
        while let Some(s) = r.step() {
            assert_eq!(s.offset, shown.len(), "each step follows the last");
            shown.push_str(&s.text);
            n += 1;
        }
        n
    }

    #[test]
    fn a_hand_over_is_shown_over_the_frames_until_the_next() {
        let text = "The reader hands out one line at a time, so memory stays flat however large the file is; errors are reported per line, which is why the loop uses a question mark.";
        let mut r = Reveal::default();
        assert_eq!(r.hold(streamed(7, 0, text), EVERY), None);
        assert_eq!(r.gap(), Duration::from_millis(100));
        let mut shown = String::new();
        let steps = show_all_steps(&mut r, &mut shown);
        assert_eq!(shown, text);
        assert!((3..=4).contains(&steps), "{steps} steps");
        assert!(!r.is_holding());
    }

    #[test]
    fn frames_come_for_a_few_words_each_from_five_to_ten_a_second() {
        let pace = |len: usize, every_ms: u64| {
            let mut r = Reveal::default();
            r.hold(
                streamed(7, 0, &"x".repeat(len)),
                Duration::from_millis(every_ms),
            );
            (r.steps, r.gap())
        };
        let ms = Duration::from_millis;
        // 30 tokens/s: about 60 bytes a hand-over, five frames a second.
        assert_eq!(pace(60, 400), (2, ms(200)));
        // Nothing much: still five a second.
        assert_eq!(pace(3, 400), (2, ms(200)));
        // In between, a frame for each few words.
        assert_eq!(pace(100, 400), (3, ms(400) / 3));
        // Fast: ten a second, however much comes.
        assert_eq!(pace(130, 400), (4, ms(100)));
        assert_eq!(pace(5_000, 400), (4, ms(100)));
        // Hand-overs as often as frames: each shown at once.
        assert_eq!(pace(5_000, 100), (1, ms(100)));
        assert_eq!(pace(3, 100), (1, ms(100)));
        // Text joining what is held counts with it.
        let mut r = Reveal::default();
        r.hold(streamed(7, 0, &"x".repeat(60)), ms(400));
        r.hold(streamed(7, 60, &"y".repeat(70)), ms(400));
        assert_eq!((r.steps, r.gap()), (4, ms(100)));
    }

    #[test]
    fn steps_end_with_whole_words() {
        let text = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu";
        let mut r = held(streamed(7, 0, text), 4);
        let mut shown = String::new();
        while let Some(s) = r.step() {
            shown.push_str(&s.text);
            if shown.len() < text.len() {
                assert!(shown.ends_with(' '), "{shown:?}");
            }
        }
        assert_eq!(shown, text);
    }

    #[test]
    fn text_handed_over_while_some_is_held_joins_it() {
        let mut r = held(streamed(7, 0, "one two three four five six "), 4);
        let mut shown = String::new();
        let first = r.step().expect("a step");
        shown.push_str(&first.text);
        assert!(shown.len() < 28);
        assert_eq!(r.hold(streamed(7, 28, "seven eight"), EVERY), None);
        show_all_steps(&mut r, &mut shown);
        assert_eq!(shown, "one two three four five six seven eight");
    }

    #[test]
    fn text_of_another_reply_or_out_of_order_gives_back_what_was_held() {
        let mut r = Reveal::default();
        r.hold(streamed(7, 0, "held text"), EVERY);
        assert_eq!(
            r.hold(streamed(8, 0, "next reply"), EVERY),
            Some(streamed(7, 0, "held text"))
        );
        // A gap (text was lost to a lag): what was held goes out at once.
        assert_eq!(
            r.hold(streamed(8, 40, "later"), EVERY),
            Some(streamed(8, 0, "next reply"))
        );
        assert_eq!(r.all(), Some(streamed(8, 40, "later")));
        assert_eq!(r.step(), None);
    }

    #[test]
    fn the_last_step_shows_the_rest_however_long() {
        let long = "word ".repeat(200);
        let mut r = held(streamed(7, 0, &long), 1);
        assert_eq!(r.step().map(|s| s.text), Some(long));
        assert!(!r.is_holding());
    }

    #[test]
    fn steps_never_split_a_character_and_lose_nothing() {
        // Every length of text with multi-byte characters and no spaces,
        // over every number of steps.
        let base = "über€中🙂".repeat(12);
        let cuts: Vec<usize> = (0..=base.len())
            .filter(|&i| base.is_char_boundary(i))
            .collect();
        for &end in &cuts {
            for steps in 1..6 {
                let text = &base[..end];
                let mut r = held(streamed(7, 3, text), steps);
                let mut shown = String::new();
                let mut at = 3;
                while let Some(s) = r.step() {
                    assert_eq!(s.offset, at);
                    at += s.text.len();
                    shown.push_str(&s.text);
                }
                assert_eq!(shown, text, "end {end}, steps {steps}");
            }
        }
    }
}
