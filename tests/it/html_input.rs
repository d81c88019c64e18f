//! `crawldedup dedup` on saved HTML files: each named by the address it gives itself, or put
//! with its site by its links when it gives none, so that a site's template is learned and
//! its briefs are each stored.

use crate::run_cli as cli;
use crate::warc_input::{dedup_json, json_lines};
use cli::crawldedup;

/// An HTML file is named by the address it gives itself, so that two saved articles of one
/// site inside the same rails are compared as pages of that site: both stored, and a copy
/// found against its own file.
#[test]
fn html_files_take_their_url_from_link_rel_canonical_or_og_url() {
    let dir = tempfile::tempdir().unwrap();
    let rail: String = (0..40)
        .map(|i| {
            format!(
                "<p>Teaser {i}: the council met again about the bridge, the harbour budget and \
                 the school roof, and residents wrote in to say what they think of it all.</p>"
            )
        })
        .collect();
    let stories = [
        "A storm closed the ferry line for two days; the harbour master said boats would run again on Friday once the swell has dropped.",
        "The library opens a reading room for the town archive, with letters and ship logs that volunteers catalogued over the winter.",
    ];
    let head = |url: &str, by_og: bool| {
        if by_og {
            format!("<meta property=\"og:url\" content=\"{url}\">")
        } else {
            format!("<link rel=\"canonical\" href=\"{url}\">")
        }
    };
    let page = |url: &str, story: &str, by_og: bool| {
        format!(
            "<html><head>{}</head><body><article><h1>News</h1><p>{story}</p><h3>Latest</h3>{rail}</article></body></html>",
            head(url, by_og)
        )
    };
    let mut files = Vec::new();
    for (i, (story, by_og)) in [(stories[0], false), (stories[1], true), (stories[0], true)]
        .into_iter()
        .enumerate()
    {
        let path = dir.path().join(format!("{i}.html"));
        std::fs::write(
            &path,
            page(&format!("https://news.example/{i}"), story, by_og),
        )
        .unwrap();
        files.push(path.to_str().unwrap().to_string());
    }
    let lines = dedup_json(&files);
    assert_eq!(lines.len(), 3, "{lines:#?}");
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(line["file"], files[i]);
        assert_eq!(line["url"], format!("https://news.example/{i}"));
    }
    assert_eq!(lines[0]["verdict"], "unique");
    assert_eq!(lines[1]["verdict"], "unique", "{}", lines[1]);
    assert_eq!(lines[2]["verdict"], "exact_duplicate", "{}", lines[2]);
    assert_eq!(lines[2]["of"], "https://news.example/0");
    assert_eq!(lines[2]["of_file"], files[0]);
}

