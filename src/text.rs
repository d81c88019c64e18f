//! Whitespace as `char::is_whitespace` has it, found on UTF-8 bytes: the extractor's text
//! writer and the fingerprint's digest both scan text byte by byte and share this test.
//! Also the search for an ASCII word ignoring case that the markup passes and the
//! classification share, and the test of eight bytes at once against a range
//! ([`in_range`]) that the fingerprint and the markup scan share.

/// The high bit of each byte of a word.
pub(crate) const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// The low bit of each byte of a word.
const LOW_BITS: u64 = 0x0101_0101_0101_0101;

/// For eight bytes below 0x80 in a word (first byte lowest): the high bit of each byte in
/// `from..to`. A bound is compared by adding `0x80 - bound` to the byte, which never
/// carries into the next. The fingerprint's tokenizer and digest and the markup scan read
/// eight bytes at a time with it.
#[inline(always)]
pub(crate) fn in_range(x: u64, from: u64, to: u64) -> u64 {
    let at_least = |bound: u64| (x + (0x80 - bound) * LOW_BITS) & HIGH_BITS;
    at_least(from) & !at_least(to)
}

/// `text.split('\n')`, each line ending found by the vectorized `memchr` rather than
/// `str`'s own search: the finishing passes split every extracted text into its lines
/// several times.
pub(crate) fn split_lf(text: &str) -> impl Iterator<Item = &str> {
    let mut start = 0;
    let mut ends = memchr::memchr_iter(b'\n', text.as_bytes()).chain(std::iter::once(text.len()));
    std::iter::from_fn(move || {
        let end = ends.next()?;
        let line = &text[start..end];
        start = end + 1;
        Some(line)
    })
}

/// Whether any byte of `bytes` is one `wanted` takes, tested in blocks of 64 without an
/// early exit inside a block, which the compiler vectorizes: the scans this serves are of
/// whole lines and texts that most often hold no such byte.
#[inline]
pub(crate) fn any_byte(bytes: &[u8], wanted: impl Fn(u8) -> bool) -> bool {
    let mut blocks = bytes.chunks_exact(64);
    for block in &mut blocks {
        if block.iter().fold(0u8, |any, &b| any | u8::from(wanted(b))) != 0 {
            return true;
        }
    }
    blocks.remainder().iter().any(|&b| wanted(b))
}

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

/// What a Han, Kana or Hangul character counts in [`text_weight`]: about what three
/// letters of a Latin script say. The same news story takes about a third as many
/// characters in Chinese or Japanese as in English (a brief of three sentences: 90 against
/// 260), so without the weight every length rule tuned on English text (a story is 600
/// characters of prose, a teaser at most 250, a block the larger share of the page) takes a
/// Chinese brief for a caption and its site's sidebar for the content.
pub(crate) const WIDE_CHAR_WEIGHT: u32 = 3;

/// Whether `c` is a character of a script written without spaces between its words, dense
/// with meaning: Han ideographs (CJK Unified Ideographs, Extension A, compatibility
/// ideographs, the supplementary planes' extensions), Hiragana, Katakana and Hangul
/// syllables.
pub(crate) fn is_wide(c: char) -> bool {
    matches!(u32::from(c),
        0x3040..=0x30ff | 0x3400..=0x4dbf | 0x4e00..=0x9fff | 0xac00..=0xd7af
        | 0xf900..=0xfaff | 0x20000..=0x3134f)
}

/// The amount of text in `text`: its characters that are not whitespace, each Han, Kana
/// or Hangul character counted [`WIDE_CHAR_WEIGHT`] times. The extractor's lengths.
pub(crate) fn text_weight(text: &str) -> u32 {
    if text.is_ascii() {
        return non_space_chars(text);
    }
    text.chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| if is_wide(c) { WIDE_CHAR_WEIGHT } else { 1 })
        .sum()
}

/// Han, Kana or Hangul characters that make about one word, in tenths ([`unspaced_words`]):
/// words of Chinese average about 1.7 characters, and Japanese mixes one- and
/// two-character particles with longer words.
pub(crate) const WIDE_CHARS_PER_WORD_TENTHS: usize = 17;

