//! The process's cache of line profiles ([`LineCache`]).

use xxhash_rust::xxh3::xxh3_64;

use super::{Line, LineKeys};

/// Slots of the process's [`LineCache`]: 4,096 lines (about 200 KB).
const LINE_CACHE_SLOTS: usize = 4096;

/// The profiles of the lines profiled lately, by the xxh3 of their bytes: what
/// a site repeats on its pages (rails, teasers, widgets, footers) is most of a page's text,
/// and a line of the same bytes has the same key, words, signature and ends, so it is
/// tokenised and signed once. Direct-mapped: a slot holds the last line that fell in it; a
/// slot's 64-bit hash must match, so a line is never given another line's profile but for a
/// collision of two 64-bit hashes.
pub(super) struct LineCache {
    slots: Box<[(u64, Line)]>,
}

/// The hash no line is cached under: an empty slot.
const EMPTY_SLOT: u64 = 0;

impl LineCache {
    pub(super) fn new() -> LineCache {
        let empty = Line {
            key: 0,
            words: 0,
            sig: 0,
            ends: 0,
        };
        LineCache {
            slots: vec![(EMPTY_SLOT, empty); LINE_CACHE_SLOTS].into_boxed_slice(),
        }
    }

    /// The hash of a line's bytes, never [`EMPTY_SLOT`].
    fn hash(line: &str) -> u64 {
        xxh3_64(line.as_bytes()) | 1
    }

    pub(super) fn get(&self, line: &str) -> Option<Line> {
        let hash = LineCache::hash(line);
        let (held, profile) = self.slots[hash as usize % LINE_CACHE_SLOTS];
        (held == hash).then_some(profile)
    }

    pub(super) fn put(&mut self, line: &str, profile: Line) {
        let hash = LineCache::hash(line);
        self.slots[hash as usize % LINE_CACHE_SLOTS] = (hash, profile);
    }
}

/// One [`LineCache`] for the whole process. A crawl decides its pages in one task, which
/// the runtime moves from thread to thread: with a cache a thread, a page's copy decided on
/// another thread than its original profiled its lines again (a quarter of the lines
/// profiled on the crawl benchmark). The lock is held for one slot's read or write, never
/// while a line is profiled, so callers deciding at once wait for each other only that long.
pub(super) static LINE_CACHE: std::sync::LazyLock<std::sync::Mutex<LineCache>> =
    std::sync::LazyLock::new(|| std::sync::Mutex::new(LineCache::new()));

/// `cache`, held (a cache is only ever written whole slots at a time, so one a panicking
/// thread held is still sound).
pub(super) fn held(cache: &std::sync::Mutex<LineCache>) -> std::sync::MutexGuard<'_, LineCache> {
    cache
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The key of `line` ([`block_key`](super::block_key)), read from the process's [`LineCache`] when the line
/// was profiled lately (a site's template line, dropped page after page), else computed
/// with `line_keys`. A trailing line end is not part of the line.
pub(crate) fn cached_key(line: &str, line_keys: &mut LineKeys) -> Option<u32> {
    let bare = line.strip_suffix('\n').unwrap_or(line);
    let bare = bare.strip_suffix('\r').unwrap_or(bare);
    let cached = held(&LINE_CACHE).get(bare);
    cached.map(|l| l.key).or_else(|| line_keys.key(line))
}
