//! Wall-clock time as an input, so tests can control it.

use std::sync::atomic::{AtomicI64, Ordering};

pub trait Clock: Send + Sync {
    /// Current wall-clock time, UTC epoch milliseconds.
    fn now_ms(&self) -> i64;
}

pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        chrono::Utc::now().timestamp_millis()
    }
}

/// A clock that follows tokio's (pausable) time from a chosen start, plus
/// jumps: `tokio::time::advance` moves it, `jump` simulates the wall clock
/// being changed or the machine waking from suspend.
pub struct ManualClock {
    base_ms: i64,
    start: tokio::time::Instant,
    offset_ms: AtomicI64,
}

impl ManualClock {
    pub fn new(base_ms: i64) -> Self {
        Self {
            base_ms,
            start: tokio::time::Instant::now(),
            offset_ms: AtomicI64::new(0),
        }
    }

    pub fn jump(&self, delta_ms: i64) {
        self.offset_ms.fetch_add(delta_ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        let elapsed = tokio::time::Instant::now()
            .duration_since(self.start)
            .as_millis() as i64;
        self.base_ms + elapsed + self.offset_ms.load(Ordering::SeqCst)
    }
}
