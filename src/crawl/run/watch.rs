//! What the crawl loop shows of itself: the metrics' gauges, the status board's totals,
//! and the status file each checkpoint leaves.

use std::time::{Duration, Instant};

use super::Crawl;

/// How often the metrics' gauges and the status board are brought up to date.
const WATCH_EVERY: Duration = Duration::from_millis(250);

/// How often a cluster worker asks Redis for its inbox's depth, for the metrics.
const CLUSTER_WATCH_EVERY: Duration = Duration::from_secs(1);

/// A count as a gauge's value.
fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Crawl<'_> {
    /// Brings the metrics' gauges and the status board's totals up to date, at most every
    /// [`WATCH_EVERY`] (or `now`).
    pub(super) fn watch(&mut self, now: bool) {
        if !now && self.watched.is_some_and(|t| t.elapsed() < WATCH_EVERY) {
            return;
        }
        self.watched = Some(Instant::now());
        let counts = &self.context.counts;
        let frontier = self.frontier.counts();
        counts.frontier_urls.set(to_i64(frontier.pending));
        counts
            .frontier_hosts
            .set(to_i64(self.frontier.hosts().count() as u64));
        counts.in_flight.set(to_i64(self.schedule.in_flight as u64));
        if let (Some(k), Some(w)) = (&counts.cluster, &self.worker) {
            let moved = frontier.moved.saturating_sub(k.moved.get());
            k.moved.inc_by(moved);
            // A round trip to Redis: once a second at most.
            if self
                .cluster_watched
                .is_none_or(|t| t.elapsed() >= CLUSTER_WATCH_EVERY)
            {
                self.cluster_watched = Some(Instant::now());
                let (members, inbox) = w.watch_figures();
                k.members.set(to_i64(members as u64));
                if let Some(inbox) = inbox {
                    k.inbox.set(to_i64(inbox));
                }
            }
        }
        let t = &self.totals;
        let mut board = self
            .context
            .metrics
            .board
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        board.set_totals(crate::metrics::board::Sample {
            at_ms: crate::metrics::epoch_ms(std::time::SystemTime::now()),
            fetched: t.fetched,
            stored: t.stored,
            duplicates: t.duplicates,
            failures: t.failures,
        });
    }

    /// After a checkpoint committed: the metrics learn it, and the status file says it.
    pub(super) fn checkpointed(&mut self, finished: bool) {
        let metrics = &self.context.metrics;
        metrics.checkpointed();
        {
            let mut board = metrics.board.lock().unwrap_or_else(|e| e.into_inner());
            board.checkpoint_seq = self.totals.seq;
            board.finished = finished;
        }
        let counts = &self.context.counts;
        let status = super::super::status::CrawlStatus {
            pid: std::process::id(),
            written_at_ms: crate::metrics::epoch_ms(std::time::SystemTime::now()),
            run_started_at_ms: crate::metrics::epoch_ms(metrics.started),
            finished,
            checkpoint: self.totals.clone(),
            frontier: self.frontier.counts(),
            fetched_this_run: self.totals.fetched - self.fetched_before,
            fetch_seconds: counts.fetch_seconds.quantiles(),
            extraction_seconds: counts.extract_seconds.quantiles(),
            decision_seconds: metrics.decision_seconds.quantiles(),
        };
        // The figures only: a crawl goes on without them.
        if let Err(e) = status.write(&self.config.crawl.state_dir) {
            tracing::warn!(
                "{}: {e}; `stats` on this running crawl shows the figures of an earlier checkpoint",
                self.config
                    .crawl
                    .state_dir
                    .join(super::super::status::STATUS_FILE)
                    .display()
            );
        }
        self.last_status = Some(status);
    }
}
