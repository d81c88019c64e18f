//! The second part of the simulation: the Redis work of the shared index and the shared
//! URL filter as the cluster's masters and the crawl's workers grow.
//!
//! Each page's keys are made as `crawldedup::cluster::index` makes them (a document's
//! record, owner, verdict and commit mark tagged by its id, its digest claim by the digest,
//! its table and band buckets by their slot group) and placed by Redis Cluster's own rule
//! (CRC16 of the hash tag, modulo 16,384 slots, the slots split evenly over the masters, as
//! `redis-cli --cluster create` splits them). The groups are chosen as the index chooses
//! them: per master, the first tag `NAME.gI` whose slot it serves. A page's commands are
//! counted as Redis counts them (each `APPEND` and `GET` run by a group's script is one),
//! and its requests are the nodes its pipeline goes to.
//!
//! Workers add no command a page: a worker's pages cost what any worker's do. What grows
//! with the workers is the pages a second, so the table of busy cores gives the busiest
//! master's load for W workers deciding R pages a second each, from the Redis CPU a command
//! that the cluster bench measured (`cargo bench --bench cluster`: Redis CPU a page over
//! commands a page).

use crawldedup::cluster::index::group_of;
use crawldedup::fingerprint::BANDS;
use crawldedup::index::Plan;
use crawldedup::index::plan::DEFAULT_CANDIDATE_BUDGET;

const SLOTS: u32 = 16_384;
const NAME: &str = "crawl";

/// Masters of the simulated clusters.
pub const NODES: [usize; 6] = [3, 6, 12, 24, 48, 64];
/// Workers of the table of busy cores.
const WORKERS: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];

/// Redis Cluster's slot of a key: CRC16 (XMODEM) of its hash tag, or of the whole key.
fn slot(key: &str) -> u32 {
    let tagged = key
        .find('{')
        .and_then(|open| {
            let close = key[open + 1..].find('}')?;
            (close > 0).then(|| &key[open + 1..open + 1 + close])
        })
        .unwrap_or(key);
    u32::from(crc16::State::<crc16::XMODEM>::calculate(tagged.as_bytes())) % SLOTS
}

/// The master serving `slot` when `masters` split the slots evenly.
fn master_of(slot: u32, masters: usize) -> usize {
    (slot as usize * masters) / SLOTS as usize
}

/// The groups' tags as `SharedIndex::open` chooses them for `masters` masters.
fn group_tags(masters: usize) -> Vec<String> {
    let mut tags = Vec::new();
    let mut next = 0;
    for m in 0..masters {
        loop {
            let tag = format!("{NAME}.g{next}");
            next += 1;
            if master_of(slot(&tag), masters) == m {
                tags.push(tag);
                break;
            }
        }
    }
    tags
}

/// xorshift64: the simulated pages' fingerprints.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// What the simulation measured for one cluster.
pub struct Load {
    pub masters: usize,
    /// Commands a page of the index, as Redis counts them.
    pub commands: f64,
    /// Requests a page: nodes its pipeline goes to, summed.
    pub requests: f64,
    /// The busiest master's commands over the mean.
    pub index_balance: f64,
    /// The same with the groups chosen when the cluster had 3 masters, its slots then
    /// spread evenly over all of them.
    pub grown_balance: f64,
    /// The busiest master's share of the URL filter's commands over the mean.
    pub filter_balance: f64,
}

