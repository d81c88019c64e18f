//! A page's buckets: which table and band buckets a page goes into, their keys and time
//! slices, and the scripts that enter a page in them and read them (one a slot group).

use std::collections::BTreeSet;

use super::super::filter::{EXPIRY_MARGIN, millis};
use super::{RETENTION_SLICES, SharedIndex, groups};
use crate::index::{DocId, DocRecord};

/// One of a page's buckets ([`SharedIndex::buckets`]).
pub(super) struct Bucket {
    /// Its key, without a time slice.
    key: String,
    /// Its slot group.
    group: usize,
    /// For a table's bucket, the page's simhash permuted for the table (entries of 16
    /// bytes: permuted simhash and id); a band's bucket holds ids (8 bytes).
    permuted: Option<u64>,
}

/// What the scripts of [`SharedIndex::enter`] read, to be told apart.
pub(super) struct Lookup {
    /// Per bucket of the page, in [`SharedIndex::buckets`]'s order: the permuted simhash of
    /// a table's bucket, `None` for a band's.
    permuted: Vec<Option<u64>>,
    /// Per script, in the pipeline's order, the buckets it reads.
    order: Vec<Vec<usize>>,
    /// Keys read per bucket (its time slices).
    slices: usize,
}

impl Lookup {
    /// The ids found in the scripts' `replies`, other than `id`: those within `k` bits in a
    /// table's bucket, and every id in a band's.
    pub(super) fn found(&self, replies: &[redis::Value], id: DocId, k: u32) -> BTreeSet<DocId> {
        let mut ids = BTreeSet::new();
        for (held, reply) in self.order.iter().zip(replies) {
            let redis::Value::Array(values) = reply else {
                continue;
            };
            for (&bucket, slices) in held.iter().zip(values.chunks(self.slices)) {
                for value in slices {
                    let redis::Value::BulkString(bytes) = value else {
                        continue;
                    };
                    match self.permuted[bucket] {
                        Some(permuted) => {
                            for entry in bytes.chunks_exact(16) {
                                let key =
                                    u64::from_be_bytes(entry[..8].try_into().unwrap_or_default());
                                if (key ^ permuted).count_ones() <= k {
                                    ids.insert(u64::from_be_bytes(
                                        entry[8..].try_into().unwrap_or_default(),
                                    ));
                                }
                            }
                        }
                        None => {
                            for entry in bytes.chunks_exact(8) {
                                ids.insert(u64::from_be_bytes(
                                    entry.try_into().unwrap_or_default(),
                                ));
                            }
                        }
                    }
                }
            }
        }
        ids.remove(&id);
        ids
    }
}

/// One slot group's script call of [`SharedIndex::enter`], as it is built.
#[derive(Clone)]
struct GroupCall {
    /// Its keys: per bucket the key appended to, then the keys read.
    keys: Vec<String>,
    /// Its arguments: the number of buckets, then per bucket its entry, expiry and reads.
    args: Vec<Vec<u8>>,
    /// The page's buckets it holds, in order.
    held: Vec<usize>,
}

impl SharedIndex<'_> {
    /// The buckets of a simhash and sketch: each table's, then each band's, each in its
    /// slot group (`groups.rs`), keyed without their time slice.
    pub(super) fn buckets(&self, record: &DocRecord) -> Vec<Bucket> {
        let groups = self.groups.len();
        let tables = self.plan.tables.len();
        let mut buckets = Vec::with_capacity(tables + 16);
        for t in 0..tables {
            let permuted = self.plan.permute(t, record.simhash.0);
            let bits = self.plan.tables[t].leading_bits;
            let prefix = if bits == 0 {
                0
            } else {
                permuted >> (64 - bits)
            };
            let group = groups::group_of(t, prefix, groups);
            buckets.push(Bucket {
                key: format!(
                    "{}:nd:t:{{{}}}:{t}.{prefix:x}",
                    self.name, self.groups[group]
                ),
                group,
                permuted: Some(permuted),
            });
        }
        for (b, key) in record.sketch.band_keys().iter().enumerate() {
            let group = groups::group_of(tables + b, u64::from(*key), groups);
            buckets.push(Bucket {
                key: format!("{}:nd:b:{{{}}}:{b}.{key:x}", self.name, self.groups[group]),
                group,
                permuted: None,
            });
        }
        buckets
    }

    /// Under retention, the length of a bucket's time slice in seconds.
    pub(super) fn slice_secs(&self) -> Option<u64> {
        self.retention
            .map(|window| window.div_ceil(RETENTION_SLICES).max(1))
    }

    /// The key of a bucket's slice that a document stored at `at` goes into, and the
    /// slice's expiry in milliseconds from `now` (none without retention).
    pub(super) fn bucket_for_write(
        &self,
        bucket: &str,
        at: u64,
        now: u64,
    ) -> (String, Option<u64>) {
        match (self.slice_secs(), self.retention) {
            (Some(secs), Some(window)) => {
                let slice = at / secs;
                let end = (slice + 1) * secs + window;
                let ttl = end.saturating_sub(now).saturating_mul(1000) + millis(EXPIRY_MARGIN);
                (format!("{bucket}:{slice}"), Some(ttl))
            }
            _ => (bucket.to_string(), None),
        }
    }

    /// The keys of a bucket's slices that may hold a document live at `now`.
    pub(super) fn buckets_for_read(&self, bucket: &str, now: u64) -> Vec<String> {
        match (self.slice_secs(), self.retention) {
            (Some(secs), Some(window)) => (now.saturating_sub(window) / secs..=now / secs + 1)
                .map(|slice| format!("{bucket}:{slice}"))
                .collect(),
            _ => vec![bucket.to_string()],
        }
    }

    /// Adds to `pipe` the scripts that enter document `id` in its buckets and read them
    /// after: one per slot group. Under retention an entry goes into its bucket's slice of
    /// the record's time, and every slice live at `now` is read.
    pub(super) fn enter(
        &self,
        pipe: &mut redis::cluster::ClusterPipeline,
        record: &DocRecord,
        id: DocId,
        now: u64,
    ) -> Lookup {
        let buckets = self.buckets(record);
        let mut per_group = vec![
            GroupCall {
                keys: Vec::new(),
                args: vec![Vec::new()],
                held: Vec::new(),
            };
            self.groups.len()
        ];
        let mut slices = 1;
        for (i, bucket) in buckets.iter().enumerate() {
            let GroupCall { keys, args, held } = &mut per_group[bucket.group];
            let (key, ttl) = self.bucket_for_write(&bucket.key, record.at, now);
            let reads = self.buckets_for_read(&bucket.key, now);
            slices = reads.len();
            let entry = match bucket.permuted {
                Some(permuted) => [permuted.to_be_bytes(), id.to_be_bytes()].concat(),
                None => id.to_be_bytes().to_vec(),
            };
            keys.push(key);
            keys.extend(reads);
            args.push(entry);
            args.push(ttl.unwrap_or(0).to_string().into_bytes());
            args.push(slices.to_string().into_bytes());
            held.push(i);
        }
        let mut order = Vec::new();
        for GroupCall {
            keys,
            mut args,
            held,
        } in per_group
        {
            if held.is_empty() {
                continue;
            }
            args[0] = held.len().to_string().into_bytes();
            pipe.cmd("EVALSHA")
                .arg(groups::enter_and_read_sha())
                .arg(keys.len())
                .arg(keys)
                .arg(args);
            order.push(held);
        }
        Lookup {
            permuted: buckets.iter().map(|b| b.permuted).collect(),
            order,
            slices,
        }
    }
}
