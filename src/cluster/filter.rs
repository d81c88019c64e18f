//! The cluster's URL filter: one blocked Bloom filter in Redis Cluster, shared by every
//! worker of a crawl.
//!
//! # Layout
//! Sized like the local filter ([`BloomParams::new`]: `m = ceil(-n ln p / (ln 2)^2)` bits,
//! `k = round(m / n ln 2)` hashes), then cut into `blocks` Redis strings of `2^b` bits each,
//! `b` chosen so that there are about [`TARGET_BLOCKS`] blocks (at least 2^16 and at most
//! 2^20 bits a block), and `blocks = ceil(m / 2^b)`: never fewer bits than the formula's m.
//! Block `i` of filter `NAME` is the key `NAME:bloom:{i}`; the braces make `i` the key's
//! hash tag, so the blocks spread over the cluster's slots and its nodes.
//!
//! A URL's 128-bit hash ([`url_hash128`] of its canonical form, the hash the local filter's
//! confirmation keeps) picks its block from the high 64 bits (`hi * blocks >> 64`) and its k
//! bits in the block from the low 64 bits by double hashing: `a + j c mod 2^b` for
//! `j = 0..k`, with `a` the low word and `c` that word rotated by 32 bits, made odd (so the
//! k positions are distinct).
//!
//! # Check and insert: one atomic round trip
//! One `BITFIELD NAME:bloom:{i} SET u1 o1 1 ... SET u1 ok 1` sets the k bits and returns
//! their old values. Redis runs a command whole, so of two workers presenting the same URL
//! at once exactly one sees a 0 among the old bits and gets `new`; the other sees all ones
//! and gets `seen`. Many URLs go in one pipeline, which the client splits per node.
//!
//! # False positives
//! Blocks of 2^16 bits or more each hold thousands of URLs at the filter's n, so the spread
//! of their loads adds little: the rate at n stays near p, measured by the tests against a
//! real cluster like the local filter's.
//!
//! # A node failing over
//! A [`Cluster`] opened with [`Cluster::connect_riding_out`] retries a command that failed
//! for a reason that passes (a connection refused or dropped, a timeout, `CLUSTERDOWN`,
//! `TRYAGAIN`: a master failing over to its replica) for up to the time given, reconnecting
//! between attempts. A check-and-insert whose first attempt may have been applied
//! (its answer lost) cannot tell its own earlier write from another worker's: a retried
//! batch is therefore answered `new` for every URL, so that a URL is fetched twice at
//! worst, never lost.
//!
//! # Forgetting: generations of blocks
//! With a recrawl interval ([`SeenConfig::expire_after`], `url_filter.recrawl_after`) the
//! filter forgets as the local one does, in time slices of `ceil(interval / g)`
//! milliseconds on the worker's [`Clock`]: a URL recorded in slice `s` is seen while `s` is
//! one of the last `g + 1` slices, so it comes due between the interval and one slice after
//! it. Each slice has its own blocks (`NAME:bloom:{i}:s`, the same hash tag as the block
//! `i` of every other slice), sized for `n / g` URLs at `p / (g + 1)`, so the rate over all
//! live slices stays under p.
//! - A check reads the URL's bits in the `g` older live slices first (`BITFIELD GET`); a URL
//!   found there is seen and not recorded again, so finding it does not put its recrawl
//!   off. The others are checked and inserted in the current slice in one `BITFIELD SET`
//!   each, as above: of workers presenting one URL at once, exactly one gets `new`.
//!   Two round trips a batch.
//! - At a slice's boundary, two workers whose clocks fall on either side of it can both get
//!   `new` for one URL: fetched twice, never lost.
//! - A slice's blocks expire in Redis ([`EXPIRY_MARGIN`] after the last worker stops
//!   reading them; `PEXPIRE .. NX` when the block is first written), so the memory of a
//!   long crawl is that of `g + 1` slices.
//!
//! # The layout is the cluster's
//! The first worker writes the layout (`NAME:bloom:layout`, with `SET NX`); every worker
//! that opens the filter afterwards reads it and refuses, in one line, other n or p, or
//! another recrawl interval or number of generations, than the ones it was created with
//! (two layouts would scatter one URL's bits over two places).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redis::cluster::{ClusterClient, ClusterClientBuilder, ClusterConnection, cluster_pipe};

