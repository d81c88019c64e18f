//! Tests of the lines' profiles: signatures, ends, sampling and the stored form.

use super::*;
use proptest::prelude::*;

/// Three-letter names, without digits (a line's key reads every run of digits as one).
fn name(i: u32) -> String {
    [i % 26, i / 26 % 26, i / 676 % 26]
        .iter()
        .map(|&c| char::from(b'a' + c as u8))
        .collect()
}

#[test]
fn a_page_of_more_lines_than_a_profile_keeps_is_sampled_by_length_and_says_so() {
    // 300 lines of eight words: of one length, they are kept by key.
    let text: Vec<String> = (0..300)
        .map(|i| format!("line {} holds these eight words of its own", name(i)))
        .collect();
    let blocks = Blocks::of("a.example", &text.join("\n"));
    assert!(blocks.sampled);
    assert_eq!(blocks.lines.len(), MAX_LINES);
    // The lines kept are those of the lowest ranks, each covered, the others not.
    let all = Blocks::profile("a.example", &text.join("\n"), None);
    let mut ranks: Vec<u64> = text
        .iter()
        .map(|l| Blocks::of("a.example", l).lines[0].rank())
        .collect();
    ranks.sort_unstable();
    let coverage = blocks.coverage();
    assert_eq!(coverage, Coverage::ByLength(ranks[MAX_LINES - 1]));
    let unsampled = Blocks::of("a.example", &text[..MAX_LINES].join("\n"));
    assert!(!unsampled.sampled);
    assert_eq!(unsampled.coverage(), Coverage::All);
    for line in &all.lines {
        assert_eq!(
            coverage.covers(line),
            blocks.lines.iter().any(|l| l.key == line.key)
        );
    }
    // Stored and read back, the profile is still a sample by length.
    let mut bytes = Vec::new();
    blocks.encode(&mut bytes);
    assert_eq!(Blocks::decode(&bytes), Some((blocks.clone(), bytes.len())));
    let mut bytes = Vec::new();
    unsampled.encode(&mut bytes);
    assert_eq!(Blocks::decode(&bytes).map(|(b, _)| b.sampled), Some(false));
}

/// A brief's paragraph under a table of contents of 400 entries, each long enough to be a
/// sentence, stays in the page's profile whatever its key: the longest lines are kept.
#[test]
fn a_paragraph_under_a_table_of_contents_of_hundreds_of_entries_stays_in_the_profile() {
    let toc: Vec<String> = (0..400)
        .map(|i| format!("chapter {} explains the settings of the tool", name(i)))
        .collect();
    for i in 0..20 {
        let brief = format!(
            "the council {} approved the new library budget on tuesday after a long debate \
             about its opening hours and the cost of keeping the reading rooms warm",
            name(i)
        );
        let text = format!("{brief}\n{}", toc.join("\n"));
        let blocks = Blocks::of("a.example", &text);
        let line = Blocks::of("a.example", &brief).lines[0];
        assert!(blocks.sampled && blocks.lines.contains(&line), "brief {i}");
        assert!(blocks.coverage().covers(&line));
    }
}

/// A sample stored by a build before index format 10 is read as a sample by key, and its
/// coverage is by key: its sentences of the lowest keys, then its short lines.
#[test]
fn a_sample_by_key_stored_before_format_10_is_read_and_covered_by_key() {
    let text: Vec<String> = (0..300)
        .map(|i| format!("line {} holds these eight words of its own", name(i)))
        .collect();
    let mut by_key = Blocks::of("a.example", &text.join("\n"));
    by_key.by_key = true;
    let mut bytes = Vec::new();
    by_key.encode(&mut bytes);
    // Format 9's count field: sampled and signed by words and shingles, no length bit.
    assert_eq!(u16::from_be_bytes([bytes[4], bytes[5]]) & BY_LENGTH, 0);
    let (read, _) = Blocks::decode(&bytes).unwrap();
    assert!(read.sampled && read.by_key);
    let highest = read.lines.iter().map(|l| l.key).max();
    assert_eq!(
        read.coverage(),
        Coverage::ByKey {
            long: highest,
            short: None
        }
    );
}

