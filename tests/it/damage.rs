//! Every part of a populated state directory, of each kind, deleted, cut to half, or swapped
//! with the same part of another state directory: every command that opens the directory
//! either refuses it (and `verify` names a part), or answers as if nothing had happened:
//! no URL answered `new` before is `new` again, no page answered `unique` before is unique
//! again, no page is stored twice and none is lost.

use std::path::{Path, PathBuf};

use crawldedup::fixture::{Site, serve};
use crawldedup::{Config, Dedup, PageVerdict, UrlVerdict};

/// What a stage was told before its directory was damaged.
struct Answered {
    urls: Vec<String>,
    pages: Vec<(String, String)>,
}

fn page_html(article: &crawldedup::fixture::Article) -> String {
    let body: String = article
        .paragraphs
        .iter()
        .map(|p| format!("<p>{p}</p>"))
        .collect();
    format!(
        "<html><head><title>{}</title></head><body><article><h1>{}</h1>{body}</article>\
         </body></html>",
        article.title, article.title
    )
}

/// Opens the stage on `dir` as the sidecar does: with the URL journal (`serve`, and
/// `dedup`, which opens it the same way), or without it (`serve --durability checkpoint`).
fn open_stage(dir: &Path, journaled: bool) -> Result<Dedup, crawldedup::DedupError> {
    if journaled {
        Dedup::open(dir, &Config::default())
    } else {
        Dedup::builder().url_journal(false).open(dir)
    }
}

/// Fills a `serve`/`dedup` state directory as the sidecar does: URLs and pages answered
/// (and made durable) before a checkpoint and after it, so that the directory holds a
/// saved filter, journal generations and an index with documents on both sides. Without
/// the journal, answers are durable at checkpoints: one is taken at the end.
fn populate_stage(dir: &Path, seed: u64, journaled: bool) -> Answered {
    let site = Site::new(seed, 8);
    let stage = open_stage(dir, journaled).unwrap();
    let mut answered = Answered {
        urls: Vec::new(),
        pages: Vec::new(),
    };
    for (i, article) in site.articles().iter().enumerate() {
        for variant in 0..6 {
            let url = format!("https://site{seed}.example{}?v={variant}", article.path());
            assert!(matches!(stage.check_url(&url).unwrap(), UrlVerdict::New(_)));
            answered.urls.push(url);
        }
        let name = format!("https://site{seed}.example{}", article.path());
        let html = page_html(article);
        let verdict = stage
            .check_page(&name, html.as_bytes(), Some("text/html"))
            .unwrap();
        assert!(matches!(verdict, PageVerdict::Unique { .. }), "{verdict:?}");
        answered.pages.push((name, html));
        stage.sync_urls().unwrap();
        stage.sync_pages().unwrap();
        if i == site.articles().len() / 2 {
            stage.checkpoint().unwrap();
        }
    }
    if !journaled {
        stage.checkpoint().unwrap();
    }
    answered
}

/// Whether the stage on `dir` still answers as it did: `Err` with what it forgot.
fn remembers(stage: &Dedup, answered: &Answered) -> Result<(), String> {
    for url in &answered.urls {
        if matches!(stage.check_url(url).unwrap(), UrlVerdict::New(_)) {
            return Err(format!("{url} answered `new` again"));
        }
    }
    for (name, html) in &answered.pages {
        let again = format!("{name}#again");
        match stage
            .check_page(&again, html.as_bytes(), Some("text/html"))
            .unwrap()
        {
            PageVerdict::ExactDuplicate { of } if of.name == *name => {}
            other => return Err(format!("{name} presented again: {other:?}")),
        }
    }
    Ok(())
}

/// Every file and folder under `root`, as paths relative to it, folders before their
/// contents.
fn entries(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut queue = vec![PathBuf::new()];
    while let Some(relative) = queue.pop() {
        for item in std::fs::read_dir(root.join(&relative)).unwrap() {
            let item = item.unwrap();
            let path = relative.join(item.file_name());
            if item.file_type().unwrap().is_dir() {
                queue.push(path.clone());
            }
            found.push(path);
        }
    }
    found.sort();
    found
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for relative in entries(from) {
        let (source, target) = (from.join(&relative), to.join(&relative));
        if source.is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(&source, &target).unwrap();
        }
    }
}

fn remove(path: &Path) {
    if path.is_dir() {
        std::fs::remove_dir_all(path).unwrap();
    } else {
        std::fs::remove_file(path).unwrap();
    }
}

#[derive(Debug, Clone, Copy)]
enum Damage {
    Delete,
    Halve,
    Swap,
}

/// Applies `damage` to `part` of `dir`; `other` is a populated directory of the same kind.
/// `false` when it does not apply (a folder cannot be cut, a part the other lacks cannot be
/// swapped in).
fn apply(damage: Damage, dir: &Path, other: &Path, part: &Path) -> bool {
    let target = dir.join(part);
    match damage {
        Damage::Delete => remove(&target),
        Damage::Halve => {
            if target.is_dir() {
                return false;
            }
            let len = std::fs::metadata(&target).unwrap().len();
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(&target)
                .unwrap();
            file.set_len(len / 2).unwrap();
        }
        Damage::Swap => {
            let source = other.join(part);
            if !source.exists() {
                return false;
            }
            remove(&target);
            if source.is_dir() {
                copy_tree(&source, &target);
            } else {
                std::fs::copy(&source, &target).unwrap();
            }
        }
    }
    true
}

