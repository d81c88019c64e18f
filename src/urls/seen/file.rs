//! The saved filter: `seen-urls.bloom`, its layout, and writing it so that a crash leaves
//! the old file or the new one.

use std::fs;
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::Ordering;

use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::sizing::BloomParams;
use super::{Generation, Layer, SEEN_FILE, URL_HASH_SEED};
use crate::state_id::StateId;

pub(super) const MAGIC: &[u8; 8] = b"CDSEEN\r\n";
/// Version 2: fastbloom 0.17 bit layout, xxh3-64 URL hash with [`URL_HASH_SEED`]; after the
/// checkpoint sequence, the slice length in seconds and the generation count (both 0 for a
/// filter that never forgets), the URLs forgotten so far, then the generations, each its
/// slice number and its layers.
/// Version 3: the state directory's id ([`crate::ledger`]) after the hash seed; the slice
/// length in milliseconds (version 2: seconds), and the recrawl interval as set, in
/// milliseconds, after it.
/// (Version 1 held one list of layers; version 2, still read, has no directory id.)
pub(super) const FORMAT_VERSION: u32 = 3;
/// The oldest version read (its directory id reads as 0).
const OLDEST_READ: u32 = 2;

/// A saved filter, read back.
pub(super) struct Saved {
    pub(super) seq: u64,
    /// The slice length in milliseconds (0 for a filter that never forgets).
    pub(super) slice_ms: u64,
    /// The recrawl interval in milliseconds; `None` in a version-2 file.
    pub(super) interval_ms: Option<u64>,
    pub(super) generations: u32,
    pub(super) expired: u64,
    pub(super) generations_list: Vec<Generation>,
}
/// Writes `bytes` to `path` so that a crash leaves either the old file or the new one.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let tmp = path.with_extension("tmp");
    {
        let mut file = fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
    }
    fs::rename(&tmp, path)?;
    // The rename itself is durable only once the folder is synced.
    fs::File::open(dir)?.sync_all()
}

pub(super) fn encode(
    state_id: StateId,
    seq: u64,
    (slice_ms, interval_ms): (u64, u64),
    generation_count: u32,
    expired: u64,
    generations: &[Generation],
) -> Vec<u8> {
    let layers = generations.iter().flat_map(|g| &g.layers);
    let words: usize = layers.clone().map(|l| l.filter.as_slice().len()).sum();
    let mut out = Vec::with_capacity(64 + generations.len() * 64 + words * 8);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&URL_HASH_SEED.to_le_bytes());
    out.extend_from_slice(&state_id.to_le_bytes());
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&slice_ms.to_le_bytes());
    out.extend_from_slice(&interval_ms.to_le_bytes());
    out.extend_from_slice(&generation_count.to_le_bytes());
    out.extend_from_slice(&expired.to_le_bytes());
    out.extend_from_slice(&(generations.len() as u32).to_le_bytes());
    for generation in generations {
        out.extend_from_slice(&generation.slice.to_le_bytes());
        out.extend_from_slice(&(generation.layers.len() as u32).to_le_bytes());
        encode_layers(&mut out, &generation.layers);
    }
    let checksum = xxh3_64_with_seed(&out, 0);
    out.extend_from_slice(&checksum.to_le_bytes());
    out
}

fn encode_layers(out: &mut Vec<u8>, layers: &[Layer]) {
    for layer in layers {
        let p = layer.params;
        out.extend_from_slice(&p.n.to_le_bytes());
        out.extend_from_slice(&p.p.to_le_bytes());
        out.extend_from_slice(&p.m.to_le_bytes());
        out.extend_from_slice(&p.k.to_le_bytes());
        out.extend_from_slice(&layer.count.load(Ordering::Relaxed).to_le_bytes());
        out.extend_from_slice(&(layer.filter.as_slice().len() as u64).to_le_bytes());
        for word in layer.filter.iter() {
            out.extend_from_slice(&word.to_le_bytes());
        }
    }
}

pub(super) struct Reader<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) at: usize,
}

impl Reader<'_> {
    pub(super) fn take(&mut self, len: usize, what: &str) -> Result<&[u8], String> {
        let end = self
            .at
            .checked_add(len)
            .filter(|&end| end <= self.bytes.len());
        match end {
            Some(end) => {
                let slice = &self.bytes[self.at..end];
                self.at = end;
                Ok(slice)
            }
            None => Err(format!("truncated: the file ends inside the {what}")),
        }
    }

    pub(super) fn u32(&mut self, what: &str) -> Result<u32, String> {
        let mut buf = [0; 4];
        buf.copy_from_slice(self.take(4, what)?);
        Ok(u32::from_le_bytes(buf))
    }

    pub(super) fn u64(&mut self, what: &str) -> Result<u64, String> {
        let mut buf = [0; 8];
        buf.copy_from_slice(self.take(8, what)?);
        Ok(u64::from_le_bytes(buf))
    }
}

