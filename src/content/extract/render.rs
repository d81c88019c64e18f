//! Writing the kept content as structured text, and the clean-ups after it.

use super::lines::drop_metadata_lines;
use super::tree::Tag;
use crate::content::extract::BlockKind;
use crate::text::space_len_at;

#[derive(Default)]
pub(super) struct TextWriter {
    pub(super) out: String,
    /// 0: nothing pending, 1: a line break, 2: a blank line.
    pub(super) pending_break: u8,
    pub(super) pending_space: bool,
    pub(super) pending_prefix: Option<String>,
    pub(super) preformatted: u32,
    pub(super) cells_in_row: u32,
}

/// True when `text` is ASCII whose only whitespace is single spaces (three vectorized scans,
/// where the general path looks at every byte in turn).
pub(super) fn is_plain_spaced(text: &str) -> bool {
    let bytes = text.as_bytes();
    text.is_ascii()
        && !crate::text::any_byte(bytes, |b| matches!(b, b'\t'..=b'\r'))
        && memchr::memmem::find(bytes, b"  ").is_none()
}

/// Whether a whitespace character starts at byte `i` of `text`.
#[inline]
pub(super) fn starts_space(text: &str, i: usize) -> bool {
    space_len_at(text, i) != 0
}

impl TextWriter {
    pub(super) fn text(&mut self, text: &str) {
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

    pub(super) fn flush_pending(&mut self) {
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

    pub(super) fn request_break(&mut self, lines: u8) {
        self.pending_break = self.pending_break.max(lines);
        self.pending_space = false;
    }

    pub(super) fn open(&mut self, tag: Tag, ordinal: i32) {
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
            Tag::Text | Tag::Inline | Tag::Strong | Tag::A | Tag::Button => {}
        }
    }

    pub(super) fn close(&mut self, tag: Tag) {
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

    pub(super) fn finish(mut self) -> String {
        let trimmed = self.out.trim_end().len();
        self.out.truncate(trimmed);
        drop_metadata_lines(drop_repeated_lines(drop_repeated_blocks(self.out)))
    }

    /// [`TextWriter::finish`], with the kind of each block of the finished text, given where
    /// blocks of each kind started in the output (`marks`, in order).
    pub(super) fn finish_with_kinds(
        self,
        marks: &[(usize, BlockKind)],
    ) -> (String, Vec<BlockKind>) {
        // Each block of the text before the finishing passes, with its kind: the kind of
        // the last mark at or before its start.
        let mut before: Vec<(&str, BlockKind)> = Vec::new();
        let raw = self.out.clone();
        let mut offset = 0;
        let mut mark = 0;
        let mut kind = BlockKind::Story;
        for block in blocks(&raw) {
            let start = offset;
            offset += block.len() + 2;
            while mark < marks.len()
                && marks[mark].0 <= start + block.len() - block.trim_start().len()
            {
                kind = marks[mark].1;
                mark += 1;
            }
            if !block.trim().is_empty() {
                before.push((block, kind));
            }
        }
        let text = self.finish();
        // The finishing passes drop lines and blocks but keep the order: each finished
        // block is found among the earlier ones by its first line.
        let mut kinds = Vec::new();
        let mut j = 0;
        for block in blocks(&text) {
            let first = memchr::memchr(b'\n', block.as_bytes())
                .map_or(block, |end| &block[..end])
                .trim();
            // The search starts at the block last found, which nearly never holds the next
            // one's start: `contains` without a searcher built for each block tried.
            let found = before[j..].iter().position(|(b, _)| holds(b, first));
            match found {
                Some(k) => {
                    j += k;
                    kinds.push(before[j].1);
                }
                None => kinds.push(BlockKind::Story),
            }
        }
        (text, kinds)
    }
}

/// `haystack.contains(needle)`, by the places of the needle's first byte: no searcher to
/// build, which costs more than the search when both are a paragraph or shorter.
fn holds(haystack: &str, needle: &str) -> bool {
    let (haystack, needle) = (haystack.as_bytes(), needle.as_bytes());
    let Some(&lead) = needle.first() else {
        return true;
    };
    memchr::memchr_iter(lead, haystack).any(|at| haystack[at..].starts_with(needle))
}

/// The lines of `text` without those `dropped` names (given each line and its trimmed
/// text, in order), blank lines kept where they separated what is left; `None` when no line
/// is dropped. Nothing is copied until a line is dropped (most texts lose none).
pub(super) fn drop_lines<'a>(
    text: &'a str,
    mut dropped: impl FnMut(&'a str, &'a str) -> bool,
) -> Option<String> {
    let mut out: Option<String> = None;
    let mut blank = false; // a blank line is due before the next line written
    let mut start = 0;
    for line in crate::text::split_lf(text) {
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
                for line in crate::text::split_lf(&text[..line_start.saturating_sub(1)]) {
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
pub(super) fn push_kept_line(out: &mut String, blank: &mut bool, line: &str) {
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

/// Blocks at least this long that repeat an earlier block of the text are dropped.
pub(super) const REPEATED_BLOCK_CHARS: usize = 80;

/// Drops each block (the text between blank lines: a paragraph, a heading, a list, a
/// table) of [`REPEATED_BLOCK_CHARS`] or more that repeats an earlier block: pages often
/// carry the same block twice or more (a version for small screens and one for large, the
/// panels of a colour picker), which a reader sees once.
pub(super) fn drop_repeated_blocks(text: String) -> String {
    let mut seen = text_set(&text);
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
pub(super) type TextSet<'a> =
    std::collections::HashSet<&'a str, xxhash_rust::xxh3::Xxh3DefaultBuilder>;

/// A [`TextSet`] with room for every piece of [`REPEATED_BLOCK_CHARS`] or more of `text`,
/// so that it never grows (growing rehashed it a few times a page).
fn text_set(text: &str) -> TextSet<'_> {
    TextSet::with_capacity_and_hasher(text.len() / REPEATED_BLOCK_CHARS + 1, Default::default())
}

/// The pieces of `text` between occurrences of "\n\n", as `text.split("\n\n")` gives them.
pub(super) fn blocks(text: &str) -> impl Iterator<Item = &str> {
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
pub(super) fn drop_repeated_lines(text: String) -> String {
    let mut seen = text_set(&text);
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
pub(super) fn push_words(out: &mut String, start: usize, text: &str) {
    for word in text.split_whitespace() {
        if out.len() > start {
            out.push(' ');
        }
        out.push_str(word);
    }
}

/// A `<title>` without the site name: the longest part when split on ` | `, ` - `, ` – `,
/// ` — ` or ` :: `.
pub(super) fn clean_title(title: &str) -> String {
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

#[cfg(test)]
mod tests {
    proptest::proptest! {
        #[test]
        fn holds_is_contains(haystack in "[ab\u{e9} ]{0,40}", needle in "[ab\u{e9} ]{0,4}") {
            proptest::prop_assert_eq!(super::holds(&haystack, &needle), haystack.contains(&needle));
        }
    }
}
