//! The page stage inside a [`spider`] crawl (feature `spider`).
//!
//! spider fetches and follows links but has no hook before a fetch and never stores pages.
//! The adapter works with the two hooks it has:
//!
//! - **The should-crawl callback** (`with_on_should_crawl_callback_closure`) runs after
//!   each fetch, before the page's links join spider's queue. The adapter decides the page
//!   there ([`Dedup::check_page_extracted`]). By default it lets spider follow every page's
//!   links, as `crawldedup crawl` does (a mirror's menu can be the only way to a page);
//!   with [`SpiderStage::follow_links_of`] set to [`FollowLinksOf::Stored`] it answers "do
//!   not follow" for an exact or near duplicate of a page stored in this crawl, taking its
//!   links for the original's. Duplicates of pages stored by an earlier run on the same
//!   state directory are followed either way (spider keeps no frontier across runs, so a
//!   re-crawl must walk through known pages to reach new ones), and never stored.
//! - **The subscription** (`subscribe`) delivers each page; the adapter pairs it with the
//!   verdict taken in the callback and hands both to a [`PageSink`], the same trait the
//!   crawler's outputs implement: a unique page to `page`, a duplicate to `duplicate`, a
//!   page without main text or with an HTTP error to `failure`. The sink gets `resume(None)`
//!   before the crawl (spider keeps nothing across runs) and `checkpoint` after it, once the
//!   stage has checkpointed.
//!
//! spider's broadcast channel drops pages for a receiver that falls behind (`Lagged`). The
//! adapter counts them ([`SpiderReport::lagged`]) and, since the verdict, title and main
//! text of every page were kept when it was decided, still hands each lost page to the sink
//! after the crawl, without its body (an empty `body`). No page spider fetched goes
//! undecided or unreported. A sink's error stops the hand-over (the crawl itself runs to its
//! end) and is returned ([`SpiderError::Sink`]).
//!
//! Decoding, extraction and fingerprinting run inside spider's task for the page (the
//! callback is synchronous); on a multi-threaded runtime the adapter tells tokio so
//! (`block_in_place`), and the other fetches go on.
//!
//! ```no_run
//! use std::sync::Arc;
//! use crawldedup::adapters::spider::SpiderStage;
//! use crawldedup::store::{self, StoredPage};
//! use crawldedup::{Config, Dedup};
//!
//! # #[allow(dead_code)]
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let dedup = Arc::new(Dedup::open("crawl-state".as_ref(), &Config::default())?);
//! let mut website = spider::website::Website::new("https://example.com");
//! let mut stored = Vec::new();
//! let report = SpiderStage::new(dedup)
//!     .crawl(&mut website, store::from_fn(|page: &StoredPage| {
//!         stored.push((page.final_url.to_string(), page.text.clone()));
//!         Ok(())
//!     }))
//!     .await?;
//! println!("{} unique of {} pages", report.unique, report.pages);
//! # Ok(())
//! # }
//! ```

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use spider::page::Page;
use spider::website::Website;
use tokio::sync::broadcast::error::RecvError;

use bytes::Bytes;
use url::Url;

pub use crate::config::FollowLinksOf;
use crate::dedup::{Dedup, DedupError, PageVerdict};
use crate::index::DocId;
use crate::store::{DuplicatePage, FailedPage, PageSink, SinkError, StoredPage};

/// Pages spider may hold for a slow subscriber before it drops the oldest (spider's own
/// default is 512; a larger buffer costs only memory while the sink is behind).
pub const DEFAULT_CHANNEL_CAPACITY: usize = 4096;

/// What the stage made of one page spider fetched.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    /// The page was decided.
    Checked(PageVerdict),
    /// The page was not decided: an HTTP error status, or a failure of the stage (the
    /// reason says which). Its links were followed as spider would.
    Skipped(String),
}

