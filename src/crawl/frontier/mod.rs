//! The frontier: every URL the crawl has queued, its state, and the order of what is left.
//!
//! One sled tree holds each task and its state (pending, in flight, done, failed), in two
//! forms:
//!
//! - **The change log.** Between checkpoints the changes live in memory;
//!   [`Frontier::checkpoint`] writes them as that checkpoint's log, in parts of up to
//!   [`LOG_PART_BYTES`] (one sled batch: a few milliseconds for tens of thousands of URLs,
//!   where one key per URL costs about 7 us each).
//! - **One entry per URL**, keyed by the canonical URL. Once the log holds
//!   [`COMPACT_AFTER`] URLs, [`Frontier::compact`] folds it into these entries, on a thread
//!   of its own while the crawl goes on, in batches of [`COMPACTION_BATCH`] URLs; the last
//!   batch removes the log.
//!
//! On open, the log is read in checkpoint order (a later state wins) and overrides the
//! per-URL entries; the log of a checkpoint that never committed (numbered above the
//! crawl's last checkpoint record) is ignored, and removed by the next checkpoint. So the
//! stored frontier is always the frontier of the last committed checkpoint, whether or not
//! a compaction finished: a compaction writes nothing the log did not already say.
//! Tasks that were pending or in flight then are queued again (a crash re-does the work
//! since the last checkpoint, never skips it).
//!
//! Order: the highest priority first, then the order of discovery. Tasks are grouped by
//! host so that the crawl loop can honour per-host limits and delays without one host's
//! backlog starving the others.

mod log;
mod task;

use std::collections::{BTreeMap, HashMap};

use url::Url;

use log::{LOG_PREFIX, decode_log_part, encode_entry, log_key};
use task::{Change, QueueKey, TASK_BYTES, UrlKey};

pub use log::{COMPACT_AFTER, COMPACTION_BATCH, LOG_PART_BYTES};
pub use task::{FrontierCounts, Task, TaskState, Version};

/// A compaction running on its own thread, and the changes it writes (still consulted
/// until it has written them).
struct Compaction {
    changes: std::sync::Arc<HashMap<UrlKey, Change>>,
    thread: std::thread::JoinHandle<Result<(), FrontierError>>,
}

/// What went wrong with the frontier: its database failed (a full disk, an I/O error), or
/// what it holds cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FrontierError {
    /// sled failed to read or write the frontier.
    #[error("frontier: {0}")]
    Store(#[source] crate::db::DatabaseError),
    /// An entry or a change log part is unreadable: the frontier is damaged.
    #[error("frontier: {0}")]
    Damaged(String),
    /// The compaction thread could not be started, or it panicked.
    #[error("frontier: compaction: {0}")]
    Compaction(String),
}

impl FrontierError {
    /// The error for a failure of sled.
    pub(crate) fn sled(e: sled::Error) -> FrontierError {
        FrontierError::Store(crate::db::error(e))
    }
}

/// The frontier. Not thread-safe by itself: the crawl loop owns it.
pub struct Frontier {
    tree: sled::Tree,
    /// State changes since the last checkpoint.
    changes: HashMap<UrlKey, Change>,
    /// State changes in the change log (the latest per URL), not yet compacted.
    logged: HashMap<UrlKey, Change>,
    /// The keys of the log's parts.
    log_keys: Vec<sled::IVec>,
    /// Keys of log parts that no checkpoint committed, removed by the next checkpoint.
    stale_keys: Vec<sled::IVec>,
    compaction: Option<Compaction>,
    compact_after: usize,
    compaction_batch: usize,
    /// Pending tasks by host.
    hosts: HashMap<String, BTreeMap<QueueKey, Task>>,
    counts: FrontierCounts,
    next_seq: u64,
}

