//! The flat tree: the parsed document copied into one vector of nodes with their tags,
//! text, link text and boilerplate category, in document order.

use scraper::{Html, Node as DomNode};
use url::Url;

use super::classify::{classify, is_streamed_segment};
use super::links::{RawLink, RawLinks};
use super::render::{clean_title, collapse_whitespace, push_words};
use crate::text::text_weight;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tag {
    Text,
    Inline,
    /// `b` and `strong`: inline, and a paragraph written all in bold is a label.
    Strong,
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
    pub(super) fn of(name: &str) -> Option<Tag> {
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
            "caption" | "summary" | "legend" => Tag::Caption,
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
            "b" | "strong" => Tag::Strong,
            "span" | "i" | "em" | "code" | "small" | "sup" | "sub" | "abbr" | "time" | "label"
            | "mark" | "u" | "s" | "cite" | "q" | "font" | "img" | "kbd" | "var" | "samp"
            | "del" | "ins" | "dfn" | "bdi" | "bdo" | "data" | "tt" | "big" | "strike" | "wbr"
            | "picture" | "source" | "output" | "meter" | "nobr" => Tag::Inline,
            // Never content: form controls, media and embedded documents, head-only
            // elements that strayed into the body, and the captions of figures (picture
            // descriptions and photo credits: on both development sets, the ground truth
            // leaves them out more often than it keeps them).
            "select" | "option" | "optgroup" | "input" | "textarea" | "datalist" | "canvas"
            | "video" | "audio" | "embed" | "map" | "area" | "track" | "frame" | "frameset"
            | "head" | "title" | "meta" | "link" | "base" | "style" | "script" | "noscript"
            | "template" | "svg" | "math" | "iframe" | "object" | "dialog" | "param"
            | "figcaption" => {
                return None;
            }
            _ => Tag::Block,
        })
    }

    pub(super) fn is_heading(self) -> bool {
        matches!(self, Tag::H(_))
    }
}

/// Boilerplate categories, decided and removed as a whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Cat {
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

pub(super) const CATEGORIES: usize = 12;

#[derive(Clone, Copy, Debug)]
pub(super) struct Node {
    pub(super) tag: Tag,
    pub(super) cat: Cat,
    /// A `main` element or `role="main"`.
    pub(super) main_role: bool,
    pub(super) parent: u32,
    /// One past the last node of this node's subtree.
    pub(super) end: u32,
    /// Text nodes: the byte range of their text in `Page::text`.
    pub(super) text_start: u32,
    pub(super) text_end: u32,
    /// Text in the subtree: its characters, whitespace not counted, a Han, Kana or Hangul
    /// character counted as three ([`crate::text::text_weight`]).
    pub(super) len: u32,
    /// Of that, the text inside links.
    pub(super) link_len: u32,
    /// `h1` and `main` elements in the subtree.
    pub(super) landmarks: u32,
    /// Its class or id names it the readers' comments (`comments`, `commentlist`,
    /// `disqus`), not customer reviews.
    pub(super) comment_words: bool,
    /// Named the page's sidebar (`role="complementary"`, or `sidebar` in its class or id
    /// words), not only an aside.
    pub(super) sidebar: bool,
}

pub(super) struct Page {
    pub(super) nodes: Vec<Node>,
    pub(super) text: String,
    pub(super) body: u32,
    /// Anchors with an `href`: node, end of the href in `anchor_hrefs`, nofollow.
    pub(super) anchors: Vec<(u32, u32, bool)>,
    pub(super) anchor_hrefs: String,
    pub(super) title_tag: Option<String>,
    pub(super) og_title: Option<String>,
    /// `og:type` (`article`, `website`, `product`, ...).
    pub(super) og_type: Option<String>,
    /// `og:description`, else `<meta name="description">`.
    pub(super) description: Option<String>,
    pub(super) base_href: Option<String>,
    /// The page's own address: `<link rel="canonical">`, else `og:url`.
    pub(super) canonical: Option<String>,
    /// The hrefs of the head's links into the page's own site (feeds, `shortlink`, `prev`,
    /// ...: [`super::site`]).
    pub(super) head_links: Vec<String>,
    /// `og:image` and `og:video` addresses ([`super::site`]).
    pub(super) media: Vec<String>,
    /// The head's metas that name the site (its name, its owner's verification tokens),
    /// as `name=content` ([`super::site::SITE_METAS`]).
    pub(super) site_metas: Vec<String>,
    pub(super) language: Option<String>,
    /// An element's microdata `itemtype` names a discussion (a forum thread, a question
    /// and its answers).
    pub(super) discussion: bool,
}

