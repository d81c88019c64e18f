//! The index's upkeep threads: what keeps an open after a crash short, and a growth of the
//! tables cheap, done off the inserting thread.
//!
//! - **Folding tails.** An index opened from a snapshot older than its database carries the
//!   documents after it as small tables beside the mapped ones (see `memory.rs`); the thread
//!   folds them in, one table per hold of the write lock, so that probes read one table
//!   again; between two tables it leaves the lock free for `FOLD_PAUSE`, so that the
//!   decisions waiting for it go on while the fold does.
//! - **Snapshots in the background.** After a checkpoint, once the documents stored since the
//!   last snapshot reach a sixteenth of it ([`TAIL_SHARE`]; and the index holds at least
//!   [`super::snapshot::SNAPSHOT_MIN_DOCUMENTS`]), the thread writes a new snapshot (see
//!   [`super::snapshot`] for how it is copied while inserts go on), and puts it in place
//!   once two checkpoints have covered it. An open after a crash then maps it and adds at
//!   most about that share of documents as tails, where without it the tables of the whole
//!   index are rebuilt (several times longer at 10 M documents; docs/benchmarks.md, the
//!   index table). Copying sections whole costs a
//!   pass over the index's memory, so after a snapshot that did, the next whole copy waits
//!   until the time since it ended is at least `REST_PER_WRITE` (2) times what it took (the
//!   thread spends at most a third of its time copying whole), unless the documents since
//!   the last snapshot reach a quarter of it. Meanwhile the snapshots due are updates in
//!   place of deltas alone (see `snapshot/in_place.rs`: a section due for a whole copy takes
//!   a delta more instead), which cost by the document stored since, however often they are
//!   written, and start no rest: so the documents an open after a crash adds as tails stay
//!   near that share, where a rest let them reach a quarter and more. Snapshots are written
//!   at a lower priority than the index's other threads (a nice value 10 higher, on Linux):
//!   on busy cores they take what decisions and sled's writes leave.
//! - **Memory ready for growths.** A second thread (`index-grow`), after each checkpoint,
//!   backs the memory of the next growth of every table within an eighth of it and with
//!   no ids expired since its last re-placement (see `Bucketed::next_growth`), so that the
//!   insert that grows the tables fills memory already given rather than faulting in
//!   gigabytes page by page on the inserting thread. For a table that grows in place that
//!   is the pages past its lines (0.6 times its memory, backed while inserts go on); for
//!   one that grows into new lines (once, after an open), the new lines, zeroed. It runs
//!   at the snapshots' lower priority. Until the growth, the index holds that memory too.
//!
//! The first snapshot of a session is written whole, over a snapshot file a crash left if
//! the open kept one (see `snapshot::take_spare`); the next ones bring it up to date in
//! place, in the same file (see `snapshot::in_place`), each batch of sections put in use
//! once two checkpoints cover it.
//!
//! A snapshot that fails to write (a full disk) is logged and tried again at a later
//! checkpoint: a snapshot only ever saves time. Closing the index stops the thread between
//! two tables (of a fold or of a snapshot); an unfinished snapshot file is removed.

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::{Duration, Instant};

use super::lock;
use super::memory::fresh_lines;
use super::plan::Plan;
use super::snapshot::{self, Extent};
use super::tables::Memory;

mod writes;
use writes::{install, take_spare, write};

/// A snapshot is written once the documents stored since the last reach 1/`TAIL_SHARE` of
/// the documents it holds: an open after a crash adds at most about that share (plus what
/// was stored while the snapshot was written) as tails. A sixteenth: the updates in place
/// between whole copies write deltas alone, whose cost is by the document stored, so a
/// smaller share costs few more bytes (over a 10 M load, 6.9-7.7 GB against 7.0-7.5 at an
/// eighth) and halves what an open after a crash adds.
pub const TAIL_SHARE: u64 = 16;

/// After a snapshot, the next one waits at least this many times as long as it took...
const REST_PER_WRITE: u32 = 2;

/// ...unless the documents stored since the last reach 1/`TAIL_SHARE_WHILE_RESTING` of it
/// (a quarter): documents that come faster than a snapshot can be written (a bulk load at
/// 200 k documents a second, against about a microsecond a document to write one) do not
/// grow the tail an open after a crash must add past about that share plus what comes
/// during one write.
pub(super) const TAIL_SHARE_WHILE_RESTING: u64 = 4;

