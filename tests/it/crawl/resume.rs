//! A crawl stopped at any moment (SIGKILL, Ctrl-C, a dropped future) resumes to the result
//! of an uninterrupted one; outputs damaged or moved between runs are refused; a page limit
//! counts every run.

use super::*;
use crate::child::{Ended, Kill};

const CHILD_ENV: &str = "CRAWLDEDUP_CRAWL_CHILD";

/// Runs a crawl with `options` until it ends by itself.
fn crawl_to_the_end(
    runtime: &tokio::runtime::Runtime,
    config: &Config,
    options: &crawldedup::crawl::CrawlOptions,
) {
    runtime
        .block_on(
            crawldedup::Crawler::builder(config)
                .options(options)
                .run(std::future::pending()),
        )
        .unwrap();
}

/// An uninterrupted crawl from `seed` (20 ms between requests): its directory (state and
/// out) and the pages it stored.
fn uninterrupted_crawl(
    runtime: &tokio::runtime::Runtime,
    seed: &str,
) -> (tempfile::TempDir, Vec<String>) {
    let reference = tempfile::tempdir().unwrap();
    let out = reference.path().join("out");
    let mut uninterrupted = crawl_config(&reference.path().join("state"), &out, seed.to_string());
    uninterrupted.crawl.per_host_delay_ms = 20;
    runtime
        .block_on(crawldedup::crawl::crawl(
            &uninterrupted,
            std::future::pending(),
        ))
        .unwrap();
    let stored = stored_urls(&out);
    (reference, stored)
}

/// The child of [`kill_9_at_any_moment_and_resume_gives_the_uninterrupted_result`]: crawls
/// until done (or killed), checkpointing often.
fn kill_9_child(spec: &str) {
    let spec: serde_json::Value = serde_json::from_str(spec).unwrap();
    let mut config = crawl_config(
        Path::new(spec["state"].as_str().unwrap()),
        Path::new(spec["out"].as_str().unwrap()),
        spec["seed"].as_str().unwrap().to_string(),
    );
    config.crawl.per_host_delay_ms = 20;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let options = crawldedup::crawl::CrawlOptions::default()
        .with_checkpoint_every(std::time::Duration::from_millis(150))
        // Compactions all the time, so that kills land in them too.
        .with_compact_after(Some(16));
    crawl_to_the_end(&runtime, &config, &options);
}

/// Runs one child crawl per round of `rounds`, killed (SIGKILL) as the round says: how many
/// kills landed, and the fault points a kill was held at.
fn kill_rounds(spec: &str, rounds: impl IntoIterator<Item = Kill>) -> (usize, Vec<&'static str>) {
    let mut kills = 0;
    let mut held = Vec::new();
    for kill in rounds {
        let ended = child::round(
            "crawl::resume::kill_9_at_any_moment_and_resume_gives_the_uninterrupted_result",
            CHILD_ENV,
            spec,
            kill,
        );
        match (kill, ended) {
            (Kill::Never, Ended::Finished { success, failures }) => {
                assert!(success, "the last run failed: {failures:?}");
            }
            (_, Ended::KilledAt(point)) => {
                kills += 1;
                held.push(point);
            }
            (_, Ended::KilledAfter) => kills += 1,
            (_, Ended::Finished { .. }) => {}
        }
    }
    (kills, held)
}

/// The records of `file` in `dir`, each as the given fields joined, sorted; no record may be
/// written twice.
fn records(dir: &Path, file: &str, fields: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = lines(&dir.join(file))
        .iter()
        .map(|r| {
            fields
                .iter()
                .map(|f| r[*f].to_string())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let n = v.len();
    v.sort();
    v.dedup();
    assert_eq!(v.len(), n, "{file}: a record written twice");
    v
}

#[test]
fn kill_9_at_any_moment_and_resume_gives_the_uninterrupted_result() {
    if let Ok(spec) = std::env::var(CHILD_ENV) {
        kill_9_child(&spec);
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(serve(Site::new(9, 2))).unwrap();
    let seed = server.url("/");

    let (reference, expected) = uninterrupted_crawl(&runtime, &seed);
    assert!(expected.len() > 20);

    let dir = tempfile::tempdir().unwrap();
    let (state, out) = (dir.path().join("state"), dir.path().join("out"));
    let spec = serde_json::json!({
        "state": state.to_str().unwrap(),
        "out": out.to_str().unwrap(),
        "seed": seed,
    })
    .to_string();
    // Killed (SIGKILL) twelve times, then left to finish: first inside a checkpoint (its
    // outputs, index and frontier log written, its record not) and inside a frontier
    // compaction (some entries folded, the log not yet removed), held there by the fault
    // points of `crawldedup::faults`, then at moments spread over the crawl.
    let (kills, held) = kill_rounds(
        &spec,
        [
            Kill::At("checkpoint-before-record"),
            Kill::At("compaction-batch"),
            Kill::After(230),
            Kill::At("checkpoint-before-record"),
            Kill::After(410),
            Kill::At("compaction-batch"),
            Kill::After(170),
            Kill::After(530),
            Kill::After(90),
            Kill::At("checkpoint-before-record"),
            Kill::After(350),
            Kill::After(610),
            Kill::Never,
        ],
    );
    assert!(
        kills >= 10,
        "only {kills} kills landed before the crawl ended"
    );
    for point in ["checkpoint-before-record", "compaction-batch"] {
        assert!(held.contains(&point), "no kill at {point}: {held:?}");
    }
    assert_eq!(stored_urls(&out), expected);
    // The WARC files hold each stored page once too.
    let mut responses: Vec<String> = warc_records(&out)
        .into_iter()
        .filter(|(k, _)| k == "response")
        .map(|(_, uri)| uri)
        .collect();
    responses.sort();
    assert_eq!(
        responses, expected,
        "WARC responses differ from pages.jsonl"
    );
    check_with_warcio(&out, expected.len());
    // The CDXJ indexes, made anew from the files cut back at each resume, are the files'
    // own, and pywb replays every URL from them.
    check_indexes(&out);
    // Duplicates and failures too: each recorded once, the same as without the kills.
    let reference_out = reference.path().join("out");
    for (file, fields) in [
        ("duplicates.jsonl", &["url", "verdict", "of"][..]),
        ("failures.jsonl", &["url", "kind"][..]),
    ] {
        assert_eq!(
            records(&out, file, fields),
            records(&reference_out, file, fields),
            "{file}"
        );
    }
    drop(server);
}

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
