//! CDXJ indexes, pywb's format, of the WARC files crawldedup writes: `NAME.cdxj` beside
//! `NAME.warc.gz`, a line for each record but `request` and `warcinfo` ones and those
//! holding WARC fields (`application/warc-fields`), as pywb's own indexer makes them:
//!
//! ```text
//! com,example)/a 20261202120000 {"url":"https://example.com/a","mime":"text/html","status":"200","digest":"…","length":"1043","offset":"512","filename":"crawldedup-00001.warc.gz"}
//! ```
//!
//! the record's [SURT key](crate::urls::surt), its date as 14 digits, and where its gzip
//! member lies in the file; a revisit's `mime` is `warc/revisit`; only a response has a
//! `status` (`-` for the others), and a response without an HTTP status has no line. Lines are sorted
//! bytewise, as pywb's binary search over an index needs them. An index is written whole to
//! a temporary file and renamed over the old one: a reader never sees half of one.

use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};

use sha1::Digest as _;

/// The index of one WARC file, gathered record by record.
#[derive(Debug)]
pub struct Cdxj {
    lines: Vec<String>,
    /// Lines were added (or the file begun) since the index was last written.
    dirty: bool,
}

impl Default for Cdxj {
    fn default() -> Cdxj {
        Cdxj {
            lines: Vec::new(),
            dirty: true,
        }
    }
}

#[derive(serde::Serialize)]
struct Fields<'a> {
    url: &'a str,
    mime: &'a str,
    status: &'a str,
    digest: &'a str,
    length: String,
    offset: String,
    filename: &'a str,
}

/// The index line of a record of `url` dated `date` (14 digits) with its `mime`, `status`
/// and payload `digest`, written as `length` bytes at `offset` of `filename`: the URL's
/// SURT key, the date and the fields as JSON.
fn index_line(
    url: &str,
    date: &str,
    (mime, status, digest): (&str, &str, &str),
    (offset, length): (u64, u64),
    filename: &str,
) -> Option<String> {
    let fields = Fields {
        url,
        mime,
        status,
        digest,
        length: length.to_string(),
        offset: offset.to_string(),
        filename,
    };
    let json = serde_json::to_string(&fields).ok()?;
    Some(format!("{} {date} {json}", crate::urls::surt::surt(url)))
}

/// What a writer puts in a `response` or `revisit` record that its index line shows.
pub(crate) struct Indexed<'a> {
    /// The HTTP status of a response; `None` for a revisit.
    pub(crate) status: Option<u16>,
    /// The content type of the HTTP response it holds, as written.
    pub(crate) content_type: Option<&'a str>,
    /// The SHA-1 of its payload.
    pub(crate) payload: &'a [u8; 20],
}

/// What a writer knows of a record it wrote, for its index line ([`Cdxj::add_known`]).
pub(crate) struct Known<'a> {
    /// Its `WARC-Target-URI`.
    pub(crate) url: &'a str,
    /// Its `WARC-Date`, as written.
    pub(crate) date: &'a str,
    /// Its status, content type and payload digest.
    pub(crate) record: &'a Indexed<'a>,
}

/// The first 14 digits of a date (`2026-12-02T12:00:00Z` is `20261202120000`).
fn date_digits(date: &str) -> String {
    date.chars().filter(char::is_ascii_digit).take(14).collect()
}

/// A content type as an index's `mime`: before any parameter, trimmed and lower-cased;
/// `unk` when there is none.
fn normal_mime(content_type: Option<&str>) -> String {
    content_type
        .and_then(|m| m.trim().split(';').next())
        .map(|m| m.trim().to_ascii_lowercase())
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| "unk".to_string())
}

/// Where the index of the WARC file `warc` goes: `x.warc.gz` (or `x.warc`) has `x.cdxj`.
pub fn index_path(warc: &Path) -> PathBuf {
    let name = warc.file_name().map(|n| n.to_string_lossy().into_owned());
    let name = name.unwrap_or_default();
    let stem = name
        .strip_suffix(".gz")
        .unwrap_or(&name)
        .strip_suffix(".warc")
        .unwrap_or(&name);
    warc.with_file_name(format!("{stem}.cdxj"))
}

impl Cdxj {
    /// An empty index.
    pub fn new() -> Cdxj {
        Cdxj::default()
    }

