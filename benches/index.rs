//! Index benchmark: insert rate, query latency (median and p99), reopen time and bytes per
//! fingerprint, for crawldedup's index and, in the same run, gaoya's `SimHashIndex`, a
//! brute-force popcount scan, and (at 1 M or fewer, when `target/peers` exists; see
//! `scripts/peers.sh`) the Python `simhash` package's `SimhashIndex`.
//!
//! ```text
//! cargo bench --bench index                     # 1 M fingerprints
//! cargo bench --bench index -- 1000000 10000000 # 1 M and 10 M
//! cargo bench --bench index -- 10000000 ours    # crawldedup alone (for profiling)
//! cargo bench --bench index -- 10000000 ours --no-background  # no snapshots while inserting
//! cargo bench --bench index -- 10000000 ours --sized          # tables sized for n at open
//! cargo bench --bench index -- 10000000 ours --cold           # page cache dropped before the crash reopen
//! ```
//!
//! Fingerprints are uniformly random; half the queries are a stored fingerprint with 0 to
//! 3 bits flipped, half are random. The insert run checkpoints every 100,000 documents, as
//! a crawl would, so the snapshots the index writes in the background are part of it. The
//! reopens measured: after SIGKILL at the end of the run (the last background snapshot and
//! the documents after it), after the clean close that follows (which leaves that snapshot
//! in place while the documents after it are under a quarter of it), after the whole
//! snapshot written on demand, after a crash 1% and 12.5% past a snapshot
//! (the share at which the background writes the next), and with no snapshot at all (the
//! tables rebuilt from the database). The
//! inserts and queries run on one core (the index builds its tables on every core when it
//! reopens, and writes snapshots on a thread of its own).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crawldedup::fingerprint::{Digest, SKETCH_BINS, Simhash, Sketch};
use crawldedup::index::snapshot::{SNAPSHOT_FILE, SNAPSHOT_MIN_DOCUMENTS};
use crawldedup::index::{DocRecord, IndexConfig, SimhashIndex};

#[path = "peers/python.rs"]
mod peers;
mod support;
use support::dir_bytes;

const QUERIES: usize = 20_000;
const K: u32 = 3;
/// Documents between checkpoints in the insert run.
const CHECKPOINT_EVERY: u64 = 100_000;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn queries(stored: &[u64], rng: &mut Rng, count: usize) -> Vec<u64> {
    (0..count)
        .map(|q| {
            if q % 2 == 0 {
                let mut v = stored[(rng.next() % stored.len() as u64) as usize];
                for _ in 0..rng.next() % 4 {
                    v ^= 1 << (rng.next() % 64);
                }
                v
            } else {
                rng.next()
            }
        })
        .collect()
}

/// The sketch of an unrelated text of 300 shingles: bins drawn from the fingerprint.
fn random_sketch(fp: u64) -> Sketch {
    let mut rng = Rng(fp | 1);
    let mut bins = [0u8; SKETCH_BINS];
    for b in bins.iter_mut() {
        *b = rng.next() as u8;
    }
    Sketch {
        bins,
        shingles: 300,
        unspaced: 0,
    }
}

/// Document `i` with fingerprint `fp` (and a sketch drawn from it).
fn record(fp: u64, i: u64) -> DocRecord {
    DocRecord {
        blocks: None,
        simhash: Simhash(fp),
        digest: Digest(u128::from(fp) << 64 | u128::from(i)),
        text_chars: 2_000,
        name: format!("https://example.com/articles/{i}"),
        sketch: random_sketch(fp),
        tiny_set: Vec::new(),
        at: 0,
    }
}

/// (median, p99) of per-call times.
fn latency(mut times: Vec<Duration>) -> (Duration, Duration) {
    times.sort();
    (times[times.len() / 2], times[times.len() * 99 / 100])
}

fn micros(d: Duration) -> String {
    format!("{:.2} us", d.as_secs_f64() * 1e6)
}

fn main() {
    // RUST_LOG=crawldedup=debug shows where a reopen spends its time.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    if let Ok(spec) = std::env::var(CHILD_ENV) {
        insert_run(&spec);
        return;
    }
    let sizes: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![1_000_000]
    } else {
        sizes
    };
    let ours_only = std::env::args().any(|a| a == "ours");
    let background = !std::env::args().any(|a| a == "--no-background");
    let sized = std::env::args().any(|a| a == "--sized");
    let cold = std::env::args().any(|a| a == "--cold");
    for n in sizes {
        run(n, ours_only, background, sized, cold);
    }
}

