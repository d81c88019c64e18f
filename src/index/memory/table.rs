//! A table: entries in cache-line buckets, probed and filled a line at a time, grown by
//! re-placing every entry, with a tail a snapshot's copy lacks.

use super::capture::Captured;
use super::column::{CacheLine, Column, Room, prefetch};
use super::{BUILD_LOAD, GROWTH, Key, MAX_LOAD, SLOTS, fragment, lines_for};
use crate::fingerprint::fmix32;

/// Lines below which no lines are made ready ahead of a growth (1 MiB): a smaller table
/// grows in well under a millisecond.
pub(crate) const PREPARE_LINES: usize = 16_384;

pub(crate) type TableShape = (u32, u32, u64);

/// `lines` zeroed lines for a table that grows into them, mapped with room for the
/// growths after (address space only until then: see [`room_after`]), which then grow in
/// place.
pub(crate) fn fresh_lines(lines: usize) -> Column<CacheLine> {
    Column::growable(lines, room_after(lines))
}

/// The lines to map room for when a table takes `lines` lines: four times as many, about
/// three growths, so that its map is lengthened (and maybe moved) once every three.
fn room_after(lines: usize) -> usize {
    lines.saturating_mul(4)
}

#[cfg(test)]
thread_local! {
    /// Growths in place on this thread, for the tests.
    pub(super) static GROWN_IN_PLACE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// One table: lines of entries (fragment, id), homed by the key's shared prefix.
#[derive(Debug, Default)]
pub(crate) struct Bucketed<K: Key = u64> {
    /// Leading bits that a near-duplicate shares with the key in this table, at most 32.
    pub(super) leading: u32,
    pub(super) lines: Column<CacheLine>,
    /// Entries held, expired ones included until they are dropped.
    pub(super) entries: u64,
    /// The id floor of the last re-placement: entries below it were dropped then.
    pub(super) floor: u32,
    /// Entries kept apart until they are folded in (see the module doc), in layers: a
    /// snapshot's delta sections, then the documents after them. Shared, so that a
    /// snapshot can place them into its copy after the lock it copied the lines under.
    pub(super) tail: Vec<std::sync::Arc<Bucketed<K>>>,
    /// Zeroed lines, their pages already backed, for the next growth to fill (see
    /// [`Bucketed::next_growth`]): taken when the growth wants that many lines.
    pub(super) ready: Option<Column<CacheLine>>,
    pub(super) _key: std::marker::PhantomData<K>,
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
        Bucketed::build_in(leading, n, entry, Vec::new())
    }

    /// [`Bucketed::build_from`] into the memory of `lines` (its values dropped): a caller
    /// that builds one table after another reuses the memory, where fresh memory comes
    /// page by page.
    pub(crate) fn build_in(
        leading: u32,
        n: usize,
        entry: impl Fn(usize) -> (K, u32),
        mut lines: Vec<CacheLine>,
    ) -> Bucketed<K> {
        let mut table = Bucketed {
            leading: leading.min(32),
            lines: Column::Owned(Vec::new()),
            entries: 0,
            floor: 0,
            tail: Vec::new(),
            ready: None,
            _key: std::marker::PhantomData,
        };
        // Ordinary pages, filled value by value: a table built on open is written once in
        // order, and on the machine measured, freshly zeroed huge pages for all of them
        // made reopens alternate between 1.7 and 3.1 s. (A table grown during inserts
        // takes huge pages: see `Column::growable`.)
        lines.clear();
        lines.resize(lines_for(n as f64 / BUILD_LOAD), CacheLine::default());
        table.lines = Column::Owned(lines);
        table.place_all((0..n).map(|i| {
            let (key, id) = entry(i);
            (fragment(key), id)
        }));
        table
    }

    /// Entries held, in the table and its tail (expired ones included until dropped).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        (self.entries + tail_entries(&self.tail)) as usize
    }

    /// Adds a layer to the table's tail holding the `n` entries `entry(0)`, ...,
    /// `entry(n - 1)`: entries probes find, kept apart from the lines until
    /// [`Bucketed::fold`]. The layer is built into the memory of `lines` (see
    /// [`Bucketed::build_in`]).
    pub(crate) fn add_tail(
        &mut self,
        n: usize,
        entry: impl Fn(usize) -> (K, u32),
        lines: Vec<CacheLine>,
    ) {
        if n > 0 {
            let layer = Bucketed::build_in(self.leading, n, entry, lines);
            self.tail.push(std::sync::Arc::new(layer));
        }
    }

    /// Adds `layer` (a table of the same leading bits, with no tail of its own) to the
    /// table's tail.
    pub(crate) fn add_tail_layer(&mut self, layer: Bucketed<K>) {
        debug_assert!(layer.tail.is_empty() && layer.leading == self.leading);
        self.tail.push(std::sync::Arc::new(layer));
    }

    /// Whether the table has a tail not yet folded in.
    pub(crate) fn has_tail(&self) -> bool {
        !self.tail.is_empty()
    }

    /// Layers in the table's tail.
    #[cfg(test)]
    pub(crate) fn tail_layers(&self) -> usize {
        self.tail.len()
    }

    /// Folds the tail into the lines. Entries of ids below `floor` may be dropped on the
    /// way, as a growth drops them.
    pub(crate) fn fold(&mut self, floor: u32) {
        let tail = std::mem::take(&mut self.tail);
        if !tail.is_empty() {
            self.place_tail(&tail, floor);
        }
    }

    /// Places every entry of the layers of `tail` into the lines: first grown into fresh
    /// memory if the entries need room, else moved into memory of their own (one copy,
    /// cheaper than a page copy at the first write to each page: see [`Column::own`]).
    pub(super) fn place_tail(&mut self, tail: &[std::sync::Arc<Bucketed<K>>], floor: u32) {
        let more = tail_entries(tail);
        if more as usize > self.room() {
            self.replace_into(
                lines_for((self.entries + more) as f64 / BUILD_LOAD),
                floor,
                false,
            );
        } else {
            self.lines.own();
        }
        for layer in tail {
            let entries = layer
                .lines
                .iter()
                .flat_map(|line| line.fragments.iter().zip(&line.tags))
                .filter(|&(_, &tag)| tag > floor);
            self.place_all(entries.map(|(&f, &tag)| (f, tag - 1)));
        }
    }

    /// Lines the table holds (its tail apart).
    pub(crate) fn line_count(&self) -> usize {
        self.lines.len()
    }

    /// Copies the lines into `out` (its earlier contents dropped) and returns the table's
    /// shape and tail: what a snapshot takes under the index's lock. The copy is a table of
    /// every entry the table held at that moment once [`Captured::merge`] has placed the
    /// tail into it, which needs no lock.
    pub(crate) fn capture(&self, out: &mut Vec<CacheLine>) -> Captured<K> {
        out.clear();
        out.extend_from_slice(&self.lines);
        Captured {
            shape: (self.leading, self.floor, self.entries),
            tail: self.tail.clone(),
        }
    }

    /// Entries the table takes before it grows.
    pub(crate) fn room(&self) -> usize {
        self.takes().saturating_sub(self.entries as usize)
    }

    /// Entries the table holds when it is full and grows (its slots at [`MAX_LOAD`]).
    pub(crate) fn takes(&self) -> usize {
        ((self.lines.len() * SLOTS) as f64 * MAX_LOAD) as usize
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
        let lines = self.lines_for_live(live, growth);
        let old = self.lines.len();
        if lines > old && self.lines.grow_in_place(lines) {
            self.replace_in_place(old, floor);
            #[cfg(test)]
            GROWN_IN_PLACE.with(|n| n.set(n.get() + 1));
            // Room for the next growth too, if the map has too little (it moves if it
            // must, now, under the same lock as the growth).
            let next = (lines as f64 * GROWTH) as usize + 2;
            if self.lines.capacity() < next {
                self.lines.make_room(room_after(lines));
            }
        } else {
            self.replace_into(lines, floor, false);
        }
    }

    /// Re-places every entry of an id from `floor` on, after the lines grew in place from
    /// `old` lines (the new ones zero): the growth takes only the new lines' memory, where
    /// a growth into new lines takes theirs and the old lines' together, and frees the old
    /// (a 10 M bulk load faulted in and zeroed several times its tables' final memory that
    /// way).
    ///
    /// A home only moves up when the lines grow (it scales with the line count), so the
    /// old lines are taken from the last to the first: each is emptied, then its entries
    /// are placed from their new home on, among lines that all hold the new table's
    /// entries alone. An entry whose new home is below the line it came from (one pushed
    /// far past its home), or whose run of full lines reaches the end, waits in a list and
    /// is placed once every old line is emptied, wrapping round as an insert does. Every
    /// entry then sits in the first line with a free slot from its home on at the time it
    /// was placed, and lines only fill, so a probe finds it as before.
    fn replace_in_place(&mut self, old: usize, floor: u32) {
        let floor = floor.max(self.floor);
        self.floor = floor;
        self.entries = 0;
        let count = self.lines.len();
        let mut waiting: Vec<(u32, u32)> = Vec::new();
        for at in (0..old).rev() {
            let line = std::mem::take(&mut self.lines[at]);
            for (&f, &tag) in line.fragments.iter().zip(&line.tags) {
                if tag <= floor {
                    // Free (0), or expired.
                    continue;
                }
                let home = self.home(f);
                if home < at || !self.place_before(f, home, tag - 1, count) {
                    waiting.push((f, tag - 1));
                }
            }
        }
        for (f, id) in waiting {
            let home = self.home(f);
            self.place(f, home, id, 0);
        }
    }

    /// Puts an entry in the first line from `home` on with a free slot, if there is one
    /// below `end`; false if not.
    #[inline(always)]
    fn place_before(&mut self, fragment: u32, home: usize, id: u32, end: usize) -> bool {
        for at in home..end {
            let line = &mut self.lines[at];
            if let Some(slot) = line.tags.iter().position(|&tag| tag == 0) {
                line.fragments[slot] = fragment;
                line.tags[slot] = id + 1;
                self.entries += 1;
                return true;
            }
        }
        false
    }

    /// The lines a re-placement of `live` entries takes: as many as now, or `growth` times
    /// more if the entries need them (and at least one line).
    fn lines_for_live(&self, live: usize, growth: f64) -> usize {
        let capacity = self.lines.len() * SLOTS;
        if (live + 1) as f64 <= capacity as f64 * MAX_LOAD / GROWTH {
            self.lines.len()
        } else {
            lines_for(((live + 1) as f64 * growth / MAX_LOAD).max(capacity as f64 * growth))
        }
    }

    /// The lines the table's next growth takes, when it is near (its room an eighth of
    /// what it takes, or less: at a load of 0.7), the table has at least [`PREPARE_LINES`]
    /// lines and no tail, no memory is ready for it yet, and no id expired since its last
    /// re-placement (`floor`, the lowest live id, is not above the table's): with expired
    /// entries to drop, the re-placement may keep the table's size, and memory made ready
    /// for a growth would be taken for nothing. Memory backed ahead of a growth (the pages
    /// past the lines of a table that grows in place, [`Bucketed::room_for`]; new lines
    /// zeroed, [`Bucketed::offer`]), by a thread other than the inserting one, takes
    /// the page faults of the new memory off the insert that grows the table: zeroing fresh
    /// pages was a large share of the inserting thread's time in a 10 M bulk load
    /// (CHANGELOG.md, benchmark history, note 4).
    pub(crate) fn next_growth(&self, floor: u32) -> Option<usize> {
        let takes = (self.lines.len() * SLOTS) as f64 * MAX_LOAD;
        let near = (self.room() as f64) <= takes / 8.0;
        let plain = self.ready.is_none() && self.tail.is_empty() && floor <= self.floor;
        if !(near && plain && self.lines.len() >= PREPARE_LINES) {
            return None;
        }
        let lines = self.lines_for_live(self.entries as usize + self.room(), GROWTH);
        (self.lines.held() < lines).then_some(lines)
    }

    /// What backs the lines of the next growth ahead of it, given the lines
    /// [`Bucketed::next_growth`] says: the pages past the lines, for a table that grows in
    /// place (its map first made to hold them: see [`Column::room`]); `None` when the
    /// table grows into new lines instead, to be offered ([`Bucketed::offer`]).
    pub(crate) fn room_for(&mut self, lines: usize) -> Option<Option<Room>> {
        matches!(self.lines, Column::Grown { .. }).then(|| self.lines.room(lines))
    }

    /// Records that the pages of the next growth's `lines` are backed (see
    /// [`Bucketed::room_for`]).
    pub(crate) fn backed_to(&mut self, lines: usize) {
        self.lines.backed_to(lines);
    }

    /// Keeps `lines` (zeroed) for the next growth, if it is the size
    /// [`Bucketed::next_growth`] says for `floor`; else gives them back.
    pub(crate) fn offer(
        &mut self,
        lines: Column<CacheLine>,
        floor: u32,
    ) -> Option<Column<CacheLine>> {
        if self.next_growth(floor) != Some(lines.len()) {
            return Some(lines);
        }
        self.ready = Some(lines);
        None
    }

    /// Re-places every entry of an id from `floor` on into `lines` zeroed lines, first
    /// faulted in if `populate` (see [`Column::populate`]).
    fn replace_into(&mut self, lines: usize, floor: u32, populate: bool) {
        let mut fresh = match self.ready.take() {
            Some(ready) if ready.len() == lines => ready,
            _ => fresh_lines(lines),
        };
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
        for layer in &self.tail {
            layer.prefetch(key);
        }
    }

    /// Pushes `(id, distance)` for every entry whose top `leading` bits equal `key`'s and
    /// whose fragment is within `k` bits of `key`'s (the distance over the fragment's 32
    /// bits: the whole key's, for a 32-bit key, else a lower bound of it).
    pub(crate) fn probe(&self, key: K, k: u32, out: &mut Vec<(u32, u32)>) {
        self.probe_lines(key, k, out);
        for layer in &self.tail {
            layer.probe_lines(key, k, out);
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
        let ready = self
            .ready
            .as_ref()
            .map_or(0, |r| std::mem::size_of_val::<[CacheLine]>(r));
        self.lines.held() * std::mem::size_of::<CacheLine>()
            + ready
            + self.tail.iter().map(|t| t.bytes()).sum::<usize>()
    }

    /// The table's shape and lines (its tail left out): what [`Bucketed::from_parts`]
    /// takes back.
    pub(crate) fn into_parts(self) -> (TableShape, Column<CacheLine>) {
        ((self.leading, self.floor, self.entries), self.lines)
    }

    /// A table from the parts a snapshot stores (see [`Bucketed::capture`]), checked for
    /// what can be checked cheaply: the shape fits the lines. (Whether each entry sits where
    /// a probe looks is not checked here: the snapshot's checksum stands for that.)
    pub(crate) fn from_parts(
        (leading, floor, entries): TableShape,
        lines: Column<CacheLine>,
    ) -> Option<Bucketed<K>> {
        let capacity = (lines.len() * SLOTS) as u64;
        (leading <= 32 && !lines.is_empty() && entries < capacity).then_some(Bucketed {
            leading,
            lines,
            entries,
            floor,
            tail: Vec::new(),
            ready: None,
            _key: std::marker::PhantomData,
        })
    }
}

/// Entries held in the layers of a tail.
fn tail_entries<K: Key>(tail: &[std::sync::Arc<Bucketed<K>>]) -> u64 {
    tail.iter().map(|layer| layer.entries).sum()
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
