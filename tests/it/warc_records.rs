//! `crawldedup dedup` on the records of an archive that are not plain responses: revisit
//! records, found against the records they name (in the same run, or an earlier run on the
//! same state directory), and ARC files.

use super::warc_input::{OTHER, STORY, gzip, json_lines, page, record};
use crate::run_cli as cli;
use cli::{crawldedup, stderr, stdout};

/// `record` with extra header lines (before its Content-Length).
fn record_with(
    version: &str,
    kind: &str,
    uri: &str,
    extra: &[(&str, &str)],
    block: &[u8],
) -> Vec<u8> {
    let lines: String = extra.iter().map(|(k, v)| format!("{k}: {v}\r\n")).collect();
    let r = String::from_utf8_lossy(&record(version, kind, uri, block)).into_owned();
    r.replacen("Content-Length:", &format!("{lines}Content-Length:"), 1)
        .into_bytes()
}

/// Revisit records are the duplicates they say they are, never pages: each is reported as
/// `revisit` of the record it names, by id, by URI, or (URL-agnostic) by payload digest,
/// whether that record is in the same file or an earlier one; one that names a record the
/// run did not read is reported with no original and a warning.
#[test]
fn revisit_records_are_reported_against_the_records_they_name() {
    let block = [
        &b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"[..],
        &page(STORY),
    ]
    .concat();
    let revisit_block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n";
    let profile = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";
    let first = record_with(
        "WARC/1.1",
        "response",
        "https://a.example/story",
        &[("WARC-Payload-Digest", "sha1:AAAA")],
        &block,
    );
    let first = String::from_utf8(first)
        .unwrap()
        .replacen(
            "WARC-Record-ID: <urn:uuid:",
            "WARC-Record-ID: <urn:uuid:1",
            1,
        )
        .into_bytes();
    let id = String::from_utf8_lossy(&first)
        .lines()
        .find_map(|l| l.strip_prefix("WARC-Record-ID: ").map(str::to_string))
        .unwrap();
    let by_id = record_with(
        "WARC/1.1",
        "revisit",
        "https://a.example/story",
        &[
            ("WARC-Refers-To", &id),
            ("WARC-Profile", profile),
            ("WARC-Payload-Digest", "sha1:AAAA"),
        ],
        revisit_block,
    );
    let by_uri = record_with(
        "WARC/1.1",
        "revisit",
        "https://a.example/story",
        &[
            ("WARC-Refers-To-Target-URI", "https://a.example/story"),
            ("WARC-Refers-To-Date", "2026-01-01T00:00:00Z"),
            ("WARC-Profile", profile),
        ],
        revisit_block,
    );
    let agnostic = record_with(
        "WARC/1.1",
        "revisit",
        "https://mirror.example/same",
        &[
            ("WARC-Payload-Digest", "sha1:AAAA"),
            ("WARC-Profile", profile),
        ],
        revisit_block,
    );
    let unknown = record_with(
        "WARC/1.1",
        "revisit",
        "https://b.example/gone",
        &[
            ("WARC-Payload-Digest", "sha1:BBBB"),
            ("WARC-Profile", profile),
        ],
        revisit_block,
    );
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one.warc");
    let two = dir.path().join("two.warc.gz");
    std::fs::write(&one, [first, by_id].concat()).unwrap();
    std::fs::write(
        &two,
        [gzip(&by_uri), gzip(&agnostic), gzip(&unknown)].concat(),
    )
    .unwrap();
    let o = crawldedup(&[
        "dedup",
        "--json",
        one.to_str().unwrap(),
        two.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    let lines = json_lines(&o);
    assert_eq!(lines.len(), 5, "{err}\n{}", stdout(&o));
    assert_eq!(lines[0]["verdict"], "unique");
    for line in &lines[1..4] {
        assert_eq!(line["verdict"], "revisit", "{line}");
        assert_eq!(line["of"], "https://a.example/story", "{line}");
        assert_eq!(line["of_file"], one.to_str().unwrap(), "{line}");
        assert_eq!(line["of_offset"], 0, "{line}");
        assert_eq!(line["profile"], profile, "{line}");
    }
    assert_eq!(lines[3]["url"], "https://mirror.example/same");
    assert_eq!(lines[4]["verdict"], "revisit");
    assert!(lines[4]["of"].is_null(), "{}", lines[4]);
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning:")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(warnings[0].contains("sha1:BBBB"), "{err}");
    assert_eq!(o.status.code(), Some(0), "{err}");
}

/// ARC files, version 1, plain and a gzip member a record: the version block is not a page,
/// every other record is decided as the response it holds, named by file, offset and URL.
#[test]
fn arc_files_are_read_as_their_responses() {
    let arc_record = |url: &str, block: &[u8]| {
        [
            format!("{url} 192.0.2.1 20090305084319 text/html {}\n", block.len()).as_bytes(),
            block,
            b"\n",
        ]
        .concat()
    };
    let version = b"1 0 Alexa Internet\nURL IP-address Archive-date Content-type Archive-length\n";
    let head = arc_record("filedesc://crawl.arc", version);
    let page_block = |text: &str| {
        [
            &b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n"[..],
            &page(text),
        ]
        .concat()
    };
    let records = [
        head,
        arc_record("http://a.example/story", &page_block(STORY)),
        arc_record("http://b.example/copy", &page_block(STORY)),
        arc_record("http://b.example/other", &page_block(OTHER)),
    ];
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("crawl.arc");
    let packed = dir.path().join("crawl.arc.gz");
    std::fs::write(&plain, records.concat()).unwrap();
    std::fs::write(
        &packed,
        records.iter().flat_map(|r| gzip(r)).collect::<Vec<u8>>(),
    )
    .unwrap();
    for path in [&plain, &packed] {
        let o = crawldedup(&["dedup", "--json", path.to_str().unwrap()]);
        let lines = json_lines(&o);
        assert_eq!(lines.len(), 3, "{}: {}", path.display(), stderr(&o));
        assert_eq!(lines[0]["url"], "http://a.example/story");
        assert_eq!(lines[0]["verdict"], "unique");
        assert_eq!(lines[1]["verdict"], "exact_duplicate");
        assert_eq!(lines[1]["of"], "http://a.example/story");
        assert_eq!(lines[2]["verdict"], "unique");
        assert!(lines[2]["offset"].as_u64().unwrap() > 0);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
}

/// A revisit of a record that an earlier run on the same state directory read is reported
/// against it: the state directory keeps where each response record was read, and a line
/// a killed run left cut short is left out without taking the next run's with it.
#[test]
fn a_revisit_finds_its_record_from_an_earlier_run_on_the_state_directory() {
    let block = [
        &b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"[..],
        &page(STORY),
    ]
    .concat();
    let first = record_with(
        "WARC/1.1",
        "response",
        "https://a.example/story",
        &[("WARC-Payload-Digest", "sha1:CCCC")],
        &block,
    );
    let revisit = record_with(
        "WARC/1.1",
        "revisit",
        "https://a.example/story",
        &[("WARC-Payload-Digest", "sha1:CCCC")],
        b"HTTP/1.1 200 OK\r\n\r\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let (one, two) = (dir.path().join("2025.warc"), dir.path().join("2026.warc"));
    std::fs::write(&one, first).unwrap();
    let other = record(
        "WARC/1.1",
        "response",
        "https://a.example/other",
        &[
            &b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"[..],
            &page(OTHER),
        ]
        .concat(),
    );
    std::fs::write(&two, [revisit, other].concat()).unwrap();
    let run = |file: &std::path::Path| {
        let o = crawldedup(&[
            "dedup",
            "--json",
            "--state-dir",
            state.to_str().unwrap(),
            file.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        serde_json::from_str::<serde_json::Value>(stdout(&o).lines().next().unwrap()).unwrap()
    };
    assert_eq!(run(&one)["verdict"], "unique");
    // A run killed while it appended left a line cut short.
    let records = state.join("warc-records.jsonl");
    let mut kept = std::fs::read_to_string(&records).unwrap();
    kept.push_str("{\"uri\":\"https://cut.example/\",\"fi");
    std::fs::write(&records, &kept).unwrap();
    for _ in 0..2 {
        let line = run(&two);
        assert_eq!(line["verdict"], "revisit", "{line}");
        assert_eq!(line["of"], "https://a.example/story");
        assert_eq!(line["of_file"], one.to_str().unwrap());
        assert_eq!(line["of_offset"], 0);
    }
    // The run after the cut line started its own on a line of its own.
    let text = std::fs::read_to_string(&records).unwrap();
    let parsed: Vec<bool> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).is_ok())
        .collect();
    assert_eq!(parsed, [true, false, true, true], "{text}");
}

/// Responses whose status line is odd are read as any other: no reason phrase, an empty
/// status line, a status line of HTTP/0.9's kind (no version).
#[test]
fn responses_with_odd_status_lines_are_decided() {
    let odd = ["HTTP/1.1 200\r\n", "\r\n", "200 OK\r\n"];
    let texts = [
        STORY,
        OTHER,
        "A third story on the ferry timetable, changed for the winter \
        so that the first boat leaves at seven and the last one comes back at six.",
    ];
    let bytes: Vec<u8> = odd
        .iter()
        .zip(texts)
        .enumerate()
        .flat_map(|(i, (status, text))| {
            let block = [
                status.as_bytes(),
                b"Content-Type: text/html\r\n\r\n",
                &page(text),
            ]
            .concat();
            gzip(&record(
                "WARC/1.0",
                "response",
                &format!("https://odd.example/{i}"),
                &block,
            ))
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("odd.warc.gz");
    std::fs::write(&path, bytes).unwrap();
    let o = crawldedup(&["dedup", "--json", path.to_str().unwrap()]);
    let lines = json_lines(&o);
    assert_eq!(lines.len(), 3, "{}", stderr(&o));
    for line in &lines {
        assert_eq!(line["verdict"], "unique", "{line}");
    }
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// `.warc.zst` files (the IIPC zstd profile): a zstd frame a record, compressed with the
/// dictionary that a skippable frame at the start holds (raw, or itself compressed), or
/// with none. Every record is read, named by the offset of its frame.
#[test]
fn warc_zst_files_are_read_with_their_dictionary() {
    use std::io::Write;
    let block = |text: &str| {
        [
            &b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"[..],
            &page(text),
        ]
        .concat()
    };
    let records = [
        record("WARC/1.1", "response", "https://z.example/1", &block(STORY)),
        record("WARC/1.1", "response", "https://z.example/2", &block(OTHER)),
        record(
            "WARC/1.1",
            "response",
            "https://z.example/copy",
            &block(STORY),
        ),
    ];
    // A raw-content dictionary: text the records share.
    let dictionary = b"WARC/1.1\r\nWARC-Type: response\r\nContent-Type: text/html\r\n\
        HTTP/1.1 200 OK\r\n<html><body><article><p>"
        .repeat(4);
    let compressed_dictionary = zstd::encode_all(&dictionary[..], 3).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (name, frame) in [
        ("raw", Some(dictionary.clone())),
        ("packed", Some(compressed_dictionary)),
        ("none", None),
    ] {
        let mut bytes = Vec::new();
        let mut offsets = Vec::new();
        if let Some(frame) = &frame {
            bytes.extend_from_slice(&0x184D2A5Du32.to_le_bytes());
            bytes.extend_from_slice(&(frame.len() as u32).to_le_bytes());
            bytes.extend_from_slice(frame);
        }
        let with = if frame.is_some() {
            &dictionary[..]
        } else {
            &[][..]
        };
        for r in &records {
            offsets.push(bytes.len() as u64);
            let mut encoder =
                zstd::stream::write::Encoder::with_dictionary(Vec::new(), 3, with).unwrap();
            encoder.write_all(r).unwrap();
            bytes.extend_from_slice(&encoder.finish().unwrap());
        }
        let path = dir.path().join(format!("{name}.warc.zst"));
        std::fs::write(&path, &bytes).unwrap();
        let o = crawldedup(&["dedup", "--json", path.to_str().unwrap()]);
        let lines = json_lines(&o);
        assert_eq!(lines.len(), 3, "{name}: {}", stderr(&o));
        for (line, offset) in lines.iter().zip(&offsets) {
            assert_eq!(line["offset"], *offset, "{name}: {line}");
        }
        assert_eq!(lines[0]["verdict"], "unique");
        assert_eq!(lines[1]["verdict"], "unique");
        assert_eq!(lines[2]["verdict"], "exact_duplicate", "{name}");
        assert_eq!(lines[2]["of"], "https://z.example/1");
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
    }
}