/// What stopped a crawl through the stage.
#[derive(Debug, thiserror::Error)]
pub enum SpiderError {
    /// The page stage failed (its state directory).
    #[error(transparent)]
    Dedup(#[from] DedupError),
    /// The sink failed; nothing more was handed to it.
    #[error("page sink: {0}")]
    Sink(SinkError),
}

/// What a crawl through the stage did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct SpiderReport {
    /// Pages handed to the sink (every page spider fetched), whatever the method.
    pub pages: u64,
    /// Unique pages.
    pub unique: u64,
    /// Exact duplicates.
    pub exact_duplicates: u64,
    /// Near duplicates.
    pub near_duplicates: u64,
    /// Pages without main text.
    pub no_text: u64,
    /// Pages not decided (HTTP errors, stage failures).
    pub skipped: u64,
    /// Duplicates whose links spider was told not to follow.
    pub links_not_followed: u64,
    /// Pages spider's channel dropped because the sink was behind; each was still handed
    /// to the sink after the crawl, without its body.
    pub lagged: u64,
    /// Failures of the stage (the state directory), first few messages.
    pub errors: Vec<String>,
}

/// A decision taken in the callback, waiting for its page on the channel.
struct Pending {
    final_url: String,
    status: u16,
    outcome: Outcome,
    title: Option<String>,
    language: Option<String>,
    text: String,
    content_type: Option<String>,
    fetched_at: std::time::SystemTime,
}

struct Shared {
    dedup: Arc<Dedup>,
    /// Documents below this id were stored by earlier runs.
    first_id: DocId,
    pending: Mutex<HashMap<String, Pending>>,
    follow: FollowLinksOf,
    not_followed: AtomicU64,
    errors: Mutex<Vec<String>>,
}

/// Most error messages kept in a report.
const MAX_ERRORS: usize = 20;

impl Shared {
    fn note_error(&self, e: &DedupError) {
        let mut errors = self.errors.lock().unwrap_or_else(|p| p.into_inner());
        if errors.len() < MAX_ERRORS {
            errors.push(e.to_string());
        }
        tracing::error!("page stage: {e}");
    }

    fn decide(&self, page: &Page) -> Pending {
        let status = page.status_code.as_u16();
        let final_url = page.get_url_final().to_string();
        let mut pending = Pending {
            final_url: final_url.clone(),
            status,
            outcome: Outcome::Skipped(String::new()),
            title: None,
            language: None,
            text: String::new(),
            content_type: None,
            fetched_at: std::time::SystemTime::now(),
        };
        if !page.status_code.is_success() {
            pending.outcome = Outcome::Skipped(match &page.error_status {
                Some(e) => format!("HTTP {status}: {e}"),
                None => format!("HTTP {status}"),
            });
            return pending;
        }
        // Recorded, so that a crawler asking the stage about this URL later skips it.
        if let Err(e) = self.dedup.check_url(&final_url) {
            self.note_error(&e);
        }
        let content_type = page
            .headers
            .as_ref()
            .and_then(|h| h.get(spider::reqwest::header::CONTENT_TYPE))
            .and_then(|v| v.to_str().ok());
        pending.content_type = content_type.map(str::to_string);
        let body = page.get_html_bytes_u8();
        match self
            .dedup
            .check_page_extracted(&final_url, body, content_type)
        {
            Ok((verdict, extracted)) => {
                pending.title = extracted.title;
                pending.language = extracted.language;
                pending.text = extracted.text;
                pending.outcome = Outcome::Checked(verdict);
            }
            Err(e) => {
                self.note_error(&e);
                pending.outcome = Outcome::Skipped(format!("page stage: {e}"));
            }
        }
        pending
    }

    /// The should-crawl answer: with [`FollowLinksOf::Stored`], false for a duplicate of a
    /// page stored in this crawl; else true.
    fn should_follow(&self, outcome: &Outcome) -> bool {
        if self.follow == FollowLinksOf::Every {
            return true;
        }
        let of = match outcome {
            Outcome::Checked(verdict) => verdict.original(),
            Outcome::Skipped(_) => None,
        };
        match of {
            Some(original) if original.id >= self.first_id => {
                self.not_followed.fetch_add(1, Ordering::Relaxed);
                false
            }
            _ => true,
        }
    }

