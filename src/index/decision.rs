//! The index's settings and its answer: the layout, what a page adds to its lookup, the
//! decision and the likeness it was made on. How a candidate is confirmed is
//! [`Confirm`]'s.

use super::Confirm;
use super::DocId;
use crate::fingerprint::Sketch;

/// How an index is laid out. `#[non_exhaustive]`: start from [`IndexConfig::default`] and
/// change what differs with the `with_` setters (or the fields).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct IndexConfig {
    /// Largest distance called a near-duplicate (k).
    pub max_distance: u32,
    /// Expected fingerprints (n), to choose the layout.
    pub expected: u64,
    /// Fix the number of blocks instead of choosing it from n.
    pub blocks: Option<u32>,
    /// When a candidate is a near-duplicate.
    pub confirm: Confirm,
    /// Documents to make room for when the index opens (`dedup.expected_pages`): tables
    /// sized for this many never grow on the way there (a growth re-places every entry of
    /// every table, a second or more of work at 10 M documents, done a group of tables at a
    /// time while decisions wait), at the cost of their memory from the start. 0 lets the
    /// tables grow as documents come.
    pub reserve: u64,
    /// Write snapshots in the background after checkpoints (`dedup.background_snapshots`;
    /// see `upkeep`). A snapshot at close is written either way.
    pub background_snapshots: bool,
    /// Keep fingerprints for this long (`dedup.retention`): a document stored longer ago
    /// no longer matches, and [`SimhashIndex::sweep`](super::SimhashIndex::sweep) removes
    /// it from memory and from sled. `None` keeps everything.
    pub retention: Option<std::time::Duration>,
}

/// The default candidate radius k: stored simhashes within this many bits are candidates
/// (`dedup.max_distance` in crawler.toml).
pub const DEFAULT_MAX_DISTANCE: u32 = 3;

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            max_distance: DEFAULT_MAX_DISTANCE,
            expected: 10_000_000,
            blocks: None,
            confirm: Confirm::default(),
            reserve: 0,
            background_snapshots: true,
            retention: None,
        }
    }
}

impl IndexConfig {
    /// With `max_distance` (k).
    pub fn with_max_distance(mut self, max_distance: u32) -> IndexConfig {
        self.max_distance = max_distance;
        self
    }

    /// With `expected` fingerprints (n).
    pub fn with_expected(mut self, expected: u64) -> IndexConfig {
        self.expected = expected;
        self
    }

    /// With the number of blocks fixed (`None`: chosen from n).
    pub fn with_blocks(mut self, blocks: Option<u32>) -> IndexConfig {
        self.blocks = blocks;
        self
    }

    /// With this confirmation rule.
    pub fn with_confirm(mut self, confirm: Confirm) -> IndexConfig {
        self.confirm = confirm;
        self
    }

    /// With room made for `reserve` documents when the index opens.
    pub fn with_reserve(mut self, reserve: u64) -> IndexConfig {
        self.reserve = reserve;
        self
    }

    /// With snapshots in the background after checkpoints, or not.
    pub fn with_background_snapshots(mut self, on: bool) -> IndexConfig {
        self.background_snapshots = on;
        self
    }

    /// With a retention window (`None` keeps everything).
    pub fn with_retention(mut self, retention: Option<std::time::Duration>) -> IndexConfig {
        self.retention = retention;
        self
    }
}

/// What a page adds to its lookup beyond its record.
#[derive(Debug, Clone, Copy, Default)]
pub struct Probe<'a> {
    /// The simhash and sketch of the page's whole text, when the record's are of its text
    /// without its host's template: the pages of the host stored before the template was
    /// known are found by these.
    pub whole: Option<(crate::fingerprint::Simhash, &'a Sketch)>,
    /// The simhash and sketch of the page's text ([`crate::Prepared::page_text`]: the whole
    /// page outside its menus), when its main text is short and the page text holds much
    /// more: a page of its host stored with a main text that took the page's rails is
    /// found by these.
    pub page: Option<(crate::fingerprint::Simhash, &'a Sketch)>,
    /// Ids of the host's last pages decided unique, candidates of a short page whatever
    /// their keys: extraction may have taken a page's rails with its short story on one
    /// page and the story alone on another, and neither text's keys then find the other.
    pub recent: &'a [u64],
    /// Which keys of the page's lines are its host's template, sorted: left out when the
    /// page is compared with a page of its host ([`Confirm::judge_blocks`]). (A line
    /// of the stored page alone is not looked up: it is that page's own, or the template
    /// as it was.)
    pub template: &'a [u32],
}

/// What the index decided for a fingerprint.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Decision {
    /// Nothing like it was there; it is now stored under this id.
    Unique(DocId),
    /// The same digest (and simhash) is stored under this id; the lowest such id.
    Exact(DocId),
    /// A candidate confirmed on its sketch is stored under this id (the most similar; the
    /// lowest id on a tie).
    Near {
        /// The stored document.
        of: DocId,
        /// Hamming distance between the simhashes (over k when the bands found it).
        distance: u32,
        /// The estimates it was confirmed on.
        similarity: Similarity,
    },
}

/// Estimated likeness of two texts, from their sketches ([`Sketch`]).
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct Similarity {
    /// Estimated Jaccard similarity of the two sets of word 3-shingles.
    pub resemblance: f64,
    /// Estimated share of the smaller text's shingles found in the larger.
    pub containment: f64,
}

/// Largest Hamming distance the index supports: beyond it simhash stops separating
/// near-duplicates from unrelated pages and the tables multiply.
pub const MAX_DISTANCE_LIMIT: u32 = 8;

/// `x` to three decimals, as the JSON outputs print estimates.
pub(crate) fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
