//! A reply whose text opens with `<think>…</think>`: a reasoning model
//! served without a reasoning parser (llama.cpp, vLLM, an OpenAI-compatible
//! proxy in front of R1 or Qwen3) sends its thinking in the text itself.
//! That block is its reasoning, kept and shown as reasoning is, not text to
//! show as the answer (or send back to the model as one).
//!
//! Hand-written: it is a three-state split of a stream whose tags can be
//! cut anywhere between two events; no crate does that for a stream.

use super::StreamEvent;

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

#[derive(Default)]
enum State {
    /// Nothing but whitespace yet: the text may still open with the tag.
    #[default]
    Start,
    /// Inside the block.
    Thinking,
    /// Just after the block: the whitespace before the answer is dropped.
    After,
    /// The answer (or a reply that never opened with the tag).
    Text,
}

#[derive(Default)]
pub(crate) struct ThinkTags {
    state: State,
    /// Text that may still turn out to be part of a tag.
    held: String,
}

impl ThinkTags {
    /// The events a piece of the reply's text makes, each handed to `emit`.
    pub(crate) fn push(&mut self, piece: &str, emit: &mut impl FnMut(StreamEvent)) {
        match self.state {
            State::Text => {
                if !piece.is_empty() {
                    emit(StreamEvent::Text(piece.to_string()));
                }
            }
            State::Start => {
                self.held.push_str(piece);
                let t = self.held.trim_start();
                if t.is_empty() || (OPEN.starts_with(t) && t.len() < OPEN.len()) {
                    return;
                }
                let held = std::mem::take(&mut self.held);
                let t = held.trim_start();
                if let Some(rest) = t.strip_prefix(OPEN) {
                    self.state = State::Thinking;
                    self.push(rest, emit);
                } else {
                    self.state = State::Text;
                    self.push(&held, emit);
                }
            }
            State::Thinking => {
                self.held.push_str(piece);
                if let Some(at) = self.held.find(CLOSE) {
                    let held = std::mem::take(&mut self.held);
                    if !held[..at].is_empty() {
                        emit(StreamEvent::Reasoning(held[..at].to_string()));
                    }
                    self.state = State::After;
                    self.push(&held[at + CLOSE.len()..], emit);
                    return;
                }
                // Keep only an end that may begin the closing tag.
                let keep = (1..CLOSE.len())
                    .rev()
                    .find(|n| self.held.ends_with(&CLOSE[..*n]))
                    .unwrap_or(0);
                let cut = self.held.len() - keep;
                if cut > 0 {
                    let rest = self.held.split_off(cut);
                    emit(StreamEvent::Reasoning(std::mem::replace(
                        &mut self.held,
                        rest,
                    )));
                }
            }
            State::After => {
                let t = piece.trim_start();
                if !t.is_empty() {
                    self.state = State::Text;
                    self.push(t, emit);
                }
            }
        }
    }

    /// The reply's text has ended: what was held goes out as what it was.
    pub(crate) fn finish(&mut self, emit: &mut impl FnMut(StreamEvent)) {
        let held = std::mem::take(&mut self.held);
        if held.is_empty() {
            return;
        }
        match self.state {
            State::Thinking => emit(StreamEvent::Reasoning(held)),
            _ => emit(StreamEvent::Text(held)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reasoning and text, each joined, for a reply cut into `pieces`.
    fn split(pieces: &[&str]) -> (String, String) {
        let mut t = ThinkTags::default();
        let mut out = Vec::new();
        let mut emit = |ev| out.push(ev);
        for p in pieces {
            t.push(p, &mut emit);
        }
        t.finish(&mut emit);
        let (mut reasoning, mut text) = (String::new(), String::new());
        for ev in out {
            match ev {
                StreamEvent::Reasoning(r) => reasoning.push_str(&r),
                StreamEvent::Text(x) => text.push_str(&x),
                _ => {}
            }
        }
        (reasoning, text)
    }

    #[test]
    fn a_leading_think_block_is_reasoning_however_it_is_cut() {
        let whole = "<think>weigh it\n</think>\n\nAnswer here";
        let want = ("weigh it\n".to_string(), "Answer here".to_string());
        assert_eq!(split(&[whole]), want);
        // Cut at every byte, and one character at a time.
        for at in 1..whole.len() {
            assert_eq!(split(&[&whole[..at], &whole[at..]]), want, "cut at {at}");
        }
        let chars: Vec<String> = whole.chars().map(String::from).collect();
        let refs: Vec<&str> = chars.iter().map(String::as_str).collect();
        assert_eq!(split(&refs), want);
        assert_eq!(
            split(&["\n  ", "<thi", "nk>a</th", "ink>b"]),
            ("a".into(), "b".into())
        );
    }

    #[test]
    fn other_text_is_text_as_it_came() {
        assert_eq!(
            split(&["<b>bold</b>"]),
            (String::new(), "<b>bold</b>".into())
        );
        assert_eq!(split(&["<", "p>"]), (String::new(), "<p>".into()));
        assert_eq!(
            split(&["Hi <think>x</think>"]),
            (String::new(), "Hi <think>x</think>".into())
        );
        assert_eq!(split(&["<thi"]), (String::new(), "<thi".into()));
        // An unclosed block is all reasoning (the stream was cut).
        assert_eq!(
            split(&["<think>still going"]),
            ("still going".into(), String::new())
        );
    }
}
