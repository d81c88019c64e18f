//! The snapshot's files: background snapshots written in place in the file this process
//! wrote, the spare a crash left written over by the first of a session, never a file an
//! open mapped, and what an open does with the files a crash left.

use std::path::Path;

use super::{assert_all_found, doc, eventually, open};
use crawldedup::index::SimhashIndex;
use crawldedup::index::snapshot::SNAPSHOT_FILE;

/// The inode of the file at `path` (which file a name stands for).
fn inode(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| m.ino())
}

/// Inserts documents up to `to`, then checkpoints until a background snapshot of them is in
/// place (`written` in all).
fn snapshot_at(index: &SimhashIndex, from: u64, to: u64, written: u64) {
    for i in from..to {
        index.check_and_insert(doc(i)).unwrap();
    }
    index.checkpoint().unwrap();
    index.checkpoint().unwrap();
    eventually("the snapshot is put in place", || {
        index.snapshot_stats().written == written
    });
    assert_eq!(index.snapshot_stats().documents, Some(to));
}

#[test]
fn background_snapshots_after_the_first_are_written_in_place_and_never_over_a_mapped_file() {
    let dir = tempfile::tempdir().unwrap();
    let snapshot = dir.path().join(SNAPSHOT_FILE);
    let spare = dir.path().join(format!("{SNAPSHOT_FILE}.spare"));
    let index = open(dir.path());
    // Each step adds more than a quarter, so that no rest between snapshots holds one back.
    snapshot_at(&index, 0, 20_000, 1);
    let first = inode(&snapshot).unwrap();
    assert_eq!(inode(&spare), None, "nothing replaced yet");
    // The next ones are written in place in the file this process wrote.
    snapshot_at(&index, 20_000, 30_000, 2);
    assert_eq!(inode(&snapshot), Some(first), "written in place");
    snapshot_at(&index, 30_000, 45_000, 3);
    assert_eq!(inode(&snapshot), Some(first));
    assert_eq!(inode(&spare), None);
    // A crash now: the next open maps the snapshot written in place.
    drop(index.with_snapshot_min_documents(u64::MAX));
    // A spare that names the file in place (a crash between the link and the rename that
    // follows it) is removed by the open, and never written over; a snapshot a crash left
    // unfinished is kept as the spare instead of removed.
    std::fs::hard_link(&snapshot, &spare).unwrap();
    let partial = dir.path().join(format!("{SNAPSHOT_FILE}.partial"));
    std::fs::write(&partial, b"a snapshot cut short").unwrap();
    let unfinished = inode(&partial).unwrap();
    let index = open(dir.path());
    assert!(index.opened_from_snapshot());
    assert_eq!(inode(&spare), Some(unfinished));
    assert_eq!(inode(&partial), None);
    assert_all_found(&index, 45_000);
    // The first snapshot of the session is written over it, never over the mapped file,
    // and the next in place in it.
    snapshot_at(&index, 45_000, 60_000, 1);
    assert_eq!(inode(&snapshot), Some(unfinished));
    assert_eq!(inode(&spare), None, "the mapped file is never written over");
    snapshot_at(&index, 60_000, 76_000, 2);
    assert_eq!(inode(&snapshot), Some(unfinished));
    assert_all_found(&index, 76_000);
    drop(index.with_snapshot_min_documents(u64::MAX));
    // Only a second name of the file in place.
    std::fs::hard_link(&snapshot, &spare).unwrap();
    let index = open(dir.path());
    assert!(index.opened_from_snapshot());
    assert_eq!(inode(&spare), None);
    assert_all_found(&index, 76_000);
    // With no spare, the first snapshot of the session goes to a new file: the one the open
    // maps is still read.
    snapshot_at(&index, 76_000, 100_000, 1);
    let mapped = unfinished;
    assert_ne!(inode(&snapshot), Some(mapped));
    assert_eq!(inode(&spare), None, "the mapped file is never written over");
    snapshot_at(&index, 100_000, 130_000, 2);
    assert_all_found(&index, 130_000);
    // The close brings the snapshot this process wrote up to date in place too.
    let in_place = inode(&snapshot);
    for i in 130_000..131_000 {
        index.check_and_insert(doc(i)).unwrap();
    }
    let report = index.close().unwrap();
    assert_eq!(report.documents, 131_000);
    assert!(report.snapshot_written, "{report:?}");
    assert_eq!(inode(&snapshot), in_place, "written in place at the close");
    assert_eq!(inode(&spare), None);
    let index = open(dir.path());
    assert!(index.opened_from_snapshot());
    assert_eq!(index.len(), 131_000);
    assert_all_found(&index, 131_000);
}

