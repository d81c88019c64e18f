//! Near-duplicate decisions on pairs built from real main texts.
//!
//! `cargo run --release --example eval_pairs -- ../shared/datasets/wcxb-dev`
//!
//! From every ground-truth main text of the WCXB dev split it builds edited copies (a
//! changed date, an added sentence, an appended comment, 1%, 3% and 5% of words replaced)
//! and pairs of different pages from one site and of one page type. It prints, for 1-, 2-
//! and 3-word shingles, the Hamming distance distribution of each kind of pair and the
//! precision and recall of "distance <= k" at k = 3, for long (>= 500 characters) and short
//! texts separately.
//!
//! Then the same long text under two different page templates (navigation, sidebar,
//! cookie notice, share buttons, footer), through the extractor: how often the extracted
//! texts are identical, and how often their fingerprints are within k.
//!
//! Then short texts: the opening of every text cut to under 500 characters, edited the same
//! ways, against openings of other pages from one site, of one type, and short pages made
//! from one template with different names and prices. It prints precision and recall of
//! "distance <= k" without and with the MinHash confirmation (estimated Jaccard of word
//! pairs >= the threshold that `Dedup` uses).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crawldedup::dedup::SHORT_TEXT_MIN_JACCARD;
use crawldedup::fingerprint::{Sketch, simhash, simhash_with_shingle};

const K: u32 = 3;
const SHORT_CHARS: usize = 500;

struct Doc {
    host: String,
    page_type: String,
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
        let page_type = files[&id]["page_type"].as_str().unwrap_or("").to_string();
        docs.push(Doc {
            host,
            page_type,
            text,
        });
    }
    Ok(docs)
}

/// Every pair of documents from one host (by index).
fn same_site_pairs(docs: &[Doc]) -> Vec<(usize, usize)> {
    let mut by_host: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, d) in docs.iter().enumerate() {
        by_host.entry(&d.host).or_default().push(i);
    }
    let mut pairs = Vec::new();
    for members in by_host.values() {
        for (x, &i) in members.iter().enumerate() {
            for &j in &members[x + 1..] {
                pairs.push((i, j));
            }
        }
    }
    pairs.sort_unstable();
    pairs
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

#[derive(Default)]
struct Tally {
    distances: Vec<u32>,
}

impl Tally {
    fn within(&self) -> usize {
        self.distances.iter().filter(|&&d| d <= K).count()
    }
    fn summary(&mut self) -> String {
        if self.distances.is_empty() {
            return "no pairs".into();
        }
        self.distances.sort_unstable();
        let q = |p: f64| self.distances[((self.distances.len() - 1) as f64 * p) as usize];
        let mut hist = [0usize; 6];
        for &d in &self.distances {
            hist[(d as usize / 2).min(5)] += 1;
        }
        format!(
            "n={:5} <=k: {:5.1}%  p10 {:2} median {:2} p90 {:2}  hist[0-1,2-3,4-5,6-7,8-9,10+] {:?}",
            self.distances.len(),
            100.0 * self.within() as f64 / self.distances.len() as f64,
            q(0.1),
            q(0.5),
            q(0.9),
            hist
        )
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "../shared/datasets/wcxb-dev".into());
    let docs = load(Path::new(&dir))?;
    let vocab: Vec<String> = docs
        .iter()
        .flat_map(|d| d.text.split_whitespace().take(50))
        .filter(|w| w.len() > 3)
        .map(str::to_string)
        .collect();
    println!("{} main texts from {dir}", docs.len());

