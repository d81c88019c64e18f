//! How long other threads wait on the index while one thread bulk-loads it.
//!
//! `cargo run --release --example decision_wait -- [N] [--no-background] [--sized]`
//! (default N = 2,000,000 documents; `--no-background` turns background snapshots off,
//! `--sized` makes room for N + 100,000 documents at the open, as `dedup.expected_pages`
//! does).
//!
//! One thread inserts N random documents back to back with `check_and_insert`,
//! checkpointing every 100,000 as a crawl would. Meanwhile two threads each make one call
//! every 200 us: one `query` (a lookup alone, under the index's read lock) and one
//! `check_and_insert` of a document of its own (a second deciding thread, which also
//! waits for the first between its calls). The run prints the bulk load's rate and, for
//! each of the two threads, its calls' median, p99, p99.9 and longest time.
//!
//! What it shows: whether a thread that takes the index's locks back to back starves the
//! others (it does not: their median stays at microseconds), and what the longest waits
//! are: a growth of a group of tables (one per core), which re-places their entries under
//! the write lock (absent with `--sized`), and a background snapshot's copy of one table
//! under the read lock.
//! Figures: docs/benchmarks.md (the index); how they were reached: CHANGELOG.md (note 4).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crawldedup::fingerprint::{Digest, SKETCH_BINS, Simhash, Sketch};
use crawldedup::index::{DocRecord, IndexConfig, SimhashIndex};

/// Documents between two checkpoints of the bulk load.
const CHECKPOINT_EVERY: u64 = 100_000;
/// The pause between two calls of the other threads.
const PAUSE: Duration = Duration::from_micros(200);

/// xorshift64: a fixed stream of random words.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Document `i`: fingerprint `fp`, a sketch drawn from it, its own digest and URL.
fn doc(fp: u64, i: u64) -> DocRecord {
    let mut rng = Rng(fp | 1);
    let mut bins = [0u8; SKETCH_BINS];
    for b in bins.iter_mut() {
        *b = rng.next() as u8;
    }
    DocRecord {
        simhash: Simhash(fp),
        digest: Digest(u128::from(fp) << 64 | u128::from(i)),
        text_chars: 2_000,
        name: format!("https://example.com/articles/{i}"),
        sketch: Sketch {
            bins,
            shingles: 300,
            unspaced: 0,
        },
        ..DocRecord::default()
    }
}

/// Calls `call` every [`PAUSE`] until `done`; the time of each call.
fn every_pause(done: &AtomicBool, mut call: impl FnMut()) -> Vec<Duration> {
    let mut times = Vec::new();
    while !done.load(Ordering::Relaxed) {
        let started = Instant::now();
        call();
        times.push(started.elapsed());
        std::thread::sleep(PAUSE);
    }
    times
}

fn report(name: &str, mut times: Vec<Duration>) {
    if times.is_empty() {
        println!("{name}: no calls");
        return;
    }
    times.sort();
    let n = times.len();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "{name}: {n} calls, median {:.1} us, p99 {:.1} us, p99.9 {:.1} us, longest {:.1} ms",
        us(times[n / 2]),
        us(times[n * 99 / 100]),
        us(times[n * 999 / 1000]),
        us(times[n - 1]) / 1e3
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: u64 = args
        .iter()
        .find_map(|a| a.parse().ok())
        .unwrap_or(2_000_000);
    let sized = args.iter().any(|a| a == "--sized");
    let background = !args.iter().any(|a| a == "--no-background");
    let config = IndexConfig::default()
        .with_background_snapshots(background)
        .with_expected(n)
        .with_reserve(if sized { n + CHECKPOINT_EVERY } else { 0 });
    let dir = tempfile::tempdir().expect("a temporary folder");
    let index = SimhashIndex::open(dir.path(), config).expect("a new index");
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let queries = s.spawn(|| {
            let mut rng = Rng(99);
            every_pause(&done, || {
                std::hint::black_box(index.query(Simhash(rng.next())));
            })
        });
        let decisions = s.spawn(|| {
            let (mut rng, mut i) = (Rng(12_345), 1u64 << 40);
            every_pause(&done, || {
                index
                    .check_and_insert(doc(rng.next(), i))
                    .expect("a decision");
                i += 1;
            })
        });
        let mut rng = Rng(7);
        let started = Instant::now();
        for i in 0..n {
            index
                .check_and_insert(doc(rng.next(), i))
                .expect("a decision");
            if (i + 1) % CHECKPOINT_EVERY == 0 {
                index.checkpoint().expect("a checkpoint");
            }
        }
        let took = started.elapsed().as_secs_f64();
        done.store(true, Ordering::Relaxed);
        println!(
            "bulk load: {n} documents in {took:.2} s ({:.0} k/s; background snapshots: \
             {background}, sized: {sized})",
            n as f64 / took / 1e3,
        );
        report(
            "query, another thread",
            queries.join().expect("the query thread"),
        );
        report(
            "check_and_insert, another thread",
            decisions.join().expect("the deciding thread"),
        );
    });
}
