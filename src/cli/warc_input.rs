//! WARC files given to `crawldedup dedup`: every `response` record, as the page it holds.
//!
//! A `.warc` file is a run of records; a `.warc.gz` one a run of gzip members, a record
//! each (WARC 1.1 annex D), as wget `--warc-file`, Heritrix and Common Crawl write them.
//! Records are parsed by the `warc` crate; each is named by the file, the offset of its
//! member (or of the record, uncompressed) and its `WARC-Target-URI`. The HTTP response in
//! its block is read as a crawler received it: the status line and headers, then the body,
//! un-chunked (`Transfer-Encoding: chunked`; a body stored de-chunked under that header is
//! read as it is, with a warning) and decompressed (`Content-Encoding: gzip` or `deflate`;
//! another coding is named, and the record has no text).

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use warc::{RecordType, WarcHeader, WarcReader};

/// The most bytes one record's body may hold, decompressed.
const MAX_BODY_BYTES: u64 = 256 << 20;

/// One `response` record.
pub(super) struct Response {
    /// Where its gzip member (or, uncompressed, the record) starts in the file.
    pub(super) offset: u64,
    pub(super) uri: String,
    pub(super) content_type: Option<String>,
    /// The body, or why it cannot be read.
    pub(super) body: Result<Vec<u8>, String>,
    /// What was wrong with the record and forgiven in reading it (one line each).
    pub(super) warnings: Vec<String>,
}

/// Whether `path` names a WARC file.
pub(super) fn is_warc(path: &Path) -> bool {
    let name = path.to_string_lossy().to_ascii_lowercase();
    name.ends_with(".warc") || name.ends_with(".warc.gz")
}

/// A buffered reader that counts the bytes consumed: the offset of what comes next.
struct Counting<R> {
    inner: R,
    consumed: u64,
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

/// Calls `each` with every `response` record of the WARC file `path`, in order, reading
/// one record (one gzip member) at a time: a file of any size is read in the memory of
/// its largest record. `Err` names the file, the offset and what is wrong when the file
/// cannot be read on.
pub(super) fn each_response(
    path: &Path,
    mut each: impl FnMut(Response) -> Result<(), super::Failure>,
) -> Result<Result<(), String>, super::Failure> {
    let name = path.display();
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) => return Ok(Err(format!("{name}: {e}"))),
    };
    let mut input = Counting {
        inner: BufReader::with_capacity(1 << 16, file),
        consumed: 0,
    };
    let gzip = match input.fill_buf() {
        Ok(start) => start.starts_with(&[0x1f, 0x8b]),
        Err(e) => return Ok(Err(format!("{name}: {e}"))),
    };
    loop {
        let offset = input.consumed;
        match input.fill_buf() {
            Ok([]) => return Ok(Ok(())),
            Ok(_) => {}
            Err(e) => return Ok(Err(format!("{name}: at offset {offset}: {e}"))),
        }
        let record = if gzip {
            member(&mut input)
        } else {
            plain_record(&mut input)
        };
        let bytes = match record {
            Ok(bytes) => bytes,
            Err(problem) => return Ok(Err(format!("{name}: at offset {offset}: {problem}"))),
        };
        if let Err(problem) = records(&bytes, offset, &mut each)? {
            return Ok(Err(format!("{name}: {problem}")));
        }
    }
}

/// The next gzip member, decompressed (a record, or records).
fn member(input: &mut impl BufRead) -> Result<Vec<u8>, String> {
    let mut decoder = flate2::bufread::GzDecoder::new(input);
    let mut member = Vec::new();
    decoder
        .by_ref()
        .take(MAX_BODY_BYTES + 1)
        .read_to_end(&mut member)
        .map_err(|e| format!("corrupt gzip: {e}"))?;
    if member.len() as u64 > MAX_BODY_BYTES {
        return Err(format!(
            "a record larger than {} MiB decompressed",
            MAX_BODY_BYTES >> 20
        ));
    }
    Ok(member)
}

/// The next record of an uncompressed file: its header lines, the blank line, the block of
/// `Content-Length` bytes and the two line ends after it.
fn plain_record(input: &mut impl BufRead) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    let mut length = None;
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
            if start == 0 {
                // Blank lines between records.
                bytes.clear();
                continue;
            }
            break;
        }
        if let Some((key, value)) = line.split_once(':') {
            if key.trim().eq_ignore_ascii_case("content-length") {
                length = value.trim().parse::<u64>().ok();
            }
        }
    }
    let length = length.ok_or("a record without a Content-Length")?;
    if length > MAX_BODY_BYTES {
        return Err(format!("a record larger than {} MiB", MAX_BODY_BYTES >> 20));
    }
    let block = bytes.len();
    input
        .by_ref()
        .take(length + 4)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if ((bytes.len() - block) as u64) < length {
        return Err("a record cut short in its block".into());
    }
    Ok(bytes)
}

