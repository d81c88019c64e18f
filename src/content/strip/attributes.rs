//! Attributes dropped before parsing: the extraction reads a few attributes of each element
//! (see `extract/tree.rs`), and the rest (`data-*`, `srcset`, `onclick`, `alt`, `width`, ...)
//! are over a quarter of a page's markup once its scripts and styles are gone (28% over the
//! WCXB dev pages). The HTML tokenizer reads attribute values a character at a time, so
//! they cost parse time for nothing.
//!
//! This is a second pass, over the markup as the parser will read it (after the first pass
//! has cut out scripts, styles and comments, which can join what was on either side). It
//! follows the HTML standard's tokenizer where that decides what is a tag: comments, bogus
//! comments (`<!x>`, `<?x>`, `</ x>`), and the bodies the tokenizer reads as text (`title`,
//! `textarea`, ...), where nothing changes. A start tag's attributes are read by the
//! tokenizer's states (before and after a name, before a value, quoted and unquoted values,
//! the self-closing slash), and each kept one is copied byte for byte, so its name and value
//! (character references included) come out of the parser unchanged and in the same order
//! (of two with one name, the first still wins). A tag is left as it is when anything in it
//! is unusual: a `<` inside it, a quote or `=` where a name starts, a NUL in a name; so are
//! the tags whose attributes the tree builder compares (the formatting elements: three of
//! one name with equal attributes make it forget the earliest). After a `script`, `svg`,
//! `math` or `plaintext` start tag (the first pass leaves none but unusual ones) nothing
//! more is changed: their bodies have tokenizer rules of their own.

/// Attributes kept: what the extraction reads, and `type` (the tree builder keeps an
/// `<input type=hidden>` inside a table) and `font`'s `color`, `face` and `size` (which
/// end foreign content).
const KEPT: &[&[u8]] = &[
    b"aria-hidden",
    b"class",
    b"color",
    b"content",
    b"face",
    b"hidden",
    b"href",
    b"http-equiv",
    b"id",
    b"itemprop",
    b"itemtype",
    b"lang",
    b"name",
    b"property",
    b"rel",
    b"role",
    b"size",
    b"style",
    b"type",
    b"xml:lang",
];

/// The formatting elements (the HTML standard's list, `a` aside): the tree builder compares
/// their attributes when it reopens them, so theirs stay. (`a` is never listed twice: a new
/// `a` closes the last one first.)
const FORMATTING: &[&[u8]] = &[
    b"b", b"big", b"code", b"em", b"font", b"i", b"nobr", b"s", b"small", b"strike", b"strong",
    b"tt", b"u",
];

/// Elements whose body the tokenizer reads as text up to their end tag: a tag inside is
/// text, and stays as it is.
const TEXT_BODIES: &[&[u8]] = &[
    b"title",
    b"textarea",
    b"xmp",
    b"noembed",
    b"noframes",
    b"noscript",
    b"style",
    b"iframe",
];

/// Elements after whose start tag nothing more is changed (see the module doc).
const LAST: &[&[u8]] = &[b"script", b"plaintext", b"svg", b"math"];

/// `html` with the attributes nobody reads dropped from its start tags (see the module
/// doc).
pub(super) fn drop_attributes(markup: String) -> String {
    let html = markup.as_str();
    let bytes = html.as_bytes();
    let mut out = String::new();
    let mut lean = Lean::default();
    let mut copied = 0;
    let mut at = 0;
    while let Some(offset) = memchr::memchr(b'<', &bytes[at..]) {
        let start = at + offset;
        at = match &bytes[start + 1..] {
            [b'!', b'-', b'-', ..] => comment_end(bytes, start + 4),
            [b'!' | b'?', ..] => past_next_gt(bytes, start),
            [b'/', b'>', ..] => start + 3,
            [b'/', next, ..] if !next.is_ascii_alphabetic() => past_next_gt(bytes, start),
            [b'/', ..] => {
                read_tag(&bytes[start..], &mut lean);
                let Some(end) = lean.end else { break };
                start + end + 1
            }
            [first, ..] if first.is_ascii_alphabetic() => {
                read_tag(&bytes[start..], &mut lean);
                let Some(end) = lean.end else { break };
                let end = start + end + 1;
                if lean.rewrite {
                    if out.capacity() == 0 {
                        out.reserve(html.len());
                    }
                    out.push_str(&html[copied..start]);
                    push_tag(&mut out, &html[start..end], &lean);
                    copied = end;
                }
                let name = &bytes[start + 1..start + lean.name_end];
                if super::named_in(LAST, name) {
                    break;
                }
                if super::named_in(TEXT_BODIES, name) {
                    super::find_close(bytes, end, name).0
                } else {
                    end
                }
            }
            _ => start + 1,
        };
    }
    if copied == 0 {
        // Nothing rewritten: the markup as it came, not a copy.
        return markup;
    }
    out.push_str(&html[copied..]);
    out
}

/// Writes the start tag `tag` without the attributes `lean` drops.
fn push_tag(out: &mut String, tag: &str, lean: &Lean) {
    out.push_str(&tag[..lean.name_end]);
    for &(from, to) in &lean.kept {
        out.push(' ');
        out.push_str(&tag[from..to]);
    }
    if lean.self_closing {
        out.push_str(" /");
    }
    out.push('>');
}

