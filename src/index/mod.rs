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
//! A candidate is then judged by [`ConfirmPolicy`] on the two sketches (estimated
//! resemblance, or containment for a text with an appended thread), or, when both texts
//! are tiny, on their exact shingle sets, kept in their records (Henzinger, SIGIR 2006,
//! combines simhash candidates with a shingle-resemblance check the same way). A candidate
//! refused costs one comparison of 64 bytes in memory. Of the confirmed candidates the most
//! similar wins.
//!
//! # Storage
//! Three sled trees (details in [`store`]): the document records in chunks of 64 ids, a
//! compact row (simhash, digest, length and sketch: 96 bytes) per document in chunks of
//! 1,024, and a meta tree (format version, fingerprint version, layout, count written). The
//! tables are rebuilt in memory from the rows on open rather than stored once per table.
//! Beside the database, a [`manifest`] written at every checkpoint records how many
//! documents the checkpoint made durable and a checksum of their rows; opening refuses, in
//! one line, an index that holds fewer of them or other ones (sled reads a database whose
//! files were cut or overwritten as a shorter or empty one, which would answer `unique` for
//! every page it lost).
//!
//! # Memory
//! Per table, the (key, id) entries bucketed by the top bits of the key (8-byte keys in
//! the simhash tables, 4-byte keys in the band tables, whose four 8-bit bins hold no more;
//! 8 to 16 entries per bucket; built in O(n) by one scatter pass and a per-group counting sort), plus a list of
//! recent inserts chained from a direct-mapped array of heads, merged in by one sequential
//! pass when it passes a quarter of the table; and every document's row, by id. A query
//! reads one bucket and one chain per table, and asks for the cache lines of all tables
//! before it reads any. On open the tables are built in parallel, one table per job, from
//! columns of the stored rows.
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
//! flushes sled, then writes the manifest, and everything inserted before it survives a
//! kill -9. Documents inserted
//! after the last checkpoint may be lost by a crash; the index is still whole on reopen
//! (the last written batch is mended from the document tree if a crash cut it short).

pub mod manifest;
mod memory;
pub mod plan;
mod store;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};

use crate::fingerprint::{BANDS, Digest, FINGERPRINT_VERSION, SKETCH_BYTES, Simhash, Sketch};
use manifest::{MANIFEST_FILE, Manifest};
use memory::{Bucketed, Scratch};
pub use plan::Plan;
use store::{Rows, Store, StoreError};

/// What to do about a damaged index, the end of every message that reports one.
const RESTORE: &str =
    "nothing was changed: restore the state directory from a backup, or start a new one";

/// A document's number in the index, given in insertion order from 0.
pub type DocId = u64;

/// Version of the on-disk layout (trees and record encoding).
pub const INDEX_FORMAT_VERSION: u32 = 4;

/// What went wrong with the index.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// sled failed.
    #[error("index {}: {}", path.display(), crate::db::describe(source))]
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
    /// The stored index was written by a build with other index or fingerprint formats;
    /// nothing was changed.
    #[error(
        "index {}: written with index format {} and fingerprint version {}, this build reads format {INDEX_FORMAT_VERSION} and fingerprint version {FINGERPRINT_VERSION}; start a new state directory (or run the pages through again), the old one is left as it was",
        path.display(), found.0, found.1
    )]
    Format {
        /// The index folder.
        path: PathBuf,
        /// (index format, fingerprint version) found.
        found: (u32, u32),
    },
    /// k or the layout is out of range.
    #[error("index layout: {0}")]
    Layout(String),
}

impl IndexError {
    /// Builders of the two errors about the index at `path`: sled's, and damage.
    fn makers(
        path: &Path,
    ) -> (
        impl Fn(sled::Error) -> IndexError + Copy + '_,
        impl Fn(String) -> IndexError + Copy + '_,
    ) {
        (
            move |source| IndexError::Store {
                path: path.to_path_buf(),
                source,
            },
            move |problem| IndexError::Corrupt {
                path: path.to_path_buf(),
                problem,
            },
        )
    }
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
    /// When a candidate is a near-duplicate.
    pub confirm: ConfirmPolicy,
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            max_distance: 3,
            expected: 10_000_000,
            blocks: None,
            confirm: ConfirmPolicy::default(),
        }
    }
}

