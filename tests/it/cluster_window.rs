//! Time windows on a real three-node Redis Cluster, as `window.rs` and `window_precision.rs`
//! check them on one machine: a shared index with retention (a fingerprint just inside the
//! window matches on every worker, just outside it does not, to within a second; Redis lets
//! go of what expired) and a shared URL filter that forgets (a URL just before its due time
//! is seen, just after it is new, to the millisecond; the rate over all live slices stays
//! under p; another interval is refused). The workers' clocks are the tests' own.

use crate::cluster_index::{article, doc, variant};
use crate::redis_cluster;

use std::sync::Arc;
use std::time::Duration;

use crawldedup::SeenConfig;
use crawldedup::clock::{Clock, ManualClock};
use crawldedup::cluster::filter::{Cluster, ClusterFilter};
use crawldedup::cluster::index::{SharedDecision, SharedIndex};
use crawldedup::index::IndexConfig;
use redis_cluster::RedisCluster;

/// A moment well after the epoch.
const T0: u64 = 1_700_000_000;
const HOUR: u64 = 3600;
const DAY: u64 = 24 * HOUR;

fn retaining(window: Duration) -> IndexConfig {
    IndexConfig::default()
        .with_expected(100_000)
        .with_retention(Some(window))
}

/// Keys of every node whose name starts with `prefix`.
fn keys(redis: &RedisCluster, prefix: &str) -> Vec<String> {
    let mut all = Vec::new();
    for &port in &redis.ports {
        let listed = redis_cluster::cli(port, &["--scan", "--pattern", &format!("{prefix}*")]);
        all.extend(listed.lines().map(str::to_string));
    }
    all.sort();
    all
}

#[test]
#[ignore = "needs redis-server and redis-cli (apt-get install redis-server); CI runs it with --ignored"]
fn on_a_cluster_a_fingerprint_just_inside_the_window_matches_and_just_outside_does_not() {
    let redis = RedisCluster::start();
    let (one, two) = (
        Cluster::connect(&redis.urls()).unwrap(),
        Cluster::connect(&redis.urls()).unwrap(),
    );
    let window = Duration::from_secs(48 * HOUR);
    // Two workers, each with its own clock, both set by the test.
    let (clock_a, clock_b) = (ManualClock::at(T0), ManualClock::at(T0));
    let a = SharedIndex::open(&one, "ret", retaining(window))
        .unwrap()
        .with_clock(Arc::new(clock_a.clone()));
    let b = SharedIndex::open(&two, "ret", retaining(window))
        .unwrap()
        .with_clock(Arc::new(clock_b.clone()));
    let set = |secs: u64| {
        clock_a.set(secs);
        clock_b.set(secs);
    };
    let SharedDecision::Unique(first) = a.check_and_insert(&doc("a/1", &article(1))).unwrap()
    else {
        panic!("the first page is unique");
    };
    let SharedDecision::Unique(second) = a.check_and_insert(&doc("a/2", &article(2))).unwrap()
    else {
        panic!("the second page is unique");
    };
    a.commit(&[first, second]).unwrap();

    // A second before the window ends, the other worker finds both copies.
    set(T0 + 48 * HOUR - 1);
    assert_eq!(
        b.check_and_insert(&doc("b/1", &article(1))).unwrap(),
        SharedDecision::Exact(first)
    );
    match b
        .check_and_insert(&doc("b/2", &variant(&article(2), 1)))
        .unwrap()
    {
        SharedDecision::Near { of, .. } => assert_eq!(of, second),
        other => panic!("a near copy inside the window: {other:?}"),
    }

    // At the window's end, neither: the exact copy takes the digest over and is a new
    // original, which the next copies match.
    set(T0 + 48 * HOUR);
    let SharedDecision::Unique(again) = b.check_and_insert(&doc("b/1'", &article(1))).unwrap()
    else {
        panic!("an exact copy after the window is a new original");
    };
    let edited = b
        .check_and_insert(&doc("b/2'", &variant(&article(2), 2)))
        .unwrap();
    assert!(
        matches!(edited, SharedDecision::Unique(_)),
        "a near copy after the window: {edited:?}"
    );
    set(T0 + 48 * HOUR + 10);
    assert_eq!(
        a.check_and_insert(&doc("a/1''", &article(1))).unwrap(),
        SharedDecision::Exact(again)
    );

    // Reconciling judges each page at its own time: the page stored again after its
    // original's window is no later copy of it.
    let mut copies = Vec::new();
    b.commit(&[again]).unwrap();
    a.reconcile(|c| copies.push(c)).unwrap();
    assert!(copies.is_empty(), "{copies:?}");

    // Another window, or none, is another layout.
    for other in [retaining(Duration::from_secs(HOUR)), IndexConfig::default()] {
        let refused = SharedIndex::open(&one, "ret", other.with_expected(100_000))
            .err()
            .expect("refused");
        assert_eq!(refused.to_string().lines().count(), 1, "{refused}");
    }
}

