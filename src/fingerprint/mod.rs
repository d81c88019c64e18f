//! Fingerprints of a page's main text: a 64-bit simhash and a 64-byte MinHash sketch
//! ([`Sketch`]) for near-duplicates, and a 128-bit digest for exact duplicates.
//!
//! # Features
//! The text is first put in Unicode compatibility form (NFKC: full-width forms, ligatures
//! and the like fold to their plain forms), then split into words: maximal runs of
//! alphanumeric characters (Unicode `Alphabetic` and `Numeric`, with combining marks and
//! inner apostrophes kept inside a word), lower-cased, with the decimal digits of every
//! script read as ASCII digits; punctuation separates words and is dropped. Scripts written
//! without spaces (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar) have no word
//! boundaries to find, so each run of them becomes overlapping character bigrams instead (a
//! lone character is a unigram). Hangul syllables are read the same way, a run between two
//! spaces at a time: Korean spaces its phrases, not its words (a noun and its particles, a
//! verb and its endings are one run, about 1.4 English words), so whole runs would be
//! tokens coarser than words, and a particle changed would change a whole one (fingerprint
//! version 5; version 4 read Korean by its spaces). The features are word 3-shingles: every run of
//! [`SHINGLE_WORDS`] = 3 consecutive tokens (a text of one or two tokens has one feature,
//! all of them). A feature that occurs `tf` times weighs `sqrt(tf)` ([`TF_EXPONENT`] =
//! 0.5): a phrase a page repeats (the rows of a table, a refrain, a template's labels)
//! counts for more than once, but not so much that two pages alike only in their repeated
//! rows get one fingerprint. With the weight `tf` (fingerprint version 3), two man pages that
//! are tables of character names (`iso_8859-3` and `iso_8859-4`, exact Jaccard 0.48) were 3
//! bits apart, and 44 unrelated Japanese pairs were within 10 bits (8 now).
//!
//! Why shingles: single words make every text of one language look alike. The words every
//! text shares (the, of, and, ...) carry most of the weight, so unrelated texts get
//! correlated fingerprints, and the false matches a new page meets grow with the index (at
//! single words weighted tf^1.3, the previous format: median distance 21 between unrelated
//! texts, 2.4e-4 of unrelated pairs within 3 bits, about 2,000 false candidates per page in
//! an index of 10 M). Three-word shingles are mostly unique to their text, so unrelated texts
//! get nearly independent fingerprints (the figures below).
//!
//! # Hashing
//! Each token is hashed with xxh3-64 (seed [`FEATURE_SEED`]) over its normalised UTF-8
//! bytes; a shingle's hash combines its tokens' hashes by rotation and xor, finished with
//! the 64-bit finalizer of MurmurHash3 ([`mix_shingle`]). For every distinct feature and
//! every bit, its weight (in fixed point, 1/256 units, so the result never depends on
//! floating-point rounding) is added if the feature hash has the bit set and subtracted if
//! not; the fingerprint bit is set where the sum is positive. The sums are computed in two
//! exact parts: every occurrence's unit weight, counted per bit position with carry-save
//! adders (no branch per feature), and, for the features that occur more than once, the rest
//! of their weight, added in a fixed-size loop over 64 lanes that the compiler vectorizes. A
//! property test checks the result against the plain definition. The same feature hashes
//! make the [`Sketch`].
//!
//! # Exact digest
//! xxh3-128 (seed 0) of the text with every run of whitespace replaced by one space and the
//! ends trimmed: the same text laid out differently has the same digest.
//!
//! # Measured on all pairs
//! `cargo run --release --example eval_pairs -- ../shared/datasets/wcxb-dev --cjk
//! /usr/share/man/zh_CN --cjk /usr/share/man/ja` (the man pages from Debian's manpages-zh
//! and manpages-ja) compares every pair of distinct texts. Pairs whose exact 3-shingle
//! Jaccard similarity is 0.5 or more are genuine near-duplicates and are set aside (and
//! listed); the rest are unrelated. "Called near-duplicates" is the whole decision of
//! [`crate::Dedup`]: a candidate from either source (simhash within k = 3, or a shared
//! sketch band), confirmed on the sketch.
//!
//! | texts | pairs | genuine set aside | median distance (unrelated) | unrelated within k = 3 / 10 | unrelated called near-duplicates |
//! | --- | --- | --- | --- | --- | --- |
//! | WCXB dev, long (>= 500 characters) | 1,050,525 | 3 | 32 | 0 / 0 | 0 |
//! | WCXB dev, openings under 400 characters | 1,085,601 | 7 | 32 | 0 / 0 | 0 |
//! | man pages, Chinese (651) | 211,575 | 105 | 31 | 0 / 1 | 15 (5 with Jaccard 0.4-0.5) |
//! | man pages, Japanese (865) | 373,680 | 301 | 31 | 0 / 8 | 15 (10 with Jaccard 0.4-0.5) |
//!
//! Independent fingerprints would put 2.4e-15 of pairs within 3 bits and 1.0e-8 within 10;
//! on the English dev texts none of a million pairs is within 10. Zero in about a million
//! pairs bounds the rate at about 3e-6 (95%); the scale benchmark (`benches/scale.rs`, in
//! docs/quality.md) measures it on an index of 10 M documents instead: no unique document lost.
//! The man pages are many pages of one package translated by one hand: their "unrelated"
//! pairs include pages that share a third to a half of their text. The pairs called
//! near-duplicates there are such related pages, their Jaccard similarity just under the
//! line or their containment estimated past 0.9 (exact 0.70-0.81). (With the long-text
//! threshold at 0.5 instead of 0.55 these were 36 and 21.)
//!
//! Edited copies of every long dev text (recall of the whole decision, estimated
//! resemblance of the copies at the 1st percentile): a changed date 1.000 (0.86), an added
//! sentence 1.000 (0.83), an appended comment 1.000 (0.91), 1% of words replaced 1.000,
//! 2% 1.000 (0.78), 5% 0.9993 (0.62), the other template through the extractor 1.000, other
//! boilerplate lines 1.000 (0.73); a comment thread as long as the article 0.52 (only the
//! bands find it, when the resemblance is near 0.5). Short openings: 0.970 to 0.994 per
//! kind, 0.987 in all (resemblance >= 0.5 for short texts). Simhash within 3 alone finds
//! 67-86% of the light edits and 1-8% of the 2-5% edits, which is why the sketch bands are
//! the second candidate source.
//!
//! Weights tried on the same pairs (Japanese man pages within 3 / within 10 bits, Chinese
//! within 10, simhash-alone recall of changed dates): `tf` 1 / 44, 18, 0.74; `tf^0.7` 0 /
//! 19, 4, 0.73; `sqrt(tf)` 0 / 8, 1, 0.71; `tf^0.3` 0 / 10, 0, 0.70; one per distinct
//! feature 0 / 5, 2, 0.71. The whole decision's recall and its pairs called near-duplicates
//! were the same for all five (the bands and the sketch do not depend on the weight).
//!
//! Fingerprints are persisted in the index, so this is a format: a golden test pins the
//! fingerprints and sketches of fixed texts, and a change here needs a new version
//! ([`FINGERPRINT_VERSION`]).

