//! Evaluates main-content extraction on the boilerplate development set
//! (`../shared/datasets/trafilatura-eval-dev`: 487 news, magazine and blog pages, each with
//! snippets its main content must contain and boilerplate snippets it must not), with the
//! set's own metric: precision, recall, F1 and accuracy over all snippets, overall and per
//! declared language; with `--peer PYTHON`, trafilatura on the same pages in the same run,
//! scored by the same code.
//!
//! ```text
//! cargo run --release --example eval_boilerplate -- ../shared/datasets/trafilatura-eval-dev [--peer target/peers/bin/python] [--leaks N] [--misses N]
//! ```
//!
//! `--leaks N` lists N boilerplate snippets that the extraction kept, with their pages;
//! `--misses N` lists N main-text snippets that it left out;
//! `--dump FOLDER` writes each page's extracted text to `FOLDER/extracted.jsonl`.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// One page: its URL, its bytes, and its snippets (whitespace-normalised).
struct Case {
    url: String,
    bytes: Vec<u8>,
    with: Vec<String>,
    without: Vec<String>,
}

/// Snippet counts.
#[derive(Default, Clone, Copy)]
struct Tally {
    tp: usize,
    fn_: usize,
    fp: usize,
    tn: usize,
}

impl Tally {
    fn add(&mut self, other: Tally) {
        self.tp += other.tp;
        self.fn_ += other.fn_;
        self.fp += other.fp;
        self.tn += other.tn;
    }

    fn line(&self) -> String {
        let p = self.tp as f64 / (self.tp + self.fp).max(1) as f64;
        let r = self.tp as f64 / (self.tp + self.fn_).max(1) as f64;
        let f1 = if p + r > 0.0 {
            2.0 * p * r / (p + r)
        } else {
            0.0
        };
        let all = (self.tp + self.fn_ + self.fp + self.tn).max(1) as f64;
        format!(
            "P {p:.3}  R {r:.3}  F1 {f1:.3}  accuracy {:.3}",
            (self.tp + self.tn) as f64 / all
        )
    }
}

fn normalise(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A page's tally, the `without` snippets it kept, and the `with` snippets it missed.
fn score(case: &Case, text: &str) -> (Tally, Vec<String>, Vec<String>) {
    let text = normalise(text);
    let mut tally = Tally::default();
    let mut leaks = Vec::new();
    let mut misses = Vec::new();
    for snippet in &case.with {
        if text.contains(snippet.as_str()) {
            tally.tp += 1;
        } else {
            tally.fn_ += 1;
            misses.push(snippet.clone());
        }
    }
    for snippet in &case.without {
        if text.contains(snippet.as_str()) {
            tally.fp += 1;
            leaks.push(snippet.clone());
        } else {
            tally.tn += 1;
        }
    }
    (tally, leaks, misses)
}

fn load(dataset: &Path) -> Result<Vec<Case>> {
    let pages: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dataset.join("evaldata.json"))?)?;
    let pages = pages
        .as_object()
        .context("evaldata.json is not an object")?;
    let mut urls: Vec<&String> = pages.keys().collect();
    urls.sort();
    let mut cases = Vec::new();
    for url in urls {
        let info = &pages[url];
        let file = info["file"].as_str().unwrap_or("");
        let gz = std::fs::read(dataset.join(format!("html/{file}.gz")))
            .with_context(|| format!("{file}.gz"))?;
        let mut bytes = Vec::new();
        flate2::read::GzDecoder::new(&gz[..]).read_to_end(&mut bytes)?;
        let snippets = |key: &str| -> Vec<String> {
            info[key]
                .as_array()
                .map(|a| a.iter().filter_map(|s| s.as_str()).map(normalise).collect())
                .unwrap_or_default()
        };
        cases.push(Case {
            url: url.clone(),
            bytes,
            with: snippets("with"),
            without: snippets("without"),
        });
    }
    Ok(cases)
}

