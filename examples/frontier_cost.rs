//! What the frontier's persistence costs: a checkpoint that writes the changes of N URLs as
//! its change log (and the sled flush after it), and the compaction that folds a full log
//! ([`COMPACT_AFTER`] URLs) into one sled entry per URL, which is also what a checkpoint
//! cost when it wrote one key per URL. Each URL is queued, fetched and finished before the
//! checkpoint, as in a crawl; three rounds, each on a new database.
//!
//! ```text
//! cargo run --release --example frontier_cost
//! ```

use std::time::{Duration, Instant};

use crawldedup::crawl::Frontier;
use crawldedup::crawl::frontier::COMPACT_AFTER;

/// Queues `n` URLs on a few hosts, then takes and finishes each one.
fn crawl(frontier: &mut Frontier, n: usize) {
    for i in 0..n {
        let url = url::Url::parse(&format!(
            "http://host{}.example/topic-{}/article-{i}.html",
            i % 8,
            i % 97
        ))
        .expect("a valid URL");
        frontier.push(url, 1, 0).expect("queued");
    }
    for host in 0..8 {
        let host = format!("host{host}.example");
        while let Some(task) = frontier.pop(&host) {
            frontier.finish(&task, false);
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    for round in 1..=3 {
        for n in [20_000, COMPACT_AFTER] {
            let dir = tempfile::tempdir().expect("a temporary directory");
            let db = sled::open(dir.path()).expect("a database");
            let mut frontier =
                Frontier::open(db.open_tree("frontier").expect("a tree"), 0).expect("a frontier");
            crawl(&mut frontier, n);
            let started = Instant::now();
            frontier.checkpoint(1).expect("a checkpoint");
            let logged = started.elapsed();
            db.flush().expect("a flush");
            let flushed = started.elapsed();
            let started = Instant::now();
            frontier.compact().expect("a compaction");
            frontier.finish_compaction().expect("a compaction");
            let compacted = started.elapsed();
            let compaction = if n >= COMPACT_AFTER {
                format!(
                    ", compaction {:7.1} ms ({:.1} us per URL)",
                    ms(compacted),
                    compacted.as_secs_f64() * 1e6 / n as f64
                )
            } else {
                String::new()
            };
            println!(
                "round {round}: {n:>6} URLs: checkpoint {:5.1} ms (log {:5.1} ms + flush){compaction}",
                ms(flushed),
                ms(logged),
            );
        }
    }
}
