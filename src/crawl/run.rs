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

use super::cluster::Worker;
use super::context::{Context, blocking};
use super::error::CrawlError;
use super::fetch::{FetchConfig, Fetcher};
use super::frontier::{Frontier, FrontierCounts};
use super::options::CrawlOptions;
use super::outcome::{Ledger, Sinks, enqueue, handle};
use super::record::CrawlSummary;
use super::record::{CRAWL_DB, CheckpointRecord, checkpoint, committed_seq, read_record};
use super::schedule::Schedule;
use super::scope::{Scope, priority};
use super::worker::{Work, work};
use crate::config::Config;
use crate::dedup::{Dedup, DedupError, Sweeper};
use crate::store::PageSink;
use crate::store::files::FileSink;

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
/// A progress line with the worker's id and share of hosts in front, on a cluster.
fn labelled(worker: Option<&Worker<'_>>, line: String) -> String {
    match worker {
        Some(worker) => format!("{} | {line}", worker.label()),
        None => line,
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
    // The windows are swept in the background; a step holds the stage's locks for a few
    // milliseconds at most.
    let dedup = Arc::new(dedup);
    let mut sweeper = Sweeper::start(dedup.clone());
    let mut totals = record.clone().unwrap_or_default();
    let mut sinks = Sinks {
        files: FileSink::new(&crawl.out_dir, &config.output).with_payloads(
            db.open_tree(WARC_PAYLOADS)
                .map_err(|e| state_error(crate::db::describe(&e)))?,
        ),
        given: sinks,
    };
    sinks.resume(&totals)?;
    let cluster = super::cluster::connect(config)?;
    let mut worker = match &cluster {
        Some(cluster) => Some(Worker::start(
            cluster,
            config,
            &meta,
            totals.seq,
            &dedup,
            &mut frontier,
        )?),
        None => None,
    };
    let (scope, keywords) = queue_seeds(
        config,
        &dedup,
        &mut frontier,
        worker.as_mut(),
        record.is_none(),
    )?;

    let shared = Arc::new(Context {
        fetcher: Fetcher::new(FetchConfig::from_crawl(crawl))
            .map_err(|e| CrawlError::Setup(e.to_string()))?,
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
    // A cluster error: the crawl stops with a checkpoint and returns it.
    let mut fault: Option<CrawlError> = None;

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
        let idle = schedule.in_flight == 0
            && frontier.counts().pending == 0
            && schedule.delayed.is_empty();
        // On a cluster, an idle worker waits for links from the others until the whole
        // crawl is done.
        let done = idle && worker.as_ref().is_none_or(|w| w.crawl_done());
        if schedule.in_flight == 0 && (stopping || limit_reached || done) {
            break;
        }
        wake_at = earliest(wake_at, schedule.next_retry());
        if worker.is_some() {
            wake_at = earliest(wake_at, Some(Instant::now() + CLUSTER_TICK));
        }
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
                        worker: worker.as_mut(),
                    };
                    let mut handled = handle(work, &mut ledger, &shared);
                    // Whatever else has finished is handled in the same round, before the
                    // next dispatch.
                    while handled.is_ok() {
                        let Ok(work) = done_rx.try_recv() else { break };
                        handled = handle(work, &mut ledger, &shared);
                    }
                    if let Err(e) = handled {
                        fault = Some(cluster_fault(e, fault.take())?);
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
            bar.set_message(labelled(
                worker.as_ref(),
                progress_line(&totals, &frontier.counts(), run_started, fetched_before),
            ));
        }
        // Zero: no checkpoints on the way, only at the end (as the sidecar's 0).
        let mut checkpoint_now = !options.checkpoint_every.is_zero()
            && last_checkpoint.elapsed() >= options.checkpoint_every;
        if let (Some(w), None) = (worker.as_mut(), &fault) {
            let idle = schedule.in_flight == 0 && frontier.counts().pending == 0;
            if let Err(e) = w.tick(&dedup, &mut frontier, idle) {
                fault = Some(cluster_fault(e, None)?);
            }
            // An idle worker sends what waits at once: the others may be waiting for it.
            checkpoint_now |= idle && w.unsent() && last_checkpoint.elapsed() >= CLUSTER_TICK;
        }
        if fault.is_some() && !stopping {
            stopping = true;
            stopped_early = true;
            tracing::error!(
                "stopping: {}; waiting for {} requests, then a checkpoint",
                fault.as_ref().map(|e| e.to_string()).unwrap_or_default(),
                schedule.in_flight
            );
        }
        if checkpoint_now {
            let state = State {
                db: &db,
                meta: &meta,
                dedup: &dedup,
            };
            let sent = blocking(|| {
                save(
                    &state,
                    &mut frontier,
                    &mut sinks,
                    &mut totals,
                    worker.as_mut().map(|w| (w, true)),
                )
            })?;
            if let Saved::SendFailed(e) = sent {
                fault = Some(cluster_fault(e, fault.take())?);
            }
            frontier.compact()?;
            last_checkpoint = Instant::now();
            if bar.is_none() {
                tracing::info!(
                    "{}",
                    labelled(
                        worker.as_ref(),
                        progress_line(&totals, &frontier.counts(), run_started, fetched_before)
                    )
                );
            }
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    // Retries still waiting out their backoff go back to the queue for the next run.
    schedule.requeue_all(&mut frontier);
    if let (Some(w), None) = (worker.as_mut(), &fault) {
        // A clean stop on a cluster: the others take this worker's pending URLs.
        w.hand_over(&mut frontier);
    }
    let state = State {
        db: &db,
        meta: &meta,
        dedup: &dedup,
    };
    // After a cluster error nothing is sent: the checkpoint keeps it for the next start.
    let send = fault.is_none();
    let sent = save(
        &state,
        &mut frontier,
        &mut sinks,
        &mut totals,
        worker.as_mut().map(|w| (w, send)),
    )?;
    if let Saved::SendFailed(e) = sent {
        fault = Some(cluster_fault(e, fault.take())?);
    }
    if let Some(fault) = fault {
        return Err(fault);
    }
    if !options.progress_bar {
        // The last line of the log gives the figures the summary gives.
        tracing::info!(
            "{}",
            labelled(
                worker.as_ref(),
                progress_line(&totals, &frontier.counts(), run_started, fetched_before)
            )
        );
    }
    if let Some(w) = worker {
        w.leave()?;
    }
    sweeper.stop();
    drop(sweeper);
    // The last checkpoint above saved everything; closing writes the index's snapshot, so
    // that the next run opens it at once. A failure costs the next run a rebuild only.
    match Arc::try_unwrap(dedup) {
        Ok(dedup) => {
            if let Err(e) = dedup.close_index() {
                tracing::warn!("{e}; the next run rebuilds the index's tables");
            }
        }
        Err(_) => tracing::warn!("the page stage is still in use at the end of the crawl"),
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

/// How often a worker of a cluster looks at its inbox and heartbeat.
const CLUSTER_TICK: Duration = Duration::from_millis(50);

/// A cluster error is kept (the crawl stops with a checkpoint, then returns it; the first
/// one wins); any other error ends the crawl at once.
fn cluster_fault(e: CrawlError, earlier: Option<CrawlError>) -> Result<CrawlError, CrawlError> {
    match e {
        #[cfg(feature = "cluster")]
        CrawlError::Cluster(_) => Ok(earlier.unwrap_or(e)),
        other => {
            let _ = earlier;
            Err(other)
        }
    }
}

/// What a checkpoint did with what a worker of a cluster had to send.
enum Saved {
    /// Sent, or nothing to send.
    Sent,
    /// The checkpoint committed, but sending failed: it is sent again at the next
    /// checkpoint or start.
    SendFailed(CrawlError),
}

/// The crawl database and the page stage, for a checkpoint.
struct State<'a> {
    db: &'a sled::Db,
    meta: &'a sled::Tree,
    dedup: &'a Dedup,
}

/// A checkpoint; on a cluster, what it must send is written into it first and sent once
/// it committed (unless `send` is false).
fn save(
    state: &State<'_>,
    frontier: &mut Frontier,
    sinks: &mut Sinks,
    totals: &mut CheckpointRecord,
    worker: Option<(&mut Worker<'_>, bool)>,
) -> Result<Saved, CrawlError> {
    match worker {
        Some((w, send)) => {
            w.before_checkpoint(frontier, totals, state.meta)?;
            sinks.checkpoint(totals)?;
            checkpoint(state.db, state.meta, state.dedup, frontier, totals)?;
            Ok(match send.then(|| w.after_checkpoint(state.meta)) {
                Some(Err(e)) => Saved::SendFailed(e),
                _ => Saved::Sent,
            })
        }
        None => {
            sinks.checkpoint(totals)?;
            checkpoint(state.db, state.meta, state.dedup, frontier, totals)?;
            Ok(Saved::Sent)
        }
    }
}

/// The tree of the crawl database where the WARC writer keeps the payload digest of each
/// response it archived, by URL.
const WARC_PAYLOADS: &str = "warc-payloads";

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
    crate::dedup::check_memory(&state_dir, config).map_err(DedupError::from)?;
    crate::db::create_state_dir(&state_dir).map_err(|e| CrawlError::State {
        path: state_dir.clone(),
        problem: e.to_string(),
    })?;
    let state_error = |problem: String| CrawlError::State {
        path: state_dir.clone(),
        problem,
    };
    // Before anything is created: a part that is gone must not be started anew.
    if let Err(mismatches) = crate::ledger::check(&state_dir) {
        return Err(state_error(crate::ledger::refusal(&mismatches)));
    }
    let db = crate::db::open(&sled::Config::new().path(state_dir.join(CRAWL_DB)))
        .map_err(|e| state_error(crate::db::describe(&e)))?;
    let meta = db
        .open_tree("meta")
        .map_err(|e| state_error(crate::db::describe(&e)))?;
    let record = read_record(&meta).map_err(&state_error)?;
    // The database must hold the last checkpoint the state directory knows was committed:
    // an emptied, replaced or cut database would otherwise roll the index and the outputs
    // back without a word.
    let committed = committed_seq(&state_dir).map_err(|e| state_error(e.to_string()))?;
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
    if let Some(problem) = record.as_ref().and_then(|r| r.foreign_to(dedup.state_id())) {
        return Err(state_error(format!(
            "damaged: {problem}; nothing was changed: restore the state directory from a \
             backup, or start a new one"
        )));
    }
    dedup.raise_ledger(index_documents, Some(found))?;
    let dedup = match &options.clock {
        Some(clock) => dedup.with_clock(clock.clone()),
        None => dedup,
    };
    let mut frontier = Frontier::open(
        db.open_tree("frontier")
            .map_err(|e| state_error(crate::db::describe(&e)))?,
        found,
    )
    .map_err(|e| match e {
        // What the frontier holds is unreadable: the state directory is damaged.
        super::frontier::FrontierError::Damaged(_) => state_error(e.to_string()),
        other => CrawlError::Frontier(other),
    })?;
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
    worker: Option<&mut Worker<'_>>,
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
    // A seed the SSRF guard refuses: said at once, not after its retries; a later run
    // with the guard lifted fetches it, though an earlier one recorded it as failed.
    for url in &seeds {
        let Some(reason) = super::guard::private_address(url) else {
            continue;
        };
        if !crawl.allow_private_ips {
            tracing::warn!("seed {url}: refused: {reason}");
        } else if frontier.requeue_failed(url)? {
            tracing::info!("seed {url}: refused in an earlier run, queued again");
        }
    }
    let scope = Scope::new(config, &seeds)?;
    let keywords: Vec<String> = config
        .focus
        .keywords
        .iter()
        .flat_map(|k| crate::fingerprint::tokens(k))
        .collect();
    let seeds = seeds
        .into_iter()
        .map(|url| (url, 0, priority(&keywords, 0, 0)))
        .collect();
    enqueue(dedup, frontier, worker, seeds)?;
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
