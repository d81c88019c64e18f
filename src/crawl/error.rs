//! What stops a crawl as a whole (a page's failure is recorded, not returned).

use std::path::PathBuf;

/// What went wrong with a crawl as a whole (a page's failure is recorded, not returned).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CrawlError {
    /// The page stage failed.
    #[error(transparent)]
    Dedup(#[from] crate::dedup::DedupError),
    /// The state directory is unusable.
    #[error("crawl state {}: {problem}", path.display())]
    State {
        /// The directory.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// The crawl's files (the JSONL outputs, the WARC files) could not be written, or do
    /// not match the state directory.
    #[error(transparent)]
    Files(#[from] crate::store::files::FileError),
    /// The frontier's database failed during the crawl (a full disk, an I/O error).
    #[error(transparent)]
    Frontier(#[from] super::frontier::FrontierError),
    /// A setting is unusable (a bad seed, a bad pattern).
    #[error("{0}")]
    Setup(String),
    /// The Redis Cluster of a crawl on several machines failed or refused this worker; the
    /// crawl stopped with a checkpoint, and what it had to send goes at its next start.
    #[cfg(feature = "cluster")]
    #[error("cluster: {0}")]
    Cluster(#[source] crate::cluster::filter::ClusterError),
    /// The crawl database (frontier, checkpoint records, what a worker of a cluster must
    /// send) could not be read or written: a full disk, an I/O error.
    #[error("crawl database: {0}")]
    Database(#[source] crate::db::DatabaseError),
    /// A sink given to the crawler failed ([`crate::store::PageSink`]).
    #[error("page sink: {0}")]
    Sink(crate::store::SinkError),
}

impl CrawlError {
    /// The error for a failure of the crawl database (sled).
    #[cfg_attr(not(feature = "cluster"), allow(dead_code))]
    pub(crate) fn database(e: sled::Error) -> CrawlError {
        CrawlError::Database(crate::db::error(e))
    }
}
