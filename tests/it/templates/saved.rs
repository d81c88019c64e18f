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
