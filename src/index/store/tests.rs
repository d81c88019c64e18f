//! The store's chunks, their order under a crash, format 6's records and sweeps.
use super::chunk::BESIDE_ROWS;
use super::*;
use crate::index::manifest::Manifest;
use crate::index::{Decision, INDEX_FORMAT_VERSION, IndexConfig, SimhashIndex};

fn doc(i: u64) -> DocRecord {
    DocRecord {
        name: format!("https://example.com/{i}"),
        tiny_set: (0..i % 3).map(|j| j as u32 + 7).collect(),
        ..DocRecord::default()
    }
}

#[test]
fn documents_appended_in_batches_that_split_chunks_read_back_each_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = sled::open(dir.path()).unwrap();
    let store = Store::open(&db).unwrap();
    // Batches that start and end inside chunks, one exactly a chunk, one of many.
    let mut first = 0;
    for size in [5, 40, 1, DOC_CHUNK, 70, 3, 200] {
        let docs: Vec<DocRecord> = (first..first + size).map(doc).collect();
        store.append(first, &docs).unwrap();
        first += size;
    }
    assert_eq!(store.written().unwrap(), first);
    for id in 0..first {
        assert_eq!(store.get(id, None).unwrap(), Some(doc(id)), "document {id}");
    }
    assert_eq!(store.get(first, None).unwrap(), None);
    // A chunk is its count (flagged: records beside their rows), each record's end
    // offset, then the records.
    let chunk = store.docs.get(chunk_key(1)).unwrap().unwrap();
    let records: Vec<Vec<u8>> = (DOC_CHUNK..2 * DOC_CHUNK)
        .map(|i| {
            let mut out = Vec::new();
            doc(i).encode_beside_row(&mut out);
            out
        })
        .collect();
    let mut expected = (DOC_CHUNK as u16 | BESIDE_ROWS).to_be_bytes().to_vec();
    let mut end = 0u32;
    for r in &records {
        end += r.len() as u32;
        expected.extend_from_slice(&end.to_be_bytes());
    }
    expected.extend(records.concat());
    assert_eq!(&chunk[..], &expected[..]);
}

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let db = sled::open(dir.path()).unwrap();
    (dir, Store::open(&db).unwrap())
}

fn append(store: &Store, ids: std::ops::Range<u64>) {
    let docs: Vec<DocRecord> = ids.clone().map(doc).collect();
    store.append(ids.start, &docs).unwrap();
}

fn set_written(store: &Store, count: u64) {
    store
        .meta
        .insert(WRITTEN_KEY, &count.to_be_bytes())
        .unwrap();
}

#[test]
fn rows_that_a_crash_left_without_their_records_are_left_out_and_written_over() {
    let (_dir, store) = store();
    append(&store, 0..50);
    // The next batch's rows stored, then the crash: no records, no count.
    store
        .write_rows(50, (50..90).map(|i| Stored::of(&doc(i + 1000))), None)
        .unwrap();
    let rows = store.load_rows(0, &[]).unwrap();
    assert_eq!(rows.len(), 50);
    assert_eq!(store.written().unwrap(), 50);
    assert_eq!(store.get(50, None).unwrap(), None);
    // The batch written again takes their place.
    append(&store, 50..90);
    let rows = store.load_rows(0, &[]).unwrap();
    assert_eq!(rows.len(), 90);
    for id in 0..90 {
        assert_eq!(store.get(id, None).unwrap(), Some(doc(id)), "document {id}");
        assert_eq!(rows.row(id as usize), Some(Stored::of(&doc(id))));
    }
}

#[test]
fn records_stored_past_the_count_are_counted_in_with_their_rows_and_one_without_is_damage() {
    let (_dir, store) = store();
    append(&store, 0..50);
    append(&store, 50..130);
    // The crash came before the count.
    set_written(&store, 50);
    let whole = store.load_rows(0, &[]).unwrap();
    assert_eq!(whole.len(), 130);
    assert_eq!(store.written().unwrap(), 130);
    assert_eq!(whole.row(129), Some(Stored::of(&doc(129))));
    // The same checksum as rows read with their count stored.
    let again = store.load_rows(0, &[]).unwrap();
    assert_eq!(again.checksum, whole.checksum);
    // A record whose row is gone: one line, not a shorter index.
    set_written(&store, 50);
    store.rows.remove(chunk_key(1)).unwrap();
    let Err(StoreError::Corrupt(problem)) = store.load_rows(0, &[]) else {
        panic!("a record without its row was taken in");
    };
    assert_eq!(problem, "document 64 is stored without its row");
    assert!(matches!(store.get(70, None), Err(StoreError::Corrupt(_))));
}

