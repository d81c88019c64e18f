//! What a worker's result means for the crawl: retried, stored, recorded as a duplicate or
//! a failure, links queued; every decision handed to the sinks in order.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use url::Url;

use super::cluster::Worker;
use super::context::Context;
use super::error::CrawlError;
use super::frontier::{Frontier, Task, Version, host_key};
use super::record::CheckpointRecord;
use super::schedule::Schedule;
use super::scope::{priority, relevance};
pub(crate) use super::sinks::Sinks;
use super::worker::{Failure, FetchedPage, Work, backoff};
use crate::config::FollowLinksOf;
use crate::content::Extracted;
use crate::content::RawLinks;
use crate::dedup::{Dedup, Duplicate, PageVerdict, UrlVerdict};
use crate::fingerprint::{Digest, Simhash};
use crate::index::{DocId, Similarity};
use crate::page::Prepared;
use crate::store::{DuplicatePage, FailedPage, PreviousVersion, StoredPage};

/// Attempts per URL for failures worth retrying (timeouts, network errors, 5xx, 429).
pub const MAX_ATTEMPTS: u32 = 3;

/// How much a link's anchor text counts in its focus score, per keyword it holds ...
const ANCHOR_WEIGHT: u32 = 3;

/// ... its URL's path ...
const URL_WEIGHT: u32 = 2;

/// ... and its page's text, counted up to this many keywords (a long page on the topic
/// lifts its links, but not above a link that names the topic itself).
const PARENT_RELEVANCE_CAP: u32 = 5;

/// The state the owning task changes as results come in.
pub(super) struct Bookkeeping<'a, 'c> {
    pub(super) dedup: &'a Dedup,
    pub(super) frontier: &'a mut Frontier,
    pub(super) sinks: &'a mut Sinks,
    pub(super) totals: &'a mut CheckpointRecord,
    pub(super) schedule: &'a mut Schedule,
    /// This process as a worker of a cluster crawl.
    pub(super) worker: Option<&'a mut Worker<'c>>,
}

/// Queues the new ones among `links` (canonical, in scope: URL, depth, priority); on a
/// cluster, a link to another worker's host goes to that worker. Returns how many were
/// queued or handed on.
pub(super) fn enqueue(
    dedup: &Dedup,
    frontier: &mut Frontier,
    worker: Option<&mut Worker<'_>>,
    links: Vec<(Url, u32, u32)>,
) -> Result<usize, CrawlError> {
    if let Some(worker) = worker {
        return worker.enqueue(dedup, frontier, links);
    }
    let mut queued = 0;
    // With a recrawl interval, "new" may be a URL fetched before that came due.
    let due_before = dedup
        .recrawl_after()
        .map(|after| dedup.now().saturating_sub(after.as_secs()));
    for (url, depth, priority) in links {
        if let UrlVerdict::New(url) = dedup.check_canonical(url)? {
            let pushed = match due_before {
                Some(before) => frontier.push_due(url, depth, priority, before),
                None => frontier.push(url, depth, priority),
            };
            if pushed? {
                queued += 1;
            }
        }
    }
    Ok(queued)
}

/// Records a worker's result: the outcome, then a failure line if it was not stored.
pub(super) fn handle(
    work: Work,
    ledger: &mut Bookkeeping<'_, '_>,
    shared: &Context,
) -> Result<(), CrawlError> {
    if let Some((task, failure)) = outcome(work, ledger, shared)? {
        ledger.totals.failures += 1;
        *ledger
            .totals
            .failure_kinds
            .entry(failure.kind.clone())
            .or_default() += 1;
        shared
            .metrics
            .failed(task.url.host_str().unwrap_or_default(), &failure.kind);
        ledger.sinks.failure(&FailedPage {
            url: task.url.clone(),
            kind: failure.kind,
            reason: failure.reason,
            status: failure.status,
            attempts: task.attempts + 1,
            depth: task.depth,
        })?;
        ledger.frontier.finish(&task, true);
    }
    Ok(())
}

