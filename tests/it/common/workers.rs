//! Workers of a crawl on several machines, as processes of the `crawldedup` binary, and the
//! fixture hosts they crawl: shared by `tests/cluster_crawl.rs` and
//! `examples/cluster_faults.rs`.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::content_key;
use crawldedup::fixture::{FixtureServer, Site, serve_with_latency};

/// The `crawldedup` binary: cargo's for a test, else the one beside the running example
/// (`cargo build --release` first).
pub fn binary() -> PathBuf {
    match option_env!("CARGO_BIN_EXE_crawldedup") {
        Some(path) => PathBuf::from(path),
        None => {
            let exe = std::env::current_exe().expect("the running program's path");
            let dir = exe
                .parent()
                .and_then(Path::parent)
                .expect("target/<profile>");
            dir.join("crawldedup")
        }
    }
}

/// Hosts of the fixture site.
pub const HOSTS: usize = 12;

/// Fixture servers, each linking to the ones started before it: the last one's home page
/// reaches every host. Each answers after `latency`, so that a crawl lasts long enough to
/// be interrupted.
pub async fn sites(latency: Duration) -> Vec<FixtureServer> {
    let mut servers: Vec<FixtureServer> = Vec::new();
    for _ in 0..HOSTS {
        let peers = servers
            .iter()
            .map(|s| s.url("").trim_end_matches('/').to_string())
            .collect();
        let site = Site::without_traps(11, 3).linking_to(peers);
        servers.push(serve_with_latency(site, latency).await.unwrap());
    }
    servers
}

/// What a set of pages.jsonl files stored, by content (an article's copies on every host
/// and in every template are one), counted.
pub fn stored(outs: &[PathBuf]) -> BTreeMap<String, usize> {
    let mut keys = BTreeMap::new();
    for out in outs {
        for url in stored_urls(out) {
            *keys.entry(content_key(&url)).or_insert(0) += 1;
        }
    }
    keys
}

/// The URLs of the pages stored in `out`'s pages.jsonl (none when it is not there).
fn stored_urls(out: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(out.join("pages.jsonl")).unwrap_or_default();
    text.lines()
        .map(|line| {
            let page: serde_json::Value = serde_json::from_str(line).unwrap();
            page["final_url"].as_str().unwrap().to_string()
        })
        .collect()
}

/// The workers' output files and their sizes, for a failure's message.
pub fn listing(dir: &Path) -> String {
    let mut all = String::new();
    for worker in std::fs::read_dir(dir).unwrap().flatten() {
        for file in std::fs::read_dir(worker.path().join("out"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let size = file.metadata().map_or(0, |m| m.len());
            all.push_str(&format!("{}: {size} bytes\n", file.path().display()));
        }
    }
    all
}

/// The workers' logs, for a failure's message.
pub fn logs(dir: &Path) -> String {
    let mut all = String::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        if entry.path().extension().is_some_and(|e| e == "log") {
            all.push_str(&format!("--- {}\n", entry.path().display()));
            all.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
        }
    }
    all
}

/// For a failure's message: the URLs the workers under `dir` stored each page by, for
/// the pages stored a different number of times in `cluster` than in `alone`.
fn stored_as(
    dir: &Path,
    cluster: &BTreeMap<String, usize>,
    alone: &BTreeMap<String, usize>,
) -> String {
    let differ = |k: &String| cluster.get(k) != alone.get(k);
    let mut said = String::new();
    for worker in std::fs::read_dir(dir).unwrap().flatten() {
        let out = worker.path().join("out");
        for url in stored_urls(&out) {
            if differ(&content_key(&url)) {
                said.push_str(&format!("{}: stored {url}\n", out.display()));
            }
        }
    }
    said
}

/// The workers stored what one process stored: every article exactly once (whichever
/// host's copy), and every other page that one process kept at least once. Home pages and
/// topic indexes of the hosts differ by their links to the others, a chain of near copies
/// whose kept members depend on the order of the decisions, so their counts may differ.
pub fn same_content(
    cluster: &BTreeMap<String, usize>,
    alone: &BTreeMap<String, usize>,
    dir: &Path,
) {
    let articles = |m: &BTreeMap<String, usize>| -> BTreeMap<String, usize> {
        m.iter()
            .filter(|(k, _)| k.starts_with("article"))
            .map(|(k, n)| (k.clone(), *n))
            .collect()
    };
    assert_eq!(
        articles(cluster),
        articles(alone),
        "{}{}",
        stored_as(dir, cluster, alone),
        logs(dir)
    );
    assert!(articles(alone).values().all(|&n| n == 1), "{alone:?}");
    assert_eq!(
        cluster.keys().collect::<Vec<_>>(),
        alone.keys().collect::<Vec<_>>(),
        "{}",
        logs(dir)
    );
}

pub fn lines(out: &Path) -> usize {
    std::fs::read_to_string(out.join("pages.jsonl")).map_or(0, |t| t.lines().count())
}