/// Reads and checks the filter saved in `state_dir` without opening it for use:
/// `Ok(None)` when there is none, else (checkpoint sequence, URLs recorded), or what is
/// wrong with it.
#[cfg_attr(not(feature = "crawler"), allow(dead_code))]
pub(crate) fn check_saved(state_dir: &Path) -> Result<Option<(u64, u64)>, String> {
    let file = state_dir.join(SEEN_FILE);
    match fs::read(&file) {
        Ok(bytes) => {
            let saved = decode(&bytes)?;
            let count = saved
                .generations_list
                .iter()
                .flat_map(|g| &g.layers)
                .map(|l| l.count.load(Ordering::Relaxed))
                .sum();
            Ok(Some((saved.seq, count)))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// The checkpoint and directory id of the filter saved in `state_dir`, from its header
/// alone (the whole file is checked when it is opened): `None` when there is none.
pub(crate) fn read_header(state_dir: &Path) -> Option<Result<(u64, StateId), String>> {
    use std::io::Read;
    let file = match fs::File::open(state_dir.join(SEEN_FILE)) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return None,
        Err(e) => return Some(Err(e.to_string())),
    };
    let mut head = Vec::with_capacity(64);
    if let Err(e) = file.take(64).read_to_end(&mut head) {
        return Some(Err(e.to_string()));
    }
    let mut r = Reader {
        bytes: &head,
        at: 0,
    };
    let mut read = || -> Result<(u64, StateId), String> {
        if r.take(MAGIC.len(), "header")? != MAGIC {
            return Err("not a crawldedup seen-URL filter (bad magic bytes)".into());
        }
        let version = r.u32("header")?;
        let _seed = r.u64("header")?;
        let state_id = match version {
            3 => {
                let mut id = [0; 16];
                id.copy_from_slice(r.take(16, "header")?);
                u128::from_le_bytes(id)
            }
            2 => 0,
            other => return Err(format!("format version {other}, not one this build reads")),
        };
        Ok((r.u64("header")?, state_id))
    };
    Some(read())
}

pub(super) fn decode(bytes: &[u8]) -> Result<Saved, String> {
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err("not a crawldedup seen-URL filter (bad magic bytes)".into());
    }
    if bytes.len() < MAGIC.len() + 8 {
        return Err("truncated: the file ends inside the header".into());
    }
    let (body, tail) = bytes.split_at(bytes.len() - 8);
    let mut stored = [0; 8];
    stored.copy_from_slice(tail);
    let mut r = Reader {
        bytes: body,
        at: MAGIC.len(),
    };
    let version = r.u32("header")?;
    if !(OLDEST_READ..=FORMAT_VERSION).contains(&version) {
        return Err(format!(
            "format version {version}, this build reads versions {OLDEST_READ} to \
             {FORMAT_VERSION}: start a new state directory"
        ));
    }
    if u64::from_le_bytes(stored) != xxh3_64_with_seed(body, 0) {
        return Err("checksum mismatch: the file is damaged or truncated".into());
    }
    let seed = r.u64("header")?;
    if seed != URL_HASH_SEED {
        return Err(format!("hash seed {seed:#x} is not this build's"));
    }
    if version >= 3 {
        // The directory id: checked against the ledger before the filter is opened.
        r.take(16, "header")?;
    }
    let seq = r.u64("header")?;
    let slice = r.u64("header")?;
    let (slice_ms, interval_ms) = if version >= 3 {
        (slice, Some(r.u64("header")?))
    } else {
        (slice.saturating_mul(1000), None)
    };
    let generation_count = r.u32("header")?;
    let expired = r.u64("header")?;
    let held = r.u32("header")?;
    let mut generations_list: Vec<Generation> = Vec::new();
    for g in 0..held {
        let what = format!("header of generation {g}");
        let slice = r.u64(&what)?;
        if generations_list
            .last()
            .is_some_and(|last| last.slice >= slice)
        {
            return Err(format!("generation {g}: slices out of order"));
        }
        let count = r.u32(&what)?;
        if count == 0 {
            return Err(format!("generation {g} has no layers"));
        }
        let layers = decode_layers(&mut r, count)?;
        generations_list.push(Generation { slice, layers });
    }
    if r.at != body.len() {
        return Err(format!(
            "{} unexpected bytes after the last layer",
            body.len() - r.at
        ));
    }
    Ok(Saved {
        seq,
        slice_ms,
        interval_ms,
        generations: generation_count,
        expired,
        generations_list,
    })
}

fn decode_layers(r: &mut Reader<'_>, count: u32) -> Result<Vec<Layer>, String> {
    let mut layers = Vec::new();
    for i in 0..count {
        let what = format!("header of layer {i}");
        let n = r.u64(&what)?;
        let p = f64::from_bits(r.u64(&what)?);
        let m = r.u64(&what)?;
        let k = r.u32(&what)?;
        let items = r.u64(&what)?;
        let words = r.u64(&what)?;
        let params = BloomParams::new(n, p).map_err(|e| format!("layer {i}: {e}"))?;
        if params.m != m || params.k != k || m.div_ceil(64) != words {
            return Err(format!(
                "layer {i}: stored size (m = {m}, k = {k}, {words} words) does not match n = {n}, p = {p}"
            ));
        }
        let raw = r.take(words as usize * 8, &format!("bits of layer {i}"))?;
        let bits = raw
            .chunks_exact(8)
            .map(|c| {
                let mut buf = [0; 8];
                buf.copy_from_slice(c);
                u64::from_le_bytes(buf)
            })
            .collect();
        layers.push(Layer::from_words(params, bits, items));
    }
    Ok(layers)
}
