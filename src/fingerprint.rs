//! Fingerprints of a page's main text: a 64-bit simhash for near-duplicates and a 128-bit
//! digest for exact duplicates.
//!
//! # Features
//! The text is split into words: maximal runs of alphanumeric characters (Unicode
//! `Alphabetic` and `Numeric`, with combining marks and inner apostrophes kept inside a
//! word), lower-cased. Scripts written without spaces (Han, Hiragana, Katakana, Thai, Lao,
//! Khmer, Myanmar) have no word boundaries to find, so each run of them becomes overlapping
//! character bigrams instead (a lone character is a unigram). The features are the tokens
//! themselves ([`SHINGLE_WORDS`] = 1). A feature that occurs `tf` times weighs
//! `tf^1.3` ([`TF_EXPONENT`]): a little more than its count, so that the words a text
//! repeats anchor the fingerprint and a few replaced words move it less.
//!
//! # Hashing
//! Each token is hashed with xxh3-64 (seed [`FEATURE_SEED`]) over its lower-cased UTF-8
//! bytes; a shingle's hash combines its tokens' hashes by rotation and xor, finished with
//! the 64-bit finalizer of MurmurHash3 ([`mix_shingle`]). The feature hashes are counted; then, for every distinct feature and every bit, its weight (in fixed point,
//! 1/256 units, so the result never depends on floating-point rounding) is added if the
//! feature hash has the bit set and subtracted if not; the fingerprint bit is set where the
//! sum is positive. The accumulation is a fixed-size loop over 64 lanes that the compiler
//! vectorizes.
//!
//! # Exact digest
//! xxh3-128 (seed 0) of the text with every run of whitespace replaced by one space and the
//! ends trimmed: the same text laid out differently has the same digest.
//!
//! # Why these choices (measured)
//! `cargo run --release --example eval_pairs -- ../shared/datasets/wcxb-dev` builds pairs
//! from the benchmark's 1,475 usable ground-truth main texts: the same text with a changed
//! date, an added sentence, an appended comment, 1%, 3% and 5% of its words replaced; and
//! different pages from one site or of one page type. At k = 3 on long texts (>= 500
//! characters):
//!
//! | features, weight | recall (8,700 edited pairs) | different pairs within k (6,780) | precision |
//! | --- | --- | --- | --- |
//! | words, tf | 0.918 | 2 | 0.9997 |
//! | 2-word shingles, tf | 0.605 | 1 | 0.9998 |
//! | 3-word shingles, tf | 0.477 | 1 | 0.9998 |
//! | words, tf^1.25 | 0.949 | 7 | 0.9992 |
//! | **words, tf^1.3** | **0.953** | **5** | **0.9994** |
//! | words, tf^1.4 | 0.960 | 14 | 0.9983 |
//! | words, tf^1.5 | 0.961 | 21 | 0.9975 |
//! | words, tf^2 | 0.960 | 166 | 0.9805 |
//!
//! Different pages sit far apart whatever the features (median distance 20 for words, 30
//! for shingles; 10th percentile 13 on one site), so the extra separation that shingles buy
//! is not needed, while every replaced word moves a shingled fingerprint two or three times
//! as far. Single words it is. Weighting repeated words above their count pulls edited
//! copies closer; past 1.3 it starts to pull different pages on one topic together too (at
//! tf^1.5, two reference pages of one documentation site with a word Jaccard of 0.2 fall
//! within 3). On short texts no choice reaches useful recall at k = 3 (0.41 at tf^1.3),
//! which is why short pages are confirmed by an exact similarity instead.
//!
//! Fingerprints are persisted in the index, so this is a format: a golden test pins the
//! fingerprints of fixed texts, and a change here needs a new index format version
//! ([`FINGERPRINT_VERSION`]).

use std::fmt;

use xxhash_rust::xxh3::{xxh3_64_with_seed, xxh3_128};

/// Version of the feature and hashing rules. Stored by the index; bump on any change.
pub const FINGERPRINT_VERSION: u32 = 2;

/// A feature occurring `tf` times weighs `tf^TF_EXPONENT`.
pub const TF_EXPONENT: f64 = 1.3;

