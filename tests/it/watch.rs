//! Watching a crawl: `/metrics` scraped while the fixture site is crawled and checked
//! against what the crawl wrote; `stats` and `verify` on a running crawl; `stats` on a
//! read-only copy.

use std::collections::HashMap;
use std::time::Duration;

use crate::browser::{render_in_chromium, svg_of, text_of};
use crate::common::crawl_config;
use crate::run_cli::{crawldedup, stderr, stdout};
use crawldedup::fixture::{Site, serve, serve_with_latency};

/// A free loopback port: bound, read and let go (the crawl binds it a moment later).
fn free_port() -> std::net::SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

/// The samples of a scrape in the Prometheus text format, by name with its labels.
fn samples(body: &str) -> HashMap<String, f64> {
    body.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (name, value) = l.rsplit_once(' ').unwrap_or_else(|| panic!("{l:?}"));
            (
                name.to_string(),
                value.parse().unwrap_or_else(|_| panic!("{l:?}")),
            )
        })
        .collect()
}

/// The sum of the samples of one family (`name{...}`), and of `name` itself.
fn family(samples: &HashMap<String, f64>, name: &str) -> f64 {
    samples
        .iter()
        .filter(|(k, _)| *k == name || k.starts_with(&format!("{name}{{")))
        .map(|(_, v)| v)
        .sum()
}

