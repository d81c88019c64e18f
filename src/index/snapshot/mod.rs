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
//! A snapshot is used when it is of this index's formats and layout, every section's
//! checksum is right, and it holds no document the manifest does not record. Rows below
//! the manifest's floor (expired since) are skipped. The documents after a section's count
//! are read from sled and added to that table as its *tail* (see `memory.rs`): a small table
//! that probes read beside the mapped one, folded in by the background upkeep later. The
//! snapshot's row checksum over the manifest's rows plus that of the rows read from sled must
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
//! or none. While an index is open the file must not be
//! changed by anything else (the state directory's lock keeps other crawldedup processes
//! out).
//!
//! While the index is open, the file of the snapshot that the one in place replaced is kept
//! as the *spare* (`crawldedup-snapshot.spare`) when this process wrote it, and the next snapshot is
//! written over it (`take_spare`). A file that an open mapped is never kept: its pages are
//! the tables'. The folder then holds two snapshots' files between snapshots, as it did
//! while one was written; a close removes the spare. An open keeps a snapshot file a crash
//! left unfinished or not yet in place as the spare (`keep_leftovers`).

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::RwLock;

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

use super::manifest::row_checksum;
use super::memory::{Captured, Key, Line, plain_bytes};
use super::plan::Plan;
use super::store::{ROW_BYTES, encode_row};
use super::tables::Memory;
use crate::fingerprint::{BANDS, FINGERPRINT_VERSION};

mod read;
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

/// Path of the snapshot of the index in `dir`.
pub(super) fn path(dir: &Path) -> PathBuf {
    dir.join(SNAPSHOT_FILE)
}

/// Path of a snapshot being written.
pub(super) fn partial_path(dir: &Path) -> PathBuf {
    dir.join(format!("{SNAPSHOT_FILE}.partial"))
}

/// Path of the snapshot a close is writing.
pub(super) fn closing_path(dir: &Path) -> PathBuf {
    dir.join(format!("{SNAPSHOT_FILE}.closing"))
}

/// Path of a snapshot written in the background, waiting for a checkpoint to cover it.
pub(super) fn ready_path(dir: &Path) -> PathBuf {
    dir.join(format!("{SNAPSHOT_FILE}.ready"))
}

/// Path of the file of the snapshot that the one in place replaced, kept while the index is
/// open for the next snapshot to be written over (see [`take_spare`]).
pub(super) fn spare_path(dir: &Path) -> PathBuf {
    dir.join(format!("{SNAPSHOT_FILE}.spare"))
}

/// What an open does with the files a crash left beside the snapshot in place: a snapshot
/// unfinished, written and not yet put in place, or swapped out of place and not yet
/// renamed (see [`put_in_place`]), becomes the spare (the first snapshot of the session is
/// written over it), and any other is removed; a spare that is a second
/// name of the file in place (a crash between the link and the rename in
/// [`put_in_place`]) is removed, since written over it would damage the snapshot. Removing
/// a file of a few gigabytes takes a third of a second (3.7 GB at 10 M documents, on the
/// machine measured): not on the path of an open after a crash when it can be helped.
pub(super) fn keep_leftovers(dir: &Path) {
    let spare = spare_path(dir);
    if !cfg!(unix) {
        // Which file a name stands for is not known here: nothing is kept.
        for leftover in [partial_path(dir), ready_path(dir), closing_path(dir), spare] {
            let _ = std::fs::remove_file(leftover);
        }
        return;
    }
    let in_place = file_id(&path(dir));
    if in_place.is_some() && file_id(&spare) == in_place {
        let _ = std::fs::remove_file(&spare);
    }
    for leftover in [partial_path(dir), ready_path(dir), closing_path(dir)] {
        let Some(id) = file_id(&leftover) else {
            continue;
        };
        let kept = file_id(&spare).is_none()
            && Some(id) != in_place
            && std::fs::rename(&leftover, &spare).is_ok();
        if !kept {
            let _ = std::fs::remove_file(&leftover);
        }
    }
}

