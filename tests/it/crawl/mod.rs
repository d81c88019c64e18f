//! Crawls of the fixture site on loopback, with exact expectations.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use crawldedup::Config;
use crawldedup::fixture::{Site, TOPICS, serve};

use crate::archive_checks::{check_with_warcio, warc_records, warcio_report};
use crate::common::{crawl_config, stored_urls};
use crate::warc;
use warc::lines;

mod cjk;
mod embedded;
mod hosts;
mod keepalive;
mod reach;
mod resume;
mod site;

/// Every URL of the WARC files, as warcio reads them, is served (by its own response, or
/// by the response an identical-payload revisit refers to) exactly the bytes the site sent
/// for it, and every duplicate URL is there.
fn check_warc_bytes_are_each_urls_own(
    out: &Path,
    site: &Site,
    server: &crawldedup::fixture::FixtureServer,
    duplicates: usize,
) {
    let Some(report) = warcio_report(out) else {
        return;
    };
    let served = report["served"].as_object().unwrap();
    let revisits = report["counts"]["revisit"].as_u64().unwrap_or(0) as usize;
    assert_eq!(
        report["duplicate_responses"].as_array().unwrap().len() + revisits,
        duplicates,
        "{report}"
    );
    let mut checked = 0;
    for (url, digest) in served {
        let path = &url[server.url("/").len() - 1..];
        let crawldedup::fixture::Reply::Full { headers, body, .. } = site.respond(path) else {
            continue;
        };
        if headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("content-encoding"))
        {
            continue;
        }
        assert_eq!(
            digest.as_str().unwrap(),
            crawldedup::store::warc::sha1_digest(&body),
            "{url}: the WARC serves other bytes than its own"
        );
        checked += 1;
    }
    assert!(
        checked * 10 >= served.len() * 9,
        "{checked} of {}",
        served.len()
    );
    check_replay_with_pywb(
        &out.join("warc"),
        site,
        server,
        served.keys().cloned().collect(),
    );
}

/// pywb, given the WARC files in `dir` and the CDXJ indexes beside them, replays each of
/// `urls` with the bytes the site served for it (a revisit's with its original's), when CI
/// names a Python that has pywb.
pub(crate) fn check_replay_with_pywb(
    dir: &Path,
    site: &Site,
    server: &crawldedup::fixture::FixtureServer,
    urls: Vec<String>,
) {
    let Some(replayed) = warc::replay_with_pywb(dir, &urls) else {
        return;
    };
    let mut checked = 0;
    for url in &urls {
        let path = &url[server.url("/").len() - 1..];
        let crawldedup::fixture::Reply::Full {
            status,
            headers,
            body,
        } = site.respond(path)
        else {
            continue;
        };
        // The archive holds a body as it was decoded, not as it was sent.
        if headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("content-encoding"))
        {
            continue;
        }
        let (replayed_status, digest) = &replayed[url];
        assert_eq!(
            *replayed_status, status,
            "{url}: pywb answered {replayed_status}"
        );
        if status == 200 {
            assert_eq!(
                *digest,
                crawldedup::store::warc::sha1_digest(&body),
                "{url}: pywb replays other bytes than the site served"
            );
            checked += 1;
        }
    }
    assert!(
        checked * 10 >= urls.len() * 8,
        "{checked} of {} replayed",
        urls.len()
    );
    eprintln!(
        "pywb replayed {checked} of {} URLs with their bytes",
        urls.len()
    );
}

/// The stored pages (final URLs), sorted, after checking that no line is torn and no page
/// is stored twice.
/// How many times each URL was stored, and each duplicate's record by its URL.
type Outcome<'a> = (
    HashMap<&'a str, usize>,
    HashMap<&'a str, &'a serde_json::Value>,
);

fn outcome<'a>(pages: &'a [serde_json::Value], duplicates: &'a [serde_json::Value]) -> Outcome<'a> {
    let stored = pages.iter().fold(HashMap::new(), |mut m, p| {
        *m.entry(p["final_url"].as_str().unwrap()).or_default() += 1;
        m
    });
    let by_url = duplicates
        .iter()
        .map(|d| (d["url"].as_str().unwrap(), d))
        .collect();
    (stored, by_url)
}

/// A small site of its own for robots.txt cases: `/` links to `/a` and `/go`; `/go`
/// redirects to `redirect_to`; robots.txt answers with `robots(n)` for its n-th request.
async fn tiny_site(
    robots: fn(usize) -> (u16, &'static str),
    redirect_to: Option<String>,
) -> (String, Arc<Mutex<Vec<String>>>) {
    use axum::http::StatusCode;
    use axum::response::{Html, IntoResponse, Redirect};
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let robots_count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let text = "A page of plain text about tides, moorings and the harbour wall, long enough to be \
                a page of its own for the crawler's extractor and its index.";
    let app = axum::Router::new().fallback({
        let log = log.clone();
        move |uri: axum::http::Uri| {
            let log = log.clone();
            let robots_count = robots_count.clone();
            let redirect_to = redirect_to.clone();
            async move {
                let path = uri.path().to_string();
                log.lock().unwrap().push(path.clone());
                match path.as_str() {
                    "/robots.txt" => {
                        let n = robots_count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        let (status, body) = robots(n);
                        (StatusCode::from_u16(status).unwrap(), body).into_response()
                    }
                    "/" => Html(format!(
                        "<html><body><p>{text} Home.</p><a href=/a>a</a> <a href=/go>go</a></body></html>"
                    ))
                    .into_response(),
                    "/a" => Html(format!("<html><body><p>{text} Page a.</p></body></html>"))
                        .into_response(),
                    "/go" => match &redirect_to {
                        Some(to) => Redirect::temporary(to).into_response(),
                        None => StatusCode::NOT_FOUND.into_response(),
                    },
                    _ => StatusCode::NOT_FOUND.into_response(),
                }
            }
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (base, log)
}

async fn crawl_tiny(seed: String, dir: &Path) -> crawldedup::crawl::CrawlSummary {
    let mut config = crawl_config(&dir.join("state"), &dir.join("out"), seed);
    config.crawl.respect_robots = true;
    let options = crawldedup::crawl::CrawlOptions::default()
        .with_robots_retry(std::time::Duration::from_millis(300));
    crawldedup::Crawler::builder(&config)
        .options(&options)
        .run(std::future::pending())
        .await
        .unwrap()
}
