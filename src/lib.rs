//! # crawldedup
//!
//! Keeps a web crawl free of repeats at both levels: the same URL is not fetched twice,
//! and the same (or nearly the same) content is not stored twice.
//!
//! ```text
//! seed / found link
//!   -> urls::canonical      canonical form of the URL (one string per resource)
//!   -> urls::seen           tuned Bloom filter: seen before? -> drop
//!   -> fetch                (the crawler, or yours)
//!   -> content              bytes -> UTF-8 -> main text without boilerplate
//!   -> fingerprint          exact digest + 64-bit simhash of the main text
//!   -> index                permuted-table simhash index: near-duplicate?
//!   -> verdict              unique pages are stored, duplicates recorded
//! ```
//!
//! The URL layer walks one link through the first two steps: canonicalize it, then check
//! and record it in one call.
//!
//! ```
//! use crawldedup::{Canonicalizer, SeenConfig, SeenUrls};
//!
//! // Default rules: tracking parameters and session ids dropped, parameters sorted.
//! let canon = Canonicalizer::default();
//! // Sized for the crawl you expect; past that it grows and keeps its error bound.
//! let seen = SeenUrls::new(SeenConfig { expected_urls: 100_000, ..SeenConfig::default() })?;
//!
//! let base = url::Url::parse("https://example.com/news/")?;
//! let first = canon.canonicalize_link(&base, "story?id=7&utm_source=feed#comments")?;
//! let again = canon.canonicalize_link(&base, "/news/story?id=7")?;
//! assert_eq!(first, again);
//!
//! // `insert` answers "seen before?" and records the URL in one atomic step.
//! assert!(!seen.insert(first.as_str())?); // new: fetch it
//! assert!(seen.insert(again.as_str())?); // seen: drop it
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]
#![doc(test(attr(deny(warnings))))]

pub mod adapters;
pub mod config;
pub mod content;
pub mod crawl;
pub mod dedup;
pub mod demo;
pub mod fingerprint;
pub mod fixture;
pub mod index;
pub mod urls;

pub use config::{Config, ConfigError};
pub use dedup::{Dedup, DedupError, DedupStats, Original, PageVerdict, UrlVerdict};
pub use fingerprint::{Digest, Fingerprint, Simhash};
pub use index::{Decision, DocId, DocRecord, IndexConfig, SimhashIndex};
pub use urls::{
    BloomParams, CanonicalError, CanonicalOptions, Canonicalizer, SeenConfig, SeenError, SeenStats,
    SeenUrls,
};
