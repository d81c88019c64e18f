//! Extraction of any bytes as HTML never panics, and its main text fingerprints.
#![no_main]

use crawldedup::Fingerprint;
use crawldedup::content::extract_bytes;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let base = url::Url::parse("http://fuzz.test/a/b.html").unwrap();
    let extracted = extract_bytes(data, Some("text/html"), Some(&base));
    let _ = Fingerprint::of(&extracted.text);
});
