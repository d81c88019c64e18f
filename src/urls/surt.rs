//! SURT keys (Sort-friendly URI Reordering Transform), as web-archive indexes sort their
//! lines: `http://www.Example.com:8080/A/?b=2&a=1#top` is `com,example:8080)/a?a=1&b=2`.
//!
//! The key is the one pywb computes for a URL it is asked to replay (its `surt` package's
//! default, the Internet Archive's canonicalization), so that a CDXJ index written here
//! finds what pywb looks up:
//!
//! - no scheme, no user or password, no fragment, no default port;
//! - the host lowercased, without a leading `www.` (or `www2.`...) and trailing dots, its
//!   labels reversed and joined by commas (an IPv4 address's too);
//! - the path with percent escapes undone (repeatedly) and done once again for bytes
//!   outside printable ASCII, `%` and `#`; `.` and `..` segments resolved and empty ones
//!   dropped; lowercased; without an ASP.NET session segment or a trailing slash (`/`
//!   alone stays);
//! - the query escaped once in the same way, without a session id (`jsessionid`,
//!   `phpsessid`, `sid` of 32 characters, `ASPSESSIONID`, `cfid` and `cftoken`),
//!   lowercased, its arguments sorted; an empty query dropped.
//!
//! A URL without a host (`dns:example.com`, `urn:...`) is its own key.

use std::sync::LazyLock;

use regex::bytes::Regex;

/// ASP.NET cookieless session segments in a path.
static PATH_SESSION_IDS: LazyLock<[Regex; 2]> = LazyLock::new(|| {
    [
        Regex::new(r"(?is-u)^(.*/)(\((?:[a-z]\([0-9a-z]{24}\))+\)/)([^?]+\.aspx.*)$"),
        Regex::new(r"(?is-u)^(.*/)(\([0-9a-z]{24}\)/)([^?]+\.aspx.*)$"),
    ]
    .map(|r| r.expect("a valid pattern"))
});

/// Session ids in a query.
static QUERY_SESSION_IDS: LazyLock<[Regex; 5]> = LazyLock::new(|| {
    [
        r"(?is-u)^(.*)(?:jsessionid=[0-9a-z]{32})(?:&(.*))?$",
        r"(?is-u)^(.*)(?:phpsessid=[0-9a-z]{32})(?:&(.*))?$",
        r"(?is-u)^(.*)(?:sid=[0-9a-z]{32})(?:&(.*))?$",
        r"(?is-u)^(.*)(?:aspsessionid[a-z]{8}=[a-z]{24})(?:&(.*))?$",
        r"(?is-u)^(.*)(?:cfid=[^&]+&cftoken=[^&]+)(?:&(.*))?$",
    ]
    .map(|r| Regex::new(r).expect("a valid pattern"))
});

/// The SURT key of `url` (see the [module documentation](self)).
pub fn surt(url: &str) -> String {
    let Ok(parsed) = url::Url::parse(url.trim()) else {
        return url.trim().to_string();
    };
    let Some(host) = parsed.host_str().filter(|h| !h.is_empty()) else {
        return url.trim().to_string();
    };
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_matches('.')
        .to_ascii_lowercase();
    let host = strip_www(&host);
    let mut key = String::with_capacity(url.len() + 8);
    for (i, label) in host.rsplit('.').enumerate() {
        if i > 0 {
            key.push(',');
        }
        key.push_str(label);
    }
    if let Some(port) = parsed.port() {
        key.push(':');
        key.push_str(&port.to_string());
    }
    key.push(')');
    key.push_str(&path(parsed.path()));
    if let Some(query) = parsed.query().and_then(query) {
        key.push('?');
        key.push_str(&query);
    }
    key
}

/// `host` without a leading `www.`, `www2.`...
fn strip_www(host: &str) -> &str {
    let Some(rest) = host.strip_prefix("www") else {
        return host;
    };
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    rest.strip_prefix('.').unwrap_or(host)
}

fn path(path: &str) -> String {
    let mut path = escape_once(&normalize_path(&unescape_repeatedly(path.as_bytes())));
    path.make_ascii_lowercase();
    let mut bytes = path.into_bytes();
    for pattern in PATH_SESSION_IDS.iter() {
        if let Some(m) = pattern.captures(&bytes) {
            bytes = [&m[1], &m[3]].concat();
        }
    }
    if bytes.len() > 1 && bytes.ends_with(b"/") {
        bytes.pop();
    }
    String::from_utf8(bytes).unwrap_or_default()
}

