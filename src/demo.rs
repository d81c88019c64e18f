//! The offline demonstration behind `crawldedup demo`: a bundled list of links, as a
//! crawler meets them on real sites, run through the URL layer.

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
    let seen = SeenUrls::new(SeenConfig {
        expected_urls: 1_000,
        ..SeenConfig::default()
    })?;
    let mut outcomes = Vec::new();
    for link in crate::config::parse_seed_list(DEMO_LINKS) {
        let outcome = match canon.canonicalize(&link) {
            Err(e) => LinkOutcome::Invalid(e.to_string()),
            Ok(url) => {
                if seen.insert(url.as_str())? {
                    LinkOutcome::Seen(url.into())
                } else {
                    LinkOutcome::New(url.into())
                }
            }
        };
        outcomes.push((link, outcome));
    }
    Ok(outcomes)
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
