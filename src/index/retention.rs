//! The retention window: which documents are still candidates, and the sweep that drops
//! the expired ones from memory and, once a manifest records the floor, from sled.

use super::*;

/// What one step of [`SimhashIndex::sweep`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sweep {
    /// Documents that fell out of the window and were removed from memory.
    pub expired: usize,
    /// Chunks of expired documents deleted from sled.
    pub chunks_deleted: usize,
}

/// The figures of a retention window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RetentionStats {
    /// The window in seconds, if any.
    pub window_secs: Option<u64>,
    /// When the oldest document still held was stored (seconds since the epoch).
    pub oldest_live: Option<u64>,
    /// Documents expired since the index was created.
    pub expired: u64,
    /// Documents expired since it was opened.
    pub expired_since_open: u64,
}

impl SimhashIndex {
    /// The retention window, if any.
    pub fn retention(&self) -> Option<std::time::Duration> {
        self.retention.map(std::time::Duration::from_secs)
    }

    /// The figures of retention: window, oldest live document, expired documents.
    pub fn retention_stats(&self) -> RetentionStats {
        let memory = self.read();
        RetentionStats {
            window_secs: self.retention,
            oldest_live: memory.docs.front().map(|d| u64::from(d.at)),
            expired: memory.base,
            expired_since_open: self.expired.load(Ordering::Relaxed),
        }
    }

    /// The time (seconds) before which stored documents no longer match: 0 without
    /// retention. A document stored at `t` matches while `now < t + window`.
    pub(super) fn cutoff(&self) -> u32 {
        match self.retention {
            Some(window) => self
                .clock
                .now()
                .checked_sub(window)
                .map_or(0, |c| u32::try_from(c + 1).unwrap_or(u32::MAX)),
            None => 0,
        }
    }

    /// One bounded step of the retention sweep: removes from memory at most `most`
    /// documents that fell out of the window, then deletes from sled at most
    /// `most / DOC_CHUNK` chunks of each tree that the last checkpoint recorded as expired. Both steps run
    /// under short locks, so a crawl calling this in the background between pages is never
    /// held up for longer than one step. A document past the window stops matching at once,
    /// swept or not; a sweep only frees its memory and disk. Without retention it does
    /// nothing.
    pub fn sweep(&self, most: usize) -> Result<Sweep, IndexError> {
        let Some(_) = self.retention else {
            return Ok(Sweep::default());
        };
        let cutoff = self.cutoff();
        let expired = self
            .memory
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .expire(cutoff, most);
        self.expired.fetch_add(expired as u64, Ordering::Relaxed);
        let floor = self.durable_floor.load(Ordering::Relaxed);
        let chunks = self
            .store
            .delete_below(floor, (most / store::DOC_CHUNK as usize).max(1))
            .map_err(|e| self.store_error(e))?;
        Ok(Sweep {
            expired,
            chunks_deleted: chunks,
        })
    }
}
