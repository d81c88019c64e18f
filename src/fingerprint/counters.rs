//! Bit-sliced counters: how many of a stream of 64-bit words have each bit set, for the
//! simhash sum (portable and AVX2 paths).

use super::Simhash;

/// How many of a stream of 64-bit words have each bit set, kept bit-sliced: words are
/// taken 16 at a time through a Harley-Seal network of carry-save adders into the
/// counters of weight 1, 2, 4 and 8, and what overflows those (weight 16) goes into a
/// binary ripple counter, once per 16 words.
#[derive(Default)]
pub(super) struct PositionalCount {
    pub(super) block: [u64; 16],
    pub(super) in_block: usize,
    pub(super) ones: u64,
    pub(super) twos: u64,
    pub(super) fours: u64,
    pub(super) eights: u64,
    /// Bit-sliced count of sixteens: level `l` holds bit `l` of each position's count.
    pub(super) sixteens: [u64; 32],
    pub(super) words: u64,
}

/// Carry-save adder: (carry, sum) of three bit-vectors.
#[inline(always)]
pub(super) fn csa(a: u64, b: u64, c: u64) -> (u64, u64) {
    let u = a ^ b;
    ((a & b) | (u & c), u ^ c)
}

impl PositionalCount {
    #[inline(always)]
    pub(super) fn add(&mut self, word: u64) {
        self.block[self.in_block] = word;
        self.in_block += 1;
        if self.in_block == 16 {
            self.in_block = 0;
            self.add_block();
        }
    }

    pub(super) fn add_block(&mut self) {
        let d = self.block;
        let (twos_a, ones) = csa(self.ones, d[0], d[1]);
        let (twos_b, ones) = csa(ones, d[2], d[3]);
        let (fours_a, twos) = csa(self.twos, twos_a, twos_b);
        let (twos_a, ones) = csa(ones, d[4], d[5]);
        let (twos_b, ones) = csa(ones, d[6], d[7]);
        let (fours_b, twos) = csa(twos, twos_a, twos_b);
        let (eights_a, fours) = csa(self.fours, fours_a, fours_b);
        let (twos_a, ones) = csa(ones, d[8], d[9]);
        let (twos_b, ones) = csa(ones, d[10], d[11]);
        let (fours_a, twos) = csa(twos, twos_a, twos_b);
        let (twos_a, ones) = csa(ones, d[12], d[13]);
        let (twos_b, ones) = csa(ones, d[14], d[15]);
        let (fours_b, twos) = csa(twos, twos_a, twos_b);
        let (eights_b, fours) = csa(fours, fours_a, fours_b);
        let (sixteens, eights) = csa(self.eights, eights_a, eights_b);
        (self.ones, self.twos, self.fours, self.eights) = (ones, twos, fours, eights);
        let mut carry = sixteens;
        for level in self.sixteens.iter_mut() {
            if carry == 0 {
                break;
            }
            (*level, carry) = (*level ^ carry, *level & carry);
        }
        self.words += 16;
    }

    /// Adds `weight` to `acc` once for every counted word (per set bit, per lane).
    pub(super) fn add_to(&self, acc: &mut Accumulator, weight: u64) {
        let total = self.words + self.in_block as u64;
        if total == 0 {
            return;
        }
        // Levels past the last one a carry reached are all zero: a page's text reaches a
        // few of the 32.
        let used = self
            .sixteens
            .iter()
            .rposition(|&slice| slice != 0)
            .map_or(0, |last| last + 1);
        let mut lanes = [0u64; 64];
        for (bit, lane) in lanes.iter_mut().enumerate() {
            let at = |v: u64| (v >> bit) & 1;
            let mut count =
                at(self.ones) + 2 * at(self.twos) + 4 * at(self.fours) + 8 * at(self.eights);
            for (level, &slice) in self.sixteens[..used].iter().enumerate() {
                count += at(slice) << (4 + level);
            }
            for &word in &self.block[..self.in_block] {
                count += at(word);
            }
            *lane = count * weight;
        }
        acc.add_lanes(&lanes, total * weight);
    }
}

/// Per bit, the total weight of the features that have the bit set; and the total weight.
/// A bit of the simhash is set where its lane holds more than half the total, which is the
/// same as the +weight/-weight sum being positive. Weights are added into 32-bit lanes (four
/// to a SIMD register even on baseline x86-64) and carried into 64-bit totals before the
/// 32-bit lanes could overflow.
#[derive(Clone)]
pub(super) struct Accumulator {
    pub(super) small: [u32; 64],
    pub(super) small_total: u32,
    pub(super) lanes: [u64; 64],
    pub(super) total: u64,
}

impl Default for Accumulator {
    fn default() -> Self {
        Accumulator {
            small: [0; 64],
            small_total: 0,
            lanes: [0; 64],
            total: 0,
        }
    }
}

impl Accumulator {
    #[inline(always)]
    pub(super) fn add(&mut self, hash: u64, weight: u64) {
        let Ok(small_weight) = u32::try_from(weight) else {
            for (bit, lane) in self.lanes.iter_mut().enumerate() {
                *lane += weight & ((hash >> bit) & 1).wrapping_neg();
            }
            self.total += weight;
            return;
        };
        if self.small_total.checked_add(small_weight).is_none() {
            self.carry();
        }
        // Branch-free: each lane adds the weight masked by its bit; the loop has a fixed
        // trip count and no dependencies between lanes, so it compiles to SIMD.
        for (bit, lane) in self.small.iter_mut().enumerate() {
            *lane += small_weight & (((hash >> bit) & 1) as u32).wrapping_neg();
        }
        self.small_total += small_weight;
    }

    /// Adds per-lane totals (and their overall weight) computed elsewhere.
    pub(super) fn add_lanes(&mut self, lanes: &[u64; 64], total: u64) {
        for (wide, &add) in self.lanes.iter_mut().zip(lanes) {
            *wide += add;
        }
        self.total += total;
    }

    pub(super) fn carry(&mut self) {
        for (wide, small) in self.lanes.iter_mut().zip(self.small.iter_mut()) {
            *wide += u64::from(*small);
            *small = 0;
        }
        self.total += u64::from(self.small_total);
        self.small_total = 0;
    }

    /// Takes away the weights added to `less`: every lane and the total stay non-negative,
    /// since `less` only ever holds part of what was added here.
    pub(super) fn take_away(&mut self, less: &mut Accumulator) {
        less.carry();
        if less.total == 0 {
            return;
        }
        self.carry();
        for (lane, &minus) in self.lanes.iter_mut().zip(&less.lanes) {
            *lane -= minus;
        }
        self.total -= less.total;
    }

    pub(super) fn finish(&mut self) -> Simhash {
        self.carry();
        let mut out = 0u64;
        for (bit, &lane) in self.lanes.iter().enumerate() {
            if 2 * u128::from(lane) > u128::from(self.total) {
                out |= 1 << bit;
            }
        }
        Simhash(out)
    }
}
