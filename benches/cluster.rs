//! The cluster's URL filter and near-duplicate index against the local ones, in the same
//! run: canonical URLs checked and recorded per second, by 1, 2 and 4 workers (threads with
//! a connection each, batches of 1,000 URLs a pipeline) against a three-node Redis Cluster
//! on loopback, and by the local filter (`SeenUrls::insert`) on the same URLs; then pages
//! decided per second (fingerprints computed ahead) by the shared index with 1, 2, 3 and 4
//! workers, and by the local index (`SimhashIndex::check_and_insert`) on the same pages;
//! then one worker with a retention window (the buckets in time slices); then 1 and 3
//! workers whose every second page is a near copy of the page before it, its own (the
//! round trips a page show what the worker's memory of its last pages saves); then 3
//! workers deciding stories syndicated to nine other hosts each, a story's pages shared out
//! among them (what the memory of other workers' settled documents saves). Each run's
//! Redis memory (`used_memory` over the nodes, after the run less before it) is given per
//! URL or per page.
//!
//! ```text
//! cargo bench --bench cluster            # 400,000 URLs
//! cargo bench --bench cluster -- 1000000
//! ```
//!
//! Needs `redis-server` and `redis-cli` (Debian's `redis-server` package). The cluster's
//! nodes run on this machine's cores beside the workers, so the figures are a floor for
//! nodes on machines of their own.

#[path = "../tests/it/common/redis_cluster.rs"]
mod redis_cluster;

use std::sync::Arc;
use std::time::Instant;

use crawldedup::cluster::filter::{Cluster, ClusterFilter};
use crawldedup::cluster::index::{SharedDecision, SharedIndex};
use crawldedup::index::{DocRecord, IndexConfig, SimhashIndex};
use crawldedup::{Fingerprint, SeenConfig, SeenUrls};

/// Pages decided in the index part.
const PAGES: u64 = 20_000;

/// A page of 300 words from a vocabulary of 20,000, by seed.
fn page(seed: u64) -> String {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..300)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            format!("w{}", state % 20_000)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Copies of each story on other hosts, in the syndicated part.
const STORY_COPIES: u64 = 9;

/// Worker `w`'s pages of the syndicated stories: page `j` of story `s` (0 its original,
/// `records[s]`, then its copies) is worker `(s + j) % workers`'s.
fn story_pages<'a>(
    w: usize,
    workers: usize,
    records: &'a [DocRecord],
    syndicated: &'a [DocRecord],
) -> Vec<&'a DocRecord> {
    let copies = STORY_COPIES as usize;
    let mut pages = Vec::new();
    for s in 0..syndicated.len() / copies {
        for j in 0..=copies {
            if (s + j) % workers == w {
                pages.push(if j == 0 {
                    &records[s]
                } else {
                    &syndicated[s * copies + j - 1]
                });
            }
        }
    }
    pages
}

const BATCH: usize = 1000;

fn url(i: u64) -> String {
    format!(
        "https://site{}.example.com/articles/{}/page-{i}",
        i % 1009,
        i % 97
    )
}

/// What a node has done so far: commands run by name (less `INFO` itself), seconds of CPU.
struct NodeWork {
    calls: std::collections::BTreeMap<String, u64>,
    cpu: f64,
}

fn node_work(redis: &redis_cluster::RedisCluster) -> Vec<NodeWork> {
    redis
        .ports
        .iter()
        .map(|&port| {
            let stats = redis_cluster::cli(port, &["INFO", "commandstats"]);
            let calls = stats
                .lines()
                .filter_map(|l| {
                    let (name, rest) = l.strip_prefix("cmdstat_")?.split_once(':')?;
                    let calls = rest
                        .strip_prefix("calls=")?
                        .split(',')
                        .next()?
                        .parse()
                        .ok()?;
                    (name != "info").then(|| (name.to_uppercase(), calls))
                })
                .collect();
            let info = redis_cluster::cli(port, &["INFO", "cpu"]);
            let cpu = ["used_cpu_sys:", "used_cpu_user:"]
                .iter()
                .filter_map(|f| {
                    info.lines()
                        .find_map(|l| l.strip_prefix(f))?
                        .trim()
                        .parse::<f64>()
                        .ok()
                })
                .sum();
            NodeWork { calls, cpu }
        })
        .collect()
}

/// Per page, from two readings of every node: the commands each node ran, the commands by
/// name over all nodes (most first), and the nodes' CPU seconds.
fn work_per_page(before: &[NodeWork], after: &[NodeWork], pages: u64) -> (Vec<f64>, String, f64) {
    let mut by_name = std::collections::BTreeMap::<&str, u64>::new();
    let mut per_node = Vec::new();
    for (b, a) in before.iter().zip(after) {
        let mut node = 0;
        for (name, &calls) in &a.calls {
            let ran = calls - b.calls.get(name).copied().unwrap_or(0);
            node += ran;
            *by_name.entry(name).or_default() += ran;
        }
        per_node.push(node as f64 / pages as f64);
    }
    let mut names: Vec<(&str, u64)> = by_name.into_iter().filter(|&(_, n)| n > 0).collect();
    names.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
    let names = names
        .iter()
        .map(|(name, n)| format!("{name} {:.1}", *n as f64 / pages as f64))
        .collect::<Vec<_>>()
        .join(", ");
    let cpu = after.iter().zip(before).map(|(a, b)| a.cpu - b.cpu).sum();
    (per_node, names, cpu)
}