/// Characters of Thai, Lao, Khmer or Myanmar that make about one word, in tenths
/// ([`unspaced_words`]). These scripts write a phrase without spaces, and their vowel and
/// tone marks are characters of their own: the Thai National Corpus (33 million words, as
/// pythainlp's `tnc_freq` counts them) averages 4.1 characters a word, and a plain sentence
/// of each of the four, cut into words by its segmenter (pythainlp, laonlp, khmer-nltk,
/// pyidaungsu), 4.8 to 5.4.
pub(crate) const SOUTHEAST_CHARS_PER_WORD_TENTHS: usize = 45;

/// Whether `c` is of Thai, Lao, Myanmar or Khmer: scripts written without spaces between
/// words, a character of which says about what a Latin letter says.
pub(crate) fn is_southeast_unspaced(c: char) -> bool {
    matches!(u32::from(c), 0x0e00..=0x0eff | 0x1000..=0x109f | 0x1780..=0x17ff)
}

/// The words in a run of `wide` Han, Kana or Hangul characters and `southeast` Thai, Lao,
/// Khmer or Myanmar ones (at least one): [`WIDE_CHARS_PER_WORD_TENTHS`] and
/// [`SOUTHEAST_CHARS_PER_WORD_TENTHS`].
pub(crate) fn unspaced_words(wide: usize, southeast: usize) -> usize {
    ((wide * 10).div_ceil(WIDE_CHARS_PER_WORD_TENTHS)
        + (southeast * 10).div_ceil(SOUTHEAST_CHARS_PER_WORD_TENTHS))
    .max(1)
}

/// How far `tokens` tokens of a text outnumber its words, in 127ths of its tokens
/// ([`Sketch::unspaced`](crate::fingerprint::Sketch::unspaced)), when `run_tokens` of them
/// come from runs of scripts written without spaces, of `cjk` Han or Kana characters and
/// `southeast` Thai, Lao, Khmer or Myanmar ones: those characters make
/// [`unspaced_words`]'s words (1.7 Han characters a word, 4.5 Thai ones), and the tokens
/// beyond them are the excess. 0 for spaced text, and for runs too short to hold more
/// tokens than words.
pub(crate) fn unspaced_share(tokens: usize, run_tokens: usize, cjk: usize, southeast: usize) -> u8 {
    if tokens == 0 || cjk + southeast == 0 {
        return 0;
    }
    let words = cjk as f64 * 10.0 / WIDE_CHARS_PER_WORD_TENTHS as f64
        + southeast as f64 * 10.0 / SOUTHEAST_CHARS_PER_WORD_TENTHS as f64;
    let excess = (run_tokens.min(tokens) as f64 - words).max(0.0);
    let max = f64::from(crate::fingerprint::MAX_UNSPACED);
    ((excess / tokens as f64).min(1.0) * max).round() as u8
}

/// Characters a word of a spaced script takes with its space, in tenths: 6.3 on the
/// ground-truth main texts of WCXB dev (1,463 texts without CJK; characters over
/// whitespace-separated words).
pub(crate) const SPACED_CHARS_PER_WORD_TENTHS: usize = 63;

/// The length of a text as the decision's size rule reads it (`dedup.short_text_chars`):
/// `chars` characters, of which `wide` Han, Kana or Hangul and `southeast` Thai, Lao,
/// Khmer or Myanmar, each of those counted as the characters of a spaced script its share
/// of a word takes ([`SPACED_CHARS_PER_WORD_TENTHS`] over [`WIDE_CHARS_PER_WORD_TENTHS`]:
/// about 3.7 a Han character; over [`SOUTHEAST_CHARS_PER_WORD_TENTHS`]: 1.4 a Thai one).
/// A text of 500 is then about 80 words in every script: 500 characters of English, 135 of
/// Chinese, 357 of Thai.
pub(crate) fn text_size(chars: usize, wide: usize, southeast: usize) -> usize {
    chars - wide - southeast
        + (wide * SPACED_CHARS_PER_WORD_TENTHS).div_ceil(WIDE_CHARS_PER_WORD_TENTHS)
        + (southeast * SPACED_CHARS_PER_WORD_TENTHS).div_ceil(SOUTHEAST_CHARS_PER_WORD_TENTHS)
}

