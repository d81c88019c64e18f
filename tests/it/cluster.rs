//! The cluster's URL filter and membership against a real Redis Cluster (the shared index's
//! tests are in `cluster_index.rs` and beside it): three `redis-server` nodes on
//! loopback (see `common/redis_cluster.rs`; skipped with one line when Redis is not
//! installed, except on CI).

use crate::redis_cluster;

use std::collections::HashSet;
use std::sync::Arc;

use crawldedup::cluster::filter::{Cluster, ClusterError, ClusterFilter};
use redis_cluster::RedisCluster;

fn member(i: u64) -> String {
    format!("https://site{}.example.com/page/{i}", i % 97)
}

fn stranger(i: u64) -> String {
    format!("https://other{}.example.org/item?id={i}", i % 89)
}

/// Checks in batches of 1,000, as a worker's pipeline would.
fn check_all(filter: &ClusterFilter<'_>, urls: &[String], insert: bool) -> Vec<bool> {
    urls.chunks(1000)
        .flat_map(|chunk| {
            let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
            if insert {
                filter.check_and_insert(&refs).unwrap()
            } else {
                filter.contains(&refs).unwrap()
            }
        })
        .collect()
}

#[test]
#[ignore = "needs redis-server and redis-cli (apt-get install redis-server); CI runs it with --ignored"]
fn the_cluster_filter_answers_new_once_and_its_rate_at_n_is_within_15_percent_of_p() {
    let redis = RedisCluster::start();
    let cluster = Cluster::connect(&redis.urls()).unwrap();
    let (n, p) = (100_000u64, 0.01);
    let filter = ClusterFilter::open(&cluster, "fp", n, p).unwrap();
    let members: Vec<String> = (0..n).map(member).collect();
    let first = check_all(&filter, &members, true);
    // A false positive can make a new URL look seen: few, and never the other way round.
    let new = first.iter().filter(|&&b| b).count() as u64;
    assert!(
        n - new < n / 100,
        "{} of {n} new URLs answered seen",
        n - new
    );
    let again = check_all(&filter, &members, true);
    assert!(again.iter().all(|&b| !b), "a recorded URL was answered new");
    assert!(check_all(&filter, &members, false).iter().all(|&b| b));

    let probes: Vec<String> = (0..200_000).map(stranger).collect();
    let hits = check_all(&filter, &probes, false)
        .iter()
        .filter(|&&b| b)
        .count();
    let rate = hits as f64 / probes.len() as f64;
    println!(
        "cluster filter, n = {n}, p = {p}: {} blocks of 2^{} bits, measured rate {rate}",
        filter.layout().blocks,
        filter.layout().block_log2
    );
    assert!((rate - p).abs() <= 0.15 * p, "measured {rate}, p = {p}");

    // The blocks spread over the nodes: every node holds some.
    for &port in &redis.ports {
        let keys = std::process::Command::new("redis-cli")
            .args(["-h", "127.0.0.1", "-p", &port.to_string(), "DBSIZE"])
            .output()
            .unwrap();
        let keys: u64 = String::from_utf8_lossy(&keys.stdout)
            .trim()
            .parse()
            .unwrap();
        assert!(keys > 0, "node {port} holds no block");
    }
}

#[test]
#[ignore = "needs redis-server and redis-cli (apt-get install redis-server); CI runs it with --ignored"]
fn of_many_workers_presenting_the_same_urls_at_once_exactly_one_gets_new() {
    let redis = RedisCluster::start();
    let urls: Arc<Vec<String>> = Arc::new((0..20_000).map(member).collect());
    let nodes = Arc::new(redis.urls());
    let workers: Vec<_> = (0..8)
        .map(|w| {
            let (urls, nodes) = (Arc::clone(&urls), Arc::clone(&nodes));
            std::thread::spawn(move || {
                // Each worker has its own connection and its own order.
                let cluster = Cluster::connect(&nodes).unwrap();
                let filter = ClusterFilter::open(&cluster, "race", 1_000_000, 0.001).unwrap();
                let mut order: Vec<&String> = urls.iter().collect();
                order.rotate_left(w * urls.len() / 8);
                let mut won = Vec::new();
                for chunk in order.chunks(250) {
                    let refs: Vec<&str> = chunk.iter().map(|s| s.as_str()).collect();
                    for (url, new) in chunk.iter().zip(filter.check_and_insert(&refs).unwrap()) {
                        if new {
                            won.push((*url).clone());
                        }
                    }
                }
                won
            })
        })
        .collect();
    let mut winners = HashSet::new();
    let mut total = 0;
    for worker in workers {
        for url in worker.join().unwrap() {
            total += 1;
            winners.insert(url);
        }
    }
    assert_eq!(
        total,
        winners.len(),
        "a URL was answered new to two workers"
    );
    // At p = 0.001 and 20,000 of 1 M URLs, a false positive is all but impossible.
    assert_eq!(winners.len(), urls.len());
}

