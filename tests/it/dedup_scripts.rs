//! The page stage's promises in every script and on real site shapes: an article with a
//! comment thread appended, a brief with a reader's comment, a brief's copy with a sentence
//! appended, and a tiny text counted as the same number of words whatever its script.

use crawldedup::{Fingerprint, PageVerdict};

use crate::dedup::{OTHER_STORY, STORY, open};

/// A Chinese report of 450 characters (about 265 words, a long article by any count of
/// words) and the same report with a readers' thread appended, nearly as long as it:
/// the copy is the report's near-duplicate by containment, as an English article with its
/// comments is. Its size counts each Han character as the characters of English its share
/// of a word takes, so it is not "short" (under 500 characters it was, and a short text is
/// never confirmed on containment: the two were stored apart).
#[test]
fn a_chinese_article_with_a_comment_thread_is_its_near_duplicate_as_an_english_one_is() {
    let report = include_str!("../fixtures/cjk/zh-4.txt").trim();
    // Readers' comments of 360 characters: the copy's resemblance to the report is 0.48.
    let thread: String = include_str!("../fixtures/cjk/zh-5.txt")
        .chars()
        .take(360)
        .collect();
    assert!(report.chars().count() < 500);
    let fingerprint = Fingerprint::of(report);
    assert!(fingerprint.chars > 1_500, "{}", fingerprint.chars);
    let with_comments = format!("{report}\n\n网友评论\n\n{thread}");
    let dir = tempfile::tempdir().unwrap();
    let dedup = open(dir.path());
    assert!(matches!(
        dedup.check_text("report", report).unwrap(),
        PageVerdict::Unique { .. }
    ));
    match dedup
        .check_text("report-with-comments", &with_comments)
        .unwrap()
    {
        PageVerdict::NearDuplicate { of, similarity, .. } => {
            assert_eq!(of.name, "report");
            // Confirmed on containment: the thread halves the resemblance.
            assert!(similarity.resemblance < 0.5, "{similarity:?}");
        }
        other => panic!("the report with its comments: {other:?}"),
    }
}

/// An article and its variant with readers' comments under it, two pages of one site (as
/// a crawl meets them, `?comments=1`), in Japanese and in English: the variant is the
/// article's near-duplicate, whichever comes first. The comments sit in markup that names
/// nothing ("みんなの声", "What you said"), so extraction keeps them; the pages' lines then
/// give the variant three sentences of its own, more than a sentence or two, all after the
/// article. (They were both stored: the line rule let a page add at most 40 words to one
/// of its site's.)
#[test]
fn an_article_with_comments_appended_is_its_near_duplicate_on_its_own_site_too() {
    let ja_article = include_str!("../fixtures/cjk/ja-4.txt").trim();
    let ja_comments = [
        "とても参考になる記事でした。私の住んでいる町でも同じような取り組みが始まっていて、子どもたちが楽しそうに参加しています。",
        "記事の内容には概ね賛成ですが、予算の使い方についてはもう少し詳しい説明が欲しいと思いました。市の担当者の話も聞いてみたいです。",
        "先週この場所に行ってきました。平日の昼間でも多くの人が訪れていて、とてもにぎやかでした。駐車場が少ないのが残念です。",
    ];
    let en_comments = [
        "Really useful piece, thank you. Our town started something very similar last spring and the children love taking part in it every weekend.",
        "I agree with most of this, but I would have liked a clearer account of how the budget is spent and what the council plans to do next year.",
        "We went there last week on a weekday afternoon and it was already busy. Parking is the only problem, as there are far too few spaces nearby.",
    ];
    let english = format!("Council news\n\n{STORY}");
    for (article, heading, comments) in [
        (ja_article, "みんなの声", ja_comments),
        (english.as_str(), "What you said", en_comments),
    ] {
        let (title, body) = article.split_once("\n\n").unwrap();
        let paragraphs: String = body.split("\n\n").map(|p| format!("<p>{p}</p>")).collect();
        let page = |with_comments: bool| {
            let thread: String = if with_comments {
                let items: String = comments
                    .iter()
                    .enumerate()
                    .map(|(i, c)| format!("<div class=\"item\"><p>reader{i} 2026/03/0{i} 12:3{i}</p><p>{c}</p></div>"))
                    .collect();
                format!("<div class=\"box2\"><h4>{heading}</h4>{items}</div>")
            } else {
                String::new()
            };
            format!(
                "<html><body><nav><a href=\"/\">Home</a></nav><div class=\"kiji\"><h1>{title}</h1>{paragraphs}{thread}</div><footer>(c) 2026</footer></body></html>"
            )
            .into_bytes()
        };
        for commented_first in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let dedup = open(dir.path());
            let (first, second) = if commented_first {
                (true, false)
            } else {
                (false, true)
            };
            let url = |commented: bool| {
                if commented {
                    "https://minato.example.jp/news/1?comments=1"
                } else {
                    "https://minato.example.jp/news/1"
                }
            };
            let verdict = dedup
                .check_page(url(first), &page(first), Some("text/html"))
                .unwrap();
            assert!(matches!(verdict, PageVerdict::Unique { .. }), "{verdict:?}");
            let verdict = dedup
                .check_page(url(second), &page(second), Some("text/html"))
                .unwrap();
            match verdict {
                PageVerdict::NearDuplicate { of, .. } | PageVerdict::ExactDuplicate { of } => {
                    assert_eq!(of.name, url(first))
                }
                other => panic!("{title}, comments first {commented_first}: {other:?}"),
            }
        }
    }
}

