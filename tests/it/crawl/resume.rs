//! A crawl stopped at any moment (SIGKILL, Ctrl-C, a dropped future) resumes to the result
//! of an uninterrupted one; outputs damaged or moved between runs are refused; a page limit
//! counts every run.

use super::*;
use crate::common::{crawl_to_the_end, uninterrupted_crawl};

#[test]
fn ctrl_c_stops_with_a_checkpoint_and_the_next_run_finishes_the_crawl() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(serve(Site::new(13, 3))).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (state, out) = (dir.path().join("state"), dir.path().join("out"));
    let run = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_crawldedup"))
            .args([
                "crawl",
                "--allow-private-ips",
                "--json",
                "--seed",
                &server.url("/"),
            ])
            .args([
                "--state-dir",
                state.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ])
            .args([
                "--set",
                "crawl.per_host_delay_ms=40",
                "--set",
                "crawl.per_host_concurrency=1",
            ])
            .args([
                "--set",
                "crawl.request_timeout_ms=800",
                "--set",
                "crawl.max_depth=4",
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let child = run();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let first = child.wait_with_output().unwrap();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let summary: serde_json::Value = serde_json::from_slice(&first.stdout).unwrap();
    assert_eq!(summary["stopped_early"], true, "{summary}");
    let stored_before = summary["totals"]["stored"].as_u64().unwrap();
    assert!(stored_before > 0, "{summary}");
    assert!(
        summary["frontier"]["pending"].as_u64().unwrap() > 0,
        "{summary}"
    );
    assert_eq!(summary["frontier"]["in_flight"], 0, "{summary}");

    // The second run resumes and finishes; nothing is stored twice.
    let second = run().wait_with_output().unwrap();
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let summary: serde_json::Value = serde_json::from_slice(&second.stdout).unwrap();
    assert_eq!(summary["stopped_early"], false, "{summary}");
    assert_eq!(summary["frontier"]["pending"], 0, "{summary}");
    assert!(summary["totals"]["stored"].as_u64().unwrap() > stored_before);
    let stored = stored_urls(&out);
    assert_eq!(
        stored.len() as u64,
        summary["totals"]["stored"].as_u64().unwrap()
    );
    drop(server);
}

#[test]
fn dropping_the_crawl_future_stops_the_crawl_and_the_next_run_resumes() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(serve(Site::new(9, 2))).unwrap();
    let seed = server.url("/");
    let (_reference, expected) = uninterrupted_crawl(&runtime, &seed);

    let dir = tempfile::tempdir().unwrap();
    let (state, out) = (dir.path().join("state"), dir.path().join("out"));
    let mut config = crawl_config(&state, &out, seed);
    config.crawl.per_host_delay_ms = 20;
    let options = crawldedup::crawl::CrawlOptions::default()
        .with_checkpoint_every(std::time::Duration::from_millis(100));
    // The caller gives up on the crawl (a timeout drops its future) halfway through.
    let given_up = runtime.block_on(async {
        tokio::time::timeout(
            std::time::Duration::from_millis(400),
            crawldedup::Crawler::builder(&config)
                .options(&options)
                .run(std::future::pending()),
        )
        .await
    });
    assert!(given_up.is_err(), "the crawl finished before the timeout");
    // A moment for the abort to reach the tasks and for a request sent just before it to
    // reach the server; after that, no request more.
    let pause = |ms| {
        runtime
            .block_on(async move { tokio::time::sleep(std::time::Duration::from_millis(ms)).await })
    };
    pause(500);
    let requests_then = server.requests().len();
    pause(700);
    assert_eq!(
        server.requests().len(),
        requests_then,
        "the crawl went on fetching after its future was dropped"
    );
    // The same runtime runs the crawl again on the same state: it resumes and ends with
    // every page stored once.
    crawl_to_the_end(&runtime, &config, &options);
    assert_eq!(stored_urls(&out), expected);
}