#[test]
#[ignore = "needs redis-server and redis-cli (apt-get install redis-server); CI runs it with --ignored"]
fn a_worker_asking_for_another_layout_is_refused_in_one_line() {
    let redis = RedisCluster::start();
    let cluster = Cluster::connect(&redis.urls()).unwrap();
    ClusterFilter::open(&cluster, "crawl", 1_000_000, 0.01).unwrap();
    ClusterFilter::open(&cluster, "crawl", 1_000_000, 0.01).unwrap();
    let error = ClusterFilter::open(&cluster, "crawl", 2_000_000, 0.01)
        .err()
        .expect("another n is refused");
    assert!(matches!(error, ClusterError::State { .. }), "{error}");
    let message = error.to_string();
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(message.contains("n=1000000"), "{message}");
}

#[test]
fn an_unreachable_cluster_is_one_clear_error_not_a_hang() {
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let error = Cluster::connect(&[format!("redis://127.0.0.1:{port}/")])
        .err()
        .expect("nothing listens");
    let message = error.to_string();
    assert!(message.contains(&port.to_string()), "{message}");
    println!("{message}");
    assert_eq!(message.lines().count(), 1, "{message}");
}

#[test]
#[ignore = "needs redis-server and redis-cli (apt-get install redis-server); CI runs it with --ignored"]
fn a_node_that_goes_away_mid_crawl_is_an_error_not_a_hang() {
    let mut redis = RedisCluster::start();
    let cluster = Cluster::connect(&redis.urls()).unwrap();
    let filter = ClusterFilter::open(&cluster, "gone", 100_000, 0.01).unwrap();
    let urls: Vec<String> = (0..2_000).map(member).collect();
    check_all(&filter, &urls, true);
    redis.kill_node(0);
    let refs: Vec<&str> = urls.iter().map(String::as_str).collect();
    let error = filter
        .check_and_insert(&refs)
        .expect_err("a third of the blocks is gone");
    let message = error.to_string();
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(message.starts_with("redis cluster "), "{message}");
    println!("{message}");
}

#[test]
#[ignore = "needs redis-server and redis-cli (apt-get install redis-server); CI runs it with --ignored"]
fn workers_see_the_same_live_set_and_a_silent_worker_drops_out_with_only_its_hosts_moving() {
    use crawldedup::cluster::members::{Membership, live};
    use crawldedup::cluster::ring::Member;
    use std::time::Duration;
    let redis = RedisCluster::start();
    let cluster = Cluster::connect(&redis.urls()).unwrap();
    let long = Duration::from_secs(30);
    let a = Membership::join(&cluster, "crawl", Member::new("a", 1), long).unwrap();
    let b = Membership::join(&cluster, "crawl", Member::new("b", 2), long).unwrap();
    let c = Membership::join(
        &cluster,
        "crawl",
        Member::new("c", 1),
        Duration::from_millis(1500),
    )
    .unwrap();
    // A second process with a live id is refused.
    let twice = Membership::join(&cluster, "crawl", Member::new("a", 1), long)
        .err()
        .expect("a live id is refused");
    assert!(twice.to_string().contains("already alive"), "{twice}");
    let members = live(&cluster, "crawl").unwrap();
    assert_eq!(
        members,
        vec![
            Member::new("a", 1),
            Member::new("b", 2),
            Member::new("c", 1)
        ]
    );
    let (before, seen_by_b) = (a.ring().unwrap(), b.ring().unwrap());
    assert_eq!(before.members().len(), 3);
    let hosts: Vec<String> = (0..5000).map(|i| format!("h{i}.example")).collect();
    for host in &hosts {
        assert_eq!(before.owner(host), seen_by_b.owner(host));
    }
    // `c` stops renewing: after its ttl it is gone, and only its hosts move.
    std::thread::sleep(Duration::from_millis(2000));
    a.heartbeat().unwrap();
    let after = a.ring().unwrap();
    assert_eq!(after.members().len(), 2);
    for host in &hosts {
        let (was, is) = (before.owner(host).unwrap(), after.owner(host).unwrap());
        if was.id != "c" {
            assert_eq!(was, is, "{host}");
        }
    }
    let late = c.heartbeat().expect_err("an expired worker is told");
    assert!(late.to_string().contains("taken for dead"), "{late}");
    // A clean leave is seen at once.
    b.leave().unwrap();
    assert_eq!(live(&cluster, "crawl").unwrap(), vec![Member::new("a", 1)]);
}

