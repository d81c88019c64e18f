//! One page of the WCXB dev split: its HTML bytes (gunzipped) and its ground-truth main
//! content.

// Each program that includes this file uses a part of it.
#![allow(dead_code)]

use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result};

/// Page `id`'s bytes, as served, and its ground-truth main content.
pub fn page(dataset: &Path, id: &str) -> Result<(Vec<u8>, String)> {
    let gz = std::fs::read(dataset.join(format!("dev/html/{id}.html.gz")))?;
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(&gz[..]).read_to_end(&mut bytes)?;
    let truth: serde_json::Value = serde_json::from_slice(&std::fs::read(
        dataset.join(format!("dev/ground-truth/{id}.json")),
    )?)?;
    let reference = truth["ground_truth"]["main_content"]
        .as_str()
        .unwrap_or("")
        .to_string();
    Ok((bytes, reference))
}

/// The dataset's pages, by id, with what `metadata.json` says of each (`url`, `page_type`,
/// ...).
pub fn files(dataset: &Path) -> Result<serde_json::Map<String, serde_json::Value>> {
    let metadata: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dataset.join("metadata.json"))
            .with_context(|| format!("{}: cannot read metadata.json", dataset.display()))?,
    )?;
    match metadata {
        serde_json::Value::Object(mut fields) => match fields.remove("files") {
            Some(serde_json::Value::Object(files)) => Ok(files),
            _ => anyhow::bail!("{}: metadata.json: no files", dataset.display()),
        },
        _ => anyhow::bail!("{}: metadata.json is not an object", dataset.display()),
    }
}

/// The ground-truth main contents of the first `limit` pages of the dev split, in file-name
/// order (the same texts on every machine, whatever order the directory lists them in);
/// pages whose ground truth has no main content are skipped.
pub fn main_texts(dataset: &Path, limit: usize) -> Result<Vec<String>> {
    let dir = dataset.join("dev/ground-truth");
    let mut names = std::fs::read_dir(&dir)
        .with_context(|| format!("{}: cannot list", dir.display()))?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<std::io::Result<Vec<_>>>()
        .with_context(|| format!("{}: cannot list", dir.display()))?;
    names.sort();
    let mut texts = Vec::new();
    for path in names.into_iter().take(limit) {
        let json: serde_json::Value = serde_json::from_slice(
            &std::fs::read(&path).with_context(|| format!("{}: cannot read", path.display()))?,
        )
        .with_context(|| format!("{}: not JSON", path.display()))?;
        if let Some(text) = json["ground_truth"]["main_content"].as_str() {
            texts.push(text.to_string());
        }
    }
    Ok(texts)
}
