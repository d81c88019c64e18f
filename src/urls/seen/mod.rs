//! Seen URLs: a tuned, scalable, persistent Bloom filter over canonical URLs.
//!
//! # Sizing
//! For `n` expected URLs and a false-positive rate `p`, [`BloomParams`] computes
//! `m = ceil(-n ln p / (ln 2)^2)` bits and `k = round(m / n * ln 2)` hashes, and the filter
//! is built on `fastbloom` with exactly those (`with_num_bits(m).hashes(k)`; fastbloom
//! rounds `m` up to whole 64-bit words). The rate expected after `c` insertions is
//! `(1 - e^(-k c / m))^k`.
//!
//! # Stable hashing
//! A URL is hashed once, with xxh3-64 seeded by [`URL_HASH_SEED`], over the bytes of its
//! canonical form; the filter derives its `k` bit positions from that hash
//! (`insert_hash`/`contains_hash`). No per-process randomness is involved, so a filter saved
//! by one process answers identically in another. The bit layout is pinned by a golden test,
//! and the file header carries a layout version.
//!
//! # Growing past n: the bound
//! [`SeenUrls`] is a scalable Bloom filter (Almeida, Baquero, Preguiça, Hutchison 2007). Its
//! first layer holds `n` URLs at rate `p/2`; when a layer is full a new one is added with twice
//! the capacity and half the rate. Layer `i` holds `n 2^i` URLs at rate `p / 2^(i+1)`, so
//! the compound false-positive rate is at most `p/2 + p/4 + ... < p` however far the crawl
//! outgrows its estimate, and the memory grows about linearly with the URLs actually seen.
//! The price is the first layer's sizing for `p/2` rather than `p`: about
//! `ln(p/2) / ln(p) - 1` more bits (15% at p = 1%).
//!
//! # Forgetting: time-sliced generations
//! With [`SeenConfig::expire_after`] (`url_filter.recrawl_after`), the filter is a series of
//! generations, one per time slice of `ceil(interval / g)` seconds on the filter's
//! [`Clock`]. A URL recorded at `t` goes into the generation of slice `floor(t / slice)`
//! and is seen while that generation is one of the last `g + 1` slices: it comes due at
//! [`SeenUrls::due_at`], between the interval and one slice later. Each generation is a
//! scalable filter as above, sized for `n / g` URLs at `p / (g + 1)`, so the rate over all
//! live generations stays under `p`. An expired generation is dropped whole; with
//! exact confirmation, its hashes are keyed by slice and [`SeenUrls::sweep`] deletes them
//! as one range. Finding a URL again before it is due does not put its recrawl off. A
//! counting Bloom filter was the other way considered: see "Time windows" in docs/crawler.md for
//! the measured comparison (4-bit cells and a deletion record per URL: 8.5 times the
//! memory at p = 0.01).
//!
//! # Concurrency
//! All methods take `&self`; share a `SeenUrls` through an `Arc`. The bits are atomic
//! (fastbloom's `AtomicBloomFilter`), and [`SeenUrls::insert`] holds one of
//! [`LOCK_STRIPES`] small locks chosen by the URL's hash while it checks and sets, so two
//! tasks that insert the same URL at once get exactly one `false` ("new") between them,
//! while different URLs proceed in parallel.
//!
//! # Exact confirmation
//! With `confirm_on_disk`, a "maybe seen" answer is checked against an on-disk set of 128-bit
//! URL hashes (sled), so a new URL is never skipped because of a false positive; a new URL
//! still costs one Bloom probe plus one write.
//!
//! # Persistence
//! [`SeenUrls::save`] writes `seen-urls.bloom` in the state directory: a header (magic,
//! format version, hash seed, checkpoint sequence, layers with `n`, `p`, `m`, `k` and
//! count), the bits, and an xxh3 checksum over all of it. The file is written to a temporary
//! name, synced and renamed, so a crash leaves the old file or the new one, never a torn
//! one. The checkpoint sequence number lets a resumed crawl re-insert exactly the URLs it
//! recorded after the save.

