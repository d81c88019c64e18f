//! The simhash index's promises: queries equal a brute-force scan, every candidate is
//! confirmed on its sketch, check-and-insert is atomic, and a checkpointed index survives a
//! kill -9.

use std::path::Path;
use std::sync::Arc;

use crawldedup::Fingerprint;
use crawldedup::fingerprint::{Digest, Simhash, Sketch};
use crawldedup::index::{Decision, DocRecord, IndexConfig, SimhashIndex};
use proptest::prelude::*;

use crate::child;

/// The sketch of a text of 200 shingles of its own (no two `seed`s share one).
fn own_sketch(seed: u64) -> Sketch {
    let features: Vec<u64> = (0..200u64)
        .map(|j| {
            (seed << 16 | j)
                .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                .rotate_left(29)
        })
        .collect();
    Sketch::from_distinct(&features)
}

/// A document with simhash and digest as given and a sketch unlike any other's.
fn record(simhash: u64, digest: u128) -> DocRecord {
    DocRecord {
        blocks: None,
        simhash: Simhash(simhash),
        digest: Digest(digest),
        text_chars: 1000,
        name: format!("doc-{digest}"),
        sketch: own_sketch(digest as u64),
        tiny_set: Vec::new(),
        at: 0,
    }
}

/// A document made from a text.
fn text_record(name: &str, text: &str) -> DocRecord {
    DocRecord::new(name, text, &Fingerprint::of(text))
}

fn config(k: u32, blocks: Option<u32>) -> IndexConfig {
    IndexConfig::default()
        .with_max_distance(k)
        .with_expected(1_000_000)
        .with_blocks(blocks)
}

const STORY: &str = "The harbour board met on Thursday evening to settle the future of the old \
    pier, which has been closed to the public since the winter storms tore away part of its \
    railings. Engineers told the board that the timber supports are sound but the deck must be \
    replaced within two years. Several fishermen spoke in favour of reopening the lower landing \
    stage as soon as possible, because the boats now have to unload at the far end of the \
    quay. The board agreed to ask the county for a grant and to publish the engineers' report \
    on its website next week, and the chair said she was relieved that a plan was in place.";

const OTHER: &str = "A new bakery opened on the corner of Mill Street this morning, and by ten \
    o'clock the queue reached the post office. The owners, two sisters who trained in Lyon, \
    bake sourdough, rye and a cardamom bun that sold out within the first hour. They rent the \
    ground floor of the former bank and plan to add a few tables in the spring, once the \
    council approves the licence for the pavement. Neighbours said the smell of bread at \
    dawn had already changed the street, and the sisters hope to hire two apprentices.";

/// Fingerprints clustered so that many lie within k of each other: a few random centres,
/// each with copies that differ in a few bits, plus exact repeats.
fn clustered(seeds: &[u64], flips: &[(usize, u8, u8, u8)]) -> Vec<u64> {
    let mut out: Vec<u64> = seeds.to_vec();
    for &(centre, a, b, c) in flips {
        let base = seeds[centre % seeds.len()];
        let mut fp = base ^ (1 << (a % 64));
        if b % 3 != 0 {
            fp ^= 1 << (b % 64);
        }
        if c % 4 == 0 {
            fp ^= 1 << (c % 64);
        }
        out.push(fp);
        if a % 5 == 0 {
            out.push(fp); // the same fingerprint twice
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn query_returns_exactly_the_brute_force_set(
        seeds in prop::collection::vec(any::<u64>(), 1..40),
        flips in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>(), any::<u8>()), 0..1500),
        probes in prop::collection::vec(any::<u64>(), 1..20),
        k in 0u32..=4,
        blocks in prop::option::of(5u32..=8),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let blocks = blocks.filter(|&b| b > k);
        let index = SimhashIndex::open(dir.path(), config(k, blocks)).unwrap();
        let fps = clustered(&seeds, &flips);
        // Every fingerprint is inserted (distinct digests, nothing refused), so that the
        // index holds duplicates and near-duplicates of one another.
        let mut stored = Vec::new();
        for (i, &fp) in fps.iter().enumerate() {
            let decision = index.check_and_insert(record(fp, i as u128)).unwrap();
            prop_assert_eq!(decision, Decision::Unique(i as u64));
            stored.push(fp);
        }
        let mut queries: Vec<u64> = probes.clone();
        queries.extend(fps.iter().take(30).map(|fp| fp ^ 0b101));
        queries.extend(fps.iter().take(30));
        for q in queries {
            let expected: Vec<(u64, u32)> = stored
                .iter()
                .enumerate()
                .filter_map(|(id, &fp)| {
                    let d = (fp ^ q).count_ones();
                    (d <= k).then_some((id as u64, d))
                })
                .collect();
            prop_assert_eq!(index.query(Simhash(q)), expected);
        }
    }
}

