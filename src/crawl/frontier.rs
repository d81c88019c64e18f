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

use std::collections::{BTreeMap, HashMap};

use url::Url;

/// Where a task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskState {
    /// Waiting to be fetched.
    Pending,
    /// Handed to a fetcher.
    InFlight,
    /// Finished (stored, duplicate, skipped or not HTML).
    Done,
    /// Failed after its last attempt.
    Failed,
}

impl TaskState {
    fn code(self) -> u8 {
        match self {
            TaskState::Pending => 0,
            TaskState::InFlight => 1,
            TaskState::Done => 2,
            TaskState::Failed => 3,
        }
    }

    fn from_code(code: u8) -> Option<TaskState> {
        Some(match code {
            0 => TaskState::Pending,
            1 => TaskState::InFlight,
            2 => TaskState::Done,
            3 => TaskState::Failed,
            _ => return None,
        })
    }
}

/// A URL to fetch.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// The canonical URL.
    pub url: Url,
    /// Hops from a seed.
    pub depth: u32,
    /// Higher is fetched first.
    pub priority: u32,
    /// Attempts made so far.
    pub attempts: u32,
    /// Discovery order.
    pub seq: u64,
}

impl Task {
    fn decode(url: &str, bytes: &[u8]) -> Option<(Task, TaskState)> {
        if bytes.len() != 21 {
            return None;
        }
        let word = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap_or_default());
        Some((
            Task {
                url: Url::parse(url).ok()?,
                depth: word(1),
                priority: word(5),
                attempts: word(9),
                seq: u64::from_be_bytes(bytes[13..21].try_into().ok()?),
            },
            TaskState::from_code(bytes[0])?,
        ))
    }
}

/// Counts of tasks by state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct FrontierCounts {
    /// Waiting.
    pub pending: u64,
    /// Being fetched.
    pub in_flight: u64,
    /// Finished.
    pub done: u64,
    /// Failed.
    pub failed: u64,
}

/// Queue key: highest priority first, then discovery order.
type QueueKey = (std::cmp::Reverse<u32>, u64);

/// A URL as a map key that can be looked up by its text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct UrlKey(Url);

impl std::hash::Hash for UrlKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.as_str().hash(state);
    }
}

impl std::borrow::Borrow<str> for UrlKey {
    fn borrow(&self) -> &str {
        self.0.as_str()
    }
}

/// What a checkpoint writes for a task: everything but its URL, which is the key.
#[derive(Debug, Clone, Copy)]
struct Change {
    depth: u32,
    priority: u32,
    attempts: u32,
    seq: u64,
    state: TaskState,
}

impl Change {
    fn of(task: &Task, state: TaskState) -> Change {
        Change {
            depth: task.depth,
            priority: task.priority,
            attempts: task.attempts,
            seq: task.seq,
            state,
        }
    }

    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(21);
        out.push(self.state.code());
        out.extend_from_slice(&self.depth.to_be_bytes());
        out.extend_from_slice(&self.priority.to_be_bytes());
        out.extend_from_slice(&self.attempts.to_be_bytes());
        out.extend_from_slice(&self.seq.to_be_bytes());
        out
    }

    fn task(&self, url: Url) -> Task {
        Task {
            url,
            depth: self.depth,
            priority: self.priority,
            attempts: self.attempts,
            seq: self.seq,
        }
    }
}

/// A checkpoint's log is written in parts of at most this many bytes (unless one URL is
/// longer), which keeps each part under the size sled stores as a file of its own.
pub const LOG_PART_BYTES: usize = 64 * 1024;

/// The number of URLs the change log may hold before a compaction folds it into the
/// per-URL entries.
pub const COMPACT_AFTER: usize = 1 << 17;

/// URLs per sled batch of a compaction (a few tens of milliseconds each).
pub const COMPACTION_BATCH: usize = 4096;

/// The change log sorts before every URL: its keys start with this byte.
const LOG_PREFIX: u8 = 0;

fn log_key(seq: u64, part: u32) -> [u8; 13] {
    let mut key = [LOG_PREFIX; 13];
    key[1..9].copy_from_slice(&seq.to_be_bytes());
    key[9..].copy_from_slice(&part.to_be_bytes());
    key
}

/// Appends one URL's change to a log part: the URL's length (4 bytes), the URL, the change.
fn encode_entry(out: &mut Vec<u8>, url: &str, change: &Change) {
    out.extend_from_slice(&(url.len() as u32).to_be_bytes());
    out.extend_from_slice(url.as_bytes());
    out.extend_from_slice(&change.encode());
}

