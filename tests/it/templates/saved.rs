//! Saved pages that give no address and link only into themselves: a book's front page,
//! whose table of contents extraction takes as its main text, carrying a brief above it.

use crawldedup::PageVerdict;

use super::stage;

/// A book's front page as a file: `story` above a table of contents of short relative
/// links, the whole of it inside the book's one container.
fn front_page(story: &str) -> String {
    let toc: String = (1..=40)
        .map(|i| format!("<dt><a href=\"ch{i:02}.html\">第{i}章 設定</a></dt>"))
        .collect();
    format!(
        "<html><body><div class=\"book\"><h1>管理者の手引き</h1><p>{story}</p>\
         <div class=\"toc\"><dl>{toc}</dl></div></div></body></html>"
    )
}

#[test]
fn saved_pages_whose_only_links_are_their_main_texts_are_one_site_and_each_brief_is_kept() {
    let html = front_page("駅前の図書館は来月から開館時間を一時間延ばす。");
    let site = crawldedup::content::extract::extract(&html, None).site;
    assert!(
        site.as_deref().is_some_and(|s| s.starts_with("menu-")),
        "{site:?}"
    );
    let (_dir, stage) = stage(true);
    let briefs = [
        "駅前の図書館は来月から開館時間を一時間延ばす。平日の夜に利用する学生が増えたためだという。",
        "市の公園で春の花まつりが始まった。週末には地元の楽団による演奏会も予定されている。",
        "新しい路線バスの運行が始まり、朝の通勤時間帯は十分おきに走る。運賃は据え置かれた。",
        "港の倉庫を改装した市場が開き、初日は多くの家族連れでにぎわった。魚や野菜が並ぶ。",
        "山あいの小学校で最後の卒業式が開かれ、六人の児童が地域の人々に見送られて巣立った。",
    ];
    // Named by their files, as `crawldedup dedup FILE...` names them: no host in the name.
    for (i, brief) in briefs.iter().enumerate() {
        let verdict = stage
            .check_page(
                &format!("saved/{i:04}.html"),
                front_page(brief).as_bytes(),
                Some("text/html; charset=utf-8"),
            )
            .unwrap();
        assert!(
            matches!(verdict, PageVerdict::Unique { .. }),
            "brief {i}: {verdict:?}"
        );
    }
}

/// A news page as a file with one link, to `/`, and its owner's verification token: `brief`
/// above a long story the template carries on every page (a page kept as served with one
/// paragraph replaced).
fn tokened_page(brief: &str) -> String {
    let story: String = [
        "The harbour board met on Thursday evening to settle the future of the old pier, which has been closed to the public since the winter storms tore away part of its railings.",
        "Engineers told the board that the timber supports are sound but the deck must be replaced within two years, at a cost the town cannot meet from its own budget.",
        "Several fishermen spoke in favour of reopening the lower landing stage as soon as possible, because the boats now have to unload at the far end of the quay.",
        "The board agreed to ask the county for a grant and to publish the engineers' report on its website next week, and the chair said a plan was finally in place.",
        "Residents who walk the promenade every morning said they had missed the view from the end of the pier more than anything else the storms had taken from them.",
        "A local historian reminded the meeting that the pier was built in 1891 with money raised by the town's first rowing club, and that it has been rebuilt twice since.",
    ]
    .iter()
    .map(|s| format!("<p>{s}</p>"))
    .collect();
    format!(
        "<html><head><title>News</title>\
         <meta name=\"facebook-domain-verification\" content=\"z8uwvxzcb1216xdyp\"></head>\
         <body><a href=\"/\">Start</a><article><h1>News from the coast</h1><p>{brief}</p>\
         {story}</article></body></html>"
    )
}

#[test]
fn saved_pages_with_no_address_and_no_links_are_one_site_by_their_owners_token() {
    let site = crawldedup::content::extract::extract(&tokened_page("A brief."), None).site;
    assert!(
        site.as_deref().is_some_and(|s| s.starts_with("meta-")),
        "{site:?}"
    );
    let (_dir, stage) = stage(true);
    let briefs = [
        "The library opens a reading room for the town archive next month, with letters, ship logs and the minutes of the first council, and volunteers will help visitors read them.",
        "The ferry to the island will run twice a day from Monday, after the operator found a second crew; the timetable is posted at the quay and on the council's notice board.",
        "A new bakery opened in the old post office on Market Street, and its owner, who trained in Lyon, said she would bake rye bread from flour milled at the farm up the valley.",
        "The primary school choir won the regional contest in the county hall on Saturday, singing two folk songs and a hymn, and will travel to the national final in the spring.",
    ];
    for (i, brief) in briefs.iter().enumerate() {
        let verdict = stage
            .check_page(
                &format!("saved/news-{i}.html"),
                tokened_page(brief).as_bytes(),
                Some("text/html; charset=utf-8"),
            )
            .unwrap();
        assert!(
            matches!(verdict, PageVerdict::Unique { .. }),
            "brief {i}: {verdict:?}"
        );
    }
}
