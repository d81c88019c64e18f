//! A real Scrapy crawl of the fixture site through the sidecar, with the middleware in
//! `examples/scrapy/`: the items Scrapy keeps are exactly the unique pages.
//!
//! Runs when `CRAWLDEDUP_SCRAPY_PYTHON` names a Python with Scrapy installed (CI makes one
//! in a virtualenv: `.ci/run`); otherwise it says so and passes.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use crawldedup::fixture::{Site, serve};

use crate::common;
use common::{KillOnDrop, content_key, own_crawl};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scrapy_through_the_sidecar_keeps_exactly_the_unique_pages() {
    let Ok(python) = std::env::var("CRAWLDEDUP_SCRAPY_PYTHON") else {
        eprintln!("CRAWLDEDUP_SCRAPY_PYTHON is not set: the Scrapy crawl is not run here");
        return;
    };
    let server = serve(Site::without_traps(21, 6)).await.unwrap();
    let start = server.url("/");
    let dir = tempfile::tempdir().unwrap();
    let ours = own_crawl(&start, &dir.path().join("own")).await;

    let token = "scrapy-test-token";
    let sidecar = Command::new(env!("CARGO_BIN_EXE_crawldedup"))
        .args(["serve", "--listen", "127.0.0.1:0", "--token", token])
        .arg("--state-dir")
        .arg(dir.path().join("sidecar"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut sidecar = KillOnDrop(sidecar);
    let mut line = String::new();
    BufReader::new(sidecar.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap()
        .to_string();

    let items = dir.path().join("items.jsonl");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/scrapy/crawl_site.py");
    let (status, stdout, stderr) = {
        let (start, base, items) = (start.clone(), base.clone(), items.clone());
        tokio::task::spawn_blocking(move || {
            let out = Command::new(python)
                .arg(script)
                .args(["--start", &start, "--sidecar", &base, "--token", token])
                .arg("--out")
                .arg(&items)
                .output()
                .unwrap();
            (
                out.status,
                String::from_utf8_lossy(&out.stdout).into_owned(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        })
        .await
        .unwrap()
    };
    assert!(status.success(), "scrapy: {stderr}");

    let tail: String = stderr.lines().rev().take(40).collect::<Vec<_>>().join("\n");
    let items: Vec<serde_json::Value> = std::fs::read_to_string(&items)
        .unwrap_or_else(|e| panic!("{e}; scrapy's log ends (last line first):\n{tail}"))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut kept: Vec<_> = items
        .iter()
        .map(|i| content_key(i["url"].as_str().unwrap()))
        .collect();
    kept.sort();
    assert_eq!(
        kept, ours,
        "Scrapy kept a different set of pages; its log ends:\n{tail}"
    );
    assert!(
        items
            .iter()
            .all(|i| i["simhash"].as_str().is_some_and(|s| s.len() == 16))
    );

    // The sidecar saw the duplicates and said so; Scrapy kept one item per unique verdict.
    let client = reqwest::Client::new();
    let stats: serde_json::Value = client
        .get(format!("{base}/v1/stats"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(stats["pages_unique"], items.len(), "{stats}");
    assert!(
        stats["pages_exact_duplicate"].as_u64().unwrap() > 0,
        "{stats}"
    );
    assert!(
        stats["pages_near_duplicate"].as_u64().unwrap() > 0,
        "{stats}"
    );
    assert!(stats["urls_seen"].as_u64().unwrap() > 0, "{stats}");
    // And the middleware, on Scrapy's side, dropped them.
    let counters: serde_json::Value =
        serde_json::from_str(stdout.lines().last().unwrap_or("{}")).unwrap();
    assert_eq!(
        counters["crawldedup/page/unique"],
        items.len(),
        "{counters}"
    );
    for dropped in [
        "crawldedup/page/exact_duplicate",
        "crawldedup/page/near_duplicate",
        "crawldedup/url/seen",
    ] {
        assert!(
            counters[dropped].as_u64().unwrap_or(0) > 0,
            "{dropped}: {counters}"
        );
    }

    let _ = Command::new("kill")
        .args(["-TERM", &sidecar.0.id().to_string()])
        .status();
    assert!(sidecar.0.wait().unwrap().success());
}
