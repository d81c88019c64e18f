//! Features and weights: the word 3-shingle hashes of a text and their tf-weighted sum into
//! a simhash.

use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::counters::{Accumulator, PositionalCount};
use super::tokens::for_each_token;
use super::{FEATURE_SEED, MAX_SHINGLE_WORDS, Simhash, TF_EXPONENT};

/// The shingle hashes of a text, and the number of tokens.
pub(super) fn shingle_features(text: &str, words: usize) -> (Vec<u64>, usize) {
    let mut features = Vec::with_capacity(text.len() / 6 + 1);
    let seen = shingle_features_into(text, words, &mut features);
    (features, seen)
}

/// [`shingle_features`] into `features` (cleared first, its room reused): the number of
/// tokens.
pub(super) fn shingle_features_into(text: &str, words: usize, features: &mut Vec<u64>) -> usize {
    features.clear();
    if words == 1 {
        // One word each, `mix_shingle(&[hash])` written out.
        let mut seen = 0usize;
        for_each_token(text, |token| {
            features.push(fmix64(xxh3_64_with_seed(token, FEATURE_SEED) ^ 1));
            seen += 1;
        });
        return seen;
    }
    let mut window = [0u64; MAX_SHINGLE_WORDS];
    let mut seen = 0usize;
    if words == 3 {
        // The index's shingle, with `mix_shingle` of three hashes written out: no slice
        // loop per token on the path every page takes.
        let (mut a, mut b) = (0u64, 0u64);
        for_each_token(text, |token| {
            let c = xxh3_64_with_seed(token, FEATURE_SEED);
            seen += 1;
            if seen >= 3 {
                features.push(mix_three(a, b, c));
            }
            (a, b) = (b, c);
        });
        window[MAX_SHINGLE_WORDS - 2..].copy_from_slice(&[a, b]);
        if seen > 0 && seen < words {
            features.push(mix_shingle(&window[MAX_SHINGLE_WORDS - seen..]));
        }
        return seen;
    }
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
    seen
}

/// The hash of each token of `text`, in order, into `hashes` (cleared first): what
/// [`shingle_features_into`] builds its features from, so that a caller that needs words
/// and shingles of one text tokenises it once ([`word_features`], [`three_shingles`]).
pub(super) fn token_hashes_into(text: &str, hashes: &mut Vec<u64>) {
    hashes.clear();
    for_each_token(text, |token| {
        hashes.push(xxh3_64_with_seed(token, FEATURE_SEED))
    });
}

/// The single-word features of token hashes: `shingle_features_into(text, 1, ..)`.
pub(super) fn word_features(hashes: &[u64], features: &mut Vec<u64>) {
    features.clear();
    features.extend(hashes.iter().map(|&h| fmix64(h ^ 1)));
}

/// The word 3-shingle features of token hashes: `shingle_features_into(text, 3, ..)`.
pub(super) fn three_shingles(hashes: &[u64], features: &mut Vec<u64>) {
    features.clear();
    if hashes.len() < 3 {
        if !hashes.is_empty() {
            features.push(mix_shingle(hashes));
        }
        return;
    }
    features.extend(hashes.windows(3).map(|w| mix_three(w[0], w[1], w[2])));
}

