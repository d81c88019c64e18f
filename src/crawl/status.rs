//! The status file: what a crawl says of itself at each checkpoint, for readers that cannot
//! open its database (it is locked while the crawl runs, and sled cannot open a copy on a
//! read-only file system).
//!
//! After each checkpoint commits, the crawl replaces `status.json` in its state directory
//! (written beside it, synced, then renamed over it): the checkpoint's record, the frontier
//! as of it, the process, and this run's times. It repeats what the checkpoint committed,
//! so it is never ahead of the database; a crawl killed between its commit and the file's
//! rename leaves the previous one, one checkpoint behind, which its `checkpoint.seq` says.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::frontier::FrontierCounts;
use super::record::CheckpointRecord;
use crate::metrics::Quantiles;

/// Why a status file could not be read ([`CrawlStatus::read`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StatusError {
    /// The file is there and could not be read.
    #[error("{}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What reading it said.
        source: std::io::Error,
    },
    /// The file is not a status this build reads.
    #[error("{}: unreadable ({source})", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// What parsing it said.
        source: serde_json::Error,
    },
}

/// The status file's name in a state directory.
pub const STATUS_FILE: &str = "status.json";

/// The run that wrote a status file ([`STATUS_FILE`] in a state directory). After each
/// checkpoint commits, the crawl replaces it whole (written beside it, synced, renamed):
/// it repeats what the checkpoint committed, never ahead of the database; a crawl killed
/// between its commit and the rename leaves the previous one, whose `checkpoint.seq` says
/// it is one behind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CrawlStatus {
    /// The crawl's process.
    pub pid: u32,
    /// When the file was written (milliseconds since the Unix epoch).
    pub written_at_ms: u64,
    /// When this run started.
    pub run_started_at_ms: u64,
    /// Whether the run had ended when it wrote this (its last checkpoint).
    pub finished: bool,
    /// The checkpoint's record: totals over every run.
    pub checkpoint: CheckpointRecord,
    /// The frontier as of the checkpoint.
    pub frontier: FrontierCounts,
    /// Responses this run received.
    pub fetched_this_run: u64,
    /// This run's request times.
    pub fetch_seconds: Quantiles,
    /// This run's extraction times.
    pub extraction_seconds: Quantiles,
    /// This run's decision times.
    pub decision_seconds: Quantiles,
}

impl CrawlStatus {
    /// Writes it into `state_dir`, replacing the last one whole.
    pub(super) fn write(&self, state_dir: &Path) -> std::io::Result<()> {
        let bytes = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        crate::urls::seen::write_atomically(&state_dir.join(STATUS_FILE), &bytes)
    }

    /// The status file of `state_dir`: `Ok(None)` when there is none (a crawl of an
    /// earlier build, or one that has taken no checkpoint yet), an error naming the file
    /// when it cannot be read.
    pub fn read(state_dir: &Path) -> Result<Option<CrawlStatus>, StatusError> {
        let path = state_dir.join(STATUS_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(StatusError::Read { path, source }),
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|source| StatusError::Unreadable { path, source })
    }

    /// Seconds since the file was written (by the clock of this machine).
    pub fn age_seconds(&self) -> f64 {
        let now = crate::metrics::epoch_ms(std::time::SystemTime::now());
        now.saturating_sub(self.written_at_ms) as f64 / 1000.0
    }
}
