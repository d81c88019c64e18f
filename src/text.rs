//! Whitespace as `char::is_whitespace` has it, found on UTF-8 bytes: the extractor's text
//! writer and the fingerprint's digest both scan text byte by byte and share this test.

/// An ASCII whitespace byte: tab, line feed, vertical tab, form feed, carriage return, space.
pub(crate) const fn is_ascii_space(b: u8) -> bool {
    matches!(b, b'\t'..=b'\r' | b' ')
}

/// The length in bytes of the whitespace character that starts at byte `i` of `text`, or 0.
/// Beyond ASCII, whitespace characters (U+0085, U+00A0, U+1680, U+2000-U+205F, U+3000)
/// start with one of four lead bytes, so other bytes (continuation bytes included) are
/// answered without decoding.
#[inline]
pub(crate) fn space_len_at(text: &str, i: usize) -> usize {
    match text.as_bytes()[i] {
        b if b < 0x80 => usize::from(is_ascii_space(b)),
        0xC2 | 0xE1 | 0xE2 | 0xE3 => text
            .get(i..)
            .and_then(|rest| rest.chars().next())
            .filter(|c| c.is_whitespace())
            .map_or(0, char::len_utf8),
        _ => 0,
    }
}

/// Characters of `text` that are not whitespace.
pub(crate) fn non_space_chars(text: &str) -> u32 {
    if text.is_ascii() {
        text.bytes().filter(|&b| !is_ascii_space(b)).count() as u32
    } else {
        text.chars().filter(|c| !c.is_whitespace()).count() as u32
    }
}
