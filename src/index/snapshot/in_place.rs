//! A snapshot brought up to date in place: the file this process wrote and put in place
//! (so nothing maps it), each new section written into space that no section of the header
//! in use takes, and the other header slot written once a checkpoint covers what they hold.
//!
//! Most of what an update writes are *deltas*: for a table, a table of the entries of the
//! documents stored since its sections were written (built from the rows in memory, at the
//! build load), named in the header after the sections in use; for the rows, the rows
//! stored since, as a run after theirs. So an update writes what was stored since the last
//! one, not the index. A section is copied whole from memory instead once it has
//! [`MOST_DELTAS`] deltas or its deltas hold more documents than its whole part
//! ([`takes_delta`]): about once each time the index doubles. Its deltas' space is freed
//! with its own. Every section with documents stored since first gets its delta, and those
//! are committed before any whole copy starts, so a crash while the copies are written
//! leaves a snapshot short of no more than what was stored meanwhile. A section none of
//! whose documents is new keeps what it has. Deltas are also left out, and the sections
//! copied whole, when the header's slot has no room for a delta more each. While the
//! upkeep thread holds whole copies back (its rest after one), an update writes deltas
//! alone: a section due for a whole copy takes a delta more, up to [`MOST_DELTAS_HELD`].
//! An open maps a table's deltas as the layers of its tail (see `memory.rs`), folded in
//! later as any tail is.
//!
//! The whole copies are written in batches of about a quarter of the snapshot ([`BATCH`]):
//! once a section finds no free space and the batch is full, the batch is committed (the
//! header naming it written into the other slot), which frees the space of the sections it
//! replaces for the next batch (a batch of deltas alone frees nothing, and is committed at
//! the end). So the file holds about 1.25 snapshots, and the pages
//! written are mostly those of the sections replaced a batch or a snapshot before, still in
//! the page cache. A crash leaves the header in use with its sections untouched, or the
//! newer one with its own; every section keeps its checksum and its count of documents, so
//! an open reads a snapshot whose sections were copied at different moments as it reads
//! any other (each table's tail starts at its own count).

use std::path::Path;
use std::sync::RwLock;

use super::files::{file_id, open_file_id};
use super::{
    BANDS, Delta, Extent, FIRST_SECTION, HEADER_PREFIX, HEADER_SLOT, Header, ROWS_STEP, Rows,
    SECTION_ALIGN, TableSections, Written, copy_buffer, copy_table, path, rows_extent,
    write_header, write_rows, write_section,
};
use crate::index::memory::{CacheLine, Column, plain_bytes};
use crate::index::plan::Plan;
use crate::index::store::ROW_BYTES;
use crate::index::tables::{Columns, Memory, layer_of};

/// A batch is committed once it holds 1/`BATCH` of the snapshot's bytes and the next
/// section finds no free space.
const BATCH: u64 = 4;

/// Once the file is over `MOST_TIMES` the bytes of the snapshot it holds (space freed and
/// not taken again, as sections grow), the next snapshot is written whole to another file.
const MOST_TIMES: u64 = 2;

/// The snapshot in place that this process wrote: its header in use, and which file it is.
#[derive(Debug, Clone)]
pub(in crate::index) struct InPlace {
    header: Header,
    /// Device and inode.
    file: (u64, u64),
}

impl InPlace {
    /// The snapshot just written to `file` (before it is renamed into place: a rename keeps
    /// the file), if which file a path names can be told (on Unix).
    pub(in crate::index) fn of(written: &Written, file: &Path) -> Option<InPlace> {
        Some(InPlace {
            header: written.header.clone(),
            file: file_id(file)?,
        })
    }

    /// Whether its file is the one in place in `dir`.
    pub(in crate::index) fn is_in_place(&self, dir: &Path) -> bool {
        file_id(&path(dir)) == Some(self.file)
    }
}

/// What commits a batch: called with the most documents any section of the new header
/// holds, the extent of its rows, and the write of the header; it waits until a checkpoint
/// covers those documents (see `upkeep`), then writes the header unless the index stops or
/// the file is no longer the one in place, and says whether it wrote it.
pub(in crate::index) type Commit<'a> =
    dyn FnMut(u64, Extent, &mut dyn FnMut() -> std::io::Result<()>) -> std::io::Result<bool> + 'a;

