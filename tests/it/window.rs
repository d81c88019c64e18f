//! Time windows on a controlled clock: fingerprint retention in the index (a document just
//! inside the window matches, just outside does not; expired documents leave memory and
//! disk; a kill -9 during a sweep loses nothing and resurrects nothing) and the seen-URL
//! filter that forgets (a URL just before its due time is seen, just after is new; the
//! false-positive rate over all live generations stays under p).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crawldedup::clock::{Clock, ManualClock};
use crawldedup::index::{Decision, IndexConfig, SimhashIndex};
use crawldedup::{SeenConfig, SeenUrls};

use crate::child;
use crate::docs;
use crate::warc;
use docs::doc;
use warc::{lines, warc_text};

/// A moment well after the epoch, so that windows never reach back before it.
const T0: u64 = 1_700_000_000;
const HOUR: u64 = 3600;
const DAY: u64 = 24 * HOUR;

fn retaining(window: Duration) -> IndexConfig {
    IndexConfig::default()
        .with_expected(100_000)
        .with_retention(Some(window))
}

fn open_index(dir: &Path, window: Duration, clock: &ManualClock) -> SimhashIndex {
    SimhashIndex::open(dir, retaining(window))
        .unwrap()
        .with_clock(Arc::new(clock.clone()))
}

#[test]
fn a_fingerprint_just_inside_the_window_matches_and_just_outside_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(T0);
    let index = open_index(dir.path(), Duration::from_secs(48 * HOUR), &clock);
    assert_eq!(index.check_and_insert(doc(1)).unwrap(), Decision::Unique(0));
    assert_eq!(index.get(0).unwrap().unwrap().at, T0);

    clock.set(T0 + 48 * HOUR - 1);
    assert_eq!(index.find(&doc(1)).unwrap(), Some(Decision::Exact(0)));
    assert_eq!(index.check_and_insert(doc(1)).unwrap(), Decision::Exact(0));
    assert_eq!(index.query(doc(1).simhash), vec![(0, 0)]);

    clock.set(T0 + 48 * HOUR);
    assert_eq!(index.find(&doc(1)).unwrap(), None);
    assert!(index.query(doc(1).simhash).is_empty());
    // Stored again, it is a new original that the next copies match.
    assert_eq!(index.check_and_insert(doc(1)).unwrap(), Decision::Unique(1));
    clock.set(T0 + 48 * HOUR + 10);
    assert_eq!(index.check_and_insert(doc(1)).unwrap(), Decision::Exact(1));

    // Without retention nothing ever expires.
    let kept = tempfile::tempdir().unwrap();
    let index = SimhashIndex::open(kept.path(), IndexConfig::default())
        .unwrap()
        .with_clock(Arc::new(clock.clone()));
    index.check_and_insert(doc(1)).unwrap();
    clock.set(T0 + 1000 * DAY);
    assert_eq!(index.find(&doc(1)).unwrap(), Some(Decision::Exact(0)));
}

/// Inserts documents `from..to`, ten per second of the clock (document `i` at
/// `T0 + i / 10`), sweeping in bounded steps and checkpointing every 5,000.
fn steady(index: &SimhashIndex, clock: &ManualClock, from: u64, to: u64) {
    for i in from..to {
        clock.set(T0 + i / 10);
        assert!(matches!(
            index.check_and_insert(doc(i)).unwrap(),
            Decision::Unique(_)
        ));
        if i % 500 == 0 {
            index.sweep(2_000).unwrap();
        }
        if i % 5_000 == 4_999 {
            index.checkpoint().unwrap();
        }
    }
}

