//! The exact digest of a text, after whitespace normalisation.

use xxhash_rust::xxh3::xxh3_128;

use super::Digest;
use super::tokens::{ASCII_SPACE, HIGH_BITS, in_range};

/// For eight ASCII bytes in a word (first byte lowest): the high bit of each byte that is a
/// space (0x20), and of each that is another ASCII whitespace (tab to carriage return).
/// Adding to the low seven bits of a byte never carries into the next, as in
/// [`super::tokens::ascii_alnum_upper`].
#[inline(always)]
fn ascii_spaces(x: u64) -> (u64, u64) {
    (in_range(x, 0x20, 0x21), in_range(x, 0x09, 0x0e))
}

/// The eight bytes at `i` as a word (first byte lowest) and the high bits of its spaces,
/// when they are ASCII whose only whitespace is single spaces and the first is not a space
/// after a space (`after_space`: the byte before was one): a run that whitespace
/// normalisation leaves as it is.
#[inline(always)]
pub(super) fn plain_chunk(bytes: &[u8], i: usize, after_space: bool) -> Option<(u64, u64)> {
    plain_utf8_chunk(bytes, i, after_space).filter(|&(x, _)| x & HIGH_BITS == 0)
}

/// [`plain_chunk`] for the digest, which copies bytes as they are: the eight bytes at `i`
/// may also hold bytes beyond ASCII, as long as none of them is the lead byte of a
/// whitespace character beyond ASCII (0xC2, 0xE1, 0xE2 and 0xE3 lead all of them:
/// U+0085, U+00A0, U+1680, U+2000 to U+205F, U+3000). A chunk may start inside a
/// character: the character's lead byte, before `i`, was then read as no whitespace.
#[inline(always)]
fn plain_utf8_chunk(bytes: &[u8], i: usize, after_space: bool) -> Option<(u64, u64)> {
    let chunk = bytes.get(i..i + 8)?;
    let x = u64::from_le_bytes(chunk.try_into().ok()?);
    let high = x & HIGH_BITS;
    let y = x & !HIGH_BITS;
    if high != 0 && (in_range(y, 0x42, 0x43) | in_range(y, 0x61, 0x64)) & high != 0 {
        return None;
    }
    let ascii = !high & HIGH_BITS;
    let (spaces, controls) = ascii_spaces(y);
    let (spaces, controls) = (spaces & ascii, controls & ascii);
    let after = (spaces << 8) | (u64::from(after_space) << 7);
    (controls == 0 && spaces & after == 0).then_some((x, spaces))
}

/// For 32 bytes, one bit each (first byte lowest): the spaces (0x20), and the other bytes
/// that whitespace normalisation may change (as in [`plain_utf8_chunk`]: ASCII whitespace
/// other than a space, and the lead bytes of whitespace beyond ASCII). SSE2, part of every
/// x86-64, compares 16 bytes at once; elsewhere a byte at a time.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn space_masks(chunk: &[u8; 32]) -> (u32, u32) {
    // SAFETY: SSE2 is part of x86-64, so every x86-64 CPU runs it.
    unsafe { super::sse2::space_masks(chunk) }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn space_masks(chunk: &[u8; 32]) -> (u32, u32) {
    let (mut spaces, mut others) = (0u32, 0u32);
    for (k, &b) in chunk.iter().enumerate() {
        spaces |= u32::from(b == b' ') << k;
        let other = b.wrapping_sub(0x09) < 5 || b == 0xC2 || b.wrapping_sub(0xE1) < 3;
        others |= u32::from(other) << k;
    }
    (spaces, others)
}

/// Digest of the whitespace-normalised text, and its size: its length in characters, a
/// character of a script written without spaces counted by the words it makes
/// ([`crate::text::text_size`]).
pub(super) fn normalized_digest(text: &str) -> (Digest, usize) {
    let bytes = text.as_bytes();
    // Every byte is written to the output and the output position only moves on when the
    // byte is not a second whitespace in a row, which turns each run of whitespace into
    // one space (a leading one is never kept, a trailing one is cut at the end). Beyond
    // ASCII, `space_len_at` decodes only after the lead bytes of whitespace characters.
    // The result is the words of `str::split_whitespace` joined by one space.
    let mut out = vec![0u8; bytes.len()];
    let mut len = 0usize;
    // Whether the last byte written was a space (true at the start: no leading space).
    let mut after_space = true;
    let mut i = 0;
    while i < bytes.len() {
        // 32 bytes are copied at once, and the output moves on by as many of them as come
        // before the first that normalisation may change (all of them in most of prose);
        // that byte, and the last bytes of the text, take the byte loop below. The output
        // is never ahead of the input, so the bytes copied always fit.
        if let Some(chunk) = bytes.get(i..i + 32) {
            let chunk: &[u8; 32] = chunk.try_into().unwrap_or(&[0; 32]);
            let (spaces, others) = space_masks(chunk);
            let changed = others | (spaces & ((spaces << 1) | u32::from(after_space)));
            out[len..len + 32].copy_from_slice(chunk);
            if changed == 0 {
                len += 32;
                i += 32;
                after_space = spaces >> 31 != 0;
                continue;
            }
            let plain = changed.trailing_zeros();
            if plain > 0 {
                len += plain as usize;
                i += plain as usize;
                after_space = (spaces >> (plain - 1)) & 1 != 0;
            }
        }
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
    let continuation = continuation_bytes(normalized);
    let chars = normalized.len() - continuation;
    (
        Digest(xxh3_128(normalized)),
        size_of(normalized, chars, continuation),
    )
}

/// The size of the normalised text `normalized` of `chars` characters, for the decision's
/// size rule ([`crate::text::text_size`]): its characters, those of scripts without spaces
/// counted by the words they make. An ASCII text (no continuation byte) is its characters.
fn size_of(normalized: &[u8], chars: usize, continuation: usize) -> usize {
    if continuation == 0 {
        return chars;
    }
    let Ok(text) = std::str::from_utf8(normalized) else {
        return chars;
    };
    let (mut wide, mut southeast) = (0, 0);
    for c in text.chars().filter(|&c| c >= '\u{0e00}') {
        if crate::text::is_wide(c) {
            wide += 1;
        } else if crate::text::is_southeast_unspaced(c) {
            southeast += 1;
        }
    }
    crate::text::text_size(chars, wide, southeast)
}

/// How many bytes of `bytes` continue a UTF-8 character (0x80 to 0xBF: the high bit set and
/// the next one clear), eight at a time: in a word, `x << 1` puts each byte's bit 6 where
/// its bit 7 is.
fn continuation_bytes(bytes: &[u8]) -> usize {
    let chunks = bytes.chunks_exact(8);
    let tail = chunks.remainder();
    let words: usize = chunks
        .map(|chunk| {
            let x = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
            (x & !(x << 1) & HIGH_BITS).count_ones() as usize
        })
        .sum();
    words + tail.iter().filter(|&&b| b & 0xC0 == 0x80).count()
}
