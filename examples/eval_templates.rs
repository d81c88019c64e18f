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
//! With `--as-files BINARY` the pages are also written to files and decided by that build
//! of the command-line tool, `crawldedup dedup --json FILE...` in one run, as a user runs it
//! on saved pages: a file is then named by the address the page gives itself (its canonical
//! link or `og:url`), not by the URL the evaluation gives it, and one without is known by
//! its path alone.
//!
//! ```text
//! cargo run --release --example eval_templates -- ../shared/datasets/wcxb-dev [--boilerplate-set ../shared/datasets/trafilatura-eval-dev] [--peer target/peers/bin/python] [--as-files target/release/crawldedup] [--cjk N [--site HOST=FOLDER]... [--into-first-paragraph]] [--limit N] [--verbose] [--dump FOLDER]
//! ```

// The evaluation reads its templates' structure with scraper's own parse functions:
// upstream html5ever builds the same tree as the project's copy, which reads its input faster
// and nothing else (vendor/html5ever/PATCH.md).
#![allow(clippy::disallowed_methods)]

use std::collections::{HashMap, HashSet};

use anyhow::Result;

#[path = "templates/args.rs"]
mod args;
#[path = "templates/cjk.rs"]
mod cjk;
#[path = "templates/run.rs"]
mod run;
#[path = "templates/score.rs"]
mod score;
#[path = "templates/sets.rs"]
mod sets;
#[path = "templates/tally.rs"]
mod tally;
#[path = "templates/wcxb.rs"]
mod wcxb;
use args::{Args, parse_args};
use run::{as_files, ours, peer};
use sets::{Template, fill, load, load_boilerplate_set, normalise, shows_its_paragraphs};
use tally::report;

/// One page of the evaluation.
struct Page {
    url: String,
    html: String,
    /// For an edited copy: the URL of its original.
    copy_of: Option<String>,
    brief: bool,
    /// The part of the evaluation it belongs to, for the figures by part: a site, or the
    /// one-page templates of a language.
    set: String,
    /// The language of its article, and the article as it was put in (headline and
    /// paragraphs): what its extraction is scored against.
    lang: Lang,
    truth: String,
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

    /// Sentences as they are (CJK prose, split already), each once.
    fn of(sentences: Vec<String>) -> Sentences {
        Sentences {
            all: sentences.into_iter(),
        }
    }

    fn take(&mut self, n: usize) -> Option<Vec<String>> {
        let run: Vec<String> = self.all.by_ref().take(n).collect();
        (run.len() == n).then_some(run)
    }
}

/// The language of a page's text: how its sentences are joined and how a copy is edited.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Lang {
    En,
    Zh,
    Ja,
    Ko,
}

impl Lang {
    fn join(self, sentences: &[String]) -> String {
        sentences.join(if self.spaced() { " " } else { "" })
    }

    /// Whether words are spaced (English, Korean) or not (Chinese, Japanese).
    fn spaced(self) -> bool {
        matches!(self, Lang::En | Lang::Ko)
    }

    /// A sentence a copy adds at its end.
    fn added(self) -> String {
        match self {
            Lang::En => "A reader wrote to add that the figures were confirmed later.",
            Lang::Zh => "有读者来信补充说，这些数字后来得到了证实。",
            Lang::Ja => "読者から、これらの数字は後に確認されたとの連絡があった。",
            Lang::Ko => "한 독자가 이 수치들이 나중에 확인되었다고 알려 왔다.",
        }
        .into()
    }

