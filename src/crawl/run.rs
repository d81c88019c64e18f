//! The crawl loop: schedule, fetch, extract, decide, record, follow links, checkpoint.
//!
//! One task owns the state (frontier, page stage decisions, outputs); fetching, robots.txt
//! and extraction run in worker tasks. Every decision that changes the state (a URL queued,
//! a page indexed, a line written) happens in the owning task, so a checkpoint is a
//! consistent cut: outputs flushed and their lengths noted, the index flushed and its size
//! noted, the frontier's changes written, then one record naming all of it (its number also
//! goes to a file beside the database, [`COMMITTED_FILE`], so that a database that loses
//! the record is refused, not taken for a new crawl). After a crash the
//! next run truncates the outputs and rolls the index back to that record, queues again
//! what was pending or in flight, and redoes the work since: no page is stored twice, no
//! URL is lost, no line is torn.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use url::Url;

use super::fetch::{FetchConfig, FetchError, Fetcher, Hop};
use super::frontier::{Frontier, FrontierCounts, Task, host_key};
use crate::config::Config;
use bytes::Bytes;

use crate::dedup::{Dedup, PageVerdict, UrlVerdict};
use crate::page::{self, Prepared};
use crate::store::files::FileSink;
use crate::store::{DuplicatePage, FailedPage, PageSink, SinkError, SinkPosition, StoredPage};
use crate::urls::Canonicalizer;

/// Attempts per URL for failures worth retrying (timeouts, network errors, 5xx, 429).
pub const MAX_ATTEMPTS: u32 = 3;
/// Time between checkpoints while crawling, by default.
pub const CHECKPOINT_EVERY: Duration = Duration::from_secs(5);

/// Settings of a crawl run that are not part of the configuration file.
#[derive(Debug, Clone)]
pub struct CrawlOptions {
    /// Time between checkpoints.
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
}

impl Default for CrawlOptions {
    fn default() -> Self {
        CrawlOptions {
            checkpoint_every: CHECKPOINT_EVERY,
            progress_bar: false,
            robots_retry: ROBOTS_RETRY,
            compact_after: None,
        }
    }
}

/// The figures of a crawl on disk (`crawldedup stats`): the last checkpoint's totals and
/// the frontier as it was then. Fails with one line when a crawl is running there (sled
/// holds a lock) or the directory holds no crawl.
pub fn stats(state_dir: &Path) -> Result<CrawlSummary, CrawlError> {
    let state_error = |problem: String| CrawlError::State {
        path: state_dir.to_path_buf(),
        problem,
    };
    let db_path = state_dir.join(CRAWL_DB);
    if !db_path.exists() {
        return Err(state_error("no crawl here".into()));
    }
    let db = crate::db::open(&sled::Config::new().path(&db_path))
        .map_err(|e| state_error(crate::db::describe(&e)))?;
    let meta = db
        .open_tree("meta")
        .map_err(|e| state_error(crate::db::describe(&e)))?;
    let Some(totals) = read_record(&meta).map_err(state_error)? else {
        return Err(state_error("no checkpoint yet".into()));
    };
    let frontier = Frontier::open(
        db.open_tree("frontier")
            .map_err(|e| state_error(crate::db::describe(&e)))?,
        totals.seq,
    )
    .map_err(state_error)?;
    Ok(CrawlSummary {
        totals,
        frontier: frontier.counts(),
        seconds: 0.0,
        fetched_this_run: 0,
        page_limit_reached: false,
        stopped_early: frontier.counts().pending > 0,
    })
}

/// What [`check_parts`] found: the crawl database, the frontier (each a line saying it is
/// fine, or what is wrong), and the last checkpoint record if it could be read.
pub type CrawlParts = (
    Result<String, String>,
    Result<String, String>,
    Option<CheckpointRecord>,
);

/// The crawl's parts of a state directory, checked for `crawldedup verify`: the crawl
/// database (and its last checkpoint record) and the frontier. `None` when the directory
/// holds no crawl.
pub fn check_parts(state_dir: &Path) -> Option<CrawlParts> {
    let db_path = state_dir.join(CRAWL_DB);
    if !db_path.exists() {
        return None;
    }
    let skipped = || Err("not checked: the crawl database is unreadable".to_string());
    let db = match crate::db::open(&sled::Config::new().path(&db_path)) {
        Ok(db) => db,
        Err(e) => return Some((Err(crate::db::describe(&e)), skipped(), None)),
    };
    let record = db
        .open_tree("meta")
        .map_err(|e| crate::db::describe(&e))
        .and_then(|meta| read_record(&meta));
    let record = match record {
        Ok(record) => record,
        Err(problem) => return Some((Err(problem), skipped(), None)),
    };
    let crawl_db = Ok(match &record {
        Some(r) => format!(
            "checkpoint {}: {} fetched, {} stored, {} duplicates, {} failures",
            r.seq, r.fetched, r.stored, r.duplicates, r.failures
        ),
        None => "no checkpoint yet".to_string(),
    });
    let seq = record.as_ref().map_or(0, |r| r.seq);
    let frontier = db
        .open_tree("frontier")
        .map_err(|e| crate::db::describe(&e))
        .and_then(|tree| Frontier::open(tree, seq))
        .map(|f| {
            let c = f.counts();
            format!(
                "{} pending, {} in flight, {} done, {} failed",
                c.pending, c.in_flight, c.done, c.failed
            )
        });
    Some((crawl_db, frontier, record))
}

