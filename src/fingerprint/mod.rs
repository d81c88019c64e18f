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
//! lone character is a unigram). The features are word 3-shingles: every run of
//! [`SHINGLE_WORDS`] = 3 consecutive tokens (a text of one or two tokens has one feature,
//! all of them). A feature that occurs `tf` times weighs `tf` ([`TF_EXPONENT`] = 1).
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
//! | man pages, Chinese (651) | 211,575 | 105 | 31 | 0 / 18 | 15 (5 with Jaccard 0.4-0.5) |
//! | man pages, Japanese (865) | 373,680 | 301 | 30 | 1 / 44 | 15 (10 with Jaccard 0.4-0.5) |
//!
//! Independent fingerprints would put 2.4e-15 of pairs within 3 bits and 1.0e-8 within 10;
//! on the English dev texts none of a million pairs is within 10. Zero in about a million
//! pairs bounds the rate at about 3e-6 (95%); the scale benchmark (`benches/scale.rs`, in
//! the README) measures it on an index of 10 M documents instead: no unique document lost.
//! The man pages are many pages of one package translated by one hand: their "unrelated"
//! pairs include pages that share a third to a half of their text, and the pair within 3
//! bits is `iso_8859-3` against `iso_8859-4` (Jaccard 0.48). The pairs called
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
//! kind, 0.987 in all (resemblance >= 0.5 for short texts). Simhash within 3 alone finds 72-88% of the light edits and 2-14% of
//! the 2-5% edits, which is why the sketch bands are the second candidate source.
//!
//! Fingerprints are persisted in the index, so this is a format: a golden test pins the
//! fingerprints and sketches of fixed texts, and a change here needs a new version
//! ([`FINGERPRINT_VERSION`]).

use std::fmt;

use xxhash_rust::xxh3::{xxh3_64_with_seed, xxh3_128};

mod sketch;
pub use sketch::{BAND_BINS, BANDS, SKETCH_BINS, SKETCH_BITS, SKETCH_BYTES, SKETCH_SEED, Sketch};

/// Version of the feature and hashing rules. Stored by the index; bump on any change.
pub const FINGERPRINT_VERSION: u32 = 3;

/// A feature occurring `tf` times weighs `tf^TF_EXPONENT`.
pub const TF_EXPONENT: f64 = 1.0;

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
            sketch,
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

/// The distinct shingle hashes of a text in 32 bits, sorted: what the index keeps of a
/// tiny text to confirm its candidates exactly (two distinct shingles of a text share 32
/// bits with probability 2^-32).
pub fn tiny_set(text: &str) -> Vec<u32> {
    // The top 32 bits of a sorted set are sorted too; only repeats need removing.
    let mut set: Vec<u32> = shingle_set(text)
        .into_iter()
        .map(|h| (h >> 32) as u32)
        .collect();
    set.dedup();
    set
}

