//! The decision over a page's candidates: which are confirmed, and whether the page keeps
//! or yields (rules 1 and 2 of the module documentation).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::super::filter::ClusterError;
use super::{RECORD_RETRIES, RECORD_RETRY_WAIT, SharedDecision, SharedIndex, VERDICT_WAIT};
use crate::index::{DocId, DocRecord, Judged, Similarity, Stored};

/// The candidates a page's confirmation accepted, and their verdicts as read.
#[derive(Default)]
struct Found {
    confirmed: BTreeMap<DocId, (u32, Similarity)>,
    verdicts: BTreeMap<DocId, Option<String>>,
}

impl SharedIndex<'_> {
    /// `stored` judged as a candidate of `record` by the one rule of the local index
    /// ([`Confirm::candidate`](crate::index::Confirm)): a worker knows no host template, and
    /// every candidate comes from the page's keys.
    pub(super) fn judge(
        &self,
        record: &DocRecord,
        stored: &DocRecord,
    ) -> Result<Judged, ClusterError> {
        let row = Stored::of(stored);
        self.config
            .confirm
            .candidate(record, &row, &[], &[], true, || {
                Ok::<_, ClusterError>(Some(stored))
            })
    }

    /// Of the candidates `ids`, those that the confirmation accepts, by id, with their
    /// distance and estimates, and the verdicts they had. Candidates among this worker's
    /// last documents (`own.rs`) or other workers' settled ones read lately (`settled.rs`)
    /// are judged from memory; the others take one round trip for their records, marks and
    /// verdicts, and those of them found settled are remembered. Lost candidates are marked
    /// `yield` and passed over, as are, under retention, those out of the window.
    #[allow(clippy::type_complexity)]
    pub(super) fn confirmed_candidates(
        &self,
        record: &DocRecord,
        ids: BTreeSet<DocId>,
        now: u64,
    ) -> Result<
        (
            BTreeMap<DocId, (u32, Similarity)>,
            BTreeMap<DocId, Option<String>>,
        ),
        ClusterError,
    > {
        let mut found = Found::default();
        let mut others = BTreeSet::new();
        for id in ids {
            match self.known_doc(id) {
                Some(known) => {
                    self.consider(record, id, &known.record, known.verdict(), now, &mut found)?;
                }
                None => {
                    others.insert(id);
                }
            }
        }
        if others.is_empty() {
            return Ok((found.confirmed, found.verdicts));
        }
        let mut pipe = redis::cluster::cluster_pipe();
        for &other in &others {
            pipe.cmd("GET").arg(self.doc_key(other));
            pipe.cmd("GET").arg(self.verdict_key(other));
            self.probe_lost(&mut pipe, other);
        }
        let mut replies: Vec<redis::Value> = self.cluster.with(|con| pipe.query(con))?;
        self.read_late_records(&others, &mut replies)?;
        for (other, reply) in others.into_iter().zip(replies.chunks(4)) {
            if self.lost_among(&reply[2..])? {
                self.set_verdict(other, false)?;
                continue;
            }
            // Gone from Redis: expired (under retention) or never written whole.
            let redis::Value::BulkString(bytes) = &reply[0] else {
                continue;
            };
            let stored = Arc::new(self.decode_record(other, bytes)?);
            let verdict = match &reply[1] {
                redis::Value::BulkString(v) => Some(String::from_utf8_lossy(v).into_owned()),
                _ => None,
            };
            let (committed, owned) = Self::marks_of(&reply[2..]);
            self.remember_if_settled(other, &stored, (committed, owned, verdict.as_deref()));
            self.consider(record, other, &stored, verdict, now, &mut found)?;
        }
        Ok((found.confirmed, found.verdicts))
    }

    /// Judges candidate `other` (its record `stored`, its verdict as read) of `record`, and
    /// adds it to `found` when the confirmation accepts it.
    fn consider(
        &self,
        record: &DocRecord,
        other: DocId,
        stored: &DocRecord,
        verdict: Option<String>,
        now: u64,
        found: &mut Found,
    ) -> Result<(), ClusterError> {
        if self.expired_at(stored.at, now) {
            return Ok(());
        }
        // A page of this page's digest that does not hold its claim is this page's exact
        // duplicate, or the holder's (it enters its buckets before it learns so): never
        // an original to yield to.
        if stored.digest == record.digest {
            return Ok(());
        }
        let distance = (stored.simhash.0 ^ record.simhash.0).count_ones();
        let judged = self.judge(record, stored)?;
        if judged.confirmed {
            found.confirmed.insert(other, (distance, judged.similarity));
            found.verdicts.insert(other, verdict);
        }
        Ok(())
    }

    /// Reads again, a few times a moment apart, the records of candidates that `replies`
    /// (four a candidate: record, verdict, commit mark, owner) found missing while their
    /// worker is alive: a worker writes a page's record in the same round trip as its
    /// bucket entries, to other nodes, so its entry can be read a moment before its record.
    /// A record still missing is a page whose worker died before writing it, or expired.
    pub(super) fn read_late_records(
        &self,
        ids: &BTreeSet<DocId>,
        replies: &mut [redis::Value],
    ) -> Result<(), ClusterError> {
        for _ in 0..RECORD_RETRIES {
            let late: Vec<(usize, DocId)> = ids
                .iter()
                .enumerate()
                .filter(|&(i, _)| {
                    matches!(replies.get(4 * i), Some(redis::Value::Nil))
                        && matches!(replies.get(4 * i + 3), Some(redis::Value::BulkString(_)))
                })
                .map(|(i, &id)| (i, id))
                .collect();
            if late.is_empty() {
                return Ok(());
            }
            std::thread::sleep(RECORD_RETRY_WAIT);
            let mut pipe = redis::cluster::cluster_pipe();
            for &(_, id) in &late {
                pipe.cmd("GET").arg(self.doc_key(id));
            }
            let again: Vec<redis::Value> = self.cluster.with(|con| pipe.query(con))?;
            for ((i, _), value) in late.into_iter().zip(again) {
                replies[4 * i] = value;
            }
        }
        Ok(())
    }

    /// Rules 1 and 2 of the module documentation.
    pub(super) fn settle(
        &self,
        id: DocId,
        confirmed: &BTreeMap<DocId, (u32, Similarity)>,
        read: &BTreeMap<DocId, Option<String>>,
    ) -> Result<SharedDecision, ClusterError> {
        let near = |of: DocId, &(distance, similarity): &(u32, Similarity)| SharedDecision::Near {
            of,
            distance,
            similarity,
        };
        let lower: Vec<DocId> = confirmed.range(..id).map(|(&o, _)| o).collect();
        if !lower.is_empty() {
            // As read with their records.
            let verdicts: Vec<Option<String>> = lower
                .iter()
                .map(|o| read.get(o).cloned().flatten())
                .collect();
            // The most alike of those not known to have yielded (the lowest id on a tie).
            let best = (lower.iter().zip(&verdicts))
                .filter(|(_, v)| v.as_deref() != Some("yield"))
                .map(|(&o, _)| (o, &confirmed[&o]))
                .fold(
                    None::<(DocId, &(u32, Similarity))>,
                    |best, (o, c)| match best {
                        Some((_, b)) if b.1.resemblance >= c.1.resemblance => best,
                        _ => Some((o, c)),
                    },
                );
            if let Some((of, c)) = best {
                return Ok(near(of, c));
            }
        }
        // Those with higher ids: a verdict read with its record (or known from memory) is
        // the one a wait would read first; only those with none yet are waited for.
        let higher: Vec<DocId> = confirmed.range(id + 1..).map(|(&o, _)| o).collect();
        let verdict_read = |o: &DocId| read.get(o).and_then(|v| v.as_deref());
        if let Some(&of) = higher.iter().find(|o| verdict_read(o) == Some("keep")) {
            return Ok(near(of, &confirmed[&of]));
        }
        let higher: Vec<DocId> = higher
            .into_iter()
            .filter(|o| verdict_read(o).is_none())
            .collect();
        if !higher.is_empty() {
            // Another thread of this worker may hold a verdict waited for here.
            self.flush_verdicts()?;
        }
        let started = Instant::now();
        let mut waiting = higher;
        while !waiting.is_empty() {
            let verdicts = self.verdicts(&waiting)?;
            if let Some((&of, _)) =
                (waiting.iter().zip(&verdicts)).find(|(_, v)| v.as_deref() == Some("keep"))
            {
                return Ok(near(of, &confirmed[&of]));
            }
            waiting = (waiting.iter().zip(verdicts))
                .filter(|(_, v)| v.is_none())
                .map(|(&o, _)| o)
                .collect();
            if waiting.is_empty() || started.elapsed() >= VERDICT_WAIT {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        Ok(SharedDecision::Unique(id))
    }

    pub(super) fn verdicts(&self, ids: &[DocId]) -> Result<Vec<Option<String>>, ClusterError> {
        let mut pipe = redis::cluster::cluster_pipe();
        for &id in ids {
            pipe.cmd("GET").arg(self.verdict_key(id));
        }
        self.cluster.with(|con| pipe.query(con))
    }

    pub(super) fn set_verdict(&self, id: DocId, keep: bool) -> Result<(), ClusterError> {
        self.cluster.with(|con| {
            self.set_cmd(&self.verdict_key(id), if keep { "keep" } else { "yield" })
                .exec(con)
        })
    }
}
