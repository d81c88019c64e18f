//! The snapshot: the in-memory index written out beside the database, and mapped by the
//! next open instead of being rebuilt.
//!
//! Rebuilding the tables from the stored rows is what an open of a large index spends its
//! time on: at 10 M documents, 26 tables of 10 M entries, about 3 GB of fresh memory that
//! the kernel must give page by page first (most of such an open, and the rows' read from
//! sled on top; CHANGELOG.md, benchmark history, note 4). A snapshot holds the tables' lines
//! and the rows; an open maps each table's section copy-on-write and reads the tables
//! straight from the page cache, and decodes the rows from it instead of from sled.
//!
//! # When one is written
//! - In the background, while the index is in use ([`super::upkeep`]): after a checkpoint,
//!   once the documents stored since the last snapshot reach a share of it, so that the
//!   documents an open after a crash must add stay a bounded share of the index.
//! - When the index closes holding what its last checkpoint recorded, unless the snapshot
//!   on disk already is that index, or is one this process cannot write in place (the one
//!   an open mapped) with fewer documents after it than a quarter of it: the next open adds
//!   those as tails, where a whole write would hold the close up for a pass over the index.
//!
//! Both take the same copy (`write`): the rows first, then one table after another, each
//! copied under the index's read lock (inserts wait for one table's copy, decisions do not
//! wait) and written to the file after the lock is released. So each section is exact at
//! its own moment: a table's section records the documents it holds (every entry of the ids
//! below that count, none after), and so do the rows. A snapshot written in the background
//! is put in place only once a checkpoint has made durable every document any section
//! holds, and a checkpoint before it too (a crawl resumes from its own last checkpoint,
//! which may be the one before the index's last).
//!
//! # When one is read
//! Its check starts on a thread of its own before sled opens, and runs while sled recovers
//! its log (see `early.rs`). A snapshot is used when it is of this index's formats and
//! layout, every section's checksum is right, each delta and run of rows starts where the
//! one before it ends, and it holds no document the manifest does not record. Rows below
//! the manifest's floor (expired since) are skipped. The documents after a section's count
//! are read from sled and added to that table as its *tail* (see `memory.rs`): a small
//! table that probes read beside the mapped one, folded in by the background upkeep later.
//! The snapshot's row checksum over the manifest's rows plus that of the rows read from
//! sled must equal the manifest's, which proves the snapshot's rows are the database's.
//! That is only done while the documents after it are at most twice what it holds (see
//! `MAX_TIMES_AFTER` in `open.rs`), and never past a roll-back to a checkpoint it is newer
//! than. Anything else (a snapshot far behind the database, of other rows, a file cut short
//! or overwritten, another machine's byte order, an older layout) is set aside with one
//! line in the log and the tables are rebuilt from sled as before: a snapshot can make an
//! open faster, never different. None is written below [`SNAPSHOT_MIN_DOCUMENTS`] (a
//! rebuild takes less than writing one).
//!
//! Layout: two header slots of 32 KiB, each 8 bytes (little-endian length of the JSON
//! header), 8 bytes (its xxh3) and the header as JSON; the header in use is the valid one
//! with the higher `sequence`. From 64 KiB on, the sections, each on a page boundary: the
//! rows (encoded as in sled, `ROW_BYTES` each) in one or more runs, and per table its lines
//! as native integers, then its deltas' lines, wherever the header says. A whole snapshot
//! is written under a temporary name and put in place by a rename (a swap of names, on
//! Linux: see `put_in_place`), so a crash while writing leaves the earlier file or none.
//! While an index is open the file must not be changed by anything else (the state
//! directory's lock keeps other crawldedup processes out).
//!
//! A snapshot this process wrote and put in place is brought up to date *in place* by the
//! background snapshots after it (`in_place.rs`): each section is written into space no
//! section of the header in use takes, and the other header slot is written once every
//! document of the sections written since is durable, which frees the space of the sections
//! they replace. Such an update mostly writes *deltas*: a table's entries of the documents
//! stored since its sections were written, as a small table of their own, and the rows
//! stored since; a section is written whole again once the index has about doubled since it
//! last was. An open maps a table's deltas as the layers of its tail. A crash at any point
//! leaves the header in use and its sections as they were, or the newer header and its
//! sections. The file's pages are written over again instead of filling a second file: a
//! second file is fresh memory and fresh blocks for every byte of it, the largest cost of
//! the snapshots during a bulk load (CHANGELOG.md, benchmark history, note 4).
//!
//! A file that an open mapped is never written in place: its pages are the tables'. So the
//! first background snapshot after an open is written whole to another file. When a whole
//! snapshot replaces one this process wrote, that file is kept as the *spare*
//! (`crawldedup-snapshot.spare`) and the next whole snapshot is written over it
//! (`take_spare`); the first snapshot written in place removes it, and so does a close. An
//! open keeps a snapshot file a crash left unfinished or not yet in place as the spare
//! (`keep_leftovers`).

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::RwLock;

