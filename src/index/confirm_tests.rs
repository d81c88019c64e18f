use super::*;
use crate::fingerprint::blocks::MAX_LINES;

/// Line `i` of a made-up page: twenty words of a large vocabulary, so that two lines
/// share almost none.
fn line(i: u64) -> String {
    let mut state = (i + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..20)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // Letters, not digits: a line's key reads every run of digits as one.
            let mut n = state % 50_000;
            let mut word = String::new();
            for _ in 0..4 {
                word.push(char::from(b'a' + (n % 26) as u8));
                n /= 26;
            }
            word
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn page(lines: impl Iterator<Item = u64>) -> Blocks {
    let text: Vec<String> = lines.map(line).collect();
    Blocks::of("a.example", &text.join("\n"))
}

#[test]
fn a_long_page_with_a_sentence_added_is_its_copy_and_one_with_new_sentences_is_not() {
    let rule = Confirm::default();
    let original = page(0..400);
    assert!(original.sampled && original.lines.len() == MAX_LINES);
    // The copy has one sentence more, at the top: in reading order it would push the
    // original's last kept sentence out of the profile, a sentence of the original's own.
    let copy = page(std::iter::once(10_000).chain(0..400));
    assert!(rule.judge_blocks(&copy, &original, &[]).1, "the copy");
    assert!(
        rule.judge_blocks(&original, &copy, &[]).1,
        "the copy, the other way"
    );
    // The same page with a hundred new sentences in the middle is another page.
    let grown = page((0..200).chain(20_000..20_100).chain(200..400));
    assert!(
        !rule.judge_blocks(&grown, &original, &[]).1,
        "new sentences"
    );
    // A page of another 400 sentences shares nothing.
    assert!(!rule.judge_blocks(&page(30_000..30_400), &original, &[]).1);
}

#[test]
fn a_page_with_comments_appended_is_its_copy_and_one_with_sentences_amid_it_is_not() {
    let rule = Confirm::default();
    let original = page(0..10);
    // Ten sentences of the article, then three comments of twenty words each: more than
    // a sentence or two added, but all after the article.
    let commented = page((0..10).chain(100..103));
    assert!(rule.judge_blocks(&commented, &original, &[]).1);
    // The same three sentences amid the article's are a story of its own.
    let amid = page((0..5).chain(100..103).chain(5..10));
    assert!(!rule.judge_blocks(&amid, &original, &[]).1);
    // Appended, but more than the page it repeats.
    let grown = page((0..10).chain(100..115));
    assert!(!rule.judge_blocks(&grown, &original, &[]).1);
    // A page with a story of its own is not another's with comments.
    let other = page((0..8).chain(200..202));
    assert!(!rule.judge_blocks(&commented, &other, &[]).1);
}

#[test]
fn tiny_pages_of_a_host_that_differ_by_a_sentence_appended_are_one_page() {
    let page = |lines: &[&str]| Blocks::of("a.example", &lines.join("\n"));
    let brief = "The harbour council met on Thursday to decide the future of the old ferry pier and agreed to repair the timber deck before summer.";
    let original = page(&["Harbour news", "Harbour council meets", brief, "Contact us"]);
    // A sentence appended to its paragraph.
    let appended = format!("{brief} Residents may send their views before the end of the month.");
    let grown = page(&[
        "Harbour news",
        "Harbour council meets",
        &appended,
        "Contact us",
    ]);
    assert!(tiny_lines_edited(&grown, &original, &[], false));
    assert!(tiny_lines_edited(&original, &grown, &[], false));
    // Words changed in it: a tiny page told apart by them (an event's name, a date) is
    // another page, so a brief's copy so edited is not found this way.
    let edited = brief
        .replace("Thursday", "Friday")
        .replace("summer", "spring");
    let copy = page(&[
        "Harbour news",
        "Harbour council meets",
        &edited,
        "Contact us",
    ]);
    assert!(!tiny_lines_edited(&copy, &original, &[], false));
    let event = |name: &str| {
        page(&[
            "Events",
            &format!(
                "Join us for {name} at the Harbour Hall on Friday evening, with tickets at the door."
            ),
            "Contact us",
        ])
    };
    assert!(!tiny_lines_edited(
        &event("the Jazz Trio"),
        &event("the Big Rock Band from Leeds"),
        &[],
        false
    ));
    // A product page with another name in the same words: a short line differs.
    let kettle = |name: &str| {
        page(&[
            "Shop",
            name,
            "A kettle with a filter, a light and a base that turns all the way round for either hand.",
            "Basket",
        ])
    };
    assert!(!tiny_lines_edited(
        &kettle("Blue kettle 1.7 litres"),
        &kettle("Red kettle 1.7 litres"),
        &[],
        false
    ));
    // Two months of a calendar: the same lines but for their numbers.
    let month = |m: &str| {
        page(&[
            "Events",
            &format!("Events in 2025-{m}"),
            "No events are planned this month.",
            "Previous month Next month",
        ])
    };
    assert!(!tiny_lines_edited(&month("01"), &month("02"), &[], false));
    // Two pages, each with a sentence of its own (their bodies lost by extraction).
    let a = page(&[
        "Harbour news",
        "The council meets on Thursday to decide the pier",
        "Contact us",
    ]);
    let b = page(&[
        "Harbour news",
        "A new bakery opened on the market square this week",
        "Contact us",
    ]);
    assert!(!tiny_lines_edited(&a, &b, &[], false));
}

/// A page of `lines` lines, its first with every fifth of its twenty words replaced
/// when `edited`, as an editor fixes a paragraph.
fn edited_page(lines: u64, edited: bool) -> Blocks {
    let text: Vec<String> = (0..lines)
        .map(|i| {
            let text = line(i);
            if i != 0 || !edited {
                return text;
            }
            text.split(' ')
                .enumerate()
                .map(|(w, word)| match w % 5 {
                    3 => ["amended", "revised", "changed", "updated"][w / 5],
                    _ => word,
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    Blocks::of("a.example", &text.join("\n"))
}

#[test]
fn a_page_with_four_words_of_a_paragraph_changed_is_its_copy() {
    // The four changed words are twelve of the paragraph's eighteen shingles: a
    // signature of its shingles alone put the two paragraphs more than NEAR_LINE_BITS
    // apart, and the paragraph counted as the copy's own.
    let rule = Confirm::default();
    let (original, copy) = (edited_page(3, false), edited_page(3, true));
    let (a, b) = (original.lines[0], copy.lines[0]);
    assert!(a.is_near(&b), "{} bits apart", (a.sig ^ b.sig).count_ones());
    assert!(rule.judge_blocks(&copy, &original, &[]).1);
    assert!(rule.judge_blocks(&original, &copy, &[]).1);
    assert!(!rule.judge_blocks(&page(10..13), &original, &[]).1);
}

#[test]
fn a_profile_stored_before_format_9_matches_a_new_one_by_its_keys_only() {
    let rule = Confirm::default();
    // Stored by a build of format 8: the same bytes without the signature kind's bit.
    let legacy = |blocks: &Blocks| {
        let mut bytes = Vec::new();
        blocks.encode(&mut bytes);
        bytes[4] &= !0x40;
        let (decoded, _) = Blocks::decode(&bytes).unwrap();
        assert!(decoded.legacy && !blocks.legacy);
        decoded
    };
    let (original, copy) = (edited_page(3, false), edited_page(3, true));
    // The same page is found; an edited line is not near a line signed the old way.
    assert!(rule.judge_blocks(&original, &legacy(&original), &[]).1);
    assert!(!rule.judge_blocks(&copy, &legacy(&original), &[]).1);
    // Two profiles of the old kind are compared as before.
    assert!(rule.judge_blocks(&legacy(&copy), &legacy(&original), &[]).1);
}

/// Two pages of a host that share every line but one sentence each, of 10 words on the
/// stored page and 20 on the new one, unrelated: two briefs under a block their host
/// repeats (a table of contents extraction took for both main texts, which are then the
/// same). The new one is not the stored one with a sentence added; it would be with
/// nothing of the stored page's own left over.
#[test]
fn pages_each_with_a_sentence_of_its_own_are_not_one_page_with_a_sentence_added() {
    let rule = Confirm::default();
    let shared = || 100..300;
    let short_story = line(7).split(' ').take(10).collect::<Vec<_>>().join(" ");
    let stored = Blocks::of(
        "a.example",
        &std::iter::once(short_story)
            .chain(shared().map(line))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    let new = page(std::iter::once(9).chain(shared()));
    assert!(!rule.judge_blocks(&new, &stored, &[]).1, "two briefs");
    // The stored page with the 20-word sentence added is its copy.
    let added = page(shared().chain(std::iter::once(9)));
    let without = page(shared());
    assert!(
        rule.judge_blocks(&added, &without, &[]).1,
        "a sentence added"
    );
}
