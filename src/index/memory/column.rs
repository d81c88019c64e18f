//! The memory of a table, and all the index's unsafe code about it: lines as plain bytes, a
//! column in memory of its own or mapped from a snapshot, prefetch hints and huge-page
//! advice. Every `unsafe` block says why it is sound.
#![deny(clippy::undocumented_unsafe_blocks)]

use std::io;
use std::sync::Arc;

use super::SLOTS;

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
pub(crate) struct CacheLine {
    pub(super) fragments: [u32; SLOTS],
    pub(super) tags: [u32; SLOTS],
}

// SAFETY: sixteen u32 in a 64-byte struct aligned to 64: no padding, every bit pattern a value.
unsafe impl Plain for CacheLine {}

/// The bytes of an array of plain values.
pub(crate) fn plain_bytes<T: Plain>(values: &[T]) -> &[u8] {
    // SAFETY: `T` is `Plain`: no padding, every byte initialised.
    unsafe {
        std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values))
    }
}

/// An array of a table: in memory of its own (a vector, or zeroed pages mapped for a table
/// that grew, with room to grow in place), or a section of a snapshot file mapped privately
/// (an index opened from its snapshot reads its tables straight from the page cache, and a
/// page is copied into memory of its own only when an insert writes to it).
pub(crate) enum Column<T: Plain> {
    Owned(Vec<T>),
    /// A snapshot's section, mapped copy-on-write.
    Mapped {
        map: memmap2::MmapMut,
        /// Values.
        len: usize,
    },
    /// Zeroed anonymous memory of its own, mapped larger than the values it holds: the
    /// pages past them are address space only (no memory) until the column grows into
    /// them ([`Column::grow_in_place`]) or they are backed ahead ([`Room::back`]).
    Grown {
        /// Shared only while a [`Room`] of it is alive (backing pages past `len` on
        /// another thread).
        map: Arc<memmap2::MmapRaw>,
        /// Values.
        len: usize,
        /// Values from the start whose pages are backed, or will be once written: `len`,
        /// or more once the pages of a growth are backed ahead of it.
        backed: usize,
    },
}

/// Pages past a grown column's values, to be backed ahead of its growth by another thread
/// than the one that grows it (see [`Column::room`]). It keeps the map alive, so the
/// column may move on, grow or be dropped meanwhile.
pub(crate) struct Room {
    map: Arc<memmap2::MmapRaw>,
    /// Bytes from the start of the map: a page boundary.
    from: usize,
    /// Bytes from the start of the map, at most its length.
    to: usize,
}

impl Room {
    /// Backs the pages of the room (`MADV_POPULATE_WRITE`: the kernel faults them in as a
    /// write would and leaves what they hold as it is, so a column that grows into them
    /// meanwhile loses nothing). False if the kernel cannot (before Linux 5.14, or on
    /// other systems); the growth then faults them in itself.
    pub(crate) fn back(&self) -> bool {
        #[cfg(target_os = "linux")]
        {
            self.map
                .advise_range(
                    memmap2::Advice::PopulateWrite,
                    self.from,
                    self.to - self.from,
                )
                .is_ok()
        }
        #[cfg(not(target_os = "linux"))]
        {
            false
        }
    }
}

impl<T: Plain> Column<T> {
    /// `n` zeroed values in memory of their own, with no room past them (see
    /// [`Column::growable`]).
    #[cfg(test)]
    pub(crate) fn zeroed(n: usize) -> Column<T> {
        Column::growable(n, n)
    }

    /// `n` zeroed values in memory of their own, straight from the kernel, for a table
    /// that grows: nothing is written before the entries are (a vector of a type the
    /// allocator cannot zero is filled value by value first), and the memory may use huge
    /// pages. At 10 M documents, this cut the page faults of the deciding thread by more
    /// than half (`cargo bench --bench scale -- 10000000`; CHANGELOG.md, benchmark history). Memory the kernel cannot give is an
    /// allocation failure, as a vector's would be.
    ///
    /// The map has room for `capacity` values: address space only, the pages past `n`
    /// take no memory until they are written or backed (and are not reserved against
    /// swap), so that the column can grow to that many in place. Where the system will not
    /// map that much address space (strict overcommit), the room is `n` values.
    pub(crate) fn growable(n: usize, capacity: usize) -> Column<T> {
        let layout = std::alloc::Layout::array::<T>(n)
            .unwrap_or_else(|_| std::alloc::handle_alloc_error(std::alloc::Layout::new::<T>()));
        if layout.size() == 0 {
            return Column::Owned(Vec::new());
        }
        let anon = |bytes: usize| {
            memmap2::MmapOptions::new()
                .len(map_bytes(bytes))
                .no_reserve_swap()
                .map_anon()
        };
        let room = capacity
            .max(n)
            .checked_mul(std::mem::size_of::<T>())
            .and_then(|bytes| anon(bytes).ok());
        let map = room
            .map_or_else(|| anon(layout.size()), Ok)
            .unwrap_or_else(|_| std::alloc::handle_alloc_error(layout));
        advise_huge_pages(&map[..]);
        Column::Grown {
            map: Arc::new(map.into()),
            len: n,
            backed: 0,
        }
    }

