//! The frontier: every URL the crawl has queued, its state, and the order of what is left.
//!
//! One sled tree, keyed by canonical URL, holds each task and its state (pending, in flight,
//! done, failed). Between checkpoints the changes live in memory; [`Frontier::checkpoint`]
//! writes them in one batch, so the stored frontier is always the frontier of some
//! checkpoint. On open, tasks that were pending or in flight at that checkpoint are queued
//! again (a crash re-does the work since the last checkpoint, never skips it).
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

/// The frontier. Not thread-safe by itself: the crawl loop owns it.
pub struct Frontier {
    tree: sled::Tree,
    /// State changes since the last checkpoint.
    changes: HashMap<UrlKey, Change>,
    /// Pending tasks by host.
    hosts: HashMap<String, BTreeMap<QueueKey, Task>>,
    counts: FrontierCounts,
    next_seq: u64,
}

impl Frontier {
    /// Opens the frontier stored in `tree`; what was pending or in flight is queued again.
    pub fn open(tree: sled::Tree) -> Result<Frontier, String> {
        let mut frontier = Frontier {
            tree,
            changes: HashMap::new(),
            hosts: HashMap::new(),
            counts: FrontierCounts::default(),
            next_seq: 0,
        };
        for item in frontier.tree.iter() {
            let (key, value) = item.map_err(|e| format!("frontier: {e}"))?;
            let url = std::str::from_utf8(&key)
                .map_err(|_| "frontier: a key is not UTF-8".to_string())?;
            let (task, state) = Task::decode(url, &value)
                .ok_or_else(|| format!("frontier: the entry of {url} is unreadable"))?;
            frontier.next_seq = frontier.next_seq.max(task.seq + 1);
            match state {
                TaskState::Pending | TaskState::InFlight => {
                    frontier.counts.pending += 1;
                    frontier.queue(task);
                }
                TaskState::Done => frontier.counts.done += 1,
                TaskState::Failed => frontier.counts.failed += 1,
            }
        }
        Ok(frontier)
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

    fn state_of(&self, url: &str) -> Result<Option<TaskState>, String> {
        if let Some(change) = self.changes.get(url) {
            return Ok(Some(change.state));
        }
        match self.tree.get(url).map_err(|e| format!("frontier: {e}"))? {
            Some(v) => Ok(Task::decode(url, &v).map(|(_, s)| s)),
            None => Ok(None),
        }
    }

    /// Queues `url` unless the frontier has seen it; returns whether it was queued.
    pub fn push(&mut self, url: Url, depth: u32, priority: u32) -> Result<bool, String> {
        if self.state_of(url.as_str())?.is_some() {
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
        let known = match self.changes.get(url.as_str()) {
            Some(change) => Some((change.task(url.clone()), change.state)),
            None => match self
                .tree
                .get(url.as_str())
                .map_err(|e| format!("frontier: {e}"))?
            {
                Some(v) => Task::decode(url.as_str(), &v),
                None => None,
            },
        };
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

    /// Writes the changes since the last checkpoint in one batch (the caller flushes sled).
    pub fn checkpoint(&mut self) -> Result<(), String> {
        let mut batch = sled::Batch::default();
        for (UrlKey(url), change) in self.changes.drain() {
            batch.insert(url.as_str(), change.encode());
        }
        self.tree
            .apply_batch(batch)
            .map_err(|e| format!("frontier: {e}"))
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
        let mut f = Frontier::open(db.open_tree("f").unwrap()).unwrap();
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
        f.checkpoint().unwrap();
        // Changes after the checkpoint are not kept.
        f.finish(&second, true);
        assert!(f.push(url("http://c.test/"), 0, 0).unwrap());
        drop(f);

        let mut f = Frontier::open(db.open_tree("f").unwrap()).unwrap();
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
}
