//! The site a page belongs to, as the page itself tells it, for a page read without its
//! URL (a saved HTML file, a body handed to the stage under a name that is not a URL).
//!
//! What a site repeats on its pages is learned per host ([`crate::dedup::template`]), and two
//! pages of one host are compared on their own lines: without a host, a page has neither, and
//! two briefs inside the same rails of latest posts, latest comments and categories look
//! alike to any measure of their whole text. Most saved pages say where they come from, even
//! without a canonical link: in order,
//!
//! 1. the address the page gives itself (`<link rel="canonical">`, else `og:url`);
//! 2. an absolute `<base href>`;
//! 3. the hosts of the links in its head that point into its own site (its feeds and
//!    language versions, `shortlink`, `prev` and `next`, `home`, `pingback`, `EditURI`,
//!    `search`): the host most of them name;
//! 4. the hosts of its absolute links outside its main content (menus, footers, sidebars,
//!    which link into the site far more than out of it): the host most of them name, when
//!    it is at least [`MIN_CHROME_VOTES`] of them and more than [`MIN_CHROME_SHARE`] of the
//!    absolute ones.
//!
//! 5. the hosts its Open Graph picture and video name (`og:image`, `og:video`), most often
//!    served from its own site.
//!
//! 6. the metas in its head that name its site, as every page of the site repeats them
//!    ([`SITE_METAS`]: the owner's verification tokens for search engines and social
//!    networks, the site's name for apps and link previews), the first of them in that
//!    order, under a name of `.invalid` (`meta-1a2b3c4d.invalid`);
//!
//! 7. when it names no host at all (relative links only), its menus: the short links
//!    outside its main content ("Home", "News", "Contact", "Impressum") that every page of
//!    a site repeats. The site is then named by the lowest key of their texts, a name under
//!    `.invalid` (`menu-1a2b3c4d.invalid`): pages with the same menus get the same name, as
//!    a MinHash of the menu's items, and a page whose menu differs from its site's in a few
//!    of many items gets it most of the time. A page with fewer such links outside its
//!    main content is named the same way by all its links' items: a book's front page
//!    whose table of contents is what extraction keeps (under the same name as when the
//!    contents are left around a longer text), where two briefs above the same contents
//!    were one text to any measure of the whole.
//!
//! A host counts by its registrable domain (the public suffix list's), so that a portal's
//! channels (`news.`, `sports.`, `www.`) are one site, and the site is that domain. A page
//! that names no host in any of these (relative links only) has no site.

use std::collections::HashMap;

use url::Url;

use super::links::RawLinks;

/// `rel` values of a head `<link>` that point into the page's own site (the markup pass keeps
/// such links for it, `content::strip`).
pub(crate) const SELF_RELS: &[&str] = &[
    "alternate",
    "shortlink",
    "prev",
    "next",
    "home",
    "index",
    "start",
    "first",
    "last",
    "contents",
    "pingback",
    "edituri",
    "search",
];

/// Whether a head `<link>` with this `rel` points into the page's own site.
pub(super) fn is_self_rel(rel: &str) -> bool {
    rel.split_ascii_whitespace()
        .any(|r| SELF_RELS.iter().any(|s| r.eq_ignore_ascii_case(s)))
}

/// Links outside the main content that must name a host for it to be the page's site: one
/// absolute link (a share button, a partner's logo) says nothing.
pub const MIN_CHROME_VOTES: usize = 3;

/// The share of the absolute links outside the main content that the site's host must
/// have: more than this (a page's menus link into its site more than anywhere else).
pub const MIN_CHROME_SHARE: f64 = 0.3;

/// The site of an absolute http(s) href (or a scheme-relative `//host/...` one): the
/// registrable domain of its host (`news.sina.com.cn` and `www.sina.com.cn` are both
/// `sina.com.cn`, by the public suffix list), in lower case; the host itself when it has
/// none (an address, `localhost`).
fn host_of(href: &str) -> Option<String> {
    let href = href.trim();
    let url = if let Some(rest) = href.strip_prefix("//") {
        Url::parse(&format!("http://{rest}")).ok()?
    } else {
        let url = Url::parse(href).ok()?;
        if !matches!(url.scheme(), "http" | "https") {
            return None;
        }
        url
    };
    let host = url
        .host_str()
        .filter(|h| !h.is_empty())?
        .to_ascii_lowercase();
    Some(match psl::domain_str(&host) {
        Some(domain) => domain.to_string(),
        None => host,
    })
}

