//! The confirmation sketch: a 64-byte MinHash summary of a text's set of word 3-shingles,
//! from which the resemblance (Jaccard similarity) and containment of two texts are
//! estimated. Every near-duplicate candidate is confirmed on it, whatever found it.
//!
//! # Construction
//! One permutation hashing (Li, Owen and Zhang, NIPS 2012): each distinct shingle hash is
//! remixed with [`SKETCH_SEED`], its top 6 bits choose one of [`SKETCH_BINS`] bins, and the
//! bin keeps the smallest remaining value. One pass over the shingles, whatever the number of
//! bins, instead of one hash per shingle per slot. A bin no shingle fell into borrows the
//! value of another bin, found by a probe sequence that depends on the bin alone (optimal
//! densification, Shrivastava, ICML 2017), so two texts fill their empty bins the same way
//! and the estimator stays unbiased for short texts.
//!
//! Each bin then keeps only the low [`SKETCH_BITS`] bits of its minimum (b-bit MinHash, Li
//! and Konig, WWW 2010): two bins of unrelated texts agree by chance with probability 2^-8,
//! which [`Sketch::resemblance`] subtracts. 64 bins of 8 bits estimate a resemblance of 0.5
//! with a standard error of about 0.063 (0.055 at 0.74, a copy with 5% of its words
//! replaced), and unrelated texts (resemblance near 0) reach 0.5 with a probability below
//! 10^-15. The sketch also records the number of distinct shingles, so that containment
//! (how much of the smaller text the larger holds) can be derived from the resemblance.
//!
//! # Candidates
//! The same bins, taken four at a time, are the keys of the index's second candidate
//! source ([`Sketch::band_keys`]): 16 bands of 4 bins. Two texts share a band with
//! probability `1 - (1 - R^4)^16` for resemblance R: 0.997 at R = 0.74, 0.64 at R = 0.5,
//! 1.6e-6 at R = 0.01.

use super::{fmix32, fmix64};

/// Bins in a [`Sketch`].
pub const SKETCH_BINS: usize = 64;

/// Bits kept per bin.
pub const SKETCH_BITS: u32 = 8;

/// Bins per band key ([`Sketch::band_keys`]).
pub const BAND_BINS: usize = 4;

/// Band keys per sketch.
pub const BANDS: usize = SKETCH_BINS / BAND_BINS;

/// Bytes a sketch takes when stored: the bins and the shingle count (u32).
pub const SKETCH_BYTES: usize = SKETCH_BINS + 4;

/// Seed that decorrelates the sketch's hashes from the simhash's use of the same features.
pub const SKETCH_SEED: u64 = 0x4d49_4e48_4153_4833; // "MINHASH3"

/// Random probes for a full bin before an empty bin takes the next full one in order.
const MAX_PROBES: u64 = 4096;

/// Chance agreement of one bin between unrelated texts: 2^-SKETCH_BITS.
const CHANCE: f64 = 1.0 / (1u32 << SKETCH_BITS) as f64;

/// A b-bit one-permutation MinHash sketch of a set of shingle hashes (see the module doc).
///
/// ```
/// use crawldedup::fingerprint::Sketch;
/// let a = Sketch::of("Free delivery on all orders over fifty euros, and returns are free within thirty days of purchase.");
/// let b = Sketch::of("Free delivery on all orders over sixty euros, and returns are free within thirty days of purchase.");
/// let c = Sketch::of("Our studio is closed on Sundays and on public holidays, and opens at nine on weekdays.");
/// assert!(a.resemblance(&b) > 0.5);
/// assert!(a.resemblance(&c) < 0.2);
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Sketch {
    /// The low bits of each bin's minimum.
    pub bins: [u8; SKETCH_BINS],
    /// Distinct shingles in the text.
    pub shingles: u32,
    /// How far the text's tokens outnumber its words, in 127ths of its tokens: 0 for a
    /// text of spaced words (a token a word), about 52 for Chinese or Japanese (a token a
    /// character, 1.7 characters a word), 99 for Thai, Lao, Khmer or Myanmar (4.5 a word).
    /// [`Sketch::word_shingles`] reads it, so that the tiny rule
    /// (`Confirm::tiny_shingles`) means the same amount of text in every script.
    pub unspaced: u8,
}

