//! Main-content extraction: the title, the main text with its structure, the declared
//! language and the page's links.
//!
//! # How the main content is found
//!
//! 1. **Before parsing:** script, style, noscript, template, svg, math,
//!    iframe and object bodies and comments are cut from the markup in one linear scan, so
//!    the parser never builds them; JSON-LD bodies are kept aside.
//! 2. **A flat tree.** scraper (html5ever) parses the rest; the tree is copied, in one
//!    iterative walk, into a pre-order array in which each element knows where its subtree
//!    ends. Every later pass is a loop over that array, so no depth of nesting can overflow
//!    the stack, and the time is linear in the number of nodes. Form controls (`select`,
//!    `option`, `input`, `textarea`), media fallbacks and the head (beyond its title,
//!    `<base>` and `<meta>` data) are left out of the copy.
//! 3. **Boilerplate by role.** An element is put in a boilerplate *category* by its tag
//!    (`nav`, `footer`, `aside`, a page-level `header`), its ARIA role (`navigation`,
//!    `banner`, `contentinfo`, `complementary`, `search`, `dialog`), its visibility
//!    (`hidden`, `aria-hidden`, an inline `display:none`; not the `<div hidden id="S:...">`
//!    in which React streams server-rendered content, nor a collapsed accordion or tab
//!    panel, `role="region"` or `role="tabpanel"`) or the words of its class and id
//!    (menu, breadcrumb, sidebar, related, share, cookie, newsletter, comments, reviews, ...;
//!    matched as whole words, so `ad` never matches `header`; a few, such as `comment`,
//!    `cookie` and `sidebar`, also when written together with a structural word, as in
//!    `commentList` or `cookieBanner`, but not as the start of another word: `commentary`
//!    is an opinion column, not comments; a post's WordPress classes `tag-...` and
//!    `category-...` name what it is about, and a class name that puts "sidebar" with
//!    `layout`, `has`, `with`, `sticky` and the like, as in `c-layout-sidebar-left`, names
//!    the layout that holds a sidebar: neither counts). A category is removed as a
//!    whole, except when it holds a large share of the page's text: comments (and customer
//!    reviews) are boilerplate under an article or a product but *are* the content of a forum
//!    thread or a page of reviews, and a page whose only text sits in a hidden tab panel
//!    still has that text. A single element is never removed by a class word when it
//!    holds most of the page's text or the page's `h1` or `main`. A page-level
//!    `footer` element (one outside `article` and `main`) always goes: on a page that draws
//!    its content with script, the site footer can be all the text there is. So does a
//!    page-level `header` without the `h1` or `main`: a mega-menu with a line of prose per
//!    entry can hold more text than the page itself. Nor is a `nav` or an `aside` made of
//!    links ever the content, however large, nor a block made of links that its class
//!    words or role name navigation (`toc`, `menu`, ...) when the page has prose of its
//!    own beside it: a manual's table of contents beside one of its sections. A block whose class
//!    names it a header but that holds text rather than links (the header of a card or
//!    an accordion pane) is not taken for the site's header.
//!    A block that a heading opens with words that name it as recommendations ("Similar
//!    items", "You may also like", "Frequently bought together", "Customer reviews", ...,
//!    after a count such as "12") goes too, whatever its class words, unless it holds the
//!    `h1` or nearly all of the page's text. So does a block that a heading names as
//!    comments ("124 Reader Comments", "Leave a reply") on a page built around an
//!    `article` that the block is not part of; on a thread without one, the replies stay.
//!    **Around a story** (an `h1` followed by prose), on a page that does not declare itself
//!    a discussion (JSON-LD or microdata `DiscussionForumPosting`, `QAPage`, `Question`) or
//!    something other than an article (`og:type`): the readers' comments after 600
//!    characters of story prose go however long the thread, whether a heading names them
//!    ("59 Comments on ...", "12 thoughts on", "8 Responses to"; a heading amid the story's
//!    own elements takes what follows it up to the next heading of its rank) or their class
//!    words do (`comments`, `commentlist`, `disqus`; not `reviews`). A rail of other
//!    stories after the `article` that holds the `h1` goes too: three or more teasers (a
//!    linked `h2`-`h4`) with at most 250 characters of other text each. So does a block of
//!    twelve or more short links before the `h1`: a mega-menu that no `nav` or menu class
//!    marks can hold more text than a short article.
//! 4. **The main container.** Starting at `body`, the walk descends into the child that
//!    holds most of what is left (text outside links counts fully, link text counts less)
//!    for as long as one child holds nearly all (85%) of its parent's text, so that a
//!    section beside the bulk of the text is not lost. Articles end at their body,
//!    forum threads at the list of posts, listings at the list of items.
//! 5. **Link-dense blocks.** Inside the container, blocks made mostly of link text (menus,
//!    tag clouds, "read more" rows) are dropped, unless the block is a large part of the
//!    container: then it is a listing or a collection, where the links are the content, and
//!    everything inside it is kept. A block of links that the text introduces with a colon
//!    ("These patches were merged:") is kept too. When dropping them would leave no text at
//!    all, the container is a listing of many small items (a title link each) and they are
//!    all kept. Short buttons go.
//! 6. **Structured data.** When the visible text is thin (a product page that draws its
//!    text with script), a JSON-LD `articleBody` or `description` is used instead when it
//!    says more. (The `<meta>` description is not: a page that shows no text has no main
//!    content, and its description is kept in [`Extracted::description`].) A schema.org
//!    `Product` description of 80 words or more is the main text of a page whose visible
//!    text is at most three times as long: the merchant's own words about the product,
//!    without the buy box, the options and the delivery notes around them.
//!
//! The text keeps its structure: headings and paragraphs are separated by a blank line, list
//! items are one per line (`- ` or `1. `), table rows are one per line with cells joined by
//! ` | `, and `pre` keeps its line breaks. A block or a line of 80 characters or more that
//! repeats an earlier one (the same text laid out for small and for large screens) is kept
//! once. A line that is only article metadata (a bare date, a reading time such as "5 min
//! read", a stamp such as "Updated on March 3, 2026"; in English, German, French and
//! Spanish) is dropped; a date within a sentence,
//! a list item or a table row stays.

