//! Canonical URLs: one string per resource, so that URL variants do not defeat the
//! seen-URL filter.
//!
//! Parsing follows the WHATWG URL standard (the `url` crate); on top of it the
//! [`Canonicalizer`] applies these rules, in this order:
//!
//! | rule | example (input -> canonical) |
//! | --- | --- |
//! | relative links resolve against a base URL | `../b?x=1` on `http://h/a/c` -> `http://h/b?x=1` |
//! | only `http` and `https`; anything else is an error | `mailto:a@b.c` -> error |
//! | scheme and host lower-cased | `HTTP://Example.COM/` -> `http://example.com/` |
//! | internationalised host names to punycode | `http://bücher.de/` -> `http://xn--bcher-kva.de/` |
//! | IPv4 in odd notations to dotted decimal | `http://0x7f.1/` -> `http://127.0.0.1/` |
//! | IPv6 hosts compressed and lower-cased | `http://[0:0::1]/` -> `http://[::1]/` |
//! | a trailing dot on the host dropped | `http://example.com./` -> `http://example.com/` |
//! | default port dropped | `https://h:443/` -> `https://h/` |
//! | empty path becomes `/` | `http://h` -> `http://h/` |
//! | dot segments resolved | `http://h/a/./b/../c` -> `http://h/a/c` |
//! | fragment dropped | `http://h/a#top` -> `http://h/a` |
//! | unreserved characters decoded | `http://h/%7Euser/%41` -> `http://h/~user/A` |
//! | hex of remaining escapes upper-cased | `http://h/a%2fb` -> `http://h/a%2Fb` |
//! | a lone `%` is escaped | `http://h/100%` -> `http://h/100%25` |
//! | non-ASCII paths percent-encoded as UTF-8 | `http://h/é` -> `http://h/%C3%A9` |
//! | session path parameters dropped | `http://h/a;jsessionid=F00` -> `http://h/a` |
//! | a space in the query is written `+` | `?q=a%20b` -> `?q=a+b` (a literal plus stays `%2B`) |
//! | configured parameters dropped (exact name or `prefix*`, case-insensitive) | `?utm_source=x&id=1` -> `?id=1` |
//! | parameters sorted by name; repeated names keep their order | `?b=2&a=2&a=1` -> `?a=2&a=1&b=2` |
//! | empty parameters and an empty query dropped | `http://h/?&` -> `http://h/` |
//! | optional (off by default): `www.` folded | `http://www.h.com/` -> `http://h.com/` |
//! | optional (off by default): index file folded | `http://h/a/index.html` -> `http://h/a/` |
//!
//! A `+` and a `%20` in a query both mean a space under the HTML form encoding that
//! servers apply to query strings, so they are one resource; a `+` in a path is a literal
//! plus and is left alone. Encoded slashes (`%2F`) stay encoded: a server may route
//! `a%2Fb` and `a/b` differently.
//!
//! Canonicalization is idempotent (`canonical(canonical(x)) == canonical(x)`) and a
//! canonical URL parses back to itself; property tests check both.

use std::fmt;

use url::Url;

/// Longest URL accepted, in bytes. Browsers and servers start refusing URLs past a few
/// kilobytes; a longer link is almost always a crawler trap (state smuggled into the URL).
pub const MAX_URL_BYTES: usize = 8192;

/// Query and path parameters dropped by default: click trackers and session ids.
/// A trailing `*` matches any name with that prefix.
pub const DEFAULT_STRIP_PARAMS: &[&str] = &[
    "utm_*",
    "fbclid",
    "gclid",
    "gclsrc",
    "dclid",
    "gbraid",
    "wbraid",
    "msclkid",
    "yclid",
    "igshid",
    "mc_cid",
    "mc_eid",
    "_hsenc",
    "_hsmi",
    "jsessionid",
    "phpsessid",
    "aspsessionid*",
    "sid",
];

/// Index file names folded by [`CanonicalOptions::fold_index`] when they end a path.
const INDEX_FILES: &[&str] = &[
    "index.html",
    "index.htm",
    "index.php",
    "default.htm",
    "default.html",
    "default.asp",
    "default.aspx",
];

/// Why an input is not a crawlable URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CanonicalError {
    /// The input does not parse as a URL (or as a link relative to the base).
    #[error("not a URL: {0}")]
    Parse(#[from] url::ParseError),
    /// A scheme other than http or https (`mailto:`, `javascript:`, `data:`, `tel:`, ...).
    #[error("unsupported scheme `{0}:` (only http and https are crawled)")]
    UnsupportedScheme(String),
    /// Longer than [`MAX_URL_BYTES`].
    #[error("URL is {0} bytes long, over the {MAX_URL_BYTES}-byte limit")]
    TooLong(usize),
}

/// A parameter name to strip: an exact name or a prefix (`utm_*`), compared
/// case-insensitively with the percent-decoded name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamPattern {
    /// Matches this name only.
    Exact(String),
    /// Matches every name that starts with this prefix.
    Prefix(String),
}

