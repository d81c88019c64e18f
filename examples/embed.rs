//! A crawler of one's own with the page stage in it: a plain reqwest loop, breadth-first,
//! on one host. The stage decides which links to fetch (URL verdicts) and which pages to
//! keep (page verdicts); the loop does the rest.
//!
//! ```text
//! cargo run --release --example embed                    # the bundled fixture site
//! cargo run --release --example embed -- https://example.com/ 50
//! ```
//!
//! What a real crawler adds (and `crawldedup crawl` has): robots.txt, politeness delays,
//! retries, an SSRF guard, body caps, a persistent frontier and outputs.

use std::collections::VecDeque;

use crawldedup::{Dedup, PageVerdict, UrlVerdict};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let fixture;
    let seed = match args.next() {
        Some(url) => url,
        None => {
            fixture =
                crawldedup::fixture::serve(crawldedup::fixture::Site::without_traps(7, 5)).await?;
            fixture.url("/")
        }
    };
    let max_pages: usize = args.next().map(|n| n.parse()).transpose()?.unwrap_or(200);

    let state = tempfile::tempdir()?;
    let dedup = Dedup::builder().expected_urls(100_000).open(state.path())?;
    let client = reqwest::Client::builder()
        .user_agent("crawldedup-embed-example/0.1")
        .timeout(std::time::Duration::from_secs(10))
        .build()?;

    let mut queue = VecDeque::new();
    match dedup.check_url(&seed)? {
        UrlVerdict::New(url) => queue.push_back(url),
        other => return Err(format!("seed {seed}: {}", other.label()).into()),
    }
    let host = queue[0].host_str().map(str::to_string);
    let (mut fetched, mut kept, mut repeats) = (0, 0, 0);
    while let Some(url) = queue.pop_front() {
        if fetched == max_pages {
            break;
        }
        let response = match client.get(url.clone()).send().await {
            Ok(r) if r.status().is_success() => r,
            Ok(r) => {
                println!("{:>3}  {url}", r.status().as_u16());
                continue;
            }
            Err(e) => {
                println!("err  {url}: {e}");
                continue;
            }
        };
        fetched += 1;
        let final_url = response.url().clone();
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body = response.bytes().await?;
        let (verdict, page) =
            dedup.check_page_extracted(final_url.as_str(), &body, content_type.as_deref())?;
        if let Some(duplicate) = verdict.duplicate() {
            repeats += 1;
            println!("dup  {url}\n     = {}", duplicate.of.name);
        } else if let PageVerdict::Unique { simhash, .. } = &verdict {
            kept += 1;
            println!(
                "keep {url}  {simhash}  {:?}",
                page.title.clone().unwrap_or_default()
            );
        } else {
            // No main text (empty, not HTML, all boilerplate).
            println!("none {url}");
        }
        // A duplicate's links are followed too: a copy can link where its original does not
        // (a mirror's own pages), and the seen-URL filter drops the links already queued.
        for link in page.links.iter().filter(|l| !l.nofollow) {
            if let UrlVerdict::New(next) = dedup.check_link(&final_url, &link.url)? {
                if next.host_str().map(str::to_string) == host {
                    queue.push_back(next);
                }
            }
        }
    }
    dedup.checkpoint()?;
    let stats = dedup.stats();
    println!(
        "\nfetched {fetched}, kept {kept}, duplicates {repeats}; links to URLs already seen (variants included), not fetched: {}",
        stats.urls_seen
    );
    Ok(())
}
