//! A story and what sits around it: short stories, block kinds, reviews, comments,
//! metadata lines, mega menus and rails.

use super::*;

/// Each class of boilerplate that sites serve around a short story (see
/// `crawldedup::fixture::Leak`), on 20 pages each: the story is kept whole and none of the
/// block's text is.
#[test]
fn boilerplate_around_a_short_story_is_left_out_by_what_it_looks_like() {
    use crawldedup::fixture::{Leak, leak_page};
    let mut faults = Vec::new();
    for leak in Leak::ALL {
        for i in 0..20 {
            let page = leak_page(leak, 11, i);
            let out = extract(&page.html, None);
            if !out.text.contains(&page.story) {
                faults.push(format!(
                    "{leak:?} page {i}: the story is missing from {:?}",
                    out.text
                ));
            }
            for piece in &page.boilerplate {
                if out.text.contains(piece.as_str()) {
                    faults.push(format!("{leak:?} page {i}: kept {piece:?}"));
                }
            }
        }
    }
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

/// Every block of the main text carries a kind, and the text is the same with or without
/// them: one kind per blank-line-separated block, on every fixture page.
#[test]
fn each_block_of_the_text_says_what_it_is() {
    use crawldedup::content::BlockKind;
    let names = [
        "article",
        "forum",
        "documentation",
        "product",
        "service",
        "listing",
        "collection",
    ];
    for name in names {
        let out = fixture(name);
        assert_eq!(
            out.blocks.len(),
            out.text.split("\n\n").count(),
            "{name}: {:?}\n{}",
            out.blocks,
            out.text
        );
    }
    let out = fixture("article");
    let kinds: Vec<(String, BlockKind)> = out
        .blocks_with_kinds()
        .map(|(b, k)| (b.to_string(), k))
        .collect();
    assert!(
        kinds
            .iter()
            .any(|(b, k)| b.starts_with("- ") && *k == BlockKind::List),
        "{kinds:?}"
    );
    assert!(
        kinds
            .iter()
            .all(|(b, k)| b.starts_with("- ") || *k == BlockKind::Story),
        "{kinds:?}"
    );
    // A listing's links are a list.
    let listing = fixture("listing");
    assert!(
        listing.blocks.contains(&BlockKind::List),
        "{:?}",
        listing.blocks
    );
}

#[test]
fn customer_reviews_under_a_product_are_dropped() {
    let review = |i: usize| {
        format!(
            "<div class=\"review-item\"><h4>Sturdy and quiet, review {i}</h4><p>I bought this \
             for my study and it has held up well for a year of daily use, number {i}.</p></div>"
        )
    };
    let reviews: String = (0..2).map(review).collect();
    let description = "<h1>Oak standing desk</h1><p>A standing desk with a solid oak top and a \
        steel frame. Two motors lift it from 62 to 127 cm in under twenty seconds, and four \
        memory buttons keep your favourite heights.</p><p>Top 140 by 70 cm, load up to 120 kg. \
        Ships flat in two boxes; assembly takes about half an hour with the tools included.</p>";
    // Marked by class words.
    let html = format!(
        "<html><body><div class=\"product\">{description}</div>\
         <div class=\"product-reviews__list\">{reviews}</div></body></html>"
    );
    let out = extract(&html, None);
    assert_has(&out, &["solid oak top", "Ships flat"]);
    assert_lacks(&out, &["Sturdy and quiet", "daily use"]);
    // Marked only by their heading, with a count before it.
    let html = format!(
        "<html><body><div class=\"product\">{description}</div>\
         <div class=\"block\"><h2>12 Customer Reviews</h2><div>{}</div></div></body></html>",
        reviews.replace("review-item", "item")
    );
    let out = extract(&html, None);
    assert_has(&out, &["solid oak top", "Ships flat"]);
    assert_lacks(&out, &["Sturdy and quiet", "Customer Reviews"]);
    // A page of reviews is its reviews.
    let page: String = (0..12).map(review).collect();
    let out = extract(
        &format!(
            "<html><body><h1>Reviews of the oak desk</h1><div class=\"reviews\">{page}</div></body></html>"
        ),
        None,
    );
    assert_has(&out, &["Sturdy and quiet, review 0", "number 11"]);
}

/// Readers' comments that only their heading names ("124 Reader Comments", "Leave a
/// reply") go on a page built around an `article`; on a thread without one they are the
/// posts.
#[test]
fn comments_named_by_their_heading_go_beside_an_article() {
    let comments: String = (0..4)
        .map(|i| {
            format!(
                "<div class=\"c\"><p>Reader {i} writes: I tried this at home and the \
                 second step took me much longer than the article suggests.</p></div>"
            )
        })
        .collect();
    let story = "<h1>Proofing bread in a cold oven</h1><p>A cold oven with the light on \
        holds a steady warmth that suits a slow rise, and the dough keeps its shape better \
        than on a sunny windowsill. Leave it for two hours and check it with a floured \
        finger: the dent should spring back slowly.</p>";
    let html = format!(
        "<html><body><article>{story}</article><div class=\"x\"><h3>4 Reader Comments</h3>\
         <div>{comments}</div></div></body></html>"
    );
    let out = extract(&html, None);
    assert_has(&out, &["steady warmth", "spring back slowly"]);
    assert_lacks(&out, &["Reader Comments", "Reader 2 writes"]);
    // Without an article, the same block is the thread's replies.
    let thread = html
        .replace("<article>", "<div>")
        .replace("</article>", "</div>");
    assert_has(&extract(&thread, None), &["Reader 2 writes"]);
}

#[test]
fn article_metadata_lines_are_dropped_and_dates_in_content_stay() {
    let html = "<html><body><article><h1>Proofing bread in a cold oven</h1>\
        <div class=\"meta\"><span>March 3, 2026</span></div><div>5 min read</div>\
        <p>Updated on March 4, 2026</p>\
        <p>A cold oven with the light on holds a steady warmth that suits a slow rise. \
        The method was first written down on March 3, 2026, in a baker's notebook.</p>\
        <ul><li>12 May 2026: open day at the bakery</li><li>2026-06-01</li></ul>\
        <table><tr><td>Batch</td><td>2026-03-03</td></tr></table>\
        </article></body></html>";
    let out = extract(html, None);
    assert_has(
        &out,
        &[
            "steady warmth",
            "written down on March 3, 2026",
            "12 May 2026: open day",
            "Batch | 2026-03-03",
        ],
    );
    for line in out.text.lines() {
        assert!(
            ![
                "March 3, 2026",
                "5 min read",
                "Updated on March 4, 2026",
                "- 2026-06-01"
            ]
            .contains(&line.trim()),
            "a metadata line kept: {line:?}\n{}",
            out.text
        );
    }
}

/// The story between its markers, whole, and nothing of `unwanted`.
fn assert_story_alone(name: &str, unwanted: &[&str]) -> Extracted {
    let out = fixture(name);
    assert!(
        out.text.contains("STORYSTART"),
        "{name}: the story is missing:\n{}",
        out.text
    );
    assert!(
        out.text.contains("STORYEND"),
        "{name}: the story is cut:\n{}",
        out.text
    );
    assert_lacks(&out, unwanted);
    out
}

#[test]
fn a_comment_thread_longer_than_the_story_is_not_the_content() {
    // Three times the story's length, in comment classes, without a heading: the page
    // declares an article and the thread follows the story's prose.
    let out = assert_story_alone(
        "news-comments",
        &[
            "hours ago",
            "rivergazer",
            "Permalink",
            "8 comments",
            "Copyright",
        ],
    );
    assert!(out.text.split_whitespace().count() < 400, "{}", out.text);
    // Headed as responses ("8 Responses to ..."), in plain markup with no class words.
    assert_story_alone(
        "blog-comments",
        &["Responses to", "said on March", "Leave a Reply", "Reply"],
    );
}

#[test]
fn a_thread_that_declares_itself_a_discussion_keeps_its_replies() {
    // A long first post, then replies in comment classes: the structured data says this
    // is a forum thread, so the replies are content.
    let out = fixture("forum-long-first-post");
    assert_has(&out, &["FIRSTPOST", "REPLY0", "REPLY4"]);
    assert_lacks(&out, &["Log in", "Joined 2019"]);
}

#[test]
fn a_mega_menu_before_a_short_article_is_not_the_content() {
    // Six sections of twelve links in a plain div, more text than the article under them.
    let out = assert_story_alone("news-megamenu", &["Sport", "Culture", "Weather"]);
    assert!(out.text.split_whitespace().count() < 250, "{}", out.text);
}

#[test]
fn a_rail_of_more_stories_after_the_article_goes() {
    // Seven teasers (a linked headline, a byline and time, a first sentence) under a
    // heading that names no recommendation.
    assert_story_alone(
        "news-rails",
        &["From the newsroom", "hours ago", "By Ann K."],
    );
}

/// A Chinese government site's brief and a Japanese blog's, beside rails whose class names
/// say nothing (`r_box`, `rmwz`, `side-col`) but whose headings do ("热门文章", "最新评论",
/// "文章分类", "相关阅读"; "最近の投稿", "最近のコメント", "カテゴリー", "アーカイブ"): the
/// brief alone, without the rails, the publication line, the links to the articles before
/// and after it, the editor, the controls or the rights notice. (Extraction that knew only
/// European headings kept the latest posts, the latest comments and the categories with
/// their counts under the brief, so that two briefs of a site were alike by their rails.)
#[test]
fn a_chinese_or_japanese_brief_beside_its_sites_rails_is_the_brief_alone() {
    let zh = fixture("zh-portal-brief");
    assert_eq!(
        zh.text,
        "市图书馆延长周末开放时间\n\n记者从市文化局获悉，市图书馆自下月起将周末开放时间延长至晚上九点。\
         据介绍，此举是为了方便上班族和学生借阅图书。图书馆还将在三楼增设自习座位两百个。"
    );
    let ja = fixture("ja-blog-brief");
    assert_eq!(
        ja.text,
        "図書館の開館時間が延長されます\n\n市立図書館は来月から、週末の開館時間を午後九時まで延長すると発表した。\
         仕事帰りの人や学生が利用しやすくするためで、三階には自習席を二百席増やす予定だという。"
    );
}
