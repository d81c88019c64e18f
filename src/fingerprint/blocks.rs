//! A page's blocks: what the index keeps of each line of a page's main text, so that two
//! pages of one site can be compared on what is their own, not on what the site repeats.
//!
//! The extractor writes each paragraph, heading, list item and table row on a line of its
//! own. A page's profile ([`Blocks`]) holds, for each line (at most [`MAX_LINES`]):
//!
//! - its **key**: the xxh3 (low 32 bits) of the line normalised (lower case, each run of
//!   digits read as one `0`, whitespace collapsed), the unit that host templates learn
//!   ([`crate::dedup::template`]) and that two pages share exactly when a site repeats it;
//! - its **words**: its tokens, as the fingerprint counts them, but a run of a script
//!   written without spaces counted as one word per 1.7 characters of Han, Kana or Hangul and per
//!   4.5 of Thai, Lao, Khmer or Myanmar, not a bigram each (`line_words`), capped at 255;
//! - its **signature**: a 128-bit simhash of the line (two 64-bit simhashes of differently
//!   mixed features) over its words, each weighing two, and its word 3-shingles, each
//!   weighing one, whatever its length. The words keep a line with a few words changed
//!   near its original (each changed word costs three shingles but one word); the
//!   shingles keep word order in it. One kind of signature for every length keeps a line
//!   that grows past a length near what it was;
//! - its **ends**: 16 bits of the hash of its first three words and 16 of its last three
//!   (of its first and last word, for a line of fewer than [`LONG_LINE_WORDS`] tokens). A
//!   line edited in its middle or at one end keeps the other end; two unrelated lines
//!   rarely share either.
//!
//! and the profile names its host (the xxh3 of the host name, low 32 bits) and keeps the
//! page's headline (its extracted title) as one more line beside them, whatever the sample
//! ([`Blocks::headline`]). A profile costs 25 bytes a line: 0.4-1.5 KB for an article page
//! with its rails (`examples/eval_templates.rs` reports the mean).

use xxhash_rust::xxh3::xxh3_64;

use super::features::{fmix64, three_shingles, token_hashes_into, word_features};

/// Lines a profile keeps at most. Of a page with more, the profile is a sample by length
/// ([`Blocks::sampled`]): its longest lines, in words ([`Line::rank`]), the lowest keys
/// among lines of one length; the lines kept stay in reading order. A page's paragraphs
/// are kept before the entries of a table of contents or of a menu of several hundred
/// links, whatever their keys: a brief under a large template stays in its page's profile.
/// Two samples of pages that share most lines hold most of the same lines (a line added to
/// a page displaces at most one), and two pages are compared on the lines both samples
/// would keep ([`Blocks::coverage`]). Profiles stored before index format 10 are samples
/// by key ([`Coverage::ByKey`]).
pub const MAX_LINES: usize = 256;

/// Set in a stored profile's line count when the profile is a sample ([`Blocks::sampled`]).
const SAMPLED: u16 = 0x8000;

/// Set in a stored profile's line count when its lines are signed by words and shingles
/// (index format 9 on); a profile stored before is [`Blocks::legacy`].
const WORDS_AND_SHINGLES: u16 = 0x4000;

/// Set in a stored profile's line count when the profile is a sample by length (index
/// format 10 on); a sample stored before is by key ([`Coverage::ByKey`]).
const BY_LENGTH: u16 = 0x2000;

/// Set in a stored profile's line count when the page's headline follows its lines (index
/// format 11 on, [`Blocks::headline`]).
const HEADLINE: u16 = 0x1000;

/// A line of this many words or more is a sentence of the page (a paragraph, a teaser, a
/// long list item); shorter ones are headlines, labels, names, dates and menu items.
pub const LONG_LINE_WORDS: u8 = 8;

/// Two lines whose signatures are this many bits apart or fewer (of 128), and that share
/// their first or their last words ([`Line::ends`]), are one line edited. A simhash bit
/// differs with probability angle / pi between the two weighted feature sets: a paragraph
/// of 20 words with four changed (words weighing two, shingles one) is about 32 bits from
/// its original (standard deviation 5). Two unrelated sentences share common words, so
/// their signatures are closer than chance: 60 bits apart by the median, 44 or fewer for
/// 1.7e-2 of pairs, and with a shared end and lengths within [`NEAR_LINE_GROWTH`] as well
/// for 6.2e-6 of pairs (`examples/eval_lines.rs` on 4.5 million pairs of WCXB dev
/// sentences; the ends are what make the rule selective).
pub const NEAR_LINE_BITS: u32 = 44;

