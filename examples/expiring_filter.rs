//! A URL filter that forgets, two ways: the time-sliced generations of `SeenUrls` (what
//! `url_filter.recrawl_after` uses) against a counting Bloom filter with 4-bit counters and
//! deletions, on memory per live URL, false-positive rate, and speed, in the same run.
//!
//! `cargo run --release --example expiring_filter -- [N] [G]` (defaults N = 4,000,000 URLs
//! per recrawl interval, G = 8 generations).
//!
//! The crawl simulated: a recrawl interval of 30 days in which N distinct URLs are first
//! seen, evenly over time; after three intervals (the steady state), 2,000,000 URLs never
//! seen are probed. Both filters are sized for N live URLs at p:
//!
//! - generations: `SeenUrls` with `expire_after = 30 d`, `generations = G` (each
//!   generation N / G URLs at p / (G + 1); a URL lives between 30 d and 30 d (1 + 1/G));
//! - counting: m = -N ln p / (ln 2)^2 cells of 4 bits, k = round(m / N ln 2) hashes;
//!   insert adds 1 to each cell, expiry subtracts 1. A cell that reaches 15 stays at 15
//!   for good (it is never decremented again, so an overflow can only keep a URL "seen",
//!   never lose one; Fan et al. 2000 put the chance of any cell reaching 16 at about
//!   1.4e-15 m). To delete a URL when it expires, the filter needs its hash and time:
//!   a queue of (hash 8 bytes, time 4 bytes) per live URL, counted separately.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crawldedup::clock::ManualClock;
use crawldedup::urls::seen::url_hash;
use crawldedup::{BloomParams, SeenConfig, SeenUrls};

const DAY: u64 = 86_400;
const WINDOW: u64 = 30 * DAY;
const T0: u64 = 1_700_000_000;

fn member(i: u64) -> String {
    format!(
        "https://host{}.example.com/news/{}/{i}.html",
        i % 1013,
        i % 37
    )
}

fn stranger(i: u64) -> String {
    format!("https://elsewhere{}.example.org/item/{i}", i % 977)
}

/// A counting Bloom filter: `m` cells of 4 bits, two to a byte.
struct Counting {
    cells: Vec<u8>,
    m: u64,
    k: u32,
    saturated: u64,
}

impl Counting {
    fn new(params: BloomParams) -> Counting {
        Counting {
            cells: vec![0; params.m.div_ceil(2) as usize],
            m: params.m,
            k: params.k,
            saturated: 0,
        }
    }

