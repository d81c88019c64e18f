//! The edited copies of `eval_pairs`: a changed date, an added sentence, comments
//! appended, words replaced, another template, other boilerplate; their recall through the
//! full decision; and short pages made from one template, which must stay apart.

use super::*;

pub(super) fn replace_words(text: &str, fraction: f64, vocab: &[String], rng: &mut Rng) -> String {
    let mut words: Vec<String> = text.split(' ').map(str::to_string).collect();
    let n = ((words.len() as f64) * fraction).ceil() as usize;
    for _ in 0..n {
        let i = rng.below(words.len());
        words[i] = vocab[rng.below(vocab.len())].clone();
    }
    words.join(" ")
}

pub(super) fn insert_sentence(text: &str, rng: &mut Rng) -> String {
    let paragraphs: Vec<&str> = text.split("\n\n").collect();
    let at = rng.below(paragraphs.len() + 1);
    let mut out: Vec<&str> = paragraphs[..at].to_vec();
    out.push("This paragraph was added in a later revision to clarify one point for readers.");
    out.extend_from_slice(&paragraphs[at..]);
    out.join("\n\n")
}

/// A comment thread as long as `words` words, made of sentences of other texts.
pub(super) fn thread(words: usize, pool: &[String], rng: &mut Rng) -> String {
    let mut out = String::from("\n\n42 comments");
    let mut count = 0;
    while count < words {
        let s = &pool[rng.below(pool.len())];
        out.push_str(&format!("\n\nReader {} wrote: {s}", rng.below(1000)));
        count += s.split_whitespace().count() + 2;
    }
    out
}

pub(super) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The text under two page templates, through the extractor.
pub(super) fn templated(text: &str, i: usize) -> (String, String) {
    let paragraphs: Vec<String> = text
        .split("\n\n")
        .map(|p| escape(p.trim()))
        .filter(|p| !p.is_empty())
        .collect();
    let a = format!(
        "<html><head><title>Page {i} | Site A</title></head><body>\
         <header><a href=/>Site A</a><nav><ul><li><a href=/news>News</a></li><li><a href=/about>About us</a></li><li><a href=/contact>Contact</a></li></ul></nav></header>\
         <main><article>{}</article></main>\
         <aside class=sidebar><h3>Popular this week</h3><ul><li><a href=/p1>Ten ways to save on energy bills this winter</a></li><li><a href=/p2>Why the harbour wall keeps failing</a></li></ul></aside>\
         <footer><p>Copyright 2025 Site A Media Ltd. All rights reserved.</p><a href=/privacy>Privacy policy</a></footer></body></html>",
        paragraphs
            .iter()
            .map(|p| format!("<p>{p}</p>"))
            .collect::<String>()
    );
    let b = format!(
        "<html><body><div id=wrapper><div class=top-menu><a href=/x>Home</a> | <a href=/y>Archive</a> | <a href=/z>Shop</a> | <a href=/w>Newsletter</a></div>\
         <div id=cookie-notice>This website uses cookies to give you the best experience. Accept?</div>\
         <div class=content><div class=post-body>{}</div>\
         <div class=share-buttons><a href=/s1>Share on social</a> <a href=/s2>Email this</a></div>\
         <div class=related-posts><h4>You may also like</h4><a href=/r1>Our guide to the best hiking trails in the north</a></div></div>\
         <div class=site-footer>Site B is published by B Publishing Group, registered in Ireland.</div></div></body></html>",
        paragraphs
            .iter()
            .map(|p| format!("<div class=para>{p}</div>"))
            .collect::<String>()
    );
    (
        crawldedup::content::extract(&a, None).text,
        crawldedup::content::extract(&b, None).text,
    )
}

