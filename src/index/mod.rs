//! The simhash index: permuted tables (see [`plan`]) persisted in sled, queried from a
//! compact in-memory copy.
//!
//! # Storage
//! One sled tree per table (key: permuted fingerprint, 8 bytes big-endian, then the
//! document id, 8 bytes big-endian), a document tree (id -> fingerprint, digest, text length,
//! name), a digest tree (digest -> id) and a meta tree (format version, layout). The document
//! tree is written first and is the truth: on open, table or digest entries that a crash cut
//! off are rebuilt from it.
//!
//! # Memory
//! Per table, a sorted array of (key, id) plus a small ordered set of recent inserts that is
//! merged into the array when it grows past an eighth of it, so an insert costs amortised
//! O(log n) and a query a binary search and a short scan per table.
//!
//! # Atomicity
//! [`SimhashIndex::check_and_insert`] looks up and inserts under one lock: of many callers
//! presenting the same or a near-same fingerprint at once, exactly one gets
//! [`Decision::Unique`].
//!
//! # Writes and durability
//! Unique documents are kept in a buffer and written to sled in batches of
//! [`WRITE_BATCH`] (one batch per tree); [`SimhashIndex::checkpoint`] writes the buffer and
//! flushes sled, and everything inserted before it survives a kill -9. Documents inserted
//! after the last checkpoint may be lost by a crash; the index is still whole on reopen
//! (the last written batch is mended from the document tree if a crash cut it short).

pub mod plan;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};

use crate::fingerprint::{Digest, FINGERPRINT_VERSION, SKETCH_SLOTS, Simhash, Sketch};
pub use plan::Plan;

/// A document's number in the index, given in insertion order from 0.
pub type DocId = u64;

/// Version of the on-disk layout (trees and record encoding).
pub const INDEX_FORMAT_VERSION: u32 = 2;

/// What went wrong with the index.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// sled failed.
    #[error("index {}: {source}", path.display())]
    Store {
        /// The index folder.
        path: PathBuf,
        /// The cause.
        source: sled::Error,
    },
    /// The stored index is damaged, or from another format or layout.
    #[error("index {}: {problem}", path.display())]
    Corrupt {
        /// The index folder.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// k or the layout is out of range.
    #[error("index layout: {0}")]
    Layout(String),
}

/// How an index is laid out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IndexConfig {
    /// Largest distance called a near-duplicate (k).
    pub max_distance: u32,
    /// Expected fingerprints (n), to choose the layout.
    pub expected: u64,
    /// Fix the number of blocks instead of choosing it from n.
    pub blocks: Option<u32>,
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            max_distance: 3,
            expected: 10_000_000,
            blocks: None,
        }
    }
}

/// What the index decided for a fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Nothing like it was there; it is now stored under this id.
    Unique(DocId),
    /// The same digest is stored under this id.
    Exact(DocId),
    /// A fingerprint within k is stored under this id (the closest; the lowest id on a tie).
    Near {
        /// The stored document.
        of: DocId,
        /// Hamming distance.
        distance: u32,
    },
}

/// A stored document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocRecord {
    /// Its simhash.
    pub simhash: Simhash,
    /// Its exact digest.
    pub digest: Digest,
    /// Characters of its main text.
    pub text_chars: u64,
    /// Its name: a URL or a file path.
    pub name: String,
    /// For a short text, its MinHash sketch (see [`Sketch`]).
    pub sketch: Option<Sketch>,
}