/// Commands on each master for `pages` pages, with the groups `tags` (placed by `masters`),
/// and the requests a page.
fn index_load(plan: &Plan, tags: &[String], masters: usize, pages: u64) -> (Vec<u64>, f64) {
    let tables = plan.tables.len();
    let mut commands = vec![0u64; masters];
    let mut requests = 0u64;
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for id in 0..pages {
        // The record, the owner, the digest claim, the previous page's verdict and the
        // commit mark: one command each (the commit mark goes with the checkpoint, one
        // request for many pages). Per group: one EVAL, with an APPEND and a GET a bucket.
        let digest = next(&mut state);
        let mut keys = vec![
            (format!("{NAME}:nd:doc:{{{id}}}"), 1, true),
            (format!("{NAME}:nd:w:{{{id}}}"), 1, true),
            (format!("{NAME}:nd:digest:{{{digest:016x}}}"), 1, true),
            (format!("{NAME}:nd:c:{{{id}}}"), 1, false),
        ];
        if id > 0 {
            keys.push((format!("{NAME}:nd:v:{{{}}}", id - 1), 1, true));
        }
        let mut per_group = vec![0u64; tags.len()];
        let simhash = next(&mut state);
        for t in 0..tables {
            let bits = plan.tables[t].leading_bits;
            let permuted = plan.permute(t, simhash);
            let prefix = if bits == 0 {
                0
            } else {
                permuted >> (64 - bits)
            };
            per_group[group_of(t, prefix, tags.len())] += 1;
        }
        for b in 0..BANDS {
            let key = next(&mut state) >> 32;
            per_group[group_of(tables + b, key, tags.len())] += 1;
        }
        for (g, &buckets) in per_group.iter().enumerate() {
            if buckets > 0 {
                keys.push((
                    format!("{NAME}:nd:t:{{{}}}:x", tags[g]),
                    1 + 2 * buckets,
                    true,
                ));
            }
        }
        let mut touched = vec![false; masters];
        for (key, n, in_round_trip) in keys {
            let m = master_of(slot(&key), masters);
            commands[m] += n;
            touched[m] |= in_round_trip;
        }
        requests += touched.iter().filter(|&&t| t).count() as u64;
    }
    // Ids are taken 64 at a time: one INCRBY on the counter's master.
    commands[master_of(slot(&format!("{{{NAME}}}:nd:ids")), masters)] += pages / 64;
    (commands, requests as f64 / pages as f64)
}

/// The busiest over the mean.
fn balance(load: &[u64]) -> f64 {
    let mean = load.iter().sum::<u64>() as f64 / load.len() as f64;
    *load.iter().max().unwrap_or(&0) as f64 / mean
}

/// The URL filter's blocks (`NAME:bloom:{i}`, about 256 of them): a URL's one `BITFIELD`
/// goes to its block's master.
fn filter_balance(masters: usize, urls: u64) -> f64 {
    let blocks = crawldedup::cluster::filter::TARGET_BLOCKS;
    let mut load = vec![0u64; masters];
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..urls {
        let block = next(&mut state) % blocks;
        load[master_of(slot(&format!("{NAME}:bloom:{{{block}}}")), masters)] += 1;
    }
    balance(&load)
}

/// Runs the simulation for `pages` pages a cluster and prints its tables.
pub fn run(pages: u64, us_a_command: f64) -> Vec<Load> {
    let plan = Plan::choose(10_000_000, 3, DEFAULT_CANDIDATE_BUDGET).expect("a plan for k = 3");
    println!();
    println!(
        "shared index at n = 10 M, k = 3 ({} tables, {BANDS} bands), {pages} pages; URL filter \
         of {} blocks, {pages} URLs",
        plan.tables.len(),
        crawldedup::cluster::filter::TARGET_BLOCKS
    );
    println!(
        "{:>7} | {:>12} {:>12} | {:>13} {:>14} | {:>13}",
        "masters", "commands a", "requests a", "busiest/mean", "busiest/mean,", "busiest/mean,"
    );
    println!(
        "{:>7} | {:>12} {:>12} | {:>13} {:>14} | {:>13}",
        "", "page", "page", "index", "grown from 3", "URL filter"
    );
    let mut rows = Vec::new();
    for masters in NODES {
        let tags = group_tags(masters);
        let (load, requests) = index_load(&plan, &tags, masters, pages);
        let grown = index_load(&plan, &group_tags(3), masters, pages).0;
        let row = Load {
            masters,
            commands: load.iter().sum::<u64>() as f64 / pages as f64,
            requests,
            index_balance: balance(&load),
            grown_balance: balance(&grown),
            filter_balance: filter_balance(masters, pages),
        };
        println!(
            "{:>7} | {:>12.1} {:>12.2} | {:>13.2} {:>14.2} | {:>13.2}",
            row.masters,
            row.commands,
            row.requests,
            row.index_balance,
            row.grown_balance,
            row.filter_balance
        );
        rows.push(row);
    }
    for rate in [2_500.0, 5_000.0] {
        println!();
        println!(
            "cores the busiest master uses, W workers at {rate} pages/s each, {us_a_command} us \
             of Redis CPU a command (index only; above 1.00 the master is the limit)"
        );
        print!("{:>7} |", "masters");
        for w in WORKERS {
            print!(" {:>6}", format!("W={w}"));
        }
        println!();
        for row in &rows {
            print!("{:>7} |", row.masters);
            for w in WORKERS {
                let busiest = row.commands / row.masters as f64 * row.index_balance;
                print!(" {:>6.2}", w as f64 * rate * busiest * us_a_command / 1e6);
            }
            println!();
        }
    }
    rows
}
