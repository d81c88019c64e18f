//! Host templates: the text a site repeats on its pages, learned from the pages the stage
//! has seen of each host, and left out of what is compared.
//!
//! Extraction on one page cannot always tell a rail of headlines, a teaser list or a widget
//! from the story; a crawl sees many pages of a host and can. What reaches the fingerprint
//! is otherwise the story *plus* what the site repeats, and two different short articles
//! inside 6,000 characters of the same rail look alike to any measure of the whole text.
//!
//! - **The block** is a line of the page's text ([`Prepared::page_text`]: the whole page
//!   outside its menus, headers and footers, whichever block the main text came from): a
//!   paragraph, a heading, a list item or a table row (the extractor writes each on lines
//!   of its own). It is compared normalised: lower case, every run of digits read as one
//!   `0` (dates, counts, times change from page to page of a rail), whitespace collapsed;
//!   its key is the xxh3 of that ([`block_key`]).
//! - **What is learned, and from which pages.** Only a page decided unique teaches: a
//!   duplicate repeats another page's blocks, and one article syndicated on three pages
//!   of a site is decided once and duplicate twice, so it never looks like template. Each
//!   of a host's pages adds one to the score of each of its distinct blocks, and every
//!   score decays by [`DECAY`] per page of the host seen since, so a score follows how
//!   often a block recurs among the host's recent pages.
//! - **The threshold.** A block is template once its decayed score reaches
//!   [`TEMPLATE_SCORE`]: on four pages in a row, or on about one page in ten for as long as
//!   the host is crawled. A headline that rotates through a "latest news" rail is template
//!   while it is there; when a template changes, its new blocks are learned in four pages
//!   and the old ones decay away.
//! - **Memory, bounded.** A host keeps at most [`MAX_BLOCKS`] blocks (12 bytes each, and
//!   the hash table's control bytes); when full, the blocks whose decayed score is lowest
//!   go first. A page teaches at most [`MAX_BLOCKS_PER_PAGE`] blocks.
//! - **A host with few pages** has no template: three pages never make one. Its pages are
//!   still told apart: each page's record keeps the profile of its lines
//!   ([`crate::fingerprint::blocks`]), and a page is compared with a stored page of its
//!   host on their lines, every line the two share exactly (and every line of the
//!   template learned so far) left out, so that only each page's own sentences decide
//!   ([`Confirm::judge_blocks`](crate::index::Confirm::judge_blocks)). Two
//!   different stories are two pages from the host's first two pages on, and an edited
//!   copy of a page stored before the template was known is still found against it (its
//!   record is looked up by the page's whole text too, [`Probe`]).
//! - **A host's last pages.** Each host also keeps the ids of its last [`RECENT_PAGES`]
//!   pages decided unique. A short page of the host is compared with them too, whatever
//!   its keys ([`Probe::recent`](crate::index::Probe::recent)): one template may give a
//!   short story with the site's rails on one page and alone on the next, and the keys of
//!   a brief do not find a text many times its size. One of them that no key found is
//!   judged on the two pages' lines only when the pages share a sentence outside the
//!   template, or when both are small enough for their records to keep their whole
//!   shingle sets and the exact likeness on those confirms them. A short page whose page
//!   text is at least [`PAGE_PROBE_GROWTH`] times its main text is also looked up by the
//!   page text's fingerprint.
//! - **Dropping.** A page's blocks that are its host's template are left out of its
//!   fingerprint and of its stored text. When nothing else is left of the main text,
//!   extraction took a block the site repeats (a reference list, an app banner, a
//!   newsletter box) over a story shorter than it: the story wins, and what is compared
//!   and stored is the rest of the page's text without the template, never the block
//!   that makes it an exact duplicate of another page that carried it. A page with
//!   nothing of its own anywhere (an empty month of a calendar) is decided on its whole
//!   text, as before its host's template was known: its verdict then does not hang on how
//!   much of the template has been learned (a crawl resumed from a checkpoint may have
//!   learned a little less or more than the crawl it continues).
//!
//! The table is saved with each checkpoint (`host-templates` in the state directory,
//! written atomically, with a checksum). It is a summary, not an answer: after a crash it
//! may be a little ahead of or behind the pages it saw, and a damaged file can be set aside
//! by `crawldedup repair` and learned again.

use rustc_hash::FxHashMap;
use std::sync::Mutex;

use std::borrow::Cow;

use xxhash_rust::xxh3::xxh3_64;