use scraper::{Html, Node as DomNode};
use url::Url;

use super::decode;
use super::strip;
use analysis::{Analysis, THIN_WORDS, is_thin};
use structured::{PRODUCT_DESCRIPTION_WORDS, PRODUCT_TEXT_RATIO, Structured};
use tree::Page;

mod analysis;
mod classify;
mod head;
mod headings;
mod lines;
#[cfg(test)]
mod lines_tests;
mod links;
mod page_text;
mod render;
mod site;
mod story;
mod structured;
mod tree;
mod unspaced_lines;

pub(crate) use links::RawLinks;
pub use render::collapse_whitespace;
pub(crate) use site::{SELF_RELS, SITE_METAS};

/// What [`extract`] finds in a page.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Extracted {
    /// The page title: `og:title`, else the main `h1`, else the `<title>` without its site
    /// name.
    pub title: Option<String>,
    /// The main text, structured as described in the module documentation.
    pub text: String,
    /// The declared language (`<html lang>`, else `Content-Language` in a `<meta>`).
    pub language: Option<String>,
    /// The page's own summary: `og:description`, else `<meta name="description">`.
    pub description: Option<String>,
    /// Every followable link of the page, resolved to an absolute URL, in document order.
    pub links: Vec<Link>,
    /// The address the page gives itself: `<link rel="canonical">` (the first), else
    /// `og:url`, resolved against the page's URL; only an http(s) URL.
    pub canonical: Option<String>,
    /// For a page extracted without its URL: the host of the site it says it belongs to,
    /// from its canonical address, its `<base href>`, its head's links into its own site or
    /// the links of its menus (`content::extract::site`), in lower case; `None` when it names
    /// none, and for a page extracted with its URL (whose host is its site).
    pub site: Option<String>,
    /// What the extractor believes each block of [`Extracted::text`] is, one entry per
    /// block (the text split at blank lines, `text.split("\n\n")`), in order. The text
    /// itself does not change with it.
    pub blocks: Vec<BlockKind>,
}

/// What a block of the main text is, as the extractor sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BlockKind {
    /// The page's own text: its story's paragraphs and headings.
    Story,
    /// A list: list items, or a listing of links kept as the content.
    List,
    /// Text kept from an element named an aside, metadata, sharing or comments (kept
    /// because it is a large part of the page).
    Aside,
}

