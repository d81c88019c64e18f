//! Simulation of the host ring (`crawldedup::cluster::ring`): 2 to 64 workers and 1 M
//! hosts whose URL counts follow a heavy-tailed law, as a crawl's do (most hosts have a
//! handful of URLs, a few have millions).
//!
//! For each number of workers N it reports the load balance (largest owned share over the
//! mean, in hosts and in URLs) and the share of hosts and URLs that change owner when one
//! worker leaves or one joins, for the ring and for hashing hosts modulo N. It writes a
//! chart of both (SVG) to the given path, `target/ring_sim.svg` by default.
//!
//! Then it simulates the Redis work a page of the shared index and a URL of the shared
//! filter give each master, for 3 to 64 masters, and the busiest master's load for 1 to 64
//! workers (`redis_load.rs`).
//!
//! ```text
//! cargo run --release --example ring_sim                       # 1 M hosts
//! cargo run --release --example ring_sim -- 200000 docs/ring_sim.svg [US_A_COMMAND]
//! ```
//!
//! US_A_COMMAND: Redis CPU a command in microseconds, from the cluster bench (2.6 by
//! default: 153 us a page over 58 commands, on the 2-core development machine).
//!
//! URL counts: host i has floor(u^(-1/1.1)) URLs for u uniform in (0, 1] drawn from the
//! host's hash, capped at 5 M: a Pareto law of index 1.1 (half the hosts have 1 URL, one in
//! a thousand over 500).

mod redis_load;

use std::path::PathBuf;

use crawldedup::cluster::ring::{Member, Ring, position};
use plotters::prelude::*;

const WORKERS: [usize; 6] = [2, 4, 8, 16, 32, 64];

struct Host {
    name: String,
    at: u64,
    urls: u64,
}

fn hosts(n: usize) -> Vec<Host> {
    (0..n)
        .map(|i| {
            let name = format!("www.site{i}.example");
            let at = position(&name);
            // A uniform draw in (0, 1] from another hash of the name.
            let u = ((position(&format!("urls:{name}")) >> 11) + 1) as f64 / (1u64 << 53) as f64;
            let urls = (u.powf(-1.0 / 1.1).floor() as u64).clamp(1, 5_000_000);
            Host { name, at, urls }
        })
        .collect()
}

fn members(n: usize) -> Vec<Member> {
    (0..n)
        .map(|i| Member::new(format!("worker-{i}"), 1))
        .collect()
}

/// Owner index of every host under the ring of `n` workers (a leaver: `skip`).
fn ring_owners(hosts: &[Host], n: usize, skip: Option<usize>) -> Vec<usize> {
    let ring = Ring::new(
        members(n)
            .into_iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != skip)
            .map(|(_, m)| m),
    );
    hosts
        .iter()
        .map(|h| {
            let id = &ring.owner_at(h.at).expect("members").id;
            id.trim_start_matches("worker-").parse().expect("an id")
        })
        .collect()
}

/// Owner index under modulo hashing over the workers `0..n` without `skip`.
fn modulo_owners(hosts: &[Host], n: usize, skip: Option<usize>) -> Vec<usize> {
    let live: Vec<usize> = (0..n).filter(|i| Some(*i) != skip).collect();
    hosts
        .iter()
        .map(|h| live[(h.at % live.len() as u64) as usize])
        .collect()
}

/// (largest over mean of hosts owned, largest over mean of URLs owned).
fn balance(hosts: &[Host], owners: &[usize], n: usize) -> (f64, f64) {
    let mut count = vec![0u64; n];
    let mut urls = vec![0u64; n];
    for (h, &o) in hosts.iter().zip(owners) {
        count[o] += 1;
        urls[o] += h.urls;
    }
    let ratio = |v: &[u64]| {
        let live: Vec<u64> = v.iter().copied().filter(|&x| x > 0).collect();
        let mean = live.iter().sum::<u64>() as f64 / live.len() as f64;
        *live.iter().max().unwrap_or(&0) as f64 / mean
    };
    (ratio(&count), ratio(&urls))
}

/// (share of hosts, share of URLs) whose owner differs.
fn moved(hosts: &[Host], a: &[usize], b: &[usize]) -> (f64, f64) {
    let total_urls: u64 = hosts.iter().map(|h| h.urls).sum();
    let (mut n, mut urls) = (0u64, 0u64);
    for ((h, x), y) in hosts.iter().zip(a).zip(b) {
        if x != y {
            n += 1;
            urls += h.urls;
        }
    }
    (
        n as f64 / hosts.len() as f64,
        urls as f64 / total_urls as f64,
    )
}

