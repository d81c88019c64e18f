//! Membership: which workers of a crawl are alive, and their weights.
//!
//! A worker is alive while its heartbeat key exists. It joins by creating
//! `{NAME}:worker:ID` (value: its weight and its incarnation, a number drawn from
//! `{NAME}:incarnations` at each join, so that a worker restarted under the same id is told
//! apart from the process that died) with an expiry of `ttl` and adding its id to the
//! set `{NAME}:workers`; it renews the expiry well within `ttl` (every `ttl / 3` is the
//! rule); a worker that stops renewing (killed, cut off) is gone once the key expires, by
//! the clock of the one node that holds the key, so the workers' own clocks never matter.
//! The braces make `NAME` the hash tag of every membership key: they live in one slot, and
//! the live set is read in one `SMEMBERS` and one `MGET`.
//!
//! Every worker reads the same live set and builds the same [`Ring`] from it. An id can be
//! alive once: a second process joining with a live id is refused; a worker whose key
//! expired is told so at its next heartbeat and must stop fetching, since its hosts have
//! gone to the others.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::filter::{Cluster, ClusterError};
use super::ring::{Member, Ring};

/// One worker's membership of a crawl.
pub struct Membership<'c> {
    cluster: &'c Cluster,
    name: String,
    member: Member,
    incarnation: u64,
    ttl: Duration,
}

fn set_key(name: &str) -> String {
    format!("{{{name}}}:workers")
}

fn started_key(name: &str) -> String {
    format!("{{{name}}}:started")
}

fn worker_key(name: &str, id: &str) -> String {
    format!("{{{name}}}:worker:{id}")
}

