//! Scale benchmark of the near-duplicate decision: millions of distinct documents with
//! real word statistics, through the page stage, with known edited copies mixed in.
//!
//! ```text
//! cargo bench --bench scale                              # 1 M documents
//! cargo bench --bench scale -- 1000000 10000000          # 1 M and 10 M
//! cargo bench --bench scale -- 200000 --data DIR         # another WCXB-style folder
//! cargo bench --bench scale -- 10000000 --expected       # with dedup.expected_pages set
//! cargo bench --bench scale -- 10000000 --checkpoint-every 0  # one checkpoint, at the end
//! ```
//!
//! Documents are made by recombining sentences of the WCXB dev set's ground-truth main texts
//! (`../shared/datasets/wcxb-dev`): each takes 10 sentences drawn by a hash of its number from
//! the pool of distinct sentences (6 to 60 words, at most 12 bytes a word, so that a blob of
//! markup or data in a ground-truth text is no sentence), after a dated first line, so word statistics are those of
//! real articles while two documents share a sentence rarely (and two sentences almost
//! never). Every 200th document is followed by an edited copy of an earlier document (2% of
//! its words replaced, one sentence added, a comment appended, or its date changed), whose
//! original is known.
//!
//! Everything goes through `Dedup::check_fingerprinted` (the fingerprints are computed ahead
//! on every core, as a crawler's workers would), with a checkpoint every 5 s as a crawl
//! takes one (`--checkpoint-every SECS`; the checkpoints' time is in the loop's, and the
//! index writes its snapshots in the background after them). It prints: unique documents called
//! duplicates (false near-duplicates), copies found with the right original, insert rate of
//! the decision loop (and the share of its time spent in calls over 50 us: the stalls of
//! table growth and the like), latency of a decision without insert (`SimhashIndex::find`: candidates
//! from both sources, confirmation included; median and p99 over 20,000 new documents and
//! 20,000 copies), bytes per document on disk and in memory, and the time to reopen.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crawldedup::index::{DocRecord, IndexConfig, SimhashIndex};
use crawldedup::{Dedup, Fingerprint, PageVerdict};

mod support;
use support::dir_bytes;

const SENTENCES_PER_DOC: u64 = 10;
const COPY_EVERY: u64 = 200;
const PROBES: usize = 20_000;
const BATCH: usize = 8192;

/// Upper ends of the length classes the decision loop's slow calls are counted in (us).
const SLOW_BUCKETS_US: [u64; 4] = [200, 1_000, 10_000, 100_000];

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

struct Corpus {
    sentences: Vec<String>,
    words: Vec<String>,
}

impl Corpus {
    fn load(dir: &Path) -> Result<Corpus, Box<dyn std::error::Error>> {
        let mut seen = std::collections::HashSet::new();
        let mut sentences = Vec::new();
        let mut words = Vec::new();
        let truth = dir.join("dev/ground-truth");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&truth)
            .map_err(|e| format!("{}: {e}", truth.display()))?
            .flatten()
            .map(|e| e.path())
            .collect();
        files.sort();
        for path in files {
            let gt: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
            let text = gt["ground_truth"]["main_content"].as_str().unwrap_or("");
            for line in text.lines() {
                for s in line.split_inclusive(['.', '!', '?']) {
                    let s = s.trim();
                    let n = s.split_whitespace().count();
                    // A sentence is 6 to 60 words of prose; what the split leaves of markup or
                    // data in a few texts (a JSON blob of thousands of characters) is not.
                    let prose = s.len() <= 12 * n;
                    if (6..=60).contains(&n) && prose && seen.insert(s.to_string()) {
                        words.extend(s.split_whitespace().take(3).map(str::to_string));
                        sentences.push(s.to_string());
                    }
                }
            }
        }
        if sentences.len() < 1000 {
            return Err(
                format!("only {} sentences under {}", sentences.len(), dir.display()).into(),
            );
        }
        Ok(Corpus { sentences, words })
    }

    /// Document `i`: a dated line, then its sentences.
    fn doc(&self, i: u64) -> String {
        let mut out = format!("Published on day {} of month {}.", i % 28 + 1, i % 12 + 1);
        for j in 0..SENTENCES_PER_DOC {
            let s = &self.sentences[(mix(i * 64 + j) % self.sentences.len() as u64) as usize];
            out.push(' ');
            out.push_str(s);
        }
        out
    }

    /// An edited copy of document `i`, of kind `kind % 4`.
    fn copy(&self, i: u64, kind: u64) -> String {
        let text = self.doc(i);
        match kind % 4 {
            0 => {
                let mut words: Vec<&str> = text.split(' ').collect();
                let n = words.len().div_ceil(50);
                for r in 0..n as u64 {
                    let at = (mix(i ^ r << 40) % words.len() as u64) as usize;
                    words[at] = &self.words[(mix(i + r) % self.words.len() as u64) as usize];
                }
                words.join(" ")
            }
            1 => format!("{text} This paragraph was added in a later revision to clarify a point."),
            2 => format!("{text}\n\nComment from a reader: thank you, this was useful to me."),
            _ => text.replacen(
                "Published on day",
                "Updated on day 3, first published on day",
                1,
            ),
        }
    }
}

