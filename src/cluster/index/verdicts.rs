//! The verdicts a worker decided and has not yet written: a page that found no candidate
//! writes its verdict after its one round trip, not in a second one of its own.
//!
//! A verdict waits in [`Verdicts`] until the worker's next page takes it into its round trip
//! or, when no page comes within [`FLUSH_DELAY`], a thread of the index with a connection of
//! its own writes it (with any others waiting). Only a near copy raced against the page
//! waits for its verdict meanwhile (see the index's module documentation), and never long:
//! a worker that stops between pages (a barrier, a slow fetch, the end of its crawl) would
//! otherwise keep it waiting up to `VERDICT_WAIT`, and then both pages kept.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use super::super::filter::{Cluster, ClusterError};
use crate::index::DocId;

/// How long a verdict waits for the worker's next page before the thread writes it.
pub const FLUSH_DELAY: Duration = Duration::from_millis(1);

/// What the index and its thread share.
struct Shared {
    pending: Mutex<Vec<(DocId, bool)>>,
    wake: Condvar,
    stop: AtomicBool,
}

/// The verdicts not yet written, and the thread that writes them when no page does.
pub(super) struct Verdicts {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

/// How a verdict is written: `SET NAME:nd:v:{ID} keep|yield [PX ttl]`.
#[derive(Clone)]
pub(super) struct VerdictKeys {
    pub(super) name: String,
    /// The expiry of a document's keys under retention, in milliseconds.
    pub(super) ttl_ms: Option<u64>,
}

impl VerdictKeys {
    pub(super) fn key(&self, id: DocId) -> String {
        format!("{}:nd:v:{{{id}}}", self.name)
    }

    /// The command that writes document `id`'s verdict.
    pub(super) fn set(&self, id: DocId, keep: bool) -> redis::Cmd {
        let mut cmd = redis::cmd("SET");
        cmd.arg(self.key(id))
            .arg(if keep { "keep" } else { "yield" });
        if let Some(ms) = self.ttl_ms {
            cmd.arg("PX").arg(ms);
        }
        cmd
    }
}

impl Verdicts {
    /// Starts the thread, on a connection of its own to `cluster`.
    pub(super) fn start(cluster: &Cluster, keys: VerdictKeys) -> Result<Verdicts, ClusterError> {
        let connection = cluster.another()?;
        let shared = Arc::new(Shared {
            pending: Mutex::new(Vec::new()),
            wake: Condvar::new(),
            stop: AtomicBool::new(false),
        });
        let theirs = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("crawldedup-verdicts".into())
            .spawn(move || write_when_idle(&theirs, &connection, &keys))
            .map_err(|e| cluster.state_error(format!("cannot start the verdict thread: {e}")))?;
        Ok(Verdicts {
            shared,
            thread: Some(thread),
        })
    }

    /// Holds document `id`'s verdict until a round trip takes it.
    pub(super) fn push(&self, id: DocId, keep: bool) {
        self.shared
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((id, keep));
        self.shared.wake.notify_one();
    }

    /// The verdicts waiting, taken: the caller writes them.
    pub(super) fn take(&self) -> Vec<(DocId, bool)> {
        std::mem::take(
            &mut *self
                .shared
                .pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }
}

impl Drop for Verdicts {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.wake.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The thread: waits for a verdict, gives the worker's next page [`FLUSH_DELAY`] to take
/// it, then writes what is still waiting; until told to stop, when it writes what is left.
fn write_when_idle(shared: &Shared, connection: &Cluster, keys: &VerdictKeys) {
    loop {
        {
            let mut pending = shared
                .pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            while pending.is_empty() && !shared.stop.load(Ordering::SeqCst) {
                pending = shared
                    .wake
                    .wait(pending)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        }
        let stopping = shared.stop.load(Ordering::SeqCst);
        if !stopping {
            std::thread::sleep(FLUSH_DELAY);
        }
        let batch = std::mem::take(
            &mut *shared
                .pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        if !batch.is_empty() {
            let mut pipe = redis::cluster::cluster_pipe();
            for &(id, keep) in &batch {
                pipe.add_command(keys.set(id, keep)).ignore();
            }
            // A verdict that cannot be written counts as not kept by whoever waits for it
            // (after `VERDICT_WAIT`): a duplicate kept, never a page lost.
            let _ = connection.with(|con| pipe.exec(con));
        }
        if stopping {
            return;
        }
    }
}
