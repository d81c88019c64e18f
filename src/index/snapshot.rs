//! The snapshot: the in-memory index written out when it closes, and mapped by the next open
//! instead of being rebuilt.
//!
//! Rebuilding the tables from the stored rows is what an open of a large index spends its
//! time on: at 10 M documents, 26 tables of 10 M entries sorted by bucket, about 3 GB of
//! fresh memory that the kernel must zero page by page first (on the 2-core machine
//! measured, 5.4 s of an 8.0 s open, and the rows' read from sled 1.5 s more). A clean close
//! writes the tables' arrays and the rows to one file beside the database; the next open
//! maps each table's section copy-on-write and reads the tables straight from the page cache
//! (a page is copied into memory of its own when an insert first writes to it, and a table
//! that grows moves to memory of its own), and decodes the rows from it instead of from sled.
//!
//! A snapshot is used when it is the index the manifest describes, or that index as it
//! was at fewer documents: the same formats, layout and floor, and every section's checksum
//! right (each row's checksum is summed on the way, as an open from sled does). A snapshot
//! of fewer documents is what a crash leaves when the index was opened from it and stored
//! more before the crash: the documents after it are read from sled and added to the
//! tables (on every core, one table per job), and the snapshot's row checksum plus theirs
//! must equal the manifest's, which proves the snapshot's rows are the database's. That
//! is only done while the documents after it are at most a sixteenth of those in it and
//! fit every table without a growth (past that a rebuild is faster: an insert into a
//! mapped page copies the page first, and a growth re-places every entry), and never past
//! a roll-back to a checkpoint it is newer than.
//! Anything else (a snapshot far behind the database, of other rows, a file cut short or
//! overwritten, another machine's byte order) is set aside with one line in the log and the
//! tables are rebuilt from sled as before: a snapshot can make an open faster, never
//! different. It is written only when the index holds at least
//! [`SNAPSHOT_MIN_DOCUMENTS`] (below that a rebuild takes less than writing it), only when
//! memory holds exactly what the last checkpoint's manifest recorded, and never over the
//! snapshot the index was opened from when nothing changed since.
//!
//! Layout: 8 bytes (little-endian length of the JSON header), the [`Header`] as JSON, zero
//! bytes up to 64 KiB, then the sections, each starting on a page boundary: the rows (encoded as in sled, [`ROW_BYTES`] each), then per table its offsets,
//! keys and ids as native integers. The file is written under a temporary name and renamed
//! into place, so a crash while writing leaves the earlier file or none. While an index is
//! open the file must not be changed by anything else (the state directory's lock keeps
//! other crawldedup processes out).

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

use super::manifest::{Manifest, row_checksum};
use super::memory::{Bucketed, Column, Key, Line, Plain, plain_bytes};
use super::plan::Plan;
use super::store::{ROW_BYTES, decode_row, encode_row};
use super::tables::Memory;
use crate::fingerprint::{BANDS, FINGERPRINT_VERSION};

/// File name of the snapshot, inside the index folder.
pub const SNAPSHOT_FILE: &str = "crawldedup-snapshot";

/// Version of the snapshot's layout.
const SNAPSHOT_VERSION: u32 = 1;

/// Documents below which no snapshot is written: rebuilding 100,000 documents' tables takes
/// well under a tenth of a second.
pub const SNAPSHOT_MIN_DOCUMENTS: u64 = 100_000;

/// Where the sections start: the header (about 7 KB of JSON for 26 tables) fits before.
const FIRST_SECTION: u64 = 64 << 10;
/// Sections start on page boundaries: a table's lines are mapped on their own.
const SECTION_ALIGN: u64 = 4096;

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Header {
    snapshot: u32,
    format: u32,
    fingerprint: u32,
    little_endian: bool,
    k: u32,
    blocks: u32,
    documents: u64,
    floor: u64,
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
    lines: Section,
}

/// Path of the snapshot of the index in `dir`.
pub(super) fn path(dir: &Path) -> PathBuf {
    dir.join(SNAPSHOT_FILE)
}

/// What a snapshot describes: (documents, floor, row checksum).
pub(super) type Extent = (u64, u64, u64);

