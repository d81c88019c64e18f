//! A Chinese and a Japanese site, each article in every variant a site serves (its page,
//! the page with readers' comments, a mirror in another template, a print version, an AMP
//! copy with its time updated): each article is stored exactly once, and every variant is
//! recorded against it. The articles are briefs of two or three sentences and long
//! reports, on one city's news, so that they share the words of the site and of the
//! language; the templates carry the lists that sites in these languages show beside an
//! article (latest articles, latest comments, categories with counts, tags).

use super::*;

/// One language's site: its articles (title, paragraphs) and its template's words.
struct Language {
    articles: Vec<(String, Vec<String>)>,
    site: &'static str,
    nav: [&'static str; 6],
    latest: &'static str,
    comments_title: &'static str,
    comments: [&'static str; 3],
    categories: &'static str,
    tags: [&'static str; 6],
    date: fn(usize) -> String,
    updated: &'static str,
    footer: &'static str,
}

fn articles(files: &[&str]) -> Vec<(String, Vec<String>)> {
    files
        .iter()
        .map(|text| {
            let mut parts = text.split("\n\n").map(|p| p.trim().to_string());
            let title = parts.next().unwrap();
            (title, parts.filter(|p| !p.is_empty()).collect())
        })
        .collect()
}

fn chinese() -> Language {
    Language {
        articles: articles(&[
            include_str!("../../fixtures/cjk/zh-1.txt"),
            include_str!("../../fixtures/cjk/zh-4.txt"),
            include_str!("../../fixtures/cjk/zh-2.txt"),
            include_str!("../../fixtures/cjk/zh-5.txt"),
            include_str!("../../fixtures/cjk/zh-3.txt"),
            include_str!("../../fixtures/cjk/zh-6.txt"),
        ]),
        site: "城市日报",
        nav: ["首页", "新闻", "社会", "文化", "经济", "图片"],
        latest: "最新文章",
        comments_title: "网友评论",
        comments: [
            "这个消息太好了，支持！",
            "希望相关部门能够说到做到，把好事办好。",
            "上周去看过，确实比以前方便多了。",
        ],
        categories: "<li>本地新闻(1286)</li><li>社会民生(734)</li><li>文化教育(562)</li><li>经济观察(418)</li><li>图片新闻(95)</li>",
        tags: ["城市建设", "民生", "交通", "教育", "文化", "养老"],
        date: |i| format!("2026年11月{}日 08:{:02} 来源：城市日报", 3 + i, 10 + i),
        updated: "更新时间：2026年11月30日 10:40",
        footer: "城市日报社版权所有 未经授权禁止转载 联系电话：0571-88886666 备案号：浙ICP备0000000号",
    }
}

fn japanese() -> Language {
    Language {
        articles: articles(&[
            include_str!("../../fixtures/cjk/ja-1.txt"),
            include_str!("../../fixtures/cjk/ja-4.txt"),
            include_str!("../../fixtures/cjk/ja-2.txt"),
            include_str!("../../fixtures/cjk/ja-5.txt"),
            include_str!("../../fixtures/cjk/ja-3.txt"),
            include_str!("../../fixtures/cjk/ja-6.txt"),
        ]),
        site: "まち新聞",
        nav: ["トップ", "ニュース", "くらし", "文化", "経済", "写真"],
        latest: "新着記事",
        comments_title: "読者のコメント",
        comments: [
            "とても良いニュースですね。応援しています。",
            "週末に家族で行ってみようと思います。",
            "もっと詳しい情報を知りたいです。",
        ],
        categories: "<li>地域ニュース(1286)</li><li>くらし(734)</li><li>文化・教育(562)</li><li>経済(418)</li><li>写真ニュース(95)</li>",
        tags: ["まちづくり", "子育て", "交通", "教育", "文化", "高齢者"],
        date: |i| format!("2026年11月{}日 午前8時{}分 まち新聞", 3 + i, 10 + i),
        updated: "最終更新：2026年11月30日 午前10時40分",
        footer: "まち新聞社 無断転載を禁じます お問い合わせ：03-0000-0000 個人情報の取り扱いについて",
    }
}

/// The variants of article `i`: (path, what it is).
fn variants(i: usize) -> [(String, &'static str); 5] {
    [
        (format!("/a/{i}"), "article"),
        (format!("/a/{i}?comments=1"), "comments"),
        (format!("/m/{i}"), "mirror"),
        (format!("/p/{i}"), "print"),
        (format!("/amp/{i}"), "amp"),
    ]
}

fn paragraphs(ps: &[String]) -> String {
    ps.iter().map(|p| format!("<p>{p}</p>")).collect()
}

/// The home page: a link to every variant of every article.
fn home(lang: &Language) -> String {
    let links: String = (0..lang.articles.len())
        .flat_map(variants)
        .map(|(p, kind)| format!("<li><a href=\"{p}\">{kind}</a></li>"))
        .collect();
    format!(
        "<html><head><meta charset=\"utf-8\"><title>{}</title></head><body><ul>{links}</ul></body></html>",
        lang.site
    )
}

/// The readers' comments under an article.
fn comments_section(lang: &Language) -> String {
    let items: String = lang
        .comments
        .iter()
        .map(|c| format!("<div class=\"comment\"><span class=\"user\">网友</span><p>{c}</p></div>"))
        .collect();
    format!(
        "<section id=\"comments\" class=\"comments\"><h3>{}</h3>{items}</section>",
        lang.comments_title
    )
}

/// The page at `path` (and `query`) of the site in `lang`.
fn respond(lang: &Language, path: &str, query: &str) -> Option<String> {
    let titles: String = lang
        .articles
        .iter()
        .enumerate()
        .map(|(i, (t, _))| format!("<li><a href=\"/a/{i}\">{t}</a></li>"))
        .collect();
    if path == "/" {
        return Some(home(lang));
    }
    let (kind, i) = path.trim_start_matches('/').split_once('/')?;
    let i: usize = i.parse().ok()?;
    let (title, ps) = lang.articles.get(i)?;
    let nav: String = lang
        .nav
        .iter()
        .enumerate()
        .map(|(n, t)| format!("<li><a href=\"/c/{n}\">{t}</a></li>"))
        .collect();
    let tags: String = lang
        .tags
        .iter()
        .map(|t| format!("<a href=\"/tag/{t}\">{t}</a> "))
        .collect();
    let latest_comments: String = lang
        .comments
        .iter()
        .map(|c| format!("<li><a href=\"/a/0?comments=1\">{c}</a></li>"))
        .collect();
    let head = |title: &str| {
        format!(
            "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{title} - {}</title></head><body>",
            lang.site
        )
    };
    Some(match kind {
        "a" => {
            let comments = if query.contains("comments=1") {
                comments_section(lang)
            } else {
                String::new()
            };
            format!(
                "{}<header class=\"site-header\"><a href=\"/\">{}</a><nav><ul>{nav}</ul></nav></header>\
                 <div class=\"main\"><article><h1>{title}</h1><div class=\"meta\">{}</div>{}</article>{comments}</div>\
                 <aside class=\"sidebar\"><h3>{}</h3><ul>{titles}</ul><h3>{}</h3><ul>{latest_comments}</ul>\
                 <h3>分类</h3><ul>{}</ul><div class=\"tags\">{tags}</div></aside>\
                 <footer>{}</footer></body></html>",
                head(title),
                lang.site,
                (lang.date)(i),
                paragraphs(ps),
                lang.latest,
                lang.comments_title,
                lang.categories,
                lang.footer
            )
        }
        "m" => format!(
            "{}<div id=\"top\"><a href=\"/\">{} 手机版</a> | <a href=\"/c/0\">{}</a></div>\
             <div class=\"content\"><h2>{title}</h2><p class=\"time\">{}</p>{}</div>\
             <div class=\"recommend\"><h4>{}</h4><ol>{titles}</ol></div>\
             <div class=\"bottom\">{}</div></body></html>",
            head(title),
            lang.site,
            lang.nav[1],
            (lang.date)(i),
            paragraphs(ps),
            lang.latest,
            lang.footer
        ),
        "p" => format!(
            "{}<h1>{title}</h1><p>{}</p>{}</body></html>",
            head(title),
            (lang.date)(i),
            paragraphs(ps)
        ),
        "amp" => format!(
            "<!DOCTYPE html><html amp><head><meta charset=\"utf-8\"><title>{title}</title></head><body>\
             <header><a href=\"/\">{}</a></header><article><h1>{title}</h1><time>{}</time>{}</article>\
             <footer>{}</footer></body></html>",
            lang.site,
            lang.updated,
            paragraphs(ps),
            lang.footer
        ),
        _ => return None,
    })
}

/// Serves the site in `lang` on loopback; returns its origin.
async fn serve_language(lang: Language) -> String {
    use axum::http::StatusCode;
    use axum::response::{Html, IntoResponse};
    let lang = Arc::new(lang);
    let app = axum::Router::new().fallback(move |uri: axum::http::Uri| {
        let lang = lang.clone();
        async move {
            match uri.path() {
                "/robots.txt" => (StatusCode::OK, "User-agent: *\nAllow: /\n").into_response(),
                path => match respond(&lang, path, uri.query().unwrap_or("")) {
                    Some(page) => Html(page).into_response(),
                    None => StatusCode::NOT_FOUND.into_response(),
                },
            }
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    origin
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_of_chinese_and_japanese_sites_stores_each_article_once_and_each_variant_against_it()
 {
    let (zh, ja) = (chinese(), japanese());
    let counts = (zh.articles.len(), ja.articles.len());
    let origins = [serve_language(zh).await, serve_language(ja).await];
    let dir = tempfile::tempdir().unwrap();
    let (state, out) = (dir.path().join("state"), dir.path().join("out"));
    let mut config = crawl_config(&state, &out, format!("{}/", origins[0]));
    config.crawl.seeds.push(format!("{}/", origins[1]));
    let summary = crawldedup::crawl::crawl(&config, std::future::pending())
        .await
        .unwrap();
    assert_eq!(summary.frontier.pending, 0);
    let pages = lines(&out.join("pages.jsonl"));
    let duplicates = lines(&out.join("duplicates.jsonl"));
    let (stored, by_url) = outcome(&pages, &duplicates);
    let mut wrong = Vec::new();
    for (origin, n) in [(&origins[0], counts.0), (&origins[1], counts.1)] {
        for i in 0..n {
            let urls: Vec<String> = variants(i)
                .iter()
                .map(|(p, _)| format!("{origin}{p}"))
                .collect();
            let kept: Vec<&String> = urls
                .iter()
                .filter(|u| stored.contains_key(u.as_str()))
                .collect();
            if kept.len() != 1 || stored[kept[0].as_str()] != 1 {
                wrong.push(format!("{origin} article {i}: stored as {kept:?}"));
                continue;
            }
            for url in urls.iter().filter(|u| *u != kept[0]) {
                match by_url.get(url.as_str()) {
                    Some(d) if d["of"] == kept[0].as_str() => {}
                    Some(d) => wrong.push(format!("{url}: a duplicate of {}", d["of"])),
                    None => wrong.push(format!("{url}: not recorded as a duplicate")),
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}
