//! Evaluates main-content extraction on the WCXB dev split: word-level F1, precision and
//! recall (the benchmark's metric), overall and per page type, and pages per second on one
//! core; with `--peer`, trafilatura runs on the same pages in the same run and is scored by
//! the same code.
//!
//! ```text
//! cargo run --release --example eval_extract -- ../shared/datasets/wcxb-dev
//! cargo run --release --example eval_extract -- ../shared/datasets/wcxb-dev --peer target/peers/bin/python
//! ```
//!
//! Options: `--peer PYTHON` (a Python with trafilatura installed), `--worst N` (list the N
//! lowest-scoring pages), `--type TYPE` (only that page type), `--dump DIR` (write each
//! extraction to DIR/NNNN.txt), `--limit N`.

use anyhow::{Context, Result, bail};
use crawldedup::content::extract_bytes;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[path = "templates/wcxb.rs"]
mod wcxb;

struct Case {
    id: String,
    page_type: String,
    url: String,
    html: Vec<u8>,
    reference: String,
}

#[derive(Default, Clone, Copy)]
struct Score {
    f1: f64,
    precision: f64,
    recall: f64,
}

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let mut dataset = PathBuf::from("../shared/datasets/wcxb-dev");
    let mut peer: Option<String> = None;
    let mut worst = 0usize;
    let mut only_type: Option<String> = None;
    let mut dump: Option<PathBuf> = None;
    let mut limit = usize::MAX;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--peer" => peer = Some(args.next().context("--peer needs a python")?),
            "--worst" => worst = args.next().context("--worst needs N")?.parse()?,
            "--type" => only_type = Some(args.next().context("--type needs a type")?),
            "--dump" => dump = Some(args.next().context("--dump needs a dir")?.into()),
            "--limit" => limit = args.next().context("--limit needs N")?.parse()?,
            other if !other.starts_with('-') => dataset = PathBuf::from(other),
            other => bail!("unknown option {other}"),
        }
    }
    let cases = load(&dataset, only_type.as_deref(), limit)?;
    eprintln!("{} pages loaded from {}", cases.len(), dataset.display());

    // Ours, on this thread.
    let mut ours = Vec::with_capacity(cases.len());
    let mut elapsed = Duration::ZERO;
    for case in &cases {
        let url = url::Url::parse(&case.url).ok();
        let start = Instant::now();
        let extracted = extract_bytes(&case.html, None, url.as_ref());
        elapsed += start.elapsed();
        ours.push(extracted.text);
    }
    if let Some(dir) = &dump {
        std::fs::create_dir_all(dir)?;
        for (case, text) in cases.iter().zip(&ours) {
            std::fs::write(dir.join(format!("{}.txt", case.id)), text)?;
        }
    }
    let our_scores: Vec<Score> = cases
        .iter()
        .zip(&ours)
        .map(|(c, t)| score(t, &c.reference))
        .collect();
    let our_rate = cases.len() as f64 / elapsed.as_secs_f64();

    let peer_result = match &peer {
        Some(python) => Some(run_peer(python, &dataset, &cases)?),
        None => None,
    };

    println!(
        "{:<14} {:>6} {:>8} {:>8} {:>8}{}",
        "page type",
        "pages",
        "F1",
        "P",
        "R",
        if peer_result.is_some() {
            "   trafilatura F1"
        } else {
            ""
        }
    );
    let mut types: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, case) in cases.iter().enumerate() {
        types.entry(&case.page_type).or_default().push(i);
    }
    let all: Vec<usize> = (0..cases.len()).collect();
    let rows = types
        .iter()
        .map(|(t, v)| (t.to_string(), v.clone()))
        .chain(std::iter::once(("all".to_string(), all)));
    for (name, indices) in rows {
        let mean = mean_score(&our_scores, &indices);
        let peer_column = peer_result
            .as_ref()
            .map(|(scores, _)| format!("   {:>14.4}", mean_score(scores, &indices).f1))
            .unwrap_or_default();
        println!(
            "{:<14} {:>6} {:>8.4} {:>8.4} {:>8.4}{}",
            name,
            indices.len(),
            mean.f1,
            mean.precision,
            mean.recall,
            peer_column
        );
    }
    println!(
        "crawldedup: {:.1} pages/s on one core ({:.2} ms/page, decode + extract)",
        our_rate,
        1000.0 / our_rate
    );
    if let Some((_, peer_rate)) = &peer_result {
        println!(
            "trafilatura: {:.1} pages/s on one core; crawldedup is {:.1}x faster",
            peer_rate,
            our_rate / peer_rate
        );
    }
    if worst > 0 {
        let mut order: Vec<usize> = (0..cases.len()).collect();
        order.sort_by(|&a, &b| our_scores[a].f1.total_cmp(&our_scores[b].f1));
        for &i in order.iter().take(worst) {
            let s = our_scores[i];
            println!(
                "{} {:<13} F1 {:.3} P {:.3} R {:.3} {}",
                cases[i].id, cases[i].page_type, s.f1, s.precision, s.recall, cases[i].url
            );
        }
    }
    Ok(())
}

