//! A document's record: what the index keeps per document (name, simhash, digest, sketch,
//! shingle set for tiny texts) and the judgement of a candidate against it.

use super::decision::{Decision, Similarity};
use crate::fingerprint::{Blocks, Digest, SKETCH_BYTES, Simhash, Sketch};

/// Set in the tiny set's count when a profile of the page's lines follows the tiny set.
const HAS_BLOCKS: u16 = 0x8000;

/// A stored document.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DocRecord {
    /// Its simhash.
    pub simhash: Simhash,
    /// Its exact digest.
    pub digest: Digest,
    /// Characters of its main text.
    pub text_chars: u64,
    /// Its name: a URL or a file path.
    pub name: String,
    /// When the index stored it, in seconds since the Unix epoch (by the index's
    /// [`crate::clock::Clock`]); the index sets it at insertion, and a retention window
    /// measures the document's age from it.
    pub at: u64,
    /// Its confirmation sketch (see [`Sketch`]).
    pub sketch: Sketch,
    /// For a small text (under [`SMALL_SET_FACTOR`](super::SMALL_SET_FACTOR) times the tiny
    /// size of [`Confirm::is_tiny`](super::Confirm::is_tiny)), its
    /// whole shingle set ([`crate::fingerprint::tiny_set`]), on which tiny candidates are
    /// confirmed exactly; empty otherwise.
    pub tiny_set: Vec<u32>,
    /// For a page with a host, the profile of its whole main text's lines ([`Blocks`]), on
    /// which a candidate of the same host is confirmed ([`Confirm::judge_blocks`](super::Confirm::judge_blocks)).
    pub blocks: Option<Blocks>,
}

impl DocRecord {
    /// The record of a main text under `name`, with its fingerprint, for the default rule
    /// ([`DocRecord::for_rule`] with [`Confirm::default`](super::Confirm::default)).
    pub fn new(name: &str, text: &str, fingerprint: &crate::Fingerprint) -> DocRecord {
        DocRecord::for_rule(name, text, fingerprint, &super::Confirm::default())
    }

    /// The record of a main text under `name`, with its fingerprint; `confirm`, the rule the
    /// index judges candidates by, says whether it keeps its whole shingle set
    /// ([`Confirm::keeps_tiny_set`](super::Confirm::keeps_tiny_set)).
    pub fn for_rule(
        name: &str,
        text: &str,
        fingerprint: &crate::Fingerprint,
        confirm: &super::Confirm,
    ) -> DocRecord {
        DocRecord {
            simhash: fingerprint.simhash,
            digest: fingerprint.digest,
            text_chars: fingerprint.chars as u64,
            name: name.to_string(),
            at: 0,
            sketch: fingerprint.sketch,
            tiny_set: if confirm.keeps_tiny_set(&fingerprint.sketch) {
                crate::fingerprint::tiny_set(text)
            } else {
                Vec::new()
            },
            blocks: None,
        }
    }
}

impl DocRecord {
    /// The whole record: simhash (8 bytes), digest (16), text length (8), time stored
    /// (8), sketch ([`SKETCH_BYTES`]), then the part kept beside a row
    /// ([`DocRecord::encode_beside_row`]); integers big-endian. Index format 6 kept its
    /// records this way ([`DocRecord::decode`] still reads them); the cluster index does.
    #[cfg(any(test, feature = "cluster"))]
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(40 + SKETCH_BYTES + self.beside_row_len_hint());
        out.extend_from_slice(&self.simhash.0.to_be_bytes());
        out.extend_from_slice(&self.digest.0.to_be_bytes());
        out.extend_from_slice(&self.text_chars.to_be_bytes());
        out.extend_from_slice(&self.at.to_be_bytes());
        out.extend_from_slice(&self.sketch.to_bytes());
        self.encode_beside_row(&mut out);
        out
    }

    /// Appends what the index's rows do not hold ([`Stored`]): the tiny set (a u16 count,
    /// then 4 bytes each; the count's top bit set when the lines' profile follows), the
    /// profile ([`Blocks::encode`]) if any, then the name in UTF-8. The rest of the record
    /// is read back from its row ([`DocRecord::decode_beside`]).
    pub(crate) fn encode_beside_row(&self, out: &mut Vec<u8>) {
        let set = &self.tiny_set[..self.tiny_set.len().min(usize::from(HAS_BLOCKS - 1))];
        let flag = if self.blocks.is_some() { HAS_BLOCKS } else { 0 };
        out.extend_from_slice(&(set.len() as u16 | flag).to_be_bytes());
        for h in set {
            out.extend_from_slice(&h.to_be_bytes());
        }
        if let Some(blocks) = &self.blocks {
            blocks.encode(out);
        }
        out.extend_from_slice(self.name.as_bytes());
    }

    /// About the bytes of [`DocRecord::encode_beside_row`]'s encoding (exact without the
    /// lines' profile): room to take before it.
    pub(crate) fn beside_row_len_hint(&self) -> usize {
        let set = self.tiny_set.len().min(usize::from(HAS_BLOCKS - 1));
        2 + 4 * set + self.name.len()
    }

    /// The record whose part beside its row ([`DocRecord::encode_beside_row`]) is `bytes`
    /// and whose row is `row`. The row keeps the text length and the time stored in 32
    /// bits (saturating), so a record read back this way does too.
    pub(crate) fn decode_beside(bytes: &[u8], row: &Stored) -> Option<DocRecord> {
        let (tiny_set, blocks, name) = decode_rest(bytes)?;
        Some(DocRecord {
            simhash: Simhash(row.simhash),
            digest: row.digest,
            text_chars: u64::from(row.chars),
            name,
            at: u64::from(row.at),
            sketch: row.sketch,
            tiny_set,
            blocks,
        })
    }

    /// The record from its whole encoding ([`DocRecord::encode`]).
    pub(crate) fn decode(bytes: &[u8]) -> Option<DocRecord> {
        let simhash = Simhash(u64::from_be_bytes(bytes.get(0..8)?.try_into().ok()?));
        let digest = Digest(u128::from_be_bytes(bytes.get(8..24)?.try_into().ok()?));
        let text_chars = u64::from_be_bytes(bytes.get(24..32)?.try_into().ok()?);
        let stored_at = u64::from_be_bytes(bytes.get(32..40)?.try_into().ok()?);
        let at = 40 + SKETCH_BYTES;
        let sketch = Sketch::from_bytes(bytes.get(40..at)?)?;
        let (tiny_set, blocks, name) = decode_rest(bytes.get(at..)?)?;
        Some(DocRecord {
            simhash,
            digest,
            text_chars,
            at: stored_at,
            name,
            sketch,
            tiny_set,
            blocks,
        })
    }
}

