//! Fingerprint retention in a steady-state crawl: resident memory and index size over time.
//!
//! `cargo run --release --example window_memory -- [W] [WINDOWS] [off]` (defaults
//! W = 1,000,000 documents per 48-hour window, WINDOWS = 6; `off` runs the same crawl
//! without retention, for comparison).
//!
//! An index with `retention = 48h` takes W distinct documents per 48 hours of a clock the
//! run controls, for WINDOWS windows, at full speed. A second thread sweeps as the
//! crawler's does, in bounded steps of `SWEEP_STEP`; it rests 10 ms when a step finds
//! nothing (the crawler's sweeper rests a second, but here a second of wall time is hours
//! of the simulated clock). A checkpoint runs every W / 4 documents. Every W / 4 documents it prints
//! the documents inserted and held, the process's resident memory (VmRSS), the index's
//! in-memory tables and rows, and the bytes of the index folder on disk. Without retention
//! all of these grow with the documents inserted; with it they level off after the first
//! window.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crawldedup::clock::ManualClock;
use crawldedup::dedup::SWEEP_STEP;
use crawldedup::fingerprint::{Digest, SKETCH_BINS, Simhash, Sketch};
use crawldedup::index::{Decision, DocRecord, IndexConfig, SimhashIndex};

const T0: u64 = 1_700_000_000;
const WINDOW_SECS: u64 = 48 * 3600;

/// xorshift64*: a fixed stream of random words.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// Document `i`: a random simhash and sketch, its own digest and a URL as a crawl names it.
fn doc(i: u64) -> DocRecord {
    let mut rng = Rng(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut bins = [0u8; SKETCH_BINS];
    for b in bins.iter_mut() {
        *b = rng.next() as u8;
    }
    DocRecord {
        simhash: Simhash(rng.next()),
        digest: Digest(u128::from(rng.next()) << 64 | u128::from(i)),
        text_chars: 3_000,
        name: format!("https://news{}.example.com/2026/11/{i}.html", i % 997),
        sketch: Sketch {
            bins,
            shingles: 400,
            unspaced: 0,
        },
        ..DocRecord::default()
    }
}

/// Resident memory of this process in bytes (Linux), 0 elsewhere.
fn rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

fn disk_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .filter_map(Result::ok)
            .map(|e| match e.metadata() {
                Ok(m) if m.is_dir() => disk_bytes(&e.path()),
                Ok(m) => m.len(),
                Err(_) => 0,
            })
            .sum()
    })
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 20) as f64
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let per_window: u64 = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(1_000_000);
    let windows: u64 = args.next().map(|a| a.parse()).transpose()?.unwrap_or(6);
    let retention = match args.next().as_deref() {
        Some("off") => None,
        _ => Some(Duration::from_secs(WINDOW_SECS)),
    };
    let dir = tempfile::tempdir()?;
    let clock = ManualClock::at(T0);
    let index = Arc::new(
        SimhashIndex::open(
            dir.path(),
            IndexConfig::default()
                .with_expected(per_window)
                .with_retention(retention),
        )?
        .with_clock(Arc::new(clock.clone())),
    );
    let done = Arc::new(AtomicBool::new(false));
    let sweeper = {
        let (index, done) = (index.clone(), done.clone());
        std::thread::spawn(move || {
            let mut expired = 0u64;
            while !done.load(Ordering::Relaxed) {
                let step = index.sweep(SWEEP_STEP).expect("sweep");
                expired += step.expired as u64;
                if step.expired == 0 && step.chunks_deleted == 0 {
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
            expired
        })
    };
    println!(
        "retention {}, {per_window} documents per 48 h, {windows} windows; a checkpoint every \
         {} documents",
        if retention.is_some() { "48 h" } else { "off" },
        per_window / 4
    );
    println!(
        "| documents inserted | windows | held (live) | expired | resident memory (MB) | \
         index tables + rows (MB) | index on disk (MB) | inserts/s (last quarter) |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    let quarter = (per_window / 4).max(1);
    let mut last = Instant::now();
    for i in 0..per_window * windows {
        clock.set(T0 + i * WINDOW_SECS / per_window);
        match index.check_and_insert(doc(i))? {
            Decision::Unique(_) => {}
            other => return Err(format!("document {i} was not unique: {other:?}").into()),
        }
        if (i + 1) % quarter == 0 {
            index.checkpoint()?;
            let stats = index.retention_stats();
            println!(
                "| {} | {:.2} | {} | {} | {:.0} | {:.0} | {:.0} | {:.0} |",
                i + 1,
                (i + 1) as f64 / per_window as f64,
                index.live(),
                stats.expired,
                mb(rss()),
                mb(index.memory_bytes() as u64),
                mb(disk_bytes(dir.path())),
                quarter as f64 / last.elapsed().as_secs_f64()
            );
            last = Instant::now();
        }
    }
    done.store(true, Ordering::Relaxed);
    let swept = sweeper.join().map_err(|_| "the sweep thread panicked")?;
    println!("swept from memory by the background thread: {swept}");
    if std::env::var_os("WINDOW_MEMORY_FILES").is_some() {
        for e in std::fs::read_dir(dir.path())?.filter_map(Result::ok) {
            println!(
                "{} {}",
                e.path().display(),
                disk_bytes(&e.path()).max(e.metadata()?.len())
            );
        }
    }
    Ok(())
}