impl ParamPattern {
    /// Parses `name` or `prefix*`.
    pub fn parse(pattern: &str) -> ParamPattern {
        let lower = pattern.trim().to_ascii_lowercase();
        match lower.strip_suffix('*') {
            Some(prefix) => ParamPattern::Prefix(prefix.to_string()),
            None => ParamPattern::Exact(lower),
        }
    }

    fn matches(&self, lower_name: &str) -> bool {
        match self {
            ParamPattern::Exact(name) => lower_name == name,
            ParamPattern::Prefix(prefix) => lower_name.starts_with(prefix.as_str()),
        }
    }
}

impl fmt::Display for ParamPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamPattern::Exact(name) => f.write_str(name),
            ParamPattern::Prefix(prefix) => write!(f, "{prefix}*"),
        }
    }
}

/// What the [`Canonicalizer`] does beyond the fixed rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CanonicalOptions {
    /// Query and path parameters to drop.
    pub strip_params: Vec<ParamPattern>,
    /// Treat `www.example.com` and `example.com` as one host.
    pub fold_www: bool,
    /// Treat `/dir/index.html` (and the other usual index files) as `/dir/`.
    pub fold_index: bool,
}

impl Default for CanonicalOptions {
    fn default() -> Self {
        CanonicalOptions {
            strip_params: DEFAULT_STRIP_PARAMS
                .iter()
                .map(|p| ParamPattern::parse(p))
                .collect(),
            fold_www: false,
            fold_index: false,
        }
    }
}

/// Turns URLs into their canonical form. Cheap to clone and share between threads.
///
/// ```
/// use crawldedup::Canonicalizer;
///
/// let canon = Canonicalizer::default();
/// let url = canon.canonicalize("HTTP://Example.com:80/a/./b/../c?utm_source=x&b=2&a=1#top")?;
/// assert_eq!(url.as_str(), "http://example.com/a/c?a=1&b=2");
/// # Ok::<(), crawldedup::CanonicalError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Canonicalizer {
    options: CanonicalOptions,
}

impl Canonicalizer {
    /// A canonicalizer with the given options.
    pub fn new(options: CanonicalOptions) -> Self {
        Canonicalizer { options }
    }

    /// The options in force.
    pub fn options(&self) -> &CanonicalOptions {
        &self.options
    }

    /// The canonical form of an absolute URL.
    pub fn canonicalize(&self, input: &str) -> Result<Url, CanonicalError> {
        check_length(input.len())?;
        self.finish(Url::parse(input)?)
    }

    /// The canonical form of a link found on the page at `base` (relative or absolute).
    pub fn canonicalize_link(&self, base: &Url, href: &str) -> Result<Url, CanonicalError> {
        check_length(href.len())?;
        self.finish(base.join(href)?)
    }

    fn finish(&self, mut url: Url) -> Result<Url, CanonicalError> {
        match url.scheme() {
            "http" | "https" => {}
            other => return Err(CanonicalError::UnsupportedScheme(other.to_string())),
        }
        url.set_fragment(None);
        self.normalize_host(&mut url)?;

        let path = self.normalize_path(url.path());
        if path != url.path() {
            url.set_path(&path);
        }
        match url.query() {
            None => {}
            Some(query) => {
                let normalized = self.normalize_query(query);
                if normalized.is_empty() {
                    url.set_query(None);
                } else if normalized != query {
                    url.set_query(Some(&normalized));
                }
            }
        }
        check_length(url.as_str().len())?;
        Ok(url)
    }

    fn normalize_host(&self, url: &mut Url) -> Result<(), CanonicalError> {
        let Some(url::Host::Domain(domain)) = url.host() else {
            return Ok(());
        };
        let mut host = domain.trim_end_matches('.');
        if self.options.fold_www {
            if let Some(rest) = host.strip_prefix("www.") {
                // `www.com` is a host of its own, not `com` with a prefix.
                if rest.contains('.') {
                    host = rest;
                }
            }
        }
        if host.len() != domain.len() {
            let host = host.to_string();
            url.set_host(Some(&host))?;
        }
        Ok(())
    }

    fn normalize_path(&self, path: &str) -> String {
        let mut out = String::with_capacity(path.len());
        let mut segments = path.split('/').peekable();
        let mut first = true;
        while let Some(segment) = segments.next() {
            if !first {
                out.push('/');
            }
            first = false;
            let segment = self.strip_path_params(segment);
            let is_last = segments.peek().is_none();
            if is_last && self.options.fold_index && is_index_file(&segment) {
                continue;
            }
            normalize_percent(&segment, &mut out, false);
        }
        out
    }

