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
use super::frontier::{Frontier, FrontierCounts, Task};
use super::outcome::{Ledger, Sinks, handle};
use super::record::{CRAWL_DB, CheckpointRecord, checkpoint, committed_seq, read_record};
use super::robots::RobotsCache;
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

#[derive(Default)]
pub(super) struct HostState {
    pub(super) in_flight: usize,
    pub(super) next_allowed: Option<Instant>,
    pub(super) delay: Duration,
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

pub(super) fn read_seed_files(files: &[PathBuf]) -> Result<Vec<String>, CrawlError> {
    let mut seeds = Vec::new();
    for file in files {
        seeds.extend(
            crate::config::read_seed_file(file).map_err(|e| CrawlError::Setup(e.to_string()))?,
        );
    }
    Ok(seeds)
}
