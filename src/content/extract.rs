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
//!    is an opinion column, not comments). A category is removed as a
//!    whole, except when it holds a large share of the page's text: comments (and customer
//!    reviews) are boilerplate under an article or a product but *are* the content of a forum
//!    thread or a page of reviews, and a page whose only text sits in a hidden tab panel
//!    still has that text. A single element is never removed by a class word when it
//!    holds most of the page's text or the page's `h1` or `main`. A page-level
//!    `footer` element (one outside `article` and `main`) always goes: on a page that draws
//!    its content with script, the site footer can be all the text there is. So does a
//!    page-level `header` without the `h1` or `main`: a mega-menu with a line of prose per
//!    entry can hold more text than the page itself. Nor is a `nav` or an `aside` made of
//!    links ever the content, however large. A block whose class
//!    names it a header but that holds text rather than links (the header of a card or
//!    an accordion pane) is not taken for the site's header.
//!    A block that a heading opens with words that name it as recommendations ("Similar
//!    items", "You may also like", "Frequently bought together", "Customer reviews", ...,
//!    after a count such as "12") goes too, whatever its class words, unless it holds the
//!    `h1` or nearly all of the page's text. So does a block that a heading names as
//!    comments ("124 Reader Comments", "Leave a reply") on a page built around an
//!    `article` that the block is not part of; on a thread without one, the replies stay.
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
//! read", a stamp such as "Updated on March 3, 2026") is dropped; a date within a sentence,
//! a list item or a table row stays.

use super::decode;
use super::strip;
use crate::text::{non_space_chars, space_len_at};
use scraper::{Html, Node as DomNode};
use url::Url;

/// Opening words of a heading that introduces recommendations (or the customers' reviews)
/// rather than content.
const RECOMMENDATION_HEADINGS: &[&[&str]] = &[
    &["similar", "items"],
    &["similar", "products"],
    &["related", "products"],
    &["related", "items"],
    &["related", "articles"],
    &["related", "posts"],
    &["related", "stories"],
    &["you", "may", "also", "like"],
    &["you", "might", "also", "like"],
    &["customers", "also"],
    &["people", "also"],
    &["frequently", "bought", "together"],
    &["recently", "viewed"],
    &["recommended", "for", "you"],
    &["more", "from", "this", "seller"],
    &["people", "who", "viewed"],
    &["people", "who", "bought"],
    &["customers", "who"],
    &["explore", "related"],
    &["related", "searches"],
    &["similar", "sponsored"],
    &["sponsored", "items"],
    &["sponsored", "products"],
    &["products", "related", "to"],
    &["compare", "similar"],
    &["more", "like", "this"],
    &["you", "may", "also", "be", "interested"],
    &["you", "might", "also", "be", "interested"],
    &["complete", "the", "look"],
    &["shop", "similar"],
    &["recommended", "products"],
    &["inspired", "by", "your"],
    &["also", "in", "the", "news"],
    &["more", "stories"],
    &["more", "articles"],
    &["more", "posts"],
    &["more", "news"],
    &["read", "next"],
    &["read", "more"],
    &["recent", "posts"],
    &["recent", "articles"],
    &["latest", "posts"],
    &["latest", "articles"],
    &["latest", "news"],
    &["popular", "posts"],
    &["popular", "articles"],
    &["most", "popular"],
    &["most", "read"],
    &["trending"],
    &["customer", "reviews"],
    &["reviews"],
    &["customer", "ratings"],
    &["ratings", "reviews"],
    &["ratings", "and", "reviews"],
    &["reviews", "and", "ratings"],
];

/// Opening words of a heading that introduces the readers' comments: the block it opens
/// goes on a page built around an `article` outside it (see [`Analysis::headed_blocks`]).
const COMMENT_HEADINGS: &[&[&str]] = &[
    &["comments"],
    &["reader", "comments"],
    &["leave", "a", "reply"],
    &["leave", "a", "comment"],
    &["join", "the", "discussion"],
];

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
    let (mut extracted, links) = extract_unresolved(html, url);
    extracted.links = links.resolve();
    extracted
}

/// As [`extract_bytes`], with the links as the page writes them (`links` is left empty):
/// a crawler resolves them only for the pages whose links it follows.
pub(crate) fn extract_bytes_unresolved(
    bytes: &[u8],
    content_type: Option<&str>,
    url: Option<&Url>,
) -> (Extracted, RawLinks) {
    let (text, ..) = decode::decode_borrowed(bytes, content_type, url.map(Url::as_str));
    extract_unresolved(&text, url)
}

/// Parses a document with scraper, into a tree sized for the markup up front: about one
/// node per 32 bytes (most pages have fewer), so that the tree is rarely copied to grow;
/// at most 16,384 nodes (a few MB), whatever the markup's length.
fn parse_document(html: &str) -> Html {
    use html5ever::tendril::TendrilSink as _;
    let nodes = (html.len() / 32 + 16).min(1 << 14);
    let mut dom = Html::new_document();
    dom.tree = ego_tree::Tree::with_capacity(DomNode::Document, nodes);
    html5ever::driver::parse_document(scraper::HtmlTreeSink::new(dom), Default::default()).one(html)
}

fn extract_unresolved(html: &str, url: Option<&Url>) -> (Extracted, RawLinks) {
    let stripped = strip::strip(html);
    let dom = parse_document(&stripped.html);
    let page = Page::build(&dom, stripped.html.len());
    drop(dom);
    let mut analysis = Analysis::new(&page);
    analysis.mark_boilerplate();
    analysis.measure_kept();
    let container = analysis.main_container();
    let mut text = analysis.render(container, false);
    if text.is_empty() {
        // Everything left was in link-dense blocks, none large on its own: a listing of
        // many small items (a title link each), whose links are the content.
        text = analysis.render(container, true);
    }
    let structured = Structured::of(&stripped.json_ld);
    if let Some(description) = structured.product_description {
        // A product page's own description, when it is substantial and the visible text is
        // not much more than it, is the product's text without the shop around it.
        let words = description.split_whitespace().count();
        if words >= PRODUCT_DESCRIPTION_WORDS
            && text.split_whitespace().count() <= PRODUCT_TEXT_RATIO * words
        {
            text = description;
        }
    }
    if let Some(structured) = structured.text {
        if is_thin(&text, &structured, THIN_WORDS) {
            text = structured;
        }
    }
    let title = page.title();
    let links = page.raw_links(url, container);
    let extracted = Extracted {
        title,
        text,
        language: page.language.clone(),
        description: page.description.clone(),
        links: Vec::new(),
    };
    (extracted, links)
}

/// A page's links as written in it (`href` not yet resolved), with the base to resolve them
/// against. All hrefs and anchor texts share one buffer.
#[derive(Debug, Default)]
pub(crate) struct RawLinks {
    base: Option<Url>,
    buffer: String,
    items: Vec<RawLink>,
}

#[derive(Debug)]
struct RawLink {
    href_end: u32,
    text_end: u32,
    in_main: bool,
    nofollow: bool,
}

/// One link of [`RawLinks`].
pub(crate) struct RawLinkRef<'a> {
    /// The `href` attribute, trimmed (never empty, never a bare fragment).
    pub href: &'a str,
    /// The anchor text, whitespace collapsed.
    pub text: &'a str,
    /// True when the link sits inside the main content.
    pub in_main: bool,
    /// True when the link carries `rel="nofollow"`.
    pub nofollow: bool,
}

impl RawLinks {
    /// What relative hrefs resolve against: `<base href>` resolved against the page URL,
    /// else the page URL; `None` when the page has no URL (only absolute hrefs resolve).
    pub(crate) fn base(&self) -> Option<&Url> {
        self.base.as_ref()
    }