/// The records of `bytes` (one gzip member's, or one uncompressed record), all named by
/// the offset `offset` where they start in the file: header lines, a blank line,
/// `Content-Length` bytes of block and two CRLFs each.
fn records(
    bytes: &[u8],
    offset: u64,
    each: &mut impl FnMut(Response) -> Result<(), super::Failure>,
) -> Result<Result<(), String>, super::Failure> {
    let mut at = 0usize;
    while at < bytes.len() {
        if bytes[at..].iter().all(u8::is_ascii_whitespace) {
            break;
        }
        let mut records = WarcReader::new(&bytes[at..]).iter_records();
        let Some(record) = records.next() else {
            break;
        };
        let record = match record {
            Ok(record) => record,
            Err(e) => return Ok(Err(format!("at offset {offset}: not a WARC record: {e}"))),
        };
        let headers_end = bytes[at..]
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map_or(bytes.len() - at, |p| p + 4);
        at += headers_end + record.content_length() as usize + 4;
        if *record.warc_type() != RecordType::Response {
            continue;
        }
        let uri = record
            .header(WarcHeader::TargetURI)
            .map(|u| u.trim_matches(['<', '>']).to_string())
            .unwrap_or_default();
        let mut warnings = Vec::new();
        let (content_type, body) = match http_response(record.body(), &mut warnings) {
            Ok((content_type, body)) => (content_type, Ok(body)),
            Err(problem) => (None, Err(problem)),
        };
        each(Response {
            offset,
            uri,
            content_type,
            body,
            warnings,
        })?;
    }
    Ok(Ok(()))
}

/// The content type and the body of an HTTP response as a WARC block holds it; what was
/// forgiven goes to `warnings`.
fn http_response(
    block: &[u8],
    warnings: &mut Vec<String>,
) -> Result<(Option<String>, Vec<u8>), String> {
    let split = block
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("no HTTP headers in the block")?;
    let head = String::from_utf8_lossy(&block[..split]);
    let body = &block[split + 4..];
    let header = |name: &str| {
        head.lines().skip(1).find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim()
                .eq_ignore_ascii_case(name)
                .then(|| value.trim().to_string())
        })
    };
    // Many writers keep the `Transfer-Encoding: chunked` header of a body they stored
    // de-chunked (warcio reads such a body as it is, too).
    let mut body = if header("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
        dechunk(body).unwrap_or_else(|problem| {
            warnings.push(format!(
                "`Transfer-Encoding: chunked` on a body that is not chunked ({problem}): \
                 read as it is"
            ));
            body.to_vec()
        })
    } else {
        body.to_vec()
    };
    match header("content-encoding").map(|c| c.to_ascii_lowercase()) {
        None => {}
        Some(c) if c == "identity" => {}
        Some(c) if c == "gzip" || c == "x-gzip" || c == "deflate" => {
            let mut plain = Vec::new();
            let read = if c == "deflate" {
                flate2::read::ZlibDecoder::new(&body[..])
                    .take(MAX_BODY_BYTES + 1)
                    .read_to_end(&mut plain)
            } else {
                flate2::read::MultiGzDecoder::new(&body[..])
                    .take(MAX_BODY_BYTES + 1)
                    .read_to_end(&mut plain)
            };
            read.map_err(|e| format!("corrupt {c} body: {e}"))?;
            if plain.len() as u64 > MAX_BODY_BYTES {
                return Err(format!("body larger than {} MiB", MAX_BODY_BYTES >> 20));
            }
            body = plain;
        }
        Some(other) => return Err(format!("a body in `{other}` coding, which is not read")),
    }
    Ok((header("content-type"), body))
}

/// A chunked body, joined.
fn dechunk(mut body: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(body.len());
    loop {
        let line_end = body
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("a chunk size line without its end")?;
        let size_text = String::from_utf8_lossy(&body[..line_end]);
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| {
            format!(
                "unreadable chunk size `{}`",
                super::print::printable_line(size_text, 40)
            )
        })?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        let chunk = body.get(..size).ok_or("a chunk cut short")?;
        out.extend_from_slice(chunk);
        body = body.get(size + 2..).unwrap_or_default();
    }
}