use xxhash_rust::xxh3::xxh3_64;

use super::manifest::row_checksum;
use super::memory::{Bucketed, CacheLine, Captured, Key, plain_bytes, with_capacity};
use super::plan::Plan;
use super::store::{ROW_BYTES, encode_row};
use super::tables::Memory;
use crate::fingerprint::BANDS;

mod early;
mod files;
mod header;
mod in_place;
mod read;
pub(super) use early::Early;
pub(super) use files::{
    closing_path, keep_leftovers, partial_path, path, put_in_place, ready_path, spare_path,
    take_spare,
};
pub(super) use header::Extent;
use header::{Delta, Header, Section, TableSections};
pub(super) use in_place::{InPlace, update_in_place};
pub(super) use read::{Refused, open};

/// File name of the snapshot, inside the index folder.
pub const SNAPSHOT_FILE: &str = "crawldedup-snapshot";

/// Version of the snapshot's layout (2: a count of documents per section; 3: two header
/// slots, sections anywhere; 4: delta sections).
const SNAPSHOT_VERSION: u32 = 4;

/// The oldest version read: a version-3 header is a version-4 one without deltas.
const OLDEST_SNAPSHOT_VERSION: u32 = 3;

/// Documents below which no snapshot is written: rebuilding 100,000 documents' tables takes
/// well under a tenth of a second.
pub const SNAPSHOT_MIN_DOCUMENTS: u64 = 100_000;

/// Where the sections start: two header slots (about 8 KB of JSON each for 26 tables) fit
/// before.
const FIRST_SECTION: u64 = 64 << 10;
/// Bytes of a header slot; slot `i` starts at `i * HEADER_SLOT`.
const HEADER_SLOT: u64 = FIRST_SECTION / 2;
/// Bytes before the header's JSON: its length and its xxh3, little-endian.
const HEADER_PREFIX: u64 = 16;
/// Table sections start on page boundaries: a table's lines are mapped on their own.
const SECTION_ALIGN: u64 = 4096;
/// Rows copied under one hold of the read lock (6.4 MB encoded).
const ROWS_STEP: u64 = 65_536;

/// What [`write`] wrote.
#[derive(Debug)]
pub(super) struct Written {
    /// The rows' extent.
    pub(super) extent: Extent,
    /// The most documents a section holds (what a checkpoint must cover before it is used).
    pub(super) documents: u64,
    /// Bytes of the file.
    pub(super) bytes: u64,
    /// Bytes of the sections written.
    pub(super) wrote: u64,
    /// Whether a section was copied whole (always, for a whole snapshot); an update in
    /// place of deltas alone copied none.
    pub(super) copied_whole: bool,
    /// Its header: what a later snapshot written in place starts from.
    header: Header,
}

/// Writes the snapshot of the index in `memory` to `target`, one section at a time under
/// the read lock (see the module doc); returns what it holds, or `None` when `stop()`
/// turned true between two sections (the file is then removed). A file already at
/// `target` (an earlier snapshot's, from [`take_spare`]) is written over and cut to the new
/// length; it is not a snapshot until its header, written last, is.
pub(super) fn write(
    target: &Path,
    plan: &Plan,
    memory: &RwLock<Memory>,
    stop: &dyn Fn() -> bool,
) -> std::io::Result<Option<Written>> {
    let result = write_sections(target, plan, memory, stop);
    if !matches!(result, Ok(Some(_))) {
        let _ = std::fs::remove_file(target);
    }
    result
}