impl Extracted {
    /// Each block of the main text with its kind.
    pub fn blocks_with_kinds(&self) -> impl Iterator<Item = (&str, BlockKind)> {
        render::blocks(&self.text).zip(
            self.blocks
                .iter()
                .copied()
                .chain(std::iter::repeat(BlockKind::Story)),
        )
    }
}

/// A link found in a page.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    /// The absolute URL (resolved against `<base href>` and the page URL); not canonicalized.
    pub url: String,
    /// The anchor text, whitespace collapsed.
    pub text: String,
    /// True when the link sits inside the main content.
    pub in_main: bool,
    /// True when the link carries `rel="nofollow"`.
    pub nofollow: bool,
}

/// Decodes `bytes` (see [`decode::decode`]) and extracts the main content.
pub fn extract_bytes(bytes: &[u8], content_type: Option<&str>, url: Option<&Url>) -> Extracted {
    let (text, ..) = decode::decode_borrowed(bytes, content_type, url.map(Url::as_str));
    extract(&text, url)
}

/// Extracts the main content of an HTML document. `url` is the page's address, used to
/// resolve relative links; without it only absolute links are returned.
pub fn extract(html: &str, url: Option<&Url>) -> Extracted {
    let (mut extracted, links, _) = extract_unresolved(html, url);
    extracted.links = links.resolve();
    extracted
}

/// As [`extract_bytes`], with the links as the page writes them (`links` is left empty):
/// a crawler resolves them only for the pages whose links it follows. Also the page's text
/// ([`PageText`]).
pub(crate) fn extract_bytes_unresolved(
    bytes: &[u8],
    content_type: Option<&str>,
    url: Option<&Url>,
) -> (Extracted, RawLinks, PageText) {
    let (text, ..) = decode::decode_borrowed(bytes, content_type, url.map(Url::as_str));
    extract_unresolved(&text, url)
}

/// Parses a document with scraper, into a tree sized for the markup up front: about one
/// node per 32 bytes (most pages have fewer), so that the tree is rarely copied to grow;
/// at most 16,384 nodes (a few MB), whatever the markup's length.
///
/// Every parse in the crate goes through this function or [`parse_fragment`], which drive the
/// project's html5ever (`vendor/html5ever`) with scraper's tree sink. scraper's own
/// `Html::parse_document` and `Html::parse_fragment` would run upstream html5ever, which
/// scraper depends on by itself.
pub(crate) fn parse_document(html: &str) -> Html {
    use html5ever::tendril::TendrilSink as _;
    let nodes = (html.len() / 32 + 16).min(1 << 14);
    let mut dom = Html::new_document();
    dom.tree = ego_tree::Tree::with_capacity(DomNode::Document, nodes);
    html5ever::driver::parse_document(scraper::HtmlTreeSink::new(dom), Default::default()).one(html)
}

/// Parses `text` as a fragment in a `<body>`, as scraper's `Html::parse_fragment` does, with the
/// project's html5ever (see [`parse_document`]).
pub(crate) fn parse_fragment(text: &str) -> Html {
    use html5ever::tendril::TendrilSink as _;
    let body = html5ever::QualName::new(None, html5ever::ns!(html), html5ever::local_name!("body"));
    let sink = scraper::HtmlTreeSink::new(Html::new_fragment());
    html5ever::driver::parse_fragment(sink, Default::default(), body, Vec::new(), false).one(text)
}

/// The text of the whole page outside its boilerplate by role (menus, headers, footers,
/// hidden and link-dense blocks), whichever block the main text was taken from: what tells
/// two pages of one site apart even when the extraction took the same sidebar from both.
/// `None` when it is the main text itself.
pub(crate) type PageText = Option<String>;

