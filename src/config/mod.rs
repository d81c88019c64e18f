//! The configuration file (`crawler.toml`): schema, defaults, overrides and validation.
//!
//! Every key has a default, so an empty file is a valid configuration; the documented
//! defaults live in the repository's `crawler.toml`. Unknown keys are refused (a typo must
//! not silently fall back to a default), and every value is checked, with an error that
//! names the file, the key and the problem on one line.
//!
//! `--set SECTION.KEY=VALUE` overrides are applied to the parsed document before it is
//! checked, so an override is typed and validated exactly like the file.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::urls::{CanonicalOptions, ParamPattern, SeenConfig};

mod load;
mod seeds;
pub use seeds::{parse_seed_list, read_seed_file};

/// A configuration problem: which file, which key, what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ConfigError {
    /// The file (or `--set` for a command-line override).
    pub source_name: String,
    /// The key, dotted (`url_filter.false_positive_rate`); empty when the whole file is bad.
    pub key: String,
    /// What is wrong, in one line.
    pub problem: String,
}

impl ConfigError {
    /// The same error, naming the `--set KEY=VALUE` that set its key when one did (the
    /// last one, as the last one wins), instead of the file or the defaults.
    fn blamed_on(mut self, overrides: &[String]) -> ConfigError {
        let key = self.key.split('[').next().unwrap_or_default();
        let culprit = overrides.iter().rev().find(|item| {
            let set = item
                .split_once('=')
                .map_or(item.as_str(), |(k, _)| k)
                .trim();
            // The key itself, a table the override set, or (for an unknown key) the table
            // the override reached into.
            !key.is_empty()
                && (set == key
                    || key.starts_with(&format!("{set}."))
                    || set.starts_with(&format!("{key}.")))
        });
        if let Some(item) = culprit {
            self.source_name = format!("--set {item}");
        }
        self
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}: {}", self.source_name, self.problem)
        } else {
            write!(f, "{}: {}: {}", self.source_name, self.key, self.problem)
        }
    }
}

/// The whole configuration.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct Config {
    /// What to crawl and how hard.
    pub crawl: CrawlConfig,
    /// Which URLs are in scope.
    pub scope: ScopeConfig,
    /// Topic for best-first crawling.
    pub focus: FocusConfig,
    /// Canonicalization and the seen-URL filter.
    pub url_filter: UrlFilterConfig,
    /// The page stage.
    pub dedup: DedupConfig,
    /// What is written.
    pub output: OutputConfig,
    /// Crawling on several machines as one crawl (off unless `nodes` is set).
    pub cluster: ClusterConfig,
}

/// `[crawl]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct CrawlConfig {
    /// Start URLs.
    pub seeds: Vec<String>,
    /// Files of start URLs, one per line, `#` comments and blank lines allowed.
    pub seed_files: Vec<PathBuf>,
    /// Where the crawl's state lives (frontier, filters, index).
    pub state_dir: PathBuf,
    /// Where pages.jsonl, duplicates.jsonl and the WARC files go.
    pub out_dir: PathBuf,
    /// Stop after this many fetched pages (0 = no limit), counted over every run of the
    /// crawl: a resumed crawl counts what earlier runs fetched.
    pub max_pages: u64,
    /// Follow links at most this many hops from a seed.
    pub max_depth: u32,
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Requests in flight at once to one host.
    pub per_host_concurrency: usize,
    /// Pause between two requests to one host, in milliseconds.
    pub per_host_delay_ms: u64,
    /// TCP connect timeout, in milliseconds.
    pub connect_timeout_ms: u64,
    /// Whole-request timeout, in milliseconds.
    pub request_timeout_ms: u64,
    /// Largest body read, after decompression, in bytes.
    pub max_body_bytes: u64,
    /// The User-Agent header, with a contact URL.
    pub user_agent: String,
    /// Obey robots.txt.
    pub respect_robots: bool,
    /// Allow hosts that resolve to loopback, private, link-local or CGNAT addresses.
    pub allow_private_ips: bool,
    /// Whose links are followed: every fetched page's (the default), or only stored
    /// pages'.
    pub follow_links_of: FollowLinksOf,
}

