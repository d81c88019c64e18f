//! Documents for the index's tests, each of its own: a random simhash from a seeded
//! stream, a digest of its number, and a sketch that shares nothing with another's.
#![allow(dead_code)]

use crawldedup::fingerprint::{Digest, Simhash, Sketch};
use crawldedup::index::{Decision, DocRecord, SimhashIndex};

/// A deterministic stream of 64-bit values (splitmix64) from `state`.
pub fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The sketch of a text of 200 shingles of its own.
pub fn own_sketch(seed: u64) -> Sketch {
    let features: Vec<u64> = (0..200u64).map(|j| mix(seed << 16 | j)).collect();
    Sketch::from_distinct(&features)
}

/// Document `i`: a random simhash and a sketch of its own.
pub fn doc(i: u64) -> DocRecord {
    doc_of(i, 0)
}

/// Document `i` of the stream `seed` (streams share no document).
pub fn doc_of(i: u64, seed: u64) -> DocRecord {
    let i = i + (seed << 40);
    DocRecord {
        blocks: None,
        simhash: Simhash(mix(i)),
        digest: Digest(u128::from(i)),
        text_chars: 1000,
        name: format!("doc-{i}"),
        sketch: own_sketch(i),
        tiny_set: Vec::new(),
        at: 0,
    }
}

/// Each of documents `0..n` is found in `index` as itself.
pub fn assert_all_found(index: &SimhashIndex, n: u64) {
    for i in 0..n {
        assert_eq!(
            index.find(&doc(i)).unwrap(),
            Some(Decision::Exact(i)),
            "document {i} of {n}"
        );
    }
}
