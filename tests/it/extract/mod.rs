//! Decoding and main-content extraction on fixture pages the project ships (one per page
//! type), pages encoded in each common charset, and hostile inputs.

use crawldedup::content::decode::{CharsetSource, decode};
use crawldedup::content::{Extracted, extract, extract_bytes};
use proptest::prelude::*;
use url::Url;

mod blocks;
mod charsets;
mod hostile;
mod names;
mod page_types;
mod story;

fn fixture(name: &str) -> Extracted {
    let path = format!(
        "{}/tests/fixtures/pages/{name}.html",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).unwrap();
    let url = Url::parse(&format!("https://example.test/{name}/page")).unwrap();
    extract_bytes(&bytes, Some("text/html"), Some(&url))
}

fn assert_has(out: &Extracted, wanted: &[&str]) {
    for w in wanted {
        assert!(out.text.contains(w), "missing {w:?} in:\n{}", out.text);
    }
}

fn assert_lacks(out: &Extracted, unwanted: &[&str]) {
    for u in unwanted {
        assert!(!out.text.contains(u), "unwanted {u:?} in:\n{}", out.text);
    }
}
