//! How the index lies in sled.
//!
//! Three trees:
//!
//! - `meta`: the layout (format version, fingerprint version, k, blocks) and `written`, the
//!   number of documents whose rows are stored;
//! - `docs`: the part of each document's record ([`DocRecord`]) that its row does not
//!   hold (the name, the tiny set and the lines' profile), [`DOC_CHUNK`] consecutive ids
//!   per value (key: `id / DOC_CHUNK`, 8 bytes big-endian; value: a count, an offset per
//!   record, then the records), so that a batch of new documents costs one sled write per
//!   32 documents and `get` reads one small value and the row. Index format 6 kept whole
//!   records (a chunk's count tells which); they are read as they are, and a chunk that
//!   new documents complete is written again in the current form;
//! - `rows`: per document, the simhash (8 bytes), the digest (16), the text length (4), the
//!   time it was stored (4) and the confirmation sketch (68), [`ROW_CHUNK`] consecutive ids per value (key:
//!   `id / ROW_CHUNK`), from which the in-memory tables are rebuilt on open without reading
//!   the records.
//!
//! The permuted tables are not stored: they are a function of the simhashes, and permuting
//! and bucketing 10 M rows in memory is faster than reading 10 copies of them back. (One
//! sled entry per table row, the first design, was slower at both by an order of
//! magnitude.)
//!
//! Documents below the index's floor (expired by a retention window, see
//! [`super::SimhashIndex::sweep`]) are deleted a whole chunk at a time, oldest first, once a
//! checkpoint's manifest has recorded the floor; rows of a chunk that the floor cuts through
//! stay until the whole chunk expires, and loading skips them.
//!
//! A batch is written rows first, then docs, then `written`. Each sled write is atomic and
//! sled recovers its writes in order, so a crash leaves at most a tail of rows with no
//! records, which open leaves out (the next batch writes over them), or a tail of
//! documents with both, which open counts in. (Format 6 wrote the records first; a whole
//! record past `written` gets its row made from it.) A sweep deletes a chunk's rows only
//! once the records that they go with are gone.
//!
//! Keeping each field once (format 7) cut what sled holds per document by two-fifths (245
//! bytes a document at 3 M instead of 427), and what its recovery after a kill reads with it.

mod chunk;

#[cfg(test)]
pub(crate) use chunk::to_format_6;
use chunk::{beside_rows, decode_chunk, encode_chunk, unreadable_chunk};

use super::{DocId, DocRecord, Stored};
use crate::fingerprint::{Digest, SKETCH_BYTES, Sketch};

/// Document records per `docs` value.
pub const DOC_CHUNK: u64 = 32;
/// Rows per `rows` value.
pub const ROW_CHUNK: u64 = 64;
/// Bytes per row: simhash (8), digest (16), text length (4), time stored (4), sketch.
pub const ROW_BYTES: usize = 32 + SKETCH_BYTES;

const LAYOUT_KEY: &str = "layout";
const WRITTEN_KEY: &str = "written";

/// Every live document's row, by id from `base`, as the in-memory index keeps them, read
/// straight into place with no array of rows in between.
#[derive(Debug, Default)]
pub(crate) struct Rows {
    /// Id of `docs[0]`: the floor below which documents expired.
    pub(crate) base: u64,
    pub(crate) docs: Vec<Stored>,
    /// Sum of the row checksums of every row ([`super::manifest::row_checksum`]).
    pub(crate) checksum: u64,
    /// The sum over the rows below `n`, for each `n` asked for (`None` when fewer rows).
    pub(crate) checksums_at: Vec<(u64, Option<u64>)>,
}

impl Rows {
    /// The id after the last row: the number of documents ever stored.
    pub(crate) fn len(&self) -> usize {
        self.base as usize + self.docs.len()
    }

    /// Adds the next row, from its stored bytes.
    fn push(&mut self, bytes: &[u8]) -> Option<()> {
        let row = decode_row(bytes)?;
        self.checksum = self
            .checksum
            .wrapping_add(super::manifest::row_checksum(self.len() as u64, bytes));
        self.docs.push(row);
        let len = self.len() as u64;
        for (at, sum) in &mut self.checksums_at {
            if *at == len {
                *sum = Some(self.checksum);
            }
        }
        Some(())
    }

