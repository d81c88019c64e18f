//! The snapshot's header: where each section lies, what it holds, and its checksum.

use serde::{Deserialize, Serialize};

use super::super::plan::Plan;
use super::{Rows, SNAPSHOT_VERSION};
use crate::fingerprint::FINGERPRINT_VERSION;

/// What a snapshot describes: (documents, floor, row checksum) of its rows.
pub(in crate::index) type Extent = (u64, u64, u64);

/// A snapshot's header, written as JSON into a header slot.
#[derive(Debug, Serialize, Deserialize, PartialEq, Clone)]
pub(super) struct Header {
    pub(super) snapshot: u32,
    /// Which of the two header slots is in use: the valid one with the higher sequence
    /// (written into slot `sequence % 2`). Absent before version 3, so that an older
    /// snapshot is refused by its version.
    #[serde(default)]
    pub(super) sequence: u64,
    pub(super) format: u32,
    pub(super) fingerprint: u32,
    pub(super) little_endian: bool,
    pub(super) k: u32,
    pub(super) blocks: u32,
    /// The most documents any section holds: a manifest must record at least as many.
    pub(super) documents: u64,
    /// The rows held: documents `floor` to `rows_documents`.
    pub(super) floor: u64,
    pub(super) rows_documents: u64,
    /// Sum of the row checksums of the rows held.
    pub(super) rows_checksum: u64,
    /// The rows from `floor` to the first of `more_rows` (or to `rows_documents`).
    pub(super) rows: Section,
    /// Rows written since, each run after the one before, the last to `rows_documents`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) more_rows: Vec<MoreRows>,
    pub(super) tables: Vec<TableSections>,
    pub(super) bands: Vec<TableSections>,
}

/// A run of rows added to a snapshot in place: documents `from` to `documents`. Written in
/// the header as an array of its five numbers, as a delta is: a header names up to nine of
/// each per table, and its slot is 32 KiB.
#[derive(Debug, Serialize, Deserialize, PartialEq, Clone, Copy)]
#[serde(from = "[u64; 5]", into = "[u64; 5]")]
pub(super) struct MoreRows {
    pub(super) from: u64,
    pub(super) documents: u64,
    pub(super) section: Section,
}

impl From<[u64; 5]> for MoreRows {
    fn from([from, documents, offset, len, xxh3]: [u64; 5]) -> MoreRows {
        let section = Section { offset, len, xxh3 };
        MoreRows {
            from,
            documents,
            section,
        }
    }
}

impl From<MoreRows> for [u64; 5] {
    fn from(r: MoreRows) -> [u64; 5] {
        let s = r.section;
        [r.from, r.documents, s.offset, s.len, s.xxh3]
    }
}

#[derive(Debug, Serialize, Deserialize, PartialEq, Clone, Copy)]
pub(super) struct Section {
    pub(super) offset: u64,
    /// Bytes.
    pub(super) len: u64,
    /// xxh3-64 of the bytes.
    pub(super) xxh3: u64,
}

#[derive(Debug, Serialize, Deserialize, PartialEq, Clone)]
pub(super) struct TableSections {
    pub(super) leading: u32,
    pub(super) floor: u32,
    pub(super) entries: u64,
    /// The table holds the entries of every document below this count, and none after.
    pub(super) documents: u64,
    pub(super) lines: Section,
    /// Tables of the entries of the documents after it, each from where the one before
    /// ends (see `in_place.rs`): an open maps them as the table's tail.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) deltas: Vec<Delta>,
}

/// A table of the entries of documents `from` to `documents`, with the leading bits of the
/// table it follows and no floor; in the header, an array of its six numbers.
#[derive(Debug, Serialize, Deserialize, PartialEq, Clone, Copy)]
#[serde(from = "[u64; 6]", into = "[u64; 6]")]
pub(super) struct Delta {
    pub(super) from: u64,
    pub(super) documents: u64,
    pub(super) entries: u64,
    pub(super) lines: Section,
}

