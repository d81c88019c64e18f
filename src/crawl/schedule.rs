//! Politeness and dispatch: which hosts' URLs go to the workers now, and what waits.
//!
//! Each host has its own share of the concurrency (`per_host_concurrency`) and a delay
//! between requests (`per_host_delay_ms`, raised by its robots.txt `Crawl-delay` and by a
//! `429` or `Retry-After`). Hosts are taken highest frontier priority first (by name on a
//! tie, so a run is repeatable); a host whose delay is not over is skipped, and the loop
//! wakes up when it is.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::frontier::{Frontier, Task};
use crate::config::CrawlConfig;

/// What the crawl keeps per host.
#[derive(Default)]
pub(super) struct HostState {
    /// Requests to the host in flight.
    pub(super) in_flight: usize,
    /// No request before this moment.
    pub(super) next_allowed: Option<Instant>,
    /// The wait between two requests.
    pub(super) delay: Duration,
}

/// What the loop has handed out and what waits: per-host state, requests in flight, and
/// retries waiting out their backoff.
#[derive(Default)]
pub(super) struct Schedule {
    pub(super) hosts: HashMap<String, HostState>,
    /// Requests in flight, over all hosts.
    pub(super) in_flight: usize,
    /// Tasks waiting out a retry backoff (still in flight for the frontier).
    pub(super) delayed: Vec<(Instant, Task)>,
    /// `per_host_delay_ms`: the delay of a host before anything raised it.
    base_delay: Duration,
}

impl Schedule {
    pub(super) fn new(base_delay: Duration) -> Schedule {
        Schedule {
            base_delay,
            ..Schedule::default()
        }
    }

    /// Retries whose backoff is over go back to the queue.
    pub(super) fn requeue_due(&mut self, frontier: &mut Frontier, now: Instant) {
        let (due, waiting) = std::mem::take(&mut self.delayed)
            .into_iter()
            .partition(|(at, _)| *at <= now);
        self.delayed = waiting;
        for (_, task) in due {
            frontier.retry(task);
        }
    }

    /// Every retry still waiting goes back to the queue (at the end of a run: the next one
    /// takes them up).
    pub(super) fn requeue_all(&mut self, frontier: &mut Frontier) {
        for (_, task) in self.delayed.drain(..) {
            frontier.retry(task);
        }
    }

    /// Whether the page limit leaves room for one more request, with `fetched` pages
    /// fetched.
    pub(super) fn room(&self, crawl: &CrawlConfig, fetched: u64) -> bool {
        crawl.max_pages == 0 || fetched + (self.in_flight as u64) < crawl.max_pages
    }

    /// Hands tasks of ready hosts to `spawn` as far as the limits allow, and returns when
    /// the loop should wake up for a host whose delay is not over (none: no host waits).
    pub(super) fn dispatch(
        &mut self,
        frontier: &mut Frontier,
        crawl: &CrawlConfig,
        fetched: u64,
        mut spawn: impl FnMut(Task),
    ) -> Option<Instant> {
        let now = Instant::now();
        let mut wake_at: Option<Instant> = None;
        let mut ready: Vec<(String, u32)> = frontier
            .ready_hosts()
            .map(|(h, p)| (h.to_string(), p))
            .collect();
        ready.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        for (host, _) in ready {
            if self.in_flight >= crawl.concurrency || !self.room(crawl, fetched) {
                break;
            }
            let base_delay = self.base_delay;
            let state = self.hosts.entry(host.clone()).or_insert_with(|| HostState {
                delay: base_delay,
                ..HostState::default()
            });
            if state.in_flight >= crawl.per_host_concurrency {
                continue;
            }
            if let Some(at) = state.next_allowed.filter(|&at| at > now) {
                wake_at = Some(wake_at.map_or(at, |w| w.min(at)));
                continue;
            }
            // Fill the host's share of the concurrency; with a delay between requests,
            // one request now and the next when the delay is over.
            while state.in_flight < crawl.per_host_concurrency
                && self.in_flight < crawl.concurrency
                && (crawl.max_pages == 0 || fetched + (self.in_flight as u64) < crawl.max_pages)
            {
                let Some(task) = frontier.pop(&host) else {
                    break;
                };
                state.in_flight += 1;
                self.in_flight += 1;
                spawn(task);
                if !state.delay.is_zero() {
                    state.next_allowed = Some(now + state.delay);
                    break;
                }
            }
        }
        wake_at
    }

    /// The earliest moment a waiting retry is due.
    pub(super) fn next_retry(&self) -> Option<Instant> {
        self.delayed.iter().map(|&(at, _)| at).min()
    }
}
