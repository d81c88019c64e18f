//! How a candidate is confirmed: [`Confirm`], the one rule the local index
//! ([`SimhashIndex`](super::SimhashIndex)) and the cluster's shared index both decide by,
//! with every constant it uses.
//!
//! A candidate of a new page is judged in three steps ([`Confirm::candidate`]):
//! 1. on the two sketches (estimated resemblance and containment, [`Confirm::judge`]);
//! 2. for two pages of one host that both carry their lines' profile, on their lines
//!    ([`Confirm::judge_blocks`], the host's template left out), when the sketches confirm
//!    the pair or reach [`LINES_FROM_RESEMBLANCE`] or [`LINES_FROM_CONTAINMENT`];
//! 3. else, when either text is tiny and both records keep their whole shingle set, on
//!    those sets ([`tiny_likeness`]).
//!
//! A candidate that no key found (one of its host's last pages, [`Probe::recent`](super::Probe::recent))
//! is judged only when the two pages share a sentence outside the template, as it is, or
//! when both records keep their whole shingle sets and the exact likeness on them confirms
//! the pair as the sketches would.
//!
//! The same digest and simhash make an exact duplicate, unless the two pages' lines say
//! they are different pages (the main text was then taken from what their site repeats).
//!
//! Two pages of one host whose headlines are apart ([`Blocks::headlines_apart`]) are never
//! duplicates, exact or near: an extraction that took a block the site repeats (a table of
//! contents, an app banner, a sidebar of latest posts) for two articles' main text leaves
//! their texts alike, and their headlines still tell them apart.

use super::{DocRecord, Similarity, Stored};
use crate::fingerprint::blocks::{Blocks, Coverage, Line};
use crate::fingerprint::{Sketch, TINY_PROSE, tiny_key};

#[path = "confirm_lines.rs"]
mod lines;
use lines::shares_sentence;
pub use lines::tiny_lines_edited;

/// What [`Confirm::candidate`] says of one candidate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Judged {
    /// The same digest and simhash, and not refused by the pages' lines: an exact
    /// duplicate.
    pub(crate) exact: bool,
    /// The candidate is a duplicate (always, when `exact`).
    pub(crate) confirmed: bool,
    /// The likeness it was judged on.
    pub(crate) similarity: Similarity,
}

/// When a candidate is called a near-duplicate: its estimated resemblance reaches
/// `min_resemblance` (`short_min_resemblance` when either text is shorter than
/// `short_text_chars`, `tiny_min_resemblance` when either has fewer than `tiny_shingles`
/// distinct shingles), or, for two long texts of which the smaller has at least
/// `min_size_ratio` of the larger's shingles, its estimated containment reaches
/// `min_containment` (an article with a comment thread appended, say).
///
/// The defaults and their measurement are in [`crate::dedup`]. The type is
/// `#[non_exhaustive]`: start from [`Confirm::default`] and set the fields to change.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Confirm {
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

/// A candidate page of the same host is compared on its lines when its sketch estimates
/// reach this resemblance (or [`LINES_FROM_CONTAINMENT`]), or when they confirm it: below,
/// the pair has too little in common for the lines to make it a duplicate, and its record
/// is not read. (At 0.3 and 0.5, 4 more edited copies of the template evaluation's 976 were
/// missed: their first pages, stored with the template, hold the copies' text among much
/// else.)
pub const LINES_FROM_RESEMBLANCE: f64 = 0.15;

/// See [`LINES_FROM_RESEMBLANCE`]: a page whose template was left out is contained in its
/// host's pages stored before the template was known.
pub const LINES_FROM_CONTAINMENT: f64 = 0.3;

