//! A table's copy for a snapshot, taken under the index's lock, and its tail placed into it
//! after.

use super::Key;
use super::column::{CacheLine, Column};
use super::table::{Bucketed, TableShape};

/// A table's copy taken by [`Bucketed::capture`]: its shape, and the tail still to place.
pub(crate) struct Captured<K: Key> {
    pub(super) shape: TableShape,
    pub(super) tail: Vec<std::sync::Arc<Bucketed<K>>>,
}

impl<K: Key> Captured<K> {
    /// The shape of the copy in `lines` with the tail placed into it (the lines grown if
    /// it needs room): a table of every entry the captured table held.
    pub(crate) fn merge(self, lines: &mut Vec<CacheLine>) -> (TableShape, MergedLines<'_>) {
        if self.tail.is_empty() {
            return (self.shape, MergedLines::Copy(lines));
        }
        let (leading, floor, entries) = self.shape;
        let mut table = Bucketed::<K> {
            leading,
            lines: Column::Owned(std::mem::take(lines)),
            entries,
            floor,
            tail: Vec::new(),
            ready: None,
            _key: std::marker::PhantomData,
        };
        table.place_tail(&self.tail, floor);
        let shape = (table.leading, table.floor, table.entries);
        match table.lines {
            // Placed in the copy: it goes on serving as the buffer.
            Column::Owned(values) => {
                *lines = values;
                (shape, MergedLines::Copy(lines))
            }
            grown => (shape, MergedLines::Grown(grown)),
        }
    }
}

/// The lines of a merged copy: the buffer it was copied into, or the larger lines it grew
/// into.
pub(crate) enum MergedLines<'a> {
    Copy(&'a [CacheLine]),
    Grown(Column<CacheLine>),
}

impl std::ops::Deref for MergedLines<'_> {
    type Target = [CacheLine];
    fn deref(&self) -> &[CacheLine] {
        match self {
            MergedLines::Copy(lines) => lines,
            MergedLines::Grown(lines) => lines,
        }
    }
}