/// A line edited is at most this many times as long as the line it was, in words: a
/// headline with a sentence appended is, a line that holds the other and as much again
/// (the paragraphs of a page joined into one line) is not. A signature of words puts a line
/// near one that is most of it, so the lengths are checked too.
pub const NEAR_LINE_GROWTH: u32 = 2;

/// Two headlines that share neither end are two pages' when their signatures are more
/// than this many bits apart ([`Blocks::headlines_apart`]). Of the edited copies of the
/// template evaluations (`examples/eval_templates.rs`, English, Chinese and Japanese), whose
/// headlines are edited as their texts are, none that shares no end with its original is
/// farther than 46 bits from it. On the WCXB dev titles (`examples/eval_lines.rs`), 1.9%
/// of the pairs of different pages' titles are not apart, and of the titles edited, none
/// with a word changed, 5.2% with a sentence appended and 14% with their last three words
/// replaced are.
pub const HEADLINE_APART_BITS: u32 = 48;

/// Bytes of one line in a stored profile.
pub const LINE_BYTES: usize = 25;

/// The lines a profile covers ([`Blocks::coverage`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coverage {
    /// Every line: the profile is not a sample.
    All,
    /// A sample by length: the lines of this rank ([`Line::rank`]) or lower.
    ByLength(u64),
    /// A sample by key, as stored before index format 10: its sentences of the lowest keys
    /// first, then in the room left its shorter lines of the lowest keys. For sentences and
    /// for short lines, the highest key covered (`None`: none).
    ByKey {
        /// The highest key of a sentence covered.
        long: Option<u32>,
        /// The highest key of a short line covered.
        short: Option<u32>,
    },
}

impl Coverage {
    /// Whether a page's `line` is covered.
    pub fn covers(&self, line: &Line) -> bool {
        match *self {
            Coverage::All => true,
            Coverage::ByLength(bound) => line.rank() <= bound,
            Coverage::ByKey { long, short } => {
                let bound = if line.is_long() { long } else { short };
                bound.is_some_and(|b| line.key <= b)
            }
        }
    }
}

/// Mixes a feature for the signature's second half.
mod keys;
pub(crate) use keys::LineKeys;
pub use keys::{block_key, block_key_in};

const SECOND_HALF: u64 = 0x9e37_79b9_7f4a_7c15;

/// One line of a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line {
    /// The normalised line's hash (see the module documentation).
    pub key: u32,
    /// Its tokens, capped at 255.
    pub words: u8,
    /// Its simhash.
    pub sig: u128,
    /// 16 bits of the hash of its first three words (low half) and of its last three.
    pub ends: u32,
}

impl Line {
    /// Whether the line is a sentence of the page ([`LONG_LINE_WORDS`]).
    pub fn is_long(&self) -> bool {
        self.words >= LONG_LINE_WORDS
    }

    /// Its place in a sample by length ([`MAX_LINES`]): longer lines first, then lower
    /// keys.
    pub fn rank(&self) -> u64 {
        u64::from(u8::MAX - self.words) << 32 | u64::from(self.key)
    }

    /// Whether `other` is this line edited ([`NEAR_LINE_BITS`]): the signatures near, an
    /// end shared, and neither line more than [`NEAR_LINE_GROWTH`] times the other's words.
    pub fn is_near(&self, other: &Line) -> bool {
        let ends = self.ends ^ other.ends;
        let (short, long) = (self.words.min(other.words), self.words.max(other.words));
        (ends & 0xffff == 0 || ends >> 16 == 0)
            && u32::from(long) <= NEAR_LINE_GROWTH * u32::from(short)
            && (self.sig ^ other.sig).count_ones() <= NEAR_LINE_BITS
    }
}

/// The lines of a page's main text, and its host. See the [module documentation](self).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Blocks {
    /// The host's key (xxh3 of the host name, low 32 bits).
    pub host: u32,
    /// The lines with words, in reading order.
    pub lines: Vec<Line>,
    /// Whether the page had more than [`MAX_LINES`] lines, so that `lines` is a sample of
    /// them by length (see [`MAX_LINES`]), or by key when `by_key` says so.
    pub sampled: bool,
    /// Whether the profile is a sample by key, as stored before index format 10
    /// ([`Coverage::ByKey`]).
    pub(crate) by_key: bool,
    /// Whether the profile was stored by a build before index format 9, whose line
    /// signatures were of a line's shingles or of its words, by its length: its lines are
    /// then near only lines of another such profile
    /// ([`Confirm::judge_blocks`](crate::index::Confirm::judge_blocks)); against a profile
    /// of this build, two lines match only as they are (by key).
    pub legacy: bool,
    /// The page's headline (the title its extraction found: `og:title`, the main `h1`, the
    /// `<title>`) as a line, kept apart from the lines and their sample; `None` for a page
    /// without one and for a profile stored before index format 11. Two pages of one host
    /// whose headlines are apart are two articles, whatever their main texts share
    /// ([`Blocks::headlines_apart`]).
    pub headline: Option<Line>,
}

