//! A snapshot brought up to date in place: the file this process wrote and put in place
//! (so nothing maps it), each section copied anew into space that no section of the header
//! in use takes, and the other header slot written once a checkpoint covers what they hold.
//!
//! The new sections are written in batches of about a quarter of the snapshot ([`BATCH`]):
//! once a section finds no free space and the batch is full, the batch is committed (the
//! header naming it written into the other slot), which frees the space of the sections it
//! replaces for the next batch. So the file holds about 1.25 snapshots, and the pages
//! written are mostly those of the sections replaced a batch or a snapshot before, still in
//! the page cache. A crash leaves the header in use with its sections untouched, or the
//! newer one with its own; every section keeps its checksum and its count of documents, so
//! an open reads a snapshot whose sections were copied at different moments as it reads
//! any other (each table's tail starts at its own count).

use std::path::Path;
use std::sync::RwLock;

use super::files::{file_id, open_file_id};
use super::{
    BANDS, Extent, FIRST_SECTION, Header, Rows, SECTION_ALIGN, TableSections, Written, copy_buffer,
    copy_table, path, rows_extent, write_header, write_rows, write_section,
};
use crate::index::plan::Plan;
use crate::index::store::ROW_BYTES;
use crate::index::tables::Memory;

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
pub(in crate::index) fn update_in_place(
    dir: &Path,
    current: &InPlace,
    plan: &Plan,
    memory: &RwLock<Memory>,
    stop: &dyn Fn() -> bool,
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
        commit,
    };
    update.live_bytes = update.live.sections().map(|(_, len)| len).sum();
    let (first_floor, rows_documents) = rows_extent(memory);
    let Some(at) = update.place((rows_documents - first_floor) * ROW_BYTES as u64)? else {
        return Ok(None);
    };
    let Some(rows) = write_rows(
        &mut update.file,
        memory,
        stop,
        at,
        first_floor,
        rows_documents,
    )?
    else {
        return Ok(None);
    };
    crate::faults::point("snapshot-section-written");
    update.push(Pending::Rows(rows));
    let mut lines = copy_buffer(memory);
    for t in 0..plan.tables.len() + BANDS {
        if stop() {
            return Ok(None);
        }
        let section = copy_table(memory, plan, t, &mut lines, &mut |bytes| {
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
            header: update.live,
        },
    )))
}

/// A section written, not yet in the header in use.
enum Pending {
    Rows(Rows),
    Table(usize, TableSections),
}

