//! The cluster's near-duplicate index: the local index's candidates and confirmation, kept
//! in Redis Cluster so that every worker decides against every page any worker stored.
//! Each candidate is judged by the rule of [`Confirm`](crate::index::Confirm) for one
//! candidate, the one the local index decides by.
//!
//! # Layout
//! - `{NAME}:nd:ids`: the id counter; a worker takes [`ID_BLOCK`] ids at a time
//!   (`INCRBY`), so ids are in the order the blocks were taken.
//! - `NAME:nd:doc:{ID}`: a document's record (simhash, digest, length, sketch, tiny shingle
//!   set, name), encoded as the local index stores it.
//! - `NAME:nd:t:{G}:T.P`: permuted table `T`'s bucket for leading bits `P` (all of the
//!   table's leading bits, so every entry in a bucket shares them): 16-byte entries, the
//!   permuted simhash and the id, big-endian, appended (`APPEND`). Keys are exact 64-bit
//!   values; nothing goes through a floating-point score. `G` is the tag of the table's
//!   slot group (`groups.rs`): one a master of the cluster when the index was created, so
//!   that a page's buckets on one master are entered and read by one script call.
//! - `NAME:nd:b:{G}:B.KEY`: sketch band `B`'s bucket for band key `KEY`: 8-byte ids.
//! - `NAME:nd:groups`: the groups' tags.
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
//! The hash tags spread documents, digests and verdicts over the slots, and put each
//! master's buckets in one slot of that master. The layout (the table plan for k and n, the
//! fingerprint version, grouped buckets, the records' format) is claimed with `SET NX`
//! under `NAME:nd:layout`; a worker asking for another is refused in one line, and a newer
//! build raises an older record format it reads (`layout.rs`).
//!
//! # Of several workers with the same or a near-same page, exactly one keeps it
//! An exact copy is settled by the digest claim: `SET NX GET` lets one id through and
//! answers the others with its holder, and they are exact duplicates of it, unless the rule, on the holder's record, finds by
//! their lines that the two are different pages of one host whose main text was taken from
//! what the site repeats; such a page goes on as a near copy does.
//!
//! Near copies cannot be settled by one command, since their entries lie in buckets on
//! different nodes. Each document therefore takes its id, writes its record, and reads each
//! of its buckets only after appending its own entry to it (in one script a slot group,
//! which Redis runs whole), so of two near copies presented at once at least one finds the
//! other (in the bucket they share, the later append comes after the earlier one, and the
//! later read after its own append). Its record goes in the same round trip, to another
//! node, so a reader can find an entry a moment before its record: a missing record whose
//! worker lives is read again a few times before it is passed over. Then, over the
//! confirmed candidates:
//! 1. a document that finds one with a **lower** id, not known to have yielded, yields to it
//!    (at once: it waits for nobody);
//! 2. otherwise it waits for the verdicts of those with **higher** ids: one that kept did not
//!    find this document (rule 1 would have made it yield), so this one yields to it; if
//!    all yielded, this one keeps.
//!
//! Waits only go from lower ids to higher ones, so they end. Two near copies never both
//! keep: the higher one keeps only if it found nothing lower, and then the lower one found
//! it and waits for its `keep`. A document's verdict is written with its worker's next
//! round trip, or by the index's thread when no page comes within a millisecond (at the
//! latest when the worker checkpoints, flushes or drops the index): only a near copy raced
//! against it waits for it meanwhile. A verdict not written within [`VERDICT_WAIT`] (its
//! worker died mid-decision) counts as not kept: the waiting document keeps, so the failure
//! mode is a duplicate kept, never a page lost.
//!
//! # One round trip
//! A page is decided in one round trip when the candidates its buckets name, and the
//! holder of its digest, are new to it, among the last [`OWN_DOCS`] documents its worker
//! entered (`own.rs`), or among the last [`SETTLED_DOCS`] settled documents of other
//! workers it read (`settled.rs`): the worker knows their records and verdicts, and that
//! they are not lost. A candidate another worker entered lies in slots of its own id, apart
//! from the buckets, and the first time a worker meets it, its record, marks and verdict
//! take a second round trip; once it is settled (committed, of no crawl, or yielded), the
//! worker remembers it. The host ring gives each host to one worker, so a site's copies are
//! mostly the first kind; the copies of a story syndicated to many hosts find the same
//! original and its earlier copies, and after the first are mostly the last kind.
//!
//! The window that remains: in a group of three or more near copies raced at once, a
//! document can yield to a lower one that itself later yields to a higher one (rule 2), so
//! its `of` names a document that is itself a duplicate; the kept one is then a near copy of
//! its original, not necessarily of it.
//!
//! # Retention
//! With a retention window (`dedup.retention`), a document stored at `t` (seconds on the
//! storing worker's [`Clock`], kept in its record) is a candidate while `now < t + window`
//! on the deciding worker's clock, and not after: the rule of the local index, so a
//! document expires cluster-wide within a second after its window when the workers'
//! clocks agree. An expired document is passed over as a candidate and as the holder of an
//! exact digest (the next copy takes the claim over, as from a lost holder), so a page
//! stored again after the window is a new original.
//! - Redis frees the memory: a document's record, owner, verdict, commit mark and digest
//!   claim are written with an expiry of the window plus [`EXPIRY_MARGIN`].
//! - Table and band buckets are cut into time slices of `ceil(window / 4)` seconds
//!   (`NAME:nd:t:{G}:T.P:S`, in the bucket's slot group): an entry goes into the slice of its
//!   document's time, a lookup reads the slices from that of `now - window` to the one
//!   after the current one (a worker whose clock runs ahead writes there), and a slice
//!   expires in Redis [`EXPIRY_MARGIN`] after the last of its documents does. A bucket's
//!   memory is that of about `1.25` windows.
//! - The window is part of the layout: a worker asking for another one is refused.
//!
//! # Reconciling
//! The rule holds while Redis keeps what it acknowledged. Replication is asynchronous: a
//! master that fails over can lose a digest claim, a bucket entry or a verdict written just
//! before, and a copy that came later then keeps its page too. [`SharedIndex::reconcile`]
//! goes over every document kept and committed, in id order, and reports each one that is
//! an exact or confirmed near copy of an earlier kept one (marking it `yield`, so that no
//! later page yields to it): the later copy, recorded as a duplicate of the earlier
//! (`crawldedup reconcile --cluster`). Under retention each document is judged at the time
//! it was stored, so a page stored again after its original's window is not reported.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::filter::{Cluster, ClusterError, EXPIRY_MARGIN, millis};
use crate::clock::Clock;
use crate::fingerprint::FINGERPRINT_VERSION;
use crate::index::{DocId, DocRecord, IndexConfig, Plan, Similarity, plan};
use holder::Holder;

