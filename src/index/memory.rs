//! The in-memory form of one table: entries in cache-line buckets, one line read per probe.
//!
//! A table is an array of lines of 64 bytes, each holding up to [`SLOTS`] entries: the top
//! 32 bits of the entry's key (its *fragment*) and its document id. An entry's home line is
//! a function of the key's shared prefix alone (its top `leading` bits, at most 32: the bits
//! a near-duplicate must share in this table), mixed and spread over the lines by a
//! multiply-shift, so every entry a query can match has the query's home. An entry goes
//! into the first line from its home on that has a free slot (bucketised linear probing),
//! and slots fill in order, so a probe reads the home line and goes on to the next only
//! while the lines it reads are full: at the load kept here ([`MAX_LOAD`]) nearly always one line. An insert
//! writes into the line that the lookup before it has just read; there is no list of recent
//! entries to chain and no merge to run.
//!
//! A fragment holds the shared prefix and the next bits of the key: a band key (32 bits)
//! whole, a permuted simhash's first 32 bits. A probe returns the entries whose prefix equals
//! the query's and whose fragment is within `k` bits of the query's, with that distance: a
//! lower bound of the whole key's distance, which the caller checks on the document's row
//! (an unrelated entry passes with probability about 2^-6 per entry that shares the prefix).
//!
//! The table grows by [`GROWTH`] when an insert would pass [`MAX_LOAD`], re-placing its
//! entries a block at a time with their home lines asked for ahead; entries of expired
//! documents (ids below the floor) are dropped then, and an
//! insert may take the slot of one on its way.
//!
//! A table may carry a *tail*: a small read-only table of the entries that a snapshot's
//! copy of it lacks, built when the index opens from a snapshot older than the database.
//! Probes read both. Writing those entries into the mapped lines instead would copy nearly
//! every page of the table first (one insert in a few thousand pages lands on most of them),
//! which at 10 M documents costs more than the whole open from the snapshot. The tail is
//! folded in later ([`Bucketed::fold`]), off the path of the open, and a snapshot taken
//! meanwhile places it into its copy of the table ([`Bucketed::capture`]).

use std::io;

use crate::fingerprint::fmix32;

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
fn fragment<K: Key>(key: K) -> u32 {
    (key.wide() >> 32) as u32
}

/// A plain data type: every bit pattern is a value, there is no padding, and its bytes are
/// its value in the machine's byte order, so that an array of it can be written out as
/// bytes and read back from a mapped file (see `super::snapshot`).
///
/// # Safety
/// Only for types that meet all of the above.
pub(crate) unsafe trait Plain: Copy + 'static {}

/// One line of a table: slot `i` holds `fragments[i]` and `tags[i]`, the document id plus
/// one (0: the slot is free). Slots fill from the first.
#[repr(C, align(64))]
#[derive(Clone, Copy, Default, Debug)]
pub(crate) struct Line {
    fragments: [u32; SLOTS],
    tags: [u32; SLOTS],
}

// SAFETY: sixteen u32 in a 64-byte struct aligned to 64: no padding, every bit pattern a value.
unsafe impl Plain for Line {}

/// The bytes of an array of plain values.
pub(crate) fn plain_bytes<T: Plain>(values: &[T]) -> &[u8] {
    // SAFETY: `T` is `Plain`: no padding, every byte initialised.
    unsafe {
        std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values))
    }
}

/// An array of a table: in memory of its own (a vector, or zeroed pages mapped for a table
/// that grew), or a section of a snapshot file mapped privately (an index opened from its
/// snapshot reads its tables straight from the page cache, and a page is copied into
/// memory of its own only when an insert writes to it).
pub(crate) enum Column<T: Plain> {
    Owned(Vec<T>),
    Mapped {
        map: memmap2::MmapMut,
        /// Values.
        len: usize,
        /// Whether the map is of a file (a snapshot's section), not zeroed memory of its
        /// own (see [`Column::zeroed`]).
        file: bool,
    },
}