use crate::clock::Clock;
use crate::urls::seen::{BloomParams, SeenConfig, url_hash128};

/// Blocks the filter is cut into, about: enough to spread over every slot range of a
/// cluster of a few dozen nodes.
pub const TARGET_BLOCKS: u64 = 256;

/// Bits of a block: never fewer than 2^16 (below that, the spread of block loads would lift
/// the false-positive rate) nor more than 2^20 (128 KiB, a quick string to copy on a
/// resharding).
const MIN_BLOCK_LOG2: u32 = 16;
const MAX_BLOCK_LOG2: u32 = 20;

/// How long a request waits for a node before it fails (never a hang).
pub const RESPONSE_TIMEOUT: Duration = Duration::from_secs(5);

/// How long connecting to a node may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// How much longer than the window a key of a time window (a slice's filter blocks, a
/// document of a shared index with retention) lives in Redis: the difference between two
/// workers' clocks that the windows tolerate. Redis's expiry only frees memory; what is
/// live is decided on the workers' clocks.
pub const EXPIRY_MARGIN: Duration = Duration::from_secs(2);

/// What went wrong with the cluster.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// A node could not be reached or answered with an error.
    #[error("redis cluster {nodes}: {source}")]
    Redis {
        /// The nodes given to connect to.
        nodes: String,
        /// The client's error.
        source: redis::RedisError,
    },
    /// The cluster holds a filter or state that this worker cannot use.
    #[error("redis cluster {nodes}: {problem}")]
    State {
        /// The nodes given to connect to.
        nodes: String,
        /// What is wrong, in one line.
        problem: String,
    },
    /// Bad n or p.
    #[error("cluster URL filter: {0}")]
    Params(String),
}

/// A connection to a Redis Cluster, named by the nodes it was given.
pub struct Cluster {
    nodes: String,
    client: ClusterClient,
    con: Mutex<ClusterConnection>,
    /// How long a command that fails for a passing reason is retried.
    ride_out: Duration,
    /// Commands and pipelines sent on this connection and answered ([`Cluster::round_trips`]).
    round_trips: std::sync::atomic::AtomicU64,
}

/// Whether a master answered that it does not have a script named by its SHA-1.
fn is_no_script(e: &redis::RedisError) -> bool {
    e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript)
}

/// Times one call loads the scripts again on `NOSCRIPT` before the answer is its error (a
/// second failover during the call may empty another master's cache).
const SCRIPT_RELOADS: u32 = 3;

/// Loads the scripts sent by their SHA-1 on every master (`SCRIPT LOAD` goes to all of
/// them); a master that cannot be reached fails it as any command, to be ridden out.
fn load_scripts(con: &mut ClusterConnection) -> redis::RedisResult<()> {
    for script in super::index::groups::SCRIPTS {
        redis::cmd("SCRIPT")
            .arg("LOAD")
            .arg(*script)
            .query::<redis::Value>(con)?;
    }
    Ok(())
}

/// Whether a failure may pass if the command is sent again (a node down or failing over, a
/// connection dropped, a timeout), as opposed to an answer that will not change.
fn passing(e: &redis::RedisError) -> bool {
    !matches!(e.retry_method(), redis::RetryMethod::NoRetry)
}

impl Cluster {
    /// Connects to the cluster through any of `nodes` (`redis://HOST:PORT`), with
    /// [`CONNECT_TIMEOUT`] and [`RESPONSE_TIMEOUT`]; a failed command is an error at once.
    pub fn connect(nodes: &[String]) -> Result<Cluster, ClusterError> {
        Cluster::connect_riding_out(nodes, Duration::ZERO)
    }