mod buckets;
mod decide;
pub(crate) mod groups;
mod holder;
mod layout;
mod liveness;
mod own;
mod reconcile;
mod settled;
mod verdicts;
pub use own::OWN_DOCS;
pub use reconcile::Reconciled;
pub use settled::SETTLED_DOCS;
// Internal: public for the ring simulation (feature `testing`), not part of the API.
#[cfg(feature = "testing")]
#[doc(hidden)]
pub use groups::group_of;

/// How long a document waits for the verdict of a higher-id near copy before it counts it
/// as not kept.
pub const VERDICT_WAIT: Duration = Duration::from_secs(10);

/// Ids a worker takes from the counter at a time (`INCRBY`): one round trip for this many
/// pages. Ids are then in the order the blocks were taken, not the pages decided; the rules
/// need only that every worker orders them alike.
pub const ID_BLOCK: u64 = 64;

/// How often, and how long apart, a candidate whose record is not there yet is read again:
/// its worker writes its record in the same pipeline as its bucket entries, to other nodes,
/// so a reader can find the entry a moment before the record.
const RECORD_RETRIES: u32 = 5;
const RECORD_RETRY_WAIT: Duration = Duration::from_millis(2);

/// Time slices per retention window of the buckets (see "Retention" in the module
/// documentation).
pub const RETENTION_SLICES: u64 = 4;

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
    /// The retention window in seconds (`None`: keep everything).
    retention: Option<u64>,
    clock: Arc<dyn Clock>,
    /// The tags of the buckets' slot groups (see `groups.rs`).
    groups: Vec<String>,
    /// The ids taken and not yet given: the next one and the last one of the block.
    ids: Mutex<(DocId, DocId)>,
    /// The verdicts decided and not yet written: sent with the next page's round trip, or
    /// by the index's thread when no page comes soon (`verdicts.rs`).
    verdicts: verdicts::Verdicts,
    /// This worker's last documents and its verdicts on them (`own.rs`).
    own: Mutex<own::KnownDocs>,
    /// Other workers' documents read lately whose state is final (`settled.rs`).
    settled: Mutex<own::KnownDocs>,
    /// What this worker found of other workers' incarnations: alive, and until when, or
    /// gone (`liveness.rs`).
    liveness: liveness::Liveness,
}

