//! The sidecar's routes: the OpenAPI file, URL and page checks, bad requests, the bearer
//! token, and pages posted at once.

use super::*;

#[tokio::test]
async fn openapi_file_describes_exactly_the_routes_and_their_answers() {
    let spec: Value = serde_json::from_str(OPENAPI).expect("openapi.json is JSON");
    let mut documented = BTreeSet::new();
    for (path, operations) in spec["paths"].as_object().unwrap() {
        for method in operations.as_object().unwrap().keys() {
            documented.insert(format!("{} {path}", method.to_uppercase()));
        }
    }
    assert_eq!(
        documented,
        routes_in_source(),
        "openapi.json and the router disagree"
    );
    assert!(documented.len() >= 6);

    let sidecar = Sidecar::start(ServeOptions::default()).await;
    let resolve = |schema: &Value| -> Value {
        match schema["$ref"].as_str() {
            Some(r) => {
                let name = r.rsplit('/').next().unwrap();
                spec["components"]["schemas"][name].clone()
            }
            None => schema.clone(),
        }
    };
    for (path, operations) in spec["paths"].as_object().unwrap() {
        for (method, operation) in operations.as_object().unwrap() {
            let content = operation["responses"]["200"]["content"]
                .as_object()
                .unwrap();
            if !content.contains_key("application/json") {
                // Text (/metrics): answered in the first type it names by default.
                let response = sidecar
                    .client
                    .get(format!("{}{path}", sidecar.base))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(response.status().as_u16(), 200, "{method} {path}");
                let media = response.headers()["content-type"].to_str().unwrap();
                let first = content.keys().next().unwrap();
                assert!(
                    media.starts_with(first.as_str()),
                    "{method} {path}: {media}"
                );
                continue;
            }
            let example = &operation["requestBody"]["content"]["application/json"]["example"];
            let body = (!example.is_null()).then_some(example);
            let (status, got) = sidecar.call(&method.to_uppercase(), path, body).await;
            assert_eq!(status, 200, "{method} {path}: {got}");
            let schema =
                resolve(&operation["responses"]["200"]["content"]["application/json"]["schema"]);
            for field in schema["required"].as_array().unwrap() {
                let field = field.as_str().unwrap();
                assert!(
                    got.get(field).is_some(),
                    "{method} {path}: `{field}` missing in {got}"
                );
            }
            for (field, _) in got.as_object().unwrap() {
                if let Some(props) = schema["properties"].as_object() {
                    assert!(
                        props.contains_key(field),
                        "{method} {path}: `{field}` is not documented"
                    );
                }
            }
            // Every result of a URL check follows its schema too.
            if let Some(results) = got["results"].as_array() {
                let item = resolve(&schema["properties"]["results"]["items"]);
                for result in results {
                    for field in item["required"].as_array().unwrap() {
                        assert!(result.get(field.as_str().unwrap()).is_some(), "{result}");
                    }
                }
            }
            // Other methods on a documented path are refused with a JSON 405.
            let other = if method == "get" { "DELETE" } else { "GET" };
            let (status, got) = sidecar.call(other, path, None).await;
            assert_eq!(status, 405, "{other} {path}: {got}");
            assert!(got["error"].is_string());
        }
    }
    sidecar.stop().await;
}

