//! Byte classes of 16 bytes at a time with SSE2, which every x86-64 CPU has: the vector
//! forms of the word-at-a-time tests in the tokenizer and the digest, for the runs of text
//! long enough to take them.

use std::arch::x86_64::{
    __m128i, _mm_and_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8,
    _mm_or_si128, _mm_set1_epi8, _mm_storeu_si128, _mm_sub_epi8,
};

/// The 16 bytes of `bytes` from `at`, as a vector.
#[target_feature(enable = "sse2")]
#[inline]
fn load(bytes: &[u8], at: usize) -> __m128i {
    let part = &bytes[at..at + 16];
    // SAFETY: an unaligned load of the 16 bytes of `part`.
    unsafe { _mm_loadu_si128(part.as_ptr().cast()) }
}

/// `v` into the 16 bytes of `bytes` from `at`.
#[target_feature(enable = "sse2")]
#[inline]
fn store(bytes: &mut [u8], at: usize, v: __m128i) {
    let part = &mut bytes[at..at + 16];
    // SAFETY: an unaligned store into the 16 bytes of `part`.
    unsafe { _mm_storeu_si128(part.as_mut_ptr().cast(), v) }
}

/// Each byte of `v` from `from` to `from + span` (all bits set), else zero: `v - from`
/// (wrapping) is at most `span`, which is where the unsigned minimum with `span` leaves it
/// as it is.
#[target_feature(enable = "sse2")]
#[inline]
fn in_span(v: __m128i, from: u8, span: u8) -> __m128i {
    let shifted = _mm_sub_epi8(v, _mm_set1_epi8(from as i8));
    _mm_cmpeq_epi8(_mm_min_epu8(shifted, _mm_set1_epi8(span as i8)), shifted)
}

/// Each byte of `v` equal to `byte`.
#[target_feature(enable = "sse2")]
#[inline]
fn equal(v: __m128i, byte: u8) -> __m128i {
    _mm_cmpeq_epi8(v, _mm_set1_epi8(byte as i8))
}

/// One bit a byte (first byte lowest) of a compare's result.
#[target_feature(enable = "sse2")]
#[inline]
fn bits(v: __m128i) -> u64 {
    u64::from(_mm_movemask_epi8(v) as u16)
}

/// For the 32 bytes of `chunk`, one bit each: the spaces (0x20), and the other bytes that
/// whitespace normalisation may change (ASCII whitespace other than a space, and 0xC2,
/// 0xE1, 0xE2 and 0xE3, the lead bytes of whitespace beyond ASCII).
#[target_feature(enable = "sse2")]
#[inline]
pub(super) fn space_masks(chunk: &[u8; 32]) -> (u32, u32) {
    let (mut spaces, mut others) = (0u64, 0u64);
    for half in 0..2 {
        let v = load(chunk, half * 16);
        spaces |= bits(equal(v, b' ')) << (half * 16);
        let other = _mm_or_si128(
            _mm_or_si128(in_span(v, 0x09, 4), in_span(v, 0xE1, 2)),
            equal(v, 0xC2),
        );
        others |= bits(other) << (half * 16);
    }
    (spaces as u32, others as u32)
}

/// For the 64 bytes of `chunk`, one bit each: the ASCII letters and digits, and the
/// apostrophes (0x27); and the bytes with every capital made small, into `lower`.
#[target_feature(enable = "sse2")]
#[inline]
pub(super) fn word_masks(chunk: &[u8; 64], lower: &mut [u8; 64]) -> (u64, u64) {
    let (mut alnum, mut quotes) = (0u64, 0u64);
    for quarter in 0..4 {
        let v = load(chunk, quarter * 16);
        let capitals = in_span(v, b'A', 25);
        let letters_digits = _mm_or_si128(
            _mm_or_si128(in_span(v, b'0', 9), in_span(v, b'a', 25)),
            capitals,
        );
        let lowered = _mm_or_si128(v, _mm_and_si128(capitals, _mm_set1_epi8(0x20)));
        store(lower, quarter * 16, lowered);
        alnum |= bits(letters_digits) << (quarter * 16);
        quotes |= bits(equal(v, b'\'')) << (quarter * 16);
    }
    (alnum, quotes)
}

/// How many bytes of `bytes` are ASCII before the first that is not, as far as whole runs
/// of 16 bytes go: the first byte beyond ASCII, or the start of the last run of fewer than
/// 16 bytes (which the caller reads on its own).
#[target_feature(enable = "sse2")]
#[inline]
pub(super) fn ascii_prefix(bytes: &[u8]) -> usize {
    let mut at = 0;
    while at + 16 <= bytes.len() {
        let high = bits(load(bytes, at));
        if high != 0 {
            return at + high.trailing_zeros() as usize;
        }
        at += 16;
    }
    at
}
