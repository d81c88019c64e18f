//! Fingerprints (simhash, sketch and digest) of the WCXB dev ground-truth main texts, the
//! texts `cargo bench --bench fingerprint` times, for counting instructions under
//! `valgrind --tool=cachegrind`, which a shared machine's neighbours do not move. With
//! `--load-only` it reads the same texts and fingerprints nothing: the difference between
//! the two counts is the fingerprint's.
//!
//! ```text
//! cargo build --release --example fingerprint_pass
//! valgrind --tool=cachegrind --cache-sim=no target/release/examples/fingerprint_pass 400 10
//! valgrind --tool=cachegrind --cache-sim=no target/release/examples/fingerprint_pass 400 10 --load-only
//! ```
//!
//! The arguments are the number of texts (the bench takes 400) and the passes over them.
//! The dataset defaults to `../shared/datasets/wcxb-dev`; `--dataset DIR` names another.

use anyhow::{Context, Result, bail};
use crawldedup::Fingerprint;
use std::hint::black_box;
use std::path::PathBuf;

#[path = "templates/wcxb.rs"]
mod wcxb;

fn main() -> Result<()> {
    let mut numbers = Vec::new();
    let mut load_only = false;
    let mut dataset = PathBuf::from("../shared/datasets/wcxb-dev");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--load-only" => load_only = true,
            "--dataset" => dataset = args.next().context("--dataset needs a folder")?.into(),
            n if !n.starts_with('-') => numbers.push(n.parse::<usize>().context("not a number")?),
            other => bail!("unknown option {other}"),
        }
    }
    let (texts_wanted, passes) = match numbers[..] {
        [] => (400, 1),
        [texts] => (texts, 1),
        [texts, passes] => (texts, passes),
        _ => bail!("at most two numbers: texts and passes"),
    };
    let texts = wcxb::main_texts(&dataset, texts_wanted)?;
    let bytes: usize = texts.iter().map(String::len).sum();
    if !load_only {
        for _ in 0..passes {
            for text in &texts {
                black_box(Fingerprint::of(black_box(text)));
            }
        }
    }
    println!("{} texts, {bytes} bytes, {passes} passes", texts.len());
    Ok(())
}
