//! Near-duplicate decisions on real main texts: all pairs, and edited copies.
//!
//! `cargo run --release --example eval_pairs -- ../shared/datasets/wcxb-dev [--cjk DIR]... [--html DIR]...`
//!
//! 1. **All pairs** of the distinct long (>= 500 characters) ground-truth main texts of the
//!    WCXB dev split (about 1.1 M pairs), and separately of texts in scripts without spaces
//!    (`--cjk DIR`: a folder of man pages, such as /usr/share/man/zh_CN and
//!    /usr/share/man/ja from Debian's manpages-zh and manpages-ja, read as plain prose):
//!    and of the main texts of HTML pages (`--html DIR`: every `.html` file under it, through
//!    the extractor, such as Debian's Korean LibreOffice help under
//!    /usr/share/libreoffice/help/ko): the simhash distance histogram and median, the share of pairs within k for k = 3 to
//!    10, the share that share a sketch band (the second candidate source), and the pairs
//!    the full decision (candidate, then sketch confirmation) calls near-duplicates. Pairs
//!    whose exact word 3-shingle Jaccard similarity is 0.5 or more are genuine
//!    near-duplicates: they are set aside and listed. Every other pair the decision accepts
//!    is a false near-duplicate; its rate per pair times n is the expected number of false
//!    matches of a unique page in an index of n pages.
//! 2. **Edited copies** of every text, long and short (openings under 400 characters):
//!    a changed date, an added sentence, one appended comment, a long appended comment
//!    thread, 2% and 5% of words replaced, another page template (both through the
//!    extractor), other boilerplate lines around the text. Recall of the full decision per
//!    kind, with the candidate source that found it.
//! 3. **Short texts**: the same all-pairs count on the openings, plus short pages made from
//!    one template with different names and prices; with `--cjk`, the man pages' openings
//!    of 300 characters too (about 80 words: long texts to the size rule).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crawldedup::fingerprint::{BANDS, Fingerprint, shingle_set, tiny_set};
use crawldedup::index::{Confirm, exact_similarity, tiny_likeness};

#[path = "pairs/edits.rs"]
mod edits;
#[path = "pairs/scripts.rs"]
mod scripts;
use edits::{opening, recall, templated_short_pages};
use scripts::{load_html, load_man, unspaced_pairs};

/// The default candidate radius (`dedup.max_distance`).
const K: u32 = 3;
const LONG_CHARS: usize = 500;

struct Doc {
    host: String,
    text: String,
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn load(dir: &Path) -> Result<Vec<Doc>, Box<dyn std::error::Error>> {
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("metadata.json"))?)?;
    let files = meta["files"].as_object().ok_or("metadata.json: no files")?;
    let mut docs = Vec::new();
    let mut ids: Vec<_> = files.keys().cloned().collect();
    ids.sort();
    for id in ids {
        let path: PathBuf = dir.join("dev/ground-truth").join(format!("{id}.json"));
        let gt: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
        let text = gt["ground_truth"]["main_content"]
            .as_str()
            .unwrap_or("")
            .to_string();
        if text.split_whitespace().count() < 20 {
            continue;
        }
        let url = files[&id]["url"].as_str().unwrap_or("");
        let host = url::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_default();
        docs.push(Doc { host, text });
    }
    Ok(docs)
}

