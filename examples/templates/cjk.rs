//! Chinese, Japanese and Korean material for the template evaluation: real prose (the
//! Chinese and Japanese manual pages Debian installs, `manpages-zh` and `manpages-ja`; for
//! Korean, which has no such package, the Debian FAQ's paragraphs, the Korean manual pages
//! other packages install and LibreOffice's Korean help, in that order) and real sites with
//! one template each, many pages a site (Debian's HTML help and manuals: GIMP, LibreOffice,
//! LilyPond, the Debian Reference, the Debian maintainers' guide, the Debian FAQ). For
//! evaluation only: `apt-get install manpages-zh manpages-ja gimp-help-zh-cn gimp-help-ja
//! gimp-help-ko libreoffice-help-zh-cn libreoffice-help-ja libreoffice-help-ko
//! lilypond-doc-html-zh debian-reference-zh-cn debian-reference-ja maint-guide-zh-cn
//! debian-faq-ko`; a site or prose not installed is left out, and said so.
//!
//! A site page becomes a template by its own text: a block (`p`, `li`, `dt`, `dd`, `td`,
//! `th`, `pre`, `h2`-`h6`, `blockquote`, `caption`, `figcaption`) whose text is found on
//! at most a tenth of the site's sampled pages is the page's own content and is emptied,
//! unless it is all one link (a "next page" line); what the pages share (menus, footers,
//! the site's banners) is the template and stays as served. The new text goes into the
//! longest emptied paragraph (the first with `--into-first-paragraph`, where the Debian
//! Reference's front page puts it in its copyright notice, under a 19 KB table of contents
//! that extraction rightly takes: two briefs of that host are then exact duplicates).

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::Result;
use ego_tree::NodeId;
use scraper::{Html, Node};

use super::sets::{Template, normalise};

/// A Han, Kana or Hangul character.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30ff | 0x3400..=0x4dbf | 0x4e00..=0x9fff | 0xf900..=0xfaff | 0xac00..=0xd7af)
}

/// Whether most of the CJK characters of `text` are Hangul syllables: Korean.
pub fn mostly_hangul(text: &str) -> bool {
    let hangul = text
        .chars()
        .filter(|&c| matches!(c as u32, 0xac00..=0xd7af))
        .count();
    hangul > text.chars().filter(|&c| is_cjk(c)).count() / 2
}

/// The share of CJK characters among the letters of `text`.
pub fn cjk_share(text: &str) -> f64 {
    let letters = text.chars().filter(|c| c.is_alphanumeric()).count();
    let cjk = text.chars().filter(|&c| is_cjk(c)).count();
    cjk as f64 / letters.max(1) as f64
}

/// The text of a manual page's source, roughly: requests and comments left out, font and
/// character escapes taken away.
fn roff_text(source: &str) -> String {
    let mut text = String::new();
    for line in source.lines() {
        if line.starts_with('.') || line.starts_with('\'') {
            continue;
        }
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '\\' {
                text.push(c);
                continue;
            }
            match chars.next() {
                // \fB, \fI, \fR, \fP, \f(XX
                Some('f') if chars.next() == Some('(') => {
                    chars.next();
                    chars.next();
                }
                Some('(') => {
                    chars.next();
                    chars.next();
                }
                Some('-') => text.push('-'),
                Some('e') => text.push('\\'),
                Some('"') => break,
                _ => {}
            }
        }
        text.push('\n');
    }
    text
}

/// The texts of the manual pages under `folder` (`/usr/share/man/ja`), in file order.
fn manual_pages(folder: &str) -> Result<Vec<String>> {
    let mut files: Vec<PathBuf> = Vec::new();
    for section in std::fs::read_dir(folder)? {
        let section = section?.path();
        if section.is_dir() {
            for file in std::fs::read_dir(&section)? {
                files.push(file?.path());
            }
        }
    }
    files.sort();
    let mut texts = Vec::new();
    for file in files {
        let bytes = std::fs::read(&file)?;
        let mut source = Vec::new();
        if file.extension().is_some_and(|e| e == "gz") {
            if flate2::read::GzDecoder::new(&bytes[..])
                .read_to_end(&mut source)
                .is_err()
            {
                continue;
            }
        } else {
            source = bytes;
        }
        texts.push(roff_text(&String::from_utf8_lossy(&source)));
    }
    Ok(texts)
}