/// Saved pages of one site that give themselves no address (no canonical link, no
/// `og:url`, as many Chinese sites serve them) are put with their site by their own links,
/// absolute (a portal's menus) or, with relative links only, by their menus: two briefs
/// inside the same rails are both stored (by their whole text they are near-duplicates),
/// and every file that repeats a page is named against the file it repeats, though all
/// three claim one address.
#[test]
fn saved_pages_without_an_address_are_put_with_their_site_by_their_links() {
    let subjects = [
        "市议会",
        "港务局",
        "图书馆",
        "消防队",
        "博物馆",
        "气象台",
        "农贸市场",
        "公交公司",
    ];
    let topics = ["大桥", "港口预算", "学校屋顶", "渡轮", "旧码头"];
    let rail: String = subjects
        .iter()
        .flat_map(|s| topics.iter().map(move |t| (s, t)))
        .map(|(s, t)| {
            format!("<p>{s}再次讨论{t}的问题，居民纷纷来信表达看法，希望尽快公布结果。</p>")
        })
        .collect();
    let stories = [
        "暴风雨使渡轮停航两天。港务长表示，一旦海浪平息，船只将于周五恢复运行。",
        "图书馆为城市档案开设阅览室。志愿者在冬季整理了信件和航海日志，供市民查阅。",
    ];
    let menu = |absolute: bool| -> String {
        ["首页", "本地新闻", "国际", "体育", "财经", "联系我们"]
            .iter()
            .enumerate()
            .map(|(i, label)| {
                let host = if absolute {
                    "http://www.city-news.example.cn"
                } else {
                    ""
                };
                format!("<li><a href=\"{host}/c/{i}/\">{label}</a></li>")
            })
            .collect()
    };
    for absolute in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let mut files = Vec::new();
        for (i, story) in [stories[0], stories[1], stories[0]].into_iter().enumerate() {
            let path = dir.path().join(format!("{i}.html"));
            let html = format!(
                "<html><head><title>城市新闻</title></head><body><ul class=\"nav\">{}</ul><article><h1>城市新闻</h1><p>{story}</p><h3>专题</h3>{rail}</article></body></html>",
                menu(absolute)
            );
            std::fs::write(&path, html).unwrap();
            files.push(path.to_str().unwrap().to_string());
        }
        let lines = dedup_json(&files);
        assert_eq!(lines.len(), 3, "{lines:#?}");
        assert_eq!(lines[0]["verdict"], "unique", "{}", lines[0]);
        assert_eq!(
            lines[1]["verdict"], "unique",
            "absolute links {absolute}: {}",
            lines[1]
        );
        assert_eq!(lines[2]["verdict"], "exact_duplicate", "{}", lines[2]);
        assert_eq!(lines[2]["of"], files[0]);
        // The site each page was put with.
        let o = crawldedup(&["extract", "--json", &files[0]]);
        let site = json_lines(&o)[0]["site"].as_str().unwrap().to_string();
        if absolute {
            assert_eq!(site, "example.cn");
        } else {
            assert!(
                site.starts_with("menu-") && site.ends_with(".invalid"),
                "{site}"
            );
        }
    }
    // Three files that claim one address: the copy is named against the file it repeats,
    // not the last file stored under that address.
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (i, story) in [stories[0], stories[1], stories[0]].into_iter().enumerate() {
        let path = dir.path().join(format!("{i}.html"));
        let html = format!(
            "<html><head><link rel=\"canonical\" href=\"https://city-news.example.cn/a\"></head><body><article><h1>城市新闻</h1><p>{story}</p><h3>专题</h3>{rail}</article></body></html>"
        );
        std::fs::write(&path, html).unwrap();
        files.push(path.to_str().unwrap().to_string());
    }
    let lines = dedup_json(&files);
    assert_eq!(lines[1]["verdict"], "unique", "{}", lines[1]);
    assert_eq!(lines[2]["verdict"], "exact_duplicate", "{}", lines[2]);
    assert_eq!(lines[2]["of_file"], files[0]);
}

/// Six Chinese briefs in a government site's page as served (`zh-portal-brief.html`: rails
/// of the most read articles, the latest comments and the categories with their counts,
/// under class names that say nothing), saved without any address and without the site's
/// menu, so that no site is known and no template learned: `crawldedup dedup` stores each
/// of them. (When extraction kept the rails, the five after the first were its
/// near-duplicates, similarity 0.73-0.80.)
#[test]
fn chinese_briefs_inside_their_sites_rails_saved_without_an_address_are_each_stored() {
    let template = include_str!("../fixtures/pages/zh-portal-brief.html");
    let menu_start = template.find("<ul class=\"dh\">").unwrap();
    let menu_end = menu_start + template[menu_start..].find("</ul>").unwrap() + "</ul>".len();
    let template = format!("{}{}", &template[..menu_start], &template[menu_end..]);
    let (title, story) = (
        "市图书馆延长周末开放时间",
        "记者从市文化局获悉，市图书馆自下月起将周末开放时间延长至晚上九点。据介绍，此举是为了方便上班族和学生借阅图书。图书馆还将在三楼增设自习座位两百个。",
    );
    let articles = [
        include_str!("../fixtures/cjk/zh-1.txt"),
        include_str!("../fixtures/cjk/zh-2.txt"),
        include_str!("../fixtures/cjk/zh-3.txt"),
        include_str!("../fixtures/cjk/zh-4.txt"),
        include_str!("../fixtures/cjk/zh-5.txt"),
        include_str!("../fixtures/cjk/zh-6.txt"),
    ];
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (i, article) in articles.iter().enumerate() {
        let (headline, body) = article.trim().split_once("\n\n").unwrap();
        // A brief: the article's first two sentences.
        let brief: String = body
            .split_inclusive('。')
            .take(2)
            .collect::<Vec<_>>()
            .concat();
        let page = template.replace(title, headline).replace(story, &brief);
        let path = dir.path().join(format!("{i}.html"));
        std::fs::write(&path, page).unwrap();
        files.push(path.to_str().unwrap().to_string());
    }
    let lines = dedup_json(&files);
    for line in &lines {
        assert_eq!(line["verdict"], "unique", "{line}");
    }
    assert_eq!(lines.len(), 6);
}