/// One item of the stream: a new document, or a copy of an earlier one.
#[derive(Clone, Copy)]
enum Item {
    New(u64),
    Copy { of: u64, kind: u64 },
}

fn stream(n: u64) -> impl Iterator<Item = Item> {
    (0..n).flat_map(|i| {
        let copy = (i > 0 && i % COPY_EVERY == 0).then(|| Item::Copy {
            of: mix(i) % i,
            kind: i / COPY_EVERY,
        });
        std::iter::once(Item::New(i)).chain(copy)
    })
}

fn fingerprint_all(corpus: &Corpus, items: &[Item]) -> Vec<(String, Fingerprint)> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = items.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|item| {
                            let text = match *item {
                                Item::New(i) => corpus.doc(i),
                                Item::Copy { of, kind } => corpus.copy(of, kind),
                            };
                            let fp = Fingerprint::of(&text);
                            (text, fp)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("fingerprint worker"))
            .collect()
    })
}

fn rss_bytes() -> u64 {
    support::status_kib("VmRSS") * 1024
}

fn quantiles(mut times: Vec<Duration>) -> (f64, f64) {
    times.sort();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    (
        us(times[times.len() / 2]),
        us(times[times.len() * 99 / 100]),
    )
}

fn run(
    corpus: &Corpus,
    n: u64,
    expect: bool,
    checkpoint_every: Duration,
) -> Result<(), Box<dyn std::error::Error>> {
    let state = support::scratch_dir()?;
    let items: Vec<Item> = stream(n).collect();
    let copies = items.len() as u64 - n;
    let expected = if expect { n + copies } else { 0 };
    let t = Instant::now();
    let dedup = Dedup::builder()
        .expected_urls(n)
        .expected_pages(expected)
        .open(state.path())?;
    let opened = t.elapsed();
    println!(
        "\n== {n} distinct documents and {copies} edited copies, through the page stage ({} sentences in the pool)",
        corpus.sentences.len()
    );
    if expect {
        println!(
            "  dedup.expected_pages = {expected}: the open made room for them in {:.2} s",
            opened.as_secs_f64()
        );
    }
    let (mut false_dups, mut found, mut wrong_original, mut missed) = (0u64, 0u64, 0u64, 0u64);
    let mut first_false: Vec<String> = Vec::new();
    let mut decide_time = Duration::ZERO;
    let mut fingerprint_time = Duration::ZERO;
    // Calls over 50 us: the stalls of a table's growth or a batch waiting for the writer.
    let (mut slow_calls, mut slow_time) = (0u64, Duration::ZERO);
    // The slow calls by length: under each of SLOW_BUCKETS_US, and the rest.
    let mut slow_by = [(0u64, Duration::ZERO); SLOW_BUCKETS_US.len() + 1];
    let mut text_bytes = 0u64;
    let mut next_report = 1_000_000u64.min(n);
    let mut done_new = 0u64;
    // The decision loop thread's page faults and context switches (voluntary: it waited
    // on a lock or the writer; involuntary: another thread took its core).
    let mut usage = [0u64; 3];
    // Checkpoints on the way (as a crawl's, on the clock) and the time they took.
    let (mut checkpoints, mut checkpoint_time) = (0u64, Duration::ZERO);
    let mut last_checkpoint = Instant::now();
    for batch in items.chunks(BATCH) {
        let t = Instant::now();
        let fps = fingerprint_all(corpus, batch);
        fingerprint_time += t.elapsed();
        let t = Instant::now();
        let before = support::thread_usage();
        for (item, (text, fp)) in batch.iter().zip(&fps) {
            text_bytes += text.len() as u64;
            let name = match *item {
                Item::New(i) => format!("doc/{i}"),
                Item::Copy { of, kind } => format!("copy/{of}/{kind}"),
            };
            let call = Instant::now();
            let verdict = dedup.check_fingerprinted(&name, text, fp)?;
            let took = call.elapsed();
            if took > Duration::from_micros(50) {
                slow_calls += 1;
                slow_time += took;
                let bucket = SLOW_BUCKETS_US
                    .iter()
                    .position(|&us| took < Duration::from_micros(us))
                    .unwrap_or(SLOW_BUCKETS_US.len());
                slow_by[bucket].0 += 1;
                slow_by[bucket].1 += took;
            }
            match (*item, &verdict) {
                (Item::New(_), PageVerdict::Unique { .. }) => done_new += 1,
                (Item::New(_), other) => {
                    done_new += 1;
                    false_dups += 1;
                    if first_false.len() < 5 {
                        first_false.push(format!("{name}: {other:?}"));
                        if std::env::var_os("SCALE_SHOW").is_some() {
                            if let Some(o) = other.original() {
                                let id: u64 =
                                    o.name.trim_start_matches("doc/").parse().unwrap_or(0);
                                println!("--- {name}\n{text}\n--- {}\n{}", o.name, corpus.doc(id));
                            }
                        }
                    }
                }
                (Item::Copy { of, .. }, PageVerdict::NearDuplicate { of: o, .. })
                | (Item::Copy { of, .. }, PageVerdict::ExactDuplicate { of: o }) => {
                    if o.name == format!("doc/{of}") {
                        found += 1;
                    } else {
                        wrong_original += 1;
                    }
                }
                (Item::Copy { .. }, _) => missed += 1,
            }
        }
        if !checkpoint_every.is_zero() && last_checkpoint.elapsed() >= checkpoint_every {
            let c = Instant::now();
            dedup.checkpoint()?;
            checkpoint_time += c.elapsed();
            checkpoints += 1;
            last_checkpoint = Instant::now();
        }
        decide_time += t.elapsed();
        for (sum, (after, before)) in usage
            .iter_mut()
            .zip(support::thread_usage().into_iter().zip(before))
        {
            *sum += after.saturating_sub(before);
        }
        if done_new >= next_report {
            println!(
                "  at {done_new:>9} documents: {false_dups} unique documents called duplicates, copies found {found}, wrong original {wrong_original}, missed {missed}; RSS {:.0} MiB",
                rss_bytes() as f64 / (1 << 20) as f64
            );
            next_report += 1_000_000;
        }
    }
    let t = Instant::now();
    dedup.checkpoint()?;
    let checkpoint = t.elapsed();
    let total = items.len() as f64;
    println!(
        "  unique documents called duplicates: {false_dups} of {n} ({:.2e}){}",
        false_dups as f64 / n as f64,
        if first_false.is_empty() {
            String::new()
        } else {
            format!("; first: {}", first_false.join(" | "))
        }
    );
    println!(
        "  edited copies: {found} of {copies} found with the right original (recall {:.4}), {wrong_original} with another, {missed} missed",
        found as f64 / copies.max(1) as f64
    );
    println!(
        "  decision loop: {:.0} documents/s (check-and-insert, batched writes, {checkpoints} checkpoints on the way in {:.2} s; the one after it took {:.2} s); fingerprints: {:.0} documents/s on {} cores ({:.0} MB/s of text)",
        total / decide_time.as_secs_f64(),
        checkpoint_time.as_secs_f64(),
        checkpoint.as_secs_f64(),
        total / fingerprint_time.as_secs_f64(),
        std::thread::available_parallelism().map_or(1, |c| c.get()),
        text_bytes as f64 / 1e6 / fingerprint_time.as_secs_f64()
    );
    println!(
        "  of the decision loop's time, {:.1}% in {slow_calls} calls over 50 us ({:.2} s)",
        100.0 * slow_time.as_secs_f64() / decide_time.as_secs_f64(),
        slow_time.as_secs_f64()
    );
    let mut lower = 50;
    let spread: Vec<String> = slow_by
        .iter()
        .enumerate()
        .map(|(i, (calls, time))| {
            let range = match SLOW_BUCKETS_US.get(i) {
                Some(&upper) => format!("{lower}-{upper} us"),
                None => format!("over {lower} us"),
            };
            lower = SLOW_BUCKETS_US.get(i).copied().unwrap_or(lower);
            format!("{range}: {calls} calls, {:.2} s", time.as_secs_f64())
        })
        .collect();
    println!("  the slow calls by length: {}", spread.join("; "));
    println!(
        "  the loop's thread: {} minor page faults, {} waits (voluntary switches), {} preemptions (involuntary)",
        usage[0], usage[1], usage[2]
    );
    let stats = dedup.stats();
    println!(
        "  snapshots written in the background: {}, the one in place of {} documents",
        stats.snapshots_written,
        stats
            .snapshot_documents
            .map_or_else(|| "no".to_string(), |d| d.to_string())
    );
    // A clean close writes the index's snapshot.
    let t = Instant::now();
    drop(dedup);
    let close = t.elapsed();

    // Decisions without insert, on the index reopened from disk.
    let index_dir = state.path().join(crawldedup::dedup::INDEX_DIR);
    let snapshot_file = index_dir.join(crawldedup::index::snapshot::SNAPSHOT_FILE);
    let snapshot_bytes = std::fs::metadata(&snapshot_file).map_or(0, |m| m.len());
    let disk = dir_bytes(&index_dir) - snapshot_bytes;
    let rss_before = rss_bytes();
    let config = IndexConfig::default().with_expected(n);
    let t = Instant::now();
    let index = SimhashIndex::open(&index_dir, config)?;
    let reopen = t.elapsed();
    let from_snapshot = index.opened_from_snapshot();
    let rss_index = rss_bytes().saturating_sub(rss_before);
    let probe = |items: Vec<Item>| -> Result<(Vec<Duration>, u64), Box<dyn std::error::Error>> {
        let fps = fingerprint_all(corpus, &items);
        let mut times = Vec::with_capacity(fps.len());
        let mut matched = 0;
        for (text, fp) in &fps {
            let record = DocRecord::new("probe", text, fp);
            let t = Instant::now();
            let decision = index.find(&record)?;
            times.push(t.elapsed());
            matched += u64::from(decision.is_some());
        }
        Ok((times, matched))
    };
    let (fresh_times, fresh_matched) = probe(
        (0..PROBES as u64)
            .map(|i| Item::New(n + 1_000_000 + i))
            .collect(),
    )?;
    let (copy_times, copy_matched) = probe(
        (0..PROBES as u64)
            .map(|i| Item::Copy {
                of: mix(i ^ 0xabc) % n,
                kind: i,
            })
            .collect(),
    )?;
    let (fm, fp99) = quantiles(fresh_times);
    let (cm, cp99) = quantiles(copy_times);
    println!(
        "  decision without insert (candidates from both sources, confirmation included): new documents median {fm:.2} us, p99 {fp99:.2} us ({fresh_matched} of {PROBES} matched); edited copies median {cm:.2} us, p99 {cp99:.2} us ({copy_matched} of {PROBES} matched)"
    );
    let tables = index.plan().tables.len();
    let memory = index.memory_bytes();
    drop(index);
    // After a crash there is no snapshot of the last state: the tables are rebuilt.
    let _ = std::fs::remove_file(&snapshot_file);
    let t = Instant::now();
    let rebuilt = SimhashIndex::open(&index_dir, config)?.with_snapshot_min_documents(u64::MAX);
    let rebuild = t.elapsed();
    drop(rebuilt);
    println!(
        "  reopen after a clean close {:.2} s (from the snapshot: {from_snapshot}; the close wrote it in {:.2} s, {:.0} bytes/document); after a crash (rebuilt from the database) {:.2} s",
        reopen.as_secs_f64(),
        close.as_secs_f64(),
        snapshot_bytes as f64 / total,
        rebuild.as_secs_f64()
    );
    println!(
        "  {tables} tables + {} band tables; {:.0} bytes/document in the database, {:.0} bytes/document in the index's memory ({:.0} by resident memory growth at the reopen); {} candidates refused in the run",
        crawldedup::fingerprint::BANDS,
        disk as f64 / total,
        memory as f64 / total,
        rss_index as f64 / total,
        stats.candidates_refused
    );
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut data = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/datasets/wcxb-dev"
    ));
    let mut sizes = Vec::new();
    let mut expect = false;
    let mut checkpoint_every = Duration::from_secs(5);
    while let Some(arg) = args.next() {
        if arg == "--data" {
            data = PathBuf::from(args.next().ok_or("--data needs a folder")?);
        } else if arg == "--expected" {
            expect = true;
        } else if arg == "--checkpoint-every" {
            let secs: f64 = args
                .next()
                .and_then(|s| s.parse().ok())
                .filter(|s: &f64| s.is_finite() && *s >= 0.0)
                .ok_or("--checkpoint-every needs seconds (0: only at the end)")?;
            checkpoint_every = Duration::from_secs_f64(secs);
        } else if let Ok(n) = arg.parse::<u64>() {
            sizes.push(n);
        }
    }
    if sizes.is_empty() {
        sizes.push(1_000_000);
    }
    let corpus = Corpus::load(&data)?;
    for n in sizes {
        run(&corpus, n, expect, checkpoint_every)?;
    }
    Ok(())
}