    /// The links in document order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = RawLinkRef<'_>> {
        let mut start = 0;
        self.items.iter().map(move |item| {
            let (href_end, text_end) = (item.href_end as usize, item.text_end as usize);
            let link = RawLinkRef {
                href: &self.buffer[start..href_end],
                text: &self.buffer[href_end..text_end],
                in_main: item.in_main,
                nofollow: item.nofollow,
            };
            start = text_end;
            link
        })
    }

    /// Resolves every href to an absolute http(s) URL without its fragment; the others
    /// are left out.
    pub(crate) fn resolve(&self) -> Vec<Link> {
        let mut links = Vec::with_capacity(self.items.len());
        for link in self.iter() {
            let resolved = match &self.base {
                Some(base) => base.join(link.href),
                None => Url::parse(link.href),
            };
            let Ok(mut resolved) = resolved else {
                continue;
            };
            if !matches!(resolved.scheme(), "http" | "https") {
                continue;
            }
            resolved.set_fragment(None);
            links.push(Link {
                url: resolved.into(),
                text: link.text.to_string(),
                in_main: link.in_main,
                nofollow: link.nofollow,
            });
        }
        links
    }
}

// ---------------------------------------------------------------------------------------
// The flat tree.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tag {
    Text,
    Inline,
    Block,
    A,
    P,
    H(u8),
    Ul,
    Ol,
    Li,
    Dl,
    Dt,
    Dd,
    Table,
    Tr,
    Cell,
    Caption,
    Pre,
    Blockquote,
    Br,
    Hr,
    Figure,
    Section,
    Article,
    Main,
    Header,
    Footer,
    Nav,
    Aside,
    Form,
    Button,
    Body,
}

impl Tag {
    fn of(name: &str) -> Option<Tag> {
        Some(match name {
            "a" => Tag::A,
            "p" => Tag::P,
            "h1" => Tag::H(1),
            "h2" => Tag::H(2),
            "h3" => Tag::H(3),
            "h4" => Tag::H(4),
            "h5" => Tag::H(5),
            "h6" => Tag::H(6),
            "ul" | "menu" => Tag::Ul,
            "ol" => Tag::Ol,
            "li" => Tag::Li,
            "dl" => Tag::Dl,
            "dt" => Tag::Dt,
            "dd" => Tag::Dd,
            "table" => Tag::Table,
            "tr" => Tag::Tr,
            "td" | "th" => Tag::Cell,
            "caption" | "figcaption" | "summary" | "legend" => Tag::Caption,
            "pre" | "listing" | "plaintext" | "xmp" => Tag::Pre,
            "blockquote" => Tag::Blockquote,
            "br" => Tag::Br,
            "hr" => Tag::Hr,
            "figure" => Tag::Figure,
            "section" => Tag::Section,
            "article" => Tag::Article,
            "main" => Tag::Main,
            "header" => Tag::Header,
            "footer" => Tag::Footer,
            "nav" => Tag::Nav,
            "aside" => Tag::Aside,
            "form" => Tag::Form,
            "button" => Tag::Button,
            "body" => Tag::Body,
            "span" | "b" | "i" | "em" | "strong" | "code" | "small" | "sup" | "sub" | "abbr"
            | "time" | "label" | "mark" | "u" | "s" | "cite" | "q" | "font" | "img" | "kbd"
            | "var" | "samp" | "del" | "ins" | "dfn" | "bdi" | "bdo" | "data" | "tt" | "big"
            | "strike" | "wbr" | "picture" | "source" | "output" | "meter" | "nobr" => Tag::Inline,
            // Never content: form controls, media and embedded documents, head-only
            // elements that strayed into the body.
            "select" | "option" | "optgroup" | "input" | "textarea" | "datalist" | "canvas"
            | "video" | "audio" | "embed" | "map" | "area" | "track" | "frame" | "frameset"
            | "head" | "title" | "meta" | "link" | "base" | "style" | "script" | "noscript"
            | "template" | "svg" | "math" | "iframe" | "object" | "dialog" | "param" => {
                return None;
            }
            _ => Tag::Block,
        })
    }

    fn is_heading(self) -> bool {
        matches!(self, Tag::H(_))
    }
}

/// Boilerplate categories, decided and removed as a whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Cat {
    None = 0,
    Nav,
    Footer,
    Header,
    Aside,
    Comments,
    Share,
    Ads,
    Overlay,
    Forms,
    Hidden,
    /// Post and article metadata: authors, dates, avatars, signatures, votes, tags.
    Meta,
}

const CATEGORIES: usize = 12;

#[derive(Clone, Copy, Debug)]
struct Node {
    tag: Tag,
    cat: Cat,
    /// A `main` element or `role="main"`.
    main_role: bool,
    parent: u32,
    /// One past the last node of this node's subtree.
    end: u32,
    /// Text nodes: the byte range of their text in `Page::text`.
    text_start: u32,
    text_end: u32,
    /// Characters of text in the subtree, whitespace not counted.
    len: u32,
    /// Of those, characters inside links.
    link_len: u32,
    /// `h1` and `main` elements in the subtree.
    landmarks: u32,
}

struct Page {
    nodes: Vec<Node>,
    text: String,
    body: u32,
    /// Anchors with an `href`: node, end of the href in `anchor_hrefs`, nofollow.
    anchors: Vec<(u32, u32, bool)>,
    anchor_hrefs: String,
    title_tag: Option<String>,
    og_title: Option<String>,
    /// `og:description`, else `<meta name="description">`.
    description: Option<String>,
    base_href: Option<String>,
    language: Option<String>,
}

const NO_PARENT: u32 = u32::MAX;

/// The attributes of one element that extraction looks at.
#[derive(Default)]
struct Attrs<'a> {
    class: &'a str,
    id: &'a str,
    role: &'a str,
    style: &'a str,
    href: Option<&'a str>,
    rel: &'a str,
    hidden: bool,
    aria_hidden: bool,
}

