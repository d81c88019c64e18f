//! Reading a snapshot: its header checked against the index's layout and manifest, its
//! sections against their checksums, its rows decoded and its tables mapped.

use std::path::Path;
use std::sync::Arc;

use xxhash_rust::xxh3::xxh3_64;

use super::super::manifest::{Manifest, row_checksum};
use super::super::memory::{Bucketed, CacheLine, Column, Key, TableShape};
use super::super::plan::Plan;
use super::super::store::{ROW_BYTES, decode_row};
use super::super::tables::Memory;
use super::{
    Extent, FIRST_SECTION, HEADER_PREFIX, HEADER_SLOT, Header, OLDEST_SNAPSHOT_VERSION,
    SECTION_ALIGN, SNAPSHOT_VERSION, Section, TableSections, path,
};
use crate::fingerprint::{BANDS, FINGERPRINT_VERSION};

/// Why a snapshot was not used.
pub(in crate::index) enum Refused {
    /// There is none.
    Missing,
    /// It is not this index's, or not this build's (a line saying how, for the log).
    Stale(String),
    /// It is damaged (a line saying how).
    Damaged(String),
}

/// The in-memory index of the snapshot in `dir`, when it is of this index and holds no
/// document that `manifest` does not record (see the module doc), with the documents each
/// table's copy holds (simhash tables, then band tables; the caller adds the rest as their
/// tails) and the snapshot's extent. The row and section checksums are checked on every
/// core. The rows are decoded into room for `capacity` rows, so that those read from sled
/// after them do not move them (at 10 M documents, a gigabyte copied into fresh memory).
pub(in crate::index) fn open(
    dir: &Path,
    plan: &Plan,
    manifest: &Manifest,
    capacity: u64,
) -> Result<(Memory, Vec<u64>, Extent), Refused> {
    let file = match std::fs::File::open(path(dir)) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Refused::Missing),
        Err(e) => return Err(Refused::Damaged(format!("cannot be opened: {e}"))),
    };
    // SAFETY: the file is mapped read-only and, while the index is open, nothing else
    // writes it (the state directory is locked; see the module doc). Every section read
    // from it is checked against its length and alignment before it is used.
    let map = unsafe { memmap2::Mmap::map(&file) }
        .map_err(|e| Refused::Damaged(format!("cannot be mapped: {e}")))?;
    let map = Arc::new(map);
    let header = read_header(&map)?;
    check_header(&header, plan, manifest)?;
    let (docs, checksum) = check_and_decode(&map, &header, manifest.floor, capacity)?;
    let tables = header
        .tables
        .iter()
        .map(|t| table::<u64>(&file, t))
        .collect::<Result<Vec<_>, _>>()?;
    let bands = header
        .bands
        .iter()
        .map(|t| table::<u32>(&file, t))
        .collect::<Result<Vec<_>, _>>()?;
    let held = header
        .tables
        .iter()
        .chain(&header.bands)
        .map(TableSections::held)
        .collect();
    let extent = (header.rows_documents, header.floor, header.rows_checksum);
    Ok((
        Memory {
            checksum,
            tables,
            bands,
            base: manifest.floor,
            docs: docs.into(),
            growth_check: 0,
        },
        held,
        extent,
    ))
}