/// The environment variable that makes the bench binary the insert run's child:
/// "N BACKGROUND SIZED DIR".
const CHILD_ENV: &str = "CRAWLDEDUP_INDEX_BENCH_CHILD";

/// The stored fingerprints and the queries of a run of `n`.
fn fingerprints(n: u64) -> (Vec<u64>, Vec<u64>) {
    let mut rng = Rng(0x0123_4567_89ab_cdef ^ n);
    let stored: Vec<u64> = (0..n).map(|_| rng.next()).collect();
    let probes = queries(&stored, &mut rng, QUERIES);
    (stored, probes)
}

/// The index's configuration for a run of `n`; `sized`: its tables made room for `n`
/// documents when it opens (what `dedup.expected_pages` does), so that they never grow.
fn config(n: u64, sized: bool) -> IndexConfig {
    IndexConfig::default()
        .with_max_distance(K)
        .with_expected(n)
        .with_reserve(if sized { n } else { 0 })
}

/// The child: inserts the `n` fingerprints into a new index in the folder, checkpointing
/// as a crawl would (with snapshots in the background unless told not to), queries it,
/// prints its figures as one JSON line and `killable`, then waits for its SIGKILL.
fn insert_run(spec: &str) {
    let mut words = spec.splitn(4, ' ');
    let n: u64 = words.next().unwrap().parse().unwrap();
    let background = words.next().unwrap() == "true";
    let sized = words.next().unwrap() == "true";
    let dir = PathBuf::from(words.next().unwrap());
    let (stored, probes) = fingerprints(n);
    let config = config(n, sized).with_background_snapshots(background);
    let index = SimhashIndex::open(&dir, config).unwrap();
    let start = Instant::now();
    // The time the inserting thread spent in checkpoints (each waits for sled's writes and
    // three fsyncs), in all and the longest.
    let (mut checkpoints, mut longest) = (Duration::ZERO, Duration::ZERO);
    let mut checkpoint = || {
        let started = Instant::now();
        index.checkpoint().unwrap();
        let took = started.elapsed();
        checkpoints += took;
        longest = longest.max(took);
    };
    for (i, &fp) in stored.iter().enumerate() {
        index.check_and_insert(record(fp, i as u64)).unwrap();
        // Checkpoints as a crawl makes them: the snapshots they start in the background
        // are part of the run.
        if (i as u64 + 1) % CHECKPOINT_EVERY == 0 {
            checkpoint();
        }
    }
    checkpoint();
    let insert = start.elapsed();
    let mut found = 0usize;
    let times: Vec<Duration> = probes
        .iter()
        .map(|&q| {
            let t = Instant::now();
            found += index.query(Simhash(q)).len();
            t.elapsed()
        })
        .collect();
    let (median, p99) = latency(times);
    let snapshot_bytes: u64 = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(SNAPSHOT_FILE))
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum();
    let background = index.snapshot_stats();
    let figures = serde_json::json!({
        "tables": index.plan().tables.len(),
        "blocks": index.plan().blocks.len(),
        "insert_s": insert.as_secs_f64(),
        "median_us": median.as_secs_f64() * 1e6,
        "p99_us": p99.as_secs_f64() * 1e6,
        "found": found,
        "memory": index.memory_bytes(),
        "disk": dir_bytes(&dir) - snapshot_bytes,
        "snapshots": background.written,
        "snapshot_documents": background.documents.unwrap_or(0),
        "snapshot_s": background.last_seconds,
        "snapshot_bytes": background.last_bytes,
        "snapshot_bytes_written": background.bytes_written,
        "checkpoint_s": checkpoints.as_secs_f64(),
        "checkpoint_max_ms": longest.as_secs_f64() * 1e3,
    });
    println!("{figures}");
    println!("killable");
    std::io::Write::flush(&mut std::io::stdout()).unwrap();
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

/// Opens the index in `dir` and times it; it writes no snapshot when closed (as a crash
/// would not), so that the state on disk stays what the next scenario needs.
fn timed_open(dir: &Path, config: IndexConfig) -> (SimhashIndex, Duration) {
    let start = Instant::now();
    let index = SimhashIndex::open(dir, config)
        .unwrap()
        .with_snapshot_min_documents(u64::MAX);
    (index, start.elapsed())
}