impl<'a> Attrs<'a> {
    fn of(element: &'a scraper::node::Element) -> Attrs<'a> {
        let mut attrs = Attrs::default();
        for (name, value) in element.attrs() {
            match name {
                "class" => attrs.class = value,
                "id" => attrs.id = value,
                "role" => attrs.role = value,
                "style" => attrs.style = value,
                "href" => attrs.href = Some(value),
                "rel" => attrs.rel = value,
                "hidden" => attrs.hidden = true,
                "aria-hidden" => attrs.aria_hidden = value.trim().eq_ignore_ascii_case("true"),
                _ => {}
            }
        }
        // A server-rendered segment that React streams after the page's shell: it arrives
        // as `<div hidden id="S:...">` and a script moves it into its placeholder at once.
        // Its text is shown, often the whole of the page's content.
        if attrs.hidden && is_streamed_segment(attrs.id) {
            attrs.hidden = false;
        }
        // A collapsed accordion or tab panel: hidden until its button is pressed, but part
        // of the page's content.
        if (attrs.aria_hidden || attrs.hidden)
            && (attrs.role.trim().eq_ignore_ascii_case("region")
                || attrs.role.trim().eq_ignore_ascii_case("tabpanel"))
        {
            attrs.aria_hidden = false;
            attrs.hidden = false;
        }
        attrs
    }
}

impl Page {
    /// `html_len` (the parsed document's length) sizes the arrays: a small page gets
    /// small ones, instead of allocations sized for a large page.
    fn build(dom: &Html, html_len: usize) -> Page {
        let mut page = Page {
            nodes: Vec::with_capacity((html_len / 48).clamp(64, 4096)),
            text: String::with_capacity(html_len.min(64 * 1024)),
            body: NO_PARENT,
            anchors: Vec::new(),
            anchor_hrefs: String::new(),
            title_tag: None,
            og_title: None,
            description: None,
            base_href: None,
            language: None,
        };
        // One entry per open DOM element: its index in `nodes`, or None when skipped.
        let mut open: Vec<Option<u32>> = Vec::with_capacity(64);
        let mut skipping = 0usize;
        let mut in_title = false;
        let mut lower = String::new();
        for edge in dom.tree.root().traverse() {
            match edge {
                ego_tree::iter::Edge::Open(node) => match node.value() {
                    DomNode::Text(text) => {
                        if in_title {
                            page.title_tag
                                .get_or_insert_with(String::new)
                                .push_str(text);
                        } else if skipping == 0 {
                            page.push_text(text, &open);
                        }
                    }
                    DomNode::Element(element) => {
                        let name = element.name();
                        match name {
                            "html" => {
                                page.language = element
                                    .attr("lang")
                                    .or_else(|| element.attr("xml:lang"))
                                    .map(str::trim)
                                    .filter(|l| !l.is_empty())
                                    .map(str::to_string);
                            }
                            "title" if page.title_tag.is_none() => in_title = true,
                            "meta" => page.read_meta(element),
                            "base" if page.base_href.is_none() => {
                                page.base_href = element.attr("href").map(str::to_string);
                            }
                            _ => {}
                        }
                        let tag = if skipping > 0 { None } else { Tag::of(name) };
                        let Some(tag) = tag else {
                            skipping += 1;
                            open.push(None);
                            continue;
                        };
                        let attrs = Attrs::of(element);
                        let cat = classify(tag, &attrs, &mut lower);
                        let index = page.nodes.len() as u32;
                        if tag == Tag::Body && page.body == NO_PARENT {
                            page.body = index;
                        }
                        if tag == Tag::A {
                            if let Some(href) = attrs.href {
                                let nofollow = attrs
                                    .rel
                                    .split_ascii_whitespace()
                                    .any(|r| r.eq_ignore_ascii_case("nofollow"));
                                page.anchor_hrefs.push_str(href);
                                let end = page.anchor_hrefs.len() as u32;
                                page.anchors.push((index, end, nofollow));
                            }
                        }
                        let main_role =
                            tag == Tag::Main || attrs.role.trim().eq_ignore_ascii_case("main");
                        page.nodes.push(Node {
                            tag,
                            cat,
                            main_role,
                            parent: parent_of(&open),
                            end: 0,
                            text_start: 0,
                            text_end: 0,
                            len: 0,
                            link_len: 0,
                            landmarks: 0,
                        });
                        open.push(Some(index));
                    }
                    _ => {}
                },
                ego_tree::iter::Edge::Close(node) => {
                    if let DomNode::Element(element) = node.value() {
                        if element.name() == "title" {
                            in_title = false;
                        }
                        match open.pop() {
                            Some(Some(index)) => {
                                page.nodes[index as usize].end = page.nodes.len() as u32;
                            }
                            Some(None) => skipping = skipping.saturating_sub(1),
                            None => {}
                        }
                    }
                }
            }
        }
        page.measure();
        page
    }

    fn push_text(&mut self, text: &str, open: &[Option<u32>]) {
        let len = non_space_chars(text);
        let start = self.text.len() as u32;
        self.text.push_str(text);
        let index = self.nodes.len() as u32;
        self.nodes.push(Node {
            tag: Tag::Text,
            cat: Cat::None,
            main_role: false,
            parent: parent_of(open),
            end: index + 1,
            text_start: start,
            text_end: self.text.len() as u32,
            len,
            link_len: 0,
            landmarks: 0,
        });
    }

    fn read_meta(&mut self, element: &scraper::node::Element) {
        let content = || {
            element
                .attr("content")
                .map(str::trim)
                .filter(|c| !c.is_empty())
        };
        let property = element
            .attr("property")
            .or_else(|| element.attr("name"))
            .unwrap_or("");
        if property.eq_ignore_ascii_case("og:title") && self.og_title.is_none() {
            self.og_title = content().map(collapse_whitespace);
        }
        if property.eq_ignore_ascii_case("og:description")
            || (property.eq_ignore_ascii_case("description") && self.description.is_none())
        {
            if let Some(text) = content() {
                self.description = Some(structured_to_text(text));
            }
        }
        if let Some(equiv) = element.attr("http-equiv") {
            if equiv.eq_ignore_ascii_case("content-language") && self.language.is_none() {
                self.language = content().map(str::to_string);
            }
        }
    }

    /// Bottom-up totals: text, link text, landmarks.
    fn measure(&mut self) {
        for i in (0..self.nodes.len()).rev() {
            let node = self.nodes[i];
            let mut link_len = node.link_len;
            if node.tag == Tag::A {
                link_len = node.len;
                self.nodes[i].link_len = link_len;
            }
            let own_landmark = matches!(node.tag, Tag::H(1) | Tag::Main) as u32;
            self.nodes[i].landmarks += own_landmark;
            if node.parent != NO_PARENT {
                let landmarks = self.nodes[i].landmarks;
                let parent = &mut self.nodes[node.parent as usize];
                parent.len += node.len;
                parent.link_len += link_len;
                parent.landmarks += landmarks;
            }
        }
    }

    fn subtree_text(&self, index: u32) -> String {
        let mut out = String::new();
        self.write_subtree_text(index, &mut out);
        out
    }

    /// Appends the text of the subtree at `index` to `out`, whitespace collapsed.
    fn write_subtree_text(&self, index: u32, out: &mut String) {
        let node = self.nodes[index as usize];
        let start = out.len();
        for n in &self.nodes[index as usize..node.end as usize] {
            if n.tag == Tag::Text {
                push_words(
                    out,
                    start,
                    &self.text[n.text_start as usize..n.text_end as usize],
                );
            }
        }
    }

    fn title(&self) -> Option<String> {
        if let Some(og) = self.og_title.as_ref().filter(|t| !t.is_empty()) {
            return Some(og.clone());
        }
        let h1 = (0..self.nodes.len() as u32)
            .filter(|&i| self.nodes[i as usize].tag == Tag::H(1))
            .map(|i| self.subtree_text(i))
            .find(|t| !t.is_empty());
        if h1.is_some() {
            return h1;
        }
        let title = collapse_whitespace(self.title_tag.as_deref()?);
        Some(clean_title(&title)).filter(|t| !t.is_empty())
    }

