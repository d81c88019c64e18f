//! WARC/1.1 output: one gzip member per record, files rotated by size. Records of up to
//! 2 KB (revisits, warcinfo) are stored in their member without compression.
//!
//! - `warcinfo` opens every file;
//! - `response` for a stored page: the HTTP status line, the response's content type and
//!   length, and the (decompressed) body, with `WARC-Payload-Digest` and
//!   `WARC-Block-Digest` (SHA-1, base32);
//! - a duplicate whose payload is byte for byte its original's (the same
//!   `WARC-Payload-Digest`): `revisit` with the WARC 1.1 profile `identical-payload-digest`
//!   (section 6.7.2), naming the original in `WARC-Refers-To-Target-URI` (and its record in
//!   `WARC-Refers-To`), so that a replay tool serves the original's bytes, which are this
//!   page's;
//! - any other duplicate (the same or nearly the same main text in other bytes: another
//!   template, a comment section, a changed date): by default a `response` record with its
//!   own bytes, since no other record holds them, and crawldedup's verdict in extra fields:
//!   `WARC-Crawldedup-Verdict` (`exact-duplicate`: the same main text; `near-duplicate`),
//!   `WARC-Crawldedup-Original` (the stored page's URL), `WARC-Crawldedup-Original-Record-ID`
//!   when that record was written by this run, `WARC-Crawldedup-Distance`,
//!   `WARC-Crawldedup-Similarity` and `WARC-Crawldedup-Containment`. With
//!   [`DuplicateRecords::Revisit`] (`output.warc_duplicates = "revisit"`, to save space)
//!   it is a `revisit` under crawldedup's own profile instead ([`SAME_TEXT_PROFILE`] or
//!   [`NEAR_DUPLICATE_PROFILE`]), which no replay tool takes for an identical payload; its
//!   own bytes are then archived nowhere.
//!
//! Payloads are compared on the SHA-1 digests of the responses archived: those of this run,
//! and (in a crawl, `WarcWriter::with_payloads`) those of earlier runs, kept in a tree of the
//! crawl's database by URL (a recrawl finds the page it fetched days before). An entry left
//! by a response that a resume cut off names a page that is no longer stored, and no
//! verdict refers to it until that page is stored again, which writes the entry anew. An
//! original whose digest is not known is treated as having other bytes.
//!
//! Files are `OUT/warc/crawldedup-NNNNN.warc.gz`, each with its CDXJ index
//! `crawldedup-NNNNN.cdxj` beside it (pywb's format, see [`Cdxj`]), written at every sync.
//! The position (file number, length) is
//! part of every crawl checkpoint; on resume, later files (and their indexes) are removed and
//! the current one is cut back, so no record is torn or written twice, and its index is made
//! again from what the file holds.

use std::io::Write;
use std::path::{Path, PathBuf};

use sha1::Digest as _;

mod cdxj;
mod copy;
mod duplicates;

pub use cdxj::{Cdxj, index_path};
use cdxj::{Indexed, Known};
pub use copy::ArchiveCopy;

use duplicates::url_key;
pub use duplicates::{
    DuplicateOf, DuplicateRecords, IDENTICAL_PAYLOAD_PROFILE, NEAR_DUPLICATE_PROFILE,
    SAME_TEXT_PROFILE, verdict_fields,
};

/// Records up to this many bytes (revisit records, warcinfo) are stored in their gzip
/// member uncompressed: deflate would save a few hundred bytes at the price of resetting the
/// compressor's 128 KB of tables.
const STORED_RECORD_BYTES: usize = 2048;

/// Bytes of records gathered before they are written to the file.
const BUFFER_BYTES: usize = 256 * 1024;

/// Where the writer stands: the number of its current file and that file's length in
/// bytes. Kept in a checkpoint record as the pair `[file, length]`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(from = "(u64, u64)", into = "(u64, u64)")]
pub struct WarcPosition {
    /// The file number (in its name, `crawldedup-00001.warc.gz`).
    pub file: u64,
    /// Bytes of that file.
    pub length: u64,
}

impl From<(u64, u64)> for WarcPosition {
    fn from((file, length): (u64, u64)) -> WarcPosition {
        WarcPosition { file, length }
    }
}

impl From<WarcPosition> for (u64, u64) {
    fn from(at: WarcPosition) -> (u64, u64) {
        (at.file, at.length)
    }
}

