//! Line keys: the normal form of a line (lower case, each run of digits one `0`,
//! whitespace collapsed) and its xxh3, the unit that host templates learn.

use xxhash_rust::xxh3::xxh3_64;

use crate::fingerprint::digest::plain_chunk;
use crate::fingerprint::tokens::in_range;

/// The key of a normalised line, `None` for a line with nothing but whitespace.
pub fn block_key(line: &str) -> Option<u32> {
    block_key_in(line, &mut Vec::new())
}

/// [`block_key`], normalising into `normal` (a buffer reused from line to line): the
/// normal form of the definition (`defined_block_key` in the tests: words split at
/// whitespace, each run of digits one `0`, lower case), eight bytes at a time while they
/// are ASCII and hold no digit, no whitespace but single spaces, and no space after a
/// space; a character at a time elsewhere.
pub fn block_key_in(line: &str, normal: &mut Vec<u8>) -> Option<u32> {
    let len = normal_form(line, normal);
    normal.truncate(len);
    (len > 0).then(|| xxh3_64(normal) as u32)
}

/// Line keys ([`block_key`]) of line after line, normalising into one buffer that only
/// grows: a line's normal form is written over the last one's, with nothing cleared.
#[derive(Default)]
pub(crate) struct LineKeys {
    normal: Vec<u8>,
}

impl LineKeys {
    pub(crate) fn key(&mut self, line: &str) -> Option<u32> {
        let len = normal_form(line, &mut self.normal);
        (len > 0).then(|| xxh3_64(&self.normal[..len]) as u32)
    }
}

/// Writes the normal form of `line` at the start of `normal` (grown when it is too short
/// for it, never cut) and returns its length.
fn normal_form(line: &str, normal: &mut Vec<u8>) -> usize {
    let bytes = line.as_bytes();
    // Written in place: lower case never takes more than twice the bytes (U+0130, two
    // bytes, is three), and every other step only shortens the line.
    let room = 2 * bytes.len() + 8;
    if normal.len() < room {
        normal.resize(room, 0);
    }
    let out = normal.as_mut_slice();
    let mut len = 0usize;
    // Whether the last byte written is a space (true at the start: no leading space), and
    // whether the last character read was a digit.
    let mut after_space = true;
    let mut digits = false;
    let mut i = 0;
    while i < bytes.len() {
        if let Some((x, spaces)) = plain_chunk(bytes, i, after_space) {
            if in_range(x, 0x30, 0x3a) == 0 {
                // No digit either: lower case is all that is left, a capital's 0x20 bit.
                let upper = in_range(x, 0x41, 0x5b);
                out[len..len + 8].copy_from_slice(&(x | (upper >> 2)).to_le_bytes());
                len += 8;
                after_space = spaces >> 63 != 0;
                digits = false;
                i += 8;
                continue;
            }
        }
        let (space, digit) = if bytes[i] < 0x80 {
            let b = bytes[i];
            i += 1;
            out[len] = b.to_ascii_lowercase();
            (
                matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r'),
                b.is_ascii_digit(),
            )
        } else {
            let c = line[i..].chars().next().unwrap_or(' ');
            i += c.len_utf8();
            let (space, digit) = (c.is_whitespace(), is_numeric(c));
            if !space && !digit {
                if has_no_case(c) {
                    len += c.encode_utf8(&mut out[len..]).len();
                } else {
                    for lower in c.to_lowercase() {
                        len += lower.encode_utf8(&mut out[len..]).len();
                    }
                }
                digits = false;
                after_space = false;
                continue;
            }
            (space, digit)
        };
        if space {
            out[len] = b' ';
            len += usize::from(!after_space);
            after_space = true;
            digits = false;
        } else if digit {
            out[len] = b'0';
            len += usize::from(!digits);
            digits = true;
            after_space = false;
        } else {
            // An ASCII byte other than a digit or a space, lower-cased above.
            len += 1;
            digits = false;
            after_space = false;
        }
    }
    if after_space && len > 0 {
        len -= 1;
    }
    len
}

