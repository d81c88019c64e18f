//! `crawldedup report`: one self-contained HTML file of a crawl, finished or running: its
//! figures, plots drawn by plotters as inline SVG, and the largest duplicate clusters.
//!
//! The figures are the last checkpoint's (as `stats` gives them), and the outputs are read
//! up to the lengths that checkpoint recorded, so the plots and tables count what the
//! figures count, even while the crawl goes on writing past it.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
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

/// One decided URL of the outputs.
struct Line {
    url: String,
    /// Seconds since the epoch (0 when the line has no time).
    at: i64,
}

/// A duplicate of the outputs.
struct Dup {
    line: Line,
    of: String,
    verdict: String,
    distance: u32,
    similarity: f64,
}

/// What the report is drawn from.
struct Outputs {
    stored: Vec<Line>,
    duplicates: Vec<Dup>,
    failures: Vec<(Line, String)>,
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
    let read = |i: usize| read_jsonl(&out_dir.join(NAMES[i]), lengths[i]);
    let outputs = Outputs {
        stored: read(0)?.iter().map(line_of).collect(),
        duplicates: read(1)?
            .iter()
            .map(|v| Dup {
                line: line_of(v),
                of: text(v, "of"),
                verdict: text(v, "verdict"),
                distance: v["distance"].as_u64().unwrap_or(0) as u32,
                similarity: v["similarity"].as_f64().unwrap_or(1.0),
            })
            .collect(),
        failures: read(2)?
            .iter()
            .map(|v| (line_of(v), text(v, "kind")))
            .collect(),
    };
    let html = render(&summary, &outputs, &args.state_dir)
        .map_err(|e| Failure::Setup(format!("report: a plot could not be drawn: {e}")))?;
    // Written beside, then renamed: a report cut short never stands in for a whole one.
    let partial = PathBuf::from(format!("{}.partial", args.out.display()));
    std::fs::write(&partial, html)
        .and_then(|()| std::fs::rename(&partial, &args.out))
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.out.display()))?;
    eprintln!(
        "{}: {} pages stored, {} duplicates, {} failures{}",
        args.out.display(),
        outputs.stored.len(),
        outputs.duplicates.len(),
        outputs.failures.len(),
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

/// The JSON lines of the first `length` bytes of `path` (the checkpoint's part of it).
fn read_jsonl(path: &Path, length: u64) -> Result<Vec<serde_json::Value>, Failure> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && length == 0 => return Ok(vec![]),
        Err(e) => {
            return Err(Failure::Setup(format!(
                "{}: {e} (give the crawl's output directory with --outputs)",
                path.display()
            )));
        }
    };
    let mut bytes = Vec::new();
    file.take(length)
        .read_to_end(&mut bytes)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    if (bytes.len() as u64) < length {
        return Err(Failure::Setup(format!(
            "{}: {} bytes, shorter than the {length} its crawl's last checkpoint recorded (run \
             `crawldedup verify`)",
            path.display(),
            bytes.len()
        )));
    }
    bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_slice(l).map_err(|e| {
                Failure::Setup(format!(
                    "{}: line {}: not JSON ({e})",
                    path.display(),
                    i + 1
                ))
            })
        })
        .collect()
}

fn text(v: &serde_json::Value, key: &str) -> String {
    v[key].as_str().unwrap_or_default().to_string()
}

