//! The cluster's near-duplicate index: the local index's candidates and confirmation, kept
//! in Redis Cluster so that every worker decides against every page any worker stored.
//! Each candidate is judged by the rule of [`Confirm`](crate::index::Confirm) for one
//! candidate, the one the local index decides by.
//!
//! # Layout
//! - `{NAME}:nd:ids`: the id counter (`INCR`); ids are in the order workers asked.
//! - `NAME:nd:doc:{ID}`: a document's record (simhash, digest, length, sketch, tiny shingle
//!   set, name), encoded as the local index stores it.
//! - `NAME:nd:t:{T.P}`: permuted table `T`'s bucket for leading bits `P` (all of the table's
//!   leading bits, so every entry in a bucket shares them): 16-byte entries, the permuted
//!   simhash and the id, big-endian, appended (`APPEND`). Keys are exact 64-bit values;
//!   nothing goes through a floating-point score.
//! - `NAME:nd:b:{B.KEY}`: sketch band `B`'s bucket for band key `KEY`: 8-byte ids.
//! - `NAME:nd:digest:{DIGEST}`: the id that claimed an exact digest (`SET NX`).
//! - `NAME:nd:v:{ID}`: a document's verdict, `keep` or `yield`.
//! - `NAME:nd:w:{ID}`: the worker and incarnation that entered it (`WORKER INCARNATION`),
//!   and `NAME:nd:c:{ID}`: set once that worker's checkpoint made the page durable.
//!
//! # A page whose worker died before its checkpoint
//! A worker enters a page when it decides it, but the page is durable only at the worker's
//! next checkpoint; a worker killed before that loses the page (its outputs are cut back
//! to the checkpoint when it restarts, and the URL is fetched again). Such a document is
//! *lost*: not committed, and its incarnation is no longer alive. A lost document is never
//! an original: candidates that are lost are passed over (and marked `yield`), and a lost
//! holder of an exact digest hands the claim to the next copy (`SET .. XX GET`, so that
//! of two copies taking over, one does). A page called a duplicate of a document that was
//! still alive and is lost later keeps its `of`, whose URL is fetched again (by the
//! restarted worker, or the new owner of its host) and stored then.
//!
//! The hash tags spread documents, buckets and verdicts over the slots. The layout (the
//! table plan for k and n, the fingerprint version) is claimed with `SET NX` under
//! `NAME:nd:layout`; a worker asking for another is refused in one line.
//!
//! # Of several workers with the same or a near-same page, exactly one keeps it
//! An exact copy is settled by the digest claim: `SET NX` lets one id through, and the
//! others are exact duplicates of it, unless the rule, on the holder's record, finds by
//! their lines that the two are different pages of one host whose main text was taken from
//! what the site repeats; such a page goes on as a near copy does.
//!
//! Near copies cannot be settled by one command, since their entries lie in buckets on
//! different nodes. Each document therefore takes its id, writes its record and its table
//! entries first, and only then looks for candidates, so of two near copies presented at
//! once at least one finds the other (in the bucket they share, the later write comes after
//! the earlier one, and the later look after its own write). Then, over the confirmed
//! candidates:
//! 1. a document that finds one with a **lower** id, not known to have yielded, yields to it
//!    (at once: it waits for nobody);
//! 2. otherwise it waits for the verdicts of those with **higher** ids: one that kept did not
//!    find this document (rule 1 would have made it yield), so this one yields to it; if
//!    all yielded, this one keeps.
//!
//! Waits only go from lower ids to higher ones, so they end. Two near copies never both
//! keep: the higher one keeps only if it found nothing lower, and then the lower one found
//! it and waits for its `keep`. A verdict not written within [`VERDICT_WAIT`] (its worker
//! died mid-decision) counts as not kept: the waiting document keeps, so the failure mode is
//! a duplicate kept, never a page lost.
//!
//! The window that remains: in a group of three or more near copies raced at once, a
//! document can yield to a lower one that itself later yields to a higher one (rule 2), so
//! its `of` names a document that is itself a duplicate; the kept one is then a near copy of
//! its original, not necessarily of it.
//!
//! # Reconciling
//! The rule holds while Redis keeps what it acknowledged. Replication is asynchronous: a
//! master that fails over can lose a digest claim, a bucket entry or a verdict written just
//! before, and a copy that came later then keeps its page too. [`SharedIndex::reconcile`]
//! goes over every document kept and committed, in id order, and reports each one that is
//! an exact or confirmed near copy of an earlier kept one (marking it `yield`, so that no
//! later page yields to it): the later copy, recorded as a duplicate of the earlier
//! (`crawldedup reconcile --cluster`).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use super::filter::{Cluster, ClusterError};
use crate::fingerprint::FINGERPRINT_VERSION;
use crate::index::{DocId, DocRecord, IndexConfig, Plan, Similarity, Stored, plan};