use super::host::host_in;
use crate::PageVerdict;
use crate::fingerprint::{Blocks, Fingerprint};
use crate::index::{DocRecord, Probe};
use crate::page::{Prepared, Template};

/// File name of the saved table, in the state directory.
pub const TEMPLATES_FILE: &str = "host-templates";

/// What a block's score keeps per page of its host seen since: a half-life of about 23
/// pages.
pub const DECAY: f32 = 0.97;

/// The decayed score at which a block is its host's template: reached by a block on four
/// pages in a row (1 + 0.97 + 0.97^2 + 0.97^3 = 3.83), or recurring every ten pages
/// (1 / (1 - 0.97^10) = 3.8 in the steady state); not by one on three pages in a row
/// (2.91), nor every twentieth page (2.2).
pub const TEMPLATE_SCORE: f32 = 3.5;

/// Blocks a host keeps at most.
pub const MAX_BLOCKS: usize = 4096;

/// Blocks a page teaches at most (its first ones, in reading order).
pub const MAX_BLOCKS_PER_PAGE: usize = 512;

/// Below this decayed score a block is forgotten first when its host's table is full.
const FORGET_SCORE: f32 = 0.5;

const SHARDS: usize = 64;

/// A host's pages decided unique that a short page of it is also compared with
/// ([`HostTemplates::recent`]): its last ones.
pub const RECENT_PAGES: usize = 16;

/// One block of a host: its score when the host was at page `last`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Block {
    score: f32,
    last: u32,
}

impl Block {
    fn score_at(&self, page: u32) -> f32 {
        self.score * DECAY.powi(page.saturating_sub(self.last).min(10_000) as i32)
    }
}

/// The blocks of one host.
#[derive(Debug, Default, Clone, PartialEq)]
struct Host {
    /// Pages of the host learned from.
    pages: u32,
    blocks: FxHashMap<u32, Block>,
    /// Ids of its last pages decided unique, the latest last (at most [`RECENT_PAGES`]).
    recent: Vec<u64>,
}

impl Host {
    fn is_template(&self, key: u32) -> bool {
        self.blocks
            .get(&key)
            .is_some_and(|b| b.score_at(self.pages) >= TEMPLATE_SCORE)
    }

    fn learn(&mut self, keys: &[u32]) {
        self.pages += 1;
        let page = self.pages;
        for &key in keys.iter().take(MAX_BLOCKS_PER_PAGE) {
            let block = self.blocks.entry(key).or_insert(Block {
                score: 0.0,
                last: page,
            });
            if block.last == page && block.score > 0.0 {
                continue; // the same block twice on one page counts once
            }
            block.score = block.score_at(page) + 1.0;
            block.last = page;
        }
        if self.blocks.len() > MAX_BLOCKS {
            self.forget();
        }
    }

    /// Makes room: the blocks that decayed away, then the lowest scores.
    fn forget(&mut self) {
        let page = self.pages;
        self.blocks.retain(|_, b| b.score_at(page) >= FORGET_SCORE);
        if self.blocks.len() > MAX_BLOCKS * 3 / 4 {
            let mut scores: Vec<f32> = self.blocks.values().map(|b| b.score_at(page)).collect();
            let cut = scores.len() - MAX_BLOCKS * 3 / 4;
            scores.select_nth_unstable_by(cut, f32::total_cmp);
            let floor = scores[cut];
            self.blocks.retain(|_, b| b.score_at(page) >= floor);
        }
    }
}

/// The templates of every host seen. See the [module documentation](self).
#[derive(Debug)]
pub struct HostTemplates {
    shards: Box<[Mutex<FxHashMap<u64, Host>>]>,
}

impl Default for HostTemplates {
    fn default() -> HostTemplates {
        HostTemplates {
            shards: (0..SHARDS)
                .map(|_| Mutex::new(FxHashMap::default()))
                .collect(),
        }
    }
}

/// What is left of a text once its host's template is left out ([`HostTemplates::strip`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stripped {
    /// No line of the text is the host's template (or the host has none yet).
    Untouched,
    /// The text without the lines that are its host's template.
    Rest(String),
    /// Every line of the text is its host's template: nothing of its own is left.
    AllTemplate,
}

/// The host of a page's name, when its name is a URL: its host as `url` parses it, in
/// lower case.
pub fn host_of(name: &str) -> Option<String> {
    host_in(name).map(Cow::into_owned)
}

