//! The page stage's promises: verdicts for unique, exact, near and empty pages; short texts
//! confirmed by their sketch; exactly one `Unique` among concurrent callers; and everything
//! before a checkpoint surviving a kill -9.

use std::path::Path;
use std::sync::Arc;

use crawldedup::{Config, Dedup, Fingerprint, PageVerdict, UrlVerdict};

use crate::child;

pub(crate) const STORY: &str = "The harbour council met on Thursday to decide the future of the old ferry \
    pier. After three hours of debate the members agreed to repair the timber deck, to rebuild \
    the stairs on the north side, and to ask the county for a grant that would cover half of \
    the cost. Fishermen who use the pier every morning said they were relieved; the cafe owner \
    on the promenade hopes the summer visitors will come back once the scaffolding is gone. \
    Work is expected to start in the spring and to last until the end of the holiday season.";

pub(crate) const OTHER_STORY: &str = "A new bakery opened on the market square this week, run by two \
    sisters who trained in Lyon. They bake sourdough every night from four o'clock, sell rye \
    loaves and cinnamon buns until noon, and close in the afternoon to teach bread classes for \
    children from the primary school. The queue on the first Saturday reached the bus stop, and \
    the sisters say they will hire a third baker before the winter if the orders keep growing.";

fn page(template: &str, text: &str) -> Vec<u8> {
    let paragraphs: String = text.split(". ").map(|s| format!("<p>{s}.</p>")).collect();
    match template {
        "a" => format!(
            "<html><head><title>News</title></head><body><nav><a href='/'>Home</a> <a href='/sport'>Sport</a></nav>\
             <article><h1>Council news</h1>{paragraphs}</article><footer>Copyright the Gazette</footer></body></html>"
        ),
        _ => format!(
            "<html><body><div class='menu'><a href='/x'>Start</a> <a href='/y'>Archive</a> <a href='/z'>Contact</a></div>\
             <main><h1>Council news</h1>{paragraphs}</main><div id='cookie-banner'>We use cookies.</div></body></html>"
        ),
    }
    .into_bytes()
}

pub(crate) fn open(dir: &Path) -> Dedup {
    Dedup::open(dir, &Config::default()).unwrap()
}

#[test]
fn verdicts_for_unique_exact_near_and_empty_pages() {
    let dir = tempfile::tempdir().unwrap();
    let dedup = open(dir.path());
    let first = dedup
        .check_page("https://a.test/pier", &page("a", STORY), Some("text/html"))
        .unwrap();
    let PageVerdict::Unique { id, simhash, .. } = first else {
        panic!("first page: {first:?}");
    };
    assert_eq!(id, 0);
    assert_eq!(
        simhash,
        Fingerprint::of(
            &crawldedup::content::extract(std::str::from_utf8(&page("a", STORY)).unwrap(), None)
                .text
        )
        .simhash
    );

    // The same text under another template: exactly the same main text.
    match dedup
        .check_page(
            "https://b.test/news/pier",
            &page("b", STORY),
            Some("text/html"),
        )
        .unwrap()
    {
        PageVerdict::ExactDuplicate { of } => {
            assert_eq!((of.id, of.name.as_str()), (0, "https://a.test/pier"))
        }
        other => panic!("template copy: {other:?}"),
    }

    // Small edits: a changed day and a replaced word.
    let edited = STORY
        .replace("Thursday", "Friday")
        .replace("relieved", "pleased");
    match dedup
        .check_page(
            "https://c.test/pier",
            &page("b", &edited),
            Some("text/html"),
        )
        .unwrap()
    {
        PageVerdict::NearDuplicate { of, similarity, .. } => {
            assert_eq!(of.name, "https://a.test/pier");
            assert!(similarity.resemblance >= 0.5, "{similarity:?}");
        }
        other => panic!("edited copy: {other:?}"),
    }

    // A different article on the same site.
    assert!(matches!(
        dedup
            .check_page(
                "https://a.test/bakery",
                &page("a", OTHER_STORY),
                Some("text/html")
            )
            .unwrap(),
        PageVerdict::Unique { id: 1, .. }
    ));

    // No text: empty, binary, script only, and a page that is not HTML.
    for body in [
        &b""[..],
        b"GIF89a\x01\x00\x01\x00\x00\xff\xfe words words",
        b"<html><body><script>x()</script></body></html>",
    ] {
        assert_eq!(
            dedup
                .check_page("https://a.test/empty", body, None)
                .unwrap(),
            PageVerdict::NoText
        );
    }
    assert_eq!(
        dedup
            .check_page(
                "https://a.test/doc.pdf",
                STORY.as_bytes(),
                Some("application/pdf")
            )
            .unwrap(),
        PageVerdict::NoText
    );
    let stats = dedup.stats();
    assert_eq!(
        (
            stats.pages_checked,
            stats.pages_unique,
            stats.pages_exact_duplicate,
            stats.pages_near_duplicate,
            stats.pages_no_text,
            stats.indexed_documents
        ),
        (8, 2, 1, 1, 4, 2)
    );
}

