//! A crawl as one worker of several (`[cluster]`, `crawldedup crawl --cluster`): the parts
//! of [`crate::cluster`] wired into the crawl loop.
//!
//! Each worker keeps its own state directory (frontier, outputs, checkpoints) and shares
//! four things through Redis Cluster: the live set (the host ring), the inboxes, the URL
//! filter and the near-duplicate index.
//!
//! - **Start.** With `cluster.wait_for_workers` N above 1, a worker that joins a crawl not
//!   yet started waits, heartbeating, until N workers are alive, and the first to see them
//!   marks the crawl started (`{NAME}:started`); a worker joining a started crawl (a
//!   restart, one more machine) does not wait. So the first worker up does not fetch every
//!   host before the others join. A wait past `cluster.start_wait_ms` leaves the live set
//!   and stops with one line naming how many joined.
//! - **Hosts.** A worker fetches only the hosts the ring gives it. A link to another
//!   worker's host goes to that worker's inbox; a pending URL of a host that moved (the
//!   ring changed) goes to the new owner's inbox marked *moved*. Both are written into the
//!   checkpoint that records the page done or the URL moved and sent once it committed,
//!   so a worker killed or cut off from Redis in between sends them at its next start;
//!   receivers ignore what their frontier already holds.
//! - **URLs.** The worker that finds a link notes it in `NAME:recent:{ID}`, then asks the
//!   cluster's filter (one atomic check-and-insert): of all workers, one is told `new`, and
//!   the URL goes to its host's owner (its own frontier or the owner's inbox). The list is
//!   cleared at the next checkpoint; a worker killed before it queues or hands on the
//!   list's URLs again at its restart, and the list of a worker that never comes back is
//!   moved by the others. So a URL answered `new` is never lost; it can be fetched twice.
//! - **Pending URLs.** After each checkpoint the worker mirrors its pending and in-flight
//!   URLs to the hash `NAME:pending:{ID}`. When a worker is gone (its heartbeat expired,
//!   or it left), the first worker to notice moves that hash and the dead worker's inbox
//!   to the new owners (under a lock) and marks `NAME:taken:{ID}`; a worker that comes
//!   back under that id finds the mark and mirrors its pending URLs afresh.
//! - **Pages.** Decided against the shared index ([`crate::cluster::index`]); documents
//!   this worker kept are committed there after the checkpoint that made them durable.
//!
//! What is sent after a checkpoint (the links for others' inboxes, the cluster filter's
//! inserts, the pending mirror, the commits, the inbox acknowledgements) is first written
//! into the checkpoint itself, and sent again at the next start when a crash or a lost
//! Redis node came between; a checkpoint needs no network, so a worker cut off from Redis
//! still stops with one.
//!
//! The crawl ends when every live worker is idle (nothing pending or in flight, nothing
//! waiting to be sent) and every live worker's inbox is empty, seen so at two heartbeats
//! in a row.
//!
//! The windows that remain are documented in docs/cluster.md ("Running on several machines").

use std::collections::{BTreeSet, HashSet};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use url::Url;

use super::error::CrawlError;
use super::frontier::{Frontier, TaskState, host_key};
use super::record::CheckpointRecord;
pub(super) use crate::cluster::filter::Cluster;
use crate::cluster::filter::{ClusterError, ClusterFilter};
use crate::cluster::inbox::{self, Handoff, Inbox};
use crate::cluster::index::{SharedDecision, SharedIndex};
use crate::cluster::keys::{
    idle_key, known_key, parse_recent, pending_key, recent_entry, recent_key, taken_key,
};
use crate::cluster::members::{Beater, Membership};
use crate::cluster::ring::{Member, Ring};
use crate::cluster::stats::stats_key;
use crate::config::Config;
use crate::dedup::{Dedup, Original, PageVerdict, UrlVerdict};
use crate::index::DocId;
use crate::page::Prepared;
use crate::store::warc::WarcPosition;

/// The crawl database key of what the last checkpoint has to send to the cluster.
use crate::crawl::record::PUBLISH_KEY;

/// How often the inbox is read.
const RECEIVE_EVERY: Duration = Duration::from_millis(50);

/// Inbox entries read at a time.
const RECEIVE_MAX: usize = 1000;

/// Pending URLs moved per command when a gone worker's hash is rerouted.
const MOVE_PAGE: usize = 1000;

