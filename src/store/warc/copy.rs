//! A WARC file written record by record from records read elsewhere (`crawldedup dedup
//! --warc-out`): each record a gzip member, a `warcinfo` record first, a [`Cdxj`] index
//! beside it. The file is written as `NAME.partial` and takes its name, with its index,
//! only once it is whole: a run cut short leaves no file that looks finished.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{Cdxj, Members, index_path};

/// A WARC file being written from records given whole.
pub struct ArchiveCopy {
    path: PathBuf,
    partial: PathBuf,
    file: std::io::BufWriter<std::fs::File>,
    length: u64,
    members: Members,
    cdxj: Cdxj,
    name: String,
}

impl ArchiveCopy {
    /// Starts the file `path` (which must not exist), its `warcinfo` record saying it is
    /// a deduplicated copy of `source`.
    pub fn create(path: &Path, source: &str) -> std::io::Result<ArchiveCopy> {
        if path.exists() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "the file exists (a copy is written to a new file only)",
            ));
        }
        let mut partial = path.as_os_str().to_owned();
        partial.push(".partial");
        let partial = PathBuf::from(partial);
        let file = std::fs::File::create(&partial)?;
        let mut copy = ArchiveCopy {
            path: path.to_path_buf(),
            name: path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            partial,
            file: std::io::BufWriter::with_capacity(super::BUFFER_BYTES, file),
            length: 0,
            members: Members::smallest(),
            cdxj: Cdxj::new(),
        };
        let info = format!(
            "software: crawldedup/{}\r\nformat: WARC File Format 1.1\r\n\
             description: {source} deduplicated\r\n",
            env!("CARGO_PKG_VERSION")
        );
        let head = format!(
            "WARC/1.1\r\nWARC-Type: warcinfo\r\nWARC-Record-ID: <urn:uuid:{}>\r\n\
             WARC-Date: {}\r\nWARC-Filename: {}\r\nContent-Type: application/warc-fields\r\n\
             Content-Length: {}\r\n\r\n",
            uuid::Uuid::new_v4(),
            humantime::format_rfc3339_seconds(std::time::SystemTime::now()),
            copy.name,
            info.len()
        );
        copy.record(&[head.as_bytes(), info.as_bytes()].concat())?;
        Ok(copy)
    }

    /// Writes one record: `record` is its header lines, the blank line and its block (the
    /// two line ends after the block are added).
    pub fn record(&mut self, record: &[u8]) -> std::io::Result<()> {
        let split = record
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map_or(record.len(), |p| p + 4);
        let member = self.members.member(&[record, b"\r\n\r\n"])?;
        self.file.write_all(member)?;
        let at = (self.length, member.len() as u64);
        self.cdxj
            .add(&record[..split], &record[split..], at, &self.name);
        self.length += at.1;
        Ok(())
    }

    /// The bytes written so far.
    pub fn length(&self) -> u64 {
        self.length
    }

    /// Syncs the file and leaves it under its `.partial` name, without an index (a copy
    /// that is not whole); returns that name.
    pub fn abandon(mut self) -> std::io::Result<PathBuf> {
        self.file.flush()?;
        self.file.get_ref().sync_all()?;
        Ok(self.partial)
    }

    /// Syncs the file, gives it its name and writes its index beside it; returns its
    /// length in bytes.
    pub fn finish(mut self) -> std::io::Result<u64> {
        self.file.flush()?;
        self.file.get_ref().sync_all()?;
        std::fs::rename(&self.partial, &self.path)?;
        self.cdxj.write(&index_path(&self.path))?;
        Ok(self.length)
    }
}
