//! The Redis key schema of a crawl on several machines, in one place: which keys a crawl
//! named NAME keeps per worker ID, and the hash tags that put the keys one command touches
//! together into one cluster slot.
// The crawler's worker (crawl::cluster) is the user: without the crawler, unused.
#![cfg_attr(not(feature = "crawler"), allow(dead_code))]

use url::Url;

/// The mark that document `id` of the shared index `name` is committed: its worker's
/// checkpoint holds its page.
pub(crate) fn commit_key(name: &str, id: u64) -> String {
    format!("{name}:nd:c:{{{id}}}")
}

/// Of documents `ids` of the shared index of crawl `name`, how many are committed.
pub fn committed(
    cluster: &super::filter::Cluster,
    name: &str,
    ids: &[u64],
) -> Result<usize, super::filter::ClusterError> {
    if ids.is_empty() {
        return Ok(0);
    }
    let mut pipe = redis::cluster::cluster_pipe();
    for &id in ids {
        pipe.cmd("EXISTS").arg(commit_key(name, id));
    }
    let found: Vec<i64> = cluster.with(|con| pipe.query(con))?;
    Ok(found.iter().filter(|&&n| n == 1).count())
}

/// The hash of a worker's pending and in-flight URLs, mirrored after each checkpoint.
pub(crate) fn pending_key(name: &str, id: &str) -> String {
    format!("{name}:pending:{{{id}}}")
}

/// The list of links a worker found and asked the filter about since its last checkpoint.
pub(crate) fn recent_key(name: &str, id: &str) -> String {
    format!("{name}:recent:{{{id}}}")
}

/// The mark that a gone worker's pending URLs were moved to the others.
pub(crate) fn taken_key(name: &str, id: &str) -> String {
    format!("{name}:taken:{{{id}}}")
}

/// A worker's idle mark, in the crawl's slot (read with every other worker's at once).
pub(crate) fn idle_key(name: &str, id: &str) -> String {
    format!("{{{name}}}:idle:{id}")
}

/// The set of every worker id the crawl has known, in the crawl's slot.
pub(crate) fn known_key(name: &str) -> String {
    format!("{{{name}}}:known")
}

/// An entry of the recent list: `DEPTH PRIORITY URL`.
pub(crate) fn recent_entry(url: &Url, depth: u32, priority: u32) -> String {
    format!("{depth} {priority} {url}")
}

/// An entry of the recent list read back (`None` when it is not one).
pub(crate) fn parse_recent(line: &str) -> Option<(Url, u32, u32)> {
    let mut parts = line.splitn(3, ' ');
    let depth = parts.next()?.parse().ok()?;
    let priority = parts.next()?.parse().ok()?;
    let url = Url::parse(parts.next()?).ok()?;
    Some((url, depth, priority))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hash tag of a key: what Redis Cluster hashes to choose its slot.
    fn tag(key: &str) -> &str {
        match key.find('{').and_then(|open| {
            let close = key[open + 1..].find('}')?;
            (close > 0).then(|| &key[open + 1..open + 1 + close])
        }) {
            Some(tag) => tag,
            None => key,
        }
    }

    #[test]
    fn a_workers_own_keys_share_its_slot_and_the_crawls_keys_share_the_crawls() {
        let (name, id) = ("crawl", "worker-7");
        for key in [
            pending_key(name, id),
            recent_key(name, id),
            taken_key(name, id),
        ] {
            assert!(key.starts_with("crawl:"), "{key}");
            assert_eq!(tag(&key), id, "{key}");
        }
        for key in [idle_key(name, id), idle_key(name, "other"), known_key(name)] {
            assert!(key.starts_with("{crawl}:"), "{key}");
            assert_eq!(tag(&key), name, "{key}");
        }
        // Two crawls on one cluster never share a key.
        assert_ne!(pending_key("a", id), pending_key("b", id));
        assert_ne!(known_key("a"), known_key("b"));
    }

    #[test]
    fn recent_entries_read_back_as_written() {
        let url = Url::parse("https://example.com/a b?q=1 2").unwrap();
        let line = recent_entry(&url, 3, 17);
        assert_eq!(parse_recent(&line), Some((url, 3, 17)));
        assert_eq!(parse_recent("3 x https://example.com/"), None);
        assert_eq!(parse_recent("3 17 not a url"), None);
        assert_eq!(parse_recent(""), None);
    }
}
