//! The templates of the evaluation: article pages as served, with where their main
//! paragraphs are, from WCXB dev (by its ground truth) and from the boilerplate development
//! set (by its snippets); and a page made from a template.

use std::collections::HashSet;
use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result};
use regex::Regex;

/// A template: its host, its HTML (UTF-8), and where its main paragraphs are.
#[derive(Clone)]
pub struct Template {
    pub host: String,
    pub html: String,
    /// Byte ranges of the inner HTML of the main-content blocks, in document order.
    pub paragraphs: Vec<(usize, usize)>,
    /// Where the new text goes: the range of the longest main-content `<p>`, surely in the
    /// story's body (a breadcrumb item that repeats the title, or a byline, may come before
    /// it).
    pub first_p: usize,
}

/// Lower case, typographic quotes and dashes read as plain ones, whitespace collapsed.
pub fn normalise(text: &str) -> String {
    let plain: String = text
        .chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{201b}' | '\u{2032}' => '\'',
            '\u{201c}' | '\u{201d}' | '\u{201f}' | '\u{2033}' => '"',
            '\u{2013}' | '\u{2014}' | '\u{2212}' => '-',
            c => c,
        })
        .collect();
    plain
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Templates from WCXB dev (see the example's documentation), and every ground-truth text.
pub fn load(
    dataset: &Path,
    limit: usize,
    hosts: &mut HashSet<String>,
) -> Result<(Vec<Template>, Vec<String>)> {
    let files = super::wcxb::files(dataset)?;
    // Blocks of text: paragraphs, list items, headings under the title, quotes, captions.
    let blocks = [
        Regex::new(r"(?is)<p\b[^>]*>(.*?)</p>")?,
        Regex::new(r"(?is)<li\b[^>]*>(.*?)</li>")?,
        Regex::new(r"(?is)<h[2-6]\b[^>]*>(.*?)</h[2-6]>")?,
        Regex::new(r"(?is)<blockquote\b[^>]*>(.*?)</blockquote>")?,
        Regex::new(r"(?is)<figcaption\b[^>]*>(.*?)</figcaption>")?,
    ];
    let tags = Regex::new(r"(?s)<[^>]+>")?;
    let mut templates = Vec::new();
    let mut texts = Vec::new();
    let mut ids: Vec<&String> = files.keys().collect();
    ids.sort();
    for id in ids {
        let info = &files[id];
        if info["page_type"] != "article" {
            continue;
        }
        let (bytes, reference) = super::wcxb::page(dataset, id)?;
        let url = info["url"].as_str().unwrap_or("");
        let html = crawldedup::content::decode::decode(&bytes, None, Some(url)).text;
        texts.push(reference.clone());
        let reference = normalise(&reference);
        let mut paragraphs: Vec<(usize, usize)> = Vec::new();
        let mut covered = 0usize;
        let mut first_p = None;
        for (kind, pattern) in blocks.iter().enumerate() {
            for c in pattern.captures_iter(&html) {
                let Some(inner) = c.get(1) else { continue };
                // Entities decoded as a browser would (the ground truth holds the characters).
                let fragment =
                    scraper::Html::parse_fragment(&tags.replace_all(inner.as_str(), " "));
                let text = normalise(&fragment.root_element().text().collect::<String>());
                let nested = paragraphs
                    .iter()
                    .any(|&(s, e)| s < inner.end() && inner.start() < e);
                if text.len() >= 20 && reference.contains(&text) && !nested {
                    paragraphs.push((inner.start(), inner.end()));
                    covered += text.len();
                    if kind == 0 && first_p.is_none_or(|(_, len)| text.len() > len) {
                        first_p = Some((inner.start(), text.len()));
                    }
                }
            }
        }
        paragraphs.sort();
        // Only templates whose main content was found nearly whole: what is left of it
        // would be shared by every page made from the template.
        if (covered as f64) < 0.9 * reference.len() as f64 {
            continue;
        }
        let Some(host) = url::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(String::from))
        else {
            continue;
        };
        let Some(first_p) = first_p.and_then(|(s, _)| paragraphs.iter().position(|p| p.0 == s))
        else {
            continue;
        };
        if paragraphs.len() >= 2 && hosts.insert(host.clone()) && templates.len() < limit {
            templates.push(Template {
                host,
                html,
                paragraphs,
                first_p,
            });
        }
    }
    Ok((templates, texts))
}