/// The words of `text`: its runs between whitespace, each run of a script written without
/// spaces counted by [`unspaced_words`] of its Han, Kana, Hangul, Thai, Lao, Khmer or
/// Myanmar characters (a Chinese headline of twelve characters is eight words, not one; a
/// Thai sentence of 65 characters, 15).
pub(crate) fn words(text: &str) -> usize {
    text.split_whitespace()
        .map(|run| {
            if run.is_ascii() {
                return 1;
            }
            let (mut wide, mut southeast) = (0, 0);
            for c in run.chars() {
                if is_wide(c) {
                    wide += 1;
                } else if is_southeast_unspaced(c) {
                    southeast += 1;
                }
            }
            if wide + southeast == 0 {
                1
            } else {
                unspaced_words(wide, southeast)
            }
        })
        .sum()
}

/// Words a line must have to hold a sentence ([`holds_sentence`]): the line rule's
/// sentence ([`LONG_LINE_WORDS`](crate::fingerprint::blocks::LONG_LINE_WORDS)).
const SENTENCE_WORDS: usize = crate::fingerprint::blocks::LONG_LINE_WORDS as usize;

/// Words a line of Thai or Lao (scripts that end a sentence with a space, not a mark) must
/// have to be taken as prose without a sentence mark ([`holds_sentence`]).
const UNMARKED_SENTENCE_WORDS: usize = 16;

/// Whether a line of main text holds a sentence: it has [`SENTENCE_WORDS`] words or more
/// ([`words`]) and a mark that ends a sentence: a full stop, question or exclamation mark
/// followed by a space or the line's end (not the point of `3.5` or of `08.10`), or one of
/// the marks of Chinese and Japanese (。！？), Devanagari (।), Khmer (។), Myanmar (။) or
/// Arabic (؟) anywhere. A line of Thai or Lao, which mark no sentence's end, holds one at
/// [`UNMARKED_SENTENCE_WORDS`] words. A headline, a date line, a byline, a menu and a
/// footer (`城市日报社版权所有 未经授权禁止转载`, `Copyright the Gazette, all rights
/// reserved`) hold none.
pub(crate) fn holds_sentence(line: &str) -> bool {
    let words = words(line);
    if words < SENTENCE_WORDS {
        return false;
    }
    let mut chars = line.chars().peekable();
    let mut thai_or_lao = false;
    while let Some(c) = chars.next() {
        match c {
            '.' | '!' | '?' if chars.peek().is_none_or(|next| next.is_whitespace()) => {
                return true;
            }
            '。' | '！' | '？' | '।' | '។' | '။' | '؟' => return true,
            '\u{0e00}'..='\u{0eff}' => thai_or_lao = true,
            _ => {}
        }
    }
    thai_or_lao && words >= UNMARKED_SENTENCE_WORDS
}

/// Labels that open a reader's comment printed under a story as a line of its own
/// ("Reader comment: I tried this last weekend ...", "读者评论：...", "読者のコメント：..."),
/// compared in lower case and followed by a colon. Only labels that name a reader: a plain
/// "Comment:" opens an editor's note as often.
const READER_COMMENT_LABELS: &[&str] = &[
    "reader comment",
    "reader's comment",
    "readers' comment",
    "comment from a reader",
    "user comment",
    "visitor comment",
    "leserkommentar",
    "kommentar eines lesers",
    "commentaire d'un lecteur",
    "commentaire de lecteur",
    "comentario de un lector",
    "comentario del lector",
    "读者评论",
    "网友评论",
    "读者留言",
    "网友留言",
    "讀者評論",
    "讀者留言",
    "網友評論",
    "網友留言",
    "読者のコメント",
    "読者コメント",
    "読者の声",
];

/// Whether a line is a reader's comment that names itself so ([`READER_COMMENT_LABELS`]):
/// what a discussion page adds to a story, not a story of its own.
pub(crate) fn is_reader_comment(line: &str) -> bool {
    let opening: String = line
        .trim_start()
        .chars()
        .take(32)
        .flat_map(char::to_lowercase)
        .collect();
    READER_COMMENT_LABELS.iter().any(|label| {
        opening
            .strip_prefix(label)
            .is_some_and(|rest| rest.trim_start().starts_with([':', '：']))
    })
}

/// Characters of `text` that are not whitespace.
pub(crate) fn non_space_chars(text: &str) -> u32 {
    if text.is_ascii() {
        // Counted in runs of at most 255 bytes into one byte each, which the compiler
        // turns into vector additions.
        let spaces: usize = text
            .as_bytes()
            .chunks(255)
            .map(|run| usize::from(run.iter().map(|&b| u8::from(is_ascii_space(b))).sum::<u8>()))
            .sum();
        (text.len() - spaces) as u32
    } else {
        text.chars().filter(|c| !c.is_whitespace()).count() as u32
    }
}

