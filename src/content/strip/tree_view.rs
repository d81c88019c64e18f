//! The tree the parser builds from some markup, as lines to compare: what the strip tests
//! hold the pass to.

use ego_tree::iter::Edge;
use scraper::Node;
use scraper::node::Element;

/// What [`lines`] shows of a tree.
pub(super) struct View {
    /// Elements left out, with what they hold.
    pub(super) left_out: fn(&Element) -> bool,
    /// Whether an element's attribute (its name) is listed.
    pub(super) listed: fn(&Element, &str) -> bool,
    /// Texts that only left-out elements stood between are joined into one line.
    pub(super) join_texts: bool,
    /// Each run of two or more HTML whitespace characters in a text is shown as one (a line
    /// feed if it holds a line break, else a space), except in the elements whose text
    /// is read as written ([`VERBATIM`]).
    pub(super) collapse_spaces: bool,
}

/// Elements whose whitespace is their text: preformatted ones and those the tokenizer reads
/// as text.
const VERBATIM: &[&str] = &["pre", "listing", "plaintext", "xmp", "textarea", "title"];

/// `text` with each run of two or more HTML whitespace characters as one.
fn collapse_spaces(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut run = String::new();
    let flush = |out: &mut String, run: &mut String| {
        if run.chars().count() >= 2 {
            out.push(if run.contains(['\n', '\r']) {
                '\n'
            } else {
                ' '
            });
        } else {
            out.push_str(run);
        }
        run.clear();
    };
    for c in text.chars() {
        if matches!(c, '\t' | '\n' | '\x0c' | '\r' | ' ') {
            run.push(c);
        } else {
            flush(&mut out, &mut run);
            out.push(c);
        }
    }
    flush(&mut out, &mut run);
    out
}

/// The tree the parser builds from `html`, as lines: elements with the attributes `view`
/// lists (in order of name), and texts. Whitespace in the head is left out: a dropped tag
/// there takes the parser out of the head or leaves it in, which moves or drops the
/// whitespace after it, and nothing reads it.
pub(super) fn lines(html: &str, view: &View) -> Vec<String> {
    let dom = crate::content::extract::parse_document(html);
    let mut lines: Vec<String> = Vec::new();
    let mut text = String::new();
    let mut skipping = 0usize;
    // Open elements whose text is read as written.
    let mut verbatim = 0usize;
    let flush = |lines: &mut Vec<String>, text: &mut String| {
        if !text.is_empty() {
            lines.push(format!("{:?}", std::mem::take(text)));
        }
    };
    let is_verbatim = |e: &Element| VERBATIM.contains(&e.name());
    for edge in dom.tree.root().traverse() {
        match edge {
            Edge::Open(node) => match node.value() {
                Node::Element(e) if (view.left_out)(e) => skipping += 1,
                _ if skipping > 0 => {}
                Node::Text(t)
                    if t.trim().is_empty()
                        && node.ancestors().any(|a| {
                            a.value().as_element().is_some_and(|e| e.name() == "head")
                        }) => {}
                Node::Text(t) if view.collapse_spaces && verbatim == 0 => {
                    text.push_str(&collapse_spaces(t));
                    if !view.join_texts {
                        flush(&mut lines, &mut text);
                    }
                }
                Node::Text(t) => {
                    text.push_str(t);
                    if !view.join_texts {
                        flush(&mut lines, &mut text);
                    }
                }
                Node::Element(e) => {
                    flush(&mut lines, &mut text);
                    verbatim += usize::from(is_verbatim(e));
                    let mut attrs: Vec<String> = e
                        .attrs()
                        .filter(|(name, _)| (view.listed)(e, name))
                        .map(|(name, value)| format!("{name}={value:?}"))
                        .collect();
                    attrs.sort();
                    lines.push(format!("<{} {}>", e.name(), attrs.join(" ")));
                }
                _ => {}
            },
            Edge::Close(node) => match node.value() {
                Node::Element(e) if (view.left_out)(e) => skipping -= 1,
                _ if skipping > 0 => {}
                Node::Element(e) => {
                    flush(&mut lines, &mut text);
                    verbatim -= usize::from(is_verbatim(e));
                    lines.push(format!("</{}>", e.name()));
                }
                _ => {}
            },
        }
    }
    flush(&mut lines, &mut text);
    lines
}
