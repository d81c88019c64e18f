//! A cluster worker's last checkpoint whose hand-over to Redis (the commits of its pages,
//! its links for the others, its pending mirror) may not have gone: settled with the
//! cluster by `crawldedup repair --cluster` for a worker that is not coming back.
//!
//! The worker sends its commits first. So either they all reached the cluster (the kill
//! came after them), and its outputs hold pages the cluster counts as its own (what else
//! was to be sent only makes the others fetch some URLs again, which they find to be
//! duplicates); or none did, and the others take those pages for lost and fetch and store
//! them again: the worker's outputs give them back, cut to the last checkpoint whose
//! hand-over went in full. A few but not all (a pipeline cut between nodes) is left to the
//! worker's restart and `crawldedup reconcile`.

use std::path::Path;

use crate::config::Config;
use crate::crawl::Unsent;

/// Settles `unsent`, the hand-over of the last checkpoint of the crawl in `state_dir`
/// (outputs in `out`), with the cluster `config.cluster` names. One line on what was done,
/// or why nothing could be.
pub(super) fn settle(
    state_dir: &Path,
    out: Option<&Path>,
    config: &Config,
    unsent: &Unsent,
) -> Result<String, String> {
    let cluster = crate::cluster::filter::Cluster::connect(&config.cluster.nodes)
        .map_err(|e| format!("cluster: {e}"))?;
    let committed = crate::cluster::committed(&cluster, &config.cluster.name, &unsent.docs)
        .map_err(|e| format!("cluster: {e}"))?;
    let pages = unsent.docs.len();
    if committed == pages {
        crate::crawl::forget_unsent(state_dir)?;
        return Ok(format!(
            "checkpoint {}: the commits of its {pages} pages reached the cluster, which counts \
             them as this worker's; nothing to give back",
            unsent.seq
        ));
    }
    let restart = "start the worker again on this directory to send them, then run \
                   `crawldedup reconcile --cluster NODES`";
    if committed > 0 {
        return Err(format!(
            "checkpoint {}: {committed} of its {pages} pages' commits reached the cluster, \
             not all; {restart}",
            unsent.seq
        ));
    }
    let Some(before) = unsent.before else {
        return Err(format!(
            "checkpoint {}: written by a build that kept no earlier position; {restart}",
            unsent.seq
        ));
    };
    let out = out.ok_or("give --out DIR (the worker's outputs) to cut them back")?;
    let given = crate::crawl::give_back(state_dir, out, before)?;
    if let Some(Err(e)) = super::repair::cut_outputs_back(out, &before.0) {
        return Err(e);
    }
    let warc = out.join("warc");
    if warc.exists() {
        crate::store::warc::cut_back(&warc, before.1, true)
            .map_err(|e| format!("could not cut {} back: {e}", warc.display()))?;
    }
    Ok(format!(
        "checkpoint {}: none of its {pages} pages' commits reached the cluster, whose other \
         workers fetch those pages again: given back, the outputs cut to the checkpoint \
         before ({} pages, {} duplicates, {} failures)",
        unsent.seq, given[0], given[1], given[2]
    ))
}