/// The key of a line by its definition: its words (split at whitespace), each character of
/// each word lower-cased and each run of digits one `0`, joined by a space; what the tests
/// hold [`block_key_in`] to.
#[cfg(test)]
fn defined_block_key(line: &str, normal: &mut Vec<u8>) -> Option<u32> {
    normal.clear();
    let mut buf = [0u8; 4];
    for word in line.split_whitespace() {
        if !normal.is_empty() {
            normal.push(b' ');
        }
        let mut digits = false;
        for c in word.chars() {
            if c.is_numeric() {
                if !digits {
                    normal.push(b'0');
                }
                digits = true;
            } else {
                digits = false;
                for lower in c.to_lowercase() {
                    normal.extend_from_slice(lower.encode_utf8(&mut buf).as_bytes());
                }
            }
        }
    }
    (!normal.is_empty()).then(|| xxh3_64(normal) as u32)
}

/// `char::is_numeric`, without its table search for the characters most text outside ASCII
/// has: below U+0660 only the superscripts and the vulgar fractions of Latin-1 are numeric,
/// and General Punctuation, kana, the CJK ideographs and Hangul syllables have none.
fn is_numeric(c: char) -> bool {
    match c {
        '\0'..='\u{7f}' => c.is_ascii_digit(),
        '\u{80}'..='\u{65f}' => matches!(c, '\u{b2}' | '\u{b3}' | '\u{b9}' | '\u{bc}'..='\u{be}'),
        '\u{2000}'..='\u{206f}'
        | '\u{3040}'..='\u{30ff}'
        | '\u{4e00}'..='\u{9fff}'
        | '\u{ac00}'..='\u{d7a3}' => false,
        _ => c.is_numeric(),
    }
}

/// Characters that are their own lower case, by ranges cheap to test: General Punctuation,
/// CJK punctuation and kana, the CJK ideographs and Hangul syllables (a test checks each).
fn has_no_case(c: char) -> bool {
    matches!(c, '\u{2000}'..='\u{206f}' | '\u{3000}'..='\u{30ff}' | '\u{4e00}'..='\u{9fff}' | '\u{ac00}'..='\u{d7a3}')
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// [`block_key_in`] gives `line` the key and the normal form of [`defined_block_key`].
    fn is_defined_key(line: &str) -> Result<(), TestCaseError> {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        prop_assert_eq!(block_key_in(line, &mut a), defined_block_key(line, &mut b));
        prop_assert_eq!(a, b);
        Ok(())
    }

    #[test]
    fn the_quick_character_tests_are_the_standard_ones() {
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            assert_eq!(is_numeric(c), c.is_numeric(), "{c:?}");
            if has_no_case(c) {
                assert!(c.to_lowercase().eq([c]), "{c:?}");
            }
        }
    }

    proptest! {
        #[test]
        fn the_key_is_the_defined_key(line in "([a-zA-Z0-9 \t\n\x0b\x0c\r.,'-]|\u{a0}|\u{2003}|\u{3000}|\u{85}|\u{e9}|\u{c4}|\u{130}|\u{3a3}|\u{b2}|\u{663}|\u{ff13}|\u{2014}|\u{2019}|東|\u{3007}|\u{ac00}){0,60}") {
            is_defined_key(&line)?;
        }

        #[test]
        fn the_key_of_mostly_ascii_is_the_defined_key(
            line in "([a-zA-Z .,'-]{0,14}([0-9]|\t|  |\u{e9}|\u{a0}|\u{130}|東|\u{2019})?){0,6}"
        ) {
            is_defined_key(&line)?;
        }

        #[test]
        fn the_key_of_ascii_is_the_defined_key(line in "[a-zA-Z0-9 \t\n\x0b\x0c\r.,'-]{0,60}") {
            is_defined_key(&line)?;
        }
    }

    #[test]
    fn keys_read_case_and_digits_as_the_same_line() {
        assert_eq!(
            block_key("Updated 12:05, May 3"),
            block_key("updated 9:41,  may 28")
        );
        assert_ne!(block_key("Sports"), block_key("Weather"));
        assert_eq!(block_key("   "), None);
    }
}
