//! The fetcher against the fixture site: redirects, loops, caps, timeouts, the SSRF guard.

use std::time::{Duration, Instant};

use crawldedup::crawl::{FetchConfig, FetchError, Fetcher};
use crawldedup::fixture::{Site, serve};
use url::Url;

fn config(allow_private_ips: bool) -> FetchConfig {
    FetchConfig::from_crawl(&crawldedup::Config::default().crawl)
        .with_timeouts(Duration::from_secs(2), Duration::from_millis(1500))
        .with_max_body_bytes(10 * 1024 * 1024)
        .with_user_agent("crawldedup-test/1.0 (+https://example.invalid/bot)")
        .with_allow_private_ips(allow_private_ips)
}

fn any_hop(url: &Url) -> Result<Url, String> {
    Ok(url.clone())
}

#[tokio::test]
async fn pages_redirects_and_statuses() {
    let server = serve(Site::new(3, 2)).await.unwrap();
    let fetcher = Fetcher::new(config(true)).unwrap();
    let url = |p: &str| Url::parse(&server.url(p)).unwrap();

    let page = fetcher
        .fetch(&url("/topic/sailing/1.html"), any_hop)
        .await
        .unwrap();
    assert_eq!(page.status, 200);
    assert_eq!(
        page.content_type.as_deref(),
        Some("text/html; charset=utf-8")
    );
    assert!(page.redirects.is_empty());
    assert!(String::from_utf8_lossy(&page.body).contains("<article>"));

    let moved = fetcher
        .fetch(&url("/old/sailing/1"), any_hop)
        .await
        .unwrap();
    assert_eq!(moved.url, url("/topic/sailing/1.html"));
    assert_eq!(moved.redirects, vec![(url("/old/sailing/1"), 301)]);

    let chain = fetcher.fetch(&url("/chain/3"), any_hop).await.unwrap();
    assert_eq!(chain.url, url("/"));
    assert_eq!(chain.redirects.len(), 4);

    assert!(matches!(
        fetcher.fetch(&url("/chain/9"), any_hop).await,
        Err(FetchError::TooManyRedirects { .. })
    ));
    assert!(matches!(
        fetcher.fetch(&url("/loop/a"), any_hop).await,
        Err(FetchError::RedirectLoop { .. })
    ));

    let busy = fetcher.fetch(&url("/busy"), any_hop).await.unwrap();
    assert_eq!(busy.status, 503);
    assert_eq!(busy.retry_after, Some(Duration::from_secs(1)));
    assert_eq!(
        fetcher
            .fetch(&url("/missing"), any_hop)
            .await
            .unwrap()
            .status,
        404
    );

    // The caller's hop check refuses a redirect target.
    let refused = fetcher
        .fetch(&url("/old/sailing/1"), |u: &Url| {
            Err(format!("{} is out of scope", u.path()))
        })
        .await;
    match refused {
        Err(FetchError::Refused { reason, .. }) => assert!(reason.contains("out of scope")),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn oversized_bodies_and_bombs_stop_at_the_cap() {
    let server = serve(Site::new(3, 1)).await.unwrap();
    let fetcher = Fetcher::new(config(true)).unwrap();
    for path in ["/big", "/bomb"] {
        let start = Instant::now();
        let result = fetcher
            .fetch(&Url::parse(&server.url(path)).unwrap(), any_hop)
            .await;
        assert!(
            matches!(result, Err(FetchError::TooLarge { limit, .. }) if limit == 10 * 1024 * 1024),
            "{path}: {result:?}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{path} took {:?}",
            start.elapsed()
        );
    }
}

#[tokio::test]
async fn a_page_that_never_ends_times_out() {
    let server = serve(Site::new(3, 1)).await.unwrap();
    let fetcher = Fetcher::new(config(true)).unwrap();
    let result = fetcher
        .fetch(&Url::parse(&server.url("/slow")).unwrap(), any_hop)
        .await;
    let error = result.unwrap_err();
    assert_eq!(error.kind(), "timeout", "{error}");
    assert!(error.is_retryable());
}

#[tokio::test]
async fn the_ssrf_guard_refuses_loopback_by_literal_and_by_name() {
    let server = serve(Site::new(3, 1)).await.unwrap();
    let fetcher = Fetcher::new(config(false)).unwrap();
    let literal = Url::parse(&server.url("/")).unwrap();
    match fetcher.fetch(&literal, any_hop).await {
        Err(FetchError::Refused { reason, .. }) => assert!(reason.contains("loopback"), "{reason}"),
        other => panic!("{other:?}"),
    }
    let by_name = Url::parse(&format!("http://localhost:{}/", server.addr().port())).unwrap();
    match fetcher.fetch(&by_name, any_hop).await {
        Err(FetchError::Refused { reason, .. }) => assert!(reason.contains("loopback"), "{reason}"),
        other => panic!("{other:?}"),
    }
    // A redirect hop into a private address is refused too.
    let open = Fetcher::new(config(true)).unwrap();
    let hop_guard = |u: &Url| -> Result<Url, String> {
        match u.host() {
            Some(url::Host::Domain("example.com")) => Ok(u.clone()),
            _ => Err(format!("{} is not allowed", u.host_str().unwrap_or(""))),
        }
    };
    let result = open
        .fetch(
            &Url::parse(&server.url("/old/sailing/0")).unwrap(),
            hop_guard,
        )
        .await;
    assert!(
        matches!(result, Err(FetchError::Refused { .. })),
        "{result:?}"
    );
    assert!(
        server.requests().len() <= 1,
        "no request reached the server beyond the first: {:?}",
        server.requests()
    );
}