    /// Values the map of a grown column has room for (for any other column, its length).
    pub(crate) fn capacity(&self) -> usize {
        match self {
            Column::Grown { map, .. } => map.len() / std::mem::size_of::<T>(),
            _ => self.len(),
        }
    }

    /// Lengthens a grown column to `n` values in place: the values it holds stay where they
    /// are, and the new ones are zero. Its map is lengthened first if it has too little
    /// room (and moved if the address space after it is taken: the kernel moves the pages,
    /// it does not copy them). False, with nothing changed, for any other column, a
    /// shorter `n`, or a map too short while a [`Room`] of it is alive.
    pub(crate) fn grow_in_place(&mut self, n: usize) -> bool {
        if !self.make_room(n) {
            return false;
        }
        if let Column::Grown { len, backed, .. } = self {
            *len = n;
            *backed = (*backed).max(n);
        }
        true
    }

    /// Makes a grown column's map hold at least `n` values (see
    /// [`Column::grow_in_place`]), keeping its length; false if it cannot.
    pub(crate) fn make_room(&mut self, n: usize) -> bool {
        let Column::Grown { map, len, .. } = self else {
            return false;
        };
        let Some(bytes) = n.checked_mul(std::mem::size_of::<T>()) else {
            return false;
        };
        if n < *len {
            return false;
        }
        if bytes <= map.len() {
            return true;
        }
        let Some(raw) = Arc::get_mut(map) else {
            return false;
        };
        #[cfg(target_os = "linux")]
        {
            // SAFETY: an anonymous map has no file to run past; the map is not shared
            // (`get_mut`) and no reference into it outlives this borrow of the column, so
            // nothing points at the old addresses if the kernel moves it.
            let remapped = unsafe {
                raw.remap(
                    map_bytes(bytes),
                    memmap2::RemapOptions::new().may_move(true),
                )
            };
            if remapped.is_err() {
                return false;
            }
            advise_huge_range(raw.as_ptr() as usize, raw.len());
            true
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = raw;
            false
        }
    }

    /// The pages a grown column would grow into up to `n` values and that are not backed
    /// yet, its map first made to hold them if it can be; `None` for any other column, or
    /// when there is nothing to back.
    pub(crate) fn room(&mut self, n: usize) -> Option<Room> {
        const PAGE: usize = 4096;
        if n <= self.held() || !self.make_room(n) {
            return None;
        }
        let Column::Grown { map, backed, .. } = self else {
            return None;
        };
        let size = std::mem::size_of::<T>();
        let from = (*backed * size).next_multiple_of(PAGE);
        let to = (n * size).min(map.len());
        (from < to).then(|| Room {
            map: Arc::clone(map),
            from,
            to,
        })
    }

    /// Records that the pages of a grown column up to `n` values are backed (after
    /// [`Room::back`] of its room up to `n`).
    pub(crate) fn backed_to(&mut self, n: usize) {
        if let Column::Grown { map, backed, .. } = self {
            *backed = (*backed).max(n.min(map.len() / std::mem::size_of::<T>()));
        }
    }

    /// Values from the start whose pages are backed or will be once written: the length,
    /// or more for a grown column backed ahead of its growth.
    pub(crate) fn held(&self) -> usize {
        match self {
            Column::Grown { len, backed, .. } => (*len).max(*backed),
            _ => self.len(),
        }
    }

