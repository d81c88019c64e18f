//! The cluster's URL filter against the local one, in the same run: canonical URLs checked
//! and recorded per second, by 1, 2 and 4 workers (threads with a connection each, batches
//! of 1,000 URLs a pipeline) against a three-node Redis Cluster on loopback, and by the
//! local filter (`SeenUrls::insert`) on the same URLs.
//!
//! ```text
//! cargo bench --bench cluster            # 400,000 URLs
//! cargo bench --bench cluster -- 1000000
//! ```
//!
//! Needs `redis-server` and `redis-cli` (Debian's `redis-server` package). The cluster's
//! nodes run on this machine's cores beside the workers, so the figures are a floor for
//! nodes on machines of their own.

#[path = "../tests/common/redis_cluster.rs"]
#[allow(dead_code)]
mod redis_cluster;

use std::sync::Arc;
use std::time::Instant;

use crawldedup::cluster::filter::{Cluster, ClusterFilter};
use crawldedup::{SeenConfig, SeenUrls};

const BATCH: usize = 1000;

fn url(i: u64) -> String {
    format!(
        "https://site{}.example.com/articles/{}/page-{i}",
        i % 1009,
        i % 97
    )
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(400_000);
    let p = 0.01;
    let urls: Arc<Vec<String>> = Arc::new((0..n).map(url).collect());

    let seen = SeenUrls::new(SeenConfig {
        expected_urls: n,
        false_positive_rate: p,
        confirm_on_disk: false,
    })?;
    let t = Instant::now();
    let mut new = 0u64;
    for u in urls.iter() {
        new += u64::from(!seen.insert(u)?);
    }
    let local = n as f64 / t.elapsed().as_secs_f64();
    println!("{n} canonical URLs, n = {n}, p = {p}");
    println!("local filter (SeenUrls::insert), 1 thread: {local:>12.0} URLs/s ({new} new)");

    let Some(redis) = redis_cluster::RedisCluster::start() else {
        return Ok(());
    };
    let nodes = Arc::new(redis.urls());
    for workers in [1usize, 2, 4] {
        let name = format!("bench{workers}");
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
        println!(
            "cluster filter, {workers} worker(s):           {rate:>12.0} URLs/s ({new} new; {:.3}x the local filter)",
            rate / local
        );
    }
    Ok(())
}
