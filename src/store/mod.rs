//! Where a crawl's pages go: the [`PageSink`] trait, and the sinks that come with it.
//!
//! The crawler decides every page it fetches and hands the result to its sinks, in the
//! order it decided them: a unique page to [`PageSink::page`], a duplicate to
//! [`PageSink::duplicate`], a URL that could not be fetched or was not a page to
//! [`PageSink::failure`]. The files a crawl writes (`pages.jsonl`, `duplicates.jsonl`,
//! `failures.jsonl` and the WARC files; [`files::FileSink`]) are one such sink; a closure
//! is another ([`from_fn`]); so is anything of yours that implements the trait.
//!
//! # Writing a sink
//! Only [`PageSink::page`] must be written. The other methods do nothing by default:
//! `duplicate` and `failure` drop what they are given, `checkpoint` answers an empty
//! position, `resume` accepts any position, and `idle` asks to be called again never.
//!
//! # What stops the crawl
//! An `Err` from any method stops the crawl at once with [`crate::crawl::CrawlError::Sink`]
//! (exit code 1 from `crawldedup crawl`). No checkpoint is taken after the error, so the
//! next run resumes from the last one and hands the sink everything after it again.
//!
//! # The crash contract
//! At every checkpoint the crawler calls [`PageSink::checkpoint`] on each sink, after the
//! pages decided so far were handed to it and before the checkpoint is committed: the sink
//! makes what it was given durable and answers its *position*, a few numbers of its own
//! choosing (file lengths, an offset in a log). The checkpoint records the positions. When
//! a crawl resumes, each sink first gets [`PageSink::resume`] with the position the last
//! committed checkpoint recorded for it (`None` on a new crawl), and must go back to it:
//! the crawl redoes every page after that checkpoint and hands it over again. A sink that
//! truncates to its position (as the file sink does) therefore holds every page exactly
//! once after any number of kill -9s; a sink that ignores positions gets every page at
//! least once, and the pages after the last checkpoint again after a crash.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use crawldedup::store::{self, StoredPage};
//!
//! let titles = Arc::new(Mutex::new(Vec::new()));
//! let seen = titles.clone();
//! // A closure is a sink of unique pages.
//! let sink = store::from_fn(move |page: &StoredPage| {
//!     seen.lock().unwrap().push(page.title.clone().unwrap_or_default());
//!     Ok(())
//! });
//! # let _ = sink;
//! // crawldedup::Crawler::builder(&config).sink(sink).run(stop).await?;
//! ```

mod error;
pub mod files;
mod lines;
pub mod warc;

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use url::Url;

use crate::fingerprint::{Digest, Simhash};
use crate::index::{DocId, Similarity};

/// `[output]` of the configuration: which files the file sink ([`files::FileSink`])
/// writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct OutputConfig {
    /// Write pages.jsonl and duplicates.jsonl.
    pub jsonl: bool,
    /// Write WARC files under warc/.
    pub warc: bool,
    /// Start a new WARC file past this many bytes.
    pub warc_rotate_bytes: u64,
    /// How a duplicate whose bytes are not its original's is archived: `response` (its
    /// own bytes, the verdict in `WARC-Crawldedup-*` fields) or `revisit` (crawldedup's
    /// own revisit profile; smaller, its bytes archived nowhere). A byte-identical
    /// duplicate is always an identical-payload-digest revisit.
    pub warc_duplicates: warc::DuplicateRecords,
}

impl Default for OutputConfig {
    fn default() -> Self {
        OutputConfig {
            jsonl: true,
            warc: true,
            warc_rotate_bytes: 1 << 30,
            warc_duplicates: warc::DuplicateRecords::Response,
        }
    }
}

/// What a sink's method returns on failure: any error; it stops the crawl.
pub type SinkError = Box<dyn std::error::Error + Send + Sync>;

/// A sink's position at a checkpoint: numbers of its own choosing (lengths, offsets), kept
/// in the checkpoint and given back to [`PageSink::resume`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SinkPosition(pub Vec<u64>);

/// A page the crawler stored: unique, now in the index.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StoredPage {
    /// The URL the crawl queued (canonical).
    pub url: Url,
    /// The URL the page came from after redirects (canonical).
    pub final_url: Url,
    /// The URLs redirected from, in order.
    pub redirects: Vec<Url>,
    /// HTTP status.
    pub status: u16,
    /// When the response arrived.
    pub fetched_at: SystemTime,
    /// Links followed from a seed to reach it (0 for a seed).
    pub depth: u32,
    /// The response's `Content-Type`.
    pub content_type: Option<String>,
    /// The response body as received (after content decoding). Cheap to keep: a clone
    /// shares the bytes.
    pub body: Bytes,
    /// The page's title.
    pub title: Option<String>,
    /// The page's declared language.
    pub language: Option<String>,
    /// The main text. Cheap to keep: a clone shares it.
    pub text: Arc<str>,
    /// Its id in the index.
    pub id: DocId,
    /// The simhash of the main text.
    pub simhash: Simhash,
    /// The exact digest of the main text.
    pub digest: Digest,
    /// The estimates for the most alike stored page that was a candidate but not confirmed.
    pub nearest: Option<Similarity>,
    /// For a page fetched again by a recrawl and found changed, the version stored before.
    pub previous: Option<PreviousVersion>,
}