#[test]
fn urls_are_canonicalized_checked_and_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let dedup = open(dir.path());
    let UrlVerdict::New(url) = dedup
        .check_url("HTTP://Example.COM:80/a/../b?utm_source=x&id=2")
        .unwrap()
    else {
        panic!("first sight must be new");
    };
    assert_eq!(url.as_str(), "http://example.com/b?id=2");
    assert!(matches!(
        dedup.check_url("http://example.com/b?id=2#top").unwrap(),
        UrlVerdict::Seen(_)
    ));
    let base = url::Url::parse("http://example.com/dir/page").unwrap();
    assert!(matches!(
        dedup.check_link(&base, "../b?id=2").unwrap(),
        UrlVerdict::Seen(_)
    ));
    assert!(matches!(
        dedup.check_link(&base, "other").unwrap(),
        UrlVerdict::New(_)
    ));
    assert!(matches!(
        dedup.check_url("javascript:alert(1)").unwrap(),
        UrlVerdict::Invalid(_)
    ));
    assert!(matches!(
        dedup.check_url("not a url").unwrap(),
        UrlVerdict::Invalid(_)
    ));
    let stats = dedup.stats();
    assert_eq!(
        (
            stats.urls_checked,
            stats.urls_new,
            stats.urls_seen,
            stats.urls_invalid
        ),
        (6, 2, 2, 2)
    );
}

/// Short product pages from one template: only the name and the price differ.
fn short_template_pages() -> Vec<String> {
    let names = [
        "amber", "birch", "cedar", "delta", "ember", "fjord", "grove", "heron", "iris", "juniper",
        "kestrel", "linden", "maple", "nectar", "onyx", "pebble", "quartz", "raven", "sage",
        "thistle", "umber", "violet", "willow", "yarrow", "zephyr",
    ];
    let mut texts = Vec::new();
    for (i, a) in names.iter().enumerate() {
        for b in &names[i + 1..] {
            let price = 20 + (a.len() * 7 + b.len() * 3) % 80;
            texts.push(format!(
                "{a} {b} lamp, {price} euros. In stock and ready to ship within two working days. \
                 Free returns for thirty days on every order, with a two year warranty."
            ));
        }
    }
    texts
}

#[test]
fn short_pages_of_one_template_stay_apart_and_short_edits_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let dedup = open(dir.path());
    let pages = short_template_pages();
    let mut came_close = 0;
    for (i, text) in pages.iter().enumerate() {
        assert!(text.len() < 500);
        match dedup.check_text(&format!("p{i}"), text).unwrap() {
            PageVerdict::Unique { nearest, .. } => {
                // A refused candidate is reported with its estimates.
                if let Some(nearest) = nearest {
                    assert!(nearest.resemblance < 1.0, "{nearest:?}");
                    came_close += 1;
                }
            }
            other => panic!("{text:?} is another product: {other:?}"),
        }
    }
    // The bands and simhash offered many of them to each other; the sketches refused.
    assert!(dedup.stats().candidates_refused >= 1);
    assert!(came_close >= 1);

    // An edit that keeps most word pairs is still a near-duplicate.
    let short = "The library is open from nine to five on weekdays and from ten to two on \
        Saturdays. Books can be returned at any time through the slot by the main door, and \
        renewals are free of charge for members of every age group in the county.";
    let edited = short.replace("renewals", "extensions");
    assert!(matches!(
        dedup.check_text("s1", short).unwrap(),
        PageVerdict::Unique { .. }
    ));
    match dedup.check_text("s2", &edited).unwrap() {
        PageVerdict::NearDuplicate { of, .. } => assert_eq!(of.name, "s1"),
        other => panic!("edited short text: {other:?}"),
    }
}

