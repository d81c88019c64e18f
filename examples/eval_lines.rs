//! The line rule's "one line edited" on real lines: how often an edited line is still near
//! its original, and how often two unrelated lines are taken for one.
//!
//! `cargo run --release --example eval_lines -- ../shared/datasets/wcxb-dev [--pairs N]`
//!
//! The lines are those of the WCXB dev split's ground-truth main texts, one paragraph,
//! heading or list item a line, as the extractor writes them; a line's profile is the
//! index's ([`Blocks::of`]), and two lines are near as the line rule reads them
//! ([`Line::is_near`]: signatures within `NEAR_LINE_BITS` and a shared end).
//!
//! 1. **Edited lines**, by length in words: every seventh word of the first 25 replaced
//!    (the template evaluation's copy: four words of a paragraph of 25), one word in the
//!    middle replaced, a sentence appended, the last three words replaced (a headline cut
//!    at another length), and the first word replaced. The share still near its original.
//! 2. **Unrelated lines**: all pairs of `--pairs` sentences (lines of 8 words or more, 3,000
//!    by default, taken evenly from the distinct ones) of different pages whose word sets'
//!    Jaccard similarity is under 0.5 (the rest are set aside as genuine). The pairs within
//!    the signature distance alone, and near (the distance and a shared end): the rate a
//!    pair, of which a page of 40 sentences against a stored page of 40 makes 1,600.
//! 3. **Headlines** (the ground truths' titles, as a page's headline is kept beside its
//!    profile, [`Blocks::headline`]): the share of each edit above that leaves a headline
//!    apart from its original ([`Blocks::headlines_apart`]: a copy that would be missed),
//!    and of all pairs of different pages' titles whose word sets' Jaccard similarity is
//!    under 0.5, the share not apart (two articles that the headlines cannot tell apart
//!    when their extracted texts are alike).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crawldedup::fingerprint::blocks::{Blocks, HEADLINE_APART_BITS, Line, NEAR_LINE_BITS};

/// The ground truths' distinct lines of 3 words or more, by page, and the pages' titles.
type Loaded = (Vec<(usize, String)>, Vec<String>);

fn load(dir: &Path) -> Result<Loaded, Box<dyn std::error::Error>> {
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("metadata.json"))?)?;
    let files = meta["files"].as_object().ok_or("metadata.json: no files")?;
    let mut ids: Vec<_> = files.keys().cloned().collect();
    ids.sort();
    let mut seen = HashSet::new();
    let mut lines = Vec::new();
    let mut titles = Vec::new();
    for (page, id) in ids.iter().enumerate() {
        let path: PathBuf = dir.join("dev/ground-truth").join(format!("{id}.json"));
        let gt: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
        let text = gt["ground_truth"]["main_content"].as_str().unwrap_or("");
        if let Some(title) = gt["ground_truth"]["title"].as_str() {
            titles.push(title.trim().to_string());
        }
        for line in text.lines() {
            let line = line.trim();
            if line.split_whitespace().count() >= 3 && seen.insert(line.to_string()) {
                lines.push((page, line.to_string()));
            }
        }
    }
    Ok((lines, titles))
}

fn profile(line: &str) -> Option<Line> {
    Blocks::of("a.example", line).lines.first().copied()
}

/// An edit of a line's words.
type Edit = fn(&[&str]) -> Vec<String>;

/// The edits, each a function of a line's words.
fn edits() -> Vec<(&'static str, Edit)> {
    fn owned(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }
    vec![
        ("every 7th of the first 25", |w| {
            let mut v = owned(w);
            for (i, x) in v.iter_mut().enumerate() {
                if i % 7 == 3 && i < 25 {
                    *x = "altered".into();
                }
            }
            v
        }),
        ("one word in the middle", |w| {
            let mut v = owned(w);
            let mid = v.len() / 2;
            v[mid] = "altered".into();
            v
        }),
        ("a sentence appended", |w| {
            let mut v = owned(w);
            v.extend(
                "A reader wrote to add that the figures were confirmed later."
                    .split(' ')
                    .map(String::from),
            );
            v
        }),
        ("the last three words", |w| {
            let mut v = owned(w);
            let n = v.len();
            for x in &mut v[n.saturating_sub(3)..] {
                *x = "altered".into();
            }
            v
        }),
        ("the first word", |w| {
            let mut v = owned(w);
            v[0] = "Altered".into();
            v
        }),
    ]
}

