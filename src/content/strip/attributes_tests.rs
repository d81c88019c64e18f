//! The pass that drops attributes (see `attributes.rs`): what it rewrites, what it leaves
//! alone, and that the parser builds the same tree from what it leaves.

use super::*;
use proptest::prelude::*;

fn rewritten(tag: &str) -> Option<String> {
    let mut lean = Lean::default();
    read_tag(tag.as_bytes(), &mut lean);
    if !lean.rewrite {
        return None;
    }
    let mut out = String::new();
    push_tag(&mut out, tag, &lean);
    Some(out)
}

#[test]
fn drops_what_is_not_read() {
    assert_eq!(
        rewritten(r#"<img src="a.png" alt='A' class=pic data-x=1 loading=lazy>"#).as_deref(),
        Some("<img class=pic>")
    );
    assert_eq!(
        rewritten(r#"<A HREF="/x?a=1&amp;b=2" onclick="go()" REL=nofollow>"#).as_deref(),
        Some(r#"<A HREF="/x?a=1&amp;b=2" REL=nofollow>"#)
    );
    assert_eq!(
        rewritten(r#"<div hidden data-a="1"/>"#).as_deref(),
        Some("<div hidden />")
    );
    // An unquoted value keeps its slash; the self-closing one gets a space before it.
    assert_eq!(
        rewritten("<a href=/ data-y=2>").as_deref(),
        Some("<a href=/>")
    );
    assert_eq!(
        rewritten("<br class=x data-y=2 />").as_deref(),
        Some("<br class=x />")
    );
    // Unquoted, the slash is part of the value.
    assert_eq!(
        rewritten("<br class=x data-y=2/>").as_deref(),
        Some("<br class=x>")
    );
    // Values with no space before the next name, and empty values.
    assert_eq!(
        rewritten(r#"<p id="a"data-b="c"class=d role=>"#).as_deref(),
        Some(r#"<p id="a" class=d role=>"#)
    );
    assert_eq!(
        rewritten("<p id = 'a' title = x>").as_deref(),
        Some("<p id = 'a'>")
    );
}

#[test]
fn leaves_alone_what_it_does_not_read_exactly() {
    // Nothing dropped.
    assert_eq!(rewritten(r#"<div class="a" id=b>"#), None);
    // A quoted `>` (the tag goes on past the first `>`), a `<` inside.
    assert_eq!(rewritten(r#"<a title="x>"#), None);
    assert_eq!(rewritten(r#"<a title="a<b" href=c>"#), None);
    // Odd names.
    assert_eq!(rewritten(r#"<a ="x" title=y>"#), None);
    assert_eq!(rewritten(r#"<a b"c=d title=y>"#), None);
    // Formatting elements.
    assert_eq!(rewritten(r#"<b data-x=1>"#), None);
    assert_eq!(rewritten(r#"<font data-x=1 color=red>"#), None);
}

/// The tree the parser builds, as lines: element names with the attributes kept, and texts
/// with their runs of whitespace as one (outside preformatted elements); the `link` and
/// `meta` tags that go whole are left out.
fn tree(html: &str) -> Vec<String> {
    let view = super::super::tree_view::View {
        left_out: dropped_whole,
        listed: |e, name| Element::of(e.name().as_bytes()).keeps(name.as_bytes()),
        join_texts: false,
        collapse_spaces: true,
    };
    super::super::tree_view::lines(html, &view)
}

/// A `link` or `meta` element of the kind the pass drops whole.
fn dropped_whole(e: &scraper::node::Element) -> bool {
    matches!(e.name(), "link" | "meta")
        && !e.attrs().any(|(name, value)| {
            Element::of(e.name().as_bytes()).reads(name.as_bytes(), value.as_bytes())
        })
}

fn same_tree(html: &str) {
    let full = super::super::strip_elements(html).html;
    let lean = super::super::strip(html).html;
    assert_eq!(tree(&full), tree(&lean), "{html:?}\n -> {lean:?}");
}

/// Every attribute the extraction reads is kept where it reads it: the names `Attrs::of`
/// matches on every element (a link's `href` and `rel` on `a`), and each `.attr("x")` of
/// the head's elements on that element (`read_meta` reads `meta`). One read without a place
/// in [`KEPT`] or [`KEPT_ON`] would find nothing.
#[test]
fn every_attribute_the_extraction_reads_is_kept() {
    let source = [
        include_str!("../extract/tree.rs"),
        include_str!("../extract/head.rs"),
    ]
    .concat();
    let meta_from = source
        .find("fn read_meta")
        .expect("tree.rs reads meta tags");
    let mut reads = 0;
    let mut at = 0;
    while let Some(offset) = source[at..].find(".attr(\"") {
        at += offset + 7;
        let name = source[at..].split('"').next().unwrap();
        let element = if at > meta_from {
            "meta"
        } else {
            ["html", "base", "link"]
                .into_iter()
                .max_by_key(|e| source[..at].rfind(&format!("\"{e}\" ")))
                .unwrap()
        };
        assert!(
            Element::of(element.as_bytes()).keeps(name.as_bytes()),
            "{element}'s {name} is read but dropped"
        );
        reads += 1;
    }
    for line in source.lines() {
        let Some(line) = line.trim_start().strip_prefix('"') else {
            continue;
        };
        let Some((name, rest)) = line.split_once('"') else {
            continue;
        };
        if rest.trim_start().starts_with("=> attrs.") {
            let element = if matches!(name, "href" | "rel") {
                "a"
            } else {
                "div"
            };
            assert!(
                Element::of(element.as_bytes()).keeps(name.as_bytes()),
                "{element}'s {name} is read but dropped"
            );
            reads += 1;
        }
    }
    assert!(reads >= 19, "{reads} reads found");
}

/// The head's `link` and `meta` tags that nothing reads go whole; those the extraction reads
/// stay, and so do the document's first start tag, whatever it is, and those in the body.
#[test]
fn unread_head_tags_go_whole() {
    let head = concat!(
        "<meta charset=utf-8><html lang=de><head>",
        "<meta name=viewport content=\"width=device-width\">",
        "<link rel=stylesheet href=/a.css><link rel=preload href=/f.woff2 as=font>",
        "<link rel=\"Canonical\" href=\"https://example.com/a\" data-x=1>",
        "<meta property=\"og:title\" content=\"A title\">",
        "<meta name=\"Description\" content=\"About it\">",
        "<meta http-equiv=content-language content=de>",
        "<meta name=\"og&#58;type\" content=article>",
        "<META NAME=robots CONTENT=index /></head><body><p>Text</p>",
    );
    assert_eq!(
        super::super::strip(head).html,
        concat!(
            "<meta><html lang=de><head>",
            "<link rel=\"Canonical\" href=\"https://example.com/a\">",
            "<meta property=\"og:title\" content=\"A title\">",
            "<meta name=\"Description\" content=\"About it\">",
            "<meta http-equiv=content-language content=de>",
            "<meta name=\"og&#58;type\" content=article>",
            "</head><body><p>Text</p>",
        )
    );
    same_tree(head);
    // In the body, dropping it would join the texts on either side into one.
    let body = "<html><body><p>a<meta name=x content=y>b</p>";
    assert_eq!(super::super::strip(body).html, body);
    let out = crate::content::extract(head, None);
    assert_eq!(out.title.as_deref(), Some("A title"));
    assert_eq!(out.description.as_deref(), Some("About it"));
    assert_eq!(out.canonical.as_deref(), Some("https://example.com/a"));
    assert_eq!(out.language.as_deref(), Some("de"));
}

#[test]
fn the_parser_builds_the_same_tree() {
    // A quoted value running past the first `>`: what follows is still the value.
    same_tree(
        r#"<div id="a</div><div data-advert=x class=y>text</div>">b</div><p data-z=1 class=c>t"#,
    );
    // Tags inside a title or a textarea are text.
    same_tree(
        "<title>a <b data-x=1 class=y> c</title><textarea><p data-x=1>t</textarea><p data-x=2 id=i>",
    );
    same_tree("<plaintext><p data-x=1 class=c>all text");
    // Inside a bogus comment, and a `<` inside a tag.
    same_tree("<!x <a data-y=1 href=h>><?p <p data-q=2 id=r>?><img alt='a<b' data-s=1 class=c>");
    same_tree(r#"</<body alt="q" role="a>b" data-x=1>"#);
    // Equal formatting elements, made equal by what was dropped: three are the limit.
    same_tree("<b data-a=1><b data-a=2><b data-a=3><b data-a=4><p>x</b></b></b></b>y");
    same_tree("<table><input type=hidden data-x=1><tr><td data-y=2 class=c>t</table>");
    // Whitespace between tags is collapsed up to the first preformatted element; the
    // whitespace a table holds stays in it, a `pre` in a table goes before the table.
    same_tree(
        "<div>\n   <p>\n   a  b\n  </p>\n\n</div>   <pre>\n  x\n\n  y  </pre>\n   <p>  c  </p>",
    );
    same_tree("<table>\n  <tr>\n    <td>a</td>   \n  </tr>  x  <pre>  \n p  </pre></table>");
    same_tree("<p>  a  <listing>\n\n  b</listing>  <select>\n  <option>a\n   </select>");
    same_tree("<b>  x  <a>  <pre>\n\n y </b>  z </a>");
    // `</html>`, `</body>` and `</br>` take the parser out of the head: a `meta` after them
    // is in the body, between two texts (found by the tag-soup test).
    same_tree("</html ><meta >\n<meta ></a  class=&amp;class=\"a>b\">");
    same_tree("<meta><BR/ x=y> a\n<link rel=x> b");
    same_tree("<head></body><meta name=x>\t<meta name=y>\tz");
    // A `meta` before the head opens it, and the `<head>` tag after it is ignored.
    same_tree("<html><meta name=x><head class=a hidden><title>t</title><meta name=y>");
}

fn tag() -> impl Strategy<Value = String> {
    let names = prop::sample::select(vec![
        "div", "p", "a", "b", "i", "img", "br", "span", "title", "textarea", "table", "tr", "td",
        "input", "font", "ul", "li", "section", "html", "body", "meta", "link", "head", "pre",
        "listing", "PRE",
    ]);
    let attr_names = prop::sample::select(vec![
        "class",
        "id",
        "href",
        "data-x",
        "onclick",
        "alt",
        "type",
        "style",
        "hidden",
        "role",
        "=x",
        "a\"b",
        "TITLE",
        "Class",
        "rel",
        "name",
        "property",
        "content",
        "http-equiv",
        "lang",
    ]);
    let values = prop::sample::select(vec![
        "",
        "=v",
        "=/",
        "=\"a>b\"",
        "='x'",
        "=\"a<b\"",
        "=\"\"",
        "=&amp;",
        "==x",
        " = y",
        "=\"open",
        "=a/",
        "=",
        "=\"q\"z",
        "=canonical",
        "=\"og:title\"",
        "=viewport",
        "=Description",
        "=\"og&#58;x\"",
    ]);
    let separators = prop::sample::select(vec![" ", "", "\n", " / ", "/"]);
    let ends = prop::sample::select(vec![">", "/>", " />", " >", ""]);
    let attr = (separators, attr_names, values).prop_map(|(s, n, v)| format!("{s}{n}{v}"));
    (
        any::<bool>(),
        names,
        prop::collection::vec(attr, 0..4),
        ends,
    )
        .prop_map(|(closing, name, attrs, end)| {
            let slash = if closing { "/" } else { "" };
            format!("<{slash}{name} {}{end}", attrs.concat())
        })
}

fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => tag(),
        1 => prop::sample::select(vec![
            "text", "a < b", "<", "x>y", "&lt;", "<!-- c -->", "<!x <a data-y=1>", "<?p <b c=d>",
            "\"", "'", "</", "<3", "</<", "<!", "<?", "</ ", "</>", "<!--", "-->", "--!>", "<!-->",
            "<script>s<p a=b>", "</script>", "<style>", "</style>", "<svg>", "</svg>",
            "<noscript>", "</noscript>", "<title>", "</title>", "<plaintext>", "\n", "  ",
            "\n\t  ", "\r\n", " \x0c", "\x0b\x0b", "\t", "&#13;&#32; ", " \u{a0} ", "\n  x  \n",
        ])
        .prop_map(str::to_string),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn the_parser_builds_the_same_tree_on_tag_soup(pieces in prop::collection::vec(piece(), 1..24)) {
        same_tree(&pieces.concat());
    }
}
