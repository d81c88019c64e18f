//! WARC files given to `crawldedup dedup`: every `response` record, as the page it holds.
//!
//! A `.warc` file is a run of records; a `.warc.gz` one a run of gzip members, a record
//! each (WARC 1.1 annex D), as wget `--warc-file`, Heritrix and Common Crawl write them; a
//! `.warc.zst` one a run of zstd frames, a record each, after the frame that holds their
//! dictionary (the IIPC zstd profile).
//! Records are parsed by the `warc` crate; each is named by the file, the offset of its
//! member (or of the record, uncompressed) and its `WARC-Target-URI`. The HTTP response in
//! its block is read as a crawler received it: the status line and headers, then the body,
//! un-chunked (`Transfer-Encoding: chunked`; a body stored de-chunked under that header is
//! read as it is, with a warning) and decompressed (`Content-Encoding: gzip`, `deflate` or
//! `br`; another coding is named, and the record has no text).

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use warc::{RecordType, WarcHeader, WarcReader};

use super::http::http_response;
use super::zstd_frames;

/// The most bytes one record's body may hold, decompressed.
const MAX_BODY_BYTES: u64 = 256 << 20;

/// One `response` record.
pub struct Response {
    /// Where its gzip member (or, uncompressed, the record) starts in the file.
    pub offset: u64,
    /// Its `WARC-Target-URI` (empty when it has none).
    pub uri: String,
    /// The HTTP response's `Content-Type`.
    pub content_type: Option<String>,
    /// The body, or why it cannot be read.
    pub body: Result<Vec<u8>, String>,
    /// What was wrong with the record and forgiven in reading it (one line each).
    pub warnings: Vec<String>,
    /// Its `WARC-Record-ID`, by which a revisit refers to it.
    pub record_id: Option<String>,
    /// Its `WARC-Payload-Digest`, by which a URL-agnostic revisit refers to it.
    pub payload_digest: Option<String>,
    /// The record's bytes when asked for (see [`Item::Other`]), else empty.
    pub raw: Vec<u8>,
}

/// A `revisit` record: the same content as an earlier record, which it names by that
/// record's id (`WARC-Refers-To`), its URI and date (`WARC-Refers-To-Target-URI`,
/// `-Date`), or, URL-agnostic, only by the payload digest the two share.
pub struct Revisit {
    /// Where its gzip member (or, uncompressed, the record) starts in the file.
    pub offset: u64,
    /// Its `WARC-Target-URI`.
    pub uri: String,
    /// `WARC-Refers-To`: the record id of the record it repeats.
    pub refers_to: Option<String>,
    /// `WARC-Refers-To-Target-URI`: that record's URI.
    pub refers_to_uri: Option<String>,
    /// `WARC-Payload-Digest`: the digest it shares with that record.
    pub payload_digest: Option<String>,
    /// `WARC-Profile`.
    pub profile: Option<String>,
    /// The record's bytes when asked for, else empty.
    pub raw: Vec<u8>,
}

/// What reading an archive yields, in order.
pub enum Item {
    /// A `response` record.
    Response(Response),
    /// A `revisit` record.
    Revisit(Revisit),
    /// Any other record (`warcinfo`, `request`, `metadata`, `resource`...), yielded only
    /// when records are read with their bytes: `raw` is the record as read, its header
    /// lines, the blank line and its block (without the two line ends after it), a
    /// Content-Length the reader corrected set to the block it read, and a date it
    /// rewrote as rewritten.
    Other {
        /// Where its gzip member (or the record) starts in the file.
        offset: u64,
        /// The record's bytes.
        raw: Vec<u8>,
    },
    /// What was wrong in the file at `offset` and forgiven: the reader went on.
    Forgiven {
        /// Where the record forgiven starts.
        offset: u64,
        /// What was wrong, in one line.
        problem: String,
    },
}

/// Whether `path` names a WARC file.
pub fn is_warc(path: &Path) -> bool {
    let name = path.to_string_lossy().to_ascii_lowercase();
    name.ends_with(".warc") || name.ends_with(".warc.gz") || name.ends_with(".warc.zst")
}

/// A buffered reader that counts the bytes consumed: the offset of what comes next.
pub struct Counting<R> {
    pub inner: R,
    pub consumed: u64,
}