#[test]
fn exact_and_near_duplicates_are_named_and_confirmed_on_their_sketch() {
    let dir = tempfile::tempdir().unwrap();
    let index = SimhashIndex::open(dir.path(), config(3, None)).unwrap();
    let story = text_record("story", STORY);
    assert_eq!(
        index.check_and_insert(story.clone()).unwrap(),
        Decision::Unique(0)
    );
    assert_eq!(
        index.check_and_insert(text_record("again", STORY)).unwrap(),
        Decision::Exact(0)
    );
    // A lightly edited copy: found and confirmed, with its estimates.
    let edited = STORY
        .replace("Thursday", "Friday")
        .replace("relieved", "pleased");
    match index
        .check_and_insert(text_record("edited", &edited))
        .unwrap()
    {
        Decision::Near { of, similarity, .. } => {
            assert_eq!(of, 0);
            assert!(similarity.resemblance >= 0.5, "{similarity:?}");
        }
        other => panic!("edited copy: {other:?}"),
    }
    // A candidate by its simhash (3 bits away) whose text is another: refused and stored.
    let mut impostor = text_record("impostor", OTHER);
    impostor.simhash = Simhash(story.simhash.0 ^ 0b111);
    assert_eq!(
        index.query(impostor.simhash),
        vec![(0, 3)],
        "the simhash tables offer it"
    );
    assert_eq!(
        index.check_and_insert(impostor).unwrap(),
        Decision::Unique(1)
    );
    assert!(index.candidates_refused() >= 1);
    // An exact duplicate has the same digest and the same simhash (the same text always
    // has both); a digest under another simhash is a caller's inconsistency, not a match.
    let mut moved = record(0x1234_5678_0000, 1);
    moved.digest = story.digest;
    assert_eq!(index.check_and_insert(moved).unwrap(), Decision::Unique(2));
    assert_eq!(index.get(1).unwrap().unwrap().name, "impostor");
    assert_eq!(
        index.find(&text_record("probe", STORY)).unwrap(),
        Some(Decision::Exact(0))
    );
    assert_eq!(
        index
            .find(&text_record("probe", "nothing like it at all"))
            .unwrap(),
        None
    );
}

#[test]
fn concurrent_near_same_pages_yield_exactly_one_unique() {
    let dir = tempfile::tempdir().unwrap();
    let index = Arc::new(SimhashIndex::open(dir.path(), config(3, None)).unwrap());
    let base = 0x0123_4567_89ab_cdefu64;
    let threads: Vec<_> = (0..8u64)
        .map(|t| {
            let index = Arc::clone(&index);
            std::thread::spawn(move || {
                (0..50u64)
                    .map(|round| {
                        // Each thread presents a version a bit or two away from the base, or the
                        // base itself with its own digest, all of the same text.
                        let fp = if round % 2 == 0 {
                            base
                        } else {
                            base ^ (1 << (t % 64))
                        };
                        let mut doc = text_record("story", STORY);
                        doc.simhash = Simhash(fp);
                        doc.digest = Digest(u128::from(t * 1000 + round));
                        index.check_and_insert(doc).unwrap()
                    })
                    .filter(|d| matches!(d, Decision::Unique(_)))
                    .count()
            })
        })
        .collect();
    let uniques: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(uniques, 1);
    assert_eq!(index.len(), 1);
}

const CHILD_ENV: &str = "CRAWLDEDUP_INDEX_CHILD_DIR";
const CHECKPOINTED: u64 = 3_000;

fn nth_fp(i: u64) -> u64 {
    // Spread fingerprints so that none are near each other.
    i.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17) ^ 0x5555_0000_aaaa_ffff
}

