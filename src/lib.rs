//! # crawldedup
//!
//! Keeps a web crawl free of repeats at both levels: the same URL is not fetched twice,
//! and the same (or nearly the same) content is not stored twice.
//!
//! ```text
//! seed / found link
//!   -> urls::canonical      canonical form of the URL (one string per resource)
//!   -> urls::seen           tuned Bloom filter: seen before? -> drop
//!   -> fetch                (crawl::Crawler, or your crawler)
//!   -> page::prepare        is it a page? bytes -> UTF-8 (content::decode) -> main text
//!                           without boilerplate (content::extract) -> exact digest, 64-bit
//!                           simhash and 64-byte MinHash sketch of its word 3-shingles
//!                           (fingerprint)
//!   -> Dedup::decide        candidates from permuted simhash tables and sketch bands
//!                           (index), each confirmed on its sketch: near-duplicate?
//!   -> store::PageSink      unique pages stored, duplicates recorded (JSONL, WARC, yours)
//! ```
//!
//! One page's way through the stage, as a crawler of your own drives it: ask about the
//! URL before fetching, about the body after, and checkpoint now and then.
//!
//! ```
//! use crawldedup::{Dedup, PageVerdict, UrlVerdict};
//!
//! // The stage keeps its URL filter and simhash index in a state directory; opening it
//! // again resumes from the last checkpoint.
//! let state = tempfile::tempdir()?;
//! let dedup = Dedup::builder().expected_urls(1_000_000).open(state.path())?;
//!
//! // Before a fetch: canonicalized, checked and recorded in one atomic step.
//! let url = match dedup.check_url("https://example.com/news/story?id=7&utm_source=feed")? {
//!     UrlVerdict::New(canonical) => canonical,    // fetch this
//!     _ => unreachable!("the first time, a URL is new"),
//! };
//! assert_eq!(url.as_str(), "https://example.com/news/story?id=7");
//! // A variant of the same URL is not fetched again.
//! assert!(matches!(dedup.check_url("https://EXAMPLE.com/news/story?id=7#top")?, UrlVerdict::Seen(_)));
//!
//! // After the fetch: boilerplate stripped, main text fingerprinted, checked and recorded.
//! let text = "<p>The harbour authority reopened the north quay on Monday after six weeks of \
//!     repairs to the sea wall, which storms had cracked in two places last winter. Fishing \
//!     boats return to their moorings this week; the ferry keeps the south berth. The \
//!     authority thanked the divers and masons who worked through the spring tides, and said \
//!     the harbour cafe reopens on Saturday with a small exhibition about the repairs.</p>";
//! let page = format!("<html><body><nav><a href=/>Home</a></nav><article>{text}</article></body></html>");
//! let verdict = dedup.check_page(url.as_str(), page.as_bytes(), Some("text/html"))?;
//! assert!(matches!(verdict, PageVerdict::Unique { .. }));   // store it
//!
//! // The same story in another site's template is a duplicate: record it, do not store it.
//! let syndicated = format!("<html><body><div class=menu><a href=/x>Sections</a></div><main>{text}</main><footer>(c) News</footer></body></html>");
//! match dedup.check_page("https://mirror.example/quay", syndicated.as_bytes(), Some("text/html"))? {
//!     PageVerdict::ExactDuplicate { of } => assert_eq!(of.name, url.as_str()),
//!     other => panic!("{other:?}"),
//! }
//!
//! // A lightly edited copy (a correction at the end) is a near-duplicate, with the
//! // estimated resemblance of the two texts it was confirmed on.
//! let corrected = text.replace("south berth.", "south berth until May.");
//! let edited = format!("<html><body><article>{corrected}</article></body></html>");
//! match dedup.check_page("https://example.com/news/story?id=8", edited.as_bytes(), Some("text/html"))? {
//!     PageVerdict::NearDuplicate { of, similarity, .. } => {
//!         assert_eq!(of.name, url.as_str());
//!         assert!(similarity.resemblance >= 0.5);
//!     }
//!     other => panic!("{other:?}"),
//! }
//!
//! // A checkpoint makes everything recorded so far survive a crash (kill -9 included).
//! dedup.checkpoint()?;
//! assert_eq!(dedup.stats().pages_unique, 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`Dedup::check_page`] is the path every caller takes, the crawler included:
//! [`page::prepare`] (the "is a page" rule, decoding, extraction and fingerprint, without
//! touching the stage's state; run it on any thread) and then [`Dedup::decide`] (the index's
//! answer, recorded in one atomic step). A crawler that prepares pages on its fetch workers
//! calls the two itself, as `crawldedup crawl` does.
//!
//! Four ways in: call [`Dedup`] from a crawler of your own (`examples/embed.rs` is a
//! minimal one), attach it to a `spider` crawl (`adapters::spider`, feature `spider`),
//! run `crawldedup serve` and talk HTTP/JSON from any language ([`adapters::serve`];
//! `examples/scrapy/` has a Scrapy middleware), or embed the focused crawler built on the same
//! stage ([`Crawler`], what `crawldedup crawl` runs) and receive its pages through a
//! [`PageSink`] ([`store`]).
//!
//! For a crawl on several machines, [`cluster`] holds the parts shared through Redis
//! Cluster: the host ring that gives each host to one worker, the URL filter every worker
//! checks, membership by heartbeat, and the inboxes that carry links to a host's owner.
#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]
// Without the optional parts (the crawler, the sidecar, the cluster), the docs still name
// them; their links resolve in the default build.
#![cfg_attr(
    not(all(feature = "crawler", feature = "sidecar", feature = "fixture")),
    allow(rustdoc::broken_intra_doc_links)
)]
#![doc(test(attr(deny(warnings))))]