/// The largest [`Sketch::unspaced`]: every token a character beyond its word.
pub const MAX_UNSPACED: u8 = 127;

/// In a stored shingle count, the bit that says the count's top byte holds
/// [`Sketch::unspaced`] (its low 7 bits) and the count is its low 24 bits. A sketch of
/// spaced text is stored without it, as before the field existed, so its bytes and those of
/// every record written before are read the same.
const UNSPACED_MARK: u32 = 1 << 31;

/// The largest shingle count stored beside [`Sketch::unspaced`] (24 bits).
const MARKED_SHINGLES: u32 = (1 << 24) - 1;

impl Default for Sketch {
    fn default() -> Self {
        Sketch {
            bins: [0; SKETCH_BINS],
            shingles: 0,
            unspaced: 0,
        }
    }
}

impl std::fmt::Debug for Sketch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Sketch({} shingles, ", self.shingles)?;
        if self.unspaced > 0 {
            write!(f, "unspaced {}/127, ", self.unspaced)?;
        }
        for b in &self.bins {
            write!(f, "{b:02x}")?;
        }
        write!(f, ")")
    }
}

impl Sketch {
    /// The sketch of a text's word 3-shingles (the features of its simhash), with its
    /// [`Sketch::unspaced`] share.
    pub fn of(text: &str) -> Sketch {
        let (features, tokens) = super::features::shingle_features(text, super::SHINGLE_WORDS);
        let mut set = features;
        set.sort_unstable();
        set.dedup();
        Sketch::from_distinct(&set).with_unspaced(super::unspaced_of(text, tokens))
    }

    /// This sketch with its [`Sketch::unspaced`] share set (at most [`MAX_UNSPACED`]); the
    /// shingle count is then kept to the 24 bits a stored sketch holds beside it.
    pub fn with_unspaced(mut self, unspaced: u8) -> Sketch {
        self.unspaced = unspaced.min(MAX_UNSPACED);
        if self.unspaced > 0 {
            self.shingles = self.shingles.min(MARKED_SHINGLES);
        }
        self
    }

    /// The distinct shingles counted as words: [`Sketch::shingles`] less the share of them
    /// that a script written without spaces adds ([`Sketch::unspaced`]). A Chinese text of
    /// 68 distinct shingles (68 or so characters) has 40, as an English text of 40 words.
    pub fn word_shingles(&self) -> f64 {
        f64::from(self.shingles) * self.word_shares()
    }

    /// The share of the text's shingles that count as words ([`Sketch::word_shingles`]):
    /// 1 for spaced text, about 0.6 for Chinese.
    pub fn word_shares(&self) -> f64 {
        1.0 - f64::from(self.unspaced) / f64::from(MAX_UNSPACED)
    }

    /// The sketch of a set of distinct feature hashes.
    pub fn from_distinct(features: &[u64]) -> Sketch {
        Sketch::from_features(features.iter().copied(), features.len())
    }

