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

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crawldedup::fingerprint::simhash_with_shingle;

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
        let mut by_host: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, d) in docs.iter().enumerate() {
            by_host.entry(&d.host).or_default().push(i);
        }
        for members in by_host.values() {
            for (x, &i) in members.iter().enumerate() {
                for &j in &members[x + 1..] {
                    if docs[i].text != docs[j].text {
                        record_negative("same site", i, j);
                    }
                }
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
    Ok(())
}