fn lines(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A crawl of `site` in this process whose listener (on a free loopback port) lingers
/// after it is over, until `stop` is sent.
struct Lingering {
    base: String,
    dir: tempfile::TempDir,
    stop: tokio::sync::oneshot::Sender<()>,
    crawl: tokio::task::JoinHandle<
        Result<crawldedup::crawl::CrawlSummary, crawldedup::crawl::CrawlError>,
    >,
    _server: crawldedup::fixture::FixtureServer,
}

impl Lingering {
    async fn start(site: Site, checkpoint_every: Duration) -> Lingering {
        let server = serve(site).await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let config = crawl_config(
            &dir.path().join("state"),
            &dir.path().join("out"),
            server.url("/"),
        );
        let addr = free_port();
        let options = crawldedup::crawl::CrawlOptions::default()
            .with_checkpoint_every(checkpoint_every)
            .with_metrics(Some(addr), Duration::from_secs(120));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let crawl = tokio::spawn(async move {
            crawldedup::Crawler::builder(&config)
                .options(&options)
                .run(async move {
                    let _ = stopped.await;
                })
                .await
        });
        Lingering {
            base: format!("http://{addr}"),
            dir,
            stop,
            crawl,
            _server: server,
        }
    }

    /// Ends the lingering, and the crawl's summary.
    async fn stop(self) -> (crawldedup::crawl::CrawlSummary, tempfile::TempDir) {
        self.stop.send(()).unwrap();
        (self.crawl.await.unwrap().unwrap(), self.dir)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_scraped_during_a_crawl_end_equal_to_what_the_crawl_wrote() {
    let run = Lingering::start(Site::new(5, 2), Duration::from_millis(200)).await;
    let (state, out) = (run.dir.path().join("state"), run.dir.path().join("out"));
    let client = reqwest::Client::new();
    let base = run.base.clone();
    // Scraped all along: every scrape parses, and no counter goes down.
    let mut last: HashMap<String, f64> = HashMap::new();
    let mut scrapes = 0;
    let finished = loop {
        tokio::time::sleep(Duration::from_millis(30)).await;
        let Ok(answer) = client.get(format!("{base}/metrics")).send().await else {
            assert!(
                !run.crawl.is_finished(),
                "the crawl ended without lingering"
            );
            continue;
        };
        assert_eq!(
            answer.headers()["content-type"],
            "text/plain; version=0.0.4; charset=utf-8"
        );
        let now = samples(&answer.text().await.unwrap());
        for (name, value) in &last {
            if name.contains("_total") || name.ends_with("_count") || name.contains("_bucket") {
                assert!(
                    now[name] >= *value,
                    "{name} went down: {value} -> {}",
                    now[name]
                );
            }
        }
        last = now;
        scrapes += 1;
        let status: serde_json::Value = client
            .get(format!("{base}/status.json"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if status["finished"] == true {
            break status;
        }
    };
    assert!(scrapes >= 2, "{scrapes}");
    // The crawl is over and its listener lingers: the final figures.
    let text = client.get(format!("{base}/metrics")).send().await.unwrap();
    let m = samples(&text.text().await.unwrap());
    let open = client
        .get(format!("{base}/metrics"))
        .header("accept", "application/openmetrics-text; version=1.0.0")
        .send()
        .await
        .unwrap();
    assert!(
        open.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/openmetrics-text")
    );
    assert!(open.text().await.unwrap().ends_with("# EOF\n"));
    let page = client
        .get(&base)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    // One file: nothing fetched from elsewhere (the machine may be offline).
    assert!(page.contains("status.json"));
    for outside in ["src=", "<link", "url(", "@import"] {
        assert!(!page.contains(outside), "{outside}");
    }
    let (summary, _dir) = run.stop().await;
    finished_equal_outputs(&m, &finished, &summary, &state, &out);
}

/// The final scrape `m` and status figures `finished` of a crawl against what it wrote
/// into `out`, its `summary`, and what `stats` reads back from `state`.
fn finished_equal_outputs(
    m: &HashMap<String, f64>,
    finished: &serde_json::Value,
    summary: &crawldedup::crawl::CrawlSummary,
    state: &std::path::Path,
    out: &std::path::Path,
) {
    let pages = lines(&out.join("pages.jsonl"));
    let duplicates = lines(&out.join("duplicates.jsonl"));
    let failures = lines(&out.join("failures.jsonl"));
    let t = &summary.totals;
    let exact = duplicates
        .iter()
        .filter(|d| d["verdict"] == "exact_duplicate")
        .count();
    let near = duplicates
        .iter()
        .filter(|d| d["verdict"] == "near_duplicate")
        .count();
    assert!(exact > 0 && near > 0 && !failures.is_empty());
    let get = |name: &str| m.get(name).copied().unwrap_or_else(|| panic!("no {name}"));
    assert_eq!(
        get(r#"crawldedup_pages_total{verdict="unique"}"#),
        pages.len() as f64
    );
    assert_eq!(
        get(r#"crawldedup_pages_total{verdict="exact_duplicate"}"#),
        exact as f64
    );
    assert_eq!(
        get(r#"crawldedup_pages_total{verdict="near_duplicate"}"#),
        near as f64
    );
    assert_eq!(
        get("crawldedup_near_duplicate_distance_bits_count"),
        near as f64
    );
    assert_eq!(
        family(m, "crawldedup_failures_total"),
        failures.len() as f64
    );
    let mut kinds: HashMap<String, f64> = HashMap::new();
    for f in &failures {
        *kinds
            .entry(f["kind"].as_str().unwrap().to_string())
            .or_default() += 1.0;
    }
    for (kind, n) in &kinds {
        assert_eq!(
            get(&format!(r#"crawldedup_failures_total{{kind="{kind}"}}"#)),
            *n,
            "{kind}"
        );
        assert_eq!(t.failure_kinds[kind] as f64, *n, "{kind}");
    }
    // Every response is one fetch of an outcome that got a response.
    let responses: f64 = ["ok", "http_error", "redirected", "retried"]
        .iter()
        .map(|o| {
            m.get(&format!(r#"crawldedup_fetches_total{{outcome="{o}"}}"#))
                .copied()
                .unwrap_or(0.0)
        })
        .sum();
    assert_eq!(responses, t.fetched as f64);
    assert_eq!(
        get("crawldedup_fetched_bytes_total"),
        t.fetched_bytes as f64
    );
    assert_eq!(get("crawldedup_stored_bytes_total"), t.stored_bytes as f64);
    assert!(t.stored_bytes > 0 && t.stored_bytes < t.fetched_bytes);
    assert_eq!(get("crawldedup_index_documents"), pages.len() as f64);
    assert_eq!(get("crawldedup_frontier_urls"), 0.0);
    assert_eq!(
        get("crawldedup_fetch_duration_seconds_count"),
        family(m, "crawldedup_fetches_total")
    );
    assert_eq!(
        get("crawldedup_decision_duration_seconds_count"),
        (pages.len() + exact + near) as f64 + kinds.get("no_text").copied().unwrap_or(0.0)
    );
    assert!(get("crawldedup_checkpoint_age_seconds") < 60.0);
    let fpr = get("crawldedup_url_filter_false_positive_rate");
    assert!((0.0..0.01).contains(&fpr), "{fpr}");
    // The status page's figures are the same.
    assert_eq!(finished["totals"]["stored"], t.stored);
    assert_eq!(finished["totals"]["duplicates"], t.duplicates);
    assert_eq!(finished["totals"]["failures"], t.failures);
    assert_eq!(finished["pages"]["unique"], pages.len());
    assert_eq!(finished["checkpoint"]["seq"], t.seq);
    assert_eq!(
        finished["recent_duplicates"].as_array().unwrap().len(),
        (exact + near).min(50)
    );

    stats_read_back(
        state,
        summary,
        get("crawldedup_fetch_duration_seconds_count"),
    );
}

/// `stats` on the stopped crawl: the same totals, and the run's times (`fetches` timed).
fn stats_read_back(
    state: &std::path::Path,
    summary: &crawldedup::crawl::CrawlSummary,
    fetches: f64,
) {
    let t = &summary.totals;
    let on_disk = crawldedup::crawl::stats(state).unwrap();
    assert_eq!(on_disk.totals, summary.totals);
    assert!(on_disk.running.is_none());
    let status = on_disk.status.expect("the last run's status file");
    assert!(status.finished);
    assert_eq!(status.fetch_seconds.count, fetches as u64);
    assert!(on_disk.seconds > 0.0 && on_disk.fetched_this_run == t.fetched);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_page_draws_its_charts_in_a_browser_with_the_figures_of_metrics() {
    let run = Lingering::start(Site::new(3, 2), crawldedup::crawl::CHECKPOINT_EVERY).await;
    let (state, out) = (run.dir.path().join("state"), run.dir.path().join("out"));
    let base = run.base.clone();
    crate::common::wait_until_finished(&base).await;
    let metrics = reqwest::get(format!("{base}/metrics")).await.unwrap();
    let m = samples(&metrics.text().await.unwrap());
    let url = format!("{base}/");
    let rendered = tokio::task::spawn_blocking(move || render_in_chromium(&url, &["--dump-dom"]))
        .await
        .unwrap();
    let (summary, dir) = run.stop().await;
    let Some((dom, log)) = rendered else { return };
    assert!(
        dom.contains("data-loaded=\"yes\""),
        "the script did not run:\n{log}"
    );
    for line in log.lines() {
        assert!(
            !line.contains("CONSOLE") && !line.contains("Uncaught"),
            "{line}"
        );
    }
    let number = |id: &str| -> f64 {
        let text = text_of(&dom, id).replace(',', "");
        text.parse().unwrap_or_else(|_| panic!("#{id} is {text:?}"))
    };
    let t = &summary.totals;
    assert_eq!(number("fetched"), t.fetched as f64);
    assert_eq!(
        number("stored"),
        m[r#"crawldedup_pages_total{verdict="unique"}"#]
    );
    assert_eq!(number("duplicates"), t.duplicates as f64);
    assert_eq!(number("failures"), family(&m, "crawldedup_failures_total"));
    assert_eq!(number("frontier_urls"), m["crawldedup_frontier_urls"]);
    assert_eq!(number("index_documents"), m["crawldedup_index_documents"]);
    // The charts are drawn: a line of throughput, a bar per distance bucket, with the
    // near-duplicates of /metrics in them.
    assert!(
        svg_of(&dom, "throughput").contains("<path"),
        "{}",
        svg_of(&dom, "throughput")
    );
    let bars = svg_of(&dom, "distance");
    assert_eq!(bars.matches("<rect").count(), 15, "{bars}");
    let in_bars: f64 = bars
        .split("<title>")
        .skip(1)
        .map(|t| {
            t[..t.find('<').unwrap()]
                .rsplit(": ")
                .next()
                .unwrap()
                .parse::<f64>()
                .unwrap()
        })
        .sum();
    assert_eq!(in_bars, m["crawldedup_near_duplicate_distance_bits_count"]);
    assert!(in_bars > 0.0);
    // The tables: a host, its verdicts, failures by reason and the last duplicates.
    assert!(dom.contains(">127.0.0.1</td>"), "{dom}");
    assert!(dom.contains("near duplicate"), "{dom}");
    for (name, _) in m
        .iter()
        .filter(|(k, _)| k.starts_with("crawldedup_failures_total{"))
    {
        let kind = &name[name.find('"').unwrap() + 1..name.rfind('"').unwrap()];
        assert!(
            dom.contains(&format!("<td>{kind}</td>")),
            "{kind} not listed"
        );
    }
    assert!(
        dom.contains("/mirror/") || dom.contains("/print/"),
        "no recent duplicate"
    );

    report_of_the_same_crawl(dir.path(), &state, &out, &summary.totals);
}

/// `crawldedup report` of a crawl that ended with `t`: its figures, four plots, the
/// clusters, a cut output refused; it loads in the browser without an error.
fn report_of_the_same_crawl(
    dir: &std::path::Path,
    state: &std::path::Path,
    out: &std::path::Path,
    t: &crawldedup::crawl::CheckpointRecord,
) {
    let report = dir.join("report.html");
    let o = crawldedup(&[
        "report",
        "--state-dir",
        state.to_str().unwrap(),
        "--outputs",
        out.to_str().unwrap(),
        "--out",
        report.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(&report).unwrap();
    for (id, value) in [
        ("fetched", t.fetched),
        ("stored", t.stored),
        ("duplicates", t.duplicates),
        ("failures", t.failures),
        ("fetched_bytes", t.fetched_bytes),
    ] {
        assert_eq!(text_of(&html, id), value.to_string(), "{id}");
    }
    assert_eq!(html.matches("<svg").count(), 4, "{html}");
    assert!(
        html.contains("<polyline") || html.contains("<path"),
        "no line drawn"
    );
    assert!(html.matches("<rect").count() > 10, "no bars drawn");
    let duplicates = lines(&out.join("duplicates.jsonl"));
    let mut sizes: HashMap<String, usize> = HashMap::new();
    for d in &duplicates {
        *sizes
            .entry(d["of"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    let largest = sizes.values().max().unwrap();
    assert!(
        html.contains(&format!("({largest} duplicates)")),
        "the largest cluster is not listed"
    );
    // An output cut short is refused in one line, and no report is left.
    let cut = dir.join("cut");
    std::fs::create_dir(&cut).unwrap();
    for name in ["pages.jsonl", "duplicates.jsonl", "failures.jsonl"] {
        std::fs::copy(out.join(name), cut.join(name)).unwrap();
    }
    let pages = std::fs::read(cut.join("pages.jsonl")).unwrap();
    std::fs::write(cut.join("pages.jsonl"), &pages[..pages.len() / 2]).unwrap();
    let refused = dir.join("refused.html");
    let o = crawldedup(&[
        "report",
        "--state-dir",
        state.to_str().unwrap(),
        "--outputs",
        cut.to_str().unwrap(),
        "--out",
        refused.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("pages.jsonl") && stderr(&o).contains("shorter than"),
        "{}",
        stderr(&o)
    );
    assert!(!refused.exists());
    let file = format!("file://{}", report.display());
    let Some((dom, log)) = render_in_chromium(&file, &["--dump-dom"]) else {
        return;
    };
    assert!(dom.contains("crawldedup report"));
    for line in log.lines() {
        assert!(
            !line.contains("CONSOLE") && !line.contains("Uncaught"),
            "{line}"
        );
    }
}

/// `crawldedup crawl` of a slow site in the background, checkpointing often.
fn slow_crawl(seed: &str, dir: &std::path::Path) -> std::process::Child {
    let config = dir.join("crawl.toml");
    std::fs::write(&config, "[crawl]\nper_host_delay_ms = 0\nconcurrency = 1\n").unwrap();
    std::process::Command::new(env!("CARGO_BIN_EXE_crawldedup"))
        .args(["crawl", "--config"])
        .arg(&config)
        .args([
            "--seed",
            seed,
            "--allow-private-ips",
            "--checkpoint-every",
            "100ms",
            "--state-dir",
        ])
        .arg(dir.join("state"))
        .arg("--out")
        .arg(dir.join("out"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_reads_a_running_crawl_and_verify_says_who_holds_it() {
    let server = serve_with_latency(Site::new(7, 4), Duration::from_millis(60))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let state_arg = state.to_str().unwrap().to_string();
    let mut child = slow_crawl(&server.url("/"), dir.path());
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !state.join(crawldedup::crawl::STATUS_FILE).exists() {
        assert!(std::time::Instant::now() < deadline, "no status file");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let o = crawldedup(&["stats", "--json", "--state-dir", &state_arg]);
    assert!(o.status.success(), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(json["running"]["pid"], child.id(), "{json}");
    assert!(json["running"]["figures_age_seconds"].as_f64().unwrap() < 30.0);
    assert!(json["totals"]["seq"].as_u64().unwrap() >= 1);
    assert!(json["seconds"].as_f64().unwrap() > 0.0, "{json}");
    let o = crawldedup(&["stats", "--state-dir", &state_arg]);
    assert!(
        stdout(&o).starts_with(&format!("running      PID {}", child.id())),
        "{}",
        stdout(&o)
    );
    let o = crawldedup(&["verify", "--state-dir", &state_arg]);
    assert_eq!(o.status.code(), Some(3), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("in use by PID {}", child.id())),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    // A report of it: of its last checkpoint, though the outputs go on growing past it.
    let report = dir.path().join("running.html");
    let o = crawldedup(&[
        "report",
        "--state-dir",
        &state_arg,
        "--outputs",
        dir.path().join("out").to_str().unwrap(),
        "--out",
        report.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("a running crawl, PID {}", child.id())),
        "{}",
        stderr(&o)
    );
    assert!(
        std::fs::read_to_string(&report)
            .unwrap()
            .contains("a running crawl")
    );

    // Stopped: stats reads the database, with the figures the run's last status gave.
    let pid = child.id().to_string();
    std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    assert!(child.wait().unwrap().success());
    let o = crawldedup(&["stats", "--json", "--state-dir", &state_arg]);
    let stopped: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(stopped.get("running").is_none(), "{stopped}");
    assert_eq!(stopped["status"]["finished"], true);
    let o = crawldedup(&[
        "verify",
        "--state-dir",
        &state_arg,
        "--out",
        dir.path().join("out").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));

    // A read-only copy of it: stats reads it without writing.
    let Some(read_only) = crate::run_cli::ReadOnly::mount(&state_arg, &dir.path().join("backup"))
    else {
        assert!(
            std::env::var_os("CI").is_none(),
            "could not mount read-only"
        );
        eprintln!("skipped: a read-only bind mount needs root");
        return;
    };
    let before = crate::run_cli::snapshot(&state);
    let o = crawldedup(&[
        "stats",
        "--json",
        "--state-dir",
        read_only.0.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let copy: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(copy["totals"], stopped["totals"]);
    assert_eq!(copy["frontier"], stopped["frontier"]);
    assert_eq!(crate::run_cli::snapshot(&state), before);
}