/// What the index decided for a fingerprint.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Decision {
    /// Nothing like it was there; it is now stored under this id.
    Unique(DocId),
    /// The same digest (and simhash) is stored under this id; the lowest such id.
    Exact(DocId),
    /// A candidate confirmed on its sketch is stored under this id (the most similar; the
    /// lowest id on a tie).
    Near {
        /// The stored document.
        of: DocId,
        /// Hamming distance between the simhashes (over k when the bands found it).
        distance: u32,
        /// The estimates it was confirmed on.
        similarity: Similarity,
    },
}

/// Estimated likeness of two texts, from their sketches ([`Sketch`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Similarity {
    /// Estimated Jaccard similarity of the two sets of word 3-shingles.
    pub resemblance: f64,
    /// Estimated share of the smaller text's shingles found in the larger.
    pub containment: f64,
}

/// When a candidate is called a near-duplicate: its estimated resemblance reaches
/// `min_resemblance` (`short_min_resemblance` when either text is shorter than
/// `short_text_chars`, `tiny_min_resemblance` when either has fewer than `tiny_shingles`
/// distinct shingles), or, for two long texts of which the smaller has at least
/// `min_size_ratio` of the larger's shingles, its estimated containment reaches
/// `min_containment` (an article with a comment thread appended, say).
///
/// The defaults and their measurement are in [`crate::dedup`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConfirmPolicy {
    /// Resemblance that confirms a candidate between long texts.
    pub min_resemblance: f64,
    /// Resemblance that confirms a candidate when either text is short.
    pub short_min_resemblance: f64,
    /// Texts under this many characters are short.
    pub short_text_chars: u32,
    /// Containment that confirms a candidate between long texts.
    pub min_containment: f64,
    /// Containment is only considered when the smaller shingle set is at least this share
    /// of the larger.
    pub min_size_ratio: f64,
    /// Texts with fewer distinct shingles than this are tiny.
    pub tiny_shingles: u32,
    /// Resemblance that confirms a candidate when either text is tiny.
    pub tiny_min_resemblance: f64,
}

impl Default for ConfirmPolicy {
    fn default() -> Self {
        ConfirmPolicy {
            min_resemblance: crate::dedup::MIN_RESEMBLANCE,
            short_min_resemblance: crate::dedup::SHORT_MIN_RESEMBLANCE,
            short_text_chars: 500,
            min_containment: crate::dedup::MIN_CONTAINMENT,
            min_size_ratio: crate::dedup::MIN_SIZE_RATIO,
            tiny_shingles: crate::dedup::TINY_SHINGLES,
            tiny_min_resemblance: crate::dedup::TINY_MIN_RESEMBLANCE,
        }
    }
}

impl ConfirmPolicy {
    /// Whether either of two texts with these sketches is tiny.
    pub fn tiny(&self, a: &Sketch, b: &Sketch) -> bool {
        a.shingles.min(b.shingles) < self.tiny_shingles
    }

    /// The likeness of a pair, and whether it confirms the pair. `exact` holds the pair's
    /// exact resemblance and containment when they are known (two tiny texts, compared on
    /// their whole shingle sets); otherwise the sketches' estimates are used.
    pub fn judge(
        &self,
        a: (&Sketch, u32),
        b: (&Sketch, u32),
        exact: Option<Similarity>,
    ) -> (Similarity, bool) {
        let ((a, a_chars), (b, b_chars)) = (a, b);
        let similarity = exact.unwrap_or_else(|| Similarity {
            resemblance: a.resemblance(b),
            containment: a.containment(b),
        });
        let short = a_chars.min(b_chars) < self.short_text_chars;
        let confirmed = if self.tiny(a, b) {
            similarity.resemblance >= self.tiny_min_resemblance
        } else if short {
            similarity.resemblance >= self.short_min_resemblance
        } else {
            let (small, large) = (
                a.shingles.min(b.shingles) as f64,
                a.shingles.max(b.shingles) as f64,
            );
            similarity.resemblance >= self.min_resemblance
                || (similarity.containment >= self.min_containment
                    && small >= self.min_size_ratio * large)
        };
        (similarity, confirmed)
    }
}

