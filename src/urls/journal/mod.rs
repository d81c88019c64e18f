//! The URL journal: URLs recorded as new since the filter was last saved, made durable
//! before their verdict goes out.
//!
//! A saved filter (`seen-urls.bloom`) holds what was recorded up to its checkpoint. A
//! caller that answers "new" to someone else (the sidecar's `POST /v1/urls/check`) must not
//! forget that answer in a crash, yet cannot save a filter of many megabytes per request.
//! So each new URL is also appended to a journal, and [`SeenUrls::sync`](super::SeenUrls::sync) makes everything
//! appended durable with one `fdatasync` shared by every caller waiting at that moment (a
//! group commit).
//!
//! # Files
//! `seen-urls.journal.SEQ`, one per generation. A header (magic, format version, hash
//! seed, generation `SEQ`, xxh3 check of the header) and 40-byte records: the URL's 64-bit
//! filter hash, its 128-bit confirmation hash, the time slice of the filter generation it
//! went into (see [`SeenUrls`](super::SeenUrls)), and an xxh3 check of them seeded with `SEQ`
//! (so a record copied from another generation does not read as valid).
//!
//! # Generations
//! Saving the filter at checkpoint `S` copies the bits and switches the journal to
//! generation `S` in one step (under the filter's write lock): every URL is then either in
//! the copy or in a journal of generation `S` or later. The old generation is synced
//! before the switch and deleted only after the new filter file is in place. Opening
//! replays every generation at or after the saved filter's sequence and deletes older
//! ones; a crash between the switch and the rename therefore replays the old generation
//! and the new one over the old filter, and loses nothing.
//!
//! # Torn writes and damage
//! Records after the last sync of the newest generation were never answered: a kill can
//! leave them half written, and opening cuts such a tail off. A record that fails its
//! check anywhere else (followed by valid records, or in an older generation, which was
//! synced whole before the switch) is damage, and opening refuses with the file and the
//! record named. A journal cut short at a record boundary cannot be told from one that was
//! never longer; it loses the answers past the cut, as a cut write-ahead log does.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::seen::URL_HASH_SEED;
use crate::state_id::StateId;

/// File names of the journal generations: this prefix and the generation number.
pub const JOURNAL_PREFIX: &str = "seen-urls.journal.";

const MAGIC: &[u8; 8] = b"CDSEENJ\n";
/// Version 3: the state directory's id ([`crate::ledger`]) in the header, after the
/// generation. Version 2 (still read; its directory id reads as 0): 40-byte records
/// (xxh3-64 filter hash, xxh3-128 confirmation hash, the time slice of the filter
/// generation it went into, check), as in version 3.
const FORMAT_VERSION: u32 = 3;
const HEADER_LEN: usize = 8 + 4 + 8 + 8 + 16 + 8;
const V2_HEADER_LEN: usize = 8 + 4 + 8 + 8 + 8;
/// A version-3 generation grows by this many bytes of zeros (1,024 records) at a time, so
/// its length is always its header and whole chunks: a file cut short anywhere but at a
/// chunk boundary is told from one whose last records were never written.
const CHUNK: u64 = RECORD_LEN as u64 * 1024;
const RECORD_LEN: usize = 40;

/// One URL recorded as new: its filter hash, its confirmation hash, and the time slice of
/// the filter generation it was recorded in (0 for a filter that never forgets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Entry {
    pub hash: u64,
    pub hash128: u128,
    pub slice: u64,
}

/// A journal generation read from disk.
#[derive(Debug)]
pub(crate) struct Generation {
    pub seq: u64,
    pub path: PathBuf,
    pub entries: Vec<Entry>,
    /// Length of the valid part (header and whole, checked records).
    pub valid_len: u64,
    /// Length of the file as allocated (version 3: the header and whole chunks).
    pub allocated: u64,
    /// Whether it grows in whole chunks (version 3); a version-2 file grows by its records.
    pub chunked: bool,
}

/// The path of generation `seq` in `dir`.
pub(crate) fn path_of(dir: &Path, seq: u64) -> PathBuf {
    dir.join(format!("{JOURNAL_PREFIX}{seq}"))
}