/// Sentences of real prose in `lang` (`zh`, `ja` or `ko`), each once. Chinese and Japanese
/// from the manual pages under `/usr/share/man/{zh_CN,ja}`: 15 to 90 characters ending in
/// 。！ or ？, nine tenths of their letters CJK. Korean from [`korean_texts`]: 20 to 200
/// characters ending in a Hangul syllable and `.`, `!` or `?`, seven tenths of their
/// letters Hangul (Korean technical prose keeps its Latin names).
pub fn prose(lang: &str) -> Result<Vec<String>> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let mut keep = |sentence: &str, chars: std::ops::RangeInclusive<usize>, share: f64| {
        let sentence = sentence.trim();
        if chars.contains(&sentence.chars().count())
            && cjk_share(sentence) >= share
            && seen.insert(normalise(sentence))
        {
            out.push(sentence.to_string());
        }
    };
    if lang == "ko" {
        for text in korean_texts()? {
            // Korean is spaced: a sentence ends at its mark before a space.
            let words: Vec<&str> = text.split_whitespace().collect();
            let mut start = 0;
            for (i, word) in words.iter().enumerate() {
                let mut tail = word.chars().rev();
                if matches!(tail.next(), Some('.' | '!' | '?'))
                    && tail
                        .next()
                        .is_some_and(|c| matches!(c as u32, 0xac00..=0xd7af))
                {
                    keep(&words[start..=i].join(" "), 20..=200, 0.7);
                    start = i + 1;
                }
            }
        }
        return Ok(out);
    }
    let folder = match lang {
        "zh" => "/usr/share/man/zh_CN",
        _ => "/usr/share/man/ja",
    };
    for text in manual_pages(folder)? {
        // Lines of one paragraph joined: Chinese and Japanese text is not spaced.
        let joined: String = text.lines().map(str::trim).collect::<Vec<_>>().join("");
        let mut current = String::new();
        for c in joined.chars() {
            current.push(c);
            if matches!(c, '。' | '！' | '？') {
                keep(&std::mem::take(&mut current), 15..=90, 0.9);
            }
        }
    }
    Ok(out)
}

/// Korean texts, a paragraph each: the Debian FAQ's (`debian-faq-ko`), the Korean manual
/// pages under `/usr/share/man/ko`, then LibreOffice's Korean help
/// (`libreoffice-help-ko`); what is not installed is left out.
fn korean_texts() -> Result<Vec<String>> {
    let mut texts = Vec::new();
    let paragraphs = |folder: &str, suffix: &str, texts: &mut Vec<String>| {
        let mut files = Vec::new();
        html_files(Path::new(folder), suffix, &mut files);
        files.sort();
        let p = scraper::Selector::parse("p").expect("selector");
        for file in files {
            let Ok(bytes) = std::fs::read(&file) else {
                continue;
            };
            let page = crawldedup::content::decode::decode(&bytes, None, None).text;
            let html = Html::parse_document(&page);
            texts.extend(
                html.select(&p)
                    .map(|e| normalise(&e.text().collect::<String>())),
            );
        }
    };
    paragraphs("/usr/share/doc/debian/FAQ/ko", ".ko.html", &mut texts);
    if Path::new("/usr/share/man/ko").is_dir() {
        // A page's text lines, joined: its requests (headings, paragraph breaks) are left
        // out, so the sentences are found across the whole page.
        texts.extend(
            manual_pages("/usr/share/man/ko")?
                .iter()
                .map(|page| page.lines().collect::<Vec<_>>().join(" ")),
        );
    }
    paragraphs("/usr/share/libreoffice/help/ko/text", ".html", &mut texts);
    Ok(texts)
}

/// One of Debian's CJK sites: a name used as its host, its folder, its language.
pub struct Site {
    pub host: &'static str,
    pub folder: &'static str,
    pub lang: &'static str,
    /// What a page's file name ends with.
    pub suffix: &'static str,
}