    /// As [`Cluster::connect`], retrying a command that failed for a passing reason (see
    /// the module documentation) for up to `ride_out`.
    pub fn connect_riding_out(
        nodes: &[String],
        ride_out: Duration,
    ) -> Result<Cluster, ClusterError> {
        let named = nodes.join(",");
        let redis = |source| ClusterError::Redis {
            nodes: named.clone(),
            source,
        };
        let client = ClusterClientBuilder::new(nodes.to_vec())
            .connection_timeout(CONNECT_TIMEOUT)
            .response_timeout(RESPONSE_TIMEOUT)
            .retries(2)
            .build()
            .map_err(redis)?;
        let con = client.get_connection().map_err(redis)?;
        Ok(Cluster {
            nodes: named,
            client,
            con: Mutex::new(con),
            ride_out,
            round_trips: Default::default(),
        })
    }

    /// A second connection to the same cluster, with the same timeouts and ride-out: for
    /// a thread whose commands must not wait behind this connection's.
    pub fn another(&self) -> Result<Cluster, ClusterError> {
        let con = self
            .client
            .get_connection()
            .map_err(|source| ClusterError::Redis {
                nodes: self.nodes.clone(),
                source,
            })?;
        Ok(Cluster {
            nodes: self.nodes.clone(),
            client: self.client.clone(),
            con: Mutex::new(con),
            ride_out: self.ride_out,
            round_trips: Default::default(),
        })
    }

    /// Round trips made on this connection so far: each command or pipeline sent and
    /// answered, a retried one once (the connections of [`Cluster::another`] count their
    /// own).
    pub fn round_trips(&self) -> u64 {
        self.round_trips.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The nodes it was given, for messages.
    pub fn nodes(&self) -> &str {
        &self.nodes
    }

    /// Runs `f` on the connection; a client error becomes [`ClusterError::Redis`].
    pub(crate) fn with<T>(
        &self,
        f: impl FnMut(&mut ClusterConnection) -> redis::RedisResult<T>,
    ) -> Result<T, ClusterError> {
        self.with_retried(f).map(|(value, _)| value)
    }

    /// As [`Cluster::with`], saying whether `f` had to be retried (so that its first
    /// attempt may have been applied).
    pub(crate) fn with_retried<T>(
        &self,
        mut f: impl FnMut(&mut ClusterConnection) -> redis::RedisResult<T>,
    ) -> Result<(T, bool), ClusterError> {
        let started = Instant::now();
        let mut wait = Duration::from_millis(100);
        let mut retried = false;
        // Script reloads left for this call, and whether the next attempt loads them first.
        let (mut reloads, mut load) = (SCRIPT_RELOADS, false);
        let mut con = self.con.lock().unwrap_or_else(|p| p.into_inner());
        self.round_trips
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        loop {
            let attempt = if load {
                load_scripts(&mut con).and_then(|()| f(&mut con))
            } else {
                f(&mut con)
            };
            match attempt {
                Ok(value) => return Ok((value, retried)),
                // A master without the scripts sent by their SHA-1 (restarted, or a replica
                // promoted: neither keeps a script cache): load them on every master and
                // send again. The rest of the round trip may have been applied.
                Err(e) if is_no_script(&e) && reloads > 0 => {
                    reloads -= 1;
                    load = true;
                    retried = true;
                }
                Err(e) if passing(&e) && started.elapsed() + wait <= self.ride_out => {
                    if !retried {
                        tracing::warn!("redis cluster {}: {e}; trying again", self.nodes);
                    }
                    retried = true;
                    std::thread::sleep(wait);
                    wait = (wait * 2).min(Duration::from_secs(1));
                    if let Ok(fresh) = self.client.get_connection() {
                        *con = fresh;
                    }
                }
                Err(source) => {
                    return Err(ClusterError::Redis {
                        nodes: self.nodes.clone(),
                        source,
                    });
                }
            }
        }
    }

    pub(crate) fn state_error(&self, problem: String) -> ClusterError {
        ClusterError::State {
            nodes: self.nodes.clone(),
            problem,
        }
    }
}

/// How the filter lies in the cluster (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FilterLayout {
    /// The local filter's sizing for n and p.
    pub params: BloomParams,
    /// Bits of a block: 2^`block_log2`.
    pub block_log2: u32,
    /// Blocks.
    pub blocks: u64,
}