/// A brief (a tiny text: fewer than 40 words) and its discussion page, the brief with a
/// reader's comment under it that says it is one ("読者のコメント：...", "Reader comment:
/// ..."), two pages of one site: one page, in either order. A tiny text's page may add at
/// most a sentence of prose to it, and a comment of 17 words, or of 50 Japanese
/// characters, is more than that: both were stored. A second brief is still another page
/// (`a_tiny_text_inside_its_page_in_another_template_is_its_near_duplicate`).
#[test]
fn a_brief_and_its_page_with_a_readers_comment_are_one_page() {
    let cases = [
        (
            "図書館の開館時間が延長されます",
            "市立図書館は来月から、週末の開館時間を午後九時まで延長すると発表した。三階には自習席を二百席増やす予定だ。",
            "読者のコメント：先週末に行ってみましたが、とても静かで勉強しやすかったです。ありがとうございました。",
        ),
        (
            "Library opens longer",
            "The city library will stay open until nine on weekends from next month, the council said. It adds two hundred desks.",
            "Reader comment: I tried this last weekend and it worked well, thank you for writing it up.",
        ),
    ];
    for (title, brief, comment) in cases {
        let page = |with_comment: bool| {
            let comment = if with_comment {
                format!("<p>{comment}</p>")
            } else {
                String::new()
            };
            format!(
                "<html><body><header><a href=\"/\">Home</a></header><main><article><h1>{title}</h1><p>{brief}</p>{comment}<p><a href=\"/next.html\">Next article</a></p></article></main><footer>(c) 2026</footer></body></html>"
            )
            .into_bytes()
        };
        let url = |with_comment: bool| {
            if with_comment {
                "https://town.example/discuss/1"
            } else {
                "https://town.example/a/1"
            }
        };
        for comment_first in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let dedup = open(dir.path());
            let first = dedup
                .check_page(url(comment_first), &page(comment_first), None)
                .unwrap();
            assert!(matches!(first, PageVerdict::Unique { .. }), "{first:?}");
            match dedup
                .check_page(url(!comment_first), &page(!comment_first), None)
                .unwrap()
            {
                PageVerdict::NearDuplicate { of, .. } => assert_eq!(of.name, url(comment_first)),
                other => panic!("{title}, comment first {comment_first}: {other:?}"),
            }
        }
    }
}