#[test]
fn expired_documents_leave_memory_and_disk_and_memory_stays_flat() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(T0);
    // A window of 1,000 s holds 10,000 documents.
    let window = Duration::from_secs(1_000);
    let index = open_index(dir.path(), window, &clock);
    steady(&index, &clock, 0, 20_000);
    let after_two_windows = index.memory_bytes();
    steady(&index, &clock, 20_000, 60_000);
    while index.sweep(2_000).unwrap().expired > 0 {}
    let stats = index.retention_stats();
    assert_eq!(index.len(), 60_000);
    // Live: the documents of the last 1,000 s (plus the one second the cutoff rounds to).
    assert!(
        (10_000..=10_010).contains(&index.live()),
        "{}",
        index.live()
    );
    assert_eq!(stats.expired, 60_000 - index.live());
    assert_eq!(stats.oldest_live, Some(T0 + stats.expired / 10));
    assert_eq!(stats.window_secs, Some(1_000));
    let after_six_windows = index.memory_bytes();
    assert!(
        after_six_windows <= after_two_windows * 3 / 2,
        "memory grew from {after_two_windows} to {after_six_windows} bytes"
    );
    // Disk: a checkpoint records the floor, the next sweep deletes the chunks below it.
    index.checkpoint().unwrap();
    while index.sweep(20_000).unwrap().chunks_deleted > 0 {}
    assert_eq!(index.get(0).unwrap(), None, "the first chunk is deleted");
    let newest = index.len() - 1;
    assert!(index.get(newest).unwrap().is_some());
    drop(index);

    // Reopened, it holds the live documents only; the expired ones do not come back.
    let index = open_index(dir.path(), window, &clock);
    assert_eq!(index.len(), 60_000);
    assert!(index.live() <= 10_010 + 1_024, "{}", index.live());
    assert_eq!(
        index.find(&doc(59_999)).unwrap(),
        Some(Decision::Exact(59_999))
    );
    assert_eq!(index.find(&doc(100)).unwrap(), None);
    assert_eq!(index.find(&doc(49_000)).unwrap(), None);
}

const SWEEP_CHILD: &str = "CRAWLDEDUP_WINDOW_SWEEP_CHILD";