/// Brings the snapshot `current` in `dir` up to date in place (see the module doc); returns
/// the snapshot in place after it (`None` when the next should be written whole to another
/// file) and what was written, or `None` when `stop()` turned true or `commit` declined.
/// Unless `whole_allowed`, it writes deltas alone (see [`MOST_DELTAS_HELD`]).
pub(in crate::index) fn update_in_place(
    dir: &Path,
    current: &InPlace,
    plan: &Plan,
    memory: &RwLock<Memory>,
    (stop, whole_allowed): (&dyn Fn() -> bool, bool),
    commit: &mut Commit<'_>,
) -> std::io::Result<Option<(Option<InPlace>, Written)>> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path(dir))?;
    // The file opened, not the path looked up again: it is the one written.
    if open_file_id(&file) != Some(current.file) {
        return Ok(None);
    }
    let mut update = Update {
        file,
        live: current.header.clone(),
        live_bytes: 0,
        pending: Vec::new(),
        batch_bytes: 0,
        wrote: 0,
        commit,
    };
    update.live_bytes = update.live.sections().map(|(_, len)| len).sum();
    let (first_floor, count) = rows_extent(memory);
    let tables = plan.tables.len() + BANDS;
    let Copies {
        room,
        mut whole_rows,
        mut whole,
        most,
    } = copied_whole(&update.live, tables, count, whole_allowed);
    // First a delta of every section with documents stored since, committed before any whole
    // copy is written: a crash during the copies then leaves every section up to date but
    // for what was stored during them.
    if room {
        if count > update.live.rows_documents {
            match update.more_rows(memory, stop, count)? {
                None => return Ok(None),
                Some(added) => whole_rows |= !added,
            }
        }
        if !update.deltas(plan, memory, (stop, most), count, &mut whole)? {
            return Ok(None);
        }
        if (whole_rows || whole.contains(&true)) && !update.commit()? {
            return Ok(None);
        }
    }
    let copied_whole = whole_rows || whole.contains(&true);
    if whole_rows && !update.whole_rows(memory, stop, first_floor, count)? {
        return Ok(None);
    }
    let mut lines = None;
    for t in (0..tables).filter(|&t| whole[t]) {
        if stop() {
            return Ok(None);
        }
        let lines = lines.get_or_insert_with(|| copy_buffer(memory));
        let section = copy_table(memory, plan, t, lines, &mut |bytes| {
            let Some(at) = update.place(bytes.len() as u64)? else {
                return Ok(None);
            };
            write_section(&mut update.file, at, bytes).map(Some)
        })?;
        let Some(section) = section else {
            return Ok(None);
        };
        crate::faults::point("snapshot-section-written");
        update.push(Pending::Table(t, section));
    }
    if !update.commit()? {
        return Ok(None);
    }
    // Past the last section is space no header takes any more.
    let end = end_of(update.live.sections());
    update.file.set_len(end)?;
    let next = (end <= MOST_TIMES * (FIRST_SECTION + update.live_bytes)).then(|| InPlace {
        header: update.live.clone(),
        file: current.file,
    });
    Ok(Some((
        next,
        Written {
            extent: update.live.extent(),
            documents: update.live.documents,
            bytes: end,
            wrote: update.wrote,
            copied_whole,
            header: update.live,
        },
    )))
}

/// Delta sections a table section carries (and runs of rows added the rows section)
/// before it is written whole again.
const MOST_DELTAS: usize = 8;

/// Delta sections a table section carries at most while whole copies are held back (the
/// upkeep thread's rest after one): sections due for a whole copy take deltas meanwhile,
/// so that the snapshot keeps up with the documents stored at the cost of what was stored
/// since, and the whole copies wait for the rest's end. A table section past it keeps what
/// it has until then (its tail at the next open starts at its own count). The rows' runs
/// are not held to it: they are the ids' order, and every update adds theirs. The header's
/// slot has room for this many for the default plan's 26 tables (see [`header_room`],
/// which holds back any delta when it has not).
const MOST_DELTAS_HELD: usize = 12;