/// The files under `dir`, at any depth, that `keep` keeps, sorted.
fn files_under(dir: &Path, keep: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if keep(&p) {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// What the index keeps of a text, for judging pairs without an index.
struct Item {
    fp: Fingerprint,
    set: Vec<u64>,
    tiny: Vec<u32>,
    bands: [u32; BANDS],
}

impl Item {
    fn of(text: &str) -> Item {
        let fp = Fingerprint::of(text);
        Item {
            bands: fp.sketch.band_keys(),
            set: shingle_set(text),
            tiny: tiny_set(text),
            fp,
        }
    }
}

/// Exact Jaccard similarity and containment (of the smaller set) of two sorted sets.
fn exact(a: &[u64], b: &[u64]) -> (f64, f64) {
    let s = exact_similarity(a, b);
    (s.resemblance, s.containment)
}

/// How the full decision treats a pair: (simhash candidate, band candidate, confirmed).
fn decide(policy: &Confirm, a: &Item, b: &Item) -> (bool, bool, bool) {
    let by_simhash = a.fp.simhash.distance(b.fp.simhash) <= K;
    let by_band = a.bands.iter().zip(&b.bands).any(|(x, y)| x == y);
    let exact_copy = a.fp.digest == b.fp.digest && a.fp.simhash == b.fp.simhash;
    // A tiny text is confirmed on whole shingle sets, as the index does.
    let exact = policy
        .by_exact_sets(&a.fp.sketch, &b.fp.sketch)
        .then(|| tiny_likeness(&a.tiny, &b.tiny));
    let (_, confirmed) = policy.judge(
        (&a.fp.sketch, a.fp.chars as u32),
        (&b.fp.sketch, b.fp.chars as u32),
        exact,
    );
    (
        by_simhash,
        by_band,
        exact_copy || ((by_simhash || by_band) && confirmed),
    )
}

/// All pairs of distinct texts: distances, candidates and false near-duplicates.
fn all_pairs(label: &str, texts: &[String], policy: &Confirm) {
    let mut items: Vec<Item> = Vec::new();
    let mut kept: Vec<&String> = Vec::new();
    let mut digests = std::collections::HashSet::new();
    for t in texts {
        let item = Item::of(t);
        if item.fp.tokens > 0 && digests.insert(item.fp.digest) {
            items.push(item);
            kept.push(t);
        }
    }
    let n = items.len();
    let pairs = n * (n - 1) / 2;
    let mut hist = [0u64; 65];
    let mut band_pairs = 0u64;
    let mut genuine = Vec::new();
    let mut false_near = Vec::new();
    let mut genuine_found = 0usize;
    for i in 0..n {
        for j in i + 1..n {
            let (a, b) = (&items[i], &items[j]);
            let d = a.fp.simhash.distance(b.fp.simhash);
            let (_, by_band, accepted) = decide(policy, a, b);
            let close = d <= 10 || by_band || a.fp.sketch.resemblance(&b.fp.sketch) >= 0.2;
            let (jaccard, containment) = if close {
                exact(&a.set, &b.set)
            } else {
                (0.0, 0.0)
            };
            if jaccard >= 0.5 {
                genuine.push((i, j, d, jaccard));
                genuine_found += usize::from(accepted);
                continue;
            }
            hist[d as usize] += 1;
            band_pairs += u64::from(by_band);
            if d <= K {
                println!(
                    "    within k, not genuine: {i} / {j}: distance {d}, exact Jaccard {jaccard:.3}, containment {containment:.3}; {:?} / {:?}",
                    kept[i].chars().take(80).collect::<String>(),
                    kept[j].chars().take(80).collect::<String>()
                );
            }
            if accepted {
                false_near.push((i, j, d, jaccard, containment));
            }
        }
    }
    let unrelated: u64 = hist.iter().sum();
    let median = {
        let mut seen = 0;
        let mut m = 0;
        for (d, &c) in hist.iter().enumerate() {
            seen += c;
            if seen * 2 >= unrelated {
                m = d;
                break;
            }
        }
        m
    };
    println!(
        "\n== all pairs, {label}: {n} distinct texts, {pairs} pairs; {} genuine near-duplicate pairs set aside (exact 3-shingle Jaccard >= 0.5), {unrelated} unrelated",
        genuine.len()
    );
    println!("  simhash distance of unrelated pairs: median {median} (independent: 32)");
    let line: Vec<String> = (0..=64)
        .step_by(4)
        .map(|d| {
            let c: u64 = hist[d..(d + 4).min(65)].iter().sum();
            format!("{d}-{}: {c}", (d + 3).min(64))
        })
        .collect();
    println!("  histogram {}", line.join(", "));
    for k in 3..=10 {
        let within: u64 = hist[..=k].iter().sum();
        println!(
            "  within k = {k:2}: {within:7} pairs, rate {:.2e} (independent fingerprints: {:.1e})",
            within as f64 / unrelated.max(1) as f64,
            binomial_tail(k as u32)
        );
    }
    let rate = false_near.len() as f64 / unrelated.max(1) as f64;
    println!(
        "  sharing a sketch band: {band_pairs} pairs, rate {:.2e}",
        band_pairs as f64 / unrelated.max(1) as f64
    );
    println!(
        "  called near-duplicates by the full decision: {} unrelated pairs, rate {rate:.2e} per pair (upper bound at zero: {:.1e}); expected false matches of a unique page: {:.3} at n = 1 M, {:.3} at n = 10 M",
        false_near.len(),
        3.0 / unrelated.max(1) as f64,
        rate * 1e6,
        rate * 1e7
    );
    let borderline = false_near.iter().filter(|f| f.3 >= 0.4).count();
    println!(
        "    of them {borderline} borderline (exact Jaccard 0.4 to 0.5), {} below 0.4",
        false_near.len() - borderline
    );
    for &(i, j, d, jac, con) in false_near.iter().filter(|f| f.3 < 0.4).take(10) {
        let (a, b) = (&items[i].fp.sketch, &items[j].fp.sketch);
        println!(
            "    false: {i} / {j}: distance {d}, exact Jaccard {jac:.3}, containment {con:.3}; estimated {:.3} and {:.3}, shingles {} and {} (exact {} and {})",
            a.resemblance(b),
            a.containment(b),
            a.shingles,
            b.shingles,
            items[i].set.len(),
            items[j].set.len()
        );
    }
    println!(
        "  genuine near-duplicate pairs found by the decision: {genuine_found} of {}",
        genuine.len()
    );
    for &(i, j, d, jac) in genuine.iter().take(40) {
        let head = |x: usize| texts_head(&items[x]);
        println!(
            "    genuine: {i} / {j}: distance {d}, Jaccard {jac:.3}  [{}] [{}]",
            head(i),
            head(j)
        );
    }
}

fn texts_head(item: &Item) -> String {
    format!("{} chars, {}", item.fp.chars, item.fp.digest)
        .chars()
        .take(30)
        .collect()
}

/// P(Binomial(64, 1/2) <= k): the share of independent fingerprints within k.
fn binomial_tail(k: u32) -> f64 {
    let mut sum = 0.0;
    let mut c = 1.0f64;
    for i in 0..=k {
        if i > 0 {
            c = c * f64::from(64 - i + 1) / f64::from(i);
        }
        sum += c;
    }
    sum / 2f64.powi(64)
}

fn print_quantiles(label: &str, values: &mut [f64]) {
    if values.is_empty() {
        return;
    }
    values.sort_by(f64::total_cmp);
    let q = |p: f64| values[((values.len() - 1) as f64 * p) as usize];
    println!(
        "{label}: p1 {:.3} p5 {:.3} p10 {:.3} median {:.3} p90 {:.3} p99 {:.3} p99.9 {:.3} max {:.3}",
        q(0.01),
        q(0.05),
        q(0.1),
        q(0.5),
        q(0.9),
        q(0.99),
        q(0.999),
        q(1.0)
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut dir = "../shared/datasets/wcxb-dev".to_string();
    let (mut cjk, mut html): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    while let Some(arg) = args.next() {
        if arg == "--cjk" {
            cjk.push(args.next().ok_or("--cjk needs a folder")?);
        } else if arg == "--html" {
            html.push(args.next().ok_or("--html needs a folder")?);
        } else {
            dir = arg;
        }
    }
    let policy = Confirm::default();
    let docs = load(Path::new(&dir))?;
    let vocab: Vec<String> = docs
        .iter()
        .flat_map(|d| d.text.split_whitespace().take(50))
        .filter(|w| w.len() > 3)
        .map(str::to_string)
        .collect();
    let long: Vec<String> = docs
        .iter()
        .filter(|d| d.text.chars().count() >= LONG_CHARS)
        .map(|d| d.text.clone())
        .collect();
    let hosts: std::collections::HashSet<&str> = docs.iter().map(|d| d.host.as_str()).collect();
    println!(
        "{} main texts from {dir} ({} hosts), {} of them long (>= {LONG_CHARS} characters); policy {policy:?}",
        docs.len(),
        hosts.len(),
        long.len()
    );
    all_pairs("long dev texts", &long, &policy);
    let shorts: Vec<String> = docs
        .iter()
        .map(|d| opening(&d.text, 400))
        .filter(|t| t.split(' ').count() >= 12)
        .collect();
    all_pairs("short openings (< 400 characters)", &shorts, &policy);
    templated_short_pages(&vocab, &policy);
    for folder in &cjk {
        let man: Vec<String> = load_man(Path::new(folder))
            .into_iter()
            .map(|d| d.text)
            .collect();
        unspaced_pairs(&format!("man pages under {folder}"), man, &policy);
    }
    for folder in &html {
        unspaced_pairs(
            &format!("extracted pages under {folder}"),
            load_html(Path::new(folder)),
            &policy,
        );
    }
    recall("long texts", &long, true, &vocab, &policy);
    recall("short openings", &shorts, false, &vocab, &policy);
    Ok(())
}