#[test]
fn an_index_opened_for_an_expected_count_never_grows_on_the_way_and_answers_the_same() {
    let n = 20_000u64;
    let (reserved_dir, plain_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let expecting = |documents| config(3, None).with_reserve(documents);
    let reserved = SimhashIndex::open(reserved_dir.path(), expecting(n)).unwrap();
    let plain = SimhashIndex::open(plain_dir.path(), config(3, None)).unwrap();
    let room = reserved.table_bytes();
    assert!(
        room > 100 * plain.table_bytes(),
        "{room} bytes of tables for {n} documents"
    );
    // Unrelated documents, and every tenth a copy of an earlier one two bits away with its
    // sketch: both indexes decide every one the same way, and the copies are found.
    let mut near = 0;
    for i in 0..n {
        let doc = if i % 10 == 9 {
            let mut copy = record(nth_fp(i - 5) ^ 0b101, u128::from(i));
            copy.sketch = own_sketch(i - 5);
            copy
        } else {
            record(nth_fp(i), u128::from(i))
        };
        let decision = reserved.check_and_insert(doc.clone()).unwrap();
        assert_eq!(
            decision,
            plain.check_and_insert(doc).unwrap(),
            "document {i}"
        );
        near += usize::from(matches!(decision, Decision::Near { .. }));
    }
    assert_eq!(near as u64, n / 10);
    assert_eq!(reserved.table_bytes(), room, "a table grew on the way");
    assert!(plain.table_bytes() < room);
    reserved.checkpoint().unwrap();
    drop(reserved);
    // Reopened expecting fewer than it holds: as it was; expecting more: room for them,
    // with every document still found.
    let reopened = SimhashIndex::open(reserved_dir.path(), expecting(n / 2)).unwrap();
    let rebuilt = reopened.table_bytes();
    drop(reopened);
    let grown = SimhashIndex::open(reserved_dir.path(), expecting(4 * n)).unwrap();
    assert!(
        grown.table_bytes() > 3 * rebuilt,
        "{rebuilt} -> {}",
        grown.table_bytes()
    );
    assert_eq!(
        grown.len(),
        n - n / 10,
        "the copies are recorded, not stored"
    );
    for i in (0..n).step_by(97) {
        let probe = record(nth_fp(i), u128::from(i));
        let found = grown.find(&probe).unwrap();
        assert_eq!(found.is_some(), i % 10 != 9, "document {i}");
        assert_eq!(found, plain.find(&probe).unwrap(), "document {i}");
    }
}

#[test]
fn checkpointed_index_survives_kill_9() {
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        // The child: insert, checkpoint, say so, then keep inserting until killed.
        let index = SimhashIndex::open(Path::new(&dir), config(3, None)).unwrap();
        for i in 0..CHECKPOINTED {
            index
                .check_and_insert(record(nth_fp(i), u128::from(i)))
                .unwrap();
        }
        index.checkpoint().unwrap();
        std::fs::write(Path::new(&dir).join("checkpointed"), "yes").unwrap();
        let mut i = CHECKPOINTED;
        loop {
            index
                .check_and_insert(record(nth_fp(i), u128::from(i)))
                .unwrap();
            i += 1;
        }
    }
    let dir = tempfile::tempdir().unwrap();
    child::kill_after_checkpoint(
        "index::checkpointed_index_survives_kill_9",
        CHILD_ENV,
        dir.path(),
        std::time::Duration::from_millis(100),
    );

    let index = SimhashIndex::open(dir.path(), config(3, None)).unwrap();
    assert!(
        index.len() >= CHECKPOINTED,
        "only {} documents survived",
        index.len()
    );
    for i in 0..CHECKPOINTED {
        assert_eq!(
            index
                .check_and_insert(record(nth_fp(i), u128::from(i)))
                .unwrap(),
            Decision::Exact(i),
            "document {i}"
        );
        assert_eq!(index.query(Simhash(nth_fp(i))), vec![(i, 0)]);
    }
}

#[test]
fn reopen_keeps_documents_and_layout() {
    let dir = tempfile::tempdir().unwrap();
    {
        let index = SimhashIndex::open(dir.path(), config(3, Some(6))).unwrap();
        for i in 0..2_000 {
            index
                .check_and_insert(record(nth_fp(i), u128::from(i)))
                .unwrap();
        }
        index.checkpoint().unwrap();
    }
    // A different configuration does not change a stored layout.
    let index = SimhashIndex::open(dir.path(), config(3, Some(5))).unwrap();
    assert_eq!(index.plan().blocks.len(), 6);
    assert_eq!(index.len(), 2_000);
    assert_eq!(index.query(Simhash(nth_fp(1234) ^ 0b11)), vec![(1234, 2)]);
}

/// An index of 500 documents, checkpointed and closed, in a new folder.
fn checkpointed_index() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let index = SimhashIndex::open(dir.path(), config(3, None)).unwrap();
    for i in 0..500u64 {
        let fp = (i + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        assert!(matches!(
            index.check_and_insert(record(fp, u128::from(i))).unwrap(),
            Decision::Unique(_)
        ));
    }
    index.checkpoint().unwrap();
    drop(index);
    // sled's background threads may hold the files a moment after the drop.
    std::thread::sleep(std::time::Duration::from_millis(100));
    dir
}