mod expiry;
mod file;
mod open;
mod sizing;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use fastbloom::AtomicBloomFilter;
use xxhash_rust::xxh3::{xxh3_64_with_seed, xxh3_128_with_seed};

use super::journal::{self, Entry, Journal};
use crate::clock::Clock;
use file::{decode, encode};

#[cfg(feature = "crawler")]
pub(crate) use file::check_saved;
pub(crate) use file::read_header;
pub(crate) use file::write_atomically;
pub use sizing::{BloomParams, SeenConfig};

/// Seed of the xxh3 hash of canonical URLs. Part of the file format: changing it makes
/// every saved filter answer wrongly, so it never changes within a format version.
pub const URL_HASH_SEED: u64 = 0x6372_6177_6c64_6475;

/// Number of check-and-insert locks. Enough that tasks inserting different URLs rarely
/// meet on one lock; small enough to cost nothing in memory.
pub const LOCK_STRIPES: usize = 256;

/// File name of the saved filter inside a state directory.
pub const SEEN_FILE: &str = "seen-urls.bloom";

/// Folder of the exact-confirmation store inside a state directory.
pub const CONFIRM_DIR: &str = "seen-urls.confirm";

/// The stable 64-bit hash of a canonical URL that the filter is keyed on.
pub fn url_hash(canonical: &str) -> u64 {
    xxh3_64_with_seed(canonical.as_bytes(), URL_HASH_SEED)
}

/// The 128-bit hash of a canonical URL kept by the exact-confirmation store.
pub fn url_hash128(canonical: &str) -> u128 {
    xxh3_128_with_seed(canonical.as_bytes(), URL_HASH_SEED)
}

/// What went wrong with the seen-URL filter.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SeenError {
    /// n or p out of range.
    #[error("bloom filter parameters: {0}")]
    Params(String),
    /// The saved filter could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// The saved filter or a URL journal generation is damaged or was not written by this
    /// program.
    #[error("{}: {problem} (`crawldedup repair --accept-loss` sets it aside)", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// The exact-confirmation store failed.
    #[error("{}: {source}", path.display())]
    Store {
        /// The store's folder.
        path: PathBuf,
        /// The cause.
        source: crate::db::DatabaseError,
    },
}

struct Layer {
    params: BloomParams,
    filter: AtomicBloomFilter,
    count: AtomicU64,
}

impl Layer {
    fn new(params: BloomParams) -> Layer {
        Layer::from_words(params, vec![0; params.m.div_ceil(64) as usize], 0)
    }

    fn from_words(params: BloomParams, words: Vec<u64>, count: u64) -> Layer {
        Layer {
            params,
            filter: AtomicBloomFilter::from_vec(words).hashes(params.k),
            count: AtomicU64::new(count),
        }
    }
}

/// One generation: the URLs recorded during one time slice, in a scalable Bloom filter of
/// its own (layers). A filter that never forgets has one generation, slice 0.
struct Generation {
    slice: u64,
    layers: Vec<Layer>,
}

impl Generation {
    fn count(&self) -> u64 {
        self.layers
            .iter()
            .map(|l| l.count.load(Ordering::Relaxed))
            .sum()
    }

    fn contains(&self, hash: u64) -> bool {
        self.layers.iter().any(|l| l.filter.contains_hash(hash))
    }
}

/// Figures about a [`SeenUrls`].
#[derive(Debug, Clone, PartialEq)]
pub struct SeenStats {
    /// URLs recorded as new and not yet forgotten.
    pub count: u64,
    /// Number of Bloom layers over all live generations (1 until the count passes n).
    pub layers: usize,
    /// Live generations (1 for a filter that never forgets).
    pub generations: usize,
    /// Bytes of all bit vectors.
    pub bytes: u64,
    /// The URLs the live layers were sized for (each layer's n).
    pub capacity: u64,
    /// The compound false-positive rate expected now, over every live generation.
    pub expected_fp_rate: f64,
    /// Sequence number of the last checkpoint saved or opened.
    pub checkpoint_seq: u64,
    /// The recrawl interval, if the filter forgets.
    pub expire_after: Option<std::time::Duration>,
    /// URLs forgotten (their generation dropped) since the filter was created.
    pub expired: u64,
    /// Start (seconds since the epoch) of the oldest live generation's slice, if the filter
    /// forgets.
    pub oldest_slice_start: Option<u64>,
}