/// The entries of one log part, in order; `None` when the part is cut short or garbled.
fn decode_log_part(mut bytes: &[u8]) -> Option<Vec<(Task, TaskState)>> {
    let mut entries = Vec::new();
    while !bytes.is_empty() {
        let len = u32::from_be_bytes(bytes.get(..4)?.try_into().ok()?) as usize;
        let url = std::str::from_utf8(bytes.get(4..4 + len)?).ok()?;
        let change = bytes.get(4 + len..4 + len + 21)?;
        entries.push(Task::decode(url, change)?);
        bytes = &bytes[4 + len + 21..];
    }
    Some(entries)
}

/// A compaction running on its own thread, and the changes it writes (still consulted
/// until it has written them).
struct Compaction {
    changes: std::sync::Arc<HashMap<UrlKey, Change>>,
    thread: std::thread::JoinHandle<Result<(), String>>,
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
    pub fn each_url(&self, mut f: impl FnMut(&str) -> Result<(), String>) -> Result<(), String> {
        for UrlKey(url) in self.logged.keys().chain(self.changes.keys()) {
            f(url.as_str())?;
        }
        for item in self.tree.range([LOG_PREFIX + 1]..) {
            let (key, _) = item.map_err(|e| format!("frontier: {e}"))?;
            let url = std::str::from_utf8(&key)
                .map_err(|_| "frontier: a key is not UTF-8".to_string())?;
            if !self.logged.contains_key(url) && !self.changes.contains_key(url) {
                f(url)?;
            }
        }
        Ok(())
    }

