//! The background sweep of the time windows: a thread that takes bounded steps of
//! [`Dedup::sweep`] while a crawl or the sidecar runs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use super::Dedup;

/// Entries one step removes at most: a few milliseconds of work under the index's and the
/// filter's locks, so that a page decided meanwhile waits no longer than that.
pub const SWEEP_STEP: usize = 16_384;

/// How long the sweeper rests when a step found nothing to remove.
pub const SWEEP_REST: Duration = Duration::from_secs(1);

/// A running sweep; stopping it (or dropping it) waits for the step under way.
pub struct Sweeper {
    stop: Arc<(Mutex<bool>, Condvar)>,
    failed: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Sweeper {
    /// Starts sweeping `dedup` on a thread of its own: a step of at most [`SWEEP_STEP`]
    /// entries, again at once while steps find work, else after [`SWEEP_REST`]. Without
    /// windows, no thread is started. A step that fails (a disk error) is logged as an
    /// error and ends the sweep; nothing is lost by that, since expired entries stop
    /// matching without being swept.
    pub fn start(dedup: Arc<Dedup>) -> Sweeper {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let failed = Arc::new(AtomicBool::new(false));
        let thread = dedup.has_windows().then(|| {
            let stop = stop.clone();
            let failed = failed.clone();
            std::thread::Builder::new()
                .name("crawldedup-sweep".into())
                .spawn(move || sweep_until_stopped(&dedup, &stop, &failed))
                .expect("the sweep thread starts")
        });
        Sweeper {
            stop,
            failed,
            thread,
        }
    }

    /// Whether a step failed (and the sweep ended).
    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }

    /// Stops the sweep after the step under way.
    pub fn stop(&mut self) {
        let (flag, wake) = &*self.stop;
        *flag.lock().unwrap_or_else(|p| p.into_inner()) = true;
        wake.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Sweeper {
    fn drop(&mut self) {
        self.stop();
    }
}

fn sweep_until_stopped(dedup: &Dedup, stop: &(Mutex<bool>, Condvar), failed: &AtomicBool) {
    let (flag, wake) = stop;
    loop {
        let busy = match dedup.sweep(SWEEP_STEP) {
            Ok(step) => {
                step.fingerprints_expired > 0
                    || step.index_chunks_deleted > 0
                    || step.url_confirmations_deleted > 0
            }
            Err(e) => {
                tracing::error!("sweep of the time windows stopped: {e}");
                failed.store(true, Ordering::Relaxed);
                return;
            }
        };
        let stopped = flag.lock().unwrap_or_else(|p| p.into_inner());
        if *stopped {
            return;
        }
        if !busy {
            let (stopped, _) = wake
                .wait_timeout(stopped, SWEEP_REST)
                .unwrap_or_else(|p| p.into_inner());
            if *stopped {
                return;
            }
        }
    }
}
