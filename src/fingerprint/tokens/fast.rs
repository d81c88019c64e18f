//! The tokenizer's fast paths ([`super::tokenize_with`] when `FAST`): runs of ASCII read 64
//! bytes at a time into bit masks, and the classes of other characters looked up once a
//! text.

use super::{
    HIGH_BITS, ascii_alnum_upper, ascii_digit, flush_unspaced, flush_word, in_range, is_mark,
    is_unspaced_script, is_word_char,
};

/// What the tokenizer does with a character beyond ASCII.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum CharKind {
    /// Not looked up yet (the slot is empty).
    #[default]
    Unknown,
    /// Of a script written without spaces: bigrams.
    Unspaced,
    /// A letter or digit: part of a word.
    Word,
    /// A combining mark: part of a word in progress, else a separator.
    Mark,
    /// The typographic apostrophe: an apostrophe inside a word in progress.
    Apostrophe,
    /// A separator.
    Other,
}

/// One character's class, and its form in a word: digits of other scripts as ASCII
/// digits, then lower case (at most three characters, as `char::to_lowercase` promises, so
/// at most twelve bytes).
#[derive(Clone, Copy, Default)]
pub(super) struct CharClass {
    c: u32,
    kind: CharKind,
    len: u8,
    lower: [u8; 12],
}

impl CharClass {
    fn of(c: char) -> CharClass {
        let kind = if is_unspaced_script(c) {
            CharKind::Unspaced
        } else if is_word_char(c) {
            CharKind::Word
        } else if is_mark(c) {
            CharKind::Mark
        } else if c == '\u{2019}' {
            CharKind::Apostrophe
        } else {
            CharKind::Other
        };
        let mut class = CharClass {
            c: c as u32,
            kind,
            ..Default::default()
        };
        if matches!(kind, CharKind::Word | CharKind::Mark) {
            let mut len = 0;
            for lower in ascii_digit(c).unwrap_or(c).to_lowercase() {
                len += lower.encode_utf8(&mut class.lower[len..]).len();
            }
            class.len = len as u8;
        }
        class
    }

    fn lower(&self) -> &[u8] {
        &self.lower[..usize::from(self.len)]
    }
}

/// The classes of the characters beyond ASCII met in a text, in a direct-mapped table by
/// the low eight bits of the code point: the letters of one alphabet (Latin-1, Greek,
/// Cyrillic, Arabic, ...) each get a slot of their own, and a character whose slot holds
/// another is classed again.
pub(super) struct CharClasses([CharClass; 256]);

impl Default for CharClasses {
    fn default() -> Self {
        CharClasses([CharClass::default(); 256])
    }
}

impl CharClasses {
    #[inline(always)]
    pub(super) fn of(&mut self, c: char) -> &CharClass {
        // An empty slot holds U+0000, which is ASCII and never asked for here.
        let slot = &mut self.0[c as usize & 0xFF];
        if slot.c != c as u32 {
            *slot = CharClass::of(c);
        }
        slot
    }
}

/// Bytes taken at most at once by [`ascii_block`]: one bit each in a 64-bit mask.
pub(super) const BLOCK: usize = 64;

/// Fewer ASCII bytes than this are left to the byte loop.
pub(super) const MIN_BLOCK: usize = 8;