    /// The number of lines.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether it has no line.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Adds the line of a record written as `length` bytes at `offset` of `filename`:
    /// `head` is its header lines (with the blank line after them), `block` its block, or
    /// the block's start when the header has a `WARC-Payload-Digest`. A record that replays
    /// nothing (`warcinfo`, `request`, one of WARC fields), a response without an HTTP
    /// status, and a record without a target URI have no line.
    pub fn add(&mut self, head: &[u8], block: &[u8], (offset, length): (u64, u64), filename: &str) {
        if let Some(line) = line(head, block, (offset, length), filename) {
            self.lines.push(line);
            self.dirty = true;
        }
    }

    /// Adds the line of a record this process has just written, from what it wrote into
    /// it (`known`) rather than by reading its header back: the same line as
    /// [`Cdxj::add`] gives for that record.
    pub(crate) fn add_known(&mut self, known: &Known<'_>, at: (u64, u64), filename: &str) {
        let status = match known.record.status {
            Some(status) if (100..1000).contains(&status) => status.to_string(),
            // As `add`: a response without a status of three digits has no line.
            Some(_) => return,
            None => "-".to_string(),
        };
        let mime = match known.record.status {
            Some(_) => normal_mime(known.record.content_type),
            None => "warc/revisit".to_string(),
        };
        let digest = data_encoding::BASE32.encode(known.record.payload);
        let url = known.url.trim().trim_matches(['<', '>']);
        let date = date_digits(known.date);
        if let Some(line) = index_line(url, &date, (&mime, &status, &digest), at, filename) {
            self.lines.push(line);
            self.dirty = true;
        }
    }

    /// Forgets every line (a new file begins).
    pub fn clear(&mut self) {
        self.lines.clear();
        self.dirty = true;
    }

    /// Writes the index, sorted, to `path` unless it is as it was last written there:
    /// whole to a temporary file beside it, synced, then renamed over it.
    pub fn write(&mut self, path: &Path) -> std::io::Result<()> {
        if !self.dirty {
            return Ok(());
        }
        self.lines.sort_unstable();
        let temporary = path.with_extension("cdxj.partial");
        let mut out = std::io::BufWriter::new(std::fs::File::create(&temporary)?);
        for line in &self.lines {
            out.write_all(line.as_bytes())?;
            out.write_all(b"\n")?;
        }
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_data()?;
        std::fs::rename(&temporary, path)?;
        self.dirty = false;
        Ok(())
    }

    /// The index of a WARC file that crawldedup wrote (a record per gzip member), read from
    /// the file: for a file a resumed crawl goes on writing.
    pub fn of_file(path: &Path) -> std::io::Result<Cdxj> {
        let filename = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut input = std::io::BufReader::new(std::fs::File::open(path)?);
        let mut index = Cdxj::new();
        let mut offset = 0u64;
        let mut record = Vec::new();
        loop {
            if input.fill_buf()?.is_empty() {
                return Ok(index);
            }
            record.clear();
            let mut counted = Counted {
                inner: &mut input,
                read: 0,
            };
            flate2::bufread::GzDecoder::new(&mut counted).read_to_end(&mut record)?;
            let length = counted.read;
            let split = record
                .windows(4)
                .position(|w| w == b"\r\n\r\n")
                .map_or(record.len(), |p| p + 4);
            index.add(
                &record[..split],
                &record[split..],
                (offset, length),
                &filename,
            );
            offset += length;
        }
    }
}

/// A buffered reader that counts the bytes consumed from it.
struct Counted<'a, R> {
    inner: &'a mut R,
    read: u64,
}

impl<R: BufRead> Read for Counted<'_, R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(out)?;
        self.read += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counted<'_, R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        self.read += n as u64;
        self.inner.consume(n);
    }
}

/// A header's value in header lines `head` (the first line skipped).
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().skip(1).find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.trim().eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