impl Pending {
    /// (offset, length).
    fn section(&self) -> (u64, u64) {
        let section = match self {
            Pending::Rows(rows) => &rows.section,
            Pending::Table(_, table) => &table.lines,
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
    commit: &'c mut Commit<'a>,
}

impl Update<'_, '_> {
    /// The space taken: the sections of the header in use and those written since.
    fn taken(&self) -> Vec<(u64, u64)> {
        (self.live.sections())
            .chain(self.pending.iter().map(Pending::section))
            .collect()
    }

    /// Records a section written, not yet in the header in use.
    fn push(&mut self, pending: Pending) {
        self.batch_bytes += pending.section().1;
        self.pending.push(pending);
    }

    /// Where a section of `len` bytes goes: into free space, or past the last section, or,
    /// when the batch is full, wherever committing it makes room. `None` if the commit was
    /// declined.
    fn place(&mut self, len: u64) -> std::io::Result<Option<u64>> {
        let (at, free) = free_at(self.taken(), len);
        let batch = self.batch_bytes;
        if free || batch == 0 || batch + len <= self.live_bytes / BATCH {
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
                Pending::Table(t, section) => match next.tables.len() {
                    simhash if *t < simhash => next.tables[*t] = *section,
                    simhash => next.bands[*t - simhash] = *section,
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
mod tests {
    use super::super::read::read_header;
    use super::super::{HEADER_PREFIX, HEADER_SLOT, Section};
    use super::*;

    #[test]
    fn the_header_in_use_is_the_whole_one_with_the_higher_sequence() {
        let plan = Plan::with_blocks(3, 6).unwrap();
        let rows = Rows {
            section: Section {
                offset: FIRST_SECTION,
                len: 0,
                xxh3: 0,
            },
            floor: 0,
            documents: 0,
            checksum: 0,
        };
        let header = |sequence| Header::of(&plan, sequence, &rows, vec![], vec![]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("snapshot");
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        let read = || read_header(&std::fs::read(&path).unwrap()).map(|h| h.sequence);
        let damage = |at: u64| {
            let mut bytes = std::fs::read(&path).unwrap();
            bytes[at as usize] ^= 1;
            std::fs::write(&path, bytes).unwrap();
        };
        write_header(&mut file, &header(4)).unwrap();
        assert_eq!(read().ok(), Some(4), "the second slot empty");
        write_header(&mut file, &header(7)).unwrap();
        assert_eq!(read().ok(), Some(7));
        write_header(&mut file, &header(8)).unwrap();
        assert_eq!(read().ok(), Some(8));
        // The newer cut short by a crash while it was written: the one before is in use.
        damage(HEADER_PREFIX + 20);
        assert_eq!(read().ok(), Some(7));
        // Neither whole: refused as damaged.
        damage(HEADER_SLOT + 3);
        assert!(matches!(read(), Err(super::super::Refused::Damaged(_))));
    }

    #[test]
    fn snapshots_written_in_place_name_whole_sections_and_a_file_grown_past_twice_is_replaced() {
        use crate::fingerprint::{Simhash, Sketch};
        use crate::index::{DocRecord, IndexConfig, SimhashIndex};
        let dir = tempfile::tempdir().unwrap();
        let index = SimhashIndex::open(dir.path(), IndexConfig::default())
            .unwrap()
            .with_snapshot_min_documents(1_000);
        let (mut written, mut in_place, mut replaced) = (0, 0, 0);
        let mut file = None;
        for _ in 0..8 {
            // Each round adds over a quarter: no rest holds a snapshot back.
            let (from, to) = (index.len(), index.len() * 3 / 2 + 1_000);
            for i in from..to {
                let key = |j: u64| {
                    (i * 64 + j)
                        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                        .rotate_left(17)
                };
                let sketch = Sketch {
                    bins: std::array::from_fn(|j| key(j as u64) as u8),
                    shingles: 300,
                };
                (index.insert(DocRecord {
                    simhash: Simhash(key(64)),
                    name: format!("doc-{i}"),
                    sketch,
                    ..DocRecord::default()
                }))
                .unwrap();
            }
            index.checkpoint().unwrap();
            index.checkpoint().unwrap();
            let waited = std::time::Instant::now();
            while index.snapshot_stats().written == written {
                assert!(waited.elapsed().as_secs() < 60, "no snapshot");
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            written = index.snapshot_stats().written;
            let bytes = std::fs::read(path(dir.path())).unwrap();
            let Ok(header) = read_header(&bytes) else {
                panic!("the header in use is not whole");
            };
            let mut sections: Vec<(u64, u64)> = header.sections().collect();
            sections.sort_unstable();
            for pair in sections.windows(2) {
                assert!(pair[0].0 + pair[0].1 <= pair[1].0, "{pair:?}");
            }
            assert_eq!(end_of(sections.iter().copied()), bytes.len() as u64);
            let id = file_id(&path(dir.path()));
            let live: u64 = sections.iter().map(|s| s.1).sum();
            match file.replace((id, bytes.len() as u64 > MOST_TIMES * (FIRST_SECTION + live))) {
                Some((before, too_long)) if before == id => {
                    assert!(
                        !too_long,
                        "written in place in a file over twice its snapshot"
                    );
                    in_place += 1;
                }
                Some(_) => replaced += 1,
                None => {}
            }
        }
        assert!(
            in_place >= 4,
            "{in_place} snapshots written in place, {replaced} whole"
        );
        assert_eq!(index.len(), index.snapshot_stats().documents.unwrap());
    }

    #[test]
    fn free_space_is_found_between_sections_on_a_page_boundary_or_after_them_all() {
        let page = SECTION_ALIGN;
        let first = FIRST_SECTION;
        // Nothing taken: the first section's place.
        assert_eq!(free_at(vec![], 10), (first, false));
        // A gap of two pages after a section that ends inside a page: from the next page.
        let taken = vec![(first + 4 * page, page), (first, page + 1)];
        assert_eq!(free_at(taken.clone(), page), (first + 2 * page, true));
        assert_eq!(free_at(taken.clone(), 2 * page), (first + 2 * page, true));
        // Too large for the gap: after the last.
        assert_eq!(free_at(taken, 2 * page + 1), (first + 5 * page, false));
        // Never overlapping what is taken, whatever the order and the lengths.
        let taken = vec![
            (first + 9 * page, 3),
            (first, 5),
            (first + 3 * page, 2 * page),
        ];
        for len in [1, page - 1, page, 2 * page, 3 * page, 10 * page] {
            let (at, _) = free_at(taken.clone(), len);
            assert_eq!(at % page, 0);
            assert!(at >= first);
            for &(offset, taken) in &taken {
                assert!(at + len <= offset || at >= offset + taken, "{len}: {at}");
            }
        }
    }
}
