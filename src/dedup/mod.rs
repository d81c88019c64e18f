//! The page stage: one object that a crawler asks about every URL before it fetches it and
//! about every page after it fetched it.
//!
//! [`Dedup`] owns the seen-URL filter ([`SeenUrls`]), the extractor
//! ([`crate::content::extract`](mod@crate::content::extract)) and the simhash index ([`SimhashIndex`]), all kept in one
//! state directory:
//!
//! ```text
//! STATE_DIR/seen-urls.bloom         the URL filter, saved at each checkpoint
//! STATE_DIR/seen-urls.confirm/      exact URL set (only with url_filter.confirm_on_disk)
//! STATE_DIR/index/                  the simhash index (sled)
//! ```
//!
//! # Deciding a page
//! 1. The body is decoded and its main text extracted; a page with no words in its main
//!    text, or that is not HTML (by its content type, or binary bytes), is
//!    [`PageVerdict::NoText`] and is not indexed.
//! 2. The text is fingerprinted ([`Fingerprint`]): an exact digest, a simhash of its word
//!    3-shingles and a 64-byte MinHash sketch of the same shingles.
//! 3. The index answers in one atomic step ([`SimhashIndex::check_and_insert`]): the same
//!    digest is an exact duplicate; otherwise every stored text whose simhash is within
//!    `dedup.max_distance` bits or that shares a sketch band is a candidate, and a
//!    candidate is a near-duplicate only if its sketch confirms it: estimated resemblance
//!    (Jaccard similarity of the shingle sets) of at least [`MIN_RESEMBLANCE`] (or
//!    [`SHORT_MIN_RESEMBLANCE`] when either text is shorter than `dedup.short_text_chars`),
//!    or, between long texts of comparable size, estimated containment of at least
//!    [`MIN_CONTAINMENT`]. A tiny text (under [`TINY_SHINGLES`] shingles, counted as
//!    words in every script) is compared on exact shingle sets: the same set, or held whole
//!    in a text at most [`TINY_MAX_GROWTH`] times its size that adds no sentence to it.
//!    Two pages of one host are compared on their lines instead,
//!    what the site repeats left out ([`template`]): an exact or near match of the main
//!    text is still two pages when each has a story of its own. Otherwise the page is
//!    stored and unique.
//! 4. A near-duplicate verdict carries the estimates it was confirmed on
//!    ([`Similarity`]): `similarity` and `containment` in `dedup --json`, the sidecar and
//!    `duplicates.jsonl`.
//!
//! Precision does not decay with the index: unrelated texts get nearly independent
//! simhashes and almost never share a band, and those that do are refused by their
//! sketches. The measurements are in [`crate::fingerprint`] and, for indexes of 1 M and
//! 10 M documents, in docs/quality.md (`cargo bench --bench scale`).
//!
//! # Concurrency and durability
//! `Dedup` is `Send + Sync`; share it in an `Arc` between tasks or threads. URL checks take
//! one of 256 striped locks; page checks are serialized inside the index only for the
//! lookup and insert, not for decoding, extraction and fingerprinting. Of many callers
//! presenting the same page (or the same URL) at once, exactly one is told it is new.
//! [`Dedup::checkpoint`] saves the URL filter atomically and flushes the index; what was
//! recorded before a checkpoint survives a kill -9. Between checkpoints,
//! [`Dedup::sync_pages`] and [`Dedup::sync_urls`] make what was answered so far durable
//! (group commits of the index and of the URL journal, [`crate::urls::journal`]).
//!
//! ```
//! use crawldedup::{Config, Dedup, PageVerdict, UrlVerdict};
//!
//! let state = tempfile::tempdir()?;
//! let dedup = Dedup::open(state.path(), &Config::default())?;
//!
//! // URLs: canonicalized, then checked and recorded in one step.
//! assert!(matches!(dedup.check_url("https://example.com/a?utm_source=x")?, UrlVerdict::New(_)));
//! assert!(matches!(dedup.check_url("https://EXAMPLE.com/a")?, UrlVerdict::Seen(_)));
//!
//! // Pages: the same article under two templates is one article.
//! let story = "<p>The council approved the budget on Tuesday after a long debate about \
//!     parks, libraries and roads. Funding for parks rises by four percent, libraries keep \
//!     their evening hours, and road repairs get a one-time grant from the reserve fund that \
//!     had been set aside for the flood defences two years ago.</p>";
//! let a = format!("<html><body><nav><a href=/>Home</a></nav><article>{story}</article></body></html>");
//! let b = format!("<html><body><div class=menu><a href=/x>Other</a></div><main>{story}</main><footer>(c) 2025</footer></body></html>");
//! assert!(matches!(dedup.check_page("https://a.example/budget", a.as_bytes(), Some("text/html"))?, PageVerdict::Unique { .. }));
//! match dedup.check_page("https://b.example/news/budget", b.as_bytes(), Some("text/html"))? {
//!     PageVerdict::ExactDuplicate { of } => assert_eq!(of.name, "https://a.example/budget"),
//!     other => panic!("expected a duplicate, got {other:?}"),
//! }
//! dedup.checkpoint()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod builder;
mod error;
mod host;
mod memory;
mod open;
mod stats;
mod sweeper;
pub mod template;
mod verdict;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use url::Url;

