//! Bytes plus an HTTP `Content-Type` become UTF-8 text.
//!
//! The character encoding is decided in this order, and the first rule that gives an answer
//! wins:
//!
//! 1. a byte-order mark (UTF-8, UTF-16LE, UTF-16BE): a BOM is unambiguous evidence about the
//!    bytes themselves, so, as in the HTML standard, it outranks a header that disagrees;
//! 2. the `charset` parameter of the `Content-Type` header;
//! 3. a `<meta charset>` or `<meta http-equiv="Content-Type" content="...; charset=...">`
//!    in the head (the first 16 KiB, stopping at `<body`);
//! 4. bytes that are valid UTF-8 are UTF-8;
//! 5. otherwise [`chardetng`] guesses from the bytes (and the top-level domain when the URL
//!    is known), as Firefox does for unlabeled pages.
//!
//! Labels are resolved with the WHATWG encoding standard (`latin1` and `iso-8859-1` mean
//! windows-1252, `gb2312` means GBK, and so on); a `<meta>` that claims UTF-16 means UTF-8,
//! since the bytes that carried it were ASCII-compatible. An unknown label is ignored and
//! the next rule is tried. Decoding never fails: invalid sequences become U+FFFD, and
//! [`Decoded::had_errors`] says so.
//!
//! ```
//! use crawldedup::content::decode::{decode, CharsetSource};
//!
//! // "café" in windows-1252, declared by the header.
//! let page = decode(b"<p>caf\xe9</p>", Some("text/html; charset=ISO-8859-1"), None);
//! assert_eq!(page.text, "<p>café</p>");
//! assert_eq!(page.encoding.name(), "windows-1252");
//! assert_eq!(page.source, CharsetSource::Header);
//! ```

use chardetng::{EncodingDetector, Iso2022JpDetection, Utf8Detection};
use encoding_rs::{Encoding, UTF_8, UTF_16BE, UTF_16LE};

/// How far into the document `<meta charset>` is looked for.
pub const META_SCAN_BYTES: usize = 16 * 1024;

/// How many bytes the detector reads when it has to guess.
pub const SNIFF_BYTES: usize = 64 * 1024;

/// Where the encoding of a decoded page came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CharsetSource {
    /// A byte-order mark at the start of the body.
    Bom,
    /// The `charset` parameter of the `Content-Type` header.
    Header,
    /// A `<meta>` element in the document head.
    Meta,
    /// The bytes are valid UTF-8 and nothing declared otherwise.
    ValidUtf8,
    /// Guessed from the bytes by `chardetng`.
    Sniffed,
}

/// A page decoded to UTF-8.
#[derive(Clone, Debug)]
pub struct Decoded {
    /// The text, without a byte-order mark.
    pub text: String,
    /// The encoding the bytes were decoded from.
    pub encoding: &'static Encoding,
    /// Which rule chose the encoding.
    pub source: CharsetSource,
    /// True when some byte sequences were invalid in that encoding and became U+FFFD.
    pub had_errors: bool,
}

/// Decodes `bytes` to UTF-8 text.
///
/// `content_type` is the HTTP `Content-Type` header, if any; `url` (if known) lends its
/// top-level domain to the detector for unlabeled pages.
pub fn decode(bytes: &[u8], content_type: Option<&str>, url: Option<&str>) -> Decoded {
    let (text, encoding, source, had_errors) = decode_borrowed(bytes, content_type, url);
    Decoded {
        text: text.into_owned(),
        encoding,
        source,
        had_errors,
    }
}

/// As [`decode`], borrowing the bytes when they are already the UTF-8 text.
pub(crate) fn decode_borrowed<'a>(
    bytes: &'a [u8],
    content_type: Option<&str>,
    url: Option<&str>,
) -> (
    std::borrow::Cow<'a, str>,
    &'static Encoding,
    CharsetSource,
    bool,
) {
    let (encoding, source) = choose_encoding(bytes, content_type, url);
    let (text, had_errors) = if encoding == UTF_8 && source == CharsetSource::ValidUtf8 {
        // Already validated; skip the decoder.
        (std::str::from_utf8(bytes).unwrap_or_default().into(), false)
    } else {
        let without_bom = match Encoding::for_bom(bytes) {
            Some((bom_encoding, len)) if bom_encoding == encoding => &bytes[len..],
            _ => bytes,
        };
        encoding.decode_without_bom_handling(without_bom)
    };
    (text, encoding, source, had_errors)
}

