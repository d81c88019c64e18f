//! The cluster's shared index against a real Redis Cluster: copies found across workers,
//! racing workers, older record formats, and reconciling kept copies after a lost write
//! (three `redis-server` nodes on loopback, see `common/redis_cluster.rs`; skipped with one
//! line when Redis is not installed, except on CI). The helpers here are the other index
//! tests' too.

use crate::redis_cluster;

use std::sync::Arc;

use crawldedup::cluster::filter::Cluster;
use redis_cluster::RedisCluster;

/// An article of 150 words drawn from a vocabulary of 4,000, by seed: two seeds share
/// common words, almost never a run of three.
pub(crate) fn article(seed: u64) -> String {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..150)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            format!("w{}", state % 4000)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `text` with one word changed, a different one for each `edit`.
pub(crate) fn variant(text: &str, edit: usize) -> String {
    let mut words: Vec<String> = text.split(' ').map(str::to_string).collect();
    let at = (edit * 37 + 11) % words.len();
    words[at] = format!("edited{edit}");
    words.join(" ")
}

pub(crate) fn doc(name: &str, text: &str) -> crawldedup::index::DocRecord {
    crawldedup::index::DocRecord::new(name, text, &crawldedup::Fingerprint::of(text))
}

/// A three-node cluster and two workers' connections to it.
pub(crate) fn two_connections() -> (RedisCluster, Cluster, Cluster) {
    let redis = RedisCluster::start();
    let one = Cluster::connect(&redis.urls()).unwrap();
    let two = Cluster::connect(&redis.urls()).unwrap();
    (redis, one, two)
}

/// Articles `0..n` entered through `index` as `a/{i}`, each unique: their ids.
pub(crate) fn stored_articles(
    index: &crawldedup::cluster::index::SharedIndex<'_>,
    n: u64,
) -> Vec<crawldedup::index::DocId> {
    use crawldedup::cluster::index::SharedDecision;
    (0..n)
        .map(|i| {
            match index
                .check_and_insert(&doc(&format!("a/{i}"), &article(i)))
                .unwrap()
            {
                SharedDecision::Unique(id) => id,
                other => panic!("article {i}: {other:?}"),
            }
        })
        .collect()
}

