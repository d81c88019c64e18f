//! The stage inside a spider crawl (feature `spider`): the same site crawled by spider
//! through the adapter and by crawldedup's own crawler stores the same content.
#![cfg(feature = "spider")]

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use crawldedup::adapters::spider::{FollowLinksOf, SpiderStage};
use crawldedup::fixture::{Site, serve};
use crawldedup::store::{DuplicatePage, FailedPage, PageSink, SinkError, StoredPage};
use crawldedup::{Config, Dedup};

#[path = "it/common/mod.rs"]
mod common;
use common::{content_key, own_crawl};

/// One page as the sink got it.
#[derive(Debug)]
struct Handed {
    final_url: String,
    /// `unique`, `duplicate` or `failure`.
    kind: &'static str,
    /// The original, for a duplicate.
    of: Option<String>,
    /// Whether it came with its body (pages lost to spider's lag come without).
    has_body: bool,
}

impl Handed {
    fn is_unique(&self) -> bool {
        self.kind == "unique"
    }
}

/// Keeps what it is handed, optionally slowly (so that spider's channel drops pages).
struct Keep {
    pages: Vec<Handed>,
    slow: bool,
}

impl Keep {
    fn wait(&self) {
        if self.slow {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

impl PageSink for &mut Keep {
    fn page(&mut self, page: &StoredPage) -> Result<(), SinkError> {
        self.wait();
        self.pages.push(Handed {
            final_url: page.final_url.to_string(),
            kind: "unique",
            of: None,
            has_body: !page.body.is_empty(),
        });
        Ok(())
    }

    fn duplicate(&mut self, duplicate: &DuplicatePage) -> Result<(), SinkError> {
        self.wait();
        self.pages.push(Handed {
            final_url: duplicate.final_url.to_string(),
            kind: "duplicate",
            of: Some(duplicate.of.clone()),
            has_body: !duplicate.body.is_empty(),
        });
        Ok(())
    }

    fn failure(&mut self, failure: &FailedPage) -> Result<(), SinkError> {
        self.wait();
        self.pages.push(Handed {
            final_url: failure.url.to_string(),
            kind: "failure",
            of: None,
            has_body: false,
        });
        Ok(())
    }
}

struct SpiderRun {
    stored: Vec<String>,
    /// URLs spider says it visited.
    visited: usize,
    pages: Vec<Handed>,
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
    let mut keep = Keep {
        pages: Vec::new(),
        slow: slow_sink,
    };
    let report = stage(SpiderStage::new(dedup))
        .crawl(&mut website, &mut keep)
        .await
        .unwrap();
    let pages = keep.pages;
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
    let stored_only = |s: SpiderStage| s.follow_links_of(FollowLinksOf::Stored);
    let run = spider_crawl(&seed, &dir.path().join("spider-state"), stored_only, false).await;

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
    // By default every page's links are followed, as the crawler follows them.
    let every = spider_crawl(&seed, &dir.path().join("spider-every"), |s| s, false).await;
    assert_eq!(
        every.stored, ours,
        "spider stored a different set of content"
    );
    assert_eq!(every.report.links_not_followed, 0, "{:?}", every.report);
    // Every fetched page came through the channel with spider's page attached, and no
    // article is stored twice.
    assert_eq!(report.lagged, 0);
    assert!(
        run.pages
            .iter()
            .filter(|p| p.kind != "failure")
            .all(|p| p.has_body)
    );
    let uniques: Vec<_> = run.pages.iter().filter(|p| p.is_unique()).collect();
    assert_eq!(uniques.len(), run.stored.len());
    // Duplicates name a stored original.
    for of in run.pages.iter().filter_map(|p| p.of.as_ref()) {
        assert!(
            run.pages
                .iter()
                .any(|p| p.is_unique() && &p.final_url == of),
            "{of}"
        );
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
    // Pages lost to lag come after the crawl, without their bodies.
    let without_body = slow
        .pages
        .iter()
        .filter(|p| p.kind != "failure" && !p.has_body)
        .count();
    assert!(without_body > 0, "{:?}", slow.report);
    assert!(
        without_body as u64 <= slow.report.lagged,
        "{:?}",
        slow.report
    );
    assert_eq!(slow.pages.len() as u64, slow.report.pages);
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
