//! Tests of updates in place on the tables alone: what each update writes as deltas,
//! whole copies or nothing, by the header it commits.

use super::super::read::read_header;
use super::super::{HEADER_PREFIX, HEADER_SLOT};
use super::*;

/// Adds documents `from..to` of the tables tests' stream to `memory`.
fn add_rows(plan: &Plan, memory: &RwLock<Memory>, from: u64, to: u64) {
    use crate::index::tables::{keys_of, tests::row};
    let mut memory = memory.write().unwrap();
    for id in from..to {
        let doc = row(id);
        memory.add(&keys_of(plan, doc.simhash, &doc.sketch), doc, id as u32);
    }
}

/// Brings `current` up to date in place and returns the headers each commit wrote, and
/// whether it copied a section whole.
fn update(
    dir: &Path,
    current: &mut InPlace,
    plan: &Plan,
    memory: &RwLock<Memory>,
) -> (Vec<Header>, bool) {
    update_allowing(dir, current, plan, memory, true)
}

/// [`update`], with whole copies allowed or held back (`whole`).
fn update_allowing(
    dir: &Path,
    current: &mut InPlace,
    plan: &Plan,
    memory: &RwLock<Memory>,
    whole: bool,
) -> (Vec<Header>, bool) {
    let mut headers = Vec::new();
    let mut commit = |_: u64, _: Extent, write: &mut dyn FnMut() -> std::io::Result<()>| {
        write()?;
        headers.push(
            read_header(&std::fs::read(path(dir)).unwrap())
                .ok()
                .unwrap(),
        );
        Ok(true)
    };
    let (next, written) =
        update_in_place(dir, current, plan, memory, (&|| false, whole), &mut commit)
            .unwrap()
            .unwrap();
    *current = next.unwrap();
    assert_eq!(Some(&written.header), headers.last());
    (headers, written.copied_whole)
}

/// An index of `n` documents in memory under `plan`, and its snapshot written whole and in
/// place in a folder of its own.
fn snapshot_in_place(plan: &Plan, n: u64) -> (tempfile::TempDir, RwLock<Memory>, InPlace) {
    use crate::index::tables::tests::memory_with_tails;
    let dir = tempfile::tempdir().unwrap();
    let memory = RwLock::new(memory_with_tails(plan, n, n));
    let target = path(dir.path());
    let written = super::super::write(&target, plan, &memory, &|| false)
        .unwrap()
        .unwrap();
    let current = InPlace::of(&written, &target).unwrap();
    (dir, memory, current)
}

#[test]
fn an_update_commits_a_delta_of_every_table_before_it_copies_any_whole() {
    let plan = Plan::with_blocks(3, 6).unwrap();
    let (dir, memory, mut current) = snapshot_in_place(&plan, 20_000);
    let tables = plan.tables.len() + BANDS;
    // Half as many again: a delta of every section, in one commit.
    add_rows(&plan, &memory, 20_000, 30_000);
    let (headers, copied_whole) = update(dir.path(), &mut current, &plan, &memory);
    assert_eq!((headers.len(), copied_whole), (1, false));
    let header = &headers[0];
    for t in 0..tables {
        assert_eq!(header.table(t).deltas.len(), 1, "table {t}");
        assert_eq!(header.table(t).held(), 30_000);
    }
    assert_eq!(header.more_rows.len(), 1);
    // Past twice the whole sections: every table's delta is committed first, then the
    // whole copies.
    add_rows(&plan, &memory, 30_000, 60_000);
    let (headers, copied_whole) = update(dir.path(), &mut current, &plan, &memory);
    assert!(
        headers.len() >= 2 && copied_whole,
        "{} commits",
        headers.len()
    );
    let first = &headers[0];
    for t in 0..tables {
        assert_eq!(first.table(t).deltas.len(), 2, "table {t}");
        assert_eq!(first.table(t).held(), 60_000);
    }
    assert_eq!((first.more_rows.len(), first.rows_documents), (2, 60_000));
    let last = headers.last().unwrap();
    for t in 0..tables {
        assert!(last.table(t).deltas.is_empty(), "table {t}");
        assert_eq!(last.table(t).documents, 60_000);
    }
    assert!(last.more_rows.is_empty());
    assert_eq!((last.floor, last.rows_documents), (0, 60_000));
}