fn header(seq: u64, state_id: StateId) -> [u8; HEADER_LEN] {
    let mut out = [0; HEADER_LEN];
    out[..8].copy_from_slice(MAGIC);
    out[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    out[12..20].copy_from_slice(&URL_HASH_SEED.to_le_bytes());
    out[20..28].copy_from_slice(&seq.to_le_bytes());
    out[28..44].copy_from_slice(&state_id.to_le_bytes());
    let check = xxh3_64_with_seed(&out[..44], 0);
    out[44..].copy_from_slice(&check.to_le_bytes());
    out
}

/// The header of a version-2 generation (no directory id).
fn header_v2(seq: u64) -> [u8; V2_HEADER_LEN] {
    let mut out = [0; V2_HEADER_LEN];
    out[..8].copy_from_slice(MAGIC);
    out[8..12].copy_from_slice(&2u32.to_le_bytes());
    out[12..20].copy_from_slice(&URL_HASH_SEED.to_le_bytes());
    out[20..28].copy_from_slice(&seq.to_le_bytes());
    let check = xxh3_64_with_seed(&out[..28], 0);
    out[28..].copy_from_slice(&check.to_le_bytes());
    out
}

/// Checks the header of generation `seq` at the start of `bytes`: its length and the
/// directory id it names, or what is wrong with it.
fn check_header(seq: u64, bytes: &[u8]) -> Result<(usize, StateId), String> {
    if bytes.len() < 12 {
        return Err(format!(
            "damaged: {} bytes, shorter than the journal header",
            bytes.len()
        ));
    }
    if &bytes[..8] != MAGIC {
        return Err("not a crawldedup URL journal (bad magic bytes)".into());
    }
    let wrong = || {
        format!(
            "damaged header (or one of another format version, hash seed or generation than \
             {seq})"
        )
    };
    match u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes")) {
        2 if bytes.len() >= V2_HEADER_LEN && bytes[..V2_HEADER_LEN] == header_v2(seq) => {
            Ok((V2_HEADER_LEN, 0))
        }
        FORMAT_VERSION if bytes.len() >= HEADER_LEN => {
            let id = u128::from_le_bytes(bytes[28..44].try_into().expect("16 bytes"));
            if bytes[..HEADER_LEN] == header(seq, id) {
                Ok((HEADER_LEN, id))
            } else {
                Err(wrong())
            }
        }
        2 | FORMAT_VERSION => Err(format!(
            "damaged: {} bytes, shorter than the journal header",
            bytes.len()
        )),
        _ => Err(wrong()),
    }
}

fn record(seq: u64, entry: Entry) -> [u8; RECORD_LEN] {
    let mut out = [0; RECORD_LEN];
    out[..8].copy_from_slice(&entry.hash.to_le_bytes());
    out[8..24].copy_from_slice(&entry.hash128.to_le_bytes());
    out[24..32].copy_from_slice(&entry.slice.to_le_bytes());
    let check = xxh3_64_with_seed(&out[..32], seq);
    out[32..].copy_from_slice(&check.to_le_bytes());
    out
}

fn read_record(seq: u64, bytes: &[u8]) -> Option<Entry> {
    let le64 = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes"));
    if le64(&bytes[32..40]) != xxh3_64_with_seed(&bytes[..32], seq) {
        return None;
    }
    Some(Entry {
        hash: le64(&bytes[..8]),
        hash128: u128::from_le_bytes(bytes[8..24].try_into().expect("16 bytes")),
        slice: le64(&bytes[24..32]),
    })
}

/// Every journal generation in `dir`, oldest first. `Err` names the file and what is wrong
/// with it: a bad header, a damaged record, or (in any generation but the newest, which
/// was synced whole before the next began) a torn tail.
pub(crate) fn read_all(dir: &Path) -> Result<Vec<Generation>, (PathBuf, String)> {
    let mut found = Vec::new();
    let listing = match fs::read_dir(dir) {
        Ok(listing) => listing,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err((dir.to_path_buf(), e.to_string())),
    };
    for item in listing {
        let item = item.map_err(|e| (dir.to_path_buf(), e.to_string()))?;
        let name = item.file_name();
        let Some(seq) = name
            .to_str()
            .and_then(|n| n.strip_prefix(JOURNAL_PREFIX))
            .and_then(|n| n.parse::<u64>().ok())
        else {
            continue;
        };
        found.push((seq, item.path()));
    }
    found.sort();
    let newest = found.last().map(|(seq, _)| *seq);
    let mut generations = Vec::with_capacity(found.len());
    for (seq, path) in found {
        let bytes = fs::read(&path).map_err(|e| (path.clone(), e.to_string()))?;
        let generation =
            parse(seq, &bytes, Some(seq) == newest).map_err(|problem| (path.clone(), problem))?;
        generations.push(Generation {
            seq,
            path,
            entries: generation.0,
            valid_len: generation.1,
            allocated: generation.2,
            // The header parsed: its version is 2 or this one.
            chunked: bytes.get(8..12) == Some(&FORMAT_VERSION.to_le_bytes()[..]),
        });
    }
    Ok(generations)
}

