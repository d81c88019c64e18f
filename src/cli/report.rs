//! `crawldedup report`: one self-contained HTML file of a crawl, finished or running: its
//! figures, plots drawn by plotters as inline SVG, and the largest duplicate clusters.
//!
//! The figures are the last checkpoint's (as `stats` gives them), and the outputs are read
//! up to the lengths that checkpoint recorded, so the plots and tables count what the
//! figures count, even while the crawl goes on writing past it.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use plotters::prelude::*;

use super::Failure;
use super::args::ReportArgs;

/// Duplicate clusters listed (the largest first).
const CLUSTERS: usize = 20;

/// Hosts in the duplicate-rate chart and table (the busiest first).
const HOSTS: usize = 15;

/// Bins of the throughput chart.
const TIME_BINS: usize = 60;

/// One line of an output, the fields the report reads (a stored page's text is skipped
/// unread).
#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct Row {
    url: String,
    fetched_at: Option<String>,
    of: String,
    verdict: String,
    distance: u32,
    similarity: Option<f64>,
    kind: String,
}

impl Row {
    /// Seconds since the epoch of its `fetched_at` (0 without one).
    fn at(&self) -> i64 {
        self.fetched_at
            .as_deref()
            .and_then(|t| humantime::parse_rfc3339_weak(t).ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs() as i64)
    }
}

/// A member of a duplicate cluster.
struct Dup {
    url: String,
    verdict: String,
    distance: u32,
    similarity: f64,
}

/// What the report is drawn from, gathered a line at a time: memory grows with the pages
/// (8 bytes each for the throughput plot), the hosts and the pages repeated, never with
/// the outputs' text.
#[derive(Default)]
struct Outputs {
    stored: u64,
    duplicates: u64,
    failures: u64,
    /// The times of the pages stored, and of the duplicates.
    stored_at: Vec<i64>,
    duplicate_at: Vec<i64>,
    /// By host: pages stored, duplicates, failures.
    hosts: HashMap<String, [u64; 3]>,
    kinds: BTreeMap<String, u64>,
    /// Near-duplicates by distance, and by resemblance (tenths of 0.5 to 1).
    near: u64,
    distances: BTreeMap<u32, u64>,
    resemblance: [u64; 10],
    /// Duplicates by the page they repeat.
    cluster_sizes: HashMap<String, u64>,
    /// The members of the largest clusters (a second pass).
    clusters: Vec<(String, Vec<Dup>)>,
}

pub(super) fn report(args: ReportArgs) -> Result<ExitCode, Failure> {
    let config = args.config.load()?;
    let out_dir = args
        .outputs
        .clone()
        .unwrap_or_else(|| config.crawl.out_dir.clone());
    let summary =
        crawldedup::crawl::stats(&args.state_dir).map_err(|e| Failure::Setup(e.to_string()))?;
    let lengths = summary.totals.output_bytes;
    let path = |i: usize| out_dir.join(NAMES[i]);
    let mut o = Outputs::default();
    each_row(&path(0), lengths[0], |row| {
        o.stored += 1;
        o.stored_at.push(row.at());
        o.hosts.entry(host(&row.url)).or_default()[0] += 1;
    })?;
    each_row(&path(1), lengths[1], |row| {
        o.duplicates += 1;
        o.duplicate_at.push(row.at());
        o.hosts.entry(host(&row.url)).or_default()[1] += 1;
        if row.verdict == "near_duplicate" {
            o.near += 1;
            *o.distances.entry(row.distance).or_default() += 1;
            let similarity = row.similarity.unwrap_or(1.0);
            let bin = ((similarity - 0.5) / 0.05).floor().clamp(0.0, 9.0) as usize;
            o.resemblance[bin] += 1;
        }
        *o.cluster_sizes.entry(row.of).or_default() += 1;
    })?;
    each_row(&path(2), lengths[2], |row| {
        o.failures += 1;
        o.hosts.entry(host(&row.url)).or_default()[2] += 1;
        *o.kinds.entry(row.kind).or_default() += 1;
    })?;
    let mut largest: Vec<(&String, &u64)> = o.cluster_sizes.iter().collect();
    largest.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let mut members: HashMap<String, Vec<Dup>> = largest
        .iter()
        .take(CLUSTERS)
        .map(|(of, _)| ((*of).clone(), Vec::new()))
        .collect();
    let order: Vec<String> = largest
        .iter()
        .take(CLUSTERS)
        .map(|(of, _)| (*of).clone())
        .collect();
    each_row(&path(1), lengths[1], |row| {
        if let Some(list) = members.get_mut(&row.of) {
            list.push(Dup {
                url: row.url,
                verdict: row.verdict,
                distance: row.distance,
                similarity: row.similarity.unwrap_or(1.0),
            });
        }
    })?;
    o.clusters = order
        .into_iter()
        .map(|of| {
            let list = members.remove(&of).unwrap_or_default();
            (of, list)
        })
        .collect();
    let html = render(&summary, &o, &args.state_dir)
        .map_err(|e| Failure::Setup(format!("report: a plot could not be drawn: {e}")))?;
    // Written beside, then renamed: a report cut short never stands in for a whole one.
    let partial = PathBuf::from(format!("{}.partial", args.out.display()));
    std::fs::write(&partial, html)
        .and_then(|()| std::fs::rename(&partial, &args.out))
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.out.display()))?;
    eprintln!(
        "{}: {} pages stored, {} duplicates, {} failures{}",
        args.out.display(),
        o.stored,
        o.duplicates,
        o.failures,
        summary
            .running
            .as_ref()
            .map(|r| format!(" (a running crawl, PID {}: its last checkpoint)", r.pid))
            .unwrap_or_default()
    );
    Ok(ExitCode::SUCCESS)
}

