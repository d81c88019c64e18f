//! spider crawls, crawldedup decides: the generated fixture site (articles in several
//! versions, URL variants) crawled by `spider` with the page stage attached. Duplicates do
//! not have their links followed; unique pages go to a JSONL file.
//!
//! ```text
//! cargo run --release --features spider --example spider_stage [-- OUT.jsonl]
//! ```

use std::io::Write;
use std::sync::Arc;

use crawldedup::adapters::spider::SpiderStage;
use crawldedup::store::{DuplicatePage, FailedPage, PageSink, SinkError, StoredPage};
use crawldedup::{Config, Dedup};

/// Unique pages to a JSONL file; duplicates and failures to the terminal.
struct Report<W: Write + Send> {
    out: W,
}

impl<W: Write + Send> PageSink for Report<W> {
    fn page(&mut self, page: &StoredPage) -> Result<(), SinkError> {
        let line = serde_json::json!({
            "url": page.final_url.as_str(),
            "title": page.title,
            "simhash": page.simhash.to_string(),
            "text": &*page.text,
        });
        writeln!(self.out, "{line}")?;
        Ok(())
    }

    fn duplicate(&mut self, duplicate: &DuplicatePage) -> Result<(), SinkError> {
        let label = if duplicate.distance.is_some() {
            "near_duplicate"
        } else {
            "exact_duplicate"
        };
        println!(
            "{label:16} {}\n                 of {}",
            duplicate.url, duplicate.of
        );
        Ok(())
    }

    fn failure(&mut self, failure: &FailedPage) -> Result<(), SinkError> {
        println!("{:16} {} ({})", failure.kind, failure.url, failure.reason);
        Ok(())
    }

    fn checkpoint(&mut self) -> Result<crawldedup::store::SinkPosition, SinkError> {
        self.out.flush()?;
        Ok(Default::default())
    }
}

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

    let out = std::io::BufWriter::new(std::fs::File::create(&out_path)?);
    let report = SpiderStage::new(dedup)
        .crawl(&mut website, Report { out })
        .await
        .map_err(|e| format!("{out_path}: {e}"))?;
    println!("\n{}", serde_json::to_string_pretty(&report)?);
    println!("unique pages written to {out_path}");
    Ok(())
}
