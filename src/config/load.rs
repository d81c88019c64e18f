//! Reading a configuration: the file's TOML, the `--set` overrides applied to the parsed
//! document, and the checks of every value, each error on one line.

use std::path::Path;

use super::{Config, ConfigError, MAX_DISTANCE_LIMIT};

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
        self.check_crawl()
            .and_then(|()| self.check_scope())
            .and_then(|()| self.check_seed_files())
            .and_then(|()| self.check_url_filter())
            .and_then(|()| self.check_dedup())
            .and_then(|()| self.check_cluster())
            .and_then(|()| self.check_output())
            .map_err(|Invalid { key, problem }| ConfigError {
                source_name: name.to_string(),
                key,
                problem,
            })
    }

    /// The crawler's limits, timeouts, user agent and seeds.
    fn check_crawl(&self) -> Result<(), Invalid> {
        let c = &self.crawl;
        if c.concurrency == 0 {
            return Err(invalid("crawl.concurrency", "must be at least 1".into()));
        }
        if c.per_host_concurrency == 0 {
            return Err(invalid(
                "crawl.per_host_concurrency",
                "must be at least 1".into(),
            ));
        }
        if c.connect_timeout_ms == 0 {
            return Err(invalid(
                "crawl.connect_timeout_ms",
                "must be at least 1".into(),
            ));
        }
        if c.request_timeout_ms == 0 {
            return Err(invalid(
                "crawl.request_timeout_ms",
                "must be at least 1".into(),
            ));
        }
        if c.max_body_bytes == 0 {
            return Err(invalid("crawl.max_body_bytes", "must be at least 1".into()));
        }
        if c.user_agent.trim().is_empty() {
            return Err(invalid("crawl.user_agent", "must not be empty".into()));
        }
        for (i, seed) in c.seeds.iter().enumerate() {
            if let Err(e) = crate::urls::Canonicalizer::default().canonicalize(seed) {
                return Err(invalid(
                    &format!("crawl.seeds[{i}]"),
                    format!("`{seed}`: {e}"),
                ));
            }
        }
        Ok(())
    }

    /// The scope's patterns: each a regular expression.
    fn check_scope(&self) -> Result<(), Invalid> {
        for (key, patterns) in [
            ("scope.include", &self.scope.include),
            ("scope.exclude", &self.scope.exclude),
        ] {
            for (i, p) in patterns.iter().enumerate() {
                if p.is_empty() {
                    return Err(invalid(&format!("{key}[{i}]"), "empty pattern".into()));
                }
                if let Err(e) = regex::Regex::new(p) {
                    return Err(invalid(
                        &format!("{key}[{i}]"),
                        format!(
                            "`{p}` is not a regular expression: {}",
                            one_line(&e.to_string())
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The seed files: each one there, and a file.
    fn check_seed_files(&self) -> Result<(), Invalid> {
        let c = &self.crawl;
        for (i, file) in c.seed_files.iter().enumerate() {
            match std::fs::metadata(file) {
                Ok(meta) if meta.is_file() => {}
                Ok(_) => {
                    return Err(invalid(
                        &format!("crawl.seed_files[{i}]"),
                        format!("{}: not a file", file.display()),
                    ));
                }
                Err(e) => {
                    return Err(invalid(
                        &format!("crawl.seed_files[{i}]"),
                        format!("{}: {e}", file.display()),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The URL filter's sizing, generations and stripped parameters.
    fn check_url_filter(&self) -> Result<(), Invalid> {
        let u = &self.url_filter;
        if u.expected_urls == 0 {
            return Err(invalid(
                "url_filter.expected_urls",
                "must be at least 1".into(),
            ));
        }
        if !(u.false_positive_rate > 0.0 && u.false_positive_rate < 1.0) {
            return Err(invalid(
                "url_filter.false_positive_rate",
                format!(
                    "must lie strictly between 0 and 1 (got {})",
                    u.false_positive_rate
                ),
            ));
        }
        if let Err(e) = crate::urls::BloomParams::new(u.expected_urls, u.false_positive_rate / 2.0)
        {
            return Err(invalid("url_filter.expected_urls", e.to_string()));
        }
        if !(2..=64).contains(&u.recrawl_generations) {
            return Err(invalid(
                "url_filter.recrawl_generations",
                format!("must lie between 2 and 64 (got {})", u.recrawl_generations),
            ));
        }
        for (i, p) in u.strip_params.iter().enumerate() {
            if p.trim().is_empty() || p.trim() == "*" {
                return Err(invalid(
                    &format!("url_filter.strip_params[{i}]"),
                    format!("`{p}` would strip every parameter"),
                ));
            }
        }
        Ok(())
    }

    /// The page stage's distance and size.
    fn check_dedup(&self) -> Result<(), Invalid> {
        if self.dedup.max_distance > MAX_DISTANCE_LIMIT {
            return Err(invalid(
                "dedup.max_distance",
                format!(
                    "must be at most {MAX_DISTANCE_LIMIT} (got {})",
                    self.dedup.max_distance
                ),
            ));
        }
        // Document ids are 32 bits wide, one of them kept free.
        let most_pages = u64::from(u32::MAX - 1);
        if self.dedup.expected_pages > most_pages {
            return Err(invalid(
                "dedup.expected_pages",
                format!(
                    "must be at most {most_pages}, the most pages one index holds (got {})",
                    self.dedup.expected_pages
                ),
            ));
        }
        Ok(())
    }

    /// A cluster's worker, name, timings and nodes.
    fn check_cluster(&self) -> Result<(), Invalid> {
        let k = &self.cluster;
        if k.enabled() && (k.worker_id.is_empty() || k.worker_id.contains(['{', '}', ' '])) {
            return Err(invalid(
                "cluster.worker_id",
                format!(
                    "`{}`: every worker of a cluster needs its own id, with no braces or \
                     spaces (--worker-id ID, or cluster.worker_id)",
                    k.worker_id
                ),
            ));
        }
        // The rest is checked whether or not the cluster is on: `config` shows what
        // `crawl` would refuse, and a value set for later is right when it is used.
        if !(1..=1000).contains(&k.weight) {
            return Err(invalid(
                "cluster.weight",
                format!("must lie between 1 and 1000 (got {})", k.weight),
            ));
        }
        if k.name.is_empty() || k.name.contains(['{', '}', ' ']) {
            return Err(invalid(
                "cluster.name",
                format!("`{}`: must be non-empty, no braces or spaces", k.name),
            ));
        }
        if k.heartbeat_ttl_ms < 300 {
            return Err(invalid(
                "cluster.heartbeat_ttl_ms",
                format!("must be at least 300 (got {})", k.heartbeat_ttl_ms),
            ));
        }
        if !(1..=10_000).contains(&k.wait_for_workers) {
            return Err(invalid(
                "cluster.wait_for_workers",
                format!("must lie between 1 and 10000 (got {})", k.wait_for_workers),
            ));
        }
        for (i, node) in k.nodes.iter().enumerate() {
            if !node.starts_with("redis://") && !node.starts_with("rediss://") {
                return Err(invalid(
                    &format!("cluster.nodes[{i}]"),
                    format!("`{node}`: not a redis:// address"),
                ));
            }
        }
        Ok(())
    }

    /// The outputs.
    fn check_output(&self) -> Result<(), Invalid> {
        if self.output.warc_rotate_bytes < 1024 * 1024 {
            return Err(invalid(
                "output.warc_rotate_bytes",
                "must be at least 1 MiB (1048576)".into(),
            ));
        }
        Ok(())
    }

    /// The configuration as TOML text.
    pub fn to_toml(&self) -> String {
        let text =
            toml::to_string_pretty(self).unwrap_or_else(|e| format!("# cannot print: {e}\n"));
        // Optional keys that are unset print as a comment at the end of their section,
        // with what leaving them out means, so that every key shows.
        let unset = [
            (
                "url_filter",
                self.url_filter.recrawl_after.is_none(),
                "# recrawl_after = \"30d\"  (unset: a URL seen once is never fetched again)",
            ),
            (
                "dedup",
                self.dedup.retention.is_none(),
                "# retention = \"48h\"  (unset: every stored page counts for the whole crawl)",
            ),
        ];
        let mut out = String::with_capacity(text.len() + 256);
        let mut section = "";
        let close = |out: &mut String, section: &str| {
            for (name, missing, line) in &unset {
                if *missing && *name == section {
                    out.push_str(line);
                    out.push('\n');
                }
            }
        };
        for line in text.lines() {
            if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                // The blank line before a section belongs to it: the comment goes before.
                if out.ends_with("\n\n") {
                    out.pop();
                    close(&mut out, section);
                    out.push('\n');
                } else {
                    close(&mut out, section);
                }
                section = name;
            }
            out.push_str(line);
            out.push('\n');
        }
        close(&mut out, section);
        out
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

/// A value the types let through and the configuration must not: the key and the problem.
struct Invalid {
    key: String,
    problem: String,
}

fn invalid(key: &str, problem: String) -> Invalid {
    Invalid {
        key: key.to_string(),
        problem,
    }
}