/// The pause after each table's fold, in which the decisions waiting for the index's lock
/// take it (see `run`).
const FOLD_PAUSE: Duration = Duration::from_millis(1);

/// How much the thread's nice value is raised while it writes snapshots (to 19 at most, the
/// lowest priority): at 10 above the other threads, CFS gives it about a tenth of a core
/// that they also want.
#[cfg(target_os = "linux")]
const SNAPSHOT_NICE: libc::c_int = 10;

/// What the background snapshots have done, for the index's stats.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SnapshotStats {
    /// Documents the snapshot in place holds (its rows), if there is one.
    pub documents: Option<u64>,
    /// Snapshots written in the background since the index opened.
    pub written: u64,
    /// Seconds the last one took to write.
    pub last_seconds: f64,
    /// Bytes of the last one.
    pub last_bytes: u64,
    /// Bytes the snapshots written in the background since the index opened wrote: whole
    /// snapshots, and the sections of those brought up to date in place.
    pub bytes_written: u64,
}

#[derive(Default)]
struct State {
    stop: bool,
    /// Documents below which no snapshot is written (`u64::MAX`: never).
    snapshot_min: u64,
    /// Documents the last two checkpoints made durable, the newest first.
    durable: [u64; 2],
    /// A checkpoint happened since the thread last looked.
    checkpointed: bool,
    /// The extent of the snapshot in place, if it is known.
    installed: Option<Extent>,
    /// The snapshot in place was written by this process, so nothing maps its file (only
    /// an open maps one): once another replaces it, its file may be written over.
    ours: bool,
    stats: SnapshotStats,
    /// Tails not yet folded in.
    folding: bool,
    /// A checkpoint happened since the growth thread last looked.
    growth_check: bool,
    /// The snapshot in place, when this process wrote it and the next may be written in
    /// place (see `snapshot::in_place`).
    in_place: Option<snapshot::InPlace>,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// Signalled at a checkpoint, at the end of a fold and at stop.
    wake: Condvar,
}

/// The upkeep thread and what it shares with the index.
pub(super) struct Upkeep {
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// The thread that makes lines ready for the tables' growths ([`prepare_growths`]).
    grower: Option<std::thread::JoinHandle<()>>,
}

/// What the thread works on.
pub(super) struct Work {
    pub(super) dir: PathBuf,
    pub(super) plan: Plan,
    pub(super) memory: Arc<RwLock<Memory>>,
    /// Whether snapshots are written in the background (else the thread only folds tails).
    pub(super) background: bool,
    /// Documents the last checkpoint before the open made durable.
    pub(super) durable: u64,
    /// The snapshot the index was opened from, if any.
    pub(super) installed: Option<Extent>,
}

impl Upkeep {
    pub(super) fn start(work: Work) -> std::io::Result<Upkeep> {
        // The growth thread's handle on the tables; `work` goes to the upkeep thread.
        let memory = work.memory.clone();
        let folding = work
            .memory
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .has_tails();
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                snapshot_min: snapshot::SNAPSHOT_MIN_DOCUMENTS,
                durable: [work.durable; 2],
                installed: work.installed,
                stats: SnapshotStats {
                    documents: work.installed.map(|e| e.0),
                    ..SnapshotStats::default()
                },
                folding,
                ..State::default()
            }),
            wake: Condvar::new(),
        });
        let thread = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("index-upkeep".into())
                .spawn(move || run(&work, &shared))?
        };
        let grower = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("index-grow".into())
                .spawn(move || prepare_growths(&memory, &shared))?
        };
        Ok(Upkeep {
            shared,
            thread: Some(thread),
            grower: Some(grower),
        })
    }

    /// Tells the thread that a checkpoint made `documents` durable.
    pub(super) fn checkpointed(&self, documents: u64) {
        let mut state = lock(&self.shared.state);
        state.durable = [documents, state.durable[0]];
        state.checkpointed = true;
        state.growth_check = true;
        self.shared.wake.notify_all();
    }

    /// Stops the thread after the table it is on, and waits for it.
    pub(super) fn stop(&mut self) {
        lock(&self.shared.state).stop = true;
        self.shared.wake.notify_all();
        for thread in [self.thread.take(), self.grower.take()]
            .into_iter()
            .flatten()
        {
            let _ = thread.join();
        }
    }

    /// The extent of the snapshot in place, if known.
    pub(super) fn installed(&self) -> Option<Extent> {
        lock(&self.shared.state).installed
    }

    /// Documents below which no snapshot is written, in the background or at close.
    pub(super) fn snapshot_min(&self) -> u64 {
        lock(&self.shared.state).snapshot_min
    }

    pub(super) fn set_snapshot_min(&self, documents: u64) {
        lock(&self.shared.state).snapshot_min = documents;
    }

    /// Puts the snapshot written to `from` in place, unless the one in place is of as many
    /// documents or more; returns whether it did.
    pub(super) fn install(
        &self,
        from: &std::path::Path,
        dir: &std::path::Path,
        extent: Extent,
    ) -> std::io::Result<bool> {
        install(&self.shared, from, dir, extent, None)
    }

    /// Brings the snapshot in place up to date in place for a close, when this process
    /// wrote it, without waiting for checkpoints: the caller has checked that the last one
    /// records every document. Returns whether it did; `false` when the snapshot must be
    /// written whole (none of ours in place, or this failed).
    pub(super) fn close_in_place(
        &self,
        dir: &std::path::Path,
        plan: &Plan,
        memory: &RwLock<Memory>,
    ) -> bool {
        writes::close_in_place(&self.shared, dir, plan, memory)
    }

    /// Moves the spare snapshot file to `target`, for a snapshot written there.
    pub(super) fn take_spare(&self, dir: &std::path::Path, target: &std::path::Path) {
        take_spare(&self.shared, dir, target);
    }

    pub(super) fn stats(&self) -> SnapshotStats {
        lock(&self.shared.state).stats
    }

    /// Waits until the tails are folded in, or `timeout` passed; returns whether they are.
    pub(super) fn wait_folded(&self, timeout: Duration) -> bool {
        let state = lock(&self.shared.state);
        let (state, _) = self
            .shared
            .wake
            .wait_timeout_while(state, timeout, |s| s.folding && !s.stop)
            .unwrap_or_else(|p| p.into_inner());
        !state.folding
    }
}

