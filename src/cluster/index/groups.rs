//! The slot groups of the shared index's buckets: where a page's table and band buckets
//! live, so that its lookup and insert take one script call per node.
//!
//! A page appends its entry to one bucket of each table and each band and reads each of
//! them after its append: 26 buckets at the default plan. Tagged one by one (`{T.P}`), the
//! buckets spread over all the slots and a page cost 52 commands (`APPEND` then `GET` on
//! each), in a pipeline the client split per node. Tagged by *group*, every bucket of a
//! group lies in the group's one slot, so one Lua call ([`ENTER_AND_READ`]) appends to
//! and reads every bucket of the page in that group, and a page costs one call per group.
//!
//! Table `t`'s bucket for leading bits `P` is in group `(t + P) mod G`, and band `b`'s
//! bucket for band key `K` in group `(tables + b + K) mod G`, G the number of groups: a
//! page's buckets fall in every group when there are fewer groups than buckets, and the
//! buckets of all pages spread evenly over the groups when there are more (with a table
//! or band fixed to a group, a cluster of more masters than a page has buckets would keep
//! the masters beyond that count idle). The groups are chosen when the index is created: one per master of
//! the cluster as it is then, each a tag (`NAME.g7`) whose slot that master serves
//! ([`choose`]), kept under `NAME:nd:groups` so that every worker uses the same ones. A
//! page's lookup is then one call per master, and the buckets' memory is spread over the
//! masters. The cost: each group's buckets are one slot, which a resharding moves whole;
//! a node added after the index was created holds none of them (documents, digests and
//! verdicts are still tagged one by one and spread).

use super::super::filter::{Cluster, ClusterError};

/// Appends to and reads a page's buckets of one group, all in one slot. `KEYS`: for each
/// bucket, the key it is appended to, then the keys of the slices read (one without
/// retention). `ARGV[1]`: the number of buckets; then for each bucket its entry, the
/// expiry to set on the key appended to (milliseconds, `0` for none) and how many keys
/// are read. Returns the read keys' values in order (`nil` for a key that does not exist).
/// Each key is read after the append to it: of two near copies entered at once, at least
/// one finds the other (see the index's module documentation).
pub(super) const ENTER_AND_READ: &str = "local out = {} \
    local k = 1 \
    local a = 2 \
    for b = 1, tonumber(ARGV[1]) do \
        local key = KEYS[k] \
        k = k + 1 \
        redis.call('APPEND', key, ARGV[a]) \
        if ARGV[a + 1] ~= '0' then \
            redis.call('PEXPIRE', key, ARGV[a + 1], 'GT') \
            redis.call('PEXPIRE', key, ARGV[a + 1], 'NX') \
        end \
        for r = 1, tonumber(ARGV[a + 2]) do \
            out[#out + 1] = redis.call('GET', KEYS[k]) \
            k = k + 1 \
        end \
        a = a + 3 \
    end \
    return out";

/// The SHA-1 of [`ENTER_AND_READ`] in hex, as `EVALSHA` names it: a page's scripts are
/// sent by it, so that the script's 376 bytes do not go with each of a page's calls and a
/// master does not hash them each time (3% of Redis's CPU with `EVAL`, by a profile of the
/// cluster bench; docs/cluster.md). A master without it in its script cache (restarted, or
/// a replica promoted) answers `NOSCRIPT`, and the connection loads [`SCRIPTS`] on every
/// master and sends the round trip again ([`Cluster`]).
pub(super) fn enter_and_read_sha() -> &'static str {
    static SHA: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SHA.get_or_init(|| script_sha(ENTER_AND_READ))
}