/// Tokens per shingle.
pub const SHINGLE_WORDS: usize = 1;

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
    /// Number of tokens (words and bigrams) in the text.
    pub tokens: usize,
    /// Characters of the whitespace-normalised text.
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
        let (simhash, tokens) = shingled(text, SHINGLE_WORDS);
        let (digest, chars) = normalized_digest(text);
        Fingerprint {
            simhash,
            digest,
            tokens,
            chars,
        }
    }
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
    let mut features = Vec::with_capacity(text.len() / 6 + 1);
    if words == 1 {
        // The index's features: one word each, `mix_shingle(&[hash])` written out.
        let mut seen = 0usize;
        for_each_token(text, |token| {
            features.push(fmix64(xxh3_64_with_seed(token, FEATURE_SEED) ^ 1));
            seen += 1;
        });
        return (weighted_simhash(&features), seen);
    }
    let mut window = [0u64; MAX_SHINGLE_WORDS];
    let mut seen = 0usize;
    for_each_token(text, |token| {
        window.copy_within(1.., 0);
        window[MAX_SHINGLE_WORDS - 1] = xxh3_64_with_seed(token, FEATURE_SEED);
        seen += 1;
        if seen >= words {
            features.push(mix_shingle(&window[MAX_SHINGLE_WORDS - words..]));
        }
    });
    if seen > 0 && seen < words {
        features.push(mix_shingle(&window[MAX_SHINGLE_WORDS - seen..]));
    }
    (weighted_simhash(&features), seen)
}

/// The simhash of a bag of feature hashes, each distinct feature weighted `tf^1.3`. On
/// x86-64 with AVX2 the same code is compiled for 256-bit registers and chosen at run time;
/// the arithmetic is integer, so both give the same bits.
fn weighted_simhash(features: &[u64]) -> Simhash {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above.
            return unsafe { weighted_simhash_avx2(features) };
        }
    }
    weighted_simhash_portable(features)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn weighted_simhash_avx2(features: &[u64]) -> Simhash {
    weighted_simhash_portable(features)
}

#[inline(always)]
fn weighted_simhash_portable(features: &[u64]) -> Simhash {
    // Count the distinct features in an open-addressing table (linear probing, at most
    // half full); the order in which they are then added does not change the sums.
    let slots = (features.len() * 2).next_power_of_two().max(16);
    let mask = slots - 1;
    let mut keys = vec![0u64; slots];
    let mut counts = vec![0u32; slots];
    let mut zero_count = 0usize; // the hash 0 marks an empty slot, so it is counted apart
    for &hash in features.iter() {
        if hash == 0 {
            zero_count += 1;
            continue;
        }
        let mut slot = (hash >> 7) as usize & mask;
        loop {
            if keys[slot] == hash {
                counts[slot] += 1;
                break;
            }
            if keys[slot] == 0 {
                keys[slot] = hash;
                counts[slot] = 1;
                break;
            }
            slot = (slot + 1) & mask;
        }
    }
    let mut acc = Accumulator::default();
    for (&hash, &count) in keys.iter().zip(&counts) {
        if count > 0 {
            acc.add(hash, tf_weight(count as usize));
        }
    }
    if zero_count > 0 {
        acc.add(0, tf_weight(zero_count));
    }
    acc.finish()
}

/// `tf^1.3` in 1/256 units, from a table for small counts.
fn tf_weight(tf: usize) -> u64 {
    const TABLE_LEN: usize = 64;
    static TABLE: std::sync::OnceLock<[u64; TABLE_LEN]> = std::sync::OnceLock::new();
    let fixed = |tf: usize| ((tf as f64).powf(TF_EXPONENT) * 256.0).round() as u64;
    if tf < TABLE_LEN {
        TABLE.get_or_init(|| std::array::from_fn(fixed))[tf]
    } else {
        fixed(tf)
    }
}

/// Combines token hashes into one shingle hash: rotate-xor, then the MurmurHash3 64-bit
/// finalizer so that every input bit reaches every output bit.
pub fn mix_shingle(tokens: &[u64]) -> u64 {
    let mut h = 0u64;
    for (i, &t) in tokens.iter().enumerate() {
        h ^= t.rotate_left((i as u32 * 23) % 64);
    }
    h ^= tokens.len() as u64;
    fmix64(h)
}

fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}

/// Per bit, the total weight of the features that have the bit set; and the total weight.
/// A bit of the simhash is set where its lane holds more than half the total, which is the
/// same as the +weight/-weight sum being positive. Weights are added into 32-bit lanes (four
/// to a SIMD register even on baseline x86-64) and carried into 64-bit totals before the
/// 32-bit lanes could overflow.
#[derive(Clone)]
struct Accumulator {
    small: [u32; 64],
    small_total: u32,
    lanes: [u64; 64],
    total: u64,
}

