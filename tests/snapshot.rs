//! The snapshot of a cleanly closed index: the next open reads it instead of rebuilding, and
//! answers exactly as a rebuild would; a snapshot older than the database (a crash after
//! more documents were stored) is read with the documents after it added from the database;
//! a snapshot that is damaged, of other rows, past a roll-back, or far behind the database
//! is set aside and the index rebuilt, never read.

use std::path::Path;

use crawldedup::fingerprint::{Digest, Simhash, Sketch};
use crawldedup::index::snapshot::SNAPSHOT_FILE;
use crawldedup::index::{Decision, DocRecord, IndexConfig, SimhashIndex};

/// A deterministic stream of 64-bit values (splitmix64) from `state`.
fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The sketch of a text of 200 shingles of its own.
fn own_sketch(seed: u64) -> Sketch {
    let features: Vec<u64> = (0..200u64).map(|j| mix(seed << 16 | j)).collect();
    Sketch::from_distinct(&features)
}

/// Document `i`: a random simhash and a sketch of its own.
fn doc(i: u64) -> DocRecord {
    doc_of(i, 0)
}

/// Document `i` of the stream `seed` (streams share no document).
fn doc_of(i: u64, seed: u64) -> DocRecord {
    let i = i + (seed << 40);
    DocRecord {
        simhash: Simhash(mix(i)),
        digest: Digest(u128::from(i)),
        text_chars: 1000,
        name: format!("doc-{i}"),
        sketch: own_sketch(i),
        tiny_set: Vec::new(),
        at: 0,
    }
}

/// A near copy of document `i`: `flips` bits of its simhash changed, the same sketch.
fn near_copy(i: u64, flips: u32) -> DocRecord {
    let mut copy = doc(i);
    for f in 0..flips {
        copy.simhash.0 ^= 1 << (mix(i ^ u64::from(f) << 50) % 64);
    }
    copy.digest = Digest(u128::from(i) | 1 << 100);
    copy.name = format!("copy-{i}");
    copy
}

fn config() -> IndexConfig {
    IndexConfig {
        expected: 100_000,
        ..IndexConfig::default()
    }
}

fn open(dir: &Path) -> SimhashIndex {
    SimhashIndex::open(dir, config())
        .unwrap()
        .with_snapshot_min_documents(0)
}

/// Documents `from..to`, each tenth a near copy of an earlier one (refused, so nine in ten
/// are stored).
fn insert(index: &SimhashIndex, from: u64, to: u64) {
    insert_of(index, from, to, 0);
}

/// As [`insert`], from the document stream `seed`.
fn insert_of(index: &SimhashIndex, from: u64, to: u64, seed: u64) {
    for i in from..to {
        let decision = if i % 10 == 9 {
            let mut copy = near_copy(i - 5, 2);
            let original = doc_of(i - 5, seed);
            (copy.simhash, copy.sketch) = (original.simhash, original.sketch);
            copy.simhash.0 ^= 0b101 << (i % 60);
            index.check_and_insert(copy).unwrap()
        } else {
            index.check_and_insert(doc_of(i, seed)).unwrap()
        };
        assert_eq!(
            matches!(decision, Decision::Unique(_)),
            i % 10 != 9,
            "document {i}: {decision:?}"
        );
    }
}

/// A decision and the simhash tables' candidates (id, distance).
type Answer = (Option<Decision>, Vec<(u64, u32)>);

/// What the index answers for stored documents, their near copies (0 to 3 bits away) and
/// strangers: the decision and the simhash tables' candidates.
fn answers(index: &SimhashIndex, stored: u64) -> Vec<Answer> {
    (0..600u64)
        .map(|p| {
            let i = mix(p) % stored;
            let probe = match p % 3 {
                0 => doc(i),
                1 => near_copy(i, (p % 4) as u32),
                _ => doc(stored + 1_000_000 + p),
            };
            (index.find(&probe).unwrap(), index.query(probe.simhash))
        })
        .collect()
}