fn extract_unresolved(html: &str, url: Option<&Url>) -> (Extracted, RawLinks, PageText) {
    let stripped = strip::strip(html);
    let dom = parse_document(&stripped.html);
    let page = Page::build(&dom, stripped.html.len());
    drop(dom);
    let structured = Structured::of(&stripped.json_ld);
    let mut analysis = Analysis::new(&page);
    // Replies are the content of a page that declares itself a discussion, or declares
    // itself something other than an article (`og:type` website, product, ...).
    analysis.discussion = structured.discussion
        || page.discussion
        || page.og_type.as_deref().is_some_and(|t| t != "article");
    if !analysis.discussion {
        let declared = structured.article || page.og_type.as_deref() == Some("article");
        let (story, article) = page.story(declared);
        analysis.story = story;
        analysis.story_article = article.unwrap_or(usize::MAX);
    }
    analysis.mark_boilerplate();
    analysis.measure_kept();
    analysis.mark_teaser_lists();
    let container = analysis.main_container();
    let (mut text, mut blocks) = analysis.render_blocks(container, false);
    if text.is_empty() {
        // Everything left was in link-dense blocks, none large on its own: a listing of
        // many small items (a title link each), whose links are the content.
        (text, blocks) = analysis.render_blocks(container, true);
    } else {
        let lead = analysis.lead(container);
        if !lead.is_empty() {
            let mut with_lead = String::with_capacity(text.len() + 512);
            let mut lead_blocks = Vec::new();
            for p in lead {
                let (lead_text, kinds) = analysis.render_blocks(p, false);
                with_lead.push_str(&lead_text);
                with_lead.push_str("\n\n");
                lead_blocks.extend(kinds);
            }
            with_lead.push_str(&text);
            text = with_lead;
            lead_blocks.extend(blocks);
            blocks = lead_blocks;
        }
    }
    let root = analysis.root();
    let mut page_text = (container != root)
        .then(|| analysis.render(root, false))
        .and_then(|whole| page_text::with_main_text(whole, &text));
    if let Some(description) = structured.product_description {
        // A product page's own description, when it is substantial and the visible text is
        // not much more than it, is the product's text without the shop around it.
        let words = crate::text::words(&description);
        if words >= PRODUCT_DESCRIPTION_WORDS
            && crate::text::words(&text) <= PRODUCT_TEXT_RATIO * words
        {
            text = description;
            blocks = all_story(&text);
        }
    }
    if let Some(structured) = structured.text {
        if is_thin(&text, &structured, THIN_WORDS) {
            // The page's text has the structured text, which it does not show, too.
            let mut whole = page_text.take().unwrap_or(text);
            whole.push_str("\n\n");
            whole.push_str(&structured);
            page_text = Some(whole);
            text = structured;
            blocks = all_story(&text);
        }
    }
    let title = page.title();
    let canonical = page.canonical.as_deref().and_then(|href| {
        let resolved = match url {
            Some(base) => base.join(href).ok()?,
            None => Url::parse(href).ok()?,
        };
        matches!(resolved.scheme(), "http" | "https").then(|| resolved.to_string())
    });
    let links = page.raw_links(url, container);
    let site = match url {
        Some(_) => None,
        None => site::site(
            canonical.as_deref(),
            page.base_href.as_deref(),
            &page.head_links,
            &links,
            &page.media,
            &page.site_metas,
        ),
    };
    let extracted = Extracted {
        title,
        text,
        language: page.language.clone(),
        description: page.description.clone(),
        links: Vec::new(),
        canonical,
        site,
        blocks,
    };
    (extracted, links, page_text)
}

/// One [`BlockKind::Story`] for each block of `text`.
fn all_story(text: &str) -> Vec<BlockKind> {
    render::blocks(text).map(|_| BlockKind::Story).collect()
}

#[cfg(test)]
mod tests {
    use super::classify::*;
    use super::render::*;
    use super::tree::*;
    use super::*;
    use crate::text::non_space_chars;

    #[test]
    fn class_words_match_whole_or_joined_with_a_structural_word_never_as_a_word_start() {
        for (class, cat) in [
            ("comments", Cat::Comments),
            ("post-comments", Cat::Comments),
            ("commentlist", Cat::Comments),
            ("commentlist2", Cat::Comments),
            ("fbcommentswrapper", Cat::Comments),
            ("cookiebanner", Cat::Overlay),
            ("sitefooter", Cat::Footer),
            ("footerlinkswrapper", Cat::Footer),
            ("commentary", Cat::None),
            ("commentator-bio", Cat::None),
            ("socialism", Cat::None),
            ("header", Cat::Header),
            ("heading", Cat::None),
            ("masthead-ad", Cat::Header),
            ("download", Cat::None),
        ] {
            let got = words_category(class);
            assert_eq!(got, cat, "{class}");
        }
        // On a page: an opinion column marked `commentary` is the article.
        let column = "Cities that plant trees along their main roads see cooler summers, \
            fewer floods and busier shops, and the cost is repaid within a decade. ";
        let html = format!(
            "<html><body><div class=commentary><h1>Plant the avenues</h1><p>{}</p></div>\
             <div class=commentlist><p>First!</p><p>Nice piece, thanks.</p></div></body></html>",
            column.repeat(6)
        );
        let text = extract(&html, None).text;
        assert!(text.contains("Cities that plant trees"), "{text}");
        assert!(!text.contains("First!"), "{text}");
    }

