//! Where a story's text ends and what stands around it: the blocks after it, beside it
//! and under headings of their own.

use super::*;

impl Analysis<'_> {
    /// Blocks introduced by a heading that names them as recommendations ("Similar items",
    /// "You may also like", "Frequently bought together", ...): for each such `h2`-`h6`, the
    /// nearest ancestor that holds more than the heading, when the heading opens it. They
    /// are removed outright, like a page footer, unless one holds the page's `h1` or
    /// `main` or nearly all of its text ([`Headed::Recommendations`]).
    ///
    /// Blocks headed as comments ("59 Comments on ...", "10 comments:", "Leave a reply")
    /// are marked on a page that does not declare itself a discussion, when they follow a
    /// story: beside an `article` (before or after it, not around or inside it), or after
    /// at least [`STORY_CHARS`] of text outside links since the page's `h1`. Those that
    /// follow a story's text go however much of the page they hold
    /// ([`Headed::CommentsAfterStory`]): a popular post's thread can outweigh the post.
    /// Whether each element comes after a story: at least [`STORY_CHARS`] of text outside
    /// links and outside blocks named as comments between the page's first `h1` (or the
    /// start of the body) and the element's start. (Earlier comments are no story: the
    /// tenth reply of a thread does not follow one.)
    pub(in crate::content::extract) fn after_story(&self) -> Vec<bool> {
        let nodes = &self.page.nodes;
        let mut in_link = vec![false; nodes.len()];
        let mut in_comments = vec![false; nodes.len()];
        let mut prose_before = vec![0u32; nodes.len() + 1];
        let mut first_h1 = None;
        for (i, node) in nodes.iter().enumerate() {
            let parent = (node.parent != NO_PARENT).then_some(node.parent as usize);
            in_link[i] = parent.is_some_and(|p| in_link[p]) || node.tag == Tag::A;
            in_comments[i] = parent.is_some_and(|p| in_comments[p]) || node.comment_words;
            let prose = if node.tag == Tag::Text && !in_link[i] && !in_comments[i] {
                node.len
            } else {
                0
            };
            prose_before[i + 1] = prose_before[i] + prose;
            if first_h1.is_none() && node.tag == Tag::H(1) {
                first_h1 = Some(i);
            }
        }
        let from = first_h1.unwrap_or(self.root() as usize);
        (0..nodes.len())
            .map(|i| i > from && prose_before[i] - prose_before[from] >= STORY_CHARS)
            .collect()
    }

    /// Blocks around a story that are never its content, whatever their share of the page
    /// (on a page with a story: an `h1` followed by prose):
    ///
    /// - **rails of other stories** after it: blocks after the end of the `article` that
    ///   holds its `h1`, with at least [`RAIL_TEASERS`] teasers (an `h2`-`h4` that is a link,
    ///   as "more stories" lists print each headline) and at most [`TEASER_CHARS`] of other
    ///   text each (a byline, a time, a first sentence). Inside the story, a buying guide
    ///   heads each product with a link too, and it stays;
    /// - **menus** before its `h1`: at least [`MENU_LINKS`] links, [`MENU_LINK_SHARE`] of
    ///   the text in links, short labels. A mega-menu outside any `nav` or menu class can
    ///   hold more text than a short article, and then passed for a listing.
    pub(in crate::content::extract) fn around_story(&self, after_story: &[bool]) -> Vec<bool> {
        let nodes = &self.page.nodes;
        let mut marked = vec![false; nodes.len()];
        let Some(h1) = nodes.iter().position(|n| n.tag == Tag::H(1)) else {
            return marked;
        };
        // Prose (text outside links) after the h1, teasers and links per subtree.
        let mut teasers = vec![0u32; nodes.len()];
        let mut links = vec![0u32; nodes.len()];
        for i in (0..nodes.len()).rev() {
            let node = nodes[i];
            if node.tag == Tag::A {
                links[i] += 1;
            }
            if matches!(node.tag, Tag::H(2..=4))
                && node.len >= 15
                && 5 * node.link_len >= 4 * node.len
            {
                teasers[i] += 1;
            }
            if node.parent != NO_PARENT {
                let p = node.parent as usize;
                teasers[p] += teasers[i];
                links[p] += links[i];
            }
        }
        let h1_end = nodes[h1].end as usize;
        // The story's own `article` (the one around its `h1`): rails come after its end.
        // Without one, where the story ends is not known, and no rail is taken out: a
        // buying guide heads each product with a link too, and a listing is all teasers.
        let mut story_end = None;
        let mut up = nodes[h1].parent;
        while up != NO_PARENT {
            if nodes[up as usize].tag == Tag::Article {
                story_end = Some(nodes[up as usize].end as usize);
                break;
            }
            up = nodes[up as usize].parent;
        }
        let prose_after: u32 = nodes[h1_end..]
            .iter()
            .filter(|n| n.tag == Tag::Text)
            .map(|n| n.len)
            .sum::<u32>()
            .saturating_sub(
                nodes[h1_end..]
                    .iter()
                    .filter(|n| n.tag == Tag::A)
                    .map(|n| n.link_len)
                    .sum(),
            );
        if prose_after < MENU_STORY_CHARS {
            return marked;
        }
        let mut i = 0;
        while i < nodes.len() {
            let node = nodes[i];
            let other_text = node.len - node.link_len.min(node.len);
            let rail = story_end.is_some_and(|end| i >= end)
                && after_story[i]
                && node.landmarks == 0
                && teasers[i] >= RAIL_TEASERS
                && other_text <= TEASER_CHARS * teasers[i];
            let menu = (node.end as usize) <= h1
                && node.landmarks == 0
                && links[i] >= MENU_LINKS
                && node.link_len as f64 >= MENU_LINK_SHARE * node.len as f64
                && node.link_len <= MENU_LABEL_CHARS * links[i];
            if rail || menu {
                marked[i] = true;
                // The outermost block is enough: its subtree goes with it.
                i = node.end as usize;
            } else {
                i += 1;
            }
        }
        marked
    }

    /// What the heading at `i` names its block: `Some(false)` recommendations, `Some(true)`
    /// comments, none either. `heading` is room for its text.
    fn heading_says(&self, i: usize, heading: &mut String) -> Option<bool> {
        let nodes = &self.page.nodes;
        let node = &nodes[i];
        heading.clear();
        for text in &nodes[i + 1..node.end as usize] {
            if text.tag == Tag::Text {
                heading.push_str(&self.page.text[text.text_start as usize..text.text_end as usize]);
                heading.push(' ');
            }
        }
        let words: Vec<String> = heading
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        // A count first ("59 Comments", "12 thoughts on"): read the words after it.
        let counted = words
            .first()
            .is_some_and(|w| w.bytes().all(|b| b.is_ascii_digit()));
        let words = &words[usize::from(counted)..];
        let opens_with = |phrase: &&[&str]| {
            words
                .iter()
                .map(String::as_str)
                .take(phrase.len())
                .eq(phrase.iter().copied())
        };
        // Chinese and Japanese headings are one run of letters: read by what they open with.
        let (unspaced, unspaced_count) = if words.iter().any(|w| !w.is_ascii()) {
            unspaced_heading_says(words)
        } else {
            (None, false)
        };
        let counted = counted || unspaced_count;
        let recommendations = node.len <= HEADING_CHARS
            && (unspaced == Some(false) || RECOMMENDATION_HEADINGS.iter().any(opens_with));
        let comments = !recommendations
            && !self.discussion
            && (unspaced == Some(true) || COMMENT_HEADINGS.iter().any(opens_with))
            && (node.len <= HEADING_CHARS || counted);
        (recommendations || comments).then_some(comments)
    }

    pub(in crate::content::extract) fn headed_blocks(&self, after_story: &[bool]) -> Vec<Headed> {
        let nodes = &self.page.nodes;
        let mut marked = vec![Headed::No; nodes.len()];
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
            let Some(level) = self.heading_level(i) else {
                continue;
            };
            if node.len == 0 || node.len > COMMENT_HEADING_CHARS {
                continue;
            }
            let Some(comments) = self.heading_says(i, &mut heading) else {
                continue;
            };
            let recommendations = !comments;
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
            if !opens {
                // A heading amid the story's own elements ("8 Responses to ..." and the
                // list after it, siblings of the story's paragraphs): the comments are the
                // heading and what follows it up to the next heading of its rank or above.
                if after_story[i] {
                    let kind = if comments {
                        Headed::CommentsAfterStory
                    } else {
                        Headed::Recommendations
                    };
                    let parent_end = if node.parent == NO_PARENT {
                        nodes.len()
                    } else {
                        nodes[node.parent as usize].end as usize
                    };
                    let mut j = i;
                    while j < parent_end {
                        if j > i && self.heading_level(j).is_some_and(|l| l <= level) {
                            break;
                        }
                        marked[j] = kind;
                        j = nodes[j].end as usize;
                    }
                }
                continue;
            }
            let block = block as usize;
            if recommendations {
                marked[block] = Headed::Recommendations;
            } else if after_story[block] {
                // Comments go after the story they follow, whatever their share.
                marked[block] = Headed::CommentsAfterStory;
            } else if last_article_start.is_some() && beside_article(block) {
                // Or on a page built around an article that they are not part of.
                marked[block] = Headed::Recommendations;
            }
        }
        marked
    }

    /// Whether element `i` is the page's sidebar beside a story: named the sidebar, after
    /// the story's start, and outside its `article` (or, without one, holding no `h1`). It
    /// goes whatever its share: under a short post the sidebar outweighs the post. It must
    /// follow [`STORY_CHARS`] of the story's prose, or come after the end of the story's own
    /// `article` when that holds [`STORY_PROSE_CHARS`] of prose (text outside links) and more
    /// of it than the sidebar: a brief of two sentences beside a sidebar of headlines,
    /// counts and comments. (An `article` that is a card with the page's `h1` and a line or
    /// two above the post holds less.)
    pub(in crate::content::extract) fn sidebar_beside_story(
        &self,
        i: usize,
        after_story: &[bool],
    ) -> bool {
        let nodes = &self.page.nodes;
        let node = &nodes[i];
        if !self.story || !node.sidebar {
            return false;
        }
        if self.story_article == usize::MAX {
            return after_story[i] && node.landmarks == 0;
        }
        let article = self.story_article;
        let holds = i <= article && article < node.end as usize;
        let inside = article <= i && i < nodes[article].end as usize;
        let prose = |n: &Node| n.len - n.link_len;
        let after_brief = i >= nodes[article].end as usize
            && prose(&nodes[article]) >= STORY_PROSE_CHARS
            && prose(node) < prose(&nodes[article]);
        (after_story[i] || after_brief) && !holds && !inside
    }
}
