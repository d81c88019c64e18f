//! `crawldedup dedup --warc-out DIR`: a deduplicated copy of each archive, with its CDXJ
//! index, that warcio reads whole and pywb replays: every URL of the inputs with the bytes
//! the inputs held for it, a repeated payload as a revisit of its first copy.

use std::collections::HashMap;
use std::path::Path;

use super::warc_input::{OTHER, STORY, page, record};

use crate::run_cli as cli;
use cli::{crawldedup, stderr};
use crawldedup::fixture::{Site, serve};
use crawldedup::store::warc::sha1_digest;

const COMMENT: &str = "A reader wrote that the railings had been broken since the spring.";
const THIRD: &str = "The library on the market square opens a reading room for children in \
    March, with two thousand new books, a corner for picture books and readings by local \
    writers on Saturday mornings through the whole of the spring term.";

fn response(uri: &str, body: &[u8]) -> Vec<u8> {
    let block = [
        &b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"[..],
        body,
    ]
    .concat();
    record("WARC/1.1", "response", uri, &block)
}

/// A hand-made archive of another writer: a request and a metadata record around the
/// story's response, the same bytes at a mirror's URL, the story with a comment, another
/// story, and an image twice. Each URL with the bytes it holds.
fn other_archive(path: &Path) -> HashMap<String, Vec<u8>> {
    let story = page(&format!("{STORY}</p><p>{OTHER}"));
    let commented = page(&format!("{STORY}</p><p>{OTHER}</p><p>{COMMENT}"));
    let other = page(THIRD);
    let image = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR fake image bytes".to_vec();
    let served = [
        ("http://news.test/story", story.clone()),
        ("http://mirror.test/copy-of-story", story),
        ("http://news.test/story?comments=1", commented),
        ("http://news.test/other", other),
        ("http://news.test/logo.png", image.clone()),
        ("http://news.test/logo-2.png", image),
    ];
    let mut bytes = record(
        "WARC/1.1",
        "request",
        served[0].0,
        b"GET /story HTTP/1.1\r\nHost: news.test\r\n\r\n",
    );
    for (i, (uri, body)) in served.iter().enumerate() {
        bytes.extend(response(uri, body));
        if i == 0 {
            bytes.extend(record("WARC/1.1", "metadata", uri, b"outlinks: none\r\n"));
        }
    }
    // The input's own revisit of the mirror's copy, which the copy makes a revisit too: it
    // is pointed to the story.
    let block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n";
    let digest = sha1_digest(&served[0].1);
    bytes.extend(
        format!(
            "WARC/1.1\r\nWARC-Type: revisit\r\nWARC-Record-ID: <urn:uuid:revisit-1>\r\n\
             WARC-Date: 2026-02-01T00:00:00Z\r\nWARC-Target-URI: http://news.test/again\r\n\
             WARC-Profile: http://netpreserve.org/warc/1.1/revisit/identical-payload-digest\r\n\
             WARC-Refers-To-Target-URI: http://mirror.test/copy-of-story\r\n\
             WARC-Refers-To-Date: 2026-01-01T00:00:00Z\r\nWARC-Payload-Digest: {digest}\r\n\
             Content-Type: application/http;msgtype=response\r\nContent-Length: {}\r\n\r\n",
            block.len()
        )
        .as_bytes(),
    );
    bytes.extend_from_slice(block);
    bytes.extend_from_slice(b"\r\n\r\n");
    std::fs::write(path, bytes).unwrap();
    let mut held: HashMap<String, Vec<u8>> = served
        .into_iter()
        .map(|(u, b)| (u.to_string(), b))
        .collect();
    let story = held["http://news.test/story"].clone();
    held.insert("http://news.test/again".into(), story);
    held
}