    fn take(&self, url: &str) -> Option<Pending> {
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(url)
    }
}

/// Runs blocking work on a tokio worker without starving the runtime (on a multi-threaded
/// runtime; elsewhere it just runs).
fn blocking<T>(work: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
}

/// The page stage, ready to attach to spider crawls.
pub struct SpiderStage {
    dedup: Arc<Dedup>,
    capacity: usize,
    follow: FollowLinksOf,
}

impl SpiderStage {
    /// A stage over `dedup` (which a crawl of one's own may share).
    pub fn new(dedup: Arc<Dedup>) -> SpiderStage {
        SpiderStage {
            dedup,
            capacity: DEFAULT_CHANNEL_CAPACITY,
            follow: FollowLinksOf::Every,
        }
    }

    /// Whose links spider follows: every page's ([`FollowLinksOf::Every`], the default,
    /// as `crawl.follow_links_of`), or stored pages' only ([`FollowLinksOf::Stored`]: a
    /// duplicate of a page stored in this crawl is not followed, which saves spider the
    /// requests of links it already has, and misses a page only a duplicate links to).
    pub fn follow_links_of(mut self, follow: FollowLinksOf) -> SpiderStage {
        self.follow = follow;
        self
    }

    /// Sets how many pages spider's channel buffers for the sink.
    pub fn channel_capacity(mut self, capacity: usize) -> SpiderStage {
        self.capacity = capacity.max(1);
        self
    }

    /// Attaches the stage to `website` (replacing any should-crawl callback), runs
    /// `website.crawl()`, delivers every page to `sink`, and takes a checkpoint.
    pub async fn crawl<S: PageSink>(
        &self,
        website: &mut Website,
        mut sink: S,
    ) -> Result<SpiderReport, SpiderError> {
        sink.resume(None).map_err(SpiderError::Sink)?;
        let mut sink = Handing { sink, failed: None };
        let shared = Arc::new(Shared {
            dedup: self.dedup.clone(),
            first_id: self.dedup.stats().indexed_documents,
            pending: Mutex::new(HashMap::new()),
            follow: self.follow,
            not_followed: AtomicU64::new(0),
            errors: Mutex::new(Vec::new()),
        });
        let callback = shared.clone();
        website.with_on_should_crawl_callback_closure(Some(move |page: &Page| {
            let pending = blocking(|| callback.decide(page));
            let follow = callback.should_follow(&pending.outcome);
            callback
                .pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(page.get_url().to_string(), pending);
            follow
        }));
        let mut receiver = website.subscribe(self.capacity);

        let mut report = SpiderReport::default();
        {
            let crawl = website.crawl();
            tokio::pin!(crawl);
            let mut done = false;
            while !done {
                tokio::select! {
                    biased;
                    received = receiver.recv() => match received {
                        Ok(page) => deliver(&shared, &mut sink, &mut report, page),
                        Err(RecvError::Lagged(n)) => report.lagged += n,
                        Err(RecvError::Closed) => {
                            (&mut crawl).await;
                            done = true;
                        }
                    },
                    () = &mut crawl => done = true,
                }
            }
        }
        // Drain what spider sent before it finished.
        loop {
            match receiver.try_recv() {
                Ok(page) => deliver(&shared, &mut sink, &mut report, page),
                Err(tokio::sync::broadcast::error::TryRecvError::Lagged(n)) => report.lagged += n,
                Err(_) => break,
            }
        }
        website.with_on_should_crawl_callback_closure(None::<fn(&Page) -> bool>);
        website.unsubscribe();

        // Pages decided but never received: lost to lag. Hand them over all the same.
        let lost: Vec<(String, Pending)> = shared
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain()
            .collect();
        for (url, pending) in lost {
            hand_over(&mut sink, &mut report, url, pending, Bytes::new());
        }
        report.links_not_followed = shared.not_followed.load(Ordering::Relaxed);
        report.errors =
            std::mem::take(&mut *shared.errors.lock().unwrap_or_else(|p| p.into_inner()));
        let dedup = self.dedup.clone();
        blocking(move || dedup.checkpoint())?;
        if let Some(e) = sink.failed {
            return Err(SpiderError::Sink(e));
        }
        sink.sink.checkpoint().map_err(SpiderError::Sink)?;
        Ok(report)
    }
}

