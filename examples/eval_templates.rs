//! Real site templates carrying different articles: are two different articles of one site
//! ever merged, and are edited copies found against their own original?
//!
//! Templates are the article pages of the WCXB dev split, as served, one per host, whose
//! main content could be found nearly whole (90% of the ground truth's characters) in its
//! blocks (`p`, `li`, `h2`-`h6`, `blockquote`, `figcaption` whose text, entities decoded,
//! is in the ground truth). Those blocks are replaced by other real text, runs of sentences
//! of the WCXB articles' ground truths, each sentence used once in the whole evaluation:
//! three briefs (2-4 sentences) and three long articles (8-15 sentences) per template, the
//! headline and title with them; the JSON-LD is removed. Two edited copies per template
//! follow: a long article with three words changed, and one with a sentence added. Pages
//! are interleaved across sites, as a crawl of many sites meets them, each named by a URL
//! of its template's host. With `--peer PYTHON` (scripts/peers.sh), trafilatura and the
//! `simhash` package (k = 3) decide the same pages in the same run.
//!
//! ```text
//! cargo run --release --example eval_templates -- ../shared/datasets/wcxb-dev [--boilerplate-set ../shared/datasets/trafilatura-eval-dev] [--peer target/peers/bin/python] [--limit N] [--verbose] [--dump FOLDER]
//! ```

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use crawldedup::{Config, Dedup, PageVerdict};
use regex::Regex;

/// A template: its host, its HTML (UTF-8), and where its main paragraphs are.
struct Template {
    host: String,
    html: String,
    /// Byte ranges of the inner HTML of the main-content blocks, in document order.
    paragraphs: Vec<(usize, usize)>,
    /// Where the new text goes: the range of the longest main-content `<p>`, surely in the
    /// story's body (a breadcrumb item that repeats the title, or a byline, may come before
    /// it).
    first_p: usize,
}

/// One page of the evaluation.
struct Page {
    url: String,
    html: String,
    /// For an edited copy: the URL of its original.
    copy_of: Option<String>,
    brief: bool,
}

fn normalise(text: &str) -> String {
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

fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for word in text.split_whitespace() {
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(word);
        if word.ends_with(['.', '!', '?']) && current.len() > 40 {
            out.push(std::mem::take(&mut current));
        }
    }
    out
}

