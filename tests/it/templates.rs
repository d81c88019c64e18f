//! A site's template: short articles inside the same rails of other stories are each
//! stored once, edited copies are found against their own original, and the stored text
//! leaves the rails out.

use crawldedup::fingerprint::blocks::block_key;
use crawldedup::fixture::{Article, Site};
use crawldedup::{Config, Dedup, PageVerdict};

/// A news page: the site's menu and footer, and inside the article the story (a brief of
/// at most 350 characters) followed by twelve teaser paragraphs of other stories, the same
/// on every page, with counts that change ("3 days on").
fn news_page(article: &Article, day: usize, story: &str) -> String {
    news_page_with(article, day, story, 12)
}

/// As [`news_page`], with `teasers` teaser paragraphs.
fn news_page_with(article: &Article, day: usize, story: &str, teasers: usize) -> String {
    let rail: String = (0..teasers)
        .map(|i| {
            format!(
                "<p>Headline number {i} about the city council and the new bridge over the \
                 river. Residents argue about the budget of the harbour project and the school \
                 roof, {} days on.</p>",
                day + i
            )
        })
        .collect();
    format!(
        "<html><body><nav>Home News Sport</nav><article><h1>{}</h1><p>{story}</p>\
         <h3>Latest news</h3>{rail}</article><footer>(c) 2026</footer></body></html>",
        article.title
    )
}

fn brief(article: &Article) -> String {
    let brief: String = article.paragraphs[0].chars().take(350).collect();
    brief.trim().to_string()
}

fn stage(templates: bool) -> (tempfile::TempDir, Dedup) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.dedup.host_templates = templates;
    let stage = Dedup::open(dir.path(), &config).unwrap();
    (dir, stage)
}

/// Runs 200 briefs of one site through `stage`: the pages not stored.
fn lost(stage: &Dedup, site: &Site) -> Vec<usize> {
    let mut lost = Vec::new();
    for (i, article) in site.articles().iter().enumerate() {
        let html = news_page(article, i, &brief(article));
        let url = format!("https://news.example/a/{i}");
        let verdict = stage
            .check_page(&url, html.as_bytes(), Some("text/html"))
            .unwrap();
        if !matches!(verdict, PageVerdict::Unique { .. }) {
            lost.push(i);
        }
    }
    lost
}

#[test]
fn briefs_inside_the_same_rails_are_each_stored_once_and_copies_found_against_their_own() {
    let site = Site::without_traps(7, 40);
    assert_eq!(site.articles().len(), 200);
    // Without the site's template, the rails make briefs look alike (the test can fail).
    let (_dir, without) = stage(false);
    let lost_without = lost(&without, &site);
    assert!(!lost_without.is_empty(), "{lost_without:?}");

    let (_dir, with) = stage(true);
    assert_eq!(lost(&with, &site), Vec::<usize>::new());
    let (hosts, blocks) = with.template_size();
    assert_eq!(hosts, 1);
    assert!(blocks > 12, "{blocks}");
    // Copies (the same brief in the rails of another day, its first word in capitals where
    // the script has them) are duplicates of their own original and nothing else. A brief
    // without its rails is a tiny text: one changed word makes it another page (see
    // `dedup::TINY_MIN_RESEMBLANCE`).
    for (i, article) in site.articles().iter().enumerate().skip(8).step_by(9) {
        let text = brief(article);
        let edited = match text.split_once(' ') {
            Some((first, rest)) => format!("{} {rest}", first.to_uppercase()),
            None => text,
        };
        let html = news_page(article, i + 100, &edited);
        let url = format!("https://news.example/copy/{i}");
        match with
            .check_page(&url, html.as_bytes(), Some("text/html"))
            .unwrap()
        {
            PageVerdict::NearDuplicate { of, .. } | PageVerdict::ExactDuplicate { of } => {
                assert_eq!(of.name, format!("https://news.example/a/{i}"), "copy {i}")
            }
            other => panic!("copy {i}: {other:?}"),
        }
    }
}

#[test]
fn the_stored_text_leaves_the_learned_rails_out_unless_asked_to_keep_them() {
    let site = Site::without_traps(3, 4);
    for keep in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::default();
        config.dedup.store_template_text = keep;
        let stage = Dedup::open(dir.path(), &config).unwrap();
        let mut last = String::new();
        for (i, article) in site.articles().iter().enumerate() {
            let html = news_page(article, 0, &brief(article));
            let (verdict, extracted) = stage
                .check_page_extracted(
                    &format!("https://news.example/a/{i}"),
                    html.as_bytes(),
                    Some("text/html"),
                )
                .unwrap();
            assert!(matches!(verdict, PageVerdict::Unique { .. }), "{verdict:?}");
            last = extracted.text;
        }
        let last_brief = brief(site.articles().last().unwrap());
        assert!(last.contains(&last_brief), "{last}");
        assert_eq!(last.contains("Headline number 3"), keep, "{last}");
    }
}