/// Exact resemblance and containment of two sorted sets without repeats.
pub fn exact_similarity<T: Ord>(a: &[T], b: &[T]) -> Similarity {
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - common;
    Similarity {
        resemblance: common as f64 / union.max(1) as f64,
        containment: common as f64 / a.len().min(b.len()).max(1) as f64,
    }
}

/// A stored document.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DocRecord {
    /// Its simhash.
    pub simhash: Simhash,
    /// Its exact digest.
    pub digest: Digest,
    /// Characters of its main text.
    pub text_chars: u64,
    /// Its name: a URL or a file path.
    pub name: String,
    /// Its confirmation sketch (see [`Sketch`]).
    pub sketch: Sketch,
    /// For a tiny text (fewer than [`ConfirmPolicy::tiny_shingles`] distinct shingles), its
    /// whole shingle set ([`crate::fingerprint::tiny_set`]), on which tiny candidates are
    /// confirmed exactly; empty otherwise.
    pub tiny_set: Vec<u32>,
}

impl DocRecord {
    /// The record of a main text under `name`, with its fingerprint.
    pub fn new(name: &str, text: &str, fingerprint: &crate::Fingerprint) -> DocRecord {
        DocRecord {
            simhash: fingerprint.simhash,
            digest: fingerprint.digest,
            text_chars: fingerprint.chars as u64,
            name: name.to_string(),
            sketch: fingerprint.sketch,
            tiny_set: if fingerprint.sketch.shingles < crate::dedup::TINY_SHINGLES {
                crate::fingerprint::tiny_set(text)
            } else {
                Vec::new()
            },
        }
    }
}

impl DocRecord {
    /// Encoding: simhash (8 bytes), digest (16), text length (8), sketch
    /// ([`SKETCH_BYTES`]), the tiny set (a u16 count, then 4 bytes each), then the name in
    /// UTF-8; integers big-endian.
    fn encode(&self) -> Vec<u8> {
        let set = &self.tiny_set[..self.tiny_set.len().min(usize::from(u16::MAX))];
        let mut out = Vec::with_capacity(34 + SKETCH_BYTES + 4 * set.len() + self.name.len());
        out.extend_from_slice(&self.simhash.0.to_be_bytes());
        out.extend_from_slice(&self.digest.0.to_be_bytes());
        out.extend_from_slice(&self.text_chars.to_be_bytes());
        out.extend_from_slice(&self.sketch.to_bytes());
        out.extend_from_slice(&(set.len() as u16).to_be_bytes());
        for h in set {
            out.extend_from_slice(&h.to_be_bytes());
        }
        out.extend_from_slice(self.name.as_bytes());
        out
    }

    fn decode(bytes: &[u8]) -> Option<DocRecord> {
        let simhash = Simhash(u64::from_be_bytes(bytes.get(0..8)?.try_into().ok()?));
        let digest = Digest(u128::from_be_bytes(bytes.get(8..24)?.try_into().ok()?));
        let text_chars = u64::from_be_bytes(bytes.get(24..32)?.try_into().ok()?);
        let at = 32 + SKETCH_BYTES;
        let sketch = Sketch::from_bytes(bytes.get(32..at)?)?;
        let count = usize::from(u16::from_be_bytes(bytes.get(at..at + 2)?.try_into().ok()?));
        let rest = at + 2 + 4 * count;
        let tiny_set = bytes
            .get(at + 2..rest)?
            .chunks_exact(4)
            .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let name = String::from_utf8(bytes.get(rest..)?.to_vec()).ok()?;
        Some(DocRecord {
            simhash,
            digest,
            text_chars,
            name,
            sketch,
            tiny_set,
        })
    }
}

