//! `crawldedup dedup` on WARC files: every `response` record decided as the page it holds,
//! named by file, offset and URI, whether the file is gzip-compressed per record or not,
//! WARC/1.0 or 1.1, its HTTP bodies chunked and gzip-encoded or plain.

use std::io::Write;

use crate::run_cli as cli;
use cli::{crawldedup, stderr, stdout};

pub(crate) fn record(version: &str, kind: &str, uri: &str, block: &[u8]) -> Vec<u8> {
    let mut head = format!(
        "{version}\r\nWARC-Type: {kind}\r\nWARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-{:012}>\r\n\
         WARC-Date: 2026-01-01T00:00:00Z\r\n",
        block.len()
    );
    if !uri.is_empty() {
        head.push_str(&format!("WARC-Target-URI: {uri}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", block.len()));
    [head.as_bytes(), block, b"\r\n\r\n"].concat()
}

/// The `--json` lines of a run, parsed.
pub(crate) fn json_lines(o: &std::process::Output) -> Vec<serde_json::Value> {
    stdout(o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `crawldedup dedup --json` over `files`, which must succeed, and its lines parsed.
pub(crate) fn dedup_json(files: &[String]) -> Vec<serde_json::Value> {
    let mut args = vec!["dedup", "--json"];
    args.extend(files.iter().map(String::as_str));
    let o = crawldedup(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    json_lines(&o)
}

pub(crate) fn page(text: &str) -> Vec<u8> {
    format!("<html><body><article><p>{text}</p></article></body></html>").into_bytes()
}

pub(crate) fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

pub(crate) const STORY: &str = "The council of the harbour town met on Tuesday and voted to repair the old \
    bridge after many letters from residents about the broken railings and the potholes near \
    the school.";
pub(crate) const OTHER: &str = "A storm closed the mountain road for two days; the crews cleared the \
    fallen trees and the snow, and the buses ran again on Friday morning to the villages \
    above the lake.";

/// The records: a warcinfo, a request, the story (chunked, gzip-encoded, WARC/1.1), the
/// same story on another site (plain, WARC/1.0), another story, an image, and a body in a
/// coding that is not read. Each with the URI a response record carries.
fn records() -> Vec<(Vec<u8>, Option<&'static str>)> {
    let encoded = gzip(&page(STORY));
    let chunked = [
        format!("{:x}\r\n", 10).as_bytes(),
        &encoded[..10],
        b"\r\n",
        format!("{:x}\r\n", encoded.len() - 10).as_bytes(),
        &encoded[10..],
        b"\r\n0\r\n\r\n",
    ]
    .concat();
    let story = [
        &b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\
           Content-Encoding: gzip\r\n\r\n"[..],
        &chunked,
    ]
    .concat();
    let copy = [
        &b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"[..],
        &page(STORY),
    ]
    .concat();
    let other = [
        &b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n"[..],
        &page(OTHER),
    ]
    .concat();
    let image = b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n\x1a\n".to_vec();
    let zstd =
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: zstd\r\n\r\nxx".to_vec();
    vec![
        (
            record("WARC/1.1", "warcinfo", "", b"software: test\r\n"),
            None,
        ),
        (
            record(
                "WARC/1.1",
                "request",
                "https://a.example/story",
                b"GET / HTTP/1.1\r\n\r\n",
            ),
            None,
        ),
        (
            record("WARC/1.1", "response", "https://a.example/story", &story),
            Some("https://a.example/story"),
        ),
        (
            record("WARC/1.0", "response", "https://b.example/copy", &copy),
            Some("https://b.example/copy"),
        ),
        (
            record("WARC/1.0", "response", "https://b.example/other", &other),
            Some("https://b.example/other"),
        ),
        (
            record("WARC/1.1", "response", "https://b.example/logo.png", &image),
            Some("https://b.example/logo.png"),
        ),
        (
            record("WARC/1.1", "response", "https://b.example/z", &zstd),
            Some("https://b.example/z"),
        ),
    ]
}

#[test]
fn every_response_record_is_decided_and_named_by_file_offset_and_uri() {
    let dir = tempfile::tempdir().unwrap();
    for compressed in [true, false] {
        let path = dir.path().join(if compressed {
            "crawl.warc.gz"
        } else {
            "crawl.warc"
        });
        let mut bytes = Vec::new();
        let mut expected = Vec::new();
        for (record, uri) in records() {
            if let Some(uri) = uri {
                expected.push((bytes.len() as u64, uri));
            }
            bytes.extend(if compressed { gzip(&record) } else { record });
        }
        std::fs::write(&path, &bytes).unwrap();
        let file = path.to_str().unwrap();
        let o = crawldedup(&["dedup", "--json", file]);
        // The record in an unread coding is named on stderr: exit code 1, the rest decided.
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains("zstd"), "{}", stderr(&o));
        assert!(stderr(&o).contains("https://b.example/z"), "{}", stderr(&o));
        let lines = json_lines(&o);
        assert_eq!(lines.len(), 4, "{lines:#?}");
        for (line, (offset, uri)) in lines.iter().zip(&expected) {
            assert_eq!(line["file"], file);
            assert_eq!(line["offset"], *offset, "{line}");
            assert_eq!(line["url"], *uri, "{line}");
        }
        assert_eq!(lines[0]["verdict"], "unique");
        assert_eq!(lines[1]["verdict"], "exact_duplicate");
        assert_eq!(lines[1]["of"], "https://a.example/story");
        assert_eq!(lines[1]["of_file"], file);
        assert_eq!(lines[1]["of_offset"], expected[0].0);
        assert_eq!(lines[2]["verdict"], "unique");
        assert_eq!(lines[3]["verdict"], "no_text");
    }
}

#[test]
fn a_damaged_warc_file_is_named_and_the_other_inputs_decided() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.warc.gz");
    let mut bytes: Vec<u8> = records().into_iter().flat_map(|(r, _)| gzip(&r)).collect();
    bytes.truncate(bytes.len() - 20);
    std::fs::write(&path, &bytes).unwrap();
    let html = dir.path().join("page.html");
    std::fs::write(&html, page(OTHER)).unwrap();
    let o = crawldedup(&[
        "dedup",
        "--json",
        path.to_str().unwrap(),
        html.to_str().unwrap(),
    ]);
    // The last member is cut in its deflate data: what it held is read, and said; its
    // record's body (in a coding that is not read) is named as before.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cut.warc.gz@") && stderr(&o).contains("last gzip member is cut short"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).contains("page.html"), "{}", stdout(&o));
    assert_eq!(stdout(&o).matches("\"file\":").count(), 5, "{}", stdout(&o));
    assert!(stderr(&o).contains("https://b.example/z"), "{}", stderr(&o));
}

/// A record that claims a block larger than any record is read for is named by its offset,
/// without the bytes being read into memory; the records before it are decided.
#[test]
fn a_record_claiming_a_huge_block_is_named_and_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.warc");
    let body = [
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n".as_slice(),
        &page("A story of the harbour and its ferries, told over several sentences so that it has words."),
    ]
    .concat();
    let first = record("WARC/1.1", "response", "https://a.example/story", &body);
    let huge = b"WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: https://a.example/huge\r\nContent-Length: 999999999999\r\n\r\nHTTP/1.1 200 OK\r\n\r\n<p>x</p>".to_vec();
    std::fs::write(&path, [first.clone(), huge].concat()).unwrap();
    let file = path.to_str().unwrap();
    let o = crawldedup(&["dedup", "--json", file]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let problem = stderr(&o);
    assert!(
        problem.contains(&format!("at offset {}", first.len())),
        "{problem}"
    );
    assert!(problem.contains("larger than 256 MiB"), "{problem}");
    assert_eq!(problem.lines().count(), 1, "{problem}");
    let lines = json_lines(&o);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["verdict"], "unique");
}

/// Many writers keep the `Transfer-Encoding: chunked` header of a body they stored
/// de-chunked: the body is read as it is, with one warning line naming the record, and the
/// page is decided. A body that is neither (PNG bytes under that header) is named in one
/// printable line of at most 200 characters, never its raw bytes.
#[test]
fn a_body_stored_de_chunked_under_a_chunked_header_is_read_as_it_is_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dechunked.warc");
    let html = [
        &b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n"[..],
        &page(STORY),
    ]
    .concat();
    let mut png =
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n\
        \x89PNG\x1a\x00\x00\x00\rIHDR\x00\x00\x01\x00"
            .to_vec();
    png.extend(std::iter::repeat_n(0xffu8, 600));
    png.extend_from_slice(b"\r\n");
    let bytes = [
        record("WARC/1.0", "response", "https://news.example/a/1", &html),
        record("WARC/1.0", "response", "https://news.example/logo", &png),
    ]
    .concat();
    std::fs::write(&path, &bytes).unwrap();
    let o = crawldedup(&["dedup", "--json", path.to_str().unwrap()]);
    let err = stderr(&o);
    let lines = json_lines(&o);
    assert_eq!(lines[0]["verdict"], "unique", "{err}");
    assert_eq!(lines[0]["url"], "https://news.example/a/1");
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning:")).collect();
    assert_eq!(warnings.len(), 2, "{err}");
    assert!(
        warnings[0].contains("dechunked.warc@0 (https://news.example/a/1)")
            && warnings[0].contains("not chunked"),
        "{err}"
    );
    for line in err.lines() {
        assert!(line.chars().count() <= 200 + "warning: ".len(), "{line}");
        assert!(
            !line.chars().any(|c| c.is_control() || c == '\u{fffd}'),
            "{line:?}"
        );
    }
}

