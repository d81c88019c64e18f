//! A pass over the raw markup before the tree is built: it removes what can never be main
//! content and costs parse time (script, style, template, svg, math, iframe and object
//! bodies, and comments), keeping JSON-LD script bodies aside for structured data. The
//! `noscript` tags go too, but their bodies stay and are parsed as markup, as a browser
//! without script would show them, unless the body is short: then it is a notice such as
//! "enable JavaScript to run this app" and goes with its tags.
//!
//! It works on the text in one forward scan (time linear in the input) and never needs the
//! tags to be well formed: a raw-text element (script, style, iframe) or template that is
//! never closed is cut to the end of the input, as the HTML parser would have read it as
//! raw text or inert content anyway. SVG and MathML are parsed as markup, so an unclosed one
//! ends where the parser would leave it: at an HTML tag such as `<div>` or `</a>`. A tag
//! ends where the parser's tokenizer ends it: a `<` or `>` inside a quoted attribute value
//! belongs to the value, so `<img alt="<script>">` starts no script. So do comments (`<!-->`
//! and `--!>` end one), bogus comments (`<!x ...>`, inside which nothing starts), and script
//! bodies (a `</script>` inside `<!-- <script> ... -->` does not end one). A `<` that is text
//! right before a removal is written `&lt;`, so that it cannot start a tag with what follows.
//! The bodies the tokenizer reads as text (`title`, `textarea`, ...) are skipped whole, so
//! nothing inside them is dropped, and so is all that follows `plaintext`. A property test
//! compares the tree built from what the pass leaves with the page's own.
//!
//! In the same scan, every tag that stays is read once more by its attributes, and those the
//! extraction never reads are dropped (see `attributes.rs`); and each run of whitespace in
//! the texts that stay is written as one byte, up to the first preformatted element (see
//! `spaces.rs`).

mod attributes;
mod spaces;

/// Elements whose whole body is dropped before parsing.
const DROPPED: &[&[u8]] = &[
    b"script",
    b"style",
    b"template",
    b"svg",
    b"math",
    b"iframe",
    b"object",
];

/// Dropped elements whose bodies are foreign content (SVG, MathML): the parser reads them as
/// markup, not raw text, and leaves them early when HTML shows up (see
/// [`find_foreign_close`]).
const FOREIGN: &[&[u8]] = &[b"svg", b"math"];

/// HTML start tags that end foreign content wherever they appear in it (the HTML standard's
/// list for "in foreign content"; `font` is left out, as it breaks out only with some
/// attributes).
const BREAKOUT_START: &[&[u8]] = &[
    b"b",
    b"big",
    b"blockquote",
    b"body",
    b"br",
    b"center",
    b"code",
    b"dd",
    b"div",
    b"dl",
    b"dt",
    b"em",
    b"embed",
    b"h1",
    b"h2",
    b"h3",
    b"h4",
    b"h5",
    b"h6",
    b"head",
    b"hr",
    b"i",
    b"img",
    b"li",
    b"listing",
    b"menu",
    b"meta",
    b"nobr",
    b"ol",
    b"p",
    b"pre",
    b"ruby",
    b"s",
    b"small",
    b"span",
    b"strong",
    b"strike",
    b"sub",
    b"sup",
    b"table",
    b"tt",
    b"u",
    b"ul",
    b"var",
];

/// End tags of HTML elements that have no SVG or MathML namesake: inside foreign content,
/// such an end tag closes an element opened outside it, and the foreign content with it.
const BREAKOUT_END: &[&[u8]] = &[
    b"article", b"aside", b"body", b"br", b"button", b"dd", b"details", b"div", b"dl", b"dt",
    b"em", b"figure", b"footer", b"form", b"h1", b"h2", b"h3", b"h4", b"h5", b"h6", b"header",
    b"html", b"label", b"li", b"main", b"nav", b"ol", b"p", b"picture", b"section", b"span",
    b"strong", b"summary", b"table", b"td", b"th", b"tr", b"ul",
];

