//! The focused crawler: the SSRF guard, the fetcher, the frontier and the crawl loop.

pub mod fetch;
pub mod frontier;
pub mod guard;
pub mod run;
pub mod warc;

pub use fetch::{FetchConfig, FetchError, Fetched, Fetcher, Hop};
pub use frontier::{Frontier, FrontierCounts, Task};
pub use run::{
    CheckpointRecord, CrawlError, CrawlOptions, CrawlSummary, Crawler, CrawlerBuilder, crawl,
};
