//! The simhash index: permuted tables (see [`plan`]) persisted in sled, queried from a
//! compact in-memory copy.
//!
//! # Storage
//! Three sled trees (details in [`store`]): the document records in chunks of 64 ids, a
//! compact row (simhash and digest) per document in chunks of 4,096, and a meta tree
//! (format version, layout, count written). The permuted tables are rebuilt in memory from
//! the rows on open rather than stored once per table.
//!
//! # Memory
//! Per table, the (permuted key, id) entries bucketed by the top bits of the key (about two
//! per bucket; built in O(n) by one scatter pass and a per-group counting sort), plus a list
//! of recent inserts chained from a direct-mapped array of heads, merged in by one
//! sequential pass when it passes a quarter of the table; and every document's digest, by
//! id. A query reads one bucket and one chain per table, and asks for the cache lines of
//! all tables before it reads any. On open the tables are built in parallel, one table per
//! job, from the stored simhashes.
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
//! [`WRITE_BATCH`] (one batch per tree); [`SimhashIndex::checkpoint`] writes the buffer and
//! flushes sled, and everything inserted before it survives a kill -9. Documents inserted
//! after the last checkpoint may be lost by a crash; the index is still whole on reopen
//! (the last written batch is mended from the document tree if a crash cut it short).

mod memory;
pub mod plan;
mod store;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};

use crate::fingerprint::{Digest, FINGERPRINT_VERSION, SKETCH_SLOTS, Simhash, Sketch};
use memory::{Bucketed, Scratch};
pub use plan::Plan;
use store::{Rows, Store, StoreError};

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
    /// The same digest (and simhash) is stored under this id; the lowest such id.
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

struct Memory {
    tables: Vec<Bucketed>,
    /// Every document's digest, by id.
    digests: Vec<Digest>,
    count: u64,
}

impl Memory {
    /// The lowest id among `near` (candidates of one fingerprint, by id, with distances)
    /// whose simhash is the same and whose digest is `digest`.
    fn exact(&self, near: &[(DocId, u32)], digest: Digest) -> Option<DocId> {
        near.iter()
            .filter(|&&(id, d)| d == 0 && self.digests.get(id as usize) == Some(&digest))
            .map(|&(id, _)| id)
            .min()
    }

    /// Asks for the cache lines that probes for `keys` will read: all the offsets first,
    /// then all the first entries, so that the misses overlap.
    fn prefetch(&self, keys: &[u64]) {
        for (table, &key) in self.tables.iter().zip(keys) {
            table.prefetch_offsets(key);
        }
        for (table, &key) in self.tables.iter().zip(keys) {
            table.prefetch_entries(key);
        }
    }

    /// Documents within `k` of the fingerprint whose permuted keys are `keys`, by id.
    fn near(&self, keys: &[u64], k: u32) -> Vec<(DocId, u32)> {
        let mut found = Vec::with_capacity(4);
        for (table, &key) in self.tables.iter().zip(keys) {
            table.probe(key, k, &mut found);
        }
        found.sort_unstable();
        found.dedup_by_key(|e| e.0);
        found
            .into_iter()
            .map(|(id, d)| (u64::from(id), d))
            .collect()
    }

    fn add(&mut self, keys: &[u64], digest: Digest, id: u32) {
        for (table, &key) in self.tables.iter_mut().zip(keys) {
            table.insert(key, id);
        }
        self.digests.push(digest);
        self.count += 1;
    }
}

/// The persistent simhash index.
pub struct SimhashIndex {
    path: PathBuf,
    db: sled::Db,
    store: Store,
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
    /// Opens the index in `dir`, creating it when empty. A stored index keeps its layout.
    pub fn open(dir: &Path, config: IndexConfig) -> Result<SimhashIndex, IndexError> {
        SimhashIndex::open_at(dir, config, None)
    }

