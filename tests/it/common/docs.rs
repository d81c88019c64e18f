//! Index documents for the window tests: each with a simhash, digest and sketch of its own.

use crawldedup::fingerprint::{Digest, Simhash, Sketch};
use crawldedup::index::DocRecord;

/// Document `i`: a simhash, digest and sketch of its own (no two documents alike).
pub fn doc(i: u64) -> DocRecord {
    let seed = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5bd1_e995;
    let features: Vec<u64> = (0..200u64)
        .map(|j| {
            (seed ^ j << 40)
                .wrapping_mul(0xff51_afd7_ed55_8ccd)
                .rotate_left(23)
        })
        .collect();
    DocRecord {
        simhash: Simhash(seed.rotate_left(17) ^ i),
        digest: Digest(u128::from(i) << 64 | u128::from(seed)),
        text_chars: 2_000,
        name: format!("https://example.com/{i}"),
        sketch: Sketch::from_distinct(&features),
        ..DocRecord::default()
    }
}
