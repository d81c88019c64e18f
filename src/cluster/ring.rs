//! The host ring: which worker of a cluster crawls which host.
//!
//! A consistent-hash ring in the manner of ketama: every worker puts
//! [`POINTS_PER_WEIGHT`] x its weight points on a 64-bit circle, and a host belongs to the
//! worker of the first point at or after the host's own position (wrapping round). Every
//! position is [`position`]: XXH3-64 with seed 0 of the UTF-8 bytes, for a worker's point
//! the string `ID#N` (N = 0, 1, ... in decimal), for a host its name as the frontier keys
//! it (lower-case host, and `:port` when not the scheme's default). The hash is fixed, so
//! every worker that knows the same members with the same weights computes the same ring,
//! with no coordinator.
//!
//! What the ring promises, and `examples/ring_sim.rs` measures:
//! - **Balance.** A worker owns about its weight's share of the hosts: with 160 points per
//!   unit of weight the largest share is within a few percent of the mean.
//! - **Little movement.** When a worker joins, only hosts that move to it change owner
//!   (about 1/N of them); when one leaves, only its own hosts do. Hashing hosts modulo the
//!   number of workers would move about (N-1)/N of all hosts instead.
//!
//! Ties (two points at one position, which XXH3 makes vanishingly rare) go to the worker
//! whose id sorts first, so the ring stays the same whatever order the members were listed.

use xxhash_rust::xxh3::xxh3_64;

/// Points a worker of weight 1 puts on the ring (ketama's figure): enough that the
/// largest share of a few dozen equal workers stays within a few percent of the mean.
pub const POINTS_PER_WEIGHT: u32 = 160;

/// A worker's place in the cluster: its id and its weight (its share of the hosts, relative
/// to the others').
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The worker's id (`--worker-id`), unique in the cluster.
    pub id: String,
    /// Its weight (`--weight`): points on the ring, in units of [`POINTS_PER_WEIGHT`].
    pub weight: u32,
}

impl Member {
    /// A member with this id and weight.
    pub fn new(id: impl Into<String>, weight: u32) -> Member {
        Member {
            id: id.into(),
            weight,
        }
    }
}

/// The position of `key` on the ring (see the module documentation).
pub fn position(key: &str) -> u64 {
    xxh3_64(key.as_bytes())
}

/// A consistent-hash ring of workers.
#[derive(Debug, Clone, Default)]
pub struct Ring {
    /// The members, sorted by id.
    members: Vec<Member>,
    /// (position, member index), sorted.
    points: Vec<(u64, u32)>,
}

impl Ring {
    /// The ring of these members. A member of weight 0 owns nothing; an id given twice
    /// counts once (its first weight).
    pub fn new(members: impl IntoIterator<Item = Member>) -> Ring {
        let mut members: Vec<Member> = members.into_iter().collect();
        members.sort_by(|a, b| a.id.cmp(&b.id));
        members.dedup_by(|later, first| later.id == first.id);
        let total: usize = members
            .iter()
            .map(|m| (m.weight as usize) * POINTS_PER_WEIGHT as usize)
            .sum();
        let mut points = Vec::with_capacity(total);
        for (index, member) in members.iter().enumerate() {
            for n in 0..member.weight.saturating_mul(POINTS_PER_WEIGHT) {
                points.push((position(&format!("{}#{n}", member.id)), index as u32));
            }
        }
        // Members are in id order, so on a tie the first id wins.
        points.sort_unstable();
        points.dedup_by_key(|&mut (at, _)| at);
        Ring { members, points }
    }

    /// The members, by id.
    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// Whether no member owns anything.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The member that owns `host`; none when the ring is empty.
    pub fn owner(&self, host: &str) -> Option<&Member> {
        self.owner_at(position(host))
    }

    /// The member that owns ring position `at`.
    pub fn owner_at(&self, at: u64) -> Option<&Member> {
        let i = self.points.partition_point(|&(p, _)| p < at);
        let &(_, member) = self.points.get(i).or_else(|| self.points.first())?;
        self.members.get(member as usize)
    }

