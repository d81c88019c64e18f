//! One pass of extraction over the first N WCXB dev pages, for counting instructions under
//! `valgrind --tool=cachegrind`, which a shared machine's neighbours do not move (a
//! wall-clock ratio moves by more than a tenth from one run to the next there). With
//! `--load-only` it reads and unzips the same pages and extracts nothing: the difference
//! between the two counts is the extraction's.
//!
//! ```text
//! cargo build --release --example extract_pass
//! valgrind --tool=cachegrind --cache-sim=no target/release/examples/extract_pass 300
//! valgrind --tool=cachegrind --cache-sim=no target/release/examples/extract_pass 300 --load-only
//! ```
//!
//! The dataset defaults to `../shared/datasets/wcxb-dev`; `--dataset DIR` names another.

use anyhow::{Context, Result, bail};
use crawldedup::content::extract_bytes;
use std::path::PathBuf;

#[path = "templates/wcxb.rs"]
mod wcxb;

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let mut pages = usize::MAX;
    let mut load_only = false;
    let mut dataset = PathBuf::from("../shared/datasets/wcxb-dev");
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--load-only" => load_only = true,
            "--dataset" => dataset = args.next().context("--dataset needs a folder")?.into(),
            n if !n.starts_with('-') => pages = n.parse().context("N must be a number")?,
            other => bail!("unknown option {other}"),
        }
    }
    let files = wcxb::files(&dataset)?;
    let mut ids: Vec<&String> = files.keys().collect();
    ids.sort();
    let mut loaded = Vec::new();
    for id in ids.into_iter().take(pages) {
        let (html, _) = wcxb::page(&dataset, id)?;
        let url = files[id]["url"]
            .as_str()
            .and_then(|u| url::Url::parse(u).ok());
        loaded.push((html, url));
    }
    let mut text_bytes = 0;
    if !load_only {
        for (html, url) in &loaded {
            text_bytes += extract_bytes(html, None, url.as_ref()).text.len();
        }
    }
    println!("{} pages, {text_bytes} bytes of main text", loaded.len());
    Ok(())
}
