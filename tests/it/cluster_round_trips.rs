//! A page's round trips on a real Redis Cluster: one when its candidates are among its
//! worker's last pages, two when another worker entered them, and one again once the
//! worker has read them settled; and one sent again after it was applied.

use crate::cluster_index::{article, doc, stored_articles, two_connections, variant};
use crate::redis_cluster::RedisCluster;

use std::time::Duration;

use crawldedup::cluster::filter::Cluster;
use crawldedup::cluster::index::{SharedDecision, SharedIndex};
use crawldedup::cluster::members::Membership;
use crawldedup::cluster::ring::Member;
use crawldedup::index::IndexConfig;

/// `decide` and the round trips it took on `cluster`.
fn counted<T>(cluster: &Cluster, decide: impl FnOnce() -> T) -> (T, u64) {
    let before = cluster.round_trips();
    let decided = decide();
    (decided, cluster.round_trips() - before)
}

#[test]
#[ignore = "needs redis-server and redis-cli (apt-get install redis-server); CI runs it with --ignored"]
fn a_copy_of_a_workers_own_page_takes_one_round_trip_and_of_another_workers_two() {
    let (redis, one, two) = two_connections();
    let config = IndexConfig::default().with_expected(1_000_000);
    let a = SharedIndex::open(&one, "nd", config).unwrap();
    let b = SharedIndex::open(&two, "nd", config).unwrap();
    // Fewer pages than an id block, so that no page of the test takes a block of ids.
    let ids = stored_articles(&a, 40);
    // The worker's own pages: the digest's holder and a near candidate judged from memory.
    let (exact, trips) = counted(&one, || a.check_and_insert(&doc("a/copy", &article(7))));
    assert_eq!(exact.unwrap(), SharedDecision::Exact(ids[7]));
    assert_eq!(trips, 1, "an exact copy of its own page");
    let (near, trips) = counted(&one, || {
        a.check_and_insert(&doc("a/edit", &variant(&article(9), 1)))
    });
    assert!(
        matches!(near.unwrap(), SharedDecision::Near { of, .. } if of == ids[9]),
        "a near copy of its own page"
    );
    assert_eq!(trips, 1, "a near copy of its own page");
    // Another worker reads the candidates' records and marks: a second round trip (and a
    // block of ids, the first page of this worker).
    let (_, first) = counted(&two, || b.check_and_insert(&doc("b/0", &article(1_000))));
    let (near, trips) = counted(&two, || {
        b.check_and_insert(&doc("b/edit", &variant(&article(11), 2)))
    });
    assert!(
        matches!(near.unwrap(), SharedDecision::Near { of, .. } if of == ids[11]),
        "a near copy of another worker's page"
    );
    assert_eq!((first, trips), (2, 2), "another worker's page");
    // The verdicts held back went out with the flush: both copies of the worker's own
    // pages (the ids after its articles, from the same block) are marked `yield`.
    a.flush_verdicts().unwrap();
    for copy in [ids[39] + 1, ids[39] + 2] {
        let key = format!("nd:nd:v:{{{copy}}}");
        let verdict = crate::redis_cluster::cli(redis.ports[0], &["-c", "GET", &key]);
        assert_eq!(verdict.trim(), "yield", "document {copy}");
    }
}

/// Two edited copies of article `seed` decided by `index` (on `cluster`), named `name/0`
/// and `name/1`: both near copies of `of`, in `expected` round trips.
fn two_copies(
    cluster: &Cluster,
    index: &SharedIndex<'_>,
    name: &str,
    (seed, edits): (u64, [usize; 2]),
    (of, expected): (u64, [u64; 2]),
) {
    let trips: Vec<u64> = edits
        .iter()
        .enumerate()
        .map(|(k, &edit)| {
            let copy = doc(&format!("{name}/{k}"), &variant(&article(seed), edit));
            let (decision, trips) = counted(cluster, || index.check_and_insert(&copy));
            let decision = decision.unwrap();
            assert!(
                matches!(decision, SharedDecision::Near { of: o, .. } if o == of),
                "{name}/{k}: {decision:?}"
            );
            trips
        })
        .collect();
    assert_eq!(
        trips, expected,
        "{name}: round trips of the first copy and the next"
    );
}