#[test]
fn learned_templates_survive_a_checkpoint_and_a_reopen() {
    let site = Site::without_traps(5, 2);
    let dir = tempfile::tempdir().unwrap();
    {
        let stage = Dedup::open(dir.path(), &Config::default()).unwrap();
        for (i, article) in site.articles().iter().enumerate() {
            let html = news_page(article, 0, &brief(article));
            stage
                .check_page(
                    &format!("https://news.example/a/{i}"),
                    html.as_bytes(),
                    None,
                )
                .unwrap();
        }
        stage.checkpoint().unwrap();
    }
    let stage = Dedup::open(dir.path(), &Config::default()).unwrap();
    assert_eq!(stage.template_size().0, 1);
    let article = &site.articles()[0];
    let html = news_page(
        article,
        0,
        "A brief of a new story about a fire at the harbour.",
    );
    let (_, extracted) = stage
        .check_page_extracted("https://news.example/new", html.as_bytes(), None)
        .unwrap();
    assert!(
        !extracted.text.contains("Headline number"),
        "{}",
        extracted.text
    );
}

/// The first pages of a host are decided before its template is known: they are compared
/// on their lines, what the two pages share exactly (the rails) left out, so that two
/// different stories are two pages from the start, and an edited copy of an early page is
/// still found against it.
#[test]
fn the_first_two_pages_of_a_site_with_different_stories_are_both_stored() {
    let site = Site::without_traps(11, 4);
    let articles = site.articles();
    let long = |a: &Article| a.paragraphs[..3].join("</p><p>");
    let (_dir, stage) = stage(true);
    let decide = |url: &str, html: String| {
        stage
            .check_page(url, html.as_bytes(), Some("text/html"))
            .unwrap()
    };
    for (i, article) in articles.iter().take(4).enumerate() {
        let story = if i < 2 { brief(article) } else { long(article) };
        let verdict = decide(
            &format!("https://first.example/a/{i}"),
            news_page_with(article, i, &story, 40),
        );
        assert!(
            matches!(verdict, PageVerdict::Unique { .. }),
            "page {i}: {verdict:?}"
        );
    }
    // The third page again, three words changed, in the rails of another day.
    let story = long(&articles[2]);
    let mut words: Vec<&str> = story.split(' ').collect();
    for at in [5, 12, 19] {
        words[at] = "altered";
    }
    let verdict = decide(
        "https://first.example/copy/2",
        news_page_with(&articles[2], 9, &words.join(" "), 40),
    );
    match verdict {
        PageVerdict::NearDuplicate { of, .. } => assert_eq!(of.name, "https://first.example/a/2"),
        other => panic!("the copy: {other:?}"),
    }
}

/// A journal's page: a short abstract (`story`) beside the journal's notice to its
/// readers, the same eight paragraphs (1,900 characters) on every page, which extraction
/// takes for the main text over an abstract of at most 350 characters.
fn journal_page(story: &str) -> String {
    let notice: String = (1..=8)
        .map(|i| {
            format!(
                "<p>Notice {i}: the journal publishes original research, reviews and letters \
                 on influenza and vaccination, read by clinicians in many countries, and asks \
                 its authors to declare every interest before review.</p>"
            )
        })
        .collect();
    format!(
        "<html><body><nav><a href=\"/\">Home</a> <a href=\"/issues\">Issues</a></nav>\
         <div class=\"abstract\"><h2>Abstract</h2><p>{story}</p></div>\
         <div class=\"notice\"><h2>To our readers</h2>{notice}</div>\
         <footer>(c) 2026 The Journal</footer></body></html>"
    )
}

