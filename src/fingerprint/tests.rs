use super::*;

use super::features::*;
use super::tokens::*;
use xxhash_rust::xxh3::xxh3_128;

#[test]
fn a_tiny_set_marks_the_shingles_of_its_sentences() {
    use crate::index::tiny_likeness;
    let brief = "Harbour council meets\nThe council voted on Tuesday to repair the old bridge.";
    let page = format!("{brief}\nPosted 3 November 2026, 08:10\nCopyright the Gazette");
    let two = format!("{page}\nA new bakery opened on the market square this week.");
    let set = tiny_set(brief);
    assert!(set.windows(2).all(|w| tiny_key(w[0]) < tiny_key(w[1])));
    // The headline's one shingle is not prose; the sentence's eight are.
    assert_eq!(set.iter().filter(|h| *h & TINY_PROSE != 0).count(), 8);
    assert_eq!(set.len(), 9);
    let with_footer = tiny_likeness(&set, &tiny_set(&page));
    assert_eq!(with_footer.similarity.containment, 1.0);
    assert_eq!(with_footer.prose_added, 0);
    let with_story = tiny_likeness(&tiny_set(&two), &set);
    assert_eq!(with_story.similarity.containment, 1.0);
    assert_eq!(with_story.prose_added, 8);
    // A shingle in a sentence and in a line that is not one is kept once, as prose.
    let both = tiny_set("the old bridge\nThey will repair the old bridge after the winter storms.");
    assert_eq!(both.len(), 8);
    // Sets written before the prose bit: compared on the rest of each hash.
    let old: Vec<u32> = set.iter().map(|h| h ^ TINY_PROSE).collect();
    assert_eq!(tiny_likeness(&old, &set).similarity.resemblance, 1.0);
}

#[test]
fn every_character_of_an_unspaced_script_has_a_lead_byte_the_quick_test_reads() {
    for c in (0..=0x10ffff).filter_map(char::from_u32) {
        if tokens::is_unspaced_script(c) {
            let mut buf = [0u8; 4];
            let lead = c.encode_utf8(&mut buf).as_bytes()[0];
            assert!(leads_unspaced(lead), "{c:?}");
        }
    }
    assert_eq!(
        unspaced_of("It\u{2019}s a caf\u{e9} \u{2014} near the pier", 8),
        0
    );
    assert!(unspaced_of("图书馆延长开放时间", 8) > 0);
    assert!(unspaced_of("시립 도서관은 다음 달부터 주말 개관 시간을 연장한다", 14) > 0);
}

#[test]
fn tokens_split_words_and_bigram_unspaced_scripts() {
    assert_eq!(tokens("Don't STOP—now!"), vec!["don't", "stop", "now"]);
    assert_eq!(
        tokens("東京都 in Japan"),
        vec!["東京", "京都", "in", "japan"]
    );
    assert_eq!(tokens("字 x"), vec!["字", "x"]);
    // Korean: each spaced phrase a syllable pair at a time, a lone syllable whole.
    assert_eq!(
        tokens("도서관이 새 책을"),
        vec!["도서", "서관", "관이", "새", "책을"]
    );
    assert_eq!(tokens("Ünïcödé ΕΛΛΗΝΙΚΆ"), vec!["ünïcödé", "ελληνικά"]);
}

#[test]
fn non_ascii_chars_are_found_wherever_they_sit() {
    let text = "abcdefgh\u{e9}ijklmnopqrstuvwx\u{ff21}yz\u{4e2d}";
    let want: Vec<char> = text.chars().filter(|c| !c.is_ascii()).collect();
    assert_eq!(non_ascii_chars(text).collect::<Vec<_>>(), want);
    assert_eq!(non_ascii_chars("plain ascii only").count(), 0);
}

#[test]
fn characters_taken_as_nfkc_stable_are() {
    use unicode_normalization::UnicodeNormalization;
    use unicode_normalization::char::canonical_combining_class;
    for c in (0u32..0x3_0000).filter_map(char::from_u32) {
        if surely_nfkc_stable(c) {
            let one = c.to_string();
            assert_eq!(one.nfkc().collect::<String>(), one, "U+{:04X}", c as u32);
            assert_eq!(canonical_combining_class(c), 0, "U+{:04X}", c as u32);
        }
    }
}

