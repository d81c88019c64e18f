//! Setup errors and damaged state: one line and the right exit code, `verify` naming each
//! damaged part, `repair` mending what it can.

use super::*;

#[test]
fn crawl_setup_errors_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let out = dir.path().join("out");
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let cases: Vec<Vec<String>> = vec![
        vec!["--seeds".into(), "/no/such/seeds.txt".into()],
        vec!["--seed".into(), "not a url".into()],
        vec![],
        vec![
            "--seed".into(),
            "http://example.com/".into(),
            "--state-dir".into(),
            file.join("sub").to_str().unwrap().into(),
        ],
        vec![
            "--set".into(),
            "crawl.max_dept=3".into(),
            "--seed".into(),
            "http://example.com/".into(),
        ],
    ];
    for extra in cases {
        let mut args = vec![
            "crawl".to_string(),
            "--out".into(),
            out.to_str().unwrap().into(),
        ];
        if !extra.contains(&"--state-dir".to_string()) {
            args.extend(["--state-dir".to_string(), state.to_str().unwrap().into()]);
        }
        args.extend(extra.iter().cloned());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = crawldedup(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{extra:?}: {err}");
        assert!(err.starts_with("error: "), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn stats_on_a_directory_without_a_crawl_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let o = crawldedup(&["stats", "--state-dir", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no crawl here"), "{err}");
}

#[test]
fn a_state_directory_of_an_older_format_is_refused_in_one_line_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let article = fixture("article");
    let o = crawldedup(&["dedup", "--state-dir", state.to_str().unwrap(), &article]);
    assert!(o.status.success(), "{}", stderr(&o));
    // What the previous format (index format 2, fingerprint version 2) wrote as its layout.
    let layout: Vec<u8> = [2u32, 2, 3, 6]
        .iter()
        .flat_map(|w| w.to_be_bytes())
        .collect();
    {
        let db = sled::open(state.join("index")).unwrap();
        db.open_tree("meta")
            .unwrap()
            .insert("layout", layout.clone())
            .unwrap();
        db.flush().unwrap();
    }
    let o = crawldedup(&["dedup", "--state-dir", state.to_str().unwrap(), &article]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("index format 2 and fingerprint version 2"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "this build reads index formats {} to {} and fingerprint versions {} to {}",
            crawldedup::index::OLDEST_INDEX_FORMAT,
            crawldedup::index::INDEX_FORMAT_VERSION,
            crawldedup::index::OLDEST_FINGERPRINT,
            crawldedup::fingerprint::FINGERPRINT_VERSION
        )),
        "{err}"
    );
    assert!(err.contains("start a new state directory"), "{err}");
    assert!(!err.contains("panicked"));
    // Nothing was overwritten.
    let db = sled::open(state.join("index")).unwrap();
    assert_eq!(
        db.open_tree("meta")
            .unwrap()
            .get("layout")
            .unwrap()
            .unwrap()
            .to_vec(),
        layout
    );
}

#[test]
fn a_damaged_index_is_refused_in_one_line_and_its_pages_never_come_back_unique() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let article = fixture("article");
    let o = crawldedup(&["dedup", "--state-dir", state.to_str().unwrap(), &article]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("unique"), "{}", stdout(&o));
    // Cut every sled data file to nothing, as a full disk or a bad copy would.
    for entry in std::fs::read_dir(state.join("index")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_file() && name != "conf" && !name.starts_with("crawldedup-manifest") {
            std::fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_len(0)
                .unwrap();
        }
    }
    let o = crawldedup(&["dedup", "--state-dir", state.to_str().unwrap(), &article]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("damaged"), "{err}");
    assert!(err.contains("restore the state directory"), "{err}");
    assert!(!stdout(&o).contains("unique"), "{}", stdout(&o));
}

/// A crawl of a one-page site on loopback into `dir` (state and out), by the binary.
fn crawl_once(dir: &std::path::Path, seed: &str) -> Output {
    crawldedup(&[
        "crawl",
        "--seed",
        seed,
        "--state-dir",
        dir.join("state").to_str().unwrap(),
        "--out",
        dir.join("out").to_str().unwrap(),
        "--set",
        "crawl.allow_private_ips=true",
        "--set",
        "crawl.per_host_delay_ms=0",
        "--set",
        "crawl.max_depth=1",
        "--set",
        "crawl.request_timeout_ms=800",
    ])
}

#[test]
fn an_emptied_or_damaged_crawl_database_is_one_line_and_rolls_nothing_back() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let site = crawldedup::fixture::Site::new(3, 2);
    let server = runtime.block_on(crawldedup::fixture::serve(site)).unwrap();
    let seed = server.url("/");
    let dir = tempfile::tempdir().unwrap();
    let o = crawl_once(dir.path(), &seed);
    assert!(o.status.success(), "{}", stderr(&o));
    let pages = std::fs::read(dir.path().join("out/pages.jsonl")).unwrap();
    assert!(!pages.is_empty());
    let db_file = dir.path().join("state/crawl/db");
    let original = std::fs::read(&db_file).unwrap();
    for (what, bytes) in [
        ("zero length", Vec::new()),
        ("overwritten", {
            let mut b = original.clone();
            let mid = b.len() / 3;
            for x in &mut b[mid..(mid + 512).min(original.len())] {
                *x = 0xa5;
            }
            b
        }),
    ] {
        std::fs::write(&db_file, &bytes).unwrap();
        let o = crawl_once(dir.path(), &seed);
        let err = stderr(&o);
        if o.status.success() {
            // The damage hit bytes sled no longer reads: the crawl must then have found its
            // checkpoint and changed nothing it had stored.
            assert_eq!(
                std::fs::read(dir.path().join("out/pages.jsonl")).unwrap(),
                pages,
                "{what}"
            );
            continue;
        }
        assert_eq!(o.status.code(), Some(2), "{what}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{what}: {err}");
        assert!(err.contains("damaged"), "{what}: {err}");
        assert!(!err.contains("backtrace"), "{what}: {err}");
        // Nothing was rolled back.
        assert_eq!(
            std::fs::read(dir.path().join("out/pages.jsonl")).unwrap(),
            pages,
            "{what}"
        );
    }
}

