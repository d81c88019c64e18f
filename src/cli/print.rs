//! Printing a crawl's summary, and the demonstration.

use std::process::ExitCode;

use crawldedup::demo::{self, LinkOutcome};

use super::Failure;

pub(super) fn print_summary(summary: &crawldedup::crawl::CrawlSummary) {
    let t = &summary.totals;
    let f = &summary.frontier;
    if let Some(r) = &summary.running {
        println!(
            "running      PID {}: figures of its last checkpoint, {:.0} s ago",
            r.pid, r.figures_age_seconds
        );
    }
    println!("fetched      {}", t.fetched);
    println!("stored       {}", t.stored);
    println!("duplicates   {}", t.duplicates);
    println!("failed       {}", t.failures);
    println!("queued       {} (in flight {})", f.pending, f.in_flight);
    println!("checkpoints  {}", t.seq);
    if t.fetched_bytes > 0 {
        println!(
            "bytes        {} fetched, {} stored",
            bytes(t.fetched_bytes),
            bytes(t.stored_bytes)
        );
    }
    if let Some(ms) = t.last_stored_at_ms {
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms);
        println!("last stored  {}", humantime::format_rfc3339_seconds(at));
    }
    if !t.failure_kinds.is_empty() {
        let mut kinds: Vec<_> = t.failure_kinds.iter().collect();
        kinds.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let listed: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
        println!("failures by  {}", listed.join(", "));
    }
    if let Some(s) = &summary.status {
        print_times("fetch time", &s.fetch_seconds);
        print_times("extraction", &s.extraction_seconds);
        print_times("decision", &s.decision_seconds);
    }
    if let Some(w) = &t.windows {
        print_windows(w);
    }
    if summary.seconds == 0.0 {
        // Figures read from disk: no run time to report.
        return;
    }
    println!(
        "time         {:.1} s ({} pages fetched by this run, {:.1} pages/s){}",
        summary.seconds,
        summary.fetched_this_run,
        summary.fetched_this_run as f64 / summary.seconds.max(1e-9),
        if summary.page_limit_reached {
            ", stopped at crawl.max_pages (it counts every run of this crawl): raise it to \
             go on"
        } else if summary.stopped_early {
            ", stopped early: run again to resume"
        } else {
            ""
        }
    );
}

/// A size in bytes, in the unit that reads best.
fn bytes(n: u64) -> String {
    match n {
        0..1_000_000 => format!("{:.1} kB", n as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", n as f64 / 1e6),
        _ => format!("{:.2} GB", n as f64 / 1e9),
    }
}

/// A line of the run's percentiles of one time (from its status file).
fn print_times(name: &str, q: &crawldedup::metrics::Quantiles) {
    if q.count == 0 {
        return;
    }
    let at = |v: Option<f64>| match v {
        Some(s) if s < 0.001 => format!("{:.0} us", s * 1e6),
        Some(s) if s < 1.0 => format!("{:.1} ms", s * 1e3),
        Some(s) => format!("{s:.1} s"),
        None => "over the last bucket".into(),
    };
    println!(
        "{:<12} p50 <= {}, p90 <= {}, p99 <= {} ({} this run)",
        name,
        at(q.p50),
        at(q.p90),
        at(q.p99),
        q.count
    );
}

/// The time windows' lines of a summary.
fn print_windows(w: &crawldedup::dedup::WindowStats) {
    let span = |secs: u64| humantime::format_duration(std::time::Duration::from_secs(secs));
    match w.retention_secs {
        Some(secs) => {
            let oldest = w.oldest_live_fingerprint.map_or("none".to_string(), |t| {
                humantime::format_rfc3339_seconds(
                    std::time::UNIX_EPOCH + std::time::Duration::from_secs(t),
                )
                .to_string()
            });
            println!(
                "retention    {} ({} fingerprints held, oldest stored {oldest}; {} expired)",
                span(secs),
                w.live_documents,
                w.fingerprints_expired
            );
        }
        None => println!("retention    off (every fingerprint is kept)"),
    }
    match w.recrawl_after_secs {
        Some(secs) => println!(
            "recrawl      after {} ({} filter generations; {} URLs came due)",
            span(secs),
            w.url_generations,
            w.urls_expired
        ),
        None => println!("recrawl      off (a URL seen once is skipped for good)"),
    }
}

pub(super) fn run_demo() -> Result<ExitCode, Failure> {
    println!("crawldedup demo: links as a crawler meets them, through the URL layer\n");
    let outcomes = demo::run_url_layer()?;
    let (mut new, mut seen, mut invalid) = (0, 0, 0);
    for (link, outcome) in &outcomes {
        match outcome {
            LinkOutcome::New(url) => {
                new += 1;
                println!("new      {link}\n         -> {url}");
            }
            LinkOutcome::Seen(url) => {
                seen += 1;
                println!("seen     {link}\n         -> {url}");
            }
            LinkOutcome::Invalid(reason) => {
                invalid += 1;
                println!("invalid  {link}\n         -> {reason}");
            }
        }
    }
    println!(
        "\n{} links: {new} to fetch, {seen} dropped as variants of a URL already seen, {invalid} not crawlable",
        outcomes.len()
    );

    println!("\n== a whole crawl, offline: a generated site served on loopback\n");
    let runtime =
        tokio::runtime::Runtime::new().map_err(|e| anyhow::anyhow!("tokio runtime: {e}"))?;
    let report = runtime
        .block_on(demo::run_crawl())
        .map_err(|e| anyhow::anyhow!("demo crawl: {e}"))?;
    println!("site: {}", report.site);
    print_summary(&report.summary);
    println!("\nduplicates by verdict:");
    for (verdict, n) in &report.duplicates {
        println!("  {verdict:16} {n}");
    }
    println!("not stored, by reason:");
    for (kind, n) in &report.failures {
        println!("  {kind:16} {n}");
    }
    println!("examples:");
    for (url, of, verdict) in &report.examples {
        println!("  {url}\n    {verdict} of {of}");
    }
    println!(
        "\nURL variants (tracking parameters, fragments, session ids) were never fetched; \
         robots.txt kept the crawler out of /private/; the endless calendar stopped at the \
         depth limit. `crawldedup crawl --seed URL` runs the same crawl on a site of your own."
    );
    Ok(ExitCode::SUCCESS)
}
