//! Every page a crawl can reach is fetched: the links of duplicates and of pages without
//! main text are followed too (`crawl.follow_links_of`, "every" by default).

use super::*;
use crawldedup::config::FollowLinksOf;

/// Crawls `server` with `follow`; returns how many times each side page was stored, the
/// failure lines and the requests the server saw.
async fn crawl_side_pages(
    server: &crawldedup::fixture::FixtureServer,
    follow: FollowLinksOf,
) -> (Vec<serde_json::Value>, Vec<serde_json::Value>) {
    let dir = tempfile::tempdir().unwrap();
    let (state, out) = (dir.path().join("state"), dir.path().join("out"));
    let mut config = crawl_config(&state, &out, server.url("/"));
    config.crawl.follow_links_of = follow;
    let summary = crawldedup::crawl::crawl(&config, std::future::pending())
        .await
        .unwrap();
    assert_eq!(summary.frontier.pending, 0);
    (
        lines(&out.join("pages.jsonl")),
        lines(&out.join("failures.jsonl")),
    )
}

/// Background notes linked only from mirrors (exact duplicates), readers' letters only from
/// discussions (near duplicates), photo essays only from an image gallery (no main text):
/// every one is stored exactly once. With `follow_links_of = "stored"` none is (the test can
/// fail).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_stores_pages_linked_only_from_duplicates_and_from_pages_without_text() {
    let site = Site::without_traps(37, 3).with_side_pages();
    let side = site.side_pages();
    assert_eq!(side.len(), 2 * 15 + crawldedup::fixture::ESSAYS);
    let server = serve(site).await.unwrap();

    let (pages, failures) = crawl_side_pages(&server, FollowLinksOf::Every).await;
    let (stored, _) = outcome(&pages, &[]);
    let missing: Vec<&String> = side
        .iter()
        .filter(|path| stored.get(server.url(path).as_str()) != Some(&1))
        .collect();
    assert!(
        missing.is_empty(),
        "{} of {} side pages not stored exactly once: {missing:#?}",
        missing.len(),
        side.len()
    );
    // The gallery itself has no text: it is recorded as such, and was followed anyway.
    let gallery = server.url("/gallery/");
    let line = failures
        .iter()
        .find(|f| f["url"] == gallery.as_str())
        .unwrap_or_else(|| panic!("the gallery not recorded: {failures:#?}"));
    assert_eq!(line["kind"], "no_text");

    let (pages, _) = crawl_side_pages(&server, FollowLinksOf::Stored).await;
    let (stored, _) = outcome(&pages, &[]);
    let reached = side
        .iter()
        .filter(|path| stored.contains_key(server.url(path).as_str()))
        .count();
    assert_eq!(
        reached, 0,
        "follow_links_of = \"stored\" reached side pages"
    );
}