/// The shingle hashes of a text, and the number of tokens.
fn shingle_features(text: &str, words: usize) -> (Vec<u64>, usize) {
    let mut features = Vec::with_capacity(text.len() / 6 + 1);
    if words == 1 {
        // One word each, `mix_shingle(&[hash])` written out.
        let mut seen = 0usize;
        for_each_token(text, |token| {
            features.push(fmix64(xxh3_64_with_seed(token, FEATURE_SEED) ^ 1));
            seen += 1;
        });
        return (features, seen);
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
    (features, seen)
}

/// The simhash of a bag of feature hashes, each distinct feature weighted `tf^TF_EXPONENT`
/// (`features` is used as working space and left in an unspecified order). On
/// x86-64 with AVX2 the same code is compiled for 256-bit registers and chosen at run time;
/// the arithmetic is integer, so both give the same bits.
fn weighted_simhash(features: &mut [u64]) -> (Simhash, usize) {
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
fn weighted_simhash_avx2(features: &mut [u64]) -> (Simhash, usize) {
    weighted_simhash_portable(features)
}

#[inline(always)]
fn weighted_simhash_portable(features: &mut [u64]) -> (Simhash, usize) {
    // Every occurrence adds the unit weight (tf^TF_EXPONENT at tf = 1) per set bit: counted per
    // bit position with carry-save adders, a few logic operations each and no branch. A
    // feature seen tf >= 2 times then adds the rest of its weight, tf^TF_EXPONENT - tf units, found
    // through an open-addressing table (linear probing, at most half full) that lists each
    // feature when its count reaches 2. The sums are the same integers as adding tf^TF_EXPONENT per
    // distinct feature, so the order and the split do not change the bits.
    let unit = tf_weight(1);
    let slots = (features.len() * 2).next_power_of_two().max(16);
    let mask = slots - 1;
    // (feature, count) side by side: a probe reads one cache line.
    let mut table = vec![(0u64, 0u32); slots];
    // Slots of the features whose count reached 2, written over the features already read
    // (the list never outgrows the features read so far): written unconditionally, kept
    // by moving the end only when the count is 2 (the branch would go either way at random).
    let mut repeats = 0usize;
    let mut distinct = 0usize;
    let mut all = PositionalCount::default();
    let mut zero_count = 0usize; // the hash 0 marks an empty slot, so it is counted apart
    for i in 0..features.len() {
        let hash = features[i];
        all.add(hash);
        if hash == 0 {
            zero_count += 1;
            continue;
        }
        let mut slot = (hash >> 7) as usize & mask;
        // The slot is either this feature's or the empty one it takes: one path for both.
        while table[slot].0 != hash && table[slot].0 != 0 {
            slot = (slot + 1) & mask;
        }
        let entry = &mut table[slot];
        entry.0 = hash;
        distinct += usize::from(entry.1 == 0);
        entry.1 += 1;
        features[repeats] = slot as u64;
        repeats += usize::from(entry.1 == 2);
    }
    let mut acc = Accumulator::default();
    for &slot in &features[..repeats] {
        let (hash, tf) = table[slot as usize];
        let tf = tf as usize;
        acc.add(hash, tf_weight(tf) - tf as u64 * unit);
    }
    if zero_count > 1 {
        acc.add(0, tf_weight(zero_count) - zero_count as u64 * unit);
    }
    all.add_to(&mut acc, unit);
    (acc.finish(), distinct + usize::from(zero_count > 0))
}

/// `tf^TF_EXPONENT` in 1/256 units, from a table for small counts.
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

pub(crate) fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}

/// How many of a stream of 64-bit words have each bit set, kept bit-sliced: words are
/// taken 16 at a time through a Harley-Seal network of carry-save adders into the
/// counters of weight 1, 2, 4 and 8, and what overflows those (weight 16) goes into a
/// binary ripple counter, once per 16 words.
#[derive(Default)]
struct PositionalCount {
    block: [u64; 16],
    in_block: usize,
    ones: u64,
    twos: u64,
    fours: u64,
    eights: u64,
    /// Bit-sliced count of sixteens: level `l` holds bit `l` of each position's count.
    sixteens: [u64; 32],
    words: u64,
}

/// Carry-save adder: (carry, sum) of three bit-vectors.
#[inline(always)]
fn csa(a: u64, b: u64, c: u64) -> (u64, u64) {
    let u = a ^ b;
    ((a & b) | (u & c), u ^ c)
}

impl PositionalCount {
    #[inline(always)]
    fn add(&mut self, word: u64) {
        self.block[self.in_block] = word;
        self.in_block += 1;
        if self.in_block == 16 {
            self.in_block = 0;
            self.add_block();
        }
    }

    fn add_block(&mut self) {
        let d = self.block;
        let (twos_a, ones) = csa(self.ones, d[0], d[1]);
        let (twos_b, ones) = csa(ones, d[2], d[3]);
        let (fours_a, twos) = csa(self.twos, twos_a, twos_b);
        let (twos_a, ones) = csa(ones, d[4], d[5]);
        let (twos_b, ones) = csa(ones, d[6], d[7]);
        let (fours_b, twos) = csa(twos, twos_a, twos_b);
        let (eights_a, fours) = csa(self.fours, fours_a, fours_b);
        let (twos_a, ones) = csa(ones, d[8], d[9]);
        let (twos_b, ones) = csa(ones, d[10], d[11]);
        let (fours_a, twos) = csa(twos, twos_a, twos_b);
        let (twos_a, ones) = csa(ones, d[12], d[13]);
        let (twos_b, ones) = csa(ones, d[14], d[15]);
        let (fours_b, twos) = csa(twos, twos_a, twos_b);
        let (eights_b, fours) = csa(fours, fours_a, fours_b);
        let (sixteens, eights) = csa(self.eights, eights_a, eights_b);
        (self.ones, self.twos, self.fours, self.eights) = (ones, twos, fours, eights);
        let mut carry = sixteens;
        for level in self.sixteens.iter_mut() {
            if carry == 0 {
                break;
            }
            (*level, carry) = (*level ^ carry, *level & carry);
        }
        self.words += 16;
    }

    /// Adds `weight` to `acc` once for every counted word (per set bit, per lane).
    fn add_to(&self, acc: &mut Accumulator, weight: u64) {
        let total = self.words + self.in_block as u64;
        if total == 0 {
            return;
        }
        let mut lanes = [0u64; 64];
        for (bit, lane) in lanes.iter_mut().enumerate() {
            let at = |v: u64| (v >> bit) & 1;
            let mut count =
                at(self.ones) + 2 * at(self.twos) + 4 * at(self.fours) + 8 * at(self.eights);
            for (level, &slice) in self.sixteens.iter().enumerate() {
                count += at(slice) << (4 + level);
            }
            for &word in &self.block[..self.in_block] {
                count += at(word);
            }
            *lane = count * weight;
        }
        acc.add_lanes(&lanes, total * weight);
    }
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

    /// Adds per-lane totals (and their overall weight) computed elsewhere.
    fn add_lanes(&mut self, lanes: &[u64; 64], total: u64) {
        for (wide, &add) in self.lanes.iter_mut().zip(lanes) {
            *wide += add;
        }
        self.total += total;
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

const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
const LOW_BITS: u64 = 0x0101_0101_0101_0101;

/// For eight bytes in a word (first byte lowest): the high bit of each byte that is an ASCII
/// letter or digit, and of each that is an ASCII capital. Each byte is compared with the
/// range bounds by adding `0x80 - bound` to its low seven bits, which never carries into
/// the next byte; bytes of 0x80 and up are neither.
#[inline(always)]
fn ascii_alnum_upper(x: u64) -> (u64, u64) {
    let y = x & !HIGH_BITS;
    let at_least = |bound: u64| (y + (0x80 - bound) * LOW_BITS) & HIGH_BITS;
    let ascii = !x & HIGH_BITS;
    let digit = at_least(0x30) & !at_least(0x3a);
    let upper = at_least(0x41) & !at_least(0x5b);
    let lower = at_least(0x61) & !at_least(0x7b);
    ((digit | upper | lower) & ascii, upper & ascii)
}

/// Calls `emit` with every token of `text`, in order: the text in Unicode compatibility
/// form (NFKC: full-width letters and digits, ligatures and the like fold to their plain
/// forms), lower-cased, with decimal digits of every script as ASCII digits.
fn for_each_token(text: &str, emit: impl FnMut(&[u8])) {
    use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfkc_quick};
    // ASCII is its own NFKC form; most other text is too, which the quick check tells
    // without allocating. It looks only at the characters that could change a word
    // ([`may_change_a_word`]): letters, digits and marks outside the common ranges that are
    // their own NFKC form. Separators and punctuation (a no-break space, an ellipsis) are
    // dropped between words whatever their form, so a text that has them is not normalised
    // for their sake, and the table lookup is skipped for nearly every character.
    if !text.is_ascii()
        && is_nfkc_quick(non_ascii_chars(text).filter(|&c| may_change_a_word(c)))
            != IsNormalized::Yes
    {
        let normalized: String = text.nfkc().collect();
        return tokenize(&normalized, emit);
    }
    tokenize(text, emit)
}

/// Characters that are their own NFKC form and have combining class 0, by ranges cheap to
/// test: ASCII, the Latin-1 letters, basic Cyrillic, dashes and quotation marks, CJK
/// punctuation, kana, CJK ideographs and Hangul syllables. (A test checks every one.)
fn surely_nfkc_stable(c: char) -> bool {
    matches!(c as u32,
        0x00..=0x7F
        | 0xC0..=0xFF
        | 0x0410..=0x044F
        | 0x2013..=0x2014
        | 0x2018..=0x201D
        | 0x3001..=0x3002
        | 0x3041..=0x3096
        | 0x30A1..=0x30FA
        | 0x4E00..=0x9FFF
        | 0xAC00..=0xD7A3
    )
}

/// The characters of `text` outside ASCII, found eight bytes at a time.
fn non_ascii_chars(text: &str) -> impl Iterator<Item = char> + '_ {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while let Some(chunk) = bytes.get(i..i + 8) {
            let word = u64::from_le_bytes(chunk.try_into().unwrap_or([0x80; 8]));
            if word & HIGH_BITS != 0 {
                break;
            }
            i += 8;
        }
        while bytes.get(i).is_some_and(|b| b.is_ascii()) {
            i += 1;
        }
        let c = text.get(i..)?.chars().next()?;
        i += c.len_utf8();
        Some(c)
    })
}