use std::fmt;

pub mod blocks;
mod counters;
mod digest;
mod features;
mod sketch;
#[cfg(target_arch = "x86_64")]
mod sse2;
mod tokens;

use digest::normalized_digest;
use features::{shingle_features, weighted_simhash};

pub use blocks::Blocks;
pub use features::mix_shingle;
pub(crate) use features::{fmix32, fmix64};
pub use sketch::{
    BAND_BINS, BANDS, MAX_UNSPACED, SKETCH_BINS, SKETCH_BITS, SKETCH_BYTES, SKETCH_SEED, Sketch,
};
pub use tokens::tokens;

/// Version of the feature and hashing rules. Stored by the index; bump on any change.
pub const FINGERPRINT_VERSION: u32 = 5;

/// What an index of an older fingerprint version meets when it is upgraded to this one,
/// for the one warning line of the upgrade.
pub(crate) const UPGRADE_NOTE: &str = "Korean text is now read a syllable pair at a time; a \
     Korean page stored before is still found when repeated exactly, an edited copy of one \
     may be stored as a page of its own";

/// A feature occurring `tf` times weighs `tf^TF_EXPONENT`.
pub const TF_EXPONENT: f64 = 0.5;

/// Tokens per shingle.
pub const SHINGLE_WORDS: usize = 3;

