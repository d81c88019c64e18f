//! The tokenizer: words of spaced scripts, single characters of scripts written without
//! spaces, after case, digit, punctuation and Unicode compatibility normalisation.

mod fast;

use fast::{BLOCK, CharClasses, MIN_BLOCK, ascii_block, ascii_prefix, take_classed};

/// Scripts written without spaces between words.
pub(super) fn is_unspaced_script(c: char) -> bool {
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
        | 0xAC00..=0xD7A3    // Hangul syllables
        | 0xFF66..=0xFF9F    // Half-width Katakana
    )
}

pub(super) fn is_word_char(c: char) -> bool {
    c.is_alphanumeric()
}

/// Combining marks stay inside a word (for scripts such as Devanagari).
pub(super) fn is_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x0900..=0x0DFF | 0x1AB0..=0x1AFF | 0x20D0..=0x20FF)
        && !c.is_alphanumeric()
}

pub(super) const ALNUM: u8 = 1;
pub(super) const UPPER: u8 = 2;

/// ASCII letters and digits ([`ALNUM`]) and capitals ([`UPPER`]), one table lookup a byte.
pub(super) static ASCII_CLASS: [u8; 256] = {
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

pub(super) use crate::text::{HIGH_BITS, in_range};

/// For eight bytes in a word (first byte lowest): the high bit of each byte that is an ASCII
/// letter or digit, and of each that is an ASCII capital. Each byte is compared with the
/// range bounds by adding `0x80 - bound` to its low seven bits, which never carries into
/// the next byte; bytes of 0x80 and up are neither.
#[inline(always)]
pub(super) fn ascii_alnum_upper(x: u64) -> (u64, u64) {
    let y = x & !HIGH_BITS;
    let ascii = !x & HIGH_BITS;
    let digit = in_range(y, 0x30, 0x3a);
    let upper = in_range(y, 0x41, 0x5b);
    let lower = in_range(y, 0x61, 0x7b);
    ((digit | upper | lower) & ascii, upper & ascii)
}

/// Calls `emit` with every token of `text`, in order: the text in Unicode compatibility
/// form (NFKC: full-width letters and digits, ligatures and the like fold to their plain
/// forms), lower-cased, with decimal digits of every script as ASCII digits.
///
/// A long text is taken in pieces of about [`NFKC_PIECE_BYTES`] that end at a line break,
/// and only a piece that needs it is normalised: a line break composes with nothing and
/// ends every token, so the pieces give the tokens the whole text gives (a test checks the
/// line break against every character), and one full-width letter in a 50 MB file does not
/// send all of it through the normaliser.
pub(super) fn for_each_token(text: &str, emit: impl FnMut(&[u8])) {
    if text.is_ascii() {
        return tokenize(text, emit);
    }
    tokens_in_pieces(text, NFKC_PIECE_BYTES, emit)
}

/// [`for_each_token`] on pieces of at least `piece_bytes`, each ending at a line break.
pub(super) fn tokens_in_pieces(text: &str, piece_bytes: usize, mut emit: impl FnMut(&[u8])) {
    let mut rest = text;
    while !rest.is_empty() {
        let end = if rest.len() <= piece_bytes {
            rest.len()
        } else {
            memchr::memchr(b'\n', &rest.as_bytes()[piece_bytes..])
                .map_or(rest.len(), |at| piece_bytes + at + 1)
        };
        let (piece, after) = rest.split_at(end);
        tokens_of_piece(piece, &mut emit);
        rest = after;
    }
}

/// Bytes of a text normalised at a time at least ([`for_each_token`]).
pub(super) const NFKC_PIECE_BYTES: usize = 64 * 1024;

/// [`for_each_token`] on a piece of a text.
fn tokens_of_piece(text: &str, emit: &mut impl FnMut(&[u8])) {
    use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfkc_quick};
    // ASCII is its own NFKC form; most other text is too, which the quick check tells
    // without allocating. It looks only at the characters that could change a word
    // ([`may_change_a_word`]): letters, digits and marks outside the common ranges that are
    // their own NFKC form. Separators and punctuation (a no-break space, an ellipsis) are
    // dropped between words whatever their form, so a text that has them is not normalised
    // for their sake, and the table lookup is skipped for nearly every character.
    if text.is_ascii()
        || is_nfkc_quick(non_ascii_chars(text).filter(|&c| may_change_a_word(c)))
            == IsNormalized::Yes
    {
        return tokenize(text, emit);
    }
    // The piece is normalised, a line at a time where it needs it: a line whose characters
    // are all surely their own NFKC form ([`surely_nfkc_stable`]) is its own NFKC form,
    // and a line break composes with nothing, so the NFKC form of the piece is that of its
    // lines, laid end to end, and a token never spans a line break. A piece of a long text
    // with one superscript digit sends one line through the normaliser, not 64 KB.
    let mut plain_from = 0;
    let mut rest = 0;
    while let Some(at) = first_unstable(&text[rest..]).map(|at| rest + at) {
        let start = memchr::memrchr(b'\n', &text.as_bytes()[..at]).map_or(0, |nl| nl + 1);
        let mut end = line_end(text, at);
        // The lines right after it that need it too join it, for one call of each.
        while let Some(next) = first_unstable(&text[end..]).map(|next| end + next) {
            if memchr::memchr(b'\n', &text.as_bytes()[end..next]).is_some() {
                break;
            }
            end = line_end(text, next);
        }
        if plain_from < start {
            tokenize(&text[plain_from..start], &mut *emit);
        }
        let normalized: String = text[start..end].nfkc().collect();
        tokenize(&normalized, &mut *emit);
        (plain_from, rest) = (end, end);
    }
    if plain_from < text.len() {
        tokenize(&text[plain_from..], emit);
    }
}

