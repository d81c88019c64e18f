//! Tests of the URL journal: order across generations, torn tails, damage, and version-2 files.

use super::*;

const ID: StateId = 0xabcd;

fn entry(i: u64) -> Entry {
    Entry {
        hash: i.wrapping_mul(0x9e37_79b9_7f4a_7c15),
        hash128: u128::from(i) << 64 | 7,
        slice: i / 3,
    }
}

#[test]
fn entries_come_back_in_order_across_generations() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::create(dir.path(), 3, ID).unwrap();
    // Past the first chunk, so that the file grows once.
    for i in 0..1_500 {
        journal.append(entry(i)).unwrap();
    }
    journal.sync().unwrap();
    journal.rotate(4).unwrap();
    journal.append(entry(10)).unwrap();
    journal.sync().unwrap();
    let found = read_all(dir.path()).unwrap();
    assert_eq!(found.len(), 2);
    assert_eq!((found[0].seq, found[0].entries.len()), (3, 1_500));
    assert_eq!(found[0].entries[1_499], entry(1_499));
    assert_eq!(found[0].allocated, HEADER_LEN as u64 + 2 * CHUNK);
    assert_eq!(found[1].entries, vec![entry(10)]);
    assert_eq!(read_headers(dir.path()), vec![(3, Ok(ID)), (4, Ok(ID))]);
    remove_before(dir.path(), 4).unwrap();
    assert_eq!(read_all(dir.path()).unwrap().len(), 1);
}

#[test]
fn a_torn_tail_of_the_newest_generation_is_cut_and_damage_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::create(dir.path(), 1, ID).unwrap();
    for i in 0..4 {
        journal.append(entry(i)).unwrap();
    }
    journal.sync().unwrap();
    drop(journal);
    let path = path_of(dir.path(), 1);
    let whole = fs::read(&path).unwrap();
    let end = HEADER_LEN + 4 * RECORD_LEN;

    // Half a record after the last: cut off, and appending resumes after the last whole
    // one.
    let mut torn = whole.clone();
    torn[end..end + 20].copy_from_slice(&record(1, entry(4))[..20]);
    fs::write(&path, &torn).unwrap();
    let found = read_all(dir.path()).unwrap();
    assert_eq!(found[0].entries.len(), 4);
    let journal = Journal::resume(dir.path(), found.last().unwrap(), ID).unwrap();
    journal.append(entry(5)).unwrap();
    journal.sync().unwrap();
    let found = read_all(dir.path()).unwrap();
    assert_eq!(found[0].entries.last(), Some(&entry(5)));
    assert_eq!(found[0].entries.len(), 5);
    drop(journal);

    // A flipped byte in the middle: refused, with the record named.
    let mut flipped = fs::read(&path).unwrap();
    flipped[HEADER_LEN + RECORD_LEN + 3] ^= 1;
    fs::write(&path, &flipped).unwrap();
    let (named, problem) = read_all(dir.path()).unwrap_err();
    assert_eq!(named, path);
    assert!(problem.contains("record 2"), "{problem}");

    // A header cut short, a file cut anywhere, or a record from another generation:
    // refused.
    fs::write(&path, &whole[..10]).unwrap();
    assert!(read_all(dir.path()).is_err());
    for cut in [whole.len() / 2, end, end - RECORD_LEN, whole.len() - 1] {
        fs::write(&path, &whole[..cut]).unwrap();
        let problem = read_all(dir.path()).unwrap_err().1;
        assert!(problem.contains("cut short"), "cut at {cut}: {problem}");
    }
    let mut foreign = whole.clone();
    foreign[HEADER_LEN..HEADER_LEN + RECORD_LEN].copy_from_slice(&record(2, entry(0)));
    fs::write(&path, &foreign).unwrap();
    assert!(read_all(dir.path()).unwrap_err().1.contains("record 1"));
}

#[test]
fn a_bad_tail_in_an_older_generation_is_damage() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::create(dir.path(), 1, ID).unwrap();
    journal.append(entry(0)).unwrap();
    journal.rotate(2).unwrap();
    drop(journal);
    let path = path_of(dir.path(), 1);
    let mut bytes = fs::read(&path).unwrap();
    let end = HEADER_LEN + RECORD_LEN;
    bytes[end..end + 5].copy_from_slice(&[0xff; 5]);
    fs::write(&path, &bytes).unwrap();
    let (named, problem) = read_all(dir.path()).unwrap_err();
    assert_eq!(named, path);
    assert!(problem.contains("synced whole"), "{problem}");
}

#[test]
fn a_version_2_generation_is_read_and_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let path = path_of(dir.path(), 1);
    let mut bytes = header_v2(1).to_vec();
    bytes.extend_from_slice(&record(1, entry(0)));
    // And half a record after it, torn by a crash.
    bytes.extend_from_slice(&record(1, entry(9))[..17]);
    fs::write(&path, &bytes).unwrap();
    let found = read_all(dir.path()).unwrap();
    assert_eq!(found[0].entries.len(), 1);
    assert_eq!(read_headers(dir.path()), vec![(1, Ok(0))]);
    let journal = Journal::resume(dir.path(), &found[0], ID).unwrap();
    journal.append(entry(1)).unwrap();
    journal.sync().unwrap();
    assert_eq!(
        read_all(dir.path()).unwrap()[0].entries,
        vec![entry(0), entry(1)]
    );
    // Rotated away, it reads whole as an older generation: it grew by its records, with
    // no zeros after them.
    journal.rotate(2).unwrap();
    let found = read_all(dir.path()).unwrap();
    assert_eq!(found[0].entries, vec![entry(0), entry(1)]);
    assert_eq!(found[1].seq, 2);
}