/// Where a comment whose text starts at `from` ends, as the tokenizer reads it: right away
/// at `>` or `->`, else after the first `-->` or `--!>`, else at the end of the input.
fn comment_end(bytes: &[u8], from: usize) -> usize {
    let rest = &bytes[from.min(bytes.len())..];
    if rest.starts_with(b">") {
        return from + 1;
    }
    if rest.starts_with(b"->") {
        return from + 2;
    }
    let mut at = 0;
    while let Some(offset) = memchr::memmem::find(&rest[at..], b"--") {
        let dashes = at + offset;
        let after = &rest[dashes + 2..];
        if after.starts_with(b">") {
            return from + dashes + 3;
        }
        if after.starts_with(b"!>") {
            return from + dashes + 4;
        }
        at = dashes + 1;
    }
    bytes.len()
}

/// Just past the first `>` after `start` (where a bogus comment ends), or the end.
fn past_next_gt(bytes: &[u8], start: usize) -> usize {
    memchr::memchr(b'>', &bytes[start..]).map_or(bytes.len(), |e| start + e + 1)
}

/// A tag as the tokenizer reads it: where it ends, and for a start tag, whether some
/// attributes can be dropped: the name, then the kept attributes, each a range of the tag's
/// bytes, and whether it closes itself (`<br/>`).
#[derive(Debug, Default)]
struct Lean {
    /// The tag's `>`, if it has one (at the end of the input the tokenizer drops the tag).
    end: Option<usize>,
    /// Some attribute is dropped, and the rewritten tag reads as this one.
    rewrite: bool,
    name_end: usize,
    kept: Vec<(usize, usize)>,
    self_closing: bool,
}

/// The tokenizer's whitespace (a carriage return is read as a line feed).
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}

/// Reads the tag at the start of `input` (its `<`, then `/` for an end tag, then an ASCII
/// letter) by the tokenizer's states into `lean`: where it ends, and whether it is a start
/// tag that can be rewritten without the attributes nobody reads (see the module doc).
fn read_tag(input: &[u8], lean: &mut Lean) {
    lean.kept.clear();
    lean.rewrite = false;
    let closing = input.get(1) == Some(&b'/');
    let mut dropped = false;
    let kept = &mut lean.kept;
    let tag = walk_tag(input, |start, name_end, end| {
        if super::named_in(KEPT, &input[start..name_end]) {
            kept.push((start, end));
        } else {
            dropped = true;
        }
    });
    lean.end = tag.end;
    lean.name_end = tag.name_end;
    lean.self_closing = tag.self_closing;
    let Some(end) = tag.end else { return };
    lean.rewrite =
        dropped && !tag.odd && !closing && memchr::memchr(b'<', &input[1..end]).is_none();
}

/// A tag as [`walk_tag`] read it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Tag {
    /// The tag's `>`, if it has one (at the end of the input the tokenizer drops the tag).
    pub(super) end: Option<usize>,
    /// Where the name ends.
    pub(super) name_end: usize,
    /// A `/` right before the `>` (`<br/>`).
    pub(super) self_closing: bool,
    /// Something read the standard's way but not worth rewriting (see [`attribute`]), or a
    /// formatting element, or a NUL in the name.
    odd: bool,
}

/// Reads the tag at the start of `input` (its `<`, then `/` for an end tag, then an ASCII
/// letter) by the tokenizer's states, calling `each` with every attribute (where it starts,
/// where its name ends, where it ends): a `>` inside a quoted value does not end the tag.
pub(super) fn walk_tag(input: &[u8], mut each: impl FnMut(usize, usize, usize)) -> Tag {
    let closing = input.get(1) == Some(&b'/');
    let name_start = if closing { 2 } else { 1 };
    let name_end = input[name_start.min(input.len())..]
        .iter()
        .position(|&b| is_space(b) || b == b'/' || b == b'>')
        .map_or(input.len(), |n| n + name_start);
    let name = &input[name_start.min(name_end)..name_end];
    let mut tag = Tag {
        end: None,
        name_end,
        self_closing: false,
        odd: name.contains(&0) || super::named_in(FORMATTING, name),
    };
    let mut i = name_end;
    loop {
        // Before an attribute's name.
        while i < input.len() && is_space(input[i]) {
            i += 1;
        }
        match input.get(i) {
            None => return tag,
            Some(b'>') => break,
            Some(b'/') => {
                // The self-closing slash counts only right before the `>`.
                i += 1;
                tag.self_closing = input.get(i) == Some(&b'>');
                continue;
            }
            Some(_) => {}
        }
        let start = i;
        let Some((name_end, end)) = attribute(input, i, &mut tag.odd) else {
            return tag;
        };
        each(start, name_end, end);
        i = end;
    }
    tag.end = Some(i);
    tag
}