/// The copies of a story on many hosts, decided by workers other than its original's: the
/// first copy a worker meets reads the original and the earlier copies (a second round
/// trip), and the next copies are decided in one, against the same documents, as long as
/// what was read is final.
#[test]
#[ignore = "needs redis-server and redis-cli (apt-get install redis-server); CI runs it with --ignored"]
fn copies_of_another_workers_settled_pages_take_one_round_trip_after_the_first() {
    let redis = RedisCluster::start();
    let [one, two, three] = std::array::from_fn(|_| Cluster::connect(&redis.urls()).unwrap());
    let config = IndexConfig::default().with_expected(1_000_000);
    let a = SharedIndex::open(&one, "nd", config).unwrap();
    let b = SharedIndex::open(&two, "nd", config).unwrap();
    let c = SharedIndex::open(&three, "nd", config).unwrap();
    let ids = stored_articles(&a, 20);
    a.flush_verdicts().unwrap();
    // Each worker's first page takes its block of ids.
    b.check_and_insert(&doc("b/0", &article(1_000))).unwrap();
    c.check_and_insert(&doc("c/0", &article(2_000))).unwrap();
    // Of no crawl: a document is settled once its verdict is written.
    two_copies(&two, &b, "b/copy", (4, [1, 2]), (ids[4], [2, 1]));
    let (exact, trips) = counted(&two, || b.check_and_insert(&doc("b/exact", &article(4))));
    assert_eq!(exact.unwrap(), SharedDecision::Exact(ids[4]));
    assert_eq!(trips, 1, "the digest's holder is known settled");
    // A third worker meets the original and b's copies, which yielded: the original is
    // named, not a copy, and all are known after the first.
    b.flush_verdicts().unwrap();
    two_copies(&three, &c, "c/copy", (4, [3, 4]), (ids[4], [2, 1]));
    // A crawl's documents: read again until committed (a page kept and not yet durable may
    // still be lost), then known.
    let w = SharedIndex::open(&one, "crawl", config)
        .unwrap()
        .owned_by("w", 1);
    let x = SharedIndex::open(&two, "crawl", config).unwrap();
    let kept = stored_articles(&w, 5);
    // The owner never beat: its uncommitted pages are lost and passed over.
    x.check_and_insert(&doc("x/0", &article(3_000))).unwrap();
    let lost = x.check_and_insert(&doc("x/1", &variant(&article(1), 1)));
    assert!(
        matches!(lost.unwrap(), SharedDecision::Unique(_)),
        "a lost original is passed over"
    );
    w.commit(&kept).unwrap();
    two_copies(&two, &x, "x/copy", (2, [1, 2]), (kept[2], [2, 1]));
    // A live worker's pages kept and not yet committed: read every time, and whether their
    // worker is alive asked once while its heartbeat key is sure to stand.
    let (_member, _v, kept, y) =
        live_pages_and_a_reader(&one, &two, "live", Duration::from_secs(30));
    two_copies(&two, &y, "y/copy", (3, [1, 2]), (kept[3], [3, 2]));
}

/// Worker `v` joins crawl `crawl` on `one` (its heartbeat key alive for `ttl`, never
/// renewed) and stores five articles, not committed; worker `y`, on `two`, has decided its
/// first page (its block of ids taken). Returns `v`'s membership and index, its documents,
/// and `y`'s index.
fn live_pages_and_a_reader<'c>(
    one: &'c Cluster,
    two: &'c Cluster,
    crawl: &str,
    ttl: Duration,
) -> (Membership<'c>, SharedIndex<'c>, Vec<u64>, SharedIndex<'c>) {
    let config = IndexConfig::default().with_expected(1_000_000);
    let member = Membership::join(one, crawl, Member::new("v", 1), ttl).unwrap();
    let v = SharedIndex::open(one, crawl, config)
        .unwrap()
        .owned_by("v", member.incarnation());
    let kept = stored_articles(&v, 5);
    let y = SharedIndex::open(two, crawl, config).unwrap();
    y.check_and_insert(&doc("y/0", &article(4_000))).unwrap();
    (member, v, kept, y)
}

/// A worker that finds another alive remembers it only while that one's heartbeat key is
/// sure to stand: asked about moments before the key expires, it asks again after, and the
/// dead worker's pages not yet committed are lost and passed over. (The new owner of a dead
/// worker's host fetches its lost pages again only after the key expired: judged against
/// them, each would be lost for good.)
#[test]
#[ignore = "needs redis-server and redis-cli (apt-get install redis-server); CI runs it with --ignored"]
fn a_worker_found_alive_just_before_its_heartbeat_lapses_is_found_gone_after() {
    let (_redis, one, two) = two_connections();
    let ttl = Duration::from_millis(3_000);
    let joined = std::time::Instant::now();
    let (_member, _v, kept, y) = live_pages_and_a_reader(&one, &two, "lapse", ttl);
    // Asked about 0.7 s before the key expires (it never beats again).
    std::thread::sleep(
        (joined + ttl - Duration::from_millis(700))
            .saturating_duration_since(std::time::Instant::now()),
    );
    let alive = y.check_and_insert(&doc("y/copy/0", &variant(&article(2), 1)));
    assert!(
        matches!(alive.unwrap(), SharedDecision::Near { of, .. } if of == kept[2]),
        "a live worker's page is an original"
    );
    // 0.15 s after it expired: the worker is gone, its page lost.
    std::thread::sleep(
        (joined + ttl + Duration::from_millis(150))
            .saturating_duration_since(std::time::Instant::now()),
    );
    let lost = y.check_and_insert(&doc("y/copy/1", &variant(&article(2), 2)));
    assert!(
        matches!(lost.unwrap(), SharedDecision::Unique(_)),
        "a page of a worker whose heartbeat lapsed is passed over"
    );
}