/// What memory keeps of every document, by id: enough to report the distance, find an
/// exact duplicate and confirm a candidate without reading sled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stored {
    pub(crate) simhash: u64,
    pub(crate) digest: Digest,
    /// Characters of the main text (saturating).
    pub(crate) chars: u32,
    pub(crate) sketch: Sketch,
}

impl Stored {
    pub(crate) fn of(record: &DocRecord) -> Stored {
        Stored {
            simhash: record.simhash.0,
            digest: record.digest,
            chars: u32::try_from(record.text_chars).unwrap_or(u32::MAX),
            sketch: record.sketch,
        }
    }
}

/// What [`SimhashIndex`]'s lookup found for one document.
#[derive(Default)]
struct Judgement {
    /// An exact or confirmed near-duplicate; none for a unique document.
    decision: Option<Decision>,
    /// The estimates of the most alike candidate that the confirmation refused.
    nearest: Option<Similarity>,
    /// Candidates the confirmation refused.
    refused: u64,
}

/// The probe keys of one fingerprint: its permuted simhash per table, its band keys.
struct Keys {
    permuted: Vec<u64>,
    bands: [u32; BANDS],
}

struct Memory {
    /// Sum of the row checksums of `docs` (see [`manifest`]).
    checksum: u64,
    /// The permuted simhash tables.
    tables: Vec<Bucketed>,
    /// One table per sketch band, keyed by the band key (exact match).
    bands: Vec<Bucketed<u32>>,
    /// Every document, by id.
    docs: Vec<Stored>,
}

impl Memory {
    fn count(&self) -> u64 {
        self.docs.len() as u64
    }

    /// Asks for the cache lines that probes for `keys` will read: all the offsets first,
    /// then all the first entries, so that the misses overlap.
    fn prefetch(&self, keys: &Keys) {
        let tables = || self.tables.iter().zip(&keys.permuted);
        let bands = || self.bands.iter().zip(&keys.bands);
        tables().for_each(|(table, &key)| table.prefetch_offsets(key));
        bands().for_each(|(table, &key)| table.prefetch_offsets(key));
        tables().for_each(|(table, &key)| table.prefetch_entries(key));
        bands().for_each(|(table, &key)| table.prefetch_entries(key));
    }

