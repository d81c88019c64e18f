//! The sidecar (`crawldedup serve`) on loopback: URL checks per second in batches of 100,
//! and page checks per second for typical pages, with 1, 2 and 8 concurrent clients, next
//! to the same work done by calling the library in process (what HTTP and JSON cost), and
//! both again with `Durability::Checkpoint` (what answering only durable verdicts, the
//! default, costs: a sync of the URL journal per batch with a new URL, a flush of the index
//! per unique page, each shared by the clients waiting at that moment).
//!
//! Pages: the first 300 WCXB dev pages (real pages, 280 KB on average) when
//! `../shared/datasets/wcxb-dev` is present, otherwise articles of the generated fixture
//! site. Server and clients share this machine's cores, as a sidecar shares them with its
//! crawler.
//!
//! ```text
//! cargo bench --bench sidecar            # 3 s per measurement
//! cargo bench --bench sidecar -- 1       # 1 s per measurement
//! ```

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crawldedup::adapters::serve::{self, ServeOptions};
use crawldedup::{Config, Dedup};
use serde_json::json;

mod support;

const BATCH: usize = 100;
const CLIENTS: [usize; 3] = [1, 2, 8];

fn pages() -> (String, Vec<Vec<u8>>) {
    let dir = Path::new("../shared/datasets/wcxb-dev/dev/html");
    if let Ok(entries) = std::fs::read_dir(dir) {
        let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        let pages: Vec<_> = paths
            .iter()
            .take(300)
            .filter_map(|p| {
                let gz = std::fs::read(p).ok()?;
                let mut html = Vec::new();
                std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut html)
                    .ok()?;
                Some(html)
            })
            .collect();
        if !pages.is_empty() {
            return ("WCXB dev pages".into(), pages);
        }
    }
    let site = crawldedup::fixture::Site::without_traps(3, 60);
    let pages = site
        .articles()
        .iter()
        .filter_map(|a| match site.respond(&a.path()) {
            crawldedup::fixture::Reply::Full { body, .. } => Some(body),
            _ => None,
        })
        .collect();
    ("fixture articles".into(), pages)
}

fn new_stage() -> (tempfile::TempDir, Arc<Dedup>) {
    new_stage_for(serve::Durability::Answered)
}

/// A stage on a fresh state directory, opened as `crawldedup serve --durability` opens it:
/// with the URL journal for durable answers, without it for durability at checkpoints.
fn new_stage_for(durability: serve::Durability) -> (tempfile::TempDir, Arc<Dedup>) {
    let dir = support::scratch_dir().unwrap();
    let mut config = Config::default();
    config.url_filter.expected_urls = 50_000_000;
    let dedup = match durability {
        serve::Durability::Answered => Dedup::open(dir.path(), &config),
        serve::Durability::Checkpoint => Dedup::builder()
            .config(&config)
            .url_journal(false)
            .open(dir.path()),
    };
    (dir, Arc::new(dedup.unwrap()))
}