#[tokio::test]
async fn url_check_canonicalizes_and_records_in_one_step() {
    let sidecar = Sidecar::start(ServeOptions::default()).await;
    let (status, got) = sidecar
        .call(
            "POST",
            "/v1/urls/check",
            Some(&json!({"urls": [
                "https://Example.com/a?utm_source=feed#top",
                "https://example.com/a",
                "javascript:alert(1)",
                "https://example.com/b",
            ]})),
        )
        .await;
    assert_eq!(status, 200);
    let results = got["results"].as_array().unwrap();
    let verdicts: Vec<_> = results
        .iter()
        .map(|r| r["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["new", "seen", "invalid", "new"]);
    assert_eq!(
        results[0]["url"],
        "https://Example.com/a?utm_source=feed#top"
    );
    assert_eq!(results[0]["canonical"], "https://example.com/a");
    assert!(results[2]["canonical"].is_null());
    assert!(results[2]["error"].as_str().unwrap().contains("scheme"));

    // Recorded: the same URLs in a later request are seen.
    let (_, again) = sidecar
        .call(
            "POST",
            "/v1/urls/check",
            Some(&json!({"urls": ["https://example.com/b"]})),
        )
        .await;
    assert_eq!(again["results"][0]["verdict"], "seen");
    let (_, stats) = sidecar.call("GET", "/v1/stats", None).await;
    assert_eq!(stats["urls_checked"], 5);
    assert_eq!(stats["urls_new"], 2);
    assert_eq!(stats["urls_invalid"], 1);
    // An index this small has no snapshot, in the background or otherwise.
    assert_eq!(stats["snapshots_written"], 0);
    assert!(stats.get("snapshot_documents").is_none(), "{stats}");
    sidecar.stop().await;
}

#[tokio::test]
async fn page_check_gives_the_verdicts_of_dedup_json() {
    let site = Site::new(11, 3);
    let article = site.articles()[0].path();
    let topic = crawldedup::fixture::TOPICS[0];
    let sidecar = Sidecar::start(ServeOptions::default()).await;
    let check = |url: String, body: String| {
        let sidecar = &sidecar;
        async move {
            let (status, got) = sidecar
                .call("POST", "/v1/pages/check", Some(&page_request(&url, &body)))
                .await;
            assert_eq!(status, 200, "{got}");
            got
        }
    };
    let original = format!("http://site.test{article}");
    let got = check(original.clone(), page(&site, &article)).await;
    assert_eq!(got["verdict"], "unique");
    assert_eq!(got["url"], original.as_str());
    assert_eq!(got["simhash"].as_str().unwrap().len(), 16);
    assert_eq!(got["digest"].as_str().unwrap().len(), 32);

    let mirror = format!("/mirror/{topic}/0");
    let got = check(format!("http://other.test{mirror}"), page(&site, &mirror)).await;
    assert_eq!(got["verdict"], "exact_duplicate", "{got}");
    assert_eq!(got["of"], original.as_str());
    assert_eq!(got["distance"], 0);

    let discuss = format!("/discuss/{topic}/0");
    let got = check(format!("http://site.test{discuss}"), page(&site, &discuss)).await;
    assert_eq!(got["verdict"], "near_duplicate", "{got}");
    assert_eq!(got["of"], original.as_str());
    assert!(got["distance"].as_u64().is_some(), "{got}");
    // The estimates the match was confirmed on.
    assert!(got["similarity"].as_f64().unwrap() >= 0.5, "{got}");
    assert!(got["containment"].as_f64().unwrap() >= 0.5, "{got}");

    // Raw bytes in another charset, as base64.
    let latin1: Vec<u8> = b"<html><body><p>Caf\xe9 cr\xe8me br\xfbl\xe9e: the recipe asks for six egg yolks, cream, sugar and a vanilla pod, baked slowly in a water bath and caramelised under a hot grill just before serving.</p></body></html>".to_vec();
    let (status, got) = sidecar
        .call(
            "POST",
            "/v1/pages/check",
            Some(&json!({
                "url": "http://site.test/latin1",
                "content_type": "text/html; charset=windows-1252",
                "body_base64": data_encoding::BASE64.encode(&latin1),
                "include_text": true,
            })),
        )
        .await;
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["verdict"], "unique");
    assert!(
        got["text"]
            .as_str()
            .unwrap()
            .starts_with("Café crème brûlée"),
        "{got}"
    );

    // Main text extracted by the client, and a body that is not HTML.
    let (_, got) = sidecar
        .call(
            "POST",
            "/v1/pages/check",
            Some(&json!({"url": "http://site.test/doc-1", "text": "Café crème brûlée: the recipe asks for six egg yolks, cream, sugar and a vanilla pod, baked slowly in a water bath and caramelised under a hot grill just before serving."})),
        )
        .await;
    assert_eq!(got["verdict"], "exact_duplicate", "{got}");
    assert_eq!(got["of"], "http://site.test/latin1");
    let (_, got) = sidecar
        .call(
            "POST",
            "/v1/pages/check",
            Some(&json!({"url": "http://site.test/a.pdf", "content_type": "application/pdf", "body": "%PDF-1.7"})),
        )
        .await;
    assert_eq!(got["verdict"], "no_text");

    let (_, stats) = sidecar.call("GET", "/v1/stats", None).await;
    assert_eq!(stats["pages_checked"], 6);
    assert_eq!(stats["pages_unique"], 2);
    assert_eq!(stats["indexed_documents"], 2);
    sidecar.stop().await;
}

#[tokio::test]
async fn bad_requests_get_a_json_4xx_naming_the_problem() {
    let sidecar = Sidecar::start(ServeOptions {
        max_request_bytes: 64 * 1024,
        max_urls: 100,
        ..ServeOptions::default()
    })
    .await;
    let raw = |path: &str, body: &'static str| {
        sidecar
            .client
            .post(format!("{}{path}", sidecar.base))
            .header("content-type", "application/json")
            .body(body)
    };
    let cases: Vec<(reqwest::RequestBuilder, u16, &str)> = vec![
        (
            raw("/v1/urls/check", "{\"urls\": [1, 2"),
            400,
            "invalid JSON",
        ),
        (
            raw("/v1/urls/check", "{\"urls\": [\"a\", 7]}"),
            400,
            "urls[1]",
        ),
        (raw("/v1/urls/check", "{\"url\": []}"), 400, "unknown field"),
        (
            raw("/v1/pages/check", "{\"body\": \"<p>x</p>\"}"),
            400,
            "missing field `url`",
        ),
        (
            raw(
                "/v1/pages/check",
                "{\"url\": \"http://site.test/u\", \"body\": \"x\", \"text\": \"y\"}",
            ),
            400,
            "exactly one of",
        ),
        (
            raw("/v1/pages/check", "{\"url\": \"http://site.test/u\"}"),
            400,
            "exactly one of",
        ),
        (
            raw("/v1/pages/check", "{\"url\": \" \", \"text\": \"y\"}"),
            400,
            "url",
        ),
        (
            raw(
                "/v1/pages/check",
                "{\"url\": \"http://site.test/u\", \"body_base64\": \"%%%\"}",
            ),
            400,
            "body_base64",
        ),
        (
            raw(
                "/v1/pages/check",
                "{\"url\": \"::not a url::\", \"text\": \"y\"}",
            ),
            400,
            "url: `::not a url::`",
        ),
        (
            raw(
                "/v1/pages/check",
                "{\"url\": \"mailto:a@b.test\", \"text\": \"y\"}",
            ),
            400,
            "unsupported scheme",
        ),
        (raw("/v1/nothing", "{}"), 404, "no route"),
        // What a client sent, in the API's words: never a Rust type or a `?` for a place.
        (
            raw("/v1/pages/check", "[\"http://site.test/u\"]"),
            400,
            "must be a JSON object",
        ),
        (raw("/v1/urls/check", "\"x\""), 400, "must be a JSON object"),
        (
            raw(
                "/v1/pages/check",
                "{\"url\": \"http://site.test/u\", \"text\": 7}",
            ),
            400,
            "text",
        ),
        (raw("/v1/urls/check", "{\"urls\": {\"a\": 1}}"), 400, "urls"),
    ];
    for (request, want, words) in cases {
        let (status, got) = answer(request).await;
        assert_eq!(status, want, "{got}");
        let error = got["error"].as_str().unwrap();
        assert!(error.contains(words), "`{error}` should mention `{words}`");
        assert!(!error.contains('\n'), "one line: {error}");
        for internal in ["struct ", "Request", " at ?", "enum "] {
            assert!(!error.contains(internal), "`{error}` leaks `{internal}`");
        }
    }
    // Over the byte limit, and over the URL count.
    let big = json!({"url": "http://site.test/u", "body": "x".repeat(100 * 1024)});
    let (status, got) = sidecar.call("POST", "/v1/pages/check", Some(&big)).await;
    assert_eq!(status, 413, "{got}");
    let many = json!({"urls": vec!["http://a.test/"; 101]});
    let (status, got) = sidecar.call("POST", "/v1/urls/check", Some(&many)).await;
    assert_eq!(status, 413, "{got}");
    assert!(got["error"].as_str().unwrap().contains("at most 100"));
    // Nothing was recorded by the refused requests.
    let (_, stats) = sidecar.call("GET", "/v1/stats", None).await;
    assert_eq!(stats["urls_checked"], 0);
    assert_eq!(stats["pages_checked"], 0);
    sidecar.stop().await;
}

