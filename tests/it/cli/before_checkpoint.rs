//! A crawl killed before its first checkpoint: what it wrote to its outputs is no one's (a
//! crawl resumed from that state directory starts its outputs again), so `verify` names it
//! and `repair` cuts it, and a worker of a cluster killed for good that early gives its
//! pages back to the others by that repair.

use super::*;

/// A short crawl of the fixture site: its home page's links, no slow page waited for.
const LIMITS: &[&str] = &[
    "--set",
    "crawl.max_depth=2",
    "--set",
    "crawl.request_timeout_ms=800",
];

#[test]
fn pages_written_before_the_first_checkpoint_are_cut_by_repair_and_the_resumed_crawl_stores_each_once()
 {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(crawldedup::fixture::serve(crawldedup::fixture::Site::new(
            5, 3,
        )))
        .unwrap();
    let seed = server.url("/");
    let dir = tempfile::tempdir().unwrap();
    let (state, out) = (dir.path().join("state"), dir.path().join("out"));
    let pages = out.join("pages.jsonl");
    // No checkpoint before an hour: the first would be the last, at the end.
    let mut child = Command::new(env!("CARGO_BIN_EXE_crawldedup"))
        .args(["crawl", "--seed", &seed, "--allow-private-ips", "--quiet"])
        .arg("--state-dir")
        .arg(&state)
        .arg("--out")
        .arg(&out)
        .args([
            "--checkpoint-every",
            "1h",
            "--set",
            "crawl.per_host_delay_ms=30",
        ])
        .args(LIMITS)
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while std::fs::metadata(&pages).map_or(0, |m| m.len()) == 0 {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "no page stored in 30 s"
        );
        assert!(child.try_wait().unwrap().is_none(), "the crawl ended first");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let written = std::fs::metadata(&pages).unwrap().len();
    assert!(written > 0);

    let args = |command: &'static str| {
        vec![
            command.to_string(),
            "--state-dir".into(),
            state.to_str().unwrap().into(),
            "--out".into(),
            out.to_str().unwrap().into(),
        ]
    };
    let run = |command: &'static str| {
        let a = args(command);
        let o = crawldedup(&a.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(stderr(&o).trim().is_empty(), "{}", stderr(&o));
        stdout(&o)
    };
    let verified = run("verify");
    assert!(verified.contains("outputs: "), "{verified}");
    let repaired = run("repair");
    assert!(
        repaired.contains(&format!("pages.jsonl cut back by {written} bytes")),
        "{repaired}"
    );
    assert_eq!(std::fs::metadata(&pages).unwrap().len(), 0);

    // Resumed to the end: every page stored once.
    let o = cli::crawl(
        &seed,
        &state,
        &out,
        &[
            &[
                "--allow-private-ips",
                "--quiet",
                "--set",
                "crawl.per_host_delay_ms=0",
            ],
            LIMITS,
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let urls: Vec<String> = std::fs::read_to_string(&pages)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["url"].to_string())
        .collect();
    let mut once = urls.clone();
    once.sort();
    once.dedup();
    assert_eq!(once.len(), urls.len(), "a page stored twice");
    assert!(urls.len() > 5);
}