/// How many bytes of `bytes` are ASCII before the first that is not: 16 at a time with
/// SSE2 on x86-64, then eight at a time.
#[inline(always)]
pub(super) fn ascii_prefix(bytes: &[u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of x86-64, so every x86-64 CPU runs it.
    let mut at = unsafe { crate::fingerprint::sse2::ascii_prefix(bytes) };
    #[cfg(not(target_arch = "x86_64"))]
    let mut at = 0;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let high = u64::from_le_bytes(chunk.try_into().unwrap_or([0x80; 8])) & HIGH_BITS;
        if high != 0 {
            return at + (high.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    at + bytes[at..].iter().take_while(|b| b.is_ascii()).count()
}

/// Fewer than eight bytes as a word (first byte lowest), zeros after the end.
#[inline(always)]
fn load(chunk: &[u8]) -> u64 {
    chunk
        .iter()
        .rev()
        .fold(0u64, |word, &b| (word << 8) | u64::from(b))
}

/// The high bit of each byte of a word, gathered into the low eight bits (byte `k` to bit
/// `k`): each high bit is moved to the bottom of its byte, and one multiplication sends
/// the bottom bit of byte `k` to bit `56 + k`, with no two partial products meeting.
#[inline(always)]
fn gather_high_bits(high: u64) -> u64 {
    ((high >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56
}

/// For the block of `len` bytes at `start` (at most [`BLOCK`]), one bit a byte: its ASCII
/// letters and digits, and its apostrophes; and its bytes with every capital made small,
/// into `lower`. Read eight bytes at a time, as whole words where the text has them (even
/// past the block: the caller masks those bits off), with zeros past the end of the text.
#[inline(always)]
fn block_masks(bytes: &[u8], start: usize, len: usize, lower: &mut [u8; BLOCK]) -> (u64, u64) {
    let (mut alnum, mut apostrophes) = (0u64, 0u64);
    for k in 0..len.div_ceil(8) {
        let at = start + k * 8;
        let x = match bytes.get(at..at + 8) {
            Some(chunk) => u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8])),
            None => load(&bytes[at..]),
        };
        let (alnum_high, upper_high) = ascii_alnum_upper(x);
        // 0x80 >> 2 is 0x20, the bit that makes an ASCII capital small.
        let lowered = x | (upper_high >> 2);
        lower[k * 8..k * 8 + 8].copy_from_slice(&lowered.to_le_bytes());
        alnum |= gather_high_bits(alnum_high) << (k * 8);
        let quote = in_range(x & !HIGH_BITS, 0x27, 0x28) & !x;
        apostrophes |= gather_high_bits(quote) << (k * 8);
    }
    (alnum, apostrophes)
}

/// [`block_masks`] where the text has all [`BLOCK`] bytes from the block's start: 16 bytes
/// a compare with SSE2 on x86-64.
#[inline(always)]
fn whole_block_masks(whole: &[u8; BLOCK], lower: &mut [u8; BLOCK]) -> (u64, u64) {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: SSE2 is part of x86-64, so every x86-64 CPU runs it.
        unsafe { crate::fingerprint::sse2::word_masks(whole, lower) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    block_masks(whole, 0, BLOCK, lower)
}

/// The tokens of `bytes[start..end]`, all ASCII and at most [`BLOCK`] long, as the byte loop
/// of [`super::tokenize_with`] finds them: `word` holds the word in progress on entry (continued
/// by a letter or digit at `start`) and on return (a word that reaches `end` with more text
/// after it, when it started before the block or fills it). Returns where the caller goes
/// on: `end`, or the start of a word that reaches `end` and started inside the block.
///
/// The block is read eight bytes at a time into bit masks, one bit a byte: letters and
/// digits, capitals, apostrophes; capitals are lower-cased in the same words. A word is a
/// run of set bits in the mask of letters and digits with the apostrophes that join two of
/// them ("don't"; an apostrophe after a word in progress and before a letter or digit).
#[inline(always)]
pub(super) fn ascii_block(
    bytes: &[u8],
    start: usize,
    end: usize,
    word: &mut Vec<u8>,
    emit: &mut impl FnMut(&[u8]),
) -> usize {
    let len = end - start;
    let mut lower = [0u8; BLOCK];
    let (alnum, apostrophes) = match bytes.get(start..start + BLOCK) {
        Some(whole) => whole_block_masks(whole.try_into().unwrap_or(&[0; BLOCK]), &mut lower),
        None => block_masks(bytes, start, len, &mut lower),
    };
    let in_block = if len == BLOCK {
        u64::MAX
    } else {
        (1u64 << len) - 1
    };
    let (alnum, apostrophes) = (alnum & in_block, apostrophes & in_block);
    let after_word = (alnum << 1) | u64::from(!word.is_empty());
    let next_alnum = bytes.get(end).is_some_and(|b| b.is_ascii_alphanumeric());
    let before_alnum = (alnum >> 1) | (u64::from(next_alnum) << (len - 1));
    let mut words = alnum | (apostrophes & after_word & before_alnum);
    if words & 1 == 0 {
        flush_word(word, emit);
    }
    while words != 0 {
        let from = words.trailing_zeros() as usize;
        let to = from + (!(words >> from)).trailing_zeros() as usize;
        let token = &lower[from..to];
        if to == len && end < bytes.len() {
            // It may go on after the block: the next byte decides. A word that starts in
            // the block is read again from its start, in the next block or by the byte loop,
            // instead of copied.
            if from > 0 && word.is_empty() {
                return start + from;
            }
            word.extend_from_slice(token);
            return end;
        }
        if word.is_empty() {
            emit(token);
        } else {
            word.extend_from_slice(token);
            flush_word(word, emit);
        }
        words = if to >= 64 {
            0
        } else {
            words & (u64::MAX << to)
        };
    }
    end
}

/// [`super::tokenize_with`]'s steps for a character beyond ASCII, from its class: a
/// letter, digit or mark (after a word) joins the word in progress, a typographic
/// apostrophe inside a word is an apostrophe, anything else ends the word and a run of
/// unspaced characters. False, with nothing done, for a character of a script written
/// without spaces, which the caller takes.
pub(super) fn take_classed(
    class: &CharClass,
    word: &mut Vec<u8>,
    (prev_unspaced, unspaced_run): (&mut Option<char>, &mut usize),
    emit: &mut impl FnMut(&[u8]),
) -> bool {
    match class.kind {
        CharKind::Unspaced => return false,
        CharKind::Word | CharKind::Mark if class.kind == CharKind::Word || !word.is_empty() => {
            flush_unspaced(prev_unspaced, unspaced_run, emit);
            for &b in class.lower() {
                word.push(b);
            }
        }
        CharKind::Apostrophe if !word.is_empty() => word.push(b'\''),
        _ => {
            flush_word(word, emit);
            flush_unspaced(prev_unspaced, unspaced_run, emit);
        }
    }
    true
}