/// `verify`'s verdict on `dir`: the parts it found wrong.
fn verify_problems(dir: &Path, out: Option<&Path>) -> Vec<String> {
    crawldedup::state::verify(dir, out)
        .iter()
        .filter(|p| p.result.is_err())
        .map(ToString::to_string)
        .collect()
}

/// For every part of the state directory `source/state` (`source` itself when `state` is
/// empty) and every damage: a fresh copy of `source` in `scratch/damaged`, the damage done
/// to the part (swapped with `other`'s), and `open` called on the copy's state directory.
/// `open` answers `Ok` when the copy answered as before, or the one-line refusal; a
/// refusal must be one line, and `verify` must name a part. Returns the refusals.
fn each_damage(
    (source, state): (&Path, &str),
    other: &Path,
    scratch: &Path,
    mut open: impl FnMut(&Path, &str) -> Result<(), String>,
) -> usize {
    let mut refused = 0;
    let parts = entries(&source.join(state));
    assert!(parts.len() >= 7, "{parts:?}");
    for part in &parts {
        for damage in [Damage::Delete, Damage::Halve, Damage::Swap] {
            let dir = scratch.join("damaged");
            if dir.exists() {
                std::fs::remove_dir_all(&dir).unwrap();
            }
            copy_tree(source, &dir);
            let copy = dir.join(state);
            if !apply(damage, &copy, other, part) {
                continue;
            }
            let what = format!("{} {damage:?}", part.display());
            let out = dir.join("out");
            let problems = verify_problems(&copy, out.exists().then_some(out.as_path()));
            if let Err(line) = open(&copy, &format!("{what} (verify: {problems:?})")) {
                refused += 1;
                assert!(!line.contains('\n'), "{what}: {line}");
                assert!(
                    !problems.is_empty(),
                    "{what}: refused ({line}) while verify found every part fine"
                );
            }
        }
    }
    refused
}

#[test]
fn every_part_of_a_stage_directory_damaged_is_refused_or_forgets_nothing() {
    for journaled in [true, false] {
        let scratch = tempfile::tempdir().unwrap();
        let (populated, other) = (scratch.path().join("a"), scratch.path().join("b"));
        let answered = populate_stage(&populated, 1, journaled);
        populate_stage(&other, 2, journaled);
        let refused =
            each_damage(
                (&populated, ""),
                &other,
                scratch.path(),
                |dir, what| match open_stage(dir, journaled) {
                    Ok(stage) => match remembers(&stage, &answered) {
                        Ok(()) => Ok(()),
                        Err(forgot) => {
                            panic!("{what} (journal: {journaled}): opened, and {forgot}")
                        }
                    },
                    Err(e) => Err(e.to_string()),
                },
            );
        // The files that hold what was answered are each refused when lost.
        assert!(refused >= 10, "only {refused} damages refused");
    }
}

/// The crawl tests' settings, on two connections and to depth 3.
fn crawl_config(state: &Path, out: &Path, seed: String) -> Config {
    let mut config = crate::common::crawl_config(state, out, seed);
    config.crawl.concurrency = 2;
    config.crawl.max_depth = 3;
    config
}

#[test]
fn every_part_of_a_crawl_directory_damaged_is_refused_or_the_resumed_crawl_loses_nothing() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(serve(Site::without_traps(5, 3))).unwrap();
    let seed = server.url("/");
    let crawl = |state: &Path, out: &Path, max_pages: u64| {
        let mut config = crawl_config(state, out, seed.clone());
        config.crawl.max_pages = max_pages;
        runtime.block_on(crawldedup::crawl::crawl(&config, std::future::pending()))
    };
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path();
    // The whole crawl, uninterrupted: what every resumed crawl must end with.
    crawl(&root.join("whole/state"), &root.join("whole/out"), 0).unwrap();
    let whole = crate::common::stored_urls(&root.join("whole/out"));
    assert!(whole.len() > 10, "{whole:?}");
    // Two crawls stopped half way, the second of the same site in another directory.
    for name in ["a", "b"] {
        crawl(
            &root.join(name).join("state"),
            &root.join(name).join("out"),
            8,
        )
        .unwrap();
    }
    let refused = each_damage(
        (&root.join("a"), "state"),
        &root.join("b/state"),
        root,
        |state, what| {
            let out = state.parent().unwrap().join("out");
            match crawl(state, &out, 0) {
                Ok(_) => {
                    assert_eq!(
                        crate::common::stored_urls(&out),
                        whole,
                        "{what}: resumed, and stored another set"
                    );
                    Ok(())
                }
                Err(e) => Err(e.to_string()),
            }
        },
    );
    assert!(refused >= 8, "only {refused} damages refused");
}