/// The host most of `hosts` name, with its count and the count of all.
fn plurality(hosts: impl Iterator<Item = String>) -> Option<(String, usize, usize)> {
    let mut counts: HashMap<String, usize> = HashMap::new();
    let mut all = 0;
    let mut order = Vec::new();
    for host in hosts {
        all += 1;
        let count = counts.entry(host.clone()).or_insert(0);
        if *count == 0 {
            order.push(host);
        }
        *count += 1;
    }
    // The first named among the most named: the same page always gives the same host.
    let best = order
        .into_iter()
        .fold(None::<(String, usize)>, |best, host| {
            let n = counts[&host];
            match best {
                Some((_, m)) if m >= n => best,
                _ => Some((host, n)),
            }
        })?;
    Some((best.0, best.1, all))
}

/// The page's site (see the [module documentation](self)): a host, in lower case.
pub(super) fn site(
    canonical: Option<&str>,
    base_href: Option<&str>,
    head_links: &[String],
    links: &RawLinks,
    media: &[String],
    site_metas: &[String],
) -> Option<String> {
    if let Some(host) = canonical.and_then(host_of) {
        return Some(host);
    }
    if let Some(host) = base_href.and_then(host_of) {
        return Some(host);
    }
    if let Some((host, _, _)) = plurality(head_links.iter().filter_map(|h| host_of(h))) {
        return Some(host);
    }
    let chrome = plurality(
        links
            .iter()
            .filter(|l| !l.in_main && !l.nofollow)
            .filter_map(|l| host_of(l.href)),
    );
    if let Some((host, votes, all)) = chrome {
        if votes >= MIN_CHROME_VOTES && votes as f64 > MIN_CHROME_SHARE * all as f64 {
            return Some(host);
        }
    }
    if let Some((host, _, _)) = plurality(media.iter().filter_map(|h| host_of(h))) {
        return Some(host);
    }
    meta_site(site_metas).or_else(|| menu_site(links))
}

/// The head's metas that name a page's site, most telling first: tokens that prove the
/// site's ownership to a search engine or a social network (one site's own), then the
/// site's name as apps and link previews show it.
pub(crate) const SITE_METAS: &[&str] = &[
    "google-site-verification",
    "baidu-site-verification",
    "msvalidate.01",
    "yandex-verification",
    "facebook-domain-verification",
    "p:domain_verify",
    "og:site_name",
    "application-name",
    "apple-mobile-web-app-title",
    "twitter:site",
];

/// Whether a meta's `name` or `property` is one of [`SITE_METAS`].
pub(super) fn is_site_meta(name: &str) -> bool {
    SITE_METAS.iter().any(|m| name.eq_ignore_ascii_case(m))
}

/// The site named by the first of [`SITE_METAS`] the page's head has (`name=content`).
fn meta_site(site_metas: &[String]) -> Option<String> {
    let first = SITE_METAS.iter().find_map(|meta| {
        site_metas
            .iter()
            .find(|m| m.split_once('=').is_some_and(|(name, _)| name == *meta))
    })?;
    let key = item_key(first);
    Some(format!("meta-{key:08x}.invalid"))
}

/// Words a link's text has at most to be a menu's item, not a headline.
pub const MENU_ITEM_WORDS: usize = 4;

/// Distinct menu items a page must have for them to name its site: fewer are a "read more"
/// and a "back to top", not a menu.
pub const MIN_MENU_ITEMS: usize = 5;

/// The site named by a page's menus (see the [module documentation](self)); when too few
/// of its links are outside its main content, by all its links' items.
fn menu_site(links: &RawLinks) -> Option<String> {
    // One name either way: whether a table of contents is taken as the main text or left
    // around it, a page whose links are all of it names the same site.
    menu_keys(links, false)
        .or_else(|| menu_keys(links, true))
        .map(|key| format!("menu-{key:08x}.invalid"))
}

/// The lowest key of the items of a page's links outside its main content (or of all its
/// links, `with_main`), when there are [`MIN_MENU_ITEMS`] of them.
fn menu_keys(links: &RawLinks, with_main: bool) -> Option<u32> {
    let mut keys: Vec<u32> = links
        .iter()
        .filter(|l| (with_main || !l.in_main) && crate::text::words(l.text) <= MENU_ITEM_WORDS)
        .filter(|l| !l.text.trim().is_empty())
        .map(|l| item_key(l.text))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    (keys.len() >= MIN_MENU_ITEMS).then(|| keys[0])
}

