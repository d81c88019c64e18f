//! Deciding what is content: which categories go, which container is the main one.

use super::headings::{COMMENT_HEADINGS, RECOMMENDATION_HEADINGS, unspaced_heading_says};
use super::render::TextWriter;
use super::story::STORY_PROSE_CHARS;
use super::tree::{CATEGORIES, Cat, NO_PARENT, Node, Page, Tag};
use crate::content::extract::BlockKind;

mod around;
mod choice;

/// Longest heading (characters) that can name a block; a comments heading may quote the
/// post's title ("59 Comments on ...") and be longer.
pub(super) const HEADING_CHARS: u32 = 60;
pub(super) const COMMENT_HEADING_CHARS: u32 = 240;

/// A `nav` or `aside` whose text is at least this share link text is removed whatever its
/// size.
pub(super) const NAV_LINKS_SHARE: f64 = 0.9;
/// A block that its class words or role name navigation (a table of contents, a menu) and
/// that is made of links ([`NAV_LINKS_SHARE`]) is removed whatever its size when the rest
/// of the page holds at least this much prose (text outside links): a manual's table of
/// contents beside one of its sections, which outweighs a short section.
pub(super) const NAV_BESIDE_PROSE_CHARS: u32 = 150;
/// A category is kept when its text is at least this share of the text that is left.
pub(super) const KEEP_CATEGORY_SHARE: f64 = 0.5;
/// Text outside links, in characters, between the page's `h1` (or the start of the body)
/// and a block headed as comments, for that text to be the story the comments follow.
pub(super) const STORY_CHARS: u32 = 600;
/// A block after the story with at least this many teasers (a heading that is a link) and
/// at most [`TEASER_CHARS`] of other text per teaser is a rail of other stories.
pub(super) const RAIL_TEASERS: u32 = 3;
pub(super) const TEASER_CHARS: u32 = 250;
/// A block before the page's `h1` with at least this many links, at least
/// [`MENU_LINK_SHARE`] of its text in links and labels of at most [`MENU_LABEL_CHARS`] on
/// average is a menu, when the `h1` is followed by at least [`MENU_STORY_CHARS`] of prose.
pub(super) const MENU_LINKS: u32 = 12;
pub(super) const MENU_LINK_SHARE: f64 = 0.8;
pub(super) const MENU_LABEL_CHARS: u32 = 30;
pub(super) const MENU_STORY_CHARS: u32 = 300;
/// Comments are kept (a forum thread) when they hold this share of the text that is left.
pub(super) const KEEP_COMMENTS_SHARE: f64 = 0.45;
/// A block headed as recommendations is removed unless it holds this share of the page.
pub(super) const KEEP_RECOMMENDATIONS_SHARE: f64 = 0.8;
/// An element is never removed by its class words when it holds this share of the page.
pub(super) const KEEP_ELEMENT_SHARE: f64 = 0.5;
/// Descend into a child while it holds at least this share of its parent's kept text.
pub(super) const DESCEND_SHARE: f64 = 0.85;
/// The `main` element is trusted when it holds at least this share of the kept text.
pub(super) const MAIN_SHARE: f64 = 0.1;
/// Link text counts this much towards an element's weight.
pub(super) const LINK_WEIGHT: f64 = 0.3;
/// Blocks whose kept text is more than this share links are dropped (outside listings).
pub(super) const LINK_DENSE: f64 = 0.6;
/// A link-dense block is a listing (kept) when it holds this share of the container's text.
pub(super) const LISTING_SHARE: f64 = 0.4;

/// What a heading names the block it opens (see [`Analysis::headed_blocks`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Headed {
    No,
    /// Recommendations, or comments beside an `article`: removed unless nearly the page.
    Recommendations,
    /// Comments after a story's text: removed whatever their share.
    CommentsAfterStory,
}

