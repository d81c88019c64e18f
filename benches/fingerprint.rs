//! Simhash throughput, MB of main text per second on one core, beside peers measured in the
//! same run: the `gaoya` crate's simhash (64-bit, SipHash features, over the same texts split
//! into lower-cased words) and, when `target/peers` exists (`scripts/peers.sh`), the Python
//! `simhash` package.
//!
//! Also the per-line profile of a page (`Blocks::of`, what host templates compare), which
//! the crawl computes beside the fingerprint.
//!
//! Last, `crawldedup simhash --text` on one 50 MB file against the library on the same text.
//!
//! `cargo bench --bench fingerprint`. Reads the WCXB dev ground-truth main texts when
//! `../shared/datasets/wcxb-dev` is present, else a generated text of the same size.

use std::hint::black_box;
use std::path::Path;

use crawldedup::Fingerprint;
use criterion::{Criterion, Throughput, criterion_group};

#[path = "peers/python.rs"]
mod peers;
#[path = "../examples/templates/wcxb.rs"]
mod wcxb;

/// The first 400 WCXB dev main texts in file-name order (the texts `fingerprint_pass`
/// counts instructions over), else generated text.
fn corpus() -> Vec<String> {
    let dataset = Path::new("../shared/datasets/wcxb-dev");
    let mut texts = Vec::new();
    if dataset.exists() {
        match wcxb::main_texts(dataset, 400) {
            Ok(read) => texts = read,
            Err(e) => eprintln!("fingerprint bench: {e:#}; generated text instead"),
        }
    }
    if texts.is_empty() {
        let words = [
            "the", "council", "approved", "budget", "after", "debate", "funding", "parks", "rises",
            "4%",
        ];
        let mut state = 7u64;
        texts = (0..400)
            .map(|_| {
                (0..700)
                    .map(|_| {
                        state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                        words[(state >> 60) as usize % words.len()]
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
    }
    texts
}

fn bench(c: &mut Criterion) {
    let texts = corpus();
    let bytes: usize = texts.iter().map(String::len).sum();
    let mut group = c.benchmark_group("fingerprint");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.sample_size(20);
    group.bench_function("simhash+digest", |b| {
        b.iter(|| {
            for t in &texts {
                black_box(Fingerprint::of(t));
            }
        })
    });
    group.bench_function("simhash_only", |b| {
        b.iter(|| {
            for t in &texts {
                black_box(crawldedup::fingerprint::simhash(t));
            }
        })
    });
    // The per-line profile a crawl stores beside each page (host templates).
    group.bench_function("line_profile", |b| {
        b.iter(|| {
            for t in &texts {
                black_box(crawldedup::fingerprint::blocks::Blocks::of(
                    "example.com",
                    t,
                ));
            }
        })
    });
    let gaoya = gaoya::simhash::SimHash::<gaoya::simhash::SimSipHasher64, u64, 64>::new(
        gaoya::simhash::SimSipHasher64::new(5, 6),
    );
    group.bench_function("gaoya_simhash", |b| {
        b.iter(|| {
            for t in &texts {
                black_box(gaoya.create_signature(t.split_whitespace().map(|w| w.to_lowercase())));
            }
        })
    });
    group.finish();
}

/// The Python package, timed by its own script on the same texts.
fn python_peer() {
    let Some(python) = peers::python() else {
        println!("python simhash: skipped (run scripts/peers.sh to measure it)");
        return;
    };
    let texts = corpus();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("texts.jsonl");
    let lines: Vec<String> = texts
        .iter()
        .map(|t| serde_json::to_string(t).unwrap())
        .collect();
    std::fs::write(&file, lines.join("\n")).unwrap();
    let start = std::time::Instant::now();
    for t in &texts {
        black_box(crawldedup::fingerprint::simhash(t));
    }
    let ours =
        texts.iter().map(String::len).sum::<usize>() as f64 / start.elapsed().as_secs_f64() / 1e6;
    match peers::simhash_peer(&python, &["fingerprint".as_ref(), file.as_os_str()]) {
        Ok(v) => {
            let theirs = v["mb_per_s"].as_f64().unwrap_or(f64::NAN);
            println!(
                "python simhash: {theirs:.2} MB/s; crawldedup simhash in the same run {ours:.1} MB/s ({:.0}x)",
                ours / theirs
            );
        }
        Err(problem) => println!("python simhash failed: {problem}"),
    }
}

/// `crawldedup simhash --text` on one large file (the corpus repeated to 50 MB), process
/// start and reading included, against the library's `simhash` on the same text in memory:
/// medians of three runs each, taking turns.
fn cli_against_library() {
    let texts = corpus();
    let joined = texts.join("\n\n");
    let mut big = String::with_capacity(51 << 20);
    while big.len() < 50 << 20 {
        big.push_str(&joined);
        big.push_str("\n\n");
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.txt");
    std::fs::write(&file, &big).unwrap();
    let (mut library, mut cli) = (Vec::new(), Vec::new());
    let mut printed = None;
    for _ in 0..3 {
        let start = std::time::Instant::now();
        let simhash = crawldedup::fingerprint::simhash(black_box(&big));
        library.push(start.elapsed().as_secs_f64());
        let start = std::time::Instant::now();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_crawldedup"))
            .args(["simhash", "--text"])
            .arg(&file)
            .output()
            .unwrap();
        cli.push(start.elapsed().as_secs_f64());
        let line = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(line.starts_with(&simhash.to_string()), "{line}");
        printed = Some(simhash);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let mb = big.len() as f64 / 1e6;
    let (library, cli) = (mb / median(&mut library), mb / median(&mut cli));
    println!(
        "simhash of one {mb:.0} MB text ({}): library {library:.1} MB/s, `crawldedup simhash --text` {cli:.1} MB/s ({:.2} of the library's rate)",
        printed.map(|s| s.to_string()).unwrap_or_default(),
        cli / library
    );
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    python_peer();
    cli_against_library();
}