#[test]
#[ignore = "needs redis-server and redis-cli (apt-get install redis-server); CI runs it with --ignored"]
fn on_a_cluster_a_fingerprint_is_kept_its_whole_window_and_forgotten_within_a_second_after() {
    let redis = RedisCluster::start();
    let cluster = Cluster::connect(&redis.urls()).unwrap();
    let t0_ms = T0 * 1000;
    for (n, stored_at) in [0u64, 1, 520, 999].into_iter().enumerate() {
        let clock = ManualClock::at(0);
        clock.set_ms(t0_ms + stored_at);
        let index = SharedIndex::open(
            &cluster,
            &format!("sec{n}"),
            retaining(Duration::from_secs(3)),
        )
        .unwrap()
        .with_clock(Arc::new(clock.clone()));
        let SharedDecision::Unique(id) = index.check_and_insert(&doc("a", &article(5))).unwrap()
        else {
            panic!("+{stored_at}: unique");
        };
        let stored = t0_ms + stored_at;
        clock.set_ms(stored + 2_999);
        assert_eq!(
            index.check_and_insert(&doc("b", &article(5))).unwrap(),
            SharedDecision::Exact(id),
            "+{stored_at}: still there a millisecond before the window ends"
        );
        clock.set_ms(stored + 4_000);
        assert!(
            matches!(
                index.check_and_insert(&doc("c", &article(5))).unwrap(),
                SharedDecision::Unique(_)
            ),
            "+{stored_at}: gone within a second after it"
        );
    }
}