/// A finished crawl of a small fixture site in a new folder: (folder, server, seed).
fn crawled() -> (tempfile::TempDir, tokio::runtime::Runtime, String) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(crawldedup::fixture::serve(crawldedup::fixture::Site::new(
            3, 2,
        )))
        .unwrap();
    let seed = server.url("/");
    // The server lives as long as the runtime's worker threads.
    std::mem::forget(server);
    let dir = tempfile::tempdir().unwrap();
    let o = crawl_once(dir.path(), &seed);
    assert!(o.status.success(), "{}", stderr(&o));
    (dir, runtime, seed)
}

/// `verify` or `repair` (with `extra`) on the crawl in `dir`: exit code and stdout lines.
fn state_command(command: &str, dir: &std::path::Path, extra: &[&str]) -> (i32, Vec<String>) {
    let (state, out) = (dir.join("state"), dir.join("out"));
    let mut args = vec![
        command,
        "--state-dir",
        state.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = crawldedup(&args);
    assert!(stderr(&o).trim().is_empty(), "{}", stderr(&o));
    (
        o.status.code().unwrap(),
        stdout(&o).lines().map(str::to_string).collect(),
    )
}

fn line<'a>(lines: &'a [String], part: &str) -> &'a str {
    lines
        .iter()
        .find(|l| l.starts_with(&format!("{part}: ")))
        .unwrap_or_else(|| panic!("no `{part}` line in {lines:?}"))
}

/// Output lines past the checkpoint are fine for verify and cut back by repair; a truncated
/// output is named by verify and not rebuilt by repair.
fn damaged_outputs(dir: &std::path::Path) {
    let pages_path = dir.join("out/pages.jsonl");
    let pages = std::fs::read(&pages_path).unwrap();

    // Lines past the checkpoint: fine for verify, cut back by repair.
    let mut longer = pages.clone();
    longer.extend_from_slice(b"{\"torn\": tr");
    std::fs::write(&pages_path, &longer).unwrap();
    let (code, lines) = state_command("verify", dir, &[]);
    assert_eq!(code, 0, "{lines:?}");
    assert!(line(&lines, "outputs").contains("past the checkpoint"));
    let (code, lines) = state_command("repair", dir, &[]);
    assert_eq!(code, 0, "{lines:?}");
    assert!(
        line(&lines, "outputs").contains("cut back by 11 bytes"),
        "{lines:?}"
    );
    assert_eq!(std::fs::read(&pages_path).unwrap(), pages);

    // A truncated output: named by verify, not rebuilt by repair.
    std::fs::write(&pages_path, &pages[..pages.len() / 2]).unwrap();
    let (code, lines) = state_command("verify", dir, &[]);
    assert_eq!(code, 1);
    assert!(line(&lines, "outputs").contains("pages.jsonl"), "{lines:?}");
    let (code, lines) = state_command("repair", dir, &[]);
    assert_eq!(code, 1);
    assert!(
        line(&lines, "outputs").contains("could not recover"),
        "{lines:?}"
    );
    std::fs::write(&pages_path, &pages).unwrap();
}