/// Whether NFKC could change a word that `c` is part of: a letter, digit or mark that is
/// not surely its own NFKC form.
fn may_change_a_word(c: char) -> bool {
    !surely_nfkc_stable(c) && (c.is_alphanumeric() || is_mark(c) || c > '\u{2FFF}')
}

/// The zero of every run of ten decimal digits outside ASCII that NFKC leaves alone
/// (Arabic-Indic, Devanagari, Bengali, Thai, Myanmar, ...): a digit maps to its value.
const DIGIT_ZEROS: [u32; 22] = [
    0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6, 0x0D66,
    0x0DE6, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0,
];

/// `c` as an ASCII digit, when it is a decimal digit of another script.
fn ascii_digit(c: char) -> Option<char> {
    let code = c as u32;
    DIGIT_ZEROS
        .iter()
        .find(|&&zero| (zero..zero + 10).contains(&code))
        .and_then(|&zero| char::from_digit(code - zero, 10))
}

/// [`for_each_token`] on text already in NFKC form.
fn tokenize(text: &str, mut emit: impl FnMut(&[u8])) {
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
                let mut ended = false;
                // Eight bytes at a time while the run lasts, then byte by byte.
                while let Some(chunk) = bytes.get(i..i + 8) {
                    let x = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
                    let (alnum, upper) = ascii_alnum_upper(x);
                    let stop = !alnum & HIGH_BITS;
                    let len = (stop.trailing_zeros() / 8) as usize;
                    let in_run = if len == 8 {
                        u64::MAX
                    } else {
                        (1u64 << (len * 8)) - 1
                    };
                    if upper & in_run != 0 {
                        class |= UPPER;
                    }
                    i += len;
                    if len < 8 {
                        ended = true;
                        break;
                    }
                }
                while let Some(&byte) = bytes.get(i).filter(|_| !ended) {
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
                if word.is_empty() && !continues && (!upper || run.len() <= 64) {
                    // One call site for both cases, so that `emit` is inlined here once.
                    let mut lower = [0u8; 64];
                    let token = if upper {
                        for (to, from) in lower.iter_mut().zip(run) {
                            *to = from.to_ascii_lowercase();
                        }
                        &lower[..run.len()]
                    } else {
                        run
                    };
                    emit(token);
                } else {
                    word.extend(run.iter().map(u8::to_ascii_lowercase));
                }
                continue;
            }
            if word.is_empty() && prev_unspaced.is_none() {
                // A separator with nothing pending: the common case between ASCII words.
                i += 1;
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
            let c = ascii_digit(c).unwrap_or(c);
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

/// [`crate::text::is_ascii_space`] as a table, for the digest's branch-free loop.
const ASCII_SPACE: [bool; 128] = {
    let mut table = [false; 128];
    let mut i = 0;
    while i < 128 {
        table[i] = crate::text::is_ascii_space(i as u8);
        i += 1;
    }
    table
};

/// Digest of the whitespace-normalised text, and its length in characters.
fn normalized_digest(text: &str) -> (Digest, usize) {
    let bytes = text.as_bytes();
    // Every byte is written to the output and the output position only moves on when the
    // byte is not a second whitespace in a row: a loop without branches on the text, which
    // turns each run of whitespace into one space (a leading one is never kept, a
    // trailing one is cut at the end). Beyond ASCII, `space_len_at` decodes only after
    // the lead bytes of whitespace characters. The result is the words of
    // `str::split_whitespace` joined by one space.
    let mut out = vec![0u8; bytes.len()];
    let mut len = 0usize;
    // Whether the last byte written was a space (true at the start: no leading space).
    let mut after_space = true;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            let space = ASCII_SPACE[b as usize];
            out[len] = if space { b' ' } else { b };
            len += usize::from(!(space && after_space));
            after_space = space;
            i += 1;
            continue;
        }
        let width = crate::text::space_len_at(text, i);
        if width > 0 {
            out[len] = b' ';
            len += usize::from(!after_space);
            after_space = true;
            i += width;
        } else {
            out[len] = b;
            len += 1;
            after_space = false;
            i += 1;
        }
    }
    if after_space && len > 0 {
        len -= 1;
    }
    let normalized = &out[..len];
    let chars = normalized.iter().filter(|&&b| (b as i8) >= -0x40).count();
    (Digest(xxh3_128(normalized)), chars)
}

