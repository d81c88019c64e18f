//! The fixture site over real HTTP on loopback: every path answers as documented, and its
//! duplicates are what the page stage says they are.

use std::time::Duration;

use crawldedup::fixture::{BOMB_BYTES, Site, TOPICS, serve};
use crawldedup::{Config, Dedup, Fingerprint, PageVerdict};

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_gzip()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

async fn get(url: &str) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    let response = client().get(url).send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.bytes().await.unwrap().to_vec();
    (status, headers, body)
}

#[tokio::test]
async fn paths_answer_over_http_as_documented() {
    let server = serve(Site::new(11, 3)).await.unwrap();
    assert!(server.addr().ip().is_loopback());

    let (status, _, body) = get(&server.url("/")).await;
    assert_eq!(status, 200);
    let home = String::from_utf8(body).unwrap();
    for topic in TOPICS {
        assert!(home.contains(&format!("/topic/{topic}/")));
    }

    let (_, _, robots) = get(&server.url("/robots.txt")).await;
    assert!(
        String::from_utf8(robots)
            .unwrap()
            .contains("Disallow: /private/")
    );

    let (status, headers, _) = get(&server.url("/old/cycling/1")).await;
    assert_eq!(status, 301);
    assert_eq!(headers["location"], "/topic/cycling/1.html");
    let (status, headers, _) = get(&server.url("/loop/b")).await;
    assert_eq!(
        (status, headers["location"].to_str().unwrap()),
        (302, "/loop/a")
    );

    assert_eq!(get(&server.url("/missing")).await.0, 404);
    assert_eq!(get(&server.url("/broken")).await.0, 500);
    let (status, headers, _) = get(&server.url("/busy")).await;
    assert_eq!(
        (status, headers["retry-after"].to_str().unwrap()),
        (503, "1")
    );

    let (_, headers, bomb) = get(&server.url("/bomb")).await;
    assert_eq!(headers["content-encoding"], "gzip");
    assert!(
        bomb.len() < BOMB_BYTES / 100,
        "{} bytes on the wire",
        bomb.len()
    );

    let (_, headers, binary) = get(&server.url("/binary.html")).await;
    assert_eq!(headers["content-type"], "text/html");
    assert_eq!(&binary[1..4], b"PNG");

    assert!(server.requests().contains(&"/old/cycling/1".to_string()));
    server.shutdown().await;
}

#[tokio::test]
async fn legacy_charsets_decode_to_their_text() {
    let server = serve(Site::new(11, 1)).await.unwrap();
    for (path, needle) in [
        ("/intl/latin1", "marché du quartier"),
        ("/intl/gbk", "城市公园每天早上六点开放"),
        ("/intl/sjis", "市立図書館は毎朝九時に開館します"),
    ] {
        let (_, headers, body) = get(&server.url(path)).await;
        let content_type = headers["content-type"].to_str().unwrap().to_string();
        let page = crawldedup::content::extract_bytes(&body, Some(&content_type), None);
        assert!(page.text.contains(needle), "{path}: {}", page.text);
    }
}

#[tokio::test]
async fn the_slow_page_never_finishes() {
    let server = serve(Site::new(11, 1)).await.unwrap();
    let mut response = client().get(server.url("/slow")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let first = response.chunk().await.unwrap().unwrap();
    assert!(first.starts_with(b"<html>"));
    let rest = tokio::time::timeout(Duration::from_millis(300), response.chunk()).await;
    assert!(rest.is_err(), "the rest of /slow arrived");
}

#[tokio::test]
async fn duplicates_on_the_site_are_what_the_page_stage_says() {
    let site = Site::new(11, 3);
    let server = serve(site.clone()).await.unwrap();
    let state = tempfile::tempdir().unwrap();
    let dedup = Dedup::open(state.path(), &Config::default()).unwrap();
    for article in site.articles() {
        let topic = TOPICS[article.topic];
        let i = article.index;
        let mut verdicts = Vec::new();
        for path in [
            article.path(),
            format!("/mirror/{topic}/{i}"),
            format!("/print/{topic}/{i}"),
            format!("/discuss/{topic}/{i}"),
        ] {
            let url = server.url(&path);
            let (_, _, body) = get(&url).await;
            verdicts.push(dedup.check_page(&url, &body, Some("text/html")).unwrap());
        }
        assert!(
            matches!(verdicts[0], PageVerdict::Unique { .. }),
            "{:?}",
            verdicts[0]
        );
        for copy in &verdicts[1..3] {
            match copy {
                PageVerdict::ExactDuplicate { of } => {
                    assert_eq!(of.name, server.url(&article.path()))
                }
                other => panic!("{} copy: {other:?}", article.path()),
            }
        }
        match &verdicts[3] {
            PageVerdict::NearDuplicate { of, similarity, .. } => {
                assert_eq!(of.name, server.url(&article.path()));
                assert!(similarity.resemblance >= 0.5 || similarity.containment >= 0.9);
            }
            other => panic!("{} discussion: {other:?}", article.path()),
        }
    }
    // Different articles are far apart.
    let texts: Vec<String> = site
        .articles()
        .iter()
        .map(|a| a.paragraphs.join("\n\n"))
        .collect();
    for (i, a) in texts.iter().enumerate() {
        for b in &texts[i + 1..] {
            let d = Fingerprint::of(a)
                .simhash
                .distance(Fingerprint::of(b).simhash);
            assert!(d > 6, "two articles {d} bits apart");
        }
    }
}
