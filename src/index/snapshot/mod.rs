//! The snapshot: the in-memory index written out beside the database, and mapped by the
//! next open instead of being rebuilt.
//!
//! Rebuilding the tables from the stored rows is what an open of a large index spends its
//! time on: at 10 M documents, 26 tables of 10 M entries, about 3 GB of fresh memory that
//! the kernel must give page by page first (on the 2-core machine measured, 7.8 s of a
//! 9.6 s open, and the rows' read from sled 1.7 s more). A snapshot holds the tables' lines
//! and the rows; an open maps each table's section copy-on-write and reads the tables
//! straight from the page cache, and decodes the rows from it instead of from sled.
//!
//! # When one is written
//! - In the background, while the index is in use ([`super::upkeep`]): after a checkpoint,
//!   once the documents stored since the last snapshot reach a share of it, so that the
//!   documents an open after a crash must add stay a bounded share of the index.
//! - When the index closes holding what its last checkpoint recorded, unless the snapshot
//!   on disk already is that index.
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
//! layout, every section's checksum is right, and it holds no document the manifest does
//! not record. Rows below the manifest's floor (expired since) are skipped. The documents
//! after a section's count are read from sled and added to that table as its *tail* (see
//! `memory.rs`): a small table that probes read beside the mapped one, folded in by the
//! background upkeep later. The snapshot's row checksum over the manifest's rows plus that of the rows read from sled must
//! equal the manifest's, which proves the snapshot's rows are the database's. That is only
//! done while the documents after it are at most twice what it holds (see
//! `MAX_TIMES_AFTER` in `open.rs`), and never past a roll-back to a checkpoint it is newer
//! than.
//! Anything else (a snapshot far behind the database, of other rows, a file cut short or
//! overwritten, another machine's byte order, an older layout) is set aside with one line in
//! the log and the tables are rebuilt from sled as before: a snapshot can make an open
//! faster, never different. None is written below [`SNAPSHOT_MIN_DOCUMENTS`] (a rebuild
//! takes less than writing one).
//!
//! Layout: 8 bytes (little-endian length of the JSON header), 8 bytes (its xxh3), the
//! header as JSON, zero bytes up to 64 KiB, then the sections: the rows (encoded as in sled,
//! `ROW_BYTES` each), then, each on a page boundary, per table its lines as native integers.
//! The file is written under a temporary name and put in place by a rename (a swap of
//! names, on Linux: see `put_in_place`), so a crash while writing leaves the earlier file
//! or none. While an index is open the file must not be changed by anything else (the
//! state directory's lock keeps other crawldedup processes out).
//!
//! While the index is open, the file of the snapshot that the one in place replaced is kept
//! as the *spare* (`crawldedup-snapshot.spare`) when this process wrote it, and the next snapshot is
//! written over it (`take_spare`). A file that an open mapped is never kept: its pages are
//! the tables'. The folder then holds two snapshots' files between snapshots, as it did
//! while one was written; a close removes the spare. An open keeps a snapshot file a crash
//! left unfinished or not yet in place as the spare (`keep_leftovers`).

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::RwLock;

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

use super::manifest::row_checksum;
use super::memory::{Bucketed, Captured, Key, Line, plain_bytes, with_capacity};
use super::plan::Plan;
use super::store::{ROW_BYTES, encode_row};
use super::tables::Memory;
use crate::fingerprint::{BANDS, FINGERPRINT_VERSION};

mod early;
mod files;
mod read;
pub(super) use early::Early;
pub(super) use files::{
    closing_path, keep_leftovers, partial_path, path, put_in_place, ready_path, spare_path,
    take_spare,
};
pub(super) use read::{Refused, open};

/// File name of the snapshot, inside the index folder.
pub const SNAPSHOT_FILE: &str = "crawldedup-snapshot";

/// Version of the snapshot's layout (2: a count of documents per section).
const SNAPSHOT_VERSION: u32 = 2;

/// Documents below which no snapshot is written: rebuilding 100,000 documents' tables takes
/// well under a tenth of a second.
pub const SNAPSHOT_MIN_DOCUMENTS: u64 = 100_000;