/// A record whose Content-Length is wrong does not end the file: its block is read to the
/// next line that starts `WARC/`, with one warning naming the field, and every record after
/// it is decided. A halved length, a negative one and one past any integer, each in the
/// first of five records (as warcio reads such files, with a warning).
#[test]
fn a_wrong_content_length_is_named_and_the_reader_goes_on_to_the_next_record() {
    let texts = [
        STORY,
        OTHER,
        "A third story about the ferry timetable, changed for the \
        winter months so that the first boat leaves at seven and the last returns at six.",
        "A fourth story: the library opens a new reading room on the ground floor, with \
        newspapers from twelve countries and a corner for children's books and games.",
        "A fifth story on the orchard harvest, late this year after a cold spring, with the \
        pears picked in October and the apples still on the trees in the first week of November.",
    ];
    let responses: Vec<Vec<u8>> = texts
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let block = [
                &b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"[..],
                &page(text),
            ]
            .concat();
            record(
                "WARC/1.0",
                "response",
                &format!("https://news.example/a/{i}"),
                &block,
            )
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    for (name, wrong) in [
        ("halved", None),
        ("negative", Some("-5")),
        ("huge", Some("99999999999999999999")),
    ] {
        let mut first = String::from_utf8(responses[0].clone()).unwrap();
        let length = first
            .lines()
            .find_map(|l| l.strip_prefix("Content-Length: "))
            .unwrap()
            .to_string();
        let value = match wrong {
            Some(value) => value.to_string(),
            None => (length.parse::<usize>().unwrap() / 2).to_string(),
        };
        first = first.replacen(
            &format!("Content-Length: {length}"),
            &format!("Content-Length: {value}"),
            1,
        );
        let bytes = [first.as_bytes(), &responses[1..].concat()].concat();
        let path = dir.path().join(format!("{name}.warc"));
        std::fs::write(&path, &bytes).unwrap();
        let o = crawldedup(&["dedup", "--json", path.to_str().unwrap()]);
        let err = stderr(&o);
        let lines = json_lines(&o);
        assert_eq!(lines.len(), 5, "{name}: {err}\n{}", stdout(&o));
        for (i, line) in lines.iter().enumerate() {
            assert_eq!(line["url"], format!("https://news.example/a/{i}"), "{name}");
            assert_eq!(line["verdict"], "unique", "{name}: {line}");
        }
        let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning:")).collect();
        assert_eq!(warnings.len(), 1, "{name}: {err}");
        assert!(warnings[0].contains("Content-Length"), "{name}: {err}");
        assert!(
            warnings[0].contains(&format!("{name}.warc@0")),
            "{name}: {err}"
        );
        if let Some(value) = wrong {
            assert!(warnings[0].contains(value), "{name}: {err}");
        }
        assert_eq!(o.status.code(), Some(0), "{name}: {err}");
    }
}