/// The outputs of a finished crawl of the tiny site, damaged by `damage`, then the same
/// crawl run again: the error it gives (it must give one) and the pages.jsonl bytes after.
async fn resume_after(
    damage: impl FnOnce(&Path),
    out_elsewhere: bool,
) -> (crawldedup::crawl::CrawlError, Vec<u8>) {
    let (base, _) = tiny_site(|_| (200, "User-agent: *\nAllow: /\n"), None).await;
    let dir = tempfile::tempdir().unwrap();
    let summary = crawl_tiny(format!("{base}/"), dir.path()).await;
    assert_eq!(summary.totals.stored, 2);
    let out = if out_elsewhere {
        dir.path().join("elsewhere")
    } else {
        dir.path().join("out")
    };
    damage(&dir.path().join("out"));
    let mut again = crawl_config(&dir.path().join("state"), &out, format!("{base}/"));
    again.crawl.respect_robots = true;
    let err = crawldedup::crawl::crawl(&again, std::future::pending())
        .await
        .expect_err("outputs shorter than the checkpoint must be refused");
    let pages = std::fs::read(out.join("pages.jsonl")).unwrap_or_default();
    (err, pages)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncated_output_is_refused_on_resume_and_never_padded_with_zeros() {
    let (err, pages) = resume_after(
        |out| {
            let path = out.join("pages.jsonl");
            let text = std::fs::read(&path).unwrap();
            std::fs::write(&path, &text[..text.len() / 2]).unwrap();
        },
        false,
    )
    .await;
    let message = err.to_string();
    assert!(
        matches!(err, crawldedup::crawl::CrawlError::Files(crawldedup::store::files::FileError::Behind { found, expected, .. }) if found < expected),
        "{message}"
    );
    assert!(message.contains("pages.jsonl"), "{message}");
    assert!(message.contains("the last checkpoint wrote"), "{message}");
    assert!(!message.contains('\n'), "one line: {message}");
    assert!(!pages.contains(&0), "a hole of zeros was written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outputs_pointed_elsewhere_are_refused_on_resume() {
    let (err, pages) = resume_after(|_| {}, true).await;
    assert!(
        matches!(
            err,
            crawldedup::crawl::CrawlError::Files(crawldedup::store::files::FileError::Behind {
                found: 0,
                ..
            })
        ),
        "{err}"
    );
    assert!(pages.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_warc_file_is_refused_on_resume() {
    let (err, pages) = resume_after(
        |out| {
            for entry in std::fs::read_dir(out.join("warc")).unwrap() {
                std::fs::remove_file(entry.unwrap().path()).unwrap();
            }
        },
        false,
    )
    .await;
    let message = err.to_string();
    assert!(message.contains(".warc.gz"), "{message}");
    assert!(
        matches!(
            err,
            crawldedup::crawl::CrawlError::Files(crawldedup::store::files::FileError::Behind {
                found: 0,
                ..
            })
        ),
        "{message}"
    );
    assert!(!pages.contains(&0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_pages_counts_every_run_and_a_crawl_at_its_limit_says_so() {
    let server = serve(Site::new(4, 2)).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut config = crawl_config(
        &dir.path().join("state"),
        &dir.path().join("out"),
        server.url("/"),
    );
    config.crawl.max_pages = 5;
    let first = crawldedup::crawl::crawl(&config, std::future::pending())
        .await
        .unwrap();
    assert_eq!(first.totals.fetched, 5);
    assert_eq!(first.fetched_this_run, 5);
    assert!(first.page_limit_reached && first.stopped_early);
    // Resumed at its limit: nothing more is fetched, and the summary says why.
    let second = crawldedup::crawl::crawl(&config, std::future::pending())
        .await
        .unwrap();
    assert_eq!(second.totals.fetched, 5);
    assert_eq!(second.fetched_this_run, 0);
    assert!(second.page_limit_reached);
    // Raised, the crawl goes on from where it stopped.
    config.crawl.max_pages = 8;
    let third = crawldedup::crawl::crawl(&config, std::future::pending())
        .await
        .unwrap();
    assert_eq!(third.totals.fetched, 8);
    assert_eq!(third.fetched_this_run, 3);
}