/// The key of a menu item or a site meta: its words in lower case, spaces collapsed.
fn item_key(text: &str) -> u32 {
    let normal: Vec<String> = text.split_whitespace().map(str::to_lowercase).collect();
    xxhash_rust::xxh3::xxh3_64(normal.join(" ").as_bytes()) as u32
}

#[cfg(test)]
mod tests {
    use super::super::extract;

    fn site(html: &str) -> Option<String> {
        extract(html, None).site
    }

    #[test]
    fn a_page_without_a_url_names_its_site_by_its_own_links() {
        let canonical = r#"<html><head><link rel="canonical" href="https://News.Example/a/1"></head><body><p>x</p></body></html>"#;
        assert_eq!(site(canonical).as_deref(), Some("news.example"));
        // A portal's channels are one site.
        let channel = r#"<html><head><meta property="og:url" content="http://sports.portal.com.cn/a/1"></head><body><p>x</p></body></html>"#;
        assert_eq!(site(channel).as_deref(), Some("portal.com.cn"));
        let feed = r#"<html><head><link rel="alternate" type="application/rss+xml" href="http://blog.example/feed"><link rel="stylesheet" href="https://cdn.example/a.css"></head><body><p>x</p></body></html>"#;
        assert_eq!(site(feed).as_deref(), Some("blog.example"));
        // A portal's menus link into its own site; one share button out of it says nothing.
        let menu: String = ["news", "sports", "finance", "tech"]
            .iter()
            .map(|s| format!(r#"<li><a href="http://www.portal.example/{s}/">{s}</a></li>"#))
            .collect();
        let portal = format!(
            r#"<html><body><ul class="nav">{menu}</ul><article><h1>A story of the harbour today</h1><p>The ferry ran again on Friday, the harbour master said, once the swell had dropped enough.</p></article><a href="https://share.example/?u=1">share</a></body></html>"#
        );
        assert_eq!(site(&portal).as_deref(), Some("portal.example"));
        // Relative links, and a picture on the site's own server.
        let picture = r#"<html><head><meta property="og:image" content="https://www.station.example/img/1.jpg"></head><body><a href="/a">a</a><p>x</p></body></html>"#;
        assert_eq!(site(picture).as_deref(), Some("station.example"));
        // Relative links only: named by the menu, the same for every page that has it.
        let page = |story: &str, extra: &str| {
            format!(
                r#"<html><body><ul class="menu"><li><a href="/">Home</a></li><li><a href="/news">News</a></li><li><a href="/sport">Sport</a></li><li><a href="/about">About us</a></li><li><a href="/contact">Contact</a></li>{extra}</ul><article><h1>A story of the harbour today</h1><p>{story}</p></article></body></html>"#
            )
        };
        let one = site(&page(
            "The ferry ran again on Friday, the harbour master said, once the swell had dropped.",
            "",
        ));
        assert!(
            one.as_deref().is_some_and(|s| s.ends_with(".invalid")),
            "{one:?}"
        );
        let other = site(&page(
            "The library opens a reading room for the town archive, with letters and logs.",
            r#"<li><a href="/jobs">Jobs</a></li>"#,
        ));
        assert_eq!(one, other);
        // No host anywhere, but the owner's token for a social network: named by it.
        let token = |story: &str| {
            format!(
                r#"<html><head><meta name="facebook-domain-verification" content="z8uwvx"><meta name="apple-mobile-web-app-title" content="DGV"></head><body><a href="/">Home</a><article><h1>A story</h1><p>{story}</p></article></body></html>"#
            )
        };
        let named = site(&token(
            "The ferry ran again on Friday, the harbour master said.",
        ));
        assert!(
            named.as_deref().is_some_and(|s| s.starts_with("meta-")),
            "{named:?}"
        );
        assert_eq!(
            named,
            site(&token("The library opens a reading room for the town."))
        );
        // Two links are no menu: no site.
        let relative = r#"<html><body><ul><li><a href="/a">a</a></li><li><a href="/b">b</a></li></ul><p>x</p></body></html>"#;
        assert_eq!(site(relative), None);
    }
}
