//! The focused crawler, built on the page stage ([`crate::Dedup`]).
//!
//! One page's way through it, file by file:
//!
//! ```text
//! crawler.rs   Crawler::builder(config).sink(..).run(stop): options, summary, errors
//! start.rs     the state directory opened and rolled back; the seeds queued
//! run.rs       the loop (`Crawl`): one task owns the state; dispatch, drain results,
//!              cluster ticks, checkpoints, finish
//! schedule.rs  politeness and dispatch: per-host delay and concurrency, retries waiting
//! frontier/    every URL queued and its state; the order of what is left
//! scope.rs     where the crawl may go, and which link first (focus keywords)
//! robots.rs    robots.txt per host
//! worker.rs    on a worker: robots.txt, fetch (fetch.rs, guard.rs), page::prepare
//! outcome.rs   back in the loop: retry or fail, Dedup::decide, the sinks
//!              (crate::store), links queued by focus score
//! record.rs    the checkpoint: sinks' positions, index size, frontier, one record
//! status.rs    the status file each checkpoint leaves for `stats` on a running crawl
//! ```

mod arenas;
#[cfg(feature = "cluster")]
mod cluster;
#[cfg(not(feature = "cluster"))]
#[path = "single.rs"]
mod cluster;
mod context;
mod crawler;
mod error;
mod fetch;
// Internal: public for the crate's own tests and benchmarks (feature `testing`), not part of
// the API.
#[cfg(feature = "testing")]
#[doc(hidden)]
pub mod frontier;
#[cfg(not(feature = "testing"))]
#[allow(dead_code)]
pub(crate) mod frontier;
pub(crate) mod guard;
mod options;
mod outcome;
mod record;
mod robots;
mod run;
mod schedule;
mod scope;
mod sinks;
mod start;
mod status;
mod worker;

pub use arenas::limit_malloc_arenas;
#[cfg(feature = "mimalloc")]
pub use arenas::tune_mimalloc;
pub use crawler::{Crawler, CrawlerBuilder, crawl};
pub use error::CrawlError;
pub use fetch::{ClientError, FetchConfig, FetchError, Fetched, Fetcher, Hop};
#[cfg(feature = "testing")]
#[doc(hidden)]
pub use frontier::{Frontier, Task};
pub use frontier::{FrontierCounts, FrontierError};
pub use options::{CHECKPOINT_EVERY, CrawlOptions, ROBOTS_RETRY};
pub use outcome::MAX_ATTEMPTS;
pub(crate) use record::CRAWL_DB;
pub use record::CrawlSummary;
pub(crate) use record::check_parts;
pub(crate) use record::each_frontier_url;
pub use record::{CheckpointRecord, Unsent, stats};
#[cfg(feature = "cluster")]
pub(crate) use record::{forget_unsent, give_back};
pub use status::{CrawlStatus, STATUS_FILE, StatusError};
