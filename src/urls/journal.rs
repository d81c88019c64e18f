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

/// File names of the journal generations: this prefix and the generation number.
pub const JOURNAL_PREFIX: &str = "seen-urls.journal.";

const MAGIC: &[u8; 8] = b"CDSEENJ\n";
/// Version 2: 40-byte records (xxh3-64 filter hash, xxh3-128 confirmation hash, the time
/// slice of the filter generation it went into, check).
const FORMAT_VERSION: u32 = 2;
const HEADER_LEN: usize = 8 + 4 + 8 + 8 + 8;
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
}

/// The path of generation `seq` in `dir`.
pub(crate) fn path_of(dir: &Path, seq: u64) -> PathBuf {
    dir.join(format!("{JOURNAL_PREFIX}{seq}"))
}

fn header(seq: u64) -> [u8; HEADER_LEN] {
    let mut out = [0; HEADER_LEN];
    out[..8].copy_from_slice(MAGIC);
    out[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    out[12..20].copy_from_slice(&URL_HASH_SEED.to_le_bytes());
    out[20..28].copy_from_slice(&seq.to_le_bytes());
    let check = xxh3_64_with_seed(&out[..28], 0);
    out[28..].copy_from_slice(&check.to_le_bytes());
    out
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
        });
    }
    Ok(generations)
}