impl<R: BufRead> Read for Counting<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(out)?;
        self.consumed += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counting<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        self.consumed += n as u64;
        self.inner.consume(n);
    }
}

/// The most bytes of a record's header lines.
const MAX_HEADER_BYTES: usize = 1 << 20;

/// The most bytes of one record's block, for the ARC and zstd readers too.
pub const MAX_RECORD_BYTES: u64 = MAX_BODY_BYTES;

/// An archive opened for reading one record at a time, counting its offsets, and its
/// first bytes (which say how it is compressed); `Err` names the archive and the problem.
pub(super) fn open_archive<R: Read>(
    name: &str,
    input: R,
) -> Result<(Counting<BufReader<R>>, [u8; 4]), String> {
    let named = |e: std::io::Error| format!("{name}: {e}");
    let mut input = Counting {
        inner: BufReader::with_capacity(1 << 16, input),
        consumed: 0,
    };
    let mut start = [0u8; 4];
    let first = input.fill_buf().map_err(named)?;
    let n = first.len().min(4);
    start[..n].copy_from_slice(&first[..n]);
    Ok((input, start))
}

/// Calls `each` with every `response` and `revisit` record of the WARC archive `input`
/// (named `name`), in order, reading one record (one gzip member) at a time: a file of any
/// size is read in the memory of its largest record; with `raw`, the other records too
/// ([`Item::Other`]), and each record's bytes. `Err` names the archive, the offset and
/// what is wrong when it cannot be read on.
pub(super) fn each_response<R: Read, E>(
    name: &str,
    input: R,
    raw: bool,
    mut each: impl FnMut(Item) -> Result<(), E>,
) -> Result<Result<(), String>, E> {
    let (mut input, start) = match open_archive(name, input) {
        Ok(opened) => opened,
        Err(problem) => return Ok(Err(problem)),
    };
    let gzip = start.starts_with(&[0x1f, 0x8b]);
    let zstd = zstd_frames::is_zstd(&start);
    let dictionary = if zstd {
        match zstd_frames::dictionary(&mut input) {
            Ok(dictionary) => dictionary,
            Err(problem) => return Ok(Err(format!("{name}: {problem}"))),
        }
    } else {
        Vec::new()
    };
    // The first line of the next record when the record before it was read past its
    // Content-Length, to the line that starts the next one.
    let mut carry = Vec::new();
    loop {
        let offset = input.consumed - carry.len() as u64;
        match input.fill_buf() {
            Ok([]) if carry.is_empty() => return Ok(Ok(())),
            Ok(_) => {}
            Err(e) => return Ok(Err(format!("{name}: at offset {offset}: {e}"))),
        }
        let mut forgiven = Vec::new();
        let record = if gzip {
            member(&mut input, &mut forgiven)
        } else if zstd {
            zstd_frames::member(&mut input, &dictionary)
        } else {
            plain_record(&mut input, &mut carry, &mut forgiven)
        };
        for problem in forgiven {
            each(Item::Forgiven { offset, problem })?;
        }
        let bytes = match record {
            Ok(bytes) => bytes,
            Err(problem) => return Ok(Err(format!("{name}: at offset {offset}: {problem}"))),
        };
        records(&bytes, offset, raw, &mut each)?;
    }
}

/// The next gzip member, decompressed (a record, or records). The last member of a file
/// cut short is what it held up to the cut, its record's Content-Length set to that, and
/// said in `forgiven` (warcio reads such a file to the cut too).
pub fn member(input: &mut impl BufRead, forgiven: &mut Vec<String>) -> Result<Vec<u8>, String> {
    let mut member = Vec::new();
    let read = flate2::bufread::GzDecoder::new(&mut *input)
        .take(MAX_BODY_BYTES + 1)
        .read_to_end(&mut member);
    if let Err(e) = read {
        let head_end = member.windows(4).position(|w| w == b"\r\n\r\n");
        match head_end {
            Some(end) if at_end(input)? && member.starts_with(b"WARC/") => {
                forgiven.push(format!(
                    "the file's last gzip member is cut short ({e}): the {} bytes it held \
                     are read",
                    member.len()
                ));
                return Ok(with_length(member, end + 4));
            }
            _ => return Err(format!("corrupt gzip: {e}")),
        }
    }
    if member.len() as u64 > MAX_BODY_BYTES {
        return Err(format!(
            "a record larger than {} MiB decompressed",
            MAX_BODY_BYTES >> 20
        ));
    }
    Ok(member)
}

