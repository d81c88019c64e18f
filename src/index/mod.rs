//! The near-duplicate index: permuted simhash tables (see [`plan`]) and sketch band
//! tables, persisted in sled, queried from a compact in-memory copy; every candidate either
//! finds is confirmed on its sketch before a document is called a near-duplicate.
//!
//! # Candidates and confirmation
//! Two sources of candidates, because each misses what the other finds cheaply:
//! - the permuted simhash tables (Manku, Jain and Das Sarma, WWW 2007): every stored
//!   fingerprint within k bits. On word 3-shingles this finds light edits (a changed date, a
//!   comment: 70-90% of them at k = 3) at no cost beyond the tables;
//! - the band tables: the 16 keys of [`Sketch::band_keys`] (4 sketch bins each), matched
//!   exactly. Two texts of resemblance R share a band with probability `1 - (1 - R^4)^16`:
//!   0.997 at R = 0.74 (5% of words replaced), 1.6e-6 at R = 0.01. This is the LSH banding of
//!   MinHash deduplicators (datatrove, text-dedup), and what finds the heavier edits that move
//!   a simhash past any radius the tables can afford.
//!
//! A candidate is then judged by [`Confirm`] on the two sketches (estimated
//! resemblance, or containment for a text with an appended thread), or, when both texts
//! are tiny, on their exact shingle sets, kept in their records (Henzinger, SIGIR 2006,
//! combines simhash candidates with a shingle-resemblance check the same way). A candidate
//! refused costs one comparison of 64 bytes in memory. Of the confirmed candidates the most
//! similar wins.
//!
//! # Storage
//! Three sled trees (details in `store/mod.rs`): the document records in chunks of 32 ids
//! (what a row does not hold: the name, the tiny set, the lines' profile), a
//! compact row (simhash, digest, length, time stored and sketch: 100 bytes) per document in
//! chunks of 64 (every value stays under sled's blob threshold, so the space of deleted
//! values is reclaimed by sled's log), and a meta tree (format version, fingerprint version, layout, count written). The
//! tables are rebuilt in memory from the rows on open rather than stored once per table.
//! Beside the database, a `manifest` written at every checkpoint records how many
//! documents the checkpoint made durable and a checksum of their rows; opening refuses, in
//! one line, an index that holds fewer of them or other ones (sled reads a database whose
//! files were cut or overwritten as a shorter or empty one, which would answer `unique` for
//! every page it lost).
//!
//! # Memory
//! Per table, an array of 64-byte lines of eight (32-bit key fragment, id) entries, each
//! entry in the first line with a free slot from a home line chosen by the key's shared
//! prefix (`memory.rs`): a probe reads one line, and the insert after it writes into that
//! line. A query asks for the home lines of all 26 tables before it reads any. Beside the
//! tables, every live document's row, by id. An index opened from an older `snapshot`
//! carries the documents after it as a small *tail* per table, probed with it, until the
//! upkeep thread has folded it in (`upkeep`).
//!
//! # Opening
//! From the snapshot a clean close wrote, or one the upkeep thread wrote in the background
//! after a checkpoint (`snapshot`): the tables' sections are mapped from the page cache,
//! and the documents after them are read from sled as tails. Without a usable snapshot the
//! tables are rebuilt from the rows, one table per job on every core. Either way the rows
//! are checked against the manifest first.
//!
//! # Retention
//! With a retention window (`dedup.retention`), a document stored at `t` (by the index's
//! [`Clock`]) is a candidate while `now < t + window` and not after, whether or not it has
//! been swept. Ids are given in time order (a clock that goes back is held at the newest
//! time), so the expired documents are always a prefix of the ids: [`SimhashIndex::sweep`]
//! drops them from the rows in memory a bounded step at a time, the tables drop their
//! entries when they next grow (an insert may take an expired entry's slot before), and
//! once a checkpoint's manifest has recorded the floor,
//! their sled chunks are deleted. Opening reads the rows from the manifest's floor on; rows
//! below it that a crash left on disk are never read, so nothing expired comes back.
//!
//! # Exact duplicates
//! An exact duplicate is a stored document with the same digest and the same simhash. The
//! same text always has both (the digest and the features ignore the same layout), so an
//! exact duplicate is among the candidates at distance 0 that the tables find anyway, and
//! its digest is compared there: no table of digests to build on open or to probe.
//!
//! # Atomicity
//! [`SimhashIndex::check_and_insert`] looks up and inserts under one lock: of many callers
//! presenting the same or a near-same fingerprint at once, exactly one gets
//! [`Decision::Unique`].
//!
//! # Writes and durability
//! Unique documents are kept in a buffer and written to sled in batches of
//! [`WRITE_BATCH`] (one batch per tree), by a background thread (`writer.rs`) so that the
//! inserting thread goes on deciding; [`SimhashIndex::checkpoint`] hands over the buffer,
//! waits for every batch to be written, flushes sled, then writes the manifest, and
//! everything inserted before it survives a kill -9. Documents inserted after the last
//! checkpoint may be lost by a crash; the index is still whole on reopen (the last written
//! batch is mended from the document tree if a crash cut it short).