impl Drop for Upkeep {
    fn drop(&mut self) {
        self.stop();
    }
}

fn run(work: &Work, shared: &Shared) {
    let stopped = || lock(&shared.state).stop;
    // Tails first: until they are folded in, every probe reads two tables.
    let started = Instant::now();
    let mut folded = 0;
    loop {
        if stopped() {
            return;
        }
        let more = work
            .memory
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .fold_one();
        if !more {
            break;
        }
        folded += 1;
        // The lock is free between two tables: the decisions that waited for it take it
        // now. Taken again at once, it went back to this thread before they woke, and at
        // 10 M documents the first decision after an open from a snapshot waited for every
        // table's fold (1-4 s).
        std::thread::sleep(FOLD_PAUSE);
    }
    if folded > 0 {
        tracing::debug!(
            "{}: the tails of {folded} tables folded in, in {:.2} s",
            work.dir.display(),
            started.elapsed().as_secs_f64()
        );
    }
    {
        let mut state = lock(&shared.state);
        state.folding = false;
        shared.wake.notify_all();
    }
    if work.background {
        yield_to_decisions();
    }
    let mut rest_until: Option<Instant> = None;
    loop {
        if !wait_for(shared, |s| &mut s.checkpointed) {
            return;
        }
        let Some(far_behind) = due(work, shared) else {
            continue;
        };
        // While the thread rests, whole copies wait: an update writes deltas alone.
        let resting = rest_until.is_some_and(|t| Instant::now() < t);
        let started = Instant::now();
        let took = match write(work, shared, &stopped, !resting || far_behind) {
            Ok(Some(took)) => took,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(
                    "{}: writing a snapshot in the background failed ({e}); tried again later",
                    work.dir.display()
                );
                started.elapsed()
            }
        };
        // The rest is counted from the end of the write, and the wait for the checkpoints
        // that put it in place counts as rest. An update of deltas alone starts none, and
        // leaves the rest of a whole copy before it running.
        if !took.is_zero() {
            rest_until = Some(started + took * (REST_PER_WRITE + 1));
        }
    }
}

/// Waits until the flag that `flag` picks out of the state is set, and clears it; returns
/// false if the index stops first.
fn wait_for(shared: &Shared, flag: fn(&mut State) -> &mut bool) -> bool {
    let state = lock(&shared.state);
    let mut state = shared
        .wake
        .wait_while(state, |s| !*flag(s) && !s.stop)
        .unwrap_or_else(|p| p.into_inner());
    if state.stop {
        return false;
    }
    *flag(&mut state) = false;
    true
}