fn mean_score(scores: &[Score], indices: &[usize]) -> Score {
    let n = indices.len().max(1) as f64;
    let mut sum = Score::default();
    for &i in indices {
        sum.f1 += scores[i].f1;
        sum.precision += scores[i].precision;
        sum.recall += scores[i].recall;
    }
    Score {
        f1: sum.f1 / n,
        precision: sum.precision / n,
        recall: sum.recall / n,
    }
}

/// The benchmark's metric: multisets of lower-cased `\w+` tokens.
fn score(predicted: &str, reference: &str) -> Score {
    let reference_tokens = tokens(reference);
    let predicted_tokens = tokens(predicted);
    let reference_total: usize = reference_tokens.values().sum();
    let predicted_total: usize = predicted_tokens.values().sum();
    if reference_total == 0 {
        let v = if predicted_total == 0 { 1.0 } else { 0.0 };
        return Score {
            f1: v,
            precision: v,
            recall: v,
        };
    }
    if predicted_total == 0 {
        return Score::default();
    }
    let overlap: usize = predicted_tokens
        .iter()
        .map(|(t, n)| (*n).min(reference_tokens.get(t).copied().unwrap_or(0)))
        .sum();
    let precision = overlap as f64 / predicted_total as f64;
    let recall = overlap as f64 / reference_total as f64;
    let f1 = if overlap == 0 {
        0.0
    } else {
        2.0 * precision * recall / (precision + recall)
    };
    Score {
        f1,
        precision,
        recall,
    }
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn tokens(text: &str) -> HashMap<String, usize> {
    let lower = text.to_lowercase();
    let mut counts = HashMap::new();
    for token in lower
        .split(|c: char| !is_word_char(c))
        .filter(|t| !t.is_empty())
    {
        *counts.entry(token.to_string()).or_insert(0) += 1;
    }
    counts
}

fn load(dataset: &Path, only_type: Option<&str>, limit: usize) -> Result<Vec<Case>> {
    let metadata: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dataset.join("metadata.json"))
            .with_context(|| format!("{}: cannot read metadata.json", dataset.display()))?,
    )?;
    let files = metadata["files"]
        .as_object()
        .context("metadata.json: no files")?;
    let mut cases = Vec::new();
    for (id, info) in files {
        let page_type = info["page_type"].as_str().unwrap_or("unknown").to_string();
        if only_type.is_some_and(|t| t != page_type) {
            continue;
        }
        if cases.len() >= limit {
            break;
        }
        let (html, reference) = wcxb::page(dataset, id)?;
        cases.push(Case {
            id: id.clone(),
            page_type,
            url: info["url"].as_str().unwrap_or("").to_string(),
            html,
            reference,
        });
    }
    cases.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(cases)
}

/// Runs trafilatura on the same pages (one process, one core) and scores its output here.
fn run_peer(python: &str, dataset: &Path, cases: &[Case]) -> Result<(Vec<Score>, f64)> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/eval_extract_trafilatura.py");
    let ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
    let out_file =
        std::env::temp_dir().join(format!("crawldedup-peer-{}.jsonl", std::process::id()));
    let status = std::process::Command::new(python)
        .arg(&script)
        .arg(dataset)
        .arg(&out_file)
        .arg(ids.join(","))
        .status()
        .with_context(|| format!("cannot run {python}"))?;
    if !status.success() {
        bail!("{} failed: {status}", script.display());
    }
    let output = std::fs::read_to_string(&out_file)?;
    let _ = std::fs::remove_file(&out_file);
    let mut texts: HashMap<String, String> = HashMap::new();
    let mut seconds = 0.0;
    for line in output.lines() {
        let v: serde_json::Value = serde_json::from_str(line)?;
        if let Some(total) = v["total_seconds"].as_f64() {
            seconds = total;
            continue;
        }
        texts.insert(
            v["id"].as_str().unwrap_or("").to_string(),
            v["text"].as_str().unwrap_or("").to_string(),
        );
    }
    let scores = cases
        .iter()
        .map(|c| score(texts.get(&c.id).map_or("", String::as_str), &c.reference))
        .collect();
    Ok((scores, cases.len() as f64 / seconds.max(1e-9)))
}
