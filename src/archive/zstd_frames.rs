//! `.warc.zst` files, the IIPC zstd profile: a zstd frame a record, after a skippable
//! frame that holds the dictionary they are compressed with.

use std::io::{BufRead, Read};

use super::warc::MAX_RECORD_BYTES;

/// Whether a file starting with `start` is a `.warc.zst` one.
pub fn is_zstd(start: &[u8]) -> bool {
    start.starts_with(&ZSTD_MAGIC) || start.starts_with(&DICTIONARY_MAGIC)
}

/// The first bytes of a zstd frame, and of a skippable frame (which holds a `.warc.zst`
/// file's dictionary), little-endian.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
const DICTIONARY_MAGIC: [u8; 4] = [0x5d, 0x2a, 0x4d, 0x18];

/// A `.warc.zst` file's dictionary, when it starts with one (the IIPC zstd profile: a
/// skippable frame holding it, itself zstd-compressed or not); empty otherwise.
pub fn dictionary(input: &mut impl BufRead) -> Result<Vec<u8>, String> {
    let start = input.fill_buf().map_err(|e| e.to_string())?;
    if !start.starts_with(&DICTIONARY_MAGIC) {
        return Ok(Vec::new());
    }
    let mut head = [0u8; 8];
    input
        .read_exact(&mut head)
        .map_err(|e| format!("a dictionary frame cut short: {e}"))?;
    let size = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
    let mut frame = Vec::new();
    input
        .by_ref()
        .take(u64::from(size))
        .read_to_end(&mut frame)
        .map_err(|e| e.to_string())?;
    if frame.len() < size as usize {
        return Err("a dictionary frame cut short".into());
    }
    if frame.starts_with(&ZSTD_MAGIC) {
        let mut dictionary = Vec::new();
        zstd::stream::read::Decoder::new(&frame[..])
            .and_then(|d| d.take(MAX_RECORD_BYTES).read_to_end(&mut dictionary))
            .map_err(|e| format!("a corrupt dictionary: {e}"))?;
        return Ok(dictionary);
    }
    Ok(frame)
}

/// The next zstd frame of a `.warc.zst` file, decompressed with its dictionary (a record).
pub fn member(input: &mut impl BufRead, dictionary: &[u8]) -> Result<Vec<u8>, String> {
    let mut member = Vec::new();
    zstd::stream::read::Decoder::with_dictionary(&mut *input, dictionary)
        .and_then(|decoder| {
            decoder
                .single_frame()
                .take(MAX_RECORD_BYTES + 1)
                .read_to_end(&mut member)
        })
        .map_err(|e| format!("corrupt zstd: {e}"))?;
    if member.len() as u64 > MAX_RECORD_BYTES {
        return Err(format!(
            "a record larger than {} MiB decompressed",
            MAX_RECORD_BYTES >> 20
        ));
    }
    Ok(member)
}