    fn raw_links(&self, url: Option<&Url>, container: u32) -> RawLinks {
        let base = match (&self.base_href, url) {
            (Some(href), Some(url)) => url.join(href).ok().or_else(|| Some(url.clone())),
            (Some(href), None) => Url::parse(href).ok(),
            (None, url) => url.cloned(),
        };
        let container_end = self.nodes.get(container as usize).map_or(0, |n| n.end);
        let mut links = RawLinks {
            base,
            buffer: String::with_capacity(self.anchor_hrefs.len() * 2),
            items: Vec::with_capacity(self.anchors.len()),
        };
        let mut start = 0;
        for &(index, href_end, nofollow) in &self.anchors {
            let href = self.anchor_hrefs[start..href_end as usize].trim();
            start = href_end as usize;
            if href.is_empty() || href.starts_with('#') {
                continue;
            }
            links.buffer.push_str(href);
            let href_end = links.buffer.len() as u32;
            self.write_subtree_text(index, &mut links.buffer);
            links.items.push(RawLink {
                href_end,
                text_end: links.buffer.len() as u32,
                in_main: index >= container && index < container_end,
                nofollow,
            });
        }
        links
    }
}

fn parent_of(open: &[Option<u32>]) -> u32 {
    open.iter().rev().find_map(|o| *o).unwrap_or(NO_PARENT)
}

// ---------------------------------------------------------------------------------------
// Class and id words.

/// Puts an element in a boilerplate category (or none). `lower` is a reusable buffer.
fn classify(tag: Tag, attrs: &Attrs<'_>, lower: &mut String) -> Cat {
    if attrs.hidden
        || attrs.aria_hidden
        || hidden_by_style(attrs.style)
        || hidden_by_class(attrs.class)
    {
        return Cat::Hidden;
    }
    let by_tag = match tag {
        Tag::Nav => Cat::Nav,
        Tag::Footer => Cat::Footer,
        Tag::Aside => Cat::Aside,
        Tag::Header => Cat::Header,
        Tag::Form => Cat::Forms,
        _ => Cat::None,
    };
    if by_tag != Cat::None && tag != Tag::Form {
        return by_tag;
    }
    let by_role = match attrs.role.trim().to_ascii_lowercase().as_str() {
        "navigation" | "menu" | "menubar" | "tablist" => Cat::Nav,
        "contentinfo" => Cat::Footer,
        "banner" => Cat::Header,
        "complementary" => Cat::Aside,
        "search" => Cat::Forms,
        "dialog" | "alertdialog" => Cat::Overlay,
        _ => Cat::None,
    };
    if by_role != Cat::None {
        return by_role;
    }
    if attrs.class.is_empty() && attrs.id.is_empty() {
        return by_tag;
    }
    lower.clear();
    lower.push_str(attrs.class);
    lower.push(' ');
    lower.push_str(attrs.id);
    lower.make_ascii_lowercase();
    let mut category = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .map(word_category)
        .find(|cat| *cat != Cat::None)
        .unwrap_or(Cat::None);
    if category == Cat::None {
        category = joined_word_category(lower);
    }
    if category == Cat::None {
        category = by_tag;
    }
    category
}

fn word_category(word: &str) -> Cat {
    match word {
        "nav" | "navbar" | "navigation" | "menu" | "menubar" | "submenu" | "megamenu"
        | "breadcrumb" | "breadcrumbs" | "topbar" | "toc" | "skip" | "skiplink" | "pagination"
        | "pager" | "tabs" => Cat::Nav,
        "footer" | "colophon" | "copyright" => Cat::Footer,
        "header" | "masthead" => Cat::Header,
        "byline" | "author" | "authors" | "avatar" | "signature" | "sig" | "userinfo"
        | "postprofile" | "usercard" | "badge" | "badges" | "reputation" | "reactions"
        | "likes" | "votes" | "voting" | "vote" | "timestamp" | "dateline" | "date" | "meta"
        | "postmeta" | "tags" | "tagcloud" | "taglist" => Cat::Meta,
        "sidebar" | "aside" | "widget" | "widgets" | "related" | "recommended"
        | "recommendations" | "popular" | "trending" | "rail" => Cat::Aside,
        "comment" | "comments" | "commentlist" | "disqus" | "review" | "reviews" => Cat::Comments,
        "share" | "sharing" | "social" | "socials" | "sharethis" | "addthis" => Cat::Share,
        "ad" | "ads" | "advert" | "advertisement" | "adsense" | "sponsor" | "sponsored"
        | "promo" | "dfp" => Cat::Ads,
        "cookie" | "cookies" | "consent" | "gdpr" | "popup" | "modal" | "overlay" | "lightbox" => {
            Cat::Overlay
        }
        "login" | "signin" | "signup" | "newsletter" | "subscribe" | "subscription" | "search"
        | "searchbox" | "filters" | "facets" | "sort" | "sorting" | "sortby" => Cat::Forms,
        _ => Cat::None,
    }
}

/// What may follow a keyword written together with other words for the whole to still be
/// that keyword's element (`commentList`, `cookieBanner`, `footerLinks`): structural words,
/// a plural, a number. A keyword that is only the start of another word (`commentary`, an
/// opinion column; `socialism`) does not count.
const JOINED_SUFFIXES: &[&str] = &[
    "s",
    "list",
    "lists",
    "box",
    "area",
    "section",
    "container",
    "wrap",
    "wrapper",
    "block",
    "banner",
    "bar",
    "form",
    "count",
    "thread",
    "threads",
    "widget",
    "link",
    "links",
    "module",
    "panel",
    "popup",
    "notice",
    "holder",
    "content",
    "body",
    "items",
    "item",
    "icons",
    "icon",
    "media",
    "buttons",
    "button",
    "nav",
    "menu",
    "inner",
    "outer",
    "main",
    "top",
    "bottom",
    "row",
    "col",
    "text",
    "title",
    "header",
    "footer",
    "zone",
    "slot",
    "unit",
    "space",
    "label",
    "frame",
    "placeholder",
    "tools",
    "share",
    "bg",
    "modal",
    "overlay",
    "dialog",
    "message",
    "info",
    "signup",
    "cta",
    "card",
    "cards",
    "entry",
    "entries",
    "feed",
    "reply",
    "replies",
    "author",
    "meta",
    "wrapper",
    "sticky",
    "fixed",
    "mobile",
    "desktop",
];

/// Whether `keyword` appears in `word` as a part of it: at its end, or followed by a
/// structural word, a plural or a number ([`JOINED_SUFFIXES`]).
fn joined_in(word: &str, keyword: &str) -> bool {
    word.match_indices(keyword).any(|(at, _)| {
        let rest = &word[at + keyword.len()..];
        rest.is_empty()
            || rest.starts_with(|c: char| c.is_ascii_digit())
            || JOINED_SUFFIXES.iter().any(|suffix| {
                rest.strip_prefix(suffix).is_some_and(|r| {
                    r.is_empty()
                        || r.starts_with(|c: char| c.is_ascii_digit())
                        || JOINED_SUFFIXES.contains(&r)
                })
            })
    })
}

/// Categories for words written together with others (`commentList`, `cookiebanner`); see
/// [`joined_in`].
fn joined_word_category(lower: &str) -> Cat {
    const JOINED: &[(&str, Cat)] = &[
        ("cookie", Cat::Overlay),
        ("consent", Cat::Overlay),
        ("newsletter", Cat::Forms),
        ("breadcrumb", Cat::Nav),
        ("navbar", Cat::Nav),
        ("sidebar", Cat::Aside),
        ("footer", Cat::Footer),
        ("comment", Cat::Comments),
        ("social", Cat::Share),
        ("sharing", Cat::Share),
        ("advert", Cat::Ads),
    ];
    lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .find_map(|word| JOINED.iter().find(|(keyword, _)| joined_in(word, keyword)))
        .map_or(Cat::None, |(_, cat)| *cat)
}

/// Class names that hide an element at every screen size. A responsive variant beside them
/// (`hidden md:block`, `d-none d-lg-flex`) means the element shows on some screens, so it is
/// not hidden.
fn hidden_by_class(class: &str) -> bool {
    if class.is_empty() {
        return false;
    }
    let mut hidden = false;
    for name in class.split_ascii_whitespace() {
        let lower = name.to_ascii_lowercase();
        match lower.as_str() {
            "hidden" | "d-none" | "display-none" | "is-hidden" | "u-hidden" | "hide"
            | "visually-hidden" | "visuallyhidden" | "sr-only" | "screen-reader-text"
            | "screen-reader-only" | "wt-display-none" | "invisible" => hidden = true,
            _ => {
                let responsive = lower.contains(':')
                    || (lower.starts_with("d-")
                        && (lower.ends_with("-block")
                            || lower.ends_with("-flex")
                            || lower.ends_with("-inline")
                            || lower.ends_with("-grid")));
                if responsive {
                    return false;
                }
            }
        }
    }
    hidden
}

/// The id React gives a streamed segment: `S:` and a hexadecimal number.
fn is_streamed_segment(id: &str) -> bool {
    id.strip_prefix("S:")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn hidden_by_style(style: &str) -> bool {
    if style.is_empty() {
        return false;
    }
    let compact: String = style
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    compact.contains("display:none") || compact.contains("visibility:hidden")
}

// ---------------------------------------------------------------------------------------
// Deciding what is content.

/// A `nav` or `aside` whose text is at least this share link text is removed whatever its
/// size.
const NAV_LINKS_SHARE: f64 = 0.9;
/// A category is kept when its text is at least this share of the text that is left.
const KEEP_CATEGORY_SHARE: f64 = 0.5;
/// Comments are kept (a forum thread) when they hold this share of the text that is left.
const KEEP_COMMENTS_SHARE: f64 = 0.45;
/// A block headed as recommendations is removed unless it holds this share of the page.
const KEEP_RECOMMENDATIONS_SHARE: f64 = 0.8;
/// An element is never removed by its class words when it holds this share of the page.
const KEEP_ELEMENT_SHARE: f64 = 0.5;
/// Descend into a child while it holds at least this share of its parent's kept text.
const DESCEND_SHARE: f64 = 0.85;
/// The `main` element is trusted when it holds at least this share of the kept text.
const MAIN_SHARE: f64 = 0.1;
/// Link text counts this much towards an element's weight.
const LINK_WEIGHT: f64 = 0.3;
/// Blocks whose kept text is more than this share links are dropped (outside listings).
const LINK_DENSE: f64 = 0.6;
/// A link-dense block is a listing (kept) when it holds this share of the container's text.
const LISTING_SHARE: f64 = 0.4;

struct Analysis<'p> {
    page: &'p Page,
    removed: Vec<bool>,
    /// Text and link text that survive removal.
    kept: Vec<u32>,
    kept_links: Vec<u32>,
}

impl<'p> Analysis<'p> {
    fn new(page: &'p Page) -> Self {
        let n = page.nodes.len();
        Analysis {
            page,
            removed: vec![false; n],
            kept: vec![0; n],
            kept_links: vec![0; n],
        }
    }