/// Writes WARC records into rotating gzip files.
pub struct WarcWriter {
    dir: PathBuf,
    rotate_bytes: u64,
    number: u64,
    /// Records are gathered in the buffer and reach the file at a sync, at rotation, or
    /// when the buffer is full: one write call for many small records.
    file: std::io::BufWriter<std::fs::File>,
    length: u64,
    /// The gzip members records are written as.
    members: Members,
    /// How duplicates with other bytes than their original's are archived.
    duplicates: DuplicateRecords,
    /// The payload digest (SHA-1) and record id of each response archived in this run, by
    /// the xxh3 of its URL: a revisit claims an identical payload only when it is.
    responses: std::collections::HashMap<u64, ([u8; 20], String)>,
    /// The same for every run, kept in the crawl's database (flushed at its checkpoints).
    payloads: Option<sled::Tree>,
    /// The CDXJ index of the current file, written beside it at every sync.
    cdxj: Cdxj,
}

pub(crate) fn file_name(number: u64) -> String {
    format!("crawldedup-{number:05}.warc.gz")
}

/// Cuts the WARC files in `dir` back to `position`: the files after it removed, its file
/// cut to its length (created when `create`); returns that file, open for writing.
pub(crate) fn cut_back(
    dir: &Path,
    position: WarcPosition,
    create: bool,
) -> std::io::Result<std::fs::File> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let number = name
            .strip_prefix("crawldedup-")
            .and_then(|n| {
                n.strip_suffix(".warc.gz")
                    .or_else(|| n.strip_suffix(".cdxj"))
            })
            .and_then(|n| n.parse::<u64>().ok());
        // The current file's index too: it may list records past the cut (it is written
        // anew at the next sync).
        let later = number.is_some_and(|n| n > position.file)
            || (number == Some(position.file) && name.ends_with(".cdxj"));
        if later {
            std::fs::remove_file(entry.path())?;
        }
    }
    let file = std::fs::OpenOptions::new()
        .create(create)
        .truncate(false)
        .write(true)
        .open(dir.join(file_name(position.file)))?;
    file.set_len(position.length)?;
    file.sync_all()?;
    Ok(file)
}

impl WarcWriter {
    /// Opens the writer in `dir` at `position` (a checkpoint's): files after it are
    /// removed, its file is cut to its length.
    pub fn open(
        dir: &Path,
        rotate_bytes: u64,
        position: WarcPosition,
    ) -> std::io::Result<WarcWriter> {
        std::fs::create_dir_all(dir)?;
        let WarcPosition {
            file: number,
            length,
        } = position;
        let file = cut_back(dir, position, true)?;
        use std::io::Seek;
        let mut file = file;
        file.seek(std::io::SeekFrom::Start(length))?;
        let mut writer = WarcWriter {
            dir: dir.to_path_buf(),
            rotate_bytes: rotate_bytes.max(1),
            number,
            file: std::io::BufWriter::with_capacity(BUFFER_BYTES, file),
            length,
            members: Members::new(),
            duplicates: DuplicateRecords::default(),
            responses: std::collections::HashMap::new(),
            payloads: None,
            cdxj: Cdxj::new(),
        };
        if length == 0 {
            writer.warcinfo()?;
        } else {
            writer.file.flush()?;
            writer.cdxj = Cdxj::of_file(&dir.join(file_name(number)))?;
        }
        Ok(writer)
    }