/// The clean close after the crash reopen, the reopen after it, the whole snapshot written
/// on demand and the open that maps it, with queries on it: the bench's "clean" line.
fn clean_close(
    crashed: SimhashIndex,
    dir: &Path,
    config: IndexConfig,
    n: u64,
    probes: &[u64],
) -> String {
    // A clean close: it leaves the snapshot the open mapped in place while the documents
    // after it are under a quarter of it (the next open adds them as tails), and writes the
    // whole index's otherwise.
    let crashed = crashed.with_snapshot_min_documents(SNAPSHOT_MIN_DOCUMENTS);
    let start = Instant::now();
    let closed = crashed.close().unwrap();
    let close = start.elapsed();
    let start = Instant::now();
    let reopened = SimhashIndex::open(dir, config).unwrap();
    let reopen = start.elapsed();
    assert_eq!(reopened.len(), n);
    let from_snapshot = reopened.opened_from_snapshot();
    let reopen_tails = n - reopened.snapshot_stats().documents.unwrap_or(0).min(n);
    // The whole index's snapshot written on demand (what every close wrote before), and the
    // open that maps it with nothing after it.
    assert!(reopened.wait_tails_folded(Duration::from_secs(600)));
    let mut reopened = reopened;
    let start = Instant::now();
    let whole_written = reopened.write_snapshot().unwrap();
    let whole = start.elapsed();
    drop(reopened);
    let start = Instant::now();
    let reopened = SimhashIndex::open(dir, config).unwrap();
    let mapped_open = start.elapsed();
    assert_eq!(reopened.snapshot_stats().documents, Some(n));
    // Queries on the mapped tables, whose pages come from the page cache at first touch.
    let times: Vec<Duration> = probes
        .iter()
        .map(|&q| {
            let t = Instant::now();
            std::hint::black_box(reopened.query(Simhash(q)));
            t.elapsed()
        })
        .collect();
    let (mapped_median, mapped_p99) = latency(times);
    drop(reopened);
    let snapshot_bytes = std::fs::metadata(dir.join(SNAPSHOT_FILE)).map_or(0, |m| m.len());
    format!(
        "close {:.2} s (snapshot written: {}), then the reopen {:.2} s (from the snapshot: {from_snapshot}, {reopen_tails} documents after it as tails); the whole snapshot written on demand (write_snapshot: {whole_written}) in {:.2} s, {:.1} bytes/fp, and the open after it {:.2} s, first queries on it median {} p99 {}",
        close.as_secs_f64(),
        closed.snapshot_written,
        reopen.as_secs_f64(),
        whole.as_secs_f64(),
        snapshot_bytes as f64 / n as f64,
        mapped_open.as_secs_f64(),
        micros(mapped_median),
        micros(mapped_p99),
    )
}

/// Writes out the page cache's dirty pages and drops the cache (Linux, as root); `false`,
/// with a line saying why, where it cannot.
fn drop_page_cache() -> bool {
    let synced = std::process::Command::new("sync").status();
    match synced.map(|_| std::fs::write("/proc/sys/vm/drop_caches", "3")) {
        Ok(Ok(())) => true,
        Ok(Err(e)) | Err(e) => {
            eprintln!("the page cache was not dropped ({e}): the crash reopen is timed warm");
            false
        }
    }
}

/// Runs the insert run of `n` in a child process on `dir`, kills it (SIGKILL) once it has
/// printed its figures, and returns them.
fn killed_insert_run(n: u64, dir: &Path, background: bool, sized: bool) -> serde_json::Value {
    use std::io::BufRead;
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .env(
            CHILD_ENV,
            format!("{n} {background} {sized} {}", dir.display()),
        )
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let figures: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(lines.next().unwrap().unwrap(), "killable");
    child.kill().unwrap();
    child.wait().unwrap();
    figures
}

fn run(n: u64, ours_only: bool, background: bool, sized: bool, cold: bool) {
    println!("\n== {n} fingerprints, k = {K}, {QUERIES} queries");
    let (stored, probes) = fingerprints(n);
    let ours = crawldedup_run(n, &probes, background, sized, cold);
    if !ours_only {
        peers_run(&stored, &probes, &ours);
    }
}

