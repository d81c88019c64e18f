//! The in-memory form of one permuted table: entries bucketed by the top bits of their key.
//!
//! All entries sit in two flat arrays (keys and ids), grouped by bucket (the top `bits` bits
//! of the key) with an offset array, built by a counting sort in O(n). A query looks at one
//! bucket, since the bucket bits are part of the prefix a near-duplicate must share. New
//! entries go to a list of recent entries first, chained from a direct-mapped array of
//! heads (about one per recent entry a table may hold, chosen by the top bits of the key), and are
//! merged into the arrays in one sequential pass when they pass a quarter of the table, so
//! an insert costs amortised O(1). Every step of a probe is an array index computed from the
//! key, so the probes of all tables can ask for their cache lines before any of them waits.

/// Recent entries are merged into the arrays once there are more than this many and more
/// than a quarter of the arrays.
const MIN_MERGE: usize = 4096;

/// A table key: a permuted simhash (64 bits) or a band key (32 bits). Every operation on
/// keys works on the key as the top bits of a 64-bit word, so a 32-bit key buckets, masks
/// and compares as a 64-bit one whose low half is zero; the arrays hold the narrow form.
pub(crate) trait Key: Plain + Default + Send + Sync + std::fmt::Debug {
    /// The key in the top bits of a 64-bit word.
    fn wide(self) -> u64;
    /// The key of a word made by [`Key::wide`].
    fn narrow(wide: u64) -> Self;
}

impl Key for u64 {
    fn wide(self) -> u64 {
        self
    }
    fn narrow(wide: u64) -> Self {
        wide
    }
}

impl Key for u32 {
    fn wide(self) -> u64 {
        u64::from(self) << 32
    }
    fn narrow(wide: u64) -> Self {
        (wide >> 32) as u32
    }
}

/// A plain integer type: every bit pattern is a value, there is no padding, and its bytes
/// are its value in the machine's byte order, so that an array of it can be written out
/// as bytes and read back from a mapped file (see `super::snapshot`).
///
/// # Safety
/// Only for the primitive integers, which meet all of the above.
pub(crate) unsafe trait Plain: Copy + 'static {}

// SAFETY: primitive integers.
unsafe impl Plain for u32 {}
// SAFETY: primitive integers.
unsafe impl Plain for u64 {}

/// The bytes of an array of plain integers.
pub(crate) fn plain_bytes<T: Plain>(values: &[T]) -> &[u8] {
    // SAFETY: `T` is a primitive integer (`Plain`): no padding, every byte initialised.
    unsafe {
        std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values))
    }
}

/// One array of a table: in memory of its own, or a section of a snapshot file mapped
/// read-only (an index opened from its snapshot reads its tables straight from the page
/// cache, and an array is copied into memory of its own only when a merge rewrites it).
pub(crate) enum Column<T: Plain> {
    Owned(Vec<T>),
    Mapped {
        map: std::sync::Arc<memmap2::Mmap>,
        /// Byte offset of the first value in the map (a multiple of `T`'s alignment).
        start: usize,
        /// Values.
        len: usize,
    },
}

impl<T: Plain> Column<T> {
    /// `len` values at byte `start` of `map`, or `None` if they do not fit or are not
    /// aligned for `T`.
    pub(crate) fn mapped(
        map: &std::sync::Arc<memmap2::Mmap>,
        start: usize,
        len: usize,
    ) -> Option<Column<T>> {
        let end = len
            .checked_mul(std::mem::size_of::<T>())
            .and_then(|bytes| bytes.checked_add(start))?;
        let aligned = (map.as_ptr() as usize + start) % std::mem::align_of::<T>() == 0;
        (end <= map.len() && aligned).then(|| Column::Mapped {
            map: map.clone(),
            start,
            len,
        })
    }

    /// The values, as a vector of their own (copied out of the map if mapped).
    pub(crate) fn to_mut(&mut self) -> &mut Vec<T> {
        if let Column::Mapped { .. } = self {
            *self = Column::Owned(self.to_vec());
        }
        match self {
            Column::Owned(values) => values,
            Column::Mapped { .. } => unreachable!("made owned just above"),
        }
    }