/// Which file `path` names (device and inode), if it names one (`None` on systems other
/// than Unix).
fn file_id(path: &Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::symlink_metadata(path)
            .ok()
            .map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// Moves the spare file of the index in `dir`, if there is one, to `target`, which the next
/// [`write`] then writes over. Writing over the pages and blocks of a file the system
/// already holds is faster than filling a new file and freeing the old one's: the 10 M
/// index bench's last background snapshot (3.6 GB) took 4.5-4.8 s this way against
/// 7.2-9.6 s into new files (three runs each, alternated, on the 2-core machine measured;
/// `docs/benchmarks.md`, note 4), so fewer documents arrive while one is written. A spare
/// that cannot be moved is left, and the snapshot written to a new file.
pub(super) fn take_spare(dir: &Path, target: &Path) {
    match std::fs::rename(spare_path(dir), target) {
        Ok(()) => crate::faults::point("snapshot-spare-taken"),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => tracing::debug!("{}: the spare snapshot file stays ({e})", dir.display()),
    }
}

/// Puts the snapshot file at `from` in place in `dir`. The file it replaces becomes the
/// spare when `keep_old` (its name `from` meanwhile, if a crash comes between), else it is
/// removed.
///
/// On Linux the two files swap names in one step (`renameat2` with `RENAME_EXCHANGE`)
/// where the file system can, instead of a rename over the file in place. ext4 (its
/// default `auto_da_alloc`) writes out every dirty page of a file renamed over another
/// before the rename returns: a snapshot just written is gigabytes of dirty pages (3.5 GB
/// at the 10 M index bench's end), and that write took 0.23 s a gigabyte on the machine
/// measured, with the index's upkeep state locked, which the inserting thread's checkpoint
/// waits for. A swap, or a rename to a free name, leaves the pages to the system's
/// writeback like any other file's. Elsewhere (and when the swap is refused) a second name
/// of the file in place is made first, and the new file renamed over it.
pub(super) fn put_in_place(from: &Path, dir: &Path, keep_old: bool) -> std::io::Result<()> {
    put_in_place_by(from, dir, keep_old, exchange)
}

/// [`put_in_place`] with the swap of names it tries first.
fn put_in_place_by(
    from: &Path,
    dir: &Path,
    keep_old: bool,
    exchange: fn(&Path, &Path) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let in_place = path(dir);
    let spare = spare_path(dir);
    if keep_old {
        let _ = std::fs::remove_file(&spare);
    }
    match exchange(from, &in_place) {
        Ok(()) => {
            crate::faults::point("snapshot-exchanged");
            // `from` now names the file that was in place.
            let kept = keep_old && std::fs::rename(from, &spare).is_ok();
            if !kept {
                let _ = std::fs::remove_file(from);
            }
            return Ok(());
        }
        // Nothing in place: a rename to a free name.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && from.exists() => {
            return std::fs::rename(from, &in_place);
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(e),
        Err(e) => tracing::debug!(
            "{}: the snapshot files cannot swap names ({e}): renamed over",
            dir.display()
        ),
    }
    if keep_old {
        // A second name for the file in place, so that the rename below leaves it.
        if let Err(e) = std::fs::hard_link(&in_place, &spare) {
            tracing::debug!("{}: no spare snapshot file kept ({e})", dir.display());
        }
        crate::faults::point("snapshot-spare-linked");
    }
    std::fs::rename(from, &in_place).inspect_err(|_| {
        // The spare would be the snapshot in place: written over, it would damage it.
        if keep_old {
            let _ = std::fs::remove_file(&spare);
        }
    })
}

/// Swaps the names `a` and `b` in one step (both must exist).
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c =
        |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(std::io::Error::other);
    let (a, b) = (c(a)?, c(b)?);
    // SAFETY: both are NUL-terminated paths that live across the call; renameat2 reads them
    // and returns an integer, with errno set on failure.
    let done = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if done == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// No swap of names here: the caller renames over the file in place.
#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> std::io::Result<()> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
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
    let mut lines: Vec<Line> = Vec::new();
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

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(_: &Path, _: &Path) -> std::io::Result<()> {
        Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
    }

    /// The files in `dir`: (in place, spare, `from`), as their contents.
    fn files(dir: &Path, from: &Path) -> [Option<Vec<u8>>; 3] {
        [path(dir), spare_path(dir), from.to_path_buf()].map(|p| std::fs::read(p).ok())
    }

    #[test]
    fn a_snapshot_put_in_place_by_a_swap_or_a_rename_keeps_the_old_file_as_the_spare_or_drops_it() {
        let some = |s: &str| Some(s.as_bytes().to_vec());
        for swap in [exchange, refused] {
            let dir = tempfile::tempdir().unwrap();
            let from = ready_path(dir.path());
            // Nothing in place yet: a rename.
            std::fs::write(&from, "first").unwrap();
            put_in_place_by(&from, dir.path(), true, swap).unwrap();
            assert_eq!(files(dir.path(), &from), [some("first"), None, None]);
            // The file it replaces kept as the spare, over an older spare.
            std::fs::write(spare_path(dir.path()), "older").unwrap();
            std::fs::write(&from, "second").unwrap();
            put_in_place_by(&from, dir.path(), true, swap).unwrap();
            assert_eq!(
                files(dir.path(), &from),
                [some("second"), some("first"), None]
            );
            // Or removed, and the spare left as it is.
            std::fs::write(&from, "third").unwrap();
            put_in_place_by(&from, dir.path(), false, swap).unwrap();
            assert_eq!(
                files(dir.path(), &from),
                [some("third"), some("first"), None]
            );
            // No file to put in place: an error, and the one in place untouched.
            assert!(put_in_place_by(&from, dir.path(), true, swap).is_err());
            assert_eq!(std::fs::read(path(dir.path())).unwrap(), b"third");
        }
    }
}
