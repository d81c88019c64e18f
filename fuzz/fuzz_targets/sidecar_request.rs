//! The sidecar reads any request body without panicking; a refusal is a 400 or 413 with a
//! one-line message.
#![no_main]

use crawldedup::adapters::serve::read_request;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    let route = if pick % 2 == 0 {
        "/v1/urls/check"
    } else {
        "/v1/pages/check"
    };
    if let Err((status, message)) = read_request(route, body) {
        assert!(status == 400 || status == 413, "{status} {message}");
        assert!(!message.contains('\n'), "{message:?}");
    }
});
