//! How often the windows of a crawl on several machines bite: crawls of three workers
//! (processes of the `crawldedup` binary) against a Redis Cluster on loopback and twelve
//! fixture hosts whose 15 articles are syndicated on each, with a fault at a random moment:
//!
//! - `sigkill`: a worker killed with SIGKILL for good (its outputs cut back to its last
//!   checkpoint, or given back to the cluster, by `crawldedup repair --cluster`, as for a
//!   machine that is gone);
//! - `restart`: a worker killed with SIGKILL and started again on its state directory;
//! - `failover`: a master node killed, its replica taking over (three masters, three
//!   replicas).
//!
//! Per trial: articles lost (stored by no worker), articles stored more than once, other
//! pages lost (a page one process stores, stored by no worker), and URLs fetched more than
//! once (robots.txt aside).
//!
//! ```text
//! cargo build --release && cargo run --release --example cluster_faults -- [TRIALS [FAULTS [WINDOWS]]]
//! ```
//!
//! FAULTS: a comma-separated list of `sigkill`, `restart`, `failover` (default all).
//! WINDOWS: `RETENTION/RECRAWL` (`48h/30d`, say): every worker crawls with
//! `dedup.retention` and `url_filter.recrawl_after` set, so the shared index keeps its
//! documents in time slices and the shared filter its bits in generations (default: no
//! windows).
//!
//! Needs `redis-server` and `redis-cli` (Debian's `redis-server` package).

#[path = "../tests/it/common/mod.rs"]
mod common;
#[path = "../tests/it/common/redis_cluster.rs"]
mod redis_cluster;
#[path = "../tests/it/common/workers.rs"]
mod workers;

use std::process::Command;
use std::time::{Duration, Instant};

use redis_cluster::RedisCluster;
use workers::*;

/// A number from `seed`, spread (splitmix64).
fn mix(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[derive(Default)]
struct Tally {
    trials: usize,
    articles_lost: usize,
    articles_twice: usize,
    pages_lost: usize,
    fetched_twice: usize,
    fetches: usize,
}

#[tokio::main(flavor = "multi_thread", worker_threads = 4)]
async fn main() {
    let trials: u64 = std::env::args()
        .nth(1)
        .map(|t| t.parse().expect("TRIALS is a number"))
        .unwrap_or(10);
    assert!(
        binary().exists(),
        "{} is missing: cargo build --release first",
        binary().display()
    );
    println!(
        "{:<9} {:>5} {:>14} {:>7} {:>13} {:>14} {:>11} {:>14} {:>8}",
        "fault",
        "trial",
        "at (stored)",
        "killed",
        "articles lost",
        "articles twice",
        "pages lost",
        "fetched twice",
        "seconds"
    );
    let kinds = std::env::args()
        .nth(2)
        .unwrap_or_else(|| "sigkill,restart,failover".into());
    let windows: Vec<String> = match std::env::args().nth(3) {
        Some(w) => {
            let (retention, recrawl) = w.split_once('/').expect("WINDOWS is RETENTION/RECRAWL");
            vec![
                "--set".into(),
                format!("dedup.retention={retention}"),
                "--set".into(),
                format!("url_filter.recrawl_after={recrawl}"),
            ]
        }
        None => Vec::new(),
    };
    for kind in kinds.split(',') {
        assert!(
            ["sigkill", "restart", "failover"].contains(&kind),
            "unknown fault `{kind}`"
        );
        let mut tally = Tally::default();
        for trial in 0..trials {
            let started = Instant::now();
            let r = mix(trial * 7 + kind.len() as u64);
            let replicas = usize::from(kind == "failover");
            let mut redis = RedisCluster::start_with(replicas);
            let Setup {
                servers,
                seed,
                dir,
                alone,
                nodes,
            } = setup(redis.urls(), Duration::from_millis(40)).await;
            let spawn = |id: &str| {
                let mut command = command(dir.path(), id, 1, &seed, &nodes);
                command.args(["--wait-for-workers", "3"]).args(&windows);
                if kind == "failover" {
                    command.args([
                        "--set",
                        "cluster.heartbeat_ttl_ms=10000",
                        "--set",
                        "cluster.failover_wait_ms=30000",
                    ]);
                }
                command.spawn().unwrap()
            };
            let ids = ["a", "b", "c"];
            let mut children: Vec<_> = ids.iter().map(|id| (*id, spawn(id))).collect();
            let outs = outs(dir.path(), &ids);
            // A moment within the crawl: after 1 to all but one of the pages one process
            // stores (the fixture's templates make most pages duplicates).
            let most = alone.values().sum::<usize>().max(2);
            let at = 1 + (r as usize) % (most - 1);
            wait_until(dir.path(), "pages stored", Duration::from_secs(120), || {
                outs.iter().map(|o| lines(o)).sum::<usize>() >= at
            });
            let victim = ((r >> 8) % 3) as usize;
            let killed = match kind {
                "failover" => {
                    redis.kill_node(victim);
                    format!("node {victim}")
                }
                _ => {
                    let (id, mut child) = children.remove(victim);
                    child.kill().unwrap();
                    child.wait().unwrap();
                    if kind == "restart" {
                        std::thread::sleep(Duration::from_millis(500));
                        children.push((id, spawn(id)));
                    }
                    id.to_string()
                }
            };
            for (id, child) in children {
                finish(child, id, dir.path());
            }
            if kind == "sigkill" {
                let repaired = Command::new(binary())
                    .arg("repair")
                    .arg("--state-dir")
                    .arg(dir.path().join(&killed).join("state"))
                    .arg("--out")
                    .arg(dir.path().join(&killed).join("out"))
                    .arg("--cluster")
                    .arg(nodes.join(","))
                    .output()
                    .unwrap();
                assert!(
                    repaired.status.success(),
                    "{}",
                    String::from_utf8_lossy(&repaired.stdout)
                );
            }
            if trial == 0 {
                // What `crawldedup stats --cluster` shows after the crawl.
                let stats = Command::new(binary())
                    .args(["stats", "--cluster", &nodes.join(",")])
                    .output()
                    .unwrap();
                print!("{}", String::from_utf8_lossy(&stats.stdout));
            }
            let cluster = stored(&outs);
            let articles_lost = alone
                .keys()
                .filter(|k| k.starts_with("article") && !cluster.contains_key(*k))
                .count();
            let articles_twice = cluster
                .iter()
                .filter(|(k, n)| k.starts_with("article") && **n > 1)
                .count();
            let pages_lost = alone
                .keys()
                .filter(|k| !k.starts_with("article") && !cluster.contains_key(*k))
                .count();
            let twice = fetched_twice(&servers).len();
            let fetches: usize = servers.iter().map(|s| s.requests().len()).sum();
            println!(
                "{kind:<9} {trial:>5} {at:>14} {killed:>7} {articles_lost:>13} {articles_twice:>14} {pages_lost:>11} {twice:>14} {:>8.1}",
                started.elapsed().as_secs_f64()
            );
            tally.trials += 1;
            tally.articles_lost += articles_lost;
            tally.articles_twice += articles_twice;
            tally.pages_lost += pages_lost;
            tally.fetched_twice += twice;
            tally.fetches += fetches;
        }
        println!(
            "{kind}: {} trials, 15 articles each: {} articles lost, {} stored twice; {} other pages lost; {} URLs fetched twice in {} fetches",
            tally.trials,
            tally.articles_lost,
            tally.articles_twice,
            tally.pages_lost,
            tally.fetched_twice,
            tally.fetches
        );
    }
}