#[test]
fn a_kill_9_during_sweeps_loses_nothing_and_resurrects_nothing() {
    let window = Duration::from_secs(1_000);
    if let Ok(dir) = std::env::var(SWEEP_CHILD) {
        // The child: a steady crawl of the index, sweeping all the time, with a checkpoint
        // every 5,000 documents; after each, it writes down what the checkpoint holds and
        // the clock's time, then goes on until killed.
        let dir = Path::new(&dir);
        let clock = ManualClock::at(T0);
        let index = open_index(&dir.join("index"), window, &clock);
        for i in 0.. {
            clock.set(T0 + i / 10);
            index.check_and_insert(doc(i)).unwrap();
            index.sweep(64).unwrap();
            if i % 5_000 == 4_999 {
                index.checkpoint().unwrap();
                let progress = dir.join("progress.tmp");
                std::fs::write(&progress, format!("{} {}", i + 1, clock.now())).unwrap();
                std::fs::rename(&progress, dir.join("progress")).unwrap();
                if i >= 19_999 {
                    std::fs::write(dir.join("checkpointed"), b"").unwrap();
                }
            }
        }
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    child::kill_after_checkpoint(
        "window::a_kill_9_during_sweeps_loses_nothing_and_resurrects_nothing",
        SWEEP_CHILD,
        dir.path(),
        Duration::from_millis(150),
    );
    let progress = std::fs::read_to_string(dir.path().join("progress")).unwrap();
    let (documents, now) = progress.split_once(' ').unwrap();
    let (documents, now): (u64, u64) = (documents.parse().unwrap(), now.parse().unwrap());
    let clock = ManualClock::at(now);
    let index = open_index(&dir.path().join("index"), window, &clock);
    assert!(index.len() >= documents);
    for i in (0..documents).step_by(7) {
        let found = index.find(&doc(i)).unwrap();
        if T0 + i / 10 + 1_000 > now {
            assert_eq!(found, Some(Decision::Exact(i)), "document {i} was lost");
        } else {
            assert_eq!(found, None, "expired document {i} came back");
        }
    }
}

fn recrawl(after: Duration, generations: u32, n: u64, p: f64) -> SeenConfig {
    SeenConfig::new(n, p).with_expiry(after, generations)
}

#[test]
fn a_url_just_before_its_due_time_is_seen_and_just_after_is_new() {
    let clock = ManualClock::at(T0 + 12_345);
    let seen = SeenUrls::new(recrawl(Duration::from_secs(30 * DAY), 8, 10_000, 0.01))
        .unwrap()
        .with_clock(Arc::new(clock.clone()));
    let url = "https://example.com/a";
    assert!(seen.insert(url).unwrap(), "new the first time");
    let due = seen.due_at(clock.now()).unwrap();
    // Never earlier than the interval, at most one generation (30 d / 8) later.
    assert!(due >= clock.now() + 30 * DAY, "{due}");
    assert!(due <= clock.now() + 30 * DAY + 30 * DAY / 8 + 1, "{due}");

    clock.set(due - 1);
    assert!(!seen.insert(url).unwrap(), "seen just before its due time");
    // Finding it again did not put its recrawl off.
    clock.set(due);
    assert!(seen.insert(url).unwrap(), "new again at its due time");
    assert!(!seen.insert(url).unwrap(), "and recorded again");
    assert_eq!(seen.due_at(due), Some(seen.due_at(clock.now()).unwrap()));
    assert!(seen.stats().expired >= 1);

    // A filter that never forgets has no due time.
    let forever = SeenUrls::new(SeenConfig::default()).unwrap();
    assert_eq!(forever.due_at(T0), None);
}

#[test]
fn the_expiring_filter_stays_under_p_over_all_live_generations() {
    // n URLs per window, g = 4: each slice records n / 4 URLs; after 12 slices the filter
    // is in its steady state, with 5 live generations (4 full, the newest full too).
    let (n, p, g) = (40_000u64, 0.01, 4);
    let window = Duration::from_secs(40 * DAY);
    let clock = ManualClock::at(T0);
    let seen = SeenUrls::new(recrawl(window, g, n, p))
        .unwrap()
        .with_clock(Arc::new(clock.clone()));
    let slice = seen.config().slice_ms().unwrap() / 1000;
    let mut next = 0u64;
    for s in 0..12 {
        clock.set(T0 + s * slice + 1);
        for _ in 0..n / u64::from(g) {
            seen.insert(&format!("https://site-{}.example/page/{next}", next % 97))
                .unwrap();
            next += 1;
        }
    }
    let stats = seen.stats();
    assert_eq!(stats.generations, 5, "{stats:?}");
    // URLs that a false positive made look seen were not recorded: at most p of them.
    let held = 5 * n / u64::from(g);
    assert!(stats.count <= held && stats.count as f64 >= held as f64 * (1.0 - p));
    assert!(stats.expected_fp_rate < p, "{stats:?}");
    let strangers = 200_000;
    let false_positives = (0..strangers)
        .filter(|i| {
            seen.contains(&format!("https://other.example/never/{i}"))
                .unwrap()
        })
        .count();
    let rate = false_positives as f64 / f64::from(strangers);
    assert!(
        rate < p,
        "measured {rate} over {strangers} strangers, bound {p}"
    );
    // The URLs of the expired slices are new again; those of live ones are not.
    assert!(!seen.contains("https://site-0.example/page/0").unwrap());
    assert!(
        seen.contains(&format!(
            "https://site-{}.example/page/{}",
            (next - 1) % 97,
            next - 1
        ))
        .unwrap()
    );
}

#[test]
fn generations_survive_a_save_and_a_sweep_deletes_the_forgotten_confirmations() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(T0);
    let config = recrawl(Duration::from_secs(8 * DAY), 8, 1_000, 0.01).with_confirm_on_disk(true);
    let open = |clock: &ManualClock| {
        SeenUrls::open(dir.path(), config)
            .unwrap()
            .with_clock(Arc::new(clock.clone()))
    };
    let seen = open(&clock);
    for day in 0..4 {
        clock.set(T0 + day * DAY);
        seen.insert(&format!("https://example.com/day/{day}"))
            .unwrap();
    }
    seen.save(dir.path(), 1).unwrap();
    drop(seen);
    let seen = open(&clock);
    assert_eq!(seen.stats().generations, 4);
    for day in 0..4 {
        assert!(
            seen.contains(&format!("https://example.com/day/{day}"))
                .unwrap()
        );
    }
    // Ten days on, days 0 and 1 are due (8 days plus at most one day), 2 and 3 not yet.
    clock.set(T0 + 10 * DAY);
    assert!(!seen.contains("https://example.com/day/0").unwrap());
    assert!(!seen.contains("https://example.com/day/1").unwrap());
    assert!(seen.contains("https://example.com/day/3").unwrap());
    assert_eq!(seen.sweep(100).unwrap(), 2, "two confirmations deleted");
    assert_eq!(seen.sweep(100).unwrap(), 0);
    assert_eq!(seen.stats().generations, 2);
}

#[test]
fn a_journaled_url_replayed_after_it_came_due_stays_forgotten() {
    let dir = tempfile::tempdir().unwrap();
    let config = recrawl(Duration::from_secs(8 * DAY), 8, 1_000, 0.01);
    let clock = ManualClock::at(T0);
    {
        let seen = SeenUrls::open_journaled(dir.path(), config)
            .unwrap()
            .with_clock(Arc::new(clock.clone()));
        assert!(seen.insert("https://example.com/x").unwrap());
        seen.sync().unwrap();
        // Dropped without a save: the journal alone holds the answer.
    }
    let reopen = |at: u64| {
        SeenUrls::open(dir.path(), config)
            .unwrap()
            .with_clock(Arc::new(ManualClock::at(at)))
    };
    assert!(reopen(T0 + DAY).contains("https://example.com/x").unwrap());
    assert!(
        !reopen(T0 + 10 * DAY)
            .contains("https://example.com/x")
            .unwrap()
    );
}