/// The tiny set, the lines' profile and the name, from their encoding (the end of a
/// record's).
fn decode_rest(bytes: &[u8]) -> Option<(Vec<u32>, Option<Blocks>, String)> {
    let count = u16::from_be_bytes(bytes.get(..2)?.try_into().ok()?);
    let mut rest = 2 + 4 * usize::from(count & !HAS_BLOCKS);
    let tiny_set = bytes
        .get(2..rest)?
        .chunks_exact(4)
        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let blocks = if count & HAS_BLOCKS != 0 {
        let (blocks, len) = Blocks::decode(bytes.get(rest..)?)?;
        rest += len;
        Some(blocks)
    } else {
        None
    };
    let name = String::from_utf8(bytes.get(rest..)?.to_vec()).ok()?;
    Some((tiny_set, blocks, name))
}

/// What memory keeps of every document, by id: enough to report the distance, find an
/// exact duplicate and confirm a candidate without reading sled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stored {
    pub(crate) simhash: u64,
    pub(crate) digest: Digest,
    /// Characters of the main text (saturating).
    pub(crate) chars: u32,
    /// When it was stored, in seconds since the Unix epoch (saturating at 2106).
    pub(crate) at: u32,
    pub(crate) sketch: Sketch,
}

impl Stored {
    pub(crate) fn of(record: &DocRecord) -> Stored {
        Stored {
            simhash: record.simhash.0,
            digest: record.digest,
            chars: u32::try_from(record.text_chars).unwrap_or(u32::MAX),
            at: u32::try_from(record.at).unwrap_or(u32::MAX),
            sketch: record.sketch,
        }
    }
}

/// What [`SimhashIndex`](super::SimhashIndex)'s lookup found for one document.
#[derive(Default)]
pub(super) struct Judgement {
    /// An exact or confirmed near-duplicate; none for a unique document.
    pub(super) decision: Option<Decision>,
    /// The estimates of the most alike candidate that the confirmation refused.
    pub(super) nearest: Option<Similarity>,
    /// Candidates the confirmation refused.
    pub(super) refused: u64,
    /// Candidates whose full record the confirmation needed and that only sled holds (with
    /// their rows): the judgement is incomplete, and is made again once they are read with
    /// no lock of the index held ([`Fetched`](super::lookup::Fetched)).
    pub(super) missing: Vec<(super::DocId, super::Stored)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_keeps_its_shingle_set_by_the_rule_it_is_made_for() {
        // 100 distinct words: over twice the default tiny size (40), under twice 60.
        let text: String = (0..100).map(|i| format!("word{i} ")).collect();
        let fingerprint = crate::Fingerprint::of(&text);
        assert!(DocRecord::new("a", &text, &fingerprint).tiny_set.is_empty());
        let rule = super::super::Confirm {
            tiny_shingles: 60,
            ..super::super::Confirm::default()
        };
        assert!(rule.keeps_tiny_set(&fingerprint.sketch));
        assert!(
            !DocRecord::for_rule("a", &text, &fingerprint, &rule)
                .tiny_set
                .is_empty()
        );
    }

    #[test]
    fn a_record_round_trips_with_and_without_its_lines_and_a_cut_one_is_refused() {
        let text = "A storm closed the ferry line for two days and the harbour stayed shut.\nNews";
        let mut record = DocRecord::new("https://a.example/x", text, &crate::Fingerprint::of(text));
        assert!(!record.tiny_set.is_empty());
        assert_eq!(DocRecord::decode(&record.encode()), Some(record.clone()));
        record.blocks = Some(Blocks::of("a.example", text));
        let bytes = record.encode();
        assert_eq!(DocRecord::decode(&bytes), Some(record.clone()));
        // Cut inside the lines' profile: not a record.
        let name = record.name.len();
        assert_eq!(DocRecord::decode(&bytes[..bytes.len() - name - 3]), None);
    }
}
