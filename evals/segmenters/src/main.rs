//! Character bigrams or a real word segmenter for text written without spaces?
//!
//! crawldedup's fingerprint reads a run of Han, Kana or Hangul as overlapping character
//! bigrams (`crawldedup::fingerprint::tokens`), and shingles three tokens. This program
//! measures that against the words of a real segmenter, jieba-rs for Chinese and lindera
//! with the IPADIC dictionary for Japanese, on the same texts and by the same decision
//! (crawldedup's sketch and confirmation policy on each token stream's 3-shingles):
//!
//! 1. **all pairs** of distinct texts of 500 characters or more: how many pairs of
//!    unrelated texts each confirms (a false near-duplicate), and how many of the genuine
//!    near-duplicates among them (character 8-gram Jaccard >= 0.5, a measure that does not
//!    depend on either tokenizer);
//! 2. **edited copies** of every text: 2% and 5% of its CJK characters replaced, a sentence
//!    added, a sentence taken out; how many each confirms, and the exact resemblance;
//! 3. **speed**: characters tokenized a second, one thread.
//!
//! `cargo run --release -- --zh /usr/share/man/zh_CN --ja /usr/share/man/ja --ipadic
//! /usr/share/mecab/dic/ipadic` (Debian's manpages-zh, manpages-ja and mecab-ipadic).
//! lindera's own embedded IPADIC is downloaded when it builds, which a machine without the
//! internet cannot do; the dictionary is built here from Debian's IPADIC sources instead
//! (the same dictionary, 2.7.0-20070801).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crawldedup::fingerprint::{Sketch, mix_shingle, shingle_set};
use crawldedup::index::Confirm;
use unicode_normalization::UnicodeNormalization;

type Error = Box<dyn std::error::Error>;

/// Shingle length, in tokens (the fingerprint's).
const SHINGLE: usize = 3;
/// Texts shorter than this are left out of the all-pairs count (as in eval_pairs).
const LONG_CHARS: usize = 500;
/// Characters in the tokenizer-neutral measure of a genuine near-duplicate.
const GRAM: usize = 8;

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

/// The prose of the man pages under `dir` (gzip or plain roff), requests and font escapes
/// left out, one text a page.
fn man_texts(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    let escape = regex::Regex::new(r"\\f[A-Z1-4P]|\\\(..|\\[-&e|^ ]|\\s[-+]?\d").expect("regex");
    let mut texts = Vec::new();
    let mut seen = HashSet::new();
    for path in files {
        let Ok(raw) = std::fs::read(&path) else {
            continue;
        };
        let bytes = if raw.starts_with(&[0x1f, 0x8b]) {
            let mut out = Vec::new();
            use std::io::Read;
            if flate2::read::GzDecoder::new(&raw[..])
                .read_to_end(&mut out)
                .is_err()
            {
                continue;
            }
            out
        } else {
            raw
        };
        let Ok(roff) = String::from_utf8(bytes) else {
            continue;
        };
        if roff.starts_with(".so ") {
            continue;
        }
        let text: String = roff
            .lines()
            .filter(|l| !l.starts_with('.') && !l.starts_with('\''))
            .map(|l| escape.replace_all(l, "").into_owned())
            .collect::<Vec<_>>()
            .join("\n");
        if seen.insert(text.clone()) {
            texts.push(text);
        }
    }
    texts
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30ff | 0x3400..=0x4dbf | 0x4e00..=0x9fff | 0xf900..=0xfaff)
}

/// A token as the fingerprint would see a word: NFKC, lower case, digits as 0; `None` for
/// a token with no letter or digit (punctuation, spaces).
fn normal(token: &str) -> Option<String> {
    let out: String = token
        .nfkc()
        .flat_map(char::to_lowercase)
        .map(|c| if c.is_numeric() { '0' } else { c })
        .filter(|c| c.is_alphanumeric())
        .collect();
    (!out.is_empty()).then_some(out)
}

