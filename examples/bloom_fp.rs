//! Measures the seen-URL filter's false-positive rate against the formula.
//!
//! `cargo run --release --example bloom_fp -- [N]` (default N = 10,000,000): for p = 0.01 and
//! p = 0.001, fills a single filter sized by `BloomParams` with N URLs and a scalable
//! `SeenUrls` with 2N, then probes N URLs that were never inserted.

use std::time::Instant;

use crawldedup::urls::seen::url_hash;
use crawldedup::{BloomParams, SeenConfig, SeenUrls};
use fastbloom::BloomFilter;

fn member(i: u64) -> String {
    format!(
        "https://host{}.example.com/path/{i}?page={}",
        i % 1013,
        i % 7
    )
}

fn stranger(i: u64) -> String {
    format!("https://elsewhere{}.example.org/item/{i}", i % 977)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: u64 = match std::env::args().nth(1) {
        Some(arg) => arg.parse()?,
        None => 10_000_000,
    };
    println!("n = {n}");
    println!(
        "| p | filter | items | m (bits) | k | bytes | expected fp | measured fp | measured / p |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for p in [0.01, 0.001] {
        let params = BloomParams::new(n, p)?;
        let mut filter = BloomFilter::with_num_bits(params.m as usize).hashes(params.k);
        let start = Instant::now();
        for i in 0..n {
            filter.insert_hash(url_hash(&member(i)));
        }
        let fill = start.elapsed();
        let hits = (0..n)
            .filter(|&i| filter.contains_hash(url_hash(&stranger(i))))
            .count();
        let measured = hits as f64 / n as f64;
        println!(
            "| {p} | single | n | {} | {} | {} | {:.6} | {:.6} | {:.3} |",
            params.m,
            params.k,
            filter.as_slice().len() * 8,
            params.expected_fp_rate(n),
            measured,
            measured / p
        );
        eprintln!("  (filled {n} in {:.2?})", fill);

        let seen = SeenUrls::new(SeenConfig::new(n, p))?;
        for i in 0..2 * n {
            seen.insert(&member(i))?;
        }
        let stats = seen.stats();
        let mut hits = 0u64;
        for i in 0..n {
            if seen.contains(&stranger(i))? {
                hits += 1;
            }
        }
        let measured = hits as f64 / n as f64;
        println!(
            "| {p} | scalable, {} layers | 2n | - | - | {} | {:.6} | {:.6} | {:.3} |",
            stats.layers,
            stats.bytes,
            stats.expected_fp_rate,
            measured,
            measured / p
        );
    }
    Ok(())
}