struct ConfirmStore {
    path: PathBuf,
    db: sled::Db,
}

/// The set of URLs seen so far: a scalable Bloom filter with an optional exact check, and
/// optionally a memory of limited length.
///
/// ```
/// use crawldedup::{SeenConfig, SeenUrls};
/// let seen = SeenUrls::new(SeenConfig::new(1000, 0.01))?;
/// assert!(seen.insert("http://example.com/")?); // new
/// assert!(!seen.insert("http://example.com/")?); // seen before
/// # Ok::<(), crawldedup::SeenError>(())
/// ```
pub struct SeenUrls {
    config: SeenConfig,
    /// Oldest first; the last one takes new URLs.
    generations: RwLock<Vec<Generation>>,
    stripes: Box<[Mutex<()>]>,
    confirm: Option<ConfirmStore>,
    journal: Option<Journal>,
    checkpoint_seq: AtomicU64,
    clock: Arc<dyn Clock>,
    expired: AtomicU64,
    /// The state directory's id, written into the saved filter and the journal
    /// ([`crate::ledger`]; 0 when opened outside a ledgered directory).
    state_id: crate::state_id::StateId,
}

impl std::fmt::Debug for SeenUrls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeenUrls")
            .field("config", &self.config)
            .field("stats", &self.stats())
            .finish()
    }
}

impl SeenUrls {
    /// An empty in-memory filter (exact confirmation is not available without a state
    /// directory and is ignored here).
    pub fn new(config: SeenConfig) -> Result<SeenUrls, SeenError> {
        config.first_layer()?;
        Ok(SeenUrls::assemble(config, Vec::new(), None, 0))
    }

    /// Writes `state_id` into the files it saves (see [`crate::ledger`]).
    #[cfg_attr(not(feature = "crawler"), allow(dead_code))]
    pub(crate) fn with_state_id(mut self, state_id: crate::state_id::StateId) -> SeenUrls {
        self.state_id = state_id;
        self
    }