proptest! {
    #[test]
    fn the_counted_signature_is_the_bitwise_one(
        words in proptest::collection::vec(any::<u64>(), 0..300),
        shingles in proptest::collection::vec(any::<u64>(), 0..300),
    ) {
        let all: Vec<u64> = words.iter().chain(&words).chain(&shingles).copied().collect();
        prop_assert_eq!(line_sig(&words, &shingles), line_sig_reference(&all));
    }

    #[test]
    fn features_from_token_hashes_are_those_of_the_text(
        text in "([a-z]{1,6}|[0-9]{1,3}|日本語) {0,1}([a-z]{1,6} ){0,20}"
    ) {
        use crate::fingerprint::features::shingle_features_into;
        let (mut hashes, mut from_hashes, mut from_text) = (Vec::new(), Vec::new(), Vec::new());
        token_hashes_into(&text, &mut hashes);
        word_features(&hashes, &mut from_hashes);
        let words = shingle_features_into(&text, 1, &mut from_text);
        prop_assert_eq!(words, hashes.len());
        prop_assert_eq!(&from_hashes, &from_text);
        three_shingles(&hashes, &mut from_hashes);
        shingle_features_into(&text, 3, &mut from_text);
        prop_assert_eq!(&from_hashes, &from_text);
    }
}

#[test]
fn an_edited_line_is_near_its_original_and_another_line_is_not() {
    let text = "The council approved the budget on Tuesday after a long debate about parks and roads.\n\
                The council approved the budget on Monday after a long debate about parks and roads.\n\
                A storm closed the harbour for two days and the ferries stayed in port until Friday.\n\
                Sports\n";
    let blocks = Blocks::of("example.com", text);
    let [a, b, c, d] = blocks.lines[..] else {
        panic!("four lines: {blocks:?}")
    };
    assert!(a.is_long() && !d.is_long());
    assert!(a.is_near(&b), "{}", (a.sig ^ b.sig).count_ones());
    assert!(!a.is_near(&c), "{}", (a.sig ^ c.sig).count_ones());
    assert_ne!(a.key, b.key);
}

#[test]
fn a_headline_grown_by_a_sentence_stays_near_it() {
    // Twelve words, then twenty-three: one kind of signature for both lengths (a line
    // of 16 words or more was signed by its shingles alone, a shorter one by its words).
    let headline = "Council approves the new budget for parks and roads after long debate";
    let grown = format!("{headline} and a reader wrote to add that the figures were confirmed");
    let blocks = Blocks::of("example.com", &format!("{headline}\n{grown}\n"));
    let [a, b] = blocks.lines[..] else {
        panic!("two lines: {blocks:?}")
    };
    assert!(a.is_near(&b), "{}", (a.sig ^ b.sig).count_ones());
}

#[test]
fn a_line_that_holds_another_and_twice_as_much_again_is_not_it_edited() {
    // A page's paragraphs joined into one line (a scraper's item text) open with the
    // first paragraph's words, and its words are a large part of the line's.
    let first = "The council approved the budget on Tuesday after a long debate about parks \
                 and roads across the whole district";
    let joined = format!(
        "{first} and the mayor said the vote was close. Work on the roads begins in \
         spring. The parks get new benches and lights by the summer after next."
    );
    let blocks = Blocks::of("example.com", &format!("{first}\n{joined}\n"));
    let [a, b] = blocks.lines[..] else {
        panic!("two lines: {blocks:?}")
    };
    // The same first words, and signatures near: only the lengths tell them apart.
    assert!(u32::from(b.words) > NEAR_LINE_GROWTH * u32::from(a.words));
    assert!(a.ends & 0xffff == b.ends & 0xffff);
    assert!((a.sig ^ b.sig).count_ones() <= NEAR_LINE_BITS);
    assert!(!a.is_near(&b) && !b.is_near(&a));
}

#[test]
fn a_line_of_an_unspaced_script_counts_its_words_not_its_bigrams() {
    // Sentences and their words as their segmenters cut them (jieba, pythainlp,
    // khmer-nltk, pyidaungsu; crate::text's tests have the six scripts): each is a
    // sentence of the page, counted near its segmenter's words.
    for (line, segmented) in [
        ("我们今天去北京参观了故宫博物院", 7usize),
        (
            "ประเทศไทยมีประชากรประมาณเจ็ดสิบล้านคน และเมืองหลวงคือกรุงเทพมหานคร",
            12,
        ),
        ("ប្រទេសកម្ពុជាមានប្រជាជនប្រមាណដប់ប្រាំលាននាក់ ហើយរាជធានីគឺភ្នំពេញ", 13),
        (
            "မြန်မာနိုင်ငံတွင် လူဦးရေ သန်းငါးဆယ်ခန့် ရှိပြီး မြို့တော်မှာ နေပြည်တော် ဖြစ်သည်",
            15,
        ),
    ] {
        let blocks = Blocks::of("example.com", line);
        let words = usize::from(blocks.lines[0].words);
        assert!(blocks.lines[0].is_long(), "{line}: {words}");
        assert!(
            (segmented / 2..=segmented * 3 / 2).contains(&words),
            "{line}: {words} words, {segmented} segmented"
        );
    }
}