/// The opening of a text, cut at a word boundary to fewer than `max` characters.
pub(super) fn opening(text: &str, max: usize) -> String {
    let mut out = String::new();
    for word in text.split(' ') {
        if out.chars().count() + word.chars().count() + 1 >= max {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

pub(super) const KINDS: [&str; 9] = [
    "date", "sentence", "comment", "thread", "words2%", "words5%", "template", "boiler", "words1%",
];

/// The edited copies of one text, by kind (the thread and template kinds only for long
/// texts).
pub(super) fn edits(
    text: &str,
    i: usize,
    long: bool,
    vocab: &[String],
    pool: &[String],
    rng: &mut Rng,
) -> Vec<(&'static str, String, String)> {
    let mut out = vec![
        (
            "date",
            format!("Posted on 12 May 2024\n\n{text}"),
            format!("Posted on 3 June 2025, updated 4 June 2025\n\n{text}"),
        ),
        ("sentence", text.to_string(), insert_sentence(text, rng)),
        (
            "comment",
            text.to_string(),
            format!("{text}\n\nComment from Sam: thanks, this was really helpful!"),
        ),
        (
            "words1%",
            text.to_string(),
            replace_words(text, 0.01, vocab, rng),
        ),
        (
            "words2%",
            text.to_string(),
            replace_words(text, 0.02, vocab, rng),
        ),
        (
            "words5%",
            text.to_string(),
            replace_words(text, 0.05, vocab, rng),
        ),
        (
            "boiler",
            format!(
                "Share this article\n\n{text}\n\nSubscribe to our newsletter for more stories like this one."
            ),
            format!(
                "Home > News > Local\n\n{text}\n\nRead more: our coverage of the week in review. Follow us for updates."
            ),
        ),
    ];
    if long {
        let words = text.split_whitespace().count();
        out.push((
            "thread",
            text.to_string(),
            format!("{text}{}", thread(words, pool, rng)),
        ));
        let (a, b) = templated(text, i);
        out.push(("template", a, b));
    }
    out
}

#[derive(Default, Clone, Copy)]
pub(super) struct Recall {
    pairs: usize,
    found: usize,
    by_simhash: usize,
    by_band: usize,
}

pub(super) fn recall(
    label: &str,
    texts: &[String],
    long: bool,
    vocab: &[String],
    policy: &Confirm,
) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let pool: Vec<String> = texts
        .iter()
        .flat_map(|t| t.split(". ").map(str::to_string).take(3))
        .filter(|s| s.split_whitespace().count() > 5)
        .collect();
    let mut by_kind: HashMap<&str, Recall> = HashMap::new();
    let mut missed: Vec<(&str, f64)> = Vec::new();
    let mut est: HashMap<&str, Vec<f64>> = HashMap::new();
    for (i, text) in texts.iter().enumerate() {
        for (kind, a, b) in edits(text, i, long, vocab, &pool, &mut rng) {
            let (ia, ib) = (Item::of(&a), Item::of(&b));
            let (s, band, accepted) = decide(policy, &ia, &ib);
            let r = by_kind.entry(kind).or_default();
            r.pairs += 1;
            r.found += usize::from(accepted);
            r.by_simhash += usize::from(s);
            r.by_band += usize::from(band);
            if band || s {
                est.entry(kind)
                    .or_default()
                    .push(ia.fp.sketch.resemblance(&ib.fp.sketch));
            }
            if !accepted && missed.len() < 12 {
                missed.push((kind, exact(&ia.set, &ib.set).0));
            }
        }
    }
    println!("\n== edited copies, {label}: recall of the full decision per kind");
    let (mut all_pairs, mut all_found) = (0, 0);
    for kind in KINDS {
        if let Some(r) = by_kind.get(kind) {
            all_pairs += r.pairs;
            all_found += r.found;
            println!(
                "  {kind:9} {:5} pairs  recall {:.4}  (simhash within {K}: {:.4}, sharing a band: {:.4})",
                r.pairs,
                r.found as f64 / r.pairs as f64,
                r.by_simhash as f64 / r.pairs as f64,
                r.by_band as f64 / r.pairs as f64,
            );
        }
    }
    println!(
        "  all kinds: recall {:.4} ({all_found} of {all_pairs})",
        all_found as f64 / all_pairs.max(1) as f64
    );
    for kind in KINDS {
        if let Some(v) = est.get_mut(kind) {
            print_quantiles(
                &format!("    {kind:9} estimated resemblance of candidates"),
                v,
            );
        }
    }
    for (kind, j) in missed {
        println!("    missed: {kind}, exact Jaccard {j:.3}");
    }
}

/// Short pages made from one template with different names and prices: all must stay
/// apart.
pub(super) fn templated_short_pages(vocab: &[String], policy: &Confirm) {
    let templates = [
        "{name}\n\n{price} EUR\n\nIn stock. Ships within two working days. Free returns for 30 days on every order, and a two-year warranty on all items.",
        "{name} - {price} points\n\nPosted by a member of the community. Log in to reply or to follow this thread and get an email when someone answers.",
        "Event: {name}\n\nTickets from {price} dollars. Doors open at seven, the show starts at eight. Age 18 and over. No refunds after purchase.",
    ];
    templated_pages("", &templates, policy, |rng| {
        (0..3)
            .map(|_| vocab[rng.below(vocab.len())].as_str())
            .collect::<Vec<_>>()
            .join(" ")
    });
}

/// 200 pages of each template, `{name}` and `{price}` filled in, and all their pairs.
pub(super) fn templated_pages(
    label: &str,
    templates: &[&str],
    policy: &Confirm,
    mut name: impl FnMut(&mut Rng) -> String,
) {
    let mut rng = Rng(0x5eed_0000_0000_0001);
    let mut pairs = 0;
    let mut accepted = 0;
    let mut resemblances = Vec::new();
    let mut tiny = 0;
    let mut pages_made = 0;
    for template in templates {
        let pages: Vec<Item> = (0..200)
            .map(|_| {
                let name = name(&mut rng);
                Item::of(
                    &template
                        .replace("{name}", &name)
                        .replace("{price}", &(10 + rng.below(490)).to_string()),
                )
            })
            .collect();
        tiny += pages
            .iter()
            .filter(|p| policy.is_tiny(&p.fp.sketch))
            .count();
        pages_made += pages.len();
        for i in 0..pages.len() {
            for j in i + 1..pages.len() {
                if pages[i].fp.digest != pages[j].fp.digest {
                    pairs += 1;
                    accepted += usize::from(decide(policy, &pages[i], &pages[j]).2);
                    resemblances.push(pages[i].fp.sketch.resemblance(&pages[j].fp.sketch));
                }
            }
        }
    }
    println!(
        "\n== short pages from one template{label}, different names and prices: {accepted} of {pairs} pairs called near-duplicates ({tiny} of {pages_made} pages tiny)"
    );
    print_quantiles("  their estimated resemblance", &mut resemblances);
}