    /// Documents within `k` bits of the fingerprint, or sharing a band key with it: the
    /// candidates, by id, without repeats.
    fn candidates(&self, keys: &Keys, k: u32) -> Vec<u32> {
        let mut found = Vec::with_capacity(4);
        for (table, &key) in self.tables.iter().zip(&keys.permuted) {
            table.probe(key, k, &mut found);
        }
        for (table, &key) in self.bands.iter().zip(&keys.bands) {
            table.probe(key, 0, &mut found);
        }
        let mut ids: Vec<u32> = found.into_iter().map(|(id, _)| id).collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    fn add(&mut self, keys: &Keys, stored: Stored, id: u32) {
        for (table, &key) in self.tables.iter_mut().zip(&keys.permuted) {
            table.insert(key, id);
        }
        for (table, &key) in self.bands.iter_mut().zip(&keys.bands) {
            table.insert(key, id);
        }
        self.checksum = self.checksum.wrapping_add(manifest::row_checksum(
            u64::from(id),
            &store::encode_row(stored),
        ));
        self.docs.push(stored);
    }
}

/// The persistent simhash index.
pub struct SimhashIndex {
    path: PathBuf,
    db: sled::Db,
    store: Store,
    plan: Plan,
    confirm: ConfirmPolicy,
    /// Candidates the confirmation refused in check-and-insert, since opening.
    refused: std::sync::atomic::AtomicU64,
    memory: RwLock<Memory>,
    writer: Mutex<()>,
    /// Documents known durable (the count at the start of the last checkpoint); held for
    /// the whole of a checkpoint, so that callers of [`SimhashIndex::sync`] queue behind
    /// the one running and most find their documents covered by it.
    durable: Mutex<u64>,
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
        let (store_error, corrupt) = IndexError::makers(&path);
        if config.max_distance > crate::config::MAX_DISTANCE_LIMIT {
            return Err(IndexError::Layout(format!(
                "k = {} is over the limit of {}",
                config.max_distance,
                crate::config::MAX_DISTANCE_LIMIT
            )));
        }
        let started = std::time::Instant::now();
        let db = crate::db::open(&sled::Config::new().path(dir).cache_capacity(256 << 20))
            .map_err(store_error)?;
        let sled_opened = started.elapsed();
        let store = Store::open(&db).map_err(store_error)?;
        let manifest = Manifest::read(dir).map_err(&corrupt)?;
        let (plan, manifest) = match (store.layout().map_err(store_error)?, manifest) {
            (Some((version, fp_version, k, blocks)), manifest) => {
                if version != INDEX_FORMAT_VERSION || fp_version != FINGERPRINT_VERSION {
                    return Err(IndexError::Format {
                        path: path.clone(),
                        found: (version, fp_version),
                    });
                }
                let plan = Plan::with_blocks(k, blocks).ok_or_else(|| {
                    corrupt(format!("stored layout k = {k}, {blocks} blocks is invalid"))
                })?;
                let manifest = match manifest {
                    Some(m) => m,
                    // Created, then stopped before its first manifest: nothing to lose.
                    None if store.is_empty().map_err(store_error)? => Manifest::empty(),
                    None => {
                        return Err(corrupt(format!(
                            "damaged: the manifest ({MANIFEST_FILE}) is missing, so the index \
                             cannot be checked; {RESTORE}"
                        )));
                    }
                };
                if (manifest.format, manifest.fingerprint) != (version, fp_version) {
                    return Err(corrupt(format!(
                        "damaged: the manifest names index format {} and fingerprint version \
                         {}, the database {version} and {fp_version}; {RESTORE}",
                        manifest.format, manifest.fingerprint
                    )));
                }
                (plan, manifest)
            }
            (None, Some(manifest)) => {
                return Err(corrupt(format!(
                    "damaged: the database holds no index, the manifest records {} documents; \
                     {RESTORE}",
                    manifest.documents
                )));
            }
            (None, None) => {
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
                db.flush().map_err(store_error)?;
                let manifest = Manifest::empty();
                manifest.write(dir).map_err(|e| corrupt(e.to_string()))?;
                (plan, manifest)
            }
        };
        let store_failure = |e: StoreError| match e {
            StoreError::Sled(source) => IndexError::Store {
                path: path.clone(),
                source,
            },
            StoreError::Corrupt(problem) => corrupt(problem),
        };
        let marks: Vec<u64> = std::iter::once(manifest.documents).chain(limit).collect();
        let mut rows = store.load_rows(&marks).map_err(store_failure)?;
        if (rows.len() as u64) < manifest.documents {
            return Err(corrupt(format!(
                "damaged: {} documents readable, the manifest records {}; {RESTORE}",
                rows.len(),
                manifest.documents
            )));
        }
        if rows.checksums_at[0].1 != Some(manifest.rows_checksum) {
            return Err(corrupt(format!(
                "damaged: the rows of the first {} documents do not match the manifest's \
                 checksum; {RESTORE}",
                manifest.documents
            )));
        }
        if let Some(limit) = limit {
            if (rows.len() as u64) < limit {
                return Err(corrupt(format!(
                    "{} documents stored, the checkpoint expects {limit}",
                    rows.len()
                )));
            }
            if (rows.len() as u64) > limit {
                store.truncate(limit, &mut rows).map_err(store_failure)?;
                db.flush().map_err(store_error)?;
                Manifest {
                    documents: limit,
                    rows_checksum: rows.checksum,
                    ..manifest
                }
                .write(dir)
                .map_err(|e| corrupt(e.to_string()))?;
            }
        }
        if u32::try_from(rows.len()).is_err() {
            return Err(corrupt(format!(
                "{} documents is over the limit",
                rows.len()
            )));
        }
        let rows_read = started.elapsed();
        let memory = build_memory(&plan, rows);
        let count = memory.count();
        tracing::debug!(
            "{}: opened with {count} documents: sled {:.2} s, rows {:.2} s, tables {:.2} s",
            path.display(),
            sled_opened.as_secs_f64(),
            (rows_read - sled_opened).as_secs_f64(),
            (started.elapsed() - rows_read).as_secs_f64()
        );
        Ok(SimhashIndex {
            confirm: config.confirm,
            refused: Default::default(),
            path,
            db,
            store,
            plan,
            memory: RwLock::new(memory),
            writer: Mutex::new(()),
            durable: Mutex::new(count),
            pending: Mutex::new(Pending {
                first: count,
                docs: Vec::new(),
            }),
        })
    }