impl<T: Plain> Column<T> {
    /// `n` zeroed values in memory of their own, straight from the kernel, for a table
    /// that grows: nothing is written before the entries are (a vector of a type the
    /// allocator cannot zero is filled value by value first), and the memory may use huge
    /// pages. At 10 M documents, this cut the page faults of the deciding thread from 2.0 M
    /// to 0.6 M and raised the decision loop from 150-152 k/s to 180-182 k/s
    /// (`cargo bench --bench scale -- 10000000`). Memory the kernel cannot give is an
    /// allocation failure, as a vector's would be.
    pub(crate) fn zeroed(n: usize) -> Column<T> {
        let layout = std::alloc::Layout::array::<T>(n)
            .unwrap_or_else(|_| std::alloc::handle_alloc_error(std::alloc::Layout::new::<T>()));
        if layout.size() == 0 {
            return Column::Owned(Vec::new());
        }
        let map = memmap2::MmapMut::map_anon(layout.size())
            .unwrap_or_else(|_| std::alloc::handle_alloc_error(layout));
        advise_huge_pages(&map[..]);
        Column::Mapped {
            map,
            len: n,
            file: false,
        }
    }

    /// Faults in every page of zeroed memory of its own now (see [`Column::zeroed`]),
    /// rather than one at a time at the first insert that lands on it: the memory of a
    /// table sized ahead (`dedup.expected_pages`) is taken when the index opens. At 10 M
    /// documents, the faults left to the inserts held about 130 of them 10-100 ms each
    /// (5.5 s of the scale bench's decision loop).
    pub(crate) fn populate(&mut self) {
        const PAGE: usize = 4096;
        if let Column::Mapped {
            map, file: false, ..
        } = self
        {
            let bytes: &mut [u8] = map;
            for byte in bytes.iter_mut().step_by(PAGE) {
                // A write (of the byte that is there) makes the kernel back the page; a
                // read alone would map the shared zero page instead.
                let ptr: *mut u8 = byte;
                // SAFETY: `ptr` comes from a live `&mut u8`; the volatile pair keeps the
                // write from being dropped as a no-op.
                unsafe { ptr.write_volatile(ptr.read_volatile()) };
            }
        }
    }

    /// Moves an array mapped from a file into memory of its own, in one copy: cheaper,
    /// before many scattered writes, than a fault and a page copy at the first write to
    /// each page.
    pub(crate) fn own(&mut self) {
        if let Column::Mapped { file: true, .. } = self {
            let mut owned = with_capacity(self.len());
            owned.extend_from_slice(self);
            *self = Column::Owned(owned);
        }
    }

    /// `len` values at byte `offset` of `file` (a multiple of the page size), mapped
    /// copy-on-write: writes go to private copies of the pages, never to the file.
    pub(crate) fn mapped(file: &std::fs::File, offset: u64, len: usize) -> io::Result<Column<T>> {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| io::Error::other("section too large"))?;
        if bytes == 0 {
            return Ok(Column::Owned(Vec::new()));
        }
        // SAFETY: the map is private (copy-on-write), so nothing written through it reaches
        // the file; the file is not changed by others while the index is open (see
        // `super::snapshot`). The range is checked against the file's length first.
        let size = file.metadata()?.len();
        if offset
            .checked_add(bytes as u64)
            .is_none_or(|end| end > size)
        {
            return Err(io::Error::other("section past the end of the file"));
        }
        let map = unsafe {
            memmap2::MmapOptions::new()
                .offset(offset)
                .len(bytes)
                .map_copy(file)?
        };
        if map.as_ptr() as usize % std::mem::align_of::<T>() != 0 {
            return Err(io::Error::other("section not aligned"));
        }
        Ok(Column::Mapped {
            map,
            len,
            file: true,
        })
    }
}

impl<T: Plain> Default for Column<T> {
    fn default() -> Self {
        Column::Owned(Vec::new())
    }
}

impl<T: Plain> std::ops::Deref for Column<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            Column::Owned(values) => values,
            // SAFETY: `mapped` checked that the map holds `len` values and is aligned for
            // `T`, a plain type for which every bit pattern is a value; the map lives as
            // long as this column.
            Column::Mapped { map, len, .. } => unsafe {
                std::slice::from_raw_parts(map.as_ptr().cast::<T>(), *len)
            },
        }
    }
}

impl<T: Plain> std::ops::DerefMut for Column<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        match self {
            Column::Owned(values) => values,
            // SAFETY: as for `deref`; the map is private and writable.
            Column::Mapped { map, len, .. } => unsafe {
                std::slice::from_raw_parts_mut(map.as_mut_ptr().cast::<T>(), *len)
            },
        }
    }
}

