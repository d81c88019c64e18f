//! Decoding and main-content extraction on fixture pages the project ships (one per page
//! type), pages encoded in each common charset, and hostile inputs.

use crawldedup::content::decode::{CharsetSource, decode};
use crawldedup::content::{Extracted, extract, extract_bytes};
use proptest::prelude::*;
use url::Url;

fn fixture(name: &str) -> Extracted {
    let path = format!(
        "{}/tests/fixtures/pages/{name}.html",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).unwrap();
    let url = Url::parse(&format!("https://example.test/{name}/page")).unwrap();
    extract_bytes(&bytes, Some("text/html"), Some(&url))
}

fn assert_has(out: &Extracted, wanted: &[&str]) {
    for w in wanted {
        assert!(out.text.contains(w), "missing {w:?} in:\n{}", out.text);
    }
}

fn assert_lacks(out: &Extracted, unwanted: &[&str]) {
    for u in unwanted {
        assert!(!out.text.contains(u), "unwanted {u:?} in:\n{}", out.text);
    }
}

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

/// A page whose content is drawn by script leaves only its site footer in the markup: the
/// footer is not the content, however much of the page it is. An article's own footer
/// (inside `article`) is judged like any other element.
#[test]
fn a_page_with_only_its_site_footer_has_no_main_text() {
    let links: String = (0..40)
        .map(|i| format!("<li><a href=\"/help/{i}\">Help topic number {i} for shoppers</a></li>"))
        .collect();
    let html = format!(
        "<html><body><div id=\"root\"></div><footer><h3>Help</h3><ul>{links}</ul>\
         <p>Copyright 2026 Example Shop Holdings. All rights reserved worldwide.</p>\
         </footer></body></html>"
    );
    let url = Url::parse("https://shop.example.test/item/1").unwrap();
    let out = extract(&html, Some(&url));
    assert_eq!(out.text, "", "{}", out.text);
    let article = "<html><body><article><h1>Tide tables</h1><p>The spring tides arrive \
        twice a month, when the sun and moon line up, and the range between high and low \
        water is at its widest.</p><footer>Filed under coasts</footer></article>\
        <footer><a href=\"/about\">About us</a></footer></body></html>";
    let out = extract(article, Some(&url));
    assert_has(&out, &["spring tides arrive"]);
    assert_lacks(&out, &["About us"]);
}

/// A block introduced by a heading that names it as recommendations ("You may also
/// like") is not the content, though nothing in its markup says so.
#[test]
fn a_block_headed_as_recommendations_is_dropped() {
    let cards: String = (0..6)
        .map(|i| {
            format!(
                "<div class=\"card\"><p>Stoneware mug number {i}, glazed in speckled oat</p>\
                 <p>$1{i}.00</p></div>"
            )
        })
        .collect();
    let html = format!(
        "<html><body><div class=\"product\"><h1>Walnut side table</h1><p>A small side \
         table in oiled walnut, with a lower shelf for books and a drawer that runs on wooden \
         rails. Each one is made to order in our workshop and takes three weeks to finish.</p>\
         <p>Height 55 cm, top 40 by 40 cm. Oiled finish; wipe with a damp cloth.</p></div>\
         <div class=\"module\"><div class=\"title\"><h2>You may also like</h2></div>\
         <div class=\"row\">{cards}</div></div></body></html>"
    );
    let out = extract(&html, None);
    assert_has(&out, &["oiled walnut", "Height 55 cm"]);
    assert_lacks(&out, &["Stoneware mug", "You may also like"]);
    for heading in [
        "People who viewed this item also viewed",
        "Related searches",
        "Sponsored items from this category",
        "More like this",
        "More stories",
        "Read next",
        "Most popular",
        "Latest news",
    ] {
        let out = extract(&html.replace("You may also like", heading), None);
        assert_has(&out, &["oiled walnut"]);
        assert_lacks(&out, &["Stoneware mug", heading]);
    }
    // A section of a document that happens to be called so, among sibling sections under
    // one parent, is content: the heading does not open a block of its own.
    let spec = "<html><body><div class=\"docs\"><h1>Product feed fields</h1>\
        <h3>Prices</h3><p>The price field holds the amount and the currency code, and the \
        sale price field holds the reduced amount while a sale lasts.</p>\
        <h3>Related products</h3><p>The related products field lists the identifiers of \
        items that are sold alongside this one, separated by commas.</p></div></body></html>";
    let out = extract(spec, None);
    assert_has(
        &out,
        &[
            "price field holds",
            "Related products",
            "identifiers of items",
        ],
    );
}