/// The tokens of a text, as the fingerprint sees them (for inspection and tests).
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, |t| out.push(String::from_utf8_lossy(t).into_owned()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn non_ascii_chars_are_found_wherever_they_sit() {
        let text = "abcdefgh\u{e9}ijklmnopqrstuvwx\u{ff21}yz\u{4e2d}";
        let want: Vec<char> = text.chars().filter(|c| !c.is_ascii()).collect();
        assert_eq!(non_ascii_chars(text).collect::<Vec<_>>(), want);
        assert_eq!(non_ascii_chars("plain ascii only").count(), 0);
    }

    #[test]
    fn characters_taken_as_nfkc_stable_are() {
        use unicode_normalization::UnicodeNormalization;
        use unicode_normalization::char::canonical_combining_class;
        for c in (0u32..0x3_0000).filter_map(char::from_u32) {
            if surely_nfkc_stable(c) {
                let one = c.to_string();
                assert_eq!(one.nfkc().collect::<String>(), one, "U+{:04X}", c as u32);
                assert_eq!(canonical_combining_class(c), 0, "U+{:04X}", c as u32);
            }
        }
    }

    #[test]
    fn tokens_fold_compatibility_forms_and_digits_of_other_scripts() {
        // Full-width letters and digits, a ligature, Arabic-Indic and Devanagari digits.
        assert_eq!(tokens("ＡＢＣ ２０２６ ﬁne"), vec!["abc", "2026", "fine"]);
        assert_eq!(tokens("٢٠٢٦ ह२"), vec!["2026", "ह2"]);
        assert_eq!(
            Fingerprint::of("ＴＨＥ ｃｏｕｎｃｉｌ ｍｅｔ ｏｎ ｔｕｅｓｄａｙ").simhash,
            Fingerprint::of("The council met on Tuesday").simhash
        );
    }

    /// The definition, written plainly: per distinct feature, +tf^TF_EXPONENT on its set bits.
    fn reference_simhash(features: &[u64]) -> Simhash {
        let mut counts: std::collections::HashMap<u64, usize> = Default::default();
        for &f in features {
            *counts.entry(f).or_default() += 1;
        }
        let mut lanes = [0u128; 64];
        let mut total = 0u128;
        for (&f, &tf) in &counts {
            let w = u128::from(tf_weight(tf));
            total += w;
            for (bit, lane) in lanes.iter_mut().enumerate() {
                *lane += w * u128::from((f >> bit) & 1);
            }
        }
        let mut out = 0;
        for (bit, &lane) in lanes.iter().enumerate() {
            if 2 * lane > total {
                out |= 1 << bit;
            }
        }
        Simhash(out)
    }

    proptest::proptest! {
        #[test]
        fn weighted_simhash_matches_its_definition(
            distinct in proptest::collection::vec(proptest::prelude::any::<u64>(), 1..300),
            picks in proptest::collection::vec(0usize..1000, 0..2000),
        ) {
            // Repeats with skewed counts (and, now and then, the hash 0).
            let features: Vec<u64> = picks
                .iter()
                .map(|&p| if p == 999 { 0 } else { distinct[(p * p / 997) % distinct.len()] })
                .collect();
            proptest::prop_assert_eq!(weighted_simhash(&mut features.clone()).0, reference_simhash(&features));
        }

        #[test]
        fn ascii_tokens_are_lowercased_alphanumeric_runs(
            text in "[a-zA-Z0-9 .,;/:@\\[`{~\x7f-]{0,200}"
        ) {
            let want: Vec<String> = text
                .split(|c: char| !c.is_ascii_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_ascii_lowercase)
                .collect();
            proptest::prop_assert_eq!(tokens(&text), want);
        }
    }

    proptest::proptest! {
        #[test]
        fn digest_normalises_whitespace_as_split_whitespace_does(
            text in "([a-zé東 \t\n\r\x0b\x0c\u{85}\u{a0}\u{1680}\u{2000}\u{200a}\u{200b}\u{2028}\u{202f}\u{205f}\u{3000}\u{c0}\u{e100}]|\u{feff}){0,60}"
        ) {
            let plain = text.split_whitespace().collect::<Vec<_>>().join(" ");
            let (digest, chars) = normalized_digest(&text);
            proptest::prop_assert_eq!(digest, Digest(xxh3_128(plain.as_bytes())));
            proptest::prop_assert_eq!(chars, plain.chars().count());
        }
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
