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
    let words = || name.split(|c: char| !c.is_ascii_alphanumeric());
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
    // The form for writing a comment (`comment-respond`, `commentform`) is a form, not the
    // readers' comments: it is left out whatever share the comments hold.
    if category == Cat::Comments
        && (tag == Tag::Form
            || lower
                .split(|c: char| !c.is_ascii_alphanumeric())
                .any(|w| matches!(w, "respond" | "form" | "commentform" | "replyform")))
    {
        category = Cat::Forms;
    }
    category
}

pub(super) fn word_category(word: &str) -> Cat {
    match word {
        "nav" | "navbar" | "navigation" | "menu" | "menubar" | "submenu" | "megamenu"
        | "breadcrumb" | "breadcrumbs" | "topbar" | "toc" | "skip" | "skiplink" | "pagination"
        | "pager" | "tabs" => Cat::Nav,
        "footer" | "colophon" | "copyright" => Cat::Footer,
        "header" | "masthead" => Cat::Header,
        "byline" | "author" | "authors" | "avatar" | "signature" | "sig" | "userinfo"
        | "postprofile" | "usercard" | "badge" | "badges" | "reputation" | "reactions"
        | "likes" | "votes" | "voting" | "vote" | "timestamp" | "dateline" | "date" | "meta"
        | "postmeta" | "tags" | "tagcloud" | "taglist" | "credit" | "credits" | "photocredit"
        | "photographer" | "caption" | "captions" | "bildunterschrift" | "legend" | "legende" => {
            Cat::Meta
        }
        "sidebar" | "aside" | "widget" | "widgets" | "related" | "recommended"
        | "recommendations" | "popular" | "trending" | "rail" => Cat::Aside,
        "comment" | "comments" | "commentlist" | "disqus" | "review" | "reviews" => Cat::Comments,
        "share" | "sharing" | "social" | "socials" | "sharethis" | "addthis" => Cat::Share,
        "ad" | "ads" | "advert" | "advertisement" | "adsense" | "sponsor" | "sponsored"
        | "promo" | "dfp" => Cat::Ads,
        "cookie" | "cookies" | "consent" | "gdpr" | "popup" | "modal" | "overlay" | "lightbox" => {
            Cat::Overlay
        }
        "respond" | "login" | "signin" | "signup" | "newsletter" | "subscribe" | "subscription"
        | "search" | "searchbox" | "filters" | "facets" | "sort" | "sorting" | "sortby" => {
            Cat::Forms
        }
        _ => Cat::None,
    }
}

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

/// Categories for words written together with others (`commentList`, `cookiebanner`); see
/// [`joined_in`].
pub(super) fn joined_word_category(lower: &str) -> Cat {
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
    // Most class strings hold none of the keywords: one pass of an automaton over the whole
    // string finds the ones it holds (overlapping too) before any word is looked at.
    static KEYWORDS: LazyLock<AhoCorasick> = LazyLock::new(|| {
        AhoCorasick::builder()
            .kind(Some(aho_corasick::AhoCorasickKind::DFA))
            .build(JOINED.map(|(keyword, _)| keyword))
            .expect("the keywords are valid")
    });
    let held = KEYWORDS
        .find_overlapping_iter(lower)
        .fold(0u16, |held, found| held | 1 << found.pattern().as_usize());
    if held == 0 {
        return Cat::None;
    }
    JOINED
        .iter()
        .enumerate()
        .filter(|(i, _)| held & 1 << i != 0)
        .find(|(_, (keyword, _))| {
            lower
                .split(|c: char| !c.is_ascii_alphanumeric())
                .any(|word| joined_in(word, keyword))
        })
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
        let lower = name.to_ascii_lowercase();
        match lower.as_str() {
            "hidden"
            | "d-none"
            | "display-none"
            | "is-hidden"
            | "u-hidden"
            | "hide"
            | "visually-hidden"
            | "visuallyhidden"
            | "sr-only"
            | "screen-reader-text"
            | "screen-reader-only"
            | "wt-display-none"
            | "invisible"
            | "hidecompletely"
            | "hide-completely"
            | "offscreen"
            | "element-invisible"
            | "show-for-sr"
            | "u-visually-hidden"
            | "a11y-hidden"
            | "assistive-text"
            | "sr-text"
            | "screenreader"
            | "screenreader-only"
            | "visuallyhidden-focusable" => hidden = true,
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
pub(super) fn is_streamed_segment(id: &str) -> bool {
    id.strip_prefix("S:")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_hexdigit()))
}

pub(super) fn hidden_by_style(style: &str) -> bool {
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