    /// Drops `;name=value` path parameters whose name is configured to be stripped
    /// (`;jsessionid=...` is the common one); other path parameters stay.
    fn strip_path_params<'a>(&self, segment: &'a str) -> std::borrow::Cow<'a, str> {
        if !segment.contains(';') {
            return std::borrow::Cow::Borrowed(segment);
        }
        let mut parts = segment.split(';');
        let mut kept = String::from(parts.next().unwrap_or(""));
        for param in parts {
            let name = param.split('=').next().unwrap_or("");
            if param.is_empty() || self.is_stripped(name) {
                continue;
            }
            kept.push(';');
            kept.push_str(param);
        }
        std::borrow::Cow::Owned(kept)
    }

    fn normalize_query(&self, query: &str) -> String {
        let mut params: Vec<(String, String)> = Vec::new();
        for pair in query.split('&') {
            if pair.is_empty() {
                continue;
            }
            let mut normalized = String::with_capacity(pair.len());
            normalize_percent(pair, &mut normalized, true);
            let name_len = normalized.find('=').unwrap_or(normalized.len());
            let name = normalized[..name_len].to_string();
            if self.is_stripped(&name) {
                continue;
            }
            params.push((name, normalized));
        }
        // Stable: repeated names keep their relative order, which servers may rely on.
        params.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out = String::with_capacity(query.len());
        for (i, (_, pair)) in params.iter().enumerate() {
            if i > 0 {
                out.push('&');
            }
            out.push_str(pair);
        }
        out
    }

    fn is_stripped(&self, raw_name: &str) -> bool {
        if self.options.strip_params.is_empty() {
            return false;
        }
        let decoded = percent_decode_lossy(raw_name).to_ascii_lowercase();
        self.options
            .strip_params
            .iter()
            .any(|pattern| pattern.matches(&decoded))
    }
}

fn check_length(len: usize) -> Result<(), CanonicalError> {
    if len > MAX_URL_BYTES {
        Err(CanonicalError::TooLong(len))
    } else {
        Ok(())
    }
}

fn is_index_file(segment: &str) -> bool {
    INDEX_FILES
        .iter()
        .any(|name| segment.eq_ignore_ascii_case(name))
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// The byte of the `%XX` escape starting at `at`, if it is one.
fn decode_escape(bytes: &[u8], at: usize) -> Option<u8> {
    let h = hex_value(*bytes.get(at + 1)?)?;
    let l = hex_value(*bytes.get(at + 2)?)?;
    Some(h << 4 | l)
}

const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

fn push_escaped(out: &mut String, byte: u8) {
    out.push('%');
    out.push(HEX_UPPER[usize::from(byte >> 4)] as char);
    out.push(HEX_UPPER[usize::from(byte & 0x0f)] as char);
}

/// Rewrites percent-escapes: unreserved characters decoded, the rest with upper-case hex,
/// a lone `%` escaped; in a query a space is written `+`.
fn normalize_percent(input: &str, out: &mut String, in_query: bool) {
    let bytes = input.as_bytes();
    let mut i = 0;
    let mut plain_start = 0;
    while i < bytes.len() {
        if bytes[i] != b'%' {
            i += 1;
            continue;
        }
        out.push_str(&input[plain_start..i]);
        match decode_escape(bytes, i) {
            Some(b) if is_unreserved(b) => {
                out.push(b as char);
                i += 3;
            }
            Some(b' ') if in_query => {
                out.push('+');
                i += 3;
            }
            Some(b) => {
                push_escaped(out, b);
                i += 3;
            }
            None => {
                push_escaped(out, b'%');
                i += 1;
            }
        }
        plain_start = i;
    }
    out.push_str(&input[plain_start..]);
}

/// Percent-decodes for comparison only (parameter names); invalid UTF-8 is replaced.
fn percent_decode_lossy(input: &str) -> String {
    if !input.contains('%') && !input.contains('+') {
        return input.to_string();
    }
    let bytes = input.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => match decode_escape(bytes, i) {
                Some(b) => {
                    out.push(b);
                    i += 3;
                }
                None => {
                    out.push(b'%');
                    i += 1;
                }
            },
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_percent_decodes_unreserved_and_uppercases_the_rest() {
        let mut out = String::new();
        normalize_percent("%7e%41%2f%zz%", &mut out, false);
        assert_eq!(out, "~A%2F%25zz%25");
    }

    #[test]
    fn query_space_escape_becomes_plus_but_path_space_does_not() {
        let mut q = String::new();
        normalize_percent("a%20b", &mut q, true);
        assert_eq!(q, "a+b");
        let mut p = String::new();
        normalize_percent("a%20b", &mut p, false);
        assert_eq!(p, "a%20b");
    }

    #[test]
    fn param_pattern_parses_prefix_and_exact() {
        assert_eq!(
            ParamPattern::parse("UTM_*"),
            ParamPattern::Prefix("utm_".into())
        );
        assert_eq!(
            ParamPattern::parse("sid"),
            ParamPattern::Exact("sid".into())
        );
        assert!(ParamPattern::parse("utm_*").matches("utm_campaign"));
        assert!(!ParamPattern::parse("sid").matches("side"));
    }
}
