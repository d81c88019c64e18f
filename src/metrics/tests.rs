use super::*;

fn stage(dir: &std::path::Path) -> Arc<Dedup> {
    Arc::new(Dedup::builder().open(dir).unwrap())
}

fn article(words: usize, seed: usize) -> String {
    (0..words)
        .map(|i| format!("word{}x{}", (i * 7 + seed * 13) % 97, i % 11))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn a_bucket_quantile_is_the_bound_of_the_bucket_that_holds_it() {
    let b = Buckets::new(&[1.0, 2.0, 4.0]);
    assert_eq!(b.quantile(0.5), None);
    for v in [0.5, 1.5, 1.5, 3.0, 9.0] {
        b.observe(v);
    }
    assert_eq!(b.count(), 5);
    assert_eq!(b.sum(), 15.5);
    assert_eq!(b.quantile(0.2), Some(1.0));
    assert_eq!(b.quantile(0.5), Some(2.0));
    assert_eq!(b.quantile(0.8), Some(4.0));
    assert_eq!(b.quantile(1.0), Some(f64::INFINITY));
    let q = b.quantiles();
    assert_eq!((q.p50, q.p90, q.p99), (Some(2.0), None, None));
    // A value on a bound is in that bound's bucket (`le`).
    let b = Buckets::new(&[1.0, 2.0]);
    b.observe(1.0);
    assert_eq!(b.buckets(), vec![(1.0, 1), (2.0, 0), (f64::INFINITY, 0)]);
}

#[test]
fn both_formats_name_every_metric_by_prometheus_conventions_and_agree() {
    let dir = tempfile::tempdir().unwrap();
    let dedup = stage(dir.path());
    let (metrics, counts) = Metrics::for_crawl(dedup.clone(), false);
    for i in 0..3 {
        let text = article(200, i);
        let name = format!("https://a.example/{i}");
        let start = std::time::Instant::now();
        let verdict = dedup.check_text(&name, &text).unwrap();
        metrics.decided("a.example", &name, &verdict, start.elapsed());
    }
    let copy = format!("{} one more word", article(200, 0));
    let verdict = dedup.check_text("https://a.example/copy", &copy).unwrap();
    assert!(verdict.duplicate().is_some(), "{verdict:?}");
    metrics.decided(
        "a.example",
        "https://a.example/copy",
        &verdict,
        Duration::from_micros(3),
    );
    counts.fetch("ok");
    counts.fetch("ok");
    metrics.failed("b.example", "http_status");
    counts.fetched_bytes.inc_by(1234);
    metrics.checkpointed();

    let text = metrics.render(false);
    let open = metrics.render(true);
    assert!(open.ends_with("# EOF\n"), "{open}");
    assert!(!text.contains("# EOF"));
    for family in text.lines().filter_map(|l| l.strip_prefix("# TYPE ")) {
        let (name, kind) = family.split_once(' ').unwrap();
        assert!(name.starts_with("crawldedup_"), "{name}");
        if kind == "counter" {
            assert!(name.ends_with("_total"), "{name}");
        }
        if name.contains("duration") || name.contains("timestamp") || name.contains("_age") {
            assert!(name.ends_with("_seconds"), "{name}");
        }
    }
    let sample = |body: &str, name: &str| -> f64 {
        body.lines()
            .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(' ')))
            .unwrap_or_else(|| panic!("no {name} in\n{body}"))
            .parse()
            .unwrap()
    };
    for body in [&text, &open] {
        assert_eq!(
            sample(body, r#"crawldedup_pages_total{verdict="unique"}"#),
            3.0
        );
        assert_eq!(
            sample(body, r#"crawldedup_pages_total{verdict="near_duplicate"}"#),
            1.0
        );
        assert_eq!(
            sample(body, r#"crawldedup_fetches_total{outcome="ok"}"#),
            2.0
        );
        assert_eq!(
            sample(body, r#"crawldedup_failures_total{kind="http_status"}"#),
            1.0
        );
        assert_eq!(sample(body, "crawldedup_fetched_bytes_total"), 1234.0);
        assert_eq!(sample(body, "crawldedup_index_documents"), 3.0);
        assert_eq!(
            sample(body, "crawldedup_decision_duration_seconds_count"),
            4.0
        );
        assert_eq!(
            sample(
                body,
                r#"crawldedup_decision_duration_seconds_bucket{le="+Inf"}"#
            ),
            4.0
        );
        assert_eq!(
            sample(body, "crawldedup_near_duplicate_distance_bits_count"),
            1.0
        );
        assert!(sample(body, "crawldedup_checkpoint_age_seconds") < 60.0);
    }
    // Buckets are cumulative: never fewer in a wider one.
    let mut last = 0.0;
    for line in text
        .lines()
        .filter(|l| l.starts_with("crawldedup_decision_duration_seconds_bucket"))
    {
        let v: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
        assert!(v >= last, "{line}");
        last = v;
    }

    // The status page's figures are the same counts.
    let status = metrics.status_json();
    assert_eq!(status["pages"]["unique"], 3);
    assert_eq!(status["pages"]["near_duplicate"], 1);
    assert_eq!(status["failures"]["http_status"], 1);
    assert_eq!(status["hosts"][0]["host"], "a.example");
    assert_eq!(status["hosts"][0]["duplicates"], 1);
    assert_eq!(
        status["recent_duplicates"][0]["url"],
        "https://a.example/copy"
    );
    let near: u64 = status["distance"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["count"].as_u64().unwrap())
        .sum();
    assert_eq!(near, 1);
    assert_eq!(status["crawl"]["fetched_bytes"], 1234);
}

#[test]
fn a_sidecar_times_its_page_checks_and_has_no_crawl_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = Metrics::for_stage(stage(dir.path()));
    let text = metrics.render(false);
    assert!(
        text.contains("crawldedup_page_check_duration_seconds_count 0"),
        "{text}"
    );
    assert!(!text.contains("crawldedup_fetches_total"), "{text}");
    assert!(!text.contains("crawldedup_decision_duration"), "{text}");
    assert!(
        text.contains("crawldedup_url_filter_false_positive_rate"),
        "{text}"
    );
    // No checkpoint yet: no age to give.
    assert!(!text.contains("checkpoint_age"), "{text}");
    assert!(metrics.status_json()["crawl"].is_null());
}