impl Frontier {
    /// Calls `f` with every URL the frontier holds, in any state (what the crawl's URL
    /// filter recorded up to the frontier's checkpoint): the rebuild of a lost filter.
    pub fn each_url<E: From<FrontierError>>(
        &self,
        mut f: impl FnMut(&str) -> Result<(), E>,
    ) -> Result<(), E> {
        for UrlKey(url) in self.logged.keys().chain(self.changes.keys()) {
            f(url.as_str())?;
        }
        for item in self.tree.range([LOG_PREFIX + 1]..) {
            let (key, _) = item.map_err(FrontierError::sled)?;
            let url = std::str::from_utf8(&key)
                .map_err(|_| FrontierError::Damaged("a key is not UTF-8".into()))?;
            if !self.logged.contains_key(url) && !self.changes.contains_key(url) {
                f(url)?;
            }
        }
        Ok(())
    }

    /// Opens the frontier stored in `tree` as of checkpoint `committed` (the number of the
    /// crawl's last checkpoint record; 0 before the first): what was pending or in flight
    /// then is queued again.
    pub fn open(tree: sled::Tree, committed: u64) -> Result<Frontier, FrontierError> {
        let mut frontier = Frontier {
            tree,
            changes: HashMap::new(),
            logged: HashMap::new(),
            log_keys: Vec::new(),
            stale_keys: Vec::new(),
            compaction: None,
            compact_after: COMPACT_AFTER,
            compaction_batch: COMPACTION_BATCH,
            hosts: HashMap::new(),
            counts: FrontierCounts::default(),
            next_seq: 0,
        };
        for item in frontier.tree.scan_prefix([LOG_PREFIX]) {
            let (key, value) = item.map_err(FrontierError::sled)?;
            let (seq, part) = match key.len() {
                13 => (
                    u64::from_be_bytes(key[1..9].try_into().unwrap_or_default()),
                    u32::from_be_bytes(key[9..].try_into().unwrap_or_default()),
                ),
                _ => {
                    return Err(FrontierError::Damaged(
                        "a change log key is malformed".into(),
                    ));
                }
            };
            if seq > committed {
                frontier.stale_keys.push(key);
                continue;
            }
            let entries = decode_log_part(&value).ok_or_else(|| {
                FrontierError::Damaged(format!(
                    "part {part} of checkpoint {seq}'s change log is unreadable"
                ))
            })?;
            for (task, state) in entries {
                frontier
                    .logged
                    .insert(UrlKey(task.url.clone()), Change::of(&task, state));
            }
            frontier.log_keys.push(key);
        }
        for item in frontier.tree.range([LOG_PREFIX + 1]..) {
            let (key, value) = item.map_err(FrontierError::sled)?;
            let url = std::str::from_utf8(&key)
                .map_err(|_| FrontierError::Damaged("a key is not UTF-8".into()))?;
            if frontier.logged.contains_key(url) {
                continue;
            }
            let (task, state) = Task::decode(url, &value).ok_or_else(|| {
                FrontierError::Damaged(format!("the entry of {url} is unreadable"))
            })?;
            frontier.restore(task, state);
        }
        let logged: Vec<(Task, TaskState)> = frontier
            .logged
            .iter()
            .map(|(UrlKey(url), change)| (change.task(url.clone()), change.state))
            .collect();
        for (task, state) in logged {
            frontier.restore(task, state);
        }
        Ok(frontier)
    }

    /// Counts (and queues, when it is left to do) a task read on open.
    fn restore(&mut self, task: Task, state: TaskState) {
        self.next_seq = self.next_seq.max(task.seq + 1);
        match state {
            TaskState::Pending | TaskState::InFlight => {
                if state == TaskState::InFlight {
                    self.record(&task, TaskState::Pending);
                }
                self.counts.pending += 1;
                self.queue(task);
            }
            TaskState::Done => self.counts.done += 1,
            TaskState::Failed => self.counts.failed += 1,
            TaskState::Moved => self.counts.moved += 1,
        }
    }

    fn queue(&mut self, task: Task) {
        let key = (std::cmp::Reverse(task.priority), task.seq);
        match self.hosts.get_mut(host_key(&task.url)) {
            Some(queue) => {
                queue.insert(key, task);
            }
            None => {
                let host = host_key(&task.url).to_string();
                self.hosts.entry(host).or_default().insert(key, task);
            }
        }
    }