/// Whether `haystack` holds `needle`, ASCII case ignored. `needle` is non-empty and in
/// lower case; the candidates are found by `memchr` on its first letter in either case.
pub(crate) fn contains_ignore_ascii_case(haystack: &[u8], needle: &[u8]) -> bool {
    debug_assert!(!needle.is_empty() && !needle.iter().any(u8::is_ascii_uppercase));
    let first = needle[0];
    memchr::memchr2_iter(first, first.to_ascii_uppercase(), haystack).any(|at| {
        haystack
            .get(at..at + needle.len())
            .is_some_and(|window| window.eq_ignore_ascii_case(needle))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_readers_comment_is_told_by_its_label_in_every_script() {
        for line in [
            "Reader comment: I tried this last weekend and it worked well, thank you.",
            "读者评论：我上周末去了图书馆，环境很安静，很适合学习。",
            "読者のコメント：先週末に行ってみましたが、とても静かでした。",
            "Leserkommentar: Sehr gut geschrieben, danke.",
        ] {
            assert!(is_reader_comment(line), "{line}");
        }
        for line in [
            "Comment: the figures were revised on Monday.",
            "The reader comment section closed on Friday.",
            "读者评论这项政策时表示支持。",
        ] {
            assert!(!is_reader_comment(line), "{line}");
        }
    }

    #[test]
    fn a_line_holds_a_sentence_in_every_script_and_a_footer_none() {
        for prose in [
            "The council voted on Tuesday to repair the bridge near the school.",
            "Is the bridge safe? The engineers say it is, for now",
            "记者从市文化局获悉，市图书馆自下月起将周末开放时间延长至晚上九点。",
            "市図書館は来月から週末の開館時間を午後九時まで延長する。",
            "हमारे शहर की परिषद ने मंगलवार को पुराने पुल की मरम्मत का निर्णय लिया।",
            "ក្រុមប្រឹក្សាក្រុងបានសម្រេចជួសជុលស្ពានចាស់នៅថ្ងៃអង្គារ។",
            "สภาเมืองลงมติเมื่อวันอังคารให้ซ่อมสะพานเก่าใกล้โรงเรียน ซึ่งชาวบ้านร้องเรียนมานานหลายเดือนแล้ว",
        ] {
            assert!(holds_sentence(prose), "{prose}");
        }
        for other in [
            "Harbour council meets",
            "Posted 3 November 2026, 08:10",
            "Copyright the Gazette, all rights reserved",
            "Version 3.5 of the reader app is out on 08.10 for phones and tablets",
            "城市日报社版权所有 未经授权禁止转载 联系电话：0571-88886666 备案号：浙ICP备0000000号",
            "2026年11月3日 08:10 来源：城市日报",
            "ご意見。",
            "สภาเมืองซ่อมสะพาน",
        ] {
            assert!(!holds_sentence(other), "{other}");
        }
    }

    /// A plain sentence of each script written without spaces between its words, and the
    /// words its segmenter cuts it into: jieba (Chinese), janome (Japanese, IPADIC as MeCab), pythainlp
    /// (Thai), laonlp (Lao), khmer-nltk (Khmer), pyidaungsu (Myanmar).
    const SEGMENTED: &[(&str, &str, usize)] = &[
        ("Chinese", "我们今天去北京参观了故宫博物院", 7),
        ("Japanese", "私は昨日東京で友達に会いました", 10),
        (
            "Thai",
            "ประเทศไทยมีประชากรประมาณเจ็ดสิบล้านคน และเมืองหลวงคือกรุงเทพมหานคร",
            12,
        ),
        (
            "Lao",
            "ປະເທດລາວມີພົນລະເມືອງປະມານເຈັດລ້ານຄົນ ແລະນະຄອນຫຼວງແມ່ນວຽງຈັນ",
            11,
        ),
        (
            "Khmer",
            "ប្រទេសកម្ពុជាមានប្រជាជនប្រមាណដប់ប្រាំលាននាក់ ហើយរាជធានីគឺភ្នំពេញ",
            13,
        ),
        (
            "Myanmar",
            "မြန်မာနိုင်ငံတွင် လူဦးရေ သန်းငါးဆယ်ခန့် ရှိပြီး မြို့တော်မှာ နေပြည်တော် ဖြစ်သည်",
            15,
        ),
    ];

    #[test]
    fn each_unspaced_script_counts_about_the_words_its_segmenter_finds() {
        for &(script, sentence, segmented) in SEGMENTED {
            let counted = words(sentence);
            // Within half and half again: one sentence's words are longer or shorter than
            // the average (the Thai here has 5.4 characters a word, the corpus 4.1), but a
            // run between spaces is not one word, nor a bigram a word.
            let (low, high) = (segmented / 2, segmented * 3 / 2);
            assert!(
                (low..=high).contains(&counted),
                "{script}: {counted} words counted, {segmented} segmented"
            );
            // One run between spaces would be one word.
            assert!(
                counted > sentence.split_whitespace().count() * 2,
                "{script}"
            );
        }
        // A spaced script is counted by its spaces.
        assert_eq!(words("Thailand has about seventy million people"), 6);
    }

    #[test]
    fn each_script_has_the_size_of_the_words_its_segmenter_finds_in_english_characters() {
        // The size rule's length (`Fingerprint::chars`): a sentence of each unspaced script
        // is within half and half again of its segmenter's words at 6.3 characters each.
        for &(script, sentence, segmented) in SEGMENTED {
            let size = crate::Fingerprint::of(sentence).chars;
            let expected = segmented * SPACED_CHARS_PER_WORD_TENTHS / 10;
            assert!(
                (expected / 2..=expected * 3 / 2).contains(&size),
                "{script}: size {size}, {segmented} words make {expected}"
            );
        }
        // A spaced script's size is its characters.
        let english = "Thailand has about seventy million people";
        assert_eq!(crate::Fingerprint::of(english).chars, english.len());
        assert_eq!(text_size(10, 0, 0), 10);
        // 17 Han characters are ten words: 63 characters.
        assert_eq!(text_size(17, 17, 0), 63);
        assert_eq!(text_size(45, 0, 45), 63);
    }

    proptest! {
        #[test]
        fn split_lf_splits_as_str_split_does(text in "[a\n\ré中 ]{0,300}") {
            let ours: Vec<&str> = split_lf(&text).collect();
            let theirs: Vec<&str> = text.split('\n').collect();
            prop_assert_eq!(ours, theirs);
        }

        #[test]
        fn any_byte_finds_what_iter_any_finds(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let wanted = |b: u8| matches!(b, 0xE3..=0xE9 | b'\t'..=b'\r');
            prop_assert_eq!(any_byte(&bytes, wanted), bytes.iter().any(|&b| wanted(b)));
        }

        #[test]
        fn non_space_chars_counts_what_char_is_whitespace_does_not(
            text in "([a-z]{0,9}[ \t\n\r\x0b\x0c]{0,3}){0,200}|[a \u{a0}\u{3000}é\n]{0,300}"
        ) {
            let plain = text.chars().filter(|c| !c.is_whitespace()).count() as u32;
            prop_assert_eq!(non_space_chars(&text), plain);
        }

        #[test]
        fn text_weight_counts_wide_characters_three_times(
            text in "[a-z \u{a0}\u{3000}é\n。、中文日本語ひらがなカタカナ한국]{0,300}"
        ) {
            let plain = text.chars().filter(|c| !c.is_whitespace()).count() as u32;
            let wide = text.chars().filter(|&c| is_wide(c)).count() as u32;
            prop_assert_eq!(text_weight(&text), plain + (WIDE_CHAR_WEIGHT - 1) * wide);
        }

        #[test]
        fn words_are_runs_between_spaces_and_a_word_per_1_7_wide_characters(
            runs in proptest::collection::vec("[a-z]{1,6}|[中文日本語ひらがな]{1,9}", 0..12)
        ) {
            let expected: usize = runs
                .iter()
                .map(|r| if r.is_ascii() { 1 } else { (r.chars().count() * 10).div_ceil(17) })
                .sum();
            prop_assert_eq!(words(&runs.join(" ")), expected);
        }

        #[test]
        fn contains_ignore_ascii_case_is_a_lower_cased_search(
            haystack in "[oOgG:dDé ]{0,12}",
            needle in "[og:d]{1,3}"
        ) {
            let lower = haystack.to_ascii_lowercase();
            let plain = lower.as_bytes().windows(needle.len()).any(|w| w == needle.as_bytes());
            prop_assert_eq!(contains_ignore_ascii_case(haystack.as_bytes(), needle.as_bytes()), plain);
        }
    }
}