impl Default for Accumulator {
    fn default() -> Self {
        Accumulator {
            small: [0; 64],
            small_total: 0,
            lanes: [0; 64],
            total: 0,
        }
    }
}

impl Accumulator {
    #[inline(always)]
    fn add(&mut self, hash: u64, weight: u64) {
        let Ok(small_weight) = u32::try_from(weight) else {
            for (bit, lane) in self.lanes.iter_mut().enumerate() {
                *lane += weight & ((hash >> bit) & 1).wrapping_neg();
            }
            self.total += weight;
            return;
        };
        if self.small_total.checked_add(small_weight).is_none() {
            self.carry();
        }
        // Branch-free: each lane adds the weight masked by its bit; the loop has a fixed
        // trip count and no dependencies between lanes, so it compiles to SIMD.
        for (bit, lane) in self.small.iter_mut().enumerate() {
            *lane += small_weight & (((hash >> bit) & 1) as u32).wrapping_neg();
        }
        self.small_total += small_weight;
    }

    fn carry(&mut self) {
        for (wide, small) in self.lanes.iter_mut().zip(self.small.iter_mut()) {
            *wide += u64::from(*small);
            *small = 0;
        }
        self.total += u64::from(self.small_total);
        self.small_total = 0;
    }

    fn finish(&mut self) -> Simhash {
        self.carry();
        let mut out = 0u64;
        for (bit, &lane) in self.lanes.iter().enumerate() {
            if 2 * u128::from(lane) > u128::from(self.total) {
                out |= 1 << bit;
            }
        }
        Simhash(out)
    }
}

/// Scripts written without spaces between words.
fn is_unspaced_script(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // Hiragana, Katakana
        | 0x3400..=0x4DBF    // CJK Extension A
        | 0x4E00..=0x9FFF    // CJK Unified Ideographs
        | 0xF900..=0xFAFF    // CJK Compatibility Ideographs
        | 0x20000..=0x2FA1F  // CJK Extensions B-F, Compatibility Supplement
        | 0x0E00..=0x0EFF    // Thai, Lao
        | 0x1000..=0x109F    // Myanmar
        | 0x1780..=0x17FF    // Khmer
        | 0x31F0..=0x31FF    // Katakana Phonetic Extensions
        | 0xFF66..=0xFF9F    // Half-width Katakana
    )
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric()
}

/// Combining marks stay inside a word (for scripts such as Devanagari).
fn is_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x0900..=0x0DFF | 0x1AB0..=0x1AFF | 0x20D0..=0x20FF)
        && !c.is_alphanumeric()
}

const ALNUM: u8 = 1;
const UPPER: u8 = 2;

/// ASCII letters and digits ([`ALNUM`]) and capitals ([`UPPER`]), one table lookup a byte.
static ASCII_CLASS: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 128 {
        let byte = b as u8;
        if byte.is_ascii_alphanumeric() {
            table[b] |= ALNUM;
        }
        if byte.is_ascii_uppercase() {
            table[b] |= UPPER;
        }
        b += 1;
    }
    table
};

