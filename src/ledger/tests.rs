//! The ledger's checks of the parts of a state directory.

use super::*;

fn sample() -> Ledger {
    Ledger {
        id: 0x0123_4567_89ab_cdef_0011_2233_4455_6677,
        url_filter: 3,
        journal: true,
        index: Some(40),
        crawl: None,
        kind: Some(StateKind::Sidecar),
        unsettled: None,
    }
}

#[test]
fn a_ledger_reads_back_as_written() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(Ledger::read(dir.path()).unwrap(), None);
    sample().write(dir.path()).unwrap();
    assert_eq!(Ledger::read(dir.path()).unwrap(), Some(sample()));
    let crawl = Ledger {
        crawl: Some(7),
        index: None,
        journal: false,
        kind: Some(StateKind::Crawl),
        unsettled: Some(12),
        ..sample()
    };
    crawl.write(dir.path()).unwrap();
    assert_eq!(Ledger::read(dir.path()).unwrap(), Some(crawl));
}

#[test]
fn every_changed_or_cut_byte_of_a_ledger_is_detected() {
    let text = sample().text().into_bytes();
    for at in 0..text.len() {
        let mut changed = text.clone();
        changed[at] ^= 0x01;
        assert!(Ledger::parse(&changed).is_err(), "byte {at} changed");
        assert!(Ledger::parse(&text[..at]).is_err(), "cut at {at}");
    }
}

#[test]
fn a_new_directory_gets_a_ledger_and_an_empty_one_needs_none() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(check(dir.path()), Ok(None));
    let ledger = open(dir.path()).unwrap();
    assert_eq!(check(dir.path()), Ok(Some(ledger)));
    assert_eq!(open(dir.path()).unwrap(), ledger);
}

/// A ledger of format 1 (before kinds) is a crawl's when it records a crawl, rolled back to
/// the crawl's checkpoint as before; else of no kind yet.
#[test]
fn a_ledger_written_before_kinds_reads_as_a_crawl_s_when_it_records_one() {
    let old = |crawl: &str| {
        crate::sealed::seal(&format!(
            "{HEADER}\nformat 1\nid {:032x}\nurl-filter 2\njournal no\nindex 5\ncrawl {crawl}\n",
            7u128
        ))
    };
    let crawl = Ledger::parse(old("3").as_bytes()).unwrap();
    assert_eq!(crawl.kind, Some(StateKind::Crawl));
    assert_eq!(crawl.unsettled, Some(0));
    let stage = Ledger::parse(old("none").as_bytes()).unwrap();
    assert_eq!(stage.kind, None);
    assert_eq!(stage.unsettled, None);
}
