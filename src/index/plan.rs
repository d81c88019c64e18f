//! The table layout of the simhash index, after Manku, Jain and Das Sarma (WWW 2007).
//!
//! Two 64-bit fingerprints within Hamming distance k differ in at most k of any r blocks
//! the 64 bits are split into, so they agree exactly on at least r - k blocks. One table
//! for every choice of r - k blocks: its key is the fingerprint permuted so those blocks
//! lead. A query looks up, in every table, the entries whose leading bits equal its own;
//! some table is guaranteed to hold every near-duplicate. With `b` leading bits a probe
//! meets about `n / 2^b` candidates per table; more blocks mean more tables (space) and
//! fewer candidates (time).

use std::fmt;

/// Bits in a fingerprint.
pub const F: u32 = 64;

/// Most blocks considered: past this the number of tables (C(r, k)) outgrows any use.
const MAX_BLOCKS: u32 = 16;

/// Default budget of expected candidates per query, summed over all tables. Checking a
/// candidate is a popcount on a cached entry, so a few dozen cost well under a microsecond.
pub const DEFAULT_CANDIDATE_BUDGET: f64 = 32.0;

/// Bytes one fingerprint costs in one in-memory table (8-byte key + 4-byte document id).
pub const BYTES_PER_ENTRY: usize = 12;

/// One table: which blocks lead its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableLayout {
    /// Indexes of the blocks, in key order: the leading blocks first, then the rest.
    pub order: Vec<usize>,
    /// How many of `order` lead (must match exactly): r - k.
    pub leading: usize,
    /// Bits in the leading blocks.
    pub leading_bits: u32,
    /// The permutation as (mask of a block, left rotation that moves it into place).
    moves: Vec<(u64, u32)>,
}

/// A complete layout: blocks and tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Largest distance found (k).
    pub k: u32,
    /// (start bit from the most significant end, length) of each block.
    pub blocks: Vec<(u32, u32)>,
    /// The tables.
    pub tables: Vec<TableLayout>,
}

/// One option [`Plan::options`] considered.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanOption {
    /// Blocks (r).
    pub blocks: u32,
    /// Tables: C(r, k).
    pub tables: usize,
    /// Leading bits of the table with the fewest (b).
    pub key_bits: u32,
    /// Expected candidates per query over all tables, at n fingerprints.
    pub candidates: f64,
    /// In-memory bytes per fingerprint.
    pub bytes_per_fingerprint: usize,
}

impl Plan {
    /// The layout with `blocks` blocks for distance `k`; `k < blocks <= 16`.
    pub fn with_blocks(k: u32, blocks: u32) -> Option<Plan> {
        if blocks <= k || blocks > MAX_BLOCKS || blocks > F {
            return None;
        }
        // Split 64 bits as evenly as possible; the first `extra` blocks get one more bit.
        let base = F / blocks;
        let extra = F % blocks;
        let mut spans = Vec::new();
        let mut start = 0;
        for i in 0..blocks {
            let len = base + u32::from(i < extra);
            spans.push((start, len));
            start += len;
        }
        let leading = (blocks - k) as usize;
        let tables = combinations(blocks as usize, leading)
            .into_iter()
            .map(|lead| {
                let leading_bits = lead.iter().map(|&b| spans[b].1).sum();
                let mut order = lead.clone();
                order.extend((0..blocks as usize).filter(|b| !lead.contains(b)));
                let mut at = 0;
                let moves = order
                    .iter()
                    .map(|&b| {
                        let (start, len) = spans[b];
                        let mask = (u64::MAX >> (F - len)) << (F - start - len);
                        let rotation = (start + F - at) % F;
                        at += len;
                        (mask, rotation)
                    })
                    .collect();
                TableLayout {
                    order,
                    leading,
                    leading_bits,
                    moves,
                }
            })
            .collect();
        Some(Plan {
            k,
            blocks: spans,
            tables,
        })
    }

    /// Every block count considered for `n` fingerprints at distance `k`.
    pub fn options(n: u64, k: u32) -> Vec<PlanOption> {
        (k + 1..=MAX_BLOCKS)
            .filter_map(|r| Plan::with_blocks(k, r))
            .map(|plan| plan.describe(n))
            .collect()
    }

    /// The layout with the fewest tables whose expected candidates per query stay within
    /// `budget` at `n` fingerprints (the one with the fewest candidates if none does).
    pub fn choose(n: u64, k: u32, budget: f64) -> Option<Plan> {
        let options = Plan::options(n, k);
        let pick = options
            .iter()
            .find(|o| o.candidates <= budget)
            .or_else(|| {
                options
                    .iter()
                    .min_by(|a, b| a.candidates.total_cmp(&b.candidates))
            })?;
        Plan::with_blocks(k, pick.blocks)
    }

