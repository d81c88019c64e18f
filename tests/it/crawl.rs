//! Crawls of the fixture site on loopback, with exact expectations.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use crawldedup::Config;
use crawldedup::fixture::{Site, TOPICS, serve};

fn config(state: &Path, out: &Path, seed: String) -> Config {
    let mut config = Config::default();
    config.crawl.seeds = vec![seed];
    config.crawl.state_dir = state.to_path_buf();
    config.crawl.out_dir = out.to_path_buf();
    config.crawl.allow_private_ips = true;
    config.crawl.per_host_delay_ms = 0;
    config.crawl.per_host_concurrency = 1;
    config.crawl.concurrency = 4;
    config.crawl.request_timeout_ms = 800;
    config.crawl.max_depth = 4;
    config
}

use crate::child;
use crate::warc;
use warc::lines;

/// WARC records as (type, target URI); a response that archives a duplicate's own bytes
/// (it carries crawldedup's verdict) has the type `duplicate`.
fn warc_records(out: &Path) -> Vec<(String, String)> {
    let text = warc::warc_text(out);
    text.split("WARC/1.1\r\n")
        .skip(1)
        .map(|record| {
            let field = |name: &str| {
                record
                    .lines()
                    .find_map(|l| l.strip_prefix(name))
                    .unwrap_or("")
                    .trim()
                    .to_string()
            };
            let kind = match field("WARC-Type:") {
                kind if kind == "response" && !field("WARC-Crawldedup-Verdict:").is_empty() => {
                    "duplicate".to_string()
                }
                kind => kind,
            };
            (kind, field("WARC-Target-URI:"))
        })
        .collect()
}

/// What `tests/warcio_check.py` reports of the WARC files in `out`, when CI names a Python
/// that has warcio (`None` otherwise); it fails on a record warcio cannot read.
fn warcio_report(out: &Path) -> Option<serde_json::Value> {
    let python = std::env::var("CRAWLDEDUP_WARCIO_PYTHON").ok()?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/warcio_check.py");
    let o = std::process::Command::new(python)
        .arg(script)
        .arg(out.join("warc"))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "warcio: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    Some(serde_json::from_slice(&o.stdout).unwrap())
}

/// Runs warcio over the WARC files when CI names a Python that has it.
fn check_with_warcio(out: &Path, stored: usize) {
    let Some(report) = warcio_report(out) else {
        return;
    };
    assert_eq!(
        report["responses"].as_array().unwrap().len(),
        stored,
        "{report}"
    );
}

/// Every URL of the WARC files, as warcio reads them, is served (by its own response, or
/// by the response an identical-payload revisit refers to) exactly the bytes the site sent
/// for it, and every duplicate URL is there.
fn check_warc_bytes_are_each_urls_own(
    out: &Path,
    site: &Site,
    server: &crawldedup::fixture::FixtureServer,
    duplicates: usize,
) {
    let Some(report) = warcio_report(out) else {
        return;
    };
    let served = report["served"].as_object().unwrap();
    let revisits = report["counts"]["revisit"].as_u64().unwrap_or(0) as usize;
    assert_eq!(
        report["duplicate_responses"].as_array().unwrap().len() + revisits,
        duplicates,
        "{report}"
    );
    let mut checked = 0;
    for (url, digest) in served {
        let path = &url[server.url("/").len() - 1..];
        let crawldedup::fixture::Reply::Full { headers, body, .. } = site.respond(path) else {
            continue;
        };
        if headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("content-encoding"))
        {
            continue;
        }
        assert_eq!(
            digest.as_str().unwrap(),
            crawldedup::store::warc::sha1_digest(&body),
            "{url}: the WARC serves other bytes than its own"
        );
        checked += 1;
    }
    assert!(
        checked * 10 >= served.len() * 9,
        "{checked} of {}",
        served.len()
    );
}