/// What a checkpoint has to send to the cluster once it committed.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Publish {
    /// The checkpoint's number.
    seq: u64,
    /// Links and moved URLs for other workers' inboxes (host, link).
    handoffs: Vec<(String, Handoff)>,
    /// Whether the list of URLs answered new since the last checkpoint is cleared (not
    /// when a start sends what the last checkpoint left: that list is not covered yet).
    clear_recent: bool,
    /// Changes to the pending mirror, in order: pending or in flight (URL, depth and
    /// priority), or done, failed or moved (URL, none).
    mirror: Vec<(String, Option<(u32, u32)>)>,
    /// Documents this worker kept: committed in the shared index.
    docs: Vec<DocId>,
    /// Inbox entries whose links the checkpoint holds.
    acks: Vec<String>,
    /// The worker's figures, for `crawldedup stats --cluster`.
    stats: String,
    /// Where the outputs stood at the last checkpoint whose publish went in full: this
    /// one's pages lie after it. `crawldedup repair --cluster` cuts the outputs of a
    /// worker that is not coming back to it when none of `docs` reached the cluster (the
    /// others redo those pages).
    #[serde(default)]
    before: Option<([u64; 3], WarcPosition)>,
}

/// A cluster error as the crawl's.
pub(crate) fn cluster_error(e: ClusterError) -> CrawlError {
    CrawlError::Cluster(e)
}

/// The Redis Cluster of a crawl on several machines, when the configuration names one.
/// Unreachable at the start is a setup error: nothing was started, as for `stats --cluster`.
pub(crate) fn connect(config: &Config) -> Result<Option<Cluster>, CrawlError> {
    if !config.cluster.enabled() {
        return Ok(None);
    }
    Cluster::connect_riding_out(
        &config.cluster.nodes,
        Duration::from_millis(config.cluster.failover_wait_ms),
    )
    .map(Some)
    .map_err(|e| CrawlError::Setup(format!("cluster: {e}")))
}

/// This process as a worker of a cluster crawl.
pub(crate) struct Worker<'c> {
    cluster: &'c Cluster,
    name: String,
    membership: Membership<'c>,
    /// The heartbeat, from a thread of its own (see [`Membership::beat_in_background`]).
    beater: Beater,
    filter: ClusterFilter<'c>,
    index: SharedIndex<'c>,
    inbox: Inbox<'c>,
    ring: Ring,
    heartbeat_every: Duration,
    last_heartbeat: Instant,
    last_receive: Instant,
    /// Links and moved URLs for other workers, sent after the next checkpoint.
    outbox: Vec<(String, Handoff)>,
    /// Inbox entries read since the last checkpoint.
    received: Vec<String>,
    /// Documents kept since the last checkpoint.
    kept: Vec<DocId>,
    /// What the last checkpoint has to send.
    publish: Option<Publish>,
    /// Heartbeats in a row at which the whole crawl looked done.
    done_streak: u32,
}

/// What the last checkpoint had to send and may not have sent (none if it was written
/// after the checkpoint that committed: it is redone).
fn read_publish(
    config: &Config,
    meta: &sled::Tree,
    committed: u64,
) -> Result<Option<Publish>, CrawlError> {
    Ok(meta
        .get(PUBLISH_KEY)
        .map_err(CrawlError::database)?
        .map(|bytes| serde_json::from_slice::<Publish>(&bytes))
        .transpose()
        .map_err(|e| CrawlError::State {
            path: config.crawl.state_dir.clone(),
            problem: format!("crawl database: {PUBLISH_KEY:?} is unreadable: {e}"),
        })?
        .filter(|p| p.seq <= committed))
}

