//! Before a stage opens: the memory its settings ask for, against what the machine can give.
//!
//! `url_filter.expected_urls` sizes the URL filter's bits and `dedup.expected_pages` the
//! room the index makes at open. Both are allocated whole, and an allocation the machine
//! cannot give aborts the process (Rust's allocator does not return an error), after a
//! server has said it listens, or halfway through a crawl. So the sizes are checked first,
//! against the least of: the memory the kernel reports available (`MemAvailable`), the
//! cgroup's limit less what it holds, and the address-space limit (`ulimit -v`) less what
//! the process maps. A setting over it is refused in one line naming the key and the bytes.

use std::path::Path;

use crate::config::{Config, ConfigError};
use crate::index::SimhashIndex;

/// Checks the memory that opening a stage on `state_dir` with `config` will allocate.
pub(crate) fn check(state_dir: &Path, config: &Config) -> Result<(), ConfigError> {
    let Some((available, what)) = available() else {
        return Ok(());
    };
    let mut needs = Vec::new();
    // A saved filter keeps its own size; only a new one is sized by the configuration.
    if !state_dir.join(crate::urls::seen::SEEN_FILE).exists() {
        let seen = config.url_filter.seen_config();
        let layer = seen.first_layer().map_err(|e| ConfigError {
            source_name: "configuration".into(),
            key: "url_filter.expected_urls".into(),
            problem: e.to_string(),
        })?;
        let generations = if seen.expire_after.is_some() {
            u64::from(seen.live_generations())
        } else {
            1
        };
        needs.push((
            "url_filter.expected_urls",
            config.url_filter.expected_urls,
            layer.m.div_ceil(8).saturating_mul(generations),
            "the URL filter",
        ));
    }
    if config.dedup.expected_pages > 0 {
        let index = super::index_config(config);
        needs.push((
            "dedup.expected_pages",
            config.dedup.expected_pages,
            SimhashIndex::memory_needed(&index, config.dedup.expected_pages),
            "the index's tables",
        ));
    }
    let total: u64 = needs.iter().map(|n| n.2).sum();
    if total <= available {
        return Ok(());
    }
    let (key, value, bytes, part) = needs
        .iter()
        .copied()
        .max_by_key(|n| n.2)
        .unwrap_or(("", 0, 0, ""));
    Err(ConfigError {
        source_name: "configuration".into(),
        key: key.into(),
        problem: format!(
            "{value} needs {} of memory for {part}{}, and this machine can give {} ({what}): \
             lower it",
            gib(bytes),
            if needs.len() > 1 {
                format!(" ({} with the rest)", gib(total))
            } else {
                String::new()
            },
            gib(available)
        ),
    })
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// The least of the limits named in the module documentation, and which one it is; `None`
/// where none can be read.
fn available() -> Option<(u64, &'static str)> {
    let mut limits: Vec<(u64, &'static str)> = Vec::new();
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    if let Some(kb) = field_kb(&meminfo, "MemAvailable:") {
        limits.push((kb * 1024, "available memory"));
    }
    let cgroup = |name: &str| {
        std::fs::read_to_string(Path::new("/sys/fs/cgroup").join(name))
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
    };
    if let (Some(max), Some(current)) = (cgroup("memory.max"), cgroup("memory.current")) {
        limits.push((max.saturating_sub(current), "the cgroup's memory limit"));
    }
    if let Some(limit) = address_space_limit() {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let mapped = field_kb(&status, "VmSize:").unwrap_or(0) * 1024;
        limits.push((
            limit.saturating_sub(mapped),
            "the address-space limit, ulimit -v",
        ));
    }
    limits.into_iter().min_by_key(|l| l.0)
}

/// The number of kB on the line of `text` that starts with `name`.
fn field_kb(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(target_os = "linux")]
fn address_space_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into the struct it is given.
    let read = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) };
    (read == 0 && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
}

#[cfg(not(target_os = "linux"))]
fn address_space_limit() -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_meminfo_field_reads_in_kilobytes() {
        let text = "MemTotal:       24576000 kB\nMemAvailable:   20000000 kB\n";
        assert_eq!(field_kb(text, "MemAvailable:"), Some(20_000_000));
        assert_eq!(field_kb(text, "SwapFree:"), None);
    }

    #[test]
    fn the_defaults_fit_and_a_filter_past_the_machine_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        check(dir.path(), &Config::default()).unwrap();
        let mut config = Config::default();
        config.url_filter.expected_urls = 1 << 50;
        let e = check(dir.path(), &config).unwrap_err();
        assert_eq!(e.key, "url_filter.expected_urls");
        assert!(e.problem.contains("needs"), "{}", e.problem);
    }
}
