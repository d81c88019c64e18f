//! The crawl loop: schedule, fetch, extract, decide, record, follow links, checkpoint.
//!
//! One task owns the state (frontier, page stage decisions, outputs); fetching, robots.txt
//! and extraction run in worker tasks. Every decision that changes the state (a URL queued,
//! a page indexed, a line written) happens in the owning task, so a checkpoint is a
//! consistent cut: outputs flushed and their lengths noted, the index flushed and its size
//! noted, the frontier's changes written, then one record naming all of it (its number also
//! goes to a file beside the database, [`COMMITTED_FILE`](super::COMMITTED_FILE), so that a database that loses
//! the record is refused, not taken for a new crawl). After a crash the
//! next run truncates the outputs and rolls the index back to that record, queues again
//! what was pending or in flight, and redoes the work since: no page is stored twice, no
//! URL is lost, no line is torn.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::crawler::{CrawlError, CrawlOptions, CrawlSummary};
use super::fetch::{FetchConfig, Fetcher};
use super::frontier::{Frontier, FrontierCounts};
use super::outcome::{Ledger, Sinks, handle};
use super::record::{CRAWL_DB, CheckpointRecord, checkpoint, committed_seq, read_record};
use super::robots::RobotsCache;
use super::schedule::Schedule;
use super::scope::{Scope, priority};
use super::worker::{Work, work};
use crate::config::Config;
use crate::dedup::{Dedup, UrlVerdict};
use crate::store::PageSink;
use crate::store::files::FileSink;
use crate::urls::Canonicalizer;

/// The progress line: the crawl's totals over all its runs, and this run's rate (pages
/// fetched since `fetched_before`, the total when the run started).
pub(super) fn progress_line(
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
pub(super) struct Shared {
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
    /// `per_host_delay_ms`.
    pub(super) base_delay: Duration,
}

/// Runs `f`, which may block for a while (a checkpoint waits for the disk), without holding
/// up the other tasks of a multi-threaded runtime's worker.
pub(super) fn blocking<R>(f: impl FnOnce() -> R) -> R {
    match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(f),
        _ => f(),
    }
}

/// The crawl itself, on its own task. `stop` resolves (or its sender goes away) when the
/// caller asks the crawl to stop.
pub(super) async fn run(
    config: Config,
    options: CrawlOptions,
    sinks: Vec<Box<dyn PageSink>>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) -> Result<CrawlSummary, CrawlError> {
    let (config, options) = (&config, &options);
    let started = Instant::now();
    let crawl = &config.crawl;
    let state_error = |problem: String| CrawlError::State {
        path: crawl.state_dir.clone(),
        problem,
    };
    let Opened {
        db,
        meta,
        record,
        dedup,
        mut frontier,
    } = open_state(config, options)?;
    let mut totals = record.clone().unwrap_or_default();
    let mut sinks = Sinks {
        files: FileSink::new(&crawl.out_dir, &config.output),
        given: sinks,
    };
    sinks.resume(&totals)?;
    let (scope, keywords) = queue_seeds(config, &dedup, &mut frontier, record.is_none())?;

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
    let mut schedule = Schedule::new(shared.base_delay);
    // The fetch tasks: dropped with the crawl (an aborted crawl stops its requests too).
    let mut workers = tokio::task::JoinSet::new();
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
        schedule.requeue_due(&mut frontier, Instant::now());
        // Dispatch what the limits allow.
        let limit_reached = !schedule.room(crawl, totals.fetched);
        if limit_reached && frontier.counts().pending > 0 {
            stopped_early = true;
            page_limit_reached = true;
        }
        let mut wake_at = if stopping || limit_reached {
            None
        } else {
            schedule.dispatch(&mut frontier, crawl, totals.fetched, |task| {
                let shared = Arc::clone(&shared);
                let tx = done_tx.clone();
                workers.spawn(async move {
                    let work = work(&shared, task).await;
                    let _ = tx.send(work);
                });
            })
        };
        if schedule.in_flight == 0
            && (stopping
                || limit_reached
                || (frontier.counts().pending == 0 && schedule.delayed.is_empty()))
        {
            break;
        }
        wake_at = earliest(wake_at, schedule.next_retry());
        // Sinks hand on what they gathered when it is due (the file sink's writer gets
        // its jobs in batches), and the loop wakes up for the next one.
        wake_at = earliest(wake_at, sinks.idle()?);
        let sleep_until = wake_at.unwrap_or_else(|| Instant::now() + Duration::from_secs(1));
        tokio::select! {
            received = done_rx.recv() => {
                if let Some(work) = received {
                    let mut ledger = Ledger {
                        dedup: &dedup,
                        frontier: &mut frontier,
                        sinks: &mut sinks,
                        totals: &mut totals,
                        schedule: &mut schedule,
                    };
                    handle(work, &mut ledger, &shared)?;
                    // Whatever else has finished is handled in the same round, before the
                    // next dispatch.
                    while let Ok(work) = done_rx.try_recv() {
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
                tracing::info!(
                    "stopping: waiting for {} requests, then a checkpoint",
                    schedule.in_flight
                );
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
    schedule.requeue_all(&mut frontier);
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

/// A crawl's state, opened from its directory and rolled back to its last checkpoint.
struct Opened {
    db: sled::Db,
    meta: sled::Tree,
    /// The last checkpoint's record; none for a new crawl.
    record: Option<CheckpointRecord>,
    dedup: Dedup,
    frontier: Frontier,
}

/// Opens the state directory (creating it for a new crawl): the crawl database and its
/// last checkpoint's record, checked against the number committed beside it; the page
/// stage, rolled back to the checkpoint's index; the frontier.
fn open_state(config: &Config, options: &CrawlOptions) -> Result<Opened, CrawlError> {
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
    let index_documents = record.as_ref().map_or(0, |r| r.index_documents);
    let dedup = Dedup::open_at(&state_dir, config, Some(index_documents))?;
    let mut frontier = Frontier::open(
        db.open_tree("frontier")
            .map_err(|e| state_error(crate::db::describe(&e)))?,
        found,
    )
    .map_err(state_error)?;
    if let Some(after) = options.compact_after {
        frontier.set_compaction(after, (after / 16).max(1));
    }
    Ok(Opened {
        db,
        meta,
        record,
        dedup,
        frontier,
    })
}

/// Canonicalizes the seeds, builds the scope from them, and queues those not seen yet;
/// returns the scope and the focus keywords (as tokens). A new crawl needs a seed.
fn queue_seeds(
    config: &Config,
    dedup: &Dedup,
    frontier: &mut Frontier,
    new_crawl: bool,
) -> Result<(Scope, Vec<String>), CrawlError> {
    let crawl = &config.crawl;
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
    if seeds.is_empty() && new_crawl {
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
                .map_err(|problem| CrawlError::State {
                    path: crawl.state_dir.clone(),
                    problem,
                })?;
        }
    }
    Ok((scope, keywords))
}

pub(super) fn read_seed_files(files: &[PathBuf]) -> Result<Vec<String>, CrawlError> {
    let mut seeds = Vec::new();
    for file in files {
        seeds.extend(
            crate::config::read_seed_file(file).map_err(|e| CrawlError::Setup(e.to_string()))?,
        );
    }
    Ok(seeds)
}

/// The earlier of two optional moments.
fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