mod confirm;
mod decision;
mod durable;
mod error;
mod lookup;
// Internal: public for the crate's own tests and benchmarks (feature `testing`), not
// part of the API.
mod growth;
#[cfg(feature = "testing")]
#[doc(hidden)]
pub mod manifest;
#[cfg(not(feature = "testing"))]
#[allow(dead_code)]
pub(crate) mod manifest;
mod memory;
mod open;
pub mod plan;
mod record;
mod retention;
// Internal: public for the crate's own tests and benchmarks (feature `testing`), not
// part of the API.
#[cfg(feature = "testing")]
#[doc(hidden)]
pub mod snapshot;
#[cfg(not(feature = "testing"))]
#[allow(dead_code)]
pub(crate) mod snapshot;
mod store;
mod tables;
// Internal: public for the crate's own tests and benchmarks (feature `testing`), not
// part of the API.
#[cfg(feature = "testing")]
#[doc(hidden)]
pub mod upkeep;
#[cfg(not(feature = "testing"))]
#[allow(dead_code)]
pub(crate) mod upkeep;
mod writer;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use crate::clock::Clock;

use crate::fingerprint::{FINGERPRINT_VERSION, Simhash, Sketch};
use manifest::Manifest;
use memory::Bucketed;
use record::Judgement;
use store::{Store, StoreError};
use tables::{Keys, Memory};

pub(crate) use confirm::Judged;
pub use confirm::{
    ADDED_WORDS, Confirm, ExactLikeness, LINES_FROM_CONTAINMENT, LINES_FROM_RESEMBLANCE,
    MIN_CONTAINMENT, MIN_LINE_CONTAINMENT, MIN_RESEMBLANCE, MIN_SIZE_RATIO, OWN_WORDS,
    SHORT_MIN_RESEMBLANCE, SHORT_TEXT_CHARS, SMALL_SET_FACTOR, TINY_MAX_GROWTH,
    TINY_MIN_RESEMBLANCE, TINY_SHINGLES, exact_similarity, tiny_likeness,
};
pub(crate) use decision::round3;
pub use decision::{
    DEFAULT_MAX_DISTANCE, Decision, IndexConfig, MAX_DISTANCE_LIMIT, Probe, Similarity,
};
pub use error::IndexError;
pub use plan::Plan;
pub use record::DocRecord;
pub(crate) use record::Stored;
pub use retention::{RetentionStats, Sweep};
pub use upkeep::SnapshotStats;

/// What to do about a damaged index, the end of every message that reports one.
const RESTORE: &str =
    "nothing was changed: restore the state directory from a backup, or start a new one";

/// A document's number in the index, given in insertion order from 0.
pub type DocId = u64;

