//! What went wrong in the page stage.

use std::path::PathBuf;

use crate::index::IndexError;
use crate::urls::SeenError;

/// What went wrong in the page stage.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DedupError {
    /// The URL filter could not be opened, read or saved.
    #[error(transparent)]
    Seen(#[from] SeenError),
    /// The index could not be opened, read or written.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// A setting is out of range.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// A part of the state directory is missing, older than its ledger records, or belongs
    /// to another state directory (as its ledger records); nothing was opened or changed.
    #[error("state directory {}: {problem}", path.display())]
    Damaged {
        /// The directory.
        path: PathBuf,
        /// The parts and what is wrong with each, in one line.
        problem: String,
    },
    /// The state directory is another program's (a crawl's, a sidecar's, ...: its ledger
    /// says), and sharing it was not asked for; or it is shared with a crawl that runs there
    /// now. Nothing was opened or changed. One line naming both.
    #[error("{0}")]
    OtherKind(String),
    /// The state directory, or a file at its root (the ledger), could not be created or
    /// written.
    #[error("state directory {}: {source}", path.display())]
    StateDir {
        /// The directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}