/// Where the sections start: the header (about 8 KB of JSON for 26 tables) fits before.
const FIRST_SECTION: u64 = 64 << 10;
/// Bytes before the header's JSON: its length and its xxh3, little-endian.
const HEADER_PREFIX: u64 = 16;
/// Table sections start on page boundaries: a table's lines are mapped on their own.
const SECTION_ALIGN: u64 = 4096;
/// Rows copied under one hold of the read lock (6.4 MB encoded).
const ROWS_STEP: u64 = 65_536;

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Header {
    snapshot: u32,
    format: u32,
    fingerprint: u32,
    little_endian: bool,
    k: u32,
    blocks: u32,
    /// The most documents any section holds: a manifest must record at least as many.
    documents: u64,
    /// The rows held: documents `floor` to `rows_documents`.
    floor: u64,
    rows_documents: u64,
    /// Sum of the row checksums of the rows held.
    rows_checksum: u64,
    rows: Section,
    tables: Vec<TableSections>,
    bands: Vec<TableSections>,
}

#[derive(Debug, Serialize, Deserialize, PartialEq, Clone, Copy)]
struct Section {
    offset: u64,
    /// Bytes.
    len: u64,
    /// xxh3-64 of the bytes.
    xxh3: u64,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct TableSections {
    leading: u32,
    floor: u32,
    entries: u64,
    /// The table holds the entries of every document below this count, and none after.
    documents: u64,
    lines: Section,
}

/// What a snapshot describes: (documents, floor, row checksum) of its rows.
pub(super) type Extent = (u64, u64, u64);

/// What [`write`] wrote.
#[derive(Debug, Clone, Copy)]
pub(super) struct Written {
    /// The rows' extent.
    pub(super) extent: Extent,
    /// The most documents a section holds (what a checkpoint must cover before it is used).
    pub(super) documents: u64,
    /// Bytes of the file.
    pub(super) bytes: u64,
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
    let Some(Rows {
        section: rows,
        floor,
        documents: rows_documents,
        checksum: rows_checksum,
    }) = write_rows(&mut file, memory, stop)?
    else {
        return Ok(None);
    };
    crate::faults::point("snapshot-rows-written");
    // The tables, each copied under the lock into one buffer, written after it.
    let mut at = (rows.offset + rows.len).next_multiple_of(SECTION_ALIGN);
    let Some((tables, bands)) = write_tables(&mut file, &mut at, plan, memory, stop)? else {
        return Ok(None);
    };
    let documents = tables
        .iter()
        .chain(&bands)
        .map(|t| t.documents)
        .fold(rows_documents, u64::max);
    let header = Header {
        snapshot: SNAPSHOT_VERSION,
        format: super::INDEX_FORMAT_VERSION,
        fingerprint: FINGERPRINT_VERSION,
        little_endian: cfg!(target_endian = "little"),
        k: plan.k,
        blocks: plan.blocks.len() as u32,
        documents,
        floor,
        rows_documents,
        rows_checksum,
        rows,
        tables,
        bands,
    };
    let json = serde_json::to_vec(&header).map_err(std::io::Error::other)?;
    if json.len() as u64 + HEADER_PREFIX > FIRST_SECTION {
        return Err(std::io::Error::other("snapshot header over 64 KiB"));
    }
    // A file written over may be longer than this snapshot: it ends with the last section.
    let end = (header.tables.iter().chain(&header.bands))
        .map(|t| t.lines.offset + t.lines.len)
        .fold(header.rows.offset + header.rows.len, u64::max);
    file.set_len(end)?;
    file.seek(SeekFrom::Start(0))?;
    file.write_all(&(json.len() as u64).to_le_bytes())?;
    file.write_all(&xxh3_64(&json).to_le_bytes())?;
    file.write_all(&json)?;
    // No fsync: a snapshot that a power cut left incomplete fails its checksums and is set
    // aside; it only ever saves time.
    Ok(Some(Written {
        extent: (rows_documents, floor, rows_checksum),
        documents,
        bytes: at,
    }))
}

/// The rows written in a snapshot, from `floor` to `documents`, and their checksum.
struct Rows {
    section: Section,
    floor: u64,
    documents: u64,
    checksum: u64,
}

/// Writes the rows after the header's room; none if `stop` said so on the way.
fn write_rows(
    file: &mut std::fs::File,
    memory: &RwLock<Memory>,
    stop: &dyn Fn() -> bool,
) -> std::io::Result<Option<Rows>> {
    let read = || memory.read().unwrap_or_else(|p| p.into_inner());
    // The rows, newest first: documents below the floor may expire while they are copied,
    // and copying down to wherever the floor is then keeps the rows one unbroken run.
    let (first_floor, rows_documents) = {
        let memory = read();
        (memory.base, memory.count())
    };
    let mut buffer: Vec<u8> = Vec::new();
    let (mut floor, mut rows_checksum) = (rows_documents, 0u64);
    loop {
        let memory = read();
        let low = floor.saturating_sub(ROWS_STEP).max(memory.base);
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
            FIRST_SECTION + (low - first_floor) * ROW_BYTES as u64,
        ))?;
        file.write_all(&buffer)?;
        floor = low;
        if stop() {
            return Ok(None);
        }
    }
    let rows_offset = FIRST_SECTION + (floor - first_floor) * ROW_BYTES as u64;
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