/// The lines of a CDXJ index as (key, timestamp, fields), the fields without a `-` status
/// (pywb's indexer leaves that out) and without `filename` (it names the file as given).
fn cdxj_entries(text: &str) -> Vec<(String, String, serde_json::Value)> {
    text.lines()
        .filter(|l| !l.starts_with('!') && !l.trim().is_empty())
        .map(|l| {
            let mut parts = l.splitn(3, ' ');
            let (key, ts) = (parts.next().unwrap(), parts.next().unwrap());
            let mut fields: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(parts.next().unwrap()).unwrap();
            if fields.get("status").and_then(|s| s.as_str()) == Some("-") {
                fields.remove("status");
            }
            fields.remove("filename");
            (key.to_string(), ts.to_string(), fields.into())
        })
        .collect()
}

/// The (type, URI, profile) of every record of a copy, in order.
fn records_of(path: &Path) -> Vec<(String, String, String)> {
    use std::io::Read;
    let mut text = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_end(&mut text)
        .unwrap();
    let text = String::from_utf8_lossy(&text);
    text.split("\r\n\r\nWARC/")
        .map(|record| {
            let field = |name: &str| crate::warc::field(record, name);
            (
                field("WARC-Type:"),
                field("WARC-Target-URI:"),
                field("WARC-Profile:"),
            )
        })
        .collect()
}

#[test]
fn a_deduplicated_copy_keeps_every_record_makes_repeated_payloads_revisits_and_replays() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let site = Site::new(5, 3);
    let server = runtime.block_on(serve(site.clone())).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.warc");
    let held = other_archive(&other);
    let out = dir.path().join("out");
    let crawl = super::warc_real::wget_crawl(&server, dir.path());
    let mut inputs = vec![other.to_str().unwrap().to_string()];
    if let Some(crawl) = &crawl {
        inputs.push(crawl.to_str().unwrap().to_string());
    }
    let mut args = vec!["dedup", "--json", "--warc-out", out.to_str().unwrap()];
    args.extend(inputs.iter().map(String::as_str));
    let o = crawldedup(&args);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("error:"), "{err}");
    let summary = err.lines().find(|l| l.starts_with("--warc-out")).unwrap();
    assert!(summary.contains("saved"), "{summary}");

    // The hand-made archive: every record kept, in order, but the mirror's copy and the
    // second image, which are revisits of the first; the commented story keeps its bytes
    // with its verdict.
    let copy = out.join("other.warc.gz");
    assert!(out.join("other.cdxj").is_file());
    let records = records_of(&copy);
    let kinds: Vec<&str> = records.iter().map(|(k, _, _)| k.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "warcinfo", "request", "response", "metadata", "revisit", "response", "response",
            "response", "revisit", "revisit"
        ],
        "{records:?}"
    );
    assert_eq!(records[4].1, "http://mirror.test/copy-of-story");
    assert!(records[4].2.ends_with("/identical-payload-digest"));
    assert_eq!(records[8].1, "http://news.test/logo-2.png");
    assert_eq!(records[9].1, "http://news.test/again");

    // warcio reads every copy whole, and its own `check` passes on each.
    let Some(report) = crate::warc::warcio_report(&out) else {
        return;
    };
    let copies: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".warc.gz"))
        .collect();
    assert_eq!(copies.len(), inputs.len());
    eprintln!("{summary}");
    let counts = &report["counts"];
    eprintln!("warcio read the copies: {counts}");
    // pywb replays every URL of the inputs with the bytes they held for it.
    let mut urls: Vec<String> = held.keys().cloned().collect();
    urls.sort();
    let Some(replayed) = crate::warc::replay_with_pywb(&out, &urls) else {
        return;
    };
    for url in &urls {
        assert_eq!(replayed[url], (200, sha1_digest(&held[url])), "{url}");
    }
    // pywb's own indexer, on the same copies, writes the same index.
    let python = crate::warc::pywb_python().unwrap();
    for copy in &copies {
        let o = std::process::Command::new(Path::new(&python).with_file_name("cdx-indexer"))
            .args(["--sort", "--cdxj"])
            .arg(copy)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let theirs = cdxj_entries(&String::from_utf8_lossy(&o.stdout));
        let index = crawldedup::store::warc::index_path(copy);
        let ours = cdxj_entries(&std::fs::read_to_string(&index).unwrap());
        assert!(ours.len() >= 8);
        assert_eq!(ours, theirs, "{}", index.display());
    }
    if crawl.is_some() {
        let served: Vec<String> = report["served"]
            .as_object()
            .unwrap()
            .keys()
            .filter(|u| u.starts_with(&server.url("/")))
            .cloned()
            .collect();
        assert!(served.len() >= 10, "{served:?}");
        crate::crawl::check_replay_with_pywb(&out, &site, &server, served);
    }
    runtime.block_on(server.shutdown());
}

