//! The crawl loop: schedule, fetch, extract, decide, record, follow links, checkpoint.
//!
//! One task owns the state (frontier, page stage decisions, outputs); fetching, robots.txt
//! and extraction run in worker tasks. Every decision that changes the state (a URL queued,
//! a page indexed, a line written) happens in the owning task, so a checkpoint is a
//! consistent cut: outputs flushed and their lengths noted, the index flushed and its size
//! noted, the frontier's changes written, then one record naming all of it (its number also
//! goes to a file beside the database, [`COMMITTED_FILE`](crate::ledger::COMMITTED_FILE), so that a database that loses
//! the record is refused, not taken for a new crawl). After a crash the
//! next run truncates the outputs and rolls the index back to that record, queues again
//! what was pending or in flight, and redoes the work since: no page is stored twice, no
//! URL is lost, no line is torn.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::cluster::Worker;
use super::context::{Context, blocking};
use super::error::CrawlError;
use super::fetch::{FetchConfig, Fetcher};
use super::frontier::{Frontier, FrontierCounts};
use super::options::CrawlOptions;
use super::outcome::{Bookkeeping, Sinks, handle};
use super::record::{CheckpointRecord, CrawlSummary, checkpoint};
use super::schedule::Schedule;
use super::start::{Opened, Seeds, WARC_PAYLOADS, open_state, queue_seeds};
use super::worker::{Work, work};

mod watch;
use crate::config::Config;
use crate::dedup::{Dedup, Sweeper};
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

/// The crawl itself, on its own task. `stop` resolves (or its sender goes away) when the
/// caller asks the crawl to stop.
pub(super) async fn run(
    config: Config,
    options: CrawlOptions,
    sinks: Vec<Box<dyn PageSink>>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) -> Result<CrawlSummary, CrawlError> {
    let started = Instant::now();
    // The address first: a port in use is refused before the state directory is opened.
    let listener = match options.metrics_listen {
        Some(addr) => Some(
            tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| CrawlError::Setup(format!("--metrics {addr}: {e}")))?,
        ),
        None => None,
    };
    let opened = open_state(&config, &options)?;
    let cluster = super::cluster::connect(&config)?;
    let mut crawl = Crawl::new(&config, &options, opened, sinks, cluster.as_ref(), started)?;
    let (watch_stop, watch_stopped) = tokio::sync::oneshot::channel::<()>();
    let watch = listener.map(|listener| {
        if let Ok(addr) = listener.local_addr() {
            tracing::info!("status page on http://{addr}/, metrics on http://{addr}/metrics");
        }
        tokio::spawn(crate::metrics::server::serve(
            listener,
            crawl.context.metrics.clone(),
            async move {
                let _ = watch_stopped.await;
            },
        ))
    });
    let (done_tx, mut done_rx) = mpsc::unbounded_channel::<Work>();
    let mut stop_received = false;
    loop {
        let Some(wake_at) = crawl.dispatch(&done_tx)? else {
            break;
        };
        tokio::select! {
            received = done_rx.recv() => {
                if let Some(work) = received {
                    crawl.drain_results(work, &mut done_rx)?;
                }
            }
            _ = tokio::time::sleep_until(wake_at.into()) => {}
            _ = &mut stop, if !stop_received => {
                stop_received = true;
                if !crawl.stopping() {
                    crawl.ask_stop();
                }
            }
        }
        crawl.show_progress();
        crawl.watch(false);
        let send_now = crawl.tick_cluster()?;
        crawl.maybe_checkpoint(send_now)?;
    }
    let linger = options.metrics_linger;
    let summary = crawl.finish();
    if watch.is_some() && !linger.is_zero() && !stop_received {
        // The final figures stay up for a last scrape, until the time is up or a stop.
        tracing::info!(
            "crawl over: the status page and metrics stay up for {}",
            humantime::format_duration(linger)
        );
        tokio::select! {
            _ = tokio::time::sleep(linger) => {}
            _ = &mut stop => {}
        }
    }
    let _ = watch_stop.send(());
    if let Some(task) = watch {
        let _ = task.await;
    }
    summary
}

fn state_error(config: &Config, problem: String) -> CrawlError {
    CrawlError::State {
        path: config.crawl.state_dir.clone(),
        problem,
    }
}

/// Why the loop dispatches no more work.
enum Stop {
    /// It goes on (until the frontier is empty or a limit is reached).
    No,
    /// The caller asked it to stop: it waits for the requests in flight, then checkpoints.
    Asked,
    /// A cluster error: the crawl stops as when asked, then returns the error (the first
    /// one wins). Nothing is sent at the last checkpoint; it is kept for the next start.
    Fault(CrawlError),
}

