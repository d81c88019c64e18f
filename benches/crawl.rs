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

/// The allocator of a child process: mimalloc, as the `crawldedup` binary has it, when the
/// parent sets `CRAWL_BENCH_ALLOCATOR=mimalloc` (crawldedup's runs, and spider's with
/// `--peer-mimalloc`); the system's otherwise (spider's runs, as spider's own users get, and
/// crawldedup's with `--system-alloc`). It is chosen at the process's first allocation, from
/// the environment read without allocating, and never changes, so every block is freed by
/// the allocator that made it.
#[cfg(all(feature = "mimalloc", target_os = "linux"))]
mod allocator {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::sync::atomic::{AtomicU8, Ordering};

    struct ChildAllocator;

    /// 0 until chosen, then 1 (the system's) or 2 (mimalloc).
    static CHOICE: AtomicU8 = AtomicU8::new(0);

    fn mimalloc() -> bool {
        let mut choice = CHOICE.load(Ordering::Relaxed);
        if choice == 0 {
            // SAFETY: getenv reads the environment the C library set up before main; the
            // name is a NUL-terminated constant. Two threads racing here choose the same.
            let value = unsafe { libc::getenv(c"CRAWL_BENCH_ALLOCATOR".as_ptr()) };
            // SAFETY: a non-null getenv result is a NUL-terminated string.
            let on = !value.is_null()
                && unsafe { std::ffi::CStr::from_ptr(value) }.to_bytes() == b"mimalloc";
            choice = if on { 2 } else { 1 };
            CHOICE.store(choice, Ordering::Relaxed);
        }
        choice == 2
    }

    // SAFETY: every call goes to one of two sound allocators, the same one for the whole
    // life of the process.
    unsafe impl GlobalAlloc for ChildAllocator {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            unsafe {
                if mimalloc() {
                    mimalloc::MiMalloc.alloc(layout)
                } else {
                    System.alloc(layout)
                }
            }
        }
        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            unsafe {
                if mimalloc() {
                    mimalloc::MiMalloc.alloc_zeroed(layout)
                } else {
                    System.alloc_zeroed(layout)
                }
            }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            unsafe {
                if mimalloc() {
                    mimalloc::MiMalloc.dealloc(ptr, layout)
                } else {
                    System.dealloc(ptr, layout)
                }
            }
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            unsafe {
                if mimalloc() {
                    mimalloc::MiMalloc.realloc(ptr, layout, new_size)
                } else {
                    System.realloc(ptr, layout, new_size)
                }
            }
        }
    }

    #[global_allocator]
    static ALLOCATOR: ChildAllocator = ChildAllocator;

    /// Whether this process allocates with mimalloc.
    pub fn is_mimalloc() -> bool {
        mimalloc()
    }
}

#[cfg(not(all(feature = "mimalloc", target_os = "linux")))]
mod allocator {
    pub fn is_mimalloc() -> bool {
        false
    }
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
            // As the `crawldedup` binary starts (mimalloc is tuned first thing in `main`).
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
        serde_json::json!({"pages": pages, "seconds": seconds, "peak_kib": peak_kib(), "cpu_seconds": cpu_seconds(), "main_cpu_seconds": main_thread_cpu_seconds(), "mimalloc": allocator::is_mimalloc()})
    );
}

fn cpu_per_page(v: &serde_json::Value) -> f64 {
    v["cpu_seconds"].as_f64().unwrap_or(f64::NAN) / v["pages"].as_f64().unwrap_or(f64::NAN) * 1e6
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

/// mimalloc tuned as the process loads, before anything allocates, as in the `crawldedup`
/// binary.
#[cfg(all(feature = "mimalloc", target_os = "linux"))]
#[used]
#[unsafe(link_section = ".init_array")]
static TUNE_MIMALLOC: extern "C" fn() = {
    extern "C" fn tune() {
        if allocator::is_mimalloc() {
            crawldedup::crawl::tune_mimalloc();
        }
    }
    tune
};

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
    // Each run: a label, the child's crawler and whether it allocates with mimalloc.
    // crawldedup runs with the `crawldedup` binary's allocator (mimalloc, with the feature),
    // spider with the system's, as each is shipped; `--system-alloc` adds crawldedup on the
    // system's and `--peer-mimalloc` spider on mimalloc, in the same rounds.
    let binary_mimalloc = cfg!(all(feature = "mimalloc", target_os = "linux"));
    let mut crawlers: Vec<(&str, &str, bool)> = vec![("ours", "ours", binary_mimalloc)];
    if args.iter().any(|a| a == "--system-alloc") && binary_mimalloc {
        crawlers.push(("ours-sys", "ours", false));
    }
    crawlers.push(("spider", "spider", false));
    if args.iter().any(|a| a == "--peer-mimalloc") && binary_mimalloc {
        crawlers.push(("spider-mi", "spider", true));
    }
    crawlers.retain(|(_, kind, _)| only.is_empty() || only.contains(kind));
    let mut runs: Vec<Vec<serde_json::Value>> = vec![Vec::new(); crawlers.len()];
    for round in 0..rounds {
        for (i, (label, which, mimalloc)) in crawlers.iter().enumerate() {
            // The site's server runs in this process: its CPU during the run is what the
            // crawler's requests cost it.
            let server_cpu = cpu_seconds();
            let mut command = std::process::Command::new(std::env::current_exe().unwrap());
            command.args(["--child", which, &url]);
            if *mimalloc {
                command.env("CRAWL_BENCH_ALLOCATOR", "mimalloc");
            }
            let out = command.output().unwrap();
            let server_cpu = cpu_seconds() - server_cpu;
            let line = String::from_utf8_lossy(&out.stdout);
            let mut v: serde_json::Value = serde_json::from_str(
                line.trim().lines().last().unwrap_or("{}"),
            )
            .unwrap_or_else(|_| panic!("{which}: {}", String::from_utf8_lossy(&out.stderr)));
            v["server_cpu_seconds"] = server_cpu.into();
            println!("round {}: {}", round + 1, describe(label, &v));
            runs[i].push(v);
        }
    }
    let mut rates = Vec::new();
    let mut cpus = Vec::new();
    for ((label, _, _), mut runs) in crawlers.iter().zip(runs) {
        runs.sort_by(|a, b| rate(a).total_cmp(&rate(b)));
        let median = &runs[runs.len() / 2];
        println!("median of {rounds}: {}", describe(label, median));
        rates.push((*label, rate(median)));
        // The median of CPU a page, on its own (the run of median pages/s may differ).
        let mut cpu: Vec<f64> = runs.iter().map(cpu_per_page).collect();
        cpu.sort_by(f64::total_cmp);
        cpus.push((*label, cpu[cpu.len() / 2]));
    }
    let find =
        |list: &[(&str, f64)], label: &str| list.iter().find(|(l, _)| *l == label).map(|p| p.1);
    for peer in ["spider", "spider-mi"] {
        for ours in ["ours", "ours-sys"] {
            if let (Some(a), Some(b), Some(ca), Some(cb)) = (
                find(&rates, ours),
                find(&rates, peer),
                find(&cpus, ours),
                find(&cpus, peer),
            ) {
                println!(
                    "{ours} (with extraction, dedup and output) / {peer} (fetch and links): {:.2}x pages/s, {:.2}x CPU a page (medians; {ca:.0} us against {cb:.0} us)",
                    a / b,
                    ca / cb
                );
            }
        }
    }
    drop(server);
}