/// The SHA-1 of a script in lower-case hex: its name in Redis's script cache.
fn script_sha(script: &str) -> String {
    use sha1::Digest;
    sha1::Sha1::digest(script.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The scripts sent by their SHA-1 (`EVALSHA`): what a connection loads on every master
/// when one answers `NOSCRIPT`.
pub(crate) const SCRIPTS: &[&str] = &[ENTER_AND_READ];

/// The group of a page's bucket: the `index`th of its buckets (tables first, then bands),
/// for leading bits or band key `key`, among `groups` groups.
pub fn group_of(index: usize, key: u64, groups: usize) -> usize {
    ((index as u64).wrapping_add(key) % groups.max(1) as u64) as usize
}

/// Groups tried for a master before a tag in its slots is given up on (each try a
/// `CLUSTER KEYSLOT`; a master serving a third of the slots takes three on average).
const TAG_TRIES: u32 = 4096;

fn groups_key(name: &str) -> String {
    format!("{name}:nd:groups")
}

/// The tags of index `name`'s groups: those it was created with, or, for a new index, one
/// per master of the cluster as it is now ([`choose`]), claimed with `SET NX` so that every
/// worker uses the first worker's.
pub(super) fn load_or_claim(cluster: &Cluster, name: &str) -> Result<Vec<String>, ClusterError> {
    let key = groups_key(name);
    let stored: Option<String> = cluster.with(|con| redis::cmd("GET").arg(&key).query(con))?;
    let stored = match stored {
        Some(stored) => stored,
        None => {
            let chosen = choose(cluster, name)?.join(" ");
            cluster.with(|con| {
                redis::cmd("SET")
                    .arg(&key)
                    .arg(&chosen)
                    .arg("NX")
                    .exec(con)?;
                redis::cmd("GET").arg(&key).query(con)
            })?
        }
    };
    let tags: Vec<String> = stored.split(' ').map(str::to_string).collect();
    if tags.iter().any(|t| t.is_empty() || t.contains(['{', '}'])) {
        return Err(cluster.state_error(format!(
            "the bucket groups of near-duplicate index `{name}` are damaged: {stored:?}"
        )));
    }
    Ok(tags)
}

/// One tag per master of the cluster, in the order `CLUSTER SLOTS` lists them: the first
/// `NAME.gI` whose slot that master serves.
fn choose(cluster: &Cluster, name: &str) -> Result<Vec<String>, ClusterError> {
    let ranges = master_ranges(cluster)?;
    let mut tags = Vec::new();
    let mut next = 0u32;
    for slots in &ranges {
        let mut found = None;
        for _ in 0..TAG_TRIES {
            let tag = format!("{name}.g{next}");
            next += 1;
            let slot: i64 =
                cluster.with(|con| redis::cmd("CLUSTER").arg("KEYSLOT").arg(&tag).query(con))?;
            if slots.iter().any(|&(from, to)| (from..=to).contains(&slot)) {
                found = Some(tag);
                break;
            }
        }
        tags.extend(found);
    }
    if tags.is_empty() {
        return Err(cluster.state_error("no master serves any slot".to_string()));
    }
    Ok(tags)
}

/// The slot ranges of each master, by the master's address, in the order `CLUSTER SLOTS`
/// first names it.
fn master_ranges(cluster: &Cluster) -> Result<Vec<Vec<(i64, i64)>>, ClusterError> {
    let reply: Vec<redis::Value> =
        cluster.with(|con| redis::cmd("CLUSTER").arg("SLOTS").query(con))?;
    let mut masters: Vec<(String, Vec<(i64, i64)>)> = Vec::new();
    for range in reply {
        let redis::Value::Array(range) = range else {
            continue;
        };
        let (Some(redis::Value::Int(from)), Some(redis::Value::Int(to))) =
            (range.first(), range.get(1))
        else {
            continue;
        };
        let master = match range.get(2) {
            Some(redis::Value::Array(node)) => format!("{:?}", node.get(..2)),
            _ => continue,
        };
        match masters.iter_mut().find(|(m, _)| *m == master) {
            Some((_, slots)) => slots.push((*from, *to)),
            None => masters.push((master, vec![(*from, *to)])),
        }
    }
    Ok(masters.into_iter().map(|(_, slots)| slots).collect())
}

#[cfg(test)]
mod tests {
    use super::group_of;

    /// The buckets of random pages: 10 tables' leading bits and 16 band keys each.
    fn pages() -> impl Iterator<Item = Vec<(usize, u64)>> {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        (0..10_000).map(move |_| {
            (0..26)
                .map(|i| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (i, if i < 10 { state >> 50 } else { state >> 32 })
                })
                .collect()
        })
    }

    #[test]
    fn with_few_masters_a_page_calls_each_once_and_with_many_every_master_holds_buckets() {
        for groups in [3, 6, 26, 64] {
            let mut load = vec![0u64; groups];
            for page in pages() {
                let mut touched = vec![false; groups];
                for &(i, key) in &page {
                    let g = group_of(i, key, groups);
                    load[g] += 1;
                    touched[g] = true;
                }
                if groups == 3 {
                    assert!(touched.iter().all(|&t| t), "a page misses a group of 3");
                }
            }
            let mean = load.iter().sum::<u64>() as f64 / groups as f64;
            let max = *load.iter().max().unwrap() as f64;
            let min = *load.iter().min().unwrap() as f64;
            assert!(
                max / mean < 1.1 && min / mean > 0.9,
                "{groups} groups: buckets from {min} to {max} a group, mean {mean}"
            );
        }
    }
}