/// Whether a section whose whole part holds the documents `whole` (first, end), with
/// `deltas` delta sections after it, takes one more up to `count` rather than being written
/// whole: while it has fewer than [`MOST_DELTAS`] and the documents after its whole part are
/// then no more than the whole part holds. So a section is written whole once the index
/// has about doubled since it last was; in between, an update writes what was stored since
/// the one before, not the whole index.
fn takes_delta((first, end): (u64, u64), deltas: usize, count: u64) -> bool {
    deltas < MOST_DELTAS && count.saturating_sub(end) <= end.saturating_sub(first)
}

/// What an update copies whole, and what it may add as deltas (see [`copied_whole`]).
struct Copies {
    /// Whether the header has room for a delta more of every section.
    room: bool,
    /// Whether the rows are copied whole.
    whole_rows: bool,
    /// Whether each table is copied whole.
    whole: Vec<bool>,
    /// The most deltas a table may have to take one more.
    most: usize,
}

/// Which sections of `live` an update up to `count` copies whole: those past the bounds of
/// their deltas ([`takes_delta`]), or all with documents stored since or deltas when the
/// header has no room for a delta more each; none unless `whole_allowed` (each section due
/// for a whole copy then takes a delta more instead, while it has fewer than
/// [`MOST_DELTAS_HELD`]; past that it waits, as a section with nothing new).
fn copied_whole(live: &Header, tables: usize, count: u64, whole_allowed: bool) -> Copies {
    let room = header_room(live, tables + 1);
    if !whole_allowed {
        return Copies {
            room,
            whole_rows: false,
            whole: vec![false; tables],
            most: MOST_DELTAS_HELD - 1,
        };
    }
    let whole_rows = count > live.rows_documents
        && (!room || {
            let whole = (live.floor, live.first_rows_end());
            !takes_delta(whole, live.more_rows.len(), count)
        });
    let whole = (0..tables)
        .map(|t| {
            let table = live.table(t);
            let whole = (u64::from(table.floor), table.documents);
            let fresh = table.held() < count;
            if room {
                fresh && !takes_delta(whole, table.deltas.len(), count)
            } else {
                fresh || !table.deltas.is_empty()
            }
        })
        .collect();
    Copies {
        room,
        whole_rows,
        whole,
        most: MOST_DELTAS,
    }
}

/// The most bytes of JSON a delta or a run of rows adds to the header: six numbers.
const DELTA_JSON: usize = 6 * 21 + 2;

/// Whether the header `live` has room in its slot for `deltas` deltas more.
fn header_room(live: &Header, deltas: usize) -> bool {
    let json = serde_json::to_vec(live).map_or(usize::MAX, |json| json.len());
    json.saturating_add(deltas * DELTA_JSON) <= (HEADER_SLOT - HEADER_PREFIX) as usize
}

/// The keys of documents `from..to`, copied under the read lock [`ROWS_STEP`] documents at a
/// time; `None` if one of them expired.
fn copy_columns(memory: &RwLock<Memory>, from: u64, to: u64) -> Option<Columns> {
    let mut columns = Columns::with_capacity((to - from) as usize);
    let mut id = from;
    while id < to {
        let memory = memory.read().unwrap_or_else(|p| p.into_inner());
        let end = (id + ROWS_STEP).min(to);
        for id in id..end {
            columns.push(memory.doc(id)?);
        }
        id = end;
    }
    Some(columns)
}

/// A section written, not yet in the header in use.
enum Pending {
    /// The rows, whole.
    Rows(Rows),
    /// Rows added after the rows in use.
    MoreRows(Rows),
    /// A table's sections: written whole, or those in use and a delta.
    Table(usize, TableSections),
}

impl Pending {
    /// Whether the section replaces sections of the header in use (a whole copy), whose
    /// space its commit frees.
    fn replaces(&self) -> bool {
        match self {
            Pending::Rows(_) => true,
            Pending::MoreRows(_) => false,
            Pending::Table(_, table) => table.deltas.is_empty(),
        }
    }