    /// Keeps the rows below `len`, and their checksum.
    fn truncate(&mut self, len: usize) {
        if self.len() <= len {
            return;
        }
        if len <= self.base as usize {
            // Nothing kept is held here: it had expired, or is held elsewhere (the sum
            // the rows were loaded on from, marked at their base).
            let marked = self.checksums_at.iter().find(|(at, _)| *at == len as u64);
            self.checksum = marked.and_then(|(_, sum)| *sum).unwrap_or(0);
            self.base = len as u64;
            self.docs.clear();
            return;
        }
        self.docs.truncate(len - self.base as usize);
        let marked = self
            .checksums_at
            .iter()
            .find(|(at, _)| *at == len as u64)
            .and_then(|(_, sum)| *sum);
        let base = self.base;
        self.checksum = marked.unwrap_or_else(|| {
            self.docs.iter().enumerate().fold(0u64, |sum, (i, row)| {
                sum.wrapping_add(super::manifest::row_checksum(
                    base + i as u64,
                    &encode_row(*row),
                ))
            })
        });
    }

    /// The row of `id`, if held.
    fn row(&self, id: usize) -> Option<Stored> {
        self.docs.get(id.checked_sub(self.base as usize)?).copied()
    }
}

#[derive(Debug, Clone)]
pub(crate) enum StoreError {
    Sled(sled::Error),
    Corrupt(String),
}

impl From<sled::Error> for StoreError {
    fn from(e: sled::Error) -> Self {
        StoreError::Sled(e)
    }
}

#[derive(Clone)]
pub(crate) struct Store {
    meta: sled::Tree,
    docs: sled::Tree,
    rows: sled::Tree,
}

impl Store {
    pub(crate) fn open(db: &sled::Db) -> Result<Store, sled::Error> {
        Ok(Store {
            meta: db.open_tree("meta")?,
            docs: db.open_tree("docs")?,
            rows: db.open_tree("rows")?,
        })
    }

    /// (format version, fingerprint version, k, blocks), if an index was created here.
    pub(crate) fn layout(&self) -> Result<Option<(u32, u32, u32, u32)>, sled::Error> {
        Ok(self.meta.get(LAYOUT_KEY)?.and_then(|v| {
            let word = |i: usize| Some(u32::from_be_bytes(v.get(i..i + 4)?.try_into().ok()?));
            Some((word(0)?, word(4)?, word(8)?, word(12)?))
        }))
    }

    pub(crate) fn set_layout(
        &self,
        version: u32,
        fingerprint_version: u32,
        k: u32,
        blocks: u32,
    ) -> Result<(), sled::Error> {
        let mut v = Vec::with_capacity(16);
        for word in [version, fingerprint_version, k, blocks] {
            v.extend_from_slice(&word.to_be_bytes());
        }
        self.meta.insert(LAYOUT_KEY, v)?;
        Ok(())
    }

    /// Whether no document was ever written here.
    pub(crate) fn is_empty(&self) -> Result<bool, sled::Error> {
        Ok(self.docs.is_empty() && self.rows.is_empty() && self.meta.get(WRITTEN_KEY)?.is_none())
    }

    /// Documents whose rows are written (the rows of a crash-cut tail may still need mending).
    pub(crate) fn written(&self) -> Result<u64, StoreError> {
        match self.meta.get(WRITTEN_KEY)? {
            Some(v) => Ok(u64::from_be_bytes(v.as_ref().try_into().map_err(|_| {
                StoreError::Corrupt("unreadable written count".into())
            })?)),
            None => Ok(0),
        }
    }

    /// Every live document's row (ids from `floor`), by id; mends the rows of a tail that a
    /// crash cut short. The checksum of the rows below `n` is kept for each `n` of `marks`.
    pub(crate) fn load_rows(&self, floor: u64, marks: &[u64]) -> Result<Rows, StoreError> {
        self.load_rows_from(floor, 0, marks)
    }