/// A damaged URL filter: a crawl's is rebuilt from its frontier, exactly, and the damaged
/// file set aside, never deleted.
fn damaged_url_filter(dir: &std::path::Path) {
    let (code, lines) = state_command("verify", dir, &[]);
    assert_eq!(code, 0, "{lines:?}");
    let filter_line = line(&lines, "URL filter").to_string();
    let bloom = dir.join("state/seen-urls.bloom");
    let mut bytes = std::fs::read(&bloom).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&bloom, &bytes).unwrap();
    let (code, lines) = state_command("verify", dir, &[]);
    assert_eq!(code, 1);
    assert!(line(&lines, "URL filter").contains("damaged"), "{lines:?}");
    let (code, lines) = state_command("repair", dir, &[]);
    assert_eq!(code, 0, "{lines:?}");
    assert!(
        line(&lines, "URL filter").contains("rebuilt from the")
            && line(&lines, "URL filter").contains("crawl's frontier"),
        "{lines:?}"
    );
    assert_eq!(
        std::fs::read(dir.join("state/seen-urls.bloom.damaged")).unwrap(),
        bytes
    );
    let (code, lines) = state_command("verify", dir, &[]);
    assert_eq!(code, 0, "{lines:?}");
    assert_eq!(
        line(&lines, "URL filter"),
        filter_line,
        "the same URLs, at the same checkpoint"
    );
}

/// The index's manifest lost: named by verify; repair --accept-loss writes one for what the
/// database holds, and the crawl resumes.
fn lost_index_manifest(dir: &std::path::Path, seed: &str) {
    let manifest = dir.join("state/index/crawldedup-manifest");
    std::fs::remove_file(&manifest).unwrap();
    let (code, lines) = state_command("verify", dir, &[]);
    assert_eq!(code, 1);
    assert!(line(&lines, "index").contains("damaged"), "{lines:?}");
    let (code, lines) = state_command("repair", dir, &["--accept-loss"]);
    assert_eq!(code, 0, "{lines:?}");
    assert!(
        line(&lines, "index").contains("manifest rewritten"),
        "{lines:?}"
    );
    let (code, lines) = state_command("verify", dir, &[]);
    assert_eq!(code, 0, "{lines:?}");
    let o = crawl_once(dir, seed);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn verify_names_each_damaged_part_and_repair_mends_what_it_can() {
    let (dir, _runtime, seed) = crawled();
    let (code, lines) = state_command("verify", dir.path(), &[]);
    assert_eq!(code, 0, "{lines:?}");
    for part in [
        "crawl database",
        "frontier",
        "URL filter",
        "index",
        "outputs",
    ] {
        assert!(line(&lines, part).contains(": fine: "), "{lines:?}");
    }
    damaged_outputs(dir.path());
    damaged_url_filter(dir.path());
    lost_index_manifest(dir.path(), &seed);

    // An emptied crawl database: named by verify, not rebuilt by repair.
    std::fs::write(dir.path().join("state/crawl/db"), b"").unwrap();
    let (code, lines) = state_command("verify", dir.path(), &[]);
    assert_eq!(code, 1);
    assert!(
        line(&lines, "crawl database").contains("damaged"),
        "{lines:?}"
    );
    let (code, lines) = state_command("repair", dir.path(), &["--accept-loss"]);
    assert_eq!(code, 1);
    assert!(
        line(&lines, "crawl database").contains("could not recover"),
        "{lines:?}"
    );
}

#[test]
fn a_damaged_url_journal_is_refused_named_by_verify_and_set_aside_by_repair() {
    use crawldedup::{Config, Dedup, UrlVerdict};
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    {
        let dedup = Dedup::open(&state, &Config::default()).unwrap();
        for i in 0..50 {
            let url = format!("http://journal.test/{i}");
            assert!(matches!(dedup.check_url(&url).unwrap(), UrlVerdict::New(_)));
        }
        dedup.sync_urls().unwrap();
        // Dropped without a checkpoint, as a kill would leave it: the journal holds the 50.
    }
    let (code, lines) = state_command("verify", dir.path(), &[]);
    assert_eq!(code, 0, "{lines:?}");
    assert!(
        line(&lines, "URL journal").contains("50 URLs in 1 generation"),
        "{lines:?}"
    );
    {
        let dedup = Dedup::open(&state, &Config::default()).unwrap();
        assert!(matches!(
            dedup.check_url("http://journal.test/7").unwrap(),
            UrlVerdict::Seen(_)
        ));
    }

    // One flipped byte in the middle of the journal: the stage refuses to open, naming the
    // file, rather than answering `new` for URLs it answered before.
    let journal = std::fs::read_dir(&state)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("seen-urls.journal.")
        })
        .unwrap();
    let mut bytes = std::fs::read(&journal).unwrap();
    // The header (52 bytes), then 40-byte records.
    bytes[52 + 40 * 10 + 5] ^= 0x40;
    std::fs::write(&journal, &bytes).unwrap();
    let error = Dedup::open(&state, &Config::default())
        .unwrap_err()
        .to_string();
    assert!(error.contains("seen-urls.journal."), "{error}");
    assert!(error.contains("record 11"), "{error}");
    assert_eq!(error.lines().count(), 1);
    let (code, lines) = state_command("verify", dir.path(), &[]);
    assert_eq!(code, 1);
    assert!(line(&lines, "URL journal").contains("damaged"), "{lines:?}");
    let (code, lines) = state_command("repair", dir.path(), &[]);
    assert_eq!(code, 1);
    assert!(
        line(&lines, "URL journal").contains("--accept-loss"),
        "{lines:?}"
    );
    assert!(journal.exists());
    let (code, lines) = state_command("repair", dir.path(), &["--accept-loss"]);
    assert_eq!(code, 0, "{lines:?}");
    assert!(!journal.exists());
    assert_eq!(
        std::fs::read(format!("{}.damaged", journal.display())).unwrap(),
        bytes
    );
    let dedup = Dedup::open(&state, &Config::default()).unwrap();
    assert_eq!(dedup.stats().seen_urls, 0, "the set-aside URLs are gone");
}