    /// (offset, length) of the section written.
    fn section(&self) -> (u64, u64) {
        let section = match self {
            Pending::Rows(rows) | Pending::MoreRows(rows) => &rows.section,
            Pending::Table(_, table) => table.deltas.last().map_or(&table.lines, |d| &d.lines),
        };
        (section.offset, section.len)
    }
}

struct Update<'c, 'a> {
    file: std::fs::File,
    /// The header in use, and the bytes of its sections.
    live: Header,
    live_bytes: u64,
    /// The sections written since, and their bytes.
    pending: Vec<Pending>,
    batch_bytes: u64,
    /// Bytes of the sections written.
    wrote: u64,
    commit: &'c mut Commit<'a>,
}

impl Update<'_, '_> {
    /// The space taken: the sections of the header in use and those written since.
    fn taken(&self) -> Vec<(u64, u64)> {
        (self.live.sections())
            .chain(self.pending.iter().map(Pending::section))
            .collect()
    }

    /// Writes the rows stored since the rows in use, up to `count`, as a run after theirs;
    /// `Some(false)` when one of them expired (the rows are then copied whole), `None` if
    /// the update stopped or a commit was declined.
    fn more_rows(
        &mut self,
        memory: &RwLock<Memory>,
        stop: &dyn Fn() -> bool,
        count: u64,
    ) -> std::io::Result<Option<bool>> {
        let from = self.live.rows_documents;
        if rows_extent(memory).0 > from {
            return Ok(Some(false));
        }
        let Some(at) = self.place((count - from) * ROW_BYTES as u64)? else {
            return Ok(None);
        };
        let Some(rows) = write_rows(&mut self.file, memory, stop, at, from, count)? else {
            return Ok(None);
        };
        // Rows that expired while they were copied leave a gap.
        if rows.floor != from {
            return Ok(Some(false));
        }
        crate::faults::point("snapshot-section-written");
        self.push(Pending::MoreRows(rows));
        Ok(Some(true))
    }

    /// Writes every row from `first_floor` (or the floor, if it has moved since) up to
    /// `count`; false if the update stopped or a commit was declined.
    fn whole_rows(
        &mut self,
        memory: &RwLock<Memory>,
        stop: &dyn Fn() -> bool,
        first_floor: u64,
        count: u64,
    ) -> std::io::Result<bool> {
        let first_floor = rows_extent(memory).0.max(first_floor);
        let Some(at) = self.place((count - first_floor) * ROW_BYTES as u64)? else {
            return Ok(false);
        };
        let Some(rows) = write_rows(&mut self.file, memory, stop, at, first_floor, count)? else {
            return Ok(false);
        };
        crate::faults::point("snapshot-section-written");
        self.push(Pending::Rows(rows));
        Ok(true)
    }

    /// Writes a delta up to `count` of every table with documents stored since and at most
    /// `most` deltas; a table whose documents since cannot be read (one expired) is marked
    /// `whole` instead. False if the update stopped or a commit was declined.
    fn deltas(
        &mut self,
        plan: &Plan,
        memory: &RwLock<Memory>,
        (stop, most): (&dyn Fn() -> bool, usize),
        count: u64,
        whole: &mut [bool],
    ) -> std::io::Result<bool> {
        let tables = whole.len();
        let delta = |t: usize| {
            let table = self.live.table(t);
            table.held() < count && table.deltas.len() <= most
        };
        let wanted: Vec<usize> = (0..tables).filter(|&t| delta(t)).collect();
        let Some(from) = wanted.iter().map(|&t| self.live.table(t).held()).min() else {
            return Ok(true);
        };
        let Some(columns) = copy_columns(memory, from, count) else {
            for t in wanted {
                whole[t] = true;
            }
            return Ok(true);
        };
        let mut buffer = Vec::new();
        for t in wanted {
            if stop() {
                return Ok(false);
            }
            let table = self.live.table(t).clone();
            let keys = (from, &columns);
            let Some(section) = self.delta(plan, t, table, keys, count, &mut buffer)? else {
                return Ok(false);
            };
            crate::faults::point("snapshot-section-written");
            self.push(Pending::Table(t, section));
        }
        Ok(true)
    }