/// A heartbeat key can go before the time to live read for it (a master that failed over
/// before a renewal reached its replica): a worker found alive is then remembered alive a
/// little too long. A crawl's worker forgets the live ones when it sees the live set change,
/// before it takes the gone worker's hosts over, and asks again.
#[test]
#[ignore = "needs redis-server and redis-cli (apt-get install redis-server); CI runs it with --ignored"]
fn a_worker_asks_again_who_is_alive_once_told_to_forget() {
    let (redis, one, two) = two_connections();
    let (_member, _v, kept, y) =
        live_pages_and_a_reader(&one, &two, "gone", Duration::from_secs(30));
    let near_original = |name: &str, edit: usize| {
        let decided = y.check_and_insert(&doc(name, &variant(&article(2), edit)));
        matches!(decided.unwrap(), SharedDecision::Near { of, .. } if of == kept[2])
    };
    assert!(near_original("y/copy/0", 1), "a live worker's page");
    let gone = crate::redis_cluster::cli(redis.ports[0], &["-c", "DEL", "{gone}:worker:v"]);
    assert_eq!(gone.trim(), "1");
    assert!(near_original("y/copy/1", 2), "remembered alive");
    y.forget_alive();
    assert!(
        !near_original("y/copy/2", 3),
        "asked again: gone, its page lost"
    );
}

#[test]
#[ignore = "needs redis-server and redis-cli (apt-get install redis-server); CI runs it with --ignored"]
fn a_round_trip_sent_again_after_it_was_applied_leaves_the_page_kept_not_a_copy_of_itself() {
    let redis = RedisCluster::start();
    let one = Cluster::connect(&redis.urls()).unwrap();
    let a = SharedIndex::open(&one, "nd", IndexConfig::default()).unwrap();
    let page = doc("a/0", &article(0));
    // What the first attempt of the page's round trip leaves when a master fails over
    // after applying it and before answering: the page's digest claimed by the id the page
    // takes (the first of the index's first block). The attempt sent again is answered
    // with that id as the holder.
    let key = format!("nd:nd:digest:{{{}}}", page.digest);
    let set = crate::redis_cluster::cli(redis.ports[0], &["-c", "SET", &key, "1"]);
    assert_eq!(set.trim(), "OK");
    assert_eq!(
        a.check_and_insert(&page).unwrap(),
        SharedDecision::Unique(1)
    );
    // Its copy is its exact duplicate, as ever.
    assert_eq!(
        a.check_and_insert(&doc("a/1", &article(0))).unwrap(),
        SharedDecision::Exact(1)
    );
}

/// A page's scripts go by their SHA-1 (`EVALSHA`). A master that no longer has them in its
/// script cache (restarted, or a replica promoted) answers `NOSCRIPT`: the connection
/// loads them on every master and sends the round trip again, and the decisions are those
/// of a cache that never emptied.
#[test]
#[ignore = "needs redis-server and redis-cli (apt-get install redis-server); CI runs it with --ignored"]
fn pages_decided_after_every_master_lost_its_scripts_are_decided_as_before() {
    let redis = RedisCluster::start();
    let one = Cluster::connect(&redis.urls()).unwrap();
    let a = SharedIndex::open(&one, "nd", IndexConfig::default()).unwrap();
    let ids = stored_articles(&a, 20);
    for &port in &redis.ports {
        let flushed = crate::redis_cluster::cli(port, &["SCRIPT", "FLUSH"]);
        assert_eq!(flushed.trim(), "OK", "port {port}");
    }
    let (near, trips) = counted(&one, || {
        a.check_and_insert(&doc("a/edit", &variant(&article(3), 1)))
    });
    assert!(
        matches!(near.unwrap(), SharedDecision::Near { of, .. } if of == ids[3]),
        "a near copy after the scripts were flushed"
    );
    assert_eq!(trips, 1, "sent again on the same round trip's count");
    assert!(matches!(
        a.check_and_insert(&doc("a/new", &article(500))).unwrap(),
        SharedDecision::Unique(_)
    ));
    assert_eq!(
        a.check_and_insert(&doc("a/copy", &article(5))).unwrap(),
        SharedDecision::Exact(ids[5])
    );
}
