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

#[path = "pairs/scripts.rs"]
mod scripts;
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

fn replace_words(text: &str, fraction: f64, vocab: &[String], rng: &mut Rng) -> String {
    let mut words: Vec<String> = text.split(' ').map(str::to_string).collect();
    let n = ((words.len() as f64) * fraction).ceil() as usize;
    for _ in 0..n {
        let i = rng.below(words.len());
        words[i] = vocab[rng.below(vocab.len())].clone();
    }
    words.join(" ")
}

fn insert_sentence(text: &str, rng: &mut Rng) -> String {
    let paragraphs: Vec<&str> = text.split("\n\n").collect();
    let at = rng.below(paragraphs.len() + 1);
    let mut out: Vec<&str> = paragraphs[..at].to_vec();
    out.push("This paragraph was added in a later revision to clarify one point for readers.");
    out.extend_from_slice(&paragraphs[at..]);
    out.join("\n\n")
}

/// A comment thread as long as `words` words, made of sentences of other texts.
fn thread(words: usize, pool: &[String], rng: &mut Rng) -> String {
    let mut out = String::from("\n\n42 comments");
    let mut count = 0;
    while count < words {
        let s = &pool[rng.below(pool.len())];
        out.push_str(&format!("\n\nReader {} wrote: {s}", rng.below(1000)));
        count += s.split_whitespace().count() + 2;
    }
    out
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The text under two page templates, through the extractor.
fn templated(text: &str, i: usize) -> (String, String) {
    let paragraphs: Vec<String> = text
        .split("\n\n")
        .map(|p| escape(p.trim()))
        .filter(|p| !p.is_empty())
        .collect();
    let a = format!(
        "<html><head><title>Page {i} | Site A</title></head><body>\
         <header><a href=/>Site A</a><nav><ul><li><a href=/news>News</a></li><li><a href=/about>About us</a></li><li><a href=/contact>Contact</a></li></ul></nav></header>\
         <main><article>{}</article></main>\
         <aside class=sidebar><h3>Popular this week</h3><ul><li><a href=/p1>Ten ways to save on energy bills this winter</a></li><li><a href=/p2>Why the harbour wall keeps failing</a></li></ul></aside>\
         <footer><p>Copyright 2025 Site A Media Ltd. All rights reserved.</p><a href=/privacy>Privacy policy</a></footer></body></html>",
        paragraphs
            .iter()
            .map(|p| format!("<p>{p}</p>"))
            .collect::<String>()
    );
    let b = format!(
        "<html><body><div id=wrapper><div class=top-menu><a href=/x>Home</a> | <a href=/y>Archive</a> | <a href=/z>Shop</a> | <a href=/w>Newsletter</a></div>\
         <div id=cookie-notice>This website uses cookies to give you the best experience. Accept?</div>\
         <div class=content><div class=post-body>{}</div>\
         <div class=share-buttons><a href=/s1>Share on social</a> <a href=/s2>Email this</a></div>\
         <div class=related-posts><h4>You may also like</h4><a href=/r1>Our guide to the best hiking trails in the north</a></div></div>\
         <div class=site-footer>Site B is published by B Publishing Group, registered in Ireland.</div></div></body></html>",
        paragraphs
            .iter()
            .map(|p| format!("<div class=para>{p}</div>"))
            .collect::<String>()
    );
    (
        crawldedup::content::extract(&a, None).text,
        crawldedup::content::extract(&b, None).text,
    )
}

/// The opening of a text, cut at a word boundary to fewer than `max` characters.
fn opening(text: &str, max: usize) -> String {
    let mut out = String::new();
    for word in text.split(' ') {
        if out.chars().count() + word.chars().count() + 1 >= max {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

const KINDS: [&str; 9] = [
    "date", "sentence", "comment", "thread", "words2%", "words5%", "template", "boiler", "words1%",
];

/// The edited copies of one text, by kind (the thread and template kinds only for long
/// texts).
fn edits(
    text: &str,
    i: usize,
    long: bool,
    vocab: &[String],
    pool: &[String],
    rng: &mut Rng,
) -> Vec<(&'static str, String, String)> {
    let mut out = vec![
        (
            "date",
            format!("Posted on 12 May 2024\n\n{text}"),
            format!("Posted on 3 June 2025, updated 4 June 2025\n\n{text}"),
        ),
        ("sentence", text.to_string(), insert_sentence(text, rng)),
        (
            "comment",
            text.to_string(),
            format!("{text}\n\nComment from Sam: thanks, this was really helpful!"),
        ),
        (
            "words1%",
            text.to_string(),
            replace_words(text, 0.01, vocab, rng),
        ),
        (
            "words2%",
            text.to_string(),
            replace_words(text, 0.02, vocab, rng),
        ),
        (
            "words5%",
            text.to_string(),
            replace_words(text, 0.05, vocab, rng),
        ),
        (
            "boiler",
            format!(
                "Share this article\n\n{text}\n\nSubscribe to our newsletter for more stories like this one."
            ),
            format!(
                "Home > News > Local\n\n{text}\n\nRead more: our coverage of the week in review. Follow us for updates."
            ),
        ),
    ];
    if long {
        let words = text.split_whitespace().count();
        out.push((
            "thread",
            text.to_string(),
            format!("{text}{}", thread(words, pool, rng)),
        ));
        let (a, b) = templated(text, i);
        out.push(("template", a, b));
    }
    out
}

#[derive(Default, Clone, Copy)]
struct Recall {
    pairs: usize,
    found: usize,
    by_simhash: usize,
    by_band: usize,
}

fn recall(label: &str, texts: &[String], long: bool, vocab: &[String], policy: &Confirm) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let pool: Vec<String> = texts
        .iter()
        .flat_map(|t| t.split(". ").map(str::to_string).take(3))
        .filter(|s| s.split_whitespace().count() > 5)
        .collect();
    let mut by_kind: HashMap<&str, Recall> = HashMap::new();
    let mut missed: Vec<(&str, f64)> = Vec::new();
    let mut est: HashMap<&str, Vec<f64>> = HashMap::new();
    for (i, text) in texts.iter().enumerate() {
        for (kind, a, b) in edits(text, i, long, vocab, &pool, &mut rng) {
            let (ia, ib) = (Item::of(&a), Item::of(&b));
            let (s, band, accepted) = decide(policy, &ia, &ib);
            let r = by_kind.entry(kind).or_default();
            r.pairs += 1;
            r.found += usize::from(accepted);
            r.by_simhash += usize::from(s);
            r.by_band += usize::from(band);
            if band || s {
                est.entry(kind)
                    .or_default()
                    .push(ia.fp.sketch.resemblance(&ib.fp.sketch));
            }
            if !accepted && missed.len() < 12 {
                missed.push((kind, exact(&ia.set, &ib.set).0));
            }
        }
    }
    println!("\n== edited copies, {label}: recall of the full decision per kind");
    let (mut all_pairs, mut all_found) = (0, 0);
    for kind in KINDS {
        if let Some(r) = by_kind.get(kind) {
            all_pairs += r.pairs;
            all_found += r.found;
            println!(
                "  {kind:9} {:5} pairs  recall {:.4}  (simhash within {K}: {:.4}, sharing a band: {:.4})",
                r.pairs,
                r.found as f64 / r.pairs as f64,
                r.by_simhash as f64 / r.pairs as f64,
                r.by_band as f64 / r.pairs as f64,
            );
        }
    }
    println!(
        "  all kinds: recall {:.4} ({all_found} of {all_pairs})",
        all_found as f64 / all_pairs.max(1) as f64
    );
    for kind in KINDS {
        if let Some(v) = est.get_mut(kind) {
            print_quantiles(
                &format!("    {kind:9} estimated resemblance of candidates"),
                v,
            );
        }
    }
    for (kind, j) in missed {
        println!("    missed: {kind}, exact Jaccard {j:.3}");
    }
}

/// Short pages made from one template with different names and prices: all must stay
/// apart.
fn templated_short_pages(vocab: &[String], policy: &Confirm) {
    let templates = [
        "{name}\n\n{price} EUR\n\nIn stock. Ships within two working days. Free returns for 30 days on every order, and a two-year warranty on all items.",
        "{name} - {price} points\n\nPosted by a member of the community. Log in to reply or to follow this thread and get an email when someone answers.",
        "Event: {name}\n\nTickets from {price} dollars. Doors open at seven, the show starts at eight. Age 18 and over. No refunds after purchase.",
    ];
    templated_pages("", &templates, policy, |rng| {
        (0..3)
            .map(|_| vocab[rng.below(vocab.len())].as_str())
            .collect::<Vec<_>>()
            .join(" ")
    });
}

/// 200 pages of each template, `{name}` and `{price}` filled in, and all their pairs.
fn templated_pages(
    label: &str,
    templates: &[&str],
    policy: &Confirm,
    mut name: impl FnMut(&mut Rng) -> String,
) {
    let mut rng = Rng(0x5eed_0000_0000_0001);
    let mut pairs = 0;
    let mut accepted = 0;
    let mut resemblances = Vec::new();
    let mut tiny = 0;
    let mut pages_made = 0;
    for template in templates {
        let pages: Vec<Item> = (0..200)
            .map(|_| {
                let name = name(&mut rng);
                Item::of(
                    &template
                        .replace("{name}", &name)
                        .replace("{price}", &(10 + rng.below(490)).to_string()),
                )
            })
            .collect();
        tiny += pages
            .iter()
            .filter(|p| policy.is_tiny(&p.fp.sketch))
            .count();
        pages_made += pages.len();
        for i in 0..pages.len() {
            for j in i + 1..pages.len() {
                if pages[i].fp.digest != pages[j].fp.digest {
                    pairs += 1;
                    accepted += usize::from(decide(policy, &pages[i], &pages[j]).2);
                    resemblances.push(pages[i].fp.sketch.resemblance(&pages[j].fp.sketch));
                }
            }
        }
    }
    println!(
        "\n== short pages from one template{label}, different names and prices: {accepted} of {pairs} pairs called near-duplicates ({tiny} of {pages_made} pages tiny)"
    );
    print_quantiles("  their estimated resemblance", &mut resemblances);
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