/// Six different abstracts of a journal, each shorter than the reference list its site
/// repeats on every page, which extraction takes for their main text: each abstract is
/// stored, and once the list is the host's template the abstract is what is stored.
#[test]
fn a_brief_shorter_than_a_block_its_site_repeats_is_never_lost_to_it() {
    let site = Site::new(7, 6);
    let (_dir, stage) = stage(true);
    for (i, article) in site.articles().iter().enumerate() {
        let story = brief(article);
        let html = journal_page(&story);
        let url = format!("https://journal.example/doi/{i}");
        let (verdict, extracted) = stage
            .check_page_extracted(&url, html.as_bytes(), Some("text/html"))
            .unwrap();
        assert!(
            matches!(verdict, PageVerdict::Unique { .. }),
            "abstract {i}: {verdict:?}"
        );
        // Extraction took the notice for the main text of the first pages (it did for the
        // first); from the fifth on, the notice is the host's template and the abstract is
        // what is stored.
        if i >= 4 {
            assert!(extracted.text.contains(&story), "{i}: {}", extracted.text);
            assert!(
                !extracted.text.contains("Notice 1"),
                "{i}: {}",
                extracted.text
            );
        }
    }
    let first = journal_page(&brief(&site.articles()[0]));
    let extracted = crawldedup::content::extract(&first, None);
    assert!(
        extracted.text.starts_with("To our readers"),
        "{}",
        extracted.text
    );
}

/// The first 25 words of an article: a brief too short for its sketch to be compared
/// (a tiny text).
fn tiny_brief(article: &Article) -> String {
    let words: Vec<&str> = article.paragraphs[0].split_whitespace().take(25).collect();
    format!("{}.", words.join(" ").trim_end_matches('.'))
}

/// The first pages of a site are stored with their rails, before the site's template is
/// known; a copy that comes once it is (the brief with a sentence appended) is compared
/// on its brief alone, which a sketch cannot find inside a page seventy times its size:
/// the copy is found against its own original by their lines, because the two pages'
/// whole texts are alike, and a new brief in the same rails is still a page of its own.
#[test]
fn a_briefs_copy_is_found_against_its_original_stored_before_the_sites_template_was_known() {
    let site = Site::without_traps(11, 4);
    let articles = site.articles();
    let (_dir, stage) = stage(true);
    let check = |url: &str, html: &str| {
        stage
            .check_page(url, html.as_bytes(), Some("text/html"))
            .unwrap()
    };
    // Two briefs while the site has no template, then six more, which teach it its rails.
    for (i, article) in articles.iter().enumerate().take(8) {
        let html = news_page_with(article, 0, &tiny_brief(article), 120);
        let verdict = check(&format!("https://news.example/a/{i}"), &html);
        assert!(
            matches!(verdict, PageVerdict::Unique { .. }),
            "{i}: {verdict:?}"
        );
    }
    assert!(stage.template_size().1 > 12, "{:?}", stage.template_size());
    for (i, article) in articles.iter().enumerate().take(2) {
        let edited = format!(
            "{} A reader wrote to add that the figures were confirmed later.",
            tiny_brief(article)
        );
        let html = news_page_with(article, 0, &edited, 120);
        match check(&format!("https://news.example/copy/{i}"), &html) {
            PageVerdict::NearDuplicate { of, .. } => {
                assert_eq!(of.name, format!("https://news.example/a/{i}"), "copy {i}")
            }
            other => panic!("copy {i}: {other:?}"),
        }
    }
    let article = &articles[9];
    let html = news_page_with(article, 0, &tiny_brief(article), 120);
    let verdict = check("https://news.example/a/9", &html);
    assert!(matches!(verdict, PageVerdict::Unique { .. }), "{verdict:?}");
}

/// A brief's text as extraction may give it on one page of a site and not on another: its
/// headline and two paragraphs, then, when `rail` holds lines, the site's rail of other
/// stories that extraction took with it.
fn brief_with_rail(article: &Article, second: &str, rail: &[String]) -> String {
    let mut text = format!("{}\n\n{}\n\n{second}", article.title, tiny_brief(article));
    for line in rail {
        text.push_str("\n\n");
        text.push_str(line);
    }
    text
}