/// The earlier stored version of a page that a recrawl found changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreviousVersion {
    /// Its id in the index.
    pub id: DocId,
    /// The exact digest of its main text.
    pub digest: crate::Digest,
    /// When it was fetched.
    pub fetched_at: SystemTime,
}

/// A page the crawler fetched and found to repeat a stored one: recorded, not stored.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DuplicatePage {
    /// The URL the crawl queued (canonical).
    pub url: Url,
    /// The URL the page came from after redirects.
    pub final_url: Url,
    /// HTTP status.
    pub status: u16,
    /// When the response arrived.
    pub fetched_at: SystemTime,
    /// Links followed from a seed to reach it.
    pub depth: u32,
    /// The response's `Content-Type`.
    pub content_type: Option<String>,
    /// The response body as received.
    pub body: Bytes,
    /// The stored page it repeats (its URL).
    pub of: String,
    /// `None` for an exact duplicate (the same main text); the simhash distance for a
    /// near-duplicate.
    pub distance: Option<u32>,
    /// The estimates it was confirmed on (1 and 1 for an exact duplicate).
    pub similarity: Similarity,
    /// For a page fetched again by a recrawl and found unchanged, when the earlier copy
    /// (`of`, the same URL) was fetched.
    pub of_fetched_at: Option<SystemTime>,
}

/// A URL that gave no page to decide: a fetch that failed, a status that is not 2xx, a
/// body that is not a page, a page without main text, a robots.txt refusal.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FailedPage {
    /// The URL.
    pub url: Url,
    /// A short word for the cause (`http_status`, `timeout`, `not_html`, `no_text`,
    /// `robots`, ...), as in failures.jsonl.
    pub kind: String,
    /// What happened, in one line.
    pub reason: String,
    /// The HTTP status, when a response came.
    pub status: Option<u16>,
    /// Attempts made.
    pub attempts: u32,
    /// Links followed from a seed to reach it.
    pub depth: u32,
}

/// Receives a crawl's decisions. See the [module documentation](self) for which methods to
/// write, what stops the crawl and the crash contract.
pub trait PageSink: Send {
    /// A unique page, stored in the index.
    fn page(&mut self, page: &StoredPage) -> Result<(), SinkError>;

    /// A duplicate, recorded. By default dropped.
    fn duplicate(&mut self, duplicate: &DuplicatePage) -> Result<(), SinkError> {
        let _ = duplicate;
        Ok(())
    }

    /// A URL that gave no page. By default dropped.
    fn failure(&mut self, failure: &FailedPage) -> Result<(), SinkError> {
        let _ = failure;
        Ok(())
    }

    /// Makes everything handed over so far durable and answers the position to come back
    /// to. By default an empty position (the sink keeps no position).
    fn checkpoint(&mut self) -> Result<SinkPosition, SinkError> {
        Ok(SinkPosition::default())
    }

    /// Called once before anything is handed over: go back to `at`, the position the last
    /// committed checkpoint recorded for this sink (`None` on a new crawl, or when that
    /// checkpoint had no position for it). By default accepted as it is.
    fn resume(&mut self, at: Option<&SinkPosition>) -> Result<(), SinkError> {
        let _ = at;
        Ok(())
    }

    /// The crawl is about to wait for work: hand on what was gathered if it is due, and
    /// answer when to be called again (`None`: only with the next page). By default
    /// nothing to do.
    fn idle(&mut self) -> Result<Option<Instant>, SinkError> {
        Ok(None)
    }
}

impl<S: PageSink + ?Sized> PageSink for Box<S> {
    fn page(&mut self, page: &StoredPage) -> Result<(), SinkError> {
        (**self).page(page)
    }
    fn duplicate(&mut self, duplicate: &DuplicatePage) -> Result<(), SinkError> {
        (**self).duplicate(duplicate)
    }
    fn failure(&mut self, failure: &FailedPage) -> Result<(), SinkError> {
        (**self).failure(failure)
    }
    fn checkpoint(&mut self) -> Result<SinkPosition, SinkError> {
        (**self).checkpoint()
    }
    fn resume(&mut self, at: Option<&SinkPosition>) -> Result<(), SinkError> {
        (**self).resume(at)
    }
    fn idle(&mut self) -> Result<Option<Instant>, SinkError> {
        (**self).idle()
    }
}

/// A sink of unique pages made from a closure ([`from_fn`]).
pub struct FnSink<F>(F);

/// A sink that calls `f` with every unique page and keeps no position: after a crash it
/// gets the pages after the last checkpoint again.
pub fn from_fn<F>(f: F) -> FnSink<F>
where
    F: FnMut(&StoredPage) -> Result<(), SinkError> + Send,
{
    FnSink(f)
}

impl<F> PageSink for FnSink<F>
where
    F: FnMut(&StoredPage) -> Result<(), SinkError> + Send,
{
    fn page(&mut self, page: &StoredPage) -> Result<(), SinkError> {
        (self.0)(page)
    }
}