#[test]
fn a_changed_recrawl_interval_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let seen = SeenUrls::open(
        dir.path(),
        recrawl(Duration::from_secs(30 * DAY), 8, 1_000, 0.01),
    )
    .unwrap();
    seen.insert("https://example.com/").unwrap();
    seen.save(dir.path(), 1).unwrap();
    for other in [
        recrawl(Duration::from_secs(7 * DAY), 8, 1_000, 0.01),
        SeenConfig::default(),
    ] {
        let e = SeenUrls::open(dir.path(), other).unwrap_err().to_string();
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.contains("recrawl"), "{e}");
        assert!(e.contains("new state directory"), "{e}");
    }
    // The file was left alone.
    assert!(
        SeenUrls::open(
            dir.path(),
            recrawl(Duration::from_secs(30 * DAY), 8, 1_000, 0.01)
        )
        .unwrap()
        .contains("https://example.com/")
        .unwrap()
    );
}

/// A site whose pages the test can change between crawls: path -> HTML, and the paths
/// requested.
#[derive(Clone, Default)]
struct LiveSite {
    pages: Arc<std::sync::Mutex<std::collections::HashMap<String, String>>>,
    requests: Arc<std::sync::Mutex<Vec<String>>>,
}

impl LiveSite {
    fn set(&self, path: &str, html: String) {
        self.pages.lock().unwrap().insert(path.to_string(), html);
    }

    fn take_requests(&self) -> Vec<String> {
        let mut requests = std::mem::take(&mut *self.requests.lock().unwrap());
        requests.retain(|p| p != "/robots.txt");
        requests.sort();
        requests
    }