/// A tokenizer under test.
enum Tokenizer {
    /// crawldedup's own (the fingerprint's features, as they are).
    Bigrams,
    Jieba(Box<jieba_rs::Jieba>),
    Lindera(Box<lindera::segmenter::Segmenter>),
}

impl Tokenizer {
    fn name(&self) -> &'static str {
        match self {
            Tokenizer::Bigrams => "bigrams (crawldedup)",
            Tokenizer::Jieba(_) => "jieba-rs words",
            Tokenizer::Lindera(_) => "lindera IPADIC words",
        }
    }

    /// The distinct 3-shingle hashes of `text`, sorted.
    fn shingles(&self, text: &str) -> Vec<u64> {
        let words: Vec<String> = match self {
            Tokenizer::Bigrams => return shingle_set(text),
            Tokenizer::Jieba(jieba) => jieba
                .cut(text, true)
                .into_iter()
                .filter_map(|t| normal(t.word))
                .collect(),
            Tokenizer::Lindera(segmenter) => match segmenter.segment(text.into()) {
                Ok(tokens) => tokens.iter().filter_map(|t| normal(&t.surface)).collect(),
                Err(_) => Vec::new(),
            },
        };
        let hashes: Vec<u64> = words
            .iter()
            .map(|w| xxhash_rust::xxh3::xxh3_64(w.as_bytes()))
            .collect();
        let mut set: Vec<u64> = if hashes.len() < SHINGLE {
            vec![mix_shingle(&hashes)]
        } else {
            hashes.windows(SHINGLE).map(mix_shingle).collect()
        };
        set.sort_unstable();
        set.dedup();
        set
    }
}

/// What the decision reads of a text under one tokenizer.
struct Item {
    set: Vec<u64>,
    sketch: Sketch,
    chars: u32,
}

impl Item {
    fn of(tokenizer: &Tokenizer, text: &str) -> Item {
        let set = tokenizer.shingles(text);
        Item {
            sketch: Sketch::from_distinct(&set),
            chars: text.chars().filter(|c| !c.is_whitespace()).count() as u32,
            set,
        }
    }

    fn confirms(&self, other: &Item, policy: &Confirm) -> bool {
        policy
            .judge(
                (&self.sketch, self.chars),
                (&other.sketch, other.chars),
                None,
            )
            .1
    }
}

/// Exact Jaccard similarity of two sorted sets.
fn jaccard<T: Ord>(a: &[T], b: &[T]) -> f64 {
    let (mut i, mut j, mut both) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                both += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - both;
    if union == 0 {
        1.0
    } else {
        both as f64 / union as f64
    }
}

/// The text's character 8-grams (letters and digits only), hashed, sorted.
fn grams(text: &str) -> Vec<u64> {
    let chars: Vec<char> = text
        .nfkc()
        .flat_map(char::to_lowercase)
        .filter(|c| c.is_alphanumeric())
        .collect();
    let mut set: Vec<u64> = chars
        .windows(GRAM)
        .map(|w| xxhash_rust::xxh3::xxh3_64(w.iter().collect::<String>().as_bytes()))
        .collect();
    set.sort_unstable();
    set.dedup();
    set
}

/// Sentences of a text: split after 。！？ and at line ends.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        current.push(c);
        if matches!(c, '。' | '！' | '？' | '\n') {
            if current.trim().chars().count() >= 8 {
                out.push(std::mem::take(&mut current));
            } else {
                current.clear();
            }
        }
    }
    if current.trim().chars().count() >= 8 {
        out.push(current);
    }
    out
}

/// `text` with `share` of its CJK characters replaced by others from `pool`.
fn replace_chars(text: &str, share: f64, pool: &[char], rng: &mut Rng) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    let positions: Vec<usize> = (0..chars.len()).filter(|&i| is_cjk(chars[i])).collect();
    let n = ((positions.len() as f64 * share).round() as usize).max(1);
    for _ in 0..n {
        let at = positions[rng.below(positions.len())];
        chars[at] = pool[rng.below(pool.len())];
    }
    chars.into_iter().collect()
}

