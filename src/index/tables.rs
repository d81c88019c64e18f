//! The in-memory tables: permuted simhash tables and sketch band tables, built from the
//! stored rows on open.

use std::collections::VecDeque;

use super::growth::{TableMut, in_turn};
use super::memory::{Bucketed, CacheLine, Column, TableShape};
use super::plan::Plan;
use super::record::Stored;
use super::store::Rows;
use crate::fingerprint::{BANDS, Sketch};

/// The probe keys of one fingerprint: its permuted simhash per table, its band keys.
pub(super) struct Keys {
    pub(super) simhash: u64,
    pub(super) permuted: Vec<u64>,
    pub(super) bands: [u32; BANDS],
}

pub(super) struct Memory {
    /// Sum of the row checksums of `docs` (see [`manifest`](super::manifest)).
    pub(super) checksum: u64,
    /// The permuted simhash tables.
    pub(super) tables: Vec<Bucketed>,
    /// One table per sketch band, keyed by the band key (exact match).
    pub(super) bands: Vec<Bucketed<u32>>,
    /// Id of `docs[0]`: documents below it expired and are gone from memory (the tables drop
    /// their entries when they next grow).
    pub(super) base: u64,
    /// Every live document, by id from `base`.
    pub(super) docs: VecDeque<Stored>,
    /// The count from which [`Memory::add`] looks for tables due to grow (0: at the next
    /// add). Each add takes at most one slot of each table, so no table is due before it.
    pub(super) growth_check: u64,
}

/// Bytes the tables and rows of `tables` permuted tables (and the band tables) take when
/// room is made for `documents` documents: 8 bytes a slot at the build load, and a row each.
pub(super) fn bytes_for(tables: usize, documents: u64) -> u64 {
    let per_document = (tables + BANDS) as f64 * 8.0 / super::memory::BUILD_LOAD
        + std::mem::size_of::<Stored>() as f64;
    (documents as f64 * per_document) as u64
}

impl Memory {
    /// The id the next document gets: every document ever stored, expired or not.
    pub(super) fn count(&self) -> u64 {
        self.base + self.docs.len() as u64
    }

    /// The row of document `id`, unless it expired.
    pub(super) fn doc(&self, id: u64) -> Option<&Stored> {
        self.docs
            .get(usize::try_from(id.checked_sub(self.base)?).ok()?)
    }

    /// Drops from the front the documents stored before `cutoff` (seconds), at most
    /// `most` of them; returns how many. Times never decrease with the id, so the expired
    /// documents are always a prefix.
    pub(super) fn expire(&mut self, cutoff: u32, most: usize) -> usize {
        let mut dropped = 0;
        while dropped < most {
            match self.docs.front() {
                Some(front) if front.at < cutoff => {
                    let row = super::store::encode_row(*front);
                    self.checksum = self
                        .checksum
                        .wrapping_sub(super::manifest::row_checksum(self.base, &row));
                    self.docs.pop_front();
                    self.base += 1;
                    dropped += 1;
                }
                _ => break,
            }
        }
        dropped
    }

    /// Asks for the home line of every table's probe, so that the misses overlap.
    pub(super) fn prefetch(&self, keys: &Keys) {
        for (table, &key) in self.tables.iter().zip(&keys.permuted) {
            table.prefetch(key);
        }
        for (table, &key) in self.bands.iter().zip(&keys.bands) {
            table.prefetch(key);
        }
    }

    /// Documents held within `k` bits of the fingerprint: (id, distance), by id, without
    /// repeats. The tables' fragments give candidates; each is checked on its row.
    pub(super) fn within(&self, keys: &Keys, k: u32) -> Vec<(u32, u32)> {
        let mut found = Vec::with_capacity(4);
        for (table, &key) in self.tables.iter().zip(&keys.permuted) {
            table.probe(key, k, &mut found);
        }
        found.sort_unstable_by_key(|e| e.0);
        found.dedup_by_key(|e| e.0);
        found.retain_mut(|(id, distance)| {
            let Some(doc) = self.doc(u64::from(*id)) else {
                return false;
            };
            *distance = (doc.simhash ^ keys.simhash).count_ones();
            *distance <= k
        });
        found
    }

