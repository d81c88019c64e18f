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
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::urls::{CanonicalOptions, ParamPattern, SeenConfig};

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
}

/// `[crawl]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
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
        }
    }
}

/// `[scope]`
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
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
pub struct FocusConfig {
    /// Topic words; when given, the frontier is best-first by relevance.
    pub keywords: Vec<String>,
}

/// `[url_filter]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
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
        }
    }
}

/// `[dedup]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DedupConfig {
    /// Simhashes within this many bits are near-duplicate candidates (k), 0 to 8; every
    /// candidate is confirmed on its sketch (see [`crate::dedup`]).
    pub max_distance: u32,
    /// Main texts shorter than this (characters) are confirmed on resemblance alone.
    pub short_text_chars: usize,
}

impl Default for DedupConfig {
    fn default() -> Self {
        DedupConfig {
            max_distance: 3,
            short_text_chars: 500,
        }
    }
}

/// `[output]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutputConfig {
    /// Write pages.jsonl and duplicates.jsonl.
    pub jsonl: bool,
    /// Write WARC files under warc/.
    pub warc: bool,
    /// Start a new WARC file past this many bytes.
    pub warc_rotate_bytes: u64,
}

impl Default for OutputConfig {
    fn default() -> Self {
        OutputConfig {
            jsonl: true,
            warc: true,
            warc_rotate_bytes: 1 << 30,
        }
    }
}

/// Largest Hamming distance the index supports: beyond it simhash stops separating
/// near-duplicates from unrelated pages and the tables multiply.
pub const MAX_DISTANCE_LIMIT: u32 = 8;

impl Config {
    /// Reads and checks a configuration file, with `overrides` (`section.key=value`)
    /// applied on top.
    pub fn load(path: &Path, overrides: &[String]) -> Result<Config, ConfigError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            source_name: name.clone(),
            key: String::new(),
            problem: format!("cannot read: {e}"),
        })?;
        Config::from_toml_str(&text, &name, overrides)
    }

    /// Parses and checks configuration text; `name` is used in errors.
    pub fn from_toml_str(
        text: &str,
        name: &str,
        overrides: &[String],
    ) -> Result<Config, ConfigError> {
        let mut doc: toml::Table = text.parse().map_err(|e: toml::de::Error| ConfigError {
            source_name: name.to_string(),
            key: String::new(),
            problem: one_line(&toml_error_with_line(text, &e)),
        })?;
        for item in overrides {
            apply_override(&mut doc, item)?;
        }
        let config: Config =
            serde_path_to_error::deserialize(toml::Value::Table(doc)).map_err(|e| {
                let key = e.path().to_string();
                ConfigError {
                    source_name: name.to_string(),
                    key: if key == "." { String::new() } else { key },
                    problem: one_line(e.inner().message()),
                }
                .blamed_on(overrides)
            })?;
        config.validate(name).map_err(|e| e.blamed_on(overrides))?;
        Ok(config)
    }

    /// Checks values that the types alone do not pin down.
    pub fn validate(&self, name: &str) -> Result<(), ConfigError> {
        let err = |key: &str, problem: String| ConfigError {
            source_name: name.to_string(),
            key: key.to_string(),
            problem,
        };
        let c = &self.crawl;
        if c.concurrency == 0 {
            return Err(err("crawl.concurrency", "must be at least 1".into()));
        }
        if c.per_host_concurrency == 0 {
            return Err(err(
                "crawl.per_host_concurrency",
                "must be at least 1".into(),
            ));
        }
        if c.connect_timeout_ms == 0 {
            return Err(err("crawl.connect_timeout_ms", "must be at least 1".into()));
        }
        if c.request_timeout_ms == 0 {
            return Err(err("crawl.request_timeout_ms", "must be at least 1".into()));
        }
        if c.max_body_bytes == 0 {
            return Err(err("crawl.max_body_bytes", "must be at least 1".into()));
        }
        if c.user_agent.trim().is_empty() {
            return Err(err("crawl.user_agent", "must not be empty".into()));
        }
        for (i, seed) in c.seeds.iter().enumerate() {
            if let Err(e) = crate::urls::Canonicalizer::default().canonicalize(seed) {
                return Err(err(&format!("crawl.seeds[{i}]"), format!("`{seed}`: {e}")));
            }
        }
        for (key, patterns) in [
            ("scope.include", &self.scope.include),
            ("scope.exclude", &self.scope.exclude),
        ] {
            for (i, p) in patterns.iter().enumerate() {
                if p.is_empty() {
                    return Err(err(&format!("{key}[{i}]"), "empty pattern".into()));
                }
                if let Err(e) = regex::Regex::new(p) {
                    return Err(err(
                        &format!("{key}[{i}]"),
                        format!(
                            "`{p}` is not a regular expression: {}",
                            one_line(&e.to_string())
                        ),
                    ));
                }
            }
        }
        for (i, file) in c.seed_files.iter().enumerate() {
            match std::fs::metadata(file) {
                Ok(meta) if meta.is_file() => {}
                Ok(_) => {
                    return Err(err(
                        &format!("crawl.seed_files[{i}]"),
                        format!("{}: not a file", file.display()),
                    ));
                }
                Err(e) => {
                    return Err(err(
                        &format!("crawl.seed_files[{i}]"),
                        format!("{}: {e}", file.display()),
                    ));
                }
            }
        }
        let u = &self.url_filter;
        if u.expected_urls == 0 {
            return Err(err("url_filter.expected_urls", "must be at least 1".into()));
        }
        if !(u.false_positive_rate > 0.0 && u.false_positive_rate < 1.0) {
            return Err(err(
                "url_filter.false_positive_rate",
                format!(
                    "must lie strictly between 0 and 1 (got {})",
                    u.false_positive_rate
                ),
            ));
        }
        if let Err(e) = crate::urls::BloomParams::new(u.expected_urls, u.false_positive_rate / 2.0)
        {
            return Err(err("url_filter.expected_urls", e.to_string()));
        }
        for (i, p) in u.strip_params.iter().enumerate() {
            if p.trim().is_empty() || p.trim() == "*" {
                return Err(err(
                    &format!("url_filter.strip_params[{i}]"),
                    format!("`{p}` would strip every parameter"),
                ));
            }
        }
        if self.dedup.max_distance > MAX_DISTANCE_LIMIT {
            return Err(err(
                "dedup.max_distance",
                format!(
                    "must be at most {MAX_DISTANCE_LIMIT} (got {})",
                    self.dedup.max_distance
                ),
            ));
        }
        if self.output.warc_rotate_bytes < 1024 * 1024 {
            return Err(err(
                "output.warc_rotate_bytes",
                "must be at least 1 MiB (1048576)".into(),
            ));
        }
        Ok(())
    }

    /// The configuration as TOML text.
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).unwrap_or_else(|e| format!("# cannot print: {e}\n"))
    }
}