/// What a worker's result means: retried, stored, recorded as a duplicate (`None`), or a
/// failure of its task for [`handle`] to record.
pub(super) fn outcome(
    work: Work,
    ledger: &mut Bookkeeping<'_, '_>,
    shared: &Context,
) -> Result<Option<(Task, Failure)>, CrawlError> {
    let Bookkeeping {
        dedup,
        frontier,
        sinks,
        totals,
        schedule,
        worker,
    } = ledger;
    let worker = worker.as_deref_mut();
    let (dedup, keywords) = (*dedup, shared.keywords.as_slice());
    let base_delay = shared.base_delay;
    let host = host_key(&work.task().url);
    schedule.in_flight = schedule.in_flight.saturating_sub(1);
    let delayed = &mut schedule.delayed;
    let state = schedule.hosts.entry(host.to_string()).or_default();
    state.in_flight = state.in_flight.saturating_sub(1);
    let now = Instant::now();
    match work {
        Work::RobotsClosed { task, until } => {
            state.next_allowed = Some(until);
            if task.attempts + 1 >= MAX_ATTEMPTS {
                let reason = format!(
                    "robots.txt of {} failed {MAX_ATTEMPTS} times (5xx or no answer)",
                    host_key(&task.url)
                );
                let failure = Failure::new("robots_unavailable", reason, None);
                return Ok(Some((task, failure)));
            }
            frontier.retry(task);
        }
        Work::Disallowed { task } => {
            state.next_allowed = Some(now + state.delay);
            return Ok(Some((
                task,
                Failure::new("robots", "disallowed by robots.txt".into(), None),
            )));
        }
        Work::Failed { task, error } => {
            shared.counts.fetch("error");
            let retry = error.is_retryable() && task.attempts + 1 < MAX_ATTEMPTS;
            if retry {
                // This URL waits; the host's other pages go on.
                state.next_allowed = Some(now + state.delay);
                delayed.push((now + backoff(task.attempts, None, &task.url), task));
            } else {
                state.next_allowed = Some(now + state.delay);
                return Ok(Some((
                    task,
                    Failure::new(error.kind(), error.to_string(), None),
                )));
            }
        }
        Work::Page(mut page) => {
            totals.fetched += 1;
            totals.fetched_bytes += page.body.len() as u64;
            shared.counts.fetched_bytes.inc_by(page.body.len() as u64);
            state.delay = base_delay.max(page.crawl_delay.unwrap_or_default());
            state.next_allowed = Some(now + state.delay);
            let (status, retry_after) = (page.status, page.retry_after);
            if let Some(target) = page.deferred.take() {
                shared.counts.fetch("redirected");
                return redirected_away(
                    dedup, frontier, worker, keywords, page.task, &target, status,
                );
            }
            let retryable = status >= 500 || status == 429;
            if retryable && page.task.attempts + 1 < MAX_ATTEMPTS {
                shared.counts.fetch("retried");
                let task = page.task;
                let wait = backoff(task.attempts, retry_after, &task.url);
                if retry_after.is_some() || status == 429 {
                    // The server asked the whole host to slow down.
                    state.next_allowed = Some(now + wait);
                }
                delayed.push((now + wait, task));
                return Ok(None);
            }
            shared.counts.fetch(if (200..300).contains(&status) {
                "ok"
            } else {
                "http_error"
            });
            let stores = Stores {
                dedup,
                frontier,
                sinks,
                totals,
                worker,
            };
            return record_page(*page, stores, shared);
        }
    }
    Ok(None)
}

/// A redirect to another host: the target is queued (when new) for that host's turn, and
/// the redirecting URL is recorded as `redirected`.
fn redirected_away(
    dedup: &Dedup,
    frontier: &mut Frontier,
    worker: Option<&mut Worker<'_>>,
    keywords: &[String],
    task: Task,
    target: &Url,
    status: u16,
) -> Result<Option<(Task, Failure)>, CrawlError> {
    // Canonical already: the hop canonicalized it.
    let link = (
        target.clone(),
        task.depth,
        priority(keywords, task.depth, 0),
    );
    let queued = enqueue(dedup, frontier, worker, vec![link])? > 0;
    let reason = if queued {
        format!("to {target} on another host: queued")
    } else {
        format!("to {target} on another host: already seen")
    };
    Ok(Some((
        task,
        Failure::new("redirected", reason, Some(status)),
    )))
}

/// Queues the new, in-scope, followable links of a fetched page, each with its priority: its
/// anchor text's and URL's relevance to the focus keywords, and its page's.
fn follow(
    dedup: &Dedup,
    frontier: &mut Frontier,
    worker: Option<&mut Worker<'_>>,
    shared: &Context,
    task: &Task,
    links: &RawLinks,
    parent_relevance: u32,
) -> Result<(), CrawlError> {
    let keywords = shared.keywords.as_slice();
    let base = links.base();
    let mut found = Vec::new();
    for link in links.iter() {
        if link.nofollow {
            continue;
        }
        let canonical = match base {
            Some(base) => shared.canonicalizer.canonicalize_link(base, link.href),
            None => shared.canonicalizer.canonicalize(link.href),
        };
        let Ok(canonical) = canonical else {
            continue;
        };
        if shared.scope.allows(&canonical).is_err() {
            continue;
        }
        let score = ANCHOR_WEIGHT * relevance(keywords, link.text)
            + URL_WEIGHT * relevance(keywords, canonical.path())
            + parent_relevance;
        let depth = task.depth + 1;
        found.push((canonical, depth, priority(keywords, depth, score)));
    }
    enqueue(dedup, frontier, worker, found)?;
    Ok(())
}

