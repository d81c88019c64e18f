//! Tests of the snapshot updated in place.

use super::super::read::read_header;
use super::super::{HEADER_PREFIX, HEADER_SLOT, SNAPSHOT_VERSION, Section};
use super::*;

#[test]
fn the_header_in_use_is_the_whole_one_with_the_higher_sequence() {
    let plan = Plan::with_blocks(3, 6).unwrap();
    let rows = Rows {
        section: Section {
            offset: FIRST_SECTION,
            len: 0,
            xxh3: 0,
        },
        floor: 0,
        documents: 0,
        checksum: 0,
    };
    let header = |sequence| Header::of(&plan, sequence, &rows, vec![], vec![]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("snapshot");
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    let read = || read_header(&std::fs::read(&path).unwrap()).map(|h| h.sequence);
    let damage = |at: u64| {
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[at as usize] ^= 1;
        std::fs::write(&path, bytes).unwrap();
    };
    write_header(&mut file, &header(4)).unwrap();
    assert_eq!(read().ok(), Some(4), "the second slot empty");
    write_header(&mut file, &header(7)).unwrap();
    assert_eq!(read().ok(), Some(7));
    write_header(&mut file, &header(8)).unwrap();
    assert_eq!(read().ok(), Some(8));
    // The newer cut short by a crash while it was written: the one before is in use.
    damage(HEADER_PREFIX + 20);
    assert_eq!(read().ok(), Some(7));
    // Neither whole: refused as damaged.
    damage(HEADER_SLOT + 3);
    assert!(matches!(read(), Err(super::super::Refused::Damaged(_))));
}

#[test]
fn snapshots_written_in_place_name_whole_sections_and_a_file_grown_past_twice_is_replaced() {
    use crate::fingerprint::{Simhash, Sketch};
    use crate::index::{DocRecord, IndexConfig, SimhashIndex};
    let dir = tempfile::tempdir().unwrap();
    let index = SimhashIndex::open(dir.path(), IndexConfig::default())
        .unwrap()
        .with_snapshot_min_documents(1_000);
    let (mut written, mut in_place, mut replaced) = (0, 0, 0);
    let mut file = None;
    for _ in 0..8 {
        // Each round adds over a quarter: no rest holds a snapshot back.
        let (from, to) = (index.len(), index.len() * 3 / 2 + 1_000);
        for i in from..to {
            let key = |j: u64| {
                (i * 64 + j)
                    .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                    .rotate_left(17)
            };
            let sketch = Sketch {
                bins: std::array::from_fn(|j| key(j as u64) as u8),
                shingles: 300,
                unspaced: 0,
            };
            (index.insert(DocRecord {
                simhash: Simhash(key(64)),
                name: format!("doc-{i}"),
                sketch,
                ..DocRecord::default()
            }))
            .unwrap();
        }
        checkpoint_and_wait(&index, written);
        written = index.snapshot_stats().written;
        let bytes = std::fs::read(path(dir.path())).unwrap();
        let Ok(header) = read_header(&bytes) else {
            panic!("the header in use is not whole");
        };
        let mut sections: Vec<(u64, u64)> = header.sections().collect();
        sections.sort_unstable();
        for pair in sections.windows(2) {
            assert!(pair[0].0 + pair[0].1 <= pair[1].0, "{pair:?}");
        }
        assert_eq!(end_of(sections.iter().copied()), bytes.len() as u64);
        let id = file_id(&path(dir.path()));
        let live: u64 = sections.iter().map(|s| s.1).sum();
        match file.replace((id, bytes.len() as u64 > MOST_TIMES * (FIRST_SECTION + live))) {
            Some((before, too_long)) if before == id => {
                assert!(
                    !too_long,
                    "written in place in a file over twice its snapshot"
                );
                in_place += 1;
            }
            Some(_) => replaced += 1,
            None => {}
        }
    }
    assert!(
        in_place >= 4,
        "{in_place} snapshots written in place, {replaced} whole"
    );
    assert_eq!(index.len(), index.snapshot_stats().documents.unwrap());
}

/// Document `i` of the delta test: a random simhash and sketch.
fn record(i: u64) -> crate::index::DocRecord {
    use crate::fingerprint::{Simhash, Sketch};
    let key = |j: u64| {
        (i * 64 + j)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(17)
    };
    crate::index::DocRecord {
        simhash: Simhash(key(64)),
        name: format!("doc-{i}"),
        sketch: Sketch {
            bins: std::array::from_fn(|j| key(j as u64) as u8),
            shingles: 300,
            unspaced: 0,
        },
        ..crate::index::DocRecord::default()
    }
}

/// Every table of `index` (its lines and tail layers) finds each of documents `0..n` under
/// its own key at distance 0, once; and the index finds each as an exact duplicate.
fn each_table_finds_each_document(index: &crate::index::SimhashIndex, n: u64) {
    use crate::index::tables::keys_of;
    let memory = index.memory.read().unwrap();
    let mut found = Vec::new();
    for i in 0..n {
        let doc = record(i);
        let keys = keys_of(&index.plan, doc.simhash.0, &doc.sketch);
        for (t, table) in memory.tables.iter().enumerate() {
            found.clear();
            table.probe(keys.permuted[t], 0, &mut found);
            let hits = found.iter().filter(|e| u64::from(e.0) == i).count();
            assert_eq!(hits, 1, "table {t}, document {i}");
        }
        for (b, table) in memory.bands.iter().enumerate() {
            found.clear();
            table.probe(keys.bands[b], 0, &mut found);
            let hits = found.iter().filter(|e| u64::from(e.0) == i).count();
            assert_eq!(hits, 1, "band {b}, document {i}");
        }
    }
    drop(memory);
    for i in (0..n).step_by(97) {
        assert_eq!(
            index.find(&record(i)).unwrap(),
            Some(crate::index::Decision::Exact(i)),
            "document {i}"
        );
    }
}

/// What the updates of the delta test were: table sections that took a delta, tables
/// written whole again after deltas, and runs of rows added.
#[derive(Default)]
struct Updates {
    deltas: usize,
    rebased: usize,
    rows_added: usize,
}

impl Updates {
    /// Checks the header `now` that an update in place wrote over `last`, with documents
    /// `from..to` stored since and `wrote` bytes written, and counts what it did.
    fn check(&mut self, last: &Header, now: &Header, (from, to): (u64, u64), wrote: u64) {
        let mut all_deltas = true;
        for t in 0..now.tables.len() + BANDS {
            let (last, now) = (last.table(t), now.table(t));
            if now.deltas.is_empty() {
                self.rebased += usize::from(!last.deltas.is_empty());
                all_deltas = false;
                continue;
            }
            // The sections in use stay, and the delta holds the documents since.
            assert_eq!(now.deltas.len(), last.deltas.len() + 1, "table {t}");
            assert_eq!(
                (now.lines, &now.deltas[..last.deltas.len()]),
                (last.lines, &last.deltas[..])
            );
            let delta = now.deltas.last().unwrap();
            assert_eq!((delta.from, delta.documents), (last.held(), to));
            assert_eq!(delta.entries, to - from);
            self.deltas += 1;
        }
        if let Some(more) = now.more_rows.last() {
            if now.more_rows.len() == last.more_rows.len() + 1 {
                assert_eq!(now.rows, last.rows);
                assert_eq!((more.from, more.documents), (from, to));
                self.rows_added += 1;
            }
        }
        if all_deltas {
            // What was stored since (a fifth of the documents), not the index.
            let live: u64 = now.sections().map(|(_, len)| len).sum();
            assert!(wrote * 2 < live, "{wrote} bytes written of {live}");
        }
    }
}

#[test]
fn updates_in_place_write_the_documents_since_as_deltas_that_an_open_maps_as_tails() {
    use crate::index::{IndexConfig, SimhashIndex};
    let dir = tempfile::tempdir().unwrap();
    let open = || SimhashIndex::open(dir.path(), IndexConfig::default()).unwrap();
    let mut index = open().with_snapshot_min_documents(1_000);
    let mut updates = Updates::default();
    let mut before: Option<(Header, (u64, u64))> = None;
    for round in 0.. {
        assert!(
            round < 16,
            "{} deltas, {} written whole again",
            updates.deltas,
            updates.rebased
        );
        // A quarter more each round: due even while the thread rests.
        let (from, to) = (index.len(), (index.len() * 5 / 4).max(4_000));
        // No snapshot starts while the round's documents go in: one that the last round's
        // second checkpoint asked for would hold only some of them, and the round's
        // checkpoints would put it in place as the round's delta.
        index = index.with_snapshot_min_documents(u64::MAX);
        for i in from..to {
            index.insert(record(i)).unwrap();
        }
        index = index.with_snapshot_min_documents(1_000);
        let (written, wrote) = {
            let stats = index.snapshot_stats();
            (stats.written, stats.bytes_written)
        };
        checkpoint_and_wait(&index, written);
        let wrote = index.snapshot_stats().bytes_written - wrote;
        let header = read_header(&std::fs::read(path(dir.path())).unwrap())
            .ok()
            .unwrap();
        assert_eq!(header.documents, to);
        let id = file_id(&path(dir.path())).unwrap();
        let Some((last, last_id)) = before.replace((header.clone(), id)) else {
            continue;
        };
        if last_id != id {
            // Written whole to another file.
            assert!(header.tables.iter().all(|t| t.deltas.is_empty()));
            continue;
        }
        updates.check(&last, &header, (from, to), wrote);
        if updates.rebased > 0 && !header.tables[0].deltas.is_empty() {
            break;
        }
    }
    assert!(updates.rows_added > 0 && updates.deltas > 0);
    // More documents after the snapshot, durable, then an end without a snapshot (as a
    // crash leaves it): the open maps the deltas and reads the rest from the database.
    let n = index.len() + 500;
    for i in index.len()..n {
        index.insert(record(i)).unwrap();
    }
    index.checkpoint().unwrap();
    drop(index.with_snapshot_min_documents(u64::MAX));
    let header = read_header(&std::fs::read(path(dir.path())).unwrap())
        .ok()
        .unwrap();
    deltas_are_read_as_tail_layers(dir.path(), &header);
    let index = open().with_snapshot_min_documents(u64::MAX);
    assert!(index.opened_from_snapshot());
    assert_eq!(index.len(), n);
    each_table_finds_each_document(&index, n);
    assert!(index.wait_tails_folded(std::time::Duration::from_secs(60)));
    each_table_finds_each_document(&index, n);
    drop(index);
    // A delta section damaged: the snapshot is set aside and the tables rebuilt.
    let mut bytes = std::fs::read(path(dir.path())).unwrap();
    let delta = header.bands[3].deltas.last().unwrap();
    bytes[(delta.lines.offset + delta.lines.len / 2) as usize] ^= 0x40;
    std::fs::write(path(dir.path()), bytes).unwrap();
    let index = open().with_snapshot_min_documents(u64::MAX);
    assert!(!index.opened_from_snapshot());
    each_table_finds_each_document(&index, n);
}

/// The snapshot in `dir`, whose header is `header`, read: each table with its deltas as
/// its tail's layers, and its count of documents held.
fn deltas_are_read_as_tail_layers(dir: &Path, header: &Header) {
    let manifest = crate::index::manifest::Manifest::read(dir);
    let plan = Plan::with_blocks(header.k, header.blocks).unwrap();
    let Ok((memory, held, _)) = super::super::open(dir, &plan, &manifest.unwrap().unwrap(), 0)
    else {
        panic!("the snapshot was not read");
    };
    let layers = (memory.tables.iter().map(|t| t.tail_layers()))
        .chain(memory.bands.iter().map(|t| t.tail_layers()));
    for (t, layers) in layers.enumerate() {
        assert_eq!(layers, header.table(t).deltas.len(), "table {t}");
        assert_eq!(held[t], header.table(t).held());
    }
}

#[test]
fn free_space_is_found_between_sections_on_a_page_boundary_or_after_them_all() {
    let page = SECTION_ALIGN;
    let first = FIRST_SECTION;
    // Nothing taken: the first section's place.
    assert_eq!(free_at(vec![], 10), (first, false));
    // A gap of two pages after a section that ends inside a page: from the next page.
    let taken = vec![(first + 4 * page, page), (first, page + 1)];
    assert_eq!(free_at(taken.clone(), page), (first + 2 * page, true));
    assert_eq!(free_at(taken.clone(), 2 * page), (first + 2 * page, true));
    // Too large for the gap: after the last.
    assert_eq!(free_at(taken, 2 * page + 1), (first + 5 * page, false));
    // Never overlapping what is taken, whatever the order and the lengths.
    let taken = vec![
        (first + 9 * page, 3),
        (first, 5),
        (first + 3 * page, 2 * page),
    ];
    for len in [1, page - 1, page, 2 * page, 3 * page, 10 * page] {
        let (at, _) = free_at(taken.clone(), len);
        assert_eq!(at % page, 0);
        assert!(at >= first);
        for &(offset, taken) in &taken {
            assert!(at + len <= offset || at >= offset + taken, "{len}: {at}");
        }
    }
}

/// Inserts documents `from..to`, then waits for the background snapshot that two
/// checkpoints let start.
fn insert_and_snapshot(index: &crate::index::SimhashIndex, to: u64) {
    for i in index.len()..to {
        index.insert(record(i)).unwrap();
    }
    checkpoint_and_wait(index, index.snapshot_stats().written);
}

/// Two checkpoints, then a wait until the background snapshots written pass `written`.
fn checkpoint_and_wait(index: &crate::index::SimhashIndex, written: u64) {
    index.checkpoint().unwrap();
    index.checkpoint().unwrap();
    let waited = std::time::Instant::now();
    while index.snapshot_stats().written == written {
        assert!(waited.elapsed().as_secs() < 60, "no snapshot");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[test]
fn a_header_of_version_3_and_index_format_6_is_read_and_deltas_that_do_not_follow_are_damage() {
    use crate::index::{IndexConfig, SimhashIndex};
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let open = || {
        SimhashIndex::open(dir.path(), IndexConfig::default())
            .unwrap()
            .with_snapshot_min_documents(u64::MAX)
    };
    let header_now = || {
        read_header(&std::fs::read(path(dir.path())).unwrap())
            .ok()
            .unwrap()
    };
    let rewrite = |header: &Header| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .open(path(dir.path()))
            .unwrap();
        write_header(&mut file, header).unwrap();
        file.flush().unwrap();
    };
    let read = |header: &Header| {
        let plan = Plan::with_blocks(header.k, header.blocks).unwrap();
        let manifest = crate::index::manifest::Manifest::read(dir.path());
        super::super::open(dir.path(), &plan, &manifest.unwrap().unwrap(), 0).map(|_| ())
    };
    // A whole snapshot, as a version-3 build wrote it (no deltas), of an index of format 6.
    let index = open().with_snapshot_min_documents(1_000);
    insert_and_snapshot(&index, 4_000);
    drop(index.with_snapshot_min_documents(u64::MAX));
    let mut header = header_now();
    assert!(header.more_rows.is_empty() && header.tables[0].deltas.is_empty());
    (header.snapshot, header.format) = (3, 6);
    rewrite(&header);
    assert!(read(&header).is_ok());
    let index = open();
    assert!(index.opened_from_snapshot());
    each_table_finds_each_document(&index, 4_000);
    // An update with deltas (the open mapped the file: the first is written whole).
    let index = index.with_snapshot_min_documents(1_000);
    insert_and_snapshot(&index, 5_000);
    insert_and_snapshot(&index, 6_000);
    drop(index.with_snapshot_min_documents(u64::MAX));
    let header = header_now();
    assert_eq!(header.snapshot, SNAPSHOT_VERSION);
    assert!(!header.more_rows.is_empty() && !header.bands[0].deltas.is_empty());
    assert!(read(&header).is_ok());
    // A delta or a run of rows that does not start where the one before it ends.
    let damaged = |header: &Header| match read(header) {
        Err(super::super::Refused::Damaged(what)) => what,
        Err(_) => panic!("not damage"),
        Ok(()) => panic!("read"),
    };
    let mut wrong = header.clone();
    wrong.bands[0].deltas[0].from -= 1;
    rewrite(&wrong);
    assert_eq!(damaged(&wrong), "its counts of documents disagree");
    let mut wrong = header.clone();
    wrong.more_rows[0].documents -= 1;
    rewrite(&wrong);
    assert_eq!(damaged(&wrong), "its counts of documents disagree");
    let mut wrong = header.clone();
    wrong.more_rows[0].section.len -= ROW_BYTES as u64;
    rewrite(&wrong);
    assert_eq!(damaged(&wrong), "its rows section has the wrong length");
    // Set aside, and the index rebuilt with every document.
    let index = open();
    assert!(!index.opened_from_snapshot());
    each_table_finds_each_document(&index, 6_000);
}