fn write_sections(
    target: &Path,
    plan: &Plan,
    memory: &RwLock<Memory>,
    stop: &dyn Fn() -> bool,
) -> std::io::Result<Option<Written>> {
    // Read too: the rows' checksum is taken from what was written.
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(target)?;
    // A file written over may hold a header of its own in the second slot, newer than
    // this one's: it is cleared first, so that only this snapshot's header is ever read.
    file.seek(SeekFrom::Start(HEADER_SLOT))?;
    file.write_all(&[0; HEADER_PREFIX as usize])?;
    let (first_floor, rows_documents) = rows_extent(memory);
    let Some(rows) = write_rows(
        &mut file,
        memory,
        stop,
        FIRST_SECTION,
        first_floor,
        rows_documents,
    )?
    else {
        return Ok(None);
    };
    crate::faults::point("snapshot-rows-written");
    // The tables, each copied under the lock into one buffer, written after it.
    let mut at = section_end(&rows.section);
    let mut lines = copy_buffer(memory);
    let mut tables = Vec::with_capacity(plan.tables.len());
    let mut bands = Vec::with_capacity(BANDS);
    for t in 0..plan.tables.len() + BANDS {
        if stop() {
            return Ok(None);
        }
        let section = copy_table(memory, plan, t, &mut lines, &mut |bytes| {
            let section = write_section(&mut file, at, bytes)?;
            at = section_end(&section);
            Ok(Some(section))
        })?
        .expect("a section is always placed");
        if t < plan.tables.len() {
            tables.push(section);
        } else {
            bands.push(section);
        }
    }
    let header = Header::of(plan, 0, &rows, tables, bands);
    // A file written over may be longer than this snapshot: it ends with the last section.
    let end = (header.sections())
        .map(|(offset, len)| offset + len)
        .fold(FIRST_SECTION, u64::max);
    file.set_len(end)?;
    write_header(&mut file, &header)?;
    // No fsync: a snapshot that a power cut left incomplete fails its checksums and is set
    // aside; it only ever saves time.
    Ok(Some(Written {
        extent: header.extent(),
        documents: header.documents,
        bytes: at,
        wrote: header.sections().map(|(_, len)| len).sum(),
        copied_whole: true,
        header,
    }))
}

/// Where the next section may start after `section`: the next page boundary.
fn section_end(section: &Section) -> u64 {
    (section.offset + section.len).next_multiple_of(SECTION_ALIGN)
}

/// Writes `header` into its slot (`sequence % 2`) in one write.
fn write_header(file: &mut std::fs::File, header: &Header) -> std::io::Result<()> {
    let json = serde_json::to_vec(header).map_err(std::io::Error::other)?;
    if json.len() as u64 + HEADER_PREFIX > HEADER_SLOT {
        return Err(std::io::Error::other("snapshot header over 32 KiB"));
    }
    let mut slot = Vec::with_capacity(HEADER_PREFIX as usize + json.len());
    slot.extend_from_slice(&(json.len() as u64).to_le_bytes());
    slot.extend_from_slice(&xxh3_64(&json).to_le_bytes());
    slot.extend_from_slice(&json);
    file.seek(SeekFrom::Start(header.sequence % 2 * HEADER_SLOT))?;
    file.write_all(&slot)
}

/// Writes `bytes` at `at` and returns their section.
fn write_section(file: &mut std::fs::File, at: u64, bytes: &[u8]) -> std::io::Result<Section> {
    file.seek(SeekFrom::Start(at))?;
    file.write_all(bytes)?;
    Ok(Section {
        offset: at,
        len: bytes.len() as u64,
        xxh3: xxh3_64(bytes),
    })
}

/// The rows written in a snapshot, from `floor` to `documents`, and their checksum.
#[derive(Debug, Clone, Copy)]
struct Rows {
    section: Section,
    floor: u64,
    documents: u64,
    checksum: u64,
}

/// The rows a snapshot starts with: (the index's floor, its documents). They take
/// `ROW_BYTES` each; documents that expire while they are copied are left out.
fn rows_extent(memory: &RwLock<Memory>) -> (u64, u64) {
    let memory = memory.read().unwrap_or_else(|p| p.into_inner());
    (memory.base, memory.count())
}