/// What recording a page changes.
struct Stores<'a, 'c> {
    dedup: &'a Dedup,
    frontier: &'a mut Frontier,
    sinks: &'a mut Sinks,
    totals: &'a mut CheckpointRecord,
    worker: Option<&'a mut Worker<'c>>,
}

/// A response the host was not asked to retry: a failure for a status other than 2xx or a
/// body that is no page; else the page's verdict, handed to the sinks, and the links of a
/// stored page queued.
fn record_page(
    page: FetchedPage,
    stores: Stores<'_, '_>,
    shared: &Context,
) -> Result<Option<(Task, Failure)>, CrawlError> {
    let Stores {
        dedup,
        frontier,
        sinks,
        totals,
        mut worker,
    } = stores;
    let FetchedPage {
        mut task,
        status,
        final_url,
        content_type,
        body,
        redirects,
        prepared,
        fetched_at,
        ..
    } = page;
    if !(200..300).contains(&status) {
        let reason = format!("HTTP {status}");
        return Ok(Some((
            task,
            Failure::new("http_status", reason, Some(status)),
        )));
    }
    settle_redirect(dedup, frontier, &task, &final_url)?;
    let Some(mut prepared) = prepared else {
        let reason = format!(
            "not HTML ({})",
            content_type.as_deref().unwrap_or("no content type")
        );
        return Ok(Some((task, Failure::new("not_html", reason, Some(status)))));
    };
    // What the host repeats on its pages is compared on no path, and stored on none.
    dedup.drop_template(final_url.as_str(), &mut prepared);
    let earlier = task.last;
    let deciding = Instant::now();
    let verdict = decide(dedup, worker.as_deref_mut(), &final_url, &prepared, earlier)?;
    shared.metrics.decided(
        final_url.host_str().unwrap_or_default(),
        final_url.as_str(),
        &verdict,
        deciding.elapsed(),
    );
    let (extracted, links) = prepared.into_parts();
    let parent_relevance = relevance(&shared.keywords, &extracted.text).min(PARENT_RELEVANCE_CAP);
    let response = Response {
        final_url,
        redirects,
        status,
        fetched_at,
        content_type,
        body: Bytes::from(body),
    };
    let body_bytes = response.body.len() as u64;
    let kept = keep(
        sinks, dedup, totals, &mut task, response, extracted, verdict,
    )?;
    if kept == Kept::Stored {
        shared.counts.stored_bytes.inc_by(body_bytes);
    }
    // With `follow_links_of = "stored"`, a duplicate's links are taken to be its
    // original's, except an unchanged page fetched again by a recrawl: it is the original,
    // and its links lead to pages that may have come due too. A page without main text (a
    // gallery, a listing) is followed only for "every": its links may be the only way to
    // the pages it lists.
    let every = shared.follow_links_of == FollowLinksOf::Every;
    let follow_links = match kept {
        Kept::Stored => true,
        Kept::Duplicate { recrawled } => every || recrawled,
        Kept::NoText => every,
    };
    if follow_links && task.depth < shared.max_depth {
        follow(
            dedup,
            frontier,
            worker,
            shared,
            &task,
            &links,
            parent_relevance,
        )?;
    }
    if kept == Kept::NoText {
        return Ok(Some((
            task,
            Failure::new("no_text", "no main text".into(), Some(status)),
        )));
    }
    frontier.finish(&task, false);
    Ok(None)
}

/// What became of a decided page.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kept {
    Stored,
    /// `recrawled`: an unchanged page fetched again by a recrawl (its own earlier version).
    Duplicate {
        recrawled: bool,
    },
    /// Neither stored nor a duplicate: no main text.
    NoText,
}