    /// Opens the frontier stored in `tree` as of checkpoint `committed` (the number of the
    /// crawl's last checkpoint record; 0 before the first): what was pending or in flight
    /// then is queued again.
    pub fn open(tree: sled::Tree, committed: u64) -> Result<Frontier, String> {
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
            let (key, value) = item.map_err(|e| format!("frontier: {e}"))?;
            let (seq, part) = match key.len() {
                13 => (
                    u64::from_be_bytes(key[1..9].try_into().unwrap_or_default()),
                    u32::from_be_bytes(key[9..].try_into().unwrap_or_default()),
                ),
                _ => return Err("frontier: a change log key is malformed".into()),
            };
            if seq > committed {
                frontier.stale_keys.push(key);
                continue;
            }
            let entries = decode_log_part(&value).ok_or_else(|| {
                format!("frontier: part {part} of checkpoint {seq}'s change log is unreadable")
            })?;
            for (task, state) in entries {
                frontier
                    .logged
                    .insert(UrlKey(task.url.clone()), Change::of(&task, state));
            }
            frontier.log_keys.push(key);
        }
        for item in frontier.tree.range([LOG_PREFIX + 1]..) {
            let (key, value) = item.map_err(|e| format!("frontier: {e}"))?;
            let url = std::str::from_utf8(&key)
                .map_err(|_| "frontier: a key is not UTF-8".to_string())?;
            if frontier.logged.contains_key(url) {
                continue;
            }
            let (task, state) = Task::decode(url, &value)
                .ok_or_else(|| format!("frontier: the entry of {url} is unreadable"))?;
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
    fn lookup(&self, url: &Url) -> Result<Option<(Task, TaskState)>, String> {
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
        match self
            .tree
            .get(url.as_str())
            .map_err(|e| format!("frontier: {e}"))?
        {
            Some(v) => Ok(Task::decode(url.as_str(), &v)),
            None => Ok(None),
        }
    }

    /// Queues `url` unless the frontier has seen it; returns whether it was queued.
    pub fn push(&mut self, url: Url, depth: u32, priority: u32) -> Result<bool, String> {
        if self.lookup(&url)?.is_some() {
            return Ok(false);
        }
        let task = Task {
            url,
            depth,
            priority,
            attempts: 0,
            seq: self.next_seq,
        };
        self.next_seq += 1;
        self.record(&task, TaskState::Pending);
        self.counts.pending += 1;
        self.queue(task);
        Ok(true)
    }

    /// Records `url` as done without fetching it (the target of a redirect already
    /// fetched): unknown or pending, it becomes done (a pending task leaves the queue); in
    /// flight or finished, nothing changes. Returns whether it changed.
    pub fn settle(&mut self, url: Url, depth: u32) -> Result<bool, String> {
        let known = self.lookup(&url)?;
        let task = match known {
            None => {
                let task = Task {
                    url,
                    depth,
                    priority: 0,
                    attempts: 0,
                    seq: self.next_seq,
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
    pub fn checkpoint(&mut self, seq: u64) -> Result<(), String> {
        let mut batch = sled::Batch::default();
        for key in self.stale_keys.drain(..) {
            batch.remove(key);
        }
        let mut parts = Vec::new();
        let mut part = Vec::with_capacity(LOG_PART_BYTES);
        for (UrlKey(url), change) in &self.changes {
            if !part.is_empty() && part.len() + 4 + url.as_str().len() + 21 > LOG_PART_BYTES {
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
        self.tree
            .apply_batch(batch)
            .map_err(|e| format!("frontier: {e}"))?;
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
    pub fn compact(&mut self) -> Result<(), String> {
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
                let apply = |batch| {
                    tree.apply_batch(batch)
                        .map_err(|e| format!("frontier: compaction: {e}"))
                };
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
            .map_err(|e| format!("frontier: cannot start the compaction: {e}"))?;
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
    pub fn finish_compaction(&mut self) -> Result<(), String> {
        match self.compaction.take() {
            Some(running) => running
                .thread
                .join()
                .map_err(|_| "frontier: the compaction thread panicked".to_string())?,
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
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn host_key_is_host_and_non_default_port() {
        let key = |s: &str| host_key(&url(s)).to_string();
        assert_eq!(key("http://Example.COM/a"), "example.com");
        assert_eq!(key("https://example.com:443/a"), "example.com");
        assert_eq!(
            key("http://user:pw@example.com:8080/a?b"),
            "example.com:8080"
        );
        assert_eq!(key("http://127.0.0.1:3000/"), "127.0.0.1:3000");
        assert_eq!(key("http://[::1]:3000/"), "[::1]:3000");
        assert_eq!(key("http://[::1]/"), "[::1]");
    }

    #[test]
    fn order_dedup_and_resume() {
        let dir = tempfile::tempdir().unwrap();
        let db = sled::open(dir.path()).unwrap();
        let mut f = Frontier::open(db.open_tree("f").unwrap(), 0).unwrap();
        assert!(f.push(url("http://a.test/1"), 0, 5).unwrap());
        assert!(f.push(url("http://a.test/2"), 1, 9).unwrap());
        assert!(f.push(url("http://a.test/3"), 1, 9).unwrap());
        assert!(!f.push(url("http://a.test/1"), 3, 1).unwrap());
        assert!(f.push(url("http://b.test/1"), 0, 1).unwrap());
        let first = f.pop("a.test").unwrap();
        assert_eq!(first.url.path(), "/2");
        let second = f.pop("a.test").unwrap();
        assert_eq!(second.url.path(), "/3");
        f.finish(&first, false);
        f.checkpoint(1).unwrap();
        // Changes after the checkpoint are not kept.
        f.finish(&second, true);
        assert!(f.push(url("http://c.test/"), 0, 0).unwrap());
        drop(f);

        let mut f = Frontier::open(db.open_tree("f").unwrap(), 1).unwrap();
        let counts = f.counts();
        assert_eq!(
            (counts.pending, counts.in_flight, counts.done, counts.failed),
            (3, 0, 1, 0)
        );
        assert!(
            !f.push(url("http://a.test/2"), 0, 0).unwrap(),
            "done stays done"
        );
        // The task that was in flight at the checkpoint is queued again.
        let again = f.pop("a.test").unwrap();
        assert_eq!(again.url.path(), "/3");
        assert!(f.ready_hosts().any(|(h, _)| h == "b.test"));
        assert!(!f.ready_hosts().any(|(h, _)| h == "c.test"));
    }

    /// The states a model of the frontier gives for `live`, as the counts say them.
    fn counts_of(states: &HashMap<String, TaskState>) -> (u64, u64, u64, u64) {
        let n =
            |wanted: &[TaskState]| states.values().filter(|s| wanted.contains(s)).count() as u64;
        (
            n(&[TaskState::Pending]),
            n(&[TaskState::InFlight]),
            n(&[TaskState::Done]),
            n(&[TaskState::Failed]),
        )
    }

    /// An empty tree in a new database (the directory and database live as long as it).
    fn fresh_tree() -> (tempfile::TempDir, sled::Db, sled::Tree) {
        let dir = tempfile::tempdir().unwrap();
        let db = sled::open(dir.path()).unwrap();
        let tree = db.open_tree("f").unwrap();
        (dir, db, tree)
    }

    fn log_parts(tree: &sled::Tree) -> Vec<(u64, u32)> {
        tree.scan_prefix([LOG_PREFIX])
            .map(|item| {
                let (key, _) = item.unwrap();
                (
                    u64::from_be_bytes(key[1..9].try_into().unwrap()),
                    u32::from_be_bytes(key[9..].try_into().unwrap()),
                )
            })
            .collect()
    }

    #[test]
    fn the_log_of_a_checkpoint_that_never_committed_is_ignored_and_replaced() {
        let (_dir, _db, tree) = fresh_tree();
        let mut f = Frontier::open(tree.clone(), 0).unwrap();
        assert!(f.push(url("http://a.test/committed"), 0, 0).unwrap());
        f.checkpoint(1).unwrap();
        // Checkpoint 2 writes a log of several parts, but its record never commits.
        let long = "x".repeat(200);
        for i in 0..1000 {
            assert!(
                f.push(url(&format!("http://a.test/{long}/{i}")), 1, 0)
                    .unwrap()
            );
        }
        f.checkpoint(2).unwrap();
        assert!(log_parts(&tree).iter().filter(|(seq, _)| *seq == 2).count() > 2);
        drop(f);

        let mut f = Frontier::open(tree.clone(), 1).unwrap();
        assert_eq!(f.counts().pending, 1, "only checkpoint 1 counts");
        assert!(
            f.push(url(&format!("http://a.test/{long}/7")), 1, 0)
                .unwrap()
        );
        // The next checkpoint takes number 2 again; the old parts go in the same batch.
        f.checkpoint(2).unwrap();
        assert_eq!(log_parts(&tree), vec![(1, 0), (2, 0)]);
        drop(f);

        let f = Frontier::open(tree.clone(), 2).unwrap();
        assert_eq!(f.counts().pending, 2);
    }

    #[test]
    fn a_corrupt_log_part_is_an_error_naming_it() {
        let (_dir, _db, tree) = fresh_tree();
        let mut f = Frontier::open(tree.clone(), 0).unwrap();
        assert!(f.push(url("http://a.test/1"), 0, 0).unwrap());
        f.checkpoint(1).unwrap();
        drop(f);
        let key = log_key(1, 0);
        let mut part = tree.get(key).unwrap().unwrap().to_vec();
        part.truncate(part.len() - 3);
        tree.insert(key, part).unwrap();
        let error = Frontier::open(tree, 1).err().unwrap();
        assert_eq!(
            error,
            "frontier: part 0 of checkpoint 1's change log is unreadable"
        );
    }

    /// Random work, checkpoints, compactions and crashes (a reopen at the last committed
    /// checkpoint, with or without a checkpoint that wrote its log but never committed),
    /// checked against a model: after each reopen the frontier holds exactly the states of
    /// the last committed checkpoint, with what was in flight pending again.
    #[test]
    fn reopening_gives_the_last_committed_checkpoint_through_compactions_and_crashes() {
        let (_dir, _db, tree) = fresh_tree();
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n
        };
        let reopen = |committed: u64| {
            let mut f = Frontier::open(tree.clone(), committed).unwrap();
            f.compact_after = 40;
            f.compaction_batch = 7;
            f
        };
        let mut committed = 0u64;
        let mut f = reopen(committed);
        let mut live: HashMap<String, TaskState> = HashMap::new();
        let mut saved = live.clone();
        let mut in_flight: Vec<Task> = Vec::new();
        let mut compactions = 0;
        for _ in 0..4000 {
            match next(100) {
                0..=44 => {
                    let u = format!("http://h{}.test/{}", next(3), next(400));
                    let new = !live.contains_key(&u);
                    assert_eq!(f.push(url(&u), 0, next(3) as u32).unwrap(), new, "{u}");
                    if new {
                        live.insert(u, TaskState::Pending);
                    }
                }
                45..=69 => {
                    let host = format!("h{}.test", next(3));
                    if let Some(task) = f.pop(&host) {
                        live.insert(task.url.to_string(), TaskState::InFlight);
                        in_flight.push(task);
                    }
                }
                70..=89 if !in_flight.is_empty() => {
                    let task = in_flight.swap_remove(next(in_flight.len() as u64) as usize);
                    let state = match next(3) {
                        0 => {
                            f.retry(task.clone());
                            TaskState::Pending
                        }
                        1 => {
                            f.finish(&task, true);
                            TaskState::Failed
                        }
                        _ => {
                            f.finish(&task, false);
                            TaskState::Done
                        }
                    };
                    live.insert(task.url.to_string(), state);
                }
                90..=95 => {
                    committed += 1;
                    f.checkpoint(committed).unwrap();
                    saved = live.clone();
                    if f.compaction.is_some() {
                        compactions += 1;
                    }
                    f.compact().unwrap();
                }
                _ => {
                    if next(2) == 0 {
                        // A checkpoint that wrote its log, then crashed before its record.
                        f.checkpoint(committed + 1).unwrap();
                    }
                    drop(f);
                    f = reopen(committed);
                    in_flight.clear();
                    live = saved
                        .iter()
                        .map(|(u, s)| {
                            let s = if *s == TaskState::InFlight {
                                TaskState::Pending
                            } else {
                                *s
                            };
                            (u.clone(), s)
                        })
                        .collect();
                    let c = f.counts();
                    assert_eq!((c.pending, c.in_flight, c.done, c.failed), counts_of(&live));
                    for (u, state) in &live {
                        assert_eq!(
                            f.lookup(&url(u)).unwrap().map(|(_, s)| s),
                            Some(*state),
                            "{u}"
                        );
                    }
                }
            }
        }
        assert!(compactions > 3, "the test compacted {compactions} times");
        assert!(
            tree.range([LOG_PREFIX + 1]..).count() > 0,
            "compactions wrote per-URL entries"
        );
    }
}