    let kinds = [
        "date", "sentence", "comment", "words1%", "words3%", "words5%",
    ];
    for shingle in 1..=3 {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut positives: HashMap<(&str, bool), Tally> = HashMap::new();
        let mut negatives: HashMap<(&str, bool), Tally> = HashMap::new();
        let fp = |t: &str| simhash_with_shingle(t, shingle);
        let hashes: Vec<_> = docs.iter().map(|d| fp(&d.text)).collect();
        for (doc, &base) in docs.iter().zip(&hashes) {
            let short = doc.text.chars().count() < SHORT_CHARS;
            let variants = [
                (
                    format!("Posted on 12 May 2024\n\n{}", doc.text),
                    format!("Posted on 3 June 2025\n\n{}", doc.text),
                ),
                (doc.text.clone(), insert_sentence(&doc.text, &mut rng)),
                (
                    doc.text.clone(),
                    format!(
                        "{}\n\nComment from Sam: thanks, this was really helpful!",
                        doc.text
                    ),
                ),
                (
                    doc.text.clone(),
                    replace_words(&doc.text, 0.01, &vocab, &mut rng),
                ),
                (
                    doc.text.clone(),
                    replace_words(&doc.text, 0.03, &vocab, &mut rng),
                ),
                (
                    doc.text.clone(),
                    replace_words(&doc.text, 0.05, &vocab, &mut rng),
                ),
            ];
            for (kind, (a, b)) in kinds.iter().zip(variants) {
                let ha = if a == doc.text { base } else { fp(&a) };
                positives
                    .entry((kind, short))
                    .or_default()
                    .distances
                    .push(ha.distance(fp(&b)));
            }
        }
        let chars: Vec<usize> = docs.iter().map(|d| d.text.chars().count()).collect();
        let mut record_negative = |kind: &'static str, i: usize, j: usize| {
            let short = chars[i].min(chars[j]) < SHORT_CHARS;
            negatives
                .entry((kind, short))
                .or_default()
                .distances
                .push(hashes[i].distance(hashes[j]));
        };
        for (i, j) in same_site_pairs(docs.as_slice()) {
            if docs[i].text != docs[j].text {
                record_negative("same site", i, j);
            }
        }
        for _ in 0..20_000 {
            let (i, j) = (rng.below(docs.len()), rng.below(docs.len()));
            if i != j && docs[i].page_type == docs[j].page_type && docs[i].text != docs[j].text {
                record_negative("same type", i, j);
            }
        }

