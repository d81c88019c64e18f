//! ARC files (`.arc`, `.arc.gz`), the Internet Archive's format before WARC, read as
//! arc2warc reads them: after the file's version block (`filedesc://`), each record is a
//! header line (`URL IP-address date content-type length`, version 1, or the ten fields of
//! version 2; the length is the last field either way) and that many bytes of the HTTP
//! response as it was received, which becomes the page of a `response` record. A `.arc.gz`
//! file is a gzip member a record, as a `.warc.gz` one is.

use std::io::{BufRead, Read};

use super::http::http_response;
use super::warc::{Item, MAX_RECORD_BYTES, Response, member, open_archive};

/// Whether `path` names an ARC file.
pub fn is_arc(path: &std::path::Path) -> bool {
    let name = path.to_string_lossy().to_ascii_lowercase();
    name.ends_with(".arc") || name.ends_with(".arc.gz")
}

/// Calls `each` with every record of the ARC file `path` as a WARC `response` would be,
/// one record (one gzip member) at a time; `Err` names the file, the offset and what is
/// wrong when it cannot be read on.
pub(super) fn each_record<R: Read, E>(
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
    loop {
        let offset = input.consumed;
        match input.fill_buf() {
            Ok([]) => return Ok(Ok(())),
            Ok(_) => {}
            Err(e) => return Ok(Err(format!("{name}: at offset {offset}: {e}"))),
        }
        if gzip {
            let mut forgiven = Vec::new();
            let bytes = match member(&mut input, &mut forgiven) {
                Ok(bytes) => bytes,
                Err(problem) => return Ok(Err(format!("{name}: at offset {offset}: {problem}"))),
            };
            let mut rest = &bytes[..];
            while let Some(found) = next_record(&mut rest) {
                if let Err(problem) = found {
                    return Ok(Err(format!("{name}: at offset {offset}: {problem}")));
                }
                if let Ok(Some(item)) = found.map(|r| r.into_item(offset, raw)) {
                    each(item)?;
                }
            }
        } else {
            let record = match plain_record(&mut input) {
                Ok(Some(record)) => record,
                Ok(None) => return Ok(Ok(())),
                Err(problem) => return Ok(Err(format!("{name}: at offset {offset}: {problem}"))),
            };
            if let Some(item) = record.into_item(offset, raw) {
                each(item)?;
            }
        }
    }
}

/// One ARC record: the fields of its header line and its block.
struct Record {
    url: String,
    ip: String,
    /// `YYYYMMDDhhmmss`.
    date: String,
    mime: String,
    block: Vec<u8>,
}

impl Record {
    /// The record as the response a WARC file would hold, with the bytes of that WARC
    /// record when `raw`; `None` for the version block.
    fn into_item(self, offset: u64, raw: bool) -> Option<Item> {
        if self.url.starts_with("filedesc:") {
            return None;
        }
        let http = self.url.starts_with("http:") || self.url.starts_with("https:");
        let raw = if raw {
            self.warc_record(http)
        } else {
            Vec::new()
        };
        if !http {
            // A `dns:` lookup or another resource: not a page.
            return (!raw.is_empty()).then_some(Item::Other { offset, raw });
        }
        let mut warnings = Vec::new();
        let (content_type, body) = match http_response(&self.block, &mut warnings) {
            Ok((content_type, body)) => (content_type, Ok(body)),
            Err(problem) => (None, Err(problem)),
        };
        Some(Item::Response(Response {
            offset,
            uri: self.url,
            content_type,
            body,
            warnings,
            record_id: None,
            payload_digest: None,
            raw,
        }))
    }

    /// The WARC record arc2warc makes of this one: a `response` for an HTTP URL, else a
    /// `resource` of the record's content type, dated by the ARC date.
    fn warc_record(&self, http: bool) -> Vec<u8> {
        use std::fmt::Write as _;
        let d = &self.date;
        let date = if d.len() >= 14 && d.bytes().take(14).all(|b| b.is_ascii_digit()) {
            format!(
                "{}-{}-{}T{}:{}:{}Z",
                &d[..4],
                &d[4..6],
                &d[6..8],
                &d[8..10],
                &d[10..12],
                &d[12..14]
            )
        } else {
            "1996-01-01T00:00:00Z".to_string()
        };
        let mut head = String::with_capacity(400);
        let _ = write!(
            head,
            "WARC/1.0\r\nWARC-Type: {}\r\nWARC-Record-ID: <urn:uuid:{}>\r\nWARC-Date: {date}\r\n\
             WARC-Target-URI: {}\r\n",
            if http { "response" } else { "resource" },
            uuid::Uuid::new_v4(),
            self.url
        );
        if !self.ip.is_empty() && self.ip != "-" {
            let _ = write!(head, "WARC-IP-Address: {}\r\n", self.ip);
        }
        let content_type = if http {
            "application/http;msgtype=response"
        } else {
            &self.mime
        };
        let _ = write!(
            head,
            "Content-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
            self.block.len()
        );
        [head.as_bytes(), &self.block].concat()
    }
}

/// A record's header line: its URL, IP address, date and content type, and its length.
fn header(line: &str) -> Result<(Record, u64), String> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let (Some(url), Some(length)) = (fields.first(), fields.last()) else {
        return Err("an empty ARC record header".into());
    };
    let length = length.parse::<u64>().map_err(|_| {
        format!(
            "an ARC record header without a length: `{}`",
            super::printable_line(line, 80)
        )
    })?;
    if fields.len() < 5 || length > MAX_RECORD_BYTES {
        return Err(format!(
            "not an ARC record header: `{}`",
            super::printable_line(line, 80)
        ));
    }
    let record = Record {
        url: url.to_string(),
        ip: fields[1].to_string(),
        date: fields[2].to_string(),
        mime: fields[3].to_string(),
        block: Vec::new(),
    };
    Ok((record, length))
}

/// The next record in `rest` (one gzip member's bytes), moving past it.
fn next_record(rest: &mut &[u8]) -> Option<Result<Record, String>> {
    while rest.first().is_some_and(u8::is_ascii_whitespace) {
        *rest = &rest[1..];
    }
    if rest.is_empty() {
        return None;
    }
    let line_end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
    let line = String::from_utf8_lossy(&rest[..line_end]).into_owned();
    let (mut record, length) = match header(&line) {
        Ok(found) => found,
        Err(problem) => return Some(Err(problem)),
    };
    let start = (line_end + 1).min(rest.len());
    let end = (start as u64 + length).min(rest.len() as u64) as usize;
    record.block = rest[start..end].to_vec();
    *rest = &rest[end..];
    Some(Ok(record))
}

/// The next record of an uncompressed ARC file, `None` at its end.
fn plain_record(input: &mut impl BufRead) -> Result<Option<Record>, String> {
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = input
            .by_ref()
            .take(1 << 16)
            .read_until(b'\n', &mut line)
            .map_err(|e| e.to_string())?;
        if read == 0 {
            return Ok(None);
        }
        if !line.iter().all(u8::is_ascii_whitespace) {
            break;
        }
    }
    let (mut record, length) = header(&String::from_utf8_lossy(&line))?;
    let block = &mut record.block;
    input
        .by_ref()
        .take(length)
        .read_to_end(block)
        .map_err(|e| e.to_string())?;
    if (block.len() as u64) < length {
        return Err("an ARC record cut short in its block".into());
    }
    Ok(Some(record))
}