    /// The current position, after syncing the file.
    /// Hands the gathered records to the operating system (no sync to disk).
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }

    /// Writes the gathered records and syncs the file, then its CDXJ index (when records
    /// were added since the last sync); returns the position. The index lists the records
    /// up to that position, the file and its index agree at every checkpoint.
    pub fn sync(&mut self) -> std::io::Result<WarcPosition> {
        self.file.flush()?;
        self.file.get_ref().sync_data()?;
        self.write_index()?;
        Ok(WarcPosition {
            file: self.number,
            length: self.length,
        })
    }

    fn warcinfo(&mut self) -> std::io::Result<()> {
        let body = format!(
            "software: crawldedup/{}\r\nformat: WARC File Format 1.1\r\n",
            env!("CARGO_PKG_VERSION")
        );
        self.record(
            "warcinfo",
            None,
            &[("Content-Type", "application/warc-fields".into())],
            &[body.as_bytes()],
            None,
        )
        .map(drop)
    }

    /// Writes the current file's CDXJ index beside it.
    fn write_index(&mut self) -> std::io::Result<()> {
        self.cdxj
            .write(&index_path(&self.dir.join(file_name(self.number))))
    }

    fn rotate_if_full(&mut self) -> std::io::Result<()> {
        if self.length >= self.rotate_bytes {
            self.file.flush()?;
            self.file.get_ref().sync_data()?;
            self.write_index()?;
            self.cdxj.clear();
            self.number += 1;
            self.file = std::io::BufWriter::with_capacity(
                BUFFER_BYTES,
                std::fs::File::create(self.dir.join(file_name(self.number)))?,
            );
            self.length = 0;
            self.warcinfo()?;
        }
        Ok(())
    }

    /// Writes one record, its block being `parts` one after the other, as one gzip member;
    /// a record `indexed` has a line in the CDXJ index.
    fn record(
        &mut self,
        kind: &str,
        target: Option<&str>,
        fields: &[(&str, String)],
        parts: &[&[u8]],
        indexed: Option<&Indexed<'_>>,
    ) -> std::io::Result<String> {
        use std::fmt::Write as _;
        let block_length: usize = parts.iter().map(|p| p.len()).sum();
        let mut head = String::with_capacity(512);
        let id = format!("<urn:uuid:{}>", uuid::Uuid::new_v4());
        let date = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
        let _ = write!(
            head,
            "WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Record-ID: {id}\r\nWARC-Date: {date}\r\n"
        );
        if let Some(target) = target {
            let _ = write!(head, "WARC-Target-URI: {target}\r\n");
        }
        for (name, value) in fields {
            let _ = write!(head, "{name}: {value}\r\n");
        }
        let _ = write!(head, "Content-Length: {block_length}\r\n\r\n");
        let mut pieces = Vec::with_capacity(parts.len() + 2);
        pieces.push(head.as_bytes());
        pieces.extend_from_slice(parts);
        pieces.push(b"\r\n\r\n");
        let member = self.members.member(&pieces)?;
        self.file.write_all(member)?;
        let at = (self.length, member.len() as u64);
        if let (Some(record), Some(url)) = (indexed, target) {
            let known = Known {
                url,
                date: &date,
                record,
            };
            self.cdxj.add_known(&known, at, &file_name(self.number));
        }
        self.length += at.1;
        Ok(id)
    }
    /// A `response` record for a stored page.
    pub fn response(
        &mut self,
        url: &str,
        status: u16,
        content_type: Option<&str>,
        body: &[u8],
    ) -> std::io::Result<()> {
        let payload: [u8; 20] = sha1::Sha1::digest(body).into();
        let id = self.response_record(url, status, content_type, (body, &payload), Vec::new())?;
        if let Some(tree) = &self.payloads {
            let mut value = payload.to_vec();
            value.extend_from_slice(id.as_bytes());
            tree.insert(url.as_bytes(), value)
                .map_err(std::io::Error::other)?;
        }
        self.responses.insert(url_key(url), (payload, id));
        Ok(())
    }

    /// A `response` record holding `body`, whose SHA-1 is `payload`, with `extra` fields;
    /// returns its record id.
    fn response_record(
        &mut self,
        url: &str,
        status: u16,
        content_type: Option<&str>,
        (body, payload): (&[u8], &[u8; 20]),
        extra: Vec<(&str, String)>,
    ) -> std::io::Result<String> {
        self.rotate_if_full()?;
        let head = http_head(status, content_type, body.len());
        let block_digest = sha1::Sha1::new()
            .chain_update(&head)
            .chain_update(body)
            .finalize();
        let mut fields = vec![
            (
                "Content-Type",
                "application/http;msgtype=response".to_string(),
            ),
            ("WARC-Payload-Digest", base32_digest(payload)),
            ("WARC-Block-Digest", base32_digest(&block_digest)),
        ];
        fields.extend(extra);
        let indexed = Indexed {
            status: Some(status),
            content_type,
            payload,
        };
        self.record(
            "response",
            Some(url),
            &fields,
            &[&head, body],
            Some(&indexed),
        )
    }
}