impl FilterLayout {
    /// The layout for `n` URLs at false-positive rate `p`.
    pub fn new(n: u64, p: f64) -> Result<FilterLayout, ClusterError> {
        let params = BloomParams::new(n, p).map_err(|e| ClusterError::Params(e.to_string()))?;
        let per_block = params.m.div_ceil(TARGET_BLOCKS).max(1);
        let block_log2 =
            (u64::BITS - (per_block - 1).leading_zeros()).clamp(MIN_BLOCK_LOG2, MAX_BLOCK_LOG2);
        let blocks = params.m.div_ceil(1 << block_log2).max(1);
        Ok(FilterLayout {
            params,
            block_log2,
            blocks,
        })
    }

    /// Bits in all blocks (at least m).
    pub fn bits(&self) -> u64 {
        self.blocks << self.block_log2
    }

    /// The block of a URL with 128-bit hash `hash`, and the offsets of its k bits in it.
    pub fn place(&self, hash: u128) -> (u64, impl Iterator<Item = u64>) {
        let hi = (hash >> 64) as u64;
        let lo = hash as u64;
        let block = ((u128::from(hi) * u128::from(self.blocks)) >> 64) as u64;
        let mask = (1u64 << self.block_log2) - 1;
        let step = lo.rotate_left(32) | 1;
        let offsets = (0..u64::from(self.params.k))
            .map(move |j| lo.wrapping_add(j.wrapping_mul(step)) & mask);
        (block, offsets)
    }

    /// The record kept in `NAME:bloom:layout`.
    fn record(&self) -> String {
        format!(
            "n={} p={} m={} k={} block_log2={} blocks={}",
            self.params.n,
            self.params.p,
            self.params.m,
            self.params.k,
            self.block_log2,
            self.blocks
        )
    }
}

/// The cluster's URL filter.
pub struct ClusterFilter<'c> {
    cluster: &'c Cluster,
    name: String,
    layout: FilterLayout,
    /// When it forgets: the slice length in milliseconds and the generations g.
    slices: Option<(u64, u32)>,
    clock: Arc<dyn Clock>,
}

