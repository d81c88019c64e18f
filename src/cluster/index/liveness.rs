//! Whether the worker that owns a document not yet committed is alive, as this worker
//! found it: a document of a dead worker not yet committed is lost, and a lost document is
//! never an original (see the module documentation).
//!
//! Asking costs a round trip (a `GET` and a `PTTL` of the worker's heartbeat key), so the
//! answer is remembered:
//! - **gone**, for good: a worker whose heartbeat lapsed is told so and stops, and comes
//!   back as another incarnation;
//! - **alive**, while its heartbeat key is sure to stand: [`LIVENESS_SHARE`] of the time to
//!   live Redis gave it, counted from before the question went. Within that time a question
//!   would find it alive too, and no worker can have found the key gone and taken its hosts
//!   over. A clean stop deletes the key early, but only after the worker's last commits,
//!   and a committed document is never lost.
//!
//! The new owner of a dead worker's host fetches its lost pages again; each must be judged
//! against the lost documents as lost, or it would be called their copy and lost for good.
//! It takes the host over once it finds the key gone, which is after the key expired, so
//! after any remembered time; and it forgets the live ones it remembered when it sees the
//! live set change ([`SharedIndex::forget_alive`]), which covers a key that expired early
//! (a master that failed over before a renewal reached its replica).

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use super::super::filter::{Cluster, ClusterError};
use super::SharedIndex;

/// The share of a live worker's heartbeat time to live, as read, during which it is taken
/// for alive without asking again: less than all of it, for clocks that run at slightly
/// different rates.
const LIVENESS_SHARE: (u32, u32) = (9, 10);

/// Other workers' incarnations (`WORKER INCARNATION`) asked about: `None` for one found
/// gone, else the moment until which it is taken for alive.
#[derive(Default)]
pub(super) struct Liveness(Mutex<BTreeMap<String, Option<Instant>>>);

impl Liveness {
    /// Whether incarnation `owner` of a worker of crawl `name` is alive: remembered, or
    /// asked of `cluster`. An owner with no incarnation is taken for alive.
    pub(super) fn alive(
        &self,
        cluster: &Cluster,
        name: &str,
        owner: &str,
    ) -> Result<bool, ClusterError> {
        let asked = Instant::now();
        match self.known().get(owner) {
            Some(None) => return Ok(false),
            Some(&Some(until)) if asked < until => return Ok(true),
            _ => {}
        }
        let (worker, incarnation) = owner.split_once(' ').unwrap_or((owner, ""));
        let Ok(incarnation) = incarnation.parse::<u64>() else {
            return Ok(true);
        };
        let alive_for = super::super::members::alive_for(cluster, name, worker, incarnation)?;
        let (share, of) = LIVENESS_SHARE;
        let until = alive_for.map(|ttl| asked + ttl * share / of);
        self.known().insert(owner.to_string(), until);
        Ok(until.is_some())
    }

    fn known(&self) -> MutexGuard<'_, BTreeMap<String, Option<Instant>>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl SharedIndex<'_> {
    /// Forgets which other workers were found alive, so that the next question about each
    /// goes to the cluster: called by a crawl's worker when it sees the live set change,
    /// before it takes over the hosts of the workers gone. Those found gone stay so.
    pub fn forget_alive(&self) {
        self.liveness.known().retain(|_, until| until.is_none());
    }
}