/// Calls `f` with every URL in the frontier of the crawl in `state_dir` as of its last
/// checkpoint; returns that checkpoint's number. `Err` when there is no crawl or its
/// database or frontier cannot be read.
pub fn each_frontier_url(
    state_dir: &Path,
    f: impl FnMut(&str) -> Result<(), String>,
) -> Result<u64, String> {
    let db = crate::db::open(&sled::Config::new().path(state_dir.join(CRAWL_DB)))
        .map_err(|e| crate::db::describe(&e))?;
    let meta = db.open_tree("meta").map_err(|e| crate::db::describe(&e))?;
    let seq = read_record(&meta)?.map_or(0, |r| r.seq);
    let tree = db
        .open_tree("frontier")
        .map_err(|e| crate::db::describe(&e))?;
    Frontier::open(tree, seq)?.each_url(f)?;
    Ok(seq)
}

/// The progress line: the crawl's totals over all its runs, and this run's rate (pages
/// fetched since `fetched_before`, the total when the run started).
fn progress_line(
    totals: &CheckpointRecord,
    frontier: &FrontierCounts,
    started: Instant,
    fetched_before: u64,
) -> String {
    format!(
        "fetched {} | queued {} | stored {} | duplicates {} | failures {} | {:.1} pages/s",
        totals.fetched,
        frontier.pending,
        totals.stored,
        totals.duplicates,
        totals.failures,
        (totals.fetched - fetched_before) as f64 / started.elapsed().as_secs_f64().max(1e-9)
    )
}
/// How long a host stays closed after its robots.txt failed with 5xx or a timeout.
pub const ROBOTS_RETRY: Duration = Duration::from_secs(60);

pub(crate) const CRAWL_DB: &str = "crawl";
const CHECKPOINT_KEY: &str = "checkpoint";
/// The number of the last committed checkpoint, written (atomically) after its record is
/// flushed: the database must hold at least this one.
pub const COMMITTED_FILE: &str = "crawl-committed";

/// The last checkpoint record in the crawl database's meta tree (`None` before the first).
fn read_record(meta: &sled::Tree) -> Result<Option<CheckpointRecord>, String> {
    match meta
        .get(CHECKPOINT_KEY)
        .map_err(|e| crate::db::describe(&e))?
    {
        Some(v) => serde_json::from_slice(&v)
            .map(Some)
            .map_err(|e| format!("unreadable checkpoint record: {e}")),
        None => Ok(None),
    }
}