impl DocRecord {
    /// Encoding: simhash (8 bytes), digest (16), text length (8), sketch flag (1: 0 or 1),
    /// sketch (128 bytes when the flag is 1), then the name in UTF-8; integers big-endian.
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(33 + SKETCH_SLOTS * 4 + self.name.len());
        out.extend_from_slice(&self.simhash.0.to_be_bytes());
        out.extend_from_slice(&self.digest.0.to_be_bytes());
        out.extend_from_slice(&self.text_chars.to_be_bytes());
        match &self.sketch {
            Some(sketch) => {
                out.push(1);
                out.extend_from_slice(&sketch.to_bytes());
            }
            None => out.push(0),
        }
        out.extend_from_slice(self.name.as_bytes());
        out
    }

    fn decode(bytes: &[u8]) -> Option<DocRecord> {
        let simhash = Simhash(u64::from_be_bytes(bytes.get(0..8)?.try_into().ok()?));
        let digest = Digest(u128::from_be_bytes(bytes.get(8..24)?.try_into().ok()?));
        let text_chars = u64::from_be_bytes(bytes.get(24..32)?.try_into().ok()?);
        let (sketch, rest) = match bytes.get(32)? {
            0 => (None, 33),
            1 => {
                let end = 33 + SKETCH_SLOTS * 4;
                (Some(Sketch::from_bytes(bytes.get(33..end)?)?), end)
            }
            _ => return None,
        };
        let name = String::from_utf8(bytes.get(rest..)?.to_vec()).ok()?;
        Some(DocRecord {
            simhash,
            digest,
            text_chars,
            name,
            sketch,
        })
    }
}

#[derive(Default)]
struct MemTable {
    keys: Vec<u64>,
    ids: Vec<u32>,
    recent: BTreeSet<(u64, u32)>,
}

impl MemTable {
    fn insert(&mut self, key: u64, id: u32) {
        self.recent.insert((key, id));
        // Merging costs O(n); doing it when `recent` reaches n/8 keeps it amortised O(1).
        if self.recent.len() > 1024 && self.recent.len() * 8 > self.keys.len() {
            self.merge();
        }
    }

    fn merge(&mut self) {
        let mut all: Vec<(u64, u32)> = self
            .keys
            .iter()
            .copied()
            .zip(self.ids.iter().copied())
            .collect();
        all.extend(std::mem::take(&mut self.recent));
        all.sort_unstable();
        self.keys = all.iter().map(|e| e.0).collect();
        self.ids = all.iter().map(|e| e.1).collect();
    }

    fn probe(&self, key: u64, mask: u64, k: u32, out: &mut Vec<(u32, u32)>) {
        let lo = key & mask;
        let hi = lo | !mask;
        let start = self.keys.partition_point(|&x| x < lo);
        for (i, &stored) in self.keys[start..].iter().enumerate() {
            if stored > hi {
                break;
            }
            let d = (stored ^ key).count_ones();
            if d <= k {
                out.push((self.ids[start + i], d));
            }
        }
        for &(stored, id) in self.recent.range((lo, 0)..=(hi, u32::MAX)) {
            let d = (stored ^ key).count_ones();
            if d <= k {
                out.push((id, d));
            }
        }
    }
}

struct Memory {
    tables: Vec<MemTable>,
    digests: HashMap<u128, u32>,
    count: u64,
}

/// The persistent simhash index.
pub struct SimhashIndex {
    path: PathBuf,
    db: sled::Db,
    docs: sled::Tree,
    digests: sled::Tree,
    tables: Vec<sled::Tree>,
    meta: sled::Tree,
    plan: Plan,
    memory: RwLock<Memory>,
    writer: Mutex<()>,
    /// Documents decided unique but not yet written to sled, in id order from
    /// `Pending::first`; written in one batch per tree when `WRITE_BATCH` accumulate, and at
    /// every checkpoint.
    pending: Mutex<Pending>,
}

#[derive(Default)]
struct Pending {
    first: DocId,
    docs: Vec<(DocRecord, Vec<u64>)>,
}

/// Unique documents buffered before they are written to sled in one batch per tree.
pub const WRITE_BATCH: usize = 8192;