/// Foreign elements in which HTML is allowed (the integration points).
const INTEGRATION_POINTS: &[&[u8]] = &[b"foreignobject", b"desc", b"title", b"annotation-xml"];

/// Elements whose tags are dropped but whose body is parsed as ordinary markup: a crawler
/// runs no script, so what a page shows without script is what it has to offer (some
/// forum software serves its posts this way). Bodies shorter than
/// [`NOSCRIPT_MESSAGE_BYTES`] are dropped with their tags.
const UNWRAPPED: &[&[u8]] = &[b"noscript"];

/// Below this many bytes a `noscript` body is a notice or a tracking pixel, not content.
const NOSCRIPT_MESSAGE_BYTES: usize = 400;

/// Elements nested deeper than this have their tags dropped before parsing (their text is
/// kept), as browsers cap the depth of the tree they build: the HTML tree builder scans its
/// stack of open elements for many tags, so unbounded depth would cost quadratic time.
pub const MAX_DEPTH: usize = 512;

/// The lower-case ASCII tag name at the start of `rest` (the bytes after `<` or `</`).
fn tag_name(rest: &[u8]) -> &[u8] {
    let end = rest
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || *b == b'-'))
        .unwrap_or(rest.len());
    if rest.first().is_some_and(u8::is_ascii_alphabetic) {
        &rest[..end]
    } else {
        &[]
    }
}

/// True for elements that stay open until their end tag: not void elements, and not those
/// the parser closes by itself (`p`, `li`, table parts, ...), whose counting would overstate
/// the depth of ordinary pages.
fn nests(name: &[u8]) -> bool {
    const NOT_NESTING: &[&[u8]] = &[
        b"p",
        b"li",
        b"dt",
        b"dd",
        b"tr",
        b"td",
        b"th",
        b"tbody",
        b"thead",
        b"tfoot",
        b"option",
        b"optgroup",
        b"br",
        b"img",
        b"input",
        b"meta",
        b"link",
        b"hr",
        b"wbr",
        b"source",
        b"area",
        b"base",
        b"col",
        b"colgroup",
        b"embed",
        b"param",
        b"track",
        b"html",
        b"head",
        b"body",
        b"rb",
        b"rt",
        b"rp",
        b"caption",
    ];
    !named_in(NOT_NESTING, name)
}

/// The markup with dropped elements removed, and the JSON-LD blocks found on the way.
#[derive(Debug, Default)]
pub struct Stripped {
    /// Markup left for the parser.
    pub html: String,
    /// Bodies of `<script type="application/ld+json">` elements, in document order.
    pub json_ld: Vec<String>,
}

/// Removes dropped elements, comments and the attributes nobody reads from `html`.
pub fn strip(html: &str) -> Stripped {
    scan(
        html,
        attributes::Attributes::new(true),
        spaces::Spaces::new(true),
    )
}

/// Removes dropped elements and comments from `html`, and leaves the attributes.
#[cfg(test)]
fn strip_elements(html: &str) -> Stripped {
    scan(
        html,
        attributes::Attributes::new(false),
        spaces::Spaces::new(false),
    )
}

/// Elements whose body the tokenizer reads as text up to their end tag: nothing inside
/// starts a tag, so nothing inside is dropped. (`style`, `iframe` and `noscript` are
/// handled before, and `plaintext` has no end.)
const TEXT_BODIES: &[&[u8]] = &[b"title", b"textarea", b"xmp", b"noembed", b"noframes"];

