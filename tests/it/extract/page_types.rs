//! One fixture page per page type: what each keeps and what it drops.

use super::*;

#[test]
fn article_keeps_the_story_and_drops_the_chrome() {
    let out = fixture("article");
    assert_eq!(
        out.title.as_deref(),
        Some("Tidal energy gets a second look")
    );
    assert_eq!(out.language.as_deref(), Some("en-GB"));
    assert_has(
        &out,
        &[
            "Engineers in the northern estuary",
            "What the council decided",
            "- Two turbines stay in the water until spring.",
            "Read the full report for the measurements.",
        ],
    );
    assert_lacks(
        &out,
        &[
            "cookies",
            "Sport",
            "Most read",
            "Copyright",
            "First! Great news",
            "MARKER",
            "Morgan Reed",
        ],
    );
    // Structure: the heading stands alone between blank lines.
    assert!(out.text.contains("expected.\n\nThe new turbines"));
    assert!(out.text.contains("\n\nWhat the council decided\n\n"));
}

#[test]
fn article_links_are_absolute_and_marked_when_in_the_main_text() {
    let out = fixture("article");
    let report = out
        .links
        .iter()
        .find(|l| l.text == "full report")
        .expect("report link");
    assert_eq!(report.url, "https://example.test/reports/tidal-2025.pdf");
    assert!(report.in_main);
    let sport = out.links.iter().find(|l| l.text == "Sport").unwrap();
    assert_eq!(sport.url, "https://example.test/sport");
    assert!(!sport.in_main);
}

#[test]
fn forum_posts_are_content_even_in_comment_classes() {
    let out = fixture("forum");
    assert_has(
        &out,
        &[
            "I am going on holiday for three weeks",
            "The fridge is fine for three weeks",
            "Drying works too",
        ],
    );
    assert_lacks(&out, &["Log in", "Terms", "Joined 2019"]);
}

#[test]
fn documentation_keeps_tables_code_and_numbered_steps() {
    let out = fixture("documentation");
    assert_has(
        &out,
        &[
            "The client retries a request",
            "Option | Default | Meaning",
            "max_retries | 3 | How many times a request is tried again",
            "client = Client(max_retries=5,\n                backoff=1.0)",
            "1. Create the client with the options.\n2. Call the endpoint as usual.",
        ],
    );
    assert_lacks(
        &out,
        &["Installation", "Quick start", "documentation generator"],
    );
}

#[test]
fn product_with_little_visible_text_uses_the_json_ld_description() {
    let out = fixture("product");
    assert_has(
        &out,
        &[
            "double-walled steel flask",
            "tested on long mountain routes",
        ],
    );
    assert_lacks(&out, &["Add to cart", "Shipping"]);
    assert_eq!(out.title.as_deref(), Some("Trail Flask 750 ml"));
}

/// A product page whose schema.org description is substantial: that description is the
/// main text, without the buy box, options and delivery notes around it, unless the page
/// shows much more text than the description holds.
#[test]
fn product_description_in_json_ld_replaces_the_shop_around_it() {
    let sentence = "This stoneware mug is thrown by hand and glazed in a speckled oat finish \
        that varies from piece to piece, so no two are quite alike. ";
    let description = sentence.repeat(4); // 100 words
    let page = |description: &str, extra: &str| {
        format!(
            "<html><head><script type=\"application/ld+json\">{{\"@context\": \
             \"https://schema.org\", \"@type\": \"Product\", \"name\": \"Oat mug\", \
             \"description\": \"{description}\"}}</script></head><body><div class=\"pdp\">\
             <h1>Oat mug</h1><p>$28.00</p><p>Color: Oat</p><p>Only 3 left in stock, order \
             soon</p><p>Free delivery on orders over $50 to most addresses</p>\
             <div class=\"description\"><p>{description}</p></div>{extra}</div></body></html>"
        )
    };
    let out = extract(&page(&description, ""), None);
    assert_has(&out, &["speckled oat finish"]);
    assert_lacks(&out, &["$28.00", "Only 3 left", "Free delivery"]);
    // A page with much more to say than its description keeps its own text.
    let story: String = (0..12)
        .map(|i| {
            format!(
                "<p>Chapter {i} of the making: the clay is wedged, thrown, trimmed and left \
                 to dry for a week before the first firing in the studio kiln, then glazed.</p>"
            )
        })
        .collect();
    let out = extract(&page(&description, &story), None);
    assert_has(&out, &["Chapter 11 of the making", "speckled oat finish"]);
    // So does a page whose description is short.
    let out = extract(&page(sentence, ""), None);
    assert_has(&out, &["Only 3 left", "speckled oat finish"]);
}

#[test]
fn service_page_keeps_every_section() {
    let out = fixture("service");
    assert_has(
        &out,
        &[
            "Roof repair you can book this week",
            "- Chimney repointing",
            "we visit within three working days",
        ],
    );
    assert_lacks(&out, &["newsletter", "registered in England", "Contact"]);
}

#[test]
fn listing_keeps_its_items_although_they_are_links() {
    let out = fixture("listing");
    assert_has(
        &out,
        &[
            "Senior data engineer, streaming platform Lisbon, remote friendly",
            "Database reliability engineer Dublin",
        ],
    );
    assert_lacks(&out, &["Post a job", "Next page", "Sort by", "Privacy"]);
}

#[test]
fn collection_keeps_products_and_drops_the_consent_banner() {
    let out = fixture("collection");
    assert_has(
        &out,
        &[
            "thrown by hand",
            "Speckled oat mug",
            "Moss green travel mug",
        ],
    );
    assert_lacks(&out, &["cookies", "river lane", "Cart"]);
}

/// A manual's page, as documentation generators write it: one short section in `#main`,
/// and beside it the manual's whole table of contents, a list of links classed `toc` that
/// outweighs the section. The section is the page; the contents are navigation. The
/// manual's own contents page, a list of links with no prose beside it, keeps its list.
#[test]
fn a_manual_section_beside_the_manuals_table_of_contents_is_the_section() {
    let toc: String = (1..=80)
        .map(|i| {
            format!("<li><a href=\"s{i}.html\">{i}. Section number {i} of the manual</a></li>")
        })
        .collect();
    let contents =
        format!("<div id=\"tocframe\"><h4>The manual</h4><ul class=\"toc\">{toc}</ul></div>");
    let section = "<div id=\"main\"><h1>4.3 Adding and removing engravers</h1>\
        <p>Engravers can be removed from a context and added to another one, which changes \
        what the context prints. This section shows both, with an example of each.</p>\
        <p>An engraver removed from the staff no longer prints its objects there.</p></div>";
    let page = format!("<html><body>{section}{contents}</body></html>");
    let out = extract(&page, None);
    assert_has(&out, &["Engravers can be removed", "no longer prints"]);
    assert_lacks(&out, &["Section number 17"]);
    let index = format!("<html><body><h1>The manual</h1>{contents}</body></html>");
    assert_has(&extract(&index, None), &["Section number 17 of the manual"]);
}