/// An index of `n` documents, checkpointed and closed (so with a snapshot), and its answers.
fn closed_index(n: u64) -> (tempfile::TempDir, Vec<Answer>) {
    let dir = tempfile::tempdir().unwrap();
    let mut index = open(dir.path());
    insert(&index, 0, n);
    index.checkpoint().unwrap();
    let want = answers(&index, n);
    assert!(index.write_snapshot().unwrap());
    drop(index);
    assert!(dir.path().join(SNAPSHOT_FILE).exists());
    (dir, want)
}

#[test]
fn a_cleanly_closed_index_reopens_from_its_snapshot_and_answers_as_before() {
    let (dir, want) = closed_index(5_000);
    let index = open(dir.path());
    assert!(index.opened_from_snapshot());
    assert_eq!(index.len(), 4_500);
    assert_eq!(answers(&index, 5_000), want);
    // Enough inserts to merge every table: the mapped arrays are copied and extended.
    insert(&index, 5_000, 11_000);
    index.checkpoint().unwrap();
    let want = answers(&index, 11_000);
    drop(index);
    // Rebuilt from sled alone, the index answers the same.
    std::fs::remove_file(dir.path().join(SNAPSHOT_FILE)).unwrap();
    let rebuilt = SimhashIndex::open(dir.path(), config())
        .unwrap()
        .with_snapshot_min_documents(u64::MAX);
    assert!(!rebuilt.opened_from_snapshot());
    assert_eq!(rebuilt.len(), 9_900);
    assert_eq!(answers(&rebuilt, 11_000), want);
}

#[test]
fn a_damaged_snapshot_is_set_aside_and_the_index_rebuilt() {
    for damage in ["header", "rows", "tables", "end", "cut"] {
        let (dir, want) = closed_index(5_000);
        let file = dir.path().join(SNAPSHOT_FILE);
        let mut bytes = std::fs::read(&file).unwrap();
        let len = bytes.len();
        match damage {
            "header" => bytes[20] ^= 0x41,
            "rows" => bytes[(64 << 10) + 1234] ^= 0x01,
            "tables" => bytes[len / 2] ^= 0x10,
            "end" => bytes[len - 3] ^= 0x80,
            _ => bytes.truncate(len * 2 / 3),
        }
        std::fs::write(&file, bytes).unwrap();
        let index = open(dir.path());
        assert!(!index.opened_from_snapshot(), "{damage}");
        assert!(!file.exists(), "{damage}: the damaged snapshot is deleted");
        assert_eq!(index.len(), 4_500, "{damage}");
        assert_eq!(answers(&index, 5_000), want, "{damage}");
    }
}

/// The index in `dir` rebuilt from sled alone (its snapshot deleted, none written on close).
fn rebuilt(dir: &Path) -> SimhashIndex {
    let _ = std::fs::remove_file(dir.join(SNAPSHOT_FILE));
    let index = SimhashIndex::open(dir, config())
        .unwrap()
        .with_snapshot_min_documents(u64::MAX);
    assert!(!index.opened_from_snapshot());
    index
}

#[test]
fn a_snapshot_older_than_the_database_is_read_with_the_documents_after_it() {
    let (dir, _) = closed_index(20_000);
    // More documents, checkpointed; the close writes no snapshot, as a crash would not.
    let want = {
        let index = open(dir.path()).with_snapshot_min_documents(u64::MAX);
        assert!(index.opened_from_snapshot());
        insert(&index, 20_000, 20_100);
        index.checkpoint().unwrap();
        answers(&index, 20_100)
    };
    {
        let index = open(dir.path()).with_snapshot_min_documents(u64::MAX);
        assert!(index.opened_from_snapshot());
        assert_eq!(index.len(), 18_090);
        assert_eq!(answers(&index, 20_100), want);
        // Documents after the last checkpoint, enough for a batch of them to reach sled:
        // the database holds more than the manifest records, and they are kept; being
        // more than a sixteenth of the snapshot's, they are rebuilt with it.
        insert(&index, 20_100, 30_100);
    }
    let index = open(dir.path()).with_snapshot_min_documents(u64::MAX);
    assert!(!index.opened_from_snapshot());
    let len = index.len();
    assert!(
        len >= 18_090 + crawldedup::index::WRITE_BATCH as u64,
        "{len}"
    );
    let want = answers(&index, 20_100);
    drop(index);
    let rebuilt = rebuilt(dir.path());
    assert_eq!(rebuilt.len(), len);
    assert_eq!(answers(&rebuilt, 20_100), want);
}