impl<'c> SharedIndex<'c> {
    /// Opens index `name` in the cluster with the local index's settings, claiming its
    /// layout when it is new.
    pub fn open(
        cluster: &'c Cluster,
        name: &str,
        config: IndexConfig,
    ) -> Result<SharedIndex<'c>, ClusterError> {
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
        let retention = config.retention.map(crate::clock::window_secs);
        let settings = format!(
            "fingerprint={FINGERPRINT_VERSION} k={} blocks={} buckets=grouped-by-key",
            plan.k,
            plan.blocks.len()
        );
        layout::claim(cluster, name, &layout::layout(&settings, retention))?;
        let groups = groups::load_or_claim(cluster, name)?;
        let verdicts = verdicts::Verdicts::start(
            cluster,
            verdicts::VerdictKeys {
                name: name.to_string(),
                ttl_ms: retention.map(|w| w.saturating_mul(1000) + millis(EXPIRY_MARGIN)),
            },
        )?;
        Ok(SharedIndex {
            cluster,
            name: name.to_string(),
            plan,
            config,
            owner: None,
            retention,
            clock: crate::clock::system(),
            groups,
            ids: Mutex::new((1, 0)),
            verdicts,
            own: Mutex::new(own::KnownDocs::new(OWN_DOCS)),
            settled: Mutex::new(own::KnownDocs::new(SETTLED_DOCS)),
            liveness: liveness::Liveness::default(),
        })
    }

    /// The next id: from the block taken, or from a new block (`INCRBY`).
    fn next_id(&self) -> Result<DocId, ClusterError> {
        let mut ids = self
            .ids
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if ids.0 > ids.1 {
            let last: DocId = self.cluster.with(|con| {
                redis::cmd("INCRBY")
                    .arg(format!("{{{}}}:nd:ids", self.name))
                    .arg(ID_BLOCK)
                    .query(con)
            })?;
            *ids = (last + 1 - ID_BLOCK, last);
        }
        let id = ids.0;
        ids.0 += 1;
        Ok(id)
    }

    /// Adds the verdicts not yet written to `pipe`, and forgets them; how many it added.
    fn pending_into(&self, pipe: &mut redis::cluster::ClusterPipeline) -> usize {
        let pending = self.verdicts.take();
        for &(id, keep) in &pending {
            let verdict = if keep { "keep" } else { "yield" };
            pipe.add_command(self.set_cmd(&self.verdict_key(id), verdict))
                .ignore();
        }
        pending.len()
    }

    /// Writes the verdicts decided and not yet written now (the index's thread writes them
    /// a moment after they are decided otherwise). [`SharedIndex::commit`] does it, and so
    /// does dropping the index.
    pub fn flush_verdicts(&self) -> Result<(), ClusterError> {
        let mut pipe = redis::cluster::cluster_pipe();
        if self.pending_into(&mut pipe) == 0 {
            return Ok(());
        }
        self.cluster.with(|con| pipe.exec(con))
    }

    /// Measures the retention window on `clock` (the system's by default).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> SharedIndex<'c> {
        self.clock = clock;
        self
    }

    /// Sets `key` to `value`, with the expiry of a document's keys under retention.
    fn set_cmd(&self, key: &str, value: impl redis::ToRedisArgs) -> redis::Cmd {
        let mut cmd = redis::cmd("SET");
        cmd.arg(key).arg(value);
        if let Some(ms) = self.document_ttl_ms() {
            cmd.arg("PX").arg(ms);
        }
        cmd
    }

    /// How long a document's keys live in Redis under retention: the window and the margin.
    fn document_ttl_ms(&self) -> Option<u64> {
        self.retention
            .map(|w| w.saturating_mul(1000) + millis(EXPIRY_MARGIN))
    }

    /// Whether a document stored at `at` is out of the window at `now` (never without
    /// retention).
    fn expired_at(&self, at: u64, now: u64) -> bool {
        self.retention
            .is_some_and(|window| now >= at.saturating_add(window))
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
        let mut pipe = redis::cluster::cluster_pipe();
        if self.pending_into(&mut pipe) == 0 && ids.is_empty() {
            return Ok(());
        }
        for &id in ids {
            pipe.add_command(self.set_cmd(&self.commit_key(id), 1))
                .ignore();
            pipe.add_command(self.set_cmd(&self.verdict_key(id), "keep"))
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

    /// Adds to `pipe` what says whether document `id` is lost: its commit mark and its
    /// owner (two replies, read by [`SharedIndex::lost_among`]).
    fn probe_lost(&self, pipe: &mut redis::cluster::ClusterPipeline, id: DocId) {
        pipe.cmd("EXISTS").arg(self.commit_key(id));
        pipe.cmd("GET").arg(self.owner_key(id));
    }

    /// Whether a document is committed, and whether it has an owner, from the replies of
    /// [`SharedIndex::probe_lost`].
    fn marks_of(replies: &[redis::Value]) -> (bool, bool) {
        (
            matches!(replies.first(), Some(redis::Value::Int(1))),
            matches!(replies.get(1), Some(redis::Value::BulkString(_))),
        )
    }

    /// Whether document `id` is lost (see the module documentation), from the replies of
    /// [`SharedIndex::probe_lost`].
    fn lost_among(&self, replies: &[redis::Value]) -> Result<bool, ClusterError> {
        let (committed, _) = Self::marks_of(replies);
        let owner = match replies.get(1) {
            Some(redis::Value::BulkString(b)) => String::from_utf8_lossy(b).into_owned(),
            _ => return Ok(false),
        };
        if committed {
            return Ok(false);
        }
        Ok(!self.liveness.alive(self.cluster, &self.name, &owner)?)
    }

    fn doc_key(&self, id: DocId) -> String {
        format!("{}:nd:doc:{{{id}}}", self.name)
    }

    fn verdict_key(&self, id: DocId) -> String {
        format!("{}:nd:v:{{{id}}}", self.name)
    }

    /// Decides `record` against every document of the cluster and enters it (see the
    /// module documentation for who keeps what). The record is stored with the time of the
    /// index's clock, rounded up to the second.
    ///
    /// One round trip for a page without candidates, a pipeline the client splits per node:
    /// the verdicts decided before and not yet written; the page's record, its owner and
    /// its digest claim (`SET NX GET`, which answers the holder); and per slot group of its
    /// buckets one script (`groups::ENTER_AND_READ`) that appends its entry to each bucket
    /// and reads each after its append. Then, only when needed: the holder's record and
    /// marks, when the digest is held; the candidates' records, marks and verdicts, when
    /// there are any; but not for a holder or candidates among this worker's last
    /// [`OWN_DOCS`] documents, which it knows (`own.rs`). The page's own verdict goes with
    /// the next page's round trip. Its id comes from a block taken ahead ([`ID_BLOCK`]).
    pub fn check_and_insert(&self, record: &DocRecord) -> Result<SharedDecision, ClusterError> {
        // Stored at the clock's time rounded up to the second, as the local index stamps
        // it, so that a window never ends early.
        let now_ms = self.clock.now_ms();
        let (now, at) = (now_ms / 1000, now_ms.div_ceil(1000));
        let mut timed;
        let record = if record.at == at {
            record
        } else {
            timed = record.clone();
            timed.at = at;
            &timed
        };
        let id = self.next_id()?;
        let digest_key = format!("{}:nd:digest:{{{}}}", self.name, record.digest);
        let mut pipe = redis::cluster::cluster_pipe();
        self.pending_into(&mut pipe);
        if let Some(owner) = &self.owner {
            pipe.add_command(self.set_cmd(&self.owner_key(id), owner))
                .ignore();
        }
        pipe.add_command(self.set_cmd(&self.doc_key(id), record.encode()))
            .ignore();
        let mut claim = self.set_cmd(&digest_key, id);
        claim.arg("NX").arg("GET");
        pipe.add_command(claim);
        let lookup = self.enter(&mut pipe, record, id, now);
        let replies: Vec<redis::Value> = self.cluster.with(|con| pipe.query(con))?;
        self.own_docs().entered(id, Arc::new(record.clone()));
        let mut holder: Option<DocId> = match replies.first() {
            Some(redis::Value::BulkString(held)) => {
                std::str::from_utf8(held).ok().and_then(|h| h.parse().ok())
            }
            Some(redis::Value::Int(held)) => u64::try_from(*held).ok(),
            _ => None,
        }
        // The page's own claim: the round trip was sent again after a failure (a master
        // failing over) that had applied it, so the page holds the claim itself, and is
        // no copy of itself.
        .filter(|&held| held != id);
        let found = lookup.found(replies.get(1..).unwrap_or_default(), id, self.plan.k);
        // A holder passed over (lost, or out of the window) hands the claim on; of several
        // taking it over, the one whose swap saw it has it. One taken over meanwhile is
        // judged in its turn.
        for _ in 0..2 {
            let Some(held) = holder else { break };
            match self.judge_holder(record, held, &digest_key, now)? {
                Holder::Exact => {
                    // Its entries are in the buckets: marked with the next round trip, a
                    // near copy that finds it passes it over.
                    self.decided(id, false);
                    return Ok(SharedDecision::Exact(held));
                }
                Holder::Different => break,
                Holder::PassedOver => {
                    if self.take_digest(id, held, &digest_key)? {
                        break;
                    }
                    holder = self
                        .cluster
                        .with(|con| redis::cmd("GET").arg(&digest_key).query(con))?;
                }
            }
        }
        let (confirmed, verdicts) = self.confirmed_candidates(record, found, now)?;
        let decision = self.settle(id, &confirmed, &verdicts)?;
        self.decided(id, matches!(decision, SharedDecision::Unique(_)));
        Ok(decision)
    }

    /// Document `id` was decided: its verdict is written with the worker's next round trip,
    /// or by the index's thread within `verdicts::FLUSH_DELAY` when no page comes. A near
    /// copy raced against it waits that much longer for it; one that finds it meanwhile
    /// and would yield to it, were it a duplicate, yields to a page whose original is kept.
    fn decided(&self, id: DocId, keep: bool) {
        self.own_docs().decided(id, keep);
        self.verdicts.push(id, keep);
    }

    /// This worker's last documents.
    fn own_docs(&self) -> std::sync::MutexGuard<'_, own::KnownDocs> {
        self.own
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Other workers' settled documents read lately.
    fn settled_docs(&self) -> std::sync::MutexGuard<'_, own::KnownDocs> {
        self.settled
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Document `id`, when it is one of this worker's last ones or a settled one of
    /// another worker's read lately: judged with no round trip.
    fn known_doc(&self, id: DocId) -> Option<own::Known> {
        let own = self.own_docs().get(id);
        own.or_else(|| self.settled_docs().get(id))
    }

    /// Remembers document `id` of another worker's, read with `record` and found not lost,
    /// when what was read of it is final (`settled.rs`).
    fn remember_if_settled(
        &self,
        id: DocId,
        record: &Arc<DocRecord>,
        (committed, owned, verdict): (bool, bool, Option<&str>),
    ) {
        if let Some(keep) = settled::settled(committed, owned, verdict) {
            self.settled_docs()
                .remember(id, settled::known(Arc::clone(record), keep));
        }
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
