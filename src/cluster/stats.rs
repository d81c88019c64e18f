//! The figures of a crawl on several machines: what each worker wrote at its last
//! checkpoint, whether it is alive, and its share of the hosts now.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::filter::{Cluster, ClusterError};
use super::members::live;
use super::ring::Ring;

/// The hash every worker of crawl `name` writes its figures into, by id, at each
/// checkpoint.
pub fn stats_key(name: &str) -> String {
    format!("{{{name}}}:stats")
}

/// The hash of what the others moved off each gone worker of crawl `name` (its inbox's
/// links and its pending URLs, rerouted to their hosts' new owners), by id.
pub fn rerouted_key(name: &str) -> String {
    format!("{{{name}}}:rerouted")
}

/// One worker's figures as of its last checkpoint.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WorkerStats {
    /// Its id.
    pub worker: String,
    /// Whether its heartbeat is alive now.
    pub live: bool,
    /// Its share of the hosts in the ring of the live workers (0 when it is not alive).
    pub share: f64,
    /// Pages fetched, over every run of its state directory.
    pub fetched: u64,
    /// Pages stored.
    pub stored: u64,
    /// Pages recorded as duplicates.
    pub duplicates: u64,
    /// Failures.
    pub failures: u64,
    /// URLs pending in its frontier.
    pub pending: u64,
    /// URLs moved to other workers: those it handed on with their hosts, and those the
    /// others moved off it once it was gone (`rerouted`).
    pub moved: u64,
    /// Of `moved`, the links of its inbox and its pending URLs that the other workers
    /// rerouted to their hosts' new owners after it was gone.
    pub rerouted: u64,
    /// Its last checkpoint's number.
    pub checkpoint: u64,
    /// When it took it (seconds since the Unix epoch).
    pub at: u64,
}

/// The figures of every worker that ever checkpointed in crawl `name`, and the totals.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ClusterStats {
    /// The crawl's name.
    pub name: String,
    /// Live workers now.
    pub live: usize,
    /// By worker id.
    pub workers: Vec<WorkerStats>,
    /// The sums (`live`, `share` and `checkpoint` aside).
    pub total: WorkerStats,
}

/// Reads the figures of crawl `name`.
pub fn stats(cluster: &Cluster, name: &str) -> Result<ClusterStats, ClusterError> {
    let written: BTreeMap<String, String> =
        cluster.with(|con| redis::cmd("HGETALL").arg(stats_key(name)).query(con))?;
    let rerouted: BTreeMap<String, u64> =
        cluster.with(|con| redis::cmd("HGETALL").arg(rerouted_key(name)).query(con))?;
    let members = live(cluster, name)?;
    let ring = Ring::new(members.clone());
    let shares: BTreeMap<&str, f64> = ring.shares().into_iter().collect();
    let mut workers = Vec::new();
    for (id, json) in &written {
        let mut w: WorkerStats = serde_json::from_str(json).map_err(|e| {
            cluster.state_error(format!("crawl `{name}`: figures of worker `{id}`: {e}"))
        })?;
        w.worker = id.clone();
        w.rerouted = rerouted.get(id).copied().unwrap_or(0);
        w.moved += w.rerouted;
        w.live = members.iter().any(|m| &m.id == id);
        w.share = shares.get(id.as_str()).copied().unwrap_or(0.0);
        workers.push(w);
    }
    // A gone worker that never checkpointed, whose URLs the others moved.
    for (id, &n) in &rerouted {
        if !written.contains_key(id) && !members.iter().any(|m| &m.id == id) {
            workers.push(WorkerStats {
                worker: id.clone(),
                moved: n,
                rerouted: n,
                ..WorkerStats::default()
            });
        }
    }
    // A live worker that has not checkpointed yet.
    for m in &members {
        if !written.contains_key(&m.id) {
            workers.push(WorkerStats {
                worker: m.id.clone(),
                live: true,
                share: shares.get(m.id.as_str()).copied().unwrap_or(0.0),
                ..WorkerStats::default()
            });
        }
    }
    let mut total = WorkerStats {
        worker: "total".into(),
        ..WorkerStats::default()
    };
    for w in &workers {
        total.fetched += w.fetched;
        total.stored += w.stored;
        total.duplicates += w.duplicates;
        total.failures += w.failures;
        total.pending += w.pending;
        total.moved += w.moved;
        total.rerouted += w.rerouted;
        total.at = total.at.max(w.at);
    }
    Ok(ClusterStats {
        name: name.to_string(),
        live: members.len(),
        workers,
        total,
    })
}