/// The pass over `html`: removes dropped elements and comments, has `attributes` read
/// and edit every tag that stays, and `spaces` collapse the whitespace of the texts that
/// stay (see the module doc).
fn scan(
    html: &str,
    mut attributes: attributes::Attributes,
    mut spaces: spaces::Spaces,
) -> Stripped {
    let bytes = html.as_bytes();
    let mut out = Stripped {
        html: String::with_capacity(html.len() / 2),
        json_ld: Vec::new(),
    };
    let mut copied = 0; // bytes of `html` already handled
    let mut at = 0;
    let mut depth = Depth::default();
    while let Some(offset) = memchr(b'<', &bytes[at..]) {
        let start = at + offset;
        attributes.text(&bytes[at..start]);
        spaces.text(&mut out.html, html, &mut copied, at, start);
        let rest = &bytes[start + 1..];
        if rest.starts_with(b"!--") {
            keep_before_removal(&mut out.html, &html[copied..start]);
            // Where the tokenizer ends it: `<!-->` and `<!--->` are whole comments, and
            // `--!>` ends one as `-->` does.
            let end = attributes::comment_end(bytes, start + 4);
            copied = end;
            at = end;
            continue;
        }
        // A bogus comment (`<!x`, `<?x`, `</ x`) runs to the first `>`: nothing inside it
        // starts a tag, so nothing inside it is dropped either.
        let bogus = match rest {
            [b'!' | b'?', ..] => true,
            [b'/', next, ..] => !next.is_ascii_alphabetic(),
            _ => false,
        };
        if bogus {
            at = attributes::past_next_gt(bytes, start);
            continue;
        }
        let closing = rest.first() == Some(&b'/');
        let name_at = if closing { &rest[1..] } else { rest };
        if let Some(name) = UNWRAPPED.iter().find(|name| tag_named(name_at, name)) {
            keep_before_removal(&mut out.html, &html[copied..start]);
            let mut end = tag_end(bytes, start).0;
            if !closing {
                // A short body is a message to browsers without script ("enable
                // JavaScript"), not content: the element goes whole.
                // The close is looked for in a window just past the limit, so that many
                // unclosed `noscript` tags cost linear time.
                let window = bytes.len().min(end + NOSCRIPT_MESSAGE_BYTES + 64);
                let (body_end, close_end) = find_close(&bytes[..window], end, name);
                if body_end - end < NOSCRIPT_MESSAGE_BYTES {
                    end = close_end;
                }
            }
            copied = end;
            at = end;
            continue;
        }
        let Some(name) = DROPPED.iter().find(|name| tag_named(rest, name)) else {
            let name = tag_name(name_at);
            if name.is_empty() {
                attributes.lt();
                at = start + 1;
                continue;
            }
            // The whole tag is read: a `<` in a quoted value starts nothing.
            let (gt, self_closing) = attributes.read(&bytes[start..]);
            let tag_end = gt.map_or(bytes.len(), |gt| start + gt + 1);
            if nests(name) && depth.drops(closing, self_closing) {
                keep_before_removal(&mut out.html, &html[copied..start]);
                copied = tag_end;
                at = tag_end;
                continue;
            }
            match attributes.edit(&bytes[start..tag_end]) {
                attributes::Edit::Keep => {}
                attributes::Edit::Drop => {
                    keep_before_removal(&mut out.html, &html[copied..start]);
                    copied = tag_end;
                }
                attributes::Edit::Rewrite => {
                    out.html.push_str(&html[copied..start]);
                    attributes.push_tag(&mut out.html, &html[start..tag_end]);
                    copied = tag_end;
                }
            }
            at = if closing {
                tag_end
            } else {
                spaces.start_tag(name);
                text_body_end(bytes, start, name, tag_end)
            };
            continue;
        };
        keep_before_removal(&mut out.html, &html[copied..start]);
        let (open_end, self_closing) = tag_end(bytes, start);
        let self_closing = self_closing && *name == b"svg";
        let (body_end, close_end) = if self_closing {
            (open_end, open_end)
        } else if FOREIGN.contains(name) {
            find_foreign_close(bytes, open_end, name)
        } else {
            if *name == b"script" {
                find_script_close(bytes, open_end)
            } else {
                find_close(bytes, open_end, name)
            }
        };
        if *name == b"script" && is_json_ld(&bytes[start..open_end.min(bytes.len())]) {
            out.json_ld
                .push(html[open_end.min(body_end)..body_end].to_string());
        }
        copied = close_end;
        at = close_end;
    }
    out.html.push_str(&html[copied.min(html.len())..]);
    out
}

