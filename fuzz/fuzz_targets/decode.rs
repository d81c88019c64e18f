//! Decoding a body of any bytes under any declared charset never panics, and a UTF-8 body's
//! byte-order mark never reaches the text (a second U+FEFF after it is text, as WHATWG
//! decoding keeps it).
#![no_main]

use crawldedup::content::decode;
use libfuzzer_sys::fuzz_target;

const CONTENT_TYPES: [Option<&str>; 6] = [
    None,
    Some("text/html"),
    Some("text/html; charset=utf-8"),
    Some("text/html; charset=\"windows-1252\""),
    Some("text/html; charset=shift_jis"),
    Some("text/html; charset=x-unknown-charset"),
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    let content_type = CONTENT_TYPES[usize::from(pick) % CONTENT_TYPES.len()];
    let decoded = decode(body, content_type, Some("http://fuzz.test/page.html"));
    const BOM: &[u8] = b"\xef\xbb\xbf";
    if decoded.encoding.name() == "UTF-8" && decoded.text.starts_with('\u{feff}') {
        let after_bom = body.strip_prefix(BOM).unwrap_or(body);
        assert!(after_bom.starts_with(BOM), "the byte-order mark was kept");
    }
});
