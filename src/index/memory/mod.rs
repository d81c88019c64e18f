//! The in-memory form of one table: entries in cache-line buckets, one line read per probe.
//!
//! A table is an array of lines of 64 bytes, each holding up to [`SLOTS`] entries: the top
//! 32 bits of the entry's key (its *fragment*) and its document id. An entry's home line is
//! a function of the key's shared prefix alone (its top `leading` bits, at most 32: the
//! bits a near-duplicate must share in this table), mixed and spread over the lines by a
//! multiply-shift, so every entry a query can match has the query's home. An entry goes
//! into the first line from its home on that has a free slot (bucketised linear probing),
//! and slots fill in order, so a probe reads the home line and goes on to the next only
//! while the lines it reads are full: at the load kept here ([`MAX_LOAD`]) nearly always
//! one line. An insert writes into the line that the lookup before it has just read; there
//! is no list of recent entries to chain and no merge to run.
//!
//! A fragment holds the shared prefix and the next bits of the key: a band key (32 bits)
//! whole, a permuted simhash's first 32 bits. A probe returns the entries whose prefix equals
//! the query's and whose fragment is within `k` bits of the query's, with that distance: a
//! lower bound of the whole key's distance, which the caller checks on the document's row
//! (an unrelated entry passes with probability about 2^-6 per entry that shares the prefix).
//!
//! The table grows by [`GROWTH`] when an insert would pass [`MAX_LOAD`] (the index grows its
//! tables a group at a time up to 3% before that, so that no growth stops its decisions for
//! every table's re-placement at once), re-placing its entries; entries of expired
//! documents (ids below the floor) are dropped then, and an insert may take the slot of
//! one on its way. A table grown once lives in a map with room to grow in place: its lines
//! are lengthened where they are and the entries re-placed among them, last line first
//! (`Bucketed::replace_in_place`), so a growth takes only the new lines' memory. The pages
//! it grows into may have been backed ahead by another thread ([`Bucketed::next_growth`]),
//! so that the insert that grows it does not fault in the new memory page by page. A
//! table read from a snapshot or built at an open grows once into new lines (re-placing
//! its entries a block at a time, their home lines asked for ahead), which may have been
//! made ready the same way.
//!
//! A table may carry a *tail*: small read-only tables (layers) of the entries that a
//! snapshot's copy of it lacks, made when the index opens from a snapshot whose copy is
//! older than the database: the copy's delta sections, mapped, and a table of the documents
//! after them, built. Probes read the table and every layer. Writing those entries into the
//! mapped lines instead would copy nearly every page of the table first (one insert in a
//! few thousand pages lands on most of them), which at 10 M documents costs more than the
//! whole open from the snapshot. The tail is folded in later ([`Bucketed::fold`]), off the
//! path of the open, and a snapshot taken meanwhile places it into its copy of the table
//! ([`Bucketed::capture`]).

/// Entries per line: 8 fragments and 8 ids of 4 bytes fill a cache line.
pub(crate) const SLOTS: usize = 8;

/// The share of slots a table fills before it grows.
const MAX_LOAD: f64 = 0.8;

/// What a table grows by: from [`MAX_LOAD`] to a load of 0.5.
const GROWTH: f64 = 1.6;

/// A table built for `n` entries is filled to this share of its slots.
pub(super) const BUILD_LOAD: f64 = 0.65;

/// A table key: a permuted simhash (64 bits) or a band key (32 bits). Every operation on
/// keys works on the key as the top bits of a 64-bit word, so a 32-bit key homes, masks
/// and compares as a 64-bit one whose low half is zero.
pub(crate) trait Key: Copy + Default + Send + Sync + std::fmt::Debug {
    /// The key in the top bits of a 64-bit word.
    fn wide(self) -> u64;
}

impl Key for u64 {
    fn wide(self) -> u64 {
        self
    }
}

impl Key for u32 {
    fn wide(self) -> u64 {
        u64::from(self) << 32
    }
}

/// The fragment a table keeps of a key: its top 32 bits.
#[inline(always)]
pub(super) fn fragment<K: Key>(key: K) -> u32 {
    (key.wide() >> 32) as u32
}

/// Lines for `slots` slots (at least one line).
pub(super) fn lines_for(slots: f64) -> usize {
    ((slots / SLOTS as f64).ceil() as usize).max(1)
}

/// Memory for a table of about `entries` entries to be built into
/// ([`Bucketed::build_in`]), its pages faulted in now (zeroed lines, as many as the build
/// takes), with a sixteenth more room for a few more entries than expected. The memory may
/// take huge pages ([`with_capacity`]): the kernel zeroes each at its fault, here, so a
/// caller that makes it ahead, off the path of the build, spares the build both the faults
/// and most of the TLB misses of its scattered writes.
pub(crate) fn ready_lines(entries: u64) -> Vec<CacheLine> {
    if entries == 0 {
        return Vec::new();
    }
    let lines = lines_for(entries as f64 / BUILD_LOAD);
    let mut ready = with_capacity(lines + lines / 16);
    ready.resize(lines, CacheLine::default());
    ready
}

mod capture;
mod column;
mod table;

pub(crate) use capture::Captured;
pub(crate) use column::{CacheLine, Column, Room, plain_bytes, with_capacity};
pub(crate) use table::{Bucketed, TableShape, fresh_lines};