/// Opening `dir` must fail with one line that says the index is damaged.
fn assert_refused_as_damaged(dir: &Path, what: &str) {
    match SimhashIndex::open(dir, config(3, None)) {
        Ok(index) => panic!("{what}: opened with {} documents", index.len()),
        Err(e) => assert_one_damage_line(&e.to_string(), what),
    }
}

fn assert_one_damage_line(line: &str, what: &str) {
    assert!(line.contains("damaged"), "{what}: {line}");
    assert!(!line.contains('\n'), "{what}: one line: {line}");
}

/// After damage to sled's files, opening `dir` either fails with one line saying the index
/// is damaged, or (when the damage hit bytes sled no longer uses) gives back all 500
/// documents, each found again as an exact duplicate: never fewer, never a silent `unique`.
/// Returns whether it refused.
fn refused_or_whole(dir: &Path, what: &str) -> bool {
    match SimhashIndex::open(dir, config(3, None)) {
        Err(e) => {
            assert_one_damage_line(&e.to_string(), what);
            true
        }
        Ok(index) => {
            assert_eq!(index.len(), 500, "{what}");
            for i in 0..500u64 {
                let fp = (i + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                let found = index.find(&record(fp, u128::from(i))).unwrap();
                assert_eq!(found, Some(Decision::Exact(i)), "{what}: document {i}");
            }
            false
        }
    }
}

/// sled's data files in an index folder (everything but the configuration and the
/// manifest).
fn sled_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = walk(dir)
        .into_iter()
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name != "conf" && !name.starts_with(crawldedup::index::manifest::MANIFEST_FILE)
        })
        .collect();
    files.sort();
    files
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn a_truncated_database_is_refused_never_read_as_empty() {
    let mut refusals = 0;
    for keep in [0.0, 0.5, 0.9] {
        let dir = checkpointed_index();
        for file in sled_files(dir.path()) {
            let len = std::fs::metadata(&file).unwrap().len();
            let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
            f.set_len((len as f64 * keep) as u64).unwrap();
        }
        refusals += usize::from(refused_or_whole(dir.path(), &format!("cut to {keep}")));
    }
    assert!(refusals >= 2, "an empty or half database is refused");
}

#[test]
fn overwritten_database_bytes_are_refused_never_read_as_empty() {
    let mut refusals = 0;
    for at in [0.1, 0.5, 0.8] {
        let dir = checkpointed_index();
        for file in sled_files(dir.path()) {
            let mut bytes = std::fs::read(&file).unwrap();
            if bytes.is_empty() {
                continue;
            }
            let start = (bytes.len() as f64 * at) as usize;
            let end = (start + 4096).min(bytes.len());
            for b in &mut bytes[start..end] {
                *b = 0x5a;
            }
            std::fs::write(&file, &bytes).unwrap();
        }
        refusals += usize::from(refused_or_whole(
            dir.path(),
            &format!("bytes overwritten at {at}"),
        ));
    }
    assert!(refusals >= 1, "overwritten data is refused");
}

#[test]
fn a_missing_or_damaged_manifest_is_refused() {
    let dir = checkpointed_index();
    let manifest = dir.path().join(crawldedup::index::manifest::MANIFEST_FILE);
    let text = std::fs::read(&manifest).unwrap();
    let mut changed = text.clone();
    // "documents 500" becomes "documents 400": the check line no longer matches.
    let at = changed.windows(3).position(|w| w == b"500").unwrap();
    changed[at] = b'4';
    std::fs::write(&manifest, &changed).unwrap();
    assert_refused_as_damaged(dir.path(), "manifest changed");
    std::fs::remove_file(&manifest).unwrap();
    assert_refused_as_damaged(dir.path(), "manifest deleted");
    // Put back, the index opens whole.
    std::fs::write(&manifest, &text).unwrap();
    assert_eq!(
        SimhashIndex::open(dir.path(), config(3, None))
            .unwrap()
            .len(),
        500
    );
}

#[test]
fn documents_after_the_last_checkpoint_are_kept_and_counted_by_the_next() {
    let dir = checkpointed_index();
    {
        let index = SimhashIndex::open(dir.path(), config(3, None)).unwrap();
        assert_eq!(index.len(), 500);
        index.check_and_insert(record(42, 10_000)).unwrap();
        index.checkpoint().unwrap();
    }
    std::thread::sleep(std::time::Duration::from_millis(100));
    let index = SimhashIndex::open(dir.path(), config(3, None)).unwrap();
    assert_eq!(index.len(), 501);
}
