//! The three ways the template evaluation decides its pages: crawldedup in process (with
//! and without host templates), the peer (trafilatura and simhash) in one Python process,
//! and the command-line tool on the pages written to files.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Result, bail};
use crawldedup::{Config, Dedup, PageVerdict};

use super::tally::{Tally, tally};
use super::{Page, score};

/// Our decisions on `pages`, and the seconds they took (extraction and decision).
pub fn ours(pages: &[Page], templates: bool, verbose: bool) -> Result<(Tally, f64)> {
    let started = std::time::Instant::now();
    let dir = tempfile::tempdir()?;
    let mut config = Config::default();
    config.dedup.host_templates = templates;
    let stage = Dedup::open(dir.path(), &config)?;
    let mut r = Tally::default();
    for page in pages {
        let verdict = stage.check_page(
            &page.url,
            page.html.as_bytes(),
            Some("text/html; charset=utf-8"),
        )?;
        // What was lost, and every copy's verdict.
        if verbose && (page.copy_of.is_some() || !matches!(verdict, PageVerdict::Unique { .. })) {
            let kind = if page.copy_of.is_some() {
                "copy"
            } else {
                "article"
            };
            println!("  {} ({kind}): {verdict:?}", page.url);
        }
        tally(
            &mut r,
            page,
            match &verdict {
                PageVerdict::Unique { .. } => None,
                // Not stored either: the page's text was lost to extraction.
                PageVerdict::NoText => Some("(no text)".to_string()),
                other => other.duplicate().map(|d| d.of.name.clone()),
            },
        );
    }
    let seconds = started.elapsed().as_secs_f64();
    let (hosts, blocks) = stage.template_size();
    if templates {
        // What the index keeps of each page's lines, and how well each page's main text
        // was extracted.
        let mut lines = 0usize;
        let mut scores = score::Scores::default();
        for page in pages {
            let url = url::Url::parse(&page.url)?;
            let prepared = crawldedup::page::prepare(page.html.as_bytes(), None, Some(&url));
            if let Some(prepared) = &prepared {
                let host = url.host_str().unwrap_or("");
                lines += crawldedup::fingerprint::Blocks::of(host, prepared.page_text())
                    .lines
                    .len();
            }
            let text = prepared.as_ref().map_or("", |p| p.whole_text());
            scores.add(&page.score_part(), page.f1(text));
        }
        println!(
            "{:<32} extraction F1 (words; character bigrams for Zh and Ja): {}",
            "",
            scores.summary()
        );
        let per_page = lines as f64 / pages.len().max(1) as f64;
        println!(
            "{:<32} lines kept a page: {per_page:.1} on average, {:.0} bytes",
            "",
            per_page * crawldedup::fingerprint::blocks::LINE_BYTES as f64 + 6.0
        );
        // 12 bytes a block in its host's hash table, and a control byte, at a load of 7/8.
        println!(
            "{:<32} templates of {hosts} hosts: {blocks} blocks, about {} bytes a host",
            "",
            blocks * 13 * 8 / 7 / hosts.max(1)
        );
    }
    Ok((r, seconds))
}

pub fn peer(python: &str, pages: &[Page]) -> Result<Tally> {
    let dir = tempfile::tempdir()?;
    let list = dir.path().join("pages.jsonl");
    let mut lines = String::new();
    for (i, page) in pages.iter().enumerate() {
        let file = dir.path().join(format!("{i}.html"));
        std::fs::write(&file, &page.html)?;
        lines.push_str(&serde_json::json!({"url": page.url, "file": file}).to_string());
        lines.push('\n');
    }
    std::fs::write(&list, lines)?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/eval_templates_peer.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .arg(&list)
        .output()?;
    if !out.status.success() {
        bail!("peer: {}", String::from_utf8_lossy(&out.stderr));
    }
    let mut r = Tally::default();
    let mut scores = score::Scores::default();
    for (page, line) in pages.iter().zip(String::from_utf8(out.stdout)?.lines()) {
        let answer: serde_json::Value = serde_json::from_str(line)?;
        tally(&mut r, page, answer["of"].as_str().map(String::from));
        let text = answer["text"].as_str().unwrap_or("");
        scores.add(&page.score_part(), page.f1(text));
    }
    println!(
        "{:<32} extraction F1 (words; character bigrams for Zh and Ja): {}",
        "trafilatura",
        scores.summary()
    );
    Ok(r)
}

/// The decisions of `crawldedup dedup --json` (the build at `binary`) on the pages written
/// to files, in order, in one run: each page's verdict read back by its file.
pub fn as_files(binary: &str, pages: &[Page], verbose: bool) -> Result<Tally> {
    let dir = tempfile::tempdir()?;
    let mut files = Vec::new();
    let mut page_of = HashMap::new();
    for (i, page) in pages.iter().enumerate() {
        let file = dir.path().join(format!("{i:05}.html"));
        std::fs::write(&file, &page.html)?;
        page_of.insert(file.display().to_string(), page.url.clone());
        files.push(file);
    }
    let out = std::process::Command::new(binary)
        .arg("dedup")
        .arg("--json")
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .args(&files)
        .output()?;
    if !out.status.success() {
        bail!("{binary} dedup: {}", String::from_utf8_lossy(&out.stderr));
    }
    let mut r = Tally::default();
    let stdout = String::from_utf8(out.stdout)?;
    for (page, line) in pages.iter().zip(stdout.lines()) {
        let answer: serde_json::Value = serde_json::from_str(line)?;
        let of = match answer["verdict"].as_str() {
            Some("unique") => None,
            Some("no_text") => Some("(no text)".to_string()),
            _ => {
                // The original's file when it was named by an address, else its name (its path).
                let file = answer["of_file"]
                    .as_str()
                    .or(answer["of"].as_str())
                    .unwrap_or("");
                Some(
                    page_of
                        .get(file)
                        .cloned()
                        .unwrap_or_else(|| file.to_string()),
                )
            }
        };
        if verbose && (page.copy_of.is_some() || of.is_some()) {
            println!(
                "  {} ({}): {line}",
                page.url,
                if page.copy_of.is_some() {
                    "copy"
                } else {
                    "article"
                }
            );
        }
        tally(&mut r, page, of);
    }
    Ok(r)
}