#[test]
fn tokens_fold_compatibility_forms_and_digits_of_other_scripts() {
    // Full-width letters and digits, a ligature, Arabic-Indic and Devanagari digits.
    assert_eq!(tokens("ＡＢＣ ２０２６ ﬁne"), vec!["abc", "2026", "fine"]);
    assert_eq!(tokens("٢٠٢٦ ह२"), vec!["2026", "ह2"]);
    assert_eq!(
        Fingerprint::of("ＴＨＥ ｃｏｕｎｃｉｌ ｍｅｔ ｏｎ ｔｕｅｓｄａｙ").simhash,
        Fingerprint::of("The council met on Tuesday").simhash
    );
}

/// The definition, written plainly: per distinct feature, +tf^TF_EXPONENT on its set bits.
fn reference_simhash(features: &[u64]) -> Simhash {
    let mut counts: std::collections::HashMap<u64, usize> = Default::default();
    for &f in features {
        *counts.entry(f).or_default() += 1;
    }
    let mut lanes = [0u128; 64];
    let mut total = 0u128;
    for (&f, &tf) in &counts {
        let w = u128::from(tf_weight(tf));
        total += w;
        for (bit, lane) in lanes.iter_mut().enumerate() {
            *lane += w * u128::from((f >> bit) & 1);
        }
    }
    let mut out = 0;
    for (bit, &lane) in lanes.iter().enumerate() {
        if 2 * lane > total {
            out |= 1 << bit;
        }
    }
    Simhash(out)
}

#[test]
fn a_line_break_composes_with_no_character() {
    // What lets a long text be normalised a piece at a time (`for_each_token`).
    use unicode_normalization::UnicodeNormalization;
    for c in (0..=0x10ffff).filter_map(char::from_u32) {
        let alone: String = c.to_string().nfkc().collect();
        let before: String = format!("\n{c}").nfkc().collect();
        let after: String = format!("{c}\n").nfkc().collect();
        assert_eq!(before, format!("\n{alone}"), "{c:?}");
        assert_eq!(after, format!("{alone}\n"), "{c:?}");
    }
}

/// Tokens of the fast tokenizer and of the plain one, every step written out.
fn both_tokenizers(text: &str) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let (mut fast, mut plain) = (Vec::new(), Vec::new());
    tokenize_with::<true>(text, |t| fast.push(t.to_vec()));
    tokenize_with::<false>(text, |t| plain.push(t.to_vec()));
    (fast, plain)
}

#[test]
fn the_fast_tokenizer_splits_blocks_as_the_plain_one_does() {
    // Words across the 64-byte blocks, apostrophes at their edges, a word longer than
    // a block, ASCII runs too short for a block between other characters.
    let long = "Ab".repeat(70);
    let cases = [
        format!("{}don't {}", "x".repeat(60), "y".repeat(3)),
        format!("{}'t it'", "z".repeat(63)),
        format!("{}' s", "z".repeat(63)),
        format!("{long} {long}'S end"),
        format!(
            "{}caf\u{e9}'s \u{2019}n DON\u{2019}T x\u{2019} 1\u{301}",
            "a b ".repeat(15)
        ),
        "\u{41f}\u{440}\u{438}\u{432}\u{435}\u{442} M\u{438}p abc\u{436}\u{436}".repeat(9),
        format!("{} 'tis \u{301}x ,\u{2019}y", "q ".repeat(31)),
        format!(
            "{}\u{6f1}\u{662}x \u{130}STANBUL \u{4e2d}\u{6587}abc",
            "Word ".repeat(20)
        ),
    ];
    for text in &cases {
        let (fast, plain) = both_tokenizers(text);
        assert_eq!(fast, plain, "{text:?}");
    }
}

#[test]
fn the_fast_tokenizer_classes_every_character_as_the_plain_one_does() {
    // Each character alone, doubled, after a word and before one: its class, its
    // lower-case form and its digit, through the cache and written out.
    let chars: Vec<char> = ('\u{80}'..=char::MAX).collect();
    for group in chars.chunks(4096) {
        let text: String = group
            .iter()
            .map(|c| format!("{c} {c}{c} a{c}b\n"))
            .collect();
        let (fast, plain) = both_tokenizers(&text);
        assert_eq!(fast, plain, "from U+{:04X}", group[0] as u32);
    }
}