/// The host whose template a page named `name` has and teaches: its name's, when the name is
/// a URL; else the site the page says it belongs to ([`Extracted::site`](crate::content::extract::Extracted::site):
/// a saved page's canonical link, its head's links into its site, its menus' links), so
/// that a page read without its URL is still compared with its site's other pages on
/// their own lines.
pub(crate) fn site_of<'a>(name: &'a str, prepared: &'a Prepared) -> Option<Cow<'a, str>> {
    host_in(name).or_else(|| prepared.extracted.site.as_deref().map(Cow::Borrowed))
}

use crate::fingerprint::blocks::LineKeys;
pub use crate::fingerprint::blocks::block_key;

fn keys(text: &str) -> Vec<u32> {
    let mut line_keys = LineKeys::default();
    text.lines()
        .filter_map(|line| line_keys.key(line))
        .take(MAX_BLOCKS_PER_PAGE)
        .collect()
}

impl HostTemplates {
    fn shard(&self, host: &str) -> (u64, std::sync::MutexGuard<'_, FxHashMap<u64, Host>>) {
        let key = xxh3_64(host.as_bytes());
        let shard = self.shards[(key as usize) % SHARDS]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        (key, shard)
    }

    /// `text` without the lines that are `host`'s template.
    pub fn strip(&self, host: &str, text: &str) -> Stripped {
        let (key, shard) = self.shard(host);
        let Some(host) = shard.get(&key) else {
            return Stripped::Untouched;
        };
        let mut kept = String::with_capacity(text.len());
        let mut dropped = false;
        let mut substance = false;
        let mut line_keys = LineKeys::default();
        for line in text.split_inclusive('\n') {
            match crate::fingerprint::blocks::cached_key(line, &mut line_keys) {
                Some(k) if host.is_template(k) => dropped = true,
                other => {
                    substance |= other.is_some();
                    // Blank lines between dropped blocks would pile up: one is enough.
                    if other.is_none() && (kept.is_empty() || kept.ends_with("\n\n")) {
                        continue;
                    }
                    kept.push_str(line);
                }
            }
        }
        match (dropped, substance) {
            (false, _) => Stripped::Untouched,
            (true, true) => Stripped::Rest(kept.trim_end().to_string()),
            (true, false) => Stripped::AllTemplate,
        }
    }

    /// Learns from a page of `host` decided unique, whose whole main text is `text`.
    pub fn learn(&self, host: &str, text: &str) {
        self.learn_keys(host, &keys(text));
    }

    /// [`HostTemplates::learn`] from the keys of the text's lines (`keys(text)`).
    fn learn_keys(&self, host: &str, keys: &[u32]) {
        let (key, mut shard) = self.shard(host);
        shard.entry(key).or_default().learn(keys);
    }

    /// Which of `keys` are `host`'s template, sorted: one lookup a key.
    pub fn template_keys(&self, host: &str, keys: impl Iterator<Item = u32>) -> Vec<u32> {
        let (key, shard) = self.shard(host);
        let Some(host) = shard.get(&key) else {
            return Vec::new();
        };
        let mut template: Vec<u32> = keys.filter(|&k| host.is_template(k)).collect();
        template.sort_unstable();
        template.dedup();
        template
    }

    /// Remembers that `host`'s page `id` was decided unique, as one of its recent pages.
    fn remember(&self, host: &str, id: u64) {
        let (key, mut shard) = self.shard(host);
        let recent = &mut shard.entry(key).or_default().recent;
        if recent.len() == RECENT_PAGES {
            recent.remove(0);
        }
        recent.push(id);
    }

    /// The ids of `host`'s last pages decided unique (at most [`RECENT_PAGES`]).
    pub fn recent(&self, host: &str) -> Vec<u64> {
        let (key, shard) = self.shard(host);
        shard
            .get(&key)
            .map(|h| h.recent.clone())
            .unwrap_or_default()
    }

    /// Hosts known, and blocks kept over all of them.
    pub fn size(&self) -> (usize, usize) {
        let mut hosts = 0;
        let mut blocks = 0;
        for shard in self.shards.iter() {
            let shard = shard
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            hosts += shard.len();
            blocks += shard.values().map(|h| h.blocks.len()).sum::<usize>();
        }
        (hosts, blocks)
    }
}

/// The text of a page that is compared, and its fingerprint.
pub(crate) struct Compared<'a> {
    pub(crate) text: Cow<'a, str>,
    pub(crate) fingerprint: Fingerprint,
    /// The fingerprint of the page's whole text, when `text` is without its template.
    pub(crate) whole: Option<Fingerprint>,
}