use crate::clock::Clock;
use crate::config::Config;
use crate::content::Extracted;
use crate::fingerprint::Fingerprint;
use crate::index::{Confirm, Decision, DocId, DocRecord, IndexConfig, SimhashIndex, Similarity};
use crate::ledger::Ledger;
pub use crate::ledger::StateKind;
use crate::page::{self, Prepared};
use crate::urls::{CanonicalError, Canonicalizer, SeenStats, SeenUrls};
use open::Opening;
use stats::{Counters, bump};

pub use builder::DedupBuilder;
pub use error::DedupError;
#[cfg(feature = "crawler")]
pub(crate) use memory::check as check_memory;
pub use stats::{DedupStats, WindowStats};
pub use sweeper::{SWEEP_REST, SWEEP_STEP, Sweeper};
pub use verdict::{Duplicate, Original, PageVerdict, UrlVerdict};

/// The confirmation thresholds, owned by the index that applies them.
pub use crate::index::{
    MIN_CONTAINMENT, MIN_RESEMBLANCE, MIN_SIZE_RATIO, SHORT_MIN_RESEMBLANCE, SHORT_TEXT_CHARS,
    TINY_MAX_GROWTH, TINY_MIN_RESEMBLANCE, TINY_SHINGLES,
};

pub use crate::ledger::INDEX_DIR;

/// What one step of [`Dedup::sweep`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SweepReport {
    /// Fingerprints removed from memory.
    pub fingerprints_expired: usize,
    /// Chunks of expired documents deleted from the index's sled trees.
    pub index_chunks_deleted: usize,
    /// Confirmations of forgotten URLs deleted from disk.
    pub url_confirmations_deleted: usize,
}

/// The page stage. See the [module documentation](self).
pub struct Dedup {
    state_dir: PathBuf,
    canonicalizer: Canonicalizer,
    seen: SeenUrls,
    index: SimhashIndex,
    counters: Counters,
    checkpoint_seq: AtomicU64,
    /// The state directory's ledger, raised after each checkpoint ([`crate::ledger`]).
    ledger: std::sync::Mutex<Ledger>,
    /// What each host repeats on its pages (`dedup.host_templates`; see [`template`]).
    templates: Option<template::HostTemplates>,
    /// Whether stored text keeps its host's template (`dedup.store_template_text`).
    store_template_text: bool,
}

impl std::fmt::Debug for Dedup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dedup")
            .field("state_dir", &self.state_dir)
            .field("stats", &self.stats())
            .finish()
    }
}

impl Dedup {
    /// A [`DedupBuilder`] with the default settings.
    pub fn builder() -> DedupBuilder {
        DedupBuilder::default()
    }

    /// Opens the stage on `state_dir` (created if missing), resuming what a previous run
    /// saved there. The URL filter and index keep the sizing and layout they were created
    /// with; `config` sizes new ones (`url_filter.*`, `dedup.max_distance`) and sets the
    /// rules that apply per call (canonicalization, `dedup.short_text_chars`).
    ///
    /// New URLs are journaled (see [`Dedup::sync_urls`]), so that a caller can make a "new"
    /// answer durable before it passes it on.
    ///
    /// The directory becomes this program's ([`StateKind::Library`]); one that another
    /// program keeps (a crawl's, a sidecar's) is refused unless
    /// [`DedupBuilder::share_state`] asks to share it (see [`StateKind`]).
    pub fn open(state_dir: &Path, config: &Config) -> Result<Dedup, DedupError> {
        Dedup::open_with(
            state_dir,
            config,
            Opening::stage(StateKind::Library, false, true),
        )
    }