/// Where the scan goes on after the start tag at `start` named `name` (as [`tag_name`]
/// reads it), which ends at `tag_end`: past its element's body when the tokenizer reads
/// that as text ([`TEXT_BODIES`]; all the rest of the input after `plaintext`), else right
/// after it.
fn text_body_end(bytes: &[u8], start: usize, name: &[u8], tag_end: usize) -> usize {
    let text_body = named_in(TEXT_BODIES, name);
    if !text_body && !name.eq_ignore_ascii_case(b"plaintext") {
        return tag_end;
    }
    // The tokenizer's name runs on to a space, `/` or `>`, where `tag_name` stops at any
    // other byte too: `<title-x>` is no title.
    let name_end = start + 1 + name.len();
    if !bytes.get(name_end).is_none_or(|&b| is_tag_name_end(b)) {
        return tag_end;
    }
    if text_body {
        find_close(bytes, tag_end, name).0
    } else {
        bytes.len()
    }
}

/// Whether `b` ends a tag's name for the tokenizer: a space, `/` or `>`.
fn is_tag_name_end(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/' | b'>')
}

/// The depth of the open elements that nest (see [`nests`]), and the tags dropped beyond
/// [`MAX_DEPTH`].
#[derive(Debug, Default)]
struct Depth {
    open: usize,
    /// Open tags dropped beyond [`MAX_DEPTH`].
    flattened: usize,
}

impl Depth {
    /// Counts a tag of an element that nests, and says whether it is dropped (its text
    /// stays), as browsers drop tags nested beyond [`MAX_DEPTH`].
    fn drops(&mut self, closing: bool, self_closing: bool) -> bool {
        if closing {
            if self.flattened > 0 {
                self.flattened -= 1;
                true
            } else {
                self.open = self.open.saturating_sub(1);
                false
            }
        } else if self.open >= MAX_DEPTH {
            self.flattened += 1;
            true
        } else {
            self.open += usize::from(!self_closing);
            false
        }
    }
}

/// Appends `kept`, the markup before something the pass removes. A `<` right before the
/// removal is text (it was followed by the removed `<`), but it would start a tag with what
/// follows the removal (`<<!-- c -->a b` is the text `<a b`, and `<a b` a tag): it is
/// written as `&lt;`, which the parser reads as the same text.
fn keep_before_removal(out: &mut String, kept: &str) {
    out.push_str(kept);
    if out.ends_with('<') {
        out.pop();
        out.push_str("&lt;");
    }
}

/// Just past the `>` of the tag at `start` (`<` or `</`, then a letter) as the tokenizer
/// reads it, where a `>` or `<` inside a quoted value is part of the value (or the end of
/// the input, where the tag never ends); and whether it closes itself (`<svg/>`). End tags
/// are read by the same states: `</script a=">">` ends at its last `>`.
fn tag_end(bytes: &[u8], start: usize) -> (usize, bool) {
    let tag = attributes::walk_tag(&bytes[start..], |_, _, _, _| {});
    (
        tag.end.map_or(bytes.len(), |end| start + end + 1),
        tag.self_closing,
    )
}

/// True when the tag name `name` is one of `list` (ASCII case ignored).
fn named_in(list: &[&[u8]], name: &[u8]) -> bool {
    list.iter().any(|n| n.eq_ignore_ascii_case(name))
}

/// True when `rest` (the bytes after `<`) opens the element `name`.
fn tag_named(rest: &[u8], name: &[u8]) -> bool {
    rest.len() >= name.len()
        && rest[..name.len()].eq_ignore_ascii_case(name)
        && rest.get(name.len()).is_none_or(|&b| is_tag_name_end(b))
}

/// Where the body of `name` opened at `from` ends, and where its end tag ends.
fn find_close(bytes: &[u8], from: usize, name: &[u8]) -> (usize, usize) {
    let mut at = from;
    while at < bytes.len() {
        let Some(offset) = find(&bytes[at..], b"</") else {
            break;
        };
        let start = at + offset;
        let rest = &bytes[start + 2..];
        if tag_named(rest, name) {
            return (start, tag_end(bytes, start).0);
        }
        at = start + 2;
    }
    (bytes.len(), bytes.len())
}

