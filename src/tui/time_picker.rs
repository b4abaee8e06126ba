//! Placeholder for the time picker (replaced by the f2 branch).
use chrono::{DateTime, FixedOffset, Utc};
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;

#[derive(Default)]
pub struct TimePicker;
pub enum PickerAction {
    None,
    Cancel,
    Pick(DateTime<Utc>),
}
impl TimePicker {
    pub fn new() -> Self {
        Self
    }
    pub fn handle_key(&mut self, key: KeyEvent, now: DateTime<FixedOffset>) -> PickerAction {
        match key.code {
            KeyCode::Esc => PickerAction::Cancel,
            KeyCode::Enter => PickerAction::Pick(now.to_utc() + chrono::Duration::minutes(5)),
            _ => PickerAction::None,
        }
    }
    pub fn render(&self, _area: Rect, _buf: &mut Buffer, _now: DateTime<FixedOffset>) {}
}