    /// Uses `clock` for the time URLs are recorded and forgotten (the system clock by
    /// default).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> SeenUrls {
        self.clock = clock;
        self
    }

    /// The clock it measures time on.
    #[cfg(all(feature = "crawler", feature = "cluster"))]
    pub(crate) fn clock(&self) -> Arc<dyn Clock> {
        self.clock.clone()
    }

    /// Checks a canonical URL and records it, as [`std::collections::HashSet::insert`]
    /// answers: `Ok(true)` if it is new (and is now recorded), `Ok(false)` if it was seen
    /// before (and, for a filter that forgets, not yet forgotten). Of several tasks
    /// inserting the same URL at once, exactly one gets `true`. A URL seen before but not
    /// yet due keeps its first time: finding it again does not put its recrawl off.
    pub fn insert(&self, canonical: &str) -> Result<bool, SeenError> {
        self.record(canonical).map(|seen_before| !seen_before)
    }

    /// [`SeenUrls::insert`]'s work: `Ok(true)` when the URL was seen before.
    fn record(&self, canonical: &str) -> Result<bool, SeenError> {
        let hash = url_hash(canonical);
        let _stripe = lock(&self.stripes[(hash as usize) % LOCK_STRIPES]);
        let slice = self.current_slice();
        if self.maybe_contains(hash, slice) && self.confirmed(canonical, slice)? {
            return Ok(true);
        }
        let hash128 = url_hash128(canonical);
        self.record_new_logged(Entry {
            hash,
            hash128,
            slice,
        })?;
        self.confirm_insert(hash128, slice)?;
        Ok(false)
    }

    /// Makes every URL recorded as new so far durable before it returns: one sync of the
    /// URL journal shared by every caller waiting at that moment. Without a journal (see
    /// [`SeenUrls::open_journaled`]) URLs are durable only at [`SeenUrls::save`], and this
    /// does nothing.
    pub fn sync(&self) -> Result<(), SeenError> {
        match &self.journal {
            Some(journal) => journal.sync().map_err(|source| SeenError::Io {
                path: journal.current_path(),
                source,
            }),
            None => Ok(()),
        }
    }

    /// The confirmation store's key of a URL recorded in `slice`: the 128-bit hash alone
    /// for a filter that never forgets, else the slice first, so that a whole expired
    /// slice is one range to delete.
    fn confirm_key(&self, hash128: u128, slice: u64) -> Vec<u8> {
        let mut key = Vec::with_capacity(24);
        if self.config.expire_after.is_some() {
            key.extend_from_slice(&slice.to_be_bytes());
        }
        key.extend_from_slice(&hash128.to_be_bytes());
        key
    }

    fn confirm_insert(&self, hash128: u128, slice: u64) -> Result<(), SeenError> {
        if let Some(store) = &self.confirm {
            store
                .db
                .insert(self.confirm_key(hash128, slice), &[])
                .map_err(|source| SeenError::Store {
                    path: store.path.clone(),
                    source: crate::db::error(source),
                })?;
        }
        Ok(())
    }

    /// Whether a canonical URL was (probably, or with confirmation certainly) seen and not
    /// forgotten, without recording it.
    pub fn contains(&self, canonical: &str) -> Result<bool, SeenError> {
        let slice = self.current_slice();
        Ok(self.maybe_contains(url_hash(canonical), slice) && self.confirmed(canonical, slice)?)
    }

    fn maybe_contains(&self, hash: u64, now: u64) -> bool {
        let from = self.live_from(now);
        read(&self.generations)
            .iter()
            .any(|g| g.slice >= from && g.contains(hash))
    }

    /// A "maybe" from the filter is final without a confirmation store.
    fn confirmed(&self, canonical: &str, now: u64) -> Result<bool, SeenError> {
        let Some(store) = &self.confirm else {
            return Ok(true);
        };
        let hash128 = url_hash128(canonical);
        let slices: Vec<u64> = match self.config.expire_after {
            None => vec![0],
            Some(_) => {
                let from = self.live_from(now);
                read(&self.generations)
                    .iter()
                    .map(|g| g.slice)
                    .filter(|&s| s >= from)
                    .collect()
            }
        };
        for slice in slices {
            let found = store
                .db
                .contains_key(self.confirm_key(hash128, slice))
                .map_err(|source| SeenError::Store {
                    path: store.path.clone(),
                    source: crate::db::error(source),
                })?;
            if found {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Records a replayed URL in its slice's generation. Replay happens before the caller
    /// can hand over its clock ([`SeenUrls::with_clock`]), so it neither drops generations
    /// nor judges them live: every query does that with the clock it is given.
    fn record_new(&self, hash: u64, slice: u64) -> Result<(), SeenError> {
        self.record_new_with(hash, slice, None)
    }

    fn record_new_logged(&self, entry: Entry) -> Result<(), SeenError> {
        self.record_new_with(entry.hash, entry.slice, Some(entry))
    }

    /// Sets the URL's bits in the generation of `slice` and appends it to the journal (when
    /// there is one and `entry` is given) while the generations are held, so that a save
    /// copies the bits and switches the journal either before both or after both. A new
    /// URL (`entry` given) also drops the generations that are no longer live.
    fn record_new_with(
        &self,
        hash: u64,
        slice: u64,
        entry: Option<Entry>,
    ) -> Result<(), SeenError> {
        let log = |entry: Option<Entry>| -> Result<(), SeenError> {
            match (&self.journal, entry) {
                (Some(journal), Some(entry)) => {
                    journal.append(entry).map_err(|source| SeenError::Io {
                        path: journal.current_path(),
                        source,
                    })
                }
                _ => Ok(()),
            }
        };
        {
            let generations = read(&self.generations);
            if let Some(last) = generations.last().filter(|g| g.slice == slice) {
                let layer = last.layers.last().expect("a generation always has a layer");
                if layer.count.load(Ordering::Relaxed) < layer.params.n {
                    layer.filter.insert_hash(hash);
                    layer.count.fetch_add(1, Ordering::Relaxed);
                    return log(entry);
                }
            }
        }
        let mut generations = write(&self.generations);
        if entry.is_some() {
            self.drop_expired(&mut generations, self.current_slice().max(slice));
        }
        let at = match generations.binary_search_by_key(&slice, |g| g.slice) {
            Ok(at) => at,
            Err(at) => {
                let first = self.config.first_layer()?;
                generations.insert(
                    at,
                    Generation {
                        slice,
                        layers: vec![Layer::new(first)],
                    },
                );
                at
            }
        };
        let layers = &mut generations[at].layers;
        let full = layers
            .last()
            .is_some_and(|last| last.count.load(Ordering::Relaxed) >= last.params.n);
        if full {
            let prev = layers[layers.len() - 1].params;
            let next = BloomParams::new(prev.n.saturating_mul(2), prev.p / 2.0)?;
            layers.push(Layer::new(next));
        }
        let last = layers.last().expect("a generation always has a layer");
        last.filter.insert_hash(hash);
        last.count.fetch_add(1, Ordering::Relaxed);
        log(entry)
    }

    /// Current figures.
    pub fn stats(&self) -> SeenStats {
        let now = self.current_slice();
        let from = self.live_from(now);
        let generations = read(&self.generations);
        let mut miss = 1.0;
        let mut bytes = 0;
        let mut count = 0;
        let mut layers = 0;
        let mut capacity = 0;
        let mut live = 0;
        let mut oldest = None;
        for generation in generations.iter().filter(|g| g.slice >= from) {
            live += 1;
            oldest = oldest.or(Some(generation.slice));
            for layer in &generation.layers {
                let c = layer.count.load(Ordering::Relaxed);
                count += c;
                bytes += layer.params.bytes();
                capacity += layer.params.n;
                layers += 1;
                miss *= 1.0 - layer.params.expected_fp_rate(c);
            }
        }
        SeenStats {
            count,
            layers: layers.max(1),
            generations: live.max(1),
            bytes,
            capacity,
            expected_fp_rate: 1.0 - miss,
            checkpoint_seq: self.checkpoint_seq.load(Ordering::Relaxed),
            expire_after: self.config.expire_after,
            expired: self.expired.load(Ordering::Relaxed),
            oldest_slice_start: self
                .config
                .slice_ms()
                .and_then(|ms| oldest.map(|s| s * ms / 1000)),
        }
    }

    /// Sequence number of the last checkpoint saved or opened (0 for a new filter).
    pub fn checkpoint_seq(&self) -> u64 {
        self.checkpoint_seq.load(Ordering::Relaxed)
    }

    /// The sizing this filter was opened with.
    pub fn config(&self) -> &SeenConfig {
        &self.config
    }
}

fn lock(mutex: &Mutex<()>) -> std::sync::MutexGuard<'_, ()> {
    // The guarded data is `()`, so a panic elsewhere cannot leave it inconsistent.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn read(lock: &RwLock<Vec<Generation>>) -> std::sync::RwLockReadGuard<'_, Vec<Generation>> {
    // Generations and layers are only ever added or dropped whole, so a poisoned lock still
    // guards a valid list.
    lock.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn write(lock: &RwLock<Vec<Generation>>) -> std::sync::RwLockWriteGuard<'_, Vec<Generation>> {
    lock.write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_follow_the_formula() {
        let p = BloomParams::new(200_000, 0.01).unwrap();
        assert_eq!(p.m, 1_917_012);
        assert_eq!(p.k, 7);
        assert!(BloomParams::new(0, 0.01).is_err());
        assert!(BloomParams::new(10, 1.0).is_err());
        assert!(BloomParams::new(10, 0.0).is_err());
        assert!(BloomParams::new(10, f64::NAN).is_err());
        assert!(BloomParams::new(u64::MAX, 1e-9).is_err());
    }

    #[test]
    fn decode_refuses_foreign_bytes() {
        assert!(decode(b"hello world, not a filter").is_err());
        assert!(decode(b"").is_err());
    }
}
