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
//! extraction to DIR/NNNN.txt), `--limit N`, `--rounds N` (N rounds of each tool; each page
//! is then also timed by its best round), `--chunk N` (the tools take turns every N pages,
//! which goes first alternating; by default every round).

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
    let mut rounds = 1usize;
    let mut chunk = 0usize;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--peer" => peer = Some(args.next().context("--peer needs a python")?),
            "--worst" => worst = args.next().context("--worst needs N")?.parse()?,
            "--type" => only_type = Some(args.next().context("--type needs a type")?),
            "--dump" => dump = Some(args.next().context("--dump needs a dir")?.into()),
            "--limit" => limit = args.next().context("--limit needs N")?.parse()?,
            "--rounds" => rounds = args.next().context("--rounds needs N")?.parse()?,
            "--chunk" => chunk = args.next().context("--chunk needs N")?.parse()?,
            other if !other.starts_with('-') => dataset = PathBuf::from(other),
            other => bail!("unknown option {other}"),
        }
    }
    if rounds == 0 {
        bail!("--rounds must be 1 or more");
    }
    let cases = load(&dataset, only_type.as_deref(), limit)?;
    eprintln!("{} pages loaded from {}", cases.len(), dataset.display());

    let mut peer_process = match &peer {
        Some(python) => Some(Peer::start(python, &dataset, &cases)?),
        None => None,
    };
    let Turns {
        texts: ours,
        our_best,
        peer_best,
        rates: round_rates,
    } = take_turns(&cases, rounds, chunk, peer_process.as_mut())?;
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
    let peer_result = match peer_process {
        Some(process) => Some(process.finish(&cases)?),
        None => None,
    };

    print_scores(&cases, &our_scores, peer_result.as_deref());
    report_speed(&round_rates, &our_best, &peer_best);
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

