//! A server that closes kept-alive connections as requests arrive on them costs no
//! attempts: the request goes again at once on a new connection.

use super::*;
use crawldedup::crawl::{FetchConfig, Fetcher};
use crawldedup::fixture::Reply;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Serves `site` over HTTP/1.1 keep-alive, but answers one request a connection: the next
/// request on it is read and the connection closed, as a server does whose keep-alive
/// timer fires just as a request comes (no `Connection: close` warned of it). Returns the
/// origin.
async fn closing_server(site: Site) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let site = Arc::new(site);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let site = site.clone();
            tokio::spawn(async move {
                let mut stream = BufReader::new(stream);
                for answered in 0.. {
                    let mut path = None;
                    let mut line = String::new();
                    loop {
                        line.clear();
                        if stream.read_line(&mut line).await.unwrap_or(0) == 0 {
                            return;
                        }
                        if line == "\r\n" {
                            break;
                        }
                        if path.is_none() {
                            path = line.split_whitespace().nth(1).map(str::to_string);
                        }
                    }
                    if answered == 1 {
                        return;
                    }
                    let Reply::Full {
                        status,
                        headers,
                        body,
                    } = site.respond(path.as_deref().unwrap_or("/"))
                    else {
                        return;
                    };
                    let mut head =
                        format!("HTTP/1.1 {status} X\r\ncontent-length: {}\r\n", body.len());
                    for (name, value) in headers {
                        head.push_str(&format!("{name}: {value}\r\n"));
                    }
                    head.push_str("\r\n");
                    let stream = stream.get_mut();
                    if stream.write_all(head.as_bytes()).await.is_err()
                        || stream.write_all(&body).await.is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    origin
}

/// One fetch after another from the same host: each would go on the connection the last
/// one left in the pool, which the server closes under it. Every fetch succeeds.
#[tokio::test]
async fn a_fetch_on_a_pooled_connection_the_server_closed_is_sent_again_on_a_new_one() {
    let origin = closing_server(Site::without_traps(43, 1)).await;
    let fetcher = Fetcher::new(
        FetchConfig::from_crawl(&Config::default().crawl).with_allow_private_ips(true),
    )
    .unwrap();
    let url = url::Url::parse(&format!("{origin}/")).unwrap();
    for n in 0..20 {
        let fetched = fetcher
            .fetch(&url, |u| Ok(u.clone()))
            .await
            .unwrap_or_else(|e| panic!("fetch {n}: {e}"));
        assert_eq!(fetched.status, 200);
    }
}

/// A crawl at eight requests at once to the host: no page fails, and none takes a second
/// attempt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_of_a_server_closing_idle_connections_has_no_network_failures() {
    let site = Site::without_traps(47, 8);
    let articles = site.articles().len();
    let origin = closing_server(site).await;
    let dir = tempfile::tempdir().unwrap();
    let (state, out) = (dir.path().join("state"), dir.path().join("out"));
    let mut config = crawl_config(&state, &out, format!("{origin}/"));
    config.crawl.per_host_concurrency = 8;
    config.crawl.concurrency = 8;
    let summary = crawldedup::crawl::crawl(&config, std::future::pending())
        .await
        .unwrap();
    assert_eq!(summary.frontier.pending, 0);
    let failures = lines(&out.join("failures.jsonl"));
    let network: Vec<_> = failures.iter().filter(|f| f["kind"] == "network").collect();
    assert!(network.is_empty(), "{network:#?}");
    assert!(failures.iter().all(|f| f["attempts"] == 1), "{failures:#?}");
    // Every article, the home page and the five topic indexes.
    assert_eq!(stored_urls(&out).len(), articles + 6);
}