    /// The sketch of feature hashes that may repeat, given the number of distinct ones
    /// (repeats do not change a minimum).
    pub fn from_features(features: impl Iterator<Item = u64>, distinct: usize) -> Sketch {
        const EMPTY: u64 = u64::MAX;
        let mut mins = [EMPTY; SKETCH_BINS];
        for feature in features {
            let h = fmix64(feature ^ SKETCH_SEED);
            let bin = (h >> 58) as usize;
            let value = h & (u64::MAX >> 6);
            if value < mins[bin] {
                mins[bin] = value;
            }
        }
        let mut bins = [0u8; SKETCH_BINS];
        if mins.iter().all(|&m| m == EMPTY) {
            return Sketch::default();
        }
        for (i, bin) in bins.iter_mut().enumerate() {
            let mut value = mins[i];
            let mut attempt = 0u64;
            while value == EMPTY {
                // The probe sequence depends on the bin and the attempt only. A text with
                // at least one shingle has a full bin, which the random probes find in 64
                // attempts on average; past `MAX_PROBES` (never seen in practice) the bins
                // after this one are taken in turn, so the loop always ends.
                attempt += 1;
                let j = if attempt <= MAX_PROBES {
                    (fmix64(((i as u64) << 32) ^ attempt ^ SKETCH_SEED) >> 58) as usize
                } else {
                    (i + (attempt - MAX_PROBES) as usize) % SKETCH_BINS
                };
                value = mins[j];
            }
            // Low bits of a minimum are uniform; a borrowed value is marked by the bin it
            // fills, so that two texts agree there only when they borrowed the same value.
            let borrowed = u64::from(mins[i] == EMPTY) * (i as u64 + 1);
            *bin = (fmix64(value ^ borrowed) & 0xff) as u8;
        }
        Sketch {
            bins,
            shingles: u32::try_from(distinct).unwrap_or(u32::MAX),
            unspaced: 0,
        }
    }

    /// Bins where the two sketches agree.
    fn agreeing(&self, other: &Sketch) -> usize {
        self.bins
            .iter()
            .zip(&other.bins)
            .filter(|(a, b)| a == b)
            .count()
    }

    /// Estimated resemblance (Jaccard similarity of the two shingle sets), 0 to 1, with
    /// chance agreements of the b-bit values subtracted.
    pub fn resemblance(&self, other: &Sketch) -> f64 {
        if self.shingles == 0 || other.shingles == 0 {
            return 0.0;
        }
        let agree = self.agreeing(other) as f64 / SKETCH_BINS as f64;
        ((agree - CHANCE) / (1.0 - CHANCE)).clamp(0.0, 1.0)
    }

    /// Estimated containment: the share of the smaller text's shingles that the larger
    /// holds, from the resemblance and the two set sizes (|A and B| = R (|A| + |B|) / (1 + R)).
    pub fn containment(&self, other: &Sketch) -> f64 {
        let r = self.resemblance(other);
        let (a, b) = (f64::from(self.shingles), f64::from(other.shingles));
        let smaller = a.min(b);
        if smaller == 0.0 {
            return 0.0;
        }
        (r * (a + b) / (1.0 + r) / smaller).min(1.0)
    }

    /// The [`BANDS`] candidate keys: bins `4i..4i + 4` with the band number, mixed (texts
    /// sharing a key are candidates).
    pub fn band_keys(&self) -> [u32; BANDS] {
        std::array::from_fn(|band| self.band_key(band))
    }

    /// Band key `band` of [`Sketch::band_keys`] (`band < BANDS`).
    pub fn band_key(&self, band: usize) -> u32 {
        Sketch::band_key_of(band, self.band_bins(band))
    }

    /// The four bins of band `band`, as one word (little-endian).
    pub fn band_bins(&self, band: usize) -> u32 {
        let at = (band % BANDS) * BAND_BINS;
        let mut word = [0u8; 4];
        word.copy_from_slice(&self.bins[at..at + BAND_BINS]);
        u32::from_le_bytes(word)
    }

    /// The key of band `band` whose bins are `bins` ([`Sketch::band_bins`]): the bins
    /// xor a constant of the band, through a bijective mix, so two keys of one band are
    /// equal exactly when their bins are, and the keys spread evenly over the 32 bits the
    /// band table buckets by. (Four 8-bit bins are 32 bits: a wider key would carry
    /// nothing more, and 4 bytes less per document and band is 64 bytes per document.)
    pub fn band_key_of(band: usize, bins: u32) -> u32 {
        let salt = (fmix64(band as u64 ^ SKETCH_SEED) >> 32) as u32;
        fmix32(bins ^ salt)
    }