/// Prints the mean scores by page type and over all pages, with the peer's F1 beside them
/// when it ran.
fn print_scores(cases: &[Case], our_scores: &[Score], peer_scores: Option<&[Score]>) {
    println!(
        "{:<14} {:>6} {:>8} {:>8} {:>8}{}",
        "page type",
        "pages",
        "F1",
        "P",
        "R",
        if peer_scores.is_some() {
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
        let mean = mean_score(our_scores, &indices);
        let peer_column = peer_scores
            .map(|scores| format!("   {:>14.4}", mean_score(scores, &indices).f1))
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
    let files = wcxb::files(dataset)?;
    let mut cases = Vec::new();
    for (id, info) in &files {
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

/// What the rounds of [`take_turns`] measured: our texts (of the first round), each page's
/// best time for each tool (seconds), and each round's pages per second for each tool.
struct Turns {
    texts: Vec<String>,
    our_best: Vec<f64>,
    peer_best: Vec<f64>,
    rates: Vec<(f64, Option<f64>)>,
}

/// Runs `rounds` rounds of ours and, when given, of the peer: the two take turns every
/// `chunk` pages (0: every round), which goes first alternating, so that a drift of the
/// machine's speed (a shared machine's neighbours) weighs on both alike.
fn take_turns(
    cases: &[Case],
    rounds: usize,
    chunk: usize,
    mut peer: Option<&mut Peer>,
) -> Result<Turns> {
    let chunk = if chunk == 0 {
        cases.len().max(1)
    } else {
        chunk
    };
    let mut turns = Turns {
        texts: Vec::with_capacity(cases.len()),
        our_best: vec![f64::MAX; cases.len()],
        peer_best: vec![f64::MAX; cases.len()],
        rates: Vec::new(),
    };
    for round in 0..rounds {
        let (mut our_seconds, mut peer_seconds) = (0.0, 0.0);
        for (turn, first) in (0..cases.len()).step_by(chunk).enumerate() {
            let pages = first..(first + chunk).min(cases.len());
            let peer_first = (round + turn) % 2 == 1;
            let mut peer_turn = |peer_seconds: &mut f64| -> Result<()> {
                if let Some(process) = peer.as_mut() {
                    let best = &mut turns.peer_best[pages.clone()];
                    *peer_seconds += process.run(pages.clone(), best)?;
                }
                Ok(())
            };
            if peer_first {
                peer_turn(&mut peer_seconds)?;
            }
            let texts = (round == 0).then_some(&mut turns.texts);
            let best = &mut turns.our_best[pages.clone()];
            our_seconds += our_turn(&cases[pages.clone()], best, texts);
            if !peer_first {
                peer_turn(&mut peer_seconds)?;
            }
        }
        let rate = |seconds: f64| cases.len() as f64 / seconds.max(1e-9);
        turns.rates.push((
            rate(our_seconds),
            peer.is_some().then(|| rate(peer_seconds)),
        ));
    }
    Ok(turns)
}

/// One turn of ours over `cases`, on this thread: the seconds it took. Each page's time
/// lowers its best in `best` (seconds); `texts`, when given, gets the extracted texts.
fn our_turn(cases: &[Case], best: &mut [f64], mut texts: Option<&mut Vec<String>>) -> f64 {
    let mut elapsed = Duration::ZERO;
    for (case, best) in cases.iter().zip(best.iter_mut()) {
        let url = url::Url::parse(&case.url).ok();
        let start = Instant::now();
        let extracted = extract_bytes(&case.html, None, url.as_ref());
        let took = start.elapsed();
        elapsed += took;
        *best = best.min(took.as_secs_f64());
        if let Some(texts) = texts.as_mut() {
            texts.push(extracted.text);
        }
    }
    elapsed.as_secs_f64()
}

/// Prints the pages per second of each round, and with more than one round the rate of
/// each tool over its best time of each page (the round a neighbour slowed least), with
/// the ratio of the two and the median of the rounds' ratios.
fn report_speed(rounds: &[(f64, Option<f64>)], our_best: &[f64], peer_best: &[f64]) {
    let mut ratios = Vec::new();
    for (round, &(ours, peer)) in rounds.iter().enumerate() {
        let label = if rounds.len() > 1 {
            format!("round {}: ", round + 1)
        } else {
            String::new()
        };
        println!(
            "{label}crawldedup: {ours:.1} pages/s on one core ({:.2} ms/page, decode + extract)",
            1000.0 / ours
        );
        if let Some(peer) = peer {
            println!(
                "{label}trafilatura: {peer:.1} pages/s on one core; crawldedup is {:.1}x faster",
                ours / peer
            );
            ratios.push(ours / peer);
        }
    }
    if rounds.len() < 2 {
        return;
    }
    let rate = |best: &[f64]| best.len() as f64 / best.iter().sum::<f64>().max(1e-9);
    let ours = rate(our_best);
    println!(
        "best of {} rounds a page: crawldedup {ours:.1} pages/s ({:.2} ms/page)",
        rounds.len(),
        1000.0 / ours
    );
    if !ratios.is_empty() {
        let peer = rate(peer_best);
        ratios.sort_by(f64::total_cmp);
        println!(
            "best of {} rounds a page: trafilatura {peer:.1} pages/s; crawldedup is {:.1}x \
             faster (the rounds' median {:.1}x)",
            rounds.len(),
            ours / peer,
            ratios[ratios.len() / 2]
        );
    }
}

/// trafilatura in a Python process of its own (one core), which runs a range of the same
/// pages whenever asked; the text of each page's first run is scored here by the same code.
struct Peer {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    out_file: PathBuf,
}

impl Peer {
    fn start(python: &str, dataset: &Path, cases: &[Case]) -> Result<Peer> {
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/eval_extract_trafilatura.py");
        let ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
        let out_file =
            std::env::temp_dir().join(format!("crawldedup-peer-{}.jsonl", std::process::id()));
        let mut child = std::process::Command::new(python)
            .arg(&script)
            .arg(dataset)
            .arg(&out_file)
            .arg(ids.join(","))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot run {python}"))?;
        let stdin = child.stdin.take();
        let stdout = std::io::BufReader::new(child.stdout.take().context("no peer stdout")?);
        Ok(Peer {
            child,
            stdin,
            stdout,
            out_file,
        })
    }

    /// Runs the pages `pages` (indices into the cases); each page's time lowers its best in
    /// `best`. The seconds they took inside trafilatura.
    fn run(&mut self, pages: std::ops::Range<usize>, best: &mut [f64]) -> Result<f64> {
        use std::io::{BufRead, Write};
        let stdin = self.stdin.as_mut().context("peer closed")?;
        writeln!(stdin, "run {} {}", pages.start, pages.end)?;
        stdin.flush()?;
        let mut line = String::new();
        if self.stdout.read_line(&mut line)? == 0 {
            bail!("the trafilatura script stopped: {}", self.child.wait()?);
        }
        let v: serde_json::Value = serde_json::from_str(&line)?;
        let seconds: Vec<f64> = v["seconds"]
            .as_array()
            .context("the trafilatura script printed no seconds")?
            .iter()
            .map(|s| s.as_f64().unwrap_or(0.0))
            .collect();
        if seconds.len() != best.len() {
            bail!(
                "the trafilatura script timed {} pages of {}",
                seconds.len(),
                best.len()
            );
        }
        for (best, took) in best.iter_mut().zip(&seconds) {
            *best = best.min(*took);
        }
        Ok(seconds.iter().sum())
    }

    /// Ends the process and scores its first round's texts.
    fn finish(mut self, cases: &[Case]) -> Result<Vec<Score>> {
        drop(self.stdin.take());
        let status = self.child.wait()?;
        if !status.success() {
            bail!("the trafilatura script failed: {status}");
        }
        let output = std::fs::read_to_string(&self.out_file)?;
        let _ = std::fs::remove_file(&self.out_file);
        let mut texts: HashMap<String, String> = HashMap::new();
        for line in output.lines() {
            let v: serde_json::Value = serde_json::from_str(line)?;
            texts.insert(
                v["id"].as_str().unwrap_or("").to_string(),
                v["text"].as_str().unwrap_or("").to_string(),
            );
        }
        Ok(cases
            .iter()
            .map(|c| score(texts.get(&c.id).map_or("", String::as_str), &c.reference))
            .collect())
    }
}
