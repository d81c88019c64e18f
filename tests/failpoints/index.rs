//! The index killed (SIGKILL) while held at its fault points: between a batch's rows and
//! its records, and at each step of writing a snapshot in the background. What the kill
//! leaves opens with every document that reached the database, each found as itself.

use std::path::Path;

use crawldedup::index::snapshot::SNAPSHOT_FILE;
use crawldedup::index::{Decision, IndexConfig, SimhashIndex};

use crate::child::{self, Ended, Kill};
use crate::documents::{assert_all_found, doc};

fn config() -> IndexConfig {
    IndexConfig::default().with_expected(100_000)
}

/// The environment variable that makes a test binary run the rows-before-records child.
const ROWS_CHILD_ENV: &str = "CRAWLDEDUP_INDEX_ROWS_CHILD";

#[test]
fn kill_9_between_a_batchs_rows_and_its_records_leaves_the_rows_out_and_loses_nothing_stored() {
    if let Ok(dir) = std::env::var(ROWS_CHILD_ENV) {
        // The child: unique documents from where the index stands, a checkpoint every
        // 1,000, until killed (held once a batch's rows are on disk and its records not).
        // Its first run stores 2,500 and closes the index.
        let dir = Path::new(&dir);
        let index = SimhashIndex::open(dir, config()).unwrap();
        let seeded = dir.join("seeded");
        let mut i = index.len();
        loop {
            index.check_and_insert(doc(i)).unwrap();
            i += 1;
            if i == 2_500 && !seeded.exists() {
                index.close().unwrap();
                std::fs::write(seeded, "yes").unwrap();
                return;
            }
            if i % 1_000 == 0 {
                index.checkpoint().unwrap();
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let test = "index::kill_9_between_a_batchs_rows_and_its_records_leaves_the_rows_out_and_loses_nothing_stored";
    let mut before = 0;
    let seeded = child::round(test, ROWS_CHILD_ENV, dir.path(), child::Kill::Never);
    assert!(
        matches!(seeded, child::Ended::Finished { success: true, .. }),
        "{seeded:?}"
    );
    for kill in [
        child::Kill::At("index-rows-before-records"),
        child::Kill::After(300),
        child::Kill::At("index-rows-before-records"),
    ] {
        let ended = child::round(test, ROWS_CHILD_ENV, dir.path(), kill);
        assert!(
            matches!(ended, child::Ended::KilledAt(_) | child::Ended::KilledAfter),
            "{kill:?}: {ended:?}"
        );
        let index = SimhashIndex::open(dir.path(), config()).unwrap();
        let len = index.len();
        assert!(len >= before.max(2_500), "{len} documents after {before}");
        for i in 0..len {
            assert_eq!(
                index.find(&doc(i)).unwrap(),
                Some(Decision::Exact(i)),
                "document {i} of {len}"
            );
            assert_eq!(
                index.get(i).unwrap().map(|r| r.name),
                Some(format!("doc-{i}"))
            );
        }
        // The batch whose rows alone reached the disk is not there: the next document
        // is new, and goes in under the next id.
        assert_eq!(index.find(&doc(len)).unwrap(), None);
        before = len;
    }
}

/// The environment variable that makes a test binary run the kill test's child.
const CHILD_ENV: &str = "CRAWLDEDUP_SNAPSHOT_CHILD";

#[test]
fn kill_9_around_a_background_snapshot_loses_nothing_and_the_next_open_maps_it_or_rebuilds() {
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        // The child: unique documents from where the index stands, a checkpoint every 2,000,
        // snapshots in the background from 10,000 documents, until killed.
        let index = SimhashIndex::open(Path::new(&dir), config())
            .unwrap()
            .with_snapshot_min_documents(10_000);
        let mut i = index.len();
        loop {
            index.check_and_insert(doc(i)).unwrap();
            i += 1;
            if i % 2_000 == 0 {
                index.checkpoint().unwrap();
            }
            if i >= 1_000_000 {
                return;
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let rounds = [
        Kill::At("snapshot-rows-written"),
        Kill::At("snapshot-installed"),
        Kill::At("snapshot-ready"),
        // Snapshots after the first of a session are written in place: killed once a
        // section is written and before the header naming it is, and once it is.
        Kill::At("snapshot-section-written"),
        Kill::After(700),
        Kill::At("snapshot-switched"),
        Kill::At("snapshot-rows-written"),
        Kill::After(400),
        Kill::At("snapshot-installed"),
        // The file of the snapshot before the last kept, then written over: killed once the
        // two files swapped names (Linux), or once the one in place has its second name.
        Kill::At(if cfg!(target_os = "linux") {
            "snapshot-exchanged"
        } else {
            "snapshot-spare-linked"
        }),
        Kill::At("snapshot-switched"),
        Kill::At("snapshot-section-written"),
    ];
    let mut opened_from_snapshot = 0;
    for kill in rounds {
        let ended = child::round(
            "index::kill_9_around_a_background_snapshot_loses_nothing_and_the_next_open_maps_it_or_rebuilds",
            CHILD_ENV,
            dir.path(),
            kill,
        );
        match (kill, ended) {
            (Kill::At(_), Ended::KilledAt(_)) | (Kill::After(_), Ended::KilledAfter) => {}
            (kill, ended) => panic!("{kill:?}: the child was not killed as planned: {ended:?}"),
        }
        // What the kill left opens (from a snapshot or rebuilt) with every document that
        // reached the database, each found as itself.
        let index = SimhashIndex::open(dir.path(), config())
            .unwrap()
            .with_snapshot_min_documents(u64::MAX);
        opened_from_snapshot += u32::from(index.opened_from_snapshot());
        let len = index.len();
        assert!(len >= 10_000, "{len}");
        assert_all_found(&index, len);
        assert_eq!(index.find(&doc(len + 1)).unwrap(), None);
        drop(index);
        assert!(!dir.path().join(format!("{SNAPSHOT_FILE}.ready")).exists());
    }
    assert!(
        opened_from_snapshot >= 4,
        "{opened_from_snapshot} opens of 12 from a snapshot"
    );
}