    /// Documents within `k` bits of the fingerprint, or sharing a band key with it: the
    /// candidates, by id, without repeats.
    pub(super) fn candidates(&self, keys: &Keys, k: u32) -> Vec<u32> {
        let mut ids: Vec<u32> = self.within(keys, k).into_iter().map(|(id, _)| id).collect();
        let mut found = Vec::new();
        for (table, &key) in self.bands.iter().zip(&keys.bands) {
            table.probe(key, 0, &mut found);
        }
        ids.extend(found.into_iter().map(|(id, _)| id));
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    pub(super) fn add(&mut self, keys: &Keys, stored: Stored, id: u32) {
        let floor = u32::try_from(self.base).unwrap_or(u32::MAX);
        if self.count() >= self.growth_check {
            self.grow_due(floor);
        }
        for (table, &key) in self.tables.iter_mut().zip(&keys.permuted) {
            table.insert(key, id, floor);
        }
        for (table, &key) in self.bands.iter_mut().zip(&keys.bands) {
            table.insert(key, id, floor);
        }
        self.checksum = self.checksum.wrapping_add(super::manifest::row_checksum(
            u64::from(id),
            &super::store::encode_row(stored),
        ));
        self.docs.push_back(stored);
    }
}

/// The probe keys of a fingerprint under `plan`.
pub(super) fn keys_of(plan: &Plan, simhash: u64, sketch: &Sketch) -> Keys {
    Keys {
        simhash,
        permuted: (0..plan.tables.len())
            .map(|t| plan.permute(t, simhash))
            .collect(),
        bands: sketch.band_keys(),
    }
}

/// What the tables are keyed by, pulled out of a run of rows in one pass, a column each:
/// every table built from them then reads 4 or 8 bytes per document instead of a 100-byte
/// row (at 10 M rows, 26 passes over the rows would move 25 GB through the caches).
pub(super) struct Columns {
    simhashes: Vec<u64>,
    /// Per band, the bins of its key ([`Sketch::band_bins`]).
    bins: Vec<Vec<u32>>,
}

impl Columns {
    fn of<'a>(docs: impl ExactSizeIterator<Item = &'a Stored>) -> Columns {
        let mut columns = Columns::with_capacity(docs.len());
        for doc in docs {
            columns.push(doc);
        }
        columns
    }

    /// Empty columns with room for `n` documents.
    pub(super) fn with_capacity(n: usize) -> Columns {
        Columns {
            simhashes: super::memory::with_capacity(n),
            bins: (0..BANDS)
                .map(|_| super::memory::with_capacity(n))
                .collect(),
        }
    }

    /// Adds the keys of the next document.
    pub(super) fn push(&mut self, doc: &Stored) {
        self.simhashes.push(doc.simhash);
        for (band, column) in self.bins.iter_mut().enumerate() {
            column.push(doc.sketch.band_bins(band));
        }
    }

    /// Documents held.
    pub(super) fn len(&self) -> usize {
        self.simhashes.len()
    }
}

/// A table of the entries of table `t` (simhash tables first, then the bands), with
/// `leading` shared bits, for the documents whose keys `columns` holds from its row `skip`
/// on, the first of them document `from`, built in the memory of `lines`: its shape and
/// lines (a snapshot's delta section, see `snapshot/in_place.rs`).
pub(super) fn layer_of(
    plan: &Plan,
    (t, leading): (usize, u32),
    columns: &Columns,
    (skip, from): (usize, u64),
    lines: Vec<CacheLine>,
) -> (TableShape, Column<CacheLine>) {
    let n = columns.len() - skip;
    let id = |i: usize| (from + i as u64) as u32;
    if t < plan.tables.len() {
        let column = &columns.simhashes[skip..];
        let key = |i: usize| (plan.permute(t, column[i]), id(i));
        Bucketed::<u64>::build_in(leading, n, key, lines).into_parts()
    } else {
        let band = t - plan.tables.len();
        let column = &columns.bins[band][skip..];
        let key = |i: usize| (Sketch::band_key_of(band, column[i]), id(i));
        Bucketed::<u32>::build_in(leading, n, key, lines).into_parts()
    }
}

/// Builds the in-memory tables from the stored rows: the permuted tables and the band
/// tables are jobs taken in turn by one thread per core. Each table is built from the rows'
/// [`Columns`] (ids are `base` plus the row number), with no intermediate array of keys.
pub(super) fn build_memory(plan: &Plan, rows: Rows) -> Memory {
    let table_count = plan.tables.len();
    let base = rows.base as u32;
    let Columns { simhashes, bins } = Columns::of(rows.docs.iter());
    enum Built {
        Table(Bucketed<u64>),
        Band(Bucketed<u32>),
    }
    let built = in_turn((0..table_count + BANDS).collect(), |job| {
        if job < table_count {
            Built::Table(Bucketed::build_from(
                plan.tables[job].leading_bits,
                simhashes.len(),
                |i| (plan.permute(job, simhashes[i]), base + i as u32),
            ))
        } else {
            let band = job - table_count;
            let column = &bins[band];
            Built::Band(Bucketed::build_from(32, column.len(), |i| {
                (Sketch::band_key_of(band, column[i]), base + i as u32)
            }))
        }
    });
    let mut tables = Vec::with_capacity(table_count);
    let mut bands = Vec::with_capacity(BANDS);
    for table in built {
        match table {
            Built::Table(table) => tables.push(table),
            Built::Band(band) => bands.push(band),
        }
    }
    Memory {
        checksum: rows.checksum,
        tables,
        bands,
        base: rows.base,
        docs: VecDeque::from(rows.docs),
        growth_check: 0,
    }
}

