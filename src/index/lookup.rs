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
                probe.template,
                cutoff,
            )?
            .decision)
    }

    /// The keys a record is looked up by: its own, and its whole text's (see [`Probe`]).
    pub(super) fn probe_keys(&self, record: &DocRecord, probe: &Probe<'_>) -> Vec<Keys> {
        let mut keys = vec![self.keys(record.simhash, &record.sketch)];
        if let Some((simhash, sketch)) = probe.whole {
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
    /// `cutoff` (seconds) are not candidates. A candidate that is a page of the same host
    /// as `record` (both with their lines' profiles) is confirmed on its lines
    /// ([`ConfirmPolicy::judge_pages`], `template` left out), any other on its sketch.
    pub(super) fn decide(
        &self,
        memory: &Memory,
        keys: &[Keys],
        new: &Stored,
        record: &DocRecord,
        template: &[u32],
        cutoff: u32,
    ) -> Result<Judgement, IndexError> {
        for keys in keys {
            memory.prefetch(keys);
        }
        let mut judgement = Judgement::default();
        let mut candidates = Vec::new();
        for keys in keys {
            candidates.extend(memory.candidates(keys, self.plan.k));
        }
        if keys.len() > 1 {
            candidates.sort_unstable();
            candidates.dedup();
        }
        let tiny_set = &record.tiny_set;
        let mut best: Option<(DocId, u32, Similarity)> = None;
        for &id in &candidates {
            let Some(stored) = memory.doc(u64::from(id)).filter(|d| d.at >= cutoff) else {
                continue;
            };
            let distance = (stored.simhash ^ new.simhash).count_ones();
            let exact = distance == 0 && stored.digest == new.digest;
            // A tiny text is compared on whole shingle sets, which the records of small
            // texts keep, with another that has one.
            let tiny_sets =
                self.confirm.by_exact_sets(&new.sketch, &stored.sketch) && !tiny_set.is_empty();
            let (mut similarity, mut confirmed) = self.confirm.judge(
                (&new.sketch, new.chars),
                (&stored.sketch, stored.chars),
                None,
            );
            // A page is compared with a page of its host on their lines, kept in the
            // record: when its text is (or holds) the other's on the sketches, so that what
            // the site repeats is left out of the answer.
            let by_lines = record.blocks.is_some()
                && (exact
                    || confirmed
                    || similarity.resemblance >= LINES_FROM_RESEMBLANCE
                    || similarity.containment >= LINES_FROM_CONTAINMENT);
            let full = if by_lines || tiny_sets {
                self.get_beside(u64::from(id), Some(*stored))?
            } else {
                None
            };
            let judged_by_lines = full
                .as_ref()
                .filter(|_| by_lines)
                .and_then(|full| self.confirm.judge_pages(record, full, template));
            if exact && judged_by_lines.is_none_or(|(_, confirmed)| confirmed) {
                // Candidates come in id order: the first exact one is the lowest. (Two
                // pages of one host with the same main text are not the same page when
                // the rest of their text has a story of its own each: the main text was
                // then taken from what the site repeats.)
                judgement.decision = Some(Decision::Exact(u64::from(id)));
                return Ok(judgement);
            }
            if let Some(judged) = judged_by_lines {
                (similarity, confirmed) = judged;
            } else if tiny_sets {
                let exact_sets = full
                    .as_ref()
                    .filter(|r| !r.tiny_set.is_empty())
                    .map(|r| tiny_likeness(tiny_set, &r.tiny_set));
                if exact_sets.is_some() {
                    (similarity, confirmed) = self.confirm.judge(
                        (&new.sketch, new.chars),
                        (&stored.sketch, stored.chars),
                        exact_sets,
                    );
                }
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
