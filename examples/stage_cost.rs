//! CPU per page of the page stage's two heaviest steps (decode + extract, fingerprint) on
//! the fixture site's article pages (small pages, about 2.8 KB each), one core, five
//! rounds: the work a crawl does per page besides fetching and the index.
//!
//! ```text
//! cargo run --release --example stage_cost
//! ```

use std::time::Instant;

use crawldedup::fixture::{Reply, Site};

fn main() {
    let site = Site::without_traps(7, 1000);
    let pages: Vec<(url::Url, Vec<u8>)> = site
        .articles()
        .iter()
        .filter_map(|article| match site.respond(&article.path()) {
            Reply::Full { body, .. } => {
                let url = url::Url::parse(&format!("http://127.0.0.1{}", article.path())).ok()?;
                Some((url, body))
            }
            Reply::Stall { .. } => None,
        })
        .collect();
    let bytes: usize = pages.iter().map(|(_, body)| body.len()).sum();
    let count = pages.len() as f64;
    println!(
        "{} pages, {:.0} bytes each on average",
        pages.len(),
        bytes as f64 / count
    );
    for round in 1..=5 {
        let started = Instant::now();
        let extracted: Vec<_> = pages
            .iter()
            .map(|(url, body)| {
                crawldedup::content::extract_bytes(
                    body,
                    Some("text/html; charset=utf-8"),
                    Some(url),
                )
            })
            .collect();
        let extract = started.elapsed().as_secs_f64();
        let started = Instant::now();
        let fingerprints: Vec<_> = extracted
            .iter()
            .map(|page| crawldedup::Fingerprint::of(&page.text))
            .collect();
        let fingerprint = started.elapsed().as_secs_f64();
        let text: usize = extracted.iter().map(|page| page.text.len()).sum();
        println!(
            "round {round}: decode + extract {:5.1} us/page, fingerprint {:5.1} us/page ({:.0} bytes of text per page, {} fingerprints)",
            extract / count * 1e6,
            fingerprint / count * 1e6,
            text as f64 / count,
            fingerprints.len()
        );
    }
}