impl<T: Plain> std::fmt::Debug for Column<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Column::Owned(values) => write!(f, "Owned({} values)", values.len()),
            Column::Mapped { len, file, .. } => match file {
                true => write!(f, "Mapped({len} values)"),
                false => write!(f, "Zeroed({len} values)"),
            },
        }
    }
}

/// What a table's lines need beside them: (leading bits, id floor, entries held).
pub(crate) type TableShape = (u32, u32, u64);

/// One table: lines of entries (fragment, id), homed by the key's shared prefix.
#[derive(Debug, Default)]
pub(crate) struct Bucketed<K: Key = u64> {
    /// Leading bits that a near-duplicate shares with the key in this table, at most 32.
    leading: u32,
    lines: Column<Line>,
    /// Entries held, expired ones included until they are dropped.
    entries: u64,
    /// The id floor of the last re-placement: entries below it were dropped then.
    floor: u32,
    /// Entries kept apart until they are folded in (see the module doc); shared, so that a
    /// snapshot can place them into its copy after the lock it copied the lines under.
    tail: Option<std::sync::Arc<Bucketed<K>>>,
    _key: std::marker::PhantomData<K>,
}

impl<K: Key> Bucketed<K> {
    /// A table holding `keys[i]` with id `ids[i]`.
    #[cfg(test)]
    pub(crate) fn build(leading: u32, keys: Vec<K>, ids: Vec<u32>) -> Bucketed<K> {
        Bucketed::build_from(leading, keys.len(), |i| (keys[i], ids[i]))
    }

    /// A table holding the `n` entries `entry(0)`, ..., `entry(n - 1)`, each a (key, id),
    /// filled to [`BUILD_LOAD`]. The home lines of a block of entries are asked for before
    /// any of them is written, so that the misses overlap.
    pub(crate) fn build_from(
        leading: u32,
        n: usize,
        entry: impl Fn(usize) -> (K, u32),
    ) -> Bucketed<K> {
        let mut table = Bucketed {
            leading: leading.min(32),
            lines: Column::Owned(Vec::new()),
            entries: 0,
            floor: 0,
            tail: None,
            _key: std::marker::PhantomData,
        };
        // Ordinary pages, filled value by value: a table built on open is written once in
        // order, and on the machine measured, freshly zeroed huge pages for all of them
        // made reopens alternate between 1.7 and 3.1 s. (A table grown during inserts
        // takes huge pages: see `Column::zeroed`.)
        table.lines = Column::Owned(vec![Line::default(); lines_for(n as f64 / BUILD_LOAD)]);
        table.place_all((0..n).map(|i| {
            let (key, id) = entry(i);
            (fragment(key), id)
        }));
        table
    }

