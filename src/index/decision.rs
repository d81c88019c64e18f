//! The index's answer and how a candidate is confirmed: settings, decisions, similarity
//! estimates and the confirmation policy.

use super::DocId;
use crate::fingerprint::blocks::{Blocks, Line};
use crate::fingerprint::{Sketch, TINY_PROSE, tiny_key};

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
    /// every table, a second or more of work at 10 M documents, done a group of tables at a
    /// time while decisions wait), at the cost of their memory from the start. 0 lets the
    /// tables grow as documents come.
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

/// What a page adds to its lookup beyond its record.
#[derive(Debug, Clone, Copy, Default)]
pub struct Probe<'a> {
    /// The simhash and sketch of the page's whole text, when the record's are of its text
    /// without its host's template: the pages of the host stored before the template was
    /// known are found by these.
    pub whole: Option<(crate::fingerprint::Simhash, &'a Sketch)>,
    /// Which keys of the page's lines are its host's template, sorted: left out when the
    /// page is compared with a page of its host ([`ConfirmPolicy::judge_blocks`]). (A line
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

/// A candidate between two long texts is a near-duplicate at this estimated resemblance
/// (Jaccard similarity of their word 3-shingle sets) or above. The all-pairs evaluation
/// (`examples/eval_pairs.rs`; figures in [`crate::fingerprint`]) calls pairs of exact
/// resemblance 0.5 and over genuine near-duplicates; the estimate from 64 bins has a
/// standard error of about 0.06 there, so at 0.5 related pages of exact resemblance
/// 0.40-0.49 passed too (25 of the 36 false pairs among Chinese man pages). At 0.55 the
/// edited copies lose nothing measurable (a copy with 5% of its words replaced keeps about
/// 0.74, 0.62 at the 1st percentile; two different articles of one site stay under 0.2).
pub const MIN_RESEMBLANCE: f64 = 0.55;

/// The same threshold when either text is shorter than `dedup.short_text_chars`.
pub const SHORT_MIN_RESEMBLANCE: f64 = 0.5;

/// Texts with fewer distinct word 3-shingles than this (about as many words) are tiny: a
/// product name and a price in a shared template are the whole of what tells two such
/// pages apart, and a copy with a few words changed looks exactly like them. The shingles
/// are counted as words ([`Sketch::word_shingles`]): a token of the fingerprint is a
/// character of Chinese, Japanese or Thai, so 40 distinct shingles of Chinese are about 24
/// words, and 40 words of Chinese are about 68 shingles.
pub const TINY_SHINGLES: u32 = 40;

/// Tiny texts are compared exactly, on their whole shingle sets (kept in their records),
/// and are near-duplicates only when the sets are the same: texts that differ only in case,
/// punctuation, spacing or Unicode forms. One changed word (a product name) already makes
/// another page.
pub const TINY_MIN_RESEMBLANCE: f64 = 1.0;

/// A tiny text is also the near-duplicate of a text that holds every one of its shingles,
/// has at most this many times as many and adds at most a sentence to it ([`OWN_WORDS`]
/// of prose: the tiny text with a headline, a date line and a footer around it, a brief's
/// page in another template, or with a sentence appended). Both
/// shingle sets must be known exactly ([`tiny_likeness`]): a record keeps its set when its
/// text is under [`SMALL_SET_FACTOR`] times [`TINY_SHINGLES`] (counted as words). A tiny
/// teaser inside a longer article is not the article's near-duplicate: the article has more
/// than this; nor is a page of the brief and a second brief: what that adds is more prose
/// ([`crate::fingerprint::TINY_PROSE`]) than a sentence, and would be lost.
pub const TINY_MAX_GROWTH: f64 = 2.0;

/// Records of texts under this many times [`TINY_SHINGLES`] shingles (counted as words)
/// keep their whole shingle set, so that a tiny text is compared exactly with them.
pub const SMALL_SET_FACTOR: u32 = 2;

/// A candidate between two long texts is also a near-duplicate when this share of the
/// smaller text's shingles is estimated to be in the larger (an article with a long
/// comment thread appended).
pub const MIN_CONTAINMENT: f64 = 0.9;

/// Containment only counts when the smaller text has at least this share of the larger's
/// shingles: a very small text inside a large one is estimated too loosely from 64 bins.
pub const MIN_SIZE_RATIO: f64 = 0.3;

/// Texts shorter than this (in characters) are short: their candidates are confirmed at
/// [`SHORT_MIN_RESEMBLANCE`] (`dedup.short_text_chars`). The length is the text's size,
/// [`crate::Fingerprint::chars`]: about 80 words in every script (500 characters of
/// English, 135 of Chinese).
pub const SHORT_TEXT_CHARS: u32 = 500;

/// Largest Hamming distance the index supports: beyond it simhash stops separating
/// near-duplicates from unrelated pages and the tables multiply.
pub const MAX_DISTANCE_LIMIT: u32 = 8;

/// `x` to three decimals, as the JSON outputs print estimates.
pub(crate) fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

impl Default for ConfirmPolicy {
    fn default() -> Self {
        ConfirmPolicy {
            min_resemblance: MIN_RESEMBLANCE,
            short_min_resemblance: SHORT_MIN_RESEMBLANCE,
            short_text_chars: SHORT_TEXT_CHARS,
            min_containment: MIN_CONTAINMENT,
            min_size_ratio: MIN_SIZE_RATIO,
            tiny_shingles: TINY_SHINGLES,
            tiny_min_resemblance: TINY_MIN_RESEMBLANCE,
        }
    }
}

impl ConfirmPolicy {
    /// Whether a text with this sketch is tiny: fewer than `tiny_shingles` distinct
    /// shingles counted as words ([`Sketch::word_shingles`]), so that 40 means about 40
    /// words in every script (68 or so characters of Chinese, 180 of Thai).
    pub fn is_tiny(&self, sketch: &Sketch) -> bool {
        sketch.word_shingles() < f64::from(self.tiny_shingles)
    }

    /// Whether either of two texts with these sketches is tiny.
    pub fn tiny(&self, a: &Sketch, b: &Sketch) -> bool {
        self.is_tiny(a) || self.is_tiny(b)
    }

    /// Whether two texts with these sketches are compared on their whole shingle sets,
    /// when both records carry them: either is tiny ([`TINY_MAX_GROWTH`]).
    pub fn by_exact_sets(&self, a: &Sketch, b: &Sketch) -> bool {
        self.tiny(a, b)
    }

    /// [`ConfirmPolicy::judge`] on two whole records: compared on their exact shingle sets
    /// when both are tiny and carry them, on their lines ([`ConfirmPolicy::judge_blocks`],
    /// with no template known) when they are pages of one host, else on their sketches.
    pub fn judge_records(&self, a: &super::DocRecord, b: &super::DocRecord) -> (Similarity, bool) {
        if let Some(judged) = self.judge_pages(a, b, &[]) {
            return judged;
        }
        let sets = self.by_exact_sets(&a.sketch, &b.sketch)
            && !a.tiny_set.is_empty()
            && !b.tiny_set.is_empty();
        let exact = sets.then(|| tiny_likeness(&a.tiny_set, &b.tiny_set));
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
        exact: Option<ExactLikeness>,
    ) -> (Similarity, bool) {
        let ((a, a_chars), (b, b_chars)) = (a, b);
        let similarity = exact.map(|e| e.similarity).unwrap_or_else(|| Similarity {
            resemblance: a.resemblance(b),
            containment: a.containment(b),
        });
        let short = a_chars.min(b_chars) < self.short_text_chars;
        let confirmed = if self.tiny(a, b) {
            let (small, large) = if a.shingles <= b.shingles {
                (a, b)
            } else {
                (b, a)
            };
            similarity.resemblance >= self.tiny_min_resemblance
                || exact.is_some_and(|exact| {
                    let prose = f64::from(exact.prose_added) * large.word_shares();
                    prose <= f64::from(OWN_WORDS)
                        && similarity.containment >= 1.0
                        && f64::from(large.shingles) <= TINY_MAX_GROWTH * f64::from(small.shingles)
                })
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

/// A page's own words (in its sentences that the other page has neither as they are nor
/// edited) that still let it be the other page's duplicate: about one sentence (a caption,
/// a dateline, a line of a rail that changed).
pub const OWN_WORDS: u32 = 12;

/// A page whose own sentences come to this many words at most is also the other's
/// duplicate when the other has nothing of its own: the other page with a sentence or two
/// added.
pub const ADDED_WORDS: u32 = 40;

/// The share of a page's words (outside its host's template) that the other page must
/// have, as they are or edited, for the pair to be duplicates.
pub const MIN_LINE_CONTAINMENT: f64 = 0.5;

impl ConfirmPolicy {
    /// Two records of pages of one host, both with their lines' profiles and neither tiny,
    /// judged on their lines ([`ConfirmPolicy::judge_blocks`]); `None` for any other pair.
    /// `template` holds the host's template keys, sorted.
    pub fn judge_pages(
        &self,
        new: &super::DocRecord,
        stored: &super::DocRecord,
        template: &[u32],
    ) -> Option<(Similarity, bool)> {
        let (Some(a), Some(b)) = (&new.blocks, &stored.blocks) else {
            return None;
        };
        (a.host == b.host && !self.tiny(&new.sketch, &stored.sketch))
            .then(|| self.judge_blocks(a, b, template))
    }

    /// Whether the page `new` duplicates the page `stored` of the same host, judged on
    /// their lines, the host's template (`template`: its keys, sorted) left out.
    ///
    /// What a site repeats on its pages is never evidence: every line the two pages share
    /// exactly, and every line of the host's template, could be the site's rails, menus and
    /// widgets, so it proves nothing either way. What decides is what is left, each page's
    /// own sentences (lines of [`LONG_LINE_WORDS`](crate::fingerprint::blocks::LONG_LINE_WORDS)
    /// words or more): a line of one page near a line of the other
    /// ([`NEAR_LINE_BITS`](crate::fingerprint::blocks::NEAR_LINE_BITS)) is one line edited,
    /// not its own. `new` is a duplicate when at least [`MIN_LINE_CONTAINMENT`] of its
    /// words are in `stored`, and its own sentences come to at most [`OWN_WORDS`] words, or
    /// to at most [`ADDED_WORDS`] when `stored` has no more than [`OWN_WORDS`] of its own.
    /// Two different articles in one template each have a story of their own, however short
    /// and however much of the template the extraction left in; an edited copy has a few
    /// words of its own at most.
    ///
    /// The estimates returned are by words, outside the template: `resemblance` the words
    /// the pages share over the words of both, `containment` the share of the smaller
    /// page's words that the other has.
    pub fn judge_blocks(
        &self,
        new: &Blocks,
        stored: &Blocks,
        template: &[u32],
    ) -> (Similarity, bool) {
        let sorted_keys = |b: &Blocks| {
            let mut keys: Vec<u32> = b.lines.iter().map(|l| l.key).collect();
            keys.sort_unstable();
            keys
        };
        let (new_keys, stored_keys) = (sorted_keys(new), sorted_keys(stored));
        let in_template = |key: u32| template.binary_search(&key).is_ok();
        let rest = |b: &Blocks, other: &[u32]| -> Vec<Line> {
            b.lines
                .iter()
                .filter(|l| other.binary_search(&l.key).is_err() && !in_template(l.key))
                .copied()
                .collect()
        };
        let (new_rest, stored_rest) = (rest(new, &stored_keys), rest(stored, &new_keys));
        let words = |b: &Blocks| -> u32 {
            b.lines
                .iter()
                .filter(|l| !in_template(l.key))
                .map(|l| u32::from(l.words))
                .sum()
        };
        // Per page: words not shared (neither as they are nor edited), and of those, the
        // words of its own sentences.
        let unshared = |lines: &[Line], other: &[Line]| -> (u32, u32) {
            let mut unshared = 0;
            let mut own = 0;
            for line in lines {
                if !other.iter().any(|o| line.is_near(o)) {
                    unshared += u32::from(line.words);
                    if line.is_long() {
                        own += u32::from(line.words);
                    }
                }
            }
            (unshared, own)
        };
        let (new_unshared, new_own) = unshared(&new_rest, &stored_rest);
        let (stored_unshared, stored_own) = unshared(&stored_rest, &new_rest);
        let (new_words, stored_words) = (words(new), words(stored));
        let share = |words: u32, unshared: u32| {
            if words == 0 {
                1.0
            } else {
                f64::from(words - unshared.min(words)) / f64::from(words)
            }
        };
        let new_share = share(new_words, new_unshared);
        let stored_share = share(stored_words, stored_unshared);
        let shared = (f64::from(new_words - new_unshared.min(new_words))
            + f64::from(stored_words - stored_unshared.min(stored_words)))
            / 2.0;
        let union = f64::from(new_words) + f64::from(stored_words) - shared;
        let similarity = Similarity {
            resemblance: if union > 0.0 { shared / union } else { 1.0 },
            containment: if new_words <= stored_words {
                new_share
            } else {
                stored_share
            },
        };
        let confirmed = new_share >= MIN_LINE_CONTAINMENT
            && (new_own <= OWN_WORDS || (new_own <= ADDED_WORDS && stored_own <= OWN_WORDS));
        (similarity, confirmed)
    }
}

/// The exact likeness of two small texts from their [`tiny_set`](crate::fingerprint::tiny_set)s:
/// resemblance and containment over their shingles ([`tiny_key`]), and how many shingles
/// of lines holding a sentence either has that the other lacks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExactLikeness {
    /// Exact resemblance and containment.
    pub similarity: Similarity,
    /// The shingles of prose ([`crate::fingerprint::TINY_PROSE`]) in either text and not
    /// in the other: what one adds to the other in sentences.
    pub prose_added: u32,
}

/// The [`ExactLikeness`] of two sorted tiny sets.
pub fn tiny_likeness(a: &[u32], b: &[u32]) -> ExactLikeness {
    let mut prose_added = 0;
    let common = merge_common(a, b, |h| tiny_key(*h), |h| prose_added += h & TINY_PROSE);
    ExactLikeness {
        similarity: similarity_of(a.len(), b.len(), common),
        prose_added,
    }
}

/// Exact resemblance and containment of two sorted sets without repeats.
pub fn exact_similarity<T: Ord>(a: &[T], b: &[T]) -> Similarity {
    let common = merge_common(a, b, |x| x, |_| {});
    similarity_of(a.len(), b.len(), common)
}

/// The members two sets sorted by `key` (without repeated keys) have in common, handing
/// each member of either that the other lacks to `alone`.
fn merge_common<'a, T, K: Ord>(
    a: &'a [T],
    b: &'a [T],
    key: impl Fn(&'a T) -> K,
    mut alone: impl FnMut(&'a T),
) -> usize {
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match key(&a[i]).cmp(&key(&b[j])) {
            std::cmp::Ordering::Less => {
                alone(&a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                alone(&b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    a[i..].iter().chain(&b[j..]).for_each(alone);
    common
}

/// Resemblance and containment (of the smaller) of two sets of these sizes with `common`
/// members in common.
fn similarity_of(a: usize, b: usize, common: usize) -> Similarity {
    Similarity {
        resemblance: common as f64 / (a + b - common).max(1) as f64,
        containment: common as f64 / a.min(b).max(1) as f64,
    }
}