mod reconcile;
pub use reconcile::Reconciled;

/// How long a document waits for the verdict of a higher-id near copy before it counts it
/// as not kept.
pub const VERDICT_WAIT: Duration = Duration::from_secs(10);

/// What the shared index decided for a document.
#[derive(Debug, Clone, PartialEq)]
pub enum SharedDecision {
    /// Kept: no worker holds an earlier copy.
    Unique(DocId),
    /// The same text as document `of`.
    Exact(DocId),
    /// A confirmed near copy of document `of`.
    Near {
        /// The document kept, or yielded to.
        of: DocId,
        /// Hamming distance of the simhashes.
        distance: u32,
        /// The estimates it was confirmed on.
        similarity: Similarity,
    },
}

/// The cluster's near-duplicate index.
pub struct SharedIndex<'c> {
    cluster: &'c Cluster,
    name: String,
    plan: Plan,
    config: IndexConfig,
    /// `WORKER INCARNATION` of the worker entering documents, when it is a crawl's.
    owner: Option<String>,
}

impl<'c> SharedIndex<'c> {
    /// Opens index `name` in the cluster with the local index's settings, claiming its
    /// layout when it is new.
    pub fn open(
        cluster: &'c Cluster,
        name: &str,
        config: IndexConfig,
    ) -> Result<SharedIndex<'c>, ClusterError> {
        if config.retention.is_some() {
            return Err(ClusterError::Params(
                "the shared index keeps every fingerprint: retention is not available on a \
                 cluster"
                    .into(),
            ));
        }
        let plan = match config.blocks {
            Some(blocks) => Plan::with_blocks(config.max_distance, blocks),
            None => Plan::choose(
                config.expected,
                config.max_distance,
                plan::DEFAULT_CANDIDATE_BUDGET,
            ),
        }
        .ok_or_else(|| {
            ClusterError::Params(format!(
                "no table layout for k = {} at n = {}",
                config.max_distance, config.expected
            ))
        })?;
        let wanted = format!(
            "fingerprint={FINGERPRINT_VERSION} k={} blocks={}",
            plan.k,
            plan.blocks.len()
        );
        let key = format!("{name}:nd:layout");
        let stored: String = cluster.with(|con| {
            redis::cmd("SET")
                .arg(&key)
                .arg(&wanted)
                .arg("NX")
                .exec(con)?;
            redis::cmd("GET").arg(&key).query(con)
        })?;
        if stored != wanted {
            return Err(cluster.state_error(format!(
                "near-duplicate index `{name}` was created as {stored}; this worker asks for \
                 {wanted}: give every worker the same dedup settings and version"
            )));
        }
        Ok(SharedIndex {
            cluster,
            name: name.to_string(),
            plan,
            config,
            owner: None,
        })
    }

    /// Documents entered from now on belong to incarnation `incarnation` of worker `id`,
    /// and count as originals only once [`SharedIndex::commit`] is called for them or
    /// while that incarnation lives.
    pub fn owned_by(mut self, id: &str, incarnation: u64) -> SharedIndex<'c> {
        self.owner = Some(format!("{id} {incarnation}"));
        self
    }

    /// Marks documents as durable (their worker's checkpoint holds their pages), and kept:
    /// a worker commits only pages it kept, and one killed after its checkpoint and before
    /// these marks went (they are sent at its restart) may find its documents passed over
    /// as lost and marked `yield` meanwhile; their pages are in its outputs all the same,
    /// so they count as kept again, and [`SharedIndex::reconcile`] names the copies the
    /// others kept in that time.
    pub fn commit(&self, ids: &[DocId]) -> Result<(), ClusterError> {
        if ids.is_empty() {
            return Ok(());
        }
        let mut pipe = redis::cluster::cluster_pipe();
        for &id in ids {
            pipe.cmd("SET").arg(self.commit_key(id)).arg(1).ignore();
            pipe.cmd("SET")
                .arg(self.verdict_key(id))
                .arg("keep")
                .ignore();
        }
        self.cluster.with(|con| pipe.exec(con))
    }

    fn commit_key(&self, id: DocId) -> String {
        super::keys::commit_key(&self.name, id)
    }

    fn owner_key(&self, id: DocId) -> String {
        format!("{}:nd:w:{{{id}}}", self.name)
    }

    /// Of `ids`, those that are lost (see the module documentation).
    fn lost(&self, ids: &[DocId]) -> Result<BTreeSet<DocId>, ClusterError> {
        let mut lost = BTreeSet::new();
        if ids.is_empty() {
            return Ok(lost);
        }
        let mut pipe = redis::cluster::cluster_pipe();
        for &id in ids {
            pipe.cmd("EXISTS").arg(self.commit_key(id));
            pipe.cmd("GET").arg(self.owner_key(id));
        }
        let replies: Vec<redis::Value> = self.cluster.with(|con| pipe.query(con))?;
        let mut alive: BTreeMap<String, bool> = BTreeMap::new();
        for (&id, pair) in ids.iter().zip(replies.chunks(2)) {
            let committed = matches!(pair[0], redis::Value::Int(1));
            let owner = match &pair[1] {
                redis::Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
                _ => continue,
            };
            if committed {
                continue;
            }
            let live = match alive.get(&owner) {
                Some(&live) => live,
                None => {
                    let (worker, incarnation) = owner.split_once(' ').unwrap_or((&owner, ""));
                    let live = match incarnation.parse::<u64>() {
                        Ok(i) => super::members::is_alive(self.cluster, &self.name, worker, i)?,
                        Err(_) => true,
                    };
                    alive.insert(owner.clone(), live);
                    live
                }
            };
            if !live {
                lost.insert(id);
            }
        }
        Ok(lost)
    }

    fn doc_key(&self, id: DocId) -> String {
        format!("{}:nd:doc:{{{id}}}", self.name)
    }

    fn verdict_key(&self, id: DocId) -> String {
        format!("{}:nd:v:{{{id}}}", self.name)
    }

    /// The bucket keys of a simhash and sketch: each table's, then each band's.
    fn buckets(&self, record: &DocRecord) -> (Vec<(String, u64)>, Vec<String>) {
        let tables = (0..self.plan.tables.len())
            .map(|t| {
                let permuted = self.plan.permute(t, record.simhash.0);
                let bits = self.plan.tables[t].leading_bits;
                let prefix = if bits == 0 {
                    0
                } else {
                    permuted >> (64 - bits)
                };
                (format!("{}:nd:t:{{{t}.{prefix:x}}}", self.name), permuted)
            })
            .collect();
        let bands = (record.sketch.band_keys().iter().enumerate())
            .map(|(b, key)| format!("{}:nd:b:{{{b}.{key:x}}}", self.name))
            .collect();
        (tables, bands)
    }

    /// Decides `record` against every document of the cluster and, unless it is an exact
    /// copy, enters it (see the module documentation for who keeps what).
    pub fn check_and_insert(&self, record: &DocRecord) -> Result<SharedDecision, ClusterError> {
        let id: DocId = self.cluster.with(|con| {
            redis::cmd("INCR")
                .arg(format!("{{{}}}:nd:ids", self.name))
                .query(con)
        })?;
        let digest_key = format!("{}:nd:digest:{{{}}}", self.name, record.digest);
        let claimed: Option<String> = self.cluster.with(|con| {
            if let Some(owner) = &self.owner {
                redis::cmd("SET")
                    .arg(self.owner_key(id))
                    .arg(owner)
                    .exec(con)?;
            }
            redis::cmd("SET")
                .arg(self.doc_key(id))
                .arg(record.encode())
                .exec(con)?;
            redis::cmd("SET")
                .arg(&digest_key)
                .arg(id)
                .arg("NX")
                .query(con)
        })?;
        if claimed.is_none() {
            let mut holder: DocId = self
                .cluster
                .with(|con| redis::cmd("GET").arg(&digest_key).query(con))?;
            // A lost holder hands the claim on; of several taking it over, the one whose
            // swap saw the lost holder has it.
            let mut taken = false;
            if self.lost(&[holder])?.contains(&holder) {
                self.set_verdict(holder, false)?;
                let before: Option<DocId> = self.cluster.with(|con| {
                    redis::cmd("SET")
                        .arg(&digest_key)
                        .arg(id)
                        .arg("XX")
                        .arg("GET")
                        .query(con)
                })?;
                match before {
                    Some(b) if b == holder => taken = true,
                    Some(b) => holder = b,
                    None => taken = true,
                }
            }
            // The holder's main text is this page's: an exact duplicate, unless the two
            // pages' lines say they are different pages of one host (the rule of
            // `Confirm::candidate`, as the local index applies it).
            if !taken && self.holder_is_exact(record, holder)? {
                self.set_verdict(id, false)?;
                return Ok(SharedDecision::Exact(holder));
            }
        }
        let (tables, bands) = self.buckets(record);
        let mut pipe = redis::cluster::cluster_pipe();
        for (key, permuted) in &tables {
            let mut entry = permuted.to_be_bytes().to_vec();
            entry.extend_from_slice(&id.to_be_bytes());
            pipe.cmd("APPEND").arg(key).arg(entry).ignore();
        }
        for key in &bands {
            pipe.cmd("APPEND")
                .arg(key)
                .arg(id.to_be_bytes().to_vec())
                .ignore();
        }
        self.cluster.with(|con| pipe.exec(con))?;

        let confirmed = self.confirmed_candidates(record, id, &tables, &bands)?;
        let decision = self.settle(id, &confirmed)?;
        self.set_verdict(id, matches!(decision, SharedDecision::Unique(_)))?;
        Ok(decision)
    }

    /// The candidates of `record` (other than itself) that the confirmation accepts, by id,
    /// with their distance and estimates.
    fn confirmed_candidates(
        &self,
        record: &DocRecord,
        id: DocId,
        tables: &[(String, u64)],
        bands: &[String],
    ) -> Result<BTreeMap<DocId, (u32, Similarity)>, ClusterError> {
        let mut pipe = redis::cluster::cluster_pipe();
        for (key, _) in tables {
            pipe.cmd("GET").arg(key);
        }
        for key in bands {
            pipe.cmd("GET").arg(key);
        }
        let buckets: Vec<Option<Vec<u8>>> = self.cluster.with(|con| pipe.query(con))?;
        let mut ids = BTreeSet::new();
        for ((_, permuted), bucket) in tables.iter().zip(&buckets) {
            for entry in bucket.as_deref().unwrap_or_default().chunks_exact(16) {
                let key = u64::from_be_bytes(entry[..8].try_into().unwrap_or_default());
                if (key ^ permuted).count_ones() <= self.plan.k {
                    ids.insert(u64::from_be_bytes(
                        entry[8..].try_into().unwrap_or_default(),
                    ));
                }
            }
        }
        for bucket in &buckets[tables.len()..] {
            for entry in bucket.as_deref().unwrap_or_default().chunks_exact(8) {
                ids.insert(u64::from_be_bytes(entry.try_into().unwrap_or_default()));
            }
        }
        ids.remove(&id);
        if ids.is_empty() {
            return Ok(BTreeMap::new());
        }
        let ids: Vec<DocId> = ids.into_iter().collect();
        let lost = self.lost(&ids)?;
        for &gone in &lost {
            self.set_verdict(gone, false)?;
        }
        let ids: Vec<DocId> = ids.into_iter().filter(|i| !lost.contains(i)).collect();
        if ids.is_empty() {
            return Ok(BTreeMap::new());
        }
        let mut pipe = redis::cluster::cluster_pipe();
        for &other in &ids {
            pipe.cmd("GET").arg(self.doc_key(other));
        }
        let records: Vec<Option<Vec<u8>>> = self.cluster.with(|con| pipe.query(con))?;
        let mut confirmed = BTreeMap::new();
        for (other, bytes) in ids.into_iter().zip(records) {
            let Some(bytes) = bytes else { continue };
            let stored = self.decode_record(other, &bytes)?;
            let distance = (stored.simhash.0 ^ record.simhash.0).count_ones();
            let row = Stored::of(&stored);
            let judged = self
                .config
                .confirm
                .candidate(record, &row, &[], || Ok::<_, ClusterError>(Some(stored)))?;
            if judged.confirmed {
                confirmed.insert(other, (distance, judged.similarity));
            }
        }
        Ok(confirmed)
    }

    /// Whether the page of `record` is an exact duplicate of `holder`, which holds its
    /// main text's digest: by [`Confirm::candidate`](crate::index::Confirm::candidate), on
    /// the holder's record. A holder whose record is gone keeps the claim.
    fn holder_is_exact(&self, record: &DocRecord, holder: DocId) -> Result<bool, ClusterError> {
        let bytes: Option<Vec<u8>> = self
            .cluster
            .with(|con| redis::cmd("GET").arg(self.doc_key(holder)).query(con))?;
        let Some(bytes) = bytes else { return Ok(true) };
        let stored = self.decode_record(holder, &bytes)?;
        let row = Stored::of(&stored);
        let judged = self
            .config
            .confirm
            .candidate(record, &row, &[], || Ok::<_, ClusterError>(Some(stored)))?;
        Ok(judged.exact)
    }

    /// Rules 1 and 2 of the module documentation.
    fn settle(
        &self,
        id: DocId,
        confirmed: &BTreeMap<DocId, (u32, Similarity)>,
    ) -> Result<SharedDecision, ClusterError> {
        let near = |of: DocId, &(distance, similarity): &(u32, Similarity)| SharedDecision::Near {
            of,
            distance,
            similarity,
        };
        let lower: Vec<DocId> = confirmed.range(..id).map(|(&o, _)| o).collect();
        if !lower.is_empty() {
            let verdicts = self.verdicts(&lower)?;
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
        let higher: Vec<DocId> = confirmed.range(id + 1..).map(|(&o, _)| o).collect();
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

    fn verdicts(&self, ids: &[DocId]) -> Result<Vec<Option<String>>, ClusterError> {
        let mut pipe = redis::cluster::cluster_pipe();
        for &id in ids {
            pipe.cmd("GET").arg(self.verdict_key(id));
        }
        self.cluster.with(|con| pipe.query(con))
    }

    fn set_verdict(&self, id: DocId, keep: bool) -> Result<(), ClusterError> {
        self.cluster.with(|con| {
            redis::cmd("SET")
                .arg(self.verdict_key(id))
                .arg(if keep { "keep" } else { "yield" })
                .exec(con)
        })
    }

    /// The name of document `id` (as given in its record).
    pub fn name_of(&self, id: DocId) -> Result<Option<String>, ClusterError> {
        let bytes: Option<Vec<u8>> = self
            .cluster
            .with(|con| redis::cmd("GET").arg(self.doc_key(id)).query(con))?;
        Ok(bytes.and_then(|b| DocRecord::decode(&b)).map(|r| r.name))
    }

    /// The record of document `id` from its stored bytes; a record that does not decode
    /// is damage, never a unique answer.
    fn decode_record(&self, id: DocId, bytes: &[u8]) -> Result<DocRecord, ClusterError> {
        DocRecord::decode(bytes).ok_or_else(|| {
            self.cluster
                .state_error(format!("document {id} of index `{}` is damaged", self.name))
        })
    }
}