/// Builds the gzip member of each record: one compressor for all records, reset between
/// them (setting one up costs more than compressing a small record), and small records
/// stored uncompressed.
pub(crate) struct Members {
    gzip: flate2::Compress,
    /// The member being built.
    member: Vec<u8>,
    /// Records up to this many bytes are stored uncompressed.
    stored_bytes: usize,
}

impl Members {
    /// For a crawl: fast compression, small records stored ([`STORED_RECORD_BYTES`]).
    pub(crate) fn new() -> Members {
        Members {
            gzip: flate2::Compress::new_gzip(flate2::Compression::fast(), 15),
            member: Vec::new(),
            stored_bytes: STORED_RECORD_BYTES,
        }
    }

    /// For an archive's copy, where size counts more than time: zlib's default level,
    /// every record compressed.
    pub(crate) fn smallest() -> Members {
        Members {
            gzip: flate2::Compress::new_gzip(flate2::Compression::default(), 15),
            member: Vec::new(),
            stored_bytes: 0,
        }
    }

    /// The gzip member holding `pieces`, one after the other.
    pub(crate) fn member(&mut self, pieces: &[&[u8]]) -> std::io::Result<&[u8]> {
        let total: usize = pieces.iter().map(|p| p.len()).sum();
        self.member.clear();
        if total <= self.stored_bytes {
            stored_member(pieces, total, &mut self.member);
        } else {
            self.compressed_member(pieces, total)?;
        }
        Ok(&self.member)
    }

    /// Compresses `pieces` into `self.member` as one gzip member.
    fn compressed_member(&mut self, pieces: &[&[u8]], total: usize) -> std::io::Result<()> {
        self.gzip.reset();
        self.member.reserve(total / 3 + 1024);
        let last = pieces.len() - 1;
        for (i, piece) in pieces.iter().enumerate() {
            let flush = if i == last {
                flate2::FlushCompress::Finish
            } else {
                flate2::FlushCompress::None
            };
            let mut input = *piece;
            loop {
                if self.member.capacity() - self.member.len() < 256 {
                    self.member.reserve(input.len() / 2 + 4096);
                }
                let before = self.gzip.total_in();
                let status = self
                    .gzip
                    .compress_vec(input, &mut self.member, flush)
                    .map_err(std::io::Error::other)?;
                input = &input[(self.gzip.total_in() - before) as usize..];
                let done = if i == last {
                    status == flate2::Status::StreamEnd
                } else {
                    input.is_empty()
                };
                if done {
                    break;
                }
            }
        }
        Ok(())
    }
}

/// Writes `pieces` (`total` bytes) as one gzip member holding a single stored (not
/// compressed) deflate block (RFC 1951 3.2.4, RFC 1952): a valid member that any gzip reader
/// inflates, built without the compressor, whose reset alone costs more than a small record.
fn stored_member(pieces: &[&[u8]], total: usize, out: &mut Vec<u8>) {
    debug_assert!(total <= usize::from(u16::MAX));
    let len = total as u16;
    out.reserve(total + 25);
    // Header: magic, deflate, no flags, no time, no extra flags, OS unknown.
    out.extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255]);
    // The final block (BFINAL = 1), stored (BTYPE = 00), then LEN and its complement.
    out.push(1);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&(!len).to_le_bytes());
    let mut crc = crc32fast::Hasher::new();
    for piece in pieces {
        out.extend_from_slice(piece);
        crc.update(piece);
    }
    // Trailer: CRC-32 and length of the uncompressed data.
    out.extend_from_slice(&crc.finalize().to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
}

fn http_head(status: u16, content_type: Option<&str>, length: usize) -> Vec<u8> {
    let reason = match status {
        200 => "OK",
        203 => "Non-Authoritative Information",
        _ => "",
    };
    let mut head = format!("HTTP/1.1 {status} {reason}\r\n");
    if let Some(ct) = content_type {
        head.push_str(&format!("Content-Type: {ct}\r\n"));
    }
    head.push_str(&format!("Content-Length: {length}\r\n\r\n"));
    head.into_bytes()
}

/// `sha1:` and the base32 SHA-1 of `bytes`, as WARC digests are written.
pub fn sha1_digest(bytes: &[u8]) -> String {
    base32_digest(&sha1::Sha1::digest(bytes))
}

fn base32_digest(digest: &[u8]) -> String {
    format!("sha1:{}", data_encoding::BASE32.encode(digest))
}

#[cfg(test)]
mod tests;