/// Extraction takes a page's rails with a short story on one page and the story alone on
/// another of the same template (a brief one sentence longer is enough). A copy whose main
/// text is its story is then unlike its original stored with the rails: no key of either
/// finds the other. A short page is also compared with its host's last pages, and one that
/// shares a sentence with it is judged on their lines: the copy is found against its own
/// original, and a new brief beside the same rails is a page of its own.
#[test]
fn a_short_copy_is_found_against_its_original_stored_with_the_sites_rails() {
    let site = Site::without_traps(12, 4);
    let articles = site.articles();
    let rail: Vec<String> = (0..40)
        .map(|i| {
            format!(
                "Headline number {i} about the council and the bridge: residents argue over \
                 the budget of the harbour project and the school roof."
            )
        })
        .collect();
    let second = |article: &Article| -> String {
        let words: Vec<&str> = article.paragraphs[1].split_whitespace().take(12).collect();
        format!("{}.", words.join(" ").trim_end_matches('.'))
    };
    let (_dir, stage) = stage(true);
    for (i, article) in articles.iter().enumerate().take(2) {
        let text = brief_with_rail(article, &second(article), &rail);
        let verdict = stage
            .check_text(&format!("https://news.example/a/{i}"), &text)
            .unwrap();
        assert!(
            matches!(verdict, PageVerdict::Unique { .. }),
            "{i}: {verdict:?}"
        );
    }
    let appended = format!(
        "{} A reader wrote to add that the figures were confirmed later.",
        second(&articles[0])
    );
    let copy = brief_with_rail(&articles[0], &appended, &[]);
    match stage
        .check_text("https://news.example/copy/0", &copy)
        .unwrap()
    {
        PageVerdict::NearDuplicate { of, .. } => assert_eq!(of.name, "https://news.example/a/0"),
        other => panic!("the copy: {other:?}"),
    }
    // A new brief alone, and one that repeats a sentence of the rail, are pages of their own.
    let alone = brief_with_rail(&articles[2], &second(&articles[2]), &[]);
    let verdict = stage
        .check_text("https://news.example/a/2", &alone)
        .unwrap();
    assert!(matches!(verdict, PageVerdict::Unique { .. }), "{verdict:?}");
    let quoting = brief_with_rail(&articles[3], &second(&articles[3]), &rail[..1]);
    let verdict = stage
        .check_text("https://news.example/a/3", &quoting)
        .unwrap();
    assert!(matches!(verdict, PageVerdict::Unique { .. }), "{verdict:?}");
}

/// A Japanese page of the site: menu, headline, the story's paragraph, footer.
fn japanese_page(headline: &str, story: &str) -> String {
    format!(
        "<html><body><nav>ホーム ニュース 暮らし 天気</nav><article><h1>{headline}</h1>\
         <p>{story}</p></article><footer>このサイトについて 著作権</footer></body></html>"
    )
}

/// A tiny Japanese brief of two short sentences, stored as its site's first page, and its
/// copy with a sentence appended that is as long as each of them: the line grows by more
/// than half, so its signature is far from the line's, but the two pages' exact shingle
/// sets hold the brief whole in the copy, which is then found against its own original.
/// A namesake (one word of the brief changed, the same sentence appended) is another page.
#[test]
fn a_tiny_briefs_copy_with_a_sentence_as_long_as_itself_appended_is_found() {
    let (_dir, stage) = stage(true);
    let check = |url: &str, headline: &str, story: &str| {
        stage
            .check_page(
                url,
                japanese_page(headline, story).as_bytes(),
                Some("text/html; charset=utf-8"),
            )
            .unwrap()
    };
    let brief = "テキストはファイル名として扱われます。テキストはユーザ名として扱われます。";
    let added = "読者から、これらの数字は後に確認されたとの連絡があった。";
    let others = [
        "駅前の図書館は来月から開館時間を一時間延ばす。平日の夜に利用する学生が増えたためだという。",
        "市の公園で春の花まつりが始まった。週末には地元の楽団による演奏会も予定されている。",
        "新しい路線バスの運行が始まり、朝の通勤時間帯は十分おきに走る。運賃は据え置かれた。",
        "港の倉庫を改装した市場が開き、初日は多くの家族連れでにぎわった。魚や野菜が並ぶ。",
    ];
    let verdict = check("https://jp.example/a/0", "お知らせ", brief);
    assert!(matches!(verdict, PageVerdict::Unique { .. }), "{verdict:?}");
    for (i, story) in others.iter().enumerate() {
        let verdict = check(
            &format!("https://jp.example/a/{}", i + 1),
            "お知らせ",
            story,
        );
        assert!(
            matches!(verdict, PageVerdict::Unique { .. }),
            "{i}: {verdict:?}"
        );
    }
    match check(
        "https://jp.example/copy/0",
        "お知らせ",
        &format!("{brief}{added}"),
    ) {
        PageVerdict::NearDuplicate { of, .. } => assert_eq!(of.name, "https://jp.example/a/0"),
        other => panic!("the copy: {other:?}"),
    }
    let namesake = brief.replace("ユーザ名", "グループ名");
    let verdict = check(
        "https://jp.example/a/5",
        "お知らせ",
        &format!("{namesake}{added}"),
    );
    assert!(matches!(verdict, PageVerdict::Unique { .. }), "{verdict:?}");
}