    fn root(&self) -> u32 {
        if self.page.body != NO_PARENT {
            self.page.body
        } else {
            0
        }
    }

    /// Blocks introduced by a heading that names them as recommendations ("Similar items",
    /// "You may also like", "Frequently bought together", ...): for each such `h2`-`h6`, the
    /// nearest ancestor that holds more than the heading, when the heading opens it. They
    /// are removed outright, like a page footer, unless one holds the page's `h1` or
    /// `main` or nearly all of its text. Blocks headed as comments are marked too, but
    /// only beside an `article` (before or after it, not around or inside it).
    fn headed_blocks(&self) -> Vec<bool> {
        let nodes = &self.page.nodes;
        let mut marked = vec![false; nodes.len()];
        // Whether an `article` lies wholly before or after a block, in constant time: the
        // article that ends first, and the one that starts last.
        let mut first_article_end = usize::MAX;
        let mut last_article_start = None;
        for (i, node) in nodes.iter().enumerate() {
            if node.tag == Tag::Article {
                first_article_end = first_article_end.min(node.end as usize);
                last_article_start = Some(i);
            }
        }
        let beside_article = |block: usize| {
            first_article_end <= block
                || last_article_start.is_some_and(|a| a >= nodes[block].end as usize)
        };
        let mut heading = String::new();
        for (i, node) in nodes.iter().enumerate() {
            if !matches!(node.tag, Tag::H(2..=6)) || node.len == 0 || node.len > 60 {
                continue;
            }
            heading.clear();
            for text in &nodes[i + 1..node.end as usize] {
                if text.tag == Tag::Text {
                    heading.push_str(
                        &self.page.text[text.text_start as usize..text.text_end as usize],
                    );
                    heading.push(' ');
                }
            }
            let words: Vec<String> = heading
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_lowercase)
                .skip_while(|w| w.bytes().all(|b| b.is_ascii_digit()))
                .collect();
            let opens_with = |phrase: &&[&str]| {
                words
                    .iter()
                    .map(String::as_str)
                    .take(phrase.len())
                    .eq(phrase.iter().copied())
            };
            let recommendations = RECOMMENDATION_HEADINGS.iter().any(opens_with);
            let comments = !recommendations
                && last_article_start.is_some()
                && COMMENT_HEADINGS.iter().any(opens_with);
            if !recommendations && !comments {
                continue;
            }
            let mut block = node.parent;
            while block != NO_PARENT
                && block != self.root()
                && nodes[block as usize].len <= node.len + 20
            {
                block = nodes[block as usize].parent;
            }
            // The heading must open the block: in a document whose sections are siblings
            // under one parent, the parent holds text before the heading and is not marked.
            let opens = block != NO_PARENT
                && block != self.root()
                && !nodes[block as usize + 1..i]
                    .iter()
                    .any(|n| n.tag == Tag::Text && n.len > 0);
            // Comments go on a page built around an article that they are not part of.
            if opens && (recommendations || beside_article(block as usize)) {
                marked[block as usize] = true;
            }
        }
        marked
    }

    fn mark_boilerplate(&mut self) {
        let nodes = &self.page.nodes;
        if nodes.is_empty() {
            return;
        }
        let total = nodes[self.root() as usize].len.max(1) as f64;
        // Each element's category, after the per-element safeguards.
        let mut cats = vec![Cat::None; nodes.len()];
        let mut inside_article = vec![false; nodes.len()];
        // Page-level footers and headers (whatever their share of the text), menus made of
        // links, and blocks headed as recommendations or comments (short of nearly all of
        // it): removed without a category vote.
        let mut removed_outright = vec![false; nodes.len()];
        let headed = self.headed_blocks();
        for (i, node) in nodes.iter().enumerate() {
            let parent_article = node.parent != NO_PARENT && inside_article[node.parent as usize];
            inside_article[i] = parent_article || matches!(node.tag, Tag::Article | Tag::Main);
            let mut cat = node.cat;
            // A header inside an article or main is the article's own header.
            if cat == Cat::Header && node.tag == Tag::Header && parent_article {
                cat = Cat::None;
            }
            // Named a header by its class but made of text, not links: the header of a
            // section, a card or an accordion pane, not the site's.
            if cat == Cat::Header && node.tag != Tag::Header && 2 * node.link_len < node.len {
                cat = Cat::None;
            }
            if cat == Cat::None && !headed[i] {
                continue;
            }
            let strong = matches!(node.tag, Tag::Nav | Tag::Footer | Tag::Aside | Tag::Header)
                || cat == Cat::Hidden;
            let share = node.len as f64 / total;
            // A page-level `<footer>` is never the content, however much of the page it
            // holds: on a page whose content is drawn by script it is all that is left.
            if node.tag == Tag::Footer && !parent_article {
                removed_outright[i] = true;
            } else if node.tag == Tag::Header && cat == Cat::Header && node.landmarks == 0 {
                // The site's header (outside any article): its menus can carry more text
                // than the page, and it holds no content unless it holds the `h1`.
                removed_outright[i] = true;
            } else if matches!(node.tag, Tag::Nav | Tag::Aside)
                && node.landmarks == 0
                && node.link_len as f64 >= NAV_LINKS_SHARE * node.len as f64
            {
                // A navigation landmark made of links is a menu, however much of the page
                // it holds: a mega-menu can outweigh the page's own text.
                removed_outright[i] = true;
            } else if headed[i] && node.landmarks == 0 && share < KEEP_RECOMMENDATIONS_SHARE {
                // Named as recommendations or comments by its heading: removed whatever its
                // class words say, unless it is nearly the whole page.
                removed_outright[i] = true;
            } else if share < KEEP_ELEMENT_SHARE && (strong || node.landmarks == 0) {
                cats[i] = cat;
            }
        }
        // The text of each category, counted at its outermost categorized elements.
        let mut inside = vec![false; nodes.len()];
        let mut by_cat = [0u64; CATEGORIES];
        for (i, node) in nodes.iter().enumerate() {
            let parent_inside = node.parent != NO_PARENT && inside[node.parent as usize];
            inside[i] = parent_inside || cats[i] != Cat::None;
            if !parent_inside && cats[i] != Cat::None {
                by_cat[cats[i] as usize] += node.len as u64;
            }
        }
        let categorized: u64 = by_cat.iter().sum();
        let mut remove_cat = [false; CATEGORIES];
        for cat in 1..CATEGORIES {
            let left = total - (categorized - by_cat[cat]) as f64;
            let share = by_cat[cat] as f64 / left.max(1.0);
            let keep_share = if cat == Cat::Comments as usize {
                KEEP_COMMENTS_SHARE
            } else {
                KEEP_CATEGORY_SHARE
            };
            remove_cat[cat] = share < keep_share;
        }
        // Remove whole categories. Inside a kept category (the posts of a forum thread),
        // elements of other categories (the posters' details) are still removed, as their
        // category is removed elsewhere or never reached a share of its own.
        for (i, node) in nodes.iter().enumerate() {
            let parent_removed = node.parent != NO_PARENT && self.removed[node.parent as usize];
            let own = removed_outright[i] || (cats[i] != Cat::None && remove_cat[cats[i] as usize]);
            let short_button = node.tag == Tag::Button && node.len < 40;
            self.removed[i] = parent_removed || own || short_button;
        }
    }