impl Default for Confirm {
    fn default() -> Self {
        Confirm {
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

impl Confirm {
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

    /// Whether a record of a text with this sketch keeps its whole shingle set, on which a
    /// tiny candidate is confirmed exactly: under [`SMALL_SET_FACTOR`] times
    /// `tiny_shingles` shingles, counted as words.
    pub fn keeps_tiny_set(&self, sketch: &Sketch) -> bool {
        sketch.word_shingles() < f64::from(SMALL_SET_FACTOR.saturating_mul(self.tiny_shingles))
    }

    /// The rule for one candidate (see the module documentation): `new` is the page being
    /// decided, `stored` the candidate's row, `full` reads the candidate's whole record when
    /// the rule needs it (its lines or its shingle set), and `template` holds the keys of the
    /// new page's host's template, sorted. `whole` is the sketch of the new page's whole
    /// text when its record's is of the text without its host's template ([`Probe`]): a
    /// candidate stored before the template was known is then compared on its lines when
    /// the whole texts are alike, as a sketch of a brief cannot say how much of it a page
    /// twenty times its size holds. `wider` may also hold the sketch of the page's page
    /// text. A candidate that no key found (`found_by_keys` false: one of the host's last
    /// pages) is a duplicate only when the two pages share a sentence outside the template
    /// ([`shares_sentence`]), or when their exact likeness, both records keeping their whole
    /// shingle sets, confirms it ([`Confirm::judge`]): a short text with a few words changed
    /// shares no band key with its original one time in three to ten, and is then judged
    /// as if a key had found it. A page of the same host whose headline is apart from the
    /// new page's ([`Blocks::headlines_apart`]) is never a duplicate. Only a candidate that is
    /// a page of the same host or a small text is read.
    ///
    /// [`Probe`]: super::Probe
    pub(crate) fn candidate<E, R: std::borrow::Borrow<DocRecord>>(
        &self,
        new: &DocRecord,
        stored: &Stored,
        template: &[u32],
        wider: &[&Sketch],
        found_by_keys: bool,
        full: impl FnOnce() -> Result<Option<R>, E>,
    ) -> Result<Judged, E> {
        let new_chars = u32::try_from(new.text_chars).unwrap_or(u32::MAX);
        let exact = stored.simhash == new.simhash.0 && stored.digest == new.digest;
        let (mut similarity, mut confirmed) = self.judge(
            (&new.sketch, new_chars),
            (&stored.sketch, stored.chars),
            None,
        );
        let tiny_sets = self.by_exact_sets(&new.sketch, &stored.sketch) && !new.tiny_set.is_empty();
        let by_lines = new.blocks.is_some()
            && (exact
                || confirmed
                || similarity.resemblance >= LINES_FROM_RESEMBLANCE
                || similarity.containment >= LINES_FROM_CONTAINMENT
                || wider
                    .iter()
                    .any(|w| w.resemblance(&stored.sketch) >= LINES_FROM_RESEMBLANCE));
        let full = if by_lines || tiny_sets { full()? } else { None };
        let full = full.as_ref().map(R::borrow);
        let apart = full.is_some_and(|full| headlines_apart(new, full));
        // The exact likeness of two small texts, from their whole shingle sets; when every
        // shingle of the smaller is in the larger, the smaller is held whole in the larger.
        let exact_sets = full
            .as_ref()
            .filter(|f| !new.tiny_set.is_empty() && !f.tiny_set.is_empty())
            .map(|f| tiny_likeness(&new.tiny_set, &f.tiny_set));
        let held_whole = exact_sets.is_some_and(|e| e.similarity.containment >= 1.0);
        // The exact likeness, where both sets are known, confirms the pair as the sketches'
        // estimate would: at a likeness the band keys find by chance (a short text with a
        // few words changed, at 0.5 to 0.6, shares no band with its original one time in
        // three to ten), a page of the host's last pages is judged as if a key found it.
        // Asked only for a candidate that no key found.
        let exact_confirms = || {
            exact_sets.is_some_and(|e| {
                self.judge(
                    (&new.sketch, new_chars),
                    (&stored.sketch, stored.chars),
                    Some(e),
                )
                .1
            })
        };
        if !found_by_keys
            && !held_whole
            && !exact_confirms()
            && !full
                .as_ref()
                .is_some_and(|f| shares_sentence(new, f, template))
        {
            return Ok(Judged {
                exact: false,
                confirmed: false,
                similarity,
            });
        }
        let judged_by_lines = full
            .as_ref()
            .filter(|_| by_lines)
            .and_then(|full| self.judge_pages(new, full, template));
        if exact && !apart && judged_by_lines.is_none_or(|(_, confirmed)| confirmed) {
            return Ok(Judged {
                exact: true,
                confirmed: true,
                similarity,
            });
        }
        if let Some(judged) = judged_by_lines {
            (similarity, confirmed) = judged;
        } else if tiny_sets && exact_sets.is_some() {
            (similarity, confirmed) = self.judge(
                (&new.sketch, new_chars),
                (&stored.sketch, stored.chars),
                exact_sets,
            );
        }
        // Two tiny pages of one host that differ only by a sentence appended (a brief's
        // page with a sentence added to its paragraph, beside a headline that extraction
        // took on one page and not the other).
        if !confirmed && by_lines && self.tiny(&new.sketch, &stored.sketch) {
            if let (Some(a), Some(Some(b))) = (&new.blocks, full.as_ref().map(|r| &r.blocks)) {
                if a.host == b.host && tiny_lines_edited(a, b, template, held_whole) {
                    confirmed = true;
                }
            }
        }
        Ok(Judged {
            exact: false,
            confirmed: confirmed && !apart,
            similarity,
        })
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

/// Whether two records' profiles say their pages are two articles of one host, whatever
/// their texts ([`Blocks::headlines_apart`]).
fn headlines_apart(new: &DocRecord, stored: &DocRecord) -> bool {
    match (&new.blocks, &stored.blocks) {
        (Some(a), Some(b)) => a.headlines_apart(b),
        _ => false,
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

impl Confirm {
    /// Two records of pages of one host, both with their lines' profiles and neither tiny,
    /// judged on their lines ([`Confirm::judge_blocks`]); `None` for any other pair.
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
    /// their lines, the host's template (`template`: its keys, sorted) left out, and of a
    /// page with more lines than a profile keeps, the lines its sample does not cover
    /// ([`Blocks::coverage`]).
    ///
    /// What a site repeats on its pages is never evidence: every line the two pages share
    /// exactly, and every line of the host's template, could be the site's rails, menus and
    /// widgets, so it proves nothing either way. What decides is what is left, each page's
    /// own sentences (lines of [`LONG_LINE_WORDS`](crate::fingerprint::blocks::LONG_LINE_WORDS)
    /// words or more): a line of one page near a line of the other
    /// ([`NEAR_LINE_BITS`](crate::fingerprint::blocks::NEAR_LINE_BITS)) is one line edited,
    /// not its own, unless one page's profile is [`Blocks::legacy`] and the other's is not
    /// (their signatures are of different features). `new` is a duplicate when at least
    /// [`MIN_LINE_CONTAINMENT`] of its words are in `stored`, and its own sentences come to
    /// at most [`OWN_WORDS`] words, or to at most [`ADDED_WORDS`] when `stored` has nothing
    /// of its own (two pages with a sentence of their own each, of 10 and 22 words, are two
    /// briefs under a block their host repeats, not one page with a sentence added), or to
    /// any number when `stored` has no more than [`OWN_WORDS`] of its own and they all come
    /// after every sentence the two share: `stored` with readers' comments appended, no
    /// longer than what it repeats (at least [`MIN_LINE_CONTAINMENT`] of `new` is
    /// `stored`), as the sketches' containment rule has it for pages of different hosts.
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
        // A page of more lines than a profile keeps is a sample of them: the two pages are
        // compared on the lines both samples would keep.
        let covers = (new.coverage(), stored.coverage());
        fn lines_of(b: &Blocks, covers: (Coverage, Coverage)) -> impl Iterator<Item = &Line> {
            b.lines
                .iter()
                .filter(move |l| covers.0.covers(l) && covers.1.covers(l))
        }
        let sorted_keys = |b: &Blocks| {
            let mut keys: Vec<u32> = lines_of(b, covers).map(|l| l.key).collect();
            keys.sort_unstable();
            keys
        };
        let (new_keys, stored_keys) = (sorted_keys(new), sorted_keys(stored));
        let in_template = |key: u32| template.binary_search(&key).is_ok();
        let rest = |b: &Blocks, other: &[u32]| -> Vec<Line> {
            lines_of(b, covers)
                .filter(|l| other.binary_search(&l.key).is_err() && !in_template(l.key))
                .copied()
                .collect()
        };
        let (new_rest, stored_rest) = (rest(new, &stored_keys), rest(stored, &new_keys));
        let words = |b: &Blocks| -> u32 {
            lines_of(b, covers)
                .filter(|l| !in_template(l.key))
                .map(|l| u32::from(l.words))
                .sum()
        };
        // Per page: words not shared (neither as they are nor edited), and of those, the
        // words of its own sentences. Lines signed in two ways are never near each other.
        let comparable = new.legacy == stored.legacy;
        let unshared = |lines: &[Line], other: &[Line]| -> (u32, u32) {
            let mut unshared = 0;
            let mut own = 0;
            for line in lines {
                if !(comparable && other.iter().any(|o| line.is_near(o))) {
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
        // The other page with readers' comments (or any other sentences) appended: all it
        // adds comes after every sentence it repeats.
        let appended = || {
            let mut own_seen = false;
            for line in lines_of(new, covers).filter(|l| l.is_long() && !in_template(l.key)) {
                let shared = stored_keys.binary_search(&line.key).is_ok()
                    || (comparable && stored_rest.iter().any(|o| line.is_near(o)));
                if shared && own_seen {
                    return false;
                }
                own_seen |= !shared;
            }
            true
        };
        let confirmed = new_share >= MIN_LINE_CONTAINMENT
            && (new_own <= OWN_WORDS
                || (stored_own == 0 && new_own <= ADDED_WORDS)
                || (stored_own <= OWN_WORDS && appended()));
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

#[cfg(test)]
#[path = "confirm_tests.rs"]
mod tests;
