//! Crawl throughput on loopback: crawldedup (the whole pipeline: fetch, extract, simhash,
//! index, JSONL and WARC output, checkpoints) against the `spider` crate
//! (the adapter's build of it: `default-features = false` with `sync` and `headers`; it
//! fetches and follows links) on the same generated site, in the same run. Rows measured
//! before 2026-12-02 ran spider with no features at all, as a dev-dependency. Each crawler runs in its own child process, so that its peak
//! memory (VmHWM) is its own.
//!
//! ```text
//! cargo bench --features spider --bench crawl             # 1,000 articles per topic: 20,000+ pages
//! cargo bench --features spider --bench crawl -- 200      # a smaller site
//! cargo bench --features spider --bench crawl -- --rounds 5 ours   # five runs of crawldedup alone
//! ```

use std::time::Instant;

mod support;

fn peak_kib() -> u64 {
    support::status_kib("VmHWM")
}

/// CPU seconds (user + system) this process has used, from /proc/self/stat.
fn cpu_seconds() -> f64 {
    stat_cpu("/proc/self/stat")
}

/// CPU seconds of the main thread, where `block_on` runs spider's crawl loop: what caps
/// throughput when it is busy.
fn main_thread_cpu_seconds() -> f64 {
    stat_cpu(&format!("/proc/self/task/{}/stat", std::process::id()))
}

fn stat_cpu(path: &str) -> f64 {
    let stat = std::fs::read_to_string(path).unwrap_or_default();
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name and state.
    (ticks(11) + ticks(12)) / 100.0
}

fn child(args: &[String]) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let url = &args[1];
    let start = Instant::now();
    let pages = match args[0].as_str() {
        "ours" => {
            // As the `crawldedup` binary starts.
            crawldedup::crawl::limit_malloc_arenas();
            let dir = support::scratch_dir().unwrap();
            let mut config = crawldedup::Config::default();
            config.crawl.seeds = vec![url.clone()];
            config.crawl.state_dir = dir.path().join("state");
            config.crawl.out_dir = dir.path().join("out");
            config.crawl.allow_private_ips = true;
            config.crawl.respect_robots = false;
            config.crawl.concurrency = 32;
            config.crawl.per_host_concurrency = 32;
            config.crawl.per_host_delay_ms = 0;
            config.url_filter.expected_urls = 1_000_000;
            let summary = runtime
                .block_on(crawldedup::crawl::crawl(&config, std::future::pending()))
                .unwrap();
            summary.totals.fetched
        }
        _ => runtime.block_on(async {
            let mut website = spider::website::Website::new(url);
            website.crawl().await;
            website.get_links().len() as u64
        }),
    };
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "{}",
        serde_json::json!({"pages": pages, "seconds": seconds, "peak_kib": peak_kib(), "cpu_seconds": cpu_seconds(), "main_cpu_seconds": main_thread_cpu_seconds()})
    );
}

fn rate(v: &serde_json::Value) -> f64 {
    v["pages"].as_f64().unwrap_or(0.0) / v["seconds"].as_f64().unwrap_or(f64::NAN)
}

fn describe(which: &str, v: &serde_json::Value) -> String {
    let pages = v["pages"].as_f64().unwrap_or(0.0);
    let seconds = v["seconds"].as_f64().unwrap_or(f64::NAN);
    let cpu = v["cpu_seconds"].as_f64().unwrap_or(f64::NAN);
    let main_cpu = v["main_cpu_seconds"].as_f64().unwrap_or(f64::NAN);
    let server_cpu = v["server_cpu_seconds"].as_f64().unwrap_or(f64::NAN);
    // crawldedup's crawl loop is a task on the runtime's workers: its main thread only waits.
    let main_thread = if main_cpu / pages * 1e6 >= 1.0 {
        format!(" ({:3.0} us on the main thread)", main_cpu / pages * 1e6)
    } else {
        String::new()
    };
    format!(
        "{which:7} {pages:>7} pages in {seconds:6.2} s = {:8.0} pages/s, {:5.0} us of CPU per page{main_thread} (the server: {:3.0} us), peak memory {:.0} MiB",
        pages / seconds,
        cpu / pages * 1e6,
        server_cpu / pages * 1e6,
        v["peak_kib"].as_f64().unwrap_or(0.0) / 1024.0
    )
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--child") {
        child(&args[1..]);
        return;
    }
    // The first number that is not the value of `--rounds`.
    let per_topic: usize = args
        .iter()
        .enumerate()
        .filter(|(i, _)| *i == 0 || args[i - 1] != "--rounds")
        .find_map(|(_, a)| a.parse().ok())
        .unwrap_or(1000);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(crawldedup::fixture::serve(
            crawldedup::fixture::Site::without_traps(7, per_topic),
        ))
        .unwrap();
    let url = server.url("/");
    println!(
        "site: {} articles on 5 topics, each in 4 versions, on {url}",
        per_topic * 5
    );
    // `ours` or `spider` among the arguments runs that crawler alone (for profiling).
    let only: Vec<&str> = ["ours", "spider"]
        .into_iter()
        .filter(|w| args.iter().any(|a| a == w))
        .collect();
    // `--rounds N`: each crawler runs N times, taking turns, and the median run is quoted
    // (the machine's neighbours move single runs by 10-20%).
    let rounds: usize = args
        .iter()
        .position(|a| a == "--rounds")
        .and_then(|i| args.get(i + 1)?.parse().ok())
        .unwrap_or(3)
        .max(1);
    let crawlers: Vec<&str> = ["ours", "spider"]
        .into_iter()
        .filter(|w| only.is_empty() || only.contains(w))
        .collect();
    let mut runs: Vec<Vec<serde_json::Value>> = vec![Vec::new(); crawlers.len()];
    for round in 0..rounds {
        for (i, which) in crawlers.iter().enumerate() {
            // The site's server runs in this process: its CPU during the run is what the
            // crawler's requests cost it.
            let server_cpu = cpu_seconds();
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--child", which, &url])
                .output()
                .unwrap();
            let server_cpu = cpu_seconds() - server_cpu;
            let line = String::from_utf8_lossy(&out.stdout);
            let mut v: serde_json::Value = serde_json::from_str(
                line.trim().lines().last().unwrap_or("{}"),
            )
            .unwrap_or_else(|_| panic!("{which}: {}", String::from_utf8_lossy(&out.stderr)));
            v["server_cpu_seconds"] = server_cpu.into();
            println!("round {}: {}", round + 1, describe(which, &v));
            runs[i].push(v);
        }
    }
    let mut rates = Vec::new();
    for (which, mut runs) in crawlers.iter().zip(runs) {
        runs.sort_by(|a, b| rate(a).total_cmp(&rate(b)));
        let median = &runs[runs.len() / 2];
        println!("median of {rounds}: {}", describe(which, median));
        rates.push(rate(median));
    }
    if rates.len() == 2 {
        println!(
            "crawldedup (with extraction, dedup and output) / spider (fetch and links): {:.2}x pages/s (medians)",
            rates[0] / rates[1]
        );
    }
    drop(server);
}