pub mod adapters;
#[cfg(feature = "archive")]
pub mod archive;
pub mod clock;
#[cfg(feature = "cluster")]
pub mod cluster;
pub mod config;
pub mod content;
#[cfg(feature = "crawler")]
pub mod crawl;
mod db;
pub mod dedup;
#[cfg(all(feature = "crawler", feature = "fixture"))]
#[doc(hidden)]
pub mod demo;
#[cfg(feature = "failpoints")]
#[doc(hidden)]
pub mod faults;
#[cfg(not(feature = "failpoints"))]
mod faults {
    //! Without the `failpoints` feature, a fault point is nothing.

    /// Nothing (the `failpoints` feature is off).
    #[inline(always)]
    pub(crate) fn point(_name: &str) {}

    /// Nothing (the `failpoints` feature is off).
    #[inline(always)]
    #[allow(dead_code)]
    pub(crate) fn point_prepared(_name: &str, _prepare: impl FnOnce()) {}
}
pub mod fingerprint;
#[cfg(feature = "metrics")]
pub mod metrics;
// Internal: public for the crate's own tests and benchmarks, not part of the API.
#[doc(hidden)]
pub mod fixture;
pub mod index;
pub(crate) mod ledger;
pub mod page;
mod sealed;
#[cfg(feature = "crawler")]
pub mod state;
mod state_id;
pub mod store;
mod text;
pub mod urls;

pub use config::{Config, ConfigError};
#[cfg(feature = "crawler")]
pub use crawl::{CrawlError, CrawlSummary, Crawler};
pub use db::DatabaseError;
pub use dedup::{Dedup, DedupBuilder, DedupError, DedupStats, Original, PageVerdict, UrlVerdict};
pub use fingerprint::{Digest, Fingerprint, Simhash};
pub use index::{DocId, Similarity};
pub use page::{Prepared, prepare};
pub use store::{PageSink, StoredPage};
pub use urls::{
    BloomParams, CanonicalError, CanonicalOptions, Canonicalizer, SeenConfig, SeenError, SeenStats,
    SeenUrls,
};
