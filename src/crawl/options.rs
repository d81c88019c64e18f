//! Settings of a crawl run that are not part of the configuration file, and their defaults.

use std::time::Duration;

/// Time between checkpoints while crawling, by default.
pub const CHECKPOINT_EVERY: Duration = Duration::from_secs(5);

/// Settings of a crawl run that are not part of the configuration file: [`Default`], then
/// the `with_` setters.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CrawlOptions {
    /// Time between checkpoints; zero takes none on the way, only the one at the end (a
    /// kill -9 then loses the whole run).
    pub checkpoint_every: Duration,
    /// Show a progress bar (on a terminal); otherwise a log line at each checkpoint.
    pub progress_bar: bool,
    /// How long a host whose robots.txt answered 5xx (or not at all) stays closed before
    /// robots.txt is asked again.
    pub robots_retry: Duration,
    /// The frontier's change log is folded into per-URL entries once it holds this many
    /// URLs, and in batches of a sixteenth of it (`None`: the frontier's defaults; a crash
    /// test sets it low so that compactions run all the time).
    pub compact_after: Option<usize>,
    /// The clock the time windows are measured on (`None`: the system clock).
    pub clock: Option<std::sync::Arc<dyn crate::clock::Clock>>,
    /// Crawl in a state directory that another program keeps (a sidecar's, a `dedup`
    /// run's) instead of refusing it; the crawl keeps that program's documents (see
    /// [`crate::dedup::StateKind`]).
    pub share_state: bool,
    /// Serve `/metrics` (Prometheus), `/status.json` and the status page `/` on this
    /// address while the crawl runs (`crawl --metrics`); `None`: no listener.
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// How long the listener of `metrics_listen` stays up once the crawl is over, serving
    /// its final figures (for a last scrape); a stop ends it sooner. Zero: it closes with
    /// the crawl.
    pub metrics_linger: Duration,
}

impl Default for CrawlOptions {
    fn default() -> Self {
        CrawlOptions {
            checkpoint_every: CHECKPOINT_EVERY,
            progress_bar: false,
            robots_retry: ROBOTS_RETRY,
            compact_after: None,
            clock: None,
            share_state: false,
            metrics_listen: None,
            metrics_linger: Duration::ZERO,
        }
    }
}

impl CrawlOptions {
    /// Sets [`CrawlOptions::checkpoint_every`].
    pub fn with_checkpoint_every(mut self, every: Duration) -> CrawlOptions {
        self.checkpoint_every = every;
        self
    }

    /// Sets [`CrawlOptions::progress_bar`].
    pub fn with_progress_bar(mut self, on: bool) -> CrawlOptions {
        self.progress_bar = on;
        self
    }

    /// Sets [`CrawlOptions::robots_retry`].
    pub fn with_robots_retry(mut self, retry: Duration) -> CrawlOptions {
        self.robots_retry = retry;
        self
    }

    /// Sets [`CrawlOptions::compact_after`].
    pub fn with_compact_after(mut self, urls: Option<usize>) -> CrawlOptions {
        self.compact_after = urls;
        self
    }

    /// Measures the time windows on `clock` ([`CrawlOptions::clock`]).
    pub fn with_clock(mut self, clock: std::sync::Arc<dyn crate::clock::Clock>) -> CrawlOptions {
        self.clock = Some(clock);
        self
    }

    /// Sets [`CrawlOptions::share_state`].
    pub fn with_share_state(mut self, share: bool) -> CrawlOptions {
        self.share_state = share;
        self
    }

    /// Serves the metrics and status on `listen` while the crawl runs, and for `linger`
    /// after it ([`CrawlOptions::metrics_listen`], [`CrawlOptions::metrics_linger`]).
    pub fn with_metrics(
        mut self,
        listen: Option<std::net::SocketAddr>,
        linger: Duration,
    ) -> CrawlOptions {
        self.metrics_listen = listen;
        self.metrics_linger = linger;
        self
    }
}

/// How long a host stays closed after its robots.txt failed with 5xx or a timeout.
pub const ROBOTS_RETRY: Duration = Duration::from_secs(60);