    /// As [`SimhashIndex::open`], first dropping every document from id `limit` on: the
    /// index as it was when it held `limit` documents (a crawl rolls back to its last
    /// checkpoint this way).
    pub fn open_at(
        dir: &Path,
        config: IndexConfig,
        limit: Option<u64>,
    ) -> Result<SimhashIndex, IndexError> {
        let path = dir.to_path_buf();
        let store_error = |source| IndexError::Store {
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
        let db = crate::db::open(&sled::Config::new().path(dir).cache_capacity(256 << 20))
            .map_err(store_error)?;
        let store = Store::open(&db).map_err(store_error)?;
        let plan = match store.layout().map_err(store_error)? {
            Some((version, fp_version, k, blocks)) => {
                if version != INDEX_FORMAT_VERSION || fp_version != FINGERPRINT_VERSION {
                    return Err(corrupt(format!(
                        "format {version} with fingerprint version {fp_version}; this build uses {INDEX_FORMAT_VERSION} and {FINGERPRINT_VERSION}"
                    )));
                }
                Plan::with_blocks(k, blocks).ok_or_else(|| {
                    corrupt(format!("stored layout k = {k}, {blocks} blocks is invalid"))
                })?
            }
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
                store
                    .set_layout(
                        INDEX_FORMAT_VERSION,
                        FINGERPRINT_VERSION,
                        plan.k,
                        plan.blocks.len() as u32,
                    )
                    .map_err(store_error)?;
                plan
            }
        };
        let store_failure = |e: StoreError| match e {
            StoreError::Sled(source) => IndexError::Store {
                path: path.clone(),
                source,
            },
            StoreError::Corrupt(problem) => corrupt(problem),
        };
        let mut rows = store.load_rows().map_err(store_failure)?;
        if let Some(limit) = limit {
            if (rows.len() as u64) < limit {
                return Err(corrupt(format!(
                    "{} documents stored, the checkpoint expects {limit}",
                    rows.len()
                )));
            }
            store.truncate(limit, &mut rows).map_err(store_failure)?;
            db.flush().map_err(store_error)?;
        }
        if u32::try_from(rows.len()).is_err() {
            return Err(corrupt(format!(
                "{} documents is over the limit",
                rows.len()
            )));
        }
        let memory = build_memory(&plan, rows);
        let count = memory.count;
        Ok(SimhashIndex {
            path,
            db,
            store,
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

    /// Bytes of memory the in-memory tables use.
    pub fn memory_bytes(&self) -> usize {
        let memory = self.read();
        memory.tables.iter().map(Bucketed::bytes).sum::<usize>()
            + memory.digests.len() * std::mem::size_of::<Digest>()
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
        memory.prefetch(keys);
        memory.near(keys, self.plan.k)
    }

    /// The stored document with this id.
    pub fn get(&self, id: DocId) -> Result<Option<DocRecord>, IndexError> {
        {
            let pending = lock(&self.pending);
            if id >= pending.first {
                let at = usize::try_from(id - pending.first).unwrap_or(usize::MAX);
                return Ok(pending.docs.get(at).cloned());
            }
        }
        self.store.get(id).map_err(|e| self.store_error(e))
    }

    fn store_error(&self, e: StoreError) -> IndexError {
        match e {
            StoreError::Sled(source) => IndexError::Store {
                path: self.path.clone(),
                source,
            },
            StoreError::Corrupt(problem) => IndexError::Corrupt {
                path: self.path.clone(),
                problem,
            },
        }
    }

    /// Decides and, when unique, stores in one step. `confirm(id, distance)` is asked about
    /// each near candidate, closest first, and may refuse it (the short-text check); exact
    /// duplicates (the same digest and simhash) need no confirmation.
    pub fn check_and_insert(
        &self,
        record: DocRecord,
        mut confirm: impl FnMut(DocId, u32) -> bool,
    ) -> Result<Decision, IndexError> {
        let _writer = lock(&self.writer);
        let keys = self.keys(record.simhash);
        let mut near = {
            let memory = self.read();
            memory.prefetch(&keys);
            let near = memory.near(&keys, self.plan.k);
            if let Some(id) = memory.exact(&near, record.digest) {
                return Ok(Decision::Exact(id));
            }
            near
        };
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
        let digest = record.digest;
        let full = {
            let mut pending = lock(&self.pending);
            pending.docs.push(record);
            pending.docs.len() >= WRITE_BATCH
        };
        self.memory
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .add(&keys, digest, small);
        if full {
            self.write_pending()?;
        }
        Ok(Decision::Unique(id))
    }

    /// Writes the buffered documents to sled (see [`store`] for the order of writes).
    fn write_pending(&self) -> Result<(), IndexError> {
        // Hold the pending lock for the whole write, so that `get` never misses a
        // document that has left the buffer but not yet reached sled.
        let mut pending = lock(&self.pending);
        if pending.docs.is_empty() {
            return Ok(());
        }
        let first = pending.first;
        self.store
            .append(first, &pending.docs)
            .map_err(|e| self.store_error(e))?;
        pending.first = first + pending.docs.len() as u64;
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

/// Builds the in-memory tables from the stored rows: the permuted tables are jobs taken in
/// turn by one thread per core. Each table is built straight from the stored simhashes
/// (ids are row numbers), with no intermediate array of keys.
fn build_memory(plan: &Plan, rows: Rows) -> Memory {
    let table_count = plan.tables.len();
    let jobs = table_count;
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, jobs);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let simhashes = &rows.simhashes;
    let build = |job: usize, scratch: &mut Scratch| {
        Bucketed::build_from(
            plan.tables[job].leading_bits,
            simhashes.len(),
            |i| (plan.permute(job, simhashes[i]), i as u32),
            scratch,
        )
    };
    let mut built: Vec<(usize, Bucketed)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    let mut scratch = Scratch::default();
                    loop {
                        let job = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if job >= jobs {
                            return mine;
                        }
                        mine.push((job, build(job, &mut scratch)));
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("table builder panicked"))
            .collect()
    });
    built.sort_by_key(|&(job, _)| job);
    Memory {
        tables: built.into_iter().map(|(_, table)| table).collect(),
        count: rows.len() as u64,
        digests: rows.digests,
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}
