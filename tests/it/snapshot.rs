//! The snapshot of a cleanly closed index: the next open reads it instead of rebuilding, and
//! answers exactly as a rebuild would; a snapshot older than the database (a crash after
//! more documents were stored) is read with the documents after it added from the database;
//! a snapshot that is damaged, of other rows, past a roll-back, or far behind the database
//! is set aside and the index rebuilt, never read.

use std::path::Path;

use crawldedup::fingerprint::Digest;

use crate::documents::{assert_all_found, doc, doc_of, mix};
use crawldedup::index::snapshot::SNAPSHOT_FILE;
use crawldedup::index::{Decision, DocRecord, IndexConfig, SimhashIndex};

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
    IndexConfig::default().with_expected(100_000)
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

/// An index closed with a snapshot of `snapshot` documents, then given documents up to `to`,
/// checkpointed and closed without one (as a crash would leave it): an open reads the
/// documents after the snapshot as tails.
fn snapshot_behind(snapshot: u64, to: u64) -> tempfile::TempDir {
    let (dir, _) = closed_index(snapshot);
    let index = open(dir.path()).with_snapshot_min_documents(u64::MAX);
    insert(&index, snapshot, to);
    index.checkpoint().unwrap();
    drop(index);
    dir
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
    for damage in ["header", "count", "rows", "tables", "end", "cut"] {
        let (dir, want) = closed_index(5_000);
        let file = dir.path().join(SNAPSHOT_FILE);
        let mut bytes = std::fs::read(&file).unwrap();
        let len = bytes.len();
        match damage {
            "header" => bytes[20] ^= 0x41,
            // A table's count of documents changed, the header still good JSON: the table
            // would get a tail from the wrong document on.
            "count" => {
                let key = b"\"documents\":4500";
                let at = bytes[..64 << 10]
                    .windows(key.len())
                    .rposition(|w| w == key)
                    .expect("a table's count");
                bytes[at + key.len() - 3] = b'4';
            }
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
        // the database holds more than the manifest records, and they are kept, read as
        // the tables' tails (half as many as the snapshot holds).
        insert(&index, 20_100, 30_100);
    }
    let index = open(dir.path()).with_snapshot_min_documents(u64::MAX);
    assert!(index.opened_from_snapshot());
    let len = index.len();
    assert!(
        len >= 18_090 + crawldedup::index::WRITE_BATCH as u64,
        "{len}"
    );
    let with_tails = answers(&index, 30_100);
    assert!(index.wait_tails_folded(std::time::Duration::from_secs(60)));
    assert_eq!(answers(&index, 30_100), with_tails, "folded in");
    drop(index);
    let rebuilt = rebuilt(dir.path());
    assert_eq!(rebuilt.len(), len);
    assert_eq!(answers(&rebuilt, 30_100), with_tails);
}

#[test]
fn a_decision_right_after_an_open_with_tails_is_answered_while_they_are_folded() {
    // The fold takes the lock one table at a time and leaves it free between two: the
    // first decision after the open goes between two tables' folds, not after all of them.
    let dir = snapshot_behind(5_000, 8_000);
    // Three opens (the snapshot stays the one on disk, so each has tails): a thread held
    // off the core for the whole fold of one is possible, not in all three.
    let answered_while_folding = (0..3).any(|_| {
        let index = open(dir.path()).with_snapshot_min_documents(u64::MAX);
        assert!(index.opened_from_snapshot());
        let probe = doc(7_777);
        assert!(!index.query(probe.simhash).is_empty());
        let folding = !index.wait_tails_folded(std::time::Duration::ZERO);
        assert!(index.wait_tails_folded(std::time::Duration::from_secs(60)));
        folding
    });
    assert!(answered_while_folding);
}

#[test]
fn a_snapshot_far_behind_the_database_is_set_aside() {
    let (dir, _) = closed_index(5_000);
    {
        let index = open(dir.path()).with_snapshot_min_documents(u64::MAX);
        assert!(index.opened_from_snapshot());
        insert(&index, 5_000, 16_000);
        index.checkpoint().unwrap();
    }
    // 4,500 documents in the snapshot, 9,900 after it (more than twice as many): rebuilding
    // all is faster.
    let index = open(dir.path());
    assert!(!index.opened_from_snapshot());
    assert!(!dir.path().join(SNAPSHOT_FILE).exists());
    assert_eq!(index.len(), 14_400);
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
    let dir = snapshot_behind(5_000, 5_100);
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

/// Polls `check` every 10 ms until it holds, for at most a minute (the background thread
/// has no deadline of its own; a minute means it is stuck).
fn eventually(what: &str, check: impl Fn() -> bool) {
    let start = std::time::Instant::now();
    while !check() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "never: {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Every document `0..n` of the stream of unique documents is found as itself: an exact
/// duplicate of the id it was stored under (no entry of any table missing).
fn ready_file(dir: &Path) -> std::path::PathBuf {
    dir.join(format!("{SNAPSHOT_FILE}.ready"))
}

#[test]
fn a_background_snapshot_is_put_in_place_only_once_two_checkpoints_cover_it() {
    let dir = tempfile::tempdir().unwrap();
    let index = open(dir.path());
    for i in 0..20_000 {
        index.check_and_insert(doc(i)).unwrap();
    }
    // The first checkpoint after the documents: the snapshot is written, and waits.
    index.checkpoint().unwrap();
    eventually("the snapshot is written", || {
        ready_file(dir.path()).exists()
    });
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert!(!dir.path().join(SNAPSHOT_FILE).exists());
    assert_eq!(index.snapshot_stats().written, 0);
    // A second checkpoint covers it too (a crawl that resumes from the one before the last
    // finds every document it holds durable).
    index.checkpoint().unwrap();
    eventually("the snapshot is put in place", || {
        index.snapshot_stats().written == 1
    });
    assert!(dir.path().join(SNAPSHOT_FILE).exists());
    assert!(!ready_file(dir.path()).exists());
    let stats = index.snapshot_stats();
    assert_eq!(stats.documents, Some(20_000));
    assert!(stats.last_bytes > 20_000 * 100, "{stats:?}");
    // The next is written in place in that file, and put in use by the same rule.
    let file = dir.path().join(SNAPSHOT_FILE);
    let written = std::fs::metadata(&file).unwrap().modified().unwrap();
    for i in 20_000..30_000 {
        index.check_and_insert(doc(i)).unwrap();
    }
    index.checkpoint().unwrap();
    eventually("the sections are written", || {
        std::fs::metadata(&file).unwrap().modified().unwrap() != written
    });
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(index.snapshot_stats().written, 1);
    assert_eq!(index.snapshot_stats().documents, Some(20_000));
    index.checkpoint().unwrap();
    eventually("the snapshot is brought up to date", || {
        index.snapshot_stats().written == 2
    });
    assert_eq!(index.snapshot_stats().documents, Some(30_000));
    assert!(!ready_file(dir.path()).exists());
    // A crash now (no snapshot at close): the open maps the background snapshot.
    drop(index.with_snapshot_min_documents(u64::MAX));
    let index = open(dir.path());
    assert!(index.opened_from_snapshot());
    assert_all_found(&index, 30_000);
}

#[test]
fn with_background_snapshots_off_only_the_close_writes_one() {
    let dir = tempfile::tempdir().unwrap();
    let config = config().with_background_snapshots(false);
    let index = SimhashIndex::open(dir.path(), config)
        .unwrap()
        .with_snapshot_min_documents(0);
    for i in 0..20_000 {
        index.check_and_insert(doc(i)).unwrap();
        if i % 1_000 == 999 {
            index.checkpoint().unwrap();
        }
    }
    index.checkpoint().unwrap();
    // Time for a snapshot the checkpoints would have started (one of 20,000 documents
    // takes a few milliseconds).
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(index.snapshot_stats().written, 0);
    assert!(!ready_file(dir.path()).exists());
    assert!(!dir.path().join(SNAPSHOT_FILE).exists());
    drop(index);
    assert!(dir.path().join(SNAPSHOT_FILE).exists(), "written at close");
}

#[test]
fn background_snapshots_taken_while_documents_go_in_reopen_after_a_crash_with_nothing_missing() {
    let dir = tempfile::tempdir().unwrap();
    let n = 60_000;
    let index = std::sync::Arc::new(open(dir.path()));
    // Checkpoints from a thread of their own, so that snapshots are copied while the
    // documents go in.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let checkpoints = {
        let (index, done) = (index.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                index.checkpoint().unwrap();
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        })
    };
    for i in 0..n {
        assert!(matches!(
            index.check_and_insert(doc(i)).unwrap(),
            Decision::Unique(id) if id == i
        ));
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    checkpoints.join().unwrap();
    eventually("snapshots are written in the background", || {
        index.snapshot_stats().written >= 2
    });
    let in_place = index.snapshot_stats().documents.unwrap();
    // More after the last snapshot, checkpointed, then a crash.
    for i in n..n + 5_000 {
        index.check_and_insert(doc(i)).unwrap();
    }
    index.checkpoint().unwrap();
    let index = std::sync::Arc::into_inner(index).unwrap();
    drop(index.with_snapshot_min_documents(u64::MAX));
    let index = open(dir.path()).with_snapshot_min_documents(u64::MAX);
    assert!(index.opened_from_snapshot(), "snapshot of {in_place}");
    assert_eq!(index.len(), n + 5_000);
    assert_all_found(&index, n + 5_000);
    assert!(index.wait_tails_folded(std::time::Duration::from_secs(60)));
    assert_all_found(&index, n + 5_000);
    drop(index);
    let rebuilt = rebuilt(dir.path());
    assert_all_found(&rebuilt, n + 5_000);
}

#[test]
fn close_makes_every_document_durable_and_writes_the_snapshot_the_next_open_reads() {
    let dir = tempfile::tempdir().unwrap();
    let index = open(dir.path());
    // No checkpoint before the close: the close makes the documents durable itself.
    insert(&index, 0, 3_000);
    let want = answers(&index, 3_000);
    let report = index.close().unwrap();
    assert_eq!(report.documents, 2_700);
    assert!(report.snapshot_written, "{report:?}");
    let index = open(dir.path());
    assert!(index.opened_from_snapshot());
    assert_eq!(index.len(), 2_700);
    assert_eq!(answers(&index, 3_000), want);
    // Closed again unchanged: the snapshot in place already is this index.
    let report = index.close().unwrap();
    assert!(!report.snapshot_written, "{report:?}");
    assert_eq!(open(dir.path()).len(), 2_700);
}

/// Snapshots written over the file of an earlier one.
mod spare;
