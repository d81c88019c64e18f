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
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use crawldedup::{Config, Dedup, PageVerdict};

#[path = "templates/sets.rs"]
mod sets;
#[path = "templates/wcxb.rs"]
mod wcxb;
use sets::{Template, fill, load, load_boilerplate_set, normalise, shows_its_paragraphs};

/// One page of the evaluation.
struct Page {
    url: String,
    html: String,
    /// For an edited copy: the URL of its original.
    copy_of: Option<String>,
    brief: bool,
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
                other => other.duplicate().map(|d| d.of.name.clone()),
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