    /// Entries held, in the table and its tail (expired ones included until dropped).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        (self.entries + self.tail.as_ref().map_or(0, |t| t.entries)) as usize
    }

    /// Gives the table a tail holding the `n` entries `entry(0)`, ..., `entry(n - 1)`
    /// (replacing any tail it had): entries probes find, kept apart from the lines until
    /// [`Bucketed::fold`].
    pub(crate) fn set_tail(&mut self, n: usize, entry: impl Fn(usize) -> (K, u32)) {
        self.tail =
            (n > 0).then(|| std::sync::Arc::new(Bucketed::build_from(self.leading, n, entry)));
    }

    /// Whether the table has a tail not yet folded in.
    pub(crate) fn has_tail(&self) -> bool {
        self.tail.is_some()
    }

    /// Folds the tail into the lines. Entries of ids below `floor` may be dropped on the
    /// way, as a growth drops them.
    pub(crate) fn fold(&mut self, floor: u32) {
        if let Some(tail) = self.tail.take() {
            self.place_tail(&tail, floor);
        }
    }

    /// Places every entry of `tail` into the lines: first grown into fresh memory if the
    /// entries need room, else moved into memory of their own (one copy, cheaper than a
    /// page copy at the first write to each page: see [`Column::own`]).
    fn place_tail(&mut self, tail: &Bucketed<K>, floor: u32) {
        if (tail.entries as usize) > self.room() {
            self.replace_into(
                lines_for((self.entries + tail.entries) as f64 / BUILD_LOAD),
                floor,
                false,
            );
        } else {
            self.lines.own();
        }
        let entries = tail
            .lines
            .iter()
            .flat_map(|line| line.fragments.iter().zip(&line.tags))
            .filter(|&(_, &tag)| tag > floor);
        self.place_all(entries.map(|(&f, &tag)| (f, tag - 1)));
    }

    /// Copies the lines into `out` (its earlier contents dropped) and returns the table's
    /// shape and tail: what a snapshot takes under the index's lock. The copy is a table of
    /// every entry the table held at that moment once [`Captured::merge`] has placed the
    /// tail into it, which needs no lock.
    pub(crate) fn capture(&self, out: &mut Vec<Line>) -> Captured<K> {
        out.clear();
        out.extend_from_slice(&self.lines);
        Captured {
            shape: (self.leading, self.floor, self.entries),
            tail: self.tail.clone(),
        }
    }

    /// Entries the table takes before it grows.
    pub(crate) fn room(&self) -> usize {
        let capacity = (self.lines.len() * SLOTS) as f64 * MAX_LOAD;
        (capacity as usize).saturating_sub(self.entries as usize)
    }

    /// The home line of a fragment: its top `leading` bits, mixed, spread over the lines.
    /// The mix matters: the prefixes of real simhashes are not spread evenly (at 1 M
    /// documents of real sentences, homes taken straight from the prefix made runs of full
    /// lines over 2,000 long), and linear probing turns a dense stretch of homes into one
    /// long run; a mixed prefix spreads them as random keys.
    #[inline(always)]
    fn home(&self, fragment: u32) -> usize {
        let prefix = (u64::from(fragment) >> (32 - self.leading)) as u32;
        ((u64::from(fmix32(prefix)) * self.lines.len() as u64) >> 32) as usize
    }

    /// The mask of the shared prefix in a fragment.
    #[inline(always)]
    fn prefix_mask(&self) -> u32 {
        if self.leading == 0 {
            0
        } else {
            u32::MAX << (32 - self.leading)
        }
    }

    /// Puts an entry in the first line from `home` on with a free slot, or with the slot of
    /// an expired entry (id below `floor`). The caller keeps the load under 1.
    #[inline(always)]
    fn place(&mut self, fragment: u32, home: usize, id: u32, floor: u32) {
        let count = self.lines.len();
        let mut at = home;
        loop {
            let line = &mut self.lines[at];
            for slot in 0..SLOTS {
                let tag = line.tags[slot];
                if tag == 0 || tag - 1 < floor {
                    line.fragments[slot] = fragment;
                    line.tags[slot] = id + 1;
                    self.entries += u64::from(tag == 0);
                    return;
                }
            }
            at = if at + 1 == count { 0 } else { at + 1 };
        }
    }

    /// Adds an entry; `floor` is the lowest id still live: an expired entry's slot may be
    /// taken, and a growth drops them all.
    pub(crate) fn insert(&mut self, key: K, id: u32, floor: u32) {
        debug_assert!(id < u32::MAX);
        if self.room() == 0 {
            self.grow(floor);
        }
        let f = fragment(key);
        let home = self.home(f);
        self.place(f, home, id, floor);
    }

    /// Re-places the entries into a table [`GROWTH`] times larger (dropping those of ids
    /// below `floor`; into one of the same size if they were most of them).
    pub(crate) fn grow(&mut self, floor: u32) {
        self.replace(floor, GROWTH);
    }

    /// Makes room for `entries` entries in all, if the table has less: re-places its
    /// entries into a table that holds them at [`BUILD_LOAD`] (see `dedup.expected_pages`).
    /// Entries of ids below `floor` are dropped on the way.
    pub(crate) fn reserve(&mut self, entries: u64, floor: u32) {
        let capacity = (self.lines.len() * SLOTS) as f64 * MAX_LOAD;
        if (entries as f64) <= capacity {
            return;
        }
        self.replace_into(lines_for(entries as f64 / BUILD_LOAD), floor, true);
    }

    /// Re-places every entry of an id from `floor` on into a table of the same size, or
    /// `growth` times larger if the live entries need it (and at least one line).
    fn replace(&mut self, floor: u32, growth: f64) {
        // No id expired since the last re-placement (always, without a retention window):
        // every entry held is live, and the pass that counts them is saved.
        let live = if floor <= self.floor {
            self.entries as usize
        } else {
            self.lines
                .iter()
                .flat_map(|l| l.tags.iter())
                .filter(|&&t| t > floor)
                .count()
        };
        let capacity = self.lines.len() * SLOTS;
        let lines = if (live + 1) as f64 <= capacity as f64 * MAX_LOAD / GROWTH {
            self.lines.len()
        } else {
            lines_for(((live + 1) as f64 * growth / MAX_LOAD).max(capacity as f64 * growth))
        };
        self.replace_into(lines, floor, false);
    }

    /// Re-places every entry of an id from `floor` on into `lines` zeroed lines, first
    /// faulted in if `populate` (see [`Column::populate`]).
    fn replace_into(&mut self, lines: usize, floor: u32, populate: bool) {
        let mut fresh = Column::zeroed(lines);
        if populate {
            fresh.populate();
        }
        let old = std::mem::replace(&mut self.lines, fresh);
        self.entries = 0;
        let floor = floor.max(self.floor);
        self.floor = floor;
        let live = old
            .iter()
            .flat_map(|line| line.fragments.iter().zip(&line.tags))
            .filter(|&(_, &tag)| tag > floor);
        self.place_all(live.map(|(&f, &tag)| (f, tag - 1)));
    }

    /// Places entries (fragment, id), asking for the home lines of a block of them before
    /// any is written, so that the misses overlap.
    fn place_all(&mut self, entries: impl Iterator<Item = (u32, u32)>) {
        const BLOCK: usize = 32;
        let mut block = [(0u32, 0usize, 0u32); BLOCK];
        let mut filled = 0;
        for (f, id) in entries {
            let home = self.home(f);
            prefetch(&self.lines[home]);
            block[filled] = (f, home, id);
            filled += 1;
            if filled == BLOCK {
                for &(f, home, id) in &block {
                    self.place(f, home, id, 0);
                }
                filled = 0;
            }
        }
        for &(f, home, id) in &block[..filled] {
            self.place(f, home, id, 0);
        }
    }

    /// Drops the entries of ids below `floor` now, keeping the size.
    #[cfg(test)]
    pub(crate) fn merge(&mut self, floor: u32) {
        if floor > self.floor {
            self.replace(floor, 1.0);
        }
    }

    /// Asks for the cache line of `key`'s home, so that the probes of all tables wait for
    /// memory at the same time rather than one by one.
    #[inline(always)]
    pub(crate) fn prefetch(&self, key: K) {
        if !self.lines.is_empty() {
            prefetch(&self.lines[self.home(fragment(key))]);
        }
        if let Some(tail) = &self.tail {
            tail.prefetch(key);
        }
    }

    /// Pushes `(id, distance)` for every entry whose top `leading` bits equal `key`'s and
    /// whose fragment is within `k` bits of `key`'s (the distance over the fragment's 32
    /// bits: the whole key's, for a 32-bit key, else a lower bound of it).
    pub(crate) fn probe(&self, key: K, k: u32, out: &mut Vec<(u32, u32)>) {
        self.probe_lines(key, k, out);
        if let Some(tail) = &self.tail {
            tail.probe_lines(key, k, out);
        }
    }

    /// [`Bucketed::probe`] on the lines alone.
    fn probe_lines(&self, key: K, k: u32, out: &mut Vec<(u32, u32)>) {
        let count = self.lines.len();
        if count == 0 {
            return;
        }
        let query = fragment(key);
        let mask = self.prefix_mask();
        let mut at = self.home(query);
        for _ in 0..count {
            let line = &self.lines[at];
            for slot in 0..SLOTS {
                let tag = line.tags[slot];
                if tag == 0 {
                    return;
                }
                let x = line.fragments[slot] ^ query;
                if x & mask == 0 && x.count_ones() <= k {
                    out.push((tag - 1, x.count_ones()));
                }
            }
            at = if at + 1 == count { 0 } else { at + 1 };
        }
    }

    /// Bytes of memory the lines use.
    pub(crate) fn bytes(&self) -> usize {
        std::mem::size_of_val::<[Line]>(&self.lines) + self.tail.as_ref().map_or(0, |t| t.bytes())
    }

    /// A table from the parts a snapshot stores (see [`Bucketed::capture`]), checked for
    /// what can be checked cheaply: the shape fits the lines. (Whether each entry sits where
    /// a probe looks is not checked here: the snapshot's checksum stands for that.)
    pub(crate) fn from_parts(
        (leading, floor, entries): TableShape,
        lines: Column<Line>,
    ) -> Option<Bucketed<K>> {
        let capacity = (lines.len() * SLOTS) as u64;
        (leading <= 32 && !lines.is_empty() && entries < capacity).then_some(Bucketed {
            leading,
            lines,
            entries,
            floor,
            tail: None,
            _key: std::marker::PhantomData,
        })
    }
}

