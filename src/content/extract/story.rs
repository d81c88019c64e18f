//! The measures of a story page: lists of teasers found by their repeated structure, the
//! prose a block holds outside links and lists, the headings of dropped lists and the
//! story's standfirst (see "Boilerplate around a story" in docs/quality.md for the thresholds and
//! the measurements that chose them).

use super::analysis::{Analysis, HEADING_CHARS, TEASER_CHARS};
use super::tree::{NO_PARENT, Tag};

/// A standfirst outside the main container (see [`Analysis::lead`]): at most this many
/// characters, at most this share of them in links.
pub(super) const LEAD_CHARS: u32 = 800;
pub(super) const LEAD_LINK_SHARE: f64 = 0.2;

/// The rank of a label that stands as a heading (see [`Analysis::heading_level`]): below
/// `h6`.
pub(super) const LABEL_RANK: u8 = 7;

/// A list of teasers (see [`Analysis::mark_teaser_lists`]): at least this many items, each
/// with a link of at least [`HEADLINE_CHARS`], holding this share of the list's text.
pub(super) const LIST_ITEMS: u32 = 3;
pub(super) const HEADLINE_CHARS: u32 = 15;
pub(super) const LIST_SHARE: f64 = 0.8;
/// A story page's main text with at least this much prose outside lists keeps no list for
/// its share of the text.
pub(super) const STORY_PROSE_CHARS: u32 = 150;

