//! Attributes dropped before parsing: the extraction reads a few attributes of each element
//! (see `extract/tree.rs`), and the rest (`data-*`, `srcset`, `onclick`, `alt`, `width`, ...)
//! are over a quarter of a page's markup once its scripts and styles are gone (28% over the
//! WCXB dev pages). The HTML tokenizer reads attribute values a character at a time, so
//! they cost parse time for nothing.
//!
//! This runs inside the pass that cuts out scripts, styles and comments (`mod.rs`), on the
//! tags that pass keeps: it sees the markup as the parser will read it, where a removal can
//! join the texts on either side. That pass follows the HTML standard's tokenizer where it
//! decides what is a tag: comments, bogus comments (`<!x>`, `<?x>`, `</ x>`), and the
//! bodies the tokenizer reads as text (`title`, `textarea`, ...), where nothing changes.
//! A start tag's attributes are read by the tokenizer's states (before and after a name,
//! before a value, quoted and unquoted values, the self-closing slash), and each kept one is
//! copied byte for byte, so its name and value (character references included) come out of
//! the parser unchanged and in the same order (of two with one name, the first still wins).
//! A tag is left as it is when anything in it is unusual: a `<` inside it, a quote or `=`
//! where a name starts, a NUL in a name; so are the tags whose attributes the tree builder
//! compares (the formatting elements: three of one name with equal attributes make it
//! forget the earliest). After a `script`, `svg`, `math` or `plaintext` start tag (the
//! removals leave none but unusual ones) nothing more is changed: their bodies have
//! tokenizer rules of their own.
//!
//! Most attributes are kept on every element ([`KEPT`]); a few only on the element the
//! extraction reads them of ([`KEPT_ON`]: `lang` of `html`, `content` of `meta`, ...). The
//! head's `link` and `meta` tags that the extraction never reads (style sheets, preloads,
//! icons, the viewport: 5% of the tags on the WCXB dev pages) go whole, once the head
//! element is open and as long as the parser is still in it. There the text on either side
//! of such a tag is only whitespace, which the extraction never reads in the head, and a
//! `<head>` tag that comes later is ignored with its attributes, as it would have been.

/// Attributes kept on every element: what the classification of an element reads.
const KEPT: &[&[u8]] = &[
    b"aria-hidden",
    b"class",
    b"hidden",
    b"id",
    b"itemprop",
    b"itemtype",
    b"role",
    b"style",
];

/// Attributes kept on one element only: what the extraction reads of it (a link's
/// address, the page's language, its meta data), `input`'s `type` (the tree builder keeps
/// an `<input type=hidden>` inside a table) and `font`'s `color`, `face` and `size` (which
/// end foreign content).
const KEPT_ON: &[(&[u8], &[&[u8]])] = &[
    (b"a", &[b"href", b"rel"]),
    (b"base", &[b"href"]),
    (b"font", &[b"color", b"face", b"size"]),
    (b"html", &[b"lang", b"xml:lang"]),
    (b"input", &[b"type"]),
    (b"link", &[b"href", b"rel"]),
    (b"meta", &[b"content", b"http-equiv", b"name", b"property"]),
];

/// What the pass needs to know of an element, found once a tag: the attributes kept on it
/// beside [`KEPT`], and whether it is a `link` or `meta` tag that can go whole.
#[derive(Clone, Copy)]
pub(super) struct Element {
    kept_on: &'static [&'static [u8]],
    head: HeadTag,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum HeadTag {
    Other,
    Link,
    Meta,
}

impl Element {
    /// The element named `name` (ASCII case ignored).
    pub(super) fn of(name: &[u8]) -> Element {
        let kept_on = KEPT_ON
            .iter()
            .find(|(element, _)| element.eq_ignore_ascii_case(name))
            .map_or(&[][..], |(_, names)| names);
        let head = if name.eq_ignore_ascii_case(b"link") {
            HeadTag::Link
        } else if name.eq_ignore_ascii_case(b"meta") {
            HeadTag::Meta
        } else {
            HeadTag::Other
        };
        Element { kept_on, head }
    }

    /// Whether its attribute `name` is kept (ASCII case ignored).
    pub(super) fn keeps(self, name: &[u8]) -> bool {
        super::named_in(KEPT, name) || super::named_in(self.kept_on, name)
    }

    /// Whether it is a `link` or `meta` tag.
    fn in_head_only(self) -> bool {
        self.head != HeadTag::Other
    }