#[test]
#[ignore = "needs redis-server and redis-cli (apt-get install redis-server); CI runs it with --ignored"]
fn a_worker_whose_own_thread_is_busy_past_its_ttl_stays_alive_while_its_heartbeat_thread_beats() {
    use crawldedup::cluster::members::{Membership, live};
    use crawldedup::cluster::ring::Member;
    use std::time::Duration;
    let redis = RedisCluster::start();
    let cluster = Cluster::connect(&redis.urls()).unwrap();
    let ttl = Duration::from_millis(600);
    let a = Membership::join(&cluster, "crawl", Member::new("a", 1), ttl).unwrap();
    let beater = a.beat_in_background().unwrap();
    // This thread sends nothing for five times the ttl (as a crawl loop in a long flush).
    std::thread::sleep(Duration::from_millis(3000));
    beater.check().unwrap();
    assert_eq!(live(&cluster, "crawl").unwrap(), vec![Member::new("a", 1)]);
    a.heartbeat().unwrap();
    // Stopped (as in a process that hangs or dies): gone once the ttl passed, and told so.
    drop(beater);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(live(&cluster, "crawl").unwrap().is_empty());
    let late = a.heartbeat().expect_err("an expired worker is told");
    assert!(late.to_string().contains("taken for dead"), "{late}");
}

#[test]
#[ignore = "needs redis-server and redis-cli (apt-get install redis-server); CI runs it with --ignored"]
fn links_reach_their_hosts_owner_once_and_a_dead_workers_inbox_moves_to_the_new_owners() {
    use crawldedup::cluster::inbox::{Handoff, Inbox, reroute, send_by_owner};
    use crawldedup::cluster::ring::{Member, Ring};
    use std::collections::HashMap;
    let redis = RedisCluster::start();
    let cluster = Cluster::connect(&redis.urls()).unwrap();
    let host = |url: &str| url::Url::parse(url).ok()?.host_str().map(str::to_string);
    let three = Ring::new(["a", "b", "c"].map(|id| Member::new(id, 1)));
    let links: Vec<(String, Handoff)> = (0..3000)
        .map(|i| {
            let url = format!("https://h{}.example/page/{i}", i % 300);
            let link = Handoff {
                url: url.clone(),
                depth: 1 + i % 3,
                priority: i,
                moved: i % 2 == 0,
            };
            (host(&url).unwrap(), link)
        })
        .collect();
    let sent = send_by_owner(&cluster, "crawl", &three, links.clone()).unwrap();
    assert_eq!(sent.values().sum::<usize>(), links.len());

    // `b` reads part of its inbox and is killed before it acknowledges anything; restarted,
    // it finds what it had read among its unacknowledged entries.
    let b = Inbox::open(&cluster, "crawl", "b").unwrap();
    let read = b.receive(500).unwrap();
    assert_eq!(read.len(), 500.min(sent["b"]));
    let b = Inbox::open(&cluster, "crawl", "b").unwrap();
    assert_eq!(b.unacknowledged(10_000).unwrap(), read);

    // `c` reads and acknowledges everything it owns.
    let c = Inbox::open(&cluster, "crawl", "c").unwrap();
    let mut got: HashMap<String, (String, Handoff)> = HashMap::new();
    loop {
        let batch = c.receive(700).unwrap();
        if batch.is_empty() {
            break;
        }
        let ids: Vec<String> = batch.iter().map(|(id, _)| id.clone()).collect();
        for (_, link) in batch {
            assert!(got.insert(link.url.clone(), ("c".into(), link)).is_none());
        }
        c.acknowledge(&ids).unwrap();
    }
    assert_eq!(got.len(), sent["c"]);
    assert!(c.unacknowledged(10).unwrap().is_empty());

    // `b` is gone for good: its inbox, read and unread, goes to the owners in the new ring,
    // once.
    let two = Ring::new(["a", "c"].map(|id| Member::new(id, 1)));
    let moved = reroute(&cluster, "crawl", "b", &two, host).unwrap();
    assert_eq!(moved, sent["b"]);
    assert_eq!(reroute(&cluster, "crawl", "b", &two, host).unwrap(), 0);
    for id in ["a", "c"] {
        let inbox = Inbox::open(&cluster, "crawl", id).unwrap();
        loop {
            let batch = inbox.receive(1000).unwrap();
            if batch.is_empty() {
                break;
            }
            for (_, link) in batch {
                let owner = two.owner(&host(&link.url).unwrap()).unwrap();
                assert_eq!(owner.id, id, "{} reached the wrong worker", link.url);
                assert!(
                    got.insert(link.url.clone(), (id.into(), link)).is_none(),
                    "a link handed on twice"
                );
            }
        }
    }
    // Every link arrived exactly once, with what was sent.
    assert_eq!(got.len(), links.len());
    for (_, link) in &links {
        assert_eq!(&got[&link.url].1, link);
    }
}