/// `crawl.follow_links_of`: which fetched pages have their links followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FollowLinksOf {
    /// Every 2xx HTML page: stored, duplicate or without main text. A duplicate's menu
    /// or a gallery hub may be the only way to a page, so nothing reachable is missed; a
    /// link already seen costs one filter check.
    #[default]
    Every,
    /// Stored pages only (and an unchanged page fetched again by a recrawl): fewer
    /// filter checks, but a page linked only from a duplicate or from a page without
    /// main text is never fetched.
    Stored,
}

impl Default for CrawlConfig {
    fn default() -> Self {
        CrawlConfig {
            seeds: Vec::new(),
            seed_files: Vec::new(),
            state_dir: PathBuf::from("crawl-state"),
            out_dir: PathBuf::from("crawl-out"),
            max_pages: 0,
            max_depth: 8,
            concurrency: 32,
            per_host_concurrency: 2,
            per_host_delay_ms: 250,
            connect_timeout_ms: 10_000,
            request_timeout_ms: 30_000,
            max_body_bytes: 10 * 1024 * 1024,
            user_agent: concat!(
                "crawldedup/",
                env!("CARGO_PKG_VERSION"),
                " (+https://github.com/crawldedup/crawldedup)"
            )
            .to_string(),
            respect_robots: true,
            allow_private_ips: false,
            follow_links_of: FollowLinksOf::Every,
        }
    }
}

/// `[scope]`
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct ScopeConfig {
    /// Hosts to stay on; `example.com` also admits its subdomains, `=example.com` only itself.
    /// Empty: the seeds' hosts.
    pub allowed_domains: Vec<String>,
    /// Regular expressions; when any is given, a URL must match one.
    pub include: Vec<String>,
    /// Regular expressions; a URL that matches one is skipped.
    pub exclude: Vec<String>,
}

/// `[focus]`
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct FocusConfig {
    /// Topic words; when given, the frontier is best-first by relevance.
    pub keywords: Vec<String>,
}

/// `[url_filter]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct UrlFilterConfig {
    /// Expected number of distinct URLs (n).
    pub expected_urls: u64,
    /// Bound on the false-positive rate (p), strictly between 0 and 1.
    pub false_positive_rate: f64,
    /// Query and path parameters to drop: exact names or `prefix*`.
    pub strip_params: Vec<String>,
    /// Confirm "maybe seen" answers against exact hashes on disk.
    pub confirm_on_disk: bool,
    /// Treat `www.example.com` as `example.com`.
    pub fold_www: bool,
    /// Treat `/dir/index.html` as `/dir/`.
    pub fold_index: bool,
    /// A URL seen this long ago is new again (`"30d"`): the filter forgets it, and the
    /// crawler fetches it the next time a link leads there. Off by default: a URL seen
    /// once is skipped for good. `expected_urls` then counts the URLs of one such window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recrawl_after: Option<Window>,
    /// Generations of the expiring filter per `recrawl_after` (2 to 64): a URL comes due
    /// between `recrawl_after` and `recrawl_after * (1 + 1/g)` after it was seen.
    pub recrawl_generations: u32,
}

impl Default for UrlFilterConfig {
    fn default() -> Self {
        let seen = SeenConfig::default();
        UrlFilterConfig {
            expected_urls: seen.expected_urls,
            false_positive_rate: seen.false_positive_rate,
            strip_params: crate::urls::canonical::DEFAULT_STRIP_PARAMS
                .iter()
                .map(|s| s.to_string())
                .collect(),
            confirm_on_disk: seen.confirm_on_disk,
            fold_www: false,
            fold_index: false,
            recrawl_after: None,
            recrawl_generations: seen.generations,
        }
    }
}

impl UrlFilterConfig {
    /// The canonicalization options this section describes.
    pub fn canonical_options(&self) -> CanonicalOptions {
        CanonicalOptions {
            strip_params: self
                .strip_params
                .iter()
                .map(|p| ParamPattern::parse(p))
                .collect(),
            fold_www: self.fold_www,
            fold_index: self.fold_index,
        }
    }