fn line(head: &[u8], block: &[u8], at: (u64, u64), filename: &str) -> Option<String> {
    let head = String::from_utf8_lossy(head);
    let kind = header(&head, "WARC-Type")?.to_ascii_lowercase();
    let warc_fields = header(&head, "Content-Type").is_some_and(|t| {
        t.to_ascii_lowercase()
            .starts_with("application/warc-fields")
    });
    if matches!(kind.as_str(), "request" | "warcinfo") || warc_fields {
        return None;
    }
    let url = header(&head, "WARC-Target-URI")?
        .trim_matches(['<', '>'])
        .to_string();
    let date = date_digits(header(&head, "WARC-Date").unwrap_or_default());
    // An HTTP response in the block: as the record says, or (a writer that names no
    // content type) as the block starts.
    let http = header(&head, "Content-Type").map_or_else(
        || kind != "resource" && block.starts_with(b"HTTP/"),
        |t| t.to_ascii_lowercase().starts_with("application/http"),
    );
    // The HTTP status and content type of a response (and of a revisit's headers).
    let (status, mime, payload) = if http {
        let split = block.windows(4).position(|w| w == b"\r\n\r\n");
        let http_head = String::from_utf8_lossy(&block[..split.unwrap_or(block.len())]);
        let status = http_head
            .lines()
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .filter(|s| s.len() == 3 && s.bytes().all(|b| b.is_ascii_digit()))
            .unwrap_or("-")
            .to_string();
        let mime = header(&http_head, "Content-Type").map(str::to_string);
        (status, mime, &block[split.map_or(block.len(), |s| s + 4)..])
    } else {
        let mime = header(&head, "Content-Type").map(str::to_string);
        ("-".to_string(), mime, block)
    };
    // As pywb's own indexer: a status for a response only, and no line for a response
    // without one.
    let status = match kind.as_str() {
        "response" if status == "-" => return None,
        "response" => status,
        _ => "-".to_string(),
    };
    let mime = if kind == "revisit" {
        "warc/revisit".to_string()
    } else {
        normal_mime(mime.as_deref())
    };
    let digest = match header(&head, "WARC-Payload-Digest") {
        Some(d) => d.split_once(':').map_or(d, |(_, d)| d).to_string(),
        None => data_encoding::BASE32.encode(&sha1::Sha1::digest(payload)),
    };
    index_line(&url, &date, (&mime, &status, &digest), at, filename)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_response_and_a_revisit_have_their_lines_and_other_records_none() {
        let mut index = Cdxj::new();
        let response = b"WARC/1.1\r\nWARC-Type: response\r\nWARC-Date: 2026-12-02T12:00:00Z\r\n\
            WARC-Target-URI: https://www.example.com/b/\r\n\
            Content-Type: application/http;msgtype=response\r\n\r\n";
        let block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>x";
        index.add(response, block, (0, 100), "a.warc.gz");
        let revisit = String::from_utf8_lossy(response)
            .replace("response\r\n", "revisit\r\n")
            .replace("/b/", "/a")
            .replace("\r\n\r\n", "\r\nWARC-Payload-Digest: sha1:ABC\r\n\r\n");
        index.add(
            revisit.as_bytes(),
            b"HTTP/1.1 200 OK\r\n\r\n",
            (100, 50),
            "a.warc.gz",
        );
        let info = b"WARC/1.1\r\nWARC-Type: warcinfo\r\nWARC-Date: 2026-12-02T12:00:00Z\r\n\r\n";
        index.add(info, b"software: x\r\n", (150, 30), "a.warc.gz");
        assert_eq!(index.len(), 2);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.cdxj");
        index.write(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let digest = data_encoding::BASE32.encode(&sha1::Sha1::digest(b"<p>x"));
        assert_eq!(
            lines,
            [
                "com,example)/a 20261202120000 {\"url\":\"https://www.example.com/a\",\
                 \"mime\":\"warc/revisit\",\"status\":\"-\",\"digest\":\"ABC\",\
                 \"length\":\"50\",\"offset\":\"100\",\"filename\":\"a.warc.gz\"}"
                    .to_string(),
                format!(
                    "com,example)/b 20261202120000 {{\"url\":\"https://www.example.com/b/\",\
                     \"mime\":\"text/html\",\"status\":\"200\",\"digest\":\"{digest}\",\
                     \"length\":\"100\",\"offset\":\"0\",\"filename\":\"a.warc.gz\"}}"
                ),
            ]
        );
        assert_eq!(
            index_path(Path::new("/x/crawldedup-00001.warc.gz")),
            Path::new("/x/crawldedup-00001.cdxj")
        );
    }
}
