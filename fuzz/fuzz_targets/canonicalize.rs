//! Canonicalization never panics, and is idempotent: a canonical URL canonicalizes to
//! itself (so a URL found again in canonical form is the same filter key).
#![no_main]

use crawldedup::urls::Canonicalizer;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let input = String::from_utf8_lossy(data);
    let canonicalizer = Canonicalizer::default();
    if let Ok(url) = canonicalizer.canonicalize(&input) {
        let again = canonicalizer
            .canonicalize(url.as_str())
            .unwrap_or_else(|e| panic!("{input:?} -> {url} is refused: {e}"));
        assert_eq!(again.as_str(), url.as_str(), "from {input:?}");
    }
});