    /// As [`Dedup::open`] for a crawl ([`StateKind::Crawl`]; `share`: in another program's
    /// directory), with the index rolled back to its first `index_documents` documents
    /// (what the crawl's last checkpoint recorded) or to the ledger's `unsettled` count if
    /// more, and without the URL journal:
    /// a crawl rolls its frontier back to the same checkpoint and finds the URLs recorded
    /// after it again, so its URL filter must not remember them. (A stage without the
    /// journal and without a roll-back: [`DedupBuilder::url_journal`].)
    #[cfg_attr(not(feature = "crawler"), allow(dead_code))]
    pub(crate) fn open_at(
        state_dir: &Path,
        config: &Config,
        index_documents: u64,
        share: bool,
    ) -> Result<Dedup, DedupError> {
        let opening = Opening {
            kind: StateKind::Crawl,
            share,
            journaled: false,
            crawl_checkpoint: Some(index_documents),
        };
        Dedup::open_with(state_dir, config, opening)
    }

    /// The state directory.
    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    /// The canonicalizer in use (the `[url_filter]` rules).
    pub fn canonicalizer(&self) -> &Canonicalizer {
        &self.canonicalizer
    }

    /// Canonicalizes `url`, checks it against the URLs seen, and records it.
    pub fn check_url(&self, url: &str) -> Result<UrlVerdict, DedupError> {
        self.record_url(self.canonicalizer.canonicalize(url))
    }

    /// As [`Dedup::check_url`], for a link `href` found on the page at `base`.
    pub fn check_link(&self, base: &Url, href: &str) -> Result<UrlVerdict, DedupError> {
        self.record_url(self.canonicalizer.canonicalize_link(base, href))
    }

    /// As [`Dedup::check_url`], for a URL that this stage's canonicalizer
    /// ([`Dedup::canonicalizer`]) already returned: it is not canonicalized again.
    pub fn check_canonical(&self, url: Url) -> Result<UrlVerdict, DedupError> {
        self.record_url(Ok(url))
    }

    fn record_url(&self, canonical: Result<Url, CanonicalError>) -> Result<UrlVerdict, DedupError> {
        bump(&self.counters.urls_checked);
        let url = match canonical {
            Ok(url) => url,
            Err(e) => {
                bump(&self.counters.urls_invalid);
                return Ok(UrlVerdict::Invalid(e));
            }
        };
        if self.seen.insert(url.as_str())? {
            bump(&self.counters.urls_new);
            Ok(UrlVerdict::New(url))
        } else {
            bump(&self.counters.urls_seen);
            Ok(UrlVerdict::Seen(url))
        }
    }

    /// Decodes and extracts the page, then decides it (see the module documentation).
    /// `url` names the page in verdicts and resolves its links; any name works when the
    /// page has no URL (a file path, say). A `content_type` other than HTML or XHTML, or a
    /// body that looks binary, gives [`PageVerdict::NoText`].
    pub fn check_page(
        &self,
        url: &str,
        body: &[u8],
        content_type: Option<&str>,
    ) -> Result<PageVerdict, DedupError> {
        Ok(self.check_page_extracted(url, body, content_type)?.0)
    }

    /// As [`Dedup::check_page`], returning the extraction too (title, text, links), for a
    /// crawler that follows the page's links.
    pub fn check_page_extracted(
        &self,
        url: &str,
        body: &[u8],
        content_type: Option<&str>,
    ) -> Result<(PageVerdict, Extracted), DedupError> {
        let base = Url::parse(url).ok();
        let Some(mut prepared) = page::prepare(body, content_type, base.as_ref()) else {
            bump(&self.counters.pages_checked);
            bump(&self.counters.pages_no_text);
            return Ok((PageVerdict::NoText, Extracted::default()));
        };
        // The text handed back is without the host's template, as a crawl stores it.
        self.drop_template(url, &mut prepared);
        let verdict = self.decide(url, &prepared)?;
        let links = prepared.links();
        let mut extracted = prepared.extracted;
        extracted.links = links;
        Ok((verdict, extracted))
    }