/// Writes the snapshot of `memory` for the index in `dir`. `memory` must hold exactly what the manifest on disk records.
pub(super) fn write(dir: &Path, plan: &Plan, memory: &Memory) -> std::io::Result<()> {
    let final_path = path(dir);
    let temporary = dir.join(format!("{SNAPSHOT_FILE}.partial"));
    let file = std::fs::File::create(&temporary)?;
    let mut out = Sections::new(BufWriter::with_capacity(1 << 20, file));
    out.seek_to(FIRST_SECTION)?;
    let rows = out.section_with(|w| {
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        for row in &memory.docs {
            let bytes = encode_row(*row);
            hasher.update(&bytes);
            w.write_all(&bytes)?;
        }
        Ok(hasher.digest())
    })?;
    let tables = memory
        .tables
        .iter()
        .map(|t| out.table(t))
        .collect::<std::io::Result<Vec<_>>>()?;
    let bands = memory
        .bands
        .iter()
        .map(|t| out.table(t))
        .collect::<std::io::Result<Vec<_>>>()?;
    let header = Header {
        snapshot: SNAPSHOT_VERSION,
        format: super::INDEX_FORMAT_VERSION,
        fingerprint: FINGERPRINT_VERSION,
        little_endian: cfg!(target_endian = "little"),
        k: plan.k,
        blocks: plan.blocks.len() as u32,
        documents: memory.count(),
        floor: memory.base,
        rows_checksum: memory.checksum,
        rows,
        tables,
        bands,
    };
    let json = serde_json::to_vec(&header).map_err(std::io::Error::other)?;
    if json.len() as u64 + 8 > FIRST_SECTION {
        return Err(std::io::Error::other("snapshot header over 64 KiB"));
    }
    let mut file = out.finish()?;
    use std::io::Seek;
    file.seek(std::io::SeekFrom::Start(0))?;
    file.write_all(&(json.len() as u64).to_le_bytes())?;
    file.write_all(&json)?;
    // No fsync: a snapshot that a power cut left incomplete fails its checksums and is set
    // aside; it only ever saves time.
    drop(file);
    std::fs::rename(&temporary, &final_path)
}

/// A writer that places sections on aligned offsets and hashes them.
struct Sections<W: Write> {
    out: W,
    at: u64,
}

impl Sections<BufWriter<std::fs::File>> {
    fn new(out: BufWriter<std::fs::File>) -> Self {
        Sections { out, at: 0 }
    }

    fn seek_to(&mut self, offset: u64) -> std::io::Result<()> {
        const ZEROS: [u8; 4096] = [0; 4096];
        while self.at < offset {
            let n = (offset - self.at).min(ZEROS.len() as u64) as usize;
            self.out.write_all(&ZEROS[..n])?;
            self.at += n as u64;
        }
        Ok(())
    }

    /// A section written by `body`, which returns the xxh3 of what it wrote.
    fn section_with(
        &mut self,
        body: impl FnOnce(&mut CountingWriter<'_>) -> std::io::Result<u64>,
    ) -> std::io::Result<Section> {
        self.seek_to(self.at.next_multiple_of(SECTION_ALIGN))?;
        let offset = self.at;
        let mut counting = CountingWriter {
            out: &mut self.out,
            written: 0,
        };
        let xxh3 = body(&mut counting)?;
        let len = counting.written;
        self.at += len;
        Ok(Section { offset, len, xxh3 })
    }

    fn array<T: Plain>(&mut self, values: &[T]) -> std::io::Result<Section> {
        let bytes = plain_bytes(values);
        self.section_with(|w| {
            w.write_all(bytes)?;
            Ok(xxh3_64(bytes))
        })
    }

    fn table<K: Key>(&mut self, table: &Bucketed<K>) -> std::io::Result<TableSections> {
        let ((leading, floor, entries), lines) = table.parts();
        Ok(TableSections {
            leading,
            floor,
            entries,
            lines: self.array(lines)?,
        })
    }

    fn finish(self) -> std::io::Result<std::fs::File> {
        self.out.into_inner().map_err(|e| e.into_error())
    }
}

struct CountingWriter<'a> {
    out: &'a mut BufWriter<std::fs::File>,
    written: u64,
}

impl Write for CountingWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Why a snapshot was not used.
pub(super) enum Refused {
    /// There is none.
    Missing,
    /// It is not this index's, or not this build's (a line saying how, for the log).
    Stale(String),
    /// It is damaged (a line saying how).
    Damaged(String),
}