fn query(query: &str) -> Option<String> {
    let mut query = escape_once(&unescape_repeatedly(query.as_bytes())).into_bytes();
    for pattern in QUERY_SESSION_IDS.iter() {
        if let Some(m) = pattern.captures(&query) {
            let after = m.get(2).map_or(&[][..], |g| g.as_bytes());
            query = [&m[1], after].concat();
        }
    }
    query.make_ascii_lowercase();
    if query.is_empty() {
        return None;
    }
    let mut args: Vec<(&[u8], Option<&[u8]>)> = query
        .split(|&b| b == b'&')
        .map(|arg| match arg.iter().position(|&b| b == b'=') {
            Some(at) => (&arg[..at], Some(&arg[at + 1..])),
            None => (arg, None),
        })
        .collect();
    args.sort();
    let mut sorted = Vec::with_capacity(query.len());
    for (i, (key, value)) in args.iter().enumerate() {
        if i > 0 {
            sorted.push(b'&');
        }
        sorted.extend_from_slice(key);
        if let Some(value) = value {
            sorted.push(b'=');
            sorted.extend_from_slice(value);
        }
    }
    String::from_utf8(sorted).ok()
}

/// Percent escapes undone until none is left.
fn unescape_repeatedly(bytes: &[u8]) -> Vec<u8> {
    let mut bytes = bytes.to_vec();
    loop {
        let undone: Vec<u8> = percent_encoding::percent_decode(&bytes).collect();
        if undone == bytes {
            return bytes;
        }
        bytes = undone;
    }
}

/// Bytes outside printable ASCII, `%` and `#` escaped, the rest kept.
fn escape_once(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if b <= b' ' || b >= 0x7f || b == b'%' || b == b'#' {
            out.push_str(&format!("%{b:02X}"));
        } else {
            out.push(char::from(b));
        }
    }
    out
}

/// `.` and `..` segments resolved, empty segments dropped but a trailing one.
fn normalize_path(path: &[u8]) -> Vec<u8> {
    if path.is_empty() {
        return b"/".to_vec();
    }
    let mut kept: Vec<&[u8]> = Vec::new();
    for segment in path.split(|&b| b == b'/').skip(1) {
        match segment {
            b"." => {}
            b".." if !kept.is_empty() => {
                kept.pop();
            }
            _ => kept.push(segment),
        }
    }
    let mut out = b"/".to_vec();
    if let Some((last, before)) = kept.split_last() {
        for segment in before.iter().filter(|s| !s.is_empty()) {
            out.extend_from_slice(segment);
            out.push(b'/');
        }
        out.extend_from_slice(last);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::surt;

    /// Each URL and the key Python's `surt` package (0.3.1, pywb's) gives it.
    const KEYS: [(&str, &str); 16] = [
        (
            "http://127.0.0.1:8080/a/B?z=1&a=2",
            "1,0,0,127:8080)/a/b?a=2&z=1",
        ),
        ("https://www.Example.com/", "com,example)/"),
        ("http://www2.example.com:80/x/", "com,example)/x"),
        ("https://example.com:443/a/?", "com,example)/a"),
        (
            "http://example.com/a;jsessionid=0123456789abcdef0123456789abcdef?b=1&A=2#frag",
            "com,example)/a;jsessionid=0123456789abcdef0123456789abcdef?a=2&b=1",
        ),
        ("http://example.com/%7Efoo/a%20b", "com,example)/~foo/a%20b"),
        ("http://user:pw@example.com/", "com,example)/"),
        ("http://example.com", "com,example)/"),
        ("http://example.com/?", "com,example)/"),
        ("http://xn--fsq.com/中文", "com,xn--fsq)/%e4%b8%ad%e6%96%87"),
        ("http://example.com/a//b/../c", "com,example)/a/c"),
        ("http://EXAMPLE.com./x", "com,example)/x"),
        ("http://example.com/a?b&a=", "com,example)/a?a=&b"),
        (
            "http://example.com/?PHPSESSID=0123456789abcdef0123456789abcdef&x=1",
            "com,example)/?x=1",
        ),
        ("http://www.example.com/x?sid=1", "com,example)/x?sid=1"),
        ("dns:example.com", "dns:example.com"),
    ];

    #[test]
    fn a_key_is_the_one_pywb_looks_up() {
        for (url, key) in KEYS {
            assert_eq!(surt(url), key, "{url}");
        }
    }
}