/// The simhash of a bag of feature hashes, each distinct feature weighted `tf^TF_EXPONENT`
/// (`features` is used as working space and left in an unspecified order). On
/// x86-64 with AVX2 the same code is compiled for 256-bit registers and chosen at run time;
/// the arithmetic is integer, so both give the same bits.
pub(super) fn weighted_simhash(features: &mut [u64]) -> (Simhash, usize) {
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
pub(super) fn weighted_simhash_avx2(features: &mut [u64]) -> (Simhash, usize) {
    weighted_simhash_portable(features)
}

#[inline(always)]
pub(super) fn weighted_simhash_portable(features: &mut [u64]) -> (Simhash, usize) {
    // Every occurrence adds the unit weight (tf^TF_EXPONENT at tf = 1) per set bit: counted per
    // bit position with carry-save adders, a few logic operations each and no branch. A
    // feature seen tf >= 2 times then adds the rest of its weight, tf^TF_EXPONENT - tf units,
    // found through an open-addressing table (linear probing, at most half full) that lists
    // each feature when it is seen a second time. The sums are the same integers as adding
    // tf^TF_EXPONENT per distinct feature, so the order and the split do not change the bits.
    let unit = tf_weight(1);
    // Four times the features, so that it is at most a quarter full and a probe seldom
    // meets a neighbour (a mispredicted branch each time; at twice, the fingerprint ran
    // 3-4% slower); but a long text repeats its features, so past [`FIRST_TABLE_SLOTS`]
    // the table starts there and doubles when half full, instead of taking room for every
    // feature (a 50 MB text) and missing the cache on every probe.
    let mut slots = (features.len() * 4)
        .next_power_of_two()
        .clamp(16, FIRST_TABLE_SLOTS);
    let mut mask = slots - 1;
    // The features alone are probed (8 bytes a slot: the table of a page's text stays in
    // the first-level cache); beside them, how many more times than once each was seen,
    // read and written only for a repeat.
    let mut keys = vec![0u64; slots];
    let mut more = vec![0u32; slots];
    // Slots of the features seen twice, written over the features already read (the list
    // never outgrows the features read so far).
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
        while keys[slot] != hash && keys[slot] != 0 {
            slot = (slot + 1) & mask;
        }
        if keys[slot] == hash {
            more[slot] += 1;
            if more[slot] == 1 {
                features[repeats] = slot as u64;
                repeats += 1;
            }
            continue;
        }
        keys[slot] = hash;
        distinct += 1;
        if distinct * 2 > slots {
            // Twice the room: every entry moves, and so do the slots of the repeated ones,
            // listed again (at most half of the features read so far: they fit).
            slots *= 2;
            mask = slots - 1;
            let old_keys = std::mem::replace(&mut keys, vec![0u64; slots]);
            let old_more = std::mem::replace(&mut more, vec![0u32; slots]);
            repeats = 0;
            for (hash, extra) in old_keys.into_iter().zip(old_more).filter(|e| e.0 != 0) {
                let mut slot = (hash >> 7) as usize & mask;
                while keys[slot] != 0 {
                    slot = (slot + 1) & mask;
                }
                keys[slot] = hash;
                more[slot] = extra;
                if extra > 0 {
                    features[repeats] = slot as u64;
                    repeats += 1;
                }
            }
        }
    }
    let mut acc = Accumulator::default();
    let mut less = Accumulator::default();
    let mut rest = |hash: u64, tf: usize| {
        let (weight, units) = (tf_weight(tf), tf as u64 * unit);
        if weight >= units {
            acc.add(hash, weight - units);
        } else {
            less.add(hash, units - weight);
        }
    };
    for &slot in &features[..repeats] {
        let slot = slot as usize;
        rest(keys[slot], more[slot] as usize + 1);
    }
    if zero_count > 1 {
        rest(0, zero_count);
    }
    all.add_to(&mut acc, unit);
    acc.take_away(&mut less);
    (acc.finish(), distinct + usize::from(zero_count > 0))
}

/// Slots the feature table of [`weighted_simhash`] starts with at most (1 MB); it grows
/// from there for a text with more distinct features.
const FIRST_TABLE_SLOTS: usize = 1 << 16;

/// `tf^TF_EXPONENT` in 1/256 units, from a table for small counts.
pub(super) fn tf_weight(tf: usize) -> u64 {
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

/// [`mix_shingle`] of exactly three token hashes.
#[inline(always)]
fn mix_three(a: u64, b: u64, c: u64) -> u64 {
    fmix64(a ^ b.rotate_left(23) ^ c.rotate_left(46) ^ 3)
}

/// MurmurHash3's 32-bit finaliser: a bijection of `u32` that spreads every input bit over
/// the output.
#[inline(always)]
pub(crate) fn fmix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

#[inline(always)]
pub(crate) fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}
