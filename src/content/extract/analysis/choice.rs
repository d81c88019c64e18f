//! Which container is the main one: each element's weight of kept text, and where the
//! descent into it starts.

use super::*;

impl Analysis<'_> {
    pub(in crate::content::extract) fn weight(&self, i: usize) -> f64 {
        let links = self.kept_links[i] as f64;
        (self.kept[i] as f64 - links) + LINK_WEIGHT * links
    }

    pub(in crate::content::extract) fn main_container(&self) -> u32 {
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
            let mut toward_story = None;
            let mut child = current + 1;
            while child < nodes[current].end as usize {
                let end = nodes[child].end as usize;
                // On a story page, a list is never the main text, nor its back matter.
                if nodes[child].tag != Tag::Text
                    && !self.removed[child]
                    && !(self.story && (self.story_list(child) || self.back_matter(child)))
                {
                    let w = self.weight(child);
                    if w > best_weight {
                        best_weight = w;
                        best = Some(child);
                    }
                    if (child..end).contains(&self.story_article) {
                        toward_story = Some((child, w));
                    }
                }
                child = end;
            }
            // The story's own `article` (around its headline) wins over what sits beside
            // it (a sidebar, a rail) when it holds a fair share of the text.
            if let Some((child, _)) = toward_story {
                if self.prose(self.story_article) >= STORY_PROSE_CHARS {
                    current = child;
                    continue;
                }
            }
            match best {
                Some(b) if best_weight >= DESCEND_SHARE * total => current = b,
                _ => return current as u32,
            }
        }
    }

    /// Where the descent starts: the page's one `main` element (or `role="main"`) when it
    /// holds a fair share of the kept text, else `body`.
    pub(in crate::content::extract) fn start_of_descent(&self) -> usize {
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

    pub(in crate::content::extract) fn link_dense(&self, i: usize) -> bool {
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
}