/// A page of a one-book site: a brief above the book's table of contents of 600 entries,
/// each long enough to be a sentence (about ten words of Japanese).
fn book_page(story: &str) -> String {
    let toc: String = book_contents()
        .iter()
        .map(|entry| format!("<dt><a href=\"ch.html\">{entry}</a></dt>"))
        .collect();
    format!(
        "<html><body><div class=\"book\"><h1>Debian リファレンス</h1><p>{story}</p>\
         <div class=\"toc\"><p><b>目次</b></p><dl>{toc}</dl></div></div></body></html>"
    )
}

/// The entries of [`book_page`]'s table of contents.
fn book_contents() -> Vec<String> {
    let (a, b, c) = (
        [
            "ネットワーク",
            "パッケージ",
            "ファイル",
            "ユーザー",
            "プリンター",
            "ディスク",
            "カーネル",
            "シェル",
        ],
        [
            "設定", "管理", "確認", "更新", "削除", "保存", "検索", "復元",
        ],
        [
            "基本的な方法",
            "よくある問題",
            "便利な使い方",
            "注意すべき点",
            "最初の手順",
            "古い設定",
            "新しい機能",
            "安全な運用",
            "速い処理",
            "小さな工夫",
        ],
    );
    (0..600)
        .map(|i| {
            format!(
                "{}の{}と{}の{}",
                a[i % 8],
                b[i / 8 % 8],
                c[i / 64 % 10],
                a[(i / 8 + i) % 8]
            )
        })
        .collect()
}

/// A brief stored as its site's first page, under a table of contents of more lines than a
/// profile keeps, then the copy of it with a sentence appended, once the site's template is
/// known: the brief is among the longest lines of its page, so its profile keeps it
/// (a sample by key dropped it among the entries of lower keys), and the copy is found
/// against it.
#[test]
fn a_briefs_copy_is_found_against_its_first_page_stored_under_a_large_table_of_contents() {
    let (_dir, stage) = stage(true);
    let check = |url: &str, story: &str| {
        stage
            .check_page(
                url,
                book_page(story).as_bytes(),
                Some("text/html; charset=utf-8"),
            )
            .unwrap()
    };
    // A brief whose line key is above the 256 lowest of the page's: a sample by key would
    // leave it out.
    let mut toc_keys: Vec<u32> = book_contents()
        .iter()
        .filter_map(|entry| block_key(entry))
        .collect();
    toc_keys.sort_unstable();
    let brief = [
        "実行ファイルです。",
        "実行ファイルの順です。",
        "外部コマンドです。",
        "関数です。",
    ]
    .iter()
    .map(|end| {
        format!(
            "テキストはコマンド名として扱います。コマンド補完の際にマッチングを試みる\
                 順序は、エイリアス、予約語、シェル関数、シェルの組み込みコマンド、{end}"
        )
    })
    .find(|brief| block_key(brief).is_some_and(|key| key > toc_keys[255]))
    .expect("a brief past the lowest keys");
    let brief = brief.as_str();
    let added = "読者から、これらの数字は後に確認されたとの連絡があった。";
    let verdict = check("https://book.example/0", brief);
    assert!(matches!(verdict, PageVerdict::Unique { .. }), "{verdict:?}");
    let others = [
        "駅前の図書館は来月から開館時間を一時間延ばす。平日の夜に利用する学生が増えたためだという。",
        "市の公園で春の花まつりが始まった。週末には地元の楽団による演奏会も予定されている。",
        "新しい路線バスの運行が始まり、朝の通勤時間帯は十分おきに走る。運賃は据え置かれた。",
        "港の倉庫を改装した市場が開き、初日は多くの家族連れでにぎわった。魚や野菜が並ぶ。",
    ];
    for (i, story) in others.iter().enumerate() {
        let verdict = check(&format!("https://book.example/{}", i + 1), story);
        assert!(
            matches!(verdict, PageVerdict::Unique { .. }),
            "{i}: {verdict:?}"
        );
    }
    match check("https://book.example/copy/0", &format!("{brief}{added}")) {
        PageVerdict::NearDuplicate { of, .. } => assert_eq!(of.name, "https://book.example/0"),
        other => panic!("the copy: {other:?}"),
    }
}

/// Articles told apart by their headlines.
mod headlines;
/// Saved pages without an address.
mod saved;
/// Short briefs whose copies no key finds.
mod short;