/// Seconds of CPU this process (the workers) has used, from /proc/self/stat.
fn own_cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // utime and stime are the 12th and 13th fields after the command's parenthesis.
    let ticks: Vec<f64> = stat
        .rsplit_once(')')
        .map(|(_, rest)| {
            rest.split_whitespace()
                .skip(11)
                .take(2)
                .filter_map(|v| v.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    // The kernel's USER_HZ is 100 on Linux.
    ticks.iter().sum::<f64>() / 100.0
}

/// Bytes Redis holds over all nodes (`INFO memory`'s `used_memory`).
fn redis_memory(redis: &redis_cluster::RedisCluster) -> i64 {
    redis
        .ports
        .iter()
        .map(|&port| {
            redis_cluster::cli(port, &["INFO", "memory"])
                .lines()
                .find_map(|l| l.strip_prefix("used_memory:"))
                .and_then(|v| v.trim().parse::<i64>().ok())
                .unwrap_or(0)
        })
        .sum()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(400_000);
    let p = 0.01;
    let urls: Arc<Vec<String>> = Arc::new((0..n).map(url).collect());

    let seen = SeenUrls::new(SeenConfig::new(n, p))?;
    let t = Instant::now();
    let mut new = 0u64;
    for u in urls.iter() {
        new += u64::from(seen.insert(u)?);
    }
    let local = n as f64 / t.elapsed().as_secs_f64();
    println!("{n} canonical URLs, n = {n}, p = {p}");
    println!("local filter (SeenUrls::insert), 1 thread: {local:>12.0} URLs/s ({new} new)");

    let redis = redis_cluster::RedisCluster::start();
    let nodes = Arc::new(redis.urls());
    for workers in [1usize, 2, 4] {
        let name = format!("bench{workers}");
        let before = redis_memory(&redis);
        // The layout is written once, before the clock starts.
        ClusterFilter::open(&Cluster::connect(&nodes)?, &name, n, p)?;
        let t = Instant::now();
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let (urls, nodes, name) = (Arc::clone(&urls), Arc::clone(&nodes), name.clone());
                std::thread::spawn(move || -> Result<u64, String> {
                    let cluster = Cluster::connect(&nodes).map_err(|e| e.to_string())?;
                    let filter =
                        ClusterFilter::open(&cluster, &name, n, p).map_err(|e| e.to_string())?;
                    // Each worker takes its own share of the URLs, as hosts are shared out.
                    let mut new = 0u64;
                    for chunk in urls.chunks(BATCH).skip(w).step_by(workers) {
                        let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
                        let answers = filter.check_and_insert(&refs).map_err(|e| e.to_string())?;
                        new += answers.iter().filter(|&&b| b).count() as u64;
                    }
                    Ok(new)
                })
            })
            .collect();
        let mut new = 0u64;
        for h in handles {
            new += h.join().map_err(|_| "a worker panicked")??;
        }
        let rate = n as f64 / t.elapsed().as_secs_f64();
        let bytes = (redis_memory(&redis) - before) as f64 / n as f64;
        println!(
            "cluster filter, {workers} worker(s):           {rate:>12.0} URLs/s ({new} new; {:.3}x the local filter; Redis {bytes:.1} bytes a URL)",
            rate / local
        );
    }
    index_part(&redis, &nodes)
}

