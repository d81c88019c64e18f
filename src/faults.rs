//! Fault injection for crash tests: named points in the code where a test can hold the
//! process still and kill it.
//!
//! When the environment variable `CRAWLDEDUP_PAUSE_AT` names a point (for example
//! `checkpoint-before-record`), the first time the process reaches that point it writes
//! `crawldedup: paused at <point>` on stderr and sleeps for a minute, so that the test that
//! started it can send SIGKILL at exactly that moment. Unset (always, outside tests), a
//! point costs one read of a value computed once.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// The environment variable naming the point to pause at.
pub const PAUSE_AT: &str = "CRAWLDEDUP_PAUSE_AT";

/// Pauses here if [`PAUSE_AT`] names `name` and this is the first time the point is reached.
pub fn point(name: &str) {
    point_prepared(name, || {});
}

/// As [`point`], running `prepare` first when it pauses: a flush, so that what a kill at
/// the point leaves on disk is what the point is about.
pub fn point_prepared(name: &str, prepare: impl FnOnce()) {
    static WANTED: OnceLock<Option<String>> = OnceLock::new();
    static DONE: AtomicBool = AtomicBool::new(false);
    let wanted = WANTED.get_or_init(|| std::env::var(PAUSE_AT).ok());
    if wanted.as_deref() == Some(name) && !DONE.swap(true, Ordering::SeqCst) {
        prepare();
        eprintln!("crawldedup: paused at {name}");
        std::thread::sleep(std::time::Duration::from_secs(60));
    }
}
