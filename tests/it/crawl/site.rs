//! Whole crawls of the fixture site on loopback: each page stored once, each repeat recorded
//! with what it repeats.

use super::*;

/// The failure this pins down: with features dominated by the words every text of a
/// language shares, the more articles the index held, the more distinct articles it called
/// near-duplicates of others and never stored. 1,100 articles with real word statistics
/// (220 of them in Chinese), each with three planted copies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_of_1100_articles_with_real_word_statistics_stores_every_article_once() {
    let site = Site::without_traps(19, 220);
    assert_eq!(site.articles().len(), 1100);
    let chinese = site
        .articles()
        .iter()
        .filter(|a| a.paragraphs[0].contains('。'))
        .count();
    assert_eq!(chinese, 220);
    let server = serve(site.clone()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (state, out) = (dir.path().join("state"), dir.path().join("out"));
    // One request at a time to the one host: each article is decided before its copies.
    let config = crawl_config(&state, &out, server.url("/"));
    let summary = crawldedup::crawl::crawl(&config, std::future::pending())
        .await
        .unwrap();
    assert_eq!(summary.frontier.pending, 0);

    let pages = lines(&out.join("pages.jsonl"));
    let duplicates = lines(&out.join("duplicates.jsonl"));
    let (stored, by_url) = outcome(&pages, &duplicates);
    let mut lost = Vec::new();
    for article in site.articles() {
        let url = server.url(&article.path());
        match stored.get(url.as_str()) {
            Some(1) => {}
            Some(n) => panic!("{url} stored {n} times"),
            None => lost.push(format!("{url}: {:?}", by_url.get(url.as_str()))),
        }
        let topic = TOPICS[article.topic];
        for (path, kind) in [
            (format!("/mirror/{topic}/{}", article.index), "exact"),
            (format!("/print/{topic}/{}", article.index), "exact"),
            (format!("/discuss/{topic}/{}", article.index), "near"),
        ] {
            let copy = server.url(&path);
            let record = by_url
                .get(copy.as_str())
                .unwrap_or_else(|| panic!("{copy} not recorded as a duplicate"));
            assert_eq!(record["kind"], kind, "{copy}");
            assert_eq!(record["of"], url.as_str(), "{copy}");
        }
    }
    assert!(
        lost.is_empty(),
        "{} articles not stored: {lost:#?}",
        lost.len()
    );
    // Nothing but the planted copies (and each topic index under its second URL,
    // /topic/{t}/index.html) is a duplicate.
    assert_eq!(duplicates.len(), 3 * 1100 + 5, "{duplicates:#?}");
    // The home page and five topic indexes are the only other pages.
    assert_eq!(pages.len(), 1100 + 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_of_the_fixture_site_stores_each_page_once_and_records_the_rest() {
    let site = Site::new(5, 2);
    let server = serve(site.clone()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (state, out) = (dir.path().join("state"), dir.path().join("out"));
    let config = crawl_config(&state, &out, server.url("/"));
    let summary = crawldedup::crawl::crawl(&config, std::future::pending())
        .await
        .unwrap();
    assert!(!summary.stopped_early);
    assert_eq!(summary.frontier.pending, 0);
    // `stats` reads the same figures back from the state directory.
    let on_disk = crawldedup::crawl::stats(&state).unwrap();
    assert_eq!(on_disk.totals, summary.totals);
    assert_eq!(on_disk.frontier, summary.frontier);

    let pages = lines(&out.join("pages.jsonl"));
    let duplicates = lines(&out.join("duplicates.jsonl"));
    let failures = lines(&out.join("failures.jsonl"));
    let stored: Vec<&str> = pages
        .iter()
        .map(|p| p["final_url"].as_str().unwrap())
        .collect();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for url in &stored {
        *counts.entry(url).or_default() += 1;
    }
    assert!(
        counts.values().all(|&n| n == 1),
        "a page stored twice: {counts:?}"
    );

    // Every article is stored once; its mirror and print copies are exact duplicates of
    // it, its discussion page a near duplicate.
    for article in site.articles() {
        let url = server.url(&article.path());
        assert!(stored.contains(&url.as_str()), "{url} not stored");
        let topic = TOPICS[article.topic];
        for (path, verdict) in [
            (
                format!("/mirror/{topic}/{}", article.index),
                "exact_duplicate",
            ),
            (
                format!("/print/{topic}/{}", article.index),
                "exact_duplicate",
            ),
            (
                format!("/discuss/{topic}/{}", article.index),
                "near_duplicate",
            ),
        ] {
            let copy = server.url(&path);
            let record = duplicates
                .iter()
                .find(|d| d["url"] == copy.as_str())
                .unwrap_or_else(|| panic!("{copy} not recorded as a duplicate"));
            assert_eq!(record["verdict"], verdict, "{copy}");
            assert_eq!(record["of"], url.as_str(), "{copy}");
        }
    }
    // The international pages are stored with their text decoded.
    for path in ["/intl/latin1", "/intl/gbk", "/intl/sjis"] {
        assert!(
            stored.contains(&server.url(path).as_str()),
            "{path} not stored"
        );
    }

    // Failures, each with its reason.
    let failure = |path: &str| -> &serde_json::Value {
        let url = server.url(path);
        failures
            .iter()
            .find(|f| f["url"] == url.as_str())
            .unwrap_or_else(|| panic!("no failure recorded for {path}: {failures:#?}"))
    };
    assert_eq!(failure("/loop/a")["kind"], "redirect_loop");
    assert_eq!(failure("/missing")["status"], 404);
    assert_eq!(failure("/broken")["status"], 500);
    assert_eq!(failure("/broken")["attempts"], 3);
    assert_eq!(failure("/busy")["status"], 503);
    assert_eq!(failure("/big")["kind"], "too_large");
    assert_eq!(failure("/bomb")["kind"], "too_large");
    assert_eq!(failure("/binary.html")["kind"], "not_html");
    assert_eq!(failure("/slow")["kind"], "timeout");
    assert_eq!(failure("/slow")["attempts"], 3);
    assert_eq!(failure("/private/staff.html")["kind"], "robots");

    // What must never be fetched: disallowed paths, URL variants, the calendar past depth.
    let requests = server.requests();
    assert!(
        !requests.iter().any(|r| r.starts_with("/private/")),
        "robots.txt ignored"
    );
    assert!(
        !requests
            .iter()
            .any(|r| r.contains("utm_") || r.contains("jsessionid") || r.contains('#')),
        "a URL variant was fetched: {requests:?}"
    );
    let months = requests
        .iter()
        .filter(|r| r.starts_with("/calendar/"))
        .count();
    assert!(
        months <= 2 * config.crawl.max_depth as usize,
        "{months} calendar pages"
    );
    // WARC: a response per stored page; per duplicate, a revisit when its bytes are its
    // original's (the topic indexes under their second URL, the home page reached again
    // under another URL), a response with its own bytes otherwise (the mirror, print and
    // discussion copies).
    let records = warc_records(&out);
    let count = |kind: &str| records.iter().filter(|(k, _)| k == kind).count();
    assert_eq!(count("response"), pages.len());
    assert_eq!(count("revisit") + count("duplicate"), duplicates.len());
    assert_eq!(count("revisit"), TOPICS.len() + 1, "{records:?}");
    assert!(count("warcinfo") >= 1);
    check_with_warcio(&out, pages.len());
    check_warc_bytes_are_each_urls_own(&out, &site, &server, duplicates.len());
    // A redirect target already fetched is not fetched again.
    let article0 = site.articles()[0].path();
    assert_eq!(
        requests.iter().filter(|r| **r == article0).count(),
        1,
        "{requests:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_focused_crawl_stores_more_on_topic_pages_than_breadth_first() {
    let site = Site::new(21, 6);
    let server = serve(site.clone()).await.unwrap();
    let on_topic = |out: &Path| -> usize {
        lines(&out.join("pages.jsonl"))
            .iter()
            .filter(|p| p["final_url"].as_str().unwrap().contains("/topic/sailing/"))
            .count()
    };
    let mut stored = Vec::new();
    for keywords in [vec![], vec!["sailing harbour".to_string()]] {
        let dir = tempfile::tempdir().unwrap();
        let (state, out) = (dir.path().join("state"), dir.path().join("out"));
        let mut config = crawl_config(&state, &out, server.url("/"));
        config.crawl.max_pages = 25;
        config.focus.keywords = keywords;
        let summary = crawldedup::crawl::crawl(&config, std::future::pending())
            .await
            .unwrap();
        assert_eq!(summary.totals.fetched, 25);
        stored.push(on_topic(&out));
    }
    let (breadth_first, focused) = (stored[0], stored[1]);
    eprintln!(
        "sailing articles stored with 25 pages: breadth-first {breadth_first}, focused {focused}"
    );
    assert!(
        focused >= breadth_first + 4,
        "focused {focused} vs breadth-first {breadth_first} sailing pages"
    );
}

/// Runs a crawl of `site` to its end with host templates on or off: (pages.jsonl,
/// duplicates.jsonl).
async fn crawl_news(
    server: &crawldedup::fixture::FixtureServer,
    templates: bool,
) -> (Vec<serde_json::Value>, Vec<serde_json::Value>) {
    let dir = tempfile::tempdir().unwrap();
    let (state, out) = (dir.path().join("state"), dir.path().join("out"));
    let mut config = crawl_config(&state, &out, server.url("/news/"));
    config.dedup.host_templates = templates;
    let summary = crawldedup::crawl::crawl(&config, std::future::pending())
        .await
        .unwrap();
    assert_eq!(summary.frontier.pending, 0);
    (
        lines(&out.join("pages.jsonl")),
        lines(&out.join("duplicates.jsonl")),
    )
}

/// A news site's briefs (200-400 characters) inside big rails of headlines, teasers, dates
/// and widgets that extraction keeps: every brief is stored exactly once, and every AMP copy
/// (one word corrected) is recorded against its own brief. Without the host's template and
/// the line comparison, briefs are lost (the test can fail).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_of_briefs_inside_big_rails_stores_each_brief_once_and_finds_each_copy() {
    use crawldedup::fixture::{NEWS_COPY_EVERY, brief_copy_path, brief_path};
    const BRIEFS: usize = 80;
    let server = serve(Site::without_traps(23, 1).with_news(BRIEFS))
        .await
        .unwrap();
    let (pages, duplicates) = crawl_news(&server, true).await;
    let (stored, by_url) = outcome(&pages, &duplicates);
    let mut lost = Vec::new();
    for i in 0..BRIEFS {
        let url = server.url(&brief_path(i));
        match stored.get(url.as_str()) {
            Some(1) => {}
            Some(n) => panic!("{url} stored {n} times"),
            None => lost.push(format!("{url}: {:?}", by_url.get(url.as_str()))),
        }
        if i % NEWS_COPY_EVERY == 0 {
            let copy = server.url(&brief_copy_path(i));
            let record = by_url
                .get(copy.as_str())
                .unwrap_or_else(|| panic!("{copy} not recorded as a duplicate"));
            assert_eq!(record["kind"], "near", "{copy}");
            assert_eq!(record["of"], url.as_str(), "{copy}");
        }
    }
    assert!(lost.is_empty(), "{} briefs lost: {lost:#?}", lost.len());

    let (pages, _) = crawl_news(&server, false).await;
    let briefs_stored = pages
        .iter()
        .filter(|p| p["final_url"].as_str().unwrap().contains("/news/"))
        .filter(|p| !p["final_url"].as_str().unwrap().ends_with("/news/"))
        .count();
    assert!(
        briefs_stored < BRIEFS,
        "without host templates every brief was stored too"
    );
}