/// Version of the on-disk layout (trees and record encoding). Version 6 keeps the lines'
/// profile of a page with a host in its record; version 7 keeps in a record only what its
/// row does not hold (the name, the tiny set and the lines' profile); version 8 marks the
/// profile of a page of more lines than a profile keeps as a sample by key
/// ([`Blocks::sampled`](crate::fingerprint::Blocks::sampled)), which a build that reads 7
/// at most would take for a damaged record; version 9 signs a profile's lines by their
/// words and shingles and marks such a profile, so that the profiles stored before
/// ([`Blocks::legacy`](crate::fingerprint::Blocks::legacy)) are compared with the new ones
/// by their lines' keys only; version 10 samples the profile of a page of more lines than
/// a profile keeps by length, its longest lines, and marks it, so that a brief under a
/// large template stays in its profile (the samples stored before are read by key,
/// [`Coverage::ByKey`](crate::fingerprint::blocks::Coverage::ByKey)); version 11 keeps the
/// page's headline in its profile ([`Blocks::headline`](crate::fingerprint::Blocks::headline)),
/// a flag a build that reads 10 at most would take for a damaged record.
pub const INDEX_FORMAT_VERSION: u32 = 11;

/// The oldest index format this build opens. An index of an older format than
/// [`INDEX_FORMAT_VERSION`] is upgraded in place when it opens: its stored records stay as
/// they are and are read as before, new ones are written in the current format.
pub const OLDEST_INDEX_FORMAT: u32 = 6;

/// The oldest fingerprint version this build opens. An index of fingerprint version 4 is
/// upgraded to [`FINGERPRINT_VERSION`] in place when it opens, with a warning: version 5
/// reads Hangul a syllable pair at a time where 4 read it by its spaces, and changes
/// nothing else (a text without Hangul has the same fingerprint in both). A Korean page
/// stored before is still found exactly (the digest does not depend on tokens); an edited
/// copy of one may not be found and is then stored as a page of its own: a repeat kept,
/// never a page lost.
pub const OLDEST_FINGERPRINT: u32 = 4;

/// The persistent simhash index.
///
/// # Lock order
/// A thread that holds more than one of the index's locks takes them in this order, and
/// releases none to take an earlier one:
/// 1. `writer` (one check-and-insert or insert at a time) or `durable` (one checkpoint at
///    a time), never both;
/// 2. `memory`, for reading (a decision, a checkpoint's count) or writing (an insert);
/// 3. `pending`;
/// 4. the background writer's state (`writer::BatchWriter`).
///
/// The upkeep thread takes `memory` and its own state one at a time. A decision reads the
/// full records of some candidates from `pending` and the background writer with `writer`
/// and `memory` held, and never reads sled with any of them held: it lets them go, reads
/// what it lacks and decides again (`lookup`).
pub struct SimhashIndex {
    path: PathBuf,
    db: sled::Db,
    store: Store,
    plan: Plan,
    confirm: Confirm,
    /// The retention window in seconds (`None`: keep everything).
    retention: Option<u64>,
    /// Where the time of insertion and the age of documents come from.
    clock: Arc<dyn Clock>,
    /// The floor recorded in the last manifest: chunks below it may be deleted from sled.
    durable_floor: AtomicU64,
    /// Documents expired since opening.
    expired: AtomicU64,
    /// Candidates the confirmation refused in check-and-insert, since opening.
    refused: std::sync::atomic::AtomicU64,
    /// The tables and rows; shared with the upkeep thread, which folds tails in and copies
    /// them into snapshots.
    memory: Arc<RwLock<Memory>>,
    /// Folds tails in and writes snapshots in the background (see `upkeep`); it also
    /// knows the snapshot in place, so that a close that finds memory unchanged writes none.
    upkeep: upkeep::Upkeep,
    /// Whether the open read the snapshot rather than rebuilding from sled.
    from_snapshot: bool,
    writer: Mutex<()>,
    /// Documents known durable (the count at the start of the last checkpoint); held for
    /// the whole of a checkpoint, so that callers of [`SimhashIndex::sync`] queue behind
    /// the one running and most find their documents covered by it.
    durable: Mutex<u64>,
    /// Documents decided unique but not yet written to sled, in id order from
    /// `Pending::first`; written in one batch per tree when `WRITE_BATCH` accumulate, and at
    /// every checkpoint.
    pending: Mutex<Pending>,
    /// Writes full batches of pending documents to sled off the inserting thread.
    background: writer::BatchWriter,
    /// The state directory the index belongs to, named in each manifest
    /// ([`crate::ledger`]).
    state: crate::state_id::StateId,
    /// [`SimhashIndex::close`] ran: `Drop` has nothing left to do.
    closed: bool,
}

