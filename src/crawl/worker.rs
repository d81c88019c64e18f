//! One task's fetch: robots.txt, the request with its redirects, and the page prepared
//! ([`crate::page::prepare`]) on the worker that fetched it; the result goes back to the
//! loop as [`Work`].

use std::time::{Duration, Instant};

use url::Url;

use super::context::Context;
use super::fetch::{FetchError, Hop};
use super::frontier::{Task, host_key};
use super::robots::Robots;
use crate::page::{self, Prepared};

/// A response, as a worker brings it back.
pub(super) struct FetchedPage {
    pub(super) task: Task,
    /// A redirect to another host, left for the queue.
    pub(super) deferred: Option<Url>,
    pub(super) status: u16,
    pub(super) final_url: Url,
    pub(super) content_type: Option<String>,
    pub(super) body: Vec<u8>,
    pub(super) retry_after: Option<Duration>,
    pub(super) redirects: Vec<(Url, u16)>,
    /// The extraction and its text's fingerprint, for HTML pages.
    pub(super) prepared: Option<Prepared>,
    /// The host's robots.txt `Crawl-delay`, capped.
    pub(super) crawl_delay: Option<Duration>,
    pub(super) fetched_at: std::time::SystemTime,
}

/// What a worker brings back.
pub(super) enum Work {
    Page(Box<FetchedPage>),
    Failed { task: Task, error: FetchError },
    Disallowed { task: Task },
    RobotsClosed { task: Task, until: Instant },
}

/// HTML bodies up to this size are extracted and fingerprinted on the runtime worker that
/// fetched them (well under a millisecond of CPU); bigger ones go to the blocking pool, so
/// that a big page never holds up the network work queued on that worker. Handing every
/// page to another thread costs two thread wake-ups per page, which on a crawl of small
/// pages was a tenth of the CPU.
pub(super) const INLINE_EXTRACTION_BYTES: usize = 64 * 1024;

/// The longest robots.txt `Crawl-delay` obeyed, in seconds: a site asking for more gets
/// this (one page a minute is already the pace of a site that wants to be left alone).
pub(super) const CRAWL_DELAY_CAP_SECS: f32 = 60.0;

/// The longest wait a `Retry-After` header can ask for before a retry.
pub(super) const RETRY_AFTER_CAP: Duration = Duration::from_secs(300);

/// The first retry's wait, doubled at each further attempt ...
pub(super) const BACKOFF_BASE: Duration = Duration::from_millis(500);

/// ... up to this many doublings (500 ms x 2^8: about two minutes) ...
pub(super) const BACKOFF_MAX_DOUBLINGS: u32 = 8;

/// ... plus up to this many milliseconds of jitter, derived from the URL, so that retries of
/// one host spread out.
pub(super) const BACKOFF_JITTER_MS: u64 = 250;

/// Fetches one task (after robots.txt) and extracts it.
pub(super) async fn work(shared: &Context, task: Task) -> Work {
    let mut crawl_delay = None;
    if shared.respect_robots {
        match shared.robots(&task.url).await {
            Robots::Closed(until) => return Work::RobotsClosed { task, until },
            Robots::Refused(refused) => {
                // The page's own address is the host's: refused the same way.
                let reason = match refused {
                    super::fetch::FetchError::Refused { reason, .. } => reason,
                    other => other.to_string(),
                };
                let error = super::fetch::FetchError::Refused {
                    url: task.url.to_string(),
                    reason,
                };
                return Work::Failed { task, error };
            }
            Robots::Rules(Some(robot)) => {
                crawl_delay = robot
                    .delay
                    .map(|d| Duration::from_secs_f32(d.clamp(0.0, CRAWL_DELAY_CAP_SECS)));
                if !robot.allowed(task.url.as_str()) {
                    return Work::Disallowed { task };
                }
            }
            Robots::Rules(None) => {}
        }
    }
    let host = host_key(&task.url);
    let hop = |next: &Url| -> Result<Hop, String> {
        let canonical = shared
            .canonicalizer
            .canonicalize(next.as_str())
            .map_err(|e| e.to_string())?;
        shared.scope.allows(&canonical)?;
        // Another host has its own robots.txt, delay and share of the concurrency: its
        // page goes through the queue like any link.
        if shared.respect_robots && host_key(&canonical) != host {
            return Ok(Hop::Defer(canonical));
        }
        Ok(Hop::Follow(canonical))
    };
    let fetching = Instant::now();
    let fetched = shared.fetcher.fetch_with(&task.url, hop).await;
    shared
        .counts
        .fetch_seconds
        .observe_duration(fetching.elapsed());
    match fetched {
        Ok(fetched) => {
            let fetched_at = std::time::SystemTime::now();
            // By its type here; `prepare` looks at the bytes ([`page::is_page`]).
            let to_prepare = (200..300).contains(&fetched.status)
                && crate::content::decode::is_html_content_type(
                    fetched.content_type.as_deref(),
                    true,
                );
            let mut fetched = fetched;
            let extracting = Instant::now();
            let prepared = if !to_prepare {
                None
            } else if fetched.body.len() <= INLINE_EXTRACTION_BYTES {
                page::prepare(
                    &fetched.body,
                    fetched.content_type.as_deref(),
                    Some(&fetched.url),
                )
            } else {
                // The body goes to the blocking pool and comes back, without a copy.
                let body = std::mem::take(&mut fetched.body);
                let content_type = fetched.content_type.clone();
                let url = fetched.url.clone();
                let (body, prepared) = tokio::task::spawn_blocking(move || {
                    let prepared = page::prepare(&body, content_type.as_deref(), Some(&url));
                    (body, prepared)
                })
                .await
                .unwrap_or_default();
                fetched.body = body;
                prepared
            };
            if to_prepare {
                shared
                    .counts
                    .extract_seconds
                    .observe_duration(extracting.elapsed());
            }
            Work::Page(Box::new(FetchedPage {
                task,
                deferred: fetched.deferred,
                status: fetched.status,
                final_url: fetched.url,
                content_type: fetched.content_type,
                body: fetched.body,
                retry_after: fetched.retry_after,
                redirects: fetched.redirects,
                prepared,
                crawl_delay,
                fetched_at,
            }))
        }
        Err(error) => Work::Failed { task, error },
    }
}

pub(super) fn backoff(attempts: u32, retry_after: Option<Duration>, url: &Url) -> Duration {
    if let Some(after) = retry_after {
        return after.min(RETRY_AFTER_CAP);
    }
    // Exponential, with jitter derived from the URL (deterministic per URL and attempt).
    let base = BACKOFF_BASE * 2u32.pow(attempts.min(BACKOFF_MAX_DOUBLINGS));
    let jitter =
        crate::urls::seen::url_hash(url.as_str()).rotate_left(attempts) % BACKOFF_JITTER_MS;
    base + Duration::from_millis(jitter)
}

/// Why a URL was not stored.
pub(super) struct Failure {
    pub(super) kind: String,
    pub(super) reason: String,
    pub(super) status: Option<u16>,
}

impl Failure {
    pub(super) fn new(kind: &str, reason: String, status: Option<u16>) -> Failure {
        Failure {
            kind: kind.to_string(),
            reason,
            status,
        }
    }
}

impl Work {
    pub(super) fn task(&self) -> &Task {
        match self {
            Work::Page(page) => &page.task,
            Work::Failed { task, .. }
            | Work::Disallowed { task }
            | Work::RobotsClosed { task, .. } => task,
        }
    }
}