/// A block the page carries twice (once for small screens, once for large) is read once;
/// short repeated blocks (a "Price" label, a one-line heading) stay where they are.
#[test]
fn a_block_repeated_for_another_screen_size_is_kept_once() {
    let para = "The walnut desktop is finished with a water-based lacquer that keeps the grain \
        visible and resists rings from mugs and glasses.";
    let html = format!(
        "<html><body><main><h1>Walnut desk</h1>\
         <div class=\"desktop\"><p>{para}</p><p>Price</p></div>\
         <div class=\"mobile\"><p>{para}</p><p>Price</p></div>\
         <p>Ships in two weeks from the workshop in Leeds, packed flat.</p></main></body></html>"
    );
    let out = extract(&html, None);
    assert_eq!(
        out.text.matches("water-based lacquer").count(),
        1,
        "{}",
        out.text
    );
    assert_eq!(out.text.matches("Price").count(), 2, "{}", out.text);
    assert_has(&out, &["Walnut desk", "Ships in two weeks"]);
    assert!(!out.text.contains("\n\n\n"), "{:?}", out.text);
    // Paragraphs drawn as `div`s (one line each, no blank line between) too.
    let other = "Another paragraph stands between the two copies and is long enough to \
        count as a block of its own.";
    let divs = format!(
        "<html><body><div class=\"post\"><div>{para}</div><div>{other}</div>\
         <div>{para}</div></div></body></html>"
    );
    let out = extract(&divs, None);
    assert_eq!(
        out.text.matches("water-based lacquer").count(),
        1,
        "{}",
        out.text
    );
    assert_has(&out, &["Another paragraph stands"]);
}

/// A category page that is nothing but a grid of cards, each a title link: every card is
/// link-dense and none is a large part of the page, yet together they are the content.
#[test]
fn a_grid_of_title_links_is_the_content_when_nothing_else_is() {
    let cards: String = (0..24)
        .map(|i| {
            format!(
                "<article class=\"card\"><header><h2><a href=\"/recipe/{i}\">Crispy air \
                 fryer recipe number {i} with lemon</a></h2></header>\
                 <div class=\"rating\"></div></article>"
            )
        })
        .collect();
    let html = format!(
        "<html><body><nav><a href=\"/\">Home</a> <a href=\"/all\">All recipes</a></nav>\
         <main>{cards}</main></body></html>"
    );
    let out = extract(&html, None);
    assert_has(
        &out,
        &["recipe number 0 with lemon", "recipe number 23 with lemon"],
    );
    assert_lacks(&out, &["All recipes"]);
}

/// A mega-menu in a `nav` can hold more text than the page itself; it is still a menu.
#[test]
fn a_nav_of_links_larger_than_the_page_is_still_dropped() {
    let menu: String = (0..300)
        .map(|i| format!("<li><a href=\"/c/{i}\">Department number {i}</a></li>"))
        .collect();
    let html = format!(
        "<html><body><header><nav><ul>{menu}</ul></nav></header>\
         <div><h1>Oak dining chair</h1><p>Solid oak frame with a woven paper-cord seat, \
         finished in clear oil. Seat height 46 cm.</p><ul><li>Frame: solid oak</li>\
         <li>Seat: paper cord</li></ul></div></body></html>"
    );
    let out = extract(&html, None);
    assert_has(&out, &["woven paper-cord seat", "Frame: solid oak"]);
    assert_lacks(&out, &["Department number"]);
    // So is an `aside` of archive links, or a site header of links without a `nav`.
    for wrapper in ["aside", "header"] {
        let html = html.replace("<header><nav>", &format!("<{wrapper}><div>"));
        let html = html.replace("</nav></header>", &format!("</div></{wrapper}>"));
        let out = extract(&html, None);
        assert_has(&out, &["woven paper-cord seat"]);
        assert_lacks(&out, &["Department number"]);
    }
    // A site header is never the content, even when its menu carries a line of prose per
    // entry and outweighs the page; a page-level header that holds the `h1` stays.
    let described: String = (0..60)
        .map(|i| {
            format!(
                "<li><a href=\"/c/{i}\">Department number {i}</a><p>Everything for \
                 the kitchen and the table, from pans to linen {i}.</p></li>"
            )
        })
        .collect();
    let html = format!(
        "<html><body><header><div class=\"menu\"><ul>{described}</ul></div></header>\
         <div><h1>Oak dining chair</h1><p>Solid oak frame with a woven paper-cord seat, \
         finished in clear oil. Seat height 46 cm.</p></div></body></html>"
    );
    let out = extract(&html, None);
    assert_has(&out, &["woven paper-cord seat"]);
    assert_lacks(&out, &["Department number", "pans to linen"]);
    let titled = "<html><body><header><h1>Oak dining chair</h1><p>Solid oak frame with a \
        woven paper-cord seat, finished in clear oil.</p></header><div><p>Seat height 46 cm.\
        </p></div></body></html>";
    assert_has(
        &extract(titled, None),
        &["woven paper-cord seat", "Seat height"],
    );
    // A `nav` that is mostly prose (a table of contents with explanations) is judged
    // like any other block.
    let prose = "<html><body><nav><p>This guide walks through the setup in three parts, \
        from installing the tools to running the first job and reading its report.</p>\
        </nav><p>Short.</p></body></html>";
    assert_has(&extract(prose, None), &["walks through the setup"]);
}