/// What the peers are compared with: crawldedup's insert time, query median and blocks.
struct Ours {
    insert: Duration,
    median: Duration,
    blocks: usize,
}

/// crawldedup's part of a run of `n`: the killed insert run, then the reopens.
fn crawldedup_run(n: u64, probes: &[u64], background: bool, sized: bool, cold: bool) -> Ours {
    let dir = support::scratch_dir().unwrap();
    let config = config(n, sized);
    let figures = killed_insert_run(n, dir.path(), background, sized);
    let insert = Duration::from_secs_f64(figures["insert_s"].as_f64().unwrap());
    let median = Duration::from_secs_f64(figures["median_us"].as_f64().unwrap() / 1e6);
    let snapshot_file = dir.path().join(SNAPSHOT_FILE);
    // With --cold, as after the machine restarted: sled's log and the snapshot come from
    // the disk, not from the page cache that the run filled.
    let cold = cold && drop_page_cache();
    // The kill: the open maps what the background put in place and adds the documents
    // after it as tails.
    let (crashed, crash_reopen) = timed_open(dir.path(), config);
    let crash_from_snapshot = crashed.opened_from_snapshot();
    let crash_snapshot = crashed.snapshot_stats().documents.unwrap_or(0);
    // The first decision after the open, while the tails are folded in the background.
    let start = Instant::now();
    std::hint::black_box(crashed.query(Simhash(probes[0])));
    let first_decision = start.elapsed();
    assert!(crashed.wait_tails_folded(Duration::from_secs(600)));
    let folded = start.elapsed();
    assert_eq!(crashed.len(), n);
    let clean = clean_close(crashed, dir.path(), config, n, probes);
    // After a crash with no snapshot at all: the tables are rebuilt from the database. The
    // snapshot is moved away for it, and back.
    let kept = snapshot_file.with_extension("kept");
    std::fs::rename(&snapshot_file, &kept).unwrap();
    let (rebuilt, rebuild) = timed_open(dir.path(), config);
    assert_eq!(rebuilt.len(), n);
    drop(rebuilt);
    std::fs::rename(&kept, &snapshot_file).unwrap();
    let recovered = recoveries(dir.path(), config, n);
    println!(
        "crawldedup     {} tables ({} blocks): insert {:.0}/s (check-and-insert, batched writes, a checkpoint every {CHECKPOINT_EVERY}, snapshots in the background: {background}, sized for n: {sized}); query median {:.2} us p99 {:.2} us; {:.1} bytes/fp on disk, {:.1} bytes/fp in memory; {} matches",
        figures["tables"],
        figures["blocks"],
        n as f64 / insert.as_secs_f64(),
        figures["median_us"].as_f64().unwrap(),
        figures["p99_us"].as_f64().unwrap(),
        figures["disk"].as_f64().unwrap() / n as f64,
        figures["memory"].as_f64().unwrap() / n as f64,
        figures["found"],
    );
    println!(
        "  background   {} snapshots written during the run, the last of {} documents in {:.2} s ({:.0} MB; {:.0} MB written by all of them); the checkpoints took {:.2} s of the {:.2} s run, the longest {:.0} ms",
        figures["snapshots"],
        figures["snapshot_documents"],
        figures["snapshot_s"].as_f64().unwrap(),
        figures["snapshot_bytes"].as_f64().unwrap() / 1e6,
        figures["snapshot_bytes_written"].as_f64().unwrap() / 1e6,
        figures["checkpoint_s"].as_f64().unwrap(),
        insert.as_secs_f64(),
        figures["checkpoint_max_ms"].as_f64().unwrap(),
    );
    println!(
        "  crash        reopen after SIGKILL at the end of the run: {:.2} s (page cache dropped first: {cold}; from a snapshot: {crash_from_snapshot}, of {crash_snapshot} documents, the {} after it as tails, the first query answered {:.1} ms after the open, the tails folded in {:.2} s); after a crash of an index opened from a whole snapshot, {recovered}; with no snapshot at all (rebuilt from the database): {:.2} s",
        crash_reopen.as_secs_f64(),
        n - crash_snapshot.min(n),
        first_decision.as_secs_f64() * 1e3,
        folded.as_secs_f64(),
        rebuild.as_secs_f64(),
    );
    println!("  clean        {clean}");
    Ours {
        insert,
        median,
        blocks: figures["blocks"].as_u64().unwrap() as usize,
    }
}

