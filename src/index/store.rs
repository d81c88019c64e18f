//! How the index lies in sled.
//!
//! Three trees:
//!
//! - `meta`: the layout (format version, fingerprint version, k, blocks) and `written`, the
//!   number of documents whose rows are stored;
//! - `docs`: the document records ([`DocRecord`]), [`DOC_CHUNK`] consecutive ids per value
//!   (key: `id / DOC_CHUNK`, 8 bytes big-endian; value: a count, an offset per record, then
//!   the records), so that a batch of new documents costs one sled write per 64 documents
//!   and `get` reads one small value;
//! - `rows`: per document, the simhash (8 bytes), the digest (16), the text length (4), the
//!   time it was stored (4) and the confirmation sketch (68), [`ROW_CHUNK`] consecutive ids per value (key:
//!   `id / ROW_CHUNK`), from which the in-memory tables are rebuilt on open without reading
//!   the records.
//!
//! The permuted tables are not stored: they are a function of the simhashes, and permuting
//! and bucketing 10 M rows in memory is faster than reading 10 copies of them back. (One
//! sled entry per table row, the first design, wrote 10 k documents per second and took
//! 9.7 s to reopen 200 k.)
//!
//! Documents below the index's floor (expired by a retention window, see
//! [`super::SimhashIndex::sweep`]) are deleted a whole chunk at a time, oldest first, once a
//! checkpoint's manifest has recorded the floor; rows of a chunk that the floor cuts through
//! stay until the whole chunk expires, and loading skips them.
//!
//! A batch is written docs first, then rows, then `written`. Each sled write is atomic, so a
//! crash leaves at most a tail of documents whose rows are missing or stale; open rebuilds
//! those rows from the records and stores them before anything else happens.

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
        let range = chunk_key(first_chunk)..chunk_key(written.div_ceil(ROW_CHUNK));
        for item in self.rows.range(range) {
            let (key, value) = item?;
            let chunk = key_number(&key)?;
            let skip = if chunk == first_chunk {
                (floor % ROW_CHUNK) as usize
            } else {
                0
            };
            if chunk * ROW_CHUNK + skip as u64 != rows.len() as u64 {
                return Err(StoreError::Corrupt(format!(
                    "row chunk {chunk} is out of place"
                )));
            }
            if value.len() % ROW_BYTES != 0 {
                return Err(StoreError::Corrupt(format!(
                    "row chunk {chunk} is truncated"
                )));
            }
            for row in value.chunks_exact(ROW_BYTES).skip(skip) {
                rows.push(row).ok_or_else(|| {
                    StoreError::Corrupt(format!("row chunk {chunk} holds an unreadable row"))
                })?;
            }
        }
        if (rows.len() as u64) < written {
            return Err(StoreError::Corrupt(format!(
                "{} rows stored, {written} expected",
                rows.len()
            )));
        }
        if rows.len() as u64 > written {
            // Rows past the count (a chunk rewritten in place): recount without them.
            let mut kept = Rows {
                base: floor,
                docs: super::memory::with_capacity((written - floor) as usize),
                checksum: prior,
                checksums_at: std::mem::take(&mut rows.checksums_at)
                    .into_iter()
                    .map(|(at, _)| (at, (at <= floor).then_some(prior)))
                    .collect(),
            };
            for row in &rows.docs[..(written - floor) as usize] {
                kept.push(&encode_row(*row))
                    .expect("a row just encoded reads back");
            }
            rows = kept;
        }
        // Documents written after the last complete batch: mend their rows.
        let mut tail = Vec::new();
        for item in self.docs.range(chunk_key(written / DOC_CHUNK)..) {
            let (key, value) = item?;
            let chunk = key_number(&key)?;
            for (offset, record) in decode_chunk(&value)?.into_iter().enumerate() {
                let id = chunk * DOC_CHUNK + offset as u64;
                if id < written {
                    continue;
                }
                if id != written + tail.len() as u64 {
                    return Err(StoreError::Corrupt(format!(
                        "document {id} is out of place"
                    )));
                }
                tail.push(record);
            }
        }
        if !tail.is_empty() {
            let first = written;
            self.write_rows(first, &tail, Some(&rows))?;
            for r in &tail {
                rows.push(&encode_row(Stored::of(r)))
                    .expect("a row just encoded reads back");
            }
            self.meta
                .insert(WRITTEN_KEY, &(rows.len() as u64).to_be_bytes())?;
        }
        Ok(rows)
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
                let mut records = decode_chunk(&value)?;
                records.truncate(keep);
                docs.insert(&key[..], encode_chunk(records.iter()));
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
    /// crash leaves only garbage that the next one removes.
    pub(crate) fn delete_below(&self, floor: u64, most: usize) -> Result<usize, StoreError> {
        let mut deleted = 0;
        for (tree, per_chunk) in [(&self.docs, DOC_CHUNK), (&self.rows, ROW_CHUNK)] {
            let mut batch = sled::Batch::default();
            let end = chunk_key(floor / per_chunk);
            for item in tree.range(..end).take(most) {
                let (key, _) = item?;
                batch.remove(key);
                deleted += 1;
            }
            tree.apply_batch(batch)?;
        }
        Ok(deleted)
    }

    /// The first id of the first row chunk stored, if any.
    pub(crate) fn first_row(&self) -> Result<Option<u64>, StoreError> {
        match self.rows.first()? {
            Some((key, _)) => Ok(Some(key_number(&key)? * ROW_CHUNK)),
            None => Ok(None),
        }
    }

    /// The record with this id, if stored.
    pub(crate) fn get(&self, id: DocId) -> Result<Option<DocRecord>, StoreError> {
        let Some(value) = self.docs.get(chunk_key(id / DOC_CHUNK))? else {
            return Ok(None);
        };
        Ok(decode_chunk(&value)?
            .into_iter()
            .nth((id % DOC_CHUNK) as usize))
    }

    /// Stores documents `first..first + docs.len()`: records, then rows, then the count.
    pub(crate) fn append(&self, first: DocId, docs: &[DocRecord]) -> Result<(), StoreError> {
        // Records: the chunk that `first` falls in may already hold earlier documents.
        let mut batch = sled::Batch::default();
        let mut chunk = first / DOC_CHUNK;
        let lead = (first % DOC_CHUNK) as usize;
        let head: Vec<DocRecord> = if lead == 0 {
            Vec::new()
        } else {
            match self.docs.get(chunk_key(chunk))? {
                Some(v) => decode_chunk(&v)?,
                None => Vec::new(),
            }
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
            batch.insert(
                &chunk_key(chunk)[..],
                encode_chunk(head.iter().chain(completing)),
            );
            chunk += 1;
        }
        for records in rest.chunks(DOC_CHUNK as usize) {
            batch.insert(&chunk_key(chunk)[..], encode_chunk(records.iter()));
            chunk += 1;
        }
        self.docs.apply_batch(batch)?;
        self.write_rows(first, docs, None)?;
        self.meta
            .insert(WRITTEN_KEY, &(first + docs.len() as u64).to_be_bytes())?;
        Ok(())
    }

    /// Writes the rows of `docs` (ids from `first`). `known` may hold the rows before
    /// `first` (when loading); otherwise the partial chunk is read back from sled.
    fn write_rows(
        &self,
        first: DocId,
        docs: &[DocRecord],
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
        for record in docs {
            bytes.extend_from_slice(&encode_row(Stored::of(record)));
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

/// A chunk of records: count (u16), end offset of each record (u32 each), the records;
/// encoded in one buffer, the offsets filled in as each record is written after them.
fn encode_chunk<'a>(records: impl Iterator<Item = &'a DocRecord> + Clone) -> Vec<u8> {
    let count = records.clone().count();
    let body = 2 + 4 * count;
    let hint: usize = records.clone().map(DocRecord::encoded_len_hint).sum();
    let mut out = Vec::with_capacity(body + hint);
    out.extend_from_slice(&(count as u16).to_be_bytes());
    out.resize(body, 0);
    for (i, record) in records.enumerate() {
        record.encode_into(&mut out);
        let end = (out.len() - body) as u32;
        out[2 + 4 * i..6 + 4 * i].copy_from_slice(&end.to_be_bytes());
    }
    out
}

fn decode_chunk(bytes: &[u8]) -> Result<Vec<DocRecord>, StoreError> {
    let bad = || StoreError::Corrupt("unreadable document chunk".into());
    let count = u16::from_be_bytes(
        bytes
            .get(..2)
            .ok_or_else(bad)?
            .try_into()
            .map_err(|_| bad())?,
    ) as usize;
    let body = 2 + 4 * count;
    let mut start = 0usize;
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let at = 2 + 4 * i;
        let end = u32::from_be_bytes(
            bytes
                .get(at..at + 4)
                .ok_or_else(bad)?
                .try_into()
                .map_err(|_| bad())?,
        ) as usize;
        let record = bytes.get(body + start..body + end).ok_or_else(bad)?;
        out.push(DocRecord::decode(record).ok_or_else(bad)?);
        start = end;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
            assert_eq!(store.get(id).unwrap(), Some(doc(id)), "document {id}");
        }
        assert_eq!(store.get(first).unwrap(), None);
        // A chunk is its count, each record's end offset, then the records.
        let chunk = store.docs.get(chunk_key(1)).unwrap().unwrap();
        let records: Vec<Vec<u8>> = (DOC_CHUNK..2 * DOC_CHUNK)
            .map(|i| doc(i).encode())
            .collect();
        let mut expected = (DOC_CHUNK as u16).to_be_bytes().to_vec();
        let mut end = 0u32;
        for r in &records {
            end += r.len() as u32;
            expected.extend_from_slice(&end.to_be_bytes());
        }
        expected.extend(records.concat());
        assert_eq!(&chunk[..], &expected[..]);
    }
}