/// Where the first character of `text` that is not surely its own NFKC form starts.
fn first_unstable(text: &str) -> Option<usize> {
    non_ascii_char_indices(text)
        .find(|&(_, c)| !surely_nfkc_stable(c))
        .map(|(at, _)| at)
}

/// Where the line that holds byte `at` of `text` ends: after its line break, or at the end.
fn line_end(text: &str, at: usize) -> usize {
    memchr::memchr(b'\n', &text.as_bytes()[at..]).map_or(text.len(), |nl| at + nl + 1)
}

/// Characters that are their own NFKC form and have combining class 0, by ranges cheap to
/// test: ASCII, the Latin-1 letters, basic Cyrillic, dashes and quotation marks, CJK
/// punctuation, kana, CJK ideographs and Hangul syllables. (A test checks every one.)
pub(super) fn surely_nfkc_stable(c: char) -> bool {
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

/// The characters of `text` outside ASCII, found 16 bytes at a time ([`ascii_prefix`]).
pub(super) fn non_ascii_chars(text: &str) -> impl Iterator<Item = char> + '_ {
    non_ascii_char_indices(text).map(|(_, c)| c)
}

/// [`non_ascii_chars`] with where each starts.
fn non_ascii_char_indices(text: &str) -> impl Iterator<Item = (usize, char)> + '_ {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        i += ascii_prefix(&bytes[i..]);
        let at = i;
        let c = text.get(i..)?.chars().next()?;
        i += c.len_utf8();
        Some((at, c))
    })
}

/// Whether NFKC could change a word that `c` is part of: a letter, digit or mark that is
/// not surely its own NFKC form.
pub(super) fn may_change_a_word(c: char) -> bool {
    !surely_nfkc_stable(c) && (c.is_alphanumeric() || is_mark(c) || c > '\u{2FFF}')
}

/// The zero of every run of ten decimal digits outside ASCII that NFKC leaves alone
/// (Arabic-Indic, Devanagari, Bengali, Thai, Myanmar, ...): a digit maps to its value.
pub(super) const DIGIT_ZEROS: [u32; 22] = [
    0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6, 0x0D66,
    0x0DE6, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0,
];

/// `c` as an ASCII digit, when it is a decimal digit of another script.
pub(super) fn ascii_digit(c: char) -> Option<char> {
    let code = c as u32;
    DIGIT_ZEROS
        .iter()
        .find(|&&zero| (zero..zero + 10).contains(&code))
        .and_then(|&zero| char::from_digit(code - zero, 10))
}

/// The end of the run of ASCII letters and digits that starts at `i`, and whether it holds
/// an upper-case letter: eight bytes at a time while the run lasts, then byte by byte.
#[inline(always)]
fn ascii_run(bytes: &[u8], mut i: usize) -> (usize, bool) {
    let mut class = 0u8;
    let mut ended = false;
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
    (i, class & UPPER != 0)
}

