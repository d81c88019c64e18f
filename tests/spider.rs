//! The stage inside a spider crawl (feature `spider`): the same site crawled by spider
//! through the adapter and by crawldedup's own crawler stores the same content.
#![cfg(feature = "spider")]

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use crawldedup::adapters::spider::{DecidedPage, Outcome, SpiderStage};
use crawldedup::fixture::{Site, serve};
use crawldedup::{Config, Dedup, PageVerdict};

mod common;
use common::{content_key, own_crawl};

struct SpiderRun {
    stored: Vec<String>,
    /// URLs spider says it visited.
    visited: usize,
    pages: Vec<DecidedPage>,
    report: crawldedup::adapters::spider::SpiderReport,
}

async fn spider_crawl(
    seed: &str,
    state: &Path,
    stage: impl FnOnce(SpiderStage) -> SpiderStage,
    slow_sink: bool,
) -> SpiderRun {
    let dedup = Arc::new(Dedup::open(state, &Config::default()).unwrap());
    let mut website = spider::website::Website::new(seed);
    website.with_respect_robots_txt(true);
    let mut pages = Vec::new();
    let report = stage(SpiderStage::new(dedup))
        .crawl(&mut website, |page: DecidedPage| {
            if slow_sink {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            pages.push(page);
        })
        .await
        .unwrap();
    let mut stored: Vec<_> = pages
        .iter()
        .filter(|p| p.is_unique())
        .map(|p| content_key(&p.final_url))
        .collect();
    stored.sort();
    SpiderRun {
        stored,
        visited: website.get_links().len(),
        pages,
        report,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn spider_through_the_stage_stores_what_the_crawler_stores() {
    let server = serve(Site::without_traps(21, 6)).await.unwrap();
    let seed = server.url("/");
    let dir = tempfile::tempdir().unwrap();
    let ours = own_crawl(&seed, dir.path()).await;
    let run = spider_crawl(&seed, &dir.path().join("spider-state"), |s| s, false).await;

    assert!(ours.len() >= 36, "{ours:?}");
    assert_eq!(run.stored, ours, "spider stored a different set of content");
    let report = &run.report;
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(report.pages as usize, run.pages.len());
    assert_eq!(
        report.pages as usize, run.visited,
        "every page spider visited was decided"
    );
    assert_eq!(report.unique as usize, ours.len());
    assert!(
        report.exact_duplicates > 0 && report.near_duplicates > 0,
        "{report:?}"
    );
    assert!(report.links_not_followed > 0, "{report:?}");
    // Every fetched page came through the channel with spider's page attached, and no
    // article is stored twice.
    assert_eq!(report.lagged, 0);
    assert!(run.pages.iter().all(|p| p.page.is_some()));
    let uniques: Vec<_> = run.pages.iter().filter(|p| p.is_unique()).collect();
    assert_eq!(uniques.len(), run.stored.len());
    // Duplicates name a stored original.
    for page in &run.pages {
        if let Outcome::Checked(
            PageVerdict::ExactDuplicate { of } | PageVerdict::NearDuplicate { of, .. },
        ) = &page.outcome
        {
            assert!(
                run.pages
                    .iter()
                    .any(|p| p.is_unique() && p.final_url == of.name),
                "{}",
                of.name
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn pages_spider_drops_for_a_slow_sink_are_counted_and_still_delivered() {
    let server = serve(Site::without_traps(21, 3)).await.unwrap();
    let seed = server.url("/");
    let dir = tempfile::tempdir().unwrap();
    let fast = spider_crawl(&seed, &dir.path().join("fast"), |s| s, false).await;
    let slow = spider_crawl(
        &seed,
        &dir.path().join("slow"),
        |s| s.channel_capacity(1),
        true,
    )
    .await;
    assert!(slow.report.lagged > 0, "{:?}", slow.report);
    let without_page = slow.pages.iter().filter(|p| p.page.is_none()).count();
    assert_eq!(without_page as u64, slow.report.lagged, "{:?}", slow.report);
    assert_eq!(slow.report.pages as usize, slow.visited);
    assert_eq!(slow.stored, fast.stored);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_second_spider_run_on_the_same_state_stores_nothing_but_walks_the_site() {
    let server = serve(Site::without_traps(8, 3)).await.unwrap();
    let seed = server.url("/");
    let dir = tempfile::tempdir().unwrap();
    let first = spider_crawl(&seed, dir.path(), |s| s, false).await;
    let second = spider_crawl(&seed, dir.path(), |s| s, false).await;
    assert!(first.report.unique > 10);
    assert_eq!(second.report.unique, 0, "{:?}", second.report);
    // Duplicates of the earlier run's pages were followed: the second run reached every
    // page the first one stored.
    let reached: BTreeSet<_> = second
        .pages
        .iter()
        .map(|p| content_key(&p.final_url))
        .collect();
    for key in &first.stored {
        assert!(reached.contains(key), "{key} not reached");
    }
}