/// The next record of an uncompressed file: its header lines, the blank line, the block of
/// `Content-Length` bytes and the two line ends after it. `carry` holds the start of this
/// record when the one before was read to it; what is forgiven goes to `forgiven`:
///
/// - bytes before the record that are not one (the rest of a block whose Content-Length
///   was short) are skipped to the next line that starts `WARC/`;
/// - a Content-Length that does not end the block (no blank line and `WARC/` after it), or
///   is not a number, is named, and the block is read to the next line that starts
///   `WARC/` instead (warcio reads such a record too); the record's Content-Length is set
///   to what was read.
fn plain_record(
    input: &mut impl BufRead,
    carry: &mut Vec<u8>,
    forgiven: &mut Vec<String>,
) -> Result<Vec<u8>, String> {
    let mut bytes = std::mem::take(carry);
    let mut skipped = 0usize;
    // The first line: `WARC/` and a version.
    loop {
        if bytes.is_empty() {
            let read = input
                .by_ref()
                .take(MAX_HEADER_BYTES as u64 + 1)
                .read_until(b'\n', &mut bytes)
                .map_err(|e| e.to_string())?;
            if read == 0 {
                if skipped > 0 {
                    forgiven.push(format!(
                        "{skipped} bytes after the last record that are not a record"
                    ));
                }
                return Ok(Vec::new());
            }
        }
        if bytes.starts_with(b"WARC/") {
            break;
        }
        if !bytes.iter().all(u8::is_ascii_whitespace) {
            skipped += bytes.len();
        }
        bytes.clear();
    }
    if skipped > 0 {
        forgiven.push(format!(
            "{skipped} bytes that are not a record skipped to the next `WARC/` line (the \
             record before it ran past its Content-Length)"
        ));
    }
    let mut length = None;
    let mut length_text = None;
    loop {
        let start = bytes.len();
        let read = input
            .by_ref()
            .take((MAX_HEADER_BYTES - start.min(MAX_HEADER_BYTES)) as u64 + 1)
            .read_until(b'\n', &mut bytes)
            .map_err(|e| e.to_string())?;
        if read == 0 {
            return Err("a record cut short in its header".into());
        }
        if bytes.len() > MAX_HEADER_BYTES {
            return Err("header lines longer than 1 MiB: not a WARC record".into());
        }
        let line = String::from_utf8_lossy(&bytes[start..]);
        if line.trim().is_empty() {
            break;
        }
        if let Some((key, value)) = line.split_once(':') {
            if key.trim().eq_ignore_ascii_case("content-length") {
                length = value.trim().parse::<u64>().ok();
                length_text = Some(value.trim().to_string());
            }
        }
    }
    let block = bytes.len();
    let Some(length) = length else {
        let Some(text) = length_text else {
            return Err("a record without a Content-Length".into());
        };
        forgiven.push(format!(
            "a Content-Length of `{}`, not a length: its block read to the next `WARC/` line",
            super::printable_line(&text, 40)
        ));
        read_to_next_record(input, &mut bytes, carry)?;
        return Ok(with_length(bytes, block));
    };
    if length > MAX_BODY_BYTES {
        return Err(format!("a record larger than {} MiB", MAX_BODY_BYTES >> 20));
    }
    input
        .by_ref()
        .take(length + 4)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if ((bytes.len() - block) as u64) < length {
        return Err("a record cut short in its block".into());
    }
    block_end(input, bytes, (block, length), carry, forgiven)
}