impl<'c> ClusterFilter<'c> {
    /// Opens filter `name` in the cluster for `n` URLs at rate `p`, never forgetting: see
    /// [`ClusterFilter::open_with`].
    pub fn open(
        cluster: &'c Cluster,
        name: &str,
        n: u64,
        p: f64,
    ) -> Result<ClusterFilter<'c>, ClusterError> {
        ClusterFilter::open_with(cluster, name, &SeenConfig::new(n, p))
    }

    /// Opens filter `name` in the cluster sized by `config` (its n and p, and its recrawl
    /// interval and generations when it forgets; exact confirmation is the local filter's
    /// only): creates its layout when it is new, and refuses another one than it was
    /// created with, in one line.
    pub fn open_with(
        cluster: &'c Cluster,
        name: &str,
        config: &SeenConfig,
    ) -> Result<ClusterFilter<'c>, ClusterError> {
        config
            .first_layer()
            .map_err(|e| ClusterError::Params(e.to_string()))?;
        let (n, p) = config.generation();
        let layout = FilterLayout::new(n, p)?;
        let slices = config.slice_ms().map(|ms| (ms, config.generations));
        let key = format!("{name}:bloom:layout");
        let mut wanted = layout.record();
        if let Some(interval) = config.interval_ms() {
            wanted.push_str(&format!(
                " recrawl_ms={interval} generations={}",
                config.generations
            ));
        }
        let stored: String = cluster.with(|con| {
            redis::cmd("SET")
                .arg(&key)
                .arg(&wanted)
                .arg("NX")
                .exec(con)?;
            redis::cmd("GET").arg(&key).query(con)
        })?;
        if stored != wanted {
            return Err(cluster.state_error(format!(
                "URL filter `{name}` was created as {stored}; this worker asks for {wanted}: \
                 give every worker the same url_filter.expected_urls, false_positive_rate, \
                 recrawl_after and recrawl_generations"
            )));
        }
        Ok(ClusterFilter {
            cluster,
            name: name.to_string(),
            layout,
            slices,
            clock: crate::clock::system(),
        })
    }

    /// Measures the recrawl interval on `clock` (the system's by default).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> ClusterFilter<'c> {
        self.clock = clock;
        self
    }

    /// The layout in use (of one slice, when it forgets).
    pub fn layout(&self) -> &FilterLayout {
        &self.layout
    }

    /// When a URL recorded at `recorded_at_ms` (milliseconds on the filter's clock) comes
    /// due again: the start of the first slice in which its slice is no longer live, between
    /// the interval and one slice after it, as on one machine
    /// ([`SeenUrls::due_at_ms`](crate::SeenUrls::due_at_ms)). `None` if it never does.
    pub fn due_at_ms(&self, recorded_at_ms: u64) -> Option<u64> {
        let (ms, g) = self.slices?;
        Some((recorded_at_ms / ms + u64::from(g) + 1) * ms)
    }

    /// The key of block `block` of slice `slice` (none for a filter that never forgets).
    fn block_key(&self, block: u64, slice: Option<u64>) -> String {
        match slice {
            Some(s) => format!("{}:bloom:{{{block}}}:{s}", self.name),
            None => format!("{}:bloom:{{{block}}}", self.name),
        }
    }

    /// Now on the filter's clock: the current slice and, when it forgets, the oldest live
    /// one and the milliseconds until the current one is no longer live.
    fn now(&self) -> Option<(u64, u64, u64)> {
        let (ms, g) = self.slices?;
        let now = self.clock.now_ms();
        let current = now / ms;
        let dead_at = (current + u64::from(g) + 1).saturating_mul(ms);
        Some((current, current.saturating_sub(u64::from(g)), dead_at - now))
    }

    /// Checks and records each canonical URL, in one pipeline (two when the filter
    /// forgets): `true` for a URL no worker recorded before (its bits were not all set, in
    /// any live slice), `false` for one seen. Atomic per URL (see the module
    /// documentation).
    pub fn check_and_insert(&self, canonical: &[&str]) -> Result<Vec<bool>, ClusterError> {
        let Some((current, oldest, left_ms)) = self.now() else {
            return self.bitfield(canonical, "SET", None, 0);
        };
        let older = self.seen_in(canonical, oldest..current)?;
        let fresh: Vec<&str> = (canonical.iter().zip(&older))
            .filter(|(_, seen)| !**seen)
            .map(|(url, _)| *url)
            .collect();
        let ttl = left_ms + millis(EXPIRY_MARGIN);
        let mut answers = self
            .bitfield(&fresh, "SET", Some(current), ttl)?
            .into_iter();
        Ok(older
            .iter()
            .map(|&seen| !seen && answers.next().unwrap_or(true))
            .collect())
    }

    /// Whether each canonical URL is (probably) in the filter, without recording it.
    pub fn contains(&self, canonical: &[&str]) -> Result<Vec<bool>, ClusterError> {
        match self.now() {
            Some((current, oldest, _)) => self.seen_in(canonical, oldest..current + 1),
            None => Ok(self
                .bitfield(canonical, "GET", None, 0)?
                .into_iter()
                .map(|unset| !unset)
                .collect()),
        }
    }

    /// Whether each URL has all its bits set in one of `slices`: one pipeline.
    fn seen_in(
        &self,
        canonical: &[&str],
        slices: std::ops::Range<u64>,
    ) -> Result<Vec<bool>, ClusterError> {
        let per_url = usize::try_from(slices.end.saturating_sub(slices.start)).unwrap_or(0);
        if canonical.is_empty() || per_url == 0 {
            return Ok(vec![false; canonical.len()]);
        }
        let mut pipe = cluster_pipe();
        for url in canonical {
            let (block, offsets) = self.layout.place(url_hash128(url));
            let offsets: Vec<u64> = offsets.collect();
            for slice in slices.clone() {
                let cmd = pipe.cmd("BITFIELD").arg(self.block_key(block, Some(slice)));
                for &offset in &offsets {
                    cmd.arg("GET").arg("u1").arg(offset);
                }
            }
        }
        let bits: Vec<Vec<u8>> = self.cluster.with(|con| pipe.query(con))?;
        if bits.len() != canonical.len() * per_url {
            return Err(self.cluster.state_error(format!(
                "{} answers to {} BITFIELD commands",
                bits.len(),
                canonical.len() * per_url
            )));
        }
        Ok(bits
            .chunks(per_url)
            .map(|url| url.iter().any(|slice| !slice.contains(&0)))
            .collect())
    }

    /// One BITFIELD per URL, `op` (`SET` to 1 or `GET`) on its k bits in slice `slice`:
    /// whether any bit was 0. A `SET` into a slice gives each block it wrote an expiry of
    /// `ttl_ms` unless it has one.
    fn bitfield(
        &self,
        canonical: &[&str],
        op: &str,
        slice: Option<u64>,
        ttl_ms: u64,
    ) -> Result<Vec<bool>, ClusterError> {
        if canonical.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = cluster_pipe();
        let mut written = BTreeSet::new();
        for url in canonical {
            let (block, offsets) = self.layout.place(url_hash128(url));
            let cmd = pipe.cmd("BITFIELD").arg(self.block_key(block, slice));
            for offset in offsets {
                cmd.arg(op).arg("u1").arg(offset);
                if op == "SET" {
                    cmd.arg(1);
                }
            }
            if op == "SET" && slice.is_some() {
                written.insert(block);
            }
        }
        for block in written {
            pipe.cmd("PEXPIRE")
                .arg(self.block_key(block, slice))
                .arg(ttl_ms)
                .arg("NX")
                .ignore();
        }
        let (old, retried): (Vec<Vec<u8>>, bool) =
            self.cluster.with_retried(|con| pipe.query(con))?;
        if old.len() != canonical.len() {
            return Err(self.cluster.state_error(format!(
                "{} answers to {} BITFIELD commands",
                old.len(),
                canonical.len()
            )));
        }
        if retried && op == "SET" {
            // The first attempt may have set the bits: `seen` could be this worker's own.
            return Ok(vec![true; canonical.len()]);
        }
        Ok(old.iter().map(|bits| bits.contains(&0)).collect())
    }
}