    /// Whether it is a `link` or `meta` tag the extraction reads, given one of its
    /// attributes (the attribute's name, then the rest of it: `=` and its value): a link to
    /// the canonical address, or into the page's own site (a feed, `shortlink`, `prev`,
    /// ...: `content::extract::site`, which names a saved page's site by them); meta data
    /// that Open Graph names (`og:...`), a description, one that names the site
    /// (`SITE_METAS`: a verification token, an app's name), or an `http-equiv`. A value with a character reference in it counts as read, as the
    /// parser would decode it. The other `link` and `meta` tags (style sheets, preloads,
    /// icons, viewport, ...) are dropped whole.
    pub(super) fn reads(self, name: &[u8], rest: &[u8]) -> bool {
        let holds = |needle: &[u8]| crate::text::contains_ignore_ascii_case(rest, needle);
        match self.head {
            HeadTag::Link => {
                name.eq_ignore_ascii_case(b"rel")
                    && (holds(b"canonical")
                        || crate::content::extract::SELF_RELS
                            .iter()
                            .any(|r| holds(r.as_bytes()))
                        || rest.contains(&b'&'))
            }
            HeadTag::Meta => {
                name.eq_ignore_ascii_case(b"http-equiv")
                    || ((name.eq_ignore_ascii_case(b"name")
                        || name.eq_ignore_ascii_case(b"property"))
                        && (holds(b"og:")
                            || holds(b"description")
                            || crate::content::extract::SITE_METAS
                                .iter()
                                .any(|m| holds(m.as_bytes()))
                            || rest.contains(&b'&')))
            }
            HeadTag::Other => false,
        }
    }
}

/// The formatting elements (the HTML standard's list, `a` aside): the tree builder compares
/// their attributes when it reopens them, so theirs stay. (`a` is never listed twice: a new
/// `a` closes the last one first.)
const FORMATTING: &[&[u8]] = &[
    b"b", b"big", b"code", b"em", b"font", b"i", b"nobr", b"s", b"small", b"strike", b"strong",
    b"tt", b"u",
];

/// Start tags that leave the parser in the document's head (or before it).
const HEAD: &[&[u8]] = &[
    b"html",
    b"head",
    b"title",
    b"meta",
    b"link",
    b"base",
    b"style",
    b"noscript",
];

/// End tags that take the parser out of the head: the ones that the head's insertion modes
/// do not ignore, but for `head` itself.
const HEAD_ENDING_END_TAGS: &[&[u8]] = &[b"body", b"html", b"br"];

/// Elements after whose start tag nothing more is changed (see the module doc).
const LAST: &[&[u8]] = &[b"script", b"plaintext", b"svg", b"math"];

/// What becomes of a tag the scan keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Edit {
    /// It stays as it is.
    Keep,
    /// It goes whole (an unread `link` or `meta` in the head).
    Drop,
    /// It is written without the attributes nobody reads ([`Attributes::push_tag`]).
    Rewrite,
}

/// The attribute rules, carried through the scan of the markup (`mod.rs`): the scan reads
/// every tag it keeps through [`Attributes::read`], then asks [`Attributes::edit`] what
/// becomes of it, and tells it of the text between tags, as the parser would read the
/// markup the removals leave.
#[derive(Debug)]
pub(super) struct Attributes {
    lean: Lean,
    /// The head element is open (a start tag of the head's, `html` aside, has been kept).
    head_open: bool,
    /// No text nor tag of the body has been read.
    in_head: bool,
    /// Nothing more is changed: after a start tag from [`LAST`] or a tag the input ends in,
    /// or from the start when the pass is off.
    done: bool,
}

impl Attributes {
    /// The pass at the start of a page; `on: false` changes nothing.
    pub(super) fn new(on: bool) -> Attributes {
        Attributes {
            lean: Lean::default(),
            head_open: false,
            in_head: true,
            done: !on,
        }
    }

    /// Text that the parser reads between two tags (after the scan's removals).
    pub(super) fn text(&mut self, text: &[u8]) {
        if self.in_head && !self.done {
            self.in_head = text.iter().all(|&b| is_space(b));
        }
    }

    /// A `<` that starts no tag, which is text.
    pub(super) fn lt(&mut self) {
        self.in_head = false;
    }

    /// Reads the tag at the start of `input` (its `<`, then `/` for an end tag, then an
    /// ASCII letter) by the tokenizer's states: where its `>` is (none at the end of the
    /// input), and whether it closes itself (`<svg/>`).
    pub(super) fn read(&mut self, input: &[u8]) -> (Option<usize>, bool) {
        if self.done {
            let tag = walk_tag(input, |_, _, _, _| {});
            return (tag.end, tag.self_closing);
        }
        read_tag(input, &mut self.lean);
        (self.lean.end, self.lean.self_closing)
    }