/// Whether worker `id` owns a host of `servers` in the ring of `members` (id, weight).
pub fn owns_a_host(servers: &[FixtureServer], members: &[(&str, u32)], id: &str) -> bool {
    servers.iter().any(|s| owner(s, members) == id)
}

/// The worker that owns `server`'s host in the ring of `members` (id, weight).
pub fn owner(server: &FixtureServer, members: &[(&str, u32)]) -> String {
    use crawldedup::cluster::ring::{Member, Ring};
    let ring = Ring::new(members.iter().map(|(m, w)| Member::new(*m, *w)));
    ring.owner(&server.addr().to_string())
        .expect("a ring with members")
        .id
        .clone()
}

/// A `crawldedup crawl` worker process, one of three started together: the crawl starts
/// when all three are alive (`--wait-for-workers 3`).
pub fn worker(dir: &Path, id: &str, seed: &str, nodes: &[String]) -> std::process::Child {
    one_of_three(dir, id, seed, nodes)
        .spawn()
        .expect("the crawldedup binary runs")
}

/// The command line of one of three workers started together.
pub fn one_of_three(dir: &Path, id: &str, seed: &str, nodes: &[String]) -> Command {
    let mut command = command(dir, id, 1, seed, nodes);
    command.args(["--wait-for-workers", "3"]);
    command
}

/// The command line of a worker.
pub fn command(dir: &Path, id: &str, weight: u32, seed: &str, nodes: &[String]) -> Command {
    let mut command = Command::new(binary());
    command
        .arg("crawl")
        .args(["--weight", &weight.to_string()])
        .args(["--seed", seed])
        .arg("--state-dir")
        .arg(dir.join(id).join("state"))
        .arg("--out")
        .arg(dir.join(id).join("out"))
        .arg("--allow-private-ips")
        .args(["--cluster", &nodes.join(",")])
        .args(["--worker-id", id])
        .args(["--checkpoint-every", "300ms"])
        .args(["--set", "crawl.per_host_delay_ms=0"])
        .args(["--set", "crawl.per_host_concurrency=2"])
        .args(["--set", "crawl.concurrency=4"])
        .args(["--set", "cluster.heartbeat_ttl_ms=1500"])
        .arg("--json")
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(dir.join(format!("{id}.log"))).unwrap());
    command
}

/// Waits for a worker to end (its log on failure); returns how many pages it fetched.
pub fn finish(child: std::process::Child, id: &str, dir: &Path) -> u64 {
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "worker {id} failed: {}", logs(dir));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    summary["fetched_this_run"].as_u64().unwrap()
}

/// One process alone, with the same settings (its own local URL filter and index).
pub fn single(dir: &Path, seed: &str) -> BTreeMap<String, usize> {
    let out = Command::new(binary())
        .arg("crawl")
        .args(["--seed", seed])
        .arg("--state-dir")
        .arg(dir.join("single/state"))
        .arg("--out")
        .arg(dir.join("single/out"))
        .arg("--allow-private-ips")
        .args(["--set", "crawl.per_host_delay_ms=0"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stored(&[dir.join("single/out")])
}

/// Every URL fetched more than once over all hosts (robots.txt aside: each worker that
/// owns a host reads it).
pub fn fetched_twice(servers: &[FixtureServer]) -> Vec<String> {
    let mut seen = BTreeMap::new();
    for server in servers {
        for path in server.requests() {
            if path != "/robots.txt" {
                *seen.entry(server.url(&path)).or_insert(0) += 1;
            }
        }
    }
    seen.into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(u, _)| u)
        .collect()
}

pub fn wait_until(dir: &Path, what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(
            started.elapsed() < limit,
            "timed out waiting for {what}: {}{}",
            logs(dir),
            listing(dir)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A crawl ready to run on a cluster: the fixture hosts, the seed, a folder, what one
/// process alone stores there (the requests it made forgotten), and the cluster's nodes.
pub struct Setup {
    pub servers: Vec<FixtureServer>,
    pub seed: String,
    pub dir: tempfile::TempDir,
    pub alone: BTreeMap<String, usize>,
    pub nodes: Vec<String>,
}

/// Starts the fixture hosts (answering after `latency`) and crawls them with one process.
pub async fn setup(nodes: Vec<String>, latency: Duration) -> Setup {
    let servers = sites(latency).await;
    let seed = servers.last().unwrap().url("/");
    let dir = tempfile::tempdir().unwrap();
    let alone = single(dir.path(), &seed);
    for server in &servers {
        server.clear_requests();
    }
    Setup {
        servers,
        seed,
        dir,
        alone,
        nodes,
    }
}

/// The output folders of workers `ids`.
pub fn outs(dir: &Path, ids: &[&str]) -> Vec<PathBuf> {
    ids.iter().map(|id| dir.join(id).join("out")).collect()
}