/// The loop's state, owned by the crawl's task.
struct Crawl<'a> {
    config: &'a Config,
    options: &'a CrawlOptions,
    db: sled::Db,
    meta: sled::Tree,
    dedup: Arc<Dedup>,
    sweeper: Sweeper,
    frontier: Frontier,
    sinks: Sinks,
    totals: CheckpointRecord,
    /// This process as a worker of a cluster crawl.
    worker: Option<Worker<'a>>,
    context: Arc<Context>,
    schedule: Schedule,
    /// The fetch tasks: dropped with the crawl (an aborted crawl stops its requests too).
    workers: tokio::task::JoinSet<()>,
    last_checkpoint: Instant,
    stop: Stop,
    /// The page limit was reached with URLs still queued.
    page_limit_reached: bool,
    bar: Option<indicatif::ProgressBar>,
    /// The run's start: rates in the log use the same clock as the summary's.
    started: Instant,
    /// Pages fetched before this run.
    fetched_before: u64,
    /// When the metrics' gauges and the status board were last brought up to date.
    watched: Option<Instant>,
    /// What the last status file said.
    last_status: Option<super::status::CrawlStatus>,
    /// When the cluster's figures were last asked of Redis.
    cluster_watched: Option<Instant>,
}

impl<'a> Crawl<'a> {
    /// Starts the sweeper, resumes the sinks, starts the worker on a cluster, queues the
    /// seeds, and builds the fetch context.
    fn new(
        config: &'a Config,
        options: &'a CrawlOptions,
        opened: Opened,
        sinks: Vec<Box<dyn PageSink>>,
        cluster: Option<&'a super::cluster::Cluster>,
        started: Instant,
    ) -> Result<Self, CrawlError> {
        let crawl = &config.crawl;
        let Opened {
            db,
            meta,
            record,
            dedup,
            mut frontier,
        } = opened;
        // The windows are swept in the background; a step holds the stage's locks for a
        // few milliseconds at most.
        let dedup = Arc::new(dedup);
        let sweeper = Sweeper::start(dedup.clone());
        let mut totals = record.clone().unwrap_or_default();
        let mut sinks = Sinks {
            files: FileSink::new(&crawl.out_dir, &config.output).with_payloads(
                db.open_tree(WARC_PAYLOADS)
                    .map_err(|e| state_error(config, crate::db::describe(&e)))?,
            ),
            given: sinks,
        };
        sinks.resume(&totals)?;
        let mut worker = match cluster {
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
        let Seeds {
            scope,
            keywords,
            requeued,
        } = queue_seeds(
            config,
            &dedup,
            &mut frontier,
            worker.as_mut(),
            record.is_none(),
        )?;
        let (metrics, counts) = crate::metrics::Metrics::for_crawl(dedup.clone(), worker.is_some());
        // A seed refused before and queued again: its failure line stays in failures.jsonl
        // (a log), but no longer counts; its new outcome will.
        totals.failures = totals.failures.saturating_sub(requeued);
        let context = Arc::new(Context {
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
            follow_links_of: crawl.follow_links_of,
            base_delay: Duration::from_millis(crawl.per_host_delay_ms),
            metrics,
            counts,
        });
        let bar = options.progress_bar.then(|| {
            let bar = indicatif::ProgressBar::new_spinner();
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        Ok(Crawl {
            config,
            options,
            db,
            meta,
            sweeper,
            frontier,
            sinks,
            fetched_before: totals.fetched,
            totals,
            worker,
            schedule: Schedule::new(context.base_delay),
            context,
            dedup,
            workers: tokio::task::JoinSet::new(),
            last_checkpoint: Instant::now(),
            stop: Stop::No,
            page_limit_reached: false,
            bar,
            started,
            watched: None,
            last_status: None,
            cluster_watched: None,
        })
    }

    fn stopping(&self) -> bool {
        !matches!(self.stop, Stop::No)
    }

    fn ask_stop(&mut self) {
        self.stop = Stop::Asked;
        tracing::info!(
            "stopping: waiting for {} requests, then a checkpoint",
            self.schedule.in_flight
        );
    }

    /// Keeps a cluster error (the crawl stops with a checkpoint, then returns it; the first
    /// one wins); any other error ends the crawl at once.
    fn fail(&mut self, e: CrawlError) -> Result<(), CrawlError> {
        let e = cluster_fault(e)?;
        match self.stop {
            Stop::Fault(_) => {}
            Stop::Asked => self.stop = Stop::Fault(e),
            Stop::No => {
                tracing::error!(
                    "stopping: {e}; waiting for {} requests, then a checkpoint",
                    self.schedule.in_flight
                );
                self.stop = Stop::Fault(e);
            }
        }
        Ok(())
    }

    /// Queues again the retries that are due and hands out what the limits allow. Returns
    /// when the loop must wake up next, or none when the crawl is over: nothing in flight,
    /// and nothing more to do or a stop.
    fn dispatch(
        &mut self,
        done: &mpsc::UnboundedSender<Work>,
    ) -> Result<Option<Instant>, CrawlError> {
        let crawl = &self.config.crawl;
        self.schedule
            .requeue_due(&mut self.frontier, Instant::now());
        let limit_reached = !self.schedule.room(crawl, self.totals.fetched);
        if limit_reached && self.frontier.counts().pending > 0 {
            self.page_limit_reached = true;
        }
        let mut wake_at = if self.stopping() || limit_reached {
            None
        } else {
            let (context, workers) = (&self.context, &mut self.workers);
            self.schedule
                .dispatch(&mut self.frontier, crawl, self.totals.fetched, |task| {
                    let context = Arc::clone(context);
                    let done = done.clone();
                    workers.spawn(async move {
                        let work = work(&context, task).await;
                        let _ = done.send(work);
                    });
                })
        };
        let idle = self.schedule.in_flight == 0
            && self.frontier.counts().pending == 0
            && self.schedule.delayed.is_empty();
        // On a cluster, an idle worker waits for links from the others until the whole
        // crawl is done.
        let done = idle && self.worker.as_ref().is_none_or(|w| w.crawl_done());
        if self.schedule.in_flight == 0 && (self.stopping() || limit_reached || done) {
            return Ok(None);
        }
        wake_at = earliest(wake_at, self.schedule.next_retry());
        if self.worker.is_some() {
            wake_at = earliest(wake_at, Some(Instant::now() + CLUSTER_TICK));
        }
        // Sinks hand on what they gathered when it is due (the file sink's writer gets
        // its jobs in batches), and the loop wakes up for the next one.
        wake_at = earliest(wake_at, self.sinks.idle()?);
        Ok(Some(wake_at.unwrap_or_else(|| {
            Instant::now() + Duration::from_secs(1)
        })))
    }

    /// Handles a finished fetch, and whatever else has finished, before the next dispatch.
    fn drain_results(
        &mut self,
        first: Work,
        done: &mut mpsc::UnboundedReceiver<Work>,
    ) -> Result<(), CrawlError> {
        let mut ledger = Bookkeeping {
            dedup: &self.dedup,
            frontier: &mut self.frontier,
            sinks: &mut self.sinks,
            totals: &mut self.totals,
            schedule: &mut self.schedule,
            worker: self.worker.as_mut(),
        };
        let mut handled = handle(first, &mut ledger, &self.context);
        while handled.is_ok() {
            let Ok(work) = done.try_recv() else { break };
            handled = handle(work, &mut ledger, &self.context);
        }
        // The finished tasks leave the set.
        while self.workers.try_join_next().is_some() {}
        match handled {
            Ok(()) => Ok(()),
            Err(e) => self.fail(e),
        }
    }

    fn progress(&self) -> String {
        let line = progress_line(
            &self.totals,
            &self.frontier.counts(),
            self.started,
            self.fetched_before,
        );
        match &self.worker {
            Some(worker) => format!("{} | {line}", worker.label()),
            None => line,
        }
    }

    fn show_progress(&self) {
        if let Some(bar) = &self.bar {
            bar.set_message(self.progress());
        }
    }

    /// On a cluster: reads the inbox and beats the heartbeat. Returns whether what waits to
    /// be sent should go now (an idle worker sends at once: the others may be waiting).
    fn tick_cluster(&mut self) -> Result<bool, CrawlError> {
        if matches!(self.stop, Stop::Fault(_)) {
            return Ok(false);
        }
        let Some(w) = self.worker.as_mut() else {
            return Ok(false);
        };
        let idle = self.schedule.in_flight == 0 && self.frontier.counts().pending == 0;
        let ticked = w.tick(&self.dedup, &mut self.frontier, idle);
        let send_now = idle && w.unsent() && self.last_checkpoint.elapsed() >= CLUSTER_TICK;
        if let Err(e) = ticked {
            self.fail(e)?;
        }
        Ok(send_now)
    }

    /// A checkpoint when one is due (or `now`), then the frontier's compaction.
    fn maybe_checkpoint(&mut self, now: bool) -> Result<(), CrawlError> {
        // Zero: no checkpoints on the way, only at the end (as the sidecar's 0).
        let every = self.options.checkpoint_every;
        let due = !every.is_zero() && self.last_checkpoint.elapsed() >= every;
        if !(due || now) {
            return Ok(());
        }
        let saved = blocking(|| self.save(true))?;
        self.checkpointed(false);
        if let Saved::SendFailed(e) = saved {
            self.fail(e)?;
        }
        self.frontier.compact()?;
        self.last_checkpoint = Instant::now();
        if self.bar.is_none() {
            tracing::info!("{}", self.progress());
        }
        Ok(())
    }

    /// A checkpoint; on a cluster, what it must send is written into it first and sent
    /// once it committed (unless `send` is false).
    fn save(&mut self, send: bool) -> Result<Saved, CrawlError> {
        if let Some(w) = self.worker.as_mut() {
            w.before_checkpoint(&self.frontier, &self.totals, &self.meta)?;
        }
        self.sinks.checkpoint(&mut self.totals)?;
        checkpoint(
            &self.db,
            &self.meta,
            &self.dedup,
            &mut self.frontier,
            &mut self.totals,
        )?;
        Ok(match self.worker.as_mut() {
            Some(w) if send => match w.after_checkpoint(&self.meta) {
                Err(e) => Saved::SendFailed(e),
                Ok(()) => Saved::Sent,
            },
            _ => Saved::Sent,
        })
    }

    /// The last checkpoint, the cluster left, the index closed; the summary.
    fn finish(mut self) -> Result<CrawlSummary, CrawlError> {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        // Retries still waiting out their backoff go back to the queue for the next run.
        self.schedule.requeue_all(&mut self.frontier);
        let faulted = matches!(self.stop, Stop::Fault(_));
        if let (Some(w), false) = (self.worker.as_mut(), faulted) {
            // A clean stop on a cluster: the others take this worker's pending URLs.
            w.hand_over(&mut self.frontier);
        }
        // After a cluster error nothing is sent: the checkpoint keeps it for the next start.
        let saved = self.save(!faulted)?;
        self.watch(true);
        self.checkpointed(true);
        if let Saved::SendFailed(e) = saved {
            let e = cluster_fault(e)?;
            if !faulted {
                self.stop = Stop::Fault(e);
            }
        }
        let stopped_early = self.stopping() || self.page_limit_reached;
        if let Stop::Fault(e) = std::mem::replace(&mut self.stop, Stop::No) {
            return Err(e);
        }
        if !self.options.progress_bar {
            // The last line of the log gives the figures the summary gives.
            tracing::info!("{}", self.progress());
        }
        if let Some(w) = self.worker.take() {
            w.leave()?;
        }
        self.sweeper.stop();
        drop(self.sweeper);
        // The metrics keep the stage's last figures and let it go, so that it closes here.
        self.context.metrics.release_stage();
        // The last checkpoint above saved everything; closing writes the index's snapshot,
        // so that the next run opens it at once. A failure costs the next run a rebuild
        // only.
        match Arc::try_unwrap(self.dedup) {
            Ok(dedup) => {
                if let Err(e) = dedup.close_index() {
                    tracing::warn!("{e}; the next run rebuilds the index's tables");
                }
            }
            Err(_) => tracing::warn!("the page stage is still in use at the end of the crawl"),
        }
        Ok(CrawlSummary {
            fetched_this_run: self.totals.fetched - self.fetched_before,
            frontier: self.frontier.counts(),
            totals: self.totals,
            seconds: self.started.elapsed().as_secs_f64(),
            page_limit_reached: self.page_limit_reached,
            stopped_early,
            running: None,
            status: self.last_status.take(),
        })
    }
}

/// How often a worker of a cluster looks at its inbox and heartbeat.
const CLUSTER_TICK: Duration = Duration::from_millis(50);

/// A cluster error, to keep until the crawl has stopped with a checkpoint; any other error
/// is returned at once.
fn cluster_fault(e: CrawlError) -> Result<CrawlError, CrawlError> {
    match e {
        #[cfg(feature = "cluster")]
        CrawlError::Cluster(_) => Ok(e),
        other => Err(other),
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

/// The earlier of two optional moments.
fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
