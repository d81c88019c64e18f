//! How the in-memory tables grow: a group of tables at a time, each taken in turn by one
//! thread per core, and the memory of a growth made ready ahead of it (see `upkeep.rs`).

use std::collections::VecDeque;

use super::memory::{Bucketed, CacheLine, Column, Room};
use super::tables::Memory;

/// The tables grow in groups of one table per core, the groups spread over the last
/// 1/`GROWTH_SPREAD` of their fill (the first group when its tables' room is that share of
/// what they take, the last when they are full), so that each growth holds the index's
/// write lock for one group's re-placement rather than every table's. Every table takes
/// one entry per document, so grown at one insert they stopped every decision for the
/// whole re-placement, over a second at 10 M documents (`examples/decision_wait.rs`). A
/// table grows to 1.6 times its size either way; grown up to 3% early, it takes that
/// memory that much sooner.
pub(super) const GROWTH_SPREAD: usize = 32;

impl Memory {
    /// Grows the tables due to grow (see [`GROWTH_SPREAD`]), taken in turn by one thread
    /// per core, and sets the count at which to look again.
    pub(super) fn grow_due(&mut self, floor: u32) {
        let cores = cores();
        let groups = (self.tables.len() + self.bands.len())
            .div_ceil(cores)
            .max(1);
        // Table i is in group i / cores; the room at which a table of group g grows.
        let early = |i: usize, takes: usize| takes / GROWTH_SPREAD * (groups - i / cores) / groups;
        let due: Vec<TableMut<'_>> = (self.tables_mut().enumerate())
            .filter(|(i, job)| job.room() <= early(*i, job.takes()))
            .map(|(_, job)| job)
            .collect();
        in_turn(due, |job| job.grow(floor));
        let tables = (self.tables.iter()).map(|t| (t.room(), t.takes()));
        let bands = (self.bands.iter()).map(|t| (t.room(), t.takes()));
        let next = (tables.chain(bands).enumerate())
            .map(|(i, (room, takes))| room.saturating_sub(early(i, takes)))
            .min()
            .unwrap_or(0);
        self.growth_check = self.count() + next.max(1) as u64;
    }

    /// Makes room in every table for `documents` documents in all (ids from the floor
    /// on), the tables taken in turn by one thread per core: the tables of an index that
    /// expects that many never grow on the way (see `dedup.expected_pages`).
    pub(super) fn reserve(&mut self, documents: u64) {
        let held = self.docs.len() as u64;
        if documents <= held {
            return;
        }
        let floor = u32::try_from(self.base).unwrap_or(u32::MAX);
        in_turn(self.tables_mut().collect(), |job| match job {
            TableMut::Simhash(_, table) => table.reserve(documents, floor),
            TableMut::Band(_, table) => table.reserve(documents, floor),
        });
        // The rows too: a growing vector of rows faults in its new memory a small page at
        // a time (at 10 M documents, most of the deciding thread's page faults).
        if (self.docs.capacity() as u64) < documents {
            let mut docs = super::memory::with_capacity(documents as usize);
            docs.extend(self.docs.drain(..));
            self.docs = VecDeque::from(docs);
        }
    }

    /// The tables whose growth is near and has no lines ready (see
    /// [`Bucketed::next_growth`]): (table, as in [`Memory::offer`], lines it takes).
    pub(super) fn growths_near(&self) -> Vec<(usize, usize)> {
        let floor = u32::try_from(self.base).unwrap_or(u32::MAX);
        let tables = self.tables.iter().map(|t| t.next_growth(floor));
        (tables.chain(self.bands.iter().map(|t| t.next_growth(floor))))
            .enumerate()
            .filter_map(|(t, lines)| Some((t, lines?)))
            .collect()
    }

    /// Gives table `t` (simhash tables first, then band tables) zeroed `lines` for its next
    /// growth; gives them back if it does not want them.
    pub(super) fn offer(
        &mut self,
        t: usize,
        lines: Column<CacheLine>,
    ) -> Option<Column<CacheLine>> {
        let floor = u32::try_from(self.base).unwrap_or(u32::MAX);
        match self.tables_mut().nth(t) {
            Some(TableMut::Simhash(_, table)) => table.offer(lines, floor),
            Some(TableMut::Band(_, table)) => table.offer(lines, floor),
            None => Some(lines),
        }
    }

    /// The pages to back ahead of table `t`'s growth to `lines` lines, for a table that
    /// grows in place; `None` for one that grows into new lines (see
    /// [`Bucketed::room_for`]).
    pub(super) fn room_for(&mut self, t: usize, lines: usize) -> Option<Option<Room>> {
        match self.tables_mut().nth(t)? {
            TableMut::Simhash(_, table) => table.room_for(lines),
            TableMut::Band(_, table) => table.room_for(lines),
        }
    }

    /// Records that table `t`'s pages are backed up to `lines` lines.
    pub(super) fn backed_to(&mut self, t: usize, lines: usize) {
        match self.tables_mut().nth(t) {
            Some(TableMut::Simhash(_, table)) => table.backed_to(lines),
            Some(TableMut::Band(_, table)) => table.backed_to(lines),
            None => {}
        }
    }

    /// Every table, for jobs that change them (with its number among its kind).
    pub(super) fn tables_mut(&mut self) -> impl Iterator<Item = TableMut<'_>> {
        let tables =
            (self.tables.iter_mut().enumerate()).map(|(t, table)| TableMut::Simhash(t, table));
        let bands = (self.bands.iter_mut().enumerate()).map(|(b, table)| TableMut::Band(b, table));
        tables.chain(bands)
    }
}

/// One table of [`Memory`], borrowed to be changed by a job of [`in_turn`]: a permuted
/// simhash table or a band table, with its number.
pub(super) enum TableMut<'a> {
    Simhash(usize, &'a mut Bucketed<u64>),
    Band(usize, &'a mut Bucketed<u32>),
}

impl TableMut<'_> {
    fn room(&self) -> usize {
        match self {
            TableMut::Simhash(_, table) => table.room(),
            TableMut::Band(_, table) => table.room(),
        }
    }

    fn takes(&self) -> usize {
        match self {
            TableMut::Simhash(_, table) => table.takes(),
            TableMut::Band(_, table) => table.takes(),
        }
    }

    fn grow(self, floor: u32) {
        match self {
            TableMut::Simhash(_, table) => table.grow(floor),
            TableMut::Band(_, table) => table.grow(floor),
        }
    }
}
/// The cores this process may run on (at least one): the threads of [`in_turn`], and the
/// tables of a growth group.
pub(super) fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs `run` on every job, the jobs taken in turn by one thread per core (at most one per
/// job); the results in the jobs' order.
pub(super) fn in_turn<J: Send, T: Send>(jobs: Vec<J>, run: impl Fn(J) -> T + Sync) -> Vec<T> {
    let count = jobs.len();
    let threads = cores().clamp(1, count.max(1));
    let queue = std::sync::Mutex::new(jobs.into_iter().enumerate());
    let take = || queue.lock().unwrap_or_else(|p| p.into_inner()).next();
    let mut done: Vec<(usize, T)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    while let Some((i, job)) = take() {
                        mine.push((i, run(job)));
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("table job panicked"))
            .collect()
    });
    done.sort_by_key(|&(i, _)| i);
    done.into_iter().map(|(_, t)| t).collect()
}
