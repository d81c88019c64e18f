//! A crawler embedded as a library: its page sinks get exactly what its files get, across an
//! abort and the run that resumes it.

use super::*;

/// An embedded crawler's sink that keeps what it is given in memory, with positions: its
/// position is how many pages it holds, and resuming cuts it back to that many.
struct Recorder {
    pages: Arc<Mutex<Vec<(String, String)>>>,
    duplicates: Arc<Mutex<Vec<(String, String)>>>,
    failures: Arc<Mutex<Vec<String>>>,
}

impl crawldedup::store::PageSink for Recorder {
    fn page(
        &mut self,
        page: &crawldedup::store::StoredPage,
    ) -> Result<(), crawldedup::store::SinkError> {
        let text = page.text.to_string();
        self.pages
            .lock()
            .unwrap()
            .push((page.final_url.to_string(), text));
        Ok(())
    }

    fn duplicate(
        &mut self,
        duplicate: &crawldedup::store::DuplicatePage,
    ) -> Result<(), crawldedup::store::SinkError> {
        self.duplicates
            .lock()
            .unwrap()
            .push((duplicate.final_url.to_string(), duplicate.of.clone()));
        Ok(())
    }

    fn failure(
        &mut self,
        failure: &crawldedup::store::FailedPage,
    ) -> Result<(), crawldedup::store::SinkError> {
        self.failures.lock().unwrap().push(failure.url.to_string());
        Ok(())
    }

    fn checkpoint(
        &mut self,
    ) -> Result<crawldedup::store::SinkPosition, crawldedup::store::SinkError> {
        Ok(crawldedup::store::SinkPosition(vec![
            self.pages.lock().unwrap().len() as u64,
            self.duplicates.lock().unwrap().len() as u64,
            self.failures.lock().unwrap().len() as u64,
        ]))
    }

    fn resume(
        &mut self,
        at: Option<&crawldedup::store::SinkPosition>,
    ) -> Result<(), crawldedup::store::SinkError> {
        let at = at.map_or(vec![0; 3], |p| p.0.clone());
        self.pages.lock().unwrap().truncate(at[0] as usize);
        self.duplicates.lock().unwrap().truncate(at[1] as usize);
        self.failures.lock().unwrap().truncate(at[2] as usize);
        Ok(())
    }
}

/// pages.jsonl as (final_url, text), in order.
fn page_lines(out: &Path) -> Vec<(String, String)> {
    lines(&out.join("pages.jsonl"))
        .iter()
        .map(|v| {
            (
                v["final_url"].as_str().unwrap().to_string(),
                v["text"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn an_embedded_crawler_hands_its_sinks_exactly_what_its_files_get_across_an_abort() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(serve(Site::new(9, 2))).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (state, out) = (dir.path().join("state"), dir.path().join("out"));
    let mut config = crawl_config(&state, &out, server.url("/"));
    config.crawl.per_host_delay_ms = 20;
    let pages = Arc::new(Mutex::new(Vec::new()));
    let duplicates = Arc::new(Mutex::new(Vec::new()));
    let failures = Arc::new(Mutex::new(Vec::new()));
    let closure_pages = Arc::new(Mutex::new(Vec::new()));
    let crawler = || {
        let (seen, recorder) = (
            closure_pages.clone(),
            Recorder {
                pages: pages.clone(),
                duplicates: duplicates.clone(),
                failures: failures.clone(),
            },
        );
        crawldedup::Crawler::builder(&config)
            .checkpoint_every(std::time::Duration::from_millis(100))
            .sink(recorder)
            .sink(crawldedup::store::from_fn(
                move |page: &crawldedup::StoredPage| {
                    seen.lock().unwrap().push(page.final_url.to_string());
                    Ok(())
                },
            ))
    };
    // Given up halfway (the future dropped: a kill, as far as the crawl can tell), then
    // resumed to the end.
    let given_up = runtime.block_on(async {
        tokio::time::timeout(
            std::time::Duration::from_millis(400),
            crawler().run(std::future::pending()),
        )
        .await
    });
    assert!(given_up.is_err(), "the crawl finished before the timeout");
    let summary = runtime
        .block_on(crawler().run(std::future::pending()))
        .unwrap();
    assert!(!summary.stopped_early);

    // The sink that keeps positions holds exactly pages.jsonl, in order, once each.
    let files = page_lines(&out);
    assert!(files.len() > 20, "{} pages", files.len());
    assert_eq!(*pages.lock().unwrap(), files);
    let duplicate_lines: Vec<(String, String)> = lines(&out.join("duplicates.jsonl"))
        .iter()
        .map(|v| {
            (
                v["final_url"].as_str().unwrap().to_string(),
                v["of"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(!duplicate_lines.is_empty());
    assert_eq!(*duplicates.lock().unwrap(), duplicate_lines);
    let failure_lines: Vec<String> = lines(&out.join("failures.jsonl"))
        .iter()
        .map(|v| v["url"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(*failures.lock().unwrap(), failure_lines);

    // The closure keeps no position: it got every page at least once, and the pages after
    // the checkpoint before the abort twice.
    let closure = closure_pages.lock().unwrap().clone();
    let mut once = closure.clone();
    once.sort();
    once.dedup();
    let mut expected: Vec<String> = files.iter().map(|(url, _)| url.clone()).collect();
    expected.sort();
    assert_eq!(once, expected);
    assert!(closure.len() >= files.len());
}
