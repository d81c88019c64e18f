//! Helpers shared by the tests that compare other crawlers' stored pages with the crawler's
//! own.
#![allow(dead_code)]

use std::path::Path;

use crawldedup::Config;

/// What a stored page is, independent of which copy was stored first: an article's four
/// versions (`/topic/T/I.html`, `/mirror/T/I`, `/print/T/I`, `/discuss/T/I`) are one
/// article; any other page is its path. spider does not canonicalize, so a session id in
/// the path is dropped here.
pub fn content_key(url: &str) -> String {
    let url = url::Url::parse(url).unwrap();
    let path = url.path().split(';').next().unwrap();
    let parts: Vec<_> = path.trim_matches('/').split('/').collect();
    match parts.as_slice() {
        // A topic's index has a form with `index.html` too, which is no article: a crawl
        // stores it under the URL it fetched it by, whichever form it met first.
        ["topic", topic, index]
        | ["mirror", topic, index]
        | ["print", topic, index]
        | ["discuss", topic, index]
            if *index != "index.html" =>
        {
            format!("article {topic} {}", index.trim_end_matches(".html"))
        }
        _ => path.trim_end_matches("index.html").to_string(),
    }
}

/// crawldedup's own crawl of `seed`: the content keys of the pages it stored, sorted (an
/// article whose commented version lies beyond k of the original is stored twice, by
/// either crawler).
pub async fn own_crawl(seed: &str, dir: &Path) -> Vec<String> {
    let mut config = Config::default();
    config.crawl.seeds = vec![seed.to_string()];
    config.crawl.state_dir = dir.join("state");
    config.crawl.out_dir = dir.join("out");
    config.crawl.allow_private_ips = true;
    config.crawl.per_host_delay_ms = 0;
    config.crawl.concurrency = 8;
    config.crawl.per_host_concurrency = 8;
    crawldedup::crawl::crawl(&config, std::future::pending())
        .await
        .unwrap();
    let mut keys: Vec<_> = std::fs::read_to_string(dir.join("out/pages.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let page: serde_json::Value = serde_json::from_str(l).unwrap();
            content_key(page["final_url"].as_str().unwrap())
        })
        .collect();
    keys.sort();
    keys
}

/// The settings of the crawl tests: `seed` crawled on loopback from `state` into `out`, with
/// no delay, one request a host at a time and four in all, to depth 4.
pub fn crawl_config(state: &Path, out: &Path, seed: String) -> Config {
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

/// The final URLs of `out/pages.jsonl`, sorted, after checking that its last line is whole
/// and that no page is stored twice.
pub fn stored_urls(out: &Path) -> Vec<String> {
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

/// Kills a child process (a sidecar) if the test ends early, so that no process outlives a failed test.
pub struct KillOnDrop(pub std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The status figures of the crawl whose `--metrics` listener is at `base`, once it says
/// the crawl is over (its listener lingers); waits up to two minutes.
pub async fn wait_until_finished(base: &str) -> serde_json::Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        assert!(
            std::time::Instant::now() < deadline,
            "{base}: the crawl never finished"
        );
        tokio::time::sleep(std::time::Duration::from_millis(30)).await;
        let Ok(answer) = reqwest::get(format!("{base}/status.json")).await else {
            continue;
        };
        let status: serde_json::Value = answer.json().await.unwrap();
        if status["finished"] == true {
            return status;
        }
    }
}

/// Runs a crawl with `options` until it ends by itself.
pub fn crawl_to_the_end(
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
pub fn uninterrupted_crawl(
    runtime: &tokio::runtime::Runtime,
    seed: &str,
) -> (tempfile::TempDir, Vec<String>) {
    let reference = tempfile::tempdir().unwrap();
    let out = reference.path().join("out");
    let mut uninterrupted = crawl_config(&reference.path().join("state"), &out, seed.to_string());
    uninterrupted.crawl.per_host_delay_ms = 20;
    runtime
        .block_on(crawldedup::crawl::crawl(
            &uninterrupted,
            std::future::pending(),
        ))
        .unwrap();
    let stored = stored_urls(&out);
    (reference, stored)
}