#[test]
fn whole_records_of_format_6_read_back_get_their_rows_made_and_are_continued_beside_rows() {
    let (_dir, store) = store();
    append(&store, 0..40);
    // A whole record keeps its 64-bit length, which a row cuts to 32 bits.
    let mut long = doc(40);
    long.text_chars = u64::from(u32::MAX) + 5;
    long.at = 77;
    store.append(40, std::slice::from_ref(&long)).unwrap();
    let mut whole: Vec<DocRecord> = (0..40).map(doc).collect();
    whole.push(long.clone());
    to_format_6(&store, 0, &whole);
    assert_eq!(store.get(40, None).unwrap(), Some(long.clone()));
    // Format 6 stored the record before its row: a crash could leave it without one.
    store.rows.remove(chunk_key(0)).unwrap();
    store
        .write_rows(0, (0..30).map(|i| Stored::of(&doc(i))), None)
        .unwrap();
    set_written(&store, 30);
    let rows = store.load_rows(0, &[]).unwrap();
    assert_eq!(rows.len(), 41);
    assert_eq!(rows.row(35), Some(Stored::of(&doc(35))));
    assert_eq!(rows.row(40), Some(Stored::of(&long)));
    // New documents complete the whole chunk: written again beside rows, read the same.
    append(&store, 41..70);
    for id in 0..70 {
        let expected = if id == 40 {
            DocRecord {
                text_chars: u64::from(u32::MAX),
                ..long.clone()
            }
        } else {
            doc(id)
        };
        assert_eq!(
            store.get(id, None).unwrap(),
            Some(expected),
            "document {id}"
        );
    }
    let chunk = store.docs.get(chunk_key(1)).unwrap().unwrap();
    assert_ne!(chunk[0] & 0x80, 0, "beside rows");
    let chunk = store.docs.get(chunk_key(0)).unwrap().unwrap();
    assert_eq!(chunk[0] & 0x80, 0, "the whole chunk before stays as it was");
    // A rollback into the whole chunk keeps the head of it.
    let mut rows = store.load_rows(0, &[]).unwrap();
    store.truncate(20, &mut rows).unwrap();
    assert_eq!(store.load_rows(0, &[]).unwrap().len(), 20);
    for id in 0..20 {
        assert_eq!(store.get(id, None).unwrap(), Some(doc(id)), "document {id}");
    }
    assert_eq!(store.get(20, None).unwrap(), None);
}

#[test]
fn a_sweep_step_deletes_rows_only_below_the_records_it_left() {
    let (_dir, store) = store();
    append(&store, 0..1000);
    // Three chunks of each tree a step: the rows' chunks are twice the records'.
    let floor = 900;
    store.delete_below(floor, 3).unwrap();
    let first = store.docs.first().unwrap().unwrap().0;
    let first = key_number(&first).unwrap() * DOC_CHUNK;
    assert_eq!(first, 3 * DOC_CHUNK);
    assert_eq!(store.first_row().unwrap(), Some(ROW_CHUNK));
    for id in first..1000 {
        assert_eq!(store.get(id, None).unwrap(), Some(doc(id)), "document {id}");
    }
    while store.delete_below(floor, 3).unwrap() > 0 {}
    assert_eq!(
        store.first_row().unwrap(),
        Some(floor / ROW_CHUNK * ROW_CHUNK)
    );
    let rows = store.load_rows(floor, &[]).unwrap();
    assert_eq!(rows.len(), 1000);
    for id in floor..1000 {
        assert_eq!(store.get(id, None).unwrap(), Some(doc(id)), "document {id}");
    }
}

#[test]
fn an_index_of_format_6_opens_with_every_record_and_decision_and_is_upgraded() {
    let dir = tempfile::tempdir().unwrap();
    let texts: Vec<String> = (0..150)
        .map(|i| {
            let words: Vec<String> = (0..(8 + i % 40)).map(|w| format!("w{}x{}", i, w)).collect();
            words.join(" ")
        })
        .collect();
    let record = |i: usize| {
        let text = &texts[i];
        let mut r = DocRecord::new(
            &format!("https://a.example/{i}"),
            text,
            &crate::Fingerprint::of(text),
        );
        if i % 2 == 0 {
            r.blocks = Some(crate::fingerprint::Blocks::of("a.example", text));
        }
        r
    };
    let stored: Vec<DocRecord> = {
        let index = SimhashIndex::open(dir.path(), IndexConfig::default()).unwrap();
        for i in 0..texts.len() {
            assert_eq!(
                index.check_and_insert(record(i)).unwrap(),
                Decision::Unique(i as u64)
            );
        }
        let stored = (0..texts.len() as u64)
            .map(|id| index.get(id).unwrap().unwrap())
            .collect();
        index.close().unwrap();
        stored
    };
    assert!(stored.iter().any(|r| !r.tiny_set.is_empty()));
    // What format 6 wrote: whole records, the layout and the manifest saying 6.
    {
        let db = sled::open(dir.path()).unwrap();
        let store = Store::open(&db).unwrap();
        to_format_6(&store, 0, &stored);
        let (_, fingerprint, k, blocks) = store.layout().unwrap().unwrap();
        store.set_layout(6, fingerprint, k, blocks).unwrap();
        db.flush().unwrap();
        let mut manifest = Manifest::read(dir.path()).unwrap().unwrap();
        manifest.format = 6;
        manifest.write(dir.path()).unwrap();
    }
    let index = SimhashIndex::open(dir.path(), IndexConfig::default()).unwrap();
    for (id, r) in stored.iter().enumerate() {
        assert_eq!(
            index.get(id as u64).unwrap().as_ref(),
            Some(r),
            "document {id}"
        );
        assert_eq!(
            index.find(&record(id)).unwrap(),
            Some(Decision::Exact(id as u64)),
            "document {id}"
        );
    }
    // New documents go beside their rows; the next checkpoint's manifest says 7.
    let more = record(3);
    let more = DocRecord {
        name: "https://b.example/3".into(),
        ..more
    };
    assert_eq!(index.check_and_insert(more).unwrap(), Decision::Exact(3));
    index.close().unwrap();
    let manifest = Manifest::read(dir.path()).unwrap().unwrap();
    assert_eq!(manifest.format, INDEX_FORMAT_VERSION);
    {
        let db = sled::open(dir.path()).unwrap();
        let layout = Store::open(&db).unwrap().layout().unwrap();
        assert_eq!(layout.map(|l| l.0), Some(INDEX_FORMAT_VERSION));
    }
    let index = SimhashIndex::open(dir.path(), IndexConfig::default()).unwrap();
    assert_eq!(index.get(7).unwrap().as_ref(), Some(&stored[7]));
}
