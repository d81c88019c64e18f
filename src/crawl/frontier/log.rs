//! The change log's layout in the sled tree: keys, entries, and the sizes of its parts.

use super::task::{Change, Task, TaskState};

/// A checkpoint's log is written in parts of at most this many bytes (unless one URL is
/// longer), which keeps each part under the size sled stores as a file of its own.
pub const LOG_PART_BYTES: usize = 64 * 1024;

/// The number of URLs the change log may hold before a compaction folds it into the
/// per-URL entries.
pub const COMPACT_AFTER: usize = 1 << 17;

/// URLs per sled batch of a compaction (a few tens of milliseconds each).
pub const COMPACTION_BATCH: usize = 4096;

/// The change log sorts before every URL: its keys start with this byte.
pub(super) const LOG_PREFIX: u8 = 0;

pub(super) fn log_key(seq: u64, part: u32) -> [u8; 13] {
    let mut key = [LOG_PREFIX; 13];
    key[1..9].copy_from_slice(&seq.to_be_bytes());
    key[9..].copy_from_slice(&part.to_be_bytes());
    key
}

/// Appends one URL's change to a log part: the URL's length (4 bytes), the URL, the change.
pub(super) fn encode_entry(out: &mut Vec<u8>, url: &str, change: &Change) {
    out.extend_from_slice(&(url.len() as u32).to_be_bytes());
    out.extend_from_slice(url.as_bytes());
    out.extend_from_slice(&change.encode());
}

/// The entries of one log part, in order; `None` when the part is cut short or garbled.
pub(super) fn decode_log_part(mut bytes: &[u8]) -> Option<Vec<(Task, TaskState)>> {
    let mut entries = Vec::new();
    while !bytes.is_empty() {
        let len = u32::from_be_bytes(bytes.get(..4)?.try_into().ok()?) as usize;
        let url = std::str::from_utf8(bytes.get(4..4 + len)?).ok()?;
        let size = super::task::encoded_len(*bytes.get(4 + len)?);
        let change = bytes.get(4 + len..4 + len + size)?;
        entries.push(Task::decode(url, change)?);
        bytes = &bytes[4 + len + size..];
    }
    Some(entries)
}
