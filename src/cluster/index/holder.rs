//! The holder of a page's exact digest: what it is to the page (`SET NX GET` answered it
//! in the page's round trip), and taking the claim over from a holder passed over.

use std::sync::Arc;

use super::super::filter::{ClusterError, EXPIRY_MARGIN, millis};
use super::SharedIndex;
use crate::index::{DocId, DocRecord};

/// Sets the digest claim `KEYS[1]` to `ARGV[2]` if it is still `ARGV[1]`'s (or is gone),
/// with an expiry of `ARGV[3]` milliseconds unless that is 0.
const TAKE_OVER: &str = "local held = redis.call('GET', KEYS[1]) \
    if held == false or held == ARGV[1] then \
        if ARGV[3] == '0' then redis.call('SET', KEYS[1], ARGV[2]) \
        else redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end \
        return 1 \
    end \
    return 0";

/// What the holder of a page's digest is to the page.
pub(super) enum Holder {
    /// The same main text: the page is its exact duplicate.
    Exact,
    /// Another page of its host, whose main text was taken from what the site repeats.
    Different,
    /// Lost, or out of the window: the claim goes to the next copy.
    PassedOver,
}

impl SharedIndex<'_> {
    /// What the holder of `record`'s digest is to it: one round trip for its record, marks
    /// and verdict (and, under retention, the claim's expiry), none when the holder is one
    /// of this worker's last documents (`own.rs`) or another worker's settled one read
    /// lately (`settled.rs`), which a holder read here and found settled becomes.
    ///
    /// A holder whose record is missing keeps the claim, unless retention is on and the
    /// claim is old enough that the record expired: a record is written in the same
    /// round trip as its claim, so a young claim's record may not be there yet.
    pub(super) fn judge_holder(
        &self,
        record: &DocRecord,
        holder: DocId,
        digest_key: &str,
        now: u64,
    ) -> Result<Holder, ClusterError> {
        if let Some(known) = self.known_doc(holder) {
            // This worker's, alive, or settled: judged on its record, with no round trip.
            if self.expired_at(known.record.at, now) {
                return Ok(Holder::PassedOver);
            }
            return self.judge_stored_holder(record, &known.record);
        }
        let mut pipe = redis::cluster::cluster_pipe();
        pipe.cmd("GET").arg(self.doc_key(holder));
        pipe.cmd("PTTL").arg(digest_key);
        self.probe_lost(&mut pipe, holder);
        pipe.cmd("GET").arg(self.verdict_key(holder));
        let replies: Vec<redis::Value> = self.cluster.with(|con| pipe.query(con))?;
        let stored = match replies.first() {
            Some(redis::Value::BulkString(bytes)) => {
                Some(Arc::new(self.decode_record(holder, bytes)?))
            }
            _ => None,
        };
        if self.retention.is_some() {
            let expired = match &stored {
                Some(stored) => self.expired_at(stored.at, now),
                None => matches!(replies.get(1), Some(redis::Value::Int(ms))
                        if *ms <= millis(EXPIRY_MARGIN) as i64),
            };
            // An expired holder was kept, and stays so.
            if expired {
                return Ok(Holder::PassedOver);
            }
        }
        if self.lost_among(replies.get(2..).unwrap_or_default())? {
            self.set_verdict(holder, false)?;
            return Ok(Holder::PassedOver);
        }
        let Some(stored) = stored else {
            return Ok(Holder::Exact);
        };
        let (committed, owned) = Self::marks_of(replies.get(2..).unwrap_or_default());
        let verdict = match replies.get(4) {
            Some(redis::Value::BulkString(v)) => std::str::from_utf8(v).ok(),
            _ => None,
        };
        self.remember_if_settled(holder, &stored, (committed, owned, verdict));
        self.judge_stored_holder(record, &stored)
    }

    /// The holder's main text is this page's: an exact duplicate, unless the two pages'
    /// lines say they are different pages of one host whose main text was taken from what
    /// the site repeats (the rule of `Confirm::candidate`, as the local index applies it).
    fn judge_stored_holder(
        &self,
        record: &DocRecord,
        stored: &DocRecord,
    ) -> Result<Holder, ClusterError> {
        let judged = self.judge(record, stored)?;
        Ok(if judged.exact {
            Holder::Exact
        } else {
            Holder::Different
        })
    }

    /// Takes the digest claim over from `holder` for `id`, if it is still `holder`'s (or
    /// gone): one script, so that a claim another copy took over meanwhile stays its.
    pub(super) fn take_digest(
        &self,
        id: DocId,
        holder: DocId,
        digest_key: &str,
    ) -> Result<bool, ClusterError> {
        let ttl = self.document_ttl_ms().unwrap_or(0);
        let swapped: i64 = self.cluster.with(|con| {
            redis::cmd("EVAL")
                .arg(TAKE_OVER)
                .arg(1)
                .arg(digest_key)
                .arg(holder)
                .arg(id)
                .arg(ttl)
                .query(con)
        })?;
        Ok(swapped == 1)
    }
}