    #[test]
    fn the_form_for_writing_a_comment_is_a_form_not_the_comments() {
        use super::tree::{Attrs, Cat, Tag};
        let mut lower = String::new();
        let mut class_of = |tag, class: &str, id: &str| {
            let attrs = Attrs {
                class,
                id,
                ..Attrs::default()
            };
            classify(tag, &attrs, &mut lower)
        };
        for (tag, class, id) in [
            (Tag::Block, "comment-respond", "respond"),
            (Tag::Block, "", "respond"),
            (Tag::Form, "comment-form", "commentform"),
            (Tag::Form, "", "commentform"),
            (Tag::Block, "comments-form", ""),
        ] {
            assert_eq!(class_of(tag, class, id), Cat::Forms, "{class} #{id}");
        }
        for (class, id) in [
            ("comment-list", ""),
            ("comments", "comments"),
            ("", "disqus_thread"),
        ] {
            assert_eq!(
                class_of(Tag::Block, class, id),
                Cat::Comments,
                "{class} #{id}"
            );
        }
    }

    #[test]
    fn a_post_tagged_review_or_filed_under_comments_is_still_the_article() {
        // A short post beside a longer sidebar: the post's tag classes must not make it a
        // block of reviews.
        let story = "The bakery on the harbour front reopened this week after the flood, with \
            the same ovens, a new floor and the old recipes for rye and fennel bread.";
        let sidebar = "<p>About me: I write about food, travel and the small shops of the \
            coast, and test what readers send me.</p>"
            .repeat(4);
        let html = format!(
            "<html><body><div class=menu><a href=/>Home</a></div><div class=row>\
             <article class=\"post type-post tag-review tag-comments category-reviews\">\
             <p>{story}</p></article><div class=about>{sidebar}</div></div></body></html>"
        );
        let text = extract(&html, None).text;
        assert!(text.contains("The bakery on the harbour front"), "{text}");
    }

    #[test]
    fn a_short_article_in_a_layout_that_names_its_sidebar_is_still_the_article() {
        let story = "The ferry line reopened on Friday after two days of storms, and the \
            harbour master said the timetable would be back to normal by Sunday.";
        let about = "<p>Our newsroom covers the coast, its towns and its harbours, every \
            day of the year, with reporters in six offices.</p>"
            .repeat(4);
        let html = format!(
            "<html><body><h1>Ferries again</h1><div class=row>\
             <div class=\"article-content sticky-sidebar-relative\"><p>{story}</p></div>\
             <div class=\"c-layout-sidebar-left\"><div><p>{story} Again.</p></div></div>\
             <div class=about>{about}</div></div></body></html>"
        );
        let text = extract(&html, None).text;
        assert!(text.contains("The ferry line reopened"), "{text}");
        assert!(text.contains("Again."), "{text}");
    }

