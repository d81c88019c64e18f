//! A `docs` value: a chunk of records (see the store's module doc).

use super::StoreError;
use crate::fingerprint::SKETCH_BYTES;
use crate::index::DocRecord;

/// Set in a chunk's count when its records are kept beside their rows
/// ([`DocRecord::encode_beside_row`]); index format 6 kept them whole ([`DocRecord::encode`]).
pub(super) const BESIDE_ROWS: u16 = 0x8000;

/// Bytes of a whole record before the part kept beside a row.
const WHOLE_PREFIX: usize = 40 + SKETCH_BYTES;

/// A chunk of records kept beside their rows: count (u16, [`BESIDE_ROWS`] set), end offset
/// of each record (u32 each), the records: `parts` as they are, then `records` encoded.
pub(super) fn encode_chunk(parts: &[&[u8]], records: &[DocRecord]) -> Vec<u8> {
    let count = parts.len() + records.len();
    let body = 2 + 4 * count;
    let hint: usize = parts.iter().map(|p| p.len()).sum::<usize>()
        + records
            .iter()
            .map(DocRecord::beside_row_len_hint)
            .sum::<usize>();
    let mut out = Vec::with_capacity(body + hint);
    out.extend_from_slice(&(count as u16 | BESIDE_ROWS).to_be_bytes());
    out.resize(body, 0);
    let end = |out: &mut Vec<u8>, i: usize| {
        let end = (out.len() - body) as u32;
        out[2 + 4 * i..6 + 4 * i].copy_from_slice(&end.to_be_bytes());
    };
    for (i, part) in parts.iter().enumerate() {
        out.extend_from_slice(part);
        end(&mut out, i);
    }
    for (i, record) in records.iter().enumerate() {
        record.encode_beside_row(&mut out);
        end(&mut out, parts.len() + i);
    }
    out
}

pub(super) fn unreadable_chunk() -> StoreError {
    StoreError::Corrupt("unreadable document chunk".into())
}

/// A chunk's records as stored, and whether they are whole (index format 6) rather than
/// kept beside their rows.
pub(super) fn decode_chunk(bytes: &[u8]) -> Result<(bool, Vec<&[u8]>), StoreError> {
    let head = bytes.get(..2).ok_or_else(unreadable_chunk)?;
    let count = u16::from_be_bytes([head[0], head[1]]);
    let whole = count & BESIDE_ROWS == 0;
    let count = usize::from(count & !BESIDE_ROWS);
    let body = 2 + 4 * count;
    let mut start = 0usize;
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let at = 2 + 4 * i;
        let end = bytes.get(at..at + 4).ok_or_else(unreadable_chunk)?;
        let end = u32::from_be_bytes([end[0], end[1], end[2], end[3]]) as usize;
        out.push(
            bytes
                .get(body + start..body + end)
                .ok_or_else(unreadable_chunk)?,
        );
        start = end;
    }
    Ok((whole, out))
}

/// A chunk's records, each as the part kept beside its row.
pub(super) fn beside_rows(bytes: &[u8]) -> Result<Vec<&[u8]>, StoreError> {
    let (whole, records) = decode_chunk(bytes)?;
    if !whole {
        return Ok(records);
    }
    records
        .into_iter()
        .map(|r| r.get(WHOLE_PREFIX..).ok_or_else(unreadable_chunk))
        .collect()
}

/// Writes `records` (ids from `first`, the first of a chunk) again as index format 6
/// kept them: whole, the chunks' counts unflagged.
#[cfg(test)]
pub(crate) fn to_format_6(store: &super::Store, first: u64, records: &[DocRecord]) {
    assert_eq!(first % super::DOC_CHUNK, 0);
    for (i, chunk) in records.chunks(super::DOC_CHUNK as usize).enumerate() {
        let records: Vec<Vec<u8>> = chunk.iter().map(DocRecord::encode).collect();
        let mut value = (records.len() as u16).to_be_bytes().to_vec();
        let mut end = 0u32;
        for r in &records {
            end += r.len() as u32;
            value.extend_from_slice(&end.to_be_bytes());
        }
        value.extend(records.concat());
        let key = super::chunk_key(first / super::DOC_CHUNK + i as u64);
        store.docs.insert(key, value).unwrap();
    }
}