impl<'c> Worker<'c> {
    /// Joins the crawl: sends what the last checkpoint had not sent, joins the live set
    /// (waiting out this id's previous process, killed before its heartbeat expired),
    /// hands on the pending URLs of hosts that are not its own, and queues what its inbox
    /// delivered before a restart and was not acknowledged.
    pub(crate) fn start(
        cluster: &'c Cluster,
        config: &Config,
        meta: &sled::Tree,
        committed: u64,
        dedup: &Dedup,
        frontier: &mut Frontier,
    ) -> Result<Worker<'c>, CrawlError> {
        let c = &config.cluster;
        let name = c.name.clone();
        let ttl = Duration::from_millis(c.heartbeat_ttl_ms);
        let u = &config.url_filter;
        let filter = ClusterFilter::open_with(cluster, &name, &u.seen_config())
            .map_err(cluster_error)?
            .with_clock(dedup.clock());
        let index = SharedIndex::open(cluster, &name, crate::dedup::index_config(config))
            .map_err(cluster_error)?
            .with_clock(dedup.clock());
        let leftover = read_publish(config, meta, committed)?;
        let membership = Membership::join_waiting(
            cluster,
            &name,
            Member::new(c.worker_id.clone(), c.weight),
            ttl,
            ttl + Duration::from_secs(1),
        )
        .map_err(cluster_error)?;
        cluster
            .with(|con| {
                redis::cmd("SADD")
                    .arg(known_key(&name))
                    .arg(&c.worker_id)
                    .exec(con)
            })
            .map_err(cluster_error)?;
        // Opened once alive: a worker taken for dead has its inbox moved and deleted.
        let inbox = Inbox::open(cluster, &name, &c.worker_id).map_err(cluster_error)?;
        let index = index.owned_by(&c.worker_id, membership.incarnation());
        let ring = match membership.wait_for(
            c.wait_for_workers as usize,
            Duration::from_millis(c.start_wait_ms),
        ) {
            Ok(ring) => ring,
            Err(e) => {
                // Out of the live set at once: nothing was taken on yet.
                let _ = membership.leave();
                return Err(cluster_error(e));
            }
        };
        let beater = match membership.beat_in_background() {
            Ok(beater) => beater,
            Err(e) => {
                let _ = membership.leave();
                return Err(cluster_error(e));
            }
        };
        let mut worker = Worker {
            cluster,
            name,
            membership,
            beater,
            filter,
            index,
            inbox,
            ring,
            heartbeat_every: ttl / 3,
            last_heartbeat: Instant::now(),
            last_receive: Instant::now(),
            outbox: Vec::new(),
            received: Vec::new(),
            kept: Vec::new(),
            publish: leftover,
            done_streak: 0,
        };
        worker.catch_up(meta, dedup, frontier)?;
        tracing::info!(
            "worker {} joined crawl `{}` with {} live workers; its share of hosts: {:.1}%",
            worker.id(),
            worker.name,
            worker.ring.members().len(),
            worker.share() * 100.0
        );
        Ok(worker)
    }

    /// What a worker does once it joined: queues again what the cluster answered new for
    /// it since its last checkpoint, sends what that checkpoint had to send, mirrors its
    /// pending URLs afresh if its hash went to the others, hands on what is no longer its
    /// own, and queues what its inbox delivered and it did not acknowledge.
    fn catch_up(
        &mut self,
        meta: &sled::Tree,
        dedup: &Dedup,
        frontier: &mut Frontier,
    ) -> Result<(), CrawlError> {
        let (cluster, worker) = (self.cluster, self);
        // URLs the cluster answered new for this worker since its last checkpoint: its
        // frontier lost them if it was killed, so they are queued or handed on again (a
        // frontier ignores what it holds); the list is cleared at the next checkpoint.
        let recent: Vec<String> = cluster
            .with(|con| {
                redis::cmd("LRANGE")
                    .arg(recent_key(&worker.name, worker.id()))
                    .arg(0)
                    .arg(-1)
                    .query(con)
            })
            .map_err(cluster_error)?;
        for (url, depth, priority) in recent.iter().filter_map(|l| parse_recent(l)) {
            dedup.check_canonical(url.clone())?;
            worker.route(url, depth, priority, dedup, frontier)?;
        }
        // What the last checkpoint had to send.
        if let Some(leftover) = &mut worker.publish {
            leftover.clear_recent = false;
        }
        worker.after_checkpoint(meta)?;
        let taken: bool = cluster
            .with(|con| {
                redis::cmd("EXISTS")
                    .arg(taken_key(&worker.name, worker.id()))
                    .query(con)
            })
            .map_err(cluster_error)?;
        if taken {
            // The hash went to the others while this worker was gone: mirror its pending
            // URLs afresh (the others hand back those of its hosts, which its frontier
            // holds already).
            let pending: Vec<(String, Option<(u32, u32)>)> = frontier
                .pending()
                .map(|t| (t.url.to_string(), Some((t.depth, t.priority))))
                .collect();
            worker.mirror(&pending)?;
            cluster
                .with(|con| {
                    redis::cmd("DEL")
                        .arg(taken_key(&worker.name, worker.id()))
                        .exec(con)
                })
                .map_err(cluster_error)?;
        }
        worker.rebalance(frontier);
        let unacknowledged = worker
            .inbox
            .unacknowledged(usize::MAX >> 1)
            .map_err(cluster_error)?;
        worker.queue_received(unacknowledged, dedup, frontier)?;
        Ok(())
    }

    /// This worker's id.
    pub(crate) fn id(&self) -> &str {
        &self.membership.member().id
    }

    /// This worker's share of the hosts in the ring now.
    pub(crate) fn share(&self) -> f64 {
        (self.ring.shares().into_iter())
            .find(|(id, _)| *id == self.id())
            .map_or(0.0, |(_, s)| s)
    }

    /// The progress line's prefix: the worker and its share.
    pub(crate) fn label(&self) -> String {
        format!(
            "worker {} ({:.1}% of hosts, {} workers)",
            self.id(),
            self.share() * 100.0,
            self.ring.members().len()
        )
    }

    /// For the metrics: the workers in the ring, and the entries of this worker's inbox not
    /// yet made durable (`None` when Redis did not answer; the crawl loop finds out).
    pub(crate) fn watch_figures(&self) -> (usize, Option<u64>) {
        (self.ring.members().len(), self.inbox.depth().ok())
    }

    fn owns(&self, host: &str) -> bool {
        self.ring.owner(host).is_some_and(|m| m.id == self.id())
    }

    /// Called each round of the crawl loop: at the heartbeat's pace, whether it still beats
    /// and the live set (a new ring when it changed: hosts handed on, gone workers' URLs
    /// rerouted); then the inbox.
    pub(crate) fn tick(
        &mut self,
        dedup: &Dedup,
        frontier: &mut Frontier,
        idle: bool,
    ) -> Result<(), CrawlError> {
        if self.last_heartbeat.elapsed() >= self.heartbeat_every {
            self.beater.check().map_err(cluster_error)?;
            self.last_heartbeat = Instant::now();
            let ring = self.membership.ring().map_err(cluster_error)?;
            let live: BTreeSet<&str> = ring.members().iter().map(|m| m.id.as_str()).collect();
            let before: BTreeSet<&str> =
                self.ring.members().iter().map(|m| m.id.as_str()).collect();
            let changed = live != before;
            if changed {
                // The workers gone may have pages not yet committed, whose URLs this worker
                // may now fetch again: whether their owners live is asked anew.
                self.index.forget_alive();
                tracing::info!(
                    "worker {}: live workers now {}",
                    self.id(),
                    live.iter().copied().collect::<Vec<_>>().join(", ")
                );
            }
            self.ring = ring;
            self.reroute_gone()?;
            if changed {
                self.rebalance(frontier);
            }
            let idle = idle && !self.unsent() && frontier.counts().pending == 0;
            self.look_for_the_end(idle)?;
        }
        if self.last_receive.elapsed() >= RECEIVE_EVERY {
            self.last_receive = Instant::now();
            let entries = self.inbox.receive(RECEIVE_MAX).map_err(cluster_error)?;
            self.queue_received(entries, dedup, frontier)?;
        }
        Ok(())
    }

    /// Queues what the inbox delivered: moved URLs as they are, new links unless a filter
    /// has them; a link to a host that is not this worker's (the ring changed since it was
    /// sent) goes on to its owner.
    fn queue_received(
        &mut self,
        entries: Vec<(String, Handoff)>,
        dedup: &Dedup,
        frontier: &mut Frontier,
    ) -> Result<(), CrawlError> {
        for (entry, handoff) in entries {
            self.received.push(entry);
            let Ok(url) = Url::parse(&handoff.url) else {
                tracing::warn!(
                    "worker {}: inbox: `{}` is not a URL",
                    self.id(),
                    handoff.url
                );
                continue;
            };
            // Known to this worker's filter from now on, so that it does not ask again.
            let url = match dedup.check_canonical(url)? {
                UrlVerdict::New(url) | UrlVerdict::Seen(url) => url,
                _ => continue,
            };
            self.route(url, handoff.depth, handoff.priority, dedup, frontier)?;
        }
        Ok(())
    }

    /// Queues the new links among `links` (canonical, in scope) of this worker's hosts, and
    /// hands on those of others' hosts; returns how many were queued here or handed on.
    pub(crate) fn enqueue(
        &mut self,
        dedup: &Dedup,
        frontier: &mut Frontier,
        links: Vec<(Url, u32, u32)>,
    ) -> Result<usize, CrawlError> {
        // The local filter spares asking the cluster twice in a run.
        let mut candidates = Vec::new();
        for (url, depth, priority) in links {
            if let UrlVerdict::New(url) = dedup.check_canonical(url)? {
                candidates.push((url, depth, priority));
            }
        }
        if candidates.is_empty() {
            return Ok(0);
        }
        // Noted before they are asked: a worker killed before its checkpoint queues or
        // hands on again what the cluster answered new for it.
        let mut note = redis::cmd("RPUSH");
        note.arg(recent_key(&self.name, self.id()));
        for (url, depth, priority) in &candidates {
            note.arg(recent_entry(url, *depth, *priority));
        }
        self.cluster
            .with(|con| note.exec(con))
            .map_err(cluster_error)?;
        let texts: Vec<&str> = candidates.iter().map(|(u, ..)| u.as_str()).collect();
        let new = self
            .filter
            .check_and_insert(&texts)
            .map_err(cluster_error)?;
        let mut queued = 0;
        for ((url, depth, priority), new) in candidates.into_iter().zip(new) {
            if new {
                queued += 1;
                self.route(url, depth, priority, dedup, frontier)?;
            }
        }
        Ok(queued)
    }

    /// Queues a URL the cluster answered new (or that moved with its host) when its host
    /// is this worker's, or hands it to its host's owner.
    fn route(
        &mut self,
        url: Url,
        depth: u32,
        priority: u32,
        dedup: &Dedup,
        frontier: &mut Frontier,
    ) -> Result<(), CrawlError> {
        let host = host_key(&url);
        if self.owns(host) {
            // With a recrawl interval, the filter's `new` may be a URL fetched before that
            // came due.
            match dedup.recrawl_after() {
                Some(after) => {
                    let before = dedup.now().saturating_sub(after.as_secs());
                    frontier.push_due(url, depth, priority, before)?
                }
                None => frontier.push(url, depth, priority)?,
            };
        } else {
            self.outbox.push((
                host.to_string(),
                Handoff {
                    url: url.to_string(),
                    depth,
                    priority,
                    moved: true,
                },
            ));
        }
        Ok(())
    }

    /// Decides a page against the cluster's index.
    pub(crate) fn decide(
        &mut self,
        dedup: &Dedup,
        name: &str,
        prepared: &Prepared,
    ) -> Result<PageVerdict, CrawlError> {
        let Some(record) = dedup.record_of(name, prepared) else {
            return Ok(PageVerdict::NoText);
        };
        let decision = super::context::blocking(|| self.index.check_and_insert(&record))
            .map_err(cluster_error)?;
        let original = |id: DocId| -> Result<Original, CrawlError> {
            let name = self.index.name_of(id).map_err(cluster_error)?;
            Ok(Original {
                id,
                name: name.unwrap_or_default(),
            })
        };
        let verdict = match decision {
            SharedDecision::Unique(id) => {
                self.kept.push(id);
                PageVerdict::Unique {
                    id,
                    simhash: record.simhash,
                    digest: record.digest,
                    nearest: None,
                }
            }
            SharedDecision::Exact(of) => PageVerdict::ExactDuplicate { of: original(of)? },
            SharedDecision::Near {
                of,
                distance,
                similarity,
            } => PageVerdict::NearDuplicate {
                of: original(of)?,
                distance,
                similarity,
            },
        };
        // This worker owns the page's host: its template is learned here.
        dedup.learn_template(name, &verdict, prepared.page_text());
        Ok(verdict)
    }

    /// Whether links, moved URLs or a checkpoint's changes wait to be sent.
    pub(crate) fn unsent(&self) -> bool {
        !self.outbox.is_empty()
            || !self.kept.is_empty()
            || !self.received.is_empty()
            || self.publish.is_some()
    }

    /// Leaves the live set (a clean stop, after the last checkpoint): the others take this
    /// worker's hosts at their next heartbeat.
    pub(crate) fn leave(self) -> Result<(), CrawlError> {
        // The heartbeat stops first: none goes after the key is deleted.
        drop(self.beater);
        self.membership.leave().map_err(cluster_error)
    }
}

mod outbox;
mod reroute;
mod termination;