/// The outputs' names, in the order of the checkpoint's lengths.
const NAMES: [&str; 3] = ["pages.jsonl", "duplicates.jsonl", "failures.jsonl"];

/// Each JSON line of the first `length` bytes of `path` (the checkpoint's part of it), a
/// line at a time.
fn each_row(path: &Path, length: u64, mut each: impl FnMut(Row)) -> Result<(), Failure> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && length == 0 => return Ok(()),
        Err(e) => {
            return Err(Failure::Setup(format!(
                "{}: {e} (give the crawl's output directory with --outputs)",
                path.display()
            )));
        }
    };
    let size = file
        .metadata()
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
        .len();
    if size < length {
        return Err(Failure::Setup(format!(
            "{}: {size} bytes, shorter than the {length} its crawl's last checkpoint recorded \
             (run `crawldedup verify`)",
            path.display()
        )));
    }
    let mut reader = std::io::BufReader::new(file.take(length));
    let (mut line, mut read, mut number) = (Vec::new(), 0u64, 0usize);
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        if n == 0 {
            break;
        }
        read += n as u64;
        number += 1;
        let row: Row = serde_json::from_slice(&line).map_err(|e| {
            Failure::Setup(format!("{}: line {number}: not JSON ({e})", path.display()))
        })?;
        each(row);
    }
    // Cut under the read (a file shortened while it was read).
    if read < length {
        return Err(Failure::Setup(format!(
            "{}: {read} bytes, shorter than the {length} its crawl's last checkpoint recorded",
            path.display()
        )));
    }
    Ok(())
}

fn host(url: &str) -> String {
    url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_else(|| "(no host)".into())
}

/// `s` with the characters that HTML gives a meaning escaped.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

type Plot = Result<String, Box<dyn std::error::Error>>;

/// A bar chart of `bars` (label, value), into SVG.
fn bars(caption: &str, y_desc: &str, bars: &[(String, f64)], color: RGBColor) -> Plot {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (640, 320)).into_drawing_area();
        root.fill(&WHITE)?;
        let top = bars.iter().map(|b| b.1).fold(0.0, f64::max).max(1.0) * 1.1;
        let n = bars.len().max(1);
        let mut chart = ChartBuilder::on(&root)
            .caption(caption, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(0.0..n as f64, 0.0..top)?;
        let labels: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n.min(16))
            .x_label_formatter(&|x: &f64| {
                labels
                    .get(x.floor() as usize)
                    .filter(|_| x.fract().abs() < 1e-9 || n <= 16)
                    .cloned()
                    .unwrap_or_default()
            })
            .y_desc(y_desc)
            .draw()?;
        chart.draw_series(bars.iter().enumerate().map(|(i, b)| {
            Rectangle::new(
                [(i as f64 + 0.1, 0.0), (i as f64 + 0.9, b.1)],
                color.filled(),
            )
        }))?;
        root.present()?;
    }
    Ok(svg)
}