fn load(
    dataset: &Path,
    limit: usize,
    hosts: &mut HashSet<String>,
) -> Result<(Vec<Template>, Vec<String>)> {
    let metadata: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dataset.join("metadata.json"))?)?;
    let files = metadata["files"].as_object().context("no files")?;
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
        let gz = std::fs::read(dataset.join(format!("dev/html/{id}.html.gz")))?;
        let mut bytes = Vec::new();
        flate2::read::GzDecoder::new(&gz[..]).read_to_end(&mut bytes)?;
        let url = info["url"].as_str().unwrap_or("");
        let html = crawldedup::content::decode::decode(&bytes, None, Some(url)).text;
        let truth: serde_json::Value = serde_json::from_slice(&std::fs::read(
            dataset.join(format!("dev/ground-truth/{id}.json")),
        )?)?;
        let reference = truth["ground_truth"]["main_content"]
            .as_str()
            .unwrap_or("")
            .to_string();
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
fn load_boilerplate_set(
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
        // A short snippet ("Wissen") is found in menus and comments too.
        let snippets: Vec<String> = snippets.into_iter().filter(|s| s.len() >= 25).collect();
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
                let fragment =
                    scraper::Html::parse_fragment(&tags.replace_all(inner.as_str(), " "));
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
fn shows_its_paragraphs(template: &Template) -> bool {
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
fn fill(template: &Template, title: &str, paragraphs: &[String]) -> String {
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
    let json_ld =
        Regex::new(r#"(?is)<script[^>]*application/ld\+json[^>]*>.*?</script>"#).expect("pattern");
    json_ld.replace_all(&html, "").into_owned()
}

/// Distinct runs of sentences, taken in turn from the texts, each used once: no two pages
/// of the evaluation carry the same sentence (a sentence seen before is skipped).
struct Sentences {
    all: std::vec::IntoIter<String>,
}

impl Sentences {
    fn new(texts: &[String]) -> Sentences {
        let mut seen = HashSet::new();
        let all: Vec<String> = texts
            .iter()
            .flat_map(|t| sentences(t))
            .filter(|s| seen.insert(normalise(s)))
            .collect();
        Sentences {
            all: all.into_iter(),
        }
    }

    fn take(&mut self, n: usize) -> Option<Vec<String>> {
        let run: Vec<String> = self.all.by_ref().take(n).collect();
        (run.len() == n).then_some(run)
    }
}

fn build(templates: &[Template], texts: &[String]) -> Vec<Page> {
    let mut pages = Vec::new();
    let mut pool = Sentences::new(texts);
    let mut originals: Vec<Vec<(String, Vec<String>)>> = vec![Vec::new(); templates.len()];
    for round in 0..8 {
        for (t, template) in templates.iter().enumerate() {
            let url = format!("https://{}/eval/{round}", template.host);
            if round < 6 {
                let brief = round % 2 == 0;
                let take = if brief { 2 + round % 3 } else { 8 + round % 8 };
                let Some(chosen) = pool.take(take) else {
                    continue;
                };
                let title = chosen[0].chars().take(70).collect::<String>();
                let paragraphs: Vec<String> = if brief {
                    vec![chosen.join(" ")]
                } else {
                    chosen.chunks(3).map(|c| c.join(" ")).collect()
                };
                pages.push(Page {
                    url: url.clone(),
                    html: fill(template, &title, &paragraphs),
                    copy_of: None,
                    brief,
                });
                if !brief {
                    originals[t].push((url, paragraphs));
                }
            } else {
                let Some((original, paragraphs)) = originals[t].get(round - 6) else {
                    continue;
                };
                let mut edited = paragraphs.clone();
                if round == 6 {
                    // Three words changed.
                    let words: Vec<String> = edited[0].split(' ').map(String::from).collect();
                    let changed: Vec<String> = words
                        .iter()
                        .enumerate()
                        .map(|(i, w)| {
                            if i % 7 == 3 && i < 25 {
                                "altered".into()
                            } else {
                                w.clone()
                            }
                        })
                        .collect();
                    edited[0] = changed.join(" ");
                } else {
                    edited.push(
                        "A reader wrote to add that the figures were confirmed later.".into(),
                    );
                }
                let title = edited[0].chars().take(70).collect::<String>();
                pages.push(Page {
                    url: format!("https://{}/eval/copy-{round}", template.host),
                    html: fill(template, &title, &edited),
                    copy_of: Some(original.clone()),
                    brief: false,
                });
            }
        }
    }
    pages
}

#[derive(Default, Debug)]
struct Result_ {
    articles: usize,
    briefs: usize,
    lost: usize,
    lost_briefs: usize,
    copies: usize,
    copies_right: usize,
    copies_wrong: usize,
}

fn report(name: &str, r: &Result_) {
    println!(
        "{name:<32} lost {:>4} of {:>5} distinct articles ({} of {} briefs); copies found with the right original {:>4} of {:>4} ({:.3}), with another {}",
        r.lost,
        r.articles,
        r.lost_briefs,
        r.briefs,
        r.copies_right,
        r.copies,
        r.copies_right as f64 / r.copies.max(1) as f64,
        r.copies_wrong
    );
}

/// Our decisions on `pages`, and the seconds they took (extraction and decision).
fn ours(pages: &[Page], templates: bool, verbose: bool) -> Result<(Result_, f64)> {
    let started = std::time::Instant::now();
    let dir = tempfile::tempdir()?;
    let mut config = Config::default();
    config.dedup.host_templates = templates;
    let stage = Dedup::open(dir.path(), &config)?;
    let mut r = Result_::default();
    for page in pages {
        let verdict = stage.check_page(
            &page.url,
            page.html.as_bytes(),
            Some("text/html; charset=utf-8"),
        )?;
        if verbose && !matches!(verdict, PageVerdict::Unique { .. }) {
            let kind = if page.copy_of.is_some() {
                "copy"
            } else {
                "article"
            };
            println!("  {} ({kind}): {verdict:?}", page.url);
        }
        tally(
            &mut r,
            page,
            match &verdict {
                PageVerdict::Unique { .. } => None,
                // Not stored either: the page's text was lost to extraction.
                PageVerdict::NoText => Some("(no text)".to_string()),
                PageVerdict::ExactDuplicate { of } | PageVerdict::NearDuplicate { of, .. } => {
                    Some(of.name.clone())
                }
            },
        );
    }
    let seconds = started.elapsed().as_secs_f64();
    let (hosts, blocks) = stage.template_size();
    if templates {
        // What the index keeps of each page's lines.
        let mut lines = 0usize;
        for page in pages {
            let url = url::Url::parse(&page.url)?;
            if let Some(prepared) =
                crawldedup::page::prepare(page.html.as_bytes(), None, Some(&url))
            {
                let host = url.host_str().unwrap_or("");
                lines += crawldedup::fingerprint::Blocks::of(host, prepared.page_text())
                    .lines
                    .len();
            }
        }
        let per_page = lines as f64 / pages.len().max(1) as f64;
        println!(
            "{:<32} lines kept a page: {per_page:.1} on average, {:.0} bytes",
            "",
            per_page * crawldedup::fingerprint::blocks::LINE_BYTES as f64 + 6.0
        );
        // 12 bytes a block in its host's hash table, and a control byte, at a load of 7/8.
        println!(
            "{:<32} templates of {hosts} hosts: {blocks} blocks, about {} bytes a host",
            "",
            blocks * 13 * 8 / 7 / hosts.max(1)
        );
    }
    Ok((r, seconds))
}

fn tally(r: &mut Result_, page: &Page, duplicate_of: Option<String>) {
    match &page.copy_of {
        None => {
            r.articles += 1;
            r.briefs += usize::from(page.brief);
            if duplicate_of.is_some() {
                r.lost += 1;
                r.lost_briefs += usize::from(page.brief);
            }
        }
        Some(original) => {
            r.copies += 1;
            match duplicate_of {
                Some(of) if of == *original => r.copies_right += 1,
                Some(_) => r.copies_wrong += 1,
                None => {}
            }
        }
    }
}

fn peer(python: &str, pages: &[Page]) -> Result<Result_> {
    let dir = tempfile::tempdir()?;
    let list = dir.path().join("pages.jsonl");
    let mut lines = String::new();
    for (i, page) in pages.iter().enumerate() {
        let file = dir.path().join(format!("{i}.html"));
        std::fs::write(&file, &page.html)?;
        lines.push_str(&serde_json::json!({"url": page.url, "file": file}).to_string());
        lines.push('\n');
    }
    std::fs::write(&list, lines)?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/eval_templates_peer.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .arg(&list)
        .output()?;
    if !out.status.success() {
        bail!("peer: {}", String::from_utf8_lossy(&out.stderr));
    }
    let mut r = Result_::default();
    for (page, line) in pages.iter().zip(String::from_utf8(out.stdout)?.lines()) {
        let answer: serde_json::Value = serde_json::from_str(line)?;
        tally(&mut r, page, answer["of"].as_str().map(String::from));
    }
    Ok(r)
}

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let mut dataset = PathBuf::from("../shared/datasets/wcxb-dev");
    let mut python = None;
    let mut limit = usize::MAX;
    let mut verbose = false;
    let mut boilerplate_set = None;
    let mut dump = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--dump" => dump = Some(PathBuf::from(args.next().context("--dump needs a folder")?)),
            "--boilerplate-set" => {
                boilerplate_set = Some(PathBuf::from(
                    args.next().context("--boilerplate-set needs a folder")?,
                ));
            }
            "--peer" => python = Some(args.next().context("--peer needs a python")?),
            "--verbose" => verbose = true,
            "--limit" => limit = args.next().context("--limit needs N")?.parse()?,
            other if !other.starts_with('-') => dataset = PathBuf::from(other),
            other => bail!("unknown option {other}"),
        }
    }
    let mut hosts = HashSet::new();
    let (mut templates, texts) = load(&dataset, limit, &mut hosts)?;
    let from_wcxb = templates.len();
    if let Some(folder) = &boilerplate_set {
        templates.extend(load_boilerplate_set(folder, limit, &mut hosts)?);
    }
    let found = templates.len();
    let mut kept_wcxb = 0;
    let mut index = 0;
    templates.retain(|t| {
        let shown = shows_its_paragraphs(t);
        kept_wcxb += usize::from(shown && index < from_wcxb);
        index += 1;
        shown
    });
    let pages = build(&templates, &texts);
    if let Some(folder) = &dump {
        // Every page as served, to look at one with `crawldedup extract`.
        std::fs::create_dir_all(folder)?;
        for page in &pages {
            let name = page.url.trim_start_matches("https://").replace('/', "_");
            std::fs::write(folder.join(format!("{name}.html")), &page.html)?;
        }
    }
    println!(
        "{} templates ({kept_wcxb} from WCXB dev, {} from the boilerplate set; {} left out whose main paragraphs no browser shows as the page's body)",
        templates.len(),
        templates.len() - kept_wcxb,
        found - templates.len()
    );
    println!(
        "{} templates (hosts), {} texts, {} pages ({} distinct articles, each of its own sentences)",
        templates.len(),
        texts.len(),
        pages.len(),
        pages.iter().filter(|p| p.copy_of.is_none()).count()
    );
    for templates in [true, false] {
        let (result, seconds) = ours(&pages, templates, verbose && templates)?;
        let name = if templates {
            "crawldedup, host templates"
        } else {
            "crawldedup, no host templates"
        };
        report(name, &result);
        println!(
            "{:<32} {:.1} us a page (extraction and decision, one thread)",
            "",
            seconds * 1e6 / pages.len() as f64
        );
    }
    if let Some(python) = python {
        report("trafilatura + simhash (k = 3)", &peer(&python, &pages)?);
    }
    Ok(())
}