#[test]
fn a_profile_round_trips_and_a_cut_one_is_refused() {
    let blocks = Blocks::of("example.com", "One line of words here.\n\nAnother line.\n");
    assert_eq!(blocks.lines.len(), 2);
    let mut bytes = Vec::new();
    blocks.encode(&mut bytes);
    bytes.extend_from_slice(b"rest");
    assert_eq!(Blocks::decode(&bytes), Some((blocks, bytes.len() - 4)));
    assert_eq!(Blocks::decode(&bytes[..10]), None);
}

#[test]
fn a_page_of_too_many_lines_keeps_its_sentences_first() {
    let sentence = "this line is a whole sentence of the page with words\n";
    let text = format!(
        "{}{}",
        "a short line\n".repeat(MAX_LINES),
        sentence.repeat(10)
    );
    let blocks = Blocks::of("example.com", &text);
    assert_eq!(blocks.lines.len(), MAX_LINES);
    assert_eq!(blocks.lines.iter().filter(|l| l.is_long()).count(), 10);
    assert!(!blocks.lines[0].is_long(), "reading order kept");
    let blocks = Blocks::of("example.com", &sentence.repeat(MAX_LINES + 5));
    assert_eq!(blocks.lines.len(), MAX_LINES);
}

/// A line profiled again is read from the cache: the profile of a page is the same
/// whether its lines were profiled before or not, and a cached line's key is its key.
#[test]
fn a_profile_is_the_same_from_the_line_cache_as_computed() {
    let text = "Harbour news\nThe council met on Thursday to decide the future of the pier.\n\n東京の図書館は来月から開館時間を延長する。\nContact us";
    let cold = Blocks::profile_with(
        &std::sync::Mutex::new(LineCache::new()),
        "a.example",
        text,
        None,
    );
    let cache = std::sync::Mutex::new(LineCache::new());
    let warm_up = Blocks::profile_with(&cache, "a.example", text, None);
    let warm = Blocks::profile_with(&cache, "a.example", text, None);
    assert_eq!(cold, warm_up);
    assert_eq!(cold, warm);
    // Through the process's cache, the keys as `block_key` gives them.
    let _ = Blocks::of("a.example", text);
    let mut line_keys = LineKeys::default();
    for line in text.split_inclusive('\n') {
        assert_eq!(
            cached_key(line, &mut line_keys),
            block_key(line),
            "{line:?}"
        );
    }
}

#[test]
fn a_headline_is_kept_beside_a_sample_and_round_trips_and_a_profile_without_one_reads_as_before() {
    // A page of more lines than a profile keeps, each longer than its headline: the
    // headline is kept all the same, apart from the sample.
    let text: Vec<String> = (0..MAX_LINES as u32 + 40)
        .map(|i| {
            format!(
                "Entry {} of the book's contents, about {} and more.",
                name(i),
                name(i + 7)
            )
        })
        .collect();
    let headline = "A short headline";
    let blocks = Blocks::of("a.example", &text.join("\n")).with_headline(Some(headline));
    assert!(blocks.sampled);
    assert_eq!(blocks.lines.len(), MAX_LINES);
    let line = Blocks::of("a.example", headline).lines[0];
    assert_eq!(blocks.headline, Some(line));
    let mut bytes = Vec::new();
    blocks.encode(&mut bytes);
    bytes.extend_from_slice(b"rest");
    assert_eq!(
        Blocks::decode(&bytes),
        Some((blocks.clone(), bytes.len() - 4))
    );
    assert_eq!(Blocks::decode(&bytes[..bytes.len() - 4 - LINE_BYTES]), None);
    // A profile without a headline (as stored before index format 11) has no flag and reads
    // with none.
    let without = Blocks {
        headline: None,
        ..blocks
    };
    let mut bytes = Vec::new();
    without.encode(&mut bytes);
    assert_eq!(u16::from_be_bytes([bytes[4], bytes[5]]) & HEADLINE, 0);
    assert_eq!(Blocks::decode(&bytes), Some((without, bytes.len())));
    assert_eq!(
        Blocks::of("a.example", "x").with_headline(None).headline,
        None
    );
}

#[test]
fn headlines_edited_are_not_apart_and_another_articles_is() {
    let page = |headline: &str| Blocks::of("a.example", "").with_headline(Some(headline));
    let original = page("City council approves the new bridge over the river");
    for edited in [
        "City council approves the new bridge over the river",
        "City council approves a new bridge over the river",
        "UPDATED: City council approves the new bridge over the river",
        "City council approves the new bridge over the river, mayor says",
    ] {
        assert!(!original.headlines_apart(&page(edited)), "{edited}");
    }
    assert!(original.headlines_apart(&page("Heavy rain expected across the region on Friday")));
    // Unknown on either side: never apart.
    assert!(!original.headlines_apart(&Blocks::of("a.example", "")));
}
