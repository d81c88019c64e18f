//! Simhash throughput, MB of main text per second on one core.
//!
//! `cargo bench --bench fingerprint`. Reads the WCXB dev ground-truth main texts when
//! `../shared/datasets/wcxb-dev` is present, else a generated text of the same size.

use std::hint::black_box;
use std::path::Path;

use crawldedup::Fingerprint;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn corpus() -> Vec<String> {
    let dir = Path::new("../shared/datasets/wcxb-dev/dev/ground-truth");
    let mut texts = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten().take(400) {
            let Ok(raw) = std::fs::read_to_string(entry.path()) else {
                continue;
            };
            let Ok(json) = serde_json::from_str::<serde_json::Value>(&raw) else {
                continue;
            };
            if let Some(text) = json["ground_truth"]["main_content"].as_str() {
                texts.push(text.to_string());
            }
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
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