impl Analysis<'_> {
    /// Lists of teasers, whatever their tags: an element with at least [`LIST_ITEMS`]
    /// children of one tag that are each a teaser (a link of at least [`HEADLINE_CHARS`],
    /// at most [`TEASER_CHARS`] of other text: a byline, a date, a first sentence), which
    /// hold at least [`LIST_SHARE`] of its kept text. Many siblings of one shape around a
    /// linked headline are other pages' teasers, wherever they sit.
    pub(super) fn mark_teaser_lists(&mut self) {
        let nodes = &self.page.nodes;
        let mut counts: Vec<(Tag, u32, u32)> = Vec::new();
        for i in 0..nodes.len() {
            let node = &nodes[i];
            if node.tag == Tag::Text || self.kept[i] == 0 || node.end as usize <= i + 1 {
                continue;
            }
            counts.clear();
            let mut child = i + 1;
            while child < node.end as usize {
                let c = &nodes[child];
                let kept = self.kept[child];
                let links = self.kept_links[child];
                if kept > 0
                    && !matches!(
                        c.tag,
                        Tag::Text | Tag::Inline | Tag::Strong | Tag::P | Tag::A | Tag::Br
                    )
                    && links >= HEADLINE_CHARS
                    && kept - links <= TEASER_CHARS
                {
                    match counts.iter_mut().find(|(tag, _, _)| *tag == c.tag) {
                        Some(entry) => {
                            entry.1 += 1;
                            entry.2 += kept;
                        }
                        None => counts.push((c.tag, 1, kept)),
                    }
                }
                child = c.end as usize;
            }
            if let Some(&(_, items, text)) = counts.iter().max_by_key(|(_, n, _)| *n) {
                self.teasers[i] =
                    items >= LIST_ITEMS && text as f64 >= LIST_SHARE * self.kept[i] as f64;
            }
        }
        // The prose held by teaser lists inside each element, bottom-up, so that
        // [`Analysis::prose`] takes constant time.
        self.teaser_prose = vec![0; nodes.len()];
        for i in (0..nodes.len()).rev() {
            let own = if self.teasers[i] {
                self.kept[i] - self.kept_links[i]
            } else {
                self.teaser_prose[i]
            };
            if nodes[i].parent != NO_PARENT {
                self.teaser_prose[nodes[i].parent as usize] += own;
            }
        }
    }

    /// On a story page, a list that is not the story's: a list of teasers, or a link-dense
    /// block without [`STORY_PROSE_CHARS`] of prose (the block that holds a short story
    /// and a long menu is link-dense too).
    pub(super) fn story_list(&self, i: usize) -> bool {
        self.teasers[i] || (self.link_dense(i) && self.prose(i) < STORY_PROSE_CHARS)
    }

    /// On a story page, a heading (`h2`-`h6`) whose section is only a list that is not the
    /// story's: the next element after it is such a list, and after that the block ends or
    /// another heading starts.
    pub(super) fn heads_a_dropped_list(&self, i: usize) -> bool {
        let nodes = &self.page.nodes;
        if self.heading_level(i).is_none() || self.ends_with_colon(i) {
            // A heading that ends with a colon introduces the list after it, which stays
            // ("Empfehlungen der Redaktion:" over a buying guide's links).
            return false;
        }
        let parent_end = match nodes[i].parent {
            NO_PARENT => nodes.len(),
            p => nodes[p as usize].end as usize,
        };
        // The next element with kept text, and the one after it.
        let next_kept = |from: usize| {
            let mut j = from;
            while j < parent_end && (self.kept[j] == 0 || self.removed[j]) {
                j = nodes[j].end as usize;
            }
            (j < parent_end).then_some(j)
        };
        let Some(list) = next_kept(nodes[i].end as usize) else {
            return false;
        };
        if nodes[list].tag == Tag::Text || !self.story_list(list) {
            return false;
        }
        match next_kept(nodes[list].end as usize) {
            None => true,
            Some(after) => self.heading_level(after).is_some(),
        }
    }

    /// The element's last character of text is a colon.
    fn ends_with_colon(&self, i: usize) -> bool {
        let nodes = &self.page.nodes;
        nodes[i..nodes[i].end as usize]
            .iter()
            .rev()
            .find(|n| n.tag == Tag::Text && n.text_end > n.text_start)
            .is_some_and(|n| {
                self.page.text[n.text_start as usize..n.text_end as usize]
                    .trim_end()
                    .ends_with(':')
            })
    }

    /// The rank of a heading that can name the block it opens: 2 to 6 for `h2`-`h6`, and
    /// [`LABEL_RANK`] for a label that stands as a heading without a heading's tag:
    ///
    /// - a paragraph or list item written all in bold (`<p><strong>Auch
    ///   interessant:</strong></p>`), or
    /// - a block of its own (`<div class="headline">`, `<span>` beside other blocks) that
    ///   holds nothing but inline text,
    ///
    /// of at most [`HEADING_CHARS`] with no link in it. A label ranks below every heading:
    /// the next heading or label ends its section.
    /// Whether the element at `i` is a story's back matter: its first text is a heading
    /// that names references, a bibliography or footnotes (`BACK_MATTER_HEADINGS`). On a
    /// story page it is never the main block on its own: a journal's reference list of
    /// 9,000 characters outweighed an abstract of 400.
    pub(super) fn back_matter(&self, i: usize) -> bool {
        let nodes = &self.page.nodes;
        let end = nodes[i].end as usize;
        let mut j = i + 1;
        while j < end {
            if self.heading_level(j).is_some() {
                let mut heading = String::new();
                for text in &nodes[j + 1..nodes[j].end as usize] {
                    if text.tag == Tag::Text {
                        heading.push_str(
                            &self.page.text[text.text_start as usize..text.text_end as usize],
                        );
                    }
                }
                let heading = heading
                    .trim()
                    .trim_end_matches([':', '：'])
                    .trim()
                    .to_lowercase();
                return super::headings::BACK_MATTER_HEADINGS.contains(&heading.as_str());
            }
            if nodes[j].tag == Tag::Text && nodes[j].text_end > nodes[j].text_start {
                let text =
                    &self.page.text[nodes[j].text_start as usize..nodes[j].text_end as usize];
                if !text.trim().is_empty() {
                    return false;
                }
            }
            j += 1;
        }
        false
    }

    pub(super) fn heading_level(&self, i: usize) -> Option<u8> {
        let nodes = &self.page.nodes;
        let node = &nodes[i];
        match node.tag {
            Tag::H(level @ 2..=6) => return Some(level),
            Tag::P | Tag::Li | Tag::Dt | Tag::Block | Tag::Inline | Tag::Strong => {}
            _ => return None,
        }
        if node.len == 0 || node.len > HEADING_CHARS || node.link_len > 0 {
            return None;
        }
        let parent = (node.parent != NO_PARENT).then(|| &nodes[node.parent as usize]);
        let subtree = &nodes[i + 1..node.end as usize];
        if subtree
            .iter()
            .any(|n| !matches!(n.tag, Tag::Text | Tag::Inline | Tag::Strong | Tag::Br))
        {
            return None;
        }
        let label = match node.tag {
            Tag::P | Tag::Li => {
                // All its text in bold.
                let mut bold = 0;
                let mut j = i + 1;
                while j < node.end as usize {
                    if nodes[j].tag == Tag::Strong {
                        bold += nodes[j].len;
                        j = nodes[j].end as usize;
                    } else {
                        j += 1;
                    }
                }
                bold == node.len
            }
            // Not a phrase inside a paragraph, and not the only text of its parent (the
            // parent is the label then).
            _ => parent.is_some_and(|p| {
                !matches!(p.tag, Tag::P | Tag::Li | Tag::Inline | Tag::Strong | Tag::A)
                    && p.len > node.len
            }),
        };
        if !label {
            return None;
        }
        // A label inside a link is part of a teaser ("Mehr zum Thema" over a headline).
        let mut up = node.parent;
        while up != NO_PARENT {
            if nodes[up as usize].tag == Tag::A {
                return None;
            }
            up = nodes[up as usize].parent;
        }
        Some(LABEL_RANK)
    }

    /// Characters of prose in the subtree at `container`: text outside links, outside
    /// removed blocks and outside lists of teasers.
    pub(super) fn prose(&self, container: usize) -> u32 {
        (self.kept[container] - self.kept_links[container])
            .saturating_sub(self.teaser_prose[container])
    }

    /// The story's standfirst when the main container does not hold it: the paragraphs
    /// between the page's `h1` and the start of the container, when both sit in one block
    /// below the body (the article's head and its body) and those paragraphs are prose (at
    /// most [`LEAD_LINK_SHARE`] of their text in links, [`LEAD_CHARS`] in all at most).
    pub(super) fn lead(&self, container: u32) -> Vec<u32> {
        let nodes = &self.page.nodes;
        let container = container as usize;
        let Some(h1) = nodes[..container].iter().position(|n| n.tag == Tag::H(1)) else {
            return Vec::new();
        };
        if nodes[h1].end as usize > container {
            return Vec::new();
        }
        // The nearest block holding both, below the body.
        let mut common = nodes[h1].parent;
        while common != NO_PARENT && (nodes[common as usize].end as usize) < container + 1 {
            common = nodes[common as usize].parent;
        }
        if common == NO_PARENT || common == self.root() || self.removed[common as usize] {
            return Vec::new();
        }
        let mut lead = Vec::new();
        let mut chars = 0;
        let mut i = nodes[h1].end as usize;
        while i < container {
            let node = &nodes[i];
            if node.end as usize > container {
                // An ancestor of the container: look inside it.
                i += 1;
                continue;
            }
            if node.tag == Tag::P && !self.removed[i] && self.kept[i] > 0 {
                if self.kept_links[i] as f64 > LEAD_LINK_SHARE * self.kept[i] as f64 {
                    return Vec::new();
                }
                chars += self.kept[i];
                lead.push(i as u32);
            }
            i = if node.tag == Tag::P {
                node.end as usize
            } else {
                i + 1
            };
        }
        if chars > LEAD_CHARS {
            return Vec::new();
        }
        lead
    }
}