    /// As [`Store::load_rows`], from row `floor` on, with the checksums running on from
    /// `prior` (the sum over the rows before `floor` that are held elsewhere: a snapshot's).
    pub(crate) fn load_rows_from(
        &self,
        floor: u64,
        prior: u64,
        marks: &[u64],
    ) -> Result<Rows, StoreError> {
        let written = self.written()?;
        let floor = floor.min(written);
        let mut rows = Rows {
            base: floor,
            docs: super::memory::with_capacity((written - floor) as usize),
            checksum: prior,
            checksums_at: marks
                .iter()
                .map(|&at| (at, (at <= floor).then_some(prior)))
                .collect(),
        };
        let first_chunk = floor / ROW_CHUNK;
        // Rows past `written`: a batch's, stored before a crash cut it off.
        let mut past = Vec::new();
        for item in self.rows.range(chunk_key(first_chunk)..) {
            let (key, value) = item?;
            let chunk = key_number(&key)?;
            let skip = if chunk == first_chunk {
                (floor % ROW_CHUNK) as usize
            } else {
                0
            };
            let at = rows.len() + past.len();
            if chunk * ROW_CHUNK + skip as u64 != at as u64 {
                if at as u64 >= written {
                    break; // nothing past a gap is any document's
                }
                return Err(StoreError::Corrupt(format!(
                    "row chunk {chunk} is out of place"
                )));
            }
            if value.len() % ROW_BYTES != 0 {
                return Err(StoreError::Corrupt(format!(
                    "row chunk {chunk} is truncated"
                )));
            }
            let unreadable =
                || StoreError::Corrupt(format!("row chunk {chunk} holds an unreadable row"));
            for row in value.chunks_exact(ROW_BYTES).skip(skip) {
                if (rows.len() as u64) < written {
                    rows.push(row).ok_or_else(unreadable)?;
                } else {
                    past.push(decode_row(row).ok_or_else(unreadable)?);
                }
            }
        }
        if (rows.len() as u64) < written {
            return Err(StoreError::Corrupt(format!(
                "{} rows stored, {written} expected",
                rows.len()
            )));
        }
        let (tail, made) = self.tail_rows(written, &past)?;
        if !tail.is_empty() {
            if made {
                self.write_rows(written, tail.iter().copied(), Some(&rows))?;
            }
            for row in &tail {
                rows.push(&encode_row(*row))
                    .expect("a row just encoded reads back");
            }
            self.meta
                .insert(WRITTEN_KEY, &(rows.len() as u64).to_be_bytes())?;
        }
        Ok(rows)
    }

    /// The rows of the documents stored after the last complete batch (ids from
    /// `written`), and whether any had to be made from its record; `past` holds the rows
    /// stored past `written`.
    fn tail_rows(&self, written: u64, past: &[Stored]) -> Result<(Vec<Stored>, bool), StoreError> {
        // Documents stored after the last complete batch: a record beside its row was
        // stored after the row; a whole record (index format 6) may have been stored
        // without it, and its row is made again from it.
        let mut tail = Vec::new();
        let mut made = false;
        for item in self.docs.range(chunk_key(written / DOC_CHUNK)..) {
            let (key, value) = item?;
            let chunk = key_number(&key)?;
            let (whole, records) = decode_chunk(&value)?;
            for (offset, bytes) in records.into_iter().enumerate() {
                let id = chunk * DOC_CHUNK + offset as u64;
                if id < written {
                    continue;
                }
                if id != written + tail.len() as u64 {
                    return Err(StoreError::Corrupt(format!(
                        "document {id} is out of place"
                    )));
                }
                let row = if whole {
                    made = true;
                    Stored::of(&DocRecord::decode(bytes).ok_or_else(unreadable_chunk)?)
                } else {
                    *past.get(tail.len()).ok_or_else(|| {
                        StoreError::Corrupt(format!("document {id} is stored without its row"))
                    })?
                };
                tail.push(row);
            }
        }
        Ok((tail, made))
    }

    /// Drops every document from id `count` on (rolling the index back to a checkpoint),
    /// and their rows from `rows`.
    pub(crate) fn truncate(&self, count: u64, rows: &mut Rows) -> Result<(), StoreError> {
        if rows.len() as u64 <= count {
            return Ok(());
        }
        // Records: keep the head of the chunk `count` falls in, drop the chunks after it.
        let mut docs = sled::Batch::default();
        let keep_chunk = count / DOC_CHUNK;
        let keep = (count % DOC_CHUNK) as usize;
        for item in self.docs.range(chunk_key(keep_chunk)..) {
            let (key, value) = item?;
            let chunk = key_number(&key)?;
            if chunk == keep_chunk && keep > 0 {
                let parts = beside_rows(&value)?;
                docs.insert(
                    &key[..],
                    encode_chunk(parts.get(..keep).unwrap_or(&parts), &[]),
                );
            } else {
                docs.remove(&key[..]);
            }
        }
        self.docs.apply_batch(docs)?;
        let mut row_batch = sled::Batch::default();
        let keep_chunk = count / ROW_CHUNK;
        let keep = (count % ROW_CHUNK) as usize * ROW_BYTES;
        for item in self.rows.range(chunk_key(keep_chunk)..) {
            let (key, value) = item?;
            let chunk = key_number(&key)?;
            if chunk == keep_chunk && keep > 0 {
                row_batch.insert(&key[..], &value[..keep.min(value.len())]);
            } else {
                row_batch.remove(&key[..]);
            }
        }
        self.rows.apply_batch(row_batch)?;
        self.meta.insert(WRITTEN_KEY, &count.to_be_bytes())?;
        rows.truncate(count as usize);
        Ok(())
    }

