//! The crawler's public face: [`Crawler`] and its builder, the run options, the summary
//! and the errors.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use super::frontier::FrontierCounts;
use super::record::CheckpointRecord;
use super::run::run;
use crate::config::Config;
use crate::store::PageSink;

/// Attempts per URL for failures worth retrying (timeouts, network errors, 5xx, 429).
pub const MAX_ATTEMPTS: u32 = 3;
/// Time between checkpoints while crawling, by default.
pub const CHECKPOINT_EVERY: Duration = Duration::from_secs(5);

/// Settings of a crawl run that are not part of the configuration file.
#[derive(Debug, Clone)]
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
}

impl Default for CrawlOptions {
    fn default() -> Self {
        CrawlOptions {
            checkpoint_every: CHECKPOINT_EVERY,
            progress_bar: false,
            robots_retry: ROBOTS_RETRY,
            compact_after: None,
            clock: None,
        }
    }
}

/// How long a host stays closed after its robots.txt failed with 5xx or a timeout.
pub const ROBOTS_RETRY: Duration = Duration::from_secs(60);

/// What went wrong with a crawl as a whole (a page's failure is recorded, not returned).
#[derive(Debug, thiserror::Error)]
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
    #[error("cluster: {0}")]
    Cluster(String),
    /// A sink given to the crawler failed ([`crate::store::PageSink`]).
    #[error("page sink: {0}")]
    Sink(crate::store::SinkError),
}

/// What a finished (or stopped) crawl did.
#[derive(Debug, Clone, Serialize)]
pub struct CrawlSummary {
    /// Totals over every run on this state directory.
    pub totals: CheckpointRecord,
    /// The frontier at the end.
    pub frontier: FrontierCounts,
    /// Seconds this run took.
    pub seconds: f64,
    /// Responses received by this run alone (the totals count every run).
    pub fetched_this_run: u64,
    /// Whether the crawl stopped at `crawl.max_pages` with URLs still queued; the limit
    /// counts the pages of every run of the crawl, so running again fetches nothing more
    /// until it is raised.
    pub page_limit_reached: bool,
    /// Whether the crawl stopped early (Ctrl-C or the page limit).
    pub stopped_early: bool,
}

/// Runs a crawl with `config` (seeds, state and output directories, limits) until the
/// frontier is empty, the page limit is reached, or `stop` resolves (Ctrl-C): the same as
/// `Crawler::builder(config).run(stop)`.
pub async fn crawl(
    config: &Config,
    stop: impl std::future::Future<Output = ()>,
) -> Result<CrawlSummary, CrawlError> {
    Crawler::builder(config).run(stop).await
}

/// The crawler, built with [`Crawler::builder`]:
///
/// ```no_run
/// use crawldedup::store::{self, StoredPage};
/// use crawldedup::{Config, Crawler};
///
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let mut config = Config::default();
/// config.crawl.seeds = vec!["https://example.com/".into()];
/// let summary = Crawler::builder(&config)
///     .checkpoint_every(std::time::Duration::from_secs(10))
///     .sink(store::from_fn(|page: &StoredPage| {
///         println!("{} {}", page.final_url, page.title.as_deref().unwrap_or(""));
///         Ok(())
///     }))
///     .run(async { tokio::signal::ctrl_c().await.unwrap() })
///     .await?;
/// println!("{} pages stored", summary.totals.stored);
/// # Ok(()) }
/// ```
pub struct Crawler;

impl Crawler {
    /// A builder for a crawl with `config` (seeds, scope, limits, state and output
    /// directories), with the defaults below and no sink but the crawl's files.
    pub fn builder(config: &Config) -> CrawlerBuilder {
        CrawlerBuilder {
            config: config.clone(),
            options: CrawlOptions::default(),
            sinks: Vec::new(),
        }
    }
}

/// Builds and runs a crawl. Every setter says its default.
pub struct CrawlerBuilder {
    pub(super) config: Config,
    pub(super) options: CrawlOptions,
    pub(super) sinks: Vec<Box<dyn PageSink>>,
}

impl CrawlerBuilder {
    /// Time between checkpoints. Default: [`CHECKPOINT_EVERY`] (5 s).
    pub fn checkpoint_every(mut self, every: Duration) -> CrawlerBuilder {
        self.options.checkpoint_every = every;
        self
    }

    /// Show a progress bar on a terminal instead of a log line per checkpoint. Default:
    /// off.
    pub fn progress_bar(mut self, show: bool) -> CrawlerBuilder {
        self.options.progress_bar = show;
        self
    }

    /// How long a host whose robots.txt answered 5xx (or nothing) stays closed before
    /// robots.txt is asked again. Default: [`ROBOTS_RETRY`] (60 s).
    pub fn robots_retry(mut self, after: Duration) -> CrawlerBuilder {
        self.options.robots_retry = after;
        self
    }

    /// The clock that fingerprint retention and URL recrawl are measured on. Default: the
    /// system clock; a test sets the time with a
    /// [`ManualClock`](crate::clock::ManualClock).
    pub fn clock(mut self, clock: std::sync::Arc<dyn crate::clock::Clock>) -> CrawlerBuilder {
        self.options.clock = Some(clock);
        self
    }

    /// All run options at once (the setters above, and the frontier's compaction for
    /// tests). Default: [`CrawlOptions::default`].
    pub fn options(mut self, options: &CrawlOptions) -> CrawlerBuilder {
        self.options = options.clone();
        self
    }

    /// Adds a sink: it is handed every decision after the crawl's files, in the order the
    /// sinks were added, under the crash contract of [`crate::store`]. Default: none (the
    /// crawl's files alone, as `[output]` says).
    pub fn sink(mut self, sink: impl PageSink + 'static) -> CrawlerBuilder {
        self.sinks.push(Box::new(sink));
        self
    }

    /// Runs the crawl until the frontier is empty, the page limit is reached, or `stop`
    /// resolves; a checkpoint is taken before it returns.
    ///
    /// The crawl runs as a task of its own on the current Tokio runtime, so that the pages
    /// its workers finish reach it without waking another thread; this future waits for it
    /// and passes `stop` on. Dropping this future aborts the task and its requests in
    /// flight, which is the same as a kill: the next run resumes from the last checkpoint.
    pub async fn run(
        self,
        stop: impl std::future::Future<Output = ()>,
    ) -> Result<CrawlSummary, CrawlError> {
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        // A set of one task: dropping the set (with this future) aborts the crawl.
        let mut task = tokio::task::JoinSet::new();
        task.spawn(run(self.config, self.options, self.sinks, stop_rx));
        tokio::pin!(stop);
        let joined = tokio::select! {
            joined = task.join_next() => joined,
            () = &mut stop => {
                let _ = stop_tx.send(());
                task.join_next().await
            }
        };
        match joined {
            Some(Ok(result)) => result,
            Some(Err(e)) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Some(Err(e)) => Err(CrawlError::Setup(format!(
                "the crawl task ended early: {e}"
            ))),
            None => Err(CrawlError::Setup("the crawl task is gone".into())),
        }
    }
}