/// How many times the compared text's length a page's text must be for the page to be
/// looked up by it too (see the [module documentation](self)).
pub const PAGE_PROBE_GROWTH: usize = 2;

/// The fingerprint a short page (under `dedup.short_text_chars`) is also looked up by:
/// its page text's, when that is at least [`PAGE_PROBE_GROWTH`] times the text compared.
/// Extraction chooses the main block of a page with a short story on what surrounds it,
/// and the same template may give the story alone on one page and the story with the
/// site's rails on another (a brief one sentence longer is enough): a copy whose main text
/// is its story is then unlike its original stored with the rails, and like the original's
/// page text.
fn page_probe(compared: &Compared<'_>, page_text: &str) -> Option<Fingerprint> {
    (page_text.len() >= PAGE_PROBE_GROWTH * compared.text.len()).then(|| Fingerprint::of(page_text))
}

/// A page's record and what its host adds to the lookup ([`Probe`]).
pub(crate) struct PageRecord {
    pub(crate) record: DocRecord,
    whole: Option<Fingerprint>,
    /// The fingerprint of the page's text, when its main text is short and the page text
    /// much larger ([`page_probe`]).
    page: Option<Fingerprint>,
    /// Ids of its host's last pages decided unique, when its text is short.
    recent: Vec<u64>,
    template: Vec<u32>,
    /// The keys of the page text's lines, what the page teaches its host's template
    /// (`Dedup::learn_page_template`); empty without templates or a host.
    keys: Vec<u32>,
    /// The page's host ([`site_of`]), when templates are on.
    host: Option<String>,
}

impl PageRecord {
    /// The record, and what the page adds to its lookup.
    pub(crate) fn split(&mut self) -> (DocRecord, Probe<'_>) {
        let record = std::mem::take(&mut self.record);
        (record, self.probe())
    }

    pub(crate) fn probe(&self) -> Probe<'_> {
        Probe {
            whole: self.whole.as_ref().map(|w| (w.simhash, &w.sketch)),
            page: self.page.as_ref().map(|w| (w.simhash, &w.sketch)),
            recent: &self.recent,
            template: &self.template,
        }
    }
}

impl super::Dedup {
    /// Drops the template of `name`'s host from `prepared` before it is decided: the
    /// fingerprint is then of the page without it, and so is `extracted.text`, the text a
    /// crawler stores, unless `dedup.store_template_text` keeps it. Done once; [`Dedup::decide`](super::Dedup::decide)
    /// does it itself for a page that did not go through here.
    ///
    /// When the main text is all template (extraction took a block the site repeats, a
    /// reference list or an app banner, over a story shorter than it), the story wins: what
    /// is compared and stored is the rest of the page's text ([`Prepared::page_text`])
    /// without the template. A page with nothing of its own anywhere keeps its whole text.
    pub fn drop_template(&self, name: &str, prepared: &mut Prepared) {
        if !matches!(prepared.template, Template::Unchecked) {
            return;
        }
        prepared.template = Template::Checked;
        let Some(stripped) = self.without_template(name, prepared) else {
            return;
        };
        let whole = std::mem::replace(&mut prepared.fingerprint, Fingerprint::of(&stripped));
        prepared.template = if self.store_template_text {
            Template::Compared(stripped, whole)
        } else {
            let text = std::mem::replace(&mut prepared.extracted.text, stripped);
            Template::Stripped(text, whole)
        };
    }

    /// The text to compare for a page not yet looked at (`prepared.template` unchecked),
    /// when its main text holds lines of its host's template: the main text without them,
    /// or, when nothing else is left of it, the page's text without them. `None` when no
    /// line of the main text is template, or when the whole page is (it is then decided on
    /// its whole text), or the templates are off, or the name is not a URL.
    pub(crate) fn without_template(&self, name: &str, prepared: &Prepared) -> Option<String> {
        let templates = self.templates.as_ref()?;
        let host = site_of(name, prepared)?;
        match templates.strip(&host, &prepared.extracted.text) {
            Stripped::Untouched => None,
            Stripped::Rest(text) => Some(text),
            // Nothing of its own anywhere (an empty month of a calendar): decided on its
            // whole text, as before any template was known, so that its verdict does not
            // hang on how much of the template a crawl resumed from a checkpoint has learned.
            Stripped::AllTemplate => match templates.strip(&host, prepared.page_text()) {
                Stripped::Rest(text) => Some(text),
                Stripped::AllTemplate => None,
                Stripped::Untouched => Some(prepared.page_text().to_string()),
            },
        }
    }