/// A list of links that a sentence ending in a colon introduces is part of the text (the
/// patches a release report names); a row of links with no such introduction is not.
#[test]
fn a_list_of_links_introduced_by_a_colon_is_content() {
    let body = "The compiler backend gained a lot this month, and most of the work went into \
        the code generator and its tests, which now pass on two more architectures.";
    let html = format!(
        "<html><body><article><h1>Progress report</h1><p>{body}</p>\
         <p>These patches were merged upstream:</p><div class=\"ulist\"><ul>\
         <li><a href=\"/p/1\">Support packed structs</a></li>\
         <li><a href=\"/p/2\">Fix volatile loads</a></li>\
         <li><a href=\"/p/3\">Add weak variables</a></li></ul></div>\
         <p>{body}</p><ul><li><a href=\"/\">Home</a></li><li><a href=\"/archive\">\
         Archive</a></li><li><a href=\"/feed\">Feed</a></li></ul></article></body></html>"
    );
    let out = extract(&html, None);
    assert_has(
        &out,
        &[
            "merged upstream:",
            "Support packed structs",
            "Add weak variables",
        ],
    );
    assert_lacks(&out, &["Archive"]);
}

/// A label written as a paragraph all in bold, or as a `div` of its own, heads a section
/// as an `h2` would: one that names recommendations takes what follows it, and one over a
/// list that goes goes with it. A bold label that ends in a colon introduces its list,
/// which stays.
#[test]
fn labels_that_stand_as_headings_are_read_as_headings() {
    let story = "<h1>The harbour reopens after a winter of repairs</h1><p>The harbour \
        reopened on Monday after five months of work on its walls and quays, and the first \
        ferries of the season docked in the afternoon.</p><p>The town council paid for most \
        of the work, with a grant from the regional fund covering the new lights and the \
        wider slipway for the lifeboat.</p><p>Boat owners who moved their boats to the \
        river for the winter can bring them back from next week, when the pontoons are in \
        place again; the harbour office asks them to book a berth first, as the outer quay \
        stays closed until the paint on its railings has dried. The harbour master expects \
        a busy summer, with more visiting yachts than last year.</p><p>The old fish \
        market on the north quay will open as a café in June, run by the rowing club.</p>";
    let teasers = "<ul><li><a href=\"/a\">Fishing quotas for next year are set</a></li>\
        <li><a href=\"/b\">A new bakery opens on the market square</a></li>\
        <li><a href=\"/c\">The ferry timetable changes in March</a></li></ul>";
    for label in [
        "<p><strong>Auch interessant:</strong></p>",
        "<p><b>Read next</b></p>",
        "<div class=\"headline\">Das könnte Sie auch interessieren</div>",
        "<p><strong>Harbour</strong></p>",
    ] {
        let html = format!("<html><body><article>{story}{label}{teasers}</article></body></html>");
        let out = extract(&html, None);
        assert_has(&out, &["harbour reopened", "wider slipway"]);
        assert_lacks(
            &out,
            &[
                "Fishing quotas",
                "Interessant",
                "interessant",
                "Read next",
                "Harbour\n",
            ],
        );
    }
    // A named label takes prose after it too, up to the next heading.
    let html = format!(
        "<html><body><article>{story}<p><strong>Schon gelesen?</strong></p>\
         <blockquote><p>Die Fähre fährt im Winter seltener, schreibt die Redaktion.</p>\
         </blockquote></article></body></html>"
    );
    let out = extract(&html, None);
    assert_has(&out, &["harbour reopened"]);
    assert_lacks(&out, &["Schon gelesen", "Fähre"]);
    // Bold inside a sentence is no label, and a label ending in a colon keeps its list.
    let html = format!(
        "<html><body><article>{story}<p>The <strong>works</strong> ran late.</p>\
         <p><strong>What the harbour master bought:</strong></p>{teasers}</article></body></html>"
    );
    let out = extract(&html, None);
    assert_has(
        &out,
        &[
            "The works ran late",
            "harbour master bought:",
            "Fishing quotas",
        ],
    );
}