    /// Takes the values out, leaving an empty column.
    pub(crate) fn take(&mut self) -> Vec<T> {
        match std::mem::take(self) {
            Column::Owned(values) => values,
            mapped => mapped.to_vec(),
        }
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
            // SAFETY: `mapped` checked that the range lies inside the map and is aligned
            // for `T`; `T` is a plain integer, for which every bit pattern is a value; the
            // map is read-only and lives as long as this column holds its `Arc`.
            Column::Mapped { map, start, len } => unsafe {
                std::slice::from_raw_parts(map.as_ptr().add(*start).cast::<T>(), *len)
            },
        }
    }
}

impl<T: Plain> std::fmt::Debug for Column<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Column::Owned(values) => write!(f, "Owned({} values)", values.len()),
            Column::Mapped { len, .. } => write!(f, "Mapped({len} values)"),
        }
    }
}

/// What a table's arrays need beside them: (bucket bits, leading bits, id floor).
pub(crate) type TableShape = (u32, u32, u32);

/// A table's arrays: offsets, keys, ids.
pub(crate) type TableArrays<'a, K> = (&'a [u32], &'a [K], &'a [u32]);

/// A recent entry: key, id, and the index of the previous entry with the same head.
#[derive(Debug, Clone, Copy)]
struct RecentEntry<K> {
    key: K,
    id: u32,
    next: u32,
}

const NO_ENTRY: u32 = u32::MAX;

/// One table's entries: permuted fingerprints (keys) and document ids.
#[derive(Debug, Default)]
pub(crate) struct Bucketed<K: Key = u64> {
    /// Bits of the key that choose the bucket (at most the table's leading bits).
    bits: u32,
    /// Leading bits that a near-duplicate shares with the key in this table.
    leading: u32,
    offsets: Column<u32>,
    keys: Column<K>,
    ids: Column<u32>,
    /// Bits of the key that choose a head of `heads`.
    head_bits: u32,
    /// For each head, the index in `recent` of its newest entry.
    heads: Vec<u32>,
    /// Entries not yet merged, chained from `heads` (no allocation per entry).
    recent: Vec<RecentEntry<K>>,
    /// The id floor the arrays were last filtered at: entries of ids below a higher floor
    /// (expired documents) are dropped at the next merge.
    floor: u32,
}

impl<K: Key> Bucketed<K> {
    /// A table holding `keys[i]` with id `ids[i]`.
    pub(crate) fn build(leading: u32, keys: Vec<K>, ids: Vec<u32>) -> Bucketed<K> {
        Bucketed::build_from(
            leading,
            keys.len(),
            |i| (keys[i], ids[i]),
            &mut Scratch::default(),
        )
    }

    /// A table holding the `n` entries `entry(0)`, ..., `entry(n - 1)`, each a (key, id):
    /// called twice per entry, so that a key computed from something else (a permutation of
    /// a stored fingerprint) never needs an array of its own.
    pub(crate) fn build_from(
        leading: u32,
        n: usize,
        entry: impl Fn(usize) -> (K, u32),
        scratch: &mut Scratch<K>,
    ) -> Bucketed<K> {
        let bits = bucket_bits(n, leading);
        let (keys, ids, offsets) = bucket_sort(n, bits, entry, scratch);
        Bucketed {
            bits,
            leading,
            offsets: Column::Owned(offsets),
            keys: Column::Owned(keys),
            ids: Column::Owned(ids),
            head_bits: head_bits(n, leading),
            // Allocated by the first insert: an index opened only to be read needs none.
            heads: Vec::new(),
            recent: Vec::new(),
            floor: 0,
        }
    }

    /// The parts a snapshot stores: (bucket bits, leading bits, id floor) and the three
    /// arrays (offsets, keys, ids). Recent entries must have been merged first
    /// ([`Bucketed::merge_recent`]).
    pub(crate) fn parts(&self) -> (TableShape, TableArrays<'_, K>) {
        debug_assert!(self.recent.is_empty());
        (
            (self.bits, self.leading, self.floor),
            (&self.offsets, &self.keys, &self.ids),
        )
    }

