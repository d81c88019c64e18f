//! Articles whose stories extraction leaves out, under a block their site repeats: told
//! apart by their headlines, while a copy with the same headline is still found.

use crawldedup::PageVerdict;

/// A page of a one-book site as a documentation generator writes it: the page's headline
/// and, in the title page's copyright notice, its story (boilerplate by role, which
/// extraction leaves out), above the book's preface, the same eight paragraphs on every
/// page, which extraction takes for the main text.
fn book_title_page(headline: &str, story: &str) -> String {
    let preface: String = (1..=8)
        .map(|i| {
            format!(
                "<p>第{i}節：この文書は利用者のための手引きであり、システムの設定と管理の方法を\
                 順に説明する。各章の例はそのまま試せるように書かれている。</p>"
            )
        })
        .collect();
    format!(
        "<html><head><title>{headline}</title></head><body><div class=\"book\">\
         <div class=\"titlepage\"><h1 class=\"title\">{headline}</h1>\
         <p class=\"copyright\">{story}</p></div>\
         <div class=\"preface\"><h2>序章</h2>{preface}</div></div></body></html>"
    )
}

/// Three articles of one site, the first site's pages (no template known yet), each with a
/// story extraction leaves out for the preface, so that their main texts are the
/// same: each is stored, as its headline is its own. A copy of the first with the same
/// headline (a tracking parameter) is its exact duplicate.
#[test]
fn articles_whose_main_texts_are_their_sites_preface_are_told_apart_by_headline() {
    let (_dir, stage) = super::stage(true);
    let check = |url: &str, headline: &str, story: &str| {
        stage
            .check_page_extracted(
                url,
                book_title_page(headline, story).as_bytes(),
                Some("text/html; charset=utf-8"),
            )
            .unwrap()
    };
    let articles = [
        (
            "ユーザが入力した文字列を非インクリメンタルモードで検索します。",
            "履歴の検索は入力した文字列で始まる行を探し、見つかった行を表示します。",
        ),
        (
            "まず、コマンド名が特定されます。",
            "コマンドに対して補完仕様が定義されていれば、その仕様が候補の生成に使われます。",
        ),
        (
            "駅前の図書館は来月から開館時間を一時間延ばす。",
            "平日の夜に利用する学生が増えたためだという。",
        ),
    ];
    let mut texts = Vec::new();
    for (i, (headline, story)) in articles.iter().enumerate() {
        let (verdict, extracted) = check(&format!("https://book.example/{i}"), headline, story);
        assert!(
            matches!(verdict, PageVerdict::Unique { .. }),
            "article {i}: {verdict:?}"
        );
        assert!(!extracted.text.contains(story), "{i}: {}", extracted.text);
        texts.push(extracted.text);
    }
    // Extraction left every story out: the three main texts are one.
    assert!(texts.iter().all(|t| *t == texts[0]));
    let (headline, story) = articles[0];
    match check("https://book.example/0?utm_source=feed", headline, story).0 {
        PageVerdict::ExactDuplicate { of } => assert_eq!(of.name, "https://book.example/0"),
        other => panic!("the copy: {other:?}"),
    }
}