    /// The figures of this layout at `n` fingerprints.
    pub fn describe(&self, n: u64) -> PlanOption {
        let candidates = self
            .tables
            .iter()
            .map(|t| n as f64 / 2f64.powi(t.leading_bits as i32))
            .sum();
        PlanOption {
            blocks: self.blocks.len() as u32,
            tables: self.tables.len(),
            key_bits: self
                .tables
                .iter()
                .map(|t| t.leading_bits)
                .min()
                .unwrap_or(0),
            candidates,
            bytes_per_fingerprint: self.tables.len() * BYTES_PER_ENTRY,
        }
    }

    /// The permuted key of `fp` in table `table`: the table's blocks, in its order, from the
    /// most significant bit down. A permutation of bits keeps Hamming distances.
    pub fn permute(&self, table: usize, fp: u64) -> u64 {
        self.tables[table]
            .moves
            .iter()
            .fold(0, |out, &(mask, rotation)| {
                out | (fp & mask).rotate_left(rotation)
            })
    }

    /// The mask of the leading bits of table `table`'s keys.
    pub fn leading_mask(&self, table: usize) -> u64 {
        let bits = self.tables[table].leading_bits;
        if bits == 0 { 0 } else { u64::MAX << (F - bits) }
    }
}

impl fmt::Display for PlanOption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:>6} {:>6} {:>8} {:>14.3} {:>10}",
            self.blocks, self.tables, self.key_bits, self.candidates, self.bytes_per_fingerprint
        )
    }
}

fn combinations(n: usize, choose: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut current = Vec::with_capacity(choose);
    fn walk(
        start: usize,
        n: usize,
        choose: usize,
        current: &mut Vec<usize>,
        out: &mut Vec<Vec<usize>>,
    ) {
        if current.len() == choose {
            out.push(current.clone());
            return;
        }
        for i in start..n {
            current.push(i);
            walk(i + 1, n, choose, current, out);
            current.pop();
        }
    }
    walk(0, n, choose, &mut current, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_r_choose_k() {
        let plan = Plan::with_blocks(3, 5).unwrap();
        assert_eq!(plan.tables.len(), 10);
        assert_eq!(plan.blocks.iter().map(|b| b.1).sum::<u32>(), 64);
        assert!(Plan::with_blocks(3, 3).is_none());
    }

    #[test]
    fn permutation_keeps_distance_and_is_a_bijection_on_bits() {
        let plan = Plan::with_blocks(3, 6).unwrap();
        for t in 0..plan.tables.len() {
            for bit in 0..64 {
                assert_eq!(plan.permute(t, 1 << bit).count_ones(), 1);
            }
            let (a, b) = (0x0123_4567_89ab_cdefu64, 0xf0f0_1234_5678_0f0fu64);
            assert_eq!(
                (a ^ b).count_ones(),
                (plan.permute(t, a) ^ plan.permute(t, b)).count_ones()
            );
        }
    }

    #[test]
    fn permuted_keys_are_the_blocks_in_table_order() {
        for (k, r) in [(0, 1), (3, 4), (3, 5), (3, 7), (6, 16)] {
            let plan = Plan::with_blocks(k, r).unwrap();
            for fp in [0x0123_4567_89ab_cdefu64, u64::MAX, 1, 1 << 63, 0xdead_beef] {
                for (t, table) in plan.tables.iter().enumerate() {
                    // Block by block: take each block's bits and append them in table order.
                    let mut want = 0u128;
                    for &b in &table.order {
                        let (start, len) = plan.blocks[b];
                        let bits = u128::from((fp << start) >> (F - len));
                        want = (want << len) | bits;
                    }
                    assert_eq!(plan.permute(t, fp), want as u64, "k {k} r {r} table {t}");
                }
            }
        }
    }

    #[test]
    fn choice_meets_the_budget_with_fewest_tables() {
        let plan = Plan::choose(10_000_000, 3, DEFAULT_CANDIDATE_BUDGET).unwrap();
        let d = plan.describe(10_000_000);
        assert!(d.candidates <= DEFAULT_CANDIDATE_BUDGET);
        let fewer = Plan::options(10_000_000, 3)
            .into_iter()
            .filter(|o| o.tables < d.tables)
            .all(|o| o.candidates > DEFAULT_CANDIDATE_BUDGET);
        assert!(fewer);
    }
}