/// The failure this pins down: with features dominated by the words every text of a
/// language shares, the more articles the index held, the more distinct articles it called
/// near-duplicates of others and never stored. 1,100 articles with real word statistics
/// (220 of them in Chinese), each with three planted copies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_of_1100_articles_with_real_word_statistics_stores_every_article_once() {
    let site = Site::without_traps(19, 220);
    assert_eq!(site.articles().len(), 1100);
    let chinese = site
        .articles()
        .iter()
        .filter(|a| a.paragraphs[0].contains('。'))
        .count();
    assert_eq!(chinese, 220);
    let server = serve(site.clone()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (state, out) = (dir.path().join("state"), dir.path().join("out"));
    // One request at a time to the one host: each article is decided before its copies.
    let config = config(&state, &out, server.url("/"));
    let summary = crawldedup::crawl::crawl(&config, std::future::pending())
        .await
        .unwrap();
    assert_eq!(summary.frontier.pending, 0);

    let pages = lines(&out.join("pages.jsonl"));
    let duplicates = lines(&out.join("duplicates.jsonl"));
    let (stored, by_url) = outcome(&pages, &duplicates);
    let mut lost = Vec::new();
    for article in site.articles() {
        let url = server.url(&article.path());
        match stored.get(url.as_str()) {
            Some(1) => {}
            Some(n) => panic!("{url} stored {n} times"),
            None => lost.push(format!("{url}: {:?}", by_url.get(url.as_str()))),
        }
        let topic = TOPICS[article.topic];
        for (path, kind) in [
            (format!("/mirror/{topic}/{}", article.index), "exact"),
            (format!("/print/{topic}/{}", article.index), "exact"),
            (format!("/discuss/{topic}/{}", article.index), "near"),
        ] {
            let copy = server.url(&path);
            let record = by_url
                .get(copy.as_str())
                .unwrap_or_else(|| panic!("{copy} not recorded as a duplicate"));
            assert_eq!(record["kind"], kind, "{copy}");
            assert_eq!(record["of"], url.as_str(), "{copy}");
        }
    }
    assert!(
        lost.is_empty(),
        "{} articles not stored: {lost:#?}",
        lost.len()
    );
    // Nothing but the planted copies (and each topic index under its second URL,
    // /topic/{t}/index.html) is a duplicate.
    assert_eq!(duplicates.len(), 3 * 1100 + 5, "{duplicates:#?}");
    // The home page and five topic indexes are the only other pages.
    assert_eq!(pages.len(), 1100 + 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_of_the_fixture_site_stores_each_page_once_and_records_the_rest() {
    let site = Site::new(5, 2);
    let server = serve(site.clone()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (state, out) = (dir.path().join("state"), dir.path().join("out"));
    let config = config(&state, &out, server.url("/"));
    let summary = crawldedup::crawl::crawl(&config, std::future::pending())
        .await
        .unwrap();
    assert!(!summary.stopped_early);
    assert_eq!(summary.frontier.pending, 0);
    // `stats` reads the same figures back from the state directory.
    let on_disk = crawldedup::crawl::stats(&state).unwrap();
    assert_eq!(on_disk.totals, summary.totals);
    assert_eq!(on_disk.frontier, summary.frontier);

    let pages = lines(&out.join("pages.jsonl"));
    let duplicates = lines(&out.join("duplicates.jsonl"));
    let failures = lines(&out.join("failures.jsonl"));
    let stored: Vec<&str> = pages
        .iter()
        .map(|p| p["final_url"].as_str().unwrap())
        .collect();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for url in &stored {
        *counts.entry(url).or_default() += 1;
    }
    assert!(
        counts.values().all(|&n| n == 1),
        "a page stored twice: {counts:?}"
    );

    // Every article is stored once; its mirror and print copies are exact duplicates of
    // it, its discussion page a near duplicate.
    for article in site.articles() {
        let url = server.url(&article.path());
        assert!(stored.contains(&url.as_str()), "{url} not stored");
        let topic = TOPICS[article.topic];
        for (path, verdict) in [
            (
                format!("/mirror/{topic}/{}", article.index),
                "exact_duplicate",
            ),
            (
                format!("/print/{topic}/{}", article.index),
                "exact_duplicate",
            ),
            (
                format!("/discuss/{topic}/{}", article.index),
                "near_duplicate",
            ),
        ] {
            let copy = server.url(&path);
            let record = duplicates
                .iter()
                .find(|d| d["url"] == copy.as_str())
                .unwrap_or_else(|| panic!("{copy} not recorded as a duplicate"));
            assert_eq!(record["verdict"], verdict, "{copy}");
            assert_eq!(record["of"], url.as_str(), "{copy}");
        }
    }
    // The international pages are stored with their text decoded.
    for path in ["/intl/latin1", "/intl/gbk", "/intl/sjis"] {
        assert!(
            stored.contains(&server.url(path).as_str()),
            "{path} not stored"
        );
    }

    // Failures, each with its reason.
    let failure = |path: &str| -> &serde_json::Value {
        let url = server.url(path);
        failures
            .iter()
            .find(|f| f["url"] == url.as_str())
            .unwrap_or_else(|| panic!("no failure recorded for {path}: {failures:#?}"))
    };
    assert_eq!(failure("/loop/a")["kind"], "redirect_loop");
    assert_eq!(failure("/missing")["status"], 404);
    assert_eq!(failure("/broken")["status"], 500);
    assert_eq!(failure("/broken")["attempts"], 3);
    assert_eq!(failure("/busy")["status"], 503);
    assert_eq!(failure("/big")["kind"], "too_large");
    assert_eq!(failure("/bomb")["kind"], "too_large");
    assert_eq!(failure("/binary.html")["kind"], "not_html");
    assert_eq!(failure("/slow")["kind"], "timeout");
    assert_eq!(failure("/slow")["attempts"], 3);
    assert_eq!(failure("/private/staff.html")["kind"], "robots");

    // What must never be fetched: disallowed paths, URL variants, the calendar past depth.
    let requests = server.requests();
    assert!(
        !requests.iter().any(|r| r.starts_with("/private/")),
        "robots.txt ignored"
    );
    assert!(
        !requests
            .iter()
            .any(|r| r.contains("utm_") || r.contains("jsessionid") || r.contains('#')),
        "a URL variant was fetched: {requests:?}"
    );
    let months = requests
        .iter()
        .filter(|r| r.starts_with("/calendar/"))
        .count();
    assert!(
        months <= 2 * config.crawl.max_depth as usize,
        "{months} calendar pages"
    );
    // WARC: a response per stored page; per duplicate, a revisit when its bytes are its
    // original's (the topic indexes under their second URL, the home page reached again
    // under another URL), a response with its own bytes otherwise (the mirror, print and
    // discussion copies).
    let records = warc_records(&out);
    let count = |kind: &str| records.iter().filter(|(k, _)| k == kind).count();
    assert_eq!(count("response"), pages.len());
    assert_eq!(count("revisit") + count("duplicate"), duplicates.len());
    assert_eq!(count("revisit"), TOPICS.len() + 1, "{records:?}");
    assert!(count("warcinfo") >= 1);
    check_with_warcio(&out, pages.len());
    check_warc_bytes_are_each_urls_own(&out, &site, &server, duplicates.len());
    // A redirect target already fetched is not fetched again.
    let article0 = site.articles()[0].path();
    assert_eq!(
        requests.iter().filter(|r| **r == article0).count(),
        1,
        "{requests:?}"
    );
}

const CHILD_ENV: &str = "CRAWLDEDUP_CRAWL_CHILD";

/// The stored pages (final URLs), sorted, after checking that no line is torn and no page
/// is stored twice.
/// How many times each URL was stored, and each duplicate's record by its URL.
type Outcome<'a> = (
    HashMap<&'a str, usize>,
    HashMap<&'a str, &'a serde_json::Value>,
);

fn outcome<'a>(pages: &'a [serde_json::Value], duplicates: &'a [serde_json::Value]) -> Outcome<'a> {
    let stored = pages.iter().fold(HashMap::new(), |mut m, p| {
        *m.entry(p["final_url"].as_str().unwrap()).or_default() += 1;
        m
    });
    let by_url = duplicates
        .iter()
        .map(|d| (d["url"].as_str().unwrap(), d))
        .collect();
    (stored, by_url)
}

fn stored_set(out: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(out.join("pages.jsonl")).unwrap();
    assert!(text.is_empty() || text.ends_with('\n'), "a torn last line");
    let mut urls: Vec<String> = text
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a whole JSON line");
            v["final_url"].as_str().unwrap().to_string()
        })
        .collect();
    let n = urls.len();
    urls.sort();
    urls.dedup();
    assert_eq!(urls.len(), n, "a page stored twice");
    urls
}

