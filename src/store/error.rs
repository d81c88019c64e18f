//! What went wrong with the crawl's files (the file sink).

use std::path::PathBuf;

/// What went wrong with the crawl's files. The crawler stops with it as
/// [`crate::crawl::CrawlError::Files`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// An output file could not be written.
    #[error("output {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// An output file is shorter than the last checkpoint recorded: it was truncated,
    /// replaced or deleted, or the outputs are not this state directory's. Resuming would
    /// leave a hole, so nothing is written.
    #[error(
        "output {}: {found} bytes, the last checkpoint wrote {expected}: the outputs do not match \
         the state directory (restore the file, point --out at this crawl's outputs, or start \
         a new state directory); nothing was written",
        path.display()
    )]
    Behind {
        /// The file.
        path: PathBuf,
        /// Its length on disk (0 when it is missing).
        found: u64,
        /// The length the checkpoint recorded.
        expected: u64,
    },
}