    /// The sketch as bytes: the bins, then the shingle count (big-endian); for a text of a
    /// script written without spaces, the count's top bit set, [`Sketch::unspaced`] in the
    /// rest of its top byte and the count in its low 24 bits.
    pub fn to_bytes(&self) -> [u8; SKETCH_BYTES] {
        let mut out = [0u8; SKETCH_BYTES];
        out[..SKETCH_BINS].copy_from_slice(&self.bins);
        let count = if self.unspaced == 0 {
            self.shingles
        } else {
            UNSPACED_MARK
                | u32::from(self.unspaced.min(MAX_UNSPACED)) << 24
                | self.shingles.min(MARKED_SHINGLES)
        };
        out[SKETCH_BINS..].copy_from_slice(&count.to_be_bytes());
        out
    }

    /// A sketch from [`Sketch::to_bytes`] output.
    pub fn from_bytes(bytes: &[u8]) -> Option<Sketch> {
        if bytes.len() != SKETCH_BYTES {
            return None;
        }
        let mut bins = [0u8; SKETCH_BINS];
        bins.copy_from_slice(&bytes[..SKETCH_BINS]);
        let count = u32::from_be_bytes(bytes[SKETCH_BINS..].try_into().ok()?);
        let (shingles, unspaced) = if count & UNSPACED_MARK == 0 {
            (count, 0)
        } else {
            (
                count & MARKED_SHINGLES,
                ((count >> 24) as u8) & MAX_UNSPACED,
            )
        };
        Some(Sketch {
            bins,
            shingles,
            unspaced,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_texts_have_identical_sketches_that_round_trip() {
        let a = Sketch::of("one two three four five six");
        assert_eq!(a, Sketch::of("One two  three FOUR five six"));
        assert_eq!(a.resemblance(&a), 1.0);
        assert_eq!(a.shingles, 4);
        assert_eq!(Sketch::from_bytes(&a.to_bytes()), Some(a));
        assert_eq!(Sketch::of("").resemblance(&Sketch::of("")), 0.0);
    }

    #[test]
    fn a_sketch_of_unspaced_text_keeps_its_share_and_spaced_ones_keep_their_old_bytes() {
        // Chinese: a token a character, 1.7 characters a word.
        let zh =
            Sketch::of("市图书馆自下月起将周末开放时间延长至晚上九点，方便上班族和学生借阅图书。");
        assert!((45..=60).contains(&zh.unspaced), "{zh:?}");
        assert_eq!(Sketch::from_bytes(&zh.to_bytes()), Some(zh));
        let words = zh.word_shingles();
        assert!(words < f64::from(zh.shingles) * 0.65, "{words} of {zh:?}");
        // Thai: 4.5 characters a word.
        let th = Sketch::of("ประเทศไทยมีประชากรประมาณเจ็ดสิบล้านคน และเมืองหลวงคือกรุงเทพมหานคร");
        assert!((90..=110).contains(&th.unspaced), "{th:?}");
        assert_eq!(Sketch::from_bytes(&th.to_bytes()), Some(th));
        // A spaced text's stored count is its shingle count, as records written before the
        // share existed hold it; such bytes read back as spaced.
        let en = Sketch::of("the harbour council met on thursday to decide the future of the pier");
        assert_eq!(en.unspaced, 0);
        assert_eq!(en.to_bytes()[SKETCH_BINS..], en.shingles.to_be_bytes());
        let mut old = zh.to_bytes();
        old[SKETCH_BINS..].copy_from_slice(&300u32.to_be_bytes());
        let read = Sketch::from_bytes(&old).unwrap();
        assert_eq!((read.shingles, read.unspaced), (300, 0));
        assert_eq!(read.word_shingles(), 300.0);
        // A marked count keeps 24 bits.
        let big = Sketch {
            shingles: u32::MAX,
            ..zh
        }
        .with_unspaced(zh.unspaced);
        assert_eq!(big.shingles, (1 << 24) - 1);
        assert_eq!(Sketch::from_bytes(&big.to_bytes()), Some(big));
    }

    /// Texts of `n` distinct synthetic shingles sharing `shared` of them.
    fn pair(n: u64, shared: u64, salt: u64) -> (Sketch, Sketch) {
        let a: Vec<u64> = (0..n).map(|i| fmix64(i ^ salt)).collect();
        let b: Vec<u64> = (0..n)
            .map(|i| {
                if i < shared {
                    fmix64(i ^ salt)
                } else {
                    fmix64((i + 1_000_000) ^ salt)
                }
            })
            .collect();
        (Sketch::from_distinct(&a), Sketch::from_distinct(&b))
    }

    #[test]
    fn resemblance_estimates_are_unbiased_within_their_standard_error() {
        // 400 pairs of 300-shingle texts sharing 200 (resemblance 200/400 = 0.5): the mean
        // of 400 estimates has a standard error of about 0.063 / 20.
        for (shared, truth) in [(200u64, 0.5), (0, 0.0), (260, 260.0 / 340.0)] {
            let mut sum = 0.0;
            for salt in 0..400u64 {
                let (a, b) = pair(300, shared, salt * 7919);
                sum += a.resemblance(&b);
            }
            let mean = sum / 400.0;
            assert!((mean - truth).abs() < 0.02, "shared {shared}: mean {mean}");
        }
    }

    #[test]
    fn unrelated_texts_never_reach_the_confirmation_threshold() {
        for salt in 0..2000u64 {
            let (a, b) = pair(200, 0, salt * 104_729);
            assert!(a.resemblance(&b) < 0.2);
        }
    }

    #[test]
    fn containment_finds_a_text_inside_a_longer_one() {
        // 100 shingles, all of them inside a text of 300.
        let small: Vec<u64> = (0..100).map(fmix64).collect();
        let large: Vec<u64> = (0..300).map(fmix64).collect();
        let (a, b) = (Sketch::from_distinct(&small), Sketch::from_distinct(&large));
        assert!(a.containment(&b) > 0.75, "{}", a.containment(&b));
        assert!(a.resemblance(&b) < 0.5);
    }

    #[test]
    fn a_text_of_one_shingle_fills_every_bin_with_it() {
        let a = Sketch::from_distinct(&[42]);
        let b = Sketch::from_distinct(&[42]);
        assert_eq!(a, b);
        assert_eq!(a.resemblance(&b), 1.0);
        assert!(Sketch::from_distinct(&[43]).resemblance(&a) < 0.2);
    }

    #[test]
    fn band_keys_agree_exactly_where_bins_agree() {
        let (a, b) = pair(300, 300, 1);
        assert_eq!(a.band_keys(), b.band_keys());
        let (a, b) = pair(300, 0, 2);
        let same = a
            .band_keys()
            .iter()
            .zip(b.band_keys())
            .filter(|(x, y)| **x == *y)
            .count();
        assert_eq!(same, 0);
    }

    /// What the candidate rule of the index counts on ([`crate::index::Confirm`]): two texts
    /// of resemblance R share no band key with probability `(1 - R^4)^16`, about one time
    /// in three at 0.5 and one in ten at 0.6 (a short text with a few words changed), and
    /// nearly never at 0.74 (5% of its words replaced).
    #[test]
    fn two_texts_share_no_band_key_as_often_as_the_banding_says() {
        for (shared, resemblance) in [(200u64, 0.5f64), (225, 0.6), (255, 0.74)] {
            let trials = 2000u64;
            let missed = (0..trials)
                .filter(|&salt| {
                    let (a, b) = pair(300, shared, salt * 7_919 + 3);
                    !a.band_keys()
                        .iter()
                        .zip(b.band_keys())
                        .any(|(x, y)| *x == y)
                })
                .count() as f64
                / trials as f64;
            let expected = (1.0 - resemblance.powi(4)).powi(BANDS as i32);
            // Binomial standard error of 2,000 trials is at most 0.011.
            assert!(
                (missed - expected).abs() < 0.04,
                "R = {resemblance}: {missed} missed, {expected} expected"
            );
        }
    }
}
