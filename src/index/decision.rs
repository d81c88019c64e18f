//! The index's answer and how a candidate is confirmed: settings, decisions, similarity
//! estimates and the confirmation policy.

use super::DocId;
use crate::fingerprint::Sketch;

/// How an index is laid out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IndexConfig {
    /// Largest distance called a near-duplicate (k).
    pub max_distance: u32,
    /// Expected fingerprints (n), to choose the layout.
    pub expected: u64,
    /// Fix the number of blocks instead of choosing it from n.
    pub blocks: Option<u32>,
    /// When a candidate is a near-duplicate.
    pub confirm: ConfirmPolicy,
    /// Documents to make room for when the index opens (`dedup.expected_pages`): tables
    /// sized for this many never grow on the way there (a growth re-places every entry of
    /// every table, seconds at 10 M documents), at the cost of their memory from the
    /// start. 0 lets the tables grow as documents come.
    pub reserve: u64,
    /// Write snapshots in the background after checkpoints (`dedup.background_snapshots`;
    /// see [`upkeep`](super::upkeep)). A snapshot at close is written either way.
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
            confirm: ConfirmPolicy::default(),
            reserve: 0,
            background_snapshots: true,
            retention: None,
        }
    }
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

/// When a candidate is called a near-duplicate: its estimated resemblance reaches
/// `min_resemblance` (`short_min_resemblance` when either text is shorter than
/// `short_text_chars`, `tiny_min_resemblance` when either has fewer than `tiny_shingles`
/// distinct shingles), or, for two long texts of which the smaller has at least
/// `min_size_ratio` of the larger's shingles, its estimated containment reaches
/// `min_containment` (an article with a comment thread appended, say).
///
/// The defaults and their measurement are in [`crate::dedup`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConfirmPolicy {
    /// Resemblance that confirms a candidate between long texts.
    pub min_resemblance: f64,
    /// Resemblance that confirms a candidate when either text is short.
    pub short_min_resemblance: f64,
    /// Texts under this many characters are short.
    pub short_text_chars: u32,
    /// Containment that confirms a candidate between long texts.
    pub min_containment: f64,
    /// Containment is only considered when the smaller shingle set is at least this share
    /// of the larger.
    pub min_size_ratio: f64,
    /// Texts with fewer distinct shingles than this are tiny.
    pub tiny_shingles: u32,
    /// Resemblance that confirms a candidate when either text is tiny.
    pub tiny_min_resemblance: f64,
}

impl Default for ConfirmPolicy {
    fn default() -> Self {
        ConfirmPolicy {
            min_resemblance: crate::dedup::MIN_RESEMBLANCE,
            short_min_resemblance: crate::dedup::SHORT_MIN_RESEMBLANCE,
            short_text_chars: 500,
            min_containment: crate::dedup::MIN_CONTAINMENT,
            min_size_ratio: crate::dedup::MIN_SIZE_RATIO,
            tiny_shingles: crate::dedup::TINY_SHINGLES,
            tiny_min_resemblance: crate::dedup::TINY_MIN_RESEMBLANCE,
        }
    }
}

impl ConfirmPolicy {
    /// Whether either of two texts with these sketches is tiny.
    pub fn tiny(&self, a: &Sketch, b: &Sketch) -> bool {
        a.shingles.min(b.shingles) < self.tiny_shingles
    }

    /// [`ConfirmPolicy::judge`] on two whole records: compared on their exact shingle sets
    /// when both are tiny and carry them, else on their sketches.
    pub fn judge_records(&self, a: &super::DocRecord, b: &super::DocRecord) -> (Similarity, bool) {
        let both_tiny = a.sketch.shingles < self.tiny_shingles
            && b.sketch.shingles < self.tiny_shingles
            && !a.tiny_set.is_empty()
            && !b.tiny_set.is_empty();
        let exact = both_tiny.then(|| exact_similarity(&a.tiny_set, &b.tiny_set));
        let chars = |r: &super::DocRecord| u32::try_from(r.text_chars).unwrap_or(u32::MAX);
        self.judge((&a.sketch, chars(a)), (&b.sketch, chars(b)), exact)
    }

    /// The likeness of a pair, and whether it confirms the pair. `exact` holds the pair's
    /// exact resemblance and containment when they are known (two tiny texts, compared on
    /// their whole shingle sets); otherwise the sketches' estimates are used.
    pub fn judge(
        &self,
        a: (&Sketch, u32),
        b: (&Sketch, u32),
        exact: Option<Similarity>,
    ) -> (Similarity, bool) {
        let ((a, a_chars), (b, b_chars)) = (a, b);
        let similarity = exact.unwrap_or_else(|| Similarity {
            resemblance: a.resemblance(b),
            containment: a.containment(b),
        });
        let short = a_chars.min(b_chars) < self.short_text_chars;
        let confirmed = if self.tiny(a, b) {
            similarity.resemblance >= self.tiny_min_resemblance
        } else if short {
            similarity.resemblance >= self.short_min_resemblance
        } else {
            let (small, large) = (
                a.shingles.min(b.shingles) as f64,
                a.shingles.max(b.shingles) as f64,
            );
            similarity.resemblance >= self.min_resemblance
                || (similarity.containment >= self.min_containment
                    && small >= self.min_size_ratio * large)
        };
        (similarity, confirmed)
    }
}

/// Exact resemblance and containment of two sorted sets without repeats.
pub fn exact_similarity<T: Ord>(a: &[T], b: &[T]) -> Similarity {
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - common;
    Similarity {
        resemblance: common as f64 / union.max(1) as f64,
        containment: common as f64 / a.len().min(b.len()).max(1) as f64,
    }
}