    /// Records `task` in `state` for the next checkpoint; the URL is copied only the first
    /// time it changes between two checkpoints.
    fn record(&mut self, task: &Task, state: TaskState) {
        let change = Change::of(task, state);
        match self.changes.get_mut(task.url.as_str()) {
            Some(slot) => *slot = change,
            None => {
                self.changes.insert(UrlKey(task.url.clone()), change);
            }
        }
    }

    /// The latest state of `url` and the task as it was then.
    fn lookup(&self, url: &Url) -> Result<Option<(Task, TaskState)>, FrontierError> {
        let in_memory = self
            .changes
            .get(url.as_str())
            .or_else(|| self.logged.get(url.as_str()))
            .or_else(|| {
                self.compaction
                    .as_ref()
                    .and_then(|c| c.changes.get(url.as_str()))
            });
        if let Some(change) = in_memory {
            return Ok(Some((change.task(url.clone()), change.state)));
        }
        match self.tree.get(url.as_str()).map_err(FrontierError::sled)? {
            Some(v) => Ok(Task::decode(url.as_str(), &v)),
            None => Ok(None),
        }
    }

    /// Queues `url` unless the frontier has seen it (a URL it handed to another worker
    /// counts as unseen); returns whether it was queued.
    pub fn push(&mut self, url: Url, depth: u32, priority: u32) -> Result<bool, FrontierError> {
        match self.lookup(&url)? {
            None => {}
            Some((_, TaskState::Moved)) => self.counts.moved -= 1,
            Some(_) => return Ok(false),
        }
        self.queue_new(url, depth, priority, None);
        Ok(true)
    }

    /// Queues `url` again if it failed (a seed the SSRF guard refused, given again in a run
    /// that lifts the guard); returns whether it was queued.
    pub fn requeue_failed(&mut self, url: &Url) -> Result<bool, FrontierError> {
        let Some((task, TaskState::Failed)) = self.lookup(url)? else {
            return Ok(false);
        };
        self.counts.failed -= 1;
        self.queue_new(task.url, task.depth, task.priority, task.last);
        Ok(true)
    }

    /// Queues a pending task for `url` under the next discovery number.
    fn queue_new(&mut self, url: Url, depth: u32, priority: u32, last: Option<Version>) {
        let task = Task {
            url,
            depth,
            priority,
            attempts: 0,
            seq: self.next_seq,
            last,
        };
        self.next_seq += 1;
        self.record(&task, TaskState::Pending);
        self.counts.pending += 1;
        self.queue(task);
    }

    /// Queues `url` again if it was fetched (or failed) before: a URL that came due for a
    /// recrawl. It keeps the version last stored for it. A URL whose stored version was
    /// fetched after `fetched_before` (seconds since the epoch) is not due yet and stays
    /// as it is; so does one pending or in flight. One never seen is queued as by
    /// [`Frontier::push`]. Returns whether it was queued.
    ///
    /// The URL filter decides when a URL is due; this check covers the one case where it
    /// forgets early: after a crash, the filter saved at the checkpoint before the last
    /// lacks the URLs that the last one's frontier finished.
    pub fn push_due(
        &mut self,
        url: Url,
        depth: u32,
        priority: u32,
        fetched_before: u64,
    ) -> Result<bool, FrontierError> {
        let known = self.lookup(&url)?;
        let recent = |task: &Task| task.last.is_some_and(|v| v.fetched_at > fetched_before);
        let last = match known {
            None => return self.push(url, depth, priority),
            Some((_, TaskState::Moved)) => return self.push(url, depth, priority),
            Some((_, TaskState::Pending | TaskState::InFlight)) => return Ok(false),
            Some((task, TaskState::Done | TaskState::Failed)) if recent(&task) => {
                return Ok(false);
            }
            Some((task, TaskState::Done)) => {
                self.counts.done -= 1;
                task.last
            }
            Some((task, TaskState::Failed)) => {
                self.counts.failed -= 1;
                task.last
            }
        };
        self.queue_new(url, depth, priority, last);
        Ok(true)
    }

