//! Decoding a body of any bytes under any declared charset never panics and always gives
//! text without a byte-order mark.
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
    assert!(!decoded.text.starts_with('\u{feff}'));
});
