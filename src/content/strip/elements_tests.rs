//! The first pass (`strip_elements`) against the parser on generated tag soup: the tree
//! built from what the pass leaves is the tree built from the page itself with the dropped
//! elements (and comments) taken out, texts on either side of them joined.

use super::strip_elements;
use proptest::prelude::*;

/// The tree the parser builds from `html`, as lines: elements with their attributes (in
/// order of name), and texts, joined where only a dropped element or a comment stood
/// between them, and whitespace in the head. `script` and `style` elements are left out
/// with what they hold.
fn tree(html: &str) -> Vec<String> {
    use ego_tree::iter::Edge;
    use scraper::Node;
    let dom = scraper::Html::parse_document(html);
    let mut lines: Vec<String> = Vec::new();
    let mut text = String::new();
    let mut skipping = 0usize;
    let dropped = |node: &scraper::node::Element| matches!(node.name(), "script" | "style");
    for edge in dom.tree.root().traverse() {
        let element = |node: ego_tree::NodeRef<'_, Node>| match node.value() {
            Node::Element(e) => Some(e.clone()),
            _ => None,
        };
        match edge {
            Edge::Open(node) => match (node.value(), element(node)) {
                (_, Some(e)) if dropped(&e) => skipping += 1,
                _ if skipping > 0 => {}
                // Whitespace in the head: a dropped element there takes the parser out of
                // the head or leaves it in, which moves or drops the whitespace after it, and
                // nothing reads it.
                (Node::Text(t), _)
                    if t.trim().is_empty()
                        && node
                            .ancestors()
                            .any(|a| element(a).is_some_and(|e| e.name() == "head")) => {}
                (Node::Text(t), _) => text.push_str(t),
                (_, Some(e)) => {
                    if !text.is_empty() {
                        lines.push(format!("{:?}", std::mem::take(&mut text)));
                    }
                    let mut attrs: Vec<String> =
                        e.attrs().map(|(n, v)| format!("{n}={v:?}")).collect();
                    attrs.sort();
                    lines.push(format!("<{} {}>", e.name(), attrs.join(" ")));
                }
                _ => {}
            },
            Edge::Close(node) => match element(node) {
                Some(e) if dropped(&e) => skipping -= 1,
                _ if skipping > 0 => {}
                Some(e) => {
                    if !text.is_empty() {
                        lines.push(format!("{:?}", std::mem::take(&mut text)));
                    }
                    lines.push(format!("</{}>", e.name()));
                }
                None => {}
            },
        }
    }
    lines
}

fn piece() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "text",
        " ",
        "a < b",
        "<",
        ">",
        "x>y",
        "&lt;",
        "\"",
        "'",
        "<p>",
        "</p>",
        "<div class=c>",
        "</div>",
        "<b>",
        "</b>",
        "<a href=\"/x\">",
        "</a>",
        "<span title=\"a>b\">",
        "<img alt=\"<script>\">",
        "<i data-x='<style>'>",
        "<!-- c -->",
        "<!-->",
        "<!--->",
        "<!-- x --!>",
        "<!--",
        "-->",
        "--!>",
        "<!x ",
        "<? ",
        "</ ",
        "</>",
        "<!",
        "<?",
        "</",
        "<script>",
        "</script>",
        "<script>s</script>",
        "<style>",
        "</style>",
        "<STYLE>p{}</STYLE>",
        "<script type=x>",
        "</script x>",
        "<scripts>",
        "</li>",
        "<li>",
        "<title>",
        "</title>",
        "<textarea class=t>",
        "</textarea>",
        "<xmp>",
        "</xmp>",
        "<noembed>",
        "</noembed>",
        "<plaintext>",
    ])
    .prop_map(str::to_string)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn the_first_pass_takes_out_only_what_it_drops(pieces in prop::collection::vec(piece(), 1..24)) {
        let html = pieces.concat();
        let stripped = strip_elements(&html).html;
        prop_assert_eq!(tree(&html), tree(&stripped), "{:?}\n -> {:?}", html, stripped);
    }
}