/// Writes the rows of documents `first_floor..rows_documents` from `start` on, the row of
/// document `id` at `start + (id - first_floor) * ROW_BYTES`; none if `stop` said so on
/// the way. Rows that expire while they are copied are left out: the rows written then
/// start above `first_floor`.
fn write_rows(
    file: &mut std::fs::File,
    memory: &RwLock<Memory>,
    stop: &dyn Fn() -> bool,
    start: u64,
    first_floor: u64,
    rows_documents: u64,
) -> std::io::Result<Option<Rows>> {
    let read = || memory.read().unwrap_or_else(|p| p.into_inner());
    // The rows, newest first: documents below the floor may expire while they are copied,
    // and copying down to wherever the floor is then keeps the rows one unbroken run.
    let mut buffer: Vec<u8> = Vec::new();
    let (mut floor, mut rows_checksum) = (rows_documents, 0u64);
    loop {
        let memory = read();
        let low = floor
            .saturating_sub(ROWS_STEP)
            .max(memory.base)
            .max(first_floor);
        if low >= floor {
            break;
        }
        buffer.clear();
        for id in low..floor {
            let row = memory.doc(id).map(|doc| encode_row(*doc)).ok_or_else(|| {
                std::io::Error::other(format!("document {id} left memory while copied"))
            })?;
            rows_checksum = rows_checksum.wrapping_add(row_checksum(id, &row));
            buffer.extend_from_slice(&row);
        }
        drop(memory);
        file.seek(SeekFrom::Start(
            start + (low - first_floor) * ROW_BYTES as u64,
        ))?;
        file.write_all(&buffer)?;
        floor = low;
        if stop() {
            return Ok(None);
        }
    }
    let rows_offset = start + (floor - first_floor) * ROW_BYTES as u64;
    let rows_len = (rows_documents - floor) * ROW_BYTES as u64;
    Ok(Some(Rows {
        section: Section {
            offset: rows_offset,
            len: rows_len,
            xxh3: hash_back(file, rows_offset, rows_len)?,
        },
        floor,
        documents: rows_documents,
        checksum: rows_checksum,
    }))
}

/// The buffer the tables are copied into, taken and backed before any table is copied:
/// taken at the first copy, under the read lock, its fresh pages held the inserts up for
/// the longest wait of a 10 M bulk load where fresh memory comes slowly.
fn copy_buffer(memory: &RwLock<Memory>) -> Vec<CacheLine> {
    let most = {
        let memory = memory.read().unwrap_or_else(|p| p.into_inner());
        (memory.tables.iter().map(Bucketed::line_count))
            .chain(memory.bands.iter().map(Bucketed::line_count))
            .max()
            .unwrap_or(0)
    };
    let mut lines: Vec<CacheLine> = with_capacity(most);
    lines.resize(most, CacheLine::default());
    lines
}

/// Copies table `t` (the simhash tables, then the bands) into `lines` under the read lock,
/// places its tail into the copy after, and hands the copy's bytes to `write`, which writes
/// them and returns their section (`None`: not written, and none is returned).
fn copy_table(
    memory: &RwLock<Memory>,
    plan: &Plan,
    t: usize,
    lines: &mut Vec<CacheLine>,
    write: &mut dyn FnMut(&[u8]) -> std::io::Result<Option<Section>>,
) -> std::io::Result<Option<TableSections>> {
    let memory = memory.read().unwrap_or_else(|p| p.into_inner());
    let documents = memory.count();
    if t < plan.tables.len() {
        let captured = memory.tables[t].capture(lines);
        drop(memory);
        merged_section(captured, documents, lines, write)
    } else {
        let captured = memory.bands[t - plan.tables.len()].capture(lines);
        drop(memory);
        merged_section(captured, documents, lines, write)
    }
}

/// Writes a captured table through `write` and returns its section; `lines` holds the
/// copy and stays the buffer.
fn merged_section<K: Key>(
    captured: Captured<K>,
    documents: u64,
    lines: &mut Vec<CacheLine>,
    write: &mut dyn FnMut(&[u8]) -> std::io::Result<Option<Section>>,
) -> std::io::Result<Option<TableSections>> {
    let ((leading, floor, entries), merged) = captured.merge(lines);
    let Some(section) = write(plain_bytes(&merged))? else {
        return Ok(None);
    };
    Ok(Some(TableSections {
        leading,
        floor,
        entries,
        documents,
        lines: section,
        deltas: Vec::new(),
    }))
}

/// The xxh3 of `len` bytes of `file` from `offset`, read back.
fn hash_back(file: &mut std::fs::File, offset: u64, len: u64) -> std::io::Result<u64> {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    file.seek(SeekFrom::Start(offset))?;
    let mut piece = vec![0u8; 1 << 20];
    let mut left = len;
    while left > 0 {
        let n = left.min(piece.len() as u64) as usize;
        file.read_exact(&mut piece[..n])?;
        hasher.update(&piece[..n]);
        left -= n as u64;
    }
    Ok(hasher.digest())
}