/// The generations in `dir` with the directory id each header names (or what is wrong with
/// it), from the headers alone.
pub(crate) fn read_headers(dir: &Path) -> Vec<(u64, Result<StateId, String>)> {
    use std::io::Read;
    let Ok(listing) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(u64, Result<StateId, String>)> = listing
        .flatten()
        .filter_map(|item| {
            let seq = item
                .file_name()
                .to_str()?
                .strip_prefix(JOURNAL_PREFIX)?
                .parse::<u64>()
                .ok()?;
            let mut head = Vec::with_capacity(HEADER_LEN);
            let read = File::open(item.path())
                .and_then(|f| f.take(HEADER_LEN as u64).read_to_end(&mut head))
                .map_err(|e| e.to_string());
            Some((
                seq,
                read.and_then(|_| check_header(seq, &head).map(|(_, id)| id)),
            ))
        })
        .collect();
    found.sort_by_key(|(seq, _)| *seq);
    found
}

/// The entries of generation `seq`, the length of its valid part, and the length it keeps
/// allocated (a version-2 file none past its valid part: it is appended to as it was).
fn parse(seq: u64, bytes: &[u8], newest: bool) -> Result<(Vec<Entry>, u64, u64), String> {
    let (header_len, _) = check_header(seq, bytes)?;
    let body = &bytes[header_len..];
    let allocated_in_chunks = header_len == HEADER_LEN;
    if allocated_in_chunks && body.len() as u64 % CHUNK != 0 {
        return Err(format!(
            "cut short: {} bytes after the header, not whole chunks of {CHUNK}: records the \
             journal held are gone",
            body.len()
        ));
    }
    let mut entries = Vec::with_capacity(body.len() / RECORD_LEN);
    let mut chunks = body.chunks(RECORD_LEN);
    for (i, chunk) in chunks.by_ref().enumerate() {
        let unwritten = allocated_in_chunks && chunk.iter().all(|&b| b == 0);
        match (chunk.len() == RECORD_LEN && !unwritten)
            .then(|| read_record(seq, chunk))
            .flatten()
        {
            Some(entry) => entries.push(entry),
            None if unwritten => {
                // The allocated space after the last record: nothing may follow in it.
                let rest = &body[i * RECORD_LEN..];
                if rest.iter().any(|&b| b != 0) {
                    return Err(format!(
                        "damaged: bytes after the last record (record {})",
                        i + 1
                    ));
                }
                break;
            }
            None => {
                let rest = &body[(i * RECORD_LEN).min(body.len())..];
                let later_valid = rest
                    .chunks_exact(RECORD_LEN)
                    .skip(1)
                    .any(|c| read_record(seq, c).is_some());
                if later_valid || !newest {
                    return Err(format!(
                        "damaged: record {} fails its check{}",
                        i + 1,
                        if later_valid {
                            " and valid records follow it"
                        } else {
                            " in a generation that was synced whole"
                        }
                    ));
                }
                // A torn tail: written after the last sync, never answered.
                break;
            }
        }
    }
    let valid_len = (header_len + entries.len() * RECORD_LEN) as u64;
    let allocated = if allocated_in_chunks {
        bytes.len() as u64
    } else {
        valid_len
    };
    Ok((entries, valid_len, allocated))
}

/// The generation being appended to.
struct Current {
    seq: u64,
    file: BufWriter<File>,
    /// Where the next record goes.
    end: u64,
    /// The file's length: the space allocated for records ends here.
    allocated: u64,
    /// Whether the file grows in whole chunks of zeros (version 3) or by its records.
    chunked: bool,
    /// Records appended since opening, over all generations (never decreases).
    appended: u64,
}

/// The journal being written. See the [module documentation](self).
pub(crate) struct Journal {
    dir: PathBuf,
    /// The state directory's id, written into each new generation's header.
    state_id: StateId,
    current: Mutex<Current>,
    /// How many of the appended records are known durable.
    durable: Mutex<u64>,
}

impl Journal {
    /// Starts writing a new generation `seq`.
    pub fn create(dir: &Path, seq: u64, state_id: StateId) -> io::Result<Journal> {
        let (file, end, allocated) = create(dir, seq, state_id)?;
        Journal::writing(dir, seq, state_id, file, (end, allocated, true))
    }

