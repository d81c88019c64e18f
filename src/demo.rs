//! The offline demonstration behind `crawldedup demo`: a bundled list of links, as a
//! crawler meets them on real sites, run through the URL layer; then a whole crawl of the
//! generated fixture site ([`crate::fixture`]) served on loopback.

use crate::urls::{Canonicalizer, SeenConfig, SeenError, SeenUrls};

/// Links as a crawler finds them: URL variants of a few pages, tracking parameters, session
/// ids, odd host spellings, and links that are not crawlable at all.
pub const DEMO_LINKS: &str = include_str!("../seeds/demo-links.txt");

/// What happened to one demo link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkOutcome {
    /// First time this resource was seen: a crawler fetches it.
    New(String),
    /// A variant of a resource already seen: dropped before any fetch.
    Seen(String),
    /// Not a crawlable URL.
    Invalid(String),
}

/// Runs the bundled links through canonicalization and the seen-URL filter, in order.
pub fn run_url_layer() -> Result<Vec<(String, LinkOutcome)>, SeenError> {
    let canon = Canonicalizer::default();
    let seen = SeenUrls::new(SeenConfig::new(1_000, 0.01))?;
    let mut outcomes = Vec::new();
    for link in crate::config::parse_seed_list(DEMO_LINKS) {
        let outcome = match canon.canonicalize(&link) {
            Err(e) => LinkOutcome::Invalid(e.to_string()),
            Ok(url) => {
                if seen.insert(url.as_str())? {
                    LinkOutcome::New(url.into())
                } else {
                    LinkOutcome::Seen(url.into())
                }
            }
        };
        outcomes.push((link, outcome));
    }
    Ok(outcomes)
}

/// What the demo crawl did.
#[derive(Debug, Clone)]
pub struct CrawlReport {
    /// The address the site was served on.
    pub site: String,
    /// The crawl's totals.
    pub summary: crate::crawl::CrawlSummary,
    /// Duplicates by verdict (`exact_duplicate`, `near_duplicate`).
    pub duplicates: std::collections::BTreeMap<String, u64>,
    /// Failures and skips by kind.
    pub failures: std::collections::BTreeMap<String, u64>,
    /// A few (duplicate URL, original URL, verdict) examples.
    pub examples: Vec<(String, String, String)>,
}

/// Articles per topic on the demo site.
pub const DEMO_ARTICLES_PER_TOPIC: usize = 10;

/// What stopped the demonstration's crawl.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DemoError {
    /// The fixture site could not be served on loopback.
    #[error("fixture site: {0}")]
    Site(#[source] std::io::Error),
    /// The temporary directory for the crawl's state and outputs could not be made.
    #[error("temporary directory: {0}")]
    TempDir(#[source] std::io::Error),
    /// The crawl failed.
    #[error(transparent)]
    Crawl(#[from] crate::CrawlError),
}

/// Serves the fixture site on 127.0.0.1 and crawls it into a temporary directory.
pub async fn run_crawl() -> Result<CrawlReport, DemoError> {
    let server = crate::fixture::serve(crate::fixture::Site::new(2025, DEMO_ARTICLES_PER_TOPIC))
        .await
        .map_err(DemoError::Site)?;
    let dir = tempfile::tempdir().map_err(DemoError::TempDir)?;
    let mut config = crate::Config::default();
    config.crawl.seeds = vec![server.url("/")];
    config.crawl.state_dir = dir.path().join("state");
    config.crawl.out_dir = dir.path().join("out");
    config.crawl.allow_private_ips = true;
    config.crawl.per_host_delay_ms = 0;
    config.crawl.per_host_concurrency = 1;
    config.crawl.request_timeout_ms = 1000;
    config.crawl.max_depth = 5;
    let summary = crate::crawl::crawl(&config, std::future::pending()).await?;
    let read = |name: &str| -> Vec<serde_json::Value> {
        std::fs::read_to_string(dir.path().join("out").join(name))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    };
    let mut duplicates = std::collections::BTreeMap::new();
    let mut examples = Vec::new();
    for d in read("duplicates.jsonl") {
        let verdict = d["verdict"].as_str().unwrap_or("").to_string();
        let count = duplicates.entry(verdict.clone()).or_insert(0u64);
        *count += 1;
        if *count <= 2 {
            examples.push((
                d["url"].as_str().unwrap_or("").to_string(),
                d["of"].as_str().unwrap_or("").to_string(),
                verdict,
            ));
        }
    }
    let mut failures = std::collections::BTreeMap::new();
    for f in read("failures.jsonl") {
        *failures
            .entry(f["kind"].as_str().unwrap_or("").to_string())
            .or_insert(0u64) += 1;
    }
    let site = server.url("/");
    server.shutdown().await;
    Ok(CrawlReport {
        site,
        summary,
        duplicates,
        failures,
        examples,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_links_collapse_to_few_resources() {
        let outcomes = run_url_layer().unwrap();
        let new = outcomes
            .iter()
            .filter(|(_, o)| matches!(o, LinkOutcome::New(_)))
            .count();
        let seen = outcomes
            .iter()
            .filter(|(_, o)| matches!(o, LinkOutcome::Seen(_)))
            .count();
        let invalid = outcomes
            .iter()
            .filter(|(_, o)| matches!(o, LinkOutcome::Invalid(_)))
            .count();
        assert_eq!((new, seen, invalid), (7, 13, 4), "{outcomes:#?}");
    }
}