/// What [`SimhashIndex::close`] (and [`crate::Dedup::close`]) did.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct CloseReport {
    /// Documents the index holds, every one of them durable.
    pub documents: u64,
    /// Whether a snapshot was written for the next open (none when the one in place
    /// already is this index, or is one this process cannot write in place with fewer
    /// documents after it than a quarter of those it holds, or the index is too small to
    /// need one).
    pub snapshot_written: bool,
    /// Seconds the close took.
    pub seconds: f64,
}

#[derive(Default)]
struct Pending {
    first: DocId,
    docs: Vec<DocRecord>,
}

/// Unique documents buffered before they are written to sled.
pub const WRITE_BATCH: usize = 8192;

impl std::fmt::Debug for SimhashIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimhashIndex")
            .field("path", &self.path)
            .field("tables", &self.plan.tables.len())
            .field("len", &self.len())
            .finish()
    }
}

impl SimhashIndex {
    /// The layout in use.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The rule candidates are confirmed by.
    pub fn confirm(&self) -> &Confirm {
        &self.confirm
    }

    /// Bytes of the index's database on disk (0 when sled cannot say).
    pub fn disk_bytes(&self) -> u64 {
        self.db.size_on_disk().unwrap_or(0)
    }

    /// Number of documents stored since the index was created, expired ones included (the
    /// id the next document gets).
    pub fn len(&self) -> u64 {
        self.read().count()
    }

    /// Documents held: stored and not yet expired.
    pub fn live(&self) -> u64 {
        self.read().docs.len() as u64
    }