proptest::proptest! {
    #[test]
    fn the_fast_tokenizer_gives_the_tokens_of_the_plain_one(
        text in "([a-zA-Z]{1,9}|[0-9]|[ .,'\n]|\u{2019}|\u{301}|\u{e9}|\u{c9}|\u{130}|\u{41f}|\u{436}|\u{3b1}|\u{662}|\u{966}|\u{4e2d}|\u{3042}|\u{a0}|\u{2014}){0,120}",
    ) {
        let (fast, plain) = both_tokenizers(&text);
        proptest::prop_assert_eq!(fast, plain);
    }

    #[test]
    fn a_text_in_pieces_has_the_tokens_of_the_whole(
        text in "([a-zA-Z'\u{2019} \n]|\u{ff21}|\u{fb01}|\u{301}|\u{3000}|\u{1100}|\u{1161}|東|京|\u{2460}|\u{e9}){0,80}",
        piece in 1usize..24,
    ) {
        let whole: String = unicode_normalization::UnicodeNormalization::nfkc(text.as_str()).collect();
        let mut want = Vec::new();
        tokenize(&whole, |t| want.push(t.to_vec()));
        let mut got = Vec::new();
        tokens_in_pieces(&text, piece, |t| got.push(t.to_vec()));
        proptest::prop_assert_eq!(got, want);
    }
}

#[test]
fn a_feature_table_that_grows_gives_the_same_simhash() {
    // More distinct features than the table starts with, each seen one to four times,
    // in an order that repeats some before and some after each growth.
    let mut state = 7u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        fmix64(state)
    };
    let distinct: Vec<u64> = (0..300_000).map(|_| next()).collect();
    let features: Vec<u64> = (0..700_000)
        .map(|i| {
            distinct[if i % 3 == 0 {
                (next() % 300_000) as usize
            } else {
                i % 300_000
            }]
        })
        .collect();
    assert_eq!(
        weighted_simhash(&mut features.clone()).0,
        reference_simhash(&features)
    );
    let (_, seen) = weighted_simhash(&mut features.clone());
    let mut set = features.clone();
    set.sort_unstable();
    set.dedup();
    assert_eq!(seen, set.len());
}

proptest::proptest! {
    #[test]
    fn weighted_simhash_matches_its_definition(
        distinct in proptest::collection::vec(proptest::prelude::any::<u64>(), 1..300),
        picks in proptest::collection::vec(0usize..1000, 0..2000),
    ) {
        // Repeats with skewed counts (and, now and then, the hash 0).
        let features: Vec<u64> = picks
            .iter()
            .map(|&p| if p == 999 { 0 } else { distinct[(p * p / 997) % distinct.len()] })
            .collect();
        proptest::prop_assert_eq!(weighted_simhash(&mut features.clone()).0, reference_simhash(&features));
    }

    #[test]
    fn ascii_tokens_are_lowercased_alphanumeric_runs(
        text in "[a-zA-Z0-9 .,;/:@\\[`{~\x7f-]{0,200}"
    ) {
        let want: Vec<String> = text
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_ascii_lowercase)
            .collect();
        proptest::prop_assert_eq!(tokens(&text), want);
    }
}

proptest::proptest! {
    #[test]
    fn digest_normalises_whitespace_as_split_whitespace_does(
        text in "([a-z]{1,24} |[a-zé東 \t\n\r\x0b\x0c\u{85}\u{a0}\u{1680}\u{2000}\u{200a}\u{200b}\u{2028}\u{202f}\u{205f}\u{3000}\u{c0}\u{e100}\u{436}\u{3042}\u{2014}]|\u{feff}){0,100}"
    ) {
        let plain = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let (digest, size) = normalized_digest(&text);
        proptest::prop_assert_eq!(digest, Digest(xxh3_128(plain.as_bytes())));
        // The size: the characters, a Han or Kana one counted by its share of a word.
        let wide = plain.chars().filter(|&c| crate::text::is_wide(c)).count();
        let expected = crate::text::text_size(plain.chars().count(), wide, 0);
        proptest::prop_assert_eq!(size, expected);
    }
}

#[test]
fn empty_text_has_zero_simhash() {
    let f = Fingerprint::of("  \n ");
    assert_eq!(f.simhash, Simhash(0));
    assert_eq!(f.tokens, 0);
    assert_eq!(f.chars, 0);
}

#[test]
fn hex_round_trips() {
    let s = Simhash(0x0123_4567_89ab_cdef);
    assert_eq!(Simhash::from_hex(&s.to_string()), Some(s));
    assert_eq!(Simhash::from_hex("xyz"), None);
}