    fn measure_kept(&mut self) {
        let nodes = &self.page.nodes;
        for i in (0..nodes.len()).rev() {
            let node = nodes[i];
            if self.removed[i] {
                self.kept[i] = 0;
                self.kept_links[i] = 0;
                continue;
            }
            if node.tag == Tag::Text {
                self.kept[i] = node.len;
            }
            if node.tag == Tag::A {
                self.kept_links[i] = self.kept[i];
            }
            if node.parent != NO_PARENT {
                let p = node.parent as usize;
                self.kept[p] += self.kept[i];
                self.kept_links[p] += self.kept_links[i];
            }
        }
    }

    fn weight(&self, i: usize) -> f64 {
        let links = self.kept_links[i] as f64;
        (self.kept[i] as f64 - links) + LINK_WEIGHT * links
    }

    fn main_container(&self) -> u32 {
        let nodes = &self.page.nodes;
        if nodes.is_empty() {
            return 0;
        }
        let mut current = self.start_of_descent();
        loop {
            let total = self.weight(current);
            if total <= 0.0 {
                return current as u32;
            }
            let mut best = None;
            let mut best_weight = 0.0;
            let mut child = current + 1;
            while child < nodes[current].end as usize {
                if nodes[child].tag != Tag::Text && !self.removed[child] {
                    let w = self.weight(child);
                    if w > best_weight {
                        best_weight = w;
                        best = Some(child);
                    }
                }
                child = nodes[child].end as usize;
            }
            match best {
                Some(b) if best_weight >= DESCEND_SHARE * total => current = b,
                _ => return current as u32,
            }
        }
    }

    /// Where the descent starts: the page's one `main` element (or `role="main"`) when it
    /// holds a fair share of the kept text, else `body`.
    fn start_of_descent(&self) -> usize {
        let root = self.root() as usize;
        let nodes = &self.page.nodes;
        let total = self.weight(root);
        let mut mains =
            (root..nodes[root].end as usize).filter(|&i| nodes[i].main_role && !self.removed[i]);
        match (mains.next(), mains.next()) {
            (Some(main), None) if self.weight(main) >= MAIN_SHARE * total => main,
            _ => root,
        }
    }

    fn link_dense(&self, i: usize) -> bool {
        let node = &self.page.nodes[i];
        let blocky = matches!(
            node.tag,
            Tag::Ul
                | Tag::Ol
                | Tag::Dl
                | Tag::Block
                | Tag::Section
                | Tag::Table
                | Tag::P
                | Tag::Li
                | Tag::Nav
                | Tag::Header
                | Tag::Footer
                | Tag::Aside
                | Tag::Form
        );
        let kept = self.kept[i];
        blocky && kept > 0 && self.kept_links[i] as f64 > LINK_DENSE * kept as f64
    }

    /// The main text of the subtree at `container`; with `listing`, link-dense blocks are
    /// kept as well.
    fn render(&self, container: u32, listing: bool) -> String {
        let nodes = &self.page.nodes;
        if nodes.is_empty() {
            return String::new();
        }
        let start = container as usize;
        // Room for the kept characters and the spaces between words, in one allocation
        // for most text.
        let mut writer = Writer {
            out: String::with_capacity(self.kept[start] as usize * 5 / 4 + 64),
            ..Writer::default()
        };
        let stop = nodes[start].end as usize;
        let kept = self.kept[start].max(1) as f64;
        // Inside a listing (a link-dense block that is a large part of the container), the
        // links are the content and are kept; elsewhere link-dense blocks are dropped.
        let mut listing_until = if listing || self.link_dense(start) {
            stop
        } else {
            0
        };
        // Open elements: (end, tag, ordinal of the next list item or -1).
        let mut open: Vec<(u32, Tag, i32)> = Vec::new();
        let mut i = start;
        while i < stop {
            while let Some(&(end, tag, _)) = open.last() {
                if end as usize > i {
                    break;
                }
                open.pop();
                writer.close(tag);
            }
            let node = &nodes[i];
            if node.tag == Tag::Text {
                let text = &self.page.text[node.text_start as usize..node.text_end as usize];
                writer.text(text);
                i += 1;
                continue;
            }
            if self.removed[i] {
                i = node.end as usize;
                continue;
            }
            if i >= listing_until && self.link_dense(i) {
                if self.kept[i] as f64 >= LISTING_SHARE * kept
                    || writer.out.trim_end().ends_with(':')
                {
                    listing_until = node.end as usize;
                } else {
                    i = node.end as usize;
                    continue;
                }
            }
            let mut ordinal = -1;
            if node.tag == Tag::Li {
                if let Some(list) = open
                    .iter_mut()
                    .rev()
                    .find(|o| matches!(o.1, Tag::Ul | Tag::Ol))
                {
                    if list.1 == Tag::Ol {
                        list.2 += 1;
                        ordinal = list.2;
                    }
                }
            }
            writer.open(node.tag, ordinal);
            let counter = if node.tag == Tag::Ol { 0 } else { -1 };
            open.push((node.end, node.tag, counter));
            i += 1;
        }
        while let Some((_, tag, _)) = open.pop() {
            writer.close(tag);
        }
        writer.finish()
    }
}

/// Structured data replaces visible text of fewer words than this.
const THIN_WORDS: usize = 60;

/// True when `text` has fewer than `thin` words and `fallback` says at least twice as much.
fn is_thin(text: &str, fallback: &str, thin: usize) -> bool {
    let visible = text.split_whitespace().count();
    visible < thin && fallback.split_whitespace().count() > 2 * visible.max(10)
}

// ---------------------------------------------------------------------------------------
// Writing structured text.

#[derive(Default)]
struct Writer {
    out: String,
    /// 0: nothing pending, 1: a line break, 2: a blank line.
    pending_break: u8,
    pending_space: bool,
    pending_prefix: Option<String>,
    preformatted: u32,
    cells_in_row: u32,
}

/// True when `text` is ASCII whose only whitespace is single spaces (three vectorized scans,
/// where the general path looks at every byte in turn).
fn is_plain_spaced(text: &str) -> bool {
    let bytes = text.as_bytes();
    text.is_ascii()
        && !bytes.iter().any(|&b| matches!(b, b'\t'..=b'\r'))
        && memchr::memmem::find(bytes, b"  ").is_none()
}

/// Whether a whitespace character starts at byte `i` of `text`.
#[inline]
fn starts_space(text: &str, i: usize) -> bool {
    space_len_at(text, i) != 0
}