    /// Rewrites the manifest of the index in `dir` to the documents its database holds now,
    /// for `crawldedup repair --accept-loss` after the database lost documents or the
    /// manifest was lost: returns (documents held, documents the old manifest recorded, if
    /// it was readable). Nothing in the database changes.
    pub fn rewrite_manifest(dir: &Path) -> Result<(u64, Option<u64>), IndexError> {
        let (store_error, corrupt) = IndexError::makers(dir);
        let old = Manifest::read(dir).ok().flatten().map(|m| m.documents);
        let db = crate::db::open(&sled::Config::new().path(dir)).map_err(store_error)?;
        let store = Store::open(&db).map_err(store_error)?;
        let Some((format, fingerprint, _, _)) = store.layout().map_err(store_error)? else {
            return Err(corrupt(
                "the database holds no index: nothing to rewrite the manifest for".into(),
            ));
        };
        let rows = store.load_rows(&[]).map_err(|e| match e {
            StoreError::Sled(source) => store_error(source),
            StoreError::Corrupt(problem) => corrupt(problem),
        })?;
        db.flush().map_err(store_error)?;
        Manifest {
            format,
            fingerprint,
            documents: rows.len() as u64,
            rows_checksum: rows.checksum,
        }
        .write(dir)
        .map_err(|e| corrupt(format!("writing the manifest: {e}")))?;
        Ok((rows.len() as u64, old))
    }

    /// The layout in use.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Number of documents stored.
    pub fn len(&self) -> u64 {
        self.read().count()
    }