/// The entries of generation `seq` and the length of its valid part.
fn parse(seq: u64, bytes: &[u8], newest: bool) -> Result<(Vec<Entry>, u64), String> {
    if bytes.len() < HEADER_LEN {
        return Err(format!(
            "damaged: {} bytes, shorter than the journal header",
            bytes.len()
        ));
    }
    if &bytes[..8] != MAGIC {
        return Err("not a crawldedup URL journal (bad magic bytes)".into());
    }
    if bytes[..HEADER_LEN] != header(seq) {
        return Err(format!(
            "damaged header (or one of another format version, hash seed or generation \
             than {seq})"
        ));
    }
    let body = &bytes[HEADER_LEN..];
    let mut entries = Vec::with_capacity(body.len() / RECORD_LEN);
    let mut chunks = body.chunks(RECORD_LEN);
    for (i, chunk) in chunks.by_ref().enumerate() {
        match (chunk.len() == RECORD_LEN)
            .then(|| read_record(seq, chunk))
            .flatten()
        {
            Some(entry) => entries.push(entry),
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
    let valid_len = (HEADER_LEN + entries.len() * RECORD_LEN) as u64;
    Ok((entries, valid_len))
}

/// The generation being appended to.
struct Current {
    seq: u64,
    file: BufWriter<File>,
    /// Records appended since opening, over all generations (never decreases).
    appended: u64,
}

/// The journal being written. See the [module documentation](self).
pub(crate) struct Journal {
    dir: PathBuf,
    current: Mutex<Current>,
    /// How many of the appended records are known durable.
    durable: Mutex<u64>,
}

impl Journal {
    /// Starts writing a new generation `seq`.
    pub fn create(dir: &Path, seq: u64) -> io::Result<Journal> {
        Journal::writing(dir, seq, create(dir, seq)?)
    }

    /// Goes on writing generation `last`, cut back to its valid part first.
    pub fn resume(dir: &Path, last: &Generation) -> io::Result<Journal> {
        let file = OpenOptions::new().write(true).open(&last.path)?;
        file.set_len(last.valid_len)?;
        file.sync_all()?;
        Journal::writing(dir, last.seq, file)
    }

    fn writing(dir: &Path, seq: u64, file: File) -> io::Result<Journal> {
        let mut file = BufWriter::with_capacity(64 * 1024, file);
        io::Seek::seek(&mut file, io::SeekFrom::End(0))?;
        Ok(Journal {
            dir: dir.to_path_buf(),
            current: Mutex::new(Current {
                seq,
                file,
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
        current.file.write_all(&bytes)?;
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
        let file = create(&self.dir, seq)?;
        current.file = BufWriter::with_capacity(64 * 1024, file);
        current.seq = seq;
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

/// Creates generation `seq` with its header, durably (temporary name, sync, rename, sync of
/// the folder), so that a file under a journal name always has a whole header.
fn create(dir: &Path, seq: u64) -> io::Result<File> {
    let path = path_of(dir, seq);
    super::seen::write_atomically(&path, &header(seq))?;
    OpenOptions::new().append(true).open(&path)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(i: u64) -> Entry {
        Entry {
            hash: i.wrapping_mul(0x9e37_79b9_7f4a_7c15),
            hash128: u128::from(i) << 64 | 7,
            slice: i / 3,
        }
    }

    #[test]
    fn entries_come_back_in_order_across_generations() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::create(dir.path(), 3).unwrap();
        for i in 0..10 {
            journal.append(entry(i)).unwrap();
        }
        journal.sync().unwrap();
        journal.rotate(4).unwrap();
        journal.append(entry(10)).unwrap();
        journal.sync().unwrap();
        let found = read_all(dir.path()).unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!((found[0].seq, found[0].entries.len()), (3, 10));
        assert_eq!(found[0].entries[9], entry(9));
        assert_eq!(found[1].entries, vec![entry(10)]);
        remove_before(dir.path(), 4).unwrap();
        assert_eq!(read_all(dir.path()).unwrap().len(), 1);
    }

    #[test]
    fn a_torn_tail_of_the_newest_generation_is_cut_and_damage_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::create(dir.path(), 1).unwrap();
        for i in 0..4 {
            journal.append(entry(i)).unwrap();
        }
        journal.sync().unwrap();
        drop(journal);
        let path = path_of(dir.path(), 1);
        let whole = fs::read(&path).unwrap();

        // Half a record at the end: cut off, and appending resumes after the last whole one.
        let mut torn = whole.clone();
        torn.extend_from_slice(&record(1, entry(4))[..20]);
        fs::write(&path, &torn).unwrap();
        let found = read_all(dir.path()).unwrap();
        assert_eq!(found[0].entries.len(), 4);
        let journal = Journal::resume(dir.path(), found.last().unwrap()).unwrap();
        journal.append(entry(5)).unwrap();
        journal.sync().unwrap();
        let found = read_all(dir.path()).unwrap();
        assert_eq!(found[0].entries.last(), Some(&entry(5)));
        assert_eq!(found[0].entries.len(), 5);
        drop(journal);

        // A flipped byte in the middle: refused, with the record named.
        let mut flipped = fs::read(&path).unwrap();
        flipped[HEADER_LEN + RECORD_LEN + 3] ^= 1;
        fs::write(&path, &flipped).unwrap();
        let (named, problem) = read_all(dir.path()).unwrap_err();
        assert_eq!(named, path);
        assert!(problem.contains("record 2"), "{problem}");

        // A header cut short, or a record from another generation: refused.
        fs::write(&path, &whole[..10]).unwrap();
        assert!(read_all(dir.path()).is_err());
        let mut foreign = whole[..HEADER_LEN].to_vec();
        foreign.extend_from_slice(&record(2, entry(0)));
        foreign.extend_from_slice(&record(1, entry(1)));
        fs::write(&path, &foreign).unwrap();
        assert!(read_all(dir.path()).unwrap_err().1.contains("record 1"));
    }

    #[test]
    fn a_bad_tail_in_an_older_generation_is_damage() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::create(dir.path(), 1).unwrap();
        journal.append(entry(0)).unwrap();
        journal.rotate(2).unwrap();
        drop(journal);
        let path = path_of(dir.path(), 1);
        let mut bytes = fs::read(&path).unwrap();
        bytes.extend_from_slice(&[0; 5]);
        fs::write(&path, &bytes).unwrap();
        let (named, problem) = read_all(dir.path()).unwrap_err();
        assert_eq!(named, path);
        assert!(problem.contains("synced whole"), "{problem}");
    }
}