/// Records that end their blocks with one line end, or none, instead of two: each is read,
/// and the next record with it.
#[test]
fn records_without_the_blank_lines_after_their_blocks_are_each_read() {
    let dir = tempfile::tempdir().unwrap();
    for (name, ends) in [("one", &b"\r\n"[..]), ("none", &b""[..])] {
        let bytes: Vec<u8> = [STORY, OTHER]
            .iter()
            .enumerate()
            .flat_map(|(i, text)| {
                let block = [
                    &b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"[..],
                    &page(text),
                ]
                .concat();
                let mut r = record(
                    "WARC/1.0",
                    "response",
                    &format!("https://n.example/{i}"),
                    &block,
                );
                r.truncate(r.len() - 4);
                r.extend_from_slice(ends);
                r
            })
            .collect();
        let path = dir.path().join(format!("{name}.warc"));
        std::fs::write(&path, &bytes).unwrap();
        let o = crawldedup(&["dedup", "--json", path.to_str().unwrap()]);
        let lines = json_lines(&o);
        assert_eq!(lines.len(), 2, "{name}: {}", stderr(&o));
        assert_eq!(lines[1]["url"], "https://n.example/1", "{name}");
        assert_eq!(lines[1]["verdict"], "unique", "{name}");
    }
}

/// WARC/0.18 and WARC/0.17 records with their writers' dates (a UTC offset without its
/// colon, a 14-digit timestamp, a day that is no day) are read, each date named once in a
/// warning; every page is decided.
#[test]
fn warc_0_18_records_with_dates_that_are_not_rfc_3339_are_read() {
    let block = |text: &str| {
        [
            &b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"[..],
            &page(text),
        ]
        .concat()
    };
    let dated = |version: &str, date: &str, uri: &str, text: &str| {
        let r = record(version, "response", uri, &block(text));
        String::from_utf8(r)
            .unwrap()
            .replace(
                "WARC-Date: 2026-01-01T00:00:00Z",
                &format!("WARC-Date: {date}"),
            )
            .into_bytes()
    };
    let bytes = [
        dated(
            "WARC/0.18",
            "2009-03-05T08:43:19-0800",
            "http://a.example/1",
            STORY,
        ),
        dated("WARC/0.17", "20090305084319", "http://a.example/2", OTHER),
        dated(
            "WARC/0.18",
            "2009-03-65T08:43:19-0800",
            "http://a.example/3",
            "A third \
            story on the ferry timetable, changed for the winter so that the first boat \
            leaves at seven and the last one comes back at six.",
        ),
    ]
    .concat();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("clueweb.warc");
    std::fs::write(&path, &bytes).unwrap();
    let o = crawldedup(&["dedup", "--json", path.to_str().unwrap()]);
    let err = stderr(&o);
    let lines = json_lines(&o);
    assert_eq!(lines.len(), 3, "{err}");
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(line["url"], format!("http://a.example/{}", i + 1));
        assert_eq!(line["verdict"], "unique");
    }
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning:")).collect();
    assert_eq!(warnings.len(), 3, "{err}");
    assert!(
        warnings[0].contains("read as 2009-03-05T08:43:19-08:00"),
        "{err}"
    );
    assert!(
        warnings[1].contains("read as 2009-03-05T08:43:19Z"),
        "{err}"
    );
    assert!(warnings[2].contains("2009-03-65"), "{err}");
    assert_eq!(o.status.code(), Some(0), "{err}");
}