    /// Deletes the chunks of documents and rows that lie wholly below `floor`, oldest first,
    /// at most `most` chunks of each tree per call (a bounded step of a sweep); returns the
    /// chunks deleted. Chunks below `floor` are never read again, so a sweep cut short by a
    /// crash leaves only garbage that the next one removes. A row goes only once its
    /// record has: a record is read with its row.
    pub(crate) fn delete_below(&self, floor: u64, most: usize) -> Result<usize, StoreError> {
        let mut deleted = 0;
        let mut batch = sled::Batch::default();
        for item in self.docs.range(..chunk_key(floor / DOC_CHUNK)).take(most) {
            batch.remove(item?.0);
            deleted += 1;
        }
        self.docs.apply_batch(batch)?;
        let records_from = match self.docs.first()? {
            Some((key, _)) => key_number(&key)? * DOC_CHUNK,
            None => floor,
        };
        let mut batch = sled::Batch::default();
        let end = chunk_key(floor.min(records_from) / ROW_CHUNK);
        for item in self.rows.range(..end).take(most) {
            batch.remove(item?.0);
            deleted += 1;
        }
        self.rows.apply_batch(batch)?;
        Ok(deleted)
    }

    /// The first id of the first row chunk stored, if any.
    pub(crate) fn first_row(&self) -> Result<Option<u64>, StoreError> {
        match self.rows.first()? {
            Some((key, _)) => Ok(Some(key_number(&key)? * ROW_CHUNK)),
            None => Ok(None),
        }
    }

    /// The record with this id, if stored; `row` is its row when the caller holds it
    /// (read from the rows otherwise).
    pub(crate) fn get(
        &self,
        id: DocId,
        row: Option<Stored>,
    ) -> Result<Option<DocRecord>, StoreError> {
        debug_assert!(
            !super::lookup::deciding(),
            "document {id} read from sled while a decision holds the index's locks"
        );
        let Some(value) = self.docs.get(chunk_key(id / DOC_CHUNK))? else {
            return Ok(None);
        };
        let (whole, records) = decode_chunk(&value)?;
        let Some(bytes) = records.get((id % DOC_CHUNK) as usize) else {
            return Ok(None);
        };
        if whole {
            return DocRecord::decode(bytes)
                .ok_or_else(unreadable_chunk)
                .map(Some);
        }
        let row = match row {
            Some(row) => row,
            None => self.row(id)?.ok_or_else(|| {
                StoreError::Corrupt(format!("document {id} is stored without its row"))
            })?,
        };
        DocRecord::decode_beside(bytes, &row)
            .ok_or_else(unreadable_chunk)
            .map(Some)
    }

    /// The stored row of `id`, if any.
    fn row(&self, id: DocId) -> Result<Option<Stored>, StoreError> {
        let Some(value) = self.rows.get(chunk_key(id / ROW_CHUNK))? else {
            return Ok(None);
        };
        let at = (id % ROW_CHUNK) as usize * ROW_BYTES;
        match value.get(at..at + ROW_BYTES) {
            None => Ok(None),
            Some(bytes) => decode_row(bytes).map(Some).ok_or_else(|| {
                StoreError::Corrupt(format!("the row of document {id} is unreadable"))
            }),
        }
    }

