//! How blocks are judged: footers, recommendations, repeated and link-dense blocks, labels
//! read as headings, hidden parts.

use super::*;

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