impl Writer {
    fn text(&mut self, text: &str) {
        if self.preformatted > 0 {
            if !text.is_empty() {
                self.flush_pending();
                self.out.push_str(text);
            }
            return;
        }
        if is_plain_spaced(text) {
            // ASCII words separated by single spaces: copied at once, with the spaces at
            // either end becoming pending spaces.
            let trimmed = text.trim_matches(' ');
            if text.starts_with(' ') {
                self.pending_space = true;
            }
            if !trimmed.is_empty() {
                self.flush_pending();
                self.out.push_str(trimmed);
                if text.ends_with(' ') {
                    self.pending_space = true;
                }
            }
            return;
        }
        // Whitespace runs become one pending space. Words already separated by one plain
        // space (most of any text) are copied as one run.
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < text.len() {
            let spaces = i;
            while i < text.len() {
                match space_len_at(text, i) {
                    0 => break,
                    n => i += n,
                }
            }
            if i > spaces {
                self.pending_space = true;
            }
            let run = i;
            loop {
                while i < text.len() && !starts_space(text, i) {
                    i += 1;
                }
                let single_space =
                    bytes.get(i) == Some(&b' ') && i + 1 < text.len() && !starts_space(text, i + 1);
                if !single_space {
                    break;
                }
                i += 1;
            }
            if i > run {
                self.flush_pending();
                self.out.push_str(&text[run..i]);
            }
        }
    }

    fn flush_pending(&mut self) {
        if self.out.is_empty() {
            self.pending_break = 0;
            self.pending_space = false;
        } else if self.pending_break > 0 {
            self.out.push_str(if self.pending_break >= 2 {
                "\n\n"
            } else {
                "\n"
            });
            self.pending_break = 0;
            self.pending_space = false;
        } else if self.pending_space {
            self.out.push(' ');
            self.pending_space = false;
        }
        if let Some(prefix) = self.pending_prefix.take() {
            self.out.push_str(&prefix);
        }
    }

    fn request_break(&mut self, lines: u8) {
        self.pending_break = self.pending_break.max(lines);
        self.pending_space = false;
    }

    fn open(&mut self, tag: Tag, ordinal: i32) {
        match tag {
            Tag::P
            | Tag::H(_)
            | Tag::Table
            | Tag::Blockquote
            | Tag::Figure
            | Tag::Ul
            | Tag::Ol
            | Tag::Dl
            | Tag::Section
            | Tag::Article
            | Tag::Main
            | Tag::Header
            | Tag::Footer
            | Tag::Nav
            | Tag::Aside
            | Tag::Form
            | Tag::Hr => self.request_break(2),
            Tag::Pre => {
                self.request_break(2);
                self.preformatted += 1;
            }
            Tag::Li => {
                self.request_break(1);
                self.pending_prefix = Some(if ordinal > 0 {
                    format!("{ordinal}. ")
                } else {
                    "- ".to_string()
                });
            }
            Tag::Tr => {
                self.request_break(1);
                self.cells_in_row = 0;
            }
            Tag::Cell => {
                if self.cells_in_row > 0 && self.pending_break == 0 {
                    self.pending_prefix = Some("| ".to_string());
                    self.pending_space = true;
                }
                self.cells_in_row += 1;
            }
            Tag::Block | Tag::Dt | Tag::Dd | Tag::Caption | Tag::Br | Tag::Body => {
                self.request_break(1)
            }
            Tag::Text | Tag::Inline | Tag::A | Tag::Button => {}
        }
    }

    fn close(&mut self, tag: Tag) {
        match tag {
            Tag::Pre => {
                self.preformatted = self.preformatted.saturating_sub(1);
                self.request_break(2);
            }
            Tag::Cell => {
                // A cell with no text does not leave its separator behind.
                if self.pending_prefix.as_deref() == Some("| ") {
                    self.pending_prefix = None;
                }
            }
            Tag::Li => {
                if self.pending_prefix.is_some() {
                    self.pending_prefix = None;
                }
                self.request_break(1);
            }
            other if other.is_heading() => self.request_break(2),
            other => self.open(other, -1),
        }
    }

    fn finish(mut self) -> String {
        let trimmed = self.out.trim_end().len();
        self.out.truncate(trimmed);
        drop_metadata_lines(drop_repeated_lines(drop_repeated_blocks(self.out)))
    }
}

/// The lines of `text` without those `dropped` names (given each line and its trimmed
/// text, in order), blank lines kept where they separated what is left; `None` when no line
/// is dropped. Nothing is copied until a line is dropped (most texts lose none).
fn drop_lines<'a>(
    text: &'a str,
    mut dropped: impl FnMut(&'a str, &'a str) -> bool,
) -> Option<String> {
    let mut out: Option<String> = None;
    let mut blank = false; // a blank line is due before the next line written
    let mut start = 0;
    for line in text.split('\n') {
        let line_start = start;
        start += line.len() + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() {
            if let Some(out) = &out {
                blank = !out.is_empty();
            }
            continue;
        }
        if dropped(line, trimmed) {
            if out.is_none() {
                // Every line before this one is kept: written now, as the loop below would
                // have written them.
                let mut kept = String::with_capacity(text.len());
                blank = false;
                for line in text[..line_start.saturating_sub(1)].split('\n') {
                    push_kept_line(&mut kept, &mut blank, line);
                }
                out = Some(kept);
            }
            continue;
        }
        if let Some(out) = &mut out {
            push_kept_line(out, &mut blank, line);
        }
    }
    out
}

/// Appends a kept `line` to `out`, after one blank line when blank lines came before it
/// (`blank`, which a blank line sets and a written line clears).
fn push_kept_line(out: &mut String, blank: &mut bool, line: &str) {
    if line.trim().is_empty() {
        *blank = !out.is_empty();
        return;
    }
    if !out.is_empty() {
        out.push_str(if *blank { "\n\n" } else { "\n" });
    }
    out.push_str(line);
    *blank = false;
}

/// Lines this long or longer are never taken for article metadata.
const METADATA_LINE_CHARS: usize = 60;

/// Whether a line is article metadata rather than content: only a date ("March 3, 2026",
/// "3 Mar 2026", "2026-03-03"), a reading time ("5 min read"), or a publication stamp
/// ("Updated on March 3, 2026", "Posted: 03/03/2026"). A date inside a sentence, a table
/// row or a list of events with their titles is content and stays.
fn is_metadata_line(trimmed: &str) -> bool {
    static PATTERNS: std::sync::OnceLock<[regex::Regex; 3]> = std::sync::OnceLock::new();
    if trimmed.len() >= METADATA_LINE_CHARS || !trimmed.bytes().any(|b| b.is_ascii_digit()) {
        return false;
    }
    let patterns = PATTERNS.get_or_init(|| {
        const MONTH: &str = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?";
        [
            format!(
                r"(?i)^(-\s*)?(({MONTH}\s+\d{{1,2}},?\s+\d{{4}})|(\d{{1,2}}\s+{MONTH},?\s+\d{{4}})|(\d{{4}}-\d{{2}}-\d{{2}}))\.?$"
            ),
            r"(?i)^\d+\s*(min|minute)s?\.?\s*read\.?$".to_string(),
            r"(?i)^(updated|published|posted)( on)?:?\s+.{0,40}\d{4}\.?$".to_string(),
        ]
        .map(|p| regex::Regex::new(&p).expect("the metadata patterns are valid"))
    });
    patterns.iter().any(|p| p.is_match(trimmed))
}

/// Drops the lines that are only article metadata ([`is_metadata_line`]): the date and
/// reading time under a headline are the page's, not the article's, and the same article
/// under another template shows them differently or not at all.
fn drop_metadata_lines(text: String) -> String {
    drop_lines(&text, |_, trimmed| is_metadata_line(trimmed)).unwrap_or(text)
}

/// Blocks at least this long that repeat an earlier block of the text are dropped.
const REPEATED_BLOCK_CHARS: usize = 80;

/// Drops each block (the text between blank lines: a paragraph, a heading, a list, a
/// table) of [`REPEATED_BLOCK_CHARS`] or more that repeats an earlier block: pages often
/// carry the same block twice or more (a version for small screens and one for large, the
/// panels of a colour picker), which a reader sees once.
fn drop_repeated_blocks(text: String) -> String {
    let mut seen = TextSet::default();
    let repeated = blocks(&text)
        .any(|block| block.len() >= REPEATED_BLOCK_CHARS && !seen.insert(block.trim()));
    if !repeated {
        return text;
    }
    seen.clear();
    let mut out = String::with_capacity(text.len());
    for block in blocks(&text) {
        if block.len() >= REPEATED_BLOCK_CHARS && !seen.insert(block.trim()) {
            continue;
        }
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(block);
    }
    out
}