/// A brief (a tiny text) and its copy with a sentence of 19 words appended to its
/// paragraph, two pages of one site, are one page; two event pages of that site with
/// another name in the same sentence are two, and so are two product pages with another
/// name in the same words. Tiny texts are compared on their exact shingle sets, where a
/// page may add at most a sentence of 12 words to a brief: the copy was stored again.
/// Pages of one host are now also compared on their lines, where only a sentence appended
/// to a line may differ, never a short line such as a name nor words changed in a sentence.
#[test]
fn a_briefs_copy_with_a_sentence_appended_is_found_on_its_site_and_a_namesake_is_not() {
    let page = |headline: &str, body: &str| {
        format!(
            "<html><body><header><a href=\"/\">Home</a></header><main><article><h1>{headline}</h1><p>{body}</p></article></main><footer>(c) 2026</footer></body></html>"
        )
        .into_bytes()
    };
    let brief = "The harbour council met on Thursday to decide the future of the old ferry pier and agreed to repair the timber deck before summer.";
    let grown = format!(
        "{brief} Residents may send their written views on the plans to the council office before the end of next month."
    );
    let dir = tempfile::tempdir().unwrap();
    let dedup = open(dir.path());
    let first = dedup
        .check_page(
            "https://town.example/a/1",
            &page("Harbour council meets", brief),
            None,
        )
        .unwrap();
    assert!(matches!(first, PageVerdict::Unique { .. }), "{first:?}");
    match dedup
        .check_page(
            "https://town.example/amp/1",
            &page("Harbour council meets", &grown),
            None,
        )
        .unwrap()
    {
        PageVerdict::NearDuplicate { of, .. } => assert_eq!(of.name, "https://town.example/a/1"),
        other => panic!("the brief's copy: {other:?}"),
    }
    let description =
        "A kettle with a filter, a light and a base that turns all the way round for either hand.";
    let event = |name: &str| {
        format!(
            "Join us for {name} at the Harbour Hall on Friday evening, with tickets at the door and a bar from seven."
        )
    };
    for (url, name, body) in [
        (
            "https://town.example/p/blue",
            "Blue kettle 1.7 litres",
            description.to_string(),
        ),
        (
            "https://town.example/p/red",
            "Red kettle 1.7 litres",
            description.to_string(),
        ),
        (
            "https://town.example/e/jazz",
            "Friday at the Hall",
            event("the Jazz Trio"),
        ),
        (
            "https://town.example/e/rock",
            "Friday at the Hall",
            event("the Big Rock Band from Leeds"),
        ),
    ] {
        let verdict = dedup.check_page(url, &page(name, &body), None).unwrap();
        assert!(
            matches!(verdict, PageVerdict::Unique { .. }),
            "{url}: {verdict:?}"
        );
    }
}

/// Thai sentences (farming, seasons, travel): a script written without spaces whose words
/// average 4.5 characters.
const THAI: &str = "ประเทศไทยมีประชากรประมาณเจ็ดสิบล้านคน และเมืองหลวงคือกรุงเทพมหานคร \
    ฤดูฝนเริ่มต้นในเดือนพฤษภาคมและสิ้นสุดในเดือนตุลาคม ชาวนาปลูกข้าวในภาคกลางและภาคตะวันออกเฉียงเหนือ \
    นักท่องเที่ยวจำนวนมากเดินทางมาเที่ยวชายหาดทางภาคใต้ทุกปี รถไฟฟ้าช่วยให้การเดินทางในเมืองสะดวกและรวดเร็วขึ้น \
    ตลาดน้ำเป็นสถานที่ที่ผู้คนนิยมไปซื้ออาหารและผลไม้ในตอนเช้า";

/// The first `n` characters of `text`, and the same with the character at `at` replaced by
/// `by`.
fn cut_and_edit(text: &str, n: usize, at: usize, by: char) -> (String, String) {
    let cut: Vec<char> = text.chars().take(n).collect();
    let mut edited = cut.clone();
    edited[at] = by;
    (cut.into_iter().collect(), edited.into_iter().collect())
}

