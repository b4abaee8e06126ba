//! Placeholder for the F2 pane (replaced by the f2 branch).
use chrono::{DateTime, FixedOffset};
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;

#[derive(Default)]
pub struct ScheduledPane;
pub enum PaneAction {
    None,
    Close,
    Jump(i64),
    Info(String),
    Error(String),
}
impl ScheduledPane {
    pub fn new() -> Self {
        Self
    }
    pub fn refresh(&mut self, _store: &crate::store::Store) -> anyhow::Result<()> {
        Ok(())
    }
    pub fn handle_key(
        &mut self,
        key: KeyEvent,
        _e: &crate::engine::Engine,
        _now: DateTime<FixedOffset>,
    ) -> PaneAction {
        if key.code == KeyCode::Esc {
            PaneAction::Close
        } else {
            PaneAction::None
        }
    }
    pub fn render(&self, _area: Rect, _buf: &mut Buffer, _now: DateTime<FixedOffset>) {}
    pub fn count(&self) -> usize {
        0
    }
}