#[test]
#[ignore = "needs redis-server and redis-cli (apt-get install redis-server); CI runs it with --ignored"]
fn on_a_cluster_redis_lets_go_of_expired_documents_and_their_buckets() {
    let redis = RedisCluster::start();
    let cluster = Cluster::connect(&redis.urls()).unwrap();
    // The system's clock: Redis's own expiry is what is checked.
    let index = SharedIndex::open(&cluster, "mem", retaining(Duration::from_secs(1))).unwrap();
    let started = crawldedup::clock::SystemClock.now_ms();
    for i in 0..100 {
        index
            .check_and_insert(&doc(&format!("p/{i}"), &article(1000 + i)))
            .unwrap();
    }
    let written = keys(&redis, "mem:nd:");
    assert!(
        written.len() > 100 * 3,
        "records, owners, verdicts and buckets: {}",
        written.len()
    );
    assert!(written.iter().any(|k| k.starts_with("mem:nd:t:")));
    // One second of window, one of the last slice, the margin: gone a moment later.
    let ttl = 1000 + 1000 + crawldedup::cluster::filter::EXPIRY_MARGIN.as_millis() as u64;
    let deadline = started + ttl + 1500;
    loop {
        let left = keys(&redis, "mem:nd:");
        let left: Vec<&String> = left
            .iter()
            .filter(|k| !k.ends_with(":layout") && !k.ends_with(":groups"))
            .collect();
        if left.is_empty() {
            break;
        }
        assert!(
            crawldedup::clock::SystemClock.now_ms() < deadline,
            "{} keys outlived their window: {:?}",
            left.len(),
            &left[..left.len().min(5)]
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // Only the layout, the buckets' slot groups and the id counter stay.
    let counter = keys(&redis, "{mem}:nd:ids");
    assert_eq!(counter.len(), 1, "{counter:?}");
}

fn recrawl(after: Duration, generations: u32, n: u64, p: f64) -> SeenConfig {
    SeenConfig::new(n, p).with_expiry(after, generations)
}

#[test]
#[ignore = "needs redis-server and redis-cli (apt-get install redis-server); CI runs it with --ignored"]
fn on_a_cluster_a_url_comes_due_within_its_interval_and_one_slice_to_the_millisecond() {
    let redis = RedisCluster::start();
    let cluster = Cluster::connect(&redis.urls()).unwrap();
    let day = 86_400_000u64;
    let t0_ms = T0 * 1000;
    for (n, (interval_ms, generations)) in
        [(1_000u64, 8u32), (4_000, 2), (7_000, 64), (30 * day, 8)]
            .into_iter()
            .enumerate()
    {
        let slice = interval_ms.div_ceil(u64::from(generations));
        for (m, offset) in [0, 1, slice / 2, slice - 1].into_iter().enumerate() {
            let clock = ManualClock::at(0);
            let recorded = t0_ms / slice * slice + offset;
            clock.set_ms(recorded);
            let config = recrawl(
                Duration::from_millis(interval_ms),
                generations,
                10_000,
                0.01,
            );
            let filter = ClusterFilter::open_with(&cluster, &format!("due{n}.{m}"), &config)
                .unwrap()
                .with_clock(Arc::new(clock.clone()));
            let what = format!("{interval_ms} ms in {generations}, recorded at +{offset} ms");
            let url = "https://example.com/a";
            assert_eq!(filter.check_and_insert(&[url]).unwrap(), [true], "{what}");
            let due = filter.due_at_ms(recorded).unwrap();
            assert!(
                due >= recorded + interval_ms,
                "{what}: due at +{}",
                due - recorded
            );
            let rounding = u64::from(generations) * slice - interval_ms;
            assert!(
                due <= recorded + interval_ms + slice + rounding,
                "{what}: due at +{} ms, past one slice ({slice} ms)",
                due - recorded
            );
            // Seen a millisecond before its due time, by any worker; finding it again did
            // not put its recrawl off.
            clock.set_ms(due - 1);
            assert_eq!(filter.contains(&[url]).unwrap(), [true], "{what}: early");
            assert_eq!(filter.check_and_insert(&[url]).unwrap(), [false], "{what}");
            // New at its due time, once.
            clock.set_ms(due);
            assert_eq!(filter.contains(&[url]).unwrap(), [false], "{what}: late");
            assert_eq!(filter.check_and_insert(&[url]).unwrap(), [true], "{what}");
            assert_eq!(filter.check_and_insert(&[url]).unwrap(), [false], "{what}");
        }
    }
}

#[test]
#[ignore = "needs redis-server and redis-cli (apt-get install redis-server); CI runs it with --ignored"]
fn on_a_cluster_the_forgetting_filter_stays_under_p_over_all_live_slices() {
    let redis = RedisCluster::start();
    let cluster = Cluster::connect(&redis.urls()).unwrap();
    let (n, p, g) = (40_000u64, 0.01, 4);
    let clock = ManualClock::at(T0);
    let config = recrawl(Duration::from_secs(40 * DAY), g, n, p);
    let filter = ClusterFilter::open_with(&cluster, "rate", &config)
        .unwrap()
        .with_clock(Arc::new(clock.clone()));
    let slice = config.slice_ms().unwrap() / 1000;
    let mut next = 0u64;
    let mut answered_seen = 0;
    for s in 0..12 {
        clock.set(T0 + s * slice + 1);
        let urls: Vec<String> = (next..next + n / u64::from(g))
            .map(|i| format!("https://site-{}.example/page/{i}", i % 97))
            .collect();
        next += urls.len() as u64;
        for chunk in urls.chunks(1000) {
            let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
            answered_seen += (filter.check_and_insert(&refs).unwrap())
                .iter()
                .filter(|&&new| !new)
                .count();
        }
    }
    // New URLs that a false positive made look seen: at most p of them.
    assert!(
        (answered_seen as f64) < next as f64 * p,
        "{answered_seen} of {next}"
    );
    let strangers: Vec<String> = (0..200_000)
        .map(|i| format!("https://other.example/never/{i}"))
        .collect();
    let mut hits = 0;
    for chunk in strangers.chunks(1000) {
        let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
        hits += filter
            .contains(&refs)
            .unwrap()
            .iter()
            .filter(|&&b| b)
            .count();
    }
    let rate = hits as f64 / strangers.len() as f64;
    assert!(
        rate < p,
        "measured {rate} over the 5 live slices, bound {p}"
    );
    // The URLs of expired slices are new again; those of live ones are not.
    assert_eq!(
        filter.contains(&["https://site-0.example/page/0"]).unwrap(),
        [false]
    );
    let last = format!("https://site-{}.example/page/{}", (next - 1) % 97, next - 1);
    assert_eq!(filter.contains(&[&last]).unwrap(), [true]);
}

#[test]
#[ignore = "needs redis-server and redis-cli (apt-get install redis-server); CI runs it with --ignored"]
fn on_a_cluster_a_changed_recrawl_interval_is_refused_in_one_line() {
    let redis = RedisCluster::start();
    let cluster = Cluster::connect(&redis.urls()).unwrap();
    let month = recrawl(Duration::from_secs(30 * DAY), 8, 1_000, 0.01);
    ClusterFilter::open_with(&cluster, "crawl", &month).unwrap();
    ClusterFilter::open_with(&cluster, "crawl", &month).unwrap();
    for other in [
        recrawl(Duration::from_secs(7 * DAY), 8, 1_000, 0.01),
        recrawl(Duration::from_secs(30 * DAY), 4, 1_000, 0.01),
        SeenConfig::new(1_000, 0.01),
    ] {
        let e = ClusterFilter::open_with(&cluster, "crawl", &other)
            .err()
            .expect("refused")
            .to_string();
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.contains("recrawl_after"), "{e}");
    }
    // A slice's blocks expire in Redis; a filter that never forgets keeps its own.
    let forgetting = ClusterFilter::open_with(&cluster, "crawl", &month).unwrap();
    forgetting
        .check_and_insert(&["https://example.com/"])
        .unwrap();
    let blocks = keys(&redis, "crawl:bloom:{");
    assert_eq!(blocks.len(), 1, "{blocks:?}");
    let port = redis
        .ports
        .iter()
        .copied()
        .find(|&port| {
            redis_cluster::cli(port, &["--scan", "--pattern", "crawl:bloom:{*"])
                .contains("crawl:bloom")
        })
        .unwrap();
    let ttl: i64 = redis_cluster::cli(port, &["PTTL", &blocks[0]])
        .trim()
        .parse()
        .unwrap();
    let most = 30 * 86_400_000 + 30 * 86_400_000 / 8 + 2_000 + 1_000;
    assert!(ttl > 0 && ttl <= most, "{ttl}");
}
