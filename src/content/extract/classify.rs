//! Boilerplate categories from class and id words, roles and visibility.

use std::sync::LazyLock;

use aho_corasick::AhoCorasick;

use super::tree::{Attrs, Cat, Tag};

/// Words that make a class name that mentions a sidebar a layout helper of the element that
/// holds one (`c-layout-sidebar-left`, `has-sidebar`, `sticky-sidebar-relative`), not the
/// sidebar itself.
const LAYOUT_WORDS: [&str; 9] = [
    "layout",
    "has",
    "with",
    "no",
    "sticky",
    "relative",
    "wrap",
    "wrapper",
    "container",
];

fn is_layout_helper(name: &str) -> bool {
    // Most class names do not mention a sidebar: they are settled without splitting.
    if !crate::text::contains_ignore_ascii_case(name.as_bytes(), b"sidebar") {
        return false;
    }
    let words = || ascii_words(name);
    words().any(|w| w.eq_ignore_ascii_case("sidebar"))
        && words().any(|w| LAYOUT_WORDS.iter().any(|l| w.eq_ignore_ascii_case(l)))
}

/// Puts an element in a boilerplate category (or none). `lower` is a reusable buffer.
pub(super) fn classify(tag: Tag, attrs: &Attrs<'_>, lower: &mut String) -> Cat {
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
    // Microdata's author (`itemprop="author"`): a byline, or the box about the writer under
    // a post, whatever its class words.
    if attrs
        .itemprop
        .split_ascii_whitespace()
        .any(|p| p.eq_ignore_ascii_case("author"))
    {
        return Cat::Meta;
    }
    if attrs.class.is_empty() && attrs.id.is_empty() {
        return by_tag;
    }
    lower.clear();
    for name in attrs.class.split_ascii_whitespace() {
        // A WordPress taxonomy class names the post's tags and categories (`tag-review`,
        // `category-comments`): words of what the post is about, not of the element's role.
        if name.starts_with("tag-") || name.starts_with("category-") || is_layout_helper(name) {
            continue;
        }
        lower.push_str(name);
        lower.push(' ');
    }
    lower.push_str(attrs.id);
    lower.make_ascii_lowercase();
    let mut category = words_category(lower);
    if category == Cat::None {
        category = by_tag;
    }
    // The form for writing a comment (`comment-respond`, `commentform`) is a form, not the
    // readers' comments: it is left out whatever share the comments hold.
    if category == Cat::Comments
        && (tag == Tag::Form
            || ascii_words(lower)
                .any(|w| matches!(w, "respond" | "form" | "commentform" | "replyform")))
    {
        category = Cat::Forms;
    }
    category
}

/// The runs of ASCII letters and digits in `text`, in order: its words as class and id
/// names write them. Any other character separates them; no word is empty.
pub(super) fn ascii_words(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < bytes.len() && !bytes[at].is_ascii_alphanumeric() {
            at += 1;
        }
        let start = at;
        while at < bytes.len() && bytes[at].is_ascii_alphanumeric() {
            at += 1;
        }
        // Both ends sit next to ASCII bytes or at the ends, so they are character boundaries.
        (at > start).then(|| &text[start..at])
    })
}

/// The category of an element whose class or id holds one of these words (separated by
/// spaces) as a whole word.
const CATEGORY_WORDS: &[(&str, Cat)] = &[
    (
        concat!(
            "nav navbar navigation menu menubar submenu megamenu breadcrumb breadcrumbs ",
            "topbar toc skip skiplink pagination pager tabs",
        ),
        Cat::Nav,
    ),
    ("footer foot colophon copyright", Cat::Footer),
    ("header masthead", Cat::Header),
    (
        concat!(
            "byline author authors avatar signature sig userinfo postprofile usercard ",
            "badge badges reputation reactions likes votes voting vote timestamp dateline ",
            "date meta postmeta tags tagcloud taglist credit credits photocredit ",
            "photographer caption captions bildunterschrift legend legende",
        ),
        Cat::Meta,
    ),
    (
        concat!(
            "sidebar aside widget widgets related recommended recommendations popular ",
            "trending rail",
        ),
        Cat::Aside,
    ),
    (
        "comment comments commentlist disqus review reviews",
        Cat::Comments,
    ),
    ("share sharing social socials sharethis addthis", Cat::Share),
    (
        "ad ads advert advertisement adsense sponsor sponsored promo dfp",
        Cat::Ads,
    ),
    (
        "cookie cookies consent gdpr popup modal overlay lightbox",
        Cat::Overlay,
    ),
    (
        concat!(
            "respond login signin signup newsletter subscribe subscription search ",
            "searchbox filters facets sort sorting sortby",
        ),
        Cat::Forms,
    ),
];