impl<'c> Membership<'c> {
    /// Joins crawl `name` as `member`, alive for `ttl` unless renewed. Refused when a
    /// worker with the same id is alive.
    pub fn join(
        cluster: &'c Cluster,
        name: &str,
        member: Member,
        ttl: Duration,
    ) -> Result<Membership<'c>, ClusterError> {
        if member.id.is_empty() || member.id.contains(['{', '}']) {
            return Err(ClusterError::Params(format!(
                "worker id `{}`: must be non-empty and hold no braces",
                member.id
            )));
        }
        let key = worker_key(name, &member.id);
        let incarnation: u64 = cluster.with(|con| {
            redis::cmd("INCR")
                .arg(format!("{{{name}}}:incarnations"))
                .query(con)
        })?;
        let created: Option<String> = cluster.with(|con| {
            redis::cmd("SET")
                .arg(&key)
                .arg(format!("{} {incarnation}", member.weight))
                .arg("NX")
                .arg("PX")
                .arg(ttl.as_millis() as u64)
                .query(con)
        })?;
        if created.is_none() {
            return Err(cluster.state_error(format!(
                "worker id `{}` is already alive in crawl `{name}`: give each worker its own \
                 --worker-id",
                member.id
            )));
        }
        cluster.with(|con| {
            redis::cmd("SADD")
                .arg(set_key(name))
                .arg(&member.id)
                .exec(con)
        })?;
        Ok(Membership {
            cluster,
            name: name.to_string(),
            member,
            incarnation,
            ttl,
        })
    }

    /// As [`Membership::join`], but a live worker with the same id (this worker's own
    /// process before a kill, whose heartbeat has not expired yet) is waited out for up to
    /// `wait`.
    pub fn join_waiting(
        cluster: &'c Cluster,
        name: &str,
        member: Member,
        ttl: Duration,
        wait: Duration,
    ) -> Result<Membership<'c>, ClusterError> {
        let started = std::time::Instant::now();
        loop {
            match Membership::join(cluster, name, member.clone(), ttl) {
                Err(ClusterError::State { .. }) if started.elapsed() < wait => {
                    std::thread::sleep(Duration::from_millis(100));
                }
                other => return other,
            }
        }
    }

    /// This process's incarnation: the number that tells it apart from earlier processes
    /// with the same id.
    pub fn incarnation(&self) -> u64 {
        self.incarnation
    }

    /// This worker.
    pub fn member(&self) -> &Member {
        &self.member
    }

    /// Renews this worker's expiry. An error when the key had expired: the worker was taken
    /// for dead and its hosts moved, so it must stop.
    pub fn heartbeat(&self) -> Result<(), ClusterError> {
        renew(
            self.cluster,
            &self.name,
            &self.member,
            self.incarnation,
            self.ttl,
        )
    }

    /// Sends the heartbeat every `ttl / 3` from a thread of its own, on a connection of its
    /// own, until the returned [`Beater`] is dropped: a worker busy for longer than `ttl`
    /// (a checkpoint's flush on a slow disk, a loaded machine, commands queued behind one
    /// another on its connection) is not taken for dead while its process lives. A process
    /// that is killed or cut off stops beating, and is gone once its key expires.
    pub fn beat_in_background(&self) -> Result<Beater, ClusterError> {
        let cluster = self.cluster.another()?;
        let (name, member) = (self.name.clone(), self.member.clone());
        let (incarnation, ttl) = (self.incarnation, self.ttl);
        let failed = Arc::new(Mutex::new(None));
        let (stop, stopped) = mpsc::channel::<()>();
        let report = Arc::clone(&failed);
        let thread = std::thread::Builder::new()
            .name(format!("heartbeat {}", member.id))
            .spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(ttl / 3) {
                    if let Err(e) = renew(&cluster, &name, &member, incarnation, ttl) {
                        *report.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                        return;
                    }
                }
            })
            .map_err(|e| self.cluster.state_error(format!("heartbeat thread: {e}")))?;
        Ok(Beater {
            stop: Some(stop),
            thread: Some(thread),
            failed,
        })
    }

    /// Leaves the crawl at once (a clean stop): the others take its hosts at their next
    /// look at the live set.
    pub fn leave(self) -> Result<(), ClusterError> {
        self.cluster.with(|con| {
            redis::cmd("DEL")
                .arg(worker_key(&self.name, &self.member.id))
                .exec(con)?;
            redis::cmd("SREM")
                .arg(set_key(&self.name))
                .arg(&self.member.id)
                .exec(con)
        })
    }

    /// The ring the crawl starts with: waits, heartbeating, until `workers` workers are
    /// alive, then marks the crawl started (`{NAME}:started`), so that a worker joining a
    /// started crawl (a restart, one more machine) gets the live ring at once. An error
    /// after `limit` with fewer alive; the caller leaves.
    pub fn wait_for(&self, workers: usize, limit: Duration) -> Result<Ring, ClusterError> {
        let key = started_key(&self.name);
        let started = std::time::Instant::now();
        let mut beat = started;
        let mut said = 0;
        loop {
            let ring = self.ring()?;
            let live = ring.members().len();
            let begun: bool = self
                .cluster
                .with(|con| redis::cmd("EXISTS").arg(&key).query(con))?;
            if begun || live >= workers {
                if !begun {
                    self.cluster
                        .with(|con| redis::cmd("SET").arg(&key).arg(1).exec(con))?;
                }
                return Ok(ring);
            }
            if started.elapsed() >= limit {
                return Err(self.cluster.state_error(format!(
                    "crawl `{}`: {live} of {workers} workers joined within {} s \
                     (cluster.wait_for_workers, cluster.start_wait_ms); start the others \
                     or lower --wait-for-workers",
                    self.name,
                    limit.as_secs()
                )));
            }
            if live != said {
                tracing::info!(
                    "worker {}: waiting for {workers} workers to start crawl `{}` ({live} \
                     alive)",
                    self.member.id,
                    self.name
                );
                said = live;
            }
            if beat.elapsed() >= self.ttl / 3 {
                self.heartbeat()?;
                beat = std::time::Instant::now();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The ring of the workers alive now.
    pub fn ring(&self) -> Result<Ring, ClusterError> {
        Ok(Ring::new(live(self.cluster, &self.name)?))
    }
}

/// Renews the expiry of `member`'s key in crawl `name` (see [`Membership::heartbeat`]).
fn renew(
    cluster: &Cluster,
    name: &str,
    member: &Member,
    incarnation: u64,
    ttl: Duration,
) -> Result<(), ClusterError> {
    let renewed: Option<String> = cluster.with(|con| {
        redis::cmd("SET")
            .arg(worker_key(name, &member.id))
            .arg(format!("{} {incarnation}", member.weight))
            .arg("XX")
            .arg("PX")
            .arg(ttl.as_millis() as u64)
            .query(con)
    })?;
    match renewed {
        // The id goes back into the set too: a reader that found the key expired a
        // moment before a rejoin may have taken it out.
        Some(_) => cluster.with(|con| {
            redis::cmd("SADD")
                .arg(set_key(name))
                .arg(&member.id)
                .exec(con)
        }),
        None => Err(cluster.state_error(format!(
            "worker `{}` missed its heartbeat for {} ms and was taken for dead in crawl \
             `{name}`: its hosts have moved to the other workers",
            member.id,
            ttl.as_millis(),
        ))),
    }
}

/// The heartbeat of [`Membership::beat_in_background`]; dropping it stops the thread.
pub struct Beater {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    failed: Arc<Mutex<Option<ClusterError>>>,
}

impl Beater {
    /// The error that stopped the heartbeat, once (the worker was taken for dead, or the
    /// cluster could not be reached for longer than the ride-out); `Ok` while it beats.
    pub fn check(&self) -> Result<(), ClusterError> {
        match self.failed.lock().unwrap_or_else(|p| p.into_inner()).take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Drop for Beater {
    fn drop(&mut self) {
        // Dropping the sender ends the thread's wait at once.
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The workers of crawl `name` alive now, by id. Ids whose key expired are taken out of the
/// set on the way.
pub fn live(cluster: &Cluster, name: &str) -> Result<Vec<Member>, ClusterError> {
    let mut ids: Vec<String> =
        cluster.with(|con| redis::cmd("SMEMBERS").arg(set_key(name)).query(con))?;
    ids.sort();
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let keys: Vec<String> = ids.iter().map(|id| worker_key(name, id)).collect();
    let weights: Vec<Option<String>> =
        cluster.with(|con| redis::cmd("MGET").arg(&keys).query(con))?;
    let mut members = Vec::new();
    let mut gone = Vec::new();
    for (id, value) in ids.into_iter().zip(weights) {
        let weight = value.map(|v| v.split(' ').next().unwrap_or_default().parse::<u32>());
        match weight {
            Some(Ok(weight)) => members.push(Member::new(id, weight)),
            Some(Err(_)) => {
                return Err(cluster.state_error(format!(
                    "crawl `{name}`: worker `{id}` has a weight that is not a number"
                )));
            }
            None => gone.push(id),
        }
    }
    if !gone.is_empty() {
        cluster.with(|con| redis::cmd("SREM").arg(set_key(name)).arg(&gone).exec(con))?;
    }
    Ok(members)
}

/// Whether incarnation `incarnation` of worker `id` is alive in crawl `name` (its heartbeat
/// key exists and names that incarnation), and if so, for how long its key is sure to stand:
/// its time to live as Redis read it, from before the question went. Until then no other
/// worker can find the key gone and take the worker's hosts over, except after a clean
/// [`Membership::leave`], which comes after its last checkpoint's commits; a key with no
/// expiry answers zero.
pub fn alive_for(
    cluster: &Cluster,
    name: &str,
    id: &str,
    incarnation: u64,
) -> Result<Option<Duration>, ClusterError> {
    let key = worker_key(name, id);
    let mut pipe = redis::cluster::cluster_pipe();
    pipe.cmd("GET").arg(&key).cmd("PTTL").arg(&key);
    let (value, ttl): (Option<String>, i64) = cluster.with(|con| pipe.query(con))?;
    let alive = value
        .as_deref()
        .and_then(|v| v.split(' ').nth(1))
        .and_then(|i| i.parse::<u64>().ok())
        == Some(incarnation);
    Ok(alive.then(|| Duration::from_millis(u64::try_from(ttl).unwrap_or(0))))
}
