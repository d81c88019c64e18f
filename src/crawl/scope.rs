//! Where a crawl may go (scope rules) and which link it takes first (focus keywords).

use url::Url;

use super::error::CrawlError;
use crate::config::Config;

/// Where a crawl may go.
pub(super) struct Scope {
    pub(super) domains: Vec<(String, bool)>,
    pub(super) include: Vec<regex::Regex>,
    pub(super) exclude: Vec<regex::Regex>,
}

impl Scope {
    pub(super) fn new(config: &Config, seeds: &[Url]) -> Result<Scope, CrawlError> {
        let mut domains: Vec<(String, bool)> = config
            .scope
            .allowed_domains
            .iter()
            .map(|d| match d.strip_prefix('=') {
                Some(exact) => (exact.to_ascii_lowercase(), true),
                None => (d.to_ascii_lowercase(), false),
            })
            .collect();
        if domains.is_empty() {
            domains = seeds
                .iter()
                .filter_map(|s| s.host_str().map(|h| (h.to_string(), false)))
                .collect();
        }
        let compile = |patterns: &[String], key: &str| {
            patterns
                .iter()
                .map(|p| {
                    regex::Regex::new(p)
                        .map_err(|e| CrawlError::Setup(format!("scope.{key}: `{p}`: {e}")))
                })
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(Scope {
            domains,
            include: compile(&config.scope.include, "include")?,
            exclude: compile(&config.scope.exclude, "exclude")?,
        })
    }

    pub(super) fn allows(&self, url: &Url) -> Result<(), String> {
        let host = url.host_str().unwrap_or("");
        let in_domain = self.domains.iter().any(|(d, exact)| {
            host == d
                || (!exact
                    && host.len() > d.len()
                    && host.ends_with(d.as_str())
                    && host.as_bytes()[host.len() - d.len() - 1] == b'.')
        });
        if !in_domain {
            return Err(format!("{host} is outside the allowed domains"));
        }
        if !self.include.is_empty() && !self.include.iter().any(|r| r.is_match(url.as_str())) {
            return Err("matches no scope.include pattern".into());
        }
        if let Some(r) = self.exclude.iter().find(|r| r.is_match(url.as_str())) {
            return Err(format!("matches scope.exclude `{}`", r.as_str()));
        }
        Ok(())
    }
}

/// Depths at or past this one all get the lowest breadth-first priority.
const DEEPEST_PRIORITY_DEPTH: u32 = 1000;

/// What one point of focus relevance weighs against depth: more than every depth step
/// together, so relevance decides and depth only breaks ties.
const RELEVANCE_WEIGHT: u32 = DEEPEST_PRIORITY_DEPTH;

/// Link priority: with focus keywords, relevance of the anchor text, the URL's words and
/// the parent page's text; without, breadth first.
pub(super) fn priority(keywords: &[String], depth: u32, relevance: u32) -> u32 {
    let breadth = DEEPEST_PRIORITY_DEPTH.saturating_sub(depth.min(DEEPEST_PRIORITY_DEPTH));
    if keywords.is_empty() {
        breadth
    } else {
        relevance
            .saturating_mul(RELEVANCE_WEIGHT)
            .saturating_add(breadth)
    }
}

pub(super) fn relevance(keywords: &[String], text: &str) -> u32 {
    if keywords.is_empty() {
        return 0;
    }
    crate::fingerprint::tokens(text)
        .iter()
        .filter(|t| keywords.contains(t))
        .count() as u32
}