/// Adds the documents after the snapshot's copy of each table to that table as its tail
/// (see `memory.rs`): `from[t]` is the first id the copy of table `t` lacks (simhash tables
/// first, then band tables), and `memory` holds every row up to its count. The tails are
/// built from the [`Columns`] of the rows after the oldest copy, as jobs taken in turn by
/// one thread per core; table `t`'s into the memory of `room[t]`, when there is one
/// (memory faulted in ahead: see `snapshot::Early`).
pub(super) fn add_tails(plan: &Plan, memory: &mut Memory, from: &[u64], room: Vec<Vec<CacheLine>>) {
    let count = memory.count();
    let base = memory.base;
    // A table's copy may hold expired documents' entries; its tail starts at the floor.
    let starts: Vec<u64> = from.iter().map(|&f| f.max(base).min(count)).collect();
    let first = starts.iter().copied().min().unwrap_or(count);
    let Columns { simhashes, bins } = Columns::of(memory.docs.range((first - base) as usize..));
    let mut jobs: Vec<(TableMut<'_>, u64, Vec<CacheLine>)> = Vec::new();
    let mut room = room.into_iter();
    let tables = memory
        .tables
        .iter_mut()
        .enumerate()
        .map(|(t, table)| TableMut::Simhash(t, table));
    let bands = (memory.bands.iter_mut().enumerate()).map(|(b, table)| TableMut::Band(b, table));
    for (job, &start) in tables.chain(bands).zip(&starts) {
        let lines = room.next().unwrap_or_default();
        if start < count {
            jobs.push((job, start, lines));
        }
    }
    in_turn(jobs, |(job, start, lines)| {
        let n = (count - start) as usize;
        let skip = (start - first) as usize;
        let id = |i: usize| start as u32 + i as u32;
        match job {
            TableMut::Simhash(t, table) => {
                let column = &simhashes[skip..];
                table.add_tail(n, |i| (plan.permute(t, column[i]), id(i)), lines);
            }
            TableMut::Band(band, table) => {
                let column = &bins[band][skip..];
                table.add_tail(n, |i| (Sketch::band_key_of(band, column[i]), id(i)), lines);
            }
        }
    });
}

impl Memory {
    /// Whether a table has a tail not yet folded in.
    pub(super) fn has_tails(&self) -> bool {
        self.tables.iter().any(Bucketed::has_tail) || self.bands.iter().any(Bucketed::has_tail)
    }

    /// Folds the tail of one table into it (see [`Bucketed::fold`]); returns whether a
    /// table had one. One table at a time, so that the lock a fold is done under is held
    /// for one table's copy.
    pub(super) fn fold_one(&mut self) -> bool {
        let floor = u32::try_from(self.base).unwrap_or(u32::MAX);
        let folded = self.tables_mut().any(|job| match job {
            TableMut::Simhash(_, table) if table.has_tail() => {
                table.fold(floor);
                true
            }
            TableMut::Band(_, table) if table.has_tail() => {
                table.fold(floor);
                true
            }
            _ => false,
        });
        if folded {
            // The fold took slots other than by `add`: look for tables due at the next.
            self.growth_check = 0;
        }
        folded
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::fingerprint::{Digest, SKETCH_BINS};
    use crate::index::growth::{GROWTH_SPREAD, cores};

    pub(in crate::index) fn row(i: u64) -> Stored {
        let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5851_F42D_4C95_7F2D;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let simhash = next();
        let mut bins = [0u8; SKETCH_BINS];
        for b in &mut bins {
            *b = next() as u8;
        }
        Stored {
            simhash,
            digest: Digest(u128::from(simhash)),
            chars: 1000,
            at: 0,
            sketch: Sketch {
                bins,
                shingles: 300,
                unspaced: 0,
            },
        }
    }

    fn rows(n: u64) -> Rows {
        Rows {
            base: 0,
            docs: (0..n).map(row).collect(),
            checksum: 0,
            checksums_at: Vec::new(),
        }
    }

    /// Every table finds every document at distance 0 under its own key, once.
    fn assert_each_table_finds_each_document(plan: &Plan, memory: &Memory, n: u64) {
        let mut found = Vec::new();
        for id in 0..n {
            let doc = row(id);
            let keys = keys_of(plan, doc.simhash, &doc.sketch);
            for (t, table) in memory.tables.iter().enumerate() {
                found.clear();
                table.probe(keys.permuted[t], 0, &mut found);
                let hits = found.iter().filter(|e| e.0 == id as u32).count();
                assert_eq!(hits, 1, "table {t}, document {id}");
            }
            for (b, table) in memory.bands.iter().enumerate() {
                found.clear();
                table.probe(keys.bands[b], 0, &mut found);
                let hits = found.iter().filter(|e| e.0 == id as u32).count();
                assert_eq!(hits, 1, "band {b}, document {id}");
            }
        }
        for table in &memory.tables {
            assert_eq!(table.len() as u64, n);
        }
        for table in &memory.bands {
            assert_eq!(table.len() as u64, n);
        }
    }

    /// An index of `n` documents whose tables hold the first `first` and whose tails hold
    /// the rest, as an open from a snapshot of `first` documents makes it.
    pub(in crate::index) fn memory_with_tails(plan: &Plan, first: u64, n: u64) -> Memory {
        let mut memory = build_memory(plan, rows(first));
        memory.docs.extend((first..n).map(row));
        let from = vec![first; plan.tables.len() + BANDS];
        add_tails(plan, &mut memory, &from, Vec::new());
        memory
    }

    #[test]
    fn the_tables_grow_one_per_core_at_an_insert_and_find_every_document() {
        let plan = Plan::with_blocks(3, 6).unwrap();
        let mut memory = build_memory(&plan, rows(0));
        let cores = cores();
        let count = plan.tables.len() + BANDS;
        let groups = count.div_ceil(cores);
        // What each table takes before it grows: larger once it has grown.
        let shape = |m: &Memory| -> Vec<usize> {
            let tables = m.tables.iter().map(Bucketed::takes);
            tables.chain(m.bands.iter().map(Bucketed::takes)).collect()
        };
        let n = 60_000;
        let (mut inserts_that_grew, mut grown) = (0, 0);
        let mut before = shape(&memory);
        for id in 0..n {
            let doc = row(id);
            memory.add(&keys_of(&plan, doc.simhash, &doc.sketch), doc, id as u32);
            let after = shape(&memory);
            // Tables too small for a spread (a group's share of the early room under one
            // entry) may all grow at one insert, in microseconds; larger ones a group at a
            // time.
            let spread = before.iter().all(|&takes| takes >= GROWTH_SPREAD * groups);
            let now = before.iter().zip(&after).filter(|(b, a)| a > b).count();
            if spread && now > 0 {
                assert!(now <= cores, "{now} tables grew at document {id}");
                inserts_that_grew += 1;
                grown += now;
            }
            before = after;
        }
        // Several growths of every table were spread, each over `groups` inserts.
        assert!(grown >= 2 * count, "{grown} growths of tables spread");
        assert!(inserts_that_grew >= 2 * groups, "{inserts_that_grew}");
        assert_each_table_finds_each_document(&plan, &memory, n);
    }

    #[test]
    fn tails_that_start_at_each_tables_own_count_hold_exactly_the_documents_after_it() {
        use crate::index::memory::ready_lines;
        let plan = Plan::with_blocks(3, 6).unwrap();
        let n = 3_000;
        // The tables copied at different moments: table t holds the documents below
        // `from[t]`, as the sections of a snapshot written while inserts went on.
        let count = plan.tables.len() + BANDS;
        let from: Vec<u64> = (0..count as u64).map(|t| 1_000 + 53 * t).collect();
        let first = from[0];
        let mut memory = build_memory(&plan, rows(first));
        for id in first..n {
            let doc = row(id);
            let keys = keys_of(&plan, doc.simhash, &doc.sketch);
            for (t, table) in memory.tables.iter_mut().enumerate() {
                if id < from[t] {
                    table.insert(keys.permuted[t], id as u32, 0);
                }
            }
            for (b, table) in memory.bands.iter_mut().enumerate() {
                if id < from[plan.tables.len() + b] {
                    table.insert(keys.bands[b], id as u32, 0);
                }
            }
            memory.docs.push_back(doc);
        }
        // Memory made ready for some of the tails: none, half, all or one and a half
        // times what each needs, and none for the last two tables.
        let room = (0..count - 2)
            .map(|t| ready_lines((n - from[t]) * (t as u64 % 4) / 2))
            .collect();
        add_tails(&plan, &mut memory, &from, room);
        assert!(memory.has_tails());
        assert_each_table_finds_each_document(&plan, &memory, n);
        while memory.fold_one() {}
        assert_each_table_finds_each_document(&plan, &memory, n);
    }
}