    /// Decides a page that [`page::prepare`] made ready (on any thread), and records it:
    /// the one decision call that every way in ends with. `name` is the page's URL, or any
    /// name when it has none.
    pub fn decide(&self, name: &str, prepared: &Prepared) -> Result<PageVerdict, DedupError> {
        let Some(page) = self.page_record(name, prepared) else {
            bump(&self.counters.pages_checked);
            bump(&self.counters.pages_no_text);
            return Ok(PageVerdict::NoText);
        };
        bump(&self.counters.pages_checked);
        let fingerprint = (page.record.simhash, page.record.digest);
        let mut page = page;
        let (record, probe) = page.split();
        let (decision, nearest) = self.index.check_and_insert_probed(record, &probe)?;
        let verdict = self.verdict(decision, nearest, fingerprint)?;
        self.learn_page_template(&verdict, &page);
        Ok(verdict)
    }

    /// Decides a main text that the caller extracted itself; what its host repeats on its
    /// pages is left out of the comparison, as for a page.
    pub fn check_text(&self, name: &str, text: &str) -> Result<PageVerdict, DedupError> {
        self.decide(name, &Prepared::from_text(text.to_string()))
    }

    /// As [`Dedup::check_text`], with the text's fingerprint already computed (by
    /// [`Fingerprint::of`], on a worker thread, say), so that the caller's decision loop
    /// only does the index lookup. `fingerprint` must be the fingerprint of `text`. The
    /// text is compared as it is: no host template is dropped or learned.
    pub fn check_fingerprinted(
        &self,
        name: &str,
        text: &str,
        fingerprint: &Fingerprint,
    ) -> Result<PageVerdict, DedupError> {
        bump(&self.counters.pages_checked);
        if fingerprint.tokens == 0 {
            bump(&self.counters.pages_no_text);
            return Ok(PageVerdict::NoText);
        }
        let record = DocRecord::for_rule(name, text, fingerprint, self.index.confirm());
        let (decision, nearest) = self.index.check_and_insert_nearest(record)?;
        self.verdict(decision, nearest, (fingerprint.simhash, fingerprint.digest))
    }

    /// The verdict on a page fetched again (a recrawl, `url_filter.recrawl_after`) whose
    /// earlier version is stored under id `earlier` with main-text digest `earlier_digest`:
    ///
    /// - the same main text: an exact duplicate of that earlier version, whether or not the
    ///   index still holds it (a retention window may have dropped it);
    /// - a changed one: decided as any page, except that a match with its own earlier
    ///   version (the same id, or the same name) does not count: the new version is stored
    ///   as unique. A changed page that now repeats another page is that page's duplicate.
    pub fn decide_revisit(
        &self,
        name: &str,
        prepared: &Prepared,
        earlier: DocId,
        earlier_digest: crate::Digest,
    ) -> Result<PageVerdict, DedupError> {
        bump(&self.counters.pages_checked);
        let Some(page) = self.page_record(name, prepared) else {
            bump(&self.counters.pages_no_text);
            return Ok(PageVerdict::NoText);
        };
        let record = page.record.clone();
        let fingerprint = (record.simhash, record.digest);
        if record.digest == earlier_digest {
            bump(&self.counters.pages_exact);
            return Ok(PageVerdict::ExactDuplicate {
                of: Original {
                    id: earlier,
                    name: name.to_string(),
                },
            });
        }
        let (decision, nearest) = match self.index.find_probed(&record, &page.probe())? {
            Some(Decision::Exact(of) | Decision::Near { of, .. })
                if of == earlier || self.original(of)?.name == name =>
            {
                (Decision::Unique(self.index.insert(record)?), None)
            }
            _ => self.index.check_and_insert_probed(record, &page.probe())?,
        };
        let verdict = self.verdict(decision, nearest, fingerprint)?;
        self.learn_page_template(&verdict, &page);
        Ok(verdict)
    }

