//! The clock that time windows are measured on: fingerprint retention
//! ([`crate::config::DedupConfig::retention`]) and URL recrawl intervals
//! ([`crate::config::UrlFilterConfig::recrawl_after`]).
//!
//! Everything that decides by age reads the time from a [`Clock`] handed to it, never from
//! the system directly, so a test (or a replay of an old crawl) can set the time and move it
//! exactly. [`Clock::now`] is in whole seconds since the Unix epoch (the times stored with
//! documents); [`Clock::now_ms`] in milliseconds, which the URL filter's time slices are
//! measured in, so that a short recrawl interval comes due on time.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A source of the current time, in seconds since the Unix epoch.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current time, in whole seconds.
    fn now(&self) -> u64;

    /// The current time in milliseconds since the Unix epoch (the seconds of
    /// [`Clock::now`] times 1,000 unless the clock knows better).
    fn now_ms(&self) -> u64 {
        self.now().saturating_mul(1000)
    }
}

/// The system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> u64 {
        self.now_ms() / 1000
    }

    fn now_ms(&self) -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
}

/// A clock that stands still until it is set or advanced: for tests and replays. Clones
/// share one time, kept in milliseconds.
///
/// ```
/// use crawldedup::clock::{Clock, ManualClock};
/// let clock = ManualClock::at(1_000);
/// let seen_by_index = clock.clone();
/// clock.advance(std::time::Duration::from_secs(60));
/// assert_eq!(seen_by_index.now(), 1_060);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ManualClock(Arc<AtomicU64>);

impl ManualClock {
    /// A clock showing `secs` seconds since the epoch.
    pub fn at(secs: u64) -> ManualClock {
        ManualClock(Arc::new(AtomicU64::new(secs.saturating_mul(1000))))
    }

    /// Sets the time, in seconds.
    pub fn set(&self, secs: u64) {
        self.set_ms(secs.saturating_mul(1000));
    }

    /// Sets the time, in milliseconds.
    pub fn set_ms(&self, ms: u64) {
        self.0.store(ms, Ordering::SeqCst);
    }

    /// Moves the time forward by `by` (to the millisecond).
    pub fn advance(&self, by: std::time::Duration) {
        let ms = u64::try_from(by.as_millis()).unwrap_or(u64::MAX);
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> u64 {
        self.now_ms() / 1000
    }

    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// The clock used when none is given.
pub fn system() -> Arc<dyn Clock> {
    Arc::new(SystemClock)
}

/// A window's length in milliseconds, at least one second (as [`window_secs`]).
pub fn window_ms(window: std::time::Duration) -> u64 {
    u64::try_from(window.as_millis())
        .unwrap_or(u64::MAX)
        .max(1000)
}

/// A window's length in whole seconds, at least one (a zero window would expire everything
/// the moment it is stored).
pub fn window_secs(window: std::time::Duration) -> u64 {
    window.as_secs().max(1)
}