/// Byte `i` of `SPREAD[v]` is bit `i` of `v`: eight bit counters in one word.
const SPREAD: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut v = 0;
    while v < 256 {
        let mut i = 0;
        while i < 8 {
            table[v] |= (((v >> i) & 1) as u64) << (8 * i);
            i += 1;
        }
        v += 1;
    }
    table
};

/// The 128-bit simhash of a line's words, each weighing two, and its shingles, each
/// weighing one: the low half of the feature hashes, the high half of them mixed again. The
/// words are counted once and their counts doubled. The bits are those of the
/// one-bit-at-a-time definition the tests hold it to (`line_sig_reference`, built for tests
/// only, over the words twice and the shingles).
fn line_sig(words: &[u64], shingles: &[u64]) -> u128 {
    let mut counts = [0u32; 128];
    count_bits(words, &mut counts);
    for count in &mut counts {
        *count *= 2;
    }
    count_bits(shingles, &mut counts);
    majority(&counts, 2 * words.len() + shingles.len())
}

/// Adds to `counts[i]` how many of `features` set bit `i` of the signature (`i` < 64: of
/// the feature; else of the feature mixed again). The counters are bytes, eight to a word
/// ([`SPREAD`]), added 16 words a feature and emptied into `u32`s every 255 features.
fn count_bits(features: &[u64], counts: &mut [u32; 128]) {
    // lanes[j] byte i counts bit 8j + i of the low half; lanes[8 + j] of the high half.
    for chunk in features.chunks(255) {
        let mut lanes = [0u64; 16];
        for &f in chunk {
            let g = fmix64(f ^ SECOND_HALF);
            for j in 0..8 {
                lanes[j] += SPREAD[((f >> (8 * j)) & 0xff) as usize];
                lanes[8 + j] += SPREAD[((g >> (8 * j)) & 0xff) as usize];
            }
        }
        for (j, lane) in lanes.iter().enumerate() {
            for i in 0..8 {
                counts[8 * j + i] += ((lane >> (8 * i)) & 0xff) as u32;
            }
        }
    }
}

/// The signature whose bit is set where more than half of the `n` features set it.
fn majority(counts: &[u32; 128], n: usize) -> u128 {
    let n = u32::try_from(n).unwrap_or(u32::MAX / 2);
    let mut sig = 0u128;
    for (bit, &count) in counts.iter().enumerate() {
        if 2 * count > n {
            sig |= 1 << bit;
        }
    }
    sig
}

/// [`line_sig`] one bit at a time: the definition the tests hold it to.
#[cfg(test)]
fn line_sig_reference(features: &[u64]) -> u128 {
    let mut counts = [0u32; 128];
    for &f in features {
        let g = fmix64(f ^ SECOND_HALF);
        for bit in 0..64 {
            counts[bit] += ((f >> bit) & 1) as u32;
            counts[64 + bit] += ((g >> bit) & 1) as u32;
        }
    }
    majority(&counts, features.len())
}

/// The words of `line`, of which the tokenizer made `tokens`: a run of a script written
/// without spaces makes a bigram a character, but its words are about one every
/// 1.7 characters in Chinese and Japanese and one every 4.5 in Thai, Lao, Khmer and
/// Myanmar ([`crate::text::unspaced_words`]), so that the line rules' thresholds (a
/// sentence is [`LONG_LINE_WORDS`], a copy adds at most
/// [`OWN_WORDS`](crate::index::OWN_WORDS)) mean in those scripts what they mean in
/// English: a site's Chinese footer of 40 characters is about 24 words, not 39.
fn line_words(line: &str, tokens: usize) -> usize {
    if line.is_ascii() {
        return tokens;
    }
    // Per run of unspaced characters: the tokens it made, and the words it holds.
    let (mut made, mut holds) = (0usize, 0usize);
    let (mut wide, mut southeast) = (0usize, 0usize);
    let mut end_run = |wide: &mut usize, southeast: &mut usize| {
        let run = *wide + *southeast;
        if run > 0 {
            made += (run - 1).max(1);
            holds += crate::text::unspaced_words(*wide, *southeast);
            (*wide, *southeast) = (0, 0);
        }
    };
    for c in line.chars() {
        if !super::tokens::is_unspaced_script(c) {
            end_run(&mut wide, &mut southeast);
        } else if crate::text::is_southeast_unspaced(c) {
            southeast += 1;
        } else {
            wide += 1;
        }
    }
    end_run(&mut wide, &mut southeast);
    (tokens + holds)
        .saturating_sub(made)
        .max(usize::from(tokens > 0))
}

