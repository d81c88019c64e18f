//! Canonicalize + check-and-insert, URLs per second on one core: crawldedup's Bloom filter
//! against a `HashSet<String>` of canonical URLs (the visited set spider and Scrapy keep),
//! and the bytes each spends per URL; and a page's host read for the template stage
//! (`host_of`) against a URL parse.
//!
//! `cargo bench --bench urls`

use std::collections::HashSet;
use std::hint::black_box;

use crawldedup::{Canonicalizer, SeenConfig, SeenUrls};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};

const URLS: usize = 200_000;

/// Links as a crawler finds them: several hosts, paths of varying depth, query strings
/// with tracking parameters, fragments, mixed case; about one in four is a variant of an
/// earlier URL.
fn corpus() -> Vec<String> {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..URLS)
        .map(|i| {
            let r = next();
            let id = if r % 4 == 0 {
                (r >> 8) % (i as u64 + 1)
            } else {
                i as u64
            };
            let host = [
                "news.example.com",
                "Shop.Example.org",
                "blog.example.net",
                "www.example.co.uk",
            ][(id % 4) as usize];
            let tail = match r >> 60 {
                0..=5 => format!("/articles/{}/{}/story-{id}.html", 2000 + id % 26, id % 12),
                6..=9 => format!("/search?q=item+{id}&page={}&utm_source=feed", id % 7),
                10..=12 => format!("/p/{id}?ref=home#reviews"),
                _ => format!("/a/./b/../c/{id}/index.html?b=2&a=1&fbclid=XYZ{id}"),
            };
            format!("https://{host}{tail}")
        })
        .collect()
}

fn report_memory(urls: &[String]) {
    let canon = Canonicalizer::default();
    let canonical: Vec<String> = urls
        .iter()
        .map(|u| canon.canonicalize(u).expect("corpus URLs are valid").into())
        .collect();
    let seen = SeenUrls::new(SeenConfig::new(URLS as u64, 0.01)).expect("valid sizing");
    let mut set: HashSet<String> = HashSet::new();
    for u in &canonical {
        seen.insert(u).expect("in memory");
        set.insert(u.clone());
    }
    let stats = seen.stats();
    let slot = std::mem::size_of::<String>() + 1; // one control byte per slot
    let set_bytes = set.capacity() * slot + set.iter().map(|s| s.capacity()).sum::<usize>();
    eprintln!(
        "memory: SeenUrls {:.2} bytes/URL ({} URLs, {} bytes, p < 0.01); HashSet<String> {:.2} bytes/URL ({} bytes); ratio {:.1}x",
        stats.bytes as f64 / stats.count as f64,
        stats.count,
        stats.bytes,
        set_bytes as f64 / set.len() as f64,
        set_bytes,
        set_bytes as f64 / stats.bytes as f64,
    );
}

fn bench(c: &mut Criterion) {
    let urls = corpus();
    report_memory(&urls);
    let canon = Canonicalizer::default();
    let canonical: Vec<String> = urls
        .iter()
        .map(|u| canon.canonicalize(u).expect("valid").into())
        .collect();

    let mut group = c.benchmark_group("urls");
    group.throughput(Throughput::Elements(URLS as u64));
    group.sample_size(10);

    group.bench_function("canonicalize", |b| {
        b.iter(|| {
            for u in &urls {
                black_box(canon.canonicalize(u).expect("valid"));
            }
        })
    });
    // A filter sized for the run, made fresh for every batch (outside the timing).
    let fresh_filter = || SeenUrls::new(SeenConfig::new(URLS as u64, 0.01)).expect("valid sizing");
    group.bench_function("canonicalize+seen_urls", |b| {
        b.iter_batched(
            fresh_filter,
            |seen| {
                for u in &urls {
                    let url = canon.canonicalize(u).expect("valid");
                    black_box(seen.insert(url.as_str()).expect("in memory"));
                }
                seen
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("canonicalize+hashset_string", |b| {
        b.iter_batched(
            HashSet::<String>::new,
            |mut set| {
                for u in &urls {
                    let url = canon.canonicalize(u).expect("valid");
                    black_box(set.insert(String::from(url)));
                }
                set
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("seen_urls_only", |b| {
        b.iter_batched(
            fresh_filter,
            |seen| {
                for u in &canonical {
                    black_box(seen.insert(u).expect("in memory"));
                }
                seen
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("hashset_string_only", |b| {
        b.iter_batched(
            HashSet::<String>::new,
            |mut set| {
                for u in &canonical {
                    black_box(set.insert(u.clone()));
                }
                set
            },
            BatchSize::LargeInput,
        )
    });
    // A page's host as the template stage reads it (up to three times a page), against
    // a parse of the URL for it, on the canonical URLs.
    group.bench_function("host_of", |b| {
        b.iter(|| {
            for u in &canonical {
                black_box(crawldedup::dedup::template::host_of(u));
            }
        })
    });
    group.bench_function("host_by_url_parse", |b| {
        b.iter(|| {
            for u in &canonical {
                let url = url::Url::parse(u).ok();
                black_box(url.and_then(|u| u.host_str().map(str::to_ascii_lowercase)));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