/// Where the body of a `script` opened at `from` ends, and where its end tag ends, by the
/// tokenizer's script states: after `<!--` (escaped) a `<script` tag starts a part (double
/// escaped) where `</script>` only ends that part, and `-->` ends both. So the
/// `document.write("<script src=x></script>")` of an old page inside `<!-- ... //-->` does
/// not end its script early, which would leave the rest of the code as text.
fn find_script_close(bytes: &[u8], from: usize) -> (usize, usize) {
    #[derive(PartialEq)]
    enum State {
        Data,
        Escaped,
        DoubleEscaped,
    }
    let mut state = State::Data;
    let mut at = from;
    loop {
        // Outside `<!--` only a `<` can change anything.
        let rest = &bytes[at.min(bytes.len())..];
        let hit = if state == State::Data {
            memchr(b'<', rest)
        } else {
            memchr::memchr2(b'<', b'-', rest)
        };
        let Some(offset) = hit else { break };
        let i = at + offset;
        let rest = &bytes[i..];
        at = i + 1;
        if rest.starts_with(b"-->") {
            if state != State::Data {
                state = State::Data;
                at = i + 3;
            }
        } else if rest.starts_with(b"</") && tag_named(&rest[2..], b"script") {
            if state == State::DoubleEscaped {
                state = State::Escaped;
                at = i + 8;
            } else {
                return (i, tag_end(bytes, i).0);
            }
        } else if state == State::Data && rest.starts_with(b"<!--") {
            // The dashes of `<!--` can end it at once: `<!-->`.
            state = State::Escaped;
            at = i + 2;
        } else if state == State::Escaped
            && rest.starts_with(b"<")
            && tag_named(&rest[1..], b"script")
        {
            state = State::DoubleEscaped;
            at = i + 7;
        }
    }
    (bytes.len(), bytes.len())
}

/// Where the body of the foreign element `name` (`svg` or `math`) opened at `from` ends, and
/// where its end tag ends. As the HTML parser does, the body also ends, with nothing
/// consumed, at an HTML start tag from [`BREAKOUT_START`] or an end tag from
/// [`BREAKOUT_END`] (or an `</a>` with no `<a>` opened inside), unless they sit in an
/// integration point such as `foreignObject`: so an icon whose `</svg>` is missing ends
/// where the page's markup resumes instead of swallowing the rest of the page.
fn find_foreign_close(bytes: &[u8], from: usize, name: &[u8]) -> (usize, usize) {
    let mut at = from;
    let mut integration = 0usize; // open integration points
    let mut anchors = 0usize; // SVG `<a>` elements open inside
    while let Some(offset) = memchr(b'<', &bytes[at..]) {
        let start = at + offset;
        let rest = &bytes[start + 1..];
        let closing = rest.first() == Some(&b'/');
        let tag = tag_name(if closing { &rest[1..] } else { rest });
        at = start + 1;
        if tag.is_empty() {
            continue;
        }
        if closing && tag.eq_ignore_ascii_case(name) {
            return (start, tag_end(bytes, start).0);
        }
        if named_in(INTEGRATION_POINTS, tag) {
            if closing {
                integration = integration.saturating_sub(1);
            } else {
                integration += 1;
            }
            continue;
        }
        if integration > 0 {
            continue;
        }
        let breaks_out = if tag.eq_ignore_ascii_case(b"a") {
            if closing && anchors == 0 {
                true
            } else {
                if closing {
                    anchors -= 1;
                } else {
                    anchors += 1;
                }
                false
            }
        } else if closing {
            named_in(BREAKOUT_END, tag)
        } else {
            named_in(BREAKOUT_START, tag)
        };
        if breaks_out {
            return (start, start);
        }
    }
    (bytes.len(), bytes.len())
}

fn is_json_ld(open_tag: &[u8]) -> bool {
    find_ignore_case(open_tag, b"application/ld+json")
}

fn find_ignore_case(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle))
}

fn memchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    memchr::memchr(needle, haystack)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack, needle)
}

#[cfg(test)]
mod elements_tests;

#[cfg(test)]
mod tree_view;

#[cfg(test)]
mod tests;