impl Site {
    /// A site from the command line: its pages are the `.html` files under `folder`, in
    /// the language most of their text is in.
    pub fn of_folder(host: &str, folder: &str) -> Result<Site> {
        let mut files = Vec::new();
        html_files(Path::new(folder), ".html", &mut files);
        let text: String = files
            .iter()
            .take(20)
            .filter_map(|f| std::fs::read(f).ok())
            .map(|b| crawldedup::content::decode::decode(&b, None, None).text)
            .collect();
        let lang = if text.chars().any(|c| matches!(c as u32, 0x3040..=0x30ff)) {
            "ja"
        } else if mostly_hangul(&text) {
            "ko"
        } else {
            "zh"
        };
        let leak = |s: &str| -> &'static str { Box::leak(s.to_string().into_boxed_str()) };
        Ok(Site {
            host: leak(host),
            folder: leak(folder),
            lang,
            suffix: ".html",
        })
    }
}

/// The sites of the evaluation (those whose folder exists are used).
pub const SITES: &[Site] = &[
    Site {
        host: "gimp-help.zh",
        folder: "/usr/share/gimp/2.0/help/zh_CN",
        lang: "zh",
        suffix: ".html",
    },
    Site {
        host: "gimp-help.ja",
        folder: "/usr/share/gimp/2.0/help/ja",
        lang: "ja",
        suffix: ".html",
    },
    Site {
        host: "libreoffice-help.zh",
        folder: "/usr/share/libreoffice/help/zh-CN/text",
        lang: "zh",
        suffix: ".html",
    },
    Site {
        host: "libreoffice-help.ja",
        folder: "/usr/share/libreoffice/help/ja/text",
        lang: "ja",
        suffix: ".html",
    },
    Site {
        host: "lilypond-doc.zh",
        folder: "/usr/share/doc/lilypond/html/Documentation",
        lang: "zh",
        suffix: ".zh.html",
    },
    Site {
        host: "debian-reference.zh",
        folder: "/usr/share/debian-reference",
        lang: "zh",
        suffix: ".zh-cn.html",
    },
    Site {
        host: "debian-reference.ja",
        folder: "/usr/share/debian-reference",
        lang: "ja",
        suffix: ".ja.html",
    },
    Site {
        host: "gimp-help.ko",
        folder: "/usr/share/gimp/2.0/help/ko",
        lang: "ko",
        suffix: ".html",
    },
    Site {
        host: "libreoffice-help.ko",
        folder: "/usr/share/libreoffice/help/ko/text",
        lang: "ko",
        suffix: ".html",
    },
    Site {
        host: "debian-faq.ko",
        folder: "/usr/share/doc/debian/FAQ/ko",
        lang: "ko",
        suffix: ".ko.html",
    },
    Site {
        host: "maint-guide.zh",
        folder: "/usr/share/doc/maint-guide-zh-cn/html",
        lang: "zh",
        suffix: ".zh-cn.html",
    },
];

fn html_files(folder: &Path, suffix: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            html_files(&path, suffix, out);
        } else if path.to_string_lossy().ends_with(suffix) {
            out.push(path);
        }
    }
}

const BLOCKS: &[&str] = &[
    "p",
    "li",
    "dt",
    "dd",
    "td",
    "th",
    "pre",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "blockquote",
    "caption",
    "figcaption",
];

/// The blocks of `html` that hold no other block, with their text.
fn leaf_blocks(html: &Html) -> Vec<(NodeId, String, bool)> {
    let mut out = Vec::new();
    for node in html.tree.root().descendants() {
        let Some(element) = node.value().as_element() else {
            continue;
        };
        if !BLOCKS.contains(&element.name()) {
            continue;
        }
        let inner_block = node.descendants().skip(1).any(|d| {
            d.value()
                .as_element()
                .is_some_and(|e| BLOCKS.contains(&e.name()))
        });
        if inner_block {
            continue;
        }
        let text: String = node
            .descendants()
            .filter_map(|d| d.value().as_text().map(|t| t.to_string()))
            .collect();
        let linked: String = node
            .descendants()
            .filter(|d| d.value().as_element().is_some_and(|e| e.name() == "a"))
            .flat_map(|a| a.descendants())
            .filter_map(|d| d.value().as_text().map(|t| t.to_string()))
            .collect();
        let text = normalise(&text);
        let all_link = !text.is_empty() && normalise(&linked) == text;
        out.push((node.id(), text, all_link));
    }
    out
}

