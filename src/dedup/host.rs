//! A page name's host for the template stage, which asks for it up to three times a page
//! (to drop the host's template, to profile the page's lines, to learn): read without a
//! URL parse when the name is in the plain form the crawl writes its URLs in
//! ([`plain_host`]), and borrowed from the name.

use std::borrow::Cow;

/// The host of `name` as `url` parses it, in lower case ([`super::template::host_of`]),
/// borrowed from `name` when [`plain_host`] reads it.
pub(super) fn host_in(name: &str) -> Option<Cow<'_, str>> {
    if let Some(host) = plain_host(name) {
        return Some(Cow::Borrowed(host));
    }
    let url = url::Url::parse(name).ok()?;
    url.host_str().map(|h| Cow::Owned(h.to_ascii_lowercase()))
}

/// The host of `name` when `url` would parse it to the same bytes: `http://` or `https://`,
/// then a host whose labels are non-empty runs of `a-z`, `0-9` and `-`, none of them
/// `xn--` (IDNA) and the last not starting with a digit (which `url` reads as IPv4), or four
/// decimal numbers up to 255 without leading zeros; then nothing, or a port of at most five
/// digits up to 65535; then the end, a slash, a backslash, `?` or `#`. `None` for anything
/// else, which goes to the parser.
pub(super) fn plain_host(name: &str) -> Option<&str> {
    let rest = name
        .strip_prefix("https://")
        .or_else(|| name.strip_prefix("http://"))?;
    let end = rest.find(['/', '\\', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let (host, port) = match authority.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (authority, None),
    };
    // An empty port is no port; a port is at most 65535 (`url` refuses more).
    if let Some(port) = port.filter(|p| !p.is_empty()) {
        let digits = port.len() <= 5 && port.bytes().all(|b| b.is_ascii_digit());
        if !digits || port.parse::<u32>().ok()? > 65535 {
            return None;
        }
    }
    (is_plain_domain(host) || is_dotted_ipv4(host)).then_some(host)
}

fn is_plain_domain(host: &str) -> bool {
    let label_ok = |label: &str| {
        !label.is_empty()
            && !label.starts_with("xn--")
            && label
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    };
    host.split('.').all(label_ok)
        && host
            .rsplit('.')
            .next()
            .is_some_and(|last| !last.as_bytes()[0].is_ascii_digit())
}

fn is_dotted_ipv4(host: &str) -> bool {
    // Digits only (a parse alone takes a leading `+`), no leading zero, at most 255.
    let part_ok = |part: &str| {
        part.bytes().all(|b| b.is_ascii_digit())
            && (part == "0" || !part.starts_with('0'))
            && part.parse::<u8>().is_ok()
    };
    host.split('.').count() == 4 && host.split('.').all(part_ok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What `url` makes of `name`'s host, lower-cased as `host_of` keeps it.
    fn parsed(name: &str) -> Option<String> {
        let url = url::Url::parse(name).ok()?;
        url.host_str().map(str::to_ascii_lowercase)
    }

    fn agrees(name: &str) -> Result<(), String> {
        match plain_host(name) {
            Some(host) if parsed(name).as_deref() != Some(host) => Err(format!(
                "{name:?}: plain {host:?}, parsed {:?}",
                parsed(name)
            )),
            _ => Ok(()),
        }
    }

    #[test]
    fn plain_names_are_read_and_the_rest_go_to_the_parser() {
        for (name, host) in [
            ("https://example.com/a/b?c#d", Some("example.com")),
            ("http://news.example.co.uk", Some("news.example.co.uk")),
            ("http://127.0.0.1:46441/topic/1", Some("127.0.0.1")),
            ("http://a-b.example:8080?x", Some("a-b.example")),
            ("http://example.com:/", Some("example.com")),
            ("http://example.com\\path", Some("example.com")),
            ("HTTP://Example.COM/", None),
            ("http://example.com:99999/", None),
            ("http://127.1/", None),
            ("http://010.0.0.1/", None),
            ("http://256.0.0.1/", None),
            ("http://example.123/", None),
            ("http://xn--bcher-kva.example/", None),
            ("http://example.com./", None),
            ("http://a..b/", None),
            ("http:///example.com/", None),
            ("http://user@example.com/", None),
            ("http://exa\tmple.com/", None),
            ("http://[::1]:80/", None),
            ("ftp://example.com/", None),
            ("page 7", None),
        ] {
            assert_eq!(plain_host(name), host, "{name}");
            assert_eq!(agrees(name), Ok(()));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn a_near_plain_host_is_what_url_parses(
            scheme in "https?://",
            host in prop_oneof![
                "[a-z0-9-]{1,5}(\\.[a-z0-9-]{1,5}){0,3}",
                "[0-9]{1,3}(\\.[0-9]{1,3}){3}",
                "(0x)?[0-9a-f]{1,3}(\\.[0-9]{1,3}){0,4}\\.?",
            ],
            port in "(:[0-9]{0,6})?",
            rest in "([/?#][a-z0-9/?#. ]{0,8})?",
        ) {
            let name = format!("{scheme}{host}{port}{rest}");
            prop_assert_eq!(agrees(&name), Ok(()));
        }

        #[test]
        fn a_plain_host_is_what_url_parses(
            scheme in "https?|HTTPS?|ftp|h",
            slashes in "://|:/|:\\\\\\\\|:///",
            host in "[a-zA-Z0-9.\\-]{0,12}|[0-9]{1,4}(\\.[0-9]{1,4}){0,4}|(xn--)?[a-z0-9%@\\t\\[\\]:.\\-]{0,10}",
            port in "(:[0-9]{0,7})?",
            rest in "([/\\\\?#][a-z0-9/?#. ]{0,8})?",
        ) {
            let name = format!("{scheme}{slashes}{host}{port}{rest}");
            prop_assert_eq!(agrees(&name), Ok(()));
        }
    }
}
