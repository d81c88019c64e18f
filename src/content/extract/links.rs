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
    /// are left out.
    pub(crate) fn resolve(&self) -> Vec<Link> {
        let mut links = Vec::with_capacity(self.items.len());
        for link in self.iter() {
            let resolved = match &self.base {
                Some(base) => base.join(link.href),
                None => Url::parse(link.href),
            };
            let Ok(mut resolved) = resolved else {
                continue;
            };
            if !matches!(resolved.scheme(), "http" | "https") {
                continue;
            }
            resolved.set_fragment(None);
            links.push(Link {
                url: resolved.into(),
                text: link.text.to_string(),
                in_main: link.in_main,
                nofollow: link.nofollow,
            });
        }
        links
    }
}