/// Refuses a snapshot of another version or layout, one that holds what the manifest
/// does not, and one whose counts disagree.
fn check_header(header: &Header, plan: &Plan, manifest: &Manifest) -> Result<(), Refused> {
    let stale = |what: String| Err(Refused::Stale(what));
    if !(OLDEST_SNAPSHOT_VERSION..=SNAPSHOT_VERSION).contains(&header.snapshot)
        || !(super::super::OLDEST_INDEX_FORMAT..=super::super::INDEX_FORMAT_VERSION)
            .contains(&header.format)
        || !(super::super::OLDEST_FINGERPRINT..=FINGERPRINT_VERSION).contains(&header.fingerprint)
        || header.little_endian != cfg!(target_endian = "little")
    {
        return stale(format!(
            "written by another version (snapshot {}, index format {}, fingerprint {})",
            header.snapshot, header.format, header.fingerprint
        ));
    }
    if (header.k, header.blocks as usize) != (plan.k, plan.blocks.len())
        || header.tables.len() != plan.tables.len()
        || header.bands.len() != BANDS
    {
        return stale("of another layout".into());
    }
    // Nothing past the manifest's documents, and the rows from the manifest's floor on
    // (the documents after them are read from sled, and the checksum of both together is
    // checked against the manifest's then).
    if header.documents > manifest.documents
        || header.floor > manifest.floor
        || header.rows_documents < manifest.floor
    {
        return stale(format!(
            "of {} documents, rows from {}, the manifest records {} from {}",
            header.documents, header.floor, manifest.documents, manifest.floor
        ));
    }
    let damaged = |what: &str| Err(Refused::Damaged(what.into()));
    let mut sections_in_order = header.tables.iter().chain(&header.bands);
    if sections_in_order.any(|t| {
        t.held() > header.documents
            || follows(t.documents, t.deltas.iter().map(|d| (d.from, d.documents))).is_none()
    }) || header.rows_documents > header.documents
        || header.rows_documents < header.floor
        || header.first_rows_end() < header.floor
        || follows(
            header.first_rows_end(),
            header.more_rows.iter().map(|r| (r.from, r.documents)),
        ) != Some(header.rows_documents)
    {
        return damaged("its counts of documents disagree");
    }
    let row_bytes = |from: u64, to: u64| (to - from).saturating_mul(ROW_BYTES as u64);
    if header.rows.len != row_bytes(header.floor, header.first_rows_end())
        || (header.more_rows.iter()).any(|r| r.section.len != row_bytes(r.from, r.documents))
    {
        return damaged("its rows section has the wrong length");
    }
    Ok(())
}

/// Where the runs (from, to) end, if each starts where the one before ends (the first at
/// `end`) and holds documents.
fn follows(mut end: u64, runs: impl Iterator<Item = (u64, u64)>) -> Option<u64> {
    for (from, to) in runs {
        if from != end || to <= from {
            return None;
        }
        end = to;
    }
    Some(end)
}

/// Checks the sections on every core: the rows (decoded into room for `capacity` rows
/// from `floor` on, and summed on the way) on this thread, the table sections on the
/// others, taken in turn. Returns the rows and their checksum.
fn check_and_decode(
    map: &[u8],
    header: &Header,
    floor: u64,
    capacity: u64,
) -> Result<(Vec<super::super::Stored>, u64), Refused> {
    let bytes = |s: &Section| -> Result<&[u8], Refused> {
        usize::try_from(s.offset)
            .ok()
            .zip(usize::try_from(s.len).ok())
            .and_then(|(start, len)| map.get(start..start.checked_add(len)?))
            .ok_or_else(|| Refused::Damaged("a section lies past the end of the file".into()))
    };
    let mut rows_bytes = vec![(header.floor, &header.rows, bytes(&header.rows)?)];
    for more in &header.more_rows {
        rows_bytes.push((more.from, &more.section, bytes(&more.section)?));
    }
    let sections: Vec<&Section> = header
        .tables
        .iter()
        .chain(&header.bands)
        .flat_map(TableSections::sections)
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let helpers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .saturating_sub(1)
        .max(1);
    let (rows, checked) = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..helpers)
            .map(|_| {
                scope.spawn(|| -> Result<(), Refused> {
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(section) = sections.get(i) else {
                            return Ok(());
                        };
                        if xxh3_64(bytes(section)?) != section.xxh3 {
                            return Err(Refused::Damaged(format!(
                                "the table section at byte {} fails its checksum",
                                section.offset
                            )));
                        }
                    }
                })
            })
            .collect();
        let rows = decode_rows(&rows_bytes, header, floor, capacity);
        let checked = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Refused::Damaged("check failed".into())))
            })
            .collect::<Result<Vec<()>, Refused>>();
        (rows, checked)
    });
    checked?;
    rows
}

/// A table of the snapshot, its lines mapped from the file, with its deltas mapped as its
/// tail.
fn table<K: Key>(file: &std::fs::File, t: &TableSections) -> Result<Bucketed<K>, Refused> {
    let mut table = mapped_table(file, (t.leading, t.floor, t.entries), &t.lines)?;
    for delta in &t.deltas {
        table.add_tail_layer(mapped_table(
            file,
            (t.leading, 0, delta.entries),
            &delta.lines,
        )?);
    }
    Ok(table)
}

