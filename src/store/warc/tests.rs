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

#[test]
fn the_index_lines_a_writer_makes_from_what_it_wrote_are_those_read_back_from_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = WarcWriter::open(dir.path(), u64::MAX, WarcPosition::default()).unwrap();
    let body = b"<html><body><p>The harbour ferry timetable changes in May.</p></body></html>";
    // Content types as servers send them, and a status of two digits (no line).
    for (i, content_type) in [
        Some("text/html; charset=UTF-8"),
        Some(" TEXT/HTML "),
        Some(""),
        Some(";charset=gbk"),
        None,
    ]
    .into_iter()
    .enumerate()
    {
        w.response(
            &format!("https://example.com/a{i}?b=1"),
            200,
            content_type,
            body,
        )
        .unwrap();
    }
    w.response("https://example.com/odd", 42, Some("text/html"), body)
        .unwrap();
    // A revisit (the same bytes), and a near duplicate archived as a response.
    duplicate(
        &mut w,
        "https://example.com/print",
        None,
        body,
        "https://example.com/a0?b=1",
        None,
    )
    .unwrap();
    duplicate(
        &mut w,
        "https://example.com/comments",
        Some("text/html"),
        b"<p>other</p>",
        "https://example.com/a0?b=1",
        Some(3),
    )
    .unwrap();
    w.sync().unwrap();
    let warc = dir.path().join(file_name(0));
    let written = std::fs::read_to_string(index_path(&warc)).unwrap();
    let read_back = dir.path().join("read-back.cdxj");
    Cdxj::of_file(&warc).unwrap().write(&read_back).unwrap();
    assert_eq!(written, std::fs::read_to_string(&read_back).unwrap());
    // Every record but the warcinfo and the response without a status has its line.
    assert_eq!(written.lines().count(), 7, "{written}");
    assert!(written.contains("\"mime\":\"warc/revisit\""), "{written}");
    assert!(written.contains("\"mime\":\"unk\""), "{written}");
}