    fn verdict(
        &self,
        decision: Decision,
        nearest: Option<Similarity>,
        (simhash, digest): (crate::Simhash, crate::Digest),
    ) -> Result<PageVerdict, DedupError> {
        Ok(match decision {
            Decision::Unique(id) => {
                bump(&self.counters.pages_unique);
                PageVerdict::Unique {
                    id,
                    simhash,
                    digest,
                    nearest,
                }
            }
            Decision::Exact(id) => {
                bump(&self.counters.pages_exact);
                PageVerdict::ExactDuplicate {
                    of: self.original(id)?,
                }
            }
            Decision::Near {
                of,
                distance,
                similarity,
            } => {
                bump(&self.counters.pages_near);
                PageVerdict::NearDuplicate {
                    of: self.original(of)?,
                    distance,
                    similarity,
                }
            }
        })
    }

    /// The fingerprint of a prepared page as the index records it (with its lines' profile
    /// for a page with a host); `None` when it has no words (counted as no text).
    #[cfg_attr(not(all(feature = "crawler", feature = "cluster")), allow(dead_code))]
    pub(crate) fn record_of(&self, name: &str, prepared: &Prepared) -> Option<DocRecord> {
        bump(&self.counters.pages_checked);
        let page = self.page_record(name, prepared);
        if page.is_none() {
            bump(&self.counters.pages_no_text);
        }
        page.map(|p| p.record)
    }

    fn original(&self, id: DocId) -> Result<Original, DedupError> {
        let name = self
            .index
            .get(id)?
            .map(|record| record.name)
            .unwrap_or_default();
        Ok(Original { id, name })
    }

    /// Uses `clock` for every decision by age: when a fingerprint falls out of the
    /// retention window, when a URL comes due again (the system clock by default).
    pub fn with_clock(self, clock: Arc<dyn Clock>) -> Dedup {
        Dedup {
            seen: self.seen.with_clock(clock.clone()),
            index: self.index.with_clock(clock),
            ..self
        }
    }

    /// One bounded step of the background sweep of both windows: at most `most`
    /// fingerprints that fell out of the retention window leave memory (and the chunks a
    /// checkpoint recorded as expired leave sled), and at most `most` confirmations of
    /// forgotten URLs leave the disk. Expired entries stop matching whether or not they
    /// were swept; a caller runs this between pages (the crawler and the sidecar do, on a
    /// blocking thread) to keep memory and disk flat. Without windows it does nothing.
    pub fn sweep(&self, most: usize) -> Result<SweepReport, DedupError> {
        let index = self.index.sweep(most)?;
        let urls = self.seen.sweep(most)?;
        Ok(SweepReport {
            fingerprints_expired: index.expired,
            index_chunks_deleted: index.chunks_deleted,
            url_confirmations_deleted: urls,
        })
    }

    /// The time on the stage's clock, in seconds since the Unix epoch.
    pub fn now(&self) -> u64 {
        self.seen.now()
    }

    /// The stage's clock (a cluster worker measures the shared windows on it).
    #[cfg(all(feature = "crawler", feature = "cluster"))]
    pub(crate) fn clock(&self) -> Arc<dyn Clock> {
        self.seen.clock()
    }

    /// The recrawl interval (`url_filter.recrawl_after`), if URLs come due again.
    pub fn recrawl_after(&self) -> Option<std::time::Duration> {
        self.seen.config().expire_after
    }

    /// Whether either window is on (there is something to sweep).
    pub fn has_windows(&self) -> bool {
        self.index.retention().is_some() || self.seen.config().expire_after.is_some()
    }

    /// The figures of the time windows.
    pub fn window_stats(&self) -> WindowStats {
        let retention = self.index.retention_stats();
        let seen = self.seen.stats();
        WindowStats {
            retention_secs: retention.window_secs,
            oldest_live_fingerprint: retention.oldest_live,
            fingerprints_expired: retention.expired,
            live_documents: self.index.live(),
            recrawl_after_secs: seen.expire_after.map(|d| d.as_secs()),
            url_generations: seen.generations,
            urls_expired: seen.expired,
        }
    }

    /// Saves the URL filter (atomically) and flushes the index: everything recorded before
    /// this call survives a crash.
    pub fn checkpoint(&self) -> Result<(), DedupError> {
        let seq = self.checkpoint_seq.fetch_add(1, Ordering::SeqCst) + 1;
        self.index.checkpoint()?;
        self.seen.save(&self.state_dir, seq)?;
        self.save_templates()?;
        self.raise_ledger(self.index.durable_documents(), None)?;
        bump(&self.counters.checkpoints);
        Ok(())
    }