    /// Writes table `t`'s delta up to `count` from the keys of the documents from `from`
    /// in `columns`, and returns the table's sections with it; `None` if a commit was
    /// declined.
    fn delta(
        &mut self,
        plan: &Plan,
        t: usize,
        mut table: TableSections,
        (from, columns): (u64, &Columns),
        count: u64,
        buffer: &mut Vec<CacheLine>,
    ) -> std::io::Result<Option<TableSections>> {
        let held = table.held();
        let skip = (held - from) as usize;
        let lines = std::mem::take(buffer);
        let ((_, _, entries), layer) =
            layer_of(plan, (t, table.leading), columns, (skip, held), lines);
        let bytes = plain_bytes(&layer);
        let Some(at) = self.place(bytes.len() as u64)? else {
            return Ok(None);
        };
        let lines = write_section(&mut self.file, at, bytes)?;
        if let Column::Owned(values) = layer {
            *buffer = values;
        }
        table.deltas.push(Delta {
            from: held,
            documents: count,
            entries,
            lines,
        });
        Ok(Some(table))
    }

    /// Records a section written, not yet in the header in use.
    fn push(&mut self, pending: Pending) {
        self.batch_bytes += pending.section().1;
        self.wrote += pending.section().1;
        self.pending.push(pending);
    }

    /// Where a section of `len` bytes goes: into free space, or past the last section, or,
    /// when the batch is full and holds a whole copy (whose commit frees the space of the
    /// sections it replaces), wherever committing it makes room. `None` if the commit was
    /// declined.
    fn place(&mut self, len: u64) -> std::io::Result<Option<u64>> {
        let (at, free) = free_at(self.taken(), len);
        let batch = self.batch_bytes;
        // A batch of deltas alone frees nothing when committed.
        let frees = self.pending.iter().any(Pending::replaces);
        if free || !frees || batch + len <= self.live_bytes / BATCH {
            return Ok(Some(at));
        }
        if !self.commit()? {
            return Ok(None);
        }
        Ok(Some(free_at(self.taken(), len).0))
    }

    /// Writes the header naming the sections written since into the other slot (through
    /// `commit`); their space and the header's become the header in use.
    fn commit(&mut self) -> std::io::Result<bool> {
        if self.pending.is_empty() {
            return Ok(true);
        }
        let mut next = self.live.clone();
        next.sequence += 1;
        for pending in &self.pending {
            match pending {
                Pending::Rows(rows) => next.set_rows(rows),
                Pending::MoreRows(rows) => next.add_rows(rows),
                Pending::Table(t, section) => match next.tables.len() {
                    simhash if *t < simhash => next.tables[*t] = section.clone(),
                    simhash => next.bands[*t - simhash] = section.clone(),
                },
            }
        }
        next.count_documents();
        let file = &mut self.file;
        let written = (self.commit)(next.documents, next.extent(), &mut || {
            write_header(file, &next)?;
            crate::faults::point("snapshot-switched");
            Ok(())
        })?;
        if written {
            self.live = next;
            self.live_bytes = self.live.sections().map(|(_, len)| len).sum();
            self.pending.clear();
            self.batch_bytes = 0;
        }
        Ok(written)
    }
}

/// Where `len` bytes fit among the sections `taken` (offset, length): the first page
/// boundary from [`FIRST_SECTION`] on with room before the next section (`true`), or the
/// first past them all (`false`).
fn free_at(mut taken: Vec<(u64, u64)>, len: u64) -> (u64, bool) {
    taken.sort_unstable();
    let mut at = FIRST_SECTION;
    for (offset, taken) in taken {
        if at + len <= offset {
            return (at, true);
        }
        at = at.max((offset + taken).next_multiple_of(SECTION_ALIGN));
    }
    (at, false)
}

/// The end of the last of `sections` (offset, length).
fn end_of(sections: impl Iterator<Item = (u64, u64)>) -> u64 {
    sections
        .map(|(offset, len)| offset + len)
        .fold(FIRST_SECTION, u64::max)
}

#[cfg(test)]
#[path = "in_place_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "in_place_update_tests.rs"]
mod update_tests;
