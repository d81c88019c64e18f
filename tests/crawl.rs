//! Crawls of the fixture site on loopback, with exact expectations.

use std::collections::HashMap;
use std::path::Path;

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

fn lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
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
    // A redirect target already fetched is not fetched again.
    let article0 = site.articles()[0].path();
    assert_eq!(
        requests.iter().filter(|r| **r == article0).count(),
        1,
        "{requests:?}"
    );
}
