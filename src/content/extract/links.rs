//! A page's links as it writes them, resolved only when asked.

use url::Url;

use super::Link;

/// A page's links as written in it (`href` not yet resolved), with the base to resolve them
/// against. All hrefs and anchor texts share one buffer.
#[derive(Debug, Default)]
pub(crate) struct RawLinks {
    pub(super) base: Option<Url>,
    pub(super) buffer: String,
    pub(super) items: Vec<RawLink>,
}

#[derive(Debug)]
pub(super) struct RawLink {
    pub(super) href_end: u32,
    pub(super) text_end: u32,
    pub(super) in_main: bool,
    pub(super) nofollow: bool,
}

/// One link of [`RawLinks`].
pub(crate) struct RawLinkRef<'a> {
    /// The `href` attribute, trimmed (never empty, never a bare fragment).
    pub href: &'a str,
    /// The anchor text, whitespace collapsed.
    pub text: &'a str,
    /// True when the link sits inside the main content.
    pub in_main: bool,
    /// True when the link carries `rel="nofollow"`.
    pub nofollow: bool,
}

impl RawLinks {
    /// What relative hrefs resolve against: `<base href>` resolved against the page URL,
    /// else the page URL; `None` when the page has no URL (only absolute hrefs resolve).
    #[cfg_attr(not(feature = "crawler"), allow(dead_code))]
    pub(crate) fn base(&self) -> Option<&Url> {
        self.base.as_ref()
    }

    /// The links in document order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = RawLinkRef<'_>> {
        let mut start = 0;
        self.items.iter().map(move |item| {
            let (href_end, text_end) = (item.href_end as usize, item.text_end as usize);
            let link = RawLinkRef {
                href: &self.buffer[start..href_end],
                text: &self.buffer[href_end..text_end],
                in_main: item.in_main,
                nofollow: item.nofollow,
            };
            start = text_end;
            link
        })
    }

    /// Resolves every href to an absolute http(s) URL without its fragment; the others
    /// are left out. An href the page repeats (a menu and a footer often share a third of
    /// a page's links) is resolved once: the same href against the same base always gives
    /// the same URL.
    pub(crate) fn resolve(&self) -> Vec<Link> {
        let mut links: Vec<Link> = Vec::with_capacity(self.items.len());
        // Each href seen so far: the index in `links` of its URL, or `None` when it does not
        // resolve to an http(s) URL.
        let mut seen: HrefMap<'_> = HrefMap::with_capacity_and_hasher(
            self.items.len(),
            xxhash_rust::xxh3::Xxh3DefaultBuilder,
        );
        for link in self.iter() {
            let url = match seen.get(link.href) {
                Some(Some(first)) => links[*first].url.clone(),
                Some(None) => continue,
                None => match self.resolve_one(link.href) {
                    Some(url) => {
                        seen.insert(link.href, Some(links.len()));
                        url
                    }
                    None => {
                        seen.insert(link.href, None);
                        continue;
                    }
                },
            };
            links.push(Link {
                url,
                text: link.text.to_string(),
                in_main: link.in_main,
                nofollow: link.nofollow,
            });
        }
        links
    }

    /// `href` resolved against the base as an absolute http(s) URL without its fragment;
    /// `None` when it does not resolve or has another scheme.
    fn resolve_one(&self, href: &str) -> Option<String> {
        let resolved = match &self.base {
            Some(base) => base.join(href),
            None => Url::parse(href),
        };
        let mut resolved = resolved.ok()?;
        if !matches!(resolved.scheme(), "http" | "https") {
            return None;
        }
        resolved.set_fragment(None);
        Some(resolved.into())
    }
}

/// Hrefs to what they resolved to, hashed with xxh3 (SipHash costs several times as much
/// on URL-long keys).
type HrefMap<'a> =
    std::collections::HashMap<&'a str, Option<usize>, xxhash_rust::xxh3::Xxh3DefaultBuilder>;