mod cache;
pub(crate) use cache::cached_key;
use cache::{LINE_CACHE, LineCache, held};

/// The key of a host name (lower case).
pub fn host_key(host: &str) -> u32 {
    xxh3_64(host.as_bytes()) as u32
}

impl Blocks {
    /// The profile of a text of a page of `host` (at most [`MAX_LINES`] lines).
    pub fn of(host: &str, text: &str) -> Blocks {
        Blocks::profile(host, text, None)
    }

    /// [`Blocks::of`], and the keys of the first `max_keys` of the text's lines with words,
    /// in reading order (all of them, where the profile keeps at most [`MAX_LINES`]).
    pub(crate) fn with_keys(host: &str, text: &str, max_keys: usize) -> (Blocks, Vec<u32>) {
        let mut keys = Vec::new();
        let blocks = Blocks::profile(host, text, Some((&mut keys, max_keys)));
        (blocks, keys)
    }

    fn profile(host: &str, text: &str, keys: Option<(&mut Vec<u32>, usize)>) -> Blocks {
        Blocks::profile_with(&LINE_CACHE, host, text, keys)
    }

    fn profile_with(
        cache: &std::sync::Mutex<LineCache>,
        host: &str,
        text: &str,
        mut keys: Option<(&mut Vec<u32>, usize)>,
    ) -> Blocks {
        let mut lines = Vec::new();
        let mut line_keys = LineKeys::default();
        let mut hashes = Vec::new();
        let mut features = Vec::new();
        let mut shingles = Vec::new();
        for line in text.lines() {
            let cached = held(cache).get(line);
            let line = match cached {
                Some(line) => line,
                None => {
                    let Some(key) = line_keys.key(line) else {
                        continue;
                    };
                    // Tokenised once; the buffers' room is reused from line to line.
                    token_hashes_into(line, &mut hashes);
                    let words = hashes.len();
                    word_features(&hashes, &mut features);
                    three_shingles(&hashes, &mut shingles);
                    let by_three = if words >= usize::from(LONG_LINE_WORDS) {
                        &shingles
                    } else {
                        &features
                    };
                    let (first, last) = (
                        by_three.first().copied().unwrap_or(0),
                        by_three.last().copied().unwrap_or(0),
                    );
                    let ends = (first & 0xffff) as u32 | ((last & 0xffff) as u32) << 16;
                    let profiled = Line {
                        key,
                        words: u8::try_from(line_words(line, words)).unwrap_or(u8::MAX),
                        sig: line_sig(&features, &shingles),
                        ends,
                    };
                    held(cache).put(line, profiled);
                    profiled
                }
            };
            if let Some((keys, max_keys)) = keys.as_mut() {
                if keys.len() < *max_keys {
                    keys.push(line.key);
                }
            }
            lines.push(line);
        }
        let sampled = lines.len() > MAX_LINES;
        if sampled {
            // The MAX_LINES lines of the lowest ranks; of lines of the bound's rank (one
            // line repeated), as many as there is room for.
            let mut ranks: Vec<u64> = lines.iter().map(Line::rank).collect();
            let bound = *ranks.select_nth_unstable(MAX_LINES - 1).1;
            let mut room = MAX_LINES - ranks.iter().filter(|&&r| r < bound).count();
            lines.retain(|l| {
                let rank = l.rank();
                let keep = rank < bound || (rank == bound && room > 0);
                room -= usize::from(rank == bound && keep);
                keep
            });
        }
        Blocks {
            host: host_key(host),
            lines,
            sampled,
            by_key: false,
            legacy: false,
            headline: None,
        }
    }

    /// This profile with the page's headline `title` ([`Blocks::headline`]): its first line
    /// with words, profiled as the page's lines are.
    pub fn with_headline(mut self, title: Option<&str>) -> Blocks {
        self.headline = title.and_then(|title| {
            Blocks::profile_with(&LINE_CACHE, "", title, None)
                .lines
                .into_iter()
                .next()
        });
        self
    }