/// The last checkpoint the state directory knows was committed (0 when none).
pub fn committed_seq(state_dir: &Path) -> Result<u64, String> {
    let path = state_dir.join(COMMITTED_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => text.trim().parse().map_err(|_| {
            format!(
                "damaged: {} holds {:?}, not a checkpoint number",
                path.display(),
                text.trim()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

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
    /// An output file could not be written.
    #[error("output {}: {source}", path.display())]
    Output {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A setting is unusable (a bad seed, a bad pattern).
    #[error("{0}")]
    Setup(String),
    /// A sink given to the crawler failed ([`crate::store::PageSink`]).
    #[error("page sink: {0}")]
    Sink(crate::store::SinkError),
    /// An output file is shorter than the last checkpoint recorded: it was truncated,
    /// replaced or deleted, or the outputs are not this state directory's. Resuming would
    /// leave a hole, so nothing is written.
    #[error(
        "output {}: {found} bytes, the last checkpoint wrote {expected}: the outputs do not match \
         the state directory (restore the file, point --out at this crawl's outputs, or start \
         a new state directory); nothing was written",
        path.display()
    )]
    OutputBehind {
        /// The file.
        path: PathBuf,
        /// Its length on disk (0 when it is missing).
        found: u64,
        /// The length the checkpoint recorded.
        expected: u64,
    },
}

/// The record a checkpoint writes last.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CheckpointRecord {
    /// Checkpoints taken so far.
    pub seq: u64,
    /// Documents in the index.
    pub index_documents: u64,
    /// Bytes of pages.jsonl, duplicates.jsonl and failures.jsonl.
    pub output_bytes: [u64; 3],
    /// Responses received.
    pub fetched: u64,
    /// Pages stored.
    pub stored: u64,
    /// Duplicates recorded.
    pub duplicates: u64,
    /// Failures and skips recorded.
    pub failures: u64,
    /// WARC file number and its length.
    #[serde(default)]
    pub warc: (u64, u64),
    /// The positions of the sinks given to the crawler, in the order they were given
    /// (the crawl's own files are `output_bytes` and `warc`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sinks: Vec<SinkPosition>,
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

/// Where a crawl may go.
struct Scope {
    domains: Vec<(String, bool)>,
    include: Vec<regex::Regex>,
    exclude: Vec<regex::Regex>,
}

impl Scope {
    fn new(config: &Config, seeds: &[Url]) -> Result<Scope, CrawlError> {
        let mut domains: Vec<(String, bool)> = config
            .scope
            .allowed_domains
            .iter()
            .map(|d| match d.strip_prefix('=') {
                Some(exact) => (exact.to_ascii_lowercase(), true),
                None => (d.to_ascii_lowercase(), false),
            })
            .collect();
        if domains.is_empty() {
            domains = seeds
                .iter()
                .filter_map(|s| s.host_str().map(|h| (h.to_string(), false)))
                .collect();
        }
        let compile = |patterns: &[String], key: &str| {
            patterns
                .iter()
                .map(|p| {
                    regex::Regex::new(p)
                        .map_err(|e| CrawlError::Setup(format!("scope.{key}: `{p}`: {e}")))
                })
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(Scope {
            domains,
            include: compile(&config.scope.include, "include")?,
            exclude: compile(&config.scope.exclude, "exclude")?,
        })
    }

    fn allows(&self, url: &Url) -> Result<(), String> {
        let host = url.host_str().unwrap_or("");
        let in_domain = self.domains.iter().any(|(d, exact)| {
            host == d
                || (!exact
                    && host.len() > d.len()
                    && host.ends_with(d.as_str())
                    && host.as_bytes()[host.len() - d.len() - 1] == b'.')
        });
        if !in_domain {
            return Err(format!("{host} is outside the allowed domains"));
        }
        if !self.include.is_empty() && !self.include.iter().any(|r| r.is_match(url.as_str())) {
            return Err("matches no scope.include pattern".into());
        }
        if let Some(r) = self.exclude.iter().find(|r| r.is_match(url.as_str())) {
            return Err(format!("matches scope.exclude `{}`", r.as_str()));
        }
        Ok(())
    }
}

/// The crawl's sinks: its files first, then those given to the crawler, each handed every
/// decision in order.
pub(crate) struct Sinks {
    files: FileSink,
    given: Vec<Box<dyn PageSink>>,
}

/// A sink's error as the crawl's: the file sink's own errors keep their kind (and exit
/// code), another sink's becomes [`CrawlError::Sink`].
fn sink_error(e: SinkError) -> CrawlError {
    match e.downcast::<CrawlError>() {
        Ok(e) => *e,
        Err(e) => CrawlError::Sink(e),
    }
}

impl Sinks {
    fn all(&mut self) -> impl Iterator<Item = &mut dyn PageSink> {
        std::iter::once(&mut self.files as &mut dyn PageSink).chain(
            self.given
                .iter_mut()
                .map(|s| s.as_mut() as &mut dyn PageSink),
        )
    }

    fn page(&mut self, page: &StoredPage) -> Result<(), CrawlError> {
        self.all()
            .try_for_each(|s| s.page(page))
            .map_err(sink_error)
    }

    fn duplicate(&mut self, duplicate: &DuplicatePage) -> Result<(), CrawlError> {
        self.all()
            .try_for_each(|s| s.duplicate(duplicate))
            .map_err(sink_error)
    }

    fn failure(&mut self, failure: &FailedPage) -> Result<(), CrawlError> {
        self.all()
            .try_for_each(|s| s.failure(failure))
            .map_err(sink_error)
    }

    /// Each sink's position, into the record.
    fn checkpoint(&mut self, totals: &mut CheckpointRecord) -> Result<(), CrawlError> {
        let files = self.files.checkpoint().map_err(sink_error)?;
        (totals.output_bytes, totals.warc) = FileSink::lengths(&files).map_err(sink_error)?;
        totals.sinks = self
            .given
            .iter_mut()
            .map(|s| s.checkpoint())
            .collect::<Result<_, _>>()
            .map_err(sink_error)?;
        Ok(())
    }

    /// Each sink back to the position the record holds for it.
    fn resume(&mut self, totals: &CheckpointRecord) -> Result<(), CrawlError> {
        let files = FileSink::position(totals.output_bytes, totals.warc);
        self.files.resume(Some(&files)).map_err(sink_error)?;
        for (i, sink) in self.given.iter_mut().enumerate() {
            sink.resume(totals.sinks.get(i)).map_err(sink_error)?;
        }
        Ok(())
    }

    /// The earliest time a sink wants to be called again.
    fn idle(&mut self) -> Result<Option<Instant>, CrawlError> {
        let mut due: Option<Instant> = None;
        for sink in self.all() {
            if let Some(at) = sink.idle().map_err(sink_error)? {
                due = Some(due.map_or(at, |d| d.min(at)));
            }
        }
        Ok(due)
    }
}

/// robots.txt rules of one host.
#[derive(Clone)]
enum Robots {
    /// No robots.txt, a 4xx, or rules parsed.
    Rules(Option<Arc<texting_robots::Robot>>),
    /// 5xx or unreachable: closed until then.
    Closed(Instant),
}

/// robots.txt per host. Each host has its own async lock, held while its robots.txt is
/// fetched, so that the tasks of one host wait for one fetch instead of each making its own.
type RobotsCache = Arc<Mutex<HashMap<String, Arc<tokio::sync::Mutex<Option<Robots>>>>>>;

/// What a worker brings back.
enum Work {
    Page {
        task: Task,
        /// A redirect to another host, left for the queue.
        deferred: Option<Box<Url>>,
        status: u16,
        final_url: Url,
        content_type: Option<String>,
        body: Vec<u8>,
        retry_after: Option<Duration>,
        redirects: Vec<(Url, u16)>,
        /// The extraction and its text's fingerprint, for HTML pages.
        prepared: Option<Box<Prepared>>,
        crawl_delay: Option<Duration>,
        fetched_at: std::time::SystemTime,
    },
    Failed {
        task: Task,
        error: FetchError,
    },
    Disallowed {
        task: Task,
    },
    RobotsClosed {
        task: Task,
        until: Instant,
    },
}

struct Shared {
    fetcher: Fetcher,
    canonicalizer: Canonicalizer,
    scope: Scope,
    robots: RobotsCache,
    respect_robots: bool,
    /// How long a host stays closed after its robots.txt failed.
    robots_retry: Duration,
    user_agent: String,
    /// Focus keywords (tokens); empty: breadth first.
    keywords: Vec<String>,
    max_depth: u32,
    /// `per_host_delay_ms`.
    base_delay: Duration,
}

/// The state the owning task changes as results come in.
struct Ledger<'a> {
    dedup: &'a Dedup,
    frontier: &'a mut Frontier,
    sinks: &'a mut Sinks,
    totals: &'a mut CheckpointRecord,
    hosts: &'a mut HashMap<String, HostState>,
    /// Tasks waiting out a retry backoff (still in flight for the frontier).
    delayed: &'a mut Vec<(Instant, Task)>,
}

#[derive(Default)]
struct HostState {
    in_flight: usize,
    next_allowed: Option<Instant>,
    delay: Duration,
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
    config: Config,
    options: CrawlOptions,
    sinks: Vec<Box<dyn PageSink>>,
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

/// Runs `f`, which may block for a while (a checkpoint waits for the disk), without holding
/// up the other tasks of a multi-threaded runtime's worker.
fn blocking<R>(f: impl FnOnce() -> R) -> R {
    match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(f),
        _ => f(),
    }
}

/// The crawl itself, on its own task. `stop` resolves (or its sender goes away) when the
/// caller asks the crawl to stop.
async fn run(
    config: Config,
    options: CrawlOptions,
    sinks: Vec<Box<dyn PageSink>>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) -> Result<CrawlSummary, CrawlError> {
    let (config, options) = (&config, &options);
    let started = Instant::now();
    let crawl = &config.crawl;
    let state_dir = crawl.state_dir.clone();
    crate::db::create_state_dir(&state_dir).map_err(|e| CrawlError::State {
        path: state_dir.clone(),
        problem: e.to_string(),
    })?;
    let state_error = |problem: String| CrawlError::State {
        path: state_dir.clone(),
        problem,
    };
    let db = crate::db::open(&sled::Config::new().path(state_dir.join(CRAWL_DB)))
        .map_err(|e| state_error(crate::db::describe(&e)))?;
    let meta = db
        .open_tree("meta")
        .map_err(|e| state_error(crate::db::describe(&e)))?;
    let record = read_record(&meta).map_err(&state_error)?;
    // The database must hold the last checkpoint the state directory knows was committed:
    // an emptied, replaced or cut database would otherwise roll the index and the outputs
    // back without a word.
    let committed = committed_seq(&state_dir).map_err(&state_error)?;
    let found = record.as_ref().map_or(0, |r| r.seq);
    if found < committed {
        return Err(state_error(format!(
            "damaged: the crawl database ({CRAWL_DB}) holds {}, while checkpoint {committed} \
             was committed; nothing was changed: restore the state directory from a backup, or \
             start a new one",
            if found == 0 {
                "no checkpoint".to_string()
            } else {
                format!("checkpoint {found}")
            }
        )));
    }
    let mut totals = record.clone().unwrap_or_default();
    let dedup = Dedup::open_at(&state_dir, config, Some(totals.index_documents))?;
    let mut sinks = Sinks {
        files: FileSink::new(&crawl.out_dir, &config.output),
        given: sinks,
    };
    sinks.resume(&totals)?;
    let mut frontier = Frontier::open(
        db.open_tree("frontier")
            .map_err(|e| state_error(crate::db::describe(&e)))?,
        totals.seq,
    )
    .map_err(state_error)?;
    if let Some(after) = options.compact_after {
        frontier.set_compaction(after, (after / 16).max(1));
    }

    // Seeds: canonical, in scope, queued once.
    let mut seeds = Vec::new();
    for seed in crawl
        .seeds
        .iter()
        .cloned()
        .chain(read_seed_files(&crawl.seed_files)?)
    {
        let url = dedup
            .canonicalizer()
            .canonicalize(&seed)
            .map_err(|e| CrawlError::Setup(format!("seed `{seed}`: {e}")))?;
        seeds.push(url);
    }
    if seeds.is_empty() && record.is_none() {
        return Err(CrawlError::Setup(
            "no seeds: give --seed, --seeds or crawl.seeds".into(),
        ));
    }
    let scope = Scope::new(config, &seeds)?;
    let keywords: Vec<String> = config
        .focus
        .keywords
        .iter()
        .flat_map(|k| crate::fingerprint::tokens(k))
        .collect();
    for url in &seeds {
        if let UrlVerdict::New(url) = dedup.check_canonical(url.clone())? {
            frontier
                .push(url, 0, priority(&keywords, 0, 0))
                .map_err(state_error)?;
        }
    }

    let shared = Arc::new(Shared {
        fetcher: Fetcher::new(FetchConfig::from_crawl(crawl)).map_err(CrawlError::Setup)?,
        canonicalizer: dedup.canonicalizer().clone(),
        scope,
        robots: Arc::new(Mutex::new(HashMap::new())),
        respect_robots: crawl.respect_robots,
        robots_retry: options.robots_retry,
        user_agent: crawl.user_agent.clone(),
        keywords,
        max_depth: crawl.max_depth,
        base_delay: Duration::from_millis(crawl.per_host_delay_ms),
    });
    let (done_tx, mut done_rx) = mpsc::unbounded_channel::<Work>();
    let mut hosts: HashMap<String, HostState> = HashMap::new();
    let mut in_flight = 0usize;
    // The fetch tasks: dropped with the crawl (an aborted crawl stops its requests too).
    let mut workers = tokio::task::JoinSet::new();
    // Tasks waiting out a retry backoff (still in flight for the frontier).
    let mut delayed: Vec<(Instant, Task)> = Vec::new();
    let mut last_checkpoint = Instant::now();
    let mut stopping = false;
    let mut stopped_early = false;
    let bar = options.progress_bar.then(|| {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    });
    // Rates in the log use the same clock as the summary's (the run's start).
    let run_started = started;
    let fetched_before = totals.fetched;
    let mut page_limit_reached = false;

    loop {
        // Retries whose backoff is over go back to the queue.
        let now = Instant::now();
        let (due, waiting): (Vec<_>, Vec<_>) = delayed.into_iter().partition(|(at, _)| *at <= now);
        delayed = waiting;
        for (_, task) in due {
            frontier.retry(task);
        }
        // Dispatch what the limits allow.
        let limit_reached =
            crawl.max_pages > 0 && totals.fetched + in_flight as u64 >= crawl.max_pages;
        if limit_reached && frontier.counts().pending > 0 {
            stopped_early = true;
            page_limit_reached = true;
        }
        let now = Instant::now();
        let mut wake_at: Option<Instant> = None;
        if !stopping && !limit_reached {
            let mut candidates: Vec<(String, u32)> = frontier
                .ready_hosts()
                .map(|(h, p)| (h.to_string(), p))
                .collect();
            candidates.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            for (host, _) in candidates {
                if in_flight >= crawl.concurrency
                    || (crawl.max_pages > 0 && totals.fetched + in_flight as u64 >= crawl.max_pages)
                {
                    break;
                }
                if !hosts.contains_key(&host) {
                    let state = HostState {
                        delay: shared.base_delay,
                        ..HostState::default()
                    };
                    hosts.insert(host.clone(), state);
                }
                let state = hosts.get_mut(&host).expect("inserted above");
                if state.in_flight >= crawl.per_host_concurrency {
                    continue;
                }
                if let Some(at) = state.next_allowed {
                    if at > now {
                        wake_at = Some(wake_at.map_or(at, |w: Instant| w.min(at)));
                        continue;
                    }
                }
                // Fill the host's share of the concurrency; with a delay between requests,
                // one request now and the next when the delay is over.
                while state.in_flight < crawl.per_host_concurrency
                    && in_flight < crawl.concurrency
                    && (crawl.max_pages == 0
                        || totals.fetched + (in_flight as u64) < crawl.max_pages)
                {
                    let Some(task) = frontier.pop(&host) else {
                        break;
                    };
                    state.in_flight += 1;
                    in_flight += 1;
                    let shared = Arc::clone(&shared);
                    let tx = done_tx.clone();
                    workers.spawn(async move {
                        let work = work(&shared, task).await;
                        let _ = tx.send(work);
                    });
                    if !state.delay.is_zero() {
                        state.next_allowed = Some(now + state.delay);
                        break;
                    }
                }
            }
        }
        if in_flight == 0
            && (stopping || limit_reached || (frontier.counts().pending == 0 && delayed.is_empty()))
        {
            break;
        }
        for (at, _) in &delayed {
            wake_at = Some(wake_at.map_or(*at, |w: Instant| w.min(*at)));
        }
        // Sinks hand on what they gathered when it is due (the file sink's writer gets
        // its jobs in batches), and the loop wakes up for the next one.
        if let Some(due) = sinks.idle()? {
            wake_at = Some(wake_at.map_or(due, |w: Instant| w.min(due)));
        }
        let sleep_until = wake_at.unwrap_or_else(|| Instant::now() + Duration::from_secs(1));
        tokio::select! {
            received = done_rx.recv() => {
                if let Some(work) = received {
                    let mut ledger = Ledger {
                        dedup: &dedup,
                        frontier: &mut frontier,
                        sinks: &mut sinks,
                        totals: &mut totals,
                        hosts: &mut hosts,
                        delayed: &mut delayed,
                    };
                    in_flight -= 1;
                    handle(work, &mut ledger, &shared)?;
                    // Whatever else has finished is handled in the same round, before the
                    // next dispatch.
                    while let Ok(work) = done_rx.try_recv() {
                        in_flight -= 1;
                        handle(work, &mut ledger, &shared)?;
                    }
                    // The finished tasks leave the set.
                    while workers.try_join_next().is_some() {}
                }
            }
            _ = tokio::time::sleep_until(sleep_until.into()) => {}
            _ = &mut stop, if !stopping => {
                stopping = true;
                stopped_early = true;
                tracing::info!("stopping: waiting for {in_flight} requests, then a checkpoint");
            }
        }
        if let Some(bar) = &bar {
            bar.set_message(progress_line(
                &totals,
                &frontier.counts(),
                run_started,
                fetched_before,
            ));
        }
        if last_checkpoint.elapsed() >= options.checkpoint_every {
            blocking(|| checkpoint(&db, &meta, &dedup, &mut frontier, &mut sinks, &mut totals))?;
            frontier.compact().map_err(state_error)?;
            last_checkpoint = Instant::now();
            if bar.is_none() {
                tracing::info!(
                    "{}",
                    progress_line(&totals, &frontier.counts(), run_started, fetched_before)
                );
            }
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    // Retries still waiting out their backoff go back to the queue for the next run.
    for (_, task) in delayed {
        frontier.retry(task);
    }
    checkpoint(&db, &meta, &dedup, &mut frontier, &mut sinks, &mut totals)?;
    if !options.progress_bar {
        // The last line of the log gives the figures the summary gives.
        tracing::info!(
            "{}",
            progress_line(&totals, &frontier.counts(), run_started, fetched_before)
        );
    }
    Ok(CrawlSummary {
        fetched_this_run: totals.fetched - fetched_before,
        totals,
        frontier: frontier.counts(),
        seconds: started.elapsed().as_secs_f64(),
        page_limit_reached,
        stopped_early,
    })
}

fn read_seed_files(files: &[PathBuf]) -> Result<Vec<String>, CrawlError> {
    let mut seeds = Vec::new();
    for file in files {
        seeds.extend(
            crate::config::read_seed_file(file).map_err(|e| CrawlError::Setup(e.to_string()))?,
        );
    }
    Ok(seeds)
}

/// The consistent cut described in the module documentation.
fn checkpoint(
    db: &sled::Db,
    meta: &sled::Tree,
    dedup: &Dedup,
    frontier: &mut Frontier,
    sinks: &mut Sinks,
    totals: &mut CheckpointRecord,
) -> Result<(), CrawlError> {
    let state_error = |problem: String| CrawlError::State {
        path: dedup.state_dir().to_path_buf(),
        problem,
    };
    sinks.checkpoint(totals)?;
    totals.index_documents = dedup.flush_index()?;
    totals.seq += 1;
    frontier.checkpoint(totals.seq).map_err(state_error)?;
    // Outputs synced, index flushed, frontier's log written; the record is not.
    crate::faults::point("checkpoint-before-record");
    let record = serde_json::to_vec(totals).map_err(|e| state_error(e.to_string()))?;
    meta.insert(CHECKPOINT_KEY, record)
        .map_err(|e| state_error(crate::db::describe(&e)))?;
    db.flush()
        .map_err(|e| state_error(crate::db::describe(&e)))?;
    // Committed: say so outside the database too, so that a database that loses it is found.
    crate::urls::seen::write_atomically(
        &dedup.state_dir().join(COMMITTED_FILE),
        format!("{}\n", totals.seq).as_bytes(),
    )
    .map_err(|e| state_error(format!("{COMMITTED_FILE}: {e}")))?;
    // The URL filter may lag the frontier (it is saved after the commit point); the
    // frontier itself never queues a URL twice.
    dedup.save_urls()?;
    Ok(())
}

/// Link priority: with focus keywords, relevance of the anchor text, the URL's words and
/// the parent page's text; without, breadth first.
fn priority(keywords: &[String], depth: u32, relevance: u32) -> u32 {
    let breadth = 1000u32.saturating_sub(depth.min(1000));
    if keywords.is_empty() {
        breadth
    } else {
        relevance.saturating_mul(1000).saturating_add(breadth)
    }
}

fn relevance(keywords: &[String], text: &str) -> u32 {
    if keywords.is_empty() {
        return 0;
    }
    crate::fingerprint::tokens(text)
        .iter()
        .filter(|t| keywords.contains(t))
        .count() as u32
}

/// HTML bodies up to this size are extracted and fingerprinted on the runtime worker that
/// fetched them (well under a millisecond of CPU); bigger ones go to the blocking pool, so
/// that a big page never holds up the network work queued on that worker. Handing every
/// page to another thread costs two thread wake-ups per page, which on a crawl of small
/// pages was a tenth of the CPU.
const INLINE_EXTRACTION_BYTES: usize = 64 * 1024;

/// Fetches one task (after robots.txt) and extracts it.
async fn work(shared: &Shared, task: Task) -> Work {
    let mut crawl_delay = None;
    if shared.respect_robots {
        match robots_for(shared, &task.url).await {
            Robots::Closed(until) => return Work::RobotsClosed { task, until },
            Robots::Rules(Some(robot)) => {
                crawl_delay = robot
                    .delay
                    .map(|d| Duration::from_secs_f32(d.clamp(0.0, 60.0)));
                if !robot.allowed(task.url.as_str()) {
                    return Work::Disallowed { task };
                }
            }
            Robots::Rules(None) => {}
        }
    }
    let host = host_key(&task.url);
    let hop = |next: &Url| -> Result<Hop, String> {
        let canonical = shared
            .canonicalizer
            .canonicalize(next.as_str())
            .map_err(|e| e.to_string())?;
        shared.scope.allows(&canonical)?;
        // Another host has its own robots.txt, delay and share of the concurrency: its
        // page goes through the queue like any link.
        if shared.respect_robots && host_key(&canonical) != host {
            return Ok(Hop::Defer(canonical));
        }
        Ok(Hop::Follow(canonical))
    };
    match shared.fetcher.fetch_with(&task.url, hop).await {
        Ok(fetched) => {
            let fetched_at = std::time::SystemTime::now();
            let to_prepare = page::is_page(fetched.content_type.as_deref(), &fetched.body)
                && (200..300).contains(&fetched.status);
            let mut fetched = fetched;
            let prepared = if !to_prepare {
                None
            } else if fetched.body.len() <= INLINE_EXTRACTION_BYTES {
                page::prepare(
                    &fetched.body,
                    fetched.content_type.as_deref(),
                    Some(&fetched.url),
                )
                .map(Box::new)
            } else {
                // The body goes to the blocking pool and comes back, without a copy.
                let body = std::mem::take(&mut fetched.body);
                let content_type = fetched.content_type.clone();
                let url = fetched.url.clone();
                let (body, prepared) = tokio::task::spawn_blocking(move || {
                    let prepared = page::prepare(&body, content_type.as_deref(), Some(&url));
                    (body, prepared.map(Box::new))
                })
                .await
                .unwrap_or_default();
                fetched.body = body;
                prepared
            };
            Work::Page {
                task,
                deferred: fetched.deferred.map(Box::new),
                status: fetched.status,
                final_url: fetched.url,
                content_type: fetched.content_type,
                body: fetched.body,
                retry_after: fetched.retry_after,
                redirects: fetched.redirects,
                prepared,
                crawl_delay,
                fetched_at,
            }
        }
        Err(error) => Work::Failed { task, error },
    }
}

async fn robots_for(shared: &Shared, url: &Url) -> Robots {
    let host = host_key(url);
    let slot = shared
        .robots
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(host.to_string())
        .or_default()
        .clone();
    let mut cached = slot.lock().await;
    match &*cached {
        Some(Robots::Closed(until)) if *until <= Instant::now() => {}
        Some(other) => return other.clone(),
        None => {}
    }
    let mut robots_url = url.clone();
    robots_url.set_path("/robots.txt");
    robots_url.set_query(None);
    let entry = match shared.fetcher.fetch(&robots_url, |u| Ok(u.clone())).await {
        Ok(f) if (200..300).contains(&f.status) => Robots::Rules(
            texting_robots::Robot::new(&shared.user_agent, &f.body)
                .ok()
                .map(Arc::new),
        ),
        Ok(f) if (400..500).contains(&f.status) => Robots::Rules(None),
        Ok(f) => {
            tracing::info!("{robots_url}: HTTP {}: host closed for a while", f.status);
            Robots::Closed(Instant::now() + shared.robots_retry)
        }
        Err(e) => {
            tracing::info!("{e}: host closed for a while");
            Robots::Closed(Instant::now() + shared.robots_retry)
        }
    };
    *cached = Some(entry.clone());
    entry
}

fn backoff(attempts: u32, retry_after: Option<Duration>, url: &Url) -> Duration {
    if let Some(after) = retry_after {
        return after.min(Duration::from_secs(300));
    }
    // Exponential, with jitter derived from the URL (deterministic per URL and attempt).
    let base = Duration::from_millis(500) * 2u32.pow(attempts.min(8));
    let jitter = crate::urls::seen::url_hash(url.as_str()).rotate_left(attempts) % 250;
    base + Duration::from_millis(jitter)
}

/// Why a URL was not stored.
struct Failure {
    kind: String,
    reason: String,
    status: Option<u16>,
}

impl Failure {
    fn new(kind: &str, reason: String, status: Option<u16>) -> Failure {
        Failure {
            kind: kind.to_string(),
            reason,
            status,
        }
    }
}

impl Work {
    fn task(&self) -> &Task {
        match self {
            Work::Page { task, .. }
            | Work::Failed { task, .. }
            | Work::Disallowed { task }
            | Work::RobotsClosed { task, .. } => task,
        }
    }
}

/// Records a worker's result: the outcome, then a failure line if it was not stored.
fn handle(work: Work, ledger: &mut Ledger<'_>, shared: &Shared) -> Result<(), CrawlError> {
    if let Some((task, failure)) = outcome(work, ledger, shared)? {
        ledger.totals.failures += 1;
        ledger.sinks.failure(&FailedPage {
            url: task.url.clone(),
            kind: failure.kind,
            reason: failure.reason,
            status: failure.status,
            attempts: task.attempts + 1,
            depth: task.depth,
        })?;
        ledger.frontier.finish(&task, true);
    }
    Ok(())
}

/// What a worker's result means: retried, stored, recorded as a duplicate (`None`), or a
/// failure of its task for [`handle`] to record.
fn outcome(
    work: Work,
    ledger: &mut Ledger<'_>,
    shared: &Shared,
) -> Result<Option<(Task, Failure)>, CrawlError> {
    let Ledger {
        dedup,
        frontier,
        sinks,
        totals,
        hosts,
        delayed,
    } = ledger;
    let (dedup, keywords) = (*dedup, shared.keywords.as_slice());
    let (max_depth, base_delay) = (shared.max_depth, shared.base_delay);
    let host = host_key(&work.task().url);
    if !hosts.contains_key(host) {
        hosts.insert(host.to_string(), HostState::default());
    }
    let state = hosts.get_mut(host).expect("inserted above");
    state.in_flight = state.in_flight.saturating_sub(1);
    let now = Instant::now();
    match work {
        Work::RobotsClosed { task, until } => {
            state.next_allowed = Some(until);
            if task.attempts + 1 >= MAX_ATTEMPTS {
                let reason = format!(
                    "robots.txt of {} failed {MAX_ATTEMPTS} times (5xx or no answer)",
                    host_key(&task.url)
                );
                let failure = Failure::new("robots_unavailable", reason, None);
                return Ok(Some((task, failure)));
            }
            frontier.retry(task);
        }
        Work::Disallowed { task } => {
            state.next_allowed = Some(now + state.delay);
            return Ok(Some((
                task,
                Failure::new("robots", "disallowed by robots.txt".into(), None),
            )));
        }
        Work::Failed { task, error } => {
            let retry = error.is_retryable() && task.attempts + 1 < MAX_ATTEMPTS;
            if retry {
                // This URL waits; the host's other pages go on.
                state.next_allowed = Some(now + state.delay);
                delayed.push((now + backoff(task.attempts, None, &task.url), task));
            } else {
                state.next_allowed = Some(now + state.delay);
                return Ok(Some((
                    task,
                    Failure::new(error.kind(), error.to_string(), None),
                )));
            }
        }
        Work::Page {
            task,
            deferred,
            status,
            final_url,
            content_type,
            mut body,
            retry_after,
            redirects,
            prepared,
            crawl_delay,
            fetched_at,
        } => {
            totals.fetched += 1;
            state.delay = base_delay.max(crawl_delay.unwrap_or_default());
            state.next_allowed = Some(now + state.delay);
            if let Some(target) = deferred {
                // Canonical already: the hop canonicalized it.
                let queued = match dedup.check_canonical((*target).clone())? {
                    UrlVerdict::New(url) => frontier
                        .push(url, task.depth, priority(keywords, task.depth, 0))
                        .map_err(CrawlError::Setup)?,
                    _ => false,
                };
                let reason = if queued {
                    format!("to {target} on another host: queued")
                } else {
                    format!("to {target} on another host: already seen")
                };
                return Ok(Some((
                    task,
                    Failure::new("redirected", reason, Some(status)),
                )));
            }
            let retryable = status >= 500 || status == 429;
            if retryable && task.attempts + 1 < MAX_ATTEMPTS {
                let wait = backoff(task.attempts, retry_after, &task.url);
                if retry_after.is_some() || status == 429 {
                    // The server asked the whole host to slow down.
                    state.next_allowed = Some(now + wait);
                }
                delayed.push((now + wait, task));
                return Ok(None);
            }
            if !(200..300).contains(&status) {
                let reason = format!("HTTP {status}");
                return Ok(Some((
                    task,
                    Failure::new("http_status", reason, Some(status)),
                )));
            }
            // The redirect target is the page: remember it, and take it off the queue if a
            // link put it there, so that it is not fetched again. Every hop was
            // canonicalized before it was followed, so the final URL is canonical.
            if final_url != task.url {
                if let UrlVerdict::New(target) | UrlVerdict::Seen(target) =
                    dedup.check_canonical(final_url.clone())?
                {
                    frontier
                        .settle(target, task.depth)
                        .map_err(CrawlError::Setup)?;
                }
            }
            let Some(prepared) = prepared else {
                let reason = format!(
                    "not HTML ({})",
                    content_type.as_deref().unwrap_or("no content type")
                );
                return Ok(Some((task, Failure::new("not_html", reason, Some(status)))));
            };
            let verdict = dedup.decide(final_url.as_str(), &prepared)?;
            let (extracted, links) = prepared.into_parts();
            let mut parent_relevance = 0;
            let body = Bytes::from(std::mem::take(&mut body));
            match &verdict {
                PageVerdict::Unique {
                    id,
                    fingerprint,
                    digest,
                    nearest,
                } => {
                    totals.stored += 1;
                    parent_relevance = relevance(keywords, &extracted.text).min(5);
                    sinks.page(&StoredPage {
                        url: task.url.clone(),
                        final_url: final_url.clone(),
                        redirects: redirects.iter().map(|(u, _)| u.clone()).collect(),
                        status,
                        fetched_at,
                        depth: task.depth,
                        content_type,
                        body,
                        title: extracted.title,
                        language: extracted.language,
                        text: Arc::from(extracted.text),
                        id: *id,
                        simhash: *fingerprint,
                        digest: *digest,
                        nearest: *nearest,
                    })?;
                }
                PageVerdict::ExactDuplicate { of } | PageVerdict::NearDuplicate { of, .. } => {
                    totals.duplicates += 1;
                    let (distance, similarity) = match &verdict {
                        PageVerdict::NearDuplicate {
                            distance,
                            similarity,
                            ..
                        } => (Some(*distance), *similarity),
                        _ => (
                            None,
                            crate::index::Similarity {
                                resemblance: 1.0,
                                containment: 1.0,
                            },
                        ),
                    };
                    sinks.duplicate(&DuplicatePage {
                        url: task.url.clone(),
                        final_url: final_url.clone(),
                        status,
                        fetched_at,
                        depth: task.depth,
                        content_type,
                        body,
                        of: of.name.clone(),
                        distance,
                        similarity,
                    })?;
                }
                PageVerdict::NoText => {
                    return Ok(Some((
                        task,
                        Failure::new("no_text", "no main text".into(), Some(status)),
                    )));
                }
            }
            // Links: duplicates' links are not followed (their originals' were).
            if matches!(verdict, PageVerdict::Unique { .. }) && task.depth < max_depth {
                let base = links.base();
                for link in links.iter() {
                    if link.nofollow {
                        continue;
                    }
                    let canonical = match base {
                        Some(base) => shared.canonicalizer.canonicalize_link(base, link.href),
                        None => shared.canonicalizer.canonicalize(link.href),
                    };
                    let Ok(canonical) = canonical else {
                        continue;
                    };
                    if shared.scope.allows(&canonical).is_err() {
                        continue;
                    }
                    if let UrlVerdict::New(url) = dedup.check_canonical(canonical)? {
                        let score = 3 * relevance(keywords, link.text)
                            + 2 * relevance(keywords, url.path())
                            + parent_relevance;
                        frontier
                            .push(
                                url,
                                task.depth + 1,
                                priority(keywords, task.depth + 1, score),
                            )
                            .map_err(CrawlError::Setup)?;
                    }
                }
            }
            frontier.finish(&task, false);
        }
    }
    Ok(None)
}
