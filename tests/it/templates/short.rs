//! A short brief (more than tiny, less than twice that) whose copy has a few words changed:
//! no key of the copy may find its original, which is then among the host's last pages.

use crawldedup::{Fingerprint, PageVerdict};

use super::stage;

/// A page of the site: menu, a short headline, the story's paragraph, footer.
fn page(story: &str) -> String {
    format!(
        "<html><body><nav>Home Town Weather</nav><article><h1>Town notes</h1><p>{story}</p>\
         </article><footer>About us</footer></body></html>"
    )
}

const BRIEF: &str = "The library by the station will open an hour longer on weekday evenings \
    from next month, after more students asked for quiet places to work. The council said \
    the extra hours will be paid from the culture budget, and the reading room on the \
    second floor will stay open until ten on Fridays as well.";

const OTHERS: [&str; 3] = [
    "A spring flower festival began in the park on Saturday, and a local band will play \
     two concerts there next weekend. Stalls sell plants, honey and bread made in the \
     valley, and the organisers expect more visitors than last year if the weather holds.",
    "The new bus line to the hospital started running this morning, every ten minutes at \
     rush hour and every twenty at other times. Fares stay the same, and the old stop by \
     the bakery moves fifty metres north while the road works there go on until May.",
    "An old warehouse at the harbour opened as a covered market, and families filled it on \
     its first day. Fishermen sell their catch at the north end, farmers bring vegetables \
     and cheese, and a cafe on the upper floor looks out over the boats in the water.",
];

/// `BRIEF` with four of its words changed (every seventh of its first 25, as a copy edits
/// them) to `word`.
fn edited(word: &str) -> String {
    BRIEF
        .split(' ')
        .filter(|w| !w.is_empty())
        .enumerate()
        .map(|(i, w)| if i % 7 == 3 && i < 25 { word } else { w })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The text the stage compares for `story`'s page, and its fingerprint.
fn fingerprint(story: &str) -> Fingerprint {
    let url = url::Url::parse("https://town.example/").unwrap();
    let prepared = crawldedup::page::prepare(page(story).as_bytes(), None, Some(&url)).unwrap();
    Fingerprint::of(prepared.compared_text())
}

/// A short brief (about 50 words: a record keeps its exact shingle set) and its copy with
/// four words changed, which leaves about 0.6 of their shingles shared: a band key finds
/// such a copy only about nine times in ten. The copy chosen here shares no band key and no
/// simhash table key with its original, so only the host's last pages hold it; it is judged
/// there because its exact likeness confirms it, and found against its own original. The
/// host's other stories stay pages of their own.
#[test]
fn a_short_briefs_copy_that_no_key_finds_is_found_among_its_hosts_last_pages() {
    let original = fingerprint(BRIEF);
    assert!(
        original.tokens > 45 && original.tokens < 75,
        "{}",
        original.tokens
    );
    // The first replacement word whose copy no key of the index would find.
    let copy = [
        "altered", "changed", "revised", "amended", "reworded", "modified", "other",
    ]
    .iter()
    .map(|word| edited(word))
    .find(|copy| {
        let copy = fingerprint(copy);
        let shared_band = (copy.sketch.band_keys().iter())
            .zip(original.sketch.band_keys().iter())
            .any(|(a, b)| a == b);
        !shared_band && copy.simhash.distance(original.simhash) > 8
    })
    .expect("a copy that shares no key with its original");
    let (_dir, stage) = stage(true);
    let check = |url: &str, story: &str| {
        stage
            .check_page(url, page(story).as_bytes(), Some("text/html"))
            .unwrap()
    };
    let verdict = check("https://town.example/a/0", BRIEF);
    assert!(matches!(verdict, PageVerdict::Unique { .. }), "{verdict:?}");
    for (i, story) in OTHERS.iter().enumerate() {
        let verdict = check(&format!("https://town.example/a/{}", i + 1), story);
        assert!(
            matches!(verdict, PageVerdict::Unique { .. }),
            "{i}: {verdict:?}"
        );
    }
    match check("https://town.example/copy/0", &copy) {
        PageVerdict::NearDuplicate { of, .. } => assert_eq!(of.name, "https://town.example/a/0"),
        other => panic!("the copy: {other:?}"),
    }
}