#[test]
fn concurrent_callers_get_exactly_one_unique() {
    let dir = tempfile::tempdir().unwrap();
    let dedup = Arc::new(open(dir.path()));
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let dedup = Arc::clone(&dedup);
            std::thread::spawn(move || {
                // Half the threads present the page, half a near copy of it.
                let text = if t % 2 == 0 {
                    STORY.to_string()
                } else {
                    STORY.replace("Thursday", "Tuesday")
                };
                let template = if t % 3 == 0 { "a" } else { "b" };
                let mut uniques = 0;
                for round in 0..20 {
                    let verdict = dedup
                        .check_page(
                            &format!("https://t{t}.test/{round}"),
                            &page(template, &text),
                            None,
                        )
                        .unwrap();
                    uniques += usize::from(matches!(verdict, PageVerdict::Unique { .. }));
                    let url = dedup
                        .check_url(&format!("https://shared.test/{round}"))
                        .unwrap();
                    uniques += 1000 * usize::from(matches!(url, UrlVerdict::New(_)));
                }
                uniques
            })
        })
        .collect();
    let total: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    // One unique page in all, and each of the 20 shared URLs new exactly once.
    assert_eq!(total, 1 + 20 * 1000);
    assert_eq!(dedup.stats().indexed_documents, 1);
}

#[test]
fn dedup_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Dedup>();
}

const CHILD_ENV: &str = "CRAWLDEDUP_DEDUP_CHILD_DIR";
const BEFORE_CHECKPOINT: usize = 300;

fn nth_text(i: usize) -> String {
    // Distinct long texts: a numbered sentence mix.
    let words = [
        "river", "stone", "copper", "lantern", "meadow", "orchard", "signal", "harbour", "winter",
        "engine", "garden", "thunder", "violin", "market", "canyon", "pepper",
    ];
    let mut state = (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (0..120)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            format!("{}{}", words[(state % 16) as usize], state % 97)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn checkpointed_state_survives_kill_9() {
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        let dedup = open(Path::new(&dir));
        for i in 0..BEFORE_CHECKPOINT {
            dedup
                .check_url(&format!("https://site.test/page/{i}"))
                .unwrap();
            dedup.check_text(&format!("doc-{i}"), &nth_text(i)).unwrap();
        }
        dedup.checkpoint().unwrap();
        std::fs::write(Path::new(&dir).join("checkpointed"), "yes").unwrap();
        let mut i = BEFORE_CHECKPOINT;
        loop {
            dedup
                .check_url(&format!("https://site.test/page/{i}"))
                .unwrap();
            dedup.check_text(&format!("doc-{i}"), &nth_text(i)).unwrap();
            i += 1;
        }
    }
    let dir = tempfile::tempdir().unwrap();
    child::kill_after_checkpoint(
        "dedup::checkpointed_state_survives_kill_9",
        CHILD_ENV,
        dir.path(),
        std::time::Duration::from_millis(200),
    );

    let dedup = open(dir.path());
    for i in 0..BEFORE_CHECKPOINT {
        assert!(
            matches!(
                dedup
                    .check_url(&format!("https://site.test/page/{i}"))
                    .unwrap(),
                UrlVerdict::Seen(_)
            ),
            "url {i} forgotten"
        );
        match dedup.check_text("again", &nth_text(i)).unwrap() {
            PageVerdict::ExactDuplicate { of } => assert_eq!(of.name, format!("doc-{i}")),
            other => panic!("document {i}: {other:?}"),
        }
    }
}

#[test]
fn a_corrupt_state_directory_is_refused_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    {
        let dedup = open(dir.path());
        dedup.check_url("https://a.test/").unwrap();
        dedup.checkpoint().unwrap();
    }
    let file = dir.path().join("seen-urls.bloom");
    let mut bytes = std::fs::read(&file).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&file, bytes).unwrap();
    let error = Dedup::open(dir.path(), &Config::default())
        .unwrap_err()
        .to_string();
    assert!(error.contains("seen-urls.bloom"), "{error}");
    assert!(!error.contains('\n'), "{error}");
}

#[test]
fn a_closed_stage_reopens_with_everything_it_answered() {
    let dir = tempfile::tempdir().unwrap();
    let dedup = Dedup::builder().open(dir.path()).unwrap();
    let url = "https://example.com/news/pier";
    assert!(matches!(dedup.check_url(url).unwrap(), UrlVerdict::New(_)));
    let verdict = dedup
        .check_page(url, &page("a", STORY), Some("text/html"))
        .unwrap();
    assert!(matches!(verdict, PageVerdict::Unique { .. }), "{verdict:?}");
    // No checkpoint: the close makes the answers durable.
    let report = dedup.close().unwrap();
    assert_eq!(report.documents, 1);
    let dedup = Dedup::builder().open(dir.path()).unwrap();
    assert!(matches!(dedup.check_url(url).unwrap(), UrlVerdict::Seen(_)));
    let verdict = dedup
        .check_page(
            "https://mirror.example/pier",
            &page("b", STORY),
            Some("text/html"),
        )
        .unwrap();
    assert!(
        matches!(verdict, PageVerdict::ExactDuplicate { ref of } if of.name == url),
        "{verdict:?}"
    );
}