    /// Stores documents `first..first + docs.len()`: rows, then records (a record is read
    /// with its row, so a crash between the two leaves only rows, which the count does not
    /// take in), then the count.
    pub(crate) fn append(&self, first: DocId, docs: &[DocRecord]) -> Result<(), StoreError> {
        let written = self.written()?;
        if first != written {
            return Err(StoreError::Corrupt(format!(
                "a batch from document {first} while {written} are stored: {written} expected"
            )));
        }
        self.write_rows(first, docs.iter().map(Stored::of), None)?;
        crate::faults::point_prepared("index-rows-before-records", || {
            let _ = self.rows.flush();
        });
        // Records: the chunk that `first` falls in may already hold earlier documents.
        let mut batch = sled::Batch::default();
        let mut chunk = first / DOC_CHUNK;
        let lead = (first % DOC_CHUNK) as usize;
        let value = if lead == 0 {
            None
        } else {
            self.docs.get(chunk_key(chunk))?
        };
        let head = match &value {
            Some(v) => beside_rows(v)?,
            None => Vec::new(),
        };
        if head.len() != lead {
            return Err(StoreError::Corrupt(format!(
                "document chunk {chunk} holds {} records, {lead} expected",
                head.len(),
            )));
        }
        // The first chunk is the head and the documents that complete it; each next one is
        // up to DOC_CHUNK documents.
        let first_take = (DOC_CHUNK as usize - lead).min(docs.len());
        let (completing, rest) = docs.split_at(first_take);
        if !completing.is_empty() {
            batch.insert(&chunk_key(chunk)[..], encode_chunk(&head, completing));
            chunk += 1;
        }
        for records in rest.chunks(DOC_CHUNK as usize) {
            batch.insert(&chunk_key(chunk)[..], encode_chunk(&[], records));
            chunk += 1;
        }
        self.docs.apply_batch(batch)?;
        self.meta
            .insert(WRITTEN_KEY, &(first + docs.len() as u64).to_be_bytes())?;
        Ok(())
    }

    /// Writes `rows` (ids from `first`). `known` may hold the rows before `first` (when
    /// loading); otherwise the partial chunk is read back from sled.
    fn write_rows(
        &self,
        first: DocId,
        rows: impl IntoIterator<Item = Stored>,
        known: Option<&Rows>,
    ) -> Result<(), StoreError> {
        let mut batch = sled::Batch::default();
        let mut chunk = first / ROW_CHUNK;
        let lead = (first % ROW_CHUNK) as usize;
        let mut bytes: Vec<u8> = if lead == 0 {
            Vec::new()
        } else if let Some(known) =
            known.filter(|k| k.len() as u64 >= first && k.base <= chunk * ROW_CHUNK)
        {
            let start = (chunk * ROW_CHUNK) as usize;
            (start..first as usize)
                .filter_map(|id| known.row(id))
                .flat_map(encode_row)
                .collect()
        } else {
            self.rows
                .get(chunk_key(chunk))?
                .map(|v| v.to_vec())
                .unwrap_or_default()
        };
        bytes.truncate(lead * ROW_BYTES);
        if bytes.len() != lead * ROW_BYTES {
            return Err(StoreError::Corrupt(format!("row chunk {chunk} is short")));
        }
        for row in rows {
            bytes.extend_from_slice(&encode_row(row));
            if bytes.len() == ROW_CHUNK as usize * ROW_BYTES {
                batch.insert(&chunk_key(chunk)[..], std::mem::take(&mut bytes));
                chunk += 1;
            }
        }
        if !bytes.is_empty() {
            batch.insert(&chunk_key(chunk)[..], bytes);
        }
        self.rows.apply_batch(batch)?;
        Ok(())
    }
}

fn chunk_key(chunk: u64) -> [u8; 8] {
    chunk.to_be_bytes()
}

fn key_number(key: &[u8]) -> Result<u64, StoreError> {
    key.try_into()
        .map(u64::from_be_bytes)
        .map_err(|_| StoreError::Corrupt("bad chunk key".into()))
}

pub(crate) fn encode_row(row: Stored) -> [u8; ROW_BYTES] {
    let mut out = [0u8; ROW_BYTES];
    out[..8].copy_from_slice(&row.simhash.to_be_bytes());
    out[8..24].copy_from_slice(&row.digest.0.to_be_bytes());
    out[24..28].copy_from_slice(&row.chars.to_be_bytes());
    out[28..32].copy_from_slice(&row.at.to_be_bytes());
    out[32..].copy_from_slice(&row.sketch.to_bytes());
    out
}

pub(crate) fn decode_row(bytes: &[u8]) -> Option<Stored> {
    Some(Stored {
        simhash: u64::from_be_bytes(bytes.get(..8)?.try_into().ok()?),
        digest: Digest(u128::from_be_bytes(bytes.get(8..24)?.try_into().ok()?)),
        chars: u32::from_be_bytes(bytes.get(24..28)?.try_into().ok()?),
        at: u32::from_be_bytes(bytes.get(28..32)?.try_into().ok()?),
        sketch: Sketch::from_bytes(bytes.get(32..ROW_BYTES)?)?,
    })
}

#[cfg(test)]
mod tests;