/// The sink and its first error: after one, nothing more is handed to it.
struct Handing<S> {
    sink: S,
    failed: Option<SinkError>,
}

fn deliver<S: PageSink>(
    shared: &Shared,
    sink: &mut Handing<S>,
    report: &mut SpiderReport,
    page: Page,
) {
    let url = page.get_url().to_string();
    // A page that reached the channel without passing the callback (a path of spider's
    // that skips it) is decided here: its links cannot be held back, but it is not stored
    // twice.
    let pending = match shared.take(&url) {
        Some(pending) => pending,
        None => blocking(|| shared.decide(&page)),
    };
    let body = Bytes::copy_from_slice(page.get_html_bytes_u8());
    hand_over(sink, report, url, pending, body);
}

fn hand_over<S: PageSink>(
    sink: &mut Handing<S>,
    report: &mut SpiderReport,
    url: String,
    pending: Pending,
    body: Bytes,
) {
    report.pages += 1;
    match &pending.outcome {
        Outcome::Checked(PageVerdict::Unique { .. }) => report.unique += 1,
        Outcome::Checked(PageVerdict::ExactDuplicate { .. }) => report.exact_duplicates += 1,
        Outcome::Checked(PageVerdict::NearDuplicate { .. }) => report.near_duplicates += 1,
        Outcome::Checked(PageVerdict::NoText) => report.no_text += 1,
        Outcome::Skipped(_) => report.skipped += 1,
    }
    if sink.failed.is_some() {
        return;
    }
    let (Ok(url), Ok(final_url)) = (Url::parse(&url), Url::parse(&pending.final_url)) else {
        return;
    };
    let failure = |kind: &str, reason: String| FailedPage {
        url: final_url.clone(),
        kind: kind.to_string(),
        reason,
        status: Some(pending.status),
        attempts: 1,
        depth: 0,
    };
    let handed = match pending.outcome {
        Outcome::Checked(verdict) => match verdict.duplicate() {
            Some(duplicate) => sink.sink.duplicate(&DuplicatePage {
                url,
                final_url: final_url.clone(),
                status: pending.status,
                fetched_at: pending.fetched_at,
                depth: 0,
                content_type: pending.content_type,
                body,
                of: duplicate.of.name.clone(),
                distance: duplicate.distance,
                similarity: duplicate.similarity,
                of_fetched_at: None,
            }),
            None => match verdict {
                PageVerdict::Unique {
                    id,
                    simhash,
                    digest,
                    nearest,
                } => sink.sink.page(&StoredPage {
                    url,
                    final_url: final_url.clone(),
                    redirects: Vec::new(),
                    status: pending.status,
                    fetched_at: pending.fetched_at,
                    depth: 0,
                    content_type: pending.content_type,
                    body,
                    title: pending.title,
                    language: pending.language,
                    text: Arc::from(pending.text),
                    id,
                    simhash,
                    digest,
                    nearest,
                    previous: None,
                }),
                // Neither stored nor a duplicate: no main text.
                _ => sink
                    .sink
                    .failure(&failure("no_text", "no main text".into())),
            },
        },
        Outcome::Skipped(reason) => sink.sink.failure(&failure("skipped", reason)),
    };
    if let Err(e) = handed {
        tracing::error!("page sink: {e}");
        sink.failed = Some(e);
    }
}