    /// Whether the two pages are of one host and their headlines are known and apart: they
    /// share neither end ([`Line::ends`]) and their signatures are more than
    /// [`HEADLINE_APART_BITS`] apart.
    /// Sites repeat their menus, banners and tables of contents on every page, and an
    /// extraction that took such a block for two pages' main text leaves them nothing of
    /// their own to tell them apart by; their headlines still do. A copy of a page (its
    /// print version, a tracking parameter, a comment page) keeps its headline, and an
    /// edited copy keeps it near: an end, or most of its words.
    pub fn headlines_apart(&self, other: &Blocks) -> bool {
        match (&self.headline, &other.headline) {
            (Some(a), Some(b)) => {
                let ends = a.ends ^ b.ends;
                self.host == other.host
                    && a.key != b.key
                    && ends & 0xffff != 0
                    && ends >> 16 != 0
                    && (a.sig ^ b.sig).count_ones() > HEADLINE_APART_BITS
            }
            _ => false,
        }
    }

    /// Which lines the profile covers: the lines of the page whose kind (sentence or short
    /// line) and key a sample keeps (all of them when the profile is not a sample,
    /// [`Blocks::sampled`]). Two pages are compared on the lines both profiles cover.
    pub fn coverage(&self) -> Coverage {
        if !self.sampled {
            return Coverage::All;
        }
        if !self.by_key {
            return Coverage::ByLength(self.lines.iter().map(Line::rank).max().unwrap_or(0));
        }
        let highest = |long: bool| {
            self.lines
                .iter()
                .filter(|l| l.is_long() == long)
                .map(|l| l.key)
                .max()
        };
        let short = highest(false);
        Coverage::ByKey {
            // Short lines were kept only when every sentence was.
            long: if short.is_some() {
                Some(u32::MAX)
            } else {
                highest(true)
            },
            short,
        }
    }

    /// Encoding: the host (4 bytes), a u16 count (its top bit set for a sample, the next
    /// one unless the profile is [`Blocks::legacy`], the third for a sample by length),
    /// then per line its key (4), words (1), signature (16) and ends (4); integers
    /// big-endian.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let lines = &self.lines[..self.lines.len().min(MAX_LINES)];
        out.extend_from_slice(&self.host.to_be_bytes());
        let count = lines.len() as u16
            | if self.sampled { SAMPLED } else { 0 }
            | if self.legacy { 0 } else { WORDS_AND_SHINGLES }
            | if self.sampled && !self.by_key {
                BY_LENGTH
            } else {
                0
            }
            | if self.headline.is_some() { HEADLINE } else { 0 };
        out.extend_from_slice(&count.to_be_bytes());
        for line in lines.iter().chain(&self.headline) {
            out.extend_from_slice(&line.key.to_be_bytes());
            out.push(line.words);
            out.extend_from_slice(&line.sig.to_be_bytes());
            out.extend_from_slice(&line.ends.to_be_bytes());
        }
    }

    /// Decodes a profile at the start of `bytes`: it and the bytes it took.
    pub fn decode(bytes: &[u8]) -> Option<(Blocks, usize)> {
        let host = u32::from_be_bytes(bytes.get(0..4)?.try_into().ok()?);
        let field = u16::from_be_bytes(bytes.get(4..6)?.try_into().ok()?);
        let sampled = field & SAMPLED != 0;
        let legacy = field & WORDS_AND_SHINGLES == 0;
        let by_key = sampled && field & BY_LENGTH == 0;
        let with_headline = field & HEADLINE != 0;
        let count = usize::from(field & !(SAMPLED | WORDS_AND_SHINGLES | BY_LENGTH | HEADLINE));
        if count > MAX_LINES {
            return None;
        }
        let end = 6 + LINE_BYTES * (count + usize::from(with_headline));
        let mut lines: Vec<Line> = bytes
            .get(6..end)?
            .chunks_exact(LINE_BYTES)
            .map(|c| Line {
                key: u32::from_be_bytes([c[0], c[1], c[2], c[3]]),
                words: c[4],
                sig: u128::from_be_bytes(c[5..21].try_into().expect("16 bytes")),
                ends: u32::from_be_bytes(c[21..25].try_into().expect("4 bytes")),
            })
            .collect();
        let headline = if with_headline { lines.pop() } else { None };
        Some((
            Blocks {
                host,
                lines,
                sampled,
                by_key,
                legacy,
                headline,
            },
            end,
        ))
    }
}

#[cfg(test)]
mod tests;
