//! The host templates' file in the state directory (`host-templates`): each host's blocks
//! and last pages, checksummed, written atomically.

use std::path::Path;

use rustc_hash::FxHashMap;
use xxhash_rust::xxh3::xxh3_64;

use super::{Block, Host, HostTemplates, MAX_BLOCKS, RECENT_PAGES, SHARDS, TEMPLATES_FILE};

/// The file's first bytes: format 2, with each host's last pages.
pub(super) const MAGIC: &[u8; 8] = b"CDTMPL2\n";

/// The first format: no host's recent pages.
pub(super) const MAGIC_V1: &[u8; 8] = b"CDTMPL1\n";

impl HostTemplates {
    pub(super) fn encode(&self) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        for shard in self.shards.iter() {
            let shard = shard
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            for (host, table) in shard.iter() {
                out.extend_from_slice(&host.to_le_bytes());
                out.extend_from_slice(&table.pages.to_le_bytes());
                out.extend_from_slice(&(table.blocks.len() as u32).to_le_bytes());
                for (key, block) in &table.blocks {
                    out.extend_from_slice(&key.to_le_bytes());
                    out.extend_from_slice(&block.score.to_le_bytes());
                    out.extend_from_slice(&block.last.to_le_bytes());
                }
                out.push(table.recent.len() as u8);
                for id in &table.recent {
                    out.extend_from_slice(&id.to_le_bytes());
                }
            }
        }
        let check = xxh3_64(&out);
        out.extend_from_slice(&check.to_le_bytes());
        out
    }

    pub(super) fn decode(bytes: &[u8]) -> Result<HostTemplates, String> {
        let damaged = |what: &str| format!("damaged: {what}");
        if bytes.len() < MAGIC.len() + 8
            || (&bytes[..MAGIC.len()] != MAGIC && &bytes[..MAGIC.len()] != MAGIC_V1)
        {
            return Err("not a crawldedup host-template file (or cut short)".into());
        }
        let with_recent = &bytes[..MAGIC.len()] == MAGIC;
        let (body, check) = bytes.split_at(bytes.len() - 8);
        if xxh3_64(body) != u64::from_le_bytes(check.try_into().expect("8 bytes")) {
            return Err(damaged("checksum mismatch"));
        }
        let templates = HostTemplates::default();
        let mut rest = &body[MAGIC.len()..];
        let mut take = |n: usize| -> Result<&[u8], String> {
            if rest.len() < n {
                return Err(damaged("cut inside a host"));
            }
            let (piece, after) = rest.split_at(n);
            rest = after;
            Ok(piece)
        };
        let le32 = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("4 bytes"));
        let mut left = body.len() - MAGIC.len();
        while left > 0 {
            let host = u64::from_le_bytes(take(8)?.try_into().expect("8 bytes"));
            let pages = le32(take(4)?);
            let count = le32(take(4)?) as usize;
            if count > MAX_BLOCKS * 2 {
                return Err(damaged("a host with more blocks than any table keeps"));
            }
            let mut blocks = FxHashMap::with_capacity_and_hasher(count, Default::default());
            for _ in 0..count {
                let key = le32(take(4)?);
                let score = f32::from_le_bytes(take(4)?.try_into().expect("4 bytes"));
                let last = le32(take(4)?);
                blocks.insert(key, Block { score, last });
            }
            left -= 16 + 12 * count;
            let mut recent = Vec::new();
            if with_recent {
                let n = usize::from(take(1)?[0]);
                if n > RECENT_PAGES {
                    return Err(damaged("a host with more recent pages than a table keeps"));
                }
                for _ in 0..n {
                    recent.push(u64::from_le_bytes(take(8)?.try_into().expect("8 bytes")));
                }
                left -= 1 + 8 * n;
            }
            templates.shards[(host as usize) % SHARDS]
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(
                    host,
                    Host {
                        pages,
                        blocks,
                        recent,
                    },
                );
        }
        Ok(templates)
    }

    /// Reads the table saved in `state_dir`: empty when there is none.
    pub(crate) fn open(state_dir: &Path) -> Result<HostTemplates, String> {
        let path = state_dir.join(TEMPLATES_FILE);
        match std::fs::read(&path) {
            Ok(bytes) => {
                HostTemplates::decode(&bytes).map_err(|e| format!("{}: {e}", path.display()))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(HostTemplates::default()),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }

    /// Saves the table into `state_dir` atomically.
    pub fn save(&self, state_dir: &Path) -> std::io::Result<()> {
        crate::urls::seen::write_atomically(&state_dir.join(TEMPLATES_FILE), &self.encode())
    }
}