impl From<[u64; 6]> for Delta {
    fn from([from, documents, entries, offset, len, xxh3]: [u64; 6]) -> Delta {
        let lines = Section { offset, len, xxh3 };
        Delta {
            from,
            documents,
            entries,
            lines,
        }
    }
}

impl From<Delta> for [u64; 6] {
    fn from(d: Delta) -> [u64; 6] {
        let s = d.lines;
        [d.from, d.documents, d.entries, s.offset, s.len, s.xxh3]
    }
}

impl TableSections {
    /// Every document below this count has its entries in the section or its deltas.
    pub(super) fn held(&self) -> u64 {
        self.deltas.last().map_or(self.documents, |d| d.documents)
    }

    /// The sections: the lines, then the deltas'.
    pub(super) fn sections(&self) -> impl Iterator<Item = &Section> + '_ {
        std::iter::once(&self.lines).chain(self.deltas.iter().map(|d| &d.lines))
    }
}

impl Header {
    /// The header of a snapshot of `rows` and these tables' sections.
    pub(super) fn of(
        plan: &Plan,
        sequence: u64,
        rows: &Rows,
        tables: Vec<TableSections>,
        bands: Vec<TableSections>,
    ) -> Header {
        let mut header = Header {
            snapshot: SNAPSHOT_VERSION,
            sequence,
            format: super::super::INDEX_FORMAT_VERSION,
            fingerprint: FINGERPRINT_VERSION,
            little_endian: cfg!(target_endian = "little"),
            k: plan.k,
            blocks: plan.blocks.len() as u32,
            documents: 0,
            floor: 0,
            rows_documents: 0,
            rows_checksum: 0,
            rows: rows.section,
            more_rows: Vec::new(),
            tables,
            bands,
        };
        header.set_rows(rows);
        header
    }

    /// Records `rows` as the snapshot's rows.
    pub(super) fn set_rows(&mut self, rows: &Rows) {
        self.rows = rows.section;
        self.more_rows.clear();
        self.floor = rows.floor;
        self.rows_documents = rows.documents;
        self.rows_checksum = rows.checksum;
        self.count_documents();
    }

    /// Records `rows`, from `rows_documents` on, as rows added to the snapshot's.
    pub(super) fn add_rows(&mut self, rows: &Rows) {
        debug_assert_eq!(rows.floor, self.rows_documents);
        self.more_rows.push(MoreRows {
            from: rows.floor,
            documents: rows.documents,
            section: rows.section,
        });
        self.rows_documents = rows.documents;
        self.rows_checksum = self.rows_checksum.wrapping_add(rows.checksum);
        self.count_documents();
    }

    /// The documents the rows section holds, before any rows added to it.
    pub(super) fn first_rows_end(&self) -> u64 {
        self.more_rows
            .first()
            .map_or(self.rows_documents, |r| r.from)
    }

    /// The table sections, simhash tables first, then the bands.
    pub(super) fn table(&self, t: usize) -> &TableSections {
        match self.tables.get(t) {
            Some(table) => table,
            None => &self.bands[t - self.tables.len()],
        }
    }

    /// Sets `documents`: the most any section holds.
    pub(super) fn count_documents(&mut self) {
        self.documents = (self.tables.iter().chain(&self.bands))
            .map(TableSections::held)
            .fold(self.rows_documents, u64::max);
    }

    /// What the snapshot's rows describe.
    pub(super) fn extent(&self) -> Extent {
        (self.rows_documents, self.floor, self.rows_checksum)
    }

    /// The sections, rows first: (offset, length).
    pub(super) fn sections(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        std::iter::once(&self.rows)
            .chain(self.more_rows.iter().map(|r| &r.section))
            .chain(
                self.tables
                    .iter()
                    .chain(&self.bands)
                    .flat_map(TableSections::sections),
            )
            .map(|s| (s.offset, s.len))
    }
}