    /// Records `url` as done without fetching it (the target of a redirect already
    /// fetched): unknown or pending, it becomes done (a pending task leaves the queue); in
    /// flight or finished, nothing changes. Returns whether it changed.
    pub fn settle(&mut self, url: Url, depth: u32) -> Result<bool, FrontierError> {
        let known = self.lookup(&url)?;
        let task = match known {
            None => {
                let task = Task {
                    url,
                    depth,
                    priority: 0,
                    attempts: 0,
                    seq: self.next_seq,
                    last: None,
                };
                self.next_seq += 1;
                task
            }
            Some((task, TaskState::Pending)) => {
                let host = host_key(&task.url);
                if let Some(queue) = self.hosts.get_mut(host) {
                    queue.remove(&(std::cmp::Reverse(task.priority), task.seq));
                    if queue.is_empty() {
                        self.hosts.remove(host);
                    }
                }
                self.counts.pending -= 1;
                task
            }
            Some(_) => return Ok(false),
        };
        self.counts.done += 1;
        self.record(&task, TaskState::Done);
        Ok(true)
    }

    /// Takes every pending task of `host` off the queue and records it as moved (handed to
    /// the worker that now owns the host).
    pub fn take_host(&mut self, host: &str) -> Vec<Task> {
        let Some(queue) = self.hosts.remove(host) else {
            return Vec::new();
        };
        let tasks: Vec<Task> = queue.into_values().collect();
        for task in &tasks {
            self.counts.pending -= 1;
            self.counts.moved += 1;
            self.record(task, TaskState::Moved);
        }
        tasks
    }

    /// Hosts with pending tasks.
    pub fn hosts(&self) -> impl Iterator<Item = &str> {
        self.hosts.keys().map(String::as_str)
    }