#[test]
fn a_close_leaves_a_snapshot_an_open_mapped_in_place_while_the_documents_after_it_are_under_a_quarter()
 {
    let dir = tempfile::tempdir().unwrap();
    let snapshot = dir.path().join(SNAPSHOT_FILE);
    // No background snapshots: only the closes write one.
    let open = || {
        SimhashIndex::open(dir.path(), super::config().with_background_snapshots(false))
            .unwrap()
            .with_snapshot_min_documents(0)
    };
    let index = open();
    for i in 0..40_000 {
        index.check_and_insert(doc(i)).unwrap();
    }
    assert!(index.close().unwrap().snapshot_written);
    let mapped = inode(&snapshot).unwrap();
    // 9,999 documents after the snapshot of 40,000, just under a quarter: the close leaves
    // the file the open mapped, and the next open adds them as tails.
    let index = open();
    assert!(index.opened_from_snapshot());
    for i in 40_000..49_999 {
        index.check_and_insert(doc(i)).unwrap();
    }
    let report = index.close().unwrap();
    assert_eq!(report.documents, 49_999);
    assert!(!report.snapshot_written, "{report:?}");
    assert_eq!(inode(&snapshot), Some(mapped));
    let index = open();
    assert!(index.opened_from_snapshot());
    assert_eq!(index.snapshot_stats().documents, Some(40_000));
    assert_all_found(&index, 49_999);
    // One more, a quarter: the close writes the whole snapshot, to another file.
    index.check_and_insert(doc(49_999)).unwrap();
    let report = index.close().unwrap();
    assert!(report.snapshot_written, "{report:?}");
    assert_ne!(inode(&snapshot), Some(mapped));
    let index = open();
    assert!(index.opened_from_snapshot());
    assert_eq!(index.snapshot_stats().documents, Some(50_000));
    assert_all_found(&index, 50_000);
    // An explicit write_snapshot writes whatever the documents after it.
    let mut index = index;
    index.check_and_insert(doc(50_000)).unwrap();
    index.checkpoint().unwrap();
    assert!(index.write_snapshot().unwrap());
    assert_eq!(index.snapshot_stats().documents, Some(50_001));
}

#[test]
fn a_close_writes_the_snapshot_when_what_the_one_in_place_holds_has_expired() {
    use crawldedup::clock::ManualClock;
    use std::sync::Arc;
    use std::time::Duration;
    const T0: u64 = 1_700_000_000;
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(T0);
    let open = || {
        SimhashIndex::open(
            dir.path(),
            super::config()
                .with_background_snapshots(false)
                .with_retention(Some(Duration::from_secs(3_600))),
        )
        .unwrap()
        .with_snapshot_min_documents(0)
        .with_clock(Arc::new(clock.clone()))
    };
    let index = open();
    for i in 0..40_000 {
        index.check_and_insert(doc(i)).unwrap();
    }
    assert!(index.close().unwrap().snapshot_written);
    // An hour later every document of the snapshot has expired: the 5,000 after it are few
    // against what it holds, but it holds nothing live, so the close writes a new one.
    clock.set(T0 + 7_200);
    let index = open();
    assert!(index.opened_from_snapshot());
    for i in 40_000..45_000 {
        index.check_and_insert(doc(i)).unwrap();
    }
    while index.sweep(10_000).unwrap().expired > 0 {}
    let report = index.close().unwrap();
    assert!(report.snapshot_written, "{report:?}");
    let index = open();
    assert!(index.opened_from_snapshot());
    assert_eq!(index.snapshot_stats().documents, Some(45_000));
    assert!(index.find(&doc(40_000)).unwrap().is_some());
    assert_eq!(index.find(&doc(0)).unwrap(), None);
}