/// Calls `emit` with every token of `text` (lower-cased UTF-8), in order.
fn for_each_token(text: &str, mut emit: impl FnMut(&[u8])) {
    let bytes = text.as_bytes();
    let mut word: Vec<u8> = Vec::with_capacity(64);
    let mut prev_unspaced: Option<char> = None;
    let mut unspaced_run = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            if b.is_ascii_alphanumeric() {
                // ASCII fast path: a whole run of ASCII letters and digits at once, hashed
                // in place when it needs no lower-casing and does not continue a word.
                flush_unspaced(&mut prev_unspaced, &mut unspaced_run, &mut emit);
                let start = i;
                let mut class = 0u8;
                while let Some(&byte) = bytes.get(i) {
                    let c = ASCII_CLASS[byte as usize];
                    if c & ALNUM == 0 {
                        break;
                    }
                    class |= c;
                    i += 1;
                }
                let upper = class & UPPER != 0;
                let run = &bytes[start..i];
                let continues = i < bytes.len() && (bytes[i] >= 0x80 || bytes[i] == b'\'');
                if word.is_empty() && !upper && !continues {
                    emit(run);
                } else {
                    word.extend(run.iter().map(u8::to_ascii_lowercase));
                }
                continue;
            }
            if b == b'\''
                && !word.is_empty()
                && bytes.get(i + 1).is_some_and(|n| n.is_ascii_alphanumeric())
            {
                word.push(b);
            } else {
                flush_word(&mut word, &mut emit);
                flush_unspaced(&mut prev_unspaced, &mut unspaced_run, &mut emit);
            }
            i += 1;
            continue;
        }
        let c = text[i..].chars().next().unwrap_or('\u{FFFD}');
        i += c.len_utf8();
        if is_unspaced_script(c) {
            flush_word(&mut word, &mut emit);
            if let Some(prev) = prev_unspaced {
                let mut buf = [0u8; 8];
                let a = prev.encode_utf8(&mut buf[..4]).len();
                let b = c.encode_utf8(&mut buf[a..]).len();
                emit(&buf[..a + b]);
            }
            prev_unspaced = Some(c);
            unspaced_run += 1;
        } else if is_word_char(c) || (is_mark(c) && !word.is_empty()) {
            flush_unspaced(&mut prev_unspaced, &mut unspaced_run, &mut emit);
            let mut buf = [0u8; 4];
            for lower in c.to_lowercase() {
                word.extend_from_slice(lower.encode_utf8(&mut buf).as_bytes());
            }
        } else if (c == '\u{2019}') && !word.is_empty() {
            // Typographic apostrophe, as in "don’t": one word, same as "don't".
            word.push(b'\'');
        } else {
            flush_word(&mut word, &mut emit);
            flush_unspaced(&mut prev_unspaced, &mut unspaced_run, &mut emit);
        }
    }
    flush_word(&mut word, &mut emit);
    flush_unspaced(&mut prev_unspaced, &mut unspaced_run, &mut emit);
}

fn flush_word(word: &mut Vec<u8>, emit: &mut impl FnMut(&[u8])) {
    while word.last() == Some(&b'\'') {
        word.pop();
    }
    if !word.is_empty() {
        emit(word);
        word.clear();
    }
}

/// A run of a single unspaced character is a unigram; longer runs were emitted as bigrams.
fn flush_unspaced(prev: &mut Option<char>, run: &mut usize, emit: &mut impl FnMut(&[u8])) {
    if let (Some(c), 1) = (*prev, *run) {
        let mut buf = [0u8; 4];
        emit(c.encode_utf8(&mut buf).as_bytes());
    }
    *prev = None;
    *run = 0;
}

/// Digest of the whitespace-normalised text, and its length in characters.
fn normalized_digest(text: &str) -> (Digest, usize) {
    let mut normalized = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !normalized.is_empty() {
            normalized.push(' ');
        }
        normalized.push_str(word);
    }
    let chars = normalized.chars().count();
    (Digest(xxh3_128(normalized.as_bytes())), chars)
}

/// The tokens of a text, as the fingerprint sees them (for inspection and tests).
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, |t| out.push(String::from_utf8_lossy(t).into_owned()));
    out
}

/// Number of minimums in a [`Sketch`].
pub const SKETCH_SLOTS: usize = 32;

/// Words per shingle in a [`Sketch`].
pub const SKETCH_SHINGLE_WORDS: usize = 2;

/// A MinHash sketch of a short text's set of word pairs, from which the Jaccard similarity of
/// two texts is estimated ([`Sketch::jaccard`]); stored for short pages, whose simhash alone
/// is not reliable.
///
/// Features: overlapping pairs of tokens (a text of one token has that token). For each of
/// [`SKETCH_SLOTS`] slots, the feature hash is remixed with the slot's seed and the minimum
/// kept (its low 32 bits), so an estimate from 32 slots has a standard error of at most
/// about 0.09.
///
/// ```
/// use crawldedup::fingerprint::Sketch;
/// let a = Sketch::of("Free delivery on orders over 50 euros, returns within 30 days.");
/// let b = Sketch::of("Free delivery on orders over 60 euros, returns within 30 days.");
/// let c = Sketch::of("Our studio is closed on Sundays and public holidays.");
/// assert!(a.jaccard(&b) > 0.4);
/// assert!(a.jaccard(&c) < 0.2);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sketch(pub [u32; SKETCH_SLOTS]);