#[test]
fn while_whole_copies_are_held_back_every_section_takes_deltas_up_to_the_most_held() {
    // The default plan: 10 simhash tables and the bands.
    let plan = Plan::with_blocks(3, 5).unwrap();
    let (dir, memory, mut current) = snapshot_in_place(&plan, 20_000);
    let tables = plan.tables.len() + BANDS;
    let mut count = 20_000;
    for round in 1..=MOST_DELTAS_HELD + 1 {
        // Past twice the whole sections from the first round on: due for whole copies.
        let to = if round == 1 { 50_000 } else { count + 1_000 };
        add_rows(&plan, &memory, count, to);
        let before = current.header.clone();
        let (headers, copied_whole) =
            update_allowing(dir.path(), &mut current, &plan, &memory, false);
        count = to;
        assert_eq!((headers.len(), copied_whole), (1, false), "round {round}");
        let header = &headers[0];
        let json = serde_json::to_vec(header).unwrap().len() as u64;
        assert!(json + HEADER_PREFIX <= HEADER_SLOT, "{json} bytes");
        for t in 0..tables {
            let (now, was) = (header.table(t), before.table(t));
            assert_eq!(now.lines, was.lines, "table {t}: nothing copied whole");
            if round <= MOST_DELTAS_HELD {
                assert_eq!(now.deltas.len(), round, "table {t}");
                assert_eq!(now.held(), count);
            } else {
                // At the most: the table keeps what it has.
                assert_eq!(now, was, "table {t}");
            }
        }
        // The rows take a run each time.
        assert_eq!(
            (header.more_rows.len(), header.rows_documents),
            (round, count)
        );
    }
    // Allowed again, with documents since: every section copied whole, up to date.
    add_rows(&plan, &memory, count, count + 1_000);
    let last = update_copies_every_section_whole(dir.path(), &mut current, &plan, &memory);
    assert_eq!(
        (last.more_rows.len(), last.rows_documents),
        (0, count + 1_000)
    );
}

/// Brings `current` up to date with whole copies allowed, checks that every table was
/// copied whole up to the memory's count, and returns the last header committed.
fn update_copies_every_section_whole(
    dir: &Path,
    current: &mut InPlace,
    plan: &Plan,
    memory: &RwLock<Memory>,
) -> Header {
    let count = memory.read().unwrap().count();
    let (headers, copied_whole) = update(dir, current, plan, memory);
    assert!(copied_whole);
    let last = headers.last().unwrap();
    for t in 0..plan.tables.len() + BANDS {
        assert!(last.table(t).deltas.is_empty(), "table {t}");
        assert_eq!(last.table(t).documents, count);
    }
    last.clone()
}

#[test]
fn an_update_copies_the_tables_whole_when_the_header_has_no_room_for_their_deltas() {
    // 56 simhash tables and the bands: a delta each takes about 9 KB of the header's 32.
    let plan = Plan::with_blocks(3, 8).unwrap();
    let (dir, memory, mut current) = snapshot_in_place(&plan, 10_000);
    let (mut count, mut whole) = (10_000, 0);
    let mut most = 0;
    for _ in 0..6 {
        // A tenth more: no table nears its whole section's documents.
        add_rows(&plan, &memory, count, count + 1_000);
        count += 1_000;
        let (headers, _) = update(dir.path(), &mut current, &plan, &memory);
        for header in &headers {
            let json = serde_json::to_vec(header).unwrap().len() as u64;
            assert!(json + HEADER_PREFIX <= HEADER_SLOT, "{json} bytes");
        }
        let last = headers.last().unwrap();
        most = most.max(last.tables[0].deltas.len());
        if last.tables.iter().all(|t| t.deltas.is_empty()) {
            whole += 1;
        }
        assert!(last.tables.iter().all(|t| t.held() == count));
    }
    assert!(whole > 0, "never copied whole");
    assert!((1..MOST_DELTAS).contains(&most), "{most} deltas at most");
}

#[test]
fn a_held_back_update_with_no_room_in_the_header_for_deltas_writes_nothing() {
    // 56 simhash tables and the bands: a delta each takes about 9 KB of the header's 32.
    let plan = Plan::with_blocks(3, 8).unwrap();
    let (dir, memory, mut current) = snapshot_in_place(&plan, 10_000);
    let tables = plan.tables.len() + BANDS;
    let mut count = 10_000;
    let mut rounds = 0;
    // Held back, each update adds a delta of every table while the header has room.
    while header_room(&current.header, tables + 1) {
        add_rows(&plan, &memory, count, count + 1_000);
        count += 1_000;
        let (headers, copied_whole) =
            update_allowing(dir.path(), &mut current, &plan, &memory, false);
        assert_eq!((headers.len(), copied_whole), (1, false));
        rounds += 1;
        assert!(rounds < MOST_DELTAS_HELD, "the header never filled");
    }
    assert!(rounds >= 1);
    // Full, and still held back: nothing is written, and the header in use stays.
    add_rows(&plan, &memory, count, count + 1_000);
    let before = std::fs::read(path(dir.path())).unwrap();
    let mut commits = 0;
    let mut commit = |_: u64, _: Extent, _: &mut dyn FnMut() -> std::io::Result<()>| {
        commits += 1;
        Ok(true)
    };
    let (next, written) = update_in_place(
        dir.path(),
        &current,
        &plan,
        &memory,
        (&|| false, false),
        &mut commit,
    )
    .unwrap()
    .unwrap();
    assert_eq!(
        (commits, written.wrote, written.copied_whole),
        (0, 0, false)
    );
    assert_eq!(written.header, current.header);
    assert_eq!(next.unwrap().header, current.header);
    let after = std::fs::read(path(dir.path())).unwrap();
    assert_eq!(read_header(&after).ok(), Some(current.header.clone()));
    assert!(after == before[..after.len()], "the file's bytes changed");
    // Allowed again: every section copied whole, up to date.
    update_copies_every_section_whole(dir.path(), &mut current, &plan, &memory);
}