#[test]
fn a_stage_filter_is_rebuilt_from_its_pages_only_when_loss_is_accepted() {
    use crawldedup::{Config, Dedup, PageVerdict, UrlVerdict};
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let site = crawldedup::fixture::Site::without_traps(4, 2);
    let page = |i: usize| match site.respond(&site.articles()[i].path()) {
        crawldedup::fixture::Reply::Full { body, .. } => body,
        _ => panic!("an article answers in full"),
    };
    {
        let dedup = Dedup::open(&state, &Config::default()).unwrap();
        for i in 0..5 {
            let url = format!("http://pages.test/{i}");
            assert!(matches!(dedup.check_url(&url).unwrap(), UrlVerdict::New(_)));
            let verdict = dedup.check_page(&url, &page(i), Some("text/html")).unwrap();
            assert!(matches!(verdict, PageVerdict::Unique { .. }), "{verdict:?}");
        }
        dedup.check_url("http://pages.test/never-fetched").unwrap();
        dedup.checkpoint().unwrap();
    }
    let bloom = state.join("seen-urls.bloom");
    let mut bytes = std::fs::read(&bloom).unwrap();
    let at = bytes.len() - 3;
    bytes[at] ^= 1;
    std::fs::write(&bloom, &bytes).unwrap();
    let (code, lines) = state_command("repair", dir.path(), &[]);
    assert_eq!(code, 1);
    assert!(
        line(&lines, "URL filter").contains("--accept-loss"),
        "{lines:?}"
    );
    assert_eq!(std::fs::read(&bloom).unwrap(), bytes, "nothing changed");
    let (code, lines) = state_command("repair", dir.path(), &["--accept-loss"]);
    assert_eq!(code, 0, "{lines:?}");
    assert!(
        line(&lines, "URL filter").contains("rebuilt from the 5 URLs of the pages in the index"),
        "{lines:?}"
    );
    let dedup = Dedup::open(&state, &Config::default()).unwrap();
    for i in 0..5 {
        let url = format!("http://pages.test/{i}");
        assert!(
            matches!(dedup.check_url(&url).unwrap(), UrlVerdict::Seen(_)),
            "{url}"
        );
    }
    // The one URL that never became a page is what --accept-loss gave up.
    assert!(matches!(
        dedup.check_url("http://pages.test/never-fetched").unwrap(),
        UrlVerdict::New(_)
    ));
}

/// A crawl whose files stop growing half way (the file-size limit of the process, which
/// makes every write past it fail as a full disk does) stops with exit code 1 and one line
/// naming the file, never with 2 (a configuration error) and never with a panic.
#[cfg(target_os = "linux")]
#[test]
fn a_crawl_that_cannot_write_stops_with_exit_code_1_in_one_line() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(crawldedup::fixture::serve(crawldedup::fixture::Site::new(
            2025, 40,
        )))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Past the state directory's first files, within the outputs' first megabyte.
    let limit: u64 = 1 << 20;
    let mut command = Command::new(env!("CARGO_BIN_EXE_crawldedup"));
    command.args([
        "crawl",
        "--seed",
        &server.url("/"),
        "--state-dir",
        dir.path().join("state").to_str().unwrap(),
        "--out",
        dir.path().join("out").to_str().unwrap(),
        "--set",
        "crawl.allow_private_ips=true",
        "--set",
        "crawl.per_host_delay_ms=0",
        "--set",
        "output.warc=true",
    ]);
    cli::limit_file_size(&mut command, limit);
    let o = command.output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(errors[0].contains("File too large"), "{err}");
    // The cause once, not once per layer that carries it.
    assert_eq!(errors[0].matches("File too large").count(), 1, "{err}");
    assert!(!err.contains("panicked"), "{err}");
}