    /// `text` with words changed: in English every seventh word of the first 25 (four);
    /// in Korean every fifth spaced phrase of the first 19 from the fourth (four, as far
    /// apart as the English words, a Korean phrase saying about 1.4 English words
    /// (scripts/script_units.py), and like them after the first three, which stay);
    /// in Chinese and Japanese one character in twelve of the first 42 (four, as far apart
    /// as the English words at 1.7 characters a word, the mean length of a Chinese word).
    fn three_changed(self, text: &str) -> String {
        if self.spaced() {
            let (every, at, within, word) = match self {
                Lang::Ko => (5, 3, 19, "바뀐"),
                _ => (7, 3, 25, "altered"),
            };
            let words: Vec<&str> = text.split(' ').collect();
            let changed: Vec<&str> = words
                .iter()
                .enumerate()
                .map(|(i, w)| {
                    if i % every == at && i < within {
                        word
                    } else {
                        w
                    }
                })
                .collect();
            return changed.join(" ");
        }
        text.chars()
            .enumerate()
            .map(|(i, c)| if i % 12 == 5 && i < 42 { '改' } else { c })
            .collect()
    }
}

/// An article of `n` sentences in `lang`: one paragraph for a brief, else three sentences
/// a paragraph; and its title.
fn article(chosen: &[String], lang: Lang, brief: bool) -> (String, Vec<String>) {
    let title = chosen[0].chars().take(70).collect::<String>();
    let paragraphs = if brief {
        vec![lang.join(chosen)]
    } else {
        chosen.chunks(3).map(|c| lang.join(c)).collect()
    };
    (title, paragraphs)
}

/// One template a host, each carrying six articles and four edited copies: of two long
/// articles (three words changed; a sentence added) and of two briefs (a sentence added;
/// three words changed).
fn build(
    templates: &[Template],
    pools: &mut HashMap<Lang, Sentences>,
    lang_of: &dyn Fn(&Template) -> Lang,
) -> Vec<Page> {
    let mut pages = Vec::new();
    // Per template: its long articles, then its briefs, as (URL, headline length, paragraphs).
    type Original = (String, usize, Vec<String>);
    let mut originals: Vec<[Vec<Original>; 2]> = vec![[Vec::new(), Vec::new()]; templates.len()];
    for round in 0..10 {
        for (t, template) in templates.iter().enumerate() {
            let lang = lang_of(template);
            let url = format!("https://{}/eval/{round}", template.host);
            if round < 6 {
                let brief = round % 2 == 0;
                let take = if brief { 2 + round % 3 } else { 8 + round % 8 };
                let Some(chosen) = pools.get_mut(&lang).and_then(|p| p.take(take)) else {
                    continue;
                };
                let (title, paragraphs) = article(&chosen, lang, brief);
                pages.push(Page {
                    url: url.clone(),
                    html: fill(template, &title, &paragraphs),
                    copy_of: None,
                    brief,
                    set: format!("one-page templates, {lang:?}"),
                    lang,
                    truth: score::truth(&title, &paragraphs),
                });
                originals[t][usize::from(brief)].push((url, title.chars().count(), paragraphs));
            } else {
                // Rounds 6 and 7 copy the long articles, 8 and 9 the briefs.
                let brief = round >= 8;
                let Some((original, title_chars, paragraphs)) =
                    originals[t][usize::from(brief)].get((round - 6) % 2)
                else {
                    continue;
                };
                let mut edited = paragraphs.clone();
                if round == 6 || round == 9 {
                    edited[0] = lang.three_changed(&edited[0]);
                } else if brief {
                    edited[0] = lang.join(&[edited[0].clone(), lang.added()]);
                } else {
                    edited.push(lang.added());
                }
                // The original's headline, edited as its text is.
                let title = edited[0].chars().take(*title_chars).collect::<String>();
                pages.push(Page {
                    url: format!("https://{}/eval/copy-{round}", template.host),
                    html: fill(template, &title, &edited),
                    copy_of: Some(original.clone()),
                    brief,
                    set: format!("one-page templates, {lang:?}"),
                    lang,
                    truth: score::truth(&title, &edited),
                });
            }
        }
    }
    pages
}