/// The reopens after a crash of an index opened from its snapshot that stored 1%, then
/// 12.5% more (the share at which a snapshot is written in the background), and
/// checkpointed them before it: the snapshot, and the rest read from the database as
/// tails.
fn recoveries(dir: &Path, config: IndexConfig, n: u64) -> String {
    let mut rng = Rng(0x7777 ^ n);
    let mut recovered = Vec::new();
    for tail in [n / 100, n / crawldedup::index::upkeep::TAIL_SHARE] {
        let resumed = SimhashIndex::open(dir, config)
            .unwrap()
            .with_snapshot_min_documents(u64::MAX);
        for i in resumed.len()..n + tail {
            resumed.check_and_insert(record(rng.next(), i)).unwrap();
        }
        resumed.checkpoint().unwrap();
        drop(resumed);
        let (reopened, took) = timed_open(dir, config);
        recovered.push((tail, took, reopened.opened_from_snapshot()));
        assert_eq!(reopened.len(), n + tail);
    }
    recovered
        .iter()
        .map(|(tail, took, from)| {
            format!(
                "{tail} documents past it: {:.2} s (from the snapshot: {from})",
                took.as_secs_f64()
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The peers on the same fingerprints and queries: gaoya with crawldedup's number of
/// blocks, a brute-force scan, and Python's `simhash` at 1 M or fewer.
fn peers_run(stored: &[u64], probes: &[u64], ours: &Ours) {
    let n = stored.len() as u64;
    let Ours {
        insert,
        median,
        blocks,
    } = *ours;
    let mut gaoya = gaoya::simhash::SimHashIndex::<u64, u32>::new(blocks, K as usize);
    let start = Instant::now();
    for (i, &fp) in stored.iter().enumerate() {
        gaoya.insert(i as u32, fp);
    }
    let gaoya_insert = start.elapsed();
    let mut gaoya_found = 0usize;
    let times: Vec<Duration> = probes
        .iter()
        .map(|q| {
            let t = Instant::now();
            gaoya_found += gaoya.query_return_distance(q).len();
            t.elapsed()
        })
        .collect();
    let (g_median, g_p99) = latency(times);
    drop(gaoya);
    println!(
        "gaoya          insert {:.0}/s (in memory only); query median {} p99 {}; {} matches",
        n as f64 / gaoya_insert.as_secs_f64(),
        micros(g_median),
        micros(g_p99),
        gaoya_found
    );
    println!(
        "  ratio        crawldedup inserts {:.2}x, queries {:.2}x (median) faster",
        gaoya_insert.as_secs_f64() / insert.as_secs_f64(),
        g_median.as_secs_f64() / median.as_secs_f64()
    );

    // Brute force: a popcount over every fingerprint.
    let scans = (QUERIES / 50).max(100);
    let mut brute_found = 0usize;
    let times: Vec<Duration> = probes[..scans]
        .iter()
        .map(|&q| {
            let t = Instant::now();
            brute_found += stored
                .iter()
                .filter(|&&s| (s ^ q).count_ones() <= K)
                .count();
            t.elapsed()
        })
        .collect();
    let (b_median, b_p99) = latency(times);
    println!(
        "brute force    query median {} p99 {} ({scans} queries); {:.0}x slower than crawldedup",
        micros(b_median),
        micros(b_p99),
        b_median.as_secs_f64() / median.as_secs_f64(),
    );
    let _ = brute_found;

    // Python simhash, at 1 M or fewer.
    if let Some(python) = peers::python().filter(|_| n <= 1_000_000) {
        let n = n.to_string();
        match peers::simhash_peer(
            &python,
            &["index".as_ref(), n.as_ref(), "2000".as_ref(), "7".as_ref()],
        ) {
            Ok(v) => {
                let p_median = v["median_us"].as_f64().unwrap_or(f64::NAN);
                println!(
                    "python simhash insert {:.0}/s; query median {:.2} us p99 {:.2} us; crawldedup queries {:.0}x faster (median)",
                    v["inserts_per_s"].as_f64().unwrap_or(f64::NAN),
                    p_median,
                    v["p99_us"].as_f64().unwrap_or(f64::NAN),
                    p_median / (median.as_secs_f64() * 1e6)
                );
            }
            Err(problem) => println!("python simhash failed: {problem}"),
        }
    }
}
