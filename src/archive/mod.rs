//! Reading web archives written by any tool: WARC files (`.warc`, `.warc.gz`,
//! `.warc.zst`; WARC/0.17 to 1.1) and ARC files (`.arc`, `.arc.gz`), one record at a time,
//! forgiving what warcio forgives and saying what it forgave (see [`Item::Forgiven`]).
//!
//! ```
//! let warc = b"WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:1>\r\n\
//!     WARC-Date: 2026-01-01T00:00:00Z\r\nWARC-Target-URI: https://example.com/\r\n\
//!     Content-Type: application/http;msgtype=response\r\nContent-Length: 47\r\n\r\n\
//!     HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>hi\r\n\r\n";
//! let mut pages = Vec::new();
//! let read = crawldedup::archive::each_record_in("example.warc", &warc[..], false, |item| {
//!     if let crawldedup::archive::Item::Response(r) = item {
//!         pages.push((r.uri, r.body.unwrap()));
//!     }
//!     Ok::<(), std::convert::Infallible>(())
//! });
//! assert!(read.unwrap().is_ok());
//! assert_eq!(pages, [("https://example.com/".to_string(), b"<p>hi".to_vec())]);
//! ```

use std::io::Read;
use std::path::Path;

mod arc;
mod dates;
mod http;
mod warc;
mod zstd_frames;

pub use arc::is_arc;
pub use http::http_response;
pub use warc::{Item, MAX_RECORD_BYTES, Response, Revisit, is_warc};

/// The most characters of a problem's line ([`printable_line`]).
pub const PROBLEM_CHARS: usize = 200;

/// Calls `each` with the records of the archive file `path` in order (see
/// [`each_record_in`]). The outer `Err` is `each`'s; the inner one names the file, the
/// offset and why the file cannot be read on (what came before it was yielded).
pub fn each_record<E>(
    path: &Path,
    raw: bool,
    each: impl FnMut(Item) -> Result<(), E>,
) -> Result<Result<(), String>, E> {
    let name = path.display().to_string();
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) => return Ok(Err(format!("{name}: {e}"))),
    };
    each_record_in(&name, file, raw, each)
}

/// Calls `each` with every `response` and `revisit` record of the archive `input`, named
/// `name` (an ARC file when the name says so, else WARC, compressed or not as its first
/// bytes say), and with what was forgiven in reading it; with `raw`, every other record
/// too, and each record's bytes.
pub fn each_record_in<R: Read, E>(
    name: &str,
    input: R,
    raw: bool,
    each: impl FnMut(Item) -> Result<(), E>,
) -> Result<Result<(), String>, E> {
    if is_arc(Path::new(name)) {
        arc::each_record(name, input, raw, each)
    } else {
        warc::each_response(name, input, raw, each)
    }
}

/// `text` as one printable line of at most `most` characters: line breaks, tabs and other
/// control characters escaped (`\n`, `\u{1b}`), bytes that were not UTF-8 (read as U+FFFD)
/// shown as `?`, whitespace runs as one space, and the rest cut with `...`.
pub fn printable_line(text: &str, most: usize) -> String {
    let mut line = String::with_capacity(text.len().min(most * 4));
    let mut chars = 0;
    let mut space = false;
    for c in text.chars() {
        if c == ' ' {
            if space {
                continue;
            }
            space = true;
        } else {
            space = false;
        }
        let shown: String = match c {
            '\u{fffd}' => "?".to_string(),
            c if c.is_control() => c.escape_debug().to_string(),
            c => c.to_string(),
        };
        let width = shown.chars().count();
        if chars + width > most.saturating_sub(3) {
            line.push_str("...");
            return line;
        }
        chars += width;
        line.push_str(&shown);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_problem_is_one_printable_line_of_at_most_its_length() {
        let png = String::from_utf8_lossy(b"chunk `\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR` bad");
        let line = printable_line(&png, PROBLEM_CHARS);
        assert_eq!(line, "chunk `?PNG\\r\\n\\u{1a}\\n\\0\\0\\0\\rIHDR` bad");
        let long = "x".repeat(1000);
        let line = printable_line(&long, PROBLEM_CHARS);
        assert_eq!(line.chars().count(), PROBLEM_CHARS);
        assert!(line.ends_with("..."));
        assert_eq!(printable_line("a  b\tc", 50), "a b\\tc");
    }

    /// The fuzz target's first find: a revisit whose `WARC-Target-URI` has a byte that is
    /// not UTF-8 made the WARC parser panic.
    #[test]
    fn a_header_that_is_not_utf8_is_read_percent_encoded_and_said() {
        let crash = include_bytes!("../../tests/fixtures/fuzz/warc-latin1-target-uri");
        let mut uris = Vec::new();
        let mut forgiven = Vec::new();
        let read = each_record_in("fuzz.warc", &crash[1..], true, |item| {
            match item {
                Item::Response(r) => uris.push(r.uri),
                Item::Revisit(r) => uris.push(r.uri),
                Item::Forgiven { problem, .. } => forgiven.push(problem),
                Item::Other { .. } => {}
            }
            Ok::<(), ()>(())
        });
        assert!(read.unwrap().is_ok());
        assert_eq!(uris, ["http://a.test/", "http:/%E6/b.test/"]);
        assert!(
            forgiven.iter().any(|p| p.contains("not UTF-8")),
            "{forgiven:?}"
        );
    }
}