fn peer(python: &str, dataset: &Path) -> Result<(Vec<String>, f64)> {
    let out = std::env::temp_dir().join(format!(
        "crawldedup-boilerplate-{}.jsonl",
        std::process::id()
    ));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/eval_boilerplate_peer.py");
    let status = std::process::Command::new(python)
        .arg(script)
        .arg(dataset)
        .arg(&out)
        .status()?;
    if !status.success() {
        bail!("the peer failed: {status}");
    }
    let mut texts = Vec::new();
    let mut seconds = 0.0;
    for line in std::fs::read_to_string(&out)?.lines() {
        let value: serde_json::Value = serde_json::from_str(line)?;
        if let Some(total) = value["total_seconds"].as_f64() {
            seconds = total;
        } else {
            texts.push(value["text"].as_str().unwrap_or("").to_string());
        }
    }
    let _ = std::fs::remove_file(&out);
    Ok((texts, seconds))
}

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let mut dataset = PathBuf::from("../shared/datasets/trafilatura-eval-dev");
    let mut python = None;
    let mut leaks_shown = 0usize;
    let mut misses_shown = 0usize;
    let mut dump = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--peer" => python = Some(args.next().context("--peer needs a python")?),
            "--leaks" => leaks_shown = args.next().context("--leaks needs N")?.parse()?,
            "--misses" => misses_shown = args.next().context("--misses needs N")?.parse()?,
            "--dump" => dump = Some(PathBuf::from(args.next().context("--dump needs a folder")?)),
            other if !other.starts_with('-') => dataset = PathBuf::from(other),
            other => bail!("unknown option {other}"),
        }
    }
    let cases = load(&dataset)?;
    println!("{} pages from {}", cases.len(), dataset.display());
    let started = std::time::Instant::now();
    let extracted: Vec<crawldedup::content::Extracted> = cases
        .iter()
        .map(|c| {
            let url = url::Url::parse(&c.url).ok();
            crawldedup::content::extract_bytes(&c.bytes, None, url.as_ref())
        })
        .collect();
    let ours_seconds = started.elapsed().as_secs_f64();
    if let Some(folder) = &dump {
        // Each page's extracted text, as JSON lines of {url, text}.
        std::fs::create_dir_all(folder)?;
        let lines: String = cases
            .iter()
            .zip(&extracted)
            .map(|(c, e)| serde_json::json!({"url": c.url, "text": e.text}).to_string() + "\n")
            .collect();
        std::fs::write(folder.join("extracted.jsonl"), lines)?;
    }
    let mut by_language: BTreeMap<String, (usize, Tally, Tally)> = BTreeMap::new();
    let mut ours = Tally::default();
    let mut theirs = Tally::default();
    let peer_texts = match &python {
        Some(python) => Some(peer(python, &dataset)?),
        None => None,
    };
    let mut leaks = Vec::new();
    let mut misses = Vec::new();
    for (i, (case, extraction)) in cases.iter().zip(&extracted).enumerate() {
        let (tally, kept, missed) = score(case, &extraction.text);
        ours.add(tally);
        leaks.extend(kept.into_iter().map(|k| (case.url.clone(), k)));
        misses.extend(missed.into_iter().map(|k| (case.url.clone(), k)));
        let language = extraction
            .language
            .as_deref()
            .map(|l| l.get(..2).unwrap_or(l).to_ascii_lowercase())
            .unwrap_or_else(|| "none".into());
        let entry = by_language.entry(language).or_default();
        entry.0 += 1;
        entry.1.add(tally);
        if let Some((texts, _)) = &peer_texts {
            let (peer_tally, _, _) = score(case, texts.get(i).map_or("", String::as_str));
            theirs.add(peer_tally);
            entry.2.add(peer_tally);
        }
    }
    println!("{:<12} {:>5}  {}", "crawldedup", cases.len(), ours.line());
    if let Some((_, seconds)) = &peer_texts {
        println!(
            "{:<12} {:>5}  {}",
            "trafilatura",
            cases.len(),
            theirs.line()
        );
        println!(
            "extraction: crawldedup {:.1} pages/s, trafilatura {:.1} pages/s on one core ({:.1}x)",
            cases.len() as f64 / ours_seconds,
            cases.len() as f64 / seconds,
            seconds / ours_seconds
        );
    } else {
        println!(
            "extraction: {:.1} pages/s on one core",
            cases.len() as f64 / ours_seconds
        );
    }
    println!(
        "by declared language (pages; crawldedup{}):",
        if peer_texts.is_some() {
            " / trafilatura"
        } else {
            ""
        }
    );
    for (language, (pages, tally, peer_tally)) in &by_language {
        let peer_line = if peer_texts.is_some() {
            format!("  /  {}", peer_tally.line())
        } else {
            String::new()
        };
        println!("  {language:<6} {pages:>4}  {}{peer_line}", tally.line());
    }
    for (url, snippet) in leaks.iter().take(leaks_shown) {
        println!("kept: {snippet:?}  ({url})");
    }
    for (url, snippet) in misses.iter().take(misses_shown) {
        println!("missed: {snippet:?}  ({url})");
    }
    Ok(())
}