/// Runs `clients` tasks for `seconds`, each calling `work(client, i)` in a loop; returns
/// units of work per second (work returns how many units one call did).
async fn drive<F, Fut>(clients: usize, seconds: f64, work: F) -> f64
where
    F: Fn(usize, u64) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = u64> + Send,
{
    let work = Arc::new(work);
    let done = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(seconds);
    let mut tasks = Vec::new();
    for client in 0..clients {
        let (work, done) = (work.clone(), done.clone());
        tasks.push(tokio::spawn(async move {
            let mut i = 0;
            while Instant::now() < deadline {
                done.fetch_add(work(client, i).await, Ordering::Relaxed);
                i += 1;
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    done.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64()
}

/// Posts `body` to the sidecar with this thread's client (one connection pool per worker
/// thread, as separate client processes would have) and reads the whole answer.
async fn post(base: &str, path: &str, body: serde_json::Value) {
    thread_local! {
        static CLIENT: reqwest::Client = reqwest::Client::new();
    }
    let request = CLIENT.with(|c| c.post(format!("{base}{path}")).json(&body));
    let response = request.send().await.unwrap();
    assert!(response.status().is_success());
    let _ = response.bytes().await.unwrap();
}

fn url_batch(client: usize, i: u64) -> Vec<String> {
    (0..BATCH)
        .map(|j| {
            format!("https://site{client}.example/section/{i}/page-{j}.html?utm_source=x&id={j}")
        })
        .collect()
}

/// A sidecar on a fresh state (so that pages are not all duplicates of an earlier
/// measurement's), with no periodic checkpoint: its folder, its stop switch and base URL.
fn start_sidecar(
    runtime: &tokio::runtime::Runtime,
    durability: serve::Durability,
) -> (tempfile::TempDir, tokio::sync::oneshot::Sender<()>, String) {
    let (dir, dedup) = new_stage_for(durability);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let base = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let options = ServeOptions {
            checkpoint_every: None,
            durability,
            ..ServeOptions::default()
        };
        tokio::spawn(serve::serve(dedup, listener, options, async {
            let _ = stopped.await;
        }));
        base
    });
    (dir, stop, base)
}

/// URL checks per second through the sidecar at `base`, in batches of [`BATCH`] new URLs.
async fn drive_urls(base: &str, clients: usize, seconds: f64) -> f64 {
    let base = base.to_string();
    drive(clients, seconds, move |client, i| {
        let base = base.clone();
        async move {
            post(
                &base,
                "/v1/urls/check",
                json!({ "urls": url_batch(client, i) }),
            )
            .await;
            BATCH as u64
        }
    })
    .await
}

/// Page checks per second through the sidecar at `base`.
async fn drive_pages(base: &str, clients: usize, seconds: f64, pages: &Arc<Vec<Vec<u8>>>) -> f64 {
    let base = base.to_string();
    let pages = pages.clone();
    drive(clients, seconds, move |client, i| {
        let base = base.clone();
        let pages = pages.clone();
        async move {
            let page = &pages[(i as usize * CLIENTS[2] + client) % pages.len()];
            let body = json!({
                "url": format!("https://c{client}.example/{i}"),
                "content_type": "text/html",
                "body_base64": data_encoding::BASE64.encode(page),
            });
            post(&base, "/v1/pages/check", body).await;
            1
        }
    })
    .await
}

fn main() {
    let seconds: f64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(3.0);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (source, pages) = pages();
    let pages = Arc::new(pages);
    let mean_kb = pages.iter().map(Vec::len).sum::<usize>() as f64 / pages.len() as f64 / 1e3;
    println!(
        "pages: {} {source}, {mean_kb:.0} KB on average; {seconds} s per measurement; {} cores",
        pages.len(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "{:<8} {:>18} {:>22} {:>18} {:>18} {:>22} {:>18}",
        "clients",
        "URLs/s (sidecar)",
        "(durable at checkpt)",
        "URLs/s (library)",
        "pages/s (sidecar)",
        "(durable at checkpt)",
        "pages/s (library)"
    );
    let mut rows = Vec::new();
    for clients in CLIENTS {
        // Sidecar: a fresh state for each measurement, so that pages are not all
        // duplicates of the previous run's.
        let (_dir, stop, base) = start_sidecar(&runtime, serve::Durability::Answered);
        let sidecar_urls = runtime.block_on(drive_urls(&base, clients, seconds));
        let sidecar_pages = runtime.block_on(drive_pages(&base, clients, seconds, &pages));
        let _ = stop.send(());
        // Again with durability left to the checkpoints: what answering only durable
        // verdicts costs.
        let (_dir, stop, base) = start_sidecar(&runtime, serve::Durability::Checkpoint);
        let lazy_urls = runtime.block_on(drive_urls(&base, clients, seconds));
        let lazy_pages = runtime.block_on(drive_pages(&base, clients, seconds, &pages));
        let _ = stop.send(());

        // The library in process, on the same number of threads.
        let (_dir, dedup) = new_stage();
        let stage = dedup.clone();
        let library_urls = runtime.block_on(drive(clients, seconds, move |client, i| {
            let stage = stage.clone();
            async move {
                tokio::task::spawn_blocking(move || {
                    for url in url_batch(client, i) {
                        stage.check_url(&url).unwrap();
                    }
                })
                .await
                .unwrap();
                BATCH as u64
            }
        }));
        let stage = dedup.clone();
        let page_list = pages.clone();
        let library_pages = runtime.block_on(drive(clients, seconds, move |client, i| {
            let stage = stage.clone();
            let pages = page_list.clone();
            async move {
                tokio::task::spawn_blocking(move || {
                    let page = &pages[(i as usize * CLIENTS[2] + client) % pages.len()];
                    stage
                        .check_page(
                            &format!("https://c{client}.example/{i}"),
                            page,
                            Some("text/html"),
                        )
                        .unwrap();
                })
                .await
                .unwrap();
                1
            }
        }));
        println!(
            "{clients:<8} {sidecar_urls:>18.0} {lazy_urls:>22.0} {library_urls:>18.0} {sidecar_pages:>18.1} {lazy_pages:>22.1} {library_pages:>18.1}"
        );
        rows.push((
            clients,
            sidecar_urls,
            lazy_urls,
            library_urls,
            sidecar_pages,
            lazy_pages,
            library_pages,
        ));
    }
    println!();
    for (clients, su, lazy_u, lu, sp, lazy_p, lp) in rows {
        println!(
            "{clients} client(s): sidecar / library = {:.2}x for URL batches, {:.2}x for pages; durable answers / durable at checkpoints = {:.2}x for URL batches, {:.2}x for pages",
            su / lu,
            sp / lp,
            su / lazy_u,
            sp / lazy_p
        );
    }
}