pub(super) struct Analysis<'p> {
    pub(super) page: &'p Page,
    /// The page declares itself a discussion (structured data): replies headed as
    /// comments are its content.
    pub(super) discussion: bool,
    /// The page is a story (see [`Page::story`](super::tree::Page::story)): lists in its main container
    /// are other pages' teasers, not its content, when it has prose of its own.
    pub(super) story: bool,
    /// On a story page, the `article` element around its headline (else `usize::MAX`).
    pub(super) story_article: usize,
    pub(super) removed: Vec<bool>,
    /// Text and link text that survive removal.
    pub(super) kept: Vec<u32>,
    pub(super) kept_links: Vec<u32>,
    /// Elements whose kept text is a list of teasers (see [`Analysis::mark_teaser_lists`]).
    pub(super) teasers: Vec<bool>,
    /// Text outside links held by lists of teasers inside each element.
    pub(super) teaser_prose: Vec<u32>,
}

impl<'p> Analysis<'p> {
    pub(super) fn new(page: &'p Page) -> Self {
        let n = page.nodes.len();
        Analysis {
            page,
            discussion: false,
            story: false,
            story_article: usize::MAX,
            removed: vec![false; n],
            kept: vec![0; n],
            kept_links: vec![0; n],
            teasers: vec![false; n],
            teaser_prose: Vec::new(),
        }
    }

    pub(super) fn root(&self) -> u32 {
        if self.page.body != NO_PARENT {
            self.page.body
        } else {
            0
        }
    }

    pub(super) fn mark_boilerplate(&mut self) {
        if self.page.nodes.is_empty() {
            return;
        }
        let total = self.page.nodes[self.root() as usize].len.max(1) as f64;
        let (cats, removed_outright) = self.categorize(total);
        let remove_cat = removed_categories(&self.page.nodes, &cats, total);
        // Remove whole categories. Inside a kept category (the posts of a forum thread),
        // elements of other categories (the posters' details) are still removed, as their
        // category is removed elsewhere or never reached a share of its own.
        let nodes = &self.page.nodes;
        for (i, node) in nodes.iter().enumerate() {
            let parent_removed = node.parent != NO_PARENT && self.removed[node.parent as usize];
            let own = removed_outright[i] || (cats[i] != Cat::None && remove_cat[cats[i] as usize]);
            let short_button = node.tag == Tag::Button && node.len < 40;
            self.removed[i] = parent_removed || own || short_button;
        }
    }

    /// Each element's category, after the per-element safeguards (none for an element too
    /// large a share of the page to vote); and which elements are removed outright:
    /// page-level footers and headers (whatever their share of the text), menus made of
    /// links, and blocks headed as recommendations or comments (short of nearly all of it),
    /// removed without a category vote.
    fn categorize(&self, total: f64) -> (Vec<Cat>, Vec<bool>) {
        let nodes = &self.page.nodes;
        let mut cats = vec![Cat::None; nodes.len()];
        let mut inside_article = vec![false; nodes.len()];
        let mut removed_outright = vec![false; nodes.len()];
        let after_story = self.after_story();
        let headed = self.headed_blocks(&after_story);
        let around = self.around_story(&after_story);
        let root = &nodes[self.root() as usize];
        let page_prose = root.len - root.link_len;
        for (i, node) in nodes.iter().enumerate() {
            let parent_article = node.parent != NO_PARENT && inside_article[node.parent as usize];
            inside_article[i] = parent_article || matches!(node.tag, Tag::Article | Tag::Main);
            let cat = own_category(nodes, node, parent_article);
            if around[i] || self.sidebar_beside_story(i, &after_story) {
                removed_outright[i] = true;
                continue;
            }
            if cat == Cat::None && headed[i] == Headed::No {
                continue;
            }
            let strong = matches!(node.tag, Tag::Nav | Tag::Footer | Tag::Aside | Tag::Header)
                || cat == Cat::Hidden;
            let share = node.len as f64 / total;
            // A block without the `h1` or `main` whose text is nearly all links.
            let menu_like =
                node.landmarks == 0 && node.link_len as f64 >= NAV_LINKS_SHARE * node.len as f64;
            // A page-level `<footer>` is never the content, however much of the page it
            // holds: on a page whose content is drawn by script it is all that is left.
            if node.tag == Tag::Footer && !parent_article {
                removed_outright[i] = true;
            } else if node.tag == Tag::Header && cat == Cat::Header && node.landmarks == 0 {
                // The site's header (outside any article): its menus can carry more text
                // than the page, and it holds no content unless it holds the `h1`.
                removed_outright[i] = true;
            } else if matches!(node.tag, Tag::Nav | Tag::Aside) && menu_like {
                // A navigation landmark made of links is a menu, however much of the page
                // it holds: a mega-menu can outweigh the page's own text.
                removed_outright[i] = true;
            } else if cat == Cat::Nav
                && menu_like
                && page_prose.saturating_sub(node.len - node.link_len) >= NAV_BESIDE_PROSE_CHARS
            {
                // Named navigation by its class words and made of links, beside prose of
                // the page's own: a table of contents or a menu, however long. It still
                // votes for its category as before, so that the other categories' shares
                // stay what they were.
                removed_outright[i] = true;
                if share < KEEP_ELEMENT_SHARE {
                    cats[i] = cat;
                }
            } else if node.landmarks == 0
                && (headed[i] == Headed::CommentsAfterStory
                    || (node.comment_words && !self.discussion && after_story[i]))
            {
                // The readers' comments after a story (headed as comments, or named so by
                // their class words): never the content, however long the thread.
                removed_outright[i] = true;
            } else if headed[i] == Headed::Recommendations
                && node.landmarks == 0
                && share < KEEP_RECOMMENDATIONS_SHARE
            {
                // Named as recommendations or comments by its heading: removed whatever its
                // class words say, unless it is nearly the whole page.
                removed_outright[i] = true;
            } else if share < KEEP_ELEMENT_SHARE && (strong || node.landmarks == 0) {
                cats[i] = cat;
            }
        }
        (cats, removed_outright)
    }