/// A table's copy taken by [`Bucketed::capture`]: its shape, and the tail still to place.
pub(crate) struct Captured<K: Key> {
    shape: TableShape,
    tail: Option<std::sync::Arc<Bucketed<K>>>,
}

impl<K: Key> Captured<K> {
    /// The shape of the copy in `lines` with the tail placed into it (the lines grown if
    /// it needs room): a table of every entry the captured table held.
    pub(crate) fn merge(self, lines: &mut Vec<Line>) -> (TableShape, MergedLines<'_>) {
        let Some(tail) = self.tail else {
            return (self.shape, MergedLines::Copy(lines));
        };
        let (leading, floor, entries) = self.shape;
        let mut table = Bucketed::<K> {
            leading,
            lines: Column::Owned(std::mem::take(lines)),
            entries,
            floor,
            tail: None,
            _key: std::marker::PhantomData,
        };
        table.place_tail(&tail, floor);
        let shape = (table.leading, table.floor, table.entries);
        match table.lines {
            // Placed in the copy: it goes on serving as the buffer.
            Column::Owned(values) => {
                *lines = values;
                (shape, MergedLines::Copy(lines))
            }
            grown => (shape, MergedLines::Grown(grown)),
        }
    }
}

/// The lines of a merged copy: the buffer it was copied into, or the larger lines it grew
/// into.
pub(crate) enum MergedLines<'a> {
    Copy(&'a [Line]),
    Grown(Column<Line>),
}