fn line_of(v: &serde_json::Value) -> Line {
    let at = v["fetched_at"]
        .as_str()
        .and_then(|t| humantime::parse_rfc3339_weak(t).ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs() as i64);
    Line {
        url: text(v, "url"),
        at,
    }
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
    let times: Vec<i64> = outputs
        .stored
        .iter()
        .chain(outputs.duplicates.iter().map(|d| &d.line))
        .map(|l| l.at)
        .filter(|&t| t > 0)
        .collect();
    let (Some(&t0), Some(&t1)) = (times.iter().min(), times.iter().max()) else {
        return Ok("<p>No page with a time yet.</p>".into());
    };
    let width = ((t1 - t0 + 1) as f64 / TIME_BINS as f64).ceil().max(1.0) as i64;
    let bins = ((t1 - t0) / width + 1) as usize;
    let count = |lines: &mut dyn Iterator<Item = &Line>| {
        let mut per = vec![0u64; bins];
        for l in lines.filter(|l| l.at > 0) {
            per[((l.at - t0) / width) as usize] += 1;
        }
        per
    };
    let stored = count(&mut outputs.stored.iter());
    let dups = count(&mut outputs.duplicates.iter().map(|d| &d.line));
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

/// The report's HTML.
fn render(
    summary: &crawldedup::crawl::CrawlSummary,
    outputs: &Outputs,
    state_dir: &Path,
) -> Result<String, Box<dyn std::error::Error>> {
    let t = &summary.totals;
    let near: Vec<&Dup> = outputs
        .duplicates
        .iter()
        .filter(|d| d.verdict == "near_duplicate")
        .collect();
    let max_distance = near.iter().map(|d| d.distance).max().unwrap_or(0);
    let distance: Vec<(String, f64)> = (0..=max_distance.max(3))
        .map(|k| {
            let n = near.iter().filter(|d| d.distance == k).count();
            (k.to_string(), n as f64)
        })
        .collect();
    let resemblance: Vec<(String, f64)> = (0..10)
        .map(|i| {
            let lo = 0.5 + 0.05 * i as f64;
            let n = near
                .iter()
                .filter(|d| d.similarity >= lo && (d.similarity < lo + 0.05 || i == 9))
                .count();
            (format!("{lo:.2}"), n as f64)
        })
        .collect();
    // Hosts: pages stored, duplicates, failures.
    let mut hosts: HashMap<String, [u64; 3]> = HashMap::new();
    for l in &outputs.stored {
        hosts.entry(host(&l.url)).or_default()[0] += 1;
    }
    for d in &outputs.duplicates {
        hosts.entry(host(&d.line.url)).or_default()[1] += 1;
    }
    for (l, _) in &outputs.failures {
        hosts.entry(host(&l.url)).or_default()[2] += 1;
    }
    let mut busiest: Vec<(String, [u64; 3])> = hosts.into_iter().collect();
    busiest.sort_by(|a, b| {
        (b.1[0] + b.1[1] + b.1[2])
            .cmp(&(a.1[0] + a.1[1] + a.1[2]))
            .then(a.0.cmp(&b.0))
    });
    busiest.truncate(HOSTS);
    let rates: Vec<(String, f64)> = busiest
        .iter()
        .map(|(h, c)| {
            let pages = c[0] + c[1];
            let rate = if pages == 0 {
                0.0
            } else {
                100.0 * c[1] as f64 / pages as f64
            };
            (h.clone(), rate)
        })
        .collect();
    let mut kinds: BTreeMap<&str, u64> = BTreeMap::new();
    for (_, kind) in &outputs.failures {
        *kinds.entry(kind).or_default() += 1;
    }
    let mut clusters: HashMap<&str, Vec<&Dup>> = HashMap::new();
    for d in &outputs.duplicates {
        clusters.entry(&d.of).or_default().push(d);
    }
    let mut clusters: Vec<(&str, Vec<&Dup>)> = clusters.into_iter().collect();
    clusters.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
    let cluster_count = clusters.len();
    clusters.truncate(CLUSTERS);

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
    h.push_str("</p>\n<h2>Figures</h2>\n<table id=\"figures\">");
    let mut figure = |name: &str, id: &str, value: String| {
        h.push_str(&format!(
            "<tr><th>{name}</th><td class=\"n\" id=\"{id}\">{}</td></tr>",
            escape(&value)
        ));
    };
    figure("fetched", "fetched", t.fetched.to_string());
    figure("stored", "stored", t.stored.to_string());
    figure("duplicates", "duplicates", t.duplicates.to_string());
    figure("of them near-duplicates", "near", near.len().to_string());
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
    figure("duplicate clusters", "clusters", cluster_count.to_string());
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
    for (kind, n) in &kinds {
        h.push_str(&format!(
            "<tr><td>{}</td><td class=\"n\">{n}</td></tr>",
            escape(kind)
        ));
    }
    h.push_str(&format!(
        "</table>\n<h2>The largest duplicate clusters</h2>\n<p class=\"muted\">{} of {cluster_count}: each page stored, with the pages recorded as its duplicates.</p>\n<div id=\"clusters\">",
        clusters.len()
    ));
    for (of, members) in &clusters {
        h.push_str(&format!(
            "<details><summary>{} <span class=\"muted\">({} duplicates)</span></summary><table><tr><th>page</th><th>verdict</th><th class=\"n\">distance</th><th class=\"n\">resemblance</th></tr>",
            escape(of),
            members.len()
        ));
        for d in members {
            h.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{:.3}</td></tr>",
                escape(&d.line.url),
                escape(&d.verdict.replace('_', " ")),
                d.distance,
                d.similarity
            ));
        }
        h.push_str("</table></details>\n");
    }
    h.push_str("</div>\n</body></html>\n");
    Ok(h)
}
