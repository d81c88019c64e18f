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
//! and with [`WarcWriter::with_payloads`] those of earlier runs, kept in a tree of the
//! crawl's database by URL (a recrawl finds the page it fetched days before). An entry left
//! by a response that a resume cut off names a page that is no longer stored, and no
//! verdict refers to it until that page is stored again, which writes the entry anew. An
//! original whose digest is not known is treated as having other bytes.
//!
//! Files are `OUT/warc/crawldedup-NNNNN.warc.gz`. The position (file number, length) is
//! part of every crawl checkpoint; on resume, later files are removed and the current one
//! is cut back, so no record is torn or written twice.

use std::io::Write;
use std::path::{Path, PathBuf};

use sha1::Digest as _;

/// The revisit profile of a near duplicate archived as a revisit
/// ([`DuplicateRecords::Revisit`]).
pub const NEAR_DUPLICATE_PROFILE: &str = "https://crawldedup.invalid/warc/revisit/near-duplicate";

/// The revisit profile of a page with its original's main text in other bytes, archived as
/// a revisit ([`DuplicateRecords::Revisit`]).
pub const SAME_TEXT_PROFILE: &str = "https://crawldedup.invalid/warc/revisit/same-main-text";

/// How a duplicate whose payload is not its original's is archived (`output.warc_duplicates`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DuplicateRecords {
    /// A `response` record with its own bytes and the verdict in extra fields.
    #[default]
    Response,
    /// A `revisit` record under crawldedup's own profile: smaller, and its bytes are not
    /// archived.
    Revisit,
}

/// What the crawl decided of a duplicate, for its WARC record.
#[derive(Debug, Clone)]
pub struct DuplicateOf<'a> {
    /// The stored page's URL.
    pub original: &'a str,
    /// When the original was fetched, for a recrawl that found a page unchanged.
    pub original_date: Option<std::time::SystemTime>,
    /// `None` for the same main text; the simhash distance for a near duplicate.
    pub distance: Option<u32>,
    /// The estimates the near duplicate was confirmed on.
    pub similarity: crate::index::Similarity,
}

const IDENTICAL_PAYLOAD_PROFILE: &str =
    "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";

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
    /// One gzip compressor for all records, reset between them: setting one up costs more
    /// than compressing a small record.
    gzip: flate2::Compress,
    /// The compressed record being built.
    member: Vec<u8>,
    /// How duplicates with other bytes than their original's are archived.
    duplicates: DuplicateRecords,
    /// The payload digest (SHA-1) and record id of each response archived in this run, by
    /// the xxh3 of its URL: a revisit claims an identical payload only when it is.
    responses: std::collections::HashMap<u64, ([u8; 20], String)>,
    /// The same for every run, kept in the crawl's database (flushed at its checkpoints).
    payloads: Option<sled::Tree>,
}