/// Runs a crawl with `options` until it ends by itself.
fn crawl_to_the_end(
    runtime: &tokio::runtime::Runtime,
    config: &Config,
    options: &crawldedup::crawl::CrawlOptions,
) {
    runtime
        .block_on(
            crawldedup::Crawler::builder(config)
                .options(options)
                .run(std::future::pending()),
        )
        .unwrap();
}

/// An uninterrupted crawl from `seed` (20 ms between requests): its directory (state and
/// out) and the pages it stored.
fn uninterrupted_crawl(
    runtime: &tokio::runtime::Runtime,
    seed: &str,
) -> (tempfile::TempDir, Vec<String>) {
    let reference = tempfile::tempdir().unwrap();
    let out = reference.path().join("out");
    let mut uninterrupted = config(&reference.path().join("state"), &out, seed.to_string());
    uninterrupted.crawl.per_host_delay_ms = 20;
    runtime
        .block_on(crawldedup::crawl::crawl(
            &uninterrupted,
            std::future::pending(),
        ))
        .unwrap();
    let stored = stored_set(&out);
    (reference, stored)
}

#[test]
fn kill_9_at_any_moment_and_resume_gives_the_uninterrupted_result() {
    if let Ok(spec) = std::env::var(CHILD_ENV) {
        // The child: crawl until done (or killed), checkpointing often.
        let spec: serde_json::Value = serde_json::from_str(&spec).unwrap();
        let config = config(
            Path::new(spec["state"].as_str().unwrap()),
            Path::new(spec["out"].as_str().unwrap()),
            spec["seed"].as_str().unwrap().to_string(),
        );
        let mut config = config;
        config.crawl.per_host_delay_ms = 20;
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let options = crawldedup::crawl::CrawlOptions {
            checkpoint_every: std::time::Duration::from_millis(150),
            // Compactions all the time, so that kills land in them too.
            compact_after: Some(16),
            ..Default::default()
        };
        crawl_to_the_end(&runtime, &config, &options);
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(serve(Site::new(9, 2))).unwrap();
    let seed = server.url("/");

    let (reference, expected) = uninterrupted_crawl(&runtime, &seed);
    assert!(expected.len() > 20);

    // Killed three times at different moments, then left to finish.
    let dir = tempfile::tempdir().unwrap();
    let (state, out) = (dir.path().join("state"), dir.path().join("out"));
    let spec = serde_json::json!({
        "state": state.to_str().unwrap(),
        "out": out.to_str().unwrap(),
        "seed": seed,
    })
    .to_string();
    // Killed (SIGKILL) twelve times, then left to finish: first inside a checkpoint (its
    // outputs, index and frontier log written, its record not) and inside a frontier
    // compaction (some entries folded, the log not yet removed), held there by the fault
    // points of `crawldedup::faults`, then at moments spread over the crawl.
    enum Kill {
        At(&'static str),
        After(u64),
        Never,
    }
    let rounds = [
        Kill::At("checkpoint-before-record"),
        Kill::At("compaction-batch"),
        Kill::After(230),
        Kill::At("checkpoint-before-record"),
        Kill::After(410),
        Kill::At("compaction-batch"),
        Kill::After(170),
        Kill::After(530),
        Kill::After(90),
        Kill::At("checkpoint-before-record"),
        Kill::After(350),
        Kill::After(610),
        Kill::Never,
    ];
    let mut kills = 0;
    let mut held = Vec::new();
    for round in rounds {
        let pause_at = match round {
            Kill::At(point) => Some(point),
            _ => None,
        };
        let mut child = child::spawn(
            "crawl::kill_9_at_any_moment_and_resume_gives_the_uninterrupted_result",
            CHILD_ENV,
            &spec,
            pause_at,
        );
        let stderr = child.stderr.take().unwrap();
        match round {
            Kill::Never => {
                let mut text = String::new();
                std::io::Read::read_to_string(&mut { stderr }, &mut text).unwrap();
                let status = child.wait().unwrap();
                let last: Vec<&str> = text
                    .lines()
                    .filter(|l| l.contains("panicked") || l.contains("Err") || l.contains("error"))
                    .collect();
                assert!(status.success(), "the last run failed: {last:?}");
            }
            Kill::After(ms) => {
                drop(stderr);
                std::thread::sleep(std::time::Duration::from_millis(ms));
                if child.try_wait().unwrap().is_none() {
                    child.kill().unwrap();
                    kills += 1;
                }
                child.wait().unwrap();
            }
            Kill::At(point) => {
                if child::paused_at(stderr, point) {
                    child.kill().unwrap();
                    kills += 1;
                    held.push(point);
                }
                child.wait().unwrap();
            }
        }
    }
    assert!(
        kills >= 10,
        "only {kills} kills landed before the crawl ended"
    );
    for point in ["checkpoint-before-record", "compaction-batch"] {
        assert!(held.contains(&point), "no kill at {point}: {held:?}");
    }
    assert_eq!(stored_set(&out), expected);
    // The WARC files hold each stored page once too.
    let mut responses: Vec<String> = warc_records(&out)
        .into_iter()
        .filter(|(k, _)| k == "response")
        .map(|(_, uri)| uri)
        .collect();
    responses.sort();
    assert_eq!(
        responses, expected,
        "WARC responses differ from pages.jsonl"
    );
    check_with_warcio(&out, expected.len());
    // Duplicates and failures too: each recorded once, the same as without the kills.
    let records = |dir: &Path, file: &str, fields: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = lines(&dir.join(file))
            .iter()
            .map(|r| {
                fields
                    .iter()
                    .map(|f| r[*f].to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let n = v.len();
        v.sort();
        v.dedup();
        assert_eq!(v.len(), n, "{file}: a record written twice");
        v
    };
    let reference_out = reference.path().join("out");
    assert_eq!(
        records(&out, "duplicates.jsonl", &["url", "verdict", "of"]),
        records(
            &reference_out,
            "duplicates.jsonl",
            &["url", "verdict", "of"]
        )
    );
    assert_eq!(
        records(&out, "failures.jsonl", &["url", "kind"]),
        records(&reference_out, "failures.jsonl", &["url", "kind"])
    );
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_focused_crawl_stores_more_on_topic_pages_than_breadth_first() {
    let site = Site::new(21, 6);
    let server = serve(site.clone()).await.unwrap();
    let on_topic = |out: &Path| -> usize {
        lines(&out.join("pages.jsonl"))
            .iter()
            .filter(|p| p["final_url"].as_str().unwrap().contains("/topic/sailing/"))
            .count()
    };
    let mut stored = Vec::new();
    for keywords in [vec![], vec!["sailing harbour".to_string()]] {
        let dir = tempfile::tempdir().unwrap();
        let (state, out) = (dir.path().join("state"), dir.path().join("out"));
        let mut config = config(&state, &out, server.url("/"));
        config.crawl.max_pages = 25;
        config.focus.keywords = keywords;
        let summary = crawldedup::crawl::crawl(&config, std::future::pending())
            .await
            .unwrap();
        assert_eq!(summary.totals.fetched, 25);
        stored.push(on_topic(&out));
    }
    let (breadth_first, focused) = (stored[0], stored[1]);
    eprintln!(
        "sailing articles stored with 25 pages: breadth-first {breadth_first}, focused {focused}"
    );
    assert!(
        focused >= breadth_first + 4,
        "focused {focused} vs breadth-first {breadth_first} sailing pages"
    );
}

#[test]
fn ctrl_c_stops_with_a_checkpoint_and_the_next_run_finishes_the_crawl() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(serve(Site::new(13, 3))).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (state, out) = (dir.path().join("state"), dir.path().join("out"));
    let run = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_crawldedup"))
            .args([
                "crawl",
                "--allow-private-ips",
                "--json",
                "--seed",
                &server.url("/"),
            ])
            .args([
                "--state-dir",
                state.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ])
            .args([
                "--set",
                "crawl.per_host_delay_ms=40",
                "--set",
                "crawl.per_host_concurrency=1",
            ])
            .args([
                "--set",
                "crawl.request_timeout_ms=800",
                "--set",
                "crawl.max_depth=4",
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let child = run();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let first = child.wait_with_output().unwrap();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let summary: serde_json::Value = serde_json::from_slice(&first.stdout).unwrap();
    assert_eq!(summary["stopped_early"], true, "{summary}");
    let stored_before = summary["totals"]["stored"].as_u64().unwrap();
    assert!(stored_before > 0, "{summary}");
    assert!(
        summary["frontier"]["pending"].as_u64().unwrap() > 0,
        "{summary}"
    );
    assert_eq!(summary["frontier"]["in_flight"], 0, "{summary}");

    // The second run resumes and finishes; nothing is stored twice.
    let second = run().wait_with_output().unwrap();
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let summary: serde_json::Value = serde_json::from_slice(&second.stdout).unwrap();
    assert_eq!(summary["stopped_early"], false, "{summary}");
    assert_eq!(summary["frontier"]["pending"], 0, "{summary}");
    assert!(summary["totals"]["stored"].as_u64().unwrap() > stored_before);
    let stored = stored_set(&out);
    assert_eq!(
        stored.len() as u64,
        summary["totals"]["stored"].as_u64().unwrap()
    );
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_gets_exactly_its_share_of_the_concurrency() {
    // Every response takes 40 ms, so requests overlap whenever the crawler lets them.
    let site = Site::without_traps(4, 6);
    for (per_host, delay_ms, want) in [(4, 0, 4), (1, 0, 1), (4, 200, 1)] {
        let server = crawldedup::fixture::serve_with_latency(
            site.clone(),
            std::time::Duration::from_millis(40),
        )
        .await
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut config = config(
            &dir.path().join("state"),
            &dir.path().join("out"),
            server.url("/"),
        );
        config.crawl.concurrency = 16;
        config.crawl.per_host_concurrency = per_host;
        config.crawl.per_host_delay_ms = delay_ms;
        config.crawl.max_pages = 20;
        let summary = crawldedup::crawl::crawl(&config, std::future::pending())
            .await
            .unwrap();
        assert_eq!(summary.totals.fetched, 20);
        // robots.txt is fetched once before the pages, alone.
        assert_eq!(
            server.most_concurrent(),
            want,
            "per_host_concurrency {per_host}, delay {delay_ms} ms"
        );
    }
}

/// A small site of its own for robots.txt cases: `/` links to `/a` and `/go`; `/go`
/// redirects to `redirect_to`; robots.txt answers with `robots(n)` for its n-th request.
async fn tiny_site(
    robots: fn(usize) -> (u16, &'static str),
    redirect_to: Option<String>,
) -> (String, Arc<Mutex<Vec<String>>>) {
    use axum::http::StatusCode;
    use axum::response::{Html, IntoResponse, Redirect};
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let robots_count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let text = "A page of plain text about tides, moorings and the harbour wall, long enough to be \
                a page of its own for the crawler's extractor and its index.";
    let app = axum::Router::new().fallback({
        let log = log.clone();
        move |uri: axum::http::Uri| {
            let log = log.clone();
            let robots_count = robots_count.clone();
            let redirect_to = redirect_to.clone();
            async move {
                let path = uri.path().to_string();
                log.lock().unwrap().push(path.clone());
                match path.as_str() {
                    "/robots.txt" => {
                        let n = robots_count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        let (status, body) = robots(n);
                        (StatusCode::from_u16(status).unwrap(), body).into_response()
                    }
                    "/" => Html(format!(
                        "<html><body><p>{text} Home.</p><a href=/a>a</a> <a href=/go>go</a></body></html>"
                    ))
                    .into_response(),
                    "/a" => Html(format!("<html><body><p>{text} Page a.</p></body></html>"))
                        .into_response(),
                    "/go" => match &redirect_to {
                        Some(to) => Redirect::temporary(to).into_response(),
                        None => StatusCode::NOT_FOUND.into_response(),
                    },
                    _ => StatusCode::NOT_FOUND.into_response(),
                }
            }
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (base, log)
}

async fn crawl_tiny(seed: String, dir: &Path) -> crawldedup::crawl::CrawlSummary {
    let mut config = config(&dir.join("state"), &dir.join("out"), seed);
    config.crawl.respect_robots = true;
    let options = crawldedup::crawl::CrawlOptions {
        robots_retry: std::time::Duration::from_millis(300),
        ..Default::default()
    };
    crawldedup::Crawler::builder(&config)
        .options(&options)
        .run(std::future::pending())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_robots_txt_5xx_closes_the_host_until_a_retry_succeeds() {
    let (base, log) = tiny_site(
        |n| {
            if n == 0 {
                (503, "busy")
            } else {
                (200, "User-agent: *\nAllow: /\n")
            }
        },
        None,
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let summary = crawl_tiny(format!("{base}/"), dir.path()).await;
    let log = log.lock().unwrap().clone();
    assert_eq!(
        &log[..2],
        ["/robots.txt", "/robots.txt"],
        "no page before robots.txt answered: {log:?}"
    );
    assert_eq!(
        log.iter().filter(|p| *p == "/robots.txt").count(),
        2,
        "{log:?}"
    );
    assert!(log.contains(&"/a".to_string()), "{log:?}");
    assert_eq!(summary.totals.stored, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_robots_txt_that_keeps_failing_ends_in_a_recorded_failure() {
    let (base, log) = tiny_site(|_| (500, "broken"), None).await;
    let dir = tempfile::tempdir().unwrap();
    let summary = crawl_tiny(format!("{base}/"), dir.path()).await;
    let log = log.lock().unwrap().clone();
    assert!(
        log.iter().all(|p| p == "/robots.txt"),
        "no page fetched: {log:?}"
    );
    assert_eq!(log.len(), 3, "robots.txt asked once per attempt: {log:?}");
    assert_eq!(summary.totals.fetched, 0);
    let failures = lines(&dir.path().join("out/failures.jsonl"));
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0]["kind"], "robots_unavailable");
    assert_eq!(failures[0]["url"], format!("{base}/"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_to_another_host_waits_for_that_hosts_robots_txt() {
    // The target host is the fixture site, whose robots.txt disallows /private/.
    let other = serve(Site::new(3, 1)).await.unwrap();
    for (target, fetched) in [("/private/staff.html", false), ("/topic/baking/", true)] {
        let (base, _log) = tiny_site(|_| (404, ""), Some(other.url(target))).await;
        let dir = tempfile::tempdir().unwrap();
        let mut config = config(
            &dir.path().join("state"),
            &dir.path().join("out"),
            format!("{base}/"),
        );
        config.crawl.respect_robots = true;
        config.crawl.max_depth = 1;
        crawldedup::crawl::crawl(&config, std::future::pending())
            .await
            .unwrap();
        assert_eq!(
            other.requests().iter().any(|r| r == target),
            fetched,
            "{target}: {:?}",
            other.requests()
        );
        let failures = lines(&dir.path().join("out/failures.jsonl"));
        let redirected = failures
            .iter()
            .find(|f| f["kind"] == "redirected")
            .expect("the redirect is recorded");
        assert_eq!(redirected["url"], format!("{base}/go"));
        assert!(
            redirected["reason"]
                .as_str()
                .unwrap()
                .contains(&other.url(target))
        );
        if !fetched {
            assert!(
                failures
                    .iter()
                    .any(|f| f["kind"] == "robots" && f["url"] == other.url(target)),
                "{failures:?}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_pages_reach_pages_jsonl_soon_without_waiting_for_a_checkpoint() {
    // Every response takes 100 ms and one request runs at a time, so the crawl is slow;
    // no checkpoint comes during the test, yet each stored page is written shortly after.
    let server = crawldedup::fixture::serve_with_latency(
        Site::without_traps(4, 6),
        std::time::Duration::from_millis(100),
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut config = config(&dir.path().join("state"), &out, server.url("/"));
    config.crawl.concurrency = 1;
    let options = crawldedup::crawl::CrawlOptions {
        checkpoint_every: std::time::Duration::from_secs(3600),
        ..Default::default()
    };
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let crawl = tokio::spawn(async move {
        crawldedup::Crawler::builder(&config)
            .options(&options)
            .run(async {
                let _ = stop_rx.await;
            })
            .await
    });
    let pages = out.join("pages.jsonl");
    let served = loop {
        // A whole line (the writer may be halfway through one).
        if std::fs::read_to_string(&pages).is_ok_and(|text| text.contains('\n')) {
            break server.requests().len();
        }
        assert!(
            !crawl.is_finished(),
            "the crawl ended before any page was written"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    };
    // A batch of output jobs fills only after dozens of pages: the first line came from
    // the batch's age, a few requests after its page.
    assert!(
        served < 12,
        "first stored page written after {served} requests"
    );
    assert!(!crawl.is_finished());
    stop_tx.send(()).unwrap();
    let summary = crawl.await.unwrap().unwrap();
    assert!(summary.stopped_early);
    assert_eq!(
        lines(&pages).len() as u64,
        summary.totals.stored,
        "after the stop every stored page is in pages.jsonl"
    );
}

#[test]
fn dropping_the_crawl_future_stops_the_crawl_and_the_next_run_resumes() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(serve(Site::new(9, 2))).unwrap();
    let seed = server.url("/");
    let (_reference, expected) = uninterrupted_crawl(&runtime, &seed);

    let dir = tempfile::tempdir().unwrap();
    let (state, out) = (dir.path().join("state"), dir.path().join("out"));
    let mut config = config(&state, &out, seed);
    config.crawl.per_host_delay_ms = 20;
    let options = crawldedup::crawl::CrawlOptions {
        checkpoint_every: std::time::Duration::from_millis(100),
        ..Default::default()
    };
    // The caller gives up on the crawl (a timeout drops its future) halfway through.
    let given_up = runtime.block_on(async {
        tokio::time::timeout(
            std::time::Duration::from_millis(400),
            crawldedup::Crawler::builder(&config)
                .options(&options)
                .run(std::future::pending()),
        )
        .await
    });
    assert!(given_up.is_err(), "the crawl finished before the timeout");
    // A moment for the abort to reach the tasks and for a request sent just before it to
    // reach the server; after that, no request more.
    let pause = |ms| {
        runtime
            .block_on(async move { tokio::time::sleep(std::time::Duration::from_millis(ms)).await })
    };
    pause(500);
    let requests_then = server.requests().len();
    pause(700);
    assert_eq!(
        server.requests().len(),
        requests_then,
        "the crawl went on fetching after its future was dropped"
    );
    // The same runtime runs the crawl again on the same state: it resumes and ends with
    // every page stored once.
    crawl_to_the_end(&runtime, &config, &options);
    assert_eq!(stored_set(&out), expected);
}

/// The outputs of a finished crawl of the tiny site, damaged by `damage`, then the same
/// crawl run again: the error it gives (it must give one) and the pages.jsonl bytes after.
async fn resume_after(
    damage: impl FnOnce(&Path),
    out_elsewhere: bool,
) -> (crawldedup::crawl::CrawlError, Vec<u8>) {
    let (base, _) = tiny_site(|_| (200, "User-agent: *\nAllow: /\n"), None).await;
    let dir = tempfile::tempdir().unwrap();
    let summary = crawl_tiny(format!("{base}/"), dir.path()).await;
    assert_eq!(summary.totals.stored, 2);
    let out = if out_elsewhere {
        dir.path().join("elsewhere")
    } else {
        dir.path().join("out")
    };
    damage(&dir.path().join("out"));
    let mut again = config(&dir.path().join("state"), &out, format!("{base}/"));
    again.crawl.respect_robots = true;
    let err = crawldedup::crawl::crawl(&again, std::future::pending())
        .await
        .expect_err("outputs shorter than the checkpoint must be refused");
    let pages = std::fs::read(out.join("pages.jsonl")).unwrap_or_default();
    (err, pages)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncated_output_is_refused_on_resume_and_never_padded_with_zeros() {
    let (err, pages) = resume_after(
        |out| {
            let path = out.join("pages.jsonl");
            let text = std::fs::read(&path).unwrap();
            std::fs::write(&path, &text[..text.len() / 2]).unwrap();
        },
        false,
    )
    .await;
    let message = err.to_string();
    assert!(
        matches!(err, crawldedup::crawl::CrawlError::Files(crawldedup::store::files::FileError::Behind { found, expected, .. }) if found < expected),
        "{message}"
    );
    assert!(message.contains("pages.jsonl"), "{message}");
    assert!(message.contains("the last checkpoint wrote"), "{message}");
    assert!(!message.contains('\n'), "one line: {message}");
    assert!(!pages.contains(&0), "a hole of zeros was written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outputs_pointed_elsewhere_are_refused_on_resume() {
    let (err, pages) = resume_after(|_| {}, true).await;
    assert!(
        matches!(
            err,
            crawldedup::crawl::CrawlError::Files(crawldedup::store::files::FileError::Behind {
                found: 0,
                ..
            })
        ),
        "{err}"
    );
    assert!(pages.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_warc_file_is_refused_on_resume() {
    let (err, pages) = resume_after(
        |out| {
            for entry in std::fs::read_dir(out.join("warc")).unwrap() {
                std::fs::remove_file(entry.unwrap().path()).unwrap();
            }
        },
        false,
    )
    .await;
    let message = err.to_string();
    assert!(message.contains(".warc.gz"), "{message}");
    assert!(
        matches!(
            err,
            crawldedup::crawl::CrawlError::Files(crawldedup::store::files::FileError::Behind {
                found: 0,
                ..
            })
        ),
        "{message}"
    );
    assert!(!pages.contains(&0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_pages_counts_every_run_and_a_crawl_at_its_limit_says_so() {
    let server = serve(Site::new(4, 2)).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(
        &dir.path().join("state"),
        &dir.path().join("out"),
        server.url("/"),
    );
    config.crawl.max_pages = 5;
    let first = crawldedup::crawl::crawl(&config, std::future::pending())
        .await
        .unwrap();
    assert_eq!(first.totals.fetched, 5);
    assert_eq!(first.fetched_this_run, 5);
    assert!(first.page_limit_reached && first.stopped_early);
    // Resumed at its limit: nothing more is fetched, and the summary says why.
    let second = crawldedup::crawl::crawl(&config, std::future::pending())
        .await
        .unwrap();
    assert_eq!(second.totals.fetched, 5);
    assert_eq!(second.fetched_this_run, 0);
    assert!(second.page_limit_reached);
    // Raised, the crawl goes on from where it stopped.
    config.crawl.max_pages = 8;
    let third = crawldedup::crawl::crawl(&config, std::future::pending())
        .await
        .unwrap();
    assert_eq!(third.totals.fetched, 8);
    assert_eq!(third.fetched_this_run, 3);
}

/// An embedded crawler's sink that keeps what it is given in memory, with positions: its
/// position is how many pages it holds, and resuming cuts it back to that many.
struct Recorder {
    pages: Arc<Mutex<Vec<(String, String)>>>,
    duplicates: Arc<Mutex<Vec<(String, String)>>>,
    failures: Arc<Mutex<Vec<String>>>,
}

impl crawldedup::store::PageSink for Recorder {
    fn page(
        &mut self,
        page: &crawldedup::store::StoredPage,
    ) -> Result<(), crawldedup::store::SinkError> {
        let text = page.text.to_string();
        self.pages
            .lock()
            .unwrap()
            .push((page.final_url.to_string(), text));
        Ok(())
    }

    fn duplicate(
        &mut self,
        duplicate: &crawldedup::store::DuplicatePage,
    ) -> Result<(), crawldedup::store::SinkError> {
        self.duplicates
            .lock()
            .unwrap()
            .push((duplicate.final_url.to_string(), duplicate.of.clone()));
        Ok(())
    }

    fn failure(
        &mut self,
        failure: &crawldedup::store::FailedPage,
    ) -> Result<(), crawldedup::store::SinkError> {
        self.failures.lock().unwrap().push(failure.url.to_string());
        Ok(())
    }

    fn checkpoint(
        &mut self,
    ) -> Result<crawldedup::store::SinkPosition, crawldedup::store::SinkError> {
        Ok(crawldedup::store::SinkPosition(vec![
            self.pages.lock().unwrap().len() as u64,
            self.duplicates.lock().unwrap().len() as u64,
            self.failures.lock().unwrap().len() as u64,
        ]))
    }

    fn resume(
        &mut self,
        at: Option<&crawldedup::store::SinkPosition>,
    ) -> Result<(), crawldedup::store::SinkError> {
        let at = at.map_or(vec![0; 3], |p| p.0.clone());
        self.pages.lock().unwrap().truncate(at[0] as usize);
        self.duplicates.lock().unwrap().truncate(at[1] as usize);
        self.failures.lock().unwrap().truncate(at[2] as usize);
        Ok(())
    }
}

/// pages.jsonl as (final_url, text), in order.
fn page_lines(out: &Path) -> Vec<(String, String)> {
    lines(&out.join("pages.jsonl"))
        .iter()
        .map(|v| {
            (
                v["final_url"].as_str().unwrap().to_string(),
                v["text"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn an_embedded_crawler_hands_its_sinks_exactly_what_its_files_get_across_an_abort() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(serve(Site::new(9, 2))).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (state, out) = (dir.path().join("state"), dir.path().join("out"));
    let mut config = config(&state, &out, server.url("/"));
    config.crawl.per_host_delay_ms = 20;
    let pages = Arc::new(Mutex::new(Vec::new()));
    let duplicates = Arc::new(Mutex::new(Vec::new()));
    let failures = Arc::new(Mutex::new(Vec::new()));
    let closure_pages = Arc::new(Mutex::new(Vec::new()));
    let crawler = || {
        let (seen, recorder) = (
            closure_pages.clone(),
            Recorder {
                pages: pages.clone(),
                duplicates: duplicates.clone(),
                failures: failures.clone(),
            },
        );
        crawldedup::Crawler::builder(&config)
            .checkpoint_every(std::time::Duration::from_millis(100))
            .sink(recorder)
            .sink(crawldedup::store::from_fn(
                move |page: &crawldedup::StoredPage| {
                    seen.lock().unwrap().push(page.final_url.to_string());
                    Ok(())
                },
            ))
    };
    // Given up halfway (the future dropped: a kill, as far as the crawl can tell), then
    // resumed to the end.
    let given_up = runtime.block_on(async {
        tokio::time::timeout(
            std::time::Duration::from_millis(400),
            crawler().run(std::future::pending()),
        )
        .await
    });
    assert!(given_up.is_err(), "the crawl finished before the timeout");
    let summary = runtime
        .block_on(crawler().run(std::future::pending()))
        .unwrap();
    assert!(!summary.stopped_early);

    // The sink that keeps positions holds exactly pages.jsonl, in order, once each.
    let files = page_lines(&out);
    assert!(files.len() > 20, "{} pages", files.len());
    assert_eq!(*pages.lock().unwrap(), files);
    let duplicate_lines: Vec<(String, String)> = lines(&out.join("duplicates.jsonl"))
        .iter()
        .map(|v| {
            (
                v["final_url"].as_str().unwrap().to_string(),
                v["of"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(!duplicate_lines.is_empty());
    assert_eq!(*duplicates.lock().unwrap(), duplicate_lines);
    let failure_lines: Vec<String> = lines(&out.join("failures.jsonl"))
        .iter()
        .map(|v| v["url"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(*failures.lock().unwrap(), failure_lines);

    // The closure keeps no position: it got every page at least once, and the pages after
    // the checkpoint before the abort twice.
    let closure = closure_pages.lock().unwrap().clone();
    let mut once = closure.clone();
    once.sort();
    once.dedup();
    let mut expected: Vec<String> = files.iter().map(|(url, _)| url.clone()).collect();
    expected.sort();
    assert_eq!(once, expected);
    assert!(closure.len() >= files.len());
}

/// Runs a crawl of `site` to its end with host templates on or off: (pages.jsonl,
/// duplicates.jsonl).
async fn crawl_news(
    server: &crawldedup::fixture::FixtureServer,
    templates: bool,
) -> (Vec<serde_json::Value>, Vec<serde_json::Value>) {
    let dir = tempfile::tempdir().unwrap();
    let (state, out) = (dir.path().join("state"), dir.path().join("out"));
    let mut config = config(&state, &out, server.url("/news/"));
    config.dedup.host_templates = templates;
    let summary = crawldedup::crawl::crawl(&config, std::future::pending())
        .await
        .unwrap();
    assert_eq!(summary.frontier.pending, 0);
    (
        lines(&out.join("pages.jsonl")),
        lines(&out.join("duplicates.jsonl")),
    )
}

/// A news site's briefs (200-400 characters) inside big rails of headlines, teasers, dates
/// and widgets that extraction keeps: every brief is stored exactly once, and every AMP copy
/// (one word corrected) is recorded against its own brief. Without the host's template and
/// the line comparison, briefs are lost (the test can fail).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_of_briefs_inside_big_rails_stores_each_brief_once_and_finds_each_copy() {
    use crawldedup::fixture::{NEWS_COPY_EVERY, brief_copy_path, brief_path};
    const BRIEFS: usize = 80;
    let server = serve(Site::without_traps(23, 1).with_news(BRIEFS))
        .await
        .unwrap();
    let (pages, duplicates) = crawl_news(&server, true).await;
    let (stored, by_url) = outcome(&pages, &duplicates);
    let mut lost = Vec::new();
    for i in 0..BRIEFS {
        let url = server.url(&brief_path(i));
        match stored.get(url.as_str()) {
            Some(1) => {}
            Some(n) => panic!("{url} stored {n} times"),
            None => lost.push(format!("{url}: {:?}", by_url.get(url.as_str()))),
        }
        if i % NEWS_COPY_EVERY == 0 {
            let copy = server.url(&brief_copy_path(i));
            let record = by_url
                .get(copy.as_str())
                .unwrap_or_else(|| panic!("{copy} not recorded as a duplicate"));
            assert_eq!(record["kind"], "near", "{copy}");
            assert_eq!(record["of"], url.as_str(), "{copy}");
        }
    }
    assert!(lost.is_empty(), "{} briefs lost: {lost:#?}", lost.len());

    let (pages, _) = crawl_news(&server, false).await;
    let briefs_stored = pages
        .iter()
        .filter(|p| p["final_url"].as_str().unwrap().contains("/news/"))
        .filter(|p| !p["final_url"].as_str().unwrap().ends_with("/news/"))
        .count();
    assert!(
        briefs_stored < BRIEFS,
        "without host templates every brief was stored too"
    );
}