/// A record read through its block (`bytes`, its header lines ending at `block`, then
/// `length` bytes of block and up to four more), ended as the format has it: two line ends
/// after the block, or fewer when the next record or the end of the input follows, or a
/// block read on to the next `WARC/` line when its Content-Length did not end it.
fn block_end(
    input: &mut impl BufRead,
    mut bytes: Vec<u8>,
    (block, length): (usize, u64),
    carry: &mut Vec<u8>,
    forgiven: &mut Vec<String>,
) -> Result<Vec<u8>, String> {
    if bytes.ends_with(b"\r\n\r\n") {
        return Ok(bytes);
    }
    let end = block + length as usize;
    if at_end(input)? {
        // The last record, with fewer line ends after its block than the format has.
        bytes.truncate(end);
        bytes.extend_from_slice(b"\r\n\r\n");
        return Ok(bytes);
    }
    // A writer that ends a block with fewer line ends: the next record starts in what was
    // read after it.
    let after = bytes[end..].trim_ascii_start();
    if !after.is_empty() && b"WARC/".starts_with(&after[..after.len().min(5)]) {
        let mut first = after.to_vec();
        input
            .by_ref()
            .take(MAX_HEADER_BYTES as u64)
            .read_until(b'\n', &mut first)
            .map_err(|e| e.to_string())?;
        *carry = first;
        bytes.truncate(end);
        return Ok(with_length(bytes, block));
    }
    // The block goes on past its Content-Length: read it to the next record.
    forgiven.push(format!(
        "its Content-Length of {length} does not end its block (no blank line after it): \
         read to the next `WARC/` line"
    ));
    read_to_next_record(input, &mut bytes, carry)?;
    Ok(with_length(bytes, block))
}

/// Whether `input` has nothing more to read.
fn at_end(input: &mut impl BufRead) -> Result<bool, String> {
    Ok(input.fill_buf().map_err(|e| e.to_string())?.is_empty())
}

/// Reads lines onto `bytes` up to the next line that starts `WARC/` (kept in `carry`, the
/// start of the next record) or the end of the input.
fn read_to_next_record(
    input: &mut impl BufRead,
    bytes: &mut Vec<u8>,
    carry: &mut Vec<u8>,
) -> Result<(), String> {
    loop {
        let mut line = Vec::new();
        let read = input
            .by_ref()
            .take(MAX_BODY_BYTES + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| e.to_string())?;
        if read == 0 {
            return Ok(());
        }
        if line.starts_with(b"WARC/") {
            *carry = line;
            return Ok(());
        }
        bytes.extend_from_slice(&line);
        if bytes.len() as u64 > MAX_BODY_BYTES {
            return Err(format!("a record larger than {} MiB", MAX_BODY_BYTES >> 20));
        }
    }
}

/// A record's bytes (header lines ending at `block`, then its block and whatever line ends
/// follow it) with its Content-Length set to the block as read, the line ends after it
/// written as the format has them.
fn with_length(bytes: Vec<u8>, block: usize) -> Vec<u8> {
    let mut body = &bytes[block..];
    while let Some(rest) = body
        .strip_suffix(b"\r\n")
        .or_else(|| body.strip_suffix(b"\n"))
    {
        body = rest;
    }
    let head = String::from_utf8_lossy(&bytes[..block]);
    let mut out = Vec::with_capacity(bytes.len() + 16);
    for line in head.split_inclusive('\n') {
        let is_length = line
            .split_once(':')
            .is_some_and(|(key, _)| key.trim().eq_ignore_ascii_case("content-length"));
        if is_length {
            out.extend_from_slice(format!("Content-Length: {}\r\n", body.len()).as_bytes());
        } else {
            out.extend_from_slice(line.as_bytes());
        }
    }
    out.extend_from_slice(body);
    out.extend_from_slice(b"\r\n\r\n");
    out
}