pub(crate) fn file_name(number: u64) -> String {
    format!("crawldedup-{number:05}.warc.gz")
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
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let later = name
                .strip_prefix("crawldedup-")
                .and_then(|n| n.strip_suffix(".warc.gz"))
                .and_then(|n| n.parse::<u64>().ok())
                .is_some_and(|n| n > number);
            if later {
                std::fs::remove_file(entry.path())?;
            }
        }
        let path = dir.join(file_name(number));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)?;
        file.set_len(length)?;
        use std::io::Seek;
        let mut file = file;
        file.seek(std::io::SeekFrom::Start(length))?;
        let mut writer = WarcWriter {
            dir: dir.to_path_buf(),
            rotate_bytes: rotate_bytes.max(1),
            number,
            file: std::io::BufWriter::with_capacity(BUFFER_BYTES, file),
            length,
            gzip: flate2::Compress::new_gzip(flate2::Compression::fast(), 15),
            member: Vec::new(),
            duplicates: DuplicateRecords::default(),
            responses: std::collections::HashMap::new(),
            payloads: None,
        };
        if length == 0 {
            writer.warcinfo()?;
        }
        Ok(writer)
    }

    /// The current position, after syncing the file.
    /// Hands the gathered records to the operating system (no sync to disk).
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }

    /// Writes the gathered records and syncs the file; returns the position.
    pub fn sync(&mut self) -> std::io::Result<WarcPosition> {
        self.file.flush()?;
        self.file.get_ref().sync_data()?;
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
        )
        .map(drop)
    }

    fn rotate_if_full(&mut self) -> std::io::Result<()> {
        if self.length >= self.rotate_bytes {
            self.file.flush()?;
            self.file.get_ref().sync_data()?;
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

    /// Writes one record, its block being `parts` one after the other, as one gzip member.
    fn record(
        &mut self,
        kind: &str,
        target: Option<&str>,
        fields: &[(&str, String)],
        parts: &[&[u8]],
    ) -> std::io::Result<String> {
        use std::fmt::Write as _;
        let block_length: usize = parts.iter().map(|p| p.len()).sum();
        let mut head = String::with_capacity(512);
        let id = format!("<urn:uuid:{}>", uuid::Uuid::new_v4());
        let _ = write!(
            head,
            "WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Record-ID: {id}\r\nWARC-Date: {}\r\n",
            humantime::format_rfc3339_seconds(std::time::SystemTime::now())
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
        let total: usize = pieces.iter().map(|p| p.len()).sum();
        self.member.clear();
        if total <= STORED_RECORD_BYTES {
            stored_member(&pieces, total, &mut self.member);
        } else {
            self.compressed_member(&pieces, total)?;
        }
        self.file.write_all(&self.member)?;
        self.length += self.member.len() as u64;
        Ok(id)
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

    /// Keeps the payload digests of the responses in `tree` too, and looks originals up
    /// there when this run did not archive them.
    pub fn with_payloads(mut self, tree: sled::Tree) -> WarcWriter {
        self.payloads = Some(tree);
        self
    }

    /// The payload digest and record id of the response archived for `url`, if known.
    fn archived(&self, url: &str) -> std::io::Result<Option<([u8; 20], String)>> {
        if let Some(found) = self.responses.get(&url_key(url)) {
            return Ok(Some(found.clone()));
        }
        let Some(tree) = &self.payloads else {
            return Ok(None);
        };
        let value = tree.get(url.as_bytes()).map_err(std::io::Error::other)?;
        Ok(value.and_then(|v| {
            let payload: [u8; 20] = v.get(..20)?.try_into().ok()?;
            let id = std::str::from_utf8(&v[20..]).ok()?.to_string();
            Some((payload, id))
        }))
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
        self.record("response", Some(url), &fields, &[&head, body])
    }

    /// Sets how duplicates whose payload is not their original's are archived.
    pub fn with_duplicates(mut self, duplicates: DuplicateRecords) -> WarcWriter {
        self.duplicates = duplicates;
        self
    }

    /// The record for a duplicate (see the [module documentation](self)): a revisit with
    /// an identical payload when its bytes are its original's, else a response with its
    /// own bytes (or, with [`DuplicateRecords::Revisit`], a revisit under crawldedup's
    /// profile), the verdict in `WARC-Crawldedup-*` fields.
    pub fn duplicate(
        &mut self,
        url: &str,
        status: u16,
        content_type: Option<&str>,
        body: &[u8],
        of: &DuplicateOf<'_>,
    ) -> std::io::Result<()> {
        let payload: [u8; 20] = sha1::Sha1::digest(body).into();
        let original = self.archived(of.original)?;
        let identical = original.as_ref().is_some_and(|(p, _)| *p == payload);
        let mut verdict = vec![
            (
                "WARC-Crawldedup-Verdict",
                match of.distance {
                    None => "exact-duplicate",
                    Some(_) => "near-duplicate",
                }
                .to_string(),
            ),
            ("WARC-Crawldedup-Original", of.original.to_string()),
        ];
        if let Some((_, id)) = &original {
            verdict.push(("WARC-Crawldedup-Original-Record-ID", id.clone()));
        }
        if let Some(d) = of.distance {
            verdict.push(("WARC-Crawldedup-Distance", d.to_string()));
            verdict.push((
                "WARC-Crawldedup-Similarity",
                format!("{:.3}", of.similarity.resemblance),
            ));
            verdict.push((
                "WARC-Crawldedup-Containment",
                format!("{:.3}", of.similarity.containment),
            ));
        }
        if identical {
            let refers_to = original.map(|(_, id)| id);
            return self.revisit(
                url,
                status,
                content_type,
                (&payload, body.len()),
                IDENTICAL_PAYLOAD_PROFILE,
                of,
                refers_to,
                verdict,
            );
        }
        match self.duplicates {
            DuplicateRecords::Response => self
                .response_record(url, status, content_type, (body, &payload), verdict)
                .map(drop),
            DuplicateRecords::Revisit => {
                let profile = match of.distance {
                    None => SAME_TEXT_PROFILE,
                    Some(_) => NEAR_DUPLICATE_PROFILE,
                };
                self.revisit(
                    url,
                    status,
                    content_type,
                    (&payload, body.len()),
                    profile,
                    of,
                    None,
                    verdict,
                )
            }
        }
    }

    /// A `revisit` record under `profile` for a duplicate of `of.original`, whose payload
    /// digest is `payload`; `refers_to` is the original's record id when known.
    #[allow(clippy::too_many_arguments)]
    fn revisit(
        &mut self,
        url: &str,
        status: u16,
        content_type: Option<&str>,
        (payload, body_len): (&[u8; 20], usize),
        profile: &str,
        of: &DuplicateOf<'_>,
        refers_to: Option<String>,
        verdict: Vec<(&str, String)>,
    ) -> std::io::Result<()> {
        self.rotate_if_full()?;
        let block = http_head(status, content_type, body_len);
        let mut fields = vec![
            (
                "Content-Type",
                "application/http;msgtype=response".to_string(),
            ),
            ("WARC-Profile", profile.to_string()),
            ("WARC-Refers-To-Target-URI", of.original.to_string()),
            ("WARC-Payload-Digest", base32_digest(payload)),
            ("WARC-Block-Digest", sha1_digest(&block)),
        ];
        if let Some(id) = refers_to {
            fields.push(("WARC-Refers-To", id));
        }
        if let Some(date) = of.original_date {
            fields.push((
                "WARC-Refers-To-Date",
                humantime::format_rfc3339_seconds(date).to_string(),
            ));
        }
        fields.extend(verdict);
        self.record("revisit", Some(url), &fields, &[&block])?;
        Ok(())
    }
}

/// The key of a URL in the writer's table of archived responses.
fn url_key(url: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(url.as_bytes())
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
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn a_position_is_kept_as_the_pair_older_checkpoint_records_hold() {
        let at = WarcPosition {
            file: 3,
            length: 4096,
        };
        assert_eq!(serde_json::to_string(&at).unwrap(), "[3,4096]");
        let read: WarcPosition = serde_json::from_str("[3,4096]").unwrap();
        assert_eq!(read, at);
    }

    fn records(dir: &Path) -> Vec<String> {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        names.sort();
        let mut out = Vec::new();
        for path in names {
            let bytes = std::fs::read(path).unwrap();
            let mut decoder = flate2::read::MultiGzDecoder::new(&bytes[..]);
            let mut text = Vec::new();
            decoder.read_to_end(&mut text).unwrap();
            let text = String::from_utf8_lossy(&text).into_owned();
            out.extend(
                text.split("WARC/1.1\r\n")
                    .filter(|r| !r.is_empty())
                    .map(str::to_string),
            );
        }
        out
    }

    fn duplicate(
        w: &mut WarcWriter,
        url: &str,
        content_type: Option<&str>,
        body: &[u8],
        original: &str,
        distance: Option<u32>,
    ) -> std::io::Result<()> {
        w.duplicate(
            url,
            200,
            content_type,
            body,
            &DuplicateOf {
                original,
                original_date: None,
                distance,
                similarity: crate::index::Similarity {
                    resemblance: 0.8,
                    containment: 0.9,
                },
            },
        )
    }

    #[test]
    fn records_rotate_and_resume_cuts_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = WarcWriter::open(dir.path(), 1000, WarcPosition::default()).unwrap();
        w.response("http://a.test/", 200, Some("text/html"), b"<p>hello</p>")
            .unwrap();
        let position = w.sync().unwrap();
        duplicate(
            &mut w,
            "http://a.test/copy",
            Some("text/html"),
            b"<p>hello!</p>",
            "http://a.test/",
            None,
        )
        .unwrap();
        for i in 0..10 {
            w.response(&format!("http://a.test/{i}"), 200, None, &vec![b'x'; 300])
                .unwrap();
        }
        assert!(
            std::fs::read_dir(dir.path()).unwrap().count() > 1,
            "no rotation"
        );
        drop(w);
        // Resume at the earlier position: the later records are gone.
        let mut w = WarcWriter::open(dir.path(), 1000, position).unwrap();
        duplicate(
            &mut w,
            "http://a.test/near",
            None,
            b"x",
            "http://a.test/",
            Some(2),
        )
        .unwrap();
        drop(w);
        let all = records(dir.path());
        assert_eq!(all.len(), 3, "{all:#?}");
        assert!(all[0].starts_with("WARC-Type: warcinfo"));
        assert!(
            all[1].contains("WARC-Type: response") && all[1].contains("WARC-Payload-Digest: sha1:")
        );
        assert!(
            all[2].contains("WARC-Type: response")
                && all[2].contains("WARC-Crawldedup-Verdict: near-duplicate")
                && all[2].contains("WARC-Crawldedup-Distance: 2"),
            "{}",
            all[2]
        );
    }

    /// The field `name` of a record's WARC head.
    fn field<'a>(record: &'a str, name: &str) -> Option<&'a str> {
        let head = &record[..record.find("\r\n\r\n").unwrap_or(record.len())];
        head.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(": "))
    }

    #[test]
    fn only_a_byte_identical_duplicate_is_an_identical_payload_revisit() {
        for mode in [DuplicateRecords::Response, DuplicateRecords::Revisit] {
            let dir = tempfile::tempdir().unwrap();
            let mut w = WarcWriter::open(dir.path(), u64::MAX, WarcPosition::default())
                .unwrap()
                .with_duplicates(mode);
            let page = b"<p>the same bytes</p>";
            w.response("http://a.test/", 200, Some("text/html"), page)
                .unwrap();
            duplicate(
                &mut w,
                "http://b.test/",
                Some("text/html"),
                page,
                "http://a.test/",
                None,
            )
            .unwrap();
            let other_bytes = b"<div><p>the same bytes</p><p>a comment</p></div>";
            duplicate(
                &mut w,
                "http://c.test/",
                None,
                other_bytes,
                "http://a.test/",
                None,
            )
            .unwrap();
            duplicate(
                &mut w,
                "http://d.test/",
                None,
                b"<p>near</p>",
                "http://a.test/",
                Some(3),
            )
            .unwrap();
            // An original this writer never archived (stored before a resume).
            duplicate(
                &mut w,
                "http://e.test/",
                None,
                page,
                "http://gone.test/",
                None,
            )
            .unwrap();
            drop(w);
            let all = records(dir.path());
            let original_id = field(&all[1], "WARC-Record-ID").unwrap();
            let identical = &all[2];
            assert_eq!(field(identical, "WARC-Type"), Some("revisit"));
            assert_eq!(
                field(identical, "WARC-Profile"),
                Some(IDENTICAL_PAYLOAD_PROFILE)
            );
            assert_eq!(field(identical, "WARC-Refers-To"), Some(original_id));
            assert_eq!(
                field(identical, "WARC-Payload-Digest"),
                field(&all[1], "WARC-Payload-Digest")
            );
            for (record, profile, verdict) in [
                (&all[3], SAME_TEXT_PROFILE, "exact-duplicate"),
                (&all[4], NEAR_DUPLICATE_PROFILE, "near-duplicate"),
                (&all[5], SAME_TEXT_PROFILE, "exact-duplicate"),
            ] {
                assert_eq!(field(record, "WARC-Crawldedup-Verdict"), Some(verdict));
                assert_ne!(
                    field(record, "WARC-Profile"),
                    Some(IDENTICAL_PAYLOAD_PROFILE)
                );
                match mode {
                    DuplicateRecords::Response => {
                        assert_eq!(field(record, "WARC-Type"), Some("response"), "{record}");
                        assert_eq!(field(record, "WARC-Profile"), None);
                    }
                    DuplicateRecords::Revisit => {
                        assert_eq!(field(record, "WARC-Type"), Some("revisit"), "{record}");
                        assert_eq!(field(record, "WARC-Profile"), Some(profile));
                    }
                }
            }
            if mode == DuplicateRecords::Response {
                assert!(all[3].contains("<p>a comment</p>"), "its own bytes");
                assert_eq!(
                    field(&all[3], "WARC-Crawldedup-Original-Record-ID"),
                    Some(original_id)
                );
                assert_eq!(field(&all[4], "WARC-Crawldedup-Similarity"), Some("0.800"));
                assert_eq!(field(&all[5], "WARC-Crawldedup-Original-Record-ID"), None);
            }
        }
    }

    /// Every record is a gzip member of its own, its Content-Length is its block's length
    /// and its block digest is the SHA-1 of that block, for small and big (incompressible)
    /// bodies written by one reused compressor.
    #[test]
    fn each_record_is_one_member_with_a_matching_block_digest() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = WarcWriter::open(dir.path(), u64::MAX, WarcPosition::default()).unwrap();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let noise: Vec<u8> = (0..300_000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        let bodies: [&[u8]; 4] = [b"<p>hello</p>", &noise, b"", &[b'a'; 70_000]];
        for (i, body) in bodies.iter().enumerate() {
            w.response(&format!("http://a.test/{i}"), 200, Some("text/html"), body)
                .unwrap();
            duplicate(
                &mut w,
                &format!("http://a.test/{i}?copy"),
                None,
                body,
                "http://a.test/",
                None,
            )
            .unwrap();
        }
        drop(w);
        let bytes = std::fs::read(dir.path().join(file_name(0))).unwrap();
        let mut rest = &bytes[..];
        let mut members = Vec::new();
        while !rest.is_empty() {
            let mut decoder = flate2::bufread::GzDecoder::new(rest);
            let mut record = Vec::new();
            decoder.read_to_end(&mut record).unwrap();
            rest = decoder.into_inner();
            members.push(record);
        }
        assert_eq!(members.len(), 1 + 2 * bodies.len());
        for record in &members[1..] {
            let split = record.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
            let head = String::from_utf8_lossy(&record[..split]);
            let block = &record[split + 4..record.len() - 4];
            let field = |name: &str| {
                head.lines()
                    .find_map(|l| l.strip_prefix(name))
                    .unwrap()
                    .to_string()
            };
            assert_eq!(field("Content-Length: "), block.len().to_string());
            assert_eq!(field("WARC-Block-Digest: "), sha1_digest(block));
            assert!(record.ends_with(b"\r\n\r\n"));
        }
        let response = &members[3];
        assert!(response.ends_with(&[&noise[..], b"\r\n\r\n"].concat()));
    }

    #[test]
    fn small_records_are_stored_and_large_ones_compressed() {
        let mut out = Vec::new();
        stored_member(&[b"WARC/1.1\r\n", b"", b"abc"], 13, &mut out);
        let mut inflated = Vec::new();
        flate2::read::GzDecoder::new(&out[..])
            .read_to_end(&mut inflated)
            .unwrap();
        assert_eq!(inflated, b"WARC/1.1\r\nabc");
        // The first block header: final, stored.
        assert_eq!(out[10], 1);

        let dir = tempfile::tempdir().unwrap();
        let mut w = WarcWriter::open(dir.path(), u64::MAX, WarcPosition::default()).unwrap();
        let start = |w: &mut WarcWriter| {
            w.flush().unwrap();
            std::fs::metadata(dir.path().join(file_name(0)))
                .unwrap()
                .len() as usize
        };
        let small = start(&mut w);
        duplicate(
            &mut w,
            "http://a.test/x",
            None,
            b"<p>x</p>",
            "http://a.test/",
            None,
        )
        .unwrap();
        let large = start(&mut w);
        w.response("http://a.test/y", 200, None, &[b'y'; 50_000])
            .unwrap();
        w.flush().unwrap();
        let bytes = std::fs::read(dir.path().join(file_name(0))).unwrap();
        assert_eq!(bytes[small + 10] & 0b111, 0b001, "stored, final");
        assert_ne!(bytes[large + 10] & 0b110, 0, "compressed");
        assert!(bytes.len() - large < 1_000);
    }

    #[test]
    fn sha1_digest_is_base32() {
        // SHA-1 of the empty string.
        assert_eq!(sha1_digest(b""), "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
    }
}
