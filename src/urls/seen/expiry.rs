//! Time: the slices of a filter that forgets, when a URL comes due again, and the sweep
//! of generations past the interval.

use super::*;

impl SeenUrls {
    /// The time on the filter's clock (seconds since the Unix epoch).
    pub fn now(&self) -> u64 {
        self.clock.now()
    }

    /// The time slice that new URLs go into now (0 for a filter that never forgets).
    pub(super) fn current_slice(&self) -> u64 {
        match self.config.slice_ms() {
            Some(ms) => self.clock.now_ms() / ms,
            None => 0,
        }
    }

    /// The oldest slice still live when `now` is the current one.
    pub(super) fn live_from(&self, now: u64) -> u64 {
        match self.config.expire_after {
            Some(_) => now.saturating_sub(u64::from(self.config.generations)),
            None => 0,
        }
    }

    /// When a URL recorded at `recorded_at` (seconds since the epoch) comes due again, in
    /// seconds, rounded up: see [`SeenUrls::due_at_ms`]. `None` if it never does.
    pub fn due_at(&self, recorded_at: u64) -> Option<u64> {
        self.due_at_ms(recorded_at.saturating_mul(1000))
            .map(|ms| ms.div_ceil(1000))
    }

    /// When a URL recorded at `recorded_at_ms` (milliseconds since the epoch) comes due
    /// again: the start of the first slice in which its generation is no longer live,
    /// between the interval and one slice after it. `None` if it never does.
    pub fn due_at_ms(&self, recorded_at_ms: u64) -> Option<u64> {
        let ms = self.config.slice_ms()?;
        Some((recorded_at_ms / ms + u64::from(self.config.generations) + 1) * ms)
    }

    /// Drops the generations that are no longer live at slice `now`, counting their URLs
    /// as expired.
    pub(super) fn drop_expired(&self, generations: &mut Vec<Generation>, now: u64) {
        let from = self.live_from(now);
        let dead = generations.iter().take_while(|g| g.slice < from).count();
        for generation in generations.drain(..dead) {
            self.expired
                .fetch_add(generation.count(), Ordering::Relaxed);
        }
    }

    /// One bounded step of forgetting: drops the generations that are no longer live from
    /// memory, and deletes at most `most` of their URLs from the confirmation store.
    /// Returns the URLs deleted from the store. URLs of an expired generation are new again
    /// at once, swept or not; the sweep only frees memory and disk. A filter that never
    /// forgets does nothing.
    pub fn sweep(&self, most: usize) -> Result<usize, SeenError> {
        if self.config.expire_after.is_none() {
            return Ok(0);
        }
        let now = self.current_slice();
        self.drop_expired(&mut write(&self.generations), now);
        let Some(store) = &self.confirm else {
            return Ok(0);
        };
        let end = self.live_from(now).to_be_bytes();
        let error = |source| SeenError::Store {
            path: store.path.clone(),
            source: crate::db::error(source),
        };
        let mut batch = sled::Batch::default();
        let mut deleted = 0;
        for item in store.db.range(..end.as_slice()).keys().take(most) {
            batch.remove(item.map_err(error)?);
            deleted += 1;
        }
        store.db.apply_batch(batch).map_err(error)?;
        Ok(deleted)
    }
}