/// The tables' sections, simhash tables then bands.
type TableList = (Vec<TableSections>, Vec<TableSections>);

/// Writes the tables from `*at` on, each copied under the lock into one buffer and
/// written after it; none if `stop` said so on the way.
fn write_tables(
    file: &mut std::fs::File,
    at: &mut u64,
    plan: &Plan,
    memory: &RwLock<Memory>,
    stop: &dyn Fn() -> bool,
) -> std::io::Result<Option<TableList>> {
    let read = || memory.read().unwrap_or_else(|p| p.into_inner());
    // The copy buffer's memory is taken and backed before any table is copied: taken at
    // the first copy, under the read lock, its fresh pages held the inserts up for up to
    // 176 ms at 10 M documents on the 2-core machine measured (where fresh memory comes
    // at under 1 GB/s), the longest wait of a bulk load.
    let most = {
        let memory = read();
        (memory.tables.iter().map(Bucketed::line_count))
            .chain(memory.bands.iter().map(Bucketed::line_count))
            .max()
            .unwrap_or(0)
    };
    let mut lines: Vec<Line> = with_capacity(most);
    lines.resize(most, Line::default());
    let mut tables = Vec::with_capacity(plan.tables.len());
    let mut bands = Vec::with_capacity(BANDS);
    for t in 0..plan.tables.len() + BANDS {
        if stop() {
            return Ok(None);
        }
        let section = {
            let memory = read();
            let documents = memory.count();
            if t < plan.tables.len() {
                let captured = memory.tables[t].capture(&mut lines);
                drop(memory);
                write_table(file, at, captured, documents, &mut lines)?
            } else {
                let captured = memory.bands[t - plan.tables.len()].capture(&mut lines);
                drop(memory);
                write_table(file, at, captured, documents, &mut lines)?
            }
        };
        if t < plan.tables.len() {
            tables.push(section);
        } else {
            bands.push(section);
        }
    }
    Ok(Some((tables, bands)))
}

/// Writes a captured table at `*at` (moved on past it, to the next page boundary) and
/// returns its section; `lines` holds the copy and stays the buffer.
fn write_table<K: Key>(
    file: &mut std::fs::File,
    at: &mut u64,
    captured: Captured<K>,
    documents: u64,
    lines: &mut Vec<Line>,
) -> std::io::Result<TableSections> {
    let ((leading, floor, entries), merged) = captured.merge(lines);
    let bytes = plain_bytes(&merged);
    file.seek(SeekFrom::Start(*at))?;
    file.write_all(bytes)?;
    let section = Section {
        offset: *at,
        len: bytes.len() as u64,
        xxh3: xxh3_64(bytes),
    };
    *at = (*at + section.len).next_multiple_of(SECTION_ALIGN);
    Ok(TableSections {
        leading,
        floor,
        entries,
        documents,
        lines: section,
    })
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