    pub(super) fn measure_kept(&mut self) {
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

    /// The main text of the subtree at `container`; with `listing`, link-dense blocks are
    /// kept as well.
    pub(super) fn render(&self, container: u32, listing: bool) -> String {
        self.render_inner(container, listing, false).0
    }

    /// [`Analysis::render`], with what each of the text's blocks (paragraphs, split at
    /// blank lines) is: a list item's or a listing's text is a list, text kept from an
    /// element named an aside (or metadata, sharing, comments) is an aside, the rest story.
    pub(super) fn render_blocks(&self, container: u32, listing: bool) -> (String, Vec<BlockKind>) {
        self.render_inner(container, listing, true)
    }

    fn render_inner(
        &self,
        container: u32,
        listing: bool,
        with_kinds: bool,
    ) -> (String, Vec<BlockKind>) {
        let nodes = &self.page.nodes;
        if nodes.is_empty() {
            return (String::new(), Vec::new());
        }
        let start = container as usize;
        // Room for the kept characters and the spaces between words, in one allocation
        // for most text.
        let mut writer = TextWriter {
            out: String::with_capacity(self.kept[start] as usize * 5 / 4 + 64),
            ..TextWriter::default()
        };
        let stop = nodes[start].end as usize;
        let kept = self.kept[start].max(1) as f64;
        // Inside a listing (a link-dense block that is a large part of the container), the
        // links are the content and are kept; elsewhere link-dense blocks are dropped.
        // On a story page with prose of its own, lists are never kept for their share.
        let story = self.story && !listing && self.prose(start) >= STORY_PROSE_CHARS;
        let mut listing_until = if listing || (!story && self.link_dense(start)) {
            stop
        } else {
            0
        };
        let mut open: Vec<OpenElement> = Vec::new();
        // Where each block's text starts in the output, and its kind.
        let mut marks: Vec<(usize, BlockKind)> = Vec::new();
        let mut i = start;
        while i < stop {
            while let Some(&(end, tag, _, _)) = open.last() {
                if end as usize > i {
                    break;
                }
                open.pop();
                writer.close(tag);
            }
            let node = &nodes[i];
            if node.tag == Tag::Text {
                let text = &self.page.text[node.text_start as usize..node.text_end as usize];
                if writer.pending_break == 2 || writer.out.is_empty() {
                    let kind = open.last().map_or(BlockKind::Story, |o| o.3);
                    marks.push((writer.out.len(), kind));
                }
                writer.text(text);
                i += 1;
                continue;
            }
            if self.removed[i] {
                i = node.end as usize;
                continue;
            }
            let list = if story {
                self.story_list(i)
            } else {
                self.link_dense(i)
            };
            if story && i >= listing_until && self.heads_a_dropped_list(i) {
                // The heading of a list that goes ("World", "Schon gelesen?").
                i = node.end as usize;
                continue;
            }
            if i >= listing_until && list {
                if (!story && self.kept[i] as f64 >= LISTING_SHARE * kept)
                    || writer.out.trim_end().ends_with(':')
                {
                    listing_until = node.end as usize;
                } else {
                    i = node.end as usize;
                    continue;
                }
            }
            let ordinal = if node.tag == Tag::Li {
                next_ordinal(&mut open)
            } else {
                -1
            };
            writer.open(node.tag, ordinal);
            let counter = if node.tag == Tag::Ol { 0 } else { -1 };
            let inherited = open.last().map_or(BlockKind::Story, |o| o.3);
            let kind = block_kind(node, i < listing_until, inherited);
            open.push((node.end, node.tag, counter, kind));
            i += 1;
        }
        while let Some((_, tag, _, _)) = open.pop() {
            writer.close(tag);
        }
        if with_kinds {
            writer.finish_with_kinds(&marks)
        } else {
            (writer.finish(), Vec::new())
        }
    }
}

/// Structured data replaces visible text of fewer words than this.
pub(super) const THIN_WORDS: usize = 60;

/// True when `text` has fewer than `thin` words and `fallback` says at least twice as much.
pub(super) fn is_thin(text: &str, fallback: &str, thin: usize) -> bool {
    let visible = crate::text::words(text);
    visible < thin && crate::text::words(fallback) > 2 * visible.max(10)
}

/// An element's category after the safeguards that a category named by class words must
/// pass.
fn own_category(nodes: &[Node], node: &Node, parent_article: bool) -> Cat {
    let mut cat = node.cat;
    // A header inside an article or main is the article's own header.
    if cat == Cat::Header && node.tag == Tag::Header && parent_article {
        cat = Cat::None;
    }
    // Named a header by its class but made of text, not links: the header of a section, a
    // card or an accordion pane, not the site's.
    if cat == Cat::Header && node.tag != Tag::Header && 2 * node.link_len < node.len {
        cat = Cat::None;
    }
    // Named as metadata but written inside a paragraph's sentence (a dateline, an author's
    // name): part of the text.
    if cat == Cat::Meta
        && matches!(node.tag, Tag::Inline | Tag::Strong)
        && node.parent != NO_PARENT
        && nodes[node.parent as usize].tag == Tag::P
        && nodes[node.parent as usize].len >= 3 * node.len
    {
        cat = Cat::None;
    }
    cat
}

/// The categories removed from the page: each whose text, counted at its outermost
/// categorized elements, is too small a share of what the other categories leave.
fn removed_categories(nodes: &[Node], cats: &[Cat], total: f64) -> [bool; CATEGORIES] {
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
    remove_cat
}

/// An element open in the rendering: (end, tag, ordinal of the next list item or -1, kind
/// of its text).
type OpenElement = (u32, Tag, i32, BlockKind);

/// The number of a list item: the next of its list's when the innermost list is ordered,
/// else -1.
fn next_ordinal(open: &mut [OpenElement]) -> i32 {
    match open
        .iter_mut()
        .rev()
        .find(|o| matches!(o.1, Tag::Ul | Tag::Ol))
    {
        Some(list) if list.1 == Tag::Ol => {
            list.2 += 1;
            list.2
        }
        _ => -1,
    }
}

/// What an element's text is: a list inside a listing or a list element, an aside inside
/// an element named an aside (or metadata, sharing, comments), else what its parent's is.
fn block_kind(node: &Node, in_listing: bool, inherited: BlockKind) -> BlockKind {
    if in_listing || matches!(node.tag, Tag::Ul | Tag::Ol | Tag::Dl | Tag::Li) {
        BlockKind::List
    } else if node.tag == Tag::Aside
        || matches!(
            node.cat,
            Cat::Aside | Cat::Meta | Cat::Share | Cat::Comments
        )
    {
        BlockKind::Aside
    } else {
        inherited
    }
}