/// Pages stored and duplicates per bin of time, into SVG.
fn throughput(outputs: &Outputs) -> Plot {
    let times = || {
        outputs
            .stored_at
            .iter()
            .chain(&outputs.duplicate_at)
            .copied()
            .filter(|&t| t > 0)
    };
    let (Some(t0), Some(t1)) = (times().min(), times().max()) else {
        return Ok("<p>No page with a time yet.</p>".into());
    };
    let width = ((t1 - t0 + 1) as f64 / TIME_BINS as f64).ceil().max(1.0) as i64;
    let bins = ((t1 - t0) / width + 1) as usize;
    let count = |times: &[i64]| {
        let mut per = vec![0u64; bins];
        for &t in times.iter().filter(|&&t| t > 0) {
            per[((t - t0) / width) as usize] += 1;
        }
        per
    };
    let stored = count(&outputs.stored_at);
    let dups = count(&outputs.duplicate_at);
    let rate = |n: u64| n as f64 / width as f64;
    let top = stored
        .iter()
        .chain(&dups)
        .map(|&n| rate(n))
        .fold(0.0, f64::max)
        .max(1.0)
        * 1.1;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (640, 320)).into_drawing_area();
        root.fill(&WHITE)?;
        let minutes = ((t1 - t0) as f64 / 60.0).max(1.0 / 60.0);
        let mut chart = ChartBuilder::on(&root)
            .caption("Throughput", ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(0.0..minutes, 0.0..top)?;
        chart
            .configure_mesh()
            .x_desc("minutes since the first page")
            .y_desc("pages a second")
            .draw()?;
        for (name, per, color) in [("stored", &stored, BLUE), ("duplicates", &dups, RED)] {
            chart
                .draw_series(LineSeries::new(
                    per.iter()
                        .enumerate()
                        .map(|(i, &n)| ((i as i64 * width) as f64 / 60.0, rate(n))),
                    color.stroke_width(2),
                ))?
                .label(name)
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color));
        }
        chart
            .configure_series_labels()
            .border_style(BLACK)
            .background_style(WHITE.mix(0.8))
            .draw()?;
        root.present()?;
    }
    Ok(svg)
}

/// The figures table: the checkpoint's totals, and the last run's times.
fn figures(h: &mut String, summary: &crawldedup::crawl::CrawlSummary, outputs: &Outputs) {
    let t = &summary.totals;
    h.push_str("<h2>Figures</h2>\n<table id=\"figures\">");
    let mut figure = |name: &str, id: &str, value: String| {
        h.push_str(&format!(
            "<tr><th>{name}</th><td class=\"n\" id=\"{id}\">{}</td></tr>",
            escape(&value)
        ));
    };
    figure("fetched", "fetched", t.fetched.to_string());
    figure("stored", "stored", t.stored.to_string());
    figure("duplicates", "duplicates", t.duplicates.to_string());
    figure("of them near-duplicates", "near", outputs.near.to_string());
    figure("failures", "failures", t.failures.to_string());
    figure("queued", "queued", summary.frontier.pending.to_string());
    figure(
        "index documents",
        "index_documents",
        t.index_documents.to_string(),
    );
    figure(
        "bytes fetched",
        "fetched_bytes",
        t.fetched_bytes.to_string(),
    );
    figure("bytes stored", "stored_bytes", t.stored_bytes.to_string());
    figure(
        "duplicate clusters",
        "clusters",
        outputs.cluster_sizes.len().to_string(),
    );
    if let Some(s) = &summary.status {
        let ms = |q: Option<f64>| q.map_or("-".into(), |v| format!("{:.3} ms", v * 1e3));
        figure(
            "fetch time p50 / p99 (last run)",
            "fetch_p",
            format!("{} / {}", ms(s.fetch_seconds.p50), ms(s.fetch_seconds.p99)),
        );
        figure(
            "decision time p50 / p99 (last run)",
            "decision_p",
            format!(
                "{} / {}",
                ms(s.decision_seconds.p50),
                ms(s.decision_seconds.p99)
            ),
        );
    }
}

/// The largest duplicate clusters, each with its members, of `count` in all.
fn clusters_section(h: &mut String, clusters: &[(String, Vec<Dup>)], count: usize) {
    let cluster_count = count;
    h.push_str(&format!(
        "<h2>The largest duplicate clusters</h2>\n<p class=\"muted\">{} of {cluster_count}: each page stored, with the pages recorded as its duplicates.</p>\n<div id=\"clusters\">",
        clusters.len()
    ));
    for (of, members) in clusters {
        h.push_str(&format!(
            "<details><summary>{} <span class=\"muted\">({} duplicates)</span></summary><table><tr><th>page</th><th>verdict</th><th class=\"n\">distance</th><th class=\"n\">resemblance</th></tr>",
            escape(of),
            members.len()
        ));
        for d in members {
            h.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{:.3}</td></tr>",
                escape(&d.url),
                escape(&d.verdict.replace('_', " ")),
                d.distance,
                d.similarity
            ));
        }
        h.push_str("</table></details>\n");
    }
}