/// The meta key holding how many documents are fully written (docs, tables and digests).
const WRITTEN_KEY: &str = "written";

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
    /// Opens the index in `dir`, creating it when empty. A stored index keeps its layout.
    pub fn open(dir: &Path, config: IndexConfig) -> Result<SimhashIndex, IndexError> {
        let path = dir.to_path_buf();
        let store = |source| IndexError::Store {
            path: path.clone(),
            source,
        };
        let corrupt = |problem: String| IndexError::Corrupt {
            path: path.clone(),
            problem,
        };
        if config.max_distance > crate::config::MAX_DISTANCE_LIMIT {
            return Err(IndexError::Layout(format!(
                "k = {} is over the limit of {}",
                config.max_distance,
                crate::config::MAX_DISTANCE_LIMIT
            )));
        }
        let db = sled::Config::new()
            .path(dir)
            .cache_capacity(256 << 20)
            .open()
            .map_err(store)?;
        let meta = db.open_tree("meta").map_err(store)?;
        let (k, blocks) = match meta.get("layout").map_err(store)? {
            Some(v) if v.len() == 12 => {
                let version = u32::from_be_bytes([v[0], v[1], v[2], v[3]]);
                let fp_version = u32::from_be_bytes([v[4], v[5], v[6], v[7]]);
                if version != INDEX_FORMAT_VERSION || fp_version != FINGERPRINT_VERSION {
                    return Err(corrupt(format!(
                        "format {version} with fingerprint version {fp_version}; this build uses {INDEX_FORMAT_VERSION} and {FINGERPRINT_VERSION}"
                    )));
                }
                (u32::from(v[8]), u32::from(v[9]))
            }
            Some(_) => return Err(corrupt("unreadable layout record".into())),
            None => {
                let plan = match config.blocks {
                    Some(r) => Plan::with_blocks(config.max_distance, r),
                    None => Plan::choose(
                        config.expected,
                        config.max_distance,
                        plan::DEFAULT_CANDIDATE_BUDGET,
                    ),
                }
                .ok_or_else(|| {
                    IndexError::Layout(format!(
                        "no layout with {:?} blocks for k = {}",
                        config.blocks, config.max_distance
                    ))
                })?;
                let mut v = Vec::with_capacity(12);
                v.extend_from_slice(&INDEX_FORMAT_VERSION.to_be_bytes());
                v.extend_from_slice(&FINGERPRINT_VERSION.to_be_bytes());
                v.extend_from_slice(&[plan.k as u8, plan.blocks.len() as u8, 0, 0]);
                meta.insert("layout", v).map_err(store)?;
                (plan.k, plan.blocks.len() as u32)
            }
        };
        let plan = Plan::with_blocks(k, blocks)
            .ok_or_else(|| corrupt(format!("stored layout k = {k}, {blocks} blocks is invalid")))?;
        let docs = db.open_tree("docs").map_err(store)?;
        let digests = db.open_tree("digests").map_err(store)?;
        let tables = (0..plan.tables.len())
            .map(|t| db.open_tree(format!("table-{t:02}")))
            .collect::<Result<Vec<_>, _>>()
            .map_err(store)?;

        // Rebuild memory from the document tree, and mend trees a crash cut short: batches
        // are written docs first, then tables and digests, then the `written` count, so only
        // documents from that count on can lack their table and digest entries.
        let written = match meta.get(WRITTEN_KEY).map_err(store)? {
            Some(v) => u64::from_be_bytes(
                v.as_ref()
                    .try_into()
                    .map_err(|_| corrupt("unreadable written count".into()))?,
            ),
            None => 0,
        };
        let mut memory = Memory {
            tables: (0..plan.tables.len())
                .map(|_| MemTable::default())
                .collect(),
            digests: HashMap::new(),
            count: 0,
        };
        let mut per_table: Vec<Vec<(u64, u32)>> = vec![Vec::new(); plan.tables.len()];
        let mut mend_tables: Vec<sled::Batch> = vec![sled::Batch::default(); plan.tables.len()];
        let mut mend_digests = sled::Batch::default();
        let mut mended = 0u64;
        for item in docs.iter() {
            let (key, value) = item.map_err(store)?;
            let id = key_to_id(&key).ok_or_else(|| corrupt("bad document key".into()))?;
            if id != memory.count {
                return Err(corrupt(format!(
                    "document ids jump from {} to {id}",
                    memory.count
                )));
            }
            let record = DocRecord::decode(&value)
                .ok_or_else(|| corrupt(format!("document {id} is unreadable")))?;
            let small =
                u32::try_from(id).map_err(|_| corrupt(format!("document id {id} too large")))?;
            for (t, entries) in per_table.iter_mut().enumerate() {
                let permuted = plan.permute(t, record.simhash.0);
                entries.push((permuted, small));
                if id >= written {
                    mend_tables[t].insert(&table_key(permuted, id)[..], &[]);
                }
            }
            if id >= written {
                mend_digests.insert(&record.digest.0.to_be_bytes()[..], &id.to_be_bytes()[..]);
                mended += 1;
            }
            memory.digests.entry(record.digest.0).or_insert(small);
            memory.count += 1;
        }
        if mended > 0 || written != memory.count {
            for (tree, batch) in tables.iter().zip(mend_tables) {
                tree.apply_batch(batch).map_err(store)?;
            }
            digests.apply_batch(mend_digests).map_err(store)?;
            meta.insert(WRITTEN_KEY, &memory.count.to_be_bytes())
                .map_err(store)?;
            db.flush().map_err(store)?;
        }
        for (t, mut entries) in per_table.into_iter().enumerate() {
            entries.sort_unstable();
            memory.tables[t].keys = entries.iter().map(|e| e.0).collect();
            memory.tables[t].ids = entries.iter().map(|e| e.1).collect();
        }
        let count = memory.count;
        Ok(SimhashIndex {
            path,
            db,
            docs,
            digests,
            tables,
            meta,
            plan,
            memory: RwLock::new(memory),
            writer: Mutex::new(()),
            pending: Mutex::new(Pending {
                first: count,
                docs: Vec::new(),
            }),
        })
    }

    /// The layout in use.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Number of documents stored.
    pub fn len(&self) -> u64 {
        self.read().count
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every stored document within distance k of `simhash`, with its distance, by id.
    pub fn query(&self, simhash: Simhash) -> Vec<(DocId, u32)> {
        self.query_keys(&self.keys(simhash))
    }

    /// The permuted key of `simhash` in every table, computed once per page.
    fn keys(&self, simhash: Simhash) -> Vec<u64> {
        (0..self.plan.tables.len())
            .map(|t| self.plan.permute(t, simhash.0))
            .collect()
    }

    fn query_keys(&self, keys: &[u64]) -> Vec<(DocId, u32)> {
        let memory = self.read();
        let mut found = Vec::new();
        for (t, (table, &key)) in memory.tables.iter().zip(keys).enumerate() {
            table.probe(key, self.plan.leading_mask(t), self.plan.k, &mut found);
        }
        found.sort_unstable();
        found.dedup_by_key(|e| e.0);
        found
            .into_iter()
            .map(|(id, d)| (u64::from(id), d))
            .collect()
    }

    /// The stored document with this id.
    pub fn get(&self, id: DocId) -> Result<Option<DocRecord>, IndexError> {
        {
            let pending = lock(&self.pending);
            if id >= pending.first {
                let at = usize::try_from(id - pending.first).unwrap_or(usize::MAX);
                return Ok(pending.docs.get(at).map(|(record, _)| record.clone()));
            }
        }
        let value = self
            .docs
            .get(id.to_be_bytes())
            .map_err(|source| IndexError::Store {
                path: self.path.clone(),
                source,
            })?;
        Ok(value.and_then(|v| DocRecord::decode(&v)))
    }

    /// Decides and, when unique, stores in one step. `confirm(id, distance)` is asked about
    /// each near candidate, closest first, and may refuse it (the short-text check); exact
    /// digests need no confirmation.
    pub fn check_and_insert(
        &self,
        record: DocRecord,
        mut confirm: impl FnMut(DocId, u32) -> bool,
    ) -> Result<Decision, IndexError> {
        let _writer = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(&id) = self.read().digests.get(&record.digest.0) {
            return Ok(Decision::Exact(u64::from(id)));
        }
        let keys = self.keys(record.simhash);
        let mut near = self.query_keys(&keys);
        near.sort_by_key(|&(id, d)| (d, id));
        for (of, distance) in near {
            if confirm(of, distance) {
                return Ok(Decision::Near { of, distance });
            }
        }
        let id = self.len();
        let small = u32::try_from(id)
            .map_err(|_| IndexError::Layout("index full (2^32 documents)".into()))?;
        // Into the buffer before memory, so that whoever finds the id by a query can `get` it.
        let digest = record.digest.0;
        let full = {
            let mut pending = lock(&self.pending);
            pending.docs.push((record, keys.clone()));
            pending.docs.len() >= WRITE_BATCH
        };
        {
            let mut memory = self.memory.write().unwrap_or_else(|p| p.into_inner());
            for (table, &key) in memory.tables.iter_mut().zip(&keys) {
                table.insert(key, small);
            }
            memory.digests.insert(digest, small);
            memory.count += 1;
        }
        if full {
            self.write_pending()?;
        }
        Ok(Decision::Unique(id))
    }

    /// Writes the buffered documents to sled: one batch for the documents, then one per
    /// table and one for the digests, then the `written` count.
    fn write_pending(&self) -> Result<(), IndexError> {
        let store = |source| IndexError::Store {
            path: self.path.clone(),
            source,
        };
        // Hold the pending lock for the whole write, so that `get` never misses a
        // document that has left the buffer but not yet reached sled.
        let mut pending = lock(&self.pending);
        if pending.docs.is_empty() {
            return Ok(());
        }
        let first = pending.first;
        let mut docs = sled::Batch::default();
        let mut tables = vec![sled::Batch::default(); self.tables.len()];
        let mut digests = sled::Batch::default();
        for (offset, (record, keys)) in pending.docs.iter().enumerate() {
            let id = first + offset as u64;
            docs.insert(&id.to_be_bytes()[..], record.encode());
            for (batch, &key) in tables.iter_mut().zip(keys) {
                batch.insert(&table_key(key, id)[..], &[]);
            }
            digests.insert(&record.digest.0.to_be_bytes()[..], &id.to_be_bytes()[..]);
        }
        // The documents first: they are the record from which the rest can be rebuilt.
        self.docs.apply_batch(docs).map_err(store)?;
        for (tree, batch) in self.tables.iter().zip(tables) {
            tree.apply_batch(batch).map_err(store)?;
        }
        self.digests.apply_batch(digests).map_err(store)?;
        let written = first + pending.docs.len() as u64;
        self.meta
            .insert(WRITTEN_KEY, &written.to_be_bytes())
            .map_err(store)?;
        pending.first = written;
        pending.docs.clear();
        Ok(())
    }

    /// Makes everything inserted so far durable: writes the buffered documents and flushes
    /// sled.
    pub fn checkpoint(&self) -> Result<(), IndexError> {
        self.write_pending()?;
        self.db
            .flush()
            .map(|_| ())
            .map_err(|source| IndexError::Store {
                path: self.path.clone(),
                source,
            })
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Memory> {
        self.memory.read().unwrap_or_else(|p| p.into_inner())
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

fn table_key(permuted: u64, id: DocId) -> [u8; 16] {
    let mut key = [0u8; 16];
    key[..8].copy_from_slice(&permuted.to_be_bytes());
    key[8..].copy_from_slice(&id.to_be_bytes());
    key
}

fn key_to_id(key: &[u8]) -> Option<DocId> {
    Some(u64::from_be_bytes(key.try_into().ok()?))
}
