//! spider crawls, crawldedup decides: the generated fixture site (articles in several
//! versions, URL variants) crawled by `spider` with the page stage attached. Duplicates do
//! not have their links followed; unique pages go to a JSONL file.
//!
//! ```text
//! cargo run --release --features spider --example spider_stage [-- OUT.jsonl]
//! ```

use std::io::Write;
use std::sync::Arc;

use crawldedup::adapters::spider::{DecidedPage, Outcome, SpiderStage};
use crawldedup::{Config, Dedup, PageVerdict};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out_path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "target/spider-stage-pages.jsonl".into());
    let server =
        crawldedup::fixture::serve(crawldedup::fixture::Site::without_traps(7, 10)).await?;
    let state = tempfile::tempdir()?;
    let dedup = Arc::new(Dedup::open(state.path(), &Config::default())?);

    let mut website = spider::website::Website::new(&server.url("/"));
    website.with_respect_robots_txt(true);

    let mut out = std::io::BufWriter::new(std::fs::File::create(&out_path)?);
    let mut write_error = None;
    let report = SpiderStage::new(dedup)
        .crawl(&mut website, |page: DecidedPage| match &page.outcome {
            Outcome::Checked(PageVerdict::Unique { fingerprint, .. }) => {
                let line = serde_json::json!({
                    "url": page.final_url,
                    "title": page.title,
                    "simhash": fingerprint.to_string(),
                    "text": page.text,
                });
                if let Err(e) = writeln!(out, "{line}") {
                    write_error.get_or_insert(e);
                }
            }
            Outcome::Checked(verdict) => {
                if let Some(of) = verdict.original() {
                    println!(
                        "{:16} {}\n                 of {}",
                        verdict.label(),
                        page.url,
                        of.name
                    );
                }
            }
            Outcome::Skipped(reason) => println!("skipped          {} ({reason})", page.url),
        })
        .await?;
    out.flush()?;
    if let Some(e) = write_error {
        return Err(format!("{out_path}: {e}").into());
    }
    println!("\n{}", serde_json::to_string_pretty(&report)?);
    println!("unique pages written to {out_path}");
    Ok(())
}
