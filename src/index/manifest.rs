//! The index's manifest: what a damaged database is checked against.
//!
//! sled keeps a checksum per log entry and, on recovery, stops at the first entry that
//! fails it, so bytes overwritten or cut off in its files can come back as a shorter or an
//! empty database with no error. Read alone, such an index would answer `unique` for every
//! page it lost. The manifest is a small file beside the database, rewritten atomically
//! (temporary file, fsync, rename, fsync of the folder) at every checkpoint, after sled's
//! flush. It records the formats, the number of documents the checkpoint made durable, the
//! floor below which documents expired (retention), and a checksum of the rows between, and carries a checksum of its own text. Opening reads every
//! row anyway (to build the tables), sums the row checksums on the way and refuses an index
//! that holds fewer documents than the manifest, or whose first documents do not add up to
//! the recorded checksum. A document written after the last checkpoint may be missing after
//! a crash (it was never promised), never one from before it.
//!
//! Text, one `key value` per line, the last line `check` and the xxh3 of everything before
//! it, so that an operator can read it with `cat`.

use std::io::Write;
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::xxh3_64_with_seed;

/// File name of the manifest, inside the index folder.
pub const MANIFEST_FILE: &str = "crawldedup-manifest";

const HEADER: &str = "crawldedup index manifest";

/// What a checkpoint made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Manifest {
    /// Index format version.
    pub format: u32,
    /// Fingerprint version.
    pub fingerprint: u32,
    /// Documents made durable (the id after the last of them).
    pub documents: u64,
    /// The first document still held: those below it expired from a retention window and
    /// may already be deleted (0 without retention).
    pub floor: u64,
    /// Sum (wrapping) of [`row_checksum`] over the documents from `floor` to `documents`.
    pub rows_checksum: u64,
    /// The id of the state directory the index belongs to (written in its ledger; 0 when
    /// written outside one, or before ledgers existed).
    pub state: crate::state_id::StateId,
}

/// The checksum of document `id`'s stored row bytes.
pub fn row_checksum(id: u64, row: &[u8]) -> u64 {
    xxh3_64_with_seed(row, id)
}

impl Manifest {
    /// The manifest of a new, empty index of this build's formats.
    pub fn empty() -> Manifest {
        Manifest {
            format: super::INDEX_FORMAT_VERSION,
            fingerprint: crate::fingerprint::FINGERPRINT_VERSION,
            documents: 0,
            floor: 0,
            rows_checksum: 0,
            state: 0,
        }
    }

    /// The path of the manifest of the index in `dir`.
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(MANIFEST_FILE)
    }

    fn text(&self) -> String {
        crate::sealed::seal(&format!(
            "{HEADER}\nformat {}\nfingerprint {}\ndocuments {}\nfloor {}\nrows-checksum \
             {:016x}\nstate {:032x}\n",
            self.format,
            self.fingerprint,
            self.documents,
            self.floor,
            self.rows_checksum,
            self.state
        ))
    }

    /// Reads the manifest of the index in `dir`: `Ok(None)` if there is none, an error
    /// naming the problem if it cannot be read or does not check.
    pub(crate) fn read(dir: &Path) -> Result<Option<Manifest>, String> {
        let path = Manifest::path(dir);
        let text = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("manifest {}: {e}", path.display())),
        };
        Manifest::parse(&text)
            .map(Some)
            .map_err(|problem| format!("manifest {}: {problem}", path.display()))
    }

    fn parse(bytes: &[u8]) -> Result<Manifest, String> {
        let mut fields = crate::sealed::open(bytes, HEADER, "crawldedup index manifest")?;
        let format = fields.number("format")?;
        let fingerprint = fields.number("fingerprint")?;
        let documents = fields.number("documents")?;
        let floor = fields.number("floor")?;
        if floor > documents {
            return Err(format!(
                "floor {floor} is past the {documents} documents: damaged"
            ));
        }
        let rows_checksum = fields.hex("rows-checksum")? as u64;
        // Written since state directories have a ledger; absent in older manifests.
        let state = if fields.is_done() {
            0
        } else {
            fields.hex("state")?
        };
        Ok(Manifest {
            format: u32::try_from(format).map_err(|_| "format out of range".to_string())?,
            fingerprint: u32::try_from(fingerprint)
                .map_err(|_| "fingerprint out of range".to_string())?,
            documents,
            floor,
            rows_checksum,
            state,
        })
    }

    /// Replaces the manifest of the index in `dir` with this one, atomically and durably:
    /// after a crash the file is the old one or the new one, never a mix.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        let path = Manifest::path(dir);
        let temporary = dir.join(format!("{MANIFEST_FILE}.tmp"));
        {
            let mut file = std::fs::File::create(&temporary)?;
            file.write_all(self.text().as_bytes())?;
            file.sync_all()?;
        }
        std::fs::rename(&temporary, &path)?;
        // The rename is durable once the folder's entry is.
        std::fs::File::open(dir)?.sync_all()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Manifest {
        Manifest {
            format: 4,
            fingerprint: 3,
            documents: 12_345,
            floor: 345,
            rows_checksum: 0xdead_beef_0123_4567,
            state: 0x0123_4567_89ab_cdef_0123_4567_89ab_cdef,
        }
    }

    #[test]
    fn a_manifest_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Manifest::read(dir.path()).unwrap(), None);
        sample().write(dir.path()).unwrap();
        assert_eq!(Manifest::read(dir.path()).unwrap(), Some(sample()));
        assert!(!dir.path().join(format!("{MANIFEST_FILE}.tmp")).exists());
    }

    #[test]
    fn a_manifest_written_before_ledgers_reads_with_no_state() {
        let old = crate::sealed::seal(&format!(
            "{HEADER}\nformat 4\nfingerprint 3\ndocuments 9\nfloor 0\nrows-checksum {:016x}\n",
            7
        ));
        let read = Manifest::parse(old.as_bytes()).unwrap();
        assert_eq!((read.documents, read.state), (9, 0));
    }

    #[test]
    fn every_changed_or_cut_byte_is_detected() {
        let text = sample().text().into_bytes();
        for at in 0..text.len() {
            let mut changed = text.clone();
            changed[at] ^= 0x01;
            assert!(Manifest::parse(&changed).is_err(), "byte {at} changed");
            // A cut that leaves the check line whole but drops part of the body, or that
            // cuts into the check line, is refused too.
            assert!(Manifest::parse(&text[..at]).is_err(), "cut at {at}");
        }
    }
}
