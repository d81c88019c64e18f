//! The exact digest of a text, after whitespace normalisation.

use xxhash_rust::xxh3::xxh3_128;

use super::Digest;
use super::tokens::ASCII_SPACE;

/// Digest of the whitespace-normalised text, and its length in characters.
pub(super) fn normalized_digest(text: &str) -> (Digest, usize) {
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