    #[test]
    fn raw_links_keep_hrefs_and_texts_and_resolve_like_links() {
        let html = "<html><head><base href=\"/docs/\"></head><body><p>Intro text.</p>\
            <a href=\" a.html#part \">  One <b>two</b>\n</a><a href=\"#top\">Top</a>\
            <a href=\"mailto:x@example.com\">Mail</a><a href=\"\">Empty</a>\
            <a rel=\"nofollow\" href=\"/abs?q=1\">Abs</a></body></html>";
        let url = Url::parse("http://example.com/start/page.html").unwrap();
        let (_, raw, _) = extract_unresolved(html, Some(&url));
        assert_eq!(
            raw.base().map(Url::as_str),
            Some("http://example.com/docs/")
        );
        let seen: Vec<(&str, &str, bool)> =
            raw.iter().map(|l| (l.href, l.text, l.nofollow)).collect();
        assert_eq!(
            seen,
            [
                ("a.html#part", "One two", false),
                ("mailto:x@example.com", "Mail", false),
                ("/abs?q=1", "Abs", true),
            ]
        );
        let links = extract(html, Some(&url)).links;
        let resolved: Vec<(&str, &str)> = links
            .iter()
            .map(|l| (l.url.as_str(), l.text.as_str()))
            .collect();
        assert_eq!(
            resolved,
            [
                ("http://example.com/docs/a.html", "One two"),
                ("http://example.com/abs?q=1", "Abs"),
            ]
        );
    }
    #[test]
    fn repeated_hrefs_resolve_each_time_with_their_own_texts() {
        // A menu and a footer repeat hrefs: each occurrence is a link of its own, in
        // document order, with its own text and flags, and one that does not resolve is
        // left out every time.
        let html = "<html><body><p>Intro text.</p>\
            <a href=\"a.html#one\">First</a><a href=\"javascript:go()\">Go</a>\
            <a href=\"b.html\">Other</a><a rel=\"nofollow\" href=\"a.html#one\">Again</a>\
            <a href=\"javascript:go()\">Go again</a><a href=\"a.html#one\">Third</a>\
            <a href=\"http://other.example/x#y\">X</a><a href=\"http://other.example/x#y\">X2</a>\
            </body></html>";
        let url = Url::parse("http://example.com/start/page.html").unwrap();
        let links = extract(html, Some(&url)).links;
        let resolved: Vec<(&str, &str, bool)> = links
            .iter()
            .map(|l| (l.url.as_str(), l.text.as_str(), l.nofollow))
            .collect();
        assert_eq!(
            resolved,
            [
                ("http://example.com/start/a.html", "First", false),
                ("http://example.com/start/b.html", "Other", false),
                ("http://example.com/start/a.html", "Again", true),
                ("http://example.com/start/a.html", "Third", false),
                ("http://other.example/x", "X", false),
                ("http://other.example/x", "X2", false),
            ]
        );
    }

    use proptest::prelude::*;

    proptest! {
        /// The byte-level whitespace test agrees with `char::is_whitespace`: the writer
        /// sees the words `split_whitespace` sees, and counts the same characters.
        #[test]
        fn whitespace_scanning_matches_char_is_whitespace(
            text in "([a-z\u{e9}\u{4e2d} \t\n\u{0b}\u{85}\u{a0}\u{1680}\u{2003}\u{2028}\u{202f}\u{205f}\u{3000}\u{2010}\u{e100}]){0,40}"
        ) {
            let mut writer = TextWriter::default();
            writer.text(&text);
            let words: Vec<&str> = text.split_whitespace().collect();
            prop_assert_eq!(writer.out, words.join(" "));
            let expected = text.chars().filter(|c| !c.is_whitespace()).count() as u32;
            prop_assert_eq!(non_space_chars(&text), expected);
        }

        #[test]
        fn text_pieces_join_like_split_whitespace(
            pieces in proptest::collection::vec("[a-z ]{0,12}|[a-z\t\n\u{a0} ]{0,12}", 0..6)
        ) {
            let mut writer = TextWriter::default();
            for piece in &pieces {
                writer.text(piece);
            }
            let joined = pieces.concat();
            let words: Vec<&str> = joined.split_whitespace().collect();
            // Pieces are adjacent text nodes: a word may continue into the next piece.
            prop_assert_eq!(writer.out, words.join(" "));
        }

        #[test]
        fn blocks_split_like_str_split(text in "[ab \n]{0,30}") {
            let expected: Vec<&str> = text.split("\n\n").collect();
            prop_assert_eq!(blocks(&text).collect::<Vec<_>>(), expected);
        }

        /// The line filter, which copies nothing until a line is dropped, gives what the
        /// plain definition gives: the kept lines, one blank line where blank lines were.
        #[test]
        fn drop_lines_matches_its_definition(text in "([ab ]{0,3}\n{0,3}){0,12}", gone in "[ab]") {
            let kept: Vec<&str> = text.split('\n').collect();
            let mut expected = String::new();
            let mut blank = false;
            let mut any = false;
            for line in kept {
                if line.trim().is_empty() {
                    blank = !expected.is_empty();
                } else if line.contains(gone.as_str()) {
                    any = true;
                } else {
                    if !expected.is_empty() {
                        expected.push_str(if blank { "\n\n" } else { "\n" });
                    }
                    expected.push_str(line);
                    blank = false;
                }
            }
            let got = drop_lines(&text, |line, _| line.contains(gone.as_str()));
            prop_assert_eq!(got, any.then_some(expected));
        }
    }
}