/// The growth thread: after each checkpoint, backs the memory of each table whose growth
/// is near (see `Bucketed::next_growth`) outside the lock: the pages past the lines of a
/// table that grows in place, or new lines zeroed and handed to the table under a short
/// hold of it. The insert that grows the table then fills them instead of faulting in
/// fresh pages one by one.
fn prepare_growths(memory: &RwLock<Memory>, shared: &Shared) {
    // Only what the inserting thread leaves: on busy cores the insert that grows the tables
    // faults in what was not made ready, as it would without this thread.
    yield_to_decisions();
    loop {
        if !wait_for(shared, |s| &mut s.growth_check) {
            return;
        }
        let near = memory
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .growths_near();
        for (t, lines) in near {
            if lock(&shared.state).stop {
                return;
            }
            // A table that grows in place: its map's pages past the lines are backed,
            // outside the lock (the inserts go on meanwhile, and may grow into them).
            let room = memory
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .room_for(t, lines);
            if let Some(room) = room {
                if room.is_some_and(|room| room.back()) {
                    memory
                        .write()
                        .unwrap_or_else(|p| p.into_inner())
                        .backed_to(t, lines);
                }
                continue;
            }
            let mut column = fresh_lines(lines);
            column.populate();
            // Lines the table no longer wants are freed after the lock is released.
            let refused = memory
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .offer(t, column);
            drop(refused);
        }
    }
}

/// Lowers this thread's scheduling priority (its nice value raised by `SNAPSHOT_NICE`,
/// Linux only): a snapshot only ever saves time at a later open, and lines made ready only
/// save the inserting thread time, so on a machine whose cores are busy they take what
/// the decisions and sled's writes leave. Folding tails is done before, at the normal
/// priority, since probes read two tables until it is done.
fn yield_to_decisions() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid, getpriority and setpriority take and return plain integers; on
        // Linux PRIO_PROCESS with a thread id reads and sets that thread's nice value alone.
        // getpriority's -1 is also a nice value, so errno is what tells a failure.
        let done = unsafe {
            let tid = libc::gettid() as libc::id_t;
            *libc::__errno_location() = 0;
            let now = libc::getpriority(libc::PRIO_PROCESS, tid);
            if now == -1 && *libc::__errno_location() != 0 {
                -1
            } else {
                libc::setpriority(libc::PRIO_PROCESS, tid, (now + SNAPSHOT_NICE).min(19))
            }
        };
        if done != 0 {
            tracing::debug!(
                "the index's upkeep thread keeps its priority: {}",
                std::io::Error::last_os_error()
            );
        }
    }
}

/// Whether a snapshot is due: enough documents, and enough stored since the last one
/// ([`TAIL_SHARE`] of it); then whether those reach [`TAIL_SHARE_WHILE_RESTING`] of it, so
/// that whole copies are written even while the thread rests.
fn due(work: &Work, shared: &Shared) -> Option<bool> {
    let (count, live) = {
        let memory = work.memory.read().unwrap_or_else(|p| p.into_inner());
        (memory.count(), memory.docs.len() as u64)
    };
    let state = lock(&shared.state);
    if !work.background || live == 0 || live < state.snapshot_min {
        return None;
    }
    let last = state.installed.map_or(0, |e| e.0);
    let since = count.saturating_sub(last);
    (since >= (last / TAIL_SHARE).max(1))
        .then_some(since >= (last / TAIL_SHARE_WHILE_RESTING).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decision_that_waits_for_a_fold_goes_before_the_next_table() {
        let plan = Plan::with_blocks(3, 6).unwrap();
        let memory = super::super::tables::tests::memory_with_tails(&plan, 1_000, 150_000);
        let memory = Arc::new(RwLock::new(memory));
        let dir = tempfile::tempdir().unwrap();
        let mut upkeep = Upkeep::start(Work {
            dir: dir.path().to_path_buf(),
            plan,
            memory: memory.clone(),
            background: false,
            durable: 0,
            installed: None,
        })
        .unwrap();
        // Until a table's fold holds the lock; then a decision waits for it.
        loop {
            match memory.try_read() {
                Err(std::sync::TryLockError::WouldBlock) => break,
                Ok(memory) => assert!(memory.has_tails(), "folded before it was seen"),
                Err(e) => panic!("{e}"),
            }
            std::thread::yield_now();
        }
        // The fold leaves the lock free after that table: the decision takes it while
        // other tables still have their tails, not after the last one.
        let tails_left = memory.read().unwrap().has_tails();
        upkeep.stop();
        assert!(tails_left);
    }
}