#[test]
fn a_snapshot_far_behind_the_database_is_set_aside() {
    let (dir, _) = closed_index(5_000);
    {
        let index = open(dir.path()).with_snapshot_min_documents(u64::MAX);
        assert!(index.opened_from_snapshot());
        insert(&index, 5_000, 11_000);
        index.checkpoint().unwrap();
    }
    // 4,500 documents in the snapshot, 5,400 after it (past a sixteenth): rebuilding all
    // is faster.
    let index = open(dir.path());
    assert!(!index.opened_from_snapshot());
    assert!(!dir.path().join(SNAPSHOT_FILE).exists());
    assert_eq!(index.len(), 9_900);
}

#[test]
fn a_snapshot_of_other_rows_is_set_aside() {
    // Two indexes of the same layout and size, of different documents; the second has a
    // few more, so the first's snapshot looks like an older state of it.
    let (first, _) = closed_index(5_000);
    let dir = tempfile::tempdir().unwrap();
    let want = {
        let index = open(dir.path()).with_snapshot_min_documents(u64::MAX);
        insert_of(&index, 0, 5_100, 7);
        index.checkpoint().unwrap();
        answers(&index, 5_100)
    };
    std::fs::copy(
        first.path().join(SNAPSHOT_FILE),
        dir.path().join(SNAPSHOT_FILE),
    )
    .unwrap();
    let index = open(dir.path());
    assert!(!index.opened_from_snapshot());
    assert!(!dir.path().join(SNAPSHOT_FILE).exists());
    assert_eq!(index.len(), 4_590);
    assert_eq!(answers(&index, 5_100), want);
}

#[test]
fn a_roll_back_reads_the_snapshot_only_when_it_is_not_past_the_checkpoint() {
    let (dir, _) = closed_index(5_000);
    {
        let index = open(dir.path()).with_snapshot_min_documents(u64::MAX);
        insert(&index, 5_000, 5_100);
        index.checkpoint().unwrap();
    }
    // Back to 4,550 documents: the snapshot's 4,500 and 50 from sled.
    let index = SimhashIndex::open_at(dir.path(), config(), Some(4_550))
        .unwrap()
        .with_snapshot_min_documents(u64::MAX);
    assert!(index.opened_from_snapshot());
    assert_eq!(index.len(), 4_550);
    let want = answers(&index, 5_000);
    drop(index);
    let again = rebuilt(dir.path());
    assert_eq!(again.len(), 4_550);
    assert_eq!(answers(&again, 5_000), want);
    drop(again);
    // Back past the snapshot: it is set aside.
    let (dir, _) = closed_index(5_000);
    let index = SimhashIndex::open_at(dir.path(), config(), Some(4_000)).unwrap();
    assert!(!index.opened_from_snapshot());
    assert!(!dir.path().join(SNAPSHOT_FILE).exists());
    assert_eq!(index.len(), 4_000);
}

#[test]
fn a_small_index_writes_no_snapshot_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let index = SimhashIndex::open(dir.path(), config()).unwrap();
    insert(&index, 0, 2_000);
    index.checkpoint().unwrap();
    drop(index);
    assert!(!dir.path().join(SNAPSHOT_FILE).exists());
}
