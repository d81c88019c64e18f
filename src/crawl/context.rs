//! What every task of a crawl reads and none changes: the fetcher, the rules of scope and
//! robots.txt, and the settings the workers need.

use std::time::Duration;

use url::Url;

use super::fetch::Fetcher;
use super::robots::{Robots, RobotsCache, robots_for};
use super::scope::Scope;
use crate::urls::Canonicalizer;

pub(super) struct Context {
    pub(super) fetcher: Fetcher,
    pub(super) canonicalizer: Canonicalizer,
    pub(super) scope: Scope,
    pub(super) robots: RobotsCache,
    pub(super) respect_robots: bool,
    /// How long a host stays closed after its robots.txt failed.
    pub(super) robots_retry: Duration,
    pub(super) user_agent: String,
    /// Focus keywords (tokens); empty: breadth first.
    pub(super) keywords: Vec<String>,
    pub(super) max_depth: u32,
    /// `crawl.follow_links_of`.
    pub(super) follow_links_of: crate::config::FollowLinksOf,
    /// `per_host_delay_ms`.
    pub(super) base_delay: Duration,
    /// What the crawl shows of itself (`/metrics`, the status page, the status file).
    pub(super) metrics: std::sync::Arc<crate::metrics::Metrics>,
    /// The crawl's own counts in `metrics`.
    pub(super) counts: std::sync::Arc<crate::metrics::CrawlCounts>,
}

impl Context {
    /// The robots.txt rules of `url`'s host, fetched once per host (see [`robots_for`]).
    pub(super) async fn robots(&self, url: &Url) -> Robots {
        robots_for(
            &self.robots,
            &self.fetcher,
            &self.user_agent,
            self.robots_retry,
            url,
        )
        .await
    }
}

/// Runs `f`, which may block for a while (a checkpoint waits for the disk), without holding
/// up the other tasks of a multi-threaded runtime's worker.
pub(super) fn blocking<R>(f: impl FnOnce() -> R) -> R {
    match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(f),
        _ => f(),
    }
}