/// The edited copies of a text: (kind, copy).
fn copies(
    text: &str,
    others: &[String],
    pool: &[char],
    rng: &mut Rng,
) -> Vec<(&'static str, String)> {
    let mut out = vec![
        (
            "2% of characters replaced",
            replace_chars(text, 0.02, pool, rng),
        ),
        (
            "5% of characters replaced",
            replace_chars(text, 0.05, pool, rng),
        ),
    ];
    let own = sentences(text);
    let other = &others[rng.below(others.len())];
    let added = sentences(other);
    if own.len() >= 2 && !added.is_empty() {
        let at = rng.below(own.len());
        let mut with = own.clone();
        with.insert(at, added[rng.below(added.len())].clone());
        out.push(("a sentence added", with.concat()));
        let mut without = own.clone();
        without.remove(at);
        out.push(("a sentence taken out", without.concat()));
    }
    out
}

fn quantile(values: &mut [f64], q: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    values[((values.len() - 1) as f64 * q).round() as usize]
}

fn measure(label: &str, texts: &[String], tokenizers: &[Tokenizer]) {
    let policy = Confirm::default();
    let cjk_chars: usize = texts
        .iter()
        .map(|t| t.chars().filter(|&c| is_cjk(c)).count())
        .sum();
    let long: Vec<&String> = texts
        .iter()
        .filter(|t| t.chars().count() >= LONG_CHARS)
        .collect();
    println!(
        "\n== {label}: {} texts ({} of {LONG_CHARS}+ characters, {} pairs), {cjk_chars} CJK characters",
        texts.len(),
        long.len(),
        long.len() * long.len().saturating_sub(1) / 2
    );
    // Which pairs are genuine near-duplicates, by a measure neither tokenizer shapes.
    let gram_sets: Vec<Vec<u64>> = long.iter().map(|t| grams(t)).collect();
    let mut genuine = HashSet::new();
    for i in 0..long.len() {
        for j in i + 1..long.len() {
            if jaccard(&gram_sets[i], &gram_sets[j]) >= 0.5 {
                genuine.insert((i, j));
            }
        }
    }
    println!(
        "genuine near-duplicate pairs (character 8-gram Jaccard >= 0.5): {}",
        genuine.len()
    );
    let pool: Vec<char> = texts
        .iter()
        .flat_map(|t| t.chars())
        .filter(|&c| is_cjk(c))
        .collect();
    let everything: Vec<String> = texts.to_vec();
    for tokenizer in tokenizers {
        let started = Instant::now();
        let items: Vec<Item> = long.iter().map(|t| Item::of(tokenizer, t)).collect();
        let seconds = started.elapsed().as_secs_f64();
        let chars: usize = long.iter().map(|t| t.chars().count()).sum();
        let (mut false_pairs, mut genuine_found) = (0usize, 0usize);
        let mut unrelated = Vec::new();
        for i in 0..items.len() {
            for j in i + 1..items.len() {
                let confirmed = items[i].confirms(&items[j], &policy);
                if genuine.contains(&(i, j)) {
                    genuine_found += usize::from(confirmed);
                } else {
                    false_pairs += usize::from(confirmed);
                    unrelated.push(jaccard(&items[i].set, &items[j].set));
                }
            }
        }
        let pairs = unrelated.len();
        let p9999 = quantile(&mut unrelated, 0.9999);
        let max = unrelated.last().copied().unwrap_or(0.0);
        println!(
            "{:<22} tokenized {:.2} M characters/s; all pairs: {false_pairs} false of {pairs} ({:.2e} a pair), genuine found {genuine_found} of {}; unrelated pairs' resemblance: 99.99th percentile {p9999:.3}, max {max:.3}",
            tokenizer.name(),
            chars as f64 / seconds / 1e6,
            false_pairs as f64 / pairs.max(1) as f64,
            genuine.len(),
        );
        let mut rng = Rng(0x5eed_0f_c0_9e5);
        let mut kinds: Vec<(&str, usize, usize, Vec<f64>)> = Vec::new();
        for text in texts {
            let original = Item::of(tokenizer, text);
            for (kind, copy) in copies(text, &everything, &pool, &mut rng) {
                let item = Item::of(tokenizer, &copy);
                let at = match kinds.iter().position(|k| k.0 == kind) {
                    Some(at) => at,
                    None => {
                        kinds.push((kind, 0, 0, Vec::new()));
                        kinds.len() - 1
                    }
                };
                let entry = &mut kinds[at];
                entry.1 += 1;
                entry.2 += usize::from(item.confirms(&original, &policy));
                entry.3.push(jaccard(&item.set, &original.set));
            }
        }
        for (kind, n, found, mut resemblance) in kinds {
            let p01 = quantile(&mut resemblance, 0.01);
            let median = quantile(&mut resemblance, 0.5);
            println!(
                "{:<22}   {kind:<28} found {found} of {n} ({:.4}); exact resemblance median {median:.3}, 1st percentile {p01:.3}",
                "",
                found as f64 / n.max(1) as f64
            );
        }
    }
}