    /// Faults in every page of zeroed memory of its own now (see [`Column::growable`]),
    /// rather than one at a time at the first insert that lands on it: the memory of a
    /// table sized ahead (`dedup.expected_pages`) is taken when the index opens. At 10 M
    /// documents, the faults left to the inserts held some of them for tens of
    /// milliseconds each (a tenth of the scale bench's decision loop).
    pub(crate) fn populate(&mut self) {
        const PAGE: usize = 4096;
        if let Column::Grown { len, backed, .. } = self {
            *backed = (*backed).max(*len);
            let bytes = std::mem::size_of_val::<[T]>(self);
            let start: *mut u8 = self.as_mut_ptr().cast();
            for offset in (0..bytes).step_by(PAGE) {
                // A write (of the byte that is there) makes the kernel back the page; a
                // read alone would map the shared zero page instead.
                // SAFETY: `offset` lies inside the values, borrowed mutably here; the
                // volatile pair keeps the write from being dropped as a no-op.
                unsafe {
                    let byte = start.add(offset);
                    byte.write_volatile(byte.read_volatile());
                }
            }
        }
    }

    /// Moves an array mapped from a file into memory of its own, in one copy: cheaper,
    /// before many scattered writes, than a fault and a page copy at the first write to
    /// each page.
    pub(crate) fn own(&mut self) {
        if let Column::Mapped { .. } = self {
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
        // The range is checked against the file's length first.
        let size = file.metadata()?.len();
        if offset
            .checked_add(bytes as u64)
            .is_none_or(|end| end > size)
        {
            return Err(io::Error::other("section past the end of the file"));
        }
        // SAFETY: the map is private (copy-on-write), so nothing written through it reaches
        // the file; the file is not changed by others while the index is open (see
        // `super::snapshot`), and the range lies inside it (checked above).
        let map = unsafe {
            memmap2::MmapOptions::new()
                .offset(offset)
                .len(bytes)
                .map_copy(file)?
        };
        if map.as_ptr() as usize % std::mem::align_of::<T>() != 0 {
            return Err(io::Error::other("section not aligned"));
        }
        Ok(Column::Mapped { map, len })
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
            Column::Mapped { map, len } => unsafe {
                std::slice::from_raw_parts(map.as_ptr().cast::<T>(), *len)
            },
            // SAFETY: the map holds at least `len` values (`growable` and `grow_in_place`
            // keep it so), starts on a page boundary and lives as long as this column; only
            // this column reads or writes its memory (a `Room` only advises the kernel
            // about pages past `len`).
            Column::Grown { map, len, .. } => unsafe {
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
            Column::Mapped { map, len } => unsafe {
                std::slice::from_raw_parts_mut(map.as_mut_ptr().cast::<T>(), *len)
            },
            // SAFETY: as for `deref`; `&mut self` is the only way to the values, so the
            // slice is not aliased.
            Column::Grown { map, len, .. } => unsafe {
                std::slice::from_raw_parts_mut(map.as_mut_ptr().cast::<T>(), *len)
            },
        }
    }
}

impl<T: Plain> std::fmt::Debug for Column<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Column::Owned(values) => write!(f, "Owned({} values)", values.len()),
            Column::Mapped { len, .. } => write!(f, "Mapped({len} values)"),
            Column::Grown { map, len, backed } => write!(
                f,
                "Grown({len} values, {backed} backed, room for {})",
                map.len() / std::mem::size_of::<T>()
            ),
        }
    }
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
pub(super) fn advise_huge_pages<T>(values: &[T]) {
    advise_huge_range(values.as_ptr() as usize, std::mem::size_of_val(values));
}

/// The length to map for `bytes` bytes: whole huge pages from 2 MiB on, so that the kernel
/// places the map on a huge-page boundary (Linux does for anonymous maps of such lengths)
/// and a map it moves to grow keeps its huge pages whole.
fn map_bytes(bytes: usize) -> usize {
    const HUGE: usize = 2 << 20;
    if bytes < HUGE {
        bytes
    } else {
        bytes.next_multiple_of(HUGE)
    }
}

/// [`advise_huge_pages`] for `bytes` bytes from address `start`, inside one live mapping.
fn advise_huge_range(start: usize, bytes: usize) {
    const HUGE: usize = 2 << 20;
    if bytes < HUGE {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let aligned = start.next_multiple_of(PAGE);
        let len = (start + bytes - aligned) / PAGE * PAGE;
        // SAFETY: the range lies inside one live mapping (rounded inwards to whole pages),
        // and MADV_HUGEPAGE only changes how the kernel backs it, never its contents.
        unsafe {
            libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
        }
    }
}