    /// The `k` cells of a hash (double hashing, as fastbloom and most filters do).
    fn positions(&self, hash: u64) -> impl Iterator<Item = u64> + '_ {
        let h1 = hash;
        let h2 = hash.rotate_left(32) | 1;
        (0..u64::from(self.k)).map(move |i| h1.wrapping_add(i.wrapping_mul(h2)) % self.m)
    }

    fn get(&self, at: u64) -> u8 {
        (self.cells[(at / 2) as usize] >> ((at % 2) * 4)) & 0xf
    }

    fn set(&mut self, at: u64, value: u8) {
        let byte = &mut self.cells[(at / 2) as usize];
        let shift = (at % 2) * 4;
        *byte = (*byte & !(0xf << shift)) | (value << shift);
    }

    fn contains(&self, hash: u64) -> bool {
        self.positions(hash).all(|at| self.get(at) > 0)
    }

    fn insert(&mut self, hash: u64) {
        let positions: Vec<u64> = self.positions(hash).collect();
        for at in positions {
            match self.get(at) {
                15 => {}
                14 => {
                    self.set(at, 15);
                    self.saturated += 1;
                }
                v => self.set(at, v + 1),
            }
        }
    }

    fn remove(&mut self, hash: u64) {
        let positions: Vec<u64> = self.positions(hash).collect();
        for at in positions {
            match self.get(at) {
                // A saturated cell no longer knows its count: it stays.
                0 | 15 => {}
                v => self.set(at, v - 1),
            }
        }
    }

    fn bytes(&self) -> u64 {
        self.cells.len() as u64
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n: u64 = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(4_000_000);
    let g: u32 = args.next().map(|a| a.parse()).transpose()?.unwrap_or(8);
    let strangers = 2_000_000u64;
    let total = 3 * n;
    let step = WINDOW as f64 / n as f64; // seconds between first sightings
    println!(
        "N = {n} URLs per recrawl interval of 30 d, G = {g}; {total} URLs inserted (three \
         intervals); {strangers} never-seen URLs probed at the end"
    );
    println!(
        "| p | filter | live URLs | filter bytes per live URL | expiry queue bytes per URL | \
         total bytes per URL | measured fp | bound p | inserts/s | probes/s |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for p in [0.01, 0.001] {
        // Generations.
        let clock = ManualClock::at(T0);
        let seen =
            SeenUrls::new(SeenConfig::new(n, p).with_expiry(Duration::from_secs(WINDOW), g))?
                .with_clock(Arc::new(clock.clone()));
        let start = Instant::now();
        for i in 0..total {
            clock.set(T0 + (i as f64 * step) as u64);
            seen.insert(&member(i))?;
        }
        let insert_rate = total as f64 / start.elapsed().as_secs_f64();
        let stats = seen.stats();
        let start = Instant::now();
        let mut fp = 0u64;
        for i in 0..strangers {
            fp += u64::from(seen.contains(&stranger(i))?);
        }
        let probe_rate = strangers as f64 / start.elapsed().as_secs_f64();
        let per_url = stats.bytes as f64 / stats.count as f64;
        println!(
            "| {p} | generations (G = {g}) | {} | {per_url:.2} | 0 | {per_url:.2} | {:.5} | {p} | \
             {:.2} M | {:.2} M |",
            stats.count,
            fp as f64 / strangers as f64,
            insert_rate / 1e6,
            probe_rate / 1e6
        );

        // Counting, sized for n live URLs at p, with its expiry queue.
        let params = BloomParams::new(n, p)?;
        let mut counting = Counting::new(params);
        let mut queue: VecDeque<(u64, u32)> = VecDeque::new();
        let start = Instant::now();
        for i in 0..total {
            let now = (i as f64 * step) as u64;
            while let Some(&(hash, at)) = queue.front() {
                if u64::from(at) + WINDOW > now {
                    break;
                }
                counting.remove(hash);
                queue.pop_front();
            }
            let hash = url_hash(&member(i));
            if !counting.contains(hash) {
                counting.insert(hash);
                queue.push_back((hash, now as u32));
            }
        }
        let insert_rate = total as f64 / start.elapsed().as_secs_f64();
        let start = Instant::now();
        let mut fp = 0u64;
        for i in 0..strangers {
            fp += u64::from(counting.contains(url_hash(&stranger(i))));
        }
        let probe_rate = strangers as f64 / start.elapsed().as_secs_f64();
        let live = queue.len() as f64;
        let filter = counting.bytes() as f64 / live;
        let queue_bytes = 12.0;
        println!(
            "| {p} | counting (4-bit, k = {}) | {} | {filter:.2} | {queue_bytes:.0} | {:.2} | \
             {:.5} | {p} | {:.2} M | {:.2} M |",
            params.k,
            queue.len(),
            filter + queue_bytes,
            fp as f64 / strangers as f64,
            insert_rate / 1e6,
            probe_rate / 1e6
        );
        if counting.saturated > 0 {
            println!("(counting: {} cells saturated at 15)", counting.saturated);
        }
        // The plain Bloom filter that never forgets, for scale.
        println!(
            "| {p} | plain Bloom, never forgets (for scale) | {n} | {:.2} | 0 | {:.2} | - | {p} | - | - |",
            params.bytes() as f64 / n as f64,
            params.bytes() as f64 / n as f64
        );
    }
    Ok(())
}