    /// The text compared for `prepared` and its fingerprint: without its host's template,
    /// whether or not [`Dedup::drop_template`](super::Dedup::drop_template) was called.
    pub(crate) fn compared<'a>(&self, name: &str, prepared: &'a Prepared) -> Compared<'a> {
        if matches!(prepared.template, Template::Unchecked) {
            if let Some(stripped) = self.without_template(name, prepared) {
                let fingerprint = Fingerprint::of(&stripped);
                return Compared {
                    text: Cow::Owned(stripped),
                    fingerprint,
                    whole: Some(prepared.fingerprint),
                };
            }
        }
        Compared {
            text: Cow::Borrowed(prepared.compared_text()),
            fingerprint: prepared.fingerprint,
            whole: prepared.whole_fingerprint().copied(),
        }
    }

    /// The record of a prepared page as the index keeps it, with the profile of its whole
    /// text's lines for a page with a host ([`Blocks`]), and what its host adds to the
    /// lookup; `None` when it has no words.
    pub(crate) fn page_record(&self, name: &str, prepared: &Prepared) -> Option<PageRecord> {
        let compared = self.compared(name, prepared);
        if compared.fingerprint.tokens == 0 {
            return None;
        }
        let mut record = DocRecord::for_rule(
            name,
            &compared.text,
            &compared.fingerprint,
            self.index.confirm(),
        );
        let mut template = Vec::new();
        let mut keys = Vec::new();
        let mut page_host = None;
        let mut page = None;
        let mut recent = Vec::new();
        if let (Some(templates), Some(host)) = (&self.templates, site_of(name, prepared)) {
            if compared.fingerprint.chars < self.index.confirm().short_text_chars as usize {
                page = page_probe(&compared, prepared.page_text());
                recent = templates.recent(&host);
            }
            let blocks;
            (blocks, keys) = Blocks::with_keys(&host, prepared.page_text(), MAX_BLOCKS_PER_PAGE);
            template = templates.template_keys(&host, blocks.lines.iter().map(|l| l.key));
            record.blocks = Some(blocks.with_headline(prepared.extracted.title.as_deref()));
            page_host = Some(host.into_owned());
        }
        Some(PageRecord {
            record,
            whole: compared.whole,
            page,
            recent,
            template,
            keys,
            host: page_host,
        })
    }

    /// [`Self::learn_template`] for a page whose record was made by
    /// [`Self::page_record`]: from the keys of its text's lines, taken with its profile.
    pub(crate) fn learn_page_template(&self, verdict: &PageVerdict, page: &PageRecord) {
        if let (Some(templates), PageVerdict::Unique { id, .. }, Some(host)) =
            (&self.templates, verdict, &page.host)
        {
            templates.learn_keys(host, &page.keys);
            templates.remember(host, *id);
        }
    }

    /// Learns `name`'s host template from its whole main text `text`, when `verdict`
    /// stored it (a duplicate teaches nothing: see the module documentation).
    #[cfg_attr(not(all(feature = "crawler", feature = "cluster")), allow(dead_code))]
    pub(crate) fn learn_template(&self, name: &str, verdict: &PageVerdict, text: &str) {
        if let Some((templates, host)) = self.learning(name, verdict) {
            templates.learn(&host, text);
        }
    }

    /// The templates and the host that a page named `name` teaches, when its verdict stored
    /// it and its name has a host.
    fn learning<'a>(
        &self,
        name: &'a str,
        verdict: &PageVerdict,
    ) -> Option<(&HostTemplates, Cow<'a, str>)> {
        let (Some(templates), PageVerdict::Unique { .. }) = (&self.templates, verdict) else {
            return None;
        };
        Some((templates, host_in(name)?))
    }

    /// Saves the learned templates into the state directory (at a checkpoint).
    pub(crate) fn save_templates(&self) -> Result<(), super::DedupError> {
        let Some(templates) = &self.templates else {
            return Ok(());
        };
        templates
            .save(self.state_dir())
            .map_err(|source| super::DedupError::StateDir {
                path: self.state_dir().join(TEMPLATES_FILE),
                source,
            })
    }

    /// Hosts whose templates are known, and blocks kept for them.
    pub fn template_size(&self) -> (usize, usize) {
        self.templates.as_ref().map_or((0, 0), HostTemplates::size)
    }
}

#[path = "template_file.rs"]
mod file;
#[cfg(test)]
use file::MAGIC_V1;

#[cfg(test)]
#[path = "template_tests.rs"]
mod tests;
