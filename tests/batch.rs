//! A batch of documents decided at once gets exactly the decisions of one call per
//! document in the same order: against the stored documents and against the batch's own
//! earlier ones (exact and near copies, tiny texts confirmed on their shingle sets).

use crawldedup::Fingerprint;
use crawldedup::index::{Decision, DocRecord, IndexConfig, SimhashIndex};

fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

const WORDS: [&str; 40] = [
    "the",
    "council",
    "met",
    "on",
    "tuesday",
    "to",
    "discuss",
    "harbour",
    "budget",
    "and",
    "new",
    "bakery",
    "opened",
    "street",
    "morning",
    "queue",
    "reached",
    "post",
    "office",
    "owners",
    "trained",
    "bread",
    "pier",
    "closed",
    "storm",
    "engineers",
    "deck",
    "replaced",
    "fishermen",
    "boats",
    "quay",
    "grant",
    "report",
    "chair",
    "plan",
    "river",
    "bridge",
    "school",
    "library",
    "market",
];

/// Text `i`: `words` words drawn by a hash of `i`.
fn text(i: u64, words: u64) -> String {
    (0..words)
        .map(|j| WORDS[(mix(i * 1000 + j) % WORDS.len() as u64) as usize])
        .collect::<Vec<_>>()
        .join(" ")
}

/// Item `i` of the stream: a new text (long, or tiny one time in five), or an exact or
/// edited copy of an earlier item, often one close by (in the same batch).
fn item(i: u64) -> String {
    let earlier = |i: u64| {
        if mix(i ^ 7) % 2 == 0 {
            i - 1 - mix(i ^ 3) % i.min(20)
        } else {
            mix(i ^ 5) % i
        }
    };
    match (i > 0).then(|| mix(i ^ 11) % 6) {
        Some(0) => item(earlier(i)),
        Some(1) => {
            let mut words: Vec<String> = item(earlier(i)).split(' ').map(str::to_string).collect();
            let at = (mix(i ^ 13) % words.len() as u64) as usize;
            words[at] = "changed".to_string();
            words.join(" ")
        }
        _ if mix(i ^ 17) % 5 == 0 => text(i, 6 + mix(i) % 10),
        _ => text(i, 150 + mix(i) % 300),
    }
}

fn record(i: u64) -> DocRecord {
    let text = item(i);
    DocRecord::new(&format!("doc-{i}"), &text, &Fingerprint::of(&text))
}

#[test]
fn a_batch_is_decided_as_one_call_per_document_in_its_order() {
    let config = IndexConfig {
        expected: 100_000,
        ..IndexConfig::default()
    };
    let one = tempfile::tempdir().unwrap();
    let batched = tempfile::tempdir().unwrap();
    let one = SimhashIndex::open(one.path(), config).unwrap();
    let batched = SimhashIndex::open(batched.path(), config).unwrap();
    let mut i = 0u64;
    let (mut duplicates, mut within) = (0, 0);
    // Batches of several sizes, so that copies fall in the same batch and in earlier ones.
    for size in [1usize, 7, 300, 2_000, 64, 3_000, 500] {
        let first_id = one.len();
        let records: Vec<DocRecord> = (i..i + size as u64).map(record).collect();
        i += size as u64;
        let want: Vec<_> = records
            .iter()
            .map(|r| one.check_and_insert_nearest(r.clone()).unwrap())
            .collect();
        let got = batched.check_and_insert_batch(records).unwrap();
        within += want
            .iter()
            .filter(|(d, _)| match d {
                Decision::Exact(of) | Decision::Near { of, .. } => *of >= first_id,
                Decision::Unique(_) => false,
            })
            .count();
        assert_eq!(got, want, "a batch of {size} ending at {i}");
        duplicates += want
            .iter()
            .filter(|(d, _)| !matches!(d, Decision::Unique(_)))
            .count();
    }
    assert!(
        duplicates > 1_000,
        "{duplicates} duplicates: the stream must hold copies"
    );
    assert!(
        within > 300,
        "{within} duplicates of documents of their own batch"
    );
    assert_eq!(batched.len(), one.len());
    assert_eq!(batched.candidates_refused(), one.candidates_refused());
    // The two indexes hold the same documents: every later probe is answered alike.
    for p in 0..500 {
        let probe = record(i + p);
        assert_eq!(
            batched.find(&probe).unwrap(),
            one.find(&probe).unwrap(),
            "{p}"
        );
    }
}