const BUCKETS: [(usize, usize); 5] = [(3, 7), (8, 15), (16, 24), (25, 40), (41, usize::MAX)];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = PathBuf::from(
        args.first()
            .ok_or("usage: eval_lines WCXB_DIR [--pairs N]")?,
    );
    let pairs: usize = match args.iter().position(|a| a == "--pairs") {
        Some(i) => args.get(i + 1).ok_or("--pairs needs a number")?.parse()?,
        None => 3000,
    };
    let (lines, titles) = load(&dir)?;
    println!("{} distinct lines of 3 words or more", lines.len());

    println!("\nEdited lines still near their original, by the line's words:");
    print!("{:<28}", "edit");
    for (lo, hi) in BUCKETS {
        let name = if hi == usize::MAX {
            format!("{lo}+")
        } else {
            format!("{lo}-{hi}")
        };
        print!("{name:>16}");
    }
    println!();
    for (name, edit) in edits() {
        print!("{name:<28}");
        for (lo, hi) in BUCKETS {
            let (mut near, mut all) = (0usize, 0usize);
            for (_, line) in &lines {
                let words: Vec<&str> = line.split_whitespace().collect();
                if words.len() < lo || words.len() > hi {
                    continue;
                }
                let edited = edit(&words).join(" ");
                let (Some(a), Some(b)) = (profile(line), profile(&edited)) else {
                    continue;
                };
                all += 1;
                near += usize::from(a.is_near(&b));
            }
            print!(
                "{:>16}",
                format!("{:.3} of {all}", near as f64 / all.max(1) as f64)
            );
        }
        println!();
    }

    unrelated(&lines, pairs);
    headlines(&titles);
    Ok(())
}

/// Part 2: all pairs of `pairs` sentences of different pages.
fn unrelated(lines: &[(usize, String)], pairs: usize) {
    let sentences: Vec<&(usize, String)> = lines
        .iter()
        .filter(|(_, l)| l.split_whitespace().count() >= 8)
        .collect();
    let step = (sentences.len() / pairs.max(1)).max(1);
    let sample: Vec<(usize, Line, HashSet<String>)> = sentences
        .iter()
        .step_by(step)
        .take(pairs)
        .filter_map(|(page, l)| {
            let words = l
                .split_whitespace()
                .map(|w| w.to_lowercase())
                .collect::<HashSet<_>>();
            profile(l).map(|p| (*page, p, words))
        })
        .collect();
    let (mut total, mut genuine, mut within, mut near) = (0u64, 0u64, 0u64, 0u64);
    let mut histogram = [0u64; 129];
    for (i, (page_a, a, wa)) in sample.iter().enumerate() {
        for (page_b, b, wb) in &sample[i + 1..] {
            if page_a == page_b {
                continue;
            }
            let common = wa.intersection(wb).count();
            if common as f64 / (wa.len() + wb.len() - common) as f64 >= 0.5 {
                genuine += 1;
                continue;
            }
            total += 1;
            let d = (a.sig ^ b.sig).count_ones();
            histogram[d as usize] += 1;
            within += u64::from(d <= NEAR_LINE_BITS);
            near += u64::from(a.is_near(b));
        }
    }
    let median = {
        let mut seen = 0;
        histogram
            .iter()
            .position(|&c| {
                seen += c;
                seen * 2 >= total
            })
            .unwrap_or(0)
    };
    println!(
        "\nUnrelated sentences: {} lines, {total} pairs of different pages ({genuine} genuine set \
         aside); median distance {median} bits",
        sample.len()
    );
    println!(
        "  within {NEAR_LINE_BITS} bits: {within} ({:.2e} a pair); near (and a shared end): {near} \
         ({:.2e} a pair, {:.2e} for 1,600 pairs)",
        within as f64 / total.max(1) as f64,
        near as f64 / total.max(1) as f64,
        1600.0 * near as f64 / total.max(1) as f64,
    );
}

/// Part 3: headlines edited, and headlines of different pages.
fn headlines(titles: &[String]) {
    let page = |title: &str| Blocks::of("a.example", "").with_headline(Some(title));
    let titles: Vec<&String> = titles
        .iter()
        .filter(|t| t.split_whitespace().count() >= 3)
        .collect();
    println!(
        "\nHeadlines ({} titles of 3 words or more), apart: no end shared and more than \
         {HEADLINE_APART_BITS} bits",
        titles.len()
    );
    for (name, edit) in edits() {
        let apart = titles
            .iter()
            .filter(|t| {
                let words: Vec<&str> = t.split_whitespace().collect();
                page(t).headlines_apart(&page(&edit(&words).join(" ")))
            })
            .count();
        println!(
            "  edited, {name:<28} apart from the original: {apart} ({:.4})",
            apart as f64 / titles.len().max(1) as f64
        );
    }
    let pages: Vec<(Blocks, HashSet<String>)> = titles
        .iter()
        .map(|t| {
            let words = t.split_whitespace().map(|w| w.to_lowercase()).collect();
            (page(t), words)
        })
        .collect();
    let (mut total, mut not_apart) = (0u64, 0u64);
    for (i, (a, wa)) in pages.iter().enumerate() {
        for (b, wb) in &pages[i + 1..] {
            let common = wa.intersection(wb).count();
            if common as f64 / (wa.len() + wb.len() - common) as f64 >= 0.5 {
                continue;
            }
            total += 1;
            not_apart += u64::from(!a.headlines_apart(b));
        }
    }
    println!(
        "  different pages' titles: {total} pairs, not apart {not_apart} ({:.4} a pair)",
        not_apart as f64 / total.max(1) as f64
    );
}
