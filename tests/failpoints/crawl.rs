//! A crawl killed (SIGKILL) at any moment, and held at its fault points first (inside a
//! checkpoint, inside a frontier compaction), resumes to the result of an uninterrupted
//! one: the same pages stored, each once, in pages.jsonl and the WARC files, the CDXJ
//! indexes the files' own, the same duplicates and failures recorded.

use std::path::Path;

use crawldedup::fixture::{Site, serve};

use crate::archive_checks::{check_with_warcio, warc_records, warcio_report};
use crate::child::{self, Ended, Kill};
use crate::common::{crawl_config, crawl_to_the_end, stored_urls, uninterrupted_crawl};
use crate::warc::{self, lines};

const CHILD_ENV: &str = "CRAWLDEDUP_CRAWL_CHILD";

/// Each WARC file in `out/warc` has its CDXJ index beside it, as made from the file itself,
/// and (when CI names a Python with warcio and pywb) pywb replays every URL of the files, from
/// those indexes, with the bytes the files hold for it.
fn check_indexes(out: &Path) {
    let dir = out.join("warc");
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if !path.to_string_lossy().ends_with(".warc.gz") {
            continue;
        }
        files += 1;
        let scratch = tempfile::tempdir().unwrap();
        let made = scratch.path().join("made.cdxj");
        crawldedup::store::warc::Cdxj::of_file(&path)
            .unwrap()
            .write(&made)
            .unwrap();
        let index = crawldedup::store::warc::index_path(&path);
        assert_eq!(
            std::fs::read_to_string(&index).unwrap(),
            std::fs::read_to_string(&made).unwrap(),
            "{} is not the index of its file",
            index.display()
        );
    }
    assert!(files >= 1);
    let Some(report) = warcio_report(out) else {
        return;
    };
    let served = report["served"].as_object().unwrap();
    let urls: Vec<String> = served.keys().cloned().collect();
    let Some(replayed) = warc::replay_with_pywb(&dir, &urls) else {
        return;
    };
    for (url, digest) in served {
        assert_eq!(
            replayed[url],
            (200, digest.as_str().unwrap().to_string()),
            "{url}"
        );
    }
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
            "crawl::kill_9_at_any_moment_and_resume_gives_the_uninterrupted_result",
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