/// What may follow a keyword written together with other words for the whole to still be
/// that keyword's element (`commentList`, `cookieBanner`, `footerLinks`): structural words,
/// a plural, a number. A keyword that is only the start of another word (`commentary`, an
/// opinion column; `socialism`) does not count.
pub(super) const JOINED_SUFFIXES: &[&str] = &[
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
pub(super) fn joined_in(word: &str, keyword: &str) -> bool {
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

/// Keywords that make an element's category when written together with other words
/// (`commentList`, `cookiebanner`); see [`joined_in`].
const JOINED: [(&str, Cat); 11] = [
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

/// The category that the class and id words in `lower` (lower case) give an element: that
/// of the first whole word that has one ([`CATEGORY_WORDS`]), else that of the first
/// keyword written together with other words ([`JOINED`], [`joined_in`]), else none.
pub(super) fn words_category(lower: &str) -> Cat {
    // Most class strings hold no keyword of either kind: one pass of an automaton over the
    // whole string finds those it holds (overlapping too) before any word is looked at.
    // Each pattern is a category's whole word, a joined keyword, or both.
    static KEYWORDS: LazyLock<(AhoCorasick, Vec<(Cat, u16)>)> = LazyLock::new(|| {
        let mut patterns: Vec<(&str, Cat, u16)> = CATEGORY_WORDS
            .iter()
            .flat_map(|(words, cat)| words.split(' ').map(|w| (w, *cat, 0)))
            .collect();
        for (i, (keyword, _)) in JOINED.iter().enumerate() {
            match patterns.iter_mut().find(|(w, _, _)| w == keyword) {
                Some(pattern) => pattern.2 |= 1 << i,
                None => patterns.push((keyword, Cat::None, 1 << i)),
            }
        }
        let automaton = AhoCorasick::builder()
            .kind(Some(aho_corasick::AhoCorasickKind::DFA))
            .build(patterns.iter().map(|(w, _, _)| w))
            .expect("the keywords are valid");
        (
            automaton,
            patterns.iter().map(|(_, c, j)| (*c, *j)).collect(),
        )
    });
    let (automaton, meanings) = &*KEYWORDS;
    let bytes = lower.as_bytes();
    let mut held = 0u16;
    // Matches come in the order of their ends; whole words never overlap, so the first one
    // found is the first in the text.
    for found in automaton.find_overlapping_iter(lower) {
        let (cat, joined) = meanings[found.pattern().as_usize()];
        let whole = cat != Cat::None
            && (found.start() == 0 || !bytes[found.start() - 1].is_ascii_alphanumeric())
            && bytes
                .get(found.end())
                .is_none_or(|b| !b.is_ascii_alphanumeric());
        if whole {
            return cat;
        }
        held |= joined;
    }
    if held == 0 {
        return Cat::None;
    }
    JOINED
        .iter()
        .enumerate()
        .filter(|(i, _)| held & 1 << i != 0)
        .find(|(_, (keyword, _))| ascii_words(lower).any(|word| joined_in(word, keyword)))
        .map_or(Cat::None, |(_, (_, cat))| *cat)
}

/// Class names that hide an element at every screen size. A responsive variant beside them
/// (`hidden md:block`, `d-none d-lg-flex`) means the element shows on some screens, so it is
/// not hidden.
pub(super) fn hidden_by_class(class: &str) -> bool {
    if class.is_empty() {
        return false;
    }
    let mut hidden = false;
    for name in class.split_ascii_whitespace() {
        if HIDING_CLASSES.iter().any(|h| name.eq_ignore_ascii_case(h)) {
            hidden = true;
        } else if is_responsive_display(name.as_bytes()) {
            return false;
        }
    }
    hidden
}

/// Class names that hide an element at every screen size (compared ignoring ASCII case).
const HIDING_CLASSES: [&str; 25] = [
    "hidden",
    "d-none",
    "display-none",
    "is-hidden",
    "u-hidden",
    "hide",
    "visually-hidden",
    "visuallyhidden",
    "sr-only",
    "screen-reader-text",
    "screen-reader-only",
    "wt-display-none",
    "invisible",
    "hidecompletely",
    "hide-completely",
    "offscreen",
    "element-invisible",
    "show-for-sr",
    "u-visually-hidden",
    "a11y-hidden",
    "assistive-text",
    "sr-text",
    "screenreader",
    "screenreader-only",
    "visuallyhidden-focusable",
];

/// A class name that shows an element at some screen size: a breakpoint variant
/// (`md:block`) or Bootstrap's `d-lg-flex` and the like (ASCII case ignored).
fn is_responsive_display(name: &[u8]) -> bool {
    let ends_with = |suffix: &[u8]| {
        name.len() >= suffix.len() && name[name.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
    };
    name.contains(&b':')
        || (name.len() >= 2
            && name[..2].eq_ignore_ascii_case(b"d-")
            && (ends_with(b"-block")
                || ends_with(b"-flex")
                || ends_with(b"-inline")
                || ends_with(b"-grid")))
}

/// The id React gives a streamed segment: `S:` and a hexadecimal number.
pub(super) fn is_streamed_segment(id: &str) -> bool {
    id.strip_prefix("S:")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_hexdigit()))
}

pub(super) fn hidden_by_style(style: &str) -> bool {
    if style.is_empty() {
        return false;
    }
    // The declarations with every whitespace character left out and ASCII lower-cased, read
    // through a window as long as the longer of the two; no copy of the style is made.
    const NONE: &[u8] = b"display:none";
    const HIDDEN: &[u8] = b"visibility:hidden";
    let mut window = [0u8; HIDDEN.len()];
    let mut seen = 0usize;
    for c in style.chars().filter(|c| !c.is_whitespace()) {
        window.copy_within(1.., 0);
        // Outside ASCII, a byte that no needle holds.
        window[HIDDEN.len() - 1] = if c.is_ascii() {
            c.to_ascii_lowercase() as u8
        } else {
            0xFF
        };
        seen += 1;
        if (seen >= NONE.len() && window.ends_with(NONE))
            || (seen >= HIDDEN.len() && window == *HIDDEN)
        {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The definitions, written plainly: what the scans above must agree with.
    fn plain_hidden_by_style(style: &str) -> bool {
        let compact: String = style
            .chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| c.to_ascii_lowercase())
            .collect();
        compact.contains("display:none") || compact.contains("visibility:hidden")
    }

    fn plain_hidden_by_class(class: &str) -> bool {
        let mut hidden = false;
        for name in class.split_ascii_whitespace() {
            let lower = name.to_ascii_lowercase();
            if HIDING_CLASSES.contains(&lower.as_str()) {
                hidden = true;
            } else if lower.contains(':')
                || (lower.starts_with("d-")
                    && ["-block", "-flex", "-inline", "-grid"]
                        .iter()
                        .any(|s| lower.ends_with(s)))
            {
                return false;
            }
        }
        hidden
    }

    fn plain_words_category(lower: &str) -> Cat {
        let words = || lower.split(|c: char| !c.is_ascii_alphanumeric());
        let whole = words().find_map(|word| {
            CATEGORY_WORDS
                .iter()
                .find(|(list, _)| list.split(' ').any(|w| w == word))
                .map(|(_, cat)| *cat)
        });
        whole.unwrap_or_else(|| {
            JOINED
                .iter()
                .find(|(keyword, _)| words().any(|word| joined_in(word, keyword)))
                .map_or(Cat::None, |(_, cat)| *cat)
        })
    }

    /// Strings made of up to `most - 1` of `parts`, in any order.
    fn joined(parts: Vec<&'static str>, most: usize) -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(parts), 0..most).prop_map(|parts| parts.concat())
    }

    fn style() -> impl Strategy<Value = String> {
        joined(
            vec![
                "display",
                "DISPLAY",
                ":",
                " ",
                "\u{a0}",
                "\n",
                "none",
                "No",
                "ne",
                "visibility",
                "hid",
                "den",
                "Hidden",
                ";",
                "block",
                "é",
                "x",
            ],
            12,
        )
    }

    fn class() -> impl Strategy<Value = String> {
        joined(
            vec![
                "hidden",
                "Hidden",
                "d-none",
                "d-lg-flex",
                "D-MD-BLOCK",
                "md:block",
                "sr-only",
                "sidebar",
                "c-layout-sidebar-left",
                "comments",
                "commentList",
                "commentary",
                "post",
                "tag-review",
                "footer-links",
                "navbar",
                "ad",
                "header",
                "é",
                "-",
                "_",
                "2",
                " ",
                "  ",
                "\t",
                "x",
            ],
            10,
        )
    }

    proptest! {
        #[test]
        fn style_scan_matches_its_definition(style in style()) {
            prop_assert_eq!(hidden_by_style(&style), plain_hidden_by_style(&style));
        }

        #[test]
        fn class_scan_matches_its_definition(class in class()) {
            prop_assert_eq!(hidden_by_class(&class), plain_hidden_by_class(&class));
            let lower = class.to_ascii_lowercase();
            prop_assert_eq!(words_category(&lower), plain_words_category(&lower));
        }
    }
}