/// Many pages of one site (templates of one host): each carries one article, briefs (2-4
/// sentences) and long ones (8-12) in turn; every one has an edited copy, three characters
/// changed or a sentence added in turn, in the same page of the site (as a mirror URL
/// serves it), two pages on.
fn build_site(templates: &[Template], pool: &mut Sentences, lang: Lang) -> Vec<Page> {
    let mut pages = Vec::new();
    let mut due: Vec<(usize, Page)> = Vec::new();
    for (i, template) in templates.iter().enumerate() {
        let brief = i % 2 == 0;
        let take = if brief {
            2 + (i / 2) % 3
        } else {
            8 + (i / 2) % 5
        };
        let Some(chosen) = pool.take(take) else {
            break;
        };
        let (title, paragraphs) = article(&chosen, lang, brief);
        let url = format!("https://{}/eval/{i}", template.host);
        pages.push(Page {
            url: url.clone(),
            html: fill(template, &title, &paragraphs),
            copy_of: None,
            brief,
            set: template.host.clone(),
            lang,
            truth: score::truth(&title, &paragraphs),
        });
        // Every article has an edited copy: a long one three characters changed or a
        // sentence added in turn; a brief a sentence added to its paragraph or three
        // characters changed in turn.
        let mut edited = paragraphs.clone();
        if (i / 2) % 2 == usize::from(brief) {
            edited[0] = lang.three_changed(&edited[0]);
        } else if brief {
            edited[0] = lang.join(&[edited[0].clone(), lang.added()]);
        } else {
            edited.push(lang.added());
        }
        let title = edited[0]
            .chars()
            .take(title.chars().count())
            .collect::<String>();
        due.push((
            i + 2,
            Page {
                url: format!("https://{}/eval/copy-{i}", template.host),
                html: fill(template, &title, &edited),
                copy_of: Some(url),
                brief,
                set: template.host.clone(),
                lang,
                truth: score::truth(&title, &edited),
            },
        ));
        let (now, later): (Vec<_>, Vec<_>) = due.into_iter().partition(|(at, _)| *at <= i);
        pages.extend(now.into_iter().map(|(_, p)| p));
        due = later;
    }
    pages.extend(due.into_iter().map(|(_, p)| p));
    pages
}

/// The pages of several sequences, one of each in turn (sites interleaved as a crawl of
/// many sites meets them).
fn interleave(sequences: Vec<Vec<Page>>) -> Vec<Page> {
    let mut iters: Vec<std::vec::IntoIter<Page>> =
        sequences.into_iter().map(Vec::into_iter).collect();
    let mut out = Vec::new();
    loop {
        let before = out.len();
        for it in &mut iters {
            out.extend(it.next());
        }
        if out.len() == before {
            return out;
        }
    }
}

/// The language of a template's own paragraphs (English unless most letters are CJK).
fn lang_of(template: &Template) -> Lang {
    let html: String = template
        .paragraphs
        .iter()
        .map(|&(s, e)| &template.html[s..e])
        .collect();
    // The text, not the markup (a Japanese paragraph with furigana is mostly tags).
    let tags = regex::Regex::new(r"(?s)<rt\b.*?</rt>|<[^>]+>").expect("pattern");
    let text = tags.replace_all(&html, "");
    if cjk::cjk_share(&text) < 0.5 {
        Lang::En
    } else if cjk::mostly_hangul(&text) {
        Lang::Ko
    } else if text.chars().any(|c| matches!(c as u32, 0x3040..=0x30ff)) {
        Lang::Ja
    } else {
        Lang::Zh
    }
}