/// lindera's segmenter over IPADIC built from its MeCab sources in `sources` (EUC-JP CSV,
/// `matrix.def`, `char.def`, `unk.def`), into `target/ipadic` beside this crate.
fn lindera_ipadic(sources: &Path) -> Result<lindera::segmenter::Segmenter, Error> {
    use lindera::dictionary::{DictionaryBuilder, Metadata, load_fs_dictionary};
    let built = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/ipadic");
    if !built.join("metadata.json").exists() {
        // IPADIC's CSV columns, as MeCab's sources write them (in EUC-JP).
        let metadata: Metadata = serde_json::from_value(serde_json::json!({
            "name": "ipadic",
            "encoding": "EUC-JP",
            "default_word_cost": -10000,
            "default_left_context_id": 0,
            "default_right_context_id": 0,
            "default_field_value": "*",
            "flexible_csv": true,
            "skip_invalid_cost_or_id": false,
            "normalize_details": true,
            "dictionary_schema": {"fields": [
                "surface", "left_context_id", "right_context_id", "cost", "part_of_speech",
                "part_of_speech_subcategory_1", "part_of_speech_subcategory_2",
                "part_of_speech_subcategory_3", "conjugation_form", "conjugation_type",
                "base_form", "reading", "pronunciation"
            ]},
            "user_dictionary_schema": {"fields": ["surface", "part_of_speech", "reading"]}
        }))?;
        std::fs::create_dir_all(&built)?;
        DictionaryBuilder::new(metadata).build_dictionary(sources, &built)?;
    }
    let dictionary = load_fs_dictionary(&built)?;
    Ok(lindera::segmenter::Segmenter::new(
        lindera::mode::Mode::Normal,
        dictionary,
        None,
    ))
}

fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    let (mut zh, mut ja, mut ipadic) = (None, None, None);
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .map(PathBuf::from)
                .ok_or(format!("{arg} needs a folder"))
        };
        match arg.as_str() {
            "--zh" => zh = Some(value()?),
            "--ja" => ja = Some(value()?),
            "--ipadic" => ipadic = Some(value()?),
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    if let Some(dir) = zh {
        let texts = man_texts(&dir);
        let tokenizers = [
            Tokenizer::Bigrams,
            Tokenizer::Jieba(Box::new(jieba_rs::Jieba::new())),
        ];
        measure(&format!("Chinese ({})", dir.display()), &texts, &tokenizers);
    }
    if let Some(dir) = ja {
        let texts = man_texts(&dir);
        let mut tokenizers = vec![Tokenizer::Bigrams];
        match ipadic {
            Some(sources) => {
                tokenizers.push(Tokenizer::Lindera(Box::new(lindera_ipadic(&sources)?)))
            }
            None => println!("no --ipadic: Japanese is measured with bigrams only"),
        }
        measure(
            &format!("Japanese ({})", dir.display()),
            &texts,
            &tokenizers,
        );
    }
    Ok(())
}