/// The [`HOSTS`] hosts with the most lines in the outputs (stored, duplicates,
/// failures), most first.
fn busiest_hosts(outputs: &Outputs) -> Vec<(&str, [u64; 3])> {
    let mut busiest: Vec<(&str, [u64; 3])> = outputs
        .hosts
        .iter()
        .map(|(h, c)| (h.as_str(), *c))
        .collect();
    busiest.sort_by(|a, b| {
        (b.1[0] + b.1[1] + b.1[2])
            .cmp(&(a.1[0] + a.1[1] + a.1[2]))
            .then(a.0.cmp(b.0))
    });
    busiest.truncate(HOSTS);
    busiest
}

/// The report's HTML.
fn render(
    summary: &crawldedup::crawl::CrawlSummary,
    outputs: &Outputs,
    state_dir: &Path,
) -> Result<String, Box<dyn std::error::Error>> {
    let t = &summary.totals;
    let max_distance = outputs.distances.keys().max().copied().unwrap_or(0);
    let distance: Vec<(String, f64)> = (0..=max_distance.max(3))
        .map(|k| {
            let n = outputs.distances.get(&k).copied().unwrap_or(0);
            (k.to_string(), n as f64)
        })
        .collect();
    let resemblance: Vec<(String, f64)> = (0..10)
        .map(|i| {
            (
                format!("{:.2}", 0.5 + 0.05 * i as f64),
                outputs.resemblance[i] as f64,
            )
        })
        .collect();
    let busiest = busiest_hosts(outputs);
    let rates: Vec<(String, f64)> = busiest
        .iter()
        .map(|(h, c)| {
            let pages = c[0] + c[1];
            let rate = if pages == 0 {
                0.0
            } else {
                100.0 * c[1] as f64 / pages as f64
            };
            (h.to_string(), rate)
        })
        .collect();
    let kinds = &outputs.kinds;
    let clusters = &outputs.clusters;
    let cluster_count = outputs.cluster_sizes.len();

    let mut h = String::new();
    h.push_str(concat!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<title>crawldedup report</title><style>",
        "body{font:14px/1.4 system-ui,sans-serif;color:#1d2433;margin:24px auto;max-width:1340px;padding:0 16px}",
        "h1{font-size:22px}h2{font-size:16px;margin-top:28px}",
        ".plots{display:flex;flex-wrap:wrap;gap:12px}.plots svg{border:1px solid #d9dde5;max-width:100%;height:auto}",
        "table{border-collapse:collapse;margin:8px 0}td,th{padding:3px 8px;border-bottom:1px solid #d9dde5;text-align:left}",
        "td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}",
        "details{margin:4px 0}summary{cursor:pointer}.muted{color:#6b7383}",
        "</style></head><body>\n"
    ));
    h.push_str("<h1>crawldedup report</h1>\n<p class=\"muted\">");
    h.push_str(&escape(&state_dir.display().to_string()));
    match &summary.running {
        Some(r) => h.push_str(&format!(
            " · a running crawl (PID {}): the figures of its last checkpoint, #{}, {:.0} s old",
            r.pid, t.seq, r.figures_age_seconds
        )),
        None => h.push_str(&format!(" · as of its last checkpoint, #{}", t.seq)),
    }
    h.push_str("</p>\n");
    figures(&mut h, summary, outputs);
    h.push_str("</table>\n<h2>Plots</h2>\n<div class=\"plots\">\n");
    h.push_str(&throughput(outputs)?);
    h.push_str(&bars(
        "Near-duplicate distance",
        "pages",
        &distance,
        RGBColor(224, 138, 30),
    )?);
    h.push_str(&bars(
        "Near-duplicate resemblance",
        "pages",
        &resemblance,
        RGBColor(47, 111, 223),
    )?);
    h.push_str(&bars(
        "Duplicate rate of the busiest hosts",
        "% of pages",
        &rates,
        RGBColor(200, 54, 59),
    )?);
    h.push_str("</div>\n<h2>Busiest hosts</h2>\n<table id=\"hosts\"><tr><th>host</th><th class=\"n\">stored</th><th class=\"n\">duplicates</th><th class=\"n\">failures</th></tr>");
    for (name, c) in &busiest {
        h.push_str(&format!(
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            escape(name), c[0], c[1], c[2]
        ));
    }
    h.push_str("</table>\n<h2>Failures by kind</h2>\n<table id=\"failure_kinds\">");
    for (kind, n) in kinds {
        h.push_str(&format!(
            "<tr><td>{}</td><td class=\"n\">{n}</td></tr>",
            escape(kind)
        ));
    }
    h.push_str("</table>\n");
    clusters_section(&mut h, clusters, cluster_count);
    h.push_str("</div>\n</body></html>\n");
    Ok(h)
}