        println!("\n== {shingle}-word shingles");
        for short in [false, true] {
            let label = if short { "short" } else { "long" };
            let (mut tp, mut pos, mut fp_pairs, mut neg) = (0, 0, 0, 0);
            for kind in kinds {
                if let Some(t) = positives.get_mut(&(kind, short)) {
                    tp += t.within();
                    pos += t.distances.len();
                    println!("  {label:5} same text, {kind:9} {}", t.summary());
                }
            }
            for kind in ["same site", "same type"] {
                if let Some(t) = negatives.get_mut(&(kind, short)) {
                    fp_pairs += t.within();
                    neg += t.distances.len();
                    println!("  {label:5} different, {kind:9} {}", t.summary());
                }
            }
            let precision = tp as f64 / (tp + fp_pairs).max(1) as f64;
            let recall = tp as f64 / pos.max(1) as f64;
            println!(
                "  {label:5} k={K}: precision {precision:.4} recall {recall:.4} ({tp}/{pos} positives, {fp_pairs}/{neg} different pairs within k)"
            );
        }
    }
    templates(&docs);
    short_texts(&docs, &vocab);
    Ok(())
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The same main text under two different page templates, through the extractor: how far
/// apart are the fingerprints of what is extracted?
fn templates(docs: &[Doc]) {
    let mut exact = 0;
    let mut within = 0;
    let mut total = 0;
    let mut distances = Vec::new();
    for (i, doc) in docs.iter().enumerate() {
        if doc.text.chars().count() < SHORT_CHARS {
            continue;
        }
        let paragraphs: Vec<String> = doc
            .text
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
        let ta = crawldedup::content::extract(&a, None).text;
        let tb = crawldedup::content::extract(&b, None).text;
        let fa = crawldedup::Fingerprint::of(&ta);
        let fb = crawldedup::Fingerprint::of(&tb);
        total += 1;
        if fa.digest == fb.digest {
            exact += 1;
        }
        let d = fa.simhash.distance(fb.simhash);
        distances.push(d);
        if d <= K {
            within += 1;
        }
    }
    distances.sort_unstable();
    println!(
        "\n== the same long text under two page templates, through the extractor: {total} pairs\n  \
         identical extracted text {exact} ({:.1}%), simhash within k {within} (recall {:.4}), median distance {}, p99 {}",
        100.0 * exact as f64 / total.max(1) as f64,
        within as f64 / total.max(1) as f64,
        distances.get(distances.len() / 2).copied().unwrap_or(0),
        distances
            .get(distances.len() * 99 / 100)
            .copied()
            .unwrap_or(0),
    );
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

/// Short-text pairs: simhash alone, and simhash confirmed by the sketch.
fn short_texts(docs: &[Doc], vocab: &[String]) {
    let mut rng = Rng(0x5eed_0000_0000_0001);
    let shorts: Vec<String> = docs.iter().map(|d| opening(&d.text, 400)).collect();
    let mut positives: Vec<(String, String)> = Vec::new();
    for text in &shorts {
        if text.split(' ').count() < 12 {
            continue;
        }
        positives.push((
            format!("Posted on 12 May 2024\n\n{text}"),
            format!("Posted on 3 June 2025\n\n{text}"),
        ));
        positives.push((text.clone(), insert_sentence(text, &mut rng)));
        positives.push((text.clone(), replace_words(text, 0.03, vocab, &mut rng)));
        positives.push((text.clone(), replace_words(text, 0.05, vocab, &mut rng)));
    }
    let mut negatives: Vec<(String, String)> = Vec::new();
    for (i, j) in same_site_pairs(docs) {
        if shorts[i] != shorts[j] {
            negatives.push((shorts[i].clone(), shorts[j].clone()));
        }
    }
    for _ in 0..20_000 {
        let (i, j) = (rng.below(docs.len()), rng.below(docs.len()));
        if i != j && docs[i].page_type == docs[j].page_type && shorts[i] != shorts[j] {
            negatives.push((shorts[i].clone(), shorts[j].clone()));
        }
    }
    let templates = [
        "{name}\n\n{price} EUR\n\nIn stock. Ships within two working days. Free returns for 30 days on every order, and a two-year warranty on all items.",
        "{name} - {price} points\n\nPosted by a member of the community. Log in to reply or to follow this thread and get an email when someone answers.",
        "Event: {name}\n\nTickets from {price} dollars. Doors open at seven, the show starts at eight. Age 18 and over. No refunds after purchase.",
    ];
    for template in templates {
        for _ in 0..300 {
            let fill = |rng: &mut Rng| {
                let name = (0..3)
                    .map(|_| vocab[rng.below(vocab.len())].as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
                template
                    .replace("{name}", &name)
                    .replace("{price}", &(10 + rng.below(490)).to_string())
            };
            negatives.push((fill(&mut rng), fill(&mut rng)));
        }
    }
    let judge = |pairs: &[(String, String)]| -> (usize, usize, Vec<f64>) {
        let mut within = 0;
        let mut confirmed = 0;
        let mut jaccards = Vec::new();
        for (a, b) in pairs {
            if simhash(a).distance(simhash(b)) <= K {
                within += 1;
                let j = Sketch::of(a).jaccard(&Sketch::of(b));
                jaccards.push(j);
                if j >= SHORT_TEXT_MIN_JACCARD {
                    confirmed += 1;
                }
            }
        }
        (within, confirmed, jaccards)
    };
    let (tp, tp_confirmed, mut tp_jaccards) = judge(&positives);
    tp_jaccards.sort_by(f64::total_cmp);
    let (fp, fp_confirmed, fp_jaccards) = judge(&negatives);
    println!(
        "\n== short texts (openings under 400 characters): {} edited pairs, {} different pairs",
        positives.len(),
        negatives.len()
    );
    let report = |label: &str, tp: usize, fp: usize| {
        println!(
            "  {label:28} precision {:.4} recall {:.4} ({tp} edited and {fp} different pairs called near-duplicates)",
            tp as f64 / (tp + fp).max(1) as f64,
            tp as f64 / positives.len().max(1) as f64,
        );
    };
    report("simhash within k", tp, fp);
    report(
        &format!("confirmed, Jaccard >= {SHORT_TEXT_MIN_JACCARD}"),
        tp_confirmed,
        fp_confirmed,
    );
    if !tp_jaccards.is_empty() {
        let q = |p: f64| tp_jaccards[((tp_jaccards.len() - 1) as f64 * p) as usize];
        println!(
            "  edited pairs within k: estimated Jaccard p1 {:.2}, p5 {:.2}, p10 {:.2}, median {:.2}",
            q(0.01),
            q(0.05),
            q(0.1),
            q(0.5)
        );
    }
    let mut sorted = fp_jaccards;
    sorted.sort_by(f64::total_cmp);
    if !sorted.is_empty() {
        println!(
            "  different pairs within k: estimated Jaccard median {:.2}, max {:.2}",
            sorted[sorted.len() / 2],
            sorted[sorted.len() - 1]
        );
    }
}
