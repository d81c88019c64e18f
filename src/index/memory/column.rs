//! The memory of a table, and all the index's unsafe code about it: lines as plain bytes, a
//! column in memory of its own or mapped from a snapshot, prefetch hints and huge-page
//! advice. Every `unsafe` block says why it is sound.
#![deny(clippy::undocumented_unsafe_blocks)]

use std::io;

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
pub(crate) struct Line {
    pub(super) fragments: [u32; SLOTS],
    pub(super) tags: [u32; SLOTS],
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
