//! The crawler's public face: [`Crawler`] and its builder.

use std::time::Duration;

use super::error::CrawlError;
use super::options::CrawlOptions;
use super::record::CrawlSummary;
use super::run::run;
use crate::config::Config;
use crate::store::PageSink;

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
    /// Time between checkpoints. Default: [`super::CHECKPOINT_EVERY`] (5 s).
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
    /// robots.txt is asked again. Default: [`super::ROBOTS_RETRY`] (60 s).
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