/// Chooses the encoding of `bytes` by the rules in the module documentation.
pub fn choose_encoding(
    bytes: &[u8],
    content_type: Option<&str>,
    url: Option<&str>,
) -> (&'static Encoding, CharsetSource) {
    if let Some((encoding, _)) = Encoding::for_bom(bytes) {
        return (encoding, CharsetSource::Bom);
    }
    if let Some(encoding) = content_type
        .and_then(charset_param)
        .and_then(label_encoding)
    {
        return (encoding, CharsetSource::Header);
    }
    if let Some(encoding) = meta_charset(bytes) {
        return (encoding, CharsetSource::Meta);
    }
    if std::str::from_utf8(bytes).is_ok() {
        return (UTF_8, CharsetSource::ValidUtf8);
    }
    let mut detector = EncodingDetector::new(Iso2022JpDetection::Deny);
    detector.feed(&bytes[..bytes.len().min(SNIFF_BYTES)], true);
    let tld = url.and_then(top_level_domain);
    (
        detector.guess(tld.as_deref().map(str::as_bytes), Utf8Detection::Allow),
        CharsetSource::Sniffed,
    )
}

/// Resolves a charset label the way browsers do; UTF-16 labels found in markup mean UTF-8.
fn label_encoding(label: &str) -> Option<&'static Encoding> {
    let encoding = Encoding::for_label_no_replacement(label.trim().as_bytes())?;
    Some(if encoding == UTF_16LE || encoding == UTF_16BE {
        UTF_8
    } else {
        encoding
    })
}

/// The `charset=` parameter of a `Content-Type` value, without quotes.
pub fn charset_param(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("charset") {
            return None;
        }
        let value = value.trim().trim_matches(|c| c == '"' || c == '\'');
        (!value.is_empty()).then_some(value)
    })
}

/// The lower-case, ASCII top-level domain of `url`, if it has one the detector can use.
fn top_level_domain(url: &str) -> Option<String> {
    let host = url::Url::parse(url).ok()?.host_str()?.to_owned();
    let tld = host.rsplit('.').next()?.to_ascii_lowercase();
    let usable = !tld.is_empty() && tld.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    usable.then_some(tld)
}

/// Finds a charset declared by a `<meta>` element in the head.
///
/// A light scan, not a full tokenizer: it looks at `<meta ...>` tags (skipping comments) up
/// to [`META_SCAN_BYTES`] or the first `<body`, and reads either a `charset` attribute or a
/// `content` attribute carrying `charset=`.
fn meta_charset(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = &bytes[..bytes.len().min(META_SCAN_BYTES)];
    let mut at = 0;
    while let Some(offset) = memchr_lt(&head[at..]) {
        let start = at + offset;
        let rest = &head[start..];
        if rest.starts_with(b"<!--") {
            // An unterminated comment runs to the end of the scanned head.
            at = find(&rest[4..], b"-->").map_or(head.len(), |end| start + 4 + end + 3);
            continue;
        }
        if starts_with_ignore_case(rest, b"<body") {
            return None;
        }
        let end = rest.iter().position(|&b| b == b'>').unwrap_or(rest.len());
        let tag = &rest[..end];
        if starts_with_ignore_case(tag, b"<meta")
            && tag
                .get(5)
                .is_some_and(|b| b.is_ascii_whitespace() || *b == b'/')
        {
            let attrs = parse_attributes(&tag[5..]);
            let charset = attrs
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case("charset"))
                .map(|(_, value)| value.as_str())
                .or_else(|| {
                    let content = attrs
                        .iter()
                        .find(|(name, _)| name.eq_ignore_ascii_case("content"))?;
                    charset_in_content(&content.1)
                });
            if let Some(encoding) = charset.and_then(label_encoding) {
                return Some(encoding);
            }
        }
        at = start + end.max(1);
    }
    None
}

/// The value after `charset=` in a `<meta content>` value.
fn charset_in_content(content: &str) -> Option<&str> {
    let lower = content.to_ascii_lowercase();
    let at = lower.find("charset")?;
    let rest = content[at + 7..].trim_start();
    let rest = rest.strip_prefix('=')?.trim_start();
    let rest = rest.trim_start_matches(['"', '\'']);
    let end = rest
        .find(|c: char| c == ';' || c == '"' || c == '\'' || c.is_ascii_whitespace())
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// Attributes of a tag body (`name=value`, `name="value"`, `name='value'`, `name`).
fn parse_attributes(tag: &[u8]) -> Vec<(String, String)> {
    let text = String::from_utf8_lossy(tag);
    let bytes = text.as_bytes();
    let mut attrs = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        while i < bytes.len() && (bytes[i].is_ascii_whitespace() || bytes[i] == b'/') {
            i += 1;
        }
        let name_start = i;
        while i < bytes.len() && !bytes[i].is_ascii_whitespace() && bytes[i] != b'=' {
            i += 1;
        }
        let name = text[name_start..i].to_string();
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let mut value = String::new();
        if i < bytes.len() && bytes[i] == b'=' {
            i += 1;
            while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            if i < bytes.len() && (bytes[i] == b'"' || bytes[i] == b'\'') {
                let quote = bytes[i];
                let value_start = i + 1;
                i = value_start;
                while i < bytes.len() && bytes[i] != quote {
                    i += 1;
                }
                value = text[value_start..i].to_string();
                i += 1;
            } else {
                let value_start = i;
                while i < bytes.len() && !bytes[i].is_ascii_whitespace() {
                    i += 1;
                }
                value = text[value_start..i].to_string();
            }
        }
        if !name.is_empty() {
            attrs.push((name, value));
        }
    }
    attrs
}