    /// The tasks whose state changed since the last checkpoint, with their state now.
    pub fn changed(&self) -> impl Iterator<Item = (Task, TaskState)> + '_ {
        self.changes
            .iter()
            .map(|(UrlKey(url), c)| (c.task(url.clone()), c.state))
    }

    /// Every pending task, host by host.
    pub fn pending(&self) -> impl Iterator<Item = &Task> {
        self.hosts.values().flat_map(|queue| queue.values())
    }

    /// Hosts with pending tasks, and the priority of each host's next task.
    pub fn ready_hosts(&self) -> impl Iterator<Item = (&str, u32)> {
        self.hosts.iter().filter_map(|(host, queue)| {
            queue
                .keys()
                .next()
                .map(|(std::cmp::Reverse(p), _)| (host.as_str(), *p))
        })
    }

    /// Takes the next task of `host` and marks it in flight.
    pub fn pop(&mut self, host: &str) -> Option<Task> {
        let queue = self.hosts.get_mut(host)?;
        let (_, task) = queue.pop_first()?;
        if queue.is_empty() {
            self.hosts.remove(host);
        }
        self.counts.pending -= 1;
        self.counts.in_flight += 1;
        self.record(&task, TaskState::InFlight);
        Some(task)
    }

    /// Puts an in-flight task back (a retry), with its attempt count raised.
    pub fn retry(&mut self, mut task: Task) {
        task.attempts += 1;
        self.counts.in_flight -= 1;
        self.counts.pending += 1;
        self.record(&task, TaskState::Pending);
        self.queue(task);
    }

    /// Records an in-flight task as finished (`failed` or not).
    pub fn finish(&mut self, task: &Task, failed: bool) {
        self.counts.in_flight -= 1;
        let state = if failed {
            self.counts.failed += 1;
            TaskState::Failed
        } else {
            self.counts.done += 1;
            TaskState::Done
        };
        self.record(task, state);
    }

    /// Tasks by state.
    pub fn counts(&self) -> FrontierCounts {
        self.counts
    }

    /// Writes the changes since the last checkpoint as the log of checkpoint `seq`, in one
    /// batch that also removes the log of checkpoints that never committed. The caller
    /// flushes sled, and commits the checkpoint, before it calls [`Frontier::compact`].
    pub fn checkpoint(&mut self, seq: u64) -> Result<(), FrontierError> {
        let mut batch = sled::Batch::default();
        for key in self.stale_keys.drain(..) {
            batch.remove(key);
        }
        let mut parts = Vec::new();
        let mut part = Vec::with_capacity(LOG_PART_BYTES);
        for (UrlKey(url), change) in &self.changes {
            if !part.is_empty() && part.len() + 4 + url.as_str().len() + TASK_BYTES > LOG_PART_BYTES
            {
                parts.push(std::mem::replace(
                    &mut part,
                    Vec::with_capacity(LOG_PART_BYTES),
                ));
            }
            encode_entry(&mut part, url.as_str(), change);
        }
        if !part.is_empty() {
            parts.push(part);
        }
        for (i, part) in parts.into_iter().enumerate() {
            let key = sled::IVec::from(&log_key(seq, i as u32)[..]);
            batch.insert(key.clone(), part);
            self.log_keys.push(key);
        }
        self.tree.apply_batch(batch).map_err(FrontierError::sled)?;
        if self.logged.is_empty() {
            self.logged = std::mem::take(&mut self.changes);
        } else {
            self.logged.extend(self.changes.drain());
        }
        Ok(())
    }

    /// Once the change log holds [`COMPACT_AFTER`] URLs, starts folding it into the per-URL
    /// entries on a thread of its own; call it after a checkpoint has committed. Reports the
    /// error of an earlier compaction that failed (the log it was to fold stays, so nothing
    /// is lost).
    pub fn compact(&mut self) -> Result<(), FrontierError> {
        if self
            .compaction
            .as_ref()
            .is_some_and(|c| c.thread.is_finished())
        {
            self.finish_compaction()?;
        }
        if self.compaction.is_some() || self.logged.len() < self.compact_after {
            return Ok(());
        }
        let changes = std::sync::Arc::new(std::mem::take(&mut self.logged));
        let keys = std::mem::take(&mut self.log_keys);
        let tree = self.tree.clone();
        let folded = changes.clone();
        let per_batch = self.compaction_batch;
        let thread = std::thread::Builder::new()
            .name("frontier-compaction".into())
            .spawn(move || {
                // sled holds one lock over every tree of the process while it applies a
                // batch, so the entries go in small batches that let the crawl's reads and
                // writes in between. Entries written before a crash are harmless: the log,
                // removed by the last batch only, says the same or later.
                let apply = |batch| tree.apply_batch(batch).map_err(FrontierError::sled);
                let mut batch = sled::Batch::default();
                for (i, (UrlKey(url), change)) in folded.iter().enumerate() {
                    batch.insert(url.as_str(), change.encode());
                    if (i + 1) % per_batch == 0 {
                        apply(std::mem::take(&mut batch))?;
                        // Some entries folded, the log not yet removed.
                        crate::faults::point("compaction-batch");
                    }
                }
                for key in keys {
                    batch.remove(key);
                }
                apply(batch)
            })
            .map_err(|e| FrontierError::Compaction(format!("cannot start: {e}")))?;
        self.compaction = Some(Compaction { changes, thread });
        Ok(())
    }

    /// Compacts once the log holds `after` URLs, in batches of `batch` (the defaults are
    /// [`COMPACT_AFTER`] and [`COMPACTION_BATCH`]).
    pub fn set_compaction(&mut self, after: usize, batch: usize) {
        self.compact_after = after.max(1);
        self.compaction_batch = batch.max(1);
    }

    /// Waits for a running compaction to end and reports its error.
    pub fn finish_compaction(&mut self) -> Result<(), FrontierError> {
        match self.compaction.take() {
            Some(running) => running
                .thread
                .join()
                .map_err(|_| FrontierError::Compaction("the thread panicked".into()))?,
            None => Ok(()),
        }
    }
}

impl Drop for Frontier {
    /// A compaction is left to finish: its thread holds the database open.
    fn drop(&mut self) {
        if let Err(e) = self.finish_compaction() {
            tracing::warn!("{e}");
        }
    }
}

/// The scheduling key of a URL: its host, and its port when it is not the scheme's default
/// (`example.com`, `127.0.0.1:8080`, `[::1]:8080`), as the URL writes them.
pub fn host_key(url: &Url) -> &str {
    &url[url::Position::BeforeHost..url::Position::AfterPort]
}

#[cfg(test)]
mod tests;