    /// The filter sizing this section describes.
    pub fn seen_config(&self) -> SeenConfig {
        SeenConfig {
            expected_urls: self.expected_urls,
            false_positive_rate: self.false_positive_rate,
            confirm_on_disk: self.confirm_on_disk,
            expire_after: self.recrawl_after.map(|w| w.0),
            generations: self.recrawl_generations,
        }
    }
}

/// `[dedup]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct DedupConfig {
    /// Simhashes within this many bits are near-duplicate candidates (k), 0 to 8; every
    /// candidate is confirmed on its sketch (see [`crate::dedup`]).
    pub max_distance: u32,
    /// Main texts shorter than this (characters; a character of a script without spaces
    /// counts as the characters its share of a word takes, about 3.7 a Han character: see
    /// [`crate::Fingerprint::chars`]) are confirmed on resemblance alone.
    pub short_text_chars: usize,
    /// Pages the index makes room for when it opens, so that its tables never grow on the
    /// way there (each growth re-places every entry: about a second of work at 10 M pages,
    /// a group of tables at a time while decisions wait). The memory of
    /// that many pages' tables is taken from the start. 0 (the default): the tables grow
    /// as pages come.
    pub expected_pages: u64,
    /// Whether the index writes snapshots of itself in the background after checkpoints,
    /// so that the open after a crash maps the last one and reads only the pages after it
    /// (at 10 M pages, a few times faster than rebuilding the tables: docs/benchmarks.md,
    /// the index table). On by default; a bulk load that inserts as fast as it can on two
    /// cores runs faster without them and rebuilds after a crash.
    pub background_snapshots: bool,
    /// Compare each page with the pages stored in this last window only (`"48h"`): older
    /// fingerprints stop matching and are swept from memory and disk. Off by default: every
    /// stored page counts for the whole crawl.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retention: Option<Window>,
    /// Learn what each host repeats on its pages (rails of headlines, teaser lists, menus
    /// and widgets that extraction left in) and leave it out of what is compared (see
    /// [`crate::dedup::template`]). On by default.
    pub host_templates: bool,
    /// Keep a host's learned template in the stored text (pages.jsonl, the sidecar's
    /// `include_text`); it is left out of the comparison either way. Off by default.
    pub store_template_text: bool,
}

impl Default for DedupConfig {
    fn default() -> Self {
        DedupConfig {
            max_distance: crate::index::DEFAULT_MAX_DISTANCE,
            short_text_chars: crate::index::SHORT_TEXT_CHARS as usize,
            expected_pages: 0,
            background_snapshots: true,
            retention: None,
            host_templates: true,
            store_template_text: false,
        }
    }
}

/// A time window written as text, `"48h"`, `"30d"`, `"90min"`, `"1h 30m"` (humantime's
/// syntax), at least one second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Window(pub std::time::Duration);

impl TryFrom<String> for Window {
    type Error = String;

    fn try_from(text: String) -> Result<Window, String> {
        let duration = humantime::parse_duration(text.trim())
            .map_err(|e| format!("`{text}` is not a duration such as \"48h\" or \"30d\": {e}"))?;
        if duration.as_secs() == 0 {
            return Err(format!("`{text}` is shorter than one second"));
        }
        Ok(Window(duration))
    }
}

impl From<Window> for String {
    fn from(window: Window) -> String {
        humantime::format_duration(window.0).to_string()
    }
}

pub use crate::store::OutputConfig;