    /// Uses `clock` for the time of insertion and the age of documents (the system clock
    /// by default).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> SimhashIndex {
        self.clock = clock;
        self
    }

    /// Writes a `snapshot` when the index holds at least `documents` documents, in the
    /// background and when it closes (`snapshot::SNAPSHOT_MIN_DOCUMENTS` by default; 0 for
    /// always, `u64::MAX` for never).
    pub fn with_snapshot_min_documents(self, documents: u64) -> SimhashIndex {
        self.upkeep.set_snapshot_min(documents);
        self
    }

    /// The memory a new index of `config` takes once `documents` documents are in it (or
    /// room is made for them): what `dedup.expected_pages` asks for at open.
    pub fn memory_needed(config: &IndexConfig, documents: u64) -> u64 {
        let tables = match config.blocks {
            Some(r) => plan::Plan::with_blocks(config.max_distance, r),
            None => plan::Plan::choose(
                config.expected,
                config.max_distance,
                plan::DEFAULT_CANDIDATE_BUDGET,
            ),
        }
        .map_or(1, |plan| plan.tables.len());
        tables::bytes_for(tables, documents)
    }

    /// Documents the last checkpoint made durable (what its manifest records).
    pub fn durable_documents(&self) -> u64 {
        *lock(&self.durable)
    }

    /// Names the state directory the index belongs to in its manifest (see
    /// [`crate::ledger`]), writing the manifest at once when it named none or another.
    pub(crate) fn belong_to(&mut self, state: crate::state_id::StateId) -> Result<(), IndexError> {
        if self.state == state {
            return Ok(());
        }
        self.state = state;
        let mut durable = lock(&self.durable);
        *durable = self.checkpoint_locked()?;
        Ok(())
    }

    /// Whether this index was opened from its `snapshot` (else its tables were rebuilt
    /// from the stored rows).
    pub fn opened_from_snapshot(&self) -> bool {
        self.from_snapshot
    }

    /// What the snapshots written in the background have done.
    pub fn snapshot_stats(&self) -> SnapshotStats {
        self.upkeep.stats()
    }

    /// Waits until the tails that an open from an older snapshot added are folded into the
    /// tables (at once when there are none), or `timeout` passed; returns whether they are.
    pub fn wait_tails_folded(&self, timeout: std::time::Duration) -> bool {
        self.upkeep.wait_folded(timeout)
    }

    /// Candidates that the sketch confirmation refused since opening.
    pub fn candidates_refused(&self) -> u64 {
        self.refused.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of memory the in-memory index uses: its tables and its rows.
    pub fn memory_bytes(&self) -> usize {
        self.table_bytes() + self.read().docs.capacity() * std::mem::size_of::<Stored>()
    }

    /// Bytes of memory the tables alone use (what a growth changes, and what
    /// [`IndexConfig::reserve`] takes up front), with the memory backed ahead of their next
    /// growth, if any.
    pub fn table_bytes(&self) -> usize {
        let memory = self.read();
        memory.tables.iter().map(Bucketed::bytes).sum::<usize>()
            + memory.bands.iter().map(Bucketed::bytes).sum::<usize>()
    }

    /// Every stored document within distance k of `simhash` in the permuted tables, with
    /// its distance, by id (the first candidate source alone, unconfirmed).
    pub fn query(&self, simhash: Simhash) -> Vec<(DocId, u32)> {
        let keys = self.keys(simhash, &Sketch::default());
        let cutoff = self.cutoff();
        let memory = self.read();
        memory.prefetch(&keys);
        let mut found = memory.within(&keys, self.plan.k);
        found.retain(|&(id, _)| memory.doc(u64::from(id)).is_some_and(|d| d.at >= cutoff));
        found
            .into_iter()
            .map(|(id, d)| (u64::from(id), d))
            .collect()
    }

    /// The stored document with this id. Once it is in the database, its text length and
    /// time stored come back as its row keeps them, in 32 bits (saturating: past 4 G
    /// characters, past the year 2106).
    pub fn get(&self, id: DocId) -> Result<Option<DocRecord>, IndexError> {
        match self.buffered(id) {
            Some(record) => Ok(record),
            None => self.store.get(id, None).map_err(|e| self.store_error(e)),
        }
    }

    /// The document with this id when it is not yet in sled: pending, or in the batch the
    /// background writer is writing (`Some`); `None` when only sled holds it.
    fn buffered(&self, id: DocId) -> Option<Option<DocRecord>> {
        let pending = lock(&self.pending);
        if id >= pending.first {
            let at = usize::try_from(id - pending.first).unwrap_or(usize::MAX);
            return Some(pending.docs.get(at).cloned());
        }
        // Under the pending lock: a batch leaves `pending` and enters the writer at once.
        self.background.get(id).map(Some)
    }

    fn store_error(&self, e: StoreError) -> IndexError {
        open::store_failure(&self.path, e)
    }

    /// Decides and, when unique, stores in one step (see the module doc for what is a
    /// candidate and how it is confirmed).
    pub fn check_and_insert(&self, record: DocRecord) -> Result<Decision, IndexError> {
        Ok(self.check_and_insert_nearest(record)?.0)
    }

    /// As [`SimhashIndex::check_and_insert`], also returning, for a unique document, the
    /// estimates of the most alike candidate that the confirmation refused (none when no
    /// candidate was found).
    ///
    /// The record's `at` is set to the clock's time, or to the newest document's time if
    /// the clock went back, so that times never decrease with the id.
    pub fn check_and_insert_nearest(
        &self,
        record: DocRecord,
    ) -> Result<(Decision, Option<Similarity>), IndexError> {
        self.check_and_insert_probed(record, &Probe::default())
    }

    /// As [`SimhashIndex::check_and_insert_nearest`], for a page with what its host adds
    /// ([`Probe`]).
    pub fn check_and_insert_probed(
        &self,
        mut record: DocRecord,
        probe: &Probe<'_>,
    ) -> Result<(Decision, Option<Similarity>), IndexError> {
        let keys = self.probe_keys(&record, probe);
        let cutoff = self.cutoff();
        // sled is read with no lock held; the writer lock of the last pass is kept.
        let (judgement, (_writer, stored)) = self.judge_whole(|fetched| {
            let writer = lock(&self.writer);
            let memory = self.read();
            record.at = self.stamp(&memory);
            let judgement = self.decide(&memory, &keys, &record, probe, cutoff, fetched)?;
            Ok((judgement, (writer, Stored::of(&record))))
        })?;
        let keys = keys.into_iter().next().expect("a record's own keys");
        self.refused
            .fetch_add(judgement.refused, std::sync::atomic::Ordering::Relaxed);
        if let Some(decision) = judgement.decision {
            return Ok((decision, None));
        }
        let nearest = judgement.nearest;
        let id = self.append(record, &keys, stored)?;
        Ok((Decision::Unique(id), nearest))
    }

    /// Stores `record` as a new document without looking for duplicates, and returns its
    /// id: for a new version of a page whose earlier version the index holds (a recrawl
    /// that found the page changed), which must be kept although it resembles the earlier
    /// one. Its `at` is set as [`SimhashIndex::check_and_insert`] sets it.
    pub fn insert(&self, mut record: DocRecord) -> Result<DocId, IndexError> {
        let _writer = lock(&self.writer);
        let keys = self.keys(record.simhash, &record.sketch);
        record.at = self.stamp(&self.read());
        let stored = Stored::of(&record);
        self.append(record, &keys, stored)
    }

    /// The time a document inserted now is stored at: the clock's, rounded up to the
    /// second (so that a retention window never ends early: it ends within a second after
    /// `window`), or the newest document's if the clock went back, so that times never
    /// decrease with the id.
    fn stamp(&self, memory: &Memory) -> u64 {
        let newest = memory.docs.back().map_or(0, |d| u64::from(d.at));
        self.clock.now_ms().div_ceil(1000).max(newest)
    }

    /// Adds a document under the next id (the caller holds the writer lock).
    fn append(&self, record: DocRecord, keys: &Keys, stored: Stored) -> Result<DocId, IndexError> {
        let id = self.len();
        let small = u32::try_from(id)
            .ok()
            .filter(|&id| id < u32::MAX)
            .ok_or_else(|| IndexError::Layout("index full (2^32 - 1 documents)".into()))?;
        // Into the buffer before memory, so that whoever finds the id by a query can `get` it.
        let full = {
            let mut pending = lock(&self.pending);
            pending.docs.push(record);
            pending.docs.len() >= WRITE_BATCH
        };
        self.memory
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .add(keys, stored, small);
        if full {
            self.write_pending()?;
        }
        Ok(id)
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Memory> {
        self.memory.read().unwrap_or_else(|p| p.into_inner())
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_of_an_older_format_is_refused_with_both_versions_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        {
            let index = SimhashIndex::open(dir.path(), IndexConfig::default()).unwrap();
            index.checkpoint().unwrap();
            // What the previous format (2, fingerprint 2) wrote into the meta tree.
            index.store.set_layout(2, 2, 3, 6).unwrap();
            index.db.flush().unwrap();
        }
        let e = SimhashIndex::open(dir.path(), IndexConfig::default()).unwrap_err();
        let line = e.to_string();
        assert!(
            matches!(e, IndexError::Format { found: (2, 2), .. }),
            "{line}"
        );
        assert!(
            line.contains("index format 2 and fingerprint version 2"),
            "{line}"
        );
        assert!(
            line.contains(&format!(
                "formats {OLDEST_INDEX_FORMAT} to {INDEX_FORMAT_VERSION} and fingerprint versions {OLDEST_FINGERPRINT} to {FINGERPRINT_VERSION}"
            )),
            "{line}"
        );
        assert!(line.contains("start a new state directory"), "{line}");
        assert!(!line.contains('\n'));
        // Nothing was overwritten: the old layout is still there.
        let e = SimhashIndex::open(dir.path(), IndexConfig::default()).unwrap_err();
        assert!(matches!(e, IndexError::Format { found: (2, 2), .. }));
    }
}