/// Applies `section.key=value`; the value is read as TOML (`4`, `true`, `"text"`,
/// `["a", "b"]`), and as a plain string when it is not valid TOML.
fn apply_override(doc: &mut toml::Table, item: &str) -> Result<(), ConfigError> {
    let err = |key: &str, problem: String| ConfigError {
        source_name: "--set".to_string(),
        key: key.to_string(),
        problem,
    };
    let Some((key, raw)) = item.split_once('=') else {
        return Err(err(item, "expected SECTION.KEY=VALUE".into()));
    };
    let key = key.trim();
    let Some((section, field)) = key.split_once('.') else {
        return Err(err(
            key,
            "expected SECTION.KEY (for example crawl.max_depth)".into(),
        ));
    };
    let value = match format!("v = {raw}").parse::<toml::Table>() {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or(toml::Value::String(raw.to_string())),
        Err(_) => toml::Value::String(raw.trim().to_string()),
    };
    let table = doc
        .entry(section.to_string())
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    match table {
        toml::Value::Table(t) => {
            t.insert(field.to_string(), value);
            Ok(())
        }
        _ => Err(err(section, "is not a section".into())),
    }
}

fn toml_error_with_line(text: &str, e: &toml::de::Error) -> String {
    match e.span() {
        Some(span) => {
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            format!("line {line}: {}", e.message())
        }
        None => e.message().to_string(),
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Reads a seed file: one URL per line; blank lines and `#` comments are skipped.
pub fn read_seed_file(path: &Path) -> Result<Vec<String>, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
        source_name: path.display().to_string(),
        key: String::new(),
        problem: format!("cannot read seed file: {e}"),
    })?;
    Ok(parse_seed_list(&text))
}

/// The URLs of a seed list's text.
pub fn parse_seed_list(text: &str) -> Vec<String> {
    text.lines()
        .map(|line| {
            line.split_once('#')
                .map_or(line, |(before, _)| before)
                .trim()
        })
        .filter(|line| !line.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_file_gives_defaults() {
        let c = Config::from_toml_str("", "x.toml", &[]).unwrap();
        assert_eq!(c, Config::default());
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