fn index_part(
    redis: &redis_cluster::RedisCluster,
    nodes: &Arc<Vec<String>>,
) -> Result<(), Box<dyn std::error::Error>> {
    let records: Arc<Vec<DocRecord>> = Arc::new(
        (0..PAGES)
            .map(|i| {
                let text = page(i);
                DocRecord::new(&format!("page/{i}"), &text, &Fingerprint::of(&text))
            })
            .collect(),
    );
    // Near copies: each page with one word of 300 changed.
    let copies: Arc<Vec<DocRecord>> = Arc::new(
        (0..PAGES)
            .map(|i| {
                let text = page(i).replacen(" w", " edited w", 1);
                DocRecord::new(&format!("copy/{i}"), &text, &Fingerprint::of(&text))
            })
            .collect(),
    );
    // Stories syndicated to many hosts: each story's original and its copies on other hosts
    // (one word of 300 changed, a different word a copy), shared out among the workers.
    let syndicated: Arc<Vec<DocRecord>> = Arc::new(
        (0..PAGES / (1 + STORY_COPIES))
            .flat_map(|s| {
                (0..STORY_COPIES).map(move |j| {
                    let text = page(s).replacen(" w", &format!(" copy{j} w"), 1);
                    DocRecord::new(&format!("story/{s}/{j}"), &text, &Fingerprint::of(&text))
                })
            })
            .collect(),
    );
    let config = IndexConfig::default().with_expected(10_000_000);
    let dir = tempfile::tempdir()?;
    let index = SimhashIndex::open(dir.path(), config)?;
    let t = Instant::now();
    for record in records.iter() {
        index.check_and_insert(record.clone())?;
    }
    let local = PAGES as f64 / t.elapsed().as_secs_f64();
    println!(
        "\n{PAGES} pages (fingerprints computed ahead), k = {}",
        config.max_distance
    );
    println!("local index (SimhashIndex::check_and_insert), 1 thread: {local:>9.0} pages/s");
    let windowed = config.with_retention(Some(std::time::Duration::from_secs(48 * 3600)));
    for (workers, config, what) in [
        (1usize, config, ""),
        (2, config, ""),
        (3, config, ""),
        (4, config, ""),
        (1, windowed, ", retention 48h"),
        (1, config, ", half the pages copies"),
        (3, config, ", half the pages copies"),
        (3, config, ", stories syndicated to nine other hosts"),
    ] {
        let with_copies = what.contains("copies");
        let with_stories = what.contains("syndicated");
        let name = format!("pages{workers}{}", what.len());
        let before = redis_memory(redis);
        let (work_before, cpu_before) = (node_work(redis), own_cpu());
        let t = Instant::now();
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let (records, copies, syndicated, nodes, name) = (
                    Arc::clone(&records),
                    Arc::clone(&copies),
                    Arc::clone(&syndicated),
                    Arc::clone(nodes),
                    name.clone(),
                );
                std::thread::spawn(move || -> Result<(u64, u64, u64), String> {
                    let cluster = Cluster::connect(&nodes).map_err(|e| e.to_string())?;
                    let index =
                        SharedIndex::open(&cluster, &name, config).map_err(|e| e.to_string())?;
                    // The worker's share of the pages, as hosts are shared out; with copies,
                    // every second page of it is a near copy of the one before (a site's
                    // copies are its host's, so its worker's).
                    let share: Vec<usize> = (w..PAGES as usize).step_by(workers).collect();
                    let pages: Vec<&DocRecord> = if with_stories {
                        // A story's ten pages go to the workers in turn, starting with the
                        // original's: each worker meets each story three or four times.
                        story_pages(w, workers, &records, &syndicated)
                    } else {
                        share
                            .iter()
                            .enumerate()
                            .map(|(k, &i)| {
                                if with_copies && k % 2 == 1 {
                                    &copies[share[k - 1]]
                                } else {
                                    &records[i]
                                }
                            })
                            .collect()
                    };
                    let (mut kept, trips) = (0u64, cluster.round_trips());
                    for record in &pages {
                        let decision = index.check_and_insert(record).map_err(|e| e.to_string())?;
                        kept += u64::from(matches!(decision, SharedDecision::Unique(_)));
                    }
                    Ok((kept, pages.len() as u64, cluster.round_trips() - trips))
                })
            })
            .collect();
        let (mut kept, mut decided, mut trips) = (0u64, 0u64, 0u64);
        for h in handles {
            let (k, d, r) = h.join().map_err(|_| "a worker panicked")??;
            (kept, decided, trips) = (kept + k, decided + d, trips + r);
        }
        let wall = t.elapsed().as_secs_f64();
        let rate = PAGES as f64 / wall;
        let (work, cpu) = (node_work(redis), own_cpu() - cpu_before);
        let bytes = (redis_memory(redis) - before) as f64 / PAGES as f64;
        println!(
            "shared index, {workers} worker(s){what}: {rate:>9.0} pages/s ({kept} kept; {:.3}x the local index; {:.0} pages/s a worker; {:.3} round trips a page; Redis {bytes:.0} bytes a page)",
            rate / local,
            rate / workers as f64,
            trips as f64 / decided as f64
        );
        // Where a page's time goes: the commands each node ran for it, the CPU the nodes
        // and the workers spent on it, and the share of the machine's cores they kept busy.
        let (per_node, names, redis_cpu) = work_per_page(&work_before, &work, PAGES);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        println!(
            "    a page: {:.1} commands ({}; by node {}), Redis {:.0} us of CPU, the workers {:.0} us; \
             {:.2} of the machine's {cores} cores busy",
            per_node.iter().sum::<f64>(),
            names,
            per_node
                .iter()
                .map(|c| format!("{c:.1}"))
                .collect::<Vec<_>>()
                .join(" / "),
            redis_cpu / PAGES as f64 * 1e6,
            cpu / PAGES as f64 * 1e6,
            (redis_cpu + cpu) / wall,
        );
    }
    Ok(())
}