#[test]
#[ignore = "needs redis-server and redis-cli (apt-get install redis-server); CI runs it with --ignored"]
fn the_shared_index_finds_exact_and_near_copies_that_another_worker_stored() {
    use crawldedup::cluster::index::{SharedDecision, SharedIndex};
    use crawldedup::index::IndexConfig;
    let (_redis, one, two) = two_connections();
    let config = IndexConfig::default().with_expected(1_000_000);
    let a = SharedIndex::open(&one, "nd", config).unwrap();
    let b = SharedIndex::open(&two, "nd", config).unwrap();
    let ids = stored_articles(&a, 200);
    // The other worker finds them: the same text exactly, an edited one nearly.
    assert_eq!(
        b.check_and_insert(&doc("b/copy", &article(7))).unwrap(),
        SharedDecision::Exact(ids[7])
    );
    match b
        .check_and_insert(&doc("b/edit", &variant(&article(9), 1)))
        .unwrap()
    {
        SharedDecision::Near { of, similarity, .. } => {
            assert_eq!(of, ids[9]);
            assert!(similarity.resemblance > 0.8, "{similarity:?}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(b.name_of(ids[9]).unwrap().as_deref(), Some("a/9"));
    // New articles stay unique on the other worker too.
    for i in 200..300 {
        let decision = b
            .check_and_insert(&doc(&format!("b/{i}"), &article(i)))
            .unwrap();
        assert!(
            matches!(decision, SharedDecision::Unique(_)),
            "{decision:?}"
        );
    }
    // Another layout is refused.
    let other = config.with_max_distance(5);
    let refused = SharedIndex::open(&one, "nd", other).err().expect("refused");
    assert_eq!(refused.to_string().lines().count(), 1, "{refused}");
}

#[test]
#[ignore = "needs redis-server and redis-cli (apt-get install redis-server); CI runs it with --ignored"]
fn a_worker_joins_an_index_of_an_older_record_format_and_raises_it_but_not_a_newer_one() {
    use crawldedup::cluster::index::SharedIndex;
    use crawldedup::index::{INDEX_FORMAT_VERSION, IndexConfig};
    let redis = RedisCluster::start();
    let cluster = Cluster::connect(&redis.urls()).unwrap();
    let config = IndexConfig::default().with_expected(1_000_000);
    let layout = |name: &str| {
        let key = format!("{name}:nd:layout");
        redis_cluster::cli(redis.ports[0], &["-c", "GET", &key])
            .trim()
            .to_string()
    };
    // The layout as an older build claims it, with no record format named.
    SharedIndex::open(&cluster, "old", config).unwrap();
    let ours = layout("old");
    let records = format!(" records={INDEX_FORMAT_VERSION}");
    assert!(ours.contains(&records), "{ours}");
    let older = ours.replace(&records, "");
    let set = |name: &str, value: &str| {
        let key = format!("{name}:nd:layout");
        let reply = redis_cluster::cli(redis.ports[0], &["-c", "SET", &key, value]);
        assert_eq!(reply.trim(), "OK");
    };
    set("old", &older);
    SharedIndex::open(&cluster, "old", config).expect("an older record format is joined");
    assert_eq!(layout("old"), ours, "and raised to this build's");
    // Records newer than this build reads: refused in one line, the layout left as it is.
    let newer = ours.replace(&records, &format!(" records={}", INDEX_FORMAT_VERSION + 1));
    set("old", &newer);
    let refused = SharedIndex::open(&cluster, "old", config)
        .err()
        .expect("refused");
    assert_eq!(refused.to_string().lines().count(), 1, "{refused}");
    assert!(refused.to_string().contains("records="), "{refused}");
    assert_eq!(layout("old"), newer);
}

#[test]
#[ignore = "needs redis-server and redis-cli (apt-get install redis-server); CI runs it with --ignored"]
fn a_worker_upgrades_an_index_of_the_last_fingerprint_version_and_keeps_its_documents() {
    use crawldedup::cluster::index::{SharedDecision, SharedIndex};
    use crawldedup::fingerprint::FINGERPRINT_VERSION;
    use crawldedup::index::{IndexConfig, OLDEST_FINGERPRINT};
    let (redis, one, two) = two_connections();
    let config = IndexConfig::default().with_expected(1_000_000);
    let key = "fp:nd:layout";
    let layout = || {
        redis_cluster::cli(redis.ports[0], &["-c", "GET", key])
            .trim()
            .to_string()
    };
    let set = |value: &str| {
        let reply = redis_cluster::cli(redis.ports[0], &["-c", "SET", key, value]);
        assert_eq!(reply.trim(), "OK");
    };
    let ids = {
        let index = SharedIndex::open(&one, "fp", config).unwrap();
        stored_articles(&index, 20)
    };
    let ours = layout();
    let current = format!("fingerprint={FINGERPRINT_VERSION} ");
    assert!(ours.starts_with(&current), "{ours}");
    // The index as a worker of the version before left it.
    let older = ours.replace(&current, &format!("fingerprint={OLDEST_FINGERPRINT} "));
    assert_ne!(older, ours);
    set(&older);
    let index = SharedIndex::open(&two, "fp", config).expect("the version before is joined");
    assert_eq!(layout(), ours, "and raised to this build's");
    // Its documents are found: a repeat exactly, an edited copy nearly.
    assert_eq!(
        index.check_and_insert(&doc("b/copy", &article(3))).unwrap(),
        SharedDecision::Exact(ids[3])
    );
    match index
        .check_and_insert(&doc("b/edit", &variant(&article(5), 2)))
        .unwrap()
    {
        SharedDecision::Near { of, .. } => assert_eq!(of, ids[5]),
        other => panic!("{other:?}"),
    }
    // A version older than this build reads, or newer: refused in one line, left as it is.
    for version in [OLDEST_FINGERPRINT - 1, FINGERPRINT_VERSION + 1] {
        let other = ours.replace(&current, &format!("fingerprint={version} "));
        set(&other);
        let refused = SharedIndex::open(&one, "fp", config)
            .err()
            .expect("refused");
        assert_eq!(refused.to_string().lines().count(), 1, "{refused}");
        assert!(
            refused
                .to_string()
                .contains(&format!("fingerprint={version}")),
            "{refused}"
        );
        assert_eq!(layout(), other);
    }
}

#[test]
#[ignore = "needs redis-server and redis-cli (apt-get install redis-server); CI runs it with --ignored"]
fn of_workers_racing_near_or_exact_copies_of_one_page_exactly_one_keeps_it() {
    use crawldedup::cluster::index::{SharedDecision, SharedIndex};
    use crawldedup::index::IndexConfig;
    let redis = RedisCluster::start();
    const WORKERS: usize = 6;
    const GROUPS: u64 = 40;
    let nodes = Arc::new(redis.urls());
    let start = Arc::new(std::sync::Barrier::new(WORKERS));
    let handles: Vec<_> = (0..WORKERS)
        .map(|w| {
            let (nodes, start) = (Arc::clone(&nodes), Arc::clone(&start));
            std::thread::spawn(move || {
                let cluster = Cluster::connect(&nodes).unwrap();
                let config = IndexConfig::default().with_expected(1_000_000);
                let index = SharedIndex::open(&cluster, "race", config).unwrap();
                // Every worker takes the groups in the same order, from the same moment: each
                // group is raced by all of them.
                start.wait();
                let near: Vec<_> = (0..GROUPS)
                    .map(|g| {
                        let text = variant(&article(1000 + g), w);
                        let decision = index
                            .check_and_insert(&doc(&format!("g{g}/w{w}"), &text))
                            .unwrap();
                        (g, decision)
                    })
                    .collect();
                // Then the same text from every worker at once.
                start.wait();
                let exact: Vec<_> = (0..GROUPS)
                    .map(|g| {
                        let text = article(5000 + g);
                        let decision = index
                            .check_and_insert(&doc(&format!("x{g}/w{w}"), &text))
                            .unwrap();
                        (g, decision)
                    })
                    .collect();
                (near, exact)
            })
        })
        .collect();
    let mut kept = vec![0usize; GROUPS as usize];
    let mut originals = vec![Vec::new(); GROUPS as usize];
    let mut copies_of = vec![Vec::new(); GROUPS as usize];
    let mut decisions = 0;
    for handle in handles {
        let (near, exact) = handle.join().unwrap();
        for (g, decision) in near {
            decisions += 1;
            match decision {
                SharedDecision::Unique(_) => kept[g as usize] += 1,
                SharedDecision::Near { .. } => {}
                other => panic!("group {g}: {other:?}"),
            }
        }
        for (g, decision) in exact {
            match decision {
                SharedDecision::Unique(id) => originals[g as usize].push(id),
                SharedDecision::Exact(of) => copies_of[g as usize].push(of),
                other => panic!("exact group {g}: {other:?}"),
            }
        }
    }
    assert_eq!(decisions, WORKERS * GROUPS as usize);
    assert!(
        kept.iter().all(|&k| k == 1),
        "pages kept per group: {kept:?}"
    );
    // Of the same text raced by every worker, one is kept and the others are its copies.
    for g in 0..GROUPS as usize {
        assert_eq!(originals[g].len(), 1, "exact group {g}: {originals:?}");
        assert!(
            copies_of[g].iter().all(|&of| of == originals[g][0])
                && copies_of[g].len() == WORKERS - 1,
            "exact group {g}: {:?} of {:?}",
            copies_of[g],
            originals[g]
        );
    }
}

/// Deletes the keys matching `pattern` on every node: a write lost when a master failed
/// over before its replica had it.
fn lose(redis: &RedisCluster, pattern: &str) {
    for &port in &redis.ports {
        for key in redis_cluster::cli(port, &["--scan", "--pattern", pattern]).lines() {
            redis_cluster::cli(port, &["DEL", key]);
        }
    }
}

#[test]
#[ignore = "needs redis-server and redis-cli (apt-get install redis-server); CI runs it with --ignored"]
fn reconcile_finds_the_later_of_two_kept_copies_after_a_lost_write() {
    use crawldedup::cluster::index::{SharedDecision, SharedIndex};
    use crawldedup::index::IndexConfig;
    let redis = RedisCluster::start();
    let cluster = Cluster::connect(&redis.urls()).unwrap();
    let config = IndexConfig::default().with_expected(1_000_000);
    let index = SharedIndex::open(&cluster, "rc", config)
        .unwrap()
        .owned_by("w", 1);
    let keep = |name: &str, text: &str| match index.check_and_insert(&doc(name, text)).unwrap() {
        SharedDecision::Unique(id) => id,
        other => panic!("{name}: {other:?}"),
    };
    let mut kept = Vec::new();
    for i in 0..50 {
        kept.push(keep(&format!("first/{i}"), &article(i)));
    }
    // The digest claims and the buckets are lost: an exact and a near copy keep too.
    lose(&redis, "rc:nd:digest:*");
    lose(&redis, "rc:nd:[tb]:*");
    let exact = keep("later/exact", &article(3));
    let near = keep("later/near", &variant(&article(8), 1));
    kept.extend([exact, near]);
    index.commit(&kept).unwrap();
    let mut found = Vec::new();
    let read = index.reconcile(|r| found.push(r)).unwrap();
    assert_eq!(read, 52);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!((found[0].id, found[0].of_id), (exact, kept[3]));
    assert!(found[0].exact);
    assert_eq!(found[0].of, "first/3");
    assert_eq!((found[1].id, found[1].of_id), (near, kept[8]));
    assert!(!found[1].exact && found[1].similarity.resemblance > 0.8);
    // Recorded: the later copies now count as duplicates, and a second pass finds nothing.
    let mut again = Vec::new();
    assert_eq!(index.reconcile(|r| again.push(r)).unwrap(), 50);
    assert!(again.is_empty(), "{again:?}");
}