    async fn serve(&self) -> String {
        let site = self.clone();
        let app = axum::Router::new().fallback(move |uri: axum::http::Uri| {
            let site = site.clone();
            async move {
                let path = uri.path().to_string();
                site.requests.lock().unwrap().push(path.clone());
                match site.pages.lock().unwrap().get(&path) {
                    Some(html) => (
                        axum::http::StatusCode::OK,
                        [("content-type", "text/html; charset=utf-8")],
                        html.clone(),
                    ),
                    None => (
                        axum::http::StatusCode::NOT_FOUND,
                        [("content-type", "text/plain")],
                        String::new(),
                    ),
                }
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        format!("http://{addr}")
    }
}

/// A page: a title, paragraphs of the fixture's article `n`, and links.
fn page(n: usize, extra: &str, links: &[&str]) -> String {
    let site = crawldedup::fixture::Site::new(11, 4);
    let article = &site.articles()[n];
    let body: String = article
        .paragraphs
        .iter()
        .map(|p| format!("<p>{p}</p>"))
        .collect();
    let links: String = links
        .iter()
        .map(|l| format!("<li><a href=\"{l}\">{l}</a></li>"))
        .collect();
    format!(
        "<!doctype html><html><head><title>{}</title></head><body><nav><ul>{links}</ul></nav>\
         <article><h1>{}</h1>{body}<p>{extra}</p></article></body></html>",
        article.title, article.title
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_due_page_is_fetched_again_unchanged_as_a_revisit_and_changed_as_a_new_version() {
    let site = LiveSite::default();
    site.set("/", page(0, "", &["/a", "/b"]));
    site.set("/a", page(1, "", &["/"]));
    site.set("/b", page(2, "", &["/"]));
    let base = site.serve().await;
    let dir = tempfile::tempdir().unwrap();
    let (out, state) = (dir.path().join("out"), dir.path().join("state"));
    let mut config = crawldedup::Config::default();
    config.crawl.seeds = vec![format!("{base}/")];
    config.crawl.state_dir = state.clone();
    config.crawl.out_dir = out.clone();
    config.crawl.allow_private_ips = true;
    config.crawl.per_host_delay_ms = 0;
    config.url_filter.recrawl_after =
        Some(crawldedup::config::Window(Duration::from_secs(30 * DAY)));
    config.url_filter.recrawl_generations = 8;
    let clock = ManualClock::at(T0);
    let crawl = |config: crawldedup::Config, clock: ManualClock| async move {
        crawldedup::Crawler::builder(&config)
            .clock(Arc::new(clock))
            .run(std::future::pending())
            .await
            .unwrap()
    };

    crawl(config.clone(), clock.clone()).await;
    assert_eq!(site.take_requests(), ["/", "/a", "/b"]);
    let first = lines(&out.join("pages.jsonl"));
    assert_eq!(first.len(), 3);
    let first_of = |path: &str| {
        first
            .iter()
            .find(|p| p["url"] == format!("{base}{path}"))
            .unwrap()
            .clone()
    };

    // When the URLs come due: the slice of T0 plus g + 1 slices.
    let slice = config.url_filter.seen_config().slice_ms().unwrap() / 1000;
    let due = (T0 / slice + 9) * slice;
    assert!(due >= T0 + 30 * DAY);

    // Just before: every URL is still seen, nothing is fetched.
    clock.set(due - 1);
    crawl(config.clone(), clock.clone()).await;
    assert!(site.take_requests().is_empty());

    // At the due time, /b has changed (a correction appended); / and /a have not.
    site.set(
        "/b",
        page(
            2,
            "Correction: an earlier version of this article gave the wrong date for the vote.",
            &["/"],
        ),
    );
    clock.set(due);
    crawl(config.clone(), clock.clone()).await;
    assert_eq!(site.take_requests(), ["/", "/a", "/b"]);
    let pages = lines(&out.join("pages.jsonl"));
    assert_eq!(pages.len(), 4, "only the changed page is stored again");
    let again = &pages[3];
    assert_eq!(again["url"], format!("{base}/b"));
    let earlier = first_of("/b");
    assert_eq!(again["previous"]["id"], earlier["id"]);
    assert_eq!(again["previous"]["digest"], earlier["digest"]);
    assert_ne!(again["digest"], earlier["digest"]);
    let duplicates = lines(&out.join("duplicates.jsonl"));
    assert_eq!(duplicates.len(), 2, "{duplicates:?}");
    for path in ["/", "/a"] {
        let line = duplicates
            .iter()
            .find(|d| d["url"] == format!("{base}{path}"))
            .unwrap();
        assert_eq!(line["kind"], "exact");
        assert_eq!(line["of"], format!("{base}{path}"));
        assert!(line["of_fetched_at"].is_string(), "{line}");
    }
    // The WARC holds a revisit for each unchanged page, dated by its earlier copy.
    let warc = warc_text(&out);
    assert_eq!(warc.matches("WARC-Type: revisit").count(), 2);
    assert_eq!(warc.matches("WARC-Refers-To-Date: ").count(), 2);
    assert_eq!(warc.matches("WARC-Type: response").count(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawl_and_stats_take_the_windows_from_the_command_line() {
    let site = LiveSite::default();
    site.set("/", page(0, "", &["/a"]));
    site.set("/a", page(1, "", &["/"]));
    let base = site.serve().await;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    // The server runs on this runtime; the binary's runs wait on a blocking thread.
    let run = |args: Vec<std::ffi::OsString>| {
        tokio::task::spawn_blocking(move || {
            std::process::Command::new(env!("CARGO_BIN_EXE_crawldedup"))
                .args(args)
                .output()
                .unwrap()
        })
    };
    let crawl = run(vec![
        "crawl".into(),
        "--seed".into(),
        format!("{base}/").into(),
        "--allow-private-ips".into(),
        "--state-dir".into(),
        state.clone().into(),
        "--out".into(),
        dir.path().join("out").into(),
        "--set".into(),
        "dedup.retention=48h".into(),
        "--set".into(),
        "url_filter.recrawl_after=30d".into(),
        "--set".into(),
        "crawl.per_host_delay_ms=0".into(),
    ])
    .await
    .unwrap();
    assert!(
        crawl.status.success(),
        "{}",
        String::from_utf8_lossy(&crawl.stderr)
    );
    let stats = run(vec!["stats".into(), "--state-dir".into(), state.into()])
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&stats.stdout);
    assert!(stats.status.success(), "{text}");
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} line in {text}"))
            .to_string()
    };
    assert!(line("stored").ends_with(" 2"), "{text}");
    let retention = line("retention");
    assert!(retention.contains("2days"), "{retention}");
    assert!(retention.contains("2 fingerprints held"), "{retention}");
    assert!(retention.contains("oldest stored 20"), "{retention}");
    assert!(retention.contains("0 expired"), "{retention}");
    let recrawl = line("recrawl");
    assert!(recrawl.contains("after 30days"), "{recrawl}");
    assert!(recrawl.contains("0 URLs came due"), "{recrawl}");
}