    /// Candidates that the sketch confirmation refused since opening.
    pub fn candidates_refused(&self) -> u64 {
        self.refused.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of memory the in-memory tables use.
    pub fn memory_bytes(&self) -> usize {
        let memory = self.read();
        memory.tables.iter().map(Bucketed::bytes).sum::<usize>()
            + memory.bands.iter().map(Bucketed::bytes).sum::<usize>()
            + memory.docs.capacity() * std::mem::size_of::<Stored>()
    }

    /// Every stored document within distance k of `simhash` in the permuted tables, with
    /// its distance, by id (the first candidate source alone, unconfirmed).
    pub fn query(&self, simhash: Simhash) -> Vec<(DocId, u32)> {
        let keys = self.keys(simhash, &Sketch::default());
        let memory = self.read();
        memory.prefetch(&keys);
        let mut found = Vec::new();
        for (table, &key) in memory.tables.iter().zip(&keys.permuted) {
            table.probe(key, self.plan.k, &mut found);
        }
        found.sort_unstable();
        found.dedup_by_key(|e| e.0);
        found
            .into_iter()
            .map(|(id, d)| (u64::from(id), d))
            .collect()
    }

    /// What [`SimhashIndex::check_and_insert`] would decide for `record`, without storing
    /// it: `None` for a unique document.
    pub fn find(&self, record: &DocRecord) -> Result<Option<Decision>, IndexError> {
        let keys = self.keys(record.simhash, &record.sketch);
        Ok(self
            .decide(&self.read(), &keys, &Stored::of(record), &record.tiny_set)?
            .decision)
    }

    /// The probe keys of a fingerprint, computed once per page.
    fn keys(&self, simhash: Simhash, sketch: &Sketch) -> Keys {
        Keys {
            permuted: (0..self.plan.tables.len())
                .map(|t| self.plan.permute(t, simhash.0))
                .collect(),
            bands: sketch.band_keys(),
        }
    }

    /// The decision for a document with these keys: an exact duplicate (same digest and
    /// simhash, lowest id), else the confirmed candidate of highest resemblance (lowest id
    /// on a tie), else none; with what the confirmation refused.
    fn decide(
        &self,
        memory: &Memory,
        keys: &Keys,
        new: &Stored,
        tiny_set: &[u32],
    ) -> Result<Judgement, IndexError> {
        memory.prefetch(keys);
        let mut judgement = Judgement::default();
        let candidates = memory.candidates(keys, self.plan.k);
        let mut best: Option<(DocId, u32, Similarity)> = None;
        for &id in &candidates {
            let Some(stored) = memory.docs.get(id as usize) else {
                continue;
            };
            let distance = (stored.simhash ^ new.simhash).count_ones();
            if distance == 0 && stored.digest == new.digest {
                // Candidates come in id order: the first exact one is the lowest.
                judgement.decision = Some(Decision::Exact(u64::from(id)));
                return Ok(judgement);
            }
            // Two tiny texts are compared on their whole shingle sets, kept in the record.
            let both_tiny = new.sketch.shingles < self.confirm.tiny_shingles
                && stored.sketch.shingles < self.confirm.tiny_shingles;
            let exact = if both_tiny && !tiny_set.is_empty() {
                self.get(u64::from(id))?
                    .filter(|r| !r.tiny_set.is_empty())
                    .map(|r| exact_similarity(tiny_set, &r.tiny_set))
            } else {
                None
            };
            let (similarity, confirmed) = self.confirm.judge(
                (&new.sketch, new.chars),
                (&stored.sketch, stored.chars),
                exact,
            );
            if !confirmed {
                judgement.refused += 1;
                if judgement
                    .nearest
                    .is_none_or(|n| similarity.resemblance > n.resemblance)
                {
                    judgement.nearest = Some(similarity);
                }
            } else if best.is_none_or(|(_, _, b)| similarity.resemblance > b.resemblance) {
                best = Some((u64::from(id), distance, similarity));
            }
        }
        judgement.decision = best.map(|(of, distance, similarity)| Decision::Near {
            of,
            distance,
            similarity,
        });
        Ok(judgement)
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

    /// Decides and, when unique, stores in one step (see the module doc for what is a
    /// candidate and how it is confirmed).
    pub fn check_and_insert(&self, record: DocRecord) -> Result<Decision, IndexError> {
        Ok(self.check_and_insert_nearest(record)?.0)
    }

    /// As [`SimhashIndex::check_and_insert`], also returning, for a unique document, the
    /// estimates of the most alike candidate that the confirmation refused (none when no
    /// candidate was found).
    pub fn check_and_insert_nearest(
        &self,
        record: DocRecord,
    ) -> Result<(Decision, Option<Similarity>), IndexError> {
        let _writer = lock(&self.writer);
        let keys = self.keys(record.simhash, &record.sketch);
        let stored = Stored::of(&record);
        let judgement = self.decide(&self.read(), &keys, &stored, &record.tiny_set)?;
        self.refused
            .fetch_add(judgement.refused, std::sync::atomic::Ordering::Relaxed);
        if let Some(decision) = judgement.decision {
            return Ok((decision, None));
        }
        let nearest = judgement.nearest;
        let id = self.len();
        let small = u32::try_from(id)
            .map_err(|_| IndexError::Layout("index full (2^32 documents)".into()))?;
        // Into the buffer before memory, so that whoever finds the id by a query can `get` it.
        let full = {
            let mut pending = lock(&self.pending);
            pending.docs.push(record);
            pending.docs.len() >= WRITE_BATCH
        };
        self.memory
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .add(&keys, stored, small);
        if full {
            self.write_pending()?;
        }
        Ok((Decision::Unique(id), nearest))
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
        let mut durable = lock(&self.durable);
        *durable = self.checkpoint_locked()?;
        Ok(())
    }

    /// Makes every document inserted before the call durable, as a checkpoint does, unless
    /// a checkpoint that started after the insert has already done so: a group commit.
    /// Callers that answer a client (the sidecar) call it before the answer goes out; of
    /// many concurrent callers, one runs the checkpoint and the others, queued behind it,
    /// find their documents covered or share the next one.
    pub fn sync(&self) -> Result<(), IndexError> {
        let wanted = self.len();
        let mut durable = lock(&self.durable);
        if *durable >= wanted {
            return Ok(());
        }
        *durable = self.checkpoint_locked()?;
        Ok(())
    }

    /// The checkpoint itself (the caller holds `durable`); returns the documents it made
    /// durable.
    fn checkpoint_locked(&self) -> Result<u64, IndexError> {
        // What the manifest will promise, taken first: every document counted here is
        // already in the buffer or in sled (it enters the buffer before memory), so the
        // write and the flush below make all of it durable before the manifest says so.
        let (documents, rows_checksum) = {
            let memory = self.read();
            (memory.count(), memory.checksum)
        };
        self.write_pending()?;
        self.db.flush().map_err(|source| IndexError::Store {
            path: self.path.clone(),
            source,
        })?;
        Manifest {
            format: INDEX_FORMAT_VERSION,
            fingerprint: FINGERPRINT_VERSION,
            documents,
            rows_checksum,
        }
        .write(&self.path)
        .map_err(|e| IndexError::Corrupt {
            path: self.path.clone(),
            problem: format!("writing the manifest: {e}"),
        })?;
        Ok(documents)
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Memory> {
        self.memory.read().unwrap_or_else(|p| p.into_inner())
    }
}

/// Builds the in-memory tables from the stored rows: the permuted tables and the band
/// tables are jobs taken in turn by one thread per core. Each table is built straight from
/// the stored rows (ids are row numbers), with no intermediate array of keys.
fn build_memory(plan: &Plan, rows: Rows) -> Memory {
    let table_count = plan.tables.len();
    let jobs = table_count + BANDS;
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, jobs);
    let next = std::sync::atomic::AtomicUsize::new(0);
    // One pass over the rows pulls out what the tables are keyed by, a column each: every
    // table then reads 4 or 8 bytes per document instead of a 96-byte row (at 10 M rows,
    // 26 passes over the rows would move 25 GB through the caches).
    // All columns come from one pass, in which every row is read once.
    let docs = &rows.docs;
    let simhashes: Vec<u64> = docs.iter().map(|d| d.simhash).collect();
    let mut bins: Vec<Vec<u32>> = (0..BANDS)
        .map(|_| memory::with_capacity(docs.len()))
        .collect();
    for doc in docs {
        for (band, column) in bins.iter_mut().enumerate() {
            column.push(doc.sketch.band_bins(band));
        }
    }
    // A worker keeps one set of working arrays per key width.
    enum Built {
        Table(Bucketed<u64>),
        Band(Bucketed<u32>),
    }
    let build = |job: usize, scratch: &mut (Scratch<u64>, Scratch<u32>)| {
        if job < table_count {
            Built::Table(Bucketed::build_from(
                plan.tables[job].leading_bits,
                simhashes.len(),
                |i| (plan.permute(job, simhashes[i]), i as u32),
                &mut scratch.0,
            ))
        } else {
            let band = job - table_count;
            let column = &bins[band];
            Built::Band(Bucketed::build_from(
                32,
                column.len(),
                |i| (Sketch::band_key_of(band, column[i]), i as u32),
                &mut scratch.1,
            ))
        }
    };
    let mut built: Vec<(usize, Built)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    let mut scratch = Default::default();
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
    let mut tables = Vec::with_capacity(table_count);
    let mut bands = Vec::with_capacity(BANDS);
    for (_, table) in built {
        match table {
            Built::Table(table) => tables.push(table),
            Built::Band(band) => bands.push(band),
        }
    }
    Memory {
        checksum: rows.checksum,
        tables,
        bands,
        docs: rows.docs,
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
                "format {INDEX_FORMAT_VERSION} and fingerprint version {FINGERPRINT_VERSION}"
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