/// Seed of the per-token xxh3 hash.
pub const FEATURE_SEED: u64 = 0x5348_494e_474c_4531;

/// A 64-bit simhash.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Simhash(pub u64);

impl Simhash {
    /// Number of differing bits.
    pub fn distance(self, other: Simhash) -> u32 {
        (self.0 ^ other.0).count_ones()
    }

    /// Parses 16 hex digits.
    pub fn from_hex(hex: &str) -> Option<Simhash> {
        if hex.len() != 16 {
            return None;
        }
        u64::from_str_radix(hex, 16).ok().map(Simhash)
    }
}

impl fmt::Display for Simhash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl fmt::Debug for Simhash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Simhash({:016x})", self.0)
    }
}

/// A 128-bit digest of the whitespace-normalised text.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Digest(pub u128);

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({:032x})", self.0)
    }
}

/// Both fingerprints of one text, and what they were computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint {
    /// Near-duplicate fingerprint.
    pub simhash: Simhash,
    /// Exact-duplicate fingerprint.
    pub digest: Digest,
    /// Confirmation sketch of the same shingles.
    pub sketch: Sketch,
    /// Number of tokens (words and bigrams) in the text.
    pub tokens: usize,
    /// Size of the whitespace-normalised text: its characters, each of a script written
    /// without spaces counted as the characters its share of a word takes in a spaced
    /// script (about 3.7 a Han or Kana character, 1.4 a Thai one), so that the size rule
    /// (`dedup.short_text_chars`) means the same amount of text in every script. Equal to
    /// the characters for text without such scripts.
    pub chars: usize,
}

impl Fingerprint {
    /// Fingerprints a main text.
    ///
    /// ```
    /// use crawldedup::Fingerprint;
    /// let a = Fingerprint::of("The quick brown fox jumps over the lazy dog. It was not amused.");
    /// let b = Fingerprint::of("The  quick brown fox\njumps over the lazy dog.   It was not amused.");
    /// assert_eq!(a.digest, b.digest); // whitespace does not matter
    /// assert_eq!(a.simhash, b.simhash);
    /// ```
    pub fn of(text: &str) -> Fingerprint {
        let (mut features, tokens) = shingle_features(text, SHINGLE_WORDS);
        // The sketch reads the features before the simhash reuses their array; the
        // simhash's table of distinct features then gives the count.
        let mut sketch = Sketch::from_features(features.iter().copied(), 0);
        let (simhash, distinct) = weighted_simhash(&mut features);
        sketch.shingles = u32::try_from(distinct).unwrap_or(u32::MAX);
        let (digest, chars) = normalized_digest(text);
        Fingerprint {
            simhash,
            digest,
            sketch: sketch.with_unspaced(unspaced_of(text, tokens)),
            tokens,
            chars,
        }
    }
}

/// Whether `byte` can lead the UTF-8 of a character of a script written without spaces
/// ([`tokens::is_unspaced_script`]): those are three or four bytes, led by 0xE0 (Thai,
/// Lao), 0xE1 (Myanmar, Khmer), 0xE3-0xE9 (kana and the ideographs), 0xEA-0xED (Hangul
/// syllables), 0xEF (compatibility
/// ideographs) or 0xF0 (the supplementary ideographs). Text without such a byte (English
/// with its curly quotes and dashes, 0xE2, or accented Latin) has none of them.
fn leads_unspaced(byte: u8) -> bool {
    matches!(byte, 0xE0 | 0xE1 | 0xE3..=0xED | 0xEF | 0xF0)
}

