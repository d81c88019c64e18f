//! A task and its state, the frontier's counts, and the change a checkpoint logs for a URL.

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
    /// Handed, pending, to the worker that now owns its host (a crawl on several
    /// machines); queued again if its host comes back.
    Moved,
}

impl TaskState {
    pub(super) fn code(self) -> u8 {
        match self {
            TaskState::Pending => 0,
            TaskState::InFlight => 1,
            TaskState::Done => 2,
            TaskState::Failed => 3,
            TaskState::Moved => 4,
        }
    }

    pub(super) fn from_code(code: u8) -> Option<TaskState> {
        Some(match code {
            0 => TaskState::Pending,
            1 => TaskState::InFlight,
            2 => TaskState::Done,
            3 => TaskState::Failed,
            4 => TaskState::Moved,
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
    /// The version of the page stored the last time this URL was fetched, if any: what a
    /// recrawl (`url_filter.recrawl_after`) compares the new response with.
    pub last: Option<Version>,
}

/// A stored version of a page, as the frontier remembers it for the next recrawl.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Version {
    /// Its id in the index.
    pub doc: u64,
    /// The exact digest of its main text.
    pub digest: u128,
    /// When it was fetched (seconds since the Unix epoch).
    pub fetched_at: u64,
}

/// Bytes of an encoded task: state (1), depth, priority, attempts (4 each), seq (8); and,
/// when the state byte has [`WITH_VERSION`] set, the last version (doc 8, digest 16,
/// fetched at 8).
pub(super) const TASK_BYTES: usize = 21;
const VERSION_BYTES: usize = 32;
/// Flag in the state byte: a [`Version`] follows the task.
const WITH_VERSION: u8 = 0x80;

/// The length of the encoded task that starts with state byte `first`.
pub(super) fn encoded_len(first: u8) -> usize {
    if first & WITH_VERSION != 0 {
        TASK_BYTES + VERSION_BYTES
    } else {
        TASK_BYTES
    }
}

impl Task {
    pub(super) fn decode(url: &str, bytes: &[u8]) -> Option<(Task, TaskState)> {
        let first = *bytes.first()?;
        if bytes.len() != encoded_len(first) {
            return None;
        }
        let word = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap_or_default());
        let long = |i: usize| u64::from_be_bytes(bytes[i..i + 8].try_into().unwrap_or_default());
        let last = (first & WITH_VERSION != 0).then(|| Version {
            doc: long(TASK_BYTES),
            digest: u128::from_be_bytes(
                bytes[TASK_BYTES + 8..TASK_BYTES + 24]
                    .try_into()
                    .unwrap_or_default(),
            ),
            fetched_at: long(TASK_BYTES + 24),
        });
        Some((
            Task {
                url: Url::parse(url).ok()?,
                depth: word(1),
                priority: word(5),
                attempts: word(9),
                seq: long(13),
                last,
            },
            TaskState::from_code(first & !WITH_VERSION)?,
        ))
    }
}

/// Counts of tasks by state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FrontierCounts {
    /// Waiting.
    pub pending: u64,
    /// Being fetched.
    pub in_flight: u64,
    /// Finished.
    pub done: u64,
    /// Failed.
    pub failed: u64,
    /// Handed to another worker of the cluster.
    pub moved: u64,
}

/// Queue key: highest priority first, then discovery order.
pub(super) type QueueKey = (std::cmp::Reverse<u32>, u64);

/// A URL as a map key that can be looked up by its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct UrlKey(pub(super) Url);

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
pub(super) struct Change {
    pub(super) depth: u32,
    pub(super) priority: u32,
    pub(super) attempts: u32,
    pub(super) seq: u64,
    pub(super) state: TaskState,
    pub(super) last: Option<Version>,
}

impl Change {
    pub(super) fn of(task: &Task, state: TaskState) -> Change {
        Change {
            depth: task.depth,
            priority: task.priority,
            attempts: task.attempts,
            seq: task.seq,
            state,
            last: task.last,
        }
    }

    pub(super) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(TASK_BYTES + VERSION_BYTES);
        let flag = if self.last.is_some() { WITH_VERSION } else { 0 };
        out.push(self.state.code() | flag);
        out.extend_from_slice(&self.depth.to_be_bytes());
        out.extend_from_slice(&self.priority.to_be_bytes());
        out.extend_from_slice(&self.attempts.to_be_bytes());
        out.extend_from_slice(&self.seq.to_be_bytes());
        if let Some(v) = self.last {
            out.extend_from_slice(&v.doc.to_be_bytes());
            out.extend_from_slice(&v.digest.to_be_bytes());
            out.extend_from_slice(&v.fetched_at.to_be_bytes());
        }
        out
    }

    pub(super) fn task(&self, url: Url) -> Task {
        Task {
            url,
            depth: self.depth,
            priority: self.priority,
            attempts: self.attempts,
            seq: self.seq,
            last: self.last,
        }
    }
}