/// `[cluster]`: several `crawldedup crawl` processes acting as one crawl through Redis
/// Cluster (see [`crate::cluster`]). Off while `nodes` is empty.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct ClusterConfig {
    /// Seed nodes of the Redis Cluster, `redis://HOST:PORT`; one is enough to find the rest.
    pub nodes: Vec<String>,
    /// This worker's id, unique among the live workers of the crawl (no braces).
    pub worker_id: String,
    /// This worker's share of the hosts, relative to the others' (1 to 1000).
    pub weight: u32,
    /// The crawl's name: the prefix of its keys, so that one Redis Cluster can hold
    /// several crawls.
    pub name: String,
    /// A worker whose heartbeat is this old is gone and its hosts move (milliseconds;
    /// heartbeats go every third of it). Keep it above the cluster's failover time
    /// (`cluster-node-timeout` and the election).
    pub heartbeat_ttl_ms: u64,
    /// A Redis command that fails for a passing reason (a node down or failing over) is
    /// tried again for up to this long (milliseconds) before the worker stops with a
    /// checkpoint.
    pub failover_wait_ms: u64,
    /// The crawl starts when this many workers are alive: a worker joining before then
    /// waits (heartbeating) until they are, so that the first one up does not take every
    /// host. Once started, a worker joining later (a restart, one more machine) does not
    /// wait.
    pub wait_for_workers: u32,
    /// A worker still waiting for `wait_for_workers` after this long (milliseconds) leaves
    /// and stops with an error naming how many joined.
    pub start_wait_ms: u64,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        ClusterConfig {
            nodes: Vec::new(),
            worker_id: String::new(),
            weight: 1,
            name: "crawl".into(),
            heartbeat_ttl_ms: 10_000,
            failover_wait_ms: 30_000,
            wait_for_workers: 1,
            start_wait_ms: 600_000,
        }
    }
}

impl ClusterConfig {
    /// Whether the crawl runs as a worker of a cluster.
    pub fn enabled(&self) -> bool {
        !self.nodes.is_empty()
    }
}