pub(super) const NO_PARENT: u32 = u32::MAX;

/// Head links into the page's own site kept at most (a page with a link per language
/// version can have hundreds).
pub(super) const MAX_HEAD_LINKS: usize = 32;

/// An `h1` of at least this many words is a story's headline, not a section's name
/// ("Economy", "Best of the Year").
pub(super) const HEADLINE_WORDS: usize = 5;

/// The attributes of one element that extraction looks at.
#[derive(Default)]
pub(super) struct Attrs<'a> {
    pub(super) class: &'a str,
    pub(super) id: &'a str,
    pub(super) role: &'a str,
    pub(super) style: &'a str,
    pub(super) href: Option<&'a str>,
    pub(super) rel: &'a str,
    /// Microdata `itemprop`.
    pub(super) itemprop: &'a str,
    /// Microdata `itemtype`.
    pub(super) itemtype: &'a str,
    pub(super) hidden: bool,
    pub(super) aria_hidden: bool,
}

impl<'a> Attrs<'a> {
    /// (An attribute read here or elsewhere in this file must be in the list of those the
    /// pass before parsing keeps, `content/strip/attributes.rs`; a test checks it.)
    pub(super) fn of(element: &'a scraper::node::Element) -> Attrs<'a> {
        let mut attrs = Attrs::default();
        for (name, value) in element.attrs() {
            match name {
                "class" => attrs.class = value,
                "id" => attrs.id = value,
                "role" => attrs.role = value,
                "style" => attrs.style = value,
                "href" => attrs.href = Some(value),
                "rel" => attrs.rel = value,
                "itemprop" => attrs.itemprop = value,
                "itemtype" => attrs.itemtype = value,
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
    pub(super) fn build(dom: &Html, html_len: usize) -> Page {
        let mut page = Page {
            nodes: Vec::with_capacity((html_len / 48).clamp(64, 4096)),
            text: String::with_capacity(html_len.min(64 * 1024)),
            body: NO_PARENT,
            anchors: Vec::new(),
            anchor_hrefs: String::new(),
            title_tag: None,
            og_title: None,
            og_type: None,
            description: None,
            base_href: None,
            canonical: None,
            head_links: Vec::new(),
            media: Vec::new(),
            site_metas: Vec::new(),
            language: None,
            discussion: false,
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
                        in_title |= page.read_head(name, element);
                        let tag = if skipping > 0 { None } else { Tag::of(name) };
                        let Some(tag) = tag else {
                            skipping += 1;
                            open.push(None);
                            continue;
                        };
                        let index = page.push_element(tag, element, &open, &mut lower);
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

    /// Reads what an element of the head says of the page (its language, title, meta
    /// tags, base and canonical address); true when it opens the title.
    fn read_head(&mut self, name: &str, element: &scraper::node::Element) -> bool {
        match name {
            "html" => {
                self.language = element
                    .attr("lang")
                    .or_else(|| element.attr("xml:lang"))
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(str::to_string);
            }
            "title" if self.title_tag.is_none() => return true,
            "meta" => self.read_meta(element),
            "base" if self.base_href.is_none() => {
                self.base_href = element.attr("href").map(str::to_string);
            }
            "link" => {
                let canonical = element.attr("rel").is_some_and(|rel| {
                    rel.split_ascii_whitespace()
                        .any(|r| r.eq_ignore_ascii_case("canonical"))
                });
                if canonical {
                    if let Some(href) = element.attr("href") {
                        self.canonical = Some(href.trim().to_string());
                    }
                } else if let (Some(rel), Some(href)) = (element.attr("rel"), element.attr("href"))
                {
                    if super::site::is_self_rel(rel) && self.head_links.len() < MAX_HEAD_LINKS {
                        self.head_links.push(href.trim().to_string());
                    }
                }
            }
            _ => {}
        }
        false
    }

    /// Adds a node for an element that is kept, under the innermost open one; returns its
    /// index. `lower` is room for the class and id words.
    fn push_element(
        &mut self,
        tag: Tag,
        element: &scraper::node::Element,
        open: &[Option<u32>],
        lower: &mut String,
    ) -> u32 {
        let attrs = Attrs::of(element);
        let cat = classify(tag, &attrs, lower);
        // `lower` holds the class and id words whenever they decided `cat`.
        let comment_words =
            cat == Cat::Comments && (lower.contains("comment") || lower.contains("disqus"));
        let sidebar = cat == Cat::Aside
            && tag != Tag::Aside
            && (attrs.role.trim().eq_ignore_ascii_case("complementary")
                || lower.contains("sidebar"));
        if !attrs.itemtype.is_empty() {
            self.discussion |= ["DiscussionForumPosting", "QAPage", "/Question"]
                .iter()
                .any(|t| attrs.itemtype.contains(t));
        }
        let index = self.nodes.len() as u32;
        if tag == Tag::Body && self.body == NO_PARENT {
            self.body = index;
        }
        if tag == Tag::A {
            if let Some(href) = attrs.href {
                let nofollow = attrs
                    .rel
                    .split_ascii_whitespace()
                    .any(|r| r.eq_ignore_ascii_case("nofollow"));
                self.anchor_hrefs.push_str(href);
                let end = self.anchor_hrefs.len() as u32;
                self.anchors.push((index, end, nofollow));
            }
        }
        let main_role = tag == Tag::Main || attrs.role.trim().eq_ignore_ascii_case("main");
        self.nodes.push(Node {
            tag,
            cat,
            main_role,
            parent: parent_of(open),
            end: 0,
            text_start: 0,
            text_end: 0,
            len: 0,
            link_len: 0,
            landmarks: 0,
            comment_words,
            sidebar,
        });
        index
    }

    pub(super) fn push_text(&mut self, text: &str, open: &[Option<u32>]) {
        let len = text_weight(text);
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
            comment_words: false,
            sidebar: false,
        });
    }

    /// Bottom-up totals: text, link text, landmarks.
    pub(super) fn measure(&mut self) {
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

    pub(super) fn subtree_text(&self, index: u32) -> String {
        let mut out = String::new();
        self.write_subtree_text(index, &mut out);
        out
    }

    /// Appends the text of the subtree at `index` to `out`, whitespace collapsed.
    pub(super) fn write_subtree_text(&self, index: u32, out: &mut String) {
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

    /// Whether the page is a story: its headline (its first `h1` inside an `article`, else
    /// its first `h1`: a blog theme heads every page with the site's name as an `h1`) has at
    /// least [`HEADLINE_WORDS`] words, and it sits inside an `article` element or the page
    /// declares itself an article (`declared`). With the `article` around that `h1`, if any.
    pub(super) fn story(&self, declared: bool) -> (bool, Option<usize>) {
        let mut headline = None;
        // Nodes are in document order: a node is inside an `article` when it comes before
        // the end of one that started earlier.
        let mut article_end = 0;
        for (i, node) in self.nodes.iter().enumerate() {
            if node.tag == Tag::Article {
                article_end = article_end.max(node.end as usize);
            }
            if node.tag == Tag::H(1) {
                headline = headline.or(Some(i));
                if i < article_end {
                    headline = Some(i);
                    break;
                }
            }
        }
        let Some(h1) = headline else {
            return (false, None);
        };
        let words = self.nodes[h1..self.nodes[h1].end as usize]
            .iter()
            .filter(|n| n.tag == Tag::Text)
            .map(|n| crate::text::words(&self.text[n.text_start as usize..n.text_end as usize]))
            .sum::<usize>();
        if words < HEADLINE_WORDS {
            return (false, None);
        }
        let mut up = self.nodes[h1].parent;
        while up != NO_PARENT {
            if self.nodes[up as usize].tag == Tag::Article {
                return (true, Some(up as usize));
            }
            up = self.nodes[up as usize].parent;
        }
        (declared, None)
    }

    pub(super) fn title(&self) -> Option<String> {
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

    pub(super) fn raw_links(&self, url: Option<&Url>, container: u32) -> RawLinks {
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

pub(super) fn parent_of(open: &[Option<u32>]) -> u32 {
    open.iter().rev().find_map(|o| *o).unwrap_or(NO_PARENT)
}