/// "header" in a class names the site's header only when the element is made of links; the
/// header of an accordion pane or a card holds content.
#[test]
fn blocks_called_headers_that_hold_text_are_content() {
    let intro = "Freelancers ask the same few questions before they pick a tool: what it \
        costs once the trial ends, whether it sends reminders for unpaid invoices, and how \
        much of the year-end paperwork it can prepare for the accountant.";
    let panes: String = (0..3)
        .map(|i| {
            format!(
                "<div class=\"accordion-header\"><h3>Question {i}</h3><p>The answer to \
                 question {i} explains how the plan handles invoices, receipts and the \
                 quarterly tax estimate in a few plain sentences.</p></div>"
            )
        })
        .collect();
    let html = format!(
        "<html><body><div class=\"site-header\"><a href=\"/\">Home</a> \
         <a href=\"/pricing\">Pricing</a> <a href=\"/blog\">Blog</a></div>\
         <div class=\"entry\"><h1>Accounting for freelancers</h1>\
         <p>{intro}</p><p>{intro}</p><p>{intro}</p>{panes}</div>\
         </body></html>"
    );
    let out = extract(&html, None);
    assert_has(&out, &["answer to question 0", "answer to question 2"]);
    assert_lacks(&out, &["Pricing"]);
}

/// React streams server-rendered segments after the page's shell, each as a hidden `div`
/// that a script moves into place: their text is the page's.
#[test]
fn a_segment_streamed_by_react_is_read_although_marked_hidden() {
    let html = "<html><body><div id=\"root\"><header>Shop</header>\
        <template id=\"B:1\"></template><p>Loading</p></div>\
        <div hidden id=\"S:1\"><h1>Linen apron</h1><p>Heavy washed linen with two deep \
        pockets and cross-back straps that take the weight off the neck.</p></div>\
        <div hidden id=\"drawer\"><p>Your basket is empty, and here is a long note about \
        delivery times that nobody sees until the drawer opens.</p></div>\
        <script>$RC(\"B:1\",\"S:1\")</script></body></html>";
    let out = extract(html, None);
    assert_has(&out, &["cross-back straps"]);
    assert_lacks(&out, &["basket is empty"]);
}

/// A blog theme heads every page with the site's name as an `h1` and gives each sidebar
/// widget an `h1` of its own. Under a short post the sidebar (an archive, a blurb about the
/// blog, popular posts) holds more text than the post; it sits beside the post's
/// `article`, named the sidebar, and goes.
#[test]
fn a_sidebar_longer_than_a_short_post_goes() {
    let widgets: String = (0..6)
        .map(|w| {
            let items: String = (0..8)
                .map(|i| format!("<li><a href=\"/a{w}{i}\">Harbour archive entry {w}-{i}</a></li>"))
                .collect();
            format!("<aside class=\"sidebar-widget\"><h1 class=\"widget-title\">Widget {w}</h1><ul>{items}</ul></aside>")
        })
        .collect();
    let html = format!(
        "<html><head><meta property=\"og:type\" content=\"article\"></head><body>\
        <header><h1 id=\"site-title\">Harbour Diary</h1></header><div id=\"main\">\
        <div id=\"primary\"><article><h1>Back on the water after a long winter</h1>\
        <p>The boat went back in on Saturday, two weeks later than last year, because the \
        yard was short of hands and the cradle needed welding before the lift.</p>\
        <p>The engine started on the second try, and the log shows four hours out to the \
        lighthouse and back with a steady west wind.</p></article></div>\
        <div id=\"secondary\" class=\"widget-area\" role=\"complementary\">\
        <aside class=\"sidebar-widget\"><h1 class=\"widget-title\">About</h1><p>A diary \
        of a small boat on a cold coast, written since 2013 by one sailor and read by a \
        few friends who like the sea, the weather and the harbour gossip.</p></aside>\
        {widgets}</div></div></body></html>"
    );
    let out = extract(&html, None);
    assert_has(&out, &["cradle needed welding", "steady west wind"]);
    assert_lacks(&out, &["A diary of a small boat", "Harbour archive entry"]);
}

/// The box about the writer under a post, marked as the post's author in microdata,
/// is the same under every post of that writer: it goes, whatever its class words.
#[test]
fn the_author_box_marked_in_microdata_goes() {
    let html = "<html><body><article><h1>Ferry timetable changes for the winter season</h1>\
        <p>From November the harbour ferry runs every forty minutes, and the last boat \
        leaves at ten in the evening instead of midnight, the operator said on Monday.</p>\
        <p>Season tickets keep their price, and bicycles still travel free of charge on \
        every crossing, including the night boats at the weekend.</p>\
        <div class=\"col-md-12\">About the writer</div><div class=\"box-wrap\" \
        itemprop=\"author\" itemscope itemtype=\"http://schema.org/Person\"><div>Ada \
        Example</div><p>Ada has written about ships, tides and the people of the harbour \
        for twenty years, and sails a small boat of her own when the weather allows.</p>\
        </div></article></body></html>";
    let out = extract(html, None);
    assert_has(&out, &["every forty minutes", "free of charge"]);
    assert_lacks(&out, &["written about ships"]);
}