impl std::ops::Deref for MergedLines<'_> {
    type Target = [Line];
    fn deref(&self) -> &[Line] {
        match self {
            MergedLines::Copy(lines) => lines,
            MergedLines::Grown(lines) => lines,
        }
    }
}

/// Lines for `slots` slots (at least one line).
fn lines_for(slots: f64) -> usize {
    ((slots / SLOTS as f64).ceil() as usize).max(1)
}

/// A hint to load the cache line holding `value`; no effect on other targets.
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    // SAFETY: SSE is part of the x86_64 baseline, and a prefetch never faults: it only
    // hints at an address (here a valid reference).
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (value as *const T).cast::<i8>(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// An empty vector with room for `n` values, in memory that the kernel may back with
/// transparent huge pages.
///
/// For the big arrays a reopen fills first: the stored rows (read again by every table) and
/// the columns pulled out of them: a vector this large comes straight from `mmap` and is
/// not touched before the advice, so the first write faults in 2 MiB at a time.
pub(crate) fn with_capacity<T>(n: usize) -> Vec<T> {
    let mut values = Vec::with_capacity(n);
    advise_huge_pages(values.spare_capacity_mut());
    values
}

/// Advises the kernel that the memory of `values` may use huge pages (Linux); no effect
/// elsewhere or under 2 MiB, and a refusal (transparent huge pages turned off) changes
/// nothing.
fn advise_huge_pages<T>(values: &[T]) {
    const HUGE: usize = 2 << 20;
    let bytes = std::mem::size_of_val(values);
    if bytes < HUGE {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = values.as_ptr() as usize;
        let aligned = start.next_multiple_of(PAGE);
        let len = (start + bytes - aligned) / PAGE * PAGE;
        // SAFETY: the range lies inside one live allocation (rounded inwards to whole
        // pages), and MADV_HUGEPAGE only changes how the kernel backs it, never its contents.
        unsafe {
            libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pages of `values` the kernel backs now (Linux).
    #[cfg(target_os = "linux")]
    fn resident_pages<T>(values: &[T]) -> usize {
        const PAGE: usize = 4096;
        let start = values.as_ptr() as usize;
        assert_eq!(start % PAGE, 0, "a mapping starts on a page");
        let pages = std::mem::size_of_val(values).div_ceil(PAGE);
        let mut flags = vec![0u8; pages];
        // SAFETY: the range is one live mapping, and `flags` holds a byte per page of it.
        let status = unsafe {
            libc::mincore(
                start as *mut libc::c_void,
                pages * PAGE,
                flags.as_mut_ptr().cast(),
            )
        };
        assert_eq!(status, 0, "mincore: {}", std::io::Error::last_os_error());
        flags.iter().filter(|&&f| f & 1 == 1).count()
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_populated_column_is_backed_from_the_start_and_keeps_what_it_holds() {
        let n = (8 << 20) / std::mem::size_of::<Line>();
        let pages = (8 << 20) / 4096;
        let mut column = Column::<Line>::zeroed(n);
        assert!(
            resident_pages(&column) < pages / 2,
            "untouched memory is not backed"
        );
        column[7].tags[3] = 42;
        column[n - 1].fragments[0] = 7;
        column.populate();
        assert_eq!(resident_pages(&column), pages);
        assert_eq!((column[7].tags[3], column[n - 1].fragments[0]), (42, 7));
        assert_eq!(
            column
                .iter()
                .map(|l| l.tags.iter().sum::<u32>())
                .sum::<u32>(),
            42
        );
    }

    /// A deterministic stream of 64-bit keys (xorshift64) from `state`.
    fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    /// The ids a probe of `key` at distance 0 finds.
    fn found(table: &Bucketed, key: u64) -> Vec<u32> {
        let mut out = Vec::new();
        table.probe(key, 0, &mut out);
        out.into_iter().map(|(id, _)| id).collect()
    }

    #[test]
    fn every_entry_is_found_after_the_table_grows() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        let entries: Vec<(u64, u32)> = (0..60_000).map(|i| (next(), i)).collect();
        let (keys, ids): (Vec<u64>, Vec<u32>) = entries[..20_000].iter().copied().unzip();
        let mut table = Bucketed::build(26, keys, ids);
        let lines = table.lines.len();
        for &(key, id) in &entries[20_000..] {
            table.insert(key, id, 0);
        }
        assert!(table.lines.len() > lines, "the table grew");
        assert_eq!(table.len(), 60_000);
        for &(key, id) in &entries {
            assert!(found(&table, key).contains(&id), "{key:x}");
        }
        let load = table.len() as f64 / (table.lines.len() * SLOTS) as f64;
        assert!(load <= MAX_LOAD, "{load}");
    }

    /// A table of the first `held` entries, with the rest as its tail.
    fn with_tail(entries: &[(u64, u32)], held: usize) -> Bucketed {
        let (keys, ids): (Vec<u64>, Vec<u32>) = entries[..held].iter().copied().unzip();
        let mut table = Bucketed::build(24, keys, ids);
        let rest = &entries[held..];
        table.set_tail(rest.len(), |i| rest[i]);
        table
    }

    #[test]
    fn a_tail_is_probed_with_the_table_and_folds_in_with_nothing_lost() {
        let mut next = xorshift(0x2468_ace0_1357_9bdfu64);
        let entries: Vec<(u64, u32)> = (0..40_000).map(|i| (next(), i)).collect();
        // A tail bigger than the room the table has left, so the fold must grow it.
        let mut table = with_tail(&entries, 25_000);
        assert!(table.has_tail());
        assert!(table.room() < 15_000, "{}", table.room());
        assert_eq!(table.len(), 40_000);
        for &(key, id) in &entries {
            assert_eq!(found(&table, key), vec![id], "{key:x} before the fold");
        }
        // Inserts go to the table itself while the tail is there.
        table.insert(next(), 40_000, 0);
        table.fold(0);
        assert!(!table.has_tail());
        assert_eq!(table.len(), 40_001);
        for &(key, id) in &entries {
            assert_eq!(found(&table, key), vec![id], "{key:x} after the fold");
        }
    }

    #[test]
    fn a_captured_table_with_its_tail_merged_is_the_whole_table() {
        let mut next = xorshift(0x1111_2222_3333_4444u64);
        let entries: Vec<(u64, u32)> = (0..30_000).map(|i| (next(), i)).collect();
        for held in [29_000, 10_000] {
            let table = with_tail(&entries, held);
            let mut buffer = Vec::new();
            let captured = table.capture(&mut buffer);
            let (shape, lines) = captured.merge(&mut buffer);
            let lines: Vec<Line> = lines.to_vec();
            let copy = Bucketed::<u64>::from_parts(shape, Column::Owned(lines)).unwrap();
            assert!(!copy.has_tail());
            assert_eq!(copy.len(), 30_000);
            for &(key, id) in &entries {
                assert_eq!(found(&copy, key), vec![id], "{key:x}, {held} held");
            }
        }
    }

    #[test]
    fn a_merge_after_the_floor_rose_drops_the_expired_entries_only() {
        let mut next = xorshift(0x5151_7a7a_0303_c1c1u64);
        let entries: Vec<(u64, u32)> = (0..30_000).map(|i| (next(), i)).collect();
        let (keys, ids): (Vec<u64>, Vec<u32>) = entries[..20_000].iter().copied().unzip();
        let mut table = Bucketed::build(20, keys, ids);
        for &(key, id) in &entries[20_000..] {
            table.insert(key, id, 12_000);
        }
        table.merge(12_000);
        assert_eq!(table.len(), 18_000);
        for &(key, id) in &entries {
            assert_eq!(found(&table, key).contains(&id), id >= 12_000, "{id}");
        }
        // A later merge at the same floor keeps everything.
        table.merge(12_000);
        assert_eq!(table.len(), 18_000);
    }

    #[test]
    fn inserts_past_the_floor_keep_a_steady_table_from_growing() {
        let mut next = xorshift(0x0bad_cafe_f00d_1234u64);
        let mut table = Bucketed::build(26, Vec::<u64>::new(), Vec::new());
        // 10,000 live entries at any time, 200,000 inserted: expired slots are taken or
        // dropped, and the table stays the size that 10,000 entries need.
        for id in 0..200_000u32 {
            table.insert(next(), id, id.saturating_sub(10_000));
        }
        assert!(
            table.lines.len() * SLOTS <= 4 * 10_000,
            "{} lines",
            table.lines.len()
        );
    }

    #[test]
    fn prefixes_crowded_into_a_narrow_range_make_no_long_runs() {
        let mut next = xorshift(0x7777_1234_4321_7777u64);
        // 60,000 keys whose 26-bit prefixes all lie in 1% of the prefix space: homes taken
        // straight from the prefix would pile them into one run of full lines.
        let span = (1u64 << 26) / 100;
        let keys: Vec<u64> = (0..60_000)
            .map(|_| {
                let k = next();
                ((k >> 38) % span) << 38 | (k & ((1 << 38) - 1))
            })
            .collect();
        let table = Bucketed::build(26, keys.clone(), (0..60_000).collect());
        let mut longest = 0;
        let mut run = 0;
        for line in table.lines.iter() {
            run = if line.tags[SLOTS - 1] != 0 {
                run + 1
            } else {
                0
            };
            longest = longest.max(run);
        }
        assert!(longest < 40, "a run of {longest} full lines");
        for (id, &key) in keys.iter().enumerate().step_by(101) {
            assert!(found(&table, key).contains(&(id as u32)));
        }
    }

    #[test]
    fn probe_finds_exactly_the_entries_sharing_the_prefix_within_k_on_the_fragment() {
        let mut next = xorshift(0x1234_5678_9abc_def1u64);
        let leading = 12;
        // Keys in a few prefixes, so that many share one.
        let keys: Vec<u64> = (0..20_000)
            .map(|_| {
                let k = next();
                (k & !(u64::MAX << 52)) | ((k >> 60) << 52)
            })
            .collect();
        let mut table = Bucketed::build(leading, keys[..15_000].to_vec(), (0..15_000).collect());
        for (i, &key) in keys.iter().enumerate().skip(15_000) {
            table.insert(key, i as u32, 0);
        }
        assert_eq!(table.len(), 20_000);
        for probe in keys.iter().step_by(97).map(|k| k ^ (0b1011 << 32)) {
            let mut got = Vec::new();
            table.probe(probe, 3, &mut got);
            got.sort_unstable();
            let mask = u32::MAX << (32 - leading);
            let top = |k: u64| (k >> 32) as u32;
            let mut want: Vec<(u32, u32)> = keys
                .iter()
                .enumerate()
                .filter(|(_, k)| (top(**k) ^ top(probe)) & mask == 0)
                .map(|(i, k)| (i as u32, (top(*k) ^ top(probe)).count_ones()))
                .filter(|&(_, d)| d <= 3)
                .collect();
            want.sort_unstable();
            assert_eq!(got, want);
        }
    }
}