#[cfg(test)]
mod tests {
    use super::super::tree::{Page, Tag};
    use super::super::{parse_document, strip};
    use super::*;

    #[test]
    fn a_block_that_opens_with_a_references_heading_is_back_matter() {
        let html = "<html><body><article><h1>A headline of the article in six words</h1>\
            <div><h2>Background:</h2><p>The abstract.</p></div>\
            <div><h2>References</h2><ul><li>1. Author SK. A paper.</li></ul></div>\
            <div><h2>参考文献：</h2><ol><li>论文</li></ol></div>\
            <div><p>Notes on the study.</p><h2>References</h2></div>\
            </article></body></html>";
        let stripped = strip::strip(html);
        let dom = parse_document(&stripped.html);
        let page = Page::build(&dom, stripped.html.len());
        let analysis = Analysis::new(&page);
        // The `div` whose first text is `opening`.
        let block = |opening: &str| {
            (0..page.nodes.len())
                .find(|&i| {
                    page.nodes[i].tag == Tag::Block
                        && page.nodes[i + 1..page.nodes[i].end as usize]
                            .iter()
                            .find(|n| n.tag == Tag::Text)
                            .is_some_and(|n| {
                                page.text[n.text_start as usize..n.text_end as usize]
                                    .starts_with(opening)
                            })
                })
                .unwrap_or_else(|| panic!("no block opening with {opening}"))
        };
        assert!(!analysis.back_matter(block("Background")));
        assert!(analysis.back_matter(block("References")));
        assert!(analysis.back_matter(block("参考文献")));
        // Only a block that opens with such a heading.
        assert!(!analysis.back_matter(block("Notes")));
    }
}
