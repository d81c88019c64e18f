//! Finding a document's candidates in the tables and confirming them: the decision.
//!
//! A candidate's full record (its lines, its shingle set) comes from the documents not yet
//! written (`pending`, the background writer) or from sled. sled is never read with one of
//! the index's locks held: a judgement that needs a record only sled holds names it
//! ([`Judgement::missing`]); [`SimhashIndex::judge_whole`], the one loop both the lookup and
//! the check-and-insert run, lets the locks go, reads those records and judges again with
//! them. Records in sled never change, and a judgement is used only when it needed nothing
//! it did not have.

use super::*;

/// Full records of candidates read from sled outside the index's locks, by id (`None`: the
/// document is no longer there, expired since).
pub(super) type Fetched = rustc_hash::FxHashMap<DocId, Option<DocRecord>>;

thread_local! {
    /// This thread is judging candidates, with the index's locks held: the store refuses
    /// to read sled then, in debug builds (the tests'), so that a read under the locks
    /// fails every test that makes one.
    static DECIDING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Marks this thread as deciding while it lives ([`deciding`]).
struct Deciding;

impl Deciding {
    fn start() -> Deciding {
        DECIDING.set(true);
        Deciding
    }
}

impl Drop for Deciding {
    fn drop(&mut self) {
        DECIDING.set(false);
    }
}

/// Whether this thread is judging candidates with the index's locks held.
pub(super) fn deciding() -> bool {
    DECIDING.get()
}

impl SimhashIndex {
    /// What [`SimhashIndex::check_and_insert`] would decide for `record`, without storing
    /// it: `None` for a unique document.
    pub fn find(&self, record: &DocRecord) -> Result<Option<Decision>, IndexError> {
        self.find_probed(record, &Probe::default())
    }

    /// As [`SimhashIndex::find`], for a page with what its host adds ([`Probe`]).
    pub fn find_probed(
        &self,
        record: &DocRecord,
        probe: &Probe<'_>,
    ) -> Result<Option<Decision>, IndexError> {
        let keys = self.probe_keys(record, probe);
        let cutoff = self.cutoff();
        let (judgement, ()) = self.judge_whole(|fetched| {
            let judgement = self.decide(&self.read(), &keys, record, probe, cutoff, fetched)?;
            Ok((judgement, ()))
        })?;
        Ok(judgement.decision)
    }

    /// Judges a page by `pass` until a judgement lacks no candidate's record, and returns
    /// it with what that pass kept (the writer lock of a check-and-insert). `pass` takes
    /// the index's locks, judges with the records read so far, and lets the locks go when
    /// it returns. After a judgement that lacks records, what its pass kept is dropped, the
    /// records are read from sled with no lock held, and the page is judged again.
    pub(super) fn judge_whole<T>(
        &self,
        mut pass: impl FnMut(&Fetched) -> Result<(Judgement, T), IndexError>,
    ) -> Result<(Judgement, T), IndexError> {
        let mut fetched = Fetched::default();
        loop {
            let (judgement, kept) = pass(&fetched)?;
            if judgement.missing.is_empty() {
                return Ok((judgement, kept));
            }
            drop(kept);
            for &(id, row) in &judgement.missing {
                let record = self
                    .store
                    .get(id, Some(row))
                    .map_err(|e| self.store_error(e))?;
                fetched.insert(id, record);
            }
        }
    }

    /// A candidate's full record when it is one of the documents not yet in sled or was
    /// read from sled before (`Some`), else `None`: only sled holds it.
    fn known_record(&self, id: DocId, fetched: &Fetched) -> Option<Option<DocRecord>> {
        if let Some(record) = fetched.get(&id) {
            return Some(record.clone());
        }
        self.buffered(id)
    }

    /// The keys a record is looked up by: its own, and its whole text's (see [`Probe`]).
    pub(super) fn probe_keys(&self, record: &DocRecord, probe: &Probe<'_>) -> Vec<Keys> {
        let mut keys = vec![self.keys(record.simhash, &record.sketch)];
        for (simhash, sketch) in probe.whole.into_iter().chain(probe.page) {
            keys.push(self.keys(simhash, sketch));
        }
        keys
    }

    /// The probe keys of a fingerprint, computed once per page.
    pub(super) fn keys(&self, simhash: Simhash, sketch: &Sketch) -> Keys {
        tables::keys_of(&self.plan, simhash.0, sketch)
    }

    /// The decision for a document with these keys: an exact duplicate (same digest and
    /// simhash, lowest id), else the confirmed candidate of highest resemblance (lowest id
    /// on a tie), else none; with what the confirmation refused. Documents stored before
    /// `cutoff` (seconds) are not candidates. Each candidate is judged by
    /// [`Confirm::candidate`], the rule the cluster's index decides by too. The judgement is
    /// incomplete when it names `missing` records: read them and decide again.
    pub(super) fn decide(
        &self,
        memory: &Memory,
        keys: &[Keys],
        record: &DocRecord,
        probe: &Probe<'_>,
        cutoff: u32,
        fetched: &Fetched,
    ) -> Result<Judgement, IndexError> {
        let _deciding = Deciding::start();
        for keys in keys {
            memory.prefetch(keys);
        }
        let mut judgement = Judgement::default();
        // (id, found by the page's keys), in id order.
        let mut candidates: Vec<(u32, bool)> = Vec::new();
        for keys in keys {
            candidates.extend(
                memory
                    .candidates(keys, self.plan.k)
                    .into_iter()
                    .map(|id| (id, true)),
            );
        }
        if keys.len() > 1 {
            candidates.sort_unstable();
            candidates.dedup();
        }
        // The host's recent pages that the keys did not find: candidates only when the two
        // pages share a sentence, or their exact likeness confirms them
        // ([`Confirm::candidate`]'s `found_by_keys`).
        if !probe.recent.is_empty() {
            let by_keys = candidates.len();
            for id in probe.recent.iter().filter_map(|&id| u32::try_from(id).ok()) {
                if candidates[..by_keys].binary_search(&(id, true)).is_err() {
                    candidates.push((id, false));
                }
            }
            candidates.sort_unstable();
            candidates.dedup();
        }
        let wider: Vec<&Sketch> = probe
            .whole
            .into_iter()
            .chain(probe.page)
            .map(|(_, s)| s)
            .collect();
        let mut best: Option<(DocId, u32, Similarity)> = None;
        for &(id, found_by_keys) in &candidates {
            let Some(stored) = memory.doc(u64::from(id)).filter(|d| d.at >= cutoff) else {
                continue;
            };
            let distance = (stored.simhash ^ record.simhash.0).count_ones();
            let Judged {
                exact,
                confirmed,
                similarity,
            } = self.confirm.candidate(
                record,
                stored,
                probe.template,
                &wider,
                found_by_keys,
                || {
                    let id = u64::from(id);
                    Ok::<_, IndexError>(self.known_record(id, fetched).unwrap_or_else(|| {
                        judgement.missing.push((id, *stored));
                        None
                    }))
                },
            )?;
            if exact {
                // Candidates come in id order: the first exact one is the lowest.
                judgement.decision = Some(Decision::Exact(u64::from(id)));
                return Ok(judgement);
            }
            if !confirmed {
                judgement.refused += 1;
                if judgement
                    .nearest
                    .is_none_or(|n| similarity.resemblance > n.resemblance)
                {
                    judgement.nearest = Some(similarity);
                }
            } else if best.is_none_or(|(_, _, b)| similarity.resemblance > b.resemblance) {
                best = Some((u64::from(id), distance, similarity));
            }
        }
        judgement.decision = best.map(|(of, distance, similarity)| Decision::Near {
            of,
            distance,
            similarity,
        });
        Ok(judgement)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::Blocks;

    /// A page of `lines` sentences, each of fifteen words of its own (letters: a line's key
    /// reads every run of digits as one).
    fn text(first: u64, lines: u64) -> String {
        (first..first + lines)
            .map(|i| {
                (0..15)
                    .map(|w| {
                        let mut n = (i * 15 + w + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
                        (0..5)
                            .map(|_| {
                                let c = char::from(b'a' + (n % 26) as u8);
                                n /= 26;
                                c
                            })
                            .collect::<String>()
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
                    + "."
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The record of `main` (its fingerprint) carrying the profile of `lines`.
    fn record(url: &str, main: &str, lines: &str) -> DocRecord {
        let mut record = DocRecord::new(url, main, &crate::Fingerprint::of(main));
        record.blocks = Some(Blocks::of("a.example", lines));
        record
    }

    #[test]
    fn a_candidate_only_sled_holds_is_read_with_no_lock_held_and_judged_on_its_lines() {
        let dir = tempfile::tempdir().unwrap();
        let index = SimhashIndex::open(dir.path(), IndexConfig::default()).unwrap();
        let main = text(0, 12);
        let Decision::Unique(id) = index
            .check_and_insert(record("https://a.example/1", &main, &main))
            .unwrap()
        else {
            panic!("the first page is unique");
        };
        index.checkpoint().unwrap();
        assert!(
            index.buffered(id).is_none(),
            "only sled holds the first page"
        );
        // The same main text on a page whose lines are others: the lines, which only the
        // record in sled holds, say it is another page. Without them it would be an exact
        // duplicate. (A read of sled under the locks fails the store's debug assertion.)
        let other_lines = record("https://a.example/2", &main, &text(100, 12));
        assert_eq!(index.find(&other_lines).unwrap(), None);
        assert!(matches!(
            index.check_and_insert(other_lines).unwrap(),
            Decision::Unique(_)
        ));
        // The same page again is its exact duplicate, judged on the lines read from sled.
        let copy = record("https://a.example/3", &main, &main);
        assert_eq!(index.find(&copy).unwrap(), Some(Decision::Exact(id)));
        assert_eq!(index.check_and_insert(copy).unwrap(), Decision::Exact(id));
    }

    #[test]
    fn threads_that_read_sled_between_their_judgements_still_store_a_page_once() {
        let dir = tempfile::tempdir().unwrap();
        let index = SimhashIndex::open(dir.path(), IndexConfig::default()).unwrap();
        let main = text(0, 12);
        index
            .check_and_insert(record("https://a.example/1", &main, &main))
            .unwrap();
        index.checkpoint().unwrap();
        // In each round the threads present the same new page at once, whose judgement
        // needs the first page's record from sled, so each lets the decision lock go at
        // least once between its lookups: exactly one stores it, and the others find it.
        const THREADS: usize = 4;
        const ROUNDS: u64 = 30;
        let barrier = std::sync::Barrier::new(THREADS);
        let decisions: Vec<Vec<Decision>> = std::thread::scope(|s| {
            let threads: Vec<_> = (0..THREADS)
                .map(|t| {
                    let (index, barrier, main) = (&index, &barrier, &main);
                    s.spawn(move || {
                        (0..ROUNDS)
                            .map(|round| {
                                let url = format!("https://a.example/{round}/{t}");
                                let page = record(&url, main, &text(100 + 20 * round, 12));
                                barrier.wait();
                                index.check_and_insert(page).unwrap()
                            })
                            .collect()
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        for round in 0..ROUNDS as usize {
            let round: Vec<Decision> = decisions.iter().map(|d| d[round]).collect();
            let stored: Vec<u64> = round
                .iter()
                .filter_map(|d| match d {
                    Decision::Unique(id) => Some(*id),
                    _ => None,
                })
                .collect();
            assert_eq!(stored.len(), 1, "{round:?}");
            for d in &round {
                assert!(
                    matches!(d, Decision::Unique(_)) || *d == Decision::Exact(stored[0]),
                    "{round:?}"
                );
            }
        }
        assert_eq!(index.len(), 1 + ROUNDS);
    }
}