/// A body in `Content-Encoding: br` is decompressed as gzip and deflate ones are: the page
/// it holds is the same page as its plain copy. And the last gzip member of a file cut in
/// its page is read to the cut, with a warning, and the page it held decided.
#[test]
fn a_brotli_body_is_read_and_a_cut_last_member_decided_on_what_it_held() {
    let mut encoded = Vec::new();
    {
        let mut writer = brotli::CompressorWriter::new(&mut encoded, 4096, 5, 22);
        writer.write_all(&page(STORY)).unwrap();
    }
    let br = [
        &b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: br\r\n\r\n"[..],
        &encoded,
    ]
    .concat();
    let plain = [
        &b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"[..],
        &page(STORY),
    ]
    .concat();
    let long: String = [OTHER, STORY, OTHER, STORY].join(" ");
    let last = [
        &b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"[..],
        &page(&long),
    ]
    .concat();
    let mut bytes: Vec<u8> = [
        gzip(&record("WARC/1.1", "response", "https://a.example/br", &br)),
        gzip(&record(
            "WARC/1.1",
            "response",
            "https://b.example/plain",
            &plain,
        )),
    ]
    .concat();
    let cut = gzip(&record(
        "WARC/1.1",
        "response",
        "https://c.example/long",
        &last,
    ));
    bytes.extend_from_slice(&cut[..cut.len() * 3 / 4]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("br.warc.gz");
    std::fs::write(&path, &bytes).unwrap();
    let o = crawldedup(&["dedup", "--json", path.to_str().unwrap()]);
    let err = stderr(&o);
    let lines = json_lines(&o);
    assert_eq!(lines.len(), 3, "{err}");
    assert_eq!(lines[0]["verdict"], "unique", "{err}");
    assert_eq!(lines[1]["verdict"], "exact_duplicate", "{}", lines[1]);
    assert_eq!(lines[1]["of"], "https://a.example/br");
    assert_eq!(lines[2]["url"], "https://c.example/long");
    assert_eq!(lines[2]["verdict"], "unique", "{}", lines[2]);
    assert!(err.contains("last gzip member is cut short"), "{err}");
    assert_eq!(o.status.code(), Some(0), "{err}");
}