    /// What becomes of the tag last read, `tag` (up to its `>`), which the scan keeps.
    pub(super) fn edit(&mut self, tag: &[u8]) -> Edit {
        if self.done {
            return Edit::Keep;
        }
        if self.lean.end.is_none() {
            self.done = true;
            return Edit::Keep;
        }
        if tag.get(1) == Some(&b'/') {
            // `</body>`, `</html>` and `</br>` take the parser out of the head, into the body
            // or past it, where a `meta` or `link` stands between two texts. (After
            // `</head>` one still goes into the head element, and the parser ignores the
            // other end tags there.)
            if self.in_head {
                let name = tag.get(2..self.lean.name_end).unwrap_or_default();
                self.in_head = !super::named_in(HEAD_ENDING_END_TAGS, name);
            }
            return Edit::Keep;
        }
        // Only in the head, where the parser makes no text of what is on either side of it,
        // and only once the head element is open. A `meta` or `link` before it opens it, so
        // that a `<head>` tag after it is ignored, attributes and all; and before the
        // document's first tag or doctype, a `meta` puts the parser in quirks mode.
        if self.lean.unread && self.head_open && self.in_head {
            return Edit::Drop;
        }
        let name = &tag[1..self.lean.name_end];
        self.in_head &= super::named_in(HEAD, name);
        self.head_open |= self.in_head && !name.eq_ignore_ascii_case(b"html");
        self.done = super::named_in(LAST, name);
        if self.lean.rewrite {
            Edit::Rewrite
        } else {
            Edit::Keep
        }
    }

    /// Writes `tag`, the tag last read, without the attributes the pass drops.
    pub(super) fn push_tag(&self, out: &mut String, tag: &str) {
        push_tag(out, tag, &self.lean);
    }
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
pub(super) fn comment_end(bytes: &[u8], from: usize) -> usize {
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
pub(super) fn past_next_gt(bytes: &[u8], start: usize) -> usize {
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
    /// A `link` or `meta` start tag that the extraction does not read (see
    /// [`Element::reads`]), read exactly: it can go whole.
    unread: bool,
}

/// The tokenizer's whitespace (a carriage return is read as a line feed).
fn is_space(b: u8) -> bool {
    BYTES[usize::from(b)] & SPACE != 0
}

/// What a byte is to a tag's attributes, looked up in [`BYTES`]: whitespace; the end of an
/// attribute's name (`/`, `>`, `=`); a byte that makes the name odd (a quote, `<`, NUL).
const SPACE: u8 = 1;
const NAME_END: u8 = 2;
const ODD: u8 = 4;

const BYTES: [u8; 256] = {
    let mut table = [0u8; 256];
    table[b' ' as usize] = SPACE;
    table[b'\t' as usize] = SPACE;
    table[b'\n' as usize] = SPACE;
    table[b'\r' as usize] = SPACE;
    table[0x0c] = SPACE;
    table[b'/' as usize] = NAME_END;
    table[b'>' as usize] = NAME_END;
    table[b'=' as usize] = NAME_END;
    table[b'"' as usize] = ODD;
    table[b'\'' as usize] = ODD;
    table[b'<' as usize] = ODD;
    table[0] = ODD;
    table
};

/// Reads the tag at the start of `input` (its `<`, then `/` for an end tag, then an ASCII
/// letter) by the tokenizer's states into `lean`: where it ends, and whether it is a start
/// tag that can be rewritten without the attributes nobody reads (see the module doc).
fn read_tag(input: &[u8], lean: &mut Lean) {
    lean.kept.clear();
    lean.rewrite = false;
    lean.unread = false;
    let closing = input.get(1) == Some(&b'/');
    let mut dropped = false;
    let mut read = false;
    let kept_ranges = &mut lean.kept;
    let mut rules: Option<Element> = None;
    let tag = walk_tag(input, |element, start, name_end, end| {
        let rules = *rules.get_or_insert_with(|| Element::of(element));
        let name = &input[start..name_end];
        if rules.keeps(name) {
            kept_ranges.push((start, end));
            read = read || rules.reads(name, &input[name_end..end]);
        } else {
            dropped = true;
        }
    });
    lean.end = tag.end;
    lean.name_end = tag.name_end;
    lean.self_closing = tag.self_closing;
    let Some(end) = tag.end else { return };
    let exact = !tag.odd && !closing && memchr::memchr(b'<', &input[1..end]).is_none();
    lean.rewrite = dropped && exact;
    lean.unread = exact
        && !read
        && rules
            .unwrap_or_else(|| Element::of(&input[1..tag.name_end]))
            .in_head_only();
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
/// letter) by the tokenizer's states, calling `each` with the element's name and every
/// attribute (where it starts, where its name ends, where it ends): a `>` inside a quoted
/// value does not end the tag.
pub(super) fn walk_tag(input: &[u8], mut each: impl FnMut(&[u8], usize, usize, usize)) -> Tag {
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
        each(name, start, name_end, end);
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
    while let Some(&b) = input.get(i) {
        let class = BYTES[usize::from(b)];
        if class & (SPACE | NAME_END) != 0 {
            break;
        }
        *odd |= class & ODD != 0;
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
#[path = "attributes_tests.rs"]
mod tests;