/// Up to `limit` pages of `site`, taken evenly over its files, as templates (see the
/// module documentation); pages with no paragraph of their own are left out.
pub fn site_templates(site: &Site, limit: usize, first: bool) -> Result<Vec<Template>> {
    let mut files = Vec::new();
    html_files(Path::new(site.folder), site.suffix, &mut files);
    files.sort();
    // Index and navigation pages hold little text of their own: the larger half.
    let mut sized: Vec<(u64, PathBuf)> = files
        .into_iter()
        .filter_map(|f| Some((std::fs::metadata(&f).ok()?.len(), f)))
        .collect();
    sized.sort();
    let larger: Vec<PathBuf> = sized
        .split_off(sized.len() / 2)
        .into_iter()
        .map(|s| s.1)
        .collect();
    let mut chosen: Vec<PathBuf> = if larger.len() <= limit * 2 {
        larger
    } else {
        let step = larger.len() as f64 / (limit * 2) as f64;
        (0..limit * 2)
            .map(|i| larger[(i as f64 * step) as usize].clone())
            .collect()
    };
    chosen.sort();
    let pages: Vec<String> = chosen
        .iter()
        .filter_map(|f| std::fs::read(f).ok())
        .map(|b| crawldedup::content::decode::decode(&b, None, None).text)
        .collect();
    let parsed: Vec<Html> = pages.iter().map(|p| Html::parse_document(p)).collect();
    let blocks: Vec<Vec<(NodeId, String, bool)>> = parsed.iter().map(leaf_blocks).collect();
    // On how many pages each block text is found.
    let mut found: HashMap<&str, usize> = HashMap::new();
    for page in &blocks {
        let texts: std::collections::HashSet<&str> = page.iter().map(|b| b.1.as_str()).collect();
        for t in texts {
            *found.entry(t).or_default() += 1;
        }
    }
    let shared = (parsed.len() / 10).max(1);
    let marker = "\u{e000}crawldedup-eval-body\u{e000}";
    let mut templates = Vec::new();
    for (mut html, page) in parsed.into_iter().zip(&blocks) {
        let own_blocks: Vec<&(NodeId, String, bool)> = page
            .iter()
            .filter(|(_, text, all_link)| {
                !text.is_empty() && !all_link && found[text.as_str()] <= shared
            })
            .collect();
        let own: Vec<NodeId> = own_blocks.iter().map(|b| b.0).collect();
        // The new text goes where most of the page's own prose was: its longest paragraph
        // of its own (the first may be a notice, a site's front page's copyright line), or
        // with `first` its first.
        let mut paragraphs = own_blocks.iter().filter(|b| {
            html.tree
                .get(b.0)
                .and_then(|n| n.value().as_element().map(|e| e.name() == "p"))
                .unwrap_or(false)
        });
        let chosen = if first {
            paragraphs.next()
        } else {
            paragraphs.max_by_key(|b| b.1.chars().count())
        };
        let Some(body) = chosen.map(|b| b.0) else {
            continue;
        };
        for &id in &own {
            let Some(mut node) = html.tree.get_mut(id) else {
                continue;
            };
            while let Some(mut child) = node.first_child() {
                child.detach();
            }
            if id == body {
                node.append(Node::Text(scraper::node::Text {
                    text: marker.into(),
                }));
            }
        }
        let out = html.html();
        let Some(at) = out.find(marker) else { continue };
        let html = out.replacen(marker, "", 1);
        templates.push(Template {
            host: site.host.to_string(),
            html,
            paragraphs: vec![(at, at)],
            first_p: 0,
        });
        if templates.len() >= limit {
            break;
        }
    }
    Ok(templates)
}