/// Hands a decided page to the sinks by its verdict, and counts it.
fn keep(
    sinks: &mut Sinks,
    dedup: &Dedup,
    totals: &mut CheckpointRecord,
    task: &mut Task,
    response: Response,
    extracted: Extracted,
    verdict: PageVerdict,
) -> Result<Kept, CrawlError> {
    let earlier = task.last;
    if let Some(duplicate) = verdict.duplicate() {
        totals.duplicates += 1;
        keep_duplicate(sinks, task, response, &duplicate, earlier)?;
        let recrawled = earlier.is_some_and(|v| v.doc == duplicate.of.id);
        return Ok(Kept::Duplicate { recrawled });
    }
    let PageVerdict::Unique {
        id,
        simhash,
        digest,
        nearest,
    } = verdict
    else {
        return Ok(Kept::NoText);
    };
    totals.stored += 1;
    totals.stored_bytes += response.body.len() as u64;
    totals.last_stored_at_ms = Some(crate::metrics::epoch_ms(SystemTime::now()));
    let stored = IndexEntry {
        id,
        simhash,
        digest,
        nearest,
    };
    keep_unique(sinks, dedup, task, response, extracted, stored)?;
    Ok(Kept::Stored)
}

/// The redirect target is the page: it is remembered, and taken off the queue if a link
/// put it there, so that it is not fetched again. Every hop was canonicalized before it
/// was followed, so the final URL is canonical.
fn settle_redirect(
    dedup: &Dedup,
    frontier: &mut Frontier,
    task: &Task,
    final_url: &Url,
) -> Result<(), CrawlError> {
    if *final_url != task.url {
        if let UrlVerdict::New(target) | UrlVerdict::Seen(target) =
            dedup.check_canonical(final_url.clone())?
        {
            frontier.settle(target, task.depth)?;
        }
    }
    Ok(())
}

/// The page's verdict: from the shared index on a cluster; on one machine from the local
/// one, where a recrawl compares the page with the version stored for its URL last time.
fn decide(
    dedup: &Dedup,
    worker: Option<&mut Worker<'_>>,
    final_url: &Url,
    prepared: &Prepared,
    earlier: Option<Version>,
) -> Result<PageVerdict, CrawlError> {
    Ok(match (worker, earlier) {
        (Some(worker), _) => worker.decide(dedup, final_url.as_str(), prepared)?,
        (None, Some(v)) => {
            dedup.decide_revisit(final_url.as_str(), prepared, v.doc, Digest(v.digest))?
        }
        (None, None) => dedup.decide(final_url.as_str(), prepared)?,
    })
}

/// What the sinks get of a response besides its verdict and text.
struct Response {
    final_url: Url,
    redirects: Vec<(Url, u16)>,
    status: u16,
    fetched_at: SystemTime,
    content_type: Option<String>,
    body: Bytes,
}

/// What the index gave a unique page.
struct IndexEntry {
    id: DocId,
    simhash: Simhash,
    digest: Digest,
    nearest: Option<Similarity>,
}

/// The time of the version of a URL stored by an earlier fetch.
fn fetched_time(version: &Version) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(version.fetched_at)
}

/// A duplicate handed to the sinks.
fn keep_duplicate(
    sinks: &mut Sinks,
    task: &Task,
    response: Response,
    duplicate: &Duplicate<'_>,
    earlier: Option<Version>,
) -> Result<(), CrawlError> {
    let of = duplicate.of;
    sinks.duplicate(&DuplicatePage {
        url: task.url.clone(),
        final_url: response.final_url,
        status: response.status,
        fetched_at: response.fetched_at,
        depth: task.depth,
        content_type: response.content_type,
        body: response.body,
        of: of.name.clone(),
        distance: duplicate.distance,
        similarity: duplicate.similarity,
        // An unchanged recrawl repeats the earlier copy of its own URL.
        of_fetched_at: earlier.filter(|v| v.doc == of.id).map(|v| fetched_time(&v)),
    })?;
    Ok(())
}

/// A unique page handed to the sinks, and remembered as its URL's version.
fn keep_unique(
    sinks: &mut Sinks,
    dedup: &Dedup,
    task: &mut Task,
    response: Response,
    extracted: Extracted,
    stored: IndexEntry,
) -> Result<(), CrawlError> {
    let IndexEntry {
        id,
        simhash,
        digest,
        nearest,
    } = stored;
    let earlier = task.last;
    sinks.page(&StoredPage {
        url: task.url.clone(),
        final_url: response.final_url,
        redirects: response.redirects.into_iter().map(|(u, _)| u).collect(),
        status: response.status,
        fetched_at: response.fetched_at,
        depth: task.depth,
        content_type: response.content_type,
        body: response.body,
        title: extracted.title,
        language: extracted.language,
        text: Arc::from(extracted.text),
        id,
        simhash,
        digest,
        nearest,
        previous: earlier.map(|v| PreviousVersion {
            id: v.doc,
            digest: Digest(v.digest),
            fetched_at: fetched_time(&v),
        }),
    })?;
    // Timed on the stage's clock, which also decides when the URL is due.
    task.last = Some(Version {
        doc: id,
        digest: digest.0,
        fetched_at: dedup.now(),
    });
    Ok(())
}