struct Row {
    n: usize,
    ring_balance: (f64, f64),
    modulo_balance: (f64, f64),
    ring_leave: (f64, f64),
    ring_join: (f64, f64),
    modulo_leave: (f64, f64),
    modulo_join: (f64, f64),
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n_hosts: usize = args.next().map_or(Ok(1_000_000), |a| a.parse())?;
    let out = args.next().map_or_else(
        || PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/target/ring_sim.svg")),
        PathBuf::from,
    );
    let hosts = hosts(n_hosts);
    let urls: u64 = hosts.iter().map(|h| h.urls).sum();
    let largest = hosts.iter().map(|h| h.urls).max().unwrap_or(0);
    let busiest = hosts.iter().max_by_key(|h| h.urls).map_or("", |h| &h.name);
    println!(
        "{n_hosts} hosts, {urls} URLs (largest host {busiest}: {largest} URLs, {:.2}% of all)",
        100.0 * largest as f64 / urls as f64
    );
    println!(
        "(no assignment of whole hosts can bring the largest share of URLs below that host's: \
         max/mean >= {:.2} x workers)",
        largest as f64 / urls as f64
    );
    println!(
        "{:>7} | {:>23} | {:>23} | {:>27} | {:>27}",
        "workers",
        "balance, ring (max/mean)",
        "balance, modulo",
        "moved on a leave: ring/mod",
        "moved on a join: ring/mod"
    );
    println!(
        "{:>7} | {:>11} {:>11} | {:>11} {:>11} | {:>13} {:>13} | {:>13} {:>13}",
        "", "hosts", "URLs", "hosts", "URLs", "hosts", "URLs", "hosts", "URLs"
    );
    let mut rows = Vec::new();
    for n in WORKERS {
        let ring = ring_owners(&hosts, n, None);
        let modulo = modulo_owners(&hosts, n, None);
        // The worker in the middle leaves; a new one (number n) joins.
        let leaver = Some(n / 2);
        let row = Row {
            n,
            ring_balance: balance(&hosts, &ring, n),
            modulo_balance: balance(&hosts, &modulo, n),
            ring_leave: moved(&hosts, &ring, &ring_owners(&hosts, n, leaver)),
            ring_join: moved(&hosts, &ring, &ring_owners(&hosts, n + 1, None)),
            modulo_leave: moved(&hosts, &modulo, &modulo_owners(&hosts, n, leaver)),
            modulo_join: moved(&hosts, &modulo, &modulo_owners(&hosts, n + 1, None)),
        };
        println!(
            "{:>7} | {:>11.3} {:>11.3} | {:>11.3} {:>11.3} | {:>6.3}/{:<6.3} {:>6.3}/{:<6.3} | {:>6.3}/{:<6.3} {:>6.3}/{:<6.3}",
            n,
            row.ring_balance.0,
            row.ring_balance.1,
            row.modulo_balance.0,
            row.modulo_balance.1,
            row.ring_leave.0,
            row.modulo_leave.0,
            row.ring_leave.1,
            row.modulo_leave.1,
            row.ring_join.0,
            row.modulo_join.0,
            row.ring_join.1,
            row.modulo_join.1,
        );
        rows.push(row);
    }
    plot(&rows, &out)?;
    println!("chart: {}", out.display());
    let us_a_command: f64 = args.next().map_or(Ok(2.6), |a| a.parse())?;
    redis_load::run(100_000, us_a_command);
    Ok(())
}

/// One line of a chart: its legend, the value it draws for a row, its colour.
type Series = (&'static str, fn(&Row) -> f64, RGBColor);

fn plot(rows: &[Row], out: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let root = SVGBackend::new(out, (960, 420)).into_drawing_area();
    root.fill(&WHITE)?;
    let (left, right) = root.split_horizontally(480);
    panel(
        &left,
        rows,
        ("Hosts that change owner", "share of hosts"),
        0.0..1.0,
        [
            ("ring, one leaves", |r| r.ring_leave.0, BLUE),
            ("ring, one joins", |r| r.ring_join.0, CYAN),
            ("modulo, one leaves", |r| r.modulo_leave.0, RED),
            ("modulo, one joins", |r| r.modulo_join.0, MAGENTA),
        ],
        SeriesLabelPosition::MiddleRight,
    )?;
    let top = rows
        .iter()
        .flat_map(|r| [r.ring_balance.1, r.modulo_balance.1])
        .fold(1.0f64, f64::max)
        * 1.1;
    panel(
        &right,
        rows,
        ("Load: largest share over the mean", "max / mean"),
        0.9..top,
        [
            ("ring, hosts", |r| r.ring_balance.0, BLUE),
            ("ring, URLs", |r| r.ring_balance.1, CYAN),
            ("modulo, hosts", |r| r.modulo_balance.0, RED),
            ("modulo, URLs", |r| r.modulo_balance.1, MAGENTA),
        ],
        SeriesLabelPosition::UpperLeft,
    )?;
    root.present()?;
    Ok(())
}

/// One chart: `series` over the number of workers (a log scale), with a legend.
fn panel(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    rows: &[Row],
    (caption, y_desc): (&str, &str),
    y_range: std::ops::Range<f64>,
    series: [Series; 4],
    legend: SeriesLabelPosition,
) -> Result<(), Box<dyn std::error::Error>> {
    let x = |r: &Row| (r.n as f64).log2();
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(48)
        .build_cartesian_2d(0.8f64..6.2f64, y_range)?;
    chart
        .configure_mesh()
        .x_desc("workers")
        .y_desc(y_desc)
        .x_labels(6)
        .x_label_formatter(&|v: &f64| format!("{}", 2f64.powf(*v).round()))
        .draw()?;
    for (name, value, color) in series {
        chart
            .draw_series(LineSeries::new(
                rows.iter().map(|r| (x(r), value(r))),
                color,
            ))?
            .label(name)
            .legend(move |(lx, ly)| PathElement::new(vec![(lx, ly), (lx + 16, ly)], color));
        chart.draw_series(
            rows.iter()
                .map(|r| Circle::new((x(r), value(r)), 3, color.filled())),
        )?;
    }
    chart
        .configure_series_labels()
        .position(legend)
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()?;
    Ok(())
}