pub use crate::index::MAX_DISTANCE_LIMIT;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_file_gives_defaults() {
        let c = Config::from_toml_str("", "x.toml", &[]).unwrap();
        assert_eq!(c, Config::default());
    }

    #[test]
    fn windows_read_as_durations_and_bad_ones_are_named() {
        let c = Config::from_toml_str(
            "[dedup]\nretention = \"48h\"\n[url_filter]\nrecrawl_after = \"30d\"\n",
            "c.toml",
            &[],
        )
        .unwrap();
        assert_eq!(
            c.dedup.retention,
            Some(Window(std::time::Duration::from_secs(48 * 3600)))
        );
        assert_eq!(
            c.url_filter.seen_config().expire_after,
            Some(std::time::Duration::from_secs(30 * 86_400))
        );
        // Written back as text that reads the same.
        let again = Config::from_toml_str(&c.to_toml(), "again.toml", &[]).unwrap();
        assert_eq!(again, c);
        // A cluster crawl keeps both windows too.
        let cluster = Config::from_toml_str(
            "[dedup]\nretention = \"1h\"\n[url_filter]\nrecrawl_after = \"1d\"\n\
             [cluster]\nnodes = [\"redis://127.0.0.1:7000\"]\nworker_id = \"a\"\n",
            "c.toml",
            &[],
        )
        .unwrap();
        assert!(cluster.dedup.retention.is_some() && cluster.url_filter.recrawl_after.is_some());
        for (text, key) in [
            ("[dedup]\nretention = \"two days\"\n", "dedup.retention"),
            ("[dedup]\nretention = \"0s\"\n", "dedup.retention"),
            (
                "[url_filter]\nrecrawl_after = 30\n",
                "url_filter.recrawl_after",
            ),
            (
                "[url_filter]\nrecrawl_generations = 1\n",
                "url_filter.recrawl_generations",
            ),
        ] {
            let e = Config::from_toml_str(text, "c.toml", &[]).unwrap_err();
            assert_eq!(e.key, key, "{e}");
            assert_eq!(e.to_string().lines().count(), 1, "{e}");
        }
    }

    #[test]
    fn unknown_key_is_named_with_its_section() {
        let e = Config::from_toml_str("[url_filter]\nfals_positive_rate = 0.1\n", "c.toml", &[])
            .unwrap_err();
        assert_eq!(e.source_name, "c.toml");
        assert!(
            e.problem.contains("unknown field `fals_positive_rate`"),
            "{e}"
        );
        assert!(e.to_string().starts_with("c.toml: "), "{e}");
        assert!(!e.to_string().contains('\n'));
    }

    #[test]
    fn out_of_range_rate_names_the_key() {
        let e = Config::from_toml_str("[url_filter]\nfalse_positive_rate = 1.5\n", "c.toml", &[])
            .unwrap_err();
        assert_eq!(e.key, "url_filter.false_positive_rate");
        assert!(e.problem.contains("strictly between 0 and 1"));
    }

    #[test]
    fn wrong_type_names_the_key() {
        let e =
            Config::from_toml_str("[crawl]\nmax_depth = \"deep\"\n", "c.toml", &[]).unwrap_err();
        assert_eq!(e.key, "crawl.max_depth");
    }

    #[test]
    fn overrides_are_typed_and_validated() {
        let c = Config::from_toml_str("", "c.toml", &["crawl.max_depth=4".into()]).unwrap();
        assert_eq!(c.crawl.max_depth, 4);
        let c = Config::from_toml_str("", "c.toml", &["crawl.user_agent=bot/1.0".into()]).unwrap();
        assert_eq!(c.crawl.user_agent, "bot/1.0");
        let e = Config::from_toml_str("", "c.toml", &["crawl.max_depth=deep".into()]).unwrap_err();
        assert_eq!(e.key, "crawl.max_depth");
        let e = Config::from_toml_str("", "c.toml", &["dedup.max_distance=12".into()]).unwrap_err();
        assert_eq!(e.key, "dedup.max_distance");
        let c =
            Config::from_toml_str("", "c.toml", &["dedup.expected_pages=10000000".into()]).unwrap();
        assert_eq!(c.dedup.expected_pages, 10_000_000);
        assert_eq!(crate::dedup::index_config(&c).reserve, 10_000_000);
        assert!(crate::dedup::index_config(&c).background_snapshots);
        let c = Config::from_toml_str("", "c.toml", &["dedup.background_snapshots=false".into()])
            .unwrap();
        assert!(!crate::dedup::index_config(&c).background_snapshots);
        let e = Config::from_toml_str("", "c.toml", &["dedup.expected_pages=5000000000".into()])
            .unwrap_err();
        assert_eq!(e.key, "dedup.expected_pages");
        assert!(e.to_string().contains("4294967294"), "{e}");
        let e = Config::from_toml_str("", "c.toml", &["nodot=1".into()]).unwrap_err();
        assert_eq!(e.source_name, "--set");
    }

    #[test]
    fn bad_patterns_and_missing_seed_files_are_refused_by_the_check() {
        let e = Config::from_toml_str("[scope]\ninclude = [\"(unclosed\"]\n", "c.toml", &[])
            .unwrap_err();
        assert_eq!(e.key, "scope.include[0]");
        assert!(e.problem.contains("not a regular expression"), "{e}");
        assert!(!e.to_string().contains('\n'), "{e}");
        let e = Config::from_toml_str(
            "[crawl]\nseed_files = [\"/nonexistent/seeds.txt\"]\n",
            "c.toml",
            &[],
        )
        .unwrap_err();
        assert_eq!(e.key, "crawl.seed_files[0]");
        assert!(e.problem.contains("/nonexistent/seeds.txt"), "{e}");
    }

    #[test]
    fn an_override_error_names_the_override_not_the_file() {
        for (item, key) in [
            ("crawl.bogus=1", "crawl.bogus"),
            ("crawl.concurrency=abc", "crawl.concurrency"),
            ("crawl.concurrency=0", "crawl.concurrency"),
            // An unknown table: the error's key is the table, shorter than what was set.
            ("nosuch.key=1", "nosuch"),
        ] {
            let e = Config::from_toml_str("", "defaults", &[item.into()]).unwrap_err();
            assert_eq!(e.key, key, "{item}");
            assert_eq!(e.source_name, format!("--set {item}"), "{item}");
            assert!(e.to_string().starts_with(&format!("--set {item}: {key}: ")));
        }
        // A problem in the file itself still names the file.
        let e = Config::from_toml_str(
            "[crawl]\nconcurrency = 0\n",
            "c.toml",
            &["crawl.max_depth=2".into()],
        )
        .unwrap_err();
        assert_eq!(e.source_name, "c.toml");
    }

    #[test]
    fn seed_lists_skip_comments_and_blank_lines() {
        let seeds = parse_seed_list("# list\n\nhttp://a/  # first\n  http://b/\n");
        assert_eq!(seeds, vec!["http://a/", "http://b/"]);
    }
}