#[test]
fn near_duplicates_become_revisits_of_crawldedups_profile_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.warc");
    other_archive(&other);
    let out = dir.path().join("out");
    let o = crawldedup(&[
        "dedup",
        "--json",
        "--warc-out",
        out.to_str().unwrap(),
        "--warc-duplicates",
        "revisit",
        other.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let records = records_of(&out.join("other.warc.gz"));
    let commented = records
        .iter()
        .find(|(_, uri, _)| uri.ends_with("comments=1"))
        .unwrap();
    assert_eq!(commented.0, "revisit", "{records:?}\n{}", cli::stdout(&o));
    assert!(commented.2.contains("crawldedup"), "{records:?}");
}

#[test]
fn a_copy_is_never_written_over_a_file_or_another_copy() {
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.warc");
    other_archive(&other);
    let out = dir.path().join("out");
    std::fs::create_dir_all(out.join("b")).unwrap();
    std::fs::write(out.join("other.warc.gz"), b"kept").unwrap();
    let args = |inputs: &[&Path]| {
        let mut a = vec![
            "dedup".to_string(),
            "--warc-out".into(),
            out.display().to_string(),
        ];
        a.extend(inputs.iter().map(|p| p.display().to_string()));
        a
    };
    let run = |a: Vec<String>| crawldedup(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let o = run(args(&[&other]));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("other.warc.gz exists"), "{err}");
    assert_eq!(std::fs::read(out.join("other.warc.gz")).unwrap(), b"kept");

    std::fs::remove_file(out.join("other.warc.gz")).unwrap();
    let twin = dir.path().join("b").join("other.warc.gz");
    std::fs::create_dir_all(twin.parent().unwrap()).unwrap();
    std::fs::copy(&other, &twin).unwrap();
    let o = run(args(&[&other, &twin]));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("would both be copied to"),
        "{}",
        stderr(&o)
    );
    assert!(!out.join("other.warc.gz").exists());
}

#[test]
fn the_copy_of_an_archive_read_only_in_part_never_passes_for_a_whole_one() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("cut.warc.gz");
    // A record, then a gzip member whose deflate data is damaged mid-file, then a record
    // the reader cannot reach.
    let first = super::warc_input::gzip(&response("http://news.test/a", &page(STORY)));
    let mut damaged = super::warc_input::gzip(&response("http://news.test/b", &page(OTHER)));
    let middle = damaged.len() / 2;
    damaged[middle..middle + 8].copy_from_slice(b"\xff\xff\xff\xff\xff\xff\xff\xff");
    let last = super::warc_input::gzip(&response("http://news.test/c", &page(THIRD)));
    std::fs::write(&input, [first, damaged, last].concat()).unwrap();
    let out = dir.path().join("out");
    let o = crawldedup(&[
        "dedup",
        "--warc-out",
        out.to_str().unwrap(),
        input.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("corrupt gzip"), "{err}");
    assert!(err.contains("cut.warc.gz.partial"), "{err}");
    assert!(!out.join("cut.warc.gz").exists());
    assert!(!out.join("cut.cdxj").exists());
    let records = records_of(&out.join("cut.warc.gz.partial"));
    assert_eq!(records[1].1, "http://news.test/a", "{records:?}");
}