/// [`Sketch::unspaced`] of `text`, of `tokens` tokens: how far the tokens of its runs of
/// scripts written without spaces (a character each, a run of two or more read as its
/// bigrams: `n - 1` tokens for `n` characters) outnumber the words those characters make.
fn unspaced_of(text: &str, tokens: usize) -> u8 {
    if !crate::text::any_byte(text.as_bytes(), leads_unspaced) {
        return 0;
    }
    let (mut cjk, mut southeast, mut run_tokens, mut run) = (0, 0, 0, 0usize);
    let end_run = |run: usize| if run > 1 { run - 1 } else { run };
    for c in text.chars() {
        if !tokens::is_unspaced_script(c) {
            run_tokens += end_run(run);
            run = 0;
            continue;
        }
        run += 1;
        if crate::text::is_southeast_unspaced(c) {
            southeast += 1;
        } else {
            cjk += 1;
        }
    }
    run_tokens += end_run(run);
    crate::text::unspaced_share(tokens, run_tokens, cjk, southeast)
}

/// The simhash of a text (see the module doc for the features).
pub fn simhash(text: &str) -> Simhash {
    shingled(text, SHINGLE_WORDS).0
}

/// Longest shingle [`simhash_with_shingle`] accepts.
pub const MAX_SHINGLE_WORDS: usize = 4;

/// The simhash of a text with shingles of `words` tokens (1 to [`MAX_SHINGLE_WORDS`]),
/// for comparing alternatives; the index always uses [`SHINGLE_WORDS`].
pub fn simhash_with_shingle(text: &str, words: usize) -> Simhash {
    shingled(text, words.clamp(1, MAX_SHINGLE_WORDS)).0
}

fn shingled(text: &str, words: usize) -> (Simhash, usize) {
    let (mut features, seen) = shingle_features(text, words);
    (weighted_simhash(&mut features).0, seen)
}

/// The distinct shingle hashes of a text (the features of its simhash and sketch), sorted:
/// for computing exact resemblance and containment in evaluations.
pub fn shingle_set(text: &str) -> Vec<u64> {
    let mut set = shingle_features(text, SHINGLE_WORDS).0;
    set.sort_unstable();
    set.dedup();
    set
}

/// The distinct shingle hashes of a small text's lines, sorted: what the index keeps of a
/// small text to confirm a tiny candidate exactly. Each line is shingled on its own, so
/// that a text is held whole in another that has its lines with others between them (a
/// brief's headline and paragraph with a date line between, in another template of its
/// site). A shingle is the top 31 bits of its 32-bit hash (two distinct shingles share
/// them with probability 2^-31; [`tiny_key`]); its lowest bit says whether a line that has
/// it holds a sentence ([`TINY_PROSE`]): what a page adds to a brief in prose is a story
/// of its own, a date line, a footer or a reader's comment that says it is one
/// (`text::is_reader_comment`) is not.
pub fn tiny_set(text: &str) -> Vec<u32> {
    let mut set: Vec<u32> = text
        .lines()
        .flat_map(|line| {
            // A reader's comment that names itself is what a discussion page adds to a
            // story, not a story of its own.
            let prose = u32::from(
                crate::text::holds_sentence(line) && !crate::text::is_reader_comment(line),
            );
            shingle_features(line, SHINGLE_WORDS)
                .0
                .into_iter()
                .map(move |h| ((h >> 32) as u32 & !TINY_PROSE) | prose)
        })
        .collect();
    set.sort_unstable();
    // A shingle of a prose line and of another line is kept once, as prose.
    set.dedup_by(|next, kept| {
        if tiny_key(*next) != tiny_key(*kept) {
            return false;
        }
        *kept |= *next & TINY_PROSE;
        true
    });
    set
}

/// In a [`tiny_set`], the bit of a shingle that a line holding a sentence has.
pub const TINY_PROSE: u32 = 1;

/// A [`tiny_set`]'s shingle, without its [`TINY_PROSE`] bit: what two sets are compared on.
/// (A set written before the bit was kept has a hash bit there: it is compared the same,
/// and reads about half its shingles as prose.)
pub fn tiny_key(h: u32) -> u32 {
    h >> 1
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
