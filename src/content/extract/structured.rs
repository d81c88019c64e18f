//! The page's own structured data (JSON-LD): a product's or article's description when
//! the markup holds less.

use scraper::Node as DomNode;

use super::render::{TextWriter, collapse_whitespace};
use super::tree::Tag;

/// A schema.org `Product` description of at least this many words can be the main text.
pub(super) const PRODUCT_DESCRIPTION_WORDS: usize = 80;
/// ... when the visible main text has at most this many times its words.
pub(super) const PRODUCT_TEXT_RATIO: usize = 3;

/// What the page's JSON-LD blocks say.
pub(super) struct Structured {
    /// The longest `articleBody`, else the longest `description`, as text.
    pub(super) text: Option<String>,
    /// The longest `description` of an item whose `@type` is `Product`, as text.
    pub(super) product_description: Option<String>,
    /// The page declares itself a discussion (`DiscussionForumPosting`, `QAPage`,
    /// `Question`): its replies are its content.
    pub(super) discussion: bool,
    /// The page declares itself an article (`Article`, `NewsArticle`, `BlogPosting`, ...).
    pub(super) article: bool,
}

impl Structured {
    pub(super) fn of(blocks: &[String]) -> Structured {
        let mut body: Option<String> = None;
        let mut description: Option<String> = None;
        let mut product: Option<String> = None;
        let mut discussion = false;
        let mut article = false;
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
                        discussion |= map.get("@type").is_some_and(names_discussion);
                        article |= map.get("@type").is_some_and(names_article);
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
            discussion,
            article,
        }
    }
}

/// A JSON-LD `@type` that is `Product` or a list holding it.
pub(super) fn names_product(kind: &serde_json::Value) -> bool {
    match kind {
        serde_json::Value::String(s) => s == "Product",
        serde_json::Value::Array(items) => items.iter().any(|i| i.as_str() == Some("Product")),
        _ => false,
    }
}

/// A JSON-LD `@type` that names a discussion (a forum thread, a question and its
/// answers), or a list holding one.
pub(super) fn names_article(kind: &serde_json::Value) -> bool {
    let named = |s: &str| {
        matches!(
            s,
            "Article"
                | "NewsArticle"
                | "BlogPosting"
                | "ReportageNewsArticle"
                | "AnalysisNewsArticle"
                | "OpinionNewsArticle"
                | "ReviewNewsArticle"
                | "BackgroundNewsArticle"
                | "TechArticle"
                | "ScholarlyArticle"
                | "LiveBlogPosting"
        )
    };
    match kind {
        serde_json::Value::String(s) => named(s),
        serde_json::Value::Array(items) => items.iter().any(|i| i.as_str().is_some_and(named)),
        _ => false,
    }
}

pub(super) fn names_discussion(kind: &serde_json::Value) -> bool {
    let named = |s: &str| matches!(s, "DiscussionForumPosting" | "QAPage" | "Question");
    match kind {
        serde_json::Value::String(s) => named(s),
        serde_json::Value::Array(items) => items.iter().any(|i| i.as_str().is_some_and(named)),
        _ => false,
    }
}

pub(super) fn keep_longer(slot: &mut Option<String>, candidate: &str) {
    if slot.as_ref().is_none_or(|s| s.len() < candidate.len()) {
        *slot = Some(candidate.to_string());
    }
}

/// JSON-LD text sometimes carries markup; reduce it to text with paragraph breaks.
pub(super) fn structured_to_text(text: &str) -> String {
    if !text.contains('<') {
        return text
            .split("\n\n")
            .map(collapse_whitespace)
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n");
    }
    let dom = super::parse_fragment(text);
    let mut writer = TextWriter::default();
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