/// Templates from the boilerplate development set (`evaldata.json`: per page, snippets its
/// main content must contain): the main content is taken to be every `<p>` from the first
/// to the last one that holds a snippet (at least two of them), one template per host.
pub fn load_boilerplate_set(
    dataset: &Path,
    limit: usize,
    hosts: &mut HashSet<String>,
) -> Result<Vec<Template>> {
    let pages: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dataset.join("evaldata.json"))?)?;
    let pages = pages
        .as_object()
        .context("evaldata.json is not an object")?;
    let paragraph = Regex::new(r"(?is)<p\b[^>]*>(.*?)</p>")?;
    let tags = Regex::new(r"(?s)<[^>]+>")?;
    let ruby = Regex::new(r"(?is)<rt\b[^>]*>.*?</rt>|<rp\b[^>]*>.*?</rp>")?;
    let mut urls: Vec<&String> = pages.keys().collect();
    urls.sort();
    let mut templates = Vec::new();
    for url in urls {
        let info = &pages[url];
        let Some(host) = url::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(String::from))
        else {
            continue;
        };
        let snippets: Vec<String> = info["with"]
            .as_array()
            .map(|a| a.iter().filter_map(|s| s.as_str()).map(normalise).collect())
            .unwrap_or_default();
        // A short snippet ("Wissen") is found in menus and comments too; a Chinese or
        // Japanese one says as much in a third of the bytes.
        let cjk = super::cjk::cjk_share(&snippets.concat()) >= 0.5;
        let shortest = if cjk { 8 * 3 } else { 25 };
        let snippets: Vec<String> = snippets
            .into_iter()
            .filter(|s| s.len() >= shortest)
            .collect();
        let file = info["file"].as_str().unwrap_or("");
        let Ok(gz) = std::fs::read(dataset.join(format!("html/{file}.gz"))) else {
            continue;
        };
        let mut bytes = Vec::new();
        flate2::read::GzDecoder::new(&gz[..]).read_to_end(&mut bytes)?;
        let html = crawldedup::content::decode::decode(&bytes, None, Some(url)).text;
        let blocks: Vec<(usize, usize, bool, usize)> = paragraph
            .captures_iter(&html)
            .filter_map(|c| c.get(1))
            .map(|inner| {
                // Furigana (`<rt>`) is not in the snippets; CJK text is not spaced.
                let plain = ruby.replace_all(inner.as_str(), "");
                let gap = if cjk { "" } else { " " };
                let fragment = scraper::Html::parse_fragment(&tags.replace_all(&plain, gap));
                let text = normalise(&fragment.root_element().text().collect::<String>());
                let main = snippets
                    .iter()
                    .any(|s| !s.is_empty() && text.contains(s.as_str()));
                (inner.start(), inner.end(), main, text.len())
            })
            .collect();
        let (Some(first), Some(last)) = (
            blocks.iter().position(|b| b.2),
            blocks.iter().rposition(|b| b.2),
        ) else {
            continue;
        };
        let span = &blocks[first..=last];
        if span.len() < 2 || !hosts.insert(host.clone()) || templates.len() >= limit {
            continue;
        }
        // The new text goes in the longest paragraph that holds a snippet: surely the story.
        let longest = (0..span.len())
            .filter(|&i| span[i].2)
            .max_by_key(|&i| span[i].3)
            .unwrap_or(0);
        templates.push(Template {
            host,
            html,
            paragraphs: span.iter().map(|b| (b.0, b.1)).collect(),
            first_p: longest,
        });
    }
    Ok(templates)
}

/// Whether text put in a template's main paragraphs is shown by a browser as the page's
/// body: not inside a `script`, `style`, `noscript` or `template` element, nor a `hidden`
/// one, where a pattern over the markup can find a paragraph that no reader sees; nor inside
/// a `nav`, `footer` or `aside`, or a `header` outside the `article` and `main`, which HTML
/// itself says are not the page's content (a snippet of the set can match a menu item).
pub fn shows_its_paragraphs(template: &Template) -> bool {
    let marker = "Zqxjv marker sentence of the evaluation";
    let html = scraper::Html::parse_document(&fill(template, "Title", &[marker.to_string()]));
    html.tree.nodes().any(|node| {
        if !node.value().as_text().is_some_and(|t| t.contains(marker)) {
            return false;
        }
        let names: Vec<(&str, bool)> = node
            .ancestors()
            .filter_map(|a| a.value().as_element())
            .map(|e| (e.name(), e.attr("hidden").is_some()))
            .collect();
        let in_story = names.iter().any(|(n, _)| matches!(*n, "article" | "main"));
        names.iter().all(|&(name, hidden)| {
            !hidden
                && !matches!(
                    name,
                    "script" | "style" | "noscript" | "template" | "nav" | "footer" | "aside"
                )
                && (name != "header" || in_story)
        })
    })
}

/// `template` carrying `paragraphs` under `title`.
pub fn fill(template: &Template, title: &str, paragraphs: &[String]) -> String {
    let mut html = String::with_capacity(template.html.len());
    let mut at = 0;
    for (i, &(start, end)) in template.paragraphs.iter().enumerate() {
        html.push_str(&template.html[at..start]);
        if i == template.first_p {
            html.push_str(&paragraphs.join("</p>\n<p>"));
        }
        at = end;
    }
    html.push_str(&template.html[at..]);
    let h1 = Regex::new(r"(?is)(<h1\b[^>]*>).*?(</h1>)").expect("pattern");
    // A closure, not a template string: a title may hold `$` ("$, $$ or $$$").
    let html = h1.replace(&html, |c: &regex::Captures| {
        format!("{}{title}{}", &c[1], &c[2])
    });
    let head_title = Regex::new(r"(?is)(<title\b[^>]*>).*?(</title>)").expect("pattern");
    let html = head_title.replace(&html, |c: &regex::Captures| {
        format!("{}{title}{}", &c[1], &c[2])
    });
    // The social cards' titles too, as a site sets them for each article (an extraction
    // prefers `og:title` to the `h1`); the attributes in either order.
    let meta = Regex::new(r"(?is)<meta\b[^>]*>").expect("pattern");
    let card = Regex::new(r#"(?is)\b(?:property|name)\s*=\s*["']?(?:og|twitter):title\b"#)
        .expect("pattern");
    let content = Regex::new(r#"(?is)(\bcontent\s*=\s*)(?:"[^"]*"|'[^']*')"#).expect("pattern");
    let escaped = title.replace('&', "&amp;").replace('"', "&quot;");
    let html = meta.replace_all(&html, |c: &regex::Captures| {
        let tag = &c[0];
        if !card.is_match(tag) {
            return tag.to_string();
        }
        content
            .replace(tag, |a: &regex::Captures| format!("{}\"{escaped}\"", &a[1]))
            .into_owned()
    });
    let json_ld =
        Regex::new(r#"(?is)<script[^>]*application/ld\+json[^>]*>.*?</script>"#).expect("pattern");
    json_ld.replace_all(&html, "").into_owned()
}