/// A duration in whole milliseconds.
pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_has_at_least_the_formulas_bits_in_blocks_of_bounded_size() {
        for (n, p) in [(1_000, 0.01), (1_000_000, 0.01), (100_000_000, 0.001)] {
            let layout = FilterLayout::new(n, p).unwrap();
            assert!(layout.bits() >= layout.params.m, "{layout:?}");
            assert!((MIN_BLOCK_LOG2..=MAX_BLOCK_LOG2).contains(&layout.block_log2));
            // Never more than one block's worth of bits over m.
            assert!(layout.bits() - layout.params.m < 1 << layout.block_log2);
        }
        let big = FilterLayout::new(10_000_000, 0.01).unwrap();
        assert!(big.blocks >= TARGET_BLOCKS / 2, "{big:?}");
    }

    #[test]
    fn a_url_gets_k_distinct_bits_in_one_block() {
        let layout = FilterLayout::new(1_000_000, 0.01).unwrap();
        for i in 0..1000 {
            let (block, offsets) = layout.place(url_hash128(&format!("https://a.test/{i}")));
            assert!(block < layout.blocks);
            let mut offsets: Vec<u64> = offsets.collect();
            assert_eq!(offsets.len(), layout.params.k as usize);
            assert!(offsets.iter().all(|&o| o < 1 << layout.block_log2));
            offsets.sort_unstable();
            offsets.dedup();
            assert_eq!(offsets.len(), layout.params.k as usize);
        }
    }
}
