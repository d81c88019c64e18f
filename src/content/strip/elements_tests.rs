//! The scan without its attribute rules (`strip_elements`) against the parser on generated
//! tag soup: the tree built from what the scan leaves is the tree built from the page itself with the dropped
//! elements (and comments) taken out, texts on either side of them joined.

use super::strip_elements;
use proptest::prelude::*;

/// The tree the parser builds from `html`, as lines: elements with all their attributes,
/// and texts, joined where only a dropped element or a comment stood between them. `script`
/// and `style` elements are left out with what they hold.
fn tree(html: &str) -> Vec<String> {
    let view = super::tree_view::View {
        left_out: |e| matches!(e.name(), "script" | "style"),
        listed: |_, _| true,
        join_texts: true,
        collapse_spaces: false,
    };
    super::tree_view::lines(html, &view)
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
        "</script x=\">\">",
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
    fn the_scan_takes_out_only_what_it_drops(pieces in prop::collection::vec(piece(), 1..24)) {
        let html = pieces.concat();
        let stripped = strip_elements(&html).html;
        prop_assert_eq!(tree(&html), tree(&stripped), "{:?}\n -> {:?}", html, stripped);
    }
}