/// Text written for screen readers only (the labels of a hidden info box, "link is
/// external" after a link) is not what the page shows, and sites add it to every page.
#[test]
fn text_for_screen_readers_only_is_left_out() {
    let html = "<html><body><article><h1>Ferry timetable changes for the winter</h1>\
        <p>From November the harbour ferry runs every forty minutes, and the last boat \
        leaves at ten in the evening instead of midnight.</p><div class=\"infobox\">\
        <span class=\"hideCompletely\">Further information</span><p>The timetable is \
        posted at both piers.</p><span class=\"element-invisible\">End of further \
        information</span></div><p>Read the <a href=\"/t\">full timetable<span \
        class=\"offscreen\"> (link is external)</span></a> before you travel.</p>\
        </article></body></html>";
    let out = extract(html, None);
    assert_has(
        &out,
        &[
            "every forty minutes",
            "posted at both piers",
            "full timetable",
        ],
    );
    assert_lacks(
        &out,
        &["Further information", "End of further", "link is external"],
    );
}

/// The collapsed panels of an accordion or a set of tabs are hidden until a button opens
/// them, but they are the page's content; a hidden drawer or a decorative layer is not.
#[test]
fn collapsed_accordion_and_tab_panels_are_read() {
    let html = "<html><body><main><h1>Mechanical keyboard</h1><p>A 75% board with hall \
        effect switches, whose actuation point you set per key, from a feather touch for \
        games to a deep press for typing, in the companion app or on the board itself. \
        The case is a single block of aluminium with a gasket-mounted plate.</p><button aria-controls=\"p1\">Shipping</button>\
        <div id=\"p1\" role=\"region\" aria-hidden=\"true\"><p>Most orders ship within two \
        days of ordering, from our own warehouse.</p></div><button>Specs</button>\
        <div role=\"tabpanel\" hidden><p>Hot-swappable sockets, aluminium case, 2.4 GHz \
        wireless and a wired mode.</p></div></main>\
        <div aria-hidden=\"true\"><p>Your basket is empty, and this layer only shows when \
        the basket icon is pressed.</p></div></body></html>";
    let out = extract(html, None);
    assert_has(
        &out,
        &[
            "hall effect",
            "ship within two days",
            "Hot-swappable sockets",
        ],
    );
    assert_lacks(&out, &["basket is empty"]);
}

/// An icon whose `</svg>` is missing ends where the page's markup resumes, as in a
/// browser; it does not take the rest of the page with it.
#[test]
fn an_unclosed_svg_does_not_swallow_the_page() {
    let html = "<html><body><header><a href=\"/\"><svg class=\"logo\" width=18></a>\
        </header><main><h1>Security assessments</h1><p>Our consultants review your \
        network design against a published framework and report the gaps they find, \
        ranked by risk.</p></main></body></html>";
    let out = extract(html, None);
    assert_has(&out, &["report the gaps they find, ranked by risk"]);
    assert_eq!(out.title.as_deref(), Some("Security assessments"));
}

// ---------------------------------------------------------------------------------------
// Charsets.

const FRENCH: &str = "Le cœur du problème : où sont passées les données ? Déjà réglé, garçon. \
    Les élèves étudient l'été à la bibliothèque près de la forêt, où l'on entend les oiseaux.";
const GERMAN: &str = "Größere Änderungen für Bäcker: Öfen müssen überprüft werden, heißt es. \
    Die Prüfung dauert während der Woche länger, weil viele Betriebe gleichzeitig schließen.";
const CHINESE_SIMPLIFIED: &str = "中华人民共和国是位于东亚的国家，首都是北京。这里有悠久的历史和丰富的文化，\
    许多游客每年都来参观长城和故宫，品尝各地的美食，体验传统节日的热闹气氛。";
const CHINESE_TRADITIONAL: &str = "臺灣是位於東亞的島嶼，擁有豐富的自然景觀與多元的文化。許多旅客會到臺北參觀\
    博物館，品嚐夜市的小吃，並搭乘高速鐵路前往南部，欣賞美麗的海岸與山脈風光。";
const JAPANESE: &str = "日本の首都は東京です。春には桜が咲き、多くの人々が公園で花見を楽しみます。\
    秋には紅葉が美しく、京都の寺院を訪れる観光客がとても多くなります。ありがとうございました。";
const KOREAN: &str = "대한민국의 수도는 서울입니다. 봄에는 벚꽃이 피고 많은 사람들이 공원에서 산책을 \
    즐깁니다. 가을에는 단풍이 아름답고 여러 지역에서 다양한 축제가 열립니다. 감사합니다.";