#[tokio::test]
async fn bearer_token_guards_every_route_but_healthz() {
    let sidecar = Sidecar::start(ServeOptions {
        token: Some("s3cret-token".into()),
        ..ServeOptions::default()
    })
    .await;
    let urls = json!({"urls": ["http://a.test/"]});
    let (status, got) = sidecar.call("POST", "/v1/urls/check", Some(&urls)).await;
    assert_eq!(status, 401, "{got}");
    assert!(got["error"].as_str().unwrap().contains("token"));
    for token in ["wrong", "s3cret-toke", "s3cret-token2"] {
        let request = sidecar
            .client
            .get(format!("{}/v1/stats", sidecar.base))
            .bearer_auth(token);
        assert_eq!(answer(request).await.0, 401, "{token}");
    }
    let request = sidecar
        .client
        .post(format!("{}/v1/urls/check", sidecar.base))
        .bearer_auth("s3cret-token")
        .json(&urls);
    let (status, got) = answer(request).await;
    assert_eq!(status, 200);
    assert_eq!(got["results"][0]["verdict"], "new");
    let (status, _) = sidecar.call("GET", "/healthz", None).await;
    assert_eq!(status, 200);
    // The metrics too: they name the pages checked.
    let metrics = format!("{}/metrics", sidecar.base);
    let no_token = sidecar.client.get(&metrics).send().await.unwrap();
    assert_eq!(no_token.status().as_u16(), 401);
    let scrape = sidecar
        .client
        .get(&metrics)
        .bearer_auth("s3cret-token")
        .send()
        .await
        .unwrap();
    assert_eq!(scrape.status().as_u16(), 200);
    let body = scrape.text().await.unwrap();
    assert!(
        body.contains("crawldedup_urls_checked_total{verdict=\"new\"} 1\n"),
        "{body}"
    );
    sidecar.stop().await;
}

