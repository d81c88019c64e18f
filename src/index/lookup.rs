//! Finding a document's candidates in the tables and confirming them: the decision.

use super::*;

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
        Ok(self
            .decide(
                &self.read(),
                &keys,
                &Stored::of(record),
                record,
                probe,
                cutoff,
            )?
            .decision)
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
    /// [`Confirm::candidate`], the rule the cluster's index decides by too.
    pub(super) fn decide(
        &self,
        memory: &Memory,
        keys: &[Keys],
        new: &Stored,
        record: &DocRecord,
        probe: &Probe<'_>,
        cutoff: u32,
    ) -> Result<Judgement, IndexError> {
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
        // pages share a sentence ([`Confirm::candidate`]'s `found_by_keys`).
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
            let distance = (stored.simhash ^ new.simhash).count_ones();
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
                || self.get_beside(u64::from(id), Some(*stored)),
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