/// The attribute whose name starts at `start`: where its name ends, and where it ends (after
/// its value, if it has one); `None` at the end of the input. `odd` is set for what is
/// read the standard's way but not worth rewriting: a name that starts with `=` or holds a
/// quote, `<` or NUL.
fn attribute(input: &[u8], start: usize, odd: &mut bool) -> Option<(usize, usize)> {
    let mut i = start;
    // Its name: up to a space, `/`, `>` or `=` (a first `=` is part of it).
    if input[i] == b'=' {
        *odd = true;
        i += 1;
    }
    while i < input.len() && !is_space(input[i]) && !matches!(input[i], b'/' | b'>' | b'=') {
        *odd |= matches!(input[i], b'"' | b'\'' | b'<' | 0);
        i += 1;
    }
    let name_end = i;
    // After the name: spaces, then `=` and a value, or the next attribute.
    while i < input.len() && is_space(input[i]) {
        i += 1;
    }
    if input.get(i) != Some(&b'=') {
        return Some((name_end, name_end));
    }
    i += 1;
    while i < input.len() && is_space(input[i]) {
        i += 1;
    }
    match *input.get(i)? {
        // `name=` right before the `>`: an empty value.
        b'>' => Some((name_end, i)),
        quote @ (b'"' | b'\'') => {
            let close = memchr::memchr(quote, &input[i + 1..])?;
            Some((name_end, i + 1 + close + 1))
        }
        _ => {
            while i < input.len() && !is_space(input[i]) && input[i] != b'>' {
                i += 1;
            }
            Some((name_end, i))
        }
    }
}

#[cfg(test)]
mod tests {
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

    /// The tree the parser builds, as lines: element names with the attributes kept (in
    /// order of name), and texts.
    fn tree(html: &str) -> Vec<String> {
        use ego_tree::iter::Edge;
        use scraper::Node;
        let dom = scraper::Html::parse_document(html);
        let mut lines = Vec::new();
        for edge in dom.tree.root().traverse() {
            match edge {
                Edge::Open(node) => match node.value() {
                    Node::Element(e) => {
                        let mut attrs: Vec<String> = e
                            .attrs()
                            .filter(|(name, _)| super::super::named_in(KEPT, name.as_bytes()))
                            .map(|(name, value)| format!("{name}={value:?}"))
                            .collect();
                        attrs.sort();
                        lines.push(format!("<{} {}>", e.name(), attrs.join(" ")));
                    }
                    Node::Text(text) => lines.push(format!("{:?}", &text[..])),
                    _ => {}
                },
                Edge::Close(node) => {
                    if let Node::Element(e) = node.value() {
                        lines.push(format!("</{}>", e.name()));
                    }
                }
            }
        }
        lines
    }

    fn same_tree(html: &str) {
        let full = super::super::strip_elements(html).html;
        let lean = super::super::strip(html).html;
        assert_eq!(tree(&full), tree(&lean), "{html:?}\n -> {lean:?}");
    }

    /// Every attribute the extraction reads (`.attr("x")`, and the names `Attrs::of` matches)
    /// is kept: one read without a place in [`KEPT`] would find nothing.
    #[test]
    fn every_attribute_the_extraction_reads_is_kept() {
        let source = include_str!("../extract/tree.rs");
        let mut read: Vec<&str> = source
            .split(".attr(\"")
            .skip(1)
            .filter_map(|rest| rest.split('"').next())
            .collect();
        read.extend(source.lines().filter_map(|line| {
            let line = line.trim_start().strip_prefix('"')?;
            let (name, rest) = line.split_once('"')?;
            rest.trim_start().starts_with("=> attrs.").then_some(name)
        }));
        assert!(read.len() >= 15, "{read:?}");
        for name in read {
            assert!(
                super::super::named_in(KEPT, name.as_bytes()),
                "{name} is read but dropped"
            );
        }
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
        same_tree(
            "<!x <a data-y=1 href=h>><?p <p data-q=2 id=r>?><img alt='a<b' data-s=1 class=c>",
        );
        same_tree(r#"</<body alt="q" role="a>b" data-x=1>"#);
        // Equal formatting elements, made equal by what was dropped: three are the limit.
        same_tree("<b data-a=1><b data-a=2><b data-a=3><b data-a=4><p>x</b></b></b></b>y");
        same_tree("<table><input type=hidden data-x=1><tr><td data-y=2 class=c>t</table>");
    }

    fn tag() -> impl Strategy<Value = String> {
        let names = prop::sample::select(vec![
            "div", "p", "a", "b", "i", "img", "br", "span", "title", "textarea", "table", "tr",
            "td", "input", "font", "ul", "li", "section", "html", "body",
        ]);
        let attr_names = prop::sample::select(vec![
            "class", "id", "href", "data-x", "onclick", "alt", "type", "style", "hidden", "role",
            "=x", "a\"b", "TITLE", "Class", "rel",
        ]);
        let values = prop::sample::select(vec![
            "", "=v", "=/", "=\"a>b\"", "='x'", "=\"a<b\"", "=\"\"", "=&amp;", "==x", " = y",
            "=\"open", "=a/", "=", "=\"q\"z",
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
                "<noscript>", "</noscript>", "<title>", "</title>", "<plaintext>",
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
}