/// The in-memory index of the snapshot in `dir`, if it is the index that `manifest`
/// describes under `plan`, or that index as it was at fewer documents (see the module
/// doc); the row and section checksums are checked on every core.
pub(super) fn open(dir: &Path, plan: &Plan, manifest: &Manifest) -> Result<Memory, Refused> {
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
    let stale = |what: String| Err(Refused::Stale(what));
    if header.snapshot != SNAPSHOT_VERSION
        || header.format != super::INDEX_FORMAT_VERSION
        || header.fingerprint != FINGERPRINT_VERSION
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
    // The manifest's documents, or fewer (the rest are read from sled after it, and the
    // checksum of both together is checked against the manifest's then).
    let same =
        header.documents == manifest.documents && header.rows_checksum == manifest.rows_checksum;
    if header.floor != manifest.floor || !(same || header.documents < manifest.documents) {
        return stale(format!(
            "of {} documents from {}, the manifest records {} from {}",
            header.documents, header.floor, manifest.documents, manifest.floor
        ));
    }
    let rows_wanted = (header.documents - header.floor) as usize;
    if header.rows.len != (rows_wanted * ROW_BYTES) as u64 {
        return Err(Refused::Damaged(
            "its rows section has the wrong length".into(),
        ));
    }
    let bytes = |s: &Section| -> Result<&[u8], Refused> {
        usize::try_from(s.offset)
            .ok()
            .zip(usize::try_from(s.len).ok())
            .and_then(|(start, len)| map.get(start..start.checked_add(len)?))
            .ok_or_else(|| Refused::Damaged("a section lies past the end of the file".into()))
    };
    let rows_bytes = bytes(&header.rows)?;
    // The sections are checked on every core: the rows (decoded and summed on the way) on
    // this thread, the table sections on the others, taken in turn.
    let sections: Vec<&Section> = header
        .tables
        .iter()
        .chain(&header.bands)
        .map(|t| &t.lines)
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
        let rows = decode_rows(rows_bytes, &header);
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
    let docs = rows?;
    fn table<K: Key>(file: &std::fs::File, t: &TableSections) -> Result<Bucketed<K>, Refused> {
        let width = std::mem::size_of::<Line>() as u64;
        if t.lines.len % width != 0 || t.lines.offset % SECTION_ALIGN != 0 {
            return Err(Refused::Damaged("a table section is misplaced".into()));
        }
        let len = usize::try_from(t.lines.len / width).unwrap_or(usize::MAX);
        let lines = Column::mapped(file, t.lines.offset, len)
            .map_err(|e| Refused::Damaged(format!("a table section cannot be mapped: {e}")))?;
        Bucketed::from_parts((t.leading, t.floor, t.entries), lines)
            .ok_or_else(|| Refused::Damaged("a table's shape does not fit its lines".into()))
    }
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
    Ok(Memory {
        checksum: header.rows_checksum,
        tables,
        bands,
        base: header.floor,
        docs: docs.into(),
    })
}

fn read_header(map: &[u8]) -> Result<Header, Refused> {
    let damaged = |what: &str| Refused::Damaged(what.to_string());
    let len = map
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
        .ok_or_else(|| damaged("it is shorter than its header"))?;
    let json = usize::try_from(len)
        .ok()
        .filter(|&len| len as u64 + 8 <= FIRST_SECTION)
        .and_then(|len| map.get(8..8 + len))
        .ok_or_else(|| damaged("its header is cut short"))?;
    serde_json::from_slice(json).map_err(|e| Refused::Damaged(format!("its header: {e}")))
}

/// The rows of the snapshot, checked against their section checksum and, row by row, against
/// the manifest's row checksum.
fn decode_rows(bytes: &[u8], header: &Header) -> Result<Vec<super::Stored>, Refused> {
    let damaged = |what: &str| Err(Refused::Damaged(what.to_string()));
    if xxh3_64(bytes) != header.rows.xxh3 {
        return damaged("its rows fail their checksum");
    }
    let mut docs = super::memory::with_capacity(bytes.len() / ROW_BYTES);
    let mut sum = 0u64;
    for (i, row) in bytes.chunks_exact(ROW_BYTES).enumerate() {
        sum = sum.wrapping_add(row_checksum(header.floor + i as u64, row));
        match decode_row(row) {
            Some(doc) => docs.push(doc),
            None => return damaged("it holds an unreadable row"),
        }
    }
    if sum != header.rows_checksum {
        return damaged("its rows do not add up to the manifest's checksum");
    }
    Ok(docs)
}