/// A set of text slices hashed with xxh3 (the texts are whole paragraphs; SipHash costs
/// several times as much on them).
type TextSet<'a> = std::collections::HashSet<&'a str, xxhash_rust::xxh3::Xxh3DefaultBuilder>;

/// The pieces of `text` between occurrences of "\n\n", as `text.split("\n\n")` gives them.
fn blocks(text: &str) -> impl Iterator<Item = &str> {
    static FINDER: std::sync::OnceLock<memchr::memmem::Finder<'static>> =
        std::sync::OnceLock::new();
    let finder = FINDER.get_or_init(|| memchr::memmem::Finder::new("\n\n"));
    let mut start = 0;
    let mut matches = finder.find_iter(text.as_bytes());
    std::iter::from_fn(move || {
        if start > text.len() {
            return None;
        }
        let end = matches.next().unwrap_or(text.len());
        let block = &text[start..end];
        start = end + 2;
        Some(block)
    })
}

/// Drops each line of [`REPEATED_BLOCK_CHARS`] or more that repeats an earlier line, as
/// [`drop_repeated_blocks`] does for blocks: paragraphs drawn as `div`s are separated by a
/// line break, not a blank line, and the same repeated paragraph must go whatever the
/// markup around it.
fn drop_repeated_lines(text: String) -> String {
    let mut seen = TextSet::default();
    drop_lines(&text, |line, trimmed| {
        line.len() >= REPEATED_BLOCK_CHARS && !seen.insert(trimmed)
    })
    .unwrap_or(text)
}

/// Collapses runs of whitespace to one space and trims the ends.
pub fn collapse_whitespace(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_words(&mut out, 0, text);
    out
}

/// Appends the words of `text` to `out`, one space between words, and one before the first
/// when `out` has grown past `start`.
fn push_words(out: &mut String, start: usize, text: &str) {
    for word in text.split_whitespace() {
        if out.len() > start {
            out.push(' ');
        }
        out.push_str(word);
    }
}

/// A `<title>` without the site name: the longest part when split on ` | `, ` - `, ` – `,
/// ` — ` or ` :: `.
fn clean_title(title: &str) -> String {
    const SEPARATORS: &[&str] = &[" | ", " - ", " – ", " — ", " :: ", " · ", " • "];
    for separator in SEPARATORS {
        if title.contains(separator) {
            return title
                .split(separator)
                .max_by_key(|part| part.chars().count())
                .unwrap_or(title)
                .trim()
                .to_string();
        }
    }
    title.trim().to_string()
}

// ---------------------------------------------------------------------------------------
// Structured data.

/// A schema.org `Product` description of at least this many words can be the main text.
const PRODUCT_DESCRIPTION_WORDS: usize = 80;
/// ... when the visible main text has at most this many times its words.
const PRODUCT_TEXT_RATIO: usize = 3;

/// What the page's JSON-LD blocks say.
struct Structured {
    /// The longest `articleBody`, else the longest `description`, as text.
    text: Option<String>,
    /// The longest `description` of an item whose `@type` is `Product`, as text.
    product_description: Option<String>,
}

impl Structured {
    fn of(blocks: &[String]) -> Structured {
        let mut body: Option<String> = None;
        let mut description: Option<String> = None;
        let mut product: Option<String> = None;
        for block in blocks {
            let Ok(value) = serde_json::from_str::<serde_json::Value>(block.trim()) else {
                continue;
            };
            let mut stack = vec![&value];
            let mut visited = 0;
            while let Some(value) = stack.pop() {
                visited += 1;
                if visited > 10_000 {
                    break;
                }
                match value {
                    serde_json::Value::Array(items) => stack.extend(items.iter()),
                    serde_json::Value::Object(map) => {
                        let is_product = map.get("@type").is_some_and(names_product);
                        for (key, field) in map {
                            match (key.as_str(), field) {
                                ("articleBody", serde_json::Value::String(s)) => {
                                    keep_longer(&mut body, s)
                                }
                                ("description", serde_json::Value::String(s)) => {
                                    keep_longer(&mut description, s);
                                    if is_product {
                                        keep_longer(&mut product, s);
                                    }
                                }
                                (
                                    _,
                                    nested @ (serde_json::Value::Array(_)
                                    | serde_json::Value::Object(_)),
                                ) => stack.push(nested),
                                _ => {}
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        let as_text = |text: Option<String>| {
            text.map(|text| structured_to_text(&text))
                .filter(|t| !t.is_empty())
        };
        Structured {
            text: as_text(body.or(description)),
            product_description: as_text(product),
        }
    }
}

/// A JSON-LD `@type` that is `Product` or a list holding it.
fn names_product(kind: &serde_json::Value) -> bool {
    match kind {
        serde_json::Value::String(s) => s == "Product",
        serde_json::Value::Array(items) => items.iter().any(|i| i.as_str() == Some("Product")),
        _ => false,
    }
}

fn keep_longer(slot: &mut Option<String>, candidate: &str) {
    if slot.as_ref().is_none_or(|s| s.len() < candidate.len()) {
        *slot = Some(candidate.to_string());
    }
}

/// JSON-LD text sometimes carries markup; reduce it to text with paragraph breaks.
fn structured_to_text(text: &str) -> String {
    if !text.contains('<') {
        return text
            .split("\n\n")
            .map(collapse_whitespace)
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n");
    }
    let dom = Html::parse_fragment(text);
    let mut writer = Writer::default();
    for edge in dom.tree.root().traverse() {
        match edge {
            ego_tree::iter::Edge::Open(node) => match node.value() {
                DomNode::Text(t) => writer.text(t),
                DomNode::Element(e) => {
                    if let Some(tag) = Tag::of(e.name()) {
                        writer.open(tag, -1)
                    }
                }
                _ => {}
            },
            ego_tree::iter::Edge::Close(node) => {
                if let DomNode::Element(e) = node.value() {
                    if let Some(tag) = Tag::of(e.name()) {
                        writer.close(tag)
                    }
                }
            }
        }
    }
    writer.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

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
            let lower = class.to_string();
            let whole = lower
                .split(|c: char| !c.is_ascii_alphanumeric())
                .map(word_category)
                .find(|c| *c != Cat::None)
                .unwrap_or(Cat::None);
            let got = if whole == Cat::None {
                joined_word_category(&lower)
            } else {
                whole
            };
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
    fn raw_links_keep_hrefs_and_texts_and_resolve_like_links() {
        let html = "<html><head><base href=\"/docs/\"></head><body><p>Intro text.</p>\
            <a href=\" a.html#part \">  One <b>two</b>\n</a><a href=\"#top\">Top</a>\
            <a href=\"mailto:x@example.com\">Mail</a><a href=\"\">Empty</a>\
            <a rel=\"nofollow\" href=\"/abs?q=1\">Abs</a></body></html>";
        let url = Url::parse("http://example.com/start/page.html").unwrap();
        let (_, raw) = extract_unresolved(html, Some(&url));
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
    use proptest::prelude::*;

    proptest! {
        /// The byte-level whitespace test agrees with `char::is_whitespace`: the writer
        /// sees the words `split_whitespace` sees, and counts the same characters.
        #[test]
        fn whitespace_scanning_matches_char_is_whitespace(
            text in "([a-z\u{e9}\u{4e2d} \t\n\u{0b}\u{85}\u{a0}\u{1680}\u{2003}\u{2028}\u{202f}\u{205f}\u{3000}\u{2010}\u{e100}]){0,40}"
        ) {
            let mut writer = Writer::default();
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
            let mut writer = Writer::default();
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
