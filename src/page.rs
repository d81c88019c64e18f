//! One page, one path: the preparation every caller runs before the decision.
//!
//! ```text
//! body bytes, content type, URL
//!   -> is_page          HTML or XHTML by its content type (or none given), not binary bytes
//!   -> content::decode  bytes -> UTF-8 (declared, sniffed or detected charset)
//!   -> content::extract main text without boilerplate, title, language, links
//!   -> Fingerprint::of  exact digest, simhash and sketch of the main text
//!   = Prepared          (no state touched: run it on any thread)
//!   -> Dedup::decide    the index's answer, recorded in one atomic step
//! ```
//!
//! The crawler (`crawldedup crawl`), the sidecar (`crawldedup serve`), the spider adapter
//! and [`Dedup::check_page`](crate::Dedup::check_page) all call [`prepare`] and then
//! [`Dedup::decide`](crate::Dedup::decide); so the rule of what is a page lives here alone.
//! A caller that wants the preparation off its decision loop (a crawler preparing pages on
//! its fetch workers) calls the two halves itself:
//!
//! ```
//! use crawldedup::{Dedup, PageVerdict, page};
//!
//! let state = tempfile::tempdir()?;
//! let dedup = Dedup::open(state.path(), &crawldedup::Config::default())?;
//! let url = url::Url::parse("https://example.com/story")?;
//! let body = b"<html><body><article><p>The library opens a reading room for the \
//!     harbour archive on Friday: letters, ship logs and photographs from two centuries, \
//!     catalogued by volunteers over the winter and shown for the first time.</p>\
//!     <p><a href=/archive>More from the archive</a></p></article></body></html>";
//!
//! // On any thread, without the stage:
//! let prepared = page::prepare(body, Some("text/html"), Some(&url)).expect("an HTML page");
//! assert!(prepared.extracted.text.starts_with("The library opens"));
//! assert_eq!(prepared.links()[0].url, "https://example.com/archive");
//!
//! // Then the decision, in one atomic step:
//! assert!(matches!(dedup.decide(url.as_str(), &prepared)?, PageVerdict::Unique { .. }));
//!
//! // Not a page: nothing to decide.
//! assert!(page::prepare(b"%PDF-1.7 ...", Some("application/pdf"), None).is_none());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use url::Url;

use crate::content::{self, Extracted, Link, RawLinks};
use crate::fingerprint::Fingerprint;

/// A page decoded, extracted and fingerprinted: what [`Dedup::decide`](crate::Dedup::decide)
/// needs, and what a crawler stores or follows.
#[derive(Debug)]
pub struct Prepared {
    /// The main content (title, text, language, description). `links` is left empty: see
    /// [`Prepared::links`].
    pub extracted: Extracted,
    /// The fingerprint of the text compared ([`Prepared::compared_text`]): `extracted.text`
    /// unless the host's template was dropped from one of them.
    pub fingerprint: Fingerprint,
    links: RawLinks,
    /// The text of the whole page outside its boilerplate by role, when it is more than
    /// the main text: see [`Prepared::page_text`].
    page_text: Option<String>,
    /// What the host's template ([`crate::dedup::template`]) did, once the stage looked.
    pub(crate) template: Template,
}

/// What dropping a host's template did to a [`Prepared`] page.
#[derive(Debug, Default)]
pub(crate) enum Template {
    /// Not looked at yet.
    #[default]
    Unchecked,
    /// Looked at: nothing of the page is its host's template.
    Checked,
    /// The text compared differs from `extracted.text`: `extracted.text` is the page's
    /// whole text (kept, `dedup.store_template_text`), this the text without the template;
    /// with the whole text's fingerprint.
    Compared(String, Fingerprint),
    /// `extracted.text` is without the template; this was the whole text, and its
    /// fingerprint.
    Stripped(String, Fingerprint),
}

impl Prepared {
    /// Every followable link of the page, resolved to an absolute http(s) URL, in
    /// document order. Resolving costs a URL parse per link, so it happens only when asked.
    pub fn links(&self) -> Vec<Link> {
        self.links.resolve()
    }

    /// The extraction and the links as the page writes them, taken apart once the page is
    /// decided: the crawler resolves and canonicalizes the links in one step.
    #[cfg_attr(not(feature = "crawler"), allow(dead_code))]
    pub(crate) fn into_parts(self) -> (Extracted, RawLinks) {
        (self.extracted, self.links)
    }

    /// The text that is fingerprinted and compared: the main text without its host's
    /// template.
    pub fn compared_text(&self) -> &str {
        match &self.template {
            Template::Compared(text, _) => text,
            _ => &self.extracted.text,
        }
    }

    /// The page's whole main text, its host's template included.
    pub fn whole_text(&self) -> &str {
        match &self.template {
            Template::Stripped(text, _) => text,
            _ => &self.extracted.text,
        }
    }

    /// The text of the whole page outside its menus, headers, footers and other
    /// boilerplate by role, whichever block the main text was taken from (with a
    /// structured-data text that stood in for the main text): the text a page's lines are
    /// compared on with the other pages of its host, and its host's template learned from
    /// ([`crate::dedup::template`]). The main text when there is nothing more.
    pub fn page_text(&self) -> &str {
        self.page_text
            .as_deref()
            .unwrap_or_else(|| self.whole_text())
    }

    /// The fingerprint of the page's whole main text, when it is not the one compared.
    pub(crate) fn whole_fingerprint(&self) -> Option<&Fingerprint> {
        match &self.template {
            Template::Compared(_, whole) | Template::Stripped(_, whole) => Some(whole),
            _ => None,
        }
    }

    /// The main text alone, for a caller that extracted it itself (the sidecar's `text`).
    pub fn from_text(text: String) -> Prepared {
        let fingerprint = Fingerprint::of(&text);
        Prepared {
            extracted: Extracted {
                text,
                ..Extracted::default()
            },
            fingerprint,
            links: RawLinks::default(),
            page_text: None,
            template: Template::Unchecked,
        }
    }
}

/// Whether a body is a page to decide: HTML or XHTML by its content type (no content type
/// counts as HTML), and not binary bytes whatever the type says.
pub fn is_page(content_type: Option<&str>, body: &[u8]) -> bool {
    content::decode::is_html_content_type(content_type, true)
        && !content::decode::looks_binary(body)
}

/// Decodes, extracts and fingerprints a body; `None` when it is not a page ([`is_page`]).
/// `url` is the page's address: it resolves relative links and names the page in
/// charset detection; without it only absolute links resolve.
pub fn prepare(body: &[u8], content_type: Option<&str>, url: Option<&Url>) -> Option<Prepared> {
    if !is_page(content_type, body) {
        return None;
    }
    let (extracted, links, page_text) = content::extract_bytes_unresolved(body, content_type, url);
    let fingerprint = Fingerprint::of(&extracted.text);
    Some(Prepared {
        extracted,
        fingerprint,
        links,
        page_text,
        template: Template::Unchecked,
    })
}
