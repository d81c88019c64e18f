//! `crawldedup dedup` on WARC files written by other tools, made in the test: a crawl of the
//! fixture site by wget `--warc-file` (Debian's wget; `.ci/run` installs it), pages captured
//! by warcio's `capture_http`, and pages recorded by pywb's recorder. Every response record
//! they wrote gets a verdict, none an error, and the site's copies are found.

use std::io::Read;

use super::warc_input::json_lines;
use crate::run_cli as cli;
use cli::{crawldedup, stderr, stdout};
use crawldedup::fixture::{Site, serve};

/// wget on the PATH; `None` (the test says so and passes) when it is not there, except in
/// CI, which installs it.
fn wget() -> Option<std::path::PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("wget"))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "wget is not installed (.ci/run installs it)"
        );
        eprintln!("wget is not installed: the test of its WARC files does not run");
    }
    found
}

/// wget's crawl of one topic's index of the fixture site and of every page it links to (its
/// articles, their mirrors, print versions, discussions and old addresses, 301s), into
/// `dir/crawl.warc.gz`; `None` when wget is not there (see [`wget`]).
pub(crate) fn wget_crawl(
    server: &crawldedup::fixture::FixtureServer,
    dir: &std::path::Path,
) -> Option<std::path::PathBuf> {
    let wget = wget()?;
    let prefix = dir.join("crawl");
    let o = std::process::Command::new(wget)
        .arg(format!("--warc-file={}", prefix.display()))
        .args([
            "--recursive",
            "--level=1",
            "--no-verbose",
            "--timeout=5",
            "--tries=1",
        ])
        .arg(format!(
            "--directory-prefix={}",
            dir.join("files").display()
        ))
        .arg(server.url("/topic/astronomy/"))
        .output()
        .unwrap();
    // wget exits 8 when a link answered with an error status (the site has such links).
    assert!(
        matches!(o.status.code(), Some(0 | 8)),
        "wget: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    Some(dir.join("crawl.warc.gz"))
}

#[test]
fn every_response_of_a_wget_warc_file_gets_a_verdict_and_its_copies_are_found() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(serve(Site::new(5, 3))).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let Some(warc) = wget_crawl(&server, dir.path()) else {
        return;
    };
    let mut text = String::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(&warc).unwrap())
        .read_to_string(&mut text)
        .ok();
    let responses = text.matches("WARC-Type: response\r\n").count();
    assert!(responses >= 10, "wget wrote {responses} responses");

    let o = crawldedup(&["dedup", "--json", warc.to_str().unwrap()]);
    let err = stderr(&o);
    assert!(!err.contains("error:"), "{err}");
    let lines = json_lines(&o);
    assert_eq!(lines.len(), responses, "{err}\n{}", stdout(&o));
    let verdicts = |v: &str| lines.iter().filter(|l| l["verdict"] == v).count();
    eprintln!(
        "wget wrote {responses} responses: {} unique, {} exact and {} near duplicates, {} no text",
        verdicts("unique"),
        verdicts("exact_duplicate"),
        verdicts("near_duplicate"),
        verdicts("no_text")
    );
    assert!(verdicts("unique") >= 3, "{}", stdout(&o));
    // The mirrors and print versions repeat their articles' text; the discussions add a
    // comment to it.
    assert!(verdicts("exact_duplicate") >= 3, "{}", stdout(&o));
    assert!(verdicts("near_duplicate") >= 1, "{}", stdout(&o));
    for line in &lines {
        if line["verdict"] == "exact_duplicate" {
            let of = line["of"].as_str().unwrap();
            assert!(of.contains("/topic/astronomy/"), "{line}");
        }
    }
    runtime.block_on(server.shutdown());
}

