//! What a page's head says of it in its `meta` tags: its type, address, pictures,
//! title, description, language, and the metas that name its site.

use super::render::collapse_whitespace;
use super::structured::structured_to_text;
use super::tree::{MAX_HEAD_LINKS, Page};

impl Page {
    pub(super) fn read_meta(&mut self, element: &scraper::node::Element) {
        let content = || {
            element
                .attr("content")
                .map(str::trim)
                .filter(|c| !c.is_empty())
        };
        let property = element
            .attr("property")
            .or_else(|| element.attr("name"))
            .unwrap_or("");
        if property.eq_ignore_ascii_case("og:type") && self.og_type.is_none() {
            self.og_type = content().map(|t| t.trim().to_ascii_lowercase());
        }
        if property.eq_ignore_ascii_case("og:url") && self.canonical.is_none() {
            self.canonical = content().map(str::to_string);
        }
        let media = ["og:image", "og:image:url", "og:video", "og:video:url"];
        if media.iter().any(|m| property.eq_ignore_ascii_case(m))
            && self.media.len() < MAX_HEAD_LINKS
        {
            if let Some(url) = content() {
                self.media.push(url.to_string());
            }
        }
        if super::site::is_site_meta(property) && self.site_metas.len() < MAX_HEAD_LINKS {
            if let Some(value) = content() {
                self.site_metas
                    .push(format!("{}={value}", property.to_ascii_lowercase()));
            }
        }
        if property.eq_ignore_ascii_case("og:title") && self.og_title.is_none() {
            self.og_title = content().map(collapse_whitespace);
        }
        if property.eq_ignore_ascii_case("og:description")
            || (property.eq_ignore_ascii_case("description") && self.description.is_none())
        {
            if let Some(text) = content() {
                self.description = Some(structured_to_text(text));
            }
        }
        if let Some(equiv) = element.attr("http-equiv") {
            if equiv.eq_ignore_ascii_case("content-language") && self.language.is_none() {
                self.language = content().map(str::to_string);
            }
        }
    }
}