/// The tiny rule counts words in every script. A text of about 25 words is tiny: a copy
/// with one word changed is another page (a product name or a price in a template is what
/// tells two such pages apart). A text of about 60 words is not: the same change makes a
/// near-duplicate. Both hold in English, Chinese, Japanese, Thai and Korean, though a Han character
/// is a token of the fingerprint and a Chinese text of 50 characters has 49 shingles for
/// its 29 or so words (it was not tiny before the rule counted words).
#[test]
fn a_tiny_text_is_as_many_words_in_every_script() {
    let english_words: Vec<&str> = STORY.split_whitespace().collect();
    let english = |n: usize| {
        let cut = english_words[..n].join(" ");
        let mut edited = english_words[..n].to_vec();
        edited[n / 2] = "lighthouse";
        (cut, edited.join(" "))
    };
    let zh_long = include_str!("../fixtures/cjk/zh-4.txt").trim();
    let ja_long = include_str!("../fixtures/cjk/ja-4.txt").trim();
    let zh_brief = include_str!("../fixtures/cjk/zh-1.txt").trim();
    let ja_brief = include_str!("../fixtures/cjk/ja-1.txt").trim();
    let ko_long = include_str!("../fixtures/cjk/ko-4.txt").trim();
    let ko_brief = include_str!("../fixtures/cjk/ko-1.txt").trim();
    let cases = [
        ("English", english(25), english(60)),
        (
            "Chinese",
            cut_and_edit(zh_brief, 62, 40, '港'),
            cut_and_edit(zh_long, 105, 60, '港'),
        ),
        (
            "Japanese",
            cut_and_edit(ja_brief, 62, 40, '港'),
            cut_and_edit(ja_long, 105, 60, '港'),
        ),
        (
            "Thai",
            cut_and_edit(THAI, 115, 60, 'ก'),
            cut_and_edit(THAI, 280, 150, 'ก'),
        ),
        // Korean spaces its phrases: about 55 syllables (27 words of English) and 125.
        (
            "Korean",
            cut_and_edit(ko_brief, 75, 45, '항'),
            cut_and_edit(ko_long, 165, 100, '항'),
        ),
    ];
    for (script, (brief, brief_edited), (long, long_edited)) in cases {
        assert_ne!(brief, brief_edited, "{script}");
        assert_ne!(long, long_edited, "{script}");
        let dir = tempfile::tempdir().unwrap();
        let dedup = open(dir.path());
        for (name, text) in [("brief", &brief), ("long", &long)] {
            let verdict = dedup.check_text(name, text).unwrap();
            assert!(
                matches!(verdict, PageVerdict::Unique { .. }),
                "{script} {name}: {verdict:?}"
            );
        }
        let verdict = dedup.check_text("brief-edited", &brief_edited).unwrap();
        assert!(
            matches!(verdict, PageVerdict::Unique { .. }),
            "{script}: a tiny text with one word changed is another page: {verdict:?} ({:?})",
            Fingerprint::of(&brief).sketch
        );
        match dedup.check_text("long-edited", &long_edited).unwrap() {
            PageVerdict::NearDuplicate { of, .. } => assert_eq!(of.name, "long", "{script}"),
            other => panic!(
                "{script}: a text of 60 words with one changed is a copy: {other:?} ({:?})",
                Fingerprint::of(&long).sketch
            ),
        }
    }
}

/// A tiny text held whole in a text at most twice its size (a brief's page in another
/// template of its site: its headline and paragraph with a date line between and a footer
/// after, or the brief with a sentence appended) is that text's near-duplicate, in either
/// order; a product page with another name in the same words is not, nor is a longer
/// article that opens with the brief, nor a page of the brief and a second brief.
#[test]
fn a_tiny_text_inside_its_page_in_another_template_is_its_near_duplicate() {
    let words: Vec<&str> = STORY.split_whitespace().collect();
    let brief = format!("Harbour council meets\n\n{}", words[..24].join(" "));
    let mirror = format!(
        "Harbour council meets\n\nPosted 3 November 2026, 08:10\n\n{}\n\nCopyright the Gazette, all rights reserved",
        words[..24].join(" ")
    );
    let article = format!("{brief}\n\n{}", OTHER_STORY);
    let other_name = brief.replace("harbour council", "parish committee");
    // The brief and a second brief on one page, under twice its size: what the page adds is
    // a story of its own (more than a sentence), which a near-duplicate verdict would lose.
    let others: Vec<&str> = OTHER_STORY.split_whitespace().collect();
    let two_briefs = format!("{brief}\n\nBakery opens\n\n{}", others[..18].join(" "));
    // The brief with one sentence appended is still its copy.
    let appended = format!(
        "{brief}\n\nResidents may send their views to the council before the end of the month."
    );
    for (first, second) in [(&brief, &mirror), (&mirror, &brief), (&brief, &appended)] {
        let dir = tempfile::tempdir().unwrap();
        let dedup = open(dir.path());
        assert!(matches!(
            dedup.check_text("first", first).unwrap(),
            PageVerdict::Unique { .. }
        ));
        match dedup.check_text("second", second).unwrap() {
            PageVerdict::NearDuplicate { of, similarity, .. } => {
                assert_eq!(of.name, "first");
                assert_eq!(similarity.containment, 1.0);
            }
            other => panic!("{other:?}"),
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let dedup = open(dir.path());
    assert!(matches!(
        dedup.check_text("brief", &brief).unwrap(),
        PageVerdict::Unique { .. }
    ));
    for (name, text) in [
        ("article", &article),
        ("other-name", &other_name),
        ("two-briefs", &two_briefs),
    ] {
        let verdict = dedup.check_text(name, text).unwrap();
        assert!(
            matches!(verdict, PageVerdict::Unique { .. }),
            "{name}: {verdict:?}"
        );
    }
}