/// A WARC file written by warcio (`tests/warcio_write.py`, when CI names a Python that has
/// it): pages fetched from the fixture site by its `capture_http`, then a revisit record of
/// each as warcio writes them, one URL-agnostic. Every response gets a verdict and every
/// revisit is reported against its own response.
#[test]
fn a_warcio_warc_file_is_read_whole_and_its_revisits_find_their_responses() {
    let Ok(python) = std::env::var("CRAWLDEDUP_WARCIO_PYTHON") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI names a Python with warcio in CRAWLDEDUP_WARCIO_PYTHON"
        );
        eprintln!("no CRAWLDEDUP_WARCIO_PYTHON: the test of warcio's WARC files does not run");
        return;
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let site = Site::new(5, 3);
    let paths: Vec<String> = site.articles().iter().take(4).map(|a| a.path()).collect();
    let server = runtime.block_on(serve(site)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("warcio.warc.gz");
    let urls: Vec<String> = paths.iter().map(|p| server.url(p)).collect();
    let mut args = vec![warc.as_os_str()];
    args.extend(urls.iter().map(std::ffi::OsStr::new));
    let written = crate::warc::run_script(&python, "warcio_write.py", &args, b"");
    let fetched: Vec<String> = serde_json::from_slice(&written).unwrap();
    assert_eq!(fetched.len(), urls.len());

    let o = crawldedup(&["dedup", "--json", warc.to_str().unwrap()]);
    let err = stderr(&o);
    assert!(
        !err.contains("error:") && !err.contains("warning:"),
        "{err}"
    );
    let lines = json_lines(&o);
    assert_eq!(lines.len(), 2 * urls.len(), "{}", stdout(&o));
    let (pages, revisits) = lines.split_at(urls.len());
    for (line, url) in pages.iter().zip(&fetched) {
        assert_eq!(line["url"], *url);
        assert_eq!(line["verdict"], "unique", "{line}");
    }
    for (i, (line, url)) in revisits.iter().zip(&fetched).enumerate() {
        assert_eq!(line["verdict"], "revisit", "{line}");
        assert_eq!(line["of"], *url, "{line}");
        assert_eq!(line["of_offset"], pages[i]["offset"], "{line}");
    }
    assert!(
        revisits[0]["url"]
            .as_str()
            .unwrap()
            .contains("mirror.example")
    );
    runtime.block_on(server.shutdown());
}

/// WARC files written by pywb's recorder (`tests/pywb_record.py`, when CI names a Python that
/// has pywb): articles of the fixture site and their mirror copies, fetched through pywb in
/// live recording mode. Every response gets a verdict, with no warning, and each mirror is
/// found as its article's duplicate.
#[test]
fn warc_files_of_pywbs_recorder_are_read_whole() {
    let Some(python) = crate::warc::pywb_python() else {
        eprintln!("no CRAWLDEDUP_PYWB_PYTHON: the test of pywb's WARC files does not run");
        return;
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let site = Site::new(5, 3);
    // Each article and its mirror: the same article on another path of the site.
    let (articles, mirrors): (Vec<String>, Vec<String>) = site
        .articles()
        .iter()
        .take(3)
        .map(|a| {
            let mirror = format!(
                "/mirror/{}/{}",
                crawldedup::fixture::TOPICS[a.topic],
                a.index
            );
            (a.path(), mirror)
        })
        .unzip();
    let server = runtime.block_on(serve(site)).unwrap();
    let mut urls: Vec<String> = articles.iter().map(|p| server.url(p)).collect();
    let mirrors: Vec<String> = mirrors.iter().map(|p| server.url(p)).collect();
    urls.extend(mirrors.iter().cloned());
    let dir = tempfile::tempdir().unwrap();
    let pywb = dir.path().join("pywb");
    let mut args = vec![pywb.as_os_str()];
    args.extend(urls.iter().map(std::ffi::OsStr::new));
    let written = crate::warc::run_script(&python, "pywb_record.py", &args, b"");
    let files: Vec<String> = serde_json::from_slice(&written).unwrap();
    assert!(!files.is_empty());
    let mut args = vec!["dedup", "--json"];
    args.extend(files.iter().map(String::as_str));
    let o = crawldedup(&args);
    let err = stderr(&o);
    assert!(
        !err.contains("error:") && !err.contains("warning:"),
        "{err}"
    );
    let lines = json_lines(&o);
    let verdict = |url: &str| {
        lines
            .iter()
            .find(|l| l["url"] == url)
            .unwrap_or_else(|| panic!("no verdict for {url}: {}", stdout(&o)))["verdict"]
            .clone()
    };
    for (article, mirror) in urls.iter().zip(&mirrors) {
        assert_eq!(verdict(article), "unique", "{}", stdout(&o));
        assert_eq!(verdict(mirror), "exact_duplicate", "{}", stdout(&o));
    }
    assert_eq!(lines.len(), urls.len(), "{}", stdout(&o));
    runtime.block_on(server.shutdown());
}