fn memchr_lt(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'<')
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn starts_with_ignore_case(bytes: &[u8], prefix: &[u8]) -> bool {
    bytes.len() >= prefix.len() && bytes[..prefix.len()].eq_ignore_ascii_case(prefix)
}

/// Bytes of a body that [`looks_binary`] reads.
const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// True when the bytes look like a binary file rather than text, from their first 8 KiB,
/// with no UTF-16 byte-order mark to explain them: a NUL byte, or more than one byte in 32
/// a control character that no text uses (C0 controls but tab, line feed, form feed,
/// carriage return and escape; DEL). Random bytes have about one in eleven; pages in every
/// charset, legacy ones included, next to none.
pub fn looks_binary(bytes: &[u8]) -> bool {
    if matches!(Encoding::for_bom(bytes), Some((e, _)) if e == UTF_16LE || e == UTF_16BE) {
        return false;
    }
    let head = &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)];
    if head.contains(&0) {
        return true;
    }
    // Counted without a branch, into one byte a run of at most 255 bytes, so that the loop
    // runs 32 bytes at a time.
    let controls: usize = head
        .chunks(255)
        .map(|run| {
            usize::from(
                run.iter()
                    .map(|&b| {
                        let control = (b < 0x20)
                            & (b != b'\t')
                            & (b != b'\n')
                            & (b != 0x0c)
                            & (b != b'\r')
                            & (b != 0x1b);
                        u8::from(control | (b == 0x7f))
                    })
                    .fold(0u8, u8::wrapping_add),
            )
        })
        .sum();
    controls * 32 > head.len()
}

/// True when a `Content-Type` names HTML or XHTML (or is missing, when `sniff_missing`).
pub fn is_html_content_type(content_type: Option<&str>, sniff_missing: bool) -> bool {
    match content_type {
        None => sniff_missing,
        Some(value) => {
            let mime = value.split(';').next().unwrap_or("").trim();
            mime.eq_ignore_ascii_case("text/html")
                || mime.eq_ignore_ascii_case("application/xhtml+xml")
                || (mime.is_empty() && sniff_missing)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_bytes_are_binary_wherever_their_first_nul_is_and_text_is_not() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut random: Vec<u8> = (0..4096)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state as u8).max(1)
            })
            .collect();
        assert!(looks_binary(&random), "no NUL at all");
        random[1092] = 0;
        assert!(looks_binary(&random));
        let page = "<html><body><p>caf\u{e9}\tna\u{ef}ve\r\n\x0c\x1b[0m</p></body></html>";
        assert!(!looks_binary(page.as_bytes()));
        let latin1: Vec<u8> = (0..2000).map(|i| [b'a', 0xe9, b' ', 0xfc][i % 4]).collect();
        assert!(!looks_binary(&latin1));
    }

    /// Found by the `decode` fuzz target: an unterminated comment in the head made the
    /// `<meta>` scan index past the end of the bytes.
    #[test]
    fn an_unterminated_comment_in_the_head_is_read_to_the_end() {
        for body in [
            &b"<!--"[..],
            b"<p><!-- no end",
            b"<!----",
            b"<!-- <meta charset=latin1>",
        ] {
            let decoded = decode(body, None, None);
            assert_eq!(decoded.encoding, encoding_rs::UTF_8, "{body:?}");
        }
        let crash = include_bytes!("../../tests/fixtures/fuzz/decode-unterminated-comment");
        let _ = decode(
            &crash[1..],
            Some("text/html"),
            Some("http://fuzz.test/page.html"),
        );
        // The same, reached through extraction.
        let crash = include_bytes!("../../tests/fixtures/fuzz/extract-unterminated-comment");
        let _ = crate::content::extract_bytes(crash, Some("text/html"), None);
    }

    #[test]
    fn charset_parameter_forms() {
        assert_eq!(charset_param("text/html; charset=utf-8"), Some("utf-8"));
        assert_eq!(
            charset_param("text/html;CHARSET=\"Shift_JIS\""),
            Some("Shift_JIS")
        );
        assert_eq!(charset_param("text/html"), None);
        assert_eq!(charset_param("text/html; charset="), None);
    }

    #[test]
    fn meta_content_forms() {
        assert_eq!(charset_in_content("text/html; charset=gbk"), Some("gbk"));
        assert_eq!(
            charset_in_content("text/html;charset = 'big5'"),
            Some("big5")
        );
        assert_eq!(charset_in_content("text/html"), None);
    }

    #[test]
    fn meta_in_comment_is_ignored() {
        let page = b"<!-- <meta charset=gbk> --><meta charset=euc-kr><p>";
        assert_eq!(meta_charset(page).map(Encoding::name), Some("EUC-KR"));
    }

    #[test]
    fn meta_after_body_is_ignored() {
        assert_eq!(meta_charset(b"<body><meta charset=gbk>"), None);
    }
}
