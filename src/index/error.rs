//! What goes wrong with the index, as one line naming the folder and the problem.

use std::path::{Path, PathBuf};

use super::{INDEX_FORMAT_VERSION, OLDEST_FINGERPRINT, OLDEST_INDEX_FORMAT};
use crate::fingerprint::FINGERPRINT_VERSION;

/// What went wrong with the index.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IndexError {
    /// sled failed.
    #[error("index {}: {source}", path.display())]
    Store {
        /// The index folder.
        path: PathBuf,
        /// The cause.
        source: crate::db::DatabaseError,
    },
    /// The stored index is damaged, or from another format or layout.
    #[error("index {}: {problem}", path.display())]
    Corrupt {
        /// The index folder.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// The stored index was written by a build with other index or fingerprint formats;
    /// nothing was changed.
    #[error(
        "index {}: written with index format {} and fingerprint version {}, this build reads index formats {OLDEST_INDEX_FORMAT} to {INDEX_FORMAT_VERSION} and fingerprint versions {OLDEST_FINGERPRINT} to {FINGERPRINT_VERSION}; start a new state directory (or run the pages through again), the old one is left as it was",
        path.display(), found.0, found.1
    )]
    Format {
        /// The index folder.
        path: PathBuf,
        /// (index format, fingerprint version) found.
        found: (u32, u32),
    },
    /// k or the layout is out of range.
    #[error("index layout: {0}")]
    Layout(String),
}

impl IndexError {
    /// Builders of the two errors about the index at `path`: sled's, and damage.
    pub(super) fn makers(
        path: &Path,
    ) -> (
        impl Fn(sled::Error) -> IndexError + Copy + '_,
        impl Fn(String) -> IndexError + Copy + '_,
    ) {
        (
            move |source| IndexError::Store {
                path: path.to_path_buf(),
                source: crate::db::error(source),
            },
            move |problem| IndexError::Corrupt {
                path: path.to_path_buf(),
                problem,
            },
        )
    }
}