    /// A table from the parts of [`Bucketed::parts`], checked for consistency: the offsets
    /// rise from 0 to the number of entries, one more of them than buckets. (Whether each
    /// key sits in its bucket is not checked here: the snapshot's checksum stands for that.)
    pub(crate) fn from_parts(
        (bits, leading, floor): TableShape,
        offsets: Column<u32>,
        keys: Column<K>,
        ids: Column<u32>,
    ) -> Option<Bucketed<K>> {
        let consistent = (1..=26).contains(&bits)
            && leading <= 64
            && keys.len() == ids.len()
            && offsets.len() == (1usize << bits) + 1
            && offsets.first() == Some(&0)
            && offsets.last().map(|&o| o as usize) == Some(keys.len())
            && offsets.windows(2).all(|w| w[0] <= w[1]);
        consistent.then(|| Bucketed {
            bits,
            leading,
            head_bits: head_bits(keys.len(), leading),
            offsets,
            keys,
            ids,
            heads: Vec::new(),
            recent: Vec::new(),
            floor,
        })
    }

    /// Moves the recent entries into the arrays now (before a snapshot is written).
    pub(crate) fn merge_recent(&mut self, floor: u32) {
        if !self.recent.is_empty() || floor > self.floor {
            self.merge(floor);
        }
    }