#[tokio::test]
async fn metrics_count_the_page_checks_as_the_stats_route_does() {
    let sidecar = Sidecar::start(ServeOptions::default()).await;
    let site = Site::new(3, 1);
    let article = page(&site, "/topic/astronomy/0.html");
    for url in ["/topic/astronomy/0.html", "/mirror/astronomy/0"] {
        let (status, got) = sidecar
            .call(
                "POST",
                "/v1/pages/check",
                Some(&page_request(url, &article)),
            )
            .await;
        assert_eq!(status, 200, "{got}");
    }
    let (_, stats) = sidecar.call("GET", "/v1/stats", None).await;
    let body = sidecar
        .client
        .get(format!("{}/metrics", sidecar.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for (metric, field) in [
        ("crawldedup_pages_total{verdict=\"unique\"}", "pages_unique"),
        (
            "crawldedup_pages_total{verdict=\"exact_duplicate\"}",
            "pages_exact_duplicate",
        ),
        ("crawldedup_index_documents", "indexed_documents"),
    ] {
        let line = body
            .lines()
            .find(|l| l.starts_with(&format!("{metric} ")))
            .unwrap_or_else(|| panic!("no {metric} in {body}"));
        let value: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
        assert_eq!(value, stats[field].as_f64().unwrap(), "{metric}");
    }
    assert!(
        body.contains("crawldedup_page_check_duration_seconds_count 2\n"),
        "{body}"
    );
    assert_eq!(stats["pages_exact_duplicate"], 1);
    sidecar.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn identical_pages_posted_at_once_yield_exactly_one_unique() {
    let site = Site::new(5, 4);
    let sidecar = Arc::new(Sidecar::start(ServeOptions::default()).await);
    const CLIENTS: usize = 8;
    for article in site.articles().iter().take(10) {
        let body = page(&site, &article.path());
        let barrier = Arc::new(tokio::sync::Barrier::new(CLIENTS));
        let mut tasks = Vec::new();
        for client in 0..CLIENTS {
            let sidecar = sidecar.clone();
            let barrier = barrier.clone();
            let request = page_request(&format!("http://c{client}.test{}", article.path()), &body);
            tasks.push(tokio::spawn(async move {
                // A client of its own: its own connection.
                let client = reqwest::Client::new();
                barrier.wait().await;
                let request = client
                    .post(format!("{}/v1/pages/check", sidecar.base))
                    .json(&request);
                answer(request).await.1["verdict"]
                    .as_str()
                    .unwrap()
                    .to_string()
            }));
        }
        let mut verdicts = Vec::new();
        for task in tasks {
            verdicts.push(task.await.unwrap());
        }
        let unique = verdicts.iter().filter(|v| *v == "unique").count();
        assert_eq!(unique, 1, "{}: {verdicts:?}", article.path());
        assert_eq!(
            verdicts.iter().filter(|v| *v == "exact_duplicate").count(),
            CLIENTS - 1
        );
    }
    let Ok(sidecar) = Arc::try_unwrap(sidecar) else {
        panic!("the sidecar is still shared");
    };
    sidecar.stop().await;
}
