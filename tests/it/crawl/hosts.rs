//! Per host: its share of the concurrency, robots.txt that fails, redirects to another host,
//! and stored pages reaching `pages.jsonl` before a checkpoint.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_gets_exactly_its_share_of_the_concurrency() {
    // Every response takes 40 ms, so requests overlap whenever the crawler lets them.
    let site = Site::without_traps(4, 6);
    for (per_host, delay_ms, want) in [(4, 0, 4), (1, 0, 1), (4, 200, 1)] {
        let server = crawldedup::fixture::serve_with_latency(
            site.clone(),
            std::time::Duration::from_millis(40),
        )
        .await
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut config = crawl_config(
            &dir.path().join("state"),
            &dir.path().join("out"),
            server.url("/"),
        );
        config.crawl.concurrency = 16;
        config.crawl.per_host_concurrency = per_host;
        config.crawl.per_host_delay_ms = delay_ms;
        config.crawl.max_pages = 20;
        let summary = crawldedup::crawl::crawl(&config, std::future::pending())
            .await
            .unwrap();
        assert_eq!(summary.totals.fetched, 20);
        // robots.txt is fetched once before the pages, alone.
        assert_eq!(
            server.most_concurrent(),
            want,
            "per_host_concurrency {per_host}, delay {delay_ms} ms"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_robots_txt_5xx_closes_the_host_until_a_retry_succeeds() {
    let (base, log) = tiny_site(
        |n| {
            if n == 0 {
                (503, "busy")
            } else {
                (200, "User-agent: *\nAllow: /\n")
            }
        },
        None,
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let summary = crawl_tiny(format!("{base}/"), dir.path()).await;
    let log = log.lock().unwrap().clone();
    assert_eq!(
        &log[..2],
        ["/robots.txt", "/robots.txt"],
        "no page before robots.txt answered: {log:?}"
    );
    assert_eq!(
        log.iter().filter(|p| *p == "/robots.txt").count(),
        2,
        "{log:?}"
    );
    assert!(log.contains(&"/a".to_string()), "{log:?}");
    assert_eq!(summary.totals.stored, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_robots_txt_that_keeps_failing_ends_in_a_recorded_failure() {
    let (base, log) = tiny_site(|_| (500, "broken"), None).await;
    let dir = tempfile::tempdir().unwrap();
    let summary = crawl_tiny(format!("{base}/"), dir.path()).await;
    let log = log.lock().unwrap().clone();
    assert!(
        log.iter().all(|p| p == "/robots.txt"),
        "no page fetched: {log:?}"
    );
    assert_eq!(log.len(), 3, "robots.txt asked once per attempt: {log:?}");
    assert_eq!(summary.totals.fetched, 0);
    let failures = lines(&dir.path().join("out/failures.jsonl"));
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0]["kind"], "robots_unavailable");
    assert_eq!(failures[0]["url"], format!("{base}/"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_to_another_host_waits_for_that_hosts_robots_txt() {
    // The target host is the fixture site, whose robots.txt disallows /private/.
    let other = serve(Site::new(3, 1)).await.unwrap();
    for (target, fetched) in [("/private/staff.html", false), ("/topic/baking/", true)] {
        let (base, _log) = tiny_site(|_| (404, ""), Some(other.url(target))).await;
        let dir = tempfile::tempdir().unwrap();
        let mut config = crawl_config(
            &dir.path().join("state"),
            &dir.path().join("out"),
            format!("{base}/"),
        );
        config.crawl.respect_robots = true;
        config.crawl.max_depth = 1;
        crawldedup::crawl::crawl(&config, std::future::pending())
            .await
            .unwrap();
        assert_eq!(
            other.requests().iter().any(|r| r == target),
            fetched,
            "{target}: {:?}",
            other.requests()
        );
        let failures = lines(&dir.path().join("out/failures.jsonl"));
        let redirected = failures
            .iter()
            .find(|f| f["kind"] == "redirected")
            .expect("the redirect is recorded");
        assert_eq!(redirected["url"], format!("{base}/go"));
        assert!(
            redirected["reason"]
                .as_str()
                .unwrap()
                .contains(&other.url(target))
        );
        if !fetched {
            assert!(
                failures
                    .iter()
                    .any(|f| f["kind"] == "robots" && f["url"] == other.url(target)),
                "{failures:?}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_pages_reach_pages_jsonl_soon_without_waiting_for_a_checkpoint() {
    // Every response takes 100 ms and one request runs at a time, so the crawl is slow;
    // no checkpoint comes during the test, yet each stored page is written shortly after.
    let server = crawldedup::fixture::serve_with_latency(
        Site::without_traps(4, 6),
        std::time::Duration::from_millis(100),
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut config = crawl_config(&dir.path().join("state"), &out, server.url("/"));
    config.crawl.concurrency = 1;
    let options = crawldedup::crawl::CrawlOptions::default()
        .with_checkpoint_every(std::time::Duration::from_secs(3600));
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let crawl = tokio::spawn(async move {
        crawldedup::Crawler::builder(&config)
            .options(&options)
            .run(async {
                let _ = stop_rx.await;
            })
            .await
    });
    let pages = out.join("pages.jsonl");
    let served = loop {
        // A whole line (the writer may be halfway through one).
        if std::fs::read_to_string(&pages).is_ok_and(|text| text.contains('\n')) {
            break server.requests().len();
        }
        assert!(
            !crawl.is_finished(),
            "the crawl ended before any page was written"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    };
    // A batch of output jobs fills only after dozens of pages: the first line came from
    // the batch's age, a few requests after its page.
    assert!(
        served < 12,
        "first stored page written after {served} requests"
    );
    assert!(!crawl.is_finished());
    stop_tx.send(()).unwrap();
    let summary = crawl.await.unwrap().unwrap();
    assert!(summary.stopped_early);
    assert_eq!(
        lines(&pages).len() as u64,
        summary.totals.stored,
        "after the stop every stored page is in pages.jsonl"
    );
}