    /// Goes on writing generation `last`, cut back to its valid part first.
    pub fn resume(dir: &Path, last: &Generation, state_id: StateId) -> io::Result<Journal> {
        let file = OpenOptions::new().write(true).open(&last.path)?;
        // A torn record is zeroed (cut, then the allocation restored) before anything
        // is written after it.
        file.set_len(last.valid_len)?;
        let allocated = last.allocated.max(last.valid_len);
        file.set_len(allocated)?;
        file.sync_all()?;
        Journal::writing(
            dir,
            last.seq,
            state_id,
            file,
            (last.valid_len, allocated, last.chunked),
        )
    }

    fn writing(
        dir: &Path,
        seq: u64,
        state_id: StateId,
        file: File,
        (end, allocated, chunked): (u64, u64, bool),
    ) -> io::Result<Journal> {
        let mut file = BufWriter::with_capacity(64 * 1024, file);
        io::Seek::seek(&mut file, io::SeekFrom::Start(end))?;
        Ok(Journal {
            dir: dir.to_path_buf(),
            state_id,
            current: Mutex::new(Current {
                seq,
                file,
                end,
                allocated,
                chunked,
                appended: 0,
            }),
            durable: Mutex::new(0),
        })
    }

    /// The file of the generation being written.
    pub fn current_path(&self) -> PathBuf {
        path_of(&self.dir, lock(&self.current).seq)
    }

    /// Appends one entry (buffered: durable at the next [`Journal::sync`]).
    pub fn append(&self, entry: Entry) -> io::Result<()> {
        let mut current = lock(&self.current);
        let bytes = record(current.seq, entry);
        if current.chunked && current.end + RECORD_LEN as u64 > current.allocated {
            // The next chunk of zeros; its length is made durable by the sync that makes
            // the records in it durable.
            current.file.flush()?;
            let allocated = current.allocated + CHUNK;
            current.file.get_ref().set_len(allocated)?;
            current.allocated = allocated;
        }
        current.file.write_all(&bytes)?;
        current.end += RECORD_LEN as u64;
        current.appended += 1;
        Ok(())
    }

    /// Makes every entry appended before this call durable. Callers that arrive while a
    /// sync runs wait for it and are covered by it or by the next one.
    pub fn sync(&self) -> io::Result<()> {
        let target = lock(&self.current).appended;
        let mut durable = lock(&self.durable);
        if *durable >= target {
            return Ok(());
        }
        let (appended, file) = {
            let mut current = lock(&self.current);
            current.file.flush()?;
            (current.appended, current.file.get_ref().try_clone()?)
        };
        file.sync_data()?;
        *durable = appended;
        Ok(())
    }

    /// Switches to generation `seq`: the current one is synced whole, then a new file
    /// begins. The caller holds the filter still while this runs, so that every URL is in
    /// the filter's copy or in the new generation.
    pub fn rotate(&self, seq: u64) -> io::Result<()> {
        let mut current = lock(&self.current);
        if current.seq == seq {
            return Ok(());
        }
        current.file.flush()?;
        current.file.get_ref().sync_data()?;
        let (file, end, allocated) = create(&self.dir, seq, self.state_id)?;
        current.file = BufWriter::with_capacity(64 * 1024, file);
        io::Seek::seek(&mut current.file, io::SeekFrom::Start(end))?;
        current.seq = seq;
        current.end = end;
        current.allocated = allocated;
        current.chunked = true;
        Ok(())
    }
}

/// Deletes the generations before `seq` in `dir` (their URLs are in the filter saved at
/// `seq`).
pub(crate) fn remove_before(dir: &Path, seq: u64) -> io::Result<()> {
    let generations = match fs::read_dir(dir) {
        Ok(listing) => listing,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for item in generations {
        let item = item?;
        let old = item
            .file_name()
            .to_str()
            .and_then(|n| n.strip_prefix(JOURNAL_PREFIX))
            .and_then(|n| n.parse::<u64>().ok())
            .is_some_and(|s| s < seq);
        if old {
            fs::remove_file(item.path())?;
        }
    }
    Ok(())
}

/// Creates generation `seq` with its header and its first chunk, durably (temporary name,
/// sync, rename, sync of the folder), so that a file under a journal name always has a
/// whole header; returns it open for writing, where its first record goes, and its length.
fn create(dir: &Path, seq: u64, state_id: StateId) -> io::Result<(File, u64, u64)> {
    let path = path_of(dir, seq);
    let mut bytes = header(seq, state_id).to_vec();
    bytes.resize(HEADER_LEN + CHUNK as usize, 0);
    super::seen::write_atomically(&path, &bytes)?;
    let file = OpenOptions::new().write(true).open(&path)?;
    Ok((file, HEADER_LEN as u64, bytes.len() as u64))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests;