    /// The share of the ring's positions each member owns, by id: what it owns of many
    /// hosts in expectation.
    pub fn shares(&self) -> Vec<(&str, f64)> {
        let mut owned = vec![0u128; self.members.len()];
        for (i, &(at, member)) in self.points.iter().enumerate() {
            // A point owns the arc from the point before it (exclusive) to itself.
            let before = if i == 0 {
                self.points.last().map_or(0, |&(p, _)| p)
            } else {
                self.points[i - 1].0
            };
            owned[member as usize] += u128::from(at.wrapping_sub(before));
        }
        if self.points.len() == 1 {
            owned[self.points[0].1 as usize] = 1 << 64;
        }
        (self.members.iter())
            .zip(owned)
            .map(|(m, o)| (m.id.as_str(), o as f64 / (1u128 << 64) as f64))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("host-{i}.example")).collect()
    }

    fn equal(n: usize) -> Vec<Member> {
        (0..n).map(|i| Member::new(format!("w{i}"), 1)).collect()
    }

    #[test]
    fn every_worker_computes_the_same_owner_whatever_order_it_lists_the_members() {
        let mut members = equal(5);
        let a = Ring::new(members.clone());
        members.reverse();
        let b = Ring::new(members);
        for host in hosts(2000) {
            assert_eq!(a.owner(&host), b.owner(&host));
        }
        // The hash is fixed: a position known in advance.
        assert_eq!(position(""), 0x2d06_8005_38d3_94c2);
    }

    #[test]
    fn a_worker_that_joins_takes_hosts_only_for_itself_and_about_one_in_n() {
        let before = Ring::new(equal(4));
        let after = Ring::new(equal(5));
        let hosts = hosts(20_000);
        let mut moved = 0;
        for host in &hosts {
            let (a, b) = (before.owner(host).unwrap(), after.owner(host).unwrap());
            if a != b {
                assert_eq!(b.id, "w4", "{host} moved between old workers");
                moved += 1;
            }
        }
        let share = moved as f64 / hosts.len() as f64;
        assert!((0.15..0.25).contains(&share), "{share}");
    }

    #[test]
    fn a_worker_that_leaves_gives_up_only_its_own_hosts() {
        let before = Ring::new(equal(5));
        let after = Ring::new(equal(5).into_iter().filter(|m| m.id != "w2"));
        for host in hosts(20_000) {
            let (a, b) = (before.owner(&host).unwrap(), after.owner(&host).unwrap());
            if a.id != "w2" {
                assert_eq!(a, b, "{host}");
            }
        }
    }

    #[test]
    fn hosts_follow_the_weights() {
        let ring = Ring::new([Member::new("small", 1), Member::new("big", 3)]);
        let hosts = hosts(40_000);
        let big = hosts
            .iter()
            .filter(|h| ring.owner(h).unwrap().id == "big")
            .count();
        let share = big as f64 / hosts.len() as f64;
        assert!((0.70..0.80).contains(&share), "{share}");
        let shares = ring.shares();
        assert_eq!(shares.len(), 2);
        let total: f64 = shares.iter().map(|(_, s)| s).sum();
        assert!((total - 1.0).abs() < 1e-9, "{total}");
        let big_share = shares.iter().find(|(id, _)| *id == "big").unwrap().1;
        assert!((0.70..0.80).contains(&big_share), "{big_share}");
    }

    #[test]
    fn equal_workers_get_near_equal_shares() {
        let ring = Ring::new(equal(16));
        let shares = ring.shares();
        let largest = shares.iter().map(|(_, s)| *s).fold(0.0, f64::max);
        assert!(largest * 16.0 < 1.2, "largest share {largest}");
    }

    #[test]
    fn an_empty_ring_owns_nothing_and_weight_zero_owns_nothing() {
        assert!(Ring::new([]).owner("a").is_none());
        let ring = Ring::new([Member::new("idle", 0), Member::new("busy", 1)]);
        for host in hosts(1000) {
            assert_eq!(ring.owner(&host).unwrap().id, "busy");
        }
        let one = Ring::new([Member::new("only", 1)]);
        assert_eq!(one.shares(), vec![("only", 1.0)]);
    }
}