    /// Entries held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.keys.len() + self.recent.len()
    }

    /// Adds an entry; `floor` is the lowest id still live, and a merge that this insert
    /// sets off drops the entries below it.
    pub(crate) fn insert(&mut self, key: K, id: u32, floor: u32) {
        if self.heads.is_empty() {
            self.heads = vec![NO_ENTRY; 1 << self.head_bits];
        }
        let at = self.recent.len() as u32;
        let head = self.head(key);
        self.recent.push(RecentEntry {
            key,
            id,
            next: self.heads[head],
        });
        self.heads[head] = at;
        if self.recent.len() > MIN_MERGE.max(self.keys.len() / 4) {
            self.merge(floor);
        }
    }

    fn mask(&self) -> u64 {
        if self.leading == 0 {
            0
        } else {
            u64::MAX << (64 - self.leading)
        }
    }

    /// Moves the recent entries into the arrays. While the bucket count stays, one backward
    /// pass shifts every stored entry up by the number of recent entries in lower buckets
    /// (never over an entry not yet moved) and the recent entries fill the gaps: O(n)
    /// sequential work instead of a sort.
    /// When the floor has risen since the arrays were built, the merge is a rebuild without
    /// the entries below it (also O(n)).
    fn merge(&mut self, floor: u32) {
        let recent = std::mem::take(&mut self.recent);
        self.heads.fill(NO_ENTRY);
        let old = self.keys.len();
        let total = old + recent.len();
        let expired = floor > self.floor;
        if expired || bucket_bits(total, self.leading) != self.bits || self.offsets.is_empty() {
            let mut keys = self.keys.take();
            let mut ids = self.ids.take();
            keys.extend(recent.iter().map(|e| e.key));
            ids.extend(recent.iter().map(|e| e.id));
            if expired {
                let mut kept = 0;
                for i in 0..keys.len() {
                    if ids[i] >= floor {
                        keys[kept] = keys[i];
                        ids[kept] = ids[i];
                        kept += 1;
                    }
                }
                keys.truncate(kept);
                ids.truncate(kept);
            }
            let floor = floor.max(self.floor);
            *self = Bucketed::build(self.leading, keys, ids);
            self.floor = floor;
            return;
        }
        let buckets = 1usize << self.bits;
        let shift = 64 - self.bits;
        // below[b]: recent entries in buckets before b.
        let mut below = vec![0u32; buckets + 1];
        for entry in &recent {
            below[(entry.key.wide() >> shift) as usize + 1] += 1;
        }
        for b in 0..buckets {
            below[b + 1] += below[b];
        }
        let keys = self.keys.to_mut();
        let ids = self.ids.to_mut();
        keys.resize(total, K::default());
        ids.resize(total, 0);
        for i in (0..old).rev() {
            let to = i + below[(keys[i].wide() >> shift) as usize] as usize;
            keys[to] = keys[i];
            ids[to] = ids[i];
        }
        // Each bucket's recent entries go after its stored ones: from its old end, shifted.
        let offsets = self.offsets.to_mut();
        let mut cursor: Vec<u32> = (0..buckets).map(|b| offsets[b + 1] + below[b]).collect();
        for entry in &recent {
            let slot = &mut cursor[(entry.key.wide() >> shift) as usize];
            keys[*slot as usize] = entry.key;
            ids[*slot as usize] = entry.id;
            *slot += 1;
        }
        for (offset, shifted) in offsets.iter_mut().zip(&below) {
            *offset += shifted;
        }
    }

    /// The head of `heads` that chains `key`'s recent entries.
    fn head(&self, key: K) -> usize {
        key.wide().checked_shr(64 - self.head_bits).unwrap_or(0) as usize
    }

    /// The bucket `key` falls in, when the bucket bits are part of the shared prefix.
    fn bucket(&self, key: K) -> Option<usize> {
        (self.bits <= self.leading && !self.offsets.is_empty())
            .then(|| (key.wide() >> (64 - self.bits)) as usize)
    }

    /// Asks for the cache line of `key`'s bucket offsets (first step of a probe), so that
    /// the probes of all tables wait for memory at the same time rather than one by one.
    pub(crate) fn prefetch_offsets(&self, key: K) {
        if let Some(bucket) = self.bucket(key) {
            prefetch(&self.offsets[bucket]);
        }
        if let Some(head) = self.heads.get(self.head(key)) {
            prefetch(head);
        }
    }

    /// Asks for the first cache line of `key`'s bucket entries and of its newest recent
    /// entry (second step).
    pub(crate) fn prefetch_entries(&self, key: K) {
        if let Some(&at) = self.heads.get(self.head(key)) {
            if let Some(entry) = self.recent.get(at as usize) {
                prefetch(entry);
            }
        }
        if let Some(bucket) = self.bucket(key) {
            let start = self.offsets[bucket] as usize;
            if let (Some(k), Some(i)) = (self.keys.get(start), self.ids.get(start)) {
                prefetch(k);
                prefetch(i);
            }
        }
    }

    /// Pushes `(id, distance)` for every entry whose top `leading` bits equal `key`'s and
    /// whose key is within `k` bits of `key`.
    pub(crate) fn probe(&self, key: K, k: u32, out: &mut Vec<(u32, u32)>) {
        let mask = self.mask();
        let key = key.wide();
        let prefix = key & mask;
        let (start, end) = if self.bits <= self.leading {
            let bucket = (key >> (64 - self.bits)) as usize;
            (
                self.offsets[bucket] as usize,
                self.offsets[bucket + 1] as usize,
            )
        } else {
            // No shared prefix to choose a bucket by: every entry is a candidate.
            (0, self.keys.len())
        };
        for (&stored, &id) in self.keys[start..end].iter().zip(&self.ids[start..end]) {
            let stored = stored.wide();
            if stored & mask == prefix {
                let d = (stored ^ key).count_ones();
                if d <= k {
                    out.push((id, d));
                }
            }
        }
        let mut at = self
            .heads
            .get(self.head(K::narrow(key)))
            .copied()
            .unwrap_or(NO_ENTRY);
        while at != NO_ENTRY {
            let entry = self.recent[at as usize];
            let stored = entry.key.wide();
            if stored & mask == prefix {
                let d = (stored ^ key).count_ones();
                if d <= k {
                    out.push((entry.id, d));
                }
            }
            at = entry.next;
        }
    }

    /// Bytes of memory the arrays use.
    pub(crate) fn bytes(&self) -> usize {
        self.offsets.len() * 4
            + self.keys.len() * (std::mem::size_of::<K>() + 4)
            + self.recent.len() * std::mem::size_of::<RecentEntry<K>>()
            + self.heads.len() * 4
    }
}