/// The CJK evaluation (`--cjk N`): the one-page templates whose own text is Chinese,
/// Japanese or Korean, and `per_site` pages of each of Debian's CJK sites
/// (templates/cjk.rs), all carrying real prose of their language (templates/cjk.rs).
/// Returns the pages and the number of sentences of prose.
fn cjk_pages_of(
    templates: &mut Vec<Template>,
    per_site: usize,
    extra: &[cjk::Site],
    first_paragraph: bool,
) -> Result<(Vec<Page>, usize)> {
    templates.retain(|t| lang_of(t) != Lang::En);
    let (zh, ja, ko) = (cjk::prose("zh")?, cjk::prose("ja")?, cjk::prose("ko")?);
    let sentences = zh.len() + ja.len() + ko.len();
    let mut pools = HashMap::from([
        (Lang::Zh, Sentences::of(zh)),
        (Lang::Ja, Sentences::of(ja)),
        (Lang::Ko, Sentences::of(ko)),
    ]);
    let mut sequences = vec![build(templates, &mut pools, &lang_of)];
    // One page of each site besides, as a one-page template of a host of its own
    // (`one.HOST`): six articles and four copies on the same page as served, the way a
    // site's single page carries them in the English evaluation.
    let mut one_page: Vec<Template> = Vec::new();
    let mut site_lang: HashMap<String, Lang> = HashMap::new();
    for site in cjk::SITES.iter().chain(extra) {
        let lang = match site.lang {
            "ja" => Lang::Ja,
            "ko" => Lang::Ko,
            _ => Lang::Zh,
        };
        let mut pages = cjk::site_templates(site, per_site, first_paragraph)?;
        if pages.is_empty() {
            println!(
                "site {}: no pages under {} (its Debian package is not installed)",
                site.host, site.folder
            );
            continue;
        }
        // A page the site's own sequence does not carry (else one page would be served by
        // two hosts, a mirror, with different articles).
        let Some(mut single) = pages.pop() else {
            continue;
        };
        single.host = format!("one.{}", site.host);
        site_lang.insert(single.host.clone(), lang);
        one_page.push(single);
        let pool = pools.get_mut(&lang).expect("a pool a language");
        sequences.push(build_site(&pages, pool, lang));
    }
    let lang_of_site = |t: &Template| site_lang.get(&t.host).copied().unwrap_or(Lang::Zh);
    sequences.push(build(&one_page, &mut pools, &lang_of_site));
    Ok((interleave(sequences), sentences))
}

fn main() -> Result<()> {
    let Args {
        dataset,
        python,
        limit,
        verbose,
        boilerplate_set,
        dump,
        cjk_pages,
        as_files: binary,
        sites,
        first_paragraph,
    } = parse_args()?;
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
    let shown = templates.len();
    println!(
        "{shown} one-page templates ({kept_wcxb} from WCXB dev, {} from the boilerplate set; {} left out whose main paragraphs no browser shows as the page's body)",
        shown - kept_wcxb,
        found - shown
    );
    let (pages, texts) = match cjk_pages {
        None => {
            let mut pools = HashMap::from([(Lang::En, Sentences::new(&texts))]);
            (build(&templates, &mut pools, &|_| Lang::En), texts.len())
        }
        Some(per_site) => {
            let (pages, texts) = cjk_pages_of(&mut templates, per_site, &sites, first_paragraph)?;
            println!(
                "{} of them with Chinese, Japanese or Korean paragraphs (the others left out), and Debian's CJK sites",
                templates.len()
            );
            (pages, texts)
        }
    };
    if let Some(folder) = &dump {
        // Every page as served, to look at one with `crawldedup extract`.
        std::fs::create_dir_all(folder)?;
        for page in &pages {
            let name = page.url.trim_start_matches("https://").replace('/', "_");
            std::fs::write(folder.join(format!("{name}.html")), &page.html)?;
        }
    }
    println!(
        "{} hosts, {texts} texts (sentences for CJK), {} pages ({} distinct articles, each of its own sentences)",
        pages
            .iter()
            .map(|p| p.url.split('/').nth(2).unwrap_or(""))
            .collect::<HashSet<_>>()
            .len(),
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
    if let Some(binary) = binary {
        report(
            "crawldedup dedup FILE...",
            &as_files(&binary, &pages, verbose)?,
        );
    }
    if let Some(python) = python {
        report("trafilatura + simhash (k = 3)", &peer(&python, &pages)?);
    }
    Ok(())
}