    /// Closes the stage: a checkpoint (the URL filter saved, the index flushed, the ledger
    /// raised), then the index closed with its snapshot written for the next open. Returns
    /// what the index's close did; an error names what failed, and everything the
    /// checkpoint made durable stays. Dropping a stage without closing it does the same
    /// (the snapshot at least) but can only log a failure.
    pub fn close(self) -> Result<crate::index::CloseReport, DedupError> {
        self.checkpoint()?;
        let Dedup { index, .. } = self;
        Ok(index.close()?)
    }

    /// Closes the index alone, for a crawl whose own last checkpoint already saved the rest
    /// (the URL filter with the crawl's checkpoint number, the ledger).
    #[cfg_attr(not(feature = "crawler"), allow(dead_code))]
    pub(crate) fn close_index(self) -> Result<crate::index::CloseReport, DedupError> {
        let Dedup { index, .. } = self;
        Ok(index.close()?)
    }

    /// Makes every page stored so far durable before it returns (a group commit: see
    /// [`SimhashIndex::sync`]); what a caller answers after this call survives a kill -9.
    pub fn sync_pages(&self) -> Result<(), DedupError> {
        self.index.sync()?;
        Ok(())
    }

    /// Makes every URL answered [`UrlVerdict::New`] so far durable before it returns (one
    /// sync of the URL journal shared by every caller waiting at that moment): after a
    /// kill -9, those URLs are [`UrlVerdict::Seen`]. Without the journal (a stage opened
    /// with [`DedupBuilder::url_journal`] off, or by a crawl) URLs are durable at checkpoints only and this does nothing.
    pub fn sync_urls(&self) -> Result<(), DedupError> {
        self.seen.sync()?;
        Ok(())
    }

    /// Writes and flushes the index alone, and returns how many documents it holds (a
    /// crawl records this number in its own checkpoint).
    pub fn flush_index(&self) -> Result<u64, DedupError> {
        self.index.checkpoint()?;
        Ok(self.index.len())
    }

    /// Saves the URL filter alone.
    pub fn save_urls(&self) -> Result<(), DedupError> {
        let seq = self.checkpoint_seq.fetch_add(1, Ordering::SeqCst) + 1;
        self.seen.save(&self.state_dir, seq)?;
        Ok(())
    }

    /// Bytes of the index's database on disk (0 when sled cannot say).
    pub fn index_disk_bytes(&self) -> u64 {
        self.index.disk_bytes()
    }

    /// Counters since opening, and the sizes of the filter and index.
    pub fn stats(&self) -> DedupStats {
        let c = &self.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let seen: SeenStats = self.seen.stats();
        let snapshots = self.index.snapshot_stats();
        DedupStats {
            urls_checked: get(&c.urls_checked),
            urls_new: get(&c.urls_new),
            urls_seen: get(&c.urls_seen),
            urls_invalid: get(&c.urls_invalid),
            pages_checked: get(&c.pages_checked),
            pages_unique: get(&c.pages_unique),
            pages_exact_duplicate: get(&c.pages_exact),
            pages_near_duplicate: get(&c.pages_near),
            pages_no_text: get(&c.pages_no_text),
            candidates_refused: self.index.candidates_refused(),
            indexed_documents: self.index.len(),
            seen_urls: seen.count,
            seen_filter_bytes: seen.bytes,
            seen_fill_ratio: seen.count as f64 / seen.capacity.max(1) as f64,
            seen_fp_rate: seen.expected_fp_rate,
            checkpoints: get(&c.checkpoints),
            snapshot_documents: snapshots.documents,
            snapshots_written: snapshots.written,
            windows: self.window_stats(),
        }
    }
}

/// The index settings `config` asks for (the local index's, and the cluster's).
pub fn index_config(config: &Config) -> IndexConfig {
    IndexConfig {
        max_distance: config.dedup.max_distance,
        expected: config.url_filter.expected_urls,
        blocks: None,
        confirm: Confirm {
            short_text_chars: u32::try_from(config.dedup.short_text_chars).unwrap_or(u32::MAX),
            ..Confirm::default()
        },
        reserve: config.dedup.expected_pages,
        background_snapshots: config.dedup.background_snapshots,
        retention: config.dedup.retention.map(|w| w.0),
    }
}