/// A hint to load the cache line holding `value`; no effect on other targets.
#[inline(always)]
fn prefetch<T>(value: &T) {
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

/// `n` zeroed values in memory that the kernel may back with transparent huge pages.
///
/// For the big arrays a reopen fills first: the stored rows (read again by every table) and the
/// scatter pass's working arrays (4,096 output streams over 120 MB at 10 M documents: with
/// 4 KiB pages nearly every write misses the TLB, and the first touch of each page is a
/// fault). A zeroed vector this large comes straight from `mmap` and is not touched before
/// the advice, so the first write faults in 2 MiB at a time. The finished tables keep
/// ordinary pages: written once in order, they gain little, and on the machine measured,
/// freshly zeroed huge pages for all of them made reopens alternate between 1.7 and 3.1 s.
pub(crate) fn zeroed<T: Copy + Default>(n: usize) -> Vec<T> {
    let values = vec![T::default(); n];
    advise_huge_pages(&values);
    values
}

/// An empty vector with room for `n` values, in memory that may use huge pages (as
/// [`zeroed`], for a vector filled by pushing).
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

/// Bits of the heads of a table of `n` entries: about one head per recent entry it holds
/// before its next merge, never more head bits than leading bits.
fn head_bits(n: usize, leading: u32) -> u32 {
    let most_recent = MIN_MERGE.max(n / 4);
    (usize::BITS - 1 - most_recent.leading_zeros()).min(leading)
}

/// Entries per bucket the bucket bits aim at (between this and twice this): eight 8-byte
/// keys are one cache line, so a probe reads no more lines than with one entry per bucket,
/// while the offsets take half a byte per entry instead of four (at 10 M documents, 26
/// tables' offsets were 830 MB with two entries per bucket).
const ENTRIES_PER_BUCKET: usize = 8;

/// Bucket bits for `n` entries: about [`ENTRIES_PER_BUCKET`] entries per bucket, never more
/// bits than the leading bits a near-duplicate shares, at least 1 and at most 26.
fn bucket_bits(n: usize, leading: u32) -> u32 {
    let buckets = n / ENTRIES_PER_BUCKET;
    let wanted = (usize::BITS - buckets.leading_zeros())
        .saturating_sub(1)
        .max(1);
    wanted.min(leading).clamp(1, 26)
}

/// Bits of the first pass of [`bucket_sort`]: 4,096 output streams, few enough for the
/// write-combining buffers and caches to keep up.
const TOP_BITS: u32 = 12;

/// Working arrays of [`bucket_sort`], kept by a thread that builds several tables so that
/// only the first build pays for fresh pages.
pub(crate) struct Scratch<K = u64> {
    keys: Vec<K>,
    ids: Vec<u32>,
}

impl<K> Default for Scratch<K> {
    fn default() -> Self {
        Scratch {
            keys: Vec::new(),
            ids: Vec::new(),
        }
    }
}

/// Groups the `n` entries (key, id) by the top `bits` bits of the key and returns the keys,
/// the ids and the offset of every bucket (`2^bits + 1` offsets). One scatter pass over all
/// entries by the top [`TOP_BITS`] bits, then, when more bits are wanted, a counting sort of
/// each of those groups on its own, which stays in cache. (At 10 M entries and 23 bits this
/// took 0.36 s where three 8-bit LSD passes over the whole arrays took 0.50 s.)
fn bucket_sort<K: Key>(
    n: usize,
    bits: u32,
    entry: impl Fn(usize) -> (K, u32),
    scratch: &mut Scratch<K>,
) -> (Vec<K>, Vec<u32>, Vec<u32>) {
    let buckets = 1usize << bits;
    let top = bits.min(TOP_BITS);
    let low = bits - top;
    let top_shift = 64 - top;
    let mut starts = vec![0usize; (1usize << top) + 1];
    for i in 0..n {
        starts[(entry(i).0.wide() >> top_shift) as usize + 1] += 1;
    }
    for t in 0..(1usize << top) {
        starts[t + 1] += starts[t];
    }
    let mut keys_out = std::mem::take(&mut scratch.keys);
    let mut ids_out = std::mem::take(&mut scratch.ids);
    if keys_out.len() < n {
        keys_out = zeroed(n);
        ids_out = zeroed(n);
    }
    keys_out.truncate(n);
    ids_out.truncate(n);
    {
        let mut cursor = starts.clone();
        for i in 0..n {
            let (key, id) = entry(i);
            let slot = &mut cursor[(key.wide() >> top_shift) as usize];
            keys_out[*slot] = key;
            ids_out[*slot] = id;
            *slot += 1;
        }
    }
    if low == 0 {
        let offsets = starts.iter().map(|&s| s as u32).collect();
        return (keys_out, ids_out, offsets);
    }
    let shift = 64 - bits;
    let low_mask = (1u64 << low) - 1;
    let mut keys = vec![K::default(); n];
    let mut ids = vec![0u32; n];
    let mut offsets = vec![0u32; buckets + 1];
    let mut counts = vec![0usize; (1usize << low) + 1];
    for t in 0..(1usize << top) {
        let (start, end) = (starts[t], starts[t + 1]);
        counts.fill(0);
        for &key in &keys_out[start..end] {
            counts[((key.wide() >> shift) & low_mask) as usize + 1] += 1;
        }
        for d in 0..(1usize << low) {
            counts[d + 1] += counts[d];
            offsets[(t << low) + d] = (start + counts[d]) as u32;
        }
        for (&key, &id) in keys_out[start..end].iter().zip(&ids_out[start..end]) {
            let slot = &mut counts[((key.wide() >> shift) & low_mask) as usize];
            keys[start + *slot] = key;
            ids[start + *slot] = id;
            *slot += 1;
        }
    }
    offsets[buckets] = n as u32;
    scratch.keys = keys_out;
    scratch.ids = ids_out;
    (keys, ids, offsets)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every entry sits in the bucket of its top bits, and the arrays hold `want` exactly.
    fn assert_bucketed(table: &Bucketed, want: &[(u64, u32)]) {
        let shift = 64 - table.bits;
        assert_eq!(table.offsets.len(), (1 << table.bits) + 1);
        for b in 0..(1usize << table.bits) {
            let (start, end) = (table.offsets[b] as usize, table.offsets[b + 1] as usize);
            assert!(start <= end);
            assert!(
                table.keys[start..end]
                    .iter()
                    .all(|&k| (k >> shift) as usize == b)
            );
        }
        let mut got: Vec<(u64, u32)> = table
            .keys
            .iter()
            .copied()
            .zip(table.ids.iter().copied())
            .collect();
        let mut want = want.to_vec();
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want);
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

    #[test]
    fn merges_keep_every_entry_in_its_bucket() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        let entries: Vec<(u64, u32)> = (0..60_000).map(|i| (next(), i)).collect();
        let (keys, ids): (Vec<u64>, Vec<u32>) = entries[..20_000].iter().copied().unzip();
        let mut table = Bucketed::build(20, keys, ids);
        assert_bucketed(&table, &entries[..20_000]);
        let bits = table.bits;
        // 20,000 -> 26,000 keeps the bucket count: the merge shifts entries in place.
        for &(key, id) in &entries[20_000..26_000] {
            table.insert(key, id, 0);
        }
        assert_eq!(table.bits, bits);
        assert_eq!(table.recent.len(), 999, "one merge at 5,001 recent entries");
        table.merge(0);
        assert_bucketed(&table, &entries[..26_000]);
        // Up to 60,000 crosses a power of two: a full rebuild with more buckets.
        for &(key, id) in &entries[26_000..] {
            table.insert(key, id, 0);
        }
        table.merge(0);
        assert!(table.bits > bits);
        assert_bucketed(&table, &entries);
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
        assert_bucketed(&table, &entries[12_000..]);
        // A later merge at the same floor keeps everything.
        table.merge(12_000);
        assert_eq!(table.len(), 18_000);
    }

    #[test]
    fn probe_finds_exactly_the_entries_sharing_the_prefix_within_k() {
        let mut next = xorshift(0x1234_5678_9abc_def1u64);
        let leading = 12;
        let keys: Vec<u64> = (0..20_000).map(|_| next()).collect();
        let mut table = Bucketed::build(leading, keys[..15_000].to_vec(), (0..15_000).collect());
        for (i, &key) in keys.iter().enumerate().skip(15_000) {
            table.insert(key, i as u32, 0);
        }
        assert_eq!(table.len(), 20_000);
        for probe in keys.iter().step_by(97).map(|k| k ^ 0b1011) {
            let mut got = Vec::new();
            table.probe(probe, 3, &mut got);
            got.sort_unstable();
            let mask = u64::MAX << (64 - leading);
            let mut want: Vec<(u32, u32)> = keys
                .iter()
                .enumerate()
                .filter(|(_, k)| (*k & mask) == (probe & mask) && (*k ^ probe).count_ones() <= 3)
                .map(|(i, k)| (i as u32, (k ^ probe).count_ones()))
                .collect();
            want.sort_unstable();
            assert_eq!(got, want);
        }
    }
}