/// A table of `shape` whose lines are the `section` of `file`, mapped.
fn mapped_table<K: Key>(
    file: &std::fs::File,
    shape: TableShape,
    section: &Section,
) -> Result<Bucketed<K>, Refused> {
    let width = std::mem::size_of::<CacheLine>() as u64;
    if section.len % width != 0 || section.offset % SECTION_ALIGN != 0 {
        return Err(Refused::Damaged("a table section is misplaced".into()));
    }
    let len = usize::try_from(section.len / width).unwrap_or(usize::MAX);
    let lines = Column::mapped(file, section.offset, len)
        .map_err(|e| Refused::Damaged(format!("a table section cannot be mapped: {e}")))?;
    Bucketed::from_parts(shape, lines)
        .ok_or_else(|| Refused::Damaged("a table's shape does not fit its lines".into()))
}

/// The layout (k, blocks) that the header of the snapshot in `dir` names, read without
/// mapping the file (for the check started before the database opens: see `early.rs`);
/// `None` if there is no snapshot or its header cannot be read.
pub(super) fn layout(dir: &Path) -> Option<(u32, u32)> {
    use std::io::Read;
    let mut head = Vec::new();
    std::fs::File::open(path(dir))
        .ok()?
        .take(FIRST_SECTION)
        .read_to_end(&mut head)
        .ok()?;
    let header = read_header(&head).ok()?;
    Some((header.k, header.blocks))
}

/// The header in use: of the two slots' headers that are whole and pass their checksum,
/// the one with the higher sequence (see the module doc of `snapshot`).
pub(super) fn read_header(map: &[u8]) -> Result<Header, Refused> {
    let [first, second] = [0, HEADER_SLOT].map(|at| read_slot(map, at));
    match (first, second) {
        (Ok(a), Ok(b)) => Ok(if b.sequence > a.sequence { b } else { a }),
        (Ok(header), Err(_)) | (Err(_), Ok(header)) => Ok(header),
        (Err(e), Err(_)) => Err(e),
    }
}

/// The header in the slot at `at`.
fn read_slot(map: &[u8], at: u64) -> Result<Header, Refused> {
    let damaged = |what: &str| Refused::Damaged(what.to_string());
    let at = at as usize;
    let word = |at: usize| {
        map.get(at..at + 8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_le_bytes)
            .ok_or_else(|| damaged("it is shorter than its header"))
    };
    let (len, xxh3) = (word(at)?, word(at + 8)?);
    let json = usize::try_from(len)
        .ok()
        .filter(|&len| len > 0 && len as u64 + HEADER_PREFIX <= HEADER_SLOT)
        .and_then(|len| map.get(at + HEADER_PREFIX as usize..at + HEADER_PREFIX as usize + len))
        .ok_or_else(|| damaged("its header is cut short"))?;
    // The counts of documents in it say where each table's tail starts: a wrong one would
    // leave documents out of the tables, so the header is checked as the sections are.
    if xxh3_64(json) != xxh3 {
        return Err(damaged("its header fails its checksum"));
    }
    serde_json::from_slice(json).map_err(|e| Refused::Damaged(format!("its header: {e}")))
}

/// The rows of the snapshot from `from` on (those below expired since it was written),
/// with the sum of their row checksums; all of them are checked against their section's
/// checksum and, row by row, against the header's row checksum. `pieces` are the rows
/// sections in order, each with the id of its first row.
fn decode_rows(
    pieces: &[(u64, &Section, &[u8])],
    header: &Header,
    from: u64,
    capacity: u64,
) -> Result<(Vec<super::super::Stored>, u64), Refused> {
    let damaged = |what: &str| Err(Refused::Damaged(what.to_string()));
    if pieces.iter().any(|(_, s, bytes)| xxh3_64(bytes) != s.xxh3) {
        return damaged("its rows fail their checksum");
    }
    let rows = header.rows_documents.saturating_sub(from) as usize;
    let mut docs = super::super::memory::with_capacity(rows.max(capacity as usize));
    let (mut sum, mut kept) = (0u64, 0u64);
    let rows =
        (pieces.iter()).flat_map(|&(first, _, bytes)| (first..).zip(bytes.chunks_exact(ROW_BYTES)));
    for (id, row) in rows {
        let checksum = row_checksum(id, row);
        sum = sum.wrapping_add(checksum);
        if id < from {
            continue;
        }
        kept = kept.wrapping_add(checksum);
        match decode_row(row) {
            Some(doc) => docs.push(doc),
            None => return damaged("it holds an unreadable row"),
        }
    }
    if sum != header.rows_checksum {
        return damaged("its rows do not add up to their checksum");
    }
    Ok((docs, kept))
}