/// Each class of boilerplate that sites serve around a short story (see
/// `crawldedup::fixture::Leak`), on 20 pages each: the story is kept whole and none of the
/// block's text is.
#[test]
fn boilerplate_around_a_short_story_is_left_out_by_what_it_looks_like() {
    use crawldedup::fixture::{Leak, leak_page};
    let mut faults = Vec::new();
    for leak in Leak::ALL {
        for i in 0..20 {
            let page = leak_page(leak, 11, i);
            let out = extract(&page.html, None);
            if !out.text.contains(&page.story) {
                faults.push(format!(
                    "{leak:?} page {i}: the story is missing from {:?}",
                    out.text
                ));
            }
            for piece in &page.boilerplate {
                if out.text.contains(piece.as_str()) {
                    faults.push(format!("{leak:?} page {i}: kept {piece:?}"));
                }
            }
        }
    }
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

/// Every block of the main text carries a kind, and the text is the same with or without
/// them: one kind per blank-line-separated block, on every fixture page.
#[test]
fn each_block_of_the_text_says_what_it_is() {
    use crawldedup::content::BlockKind;
    let names = [
        "article",
        "forum",
        "documentation",
        "product",
        "service",
        "listing",
        "collection",
    ];
    for name in names {
        let out = fixture(name);
        assert_eq!(
            out.blocks.len(),
            out.text.split("\n\n").count(),
            "{name}: {:?}\n{}",
            out.blocks,
            out.text
        );
    }
    let out = fixture("article");
    let kinds: Vec<(String, BlockKind)> = out
        .blocks_with_kinds()
        .map(|(b, k)| (b.to_string(), k))
        .collect();
    assert!(
        kinds
            .iter()
            .any(|(b, k)| b.starts_with("- ") && *k == BlockKind::List),
        "{kinds:?}"
    );
    assert!(
        kinds
            .iter()
            .all(|(b, k)| b.starts_with("- ") || *k == BlockKind::Story),
        "{kinds:?}"
    );
    // A listing's links are a list.
    let listing = fixture("listing");
    assert!(
        listing.blocks.contains(&BlockKind::List),
        "{:?}",
        listing.blocks
    );
}

fn page_in(charset: &str, text: &str, declared: bool) -> Vec<u8> {
    let encoding = encoding_rs::Encoding::for_label(charset.as_bytes()).unwrap();
    let meta = if declared {
        format!("<meta charset=\"{charset}\">")
    } else {
        String::new()
    };
    let html =
        format!("<html><head>{meta}<title>t</title></head><body><p>{text}</p></body></html>");
    let (bytes, _, unmappable) = encoding.encode(&html);
    assert!(!unmappable, "{charset} cannot encode the sample");
    bytes.into_owned()
}

#[test]
fn pages_in_each_charset_decode_with_and_without_a_declaration() {
    let cases = [
        ("utf-8", FRENCH),
        ("windows-1252", FRENCH),
        ("iso-8859-1", GERMAN),
        ("gbk", CHINESE_SIMPLIFIED),
        ("big5", CHINESE_TRADITIONAL),
        ("shift_jis", JAPANESE),
        ("euc-kr", KOREAN),
    ];
    for (charset, text) in cases {
        let expected = encoding_rs::Encoding::for_label(charset.as_bytes()).unwrap();
        for declared in [true, false] {
            let bytes = page_in(charset, text, declared);
            let decoded = decode(&bytes, None, None);
            assert_eq!(
                decoded.encoding,
                expected,
                "{charset} (declared: {declared}) decoded as {}",
                decoded.encoding.name()
            );
            let wanted_source = if declared {
                CharsetSource::Meta
            } else if charset == "utf-8" {
                CharsetSource::ValidUtf8
            } else {
                CharsetSource::Sniffed
            };
            assert_eq!(decoded.source, wanted_source, "{charset} {declared}");
            assert!(!decoded.had_errors);
            let out = extract_bytes(&bytes, None, None);
            assert!(
                out.text.contains(text),
                "{charset} {declared}: {}",
                out.text
            );
        }
    }
}

#[test]
fn header_charset_wins_over_meta_and_bom_wins_over_header() {
    let bytes = page_in("gbk", CHINESE_SIMPLIFIED, false);
    let mut with_wrong_meta = b"<meta charset=\"big5\">".to_vec();
    with_wrong_meta.extend_from_slice(&bytes);
    let decoded = decode(&with_wrong_meta, Some("text/html; charset=GB2312"), None);
    assert_eq!(decoded.source, CharsetSource::Header);
    assert!(decoded.text.contains(CHINESE_SIMPLIFIED));

    let mut bom = vec![0xEF, 0xBB, 0xBF];
    bom.extend_from_slice("<p>naïve</p>".as_bytes());
    let decoded = decode(&bom, Some("text/html; charset=windows-1252"), None);
    assert_eq!(decoded.source, CharsetSource::Bom);
    assert_eq!(decoded.text, "<p>naïve</p>");
}

#[test]
fn unknown_labels_are_ignored_and_invalid_bytes_replaced() {
    let decoded = decode(
        b"<p>caf\xc3\xa9 \xff</p>",
        Some("text/html; charset=klingon"),
        None,
    );
    assert_ne!(decoded.source, CharsetSource::Header);
    let decoded = decode(
        b"<p>caf\xc3\xa9 \xc3</p>",
        Some("text/html; charset=utf-8"),
        None,
    );
    assert!(decoded.had_errors);
    assert!(decoded.text.contains('\u{FFFD}'));
}

// ---------------------------------------------------------------------------------------
// Hostile input.

#[test]
fn empty_and_binary_input_give_empty_text() {
    assert_eq!(extract("", None).text, "");
    let binary: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let out = extract_bytes(&binary, Some("application/octet-stream"), None);
    assert!(out.links.is_empty());
}

#[test]
fn a_50_mb_page_on_one_line_is_extracted() {
    let mut html = String::with_capacity(50 * 1024 * 1024 + 64);
    html.push_str("<html><body><p>");
    while html.len() < 50 * 1024 * 1024 {
        html.push_str("lorem ipsum dolor sit amet ");
    }
    html.push_str("</p></body></html>");
    let out = extract(&html, None);
    assert!(out.text.len() > 49 * 1024 * 1024);
    assert!(!out.text.contains('\n'));
}

#[test]
fn deep_nesting_neither_overflows_nor_loses_text() {
    for tag in ["div", "span", "section", "blockquote", "ul"] {
        let html = format!(
            "<body>{}deep text{}",
            format!("<{tag}>").repeat(100_000),
            format!("</{tag}>").repeat(100_000)
        );
        let out = extract(&html, None);
        assert!(out.text.contains("deep text"), "{tag}");
    }
    let unclosed = "<div><p>open paragraph <b>bold <i>italic <table><tr><td>cell".repeat(20_000);
    let out = extract(&unclosed, None);
    assert!(out.text.contains("open paragraph bold italic"));
}

#[test]
fn unclosed_raw_text_elements_swallow_only_themselves() {
    let out = extract("<p>kept text here</p><script>never closed <p>hidden", None);
    assert_eq!(out.text, "kept text here");
    let out = extract("<p>kept</p><!-- never closed <p>hidden", None);
    assert_eq!(out.text, "kept");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Text inside script, style and template never reaches the output, however the
    /// surrounding markup is built.
    #[test]
    fn raw_text_never_leaks(
        parts in prop::collection::vec(
            prop_oneof![
                "[a-z ]{0,20}".prop_map(|t| format!("<p>{t}</p>")),
                "[a-z ]{0,20}".prop_map(|t| format!("<div class=\"content\">{t}")),
                Just("</div>".to_string()),
                Just("<ul><li>".to_string()),
                "[a-z<>/ ]{0,12}".prop_map(|t| format!("<script>var s='{t} SECRET';</script>")),
                "[a-z ]{0,12}".prop_map(|t| format!("<style>p::after{{content:'{t} SECRET'}}</style>")),
                "[a-z ]{0,12}".prop_map(|t| format!("<template><p>{t} SECRET</p></template>")),
                Just("<SCRIPT type=module>SECRET</SCRIPT >".to_string()),
                Just("<noscript><p>shown without script</p></noscript>".to_string()),
            ],
            0..30,
        )
    ) {
        let html = format!("<html><body>{}</body></html>", parts.concat());
        let out = extract(&html, None);
        prop_assert!(!out.text.contains("SECRET"), "{}", out.text);
    }
}

#[test]
fn customer_reviews_under_a_product_are_dropped() {
    let review = |i: usize| {
        format!(
            "<div class=\"review-item\"><h4>Sturdy and quiet, review {i}</h4><p>I bought this \
             for my study and it has held up well for a year of daily use, number {i}.</p></div>"
        )
    };
    let reviews: String = (0..2).map(review).collect();
    let description = "<h1>Oak standing desk</h1><p>A standing desk with a solid oak top and a \
        steel frame. Two motors lift it from 62 to 127 cm in under twenty seconds, and four \
        memory buttons keep your favourite heights.</p><p>Top 140 by 70 cm, load up to 120 kg. \
        Ships flat in two boxes; assembly takes about half an hour with the tools included.</p>";
    // Marked by class words.
    let html = format!(
        "<html><body><div class=\"product\">{description}</div>\
         <div class=\"product-reviews__list\">{reviews}</div></body></html>"
    );
    let out = extract(&html, None);
    assert_has(&out, &["solid oak top", "Ships flat"]);
    assert_lacks(&out, &["Sturdy and quiet", "daily use"]);
    // Marked only by their heading, with a count before it.
    let html = format!(
        "<html><body><div class=\"product\">{description}</div>\
         <div class=\"block\"><h2>12 Customer Reviews</h2><div>{}</div></div></body></html>",
        reviews.replace("review-item", "item")
    );
    let out = extract(&html, None);
    assert_has(&out, &["solid oak top", "Ships flat"]);
    assert_lacks(&out, &["Sturdy and quiet", "Customer Reviews"]);
    // A page of reviews is its reviews.
    let page: String = (0..12).map(review).collect();
    let out = extract(
        &format!(
            "<html><body><h1>Reviews of the oak desk</h1><div class=\"reviews\">{page}</div></body></html>"
        ),
        None,
    );
    assert_has(&out, &["Sturdy and quiet, review 0", "number 11"]);
}

/// Readers' comments that only their heading names ("124 Reader Comments", "Leave a
/// reply") go on a page built around an `article`; on a thread without one they are the
/// posts.
#[test]
fn comments_named_by_their_heading_go_beside_an_article() {
    let comments: String = (0..4)
        .map(|i| {
            format!(
                "<div class=\"c\"><p>Reader {i} writes: I tried this at home and the \
                 second step took me much longer than the article suggests.</p></div>"
            )
        })
        .collect();
    let story = "<h1>Proofing bread in a cold oven</h1><p>A cold oven with the light on \
        holds a steady warmth that suits a slow rise, and the dough keeps its shape better \
        than on a sunny windowsill. Leave it for two hours and check it with a floured \
        finger: the dent should spring back slowly.</p>";
    let html = format!(
        "<html><body><article>{story}</article><div class=\"x\"><h3>4 Reader Comments</h3>\
         <div>{comments}</div></div></body></html>"
    );
    let out = extract(&html, None);
    assert_has(&out, &["steady warmth", "spring back slowly"]);
    assert_lacks(&out, &["Reader Comments", "Reader 2 writes"]);
    // Without an article, the same block is the thread's replies.
    let thread = html
        .replace("<article>", "<div>")
        .replace("</article>", "</div>");
    assert_has(&extract(&thread, None), &["Reader 2 writes"]);
}

#[test]
fn article_metadata_lines_are_dropped_and_dates_in_content_stay() {
    let html = "<html><body><article><h1>Proofing bread in a cold oven</h1>\
        <div class=\"meta\"><span>March 3, 2026</span></div><div>5 min read</div>\
        <p>Updated on March 4, 2026</p>\
        <p>A cold oven with the light on holds a steady warmth that suits a slow rise. \
        The method was first written down on March 3, 2026, in a baker's notebook.</p>\
        <ul><li>12 May 2026: open day at the bakery</li><li>2026-06-01</li></ul>\
        <table><tr><td>Batch</td><td>2026-03-03</td></tr></table>\
        </article></body></html>";
    let out = extract(html, None);
    assert_has(
        &out,
        &[
            "steady warmth",
            "written down on March 3, 2026",
            "12 May 2026: open day",
            "Batch | 2026-03-03",
        ],
    );
    for line in out.text.lines() {
        assert!(
            ![
                "March 3, 2026",
                "5 min read",
                "Updated on March 4, 2026",
                "- 2026-06-01"
            ]
            .contains(&line.trim()),
            "a metadata line kept: {line:?}\n{}",
            out.text
        );
    }
}

/// The story between its markers, whole, and nothing of `unwanted`.
fn assert_story_alone(name: &str, unwanted: &[&str]) -> Extracted {
    let out = fixture(name);
    assert!(
        out.text.contains("STORYSTART"),
        "{name}: the story is missing:\n{}",
        out.text
    );
    assert!(
        out.text.contains("STORYEND"),
        "{name}: the story is cut:\n{}",
        out.text
    );
    assert_lacks(&out, unwanted);
    out
}

#[test]
fn a_comment_thread_longer_than_the_story_is_not_the_content() {
    // Three times the story's length, in comment classes, without a heading: the page
    // declares an article and the thread follows the story's prose.
    let out = assert_story_alone(
        "news-comments",
        &[
            "hours ago",
            "rivergazer",
            "Permalink",
            "8 comments",
            "Copyright",
        ],
    );
    assert!(out.text.split_whitespace().count() < 400, "{}", out.text);
    // Headed as responses ("8 Responses to ..."), in plain markup with no class words.
    assert_story_alone(
        "blog-comments",
        &["Responses to", "said on March", "Leave a Reply", "Reply"],
    );
}

#[test]
fn a_thread_that_declares_itself_a_discussion_keeps_its_replies() {
    // A long first post, then replies in comment classes: the structured data says this
    // is a forum thread, so the replies are content.
    let out = fixture("forum-long-first-post");
    assert_has(&out, &["FIRSTPOST", "REPLY0", "REPLY4"]);
    assert_lacks(&out, &["Log in", "Joined 2019"]);
}

#[test]
fn a_mega_menu_before_a_short_article_is_not_the_content() {
    // Six sections of twelve links in a plain div, more text than the article under them.
    let out = assert_story_alone("news-megamenu", &["Sport", "Culture", "Weather"]);
    assert!(out.text.split_whitespace().count() < 250, "{}", out.text);
}

#[test]
fn a_rail_of_more_stories_after_the_article_goes() {
    // Seven teasers (a linked headline, a byline and time, a first sentence) under a
    // heading that names no recommendation.
    assert_story_alone(
        "news-rails",
        &["From the newsroom", "hours ago", "By Ann K."],
    );
}