/// The records of `bytes` (one gzip member's, or one uncompressed record), all named by
/// the offset `offset` where they start in the file: header lines, a blank line,
/// `Content-Length` bytes of block and two CRLFs each.
fn records<E>(
    bytes: &[u8],
    offset: u64,
    raw: bool,
    each: &mut impl FnMut(Item) -> Result<(), E>,
) -> Result<(), E> {
    let mut bytes = std::borrow::Cow::Borrowed(bytes);
    let mut at = 0usize;
    // The record whose date was rewritten: once a record.
    let mut dated = None;
    while at < bytes.len() {
        if bytes[at..].iter().all(u8::is_ascii_whitespace) {
            break;
        }
        // Header lines that are not UTF-8 (a URI in Latin-1): the parser takes them with
        // those bytes percent-encoded, as a URI would have them.
        if let Some(fixed) = utf8_head(&bytes[at..]) {
            each(Item::Forgiven {
                offset,
                problem: "header lines that are not UTF-8: their other bytes read \
                          percent-encoded"
                    .into(),
            })?;
            bytes = std::borrow::Cow::Owned([&bytes[..at], &fixed[..]].concat());
        }
        let parsed = WarcReader::new(&bytes[at..]).iter_records().next();
        let Some(record) = parsed else {
            break;
        };
        let bad_date = matches!(
            &record,
            Err(warc::Error::MalformedHeader(WarcHeader::Date, _))
        );
        if bad_date && dated != Some(at) {
            dated = Some(at);
            // WARC/0.18 and other writers' dates (`2009-03-05T08:43:19-0800`, a 14-digit
            // timestamp): the record is read with the date the parser takes.
            if let Some((fixed, problem)) = super::dates::with_iso_date(&bytes[at..]) {
                each(Item::Forgiven { offset, problem })?;
                bytes = std::borrow::Cow::Owned([&bytes[..at], &fixed[..]].concat());
                continue;
            }
        }
        let record = match record {
            Ok(record) => record,
            Err(e) => {
                // One record's header the parser refuses: named, and the file read on.
                each(Item::Forgiven {
                    offset,
                    problem: format!("not a WARC record ({e}): skipped"),
                })?;
                break;
            }
        };
        let headers_end = bytes[at..]
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map_or(bytes.len() - at, |p| p + 4);
        let end = (at + headers_end + record.content_length() as usize).min(bytes.len());
        let raw = if raw {
            bytes[at..end].to_vec()
        } else {
            Vec::new()
        };
        at += headers_end + record.content_length() as usize + 4;
        if let Some(item) = item(&record, offset, raw) {
            each(item)?;
        }
    }
    Ok(())
}

/// What a parsed record is to the reader: a response, a revisit, another record (only
/// when its bytes `raw` were kept), or nothing.
fn item(record: &warc::Record<warc::BufferedBody>, offset: u64, raw: Vec<u8>) -> Option<Item> {
    let header = |name: WarcHeader| {
        record
            .header(name)
            .map(|v| v.trim().trim_matches(['<', '>']).to_string())
            .filter(|v| !v.is_empty())
    };
    let uri = header(WarcHeader::TargetURI).unwrap_or_default();
    if *record.warc_type() == RecordType::Revisit {
        return Some(Item::Revisit(Revisit {
            offset,
            uri,
            refers_to: header(WarcHeader::RefersTo),
            refers_to_uri: header(WarcHeader::Unknown("warc-refers-to-target-uri".into())),
            payload_digest: header(WarcHeader::PayloadDigest),
            profile: header(WarcHeader::Profile),
            raw,
        }));
    }
    if *record.warc_type() != RecordType::Response {
        return (!raw.is_empty()).then_some(Item::Other { offset, raw });
    }
    let mut warnings = Vec::new();
    let (content_type, body) = match http_response(record.body(), &mut warnings) {
        Ok((content_type, body)) => (content_type, Ok(body)),
        Err(problem) => (None, Err(problem)),
    };
    Some(Item::Response(Response {
        offset,
        uri,
        content_type,
        body,
        warnings,
        record_id: header(WarcHeader::RecordID),
        payload_digest: header(WarcHeader::PayloadDigest),
        raw,
    }))
}

/// `record` with its header lines' bytes past ASCII percent-encoded, when those lines are
/// not UTF-8; `None` when they are.
fn utf8_head(record: &[u8]) -> Option<Vec<u8>> {
    let end = record
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or(record.len().min(MAX_HEADER_BYTES));
    if std::str::from_utf8(&record[..end]).is_ok() {
        return None;
    }
    let mut fixed = Vec::with_capacity(record.len() + 64);
    for &b in &record[..end] {
        if b.is_ascii() {
            fixed.push(b);
        } else {
            fixed.extend_from_slice(format!("%{b:02X}").as_bytes());
        }
    }
    fixed.extend_from_slice(&record[end..]);
    Some(fixed)
}