impl Sketch {
    /// The sketch of a text.
    pub fn of(text: &str) -> Sketch {
        let mut mins = [u32::MAX; SKETCH_SLOTS];
        let mut previous: Option<u64> = None;
        let mut count = 0usize;
        let add = |feature: u64, mins: &mut [u32; SKETCH_SLOTS]| {
            for (slot, min) in mins.iter_mut().enumerate() {
                let h = fmix64(feature ^ SKETCH_SEEDS[slot]) as u32;
                *min = (*min).min(h);
            }
        };
        for_each_token(text, |token| {
            let hash = xxh3_64_with_seed(token, FEATURE_SEED);
            if let Some(prev) = previous {
                add(mix_shingle(&[prev, hash]), &mut mins);
            }
            previous = Some(hash);
            count += 1;
        });
        if count == 1 {
            if let Some(only) = previous {
                add(mix_shingle(&[only]), &mut mins);
            }
        }
        Sketch(mins)
    }

    /// Estimated Jaccard similarity of the two texts' word-pair sets, 0 to 1.
    pub fn jaccard(&self, other: &Sketch) -> f64 {
        let equal = self
            .0
            .iter()
            .zip(&other.0)
            .filter(|(a, b)| a == b && **a != u32::MAX)
            .count();
        equal as f64 / SKETCH_SLOTS as f64
    }

    /// The sketch as bytes (big-endian), for storage.
    pub fn to_bytes(&self) -> [u8; SKETCH_SLOTS * 4] {
        let mut out = [0u8; SKETCH_SLOTS * 4];
        for (chunk, value) in out.chunks_exact_mut(4).zip(&self.0) {
            chunk.copy_from_slice(&value.to_be_bytes());
        }
        out
    }

    /// A sketch from [`Sketch::to_bytes`] output.
    pub fn from_bytes(bytes: &[u8]) -> Option<Sketch> {
        if bytes.len() != SKETCH_SLOTS * 4 {
            return None;
        }
        let mut mins = [0u32; SKETCH_SLOTS];
        for (value, chunk) in mins.iter_mut().zip(bytes.chunks_exact(4)) {
            *value = u32::from_be_bytes(chunk.try_into().ok()?);
        }
        Some(Sketch(mins))
    }
}

/// Per-slot seeds of the sketch: fixed, part of the stored format.
const SKETCH_SEEDS: [u64; SKETCH_SLOTS] = {
    let mut seeds = [0u64; SKETCH_SLOTS];
    let mut state = 0x534b_4554_4348_5631u64; // "SKETCHV1"
    let mut i = 0;
    while i < SKETCH_SLOTS {
        // splitmix64
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        seeds[i] = z ^ (z >> 31);
        i += 1;
    }
    seeds
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sketch_of_identical_texts_is_identical_and_round_trips() {
        let a = Sketch::of("one two three four five");
        assert_eq!(a, Sketch::of("One two  three four five"));
        assert_eq!(a.jaccard(&a), 1.0);
        assert_eq!(Sketch::from_bytes(&a.to_bytes()), Some(a));
        let empty = Sketch::of("");
        assert_eq!(empty.jaccard(&empty), 0.0);
        assert_eq!(Sketch::of("word").jaccard(&Sketch::of("WORD")), 1.0);
    }

    #[test]
    fn tokens_split_words_and_bigram_unspaced_scripts() {
        assert_eq!(tokens("Don't STOP—now!"), vec!["don't", "stop", "now"]);
        assert_eq!(
            tokens("東京都 in Japan"),
            vec!["東京", "京都", "in", "japan"]
        );
        assert_eq!(tokens("字 x"), vec!["字", "x"]);
        assert_eq!(tokens("Ünïcödé ΕΛΛΗΝΙΚΆ"), vec!["ünïcödé", "ελληνικά"]);
    }

    #[test]
    fn empty_text_has_zero_simhash() {
        let f = Fingerprint::of("  \n ");
        assert_eq!(f.simhash, Simhash(0));
        assert_eq!(f.tokens, 0);
        assert_eq!(f.chars, 0);
    }

    #[test]
    fn hex_round_trips() {
        let s = Simhash(0x0123_4567_89ab_cdef);
        assert_eq!(Simhash::from_hex(&s.to_string()), Some(s));
        assert_eq!(Simhash::from_hex("xyz"), None);
    }
}
