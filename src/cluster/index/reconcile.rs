//! Reconciling (see "Reconciling" in the [module documentation](super)): the kept documents,
//! in id order, through a local index with the shared one's settings.

use std::collections::BTreeMap;

use super::SharedIndex;
use crate::cluster::filter::ClusterError;
use crate::index::{DocId, Similarity};

/// A kept document found by [`SharedIndex::reconcile`] to repeat an earlier kept one.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Reconciled {
    /// The later copy's id.
    pub id: DocId,
    /// Its name (URL).
    pub url: String,
    /// The earlier document's id.
    pub of_id: DocId,
    /// Its name (URL).
    pub of: String,
    /// Hamming distance of the simhashes (0 for an exact copy).
    pub distance: u32,
    /// The estimates (1 and 1 for an exact copy).
    pub similarity: Similarity,
    /// Whether the texts are the same.
    pub exact: bool,
}

/// Documents read at a time by [`SharedIndex::reconcile`].
const RECONCILE_BATCH: u64 = 500;

impl SharedIndex<'_> {
    /// Goes over every document kept and committed (see "Reconciling" in the module
    /// documentation); calls `found` for each that repeats an earlier kept one, and marks
    /// it `yield`. Returns how many kept documents it read.
    pub fn reconcile(&self, mut found: impl FnMut(Reconciled)) -> Result<u64, ClusterError> {
        let last: Option<DocId> = self.cluster.with(|con| {
            redis::cmd("GET")
                .arg(format!("{{{}}}:nd:ids", self.name))
                .query(con)
        })?;
        let last = last.unwrap_or(0);
        // The kept documents go, in id order, through a local index with the same settings
        // (not through the shared buckets, which may be what a failover lost).
        let local_error = |e: String| self.cluster.state_error(format!("reconcile: {e}"));
        let dir = tempfile::tempdir().map_err(|e| local_error(e.to_string()))?;
        // Under retention, each document is decided at the time it was stored, so that a
        // copy stored after its original's window is not called its copy.
        let at = crate::clock::ManualClock::at(0);
        let local = crate::index::SimhashIndex::open(dir.path(), self.config)
            .map_err(|e| local_error(e.to_string()))?
            .with_clock(std::sync::Arc::new(at.clone()));
        // Local id -> the cluster's id and name.
        let mut kept: BTreeMap<DocId, (DocId, String)> = BTreeMap::new();
        let mut read = 0;
        let mut from = 1;
        while from <= last {
            let ids: Vec<DocId> = (from..=last.min(from + RECONCILE_BATCH - 1)).collect();
            from += ids.len() as u64;
            let mut pipe = redis::cluster::cluster_pipe();
            for &id in &ids {
                pipe.cmd("GET").arg(self.verdict_key(id));
                pipe.cmd("EXISTS").arg(self.commit_key(id));
                pipe.cmd("GET").arg(self.doc_key(id));
            }
            let replies: Vec<redis::Value> = self.cluster.with(|con| pipe.query(con))?;
            for (&id, reply) in ids.iter().zip(replies.chunks(3)) {
                let keep = matches!(&reply[0], redis::Value::BulkString(v) if v == b"keep");
                let committed = matches!(reply[1], redis::Value::Int(1));
                let redis::Value::BulkString(bytes) = &reply[2] else {
                    continue;
                };
                if !keep || !committed {
                    continue;
                }
                let record = self.decode_record(id, bytes)?;
                read += 1;
                at.set(record.at);
                let url = record.name.clone();
                let decision = local
                    .check_and_insert(record)
                    .map_err(|e| local_error(e.to_string()))?;
                let (of, distance, similarity, exact) = match decision {
                    crate::index::Decision::Unique(local_id) => {
                        kept.insert(local_id, (id, url));
                        continue;
                    }
                    crate::index::Decision::Exact(of) => {
                        let same = Similarity {
                            resemblance: 1.0,
                            containment: 1.0,
                        };
                        (of, 0, same, true)
                    }
                    crate::index::Decision::Near {
                        of,
                        distance,
                        similarity,
                    } => (of, distance, similarity, false),
                };
                let (of_id, of) = kept.get(&of).cloned().unwrap_or_default();
                self.set_verdict(id, false)?;
                found(Reconciled {
                    id,
                    url,
                    of_id,
                    of,
                    distance,
                    similarity,
                    exact,
                });
            }
        }
        Ok(read)
    }
}