/// [`for_each_token`] on text already in NFKC form.
pub(super) fn tokenize(text: &str, emit: impl FnMut(&[u8])) {
    tokenize_with::<true>(text, emit)
}

/// [`tokenize`]: when `FAST`, taking runs of ASCII [`BLOCK`] bytes at a time
/// ([`ascii_block`]) and the class of other characters from a cache ([`CharClasses`]);
/// else a byte or a character at a time, every step written out. The two give the same
/// tokens (a test compares them).
pub(super) fn tokenize_with<const FAST: bool>(text: &str, mut emit: impl FnMut(&[u8])) {
    let bytes = text.as_bytes();
    let mut word: Vec<u8> = Vec::with_capacity(64);
    let mut prev_unspaced: Option<char> = None;
    let mut unspaced_run = 0usize;
    let mut i = 0;
    // Where the next block may start: past the first byte beyond ASCII that the last try
    // met, so that no byte is looked at twice for a block that cannot be.
    let mut next_block = 0;
    let mut classes: Option<Box<CharClasses>> = None;
    while i < bytes.len() {
        if FAST && i >= next_block {
            let ascii = ascii_prefix(&bytes[i..bytes.len().min(i + BLOCK)]);
            if ascii >= MIN_BLOCK {
                // An ASCII byte ends a run of unspaced characters, whatever it is.
                flush_unspaced(&mut prev_unspaced, &mut unspaced_run, &mut emit);
                i = ascii_block(bytes, i, i + ascii, &mut word, &mut emit);
                continue;
            }
            next_block = i + ascii + 1;
        }
        let b = bytes[i];
        if b < 0x80 {
            if b.is_ascii_alphanumeric() {
                // ASCII fast path: a whole run of ASCII letters and digits at once, hashed
                // in place when it needs no lower-casing and does not continue a word.
                flush_unspaced(&mut prev_unspaced, &mut unspaced_run, &mut emit);
                i = ascii_word(bytes, i, &mut word, &mut emit);
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
        if FAST {
            // The same steps as below, with each character's class and lower-case form
            // looked up once a text, not once an occurrence.
            let class = classes.get_or_insert_with(Default::default).of(c);
            let unspaced = (&mut prev_unspaced, &mut unspaced_run);
            if take_classed(class, &mut word, unspaced, &mut emit) {
                continue;
            }
        }
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

/// Takes the run of ASCII letters and digits at `start` (see [`tokenize_with`]): emitted at
/// once when it neither continues a word nor may go on past its end, else added to `word`.
/// Returns where the run ends.
fn ascii_word(
    bytes: &[u8],
    start: usize,
    word: &mut Vec<u8>,
    emit: &mut impl FnMut(&[u8]),
) -> usize {
    let (end, upper) = ascii_run(bytes, start);
    let run = &bytes[start..end];
    let continues = end < bytes.len() && (bytes[end] >= 0x80 || bytes[end] == b'\'');
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
    end
}

pub(super) fn flush_word(word: &mut Vec<u8>, emit: &mut impl FnMut(&[u8])) {
    while word.last() == Some(&b'\'') {
        word.pop();
    }
    if !word.is_empty() {
        emit(word);
        word.clear();
    }
}

/// A run of a single unspaced character is a unigram; longer runs were emitted as bigrams.
pub(super) fn flush_unspaced(
    prev: &mut Option<char>,
    run: &mut usize,
    emit: &mut impl FnMut(&[u8]),
) {
    if let (Some(c), 1) = (*prev, *run) {
        let mut buf = [0u8; 4];
        emit(c.encode_utf8(&mut buf).as_bytes());
    }
    *prev = None;
    *run = 0;
}

/// [`crate::text::is_ascii_space`] as a table, for the digest's branch-free loop.
pub(super) const ASCII_SPACE: [bool; 128] = {
    let mut table = [false; 128];
    let mut i = 0;
    while i < 128 {
        table[i] = crate::text::is_ascii_space(i as u8);
        i += 1;
    }
    table
};

/// The tokens of a text, as the fingerprint sees them (for inspection and tests).
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, |t| out.push(String::from_utf8_lossy(t).into_owned()));
    out
}
